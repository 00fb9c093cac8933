/*
 * The API server's own /metrics, in kube-apiserver's names where they exist:
 * apiserver_request_total and apiserver_request_duration_seconds (labels
 * verb, group, version, resource, subresource, scope, component, and code
 * for the counter), apiserver_longrunning_requests (watches and proxied log
 * streams open); and Corral's: corral_apiserver_open_watches, the store's
 * group commit (corral_apiserver_sqlite_commit_duration_seconds,
 * corral_apiserver_sqlite_commit_batch_ops), its revisions and size, and the
 * metrics-server's gauges (metricsserver.c registers those).
 *
 * Cost on the request path: one counter add and one histogram observe (a
 * hash lookup and an add each, under the registry's mutex) when a response
 * is queued; label values are the route's static strings, never what a
 * client typed, so series stay few. Long-running requests (watches, log
 * streams) count in apiserver_request_total when they end; their durations
 * are left out of the histogram (they would swamp it), as kube's SLO
 * histograms leave out WATCH and CONNECT.
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "apiserver/apiserver_int.h"
#include "corral/metrics.h"

struct corral__apimetrics {
    corral_metrics_t *reg;
    corral_metric_t *requests, *duration, *longrunning, *watches;
    corral_metric_t *commit, *batch, *revision, *compacted, *db_size;
    int open_watches; /* atomic */
};

static void collect(corral_metrics_t *m, void *arg)
{
    (void)m;
    corral_apiserver_t *s = arg;
    corral__apimetrics_t *am = s->metrics;
    corral_metric_set(am->revision, NULL, (double)corral_store_revision(s->store));
    corral_metric_set(am->compacted, NULL, (double)corral_store_compacted(s->store));
    corral_metric_set(am->watches, NULL,
                      (double)__atomic_load_n(&am->open_watches, __ATOMIC_RELAXED));
    double size = 0;
    static const char *const files[] = {"corral.db", "corral.db-wal"};
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(files); i++) {
        char path[4096];
        struct stat st;
        snprintf(path, sizeof(path), "%s/%s", s->opts.data_dir, files[i]);
        if (stat(path, &st) == 0)
            size += (double)st.st_size;
    }
    corral_metric_set(am->db_size, NULL, size);
}

void corral__apimetrics_init(corral_apiserver_t *s)
{
    corral__apimetrics_t *am = corral_calloc(1, sizeof(*am));
    am->reg = corral_metrics_new();
    static const char *const req_labels[] = {
        "verb", "group", "version", "resource", "subresource", "scope", "component", "code", NULL};
    static const char *const dur_labels[] = {"verb",        "group", "version",   "resource",
                                             "subresource", "scope", "component", NULL};
    static const char *const lr_labels[] = {"verb",        "group", "version",   "resource",
                                            "subresource", "scope", "component", NULL};
    static const double kube_buckets[] = {0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8,
                                          1.0,   1.25,  1.5,  2,   3,   4,   5,   6,
                                          8,     10,    15,   20,  30,  45,  60};
    am->requests = corral_metrics_counter(
        am->reg, "apiserver_request_total",
        "Counter of apiserver requests broken out for each verb, group, version, resource, "
        "scope, component, and HTTP response code.",
        req_labels);
    am->duration = corral_metrics_histogram(
        am->reg, "apiserver_request_duration_seconds",
        "Response latency distribution in seconds for each verb, group, version, resource, "
        "subresource, scope and component (long-running requests left out).",
        dur_labels, kube_buckets, CORRAL_ARRAY_LEN(kube_buckets));
    am->longrunning = corral_metrics_gauge(
        am->reg, "apiserver_longrunning_requests",
        "Gauge of all active long-running apiserver requests broken out by verb, group, version, "
        "resource, scope and component (watches and proxied log streams).",
        lr_labels);
    am->watches = corral_metrics_gauge(am->reg, "corral_apiserver_open_watches",
                                       "Watch streams open now.", NULL);
    double cb[16], bb[12];
    size_t ncb = corral_metrics_exp_buckets(0.0001, 2, 16, cb);
    size_t nbb = corral_metrics_exp_buckets(1, 2, 11, bb);
    am->commit = corral_metrics_histogram(
        am->reg, "corral_apiserver_sqlite_commit_duration_seconds",
        "Time of the store's group-commit COMMIT (the WAL fsync), per transaction.", NULL, cb, ncb);
    am->batch =
        corral_metrics_histogram(am->reg, "corral_apiserver_sqlite_commit_batch_ops",
                                 "Write operations per group-commit transaction.", NULL, bb, nbb);
    am->revision = corral_metrics_gauge(am->reg, "corral_apiserver_store_revision",
                                        "The store's latest committed revision.", NULL);
    am->compacted = corral_metrics_gauge(
        am->reg, "corral_apiserver_store_compacted_revision",
        "The newest revision removed from the watch log (watches start after it).", NULL);
    am->db_size = corral_metrics_gauge(am->reg, "corral_apiserver_store_db_size_bytes",
                                       "Size of the SQLite database and its WAL on disk.", NULL);
    corral_metrics_on_collect(am->reg, collect, s);
    corral_store_set_metrics(s->store, am->commit, am->batch);
    s->metrics = am;
}

void corral__apimetrics_free(corral_apiserver_t *s)
{
    if (!s->metrics)
        return;
    if (s->store)
        corral_store_set_metrics(s->store, NULL, NULL);
    corral_metrics_free(s->metrics->reg);
    corral_free(s->metrics);
    s->metrics = NULL;
}

corral_metrics_t *corral__apimetrics_registry(corral_apiserver_t *s)
{
    return s->metrics->reg;
}

/* The verb as kube's metrics name it. */
static const char *verb_of(const corral__req_t *r, bool stream)
{
    const char *m = r->method;
    if (!strcmp(m, "GET")) {
        if (r->handler == corral__h_watch || (r->handler == corral__h_list && stream))
            return "WATCH";
        if (r->handler == corral__h_list)
            return "LIST";
        if (r->handler == corral__h_node_proxy)
            return "CONNECT";
        return "GET";
    }
    if (!strcmp(m, "POST"))
        return "POST";
    if (!strcmp(m, "PUT"))
        return "PUT";
    if (!strcmp(m, "PATCH")) {
        size_t ctl = 0;
        const char *ct = corral_http_header(r->http, "Content-Type", &ctl);
        return ct && memmem(ct, ctl, "apply-patch", 11) ? "APPLY" : "PATCH";
    }
    if (!strcmp(m, "DELETE"))
        return r->handler == corral__h_delete_collection ? "DELETECOLLECTION" : "DELETE";
    if (!strcmp(m, "HEAD"))
        return "HEAD";
    return "other";
}

/* The subresource: the router's, else the segment after the name. */
static void subresource_of(const corral__req_t *r, char *out, size_t len)
{
    out[0] = '\0';
    if (r->sub) {
        snprintf(out, len, "%s", r->sub);
        return;
    }
    if (!r->name || !r->res)
        return;
    size_t nl = strlen(r->name);
    for (const char *p = strstr(r->path, r->name); p; p = strstr(p + 1, r->name)) {
        if (p[-1] == '/' && p[nl] == '/') {
            const char *s = p + nl + 1, *e = strchr(s, '/');
            size_t n = e ? (size_t)(e - s) : strlen(s);
            /* Only the subresources the routes know: never a client's text. */
            static const char *const known[] = {"log", "proxy", "binding", "eviction", "token"};
            for (size_t i = 0; i < CORRAL_ARRAY_LEN(known); i++)
                if (strlen(known[i]) == n && !strncmp(s, known[i], n))
                    snprintf(out, len, "%s", known[i]);
            return;
        }
    }
}

/* Label values of r (static strings or out's buffers). */
static void labels_of(const corral__req_t *r, bool stream, const char **v, char *sub, size_t sl)
{
    const corral__res_t *res = r->res;
    subresource_of(r, sub, sl);
    v[0] = verb_of(r, stream);
    v[1] = res ? res->info->group : "";
    v[2] = res ? res->info->version : "";
    v[3] = res ? res->info->plural : "";
    v[4] = sub;
    v[5] = !res ? "" : r->name ? "resource" : r->ns ? "namespace" : "cluster";
    v[6] = "apiserver";
}

void corral__apimetrics_request(const corral__req_t *r, int code, int64_t t0_us, bool stream)
{
    corral__apimetrics_t *am = r->srv->metrics;
    if (!am || !r->method)
        return;
    const char *v[8];
    char sub[16], codes[8];
    labels_of(r, stream, v, sub, sizeof(sub));
    snprintf(codes, sizeof(codes), "%d", code);
    v[7] = codes;
    corral_metric_add(am->requests, v, 1);
    if (!stream && t0_us > 0)
        corral_metric_observe(am->duration, v, (double)(corral__mono_us() - t0_us) / 1e6);
}

void corral__apimetrics_longrunning(const corral__req_t *r, int delta)
{
    corral__apimetrics_t *am = r->srv->metrics;
    if (!am || !r->method)
        return;
    const char *v[8];
    char sub[16];
    labels_of(r, true, v, sub, sizeof(sub));
    corral_metric_add(am->longrunning, v, delta);
    if (!strcmp(v[0], "WATCH"))
        __atomic_add_fetch(&am->open_watches, delta, __ATOMIC_RELAXED);
}

/* GET /metrics */
void corral__h_metrics(corral__req_t *r)
{
    corral_buf_t b;
    corral_buf_init(&b);
    corral_metrics_render(r->srv->metrics->reg, &b);
    corral__reply(r, 200, CORRAL_METRICS_CONTENT_TYPE, b.p, b.len);
    corral_buf_fini(&b);
}
