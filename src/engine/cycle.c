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
    if (!name || !corral_hmap_get(&e->pd.pc_by_name, name, &id))
        return 0;
    *found = true;
    return e->pd.pc_values.items[id];
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
        epod_t *p = &e->pd.pods.items[g->pods[j]];
        if (p->spec_priority.set)
            p->priority = p->spec_priority.v;
        else if (p->priority = pc_value(e, p->pc_name, &found), !found)
            p->priority = g->pc_name ? g->priority : 0;
        best = p->priority > best ? p->priority : best;
    }
    if (!own_class)
        g->priority = g->npods ? best : 0;
    if (g->priority != before)
        e->pd.prio_changed = true; /* the job lists need sorting again */
}

static void resolve_priorities(corral_engine_t *e)
{
    for (size_t i = 0; i < e->pd.groups.n; i++) {
        if (e->pd.groups.items[i].alive)
            group_priorities(e, &e->pd.groups.items[i]);
    }
    e->pd.pc_dirty = false;
}

static void reset_cycle(corral_engine_t *e, int64_t now, bool quiet)
{
    e->now = now;
    corral_arena_reset(&e->cy.cyc);
    e->version = ++e->vseq; /* cached reasons lived in the arena just reset */
    e->cy.binds.n = e->cy.evicts.n = e->cy.pendings.n = e->cy.gstats.n = 0;
    e->cy.txn.n = e->cy.txn_ver.n = 0;
    memset(&e->cy.dec, 0, sizeof(e->cy.dec));
    if (!quiet) {
        corral__reasons_trim(e); /* a full cycle sets every reason again */
        corral__resv_clear(e);
        e->rv.for_job = NONE;
    }
}

/* Does job gid qualify to run past the reservation: every pending pod has an
 * estimate and all would end by T. */
static bool ends_before_reservation(const corral_engine_t *e, const egroup_t *g)
{
    for (size_t i = 0; i < g->npods; i++) {
        const epod_t *p = &e->pd.pods.items[g->pods[i]];
        if (p->state != POD_PENDING)
            continue;
        if (p->est_ns < 0 || e->now + p->est_ns > e->rv.cur.t_ns)
            return false;
    }
    return true;
}

static int try_job_slow(corral_engine_t *e, uint32_t gid, bool resv);

/* --- the failure memo ---------------------------------------------------------------------- */

/*
 * A job that is one plain pod (no gang, no topology, no nomination) fails in
 * a given state exactly when any other such job does that has the same
 * constraints and request, sits in the same queue and is held to the same
 * reservation. With thousands waiting, most jobs of a cycle are repeats of a
 * few shapes: the first of each shape is placed for real, the rest take its
 * outcome and reason. The state is e->version (trial placements restore it).
 */
static uint32_t plain_pod(const corral_engine_t *e, const egroup_t *g)
{
    if (!g->implicit || g->npods != 1 || g->topo_mode || g->min_member > 1)
        return NONE;
    const epod_t *p = &e->pd.pods.items[g->pods[0]];
    return p->state == POD_PENDING && p->nom_node == NONE ? g->pods[0] : NONE;
}

static memo_t *memo_slot(corral_engine_t *e, uint32_t pid, uint32_t queue, int resv)
{
    uint64_t h =
        e->pd.pods.items[pid].rcls * 0x9E3779B97F4A7C15ULL ^ (uint64_t)queue * 0x85EBCA6BULL;
    h ^= (uint64_t)resv;
    return &e->pm.slots[(h >> 20) % MEMO_SLOTS];
}

static bool memo_hit(const corral_engine_t *e, const memo_t *m, uint32_t pid, uint32_t queue,
                     int resv)
{
    return m->version == e->version && m->rcls == e->pd.pods.items[pid].rcls && m->queue == queue &&
           m->resv == resv && m->resv_group == (e->rv.cur.active ? e->rv.cur.group : NONE);
}

static int try_job(corral_engine_t *e, uint32_t gid)
{
    const egroup_t *g = &e->pd.groups.items[gid];
    bool resv = e->rv.cur.active && e->rv.cur.group != gid && !ends_before_reservation(e, g);
    uint32_t pid = plain_pod(e, g);
    memo_t *m = pid != NONE ? memo_slot(e, pid, g->queue, resv) : NULL;
    if (m && memo_hit(e, m, pid, g->queue, resv)) {
        corral__set_reason(e, pid, m->why);
        return m->r;
    }
    int r = try_job_slow(e, gid, resv);
    if (m && r != PLACE_OK && e->pd.pods.items[pid].reason)
        *m = (memo_t){.version = e->version,
                      .rcls = e->pd.pods.items[pid].rcls,
                      .queue = g->queue,
                      .resv = resv,
                      .resv_group = e->rv.cur.active ? e->rv.cur.group : NONE,
                      .r = r,
                      .why = e->pd.pods.items[pid].reason};
    return r;
}

static int try_job_slow(corral_engine_t *e, uint32_t gid, bool resv)
{
    const egroup_t *g = &e->pd.groups.items[gid];
    const char *why;
    int r = corral__place_job(e, gid, resv, true, &why);
    if (r == PLACE_FAIL && resv) {
        /* Held back only by the reservation? Then say so. */
        size_t mark = corral__txn_mark(e);
        e->dry = true;
        int r2 = corral__place_job(e, gid, false, false, &why);
        bool placed = r2 == PLACE_OK && e->cy.txn.n > mark;
        e->dry = false;
        corral__txn_rollback(e, mark);
        if (placed) {
            const egroup_t *j = &e->pd.groups.items[e->rv.cur.group];
            corral__group_reason(e, g,
                                 corral_arena_printf(&e->cy.cyc,
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

/*
 * Strict order: everything after the first blocked job waits. Each queue's
 * next job is told so; jobs further back were told when they arrived (and
 * the order within a queue does not change), so a deep queue costs nothing.
 */
static void wait_behind(corral_engine_t *e, qjobs_t *qj, uint32_t blocked)
{
    const char *behind = behind_text(e);
    for (size_t i = 0; i < e->qs.queues.n; i++) {
        uint32_t gid = corral__peek(e, &qj[i]);
        if (gid != NONE && gid != blocked)
            corral__group_reason(e, &e->pd.groups.items[gid], behind);
    }
    for (size_t i = 0; i < e->pd.fresh.n; i++) {
        const egroup_t *g = &e->pd.groups.items[e->pd.fresh.items[i]];
        for (size_t k = 0; g->alive && k < g->npods; k++) {
            const epod_t *p = &e->pd.pods.items[g->pods[k]];
            if (p->state == POD_PENDING && !p->reason)
                corral__set_reason(e, g->pods[k], behind);
        }
    }
}

/* Walk the order of service. first_blocked: a job already known to be
 * blocked (a quiet cycle's, from the cycle before), or NONE. */
static void allocate(corral_engine_t *e, qjobs_t *qj, uint32_t first_blocked, uint32_t *order,
                     size_t *norder)
{
    uint32_t q;
    bool strict = e->cfg.strict_order;
    while ((first_blocked == NONE || !strict) && (q = corral__next_queue(e, qj)) != NONE) {
        uint32_t gid = qj[q].jobs[qj[q].next++];
        order[(*norder)++] = gid;
        e->cy.dec.stats.jobs_tried++;
        int r = try_job(e, gid);
        if (r != PLACE_OK && first_blocked == NONE) {
            first_blocked = gid;
            if (e->cfg.backfill && !strict)
                corral__reserve(e, gid);
        }
    }
    e->rv.blocked = first_blocked;
    if (strict && first_blocked != NONE)
        wait_behind(e, qj, first_blocked);
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
    return e->cy.cycles > 0 && e->cy.epoch == e->cy.cycle_epoch && now < e->cy.next_timer;
}

/* Groups that changed since the last cycle (new pods, pods gone, PodGroup
 * updated): their queue and priorities. The rest are as they were. */
static void prepare_changed(corral_engine_t *e)
{
    for (size_t i = 0; i < e->rp.touched.n; i++) {
        egroup_t *g = &e->pd.groups.items[e->rp.touched.items[i]];
        if (!g->alive)
            continue;
        corral__queue_of(e, g);
        group_priorities(e, g);
    }
}

/* The job blocked in the cycle before, if it still waits. */
static uint32_t still_blocked(corral_engine_t *e)
{
    uint32_t b = e->rv.blocked;
    if (b == NONE || b >= e->pd.groups.n || !e->pd.groups.items[b].alive ||
        !corral__has_pending(e, &e->pd.groups.items[b]))
        return NONE;
    if (!e->cfg.backfill || e->cfg.strict_order)
        return b;
    /* Nothing has freed room since: the reservation made then still holds
     * (the jobs placed since respected it). */
    if (e->rv.for_job == b)
        e->rv.cur.active = e->rv.found;
    else
        corral__reserve(e, b);
    return b;
}

static void end_cycle(corral_engine_t *e)
{
    for (size_t i = 0; i < e->pd.fresh.n; i++)
        e->pd.groups.items[e->pd.fresh.items[i]].fresh = false;
    e->pd.fresh.n = 0;
    e->pd.fresh_pods.n = 0;
    e->cy.cycles++;
}

/* Can job g have victims at all? Cheap tests before any search: preempting
 * needs someone of lower priority running in its queue; reclaiming needs its
 * queue under its share (any job would only raise it). */
static bool may_evict_for(corral_engine_t *e, const egroup_t *g, bool across)
{
    if (g->queue == NONE)
        return false;
    if (!across)
        return e->qs.queues.items[g->queue].min_run_prio < g->priority;
    return corral__queue_share(e, g->queue) <= 1.0; /* present allocation, not history */
}

/* One eviction action over the jobs in order. Each victim search replays
 * placements, so the most important jobs get them when many wait
 * (MAX_VICTIM_SEARCHES per action per cycle), and a one-pod job does not
 * search again in a state where one just like it found nothing: for reclaim
 * the victims do not depend on the job's queue (its own queue is not over
 * its share, so none of its pods qualify), for preemption they depend on the
 * queue and the job's priority. */
static void evict_action(corral_engine_t *e, const uint32_t *order, size_t norder, bool across)
{
    int tries = 0;
    int kind = across ? 3 : 2;
    for (size_t i = 0; i < norder && tries < MAX_VICTIM_SEARCHES; i++) {
        egroup_t *g = &e->pd.groups.items[order[i]];
        if (!may_evict_for(e, g, across) || !corral__has_pending(e, g))
            continue;
        uint32_t pid = plain_pod(e, g);
        /* Placing the job for real checks its queue's limits: then the
         * queue matters after all. */
        bool limited = e->qs.queues.items[g->queue].capped || e->qs.any_guarantee;
        uint32_t mq = across && !limited ? NONE : g->queue;
        memo_t *m = pid != NONE ? memo_slot(e, pid, mq, kind) : NULL;
        if (m && memo_hit(e, m, pid, mq, kind) && (across || m->prio == g->priority))
            continue;
        int r = corral__preempt(e, order[i], across);
        tries += r != PREEMPT_NONE;
        if (m && r == PREEMPT_FAILED)
            *m = (memo_t){.version = e->version,
                          .rcls = e->pd.pods.items[pid].rcls,
                          .queue = mq,
                          .resv = kind,
                          .prio = g->priority,
                          .resv_group = NONE,
                          .r = r};
    }
}

static void evict_for(corral_engine_t *e, const uint32_t *order, size_t norder)
{
    if (e->cfg.preempt)
        evict_action(e, order, norder, false);
    if (e->cfg.reclaim)
        evict_action(e, order, norder, true);
}

int corral_engine_cycle(corral_engine_t *e, int64_t now_ns, const corral_decisions_t **out)
{
    bool q = quiet(e, now_ns);
    e->cy.cycle_epoch = e->cy.epoch; /* anything that bumps it from here makes the next one full */
    reset_cycle(e, now_ns, q);
    corral__node_order(e);
    corral__hn_resolve(e);
    bool recount = corral__queues_recount(e);
    prepare_changed(e);
    corral__fs_advance(e, now_ns); /* before the shares are marked for recounting */
    corral__queues_prepare(e);
    if (recount || e->pd.pc_dirty)
        resolve_priorities(e);
    if (corral__policy(e)->workload)
        corral__derive_workload(e);
    qjobs_t *qj = q ? corral__jobs_of(e, e->pd.fresh.items, e->pd.fresh.n)
                    : corral__jobs_all(e, recount, e->pd.prio_changed);
    e->pd.prio_changed = false;
    uint32_t *order = corral_malloc((e->pd.groups.n + 1) * sizeof(*order));
    size_t norder = 0;
    if (e->cfg.allocate)
        allocate(e, qj, q ? still_blocked(e) : NONE, order, &norder);
    /* Kept for the next cycle if it is quiet; eviction ignores it. */
    e->rv.found = e->rv.cur.active;
    e->rv.cur.active = false;
    if (recount || now_ns >= e->cy.next_timer)
        corral__victim_prep(e); /* else kept up to date as pods bind */
    evict_for(e, order, norder);
    corral__fs_hold(e);
    corral__jobs_free(e, qj);
    corral_free(order);
    corral__report(e);
    end_cycle(e);
    *out = &e->cy.dec;
    return 0;
}
