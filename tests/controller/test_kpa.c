/* The KPA's decision (src/controller/kpa.c) on synthetic series: panic on a
 * step, a ramp, scale to zero after the window and the grace period, the
 * rates, queued requests at zero, pending replicas, events on change. */
#include <criterion/criterion.h>
#include <math.h>

#include "controller/kpa.h"

#define S 1000000000LL

TestSuite(kpa);

static corral__kpa_params_t params(int64_t stable_s, int64_t panic_s, int64_t grace_s,
                                   double target)
{
    return (corral__kpa_params_t){
        .stable_ns = stable_s * S,
        .panic_ns = panic_s * S,
        .grace_ns = grace_s * S,
        .target = target,
        .panic_threshold = 2.0,
        .max_up_rate = 1000,
        .max_down_rate = 2,
        .initial_scale = 1,
    };
}

/* One sample a second from t0 to t1 (seconds, inclusive of t0). */
static void feed(corral__kpa_t *k, int64_t t0, int64_t t1, double v)
{
    for (int64_t t = t0; t < t1; t++)
        corral__kpa_record(k, t * S, v, v > 0);
}

Test(kpa, buckets_average_seconds_with_samples)
{
    corral__kpa_t k;
    corral__kpa_init(&k, 10 * S);
    double avg = -1;
    cr_assert_not(corral__kpa_average(&k, 100 * S, 10 * S, &avg));
    corral__kpa_record(&k, 100 * S, 2, true);
    corral__kpa_record(&k, 100 * S + S / 2, 4, true); /* same second: averaged, 3 */
    corral__kpa_record(&k, 101 * S, 6, true);
    cr_assert(corral__kpa_average(&k, 101 * S, 10 * S, &avg));
    cr_assert_float_eq(avg, 4.5, 1e-9);
    cr_assert(corral__kpa_average(&k, 101 * S, 1 * S, &avg));
    cr_assert_float_eq(avg, 6, 1e-9);
    /* Outside the window: gone; a slot reused for a later second is reset. */
    cr_assert_not(corral__kpa_average(&k, 111 * S, 10 * S, &avg));
    corral__kpa_record(&k, 110 * S, 1, true); /* slot of second 100 */
    cr_assert(corral__kpa_average(&k, 110 * S, 10 * S, &avg));
    cr_assert_float_eq(avg, 3.5, 1e-9);       /* 6 at 101 and 1 at 110 */
    corral__kpa_record(&k, 99 * S, 50, true); /* too old for the ring: dropped */
    cr_assert(corral__kpa_average(&k, 110 * S, 10 * S, &avg));
    cr_assert_float_eq(avg, 3.5, 1e-9);
    corral__kpa_fini(&k);
}

Test(kpa, step_load_panics_up_and_holds_until_a_stable_window_passes)
{
    corral__kpa_params_t p = params(60, 6, 30, 1);
    corral__kpa_t k;
    corral__kpa_init(&k, p.stable_ns);
    corral__kpa_out_t o;
    feed(&k, 0, 60, 1); /* one request in flight for a minute: one replica */
    corral__kpa_decide(&k, &p, 59 * S, 1, 0, 0, &o);
    cr_assert_eq(o.desired, 1);
    cr_assert_not(o.panic);
    /* A step to 10: the stable window barely moves, the panic window does. */
    feed(&k, 60, 63, 10);
    corral__kpa_decide(&k, &p, 62 * S, 1, 0, 0, &o);
    cr_assert(o.panic, "panic avg %f", o.panic_avg);
    cr_assert_geq(o.desired, 5);
    cr_assert(o.changed);
    feed(&k, 63, 70, 10);
    corral__kpa_decide(&k, &p, 69 * S, 1, 0, 0, &o);
    cr_assert(o.panic);
    cr_assert_eq(o.desired, 10, "panic 6s %f -> %d", o.panic_avg, o.desired);
    /* The load stops: no scale down while panicking... */
    feed(&k, 70, 120, 0);
    corral__kpa_decide(&k, &p, 119 * S, 10, 0, 0, &o);
    cr_assert(o.panic);
    cr_assert_eq(o.desired, 10);
    cr_assert_not(o.changed);
    /* ...until a stable window after the last time over the threshold (69 s). */
    feed(&k, 120, 131, 0);
    corral__kpa_decide(&k, &p, 130 * S, 10, 0, 0, &o);
    cr_assert_not(o.panic);
    cr_assert_eq(o.desired, 5, "max scale down rate 2: 10 -> 5, got %d", o.desired);
    cr_assert(o.changed);
    corral__kpa_fini(&k);
}

Test(kpa, ramp_follows_the_stable_average)
{
    corral__kpa_params_t p = params(60, 6, 30, 10);
    corral__kpa_t k;
    corral__kpa_init(&k, p.stable_ns);
    corral__kpa_out_t o = {0};
    int32_t ready = 1;
    for (int64_t t = 0; t < 600; t++) {
        double load = t < 300 ? (double)t / 5.0 : 60; /* +1 request every 5 s to 60, then flat */
        corral__kpa_record(&k, t * S, load, load > 0);
        corral__kpa_decide(&k, &p, t * S, ready, 0, 0, &o);
        cr_assert_geq(o.desired, (int32_t)ceil(o.stable / 10), "never under the stable need");
        if (!o.panic)
            cr_assert_eq(o.desired, (int32_t)fmax(1, ceil(o.stable / 10)), "t=%lld", (long long)t);
        else
            cr_assert_geq(o.desired, (int32_t)ceil(o.panic_avg / 10));
        ready = o.desired; /* replicas become ready at once */
    }
    cr_assert_not(o.panic);
    cr_assert_eq(o.desired, 6);
    corral__kpa_fini(&k);
}

Test(kpa, idle_goes_to_zero_only_after_the_window_and_the_grace)
{
    corral__kpa_params_t p = params(10, 2, 5, 1);
    corral__kpa_t k;
    corral__kpa_init(&k, p.stable_ns);
    corral__kpa_out_t o;
    corral__kpa_decide(&k, &p, 0, 1, 0, 0, &o);
    feed(&k, 0, 21, 1); /* last traffic at 20 s */
    feed(&k, 21, 40, 0);
    for (int64_t t = 21; t < 35; t++) {
        corral__kpa_decide(&k, &p, t * S, 1, 0, 0, &o);
        cr_assert_eq(o.desired, 1, "t=%lld: still 1 (stable %f)", (long long)t, o.stable);
    }
    corral__kpa_decide(&k, &p, 35 * S, 1, 0, 0, &o);
    cr_assert_eq(o.desired, 0);
    cr_assert(o.idle);
    cr_assert(o.changed);
    /* At zero with nothing queued it stays there. */
    corral__kpa_decide(&k, &p, 39 * S, 0, 0, 0, &o);
    cr_assert_eq(o.desired, 0);
    cr_assert_not(o.changed);
    corral__kpa_fini(&k);
}

Test(kpa, queued_request_at_zero_scales_to_one_at_once)
{
    corral__kpa_params_t p = params(10, 2, 5, 1);
    p.initial_scale = 0;
    corral__kpa_t k;
    corral__kpa_init(&k, p.stable_ns);
    corral__kpa_out_t o;
    feed(&k, 0, 50, 0);
    corral__kpa_decide(&k, &p, 49 * S, 0, 0, 0, &o);
    cr_assert_eq(o.desired, 0);
    /* The router holds a request; the scrape's window has not caught up. */
    corral__kpa_decide(&k, &p, 50 * S, 0, 0, 1, &o);
    cr_assert_eq(o.desired, 1);
    cr_assert(o.changed);
    /* The replica is pending (waiting for a GPU): kept, not re-asked for. */
    feed(&k, 50, 55, 0.4);
    corral__kpa_decide(&k, &p, 54 * S, 0, 1, 1, &o);
    cr_assert_eq(o.desired, 1);
    cr_assert_not(o.changed);
    corral__kpa_fini(&k);
}

Test(kpa, pending_replicas_count_as_current)
{
    corral__kpa_params_t p = params(60, 6, 30, 1);
    p.max_up_rate = 2;
    corral__kpa_t k;
    corral__kpa_init(&k, p.stable_ns);
    corral__kpa_out_t o;
    feed(&k, 0, 60, 4);
    /* 4 wanted, 1 ready and 3 waiting for GPUs: still 4 (not 7, and the
     * scale-up rate does not cut the pending ones: 2 x 4 current). */
    corral__kpa_decide(&k, &p, 59 * S, 1, 3, 0, &o);
    cr_assert_eq(o.desired, 4);
    corral__kpa_decide(&k, &p, 59 * S + S / 2, 0, 4, 0, &o);
    cr_assert_eq(o.desired, 4);
    cr_assert_not(o.changed);
    corral__kpa_fini(&k);
}

Test(kpa, scale_rates_bound_each_step)
{
    corral__kpa_params_t p = params(60, 6, 30, 1);
    p.max_up_rate = 3;
    corral__kpa_t k;
    corral__kpa_init(&k, p.stable_ns);
    corral__kpa_out_t o;
    feed(&k, 0, 60, 100);
    corral__kpa_decide(&k, &p, 59 * S, 2, 0, 0, &o);
    cr_assert_eq(o.desired, 6, "ceil(3 x 2)");
    corral__kpa_decide(&k, &p, 59 * S + 1, 6, 0, 0, &o);
    cr_assert_eq(o.desired, 18);
    corral__kpa_fini(&k);
    /* Down: at most current / 2 per decision (the panic over by then). */
    p = params(10, 2, 30, 1);
    corral__kpa_init(&k, p.stable_ns);
    feed(&k, 0, 100, 0.5);
    corral__kpa_decide(&k, &p, 99 * S, 10, 0, 0, &o);
    cr_assert_eq(o.desired, 5);
    cr_assert_str_eq(o.why, "max scale down rate");
    corral__kpa_decide(&k, &p, 99 * S + 1, 5, 0, 0, &o);
    cr_assert_eq(o.desired, 2);
    corral__kpa_decide(&k, &p, 99 * S + 2, 2, 0, 0, &o);
    cr_assert_eq(o.desired, 1);
    corral__kpa_fini(&k);
}

Test(kpa, events_only_on_change_and_no_data_keeps)
{
    corral__kpa_params_t p = params(10, 2, 5, 2);
    corral__kpa_t k;
    corral__kpa_init(&k, p.stable_ns);
    corral__kpa_out_t o;
    corral__kpa_decide(&k, &p, 0, 3, 0, 0, &o);
    cr_assert(o.no_data);
    cr_assert_eq(o.desired, 3);
    cr_assert_not(o.changed, "no change from the replicas there are");
    feed(&k, 1, 11, 6);
    for (int i = 0; i < 5; i++) {
        corral__kpa_decide(&k, &p, 10 * S + i, 3, 0, 0, &o);
        cr_assert_eq(o.desired, 3);
        cr_assert_not(o.changed);
    }
    feed(&k, 11, 16, 10);
    corral__kpa_decide(&k, &p, 15 * S, 3, 0, 0, &o);
    cr_assert_eq(o.desired, 4); /* stable (5x6 + 5x10)/10 = 8 over target 2 */
    cr_assert(o.changed);
    corral__kpa_fini(&k);
}

Test(kpa, value_target_scales_by_current_replicas)
{
    corral__kpa_params_t p = params(10, 2, 5, 5);
    p.scale_by_current = true; /* observed 10 per replica, target 5: double */
    corral__kpa_t k;
    corral__kpa_init(&k, p.stable_ns);
    corral__kpa_out_t o;
    feed(&k, 0, 10, 10);
    corral__kpa_decide(&k, &p, 9 * S, 3, 0, 0, &o);
    cr_assert_eq(o.desired, 6);
    corral__kpa_fini(&k);
}

Test(kpa, non_traffic_metric_goes_to_zero_when_the_router_is_idle)
{
    corral__kpa_params_t p = params(10, 2, 5, 70);
    corral__kpa_t k;
    corral__kpa_init(&k, p.stable_ns);
    corral__kpa_out_t o;
    /* GPU at 60% while serving, then 8% idle: the router saw nothing after 10 s. */
    for (int64_t t = 0; t < 40; t++) {
        corral__kpa_record(&k, t * S, t < 10 ? 60 : 8, t < 10);
        corral__kpa_decide(&k, &p, t * S, 1, 0, 0, &o);
        cr_assert_eq(o.desired, t < 24 ? 1 : 0, "t=%lld desired %d", (long long)t, o.desired);
    }
    corral__kpa_fini(&k);
}

Test(kpa, initial_scale_holds_a_new_revision_until_idle)
{
    corral__kpa_params_t p = params(10, 2, 5, 1);
    corral__kpa_t k;
    corral__kpa_init(&k, p.stable_ns);
    corral__kpa_out_t o;
    corral__kpa_decide(&k, &p, 0, 0, 0, 0, &o);
    cr_assert_eq(o.desired, 1);
    cr_assert(o.changed);
    for (int64_t t = 1; t < 15; t++) {
        corral__kpa_record(&k, t * S, 0, false);
        corral__kpa_decide(&k, &p, t * S, t < 3 ? 0 : 1, 0, 0, &o);
        cr_assert_eq(o.desired, 1, "t=%lld", (long long)t);
    }
    corral__kpa_decide(&k, &p, 15 * S, 1, 0, 0, &o);
    cr_assert_eq(o.desired, 0);
    corral__kpa_fini(&k);
}
