/* Volcano PodGroup decoding: defaults, minTaskMember, networkTopology, status,
 * and the messages for each invalid field (with file:line and field path). */
#include "model_test.h"

#define PG_HEAD                                                                                    \
    "apiVersion: scheduling.volcano.sh/v1beta1\n"                                                  \
    "kind: PodGroup\n"                                                                             \
    "metadata:\n"                                                                                  \
    "  name: train\n"

TestSuite(podgroup);

Test(podgroup, defaults)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, PG_HEAD), 0, "%s", mt_diags(&t));
    cr_assert_eq(t.diag.n, 0, "%s", mt_diags(&t));
    cr_assert_eq(t.obj->info->kind, CORRAL_KIND_PODGROUP);
    cr_assert_str_eq(t.obj->meta.namespace, "default");
    const corral_podgroup_t *pg = t.obj->u.pg;
    cr_assert_eq(pg->min_member, 1);
    cr_assert_str_eq(pg->queue, "default");
    cr_assert_null(pg->priority_class_name);
    cr_assert_null(pg->topology.mode);
    cr_assert_not(pg->topology.highest_tier.set);
    cr_assert_eq(pg->nmin_task_member, 0);
    cr_assert_eq(pg->min_resources.n, 0);
    cr_assert_null(pg->phase);
    mt_fini(&t);
}

Test(podgroup, full_spec_and_status)
{
    mt_t t;
    int rc = mt_decode(&t, PG_HEAD "  namespace: ml\n"
                                   "spec:\n"
                                   "  minMember: 4\n"
                                   "  minTaskMember: {ps: 1, worker: 3}\n"
                                   "  queue: research\n"
                                   "  priorityClassName: high\n"
                                   "  minResources:\n"
                                   "    nvidia.com/gpu: 8\n"
                                   "    cpu: \"16\"\n"
                                   "  networkTopology: {mode: hard, highestTierAllowed: 2}\n"
                                   "status:\n"
                                   "  phase: Running\n"
                                   "  running: 4\n"
                                   "  succeeded: 1\n"
                                   "  failed: 2\n"
                                   "  conditions:\n"
                                   "  - type: Scheduled\n"
                                   "    status: \"True\"\n"
                                   "    transitionID: abc\n");
    cr_assert_eq(rc, 0, "%s", mt_diags(&t));
    cr_assert_eq(t.diag.n, 0, "%s", mt_diags(&t));
    const corral_podgroup_t *pg = t.obj->u.pg;
    cr_assert_eq(pg->min_member, 4);
    cr_assert_eq(pg->nmin_task_member, 2);
    cr_assert_str_eq(pg->min_task_member[0].name, "ps");
    cr_assert_eq(pg->min_task_member[0].count, 1);
    cr_assert_str_eq(pg->min_task_member[1].name, "worker");
    cr_assert_eq(pg->min_task_member[1].count, 3);
    cr_assert_str_eq(pg->queue, "research");
    cr_assert_str_eq(pg->priority_class_name, "high");
    int64_t gpus = 0;
    cr_assert_eq(corral_qty_value(corral_reslist_get(&pg->min_resources, "nvidia.com/gpu"), &gpus),
                 0);
    cr_assert_eq(gpus, 8);
    cr_assert_not_null(corral_reslist_get(&pg->min_resources, "cpu"));
    cr_assert_str_eq(pg->topology.mode, "hard");
    cr_assert(pg->topology.highest_tier.set);
    cr_assert_eq(pg->topology.highest_tier.v, 2);
    cr_assert_str_eq(pg->phase, "Running");
    cr_assert_eq(pg->running, 4);
    cr_assert_eq(pg->succeeded, 1);
    cr_assert_eq(pg->failed, 2);
    cr_assert_eq(pg->conditions.n, 1);
    cr_assert_str_eq(pg->conditions.items[0].type, "Scheduled");
    mt_fini(&t);
}

Test(podgroup, empty_queue_means_default)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, PG_HEAD "spec:\n  queue: \"\"\n"), 0, "%s", mt_diags(&t));
    cr_assert_str_eq(t.obj->u.pg->queue, "default");
    mt_fini(&t);
}

Test(podgroup, min_member_zero_allowed)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, PG_HEAD "spec:\n  minMember: 0\n"), 0, "%s", mt_diags(&t));
    cr_assert_eq(t.obj->u.pg->min_member, 0);
    mt_fini(&t);
}

Test(podgroup, negative_min_member)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, PG_HEAD "spec:\n  minMember: -2\n"), CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:6:", "spec.minMember", "greater than or equal to 0", "-2");
    cr_assert_not_null(t.obj);
    mt_fini(&t);
}

Test(podgroup, min_member_quoted)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, PG_HEAD "spec:\n  minMember: \"3\"\n"), CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:6:", "spec.minMember", "remove the quotes");
    mt_fini(&t);
}

Test(podgroup, negative_min_task_member)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, PG_HEAD "spec:\n"
                                       "  minTaskMember:\n"
                                       "    ps: 1\n"
                                       "    worker: -1\n"),
                 CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:8:", "spec.minTaskMember.worker", "greater than or equal to 0");
    cr_assert_eq(t.obj->u.pg->nmin_task_member, 1);
    mt_fini(&t);
}

Test(podgroup, min_task_member_not_a_map)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, PG_HEAD "spec:\n  minTaskMember: [1, 2]\n"), CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:6:", "spec.minTaskMember", "expected a mapping");
    mt_fini(&t);
}

Test(podgroup, min_task_member_null_count)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, PG_HEAD "spec:\n  minTaskMember:\n    worker:\n"), CORRAL_EINVAL);
    mt_assert_diag(&t, "spec.minTaskMember.worker", "minimum number of pods");
    mt_fini(&t);
}

Test(podgroup, hard_topology_needs_tier)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, PG_HEAD "spec:\n"
                                       "  networkTopology:\n"
                                       "    mode: hard\n"),
                 CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:7:", "spec.networkTopology.highestTierAllowed", "required", "hard");
    mt_fini(&t);
}

Test(podgroup, topology_mode_defaults_to_hard)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, PG_HEAD "spec:\n  networkTopology: {highestTierAllowed: 1}\n"), 0,
                 "%s", mt_diags(&t));
    cr_assert_str_eq(t.obj->u.pg->topology.mode, "hard");
    cr_assert_eq(t.obj->u.pg->topology.highest_tier.v, 1);
    mt_fini(&t);

    cr_assert_eq(mt_decode(&t, PG_HEAD "spec:\n  networkTopology: {}\n"), CORRAL_EINVAL);
    mt_assert_diag(&t, "spec.networkTopology.highestTierAllowed", "the default mode");
    mt_fini(&t);
}

Test(podgroup, soft_topology_without_tier)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, PG_HEAD "spec:\n  networkTopology: {mode: soft}\n"), 0, "%s",
                 mt_diags(&t));
    cr_assert_str_eq(t.obj->u.pg->topology.mode, "soft");
    cr_assert_not(t.obj->u.pg->topology.highest_tier.set);
    mt_fini(&t);
}

Test(podgroup, topology_mode_typo)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, PG_HEAD "spec:\n"
                                       "  networkTopology:\n"
                                       "    mode: hrad\n"
                                       "    highestTierAllowed: 1\n"),
                 CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:7:", "spec.networkTopology.mode", "did you mean `hard`");
    mt_fini(&t);
}

Test(podgroup, topology_tier_below_one)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, PG_HEAD "spec:\n"
                                       "  networkTopology:\n"
                                       "    mode: soft\n"
                                       "    highestTierAllowed: 0\n"),
                 CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:8:", "spec.networkTopology.highestTierAllowed", "at least 1");
    mt_fini(&t);
}

Test(podgroup, tier_name_alone_is_not_enough)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, PG_HEAD "spec:\n"
                                       "  networkTopology: {mode: hard, highestTierName: spine}\n"),
                 CORRAL_EINVAL);
    mt_assert_diag(&t, "highestTierAllowed", "highestTierName");
    mt_fini(&t);
}

Test(podgroup, unknown_field_warns_with_hint)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, PG_HEAD "spec:\n  minMembers: 2\n"), 0, "%s", mt_diags(&t));
    mt_assert_diag(&t, "t.yaml:6:", "warning:", "spec.minMembers", "did you mean `minMember`");
    cr_assert_eq(t.obj->u.pg->min_member, 1);
    mt_fini(&t);
}

Test(podgroup, upstream_fields_kept_quietly)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, PG_HEAD "spec:\n"
                                       "  preemptable: false\n"
                                       "  subGroupPolicy: []\n"),
                 0, "%s", mt_diags(&t));
    cr_assert_eq(t.diag.n, 0, "%s", mt_diags(&t));
    mt_fini(&t);
}

Test(podgroup, status_phase_typo)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, PG_HEAD "status:\n  phase: Runing\n"), CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:6:", "status.phase", "did you mean `Running`");
    mt_fini(&t);
}

Test(podgroup, fractional_gpu_in_min_resources)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, PG_HEAD "spec:\n  minResources:\n    nvidia.com/gpu: 0.5\n"),
                 CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:7:", "spec.minResources.nvidia.com/gpu", "whole number");
    mt_fini(&t);
}

Test(podgroup, invalid_queue_name)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, PG_HEAD "spec:\n  queue: GPU_Queue\n"), CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:6:", "spec.queue", "invalid queue name", "GPU_Queue");
    mt_fini(&t);
}
