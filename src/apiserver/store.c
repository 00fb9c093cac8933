/*
 * The store: opening the database (one writer process per data directory,
 * enforced with a lock file), the numbered schema migrations, reader handles
 * and their queries, and log compaction. The writer thread lives in
 * store_writer.c, the event ring in store_ring.c.
 *
 * Schema (see migrations[] for the exact SQL): meta holds the revision
 * counter and the compaction point, objects the current state (JSON plus
 * selector attributes), log one row per revision for watches.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "apiserver/store_int.h"

/* Migration N brings the schema from version N-1 to N. Never edit one that
 * has shipped: add a new one (tests/apiserver/test_store.c checks both a
 * fresh database and one upgraded step by step). */
static const char *const migrations[] = {
    /* 1: the tables */
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);"
    "INSERT INTO meta VALUES ('revision', 0), ('compacted', 0);"
    "CREATE TABLE objects ("
    "  resource TEXT NOT NULL, namespace TEXT NOT NULL, name TEXT NOT NULL,"
    "  rev INTEGER NOT NULL, data TEXT NOT NULL, attrs BLOB NOT NULL);"
    "CREATE UNIQUE INDEX objects_key ON objects (resource, namespace, name);"
    "CREATE TABLE log ("
    "  rev INTEGER PRIMARY KEY, type INTEGER NOT NULL,"
    "  resource TEXT NOT NULL, namespace TEXT NOT NULL, name TEXT NOT NULL,"
    "  data TEXT NOT NULL, attrs BLOB NOT NULL,"
    "  prev_rev INTEGER NOT NULL DEFAULT 0, prev_attrs BLOB);",
    /* 2: watches of one resource read the log without scanning the others */
    "CREATE INDEX log_resource_rev ON log (resource, rev);",
};

static void set_err(char *err, size_t len, const char *fmt, ...) CORRAL_PRINTF(3, 4);

static void set_err(char *err, size_t len, const char *fmt, ...)
{
    if (!err || !len)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
}

int corral__store_connect(corral_store_t *s, sqlite3 **out, bool writer, char *err, size_t errlen)
{
    sqlite3 *db = NULL;
    int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
    if (sqlite3_open_v2(s->path, &db, flags, NULL) != SQLITE_OK) {
        set_err(err, errlen, "%s: %s", s->path, db ? sqlite3_errmsg(db) : "cannot open");
        sqlite3_close(db);
        return CORRAL_EIO;
    }
    sqlite3_busy_timeout(db, 10000);
    char sql[256];
    snprintf(sql, sizeof(sql),
             "PRAGMA journal_mode=WAL; PRAGMA synchronous=%s; PRAGMA temp_store=MEMORY;"
             "PRAGMA mmap_size=268435456; PRAGMA cache_size=-32768;%s",
             s->opts.no_fsync ? "NORMAL" : "FULL",
             /* Checkpoints run after a batch is acknowledged, never inside
              * COMMIT (see store_writer.c). */
             writer ? " PRAGMA wal_autocheckpoint=0;" : "");
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        set_err(err, errlen, "%s: %s", s->path, msg ? msg : "pragma failed");
        sqlite3_free(msg);
        sqlite3_close(db);
        return CORRAL_EIO;
    }
    *out = db;
    return 0;
}

static int exec(sqlite3 *db, const char *sql, char *err, size_t errlen)
{
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        set_err(err, errlen, "sqlite: %s", msg ? msg : "error");
        sqlite3_free(msg);
        return CORRAL_EIO;
    }
    return 0;
}

static int user_version(sqlite3 *db)
{
    sqlite3_stmt *st = NULL;
    int v = -1;
    if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    return v;
}

/* Bring the schema to `upto` (each step in its own transaction). */
static int migrate(corral_store_t *s, int upto, char *err, size_t errlen)
{
    int v = user_version(s->db);
    if (v < 0) {
        set_err(err, errlen, "%s: %s", s->path, "cannot read the schema version");
        return CORRAL_EIO;
    }
    if (v > (int)CORRAL_ARRAY_LEN(migrations)) {
        set_err(err, errlen, "%s: schema version %d is newer than this corral understands (%d)",
                s->path, v, (int)CORRAL_ARRAY_LEN(migrations));
        return CORRAL_EUNSUPPORTED;
    }
    for (; v < upto; v++) {
        char sql[64];
        snprintf(sql, sizeof(sql), "PRAGMA user_version=%d;", v + 1);
        if (exec(s->db, "BEGIN IMMEDIATE", err, errlen) != 0)
            return CORRAL_EIO;
        if (exec(s->db, migrations[v], err, errlen) != 0 || exec(s->db, sql, err, errlen) != 0) {
            exec(s->db, "ROLLBACK", NULL, 0);
            return CORRAL_EIO;
        }
        if (exec(s->db, "COMMIT", err, errlen) != 0)
            return CORRAL_EIO;
    }
    s->schema = v;
    return 0;
}

static int64_t meta_get(sqlite3 *db, const char *key)
{
    sqlite3_stmt *st = NULL;
    int64_t v = 0;
    if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = ?", -1, &st, NULL) ==
        SQLITE_OK) {
        sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
        if (sqlite3_step(st) == SQLITE_ROW)
            v = sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
    return v;
}

/* One server per data directory: two writers would each keep their own
 * revision counter. flock is released by the kernel when the process dies. */
static int lock_dir(corral_store_t *s, char *err, size_t errlen)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/corral.lock", s->dir);
    s->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (s->lock_fd < 0) {
        set_err(err, errlen, "%s: %s", path, strerror(errno));
        return CORRAL_EIO;
    }
    if (flock(s->lock_fd, LOCK_EX | LOCK_NB) != 0) {
        set_err(err, errlen, "%s: %s", s->dir,
                "the data directory is in use by another corral apiserver");
        return CORRAL_EIO;
    }
    return 0;
}

static void opts_defaults(corral_store_opts_t *o)
{
    if (o->history <= 0)
        o->history = 100000;
    if (o->ring_events == 0)
        o->ring_events = 10000;
    if (o->ring_bytes == 0)
        o->ring_bytes = (size_t)64 << 20;
    if (o->max_batch == 0)
        o->max_batch = 512;
}

/* Failure injection exists only in test builds (CORRAL_TEST_HOOKS, defined
 * for the unit tests by the Makefile): a released binary reads no such
 * variable. */
#ifdef CORRAL_TEST_HOOKS
static void fault_from_env(corral_store_t *s)
{
    const char *e = getenv("CORRAL_STORE_FAULT");
    if (!e || !*e)
        return;
    static const struct {
        const char *name;
        corral_store_fault_t f;
    } names[] = {{"commit", CORRAL_STORE_FAULT_COMMIT},
                 {"write", CORRAL_STORE_FAULT_WRITE},
                 {"crash-before", CORRAL_STORE_FAULT_CRASH_BEFORE},
                 {"crash-after", CORRAL_STORE_FAULT_CRASH_AFTER}};
    const char *colon = strchr(e, ':');
    size_t n = colon ? (size_t)(colon - e) : strlen(e);
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(names); i++) {
        if (strlen(names[i].name) == n && strncmp(names[i].name, e, n) == 0)
            corral_store_inject(s, names[i].f, colon ? (int)strtol(colon + 1, NULL, 10) : 0);
    }
}
#else
static void fault_from_env(corral_store_t *s)
{
    (void)s;
}
#endif

static int open_db(corral_store_t *s, char *err, size_t errlen)
{
    /* Secrets live in this file: create it private before SQLite does
     * (the -wal and -shm files inherit its mode). */
    int fd = open(s->path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
        set_err(err, errlen, "%s: %s", s->path, strerror(errno));
        return CORRAL_EIO;
    }
    close(fd);
    int rc = corral__store_connect(s, &s->db, true, err, errlen);
    if (rc)
        return rc;
    int upto = s->opts.schema_upto > 0 ? s->opts.schema_upto : (int)CORRAL_ARRAY_LEN(migrations);
    rc = migrate(s, upto, err, errlen);
    if (rc)
        return rc;
    s->rev = meta_get(s->db, "revision");
    s->compacted = meta_get(s->db, "compacted");
    return 0;
}

int corral_store_open(const char *dir, const corral_store_opts_t *opts, corral_store_t **out,
                      char *err, size_t errlen)
{
    *out = NULL;
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        set_err(err, errlen, "%s: %s", dir, strerror(errno));
        return CORRAL_EIO;
    }
    corral_store_t *s = corral_calloc(1, sizeof(*s));
    s->lock_fd = -1;
    s->dir = corral_strdup(dir);
    size_t plen = strlen(dir) + 16;
    s->path = corral_malloc(plen);
    snprintf(s->path, plen, "%s/corral.db", dir);
    if (opts)
        s->opts = *opts;
    opts_defaults(&s->opts);
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    int rc = lock_dir(s, err, errlen);
    if (rc == 0)
        rc = open_db(s, err, errlen);
    if (rc == 0) {
        corral__ring_init(&s->ring, s->opts.ring_events, s->opts.ring_bytes, s->rev + 1);
        fault_from_env(s);
        rc = corral__writer_start(s, err, errlen);
    }
    if (rc) {
        corral_store_close(s);
        return rc;
    }
    *out = s;
    return 0;
}

void corral_store_close(corral_store_t *s)
{
    if (!s)
        return;
    if (s->writer_started)
        corral__writer_stop(s);
    if (s->ring.ev)
        corral__ring_fini(&s->ring);
    if (s->db)
        sqlite3_close(s->db);
    if (s->lock_fd >= 0)
        close(s->lock_fd);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
    corral_free(s->dir);
    corral_free(s->path);
    corral_free(s);
}

int64_t corral_store_revision(corral_store_t *s)
{
    return __atomic_load_n(&s->rev, __ATOMIC_ACQUIRE);
}

int64_t corral_store_compacted(corral_store_t *s)
{
    return __atomic_load_n(&s->compacted, __ATOMIC_ACQUIRE);
}

int corral_store_schema_version(corral_store_t *s)
{
    return s->schema;
}

int corral_store_subscribe(corral_store_t *s, void (*fn)(void *ctx), void *ctx)
{
    pthread_mutex_lock(&s->mu);
    if (s->nsubs == CORRAL__MAX_SUBSCRIBERS) {
        pthread_mutex_unlock(&s->mu);
        return CORRAL_ETOOBIG;
    }
    s->subs[s->nsubs].fn = fn;
    s->subs[s->nsubs].ctx = ctx;
    __atomic_store_n(&s->nsubs, s->nsubs + 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&s->mu);
    return 0;
}

#ifdef CORRAL_TEST_HOOKS
void corral_store_inject(corral_store_t *s, corral_store_fault_t fault, int after)
{
    pthread_mutex_lock(&s->mu);
    s->fault = fault;
    s->fault_after = after < 0 ? 0 : after;
    pthread_mutex_unlock(&s->mu);
}
#endif

void corral_store_get_stats(corral_store_t *s, corral_store_stats_t *out)
{
    pthread_mutex_lock(&s->mu);
    *out = s->stats;
    pthread_mutex_unlock(&s->mu);
}

/* --- readers ---------------------------------------------------------------------- */

enum {
    RS_BEGIN,
    RS_COMMIT,
    RS_REV,
    RS_COMPACTED,
    RS_GET,
    RS_LIST_ALL,
    RS_LIST_ALL_AFTER,
    RS_LIST_NS,
    RS_LIST_NS_AFTER,
    RS_COUNT_ALL,
    RS_COUNT_NS,
    RS_LOG,
    RS_LOG_GET,
    RS_COUNT_
};

static const char *const reader_sql[RS_COUNT_] = {
    [RS_BEGIN] = "BEGIN",
    [RS_COMMIT] = "COMMIT",
    [RS_REV] = "SELECT value FROM meta WHERE key = 'revision'",
    [RS_COMPACTED] = "SELECT value FROM meta WHERE key = 'compacted'",
    [RS_GET] = "SELECT rev, data, attrs FROM objects WHERE resource = ?1 AND namespace = ?2 AND "
               "name = ?3",
    [RS_LIST_ALL] = "SELECT namespace, name, rev, data, attrs FROM objects WHERE resource = ?1 "
                    "ORDER BY namespace, name",
    [RS_LIST_ALL_AFTER] = "SELECT namespace, name, rev, data, attrs FROM objects WHERE resource = "
                          "?1 AND (namespace, name) > (?3, ?4) ORDER BY namespace, name",
    [RS_LIST_NS] = "SELECT namespace, name, rev, data, attrs FROM objects WHERE resource = ?1 AND "
                   "namespace = ?2 ORDER BY namespace, name",
    [RS_LIST_NS_AFTER] = "SELECT namespace, name, rev, data, attrs FROM objects WHERE resource = "
                         "?1 AND namespace = ?2 AND name > ?4 ORDER BY namespace, name",
    [RS_COUNT_ALL] = "SELECT count(*) FROM objects WHERE resource = ?1",
    [RS_COUNT_NS] = "SELECT count(*) FROM objects WHERE resource = ?1 AND namespace = ?2",
    [RS_LOG] = "SELECT rev, type, namespace, name, data, attrs, prev_rev, prev_attrs FROM log "
               "WHERE resource = ?1 AND rev > ?2 AND rev <= ?3 ORDER BY rev LIMIT ?4",
    [RS_LOG_GET] = "SELECT data FROM log WHERE rev = ?1",
};

struct corral_store_reader {
    corral_store_t *s;
    sqlite3 *db;
    sqlite3_stmt *st[RS_COUNT_];
    sqlite3_stmt *cur; /* the list between list_begin and list_end */
};

int corral_store_reader_open(corral_store_t *s, corral_store_reader_t **out)
{
    corral_store_reader_t *r = corral_calloc(1, sizeof(*r));
    r->s = s;
    if (corral__store_connect(s, &r->db, false, NULL, 0) != 0) {
        corral_free(r);
        return CORRAL_EIO;
    }
    for (int i = 0; i < RS_COUNT_; i++) {
        if (sqlite3_prepare_v3(r->db, reader_sql[i], -1, SQLITE_PREPARE_PERSISTENT, &r->st[i],
                               NULL) != SQLITE_OK) {
            corral_store_reader_close(r);
            return CORRAL_EIO;
        }
    }
    *out = r;
    return 0;
}

void corral_store_reader_close(corral_store_reader_t *r)
{
    if (!r)
        return;
    corral_store_list_end(r);
    for (int i = 0; i < RS_COUNT_; i++)
        sqlite3_finalize(r->st[i]);
    sqlite3_close(r->db);
    corral_free(r);
}

static int step_done(sqlite3_stmt *st)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    return rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 : CORRAL_EIO;
}

static int64_t scalar(sqlite3_stmt *st)
{
    int64_t v = 0;
    if (sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_reset(st);
    return v;
}

int corral_store_get(corral_store_reader_t *r, const char *resource, const char *ns,
                     const char *name, corral_arena_t *a, corral_store_row_t *out)
{
    sqlite3_stmt *st = r->st[RS_GET];
    sqlite3_bind_text(st, 1, resource, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, ns, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, name, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    if (rc != SQLITE_ROW) {
        sqlite3_reset(st);
        sqlite3_clear_bindings(st);
        return rc == SQLITE_DONE ? CORRAL_ENOENT : CORRAL_EIO;
    }
    memset(out, 0, sizeof(*out));
    out->ns = corral_arena_strdup(a, ns);
    out->name = corral_arena_strdup(a, name);
    out->rev = sqlite3_column_int64(st, 0);
    out->json_len = (size_t)sqlite3_column_bytes(st, 1);
    out->json = corral_arena_strndup(a, (const char *)sqlite3_column_text(st, 1), out->json_len);
    out->attrs_len = (size_t)sqlite3_column_bytes(st, 2);
    const void *attrs = sqlite3_column_blob(st, 2);
    char *ac = corral_arena_alloc(a, out->attrs_len + 1);
    if (out->attrs_len)
        memcpy(ac, attrs, out->attrs_len);
    out->attrs = ac;
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return 0;
}

int corral_store_list_begin(corral_store_reader_t *r, const char *resource, const char *ns,
                            const char *after_ns, const char *after_name, int64_t *rev)
{
    if (r->cur)
        return CORRAL_EINVAL;
    /* One read transaction until list_end: the rows and the revision are one
     * snapshot, however many calls of list_next read them. */
    if (step_done(r->st[RS_BEGIN]) != 0)
        return CORRAL_EIO;
    *rev = scalar(r->st[RS_REV]);
    int which = ns ? (after_name ? RS_LIST_NS_AFTER : RS_LIST_NS)
                   : (after_name ? RS_LIST_ALL_AFTER : RS_LIST_ALL);
    sqlite3_stmt *st = r->st[which];
    sqlite3_bind_text(st, 1, resource, -1, SQLITE_TRANSIENT);
    if (ns)
        sqlite3_bind_text(st, 2, ns, -1, SQLITE_TRANSIENT);
    if (after_name) {
        if (!ns)
            sqlite3_bind_text(st, 3, after_ns ? after_ns : "", -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(st, 4, after_name, -1, SQLITE_TRANSIENT);
    }
    r->cur = st;
    return 0;
}

int corral_store_list_next(corral_store_reader_t *r,
                           int (*fn)(void *ctx, const corral_store_row_t *row), void *ctx)
{
    sqlite3_stmt *st = r->cur;
    if (!st)
        return 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        corral_store_row_t row = {
            .ns = (const char *)sqlite3_column_text(st, 0),
            .name = (const char *)sqlite3_column_text(st, 1),
            .rev = sqlite3_column_int64(st, 2),
            .json = (const char *)sqlite3_column_text(st, 3),
            .json_len = (size_t)sqlite3_column_bytes(st, 3),
            .attrs = sqlite3_column_blob(st, 4),
            .attrs_len = (size_t)sqlite3_column_bytes(st, 4),
        };
        if (!row.attrs)
            row.attrs = "";
        int f = fn(ctx, &row);
        if (f == CORRAL_STORE_PAUSE)
            return 1;
        if (f != 0)
            return 0;
    }
    return rc == SQLITE_DONE ? 0 : CORRAL_EIO;
}

void corral_store_list_end(corral_store_reader_t *r)
{
    if (!r->cur)
        return;
    sqlite3_reset(r->cur);
    sqlite3_clear_bindings(r->cur);
    r->cur = NULL;
    step_done(r->st[RS_COMMIT]);
}

int corral_store_list(corral_store_reader_t *r, const char *resource, const char *ns,
                      const char *after_ns, const char *after_name,
                      int (*fn)(void *ctx, const corral_store_row_t *row), void *ctx, int64_t *rev)
{
    int rc = corral_store_list_begin(r, resource, ns, after_ns, after_name, rev);
    if (rc)
        return rc;
    do
        rc = corral_store_list_next(r, fn, ctx);
    while (rc == 1);
    corral_store_list_end(r);
    return rc;
}

int corral_store_count(corral_store_reader_t *r, const char *resource, const char *ns,
                       int64_t *count)
{
    sqlite3_stmt *st = r->st[ns ? RS_COUNT_NS : RS_COUNT_ALL];
    sqlite3_bind_text(st, 1, resource, -1, SQLITE_STATIC);
    if (ns)
        sqlite3_bind_text(st, 2, ns, -1, SQLITE_STATIC);
    *count = scalar(st);
    sqlite3_clear_bindings(st);
    return 0;
}

int corral_store_log_scan(corral_store_reader_t *r, const char *resource, int64_t from,
                          int64_t upto, size_t max,
                          int (*fn)(void *ctx, const corral_store_logrow_t *row), void *ctx,
                          int64_t *last)
{
    *last = from;
    if (step_done(r->st[RS_BEGIN]) != 0)
        return CORRAL_EIO;
    int64_t compacted = scalar(r->st[RS_COMPACTED]);
    if (from < compacted) {
        step_done(r->st[RS_COMMIT]);
        return CORRAL_STORE_ECOMPACTED;
    }
    int64_t committed = scalar(r->st[RS_REV]);
    if (upto > committed)
        upto = committed;
    sqlite3_stmt *st = r->st[RS_LOG];
    sqlite3_bind_text(st, 1, resource, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, from);
    sqlite3_bind_int64(st, 3, upto);
    sqlite3_bind_int64(st, 4, (sqlite3_int64)max);
    int rc;
    size_t n = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        corral_store_logrow_t row = {
            .rev = sqlite3_column_int64(st, 0),
            .type = (corral_store_ev_type_t)sqlite3_column_int(st, 1),
            .ns = (const char *)sqlite3_column_text(st, 2),
            .name = (const char *)sqlite3_column_text(st, 3),
            .json = (const char *)sqlite3_column_text(st, 4),
            .json_len = (size_t)sqlite3_column_bytes(st, 4),
            .attrs = sqlite3_column_blob(st, 5),
            .attrs_len = (size_t)sqlite3_column_bytes(st, 5),
            .prev_rev = sqlite3_column_int64(st, 6),
            .prev_attrs = sqlite3_column_blob(st, 7),
            .prev_attrs_len = (size_t)sqlite3_column_bytes(st, 7),
        };
        if (!row.attrs)
            row.attrs = "";
        *last = row.rev;
        n++;
        if (fn(ctx, &row) != 0)
            break;
    }
    /* Fewer rows than asked for: everything up to upto was seen (the rows of
     * other resources in between need no second look). */
    if (rc == SQLITE_DONE && n < max)
        *last = upto > from ? upto : from;
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    step_done(r->st[RS_COMMIT]);
    return rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 : CORRAL_EIO;
}

int corral_store_log_get(corral_store_reader_t *r, int64_t rev, corral_arena_t *a,
                         const char **json, size_t *len)
{
    sqlite3_stmt *st = r->st[RS_LOG_GET];
    sqlite3_bind_int64(st, 1, rev);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        *len = (size_t)sqlite3_column_bytes(st, 0);
        *json = corral_arena_strndup(a, (const char *)sqlite3_column_text(st, 0), *len);
    }
    sqlite3_reset(st);
    return rc == SQLITE_ROW ? 0 : CORRAL_ENOENT;
}
