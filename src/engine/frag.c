/*
 * GPU fragmentation against a workload (Weng et al., "Beware of
 * Fragmentation", ATC'23): given the pod shapes a cluster typically receives,
 * with their frequencies p_m, a node's idle GPU capacity counts as a fragment
 * for shape m when m could not use it:
 *
 *   - m asks for no GPU, or may not use this node's GPU model, or the node
 *     lacks the cpu or the GPUs m needs: all the node's idle GPU milli;
 *   - otherwise: only the per-GPU leftovers smaller than m's per-GPU share.
 *
 * node fragment = sum_m p_m * fragment(node, m); the cluster's is the sum over
 * nodes. Policies use the change in a node's fragment caused by a placement.
 *
 * The workload is set by the caller (the simulator derives it from the trace);
 * without one, it is derived from the pods in the snapshot at cycle start.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine_int.h"

#define MODEL_LABEL "nvidia.com/gpu.product"

static int model_id(corral_engine_t *e, const char *model)
{
    if (!model || !*model)
        return -1;
    uint32_t id;
    if (corral_hmap_get(&e->model_ids, model, &id))
        return (int)id;
    id = (uint32_t)e->model_ids.n;
    corral_hmap_put(&e->model_ids, corral_arena_strdup(&e->keep, model), id);
    return (int)id;
}

int corral__node_model(corral_engine_t *e, const enode_t *n)
{
    for (size_t i = 0; i < n->nlabels; i++) {
        if (strcmp(n->labels[i].key, MODEL_LABEL) == 0)
            return model_id(e, n->labels[i].value);
    }
    return -1;
}

int corral_engine_set_workload(corral_engine_t *e, const corral_shape_t *shapes, size_t n)
{
    corral_free(e->shapes);
    e->shapes = corral_calloc(n + 1, sizeof(*e->shapes));
    e->nshapes = 0;
    double total = 0;
    for (size_t i = 0; i < n; i++)
        total += shapes[i].weight > 0 ? shapes[i].weight : 0;
    for (size_t i = 0; i < n && total > 0; i++) {
        if (shapes[i].weight <= 0)
            continue;
        eshape_t *s = &e->shapes[e->nshapes++];
        s->cpu = shapes[i].cpu_milli;
        s->gpus = shapes[i].gpus;
        s->milli = shapes[i].gpus ? (shapes[i].gpu_milli ? shapes[i].gpu_milli : 1000) : 0;
        s->p = shapes[i].weight / total;
        s->nmodels = shapes[i].nmodels < 8 ? shapes[i].nmodels : 8;
        for (size_t j = 0; j < s->nmodels; j++)
            s->models[j] = model_id(e, shapes[i].models[j]);
    }
    e->workload_set = true;
    e->frag_epoch++;
    return 0;
}

static bool shape_may_use(const eshape_t *s, int model)
{
    if (s->nmodels == 0)
        return true;
    for (size_t j = 0; j < s->nmodels; j++) {
        if (s->models[j] == model)
            return true;
    }
    return false;
}

/* The fragment of one node state: cpu left and per-GPU milli left. */
double corral__frag_state(const corral_engine_t *e, int model, int64_t cpu_left,
                          const uint16_t *left, int ngpu)
{
    int64_t idle = 0;
    for (int g = 0; g < ngpu; g++)
        idle += left[g];
    if (idle == 0)
        return 0;
    double frag = 0;
    for (size_t i = 0; i < e->nshapes; i++) {
        const eshape_t *s = &e->shapes[i];
        if (s->gpus == 0 || !shape_may_use(s, model) || cpu_left < s->cpu) {
            frag += s->p * (double)idle;
            continue;
        }
        int fit = 0;
        int64_t small = 0;
        for (int g = 0; g < ngpu; g++) {
            if (left[g] >= s->milli)
                fit++;
            else
                small += left[g];
        }
        frag += s->p * (double)(fit >= s->gpus ? small : idle);
    }
    return frag;
}

/* Per-GPU milli left of node n, with GPUs in `taken` counted as used. */
static void node_left(const enode_t *n, uint16_t *left)
{
    for (int g = 0; g < n->ngpu; g++)
        left[g] = (uint16_t)(1000 - n->gpu_used[g]);
}

double corral__node_frag(corral_engine_t *e, enode_t *n)
{
    if (n->frag_epoch == e->frag_epoch && n->frag_valid)
        return n->frag;
    uint16_t left[MAX_GPUS];
    node_left(n, left);
    n->frag =
        corral__frag_state(e, n->model, n->alloc.v[RES_CPU] - n->used.v[RES_CPU], left, n->ngpu);
    n->frag_epoch = e->frag_epoch;
    n->frag_valid = true;
    return n->frag;
}

double corral__frag_after(corral_engine_t *e, const enode_t *n, const epod_t *p, uint64_t mask)
{
    uint16_t left[MAX_GPUS];
    node_left(n, left);
    for (int g = 0; g < n->ngpu; g++) {
        if (mask >> g & 1)
            left[g] = (uint16_t)(p->share ? left[g] - p->share : 0);
    }
    return corral__frag_state(
        e, n->model, n->alloc.v[RES_CPU] - n->used.v[RES_CPU] - p->req.v[RES_CPU], left, n->ngpu);
}

double corral_engine_frag(corral_engine_t *e, double *idle_milli)
{
    double frag = 0, idle = 0;
    for (size_t i = 0; i < e->nodes.n; i++) {
        enode_t *n = &e->nodes.items[i];
        if (!n->alive)
            continue;
        frag += corral__node_frag(e, n);
        idle += (double)(n->alloc.v[RES_GPU] - n->used.v[RES_GPU]);
    }
    if (idle_milli)
        *idle_milli = idle;
    return frag;
}

/* Without a workload from the caller: the shapes of the pods we hold. */
void corral__derive_workload(corral_engine_t *e)
{
    if (e->workload_set || e->derived_version == e->pods_version)
        return;
    e->derived_version = e->pods_version;
    corral_shape_t *sh = corral_calloc(e->pods.n + 1, sizeof(*sh));
    size_t n = 0;
    corral_hmap_t seen;
    corral_hmap_init(&seen);
    corral_arena_t keys;
    corral_arena_init(&keys);
    for (size_t i = 0; i < e->pods.n; i++) {
        const epod_t *p = &e->pods.items[i];
        if (!p->alive)
            continue;
        corral_shape_t s = {p->req.v[RES_CPU],
                            p->share ? 1 : p->gpus,
                            p->share ? p->share : (p->gpus ? 1000 : 0),
                            NULL,
                            0,
                            1};
        char *key =
            corral_arena_printf(&keys, "%lld|%d|%d", (long long)s.cpu_milli, s.gpus, s.gpu_milli);
        uint32_t j;
        if (corral_hmap_get(&seen, key, &j)) {
            sh[j].weight += 1;
        } else {
            corral_hmap_put(&seen, key, (uint32_t)n);
            sh[n++] = s;
        }
    }
    corral_engine_set_workload(e, sh, n);
    e->workload_set = false; /* derived, not given: re-derive when pods change */
    corral_hmap_fini(&seen);
    corral_arena_fini(&keys);
    corral_free(sh);
}
