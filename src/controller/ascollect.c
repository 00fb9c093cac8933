/*
 * The autoscaler's collectors (ascollect.h): bounded fetches and parsers.
 */
#include "controller/ascollect.h"

#include <curl/curl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corral/arena.h"
#include "corral/common.h"
#include "corral/json.h"
#include "corral/promtext.h"
#include "corral/val.h"

/* --- tables ----------------------------------------------------------------------- */

void corral__asc_table_init(corral__asc_table_t *t, size_t max)
{
    *t = (corral__asc_table_t){0};
    t->max = max;
    corral_hmap_init(&t->idx);
}

void corral__asc_table_reset(corral__asc_table_t *t)
{
    for (size_t i = 0; i < t->n; i++)
        corral_free(t->rows[i].key);
    t->n = 0;
    t->over = false;
    corral_hmap_fini(&t->idx);
    corral_hmap_init(&t->idx);
}

void corral__asc_table_fini(corral__asc_table_t *t)
{
    corral__asc_table_reset(t);
    corral_hmap_fini(&t->idx);
    corral_free(t->rows);
    *t = (corral__asc_table_t){0};
}

static void table_key(char *key, size_t len, const char *ns, const char *name)
{
    snprintf(key, len, "%s/%s", ns ? ns : "", name ? name : "");
}

const double *corral__asc_table_get(const corral__asc_table_t *t, const char *ns, const char *name)
{
    char key[512];
    uint32_t i;
    table_key(key, sizeof(key), ns, name);
    return corral_hmap_get(&t->idx, key, &i) ? t->rows[i].v : NULL;
}

double *corral__asc_table_at(corral__asc_table_t *t, const char *ns, const char *name)
{
    char key[512];
    uint32_t i;
    table_key(key, sizeof(key), ns, name);
    if (corral_hmap_get(&t->idx, key, &i))
        return t->rows[i].v;
    if (t->n >= t->max) {
        t->over = true;
        return NULL;
    }
    if (t->n == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 64;
        t->rows = corral_realloc(t->rows, t->cap * sizeof(*t->rows));
    }
    corral__asc_row_t *r = &t->rows[t->n];
    *r = (corral__asc_row_t){0};
    r->key = corral_strdup(key);
    corral_hmap_put(&t->idx, r->key, (uint32_t)t->n);
    return t->rows[t->n++].v;
}

/* --- parsers ---------------------------------------------------------------------- */

static double finite_or_zero(double v)
{
    return isfinite(v) && v > 0 ? v : 0;
}

typedef struct router_ctx {
    corral__asc_table_t *revs, *pods;
} router_ctx_t;

static int router_sample(void *arg, const corral_promtext_sample_t *s)
{
    router_ctx_t *c = arg;
    static const char *const rev_names[] = {
        [CORRAL__ASC_ARRIVALS] = "corral_router_request_arrivals_total",
        [CORRAL__ASC_CONC_SECONDS] = "corral_router_concurrency_seconds_total",
        [CORRAL__ASC_QUEUED] = "corral_router_queued_requests",
        [CORRAL__ASC_IN_FLIGHT] = "corral_router_in_flight_requests",
    };
    const char *ns = corral_promtext_label(s, "namespace");
    if (!ns)
        return 0;
    if (strcmp(s->name, "corral_router_pod_in_flight_requests") == 0) {
        const char *pod = corral_promtext_label(s, "pod");
        double *v = pod ? corral__asc_table_at(c->pods, ns, pod) : NULL;
        if (v)
            v[0] += finite_or_zero(s->value);
        return 0;
    }
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(rev_names); i++) {
        if (strcmp(s->name, rev_names[i]) != 0)
            continue;
        const char *rev = corral_promtext_label(s, "revision");
        double *v = rev ? corral__asc_table_at(c->revs, ns, rev) : NULL;
        if (v)
            v[i] += finite_or_zero(s->value);
        break;
    }
    return 0;
}

int corral__asc_parse_router(const char *text, size_t len, corral__asc_table_t *revs,
                             corral__asc_table_t *pods, char *err, size_t errlen)
{
    router_ctx_t c = {revs, pods};
    return corral_promtext_parse(text, len, router_sample, &c, err, errlen);
}

static int gpu_sample(void *arg, const corral_promtext_sample_t *s)
{
    if (strcmp(s->name, "DCGM_FI_DEV_GPU_UTIL") != 0)
        return 0;
    const char *pod = corral_promtext_label(s, "pod");
    const char *ns = corral_promtext_label(s, "namespace");
    if (!pod || !*pod || !ns)
        return 0; /* a GPU no pod holds */
    double *v = corral__asc_table_at(arg, ns, pod);
    if (v) {
        v[0] += finite_or_zero(s->value);
        v[1] += 1;
    }
    return 0;
}

int corral__asc_parse_gpu(const char *text, size_t len, corral__asc_table_t *pods, char *err,
                          size_t errlen)
{
    return corral_promtext_parse(text, len, gpu_sample, pods, err, errlen);
}

typedef struct pod_ctx {
    const char *const *names;
    size_t n;
    double sum;
} pod_ctx_t;

static int pod_sample(void *arg, const corral_promtext_sample_t *s)
{
    pod_ctx_t *c = arg;
    for (size_t i = 0; i < c->n; i++) {
        if (strcmp(s->name, c->names[i]) == 0) {
            c->sum += finite_or_zero(s->value);
            break;
        }
    }
    return 0;
}

int corral__asc_parse_pod(const char *text, size_t len, const char *const *names, size_t nnames,
                          double *sum, char *err, size_t errlen)
{
    pod_ctx_t c = {names, nnames, 0};
    int rc = corral_promtext_parse(text, len, pod_sample, &c, err, errlen);
    if (rc >= 0)
        *sum = c.sum;
    return rc;
}

/* [ts, "value"] of a Prometheus answer. */
static bool prom_value(const corral_val_t *pair, double *out)
{
    if (!pair || pair->kind != CORRAL_VAL_SEQ || pair->n != 2 || !pair->items[1] ||
        pair->items[1]->kind != CORRAL_VAL_STR)
        return false;
    char *end = NULL;
    double v = strtod(pair->items[1]->s, &end);
    if (end == pair->items[1]->s || *end)
        return false;
    *out = finite_or_zero(v);
    return true;
}

int corral__asc_parse_prom(const char *text, size_t len, double *value, char *err, size_t errlen)
{
    corral_arena_t a;
    corral_arena_init(&a);
    corral_val_t *root = NULL;
    corral_json_err_t je;
    int rc = CORRAL_EPARSE;
    if (corral_json_parse(&a, text, len, &root, &je) != 0) {
        snprintf(err, errlen, "not JSON (%d:%d: %s)", je.line, je.col, je.msg);
        goto out;
    }
    const char *status = corral_val_get_str(root, "status");
    if (!status || strcmp(status, "success") != 0) {
        const char *e = corral_val_get_str(root, "error");
        snprintf(err, errlen, "query failed: %s", e ? e : "no status \"success\"");
        goto out;
    }
    const corral_val_t *data = corral_val_get(root, "data");
    const char *type = corral_val_get_str(data, "resultType");
    const corral_val_t *res = corral_val_get(data, "result");
    if (type && strcmp(type, "scalar") == 0) {
        if (!prom_value(res, value)) {
            snprintf(err, errlen, "a scalar result is [time, \"value\"]");
            goto out;
        }
    } else if (type && strcmp(type, "vector") == 0 && res && res->kind == CORRAL_VAL_SEQ) {
        double sum = 0, v = 0;
        for (size_t i = 0; i < res->n; i++) {
            if (!prom_value(corral_val_get(res->items[i], "value"), &v)) {
                snprintf(err, errlen, "result[%zu] has no value [time, \"value\"]", i);
                goto out;
            }
            sum += v;
        }
        *value = sum;
    } else {
        snprintf(err, errlen, "the query must return a scalar or an instant vector, got %s",
                 type ? type : "no resultType");
        goto out;
    }
    rc = 0;
out:
    corral_arena_fini(&a);
    return rc;
}

/* --- fetching --------------------------------------------------------------------- */

typedef struct sink {
    corral_buf_t *b;
    size_t max;
    bool over;
} sink_t;

static size_t sink_cb(char *p, size_t size, size_t n, void *ud)
{
    sink_t *s = ud;
    if (s->b->len + size * n > s->max) {
        s->over = true;
        return 0;
    }
    corral_buf_append(s->b, p, size * n);
    return size * n;
}

int corral__asc_http_get(void **curl, const char *url, size_t max, long timeout_ms,
                         corral_buf_t *out, char *err, size_t errlen)
{
    if (!*curl) {
        curl_global_init(CURL_GLOBAL_DEFAULT);
        *curl = curl_easy_init();
        if (!*curl) {
            snprintf(err, errlen, "libcurl could not start");
            return CORRAL_EIO;
        }
    }
    CURL *h = *curl;
    char ebuf[CURL_ERROR_SIZE] = "";
    sink_t s = {out, max, false};
    corral_buf_reset(out);
    curl_easy_reset(h);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, sink_cb);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &s);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, ebuf);
    curl_easy_setopt(h, CURLOPT_USERAGENT, "corral-autoscaler/0.1.0");
    CURLcode rc = curl_easy_perform(h);
    long code = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    if (s.over) {
        snprintf(err, errlen, "%s: response larger than %zu bytes", url, max);
        return CORRAL_ETOOBIG;
    }
    if (rc != CURLE_OK) {
        snprintf(err, errlen, "%s: %s", url, ebuf[0] ? ebuf : curl_easy_strerror(rc));
        return CORRAL_EIO;
    }
    if (code < 200 || code > 299) {
        snprintf(err, errlen, "%s: HTTP %ld", url, code);
        return CORRAL_EIO;
    }
    return 0;
}

void corral__asc_url(const char *in, const char *path, char *out, size_t len)
{
    while (*in == ' ')
        in++;
    bool scheme = strstr(in, "://") != NULL;
    const char *host = scheme ? strstr(in, "://") + 3 : in;
    bool has_path = strchr(host, '/') != NULL;
    snprintf(out, len, "%s%s%s", scheme ? "" : "http://", in, has_path ? "" : path);
}
