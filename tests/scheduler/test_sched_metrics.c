/*
 * The scheduler's metric labels: a pending reason (free text with counts)
 * becomes a short stable category, so corral_scheduler_pending_pods keeps
 * a bounded number of series.
 */
#include <criterion/criterion.h>

#include "scheduler/sched_int.h"

Test(sched_metrics, reason_categories)
{
    static const struct {
        const char *reason, *cat;
    } cases[] = {
        {NULL, "NotYetTried"},
        {"0/5 nodes are available: 1 node(s) had untolerated taint {a: b}, 4 Insufficient "
         "nvidia.com/gpu.",
         "Insufficient nvidia.com/gpu"},
        {"0/2 nodes are available: 2 Insufficient corral.dev/gpu-milli.",
         "Insufficient corral.dev/gpu-milli"},
        {"0/2 nodes are available: 2 Insufficient cpu, 2 Insufficient memory.", "Insufficient cpu"},
        {"0/2 nodes are available: 2 Insufficient example.com/fpga.", "Insufficient resources"},
        {"0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector.",
         "Unschedulable"},
        {"pod group is not ready, 3 pod(s) of minMember 8 can be placed", "GangWaiting"},
        {"queue training is over its capability", "QueueOverCapability"},
        {"queue q is closed", "QueueClosed"},
        {"no HyperNode of tier <= 1 can hold the pod group", "NetworkTopology"},
        {"waiting for resources reserved for ns/big", "BackfillReserved"},
        {"waiting for an earlier job to start first (strict order)", "StrictOrder"},
        {"queue nope does not exist", "InvalidReference"},
        {"not scheduled by Corral: spec.schedulerName names another scheduler", "OtherScheduler"},
        {"something new", "Other"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        cr_assert_str_eq(corral__reason_category(cases[i].reason), cases[i].cat, "%s",
                         cases[i].reason ? cases[i].reason : "(null)");
}
