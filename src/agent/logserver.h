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

#include <stddef.h>

/* Concurrent connections one server serves; more are answered 503. */
#define CORRAL_AGENT_LOG_MAX_CONNS 256

typedef struct corral_agent_logserver corral_agent_logserver_t;

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
