/*
 * The controllers (`corral controller`): Volcano's Job controller (PodGroup
 * and pods per task, lifecycle policies, retries, the job state machine),
 * PodGroup and Queue status, garbage collection by ownerReferences, and node
 * lifecycle (an expired Lease makes a node Ready=Unknown and tainted
 * unreachable; its pods are evicted after their tolerationSeconds), and
 * KServe InferenceServices (revisions, replicas, canary traffic). All of
 * them are clients of the API server: informers in, plain requests out.
 * docs/controller.md says what each one does and where it differs from
 * upstream.
 */
#ifndef CORRAL_CONTROLLER_H
#define CORRAL_CONTROLLER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "corral/client.h"

typedef struct corral_controller_opts {
    const corral_client_config_t *cfg; /* where the API server is (borrowed) */
    int64_t node_monitor_grace_ns;     /* lease age that makes a node Unknown; 0: 40 s */
    int64_t node_monitor_period_ns;    /* how often nodes are checked; 0: 5 s */
    int64_t default_toleration_s;      /* unreachable:NoExecute without a toleration; <0: 300 */
    int64_t status_period_ns;          /* PodGroup/Queue status at most this often; 0: 1 s */
    int workers;                       /* accepted for compatibility; reconciling is serial */
    FILE *log;                         /* one line per action taken; NULL: quiet */
    const char *metrics_listen;        /* HOST:PORT of /metrics, /healthz; NULL, "" or "off" */
    int64_t usage_retention_ns;        /* UsageRecords finished longer ago are pruned; 0: 90d */
    int64_t usage_max_records;         /* the most UsageRecords kept; 0: 100000 */
    int64_t usage_prune_period_ns;     /* how often retention runs; 0: 10 min */
    /* The autoscaler of InferenceService revisions (Knative KPA). */
    const char *router_metrics; /* router /metrics URLs, comma-separated; NULL: none */
    /* The agents' GPU metrics through the node proxy at this port
     * (nodes/NODE:PORT/proxy/metrics: on a cluster, the agent's :9400, as
     * the node's own port is kubelet's); 0: the node's port (corral up). */
    int agent_metrics_port;
    int64_t autoscaler_tick_ns;          /* metric collection period; 0: 1 s */
    int64_t autoscaler_stable_window_ns; /* 0: 60 s */
    int64_t autoscaler_panic_window_ns;  /* 0: 6 s */
    int64_t scale_to_zero_grace_ns;      /* 0: 30 s */
    double max_scale_up_rate;            /* 0: 1000 */
    double max_scale_down_rate;          /* 0: 2 */
    const char *ingress_domain;          /* InferenceService status.url domain; NULL: example.com */
    const char *router_url;              /* status.address base; NULL: http://127.0.0.1:8080 */
    /* Which controllers run, as kube-controller-manager's --controllers:
     * comma-separated names, "*" for all, "-name" to leave one out (NULL:
     * "*"). Names: job, queue (PodGroup and Queue status), nodelifecycle,
     * garbagecollector, usage, inferenceservice. */
    const char *controllers;
    /* Leader election on a Lease (include/corral/leader.h): a replica that
     * does not lead starts no informer and writes nothing; one that loses
     * the lead returns from corral_controller_run with CORRAL_EIO. */
    bool leader_elect;
    const char *lease_name, *lease_ns;    /* NULL: corral-controller, kube-system */
    int64_t lease_ms, renew_ms, retry_ms; /* 0: 15 s, 10 s, 2 s */
} corral_controller_opts_t;

/* The controller names corral_controller_opts_t.controllers takes. */
enum {
    CORRAL_CTL_JOB = 1 << 0,
    CORRAL_CTL_QUEUE = 1 << 1,
    CORRAL_CTL_NODELIFECYCLE = 1 << 2,
    CORRAL_CTL_GC = 1 << 3,
    CORRAL_CTL_USAGE = 1 << 4,
    CORRAL_CTL_ISVC = 1 << 5,
    CORRAL_CTL_ALL = (1 << 6) - 1,
};
/* Parse a --controllers value into a CORRAL_CTL_* mask. Returns 0, or
 * CORRAL_EINVAL with a message naming the known controllers in err. */
int corral_controller_parse_list(const char *spec, unsigned *mask, char *err, size_t errlen);

/*
 * Run until *stop becomes non-zero (set it from a signal-handling thread,
 * then call corral_controller_wake). Returns 0 on a clean stop, or a
 * negative code with a message in err when the informers cannot start.
 */
typedef struct corral_controller corral_controller_t;

int corral_controller_new(const corral_controller_opts_t *o, corral_controller_t **out, char *err,
                          size_t errlen);
int corral_controller_run(corral_controller_t *c, const volatile int *stop);
/* Make a waiting corral_controller_run look at its stop flag now (any thread). */
void corral_controller_wake(corral_controller_t *c);
void corral_controller_free(corral_controller_t *c);

#endif
