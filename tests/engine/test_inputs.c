/* What the engine takes from its caller rather than from conventions of its
 * own: which pods are the caller's (corral_engine_set_schedulers), when a
 * bound pod started (the upsert's time; the engine does not read the
 * simulator's corral.dev/started-at), and views that own their data. */
#include "engine_test.h"

#define NODE(name, gpus)                                                                           \
    "apiVersion: v1\nkind: Node\nmetadata: {name: " name "}\n"                                     \
    "status: {allocatable: {cpu: '8', memory: 64Gi, pods: '10', nvidia.com/gpu: '" gpus "'}}\n"
#define POD_S(name, sched)                                                                         \
    "apiVersion: v1\nkind: Pod\nmetadata: {name: " name "}\nspec: {" sched "containers: [{name: "  \
    "c, image: x, resources: {limits: {nvidia.com/gpu: 1}}}]}\n"

static void upsert_at(et_t *t, const char *yaml, int64_t now)
{
    corral_doc_t *docs;
    size_t n;
    cr_assert_eq(corral_yaml_parse(&t->a, yaml, strlen(yaml), "t", NULL, &t->d, &docs, &n), 0);
    for (size_t i = 0; i < n; i++) {
        corral_obj_t *o;
        cr_assert_eq(corral_obj_decode(&t->a, docs[i].root, "t", &t->d, &o), 0);
        cr_assert_eq(corral_engine_upsert(t->e, o, now, &t->d), 0);
    }
}

Test(inputs, every_pod_is_ours_without_a_list)
{
    et_t t;
    et_init(&t);
    apply(&t, NODE("n1", "4") "---\n" POD_S("a", "schedulerName: someone-else, "));
    const corral_decisions_t *d;
    corral_engine_cycle(t.e, 0, &d);
    cr_assert_eq(d->nbinds, 1, "the engine has no scheduler names of its own");
    et_fini(&t);
}

Test(inputs, scheduler_names_come_from_the_caller)
{
    et_t t;
    et_init(&t);
    const char *const names[] = {"default-scheduler", "mine"};
    corral_engine_set_schedulers(t.e, names, 2);
    apply(&t, NODE("n1", "4") "---\n" POD_S("a", "schedulerName: mine, ") "---\n" POD_S(
                  "b", "") "---\n" POD_S("c", "schedulerName: volcano, "));
    const corral_decisions_t *d;
    corral_engine_cycle(t.e, 0, &d);
    cr_assert_eq(d->nbinds, 2, "a (named) and b (decoded as default-scheduler) are ours");
    corral_pod_view_t v;
    cr_assert_eq(corral_engine_pod(t.e, "default", "c", &v), 0);
    cr_assert_not(v.bound, "volcano is not in the caller's list");
    cr_assert_str_eq(v.reason,
                     "not scheduled by Corral: spec.schedulerName names another scheduler");
    et_fini(&t);
}

Test(inputs, start_time_is_the_callers)
{
    et_t t;
    et_init(&t);
    apply(&t, NODE("n1", "4"));
    upsert_at(&t,
              "apiVersion: v1\nkind: Pod\nmetadata: {name: r, annotations: "
              "{corral.dev/started-at: '-30m'}}\nspec: {nodeName: n1, containers: [{name: c, "
              "image: x}]}\n",
              -5000000000LL);
    corral_pod_view_t v;
    cr_assert_eq(corral_engine_pod(t.e, "default", "r", &v), 0);
    cr_assert(v.bound);
    cr_assert_eq(v.start_ns, -5000000000LL, "the upsert's time, not the annotation");
    cr_assert_eq(t.d.errors, 0);
    et_fini(&t);
}

Test(inputs, views_own_their_gpu_ids)
{
    et_t t;
    et_init(&t);
    apply(&t, NODE("n1", "4") "---\n" POD_S("a", "") "---\n" POD_S("b", ""));
    const corral_decisions_t *d;
    corral_engine_cycle(t.e, 0, &d);
    cr_assert_eq(d->nbinds, 2);
    corral_pod_view_t va, vb;
    cr_assert_eq(corral_engine_pod(t.e, "default", "a", &va), 0);
    cr_assert_eq(corral_engine_pod(t.e, "default", "b", &vb), 0);
    cr_assert_str_neq(va.gpu_ids, vb.gpu_ids, "a later view does not overwrite an earlier one");
    cr_assert_eq(strlen(va.gpu_ids), 1);
    cr_assert_eq(strlen(vb.gpu_ids), 1);
    et_fini(&t);
}
