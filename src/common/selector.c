/*
 * Label and field selectors, parsed and matched as Kubernetes does
 * (k8s.io/apimachinery/pkg/labels and pkg/fields). The label selector lexer
 * and parser mirror Kubernetes' own: tokens are the longest of "!=" "==" "="
 * "!" "(" ")" "," ">" "<", the keywords "in"/"notin" (which are ordinary
 * identifiers wherever a key or value is expected) and identifiers (runs of
 * anything else up to whitespace). One deliberate difference: "in ()" is an
 * error here, where Kubernetes silently reads it as in (""). Field selectors
 * are split at unescaped commas and at the first operator of each term, and
 * their values unescaped ("\\," "\\=" "\\\\"), also as Kubernetes does; we
 * additionally trim whitespace around field paths and values. Error messages
 * name the byte column (1-based) and what was expected there.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corral/selector.h"

#define SHOW_MAX 24 /* bytes of a token quoted in an error message */

typedef enum tok_kind {
    T_END,
    T_ID,
    T_IN,
    T_NOTIN,
    T_BANG,
    T_EQ,
    T_EQEQ,
    T_NEQ,
    T_GT,
    T_LT,
    T_LPAREN,
    T_RPAREN,
    T_COMMA,
} tok_kind_t;

typedef struct tok {
    tok_kind_t kind;
    size_t pos; /* byte offset of the first byte */
    size_t len;
} tok_t;

/* Shared by both parsers: input, output, and where messages go. */
typedef struct sel_parser {
    corral_arena_t *a;
    const char *s;
    size_t len;
    size_t pos; /* next byte the lexer reads */
    tok_t cur;  /* lookahead token (label selectors) */
    corral_selector_t *out;
    size_t cap; /* of out->reqs */
    char *why;
    size_t why_len;
} sel_parser_t;

static int fail(sel_parser_t *p, const char *fmt, ...) CORRAL_PRINTF(2, 3);

static int fail(sel_parser_t *p, const char *fmt, ...)
{
    if (p->why && p->why_len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(p->why, p->why_len, fmt, ap);
        va_end(ap);
    }
    return CORRAL_EINVAL;
}

/* Quote s[0..n) for a message: non-printable bytes as \xNN, long ones cut. */
static void show(const char *s, size_t n, char *out, size_t outlen)
{
    size_t w = 0;
    out[0] = '\0';
    for (size_t i = 0; i < n && i < SHOW_MAX && w + 5 < outlen; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x7f)
            out[w++] = (char)c;
        else
            w += (size_t)snprintf(out + w, outlen - w, "\\x%02x", c);
    }
    if (n > SHOW_MAX && w + 4 < outlen) {
        memcpy(out + w, "...", 3);
        w += 3;
    }
    out[w] = '\0';
}

/* --- label syntax -------------------------------------------------------- */

static bool is_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* [A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])? */
static bool is_qualified_part(const char *s, size_t n)
{
    if (n == 0 || !is_alnum(s[0]) || !is_alnum(s[n - 1]))
        return false;
    for (size_t i = 1; i + 1 < n; i++) {
        if (!is_alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
            return false;
    }
    return true;
}

/* Lowercase RFC 1123 subdomain: dot-separated [a-z0-9]([-a-z0-9]*[a-z0-9])? */
static bool is_dns1123_subdomain(const char *s, size_t n)
{
    size_t start = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && s[i] != '.') {
            char c = s[i];
            if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'))
                return false;
            continue;
        }
        if (i == start || s[start] == '-' || s[i - 1] == '-')
            return false;
        start = i + 1;
    }
    return true;
}

static const char *label_key_error_n(const char *k, size_t n)
{
    const char *slash = memchr(k, '/', n);
    const char *name = k;
    size_t name_len = n;
    if (slash) {
        size_t plen = (size_t)(slash - k);
        name = slash + 1;
        name_len = n - plen - 1;
        if (memchr(name, '/', name_len))
            return "a qualified name must consist of alphanumeric characters, '-', '_' or '.', "
                   "and must start and end with an alphanumeric character, with an optional "
                   "DNS subdomain prefix and '/' (e.g. 'example.com/MyName')";
        if (plen == 0)
            return "prefix part must be non-empty";
        if (plen > 253)
            return "prefix part must be no more than 253 characters";
        if (!is_dns1123_subdomain(k, plen))
            return "prefix part a lowercase RFC 1123 subdomain must consist of lower case "
                   "alphanumeric characters, '-' or '.', and must start and end with an "
                   "alphanumeric character";
    }
    if (name_len == 0)
        return "name part must be non-empty";
    if (name_len > 63)
        return "name part must be no more than 63 characters";
    if (!is_qualified_part(name, name_len))
        return "name part must consist of alphanumeric characters, '-', '_' or '.', and must "
               "start and end with an alphanumeric character";
    return NULL;
}

static const char *label_value_error_n(const char *v, size_t n)
{
    if (n > 63)
        return "must be no more than 63 characters";
    if (n > 0 && !is_qualified_part(v, n))
        return "a valid label must be an empty string or consist of alphanumeric characters, "
               "'-', '_' or '.', and must start and end with an alphanumeric character";
    return NULL;
}

const char *corral_label_key_error(const char *key)
{
    if (!key)
        return "name part must be non-empty";
    return label_key_error_n(key, strlen(key));
}

const char *corral_label_value_error(const char *value)
{
    return value ? label_value_error_n(value, strlen(value)) : NULL;
}

/* strconv.ParseInt(s, 10, 64): optional sign, decimal digits, in range.
 * Written out rather than strtoll, which skips spaces and reports range
 * errors through errno. */
static bool parse_int64(const char *s, long long *out)
{
    const uint64_t lim = UINT64_C(1) << 63;
    bool neg = *s == '-';
    const char *d = s + (*s == '+' || *s == '-');
    uint64_t mag = 0;
    if (!*d)
        return false;
    for (; *d; d++) {
        if (*d < '0' || *d > '9' || mag > lim / 10)
            return false;
        mag = mag * 10 + (uint64_t)(*d - '0');
        if (mag > lim)
            return false;
    }
    if (!neg && mag == lim)
        return false;
    *out = mag == lim ? INT64_MIN : (neg ? -(long long)mag : (long long)mag);
    return true;
}

/* --- building the result ------------------------------------------------- */

static corral_sel_req_t *add_req(sel_parser_t *p, const char *key, size_t key_len,
                                 corral_sel_op_t op)
{
    corral_selector_t *out = p->out;
    if (out->n == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 4;
        out->reqs = corral_arena_grow(p->a, out->reqs, p->cap * sizeof(*out->reqs),
                                      cap * sizeof(*out->reqs));
        p->cap = cap;
    }
    corral_sel_req_t *r = &out->reqs[out->n++];
    r->key = corral_arena_strndup(p->a, key, key_len);
    r->op = op;
    r->values = NULL;
    r->nvalues = 0;
    return r;
}

static void set_single_value(sel_parser_t *p, corral_sel_req_t *r, const char *v, size_t n)
{
    r->values = corral_arena_alloc(p->a, sizeof(*r->values));
    r->values[0] = corral_arena_strndup(p->a, v, n);
    r->nvalues = 1;
}

/* Insert into a set kept sorted and free of duplicates (as sets.String). */
static void set_insert(sel_parser_t *p, corral_sel_req_t *r, size_t *cap, const char *v, size_t n)
{
    size_t at = 0;
    for (; at < r->nvalues; at++) {
        int c = strncmp(r->values[at], v, n);
        if (c == 0 && r->values[at][n] == '\0')
            return;
        if (c > 0 || (c == 0 && r->values[at][n] != '\0'))
            break;
    }
    if (r->nvalues == *cap) {
        size_t ncap = *cap ? 2 * *cap : 4;
        r->values = corral_arena_grow(p->a, r->values, *cap * sizeof(*r->values),
                                      ncap * sizeof(*r->values));
        *cap = ncap;
    }
    memmove(&r->values[at + 1], &r->values[at], (r->nvalues - at) * sizeof(*r->values));
    r->values[at] = corral_arena_strndup(p->a, v, n);
    r->nvalues++;
}

/* --- label selector lexer ------------------------------------------------ */

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static bool is_special(char c)
{
    return c == '=' || c == '!' || c == '(' || c == ')' || c == ',' || c == '>' || c == '<';
}

static void lex(sel_parser_t *p)
{
    while (p->pos < p->len && is_space(p->s[p->pos]))
        p->pos++;
    tok_t *t = &p->cur;
    t->pos = p->pos;
    t->len = 1;
    if (p->pos >= p->len) {
        t->kind = T_END;
        t->len = 0;
        return;
    }
    char c = p->s[p->pos];
    char next = '\0';
    if (p->pos + 1 < p->len)
        next = p->s[p->pos + 1];
    if (is_special(c)) {
        static const char single[] = "=!(),><";
        static const tok_kind_t kinds[] = {T_EQ, T_BANG, T_LPAREN, T_RPAREN, T_COMMA, T_GT, T_LT};
        t->kind = kinds[strchr(single, c) - single];
        if ((c == '!' || c == '=') && next == '=') {
            t->kind = c == '!' ? T_NEQ : T_EQEQ;
            t->len = 2;
        }
        p->pos += t->len;
        return;
    }
    while (p->pos < p->len && !is_special(p->s[p->pos]) && !is_space(p->s[p->pos]))
        p->pos++;
    t->len = p->pos - t->pos;
    t->kind = T_ID;
    if (t->len == 2 && memcmp(p->s + t->pos, "in", 2) == 0)
        t->kind = T_IN;
    else if (t->len == 5 && memcmp(p->s + t->pos, "notin", 5) == 0)
        t->kind = T_NOTIN;
}

/* Keys and values: "in" and "notin" are identifiers there, as in Kubernetes. */
static bool is_ident(const tok_t *t)
{
    return t->kind == T_ID || t->kind == T_IN || t->kind == T_NOTIN;
}

static int unexpected(sel_parser_t *p, const char *expected)
{
    char tok[SHOW_MAX * 4 + 8];
    if (p->cur.kind == T_END)
        return fail(p, "unexpected end of selector; expected %s", expected);
    show(p->s + p->cur.pos, p->cur.len, tok, sizeof(tok));
    return fail(p, "unexpected '%s' at column %zu; expected %s", tok, p->cur.pos + 1, expected);
}

/* --- label selector parser ----------------------------------------------- */

static int check_label_value(sel_parser_t *p, const char *key, const tok_t *t)
{
    const char *err = label_value_error_n(p->s + t->pos, t->len);
    if (!err)
        return 0;
    char v[SHOW_MAX * 4 + 8];
    show(p->s + t->pos, t->len, v, sizeof(v));
    return fail(p, "invalid value \"%s\" for label \"%s\" at column %zu: %s", v, key, t->pos + 1,
                err);
}

/* After = == != > < : one value, possibly empty ("a=,b" or "a="). */
static int parse_exact_value(sel_parser_t *p, corral_sel_req_t *r, const char *opname)
{
    if (p->cur.kind == T_END || p->cur.kind == T_COMMA) {
        set_single_value(p, r, "", 0);
    } else if (is_ident(&p->cur)) {
        int rc = check_label_value(p, r->key, &p->cur);
        if (rc < 0)
            return rc;
        set_single_value(p, r, p->s + p->cur.pos, p->cur.len);
        lex(p);
    } else {
        char exp[64];
        snprintf(exp, sizeof(exp), "a value after '%s'", opname);
        return unexpected(p, exp);
    }
    long long ignored;
    if ((r->op == CORRAL_SEL_GT || r->op == CORRAL_SEL_LT) && !parse_int64(r->values[0], &ignored))
        return fail(p, "value \"%s\" for '%s' on label \"%s\" must be an integer", r->values[0],
                    opname, r->key);
    return 0;
}

/* "(" values ")" after in/notin, with Kubernetes' reading of empty entries:
 * "(a,)" and "(,a)" hold "" as well as a. */
static int parse_value_set(sel_parser_t *p, corral_sel_req_t *r, const char *opname)
{
    size_t cap = 0;
    char exp[64];
    snprintf(exp, sizeof(exp), "'(' after '%s'", opname);
    if (p->cur.kind != T_LPAREN)
        return unexpected(p, exp);
    size_t open = p->cur.pos;
    lex(p);
    if (p->cur.kind == T_RPAREN)
        return fail(p,
                    "empty value set '()' at column %zu; '%s' needs at least one value, "
                    "as in %s %s (a,b)",
                    open + 1, opname, r->key, opname);
    for (;;) {
        tok_t t = p->cur;
        if (is_ident(&t)) {
            int rc = check_label_value(p, r->key, &t);
            if (rc < 0)
                return rc;
            set_insert(p, r, &cap, p->s + t.pos, t.len);
            lex(p);
            if (p->cur.kind == T_RPAREN)
                break;
            if (p->cur.kind != T_COMMA)
                return unexpected(p, "',' or ')' in the value set");
        } else if (t.kind == T_COMMA) {
            if (r->nvalues == 0)
                set_insert(p, r, &cap, "", 0);
            lex(p);
            if (p->cur.kind == T_RPAREN) {
                set_insert(p, r, &cap, "", 0);
                break;
            }
            if (p->cur.kind == T_COMMA) {
                set_insert(p, r, &cap, "", 0);
                lex(p);
            }
        } else {
            return unexpected(p, "a value or ',' in the value set");
        }
    }
    lex(p); /* the ')' */
    return 0;
}

static int parse_operator(sel_parser_t *p, corral_sel_op_t *op, const char **opname)
{
    static const struct {
        tok_kind_t kind;
        corral_sel_op_t op;
        const char *name;
    } ops[] = {
        {T_EQ, CORRAL_SEL_EQ, "="},           {T_EQEQ, CORRAL_SEL_EQ, "=="},
        {T_NEQ, CORRAL_SEL_NEQ, "!="},        {T_IN, CORRAL_SEL_IN, "in"},
        {T_NOTIN, CORRAL_SEL_NOTIN, "notin"}, {T_GT, CORRAL_SEL_GT, ">"},
        {T_LT, CORRAL_SEL_LT, "<"},
    };
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(ops); i++) {
        if (ops[i].kind == p->cur.kind) {
            *op = ops[i].op;
            *opname = ops[i].name;
            lex(p);
            return 0;
        }
    }
    return unexpected(p, "an operator (=, ==, !=, in, notin, >, <), ',' or end of selector "
                         "after the key");
}

static int parse_requirement(sel_parser_t *p)
{
    bool bang = false;
    if (p->cur.kind == T_BANG) {
        bang = true;
        lex(p);
    }
    if (!is_ident(&p->cur))
        return unexpected(p, bang ? "a label key after '!'" : "a label key or '!'");
    tok_t k = p->cur;
    const char *err = label_key_error_n(p->s + k.pos, k.len);
    if (err) {
        char key[SHOW_MAX * 4 + 8];
        show(p->s + k.pos, k.len, key, sizeof(key));
        return fail(p, "invalid label key \"%s\" at column %zu: %s", key, k.pos + 1, err);
    }
    lex(p);
    if (bang || p->cur.kind == T_END || p->cur.kind == T_COMMA) {
        add_req(p, p->s + k.pos, k.len, bang ? CORRAL_SEL_NOTEXISTS : CORRAL_SEL_EXISTS);
        return 0;
    }
    corral_sel_op_t op = CORRAL_SEL_EXISTS;
    const char *opname = "";
    int rc = parse_operator(p, &op, &opname);
    if (rc < 0)
        return rc;
    corral_sel_req_t *r = add_req(p, p->s + k.pos, k.len, op);
    if (op == CORRAL_SEL_IN || op == CORRAL_SEL_NOTIN)
        return parse_value_set(p, r, opname);
    return parse_exact_value(p, r, opname);
}

static int start_parse(sel_parser_t *p, corral_arena_t *a, const char *s, size_t len,
                       corral_selector_t *out, char *why, size_t why_len)
{
    memset(p, 0, sizeof(*p));
    p->a = a;
    p->s = s;
    p->len = len;
    p->out = out;
    p->why = why;
    p->why_len = why_len;
    if (why && why_len)
        why[0] = '\0';
    if (!out || !a || (!s && len > 0))
        return fail(p, "no selector given");
    out->reqs = NULL;
    out->n = 0;
    if (len > CORRAL_SEL_MAX_LEN) {
        fail(p, "selector is %zu bytes long; at most %d are allowed", len, CORRAL_SEL_MAX_LEN);
        return CORRAL_ETOOBIG;
    }
    return 0;
}

int corral_labelsel_parse(corral_arena_t *a, const char *s, size_t len, corral_selector_t *out,
                          char *why, size_t why_len)
{
    sel_parser_t p;
    int rc = start_parse(&p, a, s, len, out, why, why_len);
    if (rc < 0)
        return rc;
    lex(&p);
    if (p.cur.kind == T_END)
        return 0;
    for (;;) {
        rc = parse_requirement(&p);
        if (rc < 0)
            break;
        if (p.cur.kind == T_END)
            return 0;
        if (p.cur.kind != T_COMMA) {
            rc = unexpected(&p, "',' or end of selector");
            break;
        }
        lex(&p);
        if (!is_ident(&p.cur) && p.cur.kind != T_BANG) {
            rc = unexpected(&p, "a label key or '!' after ','");
            break;
        }
    }
    out->reqs = NULL;
    out->n = 0;
    return rc;
}

/* --- field selectors ----------------------------------------------------- */

/* Dot-separated names of [A-Za-z0-9_-], as metadata.name or spec.nodeName. */
static bool is_field_path(const char *s, size_t n)
{
    size_t start = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && s[i] != '.') {
            if (!is_alnum(s[i]) && s[i] != '_' && s[i] != '-')
                return false;
            continue;
        }
        if (i == start)
            return false;
        start = i + 1;
    }
    return true;
}

static void trim(const char *s, size_t *b, size_t *e)
{
    while (*b < *e && is_space(s[*b]))
        (*b)++;
    while (*e > *b && is_space(s[*e - 1]))
        (*e)--;
}

/* Kubernetes' UnescapeValue over s[b..e), into the arena. */
static int unescape_value(sel_parser_t *p, size_t b, size_t e, const char **out)
{
    char *v = corral_arena_alloc(p->a, e - b + 1);
    size_t w = 0;
    for (size_t i = b; i < e; i++) {
        char c = p->s[i];
        if (c == '\\') {
            if (i + 1 == e)
                return fail(p,
                            "dangling '\\' at column %zu at the end of a value; write '\\\\' "
                            "for a literal backslash",
                            i + 1);
            char n = p->s[++i];
            if (n != '\\' && n != ',' && n != '=') {
                char esc[8];
                show(p->s + i, 1, esc, sizeof(esc));
                return fail(p,
                            "invalid escape '\\%s' at column %zu; only '\\\\', '\\,' and "
                            "'\\=' are allowed",
                            esc, i);
            }
            c = n;
        } else if (c == '=' || c == ',') {
            return fail(p,
                        "unescaped '%c' at column %zu in a value; write '\\%c' for a literal "
                        "'%c'",
                        c, i + 1, c, c);
        } else if (c == '\0') {
            return fail(p, "NUL byte at column %zu in a value", i + 1);
        }
        v[w++] = c;
    }
    v[w] = '\0';
    *out = v;
    return 0;
}

/* One "path op value" term in s[b..e), already known to be non-blank. */
static int parse_field_term(sel_parser_t *p, size_t b, size_t e)
{
    size_t i = b, oplen = 0;
    corral_sel_op_t op = CORRAL_SEL_EQ;
    for (; i < e; i++) {
        if (p->s[i] == '!' && i + 1 < e && p->s[i + 1] == '=') {
            op = CORRAL_SEL_NEQ;
            oplen = 2;
        } else if (p->s[i] == '=') {
            oplen = i + 1 < e && p->s[i + 1] == '=' ? 2 : 1;
        }
        if (oplen)
            break;
    }
    char shown[SHOW_MAX * 4 + 8];
    show(p->s + b, e - b, shown, sizeof(shown));
    if (!oplen)
        return fail(p,
                    "term \"%s\" at column %zu has no operator; write field=value, "
                    "field==value or field!=value",
                    shown, b + 1);
    size_t kb = b, ke = i;
    trim(p->s, &kb, &ke);
    if (kb == ke)
        return fail(p, "missing field path before '%.*s' at column %zu", (int)oplen, p->s + i,
                    i + 1);
    if (!is_field_path(p->s + kb, ke - kb)) {
        show(p->s + kb, ke - kb, shown, sizeof(shown));
        return fail(p,
                    "invalid field path \"%s\" at column %zu; use dot-separated names such as "
                    "metadata.name or spec.nodeName",
                    shown, kb + 1);
    }
    size_t vb = i + oplen, ve = e;
    trim(p->s, &vb, &ve);
    const char *value = NULL;
    int rc = unescape_value(p, vb, ve, &value);
    if (rc < 0)
        return rc;
    corral_sel_req_t *r = add_req(p, p->s + kb, ke - kb, op);
    r->values = corral_arena_alloc(p->a, sizeof(*r->values));
    r->values[0] = value;
    r->nvalues = 1;
    return 0;
}

int corral_fieldsel_parse(corral_arena_t *a, const char *s, size_t len, corral_selector_t *out,
                          char *why, size_t why_len)
{
    sel_parser_t p;
    int rc = start_parse(&p, a, s, len, out, why, why_len);
    if (rc < 0)
        return rc;
    size_t start = 0;
    bool in_slash = false;
    for (size_t i = 0; i <= len && rc == 0; i++) {
        /* Split at commas not escaped by a backslash, as splitTerms does. */
        if (i < len) {
            bool escaped = in_slash;
            in_slash = !escaped && s[i] == '\\';
            if (escaped || s[i] != ',')
                continue;
        }
        size_t b = start, e = i;
        start = i + 1;
        trim(s, &b, &e);
        if (b < e)
            rc = parse_field_term(&p, b, e);
    }
    if (rc < 0) {
        out->reqs = NULL;
        out->n = 0;
    }
    return rc;
}

/* --- matching ------------------------------------------------------------ */

static bool has_value(const corral_sel_req_t *r, const char *v)
{
    for (size_t i = 0; i < r->nvalues; i++) {
        if (r->values[i] && strcmp(r->values[i], v) == 0)
            return true;
    }
    return false;
}

static bool req_matches(const corral_sel_req_t *r, const char *v)
{
    long long have, want;
    switch (r->op) {
    case CORRAL_SEL_EQ:
    case CORRAL_SEL_IN:
        return v && has_value(r, v);
    case CORRAL_SEL_NEQ:
    case CORRAL_SEL_NOTIN:
        return !v || !has_value(r, v);
    case CORRAL_SEL_EXISTS:
        return v != NULL;
    case CORRAL_SEL_NOTEXISTS:
        return v == NULL;
    case CORRAL_SEL_GT:
    case CORRAL_SEL_LT:
        if (!v || r->nvalues != 1 || !parse_int64(v, &have) || !parse_int64(r->values[0], &want))
            return false;
        return r->op == CORRAL_SEL_GT ? have > want : have < want;
    }
    return false;
}

bool corral_sel_matches(const corral_selector_t *sel, corral_sel_lookup_fn lookup, void *ctx)
{
    if (!sel)
        return true;
    for (size_t i = 0; i < sel->n; i++) {
        const corral_sel_req_t *r = &sel->reqs[i];
        if (!req_matches(r, lookup(r->key, ctx)))
            return false;
    }
    return true;
}

static const char *strmap_lookup(const char *key, void *ctx)
{
    const corral_strmap_t *m = ctx;
    return m ? corral_strmap_get(m, key) : NULL;
}

bool corral_sel_matches_labels(const corral_selector_t *sel, const corral_strmap_t *labels)
{
    return corral_sel_matches(sel, strmap_lookup, (void *)labels);
}
