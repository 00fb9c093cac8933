/*
 * The scheduling engine: a pure library. It keeps a cluster snapshot (nodes,
 * pods, pod groups, queues, priority classes, HyperNodes), updated one object
 * at a time in O(1) or O(log n), and runs scheduling cycles over it: each cycle
 * returns decisions (bind a pod to a node and GPUs, evict a pod, and a pending
 * reason for every pod it could not place).
 *
 * No I/O, no clocks, no threads, no globals: the current time is an argument,
 * randomness comes from a seed in the configuration, and the same snapshot and
 * configuration always give the same decisions. The live scheduler and the
 * simulator call exactly these functions.
 *
 * Ownership: the engine copies what it keeps from the objects it is given; the
 * caller may free them after the call. Decisions live in the engine until the
 * next cycle (or corral_engine_free).
 */
#ifndef CORRAL_ENGINE_H
#define CORRAL_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include "corral/diag.h"
#include "corral/model.h"

typedef struct corral_engine corral_engine_t;

/* --- configuration ------------------------------------------------------------ */

typedef enum corral_policy {
    CORRAL_POLICY_CORRAL = 0, /* default: topology- and fragmentation-aware packing */
    CORRAL_POLICY_BINPACK,    /* MostAllocated */
    CORRAL_POLICY_SPREAD,     /* LeastAllocated (kube-scheduler's default) */
    CORRAL_POLICY_RANDOM,     /* any feasible node, uniformly (seeded) */
    CORRAL_POLICY_BESTFIT,    /* least leftover, summed over normalized resources */
    CORRAL_POLICY_DOTPROD,    /* Tetris: max dot product of request and free */
    CORRAL_POLICY_FGD, /* fragmentation gradient descent (Weng et al., ATC'23), as published */
    CORRAL_POLICY_COUNT
} corral_policy_t;

/* Constants of the corral policy's score, chosen by cross-validation on the
 * openb pod lists (docs/efficiency.md, bench/fgd_cv.c); the defaults are the
 * chosen values. Internal: not in SchedulerConfiguration. */
typedef struct corral_score_tune {
    int frag_div;    /* fragmentation steps: 100 * sigmoid(decrease / frag_div milli) */
    int share_gpu;   /* a share's GPU among equal steps: 0 the first, 1 the fullest */
    int share_first; /* 1: a share's GPU fill is compared before fragmentation */
    int share_node;  /* 1: shares then prefer nodes with few free whole GPUs */
    int cpu_pod;     /* cpu-only pods: 0 fewest free whole GPUs, 1 then most cpu left per
                      * idle GPU, 2 most cpu left per idle GPU first */
    int whole_cpu;   /* whole-GPU pods after GPU packing: 1 keep cpu for the free GPUs */
    int share_pack;  /* 1: a share prefers the fullest GPU after fragmentation; 0: name order */
    int whole_pack;  /* 1: whole-GPU pods prefer the fewest free whole GPUs; 0: name order */
    int cpu_pack;    /* 1: cpu-only pods prefer nodes with the fewest free GPUs; 0: name order */
    int share_heavy; /* whole_pack applies only while shares are at most this many permille
                      * of the workload's GPU pods (1000: always) */
} corral_score_tune_t;

typedef struct corral_sched_config {
    /* Actions, run in this order each cycle. */
    bool enqueue; /* accepted for Volcano's action lists; its checks always run */
    bool allocate;
    bool backfill;
    bool preempt;
    bool reclaim;
    /* Strict order (FIFO): once a job in the order of service cannot be placed,
     * no later job starts in that cycle. */
    bool strict_order;
    corral_policy_t policy;
    uint64_t seed; /* for CORRAL_POLICY_RANDOM and tie-breaking that asks for it */
    /* Score weights of the corral policy (see docs/scheduling.md). */
    int w_prefer;   /* preferred node affinity and PreferNoSchedule taints */
    int w_pack;     /* GPU packing */
    int w_topology; /* NVLink quality of the chosen GPU set */
    int w_frag;     /* fragmentation of what is left free */
    int w_cpu;      /* cpu/memory packing (off by default) */
    /* Added to the preferences score of a node whose corral.dev/model-caches
     * lists the pod's corral.dev/model-cache (0: off; a preferred node
     * affinity term's weight, 1-100, is its scale). */
    int w_model_cache;
    corral_score_tune_t tune;
    /* Eviction limits per cycle (0: unlimited). */
    int max_evictions;
    /* Time-decayed fair share (docs/scheduling.md, "Fair share"): a queue's
     * order of service counts its past allocation, weighted 2^(-age /
     * half-life). 0: off (the order uses the current allocation only). */
    int64_t fair_half_life_ns;
    double fair_usage_weight; /* 0..1: weight of the past against the present */
} corral_sched_config_t;

/* Fill the defaults documented in docs/scheduling.md. */
void corral_sched_config_default(corral_sched_config_t *c);
/* Parse a policy name ("corral", "binpack", ...); -1 when unknown. */
int corral_policy_from_name(const char *name);
const char *corral_policy_name(corral_policy_t p);
/* Apply what a SchedulerConfiguration sets on top of c (fields it leaves out
 * keep c's values). CORRAL_EINVAL when it names an unknown policy or a
 * fair-share setting out of range (c is then unchanged). */
int corral_sched_config_apply(corral_sched_config_t *c, const corral_schedconf_t *s);

/* --- lifecycle ------------------------------------------------------------------ */

int corral_engine_new(const corral_sched_config_t *cfg, corral_engine_t **out);
void corral_engine_free(corral_engine_t *e);
void corral_engine_set_config(corral_engine_t *e, const corral_sched_config_t *cfg);
/* Which pods are the caller's to place: a pending pod whose spec.schedulerName
 * is one of names ("" stands for a pod that names none) is placed; any other
 * is held as another scheduler's (pending, never placed, with the reason
 * "not scheduled by Corral: ..."). names NULL (the default): every pod is the
 * caller's. The names are copied. The simulator passes the names of
 * SCENARIOS.md; the live scheduler filters pods itself. */
int corral_engine_set_schedulers(corral_engine_t *e, const char *const *names, size_t n);

/* --- snapshot updates ---------------------------------------------------------------
 *
 * upsert adds an object or replaces what the engine knows about it. Kinds the
 * engine reads: Node, Pod, PodGroup, Queue, PriorityClass, HyperNode; others
 * are ignored (return 0). A Pod with spec.nodeName is running there (its GPUs
 * from annotation corral.dev/gpu-ids, else chosen by the placement rule),
 * started at now_ns: a caller that knows a pod started earlier passes that
 * time (the simulator reads annotation corral.dev/started-at). Problems (a
 * pod that does not fit the node it is bound to, bad annotations) are
 * reported to diag, which may be NULL.
 */
int corral_engine_upsert(corral_engine_t *e, const corral_obj_t *o, int64_t now_ns,
                         corral_diag_t *diag);
/* Remove an object (pods: deleted, completed or evicted; they free their
 * resources). ns is ignored for cluster-scoped kinds. CORRAL_ENOENT if unknown. */
int corral_engine_remove(corral_engine_t *e, corral_kind_t kind, const char *ns, const char *name);

/* --- cycles ------------------------------------------------------------------------ */

typedef struct corral_bind {
    const char *ns;
    const char *name;
    const char *node;
    const char *gpu_ids; /* "0,1" (as for annotation corral.dev/gpu-ids); "" when none */
} corral_bind_t;

typedef struct corral_evict {
    const char *ns;
    const char *name;
    const char *reason; /* human-readable: "preempted by ns/pod (priority 100 > 10)" */
    const char *for_ns; /* the preemptor's job */
    const char *for_job;
} corral_evict_t;

typedef struct corral_pending {
    const char *ns;
    const char *name;
    const char *reason; /* kube-scheduler style, see SCENARIOS.md */
} corral_pending_t;

typedef struct corral_group_status {
    const char *ns;
    const char *name;
    const char *phase;   /* Pending, Inqueue, Running */
    const char *message; /* condition message when not all pods could be placed */
} corral_group_status_t;

typedef struct corral_cycle_stats {
    uint32_t placed;
    uint32_t evicted;
    uint32_t pending; /* pods left pending after the cycle, all of them */
    uint32_t jobs_tried;
    uint32_t nodes_evaluated;
} corral_cycle_stats_t;

typedef struct corral_decisions {
    corral_bind_t *binds;
    size_t nbinds;
    corral_evict_t *evictions;
    size_t nevictions;
    corral_pending_t *pending; /* pods whose pending reason is new or changed, by age */
    size_t npending;
    corral_group_status_t *groups; /* pod groups whose phase or message changed, by age */
    size_t ngroups;
    corral_cycle_stats_t stats;
} corral_decisions_t;

/*
 * Run one cycle at time now_ns. Binds are applied to the snapshot at once (the
 * pods are running from now_ns on); evicted pods stay in the snapshot, holding
 * their resources, until the caller removes them. *out points into the engine
 * and is valid until the next cycle or corral_engine_free.
 *
 * Decisions report changes: a pod's pending reason when it is new or differs
 * from the last one reported (corral_engine_pod gives the current one any
 * time). A cycle after nothing but new pending pods is quiet: only the new
 * jobs are tried, since nothing freed room for the others (docs/scheduling.md).
 */
int corral_engine_cycle(corral_engine_t *e, int64_t now_ns, const corral_decisions_t **out);

/* --- workload and fragmentation --------------------------------------------------------- */

/* A pod shape the cluster typically receives, with its relative frequency
 * (weights are normalised). models: GPU models it may use (empty: any). */
typedef struct corral_shape {
    int64_t cpu_milli;
    int gpus;      /* 0 for cpu-only */
    int gpu_milli; /* per GPU: 1000 for whole GPUs, less for a share */
    const char *const *models;
    size_t nmodels;
    double weight;
} corral_shape_t;

/* Set the workload that fragmentation is measured against (copied). Without
 * one, the engine uses the shapes of the pods it holds. */
int corral_engine_set_workload(corral_engine_t *e, const corral_shape_t *shapes, size_t n);
/* Cluster fragmentation in milli-GPUs (and the idle GPU milli, if wanted). */
double corral_engine_frag(corral_engine_t *e, double *idle_milli);

/* Place one pending pod now, outside a cycle: node choice only (no queues,
 * gangs, backfill or eviction). For trace simulation of the FGD protocol.
 * Returns 0 and fills *out (its strings valid until the next call that
 * changes the engine; out->gpu_ids until the next corral_engine_place_one),
 * CORRAL_EAGAIN when no node can take it, or CORRAL_ENOENT. */
int corral_engine_place_one(corral_engine_t *e, const char *ns, const char *name, int64_t now_ns,
                            corral_bind_t *out);

/* --- inspection (for the simulator, the CLI and tests) --------------------------------- */

/* Room for the longest GPU id list: "0,1,...,63" (a node has at most 64 GPUs). */
#define CORRAL_GPU_IDS_LEN 192

typedef struct corral_pod_view {
    const char *ns;
    const char *name;
    bool bound;
    bool terminating;
    const char *node;                 /* when bound */
    char gpu_ids[CORRAL_GPU_IDS_LEN]; /* when bound: "0,1", else "" (the view's own copy) */
    int64_t start_ns;
    const char *reason; /* last pending reason, or NULL */
    const char *queue;
    int32_t priority;
} corral_pod_view_t;

/* Look up a pod; CORRAL_ENOENT when unknown. The string pointers are valid
 * until the next call that changes the engine; gpu_ids is the view's own. */
int corral_engine_pod(const corral_engine_t *e, const char *ns, const char *name,
                      corral_pod_view_t *out);
/* Visit every pod in age order (oldest first). */
typedef void (*corral_pod_visit_fn)(const corral_pod_view_t *p, void *ctx);
void corral_engine_each_pod(const corral_engine_t *e, corral_pod_visit_fn fn, void *ctx);

/* Visit every pending pod (not placed, not another scheduler's), in no
 * particular order and without sorting: cheap enough once per cycle for a
 * snapshot of what waits and why (the live scheduler's metrics). */
void corral_engine_each_pending(const corral_engine_t *e, corral_pod_visit_fn fn, void *ctx);

/* A queue as the last cycle saw it. Amounts are per resource dimension, in
 * the engine's units: cpu in millicores, nvidia.com/gpu in milli-GPUs,
 * memory and ephemeral-storage in bytes, others as counted. The pointers
 * are valid during the visit only. */
typedef struct corral_queue_view {
    const char *name;
    const char *parent; /* NULL: a top-level queue */
    bool closed;
    int32_t weight;
    int nres;                 /* dimensions in the arrays below */
    const char *const *res;   /* their names: "cpu", "memory", "nvidia.com/gpu", ... */
    const int64_t *allocated; /* running pods of the queue and its descendants */
    const int64_t *deserved;  /* the entitlement computed in the last cycle */
    const int64_t *capability;
    uint32_t capability_mask; /* bit d: a capability is set on dimension d */
} corral_queue_view_t;
typedef void (*corral_queue_visit_fn)(const corral_queue_view_t *q, void *ctx);
/* Visit every queue, in no particular order. */
void corral_engine_each_queue(const corral_engine_t *e, corral_queue_visit_fn fn, void *ctx);

typedef struct corral_engine_totals {
    int64_t gpu_milli_capacity; /* sum over nodes, 1000 per GPU */
    int64_t gpu_milli_used;
    int64_t cpu_milli_capacity;
    int64_t cpu_milli_used;
    uint32_t nodes;
    uint32_t pods_running;
    uint32_t pods_pending;
} corral_engine_totals_t;
void corral_engine_totals(const corral_engine_t *e, corral_engine_totals_t *out);
/* The most whole GPUs free on any one node (O(1)): a pod asking for more
 * cannot be placed now. */
int corral_engine_max_free_gpus(const corral_engine_t *e);

/* What the engine holds, to show that it stays flat as objects come and go
 * (a scheduler runs for months): live entries and slots (live + free) of
 * each table, and an estimate of the heap bytes behind them. */
typedef struct corral_engine_mem {
    size_t bytes; /* arrays, hash maps, arenas and owned strings, as allocated */
    uint32_t nodes, node_slots;
    uint32_t pods, pod_slots;
    uint32_t groups, group_slots;
    uint32_t queues;
    uint32_t priority_classes, pc_slots;
    uint32_t profiles, profile_slots;   /* interned pod constraints */
    uint32_t node_classes, class_slots; /* nodes with equal labels and taints */
    uint32_t request_classes, rcls_slots;
    uint32_t shapes, shape_slots; /* pod shapes held (derived workload) */
    uint32_t reasons;             /* interned pending reasons (trimmed at 65,536) */
} corral_engine_mem_t;
void corral_engine_mem(const corral_engine_t *e, corral_engine_mem_t *out);

/* For tests: count from scratch what the engine keeps up to date as objects
 * change (each queue's demand and allocation, the pending count) and compare.
 * 0 when they agree; else CORRAL_EINVAL with the first difference in msg.
 * It changes nothing (the kept numbers stay as they were), and holds at any
 * time between calls, not only after a cycle. */
int corral_engine_selfcheck(corral_engine_t *e, char *msg, size_t len);

#endif
