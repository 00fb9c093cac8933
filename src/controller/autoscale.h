/*
 * The autoscaler of InferenceService revisions (Knative KPA semantics), as
 * the InferenceService controller sees it. It lives in the controller
 * process: its own thread collects the metrics (the router's counters, the
 * agents' GPU utilization, the replicas' model-server queues, Prometheus
 * queries); corral__as_decide only reads the latest samples, so the
 * reconcile thread never waits on I/O.
 */
#ifndef CORRAL_CONTROLLER_AUTOSCALE_H
#define CORRAL_CONTROLLER_AUTOSCALE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "corral/client.h"
#include "corral/metrics.h"
#include "corral/model.h"

typedef struct corral__autoscaler corral__autoscaler_t;

typedef struct corral__as_opts {
    const corral_client_config_t *cfg; /* the API server (node proxy for GPU metrics) */
    const char *router_metrics;        /* router /metrics URLs, comma-separated; NULL: none */
    int agent_metrics_port;         /* GPU metrics at nodes/NODE:PORT/proxy; 0: the node's port */
    int64_t tick_ns;                /* metric collection period; 0: 1 s */
    int64_t stable_window_ns;       /* 0: 60 s */
    int64_t panic_window_ns;        /* 0: 6 s */
    double panic_threshold;         /* percent of target; 0: 200 */
    int64_t scale_to_zero_grace_ns; /* 0: 30 s */
    double max_scale_up_rate;       /* 0: 1000 */
    double max_scale_down_rate;     /* 0: 2 */
    corral_metrics_t *metrics;      /* the controller's registry; NULL: none */
    /* Called on the collector's thread when a revision whose last decision
     * was 0 has requests queued at the router (decide again now); NULL: none. */
    void (*notify)(void *arg);
    void *notify_arg;
    /* A line for the controller's log (scrape failures, at most one per
     * source every 30 s), from the collector's thread; NULL: quiet. */
    void (*log)(void *arg, const char *line);
    void *log_arg;
} corral__as_opts_t;

/* One revision at one reconcile. Strings and arrays are borrowed. */
typedef struct corral__as_input {
    const char *ns, *service, *revision;
    const corral_isvc_component_t *comp; /* metric, target, min/max, autoScaling */
    int32_t ready;                       /* replicas Ready */
    int32_t pending; /* created, not Ready (waiting for GPUs counts here, never as failed) */
    const char *const *pods;      /* the revision's pod names (per-pod metrics) */
    const char *const *pod_nodes; /* the node of each pod, NULL when not bound */
    const char *const *pod_addrs; /* "IP:PORT" of each pod, NULL when unknown */
    size_t npods;
} corral__as_input_t;

typedef struct corral__as_decision {
    int32_t desired;  /* before clamping to the service's min/max */
    bool changed;     /* differs from this revision's last decision: post an Event */
    char reason[512]; /* the inputs, for the Event and logs */
} corral__as_decision_t;

/* Start the collector thread (0, or a negative code with a message). */
int corral__as_new(const corral__as_opts_t *o, corral__autoscaler_t **out, char *err,
                   size_t errlen);
/* Stop the thread and free everything (NULL is fine). */
void corral__as_free(corral__autoscaler_t *as);

/* Decide the replica count of one revision at now_ns (CLOCK_MONOTONIC, as
 * corral__mono_ns: the collector's samples carry the same clock). */
int corral__as_decide(corral__autoscaler_t *as, const corral__as_input_t *in, int64_t now_ns,
                      corral__as_decision_t *out);
/* The pod to remove first when scaling down: not Ready before Ready, then
 * the least loaded; returns an index into pods (0 when npods is 1). */
size_t corral__as_victim(corral__autoscaler_t *as, const char *ns, const char *const *pods,
                         const bool *ready, size_t npods);
/* A revision is gone: drop its state. */
void corral__as_forget(corral__autoscaler_t *as, const char *ns, const char *revision);

/* One collection pass at now_ns (what the thread runs every tick; tests
 * call it with a tick long enough that the thread stays asleep). */
void corral__as_collect(corral__autoscaler_t *as, int64_t now_ns);

#endif
