/*
 * The built-in metrics-server: metrics.k8s.io/v1beta1 NodeMetrics and
 * PodMetrics, as metrics-server serves them to `kubectl top` and the
 * Python client, from the node agents' kubelet-style /metrics/resource.
 *
 * A timer on loop 0 fires every --metrics-resolution (opts.metrics_
 * resolution_ms, default 15 s): every Ready node in the store is queued for
 * a scrape, and at most MAX_INFLIGHT scrapes run at once (corral__agent_get,
 * so the target comes from the stored Node only, with the body bounded to
 * SCRAPE_MAX bytes). A body is parsed with promtext.c into a new entry for
 * its node: the node's and each container's cumulative CPU seconds and
 * memory working set, with their sample timestamps. As metrics-server
 * does, CPU usage is a rate between two consecutive scrapes ((c2 - c1) /
 * (t2 - t1), in nanocores) and is reported once two samples exist (a
 * counter that went backwards restarts the pair); memory is the latest
 * working set; the window is t2 - t1.
 *
 * Memory stays bounded: one entry per Ready node, holding only the latest
 * scrape's pods (at most MAX_PODS, MAX_CONTAINERS each); the entries of
 * nodes no longer Ready or deleted are dropped at the next tick, and a pod
 * is gone from its node's entry at the node's next scrape. Answers read the
 * stored Nodes and Pods (so selectors work and deleted objects vanish at
 * once) and look each up in the entries, under a mutex, as other loops
 * serve requests. The cluster gauge corral_cluster_gpu_utilization_mean is
 * the mean duty cycle of the GPUs pods hold (container_accelerator_duty_
 * cycle, distinct acc_id per node), refreshed when /metrics is rendered.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "apiserver/apiserver_int.h"
#include "corral/hmap.h"
#include "corral/metrics.h"
#include "corral/promtext.h"

#define MAX_INFLIGHT   64
#define SCRAPE_MAX     ((size_t)16 << 20)
#define MAX_PODS       20000
#define MAX_CONTAINERS 64
#define MAX_GPUS       64
#define NAME_MAX_LEN   253

typedef struct mcont {
    char *name;
    double cpu_s, mem;
    int64_t cpu_ts;
    int64_t nanocores;
    bool rate;
} mcont_t;

typedef struct mpod {
    char *ns, *name;
    mcont_t *c;
    size_t nc;
    int64_t ts_ms, window_ms;
} mpod_t;

typedef struct mnode {
    char *name;
    double cpu_s, mem;
    int64_t cpu_ts, nanocores, window_ms;
    bool has_cpu, has_mem, rate;
    mpod_t *pods; /* sorted by namespace, name */
    size_t npods;
    double gpu_sum;
    int gpu_n;
    /* scraping (loop 0 only) */
    bool seen, queued;
    corral__agent_call_t *call;
    struct scrape *sc; /* the call's argument */
} mnode_t;

typedef struct corral__msrv corral__msrv_t;
struct corral__msrv {
    corral_apiserver_t *s;
    corral__loop_t *loop;
    struct event *tick;
    int resolution_ms;
    pthread_mutex_t mu; /* nodes and index, read by every loop */
    mnode_t **nodes;
    size_t n, cap;
    corral_hmap_t index; /* name -> position in nodes */
    char **queue;        /* names waiting for a scrape (loop 0) */
    size_t qhead, qlen, qcap;
    int inflight;
    corral_metric_t *gpu_mean, *scrapes, *scrape_seconds;
};

typedef struct scrape {
    corral__msrv_t *m;
    mnode_t *node;
    int64_t t0_us;
} scrape_t;

/* --- entries ------------------------------------------------------------------------------ */

static void pods_free(mpod_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        for (size_t k = 0; k < p[i].nc; k++)
            corral_free(p[i].c[k].name);
        corral_free(p[i].c);
        corral_free(p[i].ns);
        corral_free(p[i].name);
    }
    corral_free(p);
}

static void node_free(mnode_t *n)
{
    corral__agent_cancel(n->call);
    corral_free(n->sc);
    pods_free(n->pods, n->npods);
    corral_free(n->name);
    corral_free(n);
}

static mnode_t *node_find(corral__msrv_t *m, const char *name)
{
    uint32_t i;
    return corral_hmap_get(&m->index, name, &i) ? m->nodes[i] : NULL;
}

static void node_remove(corral__msrv_t *m, size_t i)
{
    mnode_t *n = m->nodes[i];
    if (n->call)
        m->inflight--;
    corral_hmap_del(&m->index, n->name);
    m->nodes[i] = m->nodes[--m->n];
    if (i < m->n)
        corral_hmap_put(&m->index, m->nodes[i]->name, (uint32_t)i);
    node_free(n);
}

static int pod_cmp(const void *a, const void *b)
{
    const mpod_t *x = a, *y = b;
    int c = strcmp(x->ns, y->ns);
    return c ? c : strcmp(x->name, y->name);
}

static mpod_t *pod_find(mpod_t *pods, size_t n, const char *ns, const char *name)
{
    mpod_t key = {.ns = (char *)ns, .name = (char *)name};
    return n ? bsearch(&key, pods, n, sizeof(*pods), pod_cmp) : NULL;
}

/* --- parsing a scrape ------------------------------------------------------------------------ */

typedef struct build {
    mnode_t next;
    size_t podcap;
    corral_hmap_t pods; /* "ns/name" -> index; keys in keys */
    char **keys;
    size_t nkeys, keycap;
    char *gpus[MAX_GPUS];
    int64_t now_ms;
    bool full;
} build_t;

static mpod_t *build_pod(build_t *b, const char *ns, const char *name)
{
    if (!ns || !name || !*ns || !*name || strlen(ns) > NAME_MAX_LEN || strlen(name) > NAME_MAX_LEN)
        return NULL;
    char key[2 * NAME_MAX_LEN + 2];
    snprintf(key, sizeof(key), "%s/%s", ns, name);
    uint32_t i;
    if (corral_hmap_get(&b->pods, key, &i))
        return &b->next.pods[i];
    if (b->next.npods >= MAX_PODS) {
        b->full = true;
        return NULL;
    }
    corral_grow((void **)&b->next.pods, &b->podcap, b->next.npods + 1, sizeof(mpod_t));
    corral_grow((void **)&b->keys, &b->keycap, b->nkeys + 1, sizeof(char *));
    i = (uint32_t)b->next.npods++;
    mpod_t *p = &b->next.pods[i];
    memset(p, 0, sizeof(*p));
    p->ns = corral_strdup(ns);
    p->name = corral_strdup(name);
    b->keys[b->nkeys++] = corral_strdup(key);
    corral_hmap_put(&b->pods, b->keys[b->nkeys - 1], i);
    return p;
}

static mcont_t *build_cont(build_t *b, const corral_promtext_sample_t *s)
{
    mpod_t *p =
        build_pod(b, corral_promtext_label(s, "namespace"), corral_promtext_label(s, "pod"));
    const char *name = corral_promtext_label(s, "container");
    if (!p || !name || !*name || strlen(name) > NAME_MAX_LEN)
        return NULL;
    for (size_t i = 0; i < p->nc; i++)
        if (!strcmp(p->c[i].name, name))
            return &p->c[i];
    if (p->nc >= MAX_CONTAINERS)
        return NULL;
    p->c = corral_realloc(p->c, (p->nc + 1) * sizeof(*p->c));
    mcont_t *c = &p->c[p->nc++];
    memset(c, 0, sizeof(*c));
    c->name = corral_strdup(name);
    c->cpu_s = NAN;
    c->mem = NAN;
    return c;
}

static void build_gpu(build_t *b, const corral_promtext_sample_t *s)
{
    const char *id = corral_promtext_label(s, "acc_id");
    if (!id || !isfinite(s->value))
        return;
    int k = 0;
    for (; k < MAX_GPUS && b->gpus[k]; k++)
        if (!strcmp(b->gpus[k], id))
            return; /* a GPU shared by containers counts once */
    if (k == MAX_GPUS)
        return;
    b->gpus[k] = corral_strdup(id);
    b->next.gpu_sum += s->value;
    b->next.gpu_n++;
}

static int on_sample(void *arg, const corral_promtext_sample_t *s)
{
    build_t *b = arg;
    int64_t ts = s->has_ts ? s->ts_ms : b->now_ms;
    const char *n = s->name;
    if (!strcmp(n, "node_cpu_usage_seconds_total")) {
        b->next.cpu_s = s->value;
        b->next.cpu_ts = ts;
        b->next.has_cpu = isfinite(s->value);
    } else if (!strcmp(n, "node_memory_working_set_bytes")) {
        b->next.mem = s->value;
        b->next.has_mem = isfinite(s->value);
    } else if (!strcmp(n, "container_cpu_usage_seconds_total")) {
        mcont_t *c = build_cont(b, s);
        if (c) {
            c->cpu_s = s->value;
            c->cpu_ts = ts;
        }
    } else if (!strcmp(n, "container_memory_working_set_bytes")) {
        mcont_t *c = build_cont(b, s);
        if (c)
            c->mem = s->value;
    } else if (!strcmp(n, "container_accelerator_duty_cycle")) {
        build_gpu(b, s);
    }
    return 0;
}

static void build_fini(build_t *b)
{
    for (size_t i = 0; i < b->nkeys; i++)
        corral_free(b->keys[i]);
    corral_free(b->keys);
    corral_hmap_fini(&b->pods);
    for (int k = 0; k < MAX_GPUS && b->gpus[k]; k++)
        corral_free(b->gpus[k]);
}

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Rate of a cumulative CPU counter between two samples, in nanocores. */
static bool cpu_rate(double c1, int64_t t1, double c2, int64_t t2, int64_t *out)
{
    if (!isfinite(c1) || !isfinite(c2) || t2 <= t1 || c2 < c1)
        return false;
    /* Clamped (an agent's numbers): at most 1e9 cores. */
    *out = (int64_t)llround(fmin((c2 - c1) / ((double)(t2 - t1) / 1000.0) * 1e9, 1e18));
    return true;
}

/* Rates of next against the node's previous entry old. */
static void compute_rates(mnode_t *next, const mnode_t *old)
{
    next->rate = old->has_cpu && next->has_cpu &&
                 cpu_rate(old->cpu_s, old->cpu_ts, next->cpu_s, next->cpu_ts, &next->nanocores);
    next->window_ms = next->rate ? next->cpu_ts - old->cpu_ts : 0;
    for (size_t i = 0; i < next->npods; i++) {
        mpod_t *p = &next->pods[i];
        const mpod_t *op = pod_find(old->pods, old->npods, p->ns, p->name);
        for (size_t k = 0; k < p->nc; k++) {
            mcont_t *c = &p->c[k];
            p->ts_ms = c->cpu_ts > p->ts_ms ? c->cpu_ts : p->ts_ms;
            for (size_t j = 0; op && j < op->nc; j++) {
                if (strcmp(op->c[j].name, c->name) != 0)
                    continue;
                c->rate =
                    cpu_rate(op->c[j].cpu_s, op->c[j].cpu_ts, c->cpu_s, c->cpu_ts, &c->nanocores);
                if (c->rate && c->cpu_ts - op->c[j].cpu_ts > p->window_ms)
                    p->window_ms = c->cpu_ts - op->c[j].cpu_ts;
            }
        }
    }
}

/* Replace node's entry with the parse of body. */
static void take_scrape(corral__msrv_t *m, mnode_t *node, const corral_buf_t *body)
{
    build_t b;
    memset(&b, 0, sizeof(b));
    corral_hmap_init(&b.pods);
    b.next.cpu_s = NAN;
    b.now_ms = wall_ms();
    char err[256];
    int rc =
        corral_promtext_parse(body->p ? body->p : "", body->len, on_sample, &b, err, sizeof(err));
    if (rc < 0) {
        fprintf(stderr, "apiserver: metrics-server: node %s: bad /metrics/resource: %s\n",
                node->name, err);
        build_fini(&b);
        pods_free(b.next.pods, b.next.npods);
        corral_metric_add(m->scrapes, (const char *[]){"error"}, 1);
        return;
    }
    if (b.full)
        fprintf(stderr, "apiserver: metrics-server: node %s reports more than %d pods; kept %d\n",
                node->name, MAX_PODS, MAX_PODS);
    if (b.next.npods)
        qsort(b.next.pods, b.next.npods, sizeof(mpod_t), pod_cmp);
    compute_rates(&b.next, node);
    mpod_t *old = node->pods;
    size_t nold = node->npods;
    pthread_mutex_lock(&m->mu);
    node->cpu_s = b.next.cpu_s;
    node->cpu_ts = b.next.cpu_ts;
    node->has_cpu = b.next.has_cpu;
    node->mem = b.next.mem;
    node->has_mem = b.next.has_mem;
    node->nanocores = b.next.nanocores;
    node->window_ms = b.next.window_ms;
    node->rate = b.next.rate;
    node->pods = b.next.pods;
    node->npods = b.next.npods;
    node->gpu_sum = b.next.gpu_sum;
    node->gpu_n = b.next.gpu_n;
    pthread_mutex_unlock(&m->mu);
    b.next.pods = NULL;
    b.next.npods = 0;
    pods_free(old, nold);
    build_fini(&b);
    corral_metric_add(m->scrapes, (const char *[]){"success"}, 1);
}

/* --- scraping (loop 0) --------------------------------------------------------------------- */

static void pump(corral__msrv_t *m);

static void scrape_done(void *arg, int code, const char *ctype, corral_buf_t *body, const char *err)
{
    (void)ctype;
    scrape_t *sc = arg;
    corral__msrv_t *m = sc->m;
    mnode_t *node = sc->node;
    node->call = NULL;
    node->sc = NULL;
    m->inflight--;
    corral_metric_observe(m->scrape_seconds, NULL, (double)(corral__mono_us() - sc->t0_us) / 1e6);
    corral_free(sc);
    if (code == 200) {
        take_scrape(m, node, body);
    } else {
        corral_metric_add(m->scrapes, (const char *[]){"error"}, 1);
        if (!code)
            fprintf(stderr, "apiserver: metrics-server: %s\n", err);
    }
    pump(m);
}

/* Start queued scrapes while fewer than MAX_INFLIGHT run. */
static void pump(corral__msrv_t *m)
{
    corral_arena_t a;
    corral_arena_init(&a);
    while (m->inflight < MAX_INFLIGHT && m->qlen) {
        char *name = m->queue[m->qhead];
        m->qhead = (m->qhead + 1) % m->qcap;
        m->qlen--;
        mnode_t *node = node_find(m, name);
        corral_free(name);
        if (!node || node->call)
            continue;
        node->queued = false;
        corral__agent_target_t t;
        char err[512];
        corral_arena_reset(&a);
        int rc = corral__agent_target(m->loop->rd, &a, node->name, 0, &t, err, sizeof(err));
        scrape_t *sc = corral_calloc(1, sizeof(*sc));
        sc->m = m;
        sc->node = node;
        sc->t0_us = corral__mono_us();
        if (rc == 0)
            rc = corral__agent_get(m->loop, &t, "/metrics/resource", SCRAPE_MAX, scrape_done, sc,
                                   &node->call, err, sizeof(err));
        if (rc) {
            corral_free(sc);
            corral_metric_add(m->scrapes, (const char *[]){"error"}, 1);
            continue;
        }
        node->sc = sc;
        m->inflight++;
    }
    corral_arena_fini(&a);
}

static void enqueue(corral__msrv_t *m, mnode_t *node)
{
    if (node->queued || node->call)
        return;
    if (m->qlen == m->qcap) {
        size_t cap = m->qcap ? 2 * m->qcap : 64;
        char **q = corral_malloc(cap * sizeof(*q));
        for (size_t i = 0; i < m->qlen; i++)
            q[i] = m->queue[(m->qhead + i) % m->qcap];
        corral_free(m->queue);
        m->queue = q;
        m->qcap = cap;
        m->qhead = 0;
    }
    m->queue[(m->qhead + m->qlen++) % m->qcap] = corral_strdup(node->name);
    node->queued = true;
}

static bool node_ready(const corral_val_t *n)
{
    const corral_val_t *conds = corral_val_dig(n, "status.conditions");
    for (size_t i = 0; conds && conds->kind == CORRAL_VAL_SEQ && i < conds->n; i++) {
        const char *t = corral_val_get_str(conds->items[i], "type");
        const char *st = corral_val_get_str(conds->items[i], "status");
        if (t && st && !strcmp(t, "Ready"))
            return !strcmp(st, "True");
    }
    return false;
}

typedef struct tick_ctx {
    corral__msrv_t *m;
    corral_arena_t a;
} tick_ctx_t;

static int tick_row(void *ctx, const corral_store_row_t *row)
{
    tick_ctx_t *t = ctx;
    corral__msrv_t *m = t->m;
    corral_arena_reset(&t->a);
    corral_val_t *n = corral__json_tree(&t->a, row->json, row->json_len);
    if (!n || !node_ready(n))
        return 0;
    mnode_t *node = node_find(m, row->name);
    if (!node) {
        node = corral_calloc(1, sizeof(*node));
        node->name = corral_strdup(row->name);
        node->cpu_s = NAN;
        pthread_mutex_lock(&m->mu);
        corral_grow((void **)&m->nodes, &m->cap, m->n + 1, sizeof(mnode_t *));
        m->nodes[m->n] = node;
        corral_hmap_put(&m->index, node->name, (uint32_t)m->n++);
        pthread_mutex_unlock(&m->mu);
    }
    node->seen = true;
    enqueue(m, node);
    return 0;
}

static void tick_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    corral__msrv_t *m = arg;
    if (m->s->stopping)
        return;
    tick_ctx_t t = {.m = m};
    corral_arena_init(&t.a);
    for (size_t i = 0; i < m->n; i++)
        m->nodes[i]->seen = false;
    int64_t rev = 0;
    int rc = corral_store_list(m->loop->rd, corral__res_of_kind(CORRAL_KIND_NODE)->key, "", NULL,
                               NULL, tick_row, &t, &rev);
    corral_arena_fini(&t.a);
    if (rc == 0) {
        pthread_mutex_lock(&m->mu);
        for (size_t i = m->n; i-- > 0;)
            if (!m->nodes[i]->seen)
                node_remove(m, i); /* gone or not Ready: its metrics go too */
        pthread_mutex_unlock(&m->mu);
    }
    pump(m);
    struct timeval tv = {m->resolution_ms / 1000, (suseconds_t)(m->resolution_ms % 1000) * 1000};
    evtimer_add(m->tick, &tv);
}

static void collect(corral_metrics_t *reg, void *arg)
{
    (void)reg;
    corral__msrv_t *m = arg;
    double sum = 0;
    int n = 0;
    pthread_mutex_lock(&m->mu);
    for (size_t i = 0; i < m->n; i++) {
        sum += m->nodes[i]->gpu_sum;
        n += m->nodes[i]->gpu_n;
    }
    pthread_mutex_unlock(&m->mu);
    corral_metric_set(m->gpu_mean, NULL, n ? sum / n : 0);
}

void corral__msrv_init(corral_apiserver_t *s)
{
    corral__msrv_t *m = corral_calloc(1, sizeof(*m));
    m->s = s;
    m->loop = &s->loops[0];
    m->resolution_ms = s->opts.metrics_resolution_ms > 0 ? s->opts.metrics_resolution_ms : 15000;
    pthread_mutex_init(&m->mu, NULL);
    corral_hmap_init(&m->index);
    corral_metrics_t *reg = corral__apimetrics_registry(s);
    static const char *const result[] = {"result", NULL};
    double b[12];
    size_t nb = corral_metrics_exp_buckets(0.001, 2, 12, b);
    m->gpu_mean = corral_metrics_gauge(
        reg, "corral_cluster_gpu_utilization_mean",
        "Mean utilization (0-100) of the GPUs pods hold, from the agents' "
        "container_accelerator_duty_cycle at the last scrape (0 when none is held).",
        NULL);
    m->scrapes =
        corral_metrics_counter(reg, "corral_apiserver_metrics_scrapes_total",
                               "Scrapes of node agents' /metrics/resource by result.", result);
    m->scrape_seconds =
        corral_metrics_histogram(reg, "corral_apiserver_metrics_scrape_duration_seconds",
                                 "Time from a scrape's start to its parsed answer.", NULL, b, nb);
    corral_metrics_on_collect(reg, collect, m);
    s->msrv = m;
    if (s->opts.metrics_resolution_ms < 0)
        return; /* off */
    m->tick = evtimer_new(m->loop->base, tick_cb, m);
    struct timeval now = {0, 1000};
    evtimer_add(m->tick, &now);
}

void corral__msrv_free(corral_apiserver_t *s)
{
    corral__msrv_t *m = s->msrv;
    if (!m)
        return;
    if (m->tick)
        event_free(m->tick);
    for (size_t i = 0; i < m->n; i++) {
        node_free(m->nodes[i]);
    }
    for (size_t i = 0; i < m->qlen; i++)
        corral_free(m->queue[(m->qhead + i) % m->qcap]);
    corral_free(m->queue);
    corral_free(m->nodes);
    corral_hmap_fini(&m->index);
    pthread_mutex_destroy(&m->mu);
    corral_free(m);
    s->msrv = NULL;
}

/* --- answers ------------------------------------------------------------------------------- */

static void put_time(corral_buf_t *b, const char *key, int64_t ms)
{
    time_t t = (time_t)(ms / 1000);
    struct tm tm;
    char ts[40];
    gmtime_r(&t, &tm);
    strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
    corral_buf_printf(b, "\"%s\":\"%s\"", key, ts);
}

static void put_usage(corral_buf_t *b, int64_t nanocores, double mem)
{
    /* An agent's number, clamped before it becomes an integer (1 EiB). */
    long long ki = isfinite(mem) && mem > 0 ? (long long)fmin(mem / 1024, 0x1p50) : 0;
    corral_buf_printf(b, "\"usage\":{\"cpu\":\"%lldn\",\"memory\":\"%lldKi\"}",
                      (long long)nanocores, ki);
}

static void put_meta(corral_buf_t *b, const char *ns, const char *name)
{
    corral_buf_puts(b, "\"metadata\":{\"name\":");
    corral_json_quote(b, name, strlen(name));
    if (ns) {
        corral_buf_puts(b, ",\"namespace\":");
        corral_json_quote(b, ns, strlen(ns));
    }
    corral_buf_putc(b, ',');
    put_time(b, "creationTimestamp", wall_ms());
    corral_buf_putc(b, '}');
}

/* A table row's cells for usage (kubectl get nodemetrics/podmetrics). */
static void put_cells(corral_buf_t *b, const char *name, int64_t nanocores, double mem,
                      int64_t window_ms)
{
    corral_buf_puts(b, "{\"cells\":[");
    corral_json_quote(b, name, strlen(name));
    corral_buf_printf(b, ",\"%lldm\",\"%lldMi\",\"%.3fs\"]", (long long)(nanocores / 1000000),
                      isfinite(mem) && mem > 0 ? (long long)fmin(mem / (1024 * 1024), 0x1p40) : 0LL,
                      (double)window_ms / 1000.0);
}

typedef struct out {
    corral__req_t *r;
    corral__msrv_t *m;
    corral_buf_t b;
    size_t n;
    bool table;
    corral__filter_t f;
} out_t;

/* One NodeMetrics (or table row); false when no rate is known yet. */
static bool put_node(out_t *o, const mnode_t *n)
{
    if (!n || !n->rate)
        return false;
    if (o->n++)
        corral_buf_putc(&o->b, ',');
    if (o->table) {
        put_cells(&o->b, n->name, n->nanocores, n->mem, n->window_ms);
        corral_buf_puts(&o->b, ",\"object\":{\"kind\":\"PartialObjectMetadata\",\"apiVersion\":"
                               "\"meta.k8s.io/v1\",");
        put_meta(&o->b, NULL, n->name);
        corral_buf_puts(&o->b, "}}");
        return true;
    }
    corral_buf_puts(&o->b, "{\"kind\":\"NodeMetrics\",\"apiVersion\":\"metrics.k8s.io/v1beta1\",");
    put_meta(&o->b, NULL, n->name);
    corral_buf_putc(&o->b, ',');
    put_time(&o->b, "timestamp", n->cpu_ts);
    corral_buf_printf(&o->b, ",\"window\":\"%.3fs\",", (double)n->window_ms / 1000.0);
    put_usage(&o->b, n->nanocores, n->has_mem ? n->mem : 0);
    corral_buf_putc(&o->b, '}');
    return true;
}

static bool put_pod(out_t *o, const mpod_t *p)
{
    if (!p || !p->nc)
        return false;
    int64_t cpu = 0;
    double mem = 0;
    for (size_t k = 0; k < p->nc; k++) {
        if (!p->c[k].rate)
            return false; /* as metrics-server: a pod is reported whole or not at all */
        cpu += p->c[k].nanocores;
        mem += isfinite(p->c[k].mem) ? p->c[k].mem : 0;
    }
    if (o->n++)
        corral_buf_putc(&o->b, ',');
    if (o->table) {
        put_cells(&o->b, p->name, cpu, mem, p->window_ms);
        corral_buf_puts(&o->b, ",\"object\":{\"kind\":\"PartialObjectMetadata\",\"apiVersion\":"
                               "\"meta.k8s.io/v1\",");
        put_meta(&o->b, p->ns, p->name);
        corral_buf_puts(&o->b, "}}");
        return true;
    }
    corral_buf_puts(&o->b, "{\"kind\":\"PodMetrics\",\"apiVersion\":\"metrics.k8s.io/v1beta1\",");
    put_meta(&o->b, p->ns, p->name);
    corral_buf_putc(&o->b, ',');
    put_time(&o->b, "timestamp", p->ts_ms);
    corral_buf_printf(&o->b, ",\"window\":\"%.3fs\",\"containers\":[",
                      (double)p->window_ms / 1000.0);
    for (size_t k = 0; k < p->nc; k++) {
        corral_buf_puts(&o->b, k ? ",{\"name\":" : "{\"name\":");
        corral_json_quote(&o->b, p->c[k].name, strlen(p->c[k].name));
        corral_buf_putc(&o->b, ',');
        put_usage(&o->b, p->c[k].nanocores, p->c[k].mem);
        corral_buf_putc(&o->b, '}');
    }
    corral_buf_puts(&o->b, "]}");
    return true;
}

static void begin(out_t *o, const char *list_kind)
{
    corral_buf_init(&o->b);
    if (o->table)
        corral_buf_puts(
            &o->b,
            "{\"kind\":\"Table\",\"apiVersion\":\"meta.k8s.io/v1\",\"metadata\":{},"
            "\"columnDefinitions\":["
            "{\"name\":\"Name\",\"type\":\"string\",\"format\":\"name\",\"description\":\"Name\","
            "\"priority\":0},"
            "{\"name\":\"CPU\",\"type\":\"string\",\"format\":\"\",\"description\":\"CPU usage "
            "(millicores)\",\"priority\":0},"
            "{\"name\":\"Memory\",\"type\":\"string\",\"format\":\"\",\"description\":\"Memory "
            "working set\",\"priority\":0},"
            "{\"name\":\"Window\",\"type\":\"string\",\"format\":\"\",\"description\":\"The "
            "interval the CPU rate covers\",\"priority\":0}],\"rows\":[");
    else
        corral_buf_printf(&o->b,
                          "{\"kind\":\"%s\",\"apiVersion\":\"metrics.k8s.io/v1beta1\","
                          "\"metadata\":{},\"items\":[",
                          list_kind);
}

static void finish(out_t *o)
{
    corral_buf_puts(&o->b, "]}");
    corral__reply_buf(o->r, 200, &o->b);
}

static int node_row(void *ctx, const corral_store_row_t *row)
{
    out_t *o = ctx;
    if (corral__filter_match(&o->f, row->attrs, row->attrs_len))
        put_node(o, node_find(o->m, row->name));
    return 0;
}

static void metrics_not_found(corral__req_t *r, const char *what)
{
    corral__status(r, 404, "NotFound", what, r->name, "%s.metrics.k8s.io \"%s\" not found", what,
                   r->name);
}

void corral__h_nodemetrics(corral__req_t *r)
{
    corral__msrv_t *m = r->srv->msrv;
    out_t o = {.r = r, .m = m};
    r->res = corral__res_of_kind(CORRAL_KIND_NODE);
    o.table = corral__table_mode(r) != CORRAL__TABLE_NONE;
    if (!r->name && !corral__filter_parse(r, &o.f))
        return;
    begin(&o, "NodeMetricsList");
    if (r->name) {
        corral_store_row_t row;
        pthread_mutex_lock(&m->mu);
        bool ok = corral_store_get(corral__rd(r), r->res->key, "", r->name, r->a, &row) == 0 &&
                  put_node(&o, node_find(m, r->name));
        pthread_mutex_unlock(&m->mu);
        if (!ok) {
            corral_buf_fini(&o.b);
            metrics_not_found(r, "nodemetrics");
            return;
        }
        if (!o.table) { /* the object itself, not a list */
            size_t skip = strlen("{\"kind\":\"NodeMetricsList\",\"apiVersion\":\"metrics.k8s.io/"
                                 "v1beta1\",\"metadata\":{},\"items\":[");
            corral__reply(r, 200, "application/json", o.b.p + skip, o.b.len - skip);
            corral_buf_fini(&o.b);
            return;
        }
        finish(&o);
        return;
    }
    int64_t rev = 0;
    pthread_mutex_lock(&m->mu);
    int rc = corral_store_list(corral__rd(r), r->res->key, "", NULL, NULL, node_row, &o, &rev);
    pthread_mutex_unlock(&m->mu);
    if (rc) {
        corral_buf_fini(&o.b);
        corral__internal(r, rc);
        return;
    }
    finish(&o);
}

static int pod_row(void *ctx, const corral_store_row_t *row)
{
    out_t *o = ctx;
    if (!corral__filter_match(&o->f, row->attrs, row->attrs_len))
        return 0;
    const char *node = corral_store_attrs_get(row->attrs, row->attrs_len, 'f', "spec.nodeName");
    mnode_t *n = node && *node ? node_find(o->m, node) : NULL;
    if (n)
        put_pod(o, pod_find(n->pods, n->npods, row->ns, row->name));
    return 0;
}

void corral__h_podmetrics(corral__req_t *r)
{
    corral__msrv_t *m = r->srv->msrv;
    out_t o = {.r = r, .m = m};
    r->res = corral__res_of_kind(CORRAL_KIND_POD);
    o.table = corral__table_mode(r) != CORRAL__TABLE_NONE;
    if (!r->name && !corral__filter_parse(r, &o.f))
        return;
    begin(&o, "PodMetricsList");
    int64_t rev = 0;
    int rc = 0;
    pthread_mutex_lock(&m->mu);
    if (r->name) {
        corral_store_row_t row;
        if (corral_store_get(corral__rd(r), r->res->key, r->ns, r->name, r->a, &row) == 0)
            pod_row(&o, &row);
    } else {
        rc = corral_store_list(corral__rd(r), r->res->key, r->ns, NULL, NULL, pod_row, &o, &rev);
    }
    pthread_mutex_unlock(&m->mu);
    if (rc) {
        corral_buf_fini(&o.b);
        corral__internal(r, rc);
        return;
    }
    if (r->name && !o.n) {
        corral_buf_fini(&o.b);
        metrics_not_found(r, "podmetrics");
        return;
    }
    if (r->name && !o.table) {
        size_t skip = strlen("{\"kind\":\"PodMetricsList\",\"apiVersion\":\"metrics.k8s.io/"
                             "v1beta1\",\"metadata\":{},\"items\":[");
        corral__reply(r, 200, "application/json", o.b.p + skip, o.b.len - skip);
        corral_buf_fini(&o.b);
        return;
    }
    finish(&o);
}
