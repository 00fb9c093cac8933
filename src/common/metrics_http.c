/*
 * The metrics server (see include/corral/metrics.h): one thread running a
 * poll(2) loop over a listening socket, a wake pipe (stop) and at most
 * MAX_CONNS connections. A connection reads request heads (8 KiB at most,
 * the first within 10 s and each next one within 60 s of the last answer),
 * answers each GET with a whole body (Content-Length) and stays open for
 * the next one, as Prometheus keeps its scrape connections. Bodies are
 * built on this thread; the answer is sent as the socket takes it, and
 * nothing more is read or answered until it has gone (pipelined requests
 * wait their turn), so a slow or stalled reader costs one answer and is
 * dropped when it takes nothing for 10 s. Request bodies are not read: a
 * request that announces one is answered 400 and closed.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "corral/common.h"
#include "corral/http.h"
#include "corral/metrics.h"
#include "corral/net.h"

#define MAX_CONNS        64
#define HEAD_MAX         ((size_t)8 << 10)
#define HEAD_TIMEOUT_MS  10000
#define IDLE_TIMEOUT_MS  60000
#define WRITE_TIMEOUT_MS 10000
#define MAX_PAGES        16

typedef struct mconn {
    int fd;
    corral_buf_t in, out;
    size_t out_off;
    bool close_after; /* close once out has been sent */
    int64_t deadline_ms;
} mconn_t;

struct corral_metrics_server {
    corral_metrics_t *m;
    corral_metrics_page_t pages[MAX_PAGES];
    size_t npages;
    int lfd;
    int wake[2];
    pthread_t thread;
    mconn_t *conns[MAX_CONNS];
    size_t n;
};

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void respond(mconn_t *c, int code, const char *ctype, const corral_buf_t *body, bool head)
{
    corral_buf_printf(&c->out,
                      "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
                      "Cache-Control: no-store\r\n%s\r\n",
                      code, corral_http_reason(code), ctype, body->len,
                      c->close_after ? "Connection: close\r\n" : "");
    if (!head)
        corral_buf_append(&c->out, body->p, body->len);
}

static void respond_text(mconn_t *c, int code, const char *text)
{
    corral_buf_t b;
    corral_buf_init(&b);
    corral_buf_puts(&b, text);
    respond(c, code, "text/plain; charset=utf-8", &b, false);
    corral_buf_fini(&b);
}

static bool is(const char *s, size_t n, const char *lit)
{
    return strlen(lit) == n && memcmp(s, lit, n) == 0;
}

static void handle(corral_metrics_server_t *s, mconn_t *c, const corral_http_request_t *req)
{
    bool get = is(req->method, req->method_len, "GET");
    bool head = is(req->method, req->method_len, "HEAD");
    size_t plen = req->target_len;
    const char *q = memchr(req->target, '?', plen);
    if (q)
        plen = (size_t)(q - req->target);
    c->close_after = !req->keep_alive;
    if (req->content_length > 0 || req->chunked) {
        c->close_after = true;
        respond_text(c, 400, "request bodies are not accepted here\n");
        return;
    }
    if (!get && !head) {
        respond_text(c, 405, "only GET and HEAD\n");
        return;
    }
    corral_buf_t body;
    corral_buf_init(&body);
    const char *ctype = NULL;
    bool found = true;
    if (s->m && is(req->target, plen, "/metrics")) {
        corral_metrics_render(s->m, &body);
    } else if (is(req->target, plen, "/healthz") || is(req->target, plen, "/readyz") ||
               is(req->target, plen, "/livez")) {
        corral_buf_puts(&body, "ok");
        ctype = "text/plain; charset=utf-8";
    } else {
        found = false;
        for (size_t i = 0; i < s->npages && !found; i++) {
            if (is(req->target, plen, s->pages[i].path)) {
                ctype = s->pages[i].fn(&body, s->pages[i].arg);
                found = true;
            }
        }
    }
    if (found)
        respond(c, 200, ctype ? ctype : CORRAL_METRICS_CONTENT_TYPE, &body, head);
    else
        respond_text(c, 404, "not found\n");
    corral_buf_fini(&body);
}

/* Parse and answer the next complete head in c->in, once the answer before
 * it has been sent: a client that sends and never reads holds one answer
 * and at most 2 x HEAD_MAX of requests, no more. */
static void conn_requests(corral_metrics_server_t *s, mconn_t *c)
{
    if (!c->close_after && c->in.len && c->out.len == 0) {
        corral_http_request_t req;
        int rc = corral_http_parse_request(c->in.p, c->in.len, HEAD_MAX, &req);
        if (rc == CORRAL_EAGAIN)
            return;
        if (rc < 0) {
            c->close_after = true;
            respond_text(c, rc == CORRAL_ETOOBIG ? 431 : 400, "malformed request\n");
            return;
        }
        handle(s, c, &req);
        memmove(c->in.p, c->in.p + rc, c->in.len - (size_t)rc);
        c->in.len -= (size_t)rc;
        c->in.p[c->in.len] = '\0';
        c->deadline_ms = now_ms() + WRITE_TIMEOUT_MS;
    }
}

static bool conn_read(corral_metrics_server_t *s, mconn_t *c)
{
    char buf[4096];
    ssize_t k = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT);
    if (k == 0 || (k < 0 && errno != EAGAIN && errno != EINTR))
        return false;
    if (k < 0 || c->close_after)
        return true;
    if (c->in.len + (size_t)k > HEAD_MAX * 2)
        return false; /* pipelining past any sensible depth */
    corral_buf_append(&c->in, buf, (size_t)k);
    conn_requests(s, c);
    return true;
}

/* Send what is queued, then answer a pipelined request if one waits; false
 * when the connection is finished. */
static bool conn_flush(corral_metrics_server_t *s, mconn_t *c)
{
    while (c->out.len) {
        while (c->out_off < c->out.len) {
            ssize_t k = send(c->fd, c->out.p + c->out_off, c->out.len - c->out_off,
                             MSG_DONTWAIT | MSG_NOSIGNAL);
            if (k < 0 && (errno == EAGAIN || errno == EINTR))
                return true;
            if (k <= 0)
                return false;
            c->out_off += (size_t)k;
            c->deadline_ms = now_ms() + WRITE_TIMEOUT_MS; /* progress */
        }
        corral_buf_reset(&c->out);
        c->out_off = 0;
        if (c->close_after)
            return false;
        c->deadline_ms = now_ms() + IDLE_TIMEOUT_MS;
        conn_requests(s, c);
    }
    return !c->close_after || c->out.len;
}

static void conn_free(mconn_t *c)
{
    close(c->fd);
    corral_buf_fini(&c->in);
    corral_buf_fini(&c->out);
    corral_free(c);
}

static void accept_all(corral_metrics_server_t *s)
{
    for (;;) {
        int fd = accept4(s->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return;
        if (s->n == MAX_CONNS) {
            close(fd); /* Prometheus retries at the next interval */
            continue;
        }
        mconn_t *c = corral_calloc(1, sizeof(*c));
        c->fd = fd;
        c->deadline_ms = now_ms() + HEAD_TIMEOUT_MS;
        corral_buf_init(&c->in);
        corral_buf_init(&c->out);
        s->conns[s->n++] = c;
    }
}

/* Backwards, so that the connection moved into a freed slot (the last one)
 * has had its turn with its own poll result. */
static void serve_conns(corral_metrics_server_t *s, const struct pollfd *pf)
{
    int64_t now = now_ms();
    for (size_t i = s->n; i-- > 0;) {
        mconn_t *c = s->conns[i];
        short ev = pf[i].revents;
        bool keep = !(ev & (POLLERR | POLLNVAL));
        if (keep && (ev & (POLLIN | POLLHUP)))
            keep = conn_read(s, c);
        if (keep && now > c->deadline_ms)
            keep = false; /* no head in time, an idle keep-alive, or a reader that stalled */
        if (keep)
            keep = conn_flush(s, c);
        if (!keep) {
            conn_free(c);
            s->conns[i] = s->conns[--s->n];
        }
    }
}

static void *serve(void *arg)
{
    corral_metrics_server_t *s = arg;
    struct pollfd pf[MAX_CONNS + 2];
    for (;;) {
        for (size_t i = 0; i < s->n; i++) {
            pf[i].fd = s->conns[i]->fd;
            pf[i].revents = 0;
            /* While an answer is queued, only its sending: nothing more is read. */
            pf[i].events = s->conns[i]->out.len ? POLLOUT : POLLIN;
        }
        pf[s->n] = (struct pollfd){s->lfd, POLLIN, 0};
        pf[s->n + 1] = (struct pollfd){s->wake[0], POLLIN, 0};
        if (poll(pf, s->n + 2, s->n ? 1000 : -1) < 0 && errno != EINTR)
            break;
        if (pf[s->n + 1].revents)
            break;
        bool incoming = pf[s->n].revents & POLLIN;
        serve_conns(s, pf);
        if (incoming)
            accept_all(s);
    }
    return NULL;
}

/* --- start and stop ----------------------------------------------------------------- */

int corral_metrics_serve(const char *listen, corral_metrics_t *m,
                         const corral_metrics_page_t *pages, size_t npages, int *port_out,
                         corral_metrics_server_t **out, char *err, size_t errlen)
{
    *out = NULL;
    if (npages > MAX_PAGES) {
        snprintf(err, errlen, "metrics: at most %d pages", MAX_PAGES);
        return CORRAL_EINVAL;
    }
    int port = 0;
    int fd = corral_net_listen(listen, 128, &port, "metrics", err, errlen);
    if (fd < 0)
        return CORRAL_EIO;
    corral_metrics_server_t *s = corral_calloc(1, sizeof(*s));
    s->m = m;
    if (npages)
        memcpy(s->pages, pages, npages * sizeof(*pages));
    s->npages = npages;
    s->lfd = fd;
    if (pipe2(s->wake, O_CLOEXEC) != 0) {
        snprintf(err, errlen, "metrics: cannot start: %s", strerror(errno));
        close(fd);
        corral_free(s);
        return CORRAL_EIO;
    }
    if (pthread_create(&s->thread, NULL, serve, s) != 0) {
        snprintf(err, errlen, "metrics: cannot start a thread");
        close(fd);
        close(s->wake[0]);
        close(s->wake[1]);
        corral_free(s);
        return CORRAL_EIO;
    }
    if (port_out)
        *port_out = port;
    *out = s;
    return 0;
}

void corral_metrics_server_stop(corral_metrics_server_t *s)
{
    if (!s)
        return;
    ssize_t k = write(s->wake[1], "x", 1);
    (void)k;
    pthread_join(s->thread, NULL);
    for (size_t i = 0; i < s->n; i++)
        conn_free(s->conns[i]);
    close(s->lfd);
    close(s->wake[0]);
    close(s->wake[1]);
    corral_free(s);
}
