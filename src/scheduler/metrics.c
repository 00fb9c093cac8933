/*
 * The scheduler's Prometheus metrics (docs/observability.md): counters
 * bumped where the scheduler already counts (binds, evictions, preemptions,
 * reclaims), histograms of cycle length and of the end-to-end scheduling
 * latency (pod creation to a successful bind), and snapshot gauges (pending
 * pods by queue and reason category, each queue's allocated, deserved and
 * capability, the cluster's GPU allocation ratio) rebuilt from the engine's
 * views at most once a second, after a cycle, on the main thread: the
 * engine is not shared with the metrics server's thread, and a scrape never
 * walks the pods. A pending reason is free text with counts in it; its
 * label is a short stable category (corral__reason_category), so the number
 * of series stays bounded by queues x categories.
 */
#include <stdio.h>
#include <string.h>

#include "scheduler/sched_int.h"

#define SNAPSHOT_MS 1000

/* Categories of pending reasons: the label values of corral_scheduler_pending_pods. */
static const char *const categories[] = {
    "NotYetTried",
    "Insufficient nvidia.com/gpu",
    "Insufficient corral.dev/gpu-milli",
    "Insufficient cpu",
    "Insufficient memory",
    "Insufficient resources",
    "Unschedulable",
    "GangWaiting",
    "QueueOverCapability",
    "QueueClosed",
    "NetworkTopology",
    "BackfillReserved",
    "StrictOrder",
    "InvalidReference",
    "OtherScheduler",
    "Other",
};
#define NCAT CORRAL_ARRAY_LEN(categories)

static size_t category_index(const char *r)
{
    if (!r || !*r)
        return 0;
    if (strncmp(r, "0/", 2) == 0) {
        if (strstr(r, "Insufficient nvidia.com/gpu"))
            return 1;
        if (strstr(r, "Insufficient corral.dev/gpu-milli"))
            return 2;
        if (strstr(r, "Insufficient cpu"))
            return 3;
        if (strstr(r, "Insufficient memory"))
            return 4;
        if (strstr(r, "Insufficient "))
            return 5;
        return 6;
    }
    static const struct {
        const char *needle;
        size_t cat;
    } rules[] = {
        {"pod group is not ready", 7},
        {"is over its capability", 8},
        {"is closed", 9},
        {"HyperNode", 10},
        {"reserved for", 11},
        {"strict order", 12},
        {"does not exist", 13},
        {"not a leaf queue", 13},
        {"not scheduled by Corral", 14},
        {"Insufficient nvidia.com/gpu", 1},
    };
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(rules); i++) {
        if (strstr(r, rules[i].needle))
            return rules[i].cat;
    }
    return NCAT - 1;
}

const char *corral__reason_category(const char *reason)
{
    return categories[category_index(reason)];
}

static const char *const no_labels[] = {NULL};

static void make_families(smetrics_t *m)
{
    corral_metrics_t *r = m->reg;
    double b[CORRAL_METRICS_MAX_BUCKETS];
    size_t nb = corral_metrics_exp_buckets(0.001, 2, 20, b); /* 1 ms .. ~9 min */
    m->e2e = corral_metrics_histogram(
        r, "corral_scheduler_e2e_scheduling_duration_seconds",
        "Time from a pod's creation to its successful bind, by this scheduler.", NULL, b, nb);
    nb = corral_metrics_exp_buckets(0.0001, 2, 18, b); /* 0.1 ms .. ~13 s */
    m->cycle =
        corral_metrics_histogram(r, "corral_scheduler_cycle_duration_seconds",
                                 "Length of one scheduling cycle of the engine.", NULL, b, nb);
    static const char *const qr[] = {"queue", "reason", NULL};
    m->pending = corral_metrics_gauge(
        r, "corral_scheduler_pending_pods",
        "Pods waiting to be scheduled, by queue and category of their pending reason.", qr);
    static const char *const qres[] = {"queue", "resource", NULL};
    m->q_alloc = corral_metrics_gauge(
        r, "corral_queue_allocated",
        "Resources held by the running pods of a queue and its descendants (cpu in cores, "
        "memory in bytes, nvidia.com/gpu in GPUs).",
        qres);
    m->q_des = corral_metrics_gauge(
        r, "corral_queue_deserved",
        "A queue's entitlement as computed in the last cycle (same units as allocated).", qres);
    m->q_cap = corral_metrics_gauge(r, "corral_queue_capability",
                                    "A queue's capability, where one is set (same units).", qres);
    static const char *const qonly[] = {"queue", NULL};
    m->q_weight = corral_metrics_gauge(r, "corral_queue_weight", "A queue's weight.", qonly);
    m->preempt = corral_metrics_counter(r, "corral_scheduler_preemptions_total",
                                        "Evictions decided to make room for a higher-priority "
                                        "job of the same queue.",
                                        NULL);
    m->oldest = corral_metrics_gauge(
        r, "corral_scheduler_pending_pod_oldest_seconds",
        "Age (since creation) of the oldest pod of the queue this scheduler has pending.",
        (const char *const[]){"queue", NULL});
    m->reclaim = corral_metrics_counter(
        r, "corral_scheduler_reclaims_total",
        "Evictions decided to give a queue back resources other queues borrowed.", NULL);
    m->binds = corral_metrics_counter(r, "corral_scheduler_binds_total",
                                      "Pods bound to a node (successful binding writes).", NULL);
    m->bind_fail =
        corral_metrics_counter(r, "corral_scheduler_bind_failures_total",
                               "Binding writes the API server refused or that failed.", NULL);
    m->evict = corral_metrics_counter(r, "corral_scheduler_evictions_total",
                                      "Evictions written (the pod then terminates).", NULL);
    m->evict_fail = corral_metrics_counter(r, "corral_scheduler_eviction_failures_total",
                                           "Eviction writes that failed.", NULL);
    m->ratio = corral_metrics_gauge(
        r, "corral_cluster_gpu_allocation_ratio",
        "Allocated over allocatable nvidia.com/gpu of the cluster's nodes (0 to 1).", NULL);
    m->gpus = corral_metrics_gauge(r, "corral_cluster_gpus_allocatable",
                                   "GPUs of the cluster's nodes (nvidia.com/gpu).", NULL);
    m->gpus_used = corral_metrics_gauge(r, "corral_cluster_gpus_allocated",
                                        "GPUs held by pods (shares count as fractions).", NULL);
    m->leader = corral_metrics_gauge(
        r, "corral_scheduler_leader",
        "1 while this scheduler holds the leader Lease (or runs without election), else 0.", NULL);
    m->writes =
        corral_metrics_counter(r, "corral_scheduler_status_writes_total",
                               "Pod conditions, PodGroup status and event counts written.", NULL);
    m->write_fail =
        corral_metrics_counter(r, "corral_scheduler_write_failures_total",
                               "Writes other than binds and evictions that failed.", NULL);
    m->events =
        corral_metrics_counter(r, "corral_scheduler_events_total",
                               "Events (Scheduled, FailedScheduling, Preempted) created.", NULL);
}

/* On the server's thread, at each scrape: the writer pool counts for itself. */
static void collect(corral_metrics_t *reg, void *arg)
{
    (void)reg;
    smetrics_t *m = arg;
    corral_metric_set(m->writes, no_labels, (double)atomic_load(&m->pool->status_writes));
    corral_metric_set(m->write_fail, no_labels, (double)atomic_load(&m->pool->write_failures));
    corral_metric_set(m->events, no_labels, (double)atomic_load(&m->pool->events));
}

void corral__sm_start(sched_t *s)
{
    smetrics_t *m = &s->m;
    m->reg = corral_metrics_new();
    m->pool = &s->pool;
    make_families(m);
    corral_metric_set(m->leader, no_labels, 0);
    corral_metric_t *zero[] = {m->preempt, m->reclaim,    m->binds,  m->bind_fail,
                               m->evict,   m->evict_fail, m->writes, m->write_fail,
                               m->events,  m->ratio,      m->gpus,   m->gpus_used};
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(zero); i++)
        corral_metric_add(zero[i], no_labels, 0); /* every series from the first scrape */
    corral_metrics_on_collect(m->reg, collect, m);
    const char *l = s->o->metrics_listen;
    if (!l || !*l || strcmp(l, "off") == 0)
        return;
    int port = 0;
    char why[256] = "";
    if (corral_metrics_serve(l, m->reg, NULL, 0, &port, &m->srv, why, sizeof(why)) == 0)
        corral__slog(s, 0, "metrics on %s (port %d): /metrics, /healthz", l, port);
    else /* scheduling matters more than its metrics (replicas on one machine) */
        corral__slog(s, 0, "metrics: cannot serve on %s: %s; continuing without them", l, why);
}

void corral__sm_stop(sched_t *s)
{
    corral_metrics_server_stop(s->m.srv);
    s->m.srv = NULL;
    corral_metrics_free(s->m.reg);
    s->m.reg = NULL;
}

void corral__sm_leader(sched_t *s, bool leader)
{
    corral_metric_set(s->m.leader, no_labels, leader ? 1 : 0);
}

void corral__sm_bound(sched_t *s, const sentry_t *p)
{
    const corral_obj_t *o = p && p->ev ? p->ev->obj : NULL;
    corral_metric_add(s->m.binds, no_labels, 1);
    if (o && o->meta.creation_us > 0) {
        int64_t us = corral__now_ms() * 1000 - o->meta.creation_us;
        corral_metric_observe(s->m.e2e, no_labels, us > 0 ? (double)us / 1e6 : 0);
    }
}

/* --- snapshots ------------------------------------------------------------------------- */

typedef struct qrow {
    const char *queue;
    int64_t oldest_us; /* creation of its oldest pending pod, 0: unknown */
    uint32_t n[NCAT];
} qrow_t;

typedef struct tally {
    corral_hmap_t by_queue;
    qrow_t *rows;
    size_t nrows, cap;
    const char *last_reason; /* reasons are interned: runs of pods share one */
    size_t last_cat;
    sched_t *s; /* the pods' creation times */
} tally_t;

static void count_pending(const corral_pod_view_t *v, void *ctx)
{
    tally_t *t = ctx;
    const char *q = v->queue ? v->queue : "";
    uint32_t id;
    if (!corral_hmap_get(&t->by_queue, q, &id)) {
        corral_grow((void **)&t->rows, &t->cap, t->nrows + 1, sizeof(*t->rows));
        id = (uint32_t)t->nrows++;
        memset(&t->rows[id], 0, sizeof(t->rows[id]));
        t->rows[id].queue = q;
        corral_hmap_put(&t->by_queue, q, id);
    }
    if (!t->last_reason || v->reason != t->last_reason) {
        t->last_reason = v->reason;
        t->last_cat = category_index(v->reason);
    }
    t->rows[id].n[t->last_cat]++;
    char key[512];
    snprintf(key, sizeof(key), "%s/%s", v->ns, v->name);
    const sentry_t *pe = corral__st_get(&t->s->pods, key, false);
    int64_t c = pe && pe->ev && pe->ev->obj ? pe->ev->obj->meta.creation_us : 0;
    if (c > 0 && (!t->rows[id].oldest_us || c < t->rows[id].oldest_us))
        t->rows[id].oldest_us = c;
}

/* A resource amount in the metric's unit: cores, GPUs, bytes or a count. */
static double in_unit(const char *res, int64_t v)
{
    if (strcmp(res, "cpu") == 0 || strcmp(res, "nvidia.com/gpu") == 0)
        return (double)v / 1000.0;
    return (double)v;
}

static void queue_gauges(const corral_queue_view_t *q, void *ctx)
{
    smetrics_t *m = ctx;
    const char *qv[] = {q->name, NULL};
    corral_metric_set(m->q_weight, qv, q->weight);
    for (int d = 0; d < q->nres; d++) {
        const char *l[] = {q->name, q->res[d]};
        bool cap = (q->capability_mask >> d) & 1u;
        bool main_res = d < 2 || strcmp(q->res[d], "nvidia.com/gpu") == 0; /* cpu, memory, GPUs */
        bool other = strcmp(q->res[d], "pods") != 0 && strcmp(q->res[d], "ephemeral-storage") != 0;
        if (!main_res && !cap && !(other && q->allocated[d]))
            continue; /* others when capped, or extended resources in use */
        corral_metric_set(m->q_alloc, l, in_unit(q->res[d], q->allocated[d]));
        corral_metric_set(m->q_des, l, in_unit(q->res[d], q->deserved[d]));
        if (cap)
            corral_metric_set(m->q_cap, l, in_unit(q->res[d], q->capability[d]));
    }
}

static void snapshot(sched_t *s)
{
    smetrics_t *m = &s->m;
    tally_t t;
    memset(&t, 0, sizeof(t));
    corral_hmap_init(&t.by_queue);
    t.s = s;
    corral_engine_each_pending(s->e, count_pending, &t);
    int64_t now_us = corral__now_ms() * 1000;
    corral_metric_refill_begin(m->oldest);
    for (size_t i = 0; i < t.nrows; i++) {
        const char *l[] = {t.rows[i].queue};
        if (t.rows[i].oldest_us > 0)
            corral_metric_set(
                m->oldest, l,
                (double)(now_us > t.rows[i].oldest_us ? now_us - t.rows[i].oldest_us : 0) / 1e6);
    }
    corral_metric_refill_end(m->oldest);
    corral_metric_refill_begin(m->pending);
    for (size_t i = 0; i < t.nrows; i++) {
        for (size_t c = 0; c < NCAT; c++) {
            const char *l[] = {t.rows[i].queue, categories[c]};
            if (t.rows[i].n[c])
                corral_metric_set(m->pending, l, t.rows[i].n[c]);
        }
    }
    corral_metric_refill_end(m->pending);
    corral_hmap_fini(&t.by_queue);
    corral_free(t.rows);
    corral_metric_t *qg[] = {m->q_alloc, m->q_des, m->q_cap, m->q_weight};
    for (size_t i = 0; i < 4; i++)
        corral_metric_refill_begin(qg[i]);
    corral_engine_each_queue(s->e, queue_gauges, m);
    for (size_t i = 0; i < 4; i++)
        corral_metric_refill_end(qg[i]);
    corral_engine_totals_t tot;
    corral_engine_totals(s->e, &tot);
    corral_metric_set(m->gpus, no_labels, (double)tot.gpu_milli_capacity / 1000.0);
    corral_metric_set(m->gpus_used, no_labels, (double)tot.gpu_milli_used / 1000.0);
    corral_metric_set(m->ratio, no_labels,
                      tot.gpu_milli_capacity > 0
                          ? (double)tot.gpu_milli_used / (double)tot.gpu_milli_capacity
                          : 0);
}

void corral__sm_cycle(sched_t *s, uint64_t took_ns, const corral_decisions_t *d)
{
    smetrics_t *m = &s->m;
    corral_metric_observe(m->cycle, no_labels, (double)took_ns / 1e9);
    for (size_t i = 0; i < d->nevictions; i++)
        corral_metric_add(strncmp(d->evictions[i].reason, "reclaimed", 9) == 0 ? m->reclaim
                                                                               : m->preempt,
                          no_labels, 1);
    int64_t now = corral__now_ms();
    if (now - m->last_snapshot_ms < SNAPSHOT_MS)
        return;
    m->last_snapshot_ms = now;
    snapshot(s);
}

void corral__sm_outcome(sched_t *s, int kind, bool ok)
{
    smetrics_t *m = &s->m;
    if (kind == W_BIND && !ok)
        corral_metric_add(m->bind_fail, no_labels, 1);
    else if (kind == W_EVICT)
        corral_metric_add(ok ? m->evict : m->evict_fail, no_labels, 1);
}
