/*
 * Watch streams: chunked JSON lines {"type":"ADDED","object":{...}}.
 *
 * A watch starts from a revision: with resourceVersion unset or "0" it first
 * sends the current objects as ADDED events and continues after that
 * snapshot; with resourceVersion N it sends every change after N, read from
 * the on-disk log while N is older than the in-memory ring, then from the
 * ring; N older than the log keeps gives an ERROR event with a 410 Expired
 * Status. Selectors are evaluated on the stored attributes of each event and
 * of the object's previous state, so an object that stops matching arrives
 * as DELETED and one that starts matching as ADDED, as kube-apiserver's
 * watch cache does.
 *
 * Flow control: each watcher reads the shared ring at its own cursor and
 * stops when more than opts.watch_buffer bytes wait on its socket; it
 * resumes when the socket drains. Writers never wait for watchers. A
 * watcher whose cursor the ring has overwritten while it was stalled is
 * dropped with 410 Expired (the client relists), as kube-apiserver drops
 * watchers that cannot keep up.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/uio.h>

#include "apiserver/apiserver_int.h"
#include "corral/pb.h"

#define RING_BATCH 256
#define DISK_BATCH 256

struct corral__watch {
    corral__loop_t *loop;
    corral__conn_t *conn;
    corral__watch_t *prev, *next;
    const corral__res_t *res;
    const char *ns; /* NULL: every namespace */
    corral__filter_t filter;
    int64_t cursor; /* the next revision to look at */
    bool disk;      /* still reading the on-disk log */
    bool paused;    /* too much queued on the socket */
    bool stalled;   /* has been paused: a slow reader */
    bool bookmarks;
    bool ended;
    bool pb;        /* protobuf frames (negotiate.c), else JSON lines */
    int table;      /* CORRAL__TABLE_*: events carry one-row Tables (kubectl get -w) */
    int64_t future; /* a resourceVersion ahead of the store: wait for it, bounded */
    struct event *timeout_ev, *bookmark_ev, *future_ev;
    /* The initial ADDED events, read in slices from a snapshot (snap) at
     * revision snap_rev; NULL once sent. */
    corral_store_reader_t *snap;
    int64_t snap_rev, slice_t0;
    struct event *init_ev;
};

static const char *type_name(corral_store_ev_type_t t)
{
    return t == CORRAL_EV_ADDED ? "ADDED" : t == CORRAL_EV_MODIFIED ? "MODIFIED" : "DELETED";
}

static void emit(corral__watch_t *w, const char *type, const char *json, size_t len)
{
    if (w->table && type[0] != 'E' && type[0] != 'B') { /* not ERROR, BOOKMARK */
        corral_buf_t b;
        corral_buf_init(&b);
        corral_buf_printf(&b, "{\"type\":\"%s\",\"object\":", type);
        corral__table_begin(&b, w->res);
        corral__table_row(&b, w->res, json, len, w->table, true);
        corral__table_end(&b, 0, NULL);
        corral_buf_puts(&b, "}\n");
        corral__stream_write(w->conn, b.p, b.len);
        corral_buf_fini(&b);
        return;
    }
    corral_buf_t served; /* a view's events are converted per watcher */
    corral_buf_init(&served);
    if (w->res->view && type[0] != 'E' && type[0] != 'B') {
        corral__put_obj(&served, w->res, json, len);
        json = served.p;
        len = served.len;
    }
    if (w->pb) {
        /* a buffer of its own: json may point into served */
        corral_buf_t frame;
        corral_buf_init(&frame);
        corral__pb_frame(type, json, len, &frame);
        corral__stream_write(w->conn, frame.p, frame.len);
        corral_buf_fini(&frame);
        corral_buf_fini(&served);
        return;
    }
    char head[48];
    int hl = snprintf(head, sizeof(head), "{\"type\":\"%s\",\"object\":", type);
    struct iovec iov[3] = {{head, (size_t)hl}, {(void *)json, len}, {"}\n", 2}};
    corral__stream_writev(w->conn, iov, 3);
    corral_buf_fini(&served);
}

static void unlink_watch(corral__watch_t *w)
{
    corral__loop_t *loop = w->loop;
    if (w->prev)
        w->prev->next = w->next;
    else if (loop->watchers == w)
        loop->watchers = w->next;
    if (w->next)
        w->next->prev = w->prev;
    w->prev = w->next = NULL;
    if (w->timeout_ev)
        event_free(w->timeout_ev);
    if (w->bookmark_ev)
        event_free(w->bookmark_ev);
    if (w->future_ev)
        event_free(w->future_ev);
    if (w->init_ev)
        event_free(w->init_ev);
    w->timeout_ev = w->bookmark_ev = w->future_ev = w->init_ev = NULL;
    corral__snap_give(loop, w->snap);
    w->snap = NULL;
}

/* The connection went away. */
void corral__watch_closed(corral__watch_t *w)
{
    unlink_watch(w);
    corral_free(w);
}

/* End the stream cleanly; the connection serves its next request. */
static void watch_end(corral__watch_t *w)
{
    corral__conn_t *c = w->conn;
    w->ended = true;
    unlink_watch(w);
    corral_free(w);
    corral__stream_end(c);
}

static void expire(corral__watch_t *w, int64_t rv, int64_t oldest)
{
    char msg[160];
    snprintf(msg, sizeof(msg), "too old resource version: %lld (%lld)", (long long)rv,
             (long long)oldest);
    corral_buf_t b;
    corral_buf_init(&b);
    corral__status_json(&b, 410, "Failure", "Expired", msg);
    emit(w, "ERROR", b.p, b.len);
    corral_buf_fini(&b);
    watch_end(w);
}

/* The previous state of an object that stopped matching, with the
 * revision of the change that made it stop (what upstream sends). */
static void emit_prev(corral__watch_t *w, const char *prev, size_t prev_len, int64_t rev,
                      const char *fallback, size_t fallback_len)
{
    corral_arena_t a;
    corral_arena_init(&a);
    corral_val_t *t = prev ? corral__json_tree(&a, prev, prev_len) : NULL;
    if (t) {
        char rv[24];
        snprintf(rv, sizeof(rv), "%lld", (long long)rev);
        corral_val_set(&a, corral__meta(&a, t), "resourceVersion", corral_val_new_str(&a, rv));
        corral_buf_t b;
        corral_buf_init(&b);
        corral_val_to_json(t, &b, false);
        emit(w, "DELETED", b.p, b.len);
        corral_buf_fini(&b);
    } else {
        emit(w, "DELETED", fallback, fallback_len); /* the previous state is compacted */
    }
    corral_arena_fini(&a);
}

typedef struct change {
    int64_t rev;
    corral_store_ev_type_t type;
    const char *ns;
    const char *json;
    size_t len;
    const char *attrs;
    size_t attrs_len;
    const char *prev_json; /* NULL when it must be read from the log */
    size_t prev_len;
    int64_t prev_rev;
    const char *prev_attrs;
    size_t prev_attrs_len;
} change_t;

static void deliver(corral__watch_t *w, const change_t *ch)
{
    if (w->ns && strcmp(w->ns, ch->ns) != 0)
        return;
    if (!w->filter.any) {
        emit(w, type_name(ch->type), ch->json, ch->len);
        return;
    }
    bool cur =
        ch->type != CORRAL_EV_DELETED && corral__filter_match(&w->filter, ch->attrs, ch->attrs_len);
    bool old = ch->type == CORRAL_EV_DELETED
                   ? corral__filter_match(&w->filter, ch->attrs, ch->attrs_len)
                   : ch->type == CORRAL_EV_MODIFIED && ch->prev_attrs &&
                         corral__filter_match(&w->filter, ch->prev_attrs, ch->prev_attrs_len);
    if (ch->type == CORRAL_EV_DELETED) {
        if (old)
            emit(w, "DELETED", ch->json, ch->len);
    } else if (cur) {
        emit(w, old ? "MODIFIED" : "ADDED", ch->json, ch->len);
    } else if (old) {
        const char *prev = ch->prev_json;
        size_t prev_len = ch->prev_len;
        corral_arena_t a;
        corral_arena_init(&a);
        if (!prev && ch->prev_rev)
            corral_store_log_get(w->loop->rd, ch->prev_rev, &a, &prev, &prev_len);
        emit_prev(w, prev, prev_len, ch->rev, ch->json, ch->len);
        corral_arena_fini(&a);
    }
}

static bool over_limit(corral__watch_t *w)
{
    return corral__conn_pending(w->conn) > w->loop->srv->opts.watch_buffer;
}

static int disk_row(void *arg, const corral_store_logrow_t *row)
{
    corral__watch_t *w = arg;
    change_t ch = {row->rev,        row->type,          row->ns, row->json, row->json_len,
                   row->attrs,      row->attrs_len,     NULL,    0,         row->prev_rev,
                   row->prev_attrs, row->prev_attrs_len};
    deliver(w, &ch);
    return 0;
}

/* Read the on-disk log up to where the ring starts. Returns false when the
 * watcher ended. */
static bool pump_disk(corral__watch_t *w)
{
    corral_store_t *st = w->loop->srv->store;
    while (w->disk && !over_limit(w)) {
        int64_t first = 0;
        size_t n = 0;
        corral_store_event_t *probe[1];
        corral_store_ring_get(st, INT64_MAX, probe, 0, &n, &first);
        if (w->cursor >= first) {
            w->disk = false;
            break;
        }
        int64_t last = 0;
        int rc = corral_store_log_scan(w->loop->rd, w->res->key, w->cursor - 1, first - 1,
                                       DISK_BATCH, disk_row, w, &last);
        if (rc == CORRAL_STORE_ECOMPACTED) {
            expire(w, w->cursor - 1, corral_store_compacted(st));
            return false;
        }
        if (rc != 0)
            return true; /* try again on the next wake-up */
        if (last < w->cursor)
            break; /* nothing committed beyond the cursor yet */
        w->cursor = last + 1;
    }
    return true;
}

/* Deliver what the ring holds beyond the cursor. Returns false when the
 * watcher ended. */
static bool pump_ring(corral__watch_t *w)
{
    corral_store_t *st = w->loop->srv->store;
    corral_store_event_t *evs[RING_BATCH];
    while (!over_limit(w)) {
        size_t n = 0;
        int64_t first = 0;
        if (corral_store_ring_get(st, w->cursor, evs, RING_BATCH, &n, &first) != 0) {
            if (!w->stalled && w->cursor - 1 >= corral_store_compacted(st)) {
                w->disk = true; /* just started, behind the ring: read the log */
                return true;
            }
            /* Overwritten while this watcher was stalled: it cannot catch up. */
            expire(w, w->cursor - 1, first - 1);
            return false;
        }
        for (size_t i = 0; i < n; i++) {
            const corral_store_event_t *ev = evs[i];
            if (strcmp(ev->resource, w->res->key) == 0) {
                change_t ch = {ev->rev,      ev->type,  ev->ns,         ev->json,
                               ev->json_len, ev->attrs, ev->attrs_len,  ev->prev_json,
                               ev->prev_len, 0,         ev->prev_attrs, ev->prev_attrs_len};
                deliver(w, &ch);
            }
            w->cursor = ev->rev + 1;
            corral_store_event_unref(evs[i]);
        }
        if (n < RING_BATCH) {
            w->stalled = false; /* caught up */
            break;
        }
    }
    return true;
}

static void pump(corral__watch_t *w)
{
    if (w->ended || w->snap)
        return; /* ended, or still sending the initial events */
    if (w->future) {
        if (corral_store_revision(w->loop->srv->store) < w->future)
            return; /* not there yet; on_future ends the wait */
        w->future = 0;
        if (w->future_ev)
            event_del(w->future_ev);
    }
    if (over_limit(w)) {
        w->paused = w->stalled = true;
        return;
    }
    w->paused = false;
    for (int i = 0; i < 2; i++) {
        /* disk, then ring; the ring may send a fresh watcher back to disk once */
        if (w->disk && !pump_disk(w))
            return;
        if (!w->disk && !pump_ring(w))
            return;
        if (!w->disk)
            break;
    }
    if (over_limit(w))
        w->paused = w->stalled = true;
}

void corral__watch_pump(corral__loop_t *loop)
{
    corral__watch_t *w = loop->watchers;
    while (w) {
        corral__watch_t *next = w->next;
        if (!w->paused)
            pump(w);
        w = next;
    }
}

void corral__watch_writable(corral__watch_t *w)
{
    if (w->paused && !over_limit(w))
        pump(w);
}

/* --- timers ---------------------------------------------------------------------------- */

static void on_timeout(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    watch_end(arg);
}

static void on_bookmark(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    corral__watch_t *w = arg;
    if (w->disk || w->paused || w->snap)
        return; /* a bookmark must not run ahead of events still to send */
    const corral_kind_info_t *k = w->res->info;
    char obj[256];
    int n = snprintf(obj, sizeof(obj),
                     "{\"kind\":\"%s\",\"apiVersion\":\"%s\",\"metadata\":{\"resourceVersion\":"
                     "\"%lld\"}}",
                     k->name, k->api_version, (long long)(w->cursor - 1));
    emit(w, "BOOKMARK", obj, (size_t)n);
}

/* A watch at a resourceVersion the store has not reached: kube-apiserver's
 * watch cache waits a few seconds for it, then answers with an ERROR event
 * carrying 504 "Too large resource version" and ends the stream. */
static void on_future(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    corral__watch_t *w = arg;
    int64_t cur = corral_store_revision(w->loop->srv->store);
    if (!w->future || cur >= w->future) {
        pump(w);
        return;
    }
    char b[512];
    int n = snprintf(b, sizeof(b),
                     "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":"
                     "\"Failure\",\"message\":\"Too large resource version: %lld, current: %lld\","
                     "\"reason\":\"Timeout\",\"details\":{\"causes\":[{\"reason\":"
                     "\"ResourceVersionTooLarge\",\"message\":\"Too large resource version\"}],"
                     "\"retryAfterSeconds\":1},\"code\":504}",
                     (long long)w->future, (long long)cur);
    emit(w, "ERROR", b, (size_t)n);
    watch_end(w);
}

/* --- starting a watch --------------------------------------------------------------------- */

static int initial_row(void *arg, const corral_store_row_t *row)
{
    corral__watch_t *w = arg;
    if (corral__filter_match(&w->filter, row->attrs, row->attrs_len))
        emit(w, "ADDED", row->json, row->json_len);
    if (w->snap && corral__mono_us() - w->slice_t0 >= CORRAL__SLICE_US)
        return CORRAL_STORE_PAUSE;
    return 0;
}

/* One slice of the initial events; after the last, the changes made since
 * the snapshot follow. A read error ends the initial list where it is (as
 * before: the events sent so far, then the changes). */
static void initial_slice(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    corral__watch_t *w = arg;
    w->slice_t0 = corral__mono_us();
    if (corral_store_list_next(w->snap, initial_row, w) == 1) {
        corral__later(w->loop, &w->init_ev, initial_slice, w);
        return;
    }
    corral__snap_give(w->loop, w->snap);
    w->snap = NULL;
    w->cursor = w->snap_rev + 1;
    pump(w);
}

/* Send the current objects as ADDED events, then continue after them: in
 * slices from a snapshot reader when the loop has one to spare, else at
 * once. The events are queued whatever the socket's backlog (as before),
 * so that the snapshot is not held open by a slow reader. */
static void initial_list(corral__req_t *r, corral__watch_t *w)
{
    int64_t snap = 0;
    w->snap = corral__snap_take(r->loop);
    if (w->snap &&
        corral_store_list_begin(w->snap, w->res->key, w->ns, NULL, NULL, &w->snap_rev) == 0) {
        initial_slice(-1, 0, w);
        return;
    }
    corral__snap_give(r->loop, w->snap);
    w->snap = NULL;
    corral_store_list(corral__rd(r), w->res->key, w->ns, NULL, NULL, initial_row, w, &snap);
    w->cursor = snap + 1;
    pump(w);
}

static bool watch_params(corral__req_t *r, corral__watch_t *w, const char **rv, int64_t *timeout)
{
    bool set = false;
    if (!corral__filter_parse(r, &w->filter) ||
        !corral__param_bool(r, "allowWatchBookmarks", &w->bookmarks) ||
        !corral__param_int(r, "timeoutSeconds", timeout, &set))
        return false;
    if (!set) {
        /* kube-apiserver: a random timeout between 30 and 60 minutes. */
        unsigned short rnd = 0;
        if (getrandom(&rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
            rnd = 0;
        *timeout = 1800 + rnd % 1800;
    }
    /* Timers further out than a year are a year (libevent adds them to now). */
    if (*timeout > (int64_t)366 * 86400)
        *timeout = (int64_t)366 * 86400;
    *rv = corral__param(r, "resourceVersion");
    int64_t n = 0;
    if (*rv && **rv && !corral__parse_u63(*rv, &n)) {
        corral__status(r, 400, "BadRequest", NULL, NULL, "invalid resourceVersion: \"%.64s\"", *rv);
        return false;
    }
    const char *match = corral__param(r, "resourceVersionMatch");
    if (match && *match) {
        /* Upstream: resourceVersionMatch is for lists, not watches. */
        corral__status(r, 400, "BadRequest", NULL, NULL,
                       "resourceVersionMatch is forbidden for watch");
        return false;
    }
    return true;
}

static void start_timers(corral__watch_t *w, int64_t timeout)
{
    struct event_base *base = w->loop->base;
    if (timeout > 0) {
        w->timeout_ev = evtimer_new(base, on_timeout, w);
        struct timeval tv = {(time_t)timeout, 0};
        evtimer_add(w->timeout_ev, &tv);
    }
    if (w->bookmarks) {
        w->bookmark_ev = event_new(base, -1, EV_PERSIST, on_bookmark, w);
        int ms = w->loop->srv->opts.bookmark_ms;
        struct timeval tv = {ms / 1000, (suseconds_t)(ms % 1000) * 1000};
        event_add(w->bookmark_ev, &tv);
    }
}

void corral__h_watch(corral__req_t *r)
{
    corral__watch_t *w = corral_calloc(1, sizeof(*w));
    const char *rv = NULL;
    int64_t timeout = 0;
    if (!watch_params(r, w, &rv, &timeout)) {
        corral_free(w);
        return;
    }
    w->loop = r->loop;
    w->conn = r->conn;
    w->res = r->res;
    w->table = corral__table_mode(r);
    w->ns = r->res->info->namespaced ? r->ns : NULL;
    w->pb = !w->table && corral__want_pb(r) &&
            corral_pb_has_kind(r->res->info->api_version, r->res->info->name);
    if (w->pb)
        corral__stream_start_as(r, 200, CORRAL__PB_WATCH_MEDIA);
    else
        corral__stream_start(r);
    r->hctx = w;
    w->next = r->loop->watchers;
    if (w->next)
        w->next->prev = w;
    r->loop->watchers = w;
    start_timers(w, timeout);
    corral_store_t *st = r->srv->store;
    if (!rv || !*rv || strcmp(rv, "0") == 0) {
        initial_list(r, w);
        return;
    }
    int64_t n = 0;
    corral__parse_u63(rv, &n); /* checked by watch_params */
    if (n < corral_store_compacted(st)) {
        expire(w, n, corral_store_compacted(st));
        return;
    }
    w->cursor = n < INT64_MAX ? n + 1 : INT64_MAX;
    int64_t first = 0;
    size_t got = 0;
    corral_store_event_t *probe[1];
    corral_store_ring_get(st, INT64_MAX, probe, 0, &got, &first);
    w->disk = w->cursor < first;
    if (n > corral_store_revision(st)) {
        w->future = n;
        w->future_ev = evtimer_new(r->loop->base, on_future, w);
        int ms = r->srv->opts.future_rv_wait_ms;
        struct timeval tv = {ms / 1000, (suseconds_t)(ms % 1000) * 1000};
        evtimer_add(w->future_ev, &tv);
    }
    pump(w);
}
