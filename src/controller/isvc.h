/*
 * The InferenceService controller (isvc.c does the I/O, isvcplan.c the pure
 * decisions, so tests drive them without a server): the resolved pod
 * template of a predictor and its hash, revision names, the traffic split
 * (KServe's canary rules), replica clamping, and the status KServe writes.
 * docs/inference.md, "The InferenceService controller", says what each does.
 */
#ifndef CORRAL_CONTROLLER_ISVC_H
#define CORRAL_CONTROLLER_ISVC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "corral/arena.h"
#include "corral/model.h"
#include "corral/val.h"

#define CORRAL__ISVC_LABEL         "serving.kserve.io/inferenceservice"
#define CORRAL__ISVC_REV_LABEL     "corral.dev/revision"
#define CORRAL__ISVC_HASH_LABEL    "corral.dev/revision-hash"
#define CORRAL__ISVC_QUEUE_ANN     "scheduling.volcano.sh/queue-name"
#define CORRAL__ISVC_URI_ANN       "corral.dev/model-uri"
#define CORRAL__ISVC_CACHE_ANN     "corral.dev/model-cache"
#define CORRAL__ISVC_FETCH_ANN     "corral.dev/model-fetch"
#define CORRAL__ISVC_DEFAULT_QUEUE "inference"
#define CORRAL__ISVC_DEFAULT_PORT  8080
/* Old revisions kept besides the ones the status names (docs/decisions.md). */
#define CORRAL__ISVC_KEEP_REVISIONS 5
/* The cold start of the last replica that became Ready, in
 * status.components.predictor. */
#define CORRAL__ISVC_COLD_START "corral.dev/coldStart"

/* --- the pod template --------------------------------------------------------------------- */

/* The serving port of a PodSpec: the first container's first containerPort,
 * else 8080. */
int64_t corral__isvc_port(const corral_val_t *spec);

/* The queue of a service: its scheduling.volcano.sh/queue-name annotation,
 * else "inference". */
const char *corral__isvc_queue(const corral_obj_t *isvc);

/* Complete the template corral_isvc_resolve made ({metadata: {labels,
 * annotations}, spec}, changed in place) with the contract's labels, the
 * queue and model-uri annotations, and env PORT and POD_IP and a TCP
 * readiness probe on the first container when it has none. storage_uri may
 * be NULL. */
void corral__isvc_template(corral_arena_t *a, const corral_obj_t *isvc, corral_val_t *tmpl,
                           const char *storage_uri);

/* 16 hex digits of SipHash-2-4 (fixed key) over the template's JSON. */
void corral__isvc_hash(const corral_val_t *tmpl, char out[17]);

/* "S-predictor-0000N" into buf. */
void corral__isvc_rev_name(char *buf, size_t len, const char *service, int64_t n);

/* --- traffic -------------------------------------------------------------------------------- */

typedef struct corral__isvc_rev {
    const char *name;
    int64_t num;
    bool ready_now; /* has a Ready replica now */
} corral__isvc_rev_t;

typedef struct corral__isvc_traffic_in {
    const corral__isvc_rev_t *revs; /* existing revisions, any order */
    size_t nrevs;
    /* as the status says (NULL or "" when unset) */
    const char *latest_ready, *rolled, *prev_rolled;
    corral_opt_i32_t canary; /* canaryTrafficPercent */
} corral__isvc_traffic_in_t;

typedef struct corral__isvc_target {
    const char *rev;
    int32_t percent;
    bool latest; /* latestRevision */
    const char *tag;
} corral__isvc_target_t;

typedef struct corral__isvc_traffic {
    const char *latest_created, *latest_ready, *rolled, *prev_rolled; /* NULL when none */
    corral__isvc_target_t t[2];
    size_t n;
    bool promoted; /* latestRolledoutRevision moved */
} corral__isvc_traffic_t;

/*
 * KServe's rollout: the newest ready revision R (the status' latestReady,
 * moved forward to a newer revision with a Ready replica) takes
 * canaryTrafficPercent N, tag latest, the last rolled out one the rest, tag
 * prev; absent or 100 sends all to R and rolls it out (the rolled out one
 * becomes the previous); 0 pins all to the rolled out one. While no
 * revision was ever ready the newest one gets 100% (the router queues).
 * Strings point into in.
 */
void corral__isvc_traffic(const corral__isvc_traffic_in_t *in, corral__isvc_traffic_t *out);

/* The percent traffic gives rev (0 when absent; -1 when not listed). */
int32_t corral__isvc_percent(const corral__isvc_traffic_t *t, const char *rev);

/*
 * Replicas of a revision: the autoscaler's desired count clamped to [min,
 * max] (max 0: no limit) when the revision takes traffic (percent > 0) or
 * is the rolled out one (the fallback); 0 for any other, except a revision
 * newer than the latest ready one, which gets at least one replica to show
 * it can become ready.
 */
int32_t corral__isvc_clamp(int32_t desired, int32_t min, int32_t max, bool serving, bool proving);

/* --- status --------------------------------------------------------------------------------- */

typedef struct corral__isvc_cold {
    const char *pod, *node, *revision, *fetch; /* fetch: "hit", "fetched" or NULL */
    double schedule_s, fetch_s, load_s, total_s;
} corral__isvc_cold_t;

typedef struct corral__isvc_status_in {
    const char *ns, *name, *ingress_domain, *router_url;
    int64_t generation;
    const corral__isvc_traffic_t *tr;
    const char *failure;             /* the predictor cannot be resolved: why (NULL: it can) */
    const char *failure_reason;      /* ... KServe's FailureReason (NoSupportingRuntime, ...) */
    int32_t ready, failed;           /* replicas Ready and failed, all revisions */
    const char *waiting;             /* why the latest created revision is not ready yet, or NULL */
    bool latest_failed;              /* ... and it failed (a replica failed, none ever ready) */
    const corral__isvc_cold_t *cold; /* the last cold start, or NULL to keep the old */
    const corral_val_t *old; /* the current status (transition times, cold start), or NULL */
    int64_t now_us;
} corral__isvc_status_in_t;

/* The status KServe writes: url, address, conditions, components.predictor,
 * modelStatus, observedGeneration (a new tree in a). */
corral_val_t *corral__isvc_status(corral_arena_t *a, const corral__isvc_status_in_t *in);

#endif
