/*
 * Metrics of one replay, from the jobs' times and the allocation timeline:
 *
 * - allocation: allocated GPU capacity, time-weighted over the arrival
 *   window [first arrival, last arrival] (after the last arrival the cluster
 *   only drains, which says nothing about the policy); mean and median.
 * - queueing delay: first start - arrival, per started job; percentiles by
 *   nearest rank (p99 of 200 delays is the 198th smallest).
 * - job completion time: end - arrival, per completed job (restarts included).
 * - per queue: share of all GPU-time used, and its delays.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "corral/hmap.h"
#include "sim/replay_int.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of sorted v[0..n). */
double corral__percentile(const double *v, size_t n, double p)
{
    if (n == 0)
        return 0;
    double rank = ceil(p / 100.0 * (double)n);
    size_t i = rank < 1 ? 0 : (size_t)rank - 1;
    return v[i < n ? i : n - 1];
}

static double mean_of(const double *v, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += v[i];
    return n ? s / (double)n : 0;
}

typedef struct seg {
    int64_t used;
    int64_t dt;
} seg_t;

static int cmp_seg(const void *a, const void *b)
{
    const seg_t *x = a, *y = b;
    return x->used < y->used ? -1 : x->used > y->used;
}

/* Allocation over [t0, t1]: the timeline is a step function (samples[i].used
 * from samples[i].t until the next sample). */
static void allocation(const rsample_t *s, size_t n, int64_t t0, int64_t t1, int64_t cap,
                       double *mean, double *p50)
{
    *mean = *p50 = 0;
    if (cap <= 0 || t1 <= t0)
        return;
    seg_t *segs = corral_malloc((n + 1) * sizeof(*segs));
    size_t ns = 0;
    double area = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t a = s[i].t > t0 ? s[i].t : t0;
        int64_t b = i + 1 < n ? s[i + 1].t : t1;
        b = b < t1 ? b : t1;
        if (b <= a)
            continue;
        segs[ns++] = (seg_t){s[i].used, b - a};
        area += (double)s[i].used * (double)(b - a);
    }
    *mean = 100.0 * area / ((double)cap * (double)(t1 - t0));
    qsort(segs, ns, sizeof(*segs), cmp_seg);
    int64_t half = (t1 - t0 + 1) / 2, acc = 0;
    for (size_t i = 0; i < ns; i++) {
        acc += segs[i].dt;
        if (acc >= half) {
            *p50 = 100.0 * (double)segs[i].used / (double)cap;
            break;
        }
    }
    corral_free(segs);
}

static void delays_and_jct(const replay_t *r, rresult_t *out)
{
    size_t n = r->w->npods;
    out->delays = corral_malloc((n + 1) * sizeof(double));
    double *jct = corral_malloc((n + 1) * sizeof(double));
    size_t njct = 0;
    for (size_t i = 0; i < n; i++) {
        const rjob_t *j = &r->jobs[i];
        out->infeasible += j->infeasible;
        out->restarts += j->restarts;
        if (j->first_start >= 0)
            out->delays[out->ndelays++] = (double)(j->first_start - j->src->arrive_ms) / 1000.0;
        else if (!j->infeasible)
            out->unstarted++;
        if (j->done)
            jct[njct++] = (double)(j->end - j->src->arrive_ms) / 1000.0;
    }
    out->started = (int64_t)out->ndelays;
    out->completed = (int64_t)njct;
    qsort(out->delays, out->ndelays, sizeof(double), cmp_double);
    qsort(jct, njct, sizeof(double), cmp_double);
    out->delay_p50 = corral__percentile(out->delays, out->ndelays, 50);
    out->delay_p95 = corral__percentile(out->delays, out->ndelays, 95);
    out->delay_p99 = corral__percentile(out->delays, out->ndelays, 99);
    out->delay_mean = mean_of(out->delays, out->ndelays);
    out->jct_p50 = corral__percentile(jct, njct, 50);
    out->jct_p95 = corral__percentile(jct, njct, 95);
    out->jct_mean = mean_of(jct, njct);
    corral_free(jct);
}

static int cmp_queue(const void *a, const void *b)
{
    return strcmp(((const rqueue_t *)a)->name, ((const rqueue_t *)b)->name);
}

/* Per queue: GPU-time (running attempts counted to the end), delays. */
static void queues(const replay_t *r, rresult_t *out)
{
    corral_hmap_t idx;
    corral_hmap_init(&idx);
    size_t n = r->w->npods, nq = 0;
    uint32_t *qof = corral_malloc((n + 1) * sizeof(*qof));
    const char **names = corral_malloc((n + 1) * sizeof(*names));
    double *gpu = corral_calloc(n + 1, sizeof(double)), total = 0;
    for (size_t i = 0; i < n; i++) {
        const rjob_t *j = &r->jobs[i];
        const char *q = j->src->queue ? j->src->queue : "default";
        uint32_t k;
        if (!corral_hmap_get(&idx, q, &k)) {
            k = (uint32_t)nq;
            names[nq++] = q;
            corral_hmap_put(&idx, q, k);
        }
        qof[i] = k;
        double g = j->gpu_ms;
        if (j->start >= 0 && !j->done)
            g += (double)(r->now - j->start) * j->src->gpus * (j->src->gpu_milli / 1000.0);
        gpu[k] += g;
        total += g;
    }
    out->queues = corral_calloc(nq + 1, sizeof(*out->queues));
    out->nqueues = nq;
    double *d = corral_malloc((n + 1) * sizeof(double));
    for (size_t k = 0; k < nq; k++) {
        size_t nd = 0;
        for (size_t i = 0; i < n; i++) {
            const rjob_t *j = &r->jobs[i];
            if (qof[i] == k && j->first_start >= 0)
                d[nd++] = (double)(j->first_start - j->src->arrive_ms) / 1000.0;
        }
        qsort(d, nd, sizeof(double), cmp_double);
        rqueue_t *q = &out->queues[k];
        q->name = names[k];
        q->share = total > 0 ? 100.0 * gpu[k] / total : 0;
        q->delay_p50 = corral__percentile(d, nd, 50);
        q->delay_p99 = corral__percentile(d, nd, 99);
        for (size_t i = 0; i < n; i++)
            q->jobs += qof[i] == k;
    }
    qsort(out->queues, nq, sizeof(*out->queues), cmp_queue);
    corral_free(d);
    corral_free(gpu);
    corral_free(names);
    corral_free(qof);
    corral_hmap_fini(&idx);
}

void corral__replay_measure(const replay_t *r, rresult_t *out)
{
    memset(out, 0, sizeof(*out));
    out->pol = r->pol;
    out->jobs = (int64_t)r->w->npods;
    out->capacity_milli = r->c->gpus * 1000;
    int64_t t0 = r->w->npods ? r->jobs[r->order[0]].src->arrive_ms : 0;
    int64_t t1 = r->last_arrival > t0 ? r->last_arrival : r->now;
    out->window_s = (double)(t1 - t0) / 1000.0;
    out->makespan_s = (double)(r->now - t0) / 1000.0;
    allocation(r->samples, r->nsamples, t0, t1, out->capacity_milli, &out->alloc_mean,
               &out->alloc_p50);
    delays_and_jct(r, out);
    queues(r, out);
    out->preempted_pods = r->preempted_pods;
    out->cycles = r->cycles;
    out->lost_gpu_hours = r->lost_gpu_ms / 3.6e6;
    out->samples = r->samples;
    out->nsamples = r->nsamples;
    corral__rshare_result(r, out);
}

void corral__replay_result_free(rresult_t *r)
{
    corral_free(r->delays);
    corral_free(r->samples);
    corral_free(r->queues);
    corral_free(r->share_names);
    corral_free(r->share_pct);
    memset(r, 0, sizeof(*r));
}
