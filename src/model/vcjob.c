/*
 * Volcano Job (batch.volcano.sh/v1alpha1): tasks with replicas and a pod
 * template, lifecycle policies, plugins and the gang size. Defaults follow
 * Volcano's mutating webhook (schedulerName "volcano", queue "default",
 * maxRetry 3, minAvailable the sum of each task's minAvailable or replicas)
 * and checks follow its validating webhook, with positions and field paths.
 *
 * Corral expands a Job J into PodGroup J and pods J-<task>-<index>, so the
 * task names and the longest pod name must be valid names too.
 */
#include <stdio.h>
#include <string.h>

#include "corral/hint.h"
#include "model/model_int.h"

#define DEFAULT_MAX_RETRY 3

/* --- lifecycle policies ------------------------------------------------------------- */

static const char *const job_events[] = {
    "*",          "PodPending",    "PodRunning", "PodFailed",     "PodEvicted",
    "Unknown",    "TaskCompleted", "OutOfSync",  "CommandIssued", "JobUpdated",
    "TaskFailed",
};

static const char *const job_actions[] = {
    "AbortJob",     "RestartJob",  "RestartTask", "RestartPod", "RestartPartition",
    "TerminateJob", "CompleteJob", "ResumeJob",   "SyncJob",    "EnqueueJob",
    "SyncQueue",    "OpenQueue",   "CloseQueue",
};

static void dec_event(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral__dec_enum(d, v, out, job_events, CORRAL_ARRAY_LEN(job_events));
}

static void dec_event_item(corral__dec_t *d, const corral_val_t *v, void *out)
{
    const char **s = out;
    dec_event(d, v, s);
    if (!*s)
        *s = ""; /* invalid: reported, ignored by the checks below */
}

static void dec_events(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_strlist_t *l = out;
    corral__dec_seq(d, v, sizeof(const char *), dec_event_item, (void **)&l->items, &l->n);
}

static void dec_action(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral__dec_enum(d, v, out, job_actions, CORRAL_ARRAY_LEN(job_actions));
}

static const corral__field_t policy_fields[] = {
    CORRAL__F("event", dec_event, corral_job_policy_t, event),
    CORRAL__F("events", dec_events, corral_job_policy_t, events),
    CORRAL__F("action", dec_action, corral_job_policy_t, action),
    CORRAL__F("exitCode", corral__dec_opt_i32, corral_job_policy_t, exit_code),
    CORRAL__F("timeout", corral__dec_duration, corral_job_policy_t, timeout_ns),
};

static bool given(const corral_val_t *map, const char *key)
{
    const corral_val_t *v = corral_val_get(map, key);
    return v && v->kind != CORRAL_VAL_NULL;
}

static void dec_policy(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_job_policy_t *p = out;
    if (!CORRAL__DEC_MAP(d, v, policy_fields, p) || !v || v->kind != CORRAL_VAL_MAP)
        return;
    bool has_event = given(v, "event") || (p->events.n > 0);
    bool has_code = given(v, "exitCode");
    if (has_event && has_code)
        corral__dec_err_field(d, corral_val_get(v, "exitCode"), "exitCode",
                              "must not be set together with event or events: a policy reacts "
                              "either to events or to a container exit code; split it in two");
    else if (!has_event && !has_code)
        corral__dec_err(d, v,
                        "a policy needs `event`, `events` or `exitCode` to say when its action "
                        "applies");
    if (p->exit_code.set && p->exit_code.v == 0)
        corral__dec_err_field(d, corral_val_get(v, "exitCode"), "exitCode",
                              "0 is not a valid exit code for a policy (it means success)");
    if (!given(v, "action"))
        corral__dec_err_field(d, v, "action",
                              "required: what to do when the policy matches, e.g. RestartJob, "
                              "AbortJob, CompleteJob or TerminateJob");
    if (p->timeout_ns < 0)
        corral__dec_err_field(d, corral_val_get(v, "timeout"), "timeout", "must not be negative");
}

static bool policy_has_event(const corral_job_policy_t *p, const char *e)
{
    if (p->event && strcmp(p->event, e) == 0)
        return true;
    for (size_t i = 0; i < p->events.n; i++) {
        if (strcmp(p->events.items[i], e) == 0)
            return true;
    }
    return false;
}

/* One event of policy i: already handled by an earlier policy? Is it "*"
 * while other policies name events? */
static void check_policy_event(corral__dec_t *d, const corral_val_t *at,
                               const corral_job_policy_t *ps, size_t i, const char *e, size_t n)
{
    if (!*e)
        return;
    for (size_t j = 0; j < i; j++) {
        if (policy_has_event(&ps[j], e)) {
            corral__dec_err(d, at, "duplicate event %s: policy [%zu] already handles it", e, j);
            return;
        }
    }
    if (strcmp(e, "*") != 0)
        return;
    for (size_t j = 0; j < n; j++) {
        bool other = ps[j].event && *ps[j].event && strcmp(ps[j].event, "*") != 0;
        for (size_t k = 0; k < ps[j].events.n && !other; k++)
            other = *ps[j].events.items[k] && strcmp(ps[j].events.items[k], "*") != 0;
        if (other) {
            corral__dec_err(d, at,
                            "event * (any event) must be the only event of the policies, but "
                            "policy [%zu] names another",
                            j);
            return;
        }
    }
}

/* Checks across the policies of one list (the path is at the list). */
static void check_policies(corral__dec_t *d, const corral_val_t *v, const corral_job_policy_t *ps,
                           size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const corral_val_t *pv = v->items[i];
        size_t m = corral__dec_enter_index(d, i);
        if (ps[i].event)
            check_policy_event(d, corral_val_get(pv, "event"), ps, i, ps[i].event, n);
        const corral_val_t *ev = corral_val_get(pv, "events");
        for (size_t k = 0; k < ps[i].events.n; k++)
            check_policy_event(d, ev->kind == CORRAL_VAL_SEQ && k < ev->n ? ev->items[k] : ev, ps,
                               i, ps[i].events.items[k], n);
        for (size_t j = 0; j < i && ps[i].exit_code.set; j++) {
            if (ps[j].exit_code.set && ps[j].exit_code.v == ps[i].exit_code.v) {
                corral__dec_err_field(d, corral_val_get(pv, "exitCode"), "exitCode",
                                      "duplicate exit code %d: policy [%zu] already handles it",
                                      ps[i].exit_code.v, j);
                break;
            }
        }
        corral__dec_leave(d, m);
    }
}

static void dec_policy_list(corral__dec_t *d, const corral_val_t *v, corral_job_policy_t **items,
                            size_t *n)
{
    corral__dec_seq(d, v, sizeof(corral_job_policy_t), dec_policy, (void **)items, n);
    if (*n)
        check_policies(d, v, *items, *n);
}

static void dec_job_policies(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_vcjob_t *j = out;
    dec_policy_list(d, v, &j->policies, &j->npolicies);
}

static void dec_task_policies(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_job_task_t *t = out;
    dec_policy_list(d, v, &t->policies, &t->npolicies);
}

/* --- tasks ------------------------------------------------------------------------- */

typedef struct depends_on {
    corral_strlist_t name;
    const char *iteration;
} depends_on_t;

static void dec_iteration(corral__dec_t *d, const corral_val_t *v, void *out)
{
    static const char *const it[] = {"any", "all"};
    corral__dec_enum(d, v, out, it, CORRAL_ARRAY_LEN(it));
}

static const corral__field_t depends_fields[] = {
    CORRAL__F("name", corral__dec_strlist, depends_on_t, name),
    CORRAL__F("iteration", dec_iteration, depends_on_t, iteration),
};

static void dec_depends_on(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_job_task_t *t = out;
    depends_on_t dep;
    memset(&dep, 0, sizeof(dep));
    CORRAL__DEC_MAP(d, v, depends_fields, &dep);
    t->depends_on = dep.name;
}

static const corral__field_t task_fields[] = {
    CORRAL__F("name", corral__dec_str, corral_job_task_t, name),
    CORRAL__F("replicas", corral__dec_int32, corral_job_task_t, replicas),
    CORRAL__F("minAvailable", corral__dec_opt_i32, corral_job_task_t, min_available),
    CORRAL__F("maxRetry", corral__dec_int32, corral_job_task_t, max_retry),
    CORRAL__F("template", corral__dec_pod_template, corral_job_task_t, tmpl),
    CORRAL__WHOLE("policies", dec_task_policies),
    CORRAL__KEEP("topologyPolicy"),
    CORRAL__WHOLE("dependsOn", dec_depends_on),
    CORRAL__KEEP("partitionPolicy"),
    CORRAL__KEEP("reservationNodeNames"),
};

/* Checks that need only the task itself (the path is at the task). */
static void check_task(corral__dec_t *d, const corral_val_t *v, corral_job_task_t *t)
{
    if (!t->name || !*t->name) {
        corral__dec_err_field(d, v, "name",
                              "required: each task needs a name (its pods are named "
                              "<job>-<task>-<index>)");
    } else {
        const char *err = corral__dns1123_label_error(t->name);
        if (err)
            corral__dec_err_field(d, corral_val_get(v, "name"), "name",
                                  "invalid task name \"%s\": %s", t->name, err);
    }
    const corral_val_t *rv = corral_val_get(v, "replicas");
    if (!rv || rv->kind == CORRAL_VAL_NULL)
        corral__dec_err_field(d, v, "replicas",
                              "required: how many pods this task runs, e.g. `replicas: 1`");
    else if (t->replicas < 0)
        corral__dec_err_field(d, rv, "replicas", "must be greater than or equal to 0, got %d",
                              t->replicas);
    const corral_val_t *mv = corral_val_get(v, "minAvailable");
    if (t->min_available.set && t->min_available.v < 0)
        corral__dec_err_field(d, mv, "minAvailable", "must be greater than or equal to 0, got %d",
                              t->min_available.v);
    else if (t->min_available.set && t->replicas >= 0 && t->min_available.v > t->replicas)
        corral__dec_err_field(d, mv, "minAvailable",
                              "is %d, more than the task's replicas (%d); a task cannot need "
                              "more pods than it runs",
                              t->min_available.v, t->replicas);
    if (t->max_retry < 0)
        corral__dec_err_field(d, corral_val_get(v, "maxRetry"), "maxRetry",
                              "must be greater than or equal to 0, got %d", t->max_retry);
    else if (t->max_retry == 0)
        t->max_retry = DEFAULT_MAX_RETRY; /* as Volcano's webhook: 0 means unset */
    if (!given(v, "template"))
        corral__dec_err_field(d, v, "template",
                              "required: the pod template (metadata and spec with containers) "
                              "each replica is created from");
}

static void dec_task(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_job_task_t *t = out;
    if (!CORRAL__DEC_MAP(d, v, task_fields, t) || !v || v->kind != CORRAL_VAL_MAP)
        return;
    check_task(d, v, t);
}

static void dec_tasks(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_vcjob_t *j = out;
    corral__dec_seq(d, v, sizeof(corral_job_task_t), dec_task, (void **)&j->tasks, &j->ntasks);
}

/* --- plugins: {name: [args...]}, kept as written ------------------------------------- */

static void dec_plugins(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral__dec_raw(d, v, out);
    if (!v || v->kind == CORRAL_VAL_NULL || !corral__dec_expect(d, v, CORRAL_VAL_MAP))
        return;
    for (size_t i = 0; i < v->n; i++) {
        corral_strlist_t args;
        size_t m = corral__dec_enter(d, v->pairs[i].key->s);
        corral__dec_strlist(d, v->pairs[i].val, &args); /* a list of strings, or null */
        corral__dec_leave(d, m);
    }
}

/* --- spec, status and the kind --------------------------------------------------------- */

static const corral__field_t job_spec_fields[] = {
    CORRAL__F("schedulerName", corral__dec_str, corral_vcjob_t, scheduler_name),
    CORRAL__F("minAvailable", corral__dec_int32, corral_vcjob_t, min_available),
    CORRAL__F("minSuccess", corral__dec_opt_i32, corral_vcjob_t, min_success),
    CORRAL__F("queue", corral__dec_str, corral_vcjob_t, queue),
    CORRAL__F("priorityClassName", corral__dec_str, corral_vcjob_t, priority_class_name),
    CORRAL__F("maxRetry", corral__dec_int32, corral_vcjob_t, max_retry),
    CORRAL__F("ttlSecondsAfterFinished", corral__dec_opt_i32, corral_vcjob_t,
              ttl_seconds_after_finished),
    CORRAL__WHOLE("tasks", dec_tasks),
    CORRAL__WHOLE("policies", dec_job_policies),
    CORRAL__F("plugins", dec_plugins, corral_vcjob_t, plugins),
    CORRAL__KEEP("volumes"),
    CORRAL__F("networkTopology", corral__dec_network_topology, corral_vcjob_t, topology),
    CORRAL__KEEP("runningEstimate"),
};

static void dec_job_phase(corral__dec_t *d, const corral_val_t *v, void *out)
{
    static const char *const phases[] = {"Pending",    "Aborting",   "Aborted",   "Running",
                                         "Restarting", "Completing", "Completed", "Terminating",
                                         "Terminated", "Failed"};
    corral__dec_enum(d, v, out, phases, CORRAL_ARRAY_LEN(phases));
}

static const corral__field_t job_state_fields[] = {
    CORRAL__F("phase", dec_job_phase, corral_vcjob_t, phase),
    CORRAL__KEEP("reason"),
    CORRAL__KEEP("message"),
    CORRAL__KEEP("lastTransitionTime"),
};

static void dec_job_state(corral__dec_t *d, const corral_val_t *v, void *out)
{
    CORRAL__DEC_MAP(d, v, job_state_fields, out);
}

static const corral__field_t job_status_fields[] = {
    CORRAL__WHOLE("state", dec_job_state),
    CORRAL__KEEP("minAvailable"),
    CORRAL__KEEP("taskStatusCount"),
    CORRAL__KEEP("pending"),
    CORRAL__KEEP("running"),
    CORRAL__KEEP("succeeded"),
    CORRAL__KEEP("failed"),
    CORRAL__KEEP("terminating"),
    CORRAL__KEEP("unknown"),
    CORRAL__KEEP("version"),
    CORRAL__KEEP("retryCount"),
    CORRAL__KEEP("runningDuration"),
    CORRAL__KEEP("controlledResources"),
    CORRAL__KEEP("conditions"),
};

static void dec_job_spec(corral__dec_t *d, const corral_val_t *v, void *out)
{
    CORRAL__DEC_MAP(d, v, job_spec_fields, out);
}

static void dec_job_status(corral__dec_t *d, const corral_val_t *v, void *out)
{
    CORRAL__DEC_MAP(d, v, job_status_fields, out);
}

static const corral__field_t job_fields[] = {
    CORRAL__TOP_FIELDS,
    CORRAL__WHOLE("spec", dec_job_spec),
    CORRAL__WHOLE("status", dec_job_status),
};

/* The longest pod name of task t, "<job>-<task>-<replicas-1>", must be a
 * valid pod name (a DNS-1123 subdomain of at most 253 characters). */
static void check_pod_name(corral__dec_t *d, const corral_val_t *tv, const char *job,
                           const corral_job_task_t *t)
{
    if (!job || !t->name || t->replicas < 1 || corral__dns1123_label_error(t->name) ||
        corral__dns1123_subdomain_error(job))
        return; /* nothing to name, or the parts are already reported */
    char name[512];
    int len = snprintf(name, sizeof(name), "%s-%s-%d", job, t->name, t->replicas - 1);
    const char *err = len > 0 && (size_t)len < sizeof(name) ? corral__dns1123_subdomain_error(name)
                                                            : "must be no more than 253 characters";
    if (err)
        corral__dec_err_field(d, corral_val_get(tv, "name"), "name",
                              "the pods of this task would be named up to \"%s\" (%d "
                              "characters), which is not a valid pod name: %s; shorten the job "
                              "or task name",
                              name, len, err);
}

/* Names unique within the job, valid pod names; returns the total replicas. */
static int64_t check_task_names(corral__dec_t *d, const corral_val_t *tasks_v,
                                const corral_vcjob_t *j, const char *job)
{
    int64_t total = 0;
    for (size_t i = 0; i < j->ntasks; i++) {
        const corral_job_task_t *t = &j->tasks[i];
        const corral_val_t *tv = tasks_v->items[i];
        if (t->replicas > 0)
            total += t->replicas;
        size_t m = corral__dec_enter_index(d, i);
        for (size_t k = 0; k < i && t->name && *t->name; k++) {
            if (j->tasks[k].name && strcmp(j->tasks[k].name, t->name) == 0) {
                corral__dec_err_field(d, corral_val_get(tv, "name"), "name",
                                      "duplicate task name \"%s\" (also spec.tasks[%zu]); task "
                                      "names must be unique within a job",
                                      t->name, k);
                break;
            }
        }
        check_pod_name(d, tv, job, t);
        corral__dec_leave(d, m);
    }
    return total;
}

static int find_task(const corral_vcjob_t *j, const char *name)
{
    for (size_t i = 0; i < j->ntasks; i++) {
        if (j->tasks[i].name && strcmp(j->tasks[i].name, name) == 0)
            return (int)i;
    }
    return -1;
}

/* A dependsOn name that is no task of the job: suggest the closest one, or
 * list them. */
static void unknown_task(corral__dec_t *d, const corral_val_t *at, const corral_vcjob_t *j,
                         const char *name)
{
    const char **names = corral_arena_alloc(d->a, j->ntasks * sizeof(*names));
    char list[256] = "";
    size_t o = 0;
    for (size_t i = 0; i < j->ntasks; i++) {
        names[i] = j->tasks[i].name ? j->tasks[i].name : "";
        if (o < sizeof(list))
            o += (size_t)snprintf(list + o, sizeof(list) - o, "%s%s", i ? ", " : "", names[i]);
    }
    const char *best = corral_hint_closest(name, names, j->ntasks);
    if (best)
        corral__dec_err(d, at, "\"%s\" is not a task of this job; did you mean `%s`?", name, best);
    else
        corral__dec_err(d, at, "\"%s\" is not a task of this job (its tasks: %s)", name, list);
}

/* dependsOn names other tasks of the job, and the dependencies form a DAG. */
static void check_depends(corral__dec_t *d, const corral_val_t *tasks_v, const corral_vcjob_t *j)
{
    size_t n = j->ntasks;
    size_t *indeg = corral_arena_alloc(d->a, n * sizeof(size_t));
    bool any = false;
    for (size_t i = 0; i < n; i++) {
        const corral_strlist_t *dep = &j->tasks[i].depends_on;
        const corral_val_t *names_v = corral_val_dig(tasks_v->items[i], "dependsOn.name");
        size_t m = corral__dec_enter_index(d, i);
        size_t m2 = corral__dec_enter(d, "dependsOn.name");
        for (size_t k = 0; k < dep->n; k++) {
            const corral_val_t *at = names_v && names_v->kind == CORRAL_VAL_SEQ && k < names_v->n
                                         ? names_v->items[k]
                                         : names_v;
            int target = find_task(j, dep->items[k]);
            if (target < 0) {
                size_t m3 = corral__dec_enter_index(d, k);
                unknown_task(d, at, j, dep->items[k]);
                corral__dec_leave(d, m3);
            } else if ((size_t)target == i) {
                size_t m3 = corral__dec_enter_index(d, k);
                corral__dec_err(d, at, "a task cannot depend on itself");
                corral__dec_leave(d, m3);
            } else {
                indeg[i]++;
                any = true;
            }
        }
        corral__dec_leave(d, m2);
        corral__dec_leave(d, m);
    }
    if (!any)
        return;
    /* Kahn's algorithm: repeatedly remove tasks whose dependencies are all removed. */
    bool *done = corral_arena_alloc(d->a, n * sizeof(bool));
    for (bool progress = true; progress;) {
        progress = false;
        for (size_t i = 0; i < n; i++) {
            if (done[i] || indeg[i] != 0)
                continue;
            done[i] = progress = true;
            for (size_t k = 0; k < n; k++) {
                const corral_strlist_t *dep = &j->tasks[k].depends_on;
                for (size_t e = 0; e < dep->n; e++) {
                    if (!done[k] && find_task(j, dep->items[e]) == (int)i && k != i)
                        indeg[k]--;
                }
            }
        }
    }
    for (size_t i = 0; i < n; i++) {
        if (done[i])
            continue;
        size_t m = corral__dec_enter_index(d, i);
        corral__dec_err_field(d, corral_val_get(tasks_v->items[i], "dependsOn"), "dependsOn",
                              "task \"%s\" is part of a dependency cycle; dependsOn must form "
                              "a directed acyclic graph",
                              j->tasks[i].name ? j->tasks[i].name : "");
        corral__dec_leave(d, m);
    }
}

/* minAvailable, minSuccess, maxRetry and TTL against the tasks. */
static void check_counts(corral__dec_t *d, const corral_val_t *spec, corral_vcjob_t *j,
                         int64_t total)
{
    const corral_val_t *mv = corral_val_get(spec, "minAvailable");
    if (j->min_available < 0) {
        corral__dec_err_field(d, mv, "spec.minAvailable",
                              "must be greater than or equal to 0, got %d", j->min_available);
    } else if (j->min_available == 0) {
        /* Volcano's webhook: 0 or unset means the sum over the tasks. */
        int64_t sum = 0;
        for (size_t i = 0; i < j->ntasks; i++) {
            const corral_job_task_t *t = &j->tasks[i];
            sum += t->min_available.set ? t->min_available.v : t->replicas;
        }
        j->min_available = sum > INT32_MAX ? INT32_MAX : (int32_t)(sum < 0 ? 0 : sum);
    } else if (j->ntasks && j->min_available > total) {
        corral__dec_err_field(d, mv, "spec.minAvailable",
                              "is %d, more than the %lld replicas of all tasks together; the "
                              "job could never start",
                              j->min_available, (long long)total);
    }
    const corral_val_t *sv = corral_val_get(spec, "minSuccess");
    if (j->min_success.set && j->min_success.v < 1)
        corral__dec_err_field(d, sv, "spec.minSuccess", "must be at least 1, got %d",
                              j->min_success.v);
    else if (j->min_success.set && j->ntasks && j->min_success.v > total)
        corral__dec_err_field(d, sv, "spec.minSuccess",
                              "is %d, more than the %lld replicas of all tasks together; the "
                              "job could never succeed",
                              j->min_success.v, (long long)total);
    if (j->max_retry < 0)
        corral__dec_err_field(d, corral_val_get(spec, "maxRetry"), "spec.maxRetry",
                              "must be greater than or equal to 0, got %d", j->max_retry);
    else if (j->max_retry == 0)
        j->max_retry = DEFAULT_MAX_RETRY;
    if (j->ttl_seconds_after_finished.set && j->ttl_seconds_after_finished.v < 0)
        corral__dec_err_field(
            d, corral_val_get(spec, "ttlSecondsAfterFinished"), "spec.ttlSecondsAfterFinished",
            "must be greater than or equal to 0, got %d", j->ttl_seconds_after_finished.v);
}

void corral__kind_vcjob(corral__dec_t *d, const corral_val_t *root, corral_obj_t *o)
{
    corral_vcjob_t *j = corral_arena_alloc(d->a, sizeof(*j));
    o->u.job = j;
    CORRAL__DEC_MAP(d, root, job_fields, j);
    if (!j->scheduler_name || !*j->scheduler_name)
        j->scheduler_name = "volcano";
    if (!j->queue || !*j->queue)
        j->queue = "default";
    const corral_val_t *spec = corral_val_get(root, "spec");
    const corral_val_t *tasks_v = corral_val_get(spec, "tasks");
    int64_t total = 0;
    if (j->ntasks == 0) {
        if (!tasks_v || tasks_v->kind == CORRAL_VAL_NULL || tasks_v->kind == CORRAL_VAL_SEQ)
            corral__dec_err_field(d, tasks_v ? tasks_v : (spec ? spec : root), "spec.tasks",
                                  "required: a Job needs at least one task (name, replicas and "
                                  "a pod template)");
    } else {
        size_t m = corral__dec_enter(d, "spec.tasks");
        total = check_task_names(d, tasks_v, j, o->meta.name);
        check_depends(d, tasks_v, j);
        corral__dec_leave(d, m);
    }
    check_counts(d, spec, j, total);
    /* spec.schedulerName is the default of each template's schedulerName. */
    for (size_t i = 0; i < j->ntasks; i++) {
        if (!corral_val_dig(j->tasks[i].tmpl.raw, "spec.schedulerName"))
            j->tasks[i].tmpl.spec.scheduler_name = j->scheduler_name;
    }
}
