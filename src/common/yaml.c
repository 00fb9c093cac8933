/*
 * YAML/JSON loader: drives libfyaml's event parser and builds corral_val_t
 * trees with an explicit stack (no recursion, so nesting depth costs no C
 * stack). Scalars are typed by the YAML 1.2 core schema. Syntax errors come
 * back from libfyaml's collected diagnostics and are rewritten with a hint when
 * the line shows a typo people often make ("key:value" without a space).
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <libfyaml.h>

#include "corral/hint.h"
#include "corral/hmap.h"
#include "corral/yaml.h"

typedef struct anchor {
    const char *name;
    corral_val_t *val;
    size_t size;   /* nodes in the anchored subtree, for alias accounting */
    size_t bytes;  /* and its scalar bytes (plus 2 a node) */
    bool complete; /* the anchored collection has ended */
} anchor_t;

typedef struct frame {
    corral_val_t *coll;    /* SEQ or MAP being filled */
    corral_hmap_t *keys;   /* MAP with many keys: their index, for duplicates */
    corral_val_t *key;     /* MAP: key whose value is pending, else NULL */
    size_t nodes_at_start; /* node counter when the collection began */
    size_t bytes_at_start; /* byte counter then */
    long anchor;           /* index into anchors, or -1 */
} frame_t;

typedef struct loader {
    corral_arena_t *a;
    corral_diag_t *diag;
    const char *file;
    const char *text;
    size_t len;
    frame_t stack[CORRAL_YAML_MAX_DEPTH + 1];
    size_t depth;
    corral_val_t *root;
    size_t nodes;
    size_t bytes;       /* scalar bytes + 2 a node, aliases counted expanded */
    size_t alias_bytes; /* the part of bytes that aliases add */
    size_t max_alias_bytes;
    anchor_t *anchors;
    size_t nanchors, anchors_cap;
    bool failed;
} loader_t;

/* --- text checks --------------------------------------------------------- */

static size_t utf8_seq_len(const unsigned char *p, size_t left)
{
    unsigned char c = p[0];
    size_t n;
    unsigned int cp;
    if (c < 0x80)
        return 1;
    if ((c & 0xE0) == 0xC0)
        n = 2, cp = c & 0x1F;
    else if ((c & 0xF0) == 0xE0)
        n = 3, cp = c & 0x0F;
    else if ((c & 0xF8) == 0xF0)
        n = 4, cp = c & 0x07;
    else
        return 0;
    if (n > left)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (p[i] & 0x3F);
    }
    /* Reject overlong forms, surrogates and values past U+10FFFF. */
    if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
        (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
        return 0;
    return n;
}

int corral_text_check(const char *text, size_t len, int *line, int *col)
{
    const unsigned char *p = (const unsigned char *)text;
    int ln = 1, cl = 1;
    size_t i = 0;
    while (i < len) {
        size_t n = p[i] == 0 ? 0 : utf8_seq_len(p + i, len - i);
        if (n == 0) {
            *line = ln;
            *col = cl;
            return CORRAL_EPARSE;
        }
        if (p[i] == '\n')
            ln++, cl = 1;
        else
            cl++;
        i += n;
    }
    return 0;
}

/* --- scalar typing (YAML 1.2 core schema) -------------------------------- */

static bool match_any(const char *s, const char *const *words, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (strcmp(s, words[i]) == 0)
            return true;
    }
    return false;
}

static bool is_core_int(const char *s, int *base, const char **digits)
{
    const char *p = s;
    if (p[0] == '0' && p[1] == 'o') {
        *base = 8, *digits = p + 2;
        p += 2;
        if (!*p)
            return false;
        for (; *p; p++) {
            if (*p < '0' || *p > '7')
                return false;
        }
        return true;
    }
    if (p[0] == '0' && p[1] == 'x') {
        *base = 16, *digits = p + 2;
        p += 2;
        if (!*p)
            return false;
        for (; *p; p++) {
            if (!isxdigit((unsigned char)*p))
                return false;
        }
        return true;
    }
    *base = 10, *digits = s;
    if (*p == '-' || *p == '+')
        p++;
    if (!*p)
        return false;
    for (; *p; p++) {
        if (!isdigit((unsigned char)*p))
            return false;
    }
    return true;
}

static bool is_core_float(const char *s)
{
    const char *p = s;
    if (*p == '-' || *p == '+')
        p++;
    bool digits = false;
    while (isdigit((unsigned char)*p))
        p++, digits = true;
    if (*p == '.') {
        p++;
        while (isdigit((unsigned char)*p))
            p++, digits = true;
    }
    if (!digits)
        return false;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '-' || *p == '+')
            p++;
        if (!isdigit((unsigned char)*p))
            return false;
        while (isdigit((unsigned char)*p))
            p++;
    }
    return *p == '\0';
}

/* Type a plain scalar: null, bool, int or float, else it stays a string. */
static void resolve_plain(corral_val_t *v)
{
    static const char *const nulls[] = {"", "~", "null", "Null", "NULL"};
    static const char *const trues[] = {"true", "True", "TRUE"};
    static const char *const falses[] = {"false", "False", "FALSE"};
    static const char *const infs[] = {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"};
    static const char *const ninfs[] = {"-.inf", "-.Inf", "-.INF"};
    static const char *const nans[] = {".nan", ".NaN", ".NAN"};
    const char *s = v->s;
    int base;
    const char *digits;

    if (match_any(s, nulls, CORRAL_ARRAY_LEN(nulls))) {
        v->kind = CORRAL_VAL_NULL;
    } else if (match_any(s, trues, CORRAL_ARRAY_LEN(trues))) {
        v->kind = CORRAL_VAL_BOOL, v->u.b = true;
    } else if (match_any(s, falses, CORRAL_ARRAY_LEN(falses))) {
        v->kind = CORRAL_VAL_BOOL, v->u.b = false;
    } else if (is_core_int(s, &base, &digits)) {
        errno = 0;
        long long i = strtoll(digits, NULL, base);
        if (errno == ERANGE) {
            /* Too big for int64: keep it as a number, the text stays exact. */
            v->kind = CORRAL_VAL_FLOAT, v->u.f = strtod(s, NULL);
        } else {
            v->kind = CORRAL_VAL_INT, v->u.i = i;
        }
    } else if (is_core_float(s)) {
        v->kind = CORRAL_VAL_FLOAT, v->u.f = strtod(s, NULL);
    } else if (match_any(s, infs, CORRAL_ARRAY_LEN(infs))) {
        v->kind = CORRAL_VAL_FLOAT, v->u.f = INFINITY;
    } else if (match_any(s, ninfs, CORRAL_ARRAY_LEN(ninfs))) {
        v->kind = CORRAL_VAL_FLOAT, v->u.f = -INFINITY;
    } else if (match_any(s, nans, CORRAL_ARRAY_LEN(nans))) {
        v->kind = CORRAL_VAL_FLOAT, v->u.f = NAN;
    }
}

/* --- errors -------------------------------------------------------------- */

static void loader_error(loader_t *L, int line, int col, const char *path, const char *fmt, ...)
    CORRAL_PRINTF(5, 6);

static void loader_error(loader_t *L, int line, int col, const char *path, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    corral_diag_vadd(L->diag, CORRAL_SEV_ERROR, L->file, line, col, path, fmt, ap);
    va_end(ap);
    L->failed = true;
}

/* The field path of the value being parsed, from the open collections. */
static void stack_path(const loader_t *L, corral_buf_t *out)
{
    for (size_t i = 0; i < L->depth; i++) {
        const frame_t *f = &L->stack[i];
        if (f->coll->kind == CORRAL_VAL_MAP && f->key) {
            if (out->len)
                corral_buf_putc(out, '.');
            corral_buf_puts(out, f->key->s);
        } else if (f->coll->kind == CORRAL_VAL_SEQ && i + 1 < L->depth) {
            corral_buf_printf(out, "[%zu]", f->coll->n ? f->coll->n - 1 : 0);
        }
    }
}

/* Find [start,end) of 1-based line ln in the text; false past the end. */
static bool text_line(const loader_t *L, int ln, const char **start, size_t *len)
{
    const char *p = L->text, *end = L->text + L->len;
    for (int i = 1; i < ln; i++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl)
            return false;
        p = nl + 1;
    }
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    *start = p;
    *len = (size_t)((nl ? nl : end) - p);
    return true;
}

/*
 * Look at the error line and a few lines before it for "key:value" with no
 * space after the colon: YAML reads that as one plain scalar, and the parser
 * usually only notices a line or two later. Report at the typo instead.
 */
static bool hint_colon_typo(loader_t *L, int err_line)
{
    for (int ln = err_line; ln >= 1 && ln >= err_line - 5; ln--) {
        const char *s;
        size_t n, klen;
        if (!text_line(L, ln, &s, &n))
            continue;
        size_t ind = 0;
        while (ind < n && s[ind] == ' ')
            ind++;
        if (ind + 1 < n && s[ind] == '-' && s[ind + 1] == ' ')
            ind += 2;
        while (n > ind && (s[n - 1] == ' ' || s[n - 1] == '\r'))
            n--;
        if (!corral_hint_colon_nospace(s + ind, n - ind, &klen))
            continue;
        corral_buf_t path;
        corral_buf_init(&path);
        stack_path(L, &path);
        if (path.len)
            corral_buf_putc(&path, '.');
        corral_buf_append(&path, s + ind, klen);
        int vlen = (int)(n - ind - klen - 1);
        loader_error(L, ln, (int)ind + 1, corral_buf_str(&path),
                     "missing space after ':' in \"%.*s\"; did you mean `%.*s: %.*s`?",
                     (int)(n - ind), s + ind, (int)klen, s + ind, vlen, s + ind + klen + 1);
        corral_buf_fini(&path);
        return true;
    }
    return false;
}

/* libfyaml reports a tab in indentation where the next token starts (the
 * line after it, often); the tab itself is on the nearest line at or before
 * that whose leading blanks hold one. */
static void find_tab_indent(const loader_t *L, int *line, int *col)
{
    for (int ln = *line; ln >= 1 && ln >= *line - 5; ln--) {
        const char *s;
        size_t n;
        if (!text_line(L, ln, &s, &n))
            continue;
        for (size_t i = 0; i < n && (s[i] == ' ' || s[i] == '\t'); i++) {
            if (s[i] == '\t') {
                *line = ln;
                *col = (int)i + 1;
                return;
            }
        }
    }
}

static void report_parser_errors(loader_t *L, struct fy_diag *fd)
{
    void *it = NULL;
    struct fy_diag_error *e;
    bool any = false;
    while ((e = fy_diag_errors_iterate(fd, &it)) != NULL) {
        if (e->type != FYET_ERROR)
            continue;
        int line = e->line + 1, col = e->column + 1;
        any = true;
        if (e->msg && strstr(e->msg, "tab character"))
            find_tab_indent(L, &line, &col);
        if (hint_colon_typo(L, line))
            break;
        corral_buf_t path;
        corral_buf_init(&path);
        stack_path(L, &path);
        loader_error(L, line, col, corral_buf_str(&path), "YAML syntax error: %s", e->msg);
        corral_buf_fini(&path);
        break; /* later parser errors are consequences of the first */
    }
    if (!any)
        loader_error(L, 0, 0, NULL, "YAML syntax error");
}

/* --- tree building ------------------------------------------------------- */

static void mark_pos(corral_val_t *v, struct fy_event *fye)
{
    const struct fy_mark *m = fy_event_start_mark(fye);
    if (m) {
        v->line = m->line + 1;
        v->col = m->column + 1;
    }
}

static bool count_nodes(loader_t *L, size_t n, const corral_val_t *at)
{
    L->nodes += n;
    if (L->nodes > CORRAL_YAML_MAX_NODES) {
        loader_error(L, at ? at->line : 0, at ? at->col : 0, NULL,
                     "document has more than %zu values (counting alias expansion); refusing "
                     "to load it",
                     (size_t)CORRAL_YAML_MAX_NODES);
        return false;
    }
    return true;
}

/* Expansion budget of aliases, checked before an alias is attached: what
 * all aliases add (counted as if expanded) may not pass max_alias_bytes. */
static bool count_alias_bytes(loader_t *L, const anchor_t *an, int line, int col)
{
    if (an->bytes > L->max_alias_bytes - L->alias_bytes) {
        loader_error(L, line, col, NULL,
                     "aliases would expand the document by more than %zu bytes (alias *%s); "
                     "refusing to load it",
                     L->max_alias_bytes, an->name);
        return false;
    }
    L->alias_bytes += an->bytes;
    L->bytes += an->bytes;
    return true;
}

static long add_anchor(loader_t *L, struct fy_token *tok, corral_val_t *v)
{
    if (!tok)
        return -1;
    size_t n;
    const char *name = fy_token_get_text(tok, &n);
    if (!name)
        return -1;
    corral_grow((void **)&L->anchors, &L->anchors_cap, L->nanchors + 1, sizeof(*L->anchors));
    anchor_t *an = &L->anchors[L->nanchors];
    an->name = corral_arena_strndup(L->a, name, n);
    an->val = v;
    an->size = 1;
    an->bytes = v->len + 2;
    an->complete = v->kind != CORRAL_VAL_SEQ && v->kind != CORRAL_VAL_MAP;
    return (long)L->nanchors++;
}

static const anchor_t *find_anchor(const loader_t *L, const char *name, size_t n)
{
    /* The latest definition wins, as YAML allows redefining an anchor. */
    for (size_t i = L->nanchors; i-- > 0;) {
        if (strlen(L->anchors[i].name) == n && memcmp(L->anchors[i].name, name, n) == 0)
            return &L->anchors[i];
    }
    return NULL;
}

/* An earlier key equal to k in the mapping being built, or NULL. Small maps
 * are scanned; from 16 keys on, an index keeps large ones (a ConfigMap with
 * 60,000 keys) linear instead of quadratic. */
#define KEY_INDEX_FROM 16

static const corral_val_t *find_key(frame_t *f, const corral_val_t *k)
{
    const corral_val_t *m = f->coll;
    if (m->n < KEY_INDEX_FROM) {
        for (size_t i = 0; i < m->n; i++) {
            const corral_val_t *x = m->pairs[i].key;
            if (x->len == k->len && memcmp(x->s, k->s, k->len) == 0)
                return x;
        }
        return NULL;
    }
    if (!f->keys) {
        f->keys = corral_malloc(sizeof(*f->keys));
        corral_hmap_init(f->keys);
        for (size_t i = 0; i < m->n; i++)
            corral_hmap_put(f->keys, m->pairs[i].key->s, (uint32_t)i);
    }
    uint32_t i;
    if (strlen(k->s) == k->len && corral_hmap_get(f->keys, k->s, &i))
        return m->pairs[i].key;
    return NULL;
}

static void frame_keys_free(frame_t *f)
{
    if (f->keys) {
        corral_hmap_fini(f->keys);
        corral_free(f->keys);
        f->keys = NULL;
    }
}

/* Attach a finished or just-started value to the open collection (or root). */
static bool attach(loader_t *L, corral_val_t *v)
{
    if (L->depth == 0) {
        L->root = v;
        return true;
    }
    frame_t *f = &L->stack[L->depth - 1];
    if (f->coll->kind == CORRAL_VAL_SEQ) {
        corral_val_push(L->a, f->coll, v);
        return true;
    }
    if (!f->key) {
        if (v->kind == CORRAL_VAL_SEQ || v->kind == CORRAL_VAL_MAP || v->kind == CORRAL_VAL_NULL) {
            corral_buf_t path;
            corral_buf_init(&path);
            stack_path(L, &path);
            loader_error(L, v->line, v->col, corral_buf_str(&path),
                         v->kind == CORRAL_VAL_NULL ? "empty mapping key"
                                                    : "mapping keys must be strings, not a %s",
                         corral_val_kind_name(v->kind));
            corral_buf_fini(&path);
            return false;
        }
        /* Kubernetes keys are strings: 1 or true as a key means "1"/"true". */
        v->kind = CORRAL_VAL_STR;
        const corral_val_t *dup = find_key(f, v);
        if (dup) {
            corral_buf_t path;
            corral_buf_init(&path);
            stack_path(L, &path);
            loader_error(L, v->line, v->col, corral_buf_str(&path),
                         "duplicate key \"%s\" (first at line %d)", v->s, dup->line);
            corral_buf_fini(&path);
            return false;
        }
        f->key = v;
        return true;
    }
    corral_val_t *m = f->coll;
    if (m->n == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 4;
        m->pairs =
            corral_arena_grow(L->a, m->pairs, m->cap * sizeof(*m->pairs), cap * sizeof(*m->pairs));
        m->cap = cap;
    }
    m->pairs[m->n].key = f->key;
    m->pairs[m->n].val = v;
    if (f->keys && strlen(f->key->s) == f->key->len)
        corral_hmap_put(f->keys, f->key->s, (uint32_t)m->n);
    m->n++;
    /* Keep the key while a collection value is open, for error paths. */
    if (v->kind != CORRAL_VAL_SEQ && v->kind != CORRAL_VAL_MAP)
        f->key = NULL;
    return true;
}

static bool apply_tag(loader_t *L, corral_val_t *v, struct fy_token *tag)
{
    if (!tag)
        return true;
    size_t n;
    const char *t = fy_token_get_text(tag, &n);
    static const char core[] = "tag:yaml.org,2002:";
    if (!t || n == 1) /* "!" : non-specific tag, a string */
        return true;
    if (n > sizeof(core) - 1 && memcmp(t, core, sizeof(core) - 1) == 0) {
        const char *k = t + sizeof(core) - 1;
        size_t kn = n - (sizeof(core) - 1);
        if (kn == 3 && memcmp(k, "str", 3) == 0) {
            if (v->s)
                v->kind = CORRAL_VAL_STR, v->quoted = true;
            return true;
        }
        if ((kn == 3 && memcmp(k, "int", 3) == 0) || (kn == 5 && memcmp(k, "float", 5) == 0) ||
            (kn == 4 && memcmp(k, "bool", 4) == 0) || (kn == 4 && memcmp(k, "null", 4) == 0) ||
            (kn == 3 && memcmp(k, "map", 3) == 0) || (kn == 3 && memcmp(k, "seq", 3) == 0))
            return true;
    }
    loader_error(L, v->line, v->col, NULL, "unsupported YAML tag \"%.*s\"", (int)n, t);
    return false;
}

/* Append one line of single-quoted content with '' unescaped. */
static size_t sq_append(char *out, size_t o, const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        out[o++] = p[i];
        if (p[i] == '\'' && i + 1 < n && p[i + 1] == '\'')
            i++;
    }
    return o;
}

/*
 * A single-quoted scalar, unescaped and line-folded from the source text (''
 * is '; a line break between lines is a space, each empty line a newline, and
 * white space around breaks is dropped, as YAML 1.2 folds flow scalars). Done
 * here rather than by fy_token_get_text because libfyaml 0.7.12, given a run
 * of many '' escapes, both leaks a buffer and returns the wrong text (both
 * reproduced outside Corral; a differential test over 1,200 random scalars
 * without such runs agrees with libfyaml exactly). Returns false when the
 * source is not as expected, and libfyaml's text is used.
 */
static bool single_quoted_text(loader_t *L, struct fy_event *fye, corral_val_t *v)
{
    /* The token's marks span the content, without the quotes. */
    const struct fy_mark *s = fy_event_start_mark(fye), *e = fy_event_end_mark(fye);
    if (!s || !e || s->input_pos < 1 || e->input_pos >= L->len || e->input_pos < s->input_pos)
        return false;
    const char *raw = L->text + s->input_pos, *end = L->text + e->input_pos;
    if (raw[-1] != '\'' || *end != '\'')
        return false;
    char *out = corral_arena_alloc(L->a, (size_t)(end - raw) + 1);
    size_t o = 0, breaks = 0;
    bool first = true;
    for (const char *p = raw; p <= end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *stop = nl ? nl : end;
        const char *b = p, *t = stop;
        if (!first)
            while (b < t && (*b == ' ' || *b == '\t'))
                b++;
        if (nl)
            while (t > b && (t[-1] == ' ' || t[-1] == '\t' || t[-1] == '\r'))
                t--;
        if (!first && b == t && nl) {
            breaks++; /* an empty line inside the scalar */
        } else {
            if (!first) {
                if (breaks == 0)
                    out[o++] = ' ';
                for (; breaks > 0; breaks--)
                    out[o++] = '\n';
            }
            o = sq_append(out, o, b, (size_t)(t - b));
        }
        first = false;
        if (!nl)
            break;
        p = nl + 1;
    }
    out[o] = '\0';
    v->s = out;
    v->len = o;
    return true;
}

static bool on_scalar(loader_t *L, struct fy_event *fye)
{
    struct fy_token *tok = fye->scalar.value;
    enum fy_scalar_style st = tok ? fy_token_scalar_style(tok) : FYSS_PLAIN;
    corral_val_t *v = corral_val_new(L->a, CORRAL_VAL_STR);
    mark_pos(v, fye);
    if (st != FYSS_SINGLE_QUOTED || !single_quoted_text(L, fye, v)) {
        size_t n = 0;
        const char *text = tok ? fy_token_get_text(tok, &n) : "";
        if (!text)
            text = "", n = 0;
        v->s = corral_arena_strndup(L->a, text, n);
        v->len = n;
    }
    size_t n = v->len;
    v->quoted = st != FYSS_PLAIN;
    if (!v->quoted && fye->scalar.tag == NULL && strlen(v->s) == n)
        resolve_plain(v);
    if (!apply_tag(L, v, fye->scalar.tag) || !count_nodes(L, 1, v))
        return false;
    L->bytes += v->len + 2;
    add_anchor(L, fye->scalar.anchor, v);
    return attach(L, v);
}

static bool on_alias(loader_t *L, struct fy_event *fye)
{
    size_t n;
    const char *name = fy_token_get_text(fye->alias.anchor, &n);
    const anchor_t *an = name ? find_anchor(L, name, n) : NULL;
    const struct fy_mark *m = fy_event_start_mark(fye);
    int line = m ? m->line + 1 : 0, col = m ? m->column + 1 : 0;
    if (!an) {
        loader_error(L, line, col, NULL, "unknown alias *%.*s", (int)n, name ? name : "");
        return false;
    }
    if (!an->complete) {
        loader_error(L, line, col, NULL, "alias *%s refers to its own enclosing node", an->name);
        return false;
    }
    /* Aliases share the anchored subtree; the budgets count it expanded. */
    if (!count_nodes(L, an->size, an->val) || !count_alias_bytes(L, an, line, col))
        return false;
    return attach(L, an->val);
}

static bool on_start(loader_t *L, struct fy_event *fye, corral_val_kind_t kind)
{
    corral_val_t *v = corral_val_new(L->a, kind);
    mark_pos(v, fye);
    struct fy_token *tag, *anc;
    if (kind == CORRAL_VAL_MAP)
        tag = fye->mapping_start.tag, anc = fye->mapping_start.anchor;
    else
        tag = fye->sequence_start.tag, anc = fye->sequence_start.anchor;
    if (!apply_tag(L, v, tag) || !count_nodes(L, 1, v))
        return false;
    if (L->depth >= CORRAL_YAML_MAX_DEPTH) {
        loader_error(L, v->line, v->col, NULL,
                     "nesting is deeper than %d levels; Kubernetes objects never need that much",
                     CORRAL_YAML_MAX_DEPTH);
        return false;
    }
    if (!attach(L, v))
        return false;
    frame_t *f = &L->stack[L->depth++];
    f->coll = v;
    f->key = NULL;
    f->keys = NULL;
    f->nodes_at_start = L->nodes;
    L->bytes += 2;
    f->bytes_at_start = L->bytes;
    f->anchor = add_anchor(L, anc, v);
    return true;
}

static void on_end(loader_t *L)
{
    if (L->depth == 0)
        return; /* libfyaml never ends what it did not start; be safe anyway */
    frame_t *f = &L->stack[--L->depth];
    frame_keys_free(f);
    if (f->coll->kind == CORRAL_VAL_MAP)
        corral_val_index(L->a, f->coll); /* big maps: O(1) lookups from here on */
    if (f->anchor >= 0) {
        L->anchors[f->anchor].size = L->nodes - f->nodes_at_start + 1;
        L->anchors[f->anchor].bytes = L->bytes - f->bytes_at_start + 2;
        L->anchors[f->anchor].complete = true;
    }
    if (L->depth > 0) {
        frame_t *p = &L->stack[L->depth - 1];
        if (p->coll->kind == CORRAL_VAL_MAP)
            p->key = NULL;
    }
}

static bool on_event(loader_t *L, struct fy_event *fye)
{
    switch (fye->type) {
    case FYET_SCALAR:
        return on_scalar(L, fye);
    case FYET_ALIAS:
        return on_alias(L, fye);
    case FYET_MAPPING_START:
        return on_start(L, fye, CORRAL_VAL_MAP);
    case FYET_SEQUENCE_START:
        return on_start(L, fye, CORRAL_VAL_SEQ);
    case FYET_MAPPING_END:
    case FYET_SEQUENCE_END:
        on_end(L);
        return true;
    default:
        return true;
    }
}

static void push_doc(loader_t *L, corral_doc_t **docs, size_t *n, size_t *cap, int line)
{
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 4;
        *docs = corral_arena_grow(L->a, *docs, *cap * sizeof(**docs), c * sizeof(**docs));
        *cap = c;
    }
    /* "---" with no content holds an empty scalar: treat it as no document. */
    bool empty = L->root && L->root->kind == CORRAL_VAL_NULL && L->root->len == 0;
    (*docs)[*n].root = empty ? NULL : L->root;
    (*docs)[*n].line = line;
    (*n)++;
}

static int parse_stream(loader_t *L, struct fy_parser *fyp, struct fy_diag *fd, corral_doc_t **docs,
                        size_t *ndocs)
{
    size_t cap = 0;
    int doc_line = 1;
    struct fy_event *fye;
    while (!L->failed && (fye = fy_parser_parse(fyp)) != NULL) {
        if (fye->type == FYET_DOCUMENT_START) {
            const struct fy_mark *m = fy_event_start_mark(fye);
            doc_line = m ? m->line + 1 : 1;
            L->root = NULL;
            L->depth = 0;
            L->nanchors = 0;
        } else if (fye->type == FYET_DOCUMENT_END) {
            push_doc(L, docs, ndocs, &cap, doc_line);
        } else if (!on_event(L, fye)) {
            fy_parser_event_free(fyp, fye);
            break;
        }
        fy_parser_event_free(fyp, fye);
    }
    if (!L->failed && fy_parser_get_stream_error(fyp))
        report_parser_errors(L, fd);
    return L->failed ? CORRAL_EPARSE : 0;
}

int corral_yaml_parse(corral_arena_t *a, const char *text, size_t len, const char *file,
                      const corral_yaml_opts_t *opts, corral_diag_t *diag, corral_doc_t **docs,
                      size_t *ndocs)
{
    *docs = NULL;
    *ndocs = 0;
    if (len > CORRAL_YAML_MAX_BYTES) {
        corral_diag_add(diag, CORRAL_SEV_ERROR, file, 0, 0, NULL,
                        "input is %zu bytes; Corral reads at most %zu MiB per file", len,
                        CORRAL_YAML_MAX_BYTES >> 20);
        return CORRAL_ETOOBIG;
    }
    int line, col;
    if (corral_text_check(text, len, &line, &col) != 0) {
        corral_diag_add(diag, CORRAL_SEV_ERROR, file, line, col, NULL,
                        "not text: NUL byte or invalid UTF-8 (is this a binary file?)");
        return CORRAL_EPARSE;
    }

    struct fy_diag_cfg dcfg;
    fy_diag_cfg_default(&dcfg);
    dcfg.fp = NULL;
    struct fy_diag *fd = fy_diag_create(&dcfg);
    if (!fd)
        abort();
    fy_diag_set_collect_errors(fd, true);
    struct fy_parse_cfg cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.flags = FYPCF_QUIET | FYPCF_DEFAULT_VERSION_1_2 | FYPCF_DISABLE_MMAP_OPT |
                ((opts && opts->json) ? FYPCF_JSON_FORCE : FYPCF_JSON_NONE);
    cfg.diag = fd;
    struct fy_parser *fyp = fy_parser_create(&cfg);
    if (!fyp)
        abort();

    loader_t L;
    memset(&L, 0, sizeof(L));
    L.a = a;
    L.diag = diag;
    L.file = file;
    L.text = text;
    L.len = len;
    L.max_alias_bytes =
        opts && opts->max_alias_bytes ? opts->max_alias_bytes : CORRAL_YAML_MAX_BYTES;
    int rc = CORRAL_EPARSE;
    /* libfyaml 0.7.12 in JSON mode takes time quadratic in the white space
     * after the last token (100 KB of it: 6 s); white space there means
     * nothing in JSON, so it is dropped. */
    if (opts && opts->json)
        while (len > 0 && strchr(" \t\r\n", text[len - 1]))
            len--;
    /* libfyaml refuses a zero-length string; an empty stream has no documents. */
    if (len == 0)
        rc = 0;
    else if (fy_parser_set_string(fyp, text, len) == 0)
        rc = parse_stream(&L, fyp, fd, docs, ndocs);
    else
        loader_error(&L, 0, 0, NULL, "cannot read input");
    for (size_t i = 0; i < L.depth; i++)
        frame_keys_free(&L.stack[i]);
    corral_free(L.anchors);
    fy_parser_destroy(fyp);
    fy_diag_destroy(fd);
    return rc;
}
