/*
 * LocalModelCache status, as KServe's local model controller computes it
 * (pkg/controller/v1alpha1/localmodel): the nodes of the cache's node groups
 * (corral_model_node_group_selects), each with a state: NodeNotReady when
 * the Node is not Ready, else its LocalModelNode's status.modelStatus for
 * the cache mapped to the Node* value (ModelDownloaded -> NodeDownloaded,
 * ...; absent: NodeDownloadPending); copies {available: NodeDownloaded,
 * total: nodes, failed: NodeDownloadError}; and the InferenceServices whose
 * predictor storageUri the cache holds (corral_storage_uri_match), by
 * namespace and name. The agents write the LocalModelNodes (docs/agent.md).
 *
 * The aggregation is a pure function; the pass runs with the PodGroup and
 * Queue status pass (status.c) and writes a cache's status only when it
 * differs, with a merge patch of the status subresource.
 */
#include <stdlib.h>
#include <string.h>

#include "controller/controller_int.h"

static bool node_ready(const corral_obj_t *node)
{
    const corral_conditions_t *cs = &node->u.node->conditions;
    for (size_t i = 0; i < cs->n; i++) {
        if (cs->items[i].type && strcmp(cs->items[i].type, "Ready") == 0)
            return cs->items[i].status && strcmp(cs->items[i].status, "True") == 0;
    }
    return false;
}

static const char *node_state(const char *model_status)
{
    static const char *const map[][2] = {
        {CORRAL_MODEL_DOWNLOADED, CORRAL_NODE_DOWNLOADED},
        {CORRAL_MODEL_DOWNLOADING, CORRAL_NODE_DOWNLOADING},
        {CORRAL_MODEL_DOWNLOAD_ERROR, CORRAL_NODE_DOWNLOAD_ERROR},
    };
    for (size_t i = 0; model_status && i < CORRAL_ARRAY_LEN(map); i++) {
        if (strcmp(model_status, map[i][0]) == 0)
            return map[i][1];
    }
    return CORRAL_NODE_DOWNLOAD_PENDING;
}

static const corral_obj_t *by_name(const corral_obj_t *const *l, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++) {
        if (l[i]->meta.name && strcmp(l[i]->meta.name, name) == 0)
            return l[i];
    }
    return NULL;
}

static bool in_groups(const corral_obj_t *cache, const corral__lmc_world_t *w,
                      const corral_obj_t *node)
{
    const corral_strlist_t *g = &cache->u.lmc->node_groups;
    for (size_t i = 0; i < g->n; i++) {
        const corral_obj_t *grp = by_name(w->groups, w->ngroups, g->items[i]);
        if (grp && corral_model_node_group_selects(grp, node->meta.name, &node->meta.labels))
            return true;
    }
    return false;
}

static int cmp_str(const void *x, const void *y)
{
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

static int cmp_isvc(const void *x, const void *y)
{
    const corral_obj_t *a = *(const corral_obj_t *const *)x, *b = *(const corral_obj_t *const *)y;
    int c = strcmp(a->meta.namespace, b->meta.namespace);
    return c ? c : strcmp(a->meta.name, b->meta.name);
}

/* The InferenceServices using the cache, sorted, as [{namespace, name}]. */
static corral_val_t *services(corral_arena_t *a, const corral_obj_t *cache,
                              const corral__lmc_world_t *w)
{
    size_t elem = sizeof(const corral_obj_t *);
    const corral_obj_t **hit = corral_arena_alloc(a, (w->nisvcs ? w->nisvcs : 1) * elem);
    size_t n = 0;
    for (size_t i = 0; i < w->nisvcs; i++) {
        const corral_obj_t *s = w->isvcs[i];
        if (s->meta.name && s->u.isvc && s->u.isvc->predictor.storage_uri &&
            corral_storage_uri_match(cache->u.lmc->source_model_uri,
                                     s->u.isvc->predictor.storage_uri))
            hit[n++] = s;
    }
    qsort(hit, n, elem, cmp_isvc);
    corral_val_t *l = corral_val_new(a, CORRAL_VAL_SEQ);
    for (size_t i = 0; i < n; i++) {
        corral_val_t *e = corral_val_new(a, CORRAL_VAL_MAP);
        corral_val_set(a, e, "namespace", corral_val_new_str(a, hit[i]->meta.namespace));
        corral_val_set(a, e, "name", corral_val_new_str(a, hit[i]->meta.name));
        corral_val_push(a, l, e);
    }
    return l;
}

corral_val_t *corral__lmc_status(corral_arena_t *a, const corral_obj_t *cache,
                                 const corral__lmc_world_t *w)
{
    const char **names = corral_arena_alloc(a, (w->nnodes ? w->nnodes : 1) * sizeof(*names));
    size_t n = 0;
    for (size_t i = 0; i < w->nnodes; i++) {
        if (w->nodes[i]->meta.name && in_groups(cache, w, w->nodes[i]))
            names[n++] = w->nodes[i]->meta.name;
    }
    qsort(names, n, sizeof(*names), cmp_str);
    corral_val_t *ns = corral_val_new(a, CORRAL_VAL_MAP);
    int64_t available = 0, failed = 0;
    for (size_t i = 0; i < n; i++) {
        const char *st = CORRAL_NODE_NOT_READY;
        if (node_ready(by_name(w->nodes, w->nnodes, names[i]))) {
            const corral_obj_t *lmn = by_name(w->lmnodes, w->nlmnodes, names[i]);
            st = node_state(lmn ? corral_strmap_get(&lmn->u.lmn->model_status, cache->meta.name)
                                : NULL);
        }
        available += strcmp(st, CORRAL_NODE_DOWNLOADED) == 0;
        failed += strcmp(st, CORRAL_NODE_DOWNLOAD_ERROR) == 0;
        corral_val_set(a, ns, names[i], corral_val_new_str(a, st));
    }
    corral_val_t *copies = corral_val_new(a, CORRAL_VAL_MAP);
    corral_val_set(a, copies, "available", corral_val_new_int(a, available));
    corral_val_set(a, copies, "total", corral_val_new_int(a, (int64_t)n));
    corral_val_set(a, copies, "failed", corral_val_new_int(a, failed));
    corral_val_t *st = corral_val_new(a, CORRAL_VAL_MAP);
    corral_val_set(a, st, "copies", copies);
    corral_val_set(a, st, "nodeStatus", ns);
    corral_val_set(a, st, "inferenceServices", services(a, cache, w));
    return st;
}

static int64_t int_at(const corral_val_t *v, const char *path)
{
    const corral_val_t *x = corral_val_dig(v, path);
    return x && x->kind == CORRAL_VAL_INT ? x->u.i : 0;
}

static bool same_list(const corral_val_t *old, const corral_val_t *want)
{
    size_t n = old && old->kind == CORRAL_VAL_SEQ ? old->n : 0;
    if (n != want->n)
        return false;
    for (size_t i = 0; i < n; i++) {
        const char *ons = corral_val_get_str(old->items[i], "namespace");
        const char *on = corral_val_get_str(old->items[i], "name");
        if (!ons || !on || strcmp(ons, corral_val_get_str(want->items[i], "namespace")) != 0 ||
            strcmp(on, corral_val_get_str(want->items[i], "name")) != 0)
            return false;
    }
    return true;
}

bool corral__lmc_status_same(const corral_val_t *old, const corral_val_t *want)
{
    static const char *const counts[] = {"copies.available", "copies.total", "copies.failed"};
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(counts); i++) {
        if (int_at(old, counts[i]) != int_at(want, counts[i]))
            return false;
    }
    const corral_val_t *ons = corral_val_get(old, "nodeStatus");
    const corral_val_t *wns = corral_val_get(want, "nodeStatus");
    if ((ons && ons->kind == CORRAL_VAL_MAP ? ons->n : 0) != wns->n)
        return false;
    for (size_t i = 0; i < wns->n; i++) {
        const char *o = corral_val_get_str(ons, wns->pairs[i].key->s);
        if (!o || strcmp(o, wns->pairs[i].val->s) != 0)
            return false;
    }
    return same_list(corral_val_get(old, "inferenceServices"),
                     corral_val_get(want, "inferenceServices"));
}

/* The merge patch from old to want: nodes gone are nulled, an empty list
 * removed (upstream's omitempty). */
static corral_val_t *patch_doc(corral_arena_t *a, const corral_val_t *old, corral_val_t *want)
{
    corral_val_t *st = corral_val_copy(a, want);
    const corral_val_t *ons = corral_val_get(old, "nodeStatus");
    corral_val_t *ns = corral_val_get(st, "nodeStatus");
    for (size_t i = 0; ons && ons->kind == CORRAL_VAL_MAP && i < ons->n; i++) {
        if (!corral_val_get(ns, ons->pairs[i].key->s))
            corral_val_set(a, ns, ons->pairs[i].key->s, corral_val_new(a, CORRAL_VAL_NULL));
    }
    if (corral_val_get(st, "inferenceServices")->n == 0)
        corral_val_set(a, st, "inferenceServices", corral_val_new(a, CORRAL_VAL_NULL));
    corral_val_t *doc = corral_val_new(a, CORRAL_VAL_MAP);
    corral_val_set(a, doc, "status", st);
    return doc;
}

static void collect(corral_arena_t *a, const corral__cache_t *cache, corral_kind_t k,
                    const corral_obj_t ***out, size_t *n)
{
    size_t cap = 0;
    for (size_t i = 0; i < cache->nslots; i++)
        cap += cache->slots[i] && cache->slots[i]->kind == k;
    const corral_obj_t **l = corral_arena_alloc(a, (cap ? cap : 1) * sizeof(const corral_obj_t *));
    *n = 0;
    for (size_t i = 0; i < cache->nslots; i++) {
        const corral__entry_t *e = cache->slots[i];
        if (e && e->kind == k && e->ev->obj)
            l[(*n)++] = e->ev->obj;
    }
    *out = l;
}

void corral__modelcache_sync(corral_controller_t *c)
{
    corral_arena_t a;
    corral_arena_init(&a);
    corral__lmc_world_t w;
    const corral_obj_t **caches;
    size_t ncaches;
    collect(&a, &c->cache, CORRAL_KIND_LOCALMODELCACHE, &caches, &ncaches);
    collect(&a, &c->cache, CORRAL_KIND_LOCALMODELNODEGROUP, &w.groups, &w.ngroups);
    collect(&a, &c->cache, CORRAL_KIND_NODE, &w.nodes, &w.nnodes);
    collect(&a, &c->cache, CORRAL_KIND_LOCALMODELNODE, &w.lmnodes, &w.nlmnodes);
    collect(&a, &c->cache, CORRAL_KIND_ISVC, &w.isvcs, &w.nisvcs);
    for (size_t i = 0; i < ncaches; i++) {
        const corral_obj_t *o = caches[i];
        if (o->meta.deletion_us || !o->u.lmc)
            continue;
        corral_val_t *want = corral__lmc_status(&a, o, &w);
        const corral_val_t *old = corral_val_get(o->raw, "status");
        if (corral__lmc_status_same(old, want))
            continue;
        corral_buf_t body;
        corral_buf_init(&body);
        corral_val_to_json(patch_doc(&a, old, want), &body, false);
        const char *path = corral__ctl_path(&a, o->info, NULL, o->meta.name, "status");
        long code = corral__ctl_send(c, "PATCH", path, "application/merge-patch+json", &body, NULL);
        corral_buf_fini(&body);
        if (code != 200 && code != 404)
            c->status_dirty = true; /* try again next pass */
    }
    corral_arena_fini(&a);
}
