/* The engine's fixed bounds, each handled or refused with a message, never
 * ignored: extended resources beyond those it tracks, nodes with more GPUs
 * than it places on, pods of 9 to 64 GPUs (past the remembered GPU sets),
 * many child queues, deep and looping queue trees, shapes allowing many GPU
 * models. */
#include <stdio.h>

#include "engine/engine_int.h"
#include "engine_test.h"

#define NODE_RES(name, extra)                                                                      \
    "apiVersion: v1\nkind: Node\nmetadata: {name: " name "}\n"                                     \
    "status: {allocatable: {cpu: '64', memory: 256Gi, pods: '100'" extra "}}\n"
#define POD_RES(name, limits)                                                                      \
    "apiVersion: v1\nkind: Pod\nmetadata: {name: " name "}\nspec: {containers: [{name: c, "        \
    "image: x, resources: {limits: {" limits "}}}]}\n"

/* Upsert every document of yaml; the return code of the last. */
static int try_apply(et_t *t, const char *yaml)
{
    corral_doc_t *docs;
    size_t n;
    int rc = 0;
    cr_assert_eq(corral_yaml_parse(&t->a, yaml, strlen(yaml), "t", NULL, &t->d, &docs, &n), 0);
    for (size_t i = 0; i < n; i++) {
        corral_obj_t *o;
        cr_assert_eq(corral_obj_decode(&t->a, docs[i].root, "t", &t->d, &o), 0);
        rc = corral_engine_upsert(t->e, o, 0, &t->d);
    }
    return rc;
}

/* Does some diagnostic say all of the words? */
static bool said(const et_t *t, const char *w1, const char *w2)
{
    for (size_t i = 0; i < t->d.n; i++) {
        if (strstr(t->d.items[i].msg, w1) && (!w2 || strstr(t->d.items[i].msg, w2)))
            return true;
    }
    return false;
}

static const char *reason_of(et_t *t, const char *name)
{
    corral_pod_view_t v = et_view(t, name);
    return v.reason ? v.reason : "";
}

/* A node with extended resources ex.com/r<from>..r<to-1>, n of each. */
static const char *node_with(et_t *t, const char *name, int from, int to, int n)
{
    corral_buf_t b;
    corral_buf_init(&b);
    corral_buf_printf(&b,
                      "apiVersion: v1\nkind: Node\nmetadata: {name: %s}\nstatus: "
                      "{allocatable: {cpu: '64', memory: 256Gi, pods: '100'",
                      name);
    for (int i = from; i < to; i++)
        corral_buf_printf(&b, ", ex.com/r%d: '%d'", i, n);
    corral_buf_puts(&b, "}}\n");
    const char *s = corral_arena_strdup(&t->a, corral_buf_str(&b));
    corral_buf_fini(&b);
    return s;
}

/* The case: an 8th extended resource was dropped, so two pods asking
 * for the node's one unit of it both ran there. */
Test(limits, eighth_extended_resource_is_not_overcommitted)
{
    et_t t;
    et_init(&t);
    cr_assert_eq(try_apply(&t, node_with(&t, "n1", 0, 8, 1)), 0);
    cr_assert_eq(t.d.n, 0);
    apply(&t, POD_RES("a", "ex.com/r7: 1") "---\n" POD_RES("b", "ex.com/r7: 1"));
    const corral_decisions_t *d;
    corral_engine_cycle(t.e, 0, &d);
    cr_assert_eq(d->nbinds, 1);
    cr_assert_str_eq(reason_of(&t, "b"), "0/1 nodes are available: 1 Insufficient ex.com/r7.");
    et_fini(&t);
}

Test(limits, resources_beyond_the_tracked_ones_are_refused_with_a_message)
{
    et_t t;
    et_init(&t);
    int ext = RES_MAX - RES_FIXED;
    cr_assert_eq(try_apply(&t, node_with(&t, "n1", 0, ext, 2)), 0);
    cr_assert_eq(t.d.n, 0, "11 extended resources are tracked");
    /* One more on another node: the node is taken without it, with a warning. */
    cr_assert_eq(try_apply(&t, node_with(&t, "n2", ext, ext + 1, 2)), 0);
    cr_assert_eq(t.d.warnings, 1);
    cr_assert(said(&t, "ex.com/r11", "at most 11 extended resources"));
    /* A pending pod asking for it is refused, not placed as if it asked for nothing. */
    cr_assert_eq(try_apply(&t, POD_RES("p", "ex.com/r11: 1")), CORRAL_ETOOBIG);
    cr_assert_eq(t.d.errors, 1);
    cr_assert(said(&t, "ex.com/r11", "not scheduled"));
    corral_pod_view_t v;
    cr_assert_eq(corral_engine_pod(t.e, "default", "p", &v), CORRAL_ENOENT);
    /* The tracked ones still work. */
    apply(&t, POD_RES("q", "ex.com/r10: 2"));
    const corral_decisions_t *d;
    corral_engine_cycle(t.e, 0, &d);
    cr_assert_eq(d->nbinds, 1);
    cr_assert_str_eq(d->binds[0].node, "n1");
    et_fini(&t);
}

Test(limits, a_running_pod_beyond_the_tracked_ones_is_counted_without_it)
{
    et_t t;
    et_init(&t);
    int ext = RES_MAX - RES_FIXED;
    cr_assert_eq(try_apply(&t, node_with(&t, "n1", 0, ext + 1, 1)), 0);
    cr_assert_eq(try_apply(&t, "apiVersion: v1\nkind: Pod\nmetadata: {name: r}\nspec: {nodeName: "
                               "n1, containers: [{name: c, image: x, resources: {limits: {cpu: "
                               "'60', ex.com/r11: 1}}}]}\n"),
                 0, "a running pod is never refused: its cpu must count");
    cr_assert(said(&t, "ex.com/r11", "counted without it"));
    corral_engine_totals_t tot;
    corral_engine_totals(t.e, &tot);
    cr_assert_eq(tot.cpu_milli_used, 60000);
    et_fini(&t);
}

Test(limits, zero_quantities_take_no_dimension)
{
    et_t t;
    et_init(&t);
    /* Twenty resources a node reports with zero (hugepages, attachable
     * volumes) leave room for the real ones. */
    corral_buf_t b;
    corral_buf_init(&b);
    corral_buf_puts(&b, "apiVersion: v1\nkind: Node\nmetadata: {name: z}\nstatus: {allocatable: "
                        "{cpu: '8', memory: 8Gi");
    for (int i = 0; i < 20; i++)
        corral_buf_printf(&b, ", zero.com/z%d: '0'", i);
    corral_buf_puts(&b, "}}\n");
    cr_assert_eq(try_apply(&t, corral_buf_str(&b)), 0);
    corral_buf_fini(&b);
    cr_assert_eq(try_apply(&t, node_with(&t, "n1", 0, RES_MAX - RES_FIXED, 1)), 0);
    cr_assert_eq(t.d.n, 0);
    et_fini(&t);
}

Test(limits, a_resource_no_node_has_stays_pending_as_insufficient)
{
    et_t t;
    et_init(&t);
    apply(&t, NODE_RES("n1", "") "---\n" POD_RES("f", "example.com/fpga: 1"));
    const corral_decisions_t *d;
    corral_engine_cycle(t.e, 0, &d);
    cr_assert_eq(d->nbinds, 0);
    cr_assert_str_eq(reason_of(&t, "f"),
                     "0/1 nodes are available: 1 Insufficient example.com/fpga.");
    et_fini(&t);
}

Test(limits, a_gpu_share_above_one_gpu_is_refused)
{
    et_t t;
    et_init(&t);
    apply(&t, NODE_RES("n1", ", nvidia.com/gpu: '2'"));
    int rc = try_apply(&t, "apiVersion: v1\nkind: Pod\nmetadata: {name: s}\nspec: {containers: "
                           "[{name: a, image: x, resources: {limits: {corral.dev/gpu-milli: "
                           "600}}}, {name: b, image: x, resources: {limits: "
                           "{corral.dev/gpu-milli: 600}}}]}\n");
    cr_assert_eq(rc, CORRAL_ETOOBIG);
    cr_assert(said(&t, "1200 corral.dev/gpu-milli", "nvidia.com/gpu"));
    et_fini(&t);
}

/* --- GPUs ------------------------------------------------------------------------------ */

Test(limits, a_node_with_more_than_64_gpus_uses_64_and_says_so)
{
    et_t t;
    et_init(&t);
    cr_assert_eq(try_apply(&t, NODE_RES("big", ", nvidia.com/gpu: '72'")), 0);
    cr_assert(said(&t, "72 GPUs", "other 8 stay unused"));
    corral_engine_totals_t tot;
    corral_engine_totals(t.e, &tot);
    cr_assert_eq(tot.gpu_milli_capacity, 64000);
    apply(&t, POD_RES("all", "nvidia.com/gpu: 64") "---\n" POD_RES("more", "nvidia.com/gpu: 65"));
    const corral_decisions_t *d;
    corral_engine_cycle(t.e, 0, &d);
    cr_assert_eq(d->nbinds, 1);
    cr_assert_str_eq(d->binds[0].name, "all");
    cr_assert_eq(strlen(d->binds[0].gpu_ids), 10 + 54 * 2 + 63, "0,1,...,63");
    cr_assert_str_eq(reason_of(&t, "more"),
                     "0/1 nodes are available: 1 Insufficient nvidia.com/gpu.");
    et_fini(&t);
}

static int count_ids(const char *ids)
{
    int n = *ids ? 1 : 0;
    for (; *ids; ids++)
        n += *ids == ',';
    return n;
}

Test(limits, pods_of_9_to_64_gpus_through_a_cycle)
{
    et_t t;
    et_init(&t);
    apply(
        &t,
        NODE_RES("n1", ", nvidia.com/gpu: '64'") "---\n" POD_RES(
            "a",
            "nvidia.com/gpu: 9") "---\n" POD_RES("b",
                                                 "nvidia.com/gpu: 16") "---\n" POD_RES("c",
                                                                                       "nvidia.com/"
                                                                                       "gpu: 39"));
    const corral_decisions_t *d;
    corral_engine_cycle(t.e, 0, &d);
    cr_assert_eq(d->nbinds, 3);
    uint64_t seen = 0;
    for (size_t i = 0; i < d->nbinds; i++) {
        int want = d->binds[i].name[0] == 'a' ? 9 : d->binds[i].name[0] == 'b' ? 16 : 39;
        cr_assert_eq(count_ids(d->binds[i].gpu_ids), want, "%s", d->binds[i].gpu_ids);
        for (const char *s = d->binds[i].gpu_ids; *s;) {
            char *end;
            long g = strtol(s, &end, 10);
            cr_assert(!(seen >> g & 1), "GPU %ld given twice", g);
            seen |= 1ULL << g;
            s = *end ? end + 1 : end;
        }
    }
    cr_assert_eq(seen, ~0ULL);
    et_fini(&t);
}

/* Two NVLink islands of 8 joined over PCIe (SYS). */
static void two_islands(enode_t *n, uint16_t *topo, int ngpu)
{
    memset(n, 0, sizeof(*n));
    n->ngpu = ngpu;
    for (int a = 0; a < ngpu; a++) {
        for (int b = 0; b < ngpu; b++)
            topo[a * ngpu + b] = a == b           ? CORRAL_LINK_SELF
                                 : a / 8 == b / 8 ? CORRAL_LINK_NV + 2
                                                  : CORRAL_LINK_SYS;
    }
    n->topo = topo;
}

/* Exhaustive: the best k-set of free by (slowest link, NVLinks), ties to the
 * lexicographically smallest index list. */
static uint64_t brute_best(const enode_t *n, uint64_t free, int k)
{
    uint64_t best = 0;
    int bw = -1, bv = -1;
    for (uint64_t m = 0; m < (1ULL << n->ngpu); m++) {
        if ((m & ~free) || __builtin_popcountll(m) != k)
            continue;
        int v, w = corral__set_quality(n, m, &v);
        bool lex_smaller = false;
        if (w == bw && v == bv) {
            uint64_t diff = m ^ best; /* smaller index list: has the lowest differing GPU */
            lex_smaller = (m >> __builtin_ctzll(diff)) & 1;
        }
        if (w > bw || (w == bw && v > bv) || lex_smaller)
            best = m, bw = w, bv = v;
    }
    return best;
}

Test(limits, slow_path_gpu_sets_match_an_exhaustive_search)
{
    enode_t n;
    uint16_t topo[16 * 16];
    two_islands(&n, topo, 16);
    uint64_t frees[] = {0xFFFF, 0xFFFF & ~0x0003ULL, 0xFFFF & ~0x0F01ULL, 0x7FFE};
    for (size_t f = 0; f < CORRAL_ARRAY_LEN(frees); f++) {
        for (int k = 9; k <= __builtin_popcountll(frees[f]); k++) {
            uint64_t got = corral__pick_gpus(&n, frees[f], k);
            uint64_t want = brute_best(&n, frees[f], k);
            cr_assert_eq(got, want, "free %#llx k %d: got %#llx want %#llx",
                         (unsigned long long)frees[f], k, (unsigned long long)got,
                         (unsigned long long)want);
        }
    }
    /* 9 GPUs: a whole island and one more, not 5 + 4. */
    cr_assert_eq(corral__pick_gpus(&n, 0xFFFF, 9), 0x1FFULL);
}

Test(limits, large_node_sets_are_valid_for_every_size)
{
    enode_t n;
    static uint16_t topo[64 * 64];
    two_islands(&n, topo, 64); /* eight islands of 8: past the exhaustive search */
    uint64_t free = ~0ULL & ~0x8000000000000101ULL;
    for (int k = 9; k <= 61; k++) {
        uint64_t got = corral__pick_gpus(&n, free, k);
        cr_assert_eq(__builtin_popcountll(got), k, "k %d", k);
        cr_assert_eq(got & ~free, 0, "k %d takes only free GPUs", k);
    }
    cr_assert_eq(corral__pick_gpus(&n, free, 62), 0, "more than are free: none");
}

/* --- queues --------------------------------------------------------------------------- */

static const char *queue_yaml(et_t *t, const char *name, const char *parent, const char *extra)
{
    return corral_arena_printf(&t->a,
                               "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: "
                               "{name: %s}\nspec: {weight: 1%s%s%s}\n",
                               name, parent ? ", parent: " : "", parent ? parent : "", extra);
}

Test(limits, more_than_256_child_queues_all_get_their_share)
{
    et_t t;
    et_init(&t);
    apply(&t, NODE_RES("n1", ", nvidia.com/gpu: '8'"));
    cr_assert_eq(try_apply(&t, queue_yaml(&t, "root", NULL, "")), 0);
    for (int i = 0; i < 300; i++) {
        char name[16];
        snprintf(name, sizeof(name), "q%03d", i);
        cr_assert_eq(try_apply(&t, queue_yaml(&t, name, "root", "")), 0);
    }
    /* The 300th child has demand; it must get a deserved share (before,
     * children past the 256th were left out of the water-fill). */
    apply(&t, "apiVersion: v1\nkind: Pod\nmetadata: {name: late, annotations: "
              "{scheduling.volcano.sh/queue-name: q299}}\nspec: {containers: [{name: c, image: "
              "x, resources: {limits: {nvidia.com/gpu: 1}}}]}\n");
    corral__queues_recount(t.e);
    corral__queues_prepare(t.e);
    uint32_t q = corral__queue_get(t.e, "q299");
    cr_assert_gt(t.e->qs.queues.items[q].des_eff.v[RES_GPU], 0);
    const corral_decisions_t *d;
    corral_engine_cycle(t.e, 0, &d);
    cr_assert_eq(d->nbinds, 1);
    et_fini(&t);
}

Test(limits, a_queue_tree_deeper_than_64_is_refused)
{
    et_t t;
    et_init(&t);
    cr_assert_eq(try_apply(&t, queue_yaml(&t, "l0", NULL, "")), 0);
    char name[16], parent[16];
    for (int i = 1; i < QUEUE_DEPTH_MAX; i++) {
        snprintf(name, sizeof(name), "l%d", i);
        snprintf(parent, sizeof(parent), "l%d", i - 1);
        cr_assert_eq(try_apply(&t, queue_yaml(&t, name, parent, "")), 0, "level %d", i);
    }
    cr_assert_eq(t.d.n, 0);
    snprintf(parent, sizeof(parent), "l%d", QUEUE_DEPTH_MAX - 1);
    cr_assert_eq(try_apply(&t, queue_yaml(&t, "deep", parent, "")), CORRAL_ETOOBIG);
    cr_assert(said(&t, "deep", "more than 64 levels"));
    /* From above too: a new root over l0 makes the tree one level too deep. */
    cr_assert_eq(try_apply(&t, queue_yaml(&t, "l0", "top", "")), 0, "top does not exist");
    cr_assert_eq(try_apply(&t, queue_yaml(&t, "top", NULL, "")), CORRAL_ETOOBIG);
    cr_assert(said(&t, "queue top", "more than 64 levels"));
    et_fini(&t);
}

Test(limits, a_queue_loop_is_refused)
{
    et_t t;
    et_init(&t);
    cr_assert_eq(try_apply(&t, queue_yaml(&t, "a", NULL, "")), 0);
    cr_assert_eq(try_apply(&t, queue_yaml(&t, "b", "a", "")), 0);
    cr_assert_eq(try_apply(&t, queue_yaml(&t, "c", "b", "")), 0);
    cr_assert_eq(try_apply(&t, queue_yaml(&t, "a", "c", "")), CORRAL_EINVAL);
    cr_assert(said(&t, "queue a: its parent c", "loop"));
    et_fini(&t);
}

/* --- workload shapes --------------------------------------------------------------------- */

Test(limits, a_shape_may_allow_more_than_8_gpu_models)
{
    et_t t;
    et_init(&t);
    const char *models[12];
    char names[12][16];
    for (int i = 0; i < 12; i++) {
        snprintf(names[i], sizeof(names[i]), "M%d", i);
        models[i] = names[i];
    }
    corral_shape_t s = {1000, 1, 1000, models, 12, 1.0};
    cr_assert_eq(corral_engine_set_workload(t.e, &s, 1), 0);
    cr_assert_eq(t.e->fr.nshapes, 1);
    cr_assert_eq(t.e->fr.shapes[0].nmodels, 12, "none left out");
    /* The last model is as allowed as the first. */
    cr_assert_geq(t.e->fr.shapes[0].models[11], 0);
    cr_assert_neq(t.e->fr.shapes[0].models[11], t.e->fr.shapes[0].models[0]);
    et_fini(&t);
}
