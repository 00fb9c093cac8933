/*
 * The object model: typed, validated views of the Kubernetes objects Corral
 * reads (core v1, Volcano, KServe and corral.dev kinds).
 *
 * An object is its value tree (raw, the source of truth, which keeps every
 * field including ones Corral does not know, so they survive a round trip)
 * plus a typed view decoded from it. Field names and defaults follow upstream.
 * Everything an object points to lives in the arena it was decoded into.
 *
 * Decoding validates: every problem is reported to a corral_diag_t with the
 * file, line, column and field path, and decoding continues to find the rest.
 */
#ifndef CORRAL_MODEL_H
#define CORRAL_MODEL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "corral/arena.h"
#include "corral/common.h"
#include "corral/diag.h"
#include "corral/quantity.h"
#include "corral/selector.h"
#include "corral/val.h"

/* --- kinds ---------------------------------------------------------------- */

typedef enum corral_kind {
    CORRAL_KIND_NAMESPACE = 0,
    CORRAL_KIND_NODE,
    CORRAL_KIND_POD,
    CORRAL_KIND_EVENT,
    CORRAL_KIND_PRIORITYCLASS,
    CORRAL_KIND_LEASE,
    CORRAL_KIND_CONFIGMAP,
    CORRAL_KIND_SECRET,
    CORRAL_KIND_QUEUE,
    CORRAL_KIND_PODGROUP,
    CORRAL_KIND_VCJOB,
    CORRAL_KIND_HYPERNODE,
    CORRAL_KIND_ISVC,
    CORRAL_KIND_SCENARIO,
    /* rbac.authorization.k8s.io/v1 (the API server's authorization) */
    CORRAL_KIND_ROLE,
    CORRAL_KIND_CLUSTERROLE,
    CORRAL_KIND_ROLEBINDING,
    CORRAL_KIND_CLUSTERROLEBINDING,
    CORRAL_KIND_SCHEDCONF, /* corral.dev/v1alpha1 SchedulerConfiguration */
    /* core v1, stored and served (src/model/svc_kinds.c); quotas and limit
     * ranges are not enforced */
    CORRAL_KIND_SERVICEACCOUNT,
    CORRAL_KIND_SERVICE,
    CORRAL_KIND_ENDPOINTS,
    CORRAL_KIND_RESOURCEQUOTA,
    CORRAL_KIND_LIMITRANGE,
    CORRAL_KIND_USAGE, /* corral.dev/v1 UsageRecord (accounting, docs/observability-sched.md) */
    /* serving.kserve.io/v1alpha1 (src/model/serving_kinds.c) */
    CORRAL_KIND_SERVINGRUNTIME,
    CORRAL_KIND_CLUSTERSERVINGRUNTIME,
    CORRAL_KIND_LOCALMODELCACHE,
    CORRAL_KIND_LOCALMODELNODEGROUP,
    CORRAL_KIND_LOCALMODELNODE,
    CORRAL_KIND_CONTROLLERREVISION, /* apps/v1 */
    /* Stored and validated, run by no controller (src/model/apps_kinds.c) */
    CORRAL_KIND_DEPLOYMENT, /* apps/v1 */
    CORRAL_KIND_DAEMONSET,  /* apps/v1 */
    CORRAL_KIND_CRD,        /* apiextensions.k8s.io/v1 CustomResourceDefinition */
    CORRAL_KIND_COUNT
} corral_kind_t;

typedef struct corral_kind_info {
    corral_kind_t kind;
    const char *group;       /* "" for the core group */
    const char *version;     /* "v1", "v1beta1", ... */
    const char *api_version; /* "v1" or "group/version" */
    const char *name;        /* the Kind, e.g. "PodGroup" */
    const char *plural;      /* resource name, e.g. "podgroups" */
    const char *singular;
    const char *short_names; /* comma-separated, e.g. "pg,podgroup-v1beta1"; may be "" */
    bool namespaced;
} corral_kind_info_t;

/* Info for a kind (never NULL for a valid corral_kind_t). */
const corral_kind_info_t *corral_kind_get(corral_kind_t k);
/* Find by apiVersion and Kind; NULL when Corral does not know the pair. */
const corral_kind_info_t *corral_kind_find(const char *api_version, const char *kind);
/* Find by what a user types: plural, singular, short name or Kind, any case. */
const corral_kind_info_t *corral_kind_find_resource(const char *name);

/* --- small shared types ------------------------------------------------------ */

typedef struct corral_opt_i32 {
    bool set;
    int32_t v;
} corral_opt_i32_t;

typedef struct corral_opt_i64 {
    bool set;
    int64_t v;
} corral_opt_i64_t;

typedef struct corral_res {
    const char *name; /* "cpu", "memory", "nvidia.com/gpu", ... */
    corral_qty_t qty;
} corral_res_t;

typedef struct corral_reslist {
    corral_res_t *items;
    size_t n;
} corral_reslist_t;

/* The quantity for name, or NULL. */
const corral_qty_t *corral_reslist_get(const corral_reslist_t *l, const char *name);

typedef struct corral_owner_ref {
    const char *api_version;
    const char *kind;
    const char *name;
    const char *uid;
    bool controller;
    bool block_owner_deletion;
} corral_owner_ref_t;

typedef struct corral_meta {
    const char *name;
    const char *generate_name;
    const char *namespace; /* "default" filled in for namespaced kinds; NULL otherwise */
    const char *uid;
    const char *resource_version;
    int64_t generation;
    int64_t creation_us; /* creationTimestamp, microseconds since epoch; 0 when unset */
    int64_t deletion_us; /* deletionTimestamp; 0 when unset */
    corral_opt_i64_t deletion_grace_seconds;
    corral_strmap_t labels;
    corral_strmap_t annotations;
    corral_strlist_t finalizers;
    corral_owner_ref_t *owners;
    size_t nowners;
} corral_meta_t;

typedef struct corral_condition {
    const char *type;
    const char *status; /* "True", "False", "Unknown" */
    const char *reason;
    const char *message;
    int64_t last_transition_us;
} corral_condition_t;

typedef struct corral_conditions {
    corral_condition_t *items;
    size_t n;
} corral_conditions_t;

/* --- scheduling constraints ------------------------------------------------- */

typedef struct corral_taint {
    const char *key;
    const char *value;  /* may be NULL */
    const char *effect; /* NoSchedule, PreferNoSchedule or NoExecute */
} corral_taint_t;

typedef struct corral_toleration {
    const char *key;          /* NULL or "" with Exists tolerates everything */
    const char *op;           /* "Equal" (default) or "Exists" */
    const char *value;        /* may be NULL */
    const char *effect;       /* NULL/"" matches every effect */
    corral_opt_i64_t seconds; /* tolerationSeconds */
} corral_toleration_t;

typedef struct corral_tolerations {
    corral_toleration_t *items;
    size_t n;
} corral_tolerations_t;

/* One nodeSelectorTerm: matchExpressions (labels) AND matchFields. */
typedef struct corral_nsel_term {
    corral_selector_t exprs;
    corral_selector_t fields; /* only metadata.name is meaningful, as upstream */
} corral_nsel_term_t;

typedef struct corral_pref_term {
    int32_t weight; /* 1..100 */
    corral_nsel_term_t pref;
} corral_pref_term_t;

typedef struct corral_node_affinity {
    corral_nsel_term_t *required; /* ORed terms; none means no requirement */
    size_t nrequired;
    corral_pref_term_t *preferred;
    size_t npreferred;
} corral_node_affinity_t;

/* --- pods ------------------------------------------------------------------- */

typedef struct corral_env {
    const char *name;
    const char *value; /* NULL when valueFrom is used */
} corral_env_t;

typedef struct corral_container {
    const char *name;
    const char *image;
    const char *image_pull_policy;
    const char *working_dir;
    corral_strlist_t command;
    corral_strlist_t args;
    corral_env_t *env;
    size_t nenv;
    corral_reslist_t requests;
    corral_reslist_t limits;
} corral_container_t;

typedef struct corral_pod_spec {
    corral_container_t *containers;
    size_t ncontainers;
    corral_container_t *init_containers;
    size_t ninit_containers;
    const char *node_name;
    const char *scheduler_name; /* default "default-scheduler" */
    const char *priority_class_name;
    corral_opt_i32_t priority;
    const char *preemption_policy;
    const char *restart_policy; /* default "Always" */
    const char *service_account_name;
    bool host_network;
    int64_t termination_grace_seconds; /* default 30 */
    corral_strmap_t node_selector;
    corral_node_affinity_t node_affinity;
    corral_tolerations_t tolerations;
    corral_reslist_t overhead;
} corral_pod_spec_t;

typedef struct corral_pod_status {
    const char *phase; /* Pending, Running, Succeeded, Failed, Unknown; NULL when unset */
    const char *reason;
    const char *message;
    const char *host_ip;
    const char *pod_ip;
    const char *nominated_node_name;
    int64_t start_us;
    corral_conditions_t conditions;
} corral_pod_status_t;

typedef struct corral_pod {
    corral_pod_spec_t spec;
    corral_pod_status_t status;
} corral_pod_t;

/* A pod template inside a workload (Volcano Job task). */
typedef struct corral_pod_template {
    corral_meta_t meta; /* labels/annotations; name usually empty */
    corral_pod_spec_t spec;
    const corral_val_t *raw; /* the template as written, to stamp out pods */
} corral_pod_template_t;

/* Effective requests of a pod as the scheduler counts them: the larger of the
 * sum over containers and the max over init containers, plus overhead, with
 * limits standing in for absent requests (as the API server defaults them). */
void corral_pod_requests(corral_arena_t *a, const corral_pod_spec_t *spec, corral_reslist_t *out);
/* The GPUs a pod asks for, in thousandths of a GPU: its effective
 * nvidia.com/gpu x 1000 plus corral.dev/gpu-milli (a share of one GPU). */
int64_t corral_pod_gpu_milli(const corral_pod_spec_t *spec);

/* --- nodes ------------------------------------------------------------------ */

typedef struct corral_node_address {
    const char *type;
    const char *address;
} corral_node_address_t;

typedef struct corral_node {
    bool unschedulable;
    corral_taint_t *taints;
    size_t ntaints;
    const char *provider_id;
    const char *pod_cidr;
    corral_reslist_t capacity;
    corral_reslist_t allocatable; /* status.allocatable, else status.capacity */
    corral_conditions_t conditions;
    corral_node_address_t *addresses;
    size_t naddresses;
} corral_node_t;

/* GPU link matrix from annotation corral.dev/gpu-topology ("nvidia-smi topo -m"
 * rows separated by ';', cells by ',' or spaces). Links are ranked so that a
 * larger number is faster: SYS 1, NODE 2, PHB 3, PXB 4, PIX 5, NV<n> 100+n;
 * the diagonal (X) is 0. */
#define CORRAL_GPU_TOPO_ANNOTATION "corral.dev/gpu-topology"
/* The model cache: the LocalModelCaches a node holds ("a,b", its agent
 * writes it) and the one a pod's model is in (the controller writes it). */
#define CORRAL_MODEL_CACHES_ANNOTATION "corral.dev/model-caches"
#define CORRAL_MODEL_CACHE_ANNOTATION  "corral.dev/model-cache"
#define CORRAL_GPU_TOPO_MAX            64

enum {
    CORRAL_LINK_SELF = 0,
    CORRAL_LINK_SYS = 1,
    CORRAL_LINK_NODE = 2,
    CORRAL_LINK_PHB = 3,
    CORRAL_LINK_PXB = 4,
    CORRAL_LINK_PIX = 5,
    CORRAL_LINK_NV = 100, /* + number of bonded NVLinks */
};

typedef struct corral_gpu_topo {
    int n;          /* GPUs */
    uint16_t *link; /* n*n ranks, row-major */
} corral_gpu_topo_t;

/* Parse a matrix; on error CORRAL_EINVAL with a message in why. */
int corral_gpu_topo_parse(corral_arena_t *a, const char *s, corral_gpu_topo_t *out, char *why,
                          size_t why_len);

/* --- other core kinds ------------------------------------------------------- */

typedef struct corral_namespace {
    const char *phase; /* Active or Terminating */
} corral_namespace_t;

typedef struct corral_object_ref {
    const char *api_version;
    const char *kind;
    const char *namespace;
    const char *name;
    const char *uid;
    const char *resource_version;
    const char *field_path;
} corral_object_ref_t;

typedef struct corral_event {
    corral_object_ref_t involved;
    const char *reason;
    const char *message;
    const char *type; /* Normal or Warning */
    const char *source_component;
    const char *source_host;
    int64_t first_us;
    int64_t last_us;
    int64_t event_us; /* eventTime (MicroTime) */
    int32_t count;
    const char *action;
    const char *reporting_component;
    const char *reporting_instance;
} corral_event_t;

typedef struct corral_priorityclass {
    int32_t value;
    bool global_default;
    const char *description;
    const char *preemption_policy; /* PreemptLowerPriority (default) or Never */
} corral_priorityclass_t;

typedef struct corral_lease {
    const char *holder_identity;
    corral_opt_i32_t lease_duration_seconds;
    int64_t acquire_us;
    int64_t renew_us;
    int32_t lease_transitions;
} corral_lease_t;

typedef struct corral_configmap {
    corral_strmap_t data;
    corral_strmap_t binary_data; /* base64 as written */
    bool immutable;
} corral_configmap_t;

typedef struct corral_secret {
    const char *type;     /* default "Opaque" */
    corral_strmap_t data; /* base64 as written */
    corral_strmap_t string_data;
    bool immutable;
} corral_secret_t;

/* --- Volcano ---------------------------------------------------------------- */

typedef struct corral_queue {
    int32_t weight; /* default 1 */
    corral_reslist_t capability;
    corral_reslist_t deserved;
    corral_reslist_t guarantee; /* spec.guarantee.resource */
    bool reclaimable;           /* default true */
    const char *parent;         /* NULL: child of the root queue */
    int32_t priority;           /* higher is served first, reclaimed last */
    const char *state;          /* status.state: Open, Closed, ... */
} corral_queue_t;

typedef struct corral_network_topology {
    const char *mode; /* NULL when absent; "hard" or "soft" */
    corral_opt_i32_t highest_tier;
} corral_network_topology_t;

typedef struct corral_task_count {
    const char *name;
    int32_t count;
} corral_task_count_t;

typedef struct corral_podgroup {
    int32_t min_member; /* default 1 */
    corral_task_count_t *min_task_member;
    size_t nmin_task_member;
    const char *queue; /* default "default" */
    const char *priority_class_name;
    corral_reslist_t min_resources;
    corral_network_topology_t topology;
    const char *phase; /* status.phase */
    int32_t running, succeeded, failed;
    corral_conditions_t conditions;
} corral_podgroup_t;

typedef struct corral_job_policy {
    const char *event; /* PodEvicted, PodFailed, TaskCompleted, ... or "*" */
    corral_strlist_t events;
    const char *action; /* AbortJob, RestartJob, RestartTask, TerminateJob, CompleteJob, ... */
    corral_opt_i32_t exit_code;
    int64_t timeout_ns;
} corral_job_policy_t;

typedef struct corral_job_task {
    const char *name;
    int32_t replicas;
    corral_opt_i32_t min_available;
    int32_t max_retry;
    corral_pod_template_t tmpl;
    corral_job_policy_t *policies;
    size_t npolicies;
    corral_strlist_t depends_on; /* dependsOn.name */
} corral_job_task_t;

typedef struct corral_vcjob {
    const char *scheduler_name; /* default "volcano" */
    const char *queue;          /* default "default" */
    const char *priority_class_name;
    int32_t min_available; /* default: sum of task replicas (or task minAvailable) */
    corral_opt_i32_t min_success;
    int32_t max_retry; /* default 3 */
    corral_opt_i32_t ttl_seconds_after_finished;
    corral_job_task_t *tasks;
    size_t ntasks;
    corral_job_policy_t *policies;
    size_t npolicies;
    const corral_val_t *plugins; /* kept as written */
    corral_network_topology_t topology;
    const char *phase; /* status.state.phase */
} corral_vcjob_t;

typedef enum corral_hn_member_type {
    CORRAL_HN_NODE = 0,
    CORRAL_HN_HYPERNODE = 1,
} corral_hn_member_type_t;

typedef struct corral_hn_member {
    corral_hn_member_type_t type;
    const char *exact_name;   /* selector.exactMatch.name */
    const char *regex;        /* selector.regexMatch.pattern (unanchored ERE) */
    corral_selector_t labels; /* selector.labelMatch */
    bool has_labels;
} corral_hn_member_t;

typedef struct corral_hypernode {
    int32_t tier; /* 1 = fastest */
    corral_hn_member_t *members;
    size_t nmembers;
    int32_t node_count; /* status.nodeCount */
} corral_hypernode_t;

/* --- KServe ----------------------------------------------------------------- */

/* A quantity read as a number (KServe's MetricQuantity): set, value. */
typedef struct corral_opt_num {
    bool set;
    double v;
} corral_opt_num_t;

/* KServe's MetricTarget. */
typedef struct corral_isvc_metric_target {
    const char *type; /* Utilization, Value, AverageValue; NULL: as the value given */
    corral_opt_num_t value;
    corral_opt_num_t average_value;
    corral_opt_i32_t average_utilization; /* percent, Resource only */
} corral_isvc_metric_target_t;

/* One entry of KServe's `autoScaling.metrics`. */
typedef struct corral_isvc_metric {
    const char *type;              /* Resource, External, PodMetric */
    const char *resource;          /* Resource: cpu, memory */
    const char *backend;           /* External: prometheus, graphite; PodMetric: opentelemetry */
    const char *server_address;    /* External, PodMetric */
    const char *query;             /* External, PodMetric */
    const char *query_namespace;   /* External: metric.namespace */
    corral_strlist_t metric_names; /* PodMetric: metric.metricNames */
    corral_isvc_metric_target_t target;
} corral_isvc_metric_t;

/* The Knative autoscaling annotations KServe passes through to the revision
 * (`autoscaling.knative.dev/...`), from the service's metadata.annotations,
 * overridden by the component's own `annotations`. */
typedef struct corral_isvc_knative {
    const char *metric;                   /* metric: concurrency, rps (or Corral's metrics) */
    corral_opt_num_t target;              /* target (> 0) */
    corral_opt_num_t target_utilization;  /* target-utilization-percentage (1-100) */
    corral_opt_i64_t window_ns;           /* window (6s-1h) */
    corral_opt_num_t panic_window_pct;    /* panic-window-percentage (1-100) */
    corral_opt_num_t panic_threshold_pct; /* panic-threshold-percentage (110-1000) */
    corral_opt_i64_t retention_ns;        /* scale-to-zero-pod-retention-period (>= 0) */
    corral_opt_num_t max_scale_up_rate;   /* max-scale-up-rate (> 1) */
    corral_opt_num_t max_scale_down_rate; /* max-scale-down-rate (> 1) */
    corral_opt_i32_t initial_scale;       /* initial-scale (>= 0) */
} corral_isvc_knative_t;

typedef struct corral_isvc_component {
    bool present;
    corral_opt_i32_t min_replicas; /* KServe default 1; 0 enables scale to zero */
    corral_opt_i32_t max_replicas; /* 0 or unset: no explicit limit */
    const char *scale_metric;      /* cpu, memory, concurrency, rps, gpu_utilization */
    corral_opt_i32_t scale_target;
    corral_opt_i32_t canary_traffic_percent;
    corral_opt_i64_t container_concurrency;
    corral_opt_i64_t timeout_seconds;
    /* model: {modelFormat, runtime, storageUri, protocolVersion} plus container fields */
    bool has_model;
    const char *model_format;
    const char *model_format_version;
    const char *runtime;
    const char *storage_uri;
    const char *protocol_version;
    corral_container_t model; /* args, env, resources, image of the model spec */
    corral_container_t *containers;
    size_t ncontainers;
    corral_tolerations_t tolerations;
    corral_strmap_t node_selector;
    corral_node_affinity_t node_affinity;
    const char *service_account_name;
    const char *priority_class_name;
    const char *scheduler_name;
    corral_isvc_metric_t *metrics; /* autoScaling.metrics */
    size_t nmetrics;
    corral_isvc_knative_t knative; /* autoscaling.knative.dev annotations */
} corral_isvc_component_t;

typedef struct corral_isvc {
    corral_isvc_component_t predictor;
    corral_isvc_component_t transformer;
    const char *url; /* status.url */
} corral_isvc_t;

/* --- corral.dev Scenario ------------------------------------------------------ */

typedef struct corral_obj corral_obj_t;

typedef struct corral_gpu_ids_expect {
    const char *pod;
    int32_t *ids;
    size_t n;
} corral_gpu_ids_expect_t;

typedef struct corral_scn_expect {
    bool present;
    corral_strlist_t scheduled;
    corral_strlist_t pending;
    corral_strlist_t evicted;
    corral_strlist_t not_evicted;
    corral_strmap_t bound;  /* pod -> node */
    corral_strmap_t reason; /* pod -> substring of its pending reason */
    corral_strlist_t *same_node;
    size_t nsame_node;
    corral_gpu_ids_expect_t *gpu_ids;
    size_t ngpu_ids;
} corral_scn_expect_t;

typedef struct corral_scn_step {
    int line; /* where the step starts, for "FAIL step N" context */
    corral_opt_i64_t at_ns;
    corral_obj_t **apply; /* decoded objects, same kinds as a scenario file */
    size_t napply;
    corral_strlist_t del;      /* "pod", "ns/pod" or "Kind/ns/name" */
    corral_strlist_t complete; /* pods */
    corral_scn_expect_t expect;
} corral_scn_step_t;

typedef struct corral_scenario {
    const char *description;
    corral_scn_step_t *steps;
    size_t nsteps;
} corral_scenario_t;

/* --- SchedulerConfiguration (corral.dev/v1alpha1) ------------------------------- */

/* Scheduler actions, as bits of corral_schedconf_t.actions. The engine runs
 * the enabled ones in this order whatever order the list names them in. */
enum {
    CORRAL_ACTION_ENQUEUE = 1 << 0,
    CORRAL_ACTION_ALLOCATE = 1 << 1,
    CORRAL_ACTION_BACKFILL = 1 << 2,
    CORRAL_ACTION_PREEMPT = 1 << 3,
    CORRAL_ACTION_RECLAIM = 1 << 4,
};

/* Limits of fairShare.halfLife (besides 0, off): the decoder refuses values
 * outside them with a message, corral_sched_config_apply with CORRAL_EINVAL. */
#define CORRAL_FAIR_HALF_LIFE_MIN_NS (60LL * 1000000000LL)          /* 1m */
#define CORRAL_FAIR_HALF_LIFE_MAX_NS (8760LL * 3600 * 1000000000LL) /* 8760h, a year */

/* The scheduler's configuration as written; unset fields keep the engine's
 * defaults (docs/scheduling.md, "Configuration"). */
typedef struct corral_schedconf {
    bool actions_set;
    unsigned actions;              /* CORRAL_ACTION_* bits */
    const char *policy;            /* one of the engine's policy names; NULL: default */
    corral_opt_i32_t strict_order; /* bool as 0/1 */
    corral_opt_i64_t seed;
    corral_opt_i32_t max_evictions; /* per cycle; 0 unlimited */
    /* The corral policy's criteria (each on or off; they are ordered, not
     * weighted). */
    corral_opt_i32_t preferences, fragmentation, packing, topology, cpu_memory;
    /* scoring.modelCache: the weight (0-100) of holding a pod's model. */
    corral_opt_i32_t model_cache;
    /* fairShare: {halfLife, usageWeight}. halfLife "0s" turns it off. */
    bool fair_share_set;
    int64_t fair_half_life_ns;
    bool fair_usage_weight_set;
    double fair_usage_weight;
} corral_schedconf_t;

/*
 * Read a file holding one corral.dev/v1alpha1 SchedulerConfiguration into
 * arena a. Returns 0, or CORRAL_EINVAL with every
 * problem printed to err as FILE:LINE:COL: message.
 */
int corral_schedconf_load(const char *path, corral_arena_t *a, FILE *err,
                          const corral_schedconf_t **out);

/* --- RBAC (rbac.authorization.k8s.io/v1) ---------------------------------------- */

/* One PolicyRule. Resource rules name apiGroups, resources (with
 * subresources as "pods/log") and optionally resourceNames; non-resource
 * rules (ClusterRole only) name URL paths, a trailing '*' being a prefix. */
typedef struct corral_policy_rule {
    corral_strlist_t verbs;
    corral_strlist_t api_groups;
    corral_strlist_t resources;
    corral_strlist_t resource_names;
    corral_strlist_t non_resource_urls;
} corral_policy_rule_t;

/* Role and ClusterRole. aggregationRule is kept as written (not evaluated). */
typedef struct corral_role {
    corral_policy_rule_t *rules;
    size_t nrules;
} corral_role_t;

typedef struct corral_subject {
    const char *kind; /* User, Group or ServiceAccount */
    const char *api_group;
    const char *name;
    const char *namespace; /* ServiceAccount */
} corral_subject_t;

typedef struct corral_role_ref {
    const char *api_group; /* rbac.authorization.k8s.io */
    const char *kind;      /* Role (RoleBinding only) or ClusterRole */
    const char *name;
} corral_role_ref_t;

/* RoleBinding and ClusterRoleBinding. */
typedef struct corral_role_binding {
    corral_subject_t *subjects;
    size_t nsubjects;
    corral_role_ref_t role_ref;
} corral_role_binding_t;

/* --- ServiceAccount, Service, Endpoints, ResourceQuota, LimitRange (core v1) --------- */

typedef struct corral_service_account {
    corral_opt_i32_t automount; /* automountServiceAccountToken as 0/1 */
} corral_service_account_t;

typedef struct corral_service_port {
    const char *name;
    const char *protocol; /* TCP (default), UDP or SCTP */
    int32_t port;
    int32_t target_port;          /* IntOrString: the number, or 0 ... */
    const char *target_port_name; /* ... and the name when a string */
    int32_t node_port;
} corral_service_port_t;

typedef struct corral_service {
    const char *type;             /* ClusterIP (default), NodePort, LoadBalancer, ExternalName */
    const char *cluster_ip;       /* as written; Corral allocates none */
    const char *session_affinity; /* None (default) or ClientIP */
    const char *external_name;
    corral_strmap_t selector;
    corral_service_port_t *ports;
    size_t nports;
} corral_service_t;

typedef struct corral_endpoints {
    size_t nsubsets;
} corral_endpoints_t;

typedef struct corral_resource_quota {
    corral_reslist_t hard;
    corral_strlist_t scopes;
} corral_resource_quota_t;

typedef struct corral_limit_range_item {
    const char *type; /* Pod, Container or PersistentVolumeClaim */
    corral_reslist_t max, min, dflt, default_request, max_limit_request_ratio;
} corral_limit_range_item_t;

typedef struct corral_limit_range {
    corral_limit_range_item_t *limits;
    size_t nlimits;
} corral_limit_range_t;

/* --- UsageRecord (corral.dev/v1) ----------------------------------------------------- */

/* One finished pod, as the controller records it for accounting (`corral
 * report usage`). The name is the pod's UID. Times and amounts are kept as
 * written in spec (raw); the strings the tables and reports group by are
 * decoded. */
typedef struct corral_usage {
    const char *pod, *pod_uid, *queue, *job, *node, *gpu_model, *gpu_ids, *phase, *reason;
} corral_usage_t;

/* --- serving.kserve.io/v1alpha1: serving runtimes and the local model cache --------------- */

/* One entry of a runtime's supportedModelFormats. */
typedef struct corral_model_format_support {
    const char *name;
    const char *version;       /* NULL: every version */
    bool auto_select;          /* autoSelect (default false) */
    corral_opt_i32_t priority; /* 1 or more; only meaningful with autoSelect */
} corral_model_format_support_t;

/* ServingRuntime and ClusterServingRuntime (the same spec). The containers
 * and pod fields as written stay in raw: corral_isvc_resolve reads them. */
typedef struct corral_serving_runtime {
    corral_model_format_support_t *formats; /* supportedModelFormats */
    size_t nformats;
    bool disabled;
    bool multi_model;
    corral_strlist_t protocol_versions; /* v1, v2, grpc-v1, grpc-v2 */
    corral_container_t *containers;     /* at least one; the first serves */
    size_t ncontainers;
    corral_strmap_t node_selector;
    corral_tolerations_t tolerations;
    corral_node_affinity_t node_affinity;
    const char *scheduler_name;
    corral_strmap_t labels; /* added to the pods */
    corral_strmap_t annotations;
} corral_serving_runtime_t;

/* LocalModelCache status.nodeStatus values (KServe's NodeStatus). */
#define CORRAL_NODE_NOT_READY        "NodeNotReady"
#define CORRAL_NODE_DOWNLOAD_PENDING "NodeDownloadPending"
#define CORRAL_NODE_DOWNLOADING      "NodeDownloading"
#define CORRAL_NODE_DOWNLOADED       "NodeDownloaded"
#define CORRAL_NODE_DOWNLOAD_ERROR   "NodeDownloadError"
/* LocalModelNode status.modelStatus values (KServe's ModelStatus). */
#define CORRAL_MODEL_DOWNLOAD_PENDING "ModelDownloadPending"
#define CORRAL_MODEL_DOWNLOADING      "ModelDownloading"
#define CORRAL_MODEL_DOWNLOADED       "ModelDownloaded"
#define CORRAL_MODEL_DOWNLOAD_ERROR   "ModelDownloadError"

/* LocalModelCache (cluster-scoped, as upstream): a model to keep on every
 * node of its node groups. */
typedef struct corral_local_model_cache {
    const char *source_model_uri; /* required */
    corral_qty_t model_size;      /* required */
    corral_strlist_t node_groups; /* required, at least one */
    const char *service_account_name;
    /* status */
    int32_t copies_available, copies_total, copies_failed;
    corral_strmap_t node_status; /* node -> CORRAL_NODE_* */
} corral_local_model_cache_t;

/* LocalModelNodeGroup (cluster-scoped): the nodes that cache models and how
 * much each may hold. Its nodes: those matching persistentVolumeSpec.
 * nodeAffinity.required and spec.nodeSelector (a Corral extension: Corral
 * caches in a node-local directory and needs no volume); neither: every node. */
typedef struct corral_local_model_node_group {
    corral_qty_t storage_limit;     /* required */
    corral_strmap_t node_selector;  /* Corral */
    corral_nsel_term_t *node_terms; /* ORed nodeSelectorTerms */
    size_t nnode_terms;
    const char *local_path; /* persistentVolumeSpec.local.path or .hostPath.path; may be NULL */
} corral_local_model_node_group_t;

/* One entry of LocalModelNode spec.localModels. */
typedef struct corral_local_model_info {
    const char *source_model_uri;
    const char *model_name; /* the LocalModelCache's name, the directory name */
    const char *namespace;  /* LocalModelNamespaceCache only; NULL */
    const char *node_group;
    const char *service_account_name;
} corral_local_model_info_t;

/* LocalModelNode (cluster-scoped, named after its node, written by the
 * node's agent). */
typedef struct corral_local_model_node {
    corral_local_model_info_t *models;
    size_t nmodels;
    corral_strmap_t model_status; /* cache name -> CORRAL_MODEL_* */
} corral_local_model_node_t;

/* apps/v1 ControllerRevision: an immutable snapshot (data) numbered revision. */
typedef struct corral_controller_revision {
    int64_t revision;
    const corral_val_t *data; /* as written */
} corral_controller_revision_t;

/* apps/v1 Deployment and DaemonSet: validated as upstream, run by nothing
 * in Corral (a cluster's kube-controller-manager runs them). */
typedef struct corral_workload {
    int32_t replicas; /* Deployment spec.replicas (default 1); 0 for a DaemonSet */
    corral_selector_t selector;
    corral_pod_template_t tmpl;
    const char *strategy; /* Deployment strategy.type / DaemonSet updateStrategy.type */
    int32_t min_ready_seconds;
} corral_workload_t;

/* apiextensions.k8s.io/v1 CustomResourceDefinition: validated as upstream
 * (names, group, scope, versions, structural schemas), stored only. */
typedef struct corral_crd {
    const char *group, *scope;
    const char *plural, *singular, *kind, *list_kind;
    const char *storage_version; /* the version marked storage */
    bool served_by_corral;       /* a served version names a kind of the registry */
} corral_crd_t;

/* KServe's MatchStorageURI: storage_uri equals cached_uri or lies under it
 * at a '/' boundary (one trailing slash of each ignored). */
bool corral_storage_uri_match(const char *cached_uri, const char *storage_uri);

/* Is node (its name and labels) in LocalModelNodeGroup group? */
bool corral_model_node_group_selects(const corral_obj_t *group, const char *node_name,
                                     const corral_strmap_t *node_labels);

/* --- InferenceService predictor resolution (src/model/isvc_resolve.c) ----------------------- */

/*
 * The runtime an InferenceService's `model` runs in, by KServe's rules: the
 * one model.runtime names (a ServingRuntime of the service's namespace, else
 * a ClusterServingRuntime), or the best auto-selected one (enabled, single
 * model, the format among its autoSelect formats, the protocol supported;
 * namespace runtimes first, then by protocol, newest, name and the format's
 * priority). runtimes: decoded ServingRuntimes (any namespace; others are
 * skipped) and ClusterServingRuntimes. Returns 0 with *out set, or
 * CORRAL_ENOENT (the named runtime does not exist, or the predictor has no
 * model) or CORRAL_EINVAL (no runtime fits) with KServe's message in err.
 */
int corral_isvc_pick_runtime(const corral_obj_t *isvc, const corral_obj_t *const *runtimes,
                             size_t nruntimes, const corral_obj_t **out, char *err, size_t errlen);

/*
 * The pod template of an InferenceService's predictor replicas, in a:
 * `{metadata: {labels, annotations}, spec: PodSpec}` (KServe's rules, see
 * the file's header): `containers` as written, or `model` merged into its
 * runtime's container (corral_isvc_pick_runtime) with the runtime's and the
 * predictor's pod fields. The first container serves. Returns 0, or
 * CORRAL_ENOENT / CORRAL_EINVAL with a message in err (KServe's wording).
 */
int corral_isvc_resolve(corral_arena_t *a, const corral_obj_t *isvc,
                        const corral_obj_t *const *runtimes, size_t nruntimes, corral_val_t **out,
                        char *err, size_t errlen);

/* --- objects ------------------------------------------------------------------ */

struct corral_obj {
    const corral_kind_info_t *info;
    corral_val_t *raw; /* the whole object as written */
    const char *file;  /* where it came from; may be NULL */
    corral_meta_t meta;
    union {
        void *any;
        corral_namespace_t *ns;
        corral_node_t *node;
        corral_pod_t *pod;
        corral_event_t *event;
        corral_priorityclass_t *pc;
        corral_lease_t *lease;
        corral_configmap_t *cm;
        corral_secret_t *secret;
        corral_queue_t *queue;
        corral_podgroup_t *pg;
        corral_vcjob_t *job;
        corral_hypernode_t *hn;
        corral_isvc_t *isvc;
        corral_scenario_t *scenario;
        corral_role_t *role;            /* Role, ClusterRole */
        corral_role_binding_t *binding; /* RoleBinding, ClusterRoleBinding */
        corral_schedconf_t *schedconf;
        corral_service_account_t *sa;
        corral_service_t *svc;
        corral_endpoints_t *ep;
        corral_resource_quota_t *quota;
        corral_limit_range_t *limits;
        corral_usage_t *usage;
        corral_serving_runtime_t *runtime; /* ServingRuntime, ClusterServingRuntime */
        corral_local_model_cache_t *lmc;
        corral_local_model_node_group_t *lmng;
        corral_local_model_node_t *lmn;
        corral_controller_revision_t *crev;
        corral_workload_t *workload; /* Deployment, DaemonSet */
        corral_crd_t *crd;
    } u;
};

/*
 * Decode and validate one document. raw must stay alive as long as the object
 * (it normally lives in the same arena a). file names the source in
 * diagnostics (may be NULL). Errors and warnings go to diag.
 *
 * Returns 0 when the object is valid (warnings allowed), CORRAL_EINVAL when it
 * has errors (*out is still filled as far as possible, or NULL when even the
 * kind is unknown).
 */
int corral_obj_decode(corral_arena_t *a, corral_val_t *raw, const char *file, corral_diag_t *diag,
                      corral_obj_t **out);

/* "Kind/namespace/name", or "Kind/name" for cluster-scoped kinds, in buf. */
const char *corral_obj_ref(const corral_obj_t *o, char *buf, size_t len);

/* The value of a field selector key for this object ("metadata.name",
 * "spec.nodeName", "status.phase", ...), or NULL when the kind does not
 * support selecting on that field. Absent-but-supported fields give "". */
const char *corral_obj_field(const corral_obj_t *o, const char *field);

/* Is field a supported field selector for kind k (as kube-apiserver)? */
bool corral_kind_field_supported(corral_kind_t k, const char *field);

/* The field selectors kind k supports beyond metadata.name and
 * metadata.namespace: stores up to max names in out (static strings) and
 * returns how many there are. */
size_t corral_kind_fields(corral_kind_t k, const char **out, size_t max);

/* Write upstream defaults (what kube-apiserver's defaulting and Volcano's
 * webhooks fill in: a pod's restartPolicy, a Secret's stringData folded into
 * data, a Job's minAvailable, ...) into raw, an object of kind k, allocating
 * from a. Only absent fields are set; call before corral_obj_decode. */
void corral_obj_default(corral_arena_t *a, const corral_kind_info_t *k, corral_val_t *raw);

/* --- Volcano Job expansion (src/model/vcjob_expand.c) ----------------------------- */

/* The labels and annotations Volcano's job controller stamps on a Job's pods. */
#define CORRAL_VC_JOB_NAME      "volcano.sh/job-name"          /* label and annotation */
#define CORRAL_VC_TASK_SPEC     "volcano.sh/task-spec"         /* label and annotation */
#define CORRAL_VC_JOB_NAMESPACE "volcano.sh/job-namespace"     /* label */
#define CORRAL_VC_QUEUE_NAME    "volcano.sh/queue-name"        /* label and annotation */
#define CORRAL_VC_JOB_VERSION   "volcano.sh/job-version"       /* annotation: status.version */
#define CORRAL_VC_TEMPLATE_UID  "volcano.sh/template-uid"      /* annotation: <job>-<task> */
#define CORRAL_VC_GROUP_NAME    "scheduling.k8s.io/group-name" /* annotation: the PodGroup */
#define CORRAL_VC_JOB_API       "batch.volcano.sh/v1alpha1"

/*
 * Expand a Volcano Job into its PodGroup (named after the job) and pods named
 * <job>-<task>-<index>, as Volcano's job controller does (the typed view the
 * simulator feeds the engine; pods share their template's typed spec).
 * Everything is allocated in arena a. Returns 0 or CORRAL_EINVAL.
 */
int corral_vcjob_expand(corral_arena_t *a, const corral_obj_t *job, corral_obj_t **pg,
                        corral_obj_t ***pods, size_t *npods);

/* The name of replica index of task t of job: "<job>-<task>-<index>" (in a). */
const char *corral_vcjob_pod_name(corral_arena_t *a, const corral_obj_t *job,
                                  const corral_job_task_t *t, int32_t index);

/*
 * The labels and annotations of the pods of task t (the template's plus
 * Volcano's) for job status.version `version`, in a. Shared by
 * corral_vcjob_expand and corral_vcjob_pod_val, so the simulator and the
 * controller stamp the same pods.
 */
void corral_vcjob_pod_meta(corral_arena_t *a, const corral_obj_t *job, const corral_job_task_t *t,
                           int64_t version, corral_strmap_t *labels, corral_strmap_t *annotations);

/*
 * The Pod the job controller creates for replica index of task number task,
 * as a value tree in a ready to POST: metadata (name, namespace, labels,
 * annotations, an ownerReference to the job with controller and
 * blockOwnerDeletion), the template's spec as written with schedulerName
 * and priorityClassName inherited from the job when the template has none.
 * The job must have been read from the server (metadata.uid set).
 */
corral_val_t *corral_vcjob_pod_val(corral_arena_t *a, const corral_obj_t *job, size_t task,
                                   int32_t index, int64_t version);

/* The job's PodGroup as a value tree ready to POST: named after the job, the
 * job's annotations, owned by the job; spec minMember, queue,
 * priorityClassName, networkTopology and minResources (the requests of the
 * first minAvailable pods, tasks in order, as Volcano's calcPGMinResources
 * without priority classes). */
corral_val_t *corral_vcjob_podgroup_val(corral_arena_t *a, const corral_obj_t *job);

/* Append an ownerReference to owner (controller, blockOwnerDeletion) to the
 * metadata map meta. */
void corral_owner_ref_append(corral_arena_t *a, corral_val_t *meta, const corral_obj_t *owner);

#endif
