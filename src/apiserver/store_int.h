/*
 * Internals of the store shared by its files: store.c (open, schema, reads),
 * store_writer.c (the writer thread and group commit) and store_ring.c (the
 * in-memory ring of recent events).
 */
#ifndef CORRAL_STORE_INT_H
#define CORRAL_STORE_INT_H

#include <pthread.h>
#include <sqlite3.h>

#include "corral/store.h"

#define CORRAL__MAX_SUBSCRIBERS 32

/* An internal op kind: compact the log, keeping expect_rev revisions. */
#define CORRAL__STORE_COMPACT ((corral_store_op_kind_t)100)

typedef struct corral__ring {
    pthread_mutex_t mu;
    corral_store_event_t **ev; /* ev[rev % cap] for first <= rev < next */
    size_t cap;
    int64_t first, next;
    size_t bytes, max_bytes;
} corral__ring_t;

typedef struct corral__sub {
    void (*fn)(void *ctx);
    void *ctx;
} corral__sub_t;

struct corral_store {
    char *dir;
    char *path;
    int lock_fd;
    corral_store_opts_t opts;
    sqlite3 *db; /* the writer's connection */
    int schema;

    /* Committed revision and compaction point; written by the writer thread,
     * read anywhere (atomics). */
    int64_t rev;
    int64_t compacted;

    pthread_mutex_t mu; /* guards the queue, stopping, fault and stats */
    pthread_cond_t cv;
    corral_store_op_t *head, *tail;
    bool stopping;
    bool hold; /* tests: keep queued ops queued */
    pthread_t writer;
    bool writer_started;
    corral_store_fault_t fault;
    int fault_after;
    corral_store_stats_t stats;
    int wal_frames;                           /* from the WAL hook, writer thread only */
    struct corral_metric *m_commit, *m_batch; /* atomics: corral_store_set_metrics */

    corral__ring_t ring;
    corral__sub_t subs[CORRAL__MAX_SUBSCRIBERS];
    size_t nsubs;

    /* Writer statements. */
    sqlite3_stmt *st_get, *st_insert, *st_update, *st_delete, *st_log, *st_meta;
};

/* Open a connection to s->path with Corral's pragmas. */
int corral__store_connect(corral_store_t *s, sqlite3 **out, bool writer, char *err, size_t errlen);

/* Writer thread (store_writer.c). */
int corral__writer_start(corral_store_t *s, char *err, size_t errlen);
void corral__writer_stop(corral_store_t *s);

/* Ring (store_ring.c). */
void corral__ring_init(corral__ring_t *r, size_t cap, size_t max_bytes, int64_t next);
void corral__ring_fini(corral__ring_t *r);
void corral__ring_push(corral__ring_t *r, corral_store_event_t *ev);
corral_store_event_t *corral__event_new(const corral_store_op_t *op, corral_store_ev_type_t type,
                                        int64_t rev, const char *json, size_t json_len);

#endif
