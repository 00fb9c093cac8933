/*
 * The replay protocol: a discrete-event simulation in virtual time. Jobs
 * arrive at their trace time, the engine runs one cycle at every time
 * something happens (arrivals, completions), bound jobs run for their trace
 * duration and leave. Jobs larger than a node become gangs of node-sized pods
 * (PodGroup with minMember = all of them); Philly's virtual clusters become
 * queues of equal weight. Every policy is given the same
 * corral.dev/runtime-estimate for a job, from the workload's estimate model
 * (the true duration, a user's time limit, or none: replay_est.c). Evicted
 * jobs (preemption, reclaim) are restarted from scratch, or from their last
 * checkpoint when the workload says jobs checkpoint.
 *
 * Metrics: GPU allocation over time (time-weighted, over the arrival window),
 * queueing delay (start - arrival) and completion time (end - arrival)
 * percentiles, preemptions, and each queue's share of the GPU time.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corral/hmap.h"
#include "corral/timefmt.h"
#include "sim/replay_int.h"

/* --- jobs ------------------------------------------------------------------------------------ */

static int cmp_arrival(const void *a, const void *b, void *ctx)
{
    const rjob_t *jobs = ctx;
    const rjob_t *x = &jobs[*(const uint32_t *)a], *y = &jobs[*(const uint32_t *)b];
    if (x->src->arrive_ms != y->src->arrive_ms)
        return x->src->arrive_ms < y->src->arrive_ms ? -1 : 1;
    return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static int max_node_gpus(const sim_cluster_t *c)
{
    int m = 1;
    for (size_t i = 0; i < c->nnodes; i++)
        m = c->nodes[i].gpus > m ? c->nodes[i].gpus : m;
    return m;
}

static void build_jobs(replay_t *r)
{
    const sim_workload_t *w = r->w;
    int per = max_node_gpus(r->c);
    r->jobs = corral_calloc(w->npods + 1, sizeof(*r->jobs));
    r->order = corral_malloc((w->npods + 1) * sizeof(*r->order));
    for (size_t i = 0; i < w->npods; i++) {
        rjob_t *j = &r->jobs[i];
        j->src = &w->pods[i];
        j->start = j->first_start = j->end = -1;
        j->npods = 1;
        j->est_ms = corral__job_estimate(w, (uint32_t)i);
        if (w->jobs && j->src->gpus > per)
            j->npods = (j->src->gpus + per - 1) / per; /* a gang of node-sized pods */
        r->order[i] = (uint32_t)i;
    }
    qsort_r(r->order, w->npods, sizeof(*r->order), cmp_arrival, r->jobs);
}

/* fifo and fifo-easy are one global queue in arrival order, as a plain
 * batch queue; the other policies see the trace's queues (Philly's virtual
 * clusters). */
static bool one_queue(const replay_t *r)
{
    return r->pol->strict || r->pol->one_queue;
}

static const char *job_queue(const replay_t *r, const rjob_t *j)
{
    return one_queue(r) ? NULL : j->src->queue;
}

/* GPUs of pod k of a job: a gang splits the job's GPUs into node-sized pods. */
static int pod_gpus(const rjob_t *j, int k)
{
    if (j->npods == 1)
        return j->src->gpus;
    int per = (j->src->gpus + j->npods - 1) / j->npods;
    int left = j->src->gpus - per * k;
    return left < per ? left : per;
}

static void submit(replay_t *r, uint32_t ji)
{
    r->waiting++;
    rjob_t *j = &r->jobs[ji];
    char group[48] = "";
    if (j->npods > 1) {
        snprintf(group, sizeof(group), "j%u", ji);
        corral_obj_t o;
        memset(&o, 0, sizeof(o));
        corral_podgroup_t pg;
        memset(&pg, 0, sizeof(pg));
        pg.min_member = j->npods;
        pg.queue = job_queue(r, j) ? job_queue(r, j) : "default";
        o.info = corral_kind_get(CORRAL_KIND_PODGROUP);
        o.meta.name = group;
        o.meta.namespace = "default";
        o.u.pg = &pg;
        corral_engine_upsert(r->e, &o, r->now, NULL);
    }
    int per = j->npods > 1 ? (j->src->gpus + j->npods - 1) / j->npods : j->src->gpus;
    int left = j->src->gpus;
    for (int k = 0; k < j->npods; k++) {
        sim_pod_t p = *j->src;
        p.queue = job_queue(r, j);
        if (j->npods > 1) {
            p.gpus = left < per ? left : per;
            left -= p.gpus;
        }
        char name[48];
        snprintf(name, sizeof(name), "j%u-%d", ji, k);
        sim_pod_ann_t ann = {j->est_ms, r->w->min_runtime_ms, r->w->checkpoint_ms};
        corral__sim_add_pod_est(r->e, &r->tmp, &p, name, j->npods > 1 ? group : NULL, r->now, &ann);
        corral_arena_reset(&r->tmp);
    }
}

static void withdraw(replay_t *r, uint32_t ji)
{
    rjob_t *j = &r->jobs[ji];
    for (int k = 0; k < j->npods; k++) {
        char name[48];
        snprintf(name, sizeof(name), "j%u-%d", ji, k);
        corral_engine_remove(r->e, CORRAL_KIND_POD, "default", name);
    }
    if (j->npods > 1) {
        char group[48];
        snprintf(group, sizeof(group), "j%u", ji);
        corral_engine_remove(r->e, CORRAL_KIND_PODGROUP, "default", group);
    }
}

/* Job index and pod number from a pod name "j<index>-<k>". */
static uint32_t job_of(const char *pod)
{
    return (uint32_t)strtoul(pod + 1, NULL, 10);
}

static int pod_of(const char *pod)
{
    const char *dash = strchr(pod, '-');
    return dash ? (int)strtol(dash + 1, NULL, 10) : 0;
}

/* --- completions: a binary min-heap of (time, job) ------------------------------------------ */

static bool ev_less(const rev_t *a, const rev_t *b)
{
    return a->t != b->t ? a->t < b->t : a->job < b->job;
}

static void heap_push(replay_t *r, int64_t t, uint32_t job, uint32_t gen, bool wake)
{
    if (r->nheap == r->capheap) {
        r->capheap = r->capheap ? r->capheap * 2 : 1024;
        r->heap = corral_realloc(r->heap, r->capheap * sizeof(*r->heap));
    }
    size_t i = r->nheap++;
    r->heap[i] = (rev_t){t, job, gen, wake};
    while (i > 0 && ev_less(&r->heap[i], &r->heap[(i - 1) / 2])) {
        rev_t tmp = r->heap[i];
        r->heap[i] = r->heap[(i - 1) / 2];
        r->heap[(i - 1) / 2] = tmp;
        i = (i - 1) / 2;
    }
}

static rev_t heap_pop(replay_t *r)
{
    rev_t top = r->heap[0];
    r->heap[0] = r->heap[--r->nheap];
    for (size_t i = 0;;) {
        size_t m = i, a = 2 * i + 1, b = 2 * i + 2;
        if (a < r->nheap && ev_less(&r->heap[a], &r->heap[m]))
            m = a;
        if (b < r->nheap && ev_less(&r->heap[b], &r->heap[m]))
            m = b;
        if (m == i)
            break;
        rev_t tmp = r->heap[i];
        r->heap[i] = r->heap[m];
        r->heap[m] = tmp;
        i = m;
    }
    return top;
}

/* --- the event loop ------------------------------------------------------------------------- */

static void sample(replay_t *r)
{
    int64_t used = r->used_milli;
    if (r->nsamples && r->samples[r->nsamples - 1].used == used)
        return;
    if (r->nsamples && r->samples[r->nsamples - 1].t == r->now) {
        r->samples[r->nsamples - 1].used = used;
        return;
    }
    if (r->nsamples == r->capsamples) {
        r->capsamples = r->capsamples ? r->capsamples * 2 : 1024;
        r->samples = corral_realloc(r->samples, r->capsamples * sizeof(*r->samples));
    }
    r->samples[r->nsamples++] = (rsample_t){r->now, used};
}

/* GPUs a job holds while it runs (shares count as their fraction). */
static double job_gpus(const rjob_t *j)
{
    return j->src->gpus * (j->src->gpu_milli / 1000.0);
}

/* A pod of a job was bound: the job starts when its last pod is. */
static void on_bind(replay_t *r, uint32_t ji, int k)
{
    rjob_t *j = &r->jobs[ji];
    r->used_milli += (int64_t)pod_gpus(j, k) * j->src->gpu_milli;
    j->held_milli += (int64_t)pod_gpus(j, k) * j->src->gpu_milli;
    corral__rshare_change(r, ji, (int64_t)pod_gpus(j, k) * j->src->gpu_milli);
    if (++j->bound < j->npods)
        return;
    r->waiting--;
    if (j->first_start < 0)
        j->first_start = r->now;
    j->start = r->now;
    if (j->src->duration_ms >= 0)
        heap_push(r, r->now + j->src->duration_ms - j->done_ms, ji, j->gen, false);
    /* The protection ends while the job runs: a live scheduler would try
     * again then (its next cycle), so the replay runs one. */
    if (r->pol->evict && r->w->min_runtime_ms > 0 &&
        (j->src->duration_ms < 0 || r->w->min_runtime_ms < j->src->duration_ms - j->done_ms))
        heap_push(r, r->now + r->w->min_runtime_ms, ji, j->gen, true);
}

/* A pod of a job was evicted: the whole job stops and queues again. Its work
 * since its last checkpoint is lost (all of it when jobs do not checkpoint,
 * as for a preempted batch job); a restart resumes from that checkpoint. */
static void on_evict(replay_t *r, uint32_t ji)
{
    rjob_t *j = &r->jobs[ji];
    if (j->bound == 0 && j->start < 0)
        return; /* already withdrawn this cycle */
    if (j->start >= 0) {
        int64_t ran = r->now - j->start, kept = 0;
        if (r->w->checkpoint_ms > 0)
            kept = ran / r->w->checkpoint_ms * r->w->checkpoint_ms;
        j->done_ms += kept;
        j->gpu_ms += (double)ran * job_gpus(j);
        r->lost_gpu_ms += (double)(ran - kept) * job_gpus(j);
    }
    r->preempted_pods += j->bound;
    r->used_milli -= j->held_milli;
    corral__rshare_change(r, ji, -j->held_milli);
    j->held_milli = 0;
    if (j->bound < j->npods)
        r->waiting--; /* it was still waiting; submit counts it again */
    j->restarts++;
    j->gen++;
    j->bound = 0;
    j->start = -1;
    withdraw(r, ji);
    submit(r, ji);
}

static void run_cycles(replay_t *r)
{
    for (int i = 0; i < REPLAY_MAX_CYCLES; i++) {
        const corral_decisions_t *d;
        corral_engine_cycle(r->e, r->now * 1000000, &d);
        r->cycles++;
        for (size_t k = 0; k < d->nbinds; k++)
            on_bind(r, job_of(d->binds[k].name), pod_of(d->binds[k].name));
        /* Collect first: evicting changes the engine's decisions buffer. */
        size_t nev = d->nevictions;
        uint32_t *ev = corral_malloc((nev + 1) * sizeof(*ev));
        for (size_t k = 0; k < nev; k++)
            ev[k] = job_of(d->evictions[k].name);
        for (size_t k = 0; k < nev; k++)
            on_evict(r, ev[k]);
        corral_free(ev);
        if (nev == 0)
            return; /* binds apply at once; only evictions need another cycle */
    }
}

/*
 * A cycle after arrivals alone (nothing freed) can be skipped when it could
 * not place anything, which keeps the replay fast on deep queues: under
 * strict order when older jobs wait (new ones queue behind them), and for
 * policies without eviction when no new job fits on any node's free GPUs.
 * Both are exact: the cycle that is skipped would bind nothing.
 */
static bool cannot_start(const replay_t *r, const rjob_t *j)
{
    if (j->src->gpu_milli < 1000 || j->src->gpus == 0)
        return false; /* shares and cpu-only pods: no quick test */
    return pod_gpus(j, 0) > corral_engine_max_free_gpus(r->e);
}

static bool skippable(const replay_t *r, int64_t waiting_before, bool hopeless)
{
    if (r->pol->strict && waiting_before > 0)
        return true;
    return !r->pol->evict && hopeless;
}

static bool complete(replay_t *r, rev_t ev)
{
    uint32_t ji = ev.job;
    rjob_t *j = &r->jobs[ji];
    if (ev.gen != j->gen || j->start < 0)
        return false; /* stale: the job was evicted since */
    j->end = r->now;
    j->gpu_ms += (double)(r->now - j->start) * job_gpus(j);
    r->used_milli -= j->held_milli;
    corral__rshare_change(r, ji, -j->held_milli);
    j->held_milli = 0;
    withdraw(r, ji);
    j->bound = 0;
    j->done = true;
    return true;
}

static void add_queues(replay_t *r)
{
    if (one_queue(r))
        return;
    corral_hmap_t seen;
    corral_hmap_init(&seen);
    for (size_t i = 0; i < r->w->npods; i++) {
        const char *q = r->w->pods[i].queue;
        uint32_t unused;
        if (!q || corral_hmap_get(&seen, q, &unused))
            continue;
        corral_hmap_put(&seen, q, 0);
        corral_obj_t o;
        memset(&o, 0, sizeof(o));
        corral_queue_t qu;
        memset(&qu, 0, sizeof(qu));
        qu.weight = 1;
        qu.reclaimable = true;
        o.info = corral_kind_get(CORRAL_KIND_QUEUE);
        o.meta.name = q;
        o.u.queue = &qu;
        corral_engine_upsert(r->e, &o, 0, NULL);
    }
    corral_hmap_fini(&seen);
}

static int64_t next_time(const replay_t *r, size_t ai)
{
    int64_t t = INT64_MAX;
    if (ai < r->w->npods)
        t = r->jobs[r->order[ai]].src->arrive_ms;
    if (r->nheap && r->heap[0].t < t)
        t = r->heap[0].t;
    return t;
}

static void simulate(replay_t *r, corral_progress_fn progress, void *pctx)
{
    size_t ai = 0;
    for (int64_t t; (t = next_time(r, ai)) != INT64_MAX;) {
        r->now = t;
        bool freed = false, hopeless = true;
        int64_t waiting = r->waiting;
        while (r->nheap && r->heap[0].t == t) {
            rev_t ev = heap_pop(r);
            freed |= ev.wake ? r->waiting > 0 : complete(r, ev);
        }
        while (ai < r->w->npods && r->jobs[r->order[ai]].src->arrive_ms == t) {
            uint32_t ji = r->order[ai++];
            if (r->jobs[ji].src->gpus <= r->c->gpus) {
                submit(r, ji);
                hopeless &= cannot_start(r, &r->jobs[ji]);
            } else {
                r->jobs[ji].infeasible = true;
            }
            r->last_arrival = t;
        }
        if (freed || !skippable(r, waiting, hopeless))
            run_cycles(r);
        sample(r);
        if (progress && (ai & 1023) == 0)
            progress(pctx, ai, r->w->npods);
    }
}

int corral__replay_run(const sim_cluster_t *c, const sim_workload_t *w, const sim_policy_t *pol,
                       corral_progress_fn progress, void *pctx, rresult_t *out)
{
    replay_t r;
    memset(&r, 0, sizeof(r));
    r.c = c;
    r.w = w;
    r.pol = pol;
    corral_sched_config_t cfg;
    corral__sim_config(pol, 1, &cfg);
    int rc = corral_engine_new(&cfg, &r.e);
    if (rc != 0)
        return rc;
    corral_arena_init(&r.tmp);
    for (size_t i = 0; i < c->nnodes; i++) {
        corral__sim_add_node(r.e, &r.tmp, &c->nodes[i]);
        corral_arena_reset(&r.tmp);
    }
    add_queues(&r);
    build_jobs(&r);
    corral__rshare_init(&r);
    simulate(&r, progress, pctx);
    corral__replay_measure(&r, out);
    corral__rshare_free(&r);
    corral_engine_free(r.e);
    corral_arena_fini(&r.tmp);
    corral_free(r.jobs);
    corral_free(r.order);
    corral_free(r.heap);
    return 0;
}
