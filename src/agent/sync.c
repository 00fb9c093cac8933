/*
 * The pod state machine, as kubelet runs it, independent of how containers
 * run (proc.c starts and watches processes; hollow.c has none):
 *   - init containers run one after another, each to exit 0, before the
 *     containers start side by side;
 *   - a container that ends is restarted per restartPolicy (Always: always;
 *     OnFailure: on a non-zero exit; Never: never; init containers restart
 *     on failure unless Never): the first restart at once, the next ones
 *     after a CrashLoopBackOff delay that doubles from --restart-backoff-ms up
 *     to its cap, reset once an instance ran for twice the cap;
 *   - the phase follows kubelet's getPhase;
 *   - a pod with deletionTimestamp gets SIGTERM, its grace period, SIGKILL,
 *     and is finalized with DELETE gracePeriodSeconds=0 (the API server
 *     removes a bound pod only then, or on a terminal phase);
 *   - status goes through PATCH pods/NAME/status (merge patch of the whole
 *     status we own), and only when it changed.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "agent/agent_int.h"

bool corral__should_restart(const char *policy, int exit_code)
{
    if (!policy || !strcmp(policy, "Always"))
        return true;
    if (!strcmp(policy, "OnFailure"))
        return exit_code != 0;
    return false;
}

int64_t corral__backoff_next(int64_t cur_ms, int64_t init_ms, int64_t max_ms)
{
    if (cur_ms <= 0)
        return init_ms < max_ms ? init_ms : max_ms;
    return cur_ms * 2 < max_ms ? cur_ms * 2 : max_ms;
}

/* Did this container end for good with exit 0 (an init container done)? */
static bool done_ok(const corral__ctr_t *c)
{
    return c->st == CORRAL__C_TERMINATED && c->term.exit_code == 0;
}

bool corral__ctr_ready(const corral__ctr_t *c)
{
    return c->st == CORRAL__C_RUNNING && (!c->rp || c->rs.ready);
}

void corral__ctr_set_env(corral__ctr_t *c, char *const *envp)
{
    for (size_t i = 0; c->env && c->env[i]; i++)
        corral_free(c->env[i]);
    corral_free(c->env);
    c->env = NULL;
    if (!envp)
        return;
    size_t n = 0;
    while (envp[n])
        n++;
    c->env = corral_calloc(n + 1, sizeof(char *));
    for (size_t i = 0; i < n; i++)
        c->env[i] = corral_strdup(envp[i]);
}

const char *corral__pod_phase(const corral__pod_t *p)
{
    const char *policy = p->restart_policy ? p->restart_policy : "Always";
    if (p->freason[0])
        return "Failed";
    for (size_t i = 0; i < p->ninit; i++) {
        const corral__ctr_t *c = &p->ctrs[i];
        if (done_ok(c))
            continue;
        if (c->st == CORRAL__C_TERMINATED && !strcmp(policy, "Never"))
            return "Failed";
        return "Pending";
    }
    size_t running = 0, waiting = 0, stopped = 0, succeeded = 0;
    size_t n = p->nctrs - p->ninit;
    for (size_t i = p->ninit; i < p->nctrs; i++) {
        const corral__ctr_t *c = &p->ctrs[i];
        if (c->st == CORRAL__C_RUNNING) {
            running++;
        } else if (c->st == CORRAL__C_TERMINATED) {
            stopped++;
            succeeded += c->term.exit_code == 0;
        } else if (c->last.set) {
            stopped++;
            succeeded += c->last.exit_code == 0;
        } else {
            waiting++;
        }
    }
    if (waiting > 0)
        return "Pending";
    if (running > 0)
        return "Running";
    if (stopped == n && n > 0) {
        if (!strcmp(policy, "Always"))
            return "Running";
        if (stopped == succeeded)
            return "Succeeded";
        if (!strcmp(policy, "Never"))
            return "Failed";
        return "Running";
    }
    return "Pending";
}

/* --- status JSON ------------------------------------------------------------------------------ */

static void put_time(corral_arena_t *a, corral_val_t *m, const char *key, int64_t us)
{
    char ts[40];
    corral__fmt_time(us, false, ts, sizeof(ts));
    corral__jstr(a, m, key, ts);
}

static corral_val_t *term_json(corral_arena_t *a, const corral__term_t *t)
{
    corral_val_t *m = corral__jmap(a, NULL, NULL);
    corral__jint(a, m, "exitCode", t->exit_code);
    corral__jstr(a, m, "reason", t->reason);
    if (t->message[0])
        corral__jstr(a, m, "message", t->message);
    if (t->started_us)
        put_time(a, m, "startedAt", t->started_us);
    put_time(a, m, "finishedAt", t->finished_us);
    if (t->cid[0])
        corral__jstr(a, m, "containerID", t->cid);
    return m;
}

static corral_val_t *ctr_json(corral_arena_t *a, const corral__ctr_t *c)
{
    corral_val_t *m = corral__jmap(a, NULL, NULL);
    corral__jstr(a, m, "name", c->name);
    corral__jstr(a, m, "image", c->image);
    corral__jstr(a, m, "imageID", "");
    const char *cid = c->st == CORRAL__C_RUNNING ? c->cid : c->term.set ? c->term.cid : "";
    if (cid[0])
        corral__jstr(a, m, "containerID", cid);
    corral__jbool(a, m, "ready", corral__ctr_ready(c));
    corral__jbool(a, m, "started", c->st == CORRAL__C_RUNNING);
    corral__jint(a, m, "restartCount", c->restarts);
    corral_val_t *st = corral__jmap(a, m, "state");
    if (c->st == CORRAL__C_RUNNING) {
        put_time(a, corral__jmap(a, st, "running"), "startedAt", c->started_us);
    } else if (c->st == CORRAL__C_TERMINATED) {
        corral_val_set(a, st, "terminated", term_json(a, &c->term));
    } else {
        corral_val_t *w = corral__jmap(a, st, "waiting");
        corral__jstr(a, w, "reason", c->wreason[0] ? c->wreason : "ContainerCreating");
        if (c->wmsg[0])
            corral__jstr(a, w, "message", c->wmsg);
    }
    corral_val_t *last = corral__jmap(a, m, "lastState");
    if (c->last.set)
        corral_val_set(a, last, "terminated", term_json(a, &c->last));
    return m;
}

static void cond(corral_arena_t *a, corral_val_t *seq, const char *type, bool ok, int64_t since,
                 const char *reason)
{
    corral_val_t *c = corral__jmap(a, NULL, NULL);
    corral__jstr(a, c, "type", type);
    corral__jstr(a, c, "status", ok ? "True" : "False");
    corral_val_set(a, c, "lastProbeTime", corral_val_new(a, CORRAL_VAL_NULL));
    put_time(a, c, "lastTransitionTime", since);
    if (!ok && reason)
        corral__jstr(a, c, "reason", reason);
    corral_val_push(a, seq, c);
}

corral_val_t *corral__pod_status(corral_arena_t *a, const corral__pod_t *p, const char *host_ip,
                                 int64_t now_us)
{
    corral_val_t *o = corral__jmap(a, NULL, NULL);
    corral_val_t *st = corral__jmap(a, o, "status");
    const char *phase = corral__pod_phase(p);
    corral__jstr(a, st, "phase", phase);
    if (p->freason[0]) {
        corral__jstr(a, st, "reason", p->freason);
        corral__jstr(a, st, "message", p->fmsg);
    }
    corral_val_t *cs = corral__jseq(a, st, "conditions");
    int64_t t0 = p->start_us ? p->start_us : now_us;
    cond(a, cs, "PodScheduled", true, t0, NULL);
    cond(a, cs, "Initialized", p->cond[0], p->cond_us[0] ? p->cond_us[0] : t0,
         "ContainersNotInitialized");
    cond(a, cs, "ContainersReady", p->cond[1], p->cond_us[1] ? p->cond_us[1] : t0,
         "ContainersNotReady");
    cond(a, cs, "Ready", p->cond[2], p->cond_us[2] ? p->cond_us[2] : t0, "ContainersNotReady");
    const char *pod_ip = corral__pod_ip(p, host_ip);
    corral__jstr(a, st, "hostIP", host_ip);
    corral__jstr(a, st, "podIP", pod_ip);
    corral_val_t *ips = corral__jseq(a, st, "podIPs");
    corral_val_t *ip = corral__jmap(a, NULL, NULL);
    corral__jstr(a, ip, "ip", pod_ip);
    corral_val_push(a, ips, ip);
    corral_val_t *hips = corral__jseq(a, st, "hostIPs");
    corral_val_t *hip = corral__jmap(a, NULL, NULL);
    corral__jstr(a, hip, "ip", host_ip);
    corral_val_push(a, hips, hip);
    put_time(a, st, "startTime", t0);
    if (p->ninit > 0) {
        corral_val_t *is = corral__jseq(a, st, "initContainerStatuses");
        for (size_t i = 0; i < p->ninit; i++)
            corral_val_push(a, is, ctr_json(a, &p->ctrs[i]));
    }
    corral_val_t *css = corral__jseq(a, st, "containerStatuses");
    bool running = false;
    for (size_t i = p->ninit; i < p->nctrs; i++) {
        corral_val_push(a, css, ctr_json(a, &p->ctrs[i]));
        running = running || p->ctrs[i].st == CORRAL__C_RUNNING;
    }
    bool gpu_done = p->gpu_ran && !running; /* ended: the GPU time it used (usage.c) */
    if (gpu_done || p->model_fetch[0]) {
        corral_val_t *ann = corral__jmap(a, corral__jmap(a, o, "metadata"), "annotations");
        if (gpu_done)
            corral__jstr(a, ann, "corral.dev/gpu-seconds-used",
                         corral_arena_printf(a, "%.3f", p->gpu_used_s));
        if (p->model_fetch[0])
            corral__jstr(a, ann, CORRAL_MODEL_FETCH_ANN, p->model_fetch);
    }
    return o;
}

/* Keep the conditions' transition times. */
static void conditions_update(corral__pod_t *p, int64_t now)
{
    bool init = !p->model_uri || p->model_dir, ready = p->nctrs > p->ninit;
    for (size_t i = 0; i < p->ninit; i++)
        init = init && done_ok(&p->ctrs[i]);
    for (size_t i = p->ninit; i < p->nctrs; i++)
        ready = ready && corral__ctr_ready(&p->ctrs[i]);
    bool v[3] = {init, ready, ready};
    for (int i = 0; i < 3; i++) {
        if (p->cond[i] != v[i] || !p->cond_us[i]) {
            p->cond[i] = v[i];
            p->cond_us[i] = now;
        }
    }
}

const char *corral__pod_ip(const corral__pod_t *p, const char *host_ip)
{
    return p->ip && p->ip->ip[0] ? p->ip->ip : host_ip;
}

void corral__pod_free(corral__pod_t *p)
{
    if (!p)
        return;
    if (p->ip) {
        corral__podip_release(p->ip);
        corral_free(p->ip);
    }
    for (size_t i = 0; i < p->nctrs; i++) {
        corral_free(p->ctrs[i].name);
        corral_free(p->ctrs[i].image);
        if (p->ctrs[i].rp) {
            corral__probe_clear(p->ctrs[i].rp);
            corral_free(p->ctrs[i].rp);
        }
        corral__ctr_set_env(&p->ctrs[i], NULL);
    }
    corral_free(p->ctrs);
    corral_watch_ev_free(p->ev);
    corral_free(p->uid);
    corral_free(p->ns);
    corral_free(p->name);
    corral_free(p->node);
    corral_free(p->restart_policy);
    corral_free(p->last_status);
    corral_free(p->gpu_ids);
    corral_free(p->gpu_load);
    corral_free(p->model_uri);
    corral_free(p->model_entry);
    corral_free(p->model_dir);
    corral_free(p);
}

void corral__pod_containers(corral__pod_t *p, const corral_obj_t *o)
{
    const corral_pod_spec_t *s = &o->u.pod->spec;
    p->ninit = s->ninit_containers;
    p->nctrs = s->ninit_containers + s->ncontainers;
    p->ctrs = corral_calloc(p->nctrs ? p->nctrs : 1, sizeof(corral__ctr_t));
    for (size_t i = 0; i < p->nctrs; i++) {
        bool init = i < p->ninit;
        const corral_container_t *c = init ? &s->init_containers[i] : &s->containers[i - p->ninit];
        corral__ctr_t *k = &p->ctrs[i];
        k->name = corral_strdup(c->name ? c->name : "");
        k->image = corral_strdup(c->image ? c->image : "");
        k->init = init;
        k->idx = (int)(init ? i : i - p->ninit);
        k->instance = -1;
        const corral_val_t *raw =
            corral_val_dig(o->raw, init ? "spec.initContainers" : "spec.containers");
        raw = raw && raw->kind == CORRAL_VAL_SEQ && (size_t)k->idx < raw->n ? raw->items[k->idx]
                                                                            : NULL;
        if (!init && corral_val_get(raw, "readinessProbe")) {
            char err[160];
            k->rp = corral_malloc(sizeof(*k->rp));
            if (corral__probe_parse(raw, "readinessProbe", k->rp, err, sizeof(err)) != 0)
                snprintf(k->rs.msg, sizeof(k->rs.msg), "%s", err); /* never ready */
        }
    }
    p->restart_policy = corral_strdup(s->restart_policy ? s->restart_policy : "Always");
}

int corral__pod_write_status(corral_client_t *c, corral__pod_t *p, const char *host_ip,
                             int64_t now_us)
{
    conditions_update(p, now_us);
    corral_arena_t a;
    corral_arena_init(&a);
    corral_buf_t b;
    corral_buf_init(&b);
    corral_val_to_json(corral__pod_status(&a, p, host_ip, now_us), &b, false);
    int rc = 0;
    if (!p->last_status || strcmp(p->last_status, corral_buf_str(&b)) != 0) {
        char path[1024];
        snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s/status", p->ns, p->name);
        corral_client_resp_t r;
        corral_client_resp_init(&r);
        rc = corral_client_request(c, "PATCH", path, "application/merge-patch+json",
                                   corral_buf_str(&b), b.len, &r);
        if (rc == 0 && (r.code == 200 || r.code == 404)) {
            corral_free(p->last_status);
            p->last_status = corral_buf_steal(&b);
            p->retry_us = 0;
        } else {
            char reason[64], msg[300];
            corral_client_error(&r, reason, sizeof(reason), msg, sizeof(msg));
            corral__log("pod %s/%s: status update failed: %ld %s", p->ns, p->name, r.code,
                        r.code ? msg : r.error);
            p->retry_us = now_us + 1000000;
            rc = CORRAL_EIO;
        }
        corral_client_resp_fini(&r);
    }
    corral_buf_fini(&b);
    corral_arena_fini(&a);
    return rc;
}

int corral__pod_finalize(corral_client_t *c, const corral__pod_t *p)
{
    char path[1024], body[256];
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s?gracePeriodSeconds=0", p->ns,
             p->name);
    snprintf(body, sizeof(body),
             "{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\",\"gracePeriodSeconds\":0,"
             "\"preconditions\":{\"uid\":\"%s\"}}",
             p->uid);
    corral_client_resp_t r;
    corral_client_resp_init(&r);
    int rc = corral_client_request(c, "DELETE", path, NULL, body, strlen(body), &r);
    if (rc == 0 && r.code != 200 && r.code != 404 && r.code != 409) {
        corral__log("pod %s/%s: final delete failed: HTTP %ld", p->ns, p->name, r.code);
        rc = CORRAL_EIO;
    }
    corral_client_resp_fini(&r);
    return rc;
}

/* --- the pod table -----------------------------------------------------------------------------
 */

void corral__podtab_init(corral__podtab_t *t)
{
    memset(t, 0, sizeof(*t));
    corral_hmap_init(&t->byuid);
}

void corral__podtab_fini(corral__podtab_t *t)
{
    for (size_t i = 0; i < t->n; i++)
        corral__pod_free(t->pods[i]);
    corral_free(t->pods);
    corral_hmap_fini(&t->byuid);
    memset(t, 0, sizeof(*t));
}

corral__pod_t *corral__podtab_find(const corral__podtab_t *t, const char *uid)
{
    uint32_t i;
    return uid && corral_hmap_get(&t->byuid, uid, &i) ? t->pods[i] : NULL;
}

void corral__podtab_add(corral__podtab_t *t, corral__pod_t *p)
{
    corral_grow((void **)&t->pods, &t->cap, t->n + 1, sizeof(corral__pod_t *));
    t->pods[t->n] = p;
    corral_hmap_put(&t->byuid, p->uid, (uint32_t)t->n);
    t->n++;
}

void corral__podtab_drop(corral__podtab_t *t, corral__pod_t *p)
{
    uint32_t i;
    if (!corral_hmap_get(&t->byuid, p->uid, &i))
        return;
    corral_hmap_del(&t->byuid, p->uid);
    t->pods[i] = t->pods[--t->n];
    if (i < t->n)
        corral_hmap_put(&t->byuid, t->pods[i]->uid, i);
    corral__pod_free(p);
}
