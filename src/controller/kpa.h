/*
 * The Knative Pod Autoscaler's decision, as a pure function of a revision's
 * metric samples (no I/O, no clock: every call takes the time). Samples go
 * into per-second buckets; the stable and panic windows average them;
 * desired = ceil(observed / target), bounded by the scale-up and scale-down
 * rates; panic mode (the panic window asks for >= threshold x the current
 * replicas) only scales up and ends a stable window after the surge; a
 * revision goes to zero only after the stable window saw nothing and the
 * scale-to-zero grace period passed, and a request queued at the router
 * brings it back to one at once. Knative's pkg/autoscaler/scaling is the
 * reference; docs/inference.md ("The autoscaler") lists where we differ.
 */
#ifndef CORRAL_CONTROLLER_KPA_H
#define CORRAL_CONTROLLER_KPA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CORRAL__KPA_MAX_BUCKETS 3600 /* 1 s buckets: the longest stable window, 1 h */

typedef struct corral__kpa_params {
    int64_t stable_ns;      /* stable window */
    int64_t panic_ns;       /* panic window (<= stable) */
    int64_t grace_ns;       /* scale-to-zero grace (max of grace and pod retention) */
    double target;          /* the metric value one replica should carry (> 0) */
    bool scale_by_current;  /* target type Value: observed x current replicas is the total */
    double panic_threshold; /* ratio: 2.0 = 200% */
    double max_up_rate;     /* > 1 */
    double max_down_rate;   /* > 1 */
    int32_t initial_scale;  /* replicas held at first sight until the revision is idle */
} corral__kpa_params_t;

typedef struct corral__kpa {
    double *sum; /* per-second buckets: sum and count of the samples of second sec[i] */
    uint32_t *cnt;
    int64_t *sec;
    size_t n;
    bool seen;              /* first decision made */
    bool touched;           /* last_active_ns set by a sample or traffic */
    int64_t last_active_ns; /* last sample > 0 or traffic at the router */
    int64_t panic_since_ns; /* last time over the panic threshold; 0: not panicking */
    int32_t max_panic;      /* the most replicas asked for in this panic */
    bool has_last;
    int32_t last_desired;
    double last_sample;
} corral__kpa_t;

/* What one decision saw and chose. */
typedef struct corral__kpa_out {
    int32_t desired;
    bool changed; /* differs from the previous decision */
    bool panic;
    bool no_data; /* no sample in the stable window: the count is kept */
    bool idle;    /* nothing for the stable window + grace */
    double stable, panic_avg, latest;
    const char *why; /* a short note on the rule that set the count, or NULL */
} corral__kpa_out_t;

/* Buckets for a stable window of stable_ns (1 s to 1 h). */
void corral__kpa_init(corral__kpa_t *k, int64_t stable_ns);
void corral__kpa_fini(corral__kpa_t *k);

/* A sample of the metric at now_ns (several in one second are averaged);
 * active: the revision had traffic (for concurrency and rps, value > 0; for
 * a metric that is not traffic, such as GPU utilization, what the router
 * saw). */
void corral__kpa_record(corral__kpa_t *k, int64_t now_ns, double value, bool active);
/* Traffic seen at now_ns that the metric may not show (router requests). */
void corral__kpa_touch(corral__kpa_t *k, int64_t now_ns);
/* The average of the seconds with samples in (now - window, now]; false: none. */
bool corral__kpa_average(const corral__kpa_t *k, int64_t now_ns, int64_t window_ns, double *avg);

/* Decide the replicas of a revision with ready + pending replicas (pending:
 * created, not Ready, e.g. waiting for GPUs; part of the current count) and
 * queued requests waiting at the router. */
void corral__kpa_decide(corral__kpa_t *k, const corral__kpa_params_t *p, int64_t now_ns,
                        int32_t ready, int32_t pending, int64_t queued, corral__kpa_out_t *out);

#endif
