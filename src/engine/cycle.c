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

/* Priorities of group g and its pods: a pod's own, else its PriorityClass's,
 * else its group's class's; a group without a class of its own ranks as its
 * most important pod. */
static void group_priorities(corral_engine_t *e, egroup_t *g)
{
    bool found;
    int32_t before = g->priority;
    g->priority = pc_value(e, g->pc_name, &found);
    bool own_class = g->pc_name && found;
    int32_t best = INT32_MIN;
    for (size_t j = 0; j < g->npods; j++) {
        epod_t *p = &e->pods.items[g->pods[j]];
        if (p->spec_priority.set)
            p->priority = p->spec_priority.v;
        else if (p->priority = pc_value(e, p->pc_name, &found), !found)
            p->priority = g->pc_name ? g->priority : 0;
        best = p->priority > best ? p->priority : best;
    }
    if (!own_class)
        g->priority = g->npods ? best : 0;
    if (g->priority != before)
        e->prio_changed = true; /* the job lists need sorting again */
}

static void resolve_priorities(corral_engine_t *e)
{
    for (size_t i = 0; i < e->groups.n; i++) {
        if (e->groups.items[i].alive)
            group_priorities(e, &e->groups.items[i]);
    }
    e->pc_dirty = false;
}

static void reset_cycle(corral_engine_t *e, int64_t now, bool quiet)
{
    e->now = now;
    corral_arena_reset(&e->cyc);
    e->version++; /* cached reasons lived in the arena just reset */
    e->binds.n = e->evicts.n = e->pendings.n = e->gstats.n = 0;
    e->txn.n = 0;
    memset(&e->dec, 0, sizeof(e->dec));
    if (!quiet)
        corral__reasons_trim(e); /* a full cycle sets every reason again */
    corral__resv_clear(e);
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
            corral__group_reason(e, g,
                                 corral_arena_printf(&e->cyc,
                                                     "waiting for resources reserved for %s/%s",
                                                     j->ns, j->name));
        }
    }
    return r;
}

static const char *behind_text(corral_engine_t *e)
{
    /* Not naming the job in front: the text would change for every waiting
     * job whenever the front moves. That job's own reason says why it waits. */
    return corral__intern(e, "waiting for an earlier job to start first (strict order)");
}

/* Walk the order of service. first_blocked: a job already known to be
 * blocked (a quiet cycle's, from the cycle before), or NONE. */
static void allocate(corral_engine_t *e, qjobs_t *qj, uint32_t first_blocked, uint32_t *order,
                     size_t *norder)
{
    const char *behind = first_blocked != NONE && e->cfg.strict_order ? behind_text(e) : NULL;
    uint32_t q;
    while ((q = corral__next_queue(e, qj)) != NONE) {
        uint32_t gid = qj[q].jobs[qj[q].next++];
        order[(*norder)++] = gid;
        e->dec.stats.jobs_tried++;
        if (behind) {
            corral__group_reason(e, &e->groups.items[gid], behind);
            continue;
        }
        int r = try_job(e, gid);
        if (r != PLACE_OK && first_blocked == NONE) {
            first_blocked = gid;
            if (e->cfg.strict_order)
                behind = behind_text(e);
            if (e->cfg.backfill && !e->cfg.strict_order)
                corral__reserve(e, gid);
        }
    }
    e->blocked = first_blocked;
}

/* --- quiet cycles ------------------------------------------------------------------------- */

/*
 * A cycle after nothing but new pending pods (no removal, no update, no
 * eviction, no new node, queue or class, and no eviction protection running
 * out) is quiet: every job that waited before still cannot be placed (the
 * cluster only filled up since it last tried), so only the new jobs are
 * tried, and queue accounting is brought up to date by adding the new pods'
 * demand rather than recounted. This is what keeps a deep queue cheap: a
 * cycle costs what arrived, not what waits. (kube-scheduler keeps such pods
 * in its unschedulable queue for the same reason.)
 */
static bool quiet(const corral_engine_t *e, int64_t now)
{
    return e->cycles > 0 && e->epoch == e->cycle_epoch && now < e->next_timer;
}

static void prepare_fresh(corral_engine_t *e)
{
    for (size_t i = 0; i < e->fresh.n; i++) {
        egroup_t *g = &e->groups.items[e->fresh.items[i]];
        if (!g->alive)
            continue;
        g->queue = corral__queue_of(e, g);
        group_priorities(e, g);
    }
    corral__queues_add_demand(e, e->fresh_pods.items, e->fresh_pods.n);
}

/* The job blocked in the cycle before, if it still waits. */
static uint32_t still_blocked(corral_engine_t *e)
{
    uint32_t b = e->blocked;
    if (b == NONE || b >= e->groups.n || !e->groups.items[b].alive ||
        !corral__has_pending(e, &e->groups.items[b]))
        return NONE;
    if (e->cfg.backfill && !e->cfg.strict_order)
        corral__reserve(e, b);
    return b;
}

static void end_cycle(corral_engine_t *e)
{
    for (size_t i = 0; i < e->fresh.n; i++)
        e->groups.items[e->fresh.items[i]].fresh = false;
    e->fresh.n = 0;
    e->fresh_pods.n = 0;
    e->cycles++;
}

static void evict_for(corral_engine_t *e, const uint32_t *order, size_t norder)
{
    /* Each victim search replays placements; the most important jobs get the
     * searches when many wait (MAX_VICTIM_SEARCHES per action per cycle). */
    int tries = 0;
    for (size_t i = 0; e->cfg.preempt && i < norder && tries < MAX_VICTIM_SEARCHES; i++) {
        if (corral__has_pending(e, &e->groups.items[order[i]]))
            tries += corral__preempt(e, order[i], false);
    }
    tries = 0;
    for (size_t i = 0; e->cfg.reclaim && i < norder && tries < MAX_VICTIM_SEARCHES; i++) {
        if (corral__has_pending(e, &e->groups.items[order[i]]))
            tries += corral__preempt(e, order[i], true);
    }
}

int corral_engine_cycle(corral_engine_t *e, int64_t now_ns, const corral_decisions_t **out)
{
    bool q = quiet(e, now_ns);
    e->cycle_epoch = e->epoch; /* anything that bumps it from here makes the next one full */
    reset_cycle(e, now_ns, q);
    corral__node_order(e);
    corral__hn_resolve(e);
    if (q) {
        prepare_fresh(e);
    } else {
        resolve_priorities(e);
        corral__queues_prepare(e);
    }
    if (e->cfg.policy == CORRAL_POLICY_FGD || e->cfg.policy == CORRAL_POLICY_CORRAL)
        corral__derive_workload(e);
    qjobs_t *qj =
        q ? corral__jobs_of(e, e->fresh.items, e->fresh.n) : corral__jobs_all(e, e->prio_changed);
    e->prio_changed = false;
    uint32_t *order = corral_malloc((e->groups.n + 1) * sizeof(*order));
    size_t norder = 0;
    if (e->cfg.allocate)
        allocate(e, qj, q ? still_blocked(e) : NONE, order, &norder);
    corral__resv_clear(e);
    if (!q)
        corral__victim_prep(e); /* quiet cycles keep it up to date as pods bind */
    evict_for(e, order, norder);
    corral__jobs_free(e, qj);
    corral_free(order);
    corral__report(e);
    end_cycle(e);
    *out = &e->dec;
    return 0;
}
