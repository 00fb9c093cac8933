/*
 * The replay protocol on tiny workloads whose every metric is worked out by
 * hand in the comments: allocation over the arrival window (mean and
 * time-weighted median), queueing delay and completion time percentiles,
 * gangs across nodes, per-queue shares, and evictions with restarts.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "sim/replay_int.h"

#define S 1000 /* ms per second */

static sim_node_t nodes4[] = {{"n0", 64000, 262144, 4, ""}};
static sim_node_t nodes8x2[] = {{"n0", 64000, 262144, 8, ""}, {"n1", 64000, 262144, 8, ""}};

static sim_pod_t job(const char *name, int64_t at_s, int gpus, int64_t dur_s, const char *queue)
{
    sim_pod_t p;
    memset(&p, 0, sizeof(p));
    p.name = name;
    p.cpu_milli = 1000;
    p.mem_mib = 1024;
    p.gpus = gpus;
    p.gpu_milli = 1000;
    p.arrive_ms = at_s * S;
    p.duration_ms = dur_s * S;
    p.queue = queue;
    return p;
}

/* Replay workload w (its estimate model, checkpoints, protection) under policy. */
static void run_w(sim_node_t *nodes, size_t nn, const sim_workload_t *w, const char *policy,
                  rresult_t *out)
{
    sim_cluster_t c = {nodes, nn, 0};
    for (size_t i = 0; i < nn; i++)
        c.gpus += nodes[i].gpus;
    const sim_policy_t *pol = corral__sim_policy(policy);
    cr_assert_not_null(pol);
    cr_assert_eq(corral__replay_run(&c, w, pol, NULL, NULL, out), 0);
}

static void run(sim_node_t *nodes, size_t nn, sim_pod_t *pods, size_t np, const char *policy,
                rresult_t *out)
{
    sim_cluster_t c = {nodes, nn, 0};
    for (size_t i = 0; i < nn; i++)
        c.gpus += nodes[i].gpus;
    sim_workload_t w = {pods, np, true, true, SIM_EST_ORACLE, 0, 0, 0};
    const sim_policy_t *pol = corral__sim_policy(policy);
    cr_assert_not_null(pol);
    cr_assert_eq(corral__replay_run(&c, &w, pol, NULL, NULL, out), 0);
}

#define near(a, b)                                                                                 \
    cr_assert(fabs((a) - (b)) < 1e-9, "%s = %.6f, want %.6f", #a, (double)(a), (double)(b))

/*
 * One node, 4 GPUs. A (2 GPUs, 0..100 s), B (4 GPUs from 10 s, 50 s),
 * C (1 GPU from 20 s, 30 s), D (1 GPU at 200 s, 10 s).
 *
 * fifo: A 0-100; B waits for all 4 GPUs, 100-150; C waits behind B (strict
 * order), 150-180; D 200-210. Allocated over the window [0, 200]:
 * 2 GPUs for 100 s, 4 for 50 s, 1 for 30 s, none for 20 s: 430 of 800
 * GPU-seconds = 53.75%; by time, 0% for 20 s, 25% for 30 s, 50% for 100 s,
 * 100% for 50 s, so the median is 50%. Delays 0, 90, 130, 0: p50 (2nd of 4)
 * 0, p95 and p99 130, mean 55. Completion 100, 140, 160, 10: mean 102.5,
 * p50 100, p95 160.
 */
Test(replay, fifo_by_hand)
{
    sim_pod_t w[] = {job("A", 0, 2, 100, NULL), job("B", 10, 4, 50, NULL),
                     job("C", 20, 1, 30, NULL), job("D", 200, 1, 10, NULL)};
    rresult_t r;
    run(nodes4, 1, w, 4, "fifo", &r);
    near(r.alloc_mean, 53.75);
    near(r.alloc_p50, 50.0);
    near(r.delay_p50, 0);
    near(r.delay_p95, 130);
    near(r.delay_p99, 130);
    near(r.delay_mean, 55);
    near(r.jct_mean, 102.5);
    near(r.jct_p50, 100);
    near(r.jct_p95, 160);
    near(r.window_s, 200);
    near(r.makespan_s, 210);
    cr_assert_eq(r.started, 4);
    cr_assert_eq(r.completed, 4);
    cr_assert_eq(r.unstarted, 0);
    cr_assert_eq(r.preempted_pods, 0);
    corral__replay_result_free(&r);
}

/*
 * The same with backfill (corral, given each job's duration): B is reserved
 * the whole node at 100 s, when A ends; C ends at 50 s, before that, so it
 * runs at once, 20-50. Allocated: 2 GPUs 0-20, 3 for 20-50, 2 for 50-100,
 * 4 for 100-150, none after: 40 + 90 + 100 + 200 = 430 of 800 = 53.75%
 * (the same work, sooner); by time 0% 50 s, 50% 70 s (acc 120 >= 100), so
 * the median is 50%. Delays 0, 90, 0, 0: p50 0, p99 90, mean 22.5.
 * Completion 100, 140, 30, 10: mean 70, p50 (2nd of 10,30,100,140) 30.
 */
Test(replay, backfill_by_hand)
{
    sim_pod_t w[] = {job("A", 0, 2, 100, NULL), job("B", 10, 4, 50, NULL),
                     job("C", 20, 1, 30, NULL), job("D", 200, 1, 10, NULL)};
    rresult_t r;
    run(nodes4, 1, w, 4, "corral", &r);
    near(r.alloc_mean, 53.75);
    near(r.alloc_p50, 50.0);
    near(r.delay_p50, 0);
    near(r.delay_p99, 90);
    near(r.delay_mean, 22.5);
    near(r.jct_mean, 70);
    near(r.jct_p50, 30);
    corral__replay_result_free(&r);
}

/*
 * Two nodes of 8 GPUs. E asks for 16 GPUs: a gang of two 8-GPU pods, which
 * starts only when both fit. F (8 GPUs) runs 0-30 on one node, so E waits
 * until 30 and runs 30-40. G (8 GPUs at 5 s, 10 s) fits the other node at
 * once under spread (no reservation): 5-15. The window is [0, 5]: F alone
 * from 0, G joins at 5, so 8 of 16 GPUs: 50%. Delays F 0, E 30 - 1 = 29,
 * G 0.
 */
Test(replay, gang_waits_for_both_nodes)
{
    sim_pod_t w[] = {job("F", 0, 8, 30, NULL), job("E", 1, 16, 10, NULL), job("G", 5, 8, 10, NULL)};
    rresult_t r;
    run(nodes8x2, 2, w, 3, "spread", &r);
    near(r.alloc_mean, 50.0);
    near(r.delay_mean, 29.0 / 3);
    near(r.delay_p99, 29);
    cr_assert_eq(r.completed, 3);
    near(r.makespan_s, 40);
    corral__replay_result_free(&r);
}

/* A job larger than the whole cluster never runs, and says so. */
Test(replay, infeasible_job)
{
    sim_pod_t w[] = {job("A", 0, 32, 10, NULL), job("B", 1, 4, 10, NULL)};
    rresult_t r;
    run(nodes8x2, 2, w, 2, "binpack", &r);
    cr_assert_eq(r.infeasible, 1);
    cr_assert_eq(r.unstarted, 0);
    cr_assert_eq(r.started, 1);
    corral__replay_result_free(&r);
}

/*
 * Per-queue share of GPU-time: q1 runs 2 GPUs for 100 s, q2 1 GPU for
 * 50 s: 200 and 50 GPU-seconds, 80% and 20%.
 */
Test(replay, queue_shares)
{
    sim_pod_t w[] = {job("A", 0, 2, 100, "q1"), job("B", 0, 1, 50, "q2")};
    rresult_t r;
    run(nodes4, 1, w, 2, "spread", &r);
    cr_assert_eq(r.nqueues, 2);
    cr_assert_str_eq(r.queues[0].name, "q1");
    near(r.queues[0].share, 80);
    near(r.queues[1].share, 20);
    corral__replay_result_free(&r);
}

/*
 * Reclaim: X1 and X2 (queue q1, 2 GPUs each, 1000 s) take the node at 0. Y
 * (queue q2, 2 GPUs, 10 s) arrives at 10; the two queues now deserve 2 GPUs
 * each, so q1 gives back one job, the younger (X2, started last; ties go to
 * the later arrival): 2 GPUs x 10 s = 20 GPU-seconds lost. Y runs 10-20, X2
 * starts over at 20 and ends at 1020. Delays count first starts (all 0);
 * completion 1000, 1020 and 10.
 */
Test(replay, reclaim_restarts_the_victim)
{
    sim_pod_t w[] = {job("X1", 0, 2, 1000, "q1"), job("X2", 0, 2, 1000, "q1"),
                     job("Y", 10, 2, 10, "q2")};
    rresult_t r;
    run(nodes4, 1, w, 3, "corral", &r);
    cr_assert_eq(r.preempted_pods, 1);
    cr_assert_eq(r.restarts, 1);
    near(r.lost_gpu_hours, 20.0 / 3600);
    near(r.delay_mean, 0);
    near(r.jct_mean, (1000 + 1020 + 10) / 3.0);
    near(r.makespan_s, 1020);
    corral__replay_result_free(&r);
}

/*
 * EASY backfill on one node of 4 GPUs. A (3 GPUs, 0-100 s), B (4 GPUs at
 * 10 s, 50 s), C (1 GPU at 20 s, 200 s), D (1 GPU at 30 s, 50 s).
 *
 * fifo-easy, oracle estimates: B cannot start; its reservation is all 4
 * GPUs at T = 100 (when A ends). C would end at 220 > T on a reserved GPU:
 * it waits. D ends at 80 <= T: it starts at once, 30-80. A ends, B runs
 * 100-150, C 150-350. Delays 0, 90, 130, 0: mean 55, p99 130.
 *
 * User estimates: A asks for 15m (100 s x [1,5) rounds up to 15m), so T is
 * 900 s and D (asking 15m too) would end at 930 > T: D waits with C and both
 * start when B ends at 150. Delays 0, 90, 130, 120: mean 85.
 *
 * No estimates: A is never expected to end, so B has no reservation: C
 * takes the free GPU at once (as under binpack), D waits for A and runs
 * 100-150, B waits until C ends at 220. Delays 0, 210, 0, 70: mean 70,
 * p99 210.
 */
static sim_pod_t easy_w[] = {{0}, {0}, {0}, {0}};

static void easy_run(sim_est_t est, const char *policy, rresult_t *r)
{
    easy_w[0] = job("A", 0, 3, 100, NULL);
    easy_w[1] = job("B", 10, 4, 50, NULL);
    easy_w[2] = job("C", 20, 1, 200, NULL);
    easy_w[3] = job("D", 30, 1, 50, NULL);
    sim_workload_t w = {easy_w, 4, true, true, est, 7, 0, 0};
    run_w(nodes4, 1, &w, policy, r);
}

Test(replay, easy_backfill_oracle)
{
    rresult_t r;
    easy_run(SIM_EST_ORACLE, "fifo-easy", &r);
    near(r.delay_mean, 55);
    near(r.delay_p99, 130);
    near(r.delay_p50, 0);
    near(r.makespan_s, 350);
    corral__replay_result_free(&r);
}

Test(replay, easy_backfill_user_estimates)
{
    rresult_t r;
    easy_run(SIM_EST_USER, "fifo-easy", &r);
    near(r.delay_mean, 85);
    near(r.delay_p99, 130);
    corral__replay_result_free(&r);
}

Test(replay, easy_backfill_no_estimates)
{
    rresult_t r;
    easy_run(SIM_EST_NONE, "fifo-easy", &r);
    near(r.delay_mean, 70);
    near(r.delay_p99, 210);
    near(r.makespan_s, 270);
    corral__replay_result_free(&r);
}

/* Plain FIFO on the same jobs: C and D wait behind B whatever the estimates
 * (0, 90, 130, 120: mean 85). */
Test(replay, fifo_ignores_estimates)
{
    rresult_t r;
    easy_run(SIM_EST_ORACLE, "fifo", &r);
    near(r.delay_mean, 85);
    corral__replay_result_free(&r);
}

/* User estimates: the factor is in [1, 5), the same for the same (seed,
 * job), and spread over that range (mean 3 within 0.05 over 20,000 jobs). */
Test(replay, user_factor_deterministic_and_uniform)
{
    double sum = 0, lo = 5, hi = 1;
    bool differs = false;
    for (uint32_t j = 0; j < 20000; j++) {
        double f = corral__user_factor(1, j);
        cr_assert(f >= 1 && f < 5, "factor %f", f);
        cr_assert_eq(f, corral__user_factor(1, j));
        differs |= f != corral__user_factor(2, j);
        sum += f;
        lo = f < lo ? f : lo;
        hi = f > hi ? f : hi;
    }
    cr_assert(differs, "another seed draws other factors");
    cr_assert(fabs(sum / 20000 - 3) < 0.05, "mean factor %f", sum / 20000);
    cr_assert(lo < 1.01 && hi > 4.99, "range %f..%f", lo, hi);
}

/* The requested limit is the smallest round value at or above true x factor,
 * at most 7 days; none for a job that runs forever. */
Test(replay, user_estimate_rounds_up)
{
    const int64_t M = 60 * S, H = 60 * M, D = 24 * H;
    const int64_t ladder[] = {15 * M, 30 * M, H,     2 * H, 4 * H, 8 * H,
                              12 * H, D,      2 * D, 3 * D, 7 * D};
    int64_t trues[] = {1 * S, 10 * M, 50 * M, 3 * H, 20 * H, 2 * D};
    for (size_t t = 0; t < sizeof(trues) / sizeof(trues[0]); t++) {
        for (uint32_t j = 0; j < 200; j++) {
            int64_t est = corral__user_estimate(trues[t], 9, j);
            double want = (double)trues[t] * corral__user_factor(9, j);
            size_t k = 0;
            while (k < 10 && (double)ladder[k] < want)
                k++;
            cr_assert_eq(est, ladder[k], "true %lld job %u: %lld", (long long)trues[t], j,
                         (long long)est);
            cr_assert_geq(est, trues[t]);
        }
    }
    cr_assert_eq(corral__user_estimate(1 * S, 9, 0), 15 * M);
    cr_assert_eq(corral__user_estimate(8 * D, 9, 0), 7 * D, "capped at the site's maximum");
    cr_assert_eq(corral__user_estimate(-1, 9, 0), -1);
    sim_est_t e;
    cr_assert_eq(corral__parse_estimates("user", &e), 0);
    cr_assert_eq(e, SIM_EST_USER);
    cr_assert_eq(corral__parse_estimates("none", &e), 0);
    cr_assert_eq(e, SIM_EST_NONE);
    cr_assert_eq(corral__parse_estimates("exact", &e), -1);
}

/*
 * Checkpoints: the reclaim case above with jobs checkpointing every 4 s.
 * X2 ran 10 s when reclaimed: it keeps 8 s, loses 2 s x 2 GPUs = 4
 * GPU-seconds, restarts at 20 with 992 s left and ends at 1012.
 */
Test(replay, checkpoint_resumes)
{
    sim_pod_t p[] = {job("X1", 0, 2, 1000, "q1"), job("X2", 0, 2, 1000, "q1"),
                     job("Y", 10, 2, 10, "q2")};
    sim_workload_t w = {p, 3, true, true, SIM_EST_ORACLE, 0, 4 * S, 0};
    rresult_t r;
    run_w(nodes4, 1, &w, "corral", &r);
    cr_assert_eq(r.preempted_pods, 1);
    near(r.lost_gpu_hours, 4.0 / 3600);
    near(r.jct_mean, (1000 + 1012 + 10) / 3.0);
    near(r.makespan_s, 1012);
    corral__replay_result_free(&r);
}

/*
 * min-runtime: the reclaim case with every pod protected for its first 60 s.
 * Y (at 10 s) waits: both q1 jobs are protected until 60, when the replay
 * runs a cycle although nothing arrives or ends (a live scheduler would).
 * X2 is reclaimed after 60 s (2 GPUs x 60 s lost), Y runs 60-70, X2 starts
 * over at 70 and ends at 1070. Delays 0, 0, 50.
 */
Test(replay, min_runtime_wakes_up_when_protection_ends)
{
    sim_pod_t p[] = {job("X1", 0, 2, 1000, "q1"), job("X2", 0, 2, 1000, "q1"),
                     job("Y", 10, 2, 10, "q2")};
    sim_workload_t w = {p, 3, true, true, SIM_EST_ORACLE, 0, 0, 60 * S};
    rresult_t r;
    run_w(nodes4, 1, &w, "corral", &r);
    cr_assert_eq(r.preempted_pods, 1);
    near(r.lost_gpu_hours, 120.0 / 3600);
    near(r.delay_mean, 50.0 / 3);
    near(r.jct_mean, (1000 + 1070 + 60) / 3.0);
    corral__replay_result_free(&r);
}

/* The same workload twice: the same results, sample for sample. */
Test(replay, deterministic)
{
    sim_pod_t w[] = {job("A", 0, 2, 100, "q1"), job("B", 10, 4, 50, "q2"),
                     job("C", 20, 1, 30, "q1"), job("D", 25, 3, 40, "q2"),
                     job("E", 26, 1, 5, "q1")};
    rresult_t a, b;
    run(nodes4, 1, w, 5, "corral", &a);
    run(nodes4, 1, w, 5, "corral", &b);
    cr_assert_eq(a.nsamples, b.nsamples);
    for (size_t i = 0; i < a.nsamples; i++) {
        cr_assert_eq(a.samples[i].t, b.samples[i].t);
        cr_assert_eq(a.samples[i].used, b.samples[i].used);
    }
    near(a.delay_mean, b.delay_mean);
    corral__replay_result_free(&a);
    corral__replay_result_free(&b);
}

Test(replay, percentile_nearest_rank)
{
    double v[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    near(corral__percentile(v, 10, 50), 5);
    near(corral__percentile(v, 10, 95), 10);
    near(corral__percentile(v, 10, 10), 1);
    near(corral__percentile(v, 10, 0), 1);
    near(corral__percentile(v, 0, 50), 0);
}
