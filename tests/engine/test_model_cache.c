/* The corral policy prefers a node whose corral.dev/model-caches lists the
 * pod's corral.dev/model-cache (scoring.modelCache, a weight beside the
 * preferred node affinity terms); weight 0 turns it off. */
#include "engine_test.h"

#define NODE(name, caches)                                                                         \
    "apiVersion: v1\nkind: Node\nmetadata:\n  name: " name                                         \
    "\n  labels: {kubernetes.io/hostname: " name "}\n  annotations: {"                             \
    "corral.dev/model-caches: \"" caches                                                           \
    "\"}\nstatus:\n  allocatable: {cpu: \"8\", memory: 64Gi, "                                     \
    "nvidia.com/gpu: \"1\"}\n---\n"

#define POD(name, cache, affinity)                                                                 \
    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " name "\n  namespace: default\n"               \
    "  annotations: {corral.dev/model-cache: \"" cache "\"}\nspec:\n" affinity                     \
    "  containers:\n  - name: c\n    image: x\n    resources: {limits: {nvidia.com/gpu: \"1\"}}\n"

/* b holds llama (not first in name order, not first in its list) */
static const char *const cluster = NODE("a", "") NODE("b", "mistral, llama") NODE("c", "llama3");

static const char *place(int weight, const char *pod, char *out, size_t len)
{
    et_t t;
    corral_arena_init(&t.a);
    corral_diag_init(&t.d);
    corral_sched_config_t cfg;
    corral_sched_config_default(&cfg);
    if (weight >= 0)
        cfg.w_model_cache = weight;
    cr_assert_eq(corral_engine_new(&cfg, &t.e), 0);
    char all[4096];
    snprintf(all, sizeof(all), "%s%s", cluster, pod);
    apply(&t, all);
    const corral_decisions_t *d;
    cr_assert_eq(corral_engine_cycle(t.e, 0, &d), 0);
    cr_assert_eq(d->nbinds, 1);
    snprintf(out, len, "%s", d->binds[0].node);
    et_fini(&t);
    return out;
}

#define PREFER_A                                                                                   \
    "  affinity:\n    nodeAffinity:\n      preferredDuringSchedulingIgnoredDuringExecution:\n"     \
    "      - weight: %s\n        preference:\n          matchExpressions:\n"                       \
    "          - {key: kubernetes.io/hostname, operator: In, values: [a]}\n"

Test(model_cache, prefers_the_node_holding_the_model)
{
    char n[32];
    cr_assert_str_eq(place(-1, POD("p", "llama", ""), n, sizeof(n)), "b", "the default weight");
    cr_assert_str_eq(place(-1, POD("p", "llama3", ""), n, sizeof(n)), "c", "whole names only");
    cr_assert_str_eq(place(0, POD("p", "llama", ""), n, sizeof(n)), "a", "weight 0: off");
    cr_assert_str_eq(place(-1, POD("p", "other", ""), n, sizeof(n)), "a", "held nowhere");
}

Test(model_cache, weighs_against_preferred_affinity)
{
    char n[32], pod[2048], aff[512];
    /* a preferred term of weight 80 beats the default 50; one of 20 does not */
    snprintf(aff, sizeof(aff), PREFER_A, "80");
    snprintf(pod, sizeof(pod), POD("p", "llama", "%s"), aff);
    cr_assert_str_eq(place(-1, pod, n, sizeof(n)), "a");
    snprintf(aff, sizeof(aff), PREFER_A, "20");
    snprintf(pod, sizeof(pod), POD("p", "llama", "%s"), aff);
    cr_assert_str_eq(place(-1, pod, n, sizeof(n)), "b");
    cr_assert_str_eq(place(100, pod, n, sizeof(n)), "b");
}

Test(model_cache, scheduler_configuration)
{
    corral_arena_t a;
    corral_arena_init(&a);
    corral_schedconf_t s = {0};
    s.model_cache = (corral_opt_i32_t){.set = true, .v = 70};
    corral_sched_config_t c;
    corral_sched_config_default(&c);
    cr_assert_eq(c.w_model_cache, 50);
    cr_assert_eq(corral_sched_config_apply(&c, &s), 0);
    cr_assert_eq(c.w_model_cache, 70);
    corral_arena_fini(&a);
}
