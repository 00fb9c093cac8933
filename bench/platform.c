/*
 * The platform benchmark (issue 9; numbers in docs/benchmarks.md, run by
 * bench/platform.sh): pods through the API server, the scheduler and the
 * node agents, measured from the outside, as a user's client sees them.
 *
 *   platform throughput --server URL [-n 10000] [-c 8]
 *       create N one-GPU pods from C threads as fast as they go; a pod
 *       informer records when each pod is first seen bound and Running;
 *       prints create rate, bound/s and Running/s (first create to last).
 *   platform latency --server URL [-n 200]
 *       one pod at a time on an idle cluster: create, wait until Running,
 *       delete; prints create-to-Running p50/p99/max.
 *   platform stream --server URL [-n 1000] [--gpus-total 32] [--seed S]
 *       N jobs of 1, 2, 4 or 8 GPUs (uniform), each one pod lasting 1 s
 *       (corral.dev/sim-duration, hollow agents), submitted as fast as one
 *       client goes; prints the submit rate, the mean GPU allocation while
 *       some job waits, and the time to finish all against the ideal
 *       (GPU-seconds / total GPUs).
 *
 * Times are taken on this client's monotonic clock when the watch event
 * arrives: what a user would observe, including the watch's delay.
 */
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "corral/client.h"
#include "corral/hmap.h"
#include "corral/informer.h"

typedef struct opts {
    const char *mode, *server, *token, *ns, *pids;
    long n, conc, gpus_total;
    unsigned seed;
} opts_t;

/* Per pod: what the informer saw, and when. */
typedef struct track {
    int64_t created, bound, running, done;
    int gpus;
} track_t;

typedef struct bench {
    opts_t o;
    corral_client_config_t cfg;
    track_t *t;
    corral_hmap_t idx; /* pod name -> index */
    char **names;
    long next;  /* next pod to create or delete (worker threads) */
    long limit; /* ... up to this one */
    bool deleting;
    const char *pids; /* churn: components whose memory is sampled */
    pthread_mutex_t mu;
    corral_evq_t *q;
    corral_informer_t *inf;
    long nbound, nrunning, ndone;
} bench_t;

static corral_client_t *connect_client(const bench_t *b)
{
    return corral_client_new(&b->cfg);
}

static void pod_json(corral_buf_t *out, const char *ns, const char *name, int gpus,
                     const char *duration)
{
    corral_buf_printf(out,
                      "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\","
                      "\"namespace\":\"%s\",\"labels\":{\"bench\":\"platform\"}",
                      name, ns);
    if (duration)
        corral_buf_printf(out, ",\"annotations\":{\"corral.dev/sim-duration\":\"%s\"}", duration);
    corral_buf_printf(out,
                      "},\"spec\":{\"schedulerName\":\"corral\",\"restartPolicy\":\"Never\","
                      "\"terminationGracePeriodSeconds\":0,"
                      "\"containers\":[{\"name\":\"c\",\"image\":\"none\",\"command\":[\"true\"]");
    if (gpus > 0)
        corral_buf_printf(out, ",\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"%d\"}}", gpus);
    corral_buf_puts(out, "}]}}");
}

static int create_pod(corral_client_t *c, const bench_t *b, long i, const char *duration)
{
    corral_buf_t body, path;
    corral_buf_init(&body);
    corral_buf_init(&path);
    pod_json(&body, b->o.ns, b->names[i], b->t[i].gpus, duration);
    corral_buf_printf(&path, "/api/v1/namespaces/%s/pods", b->o.ns);
    corral_client_resp_t r;
    corral_client_resp_init(&r);
    int rc = corral_client_request(c, "POST", path.p, NULL, body.p, body.len, &r);
    if (rc != 0 || r.code != 201) {
        char reason[64], msg[256];
        corral_client_error(&r, reason, sizeof(reason), msg, sizeof(msg));
        fprintf(stderr, "platform: create %s: %ld %s\n", b->names[i], r.code, msg);
        rc = CORRAL_EIO;
    }
    corral_client_resp_fini(&r);
    corral_buf_fini(&body);
    corral_buf_fini(&path);
    return rc;
}

static void delete_pod(corral_client_t *c, const bench_t *b, long i)
{
    char path[256];
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s?gracePeriodSeconds=0", b->o.ns,
             b->names[i]);
    corral_client_resp_t r;
    corral_client_resp_init(&r);
    corral_client_request(c, "DELETE", path, NULL, NULL, 0, &r);
    corral_client_resp_fini(&r);
}

/* Apply the queued pod events to the tracks. */
static void drain(bench_t *b, int timeout_ms)
{
    corral_watch_ev_t *list = corral_evq_take(b->q, timeout_ms);
    int64_t t = now_ns();
    for (corral_watch_ev_t *ev = list; ev; ev = ev->next) {
        uint32_t i;
        if (!ev->obj || !corral_hmap_get(&b->idx, ev->name, &i))
            continue;
        track_t *k = &b->t[i];
        const corral_pod_t *p = ev->obj->u.pod;
        const char *phase = p->status.phase ? p->status.phase : "";
        if (!k->bound && p->spec.node_name && *p->spec.node_name) {
            k->bound = t;
            b->nbound++;
        }
        if (!k->running && (strcmp(phase, "Running") == 0 || strcmp(phase, "Succeeded") == 0)) {
            k->running = t;
            b->nrunning++;
        }
        if (!k->done && (strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0 ||
                         ev->type == CORRAL_WATCH_DELETED)) {
            k->done = t;
            b->ndone++;
        }
    }
    corral_watch_ev_free_list(list);
}

static void *creator(void *arg)
{
    bench_t *b = arg;
    corral_client_t *c = connect_client(b);
    for (;;) {
        pthread_mutex_lock(&b->mu);
        long i = b->next < b->limit ? b->next++ : -1;
        pthread_mutex_unlock(&b->mu);
        if (i < 0)
            break;
        if (b->deleting) {
            delete_pod(c, b, i);
            continue;
        }
        b->t[i].created = now_ns();
        create_pod(c, b, i, strcmp(b->o.mode, "stream") == 0 ? "1s" : NULL);
    }
    corral_client_free(c);
    return NULL;
}

static void workers(bench_t *b, long from, long to, bool deleting);

static int start_watch(bench_t *b)
{
    corral_informer_opts_t io = {
        .kind = CORRAL_KIND_POD, .ns = b->o.ns, .label_selector = "bench=platform"};
    char err[256];
    b->q = corral_evq_new();
    if (corral_informer_start(&b->cfg, &io, b->q, &b->inf, err, sizeof(err)) != 0) {
        fprintf(stderr, "platform: %s\n", err);
        return 1;
    }
    while (!corral_informer_synced(b->inf))
        drain(b, 50);
    return 0;
}

static double rate(long n, int64_t from, int64_t to)
{
    return to > from ? (double)n * 1e9 / (double)(to - from) : 0;
}

static int run_throughput(bench_t *b)
{
    b->limit = b->o.n;
    int64_t t0 = now_ns();
    workers(b, 0, b->o.n, false);
    int64_t t_created = now_ns();
    int64_t limit = t_created + (int64_t)600 * 1000000000;
    while (b->nrunning < b->o.n && now_ns() < limit)
        drain(b, 100);
    int64_t last_bound = 0, last_running = 0;
    for (long i = 0; i < b->o.n; i++) {
        last_bound = b->t[i].bound > last_bound ? b->t[i].bound : last_bound;
        last_running = b->t[i].running > last_running ? b->t[i].running : last_running;
    }
    printf("pods %ld: created in %.2f s (%.0f/s), bound %ld in %.2f s (%.0f pods/s), "
           "running %ld in %.2f s (%.0f pods/s)\n",
           b->o.n, (double)(t_created - t0) / 1e9, rate(b->o.n, t0, t_created), b->nbound,
           (double)(last_bound - t0) / 1e9, rate(b->nbound, t0, last_bound), b->nrunning,
           (double)(last_running - t0) / 1e9, rate(b->nrunning, t0, last_running));
    return b->nrunning == b->o.n ? 0 : 1;
}

/* Run the worker threads over [from, to), creating or deleting. */
static void workers(bench_t *b, long from, long to, bool deleting)
{
    b->next = from;
    b->limit = to;
    b->deleting = deleting;
    pthread_t th[64];
    long nt = b->o.conc < 1 ? 1 : b->o.conc > 64 ? 64 : b->o.conc;
    for (long i = 0; i < nt; i++)
        pthread_create(&th[i], NULL, creator, b);
    for (long i = 0; i < nt; i++)
        pthread_join(th[i], NULL);
}

/* Resident memory of a process in KiB (0 when gone). */
static long rss_kib(long pid)
{
    char path[64], line[256];
    snprintf(path, sizeof(path), "/proc/%ld/status", pid);
    FILE *fp = fopen(path, "r");
    long kib = 0;
    while (fp && fgets(line, sizeof(line), fp))
        if (strncmp(line, "VmRSS:", 6) == 0)
            kib = strtol(line + 6, NULL, 10);
    if (fp)
        fclose(fp);
    return kib;
}

/* churn: rounds of 1,000 pods created, Running, deleted and gone; after
 * each round the resident memory of the --pids processes. */
static int run_churn(bench_t *b)
{
    long round = 1000;
    for (long from = 0; from < b->o.n; from += round) {
        long to = from + round < b->o.n ? from + round : b->o.n;
        workers(b, from, to, false);
        int64_t limit = now_ns() + (int64_t)120 * 1000000000;
        while (b->nrunning < to && now_ns() < limit)
            drain(b, 50);
        workers(b, from, to, true);
        while (b->ndone < to && now_ns() < limit)
            drain(b, 50);
        if (b->ndone < to) {
            fprintf(stderr, "platform: round at %ld did not finish\n", from);
            return 1;
        }
        printf("pods %6ld created and deleted; RSS KiB:", to);
        char *pids = corral_strdup(b->pids ? b->pids : "");
        char *save = NULL;
        for (char *p = strtok_r(pids, ",", &save); p; p = strtok_r(NULL, ",", &save))
            printf(" %s=%ld", p, rss_kib(strtol(p, NULL, 10)));
        corral_free(pids);
        printf("\n");
        fflush(stdout);
    }
    return 0;
}

static int run_latency(bench_t *b)
{
    corral_client_t *c = connect_client(b);
    int64_t *lat = corral_calloc((size_t)b->o.n, sizeof(int64_t));
    size_t nl = 0;
    for (long i = 0; i < b->o.n; i++) {
        b->t[i].created = now_ns();
        if (create_pod(c, b, i, NULL) != 0)
            break;
        int64_t limit = now_ns() + (int64_t)30 * 1000000000;
        while (!b->t[i].running && now_ns() < limit)
            drain(b, 20);
        if (b->t[i].running)
            lat[nl++] = b->t[i].running - b->t[i].created;
        delete_pod(c, b, i);
    }
    qsort(lat, nl, sizeof(int64_t), cmp_i64);
    printf("create-to-Running over %zu pods: p50 %.1f ms, p99 %.1f ms, max %.1f ms\n", nl,
           pct_ms(lat, nl, 0.5), pct_ms(lat, nl, 0.99), nl ? (double)lat[nl - 1] / 1e6 : 0);
    corral_free(lat);
    corral_client_free(c);
    return nl == (size_t)b->o.n ? 0 : 1;
}

/* Mean share of the GPUs in use while some job waits, sampled every
 * millisecond of the run: allocated (bound, as the scheduler counts) and
 * busy (Running on its node, as the agent reports). A job waits from its
 * create until it is bound. */
static void stream_report(const bench_t *b, int64_t t0, int64_t end)
{
    double alloc_sum = 0, busy_sum = 0, gpu_s = 0;
    long samples = 0;
    for (int64_t t = t0; t < end; t += 1000000) {
        long alloc = 0, busy = 0;
        bool waiting = false;
        for (long i = 0; i < b->o.n; i++) {
            const track_t *k = &b->t[i];
            bool ended = k->done && k->done <= t;
            if (k->bound && k->bound <= t && !ended)
                alloc += k->gpus;
            if (k->running && k->running <= t && !ended)
                busy += k->gpus;
            if (k->created && k->created <= t && (!k->bound || k->bound > t))
                waiting = true;
        }
        if (waiting) {
            alloc_sum += (double)alloc / (double)b->o.gpus_total;
            busy_sum += (double)busy / (double)b->o.gpus_total;
            samples++;
        }
    }
    for (long i = 0; i < b->o.n; i++)
        gpu_s += b->t[i].gpus;
    double ideal = gpu_s / (double)b->o.gpus_total;
    double took = (double)(end - t0) / 1e9;
    printf("jobs %ld (%.0f GPU-seconds): while jobs wait (%ld ms), GPUs allocated %.1f%%, "
           "busy %.1f%%; finished in %.2f s, ideal %.2f s, ratio %.3f\n",
           b->o.n, gpu_s, samples, samples ? 100.0 * alloc_sum / (double)samples : 0,
           samples ? 100.0 * busy_sum / (double)samples : 0, took, ideal, took / ideal);
}

static int run_stream(bench_t *b)
{
    srand(b->o.seed);
    static const int sizes[] = {1, 2, 4, 8};
    for (long i = 0; i < b->o.n; i++)
        b->t[i].gpus = sizes[rand() % 4];
    int64_t t0 = now_ns();
    b->o.conc = 1;
    b->limit = b->o.n;
    creator(b);
    int64_t t_sub = now_ns();
    printf("submitted %ld jobs in %.2f s (%.0f/s)\n", b->o.n, (double)(t_sub - t0) / 1e9,
           rate(b->o.n, t0, t_sub));
    int64_t limit = t_sub + (int64_t)900 * 1000000000;
    while (b->ndone < b->o.n && now_ns() < limit)
        drain(b, 50);
    int64_t end = 0;
    for (long i = 0; i < b->o.n; i++)
        end = b->t[i].done > end ? b->t[i].done : end;
    stream_report(b, t0, end);
    return b->ndone == b->o.n ? 0 : 1;
}

static int parse(int argc, char **argv, opts_t *o)
{
    static const struct option lo[] = {{"server", required_argument, NULL, 's'},
                                       {"token", required_argument, NULL, 't'},
                                       {"namespace", required_argument, NULL, 'N'},
                                       {"gpus-total", required_argument, NULL, 'g'},
                                       {"seed", required_argument, NULL, 'S'},
                                       {"pids", required_argument, NULL, 'P'},
                                       {NULL, 0, NULL, 0}};
    *o = (opts_t){.server = "http://127.0.0.1:6443",
                  .ns = "default",
                  .n = 0,
                  .conc = 8,
                  .gpus_total = 32,
                  .seed = 1};
    if (argc < 2)
        return -1;
    o->mode = argv[1];
    optind = 2;
    int c;
    while ((c = getopt_long(argc, argv, "n:c:", lo, NULL)) != -1) {
        if (c == 's')
            o->server = optarg;
        else if (c == 't')
            o->token = optarg;
        else if (c == 'N')
            o->ns = optarg;
        else if (c == 'n')
            o->n = strtol(optarg, NULL, 10);
        else if (c == 'c')
            o->conc = strtol(optarg, NULL, 10);
        else if (c == 'g')
            o->gpus_total = strtol(optarg, NULL, 10);
        else if (c == 'S')
            o->seed = (unsigned)strtoul(optarg, NULL, 10);
        else if (c == 'P')
            o->pids = optarg;
        else
            return -1;
    }
    if (!o->n)
        o->n = strcmp(o->mode, "throughput") == 0 || strcmp(o->mode, "churn") == 0 ? 10000
               : strcmp(o->mode, "latency") == 0                                   ? 200
                                                                                   : 1000;
    return 0;
}

int main(int argc, char **argv)
{
    bench_t b;
    memset(&b, 0, sizeof(b));
    if (parse(argc, argv, &b.o) != 0 || b.o.n <= 0) {
        fprintf(stderr, "usage: platform throughput|latency|stream|churn --server URL [--token T] "
                        "[-n N] [-c C] [--gpus-total G] [--seed S] [--pids P,P]\n");
        return 2;
    }
    corral_client_config_init(&b.cfg);
    b.cfg.server = corral_strdup(b.o.server);
    b.cfg.token = b.o.token ? corral_strdup(b.o.token) : NULL;
    b.cfg.insecure = true;
    b.pids = b.o.pids;
    b.t = corral_calloc((size_t)b.o.n, sizeof(track_t));
    b.names = corral_calloc((size_t)b.o.n, sizeof(char *));
    corral_hmap_init(&b.idx);
    pthread_mutex_init(&b.mu, NULL);
    char name[64];
    for (long i = 0; i < b.o.n; i++) {
        snprintf(name, sizeof(name), "bench-%s-%ld", b.o.mode, i);
        b.names[i] = corral_strdup(name);
        /* throughput: pods without GPUs, as kube's scheduler_perf (1,000 nodes x
         * 8 GPUs could not hold 10,000 one-GPU pods); the others: one GPU */
        b.t[i].gpus = strcmp(b.o.mode, "throughput") == 0 || strcmp(b.o.mode, "churn") == 0 ? 0 : 1;
        corral_hmap_put(&b.idx, b.names[i], (uint32_t)i);
    }
    int rc = start_watch(&b);
    if (rc == 0) {
        if (strcmp(b.o.mode, "throughput") == 0)
            rc = run_throughput(&b);
        else if (strcmp(b.o.mode, "latency") == 0)
            rc = run_latency(&b);
        else if (strcmp(b.o.mode, "churn") == 0)
            rc = run_churn(&b);
        else
            rc = run_stream(&b);
    }
    corral_informer_stop(b.inf);
    corral_evq_free(b.q);
    for (long i = 0; i < b.o.n; i++)
        corral_free(b.names[i]);
    corral_free(b.names);
    corral_free(b.t);
    corral_hmap_fini(&b.idx);
    corral_client_config_fini(&b.cfg);
    return rc;
}
