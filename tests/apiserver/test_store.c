/* The SQLite store: revisions and compare-and-swap outcomes, the log and its
 * compaction, the event ring, group commit, numbered migrations, the
 * one-process lock, and crash safety with failure injection (a child process
 * dies at a chosen point of a batch; the parent reopens and checks that every
 * acknowledged write is there and nothing else is). */
#include <criterion/criterion.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "api_test.h"
#include "corral/store.h"
#include "corral/yaml.h"

static char dir[64];

static void mkdir_tmp(void)
{
    snprintf(dir, sizeof(dir), "/tmp/corral-store-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
}

static void rm_tmp(void)
{
    api_rm_rf(dir);
}

TestSuite(store, .init = mkdir_tmp, .fini = rm_tmp, .timeout = 30);

typedef struct top {
    corral_arena_t a;
    corral_store_op_t op;
    corral_buf_t attrs;
} top_t;

/* An op on configmap `name` in "default" whose data.v = v. */
static void op_init(top_t *t, corral_store_op_kind_t kind, const char *name, const char *v,
                    int64_t expect)
{
    corral_arena_init(&t->a);
    corral_buf_init(&t->attrs);
    char json[256];
    snprintf(json, sizeof(json),
             "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"%s\","
             "\"namespace\":\"default\",\"labels\":{\"v\":\"%s\"}},\"data\":{\"v\":\"%s\"}}",
             name, v, v);
    corral_doc_t *docs;
    size_t n;
    corral_yaml_opts_t o = {.json = true};
    cr_assert_eq(corral_yaml_parse(&t->a, json, strlen(json), "t", &o, NULL, &docs, &n), 0);
    memset(&t->op, 0, sizeof(t->op));
    corral_store_attrs_add(&t->attrs, 'l', "v", v);
    corral_store_attrs_add(&t->attrs, 'f', "metadata.name", name);
    t->op.kind = kind;
    t->op.resource = "configmaps";
    t->op.ns = "default";
    t->op.name = corral_arena_strdup(&t->a, name);
    t->op.expect_rev = expect;
    t->op.obj = docs[0].root;
    t->op.arena = &t->a;
    t->op.attrs = t->attrs.p;
    t->op.attrs_len = t->attrs.len;
}

static void op_fini(top_t *t)
{
    corral_store_op_release(&t->op);
    corral_buf_fini(&t->attrs);
    corral_arena_fini(&t->a);
}

/* Write synchronously; returns rc and the new revision in *rev. */
static int write1(corral_store_t *s, corral_store_op_kind_t kind, const char *name, const char *v,
                  int64_t expect, int64_t *rev)
{
    top_t t;
    op_init(&t, kind, name, v, expect);
    int rc = corral_store_write_sync(s, &t.op);
    if (rev)
        *rev = t.op.rev;
    op_fini(&t);
    return rc;
}

static corral_store_t *open_store(const corral_store_opts_t *o)
{
    corral_store_t *s = NULL;
    char err[256] = "";
    cr_assert_eq(corral_store_open(dir, o, &s, err, sizeof(err)), 0, "%s", err);
    return s;
}

static bool has(corral_store_t *s, const char *name, int64_t *rev, char *json, size_t jl)
{
    corral_store_reader_t *r;
    cr_assert_eq(corral_store_reader_open(s, &r), 0);
    corral_arena_t a;
    corral_arena_init(&a);
    corral_store_row_t row;
    bool ok = corral_store_get(r, "configmaps", "default", name, &a, &row) == 0;
    if (ok && rev)
        *rev = row.rev;
    if (ok && json)
        snprintf(json, jl, "%s", row.json);
    corral_arena_fini(&a);
    corral_store_reader_close(r);
    return ok;
}

Test(store, revisions_and_preconditions)
{
    corral_store_t *s = open_store(NULL);
    cr_assert_eq(corral_store_revision(s), 0);
    cr_assert_eq(corral_store_schema_version(s), CORRAL_STORE_SCHEMA);
    int64_t r1, r2, r3;
    cr_assert_eq(write1(s, CORRAL_STORE_CREATE, "a", "1", 0, &r1), 0);
    cr_assert_eq(r1, 1);
    cr_assert_eq(write1(s, CORRAL_STORE_CREATE, "a", "1", 0, NULL), CORRAL_EEXIST);
    cr_assert_eq(write1(s, CORRAL_STORE_UPDATE, "a", "2", 99, NULL), CORRAL_ECONFLICT);
    cr_assert_eq(write1(s, CORRAL_STORE_UPDATE, "nope", "2", 0, NULL), CORRAL_ENOENT);
    cr_assert_eq(write1(s, CORRAL_STORE_UPDATE, "a", "2", r1, &r2), 0);
    cr_assert_eq(r2, 2, "failed preconditions take no revision");
    char json[512];
    int64_t rev;
    cr_assert(has(s, "a", &rev, json, sizeof(json)));
    cr_assert_eq(rev, 2);
    cr_assert(strstr(json, "\"resourceVersion\":\"2\""), "%s", json);
    cr_assert(strstr(json, "\"v\":\"2\""));
    cr_assert_eq(write1(s, CORRAL_STORE_DELETE, "a", "2", r2, &r3), 0);
    cr_assert_eq(r3, 3);
    cr_assert_not(has(s, "a", NULL, NULL, 0));
    cr_assert_eq(corral_store_revision(s), 3);
    corral_store_close(s);
    s = open_store(NULL);
    cr_assert_eq(corral_store_revision(s), 3, "the revision survives a restart");
    cr_assert_eq(write1(s, CORRAL_STORE_CREATE, "b", "1", 0, &r1), 0);
    cr_assert_eq(r1, 4);
    corral_store_close(s);
}

typedef struct logs {
    int n;
    int64_t revs[16];
    corral_store_ev_type_t types[16];
} logs_t;

static int log_row(void *arg, const corral_store_logrow_t *row)
{
    logs_t *l = arg;
    if (l->n < 16) {
        l->revs[l->n] = row->rev;
        l->types[l->n] = row->type;
    }
    l->n++;
    return 0;
}

Test(store, log_and_compaction)
{
    corral_store_opts_t o = {.history = 4};
    corral_store_t *s = open_store(&o);
    int64_t rev = 0;
    cr_assert_eq(write1(s, CORRAL_STORE_CREATE, "a", "1", 0, &rev), 0);
    cr_assert_eq(write1(s, CORRAL_STORE_UPDATE, "a", "2", rev, &rev), 0);
    cr_assert_eq(write1(s, CORRAL_STORE_DELETE, "a", "2", rev, &rev), 0);
    corral_store_reader_t *r;
    cr_assert_eq(corral_store_reader_open(s, &r), 0);
    logs_t l = {0};
    int64_t last = 0;
    cr_assert_eq(corral_store_log_scan(r, "configmaps", 0, 100, 10, log_row, &l, &last), 0);
    cr_assert_eq(l.n, 3);
    cr_assert_eq(l.types[0], CORRAL_EV_ADDED);
    cr_assert_eq(l.types[1], CORRAL_EV_MODIFIED);
    cr_assert_eq(l.types[2], CORRAL_EV_DELETED);
    cr_assert_eq(last, 3);
    for (int i = 0; i < 10; i++)
        cr_assert_eq(write1(s, CORRAL_STORE_CREATE, (char[]){(char)('b' + i), 0}, "1", 0, NULL), 0);
    /* 13 revisions, history 4: the writer compacts on its own. */
    cr_assert_geq(corral_store_compacted(s), 13 - 4 - 1);
    cr_assert_eq(corral_store_compact(s, 2), 0);
    cr_assert_eq(corral_store_compacted(s), 11);
    l.n = 0;
    cr_assert_eq(corral_store_log_scan(r, "configmaps", 5, 100, 10, log_row, &l, &last),
                 CORRAL_STORE_ECOMPACTED);
    cr_assert_eq(corral_store_log_scan(r, "configmaps", 11, 100, 10, log_row, &l, &last), 0);
    cr_assert_eq(l.n, 2);
    corral_store_reader_close(r);
    corral_store_close(s);
}

Test(store, ring_holds_recent_events)
{
    corral_store_opts_t o = {.ring_events = 4};
    corral_store_t *s = open_store(&o);
    int64_t rev = 0;
    cr_assert_eq(write1(s, CORRAL_STORE_CREATE, "a", "1", 0, &rev), 0);
    for (int i = 2; i <= 6; i++)
        cr_assert_eq(write1(s, CORRAL_STORE_UPDATE, "a", i % 2 ? "x" : "y", rev, &rev), 0);
    corral_store_event_t *ev[8];
    size_t n = 0;
    int64_t first = 0;
    cr_assert_eq(corral_store_ring_get(s, 1, ev, 8, &n, &first), CORRAL_STORE_ECOMPACTED);
    cr_assert_eq(first, 3);
    cr_assert_eq(corral_store_ring_get(s, 3, ev, 8, &n, &first), 0);
    cr_assert_eq(n, 4);
    cr_assert_eq(ev[0]->rev, 3);
    cr_assert_eq(ev[0]->type, CORRAL_EV_MODIFIED);
    cr_assert_str_eq(ev[0]->name, "a");
    cr_assert(strstr(ev[3]->json, "\"resourceVersion\":\"6\""));
    for (size_t i = 0; i < n; i++)
        corral_store_event_unref(ev[i]);
    corral_store_close(s);
}

typedef struct gc {
    corral_store_t *s;
    int id;
} gc_t;

static void *writer_thread(void *arg)
{
    gc_t *g = arg;
    for (int i = 0; i < 50; i++) {
        char name[32];
        snprintf(name, sizeof(name), "t%d-%d", g->id, i);
        cr_assert_eq(write1(g->s, CORRAL_STORE_CREATE, name, "1", 0, NULL), 0);
    }
    return NULL;
}

Test(store, group_commit_shares_transactions)
{
    corral_store_t *s = open_store(NULL);
    pthread_t th[8];
    gc_t g[8];
    for (int i = 0; i < 8; i++) {
        g[i].s = s;
        g[i].id = i;
        pthread_create(&th[i], NULL, writer_thread, &g[i]);
    }
    for (int i = 0; i < 8; i++)
        pthread_join(th[i], NULL);
    corral_store_stats_t st;
    corral_store_get_stats(s, &st);
    cr_assert_eq(st.ops, 400);
    cr_assert_eq(corral_store_revision(s), 400);
    cr_assert_lt(st.batches, st.ops, "concurrent writes share commits (%llu batches)",
                 (unsigned long long)st.batches);
    cr_assert_gt(st.max_batch_seen, 1);
    corral_store_close(s);
}

Test(store, migrations_upgrade_step_by_step)
{
    corral_store_opts_t o = {.schema_upto = 1};
    corral_store_t *s = open_store(&o);
    cr_assert_eq(corral_store_schema_version(s), 1);
    cr_assert_eq(write1(s, CORRAL_STORE_CREATE, "old", "1", 0, NULL), 0);
    corral_store_close(s);
    s = open_store(NULL);
    cr_assert_eq(corral_store_schema_version(s), CORRAL_STORE_SCHEMA);
    cr_assert(has(s, "old", NULL, NULL, 0), "data survives the migration");
    corral_store_close(s);
    sqlite3 *db;
    char path[128];
    snprintf(path, sizeof(path), "%s/corral.db", dir);
    cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
    sqlite3_stmt *st;
    cr_assert_eq(sqlite3_prepare_v2(db,
                                    "SELECT count(*) FROM sqlite_master WHERE name = "
                                    "'log_resource_rev'",
                                    -1, &st, NULL),
                 SQLITE_OK);
    cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
    cr_assert_eq(sqlite3_column_int(st, 0), 1, "migration 2 created its index");
    sqlite3_finalize(st);
    /* A database from the future is refused, not damaged. */
    cr_assert_eq(sqlite3_exec(db, "PRAGMA user_version = 99", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    char err[256];
    corral_store_t *s2 = NULL;
    cr_assert_eq(corral_store_open(dir, NULL, &s2, err, sizeof(err)), CORRAL_EUNSUPPORTED);
    cr_assert(strstr(err, "newer"), "%s", err);
}

Test(store, one_process_per_directory)
{
    corral_store_t *s = open_store(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        corral_store_t *s2 = NULL;
        char err[256];
        int rc = corral_store_open(dir, NULL, &s2, err, sizeof(err));
        _exit(rc == CORRAL_EIO && strstr(err, "in use") ? 0 : 1);
    }
    int st;
    waitpid(pid, &st, 0);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "a second process must be refused");
    corral_store_close(s);
}

Test(store, injected_failures_write_nothing)
{
    corral_store_t *s = open_store(NULL);
    int64_t rev;
    cr_assert_eq(write1(s, CORRAL_STORE_CREATE, "a", "1", 0, &rev), 0);
    corral_store_inject(s, CORRAL_STORE_FAULT_COMMIT, 0);
    cr_assert_eq(write1(s, CORRAL_STORE_UPDATE, "a", "2", rev, NULL), CORRAL_EIO);
    corral_store_inject(s, CORRAL_STORE_FAULT_WRITE, 0);
    cr_assert_eq(write1(s, CORRAL_STORE_CREATE, "b", "1", 0, NULL), CORRAL_EIO);
    cr_assert_eq(corral_store_revision(s), 1, "failed batches take no revision");
    char json[512];
    cr_assert(has(s, "a", NULL, json, sizeof(json)));
    cr_assert(strstr(json, "\"v\":\"1\""), "the failed update left no trace");
    cr_assert_not(has(s, "b", NULL, NULL, 0));
    cr_assert_eq(write1(s, CORRAL_STORE_UPDATE, "a", "3", rev, &rev), 0, "the store recovers");
    cr_assert_eq(rev, 2);
    corral_store_close(s);
}

/* In a child: write `acked` objects one by one (each acknowledged), then
 * arm fault and submit 8 more at once; the fault kills the child. */
static void crash_child(corral_store_fault_t fault, int acked)
{
    corral_store_t *s = NULL;
    char err[256];
    if (corral_store_open(dir, NULL, &s, err, sizeof(err)) != 0)
        _exit(3);
    for (int i = 0; i < acked; i++) {
        char name[32];
        snprintf(name, sizeof(name), "acked-%d", i);
        if (write1(s, CORRAL_STORE_CREATE, name, "1", 0, NULL) != 0)
            _exit(4);
    }
    corral_store_inject(s, fault, 0);
    corral_store_hold(s, true); /* all eight in one batch */
    static top_t t[8];
    for (int i = 0; i < 8; i++) {
        char name[32];
        snprintf(name, sizeof(name), "batch-%d", i);
        op_init(&t[i], CORRAL_STORE_CREATE, name, "1", 0);
        corral_store_submit(s, &t[i].op);
    }
    corral_store_hold(s, false);
    sleep(10); /* the writer _exits before this returns */
    _exit(5);
}

static void crash_case(corral_store_fault_t fault, bool batch_survives)
{
    pid_t pid = fork();
    if (pid == 0)
        crash_child(fault, 5);
    int st;
    waitpid(pid, &st, 0);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 99, "child should die in the batch (%d)",
              WEXITSTATUS(st));
    corral_store_t *s = open_store(NULL);
    for (int i = 0; i < 5; i++) {
        char name[32];
        snprintf(name, sizeof(name), "acked-%d", i);
        cr_assert(has(s, name, NULL, NULL, 0), "acknowledged %s lost", name);
    }
    int present = 0;
    for (int i = 0; i < 8; i++) {
        char name[32];
        snprintf(name, sizeof(name), "batch-%d", i);
        present += has(s, name, NULL, NULL, 0);
    }
    cr_assert_eq(present, batch_survives ? 8 : 0, "the batch is all or nothing (%d of 8)", present);
    cr_assert_eq(corral_store_revision(s), batch_survives ? 13 : 5);
    /* The revision counter and the log agree after recovery. */
    int64_t rev;
    cr_assert_eq(write1(s, CORRAL_STORE_CREATE, "after", "1", 0, &rev), 0);
    cr_assert_eq(rev, batch_survives ? 14 : 6);
    corral_store_close(s);
}

Test(store, crash_before_commit_loses_only_unacknowledged)
{
    crash_case(CORRAL_STORE_FAULT_CRASH_BEFORE, false);
}

Test(store, crash_after_commit_keeps_the_batch)
{
    crash_case(CORRAL_STORE_FAULT_CRASH_AFTER, true);
}

Test(store, attrs_lookup)
{
    corral_buf_t b;
    corral_buf_init(&b);
    corral_store_attrs_add(&b, 'l', "app", "web");
    corral_store_attrs_add(&b, 'f', "spec.nodeName", "");
    corral_store_attrs_add(&b, 'f', "metadata.name", "p");
    cr_assert_str_eq(corral_store_attrs_get(b.p, b.len, 'l', "app"), "web");
    cr_assert_str_eq(corral_store_attrs_get(b.p, b.len, 'f', "spec.nodeName"), "");
    cr_assert_null(corral_store_attrs_get(b.p, b.len, 'f', "app"));
    cr_assert_null(corral_store_attrs_get(b.p, b.len - 1, 'f', "metadata.name"),
                   "a truncated blob is never overread");
    corral_buf_fini(&b);
}

typedef struct names {
    int n;
    char seen[512];
} names_t;

/* Collects names, pausing after each row. */
static int name_row(void *arg, const corral_store_row_t *row)
{
    names_t *l = arg;
    l->n++;
    size_t used = strlen(l->seen);
    snprintf(l->seen + used, sizeof(l->seen) - used, "%s%s", used ? "," : "", row->name);
    return CORRAL_STORE_PAUSE;
}

Test(store, list_in_steps_reads_one_snapshot)
{
    corral_store_t *s = open_store(NULL);
    int64_t rb;
    cr_assert_eq(write1(s, CORRAL_STORE_CREATE, "a", "1", 0, NULL), 0);
    cr_assert_eq(write1(s, CORRAL_STORE_CREATE, "b", "1", 0, &rb), 0);
    cr_assert_eq(write1(s, CORRAL_STORE_CREATE, "c", "1", 0, NULL), 0);
    corral_store_reader_t *r;
    cr_assert_eq(corral_store_reader_open(s, &r), 0);
    int64_t rev = 0;
    cr_assert_eq(corral_store_list_begin(r, "configmaps", "default", NULL, NULL, &rev), 0);
    cr_assert_eq(rev, 3);
    cr_assert_eq(corral_store_list_begin(r, "configmaps", NULL, NULL, NULL, &rev), CORRAL_EINVAL,
                 "one list at a time");
    names_t l = {0};
    cr_assert_eq(corral_store_list_next(r, name_row, &l), 1);
    /* Written between steps: not seen by this list. */
    cr_assert_eq(write1(s, CORRAL_STORE_DELETE, "b", "1", rb, NULL), 0);
    cr_assert_eq(write1(s, CORRAL_STORE_CREATE, "bb", "1", 0, NULL), 0);
    int rc;
    while ((rc = corral_store_list_next(r, name_row, &l)) == 1)
        ;
    cr_assert_eq(rc, 0);
    cr_assert_str_eq(l.seen, "a,b,c");
    corral_store_list_end(r);
    corral_store_list_end(r); /* idempotent */
    memset(&l, 0, sizeof(l));
    cr_assert_eq(corral_store_list(r, "configmaps", "default", NULL, NULL, name_row, &l, &rev), 0);
    cr_assert_str_eq(l.seen, "a,bb,c");
    cr_assert_eq(rev, 5);
    /* Closing a reader in the middle of a list ends it. */
    cr_assert_eq(corral_store_list_begin(r, "configmaps", "default", NULL, NULL, &rev), 0);
    cr_assert_eq(corral_store_list_next(r, name_row, &l), 1);
    corral_store_reader_close(r);
    corral_store_close(s);
}
