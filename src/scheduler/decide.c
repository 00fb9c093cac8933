/*
 * Writing a cycle's decisions back to the API server, and what happens when
 * a write fails.
 *
 *  - bind: POST pods/NAME/binding with annotation corral.dev/gpu-ids (the
 *    server copies it to the pod and sets PodScheduled=True), then a
 *    Scheduled event. A bind that fails (409 another scheduler or a stale
 *    view, 404 gone, 5xx) is undone in the engine and the pod given back
 *    from its latest informer copy after a backoff, as kube-scheduler's
 *    cache forgets an assumed pod.
 *  - evict: a Preempted (or, across queues, Evicted) event on the victim,
 *    then POST pods/NAME/eviction; the victim keeps its resources in the
 *    engine until the watch says it is gone. A failed eviction is undone the
 *    same way as a failed bind.
 *  - pending: PodScheduled=False (reason Unschedulable, the engine's
 *    message) when the message changed, and a FailedScheduling event, at
 *    most one per pod per event interval (kube-scheduler's event broadcaster
 *    aggregates repeats of one message into a count; so do we).
 *  - PodGroups: status.phase and the Unschedulable/Scheduled condition
 *    (Volcano's form), by merge patch; the counts are the controller's.
 */
#include <stdio.h>
#include <string.h>

#include "corral/timefmt.h"
#include "corral/val.h"
#include "scheduler/sched_int.h"

static void q(corral_buf_t *b, const char *s)
{
    corral_json_quote(b, s ? s : "", s ? strlen(s) : 0);
}

static void now_str(char *out, size_t len)
{
    corral_time_format(corral__now_ms() * 1000, false, out, len);
}

static const char *pod_uid(sched_t *s, const char *key)
{
    sentry_t *p = corral__st_get(&s->pods, key, false);
    return p && p->ev && p->ev->obj && p->ev->obj->meta.uid ? p->ev->obj->meta.uid : "";
}

/* A core v1 Event about pod ns/name: its path and body; the name in *name. */
static void event_body(sched_t *s, corral_buf_t *b, const char *ns, const char *name,
                       const char *type, const char *reason, const char *msg, char *ename,
                       size_t elen)
{
    char ts[64], key[512];
    now_str(ts, sizeof(ts));
    snprintf(key, sizeof(key), "%s/%s", ns, name);
    snprintf(ename, elen, "%.200s.%llx%04llx", name, (unsigned long long)corral__now_ms(),
             (unsigned long long)(s->seq++ & 0xffff));
    corral_buf_puts(b, "{\"apiVersion\":\"v1\",\"kind\":\"Event\",\"metadata\":{\"name\":");
    q(b, ename);
    corral_buf_puts(b, ",\"namespace\":");
    q(b, ns);
    corral_buf_puts(b,
                    "},\"involvedObject\":{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"namespace\":");
    q(b, ns);
    corral_buf_puts(b, ",\"name\":");
    q(b, name);
    corral_buf_puts(b, ",\"uid\":");
    q(b, pod_uid(s, key));
    corral_buf_puts(b, "},\"reason\":");
    q(b, reason);
    corral_buf_puts(b, ",\"message\":");
    q(b, msg);
    corral_buf_puts(b, ",\"type\":");
    q(b, type);
    corral_buf_puts(b, ",\"source\":{\"component\":\"corral-scheduler\"},"
                       "\"reportingComponent\":\"corral-scheduler\",\"reportingInstance\":");
    q(b, s->instance);
    corral_buf_printf(b, ",\"firstTimestamp\":\"%s\",\"lastTimestamp\":\"%s\",\"count\":1}", ts,
                      ts);
}

static void attach_event(sched_t *s, wjob_t *j, const char *ns, const char *name, const char *type,
                         const char *reason, const char *msg)
{
    corral_buf_t b;
    corral_buf_init(&b);
    char ename[300], path[512];
    event_body(s, &b, ns, name, type, reason, msg, ename, sizeof(ename));
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/events", ns);
    j->event_path = corral_strdup(path);
    j->event_body = corral_strdup(corral_buf_str(&b));
    corral_buf_fini(&b);
}

static void do_bind(sched_t *s, const corral_bind_t *bd)
{
    char key[512], path[768];
    snprintf(key, sizeof(key), "%s/%s", bd->ns, bd->name);
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s/binding", bd->ns, bd->name);
    corral_buf_t b;
    corral_buf_init(&b);
    corral_buf_puts(&b, "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":");
    q(&b, bd->name);
    corral_buf_puts(&b, ",\"namespace\":");
    q(&b, bd->ns);
    if (bd->gpu_ids && *bd->gpu_ids) {
        corral_buf_puts(&b, ",\"annotations\":{\"corral.dev/gpu-ids\":");
        q(&b, bd->gpu_ids);
        corral_buf_puts(&b, "}");
    }
    corral_buf_puts(&b, "},\"target\":{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"name\":");
    q(&b, bd->node);
    corral_buf_puts(&b, "}}");
    wjob_t *j = corral__wjob_new(W_BIND, key, "POST", path, NULL, corral_buf_str(&b));
    char msg[1024];
    int n = snprintf(msg, sizeof(msg), "Successfully assigned %s to %s", key, bd->node);
    if (bd->gpu_ids && *bd->gpu_ids && n > 0 && (size_t)n < sizeof(msg))
        snprintf(msg + n, sizeof(msg) - (size_t)n, " (GPUs %s)", bd->gpu_ids);
    attach_event(s, j, bd->ns, bd->name, "Normal", "Scheduled", msg);
    corral_buf_fini(&b);
    sentry_t *p = corral__st_get(&s->pods, key, false);
    if (p)
        p->inflight = true;
    corral__wpool_submit(&s->pool, j);
}

static void do_evict(sched_t *s, const corral_evict_t *ev)
{
    char key[512], path[768], by[512], msg[1400];
    snprintf(key, sizeof(key), "%s/%s", ev->ns, ev->name);
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s/eviction", ev->ns, ev->name);
    corral_pod_view_t v;
    const char *node = corral_engine_pod(s->e, ev->ns, ev->name, &v) == 0 && v.node ? v.node : "";
    snprintf(by, sizeof(by), "%s/%s", ev->for_ns, ev->for_job);
    const char *uid = pod_uid(s, by);
    bool reclaim = strncmp(ev->reason, "reclaimed", 9) == 0;
    if (*uid)
        snprintf(msg, sizeof(msg), "Preempted by pod %s on node %s (%s)", uid, node, ev->reason);
    else
        snprintf(msg, sizeof(msg), "Preempted by pod group %s on node %s (%s)", by, node,
                 ev->reason);
    corral_buf_t b;
    corral_buf_init(&b);
    corral_buf_puts(&b, "{\"apiVersion\":\"policy/v1\",\"kind\":\"Eviction\",\"metadata\":{"
                        "\"name\":");
    q(&b, ev->name);
    corral_buf_puts(&b, ",\"namespace\":");
    q(&b, ev->ns);
    corral_buf_puts(&b, "}}");
    wjob_t *j = corral__wjob_new(W_EVICT, key, "POST", path, NULL, corral_buf_str(&b));
    attach_event(s, j, ev->ns, ev->name, "Normal", reclaim ? "Evicted" : "Preempted", msg);
    j->event_first = true;
    corral_buf_fini(&b);
    sentry_t *p = corral__st_get(&s->pods, key, false);
    if (p)
        p->inflight = true;
    corral__slog(s, 1, "evicting %s: %s", key, ev->reason);
    corral__wpool_submit(&s->pool, j);
}

static void set_str(char **dst, const char *src)
{
    corral_free(*dst);
    *dst = src ? corral_strdup(src) : NULL;
}

/* FailedScheduling: a new message gets a new event unless the pod had one
 * within the interval; the same message again raises the event's count. */
static void failed_event(sched_t *s, sentry_t *p, const corral_pending_t *pd)
{
    int64_t now = corral__now_ms();
    bool recent = p->ev_name && now - p->ev_ms < s->o->event_interval_ms;
    if (p->ev_msg && strcmp(p->ev_msg, pd->reason) == 0) {
        p->ev_count++;
        if (recent)
            return;
        char path[768], ts[64], body[256];
        snprintf(path, sizeof(path), "/api/v1/namespaces/%s/events/%s", pd->ns, p->ev_name);
        now_str(ts, sizeof(ts));
        snprintf(body, sizeof(body), "{\"count\":%d,\"lastTimestamp\":\"%s\"}", p->ev_count, ts);
        corral__wpool_submit(&s->pool, corral__wjob_new(W_WRITE, p->key, "PATCH", path,
                                                        "application/merge-patch+json", body));
        p->ev_ms = now;
        return;
    }
    if (recent)
        return; /* rate limited: the condition carries the new message */
    corral_buf_t b;
    corral_buf_init(&b);
    char ename[300], path[512];
    event_body(s, &b, pd->ns, pd->name, "Warning", "FailedScheduling", pd->reason, ename,
               sizeof(ename));
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/events", pd->ns);
    corral__wpool_submit(&s->pool,
                         corral__wjob_new(W_WRITE, p->key, "POST", path, NULL, corral_buf_str(&b)));
    corral_buf_fini(&b);
    set_str(&p->ev_name, ename);
    set_str(&p->ev_msg, pd->reason);
    p->ev_count = 1;
    p->ev_ms = now;
}

static void do_pending(sched_t *s, const corral_pending_t *pd)
{
    char key[512];
    snprintf(key, sizeof(key), "%s/%s", pd->ns, pd->name);
    sentry_t *p = corral__st_get(&s->pods, key, false);
    if (!p || !pd->reason)
        return;
    if (!p->cond_msg || strcmp(p->cond_msg, pd->reason) != 0) {
        char path[768], ts[64];
        snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s/status", pd->ns, pd->name);
        now_str(ts, sizeof(ts));
        corral_buf_t b;
        corral_buf_init(&b);
        corral_buf_puts(&b, "{\"status\":{\"conditions\":[{\"type\":\"PodScheduled\",\"status\":"
                            "\"False\",\"reason\":\"Unschedulable\",\"message\":");
        q(&b, pd->reason);
        corral_buf_printf(&b, ",\"lastTransitionTime\":\"%s\"}]}}", ts);
        corral__wpool_submit(&s->pool, corral__wjob_new(W_WRITE, key, "PATCH", path,
                                                        "application/strategic-merge-patch+json",
                                                        corral_buf_str(&b)));
        corral_buf_fini(&b);
        set_str(&p->cond_msg, pd->reason);
    }
    failed_event(s, p, pd);
}

static void do_group(sched_t *s, const corral_group_status_t *g)
{
    char key[512], path[768], ts[64];
    snprintf(key, sizeof(key), "%s/%s", g->ns, g->name);
    snprintf(path, sizeof(path),
             "/apis/scheduling.volcano.sh/v1beta1/namespaces/%s/podgroups/%s/status", g->ns,
             g->name);
    now_str(ts, sizeof(ts));
    corral_buf_t b;
    corral_buf_init(&b);
    corral_buf_puts(&b, "{\"status\":{\"phase\":");
    q(&b, g->phase);
    if (g->message) {
        corral_buf_puts(&b, ",\"conditions\":[{\"type\":\"Unschedulable\",\"status\":\"True\","
                            "\"reason\":\"NotEnoughResources\",\"message\":");
        q(&b, g->message);
    } else {
        corral_buf_puts(&b, ",\"conditions\":[{\"type\":\"Scheduled\",\"status\":\"True\","
                            "\"reason\":\"tasks in gang are ready to be scheduled\",\"message\":"
                            "\"\"");
    }
    corral_buf_printf(&b, ",\"lastTransitionTime\":\"%s\"}]}}", ts);
    wjob_t *j = corral__wjob_new(W_WRITE, key, "PATCH", path, "application/merge-patch+json",
                                 corral_buf_str(&b));
    path[strlen(path) - strlen("/status")] = '\0'; /* PodGroups without the subresource */
    j->alt_path = corral_strdup(path);
    corral__wpool_submit(&s->pool, j);
    corral_buf_fini(&b);
}

void corral__apply(sched_t *s, const corral_decisions_t *d)
{
    for (size_t i = 0; i < d->nevictions; i++)
        do_evict(s, &d->evictions[i]);
    for (size_t i = 0; i < d->nbinds; i++)
        do_bind(s, &d->binds[i]);
    for (size_t i = 0; i < d->npending; i++)
        do_pending(s, &d->pending[i]);
    for (size_t i = 0; i < d->ngroups; i++)
        do_group(s, &d->groups[i]);
}

/* Undo what the engine assumed about p and give it back after a backoff. */
static void forget(sched_t *s, sentry_t *p, int64_t backoff_ms)
{
    const char *slash = strchr(p->key, '/');
    char ns[256];
    snprintf(ns, sizeof(ns), "%.*s", (int)(slash - p->key), p->key);
    if (p->in_engine)
        corral_engine_remove(s->e, CORRAL_KIND_POD, ns, slash + 1);
    p->in_engine = false;
    p->retry_ms = corral__now_ms() + backoff_ms;
    corral_grow((void **)&s->retry, &s->capretry, s->nretry + 1, sizeof(*s->retry));
    s->retry[s->nretry++] = corral_strdup(p->key);
    s->changed = true;
}

void corral__outcome(sched_t *s, wjob_t *j)
{
    sentry_t *p = corral__st_get(&s->pods, j->key, false);
    bool ok = j->code / 100 == 2;
    if (p)
        p->inflight = false;
    if (j->kind == W_BIND) {
        corral__sm_outcome(s, W_BIND, ok);
        if (ok) {
            s->stats->binds++;
            corral__sm_bound(s, p);
            if (p)
                p->fails = 0;
            return;
        }
        s->stats->bind_failures++;
        corral__slog(s, 0, "bind %s failed: HTTP %ld %s", j->key, j->code, j->err);
    } else {
        corral__sm_outcome(s, W_EVICT, ok || j->code == 404);
        if (ok || j->code == 404) {
            s->stats->evictions++;
            return; /* the pod leaves the engine when the watch says it is gone */
        }
        s->stats->eviction_failures++;
        corral__slog(s, 0, "eviction of %s failed: HTTP %ld %s", j->key, j->code, j->err);
    }
    if (!p)
        return;
    p->fails++;
    int shift = p->fails < 7 ? p->fails - 1 : 6;
    forget(s, p, j->code == 409 ? 0 : (int64_t)200 << shift);
}
