/*
 * The autoscaler's collectors (ascollect.c): bounded HTTP GETs and the
 * parsers of what they fetch: the router's /metrics (per-revision counters
 * and queue, per-pod in-flight requests), the agents' DCGM text through the
 * API server's node proxy (GPU utilization by pod), a replica's own
 * /metrics (vLLM's queue), and a Prometheus /api/v1/query answer. The
 * parsers are pure; the autoscaler (autoscale.c) runs them on its thread.
 */
#ifndef CORRAL_CONTROLLER_ASCOLLECT_H
#define CORRAL_CONTROLLER_ASCOLLECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "corral/buf.h"
#include "corral/hmap.h"
#include "corral/metrics.h"

#define CORRAL__ASC_MAX_BODY  ((size_t)8 << 20) /* a /metrics page */
#define CORRAL__ASC_MAX_QUERY ((size_t)1 << 20) /* a Prometheus answer */
#define CORRAL__ASC_MAX_ROWS  16384             /* series kept from one scrape */
#define CORRAL__ASC_NVAL      4

/* Values by key ("namespace/name"), from one scrape. */
typedef struct corral__asc_row {
    char *key;
    double v[CORRAL__ASC_NVAL];
} corral__asc_row_t;

typedef struct corral__asc_table {
    corral__asc_row_t *rows;
    size_t n, cap, max;
    corral_hmap_t idx;
    bool over; /* rows dropped at max */
} corral__asc_table_t;

void corral__asc_table_init(corral__asc_table_t *t, size_t max);
void corral__asc_table_fini(corral__asc_table_t *t);
void corral__asc_table_reset(corral__asc_table_t *t);
/* The row of ns/name, created zeroed; NULL when the table is full. */
double *corral__asc_table_at(corral__asc_table_t *t, const char *ns, const char *name);
const double *corral__asc_table_get(const corral__asc_table_t *t, const char *ns, const char *name);

/* Columns of the router's revision rows. */
enum { CORRAL__ASC_ARRIVALS, CORRAL__ASC_CONC_SECONDS, CORRAL__ASC_QUEUED, CORRAL__ASC_IN_FLIGHT };

/* The router's /metrics: adds into revs (namespace/revision: the columns
 * above) and pods (namespace/pod: [0] in-flight requests). Returns the
 * number of samples or a negative code with err. */
int corral__asc_parse_router(const char *text, size_t len, corral__asc_table_t *revs,
                             corral__asc_table_t *pods, char *err, size_t errlen);
/* An agent's /metrics: DCGM_FI_DEV_GPU_UTIL of GPUs held by a pod, into
 * pods (namespace/pod: [0] sum of percents, [1] GPUs). */
int corral__asc_parse_gpu(const char *text, size_t len, corral__asc_table_t *pods, char *err,
                          size_t errlen);
/* A replica's /metrics: the sum of every series of the given names. */
int corral__asc_parse_pod(const char *text, size_t len, const char *const *names, size_t nnames,
                          double *sum, char *err, size_t errlen);
/* A Prometheus /api/v1/query answer: the value of a scalar, or the sum of
 * a vector's samples (an empty vector is 0). */
int corral__asc_parse_prom(const char *text, size_t len, double *value, char *err, size_t errlen);

/* A GET of an http:// URL with libcurl: at most max bytes within
 * timeout_ms; a non-2xx status is an error. curl: a CURL * kept between
 * calls (created when *curl is NULL; curl_easy_cleanup it at the end). */
int corral__asc_http_get(void **curl, const char *url, size_t max, long timeout_ms,
                         corral_buf_t *out, char *err, size_t errlen);

/* "HOST:PORT", "http://HOST:PORT" or a full URL, into a URL with a path
 * (path added when the input has none). */
void corral__asc_url(const char *in, const char *path, char *out, size_t len);

#endif
