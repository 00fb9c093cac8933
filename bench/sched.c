/*
 * bench/sched: scheduling throughput of the engine on a synthetic cluster.
 *
 *   build/bench/sched --nodes N --pods M [--seed S] [--policy NAME] [--gang G] [--hold 1]
 *
 * Cluster: N nodes with 8 GPUs each, a third NVSwitch (all NV18), a third
 * DGX-1 style hybrid cube-mesh, a third PCIe with NVLink pairs; 3 queues with
 * weights 1:2:3. Workload: M pods arriving in batches of 1% per cycle (virtual
 * 10 s apart): single pods asking for 1, 2, 4 or 8 GPUs and gangs of 2-64
 * one-GPU pods; each runs 20-200 virtual seconds. All actions and the default
 * policy are on. Afterwards a single gang of G one-GPU pods (default 1024) is
 * placed on the emptied cluster. With --hold 1 pods never finish, so the
 * snapshot ends up holding all M pods (running or pending): the memory test.
 *
 * Prints one JSON object: placements_per_sec (placements / engine time),
 * cycle_ms_p50, cycle_ms_p99, gang_ms, peak_rss_mib and the inputs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "corral/engine.h"

typedef struct bench {
    corral_arena_t a;
    corral_arena_t tmp; /* per object: the engine copies what it keeps */
    corral_engine_t *e;
    uint64_t rng;
    int64_t now;
} bench_t;

static uint64_t rnd(bench_t *b)
{
    uint64_t x = b->rng;
    x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
    b->rng = x;
    return x * 0x2545F4914F6CDD1DULL;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static corral_res_t res(corral_arena_t *a, const char *name, int64_t v)
{
    (void)a;
    corral_res_t r = {name, corral_qty_from_int(v)};
    return r;
}

static const char *topo_nvswitch(corral_arena_t *a)
{
    corral_buf_t b;
    corral_buf_init(&b);
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 8; j++)
            corral_buf_printf(&b, "%s%s", i == j ? "X" : "NV18",
                              j == 7 ? (i == 7 ? "" : ";") : ",");
    char *s = corral_arena_strdup(a, corral_buf_str(&b));
    corral_buf_fini(&b);
    return s;
}

/* DGX-1 (V100): two quads, NV1/NV2 inside, GPU i to i+4 over NV2, SYS else. */
static const char *topo_cubemesh(void)
{
    return "X,NV1,NV1,NV2,NV2,SYS,SYS,SYS;NV1,X,NV2,NV1,SYS,NV2,SYS,SYS;"
           "NV1,NV2,X,NV2,SYS,SYS,NV1,SYS;NV2,NV1,NV2,X,SYS,SYS,SYS,NV1;"
           "NV2,SYS,SYS,SYS,X,NV1,NV1,NV2;SYS,NV2,SYS,SYS,NV1,X,NV2,NV1;"
           "SYS,SYS,NV1,SYS,NV1,NV2,X,NV2;SYS,SYS,SYS,NV1,NV2,NV1,NV2,X";
}

static const char *topo_pairs(void)
{
    return "X,NV4,PIX,PIX,SYS,SYS,SYS,SYS;NV4,X,PIX,PIX,SYS,SYS,SYS,SYS;"
           "PIX,PIX,X,NV4,SYS,SYS,SYS,SYS;PIX,PIX,NV4,X,SYS,SYS,SYS,SYS;"
           "SYS,SYS,SYS,SYS,X,NV4,PIX,PIX;SYS,SYS,SYS,SYS,NV4,X,PIX,PIX;"
           "SYS,SYS,SYS,SYS,PIX,PIX,X,NV4;SYS,SYS,SYS,SYS,PIX,PIX,NV4,X";
}

static void add_node(bench_t *b, int i, const char *nvswitch)
{
    corral_arena_t *a = &b->a;
    corral_obj_t o;
    memset(&o, 0, sizeof(o));
    corral_node_t n;
    memset(&n, 0, sizeof(n));
    o.info = corral_kind_get(CORRAL_KIND_NODE);
    o.meta.name = corral_arena_printf(a, "node-%05d", i);
    corral_kv_t *ann = corral_arena_alloc(a, sizeof(*ann));
    ann->key = CORRAL_GPU_TOPO_ANNOTATION;
    ann->value = i % 3 == 0 ? nvswitch : i % 3 == 1 ? topo_cubemesh() : topo_pairs();
    o.meta.annotations = (corral_strmap_t){ann, 1};
    corral_res_t *r = corral_arena_alloc(a, 4 * sizeof(*r));
    r[0] = res(a, "cpu", 128);
    r[1] = res(a, "memory", (int64_t)1 << 40);
    r[2] = res(a, "nvidia.com/gpu", 8);
    r[3] = res(a, "pods", 110);
    n.allocatable = (corral_reslist_t){r, 4};
    o.u.node = &n;
    corral_engine_upsert(b->e, &o, 0, NULL);
}

static void add_queue(bench_t *b, const char *name, int weight)
{
    corral_obj_t o;
    memset(&o, 0, sizeof(o));
    corral_queue_t q;
    memset(&q, 0, sizeof(q));
    q.weight = weight;
    q.reclaimable = true;
    o.info = corral_kind_get(CORRAL_KIND_QUEUE);
    o.meta.name = name;
    o.u.queue = &q;
    corral_engine_upsert(b->e, &o, 0, NULL);
}

typedef struct running {
    char *ns, *name;
    int64_t end;
} running_t;

/* A pod asking for gpus GPUs, optionally in group grp, in queue q. */
static void add_pod(bench_t *b, const char *name, int gpus, const char *grp, const char *queue)
{
    corral_arena_t *a = &b->tmp;
    corral_obj_t o;
    memset(&o, 0, sizeof(o));
    corral_pod_t p;
    memset(&p, 0, sizeof(p));
    o.info = corral_kind_get(CORRAL_KIND_POD);
    o.meta.name = name;
    o.meta.namespace = "bench";
    corral_kv_t *ann = corral_arena_alloc(a, 2 * sizeof(*ann));
    size_t nann = 0;
    if (grp)
        ann[nann++] = (corral_kv_t){"scheduling.k8s.io/group-name", grp};
    else
        ann[nann++] = (corral_kv_t){"scheduling.volcano.sh/queue-name", queue};
    o.meta.annotations = (corral_strmap_t){ann, nann};
    corral_container_t *c = corral_arena_alloc(a, sizeof(*c));
    c->name = "main";
    c->image = "bench";
    corral_res_t *r = corral_arena_alloc(a, 3 * sizeof(*r));
    r[0] = res(a, "cpu", 4 * gpus);
    r[1] = res(a, "memory", (int64_t)gpus << 34);
    r[2] = res(a, "nvidia.com/gpu", gpus);
    c->limits = (corral_reslist_t){r, 3};
    p.spec.containers = c;
    p.spec.ncontainers = 1;
    o.u.pod = &p;
    corral_engine_upsert(b->e, &o, b->now, NULL);
    corral_arena_reset(&b->tmp);
}

static void add_group(bench_t *b, const char *name, int members, const char *queue)
{
    corral_obj_t o;
    memset(&o, 0, sizeof(o));
    corral_podgroup_t pg;
    memset(&pg, 0, sizeof(pg));
    pg.min_member = members;
    pg.queue = queue;
    o.info = corral_kind_get(CORRAL_KIND_PODGROUP);
    o.meta.name = name;
    o.meta.namespace = "bench";
    o.u.pg = &pg;
    corral_engine_upsert(b->e, &o, b->now, NULL);
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, c = *(const double *)y;
    return a < c ? -1 : a > c;
}

static long peak_rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = 0;
    while (f && fgets(line, sizeof(line), f)) {
        if (strncmp(line, "VmHWM:", 6) == 0)
            kib = strtol(line + 6, NULL, 10);
    }
    if (f)
        fclose(f);
    return kib;
}

/* Submit one unit of work: a single pod, or (one time in six) a gang. */
static int submit(bench_t *b, int *made, int max, int *gangs)
{
    static const char *const queues[] = {"q1", "q2", "q3"};
    const char *q = queues[rnd(b) % 3];
    if (rnd(b) % 6 == 0) {
        int size = 2 + (int)(rnd(b) % 63);
        if (size > max - *made)
            size = max - *made;
        if (size < 2)
            size = 2;
        char *g = corral_arena_printf(&b->a, "gang-%d", (*gangs)++);
        add_group(b, g, size, q);
        for (int i = 0; i < size; i++) {
            char buf[64];
            snprintf(buf, sizeof(buf), "%s-%d", g, i);
            add_pod(b, buf, 1, g, q);
        }
        *made += size;
        return size;
    }
    static const int sizes[] = {1, 1, 1, 2, 2, 4, 8};
    char buf[64];
    snprintf(buf, sizeof(buf), "pod-%d", *made);
    add_pod(b, buf, sizes[rnd(b) % 7], NULL, q);
    (*made)++;
    return 1;
}

typedef struct opts {
    int nodes, pods, gang;
    int hold; /* pods never finish: measures a full snapshot */
    uint64_t seed;
    corral_policy_t policy;
} opts_t;

static bench_t *bench_new(const opts_t *o)
{
    bench_t *b = corral_calloc(1, sizeof(*b));
    corral_arena_init(&b->a);
    corral_arena_init(&b->tmp);
    b->rng = o->seed ? o->seed : 1;
    corral_sched_config_t cfg;
    corral_sched_config_default(&cfg);
    cfg.policy = o->policy;
    cfg.seed = o->seed;
    corral_engine_new(&cfg, &b->e);
    const char *nvs = topo_nvswitch(&b->a);
    for (int i = 0; i < o->nodes; i++)
        add_node(b, i, nvs);
    add_queue(b, "q1", 1);
    add_queue(b, "q2", 2);
    add_queue(b, "q3", 3);
    return b;
}

static void bench_free(bench_t *b)
{
    corral_engine_free(b->e);
    corral_arena_fini(&b->a);
    corral_arena_fini(&b->tmp);
    corral_free(b);
}

/* The arrival/run/finish loop; fills per-cycle times and placement count. */
static void run_workload(bench_t *b, const opts_t *o, double *cycle_ms, int *ncycles, long *placed,
                         double *engine_ms)
{
    running_t *run = corral_malloc(((size_t)o->pods + 1) * sizeof(*run));
    size_t nrun = 0;
    int made = 0, gangs = 0, batch = o->pods / 100 > 0 ? o->pods / 100 : 1;
    *ncycles = 0;
    *placed = 0;
    *engine_ms = 0;
    while (made < o->pods || (nrun > 0 && *ncycles < 1000)) {
        b->now += 10LL * 1000000000LL;
        for (size_t i = 0; !o->hold && i < nrun;) {
            if (run[i].end <= b->now) {
                corral_engine_remove(b->e, CORRAL_KIND_POD, run[i].ns, run[i].name);
                run[i] = run[--nrun];
            } else {
                i++;
            }
        }
        for (int k = 0; k < batch && made < o->pods;)
            k += submit(b, &made, o->pods, &gangs);
        const corral_decisions_t *d;
        double t0 = now_ms();
        corral_engine_cycle(b->e, b->now, &d);
        double dt = now_ms() - t0;
        cycle_ms[(*ncycles)++] = dt;
        *engine_ms += dt;
        *placed += (long)d->nbinds;
        for (size_t i = 0; i < d->nbinds; i++) {
            int64_t dur = (20 + (int64_t)(rnd(b) % 181)) * 1000000000LL;
            run[nrun++] =
                (running_t){(char *)d->binds[i].ns, (char *)d->binds[i].name, b->now + dur};
        }
        if (made >= o->pods && d->nbinds == 0 && (d->stats.pending == 0 || o->hold))
            break;
    }
    corral_free(run);
}

/* One gang of o->gang one-GPU pods on an empty cluster: time to place it. */
static double gang_ms(const opts_t *o, int *placed)
{
    bench_t *b = bench_new(o);
    add_group(b, "big", o->gang, "q1");
    for (int i = 0; i < o->gang; i++) {
        char buf[64];
        snprintf(buf, sizeof(buf), "big-%d", i);
        add_pod(b, buf, 1, "big", "q1");
    }
    const corral_decisions_t *d;
    double t0 = now_ms();
    corral_engine_cycle(b->e, 1, &d);
    double dt = now_ms() - t0;
    *placed = (int)d->nbinds;
    bench_free(b);
    return dt;
}

static int parse(int argc, char **argv, opts_t *o)
{
    o->nodes = 1000;
    o->pods = 10000;
    o->gang = 1024;
    o->seed = 1;
    o->policy = CORRAL_POLICY_CORRAL;
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v)
            return -1;
        if (!strcmp(argv[i], "--nodes"))
            o->nodes = (int)strtol(v, NULL, 10);
        else if (!strcmp(argv[i], "--pods"))
            o->pods = (int)strtol(v, NULL, 10);
        else if (!strcmp(argv[i], "--hold"))
            o->hold = (int)strtol(v, NULL, 10);
        else if (!strcmp(argv[i], "--gang"))
            o->gang = (int)strtol(v, NULL, 10);
        else if (!strcmp(argv[i], "--seed"))
            o->seed = strtoull(v, NULL, 10);
        else if (!strcmp(argv[i], "--policy") && corral_policy_from_name(v) >= 0)
            o->policy = (corral_policy_t)corral_policy_from_name(v);
        else
            return -1;
        i++;
    }
    return o->nodes > 0 && o->pods >= 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
    opts_t o;
    if (parse(argc, argv, &o) != 0) {
        fprintf(stderr, "usage: sched --nodes N --pods M [--seed S] [--gang G] [--policy P]\n");
        return 2;
    }
    bench_t *b = bench_new(&o);
    double *cycles = corral_malloc(2000 * sizeof(double));
    int n;
    long placed;
    double engine_ms;
    run_workload(b, &o, cycles, &n, &placed, &engine_ms);
    bench_free(b);
    qsort(cycles, (size_t)n, sizeof(double), cmp_double);
    int gang_placed = 0;
    double g = o.gang > 0 ? gang_ms(&o, &gang_placed) : 0;
    printf("{\"nodes\": %d, \"pods\": %d, \"hold\": %d, \"seed\": %llu, \"policy\": \"%s\", "
           "\"cycles\": %d, "
           "\"placements\": %ld, \"engine_ms\": %.1f, \"placements_per_sec\": %.0f, "
           "\"cycle_ms_p50\": %.2f, \"cycle_ms_p99\": %.2f, \"gang_pods\": %d, "
           "\"gang_placed\": %d, \"gang_ms\": %.2f, \"peak_rss_mib\": %.1f}\n",
           o.nodes, o.pods, o.hold, (unsigned long long)o.seed, corral_policy_name(o.policy), n,
           placed, engine_ms, engine_ms > 0 ? (double)placed / (engine_ms / 1000.0) : 0,
           n ? cycles[n / 2] : 0, n ? cycles[(n * 99) / 100] : 0, o.gang, gang_placed, g,
           (double)peak_rss_kib() / 1024.0);
    corral_free(cycles);
    return 0;
}
