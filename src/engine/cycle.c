/*
 * One scheduling cycle: prepare (priorities, queues, HyperNodes), then the
 * actions in order: enqueue, allocate (with backfill), preempt, reclaim; then
 * a pending reason for every pod left pending, and the decisions.
 *
 * Allocation walks the order of service: repeatedly the queue that comes
 * first (priority, then lowest share, level by level), and its next job
 * (priority, then age). The first job that cannot be placed gets a backfill
 * reservation; later jobs run under it (see backfill.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine_int.h"

#define MAX_VICTIM_SEARCHES 64

static int32_t pc_value(const corral_engine_t *e, const char *name, bool *found)
{
    uint32_t id;
    *found = false;
    if (!name || !corral_hmap_get(&e->pc_by_name, name, &id))
        return 0;
    *found = true;
    return e->pc_values.items[id];
}

/* Pod priority: its own, else its PriorityClass's, else its group's class's. */
static void resolve_priorities(corral_engine_t *e)
{
    for (size_t i = 0; i < e->groups.n; i++) {
        egroup_t *g = &e->groups.items[i];
        bool found;
        if (g->alive)
            g->priority = pc_value(e, g->pc_name, &found);
    }
    for (size_t i = 0; i < e->pods.n; i++) {
        epod_t *p = &e->pods.items[i];
        if (!p->alive)
            continue;
        bool found;
        const egroup_t *g = &e->groups.items[p->group];
        if (p->spec_priority.set)
            p->priority = p->spec_priority.v;
        else if (p->priority = pc_value(e, p->pc_name, &found), !found)
            p->priority = g->pc_name ? g->priority : 0;
    }
    /* A job without a class of its own ranks as its most important pod. */
    for (size_t i = 0; i < e->groups.n; i++) {
        egroup_t *g = &e->groups.items[i];
        bool found;
        if (!g->alive || (g->pc_name && (pc_value(e, g->pc_name, &found), found)))
            continue;
        int32_t best = INT32_MIN;
        for (size_t j = 0; j < g->npods; j++) {
            int32_t pr = e->pods.items[g->pods[j]].priority;
            best = pr > best ? pr : best;
        }
        g->priority = g->npods ? best : 0;
    }
}

static void reset_cycle(corral_engine_t *e, int64_t now)
{
    e->now = now;
    corral_arena_reset(&e->cyc);
    e->version++; /* cached reasons lived in the arena just reset */
    e->binds.n = e->evicts.n = e->pendings.n = e->gstats.n = 0;
    e->txn.n = 0;
    memset(&e->dec, 0, sizeof(e->dec));
    for (size_t i = 0; i < e->pods.n; i++)
        e->pods.items[i].reason = NULL;
    for (size_t i = 0; i < e->groups.n; i++)
        e->groups.items[i].block = NULL;
    corral__resv_clear(e);
}

/* --- enqueue ------------------------------------------------------------------------- */

/* The gang's minimum request: minResources, else its first minMember pods. */
static void gang_minimum(corral_engine_t *e, const egroup_t *g, rvec_t *out)
{
    if (g->has_min_res) {
        *out = g->min_res;
        return;
    }
    memset(out, 0, sizeof(*out));
    int count = 0, want = g->min_member > 1 ? g->min_member : 1;
    for (size_t i = 0; i < g->npods && count < want; i++) {
        const epod_t *p = &e->pods.items[g->pods[i]];
        if (p->state == POD_PENDING) {
            rv_add(out, &p->req, e->nres);
            count++;
        }
    }
}

static const char *enqueue_block(corral_engine_t *e, egroup_t *g)
{
    if (!g->declared)
        return corral_arena_printf(&e->cyc, "pod group %s/%s does not exist", g->ns, g->name);
    if (g->queue == NONE)
        return corral_arena_printf(&e->cyc, "queue %s does not exist", g->queue_name);
    if (!e->queues.items[g->queue].leaf)
        return corral_arena_printf(&e->cyc,
                                   "queue %s is not a leaf queue; submit jobs to one of its "
                                   "children",
                                   g->queue_name);
    if (!e->cfg.enqueue)
        return NULL;
    rvec_t min;
    gang_minimum(e, g, &min);
    const char *cap = corral__capability_block(e, g->queue, &min);
    if (cap)
        return corral_arena_printf(&e->cyc, "queue %s is over its capability", cap);
    return NULL;
}

static bool has_pending(const corral_engine_t *e, const egroup_t *g)
{
    for (size_t i = 0; i < g->npods; i++) {
        if (e->pods.items[g->pods[i]].state == POD_PENDING)
            return true;
    }
    return false;
}

/* --- the order of service ----------------------------------------------------------------- */

typedef struct qjobs {
    uint32_t *jobs;
    size_t n, next;
} qjobs_t;

static int cmp_job(const void *a, const void *b, void *ctx)
{
    const corral_engine_t *e = ctx;
    const egroup_t *x = &e->groups.items[*(const uint32_t *)a];
    const egroup_t *y = &e->groups.items[*(const uint32_t *)b];
    if (x->priority != y->priority)
        return x->priority > y->priority ? -1 : 1;
    if (x->age != y->age)
        return x->age < y->age ? -1 : 1;
    return strcmp(x->key, y->key);
}

/* Per queue, its runnable jobs in order. */
static qjobs_t *build_jobs(corral_engine_t *e)
{
    qjobs_t *qj = corral_calloc(e->queues.n + 1, sizeof(*qj));
    for (size_t i = 0; i < e->groups.n; i++) {
        egroup_t *g = &e->groups.items[i];
        if (!g->alive || !has_pending(e, g))
            continue;
        g->block = enqueue_block(e, g);
        if (g->block)
            continue;
        qjobs_t *q = &qj[g->queue];
        q->jobs = corral_realloc(q->jobs, (q->n + 1) * sizeof(*q->jobs));
        q->jobs[q->n++] = (uint32_t)i;
    }
    for (size_t i = 0; i < e->queues.n; i++) {
        if (qj[i].n > 1)
            qsort_r(qj[i].jobs, qj[i].n, sizeof(uint32_t), cmp_job, e);
    }
    return qj;
}

static uint32_t next_queue(corral_engine_t *e, const qjobs_t *qj)
{
    uint32_t best = NONE;
    for (size_t i = 0; i < e->queues.n; i++) {
        if (qj[i].next >= qj[i].n)
            continue;
        if (best == NONE || corral__queue_cmp(e, (uint32_t)i, best) < 0)
            best = (uint32_t)i;
    }
    return best;
}

/* Does job gid qualify to run past the reservation: every pending pod has an
 * estimate and all would end by T. */
static bool ends_before_reservation(const corral_engine_t *e, const egroup_t *g)
{
    for (size_t i = 0; i < g->npods; i++) {
        const epod_t *p = &e->pods.items[g->pods[i]];
        if (p->state != POD_PENDING)
            continue;
        if (p->est_ns < 0 || e->now + p->est_ns > e->resv.t_ns)
            return false;
    }
    return true;
}

static void set_group_reason(corral_engine_t *e, const egroup_t *g, const char *why)
{
    for (size_t i = 0; i < g->npods; i++) {
        epod_t *p = &e->pods.items[g->pods[i]];
        if (p->state == POD_PENDING)
            p->reason = why;
    }
}

static int try_job(corral_engine_t *e, uint32_t gid)
{
    const egroup_t *g = &e->groups.items[gid];
    const char *why;
    bool resv = e->resv.active && e->resv.group != gid && !ends_before_reservation(e, g);
    int r = corral__place_job(e, gid, resv, true, &why);
    if (r == PLACE_FAIL && resv) {
        /* Held back only by the reservation? Then say so. */
        size_t mark = corral__txn_mark(e);
        e->dry = true;
        int r2 = corral__place_job(e, gid, false, false, &why);
        bool placed = r2 == PLACE_OK && e->txn.n > mark;
        e->dry = false;
        corral__txn_rollback(e, mark);
        if (placed) {
            const egroup_t *j = &e->groups.items[e->resv.group];
            set_group_reason(e, g,
                             corral_arena_printf(&e->cyc,
                                                 "waiting for resources reserved for %s/%s", j->ns,
                                                 j->name));
        }
    }
    return r;
}

static void allocate(corral_engine_t *e, qjobs_t *qj, uint32_t *order, size_t *norder)
{
    uint32_t first_blocked = NONE;
    uint32_t q;
    while ((q = next_queue(e, qj)) != NONE) {
        uint32_t gid = qj[q].jobs[qj[q].next++];
        order[(*norder)++] = gid;
        e->dec.stats.jobs_tried++;
        if (first_blocked != NONE && e->cfg.strict_order) {
            const egroup_t *j = &e->groups.items[first_blocked];
            set_group_reason(e, &e->groups.items[gid],
                             corral_arena_printf(&e->cyc, "waiting behind %s/%s (strict order)",
                                                 j->ns, j->name));
            continue;
        }
        int r = try_job(e, gid);
        if (r != PLACE_OK && first_blocked == NONE) {
            first_blocked = gid;
            if (e->cfg.backfill && !e->cfg.strict_order)
                corral__reserve(e, gid);
        }
    }
}

/* --- results --------------------------------------------------------------------------------- */

static int cmp_pod_age(const void *a, const void *b, void *ctx)
{
    const corral_engine_t *e = ctx;
    uint64_t x = e->pods.items[*(const uint32_t *)a].age;
    uint64_t y = e->pods.items[*(const uint32_t *)b].age;
    return x < y ? -1 : x > y;
}

static void finish(corral_engine_t *e)
{
    uint32_t *ids = corral_malloc((e->pods.n + 1) * sizeof(*ids));
    size_t k = 0;
    for (size_t i = 0; i < e->pods.n; i++) {
        epod_t *p = &e->pods.items[i];
        if (!p->alive || POD_PLACED(p))
            continue;
        const egroup_t *g = &e->groups.items[p->group];
        if (p->state == POD_FOREIGN)
            p->reason = "not scheduled by Corral: spec.schedulerName names another scheduler";
        if (!p->reason)
            p->reason = g->block ? g->block : "not considered in this cycle";
        ids[k++] = (uint32_t)i;
    }
    qsort_r(ids, k, sizeof(*ids), cmp_pod_age, e);
    for (size_t i = 0; i < k; i++) {
        const epod_t *p = &e->pods.items[ids[i]];
        corral_pending_t pd = {p->ns, p->name, p->reason};
        VEC_PUSH(e->pendings, pd);
    }
    corral_free(ids);
    e->dec.binds = e->binds.items;
    e->dec.nbinds = e->binds.n;
    e->dec.evictions = e->evicts.items;
    e->dec.nevictions = e->evicts.n;
    e->dec.pending = e->pendings.items;
    e->dec.npending = e->pendings.n;
    e->dec.stats.pending = (uint32_t)e->pendings.n;
}

static void group_statuses(corral_engine_t *e)
{
    for (size_t i = 0; i < e->groups.n; i++) {
        const egroup_t *g = &e->groups.items[i];
        if (!g->alive || g->implicit)
            continue;
        size_t running = 0, pending = 0;
        const char *msg = NULL;
        for (size_t j = 0; j < g->npods; j++) {
            const epod_t *p = &e->pods.items[g->pods[j]];
            if (p->state == POD_BOUND)
                running++;
            else if (p->state == POD_PENDING) {
                pending++;
                msg = msg ? msg : p->reason;
            }
        }
        const char *phase = (int)running >= g->min_member && running > 0 ? "Running"
                            : g->block                                   ? "Pending"
                                                                         : "Inqueue";
        corral_group_status_t s = {g->ns, g->name, phase, pending ? msg : NULL};
        VEC_PUSH(e->gstats, s);
    }
    e->dec.groups = e->gstats.items;
    e->dec.ngroups = e->gstats.n;
}

int corral_engine_cycle(corral_engine_t *e, int64_t now_ns, const corral_decisions_t **out)
{
    reset_cycle(e, now_ns);
    corral__node_order(e);
    corral__hn_resolve(e);
    resolve_priorities(e);
    corral__queues_prepare(e);
    if (e->cfg.policy == CORRAL_POLICY_FGD || e->cfg.policy == CORRAL_POLICY_CORRAL)
        corral__derive_workload(e);
    qjobs_t *qj = build_jobs(e);
    uint32_t *order = corral_malloc((e->groups.n + 1) * sizeof(*order));
    size_t norder = 0;
    if (e->cfg.allocate)
        allocate(e, qj, order, &norder);
    corral__resv_clear(e);
    corral__victim_prep(e);
    /* Each victim search replays placements; the most important jobs get the
     * searches when many wait (MAX_VICTIM_SEARCHES per action per cycle). */
    int tries = 0;
    for (size_t i = 0; e->cfg.preempt && i < norder && tries < MAX_VICTIM_SEARCHES; i++) {
        if (has_pending(e, &e->groups.items[order[i]]))
            tries += corral__preempt(e, order[i], false);
    }
    tries = 0;
    for (size_t i = 0; e->cfg.reclaim && i < norder && tries < MAX_VICTIM_SEARCHES; i++) {
        if (has_pending(e, &e->groups.items[order[i]]))
            tries += corral__preempt(e, order[i], true);
    }
    for (size_t i = 0; i < e->queues.n; i++)
        corral_free(qj[i].jobs);
    corral_free(qj);
    corral_free(order);
    finish(e);
    group_statuses(e);
    *out = &e->dec;
    return 0;
}
