/*
 * The router's event loop: one thread, epoll (level-triggered), non-blocking
 * sockets. A client connection carries one request at a time (pipelined
 * ones wait in its input buffer, so answers go out in order): its head is
 * parsed, routed and rewritten once; its body is streamed to the backend as
 * it arrives, and the response is relayed as the backend sends it (never
 * buffered whole), with backpressure both ways (a side stops being read
 * while the other has more than OUT_HIGH bytes unsent).
 *
 * Backend connections are kept alive in a pool per pod. A request goes to
 * the ready pod of its revision with the fewest outstanding requests; a
 * revision with none holds it in a FIFO (bounded, with a timeout) while the
 * revision's starting pods are probed by TCP connect, and the first that
 * accepts takes the queue. Retries (at most MAX_TRIES) only when safe: the
 * connect failed, or no byte of the request was written; and for GET, HEAD
 * and OPTIONS without a body, when no byte of a response came.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "corral/buf.h"
#include "corral/common.h"
#include "corral/http.h"
#include "router/router_loop.h"

#define IN_INIT    ((size_t)16 << 10)
#define IN_MAX     (CORRAL__HTTP_MAX_HEAD + ((size_t)16 << 10))
#define OUT_HIGH   ((size_t)256 << 10) /* stop reading the other side above this */
#define BODY_CHUNK ((size_t)64 << 10)  /* request body bytes queued to a backend at most */
#define MAX_TRIES  3
#define MAX_PODS   512 /* pods of one revision considered per pick */
#define SWEEP_NS   (100LL * 1000000LL)
#define DOWN_NS    (1000LL * 1000000LL)

enum { EV_LISTEN = 1, EV_WAKE, EV_CLIENT, EV_BACKEND };

typedef struct evh {
    int type;
    int fd;
    uint32_t mask;
} evh_t;

enum { C_HEAD = 0, C_QUEUED, C_PROXY, C_CLOSING };
enum { R_HEAD = 0, R_BODY, R_DONE };
enum { B_CONNECTING = 0, B_BUSY, B_IDLE, B_PROBE };

struct corral__cconn {
    evh_t ev;
    corral__cconn_t *next, *prev; /* all connections */
    char *in;
    size_t in_len, in_off, in_cap;
    corral_buf_t out;
    size_t out_off;
    int state;
    corral_buf_t carry; /* request bytes taken but never written, for a retry */
    char peer[64];
    int64_t deadline_ns;
    /* the current request */
    corral_buf_t head_out; /* the head as sent to the backend */
    int minor;
    int64_t body_left; /* Content-Length bytes not yet queued */
    corral__chunked_t bch;
    corral__rev_st_t *rev;
    corral__pod_st_t *pod;
    corral__bconn_t *b;
    corral__cconn_t *qnext, *qprev;
    int64_t q_deadline_ns;
    int tries;
    corral__pod_st_t *tried[MAX_TRIES];
    int64_t t_start_ns;
    /* the response */
    int rstate;
    int status;
    int64_t resp_left;
    corral__chunked_t rch;
    bool eof;         /* the client sent FIN */
    bool busy, again; /* inside client_process / it must run again */
    bool head_started;
    bool inflight;   /* counted in its revision's in-flight */
    bool keep_alive; /* after the current request */
    bool is_head, idempotent, has_body;
    bool body_chunked;
    bool body_done;
    bool resp_started; /* a byte of a response came */
    bool resp_chunked, resp_until_close, dechunk;
};

struct corral__bconn {
    evh_t ev;
    corral__bconn_t *inext, *iprev; /* the pod's idle list */
    corral__pod_st_t *pod;
    corral__cconn_t *c;
    corral__rev_st_t *probe_rev;
    int state;
    bool reused;
    bool keep_alive; /* the backend's last response allows reuse */
    corral_buf_t out;
    size_t out_off;
    uint64_t written; /* request bytes written in this exchange */
    char *in;
    size_t in_len, in_off, in_cap;
    int64_t deadline_ns;
};

int64_t corral__now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void logf_(corral_router_t *r, const char *fmt, ...) CORRAL_PRINTF(2, 3);
static void logf_(corral_router_t *r, const char *fmt, ...)
{
    if (!r->o.log)
        return;
    va_list ap;
    va_start(ap, fmt);
    fputs("corral router: ", r->o.log);
    vfprintf(r->o.log, fmt, ap);
    fputc('\n', r->o.log);
    va_end(ap);
}

static void set_mask(corral_router_t *r, evh_t *e, uint32_t mask)
{
    if (e->mask == mask)
        return;
    struct epoll_event ev = {.events = mask, .data.ptr = e};
    epoll_ctl(r->epfd, EPOLL_CTL_MOD, e->fd, &ev);
    e->mask = mask;
}

static void ev_add(corral_router_t *r, evh_t *e, uint32_t mask)
{
    struct epoll_event ev = {.events = mask, .data.ptr = e};
    epoll_ctl(r->epfd, EPOLL_CTL_ADD, e->fd, &ev);
    e->mask = mask;
}

/* --- revision accounting (under smu: the metrics thread reads it) --------------------- */

double corral__rev_conc(const corral__rev_st_t *rs, int64_t now_ns)
{
    double dt = (double)(now_ns - rs->conc_last_ns) / 1e9;
    return rs->conc_sum + (double)(rs->inflight + rs->queued) * (dt > 0 ? dt : 0);
}

/* Change queued and in-flight of rs by dq and di at now, keeping the
 * integral exact; arrival counts one arrival. */
static void rev_change(corral_router_t *r, corral__rev_st_t *rs, int dq, int di, bool arrival,
                       int64_t now)
{
    pthread_mutex_lock(&r->smu);
    rs->conc_sum = corral__rev_conc(rs, now);
    rs->conc_last_ns = now;
    rs->queued = (uint32_t)((int)rs->queued + dq);
    rs->inflight = (uint32_t)((int)rs->inflight + di);
    if (arrival)
        rs->arrivals++;
    pthread_mutex_unlock(&r->smu);
}

static void rev_count(corral_router_t *r, corral__rev_st_t *rs, uint64_t *field)
{
    pthread_mutex_lock(&r->smu);
    (*field)++;
    (void)rs;
    pthread_mutex_unlock(&r->smu);
}

static void rev_code(corral_router_t *r, corral__rev_st_t *rs, int code)
{
    pthread_mutex_lock(&r->smu);
    size_t i = 0;
    while (i < rs->ncodes && rs->codes[i].code != code)
        i++;
    if (i == rs->ncodes && i < CORRAL__MAX_CODES) {
        rs->codes[i].code = code;
        rs->codes[i].n = 0;
        rs->ncodes++;
    }
    if (i < rs->ncodes)
        rs->codes[i].n++;
    pthread_mutex_unlock(&r->smu);
}

static void unrouted(corral_router_t *r, int code)
{
    static const int codes[] = {400, 404, 408, 431, 501};
    size_t i = 0;
    while (i < CORRAL_ARRAY_LEN(codes) && codes[i] != code)
        i++;
    if (code == 413 || code == 414)
        i = 3;
    else if (code == 505)
        i = 4;
    pthread_mutex_lock(&r->smu);
    r->unrouted[i]++;
    pthread_mutex_unlock(&r->smu);
}

/* --- state of revisions and pods ------------------------------------------------------- */

static corral__rev_st_t *rev_get(corral_router_t *r, const corral__rt_svc_t *s,
                                 const corral__rt_rev_t *rv)
{
    uint32_t i;
    if (corral_hmap_get(&r->rev_ix, rv->key, &i))
        return r->revs[i];
    corral__rev_st_t *rs = corral_calloc(1, sizeof(*rs));
    rs->key = corral_strdup(rv->key);
    rs->ns = corral_strdup(s->ns);
    rs->svc = corral_strdup(s->name);
    rs->rev = corral_strdup(rv->name);
    rs->conc_last_ns = corral__now_ns();
    pthread_mutex_lock(&r->smu);
    corral_grow((void **)&r->revs, &r->caprevs, r->nrevs + 1,
                sizeof(*r->revs)); /* NOLINT(bugprone-sizeof-expression): pointers */
    r->revs[r->nrevs] = rs;
    corral_hmap_put(&r->rev_ix, rs->key, (uint32_t)r->nrevs);
    r->nrevs++;
    pthread_mutex_unlock(&r->smu);
    return rs;
}

static void rev_free_at(corral_router_t *r, size_t i)
{
    corral__rev_st_t *rs = r->revs[i];
    pthread_mutex_lock(&r->smu);
    corral_hmap_del(&r->rev_ix, rs->key);
    r->revs[i] = r->revs[--r->nrevs];
    if (i < r->nrevs)
        corral_hmap_put(&r->rev_ix, r->revs[i]->key, (uint32_t)i);
    pthread_mutex_unlock(&r->smu);
    corral_free(rs->key);
    corral_free(rs->ns);
    corral_free(rs->svc);
    corral_free(rs->rev);
    corral_free(rs);
}

static void bconn_close(corral_router_t *r, corral__bconn_t *b);

static void pod_set_addr(corral__pod_st_t *ps, const corral__rt_pod_t *p)
{
    struct sockaddr_storage sa;
    memset(&sa, 0, sizeof(sa));
    socklen_t len = 0;
    struct sockaddr_in *v4 = (struct sockaddr_in *)&sa;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&sa;
    if (inet_pton(AF_INET, p->addr, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons((uint16_t)p->port);
        len = sizeof(*v4);
    } else if (inet_pton(AF_INET6, p->addr, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons((uint16_t)p->port);
        len = sizeof(*v6);
    }
    ps->sa = sa;
    ps->salen = len;
    snprintf(ps->addr, sizeof(ps->addr), "%s:%d", p->addr, p->port);
}

static corral__pod_st_t *pod_get(corral_router_t *r, const corral__rt_pod_t *p)
{
    uint32_t i;
    corral__pod_st_t *ps;
    if (corral_hmap_get(&r->pod_ix, p->key, &i)) {
        ps = r->pods[i];
        char want[64];
        snprintf(want, sizeof(want), "%s:%d", p->addr, p->port);
        if (strcmp(want, ps->addr) != 0) { /* a new address: old connections go */
            while (ps->idle)
                bconn_close(r, ps->idle);
            pod_set_addr(ps, p);
            ps->probed_ok = false;
        }
        return ps;
    }
    ps = corral_calloc(1, sizeof(*ps));
    ps->key = corral_strdup(p->key);
    char *sl = strchr(ps->key, '/');
    ps->ns = corral_strndup(ps->key, (size_t)(sl - ps->key));
    ps->name = corral_strdup(sl + 1);
    pod_set_addr(ps, p);
    pthread_mutex_lock(&r->smu);
    corral_grow((void **)&r->pods, &r->cappods, r->npods + 1,
                sizeof(*r->pods)); /* NOLINT(bugprone-sizeof-expression): pointers */
    r->pods[r->npods] = ps;
    corral_hmap_put(&r->pod_ix, ps->key, (uint32_t)r->npods);
    r->npods++;
    pthread_mutex_unlock(&r->smu);
    return ps;
}

static void pod_free_at(corral_router_t *r, size_t i)
{
    corral__pod_st_t *ps = r->pods[i];
    while (ps->idle)
        bconn_close(r, ps->idle);
    if (ps->probe)
        bconn_close(r, ps->probe);
    pthread_mutex_lock(&r->smu);
    corral_hmap_del(&r->pod_ix, ps->key);
    r->pods[i] = r->pods[--r->npods];
    if (i < r->npods)
        corral_hmap_put(&r->pod_ix, r->pods[i]->key, (uint32_t)i);
    pthread_mutex_unlock(&r->smu);
    corral_free(ps->key);
    corral_free(ps->ns);
    corral_free(ps->name);
    corral_free(ps);
}

/* --- client output ----------------------------------------------------------------------- */

static void cconn_close(corral_router_t *r, corral__cconn_t *c);
static void client_update(corral_router_t *r, corral__cconn_t *c);
static void client_process(corral_router_t *r, corral__cconn_t *c);
static void dispatch(corral_router_t *r, corral__cconn_t *c);
static void backend_update(corral_router_t *r, corral__bconn_t *b);

static size_t out_pending(const corral__cconn_t *c)
{
    return c->out.len - c->out_off;
}

/* Write what is pending; false when the connection was closed. */
static bool client_flush(corral_router_t *r, corral__cconn_t *c)
{
    while (out_pending(c)) {
        ssize_t n = send(c->ev.fd, c->out.p + c->out_off, out_pending(c), MSG_NOSIGNAL);
        if (n > 0) {
            c->out_off += (size_t)n;
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            break;
        cconn_close(r, c);
        return false;
    }
    if (!out_pending(c)) {
        corral_buf_reset(&c->out);
        c->out_off = 0;
        if (c->state == C_CLOSING) {
            cconn_close(r, c);
            return false;
        }
    }
    return true;
}

/* Answer the current request ourselves: status, one line of text, and
 * close the connection after it unless keep (the request had no body or it
 * was read). */
static void client_error(corral_router_t *r, corral__cconn_t *c, int code, bool keep,
                         const char *fmt, ...) CORRAL_PRINTF(5, 6);
static void client_error(corral_router_t *r, corral__cconn_t *c, int code, bool keep,
                         const char *fmt, ...)
{
    (void)r;
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(msg, sizeof(msg) - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        n = 0;
    if ((size_t)n > sizeof(msg) - 2)
        n = (int)sizeof(msg) - 2;
    msg[n++] = '\n';
    msg[n] = 0;
    keep = keep && c->keep_alive;
    corral_buf_printf(&c->out,
                      "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\n"
                      "Content-Length: %d\r\n%s\r\n",
                      code, corral_http_reason(code), c->is_head ? 0 : n,
                      keep ? "" : "Connection: close\r\n");
    if (!c->is_head)
        corral_buf_append(&c->out, msg, (size_t)n);
    c->status = code;
    if (!keep)
        c->keep_alive = false;
}

/* --- request lifecycle ---------------------------------------------------------------- */

static void req_reset(corral__cconn_t *c)
{
    corral_buf_reset(&c->head_out);
    c->rev = NULL;
    c->pod = NULL;
    c->b = NULL;
    c->tries = 0;
    c->rstate = R_HEAD;
    c->status = 0;
    c->resp_started = false;
    c->resp_left = 0;
    c->resp_chunked = c->resp_until_close = c->dechunk = false;
    memset(&c->rch, 0, sizeof(c->rch));
    memset(&c->bch, 0, sizeof(c->bch));
    c->body_left = 0;
    c->body_chunked = false;
    c->body_done = true;
    c->has_body = false;
    c->head_started = false;
    c->inflight = false;
    corral_buf_reset(&c->carry);
}

/* The request is over (answered, failed or aborted): account and go on
 * with the next one or close. */
static void req_finish(corral_router_t *r, corral__cconn_t *c, int64_t now)
{
    corral__rev_st_t *rs = c->rev;
    if (rs) {
        if (c->state == C_QUEUED)
            rev_change(r, rs, -1, 0, false, now);
        else if (c->inflight)
            rev_change(r, rs, 0, -1, false, now);
        c->inflight = false;
        rev_code(r, rs, c->status ? c->status : 499);
        const char *lv[] = {rs->ns, rs->svc, rs->rev};
        corral_metric_observe(r->m_duration, lv, (double)(now - c->t_start_ns) / 1e9);
    } else if (c->status) {
        unrouted(r, c->status);
    }
    if (c->pod) {
        __atomic_store_n(&c->pod->outstanding, c->pod->outstanding - 1, __ATOMIC_RELAXED);
        c->pod = NULL;
    }
    c->rev = NULL;
    if (!c->body_done)
        c->keep_alive = false;
}

static void queue_remove(corral__cconn_t *c)
{
    corral__rev_st_t *rs = c->rev;
    if (c->qprev)
        c->qprev->qnext = c->qnext;
    else
        rs->qhead = c->qnext;
    if (c->qnext)
        c->qnext->qprev = c->qprev;
    else
        rs->qtail = c->qprev;
    c->qnext = c->qprev = NULL;
}

/* After the response is done (or an error answered): next request or close. */
static void req_next(corral_router_t *r, corral__cconn_t *c)
{
    int64_t now = corral__now_ns();
    req_finish(r, c, now);
    if (!c->keep_alive || c->eof) {
        c->state = C_CLOSING;
        if (!client_flush(r, c))
            return;
        client_update(r, c);
        return;
    }
    c->state = C_HEAD;
    req_reset(c);
    c->deadline_ns = now + (c->in_len > c->in_off ? r->o.header_timeout_ns : r->o.idle_timeout_ns);
    if (c->busy)
        c->again = true; /* client_process goes on with the next request */
    else
        client_process(r, c);
}

static void close_with_error(corral_router_t *r, corral__cconn_t *c, int code, const char *fmt, ...)
    CORRAL_PRINTF(4, 5);
static void close_with_error(corral_router_t *r, corral__cconn_t *c, int code, const char *fmt, ...)
{
    char msg[700];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    client_error(r, c, code, !c->has_body, "%s", msg);
    req_next(r, c);
}

/* --- backends --------------------------------------------------------------------------- */

static void bconn_close(corral_router_t *r, corral__bconn_t *b)
{
    if (b->state == B_IDLE) {
        if (b->iprev)
            b->iprev->inext = b->inext;
        else
            b->pod->idle = b->inext;
        if (b->inext)
            b->inext->iprev = b->iprev;
        b->pod->nidle--;
    }
    if (b->state == B_PROBE && b->pod->probe == b)
        b->pod->probe = NULL;
    if (b->c && b->c->b == b)
        b->c->b = NULL;
    epoll_ctl(r->epfd, EPOLL_CTL_DEL, b->ev.fd, NULL);
    close(b->ev.fd);
    b->ev.fd = -1;
    b->c = NULL;
    b->state = -1;
    /* freed after the current batch of events, which may still name it */
    b->inext = r->dead_b;
    r->dead_b = b;
}

static void free_dead(corral_router_t *r)
{
    while (r->dead_b) {
        corral__bconn_t *b = r->dead_b;
        r->dead_b = b->inext;
        corral_buf_fini(&b->out);
        corral_free(b->in);
        corral_free(b);
    }
    while (r->dead_c) {
        corral__cconn_t *c = r->dead_c;
        r->dead_c = c->next;
        corral_free(c->in);
        corral_buf_fini(&c->out);
        corral_buf_fini(&c->head_out);
        corral_buf_fini(&c->carry);
        corral_free(c);
    }
}

static corral__bconn_t *bconn_connect(corral_router_t *r, corral__pod_st_t *ps)
{
    if (ps->salen == 0)
        return NULL;
    int fd = socket(ps->sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return NULL;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (connect(fd, (struct sockaddr *)&ps->sa, ps->salen) != 0 && errno != EINPROGRESS) {
        close(fd);
        return NULL;
    }
    corral__bconn_t *b = corral_calloc(1, sizeof(*b));
    b->ev.type = EV_BACKEND;
    b->ev.fd = fd;
    b->pod = ps;
    b->state = B_CONNECTING;
    b->deadline_ns = corral__now_ns() + r->o.connect_timeout_ns;
    ev_add(r, &b->ev, EPOLLOUT);
    return b;
}

/* A kept-alive connection of ps, checked for a FIN that came meanwhile when
 * check (a request that must not be retried once written). */
static corral__bconn_t *bconn_idle_take(corral_router_t *r, corral__pod_st_t *ps, bool check)
{
    while (ps->idle) {
        corral__bconn_t *b = ps->idle;
        ps->idle = b->inext;
        if (ps->idle)
            ps->idle->iprev = NULL;
        ps->nidle--;
        b->inext = b->iprev = NULL;
        b->state = B_BUSY;
        if (check) {
            char x;
            ssize_t n = recv(b->ev.fd, &x, 1, MSG_PEEK | MSG_DONTWAIT);
            if (n == 0 || (n < 0 && errno != EAGAIN)) {
                bconn_close(r, b);
                continue;
            }
        }
        return b;
    }
    return NULL;
}

static void bconn_park(corral_router_t *r, corral__bconn_t *b)
{
    corral__pod_st_t *ps = b->pod;
    b->c = NULL;
    if (ps->nidle >= (size_t)r->o.max_idle_per_pod || ps->salen == 0) {
        bconn_close(r, b);
        return;
    }
    b->state = B_IDLE;
    b->reused = true;
    b->in_len = b->in_off = 0;
    corral_buf_reset(&b->out);
    b->out_off = 0;
    b->written = 0;
    b->iprev = NULL;
    b->inext = ps->idle;
    if (ps->idle)
        ps->idle->iprev = b;
    ps->idle = b;
    ps->nidle++;
    set_mask(r, &b->ev, EPOLLIN | EPOLLRDHUP);
}

/* The pods a request of rs may go to now: ready ones and probed starting ones. */
static size_t usable(const corral__rev_st_t *rs, corral__pod_st_t **out, size_t max)
{
    size_t n = 0;
    if (!rs->cur)
        return 0;
    for (size_t i = 0; i < rs->cur->nready && n < max; i++)
        if (rs->cur->ready[i].st)
            out[n++] = rs->cur->ready[i].st;
    for (size_t i = 0; i < rs->cur->nstarting && n < max; i++) {
        corral__pod_st_t *ps = rs->cur->starting[i].st;
        if (ps && ps->probed_ok)
            out[n++] = ps;
    }
    return n;
}

static corral__pod_st_t *pick_pod(corral_router_t *r, corral__cconn_t *c, int64_t now)
{
    corral__pod_st_t *pods[MAX_PODS];
    uint32_t outst[MAX_PODS];
    bool excl[MAX_PODS];
    size_t n = usable(c->rev, pods, MAX_PODS);
    if (n == 0)
        return NULL;
    size_t avail = 0;
    for (size_t i = 0; i < n; i++) {
        outst[i] = pods[i]->outstanding;
        excl[i] = false;
        for (int k = 0; k < c->tries; k++)
            if (c->tried[k] == pods[i])
                excl[i] = true;
        if (!excl[i] && pods[i]->down_until_ns <= now)
            avail++;
    }
    if (avail) /* avoid pods whose connect failed lately while others are there */
        for (size_t i = 0; i < n; i++)
            if (pods[i]->down_until_ns > now)
                excl[i] = true;
    size_t start = c->rev->rr++ % n;
    int k = corral__least(outst, excl, n, start);
    if (k < 0) /* every pod was tried: a fresh connection to one of them */
        k = corral__least(outst, NULL, n, start);
    (void)r;
    return k < 0 ? NULL : pods[k];
}

/* Queue request body bytes available in the client's buffer to the backend. */
static void pump_body(corral_router_t *r, corral__cconn_t *c)
{
    corral__bconn_t *b = c->b;
    if (!b || c->body_done || b->state == B_CONNECTING)
        return;
    size_t avail = c->in_len - c->in_off;
    size_t room = b->out.len - b->out_off < BODY_CHUNK ? BODY_CHUNK : 0;
    if (avail > room)
        avail = room;
    if (avail == 0)
        return;
    size_t take;
    if (c->body_chunked) {
        ssize_t k = corral__chunked_feed(&c->bch, c->in + c->in_off, avail, NULL, NULL);
        if (k < 0) {
            /* malformed body: the backend gets no more; the client is cut off */
            c->keep_alive = false;
            c->body_done = true;
            corral__bconn_t *bb = c->b;
            c->b = NULL;
            bconn_close(r, bb);
            if (!c->resp_started) {
                client_error(r, c, 400, false, "malformed chunked request body");
                req_next(r, c);
            } else {
                cconn_close(r, c);
            }
            return;
        }
        take = (size_t)k;
        if (corral__chunked_done(&c->bch))
            c->body_done = true;
    } else {
        take = avail < (uint64_t)c->body_left ? avail : (size_t)c->body_left;
        c->body_left -= (int64_t)take;
        if (c->body_left == 0)
            c->body_done = true;
    }
    corral_buf_append(&b->out, c->in + c->in_off, take);
    c->in_off += take;
    if (c->in_off == c->in_len)
        c->in_off = c->in_len = 0;
}

static bool backend_flush(corral_router_t *r, corral__bconn_t *b);
static void backend_failed(corral_router_t *r, corral__bconn_t *b, bool connect_failed);

/* Hand c's request to backend b (connected or connecting). */
static void attach(corral_router_t *r, corral__cconn_t *c, corral__bconn_t *b)
{
    b->c = c;
    c->b = b;
    b->written = 0;
    b->in_len = b->in_off = 0;
    corral_buf_reset(&b->out);
    b->out_off = 0;
    if (c->carry.len) {
        corral_buf_append(&b->out, c->carry.p, c->carry.len);
        corral_buf_reset(&c->carry);
    } else {
        corral_buf_append(&b->out, c->head_out.p, c->head_out.len);
    }
    if (b->state != B_CONNECTING) {
        pump_body(r, c);
        if (c->b != b)
            return;
        if (backend_flush(r, b))
            backend_update(r, b);
    }
}

static void dispatch(corral_router_t *r, corral__cconn_t *c)
{
    int64_t now = corral__now_ns();
    for (;;) {
        corral__pod_st_t *ps = pick_pod(r, c, now);
        if (!ps) {
            close_with_error(r, c, 502, "no replica of revision %s/%s accepted the connection",
                             c->rev->ns, c->rev->rev);
            return;
        }
        if (c->tries < MAX_TRIES)
            c->tried[c->tries] = ps;
        c->tries++;
        if (!c->pod) {
            c->pod = ps;
            __atomic_store_n(&ps->outstanding, ps->outstanding + 1, __ATOMIC_RELAXED);
        } else if (c->pod != ps) {
            __atomic_store_n(&c->pod->outstanding, c->pod->outstanding - 1, __ATOMIC_RELAXED);
            c->pod = ps;
            __atomic_store_n(&ps->outstanding, ps->outstanding + 1, __ATOMIC_RELAXED);
        }
        corral__bconn_t *b = bconn_idle_take(r, ps, !c->idempotent);
        if (!b)
            b = bconn_connect(r, ps);
        if (!b) {
            ps->down_until_ns = now + DOWN_NS;
            if (c->tries >= MAX_TRIES) {
                close_with_error(r, c, 502, "cannot connect to a replica of %s/%s", c->rev->ns,
                                 c->rev->rev);
                return;
            }
            rev_count(r, c->rev, &c->rev->retries);
            continue;
        }
        attach(r, c, b);
        return;
    }
}

/* The revision got a usable pod: dispatch its queue in order. */
static void drain(corral_router_t *r, corral__rev_st_t *rs)
{
    corral__pod_st_t *one[1];
    while (rs->qhead && usable(rs, one, 1)) {
        corral__cconn_t *c = rs->qhead;
        queue_remove(c);
        rev_change(r, rs, -1, 1, false, corral__now_ns());
        c->inflight = true;
        c->state = C_PROXY;
        dispatch(r, c);
        if (c->ev.fd >= 0 && c->state == C_PROXY)
            client_update(r, c);
    }
}

/* --- the request head --------------------------------------------------------------------- */

static bool method_is(const corral__head_t *h, const char *m)
{
    return h->mlen == strlen(m) && memcmp(h->method, m, h->mlen) == 0;
}

/* Is a request header dropped on the way to the backend? */
static bool hop_by_hop(const corral__hdr_t *f, const corral__hdr_t *conn)
{
    static const char *const hop[] = {"connection", "keep-alive",       "proxy-connection",
                                      "te",         "upgrade",          "proxy-authorization",
                                      "trailer",    "x-forwarded-host", "x-forwarded-proto"};
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(hop); i++)
        if (corral__hdr_is(f, hop[i]))
            return true;
    if (conn) { /* fields the client's Connection names */
        char name[64];
        if (f->nlen < sizeof(name)) {
            memcpy(name, f->name, f->nlen);
            name[f->nlen] = 0;
            if (corral__token_in(conn->val, conn->vlen, name) &&
                !corral__hdr_is(f, "transfer-encoding") && !corral__hdr_is(f, "content-length"))
                return true;
        }
    }
    return false;
}

static void build_head(corral__cconn_t *c, const corral__head_t *h, size_t strip)
{
    corral_buf_t *o = &c->head_out;
    corral_buf_append(o, h->method, h->mlen);
    corral_buf_putc(o, ' ');
    const char *t = h->target + strip;
    size_t tl = h->tlen - strip;
    if (strip && (tl == 0 || t[0] != '/'))
        corral_buf_putc(o, '/');
    corral_buf_append(o, t, tl);
    corral_buf_puts(o, " HTTP/1.1\r\n");
    const corral__hdr_t *conn = NULL;
    const corral__hdr_t *xff = NULL;
    for (size_t i = 0; i < h->nhdrs; i++) {
        if (corral__hdr_is(&h->hdrs[i], "connection"))
            conn = &h->hdrs[i];
    }
    for (size_t i = 0; i < h->nhdrs; i++) {
        const corral__hdr_t *f = &h->hdrs[i];
        if (hop_by_hop(f, conn))
            continue;
        if (corral__hdr_is(f, "x-forwarded-for")) {
            xff = f;
            continue;
        }
        corral_buf_append(o, f->name, f->nlen);
        corral_buf_puts(o, ": ");
        corral_buf_append(o, f->val, f->vlen);
        corral_buf_puts(o, "\r\n");
    }
    corral_buf_puts(o, "X-Forwarded-For: ");
    if (xff) {
        corral_buf_append(o, xff->val, xff->vlen);
        corral_buf_puts(o, ", ");
    }
    corral_buf_puts(o, c->peer);
    if (h->host) {
        corral_buf_puts(o, "\r\nX-Forwarded-Host: ");
        corral_buf_append(o, h->host->val, h->host->vlen);
    }
    corral_buf_puts(o, "\r\nX-Forwarded-Proto: http\r\n\r\n");
}

static const corral__hdr_t *find_hdr(const corral__head_t *h, const char *name)
{
    for (size_t i = 0; i < h->nhdrs; i++)
        if (corral__hdr_is(&h->hdrs[i], name))
            return &h->hdrs[i];
    return NULL;
}

/* The revision of s a request goes to: by Corral-Revision, by tag (host
 * prefix or Knative-Serving-Tag), else the weighted split. NULL when it was
 * answered (404, 503). */
static const corral__rt_rev_t *pick_revision(corral_router_t *r, corral__cconn_t *c,
                                             const corral__head_t *h, const corral__rt_svc_t *s,
                                             const corral__route_req_t *rr, const char *ns,
                                             const char *svc)
{
    const corral__rt_rev_t *rv = NULL;
    const corral__hdr_t *revh = find_hdr(h, "corral-revision");
    const corral__hdr_t *tagh = find_hdr(h, "knative-serving-tag");
    if (revh) {
        rv = corral__rt_rev_named(s, revh->val, revh->vlen);
        if (!rv) {
            char b[256];
            snprintf(b, sizeof(b), "%.*s", (int)(revh->vlen < 200 ? revh->vlen : 200), revh->val);
            close_with_error(r, c, 404, "revision %s is not in the traffic list of %s", b, svc);
            return NULL;
        }
    } else if (rr->tag || tagh) {
        const char *tg = rr->tag ? rr->tag : tagh->val;
        size_t tl = rr->tag ? rr->taglen : tagh->vlen;
        rv = corral__rt_tag_rev(s, tg, tl);
        if (!rv) {
            char b[256];
            snprintf(b, sizeof(b), "%.*s", (int)(tl < 200 ? tl : 200), tg);
            close_with_error(r, c, 404, "no revision tagged %s in the traffic of %s", b, svc);
            return NULL;
        }
    } else if (!s->has_traffic) {
        close_with_error(r, c, 503, "InferenceService %s/%s has no traffic in its status yet", ns,
                         svc);
        return NULL;
    } else {
        int64_t cw[64];
        int w[64];
        size_t n = s->nrevs < 64 ? s->nrevs : 64;
        for (size_t i = 0; i < n; i++) {
            corral__rev_st_t *st = s->revs[i].st;
            cw[i] = st->cw;
            w[i] = s->revs[i].percent;
        }
        int k = corral__swrr(cw, w, n);
        for (size_t i = 0; i < n; i++)
            ((corral__rev_st_t *)s->revs[i].st)->cw = cw[i];
        if (k < 0) {
            close_with_error(r, c, 503, "no revision of %s/%s has a traffic percent above 0", ns,
                             svc);
            return NULL;
        }
        rv = &s->revs[k];
    }
    return rv;
}

static void start_request(corral_router_t *r, corral__cconn_t *c, const corral__head_t *h)
{
    int64_t now = corral__now_ns();
    c->t_start_ns = now;
    c->minor = h->minor;
    c->keep_alive = !h->conn_close;
    c->is_head = method_is(h, "HEAD");
    c->idempotent = method_is(h, "GET") || c->is_head || method_is(h, "OPTIONS");
    c->body_chunked = h->chunked;
    c->body_left = h->chunked ? 0 : (h->content_length > 0 ? h->content_length : 0);
    c->has_body = h->chunked || h->content_length > 0;
    c->body_done = !c->has_body;
    c->in_off += h->len;
    if (h->upgrade && find_hdr(h, "upgrade")) {
        client_error(r, c, 501, false, "the router does not relay protocol upgrades");
        c->body_done = false;
        req_next(r, c);
        return;
    }
    corral__route_req_t rr;
    const char *host = h->host ? h->host->val : NULL;
    size_t hlen = h->host ? h->host->vlen : 0;
    const corral__rt_svc_t *s = corral__route(r->table, h->target, h->tlen, host, hlen, &rr);
    char ns[256], svc[256];
    snprintf(ns, sizeof(ns), "%.*s", (int)(rr.nslen < 200 ? rr.nslen : 200), rr.ns ? rr.ns : "");
    snprintf(svc, sizeof(svc), "%.*s", (int)(rr.svclen < 200 ? rr.svclen : 200),
             rr.svc ? rr.svc : "");
    if (!s) {
        if (rr.ns) {
            close_with_error(r, c, 404, "no InferenceService %s/%s (from the %s)", ns, svc,
                             rr.strip ? "path" : "Host header");
        } else {
            char hb[256];
            snprintf(hb, sizeof(hb), "%.*s", (int)(hlen < 200 ? hlen : 200), host ? host : "");
            close_with_error(r, c, 404,
                             "no InferenceService named: use Host S.NS[.domain] or path "
                             "/serving/NS/S/ (Host was %s)",
                             hb[0] ? hb : "absent");
        }
        return;
    }
    const corral__rt_rev_t *rv = pick_revision(r, c, h, s, &rr, ns, svc);
    if (!rv)
        return; /* answered */
    corral__rev_st_t *rs = rv->st;
    c->rev = rs;
    build_head(c, h, rr.strip);
    corral__pod_st_t *one[1];
    if (usable(rs, one, 1)) {
        rev_change(r, rs, 0, 1, true, now);
        c->inflight = true;
        c->state = C_PROXY;
        dispatch(r, c);
        return;
    }
    if (rs->queued >= (uint32_t)r->o.queue_limit) {
        rev_change(r, rs, 0, 0, true, now);
        rev_count(r, rs, &rs->overflows);
        client_error(r, c, 503, !c->has_body,
                     "revision %s has no ready replica and its queue is full (%d requests)",
                     rs->rev, r->o.queue_limit);
        rev_code(r, rs, 503);
        const char *lv[] = {rs->ns, rs->svc, rs->rev};
        corral_metric_observe(r->m_duration, lv, 0);
        c->rev = NULL; /* counted: req_finish has nothing to add */
        c->status = 0;
        req_next(r, c);
        return;
    }
    rev_change(r, rs, 1, 0, true, now);
    c->state = C_QUEUED;
    c->q_deadline_ns = now + r->o.queue_timeout_ns;
    c->qprev = rs->qtail;
    c->qnext = NULL;
    if (rs->qtail)
        rs->qtail->qnext = c;
    else
        rs->qhead = c;
    rs->qtail = c;
    if (rs->next_probe_ns == 0 || rs->next_probe_ns > now)
        rs->next_probe_ns = now;
}

/* --- the client connection --------------------------------------------------------------- */

static void client_update(corral_router_t *r, corral__cconn_t *c)
{
    uint32_t m = 0;
    bool room = c->in_len < c->in_cap || c->in_off > 0 || c->in_cap < IN_MAX;
    if (!c->eof && room) { /* (full: the FIN is seen once there is room again) */
        m = EPOLLRDHUP;
        if (c->state != C_CLOSING && out_pending(c) < OUT_HIGH)
            m |= EPOLLIN;
    }
    if (out_pending(c))
        m |= EPOLLOUT;
    set_mask(r, &c->ev, m);
    if (c->b && c->b->state == B_BUSY)
        backend_update(r, c->b);
}

static void client_process(corral_router_t *r, corral__cconn_t *c)
{
    c->busy = true;
    c->again = false;
    while (c->ev.fd >= 0) {
        c->again = false;
        if (c->state == C_HEAD) {
            if (c->in_off == c->in_len) {
                c->in_off = c->in_len = 0;
                if (c->eof) {
                    c->state = C_CLOSING;
                    client_flush(r, c);
                    break;
                }
                break;
            }
            corral__head_t h;
            int rc = corral__http_parse_request(c->in + c->in_off, c->in_len - c->in_off, &h);
            if (rc == 0) {
                if (c->eof) {
                    c->state = C_CLOSING;
                    client_flush(r, c);
                    break;
                }
                if (c->in_off > 0) {
                    memmove(c->in, c->in + c->in_off, c->in_len - c->in_off);
                    c->in_len -= c->in_off;
                    c->in_off = 0;
                }
                if (!c->head_started) {
                    c->head_started = true;
                    c->deadline_ns = corral__now_ns() + r->o.header_timeout_ns;
                }
                break;
            }
            if (rc < 0) {
                c->t_start_ns = corral__now_ns();
                c->keep_alive = false;
                c->has_body = true;
                c->minor = 1;
                c->is_head = false;
                client_error(r, c, -rc, false, "%s",
                             rc == -431   ? "request head too large (64 KiB, 100 fields at most)"
                             : rc == -414 ? "request-target too long"
                             : rc == -501 ? "unsupported Transfer-Encoding (chunked only)"
                             : rc == -505 ? "HTTP/1.x only"
                                          : "malformed request head");
                c->in_off = c->in_len = 0;
                req_next(r, c);
                continue;
            }
            start_request(r, c, &h);
            continue;
        }
        if (c->state == C_PROXY && c->b) {
            corral__bconn_t *b = c->b;
            pump_body(r, c);
            if (c->b == b && b->state == B_BUSY && backend_flush(r, b))
                backend_update(r, b);
        }
        if (!c->again)
            break;
    }
    c->busy = false;
    if (c->ev.fd >= 0)
        client_update(r, c);
}

static void client_read(corral_router_t *r, corral__cconn_t *c)
{
    if (c->in_off > 0 && c->in_len == c->in_cap) {
        memmove(c->in, c->in + c->in_off, c->in_len - c->in_off);
        c->in_len -= c->in_off;
        c->in_off = 0;
    }
    if (c->in_len == c->in_cap) {
        if (c->in_cap >= IN_MAX) {
            client_update(r, c);
            return;
        }
        c->in_cap = c->in_cap * 2 > IN_MAX ? IN_MAX : c->in_cap * 2;
        c->in = corral_realloc(c->in, c->in_cap);
    }
    ssize_t n = recv(c->ev.fd, c->in + c->in_len, c->in_cap - c->in_len, 0);
    if (n > 0) {
        c->in_len += (size_t)n;
    } else if (n == 0) {
        c->eof = true;
        if (c->state == C_QUEUED) { /* gone while waiting: never sent on (499) */
            cconn_close(r, c);
            return;
        }
        if (c->state == C_HEAD && c->in_off == c->in_len) {
            cconn_close(r, c);
            return;
        }
    } else if (errno != EAGAIN && errno != EINTR) {
        cconn_close(r, c);
        return;
    }
    client_process(r, c);
}

/* --- backend events ------------------------------------------------------------------------ */

static void backend_update(corral_router_t *r, corral__bconn_t *b)
{
    uint32_t m = 0;
    if (b->state == B_CONNECTING || b->state == B_PROBE) {
        m = EPOLLOUT;
    } else {
        corral__cconn_t *c = b->c;
        /* paused while the client's output is over the mark: not even the
         * FIN, which would wake the loop for every pass and read on */
        if (!c || out_pending(c) < OUT_HIGH)
            m |= EPOLLIN | EPOLLRDHUP;
        if (b->out.len > b->out_off)
            m |= EPOLLOUT;
    }
    set_mask(r, &b->ev, m);
}

static bool backend_flush(corral_router_t *r, corral__bconn_t *b)
{
    while (b->out.len > b->out_off) {
        ssize_t n = send(b->ev.fd, b->out.p + b->out_off, b->out.len - b->out_off, MSG_NOSIGNAL);
        if (n > 0) {
            b->out_off += (size_t)n;
            b->written += (uint64_t)n;
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            break;
        backend_failed(r, b, false);
        return false;
    }
    if (b->out.len == b->out_off) {
        corral_buf_reset(&b->out);
        b->out_off = 0;
        corral__cconn_t *c = b->c;
        if (c && !c->body_done && c->in_len > c->in_off) {
            pump_body(r, c);
            if (c->b == b && b->out.len)
                return backend_flush(r, b);
        }
    }
    return true;
}

/* The exchange on b failed before its response ended. */
static void backend_failed(corral_router_t *r, corral__bconn_t *b, bool connect_failed)
{
    corral__cconn_t *c = b->c;
    corral__pod_st_t *ps = b->pod;
    if (connect_failed)
        ps->down_until_ns = corral__now_ns() + DOWN_NS;
    if (!c) {
        bconn_close(r, b);
        return;
    }
    bool nothing_written = b->written == 0;
    bool safe =
        connect_failed || nothing_written || (c->idempotent && !c->has_body && !c->resp_started);
    if (!c->resp_started && safe && c->tries < MAX_TRIES) {
        /* what was taken but not written moves with the request */
        corral_buf_reset(&c->carry);
        if (nothing_written && b->out.len > b->out_off)
            corral_buf_append(&c->carry, b->out.p + b->out_off, b->out.len - b->out_off);
        c->b = NULL;
        bconn_close(r, b);
        rev_count(r, c->rev, &c->rev->retries);
        logf_(r, "retrying %s/%s after %s %s", c->rev->ns, c->rev->rev,
              connect_failed ? "a failed connect to" : "a closed connection to", ps->addr);
        dispatch(r, c);
        if (c->ev.fd >= 0)
            client_update(r, c);
        return;
    }
    c->b = NULL;
    bconn_close(r, b);
    if (!c->resp_started) {
        c->keep_alive = false;
        close_with_error(r, c, 502, "replica %s of %s closed the connection without a response",
                         ps->name, c->rev->rev);
    } else {
        /* a response was under way: the client cannot be told otherwise */
        c->keep_alive = false;
        c->body_done = true;
        c->state = C_CLOSING;
        req_finish(r, c, corral__now_ns());
        if (client_flush(r, c))
            client_update(r, c);
    }
}

static void probe_done(corral_router_t *r, corral__bconn_t *b, bool ok)
{
    corral__pod_st_t *ps = b->pod;
    corral__rev_st_t *rs = b->probe_rev;
    ps->probe = NULL;
    if (!ok) {
        bconn_close(r, b);
        return;
    }
    logf_(r, "%s accepts connections (probed before Ready)", ps->key);
    ps->probed_ok = true;
    b->state = B_BUSY;
    bconn_park(r, b);
    for (size_t i = 0; i < r->nrevs; i++)
        if (r->revs[i] == rs)
            drain(r, rs);
}

static void backend_connected(corral_router_t *r, corral__bconn_t *b)
{
    int err = 0;
    socklen_t len = sizeof(err);
    getsockopt(b->ev.fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (b->state == B_PROBE) {
        probe_done(r, b, err == 0);
        return;
    }
    if (err != 0) {
        backend_failed(r, b, true);
        return;
    }
    b->state = B_BUSY;
    b->deadline_ns = 0;
    corral__cconn_t *c = b->c;
    if (c)
        pump_body(r, c);
    if (b->c == c && backend_flush(r, b))
        backend_update(r, b);
}

static void relay_span(void *arg, const char *p, size_t n)
{
    corral_buf_append(arg, p, n);
}

static bool resp_hop(const corral__hdr_t *f)
{
    return corral__hdr_is(f, "connection") || corral__hdr_is(f, "keep-alive") ||
           corral__hdr_is(f, "proxy-connection");
}

/* The backend's response head: relay (1xx: and keep parsing). */
static int response_head(corral__bconn_t *b, corral__cconn_t *c)
{
    corral__head_t h;
    int rc = corral__http_parse_response(b->in + b->in_off, b->in_len - b->in_off, &h);
    if (rc <= 0)
        return rc;
    c->resp_started = true;
    b->in_off += (size_t)rc;
    if (h.status < 200) {
        if (h.status == 101)
            return -502;
        if (c->minor >= 1)
            corral_buf_printf(&c->out, "HTTP/1.1 %d %s\r\n\r\n", h.status,
                              corral_http_reason(h.status));
        return rc;
    }
    c->status = h.status;
    b->keep_alive = !h.conn_close;
    bool nobody = c->is_head || h.status == 204 || h.status == 304;
    c->resp_chunked = !nobody && h.chunked;
    c->resp_until_close = !nobody && !h.chunked && h.content_length < 0;
    c->resp_left = nobody || h.content_length < 0 ? 0 : h.content_length;
    if (c->resp_until_close)
        b->keep_alive = false;
    c->dechunk = c->resp_chunked && c->minor == 0;
    if (c->dechunk || c->resp_until_close)
        c->keep_alive = c->keep_alive && !c->resp_until_close && !c->dechunk;
    /* status line as the backend wrote it, our version */
    const char *line = b->in + b->in_off - (size_t)rc;
    const char *eol = memchr(line, '\r', (size_t)rc);
    corral_buf_puts(&c->out, "HTTP/1.1");
    corral_buf_append(&c->out, line + 8, (size_t)(eol - line) - 8);
    corral_buf_puts(&c->out, "\r\n");
    for (size_t i = 0; i < h.nhdrs; i++) {
        const corral__hdr_t *f = &h.hdrs[i];
        if (resp_hop(f) || (c->dechunk && corral__hdr_is(f, "transfer-encoding")))
            continue;
        corral_buf_append(&c->out, f->name, f->nlen);
        corral_buf_puts(&c->out, ": ");
        corral_buf_append(&c->out, f->val, f->vlen);
        corral_buf_puts(&c->out, "\r\n");
    }
    if (!c->keep_alive || !c->body_done)
        corral_buf_puts(&c->out, "Connection: close\r\n");
    else if (c->minor == 0)
        corral_buf_puts(&c->out, "Connection: keep-alive\r\n");
    corral_buf_puts(&c->out, "\r\n");
    if (!c->body_done)
        c->keep_alive = false;
    c->rstate =
        nobody || (!c->resp_chunked && !c->resp_until_close && c->resp_left == 0) ? R_DONE : R_BODY;
    return rc;
}

/* The response ended: b back to its pool, c on to its next request. */
static void response_done(corral_router_t *r, corral__bconn_t *b, corral__cconn_t *c)
{
    c->b = NULL;
    bool reuse =
        b->keep_alive && b->in_off == b->in_len && c->body_done && b->out.len == b->out_off;
    if (reuse)
        bconn_park(r, b);
    else
        bconn_close(r, b);
    if (!client_flush(r, c))
        return;
    req_next(r, c);
}

static void backend_read(corral_router_t *r, corral__bconn_t *b)
{
    corral__cconn_t *c = b->c;
    if (b->state == B_IDLE || !c) {
        bconn_close(r, b); /* data or FIN on an idle connection: it is done */
        return;
    }
    if (b->in_off == b->in_len)
        b->in_off = b->in_len = 0;
    if (b->in_len == b->in_cap) {
        if (b->in_off > 0) {
            memmove(b->in, b->in + b->in_off, b->in_len - b->in_off);
            b->in_len -= b->in_off;
            b->in_off = 0;
        } else if (b->in_cap < IN_MAX) {
            b->in_cap = b->in_cap ? b->in_cap * 2 : IN_INIT;
            if (b->in_cap > IN_MAX)
                b->in_cap = IN_MAX;
            b->in = corral_realloc(b->in, b->in_cap);
        } else {
            backend_failed(r, b, false);
            return;
        }
    }
    ssize_t n = recv(b->ev.fd, b->in + b->in_len, b->in_cap - b->in_len, 0);
    if (n < 0) {
        if (errno == EAGAIN || errno == EINTR)
            return;
        backend_failed(r, b, false);
        return;
    }
    if (n == 0) {
        if (c->rstate == R_BODY && c->resp_until_close) {
            b->keep_alive = false;
            response_done(r, b, c);
            return;
        }
        backend_failed(r, b, false);
        return;
    }
    b->in_len += (size_t)n;
    while (c->rstate == R_HEAD) {
        int rc = response_head(b, c);
        if (rc == 0)
            break;
        if (rc < 0) {
            bool started = out_pending(c) > 0;
            c->b = NULL;
            bconn_close(r, b);
            c->keep_alive = false;
            if (started) {
                c->state = C_CLOSING;
                req_finish(r, c, corral__now_ns());
                if (client_flush(r, c))
                    client_update(r, c);
                return;
            }
            c->status = 502;
            close_with_error(r, c, 502, "replica of %s sent a malformed response",
                             c->rev ? c->rev->rev : "");
            return;
        }
    }
    if (c->rstate == R_BODY && b->in_len > b->in_off) {
        size_t avail = b->in_len - b->in_off;
        const char *p = b->in + b->in_off;
        size_t take = avail;
        if (c->resp_chunked) {
            ssize_t k =
                corral__chunked_feed(&c->rch, p, avail, c->dechunk ? relay_span : NULL, &c->out);
            if (k < 0) {
                backend_failed(r, b, false);
                return;
            }
            take = (size_t)k;
            if (!c->dechunk)
                corral_buf_append(&c->out, p, take);
            if (corral__chunked_done(&c->rch))
                c->rstate = R_DONE;
        } else if (!c->resp_until_close) {
            if ((int64_t)take > c->resp_left)
                take = (size_t)c->resp_left;
            corral_buf_append(&c->out, p, take);
            c->resp_left -= (int64_t)take;
            if (c->resp_left == 0)
                c->rstate = R_DONE;
        } else {
            corral_buf_append(&c->out, p, take);
        }
        b->in_off += take;
    }
    if (c->rstate == R_DONE) {
        response_done(r, b, c);
        return;
    }
    if (!client_flush(r, c)) {
        return;
    }
    client_update(r, c);
}

/* --- connections ----------------------------------------------------------------------------- */

static void cconn_close(corral_router_t *r, corral__cconn_t *c)
{
    if (c->state == C_QUEUED && c->rev) {
        queue_remove(c);
    }
    if (c->rev)
        req_finish(r, c, corral__now_ns());
    if (c->b) {
        corral__bconn_t *b = c->b;
        c->b = NULL;
        b->c = NULL;
        bconn_close(r, b);
    }
    epoll_ctl(r->epfd, EPOLL_CTL_DEL, c->ev.fd, NULL);
    close(c->ev.fd);
    c->ev.fd = -1;
    if (c->prev)
        c->prev->next = c->next;
    else
        r->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    r->nconns--;
    c->next = r->dead_c;
    r->dead_c = c;
}

static void accept_all(corral_router_t *r, evh_t *le)
{
    for (;;) {
        if (r->nconns >= (size_t)r->o.max_conns) {
            r->accepting = false;
            set_mask(r, le, 0);
            return;
        }
        struct sockaddr_storage sa;
        memset(&sa, 0, sizeof(sa));
        socklen_t len = sizeof(sa);
        int fd = accept4(r->lfd, (struct sockaddr *)&sa, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return;
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        corral__cconn_t *c = corral_calloc(1, sizeof(*c));
        c->ev.type = EV_CLIENT;
        c->ev.fd = fd;
        c->in_cap = IN_INIT;
        c->in = corral_malloc(c->in_cap);
        corral_buf_init(&c->out);
        corral_buf_init(&c->head_out);
        corral_buf_init(&c->carry);
        c->keep_alive = true;
        req_reset(c);
        if (sa.ss_family == AF_INET)
            inet_ntop(AF_INET, &((struct sockaddr_in *)&sa)->sin_addr, c->peer, sizeof(c->peer));
        else if (sa.ss_family == AF_INET6)
            inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&sa)->sin6_addr, c->peer, sizeof(c->peer));
        c->deadline_ns = corral__now_ns() + r->o.header_timeout_ns;
        c->next = r->conns;
        if (r->conns)
            r->conns->prev = c;
        r->conns = c;
        r->nconns++;
        ev_add(r, &c->ev, EPOLLIN | EPOLLRDHUP);
    }
}

/* --- route tables --------------------------------------------------------------------------------
 */

void corral__router_publish(corral_router_t *r, corral__rt_table_t *t)
{
    pthread_mutex_lock(&r->tmu);
    corral__rt_table_t *old = r->pending;
    r->pending = t;
    pthread_mutex_unlock(&r->tmu);
    corral__rt_free(old);
    uint64_t one = 1;
    ssize_t n = write(r->evfd, &one, sizeof(one));
    (void)n;
}

static void gc(corral_router_t *r)
{
    for (size_t i = r->nrevs; i-- > 0;) {
        corral__rev_st_t *rs = r->revs[i];
        if (!rs->cur && rs->inflight == 0 && rs->queued == 0)
            rev_free_at(r, i);
    }
    for (size_t i = r->npods; i-- > 0;) {
        corral__pod_st_t *ps = r->pods[i];
        if (ps->gen != r->gen && ps->outstanding == 0)
            pod_free_at(r, i);
    }
}

static void take_table(corral_router_t *r)
{
    pthread_mutex_lock(&r->tmu);
    corral__rt_table_t *t = r->pending;
    r->pending = NULL;
    pthread_mutex_unlock(&r->tmu);
    if (!t)
        return;
    uint64_t gen = ++r->gen;
    t->gen = gen;
    for (size_t i = 0; i < t->nsvcs; i++) {
        corral__rt_svc_t *s = &t->svcs[i];
        for (size_t k = 0; k < s->nrevs; k++) {
            corral__rt_rev_t *rv = &s->revs[k];
            corral__rev_st_t *rs = rev_get(r, s, rv);
            rv->st = rs;
            rs->cur = rv;
            rs->gen = gen;
            for (size_t j = 0; j < rv->nready; j++) {
                corral__pod_st_t *ps = pod_get(r, &rv->ready[j]);
                rv->ready[j].st = ps;
                ps->gen = gen;
            }
            for (size_t j = 0; j < rv->nstarting; j++) {
                corral__pod_st_t *ps = pod_get(r, &rv->starting[j]);
                rv->starting[j].st = ps;
                ps->gen = gen;
            }
        }
    }
    for (size_t i = 0; i < r->npods; i++)
        if (r->pods[i]->gen != gen)
            r->pods[i]->probed_ok = false;
    /* the new table first: a failed request's pipelined successor is
     * routed on it */
    corral__rt_table_t *old = r->table;
    r->table = t;
    for (size_t i = 0; i < r->nrevs; i++) {
        corral__rev_st_t *rs = r->revs[i];
        if (rs->gen != gen) {
            rs->cur = NULL;
            while (rs->qhead) { /* the revision left the traffic list */
                corral__cconn_t *c = rs->qhead;
                queue_remove(c);
                close_with_error(r, c, 503, "revision %s/%s left the traffic list", rs->ns,
                                 rs->rev);
            }
        }
    }
    corral__rt_free(old);
    for (size_t i = 0; i < r->nrevs; i++)
        if (r->revs[i]->qhead)
            drain(r, r->revs[i]);
    gc(r);
}

/* --- timers
 * -------------------------------------------------------------------------------------------- */

static void probe_start(corral_router_t *r, corral__rev_st_t *rs, corral__pod_st_t *ps)
{
    corral__bconn_t *b = bconn_connect(r, ps);
    if (!b)
        return;
    b->state = B_PROBE;
    b->probe_rev = rs;
    b->deadline_ns = corral__now_ns() + r->o.probe_period_ns * 4;
    ps->probe = b;
}

static void probes(corral_router_t *r, int64_t now)
{
    for (size_t i = 0; i < r->nrevs; i++) {
        corral__rev_st_t *rs = r->revs[i];
        if (!rs->qhead || !rs->cur || rs->next_probe_ns > now)
            continue;
        rs->next_probe_ns = now + r->o.probe_period_ns;
        for (size_t k = 0; k < rs->cur->nstarting; k++) {
            corral__pod_st_t *ps = rs->cur->starting[k].st;
            if (ps && !ps->probed_ok && !ps->probe)
                probe_start(r, rs, ps);
        }
    }
}

static void sweep(corral_router_t *r, int64_t now)
{
    /* queue timeouts: FIFO, so the oldest are first */
    for (size_t i = 0; i < r->nrevs; i++) {
        corral__rev_st_t *rs = r->revs[i];
        while (rs->qhead && rs->qhead->q_deadline_ns <= now) {
            corral__cconn_t *c = rs->qhead;
            queue_remove(c);
            rev_count(r, rs, &rs->timeouts);
            char secs[32];
            snprintf(secs, sizeof(secs), "%.3gs", (double)r->o.queue_timeout_ns / 1e9);
            close_with_error(r, c, 503, "revision %s has had no ready replica for %s", rs->rev,
                             secs);
        }
    }
    for (corral__cconn_t *c = r->conns, *nx; c; c = nx) {
        nx = c->next;
        if (c->state == C_HEAD && c->deadline_ns && c->deadline_ns <= now) {
            if (c->in_len > c->in_off) {
                c->keep_alive = false;
                c->has_body = true;
                client_error(r, c, 408, false, "the request head did not arrive in time");
                c->in_off = c->in_len = 0;
                c->state = C_CLOSING;
                if (client_flush(r, c))
                    client_update(r, c);
            } else {
                cconn_close(r, c);
            }
        } else if (c->b && (c->b->state == B_CONNECTING) && c->b->deadline_ns <= now) {
            backend_failed(r, c->b, true);
        }
    }
    for (size_t i = 0; i < r->npods; i++) {
        corral__pod_st_t *ps = r->pods[i];
        if (ps->probe && ps->probe->deadline_ns <= now)
            probe_done(r, ps->probe, false);
    }
}

/* --- the loop
 * ------------------------------------------------------------------------------------------- */

int corral__router_loop(corral_router_t *r)
{
    evh_t lev = {.type = EV_LISTEN, .fd = r->lfd};
    evh_t wev = {.type = EV_WAKE, .fd = r->evfd};
    ev_add(r, &lev, EPOLLIN);
    ev_add(r, &wev, EPOLLIN);
    r->accepting = true;
    struct epoll_event evs[256];
    take_table(r);
    while (!r->stop) {
        int timeout = 100;
        for (size_t i = 0; i < r->nrevs; i++)
            if (r->revs[i]->qhead) {
                timeout = (int)(r->o.probe_period_ns / 1000000);
                if (timeout < 1)
                    timeout = 1;
                break;
            }
        int n = epoll_wait(r->epfd, evs, 256, timeout);
        for (int i = 0; i < n; i++) {
            evh_t *e = evs[i].data.ptr;
            uint32_t ev = evs[i].events;
            if (e->type == EV_LISTEN) {
                accept_all(r, e);
            } else if (e->type == EV_WAKE) {
                uint64_t v;
                ssize_t k = read(r->evfd, &v, sizeof(v));
                (void)k;
                take_table(r);
            } else if (e->type == EV_CLIENT) {
                corral__cconn_t *c = (corral__cconn_t *)e;
                if (c->ev.fd < 0)
                    continue;
                if (ev & (EPOLLERR | EPOLLHUP)) {
                    cconn_close(r, c);
                    continue;
                }
                if ((ev & EPOLLOUT) && !client_flush(r, c))
                    continue;
                if (ev & (EPOLLIN | EPOLLRDHUP))
                    client_read(r, c);
                else
                    client_update(r, c);
            } else {
                corral__bconn_t *b = (corral__bconn_t *)e;
                if (b->ev.fd < 0)
                    continue;
                if (b->state == B_CONNECTING || b->state == B_PROBE) {
                    backend_connected(r, b);
                    continue;
                }
                if ((ev & (EPOLLIN | EPOLLRDHUP)) && !(ev & (EPOLLERR | EPOLLHUP)) && b->c &&
                    out_pending(b->c) >= OUT_HIGH) {
                    backend_update(r, b); /* the client is behind: read later */
                    continue;
                }
                if (ev & (EPOLLIN | EPOLLRDHUP | EPOLLERR | EPOLLHUP)) {
                    backend_read(r, b);
                    continue;
                }
                if ((ev & EPOLLOUT) && backend_flush(r, b)) {
                    if (b->c)
                        client_update(r, b->c);
                    else
                        backend_update(r, b);
                }
            }
        }
        free_dead(r);
        int64_t now = corral__now_ns();
        if (!r->accepting && r->nconns < (size_t)r->o.max_conns) {
            r->accepting = true;
            set_mask(r, &lev, EPOLLIN);
        }
        probes(r, now);
        if (now >= r->next_sweep_ns) {
            r->next_sweep_ns = now + SWEEP_NS;
            sweep(r, now);
            gc(r);
        }
        free_dead(r);
    }
    return 0;
}

void corral__router_loop_free(corral_router_t *r)
{
    while (r->conns)
        cconn_close(r, r->conns);
    for (size_t i = r->nrevs; i-- > 0;)
        r->revs[i]->cur = NULL;
    r->gen++;
    gc(r);
    for (size_t i = r->npods; i-- > 0;)
        pod_free_at(r, i);
    for (size_t i = r->nrevs; i-- > 0;)
        rev_free_at(r, i);
    corral_free(r->revs);
    corral_free(r->pods);
    corral_hmap_fini(&r->rev_ix);
    corral_hmap_fini(&r->pod_ix);
    corral__rt_free(r->table);
    corral__rt_free(r->pending);
    r->table = r->pending = NULL;
    free_dead(r);
}
