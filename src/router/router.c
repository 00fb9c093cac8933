/*
 * The router's setup (listening socket, eventfd, epoll), its metrics and the
 * thread that turns the informers' InferenceServices and pods into route
 * tables for the loop (src/router/proxy.c).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "corral/common.h"
#include "corral/net.h"
#include "router/router_loop.h"

#define LABEL_ISVC "serving.kserve.io/inferenceservice"

/* --- the object cache of the builder thread ---------------------------------------------- */

typedef struct cache {
    corral_watch_ev_t **evs; /* each owns its object; key in its arena */
    const char **keys;
    size_t n, cap, capk;
    corral_hmap_t ix;
} cache_t;

static void cache_put(cache_t *c, corral_watch_ev_t *ev)
{
    const char *key = corral_arena_printf(&ev->arena, "%s/%s", ev->ns, ev->name);
    uint32_t i;
    if (corral_hmap_get(&c->ix, key, &i)) {
        if (ev->type == CORRAL_WATCH_DELETED) {
            corral_hmap_del(&c->ix, c->keys[i]);
            corral_watch_ev_free(c->evs[i]);
            c->n--;
            if (i < c->n) {
                c->evs[i] = c->evs[c->n];
                c->keys[i] = c->keys[c->n];
                corral_hmap_put(&c->ix, c->keys[i], i);
            }
            corral_watch_ev_free(ev);
            return;
        }
        corral_hmap_del(&c->ix, c->keys[i]);
        corral_watch_ev_free(c->evs[i]);
        c->evs[i] = ev;
        c->keys[i] = key;
        corral_hmap_put(&c->ix, key, i);
        return;
    }
    if (ev->type == CORRAL_WATCH_DELETED || !ev->obj) {
        corral_watch_ev_free(ev);
        return;
    }
    corral_grow((void **)&c->evs, &c->cap, c->n + 1,
                sizeof(*c->evs)); /* NOLINT(bugprone-sizeof-expression): pointers */
    corral_grow((void **)&c->keys, &c->capk, c->n + 1,
                sizeof(*c->keys)); /* NOLINT(bugprone-sizeof-expression): pointers */
    c->evs[c->n] = ev;
    c->keys[c->n] = key;
    corral_hmap_put(&c->ix, key, (uint32_t)c->n);
    c->n++;
}

static void cache_fini(cache_t *c)
{
    for (size_t i = 0; i < c->n; i++)
        corral_watch_ev_free(c->evs[i]);
    corral_free(c->evs);
    corral_free(c->keys);
    corral_hmap_fini(&c->ix);
}

static void build_and_publish(corral_router_t *r, cache_t *isvcs, cache_t *pods)
{
    const corral_obj_t **io =
        corral_calloc(isvcs->n + 1, sizeof(*io)); /* NOLINT(bugprone-sizeof-expression): pointers */
    const corral_obj_t **po =
        corral_calloc(pods->n + 1, sizeof(*po)); /* NOLINT(bugprone-sizeof-expression): pointers */
    for (size_t i = 0; i < isvcs->n; i++)
        io[i] = isvcs->evs[i]->obj;
    for (size_t i = 0; i < pods->n; i++)
        po[i] = pods->evs[i]->obj;
    corral__rt_table_t *t = corral__rt_build(io, isvcs->n, po, pods->n);
    corral_free(io);
    corral_free(po);
    corral__router_publish(r, t);
}

static void *builder_main(void *arg)
{
    corral_router_t *r = arg;
    cache_t isvcs = {0}, pods = {0};
    corral_hmap_init(&isvcs.ix);
    corral_hmap_init(&pods.ix);
    bool synced[2] = {false, false};
    while (!r->builder_stop) {
        corral_watch_ev_t *list = corral_evq_take(r->q, 1000);
        bool changed = false;
        while (list) {
            corral_watch_ev_t *ev = list;
            list = ev->next;
            ev->next = NULL;
            if (ev->type == CORRAL_WATCH_SYNCED) {
                synced[ev->kind == CORRAL_KIND_POD] = true;
                changed = true;
                corral_watch_ev_free(ev);
                continue;
            }
            changed = true;
            cache_put(ev->kind == CORRAL_KIND_POD ? &pods : &isvcs, ev);
        }
        /* publish once both lists came (before, a partial table would 404) */
        if (changed && synced[0] && synced[1])
            build_and_publish(r, &isvcs, &pods);
    }
    cache_fini(&isvcs);
    cache_fini(&pods);
    return NULL;
}

/* --- metrics ------------------------------------------------------------------------------- */

static void collect(corral_metrics_t *m, void *arg)
{
    (void)m;
    corral_router_t *r = arg;
    int64_t now = corral__now_ns();
    pthread_mutex_lock(&r->smu);
    /* every per-revision family is a snapshot of the revisions the router
     * still holds: a revision gone from the traffic lists leaves the page
     * (the duration histogram excepted: the registry bounds its series) */
    corral_metric_t *snap[] = {r->m_arrivals, r->m_conc,     r->m_inflight,
                               r->m_queued,   r->m_retries,  r->m_overflows,
                               r->m_timeouts, r->m_requests, r->m_pod_inflight};
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(snap); i++)
        corral_metric_refill_begin(snap[i]);
    for (size_t i = 0; i < r->nrevs; i++) {
        const corral__rev_st_t *rs = r->revs[i];
        const char *lv[] = {rs->ns, rs->svc, rs->rev, NULL};
        corral_metric_set(r->m_arrivals, lv, (double)rs->arrivals);
        corral_metric_set(r->m_conc, lv, corral__rev_conc(rs, now));
        corral_metric_set(r->m_inflight, lv, rs->inflight);
        corral_metric_set(r->m_queued, lv, rs->queued);
        corral_metric_set(r->m_retries, lv, (double)rs->retries);
        corral_metric_set(r->m_overflows, lv, (double)rs->overflows);
        corral_metric_set(r->m_timeouts, lv, (double)rs->timeouts);
        for (size_t k = 0; k < rs->ncodes; k++) {
            char code[8];
            snprintf(code, sizeof(code), "%d", rs->codes[k].code);
            lv[3] = code;
            corral_metric_set(r->m_requests, lv, (double)rs->codes[k].n);
        }
    }
    for (size_t i = 0; i < r->npods; i++) {
        const corral__pod_st_t *ps = r->pods[i];
        const char *lv[] = {ps->ns, ps->name};
        corral_metric_set(r->m_pod_inflight, lv,
                          __atomic_load_n(&ps->outstanding, __ATOMIC_RELAXED));
    }
    static const char *const codes[] = {"400", "404", "408", "431", "501", "503"};
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(codes); i++) {
        const char *lv[] = {codes[i]};
        if (r->unrouted[i])
            corral_metric_set(r->m_unrouted, lv, (double)r->unrouted[i]);
    }
    corral_metric_set(r->m_conns, NULL, (double)r->nconns);
    pthread_mutex_unlock(&r->smu);
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(snap); i++)
        corral_metric_refill_end(snap[i]);
}

static void metrics_init(corral_router_t *r)
{
    corral_metrics_t *m = corral_metrics_new();
    r->m = m;
    static const char *const rl[] = {"namespace", "service", "revision", NULL};
    static const char *const rlc[] = {"namespace", "service", "revision", "code", NULL};
    static const char *const pl[] = {"namespace", "pod", NULL};
    static const char *const cl[] = {"code", NULL};
    r->m_arrivals = corral_metrics_counter(
        m, "corral_router_request_arrivals_total",
        "Requests routed to the revision, counted on arrival (queued ones included).", rl);
    r->m_conc = corral_metrics_counter(
        m, "corral_router_concurrency_seconds_total",
        "Integral over time of the revision's in-flight plus queued requests (request-seconds).",
        rl);
    r->m_inflight =
        corral_metrics_gauge(m, "corral_router_in_flight_requests",
                             "Requests sent to a replica of the revision, not done.", rl);
    r->m_queued = corral_metrics_gauge(m, "corral_router_queued_requests",
                                       "Requests waiting for a ready replica of the revision.", rl);
    r->m_pod_inflight = corral_metrics_gauge(m, "corral_router_pod_in_flight_requests",
                                             "Requests sent to the pod, not done.", pl);
    r->m_requests = corral_metrics_counter(m, "corral_router_requests_total",
                                           "Requests of the revision answered, by HTTP status "
                                           "(499: the client went away first).",
                                           rlc);
    double b[16];
    size_t nb = corral_metrics_exp_buckets(0.0005, 2, 16, b);
    r->m_duration = corral_metrics_histogram(
        m, "corral_router_request_duration_seconds",
        "Time from a request's head to the end of its response, queueing included.", rl, b, nb);
    r->m_retries = corral_metrics_counter(m, "corral_router_retries_total",
                                          "Requests sent again to another replica.", rl);
    r->m_overflows =
        corral_metrics_counter(m, "corral_router_queue_overflows_total",
                               "Requests refused (503) because the revision's queue was full.", rl);
    r->m_timeouts = corral_metrics_counter(
        m, "corral_router_queue_timeouts_total",
        "Requests answered 503 after waiting --queue-timeout for a ready replica.", rl);
    r->m_unrouted = corral_metrics_counter(m, "corral_router_unrouted_requests_total",
                                           "Requests answered by the router before routing "
                                           "(unknown service, malformed), by status.",
                                           cl);
    r->m_conns = corral_metrics_gauge(m, "corral_router_client_connections",
                                      "Client connections open.", NULL);
    corral_metrics_on_collect(m, collect, r);
}

/* --- lifecycle ---------------------------------------------------------------------------- */

int corral_router_new(const corral_router_opts_t *o, corral_router_t **out, char *err,
                      size_t errlen)
{
    corral_router_t *r = corral_calloc(1, sizeof(*r));
    r->o = *o;
    r->lfd = r->epfd = r->evfd = -1;
    if (!r->o.listen)
        r->o.listen = "127.0.0.1:8080";
    if (!r->o.metrics_listen)
        r->o.metrics_listen = "127.0.0.1:9091";
    if (r->o.max_conns <= 0)
        r->o.max_conns = 10000;
    if (r->o.queue_limit <= 0)
        r->o.queue_limit = 1000;
    if (r->o.queue_timeout_ns <= 0)
        r->o.queue_timeout_ns = 300 * INT64_C(1000000000);
    if (r->o.idle_timeout_ns <= 0)
        r->o.idle_timeout_ns = 75 * INT64_C(1000000000);
    if (r->o.header_timeout_ns <= 0)
        r->o.header_timeout_ns = 30 * INT64_C(1000000000);
    if (r->o.connect_timeout_ns <= 0)
        r->o.connect_timeout_ns = 5 * INT64_C(1000000000);
    if (r->o.probe_period_ns <= 0)
        r->o.probe_period_ns = 50 * INT64_C(1000000);
    if (r->o.max_idle_per_pod <= 0)
        r->o.max_idle_per_pod = 64;
    pthread_mutex_init(&r->tmu, NULL);
    pthread_mutex_init(&r->smu, NULL);
    corral_hmap_init(&r->rev_ix);
    corral_hmap_init(&r->pod_ix);
    metrics_init(r);
    r->lfd = corral_net_listen(r->o.listen, 4096, &r->port, "router", err, errlen);
    if (r->lfd < 0) {
        corral_router_free(r);
        return CORRAL_EIO;
    }
    r->epfd = epoll_create1(EPOLL_CLOEXEC);
    r->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (r->epfd < 0 || r->evfd < 0) {
        snprintf(err, errlen, "router: epoll/eventfd: %s", strerror(errno));
        corral_router_free(r);
        return CORRAL_EIO;
    }
    if (strcmp(r->o.metrics_listen, "off") != 0) {
        int rc = corral_metrics_serve(r->o.metrics_listen, r->m, NULL, 0, &r->mport, &r->ms, err,
                                      errlen);
        if (rc != 0) {
            corral_router_free(r);
            return rc;
        }
    }
    /* an empty table until the informers have listed */
    corral__router_publish(r, corral__rt_build(NULL, 0, NULL, 0));
    if (r->o.cfg) {
        r->q = corral_evq_new();
        corral_informer_opts_t io[2] = {
            {.kind = CORRAL_KIND_ISVC, .name = "inferenceservices"},
            {.kind = CORRAL_KIND_POD, .label_selector = LABEL_ISVC, .name = "pods"},
        };
        for (size_t i = 0; i < 2; i++) {
            int rc = corral_informer_start(r->o.cfg, &io[i], r->q, &r->inf[i], err, errlen);
            if (rc != 0) {
                corral_router_free(r);
                return rc;
            }
        }
        if (pthread_create(&r->builder, NULL, builder_main, r) != 0) {
            snprintf(err, errlen, "router: cannot start a thread");
            corral_router_free(r);
            return CORRAL_EIO;
        }
        r->builder_started = true;
    }
    *out = r;
    return 0;
}

int corral_router_port(const corral_router_t *r)
{
    return r->port;
}

int corral_router_metrics_port(const corral_router_t *r)
{
    return r->mport;
}

int corral_router_run(corral_router_t *r)
{
    return corral__router_loop(r);
}

void corral_router_stop(corral_router_t *r)
{
    r->stop = 1;
    uint64_t one = 1;
    ssize_t n = write(r->evfd, &one, sizeof(one));
    (void)n;
}

void corral_router_free(corral_router_t *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < 2; i++)
        corral_informer_cancel(r->inf[i]);
    for (size_t i = 0; i < 2; i++)
        corral_informer_stop(r->inf[i]);
    if (r->builder_started) {
        r->builder_stop = 1;
        corral_evq_wake(r->q);
        pthread_join(r->builder, NULL);
    }
    corral_evq_free(r->q);
    corral_metrics_server_stop(r->ms);
    corral__router_loop_free(r);
    if (r->lfd >= 0)
        close(r->lfd);
    if (r->epfd >= 0)
        close(r->epfd);
    if (r->evfd >= 0)
        close(r->evfd);
    corral_metrics_free(r->m);
    pthread_mutex_destroy(&r->tmu);
    pthread_mutex_destroy(&r->smu);
    corral_free(r);
}
