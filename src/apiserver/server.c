/*
 * The API server's HTTP layer on libevent (chosen over libmicrohttpd by the
 * measurement in docs/benchmarks.md; reasons in docs/decisions.md). Each of
 * a few loop threads accepts from its own SO_REUSEPORT socket and owns its
 * connections; requests are framed by corral_http_parse_request (so errors
 * such as 413 get proper Status bodies, and the parser is fuzzed), answered
 * by the handlers of routes.c, and written back through bufferevents.
 *
 * A connection serves one request at a time (pipelined requests wait in the
 * input buffer). A handler either replies at once, or submits store writes
 * and replies when they complete (the writer thread posts completions to the
 * loop's queue and wakes it), or turns the connection into a chunked watch
 * stream. A client that disconnects while its write is in flight leaves the
 * connection "dead" until the write completes, so nothing is freed under the
 * writer's feet.
 *
 * HTTPS (--tls-cert-file/--tls-private-key-file) puts an OpenSSL filter
 * (bufferevent_openssl) under the same connection code: one SSL_CTX for the
 * server, one SSL per connection, TLS 1.2 or later.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent_ssl.h>
#include <event2/listener.h>
#include <event2/thread.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "apiserver/apiserver_int.h"
#include "corral/pb.h"
#include "corral/net.h"

#define IDLE_TIMEOUT_S  300
#define READ_HIGH_WATER ((size_t)8 << 20)

enum { ST_HEAD, ST_BODY, ST_HANDLING, ST_STREAM, ST_CLOSING };

struct corral__conn {
    corral__loop_t *loop;
    struct bufferevent *bev;
    corral__conn_t *prev, *next; /* the loop's connections */
    int state;
    bool dead;        /* the socket is gone; freed once no op is pending */
    bool in_process;  /* conn_process is on the stack */
    bool close_after; /* close once this response is written */
    bool chunked_out; /* the current stream uses chunked framing */
    corral_arena_t arena;
    corral_http_request_t http;
    corral_buf_t body;
    corral_http_chunked_t chunk;
    corral__req_t req;
    int64_t t0_us;
    int code;
    bool longrunning; /* a stream counted in apiserver_longrunning_requests */
};

static pthread_once_t evthread_once = PTHREAD_ONCE_INIT;

static void evthread_init(void)
{
    evthread_use_pthreads();
    signal(SIGPIPE, SIG_IGN);
}

int64_t corral__mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* --- connections -------------------------------------------------------------------- */

static void conn_process(corral__conn_t *c);

/* Count the request in the server's metrics (before c->req is reset). */
static void count_request(corral__conn_t *c)
{
    if (c->req.method && c->req.srv)
        corral__apimetrics_request(&c->req, c->code, c->t0_us, c->longrunning);
    if (c->longrunning) {
        corral__apimetrics_longrunning(&c->req, -1);
        c->longrunning = false;
    }
}

static void conn_free(corral__conn_t *c)
{
    corral__loop_t *loop = c->loop;
    if (c->longrunning)
        count_request(c);
    if (c->req.cleanup)
        c->req.cleanup(&c->req);
    if (c->prev)
        c->prev->next = c->next;
    else
        loop->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    loop->nconns--;
    if (c->bev)
        bufferevent_free(c->bev);
    corral_buf_fini(&c->req.headers);
    corral_buf_fini(&c->body);
    corral_arena_fini(&c->arena);
    corral_free(c);
}

/* Drop the socket. The connection itself goes when no op is in flight. */
static void conn_close(corral__conn_t *c)
{
    if (c->state == ST_STREAM && c->req.hctx) {
        if (c->req.stream_closed)
            c->req.stream_closed(&c->req);
        else
            corral__watch_closed(c->req.hctx);
        c->req.hctx = NULL;
    }
    if (c->bev) {
        bufferevent_free(c->bev);
        c->bev = NULL;
    }
    c->dead = true;
    if (c->req.pending == 0)
        conn_free(c);
}

static void set_read_timeout(corral__conn_t *c, bool on)
{
    struct timeval tv = {IDLE_TIMEOUT_S, 0};
    bufferevent_set_timeouts(c->bev, on ? &tv : NULL, NULL);
}

static void log_request(corral__conn_t *c)
{
    if (!c->loop->srv->opts.log_requests || !c->req.method)
        return;
    fprintf(stderr, "apiserver: %s %s%s%.*s %d %.1fms\n", c->req.method, c->req.path,
            c->req.query ? "?" : "", (int)(c->req.query ? c->req.query_len : 0),
            c->req.query ? c->req.query : "", c->code,
            (double)(corral__mono_us() - c->t0_us) / 1000.0);
}

/* The response is queued: reset for the next request on this connection. */
static void finish_request(corral__conn_t *c)
{
    log_request(c);
    count_request(c);
    bool keep = c->http.keep_alive && !c->close_after;
    corral_buf_t headers = c->req.headers;
    corral_buf_reset(&headers);
    memset(&c->req, 0, sizeof(c->req));
    c->req.headers = headers;
    corral_buf_reset(&c->body);
    memset(&c->chunk, 0, sizeof(c->chunk));
    corral_arena_reset(&c->arena);
    if (c->dead)
        return;
    if (!keep) {
        c->state = ST_CLOSING;
        bufferevent_disable(c->bev, EV_READ);
        if (evbuffer_get_length(bufferevent_get_output(c->bev)) == 0)
            conn_close(c);
        return;
    }
    c->state = ST_HEAD;
    set_read_timeout(c, true);
    bufferevent_setwatermark(c->bev, EV_WRITE, 0, 0);
    if (!c->in_process)
        conn_process(c);
}

static void put_head(corral__conn_t *c, int code, const char *ctype, const char *framing)
{
    struct evbuffer *out = bufferevent_get_output(c->bev);
    c->code = code;
    evbuffer_add_printf(out, "HTTP/1.%d %d %s\r\n", c->http.minor ? 1 : 0, code,
                        corral_http_reason(code));
    if (ctype)
        evbuffer_add_printf(out, "Content-Type: %s\r\n", ctype);
    evbuffer_add_printf(out, "Cache-Control: no-cache, private\r\n%s", framing);
    if (c->req.headers.len)
        evbuffer_add(out, c->req.headers.p, c->req.headers.len);
    if (!c->http.keep_alive || c->close_after)
        evbuffer_add_printf(out, "Connection: close\r\n");
    else if (c->http.minor == 0)
        evbuffer_add_printf(out, "Connection: keep-alive\r\n");
    evbuffer_add(out, "\r\n", 2);
}

/* On a worker: keep the answer for the loop to send. */
static void stash_reply(corral__req_t *r, int code, const char *ctype, const char *body, size_t len)
{
    r->stashed = true;
    r->stash_code = code;
    r->stash_ctype = ctype ? corral_arena_strdup(r->a, ctype) : NULL;
    corral_buf_reset(&r->stash);
    corral_buf_append(&r->stash, body ? body : "", len);
}

void corral__reply(corral__req_t *r, int code, const char *ctype, const char *body, size_t len)
{
    if (ctype && !strcmp(ctype, "application/json") && corral__want_pb(r)) {
        corral_buf_t pb;
        corral_buf_init(&pb);
        if (corral__pb_body(r, body, len, &pb)) {
            corral__reply_buf(r, code, &pb); /* (protobuf now: not converted again) */
            return;
        }
        corral_buf_fini(&pb);
    }
    corral__conn_t *c = r->conn;
    if (r->on_worker) {
        stash_reply(r, code, ctype, body, len);
        return;
    }
    if (!c->dead) {
        char framing[64];
        snprintf(framing, sizeof(framing), "Content-Length: %zu\r\n", len);
        put_head(c, code, ctype, framing);
        if (len)
            evbuffer_add(bufferevent_get_output(c->bev), body, len);
    }
    finish_request(c);
}

static void free_buf(const void *data, size_t len, void *extra)
{
    (void)len;
    (void)extra;
    corral_free((void *)data);
}

void corral__reply_buf(corral__req_t *r, int code, corral_buf_t *b)
{
    corral__conn_t *c = r->conn;
    const char *ctype = "application/json";
    if (b->len >= 4 && !memcmp(b->p, "k8s\0", 4)) { /* protobuf already (reply's) */
        ctype = CORRAL_PB_MEDIA;
    } else if (corral__want_pb(r)) {
        corral_buf_t pb;
        corral_buf_init(&pb);
        if (corral__pb_body(r, b->p, b->len, &pb)) {
            corral_buf_fini(b);
            *b = pb;
            ctype = CORRAL_PB_MEDIA;
        } else {
            corral_buf_fini(&pb);
        }
    }
    if (r->on_worker) {
        stash_reply(r, code, ctype, b->p, b->len);
        corral_buf_fini(b); /* reply_buf owns b's contents */
        return;
    }
    size_t len = b->len;
    char *data = corral_buf_steal(b);
    if (!c->dead) {
        char framing[64];
        snprintf(framing, sizeof(framing), "Content-Length: %zu\r\n", len);
        put_head(c, code, ctype, framing);
        /* Large lists go out without a copy. */
        if (data && len)
            evbuffer_add_reference(bufferevent_get_output(c->bev), data, len, free_buf, NULL);
        else
            corral_free(data);
    } else {
        corral_free(data);
    }
    finish_request(c);
}

void corral__reply_json(corral__req_t *r, int code, const char *json, size_t len)
{
    corral__reply(r, code, "application/json", json, len);
}

void corral__stream_start(corral__req_t *r)
{
    corral__stream_start_as(r, 200, "application/json");
}

void corral__stream_start_as(corral__req_t *r, int code, const char *ctype)
{
    corral__conn_t *c = r->conn;
    c->state = ST_STREAM;
    c->longrunning = true;
    corral__apimetrics_longrunning(r, 1);
    set_read_timeout(c, false);
    /* HTTP/1.0 has no chunks: the stream ends when the connection closes. */
    c->chunked_out = c->http.minor == 1;
    if (!c->chunked_out)
        c->close_after = true;
    /* Wake the watcher when half of its allowance has drained. */
    bufferevent_setwatermark(c->bev, EV_WRITE, r->srv->opts.watch_buffer / 2, 0);
    /* Bound what the kernel queues for one stream too, so that a stalled
     * reader is noticed (and dropped) instead of absorbing megabytes. */
    int sz = (int)(r->srv->opts.watch_buffer < (64 << 10) ? (64 << 10) : r->srv->opts.watch_buffer);
    setsockopt(bufferevent_getfd(c->bev), SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
    put_head(c, code, ctype, c->chunked_out ? "Transfer-Encoding: chunked\r\n" : "");
}

void corral__stream_write(corral__conn_t *c, const char *data, size_t len)
{
    if (c->dead || !c->bev || len == 0)
        return;
    struct evbuffer *out = bufferevent_get_output(c->bev);
    if (c->chunked_out)
        evbuffer_add_printf(out, "%zx\r\n", len);
    evbuffer_add(out, data, len);
    if (c->chunked_out)
        evbuffer_add(out, "\r\n", 2);
}

void corral__stream_writev(corral__conn_t *c, const struct iovec *iov, int n)
{
    if (c->dead || !c->bev)
        return;
    size_t len = 0;
    for (int i = 0; i < n; i++)
        len += iov[i].iov_len;
    if (len == 0)
        return;
    struct evbuffer *out = bufferevent_get_output(c->bev);
    if (c->chunked_out)
        evbuffer_add_printf(out, "%zx\r\n", len);
    for (int i = 0; i < n; i++)
        evbuffer_add(out, iov[i].iov_base, iov[i].iov_len);
    if (c->chunked_out)
        evbuffer_add(out, "\r\n", 2);
}

void corral__stream_end(corral__conn_t *c)
{
    if (!c->dead && c->bev && c->chunked_out)
        evbuffer_add(bufferevent_get_output(c->bev), "0\r\n\r\n", 5);
    c->req.hctx = NULL;
    finish_request(c);
}

size_t corral__conn_pending(corral__conn_t *c)
{
    return c->bev ? evbuffer_get_length(bufferevent_get_output(c->bev)) : 0;
}

struct bufferevent *corral__conn_bev(corral__conn_t *c)
{
    return c->bev;
}

corral__req_t *corral__conn_req(corral__conn_t *c)
{
    return &c->req;
}

void corral__conn_close_after_write(corral__conn_t *c)
{
    c->close_after = true;
}

/* An error found while framing the request: answer and close. */
static void frame_error(corral__conn_t *c, int code, const char *reason, const char *msg)
{
    c->close_after = true;
    c->req.conn = c;
    c->req.loop = c->loop;
    c->req.srv = c->loop->srv;
    c->req.a = &c->arena;
    if (!c->http.method) {
        c->http.minor = 1;
        c->http.keep_alive = false;
    }
    corral__status(&c->req, code, reason, NULL, NULL, "%s", msg);
}

/* Build c->req from the framed request and run its handler. */
static void dispatch(corral__conn_t *c)
{
    corral__req_t *r = &c->req;
    c->state = ST_HANDLING;
    set_read_timeout(c, false);
    r->conn = c;
    r->loop = c->loop;
    r->srv = c->loop->srv;
    r->a = &c->arena;
    r->http = &c->http;
    r->method = corral_arena_strndup(r->a, c->http.method, c->http.method_len);
    r->body = c->body.p ? c->body.p : "";
    r->body_len = c->body.len;
    const char *t = c->http.target;
    size_t tl = c->http.target_len;
    const char *q = memchr(t, '?', tl);
    size_t pl = q ? (size_t)(q - t) : tl;
    if (q) {
        r->query = corral_arena_strndup(r->a, q + 1, tl - pl - 1);
        r->query_len = tl - pl - 1;
    }
    char *path = corral_arena_alloc(r->a, pl + 1);
    r->path = "";
    if (corral_http_unescape(t, pl, false, path) < 0) {
        corral__status(r, 400, "BadRequest", NULL, NULL, "malformed request path");
        return;
    }
    r->path = path;
    c->t0_us = corral__mono_us();
    corral__dispatch(r);
}

/* Frame the head. Returns true when the caller should continue. */
static bool read_head(corral__conn_t *c, struct evbuffer *in)
{
    size_t n = evbuffer_get_length(in);
    if (n == 0)
        return false;
    size_t look = n < CORRAL__MAX_HEAD + 1 ? n : CORRAL__MAX_HEAD + 1;
    const char *p = (const char *)evbuffer_pullup(in, (ssize_t)look);
    int rc = corral_http_parse_request(p, look, CORRAL__MAX_HEAD, &c->http);
    if (rc == CORRAL_EAGAIN)
        return false;
    if (rc < 0) {
        memset(&c->http, 0, sizeof(c->http));
        if (rc == CORRAL_ETOOBIG)
            frame_error(c, 431, "RequestHeaderFieldsTooLarge", "request header too large");
        else if (rc == CORRAL_EUNSUPPORTED)
            frame_error(c, 501, "NotImplemented", "unsupported transfer encoding");
        else
            frame_error(c, 400, "BadRequest", "malformed HTTP request");
        return false;
    }
    /* Keep the head in the arena: the parsed strings point into it. */
    char *head = corral_arena_strndup(&c->arena, p, (size_t)rc);
    corral_http_parse_request(head, (size_t)rc, CORRAL__MAX_HEAD, &c->http);
    evbuffer_drain(in, (size_t)rc);
    if (c->http.content_length > (int64_t)CORRAL_APISERVER_MAX_BODY) {
        frame_error(c, 413, "RequestEntityTooLarge", "Request entity too large: limit is 3145728");
        return false;
    }
    if (c->http.expect_continue && (c->http.content_length > 0 || c->http.chunked))
        evbuffer_add_printf(bufferevent_get_output(c->bev), "HTTP/1.1 100 Continue\r\n\r\n");
    c->state = ST_BODY;
    return true;
}

/* Collect the body. Returns true when the request is complete. */
static bool read_body(corral__conn_t *c, struct evbuffer *in)
{
    size_t n = evbuffer_get_length(in);
    if (c->http.chunked) {
        if (n == 0)
            return false;
        const char *p = (const char *)evbuffer_pullup(in, -1);
        size_t used = 0;
        int rc =
            corral_http_chunked_feed(&c->chunk, p, n, &used, &c->body, CORRAL_APISERVER_MAX_BODY);
        evbuffer_drain(in, used);
        if (rc == CORRAL_ETOOBIG)
            frame_error(c, 413, "RequestEntityTooLarge",
                        "Request entity too large: limit is 3145728");
        else if (rc < 0)
            frame_error(c, 400, "BadRequest", "malformed chunked request body");
        return rc == 1;
    }
    size_t want = c->http.content_length > 0 ? (size_t)c->http.content_length : 0;
    if (n < want)
        return false;
    if (want) {
        corral_buf_reset(&c->body);
        corral_buf_append(&c->body, evbuffer_pullup(in, (ssize_t)want), want);
        evbuffer_drain(in, want);
    }
    return true;
}

static void conn_process(corral__conn_t *c)
{
    c->in_process = true;
    while (!c->dead && (c->state == ST_HEAD || c->state == ST_BODY)) {
        struct evbuffer *in = bufferevent_get_input(c->bev);
        if (c->state == ST_HEAD && !read_head(c, in))
            break;
        if (c->state != ST_BODY)
            break;
        if (!read_body(c, in))
            break;
        dispatch(c);
    }
    c->in_process = false;
    if (c->dead && c->req.pending == 0 && c->bev == NULL)
        conn_free(c);
}

static void read_cb(struct bufferevent *bev, void *arg)
{
    (void)bev;
    corral__conn_t *c = arg;
    if (c->state == ST_HEAD || c->state == ST_BODY)
        conn_process(c);
}

static void write_cb(struct bufferevent *bev, void *arg)
{
    corral__conn_t *c = arg;
    if (c->state == ST_CLOSING && evbuffer_get_length(bufferevent_get_output(bev)) == 0)
        conn_close(c);
    else if (c->state == ST_STREAM && c->req.hctx && c->req.stream_writable)
        c->req.stream_writable(&c->req);
    else if (c->state == ST_STREAM && c->req.hctx)
        corral__watch_writable(c->req.hctx);
}

static void event_cb(struct bufferevent *bev, short what, void *arg)
{
    (void)bev;
    corral__conn_t *c = arg;
    if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR | BEV_EVENT_TIMEOUT))
        conn_close(c);
}

static void accept_cb(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int salen,
                      void *arg)
{
    (void)l;
    (void)sa;
    (void)salen;
    corral__loop_t *loop = arg;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    corral__conn_t *c = corral_calloc(1, sizeof(*c));
    c->loop = loop;
    corral_arena_init(&c->arena);
    corral_buf_init(&c->body);
    corral_buf_init(&c->req.headers);
    if (loop->srv->tls) {
        SSL *ssl = SSL_new(loop->srv->tls);
        c->bev = ssl ? bufferevent_openssl_socket_new(
                           loop->base, fd, ssl, BUFFEREVENT_SSL_ACCEPTING, BEV_OPT_CLOSE_ON_FREE)
                     : NULL;
        if (c->bev) /* clients that close without close_notify are not errors */
            bufferevent_openssl_set_allow_dirty_shutdown(c->bev, 1);
        else if (ssl)
            SSL_free(ssl);
    } else {
        c->bev = bufferevent_socket_new(loop->base, fd, BEV_OPT_CLOSE_ON_FREE);
    }
    if (!c->bev) {
        close(fd);
        corral_arena_fini(&c->arena);
        corral_free(c);
        return;
    }
    c->prev = NULL;
    c->next = loop->conns;
    if (loop->conns)
        loop->conns->prev = c;
    loop->conns = c;
    loop->nconns++;
    bufferevent_setcb(c->bev, read_cb, write_cb, event_cb, c);
    bufferevent_setwatermark(c->bev, EV_READ, 0, READ_HIGH_WATER);
    set_read_timeout(c, true);
    bufferevent_enable(c->bev, EV_READ | EV_WRITE);
}

/* --- store completions ------------------------------------------------------------- */

static void op_done(corral_store_op_t *op)
{
    corral__req_t *r = op->ctx;
    corral__loop_t *loop = r->loop;
    pthread_mutex_lock(&loop->mu);
    op->next = NULL;
    if (loop->done_tail)
        loop->done_tail->next = op;
    else
        loop->done_head = op;
    loop->done_tail = op;
    pthread_mutex_unlock(&loop->mu);
    event_active(loop->wake, EV_READ, 0);
}

void corral__submit(corral__req_t *r, corral_store_op_t *op)
{
    op->done = op_done;
    op->ctx = r;
    if (r->on_worker) { /* submitted by the loop once the handler is back */
        op->next = NULL;
        if (r->deferred_tail)
            r->deferred_tail->next = op;
        else
            r->deferred_head = op;
        r->deferred_tail = op;
        return;
    }
    r->pending++;
    corral_store_submit(r->srv->store, op);
}

static void complete(corral_store_op_t *op)
{
    corral__req_t *r = op->ctx;
    corral__conn_t *c = r->conn;
    r->pending--;
    if (c->dead) {
        corral_store_op_release(op);
        if (r->pending == 0)
            conn_free(c);
        return;
    }
    r->cont(r, op);
}

/* --- workers ------------------------------------------------------------------------------ */

typedef void (*handler_fn)(corral__req_t *r);

static void *worker_main(void *arg)
{
    corral_apiserver_t *s = arg;
    pthread_mutex_lock(&s->wmu);
    for (;;) {
        while (!s->whead && !s->wstop)
            pthread_cond_wait(&s->wcv, &s->wmu);
        corral__req_t *r = s->whead;
        if (!r)
            break; /* stopping, nothing left */
        s->whead = r->work_next;
        if (!s->whead)
            s->wtail = NULL;
        bool stop = s->wstop;
        pthread_mutex_unlock(&s->wmu);
        if (!stop)
            r->handler(r); /* a stopping server answers nothing: the loop drops it */
        corral__loop_t *loop = r->loop;
        pthread_mutex_lock(&loop->mu);
        r->work_next = NULL;
        if (loop->wdone_tail)
            loop->wdone_tail->work_next = r;
        else
            loop->wdone_head = r;
        loop->wdone_tail = r;
        pthread_mutex_unlock(&loop->mu);
        event_active(loop->wake, EV_READ, 0);
        pthread_mutex_lock(&s->wmu);
    }
    pthread_mutex_unlock(&s->wmu);
    return NULL;
}

bool corral__offload(corral__req_t *r, void (*h)(corral__req_t *r))
{
    corral_apiserver_t *s = r->srv;
    if (s->nworkers == 0)
        return false;
    corral_store_reader_t *rd = corral__snap_take(r->loop);
    if (!rd)
        return false;
    r->rd = rd;
    r->handler = h;
    r->on_worker = true;
    r->stashed = false;
    r->deferred_head = r->deferred_tail = NULL;
    corral_buf_init(&r->stash);
    r->pending++; /* the connection stays until the worker hands r back */
    pthread_mutex_lock(&s->wmu);
    r->work_next = NULL;
    if (s->wtail)
        s->wtail->work_next = r;
    else
        s->whead = r;
    s->wtail = r;
    pthread_cond_signal(&s->wcv);
    pthread_mutex_unlock(&s->wmu);
    return true;
}

/* A request back from its worker, on its loop: send the answer or submit
 * the ops the handler made, as if it had run here. */
static void worker_done(corral__req_t *r)
{
    corral__conn_t *c = r->conn;
    r->on_worker = false;
    corral__snap_give(r->loop, r->rd);
    r->rd = NULL;
    r->pending--;
    corral_store_op_t *op = r->deferred_head;
    r->deferred_head = r->deferred_tail = NULL;
    if (c->dead && op && !__atomic_load_n(&r->srv->stopping, __ATOMIC_ACQUIRE)) {
        /* The client went away after sending the whole request: the write
         * still happens, as it would have had the handler run inline. */
        corral_buf_fini(&r->stash);
        for (corral_store_op_t *next; op; op = next) {
            next = op->next;
            corral__submit(r, op);
        }
        return;
    }
    if (c->dead || __atomic_load_n(&r->srv->stopping, __ATOMIC_ACQUIRE) || (!r->stashed && !op)) {
        for (corral_store_op_t *next; op; op = next) {
            next = op->next;
            corral_store_op_release(op);
        }
        corral_buf_fini(&r->stash);
        if (c->dead) {
            if (r->pending == 0)
                conn_free(c);
        } else {
            corral__status(r, 503, "ServiceUnavailable", NULL, NULL, "the server is shutting down");
        }
        return;
    }
    if (r->stashed) {
        /* Out of r first: replying may start the connection's next request. */
        corral_buf_t answer = r->stash;
        corral_buf_init(&r->stash);
        corral__reply(r, r->stash_code, r->stash_ctype, answer.p, answer.len);
        corral_buf_fini(&answer);
        return;
    }
    corral_buf_fini(&r->stash);
    for (corral_store_op_t *next; op; op = next) {
        next = op->next;
        corral__submit(r, op);
    }
}

static void workers_done(corral__loop_t *loop)
{
    pthread_mutex_lock(&loop->mu);
    corral__req_t *r = loop->wdone_head;
    loop->wdone_head = loop->wdone_tail = NULL;
    pthread_mutex_unlock(&loop->mu);
    while (r) {
        corral__req_t *next = r->work_next;
        worker_done(r);
        r = next;
    }
}

static void workers_start(corral_apiserver_t *s)
{
    pthread_mutex_init(&s->wmu, NULL);
    pthread_cond_init(&s->wcv, NULL);
    for (int i = 0; i < CORRAL__WORKERS; i++) {
        if (pthread_create(&s->workers[i], NULL, worker_main, s) != 0)
            break;
        s->nworkers = i + 1;
    }
}

/* Stop the workers: each finishes (without running) what is queued. */
static void workers_stop(corral_apiserver_t *s)
{
    pthread_mutex_lock(&s->wmu);
    s->wstop = true;
    pthread_cond_broadcast(&s->wcv);
    pthread_mutex_unlock(&s->wmu);
    for (int i = 0; i < s->nworkers; i++)
        pthread_join(s->workers[i], NULL);
    s->nworkers = 0;
    pthread_mutex_destroy(&s->wmu);
    pthread_cond_destroy(&s->wcv);
}

/* After the loops and workers stopped: give back what requests handed
 * back too late hold (their connections go with the loop). */
static void workers_drop(corral__loop_t *loop)
{
    for (corral__req_t *r = loop->wdone_head; r; r = r->work_next) {
        corral__snap_give(loop, r->rd);
        r->rd = NULL;
        r->on_worker = false;
        r->pending--;
        for (corral_store_op_t *op = r->deferred_head, *next; op; op = next) {
            next = op->next;
            corral_store_op_release(op);
        }
        r->deferred_head = r->deferred_tail = NULL;
        corral_buf_fini(&r->stash);
    }
    loop->wdone_head = loop->wdone_tail = NULL;
}

static void wake_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    corral__loop_t *loop = arg;
    workers_done(loop);
    pthread_mutex_lock(&loop->mu);
    corral_store_op_t *op = loop->done_head;
    loop->done_head = loop->done_tail = NULL;
    pthread_mutex_unlock(&loop->mu);
    while (op) {
        corral_store_op_t *next = op->next;
        complete(op);
        op = next;
    }
    corral__watch_pump(loop);
    /* Stopping through the loop's own event: a loopbreak from another
     * thread before the loop started running would be forgotten. */
    if (__atomic_load_n(&loop->srv->stopping, __ATOMIC_ACQUIRE))
        event_base_loopbreak(loop->base);
}

static void publish_cb(void *ctx)
{
    corral__loop_t *loop = ctx;
    event_active(loop->wake, EV_READ, 0);
}

/* --- reads in slices ------------------------------------------------------------------ */

corral_store_reader_t *corral__snap_take(corral__loop_t *loop)
{
    if (loop->nsnaps >= CORRAL__MAX_SNAPS)
        return NULL;
    corral_store_reader_t *rd = NULL;
    if (loop->nspare)
        rd = loop->spare[--loop->nspare];
    else if (corral_store_reader_open(loop->srv->store, &rd) != 0)
        return NULL;
    loop->nsnaps++;
    return rd;
}

void corral__snap_give(corral__loop_t *loop, corral_store_reader_t *rd)
{
    if (!rd)
        return;
    corral_store_list_end(rd);
    loop->nsnaps--;
    if (loop->nspare < CORRAL__SPARE_SNAPS)
        loop->spare[loop->nspare++] = rd;
    else
        corral_store_reader_close(rd);
}

void corral__later(corral__loop_t *loop, struct event **ev, event_callback_fn fn, void *arg)
{
    if (!*ev)
        *ev = evtimer_new(loop->base, fn, arg);
    /* A zero timer, not event_active: timers run after the loop has polled
     * its sockets, so other connections get their turn between slices. */
    struct timeval zero = {0, 0};
    evtimer_add(*ev, &zero);
}

/* --- sockets and loops ----------------------------------------------------------------- */

static int split_hostport(const char *listen, char *host, size_t hlen, char *port, size_t plen)
{
    const char *colon = strrchr(listen, ':');
    if (!colon || colon == listen)
        return CORRAL_EINVAL;
    const char *h = listen;
    size_t n = (size_t)(colon - listen);
    if (h[0] == '[' && n >= 2 && h[n - 1] == ']') {
        h++;
        n -= 2;
    }
    if (n >= hlen || strlen(colon + 1) >= plen || !colon[1])
        return CORRAL_EINVAL;
    memcpy(host, h, n);
    host[n] = '\0';
    snprintf(port, plen, "%s", colon + 1);
    return 0;
}

/* Is host:port free? SO_REUSEPORT lets a second server (same user) share a
 * port silently, taking part of the connections, so the first loop's
 * socket is preceded by a plain bind that fails while anyone listens. */
static bool port_in_use(const struct addrinfo *ai)
{
    int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return false;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    bool busy = bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 && errno == EADDRINUSE;
    close(fd);
    return busy;
}

/* A listening socket with SO_REUSEPORT, so that each loop accepts its own
 * share of connections. *port is updated to the bound port; probe checks
 * first that nobody else listens there. */
static int listen_socket(const char *host, int *port, bool probe, char *err, size_t errlen)
{
    struct addrinfo hints, *ai = NULL;
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE;
    char ps[16];
    snprintf(ps, sizeof(ps), "%d", *port);
    if (getaddrinfo(host, ps, &hints, &ai) != 0 || !ai) {
        snprintf(err, errlen, "--listen: \"%s\" is not a numeric IP address", host);
        return -1;
    }
    if (probe && *port != 0 && port_in_use(ai)) {
        snprintf(err, errlen,
                 "listen on %s:%d: address already in use (is another server running?)", host,
                 *port);
        freeaddrinfo(ai);
        return -1;
    }
    int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    if (fd >= 0) {
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
    }
    if (fd < 0 || bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, 1024) != 0) {
        snprintf(err, errlen, "listen on %s:%d: %s", host, *port, strerror(errno));
        if (fd >= 0)
            close(fd);
        freeaddrinfo(ai);
        return -1;
    }
    freeaddrinfo(ai);
    *port = corral_net_bound_port(fd);
    return fd;
}

static int loop_init(corral_apiserver_t *s, corral__loop_t *loop, int index, const char *host,
                     char *err, size_t errlen)
{
    loop->srv = s;
    loop->index = index;
    pthread_mutex_init(&loop->mu, NULL);
    loop->base = event_base_new();
    if (!loop->base) {
        snprintf(err, errlen, "cannot create an event loop");
        return CORRAL_EIO;
    }
    int fd = listen_socket(host, &s->port, index == 0, err, errlen);
    if (fd < 0)
        return CORRAL_EIO;
    loop->listener = evconnlistener_new(loop->base, accept_cb, loop, LEV_OPT_CLOSE_ON_FREE, -1, fd);
#ifdef CORRAL_TEST_HOOKS
    if (index == corral_apiserver_test_fail_listener && loop->listener) {
        evconnlistener_free(loop->listener); /* closes fd: the socket is taken again below */
        loop->listener = NULL;
        fd = listen_socket(host, &s->port, false, err, errlen);
    }
#endif
    if (!loop->listener && fd >= 0)
        close(fd); /* the listener did not take it over */
    loop->wake = event_new(loop->base, -1, EV_PERSIST, wake_cb, loop);
    if (!loop->listener || !loop->wake) {
        snprintf(err, errlen, "cannot listen");
        return CORRAL_EIO;
    }
    event_add(loop->wake, NULL);
    if (corral_store_reader_open(s->store, &loop->rd) != 0) {
        snprintf(err, errlen, "cannot open a store reader");
        return CORRAL_EIO;
    }
    return corral_store_subscribe(s->store, publish_cb, loop);
}

static void loop_fini(corral__loop_t *loop)
{
    /* Completions that arrived after the loop stopped. */
    for (corral_store_op_t *op = loop->done_head; op; op = op->next)
        corral_store_op_release(op);
    loop->done_head = loop->done_tail = NULL;
    while (loop->conns) {
        corral__conn_t *c = loop->conns;
        if (c->state == ST_STREAM && c->req.hctx) {
            if (c->req.stream_closed)
                c->req.stream_closed(&c->req);
            else
                corral__watch_closed(c->req.hctx);
            c->req.hctx = NULL;
        }
        conn_free(c);
    }
    if (loop->listener)
        evconnlistener_free(loop->listener);
    if (loop->wake)
        event_free(loop->wake);
    if (loop->base)
        event_base_free(loop->base);
    corral_store_reader_close(loop->rd);
    while (loop->nspare)
        corral_store_reader_close(loop->spare[--loop->nspare]);
    pthread_mutex_destroy(&loop->mu);
}

static void *loop_main(void *arg)
{
    corral__loop_t *loop = arg;
    event_base_loop(loop->base, EVLOOP_NO_EXIT_ON_EMPTY);
    return NULL;
}

static int default_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 4 ? 4 : (int)n;
}

/* The server's SSL_CTX from a PEM certificate chain and key. */
static int tls_init(corral_apiserver_t *s, char *err, size_t errlen)
{
    const char *cert = s->opts.tls_cert_file, *key = s->opts.tls_key_file;
    if (!cert && !key)
        return 0;
    if (!cert || !key) {
        snprintf(err, errlen, "--tls-cert-file and --tls-private-key-file go together");
        return CORRAL_EINVAL;
    }
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    if (!ctx) {
        snprintf(err, errlen, "cannot create a TLS context");
        return CORRAL_EIO;
    }
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION);
    const char *what = NULL;
    if (SSL_CTX_use_certificate_chain_file(ctx, cert) != 1)
        what = cert;
    else if (SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1)
        what = key;
    else if (SSL_CTX_check_private_key(ctx) != 1)
        what = "the key does not match the certificate";
    if (what) {
        char ssl_err[256];
        ERR_error_string_n(ERR_get_error(), ssl_err, sizeof(ssl_err));
        snprintf(err, errlen, "TLS: %s: %s", what, ssl_err);
        SSL_CTX_free(ctx);
        return CORRAL_EINVAL;
    }
    s->tls = ctx;
    return 0;
}

/* Security options: the token file and TLS. */
static int security_init(corral_apiserver_t *s, char *err, size_t errlen)
{
    if (s->opts.token_auth_file) {
        int rc = corral_tokens_load(s->opts.token_auth_file, &s->tokens, err, errlen);
        if (rc)
            return rc;
    }
    return tls_init(s, err, errlen);
}

int corral_apiserver_new(const corral_apiserver_opts_t *opts, corral_apiserver_t **out, char *err,
                         size_t errlen)
{
    pthread_once(&evthread_once, evthread_init);
    *out = NULL;
    corral_apiserver_t *s = corral_calloc(1, sizeof(*s));
    s->opts = *opts;
    if (!s->opts.listen)
        s->opts.listen = "127.0.0.1:6443";
    if (s->opts.threads <= 0)
        s->opts.threads = default_threads();
    if (s->opts.threads > CORRAL__MAX_LOOPS)
        s->opts.threads = CORRAL__MAX_LOOPS;
    if (s->opts.bookmark_ms <= 0)
        s->opts.bookmark_ms = 60000;
    if (s->opts.future_rv_wait_ms <= 0)
        s->opts.future_rv_wait_ms = 3000;
    if (s->opts.watch_buffer == 0)
        s->opts.watch_buffer = (size_t)4 << 20;
    char port[16];
    int rc =
        split_hostport(s->opts.listen, s->listen_host, sizeof(s->listen_host), port, sizeof(port));
    if (rc) {
        snprintf(err, errlen, "--listen: want HOST:PORT, got \"%s\"", s->opts.listen);
        corral_free(s);
        return CORRAL_EINVAL;
    }
    char *end = NULL;
    long pn = strtol(port, &end, 10);
    if (port[0] < '0' || port[0] > '9' || *end || pn > 65535) {
        snprintf(err, errlen, "--listen: the port must be a number from 0 to 65535, got \"%s\"",
                 port);
        corral_free(s);
        return CORRAL_EINVAL;
    }
    s->port = (int)pn;
    s->openapi = corral__openapi_new();
    rc = security_init(s, err, errlen);
    if (rc) {
        corral_apiserver_free(s);
        return rc;
    }
    rc = corral_store_open(opts->data_dir, &opts->store, &s->store, err, errlen);
    if (rc == 0)
        corral__apimetrics_init(s);
    if (rc == 0)
        rc = corral__sa_key_init(s, err, errlen);
    if (rc == 0)
        rc = corral__bootstrap(s, err, errlen);
    if (rc == 0) {
        s->loops = corral_calloc((size_t)s->opts.threads, sizeof(*s->loops));
        for (int i = 0; i < s->opts.threads && rc == 0; i++) {
            rc = loop_init(s, &s->loops[i], i, s->listen_host, err, errlen);
            s->nloops = i + 1;
        }
    }
    if (rc == 0)
        rc = corral__bootstrap_services(s, err, errlen);
    if (rc == 0)
        corral__msrv_init(s);
    if (rc) {
        corral_apiserver_free(s);
        return rc;
    }
    *out = s;
    return 0;
}

int corral_apiserver_port(const corral_apiserver_t *s)
{
    return s->port;
}

corral_store_t *corral_apiserver_store(corral_apiserver_t *s)
{
    return s->store;
}

#ifdef CORRAL_TEST_HOOKS
int corral_apiserver_test_fail_thread = -1;
int corral_apiserver_test_fail_listener = -1;
#define THREAD_FAILS(i) ((i) == corral_apiserver_test_fail_thread)
#else
#define THREAD_FAILS(i) false
#endif

int corral_apiserver_start(corral_apiserver_t *s)
{
    /* started covers the threads already running even when a later one
     * fails: free must stop and join them before freeing their loops. */
    s->started = true;
    s->nthreads = 0;
    for (int i = 0; i < s->nloops; i++) {
        if (THREAD_FAILS(i) ||
            pthread_create(&s->loops[i].thread, NULL, loop_main, &s->loops[i]) != 0) {
            corral_apiserver_stop(s);
            corral_apiserver_wait(s);
            return CORRAL_EIO;
        }
        s->nthreads = i + 1;
    }
    workers_start(s);
    return 0;
}

void corral_apiserver_stop(corral_apiserver_t *s)
{
    if (__atomic_exchange_n(&s->stopping, true, __ATOMIC_ACQ_REL))
        return;
    for (int i = 0; i < s->nloops; i++)
        event_active(s->loops[i].wake, EV_READ, 0);
}

void corral_apiserver_wait(corral_apiserver_t *s)
{
    if (!s->started)
        return;
    for (int i = 0; i < s->nthreads; i++)
        pthread_join(s->loops[i].thread, NULL);
    s->nthreads = 0;
    s->started = false;
}

void corral_apiserver_free(corral_apiserver_t *s)
{
    if (!s)
        return;
    if (s->started) {
        corral_apiserver_stop(s);
        corral_apiserver_wait(s);
    }
    if (s->nworkers) {
        workers_stop(s);
        for (int i = 0; i < s->nloops; i++)
            workers_drop(&s->loops[i]);
    }
    corral__msrv_free(s);
    /* The writer completes what is queued (posting to the stopped loops)
     * before the loops free their connections. */
    corral_store_t *store = s->store;
    s->store = NULL;
    if (store) {
        for (int i = 0; i < s->nloops; i++) {
            corral_store_reader_close(s->loops[i].rd);
            s->loops[i].rd = NULL;
        }
        corral_store_close(store);
    }
    for (int i = 0; i < s->nloops; i++)
        loop_fini(&s->loops[i]);
    corral_free(s->loops);
    corral__apimetrics_free(s);
    corral__openapi_free(s->openapi);
    corral_tokens_free(s->tokens);
    if (s->tls)
        SSL_CTX_free(s->tls);
    corral_free(s);
}

/* --- bootstrap ----------------------------------------------------------------------------- */

/* What kube-apiserver creates at start (namespaces, system priority
 * classes), and Volcano's default queue, which Corral's scheduler serves. */
static const char *const bootstrap_objects[] = {
    "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"default\"}}",
    "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"kube-system\"}}",
    "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"kube-public\"}}",
    "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"kube-node-lease\"}}",
    ("{\"apiVersion\":\"scheduling.k8s.io/v1\",\"kind\":\"PriorityClass\",\"metadata\":{\"name\":"
     "\"system-cluster-critical\"},\"value\":2000000000,\"description\":\"Used for system "
     "critical pods that must run in the cluster, but can be moved to another node if "
     "necessary.\"}"),
    ("{\"apiVersion\":\"scheduling.k8s.io/v1\",\"kind\":\"PriorityClass\",\"metadata\":{\"name\":"
     "\"system-node-critical\"},\"value\":2000001000,\"description\":\"Used for system critical "
     "pods that must not be moved from their current node.\"}"),
    ("{\"apiVersion\":\"scheduling.volcano.sh/v1beta1\",\"kind\":\"Queue\",\"metadata\":{\"name\":"
     "\"default\"},\"spec\":{\"weight\":1,\"reclaimable\":true}}"),
    /* kube's bootstrap RBAC policy, the part that matters here: cluster-admin
     * (bound to system:masters), discovery for every authenticated user, and
     * health and version for everybody. */
    ("{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"ClusterRole\",\"metadata\":"
     "{\"name\":\"cluster-admin\",\"labels\":{\"kubernetes.io/bootstrapping\":\"rbac-defaults\"}},"
     "\"rules\":[{\"apiGroups\":[\"*\"],\"resources\":[\"*\"],\"verbs\":[\"*\"]},"
     "{\"nonResourceURLs\":[\"*\"],\"verbs\":[\"*\"]}]}"),
    ("{\"apiVersion\":\"rbac.authorization.k8s.io/"
     "v1\",\"kind\":\"ClusterRoleBinding\",\"metadata\":"
     "{\"name\":\"cluster-admin\",\"labels\":{\"kubernetes.io/bootstrapping\":\"rbac-defaults\"}},"
     "\"roleRef\":{\"apiGroup\":\"rbac.authorization.k8s.io\",\"kind\":\"ClusterRole\",\"name\":"
     "\"cluster-admin\"},\"subjects\":[{\"apiGroup\":\"rbac.authorization.k8s.io\",\"kind\":"
     "\"Group\",\"name\":\"system:masters\"}]}"),
    ("{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"ClusterRole\",\"metadata\":"
     "{\"name\":\"system:discovery\",\"labels\":{\"kubernetes.io/bootstrapping\":"
     "\"rbac-defaults\"}},\"rules\":[{\"nonResourceURLs\":[\"/api\",\"/api/*\",\"/apis\","
     "\"/apis/*\",\"/healthz\",\"/livez\",\"/openapi\",\"/openapi/*\",\"/readyz\",\"/version\","
     "\"/version/\"],\"verbs\":[\"get\"]}]}"),
    ("{\"apiVersion\":\"rbac.authorization.k8s.io/"
     "v1\",\"kind\":\"ClusterRoleBinding\",\"metadata\":"
     "{\"name\":\"system:discovery\",\"labels\":{\"kubernetes.io/bootstrapping\":"
     "\"rbac-defaults\"}},\"roleRef\":{\"apiGroup\":\"rbac.authorization.k8s.io\",\"kind\":"
     "\"ClusterRole\",\"name\":\"system:discovery\"},\"subjects\":[{\"apiGroup\":"
     "\"rbac.authorization.k8s.io\",\"kind\":\"Group\",\"name\":\"system:authenticated\"}]}"),
    ("{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"ClusterRole\",\"metadata\":"
     "{\"name\":\"system:public-info-viewer\",\"labels\":{\"kubernetes.io/bootstrapping\":"
     "\"rbac-defaults\"}},\"rules\":[{\"nonResourceURLs\":[\"/healthz\",\"/livez\",\"/readyz\","
     "\"/version\",\"/version/\",\"/ui\",\"/ui/*\"],\"verbs\":[\"get\"]}]}"),
    ("{\"apiVersion\":\"rbac.authorization.k8s.io/"
     "v1\",\"kind\":\"ClusterRoleBinding\",\"metadata\":"
     "{\"name\":\"system:public-info-viewer\",\"labels\":{\"kubernetes.io/bootstrapping\":"
     "\"rbac-defaults\"}},\"roleRef\":{\"apiGroup\":\"rbac.authorization.k8s.io\",\"kind\":"
     "\"ClusterRole\",\"name\":\"system:public-info-viewer\"},\"subjects\":[{\"apiGroup\":"
     "\"rbac.authorization.k8s.io\",\"kind\":\"Group\",\"name\":\"system:authenticated\"},"
     "{\"apiGroup\":\"rbac.authorization.k8s.io\",\"kind\":\"Group\",\"name\":"
     "\"system:unauthenticated\"}]}"),
    ("{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"ClusterRole\",\"metadata\":"
     "{\"name\":\"system:basic-user\",\"labels\":{\"kubernetes.io/bootstrapping\":"
     "\"rbac-defaults\"}},\"rules\":[{\"apiGroups\":[\"authorization.k8s.io\"],\"resources\":"
     "[\"selfsubjectaccessreviews\",\"selfsubjectrulesreviews\"],\"verbs\":[\"create\"]},"
     "{\"apiGroups\":[\"authentication.k8s.io\"],\"resources\":[\"selfsubjectreviews\"],"
     "\"verbs\":[\"create\"]}]}"),
    ("{\"apiVersion\":\"rbac.authorization.k8s.io/"
     "v1\",\"kind\":\"ClusterRoleBinding\",\"metadata\":"
     "{\"name\":\"system:basic-user\",\"labels\":{\"kubernetes.io/bootstrapping\":"
     "\"rbac-defaults\"}},\"roleRef\":{\"apiGroup\":\"rbac.authorization.k8s.io\",\"kind\":"
     "\"ClusterRole\",\"name\":\"system:basic-user\"},\"subjects\":[{\"apiGroup\":"
     "\"rbac.authorization.k8s.io\",\"kind\":\"Group\",\"name\":\"system:authenticated\"}]}"),
};

int corral__bootstrap(corral_apiserver_t *s, char *err, size_t errlen)
{
    corral_store_reader_t *rd = NULL;
    if (corral_store_reader_open(s->store, &rd) != 0) {
        snprintf(err, errlen, "cannot open a store reader");
        return CORRAL_EIO;
    }
    int rc = 0;
    /* The bootstrap ClusterRoles are reconciled (a data dir from an older
     * release gets the rules added since), as kube-apiserver does; the
     * rest is only created when absent. */
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(bootstrap_objects) && rc == 0; i++)
        rc = strstr(bootstrap_objects[i], "\"kind\":\"ClusterRole\",")
                 ? corral__put_sync(s, rd, bootstrap_objects[i], err, errlen)
                 : corral__create_sync(s, rd, bootstrap_objects[i], err, errlen);
    corral_store_reader_close(rd);
    return rc;
}
