/*
 * The Volcano Job state machine as a pure function: a job, the pods it
 * controls and the events seen since the last reconcile in; a plan out
 * (pods to delete and create, the PodGroup to ensure or delete, the status
 * to write, whether the job's TTL has run out). It follows Volcano's job
 * controller (pkg/controllers/job/state): applyPolicies picks the action,
 * the state of the job's phase executes it with SyncJob (create missing
 * pods, count them) or KillJob (delete the pods whose phase is not
 * retained, bump status.version). Nothing here does I/O or reads a clock.
 */
#include <string.h>

#include "controller/controller_int.h"
#include "corral/timefmt.h"

static bool eq(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

bool corral__job_phase_finished(const char *p)
{
    return eq(p, "Completed") || eq(p, "Failed") || eq(p, "Terminated") || eq(p, "Aborted");
}

/* --- policies ------------------------------------------------------------------------------ */

static const char *match(const corral_job_policy_t *ps, size_t n, const corral__job_ev_t *ev)
{
    for (size_t i = 0; i < n; i++) {
        const corral_job_policy_t *p = &ps[i];
        bool hit = ev->event && (eq(p->event, ev->event) || eq(p->event, "*"));
        for (size_t k = 0; !hit && ev->event && k < p->events.n; k++)
            hit = eq(p->events.items[k], ev->event) || eq(p->events.items[k], "*");
        /* exitCode 0 is refused by validation, as upstream */
        if (!hit && p->exit_code.set && ev->has_exit && p->exit_code.v == ev->exit_code)
            hit = true;
        if (hit && p->action)
            return p->action;
    }
    return NULL;
}

const char *corral__job_policy_action(const corral_vcjob_t *j, const corral__job_ev_t *ev)
{
    const char *a = NULL;
    for (size_t t = 0; ev->task && t < j->ntasks; t++) {
        if (eq(j->tasks[t].name, ev->task)) {
            a = match(j->tasks[t].policies, j->tasks[t].npolicies, ev);
            break;
        }
    }
    if (!a)
        a = match(j->policies, j->npolicies, ev);
    return a ? a : "SyncJob";
}

/* --- counting ------------------------------------------------------------------------------ */

typedef struct sm {
    corral_arena_t *a;
    const corral_obj_t *job;
    const corral_vcjob_t *j;
    const corral_obj_t *const *pods;
    const bool *deleting;
    size_t npods;
    corral__job_plan_t *p;
    bool killed; /* KillJob deleted something: bump the version */
} sm_t;

static const char *pod_task(const corral_obj_t *pod)
{
    return corral_strmap_get(&pod->meta.annotations, CORRAL_VC_TASK_SPEC);
}

static corral__task_count_t *task_count(sm_t *s, const char *task)
{
    if (!task)
        return NULL;
    for (size_t i = 0; i < s->p->ntasks; i++) {
        if (eq(s->p->tasks[i].task, task))
            return &s->p->tasks[i];
    }
    return NULL;
}

/* Count a live pod by phase (job and task counts). */
static void count(sm_t *s, const corral_obj_t *pod)
{
    const char *ph = pod->u.pod->status.phase;
    corral__task_count_t *t = task_count(s, pod_task(pod));
    corral__job_plan_t *p = s->p;
    if (!ph || eq(ph, "Pending")) {
        p->pending++;
        if (t)
            t->pending++;
    } else if (eq(ph, "Running")) {
        p->running++;
        if (t)
            t->running++;
    } else if (eq(ph, "Succeeded")) {
        p->succeeded++;
        if (t)
            t->succeeded++;
    } else if (eq(ph, "Failed")) {
        p->failed++;
        if (t)
            t->failed++;
    } else {
        p->unknown++;
        if (t)
            t->unknown++;
    }
}

static bool terminating(sm_t *s, size_t i)
{
    return (s->deleting && s->deleting[i]) || s->pods[i]->meta.deletion_us != 0;
}

static void del(sm_t *s, const corral_obj_t *pod)
{
    corral__job_plan_t *p = s->p;
    size_t elem = sizeof(const corral_obj_t *);
    p->del = corral_arena_grow(s->a, p->del, p->ndel * elem, (p->ndel + 1) * elem);
    p->del[p->ndel++] = pod;
    p->terminating++;
}

static bool finished_pod(const corral_obj_t *pod)
{
    const char *ph = pod->u.pod->status.phase;
    return eq(ph, "Succeeded") || eq(ph, "Failed");
}

/* KillJob: delete every pod not retained (soft: keep finished ones; a
 * job on its last retry keeps them too, as upstream); only matching pods
 * when task or pod narrows it (RestartTask, RestartPod). */
static void kill(sm_t *s, bool soft, const char *task, const char *pod)
{
    int32_t max_retry = s->j->max_retry;
    if (s->p->retry_count >= max_retry - 1)
        soft = true;
    for (size_t i = 0; i < s->npods; i++) {
        const corral_obj_t *o = s->pods[i];
        if (terminating(s, i)) {
            s->p->terminating++;
            continue;
        }
        bool target = (!task || eq(pod_task(o), task)) && (!pod || eq(o->meta.name, pod));
        if (target && !(soft && finished_pod(o))) {
            del(s, o);
            s->killed = true;
            continue;
        }
        count(s, o);
    }
}

static const corral_obj_t *find_pod(sm_t *s, const char *name, size_t *at)
{
    for (size_t i = 0; i < s->npods; i++) {
        if (eq(s->pods[i]->meta.name, name)) {
            *at = i;
            return s->pods[i];
        }
    }
    return NULL;
}

/* SyncJob: create the missing pods, delete the ones no task wants, count. */
static void sync(sm_t *s)
{
    corral__job_plan_t *p = s->p;
    bool *wanted = corral_arena_alloc(s->a, s->npods + 1);
    p->ensure_pg = true;
    for (size_t t = 0; t < s->j->ntasks; t++) {
        const corral_job_task_t *task = &s->j->tasks[t];
        for (int32_t r = 0; r < task->replicas; r++) {
            const char *name = corral_vcjob_pod_name(s->a, s->job, task, r);
            size_t at = 0;
            if (!find_pod(s, name, &at)) {
                p->create = corral_arena_grow(s->a, p->create, p->ncreate * sizeof(*p->create),
                                              (p->ncreate + 1) * sizeof(*p->create));
                p->create[p->ncreate++] = (corral__job_create_t){t, r};
                p->pending++;
                corral__task_count_t *tc = task_count(s, task->name);
                if (tc)
                    tc->pending++;
                continue;
            }
            wanted[at] = true;
            if (terminating(s, at))
                p->terminating++;
            else
                count(s, s->pods[at]);
        }
    }
    for (size_t i = 0; i < s->npods; i++) {
        if (wanted[i])
            continue;
        if (terminating(s, i))
            p->terminating++;
        else
            del(s, s->pods[i]); /* scaled down, or a name no task makes */
    }
}

/* --- the states ---------------------------------------------------------------------------- */

static int32_t total_replicas(const corral_vcjob_t *j)
{
    int32_t n = 0;
    for (size_t i = 0; i < j->ntasks; i++)
        n += j->tasks[i].replicas;
    return n;
}

/* Running: done when every pod finished (or minSuccess pods succeeded). */
static const char *running_next(sm_t *s)
{
    const corral_vcjob_t *j = s->j;
    corral__job_plan_t *p = s->p;
    int32_t total = total_replicas(j);
    if (total == 0)
        return "Running";
    if (j->min_success.set && p->succeeded >= j->min_success.v)
        return "Completed";
    if (p->succeeded + p->failed != total)
        return "Running";
    int32_t task_min = 0;
    for (size_t i = 0; i < j->ntasks; i++)
        task_min += j->tasks[i].min_available.set ? j->tasks[i].min_available.v : 0;
    if (j->min_available >= task_min) {
        for (size_t i = 0; i < j->ntasks; i++) {
            const corral_job_task_t *t = &j->tasks[i];
            corral__task_count_t *tc = task_count(s, t->name);
            if (t->min_available.set && tc && tc->succeeded < t->min_available.v)
                return "Failed";
        }
    }
    if (j->min_success.set && p->succeeded < j->min_success.v)
        return "Failed";
    return p->succeeded >= j->min_available ? "Completed" : "Failed";
}

/* A pending or running job executing action (Volcano's pendingState and
 * runningState share their kill actions). */
static const char *active(sm_t *s, const char *phase, const char *action,
                          const corral__job_ev_t *ev)
{
    corral__job_plan_t *p = s->p;
    if (eq(action, "RestartJob")) {
        kill(s, false, NULL, NULL);
        p->retry_count++;
        return "Restarting";
    }
    if (eq(action, "AbortJob") || eq(action, "CompleteJob") || eq(action, "TerminateJob")) {
        kill(s, true, NULL, NULL);
        return eq(action, "AbortJob")      ? "Aborting"
               : eq(action, "CompleteJob") ? "Completing"
                                           : "Terminating";
    }
    if ((eq(action, "RestartTask") || eq(action, "RestartPod")) && ev) {
        if (p->retry_count >= s->j->max_retry) {
            kill(s, true, NULL, NULL);
            p->reason = "MaxRetryExceeded";
            return "Failed";
        }
        kill(s, false, ev->task, eq(action, "RestartPod") ? ev->pod : NULL);
        p->retry_count++;
        return phase;
    }
    p->action = "SyncJob";
    sync(s);
    if (eq(phase, "Running"))
        return running_next(s);
    return s->j->min_available <= p->running + p->succeeded + p->failed ? "Running" : "Pending";
}

static const char *execute(sm_t *s, const char *phase, const char *action,
                           const corral__job_ev_t *ev)
{
    corral__job_plan_t *p = s->p;
    if (!*phase || eq(phase, "Pending") || eq(phase, "Running"))
        return active(s, *phase ? phase : "Pending", action, ev);
    if (eq(phase, "Restarting")) {
        kill(s, false, NULL, NULL);
        if (p->retry_count >= s->j->max_retry) {
            p->reason = "MaxRetryExceeded";
            return "Failed";
        }
        return total_replicas(s->j) - p->terminating >= p->min_available ? "Pending" : "Restarting";
    }
    /* Aborting, Completing, Terminating: wait until nothing is alive. */
    kill(s, true, NULL, NULL);
    bool alive = p->terminating || p->pending || p->running;
    if (eq(phase, "Aborting"))
        return alive ? phase : "Aborted";
    if (eq(phase, "Completing"))
        return alive ? phase : "Completed";
    if (eq(phase, "Terminating"))
        return alive ? phase : "Terminated";
    return phase; /* finished: only keep the survivors down */
}

/* --- status -------------------------------------------------------------------------------- */

static int64_t int_at(const corral_val_t *m, const char *dotted, int64_t dflt)
{
    const corral_val_t *v = corral_val_dig(m, dotted);
    return v && v->kind == CORRAL_VAL_INT ? v->u.i : dflt;
}

static void put_int(corral_arena_t *a, corral_val_t *m, const char *k, int64_t v)
{
    corral_val_set(a, m, k, corral_val_new_int(a, v));
}

static void put_str(corral_arena_t *a, corral_val_t *m, const char *k, const char *v)
{
    if (v && *v)
        corral_val_set(a, m, k, corral_val_new_str(a, v));
}

static corral_val_t *task_counts_val(corral_arena_t *a, const corral__job_plan_t *p)
{
    corral_val_t *m = corral_val_new(a, CORRAL_VAL_MAP);
    for (size_t i = 0; i < p->ntasks; i++) {
        const corral__task_count_t *t = &p->tasks[i];
        corral_val_t *ph = corral_val_new(a, CORRAL_VAL_MAP);
        const char *names[] = {"Pending", "Running", "Succeeded", "Failed", "Unknown"};
        int32_t n[] = {t->pending, t->running, t->succeeded, t->failed, t->unknown};
        for (size_t k = 0; k < 5; k++) {
            if (n[k])
                put_int(a, ph, names[k], n[k]);
        }
        corral_val_t *ts = corral_val_new(a, CORRAL_VAL_MAP);
        corral_val_set(a, ts, "phase", ph);
        corral_val_set(a, m, t->task, ts);
    }
    return m;
}

enum { MAX_CONDITIONS = 16 }; /* a job restarting forever keeps a bounded history */

static corral_val_t *conditions_val(corral_arena_t *a, const corral_val_t *old,
                                    const corral__job_plan_t *p, const char *ts)
{
    corral_val_t *seq = corral_val_new(a, CORRAL_VAL_SEQ);
    size_t n = old && old->kind == CORRAL_VAL_SEQ ? old->n : 0;
    size_t keep = p->phase_changed && n >= MAX_CONDITIONS ? MAX_CONDITIONS - 1 : n;
    for (size_t i = n - (n < keep ? n : keep); i < n; i++)
        corral_val_push(a, seq, corral_val_copy(a, old->items[i]));
    if (p->phase_changed) {
        corral_val_t *c = corral_val_new(a, CORRAL_VAL_MAP);
        put_str(a, c, "status", p->phase);
        put_str(a, c, "lastTransitionTime", ts);
        corral_val_push(a, seq, c);
    }
    return seq;
}

static void build_status(corral_arena_t *a, const corral_obj_t *job, corral__job_plan_t *p)
{
    const corral_val_t *old = corral_val_get(job->raw, "status");
    corral_val_t *st = corral_val_new(a, CORRAL_VAL_MAP);
    corral_val_t *state = corral_val_new(a, CORRAL_VAL_MAP);
    char ts[40] = "";
    if (p->transition_us)
        corral_time_format(p->transition_us, false, ts, sizeof(ts));
    put_str(a, state, "phase", p->phase);
    put_str(a, state, "reason", p->reason);
    put_str(a, state, "message", p->message);
    put_str(a, state, "lastTransitionTime", ts);
    corral_val_set(a, st, "state", state);
    put_int(a, st, "minAvailable", p->min_available);
    put_int(a, st, "pending", p->pending);
    put_int(a, st, "running", p->running);
    put_int(a, st, "succeeded", p->succeeded);
    put_int(a, st, "failed", p->failed);
    put_int(a, st, "terminating", p->terminating);
    put_int(a, st, "unknown", p->unknown);
    put_int(a, st, "version", p->version);
    put_int(a, st, "retryCount", p->retry_count);
    corral_val_set(a, st, "taskStatusCount", task_counts_val(a, p));
    corral_val_set(a, st, "conditions",
                   conditions_val(a, corral_val_get(old, "conditions"), p, ts));
    p->status = st;
}

/* --- the decision -------------------------------------------------------------------------- */

/* The first event that maps to an action other than SyncJob. */
static const char *pick_action(sm_t *s, const corral__job_ev_t *evs, size_t nevs,
                               const corral__job_ev_t **which)
{
    for (size_t i = 0; i < nevs; i++) {
        corral__job_ev_t ev = evs[i];
        if (ev.version >= 0 && ev.version < s->p->version)
            continue; /* a pod of a version the job has killed */
        if (eq(ev.event, "PodSucceeded")) {
            corral__task_count_t *t = task_count(s, ev.task);
            const corral_job_task_t *task = NULL;
            for (size_t k = 0; k < s->j->ntasks; k++)
                task = eq(s->j->tasks[k].name, ev.task) ? &s->j->tasks[k] : task;
            if (!t || !task || t->succeeded < task->replicas)
                continue;
            ev.event = "TaskCompleted";
        }
        const char *a = corral__job_policy_action(s->j, &ev);
        if (!eq(a, "SyncJob")) {
            *which = &evs[i];
            if (eq(ev.event, "TaskCompleted"))
                s->p->reason = "TaskCompleted";
            return a;
        }
    }
    return "SyncJob";
}

/* Task succeeded counts of the pods as they are (for TaskCompleted). */
static void precount(sm_t *s)
{
    for (size_t i = 0; i < s->npods; i++) {
        corral__task_count_t *t = task_count(s, pod_task(s->pods[i]));
        if (t && !terminating(s, i) && eq(s->pods[i]->u.pod->status.phase, "Succeeded"))
            t->succeeded++;
    }
}

static void init_plan(sm_t *s, const corral_obj_t *job)
{
    corral__job_plan_t *p = s->p;
    const corral_val_t *st = corral_val_get(job->raw, "status");
    const char *phase = corral_val_get_str(corral_val_get(st, "state"), "phase");
    p->from_phase = phase ? phase : "";
    p->version = int_at(st, "version", 0);
    p->retry_count = (int32_t)int_at(st, "retryCount", 0);
    p->min_available = s->j->min_available;
    const char *lt = corral_val_get_str(corral_val_get(st, "state"), "lastTransitionTime");
    if (lt)
        corral_time_parse(lt, strlen(lt), &p->transition_us);
    p->ntasks = s->j->ntasks;
    p->tasks = corral_arena_alloc(s->a, (p->ntasks + 1) * sizeof(*p->tasks));
    for (size_t i = 0; i < p->ntasks; i++)
        p->tasks[i].task = s->j->tasks[i].name;
}

void corral__job_decide(corral_arena_t *a, const corral_obj_t *job, const corral_obj_t *const *pods,
                        const bool *deleting, size_t npods, const corral__job_ev_t *evs,
                        size_t nevs, int64_t now_us, corral__job_plan_t *out)
{
    memset(out, 0, sizeof(*out));
    sm_t s = {a, job, job->u.job, pods, deleting, npods, out, false};
    init_plan(&s, job);
    if (job->meta.deletion_us) {
        out->action = "None"; /* being deleted: the garbage collector takes its pods */
        out->phase = out->from_phase;
        return;
    }
    precount(&s);
    const corral__job_ev_t *ev = NULL;
    const char *action = pick_action(&s, evs, nevs, &ev);
    const char *reason = out->reason;
    for (size_t i = 0; i < out->ntasks; i++)
        out->tasks[i].succeeded = 0;
    out->action = action;
    out->phase = execute(&s, out->from_phase, action, ev);
    if (s.killed) {
        out->version++; /* bumped only when pods were killed, as upstream */
        out->delete_pg = !out->ensure_pg && !eq(action, "RestartTask") && !eq(action, "RestartPod");
    }
    out->phase_changed = !eq(out->phase, out->from_phase);
    if (out->phase_changed)
        out->transition_us = now_us;
    if (ev && !out->reason) {
        out->reason = ev->event;
    }
    if (ev) {
        out->message = corral_arena_printf(a, "%s on %s%s%s", action, reason ? reason : ev->event,
                                           ev->pod ? " of pod " : "", ev->pod ? ev->pod : "");
    } else {
        const corral_val_t *state = corral_val_dig(job->raw, "status.state");
        out->reason = out->phase_changed ? NULL : corral_val_get_str(state, "reason");
        out->message = out->phase_changed ? NULL : corral_val_get_str(state, "message");
    }
    const corral_opt_i32_t *ttl = &job->u.job->ttl_seconds_after_finished;
    if (ttl->set && corral__job_phase_finished(out->phase) && out->transition_us) {
        out->ttl_at_us = out->transition_us + (int64_t)ttl->v * 1000000;
        out->delete_job = now_us >= out->ttl_at_us;
    }
    build_status(a, job, out);
}
