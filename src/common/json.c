/*
 * A strict, linear JSON parser producing value trees (see corral/json.h).
 * Iterative, with an explicit stack, so nesting costs no C stack; duplicate
 * keys are found with a per-map hash table once a map grows past a few
 * keys, so a 100,000-key object is still linear. Strings are unescaped into
 * the arena (\uXXXX with surrogate pairs to UTF-8); numbers keep their text,
 * and are INT when they are whole and fit in int64, else FLOAT.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corral/hmap.h"
#include "corral/json.h"
#include "corral/yaml.h"

#define HASH_FROM 16 /* maps with more keys than this get a hash table */

typedef struct frame {
    corral_val_t *coll;
    corral_val_t *key; /* maps: the key waiting for its value */
    uint32_t *tab;     /* maps: hash table of pair indices + 1 (0 = empty) */
    size_t tabcap;
    size_t dup; /* maps: index + 1 of the pair a duplicate key replaces */
} frame_t;

typedef struct parser {
    corral_arena_t *a;
    const char *s, *end, *p;
    const char *line_start;
    int line;
    size_t nodes;
    corral_json_err_t *err;
    frame_t stack[CORRAL_YAML_MAX_DEPTH + 1];
    int depth;
    corral_json_dup_fn dup_fn; /* NULL: duplicate keys are errors */
    void *dup_ctx;
} parser_t;

static int fail(parser_t *P, const char *at, int rc, const char *fmt, ...) CORRAL_PRINTF(4, 5);

static int fail(parser_t *P, const char *at, int rc, const char *fmt, ...)
{
    if (P->err) {
        /* Recount the position of `at` (errors are rare; parsing is not slowed). */
        int line = 1;
        const char *ls = P->s;
        for (const char *q = P->s; q < at && q < P->end; q++) {
            if (*q == '\n') {
                line++;
                ls = q + 1;
            }
        }
        P->err->line = line;
        P->err->col = (int)(at - ls) + 1;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(P->err->msg, sizeof(P->err->msg), fmt, ap);
        va_end(ap);
    }
    return rc;
}

static void skip_ws(parser_t *P)
{
    while (P->p < P->end) {
        char c = *P->p;
        if (c == '\n') {
            P->line++;
            P->line_start = P->p + 1;
        } else if (c != ' ' && c != '\t' && c != '\r') {
            return;
        }
        P->p++;
    }
}

static corral_val_t *node(parser_t *P, corral_val_kind_t kind, const char *at)
{
    corral_val_t *v = corral_val_new(P->a, kind);
    v->line = P->line;
    v->col = (int)(at - P->line_start) + 1;
    P->nodes++;
    return v;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static int hex4(const char *p, const char *end, unsigned *out)
{
    if (end - p < 4)
        return -1;
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        int h = hexval(p[i]);
        if (h < 0)
            return -1;
        v = v * 16 + (unsigned)h;
    }
    *out = v;
    return 0;
}

static size_t utf8(unsigned cp, char *o)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xc0 | (cp >> 6));
        o[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xe0 | (cp >> 12));
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        o[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    o[0] = (char)(0xf0 | (cp >> 18));
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    o[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* One escape after the backslash at *pp; appends to o. */
static int unescape(parser_t *P, const char **pp, char *o, size_t *olen)
{
    const char *p = *pp;
    static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
    const char *e = p < P->end ? strchr(from, *p) : NULL;
    if (e && *p) {
        o[(*olen)++] = to[e - from];
        *pp = p + 1;
        return 0;
    }
    unsigned cp;
    if (p >= P->end || *p != 'u' || hex4(p + 1, P->end, &cp) != 0)
        return fail(P, p - 1, CORRAL_EPARSE, "invalid escape in string");
    p += 5;
    if (cp >= 0xd800 && cp <= 0xdbff) {
        unsigned lo;
        if (P->end - p < 6 || p[0] != '\\' || p[1] != 'u' || hex4(p + 2, P->end, &lo) != 0 ||
            lo < 0xdc00 || lo > 0xdfff)
            return fail(P, p, CORRAL_EPARSE, "unpaired surrogate in \\u escape");
        cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
        p += 6;
    } else if (cp >= 0xdc00 && cp <= 0xdfff) {
        return fail(P, p - 6, CORRAL_EPARSE, "unpaired surrogate in \\u escape");
    }
    if (cp == 0)
        return fail(P, p - 6, CORRAL_EPARSE, "\\u0000 is not allowed in strings");
    *olen += utf8(cp, o + *olen);
    *pp = p;
    return 0;
}

/* A string starting at the opening quote. */
static int string(parser_t *P, corral_val_t **out)
{
    const char *start = P->p++;
    const char *q = P->p;
    /* Fast path: no escapes. */
    while (q < P->end && *q != '"' && *q != '\\' && (unsigned char)*q >= 0x20)
        q++;
    corral_val_t *v = node(P, CORRAL_VAL_STR, start);
    v->quoted = true;
    if (q < P->end && *q == '"') {
        v->s = corral_arena_strndup(P->a, P->p, (size_t)(q - P->p));
        v->len = (size_t)(q - P->p);
        P->p = q + 1;
        *out = v;
        return 0;
    }
    /* Unescaped text is never longer than the source. */
    const char *close = q;
    while (close < P->end && *close != '"')
        close += (*close == '\\' && close + 1 < P->end) ? 2 : 1;
    char *o = corral_arena_alloc(P->a, (size_t)(close - P->p) + 1);
    size_t olen = 0;
    const char *p = P->p;
    while (p < P->end && *p != '"') {
        unsigned char c = (unsigned char)*p;
        if (c < 0x20)
            return fail(P, p, CORRAL_EPARSE, "control character in string");
        if (c == '\\') {
            p++;
            int rc = unescape(P, &p, o, &olen);
            if (rc)
                return rc;
            continue;
        }
        o[olen++] = (char)c;
        p++;
    }
    if (p >= P->end)
        return fail(P, start, CORRAL_EPARSE, "unterminated string");
    o[olen] = '\0';
    v->s = o;
    v->len = olen;
    P->p = p + 1;
    *out = v;
    return 0;
}

static bool digit(char c)
{
    return c >= '0' && c <= '9';
}

static int number(parser_t *P, corral_val_t **out)
{
    const char *s = P->p, *p = s;
    bool whole = true;
    if (p < P->end && *p == '-')
        p++;
    if (p >= P->end || !digit(*p))
        return fail(P, s, CORRAL_EPARSE, "invalid number");
    if (*p == '0' && p + 1 < P->end && digit(p[1]))
        return fail(P, s, CORRAL_EPARSE, "numbers may not have leading zeros");
    while (p < P->end && digit(*p))
        p++;
    if (p < P->end && *p == '.') {
        whole = false;
        if (++p >= P->end || !digit(*p))
            return fail(P, s, CORRAL_EPARSE, "invalid number");
        while (p < P->end && digit(*p))
            p++;
    }
    if (p < P->end && (*p == 'e' || *p == 'E')) {
        whole = false;
        p++;
        if (p < P->end && (*p == '+' || *p == '-'))
            p++;
        if (p >= P->end || !digit(*p))
            return fail(P, s, CORRAL_EPARSE, "invalid number");
        while (p < P->end && digit(*p))
            p++;
    }
    corral_val_t *v = node(P, CORRAL_VAL_INT, s);
    v->s = corral_arena_strndup(P->a, s, (size_t)(p - s));
    v->len = (size_t)(p - s);
    errno = 0;
    long long i = whole ? strtoll(v->s, NULL, 10) : 0;
    if (whole && errno != ERANGE) {
        v->u.i = i;
    } else {
        v->kind = CORRAL_VAL_FLOAT; /* too big for int64 stays exact as text */
        v->u.f = strtod(v->s, NULL);
    }
    P->p = p;
    *out = v;
    return 0;
}

static int literal(parser_t *P, corral_val_t **out)
{
    static const struct {
        const char *word;
        corral_val_kind_t kind;
        bool b;
    } lits[] = {{"true", CORRAL_VAL_BOOL, true},
                {"false", CORRAL_VAL_BOOL, false},
                {"null", CORRAL_VAL_NULL, false}};
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(lits); i++) {
        size_t n = strlen(lits[i].word);
        if ((size_t)(P->end - P->p) >= n && memcmp(P->p, lits[i].word, n) == 0) {
            corral_val_t *v = node(P, lits[i].kind, P->p);
            v->u.b = lits[i].b;
            v->s = lits[i].word;
            v->len = n;
            P->p += n;
            *out = v;
            return 0;
        }
    }
    return fail(P, P->p, CORRAL_EPARSE, "unexpected character '%c'",
                (*P->p >= 0x20 && *P->p < 0x7f) ? *P->p : '?');
}

/* Keys come from clients: a seeded hash (hmap.h), so none can be chosen
 * to collide. */
static uint32_t hash(const char *s, size_t n)
{
    return corral_hash_mem(s, n);
}

static void tab_insert(frame_t *f, size_t idx)
{
    const corral_val_t *k = f->coll->pairs[idx].key;
    size_t m = f->tabcap - 1;
    size_t h = hash(k->s, k->len) & m;
    while (f->tab[h])
        h = (h + 1) & m;
    f->tab[h] = (uint32_t)idx + 1;
}

/* The index + 1 of key k in the map of frame f, 0 when absent. Keeps the
 * hash table current. */
static size_t duplicate(parser_t *P, frame_t *f, const corral_val_t *k)
{
    corral_val_t *m = f->coll;
    if (m->n < HASH_FROM) {
        for (size_t i = 0; i < m->n; i++) {
            if (m->pairs[i].key->len == k->len && memcmp(m->pairs[i].key->s, k->s, k->len) == 0)
                return i + 1;
        }
        return 0;
    }
    if (f->tabcap < 2 * (m->n + 1)) {
        size_t cap = 64;
        while (cap < 4 * (m->n + 1))
            cap *= 2;
        f->tab = corral_arena_alloc(P->a, cap * sizeof(*f->tab));
        f->tabcap = cap;
        for (size_t i = 0; i < m->n; i++)
            tab_insert(f, i);
    }
    size_t mask = f->tabcap - 1;
    for (size_t h = hash(k->s, k->len) & mask; f->tab[h]; h = (h + 1) & mask) {
        const corral_val_t *o = m->pairs[f->tab[h] - 1].key;
        if (o->len == k->len && memcmp(o->s, k->s, k->len) == 0)
            return f->tab[h];
    }
    return 0;
}

/* Report duplicate key k of the innermost map by its dotted path. */
static void report_dup(parser_t *P, const corral_val_t *k)
{
    corral_buf_t b;
    corral_buf_init(&b);
    for (int i = 0; i < P->depth - 1; i++) {
        const frame_t *f = &P->stack[i];
        if (f->coll->kind == CORRAL_VAL_SEQ)
            corral_buf_printf(&b, "[%zu]", f->coll->n);
        else if (f->key)
            corral_buf_printf(&b, "%s%s", b.len ? "." : "", f->key->s);
    }
    corral_buf_printf(&b, "%s%s", b.len ? "." : "", k->s);
    P->dup_fn(P->dup_ctx, corral_buf_str(&b));
    corral_buf_fini(&b);
}

/* Attach a finished value to the innermost open collection. */
static void attach(parser_t *P, corral_val_t *v)
{
    frame_t *f = &P->stack[P->depth - 1];
    if (f->coll->kind == CORRAL_VAL_SEQ) {
        corral_val_push(P->a, f->coll, v);
        return;
    }
    corral_val_t *m = f->coll;
    if (f->dup) {
        m->pairs[f->dup - 1].val = v; /* the last of duplicate keys wins */
        f->dup = 0;
        f->key = NULL;
        return;
    }
    if (m->n == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 4;
        m->pairs =
            corral_arena_grow(P->a, m->pairs, m->cap * sizeof(*m->pairs), cap * sizeof(*m->pairs));
        m->cap = cap;
    }
    m->pairs[m->n].key = f->key;
    m->pairs[m->n].val = v;
    m->n++;
    if (f->tab)
        tab_insert(f, m->n - 1);
    f->key = NULL;
}

static int open_coll(parser_t *P, corral_val_kind_t kind, corral_val_t **out)
{
    if (P->depth == CORRAL_YAML_MAX_DEPTH)
        return fail(P, P->p, CORRAL_ETOOBIG, "nested more than %d levels deep",
                    CORRAL_YAML_MAX_DEPTH);
    corral_val_t *v = node(P, kind, P->p);
    P->p++;
    frame_t *f = &P->stack[P->depth++];
    memset(f, 0, sizeof(*f));
    f->coll = v;
    *out = v;
    return 0;
}

/* Read a map key and its colon. Returns 0, or an error. */
static int map_key(parser_t *P, frame_t *f)
{
    skip_ws(P);
    if (P->p >= P->end || *P->p != '"')
        return fail(P, P->p, CORRAL_EPARSE, "expected a string key");
    const char *at = P->p;
    corral_val_t *k = NULL;
    int rc = string(P, &k);
    if (rc || !k)
        return rc ? rc : CORRAL_EPARSE;
    size_t dup = duplicate(P, f, k);
    if (dup && !P->dup_fn)
        return fail(P, at, CORRAL_EPARSE, "duplicate key \"%s\"", k->s);
    if (dup) {
        report_dup(P, k);
        f->dup = dup;
    }
    skip_ws(P);
    if (P->p >= P->end || *P->p != ':')
        return fail(P, P->p, CORRAL_EPARSE, "expected ':' after a key");
    P->p++;
    f->key = k;
    return 0;
}

/* After a value inside a collection: ',' or the closing bracket. Sets
 * *closed when the collection ended. */
static int after_value(parser_t *P, bool *closed)
{
    frame_t *f = &P->stack[P->depth - 1];
    char close = f->coll->kind == CORRAL_VAL_SEQ ? ']' : '}';
    skip_ws(P);
    *closed = false;
    if (P->p < P->end && *P->p == ',') {
        P->p++;
        return f->coll->kind == CORRAL_VAL_MAP ? map_key(P, f) : 0;
    }
    if (P->p < P->end && *P->p == close) {
        P->p++;
        *closed = true;
        if (f->coll->kind == CORRAL_VAL_MAP)
            corral_val_index(P->a, f->coll); /* big maps: O(1) lookups from here on */
        return 0;
    }
    return fail(P, P->p, CORRAL_EPARSE, "expected ',' or '%c'", close);
}

/* One value (a scalar, or the start of a collection). *opened is set when a
 * collection was opened (its contents come next). */
static int value(parser_t *P, corral_val_t **out, bool *opened)
{
    skip_ws(P);
    *opened = false;
    if (P->nodes >= CORRAL_YAML_MAX_NODES)
        return fail(P, P->p, CORRAL_ETOOBIG, "more than %zu values", (size_t)CORRAL_YAML_MAX_NODES);
    if (P->p >= P->end)
        return fail(P, P->p, CORRAL_EPARSE, "unexpected end of input");
    char c = *P->p;
    if (c == '{' || c == '[') {
        int rc = open_coll(P, c == '{' ? CORRAL_VAL_MAP : CORRAL_VAL_SEQ, out);
        if (rc)
            return rc;
        *opened = true;
        skip_ws(P);
        char close = c == '{' ? '}' : ']';
        if (P->p < P->end && *P->p == close) {
            P->p++;
            P->depth--;
            *opened = false;
            return 0;
        }
        return c == '{' ? map_key(P, &P->stack[P->depth - 1]) : 0;
    }
    if (c == '"')
        return string(P, out);
    if (c == '-' || digit(c))
        return number(P, out);
    return literal(P, out);
}

int corral_json_parse(corral_arena_t *a, const char *text, size_t len, corral_val_t **out,
                      corral_json_err_t *err)
{
    return corral_json_parse_dups(a, text, len, out, err, NULL, NULL);
}

int corral_json_parse_dups(corral_arena_t *a, const char *text, size_t len, corral_val_t **out,
                           corral_json_err_t *err, corral_json_dup_fn dup_fn, void *dup_ctx)
{
    parser_t *P = corral_calloc(1, sizeof(*P));
    P->a = a;
    P->dup_fn = dup_fn;
    P->dup_ctx = dup_ctx;
    P->s = P->p = P->line_start = text;
    P->end = text + len;
    P->line = 1;
    P->err = err;
    *out = NULL;
    corral_val_t *root = NULL;
    int rc = 0;
    for (;;) {
        corral_val_t *v = NULL;
        bool opened = false;
        rc = value(P, &v, &opened);
        if (rc)
            break;
        if (opened)
            continue; /* its contents come first */
        /* v is complete: attach it and close every collection that ends here. */
        bool closed = true;
        while (rc == 0 && closed) {
            if (P->depth == 0) {
                root = v;
                break;
            }
            attach(P, v);
            rc = after_value(P, &closed);
            if (closed) {
                v = P->stack[--P->depth].coll;
            }
        }
        if (rc || root)
            break;
    }
    if (rc == 0) {
        skip_ws(P);
        if (P->p != P->end)
            rc = fail(P, P->p, CORRAL_EPARSE, "unexpected data after the JSON value");
    }
    corral_free(P);
    if (rc == 0)
        *out = root;
    return rc;
}
