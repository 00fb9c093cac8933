/*
 * The node agent's container log server (internal to the agent module): a
 * small HTTP server on its own thread that answers what kubelet's
 * /containerLogs endpoint answers, from the files the agent's runtime
 * writes: ROOT/logs/<ns>_<pod>_<uid>/<container>/<N>.log, N being the
 * restart count, with <N>.exit (the decimal exit code) once that instance
 * ended. The API server's pods/log subresource proxies to it.
 *
 *   GET /containerLogs/{ns}/{pod}/{container}?follow=&tailLines=&previous=
 *       &limitBytes=&timestamps=&sinceSeconds=
 *
 * Answers text/plain with Connection: close (the body ends when the
 * connection does), or a metav1.Status JSON body for errors (400 for a
 * missing previous instance, 404 when the container has no logs).
 * timestamps and sinceSeconds are accepted and ignored: the files carry no
 * per-line times.
 */
#ifndef CORRAL_AGENT_LOGSERVER_H
#define CORRAL_AGENT_LOGSERVER_H

#include <stdbool.h>
#include <stddef.h>

#include "corral/buf.h"

/* Concurrent connections one server serves; more are answered 503. */
#define CORRAL_AGENT_LOG_MAX_CONNS 256

typedef struct corral_agent_logserver corral_agent_logserver_t;

/*
 * Pages besides the logs (the agent's /metrics, /metrics/resource,
 * /healthz): for GET path (query removed) on a listener with context ctx,
 * append the body to out, set *ctype (NULL: the Prometheus text type) and
 * return 0; CORRAL_ENOENT when there is no such page. Runs on the server's
 * thread.
 */
typedef int (*corral_agent_page_fn)(void *ctx, const char *path, corral_buf_t *out,
                                    const char **ctype);

/* A server not yet listening: root (NULL: no logs served) and pages (may be NULL). */
corral_agent_logserver_t *corral_agent_logserver_new(const char *root, corral_agent_page_fn pages);
/* One more address to serve, with its pages' context; logs: whether it
 * serves /containerLogs too. Before run. */
int corral_agent_logserver_listen(corral_agent_logserver_t *s, const char *listen, void *ctx,
                                  bool logs, int *port_out, char *err, size_t errlen);
/* Start the thread that serves every listener (one poll loop). */
int corral_agent_logserver_run(corral_agent_logserver_t *s, char *err, size_t errlen);

/*
 * Serve ROOT's logs on listen ("HOST:PORT", a numeric address; port 0
 * picks a free one, returned in *port_out when non-NULL). Starts the
 * server's thread. Returns 0 and *out, or a negative CORRAL_E* code with a
 * message in err.
 */
int corral_agent_logserver_start(const char *root, const char *listen, int *port_out,
                                 corral_agent_logserver_t **out, char *err, size_t errlen);

/* Stop the thread, close every connection and free s (NULL is fine). */
void corral_agent_logserver_stop(corral_agent_logserver_t *s);

#endif
