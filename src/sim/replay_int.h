/*
 * Replay protocol internals shared by replay.c (the simulation) and
 * replay_out.c (metrics, tables, JSON and the report).
 */
#ifndef CORRAL_REPLAY_INT_H
#define CORRAL_REPLAY_INT_H

#include "sim/trace_sim.h"

/* Cycles at one instant at most: evictions free room and the preemptors bind
 * in the next cycle; a chain longer than this waits for the next event. */
#define REPLAY_MAX_CYCLES 8

typedef struct rjob {
    const sim_pod_t *src;
    int npods;
    int bound;           /* pods bound in the current attempt */
    int64_t start;       /* ms, current attempt; -1 when not running */
    int64_t first_start; /* ms; -1 until it first ran (queueing delay) */
    int64_t end;         /* ms, when done */
    uint32_t gen;        /* attempts so far; stale completions carry an older one */
    double gpu_ms;       /* GPU-time used, all attempts (GPU x ms) */
    int64_t held_milli;  /* milli-GPUs its bound pods hold now */
    int restarts;
    int64_t est_ms;  /* runtime estimate given at every submission; -1 none */
    int64_t done_ms; /* work kept by checkpoints (a restart resumes from it) */
    bool done;
    bool infeasible; /* asks for more GPUs than the cluster has */
} rjob_t;

/* A completion: job finishes at t, if still in attempt gen. A wake-up only
 * runs a cycle at t (a pod's min-runtime protection ends then). */
typedef struct rev {
    int64_t t;
    uint32_t job;
    uint32_t gen;
    bool wake;
} rev_t;

/* Each queue's GPU-time per window (replay_share.c). */
typedef struct rshare rshare_t;

/* Allocation timeline sample: from t on, `used` milli-GPUs were allocated. */
typedef struct rsample {
    int64_t t;
    int64_t used;
} rsample_t;

typedef struct replay {
    const sim_cluster_t *c;
    const sim_workload_t *w;
    const sim_policy_t *pol;
    corral_engine_t *e;
    corral_arena_t tmp;
    int64_t now;
    rjob_t *jobs;
    uint32_t *order; /* jobs by arrival */
    rev_t *heap;     /* completions, min-heap by time */
    size_t nheap, capheap;
    rsample_t *samples;
    size_t nsamples, capsamples;
    int64_t preempted_pods;
    double lost_gpu_ms; /* GPU-time of evicted attempts (work lost) */
    int64_t used_milli; /* milli-GPUs held by bound pods now */
    int64_t waiting;    /* jobs submitted and not (re)started */
    int64_t cycles;
    int64_t last_arrival;
    rshare_t *share; /* per-queue share over time */
} replay_t;

/* Results of one policy's replay, for printing. */
typedef struct rqueue {
    const char *name;
    double share;     /* % of all GPU-time used */
    double delay_p50; /* seconds */
    double delay_p99;
    int64_t jobs;
} rqueue_t;

typedef struct rresult {
    const sim_policy_t *pol;
    double alloc_mean, alloc_p50;                       /* % over the arrival window */
    double delay_p50, delay_p95, delay_p99, delay_mean; /* seconds */
    double jct_mean, jct_p50, jct_p95;                  /* seconds */
    int64_t jobs, started, completed, unstarted, infeasible, preempted_pods, restarts, cycles;
    double lost_gpu_hours;  /* work thrown away by evictions */
    double window_s;        /* the arrival window the allocation is measured over */
    double makespan_s;      /* until the last event */
    int64_t capacity_milli; /* GPU capacity, milli-GPUs */
    double *delays;         /* per started job, seconds (for the CDF) */
    size_t ndelays;
    rsample_t *samples; /* allocation timeline */
    size_t nsamples;
    rqueue_t *queues; /* by name */
    size_t nqueues;
    /* GPU share by queue over time: share_pct[window * share_nq + queue], % of
     * GPU capacity over the window (replay_share.c) */
    double share_window_s;
    size_t share_nwin, share_nq;
    const char **share_names; /* by name */
    double *share_pct;
} rresult_t;

/* Progress of a long run: done of total arrivals. */
typedef void (*corral_progress_fn)(void *ctx, size_t done, size_t total);

int corral__replay_run(const sim_cluster_t *c, const sim_workload_t *w, const sim_policy_t *pol,
                       corral_progress_fn progress, void *pctx, rresult_t *out);
/* Metrics of a finished replay (replay_out.c). */
void corral__replay_measure(const replay_t *r, rresult_t *out);
void corral__replay_result_free(rresult_t *r);
/* report.md and charts in o->report_dir (replay_report.c). */
int corral__replay_report(const rresult_t *res, size_t n, const sim_cluster_t *c,
                          const corral_sim_trace_opts_t *o, corral_diag_t *d);
/* Runtime estimates (replay_est.c). The factor a user over-asks by for job
 * (in [1, 5)), the requested time limit that gives (-1 when true_ms is),
 * the estimate the workload's model gives job, and "oracle", "user" or
 * "none" by name (-1 when unknown). */
double corral__user_factor(uint64_t seed, uint32_t job);
int64_t corral__user_estimate(int64_t true_ms, uint64_t seed, uint32_t job);
int64_t corral__job_estimate(const sim_workload_t *w, uint32_t job);
int corral__parse_estimates(const char *s, sim_est_t *out);
const char *corral__estimates_name(sim_est_t e);
/* Per-queue share over time (replay_share.c): set up after the jobs are
 * built, told of every change to what a job holds (at r->now), turned into
 * the result's share_* fields, printed. */
void corral__rshare_init(replay_t *r);
void corral__rshare_change(replay_t *r, uint32_t job, int64_t delta_milli);
void corral__rshare_result(const replay_t *r, rresult_t *out);
void corral__rshare_free(replay_t *r);
void corral__rshare_print(FILE *out, const rresult_t *res, size_t n);
void corral__rshare_json(corral_buf_t *b, const rresult_t *r, const char *ind);
void corral__rshare_md(corral_buf_t *b, const rresult_t *res, size_t n);
/* Nearest-rank percentile p (0..100) of sorted v[0..n); 0 when n is 0. */
double corral__percentile(const double *v, size_t n, double p);

#endif
