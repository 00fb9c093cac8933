/* Volcano Job decoding: Volcano's defaults (scheduler, queue, maxRetry, the
 * gang size), task and policy validation, dependsOn, the pod names a job
 * expands to, and a realistic distributed training job. */
#include "model_test.h"

#include "corral/timefmt.h"

#define JOB_HEAD                                                                                   \
    "apiVersion: batch.volcano.sh/v1alpha1\n"                                                      \
    "kind: Job\n"                                                                                  \
    "metadata:\n"                                                                                  \
    "  name: job\n"                                                                                \
    "spec:\n"

/* A task template that is valid on its own (6 lines, indented for a task). */
#define TEMPLATE                                                                                   \
    "    template:\n"                                                                              \
    "      spec:\n"                                                                                \
    "        containers:\n"                                                                        \
    "        - name: c\n"                                                                          \
    "          image: busybox\n"

/* One valid task named n with r replicas: lines "- name", "replicas", template. */
#define TASK(n, r) "  - name: " n "\n    replicas: " #r "\n" TEMPLATE

TestSuite(vcjob);

static const char pytorch_job[] =
    "apiVersion: batch.volcano.sh/v1alpha1\n"
    "kind: Job\n"
    "metadata:\n"
    "  name: pytorch-ddp\n"
    "  namespace: ml\n"
    "spec:\n"
    "  minAvailable: 8\n"
    "  schedulerName: volcano\n"
    "  queue: research\n"
    "  priorityClassName: high-priority\n"
    "  maxRetry: 5\n"
    "  ttlSecondsAfterFinished: 3600\n"
    "  plugins:\n"
    "    pytorch: [\"--master=master\", \"--worker=worker\", \"--port=23456\"]\n"
    "    svc: []\n"
    "  policies:\n"
    "  - event: PodEvicted\n"
    "    action: RestartJob\n"
    "  - events: [PodFailed, Unknown]\n"
    "    action: AbortJob\n"
    "    timeout: 5m\n"
    "  networkTopology:\n"
    "    mode: hard\n"
    "    highestTierAllowed: 1\n"
    "  tasks:\n"
    "  - name: worker\n"
    "    replicas: 8\n"
    "    policies:\n"
    "    - event: TaskCompleted\n"
    "      action: CompleteJob\n"
    "    template:\n"
    "      metadata:\n"
    "        labels: {app: ddp}\n"
    "      spec:\n"
    "        restartPolicy: OnFailure\n"
    "        containers:\n"
    "        - name: trainer\n"
    "          image: pytorch/pytorch:2.3.0-cuda12.1-cudnn8-runtime\n"
    "          command: [torchrun]\n"
    "          args: [\"--nproc_per_node=8\", train.py]\n"
    "          resources:\n"
    "            limits:\n"
    "              nvidia.com/gpu: 8\n"
    "              cpu: \"32\"\n"
    "              memory: 256Gi\n"
    "status:\n"
    "  state:\n"
    "    phase: Running\n"
    "  running: 8\n";

Test(vcjob, pytorch_ddp_example)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, pytorch_job), 0, "%s", mt_diags(&t));
    cr_assert_eq(t.diag.n, 0, "%s", mt_diags(&t));
    cr_assert_eq(t.obj->info->kind, CORRAL_KIND_VCJOB);
    const corral_vcjob_t *j = t.obj->u.job;
    cr_assert_str_eq(j->scheduler_name, "volcano");
    cr_assert_str_eq(j->queue, "research");
    cr_assert_str_eq(j->priority_class_name, "high-priority");
    cr_assert_eq(j->min_available, 8);
    cr_assert_eq(j->max_retry, 5);
    cr_assert(j->ttl_seconds_after_finished.set);
    cr_assert_eq(j->ttl_seconds_after_finished.v, 3600);
    cr_assert_not_null(j->plugins);
    cr_assert_eq(j->plugins->kind, CORRAL_VAL_MAP);
    cr_assert_eq(j->npolicies, 2);
    cr_assert_str_eq(j->policies[0].event, "PodEvicted");
    cr_assert_str_eq(j->policies[0].action, "RestartJob");
    cr_assert_eq(j->policies[1].events.n, 2);
    cr_assert_str_eq(j->policies[1].events.items[1], "Unknown");
    cr_assert_eq(j->policies[1].timeout_ns, 5 * CORRAL_NS_PER_MIN);
    cr_assert_str_eq(j->topology.mode, "hard");
    cr_assert_eq(j->topology.highest_tier.v, 1);
    cr_assert_str_eq(j->phase, "Running");
    cr_assert_eq(j->ntasks, 1);
    const corral_job_task_t *w = &j->tasks[0];
    cr_assert_str_eq(w->name, "worker");
    cr_assert_eq(w->replicas, 8);
    cr_assert_not(w->min_available.set);
    cr_assert_eq(w->max_retry, 3);
    cr_assert_eq(w->npolicies, 1);
    cr_assert_str_eq(w->policies[0].action, "CompleteJob");
    cr_assert_not_null(w->tmpl.raw);
    cr_assert_str_eq(corral_strmap_get(&w->tmpl.meta.labels, "app"), "ddp");
    cr_assert_str_eq(w->tmpl.spec.restart_policy, "OnFailure");
    cr_assert_str_eq(w->tmpl.spec.scheduler_name, "volcano");
    cr_assert_eq(w->tmpl.spec.ncontainers, 1);
    int64_t gpus = 0;
    const corral_qty_t *g =
        corral_reslist_get(&w->tmpl.spec.containers[0].limits, "nvidia.com/gpu");
    cr_assert_not_null(g);
    cr_assert_eq(corral_qty_value(g, &gpus), 0);
    cr_assert_eq(gpus, 8);
    mt_fini(&t);
}

Test(vcjob, defaults)
{
    mt_t t;
    int rc = mt_decode(&t, JOB_HEAD "  tasks:\n" TASK("ps", 2) "  - name: worker\n"
                                                               "    replicas: 3\n"
                                                               "    minAvailable: 1\n"
                                                               "    maxRetry: 7\n" TEMPLATE);
    cr_assert_eq(rc, 0, "%s", mt_diags(&t));
    cr_assert_eq(t.diag.n, 0, "%s", mt_diags(&t));
    const corral_vcjob_t *j = t.obj->u.job;
    cr_assert_str_eq(j->scheduler_name, "volcano");
    cr_assert_str_eq(j->queue, "default");
    cr_assert_null(j->priority_class_name);
    cr_assert_eq(j->max_retry, 3);
    cr_assert_not(j->min_success.set);
    cr_assert_not(j->ttl_seconds_after_finished.set);
    cr_assert_null(j->plugins);
    cr_assert_null(j->topology.mode);
    cr_assert_null(j->phase);
    /* ps contributes its replicas (2), worker its minAvailable (1). */
    cr_assert_eq(j->min_available, 3);
    cr_assert_eq(j->ntasks, 2);
    cr_assert_eq(j->tasks[0].max_retry, 3);
    cr_assert_eq(j->tasks[1].max_retry, 7);
    cr_assert(j->tasks[1].min_available.set);
    cr_assert_eq(j->tasks[1].min_available.v, 1);
    cr_assert_str_eq(j->tasks[0].tmpl.spec.scheduler_name, "volcano");
    mt_fini(&t);
}

Test(vcjob, zero_min_available_means_default)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, JOB_HEAD "  minAvailable: 0\n  tasks:\n" TASK("w", 4)), 0, "%s",
                 mt_diags(&t));
    cr_assert_eq(t.obj->u.job->min_available, 4);
    mt_fini(&t);
}

Test(vcjob, job_scheduler_name_is_template_default)
{
    mt_t t;
    int rc = mt_decode(&t, JOB_HEAD "  schedulerName: corral\n"
                                    "  tasks:\n" TASK("a", 1) "  - name: b\n"
                                                              "    replicas: 1\n"
                                                              "    template:\n"
                                                              "      spec:\n"
                                                              "        schedulerName: other\n"
                                                              "        containers:\n"
                                                              "        - {name: c, image: x}\n");
    cr_assert_eq(rc, 0, "%s", mt_diags(&t));
    cr_assert_str_eq(t.obj->u.job->tasks[0].tmpl.spec.scheduler_name, "corral");
    cr_assert_str_eq(t.obj->u.job->tasks[1].tmpl.spec.scheduler_name, "other");
    mt_fini(&t);
}

Test(vcjob, no_tasks)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, JOB_HEAD "  tasks: []\n"), CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:6:", "spec.tasks", "at least one task");
    mt_fini(&t);

    cr_assert_eq(mt_decode(&t, JOB_HEAD "  queue: q\n"), CORRAL_EINVAL);
    mt_assert_diag(&t, "spec.tasks", "required", "at least one task");
    mt_fini(&t);
}

Test(vcjob, replicas_required)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, JOB_HEAD "  tasks:\n"
                                        "  - name: w\n" TEMPLATE),
                 CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:7:", "spec.tasks[0].replicas", "required");
    mt_fini(&t);
}

Test(vcjob, negative_replicas)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, JOB_HEAD "  tasks:\n" TASK("w", -1)), CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:8:", "spec.tasks[0].replicas", "greater than or equal to 0");
    mt_fini(&t);
}

Test(vcjob, task_min_available_above_replicas)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, JOB_HEAD "  tasks:\n"
                                        "  - name: w\n"
                                        "    replicas: 2\n"
                                        "    minAvailable: 3\n" TEMPLATE),
                 CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:9:", "spec.tasks[0].minAvailable", "more than the task's replicas");
    mt_fini(&t);
}

Test(vcjob, task_min_available_negative)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, JOB_HEAD "  tasks:\n"
                                        "  - name: w\n"
                                        "    replicas: 2\n"
                                        "    minAvailable: -1\n" TEMPLATE),
                 CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:9:", "spec.tasks[0].minAvailable", "greater than or equal to 0");
    mt_fini(&t);
}

Test(vcjob, task_name_required)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, JOB_HEAD "  tasks:\n"
                                        "  - replicas: 1\n" TEMPLATE),
                 CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:7:", "spec.tasks[0].name", "required");
    mt_fini(&t);
}

Test(vcjob, task_name_not_a_dns_label)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, JOB_HEAD "  tasks:\n" TASK("Worker_1", 1)), CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:7:", "spec.tasks[0].name", "invalid task name", "RFC 1123 label");
    mt_fini(&t);
}

Test(vcjob, duplicate_task_names)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, JOB_HEAD "  tasks:\n" TASK("w", 1) TASK("w", 2)), CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:14:", "spec.tasks[1].name", "duplicate task name", "spec.tasks[0]");
    mt_fini(&t);
}

Test(vcjob, min_available_above_total_replicas)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, JOB_HEAD "  minAvailable: 5\n  tasks:\n" TASK("a", 2) TASK("b", 2)),
                 CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:6:", "spec.minAvailable", "is 5", "4 replicas");
    mt_fini(&t);
}

Test(vcjob, negative_counts)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, JOB_HEAD "  minAvailable: -1\n"
                                        "  maxRetry: -2\n"
                                        "  ttlSecondsAfterFinished: -3\n"
                                        "  minSuccess: 0\n"
                                        "  tasks:\n" TASK("w", 1)),
                 CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:6:", "spec.minAvailable", "greater than or equal to 0");
    mt_assert_diag(&t, "t.yaml:7:", "spec.maxRetry", "greater than or equal to 0");
    mt_assert_diag(&t, "t.yaml:8:", "spec.ttlSecondsAfterFinished", "greater than or equal to 0");
    mt_assert_diag(&t, "t.yaml:9:", "spec.minSuccess", "at least 1");
    mt_fini(&t);
}

Test(vcjob, min_success_above_total)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, JOB_HEAD "  minSuccess: 3\n  tasks:\n" TASK("w", 2)), CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:6:", "spec.minSuccess", "never succeed");
    mt_fini(&t);
}

Test(vcjob, template_required)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, JOB_HEAD "  tasks:\n"
                                        "  - name: w\n"
                                        "    replicas: 1\n"),
                 CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:7:", "spec.tasks[0].template", "required");
    mt_fini(&t);
}

Test(vcjob, template_errors_have_full_path)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, JOB_HEAD "  tasks:\n"
                                        "  - name: w\n"
                                        "    replicas: 1\n"
                                        "    template:\n"
                                        "      spec:\n"
                                        "        containers:\n"
                                        "        - name: c\n"
                                        "          resources:\n"
                                        "            limits: {nvidia.com/gpu: 0.5}\n"),
                 CORRAL_EINVAL);
    mt_assert_diag(&t, "spec.tasks[0].template.spec.containers[0].image", "required");
    mt_assert_diag(&t, "t.yaml:14:",
                   "spec.tasks[0].template.spec.containers[0].resources.limits.nvidia.com/gpu",
                   "corral.dev/gpu-milli");
    mt_fini(&t);
}

Test(vcjob, unknown_task_field_warns_with_hint)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, JOB_HEAD "  tasks:\n"
                                        "  - name: w\n"
                                        "    replica: 2\n" TEMPLATE),
                 CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:8:", "warning:", "spec.tasks[0].replica", "did you mean `replicas`");
    mt_assert_diag(&t, "spec.tasks[0].replicas", "required");
    mt_fini(&t);
}

Test(vcjob, unknown_spec_field_warns_with_hint)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, JOB_HEAD "  minAvaliable: 2\n  tasks:\n" TASK("w", 2)), 0, "%s",
                 mt_diags(&t));
    mt_assert_diag(&t, "t.yaml:6:", "warning:", "spec.minAvaliable", "did you mean `minAvailable`");
    mt_fini(&t);
}

Test(vcjob, upstream_fields_kept_quietly)
{
    mt_t t;
    int rc = mt_decode(&t, JOB_HEAD "  volumes:\n"
                                    "  - mountPath: /data\n"
                                    "    volumeClaimName: data\n"
                                    "  runningEstimate: 2h\n"
                                    "  tasks:\n"
                                    "  - name: w\n"
                                    "    replicas: 1\n"
                                    "    topologyPolicy: best-effort\n" TEMPLATE);
    cr_assert_eq(rc, 0, "%s", mt_diags(&t));
    cr_assert_eq(t.diag.n, 0, "%s", mt_diags(&t));
    mt_fini(&t);
}

Test(vcjob, policy_event_typo)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, JOB_HEAD "  policies:\n"
                                        "  - event: PodEvcted\n"
                                        "    action: RestartJob\n"
                                        "  tasks:\n" TASK("w", 1)),
                 CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:7:", "spec.policies[0].event", "did you mean `PodEvicted`");
    mt_fini(&t);
}

Test(vcjob, policy_events_list_typo)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, JOB_HEAD "  policies:\n"
                                        "  - events: [PodFailed, TaskCompleeted]\n"
                                        "    action: AbortJob\n"
                                        "  tasks:\n" TASK("w", 1)),
                 CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:7:", "spec.policies[0].events[1]", "did you mean `TaskCompleted`");
    mt_fini(&t);
}

Test(vcjob, policy_action_typo)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, JOB_HEAD "  tasks:\n"
                                        "  - name: w\n"
                                        "    replicas: 1\n"
                                        "    policies:\n"
                                        "    - event: PodFailed\n"
                                        "      action: RestartJb\n" TEMPLATE),
                 CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:11:", "spec.tasks[0].policies[0].action",
                   "did you mean `RestartJob`");
    mt_fini(&t);
}

Test(vcjob, policy_action_required)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, JOB_HEAD "  policies:\n"
                                        "  - event: PodFailed\n"
                                        "  tasks:\n" TASK("w", 1)),
                 CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:7:", "spec.policies[0].action", "required");
    mt_fini(&t);
}

Test(vcjob, policy_event_and_exit_code)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, JOB_HEAD "  policies:\n"
                                        "  - event: PodFailed\n"
                                        "    exitCode: 137\n"
                                        "    action: RestartJob\n"
                                        "  tasks:\n" TASK("w", 1)),
                 CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:8:", "spec.policies[0].exitCode", "must not be set together");
    mt_fini(&t);
}

Test(vcjob, policy_needs_a_trigger)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, JOB_HEAD "  policies:\n"
                                        "  - action: RestartJob\n"
                                        "  tasks:\n" TASK("w", 1)),
                 CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:7:", "spec.policies[0]", "`event`, `events` or `exitCode`");
    mt_fini(&t);
}

Test(vcjob, policy_exit_codes)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, JOB_HEAD "  policies:\n"
                                        "  - exitCode: 0\n"
                                        "    action: RestartJob\n"
                                        "  - exitCode: 3\n"
                                        "    action: RestartJob\n"
                                        "  - exitCode: 3\n"
                                        "    action: AbortJob\n"
                                        "  tasks:\n" TASK("w", 1)),
                 CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:7:", "spec.policies[0].exitCode", "0 is not a valid exit code");
    mt_assert_diag(&t, "t.yaml:11:", "spec.policies[2].exitCode", "duplicate exit code 3");
    mt_fini(&t);
}

Test(vcjob, policy_duplicate_event)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, JOB_HEAD "  policies:\n"
                                        "  - event: PodFailed\n"
                                        "    action: RestartJob\n"
                                        "  - events: [PodEvicted, PodFailed]\n"
                                        "    action: AbortJob\n"
                                        "  tasks:\n" TASK("w", 1)),
                 CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:9:", "spec.policies[1]", "duplicate event PodFailed", "policy [0]");
    mt_fini(&t);
}

Test(vcjob, policy_any_event_alone)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, JOB_HEAD "  policies:\n"
                                        "  - event: \"*\"\n"
                                        "    action: RestartJob\n"
                                        "  - event: PodFailed\n"
                                        "    action: AbortJob\n"
                                        "  tasks:\n" TASK("w", 1)),
                 CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:7:", "spec.policies[0]", "must be the only event");
    mt_fini(&t);

    cr_assert_eq(mt_decode(&t, JOB_HEAD "  policies:\n"
                                        "  - event: \"*\"\n"
                                        "    action: RestartJob\n"
                                        "  tasks:\n" TASK("w", 1)),
                 0, "%s", mt_diags(&t));
    mt_fini(&t);
}

Test(vcjob, policy_timeout)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, JOB_HEAD "  policies:\n"
                                        "  - event: PodEvicted\n"
                                        "    action: RestartJob\n"
                                        "    timeout: 1m30s\n"
                                        "  tasks:\n" TASK("w", 1)),
                 0, "%s", mt_diags(&t));
    cr_assert_eq(t.obj->u.job->policies[0].timeout_ns, 90 * CORRAL_NS_PER_SEC);
    mt_fini(&t);

    cr_assert_eq(mt_decode(&t, JOB_HEAD "  policies:\n"
                                        "  - event: PodEvicted\n"
                                        "    action: RestartJob\n"
                                        "    timeout: 90\n"
                                        "  tasks:\n" TASK("w", 1)),
                 CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:9:", "spec.policies[0].timeout", "needs a unit");
    mt_fini(&t);
}

Test(vcjob, pod_name_too_long)
{
    char name[241];
    memset(name, 'j', sizeof(name) - 1);
    name[sizeof(name) - 1] = '\0';
    char yaml[2048];
    snprintf(yaml, sizeof(yaml),
             "apiVersion: batch.volcano.sh/v1alpha1\n"
             "kind: Job\n"
             "metadata:\n"
             "  name: %s\n"
             "spec:\n"
             "  tasks:\n" TASK("short", 2) TASK("worker-task", 100),
             name);
    mt_t t;
    cr_assert_eq(mt_decode(&t, yaml), CORRAL_EINVAL);
    /* 240 + "-worker-task-99" = 255 > 253; "-short-1" fits (248). */
    mt_assert_diag(&t, "t.yaml:14:", "spec.tasks[1].name", "-worker-task-99\"", "255 characters",
                   "shorten");
    cr_assert_eq(t.diag.n, 1, "%s", mt_diags(&t));
    mt_fini(&t);
}

Test(vcjob, depends_on)
{
    mt_t t;
    int rc =
        mt_decode(&t, JOB_HEAD "  tasks:\n" TASK("master", 1) "  - name: worker\n"
                                                              "    replicas: 2\n"
                                                              "    dependsOn:\n"
                                                              "      name: [master]\n"
                                                              "      iteration: any\n" TEMPLATE);
    cr_assert_eq(rc, 0, "%s", mt_diags(&t));
    const corral_job_task_t *w = &t.obj->u.job->tasks[1];
    cr_assert_eq(w->depends_on.n, 1);
    cr_assert_str_eq(w->depends_on.items[0], "master");
    mt_fini(&t);
}

Test(vcjob, depends_on_errors)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, JOB_HEAD
                           "  tasks:\n"
                           "  - name: a\n"
                           "    replicas: 1\n"
                           "    dependsOn: {name: [a, nope], iteration: every}\n" TEMPLATE),
                 CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:9:", "spec.tasks[0].dependsOn.iteration", "one of: any, all");
    mt_assert_diag(&t, "t.yaml:9:", "spec.tasks[0].dependsOn.name[0]", "itself");
    mt_assert_diag(&t, "t.yaml:9:", "spec.tasks[0].dependsOn.name[1]", "\"nope\" is not a task",
                   "its tasks: a");
    mt_fini(&t);

    cr_assert_eq(mt_decode(&t, JOB_HEAD
                           "  tasks:\n" TASK("master", 1) "  - name: worker\n"
                                                          "    replicas: 2\n"
                                                          "    dependsOn:\n"
                                                          "      name: [mastr]\n" TEMPLATE),
                 CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:17:", "spec.tasks[1].dependsOn.name[0]", "did you mean `master`");
    mt_fini(&t);
}

Test(vcjob, depends_on_cycle)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t,
                           JOB_HEAD "  tasks:\n" TASK(
                               "root", 1) "  - name: a\n"
                                          "    replicas: 1\n"
                                          "    dependsOn: {name: [b]}\n" TEMPLATE "  - name: b\n"
                                          "    replicas: 1\n"
                                          "    dependsOn: {name: [a, root]}\n" TEMPLATE),
                 CORRAL_EINVAL);
    mt_assert_diag(&t, "spec.tasks[1].dependsOn", "task \"a\"", "cycle");
    mt_assert_diag(&t, "spec.tasks[2].dependsOn", "task \"b\"", "cycle");
    cr_assert_eq(t.diag.n, 2, "%s", mt_diags(&t));
    mt_fini(&t);
}

Test(vcjob, plugins_shape)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, JOB_HEAD "  plugins:\n"
                                        "    ssh: []\n"
                                        "    env:\n"
                                        "    mpi: --master=m\n"
                                        "  tasks:\n" TASK("w", 1)),
                 CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:9:", "spec.plugins.mpi", "expected a list");
    cr_assert_eq(t.diag.n, 1, "%s", mt_diags(&t));
    mt_fini(&t);

    cr_assert_eq(mt_decode(&t, JOB_HEAD "  plugins: [ssh]\n  tasks:\n" TASK("w", 1)),
                 CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:6:", "spec.plugins", "expected a mapping");
    mt_fini(&t);
}

Test(vcjob, network_topology_shared_rules)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, JOB_HEAD "  networkTopology: {mode: hard}\n  tasks:\n" TASK("w", 1)),
                 CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:6:", "spec.networkTopology.highestTierAllowed", "required");
    mt_fini(&t);
}

Test(vcjob, status_phase)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, JOB_HEAD "  tasks:\n" TASK("w", 1) "status:\n"
                                                                  "  state: {phase: Complted}\n"),
                 CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:15:", "status.state.phase", "did you mean `Completed`");
    mt_fini(&t);
}
