/*
 * bench/fgd_cv: the FGD protocol for variants of the corral policy's score
 * constants (corral_score_tune_t), for cross-validating them across pod lists
 * (bench/fgd_cv.sh runs the grid, bench/fgd_cv.py picks and tabulates).
 *
 *   build/bench/fgd_cv --cluster NODES.csv --list NAME=PODS.csv ... \
 *       --variant 'NAME:key=value,...' ... [--seeds K] [--first-seed S] [--threads N]
 *
 * Keys: frag_div, share_gpu, share_first, share_node, cpu_pod, whole_cpu,
 * share_pack, whole_pack, cpu_pack, share_heavy
 * (engine.h); a variant starts from the engine's defaults; the variant
 * "fgd" runs the fgd policy instead. Prints one tab-separated line per run:
 * variant, list, seed, unallocated GPU % at 100% arrived, failed pods.
 */
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/trace_sim.h"

#define MAXV 64
#define MAXL 32

typedef struct variant {
    char name[64];
    sim_policy_t pol;
    corral_score_tune_t tune;
} variant_t;

typedef struct job_set {
    const sim_cluster_t *c;
    sim_workload_t w[MAXL];
    const char *lname[MAXL];
    size_t nl;
    variant_t v[MAXV];
    size_t nv;
    int seeds;
    uint64_t first;
    double *res;
    int64_t *failed;
    size_t next;
    pthread_mutex_t mu;
} job_set_t;

static int set_key(corral_score_tune_t *t, const char *k, int v)
{
    static const struct {
        const char *k;
        size_t off;
    } keys[] = {
        {"frag_div", offsetof(corral_score_tune_t, frag_div)},
        {"share_gpu", offsetof(corral_score_tune_t, share_gpu)},
        {"share_first", offsetof(corral_score_tune_t, share_first)},
        {"share_node", offsetof(corral_score_tune_t, share_node)},
        {"cpu_pod", offsetof(corral_score_tune_t, cpu_pod)},
        {"whole_cpu", offsetof(corral_score_tune_t, whole_cpu)},
        {"share_pack", offsetof(corral_score_tune_t, share_pack)},
        {"whole_pack", offsetof(corral_score_tune_t, whole_pack)},
        {"cpu_pack", offsetof(corral_score_tune_t, cpu_pack)},
        {"share_heavy", offsetof(corral_score_tune_t, share_heavy)},
    };
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        if (strcmp(keys[i].k, k) == 0) {
            *(int *)((char *)t + keys[i].off) = v;
            return 0;
        }
    }
    return -1;
}

/* "NAME:key=value,key=value" on top of the defaults. */
static int parse_variant(const char *spec, variant_t *v)
{
    corral_sched_config_t def;
    corral_sched_config_default(&def);
    memset(v, 0, sizeof(*v));
    v->tune = def.tune;
    const char *colon = strchr(spec, ':');
    size_t nl = colon ? (size_t)(colon - spec) : strlen(spec);
    if (nl == 0 || nl >= sizeof(v->name))
        return -1;
    memcpy(v->name, spec, nl);
    v->pol = *corral__sim_policy(strcmp(v->name, "fgd") == 0 ? "fgd" : "corral");
    v->pol.name = v->name;
    v->pol.tune = &v->tune;
    const char *s = colon ? colon + 1 : "";
    while (*s) {
        char key[32];
        const char *eq = strchr(s, '=');
        if (!eq || (size_t)(eq - s) >= sizeof(key))
            return -1;
        memcpy(key, s, (size_t)(eq - s));
        key[eq - s] = 0;
        char *end;
        long val = strtol(eq + 1, &end, 10);
        if (end == eq + 1 || set_key(&v->tune, key, (int)val) != 0)
            return -1;
        s = *end == ',' ? end + 1 : end;
    }
    return 0;
}

static void *worker(void *arg)
{
    job_set_t *j = arg;
    size_t per_v = j->nl * (size_t)j->seeds, total = j->nv * per_v;
    for (;;) {
        pthread_mutex_lock(&j->mu);
        size_t i = j->next < total ? j->next++ : SIZE_MAX;
        pthread_mutex_unlock(&j->mu);
        if (i == SIZE_MAX)
            return NULL;
        size_t vi = i / per_v, li = i % per_v / (size_t)j->seeds, si = i % (size_t)j->seeds;
        fgd_run_t r;
        corral__fgd_run(j->c, j->w[li].pods, j->w[li].npods, &j->v[vi].pol, j->first + si, &r);
        j->res[i] = 100.0 - r.alloc[3];
        j->failed[i] = r.failed;
    }
}

static int usage(void)
{
    fprintf(stderr, "usage: fgd_cv --cluster NODES.csv --list NAME=PODS.csv... "
                    "--variant 'NAME:key=val,...'... [--seeds K] [--first-seed S] "
                    "[--threads N]\n");
    return 2;
}

int main(int argc, char **argv)
{
    static job_set_t j;
    corral_sim_trace_opts_t o;
    memset(&o, 0, sizeof(o));
    j.seeds = 3;
    j.first = 42;
    int threads = 1;
    const char *lpath[MAXL];
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *a = argv[i], *v = argv[i + 1];
        if (strcmp(a, "--cluster") == 0) {
            o.cluster = v;
        } else if (strcmp(a, "--list") == 0 && j.nl < MAXL && strchr(v, '=')) {
            char *name = strdup(v);
            *strchr(name, '=') = 0;
            j.lname[j.nl] = name;
            lpath[j.nl++] = strchr(v, '=') + 1;
        } else if (strcmp(a, "--variant") == 0 && j.nv < MAXV) {
            if (parse_variant(v, &j.v[j.nv++]) != 0) {
                fprintf(stderr, "fgd_cv: bad variant '%s'\n", v);
                return 2;
            }
        } else if (strcmp(a, "--seeds") == 0) {
            j.seeds = (int)strtol(v, NULL, 10);
        } else if (strcmp(a, "--first-seed") == 0) {
            j.first = strtoull(v, NULL, 10);
        } else if (strcmp(a, "--threads") == 0) {
            threads = (int)strtol(v, NULL, 10);
        } else {
            return usage();
        }
    }
    if (!o.cluster || !j.nl || !j.nv || j.seeds < 1)
        return usage();
    corral_arena_t a;
    corral_arena_init(&a);
    corral_diag_t d;
    corral_diag_init(&d);
    sim_cluster_t c;
    if (corral__load_cluster(&o, &a, &d, &c) != 0)
        return fprintf(stderr, "fgd_cv: cannot load %s\n", o.cluster), 2;
    j.c = &c;
    for (size_t i = 0; i < j.nl; i++) {
        if (corral__load_workload(lpath[i], &a, &d, &j.w[i]) != 0)
            return fprintf(stderr, "fgd_cv: cannot load %s\n", lpath[i]), 2;
    }
    size_t total = j.nv * j.nl * (size_t)j.seeds;
    j.res = calloc(total, sizeof(double));
    j.failed = calloc(total, sizeof(int64_t));
    pthread_mutex_init(&j.mu, NULL);
    corral__sim_parallel(worker, &j, threads, total);
    for (size_t i = 0; i < total; i++) {
        size_t per_v = j.nl * (size_t)j.seeds;
        size_t vi = i / per_v, li = i % per_v / (size_t)j.seeds, si = i % (size_t)j.seeds;
        printf("%s\t%s\t%llu\t%.4f\t%lld\n", j.v[vi].name, j.lname[li],
               (unsigned long long)(j.first + si), j.res[i], (long long)j.failed[i]);
    }
    return 0;
}
