/*
 * The replay's GPU share by queue over time (src/sim/replay_share.c), on a
 * workload worked out by hand: per window, each queue's GPU-time as % of
 * the cluster's GPU capacity over the window.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "sim/replay_int.h"

#define DAY_S 86400

static sim_node_t nodes4[] = {{"n0", 64000, 262144, 4, ""}};

static sim_pod_t job(const char *name, int64_t at_s, int gpus, int64_t dur_s, const char *queue)
{
    sim_pod_t p;
    memset(&p, 0, sizeof(p));
    p.name = name;
    p.cpu_milli = 1000;
    p.mem_mib = 1024;
    p.gpus = gpus;
    p.gpu_milli = 1000;
    p.arrive_ms = at_s * 1000;
    p.duration_ms = dur_s * 1000;
    p.queue = queue;
    return p;
}

#define near(a, b)                                                                                 \
    cr_assert(fabs((a) - (b)) < 1e-9, "%s = %.6f, want %.6f", #a, (double)(a), (double)(b))

/*
 * One node, 4 GPUs, arrivals over one day: daily windows. a: 2 GPUs for two
 * days from 0; b: 1 GPU for 12 h from day 1. Day 1: a holds 2 of 4 GPUs
 * (50%), b nothing. Day 2: a 50%, b 1 GPU for half the day (12.5%).
 */
Test(replay_share, per_day_by_hand)
{
    sim_pod_t pods[] = {job("A", 0, 2, 2 * DAY_S, "a"), job("B", DAY_S, 1, DAY_S / 2, "b")};
    sim_cluster_t c = {nodes4, 1, 4};
    sim_workload_t w = {pods, 2, true, true, SIM_EST_ORACLE, 0, 0, 0};
    const sim_policy_t *pol = corral__sim_policy("binpack");
    cr_assert_not_null(pol);
    rresult_t r;
    cr_assert_eq(corral__replay_run(&c, &w, pol, NULL, NULL, &r), 0);
    near(r.share_window_s, DAY_S);
    cr_assert_eq(r.share_nq, 2);
    cr_assert_eq(r.share_nwin, 2);
    cr_assert_str_eq(r.share_names[0], "a");
    cr_assert_str_eq(r.share_names[1], "b");
    near(r.share_pct[0 * 2 + 0], 50);
    near(r.share_pct[0 * 2 + 1], 0);
    near(r.share_pct[1 * 2 + 0], 50);
    near(r.share_pct[1 * 2 + 1], 12.5);
    corral__replay_result_free(&r);
}
