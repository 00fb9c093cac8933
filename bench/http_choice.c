/*
 * The benchmark behind the API server's HTTP library choice (docs/decisions.md,
 * numbers in docs/benchmarks.md): the same tiny server written on
 * libmicrohttpd (two threading modes) and on libevent's evhttp, and a watch
 * client, so that both libraries face what kube-apiserver faces: many small
 * keep-alive requests (driven by wrk) while many long-lived chunked watch
 * streams each receive every event a broadcaster publishes.
 *
 *   http_choice server mhd-epoll|mhd-threads|libevent PORT [THREADS]
 *       GET /small  -> 200, a 120-byte JSON body
 *       GET /watch  -> 200, chunked; one ~1 KiB JSON line per event, carrying
 *                      the CLOCK_MONOTONIC time it was published
 *   http_choice watch PORT STREAMS SECONDS
 *       opens STREAMS watches, reads for SECONDS, prints events received and
 *       the delivery lag (publish to read) p50/p99/max
 *
 * The broadcaster publishes one event every EVENT_MS milliseconds (env, default
 * 20) to every open watch. Each watcher has a bounded queue, as the real
 * server will; a watcher that falls BACKLOG_MAX bytes behind is cut off, so a
 * stalled client cannot grow the server without bound.
 * bench/http_choice.sh runs the whole comparison.
 */
#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/thread.h>
#include <inttypes.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#define BACKLOG_MAX ((size_t)4 << 20)
#define MAX_LOOPS   16

static const char small_body[] =
    "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
    "\"status\":\"Success\",\"code\":200,\"details\":{\"name\":\"x\"}}";

static long env_long(const char *name, long dflt)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return dflt;
    char *end = NULL;
    long v = strtol(s, &end, 10);
    return *end ? dflt : v;
}

/* One event line of about 1 KiB (a small pod's JSON is 1-3 KiB). */
static size_t make_event(char *buf, size_t cap, uint64_t seq)
{
    int n = snprintf(buf, cap,
                     "{\"type\":\"MODIFIED\",\"seq\":%" PRIu64 ",\"t\":%" PRId64
                     ",\"object\":{\"kind\":\"Pod\",\"pad\":\"",
                     seq, now_ns());
    size_t len = (size_t)n;
    while (len < 1000 && len + 4 < cap)
        buf[len++] = 'x';
    memcpy(buf + len, "\"}}\n", 4);
    return len + 4;
}

/* --- watcher registry shared by all servers -------------------------------- */

typedef struct watcher {
    pthread_mutex_t mu;
    pthread_cond_t cv; /* mhd-threads: the connection thread waits here */
    char *q;           /* pending bytes */
    size_t len, cap;
    bool suspended; /* mhd-epoll: connection suspended waiting for data */
    bool dead;
    struct MHD_Connection *conn;
    struct evhttp_request *req; /* libevent */
    int loop;                   /* libevent: owning loop index */
    struct watcher *next;
} watcher_t;

static pthread_mutex_t reg_mu = PTHREAD_MUTEX_INITIALIZER;
static watcher_t *watchers;
static int mode_mhd_epoll;

static void reg_add(watcher_t *w)
{
    pthread_mutex_lock(&reg_mu);
    w->next = watchers;
    watchers = w;
    pthread_mutex_unlock(&reg_mu);
}

static void reg_remove(watcher_t *w)
{
    pthread_mutex_lock(&reg_mu);
    for (watcher_t **p = &watchers; *p; p = &(*p)->next) {
        if (*p == w) {
            *p = w->next;
            break;
        }
    }
    pthread_mutex_unlock(&reg_mu);
}

static void watcher_free(watcher_t *w)
{
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cv);
    free(w->q);
    free(w);
}

static watcher_t *watcher_new(void)
{
    watcher_t *w = calloc(1, sizeof(*w));
    if (!w)
        abort();
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    return w;
}

/* Append an event to w's queue; false when w is too far behind. */
static bool watcher_push(watcher_t *w, const char *ev, size_t n)
{
    if (w->len + n > BACKLOG_MAX)
        return false;
    if (w->len + n > w->cap) {
        w->cap = (w->len + n) * 2;
        w->q = realloc(w->q, w->cap);
        if (!w->q)
            abort();
    }
    memcpy(w->q + w->len, ev, n);
    w->len += n;
    return true;
}

/* --- libevent ---------------------------------------------------------------- */

typedef struct evloop {
    struct event_base *base;
    struct evhttp *http;
    struct event *notify; /* activated by the broadcaster */
    pthread_t thread;
    int index;
} evloop_t;

static evloop_t loops[MAX_LOOPS];
static int nloops;

static void ev_small(struct evhttp_request *req)
{
    struct evbuffer *b = evhttp_request_get_output_buffer(req);
    evbuffer_add_reference(b, small_body, sizeof(small_body) - 1, NULL, NULL);
    evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type", "application/json");
    evhttp_send_reply(req, 200, "OK", NULL);
}

static void ev_watch_closed(struct evhttp_connection *c, void *arg)
{
    (void)c;
    watcher_t *w = arg;
    reg_remove(w);
    watcher_free(w);
}

static void ev_handler(struct evhttp_request *req, void *arg)
{
    evloop_t *l = arg;
    const char *uri = evhttp_request_get_uri(req);
    if (strcmp(uri, "/small") == 0) {
        ev_small(req);
        return;
    }
    if (strcmp(uri, "/watch") != 0) {
        evhttp_send_error(req, 404, NULL);
        return;
    }
    watcher_t *w = watcher_new();
    w->req = req;
    w->loop = l->index;
    evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type", "application/json");
    evhttp_send_reply_start(req, 200, "OK");
    evhttp_connection_set_closecb(evhttp_request_get_connection(req), ev_watch_closed, w);
    reg_add(w);
}

/* Runs on the loop thread: flush every watcher of this loop. The queue is
 * moved out under the lock and written without it. */
static void ev_notify(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    evloop_t *l = arg;
    pthread_mutex_lock(&reg_mu);
    for (watcher_t *w = watchers; w; w = w->next) {
        if (w->loop != l->index)
            continue;
        pthread_mutex_lock(&w->mu);
        if (w->len) {
            struct evbuffer *b = evbuffer_new();
            evbuffer_add(b, w->q, w->len);
            w->len = 0;
            struct bufferevent *bev =
                evhttp_connection_get_bufferevent(evhttp_request_get_connection(w->req));
            if (evbuffer_get_length(bufferevent_get_output(bev)) > BACKLOG_MAX)
                w->dead = true; /* stalled client: stop feeding it */
            else
                evhttp_send_reply_chunk(w->req, b);
            evbuffer_free(b);
        }
        pthread_mutex_unlock(&w->mu);
    }
    pthread_mutex_unlock(&reg_mu);
}

static void *ev_thread(void *arg)
{
    evloop_t *l = arg;
    event_base_dispatch(l->base);
    return NULL;
}

static int listen_socket(int port, bool reuseport)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (reuseport)
        setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(fd, 1024) != 0) {
        perror("bind/listen");
        exit(1);
    }
    return fd;
}

static void start_libevent(int port, int threads)
{
    evthread_use_pthreads();
    nloops = threads;
    for (int i = 0; i < nloops; i++) {
        evloop_t *l = &loops[i];
        l->index = i;
        l->base = event_base_new();
        l->http = evhttp_new(l->base);
        evhttp_set_gencb(l->http, ev_handler, l);
        evhttp_accept_socket(l->http, listen_socket(port, true));
        l->notify = event_new(l->base, -1, EV_PERSIST, ev_notify, l);
        event_add(l->notify, NULL);
        pthread_create(&l->thread, NULL, ev_thread, l);
    }
}

static void ev_publish(void)
{
    for (int i = 0; i < nloops; i++)
        event_active(loops[i].notify, EV_WRITE, 0);
}

/* --- libmicrohttpd ------------------------------------------------------------ */

static ssize_t mhd_reader(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    watcher_t *w = cls;
    pthread_mutex_lock(&w->mu);
    if (!mode_mhd_epoll) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += 1;
        while (!w->len && !w->dead)
            if (pthread_cond_timedwait(&w->cv, &w->mu, &until) == ETIMEDOUT)
                break;
    }
    if (w->dead) {
        pthread_mutex_unlock(&w->mu);
        return MHD_CONTENT_READER_END_WITH_ERROR;
    }
    if (!w->len) {
        if (mode_mhd_epoll) {
            w->suspended = true;
            MHD_suspend_connection(w->conn);
        }
        pthread_mutex_unlock(&w->mu);
        return 0;
    }
    size_t n = w->len < max ? w->len : max;
    memcpy(buf, w->q, n);
    memmove(w->q, w->q + n, w->len - n);
    w->len -= n;
    pthread_mutex_unlock(&w->mu);
    return (ssize_t)n;
}

static void mhd_reader_free(void *cls)
{
    watcher_t *w = cls;
    reg_remove(w);
    watcher_free(w);
}

static enum MHD_Result mhd_handler(void *cls, struct MHD_Connection *c, const char *url,
                                   const char *method, const char *version, const char *upload,
                                   size_t *upload_size, void **con_cls)
{
    (void)cls;
    (void)method;
    (void)version;
    (void)upload;
    (void)upload_size;
    (void)con_cls;
    struct MHD_Response *r;
    enum MHD_Result rc;
    if (strcmp(url, "/small") == 0) {
        r = MHD_create_response_from_buffer(sizeof(small_body) - 1, (void *)small_body,
                                            MHD_RESPMEM_PERSISTENT);
        MHD_add_response_header(r, "Content-Type", "application/json");
        rc = MHD_queue_response(c, 200, r);
        MHD_destroy_response(r);
        return rc;
    }
    if (strcmp(url, "/watch") != 0) {
        r = MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
        rc = MHD_queue_response(c, 404, r);
        MHD_destroy_response(r);
        return rc;
    }
    watcher_t *w = watcher_new();
    w->conn = c;
    r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 64 * 1024, mhd_reader, w,
                                          mhd_reader_free);
    MHD_add_response_header(r, "Content-Type", "application/json");
    reg_add(w);
    rc = MHD_queue_response(c, 200, r);
    MHD_destroy_response(r);
    return rc;
}

static struct MHD_Daemon *start_mhd(int port, int threads, bool epoll)
{
    mode_mhd_epoll = epoll;
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD;
    struct MHD_Daemon *d;
    if (epoll) {
        flags |= MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_TURBO;
        d = MHD_start_daemon(flags, (uint16_t)port, NULL, NULL, mhd_handler, NULL,
                             MHD_OPTION_THREAD_POOL_SIZE, (unsigned)threads,
                             MHD_OPTION_CONNECTION_LIMIT, 20000u, MHD_OPTION_LISTEN_BACKLOG_SIZE,
                             1024u, MHD_OPTION_END);
    } else {
        flags |= MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL;
        d = MHD_start_daemon(flags, (uint16_t)port, NULL, NULL, mhd_handler, NULL,
                             MHD_OPTION_CONNECTION_LIMIT, 20000u, MHD_OPTION_LISTEN_BACKLOG_SIZE,
                             1024u, MHD_OPTION_THREAD_STACK_SIZE, (size_t)256 * 1024,
                             MHD_OPTION_END);
    }
    if (!d) {
        fprintf(stderr, "MHD_start_daemon failed\n");
        exit(1);
    }
    return d;
}

/* Publish one event to every watcher (the real server's writer thread does
 * this after each commit). */
static void publish(uint64_t seq, bool libevent)
{
    char ev[1200];
    size_t n = make_event(ev, sizeof(ev), seq);
    pthread_mutex_lock(&reg_mu);
    for (watcher_t *w = watchers; w; w = w->next) {
        pthread_mutex_lock(&w->mu);
        if (!watcher_push(w, ev, n))
            w->dead = true;
        if (w->suspended) {
            w->suspended = false;
            MHD_resume_connection(w->conn);
        }
        pthread_cond_signal(&w->cv);
        pthread_mutex_unlock(&w->mu);
    }
    pthread_mutex_unlock(&reg_mu);
    if (libevent)
        ev_publish();
}

static int run_server(const char *mode, int port, int threads)
{
    bool libevent = strcmp(mode, "libevent") == 0;
    if (libevent)
        start_libevent(port, threads);
    else if (strcmp(mode, "mhd-epoll") == 0)
        start_mhd(port, threads, true);
    else if (strcmp(mode, "mhd-threads") == 0)
        start_mhd(port, threads, false);
    else
        return 2;
    long every_ms = env_long("EVENT_MS", 20);
    for (uint64_t seq = 1;; seq++) {
        struct timespec ts = {every_ms / 1000, (every_ms % 1000) * 1000000};
        nanosleep(&ts, NULL);
        publish(seq, libevent);
    }
}

/* --- watch client -------------------------------------------------------------- */

typedef struct wconn {
    int fd;
    char carry[4096];
    size_t ncarry;
} wconn_t;

static int connect_to(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        perror("connect");
        exit(1);
    }
    static const char req[] = "GET /watch HTTP/1.1\r\nHost: x\r\n\r\n";
    if (write(fd, req, sizeof(req) - 1) != (ssize_t)(sizeof(req) - 1))
        exit(1);
    return fd;
}

typedef struct lagstats {
    int64_t *lag;
    size_t n, cap;
} lagstats_t;

/* Scan complete lines of a stream for "t":<ns> and record now - t. */
static void scan(wconn_t *c, const char *data, size_t n, lagstats_t *st, int64_t t0)
{
    for (size_t i = 0; i < n; i++) {
        char ch = data[i];
        if (c->ncarry < sizeof(c->carry) - 1)
            c->carry[c->ncarry++] = ch;
        if (ch != '\n')
            continue;
        c->carry[c->ncarry] = 0;
        const char *t = strstr(c->carry, "\"t\":");
        c->ncarry = 0;
        if (!t)
            continue;
        int64_t sent = strtoll(t + 4, NULL, 10);
        if (sent < t0)
            continue; /* published before we measured */
        if (st->n == st->cap) {
            st->cap = st->cap ? st->cap * 2 : 65536;
            st->lag = realloc(st->lag, st->cap * sizeof(int64_t));
            if (!st->lag)
                abort();
        }
        st->lag[st->n++] = now_ns() - sent;
    }
}

static int run_watch(int port, int streams, int seconds)
{
    int ep = epoll_create1(0);
    wconn_t *cs = calloc((size_t)streams, sizeof(*cs));
    if (!cs)
        abort();
    for (int i = 0; i < streams; i++) {
        cs[i].fd = connect_to(port);
        struct epoll_event e = {.events = EPOLLIN, .data.ptr = &cs[i]};
        epoll_ctl(ep, EPOLL_CTL_ADD, cs[i].fd, &e);
    }
    lagstats_t st = {NULL, 0, 0};
    int64_t t0 = now_ns() + 500000000; /* ignore the first 0.5 s (connection setup) */
    int64_t end = t0 + (int64_t)seconds * 1000000000;
    size_t closed = 0;
    static char buf[256 * 1024];
    struct epoll_event evs[256];
    while (now_ns() < end) {
        int n = epoll_wait(ep, evs, 256, 100);
        for (int i = 0; i < n; i++) {
            wconn_t *c = evs[i].data.ptr;
            ssize_t r = read(c->fd, buf, sizeof(buf));
            if (r <= 0) {
                epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
                closed++;
                continue;
            }
            scan(c, buf, (size_t)r, &st, t0);
        }
    }
    if (st.n)
        qsort(st.lag, st.n, sizeof(int64_t), cmp_i64);
    double p50 = st.n ? (double)st.lag[st.n / 2] / 1e6 : 0;
    double p99 = st.n ? (double)st.lag[st.n * 99 / 100] / 1e6 : 0;
    double mx = st.n ? (double)st.lag[st.n - 1] / 1e6 : 0;
    printf("watch: streams=%d seconds=%d events=%zu (%.0f/s) closed=%zu lag_ms p50=%.2f p99=%.2f "
           "max=%.2f\n",
           streams, seconds, st.n, (double)st.n / seconds, closed, p50, p99, mx);
    free(st.lag);
    free(cs);
    return 0;
}

int main(int argc, char **argv)
{
    signal(SIGPIPE, SIG_IGN);
    if (argc >= 4 && strcmp(argv[1], "server") == 0)
        return run_server(argv[2], (int)strtol(argv[3], NULL, 10),
                          argc > 4 ? (int)strtol(argv[4], NULL, 10) : 2);
    if (argc >= 5 && strcmp(argv[1], "watch") == 0)
        return run_watch((int)strtol(argv[2], NULL, 10), (int)strtol(argv[3], NULL, 10),
                         (int)strtol(argv[4], NULL, 10));
    fprintf(stderr, "usage: http_choice server mhd-epoll|mhd-threads|libevent PORT [THREADS]\n"
                    "       http_choice watch PORT STREAMS SECONDS\n");
    return 2;
}
