/*
 * An RFC 4180 CSV tokenizer in the picohttpparser mould: it never allocates
 * (fields point into the input, or into a caller-provided scratch buffer for
 * quoted fields with "" escapes), it is bounded (fields per record and bytes
 * per record), and it can be resumed: when the input window ends inside a
 * record and more input may follow, it answers CORRAL_EAGAIN without changing
 * any state, and the caller feeds a longer window. After a malformed line it
 * skips to the next line feed, so a reader can report every bad line of a
 * file rather than only the first.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "corral/common.h"
#include "corral/csv.h"

/* Internal: the window ended inside a field; the caller decides what it means. */
#define CSV_MORE 1

void corral_csv_init(corral_csv_t *c, corral_csv_field_t *fields, size_t max_fields, char *scratch,
                     size_t max_line)
{
    memset(c, 0, sizeof(*c));
    c->fields = fields;
    c->max_fields = max_fields;
    c->scratch = scratch;
    c->max_line = max_line;
    c->line = 1;
}

void corral_csv_feed(corral_csv_t *c, const char *data, size_t len, bool final)
{
    c->data = data;
    c->len = len;
    c->pos = 0;
    c->final = final;
}

size_t corral_csv_consumed(const corral_csv_t *c)
{
    return c->pos;
}

/* Record an error at err_line, and resume by skipping from byte at (on line
 * at_line) to the end of that line. */
static int csv_fail(corral_csv_t *c, int rc, size_t at, int at_line, int err_line, const char *fmt,
                    ...) CORRAL_PRINTF(6, 7);

static int csv_fail(corral_csv_t *c, int rc, size_t at, int at_line, int err_line, const char *fmt,
                    ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err, sizeof(c->err), fmt, ap);
    va_end(ap);
    c->err_line = err_line;
    c->pos = at;
    c->line = at_line;
    c->skipping = true;
    return rc;
}

static int csv_too_long(corral_csv_t *c, size_t at, int at_line, int start_line)
{
    return csv_fail(c, CORRAL_ETOOBIG, at, at_line, start_line, "line longer than %zu bytes",
                    c->max_line);
}

/*
 * The window ended (at lim) inside a record that began at start. Decide:
 * the record is too long, more input is needed, or (returning 0) the input
 * is final and the record simply ends here.
 */
static int csv_window_end(corral_csv_t *c, size_t start, size_t lim, int line, int start_line)
{
    if (lim < c->len || c->len - start > c->max_line + 1)
        return csv_too_long(c, lim, line, start_line);
    if (!c->final)
        return CORRAL_EAGAIN;
    return 0;
}

/* An unquoted field from *ip up to a comma, CR, LF or lim. */
static int csv_plain(corral_csv_t *c, size_t *ip, size_t lim, int line, corral_csv_field_t *f)
{
    const char *d = c->data;
    size_t b = *ip, i = *ip;
    for (; i < lim; i++) {
        char ch = d[i];
        if (ch == ',' || ch == '\n' || ch == '\r')
            break;
        if (ch == '"')
            return csv_fail(c, CORRAL_EPARSE, i, line, line,
                            "a quote inside an unquoted field (quote the whole field and "
                            "double the quotes inside it)");
        if (ch == '\0')
            return csv_fail(c, CORRAL_EPARSE, i, line, line, "NUL byte (is this a binary file?)");
    }
    f->p = d + b;
    f->len = i - b;
    f->quoted = false;
    *ip = i;
    return 0;
}

/* Copy a quoted field's content, turning "" into ", into the scratch buffer. */
static void csv_unescape(corral_csv_t *c, const char *src, size_t n, size_t *scr,
                         corral_csv_field_t *f)
{
    char *dst = c->scratch + *scr;
    size_t k = 0;
    for (size_t j = 0; j < n; j++) {
        dst[k++] = src[j];
        if (src[j] == '"')
            j++; /* the second quote of a pair */
    }
    f->p = dst;
    f->len = k;
    *scr += k;
}

/*
 * A quoted field whose opening quote is at *ip. On success *ip is just past
 * the closing quote; line counts the line feeds inside. Returns CSV_MORE
 * (with *ip and *linep at the window end) when the window ends first.
 */
static int csv_quoted(corral_csv_t *c, size_t *ip, size_t lim, int *linep, size_t *scr,
                      corral_csv_field_t *f)
{
    const char *d = c->data;
    size_t b = *ip + 1, i = b;
    int line = *linep;
    bool esc = false;
    for (;;) {
        if (i >= lim) {
            *ip = lim;
            *linep = line;
            return CSV_MORE;
        }
        char ch = d[i];
        if (ch == '"') {
            if (i + 1 == lim && (lim < c->len || !c->final)) {
                *ip = lim;
                *linep = line;
                return CSV_MORE; /* cannot tell "" from a closing quote yet */
            }
            if (i + 1 < lim && d[i + 1] == '"') {
                esc = true;
                i += 2;
                continue;
            }
            break;
        }
        if (ch == '\n')
            line++;
        else if (ch == '\0')
            return csv_fail(c, CORRAL_EPARSE, i, line, line, "NUL byte (is this a binary file?)");
        i++;
    }
    if (esc) {
        if (*scr + (i - b) > c->max_line) /* cannot happen: the record is bounded */
            return csv_too_long(c, i + 1, line, c->line);
        csv_unescape(c, d + b, i - b, scr, f);
    } else {
        f->p = d + b;
        f->len = i - b;
    }
    f->quoted = true;
    *ip = i + 1;
    *linep = line;
    return 0;
}

/* Skip the rest of a line after an error. Returns 1 when done, else what
 * corral_csv_next should return. */
static int csv_skip(corral_csv_t *c)
{
    const char *nl = memchr(c->data + c->pos, '\n', c->len - c->pos);
    if (!nl) {
        c->pos = c->len;
        return c->final ? 0 : CORRAL_EAGAIN;
    }
    c->pos = (size_t)(nl - c->data) + 1;
    c->line++;
    c->skipping = false;
    return 1;
}

/* A leading UTF-8 byte order mark is dropped. Returns 1 when done. */
static int csv_bom(corral_csv_t *c)
{
    static const char bom[3] = {'\xEF', '\xBB', '\xBF'};
    size_t avail = c->len - c->pos;
    if (avail < 3 && !c->final && memcmp(c->data + c->pos, bom, avail) == 0)
        return CORRAL_EAGAIN;
    if (avail >= 3 && memcmp(c->data + c->pos, bom, 3) == 0)
        c->pos += 3;
    c->bom_done = true;
    return 1;
}

/* What follows a field at i: 0 and *endp, *nextp when the record ends,
 * 1 for a comma (i moves past it), else an error or CORRAL_EAGAIN. */
static int csv_after_field(corral_csv_t *c, size_t *ip, int line, size_t *endp, size_t *nextp)
{
    const char *d = c->data;
    size_t i = *ip;
    if (d[i] == ',') {
        *ip = i + 1;
        return 1;
    }
    *endp = i;
    if (d[i] == '\n') {
        *nextp = i + 1;
        return 0;
    }
    if (d[i] == '\r' && i + 1 < c->len && d[i + 1] == '\n') {
        *nextp = i + 2;
        return 0;
    }
    if (d[i] == '\r' && i + 1 == c->len && !c->final)
        return CORRAL_EAGAIN;
    if (d[i] == '\r')
        return csv_fail(c, CORRAL_EPARSE, i + 1, line, line,
                        "carriage return not followed by a line feed");
    return csv_fail(c, CORRAL_EPARSE, i, line, line,
                    "unexpected text after a closing quote (double a quote inside a quoted field)");
}

/* Scan one record starting at c->pos (not at the end of the window). */
static int csv_record(corral_csv_t *c, corral_csv_record_t *rec)
{
    const char *d = c->data;
    size_t start = c->pos, i = start, nf = 0, scr = 0, end = 0, next = 0;
    size_t lim = c->len - start > c->max_line + 2 ? start + c->max_line + 2 : c->len;
    int line = c->line;
    for (;;) {
        if (nf == c->max_fields)
            return csv_fail(c, CORRAL_ETOOBIG, i, line, c->line, "more than %zu fields",
                            c->max_fields);
        corral_csv_field_t *f = &c->fields[nf++];
        while (c->trim_leading_space && i < lim && (d[i] == ' ' || d[i] == '\t'))
            i++;
        int rc = (i < lim && d[i] == '"') ? csv_quoted(c, &i, lim, &line, &scr, f)
                                          : csv_plain(c, &i, lim, line, f);
        if (rc < 0)
            return rc;
        if (i >= lim) {
            int w = csv_window_end(c, start, lim, line, c->line);
            if (w != 0)
                return w;
            if (rc == CSV_MORE)
                return csv_fail(c, CORRAL_EPARSE, c->len, line, c->line,
                                "a quoted field is never closed (missing \")");
            end = next = c->len;
            break;
        }
        rc = csv_after_field(c, &i, line, &end, &next);
        if (rc == 0)
            break;
        if (rc < 0)
            return rc;
    }
    if (end - start > c->max_line) {
        /* The whole record was read: resume right after it, skipping nothing. */
        int rc = csv_too_long(c, next, line + (next > end && d[next - 1] == '\n'), c->line);
        c->skipping = false;
        return rc;
    }
    rec->fields = c->fields;
    rec->n = nf;
    rec->line = c->line;
    c->pos = next;
    c->line = line + (next > end && d[next - 1] == '\n');
    return 1;
}

int corral_csv_next(corral_csv_t *c, corral_csv_record_t *rec)
{
    int rc;
    if (c->skipping && (rc = csv_skip(c)) != 1)
        return rc;
    if (!c->bom_done && (rc = csv_bom(c)) != 1)
        return rc;
    const char *d = c->data;
    size_t i = c->pos, left = c->len - c->pos;
    if (left == 0)
        return c->final ? 0 : CORRAL_EAGAIN;
    if (d[i] == '\r' && left == 1 && !c->final)
        return CORRAL_EAGAIN;
    if (d[i] == '\n' || (d[i] == '\r' && left > 1 && d[i + 1] == '\n')) {
        rec->fields = c->fields;
        rec->n = 0;
        rec->line = c->line++;
        c->pos = i + (d[i] == '\r' ? 2 : 1);
        return 1;
    }
    return csv_record(c, rec);
}
