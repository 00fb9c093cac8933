/* Queue accounting around evictions: a pod preempted or reclaimed stays,
 * terminating, until the caller removes it; through the cycles in between
 * (which look ahead past it for the backfill reservation), its removal and
 * the preemptor's bind, each queue's kept demand and allocation must equal a
 * count from scratch (corral_engine_selfcheck). The backfill look-ahead once
 * brought every terminating pod back into its queue's numbers for good. */
#include "engine_test.h"

static void check(et_t *t, const char *when)
{
    char msg[256];
    cr_assert_eq(corral_engine_selfcheck(t->e, msg, sizeof(msg)), 0, "%s: %s", when, msg);
}

static const corral_decisions_t *cycle(et_t *t, int64_t now)
{
    const corral_decisions_t *d;
    cr_assert_eq(corral_engine_cycle(t->e, now, &d), 0);
    return d;
}

static void expect_terminating(et_t *t, const char *name)
{
    corral_pod_view_t v;
    cr_assert_eq(corral_engine_pod(t->e, "default", name, &v), 0);
    cr_assert(v.bound && v.terminating, "%s is terminating, on its node", name);
}

/* The cluster is full; `victim` is evicted for `newcomer`, which is
 * nominated but cannot bind until the victim is removed. */
static void evict_wait_remove(et_t *t, const char *victim, const char *newcomer)
{
    const corral_decisions_t *d = cycle(t, 1000);
    cr_assert_eq(d->nevictions, 1);
    cr_assert_str_eq(d->evictions[0].name, victim);
    cr_assert_eq(d->nbinds, 0);
    expect_terminating(t, victim);
    check(t, "after the eviction");
    /* The victim still holds the GPU: the newcomer waits, and the backfill
     * reservation is computed with the victim taken off and put back. */
    for (int k = 0; k < 3; k++) {
        d = cycle(t, 2000 + k);
        cr_assert_eq(d->nbinds, 0);
        cr_assert_eq(d->nevictions, 0, "nothing more to evict");
        expect_terminating(t, victim);
        check(t, "cycles while the victim terminates");
    }
    corral_engine_totals_t tot;
    corral_engine_totals(t->e, &tot);
    cr_assert_eq(tot.pods_pending, 1, "only %s is pending", newcomer);
    cr_assert_eq(corral_engine_remove(t->e, CORRAL_KIND_POD, "default", victim), 0);
    check(t, "after the victim is removed");
    d = cycle(t, 3000);
    cr_assert_eq(d->nbinds, 1);
    cr_assert_str_eq(d->binds[0].name, newcomer);
    check(t, "after the newcomer binds");
    cr_assert_eq(corral_engine_remove(t->e, CORRAL_KIND_POD, "default", newcomer), 0);
    check(t, "after the newcomer is removed");
}

#define NODE1(gpus)                                                                                \
    "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"                                           \
    "status: {allocatable: {cpu: '8', memory: 64Gi, pods: '10', nvidia.com/gpu: '" gpus "'}}\n"

#define POD(name, extra)                                                                           \
    "apiVersion: v1\nkind: Pod\nmetadata: {name: " name "}\nspec: {" extra "containers: [{name: "  \
    "c, image: x, resources: {requests: {cpu: '1'}, limits: {nvidia.com/gpu: 1}}}]}\n"

#define QPOD(name, queue)                                                                          \
    "apiVersion: v1\nkind: Pod\nmetadata: {name: " name ", annotations: "                          \
    "{scheduling.volcano.sh/queue-name: " queue "}}\nspec: {containers: [{name: c, image: x, "     \
    "resources: {requests: {cpu: '1'}, limits: {nvidia.com/gpu: 1}}}]}\n"

Test(engine_evict, preempted_then_removed)
{
    et_t t;
    et_init(&t);
    apply(&t, NODE1("1") "---\n" POD("low", "priority: 1, "));
    cr_assert_eq(cycle(&t, 0)->nbinds, 1);
    check(&t, "after low binds");
    apply(&t, POD("high", "priority: 100, "));
    check(&t, "after high arrives");
    evict_wait_remove(&t, "low", "high");
    et_fini(&t);
}

Test(engine_evict, reclaimed_then_removed)
{
    et_t t;
    et_init(&t);
    apply(&t, NODE1("2") "---\n"
                         "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: "
                         "qa}\nspec: {weight: 1}\n---\n"
                         "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: "
                         "qb}\nspec: {weight: 1}\n---\n" QPOD("a1", "qa") "---\n" QPOD("a2", "qa"));
    cr_assert_eq(cycle(&t, 0)->nbinds, 2);
    check(&t, "after qa binds");
    apply(&t, QPOD("b", "qb"));
    check(&t, "after b arrives");
    /* qa (2 GPUs) is over its share of 1; b takes back the younger one. */
    evict_wait_remove(&t, "a2", "b");
    et_fini(&t);
}

/* A victim's node goes away (its pods with it) while it terminates. */
Test(engine_evict, victim_gone_with_its_node)
{
    et_t t;
    et_init(&t);
    apply(&t, NODE1("1") "---\n" POD("low", "priority: 1, "));
    cycle(&t, 0);
    apply(&t, POD("high", "priority: 100, "));
    cr_assert_eq(cycle(&t, 1000)->nevictions, 1);
    cycle(&t, 2000);
    check(&t, "while low terminates");
    cr_assert_eq(corral_engine_remove(t.e, CORRAL_KIND_NODE, NULL, "n1"), 0);
    check(&t, "after the node is removed");
    corral_pod_view_t v;
    cr_assert_eq(corral_engine_pod(t.e, "default", "low", &v), CORRAL_ENOENT);
    cr_assert_eq(corral_engine_pod(t.e, "default", "high", &v), 0);
    cr_assert(!v.bound);
    cycle(&t, 3000);
    check(&t, "after a cycle without nodes");
    et_fini(&t);
}
