/*
 * The autoscaler of InferenceService revisions (autoscale.h): per revision
 * the KPA state (kpa.c) and the signal its service scales on; a thread that
 * collects the signals every tick (ascollect.c) and records them; and the
 * decision the InferenceService controller asks for, made from the latest
 * samples under the mutex, with no I/O.
 *
 * Signals, per revision:
 *   concurrency  d(corral_router_concurrency_seconds_total)/dt at the router
 *   rps          d(corral_router_request_arrivals_total)/dt at the router
 *   gpu_utilization  the sum over the revision's pods of the mean
 *                DCGM_FI_DEV_GPU_UTIL of each pod's GPUs (agents, node proxy)
 *   PodMetric    the sum over the pods of the named series of their /metrics
 *                (vLLM's vllm:num_requests_waiting, ...running)
 *   External     a Prometheus instant query (sum of the vector)
 * desired = ceil(value / target per replica) (kpa.c); the router's queue
 * counts at zero replicas, and its traffic decides when a revision is idle.
 */
#include "controller/autoscale.h"

#include <curl/curl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "controller/ascollect.h"
#include "controller/kpa.h"
#include "corral/common.h"
#include "corral/hmap.h"
#include "corral/timefmt.h"

#define MAX_REVS        4096 /* revisions tracked; more are kept as they are */
#define MAX_PODS        1024 /* pods of one revision looked at */
#define MAX_ROUTERS     8
#define MAX_NODES       256 /* node scrapes per tick */
#define MAX_POD_SCRAPES 512 /* replica scrapes per tick */
#define SEC             CORRAL_NS_PER_SEC

typedef enum sig {
    SIG_NONE,
    SIG_CONCURRENCY,
    SIG_RPS,
    SIG_GPU,
    SIG_POD,
    SIG_EXTERNAL,
} sig_t_;

typedef struct strs {
    char **v;
    size_t n;
} strs_t;

typedef struct rev {
    char *key, *ns, *service, *revision;
    corral__kpa_t kpa;
    int64_t kpa_window_ns; /* the window kpa's buckets were sized for */
    corral__kpa_params_t p;
    sig_t_ sig;
    char metric[96]; /* the name shown in reasons and metrics */
    char *query, *server;
    strs_t names, pods, nodes, addrs;
    /* the latest from the router (collector) */
    double queued;
    /* the latest decision */
    int32_t ready, pending, desired;
    bool panic, decided;
    double stable, panic_avg;
    /* per-tick results of the collector, before they are recorded */
    double value;
    bool have_value;
} rev_t;

struct corral__autoscaler {
    corral__as_opts_t o;
    char *routers[MAX_ROUTERS];
    size_t nrouters;
    long timeout_ms;
    pthread_t th;
    bool started, stop;
    volatile int abort_flag; /* set at free: the collector's fetches stop early */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    /* under mu */
    rev_t **revs;
    size_t nrevs, caprevs;
    corral_hmap_t idx;
    corral__asc_table_t pod_load; /* ns/pod: [0] router in-flight, [1] GPU util, [2] has router */
    /* the collector's own (its thread only) */
    corral_client_t *client;
    void *curl;
    corral__asc_table_t rcur, rprev, pcur, gpu;
    int64_t rprev_ns;
    bool rprev_ok;
    corral_buf_t body;
    /* metrics */
    corral_metric_t *m_desired, *m_ready, *m_pending, *m_panic, *m_observed, *m_target;
    corral_metric_t *m_scrapes, *m_errors;
    int64_t logged_ns[4]; /* the last log line per source (collector's thread) */
};

static const char *const sources[] = {"router", "node", "pod", "prometheus"};

/* --- small helpers ----------------------------------------------------------------- */

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * SEC + ts.tv_nsec;
}

static void strs_free(strs_t *s)
{
    for (size_t i = 0; i < s->n; i++)
        corral_free(s->v[i]);
    corral_free(s->v);
    *s = (strs_t){0};
}

/* Copy n strings (NULL ones as NULL), at most max. */
static void strs_set(strs_t *s, const char *const *v, size_t n, size_t max)
{
    strs_free(s);
    if (!v || n == 0)
        return;
    if (n > max)
        n = max;
    s->v = corral_calloc(n, sizeof(*s->v));
    s->n = n;
    for (size_t i = 0; i < n; i++)
        s->v[i] = v[i] ? corral_strdup(v[i]) : NULL;
}

static void set_str(char **dst, const char *src)
{
    if (*dst && src && strcmp(*dst, src) == 0)
        return;
    corral_free(*dst);
    *dst = src ? corral_strdup(src) : NULL;
}

static bool stopping(const corral__autoscaler_t *as)
{
    return __atomic_load_n(&as->abort_flag, __ATOMIC_RELAXED) != 0;
}

/* Count a fetch of source; a failure goes to the log at most once per 30 s
 * per source, with what failed. */
static void scrape_count(corral__autoscaler_t *as, const char *source, bool ok, const char *err)
{
    const char *v[] = {source};
    if (as->m_scrapes)
        corral_metric_add(as->m_scrapes, v, 1);
    if (ok)
        return;
    if (as->m_errors)
        corral_metric_add(as->m_errors, v, 1);
    if (!as->o.log)
        return;
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(sources); i++) {
        if (strcmp(sources[i], source) != 0)
            continue;
        int64_t now = mono_ns();
        if (as->logged_ns[i] != 0 && now - as->logged_ns[i] < 30 * SEC)
            return;
        as->logged_ns[i] = now;
        char line[512];
        snprintf(line, sizeof(line),
                 "autoscaler: %s metrics: %s (samples from it are skipped; more failures are "
                 "counted in corral_autoscaler_scrape_errors_total)",
                 source, err && *err ? err : "failed");
        as->o.log(as->o.log_arg, line);
    }
}

/* --- revisions --------------------------------------------------------------------- */

static void rev_free(rev_t *r)
{
    corral__kpa_fini(&r->kpa);
    corral_free(r->key);
    corral_free(r->ns);
    corral_free(r->service);
    corral_free(r->revision);
    corral_free(r->query);
    corral_free(r->server);
    strs_free(&r->names);
    strs_free(&r->pods);
    strs_free(&r->nodes);
    strs_free(&r->addrs);
    corral_free(r);
}

static rev_t *rev_find(corral__autoscaler_t *as, const char *ns, const char *revision)
{
    char key[512];
    uint32_t i;
    snprintf(key, sizeof(key), "%s/%s", ns, revision);
    return corral_hmap_get(&as->idx, key, &i) ? as->revs[i] : NULL;
}

static void reindex(corral__autoscaler_t *as)
{
    corral_hmap_fini(&as->idx);
    corral_hmap_init(&as->idx);
    for (size_t i = 0; i < as->nrevs; i++)
        corral_hmap_put(&as->idx, as->revs[i]->key, (uint32_t)i);
}

static rev_t *rev_get(corral__autoscaler_t *as, const char *ns, const char *revision)
{
    rev_t *r = rev_find(as, ns, revision);
    if (r || as->nrevs >= MAX_REVS)
        return r;
    r = corral_calloc(1, sizeof(*r));
    size_t n = strlen(ns) + strlen(revision) + 2;
    r->key = corral_malloc(n);
    snprintf(r->key, n, "%s/%s", ns, revision);
    r->ns = corral_strdup(ns);
    r->revision = corral_strdup(revision);
    if (as->nrevs == as->caprevs) {
        as->caprevs = as->caprevs ? as->caprevs * 2 : 16;
        as->revs = corral_realloc(as->revs, as->caprevs * sizeof(rev_t *));
    }
    as->revs[as->nrevs] = r;
    corral_hmap_put(&as->idx, r->key, (uint32_t)as->nrevs);
    as->nrevs++;
    return r;
}

/* The target of a traffic metric: scaleTarget, else Knative's target
 * annotation, else containerConcurrency (concurrency only), else Knative's
 * default; times the target utilization (Knative's 70% unless annotated). */
static double traffic_target(const corral_isvc_component_t *c, bool rps)
{
    const corral_isvc_knative_t *k = &c->knative;
    double t = rps ? 200 : 100;
    if (c->scale_target.set)
        t = c->scale_target.v;
    else if (k->target.set)
        t = k->target.v;
    else if (!rps && c->container_concurrency.set && c->container_concurrency.v > 0)
        t = (double)c->container_concurrency.v;
    double util = k->target_utilization.set ? k->target_utilization.v : 70;
    return t * util / 100.0;
}

/* The signal and target of a component. */
static void rev_signal(rev_t *r, const corral_isvc_component_t *c)
{
    r->p.scale_by_current = false;
    if (c->nmetrics > 0) {
        const corral_isvc_metric_t *m = &c->metrics[0];
        const corral_isvc_metric_target_t *t = &m->target;
        r->p.target = t->average_value.set ? t->average_value.v : t->value.set ? t->value.v : 1;
        if (strcmp(m->type, "External") == 0) {
            r->sig = SIG_EXTERNAL;
            r->p.scale_by_current = t->type && strcmp(t->type, "Value") == 0;
            set_str(&r->query, m->query);
            set_str(&r->server, m->server_address);
            snprintf(r->metric, sizeof(r->metric), "external");
        } else if (strcmp(m->type, "PodMetric") == 0) {
            r->sig = SIG_POD;
            strs_set(&r->names, m->metric_names.items, m->metric_names.n, 16);
            snprintf(r->metric, sizeof(r->metric), "%s%s",
                     m->metric_names.n ? m->metric_names.items[0] : "pod metric",
                     m->metric_names.n > 1 ? "+" : "");
        } else {
            r->sig = SIG_NONE;
            snprintf(r->metric, sizeof(r->metric), "%s", m->resource ? m->resource : "resource");
        }
        return;
    }
    const char *metric = c->scale_metric     ? c->scale_metric
                         : c->knative.metric ? c->knative.metric
                                             : "concurrency";
    snprintf(r->metric, sizeof(r->metric), "%s", metric);
    if (strcmp(metric, "concurrency") == 0) {
        r->sig = SIG_CONCURRENCY;
        r->p.target = traffic_target(c, false);
    } else if (strcmp(metric, "rps") == 0) {
        r->sig = SIG_RPS;
        r->p.target = traffic_target(c, true);
    } else if (strcmp(metric, "gpu_utilization") == 0) {
        r->sig = SIG_GPU;
        r->p.target = c->scale_target.set     ? c->scale_target.v
                      : c->knative.target.set ? c->knative.target.v
                                              : 80;
    } else {
        r->sig = SIG_NONE; /* cpu, memory: not measured */
    }
}

/* Windows, rates and grace: the flags, overridden by the annotations. */
static void rev_params(corral__autoscaler_t *as, rev_t *r, const corral_isvc_component_t *c)
{
    const corral_isvc_knative_t *k = &c->knative;
    corral__kpa_params_t *p = &r->p;
    p->stable_ns = k->window_ns.set ? k->window_ns.v : as->o.stable_window_ns;
    p->panic_ns = k->panic_window_pct.set
                      ? (int64_t)((double)p->stable_ns * k->panic_window_pct.v / 100)
                      : as->o.panic_window_ns;
    if (p->panic_ns > p->stable_ns)
        p->panic_ns = p->stable_ns;
    if (p->panic_ns < SEC)
        p->panic_ns = SEC;
    p->grace_ns = as->o.scale_to_zero_grace_ns;
    if (k->retention_ns.set && k->retention_ns.v > p->grace_ns)
        p->grace_ns = k->retention_ns.v;
    p->panic_threshold =
        (k->panic_threshold_pct.set ? k->panic_threshold_pct.v : as->o.panic_threshold) / 100.0;
    p->max_up_rate = k->max_scale_up_rate.set ? k->max_scale_up_rate.v : as->o.max_scale_up_rate;
    p->max_down_rate =
        k->max_scale_down_rate.set ? k->max_scale_down_rate.v : as->o.max_scale_down_rate;
    p->initial_scale = k->initial_scale.set ? k->initial_scale.v : 1;
    rev_signal(r, c);
    if (!(p->target > 0))
        p->target = 1;
    if (r->kpa_window_ns != p->stable_ns) {
        corral__kpa_fini(&r->kpa);
        corral__kpa_init(&r->kpa, p->stable_ns);
        r->kpa_window_ns = p->stable_ns;
    }
}

/* --- decisions ---------------------------------------------------------------------- */

static void fmt_window(int64_t ns, char *out, size_t len)
{
    corral_duration_format(ns, out, len);
}

int corral__as_decide(corral__autoscaler_t *as, const corral__as_input_t *in, int64_t now_ns,
                      corral__as_decision_t *out)
{
    *out = (corral__as_decision_t){0};
    if (!in || !in->ns || !in->revision || !in->comp)
        return CORRAL_EINVAL;
    int32_t current = in->ready + in->pending;
    pthread_mutex_lock(&as->mu);
    rev_t *r = rev_get(as, in->ns, in->revision);
    if (!r) {
        pthread_mutex_unlock(&as->mu);
        out->desired = current;
        snprintf(out->reason, sizeof(out->reason),
                 "kept at %d: the autoscaler tracks at most %d revisions", (int)current, MAX_REVS);
        return 0;
    }
    set_str(&r->service, in->service);
    rev_params(as, r, in->comp);
    strs_set(&r->pods, in->pods, in->npods, MAX_PODS);
    strs_set(&r->nodes, in->pod_nodes, in->pod_nodes ? in->npods : 0, MAX_PODS);
    strs_set(&r->addrs, in->pod_addrs, in->pod_addrs ? in->npods : 0, MAX_PODS);
    corral__kpa_out_t ko;
    int64_t queued = (int64_t)r->queued;
    corral__kpa_decide(&r->kpa, &r->p, now_ns, in->ready, in->pending, queued, &ko);
    r->ready = in->ready;
    r->pending = in->pending;
    r->desired = ko.desired;
    r->panic = ko.panic;
    r->stable = ko.stable;
    r->panic_avg = ko.panic_avg;
    r->decided = true;
    out->desired = ko.desired;
    out->changed = ko.changed;
    char sw[32], pw[32], pend[32] = "", q[32] = "", why[96] = "";
    fmt_window(r->p.stable_ns, sw, sizeof(sw));
    fmt_window(r->p.panic_ns, pw, sizeof(pw));
    if (in->pending > 0)
        snprintf(pend, sizeof(pend), " (%d pending)", (int)in->pending);
    if (queued > 0)
        snprintf(q, sizeof(q), ", queued %lld", (long long)queued);
    if (ko.why)
        snprintf(why, sizeof(why), ", %s", ko.why);
    if (r->sig == SIG_NONE)
        snprintf(out->reason, sizeof(out->reason),
                 "%s is not measured by Corral%s: kept, %d%s -> %d", r->metric, q, (int)current,
                 pend, (int)ko.desired);
    else if (ko.no_data)
        snprintf(out->reason, sizeof(out->reason),
                 "%s: no sample in the stable window %s%s%s, %d%s -> %d", r->metric, sw, q, why,
                 (int)current, pend, (int)ko.desired);
    else
        snprintf(out->reason, sizeof(out->reason),
                 "%s %.3g (stable %s %.3g, panic %s %.3g, target %.3g%s): %s%s, %d%s -> %d",
                 r->metric, ko.latest, sw, ko.stable, pw, ko.panic_avg, r->p.target, q,
                 ko.panic ? "panic" : "stable", why, (int)current, pend, (int)ko.desired);
    pthread_mutex_unlock(&as->mu);
    return 0;
}

size_t corral__as_victim(corral__autoscaler_t *as, const char *ns, const char *const *pods,
                         const bool *ready, size_t npods)
{
    for (size_t i = 0; i < npods; i++)
        if (ready && !ready[i])
            return i;
    size_t best = 0;
    double best_load = INFINITY;
    pthread_mutex_lock(&as->mu);
    bool router = false; /* the router reports on these pods: one it omits has none in flight */
    for (size_t i = 0; i < npods && !router; i++) {
        const double *v = corral__asc_table_get(&as->pod_load, ns, pods[i]);
        router = v && v[2] > 0;
    }
    for (size_t i = 0; i < npods; i++) {
        const double *v = corral__asc_table_get(&as->pod_load, ns, pods[i]);
        /* The router's in-flight requests, else the GPU utilization (scaled
         * under one request), else unknown: last. */
        double load = router ? (v && v[2] > 0 ? v[0] : 0) : v ? v[1] / 1000.0 : 1e12;
        if (load < best_load) {
            best_load = load;
            best = i;
        }
    }
    pthread_mutex_unlock(&as->mu);
    return best;
}

void corral__as_forget(corral__autoscaler_t *as, const char *ns, const char *revision)
{
    pthread_mutex_lock(&as->mu);
    rev_t *r = rev_find(as, ns, revision);
    if (r) {
        for (size_t i = 0; i < as->nrevs; i++) {
            if (as->revs[i] == r) {
                as->revs[i] = as->revs[--as->nrevs];
                break;
            }
        }
        rev_free(r);
        reindex(as);
    }
    pthread_mutex_unlock(&as->mu);
}

/* --- collection ---------------------------------------------------------------------- */

/* What the collector needs of one revision, copied under the mutex. */
typedef struct plan_rev {
    char *key, *ns, *query, *server;
    sig_t_ sig;
    strs_t names, pods, nodes, addrs;
    double value;
    bool ok;
} plan_rev_t;

static void plan_free(plan_rev_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        corral_free(p[i].key);
        corral_free(p[i].ns);
        corral_free(p[i].query);
        corral_free(p[i].server);
        strs_free(&p[i].names);
        strs_free(&p[i].pods);
        strs_free(&p[i].nodes);
        strs_free(&p[i].addrs);
    }
    corral_free(p);
}

static plan_rev_t *plan_take(corral__autoscaler_t *as, size_t *n)
{
    pthread_mutex_lock(&as->mu);
    plan_rev_t *p = corral_calloc(as->nrevs ? as->nrevs : 1, sizeof(*p));
    *n = as->nrevs;
    for (size_t i = 0; i < as->nrevs; i++) {
        const rev_t *r = as->revs[i];
        p[i].key = corral_strdup(r->key);
        p[i].ns = corral_strdup(r->ns);
        p[i].sig = r->sig;
        p[i].query = r->query ? corral_strdup(r->query) : NULL;
        p[i].server = r->server ? corral_strdup(r->server) : NULL;
        strs_set(&p[i].names, (const char *const *)r->names.v, r->names.n, 16);
        strs_set(&p[i].pods, (const char *const *)r->pods.v, r->pods.n, MAX_PODS);
        strs_set(&p[i].nodes, (const char *const *)r->nodes.v, r->nodes.n, MAX_PODS);
        strs_set(&p[i].addrs, (const char *const *)r->addrs.v, r->addrs.n, MAX_PODS);
    }
    pthread_mutex_unlock(&as->mu);
    return p;
}

/* Every router's /metrics summed into as->rcur (revisions) and as->pcur (pods). */
static bool scrape_routers(corral__autoscaler_t *as)
{
    corral__asc_table_reset(&as->rcur);
    corral__asc_table_reset(&as->pcur);
    bool ok = as->nrouters > 0;
    for (size_t i = 0; i < as->nrouters && !stopping(as); i++) {
        char err[256];
        int rc = corral__asc_http_get(&as->curl, as->routers[i], CORRAL__ASC_MAX_BODY,
                                      as->timeout_ms, &as->body, err, sizeof(err));
        if (rc == 0)
            rc = corral__asc_parse_router(corral_buf_str(&as->body), as->body.len, &as->rcur,
                                          &as->pcur, err, sizeof(err));
        scrape_count(as, "router", rc >= 0, err);
        if (rc < 0)
            ok = false;
    }
    return ok;
}

/* The agents' GPU metrics of every node hosting a pod of a GPU-scaled
 * revision, once per node; failed nodes are listed in bad. */
static void scrape_nodes(corral__autoscaler_t *as, const plan_rev_t *p, size_t n, strs_t *bad)
{
    corral__asc_table_reset(&as->gpu);
    if (!as->client)
        return;
    const char *done[MAX_NODES];
    size_t ndone = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i].sig != SIG_GPU)
            continue;
        for (size_t j = 0; j < p[i].nodes.n && !stopping(as); j++) {
            const char *node = p[i].nodes.v[j];
            bool seen = !node || !*node;
            for (size_t k = 0; k < ndone && !seen; k++)
                seen = strcmp(done[k], node) == 0;
            if (seen || ndone == MAX_NODES)
                continue;
            done[ndone++] = node;
            char path[512], err[256] = "";
            if (as->o.agent_metrics_port > 0)
                snprintf(path, sizeof(path), "/api/v1/nodes/%s:%d/proxy/metrics", node,
                         as->o.agent_metrics_port);
            else
                snprintf(path, sizeof(path), "/api/v1/nodes/%s/proxy/metrics", node);
            corral_client_resp_t resp;
            corral_client_resp_init(&resp);
            int rc = corral_client_request(as->client, "GET", path, NULL, NULL, 0, &resp);
            if (rc == 0 && resp.code == 200) {
                rc = corral__asc_parse_gpu(corral_buf_str(&resp.body), resp.body.len, &as->gpu, err,
                                           sizeof(err));
            } else if (rc == 0) {
                char msg[160], why[64];
                corral_client_error(&resp, why, sizeof(why), msg, sizeof(msg));
                snprintf(err, sizeof(err), "node %.64s: HTTP %ld: %s", node, resp.code, msg);
                rc = CORRAL_EIO;
            } else {
                snprintf(err, sizeof(err), "node %.64s: %.160s", node, resp.error);
            }
            corral_client_resp_fini(&resp);
            scrape_count(as, "node", rc >= 0, err);
            if (rc < 0) {
                bad->v = corral_realloc(bad->v, (bad->n + 1) * sizeof(*bad->v));
                bad->v[bad->n++] = corral_strdup(node);
            }
        }
    }
}

static bool in_strs(const strs_t *s, const char *x)
{
    for (size_t i = 0; x && i < s->n; i++)
        if (strcmp(s->v[i], x) == 0)
            return true;
    return false;
}

/* Sum of the GPU utilization of the revision's pods (each the mean of its GPUs). */
static void value_gpu(corral__autoscaler_t *as, plan_rev_t *p, const strs_t *bad)
{
    p->value = 0;
    p->ok = true;
    for (size_t j = 0; j < p->pods.n; j++) {
        const char *node = j < p->nodes.n ? p->nodes.v[j] : NULL;
        if (in_strs(bad, node)) {
            p->ok = false; /* a node not heard from: no sample this tick */
            return;
        }
        const double *v = corral__asc_table_get(&as->gpu, p->ns, p->pods.v[j]);
        if (v && v[1] > 0)
            p->value += v[0] / v[1];
    }
}

/* Sum of the named series over the revision's replicas. A replica that
 * does not answer (still loading its model) carries nothing; the sample is
 * kept when one answered or none has an address yet. */
static void value_pods(corral__autoscaler_t *as, plan_rev_t *p, size_t *budget)
{
    p->value = 0;
    size_t tried = 0, answered = 0;
    for (size_t j = 0; j < p->addrs.n; j++) {
        if (!p->addrs.v[j] || !*p->addrs.v[j])
            continue; /* not started yet: carries nothing */
        if (*budget == 0 || stopping(as))
            break;
        (*budget)--;
        tried++;
        char url[512], err[256];
        corral__asc_url(p->addrs.v[j], "/metrics", url, sizeof(url));
        double sum = 0;
        int rc = corral__asc_http_get(&as->curl, url, CORRAL__ASC_MAX_BODY, as->timeout_ms,
                                      &as->body, err, sizeof(err));
        if (rc == 0)
            rc = corral__asc_parse_pod(corral_buf_str(&as->body), as->body.len,
                                       (const char *const *)p->names.v, p->names.n, &sum, err,
                                       sizeof(err));
        scrape_count(as, "pod", rc >= 0, err);
        if (rc >= 0) {
            answered++;
            p->value += sum;
        }
    }
    p->ok = tried == 0 || answered > 0;
}

/* A Prometheus instant query. */
static void value_external(corral__autoscaler_t *as, plan_rev_t *p)
{
    p->ok = false;
    if (!p->query || !p->server)
        return;
    if (!as->curl) {
        curl_global_init(CURL_GLOBAL_DEFAULT);
        as->curl = curl_easy_init();
        if (!as->curl)
            return;
    }
    char *q = curl_easy_escape(as->curl, p->query, 0);
    if (!q)
        return;
    char base[512], err[256];
    corral__asc_url(p->server, "", base, sizeof(base));
    size_t bl = strlen(base);
    while (bl > 0 && base[bl - 1] == '/')
        base[--bl] = '\0';
    size_t len = strlen(base) + strlen(q) + 32;
    char *url = corral_malloc(len);
    snprintf(url, len, "%s/api/v1/query?query=%s", base, q);
    curl_free(q);
    int rc = corral__asc_http_get(&as->curl, url, CORRAL__ASC_MAX_QUERY, as->timeout_ms, &as->body,
                                  err, sizeof(err));
    if (rc == 0)
        rc = corral__asc_parse_prom(corral_buf_str(&as->body), as->body.len, &p->value, err,
                                    sizeof(err));
    corral_free(url);
    scrape_count(as, "prometheus", rc >= 0, err);
    p->ok = rc >= 0;
}

/* The router's rates of a revision since the previous scrape. */
static void router_rates(corral__autoscaler_t *as, const char *ns, const char *rev, double dt,
                         double *arr, double *conc, double *queued, bool *active)
{
    const double *cur = corral__asc_table_get(&as->rcur, ns, rev);
    const double *prev = corral__asc_table_get(&as->rprev, ns, rev);
    double zero[CORRAL__ASC_NVAL] = {0};
    if (!cur)
        cur = zero;
    if (!prev)
        prev = zero;
    double da = cur[CORRAL__ASC_ARRIVALS] - prev[CORRAL__ASC_ARRIVALS];
    double dc = cur[CORRAL__ASC_CONC_SECONDS] - prev[CORRAL__ASC_CONC_SECONDS];
    if (da < 0)
        da = cur[CORRAL__ASC_ARRIVALS]; /* the router restarted */
    if (dc < 0)
        dc = cur[CORRAL__ASC_CONC_SECONDS];
    *arr = da / dt;
    *conc = dc / dt;
    *queued = cur[CORRAL__ASC_QUEUED];
    *active = da > 0 || dc > 0 || cur[CORRAL__ASC_QUEUED] > 0 || cur[CORRAL__ASC_IN_FLIGHT] > 0;
}

/* Record this tick's samples (under the mutex); true when a revision at
 * zero has requests waiting. */
static bool record(corral__autoscaler_t *as, plan_rev_t *p, size_t n, bool router_ok,
                   int64_t now_ns)
{
    bool wake = false;
    double dt = (double)(now_ns - as->rprev_ns) / (double)SEC;
    bool rates = router_ok && as->rprev_ok && dt > 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t idx;
        if (!corral_hmap_get(&as->idx, p[i].key, &idx))
            continue; /* forgotten meanwhile */
        rev_t *r = as->revs[idx];
        double arr = 0, conc = 0, queued = 0;
        bool active = false;
        if (router_ok) {
            router_rates(as, r->ns, r->revision, dt > 0 ? dt : 1, &arr, &conc, &queued, &active);
            r->queued = queued;
            wake = wake || (queued > 0 && r->decided && r->desired == 0);
        }
        switch (p[i].sig) {
        case SIG_CONCURRENCY:
        case SIG_RPS:
            if (rates)
                corral__kpa_record(&r->kpa, now_ns, p[i].sig == SIG_RPS ? arr : conc, active);
            break;
        case SIG_GPU:
        case SIG_POD:
        case SIG_EXTERNAL:
            /* Traffic at the router says when the revision is idle; without
             * the router's word, any value does. */
            if (p[i].ok)
                corral__kpa_record(&r->kpa, now_ns, p[i].value, rates ? active : p[i].value > 0);
            break;
        case SIG_NONE:
            break;
        }
        if (rates && active)
            corral__kpa_touch(&r->kpa, now_ns);
    }
    return wake;
}

/* The per-pod loads scale-down picks its victim by. */
static void update_pod_load(corral__autoscaler_t *as, bool router_ok)
{
    corral__asc_table_reset(&as->pod_load);
    if (router_ok) {
        for (size_t i = 0; i < as->pcur.n; i++) {
            const char *key = as->pcur.rows[i].key, *slash = strchr(key, '/');
            char ns[256];
            snprintf(ns, sizeof(ns), "%.*s", (int)(slash - key), key);
            double *v = corral__asc_table_at(&as->pod_load, ns, slash + 1);
            if (v) {
                v[0] = as->pcur.rows[i].v[0];
                v[2] = 1;
            }
        }
    }
    for (size_t i = 0; i < as->gpu.n; i++) {
        const char *key = as->gpu.rows[i].key, *slash = strchr(key, '/');
        char ns[256];
        snprintf(ns, sizeof(ns), "%.*s", (int)(slash - key), key);
        double *v = corral__asc_table_at(&as->pod_load, ns, slash + 1);
        if (v && as->gpu.rows[i].v[1] > 0)
            v[1] = as->gpu.rows[i].v[0] / as->gpu.rows[i].v[1];
    }
}

void corral__as_collect(corral__autoscaler_t *as, int64_t now_ns)
{
    size_t n = 0;
    plan_rev_t *p = plan_take(as, &n);
    bool router_ok = scrape_routers(as);
    strs_t bad = {0};
    scrape_nodes(as, p, n, &bad);
    size_t budget = MAX_POD_SCRAPES;
    for (size_t i = 0; i < n && !stopping(as); i++) {
        if (p[i].sig == SIG_GPU)
            value_gpu(as, &p[i], &bad);
        else if (p[i].sig == SIG_POD)
            value_pods(as, &p[i], &budget);
        else if (p[i].sig == SIG_EXTERNAL)
            value_external(as, &p[i]);
    }
    pthread_mutex_lock(&as->mu);
    bool wake = record(as, p, n, router_ok, now_ns);
    update_pod_load(as, router_ok);
    pthread_mutex_unlock(&as->mu);
    if (wake && as->o.notify)
        as->o.notify(as->o.notify_arg);
    if (router_ok) {
        corral__asc_table_t t = as->rprev;
        as->rprev = as->rcur;
        as->rcur = t;
        as->rprev_ns = now_ns;
    }
    as->rprev_ok = router_ok;
    strs_free(&bad);
    plan_free(p, n);
}

static void *run(void *arg)
{
    corral__autoscaler_t *as = arg;
    pthread_mutex_lock(&as->mu);
    while (!as->stop) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        int64_t at = (int64_t)ts.tv_sec * SEC + ts.tv_nsec + as->o.tick_ns;
        ts.tv_sec = (time_t)(at / SEC);
        ts.tv_nsec = (long)(at % SEC);
        while (!as->stop && pthread_cond_timedwait(&as->cv, &as->mu, &ts) == 0)
            ;
        if (as->stop)
            break;
        pthread_mutex_unlock(&as->mu);
        corral__as_collect(as, mono_ns());
        pthread_mutex_lock(&as->mu);
    }
    pthread_mutex_unlock(&as->mu);
    return NULL;
}

/* --- metrics ------------------------------------------------------------------------- */

static void collect_metrics(corral_metrics_t *m, void *arg)
{
    (void)m;
    corral__autoscaler_t *as = arg;
    corral_metric_t *fams[] = {as->m_desired, as->m_ready,    as->m_pending,
                               as->m_panic,   as->m_observed, as->m_target};
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(fams); i++)
        corral_metric_refill_begin(fams[i]);
    pthread_mutex_lock(&as->mu);
    for (size_t i = 0; i < as->nrevs; i++) {
        const rev_t *r = as->revs[i];
        if (!r->decided)
            continue;
        const char *l[] = {r->ns, r->service, r->revision};
        corral_metric_set(as->m_desired, l, r->desired);
        corral_metric_set(as->m_ready, l, r->ready);
        corral_metric_set(as->m_pending, l, r->pending);
        corral_metric_set(as->m_panic, l, r->panic ? 1 : 0);
        const char *ls[] = {r->ns, r->service, r->revision, r->metric, "stable"};
        corral_metric_set(as->m_observed, ls, r->stable);
        const char *lp[] = {r->ns, r->service, r->revision, r->metric, "panic"};
        corral_metric_set(as->m_observed, lp, r->panic_avg);
        const char *lt[] = {r->ns, r->service, r->revision, r->metric};
        corral_metric_set(as->m_target, lt, r->p.target);
    }
    pthread_mutex_unlock(&as->mu);
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(fams); i++)
        corral_metric_refill_end(fams[i]);
}

static void register_metrics(corral__autoscaler_t *as, corral_metrics_t *m)
{
    static const char *const rl[] = {"namespace", "service", "revision", NULL};
    static const char *const ml[] = {"namespace", "service", "revision", "metric", "window", NULL};
    static const char *const tl[] = {"namespace", "service", "revision", "metric", NULL};
    static const char *const sl[] = {"source", NULL};
    as->m_desired = corral_metrics_gauge(m, "corral_autoscaler_desired_replicas",
                                         "Replicas the autoscaler wants, before minReplicas/"
                                         "maxReplicas.",
                                         rl);
    as->m_ready = corral_metrics_gauge(m, "corral_autoscaler_ready_replicas",
                                       "Ready replicas at the last decision.", rl);
    as->m_pending = corral_metrics_gauge(m, "corral_autoscaler_pending_replicas",
                                         "Replicas created and not Ready (waiting for GPUs "
                                         "included) at the last decision.",
                                         rl);
    as->m_panic = corral_metrics_gauge(m, "corral_autoscaler_panic_mode",
                                       "1 while the revision is in panic mode.", rl);
    as->m_observed = corral_metrics_gauge(m, "corral_autoscaler_observed_value",
                                          "The scaling metric averaged over the stable and the "
                                          "panic window.",
                                          ml);
    as->m_target = corral_metrics_gauge(m, "corral_autoscaler_target_value",
                                        "The metric value one replica is sized for.", tl);
    as->m_scrapes = corral_metrics_counter(m, "corral_autoscaler_scrapes_total",
                                           "Metric fetches, by source (router, node, pod, "
                                           "prometheus).",
                                           sl);
    as->m_errors = corral_metrics_counter(m, "corral_autoscaler_scrape_errors_total",
                                          "Metric fetches that failed, by source.", sl);
    corral_metrics_on_collect(m, collect_metrics, as);
}

/* --- lifecycle ---------------------------------------------------------------------- */

static void defaults(corral__as_opts_t *o)
{
    if (o->tick_ns <= 0)
        o->tick_ns = SEC;
    if (o->stable_window_ns <= 0)
        o->stable_window_ns = 60 * SEC;
    if (o->stable_window_ns > CORRAL__KPA_MAX_BUCKETS * SEC)
        o->stable_window_ns = CORRAL__KPA_MAX_BUCKETS * SEC;
    if (o->panic_window_ns <= 0)
        o->panic_window_ns = 6 * SEC;
    if (!(o->panic_threshold > 0))
        o->panic_threshold = 200;
    if (o->scale_to_zero_grace_ns <= 0)
        o->scale_to_zero_grace_ns = 30 * SEC;
    if (!(o->max_scale_up_rate > 1))
        o->max_scale_up_rate = 1000;
    if (!(o->max_scale_down_rate > 1))
        o->max_scale_down_rate = 2;
}

int corral__as_new(const corral__as_opts_t *o, corral__autoscaler_t **out, char *err, size_t errlen)
{
    corral__autoscaler_t *as = corral_calloc(1, sizeof(*as));
    as->o = *o;
    as->o.router_metrics = NULL;
    defaults(&as->o);
    long ms = (long)(as->o.tick_ns / 1000000);
    as->timeout_ms = ms < 500 ? 500 : ms > 5000 ? 5000 : ms;
    if (o->router_metrics && *o->router_metrics && strcmp(o->router_metrics, "off") != 0) {
        char *list = corral_strdup(o->router_metrics), *save = NULL;
        for (char *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            if (!*t)
                continue;
            if (as->nrouters == MAX_ROUTERS) {
                snprintf(err, errlen, "--router-metrics: at most %d URLs", MAX_ROUTERS);
                corral_free(list);
                corral__as_free(as);
                return CORRAL_EINVAL;
            }
            char url[512];
            corral__asc_url(t, "/metrics", url, sizeof(url));
            as->routers[as->nrouters++] = corral_strdup(url);
        }
        corral_free(list);
    }
    pthread_mutex_init(&as->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&as->cv, &ca);
    pthread_condattr_destroy(&ca);
    corral_hmap_init(&as->idx);
    corral__asc_table_init(&as->pod_load, CORRAL__ASC_MAX_ROWS);
    corral__asc_table_init(&as->rcur, CORRAL__ASC_MAX_ROWS);
    corral__asc_table_init(&as->rprev, CORRAL__ASC_MAX_ROWS);
    corral__asc_table_init(&as->pcur, CORRAL__ASC_MAX_ROWS);
    corral__asc_table_init(&as->gpu, CORRAL__ASC_MAX_ROWS);
    corral_buf_init(&as->body);
    if (o->cfg) {
        as->client = corral_client_new(o->cfg);
        if (as->client) {
            corral_client_set_limits(as->client, as->timeout_ms, CORRAL__ASC_MAX_BODY);
            corral_client_set_abort(as->client, &as->abort_flag);
        }
    }
    if (o->metrics)
        register_metrics(as, o->metrics);
    if (pthread_create(&as->th, NULL, run, as) != 0) {
        snprintf(err, errlen, "cannot start the autoscaler's thread");
        corral__as_free(as);
        return CORRAL_EIO;
    }
    as->started = true;
    *out = as;
    return 0;
}

void corral__as_free(corral__autoscaler_t *as)
{
    if (!as)
        return;
    if (as->started) {
        __atomic_store_n(&as->abort_flag, 1, __ATOMIC_RELAXED);
        pthread_mutex_lock(&as->mu);
        as->stop = true;
        pthread_cond_broadcast(&as->cv);
        pthread_mutex_unlock(&as->mu);
        pthread_join(as->th, NULL);
    }
    for (size_t i = 0; i < as->nrevs; i++)
        rev_free(as->revs[i]);
    corral_free(as->revs);
    corral_hmap_fini(&as->idx);
    for (size_t i = 0; i < as->nrouters; i++)
        corral_free(as->routers[i]);
    corral__asc_table_fini(&as->pod_load);
    corral__asc_table_fini(&as->rcur);
    corral__asc_table_fini(&as->rprev);
    corral__asc_table_fini(&as->pcur);
    corral__asc_table_fini(&as->gpu);
    corral_buf_fini(&as->body);
    corral_client_free(as->client);
    if (as->curl)
        curl_easy_cleanup(as->curl);
    pthread_mutex_destroy(&as->mu);
    pthread_cond_destroy(&as->cv);
    corral_free(as);
}
