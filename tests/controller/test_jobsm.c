/*
 * The Volcano Job state machine without a server: a job and its pods in,
 * the plan out (pods to create and delete, the phase, the status), for the
 * default behaviour and each policy action, plus the pod stamping shared
 * with the simulator and the toleration rule of node lifecycle.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "controller/controller_int.h"
#include "corral/yaml.h"

static corral_arena_t A;

static void setup(void)
{
    corral_arena_init(&A);
}

static void teardown(void)
{
    corral_arena_fini(&A);
}

TestSuite(jobsm, .init = setup, .fini = teardown);

static corral_obj_t *decode(corral_val_t *root)
{
    corral_diag_t d;
    corral_diag_init(&d);
    corral_obj_default(
        &A,
        corral_kind_find(corral_val_get_str(root, "apiVersion"), corral_val_get_str(root, "kind")),
        root);
    corral_obj_t *o = NULL;
    int rc = corral_obj_decode(&A, root, "t.yaml", &d, &o);
    cr_assert_eq(rc, 0, "decode failed");
    corral_diag_fini(&d);
    return o;
}

static corral_obj_t *job_yaml(const char *yaml)
{
    corral_diag_t d;
    corral_diag_init(&d);
    corral_doc_t *docs;
    size_t n;
    cr_assert_eq(corral_yaml_parse(&A, yaml, strlen(yaml), "t.yaml", NULL, &d, &docs, &n), 0);
    corral_diag_fini(&d);
    return decode(docs[0].root);
}

#define JOB_HEAD                                                                                   \
    "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\n"                                           \
    "metadata: {name: train, namespace: ml, uid: job-uid-1}\n"

#define TASKS                                                                                      \
    "  tasks:\n"                                                                                   \
    "  - name: worker\n    replicas: 2\n"                                                          \
    "    template:\n      spec:\n        restartPolicy: Never\n"                                   \
    "        containers: [{name: c, image: x, command: [sleep, '1'],\n"                            \
    "                      resources: {requests: {nvidia.com/gpu: 4, cpu: 500m}}}]\n"

/* Set status fields on a job (a copy), as the server would have them. */
static corral_obj_t *with_status(const corral_obj_t *job, const char *phase, int version, int retry)
{
    corral_val_t *raw = corral_val_copy(&A, job->raw);
    corral_val_t *st = corral_val_ensure_map(&A, raw, "status");
    corral_val_set(&A, corral_val_ensure_map(&A, st, "state"), "phase",
                   corral_val_new_str(&A, phase));
    corral_val_set(&A, st, "version", corral_val_new_int(&A, version));
    corral_val_set(&A, st, "retryCount", corral_val_new_int(&A, retry));
    return decode(raw);
}

static corral_obj_t *pod(const corral_obj_t *job, int index, const char *phase, int version)
{
    corral_val_t *v = corral_vcjob_pod_val(&A, job, 0, index, version);
    corral_val_set(&A, corral_val_get(v, "metadata"), "uid",
                   corral_val_new_str(&A, corral_arena_printf(&A, "pod-%d", index)));
    if (phase)
        corral_val_set(&A, corral_val_ensure_map(&A, v, "status"), "phase",
                       corral_val_new_str(&A, phase));
    return decode(v);
}

static corral__job_plan_t decide(const corral_obj_t *job, const corral_obj_t **pods, size_t n,
                                 const corral__job_ev_t *evs, size_t nevs)
{
    corral__job_plan_t p;
    corral__job_decide(&A, job, pods, NULL, n, evs, nevs, 1000000, &p);
    return p;
}

Test(jobsm, new_job_creates_podgroup_and_pods)
{
    corral_obj_t *job = job_yaml(JOB_HEAD "spec:\n" TASKS);
    corral__job_plan_t p = decide(job, NULL, 0, NULL, 0);
    cr_assert_str_eq(p.action, "SyncJob");
    cr_assert(p.ensure_pg);
    cr_assert_eq(p.ncreate, 2);
    cr_assert_str_eq(p.phase, "Pending");
    cr_assert(p.phase_changed);
    cr_assert_eq(p.pending, 2);
    cr_assert_eq(p.min_available, 2);
}

Test(jobsm, pod_stamping_matches_volcano)
{
    corral_obj_t *job = job_yaml(JOB_HEAD "spec:\n  queue: research\n" TASKS);
    corral_obj_t *o = pod(job, 1, NULL, 3);
    cr_assert_str_eq(o->meta.name, "train-worker-1");
    cr_assert_str_eq(o->meta.namespace, "ml");
    const corral_strmap_t *l = &o->meta.labels, *an = &o->meta.annotations;
    cr_assert_str_eq(corral_strmap_get(l, "volcano.sh/job-name"), "train");
    cr_assert_str_eq(corral_strmap_get(l, "volcano.sh/task-spec"), "worker");
    cr_assert_str_eq(corral_strmap_get(l, "volcano.sh/job-namespace"), "ml");
    cr_assert_str_eq(corral_strmap_get(l, "volcano.sh/queue-name"), "research");
    cr_assert_str_eq(corral_strmap_get(an, "scheduling.k8s.io/group-name"), "train");
    cr_assert_str_eq(corral_strmap_get(an, "volcano.sh/job-version"), "3");
    cr_assert_str_eq(corral_strmap_get(an, "volcano.sh/template-uid"), "train-worker");
    cr_assert_eq(o->meta.nowners, 1);
    cr_assert_str_eq(o->meta.owners[0].uid, "job-uid-1");
    cr_assert_str_eq(o->meta.owners[0].kind, "Job");
    cr_assert(o->meta.owners[0].controller && o->meta.owners[0].block_owner_deletion);
    cr_assert_str_eq(o->u.pod->spec.scheduler_name, "volcano");
    /* the simulator's expansion stamps the same names, labels and annotations */
    corral_obj_t *pg, **pods;
    size_t n;
    corral_vcjob_expand(&A, job, &pg, &pods, &n);
    cr_assert_eq(n, 2);
    cr_assert_str_eq(pods[1]->meta.name, "train-worker-1");
    cr_assert_str_eq(corral_strmap_get(&pods[1]->meta.labels, "volcano.sh/queue-name"), "research");
    cr_assert_str_eq(pg->meta.name, "train");
    corral_obj_t *pgo = decode(corral_vcjob_podgroup_val(&A, job));
    cr_assert_eq(pgo->u.pg->min_member, 2);
    cr_assert_str_eq(pgo->u.pg->queue, "research");
    int64_t gpus = 0;
    corral_qty_value(corral_reslist_get(&pgo->u.pg->min_resources, "nvidia.com/gpu"), &gpus);
    cr_assert_eq(gpus, 8);
}

Test(jobsm, pending_to_running_to_completed)
{
    corral_obj_t *job = with_status(job_yaml(JOB_HEAD "spec:\n" TASKS), "Pending", 0, 0);
    const corral_obj_t *pods[2] = {pod(job, 0, "Running", 0), pod(job, 1, "Running", 0)};
    corral__job_plan_t p = decide(job, pods, 2, NULL, 0);
    cr_assert_str_eq(p.phase, "Running");
    cr_assert_eq(p.ncreate, 0);
    cr_assert_eq(p.running, 2);
    job = with_status(job, "Running", 0, 0);
    pods[0] = pod(job, 0, "Succeeded", 0);
    pods[1] = pod(job, 1, "Succeeded", 0);
    p = decide(job, pods, 2, NULL, 0);
    cr_assert_str_eq(p.phase, "Completed");
    cr_assert_eq(p.succeeded, 2);
}

Test(jobsm, failed_pod_without_policy_fails_the_job_when_all_finished)
{
    corral_obj_t *job = with_status(job_yaml(JOB_HEAD "spec:\n" TASKS), "Running", 0, 0);
    const corral_obj_t *pods[2] = {pod(job, 0, "Failed", 0), pod(job, 1, "Running", 0)};
    corral__job_ev_t ev = {.event = "PodFailed", .task = "worker", .pod = "train-worker-0"};
    corral__job_plan_t p = decide(job, pods, 2, &ev, 1);
    cr_assert_str_eq(p.action, "SyncJob");
    cr_assert_str_eq(p.phase, "Running");
    cr_assert_eq(p.ndel, 0, "a failed pod is not deleted without a policy");
    pods[1] = pod(job, 1, "Succeeded", 0);
    p = decide(job, pods, 2, NULL, 0);
    cr_assert_str_eq(p.phase, "Failed", "1 of minAvailable 2 succeeded");
}

Test(jobsm, restart_job_on_pod_failed)
{
    corral_obj_t *job = with_status(
        job_yaml(JOB_HEAD "spec:\n  policies: [{event: PodFailed, action: RestartJob}]\n" TASKS),
        "Running", 0, 0);
    const corral_obj_t *pods[2] = {pod(job, 0, "Failed", 0), pod(job, 1, "Running", 0)};
    corral__job_ev_t ev = {.event = "PodFailed", .task = "worker", .pod = "train-worker-0"};
    corral__job_plan_t p = decide(job, pods, 2, &ev, 1);
    cr_assert_str_eq(p.action, "RestartJob");
    cr_assert_str_eq(p.phase, "Restarting");
    cr_assert_eq(p.ndel, 2, "every pod is killed, failed ones too");
    cr_assert_eq(p.retry_count, 1);
    cr_assert_eq(p.version, 1);
    cr_assert(p.delete_pg);
    cr_assert_str_eq(p.reason, "PodFailed");
    /* Restarting: once the old pods are gone, Pending, then SyncJob recreates them */
    job = with_status(job, "Restarting", 1, 1);
    p = decide(job, NULL, 0, NULL, 0);
    cr_assert_str_eq(p.phase, "Pending");
    job = with_status(job, "Pending", 1, 1);
    p = decide(job, NULL, 0, NULL, 0);
    cr_assert_eq(p.ncreate, 2);
    cr_assert_eq(p.retry_count, 1);
}

Test(jobsm, events_of_killed_versions_are_ignored)
{
    corral_obj_t *job = with_status(
        job_yaml(JOB_HEAD "spec:\n  policies: [{event: PodEvicted, action: RestartJob}]\n" TASKS),
        "Pending", 1, 1);
    corral__job_ev_t ev = {
        .event = "PodEvicted", .task = "worker", .pod = "train-worker-0", .version = 0};
    corral__job_plan_t p = decide(job, NULL, 0, &ev, 1);
    cr_assert_str_eq(p.action, "SyncJob");
    ev.version = 1;
    p = decide(job, NULL, 0, &ev, 1);
    cr_assert_str_eq(p.action, "RestartJob");
}

Test(jobsm, max_retry_fails_the_job)
{
    corral_obj_t *job = with_status(
        job_yaml(JOB_HEAD
                 "spec:\n  maxRetry: 2\n  policies: [{event: '*', action: RestartJob}]\n" TASKS),
        "Restarting", 2, 2);
    corral__job_plan_t p = decide(job, NULL, 0, NULL, 0);
    cr_assert_str_eq(p.phase, "Failed");
}

Test(jobsm, task_policy_wins_over_job_policy)
{
    corral_obj_t *job =
        with_status(job_yaml(JOB_HEAD "spec:\n  policies: [{event: PodFailed, action: AbortJob}]\n"
                                      "  tasks:\n  - name: worker\n    replicas: 2\n"
                                      "    policies: [{event: PodFailed, action: CompleteJob}]\n"
                                      "    template:\n      spec:\n"
                                      "        containers: [{name: c, image: x}]\n"),
                    "Running", 0, 0);
    const corral_obj_t *pods[2] = {pod(job, 0, "Failed", 0), pod(job, 1, "Running", 0)};
    corral__job_ev_t ev = {.event = "PodFailed", .task = "worker", .pod = "train-worker-0"};
    corral__job_plan_t p = decide(job, pods, 2, &ev, 1);
    cr_assert_str_eq(p.action, "CompleteJob");
    cr_assert_str_eq(p.phase, "Completing");
    cr_assert_eq(p.ndel, 1, "the running pod goes, the failed one stays");
    job = with_status(job, "Completing", 1, 0);
    const corral_obj_t *left[1] = {pods[0]};
    p = decide(job, left, 1, NULL, 0);
    cr_assert_str_eq(p.phase, "Completed");
}

Test(jobsm, abort_and_terminate)
{
    corral_obj_t *job =
        with_status(job_yaml(JOB_HEAD "spec:\n  policies: [{event: PodEvicted, action: AbortJob},"
                                      " {event: Unknown, action: TerminateJob}]\n" TASKS),
                    "Running", 0, 0);
    const corral_obj_t *pods[2] = {pod(job, 0, "Running", 0), pod(job, 1, "Running", 0)};
    corral__job_ev_t ev = {.event = "PodEvicted", .task = "worker", .pod = "train-worker-0"};
    corral__job_plan_t p = decide(job, pods, 1, &ev, 1);
    cr_assert_str_eq(p.phase, "Aborting");
    p = decide(with_status(job, "Aborting", 1, 0), NULL, 0, NULL, 0);
    cr_assert_str_eq(p.phase, "Aborted");
    corral__job_ev_t un = {.event = "Unknown", .version = -1};
    p = decide(job, pods, 2, &un, 1);
    cr_assert_str_eq(p.phase, "Terminating");
}

Test(jobsm, task_completed_only_when_the_whole_task_succeeded)
{
    corral_obj_t *job = with_status(
        job_yaml(JOB_HEAD
                 "spec:\n  policies: [{event: TaskCompleted, action: CompleteJob}]\n" TASKS),
        "Running", 0, 0);
    const corral_obj_t *pods[2] = {pod(job, 0, "Succeeded", 0), pod(job, 1, "Running", 0)};
    corral__job_ev_t ev = {.event = "PodSucceeded", .task = "worker", .pod = "train-worker-0"};
    corral__job_plan_t p = decide(job, pods, 2, &ev, 1);
    cr_assert_str_eq(p.action, "SyncJob");
    pods[1] = pod(job, 1, "Succeeded", 0);
    p = decide(job, pods, 2, &ev, 1);
    cr_assert_str_eq(p.action, "CompleteJob");
}

Test(jobsm, restart_task_keeps_the_phase)
{
    corral_obj_t *job = with_status(
        job_yaml(JOB_HEAD "spec:\n  policies: [{event: PodFailed, action: RestartTask}]\n" TASKS),
        "Running", 0, 0);
    const corral_obj_t *pods[2] = {pod(job, 0, "Failed", 0), pod(job, 1, "Running", 0)};
    corral__job_ev_t ev = {.event = "PodFailed", .task = "worker", .pod = "train-worker-0"};
    corral__job_plan_t p = decide(job, pods, 2, &ev, 1);
    cr_assert_str_eq(p.phase, "Running");
    cr_assert_eq(p.ndel, 2);
    cr_assert_eq(p.retry_count, 1);
    cr_assert(!p.delete_pg);
}

Test(jobsm, ttl_after_finished)
{
    corral_obj_t *job = with_status(
        job_yaml(JOB_HEAD "spec:\n  ttlSecondsAfterFinished: 5\n" TASKS), "Running", 0, 0);
    const corral_obj_t *pods[2] = {pod(job, 0, "Succeeded", 0), pod(job, 1, "Succeeded", 0)};
    corral__job_plan_t p;
    corral__job_decide(&A, job, pods, NULL, 2, NULL, 0, 10000000, &p);
    cr_assert_str_eq(p.phase, "Completed");
    cr_assert_eq(p.ttl_at_us, 15000000);
    cr_assert(!p.delete_job);
    corral_val_t *raw = corral_val_copy(&A, job->raw);
    corral_val_set(&A, raw, "status", p.status);
    job = decode(raw);
    corral__job_decide(&A, job, pods, NULL, 2, NULL, 0, 15000000, &p);
    cr_assert(p.delete_job);
}

Test(jobsm, scale_down_deletes_extra_pods)
{
    corral_obj_t *job = with_status(job_yaml(JOB_HEAD "spec:\n" TASKS), "Running", 0, 0);
    corral_val_t *v = corral_vcjob_pod_val(&A, job, 0, 5, 0);
    const corral_obj_t *pods[3] = {pod(job, 0, "Running", 0), pod(job, 1, "Running", 0), decode(v)};
    corral__job_plan_t p = decide(job, pods, 3, NULL, 0);
    cr_assert_eq(p.ndel, 1);
    cr_assert_str_eq(p.del[0]->meta.name, "train-worker-5");
}

Test(jobsm, toleration_seconds)
{
    corral_obj_t *p = job_yaml("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
                               "  containers: [{name: c, image: x}]\n");
    cr_assert_eq(corral__toleration_seconds(&p->u.pod->spec, 300), 300);
    p = job_yaml("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
                 "  containers: [{name: c, image: x}]\n  tolerations:\n"
                 "  - {key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute,"
                 " tolerationSeconds: 1}\n");
    cr_assert_eq(corral__toleration_seconds(&p->u.pod->spec, 300), 1);
    p = job_yaml("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
                 "  containers: [{name: c, image: x}]\n  tolerations: [{operator: Exists}]\n");
    cr_assert_eq(corral__toleration_seconds(&p->u.pod->spec, 300), -1, "tolerates forever");
    p = job_yaml("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
                 "  containers: [{name: c, image: x}]\n  tolerations:\n"
                 "  - {key: nvidia.com/gpu, operator: Exists}\n");
    cr_assert_eq(corral__toleration_seconds(&p->u.pod->spec, 300), 300);
}
