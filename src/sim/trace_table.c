/*
 * The table layer under the trace readers: the header line names the
 * columns (found by name, so extra or reordered columns are fine), every
 * row must have as many fields as the header, and field values are parsed
 * here with messages that name the column and say what was expected. Parsing
 * is locale-free (no strtod, no TZ-dependent time calls): a trace reads the
 * same on every machine.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "sim/trace_int.h"

static bool is_blank(char ch)
{
    return ch == ' ' || ch == '\t';
}

static void trim(const char **p, size_t *len)
{
    while (*len && is_blank(**p)) {
        (*p)++;
        (*len)--;
    }
    while (*len && is_blank((*p)[*len - 1]))
        (*len)--;
}

void corral__trace_show(const corral_csv_field_t *f, char *out, size_t size)
{
    static const char hex[] = "0123456789abcdef";
    const size_t shown = 40;
    size_t k = 0, n = f ? f->len : 0;
    if (size < 16) {
        if (size)
            out[0] = '\0';
        return;
    }
    out[k++] = '"';
    for (size_t j = 0; j < n && j < shown && k + 8 < size; j++) {
        unsigned char ch = (unsigned char)f->p[j];
        if (ch == '"' || ch == '\\') {
            out[k++] = '\\';
            out[k++] = (char)ch;
        } else if (ch < 0x20 || ch == 0x7f) {
            out[k++] = '\\';
            out[k++] = 'x';
            out[k++] = hex[ch >> 4];
            out[k++] = hex[ch & 15];
        } else {
            out[k++] = (char)ch;
        }
    }
    if (n > shown && k + 5 < size) {
        memcpy(out + k, "...", 3);
        k += 3;
    }
    out[k++] = '"';
    out[k] = '\0';
}

bool corral__trace_empty(const corral_csv_field_t *f)
{
    if (!f)
        return true;
    for (size_t j = 0; j < f->len; j++)
        if (!is_blank(f->p[j]))
            return false;
    return true;
}

void corral__trace_err(trace_tab_t *t, size_t k, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    corral_diag_vadd(t->diag, CORRAL_SEV_ERROR, t->file, t->rec.line, 0, t->cols[k].name, fmt, ap);
    va_end(ap);
    t->bad = true;
}

/* An error about the line as a whole. */
static void tab_line_err(trace_tab_t *t, int line, const char *fmt, ...) CORRAL_PRINTF(3, 4);

static void tab_line_err(trace_tab_t *t, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    corral_diag_vadd(t->diag, CORRAL_SEV_ERROR, t->file, line, 0, NULL, fmt, ap);
    va_end(ap);
    t->bad = true;
}

/* The wanted columns as "a,b,c" for messages. */
static void tab_col_list(const trace_tab_t *t, bool required_only, char *out, size_t size)
{
    size_t k = 0;
    out[0] = '\0';
    for (size_t c = 0; c < t->ncols; c++) {
        if (required_only && !t->cols[c].required)
            continue;
        int w = snprintf(out + k, size - k, "%s%s", k ? "," : "", t->cols[c].name);
        if (w < 0 || (size_t)w >= size - k)
            break;
        k += (size_t)w;
    }
}

/* Match header fields to the wanted columns. */
static int tab_header(trace_tab_t *t)
{
    const corral_csv_record_t *h = &t->rec;
    for (size_t c = 0; c < t->ncols; c++)
        t->idx[c] = -1;
    for (size_t j = 0; j < h->n; j++) {
        const char *p = h->fields[j].p;
        size_t len = h->fields[j].len;
        trim(&p, &len);
        for (size_t c = 0; c < t->ncols; c++) {
            if (strlen(t->cols[c].name) != len || memcmp(t->cols[c].name, p, len) != 0)
                continue;
            if (t->idx[c] >= 0)
                tab_line_err(t, h->line, "column \"%s\" appears twice (columns %d and %zu)",
                             t->cols[c].name, t->idx[c] + 1, j + 1);
            else
                t->idx[c] = (int)j;
        }
    }
    char want[512];
    tab_col_list(t, true, want, sizeof(want));
    for (size_t c = 0; c < t->ncols; c++)
        if (t->cols[c].required && t->idx[c] < 0)
            tab_line_err(t, h->line, "missing column \"%s\" (the header must name %s)",
                         t->cols[c].name, want);
    t->width = h->n;
    return t->bad ? CORRAL_EINVAL : 0;
}

int corral__trace_open(trace_tab_t *t, const char *file, const char *data, size_t len,
                       const trace_col_t *cols, size_t ncols, corral_arena_t *a,
                       corral_diag_t *diag)
{
    memset(t, 0, offsetof(trace_tab_t, fields));
    t->file = file ? file : "<input>";
    t->diag = diag;
    t->arena = a;
    t->cols = cols;
    t->ncols = ncols < TRACE_MAX_COLS ? ncols : TRACE_MAX_COLS;
    corral_csv_init(&t->csv, t->fields, CORRAL_TRACE_MAX_FIELDS, t->scratch, CORRAL_TRACE_MAX_LINE);
    corral_csv_feed(&t->csv, data, len, true);
    char want[512];
    tab_col_list(t, false, want, sizeof(want));
    int rc = corral_csv_next(&t->csv, &t->rec);
    if (rc == 0) {
        tab_line_err(t, 1, "empty file; expected a header line such as %s", want);
        return CORRAL_EINVAL;
    }
    if (rc < 0) {
        tab_line_err(t, t->csv.err_line, "%s", t->csv.err);
        return CORRAL_EINVAL;
    }
    if (t->rec.n == 0) {
        tab_line_err(t, t->rec.line, "empty line; expected a header line such as %s", want);
        return CORRAL_EINVAL;
    }
    return tab_header(t);
}

int corral__trace_next(trace_tab_t *t)
{
    for (;;) {
        int rc = corral_csv_next(&t->csv, &t->rec);
        if (rc == 0)
            return 0; /* blank lines at the end are fine */
        if (rc < 0) {
            tab_line_err(t, t->csv.err_line, "%s", t->csv.err);
            continue;
        }
        if (t->rec.n == 0) {
            if (!t->blank_line)
                t->blank_line = t->rec.line;
            continue;
        }
        if (t->blank_line) {
            tab_line_err(t, t->blank_line,
                         "empty line (blank lines are only allowed at the end of the file)");
            t->blank_line = 0;
        }
        if (t->rec.n != t->width) {
            tab_line_err(t, t->rec.line, "expected %zu fields as in the header, got %zu", t->width,
                         t->rec.n);
            continue;
        }
        return 1;
    }
}

const corral_csv_field_t *corral__trace_field(const trace_tab_t *t, size_t k)
{
    if (k >= t->ncols || t->idx[k] < 0)
        return NULL;
    return &t->rec.fields[t->idx[k]];
}

int corral__trace_parse_int(const char *p, size_t len, int64_t *out)
{
    trim(&p, &len);
    size_t i = 0;
    bool neg = false;
    if (i < len && (p[i] == '-' || p[i] == '+'))
        neg = p[i++] == '-';
    if (i == len || p[i] < '0' || p[i] > '9')
        return CORRAL_EINVAL;
    uint64_t v = 0, lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    bool over = false;
    for (; i < len && p[i] >= '0' && p[i] <= '9'; i++) {
        unsigned dgt = (unsigned)(p[i] - '0');
        if (v > (lim - dgt) / 10)
            over = true;
        else
            v = v * 10 + dgt;
    }
    if (i < len && p[i] == '.') /* "12.0" from tools that write floats */
        for (i++; i < len && p[i] == '0'; i++)
            ;
    if (i != len)
        return CORRAL_EINVAL;
    if (over)
        return CORRAL_ERANGE;
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return 0;
}

int corral__trace_int(trace_tab_t *t, size_t k, int64_t min, int64_t max, bool optional,
                      int64_t dflt, int64_t *out)
{
    const corral_csv_field_t *f = corral__trace_field(t, k);
    if (optional && corral__trace_empty(f)) {
        *out = dflt;
        return 0;
    }
    int64_t v = 0;
    if (f && corral__trace_parse_int(f->p, f->len, &v) == 0 && v >= min && v <= max) {
        *out = v;
        return 0;
    }
    char got[128];
    corral__trace_show(f, got, sizeof(got));
    if (max == INT64_MAX)
        corral__trace_err(t, k, "expected a whole number >= %lld, got %s", (long long)min, got);
    else
        corral__trace_err(t, k, "expected a whole number %lld-%lld, got %s", (long long)min,
                          (long long)max, got);
    return CORRAL_EINVAL;
}

static const char *tab_intern(trace_tab_t *t, const char *p, size_t len)
{
    for (size_t j = 0; j < t->nintern; j++)
        if (strncmp(t->intern[j], p, len) == 0 && t->intern[j][len] == '\0')
            return t->intern[j];
    const char *s = corral_arena_strndup(t->arena, p, len);
    if (t->nintern < TRACE_MAX_INTERN)
        t->intern[t->nintern++] = s;
    return s;
}

const char *corral__trace_str(trace_tab_t *t, size_t k, bool required, bool intern)
{
    const corral_csv_field_t *f = corral__trace_field(t, k);
    if (corral__trace_empty(f)) {
        if (required)
            corral__trace_err(t, k, "expected a name, got an empty field");
        return NULL;
    }
    return intern ? tab_intern(t, f->p, f->len) : corral_arena_strndup(t->arena, f->p, f->len);
}

/* Exact powers of ten: with a mantissa below 2^53 they give a correctly
 * rounded result (Clinger's fast path), as strtod would. */
static const double pow10_exact[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                     1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                     1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* Digits at p[*ip..len) into the mantissa; counts digits dropped or after
 * the point in *exp10. Returns how many digits were read. */
static size_t num_digits(const char *p, size_t len, size_t *ip, uint64_t *mant, int *nsig,
                         int *exp10, bool frac)
{
    size_t i = *ip, n = 0;
    for (; i < len && p[i] >= '0' && p[i] <= '9'; i++, n++) {
        if (*nsig < 19) {
            *mant = *mant * 10 + (uint64_t)(p[i] - '0');
            if (*mant)
                (*nsig)++;
            if (frac)
                (*exp10)--;
        } else if (!frac) {
            (*exp10)++;
        }
    }
    *ip = i;
    return n;
}

static int num_exponent(const char *p, size_t len, size_t *ip, int *exp10)
{
    size_t i = *ip + 1;
    bool neg = false;
    if (i < len && (p[i] == '+' || p[i] == '-'))
        neg = p[i++] == '-';
    if (i == len || p[i] < '0' || p[i] > '9')
        return CORRAL_EINVAL;
    int e = 0;
    for (; i < len && p[i] >= '0' && p[i] <= '9'; i++)
        if (e < 100000)
            e = e * 10 + (p[i] - '0');
    *exp10 += neg ? -e : e;
    *ip = i;
    return 0;
}

int corral__trace_parse_num(const char *p, size_t len, double *out)
{
    trim(&p, &len);
    size_t i = 0;
    bool neg = false;
    if (i < len && (p[i] == '-' || p[i] == '+'))
        neg = p[i++] == '-';
    uint64_t mant = 0;
    int nsig = 0, exp10 = 0;
    size_t nd = num_digits(p, len, &i, &mant, &nsig, &exp10, false);
    if (i < len && p[i] == '.') {
        i++;
        nd += num_digits(p, len, &i, &mant, &nsig, &exp10, true);
    }
    if (nd == 0)
        return CORRAL_EINVAL;
    if (i < len && (p[i] == 'e' || p[i] == 'E') && num_exponent(p, len, &i, &exp10) != 0)
        return CORRAL_EINVAL;
    if (i != len)
        return CORRAL_EINVAL;
    double v;
    if (mant == 0)
        v = 0.0;
    else if (mant <= (UINT64_C(1) << 53) && exp10 >= -22 && exp10 <= 22)
        v = exp10 >= 0 ? (double)mant * pow10_exact[exp10] : (double)mant / pow10_exact[-exp10];
    else
        v = (double)mant * pow(10.0, (double)exp10);
    *out = neg ? -v : v;
    return 0;
}

/* Two or four digits at p as a number; -1 when not all digits. */
static int date_part(const char *p, size_t n)
{
    int v = 0;
    for (size_t j = 0; j < n; j++) {
        if (p[j] < '0' || p[j] > '9')
            return -1;
        v = v * 10 + (p[j] - '0');
    }
    return v;
}

/* Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar
 * (H. Hinnant's days_from_civil). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

int corral__trace_parse_date(const char *p, size_t len, int64_t *out)
{
    static const int mdays[12] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    trim(&p, &len);
    if (len != 19 || p[4] != '-' || p[7] != '-' || (p[10] != ' ' && p[10] != 'T') || p[13] != ':' ||
        p[16] != ':')
        return CORRAL_EINVAL;
    int y = date_part(p, 4), mo = date_part(p + 5, 2), d = date_part(p + 8, 2);
    int h = date_part(p + 11, 2), mi = date_part(p + 14, 2), s = date_part(p + 17, 2);
    if (y < 0 || mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] || h < 0 || h > 23 || mi < 0 ||
        mi > 59 || s < 0 || s > 59)
        return CORRAL_EINVAL;
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    if (mo == 2 && d == 29 && !leap)
        return CORRAL_EINVAL;
    *out = days_from_civil(y, mo, d) * 86400 + (int64_t)h * 3600 + (int64_t)mi * 60 + s;
    return 0;
}
