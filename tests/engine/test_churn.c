/* The engine holds steady: pods come and go by the hundred thousand, with
 * ever new names, pod groups, priority classes, constraints (profiles),
 * request shapes and nodes, cycles in between; what the engine holds
 * (corral_engine_mem) and the process heap (mallinfo2) stay flat.
 *
 * Preemption and reclaim evict pods all along (evicted pods stay, terminating,
 * until the churn deletes them), and every cycle (100 pods) the engine's kept
 * queue accounting must agree with a count from scratch
 * (corral_engine_selfcheck): evictions once made it drift.
 *
 * CORRAL_CHURN_PODS sets the count (default 200,000, about 4 s; 50,000 under
 * ASan); CORRAL_CHURN_CHECK=N checks every N pods instead (0: only at the
 * end). bench/churn.sh runs it with 1,000,000 (docs/benchmarks.md). */
#include <criterion/criterion.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corral/buf.h"
#include "corral/engine.h"
#include "corral/json.h"

#if defined(__SANITIZE_ADDRESS__)
#define CHURN_DEFAULT 50000
#define CHURN_HEAP    0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CHURN_DEFAULT 50000
#define CHURN_HEAP    0
#endif
#endif
#ifndef CHURN_DEFAULT
#define CHURN_DEFAULT 200000
#define CHURN_HEAP    1
#endif

#define WINDOW 2000 /* pods alive at once */
#define NODES  48

typedef struct churn {
    corral_engine_t *e;
    corral_arena_t a;
    corral_buf_t b;
} churn_t;

static void feed(churn_t *c)
{
    corral_val_t *v;
    corral_json_err_t jerr;
    corral_obj_t *o;
    corral_arena_reset(&c->a);
    const char *s = corral_buf_str(&c->b);
    cr_assert_eq(corral_json_parse(&c->a, s, strlen(s), &v, &jerr), 0, "%s", s);
    cr_assert_eq(corral_obj_decode(&c->a, v, "churn", NULL, &o), 0, "%s", s);
    cr_assert_eq(corral_engine_upsert(c->e, o, 0, NULL), 0, "%s", s);
    corral_buf_reset(&c->b);
}

static void node(churn_t *c, int gen, int k)
{
    corral_buf_printf(&c->b,
                      "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n-%d-%d\","
                      "\"labels\":{\"rack\":\"r%d\"}},\"status\":{\"allocatable\":{\"cpu\":\"64\","
                      "\"memory\":\"512Gi\",\"nvidia.com/gpu\":\"8\"}}}",
                      gen, k, gen);
    feed(c);
}

static void prio_class(churn_t *c, int k)
{
    corral_buf_printf(&c->b,
                      "{\"apiVersion\":\"scheduling.k8s.io/v1\",\"kind\":\"PriorityClass\","
                      "\"metadata\":{\"name\":\"pc-%d\"},\"value\":%d}",
                      k, k % 50);
    feed(c);
}

static void pod_group(churn_t *c, long i)
{
    corral_buf_printf(&c->b,
                      "{\"apiVersion\":\"scheduling.volcano.sh/v1beta1\",\"kind\":\"PodGroup\","
                      "\"metadata\":{\"name\":\"g-%ld\",\"namespace\":\"ns-%ld\"},"
                      "\"spec\":{\"minMember\":2,\"queue\":\"q%ld\"}}",
                      i / 2, i / 2 % 5, i / 2 % 4);
    feed(c);
}

/* Pod i: its namespace, group, priority class, toleration (a profile per 700
 * pods) and cpu request (a shape per 500) move on as i grows. */
static void pod(churn_t *c, long i)
{
    bool gang = i % 16 < 2;
    long ns = gang ? i / 2 % 5 : i % 5;
    int gpus = i % 9 == 0 ? 0 : 1 << (i % 4);
    corral_buf_printf(&c->b,
                      "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p-%ld\","
                      "\"namespace\":\"ns-%ld\",\"annotations\":{",
                      i, ns);
    if (gang)
        corral_buf_printf(&c->b, "\"scheduling.k8s.io/group-name\":\"g-%ld\"", i / 2);
    else
        corral_buf_printf(&c->b, "\"scheduling.volcano.sh/queue-name\":\"q%ld\"", i % 4);
    corral_buf_printf(&c->b,
                      "}},\"spec\":{\"priorityClassName\":\"pc-%ld\",\"tolerations\":[{\"key\":"
                      "\"team-%ld\",\"operator\":\"Exists\"}],\"containers\":[{\"name\":\"c\","
                      "\"image\":\"x\",\"resources\":{\"requests\":{\"cpu\":\"%ldm\"},"
                      "\"limits\":{\"nvidia.com/gpu\":\"%d\"}}}]}}",
                      i / 1000, i / 700, 10 + i / 500 % 4000, gpus);
    feed(c);
}

static void del_pod(churn_t *c, long i)
{
    char ns[32], name[32];
    bool gang = i % 16 < 2;
    snprintf(ns, sizeof(ns), "ns-%ld", gang ? i / 2 % 5 : i % 5);
    snprintf(name, sizeof(name), "p-%ld", i);
    /* ENOENT: it went with a node that was replaced. */
    int rc = corral_engine_remove(c->e, CORRAL_KIND_POD, ns, name);
    cr_assert(rc == 0 || rc == CORRAL_ENOENT, "%s", name);
    if (gang && i % 2 == 1) {
        snprintf(name, sizeof(name), "g-%ld", i / 2);
        cr_assert_eq(corral_engine_remove(c->e, CORRAL_KIND_PODGROUP, ns, name), 0);
    }
}

static void setup(churn_t *c)
{
    corral_sched_config_t cfg;
    corral_sched_config_default(&cfg);
    /* For debugging: CHURN_NOEVICT=1 turns eviction off, CHURN_PREEMPT=1 or
     * CHURN_RECLAIM=1 back on one at a time. */
    if (getenv("CHURN_NOEVICT"))
        cfg.preempt = cfg.reclaim = false;
    if (getenv("CHURN_PREEMPT"))
        cfg.preempt = true;
    if (getenv("CHURN_RECLAIM"))
        cfg.reclaim = true;
    cr_assert_eq(corral_engine_new(&cfg, &c->e), 0);
    corral_arena_init(&c->a);
    corral_buf_init(&c->b);
    for (int q = 0; q < 4; q++) {
        corral_buf_printf(&c->b,
                          "{\"apiVersion\":\"scheduling.volcano.sh/v1beta1\",\"kind\":\"Queue\","
                          "\"metadata\":{\"name\":\"q%d\"},\"spec\":{\"weight\":%d}}",
                          q, q + 1);
        feed(c);
    }
    for (int k = 0; k < NODES; k++)
        node(c, 0, k);
}

/* Every 25,000 pods a node is replaced by one with a new name and label
 * (a new node class); every 1,000 a priority class comes and an old one goes. */
static void churn_objects(churn_t *c, long i)
{
    if (i % 1000 == 0) {
        prio_class(c, (int)(i / 1000));
        if (i >= 3000) {
            char name[32];
            snprintf(name, sizeof(name), "pc-%ld", i / 1000 - 3);
            cr_assert_eq(corral_engine_remove(c->e, CORRAL_KIND_PRIORITYCLASS, NULL, name), 0);
        }
    }
    if (i > 0 && i % 25000 == 0) {
        int gen = (int)(i / 25000), k = gen % NODES;
        char name[32];
        snprintf(name, sizeof(name), "n-%d-%d", gen >= NODES ? gen - NODES : 0, k);
        cr_assert_eq(corral_engine_remove(c->e, CORRAL_KIND_NODE, NULL, name), 0, "%s", name);
        node(c, gen, k);
    }
}

static void report(long i, const corral_engine_mem_t *m, size_t heap)
{
    printf("churn %8ld pods: engine %zu bytes, heap %zu; pods %u/%u groups %u/%u profiles %u/%u "
           "classes %u/%u rcls %u/%u shapes %u/%u pcs %u/%u nodes %u/%u reasons %u\n",
           i, m->bytes, heap, m->pods, m->pod_slots, m->groups, m->group_slots, m->profiles,
           m->profile_slots, m->node_classes, m->class_slots, m->request_classes, m->rcls_slots,
           m->shapes, m->shape_slots, m->priority_classes, m->pc_slots, m->nodes, m->node_slots,
           m->reasons);
    fflush(stdout);
}

Test(churn, memory_stays_flat, .timeout = 600)
{
    const char *env = getenv("CORRAL_CHURN_PODS");
    long total = env ? strtol(env, NULL, 10) : CHURN_DEFAULT;
    cr_assert(total >= 5 * WINDOW * 4);
    churn_t c;
    setup(&c);
    size_t mem[6] = {0}, heap[6] = {0};
    int ck = 0;
    uint64_t binds = 0, evictions = 0;
    const char *every = getenv("CORRAL_CHURN_CHECK"); /* selfcheck every N pods */
    long check = every ? strtol(every, NULL, 10) : 100;
    for (long i = 0; i < total; i++) {
        churn_objects(&c, i);
        if (i % 16 == 0)
            pod_group(&c, i);
        pod(&c, i);
        if (i >= WINDOW)
            del_pod(&c, i - WINDOW);
        if (i % 100 == 99) {
            const corral_decisions_t *d;
            cr_assert_eq(corral_engine_cycle(c.e, i * 1000000, &d), 0);
            binds += d->nbinds;
            evictions += d->nevictions;
            char m[256];
            if (check > 0 && (i + 1) % check == 0)
                cr_assert_eq(corral_engine_selfcheck(c.e, m, sizeof(m)), 0, "at %ld: %s", i, m);
        }
        if ((i + 1) % (total / 5) == 0 && ck < 5) {
            corral_engine_mem_t m;
            corral_engine_mem(c.e, &m);
            struct mallinfo2 mi = mallinfo2();
            mem[ck] = m.bytes;
            heap[ck] = mi.uordblks;
            report(i + 1, &m, heap[ck]);
            cr_assert_leq(m.profiles, 64, "profiles are released");
            cr_assert_leq(m.request_classes, 2048, "request classes are released");
            cr_assert_leq(m.priority_classes, 4);
            cr_assert_eq(m.nodes, NODES);
            cr_assert_leq(m.node_slots, NODES + 1, "node slots are reused");
            cr_assert_leq(m.node_classes, NODES, "classes are the live nodes' label sets");
            ck++;
        }
    }
    printf("churn: %ld pods, %llu binds, %llu evictions\n", total, (unsigned long long)binds,
           (unsigned long long)evictions);
    cr_assert_gt(binds, (uint64_t)total / 8, "the churn binds pods");
    if (!getenv("CHURN_NOEVICT"))
        cr_assert_gt(evictions, (uint64_t)total / 100, "the churn evicts pods");
    char msg[256];
    cr_assert_eq(corral_engine_selfcheck(c.e, msg, sizeof(msg)), 0, "at the end: %s", msg);
    /* Flat: the last checkpoint within 10% of the second (the first still
     * grows its arrays and maps to their working size). */
    cr_assert_leq(mem[4], mem[1] + mem[1] / 10, "engine %zu -> %zu bytes", mem[1], mem[4]);
    if (CHURN_HEAP)
        cr_assert_leq(heap[4], heap[1] + heap[1] / 10, "heap %zu -> %zu bytes", heap[1], heap[4]);
    corral_buf_fini(&c.b);
    corral_arena_fini(&c.a);
    corral_engine_free(c.e);
}
