/*
 * The Prometheus text format parser of promtext.h. One line at a time: the
 * line is copied into a scratch buffer where the name and the label values
 * are unescaped in place (unescaping only shortens), so every string the
 * callback sees is NUL-terminated and lies inside that buffer. Grammar, as
 * the Prometheus text parser accepts it:
 *   line    = name [ "{" [ label { "," label } [ "," ] ] "}" ] ws value [ ws timestamp ]
 *   label   = lname ws? "=" ws? '"' escaped '"'
 *   value   = a float, "NaN", "+Inf", "-Inf"; timestamp = an integer (ms)
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corral/common.h"
#include "corral/promtext.h"

typedef struct cur {
    char *p, *end;
    size_t line;
    char *err;
    size_t errlen;
} cur_t;

static int fail(cur_t *c, int code, const char *fmt, ...) CORRAL_PRINTF(3, 4);
static int fail(cur_t *c, int code, const char *fmt, ...)
{
    if (c->err && c->errlen) {
        int n = snprintf(c->err, c->errlen, "line %zu: ", c->line);
        va_list ap;
        va_start(ap, fmt);
        if (n >= 0 && (size_t)n < c->errlen)
            vsnprintf(c->err + n, c->errlen - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return code;
}

static bool name_start(char ch, bool colon)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_' ||
           (colon && ch == ':');
}

static bool name_char(char ch, bool colon)
{
    return name_start(ch, colon) || (ch >= '0' && ch <= '9');
}

static void skip_ws(cur_t *c)
{
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t'))
        c->p++;
}

/* A name at c->p, NUL-terminated in place once the caller has consumed the
 * character after it (saved in *next). */
static char *take_name(cur_t *c, bool colon)
{
    if (c->p >= c->end || !name_start(*c->p, colon))
        return NULL;
    char *s = c->p;
    while (c->p < c->end && name_char(*c->p, colon))
        c->p++;
    return s;
}

/* A quoted label value, unescaped in place; NULL when malformed. */
static char *take_value(cur_t *c)
{
    if (c->p >= c->end || *c->p != '"')
        return NULL;
    char *out = ++c->p, *w = out;
    while (c->p < c->end && *c->p != '"') {
        char ch = *c->p++;
        if (ch == '\\') {
            if (c->p >= c->end)
                return NULL;
            char e = *c->p++;
            ch = (char)(e == 'n' ? '\n' : e);
            if (e != 'n' && e != '\\' && e != '"')
                return NULL;
        }
        *w++ = ch;
    }
    if (c->p >= c->end)
        return NULL;
    c->p++; /* the closing quote; w <= its position, so the NUL fits */
    *w = '\0';
    return out;
}

static int take_labels(cur_t *c, corral_promtext_sample_t *s)
{
    c->p++; /* '{' */
    for (;;) {
        skip_ws(c);
        if (c->p < c->end && *c->p == '}') {
            c->p++;
            return 0;
        }
        char *ln = take_name(c, false);
        if (!ln)
            return fail(c, CORRAL_EPARSE, "expected a label name");
        char *lend = c->p;
        skip_ws(c);
        if (c->p >= c->end || *c->p != '=')
            return fail(c, CORRAL_EPARSE, "expected '=' after label %.*s", (int)(lend - ln), ln);
        c->p++;
        skip_ws(c);
        char *lv = take_value(c);
        if (!lv)
            return fail(c, CORRAL_EPARSE, "bad value of label %.*s", (int)(lend - ln), ln);
        if (s->nlabels == CORRAL_PROMTEXT_MAX_LABELS)
            return fail(c, CORRAL_ETOOBIG, "more than %d labels", CORRAL_PROMTEXT_MAX_LABELS);
        *lend = '\0'; /* lend is before the value, which is already taken */
        s->labels[s->nlabels].name = ln;
        s->labels[s->nlabels++].value = lv;
        skip_ws(c);
        if (c->p < c->end && *c->p == ',') {
            c->p++;
            continue;
        }
        if (c->p < c->end && *c->p == '}') {
            c->p++;
            return 0;
        }
        return fail(c, CORRAL_EPARSE, "expected ',' or '}' in the labels");
    }
}

/* The next whitespace-delimited token, NUL-terminated in place. */
static char *take_token(cur_t *c)
{
    skip_ws(c);
    if (c->p >= c->end)
        return NULL;
    char *s = c->p;
    while (c->p < c->end && *c->p != ' ' && *c->p != '\t')
        c->p++;
    if (c->p < c->end)
        *c->p++ = '\0';
    else
        *c->p = '\0'; /* the scratch buffer has room for the NUL */
    return s;
}

static bool parse_value(const char *t, double *out)
{
    if (!strcmp(t, "NaN")) {
        *out = NAN;
        return true;
    }
    if (!strcmp(t, "+Inf") || !strcmp(t, "Inf")) {
        *out = INFINITY;
        return true;
    }
    if (!strcmp(t, "-Inf")) {
        *out = -INFINITY;
        return true;
    }
    /* Decimal floats only: no hex, no "inf"/"nan" spellings strtod takes. */
    for (const char *p = t; *p; p++)
        if (!strchr("0123456789+-.eE", *p))
            return false;
    char *end = NULL;
    errno = 0;
    *out = strtod(t, &end);
    return end != t && *end == '\0';
}

static bool parse_ts(const char *t, int64_t *out)
{
    const char *p = t;
    bool neg = *p == '-';
    if (neg)
        p++;
    if (!*p || strlen(p) > 18)
        return false;
    int64_t v = 0;
    for (; *p; p++) {
        if (*p < '0' || *p > '9')
            return false;
        v = v * 10 + (*p - '0');
    }
    *out = neg ? -v : v;
    return true;
}

/* One sample line in c (the scratch copy, c->end at its end). */
static int parse_line(cur_t *c, corral_promtext_sample_t *s)
{
    memset(s, 0, sizeof(*s));
    s->line = c->line;
    char *name = take_name(c, true);
    if (!name)
        return fail(c, CORRAL_EPARSE, "expected a metric name");
    char *nend = c->p;
    if (c->p < c->end && *c->p == '{') {
        int rc = take_labels(c, s);
        if (rc)
            return rc;
    } else if (c->p < c->end && *c->p != ' ' && *c->p != '\t') {
        return fail(c, CORRAL_EPARSE, "bad character after the metric name");
    }
    if (c->p == nend && c->p < c->end)
        c->p++;   /* the blank after the name, about to be overwritten */
    *nend = '\0'; /* after the labels: '{' is no longer needed */
    s->name = name;
    char *v = take_token(c);
    if (!v || !parse_value(v, &s->value))
        return fail(c, CORRAL_EPARSE, "bad or missing value of %s", name);
    char *ts = take_token(c);
    if (ts) {
        if (!parse_ts(ts, &s->ts_ms))
            return fail(c, CORRAL_EPARSE, "bad timestamp of %s", name);
        s->has_ts = true;
    }
    if (take_token(c))
        return fail(c, CORRAL_EPARSE, "unexpected text after the value of %s", name);
    return 0;
}

int corral_promtext_parse(const char *text, size_t len, corral_promtext_fn fn, void *arg, char *err,
                          size_t errlen)
{
    if (err && errlen)
        err[0] = '\0';
    char *scratch = corral_malloc(CORRAL_PROMTEXT_MAX_LINE + 1);
    corral_promtext_sample_t *s = corral_malloc(sizeof(*s));
    cur_t c = {.err = err, .errlen = errlen};
    int rc = 0, count = 0;
    size_t pos = 0;
    while (pos < len && rc == 0) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t ll = nl ? (size_t)(nl - (text + pos)) : len - pos;
        c.line++;
        const char *line = text + pos;
        pos += ll + (nl ? 1 : 0);
        if (ll && line[ll - 1] == '\r')
            ll--;
        if (ll > CORRAL_PROMTEXT_MAX_LINE) {
            rc = fail(&c, CORRAL_ETOOBIG, "longer than %zu bytes", CORRAL_PROMTEXT_MAX_LINE);
            break;
        }
        memcpy(scratch, line, ll);
        scratch[ll] = '\0';
        c.p = scratch;
        c.end = scratch + ll;
        skip_ws(&c);
        if (c.p == c.end || *c.p == '#')
            continue;
        rc = parse_line(&c, s);
        if (rc == 0) {
            count++;
            rc = fn ? fn(arg, s) : 0;
        }
    }
    corral_free(s);
    corral_free(scratch);
    return rc ? rc : count;
}

const char *corral_promtext_label(const corral_promtext_sample_t *s, const char *name)
{
    for (size_t i = 0; i < s->nlabels; i++)
        if (!strcmp(s->labels[i].name, name))
            return s->labels[i].value;
    return NULL;
}
