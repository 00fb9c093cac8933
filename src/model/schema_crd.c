/*
 * Field schemas of the kinds that have no protobuf form: Volcano's Queue,
 * PodGroup (scheduling.volcano.sh/v1beta1), Job (batch.volcano.sh/v1alpha1)
 * and HyperNode (topology.volcano.sh/v1alpha1), KServe's InferenceService
 * (serving.kserve.io/v1beta1) and Corral's Scenario and
 * SchedulerConfiguration (corral.dev/v1alpha1). They list what the object
 * model decodes (src/model/queue.c, podgroup.c, vcjob.c, hypernode.c,
 * isvc.c, scenario.c, schedconf.c), field by field, with the upstream CRDs'
 * names; a field the model keeps "as written, not interpreted" is
 * CORRAL_SCHEMA_ANY, so that a schema never refuses what the model accepts.
 *
 * Pod templates, containers, tolerations and the other k8s.io/api types are
 * the k8s table's messages, named through references (a message with no fields,
 * see corral_schema_resolve): resolved by name when a document is built.
 */
#include "model/schema_int.h"

#define S_STR  CORRAL_SCHEMA_STRING
#define S_BOOL CORRAL_SCHEMA_BOOL
#define S_I32  CORRAL_SCHEMA_INT32
#define S_I64  CORRAL_SCHEMA_INT64
#define S_MSG  CORRAL_SCHEMA_MSG
#define S_TIME CORRAL_SCHEMA_TIME
#define S_DUR  CORRAL_SCHEMA_DURATION
#define S_QTY  CORRAL_SCHEMA_QUANTITY
#define S_ANY  CORRAL_SCHEMA_ANY
#define S_LIST CORRAL_SCHEMA_REPEATED
#define S_MAP  CORRAL_SCHEMA_MAP

/* name, type, flags, message, description */
#define FLD(n, t, fl, m, d)                                                                        \
    {                                                                                              \
        n, 0, t, fl, m, d                                                                          \
    }
#define STR(n, d)     FLD(n, S_STR, 0, NULL, d)
#define BOOL(n, d)    FLD(n, S_BOOL, 0, NULL, d)
#define I32(n, d)     FLD(n, S_I32, 0, NULL, d)
#define I64(n, d)     FLD(n, S_I64, 0, NULL, d)
#define ANY(n, d)     FLD(n, S_ANY, 0, NULL, d)
#define STRS(n, d)    FLD(n, S_STR, S_LIST, NULL, d)
#define STRMAP(n, d)  FLD(n, S_STR, S_MAP, NULL, d)
#define RESLIST(n, d) FLD(n, S_QTY, S_MAP, NULL, d)
#define MSG(n, m, d)  FLD(n, S_MSG, 0, &(m), d)
#define LIST(n, m, d) FLD(n, S_MSG, S_LIST, &(m), d)

/* A message from its field array NAME_f. */
#define MSGDEF(var, name, doc)                                                                     \
    static const corral_schema_msg_t var = {name, var##_f, CORRAL_ARRAY_LEN(var##_f), doc}

/* A reference: a k8s.io/api message by name (see corral_schema_resolve). */
#define REF(var, name) static const corral_schema_msg_t var = {name, NULL, 0, NULL}

#define CORE  "io.k8s.api.core.v1."
#define META  "io.k8s.apimachinery.pkg.apis.meta.v1."
#define BATCH "sh.volcano.batch.v1alpha1."
#define SCHED "sh.volcano.scheduling.v1beta1."
#define TOPO  "sh.volcano.topology.v1alpha1."
#define KSV   "io.kserve.serving.v1beta1."
#define DEV   "dev.corral.v1alpha1."

REF(k_object_meta, META "ObjectMeta");
REF(k_label_selector, META "LabelSelector");
REF(k_condition, META "Condition");
REF(k_pod_spec, CORE "PodSpec");
REF(k_container, CORE "Container");
REF(k_toleration, CORE "Toleration");
REF(k_affinity, CORE "Affinity");
REF(k_volume, CORE "Volume");
REF(k_env, CORE "EnvVar");
REF(k_env_from, CORE "EnvFromSource");
REF(k_resources, CORE "ResourceRequirements");
REF(k_port, CORE "ContainerPort");
REF(k_volume_mount, CORE "VolumeMount");
REF(k_volume_device, CORE "VolumeDevice");
REF(k_probe, CORE "Probe");
REF(k_lifecycle, CORE "Lifecycle");
REF(k_sec_ctx, CORE "SecurityContext");
REF(k_pod_sec_ctx, CORE "PodSecurityContext");
REF(k_resize_policy, CORE "ContainerResizePolicy");
REF(k_dns_config, CORE "PodDNSConfig");
REF(k_local_ref, CORE "LocalObjectReference");
REF(k_host_alias, CORE "HostAlias");
REF(k_spread, CORE "TopologySpreadConstraint");
REF(k_readiness_gate, CORE "PodReadinessGate");
REF(k_pod_os, CORE "PodOS");
REF(k_sched_gate, CORE "PodSchedulingGate");
REF(k_claim, CORE "PodResourceClaim");

/* core/v1 PodTemplateSpec: the k8s table holds only what served kinds use,
 * and no served kind holds a pod template. Not listed in the table (a
 * table's message of the same name, should one come, is the one found by
 * name). */
static const corral_schema_field_t k_pod_template_f[] = {
    MSG("metadata", k_object_meta, "Standard object's metadata."),
    MSG("spec", k_pod_spec, "Specification of the desired behavior of the pod."),
};
MSGDEF(k_pod_template, CORE "PodTemplateSpec",
       "PodTemplateSpec describes the data a pod should have when created from a template.");

#define TOP_FIELDS(what)                                                                           \
    STR("apiVersion", "APIVersion defines the versioned schema of this representation of an "      \
                      "object."),                                                                  \
        STR("kind", "Kind is a string value representing the REST resource this object "           \
                    "represents."),                                                                \
        MSG("metadata", k_object_meta, "Standard object's metadata."),                             \
        MSG("spec", what##_spec, "Specification of the desired behavior of the " #what ".")

/* --- scheduling.volcano.sh/v1beta1 Queue --------------------------------------------- */

static const corral_schema_field_t q_guarantee_f[] = {
    RESLIST("resource", "The amount of resources reserved for this queue."),
};
MSGDEF(q_guarantee, SCHED "Guarantee", "The resources reserved for a queue.");

static const corral_schema_field_t queue_spec_f[] = {
    I32("weight", "The queue's share of the cluster when resources are divided (default 1)."),
    RESLIST("capability", "The upper limit of resources the queue's jobs may use."),
    RESLIST("deserved", "The resources the queue deserves; above it, its jobs may be reclaimed."),
    MSG("guarantee", q_guarantee, "The resources reserved for the queue, never lent to others."),
    BOOL("reclaimable", "Whether other queues may reclaim resources this queue uses beyond its "
                        "deserved share (default true)."),
    STR("parent", "The parent queue in a hierarchy of queues."),
    I32("priority", "The queue's priority among queues."),
    ANY("affinity", "Node groups the queue's jobs prefer or avoid (kept as written)."),
    ANY("extendClusters", "Clusters the queue extends to (kept as written)."),
    STR("type", "The queue's type (kept as written)."),
    STR("dequeueStrategy", "How jobs leave the queue: fifo or traverse (kept as written)."),
};
MSGDEF(queue_spec, SCHED "QueueSpec", "The desired state of a Queue.");

static const corral_schema_field_t queue_status_f[] = {
    STR("state", "The queue's state: Open, Closed, Closing or Unknown."),
    I32("unknown", "The number of PodGroups in the Unknown phase."),
    I32("pending", "The number of PodGroups in the Pending phase."),
    I32("running", "The number of PodGroups in the Running phase."),
    I32("inqueue", "The number of PodGroups in the Inqueue phase."),
    I32("completed", "The number of PodGroups in the Completed phase."),
    ANY("reservation", "Resources reserved for the queue (kept as written)."),
    RESLIST("allocated", "The resources allocated to the queue's pods."),
};
MSGDEF(queue_status, SCHED "QueueStatus", "The observed state of a Queue.");

static const corral_schema_field_t queue_f[] = {
    TOP_FIELDS(queue),
    MSG("status", queue_status, "The current status of the Queue."),
};
MSGDEF(queue, SCHED "Queue",
       "Queue is a Volcano queue: a share of the cluster that jobs and PodGroups are "
       "submitted to.");

/* --- scheduling.volcano.sh/v1beta1 PodGroup ----------------------------------------- */

static const corral_schema_field_t topo_f[] = {
    STR("mode", "hard (the group must fit in one HyperNode of the allowed tier) or soft "
                "(best effort); default hard."),
    I32("highestTierAllowed", "The highest HyperNode tier the group may span (1 is the fastest)."),
    STR("highestTierName", "The highest tier by name (not resolved by Corral)."),
};
static const corral_schema_msg_t sched_topo = {SCHED "NetworkTopologySpec", topo_f,
                                               CORRAL_ARRAY_LEN(topo_f),
                                               "The network topology constraint of a group."};
static const corral_schema_msg_t batch_topo = {BATCH "NetworkTopologySpec", topo_f,
                                               CORRAL_ARRAY_LEN(topo_f),
                                               "The network topology constraint of a job."};

static const corral_schema_field_t podgroup_spec_f[] = {
    I32("minMember", "The minimum number of pods that must be scheduled together (default 1)."),
    FLD("minTaskMember", S_I32, S_MAP, NULL,
        "The minimum number of pods of each task that must be scheduled together."),
    STR("queue", "The queue the group is submitted to (default \"default\")."),
    STR("priorityClassName", "The PriorityClass of the group."),
    RESLIST("minResources", "The minimum resources the group needs to start."),
    MSG("networkTopology", sched_topo, "The network topology constraint of the group."),
    BOOL("preemptable", "Whether the group may be preempted (kept as written)."),
    ANY("subGroupPolicy", "Policies of sub-groups (kept as written)."),
};
MSGDEF(podgroup_spec, SCHED "PodGroupSpec", "The desired state of a PodGroup.");

static const corral_schema_field_t pg_cond_f[] = {
    STR("type", "The condition's type (Scheduled, Unschedulable)."),
    STR("status", "True, False or Unknown."),
    STR("transitionID", "The ID of the transition."),
    FLD("lastTransitionTime", S_TIME, 0, NULL, "When the condition last changed."),
    STR("reason", "A one-word reason for the last transition."),
    STR("message", "A human-readable message about the last transition."),
    FLD("lastProbeTime", S_TIME, 0, NULL, "When the condition was last probed."),
    FLD("lastHeartbeatTime", S_TIME, 0, NULL, "When the condition was last reported."),
    FLD("lastUpdateTime", S_TIME, 0, NULL, "When the condition was last updated."),
    I64("observedGeneration", "The generation the condition was set for."),
};
MSGDEF(pg_cond, SCHED "PodGroupCondition", "A condition of a PodGroup.");

static const corral_schema_field_t podgroup_status_f[] = {
    STR("phase", "Pending, Running, Unknown, Inqueue or Completed."),
    I32("running", "The number of running pods."),
    I32("succeeded", "The number of pods that succeeded."),
    I32("failed", "The number of pods that failed."),
    LIST("conditions", pg_cond, "The group's conditions."),
};
MSGDEF(podgroup_status, SCHED "PodGroupStatus", "The observed state of a PodGroup.");

static const corral_schema_field_t podgroup_f[] = {
    TOP_FIELDS(podgroup),
    MSG("status", podgroup_status, "The current status of the PodGroup."),
};
MSGDEF(podgroup, SCHED "PodGroup",
       "PodGroup is a Volcano gang: a set of pods scheduled together or not at all.");

/* --- batch.volcano.sh/v1alpha1 Job ------------------------------------------------------ */

static const corral_schema_field_t policy_f[] = {
    STR("event", "The event the policy reacts to (PodFailed, PodEvicted, TaskCompleted, ...)."),
    STRS("events", "The events the policy reacts to."),
    STR("action", "What to do: AbortJob, RestartJob, RestartTask, RestartPod, TerminateJob, "
                  "CompleteJob, ..."),
    I32("exitCode", "The container exit code the policy reacts to (not with event)."),
    FLD("timeout", S_DUR, 0, NULL, "How long to wait before the action is taken."),
};
MSGDEF(policy, BATCH "LifecyclePolicy", "What a job does when an event or exit code happens.");

static const corral_schema_field_t depends_f[] = {
    STRS("name", "The tasks this task waits for."),
    STR("iteration", "any or all of them."),
};
MSGDEF(depends, BATCH "DependsOn", "The tasks a task starts after.");

static const corral_schema_field_t task_f[] = {
    STR("name", "The task's name; its pods are named <job>-<task>-<index>."),
    I32("replicas", "The number of pods the task runs."),
    I32("minAvailable", "The minimum number of the task's pods that must run together."),
    I32("maxRetry", "How many times the task is restarted before it fails (default 3)."),
    MSG("template", k_pod_template, "The pod template each replica is created from."),
    LIST("policies", policy, "The task's lifecycle policies."),
    STR("topologyPolicy", "The NUMA topology policy of the task's pods (kept as written)."),
    MSG("dependsOn", depends, "The tasks this task starts after."),
    ANY("partitionPolicy", "How the task's pods are partitioned (kept as written)."),
    ANY("reservationNodeNames", "Nodes reserved for the task (kept as written)."),
};
MSGDEF(task, BATCH "TaskSpec", "A task of a Volcano job: replicas of one pod template.");

static const corral_schema_field_t vcjob_spec_f[] = {
    STR("schedulerName", "The scheduler of the job's pods (default \"volcano\")."),
    I32("minAvailable", "The minimum number of pods that must run together (default: the sum of "
                        "the tasks' minAvailable or replicas)."),
    I32("minSuccess", "The number of pods that must succeed for the job to complete."),
    STR("queue", "The queue the job is submitted to (default \"default\")."),
    STR("priorityClassName", "The PriorityClass of the job's pods."),
    I32("maxRetry", "How many times the job is restarted before it fails (default 3)."),
    I32("ttlSecondsAfterFinished", "Seconds after which a finished job is deleted."),
    LIST("tasks", task, "The job's tasks."),
    LIST("policies", policy, "The job's lifecycle policies."),
    ANY("plugins", "Job plugins (ssh, svc, env, ...) with their arguments, kept as written."),
    ANY("volumes", "Volumes of the job (kept as written)."),
    MSG("networkTopology", batch_topo, "The network topology constraint of the job."),
    ANY("runningEstimate", "How long the job is expected to run (kept as written)."),
};
MSGDEF(vcjob_spec, BATCH "JobSpec", "The desired state of a Volcano Job.");

static const corral_schema_field_t job_state_f[] = {
    STR("phase", "Pending, Aborting, Aborted, Running, Restarting, Completing, Completed, "
                 "Terminating, Terminated or Failed."),
    STR("reason", "A one-word reason for the last transition."),
    STR("message", "A human-readable message about the last transition."),
    FLD("lastTransitionTime", S_TIME, 0, NULL, "When the phase last changed."),
};
MSGDEF(job_state, BATCH "JobState", "The phase of a job.");

static const corral_schema_field_t vcjob_status_f[] = {
    MSG("state", job_state, "The job's current state."),
    I32("minAvailable", "The job's minimum number of running pods."),
    ANY("taskStatusCount", "Pods per task and phase."),
    I32("pending", "The number of pending pods."),
    I32("running", "The number of running pods."),
    I32("succeeded", "The number of pods that succeeded."),
    I32("failed", "The number of pods that failed."),
    I32("terminating", "The number of terminating pods."),
    I32("unknown", "The number of pods in an unknown state."),
    I32("version", "The job's version."),
    I32("retryCount", "How many times the job was restarted."),
    ANY("runningDuration", "How long the job has run."),
    ANY("controlledResources", "Resources the job controls."),
    ANY("conditions", "The job's conditions."),
};
MSGDEF(vcjob_status, BATCH "JobStatus", "The observed state of a Volcano Job.");

static const corral_schema_field_t vcjob_f[] = {
    TOP_FIELDS(vcjob),
    MSG("status", vcjob_status, "The current status of the Job."),
};
MSGDEF(vcjob, BATCH "Job",
       "Job is a Volcano batch job: tasks of pods scheduled as one gang, with lifecycle "
       "policies.");

/* --- topology.volcano.sh/v1alpha1 HyperNode ----------------------------------------------- */

static const corral_schema_field_t exact_f[] = {
    STR("name", "The exact name of the member."),
};
MSGDEF(exact, TOPO "ExactMatch", "A member selected by name.");

static const corral_schema_field_t regex_f[] = {
    STR("pattern", "An extended regular expression matched against member names."),
};
MSGDEF(regex, TOPO "RegexMatch", "Members selected by a regular expression.");

static const corral_schema_field_t selector_f[] = {
    MSG("exactMatch", exact, "Select one member by name."),
    MSG("regexMatch", regex, "Select members whose names match a regular expression."),
    MSG("labelMatch", k_label_selector, "Select members by their labels."),
};
MSGDEF(selector, TOPO "MemberSelector",
       "How a HyperNode's members are chosen: exactly one of exactMatch, regexMatch or "
       "labelMatch.");

static const corral_schema_field_t member_f[] = {
    STR("type", "Node or HyperNode."),
    MSG("selector", selector, "Which nodes or HyperNodes are members."),
};
MSGDEF(member, TOPO "MemberSpec", "A member of a HyperNode.");

static const corral_schema_field_t hypernode_spec_f[] = {
    I32("tier", "The HyperNode's tier: 1 for the fastest network level."),
    STR("tierName", "The tier's name (kept as written)."),
    LIST("members", member, "The HyperNode's members."),
};
MSGDEF(hypernode_spec, TOPO "HyperNodeSpec", "The desired state of a HyperNode.");

static const corral_schema_field_t hypernode_status_f[] = {
    I32("nodeCount", "The number of nodes under the HyperNode."),
    LIST("conditions", k_condition, "The HyperNode's conditions."),
};
MSGDEF(hypernode_status, TOPO "HyperNodeStatus", "The observed state of a HyperNode.");

static const corral_schema_field_t hypernode_f[] = {
    TOP_FIELDS(hypernode),
    MSG("status", hypernode_status, "The current status of the HyperNode."),
};
MSGDEF(hypernode, TOPO "HyperNode",
       "HyperNode is one level of the network topology tree: a group of nodes or HyperNodes "
       "of a tier.");

/* --- serving.kserve.io/v1beta1 InferenceService ------------------------------------------ */

static const corral_schema_field_t scale_metric_f[] = {
    STR("type", "The metric: cpu, memory, concurrency, rps or gpu_utilization."),
    I32("targetValue", "The metric value each replica aims for."),
};
MSGDEF(scale_metric, KSV "ScaleMetricTarget", "A metric the component scales on (Corral).");

/* KServe's ComponentExtensionSpec and the PodSpec fields a component inlines. */
#define COMPONENT_F                                                                                \
    I32("minReplicas", "The minimum number of replicas (default 1; 0 scales to zero)."),           \
        I32("maxReplicas", "The maximum number of replicas."),                                     \
        STR("scaleMetric", "The metric to scale on: cpu, memory, concurrency or rps."),            \
        I32("scaleTarget", "The target value of the scale metric."),                               \
        LIST("scaleMetrics", scale_metric, "Metrics to scale on (Corral)."),                       \
        I64("canaryTrafficPercent", "The share of traffic sent to the latest revision."),          \
        I64("containerConcurrency", "The maximum number of concurrent requests per replica."),     \
        I64("timeout", "The request timeout in seconds."),                                         \
        LIST("containers", k_container, "The component's containers (a custom predictor)."),       \
        LIST("tolerations", k_toleration, "The pods' tolerations."),                               \
        STRMAP("nodeSelector", "Labels the pods' nodes must have."),                               \
        MSG("affinity", k_affinity, "The pods' scheduling constraints."),                          \
        STR("serviceAccountName", "The pods' ServiceAccount."),                                    \
        STR("priorityClassName", "The pods' PriorityClass."),                                      \
        STR("schedulerName", "The scheduler of the pods."),                                        \
        STR("scaleMetricType", "Utilization or AverageValue."),                                    \
        ANY("autoScaling",                                                                         \
            "KServe's autoscaling: metrics[0] (External, PodMetric) is scaled on."),               \
        ANY("logger", "Request and response logging (kept as written)."),                          \
        ANY("batcher", "Request batching (kept as written)."),                                     \
        STRMAP("labels", "Labels of the component's pods."),                                       \
        STRMAP("annotations", "Annotations of the component's pods."),                             \
        ANY("deploymentStrategy", "The deployment's rollout strategy (kept as written)."),         \
        LIST("volumes", k_volume, "The pods' volumes."),                                           \
        LIST("initContainers", k_container, "The pods' init containers."),                         \
        ANY("ephemeralContainers", "The pods' ephemeral containers."),                             \
        STR("restartPolicy", "The pods' restart policy."),                                         \
        I64("terminationGracePeriodSeconds", "The pods' termination grace period."),               \
        I64("activeDeadlineSeconds", "The pods' active deadline."),                                \
        STR("dnsPolicy", "DNS policy."), MSG("dnsConfig", k_dns_config, "DNS parameters."),        \
        STR("serviceAccount", "Deprecated: use serviceAccountName."),                              \
        BOOL("automountServiceAccountToken", "Whether a token is mounted."),                       \
        STR("nodeName", "A node to run on, bypassing scheduling."),                                \
        BOOL("hostNetwork", "Use the host's network namespace."),                                  \
        BOOL("hostPID", "Use the host's PID namespace."),                                          \
        BOOL("hostIPC", "Use the host's IPC namespace."),                                          \
        BOOL("shareProcessNamespace", "Share one process namespace between containers."),          \
        MSG("securityContext", k_pod_sec_ctx, "Pod-level security attributes."),                   \
        LIST("imagePullSecrets", k_local_ref, "Secrets for pulling images."),                      \
        STR("hostname", "The pods' hostname."), STR("subdomain", "The pods' subdomain."),          \
        LIST("hostAliases", k_host_alias, "Entries for /etc/hosts."),                              \
        I32("priority", "The pods' priority."), STR("preemptionPolicy", "The preemption policy."), \
        STR("runtimeClassName", "The RuntimeClass."),                                              \
        BOOL("enableServiceLinks", "Whether service environment variables are injected."),         \
        LIST("topologySpreadConstraints", k_spread, "How pods spread across topology domains."),   \
        LIST("readinessGates", k_readiness_gate, "Extra readiness conditions."),                   \
        RESLIST("overhead", "The resource overhead of the pods' sandbox."),                        \
        BOOL("setHostnameAsFQDN", "Use the FQDN as the hostname."),                                \
        MSG("os", k_pod_os, "The pods' operating system."),                                        \
        BOOL("hostUsers", "Use the host's user namespace."),                                       \
        LIST("schedulingGates", k_sched_gate, "Gates that hold scheduling back."),                 \
        LIST("resourceClaims", k_claim, "Dynamic resource claims."),                               \
        MSG("resources", k_resources, "Pod-level resources.")

static const corral_schema_field_t model_format_f[] = {
    STR("name", "The model's format (huggingface, sklearn, pytorch, onnx, ...)."),
    STR("version", "The format's version."),
};
MSGDEF(model_format, KSV "ModelFormat", "The format of a model.");

static const corral_schema_field_t model_f[] = {
    MSG("modelFormat", model_format, "The model's format; KServe picks the runtime from it."),
    STR("runtime", "The ServingRuntime to use (default: chosen from the format)."),
    STR("storageUri", "Where the model is: gs://, s3://, pvc://, file://, http(s)://, hf:// or "
                      "oci://."),
    STR("protocolVersion", "The inference protocol: v1, v2, grpc-v1 or grpc-v2."),
    STR("runtimeVersion", "The runtime's version (kept as written)."),
    ANY("storage", "Storage specification (kept as written)."),
    STR("schemaPath", "The path of the model's schema in storage (kept as written)."),
    ANY("confidential", "Confidential computing settings (kept as written)."),
    STR("name", "The container's name."),
    STR("image", "The container image (overrides the runtime's)."),
    STR("imagePullPolicy", "Always, Never or IfNotPresent."),
    STR("workingDir", "The container's working directory."),
    STRS("command", "The entrypoint."),
    STRS("args", "Arguments to the entrypoint."),
    LIST("env", k_env, "Environment variables."),
    MSG("resources", k_resources, "The container's resource requests and limits."),
    LIST("envFrom", k_env_from, "Sources of environment variables."),
    LIST("ports", k_port, "Ports to expose."),
    LIST("volumeMounts", k_volume_mount, "Volumes to mount."),
    LIST("volumeDevices", k_volume_device, "Block devices to use."),
    MSG("livenessProbe", k_probe, "Liveness probe."),
    MSG("readinessProbe", k_probe, "Readiness probe."),
    MSG("startupProbe", k_probe, "Startup probe."),
    MSG("lifecycle", k_lifecycle, "Lifecycle hooks."),
    MSG("securityContext", k_sec_ctx, "Security options."),
    STR("terminationMessagePath", "Where the termination message is written."),
    STR("terminationMessagePolicy", "File or FallbackToLogsOnError."),
    BOOL("stdin", "Allocate a buffer for stdin."),
    BOOL("stdinOnce", "Close stdin after the first attach."),
    BOOL("tty", "Allocate a TTY."),
    LIST("resizePolicy", k_resize_policy, "Resize policies of the container's resources."),
    STR("restartPolicy", "The container's restart policy (init containers)."),
};
MSGDEF(model, KSV "ModelSpec",
       "The model to serve: its format, runtime and storage, plus the container fields "
       "KServe inlines.");

static const corral_schema_field_t predictor_f[] = {
    COMPONENT_F,
    MSG("model", model, "The model to serve (KServe's new predictor form)."),
    STR("name", "The predictor's name (kept as written)."),
    ANY("storageUris", "More model locations (kept as written)."),
    STR("storageContainerName", "The storage initializer container (kept as written)."),
    ANY("workerSpec", "Workers of a multi-node predictor (kept as written)."),
    ANY("sklearn", "Framework shortcut (kept as written)."),
    ANY("xgboost", "Framework shortcut (kept as written)."),
    ANY("tensorflow", "Framework shortcut (kept as written)."),
    ANY("pytorch", "Framework shortcut (kept as written)."),
    ANY("triton", "Framework shortcut (kept as written)."),
    ANY("onnx", "Framework shortcut (kept as written)."),
    ANY("huggingface", "Framework shortcut (kept as written)."),
    ANY("pmml", "Framework shortcut (kept as written)."),
    ANY("lightgbm", "Framework shortcut (kept as written)."),
    ANY("paddle", "Framework shortcut (kept as written)."),
};
MSGDEF(predictor, KSV "PredictorSpec",
       "The predictor: the model server, with its autoscaling settings and pod fields.");

static const corral_schema_field_t transformer_f[] = {
    COMPONENT_F,
    ANY("storageUris", "Model locations (kept as written)."),
};
MSGDEF(transformer, KSV "TransformerSpec",
       "A transformer: pre- and post-processing in front of the predictor.");

static const corral_schema_field_t isvc_spec_f[] = {
    MSG("predictor", predictor, "The predictor serving the model (required)."),
    ANY("explainer", "The explainer (kept as written)."),
    MSG("transformer", transformer, "The transformer in front of the predictor."),
    ANY("canary", "A canary predictor and its traffic share (kept as written)."),
};
MSGDEF(isvc_spec, KSV "InferenceServiceSpec", "The desired state of an InferenceService.");

static const corral_schema_field_t isvc_status_f[] = {
    STR("url", "The URL the service answers at."),
    ANY("address", "The service's address."),
    ANY("conditions", "The service's conditions."),
    ANY("components", "The status of each component."),
    ANY("modelStatus", "The model's status."),
    I64("observedGeneration", "The generation last acted on."),
    STRMAP("annotations", "Annotations of the status."),
    STR("deploymentMode", "Serverless, RawDeployment or ModelMesh."),
    STR("servingRuntimeName", "The ServingRuntime chosen."),
    STR("clusterServingRuntimeName", "The ClusterServingRuntime chosen."),
    ANY("canaryStatuses", "The status of each canary."),
};
MSGDEF(isvc_status, KSV "InferenceServiceStatus", "The observed state of an InferenceService.");

static const corral_schema_field_t isvc_f[] = {
    TOP_FIELDS(isvc),
    MSG("status", isvc_status, "The current status of the InferenceService."),
};
MSGDEF(isvc, KSV "InferenceService",
       "InferenceService is a KServe model server: a predictor, and optionally a transformer "
       "and an explainer.");

/* --- corral.dev/v1alpha1 Scenario and SchedulerConfiguration --------------------------------- */

static const corral_schema_field_t expect_f[] = {
    STRS("scheduled", "Pods (name or namespace/name) that must be scheduled."),
    STRS("pending", "Pods that must be pending."),
    STRS("evicted", "Pods that must have been evicted."),
    STRS("notEvicted", "Pods that must not have been evicted."),
    STRMAP("bound", "Pod to the node it must be bound to."),
    STRMAP("reason", "Pod to a part of its pending reason."),
    ANY("sameNode", "Groups (lists) of pods that must share a node."),
    ANY("gpuIds", "Pod to the list of GPU indices it must hold."),
};
MSGDEF(expect, DEV "ScenarioExpect", "Expectations checked once the scheduler is quiet.");

static const corral_schema_field_t step_f[] = {
    FLD("at", S_DUR, 0, NULL, "The time since the scenario start (never decreasing)."),
    FLD("apply", S_ANY, S_LIST, NULL, "Objects to create or update, each of its own kind."),
    STRS("delete", "Objects to delete: pods as name or ns/name, others as Kind/ns/name."),
    STRS("complete", "Pods that finish successfully."),
    MSG("expect", expect, "What must hold after the step."),
};
MSGDEF(step, DEV "ScenarioStep", "One step of a scenario.");

static const corral_schema_field_t scenario_spec_f[] = {
    STR("description", "What the scenario shows."),
    LIST("steps", step, "The scenario's steps, in time order."),
};
MSGDEF(scenario_spec, DEV "ScenarioSpec", "A scenario `corral sim` runs.");

static const corral_schema_field_t scenario_f[] = {
    TOP_FIELDS(scenario),
};
MSGDEF(scenario, DEV "Scenario",
       "Scenario is a timed list of steps and expectations that `corral sim` runs.");

static const corral_schema_field_t scoring_f[] = {
    BOOL("preferences", "Score by the pods' preferred node affinity."),
    BOOL("fragmentation", "Score against GPU fragmentation."),
    BOOL("packing", "Score for packing pods onto busy nodes."),
    BOOL("topology", "Score by network topology."),
    BOOL("cpuMemory", "Score by CPU and memory fit."),
    I32("modelCache", "Weight (0-100, default 50) of a node holding the pod's model "
                      "(corral.dev/model-caches lists its corral.dev/model-cache)."),
};
MSGDEF(scoring, DEV "SchedulerScoring", "Which scores the scheduler uses.");

static const corral_schema_field_t fair_share_f[] = {
    STR("halfLife", "Half-life of past usage (168h); 0s turns fair share off."),
    ANY("usageWeight", "Weight of past usage against present allocation, 0 to 1 (0.5)."),
};
MSGDEF(fair_share, DEV "SchedulerFairShare", "Time-decayed fair share of the queues.");

static const corral_schema_field_t schedconf_spec_f[] = {
    ANY("actions", "The scheduling actions in order: a list or a comma-separated string of "
                   "enqueue, allocate, backfill, preempt, reclaim."),
    STR("policy", "The placement policy: corral, binpack, spread, random, bestfit, dotprod, fgd."),
    BOOL("strictOrder", "Schedule jobs strictly in order."),
    I64("seed", "The random seed."),
    I32("maxEvictionsPerCycle", "The most evictions per cycle (0: no limit)."),
    MSG("scoring", scoring, "Which scores the scheduler uses."),
    MSG("fairShare", fair_share, "Time-decayed fair share of the queues."),
};
MSGDEF(schedconf_spec, DEV "SchedulerConfigurationSpec", "The scheduler's settings.");

static const corral_schema_field_t schedconf_f[] = {
    TOP_FIELDS(schedconf),
};
MSGDEF(schedconf, DEV "SchedulerConfiguration",
       "SchedulerConfiguration holds the settings of Corral's scheduler.");

/* --- corral.dev/v1 UsageRecord ---------------------------------------------------------------- */

#define DEV1       "dev.corral.v1."
#define DBL(n, d)  FLD(n, CORRAL_SCHEMA_DOUBLE, 0, NULL, d)
#define TIME(n, d) FLD(n, S_TIME, 0, NULL, d)

static const corral_schema_field_t usage_spec_f[] = {
    STR("pod", "The pod's name."),
    STR("podUID", "The pod's UID (also the record's name)."),
    STR("queue", "The Volcano queue the pod ran in."),
    STR("job", "The Volcano Job (or owner) the pod belonged to."),
    STR("node", "The node the pod ran on."),
    DBL("gpus", "GPUs allocated (nvidia.com/gpu, shares as fractions)."),
    STR("gpuModel", "The GPU model of the node (nvidia.com/gpu.product)."),
    STR("gpuIDs", "The GPU indices the pod held (corral.dev/gpu-ids)."),
    TIME("createdAt", "When the pod was created."),
    TIME("scheduledAt", "When the pod was bound to its node."),
    TIME("startedAt", "When the pod started."),
    TIME("finishedAt", "When the pod finished (or was deleted)."),
    DBL("waitSeconds", "Seconds from creation to start."),
    DBL("runSeconds", "Seconds from start to finish."),
    DBL("gpuSecondsAllocated", "GPUs times run seconds."),
    DBL("gpuSecondsUsed", "GPU-seconds actually used (utilization integrated by the agent); "
                          "absent when unknown."),
    STR("phase", "Succeeded, Failed, or Deleted (deleted while running)."),
    I32("exitCode", "The first container's exit code, when known."),
    STR("reason", "The reason of the pod's or its container's termination."),
};
MSGDEF(usage_spec, DEV1 "UsageRecordSpec", "What one finished pod used.");

static const corral_schema_field_t usage_f[] = {
    TOP_FIELDS(usage),
};
MSGDEF(usage, DEV1 "UsageRecord",
       "UsageRecord is the accounting record of one finished pod, written by the controller.");

/* --- serving.kserve.io/v1alpha1 runtimes and the local model cache ------------------------- */

#define KSV1 "io.kserve.serving.v1alpha1."

REF(k_pvc_spec, CORE "PersistentVolumeClaimSpec");

static const corral_schema_field_t smf_f[] = {
    STR("name", "Name of the model format."),
    STR("version", "Version of the model format: \"major\", \"major.minor\" or "
                   "\"major.minor.patch\"."),
    BOOL("autoSelect", "Whether the runtime may be chosen for a model of this format that names "
                       "no runtime."),
    I32("priority", "Priority among runtimes auto-selected for this format (1 or more; the "
                    "highest wins)."),
};
MSGDEF(smf, KSV1 "SupportedModelFormat", "A model format a serving runtime supports.");

static const corral_schema_field_t runtime_spec_f[] = {
    LIST("supportedModelFormats", smf, "Model formats and versions supported by this runtime."),
    BOOL("multiModel", "Whether the runtime is intended for multi-model serving."),
    BOOL("disabled", "Set to true to disable use of this runtime."),
    STRS("protocolVersions", "Supported protocol versions: v1, v2, grpc-v1, grpc-v2."),
    ANY("workerSpec", "Workers of a multi-node runtime (kept as written)."),
    LIST("containers", k_container, "The runtime's containers; the first serves the model."),
    LIST("volumes", k_volume, "Volumes the containers may mount."),
    STRMAP("nodeSelector", "Labels the pods' nodes must have."),
    MSG("affinity", k_affinity, "The pods' scheduling constraints."),
    LIST("tolerations", k_toleration, "The pods' tolerations."),
    STRMAP("labels", "Labels added to the pods."),
    STRMAP("annotations", "Annotations added to the pods."),
    LIST("imagePullSecrets", k_local_ref, "Secrets for pulling images."),
    BOOL("hostIPC", "Use the host's IPC namespace."),
    STR("schedulerName", "The scheduler of the pods."),
    LIST("resourceClaims", k_claim, "Dynamic resource claims."),
    STR("grpcEndpoint", "ModelMesh: the model-management gRPC endpoint (kept as written)."),
    STR("grpcDataEndpoint", "ModelMesh: the inference gRPC endpoint (kept as written)."),
    STR("httpDataEndpoint", "ModelMesh: the inference HTTP endpoint (kept as written)."),
    I32("replicas", "ModelMesh: replicas of the runtime (kept as written)."),
    ANY("storageHelper", "ModelMesh: the storage helper (kept as written)."),
    ANY("builtInAdapter", "ModelMesh: the built-in adapter (kept as written)."),
};
MSGDEF(runtime_spec, KSV1 "ServingRuntimeSpec", "The desired state of a serving runtime.");

static const corral_schema_field_t runtime_f[] = {
    TOP_FIELDS(runtime),
    ANY("status", "The runtime's status (empty)."),
};
MSGDEF(runtime, KSV1 "ServingRuntime",
       "ServingRuntime is a model server template: the containers and pod fields of the "
       "replicas of the InferenceServices in its namespace whose model it serves.");

static const corral_schema_field_t cruntime_f[] = {
    STR("apiVersion", "APIVersion defines the versioned schema of this representation of an "
                      "object."),
    STR("kind", "Kind is a string value representing the REST resource this object represents."),
    MSG("metadata", k_object_meta, "Standard object's metadata."),
    MSG("spec", runtime_spec, "Specification of the desired behavior of the runtime."),
    ANY("status", "The runtime's status (empty)."),
};
MSGDEF(cruntime, KSV1 "ClusterServingRuntime",
       "ClusterServingRuntime is a serving runtime every namespace may use.");

static const corral_schema_field_t copies_f[] = {
    I32("available", "Nodes that hold the model."),
    I32("total", "Nodes that should hold the model, including nodes that are not ready."),
    I32("failed", "Nodes where the download failed."),
};
MSGDEF(copies, KSV1 "ModelCopies", "How many nodes hold a cached model.");

static const corral_schema_field_t nsname_f[] = {
    STR("namespace", "The namespace."),
    STR("name", "The name."),
};
MSGDEF(nsname, KSV1 "NamespacedName", "A namespaced object's name.");

static const corral_schema_field_t lmc_spec_f[] = {
    STR("sourceModelUri", "Where the model is (file://, http(s)://, pvc://, ...); immutable."),
    FLD("modelSize", S_QTY, 0, NULL,
        "The model's size, checked against the node group's "
        "storageLimit."),
    STRS("nodeGroups", "The LocalModelNodeGroups to cache the model on (at least one)."),
    STR("serviceAccountName", "The service account for credential lookup."),
    ANY("storage", "Storage key and parameters (kept as written)."),
};
MSGDEF(lmc_spec, KSV1 "LocalModelCacheSpec", "The model to cache and where.");

static const corral_schema_field_t lmc_status_f[] = {
    STRMAP("nodeStatus", "Per node: NodeNotReady, NodeDownloadPending, NodeDownloading, "
                         "NodeDownloaded or NodeDownloadError."),
    MSG("copies", copies, "How many nodes hold the model."),
    LIST("inferenceServices", nsname, "InferenceServices whose storageUri this cache holds."),
    LIST("llmInferenceServices", nsname,
         "LLMInferenceServices using the model (kept as "
         "written)."),
};
MSGDEF(lmc_status, KSV1 "LocalModelCacheStatus", "Where the model is cached.");

static const corral_schema_field_t lmc_f[] = {
    TOP_FIELDS(lmc),
    MSG("status", lmc_status, "Where the model is cached, written by the controller."),
};
MSGDEF(lmc, KSV1 "LocalModelCache",
       "LocalModelCache is a model kept on the local disk of every node of its node groups, "
       "so that replicas start without fetching it.");

static const corral_schema_field_t lmng_spec_f[] = {
    FLD("storageLimit", S_QTY, 0, NULL, "The most each node of the group may cache."),
    ANY("persistentVolumeSpec", "Its nodeAffinity selects the group's nodes; a local "
                                "or hostPath path is where they cache."),
    MSG("persistentVolumeClaimSpec", k_pvc_spec, "Kept as written (Corral mounts no volume)."),
    STRMAP("nodeSelector", "Corral: labels the group's nodes must have."),
};
MSGDEF(lmng_spec, KSV1 "LocalModelNodeGroupSpec", "The nodes of a group and their cache size.");

static const corral_schema_field_t lmng_status_f[] = {
    FLD("used", S_QTY, 0, NULL, "Storage used on any node of the group."),
    FLD("available", S_QTY, 0, NULL, "Storage available on any node of the group."),
};
MSGDEF(lmng_status, KSV1 "LocalModelNodeGroupStatus", "Storage of a node group.");

static const corral_schema_field_t lmng_f[] = {
    TOP_FIELDS(lmng),
    MSG("status", lmng_status, "Storage of the node group."),
};
MSGDEF(lmng, KSV1 "LocalModelNodeGroup",
       "LocalModelNodeGroup is a group of nodes that cache "
       "models, with the storage each may use.");

static const corral_schema_field_t lm_info_f[] = {
    STR("sourceModelUri", "Where the model is."),
    STR("modelName", "The LocalModelCache's name: the model's directory on the node."),
    STR("namespace", "The LocalModelNamespaceCache's namespace (empty for a LocalModelCache)."),
    STR("nodeGroup", "The LocalModelNodeGroup the model belongs to."),
    STR("serviceAccountName", "The service account for credential lookup."),
    ANY("storage", "Storage key and parameters (kept as written)."),
};
MSGDEF(lm_info, KSV1 "LocalModelInfo", "A model a node caches.");

static const corral_schema_field_t lmn_spec_f[] = {
    LIST("localModels", lm_info, "The models this node caches."),
};
MSGDEF(lmn_spec, KSV1 "LocalModelNodeSpec", "The models a node caches.");

static const corral_schema_field_t lmn_status_f[] = {
    STRMAP("modelStatus", "Per model: ModelDownloadPending, ModelDownloading, ModelDownloaded "
                          "or ModelDownloadError."),
};
MSGDEF(lmn_status, KSV1 "LocalModelNodeStatus", "The state of each model on the node.");

static const corral_schema_field_t lmn_f[] = {
    TOP_FIELDS(lmn),
    MSG("status", lmn_status, "The state of each model, written by the node's agent."),
};
MSGDEF(lmn, KSV1 "LocalModelNode",
       "LocalModelNode lists the models one node caches (named after the node).");

/* --- the table ------------------------------------------------------------------------------- */

static const corral_schema_msg_t *const msgs[] = {
    &queue,
    &queue_spec,
    &queue_status,
    &q_guarantee,
    &podgroup,
    &podgroup_spec,
    &podgroup_status,
    &pg_cond,
    &sched_topo,
    &vcjob,
    &vcjob_spec,
    &vcjob_status,
    &job_state,
    &task,
    &policy,
    &depends,
    &batch_topo,
    &hypernode,
    &hypernode_spec,
    &hypernode_status,
    &member,
    &selector,
    &exact,
    &regex,
    &isvc,
    &isvc_spec,
    &isvc_status,
    &predictor,
    &transformer,
    &model,
    &model_format,
    &scale_metric,
    &scenario,
    &scenario_spec,
    &step,
    &expect,
    &schedconf,
    &schedconf_spec,
    &scoring,
    &fair_share,
    &usage,
    &usage_spec,
    &smf,
    &runtime_spec,
    &runtime,
    &cruntime,
    &copies,
    &nsname,
    &lmc_spec,
    &lmc_status,
    &lmc,
    &lmng_spec,
    &lmng_status,
    &lmng,
    &lm_info,
    &lmn_spec,
    &lmn_status,
    &lmn,
};

static const corral__schema_top_t tops[] = {
    {"scheduling.volcano.sh/v1beta1", "Queue", &queue},
    {"scheduling.volcano.sh/v1beta1", "PodGroup", &podgroup},
    {"batch.volcano.sh/v1alpha1", "Job", &vcjob},
    {"topology.volcano.sh/v1alpha1", "HyperNode", &hypernode},
    {"serving.kserve.io/v1beta1", "InferenceService", &isvc},
    {"corral.dev/v1alpha1", "Scenario", &scenario},
    {"corral.dev/v1alpha1", "SchedulerConfiguration", &schedconf},
    {"corral.dev/v1", "UsageRecord", &usage},
    {"serving.kserve.io/v1alpha1", "ServingRuntime", &runtime},
    {"serving.kserve.io/v1alpha1", "ClusterServingRuntime", &cruntime},
    {"serving.kserve.io/v1alpha1", "LocalModelCache", &lmc},
    {"serving.kserve.io/v1alpha1", "LocalModelNodeGroup", &lmng},
    {"serving.kserve.io/v1alpha1", "LocalModelNode", &lmn},
};

const corral_schema_msg_t *const *corral__schema_crd_msgs(size_t *n)
{
    *n = CORRAL_ARRAY_LEN(msgs);
    return msgs;
}

const corral__schema_top_t *corral__schema_crd_tops(size_t *n)
{
    *n = CORRAL_ARRAY_LEN(tops);
    return tops;
}
