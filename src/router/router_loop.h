/*
 * The router's shared state between its files (router.c: setup, informers,
 * metrics; proxy.c: the event loop). Internal to src/router.
 */
#ifndef CORRAL_ROUTER_LOOP_H
#define CORRAL_ROUTER_LOOP_H

#include <pthread.h>
#include <stdint.h>
#include <sys/socket.h>

#include "corral/hmap.h"
#include "corral/informer.h"
#include "corral/metrics.h"
#include "corral/router.h"
#include "router/router_int.h"

typedef struct corral__cconn corral__cconn_t;
typedef struct corral__bconn corral__bconn_t;

#define CORRAL__MAX_CODES 16

/* The loop's state of one revision, kept across route tables. */
typedef struct corral__rev_st {
    char *key; /* "NS/revision" */
    char *ns, *svc, *rev;
    int64_t cw; /* smooth weighted round robin weight */
    size_t rr;  /* rotation for ties among pods */
    uint32_t inflight, queued;
    uint64_t arrivals, retries, overflows, timeouts;
    double conc_sum; /* request-seconds up to conc_last_ns */
    int64_t conc_last_ns;
    struct {
        int code;
        uint64_t n;
    } codes[CORRAL__MAX_CODES];
    size_t ncodes;
    corral__cconn_t *qhead, *qtail;
    const corral__rt_rev_t *cur; /* in the current table; NULL when gone */
    int64_t next_probe_ns;
    uint64_t gen;
} corral__rev_st_t;

/* The loop's state of one pod. */
typedef struct corral__pod_st {
    char *key; /* "NS/pod" */
    char *ns, *name;
    struct sockaddr_storage sa;
    socklen_t salen;
    char addr[64]; /* "ip:port" for messages */
    uint32_t outstanding;
    corral__bconn_t *idle; /* kept-alive connections, doubly linked */
    size_t nidle;
    bool probed_ok;         /* a probe connected while it was not yet Ready */
    corral__bconn_t *probe; /* probe in progress */
    int64_t down_until_ns;  /* a connect failed: avoided until then */
    uint64_t gen;
} corral__pod_st_t;

struct corral_router {
    corral_router_opts_t o;
    int lfd, port;
    int epfd, evfd;
    volatile int stop;
    /* route tables: the builder publishes to pending, the loop takes it */
    pthread_mutex_t tmu;
    corral__rt_table_t *pending;
    corral__rt_table_t *table; /* the loop's */
    uint64_t gen;
    /* loop state; arrays mutated under smu (the metrics thread reads them) */
    pthread_mutex_t smu;
    corral__rev_st_t **revs;
    size_t nrevs, caprevs;
    corral_hmap_t rev_ix;
    corral__pod_st_t **pods;
    size_t npods, cappods;
    corral_hmap_t pod_ix;
    uint64_t unrouted[6]; /* 400, 404, 408, 413/414/431, 501/505, 503 */
    /* connections */
    corral__cconn_t *conns;  /* all client connections */
    corral__cconn_t *dead_c; /* closed during a batch of events, freed after it */
    corral__bconn_t *dead_b;
    size_t nconns;
    bool accepting;
    int64_t next_sweep_ns;
    /* metrics */
    corral_metrics_t *m;
    corral_metrics_server_t *ms;
    int mport;
    corral_metric_t *m_arrivals, *m_conc, *m_inflight, *m_queued, *m_pod_inflight, *m_requests,
        *m_duration, *m_retries, *m_overflows, *m_timeouts, *m_unrouted, *m_conns;
    /* informers */
    corral_evq_t *q;
    corral_informer_t *inf[2];
    pthread_t builder;
    bool builder_started;
    volatile int builder_stop;
};

/* Hand a new table to the loop (any thread; takes ownership). */
void corral__router_publish(corral_router_t *r, corral__rt_table_t *t);
/* The event loop (proxy.c). */
int corral__router_loop(corral_router_t *r);
/* Free the loop's connections and state (proxy.c). */
void corral__router_loop_free(corral_router_t *r);
/* The exact concurrency integral of rs up to now (under smu). */
double corral__rev_conc(const corral__rev_st_t *rs, int64_t now_ns);
int64_t corral__now_ns(void);

#endif
