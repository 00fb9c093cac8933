/*
 * Interning tables: resource names (the dimensions of rvec_t, and what
 * happens past the extended resources tracked), node classes (nodes with
 * equal labels, taints and unschedulable), pod profiles (interned node
 * constraints; static predicate results are cached per profile and node
 * class) and request classes (the failure memo's key). Classes, profiles and
 * request classes are reference counted: a slot is freed, and its id reused,
 * when nothing uses it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine_int.h"

int corral__res_index(corral_engine_t *e, const char *name)
{
    if (strcmp(name, "corral.dev/gpu-milli") == 0)
        return RES_GPU;
    for (int i = 0; i < e->nres; i++) {
        if (strcmp(e->res_names[i], name) == 0)
            return i;
    }
    if (e->nres >= RES_MAX)
        return -1; /* more extended resources than we track: the caller says so */
    e->res_names[e->nres] = corral_arena_strdup(&e->keep, name);
    return e->nres++;
}

/* Convert a resource list; GPUs become milli-GPUs. Without a mask (nodes,
 * pods, gangs) a zero quantity is the same as none and takes no dimension.
 * Returns the first resource that could not be tracked (it is left out of
 * *out), or NULL. */
const char *corral__to_rvec(corral_engine_t *e, const corral_reslist_t *l, rvec_t *out,
                            uint32_t *mask)
{
    const char *untracked = NULL;
    memset(out, 0, sizeof(*out));
    if (mask)
        *mask = 0;
    for (size_t i = 0; i < l->n; i++) {
        const char *name = l->items[i].name;
        if (!mask && corral_qty_sign(&l->items[i].qty) == 0)
            continue;
        int d = corral__res_index(e, name);
        if (d < 0) {
            if (!untracked)
                untracked = name;
            continue;
        }
        int64_t v = 0;
        if (d == RES_CPU)
            corral_qty_milli(&l->items[i].qty, &v);
        else if (strcmp(name, "nvidia.com/gpu") == 0)
            corral_qty_scaled(&l->items[i].qty, 3, &v);
        else
            corral_qty_value(&l->items[i].qty, &v);
        out->v[d] += v;
        if (mask)
            *mask |= 1u << d;
    }
    return untracked;
}

/* Report resource res of object o as beyond the extended resources tracked,
 * with what follows (consequence). */
void corral__res_beyond(const corral_engine_t *e, const corral_obj_t *o, corral_diag_t *diag,
                        int sev, const char *res, const char *consequence)
{
    if (!diag)
        return;
    corral_buf_t b;
    corral_buf_init(&b);
    for (int d = RES_FIXED; d < e->nres; d++)
        corral_buf_printf(&b, "%s%s", d > RES_FIXED ? ", " : "", e->res_names[d]);
    corral_diag_add(diag, sev, o->file, o->raw ? o->raw->line : 0, 0, NULL,
                    "%s %s: extended resource %s is one too many: Corral tracks at most %d "
                    "extended resources at once (%s); %s",
                    o->info->name, o->meta.name, res, RES_MAX - RES_FIXED, corral_buf_str(&b),
                    consequence);
    corral_buf_fini(&b);
}

static int cmp_kv(const void *a, const void *b)
{
    return strcmp(((const corral_kv_t *)a)->key, ((const corral_kv_t *)b)->key);
}

/* A node class nobody uses any more: its slot and its column of every
 * profile's predicate cache are freed for the next class. */
void corral__cls_unref(corral_engine_t *e, uint32_t id)
{
    if (id == NONE || --e->classes.items[id].refs > 0)
        return;
    ecls_t *c = &e->classes.items[id];
    corral_hmap_del(&e->cls_by_key, c->key);
    corral_free(c->key);
    c->key = NULL;
    for (size_t i = 0; i < e->profs.n; i++) {
        eprof_t *p = &e->profs.items[i];
        if (p->ncache > id)
            p->cache[id] = 0;
    }
    VEC_PUSH(e->cls_free, id);
}

/* Class key: sorted labels, taints, unschedulable. */
uint32_t corral__node_class(corral_engine_t *e, uint32_t nid)
{
    enode_t *n = &e->nodes.items[nid];
    corral_buf_t b;
    corral_buf_init(&b);
    qsort(n->labels, n->nlabels, sizeof(*n->labels), cmp_kv);
    for (size_t i = 0; i < n->nlabels; i++)
        corral_buf_printf(&b, "%s=%s\n", n->labels[i].key, n->labels[i].value);
    corral_buf_puts(&b, "|");
    for (size_t i = 0; i < n->ntaints; i++)
        corral_buf_printf(&b, "%s=%s:%s\n", n->taints[i].key,
                          n->taints[i].value ? n->taints[i].value : "", n->taints[i].effect);
    corral_buf_puts(&b, n->unschedulable ? "|U" : "|S");
    uint32_t id;
    if (!corral_hmap_get(&e->cls_by_key, corral_buf_str(&b), &id)) {
        ecls_t c = {corral_strdup(corral_buf_str(&b)), 0};
        if (e->cls_free.n) {
            id = e->cls_free.items[--e->cls_free.n];
            e->classes.items[id] = c;
        } else {
            id = (uint32_t)e->classes.n;
            VEC_PUSH(e->classes, c);
        }
        corral_hmap_put(&e->cls_by_key, c.key, id);
    }
    e->classes.items[id].refs++;
    corral_buf_fini(&b);
    return id;
}

static void key_sel(corral_buf_t *b, const corral_selector_t *s)
{
    for (size_t i = 0; i < s->n; i++) {
        corral_buf_printf(b, "%s~%d(", s->reqs[i].key, (int)s->reqs[i].op);
        for (size_t j = 0; j < s->reqs[i].nvalues; j++)
            corral_buf_printf(b, "%s,", s->reqs[i].values[j]);
        corral_buf_puts(b, ")");
    }
}

static void prof_key(const corral_pod_spec_t *sp, corral_buf_t *b)
{
    corral_kv_t *sel = corral_malloc((sp->node_selector.n + 1) * sizeof(*sel));
    if (sp->node_selector.n) {
        memcpy(sel, sp->node_selector.items, sp->node_selector.n * sizeof(*sel));
        qsort(sel, sp->node_selector.n, sizeof(*sel), cmp_kv);
    }
    for (size_t i = 0; i < sp->node_selector.n; i++)
        corral_buf_printf(b, "S%s=%s\n", sel[i].key, sel[i].value);
    corral_free(sel);
    const corral_node_affinity_t *na = &sp->node_affinity;
    for (size_t i = 0; i < na->nrequired; i++) {
        corral_buf_puts(b, "R");
        key_sel(b, &na->required[i].exprs);
        corral_buf_puts(b, "F");
        key_sel(b, &na->required[i].fields);
        corral_buf_puts(b, "\n");
    }
    for (size_t i = 0; i < na->npreferred; i++) {
        corral_buf_printf(b, "P%d", na->preferred[i].weight);
        key_sel(b, &na->preferred[i].pref.exprs);
        corral_buf_puts(b, "\n");
    }
    for (size_t i = 0; i < sp->tolerations.n; i++) {
        const corral_toleration_t *t = &sp->tolerations.items[i];
        corral_buf_printf(b, "T%s|%s|%s|%s\n", t->key ? t->key : "", t->op ? t->op : "",
                          t->value ? t->value : "", t->effect ? t->effect : "");
    }
}

static const char *kdup(corral_arena_t *a, const char *s)
{
    return s ? corral_arena_strdup(a, s) : NULL;
}

void corral__copy_sel(corral_arena_t *a, corral_selector_t *dst, const corral_selector_t *src)
{
    dst->n = src->n;
    dst->reqs = corral_arena_alloc(a, (src->n + 1) * sizeof(*dst->reqs));
    for (size_t i = 0; i < src->n; i++) {
        corral_sel_req_t *r = &dst->reqs[i];
        *r = src->reqs[i];
        r->key = kdup(a, src->reqs[i].key);
        r->values = corral_arena_alloc(a, (r->nvalues + 1) * sizeof(*r->values));
        for (size_t j = 0; j < r->nvalues; j++)
            r->values[j] = kdup(a, src->reqs[i].values[j]);
    }
}

static void copy_prof(eprof_t *p, const corral_pod_spec_t *sp)
{
    corral_arena_t *a = p->arena;
    p->nselector = sp->node_selector.n;
    p->selector = corral_arena_alloc(a, (p->nselector + 1) * sizeof(*p->selector));
    for (size_t i = 0; i < p->nselector; i++) {
        p->selector[i].key = kdup(a, sp->node_selector.items[i].key);
        p->selector[i].value = kdup(a, sp->node_selector.items[i].value);
        p->model_bound |= strcmp(p->selector[i].key, MODEL_LABEL) == 0;
    }
    const corral_node_affinity_t *na = &sp->node_affinity;
    p->nrequired = na->nrequired;
    p->required = corral_arena_alloc(a, (p->nrequired + 1) * sizeof(*p->required));
    for (size_t i = 0; i < na->nrequired; i++) {
        corral__copy_sel(a, &p->required[i].exprs, &na->required[i].exprs);
        corral__copy_sel(a, &p->required[i].fields, &na->required[i].fields);
        if (na->required[i].fields.n)
            p->uses_fields = true;
        for (size_t j = 0; j < p->required[i].exprs.n; j++)
            p->model_bound |= strcmp(p->required[i].exprs.reqs[j].key, MODEL_LABEL) == 0;
    }
    p->npreferred = na->npreferred;
    p->preferred = corral_arena_alloc(a, (p->npreferred + 1) * sizeof(*p->preferred));
    for (size_t i = 0; i < na->npreferred; i++) {
        p->preferred[i].weight = na->preferred[i].weight;
        corral__copy_sel(a, &p->preferred[i].pref.exprs, &na->preferred[i].pref.exprs);
        corral__copy_sel(a, &p->preferred[i].pref.fields, &na->preferred[i].pref.fields);
    }
    p->ntols = sp->tolerations.n;
    p->tols = corral_arena_alloc(a, (p->ntols + 1) * sizeof(*p->tols));
    for (size_t i = 0; i < p->ntols; i++) {
        const corral_toleration_t *t = &sp->tolerations.items[i];
        p->tols[i].key = kdup(a, t->key);
        p->tols[i].op = kdup(a, t->op ? t->op : "Equal");
        p->tols[i].value = kdup(a, t->value);
        p->tols[i].effect = kdup(a, t->effect);
    }
}

uint32_t corral__intern_prof(corral_engine_t *e, const corral_pod_spec_t *sp)
{
    corral_buf_t b;
    corral_buf_init(&b);
    prof_key(sp, &b);
    uint32_t id;
    if (!corral_hmap_get(&e->prof_by_key, corral_buf_str(&b), &id)) {
        eprof_t p;
        memset(&p, 0, sizeof(p));
        p.arena = corral_arena_new();
        p.key = corral_arena_strdup(p.arena, corral_buf_str(&b));
        copy_prof(&p, sp);
        if (e->prof_free.n) {
            id = e->prof_free.items[--e->prof_free.n];
            e->profs.items[id] = p;
        } else {
            id = (uint32_t)e->profs.n;
            VEC_PUSH(e->profs, p);
        }
        corral_hmap_put(&e->prof_by_key, e->profs.items[id].key, id);
    }
    e->profs.items[id].refs++;
    corral_buf_fini(&b);
    return id;
}

void corral__prof_ref(corral_engine_t *e, uint32_t id)
{
    e->profs.items[id].refs++;
}

/* Caches keyed by profile or request class ids (pending reasons, the
 * failure memo) check e->version: a freed id may come back meaning
 * something else, so freeing one starts a new version. */
static void ids_recycled(corral_engine_t *e)
{
    e->version = ++e->vseq;
}

void corral__prof_unref(corral_engine_t *e, uint32_t id)
{
    eprof_t *p = &e->profs.items[id];
    if (--p->refs > 0)
        return;
    corral_hmap_del(&e->prof_by_key, p->key);
    corral_arena_free(p->arena);
    corral_free(p->cache);
    memset(p, 0, sizeof(*p));
    VEC_PUSH(e->prof_free, id);
    ids_recycled(e);
}

void corral__set_str(char **dst, const char *src)
{
    corral_free(*dst);
    *dst = src ? corral_strdup(src) : NULL;
}

/* Pods with the same profile and request fit the same nodes (the failure
 * memo in cycle.c relies on it). */
uint32_t corral__intern_rcls(corral_engine_t *e, const epod_t *p)
{
    corral_buf_t b;
    corral_buf_init(&b);
    corral_buf_printf(&b, "%u|%u|%u", p->prof, p->gpus, p->share);
    for (int d = 0; d < e->nres; d++)
        corral_buf_printf(&b, "|%lld", (long long)p->req.v[d]);
    uint32_t id;
    if (!corral_hmap_get(&e->rcls_by_key, corral_buf_str(&b), &id)) {
        ercls_t c = {corral_strdup(corral_buf_str(&b)), 0};
        if (e->rcls_free.n) {
            id = e->rcls_free.items[--e->rcls_free.n];
            e->rclss.items[id] = c;
        } else {
            id = (uint32_t)e->rclss.n;
            VEC_PUSH(e->rclss, c);
        }
        corral_hmap_put(&e->rcls_by_key, c.key, id);
    }
    e->rclss.items[id].refs++;
    corral_buf_fini(&b);
    return id;
}

void corral__rcls_unref(corral_engine_t *e, uint32_t id)
{
    ercls_t *c = &e->rclss.items[id];
    if (--c->refs > 0)
        return;
    corral_hmap_del(&e->rcls_by_key, c->key);
    corral_free(c->key);
    c->key = NULL;
    VEC_PUSH(e->rcls_free, id);
    ids_recycled(e);
}
