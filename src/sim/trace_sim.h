/*
 * Trace simulation internals: the cluster and workload in the simulator's own
 * plain form (whatever file they came from), and the two protocols.
 */
#ifndef CORRAL_TRACE_SIM_H
#define CORRAL_TRACE_SIM_H

#include <stdint.h>
#include <stdio.h>

#include "corral/buf.h"
#include "corral/engine.h"
#include "corral/sim.h"

typedef struct sim_node {
    const char *name;
    int64_t cpu_milli;
    int64_t mem_mib;
    int gpus;
    const char *model; /* "" when none */
} sim_node_t;

typedef struct sim_pod {
    const char *name;
    int64_t cpu_milli;
    int64_t mem_mib;
    int gpus;      /* whole GPUs, or 1 for a share */
    int gpu_milli; /* per GPU: 1000 whole, less for a share, 0 cpu-only */
    const char *const *models;
    size_t nmodels;
    /* replay protocol */
    int64_t arrive_ms;
    int64_t duration_ms; /* -1: runs forever */
    const char *queue;   /* NULL: default */
} sim_pod_t;

/* Runtime estimates the replay gives the jobs (corral.dev/runtime-estimate),
 * the same for every policy: the true duration, a user's requested time
 * limit (replay_est.c), or none. */
typedef enum { SIM_EST_ORACLE, SIM_EST_USER, SIM_EST_NONE } sim_est_t;

typedef struct sim_workload {
    sim_pod_t *pods;
    size_t npods;
    bool timed; /* arrival times known (replay possible) */
    bool jobs;  /* Philly-style jobs: whole GPUs, may span nodes */
    /* replay: how the jobs are submitted (zero: oracle estimates, no
     * checkpoints, no protection) */
    sim_est_t estimates;
    uint64_t est_seed;      /* user estimates: the draw of each job's factor */
    int64_t checkpoint_ms;  /* > 0: jobs checkpoint this often; a restart resumes */
    int64_t min_runtime_ms; /* > 0: every pod's corral.dev/min-runtime */
} sim_workload_t;

typedef struct sim_cluster {
    sim_node_t *nodes;
    size_t nnodes;
    int64_t gpus; /* total */
} sim_cluster_t;

/* Loading (trace_load.c); everything in arena a, problems to d. */
int corral__load_cluster(const corral_sim_trace_opts_t *o, corral_arena_t *a, corral_diag_t *d,
                         sim_cluster_t *c);
int corral__load_workload(const char *path, corral_arena_t *a, corral_diag_t *d, sim_workload_t *w);

/* A policy as the simulator runs it: the engine's node policy plus order
 * and action switches ("fifo" is binpack in strict order, no backfill). */
typedef struct sim_policy {
    const char *name;
    corral_policy_t node;
    bool strict;
    bool backfill;
    bool evict;                      /* preempt and reclaim */
    const corral_schedconf_t *conf;  /* --config on top of the switches above; may be NULL */
    const corral_score_tune_t *tune; /* score constants (bench/fgd_cv.c); NULL: defaults */
    bool one_queue;                  /* replay: one global queue, not the trace's (fifo-easy) */
} sim_policy_t;

const sim_policy_t *corral__sim_policy(const char *name);
size_t corral__sim_all_policies(const sim_policy_t **out, size_t max);
void corral__sim_config(const sim_policy_t *p, uint64_t seed, corral_sched_config_t *cfg);

/* Objects for the engine (sim_objs.c); temporaries in arena a. */
void corral__sim_add_node(corral_engine_t *e, corral_arena_t *a, const sim_node_t *n);
void corral__sim_add_pod(corral_engine_t *e, corral_arena_t *a, const sim_pod_t *p,
                         const char *name, const char *group, int64_t now);
/* Annotations the replay adds to a pod (ms; -1 for none): runtime estimate,
 * min-runtime protection, checkpoint interval. */
typedef struct sim_pod_ann {
    int64_t est_ms, min_run_ms, ckpt_ms;
} sim_pod_ann_t;
/* The same, with those annotations. */
void corral__sim_add_pod_est(corral_engine_t *e, corral_arena_t *a, const sim_pod_t *p,
                             const char *name, const char *group, int64_t now,
                             const sim_pod_ann_t *ann);

#define FGD_POINTS 6
extern const int corral__fgd_points[FGD_POINTS]; /* 50 75 90 100 110 130 */

/* One FGD-protocol run: allocation, fragmentation and ratio at each point,
 * plus the allocation curve by whole percent of arrived work (0..130). */
typedef struct fgd_run {
    double alloc[FGD_POINTS];      /* % of GPU capacity allocated */
    double frag[FGD_POINTS];       /* % of GPU capacity fragmented */
    double frag_ratio[FGD_POINTS]; /* % of idle GPU fragmented */
    double curve[131];             /* allocation % when arrived reaches k% */
    int64_t pods, failed;
} fgd_run_t;

/* Run the FGD protocol once for policy with seed (deterministic). */
int corral__fgd_run(const sim_cluster_t *c, const sim_pod_t *pods, size_t npods,
                    const sim_policy_t *policy, uint64_t seed, fgd_run_t *out);

/* The FGD protocol over policies x seeds, printed and reported. */
/* Run worker(ctx) on min(threads, jobs) threads (threads <= 0: one per
 * core; at most 64) and wait for them all. The workers share out the jobs. */
void corral__sim_parallel(void *(*worker)(void *), void *ctx, int threads, size_t jobs);

int corral__fgd_main(const corral_sim_trace_opts_t *o, const sim_cluster_t *c,
                     const sim_workload_t *w, const sim_policy_t **pol, size_t npol,
                     corral_diag_t *d);
/* The replay protocol for each policy, printed and reported. */
int corral__replay_main(const corral_sim_trace_opts_t *o, const sim_cluster_t *c,
                        const sim_workload_t *w, const sim_policy_t **pol, size_t npol,
                        corral_diag_t *d);
/* Write buf to dir/name (creating dir); problems to d. */
int corral__write_file(const char *dir, const char *name, const corral_buf_t *buf,
                       corral_diag_t *d);

/* Build FGD's typical pod shapes from a workload: the most popular
 * (cpu, gpus, gpu_milli, models) shapes covering 95% of pods. Caller frees. */
corral_shape_t *corral__typical_shapes(const sim_pod_t *pods, size_t n, size_t *nshapes);

#endif
