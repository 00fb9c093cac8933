/*
 * Value tree construction, access and comparison. Maps are kept as arrays of
 * pairs in source order: Kubernetes objects have few keys per map, order
 * matters for faithful round trips, and linear lookup beats hashing at n < 32.
 */
#include <math.h>
#include <string.h>

#include "corral/val.h"

corral_val_t *corral_val_new(corral_arena_t *a, corral_val_kind_t kind)
{
    corral_val_t *v = corral_arena_alloc(a, sizeof(*v));
    v->kind = kind;
    return v;
}

corral_val_t *corral_val_new_strn(corral_arena_t *a, const char *s, size_t len)
{
    corral_val_t *v = corral_val_new(a, CORRAL_VAL_STR);
    v->s = corral_arena_strndup(a, s, len);
    v->len = len;
    v->quoted = true;
    return v;
}

corral_val_t *corral_val_new_str(corral_arena_t *a, const char *s)
{
    return corral_val_new_strn(a, s, strlen(s));
}

corral_val_t *corral_val_new_int(corral_arena_t *a, int64_t i)
{
    corral_val_t *v = corral_val_new(a, CORRAL_VAL_INT);
    v->u.i = i;
    v->s = corral_arena_printf(a, "%lld", (long long)i);
    v->len = strlen(v->s);
    return v;
}

corral_val_t *corral_val_new_bool(corral_arena_t *a, bool b)
{
    corral_val_t *v = corral_val_new(a, CORRAL_VAL_BOOL);
    v->u.b = b;
    v->s = b ? "true" : "false";
    v->len = strlen(v->s);
    return v;
}

corral_val_t *corral_val_new_float(corral_arena_t *a, double f)
{
    corral_val_t *v = corral_val_new(a, CORRAL_VAL_FLOAT);
    v->u.f = f;
    v->s = corral_arena_printf(a, "%.17g", f);
    v->len = strlen(v->s);
    return v;
}

corral_val_t *corral_val_get(const corral_val_t *m, const char *key)
{
    if (!m || m->kind != CORRAL_VAL_MAP)
        return NULL;
    for (size_t i = 0; i < m->n; i++) {
        if (strcmp(m->pairs[i].key->s, key) == 0)
            return m->pairs[i].val;
    }
    return NULL;
}

corral_val_t *corral_val_dig(const corral_val_t *m, const char *dotted)
{
    char key[256];
    const corral_val_t *cur = m;
    const char *p = dotted;
    while (cur && *p) {
        const char *dot = strchr(p, '.');
        size_t n = dot ? (size_t)(dot - p) : strlen(p);
        if (n >= sizeof(key))
            return NULL;
        memcpy(key, p, n);
        key[n] = '\0';
        cur = corral_val_get(cur, key);
        p = dot ? dot + 1 : p + n;
    }
    return (corral_val_t *)cur;
}

const char *corral_val_get_str(const corral_val_t *m, const char *key)
{
    corral_val_t *v = corral_val_get(m, key);
    return (v && v->kind == CORRAL_VAL_STR) ? v->s : NULL;
}

void corral_val_set(corral_arena_t *a, corral_val_t *m, const char *key, corral_val_t *v)
{
    for (size_t i = 0; i < m->n; i++) {
        if (strcmp(m->pairs[i].key->s, key) == 0) {
            m->pairs[i].val = v;
            return;
        }
    }
    if (m->n == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 4;
        m->pairs =
            corral_arena_grow(a, m->pairs, m->cap * sizeof(*m->pairs), cap * sizeof(*m->pairs));
        m->cap = cap;
    }
    m->pairs[m->n].key = corral_val_new_str(a, key);
    m->pairs[m->n].val = v;
    m->n++;
}

bool corral_val_del(corral_val_t *m, const char *key)
{
    if (!m || m->kind != CORRAL_VAL_MAP)
        return false;
    for (size_t i = 0; i < m->n; i++) {
        if (strcmp(m->pairs[i].key->s, key) == 0) {
            memmove(&m->pairs[i], &m->pairs[i + 1], (m->n - i - 1) * sizeof(*m->pairs));
            m->n--;
            return true;
        }
    }
    return false;
}

corral_val_t *corral_val_ensure_map(corral_arena_t *a, corral_val_t *m, const char *key)
{
    corral_val_t *v = corral_val_get(m, key);
    if (v && v->kind == CORRAL_VAL_MAP)
        return v;
    v = corral_val_new(a, CORRAL_VAL_MAP);
    corral_val_set(a, m, key, v);
    return v;
}

void corral_val_push(corral_arena_t *a, corral_val_t *seq, corral_val_t *v)
{
    if (seq->n == seq->cap) {
        size_t cap = seq->cap ? seq->cap * 2 : 4;
        seq->items = corral_arena_grow(a, seq->items, seq->cap * sizeof(corral_val_t *),
                                       cap * sizeof(corral_val_t *));
        seq->cap = cap;
    }
    seq->items[seq->n++] = v;
}

corral_val_t *corral_val_copy(corral_arena_t *a, const corral_val_t *v)
{
    if (!v)
        return NULL;
    corral_val_t *c = corral_val_new(a, v->kind);
    c->quoted = v->quoted;
    c->line = v->line;
    c->col = v->col;
    c->u = v->u;
    if (v->s) {
        c->s = corral_arena_strndup(a, v->s, v->len);
        c->len = v->len;
    }
    if (v->kind == CORRAL_VAL_SEQ && v->n) {
        c->items = corral_arena_alloc(a, v->n * sizeof(corral_val_t *));
        for (size_t i = 0; i < v->n; i++)
            c->items[i] = corral_val_copy(a, v->items[i]);
        c->n = c->cap = v->n;
    } else if (v->kind == CORRAL_VAL_MAP && v->n) {
        c->pairs = corral_arena_alloc(a, v->n * sizeof(*c->pairs));
        for (size_t i = 0; i < v->n; i++) {
            c->pairs[i].key = corral_val_copy(a, v->pairs[i].key);
            c->pairs[i].val = corral_val_copy(a, v->pairs[i].val);
        }
        c->n = c->cap = v->n;
    }
    return c;
}

bool corral_val_equal(const corral_val_t *x, const corral_val_t *y)
{
    if (!x || !y)
        return x == y;
    if (x->kind != y->kind)
        return false;
    switch (x->kind) {
    case CORRAL_VAL_NULL:
        return true;
    case CORRAL_VAL_BOOL:
        return x->u.b == y->u.b;
    case CORRAL_VAL_INT:
        return x->u.i == y->u.i;
    case CORRAL_VAL_FLOAT:
        return x->u.f == y->u.f || (isnan(x->u.f) && isnan(y->u.f));
    case CORRAL_VAL_STR:
        return x->len == y->len && memcmp(x->s, y->s, x->len) == 0;
    case CORRAL_VAL_SEQ:
        if (x->n != y->n)
            return false;
        for (size_t i = 0; i < x->n; i++) {
            if (!corral_val_equal(x->items[i], y->items[i]))
                return false;
        }
        return true;
    case CORRAL_VAL_MAP:
        if (x->n != y->n)
            return false;
        for (size_t i = 0; i < x->n; i++) {
            if (!corral_val_equal(x->pairs[i].val, corral_val_get(y, x->pairs[i].key->s)))
                return false;
        }
        return true;
    }
    return false;
}

const char *corral_val_kind_name(corral_val_kind_t k)
{
    switch (k) {
    case CORRAL_VAL_NULL:
        return "null";
    case CORRAL_VAL_BOOL:
        return "boolean";
    case CORRAL_VAL_INT:
        return "integer";
    case CORRAL_VAL_FLOAT:
        return "number";
    case CORRAL_VAL_STR:
        return "string";
    case CORRAL_VAL_SEQ:
        return "list";
    case CORRAL_VAL_MAP:
        return "mapping";
    }
    return "value";
}
