/*
 * Predicates: can this pod run on this node at all (unschedulable, taints,
 * nodeSelector, required node affinity: kube-scheduler's order and matching
 * rules), and does it fit the node's free resources now (cpu, memory, pods,
 * whole GPUs or a GPU share, other extended resources).
 *
 * The static checks depend only on the pod's constraints (its interned
 * profile) and the node's labels/taints (its class), so each (profile, class)
 * pair is evaluated once for the engine's lifetime.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/engine_int.h"

#define UNSCHED_TAINT "node.kubernetes.io/unschedulable"

/* Kubernetes' ToleratesTaint. */
static bool tol_matches(const corral_toleration_t *t, const corral_taint_t *taint)
{
    if (t->effect && *t->effect && strcmp(t->effect, taint->effect) != 0)
        return false;
    if (t->key && *t->key && strcmp(t->key, taint->key) != 0)
        return false;
    if (t->op && strcmp(t->op, "Exists") == 0)
        return true;
    const char *tv = t->value ? t->value : "";
    const char *nv = taint->value ? taint->value : "";
    return strcmp(tv, nv) == 0;
}

bool corral__tolerates(const eprof_t *prof, const corral_taint_t *t)
{
    for (size_t i = 0; i < prof->ntols; i++) {
        if (tol_matches(&prof->tols[i], t))
            return true;
    }
    return false;
}

static const char *node_label(const char *key, void *ctx)
{
    const enode_t *n = ctx;
    for (size_t i = 0; i < n->nlabels; i++) {
        if (strcmp(n->labels[i].key, key) == 0)
            return n->labels[i].value;
    }
    return NULL;
}

static const char *node_field(const char *key, void *ctx)
{
    const enode_t *n = ctx;
    return strcmp(key, "metadata.name") == 0 ? n->name : NULL;
}

/* A node selector term: all expressions and fields hold. An empty term
 * matches nothing, as in Kubernetes. */
static bool term_matches(const corral_nsel_term_t *t, const enode_t *n)
{
    if (t->exprs.n == 0 && t->fields.n == 0)
        return false;
    return corral_sel_matches(&t->exprs, node_label, (void *)n) &&
           corral_sel_matches(&t->fields, node_field, (void *)n);
}

static bool affinity_ok(const eprof_t *prof, const enode_t *n)
{
    for (size_t i = 0; i < prof->nselector; i++) {
        const char *v = node_label(prof->selector[i].key, (void *)n);
        if (!v || strcmp(v, prof->selector[i].value) != 0)
            return false;
    }
    if (prof->nrequired == 0)
        return true;
    for (size_t i = 0; i < prof->nrequired; i++) {
        if (term_matches(&prof->required[i], n))
            return true;
    }
    return false;
}

static int eval_static(const eprof_t *prof, const enode_t *n)
{
    if (n->unschedulable) {
        corral_taint_t t = {UNSCHED_TAINT, NULL, "NoSchedule"};
        if (!corral__tolerates(prof, &t))
            return FIT_UNSCHED;
    }
    for (size_t i = 0; i < n->ntaints; i++) {
        const corral_taint_t *t = &n->taints[i];
        if (strcmp(t->effect, "PreferNoSchedule") == 0)
            continue;
        if (!corral__tolerates(prof, t))
            return FIT_TAINT + (int)i;
    }
    if (!affinity_ok(prof, n))
        return FIT_AFFINITY;
    return FIT_OK;
}

int corral__static_fit(corral_engine_t *e, const epod_t *p, const enode_t *n)
{
    eprof_t *prof = &e->profs.items[p->prof];
    if (prof->uses_fields)
        return eval_static(prof, n);
    if (prof->ncache <= n->cls) {
        size_t want = e->classes.n > n->cls ? e->classes.n : n->cls + 1;
        prof->cache = corral_realloc(prof->cache, want * sizeof(*prof->cache));
        memset(prof->cache + prof->ncache, 0, (want - prof->ncache) * sizeof(*prof->cache));
        prof->ncache = want;
    }
    int32_t c = prof->cache[n->cls];
    if (c == 0) {
        c = eval_static(prof, n) + 1;
        prof->cache[n->cls] = c;
    }
    return c - 1;
}

int corral__prefer_score(const eprof_t *prof, const enode_t *n)
{
    int s = 0;
    for (size_t i = 0; i < prof->npreferred; i++) {
        if (term_matches(&prof->preferred[i].pref, n))
            s += prof->preferred[i].weight;
    }
    for (size_t i = 0; i < n->ntaints; i++) {
        const corral_taint_t *t = &n->taints[i];
        if (strcmp(t->effect, "PreferNoSchedule") == 0 && !corral__tolerates(prof, t))
            s -= 100;
    }
    return s;
}

/* The backfill reservation's hold on node nid, if the pod must respect it. */
static const rvec_t *resv_hold(const corral_engine_t *e, uint32_t nid, uint64_t *mask)
{
    const reservation_t *r = &e->resv;
    for (size_t i = 0; i < r->n; i++) {
        if (r->nodes[i] == nid) {
            *mask = r->masks[i];
            return &r->res[i];
        }
    }
    *mask = 0;
    return NULL;
}

uint32_t corral__res_fit_x(corral_engine_t *e, const epod_t *p, const enode_t *n, bool use_resv,
                           uint64_t *mask)
{
    uint32_t miss = 0;
    uint32_t nid = (uint32_t)(n - e->nodes.items);
    bool own_nom = p->nom_node == nid;
    uint64_t rmask = 0;
    const rvec_t *held = use_resv ? resv_hold(e, nid, &rmask) : NULL;
    for (int d = 0; d < e->nres; d++) {
        if (d == RES_GPU || p->req.v[d] <= 0)
            continue;
        int64_t used = n->used.v[d] + n->nominated.v[d] - (own_nom ? p->req.v[d] : 0);
        if (held)
            used += held->v[d];
        if (used + p->req.v[d] > n->alloc.v[d])
            miss |= 1u << d;
    }
    *mask = 0;
    if (p->gpus || p->share) {
        uint64_t all = n->ngpu >= 64 ? ~0ULL : (1ULL << n->ngpu) - 1;
        uint64_t nom = n->nominated_mask & ~(own_nom ? p->nom_mask : 0);
        uint64_t blocked = n->whole_mask | nom | rmask;
        if (p->gpus) {
            uint64_t free = all & ~(blocked | n->share_mask);
            if (__builtin_popcountll(free) < p->gpus)
                miss |= 1u << RES_GPU;
            else if (!miss)
                *mask = p->gpus <= GPU_PICK_MAX
                            ? corral__gpu_pick(&e->nodes.items[nid], free, p->gpus)->set
                            : corral__pick_gpus(n, free, p->gpus);
        } else {
            enode_t view = *n;
            view.whole_mask = blocked;
            int g = corral__pick_share(&view, p->share);
            if (g < 0)
                miss |= MISS_GPU_SHARE;
            else if (!miss)
                *mask = 1ULL << g;
        }
    }
    return miss;
}

uint32_t corral__res_fit(corral_engine_t *e, const epod_t *p, const enode_t *n, uint64_t *mask)
{
    return corral__res_fit_x(e, p, n, false, mask);
}
