/*
 * The FGD paper's protocol (Weng et al., ATC'23), as SCENARIOS.md §2 states
 * it: inflate the pod list to 1.3x the cluster's GPU capacity (resampling with
 * replacement when the trace is smaller, removing random pods when larger),
 * shuffle with the seed, place pods one at a time with no departures (a pod
 * that fits nowhere fails and is dropped), and record GPU allocation and
 * fragmentation as the arrived work passes 50, 75, 90, 100, 110 and 130% of
 * capacity. Fragmentation is measured against FGD's typical pods: the most
 * popular (cpu, GPUs, GPU share, GPU models) shapes covering 95% of the
 * inflated workload, memory ignored, cpu-only pods included.
 *
 * Every run has its own engine, so runs are independent and may go in
 * parallel threads.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corral/hmap.h"
#include "sim/trace_sim.h"

const int corral__fgd_points[FGD_POINTS] = {50, 75, 90, 100, 110, 130};

#define INFLATE 1.3

static uint64_t rnd(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1DULL;
}

static int64_t pod_gpu_milli(const sim_pod_t *p)
{
    return (int64_t)p->gpus * p->gpu_milli;
}

/* --- typical pods --------------------------------------------------------------------------- */

typedef struct shape_count {
    corral_shape_t s;
    char *key;
    double count;
} shape_count_t;

static int cmp_count(const void *a, const void *b)
{
    const shape_count_t *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return strcmp(x->key, y->key); /* deterministic among equals */
}

static char *shape_key(const sim_pod_t *p)
{
    corral_buf_t b;
    corral_buf_init(&b);
    corral_buf_printf(&b, "%lld|%d|%d|", (long long)p->cpu_milli, p->gpus, p->gpu_milli);
    for (size_t i = 0; i < p->nmodels; i++)
        corral_buf_printf(&b, "%s,", p->models[i]);
    return corral_buf_steal(&b);
}

corral_shape_t *corral__typical_shapes(const sim_pod_t *pods, size_t n, size_t *nshapes)
{
    shape_count_t *sc = corral_calloc(n + 1, sizeof(*sc));
    size_t ns = 0;
    corral_hmap_t seen;
    corral_hmap_init(&seen);
    for (size_t i = 0; i < n; i++) {
        char *key = shape_key(&pods[i]);
        uint32_t j;
        if (corral_hmap_get(&seen, key, &j)) {
            sc[j].count += 1;
            corral_free(key);
            continue;
        }
        const sim_pod_t *p = &pods[i];
        sc[ns] = (shape_count_t){
            {p->cpu_milli, p->gpus, p->gpu_milli, p->models, p->nmodels, 0}, key, 1};
        corral_hmap_put(&seen, key, (uint32_t)ns++);
    }
    corral_hmap_fini(&seen);
    qsort(sc, ns, sizeof(*sc), cmp_count);
    corral_shape_t *out = corral_calloc(ns + 1, sizeof(*out));
    double want = 0.95 * (double)n, cum = 0;
    size_t k = 0;
    while (k < ns && cum < want) {
        out[k] = sc[k].s;
        out[k].weight = sc[k].count;
        cum += sc[k].count;
        k++;
    }
    for (size_t i = 0; i < ns; i++)
        corral_free(sc[i].key);
    corral_free(sc);
    *nshapes = k;
    return out;
}

/* --- the workload ------------------------------------------------------------------------------
 */

/* Indices of the inflated, shuffled workload. Caller frees. */
static size_t *inflate(const sim_pod_t *pods, size_t n, int64_t cap_milli, uint64_t seed,
                       size_t *out_n)
{
    uint64_t s = seed * 2654435761ULL + 1;
    int64_t limit = (int64_t)(INFLATE * (double)cap_milli), total = 0;
    size_t cap = n * 2 + 16, k = 0;
    size_t *idx = corral_malloc(cap * sizeof(*idx));
    for (size_t i = 0; i < n; i++) {
        idx[k++] = i;
        total += pod_gpu_milli(&pods[i]);
    }
    while (total > limit && k > 0) { /* too much: drop random pods */
        size_t j = rnd(&s) % k;
        total -= pod_gpu_milli(&pods[idx[j]]);
        idx[j] = idx[--k];
    }
    while (n > 0) { /* too little: resample until the next would exceed */
        size_t j = rnd(&s) % n;
        if (total + pod_gpu_milli(&pods[j]) > limit)
            break;
        if (k == cap)
            idx = corral_realloc(idx, (cap *= 2) * sizeof(*idx));
        idx[k++] = j;
        total += pod_gpu_milli(&pods[j]);
    }
    for (size_t i = k; i > 1; i--) { /* Fisher-Yates */
        size_t j = rnd(&s) % i;
        size_t t = idx[i - 1];
        idx[i - 1] = idx[j];
        idx[j] = t;
    }
    *out_n = k;
    return idx;
}

/* --- one run
 * -------------------------------------------------------------------------------------- */

static void record_point(corral_engine_t *e, int64_t cap, int k, fgd_run_t *out)
{
    corral_engine_totals_t t;
    corral_engine_totals(e, &t);
    out->alloc[k] = 100.0 * (double)t.gpu_milli_used / (double)cap;
    double idle;
    double frag = corral_engine_frag(e, &idle);
    out->frag[k] = 100.0 * frag / (double)cap;
    out->frag_ratio[k] = idle > 0 ? 100.0 * frag / idle : 0;
}

int corral__fgd_run(const sim_cluster_t *c, const sim_pod_t *pods, size_t npods,
                    const sim_policy_t *policy, uint64_t seed, fgd_run_t *out)
{
    memset(out, 0, sizeof(*out));
    int64_t cap = c->gpus * 1000;
    size_t n;
    size_t *idx = inflate(pods, npods, cap, seed, &n);
    sim_pod_t *work = corral_malloc((n + 1) * sizeof(*work));
    for (size_t i = 0; i < n; i++)
        work[i] = pods[idx[i]];
    corral_free(idx);
    corral_sched_config_t cfg;
    corral__sim_config(policy, seed, &cfg);
    corral_engine_t *e;
    corral_engine_new(&cfg, &e);
    corral_arena_t tmp;
    corral_arena_init(&tmp);
    for (size_t i = 0; i < c->nnodes; i++) {
        corral__sim_add_node(e, &tmp, &c->nodes[i]);
        corral_arena_reset(&tmp);
    }
    size_t nshapes;
    corral_shape_t *shapes = corral__typical_shapes(work, n, &nshapes);
    corral_engine_set_workload(e, shapes, nshapes);
    corral_free(shapes);
    int64_t arrived = 0;
    int next_pct = 0, point = 0;
    for (size_t i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof(name), "p%zu", i);
        corral__sim_add_pod(e, &tmp, &work[i], name, NULL, 0);
        corral_arena_reset(&tmp);
        corral_bind_t b;
        if (corral_engine_place_one(e, "default", name, 0, &b) != 0) {
            corral_engine_remove(e, CORRAL_KIND_POD, "default", name);
            out->failed++;
        }
        arrived += pod_gpu_milli(&work[i]);
        double pct = 100.0 * (double)arrived / (double)cap;
        while (next_pct <= 130 && pct >= next_pct) {
            corral_engine_totals_t t;
            corral_engine_totals(e, &t);
            out->curve[next_pct] = 100.0 * (double)t.gpu_milli_used / (double)cap;
            while (point < FGD_POINTS && corral__fgd_points[point] <= next_pct)
                record_point(e, cap, point++, out);
            next_pct++;
        }
    }
    /* Points never reached (a smaller workload) read as the final state. */
    for (; point < FGD_POINTS; point++)
        record_point(e, cap, point, out);
    for (; next_pct <= 130; next_pct++)
        out->curve[next_pct] = out->alloc[FGD_POINTS - 1];
    out->pods = (int64_t)n;
    corral_arena_fini(&tmp);
    corral_engine_free(e);
    corral_free(work);
    return 0;
}
