/*
 * Prometheus metrics: a registry of metric families (counters, gauges,
 * histograms) with labels, rendered in the Prometheus text exposition
 * format 0.0.4, and a small HTTP server thread that serves a registry (and
 * other pages) for the components that have no HTTP server of their own
 * (scheduler, controller, agent). The API server renders a registry through
 * its own HTTP stack.
 *
 * Threads: every call on a registry or family is safe from any thread (one
 * mutex per registry; updates are a hash lookup and an add). Families are
 * created once at start and live as long as their registry.
 *
 * Memory stays bounded: a family keeps at most CORRAL_METRICS_MAX_SERIES
 * label combinations (series); an update that would create one more is
 * dropped and counted in corral_metrics_dropped_series_total, so a label a
 * client can influence cannot grow a process without limit. Gauges that
 * describe a snapshot (pending pods by queue and reason) are rebuilt with
 * corral_metric_clear() followed by sets, so series for queues that went
 * away disappear.
 *
 * Names follow Prometheus conventions: base units (seconds, bytes), counters
 * end in _total. Names and label names are checked when a family is created
 * ([a-zA-Z_:][a-zA-Z0-9_:]*, label names not starting with "__"); label
 * values are escaped when rendered (\\, \", \n).
 */
#ifndef CORRAL_METRICS_H
#define CORRAL_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "corral/buf.h"

#define CORRAL_METRICS_MAX_LABELS  8
#define CORRAL_METRICS_MAX_BUCKETS 32
#define CORRAL_METRICS_MAX_SERIES  10000

typedef enum corral_metric_type {
    CORRAL_METRIC_COUNTER,
    CORRAL_METRIC_GAUGE,
    CORRAL_METRIC_HISTOGRAM,
} corral_metric_type_t;

typedef struct corral_metrics corral_metrics_t; /* a registry */
typedef struct corral_metric corral_metric_t;   /* a family: name, help, type, labels */

corral_metrics_t *corral_metrics_new(void);
void corral_metrics_free(corral_metrics_t *m);

/*
 * Create a family. labels: NULL or a NULL-terminated list of at most
 * CORRAL_METRICS_MAX_LABELS label names. Histograms take their upper bounds
 * (strictly increasing, at most CORRAL_METRICS_MAX_BUCKETS; +Inf is
 * implied). A name already registered, or an invalid name, is a programming
 * error: it aborts with a message.
 */
corral_metric_t *corral_metrics_counter(corral_metrics_t *m, const char *name, const char *help,
                                        const char *const *labels);
corral_metric_t *corral_metrics_gauge(corral_metrics_t *m, const char *name, const char *help,
                                      const char *const *labels);
corral_metric_t *corral_metrics_histogram(corral_metrics_t *m, const char *name, const char *help,
                                          const char *const *labels, const double *bounds,
                                          size_t nbounds);

/* Bucket bounds from start, multiplied by factor, count of them (count <=
 * CORRAL_METRICS_MAX_BUCKETS), into out; returns count. */
size_t corral_metrics_exp_buckets(double start, double factor, size_t count, double *out);

/*
 * Updates. values: the label values in the family's label order (NULL when
 * the family has no labels); a NULL value is the empty string.
 * add: counters (v >= 0) and gauges; set: gauges (and counters mirrored from
 * a source that counts itself); observe: histograms.
 */
void corral_metric_add(corral_metric_t *f, const char *const *values, double v);
void corral_metric_set(corral_metric_t *f, const char *const *values, double v);
void corral_metric_observe(corral_metric_t *f, const char *const *values, double v);
/* Remove every series of the family. */
void corral_metric_clear(corral_metric_t *f);
/*
 * Rebuild a snapshot gauge (pending pods by queue and reason) without a
 * scrape ever seeing it empty: after begin, every add or set marks its
 * series as current; end removes the series none touched. A scrape in
 * between sees the new values of the series set so far and the old ones of
 * the rest.
 */
void corral_metric_refill_begin(corral_metric_t *f);
void corral_metric_refill_end(corral_metric_t *f);
/* The value of one series (tests; histograms: the count). false when absent. */
bool corral_metric_get(corral_metric_t *f, const char *const *values, double *out);

/* A callback run (without the registry lock held) at the start of every
 * render, to refresh gauges from the component's state. At most 8. */
typedef void (*corral_metrics_collect_fn)(corral_metrics_t *m, void *arg);
void corral_metrics_on_collect(corral_metrics_t *m, corral_metrics_collect_fn fn, void *arg);

/* Append the whole registry in text format 0.0.4 (HELP, TYPE, series in
 * creation order, series in insertion order). */
void corral_metrics_render(corral_metrics_t *m, corral_buf_t *out);

/* The Content-Type of the text format. */
#define CORRAL_METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* --- a small HTTP server ------------------------------------------------------------ */

/*
 * A page of a metrics server: path (exact match, query string ignored) and a
 * function that appends the body and returns its Content-Type (NULL: the
 * metrics text type). It runs on the server's thread.
 */
typedef const char *(*corral_metrics_page_fn)(corral_buf_t *out, void *arg);

typedef struct corral_metrics_page {
    const char *path;
    corral_metrics_page_fn fn;
    void *arg;
} corral_metrics_page_t;

typedef struct corral_metrics_server corral_metrics_server_t;

/*
 * Serve on listen ("HOST:PORT", ":PORT" for every address, port 0: any free
 * one, written to *port_out when not NULL): GET /metrics renders m (when m is
 * not NULL), GET /healthz answers "ok", and each of pages; anything else is
 * 404, another method 405. One thread, poll(2), at most 64 connections,
 * request heads of at most 8 KiB read within 10 s, keep-alive. Returns 0
 * with *out, or a negative code with a message in err.
 */
int corral_metrics_serve(const char *listen, corral_metrics_t *m,
                         const corral_metrics_page_t *pages, size_t npages, int *port_out,
                         corral_metrics_server_t **out, char *err, size_t errlen);
/* Stop the thread and close every connection. NULL is fine. */
void corral_metrics_server_stop(corral_metrics_server_t *s);

#endif
