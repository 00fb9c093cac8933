/*
 * The API server's object store: Kubernetes objects as JSON in SQLite (WAL
 * mode), keyed by resource, namespace and name, with one global revision
 * counter. Every committed write takes the next revision, which is the
 * object's resourceVersion, and appends an entry to a revision log; watches
 * read that log (recent entries from an in-memory ring, older ones from disk)
 * until it is compacted, after which a watch from an older revision gets
 * CORRAL_STORE_ECOMPACTED (the API's 410 Expired).
 *
 * Writes are compare-and-swap operations submitted to one writer thread,
 * which groups whatever is queued into one transaction (group commit) and
 * completes each operation only after that transaction is durable (see
 * docs/apiserver.md for the contract). Reads use per-thread reader handles
 * and never wait for the writer.
 *
 * Thread safety: corral_store_submit, corral_store_ring_* and
 * corral_store_revision may be called from any thread; a reader handle
 * belongs to one thread at a time.
 */
#ifndef CORRAL_STORE_H
#define CORRAL_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "corral/arena.h"
#include "corral/common.h"
#include "corral/val.h"

/* A watch or continue from a revision older than the log keeps. */
#define CORRAL_STORE_ECOMPACTED CORRAL_ERANGE

/* The schema version this build writes (PRAGMA user_version). */
#define CORRAL_STORE_SCHEMA 2

typedef struct corral_store corral_store_t;
typedef struct corral_store_reader corral_store_reader_t;

typedef struct corral_store_opts {
    /* Revisions kept in the on-disk log for watches (default 100000). */
    int64_t history;
    /* In-memory ring of recent events: at most this many (default 10000)
     * and this many bytes of JSON (default 64 MiB). */
    size_t ring_events;
    size_t ring_bytes;
    /* Most operations in one transaction (default 512). */
    size_t max_batch;
    /* synchronous=FULL (fsync on every commit, the default) when false;
     * true selects NORMAL, which survives process crashes but not power loss
     * (benchmarks only; see docs/apiserver.md). */
    bool no_fsync;
    /* Build the schema only up to this migration (tests of migrations). 0: all. */
    int schema_upto;
} corral_store_opts_t;

/* Open (creating when needed) DIR/corral.db, run pending migrations, start
 * the writer thread. opts may be NULL. On failure returns CORRAL_EIO (or
 * CORRAL_EUNSUPPORTED for a database from a newer Corral) with a message in
 * err. */
int corral_store_open(const char *dir, const corral_store_opts_t *opts, corral_store_t **out,
                      char *err, size_t errlen);
/* Stop the writer (after completing what is queued) and close. NULL is fine. */
void corral_store_close(corral_store_t *s);

/* Metrics of the group commit (metrics.h histograms, either may be NULL):
 * the time of each transaction's COMMIT and its number of operations.
 * Observed on the writer thread; the families must outlive the store or be
 * unset first. */
struct corral_metric;
void corral_store_set_metrics(corral_store_t *s, struct corral_metric *commit_seconds,
                              struct corral_metric *batch_ops);

/* The latest committed revision (0 for an empty store). */
int64_t corral_store_revision(corral_store_t *s);
/* The newest revision removed from the log (watches must start after it). */
int64_t corral_store_compacted(corral_store_t *s);
/* The schema version of the open database. */
int corral_store_schema_version(corral_store_t *s);

/* --- writes ------------------------------------------------------------------ */

typedef enum corral_store_op_kind {
    CORRAL_STORE_CREATE = 1, /* fails with CORRAL_EEXIST when the key exists */
    CORRAL_STORE_UPDATE,     /* fails with ENOENT, or ECONFLICT when rev != expect_rev */
    CORRAL_STORE_DELETE,     /* same conditions as UPDATE */
} corral_store_op_kind_t;

typedef enum corral_store_ev_type {
    CORRAL_EV_ADDED = 1,
    CORRAL_EV_MODIFIED,
    CORRAL_EV_DELETED,
} corral_store_ev_type_t;

typedef struct corral_store_event corral_store_event_t;
typedef struct corral_store_op corral_store_op_t;

struct corral_store_op {
    corral_store_op_kind_t kind;
    const char *resource; /* storage key of the resource: "pods", "queues.scheduling.volcano.sh" */
    const char *ns;       /* "" for cluster-scoped objects */
    const char *name;
    int64_t expect_rev; /* UPDATE/DELETE: the revision read; 0 = unconditional */
    /* CREATE/UPDATE: the new object; DELETE: its last state. The writer sets
     * metadata.resourceVersion in it (allocating from arena), so nothing else
     * may touch obj or arena until done runs. */
    corral_val_t *obj;
    corral_arena_t *arena;
    /* Selector attributes of obj (see corral_store_attrs_*), copied. */
    const char *attrs;
    size_t attrs_len;
    /* UPDATE: the previous object as stored, and its attributes (for watches
     * whose selector it stops matching). May be NULL. Copied. */
    const char *prev_json;
    size_t prev_len;
    const char *prev_attrs;
    size_t prev_attrs_len;
    /* Results, valid in done: rc is 0, EEXIST, ENOENT, ECONFLICT or EIO; on
     * success rev is the new revision and ev the published event (JSON of
     * the stored object; the op holds one reference, dropped by
     * corral_store_op_release). */
    int rc;
    int64_t rev;
    corral_store_event_t *ev;
    /* Called on the writer thread once the outcome is durable (or failed). */
    void (*done)(corral_store_op_t *op);
    void *ctx;
    corral_store_op_t *next; /* queue link, owned by the store */
};

/* Queue op; done runs later on the writer thread. */
void corral_store_submit(corral_store_t *s, corral_store_op_t *op);
/* Submit and wait for the outcome; returns op->rc. */
int corral_store_write_sync(corral_store_t *s, corral_store_op_t *op);
/* Drop the op's reference to its event (NULL-safe; idempotent). */
void corral_store_op_release(corral_store_op_t *op);

/* --- selector attributes ------------------------------------------------------- */

/* Attributes are labels and field-selector values packed as NUL-separated
 * pairs ("lapp\0web\0fspec.nodeName\0n1\0"), small enough to keep next to
 * every object and event so selectors never need the JSON parsed. */
void corral_store_attrs_add(corral_buf_t *b, char tag, const char *key, const char *val);
/* The value of (tag, key) in attrs, or NULL. tag 'l' label, 'f' field. */
const char *corral_store_attrs_get(const char *attrs, size_t len, char tag, const char *key);

/* --- events (watch) ------------------------------------------------------------- */

struct corral_store_event {
    int64_t rev;
    corral_store_ev_type_t type;
    const char *resource, *ns, *name;
    const char *json; /* the object with metadata.resourceVersion = rev */
    size_t json_len;
    const char *attrs;
    size_t attrs_len;
    const char *prev_json; /* MODIFIED: the previous object (its own revision); else NULL */
    size_t prev_len;
    const char *prev_attrs;
    size_t prev_attrs_len;
    int refs; /* atomic */
};

void corral_store_event_ref(corral_store_event_t *ev);
void corral_store_event_unref(corral_store_event_t *ev);

/*
 * Copy references to up to max ring events with rev >= from into out (the
 * caller unrefs each). Sets *n. Returns 0, or CORRAL_STORE_ECOMPACTED when
 * from is older than the ring holds (read the disk log instead); *first gets
 * the oldest revision in the ring (when non-NULL).
 */
int corral_store_ring_get(corral_store_t *s, int64_t from, corral_store_event_t **out, size_t max,
                          size_t *n, int64_t *first);

/* fn(ctx) runs on the writer thread after each batch's events are in the
 * ring (keep it short: wake a loop). Up to 32 subscribers. Returns 0 or
 * CORRAL_ETOOBIG. */
int corral_store_subscribe(corral_store_t *s, void (*fn)(void *ctx), void *ctx);

/* --- reads --------------------------------------------------------------------- */

int corral_store_reader_open(corral_store_t *s, corral_store_reader_t **out);
void corral_store_reader_close(corral_store_reader_t *r);

typedef struct corral_store_row {
    const char *ns, *name;
    const char *json; /* borrowed: valid until the callback returns */
    size_t json_len;
    const char *attrs;
    size_t attrs_len;
    int64_t rev;
} corral_store_row_t;

/* Get one object: its JSON copied into arena a. Returns 0 or CORRAL_ENOENT. */
int corral_store_get(corral_store_reader_t *r, const char *resource, const char *ns,
                     const char *name, corral_arena_t *a, corral_store_row_t *out);

/*
 * List objects of resource (ns NULL: every namespace), ordered by namespace
 * and name, starting after (after_ns, after_name) when after_name is non-NULL.
 * fn returns 0 to continue, non-zero to stop. *rev gets the revision of the
 * snapshot the rows come from. Returns 0 or CORRAL_EIO.
 */
int corral_store_list(corral_store_reader_t *r, const char *resource, const char *ns,
                      const char *after_ns, const char *after_name,
                      int (*fn)(void *ctx, const corral_store_row_t *row), void *ctx, int64_t *rev);

/*
 * The same list read in steps: list_begin opens the read transaction (*rev
 * its revision); each list_next hands rows to fn until fn returns
 * CORRAL_STORE_PAUSE (returns 1: call again for the rows after that one),
 * another non-zero value or the last row (returns 0), or an error
 * (CORRAL_EIO); list_end ends the transaction. Every row comes from the one
 * snapshot of list_begin, whatever is written meanwhile. The reader serves
 * nothing else until list_end (list_begin again: CORRAL_EINVAL); keeping a
 * snapshot open holds back the WAL checkpoint, so finish promptly.
 */
#define CORRAL_STORE_PAUSE 2
int corral_store_list_begin(corral_store_reader_t *r, const char *resource, const char *ns,
                            const char *after_ns, const char *after_name, int64_t *rev);
int corral_store_list_next(corral_store_reader_t *r,
                           int (*fn)(void *ctx, const corral_store_row_t *row), void *ctx);
void corral_store_list_end(corral_store_reader_t *r);

/* Count objects of resource (ns NULL: all) — namespaces deletion, tests. */
int corral_store_count(corral_store_reader_t *r, const char *resource, const char *ns,
                       int64_t *count);

/* One entry of the on-disk log, as read back for a watch. */
typedef struct corral_store_logrow {
    int64_t rev;
    corral_store_ev_type_t type;
    const char *ns, *name;
    const char *json;
    size_t json_len;
    const char *attrs;
    size_t attrs_len;
    int64_t prev_rev; /* MODIFIED: the revision the object had before */
    const char *prev_attrs;
    size_t prev_attrs_len;
} corral_store_logrow_t;

/*
 * Read log entries of resource with from < rev <= upto (at most max), in
 * revision order. Returns 0, or CORRAL_STORE_ECOMPACTED when from is older
 * than the oldest revision kept. *last gets the last revision examined.
 */
int corral_store_log_scan(corral_store_reader_t *r, const char *resource, int64_t from,
                          int64_t upto, size_t max,
                          int (*fn)(void *ctx, const corral_store_logrow_t *row), void *ctx,
                          int64_t *last);

/* The JSON of an object at an older revision from the log (for a watch's
 * DELETED event when an object stops matching a selector). 0 or ENOENT. */
int corral_store_log_get(corral_store_reader_t *r, int64_t rev, corral_arena_t *a,
                         const char **json, size_t *len);

/* --- maintenance and failure injection ----------------------------------------- */

/* Remove log entries older than the newest `keep` revisions (the writer does
 * this on its own as the log grows past opts.history). Returns 0 or EIO. */
int corral_store_compact(corral_store_t *s, int64_t keep);

typedef enum corral_store_fault {
    CORRAL_STORE_FAULT_NONE = 0,
    CORRAL_STORE_FAULT_COMMIT,       /* the batch's COMMIT fails: every op gets EIO */
    CORRAL_STORE_FAULT_WRITE,        /* a row write fails mid-batch: the batch rolls back */
    CORRAL_STORE_FAULT_CRASH_BEFORE, /* _exit(99) with the batch written, before COMMIT */
    CORRAL_STORE_FAULT_CRASH_AFTER,  /* _exit(99) after COMMIT, before any op completes */
} corral_store_fault_t;

#ifdef CORRAL_TEST_HOOKS
/* Test builds only (the unit tests; not in libcorral.a nor the corral
 * binary). Arm fault for the batch after `after` more batches (0: the next
 * one). One fault at a time; it fires once. Also armed from the environment
 * at open: CORRAL_STORE_FAULT=commit|write|crash-before|crash-after[:AFTER]. */
void corral_store_inject(corral_store_t *s, corral_store_fault_t fault, int after);
#endif

/* Hold the writer (true): operations queue but no batch starts until it is
 * released (false). Lets a test put several operations in one batch. */
void corral_store_hold(corral_store_t *s, bool hold);

/* Counters for tests and benchmarks. */
typedef struct corral_store_stats {
    uint64_t batches; /* committed transactions */
    uint64_t ops;     /* operations completed */
    uint64_t max_batch_seen;
    uint64_t checkpoints;
} corral_store_stats_t;
void corral_store_get_stats(corral_store_t *s, corral_store_stats_t *out);

#endif
