/*
 * Field sets and metadata.managedFields, as kube-apiserver keeps them for
 * server-side apply (structured-merge-diff). A field set is a value tree in
 * upstream's FieldsV1 shape: "f:<field>" for a field or map key,
 * "k:{\"name\":\"c\"}" for an item of a list merged by key, "v:<json>" for
 * an item of a set of scalars, "." for the node itself when it has
 * children. Inside this file every member node carries an explicit "."
 * (even leaves); sets read from or written to managedFields are converted
 * at the edges (corral__fields_in, corral__fields_out), where a member
 * without children is written {} as upstream does.
 *
 * How lists merge comes from the strategic-merge table of smpatch.c
 * (corral__list_type): by key, as a set, or atomic (the list is one leaf).
 * Everything here is a pure function over trees in an arena; apply.c and
 * write.c call corral__managed_update and corral__managed_apply, which
 * implement upstream's Updater.Update and Updater.Apply: the owner of each
 * field, conflicts of an apply with other managers, and the removal of
 * fields an applier stops applying that nobody else owns.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/apiserver_int.h"
#include "corral/json.h"

#define MAX_DEPTH 100

static corral_val_t *node_new(corral_arena_t *a)
{
    return corral_val_new(a, CORRAL_VAL_MAP);
}

static void mark(corral_arena_t *a, corral_val_t *n)
{
    if (!corral_val_get(n, "."))
        corral_val_set(a, n, ".", node_new(a));
}

static bool member(const corral_val_t *n)
{
    return corral_val_get(n, ".") != NULL;
}

/* Attach child under key unless it is empty. */
static void attach(corral_arena_t *a, corral_val_t *n, const char *key, corral_val_t *child)
{
    if (child && child->kind == CORRAL_VAL_MAP && child->n)
        corral_val_set(a, n, key, child);
}

static const char *sub_path(corral_arena_t *a, const char *path, const char *key)
{
    return *path ? corral_arena_printf(a, "%s.%s", path, key) : key;
}

static const char *json_of(corral_arena_t *a, const corral_val_t *v)
{
    corral_buf_t b;
    corral_buf_init(&b);
    corral_val_to_json(v, &b, false);
    const char *s = corral_arena_strndup(a, b.p ? b.p : "", b.len);
    corral_buf_fini(&b);
    return s;
}

/* The path element of list item v of a list of type t (key k). */
static const char *item_elem(corral_arena_t *a, char t, const char *k, const corral_val_t *v)
{
    if (t == 's')
        return corral_arena_printf(a, "v:%s", json_of(a, v));
    corral_val_t *kv = corral_val_new(a, CORRAL_VAL_MAP);
    corral_val_t *key = corral_val_get(v, k);
    corral_val_set(a, kv, k, key ? key : corral_val_new(a, CORRAL_VAL_NULL));
    return corral_arena_printf(a, "k:%s", json_of(a, kv));
}

static char list_type(const char *path, const corral_val_t *list, const char **key)
{
    char t = corral__list_type(path, key);
    if (t == 'k') {
        for (size_t i = 0; i < list->n; i++) {
            if (list->items[i]->kind != CORRAL_VAL_MAP)
                return 'a'; /* not a list of objects: treat as one value */
        }
    }
    return t;
}

static corral_val_t *set_of(corral_arena_t *a, const corral_val_t *v, const char *path, bool all,
                            int depth);

static corral_val_t *set_of_list(corral_arena_t *a, const corral_val_t *v, const char *path,
                                 bool all, int depth)
{
    const char *key = NULL;
    char t = list_type(path, v, &key);
    corral_val_t *n = node_new(a);
    if (t == 'a' || depth > MAX_DEPTH) {
        mark(a, n);
        return n;
    }
    const char *ep = corral_arena_printf(a, "%s[]", path);
    for (size_t i = 0; i < v->n; i++) {
        corral_val_t *c = t == 's' ? node_new(a) : set_of(a, v->items[i], ep, all, depth + 1);
        mark(a, c);
        corral_val_set(a, n, item_elem(a, t, key, v->items[i]), c);
    }
    if (all)
        mark(a, n);
    return n;
}

/* The set of every field of v (a value at path). all: every node is a
 * member (what an Update adds); else only leaves, list items and empty
 * maps, as upstream's ToFieldSet. */
static corral_val_t *set_of(corral_arena_t *a, const corral_val_t *v, const char *path, bool all,
                            int depth)
{
    if (v && v->kind == CORRAL_VAL_SEQ)
        return set_of_list(a, v, path, all, depth);
    corral_val_t *n = node_new(a);
    if (!v || v->kind != CORRAL_VAL_MAP || v->n == 0 || depth > MAX_DEPTH) {
        mark(a, n);
        return n;
    }
    for (size_t i = 0; i < v->n; i++) {
        const char *k = v->pairs[i].key->s;
        corral_val_t *c = set_of(a, v->pairs[i].val, sub_path(a, path, k), all, depth + 1);
        corral_val_set(a, n, corral_arena_printf(a, "f:%s", k), c);
    }
    if (all)
        mark(a, n);
    return n;
}

corral_val_t *corral__fields_of(corral_arena_t *a, const corral_val_t *obj, bool all)
{
    return set_of(a, obj, "", all, 0);
}

/* --- set algebra ----------------------------------------------------------------------- */

static corral_val_t *combine(corral_arena_t *a, const corral_val_t *x, const corral_val_t *y,
                             char op)
{
    corral_val_t *n = node_new(a);
    bool mx = x && member(x), my = y && member(y);
    if ((op == '|' && (mx || my)) || (op == '-' && mx && !my) || (op == '&' && mx && my))
        mark(a, n);
    for (size_t i = 0; x && i < x->n; i++) {
        const char *k = x->pairs[i].key->s;
        if (!strcmp(k, "."))
            continue;
        corral_val_t *yc = y ? corral_val_get(y, k) : NULL;
        if (!yc && op == '&')
            continue;
        attach(a, n, k,
               yc || op != '|' ? combine(a, x->pairs[i].val, yc, op)
                               : corral_val_copy(a, x->pairs[i].val));
    }
    for (size_t i = 0; op == '|' && y && i < y->n; i++) {
        const char *k = y->pairs[i].key->s;
        if (strcmp(k, ".") != 0 && !(x && corral_val_get(x, k)))
            attach(a, n, k, corral_val_copy(a, y->pairs[i].val));
    }
    return n;
}

corral_val_t *corral__fields_union(corral_arena_t *a, const corral_val_t *x, const corral_val_t *y)
{
    return combine(a, x, y, '|');
}

corral_val_t *corral__fields_diff(corral_arena_t *a, const corral_val_t *x, const corral_val_t *y)
{
    return combine(a, x, y, '-');
}

corral_val_t *corral__fields_inter(corral_arena_t *a, const corral_val_t *x, const corral_val_t *y)
{
    return combine(a, x, y, '&');
}

bool corral__fields_empty(const corral_val_t *x)
{
    return !x || x->kind != CORRAL_VAL_MAP || x->n == 0;
}

/* --- FieldsV1 at the edges ------------------------------------------------------------- */

static corral_val_t *fields_in(corral_arena_t *a, const corral_val_t *v, int depth)
{
    corral_val_t *n = node_new(a);
    if (!v || v->kind != CORRAL_VAL_MAP || depth > MAX_DEPTH)
        return n;
    if (v->n == 0)
        mark(a, n);
    for (size_t i = 0; i < v->n; i++) {
        const char *k = v->pairs[i].key->s;
        if (!strcmp(k, "."))
            mark(a, n);
        else
            attach(a, n, k, fields_in(a, v->pairs[i].val, depth + 1));
    }
    return n;
}

corral_val_t *corral__fields_in(corral_arena_t *a, const corral_val_t *fields_v1)
{
    return fields_in(a, fields_v1, 0);
}

static int pair_cmp(const void *x, const void *y)
{
    const corral_val_pair_t *p = x, *q = y;
    return strcmp(p->key->s, q->key->s);
}

corral_val_t *corral__fields_out(corral_arena_t *a, const corral_val_t *set)
{
    corral_val_t *n = node_new(a);
    bool m = member(set);
    for (size_t i = 0; i < set->n; i++) {
        const char *k = set->pairs[i].key->s;
        if (strcmp(k, ".") != 0)
            corral_val_set(a, n, k, corral__fields_out(a, set->pairs[i].val));
    }
    if (m && n->n)
        corral_val_set(a, n, ".", node_new(a));
    if (n->n > 1) {
        qsort(n->pairs, n->n, sizeof(n->pairs[0]), pair_cmp);
        corral_val_index(a, n); /* positions moved */
    }
    return n;
}

/* --- comparing objects ----------------------------------------------------------------- */

typedef struct cmp3 {
    corral_val_t *added, *modified, *removed;
} cmp3_t;

static void cmp3_init(corral_arena_t *a, cmp3_t *c)
{
    c->added = node_new(a);
    c->modified = node_new(a);
    c->removed = node_new(a);
}

static void cmp3_attach(corral_arena_t *a, cmp3_t *to, const char *k, cmp3_t *c)
{
    attach(a, to->added, k, c->added);
    attach(a, to->modified, k, c->modified);
    attach(a, to->removed, k, c->removed);
}

static void compare(corral_arena_t *a, const corral_val_t *x, const corral_val_t *y,
                    const char *path, int depth, cmp3_t *out);

static void compare_list(corral_arena_t *a, const corral_val_t *x, const corral_val_t *y,
                         const char *path, int depth, cmp3_t *out)
{
    const char *key = NULL;
    char tx = list_type(path, x, &key), ty = list_type(path, y, &key);
    if (tx == 'a' || ty == 'a' || depth > MAX_DEPTH) {
        if (!corral_val_equal(x, y))
            mark(a, out->modified);
        return;
    }
    const char *ep = corral_arena_printf(a, "%s[]", path);
    for (size_t i = 0; i < y->n; i++) {
        const char *e = item_elem(a, tx, key, y->items[i]);
        const corral_val_t *xi = NULL;
        for (size_t j = 0; j < x->n && !xi; j++) {
            if (!strcmp(item_elem(a, tx, key, x->items[j]), e))
                xi = x->items[j];
        }
        if (!xi) {
            corral_val_t *c = tx == 's' ? node_new(a) : set_of(a, y->items[i], ep, true, depth);
            mark(a, c);
            corral_val_set(a, out->added, e, c);
        } else if (tx == 'k') {
            cmp3_t c;
            cmp3_init(a, &c);
            compare(a, xi, y->items[i], ep, depth + 1, &c);
            cmp3_attach(a, out, e, &c);
        }
    }
    for (size_t j = 0; j < x->n; j++) {
        const char *e = item_elem(a, tx, key, x->items[j]);
        bool found = false;
        for (size_t i = 0; i < y->n && !found; i++)
            found = !strcmp(item_elem(a, tx, key, y->items[i]), e);
        if (!found) {
            corral_val_t *c = tx == 's' ? node_new(a) : set_of(a, x->items[j], ep, true, depth);
            mark(a, c);
            corral_val_set(a, out->removed, e, c);
        }
    }
}

static void compare(corral_arena_t *a, const corral_val_t *x, const corral_val_t *y,
                    const char *path, int depth, cmp3_t *out)
{
    if (x->kind == CORRAL_VAL_SEQ && y->kind == CORRAL_VAL_SEQ) {
        compare_list(a, x, y, path, depth, out);
        return;
    }
    if (x->kind != CORRAL_VAL_MAP || y->kind != CORRAL_VAL_MAP || depth > MAX_DEPTH) {
        if (!corral_val_equal(x, y))
            mark(a, out->modified);
        return;
    }
    for (size_t i = 0; i < y->n; i++) {
        const char *k = y->pairs[i].key->s;
        const char *fk = corral_arena_printf(a, "f:%s", k);
        const char *cp = sub_path(a, path, k);
        const corral_val_t *xv = corral_val_get(x, k);
        if (!xv) {
            corral_val_set(a, out->added, fk, set_of(a, y->pairs[i].val, cp, true, depth + 1));
            continue;
        }
        cmp3_t c;
        cmp3_init(a, &c);
        compare(a, xv, y->pairs[i].val, cp, depth + 1, &c);
        cmp3_attach(a, out, fk, &c);
    }
    for (size_t i = 0; i < x->n; i++) {
        const char *k = x->pairs[i].key->s;
        if (!corral_val_get(y, k))
            corral_val_set(a, out->removed, corral_arena_printf(a, "f:%s", k),
                           set_of(a, x->pairs[i].val, sub_path(a, path, k), true, depth + 1));
    }
}

void corral__fields_compare(corral_arena_t *a, const corral_val_t *old, const corral_val_t *new_,
                            corral_val_t **added, corral_val_t **modified, corral_val_t **removed)
{
    cmp3_t c;
    cmp3_init(a, &c);
    corral_val_t *empty = node_new(a);
    compare(a, old ? old : empty, new_ ? new_ : empty, "", 0, &c);
    *added = c.added;
    *modified = c.modified;
    *removed = c.removed;
}

/* --- fields the server owns -------------------------------------------------------------- */

corral_val_t *corral__fields_strip(corral_arena_t *a, const corral_val_t *set, int scope)
{
    corral_val_t *s = corral_val_copy(a, set);
    corral_val_del(s, ".");
    corral_val_del(s, "f:apiVersion");
    corral_val_del(s, "f:kind");
    if (scope == CORRAL__SCOPE_STATUS) {
        for (size_t i = s->n; i-- > 0;) {
            if (strcmp(s->pairs[i].key->s, "f:status") != 0)
                corral_val_del(s, s->pairs[i].key->s);
        }
        return s;
    }
    if (scope == CORRAL__SCOPE_SPEC)
        corral_val_del(s, "f:status");
    corral_val_t *m = corral_val_get(s, "f:metadata");
    if (m) {
        static const char *const server[] = {"f:name",
                                             "f:namespace",
                                             "f:uid",
                                             "f:generation",
                                             "f:resourceVersion",
                                             "f:creationTimestamp",
                                             "f:selfLink",
                                             "f:managedFields",
                                             "f:deletionTimestamp",
                                             "f:clusterName",
                                             "f:deletionGracePeriodSeconds"};
        corral_val_del(m, ".");
        for (size_t i = 0; i < CORRAL_ARRAY_LEN(server); i++)
            corral_val_del(m, server[i]);
        if (m->n == 0)
            corral_val_del(s, "f:metadata");
    }
    return s;
}

/* --- removing fields from an object -------------------------------------------------------- */

/* The index of the item of list named by path element e, or -1. */
static long find_item(corral_arena_t *a, const corral_val_t *list, const char *e)
{
    corral_val_t *want = NULL;
    if (corral_json_parse(a, e + 2, strlen(e + 2), &want, NULL) != 0 || !want)
        return -1;
    for (size_t i = 0; i < list->n; i++) {
        const corral_val_t *it = list->items[i];
        bool match = true;
        if (e[0] == 'v') {
            match = corral_val_equal(it, want);
        } else {
            for (size_t k = 0; k < want->n && match; k++) {
                const corral_val_t *have = corral_val_get(it, want->pairs[k].key->s);
                match = have ? corral_val_equal(have, want->pairs[k].val)
                             : want->pairs[k].val->kind == CORRAL_VAL_NULL;
            }
        }
        if (match)
            return (long)i;
    }
    return -1;
}

static void remove_fields(corral_arena_t *a, corral_val_t *obj, const corral_val_t *set,
                          const corral_val_t *keep, int depth)
{
    if (!obj || depth > MAX_DEPTH)
        return;
    for (size_t i = 0; i < set->n; i++) {
        const char *e = set->pairs[i].key->s;
        const corral_val_t *sc = set->pairs[i].val;
        const corral_val_t *kc = keep ? corral_val_get(keep, e) : NULL;
        if (!strcmp(e, "."))
            continue;
        bool whole = member(sc) && corral__fields_empty(kc);
        if (e[0] == 'f' && obj->kind == CORRAL_VAL_MAP) {
            corral_val_t *v = corral_val_get(obj, e + 2);
            if (whole) {
                corral_val_del(obj, e + 2);
            } else if (v) {
                size_t had = v->n;
                remove_fields(a, v, sc, kc, depth + 1);
                if (v->kind == CORRAL_VAL_MAP && had && !v->n)
                    corral_val_del(obj, e + 2); /* emptied by the removal: omitted, as Go does */
            }
        } else if ((e[0] == 'k' || e[0] == 'v') && obj->kind == CORRAL_VAL_SEQ) {
            long at = find_item(a, obj, e);
            if (at < 0)
                continue;
            if (whole) {
                memmove(&obj->items[at], &obj->items[at + 1],
                        (obj->n - (size_t)at - 1) * sizeof(corral_val_t *));
                obj->n--;
            } else {
                remove_fields(a, obj->items[at], sc, kc, depth + 1);
            }
        }
    }
}

void corral__fields_remove(corral_arena_t *a, corral_val_t *obj, const corral_val_t *set,
                           const corral_val_t *keep)
{
    remove_fields(a, obj, set, keep, 0);
}

/* --- paths as kube prints them ------------------------------------------------------------- */

static void put_elem(corral_arena_t *a, corral_buf_t *b, const char *e)
{
    if (e[0] == 'f') {
        corral_buf_printf(b, ".%s", e + 2);
    } else if (e[0] == 'v') {
        corral_buf_printf(b, "[=%s]", e + 2);
    } else if (e[0] == 'i') {
        corral_buf_printf(b, "[%s]", e + 2);
    } else {
        corral_val_t *kv = NULL;
        corral_buf_putc(b, '[');
        if (corral_json_parse(a, e + 2, strlen(e + 2), &kv, NULL) == 0 && kv &&
            kv->kind == CORRAL_VAL_MAP) {
            for (size_t i = 0; i < kv->n; i++)
                corral_buf_printf(b, "%s%s=%s", i ? "," : "", kv->pairs[i].key->s,
                                  json_of(a, kv->pairs[i].val));
        }
        corral_buf_putc(b, ']');
    }
}

static void each_path(corral_arena_t *a, const corral_val_t *set, corral_buf_t *prefix,
                      void (*fn)(void *, const char *), void *ctx, int depth)
{
    if (member(set) && prefix->len)
        fn(ctx, corral_buf_str(prefix));
    for (size_t i = 0; i < set->n && depth < MAX_DEPTH; i++) {
        const char *e = set->pairs[i].key->s;
        if (!strcmp(e, "."))
            continue;
        size_t at = prefix->len;
        put_elem(a, prefix, e);
        each_path(a, set->pairs[i].val, prefix, fn, ctx, depth + 1);
        prefix->len = at;
        if (prefix->p)
            prefix->p[at] = '\0';
    }
}

void corral__fields_each(corral_arena_t *a, const corral_val_t *set,
                         void (*fn)(void *ctx, const char *path), void *ctx)
{
    corral_buf_t b;
    corral_buf_init(&b);
    corral_val_t *sorted = corral__fields_in(a, corral__fields_out(a, set));
    each_path(a, sorted, &b, fn, ctx, 0);
    corral_buf_fini(&b);
}

/* --- managedFields entries ------------------------------------------------------------------ */

typedef struct entry {
    const char *manager, *operation, *api_version, *time, *sub;
    corral_val_t *set; /* internal form */
    bool changed;      /* set differs from what was read: a new time */
} entry_t;

typedef struct entries {
    entry_t *e;
    size_t n;
} entries_t;

static const char *str_or(const corral_val_t *m, const char *k, const char *dflt)
{
    const char *s = corral_val_get_str(m, k);
    return s ? s : dflt;
}

static void entries_read(corral_arena_t *a, const corral_val_t *mf, entries_t *es)
{
    size_t cap = mf && mf->kind == CORRAL_VAL_SEQ ? mf->n + 1 : 1;
    es->e = corral_arena_alloc(a, cap * sizeof(entry_t));
    es->n = 0;
    for (size_t i = 0; i < cap - 1; i++) {
        const corral_val_t *m = mf->items[i];
        const char *mgr = corral_val_get_str(m, "manager");
        const char *op = corral_val_get_str(m, "operation");
        if (!mgr || !op)
            continue;
        entry_t *e = &es->e[es->n++];
        memset(e, 0, sizeof(*e));
        e->manager = mgr;
        e->operation = op;
        e->api_version = str_or(m, "apiVersion", "");
        e->time = corral_val_get_str(m, "time");
        e->sub = corral_val_get_str(m, "subresource");
        e->set = corral__fields_in(a, corral_val_get(m, "fieldsV1"));
    }
}

static bool same_sub(const char *x, const char *y)
{
    return strcmp(x ? x : "", y ? y : "") == 0;
}

/* The entry of manager/op (added, empty, when absent). */
static entry_t *entry_for(corral_arena_t *a, entries_t *es, const corral__mf_opts_t *o,
                          const char *op)
{
    for (size_t i = 0; i < es->n; i++) {
        entry_t *e = &es->e[i];
        if (!strcmp(e->manager, o->manager) && !strcmp(e->operation, op) &&
            same_sub(e->sub, o->subresource) &&
            (!strcmp(op, "Apply") || !strcmp(e->api_version, o->api_version)))
            return e;
    }
    entry_t *e = &es->e[es->n++];
    memset(e, 0, sizeof(*e));
    e->manager = o->manager;
    e->operation = op;
    e->sub = o->subresource;
    e->set = node_new(a);
    e->changed = true;
    return e;
}

static void entry_set(corral_arena_t *a, entry_t *e, corral_val_t *set)
{
    corral_val_t *before = corral__fields_out(a, e->set), *after = corral__fields_out(a, set);
    if (!corral_val_equal(before, after))
        e->changed = true;
    e->set = set;
}

static corral_val_t *entries_write(corral_arena_t *a, const entries_t *es,
                                   const corral__mf_opts_t *o)
{
    corral_val_t *out = corral_val_new(a, CORRAL_VAL_SEQ);
    for (size_t i = 0; i < es->n; i++) {
        const entry_t *e = &es->e[i];
        if (corral__fields_empty(e->set))
            continue;
        corral_val_t *m = corral_val_new(a, CORRAL_VAL_MAP);
        corral_val_set(a, m, "manager", corral_val_new_str(a, e->manager));
        corral_val_set(a, m, "operation", corral_val_new_str(a, e->operation));
        corral_val_set(a, m, "apiVersion",
                       corral_val_new_str(a, e->changed ? o->api_version : e->api_version));
        const char *t = e->changed || !e->time ? o->now : e->time;
        corral_val_set(a, m, "time", corral_val_new_str(a, t));
        corral_val_set(a, m, "fieldsType", corral_val_new_str(a, "FieldsV1"));
        corral_val_set(a, m, "fieldsV1", corral__fields_out(a, e->set));
        if (e->sub && *e->sub)
            corral_val_set(a, m, "subresource", corral_val_new_str(a, e->sub));
        corral_val_push(a, out, m);
    }
    return out;
}

/* Every other entry loses what this write changed or removed (upstream's
 * Updater.update with force); with conflicts non-NULL and !force, collect
 * them instead. Returns false when there were conflicts. */
static bool take_from_others(corral_arena_t *a, entries_t *es, const entry_t *self,
                             const corral_val_t *changed, const corral_val_t *removed, bool force,
                             corral_val_t **conflicts);

typedef struct conflict_ctx {
    corral_arena_t *a;
    corral_val_t *list;
    const char *label;
} conflict_ctx_t;

static void add_conflict(void *ctx, const char *path)
{
    conflict_ctx_t *c = ctx;
    corral_val_t *m = corral_val_new(c->a, CORRAL_VAL_MAP);
    corral_val_set(c->a, m, "manager", corral_val_new_str(c->a, c->label));
    corral_val_set(c->a, m, "field", corral_val_new_str(c->a, path));
    corral_val_push(c->a, c->list, m);
}

/* How upstream names a manager in conflicts. */
static const char *manager_label(corral_arena_t *a, const entry_t *e)
{
    const char *s = corral_arena_printf(a, "\"%s\"", e->manager);
    if (e->sub && *e->sub)
        s = corral_arena_printf(a, "%s with subresource \"%s\"", s, e->sub);
    if (!strcmp(e->operation, "Update"))
        s = corral_arena_printf(a, "%s using %s", s, e->api_version);
    return s;
}

static bool take_from_others(corral_arena_t *a, entries_t *es, const entry_t *self,
                             const corral_val_t *changed, const corral_val_t *removed, bool force,
                             corral_val_t **conflicts)
{
    bool ok = true;
    for (size_t i = 0; i < es->n; i++) {
        entry_t *e = &es->e[i];
        if (e == self)
            continue;
        corral_val_t *c = corral__fields_inter(a, e->set, changed);
        if (!corral__fields_empty(c) && !force && conflicts) {
            conflict_ctx_t cc = {a, *conflicts, manager_label(a, e)};
            corral__fields_each(a, c, add_conflict, &cc);
            ok = false;
            continue;
        }
        corral_val_t *next = corral__fields_diff(a, corral__fields_diff(a, e->set, c), removed);
        entry_set(a, e, next);
    }
    return ok;
}

corral_val_t *corral__managed_update(corral_arena_t *a, const corral_val_t *base,
                                     const corral_val_t *live, const corral_val_t *next,
                                     const corral__mf_opts_t *o)
{
    entries_t es;
    entries_read(a, base, &es);
    corral_val_t *added, *modified, *removed;
    corral__fields_compare(a, live, next, &added, &modified, &removed);
    added = corral__fields_strip(a, added, o->scope);
    modified = corral__fields_strip(a, modified, o->scope);
    removed = corral__fields_strip(a, removed, o->scope);
    corral_val_t *changed = corral__fields_union(a, added, modified);
    entry_t *self = entry_for(a, &es, o, "Update");
    take_from_others(a, &es, self, changed, removed, true, NULL);
    entry_set(a, self,
              corral__fields_union(a, corral__fields_diff(a, self->set, removed), changed));
    return entries_write(a, &es, o);
}

int corral__managed_apply(corral_arena_t *a, const corral_val_t *base, const corral_val_t *live,
                          const corral_val_t *config, corral_val_t *merged,
                          const corral__mf_opts_t *o, bool force, corral_val_t **mf_out,
                          corral_val_t **conflicts)
{
    entries_t es;
    entries_read(a, base, &es);
    entry_t *self = entry_for(a, &es, o, "Apply");
    corral_val_t *last = self->set;
    corral_val_t *set = corral__fields_strip(a, corral__fields_of(a, config, false), o->scope);
    entry_set(a, self, set);
    /* Prune: what the applier applied last time and no longer does, and
     * nobody else owns. */
    corral_val_t *owned = corral_val_copy(a, set);
    for (size_t i = 0; i < es.n; i++) {
        if (&es.e[i] != self)
            owned = corral__fields_union(a, owned, es.e[i].set);
    }
    corral_val_t *gone = corral__fields_diff(a, last, owned);
    if (!corral__fields_empty(gone))
        corral__fields_remove(a, merged, gone, owned);
    corral_val_t *added, *modified, *removed;
    corral__fields_compare(a, live, merged, &added, &modified, &removed);
    corral_val_t *changed =
        corral__fields_strip(a, corral__fields_union(a, added, modified), o->scope);
    removed = corral__fields_strip(a, removed, o->scope);
    *conflicts = corral_val_new(a, CORRAL_VAL_SEQ);
    if (!take_from_others(a, &es, self, changed, removed, force, conflicts))
        return CORRAL_ECONFLICT;
    *mf_out = entries_write(a, &es, o);
    return 0;
}
