/* The engine through its public API: snapshot updates, cycles, decisions,
 * views, determinism, and removal of what binds. (The scheduling rules
 * themselves are covered by the scenarios in tests/scenarios/.) */
#include "engine_test.h"

#define NODE(name, gpus)                                                                           \
    "apiVersion: v1\nkind: Node\nmetadata: {name: " name "}\n"                                     \
    "status: {allocatable: {cpu: '8', memory: 64Gi, pods: '10', nvidia.com/gpu: '" gpus "'}}\n"
#define POD(name, gpus)                                                                            \
    "apiVersion: v1\nkind: Pod\nmetadata: {name: " name "}\nspec: {containers: [{name: c, "        \
    "image: x, resources: {limits: {nvidia.com/gpu: " gpus "}}}]}\n"

Test(engine, binds_and_reports)
{
    et_t t;
    et_init(&t);
    apply(&t, NODE("n1", "4") "---\n" NODE("n2", "8") "---\n" POD("a", "4") "---\n" POD("b", "8"));
    const corral_decisions_t *d;
    cr_assert_eq(corral_engine_cycle(t.e, 0, &d), 0);
    cr_assert_eq(d->nbinds, 2);
    corral_pod_view_t v;
    cr_assert_eq(corral_engine_pod(t.e, "default", "a", &v), 0);
    cr_assert(v.bound);
    cr_assert_str_eq(v.node, "n1");
    cr_assert_str_eq(v.gpu_ids, "0,1,2,3");
    cr_assert_eq(corral_engine_pod(t.e, "default", "b", &v), 0);
    cr_assert_str_eq(v.node, "n2");
    corral_engine_totals_t tot;
    corral_engine_totals(t.e, &tot);
    cr_assert_eq(tot.gpu_milli_capacity, 12000);
    cr_assert_eq(tot.gpu_milli_used, 12000);
    cr_assert_eq(corral_engine_cycle(t.e, 1, &d), 0);
    cr_assert_eq(d->nbinds, 0, "nothing left to do");
    et_fini(&t);
}

Test(engine, pending_reason_and_removal_frees)
{
    et_t t;
    et_init(&t);
    apply(&t, NODE("n1", "2") "---\n" POD("a", "2") "---\n" POD("b", "1"));
    const corral_decisions_t *d;
    corral_engine_cycle(t.e, 0, &d);
    cr_assert_eq(d->nbinds, 1);
    cr_assert_eq(d->npending, 1);
    cr_assert_str_eq(d->pending[0].name, "b");
    cr_assert_str_eq(d->pending[0].reason,
                     "0/1 nodes are available: 1 Insufficient nvidia.com/gpu.");
    cr_assert_eq(corral_engine_remove(t.e, CORRAL_KIND_POD, "default", "a"), 0);
    cr_assert_eq(corral_engine_remove(t.e, CORRAL_KIND_POD, "default", "a"), CORRAL_ENOENT);
    corral_engine_cycle(t.e, 1, &d);
    cr_assert_eq(d->nbinds, 1);
    cr_assert_str_eq(d->binds[0].name, "b");
    et_fini(&t);
}

Test(engine, removing_a_node_removes_its_pods)
{
    et_t t;
    et_init(&t);
    apply(&t, NODE("n1", "2") "---\n" POD("a", "1"));
    const corral_decisions_t *d;
    corral_engine_cycle(t.e, 0, &d);
    cr_assert_eq(corral_engine_remove(t.e, CORRAL_KIND_NODE, NULL, "n1"), 0);
    corral_pod_view_t v;
    cr_assert_eq(corral_engine_pod(t.e, "default", "a", &v), CORRAL_ENOENT);
    corral_engine_totals_t tot;
    corral_engine_totals(t.e, &tot);
    cr_assert_eq(tot.nodes, 0);
    et_fini(&t);
}

Test(engine, prebound_pod_on_missing_node_is_an_error)
{
    et_t t;
    et_init(&t);
    const char *y = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {nodeName: ghost, "
                    "containers: [{name: c, image: x}]}\n";
    corral_doc_t *docs;
    size_t n;
    corral_yaml_parse(&t.a, y, strlen(y), "t", NULL, &t.d, &docs, &n);
    corral_obj_t *o;
    corral_obj_decode(&t.a, docs[0].root, "t", &t.d, &o);
    cr_assert_eq(corral_engine_upsert(t.e, o, 0, &t.d), CORRAL_ENOENT);
    cr_assert_eq(t.d.errors, 1);
    et_fini(&t);
}

Test(engine, same_input_same_decisions)
{
    const char *y = NODE("n1", "8") "---\n" NODE("n2", "8") "---\n" NODE("n3", "4") "---\n" POD(
        "a", "2") "---\n" POD("b", "3") "---\n" POD("c", "1") "---\n" POD("d", "4");
    char first[4][64];
    for (int round = 0; round < 2; round++) {
        et_t t;
        et_init(&t);
        apply(&t, y);
        const corral_decisions_t *d;
        corral_engine_cycle(t.e, 0, &d);
        cr_assert_eq(d->nbinds, 4);
        for (size_t i = 0; i < 4; i++) {
            char buf[64];
            snprintf(buf, sizeof(buf), "%s@%s[%s]", d->binds[i].name, d->binds[i].node,
                     d->binds[i].gpu_ids);
            if (round == 0)
                snprintf(first[i], sizeof(first[i]), "%s", buf);
            else
                cr_assert_str_eq(buf, first[i]);
        }
        et_fini(&t);
    }
}

Test(engine, policy_names)
{
    cr_assert_eq(corral_policy_from_name("corral"), CORRAL_POLICY_CORRAL);
    cr_assert_eq(corral_policy_from_name("spread"), CORRAL_POLICY_SPREAD);
    cr_assert_eq(corral_policy_from_name("nope"), -1);
    cr_assert_str_eq(corral_policy_name(CORRAL_POLICY_DOTPROD), "dotprod");
}

#define MODEL_NODE(name, gpus, model)                                                              \
    "apiVersion: v1\nkind: Node\nmetadata: {name: " name                                           \
    ", labels: {nvidia.com/gpu.product: " model                                                    \
    "}}\nstatus: {allocatable: {cpu: '8', memory: 64Gi, pods: '10', nvidia.com/gpu: '" gpus        \
    "'}}\n"

/* Model pressure: with a workload where T4-bound pods are two thirds of the
 * GPU demand and T4 a third of the GPUs, a pod free to use any model goes to
 * the G2 node, although name order (and packing) prefer the T4 node; with
 * the same workload unbound, the T4 node, first by name, takes it. */
static const char *place_free_pod(bool bound_workload)
{
    static char node[64];
    et_t t;
    et_init(&t);
    apply(&t, MODEL_NODE("t4", "4", "T4") "---\n" MODEL_NODE("v-g2", "8", "G2"));
    const char *t4[] = {"T4"};
    corral_shape_t shapes[] = {{1000, 1, 1000, bound_workload ? t4 : NULL, bound_workload, 2},
                               {1000, 1, 1000, NULL, 0, 1}};
    cr_assert_eq(corral_engine_set_workload(t.e, shapes, 2), 0);
    apply(&t, POD("free", "1"));
    const corral_decisions_t *d;
    cr_assert_eq(corral_engine_cycle(t.e, 0, &d), 0);
    corral_pod_view_t v;
    cr_assert_eq(corral_engine_pod(t.e, "default", "free", &v), 0);
    cr_assert(v.bound);
    snprintf(node, sizeof(node), "%s", v.node);
    et_fini(&t);
    return node;
}

Test(engine, free_pods_leave_wanted_gpu_models)
{
    cr_assert_str_eq(place_free_pod(true), "v-g2");
    cr_assert_str_eq(place_free_pod(false), "t4");
}

/* The score's cross-validated constants (corral_score_tune_t): a 1-GPU pod
 * between an 8-GPU node first by name and a 4-GPU node, where fragmentation
 * ties (every shape fits both), goes where the fewest whole GPUs stay free
 * with whole_pack on (the default), and to the first by name with it off. */
static const char *place_whole(int whole_pack)
{
    static char node[64];
    et_t t;
    et_init(&t);
    corral_sched_config_t cfg;
    corral_sched_config_default(&cfg);
    cr_assert_eq(cfg.tune.whole_pack, 1);
    cr_assert_eq(cfg.tune.frag_div, 1000);
    cfg.tune.whole_pack = whole_pack;
    corral_engine_set_config(t.e, &cfg);
    apply(&t, MODEL_NODE("a-g2", "8", "G2") "---\n" MODEL_NODE("b-g2", "4", "G2"));
    corral_shape_t shapes[] = {{1000, 1, 1000, NULL, 0, 1}};
    cr_assert_eq(corral_engine_set_workload(t.e, shapes, 1), 0);
    apply(&t, POD("one", "1"));
    et_cycle_node(&t, "one", node, sizeof(node));
    et_fini(&t);
    return node;
}

Test(engine, whole_gpu_packing_is_a_tuned_constant)
{
    cr_assert_str_eq(place_whole(1), "b-g2");
    cr_assert_str_eq(place_whole(0), "a-g2");
}
