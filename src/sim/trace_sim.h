/*
 * Trace simulation internals: the cluster and workload in the simulator's own
 * plain form (whatever file they came from), and the two protocols.
 */
#ifndef CORRAL_TRACE_SIM_H
#define CORRAL_TRACE_SIM_H

#include <stdint.h>
#include <stdio.h>

#include "corral/engine.h"

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

typedef struct sim_cluster {
    sim_node_t *nodes;
    size_t nnodes;
    int64_t gpus; /* total */
} sim_cluster_t;

/* Objects for the engine (sim_objs.c); temporaries in arena a. */
void corral__sim_add_node(corral_engine_t *e, corral_arena_t *a, const sim_node_t *n);
void corral__sim_add_pod(corral_engine_t *e, corral_arena_t *a, const sim_pod_t *p,
                         const char *name, const char *group, int64_t now);

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
                    corral_policy_t policy, uint64_t seed, fgd_run_t *out);

/* Build FGD's typical pod shapes from a workload: the most popular
 * (cpu, gpus, gpu_milli, models) shapes covering 95% of pods. Caller frees. */
corral_shape_t *corral__typical_shapes(const sim_pod_t *pods, size_t n, size_t *nshapes);

#endif
