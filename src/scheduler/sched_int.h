/*
 * Scheduler internals: the writer pool (writer.c) that the main loop
 * (sched.c) hands its API writes to, and the pod cache both share.
 */
#ifndef CORRAL_SCHED_INT_H
#define CORRAL_SCHED_INT_H

#include <pthread.h>
#include <stdatomic.h>

#include "corral/buf.h"
#include "corral/engine.h"
#include "corral/hmap.h"
#include "corral/informer.h"
#include "corral/metrics.h"
#include "corral/scheduler.h"

/* What a write is, and whether its outcome goes back to the main loop. */
enum { W_BIND = 0, W_EVICT, W_WRITE };

typedef struct wjob wjob_t;
struct wjob {
    wjob_t *next;
    int kind;
    char *key;    /* "ns/name" of the pod (binds and evictions) */
    char *method; /* e.g. "POST" */
    char *path;
    char *ctype; /* NULL: application/json */
    char *body;
    char *event_path, *event_body; /* an event to create after success (binds), or before */
    bool event_first;
    char *alt_path; /* tried when path answers 404 (a status subresource the server lacks) */
    long code;      /* the response's status; 0 when none came */
    char err[300];
};

typedef struct wqueue {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    wjob_t *head, *tail;
    corral_client_t *c;
    pthread_t thread;
    struct wpool *pool;
} wqueue_t;

typedef struct wpool {
    wqueue_t *qs;
    int n;
    volatile int stop;
    pthread_mutex_t mu; /* guards done */
    wjob_t *done;       /* outcomes of binds and evictions, newest first */
    corral_evq_t *wake; /* woken when an outcome is ready */
    atomic_ullong inflight;
    corral_scheduler_stats_t *stats; /* counters below are updated atomically */
    atomic_ullong status_writes, events, write_failures;
} wpool_t;

/* One pod (or node) the scheduler knows: its latest informer copy and what
 * was last written about it. */
typedef struct sentry {
    char *key;             /* "ns/name" (nodes: name); NULL: free slot */
    corral_watch_ev_t *ev; /* the latest copy (pods), owned */
    uint32_t fp;           /* nodes: hash of what the engine reads */
    bool in_engine;
    bool orphan;    /* bound to a node the engine does not have: in sched_t.orphans */
    bool inflight;  /* a bind or eviction of ours is being written */
    char *cond_msg; /* the PodScheduled=False message last written */
    char *ev_msg;   /* FailedScheduling: the message of the event last written */
    char *ev_name;
    int32_t ev_count, ev_written;
    int64_t ev_ms; /* when it was last written */
    int fails;     /* binds that failed in a row (retry backoff) */
    int64_t retry_ms;
} sentry_t;

typedef struct stable {
    corral_hmap_t by_key;
    sentry_t *items;
    size_t n, cap;
    uint32_t *free;
    size_t nfree, capfree;
} stable_t;

sentry_t *corral__st_get(stable_t *t, const char *key, bool create);
void corral__st_del(stable_t *t, sentry_t *s);
void corral__st_fini(stable_t *t);

/* The scheduler's metrics (metrics.c). */
typedef struct smetrics {
    corral_metrics_t *reg;
    corral_metrics_server_t *srv;
    wpool_t *pool;
    corral_metric_t *e2e, *cycle, *pending, *oldest, *q_alloc, *q_des, *q_cap, *q_weight;
    corral_metric_t *preempt, *reclaim, *binds, *bind_fail, *evict, *evict_fail;
    corral_metric_t *ratio, *gpus, *gpus_used, *leader, *writes, *write_fail, *events;
    int64_t last_snapshot_ms;
} smetrics_t;

typedef struct sched {
    const corral_scheduler_opts_t *o;
    corral_scheduler_stats_t *stats;
    corral_engine_t *e;
    corral_evq_t *q;
    wpool_t pool;
    stable_t pods, nodes;
    char **retry; /* pod keys to give back to the engine after a failed bind */
    size_t nretry, capretry;
    char **orphans; /* keys of bound pods waiting for their node (fed when it comes) */
    size_t norphans, caporphans;
    bool changed;
    uint64_t seq; /* event names */
    char instance[128];
    smetrics_t m;
} sched_t;

int64_t corral__now_ms(void);
void corral__slog(const sched_t *s, int level, const char *fmt, ...) CORRAL_PRINTF(3, 4);
/* Write a cycle's decisions (decide.c). */
void corral__apply(sched_t *s, const corral_decisions_t *d);
/* A bind or eviction came back (decide.c). */
void corral__outcome(sched_t *s, wjob_t *j);
/* Give a pod back to the engine from its latest informer copy (sched.c). */
void corral__pod_feed(sched_t *s, sentry_t *p);

/* Metrics (metrics.c): the registry and its server (--metrics-listen), a
 * cycle's histograms and snapshot gauges, a successful bind, a write's
 * outcome, the leader gauge. */
void corral__sm_start(sched_t *s);
void corral__sm_stop(sched_t *s);
void corral__sm_cycle(sched_t *s, uint64_t took_ns, const corral_decisions_t *d);
void corral__sm_bound(sched_t *s, const sentry_t *p);
void corral__sm_outcome(sched_t *s, int kind, bool ok);
void corral__sm_leader(sched_t *s, bool leader);
/* The short, stable category of a pending reason (a metric label). */
const char *corral__reason_category(const char *reason);

int corral__wpool_start(wpool_t *p, const corral_client_config_t *cfg, int n, corral_evq_t *wake,
                        char *err, size_t errlen);
/* Queue a job (ownership passes) on the worker chosen by key, so that the
 * writes about one object keep their order. */
void corral__wpool_submit(wpool_t *p, wjob_t *j);
/* Outcomes of binds and evictions ready now, oldest first (caller frees). */
wjob_t *corral__wpool_done(wpool_t *p);
/* Wait up to ms for the queued writes to finish, then stop the workers. */
void corral__wpool_stop(wpool_t *p, int64_t ms);
void corral__wjob_free(wjob_t *j);
wjob_t *corral__wjob_new(int kind, const char *key, const char *method, const char *path,
                         const char *ctype, const char *body);

#endif
