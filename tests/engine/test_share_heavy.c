/* The corral score's workload-derived packing rule (tune.share_heavy): a
 * whole-GPU pod goes where the fewest whole GPUs stay free only while shares
 * are at most half of the workload's GPU pods; in a share-heavy workload it
 * leaves the choice to fragmentation and name order (docs/efficiency.md,
 * "Cross-validation"). Each case is a 1-GPU pod between an 8-GPU node, first
 * by name, and a 4-GPU node, where fragmentation ties. */
#include <stdio.h>

#include "engine_test.h"

#define NODE(name, gpus)                                                                           \
    "apiVersion: v1\nkind: Node\nmetadata: {name: " name ", labels: {nvidia.com/gpu.product: G2}}" \
    "\nstatus: {allocatable: {cpu: '8', memory: 64Gi, pods: '10', nvidia.com/gpu: '" gpus "'}}\n"
#define POD(name, gpus)                                                                            \
    "apiVersion: v1\nkind: Pod\nmetadata: {name: " name "}\nspec: {containers: [{name: c, "        \
    "image: x, resources: {limits: {nvidia.com/gpu: " gpus "}}}]}\n"
/* A share that no node can take (its selector matches none): it stays
 * pending, held, and so part of the derived workload. */
#define SHARE(name)                                                                                \
    "apiVersion: v1\nkind: Pod\nmetadata: {name: " name "}\nspec: {nodeSelector: {pool: none}, "   \
    "containers: [{name: c, image: x, resources: {limits: {corral.dev/gpu-milli: 500}}}]}\n"

/* Where "one" goes; whole and share are the workload's pod frequencies
 * (negative: no workload given, the engine derives it); heavy is the
 * threshold in permille (negative: the default). */
static const char *place_one(double whole, double share, int heavy, const char *extra)
{
    static char node[64];
    et_t t;
    et_init(&t);
    corral_sched_config_t cfg;
    corral_sched_config_default(&cfg);
    cr_assert_eq(cfg.tune.share_heavy, 500);
    if (heavy >= 0)
        cfg.tune.share_heavy = heavy;
    corral_engine_set_config(t.e, &cfg);
    apply(&t, NODE("a-g2", "8") "---\n" NODE("b-g2", "4"));
    if (whole >= 0) {
        corral_shape_t shapes[] = {{1000, 1, 1000, NULL, 0, whole}, {1000, 1, 500, NULL, 0, share}};
        cr_assert_eq(corral_engine_set_workload(t.e, shapes, 2), 0);
    }
    if (extra)
        apply(&t, extra);
    apply(&t, POD("one", "1"));
    et_cycle_node(&t, "one", node, sizeof(node));
    et_fini(&t);
    return node;
}

Test(score_rule, whole_gpu_packing_follows_the_share_fraction)
{
    /* shares 25% of the GPU pods: packed onto the smaller node */
    cr_assert_str_eq(place_one(3, 1, -1, NULL), "b-g2");
    /* exactly half: still packed (the rule is "at most") */
    cr_assert_str_eq(place_one(1, 1, -1, NULL), "b-g2");
    /* shares 75%: not packed, name order */
    cr_assert_str_eq(place_one(1, 3, -1, NULL), "a-g2");
    /* the threshold is the knob: 1000 packs always, 0 whenever shares exist */
    cr_assert_str_eq(place_one(1, 3, 1000, NULL), "b-g2");
    cr_assert_str_eq(place_one(3, 1, 0, NULL), "a-g2");
}

Test(score_rule, derived_workload_flips_the_packing)
{
    /* No workload given: the engine derives it from the pods it holds. */
    cr_assert_str_eq(place_one(-1, 0, -1, NULL), "b-g2");
    cr_assert_str_eq(place_one(-1, 0, -1, SHARE("s1") "---\n" SHARE("s2") "---\n" SHARE("s3")),
                     "a-g2");
}
