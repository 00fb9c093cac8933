/*
 * Pods in the snapshot: a new or updated Pod, its requests (a pending pod
 * asking for more than the engine can track is refused), constraints and
 * group, the annotations the engine reads (gpu-ids, runtime-estimate,
 * min-runtime), and pods already bound to a node.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corral/timefmt.h"
#include "engine/engine_int.h"

#define ANN_GROUP    "scheduling.k8s.io/group-name"
#define ANN_VC_GROUP "scheduling.volcano.sh/group-name"
#define ANN_VC_QUEUE "scheduling.volcano.sh/queue-name"
#define ANN_GPU_IDS  "corral.dev/gpu-ids"
#define ANN_ESTIMATE "corral.dev/runtime-estimate"
#define ANN_MIN_RUN  "corral.dev/min-runtime"

/* Is a pod naming scheduler sched ours? The caller says which names are. */
static bool ours(const corral_engine_t *e, const char *sched)
{
    if (!e->pd.scheds_set)
        return true;
    for (size_t i = 0; i < e->pd.scheds.n; i++) {
        if (strcmp(e->pd.scheds.items[i], sched ? sched : "") == 0)
            return true;
    }
    return false;
}

static int64_t ann_duration(const corral_obj_t *o, const char *key, int64_t dflt,
                            corral_diag_t *diag)
{
    const char *s = corral_strmap_get(&o->meta.annotations, key);
    int64_t ns;
    if (!s)
        return dflt;
    if (corral_duration_parse(s, strlen(s), &ns) != 0) {
        if (diag)
            corral_diag_add(diag, CORRAL_SEV_ERROR, o->file, o->raw ? o->raw->line : 0, 0,
                            "metadata.annotations", "%s: \"%s\" is not a duration like 90m", key,
                            s);
        return dflt;
    }
    return ns;
}

/* GPU ids from the annotation: a bitmask, or 0 with an error reported. */
static uint64_t ann_gpu_ids(const corral_obj_t *o, const enode_t *n, corral_diag_t *diag)
{
    const char *s = corral_strmap_get(&o->meta.annotations, ANN_GPU_IDS);
    uint64_t mask = 0;
    if (!s)
        return 0;
    for (const char *p = s; *p;) {
        char *end;
        long g = strtol(p, &end, 10);
        if (end == p || g < 0 || g >= n->ngpu) {
            if (diag)
                corral_diag_add(diag, CORRAL_SEV_ERROR, o->file, o->raw ? o->raw->line : 0, 0,
                                "metadata.annotations",
                                "%s: \"%s\" must list GPU indices 0..%d of node %s", ANN_GPU_IDS, s,
                                n->ngpu - 1, n->name);
            return 0;
        }
        mask |= 1ULL << g;
        p = *end == ',' ? end + 1 : end;
        if (*end && *end != ',')
            break;
    }
    return mask;
}

static uint32_t new_pod_slot(corral_engine_t *e)
{
    if (e->pd.pod_free.n)
        return e->pd.pod_free.items[--e->pd.pod_free.n];
    epod_t p;
    memset(&p, 0, sizeof(p));
    VEC_PUSH(e->pd.pods, p);
    return (uint32_t)(e->pd.pods.n - 1);
}

/* A pod's requests. A pending pod that asks for what the engine cannot
 * track is refused (CORRAL_ETOOBIG, said to diag); a running one is taken
 * without it (nothing pending can ask for it, so nothing overcommits). */
static int pod_requests(corral_engine_t *e, epod_t *p, const corral_obj_t *o, bool bound,
                        corral_diag_t *diag)
{
    const corral_pod_t *src = o->u.pod;
    corral_arena_t tmp;
    corral_arena_init(&tmp);
    corral_reslist_t req;
    corral_pod_requests(&tmp, &src->spec, &req);
    const char *beyond = corral__to_rvec(e, &req, &p->req, NULL);
    int rc = 0;
    if (beyond) {
        corral__res_beyond(e, o, diag, bound ? CORRAL_SEV_WARNING : CORRAL_SEV_ERROR, beyond,
                           bound ? "the pod is counted without it"
                                 : "the pod is not scheduled (fewer kinds of extended resources "
                                   "in the cluster, or a scheduler restart, make room)");
        rc = bound ? 0 : CORRAL_ETOOBIG;
    }
    const corral_qty_t *whole = corral_reslist_get(&req, "nvidia.com/gpu");
    const corral_qty_t *share = corral_reslist_get(&req, "corral.dev/gpu-milli");
    int64_t v = 0;
    if (whole && corral_qty_value(whole, &v) == 0 && v > 0) {
        p->gpus = (uint16_t)(v > MAX_GPUS ? MAX_GPUS + 1 : v); /* more: fits no node */
        p->req.v[RES_GPU] = v * 1000;
    } else if (share && corral_qty_value(share, &v) == 0 && v > 0) {
        if (v > 999 && !bound && rc == 0) {
            if (diag)
                corral_diag_add(diag, CORRAL_SEV_ERROR, o->file, o->raw ? o->raw->line : 0, 0,
                                "spec.containers",
                                "pod %s asks for %lld corral.dev/gpu-milli "
                                "over its containers; a share is of one GPU (at most 999): ask "
                                "for nvidia.com/gpu instead",
                                o->meta.name, (long long)v);
            rc = CORRAL_ETOOBIG;
        }
        p->share = (uint16_t)(v > 1000 ? 1000 : v);
    }
    p->req.v[RES_PODS] = 1;
    corral_arena_fini(&tmp);
    return rc;
}

static void pod_group(corral_engine_t *e, uint32_t pid, const corral_obj_t *o)
{
    epod_t *p = &e->pd.pods.items[pid];
    const char *gname = corral_strmap_get(&o->meta.annotations, ANN_GROUP);
    if (!gname)
        gname = corral_strmap_get(&o->meta.annotations, ANN_VC_GROUP);
    uint32_t gid;
    if (gname && *gname) {
        gid = corral__group_get(e, p->ns, gname, false);
    } else {
        gid = corral__group_get(e, p->ns, p->name, true);
        egroup_t *g = &e->pd.groups.items[gid];
        const char *q = corral_strmap_get(&o->meta.annotations, ANN_VC_QUEUE);
        corral__set_str(&g->queue_name, q && *q ? q : "default");
        g->queue_ver = 0;
        corral__set_str(&g->pc_name, o->u.pod->spec.priority_class_name);
        g->age = p->age;
    }
    p->group = gid;
    corral__group_add_pod(&e->pd.groups.items[gid], pid, p->state == POD_PENDING);
    corral__touch(e, gid);
}

static int bind_prebound(corral_engine_t *e, uint32_t pid, const corral_obj_t *o,
                         corral_diag_t *diag)
{
    epod_t *p = &e->pd.pods.items[pid];
    const char *node = o->u.pod->spec.node_name;
    uint32_t nid;
    if (!corral_hmap_get(&e->nd.node_by_name, node, &nid) || !e->nd.nodes.items[nid].alive) {
        if (diag)
            corral_diag_add(diag, CORRAL_SEV_ERROR, o->file, o->raw ? o->raw->line : 0, 0,
                            "spec.nodeName", "pod %s is bound to node %s, which does not exist",
                            p->key, node);
        return CORRAL_ENOENT;
    }
    enode_t *n = &e->nd.nodes.items[nid];
    uint64_t mask = ann_gpu_ids(o, n, diag);
    uint64_t busy = n->whole_mask | (p->share ? 0 : n->share_mask);
    if (mask && ((mask & busy) || (!p->share && __builtin_popcountll(mask) != p->gpus) ||
                 (p->share && __builtin_popcountll(mask) != 1))) {
        if (diag)
            corral_diag_add(diag, CORRAL_SEV_ERROR, o->file, o->raw ? o->raw->line : 0, 0,
                            "metadata.annotations",
                            "%s of pod %s names GPUs that are taken or do not match its request",
                            ANN_GPU_IDS, p->key);
        mask = 0;
    }
    if (!mask && (p->gpus || p->share)) {
        if (corral__res_fit(e, p, n, &mask) & (1u << RES_GPU | MISS_GPU_SHARE)) {
            if (diag)
                corral_diag_add(diag, CORRAL_SEV_WARNING, o->file, o->raw ? o->raw->line : 0, 0,
                                "spec.nodeName", "pod %s does not fit the GPUs left on node %s",
                                p->key, node);
        }
    }
    corral__bind(e, pid, nid, mask);
    return 0;
}

/* A new pending pod: the next cycle may be quiet and try only such pods. */
static void mark_fresh(corral_engine_t *e, uint32_t pid)
{
    VEC_PUSH(e->pd.fresh_pods, pid);
    egroup_t *g = &e->pd.groups.items[e->pd.pods.items[pid].group];
    if (!g->fresh) {
        g->fresh = true;
        VEC_PUSH(e->pd.fresh, e->pd.pods.items[pid].group);
        VEC_PUSH(e->pd.unlisted, e->pd.pods.items[pid].group);
    }
}

int corral__upsert_pod(corral_engine_t *e, const corral_obj_t *o, int64_t now, corral_diag_t *diag)
{
    const corral_pod_t *src = o->u.pod;
    const char *phase = src->status.phase;
    bool done = phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed"));
    bool bound = src->spec.node_name && *src->spec.node_name;
    size_t kn = strlen(o->meta.namespace) + strlen(o->meta.name) + 2;
    char *key = corral_malloc(kn);
    snprintf(key, kn, "%s/%s", o->meta.namespace, o->meta.name);
    uint32_t pid;
    bool known = corral_hmap_get(&e->pd.pod_by_key, key, &pid);
    if (done) {
        corral_free(key);
        if (known)
            corral_engine_remove(e, CORRAL_KIND_POD, o->meta.namespace, o->meta.name);
        return 0;
    }
    if (known) {
        corral_free(key);
        e->cy.epoch++;
        epod_t *p = &e->pd.pods.items[pid];
        p->est_ns = ann_duration(o, ANN_ESTIMATE, -1, diag);
        p->min_run_ns = ann_duration(o, ANN_MIN_RUN, 0, diag);
        if ((p->state == POD_PENDING || p->state == POD_FOREIGN) && bound) {
            corral__contrib(e, p, -1);
            corral__pod_state(e, p, POD_PENDING);
            corral__contrib(e, p, 1);
            return bind_prebound(e, pid, o, diag);
        }
        return 0;
    }
    pid = new_pod_slot(e);
    epod_t *p = &e->pd.pods.items[pid];
    memset(p, 0, sizeof(*p));
    p->alive = true;
    p->ns = corral_strdup(o->meta.namespace);
    p->name = corral_strdup(o->meta.name);
    p->key = key;
    p->pc_name =
        src->spec.priority_class_name ? corral_strdup(src->spec.priority_class_name) : NULL;
    p->spec_priority = src->spec.priority;
    const char *mc = corral_strmap_get(&o->meta.annotations, CORRAL_MODEL_CACHE_ANNOTATION);
    p->model_cache = mc && *mc ? corral_strdup(mc) : NULL;
    p->node = NONE;
    p->nom_node = NONE;
    p->held_nom_node = NONE;
    p->age = e->pd.age_seq++;
    p->est_ns = ann_duration(o, ANN_ESTIMATE, -1, diag);
    p->min_run_ns = ann_duration(o, ANN_MIN_RUN, 0, diag);
    int rq = pod_requests(e, p, o, bound, diag);
    if (rq != 0) {
        corral__free_pod(p);
        VEC_PUSH(e->pd.pod_free, pid);
        return rq;
    }
    p->prof = corral__intern_prof(e, &src->spec);
    p->rcls = corral__intern_rcls(e, p);
    corral__wshape_count(e, p, 1);
    corral_hmap_put(&e->pd.pod_by_key, p->key, pid);
    e->fr.pods_version++;
    pod_group(e, pid, o);
    e->pd.npending++;
    corral__contrib(e, p, 1);
    if (!bound && !ours(e, src->spec.scheduler_name)) {
        corral__pod_state(e, p, POD_FOREIGN);
        corral__set_reason(e, pid,
                           "not scheduled by Corral: spec.schedulerName names another scheduler");
    }
    if (!bound) {
        mark_fresh(e, pid);
        return 0;
    }
    e->cy.epoch++;
    int64_t saved = e->now;
    e->now = now;
    int rc = bind_prebound(e, pid, o, diag);
    e->now = saved;
    if (rc != 0)
        corral_engine_remove(e, CORRAL_KIND_POD, o->meta.namespace, o->meta.name);
    return rc;
}
