/*
 * Preemption (inside a queue) and reclaim (across queues).
 *
 * Both look for victims that, once gone, let a pending job be placed, and
 * evict nothing unless they do: every candidate eviction set is tested by
 * actually placing the job on the freed state (then undone). Victims are
 * units: a single pod, or a whole running gang. A gang's pods beyond its
 * minMember are single victims (its youngest); the rest of it goes only as
 * one unit with all its pods, since a gang cut below its minimum is useless
 * (ruling 1). Pods still inside their corral.dev/min-runtime are protected.
 *
 * Preemption: victims are lower-priority pods of the same queue. A one-pod
 * job is placed node by node: on each node, the lowest-priority victims there
 * (ties: the most recently started) are removed until the pod fits; the node
 * whose victims have the lowest highest priority, then the fewest victims,
 * wins. A gang removes victims in that order cluster-wide until it fits, then
 * gives back every victim it turns out not to need.
 *
 * Reclaim: only for a job whose queue stays within its deserved share with
 * the job added; victims come from reclaimable queues above their deserved
 * share, lowest queue priority first, then lowest pod priority, then most
 * recently started, and never take a victim queue below its deserved share.
 *
 * Evicted pods keep their resources (terminating) until the caller removes
 * them; the job is nominated onto what they free so nobody else takes it.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/engine_int.h"

typedef struct unit {
    uint32_t first; /* index into the unit-pod array */
    uint32_t count;
    int32_t prio;  /* highest priority among its pods */
    int64_t start; /* latest start among its pods (a gang: among its first minMember) */
    uint64_t age;
    uint32_t queue;
    uint32_t group;
    bool extra; /* a gang's pod beyond its minMember */
} unit_t;

typedef struct victims {
    unit_t *units;
    size_t nunits;
    uint32_t *pods; /* pods of all units, unit by unit (a gang's extras twice) */
    size_t npods;
    /* saved placements, to restore */
    uint32_t *node;
    uint64_t *mask;
    int64_t *start;
    uint32_t *by;   /* by pod id: the unit that took it off its node, or NONE */
    uint32_t *core; /* by group id: the unit of its whole gang, or NONE */
} victims_t;

static bool protected_pod(const corral_engine_t *e, const epod_t *p)
{
    return p->min_run_ns > 0 && e->now < p->start_ns + p->min_run_ns;
}

/* A queue's share (max over resources of allocated / deserved) after adding
 * sign * delta to what it holds; the same rule as corral__queue_share. */
static double share_with(const corral_engine_t *e, uint32_t q, const rvec_t *delta, int sign)
{
    const equeue_t *x = &e->qs.queues.items[q];
    double share = 0;
    for (int d = 0; d < e->nres; d++) {
        if (d == RES_PODS || d == RES_EPH)
            continue;
        int64_t a = x->alloc.v[d] + (delta ? sign * delta->v[d] : 0);
        double s = x->des_eff.v[d] > 0 ? (double)a / (double)x->des_eff.v[d] : (a > 0 ? 1.0 : 0.0);
        share = s > share ? s : share;
    }
    return share;
}

static bool queue_over(const corral_engine_t *e, uint32_t q)
{
    return share_with(e, q, NULL, 0) > 1.0;
}

/* May pod p (of group vg) be a victim for job g? */
static bool candidate(const corral_engine_t *e, const egroup_t *g, const epod_t *p, bool across)
{
    if (p->state != POD_BOUND || protected_pod(e, p))
        return false;
    const egroup_t *vg = &e->pd.groups.items[p->group];
    if (vg == g || vg->queue == NONE)
        return false;
    if (!across)
        return vg->queue == g->queue && p->priority < g->priority;
    const equeue_t *vq = &e->qs.queues.items[vg->queue];
    return vg->queue != g->queue && vq->reclaim_eff && queue_over(e, vg->queue);
}

static int cmp_unit_preempt(const unit_t *x, const unit_t *y)
{
    if (x->group == y->group && x->extra != y->extra)
        return x->extra ? -1 : 1; /* a gang's extras before the gang */
    if (x->prio != y->prio)
        return x->prio < y->prio ? -1 : 1;
    if (x->start != y->start)
        return x->start > y->start ? -1 : 1;
    return x->age > y->age ? -1 : x->age < y->age;
}

static int cmp_unit(const void *a, const void *b, void *ctx)
{
    corral_engine_t *e = ctx; /* shares are cached as they are read */
    const unit_t *x = a, *y = b;
    if (x->queue != y->queue) {
        const equeue_t *qx = &e->qs.queues.items[x->queue], *qy = &e->qs.queues.items[y->queue];
        if (qx->prio != qy->prio)
            return qx->prio < qy->prio ? -1 : 1;
        double sx = corral__share_cached(e, x->queue), sy = corral__share_cached(e, y->queue);
        if (sx != sy)
            return sx > sy ? -1 : 1;
        return strcmp(qx->name, qy->name);
    }
    return cmp_unit_preempt(x, y);
}

static int cmp_youngest(const void *a, const void *b, void *ctx)
{
    const corral_engine_t *e = ctx;
    const epod_t *x = &e->pd.pods.items[*(const uint32_t *)a];
    const epod_t *y = &e->pd.pods.items[*(const uint32_t *)b];
    if (x->start_ns != y->start_ns)
        return x->start_ns > y->start_ns ? -1 : 1;
    return x->age > y->age ? -1 : x->age < y->age;
}

static void add_unit(victims_t *v, const egroup_t *vg, uint32_t gid, const uint32_t *pods, size_t n,
                     bool extra, const corral_engine_t *e)
{
    unit_t u = {(uint32_t)v->npods, (uint32_t)n, INT32_MIN, INT64_MIN, vg->age,
                vg->queue,          gid,         extra};
    for (size_t i = 0; i < n; i++) {
        const epod_t *p = &e->pd.pods.items[pods[i]];
        v->pods[v->npods++] = pods[i];
        u.prio = p->priority > u.prio ? p->priority : u.prio;
        u.start = p->start_ns > u.start ? p->start_ns : u.start;
        if (extra || n == 1)
            u.age = p->age;
    }
    v->units[v->nunits++] = u;
}

/* The victim units of running group vg (ruling 1): each pod of a group of
 * minMember 1; for a gang, its youngest pods beyond minMember one by one,
 * then the whole gang as one unit (only if all its running pods qualify). */
static void group_units(corral_engine_t *e, const egroup_t *g, uint32_t vgid, bool across,
                        victims_t *v, uint32_t *scratch)
{
    const egroup_t *vg = &e->pd.groups.items[vgid];
    size_t nb = 0, nc = 0;
    bool all = true;
    for (size_t j = 0; j < vg->npods; j++) {
        const epod_t *p = &e->pd.pods.items[vg->pods[j]];
        if (p->state != POD_BOUND)
            continue;
        nb++;
        if (candidate(e, g, p, across))
            scratch[nc++] = vg->pods[j];
        else
            all = false;
    }
    if (vg->min_member <= 1) {
        for (size_t j = 0; j < nc; j++)
            add_unit(v, vg, vgid, &scratch[j], 1, false, e);
        return;
    }
    size_t extras = nb > (size_t)vg->min_member ? nb - (size_t)vg->min_member : 0;
    extras = extras < nc ? extras : nc;
    if (extras > 0) /* which pods are the youngest matters only then */
        qsort_r(scratch, nc, sizeof(*scratch), cmp_youngest, e);
    for (size_t j = 0; j < extras; j++)
        add_unit(v, vg, vgid, &scratch[j], 1, true, e);
    if (all && nc > 0) {
        add_unit(v, vg, vgid, scratch, nc, false, e);
        unit_t *u = &v->units[v->nunits - 1];
        u->start = INT64_MIN; /* the gang's start: its latest among the first minMember */
        for (size_t j = extras; j < nc; j++) {
            int64_t st = e->pd.pods.items[scratch[j]].start_ns;
            u->start = st > u->start ? st : u->start;
        }
    }
}

/* Collect victim units for job gid. */
static void collect(corral_engine_t *e, uint32_t gid, bool across, victims_t *v)
{
    const egroup_t *g = &e->pd.groups.items[gid];
    memset(v, 0, sizeof(*v));
    v->units = corral_malloc((2 * e->pd.pods.n + 1) * sizeof(*v->units));
    v->pods = corral_malloc((2 * e->pd.pods.n + 1) * sizeof(*v->pods));
    uint32_t *scratch = corral_malloc((e->pd.pods.n + 1) * sizeof(*scratch));
    for (size_t k = 0; k < e->pd.running.n; k++) {
        uint32_t i = e->pd.running.items[k];
        if (e->pd.groups.items[i].alive && i != gid)
            group_units(e, g, i, across, v, scratch);
    }
    corral_free(scratch);
    qsort_r(v->units, v->nunits, sizeof(*v->units), cmp_unit, e);
    v->node = corral_malloc((v->npods + 1) * sizeof(*v->node));
    v->mask = corral_malloc((v->npods + 1) * sizeof(*v->mask));
    v->start = corral_malloc((v->npods + 1) * sizeof(*v->start));
    for (size_t i = 0; i < v->npods; i++) {
        const epod_t *p = &e->pd.pods.items[v->pods[i]];
        v->node[i] = p->node;
        v->mask[i] = p->gpu_mask;
        v->start[i] = p->start_ns;
    }
    v->by = corral_malloc((e->pd.pods.n + 1) * sizeof(*v->by));
    memset(v->by, 0xff, (e->pd.pods.n + 1) * sizeof(*v->by));
    v->core = corral_malloc((e->pd.groups.n + 1) * sizeof(*v->core));
    memset(v->core, 0xff, (e->pd.groups.n + 1) * sizeof(*v->core));
    for (size_t u = 0; u < v->nunits; u++) {
        if (!v->units[u].extra && e->pd.groups.items[v->units[u].group].min_member > 1)
            v->core[v->units[u].group] = (uint32_t)u;
    }
}

static void victims_free(victims_t *v)
{
    corral_free(v->units);
    corral_free(v->pods);
    corral_free(v->node);
    corral_free(v->mask);
    corral_free(v->start);
    corral_free(v->by);
    corral_free(v->core);
}

/* Take unit ui's pods off their nodes (those no other unit took already). */
static void unit_remove(corral_engine_t *e, const victims_t *v, uint32_t ui)
{
    const unit_t *u = &v->units[ui];
    for (uint32_t i = u->first; i < u->first + u->count; i++) {
        if (v->by[v->pods[i]] == NONE) {
            corral__unbind(e, v->pods[i]);
            v->by[v->pods[i]] = ui;
        }
    }
}

/* Put back the pods unit ui took off. */
static void unit_restore(corral_engine_t *e, const victims_t *v, uint32_t ui)
{
    const unit_t *u = &v->units[ui];
    for (uint32_t i = u->first; i < u->first + u->count; i++) {
        if (v->by[v->pods[i]] == ui) {
            corral__restore(e, v->pods[i], v->node[i], v->mask[i], v->start[i], POD_BOUND);
            v->by[v->pods[i]] = NONE;
        }
    }
}

/* Would removing unit ui change anything (its pods are not all off already)? */
static bool unit_live(const victims_t *v, uint32_t ui)
{
    const unit_t *u = &v->units[ui];
    for (uint32_t i = u->first; i < u->first + u->count; i++) {
        if (v->by[v->pods[i]] == NONE)
            return true;
    }
    return false;
}

/* An extra whose whole gang is off must stay off with it. */
static bool pinned(const victims_t *v, uint32_t ui)
{
    const unit_t *u = &v->units[ui];
    uint32_t c = u->extra ? v->core[u->group] : NONE;
    if (c == NONE)
        return false;
    const unit_t *cu = &v->units[c];
    for (uint32_t i = cu->first; i < cu->first + cu->count; i++) {
        if (v->by[v->pods[i]] == c)
            return true;
    }
    return false;
}

static bool unit_on_node(const victims_t *v, const unit_t *u, uint32_t nid)
{
    for (uint32_t i = u->first; i < u->first + u->count; i++) {
        if (v->node[i] == nid)
            return true;
    }
    return false;
}

/* Reclaim never takes a victim queue below its deserved share. */
static bool reclaim_allows(const corral_engine_t *e, const victims_t *v, const unit_t *u)
{
    rvec_t sum;
    memset(&sum, 0, sizeof(sum));
    for (uint32_t i = u->first; i < u->first + u->count; i++) {
        if (v->by[v->pods[i]] == NONE) /* the queue's allocation counts the rest off */
            rv_add(&sum, &e->pd.pods.items[v->pods[i]].req, e->nres);
    }
    return share_with(e, u->queue, &sum, -1) >= 1.0;
}

/* Does the job fit now? (Tentative; undone before returning.) */
static bool job_fits(corral_engine_t *e, uint32_t gid)
{
    size_t mark = corral__txn_mark(e);
    const char *why;
    bool saved = e->dry;
    e->dry = true;
    int r = corral__place_job(e, gid, false, false, &why);
    bool ok = r == PLACE_OK && e->cy.txn.n > mark;
    e->dry = saved;
    corral__txn_rollback(e, mark);
    return ok;
}

typedef struct choice {
    uint32_t pod;    /* one-pod jobs: the pod */
    uint32_t node;   /* one-pod jobs: where it goes; NONE for gangs */
    uint32_t *units; /* indices into v->units */
    size_t n;
    int32_t max_prio;
} choice_t;

/* One-pod job: victims on a single node, best node wins. */
static bool choose_on_node(corral_engine_t *e, uint32_t pid, const victims_t *v, bool across,
                           choice_t *best)
{
    const epod_t *p = &e->pd.pods.items[pid];
    uint32_t *picked = corral_malloc((v->nunits + 1) * sizeof(*picked));
    bool found = false;
    for (size_t oi = 0; oi < e->nd.nnode_order; oi++) {
        uint32_t nid = e->nd.node_order[oi];
        const enode_t *n = &e->nd.nodes.items[nid];
        if (corral__static_fit(e, p, n) != FIT_OK)
            continue;
        size_t k = 0;
        bool fits = false;
        int32_t maxp = INT32_MIN;
        uint64_t m;
        for (uint32_t u = 0; u < v->nunits && !fits; u++) {
            const unit_t *un = &v->units[u];
            if (!unit_on_node(v, un, nid) || !unit_live(v, u) ||
                (across && !reclaim_allows(e, v, un)))
                continue;
            unit_remove(e, v, u);
            picked[k++] = u;
            maxp = un->prio > maxp ? un->prio : maxp;
            fits = corral__res_fit(e, p, n, &m) == 0;
        }
        for (size_t i = k; i-- > 0;)
            unit_restore(e, v, picked[i]);
        if (!fits || k == 0)
            continue;
        if (!found || maxp < best->max_prio || (maxp == best->max_prio && k < best->n)) {
            corral_free(best->units);
            best->units = corral_malloc(k * sizeof(uint32_t));
            memcpy(best->units, picked, k * sizeof(uint32_t));
            best->n = k;
            best->node = nid;
            best->pod = pid;
            best->max_prio = maxp;
            found = true;
        }
    }
    corral_free(picked);
    return found;
}

/* Gang: remove units in order until the job fits, then give back the ones it
 * does not need (newest removal first). */
static bool choose_global(corral_engine_t *e, uint32_t gid, const victims_t *v, bool across,
                          choice_t *best)
{
    uint32_t *picked = corral_malloc((v->nunits + 1) * sizeof(*picked));
    size_t k = 0;
    bool fits = false;
    for (uint32_t u = 0; u < v->nunits && !fits; u++) {
        if (!unit_live(v, u) || (across && !reclaim_allows(e, v, &v->units[u])))
            continue;
        unit_remove(e, v, u);
        picked[k++] = u;
        fits = job_fits(e, gid);
    }
    if (!fits) {
        for (size_t i = k; i-- > 0;)
            unit_restore(e, v, picked[i]);
        corral_free(picked);
        return false;
    }
    size_t keep = 0;
    bool *needed = corral_calloc(k + 1, sizeof(bool));
    for (size_t i = k; i-- > 0;) {
        if (pinned(v, picked[i])) {
            needed[i] = true; /* its gang goes whole: it goes too */
            continue;
        }
        unit_restore(e, v, picked[i]);
        if (job_fits(e, gid))
            continue; /* not needed: stays restored */
        unit_remove(e, v, picked[i]);
        needed[i] = true;
    }
    for (size_t i = 0; i < k; i++) {
        if (needed[i])
            picked[keep++] = picked[i];
    }
    for (size_t i = keep; i-- > 0;)
        unit_restore(e, v, picked[i]);
    corral_free(needed);
    best->units = picked;
    best->n = keep;
    best->node = NONE;
    return keep > 0;
}

/* Evict the chosen units and nominate the job onto the room they free. */
static void commit(corral_engine_t *e, uint32_t gid, const victims_t *v, const choice_t *c,
                   bool across)
{
    const egroup_t *g = &e->pd.groups.items[gid];
    for (size_t i = 0; i < c->n; i++)
        unit_remove(e, v, c->units[i]);
    size_t mark = corral__txn_mark(e);
    if (c->node != NONE) {
        /* One pod: it goes where its victims were. */
        uint64_t m = 0;
        const epod_t *p = &e->pd.pods.items[c->pod];
        if (corral__res_fit(e, p, &e->nd.nodes.items[c->node], &m) == 0)
            corral__txn_bind(e, c->pod, c->node, m);
    } else {
        const char *why;
        bool saved = e->dry;
        e->dry = true;
        corral__place_job(e, gid, false, false, &why);
        e->dry = saved;
    }
    uint32_t *nom_pod = corral_malloc((e->cy.txn.n - mark + 1) * sizeof(uint32_t));
    uint32_t *nom_node = corral_malloc((e->cy.txn.n - mark + 1) * sizeof(uint32_t));
    uint64_t *nom_mask = corral_malloc((e->cy.txn.n - mark + 1) * sizeof(uint64_t));
    size_t nn = 0;
    for (size_t i = mark; i < e->cy.txn.n; i++, nn++) {
        const epod_t *p = &e->pd.pods.items[e->cy.txn.items[i]];
        nom_pod[nn] = e->cy.txn.items[i];
        nom_node[nn] = p->node;
        nom_mask[nn] = p->gpu_mask;
    }
    corral__txn_rollback(e, mark);
    for (size_t i = c->n; i-- > 0;)
        unit_restore(e, v, c->units[i]);
    for (size_t i = 0; i < c->n; i++) {
        const unit_t *u = &v->units[c->units[i]];
        for (uint32_t j = u->first; j < u->first + u->count; j++) {
            epod_t *p = &e->pd.pods.items[v->pods[j]];
            if (p->state != POD_BOUND)
                continue; /* listed twice (a gang's extra) and gone already */
            /* Leaving: no longer its queue's for fairness decisions (it
             * still holds its node until it is gone). */
            corral__terminate(e, v->pods[j]);
            corral__touch(e, p->group);
            e->cy.epoch++; /* the next cycle must count what leaves */
            corral_evict_t ev = {p->ns, p->name, NULL, g->ns, g->name};
            ev.reason =
                across ? corral_arena_printf(&e->cy.cyc, "reclaimed by queue %s for %s/%s",
                                             g->queue_name, g->ns, g->name)
                       : corral_arena_printf(&e->cy.cyc, "preempted by %s/%s (priority %d over %d)",
                                             g->ns, g->name, g->priority, p->priority);
            VEC_PUSH(e->cy.evicts, ev);
            e->cy.dec.stats.evicted++;
        }
    }
    for (size_t i = 0; i < nn; i++)
        corral__nominate(e, nom_pod[i], nom_node[i], nom_mask[i]);
    e->version = ++e->vseq; /* victims leave, room is promised: a new state */
    corral_free(nom_pod);
    corral_free(nom_node);
    corral_free(nom_mask);
}

/* Reclaim only for a job that keeps its queue within its deserved share.
 * The job's request (ruling 5): its pods up to minMember when none of them
 * runs, else its next pending pod (in the order they are tried). */
static bool within_deserved(corral_engine_t *e, uint32_t gid)
{
    const egroup_t *g = &e->pd.groups.items[gid];
    size_t n, running;
    uint32_t *pods = corral__group_pending(e, gid, &n, &running);
    size_t want = running > 0 ? 1 : (g->min_member > 1 ? (size_t)g->min_member : 1);
    rvec_t need;
    memset(&need, 0, sizeof(need));
    for (size_t i = 0; i < n && i < want; i++)
        rv_add(&need, &e->pd.pods.items[pods[i]].req, e->nres);
    corral_free(pods);
    return share_with(e, g->queue, &need, 1) <= 1.0;
}

/* Cheap tests that no victim can exist, before looking at any pod. For
 * reclaim: some other reclaimable leaf queue must be over its share (which
 * queues are is counted once per state). */
static bool hopeless(corral_engine_t *e, const egroup_t *g, bool across)
{
    if (!across) /* someone of lower priority must run in the job's queue */
        return e->qs.queues.items[g->queue].min_run_prio >= g->priority;
    if (e->qs.over_version != e->version) {
        e->qs.over_version = e->version;
        e->qs.over_count = 0;
        for (size_t q = 0; q < e->qs.queues.n; q++) {
            const equeue_t *x = &e->qs.queues.items[q];
            if (x->alive && x->leaf && x->reclaim_eff && queue_over(e, (uint32_t)q)) {
                e->qs.over_count++;
                e->qs.over_one = (uint32_t)q;
            }
        }
    }
    return e->qs.over_count == 0 || (e->qs.over_count == 1 && e->qs.over_one == g->queue);
}

void corral__victim_prep(corral_engine_t *e)
{
    for (size_t q = 0; q < e->qs.queues.n; q++)
        e->qs.queues.items[q].min_run_prio = INT32_MAX;
    e->cy.next_timer = INT64_MAX;
    for (size_t i = 0; i < e->pd.pods.n; i++) {
        const epod_t *p = &e->pd.pods.items[i];
        if (!p->alive || p->state != POD_BOUND)
            continue;
        int64_t until = p->start_ns + p->min_run_ns;
        if (p->min_run_ns > 0 && until > e->now && until < e->cy.next_timer)
            e->cy.next_timer = until;
        uint32_t q = e->pd.groups.items[p->group].queue;
        if (q != NONE && p->priority < e->qs.queues.items[q].min_run_prio)
            e->qs.queues.items[q].min_run_prio = p->priority;
    }
}

int corral__preempt(corral_engine_t *e, uint32_t gid, bool across)
{
    const egroup_t *g = &e->pd.groups.items[gid];
    if (g->queue == NONE || hopeless(e, g, across) || (across && !within_deserved(e, gid)))
        return PREEMPT_NONE;
    size_t n, running;
    uint32_t *pods = corral__group_pending(e, gid, &n, &running);
    bool nominated = false;
    for (size_t i = 0; i < n; i++)
        nominated |= e->pd.pods.items[pods[i]].nom_node != NONE;
    int need = g->min_member - (int)running;
    if (n == 0 || nominated) {
        corral_free(pods);
        return PREEMPT_NONE;
    }
    uint64_t v0 = e->version;
    victims_t v;
    collect(e, gid, across, &v);
    choice_t c = {NONE, NONE, NULL, 0, 0};
    bool ok = false;
    if (v.nunits > 0) {
        /* Preemption of a one-pod job looks node by node; reclaim follows
         * its global victim order (queue, then pod priority, then age). */
        if (!across && need <= 1 && n >= 1)
            ok = choose_on_node(e, pods[0], &v, across, &c);
        else
            ok = choose_global(e, gid, &v, across, &c);
    }
    if (ok)
        commit(e, gid, &v, &c, across);
    else
        e->version = v0; /* the search put everything back: the same state */
    corral_free(c.units);
    victims_free(&v);
    corral_free(pods);
    return ok ? PREEMPT_DONE : PREEMPT_FAILED;
}
