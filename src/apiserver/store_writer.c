/*
 * The store's writer thread: group commit. Every write is a compare-and-swap
 * operation queued by any thread. The writer takes everything queued (up to
 * max_batch), applies each operation in one transaction, commits (with
 * synchronous=FULL that COMMIT fsyncs the WAL), and only then publishes the
 * batch's events to the ring and completes each operation. While one batch
 * is being made durable the next one queues up, so the cost of an fsync is
 * shared by every write that arrived meanwhile, with no timer.
 *
 * A failure of any SQL statement rolls the whole batch back and fails each of
 * its operations with CORRAL_EIO: nothing is half-written and nothing
 * unacknowledged is visible. Checkpoints and log compaction run between
 * batches, after the acknowledgements have gone out.
 */
#include <time.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "apiserver/store_int.h"
#include "corral/metrics.h"

#define CHECKPOINT_FRAMES 4000 /* ~16 MB of WAL */

static const char *const writer_sql[] = {
    "SELECT rev FROM objects WHERE resource = ?1 AND namespace = ?2 AND name = ?3",
    "INSERT INTO objects (resource, namespace, name, rev, data, attrs) VALUES (?1, ?2, ?3, ?4, "
    "?5, ?6)",
    "UPDATE objects SET rev = ?4, data = ?5, attrs = ?6 WHERE resource = ?1 AND namespace = ?2 "
    "AND name = ?3",
    "DELETE FROM objects WHERE resource = ?1 AND namespace = ?2 AND name = ?3",
    "INSERT INTO log (rev, type, resource, namespace, name, data, attrs, prev_rev, prev_attrs) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    "UPDATE meta SET value = ?1 WHERE key = 'revision'",
};

static int wal_hook(void *ctx, sqlite3 *db, const char *name, int frames)
{
    (void)db;
    (void)name;
    ((corral_store_t *)ctx)->wal_frames = frames;
    return SQLITE_OK;
}

static int prepare(corral_store_t *s, char *err, size_t errlen)
{
    sqlite3_stmt **st[] = {&s->st_get,    &s->st_insert, &s->st_update,
                           &s->st_delete, &s->st_log,    &s->st_meta};
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(st); i++) {
        if (sqlite3_prepare_v3(s->db, writer_sql[i], -1, SQLITE_PREPARE_PERSISTENT, st[i], NULL) !=
            SQLITE_OK) {
            if (err)
                snprintf(err, errlen, "sqlite: %s", sqlite3_errmsg(s->db));
            return CORRAL_EIO;
        }
    }
    sqlite3_wal_hook(s->db, wal_hook, s);
    return 0;
}

static bool exec_ok(sqlite3 *db, const char *sql)
{
    return sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK;
}

static void bind_key(sqlite3_stmt *st, const corral_store_op_t *op)
{
    sqlite3_bind_text(st, 1, op->resource, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, op->ns, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, op->name, -1, SQLITE_STATIC);
}

static bool step_reset(sqlite3_stmt *st)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return rc == SQLITE_DONE;
}

/* The current revision of op's key: 0 when absent, -1 on error. */
static int64_t current_rev(corral_store_t *s, const corral_store_op_t *op)
{
    bind_key(s->st_get, op);
    int rc = sqlite3_step(s->st_get);
    int64_t rev = rc == SQLITE_ROW    ? sqlite3_column_int64(s->st_get, 0)
                  : rc == SQLITE_DONE ? 0
                                      : -1;
    sqlite3_reset(s->st_get);
    sqlite3_clear_bindings(s->st_get);
    return rev;
}

typedef struct pending {
    corral_buf_t json;
    corral_store_ev_type_t type;
} pending_t;

static bool write_rows(corral_store_t *s, corral_store_op_t *op, pending_t *p, int64_t rev)
{
    sqlite3_stmt *st;
    if (op->kind == CORRAL_STORE_DELETE) {
        st = s->st_delete;
        bind_key(st, op);
    } else {
        st = op->kind == CORRAL_STORE_CREATE ? s->st_insert : s->st_update;
        bind_key(st, op);
        sqlite3_bind_int64(st, 4, rev);
        sqlite3_bind_text(st, 5, p->json.p, (int)p->json.len, SQLITE_STATIC);
        sqlite3_bind_blob(st, 6, op->attrs ? op->attrs : "", (int)op->attrs_len, SQLITE_STATIC);
    }
    if (!step_reset(st))
        return false;
    st = s->st_log;
    sqlite3_bind_int64(st, 1, rev);
    sqlite3_bind_int(st, 2, (int)p->type);
    sqlite3_bind_text(st, 3, op->resource, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, op->ns, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 5, op->name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 6, p->json.p, (int)p->json.len, SQLITE_STATIC);
    sqlite3_bind_blob(st, 7, op->attrs ? op->attrs : "", (int)op->attrs_len, SQLITE_STATIC);
    sqlite3_bind_int64(st, 8, op->kind == CORRAL_STORE_UPDATE ? op->expect_rev : 0);
    if (op->kind == CORRAL_STORE_UPDATE && op->prev_attrs)
        sqlite3_bind_blob(st, 9, op->prev_attrs, (int)op->prev_attrs_len, SQLITE_STATIC);
    return step_reset(st);
}

/* Apply one operation inside the batch. Returns false on an SQL error (the
 * batch must roll back); business outcomes go to op->rc. */
static bool apply(corral_store_t *s, corral_store_op_t *op, pending_t *p, int64_t *rev,
                  bool inject_write)
{
    int64_t cur = current_rev(s, op);
    if (cur < 0)
        return false;
    op->rc = 0;
    if (op->kind == CORRAL_STORE_CREATE && cur != 0)
        op->rc = CORRAL_EEXIST;
    else if (op->kind != CORRAL_STORE_CREATE && cur == 0)
        op->rc = CORRAL_ENOENT;
    else if (op->kind != CORRAL_STORE_CREATE && op->expect_rev && cur != op->expect_rev)
        op->rc = CORRAL_ECONFLICT;
    if (op->rc)
        return true;
    int64_t next = *rev + 1;
    char rv[24];
    snprintf(rv, sizeof(rv), "%lld", (long long)next);
    corral_val_t *meta = corral_val_ensure_map(op->arena, op->obj, "metadata");
    corral_val_set(op->arena, meta, "resourceVersion", corral_val_new_str(op->arena, rv));
    corral_buf_reset(&p->json);
    corral_val_to_json(op->obj, &p->json, false);
    p->type = op->kind == CORRAL_STORE_CREATE   ? CORRAL_EV_ADDED
              : op->kind == CORRAL_STORE_UPDATE ? CORRAL_EV_MODIFIED
                                                : CORRAL_EV_DELETED;
    if (inject_write || !write_rows(s, op, p, next))
        return false;
    op->rev = next;
    *rev = next;
    return true;
}

/* Which fault (if any) fires on this batch: never outside test builds. */
static corral_store_fault_t take_fault(corral_store_t *s)
{
    corral_store_fault_t f = CORRAL_STORE_FAULT_NONE;
#ifndef CORRAL_TEST_HOOKS
    (void)s;
    return f;
#endif
    pthread_mutex_lock(&s->mu);
    if (s->fault != CORRAL_STORE_FAULT_NONE) {
        if (s->fault_after == 0) {
            f = s->fault;
            s->fault = CORRAL_STORE_FAULT_NONE;
        } else {
            s->fault_after--;
        }
    }
    pthread_mutex_unlock(&s->mu);
    return f;
}

/* Run the batch's transaction. Returns true when it committed. */
static bool commit_batch(corral_store_t *s, corral_store_op_t **ops, size_t n, pending_t *p,
                         int64_t *rev)
{
    corral_store_fault_t fault = take_fault(s);
    if (!exec_ok(s->db, "BEGIN IMMEDIATE"))
        return false;
    bool ok = true;
    for (size_t i = 0; i < n && ok; i++)
        ok = apply(s, ops[i], &p[i], rev, fault == CORRAL_STORE_FAULT_WRITE && i == n / 2);
    if (ok && *rev == s->rev) {
        /* Nothing to write (every op failed its precondition): no fsync. */
        exec_ok(s->db, "ROLLBACK");
        return true;
    }
    if (ok) {
        sqlite3_bind_int64(s->st_meta, 1, *rev);
        ok = step_reset(s->st_meta);
    }
    if (ok && fault == CORRAL_STORE_FAULT_CRASH_BEFORE)
        _exit(99);
    if (ok && fault != CORRAL_STORE_FAULT_COMMIT) {
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        ok = exec_ok(s->db, "COMMIT");
        clock_gettime(CLOCK_MONOTONIC, &t1);
        corral_metric_t *m = __atomic_load_n(&s->m_commit, __ATOMIC_ACQUIRE);
        if (m)
            corral_metric_observe(
                m, NULL, (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
    } else {
        ok = false;
    }
    if (!ok) {
        exec_ok(s->db, "ROLLBACK");
        return false;
    }
    if (fault == CORRAL_STORE_FAULT_CRASH_AFTER)
        _exit(99);
    return true;
}

static void publish(corral_store_t *s, corral_store_op_t **ops, size_t n, pending_t *p)
{
    for (size_t i = 0; i < n; i++) {
        corral_store_op_t *op = ops[i];
        if (op->rc != 0)
            continue;
        corral_store_event_t *ev =
            corral__event_new(op, p[i].type, op->rev, p[i].json.p, p[i].json.len);
        corral_store_event_ref(ev); /* one for the op, one for the ring */
        op->ev = ev;
        corral__ring_push(&s->ring, ev);
    }
    size_t nsubs = __atomic_load_n(&s->nsubs, __ATOMIC_ACQUIRE);
    for (size_t i = 0; i < nsubs; i++)
        s->subs[i].fn(s->subs[i].ctx);
}

static int compact_now(corral_store_t *s, int64_t keep);

static void compact_if_due(corral_store_t *s)
{
    int64_t rev = s->rev, keep = s->opts.history;
    /* Compact in steps of 1/8 of the window, so the DELETE stays small. */
    if (rev - s->compacted > keep + keep / 8 + 1)
        compact_now(s, keep);
}

static void run_batch(corral_store_t *s, corral_store_op_t **ops, size_t n, pending_t *p)
{
    int64_t rev = s->rev;
    for (size_t i = 0; i < n; i++) {
        ops[i]->rc = 0;
        ops[i]->rev = 0;
        ops[i]->ev = NULL;
    }
    if (commit_batch(s, ops, n, p, &rev)) {
        __atomic_store_n(&s->rev, rev, __ATOMIC_RELEASE);
        publish(s, ops, n, p);
    } else {
        for (size_t i = 0; i < n; i++) {
            ops[i]->rc = CORRAL_EIO;
            ops[i]->rev = 0;
        }
    }
    corral_metric_t *mb = __atomic_load_n(&s->m_batch, __ATOMIC_ACQUIRE);
    if (mb)
        corral_metric_observe(mb, NULL, (double)n);
    pthread_mutex_lock(&s->mu);
    s->stats.batches++;
    s->stats.ops += n;
    if (n > s->stats.max_batch_seen)
        s->stats.max_batch_seen = n;
    pthread_mutex_unlock(&s->mu);
    for (size_t i = 0; i < n; i++)
        ops[i]->done(ops[i]);
    if (s->wal_frames > CHECKPOINT_FRAMES) {
        sqlite3_wal_checkpoint_v2(s->db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
        s->wal_frames = 0;
        pthread_mutex_lock(&s->mu);
        s->stats.checkpoints++;
        pthread_mutex_unlock(&s->mu);
    }
    compact_if_due(s);
}

static void *writer_main(void *arg)
{
    corral_store_t *s = arg;
    size_t max = s->opts.max_batch;
    corral_store_op_t **ops = corral_calloc(max, sizeof(corral_store_op_t *));
    pending_t *p = corral_calloc(max, sizeof(*p));
    for (size_t i = 0; i < max; i++)
        corral_buf_init(&p[i].json);
    for (;;) {
        pthread_mutex_lock(&s->mu);
        while ((!s->head || s->hold) && !s->stopping)
            pthread_cond_wait(&s->cv, &s->mu);
        if (!s->head) {
            pthread_mutex_unlock(&s->mu);
            break;
        }
        size_t n = 0;
        /* A compaction request runs alone, between batches. */
        while (s->head && n < max && !(n > 0 && s->head->kind == CORRAL__STORE_COMPACT)) {
            ops[n++] = s->head;
            s->head = s->head->next;
            if (ops[n - 1]->kind == CORRAL__STORE_COMPACT)
                break;
        }
        if (!s->head)
            s->tail = NULL;
        pthread_mutex_unlock(&s->mu);
        if (ops[0]->kind == CORRAL__STORE_COMPACT) {
            ops[0]->rc = compact_now(s, ops[0]->expect_rev);
            ops[0]->done(ops[0]);
            continue;
        }
        run_batch(s, ops, n, p);
    }
    for (size_t i = 0; i < max; i++)
        corral_buf_fini(&p[i].json);
    corral_free(p);
    corral_free(ops);
    return NULL;
}

int corral__writer_start(corral_store_t *s, char *err, size_t errlen)
{
    int rc = prepare(s, err, errlen);
    if (rc)
        return rc;
    if (pthread_create(&s->writer, NULL, writer_main, s) != 0) {
        if (err)
            snprintf(err, errlen, "cannot start the writer thread");
        return CORRAL_EIO;
    }
    s->writer_started = true;
    return 0;
}

void corral__writer_stop(corral_store_t *s)
{
    pthread_mutex_lock(&s->mu);
    s->stopping = true;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    pthread_join(s->writer, NULL);
    s->writer_started = false;
    sqlite3_stmt *st[] = {s->st_get,    s->st_insert, s->st_update,
                          s->st_delete, s->st_log,    s->st_meta};
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(st); i++)
        sqlite3_finalize(st[i]);
}

void corral_store_submit(corral_store_t *s, corral_store_op_t *op)
{
    op->next = NULL;
    pthread_mutex_lock(&s->mu);
    if (s->tail)
        s->tail->next = op;
    else
        s->head = op;
    s->tail = op;
    pthread_cond_signal(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

void corral_store_hold(corral_store_t *s, bool hold)
{
    pthread_mutex_lock(&s->mu);
    s->hold = hold;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

typedef struct waiter {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool done;
} waiter_t;

static void sync_done(corral_store_op_t *op)
{
    waiter_t *w = op->ctx;
    pthread_mutex_lock(&w->mu);
    w->done = true;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

int corral_store_write_sync(corral_store_t *s, corral_store_op_t *op)
{
    waiter_t *w = corral_malloc(sizeof(*w));
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    w->done = false;
    op->done = sync_done;
    op->ctx = w;
    corral_store_submit(s, op);
    pthread_mutex_lock(&w->mu);
    while (!w->done)
        pthread_cond_wait(&w->cv, &w->mu);
    pthread_mutex_unlock(&w->mu);
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cv);
    corral_free(w);
    return op->rc;
}

void corral_store_op_release(corral_store_op_t *op)
{
    if (op && op->ev) {
        corral_store_event_unref(op->ev);
        op->ev = NULL;
    }
}

int corral_store_compact(corral_store_t *s, int64_t keep)
{
    corral_store_op_t op;
    memset(&op, 0, sizeof(op));
    op.kind = CORRAL__STORE_COMPACT;
    op.expect_rev = keep < 0 ? 0 : keep;
    return corral_store_write_sync(s, &op);
}

/* Writer thread only: it owns the connection. */
static int compact_now(corral_store_t *s, int64_t keep)
{
    int64_t upto = s->rev - keep;
    if (upto <= s->compacted)
        return 0;
    sqlite3_stmt *st = NULL;
    bool ok =
        exec_ok(s->db, "BEGIN IMMEDIATE") &&
        sqlite3_prepare_v2(s->db, "DELETE FROM log WHERE rev <= ?1", -1, &st, NULL) == SQLITE_OK;
    if (ok) {
        sqlite3_bind_int64(st, 1, upto);
        ok = sqlite3_step(st) == SQLITE_DONE;
    }
    sqlite3_finalize(st);
    st = NULL;
    if (ok)
        ok = sqlite3_prepare_v2(s->db, "UPDATE meta SET value = ?1 WHERE key = 'compacted'", -1,
                                &st, NULL) == SQLITE_OK;
    if (ok) {
        sqlite3_bind_int64(st, 1, upto);
        ok = sqlite3_step(st) == SQLITE_DONE;
    }
    sqlite3_finalize(st);
    if (ok && exec_ok(s->db, "COMMIT")) {
        __atomic_store_n(&s->compacted, upto, __ATOMIC_RELEASE);
        return 0;
    }
    exec_ok(s->db, "ROLLBACK");
    return CORRAL_EIO;
}

void corral_store_set_metrics(corral_store_t *s, struct corral_metric *commit_seconds,
                              struct corral_metric *batch_ops)
{
    __atomic_store_n(&s->m_commit, commit_seconds, __ATOMIC_RELEASE);
    __atomic_store_n(&s->m_batch, batch_ops, __ATOMIC_RELEASE);
}
