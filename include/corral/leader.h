/*
 * Leader election with a coordination.k8s.io/v1 Lease, as client-go's
 * leaderelection package does it, so that of several replicas of a component
 * (the scheduler, the controllers) exactly one acts at a time.
 *
 * A candidate takes the Lease when it is free (no holder) or expired
 * (renewTime + leaseDurationSeconds < now), writing holderIdentity,
 * acquireTime, renewTime and leaseTransitions + 1; the holder renews it every
 * retry period; all writes are compare-and-swap on resourceVersion (a 409
 * means someone else wrote first: re-read). A leader that has not renewed
 * within renew_deadline stops being leader (it cannot know that nobody else
 * took over) and does not become leader again: *lost is set and the owner is
 * expected to exit (kube-scheduler exits; its supervisor restarts it).
 *
 * Time: expiry is judged against this process's clock on renewTime as
 * written by the holder (client-go judges by when it last saw the record
 * change; both assume clocks roughly in step, as one machine's are).
 */
#ifndef CORRAL_LEADER_H
#define CORRAL_LEADER_H

#include <stdbool.h>
#include <stdint.h>

#include "corral/client.h"

typedef struct corral_leader corral_leader_t;

typedef struct corral_leader_opts {
    const char *name;     /* Lease name, e.g. "corral-scheduler" */
    const char *ns;       /* its namespace, e.g. "kube-system" */
    const char *identity; /* holderIdentity; NULL: hostname_pid_random */
    int64_t lease_ms;     /* leaseDurationSeconds (rounded up to seconds); 0: 15000 */
    int64_t renew_ms;     /* renew deadline; 0: 10000 */
    int64_t retry_ms;     /* retry period; 0: 2000 */
    void (*log)(void *ctx, const char *msg); /* transitions; may be NULL */
    void *log_ctx;
} corral_leader_opts_t;

/* Start campaigning on a thread with its own connection from cfg (copied).
 * Returns 0 or a negative code with a message in err. */
int corral_leader_start(const corral_client_config_t *cfg, const corral_leader_opts_t *o,
                        corral_leader_t **out, char *err, size_t errlen);
/* Is this process the leader now? Any thread. */
bool corral_leader_is_leader(const corral_leader_t *l);
/* Was leadership held and then lost (the owner should exit)? */
bool corral_leader_lost(const corral_leader_t *l);
/* The identity written as holderIdentity. */
const char *corral_leader_identity(const corral_leader_t *l);
/* Stop; when release and leading, clear the Lease (holderIdentity "" and
 * leaseDurationSeconds 1) so that another candidate takes over at once.
 * Frees l (NULL is fine). */
void corral_leader_stop(corral_leader_t *l, bool release);

#endif
