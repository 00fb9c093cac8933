/*
 * `corral controller`'s loop: informers on Volcano Jobs, pods, PodGroups,
 * Queues, Nodes and the Leases in kube-node-lease feed one event queue; one
 * thread drains it into the cache, tells each controller what changed, then
 * reconciles the dirty jobs, runs the garbage collector, and fires the
 * timers that are due (node checks, eviction deadlines, job TTLs and
 * retries, the PodGroup/Queue status pass). Writes are plain requests on
 * one connection. Events older than the cached object (a response already
 * put there) are dropped by resourceVersion.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/autoscale.h"
#include "controller/controller_int.h"
#include "corral/leader.h"
#include "corral/timefmt.h"

/* --- requests ------------------------------------------------------------------------------ */

const char *corral__ctl_path(corral_arena_t *a, const corral_kind_info_t *k, const char *ns,
                             const char *name, const char *sub)
{
    const char *prefix = k->group[0] ? "/apis/" : "/api/";
    return corral_arena_printf(a, "%s%s%s%s%s/%s%s%s%s%s", prefix, k->api_version,
                               ns && k->namespaced ? "/namespaces/" : "",
                               ns && k->namespaced ? ns : "", "", k->plural, name ? "/" : "",
                               name ? name : "", sub ? "/" : "", sub ? sub : "");
}

void corral__ctl_log(corral_controller_t *c, const char *fmt, ...)
{
    if (!c->o.log)
        return;
    char ts[40];
    corral_time_format(corral__wall_us(), true, ts, sizeof(ts));
    va_list ap;
    va_start(ap, fmt);
    fprintf(c->o.log, "%s corral controller: ", ts);
    vfprintf(c->o.log, fmt, ap);
    fputc('\n', c->o.log);
    fflush(c->o.log);
    va_end(ap);
}

long corral__ctl_send(corral_controller_t *c, const char *method, const char *path,
                      const char *ctype, const corral_buf_t *body, corral_buf_t *out)
{
    corral_client_resp_t r;
    corral_client_resp_init(&r);
    if (strcmp(method, "GET") != 0)
        c->actions++;
    int rc = corral_client_request(c->cl, method, path, ctype, body ? corral_buf_str(body) : NULL,
                                   body ? body->len : 0, &r);
    long code = rc == 0 ? r.code : 0;
    if (rc != 0) {
        corral__ctl_log(c, "%s %s: %s", method, path, r.error);
    } else if (code >= 300 && !(code == 404 && !strcmp(method, "GET")) &&
               !(code == 404 && !strcmp(method, "DELETE")) && code != 409) {
        char reason[64], msg[512];
        corral_client_error(&r, reason, sizeof(reason), msg, sizeof(msg));
        corral__ctl_log(c, "%s %s: HTTP %ld: %s", method, path, code, msg);
    }
    if (out && rc == 0)
        corral_buf_append(out, r.body.p ? r.body.p : "", r.body.len);
    corral_client_resp_fini(&r);
    return code;
}

const char *corral__ctl_owner(const corral_obj_t *o, const char *api_version, const char *kind)
{
    for (size_t i = 0; i < o->meta.nowners; i++) {
        const corral_owner_ref_t *r = &o->meta.owners[i];
        if (r->controller && r->kind && r->api_version && strcmp(r->kind, kind) == 0 &&
            strcmp(r->api_version, api_version) == 0)
            return r->uid;
    }
    return NULL;
}

void corral__ctl_cache(corral_controller_t *c, const corral_buf_t *body)
{
    corral_watch_ev_t *ev = corral__ev_from_json(body->p ? body->p : "", body->len);
    if (!ev)
        return;
    corral_watch_ev_t *old = NULL;
    corral__cache_put(&c->cache, ev, &old);
    corral_watch_ev_free(old);
}

bool corral__ctl_delete(corral_controller_t *c, const corral_obj_t *o, int64_t grace)
{
    corral_arena_t a;
    corral_arena_init(&a);
    const char *path = corral__ctl_path(&a, o->info, o->meta.namespace, o->meta.name, NULL);
    corral_buf_t body;
    corral_buf_init(&body);
    corral_buf_puts(&body, "{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\"");
    if (grace >= 0)
        corral_buf_printf(&body, ",\"gracePeriodSeconds\":%lld", (long long)grace);
    if (o->meta.uid)
        corral_buf_printf(&body, ",\"preconditions\":{\"uid\":\"%s\"}", o->meta.uid);
    corral_buf_puts(&body, ",\"propagationPolicy\":\"Background\"}");
    long code = corral__ctl_send(c, "DELETE", path, NULL, &body, NULL);
    corral_buf_fini(&body);
    corral_arena_fini(&a);
    return code == 200 || code == 202 || code == 404 || code == 409;
}

/* --- setup --------------------------------------------------------------------------------- */

typedef struct inf_spec {
    corral_kind_t kind;
    const char *ns;
} inf_spec_t;

/* The model cache's status (modelcache.c) reads LocalModelCaches, node
 * groups and LocalModelNodes; the InferenceService controller (isvc.c)
 * services, their ControllerRevisions, the serving runtimes and
 * LocalModelCaches. */
static const inf_spec_t informers[] = {
    {CORRAL_KIND_VCJOB, NULL},
    {CORRAL_KIND_POD, NULL},
    {CORRAL_KIND_PODGROUP, NULL},
    {CORRAL_KIND_QUEUE, NULL},
    {CORRAL_KIND_NODE, NULL},
    {CORRAL_KIND_LEASE, "kube-node-lease"},
    {CORRAL_KIND_LOCALMODELCACHE, NULL},
    {CORRAL_KIND_LOCALMODELNODEGROUP, NULL},
    {CORRAL_KIND_LOCALMODELNODE, NULL},
    {CORRAL_KIND_ISVC, NULL},
    {CORRAL_KIND_CONTROLLERREVISION, NULL},
    {CORRAL_KIND_SERVINGRUNTIME, NULL},
    {CORRAL_KIND_CLUSTERSERVINGRUNTIME, NULL},
};
_Static_assert(CORRAL_ARRAY_LEN(informers) == CORRAL__NINF, "CORRAL__NINF: one per informer");

/* The autoscaler saw requests waiting for a revision at zero: reconcile the
 * services now rather than at the next tick. */
static void as_notify(void *arg)
{
    corral__isvc_poke(arg);
}

static void as_log(void *arg, const char *line)
{
    corral__ctl_log(arg, "%s", line);
}

static int start_informers(corral_controller_t *c, char *err, size_t errlen)
{
    for (size_t i = 0; i < CORRAL__NINF; i++) {
        corral_informer_opts_t io = {.kind = informers[i].kind, .ns = informers[i].ns};
        int rc = corral_informer_start(c->o.cfg, &io, c->q, &c->inf[i], err, errlen);
        if (rc != 0)
            return rc;
    }
    c->informing = true;
    return 0;
}

static const struct {
    const char *name;
    unsigned bit;
} ctl_names[] = {
    {"job", CORRAL_CTL_JOB},
    {"queue", CORRAL_CTL_QUEUE},
    {"nodelifecycle", CORRAL_CTL_NODELIFECYCLE},
    {"garbagecollector", CORRAL_CTL_GC},
    {"usage", CORRAL_CTL_USAGE},
    {"inferenceservice", CORRAL_CTL_ISVC},
};

int corral_controller_parse_list(const char *spec, unsigned *mask, char *err, size_t errlen)
{
    if (!spec) {
        *mask = CORRAL_CTL_ALL;
        return 0;
    }
    unsigned on = 0, off = 0;
    bool all = false;
    const char *p = spec;
    while (*p) {
        size_t n = strcspn(p, ",");
        bool minus = n && *p == '-';
        const char *name = p + minus;
        size_t len = n - minus;
        if (!minus && len == 1 && *name == '*') {
            all = true;
        } else {
            unsigned bit = 0;
            for (size_t i = 0; i < sizeof(ctl_names) / sizeof(ctl_names[0]); i++) {
                if (strlen(ctl_names[i].name) == len && !strncmp(ctl_names[i].name, name, len))
                    bit = ctl_names[i].bit;
            }
            if (!bit) {
                snprintf(err, errlen,
                         "--controllers: unknown controller \"%.*s\" (known: job, queue, "
                         "nodelifecycle, garbagecollector, usage, inferenceservice; \"*\" for "
                         "all, \"-NAME\" to leave one out)",
                         (int)(len > 64 ? 64 : len), name);
                return CORRAL_EINVAL;
            }
            if (minus)
                off |= bit;
            else
                on |= bit;
        }
        p += n;
        if (*p == ',')
            p++;
    }
    *mask = ((all ? CORRAL_CTL_ALL : 0) | on) & ~off;
    return 0;
}

int corral_controller_new(const corral_controller_opts_t *o, corral_controller_t **out, char *err,
                          size_t errlen)
{
    unsigned enabled = CORRAL_CTL_ALL;
    if (corral_controller_parse_list(o->controllers, &enabled, err, errlen) != 0)
        return CORRAL_EINVAL;
    corral_controller_t *c = corral_calloc(1, sizeof(*c));
    c->o = *o;
    c->enabled = enabled;
    if (c->o.node_monitor_grace_ns <= 0)
        c->o.node_monitor_grace_ns = 40 * CORRAL_NS_PER_SEC;
    if (c->o.node_monitor_period_ns <= 0)
        c->o.node_monitor_period_ns = 5 * CORRAL_NS_PER_SEC;
    if (c->o.default_toleration_s < 0)
        c->o.default_toleration_s = 300;
    if (c->o.status_period_ns <= 0)
        c->o.status_period_ns = CORRAL_NS_PER_SEC;
    if (c->o.usage_retention_ns <= 0)
        c->o.usage_retention_ns = INT64_C(90) * 24 * 3600 * CORRAL_NS_PER_SEC;
    if (c->o.usage_max_records <= 0)
        c->o.usage_max_records = 100000;
    if (c->o.usage_prune_period_ns <= 0)
        c->o.usage_prune_period_ns = 600 * CORRAL_NS_PER_SEC;
    c->cl = corral_client_new(o->cfg);
    c->q = corral_evq_new();
    corral__cm_start(c);
    corral__as_opts_t ao = {
        .cfg = o->cfg,
        .router_metrics = o->router_metrics,
        .agent_metrics_port = o->agent_metrics_port,
        .tick_ns = o->autoscaler_tick_ns,
        .stable_window_ns = o->autoscaler_stable_window_ns,
        .panic_window_ns = o->autoscaler_panic_window_ns,
        .scale_to_zero_grace_ns = o->scale_to_zero_grace_ns,
        .max_scale_up_rate = o->max_scale_up_rate,
        .max_scale_down_rate = o->max_scale_down_rate,
        .metrics = c->m.reg,
        .notify = as_notify,
        .notify_arg = c,
        .log = as_log,
        .log_arg = c,
    };
    int arc = corral__as_new(&ao, &c->as, err, errlen);
    if (arc != 0) {
        corral_controller_free(c);
        return arc;
    }
    corral__cache_init(&c->cache);
    if (corral__isvc_start(c, err, errlen) != 0) {
        corral_controller_free(c);
        return CORRAL_EINVAL;
    }
    /* A candidate for the lead starts its informers once it leads: a
     * standby holds no cache and no queue of events over months. */
    int rc = o->leader_elect ? 0 : start_informers(c, err, errlen);
    if (rc != 0) {
        corral_controller_free(c);
        return rc;
    }
    *out = c;
    return 0;
}

void corral_controller_wake(corral_controller_t *c)
{
    corral_evq_wake(c->q);
}

void corral_controller_free(corral_controller_t *c)
{
    if (!c)
        return;
    corral_leader_stop(c->lead, true);
    for (size_t i = 0; i < CORRAL__NINF; i++)
        corral_informer_cancel(c->inf[i]);
    for (size_t i = 0; i < CORRAL__NINF; i++)
        corral_informer_stop(c->inf[i]);
    corral_evq_free(c->q);
    corral__cache_fini(&c->cache);
    corral__timers_fini(&c->timers);
    corral__usage_fini(c);
    corral__isvc_stop(c);
    corral_free(c->dirty.items);
    corral_free(c->gcq.items);
    corral_client_free(c->cl);
    /* No scrape may run the autoscaler's collect callback once it is gone. */
    corral_metrics_server_stop(c->m.srv);
    c->m.srv = NULL;
    corral__as_free(c->as);
    corral__cm_stop(c);
    corral_free(c);
}

/* --- events -------------------------------------------------------------------------------- */

static bool older(const char *rv, const char *cached)
{
    char *e1, *e2;
    unsigned long long a = strtoull(rv, &e1, 10), b = strtoull(cached, &e2, 10);
    return *rv && *cached && !*e1 && !*e2 && a < b;
}

static void drop_from(corral__entries_t *l, const corral__entry_t *e)
{
    for (size_t i = 0; i < l->n; i++) {
        if (l->items[i] == e)
            l->items[i--] = l->items[--l->n];
    }
}

static void on_deleted(corral_controller_t *c, corral_watch_ev_t *ev)
{
    corral__entry_t *e = corral__cache_get(&c->cache, ev->kind, ev->ns, ev->name);
    if (!e)
        return;
    corral__jobs_on_event(c, e, e->ev->obj, CORRAL_WATCH_DELETED);
    corral__isvc_on_event(c, e, e->ev->obj, CORRAL_WATCH_DELETED);
    if (e->isvc_dirty)
        corral__isvc_forget(c, e);
    if (e->kind == CORRAL_KIND_POD && corral__ctl_on(c, CORRAL_CTL_USAGE))
        corral__usage_on_pod(c, e, ev->obj ? ev->obj : e->ev->obj, true);
    char *uid = e->uid ? corral_strdup(e->uid) : NULL;
    if (e->dirty)
        drop_from(&c->dirty, e);
    if (e->gc_check)
        drop_from(&c->gcq, e);
    corral__cache_del(&c->cache, e);
    if (uid)
        corral__gc_on_delete(c, uid);
    corral_free(uid);
}

static void on_event(corral_controller_t *c, corral_watch_ev_t *ev)
{
    if (ev->type == CORRAL_WATCH_SYNCED) {
        /* By the kinds whose SYNCED came: an informer may queue it before
         * corral_informer_synced says so. */
        c->synced_kinds |= UINT64_C(1) << ev->kind;
        bool all = true;
        for (size_t i = 0; i < CORRAL__NINF; i++)
            all = all && (c->synced_kinds & (UINT64_C(1) << informers[i].kind));
        if (all && !c->synced) {
            c->synced = true;
            corral__ctl_log(c, "caches synced");
            corral__timers_push(&c->timers, corral__mono_ns(), CORRAL__T_GC, NULL);
            corral__timers_push(&c->timers, corral__mono_ns(), CORRAL__T_USAGE, NULL);
        }
        corral_watch_ev_free(ev);
        return;
    }
    c->status_dirty = true;
    if (ev->type == CORRAL_WATCH_DELETED || !ev->obj) {
        on_deleted(c, ev);
        corral_watch_ev_free(ev);
        return;
    }
    corral__entry_t *cur = corral__cache_get(&c->cache, ev->kind, ev->ns, ev->name);
    if (cur && older(ev->rv, cur->ev->rv)) {
        corral_watch_ev_free(ev);
        return;
    }
    corral_watch_ev_t *old = NULL;
    corral_watch_type_t type = ev->type;
    corral__entry_t *e = corral__cache_put(&c->cache, ev, &old);
    const corral_obj_t *oldobj = old ? old->obj : NULL;
    corral__jobs_on_event(c, e, oldobj, type);
    corral__nodes_on_event(c, e, oldobj);
    corral__isvc_on_event(c, e, oldobj, type);
    if (e->kind == CORRAL_KIND_POD && corral__ctl_on(c, CORRAL_CTL_USAGE))
        corral__usage_on_pod(c, e, e->ev->obj, false);
    if (e->nowners) {
        bool known = true;
        for (size_t i = 0; i < e->nowners; i++)
            known = known && corral__cache_by_uid(&c->cache, e->owners[i]);
        if (!known)
            corral__gc_queue(c, e);
    }
    corral_watch_ev_free(old);
}

/* --- timers and the loop ------------------------------------------------------------------- */

typedef void (*pass_fn)(corral_controller_t *c);

/* Run one controller's pass and count it. */
static void timed(corral_controller_t *c, const char *name, pass_fn fn)
{
    int64_t t0 = corral__mono_ns();
    fn(c);
    corral__cm_reconciled(c, name, corral__mono_ns() - t0);
}

static void fire(corral_controller_t *c, corral__timer_t *t)
{
    if (t->kind == CORRAL__T_NODES) {
        if (!t->key)
            corral__timers_push(&c->timers, corral__mono_ns() + c->o.node_monitor_period_ns,
                                CORRAL__T_NODES, NULL);
        else
            c->evict_timer_at = 0;
        if (corral__ctl_on(c, CORRAL_CTL_NODELIFECYCLE))
            timed(c, "nodelifecycle", corral__nodes_pass);
    } else if (t->kind == CORRAL__T_JOB && t->key) {
        const char *slash = strchr(t->key, '/');
        if (slash) {
            char ns[300];
            snprintf(ns, sizeof(ns), "%.*s", (int)(slash - t->key), t->key);
            corral__entry_t *e = corral__cache_get(&c->cache, CORRAL_KIND_VCJOB, ns, slash + 1);
            if (e && corral__ctl_on(c, CORRAL_CTL_JOB))
                corral__mark_job(c, e);
        }
    } else if (t->kind == CORRAL__T_STATUS) {
        c->status_timer = false;
        if (c->status_dirty && c->synced && corral__ctl_on(c, CORRAL_CTL_QUEUE))
            timed(c, "status", corral__status_sync);
    } else if (t->kind == CORRAL__T_GC) {
        if (corral__ctl_on(c, CORRAL_CTL_GC))
            timed(c, "gc", corral__gc_run);
    } else if (t->kind == CORRAL__T_USAGE) {
        corral__timers_push(&c->timers, corral__mono_ns() + c->o.usage_prune_period_ns,
                            CORRAL__T_USAGE, NULL);
        if (corral__ctl_on(c, CORRAL_CTL_USAGE))
            timed(c, "usage-retention", corral__usage_prune);
    } else if (t->kind == CORRAL__T_USAGE_RETRY) {
        if (corral__ctl_on(c, CORRAL_CTL_USAGE))
            timed(c, "usage", corral__usage_retry);
    } else if (t->kind == CORRAL__T_ISVC) {
        corral__timers_push(&c->timers, corral__mono_ns() + CORRAL_NS_PER_SEC, CORRAL__T_ISVC,
                            NULL);
        if (c->synced && corral__ctl_on(c, CORRAL_CTL_ISVC))
            corral__isvc_tick(c);
    }
    corral_free(t->key);
}

static void reconcile(corral_controller_t *c)
{
    if (!c->synced)
        return;
    while (c->dirty.n) {
        corral__entry_t *e = c->dirty.items[--c->dirty.n];
        e->dirty = false;
        if (!corral__ctl_on(c, CORRAL_CTL_JOB))
            continue;
        int64_t t0 = corral__mono_ns();
        corral__jobs_reconcile(c, e);
        corral__cm_reconciled(c, "job", corral__mono_ns() - t0);
    }
    if (corral__ctl_on(c, CORRAL_CTL_ISVC))
        corral__isvc_reconcile(c);
    if (c->synced && c->gcq.n && corral__ctl_on(c, CORRAL_CTL_GC))
        timed(c, "gc", corral__gc_run);
    if (c->status_dirty && !c->status_timer && corral__ctl_on(c, CORRAL_CTL_QUEUE)) {
        c->status_timer = true;
        corral__timers_push(&c->timers, corral__mono_ns() + c->o.status_period_ns, CORRAL__T_STATUS,
                            NULL);
    }
}

static void log_leader(void *ctx, const char *msg)
{
    corral__ctl_log(ctx, "%s", msg);
}

/* Campaign for the Lease and wait until this replica leads (0), stop is set
 * (1) or the election cannot start (CORRAL_EIO). Then start the informers. */
static int await_lead(corral_controller_t *c, const volatile int *stop)
{
    char err[512];
    corral_leader_opts_t lo = {
        .name = c->o.lease_name ? c->o.lease_name : "corral-controller",
        .ns = c->o.lease_ns ? c->o.lease_ns : "kube-system",
        .lease_ms = c->o.lease_ms,
        .renew_ms = c->o.renew_ms,
        .retry_ms = c->o.retry_ms,
        .log = log_leader,
        .log_ctx = c,
    };
    if (corral_leader_start(c->o.cfg, &lo, &c->lead, err, sizeof(err)) != 0) {
        corral__ctl_log(c, "leader election: %s", err);
        return CORRAL_EIO;
    }
    /* Nothing is queued before the informers start: the queue is only a
     * wait that corral_controller_wake can cut short. */
    while (!*stop && !corral_leader_is_leader(c->lead)) {
        if (corral_leader_lost(c->lead))
            return CORRAL_EIO;
        for (corral_watch_ev_t *ev = corral_evq_take(c->q, 100), *next; ev; ev = next) {
            next = ev->next;
            corral_watch_ev_free(ev);
        }
    }
    if (*stop)
        return 1;
    if (start_informers(c, err, sizeof(err)) != 0) {
        corral__ctl_log(c, "%s", err);
        return CORRAL_EIO;
    }
    return 0;
}

int corral_controller_run(corral_controller_t *c, const volatile int *stop)
{
    corral_client_set_abort(c->cl, stop);
    if (c->o.leader_elect && !c->informing) {
        int rc = await_lead(c, stop);
        if (rc != 0)
            return rc < 0 ? rc : 0;
    }
    corral__timers_push(&c->timers, corral__mono_ns() + c->o.node_monitor_period_ns,
                        CORRAL__T_NODES, NULL);
    corral__timers_push(&c->timers, corral__mono_ns() + CORRAL_NS_PER_SEC, CORRAL__T_ISVC, NULL);
    while (!*stop) {
        if (c->lead && corral_leader_lost(c->lead)) {
            corral__ctl_log(c, "lost the lead; exiting so that another replica takes over");
            return CORRAL_EIO;
        }
        int64_t wait = corral__timers_next(&c->timers, corral__mono_ns());
        int ms = wait < 0 || wait > 1000000000 ? 1000 : (int)(wait / 1000000);
        corral_watch_ev_t *list = corral_evq_take(c->q, ms);
        while (list) {
            corral_watch_ev_t *next = list->next;
            on_event(c, list);
            list = next;
        }
        reconcile(c);
        corral__timer_t t;
        while (!*stop && corral__timers_pop_due(&c->timers, corral__mono_ns(), &t)) {
            fire(c, &t);
            reconcile(c);
        }
        corral__cm_tick(c);
    }
    return 0;
}
