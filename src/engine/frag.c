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

static int model_id(corral_engine_t *e, const char *model)
{
    if (!model || !*model)
        return -1;
    uint32_t id;
    if (corral_hmap_get(&e->fr.model_ids, model, &id))
        return (int)id;
    id = (uint32_t)e->fr.model_ids.n;
    corral_hmap_put(&e->fr.model_ids, corral_arena_strdup(&e->keep, model), id);
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
    e->cy.epoch++;
    corral_free(e->fr.shapes);
    corral_free(e->fr.shape_models);
    e->fr.shapes = corral_calloc(n + 1, sizeof(*e->fr.shapes));
    e->fr.nshapes = 0;
    double total = 0;
    size_t nmodels = 0;
    for (size_t i = 0; i < n; i++) {
        total += shapes[i].weight > 0 ? shapes[i].weight : 0;
        nmodels += shapes[i].nmodels;
    }
    e->fr.shape_models = corral_calloc(nmodels + 1, sizeof(*e->fr.shape_models));
    e->fr.nshape_models = nmodels;
    nmodels = 0;
    for (size_t i = 0; i < n && total > 0; i++) {
        if (shapes[i].weight <= 0)
            continue;
        eshape_t *s = &e->fr.shapes[e->fr.nshapes++];
        s->cpu = shapes[i].cpu_milli;
        s->gpus = shapes[i].gpus;
        s->milli = shapes[i].gpus ? (shapes[i].gpu_milli ? shapes[i].gpu_milli : 1000) : 0;
        s->p = shapes[i].weight / total;
        s->nmodels = shapes[i].nmodels;
        s->models = e->fr.shape_models + nmodels;
        nmodels += s->nmodels;
        for (size_t j = 0; j < s->nmodels; j++)
            e->fr.shape_models[nmodels - s->nmodels + j] = model_id(e, shapes[i].models[j]);
    }
    double share = 0, gpu = 0;
    for (size_t i = 0; i < e->fr.nshapes; i++) {
        const eshape_t *s = &e->fr.shapes[i];
        gpu += s->gpus ? s->p : 0;
        share += s->gpus == 1 && s->milli < 1000 ? s->p : 0;
    }
    e->fr.share_permille = gpu > 0 ? (int)(1000.0 * share / gpu + 0.5) : 0;
    e->fr.workload_set = true;
    e->fr.frag_epoch++;
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
    for (size_t i = 0; i < e->fr.nshapes; i++) {
        const eshape_t *s = &e->fr.shapes[i];
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
    if (n->frag_epoch == e->fr.frag_epoch && n->frag_valid)
        return n->frag;
    uint16_t left[MAX_GPUS];
    node_left(n, left);
    n->frag =
        corral__frag_state(e, n->model, n->alloc.v[RES_CPU] - n->used.v[RES_CPU], left, n->ngpu);
    n->frag_epoch = e->fr.frag_epoch;
    n->frag_valid = true;
    n->nfrag_memo = n->frag_memo_next = 0;
    return n->frag;
}

static double frag_after(const corral_engine_t *e, const enode_t *n, const epod_t *p, uint64_t mask)
{
    uint16_t left[MAX_GPUS] = {0};
    node_left(n, left);
    for (int g = 0; g < n->ngpu; g++) {
        if (mask >> g & 1)
            left[g] = (uint16_t)(p->share ? left[g] - p->share : 0);
    }
    return corral__frag_state(
        e, n->model, n->alloc.v[RES_CPU] - n->used.v[RES_CPU] - p->req.v[RES_CPU], left, n->ngpu);
}

/* The fragment of n after placing p on the GPUs in mask. The result depends
 * on the node's state, p's cpu and share, and mask only; callers have made
 * the node's cached fragment current (corral__node_frag), which is what
 * keeps the memo valid. */
double corral__frag_after(corral_engine_t *e, enode_t *n, const epod_t *p, uint64_t mask)
{
    bool current = n->frag_valid && n->frag_epoch == e->fr.frag_epoch;
    for (int i = 0; current && i < n->nfrag_memo; i++) {
        const struct frag_memo *m = &n->frag_memo[i];
        if (m->cpu == p->req.v[RES_CPU] && m->mask == mask && m->share == p->share)
            return m->after;
    }
    double after = frag_after(e, n, p, mask);
    if (current) {
        /* Slots fill in order after a reset, then the oldest is replaced. */
        n->frag_memo[n->frag_memo_next] =
            (struct frag_memo){p->req.v[RES_CPU], mask, p->share, after};
        n->frag_memo_next = (uint8_t)((n->frag_memo_next + 1) % 4);
        if (n->nfrag_memo < 4)
            n->nfrag_memo++;
    }
    return after;
}

double corral_engine_frag(corral_engine_t *e, double *idle_milli)
{
    double frag = 0, idle = 0;
    for (size_t i = 0; i < e->nd.nodes.n; i++) {
        enode_t *n = &e->nd.nodes.items[i];
        if (!n->alive)
            continue;
        frag += corral__node_frag(e, n);
        idle += (double)(n->alloc.v[RES_GPU] - n->used.v[RES_GPU]);
    }
    if (idle_milli)
        *idle_milli = idle;
    return frag;
}

void corral__wshape_count(corral_engine_t *e, epod_t *p, int sign)
{
    if (sign > 0) {
        bool bound = (p->gpus || p->share) && e->pd.profs.items[p->prof].model_bound;
        wshape_t w = {NULL,
                      p->req.v[RES_CPU],
                      p->share ? 1 : p->gpus,
                      p->share ? p->share : (p->gpus ? 1000 : 0),
                      0,
                      bound ? p->prof : NONE};
        char key[80];
        snprintf(key, sizeof(key), "%lld|%d|%d|%u", (long long)w.cpu, w.gpus, w.milli, w.prof);
        uint32_t j;
        if (!corral_hmap_get(&e->fr.wshape_by_key, key, &j)) {
            w.key = corral_strdup(key);
            if (w.prof != NONE)
                corral__prof_ref(e, w.prof); /* the shape names the profile's models */
            if (e->fr.wshape_free.n) {
                j = e->fr.wshape_free.items[--e->fr.wshape_free.n];
                e->fr.wshapes.items[j] = w;
            } else {
                j = (uint32_t)e->fr.wshapes.n;
                VEC_PUSH(e->fr.wshapes, w);
            }
            corral_hmap_put(&e->fr.wshape_by_key, w.key, j);
        }
        p->wshape = j;
    }
    wshape_t *ws = &e->fr.wshapes.items[p->wshape];
    ws->count += sign;
    e->fr.wshape_total += sign;
    e->fr.wshape_churn++;
    if (ws->count == 0) {
        /* No pod of this shape is held: the slot goes back (a derived
         * workload skips shapes with no pods, so nothing else names it). */
        corral_hmap_del(&e->fr.wshape_by_key, ws->key);
        corral_free(ws->key);
        ws->key = NULL;
        if (ws->prof != NONE)
            corral__prof_unref(e, ws->prof);
        ws->prof = NONE;
        VEC_PUSH(e->fr.wshape_free, p->wshape);
    }
}

/* The GPU models a profile allows: its nodeSelector value for the model
 * label, else the values of the first In (or =) requirement on it. Other
 * forms (NotIn, several terms) count as no constraint here. */
static size_t prof_models(const eprof_t *pr, const char **out)
{
    for (size_t i = 0; i < pr->nselector; i++) {
        if (strcmp(pr->selector[i].key, MODEL_LABEL) == 0) {
            if (out)
                out[0] = pr->selector[i].value;
            return 1;
        }
    }
    for (size_t t = 0; t < pr->nrequired && t < 1; t++) {
        const corral_selector_t *sel = &pr->required[t].exprs;
        for (size_t j = 0; j < sel->n; j++) {
            const corral_sel_req_t *r = &sel->reqs[j];
            if (strcmp(r->key, MODEL_LABEL) != 0 ||
                (r->op != CORRAL_SEL_IN && r->op != CORRAL_SEL_EQ))
                continue;
            for (size_t k = 0; out && k < r->nvalues; k++)
                out[k] = r->values[k];
            return r->nvalues;
        }
    }
    return 0;
}

/* Without a workload from the caller: the shapes of the pods we hold,
 * rebuilt when more than 1% of them changed since the last time (each
 * rebuild invalidates every node's cached fragmentation). */
void corral__derive_workload(corral_engine_t *e)
{
    if (e->fr.workload_set)
        return;
    if (e->fr.derived && e->fr.wshape_churn * 100 <= e->fr.wshape_base)
        return;
    e->fr.derived = true;
    e->fr.wshape_churn = 0;
    e->fr.wshape_base = e->fr.wshape_total;
    corral_shape_t *sh = corral_calloc(e->fr.wshapes.n + 1, sizeof(*sh));
    size_t total = 0, used = 0;
    for (size_t i = 0; i < e->fr.wshapes.n; i++) {
        const wshape_t *w = &e->fr.wshapes.items[i];
        if (w->count > 0 && w->prof != NONE)
            total += prof_models(&e->pd.profs.items[w->prof], NULL);
    }
    const char **models = corral_calloc(total + 1, sizeof(*models));
    size_t n = 0;
    for (size_t i = 0; i < e->fr.wshapes.n; i++) {
        const wshape_t *w = &e->fr.wshapes.items[i];
        if (w->count <= 0)
            continue;
        const char **m = models + used;
        size_t nm = w->prof == NONE ? 0 : prof_models(&e->pd.profs.items[w->prof], m);
        used += nm;
        sh[n++] = (corral_shape_t){w->cpu, w->gpus, w->milli, m, nm, (double)w->count};
    }
    corral_engine_set_workload(e, sh, n);
    e->fr.workload_set = false; /* derived, not given: re-derive when pods change */
    corral_free(models);
    corral_free(sh);
}

/*
 * Model pressure. A shape that may use only some GPU models needs their
 * capacity. In the workload's proportions, the GPU demand of such shapes
 * (split evenly over the models each allows) against a model's share of the
 * cluster's GPUs says how much the model is wanted by pods that cannot go
 * elsewhere: pressure = (constrained demand share) / (capacity share), in
 * tenths. Pods that may run on any model take the least wanted first. FGD's
 * measure does not see this: it counts which idle capacity is unusable, not
 * whose it should be (docs/efficiency.md: on gpuspec33 this took Corral from
 * 12.87% to 6.02% unallocated).
 */
static void pressure_refresh(corral_engine_t *e)
{
    size_t nm = e->fr.model_ids.n;
    double *cap = corral_calloc(nm + 1, sizeof(double));
    double *need = corral_calloc(nm + 1, sizeof(double));
    double total_cap = 0, total_dem = 0;
    for (size_t i = 0; i < e->nd.nodes.n; i++) {
        const enode_t *n = &e->nd.nodes.items[i];
        if (!n->alive || n->ngpu == 0)
            continue;
        total_cap += n->ngpu;
        if (n->model >= 0)
            cap[n->model] += n->ngpu;
    }
    for (size_t i = 0; i < e->fr.nshapes; i++) {
        const eshape_t *s = &e->fr.shapes[i];
        double dem = s->p * s->gpus * s->milli / 1000.0;
        total_dem += dem;
        for (size_t j = 0; j < s->nmodels; j++) {
            if (s->models[j] >= 0)
                need[s->models[j]] += dem / (double)s->nmodels;
        }
    }
    corral_free(e->fr.pressure);
    e->fr.pressure = corral_calloc(nm + 1, sizeof(*e->fr.pressure));
    e->fr.npressure = nm;
    for (size_t m = 0; m < nm && total_dem > 0 && total_cap > 0; m++) {
        if (cap[m] <= 0)
            continue;
        double r = (need[m] / total_dem) / (cap[m] / total_cap);
        e->fr.pressure[m] = (int32_t)(r > 1000 ? 10000 : r * 10 + 0.5);
    }
    corral_free(cap);
    corral_free(need);
    e->fr.pressure_epoch = e->fr.frag_epoch;
    e->fr.pressure_nodes = e->nd.nodes_ver;
}

int corral__model_pressure(corral_engine_t *e, int model)
{
    if (model < 0 || e->fr.nshapes == 0)
        return 0;
    if (!e->fr.pressure || e->fr.pressure_epoch != e->fr.frag_epoch ||
        e->fr.pressure_nodes != e->nd.nodes_ver)
        pressure_refresh(e);
    return (size_t)model < e->fr.npressure ? e->fr.pressure[model] : 0;
}
