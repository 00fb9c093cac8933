/*
 * The Volcano Job controller's I/O half: pod and PodGroup changes become
 * events on their job (PodFailed, PodEvicted, PodSucceeded, Unknown, as
 * Volcano's handlers make them), a dirty job is reconciled by handing the
 * job, its pods and its events to the pure state machine (jobsm.c) and
 * carrying out the plan: delete and create pods, create or delete the
 * PodGroup, write status through jobs/status (a PUT with the
 * resourceVersion read, so a concurrent change is a 409 and a retry), and
 * delete the job when its ttlSecondsAfterFinished has run out. Objects the
 * server returns go into the cache at once, so the next reconcile sees
 * them before the informer delivers them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/controller_int.h"

static bool eq(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

/* The uid of obj's controller if it is a Volcano Job. */
static const char *job_owner(const corral_obj_t *o)
{
    return corral__ctl_owner(o, CORRAL_VC_JOB_API, "Job");
}

void corral__mark_job(corral_controller_t *c, corral__entry_t *job)
{
    if (job->dirty)
        return;
    job->dirty = true;
    corral_grow((void **)&c->dirty.items, &c->dirty.cap, c->dirty.n + 1, sizeof(corral__entry_t *));
    c->dirty.items[c->dirty.n++] = job;
}

static int64_t pod_version(const corral_obj_t *pod)
{
    const char *v = corral_strmap_get(&pod->meta.annotations, CORRAL_VC_JOB_VERSION);
    if (!v || !*v)
        return -1;
    char *end;
    long long n = strtoll(v, &end, 10);
    return *end ? -1 : (int64_t)n;
}

static bool exit_code(const corral_obj_t *pod, int32_t *code)
{
    const corral_val_t *cs = corral_val_dig(pod->raw, "status.containerStatuses");
    if (!cs || cs->kind != CORRAL_VAL_SEQ || !cs->n)
        return false;
    const corral_val_t *v = corral_val_dig(cs->items[0], "state.terminated.exitCode");
    if (!v || v->kind != CORRAL_VAL_INT)
        return false;
    *code = (int32_t)v->u.i;
    return true;
}

static void pod_event(corral_controller_t *c, const corral_obj_t *pod, const corral_obj_t *old,
                      corral_watch_type_t type)
{
    corral__entry_t *job = corral__cache_by_uid(&c->cache, job_owner(pod));
    if (!job || job->kind != CORRAL_KIND_VCJOB)
        return;
    corral__job_ev_t ev = {0};
    ev.task = corral_strmap_get(&pod->meta.annotations, CORRAL_VC_TASK_SPEC);
    ev.pod = pod->meta.name;
    ev.version = pod_version(pod);
    const char *ph = pod->u.pod->status.phase;
    const char *oph = old ? old->u.pod->status.phase : NULL;
    if (type == CORRAL_WATCH_DELETED || (pod->meta.deletion_us && old && !old->meta.deletion_us))
        ev.event = "PodEvicted"; /* any deletion, as Volcano; killed pods have an old version */
    else if (eq(ph, "Failed") && !eq(oph, "Failed")) {
        ev.event = "PodFailed";
        ev.has_exit = exit_code(pod, &ev.exit_code);
    } else if (eq(ph, "Succeeded") && !eq(oph, "Succeeded"))
        ev.event = "PodSucceeded";
    corral__entry_add_jev(job, &ev);
    corral__mark_job(c, job);
}

void corral__jobs_on_event(corral_controller_t *c, corral__entry_t *e, const corral_obj_t *old,
                           corral_watch_type_t type)
{
    const corral_obj_t *o = e->ev->obj;
    if (e->kind == CORRAL_KIND_VCJOB) {
        if (type != CORRAL_WATCH_DELETED)
            corral__mark_job(c, e);
        return;
    }
    if (e->kind == CORRAL_KIND_POD) {
        pod_event(c, o, old, type);
        return;
    }
    if (e->kind != CORRAL_KIND_PODGROUP)
        return;
    corral__entry_t *job = corral__cache_by_uid(&c->cache, job_owner(o));
    if (!job || job->kind != CORRAL_KIND_VCJOB)
        return;
    const char *ph = o->u.pg->phase;
    if (type != CORRAL_WATCH_DELETED && eq(ph, "Unknown") && !(old && eq(old->u.pg->phase, ph))) {
        corral__job_ev_t ev = {.event = "Unknown", .version = -1};
        corral__entry_add_jev(job, &ev);
        corral__mark_job(c, job);
    } else if (type == CORRAL_WATCH_DELETED) {
        corral__mark_job(c, job); /* SyncJob makes it again unless the job is done */
    }
}

/* --- carrying out a plan ------------------------------------------------------------------- */

static long post(corral_controller_t *c, corral_arena_t *a, corral_kind_t k, const char *ns,
                 const corral_val_t *obj)
{
    corral_buf_t body, resp;
    corral_buf_init(&body);
    corral_buf_init(&resp);
    corral_val_to_json(obj, &body, false);
    const char *path = corral__ctl_path(a, corral_kind_get(k), ns, NULL, NULL);
    long code = corral__ctl_send(c, "POST", path, NULL, &body, &resp);
    if (code == 201 || code == 200)
        corral__ctl_cache(c, &resp);
    corral_buf_fini(&body);
    corral_buf_fini(&resp);
    return code;
}

static bool write_status(corral_controller_t *c, corral_arena_t *a, corral__entry_t *je,
                         corral_val_t *status)
{
    const corral_obj_t *job = je->ev->obj;
    corral_val_t *obj = corral_val_copy(a, job->raw);
    corral_val_set(a, obj, "status", status);
    corral_buf_t body, resp;
    corral_buf_init(&body);
    corral_buf_init(&resp);
    corral_val_to_json(obj, &body, false);
    const char *path =
        corral__ctl_path(a, job->info, job->meta.namespace, job->meta.name, "status");
    long code = corral__ctl_send(c, "PUT", path, NULL, &body, &resp);
    if (code == 200)
        corral__ctl_cache(c, &resp);
    corral_buf_fini(&body);
    corral_buf_fini(&resp);
    return code == 200;
}

static void retry_later(corral_controller_t *c, const char *key)
{
    corral__timers_push(&c->timers, corral__mono_ns() + 1000000000, CORRAL__T_JOB, key);
}

static void apply_pods(corral_controller_t *c, corral_arena_t *a, const corral_obj_t *job,
                       const corral__job_plan_t *p, bool *failed)
{
    for (size_t i = 0; i < p->ndel; i++) {
        corral__entry_t *pe = corral__cache_get(&c->cache, CORRAL_KIND_POD,
                                                p->del[i]->meta.namespace, p->del[i]->meta.name);
        if (corral__ctl_delete(c, p->del[i], -1)) {
            if (pe)
                pe->deleting = true;
        } else {
            *failed = true;
        }
    }
    for (size_t i = 0; i < p->ncreate; i++) {
        corral_val_t *pod =
            corral_vcjob_pod_val(a, job, p->create[i].task, p->create[i].index, p->version);
        long code = post(c, a, CORRAL_KIND_POD, job->meta.namespace, pod);
        if (code != 201 && code != 200 && code != 409)
            *failed = true;
    }
}

static void apply_pg(corral_controller_t *c, corral_arena_t *a, const corral_obj_t *job,
                     const corral__job_plan_t *p, bool *failed)
{
    corral__entry_t *pg =
        corral__cache_get(&c->cache, CORRAL_KIND_PODGROUP, job->meta.namespace, job->meta.name);
    if (p->delete_pg && pg) {
        if (!corral__ctl_delete(c, pg->ev->obj, -1))
            *failed = true;
        else
            pg->deleting = true;
    }
    if (p->ensure_pg && (!pg || pg->deleting)) {
        long code = post(c, a, CORRAL_KIND_PODGROUP, job->meta.namespace,
                         corral_vcjob_podgroup_val(a, job));
        if (code != 201 && code != 200 && code != 409)
            *failed = true;
    }
}

/* The pods job controls, from the dependents index. */
static size_t job_pods(corral_controller_t *c, corral_arena_t *a, const corral__entry_t *je,
                       const corral_obj_t ***pods, bool **deleting)
{
    const corral__entries_t *deps = corral__cache_dependents(&c->cache, je->uid);
    size_t n = 0, cap = deps ? deps->n : 0;
    *pods = corral_arena_alloc(a, (cap + 1) * sizeof(const corral_obj_t *));
    *deleting = corral_arena_alloc(a, cap + 1);
    for (size_t i = 0; i < cap; i++) {
        const corral__entry_t *d = deps->items[i];
        if (d->kind != CORRAL_KIND_POD || !eq(job_owner(d->ev->obj), je->uid))
            continue;
        (*deleting)[n] = d->deleting;
        (*pods)[n++] = d->ev->obj;
    }
    return n;
}

void corral__jobs_reconcile(corral_controller_t *c, corral__entry_t *je)
{
    corral_arena_t a;
    corral_arena_init(&a);
    const corral_obj_t *job = je->ev->obj;
    char key[600];
    snprintf(key, sizeof(key), "%s/%s", job->meta.namespace, job->meta.name);
    const corral_obj_t **pods;
    bool *deleting;
    size_t n = job_pods(c, &a, je, &pods, &deleting);
    corral__job_plan_t p;
    int64_t now = corral__wall_us();
    corral__job_decide(&a, job, pods, deleting, n, je->jevs, je->njevs, now, &p);
    corral__entry_clear_jevs(je);
    if (p.delete_job) {
        corral__ctl_log(c, "job %s/%s: ttlSecondsAfterFinished passed, deleting it",
                        job->meta.namespace, job->meta.name);
        if (!corral__ctl_delete(c, job, -1))
            retry_later(c, key);
        corral_arena_fini(&a);
        return;
    }
    if (strcmp(p.action, "SyncJob") != 0 && strcmp(p.action, "None") != 0)
        corral__ctl_log(c, "job %s/%s: %s (%s)", job->meta.namespace, job->meta.name, p.action,
                        p.message ? p.message : "");
    if (p.phase_changed)
        corral__ctl_log(c, "job %s/%s: %s -> %s", job->meta.namespace, job->meta.name,
                        *p.from_phase ? p.from_phase : "(new)", p.phase);
    bool failed = false;
    apply_pods(c, &a, job, &p, &failed);
    apply_pg(c, &a, job, &p, &failed);
    if (strcmp(p.action, "None") != 0 &&
        !corral_val_equal(p.status, corral_val_get(job->raw, "status"))) {
        /* job (and je) may be replaced by the response from here on */
        if (!write_status(c, &a, je, p.status))
            failed = true;
    }
    if (failed)
        retry_later(c, key);
    else if (p.ttl_at_us > 0)
        corral__timers_push(&c->timers, corral__mono_ns() + (p.ttl_at_us - now) * 1000 + 1000000,
                            CORRAL__T_JOB, key);
    corral_arena_fini(&a);
}
