/*
 * The embedded API server: the subset of the Kubernetes REST API that
 * Corral's own components, kubectl and the Python client use, served over
 * HTTP/1.1 from a few libevent loops, on the SQLite store of store.h.
 * docs/apiserver.md says exactly what is served and what differs from
 * kube-apiserver; docs/api.md lists the routes (generated from the route
 * table by corral_apiserver_print_routes).
 *
 * Life cycle: corral_apiserver_new (opens the store, binds the socket,
 * creates the default namespaces), corral_apiserver_start (threads),
 * corral_apiserver_stop (from any thread), corral_apiserver_free.
 */
#ifndef CORRAL_APISERVER_H
#define CORRAL_APISERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "corral/store.h"

#define CORRAL_APISERVER_MAX_BODY ((size_t)3 << 20) /* 3 MiB, as kube-apiserver */

typedef struct corral_apiserver corral_apiserver_t;

typedef struct corral_apiserver_opts {
    const char *data_dir; /* required */
    const char *listen;   /* "HOST:PORT" (default 127.0.0.1:6443); port 0 picks one */
    int threads;          /* event loops; 0: one per CPU, at most 4 */
    corral_store_opts_t store;
    int bookmark_ms;     /* interval of watch bookmarks (default 60000) */
    size_t watch_buffer; /* bytes queued to one watcher before it is paused (default 4 MiB) */
    bool log_requests;   /* one line per request on stderr (never bodies) */
    /* How long a watch at a resourceVersion the store has not reached waits
     * for it before its 504 "Too large resource version" (default 3000). */
    int future_rv_wait_ms;
    /* kube-apiserver's static token file (token,user,uid,"group1,group2"):
     * with it every request is authenticated and authorized by RBAC
     * (docs/apiserver.md, "Security"); NULL: everything is allowed. */
    const char *token_auth_file;
    /* HTTPS: a PEM certificate (chain) and its private key; both or neither. */
    const char *tls_cert_file;
    const char *tls_key_file;
    /* The built-in metrics-server's scrape period of the node agents'
     * /metrics/resource (default 15000); negative: no scrapes. */
    int metrics_resolution_ms;
    /* Behave as kube-apiserver for every call Corral's components make:
     * each Corral-only shortcut is off (docs/apiserver.md, "Strict mode"). */
    bool strict;
} corral_apiserver_opts_t;

/* Open the store in opts->data_dir, load the token file and the TLS
 * certificate, bind the listening socket and bootstrap the built-in
 * objects. Returns 0, or a negative code with a message in err. */
int corral_apiserver_new(const corral_apiserver_opts_t *opts, corral_apiserver_t **out, char *err,
                         size_t errlen);
/* The TCP port actually bound (useful with port 0). */
int corral_apiserver_port(const corral_apiserver_t *s);
/* Start serving on the loop threads; returns at once. */
int corral_apiserver_start(corral_apiserver_t *s);
/* Ask every loop to stop (any thread, idempotent); corral_apiserver_wait
 * joins them. */
void corral_apiserver_stop(corral_apiserver_t *s);
void corral_apiserver_wait(corral_apiserver_t *s);
/* Stop if running, close the store, free. NULL is fine. */
void corral_apiserver_free(corral_apiserver_t *s);
/* The server's store (for tests and tools; owned by the server). */
corral_store_t *corral_apiserver_store(corral_apiserver_t *s);

#ifdef CORRAL_TEST_HOOKS
/* Test builds only: the loop whose thread (start) or listener (new) fails
 * as if out of resources; -1 (the default): none. */
extern int corral_apiserver_test_fail_thread;
extern int corral_apiserver_test_fail_listener;
#endif

/* Write the route table and the resource table as Markdown (docs/api.md). */
void corral_apiserver_print_routes(FILE *fp);

#endif
