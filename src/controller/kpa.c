/*
 * The KPA's decision (kpa.h): pure, the time passed in.
 */
#include "controller/kpa.h"

#include <math.h>

#include "corral/common.h"

#define SEC 1000000000LL

void corral__kpa_init(corral__kpa_t *k, int64_t stable_ns)
{
    *k = (corral__kpa_t){0};
    int64_t n = (stable_ns + SEC - 1) / SEC;
    if (n < 1)
        n = 1;
    if (n > CORRAL__KPA_MAX_BUCKETS)
        n = CORRAL__KPA_MAX_BUCKETS;
    k->n = (size_t)n;
    k->sum = corral_calloc(k->n, sizeof(*k->sum));
    k->cnt = corral_calloc(k->n, sizeof(*k->cnt));
    k->sec = corral_calloc(k->n, sizeof(*k->sec));
    for (size_t i = 0; i < k->n; i++)
        k->sec[i] = INT64_MIN;
}

void corral__kpa_fini(corral__kpa_t *k)
{
    corral_free(k->sum);
    corral_free(k->cnt);
    corral_free(k->sec);
    *k = (corral__kpa_t){0};
}

static int64_t second_of(int64_t ns)
{
    return ns >= 0 ? ns / SEC : -((-ns + SEC - 1) / SEC);
}

static size_t slot_of(const corral__kpa_t *k, int64_t sec)
{
    int64_t n = k->n ? (int64_t)k->n : 1; /* init makes n >= 1 */
    int64_t m = sec % n;
    return (size_t)(m < 0 ? m + n : m);
}

void corral__kpa_touch(corral__kpa_t *k, int64_t now_ns)
{
    if (now_ns > k->last_active_ns || !k->touched)
        k->last_active_ns = now_ns;
    k->touched = true;
}

void corral__kpa_record(corral__kpa_t *k, int64_t now_ns, double value, bool active)
{
    if (!(value >= 0) || isinf(value))
        value = 0; /* NaN and negatives from a broken source count as nothing */
    int64_t sec = second_of(now_ns);
    size_t i = slot_of(k, sec);
    if (k->sec[i] != sec) {
        if (k->sec[i] > sec)
            return; /* older than the window the slot now holds */
        k->sec[i] = sec;
        k->sum[i] = 0;
        k->cnt[i] = 0;
    }
    k->sum[i] += value;
    k->cnt[i]++;
    k->last_sample = value;
    if (active)
        corral__kpa_touch(k, now_ns);
}

bool corral__kpa_average(const corral__kpa_t *k, int64_t now_ns, int64_t window_ns, double *avg)
{
    int64_t now = second_of(now_ns);
    int64_t w = (window_ns + SEC - 1) / SEC;
    if (w < 1)
        w = 1;
    if (w > (int64_t)k->n)
        w = (int64_t)k->n;
    double total = 0;
    int64_t used = 0;
    for (int64_t s = now - w + 1; s <= now; s++) {
        size_t i = slot_of(k, s);
        if (k->sec[i] != s || k->cnt[i] == 0)
            continue;
        total += k->sum[i] / k->cnt[i];
        used++;
    }
    if (used == 0)
        return false;
    *avg = total / (double)used;
    return true;
}

static double clampd(double v, double lo, double hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

static int32_t to_count(double v)
{
    if (!(v > 0))
        return 0;
    return v >= (double)INT32_MAX ? INT32_MAX : (int32_t)v;
}

/* Knative's Scale(): the stable and panic counts within the rates, panic
 * mode entered, extended and left; returns the count before the zero rules. */
static int32_t scale(corral__kpa_t *k, const corral__kpa_params_t *p, int64_t now_ns,
                     int32_t current, corral__kpa_out_t *out)
{
    double cur1 = current > 0 ? current : 1;
    double stable = out->stable, panic = out->panic_avg;
    if (p->scale_by_current) {
        stable *= cur1;
        panic *= cur1;
    }
    double target = p->target > 0 ? p->target : 1;
    double dspc = ceil(stable / target), dppc = ceil(panic / target);
    double max_up = ceil(p->max_up_rate * cur1);
    double max_down = floor(cur1 / p->max_down_rate);
    int32_t ds = to_count(clampd(dspc, max_down, max_up));
    int32_t dp = to_count(clampd(dppc, max_down, max_up));
    bool over = dppc / cur1 >= p->panic_threshold;
    if (over) {
        k->panic_since_ns = now_ns; /* enter, or extend */
    } else if (k->panic_since_ns != 0 && k->panic_since_ns + p->stable_ns < now_ns) {
        k->panic_since_ns = 0; /* the surge is in the stable window now */
        k->max_panic = 0;
    }
    int32_t desired = ds;
    if (k->panic_since_ns != 0) {
        out->panic = true;
        if (desired < dp)
            desired = dp;
        if (desired > k->max_panic)
            k->max_panic = desired;
        else if (desired < k->max_panic)
            out->why = "no scale down in panic";
        desired = k->max_panic;
    } else if (ds == (int32_t)max_up && dspc > max_up) {
        out->why = "max scale up rate";
    } else if (ds == (int32_t)max_down && dspc < max_down) {
        out->why = "max scale down rate";
    }
    return desired;
}

void corral__kpa_decide(corral__kpa_t *k, const corral__kpa_params_t *p, int64_t now_ns,
                        int32_t ready, int32_t pending, int64_t queued, corral__kpa_out_t *out)
{
    *out = (corral__kpa_out_t){0};
    int32_t current = (ready > 0 ? ready : 0) + (pending > 0 ? pending : 0);
    bool first = !k->seen;
    if (first) {
        k->seen = true;
        /* A new revision starts active when it is to get initial replicas
         * (Knative's initial-scale), else idle since forever. */
        if (p->initial_scale > 0 || current > 0)
            corral__kpa_touch(k, now_ns);
        else if (!k->touched)
            k->last_active_ns = INT64_MIN / 2;
    }
    if (queued > 0)
        corral__kpa_touch(k, now_ns);
    out->latest = k->last_sample;
    bool have = corral__kpa_average(k, now_ns, p->stable_ns, &out->stable);
    if (have && !corral__kpa_average(k, now_ns, p->panic_ns, &out->panic_avg))
        out->panic_avg = 0; /* nothing in the last seconds: the panic window saw nothing */
    int32_t desired;
    if (!have) {
        out->no_data = true;
        out->why = "no data: kept";
        desired = k->has_last ? k->last_desired : current;
    } else {
        desired = scale(k, p, now_ns, current, out);
    }
    out->idle = now_ns - k->last_active_ns >= p->stable_ns + p->grace_ns;
    if (!out->no_data && out->idle && !out->panic) {
        if (desired != 0)
            out->why = "idle for the stable window and the grace period";
        desired = 0;
    } else if (!out->no_data && desired == 0 && !out->idle &&
               (current > 0 || (k->has_last && k->last_desired > 0))) {
        desired = 1; /* zero only after the stable window and the grace period */
        out->why = "to zero after the grace period";
    }
    if (first && p->initial_scale > desired && !out->idle) {
        desired = p->initial_scale;
        out->why = "initial scale";
    }
    if (queued > 0 && desired < 1) {
        desired = 1;
        out->why = "requests queued at the router";
    }
    out->desired = desired;
    out->changed = k->has_last ? k->last_desired != desired : desired != current;
    k->has_last = true;
    k->last_desired = desired;
}
