/*
 * Nodes in the snapshot: adding or updating one (allocatable, labels,
 * taints, GPU topology), the free-GPU histogram and share gaps kept up to
 * date as nodes change, and the name order nodes are visited in.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine_int.h"

/* Count a partly used GPU (used in 1..999 milli) in the gap histogram. */
void corral__gap(corral_engine_t *e, int used, int sign)
{
    if (used > 0 && used < 1000)
        e->fr.gaps[(1000 - used) / 10] += sign;
}

int corral__free_whole(const enode_t *n)
{
    uint64_t all = n->ngpu >= 64 ? ~0ULL : (1ULL << n->ngpu) - 1;
    return __builtin_popcountll(all & ~(n->whole_mask | n->share_mask));
}

void corral__hist(corral_engine_t *e, const enode_t *n, int sign)
{
    if (n->alive)
        e->nd.free_hist[corral__free_whole(n)] += (uint32_t)sign;
}

int corral__max_free_whole(const corral_engine_t *e)
{
    for (int f = MAX_GPUS; f > 0; f--) {
        if (e->nd.free_hist[f])
            return f;
    }
    return 0;
}

static void node_topology(enode_t *n, const corral_obj_t *o, corral_diag_t *diag)
{
    const char *t = corral_strmap_get(&o->meta.annotations, CORRAL_GPU_TOPO_ANNOTATION);
    n->topo = NULL;
    if (!t || n->ngpu == 0)
        return;
    corral_gpu_topo_t topo;
    char why[200];
    if (corral_gpu_topo_parse(n->arena, t, &topo, why, sizeof(why)) != 0 || topo.n != n->ngpu) {
        if (diag)
            corral_diag_add(diag, CORRAL_SEV_WARNING, o->file, o->raw ? o->raw->line : 0, 0, NULL,
                            "node %s: GPU topology ignored (%s); GPUs treated as uniform", n->name,
                            topo.n != n->ngpu ? "size differs from nvidia.com/gpu" : why);
        return;
    }
    n->topo = topo.link;
}

static uint32_t new_node_slot(corral_engine_t *e, const char *name)
{
    enode_t n;
    memset(&n, 0, sizeof(n));
    n.name = corral_strdup(name);
    n.cls = NONE;
    uint32_t id;
    if (e->nd.node_free.n) {
        id = e->nd.node_free.items[--e->nd.node_free.n];
        e->nd.nodes.items[id] = n;
    } else {
        id = (uint32_t)e->nd.nodes.n;
        VEC_PUSH(e->nd.nodes, n);
    }
    corral_hmap_put(&e->nd.node_by_name, e->nd.nodes.items[id].name, id);
    e->nd.order_dirty = true;
    return id;
}

int corral__upsert_node(corral_engine_t *e, const corral_obj_t *o, corral_diag_t *diag)
{
    e->nd.nodes_ver++;
    const corral_node_t *src = o->u.node;
    uint32_t id;
    if (!corral_hmap_get(&e->nd.node_by_name, o->meta.name, &id))
        id = new_node_slot(e, o->meta.name);
    enode_t *n = &e->nd.nodes.items[id];
    if (!n->alive)
        e->nd.order_dirty = true;
    corral__hist(e, n, -1);
    n->alive = true;
    corral_arena_free(n->arena);
    n->arena = corral_arena_new();
    n->nlabels = o->meta.labels.n;
    n->labels = corral_arena_alloc(n->arena, (n->nlabels + 1) * sizeof(*n->labels));
    for (size_t i = 0; i < n->nlabels; i++) {
        n->labels[i].key = corral_arena_strdup(n->arena, o->meta.labels.items[i].key);
        n->labels[i].value = corral_arena_strdup(n->arena, o->meta.labels.items[i].value);
    }
    n->ntaints = src->ntaints;
    n->taints = corral_arena_alloc(n->arena, (n->ntaints + 1) * sizeof(*n->taints));
    for (size_t i = 0; i < n->ntaints; i++) {
        const corral_taint_t *t = &src->taints[i];
        n->taints[i].key = corral_arena_strdup(n->arena, t->key ? t->key : "");
        n->taints[i].value = t->value ? corral_arena_strdup(n->arena, t->value) : NULL;
        n->taints[i].effect = corral_arena_strdup(n->arena, t->effect ? t->effect : "");
    }
    n->unschedulable = src->unschedulable;
    const char *mcs = corral_strmap_get(&o->meta.annotations, CORRAL_MODEL_CACHES_ANNOTATION);
    n->model_caches = mcs && *mcs ? corral_arena_strdup(n->arena, mcs) : NULL;
    const char *beyond = corral__to_rvec(e, &src->allocatable, &n->alloc, NULL);
    if (beyond)
        corral__res_beyond(e, o, diag, CORRAL_SEV_WARNING, beyond,
                           "the node is used without it (pods asking for it are refused)");
    if (!corral_reslist_get(&src->allocatable, "pods"))
        n->alloc.v[RES_PODS] = 110; /* the kubelet's default */
    n->ngpu = (int)(n->alloc.v[RES_GPU] / 1000);
    if (n->ngpu > MAX_GPUS) {
        if (diag)
            corral_diag_add(diag, CORRAL_SEV_WARNING, o->file, o->raw ? o->raw->line : 0, 0,
                            "status.allocatable",
                            "node %s has %d GPUs; Corral places pods on "
                            "at most %d GPUs of a node, the other %d stay unused",
                            n->name, n->ngpu, MAX_GPUS, n->ngpu - MAX_GPUS);
        n->ngpu = MAX_GPUS;
    }
    n->alloc.v[RES_GPU] = (int64_t)n->ngpu * 1000;
    if (n->alloc.v[RES_CPU] > e->nd.max_node_cpu)
        e->nd.max_node_cpu = n->alloc.v[RES_CPU];
    if (n->alloc.v[RES_GPU] > e->nd.max_node_gpu)
        e->nd.max_node_gpu = n->alloc.v[RES_GPU];
    node_topology(n, o, diag);
    memset(n->picks, 0, sizeof(n->picks)); /* topology may have changed */
    n->frag_valid = false;
    uint32_t old_cls = n->cls;
    n->cls = corral__node_class(e, id);
    corral__cls_unref(e, old_cls);
    n->model = corral__node_model(e, n);
    corral__hist(e, n, 1);
    e->version = ++e->vseq;
    e->hn.hn_dirty = true;
    return 0;
}

static int cmp_node_name(const void *a, const void *b, void *ctx)
{
    const corral_engine_t *e = ctx;
    return strcmp(e->nd.nodes.items[*(const uint32_t *)a].name,
                  e->nd.nodes.items[*(const uint32_t *)b].name);
}

void corral__node_order(corral_engine_t *e)
{
    if (!e->nd.order_dirty)
        return;
    corral_free(e->nd.node_order);
    e->nd.node_order = corral_malloc((e->nd.nodes.n + 1) * sizeof(uint32_t));
    size_t k = 0;
    for (size_t i = 0; i < e->nd.nodes.n; i++) {
        if (e->nd.nodes.items[i].alive)
            e->nd.node_order[k++] = (uint32_t)i;
    }
    qsort_r(e->nd.node_order, k, sizeof(uint32_t), cmp_node_name, e);
    for (size_t i = 0; i < k; i++)
        e->nd.nodes.items[e->nd.node_order[i]].order = (uint32_t)i;
    e->nd.nnode_order = k;
    e->nd.order_dirty = false;
}
