/*
 * The live scheduler (`corral scheduler`): informers on the API server feed
 * the engine one object at a time; each cycle's decisions are written back
 * (pods/binding with the corral.dev/gpu-ids annotation, the eviction API,
 * PodScheduled=False with the reason, Scheduled/FailedScheduling/Preempted
 * events, PodGroup phase and conditions) by a pool of writer threads; a
 * Lease elects one active scheduler among replicas. docs/scheduler.md.
 */
#ifndef CORRAL_SCHEDULER_H
#define CORRAL_SCHEDULER_H

#include <stdbool.h>
#include <stdint.h>

#include "corral/client.h"

typedef struct corral_scheduler_opts {
    const corral_client_config_t *client; /* borrowed */
    const char *const *names;             /* schedulerName values served */
    size_t nnames;
    const char *config_file; /* a SchedulerConfiguration file, or NULL: from the API */
    const char *config_name; /* the SchedulerConfiguration object read from the API */
    bool leader_elect;
    const char *lease_name, *lease_ns;
    int64_t lease_ms, renew_ms, retry_ms;
    int binders;                /* writer threads */
    int64_t event_interval_ms;  /* at most one FailedScheduling write per pod per this */
    int verbosity;              /* --v */
    const char *metrics_listen; /* HOST:PORT of /metrics and /healthz; NULL, "" or "off": none */
    const volatile int *stop;   /* set (by a signal handler) to stop; borrowed */
} corral_scheduler_opts_t;

/* What the scheduler has done, for logs now and metrics later. */
typedef struct corral_scheduler_stats {
    uint64_t cycles, cycle_ns_total, cycle_ns_max;
    uint64_t binds, bind_failures;
    uint64_t evictions, eviction_failures;
    uint64_t status_writes, events, write_failures;
    uint64_t objects_seen;
} corral_scheduler_stats_t;

/* Run until *stop or leadership is lost. Returns 0 on a clean stop,
 * CORRAL_EIO when the lease was lost (the caller exits non-zero), or
 * another negative code with a message in err. */
int corral_scheduler_run(const corral_scheduler_opts_t *o, corral_scheduler_stats_t *stats,
                         char *err, size_t errlen);

#endif
