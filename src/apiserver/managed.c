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

/* The "." member marker: one shared key and value, never changed (a set of
 * 100,000 fields would otherwise carry 200,000 nodes just to say so). */
static corral_val_t dot_key = {.kind = CORRAL_VAL_STR, .s = ".", .len = 1, .quoted = true};
static corral_val_t dot_val = {.kind = CORRAL_VAL_MAP};

static void mark(corral_arena_t *a, corral_val_t *n)
{
    if (!corral_val_get(n, "."))
        corral_val_put(a, n, &dot_key, &dot_val);
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
        corral_val_put(a, n, corral_val_new_str(a, corral_arena_printf(a, "f:%s", k)), c);
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

/* Attach child under the key node of a pair of another set (shared). */
static void attach_key(corral_arena_t *a, corral_val_t *n, corral_val_t *key, corral_val_t *child)
{
    if (child && child->kind == CORRAL_VAL_MAP && child->n)
        corral_val_put(a, n, key, child);
}

/* Sets are never changed once built, so a result shares every subtree it
 * takes whole from x or y instead of copying it: the work and memory of a
 * union or difference is that of the parts where both sets have fields. */
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
        attach_key(a, n, x->pairs[i].key,
                   yc ? combine(a, x->pairs[i].val, yc, op) : x->pairs[i].val);
    }
    for (size_t i = 0; op == '|' && y && i < y->n; i++) {
        const char *k = y->pairs[i].key->s;
        if (strcmp(k, ".") != 0 && !(x && corral_val_get(x, k)))
            attach_key(a, n, y->pairs[i].key, y->pairs[i].val);
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
            corral_val_put(a, n, set->pairs[i].key, corral__fields_out(a, set->pairs[i].val));
    }
    if (m && n->n)
        corral_val_put(a, n, &dot_key, &dot_val);
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

/* The three results are made when first needed: most fields of an update
 * are unchanged and must cost no allocation. */
static corral_val_t *need(corral_arena_t *a, corral_val_t **slot)
{
    if (!*slot)
        *slot = node_new(a);
    return *slot;
}

static void cmp3_attach(corral_arena_t *a, cmp3_t *to, corral_val_t *key, const cmp3_t *c)
{
    if (c->added && c->added->n)
        corral_val_put(a, need(a, &to->added), key, c->added);
    if (c->modified && c->modified->n)
        corral_val_put(a, need(a, &to->modified), key, c->modified);
    if (c->removed && c->removed->n)
        corral_val_put(a, need(a, &to->removed), key, c->removed);
}

static void compare(corral_arena_t *a, const corral_val_t *x, const corral_val_t *y,
                    const char *path, int depth, cmp3_t *out);

/* The items of list v by path element, in a map (indexed when big). */
static corral_val_t *items_by_elem(corral_arena_t *a, char t, const char *key,
                                   const corral_val_t *v, corral_val_t **elems)
{
    corral_val_t *m = node_new(a);
    *elems = corral_val_new(a, CORRAL_VAL_SEQ);
    for (size_t i = 0; i < v->n; i++) {
        corral_val_t *e = corral_val_new_str(a, item_elem(a, t, key, v->items[i]));
        corral_val_push(a, *elems, e);
        if (!corral_val_get(m, e->s))
            corral_val_put(a, m, e, v->items[i]);
    }
    return m;
}

static void compare_list(corral_arena_t *a, const corral_val_t *x, const corral_val_t *y,
                         const char *path, int depth, cmp3_t *out)
{
    const char *key = NULL;
    char tx = list_type(path, x, &key), ty = list_type(path, y, &key);
    if (tx == 'a' || ty == 'a' || depth > MAX_DEPTH) {
        if (!corral_val_equal(x, y))
            mark(a, need(a, &out->modified));
        return;
    }
    const char *ep = corral_arena_printf(a, "%s[]", path);
    corral_val_t *xe, *ye;
    corral_val_t *xs = items_by_elem(a, tx, key, x, &xe), *ys = items_by_elem(a, tx, key, y, &ye);
    for (size_t i = 0; i < y->n; i++) {
        corral_val_t *e = ye->items[i];
        const corral_val_t *xi = corral_val_get(xs, e->s);
        if (!xi) {
            corral_val_t *c = tx == 's' ? node_new(a) : set_of(a, y->items[i], ep, true, depth);
            mark(a, c);
            corral_val_put(a, need(a, &out->added), e, c);
        } else if (tx == 'k') {
            cmp3_t c = {0};
            compare(a, xi, y->items[i], ep, depth + 1, &c);
            cmp3_attach(a, out, e, &c);
        }
    }
    for (size_t j = 0; j < x->n; j++) {
        corral_val_t *e = xe->items[j];
        if (!corral_val_get(ys, e->s)) {
            corral_val_t *c = tx == 's' ? node_new(a) : set_of(a, x->items[j], ep, true, depth);
            mark(a, c);
            corral_val_put(a, need(a, &out->removed), e, c);
        }
    }
}

static bool scalar(const corral_val_t *v)
{
    return v->kind != CORRAL_VAL_MAP && v->kind != CORRAL_VAL_SEQ;
}

static corral_val_t *field_key(corral_arena_t *a, const char *k)
{
    return corral_val_new_str(a, corral_arena_printf(a, "f:%s", k));
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
            mark(a, need(a, &out->modified));
        return;
    }
    for (size_t i = 0; i < y->n; i++) {
        const char *k = y->pairs[i].key->s;
        const corral_val_t *xv = corral_val_get(x, k), *yv = y->pairs[i].val;
        if (xv && scalar(xv) && scalar(yv) && corral_val_equal(xv, yv))
            continue; /* the common case: nothing to record */
        const char *cp = sub_path(a, path, k);
        if (!xv) {
            corral_val_put(a, need(a, &out->added), field_key(a, k),
                           set_of(a, yv, cp, true, depth + 1));
            continue;
        }
        cmp3_t c = {0};
        compare(a, xv, yv, cp, depth + 1, &c);
        if ((c.added && c.added->n) || (c.modified && c.modified->n) || (c.removed && c.removed->n))
            cmp3_attach(a, out, field_key(a, k), &c);
    }
    for (size_t i = 0; i < x->n; i++) {
        const char *k = x->pairs[i].key->s;
        if (!corral_val_get(y, k))
            corral_val_put(a, need(a, &out->removed), field_key(a, k),
                           set_of(a, x->pairs[i].val, sub_path(a, path, k), true, depth + 1));
    }
}

void corral__fields_compare(corral_arena_t *a, const corral_val_t *old, const corral_val_t *new_,
                            corral_val_t **added, corral_val_t **modified, corral_val_t **removed)
{
    cmp3_t c = {0};
    corral_val_t *empty = node_new(a);
    compare(a, old ? old : empty, new_ ? new_ : empty, "", 0, &c);
    *added = need(a, &c.added);
    *modified = need(a, &c.modified);
    *removed = need(a, &c.removed);
}

/* --- fields the server owns -------------------------------------------------------------- */

/* A new map with m's pairs (the values shared). */
static corral_val_t *shallow(corral_arena_t *a, const corral_val_t *m)
{
    corral_val_t *c = node_new(a);
    for (size_t i = 0; m && m->kind == CORRAL_VAL_MAP && i < m->n; i++)
        corral_val_put(a, c, m->pairs[i].key, m->pairs[i].val);
    return c;
}

corral_val_t *corral__fields_strip(corral_arena_t *a, const corral_val_t *set, int scope)
{
    corral_val_t *s = shallow(a, set);
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
        m = shallow(a, m);
        corral_val_set(a, s, "f:metadata", m);
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

/* Finding list items by path element ("k:{...}" or "v:<json>") without a
 * scan per element: the items' elements, in canonical JSON, are put in a
 * map once per list and key names (elements of one list name the same keys
 * unless someone crafted them; a rebuild per change of names is bounded by
 * MAX_REBUILDS per call). */
#define MAX_REBUILDS 16

typedef struct finder {
    const corral_val_t *list;
    char kind;         /* 'k' or 'v' */
    const char *names; /* the key names the map was built for ("name,port") */
    corral_val_t *map; /* element -> index + 1 (an INT) */
    int rebuilds;
} finder_t;

static const char *names_of(corral_arena_t *a, const corral_val_t *want)
{
    corral_buf_t b;
    corral_buf_init(&b);
    for (size_t k = 0; want->kind == CORRAL_VAL_MAP && k < want->n; k++)
        corral_buf_printf(&b, "%s%s", k ? "," : "", want->pairs[k].key->s);
    const char *s = corral_arena_strdup(a, corral_buf_str(&b));
    corral_buf_fini(&b);
    return s;
}

/* The canonical element of item for keys named as in want. */
static const char *elem_of(corral_arena_t *a, char kind, const corral_val_t *want,
                           const corral_val_t *item)
{
    if (kind == 'v')
        return json_of(a, item);
    corral_val_t *kv = node_new(a);
    for (size_t k = 0; k < want->n; k++) {
        const corral_val_t *have = corral_val_get(item, want->pairs[k].key->s);
        corral_val_put(a, kv, want->pairs[k].key,
                       have ? (corral_val_t *)have : corral_val_new(a, CORRAL_VAL_NULL));
    }
    return json_of(a, kv);
}

/* The index of the item named by path element e, or -1. */
static long find_item(corral_arena_t *a, finder_t *f, const char *e)
{
    corral_val_t *want = NULL;
    if (corral_json_parse(a, e + 2, strlen(e + 2), &want, NULL) != 0 || !want)
        return -1;
    if (e[0] == 'k' && want->kind != CORRAL_VAL_MAP)
        return -1;
    const char *names = e[0] == 'k' ? names_of(a, want) : "";
    if (!f->map || f->kind != e[0] || strcmp(f->names, names) != 0) {
        if (f->rebuilds++ >= MAX_REBUILDS)
            return -1;
        f->kind = e[0];
        f->names = names;
        f->map = node_new(a);
        for (size_t i = 0; i < f->list->n; i++) {
            const char *el = elem_of(a, e[0], want, f->list->items[i]);
            if (!corral_val_get(f->map, el))
                corral_val_set(a, f->map, el, corral_val_new_int(a, (int64_t)i + 1));
        }
    }
    const corral_val_t *at = corral_val_get(f->map, json_of(a, want));
    return at ? (long)at->u.i - 1 : -1;
}

static void remove_fields(corral_arena_t *a, corral_val_t *obj, const corral_val_t *set,
                          const corral_val_t *keep, int depth);

/* Remove the items set names whole from list obj (one compaction at the
 * end), and fields inside the others. */
static void remove_items(corral_arena_t *a, corral_val_t *obj, const corral_val_t *set,
                         const corral_val_t *keep, int depth)
{
    finder_t f = {.list = obj};
    bool *gone = NULL;
    for (size_t i = 0; i < set->n; i++) {
        const char *e = set->pairs[i].key->s;
        const corral_val_t *sc = set->pairs[i].val;
        const corral_val_t *kc = keep ? corral_val_get(keep, e) : NULL;
        if (e[0] != 'k' && e[0] != 'v')
            continue;
        long at = find_item(a, &f, e);
        if (at < 0)
            continue;
        if (member(sc) && corral__fields_empty(kc)) {
            if (!gone)
                gone = corral_arena_alloc(a, obj->n * sizeof(*gone));
            gone[at] = true;
        } else {
            remove_fields(a, obj->items[at], sc, kc, depth + 1);
        }
    }
    size_t o = 0;
    for (size_t i = 0; gone && i < obj->n; i++) {
        if (!gone[i])
            obj->items[o++] = obj->items[i];
    }
    if (gone)
        obj->n = o;
}

static void remove_fields(corral_arena_t *a, corral_val_t *obj, const corral_val_t *set,
                          const corral_val_t *keep, int depth)
{
    if (!obj || depth > MAX_DEPTH)
        return;
    if (obj->kind == CORRAL_VAL_SEQ) {
        remove_items(a, obj, set, keep, depth);
        return;
    }
    for (size_t i = 0; obj->kind == CORRAL_VAL_MAP && i < set->n; i++) {
        const char *e = set->pairs[i].key->s;
        const corral_val_t *sc = set->pairs[i].val;
        const corral_val_t *kc = keep ? corral_val_get(keep, e) : NULL;
        if (e[0] != 'f')
            continue;
        corral_val_t *v = corral_val_get(obj, e + 2);
        if (member(sc) && corral__fields_empty(kc)) {
            corral_val_del(obj, e + 2);
        } else if (v) {
            size_t had = v->n;
            remove_fields(a, v, sc, kc, depth + 1);
            if (v->kind == CORRAL_VAL_MAP && had && !v->n)
                corral_val_del(obj, e + 2); /* emptied by the removal: omitted, as Go does */
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

/* Do two sets hold the same fields? (Their "." markers are shared nodes
 * or empty maps, so the value trees compare equal exactly then.) */
static bool sets_equal(const corral_val_t *x, const corral_val_t *y)
{
    return corral_val_equal(x, y);
}

static void entry_set(corral_arena_t *a, entry_t *e, corral_val_t *set)
{
    (void)a;
    if (!sets_equal(e->set, set))
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
