/*
 * The API server's load generator (numbers in docs/benchmarks.md, run by
 * bench/apiserver.sh), on libcurl's multi interface: C requests in flight
 * on keep-alive connections, each completion starting the next.
 *
 *   loadgen create --url URL [--target corral|etcd] [-c 16] [-n 20000] [--name-prefix P]
 *       durable creates: Pods (the same JSON for both targets) POSTed to
 *       /api/v1/namespaces/default/pods, or put into etcd through its v3
 *       JSON gateway (POST /v3/kv/put, key /registry/pods/default/NAME, as
 *       kube-apiserver lays out its keys); prints creates/s and latency.
 *   loadgen watch --url URL [-w 100] [-n 10000] [-c 16] [--rate R]
 *       W watchers on ConfigMaps, then N creates (at R/s, 0: as fast as C
 *       clients go) each carrying its send time; every watcher must receive
 *       every write; prints the delivery lag (send to receipt) p50/p99/max.
 *   loadgen list --url URL [--path P] [--repeat 5]
 *       GET P (default /api/v1/pods) and print the time and bytes of each.
 *
 * One process, two threads for watch (writers, watchers), so the machine's
 * cores are shared with the server; see docs/benchmarks.md.
 */
#include <curl/curl.h>
#include <getopt.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"

typedef struct opts {
    const char *mode, *url, *target, *path, *prefix;
    long conc, n, watchers, repeat;
    double rate;
} opts_t;

static size_t discard(char *p, size_t s, size_t n, void *ud)
{
    (void)p;
    (void)ud;
    return s * n;
}

static void b64(const char *s, size_t n, char *out)
{
    static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)(unsigned char)s[i] << 16;
        if (i + 1 < n)
            v |= (unsigned)(unsigned char)s[i + 1] << 8;
        if (i + 2 < n)
            v |= (unsigned)(unsigned char)s[i + 2];
        out[o++] = t[(v >> 18) & 63];
        out[o++] = t[(v >> 12) & 63];
        out[o++] = i + 1 < n ? t[(v >> 6) & 63] : '=';
        out[o++] = i + 2 < n ? t[v & 63] : '=';
    }
    out[o] = '\0';
}

/* --- request pipelines -------------------------------------------------------------------- */

typedef struct slot {
    CURL *h;
    struct curl_slist *hdr;
    char url[512];
    char body[4096];
    int64_t t0;
} slot_t;

typedef struct pipeline {
    const opts_t *o;
    CURLM *m;
    slot_t *slots;
    long issued, done, failed;
    int64_t *lat;
    int64_t start;
    bool watch_payload; /* ConfigMaps carrying their send time */
} pipeline_t;

static const char pod_fmt[] =
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\",\"labels\":{\"app\":"
    "\"bench\",\"team\":\"ml\"}},\"spec\":{\"schedulerName\":\"corral\",\"containers\":[{"
    "\"name\":\"trainer\",\"image\":\"nvcr.io/nvidia/pytorch:24.05-py3\",\"command\":["
    "\"torchrun\",\"train.py\"],\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"1\",\"cpu\":\"8\","
    "\"memory\":\"64Gi\"}}}],\"tolerations\":[{\"key\":\"nvidia.com/gpu\",\"operator\":"
    "\"Exists\",\"effect\":\"NoSchedule\"}]}}";

static void prepare(pipeline_t *p, slot_t *s, long i)
{
    const opts_t *o = p->o;
    char name[128];
    snprintf(name, sizeof(name), "%s%ld", o->prefix, i);
    s->t0 = now_ns();
    if (p->watch_payload) {
        snprintf(s->url, sizeof(s->url), "%s/api/v1/namespaces/default/configmaps", o->url);
        snprintf(s->body, sizeof(s->body),
                 "{\"metadata\":{\"name\":\"%s\"},\"data\":{\"sent\":\"%lld\",\"pad\":\"%0300d\"}}",
                 name, (long long)s->t0, 0);
    } else if (strcmp(o->target, "etcd") == 0) {
        char key[160], value[2048], kb[256], vb[2800];
        snprintf(key, sizeof(key), "/registry/pods/default/%s", name);
        snprintf(value, sizeof(value), pod_fmt, name);
        b64(key, strlen(key), kb);
        b64(value, strlen(value), vb);
        snprintf(s->url, sizeof(s->url), "%s/v3/kv/put", o->url);
        snprintf(s->body, sizeof(s->body), "{\"key\":\"%s\",\"value\":\"%s\"}", kb, vb);
    } else {
        snprintf(s->url, sizeof(s->url), "%s/api/v1/namespaces/default/pods", o->url);
        snprintf(s->body, sizeof(s->body), pod_fmt, name);
    }
    curl_easy_setopt(s->h, CURLOPT_URL, s->url);
    curl_easy_setopt(s->h, CURLOPT_POSTFIELDS, s->body);
    curl_easy_setopt(s->h, CURLOPT_POSTFIELDSIZE, (long)strlen(s->body));
    curl_easy_setopt(s->h, CURLOPT_PRIVATE, s);
    curl_multi_add_handle(p->m, s->h);
}

static void pipeline_init(pipeline_t *p, const opts_t *o, bool watch_payload)
{
    memset(p, 0, sizeof(*p));
    p->o = o;
    p->watch_payload = watch_payload;
    p->m = curl_multi_init();
    p->slots = calloc((size_t)o->conc, sizeof(slot_t));
    p->lat = calloc((size_t)o->n + 1, sizeof(int64_t));
    for (long i = 0; i < o->conc; i++) {
        slot_t *s = &p->slots[i];
        s->h = curl_easy_init();
        s->hdr = curl_slist_append(NULL, "Content-Type: application/json");
        s->hdr = curl_slist_append(s->hdr, "Expect:");
        curl_easy_setopt(s->h, CURLOPT_HTTPHEADER, s->hdr);
        curl_easy_setopt(s->h, CURLOPT_WRITEFUNCTION, discard);
        curl_easy_setopt(s->h, CURLOPT_NOSIGNAL, 1L);
    }
}

static void pipeline_fini(pipeline_t *p)
{
    for (long i = 0; i < p->o->conc; i++) {
        curl_easy_cleanup(p->slots[i].h);
        curl_slist_free_all(p->slots[i].hdr);
    }
    curl_multi_cleanup(p->m);
    free(p->slots);
    free(p->lat);
}

/* Issue o->n requests, at most o->conc at a time (and at o->rate/s when
 * set). Returns the seconds it took. */
static double pipeline_run(pipeline_t *p)
{
    const opts_t *o = p->o;
    p->start = now_ns();
    slot_t **idle = calloc((size_t)o->conc, sizeof(*idle));
    long nidle = 0;
    for (long i = 0; i < o->conc; i++)
        idle[nidle++] = &p->slots[i];
    for (;;) {
        int64_t t = now_ns();
        while (nidle > 0 && p->issued < o->n &&
               (o->rate <= 0 || (double)(t - p->start) * o->rate / 1e9 >= (double)p->issued)) {
            prepare(p, idle[--nidle], p->issued);
            p->issued++;
        }
        int running = 0;
        curl_multi_perform(p->m, &running);
        CURLMsg *msg;
        int left;
        while ((msg = curl_multi_info_read(p->m, &left))) {
            if (msg->msg != CURLMSG_DONE)
                continue;
            slot_t *s;
            long code = 0;
            curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&s);
            curl_easy_getinfo(msg->easy_handle, CURLINFO_RESPONSE_CODE, &code);
            if (msg->data.result != CURLE_OK || (code != 200 && code != 201))
                p->failed++;
            p->lat[p->done++] = now_ns() - s->t0;
            curl_multi_remove_handle(p->m, msg->easy_handle);
            idle[nidle++] = s;
        }
        if (p->done == o->n)
            break;
        curl_multi_poll(p->m, NULL, 0, o->rate > 0 ? 1 : 100, NULL);
    }
    free(idle);
    return (double)(now_ns() - p->start) / 1e9;
}

/* --- create ---------------------------------------------------------------------------------- */

static int run_create(const opts_t *o)
{
    pipeline_t p;
    pipeline_init(&p, o, false);
    double secs = pipeline_run(&p);
    qsort(p.lat, (size_t)p.done, sizeof(int64_t), cmp_i64);
    printf("target=%s clients=%ld creates=%ld failed=%ld seconds=%.2f creates_per_sec=%.0f "
           "p50_ms=%.2f p99_ms=%.2f max_ms=%.2f\n",
           o->target, o->conc, p.done, p.failed, secs, (double)p.done / secs,
           pct_ms(p.lat, (size_t)p.done, 0.5), pct_ms(p.lat, (size_t)p.done, 0.99),
           pct_ms(p.lat, (size_t)p.done, 1.0));
    int rc = p.failed ? 1 : 0;
    pipeline_fini(&p);
    return rc;
}

/* --- watch ------------------------------------------------------------------------------------ */

typedef struct watcher {
    CURL *h;
    char url[512];
    char *buf; /* an incomplete line */
    size_t len, cap;
    long events;
    int64_t *lag;
    bool open;
} watcher_t;

typedef struct watch_run {
    const opts_t *o;
    watcher_t *w;
    long opened;
    volatile bool writes_done;
    int64_t writes_end;
} watch_run_t;

static void watch_line(watcher_t *w, const char *line, size_t n, long max)
{
    static const char key[] = "\"sent\":\"";
    const char *p = memmem(line, n, key, sizeof(key) - 1);
    if (!p || w->events >= max)
        return;
    long long sent = strtoll(p + sizeof(key) - 1, NULL, 10);
    w->lag[w->events++] = now_ns() - sent;
}

typedef struct wctx {
    watcher_t *w;
    long max;
} wctx_t;

static size_t watch_data(char *data, size_t s, size_t n, void *ud)
{
    wctx_t *c = ud;
    watcher_t *w = c->w;
    size_t len = s * n;
    w->open = true;
    const char *p = data, *end = data + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) {
            if (w->len + (size_t)(end - p) > w->cap) {
                w->cap = (w->len + (size_t)(end - p)) * 2;
                w->buf = realloc(w->buf, w->cap);
            }
            memcpy(w->buf + w->len, p, (size_t)(end - p));
            w->len += (size_t)(end - p);
            break;
        }
        if (w->len) {
            if (w->len + (size_t)(nl - p) > w->cap) {
                w->cap = (w->len + (size_t)(nl - p)) * 2;
                w->buf = realloc(w->buf, w->cap);
            }
            memcpy(w->buf + w->len, p, (size_t)(nl - p));
            watch_line(w, w->buf, w->len + (size_t)(nl - p), c->max);
            w->len = 0;
        } else {
            watch_line(w, p, (size_t)(nl - p), c->max);
        }
        p = nl + 1;
    }
    return len;
}

static size_t watch_header(char *data, size_t s, size_t n, void *ud)
{
    wctx_t *c = ud;
    if (s * n >= 12 && memcmp(data, "HTTP/1.1 200", 12) == 0)
        c->w->open = true;
    return s * n;
}

/* Current revision of ConfigMaps in default (watches start after it): the
 * list's own metadata.resourceVersion, which follows the items. */
static char rev[32] = "0";
static char rev_buf[1 << 16];
static size_t rev_len;

static size_t rev_body(char *data, size_t s, size_t n, void *ud)
{
    (void)ud;
    size_t len = s * n;
    if (rev_len + len < sizeof(rev_buf)) {
        memcpy(rev_buf + rev_len, data, len);
        rev_len += len;
    }
    return len;
}

static void rev_find(void)
{
    static const char key[] = "\"resourceVersion\":\"";
    const char *last = NULL;
    for (const char *p = rev_buf;
         (p = memmem(p, rev_len - (size_t)(p - rev_buf), key, sizeof(key) - 1)); p++)
        last = p;
    if (last)
        snprintf(rev, sizeof(rev), "%.*s", (int)strcspn(last + sizeof(key) - 1, "\""),
                 last + sizeof(key) - 1);
}

static void *watchers_main(void *arg)
{
    watch_run_t *r = arg;
    const opts_t *o = r->o;
    CURLM *m = curl_multi_init();
    wctx_t *ctx = calloc((size_t)o->watchers, sizeof(wctx_t));
    for (long i = 0; i < o->watchers; i++) {
        watcher_t *w = &r->w[i];
        ctx[i].w = w;
        ctx[i].max = o->n;
        w->h = curl_easy_init();
        snprintf(w->url, sizeof(w->url),
                 "%s/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=%s", o->url, rev);
        curl_easy_setopt(w->h, CURLOPT_URL, w->url);
        curl_easy_setopt(w->h, CURLOPT_WRITEFUNCTION, watch_data);
        curl_easy_setopt(w->h, CURLOPT_WRITEDATA, &ctx[i]);
        curl_easy_setopt(w->h, CURLOPT_HEADERFUNCTION, watch_header);
        curl_easy_setopt(w->h, CURLOPT_HEADERDATA, &ctx[i]);
        curl_easy_setopt(w->h, CURLOPT_NOSIGNAL, 1L);
        curl_multi_add_handle(m, w->h);
    }
    for (;;) {
        int running;
        curl_multi_perform(m, &running);
        long opened = 0, complete = 0;
        for (long i = 0; i < o->watchers; i++) {
            opened += r->w[i].open;
            complete += r->w[i].events >= o->n;
        }
        __atomic_store_n(&r->opened, opened, __ATOMIC_RELEASE);
        if (complete == o->watchers)
            break;
        if (r->writes_done && now_ns() - r->writes_end > 30 * (int64_t)1000000000)
            break; /* something was lost: report it */
        curl_multi_poll(m, NULL, 0, 50, NULL);
    }
    for (long i = 0; i < o->watchers; i++) {
        curl_multi_remove_handle(m, r->w[i].h);
        curl_easy_cleanup(r->w[i].h);
    }
    curl_multi_cleanup(m);
    free(ctx);
    return NULL;
}

static int run_watch(const opts_t *o)
{
    CURL *h = curl_easy_init();
    char url[512];
    snprintf(url, sizeof(url), "%s/api/v1/namespaces/default/configmaps?limit=1", o->url);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, rev_body);
    curl_easy_perform(h);
    curl_easy_cleanup(h);
    rev_find();
    watch_run_t r;
    memset(&r, 0, sizeof(r));
    r.o = o;
    r.w = calloc((size_t)o->watchers, sizeof(watcher_t));
    for (long i = 0; i < o->watchers; i++)
        r.w[i].lag = calloc((size_t)o->n, sizeof(int64_t));
    pthread_t t;
    pthread_create(&t, NULL, watchers_main, &r);
    while (__atomic_load_n(&r.opened, __ATOMIC_ACQUIRE) < o->watchers)
        nanosleep(&(struct timespec){0, 10000000}, NULL);
    pipeline_t p;
    pipeline_init(&p, o, true);
    double secs = pipeline_run(&p);
    r.writes_end = now_ns();
    r.writes_done = true;
    pthread_join(t, NULL);
    size_t total = 0;
    long short_watchers = 0;
    for (long i = 0; i < o->watchers; i++) {
        total += (size_t)r.w[i].events;
        short_watchers += r.w[i].events < o->n;
    }
    int64_t *all = malloc((total + 1) * sizeof(int64_t));
    size_t k = 0;
    for (long i = 0; i < o->watchers; i++) {
        memcpy(all + k, r.w[i].lag, (size_t)r.w[i].events * sizeof(int64_t));
        k += (size_t)r.w[i].events;
        free(r.w[i].lag);
        free(r.w[i].buf);
    }
    qsort(all, total, sizeof(int64_t), cmp_i64);
    printf("watchers=%ld writes=%ld write_failures=%ld write_seconds=%.2f writes_per_sec=%.0f "
           "deliveries=%zu (want %ld) watchers_short=%ld lag_p50_ms=%.2f lag_p99_ms=%.2f "
           "lag_max_ms=%.2f\n",
           o->watchers, p.done, p.failed, secs, (double)p.done / secs, total, o->watchers * o->n,
           short_watchers, pct_ms(all, total, 0.5), pct_ms(all, total, 0.99),
           pct_ms(all, total, 1.0));
    int rc = (p.failed || short_watchers) ? 1 : 0;
    free(all);
    free(r.w);
    pipeline_fini(&p);
    return rc;
}

/* --- list ------------------------------------------------------------------------------------ */

static int run_list(const opts_t *o)
{
    CURL *h = curl_easy_init();
    char url[1024];
    snprintf(url, sizeof(url), "%s%s", o->url, o->path);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, discard);
    int rc = 0;
    for (long i = 0; i < o->repeat; i++) {
        int64_t t0 = now_ns();
        CURLcode c = curl_easy_perform(h);
        double secs = (double)(now_ns() - t0) / 1e9;
        curl_off_t bytes = 0;
        long code = 0;
        curl_easy_getinfo(h, CURLINFO_SIZE_DOWNLOAD_T, &bytes);
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
        printf("list %s: HTTP %ld, %.1f MB in %.3f s\n", o->path, code, (double)bytes / 1e6, secs);
        rc |= c != CURLE_OK || code != 200;
    }
    curl_easy_cleanup(h);
    return rc;
}

int main(int argc, char **argv)
{
    static const struct option lo[] = {{"url", required_argument, NULL, 'u'},
                                       {"target", required_argument, NULL, 't'},
                                       {"path", required_argument, NULL, 'p'},
                                       {"rate", required_argument, NULL, 'r'},
                                       {"repeat", required_argument, NULL, 'R'},
                                       {"name-prefix", required_argument, NULL, 'P'},
                                       {NULL, 0, NULL, 0}};
    opts_t o = {NULL, NULL, "corral", "/api/v1/pods", "bench-", 16, 20000, 100, 5, 0};
    if (argc < 2) {
        fprintf(stderr, "usage: loadgen create|watch|list --url URL [options] (see the source)\n");
        return 2;
    }
    o.mode = argv[1];
    int c;
    optind = 2;
    while ((c = getopt_long(argc, argv, "c:n:w:", lo, NULL)) != -1) {
        switch (c) {
        case 'u':
            o.url = optarg;
            break;
        case 't':
            o.target = optarg;
            break;
        case 'p':
            o.path = optarg;
            break;
        case 'r':
            o.rate = strtod(optarg, NULL);
            break;
        case 'R':
            o.repeat = strtol(optarg, NULL, 10);
            break;
        case 'P':
            o.prefix = optarg;
            break;
        case 'c':
            o.conc = strtol(optarg, NULL, 10);
            break;
        case 'n':
            o.n = strtol(optarg, NULL, 10);
            break;
        case 'w':
            o.watchers = strtol(optarg, NULL, 10);
            break;
        default:
            return 2;
        }
    }
    if (!o.url || o.conc < 1 || o.n < 1) {
        fprintf(stderr, "loadgen: --url is required; -c and -n must be positive\n");
        return 2;
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);
    int rc = 2;
    if (!strcmp(o.mode, "create"))
        rc = run_create(&o);
    else if (!strcmp(o.mode, "watch"))
        rc = run_watch(&o);
    else if (!strcmp(o.mode, "list"))
        rc = run_list(&o);
    else
        fprintf(stderr, "loadgen: unknown mode %s\n", o.mode);
    curl_global_cleanup();
    return rc;
}
