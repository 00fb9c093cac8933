/*
 * The inference router (`corral router`): an HTTP/1.1 reverse proxy in front
 * of every InferenceService (docs/inference.md, "The router").
 *
 * Requests name a service by Host (`S.NS[.anything][:port]`, with `latest-`
 * and `prev-` tag prefixes) or by path (`/serving/NS/S/<rest>`, the prefix
 * stripped); they go to the revisions of the service's
 * `status.components.predictor.traffic[]` by a smooth weighted round robin,
 * or to one revision by tag (`Knative-Serving-Tag`) or name
 * (`Corral-Revision`), and within a revision to the ready pod with the
 * fewest outstanding requests. A revision with no ready pod holds requests
 * (bounded queue, timeout) and probes its starting pods.
 *
 * Threads: one event loop (epoll) does every byte of proxying; informers on
 * InferenceServices and pods and the thread that builds route tables from
 * them; the metrics server's thread. corral_router_run runs the loop on the
 * caller's thread until corral_router_stop (any thread, or a signal handler).
 */
#ifndef CORRAL_ROUTER_H
#define CORRAL_ROUTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "corral/client.h"

typedef struct corral_router_opts {
    const corral_client_config_t *cfg; /* the API server (borrowed); NULL: no informers (tests) */
    const char *listen;                /* "HOST:PORT"; default 127.0.0.1:8080 */
    const char *metrics_listen;        /* default 127.0.0.1:9091; "off": none */
    int max_conns;                     /* client connections at once; 0: 10000 */
    int queue_limit;                   /* requests held per revision at zero; 0: 1000 */
    int64_t queue_timeout_ns;          /* how long one waits; 0: 5 minutes */
    int64_t idle_timeout_ns;           /* keep-alive client idle; 0: 75 s */
    int64_t header_timeout_ns;         /* a request head must arrive within; 0: 30 s */
    int64_t connect_timeout_ns;        /* backend connect; 0: 5 s */
    int64_t probe_period_ns;           /* probing starting pods; 0: 50 ms */
    int max_idle_per_pod;              /* kept-alive backend connections per pod; 0: 64 */
    FILE *log;                         /* log lines; NULL: none */
} corral_router_opts_t;

typedef struct corral_router corral_router_t;

/* Listen, start the metrics server and the informers. Returns 0 with *out,
 * or a negative code with a message in err. */
int corral_router_new(const corral_router_opts_t *o, corral_router_t **out, char *err,
                      size_t errlen);
/* The ports bound (useful with port 0). */
int corral_router_port(const corral_router_t *r);
int corral_router_metrics_port(const corral_router_t *r);
/* Run the event loop until corral_router_stop. Returns 0. */
int corral_router_run(corral_router_t *r);
/* Make corral_router_run return (any thread; async-signal-safe). */
void corral_router_stop(corral_router_t *r);
/* Stop everything and free (NULL is fine); call after run returned. */
void corral_router_free(corral_router_t *r);

#endif
