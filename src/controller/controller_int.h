/*
 * Internals of the controllers: the object cache every controller reads
 * (one entry per object, by kind/namespace/name and by uid, with
 * multimaps of dependents by owner uid), the timer heap on the monotonic
 * clock, and the Job state machine as a pure function (job + its pods +
 * the events seen -> a plan of actions), so tests drive it without a
 * server.
 */
#ifndef CORRAL_CONTROLLER_INT_H
#define CORRAL_CONTROLLER_INT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "corral/client.h"
#include "corral/controller.h"
#include "corral/hmap.h"
#include "corral/informer.h"
#include "corral/metrics.h"
#include "corral/model.h"

/* --- the Job state machine (jobsm.c, pure) ---------------------------------------------- */

/* What happened to a job's pod since the last reconcile. Strings borrowed. */
typedef struct corral__job_ev {
    const char *event; /* PodFailed, PodEvicted, PodSucceeded (becomes TaskCompleted when
                          the task is done), Unknown, or NULL (out of sync) */
    const char *task;  /* volcano.sh/task-spec of the pod; NULL for job-level events */
    const char *pod;   /* the pod's name; NULL for job-level events */
    int64_t version;   /* the pod's volcano.sh/job-version; -1 when none */
    bool has_exit;
    int32_t exit_code; /* of the first container, for PodFailed */
} corral__job_ev_t;

typedef struct corral__task_count {
    const char *task;
    int32_t pending, running, succeeded, failed, unknown;
} corral__task_count_t;

typedef struct corral__job_create {
    size_t task;
    int32_t index;
} corral__job_create_t;

typedef struct corral__job_plan {
    const char *action;             /* SyncJob, RestartJob, AbortJob, CompleteJob, TerminateJob,
                                       RestartTask, RestartPod: what ran */
    const char *from_phase, *phase; /* before and after ("" before the first status) */
    const char *reason, *message;   /* status.state reason and message */
    const corral_obj_t **del;       /* pods to delete */
    size_t ndel;
    corral__job_create_t *create; /* pods to create */
    size_t ncreate;
    bool ensure_pg, delete_pg, delete_job;
    int64_t ttl_at_us; /* > 0: delete the job at this wall-clock time */
    int64_t version;
    int32_t retry_count, min_available;
    int32_t pending, running, succeeded, failed, terminating, unknown;
    corral__task_count_t *tasks;
    size_t ntasks;
    int64_t transition_us; /* state.lastTransitionTime */
    bool phase_changed;
    corral_val_t *status; /* the whole status to write (in the plan's arena) */
} corral__job_plan_t;

/*
 * Decide what the job controller does for job now (wall clock now_us),
 * given the pods it controls (deleting[i]: a delete of pods[i] was already
 * sent) and the events seen since last time, as Volcano's job controller:
 * the first event that a policy maps to an action runs that action (task
 * policies before job policies; events of pods from an older job version
 * are ignored), else SyncJob; then the state of the job's phase executes
 * it. Everything is allocated in a. The plan's status is what to write
 * (compare it with the job's to skip a no-op write).
 */
void corral__job_decide(corral_arena_t *a, const corral_obj_t *job, const corral_obj_t *const *pods,
                        const bool *deleting, size_t npods, const corral__job_ev_t *evs,
                        size_t nevs, int64_t now_us, corral__job_plan_t *out);

/* The action policies give an event (task policies first), or "SyncJob". */
const char *corral__job_policy_action(const corral_vcjob_t *j, const corral__job_ev_t *ev);

/* Is a phase final (Completed, Failed, Terminated, Aborted)? */
bool corral__job_phase_finished(const char *phase);

/* --- the cache (cache.c) ---------------------------------------------------------------- */

typedef struct corral__entry corral__entry_t;
struct corral__entry {
    corral_kind_t kind;
    char *key; /* "<kind>|ns/name" */
    char *uid;
    corral_watch_ev_t *ev; /* owns the object (ev->obj) */
    uint32_t slot;
    bool dirty;    /* queued for a reconcile */
    bool deleting; /* we sent a delete (cleared when the object changes) */
    bool gc_check; /* queued for an owner check */
    char **owners; /* owner uids (copies) as indexed */
    size_t nowners;
    int64_t seen_ns;  /* monotonic: added to the cache */
    int64_t probe_ns; /* leases: when renewTime last changed; nodes: taint first seen */
    int64_t lease_renew_us;
    bool usage_done;        /* pods: its UsageRecord was written (or tried) */
    corral__job_ev_t *jevs; /* jobs: events waiting for the reconcile (strings owned) */
    size_t njevs, capjevs;
    /* InferenceServices (isvc.c): queued for a reconcile; their pods: when
     * first seen bound and Ready (monotonic), cold start recorded */
    bool isvc_dirty;
    int64_t bound_ns, ready_ns;
    bool cold_done;
};

typedef struct corral__entries {
    corral__entry_t **items;
    size_t n, cap;
} corral__entries_t;

typedef struct corral__cache {
    corral__entry_t **slots;
    size_t nslots;
    uint32_t *free;
    size_t nfree, capfree;
    corral_hmap_t by_key;
    corral_hmap_t by_uid;
    corral_hmap_t deps; /* owner uid -> index into deplists */
    corral__entries_t *deplists;
    char **depkeys;
    size_t ndeplists;
    uint32_t *depfree;
    size_t ndepfree, capdepfree;
} corral__cache_t;

void corral__cache_init(corral__cache_t *c);
void corral__cache_fini(corral__cache_t *c);
/* Insert or replace the object of ev (taking ev). Returns the entry and, in
 * *old, the event it replaced (the caller frees it; NULL when new). */
corral__entry_t *corral__cache_put(corral__cache_t *c, corral_watch_ev_t *ev,
                                   corral_watch_ev_t **old);
/* Remove and free an entry. */
void corral__cache_del(corral__cache_t *c, corral__entry_t *e);
corral__entry_t *corral__cache_get(const corral__cache_t *c, corral_kind_t k, const char *ns,
                                   const char *name);
corral__entry_t *corral__cache_by_uid(const corral__cache_t *c, const char *uid);
/* The entries whose ownerReferences name uid (NULL when none). */
const corral__entries_t *corral__cache_dependents(const corral__cache_t *c, const char *uid);
/* An event holding a copy of an object the server returned (JSON), or NULL. */
corral_watch_ev_t *corral__ev_from_json(const char *text, size_t len);
void corral__entry_add_jev(corral__entry_t *e, const corral__job_ev_t *ev);
void corral__entry_clear_jevs(corral__entry_t *e);

/* --- timers (cache.c) ------------------------------------------------------------------- */

typedef enum corral__timer_kind {
    CORRAL__T_NODES = 0,   /* node lifecycle pass */
    CORRAL__T_JOB,         /* reconcile a job (key: "ns/name") */
    CORRAL__T_STATUS,      /* PodGroup and Queue status */
    CORRAL__T_GC,          /* owner checks */
    CORRAL__T_USAGE,       /* UsageRecord retention */
    CORRAL__T_USAGE_RETRY, /* UsageRecord writes to try again */
    CORRAL__T_ISVC,        /* InferenceServices: the autoscaler's tick */
} corral__timer_kind_t;

typedef struct corral__timer {
    int64_t at_ns;
    corral__timer_kind_t kind;
    char *key; /* owned; may be NULL */
} corral__timer_t;

typedef struct corral__timers {
    corral__timer_t *h;
    size_t n, cap;
} corral__timers_t;

void corral__timers_push(corral__timers_t *t, int64_t at_ns, corral__timer_kind_t kind,
                         const char *key);
/* Pop the earliest timer due at or before now (true), its key to the caller. */
bool corral__timers_pop_due(corral__timers_t *t, int64_t now_ns, corral__timer_t *out);
/* Nanoseconds until the earliest timer (0 when due; -1 when none). */
int64_t corral__timers_next(const corral__timers_t *t, int64_t now_ns);
void corral__timers_fini(corral__timers_t *t);

int64_t corral__mono_ns(void);
int64_t corral__wall_us(void);

/* --- the controller (controller.c and the files per controller) -------------------------- */

enum { CORRAL__NINF = 13 };

/* The controller's metrics (cmetrics.c). */
typedef struct corral__cmetrics {
    corral_metrics_t *reg;
    corral_metrics_server_t *srv;
    corral_metric_t *rec, *rec_dur, *depth, *jobs, *writes;
    corral_metric_t *u_written, *u_exists, *u_failed, *u_pruned, *u_kept;
    corral_metric_t *cold_start; /* corral_inference_cold_start_seconds */
    int64_t last_count_ns;
} corral__cmetrics_t;

struct corral_controller {
    corral_controller_opts_t o;
    corral_client_config_t cfg;
    corral_client_t *cl;
    corral_evq_t *q;
    corral_informer_t *inf[CORRAL__NINF];
    corral__cache_t cache;
    corral__timers_t timers;
    corral__entries_t dirty; /* jobs to reconcile */
    bool synced;             /* every informer delivered its first list */
    uint64_t synced_kinds;   /* bit per kind whose SYNCED event came */
    bool status_dirty;       /* PodGroup/Queue status to recompute */
    bool status_timer;       /* a CORRAL__T_STATUS timer is pending */
    int pg_status_sub;       /* podgroups/status: 0 unknown, 1 served, -1 not: patch the object */
    corral__entries_t gcq;   /* dependents whose owners to check */
    int64_t evict_timer_at;  /* a pending eviction-deadline timer (monotonic), 0: none */
    uint64_t actions;        /* writes sent (for logs and tests) */
    corral__cmetrics_t m;
    struct corral__autoscaler *as; /* InferenceService revisions (autoscale.h) */
    /* UsageRecords (usage.c): written once the first list of the existing
     * ones is known (so a restart does not post every finished pod again);
     * writes that failed for a reason that passes wait in retry. */
    bool usage_listed;
    struct corral__usage_retry *retry;
    size_t nretry, capretry;
    /* InferenceServices (isvc.c); isvc_poke: another thread (the
     * autoscaler) asks for a pass now */
    corral__entries_t isvc_dirty;
    atomic_bool isvc_poke;
    struct corral__isvc_state *isvc_state;
    size_t nisvc_state, capisvc_state;
    unsigned enabled;           /* CORRAL_CTL_* controllers that run */
    struct corral_leader *lead; /* NULL without leader election */
    bool informing;             /* the informers are started */
};

/* Does controller bit (CORRAL_CTL_*) run? */
static inline bool corral__ctl_on(const corral_controller_t *c, unsigned bit)
{
    return (c->enabled & bit) != 0;
}

/* HTTP helpers (controller.c): path of an object, and requests that log
 * failures. Return the HTTP code (0: no response). */
const char *corral__ctl_path(corral_arena_t *a, const corral_kind_info_t *k, const char *ns,
                             const char *name, const char *sub);
long corral__ctl_send(corral_controller_t *c, const char *method, const char *path,
                      const char *ctype, const corral_buf_t *body, corral_buf_t *resp);
void corral__ctl_log(corral_controller_t *c, const char *fmt, ...) CORRAL_PRINTF(2, 3);
/* The uid of o's controller (ownerReference with controller: true) when it
 * is of that apiVersion and kind, else NULL. */
const char *corral__ctl_owner(const corral_obj_t *o, const char *api_version, const char *kind);
/* Put the object a write returned (JSON) into the cache at once, so the
 * next reconcile sees it before the informer delivers it. */
void corral__ctl_cache(corral_controller_t *c, const corral_buf_t *body);
/* Delete an object (gracePeriodSeconds when grace >= 0); 404 counts as done. */
bool corral__ctl_delete(corral_controller_t *c, const corral_obj_t *o, int64_t grace);

/* jobctl.c */
void corral__jobs_on_event(corral_controller_t *c, corral__entry_t *e, const corral_obj_t *old,
                           corral_watch_type_t type);
void corral__jobs_reconcile(corral_controller_t *c, corral__entry_t *job);
void corral__mark_job(corral_controller_t *c, corral__entry_t *job);

/* cmetrics.c: the registry and its server; a reconcile of controller took
 * ns; a UsageRecord write answered code; records pruned and kept; the
 * per-loop gauges (queue depths; jobs by phase at most once a second). */
void corral__cm_start(corral_controller_t *c);
void corral__cm_stop(corral_controller_t *c);
void corral__cm_reconciled(corral_controller_t *c, const char *controller, int64_t ns);
void corral__cm_usage_written(corral_controller_t *c, long code, int64_t ns);
void corral__cm_usage_pruned(corral_controller_t *c, int n);
void corral__cm_usage_kept(corral_controller_t *c, double n);
void corral__cm_tick(corral_controller_t *c);

/* usage.c: the UsageRecord of a finished pod (pure: queue, job and GPU model
 * given; now_us stands for the finish time when the pod does not say),
 * the hook the pod events call (pod: its latest copy; deleted: it is
 * gone), and the retention pass. */
void corral__usage_build(const corral_obj_t *pod, const char *queue, const char *job,
                         const char *gpu_model, bool deleted, int64_t now_us, corral_buf_t *out);
void corral__usage_on_pod(corral_controller_t *c, corral__entry_t *e, const corral_obj_t *pod,
                          bool deleted);
void corral__usage_prune(corral_controller_t *c);
void corral__usage_retry(corral_controller_t *c);
void corral__usage_fini(corral_controller_t *c);

/* isvc.c: the InferenceService controller (isvc.h has its pure half) */
typedef struct corral__isvc_state corral__isvc_state_t;
int corral__isvc_start(corral_controller_t *c, char *err, size_t errlen);
void corral__isvc_stop(corral_controller_t *c);
void corral__isvc_on_event(corral_controller_t *c, corral__entry_t *e, const corral_obj_t *old,
                           corral_watch_type_t type);
void corral__isvc_forget(corral_controller_t *c, corral__entry_t *e);
void corral__isvc_reconcile(corral_controller_t *c);
void corral__isvc_tick(corral_controller_t *c);
/* Reconcile every InferenceService at the next turn of the loop (any
 * thread: the autoscaler calls it when requests wait for a revision at
 * zero). */
void corral__isvc_poke(corral_controller_t *c);
struct corral__isvc_cold;
void corral__cm_cold_start(corral_controller_t *c, const char *ns, const char *service,
                           const struct corral__isvc_cold *cs);

/* status.c */
void corral__status_sync(corral_controller_t *c);

/* modelcache.c: LocalModelCache status (pure: the objects it is computed
 * from), the comparison with what is written, and the pass (run by the
 * status pass). */
typedef struct corral__lmc_world {
    const corral_obj_t **groups; /* LocalModelNodeGroups */
    size_t ngroups;
    const corral_obj_t **nodes;
    size_t nnodes;
    const corral_obj_t **lmnodes; /* LocalModelNodes */
    size_t nlmnodes;
    const corral_obj_t **isvcs;
    size_t nisvcs;
} corral__lmc_world_t;
/* {copies: {available, total, failed}, nodeStatus, inferenceServices}, in a. */
corral_val_t *corral__lmc_status(corral_arena_t *a, const corral_obj_t *cache,
                                 const corral__lmc_world_t *w);
/* Does the status written (old, may be NULL) say what want says? */
bool corral__lmc_status_same(const corral_val_t *old, const corral_val_t *want);
void corral__modelcache_sync(corral_controller_t *c);

/* gc.c */
void corral__gc_on_delete(corral_controller_t *c, const char *uid);
void corral__gc_queue(corral_controller_t *c, corral__entry_t *e);
void corral__gc_run(corral_controller_t *c);

/* nodelc.c */
void corral__nodes_on_event(corral_controller_t *c, corral__entry_t *e, const corral_obj_t *old);
void corral__nodes_pass(corral_controller_t *c);
/* Is an unreachable:NoExecute taint tolerated by a pod, and for how long?
 * Returns -1 forever, else the seconds (default_s when no toleration
 * matches). Pure, for tests. */
int64_t corral__toleration_seconds(const corral_pod_spec_t *spec, int64_t default_s);

#endif
