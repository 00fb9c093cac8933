/* Gangs of unequal pods (SCENARIOS.md ruling 8) at a size scenarios do not
 * reach: pods are tried largest first, a pod that fits nowhere is passed
 * over, and "M" in the reason counts every pod that fits at once. */
#include <stdio.h>

#include "corral/buf.h"
#include "engine_test.h"

/* Ten 8-GPU nodes, and gang g (minMember min) with n2 2-GPU pods then n1
 * 1-GPU pods, the small ones the oldest. */
static void gang_cluster(et_t *t, int min, int n1, int n2)
{
    corral_buf_t b;
    corral_buf_init(&b);
    for (int i = 0; i < 10; i++)
        corral_buf_printf(&b,
                          "apiVersion: v1\nkind: Node\nmetadata: {name: n%02d}\nstatus: "
                          "{allocatable: {cpu: '64', memory: 512Gi, pods: '110', "
                          "nvidia.com/gpu: '8'}}\n---\n",
                          i);
    corral_buf_printf(&b,
                      "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: "
                      "{name: g}\nspec: {minMember: %d}\n",
                      min);
    for (int i = 0; i < n1 + n2; i++)
        corral_buf_printf(&b,
                          "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p%03d, annotations: "
                          "{scheduling.k8s.io/group-name: g}}\nspec: {containers: [{name: c, "
                          "image: x, resources: {requests: {cpu: '1'}, limits: {nvidia.com/gpu: "
                          "%d}}}]}\n",
                          i, i < n1 ? 1 : 2);
    apply(t, corral_buf_str(&b));
    corral_buf_fini(&b);
}

static const char *reason_of(et_t *t, const char *name)
{
    corral_pod_view_t v = et_view(t, name);
    return v.bound ? "bound" : v.reason;
}

Test(gang, unequal_pods_count_what_fits)
{
    et_t t;
    et_init(&t);
    gang_cluster(&t, 60, 20, 40); /* 40 x 2 GPUs fill the 80 GPUs; no 1-GPU pod fits */
    const corral_decisions_t *d;
    cr_assert_eq(corral_engine_cycle(t.e, 0, &d), 0);
    cr_assert_eq(d->nbinds, 0);
    cr_assert_str_eq(reason_of(&t, "p000"),
                     "pod group is not ready, 40 pod(s) of minMember 60 can be placed");
    et_fini(&t);
}

Test(gang, largest_first_then_the_rest)
{
    et_t t;
    et_init(&t);
    gang_cluster(&t, 50, 30, 30); /* 30 x 2 + 20 x 1 = 80 GPUs: 50 pods */
    const corral_decisions_t *d;
    cr_assert_eq(corral_engine_cycle(t.e, 0, &d), 0);
    cr_assert_eq(d->nbinds, 50);
    for (int i = 30; i < 60; i++) {
        char name[8];
        snprintf(name, sizeof(name), "p%03d", i);
        cr_assert_str_eq(reason_of(&t, name), "bound", "%s: the 2-GPU pods go first", name);
    }
    cr_assert_str_eq(reason_of(&t, "p029"),
                     "0/10 nodes are available: 10 Insufficient nvidia.com/gpu.");
    et_fini(&t);
}
