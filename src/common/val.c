/*
 * Value tree construction, access and comparison. Maps are kept as arrays of
 * pairs in source order: Kubernetes objects have few keys per map, order
 * matters for faithful round trips, and linear lookup beats hashing at small
 * n. A client can send a map of 200,000 keys, though, and every algorithm
 * that looks keys of one map up in another would then be quadratic; so a
 * map of IX_MIN or more pairs carries an index of its keys (open addressing
 * over the seeded hash of corral/hmap.h, so colliding keys cannot be
 * chosen). The index records the pairs array and count it was built for
 * and is ignored (linear lookups, still correct) when they no longer
 * match; corral_val_set keeps it current and rebuilds it.
 */
#include <math.h>
#include <string.h>

#include "corral/hmap.h"
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

#define IX_MIN 16

struct corral_val_ix {
    const corral_val_pair_t *pairs; /* what it indexes: valid while m's are these */
    size_t n;
    size_t mask;    /* slots - 1; slots is a power of two >= 2n */
    uint32_t *slot; /* pair index + 1; 0 empty */
};

static bool ix_valid(const corral_val_t *m)
{
    return m->ix && m->ix->pairs == m->pairs && m->ix->n == m->n;
}

/* Put pair i into the index (its key not there yet). */
static void ix_insert(struct corral_val_ix *ix, const corral_val_pair_t *pairs, size_t i)
{
    size_t h = corral_hash_mem(pairs[i].key->s, pairs[i].key->len) & ix->mask;
    while (ix->slot[h])
        h = (h + 1) & ix->mask;
    ix->slot[h] = (uint32_t)i + 1;
}

/* The position of key in an indexed map, or -1. */
static long ix_find(const corral_val_t *m, const char *key, size_t len)
{
    const struct corral_val_ix *ix = m->ix;
    for (size_t h = corral_hash_mem(key, len) & ix->mask; ix->slot[h]; h = (h + 1) & ix->mask) {
        const corral_val_t *k = m->pairs[ix->slot[h] - 1].key;
        if (k->len == len && memcmp(k->s, key, len) == 0)
            return (long)ix->slot[h] - 1;
    }
    return -1;
}

void corral_val_index(corral_arena_t *a, corral_val_t *m)
{
    if (!m || m->kind != CORRAL_VAL_MAP || m->n < IX_MIN || m->n > UINT32_MAX / 4) {
        if (m)
            m->ix = NULL;
        return;
    }
    size_t slots = 32;
    while (slots < 2 * m->n + 2)
        slots *= 2;
    struct corral_val_ix *ix = m->ix;
    if (!ix || ix->mask + 1 < slots) {
        ix = corral_arena_alloc(a, sizeof(*ix));
        ix->slot = corral_arena_alloc(a, slots * sizeof(*ix->slot));
        ix->mask = slots - 1;
    } else {
        memset(ix->slot, 0, (ix->mask + 1) * sizeof(*ix->slot));
    }
    m->ix = NULL;
    ix->pairs = m->pairs;
    ix->n = 0;
    for (size_t i = 0; i < m->n; i++) {
        m->ix = ix; /* a partial index of the first i pairs: first of duplicates wins */
        ix->n = i;
        ix->pairs = m->pairs;
        if (ix_find(m, m->pairs[i].key->s, m->pairs[i].key->len) < 0)
            ix_insert(ix, m->pairs, i);
    }
    ix->n = m->n;
}

/* The position of key in m, or -1. */
static long find(const corral_val_t *m, const char *key)
{
    if (ix_valid(m))
        return ix_find(m, key, strlen(key));
    for (size_t i = 0; i < m->n; i++) {
        if (strcmp(m->pairs[i].key->s, key) == 0)
            return (long)i;
    }
    return -1;
}

corral_val_t *corral_val_get(const corral_val_t *m, const char *key)
{
    if (!m || m->kind != CORRAL_VAL_MAP)
        return NULL;
    long i = find(m, key);
    return i < 0 ? NULL : m->pairs[i].val;
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

static void append(corral_arena_t *a, corral_val_t *m, corral_val_t *key, corral_val_t *v);

void corral_val_set(corral_arena_t *a, corral_val_t *m, const char *key, corral_val_t *v)
{
    long at = find(m, key);
    if (at >= 0)
        m->pairs[at].val = v;
    else
        append(a, m, corral_val_new_str(a, key), v);
}

void corral_val_put(corral_arena_t *a, corral_val_t *m, corral_val_t *key, corral_val_t *v)
{
    long at = ix_valid(m) ? ix_find(m, key->s, key->len) : find(m, key->s);
    if (at >= 0)
        m->pairs[at].val = v;
    else
        append(a, m, key, v);
}

/* Append a pair whose key is not in m. */
static void append(corral_arena_t *a, corral_val_t *m, corral_val_t *key, corral_val_t *v)
{
    bool indexed = ix_valid(m);
    if (m->n == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 4;
        m->pairs =
            corral_arena_grow(a, m->pairs, m->cap * sizeof(*m->pairs), cap * sizeof(*m->pairs));
        m->cap = cap;
    }
    m->pairs[m->n].key = key;
    m->pairs[m->n].val = v;
    m->n++;
    if (indexed && 2 * m->n + 2 <= m->ix->mask + 1) {
        ix_insert(m->ix, m->pairs, m->n - 1);
        m->ix->pairs = m->pairs;
        m->ix->n = m->n;
    } else if (m->n >= IX_MIN) {
        corral_val_index(a, m); /* grown past its table, or not indexed yet */
    }
}

/* Empty slot h of an index, shifting later members of its probe run back
 * (deletion in linear probing without tombstones). */
static void ix_remove_slot(struct corral_val_ix *ix, const corral_val_pair_t *pairs, size_t h)
{
    size_t hole = h;
    for (size_t j = (h + 1) & ix->mask; ix->slot[j]; j = (j + 1) & ix->mask) {
        const corral_val_t *k = pairs[ix->slot[j] - 1].key;
        size_t home = corral_hash_mem(k->s, k->len) & ix->mask;
        /* The member at j may move to the hole when its home is not in (hole, j]. */
        bool stays = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
        if (!stays) {
            ix->slot[hole] = ix->slot[j];
            hole = j;
        }
    }
    ix->slot[hole] = 0;
}

/* The slot holding pair position i of an indexed map. */
static size_t ix_slot_of(const struct corral_val_ix *ix, const corral_val_pair_t *pairs, size_t i)
{
    size_t h = corral_hash_mem(pairs[i].key->s, pairs[i].key->len) & ix->mask;
    while (ix->slot[h] != i + 1)
        h = (h + 1) & ix->mask;
    return h;
}

bool corral_val_del(corral_val_t *m, const char *key)
{
    if (!m || m->kind != CORRAL_VAL_MAP)
        return false;
    long at = find(m, key);
    if (at < 0)
        return false;
    size_t i = (size_t)at, last = m->n - 1;
    if (!ix_valid(m)) {
        memmove(&m->pairs[i], &m->pairs[i + 1], (last - i) * sizeof(*m->pairs));
        m->n--;
        return true;
    }
    /* Indexed (big) map: O(1), the last pair taking the deleted one's place. */
    struct corral_val_ix *ix = m->ix;
    ix_remove_slot(ix, m->pairs, ix_slot_of(ix, m->pairs, i));
    if (i != last) {
        ix->slot[ix_slot_of(ix, m->pairs, last)] = (uint32_t)i + 1;
        m->pairs[i] = m->pairs[last];
    }
    m->n--;
    ix->n = m->n;
    return true;
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
        corral_val_index(a, c);
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
