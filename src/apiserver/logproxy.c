/*
 * Calls to the node agents: pods/log and nodes/NAME/proxy, as kube-apiserver
 * proxies to kubelet, and the metrics-server's scrapes (metricsserver.c).
 * The target comes only from stored objects: the Node's status.addresses
 * (InternalIP, else ExternalIP, else Hostname; a numeric address, so that
 * nothing blocks on a DNS lookup) and status.daemonEndpoints.kubeletEndpoint
 * .Port (for the node proxy `NAME:PORT` picks another port of that address,
 * as upstream allows). The agent's request is made here from validated
 * values: pods/log re-encodes its query (follow, previous, timestamps,
 * tailLines, limitBytes, sinceSeconds); the node proxy passes a path and
 * query made only of URL-safe characters.
 *
 * Everything runs on one loop thread: a non-blocking connect through a
 * bufferevent (with a timeout), the agent's answer read as it arrives. Two
 * modes:
 *   - a stream (pods/log): a 200 becomes a chunked stream to the client
 *     (text/plain); another status is collected (at most 64 KiB) and passed
 *     through, so the agent's Status (a missing previous instance, no logs)
 *     reaches kubectl unchanged. Reading from the agent pauses while more
 *     than the watch buffer waits on the client's socket. The stream ends
 *     when the agent closes; when the client goes away the agent connection
 *     is closed. At most CORRAL__MAX_LOG_STREAMS at once (429 beyond).
 *   - collected (nodes/proxy, scrapes): the whole answer, at most a limit of
 *     bytes and with an idle timeout, handed to a callback with the agent's
 *     status and Content-Type; the node proxy replies with them (so
 *     Prometheus gets the agent's exposition type). At most
 *     CORRAL__MAX_NODE_PROXIES node proxy calls at once (429 beyond).
 * Connections to the agent are one per call (Connection: close); the
 * client's own connection stays alive.
 */
#include <arpa/inet.h>
#include <event2/buffer.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "apiserver/apiserver_int.h"

#define CORRAL__MAX_LOG_STREAMS  256
#define CORRAL__MAX_NODE_PROXIES 256
#define CONNECT_TIMEOUT_S        10
#define READ_TIMEOUT_S           30
#define HEAD_MAX                 ((size_t)16 << 10)
#define ERROR_BODY_MAX           ((size_t)64 << 10)
#define NODE_PROXY_MAX           ((size_t)16 << 20)

struct corral__agent_call {
    struct bufferevent *bev;
    corral__req_t *r; /* stream mode: the request streamed to; NULL when collected */
    corral__agent_done_fn done;
    void *arg;
    int *count; /* the server's counter this call holds one of */
    bool starting, early_fail;
    bool head_done, streaming;
    int code;
    char ctype[96];
    bool chunked;
    int64_t clen, got; /* Content-Length (-1: until close) and body bytes seen */
    size_t limit;      /* collected: most body bytes */
    bool over;         /* collected: the body passed limit */
    corral_http_chunked_t ch;
    corral_buf_t body; /* collected answer; a chunked stream's decoded bytes */
    char where[320];   /* node "n" at ADDR:PORT, for messages */
    char msg[512];     /* a failure while starting */
};
typedef struct corral__agent_call call_t;

/* --- ending ----------------------------------------------------------------------------- */

static void call_free(call_t *p)
{
    if (p->bev)
        bufferevent_free(p->bev);
    corral_buf_fini(&p->body);
    if (p->count)
        __atomic_sub_fetch(p->count, 1, __ATOMIC_ACQ_REL);
    if (p->r) {
        p->r->hctx = NULL;
        p->r->cleanup = NULL;
        p->r->stream_closed = NULL;
        p->r->stream_writable = NULL;
    }
    corral_free(p);
}

void corral__agent_cancel(corral__agent_call_t *c)
{
    if (c)
        call_free(c);
}

/* A stream request went away (client closed, or the request is freed). */
static void stream_gone(corral__req_t *r)
{
    if (r->hctx)
        call_free(r->hctx);
}

/* The call is over: msg NULL when the answer is complete (or the agent
 * closed after its head), else why it failed. */
static void call_end(call_t *p, const char *msg)
{
    if (p->starting) {
        p->early_fail = true;
        snprintf(p->msg, sizeof(p->msg), "%s", msg ? msg : "the node agent closed at once");
        return;
    }
    corral__req_t *r = p->r;
    if (!r) {
        corral__agent_done_fn done = p->done;
        void *arg = p->arg;
        int code = msg ? 0 : p->over ? 0 : p->code;
        char ctype[96], why[512];
        snprintf(ctype, sizeof(ctype), "%s", p->ctype[0] ? p->ctype : "text/plain");
        snprintf(why, sizeof(why), "%s",
                 msg       ? msg
                 : p->over ? "the node agent's answer is too large"
                           : "");
        corral_buf_t b = p->body;
        corral_buf_init(&p->body);
        call_free(p);
        done(arg, code, ctype, &b, code ? NULL : why);
        corral_buf_fini(&b);
        return;
    }
    if (p->streaming) {
        call_free(p);
        corral__stream_end(r->conn);
        return;
    }
    if (msg && !p->head_done) {
        char m[512];
        snprintf(m, sizeof(m), "%s", msg);
        call_free(p);
        corral__status(r, 502, "BadGateway", NULL, NULL, "%s", m);
        return;
    }
    int code = p->code;
    char ctype[96];
    snprintf(ctype, sizeof(ctype), "%s", p->ctype[0] ? p->ctype : "text/plain");
    corral_buf_t b = p->body;
    corral_buf_init(&p->body);
    call_free(p);
    corral__reply(r, code, ctype, b.p, b.len);
    corral_buf_fini(&b);
}

/* --- the agent's answer -------------------------------------------------------------------- */

/* The value of header name in the head (NUL-terminated text), into out. */
static bool head_value(const char *head, const char *name, char *out, size_t len)
{
    size_t nl = strlen(name);
    for (const char *line = strstr(head, "\r\n"); line && line[2];
         line = strstr(line + 2, "\r\n")) {
        const char *h = line + 2;
        if (strncasecmp(h, name, nl) != 0 || h[nl] != ':')
            continue;
        h += nl + 1;
        while (*h == ' ' || *h == '\t')
            h++;
        const char *end = strstr(h, "\r\n");
        size_t n = end ? (size_t)(end - h) : strlen(h);
        snprintf(out, len, "%.*s", (int)n, h);
        return true;
    }
    return false;
}

/* Parse the agent's response head; false (after ending) when malformed. */
static bool take_head(call_t *p, struct evbuffer *in)
{
    struct evbuffer_ptr e = evbuffer_search(in, "\r\n\r\n", 4, NULL);
    if (e.pos < 0) {
        if (evbuffer_get_length(in) > HEAD_MAX) {
            call_end(p, "the node agent's answer has an oversized head");
            return false;
        }
        return true;
    }
    size_t hl = (size_t)e.pos + 4;
    char *head = corral_malloc(hl + 1);
    evbuffer_remove(in, head, hl);
    head[hl] = '\0';
    int code = 0;
    if (strncmp(head, "HTTP/1.", 7) != 0 || sscanf(head + 8, " %3d", &code) != 1 || code < 100) {
        corral_free(head);
        call_end(p, "the node agent's answer is not HTTP");
        return false;
    }
    /* What is relayed to the client must frame as a body: no 1xx, 204, 304. */
    if (code < 200 || code == 204 || code == 304 || code > 599) {
        corral_free(head);
        call_end(p, "the node agent answered a status that carries no body");
        return false;
    }
    char v[96];
    p->code = code;
    p->chunked = head_value(head, "Transfer-Encoding", v, sizeof(v)) && strcasestr(v, "chunked");
    p->clen = head_value(head, "Content-Length", v, sizeof(v)) ? strtoll(v, NULL, 10) : -1;
    if (!head_value(head, "Content-Type", p->ctype, sizeof(p->ctype)))
        p->ctype[0] = '\0';
    for (const char *c = p->ctype; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f) { /* never into our own header */
            p->ctype[0] = '\0';
            break;
        }
    corral_free(head);
    p->head_done = true;
    if (p->r && code == 200) {
        p->streaming = true;
        corral__stream_start_as(p->r, 200, p->ctype[0] ? p->ctype : "text/plain");
    }
    if (!p->r && p->clen > (int64_t)p->limit) {
        p->over = true;
        call_end(p, NULL);
        return false;
    }
    return true;
}

/* Keep n more bytes of a non-streamed answer (within its bound). */
static void keep(call_t *p, const char *data, size_t n)
{
    size_t max = p->r ? ERROR_BODY_MAX : p->limit;
    if (p->body.len + n <= max)
        corral_buf_append(&p->body, data, n);
    else if (!p->r)
        p->over = true;
}

/* Relay body bytes; returns true when the body is complete. */
static bool relay(call_t *p, const char *data, size_t n)
{
    if (p->chunked) {
        size_t used = 0;
        corral_buf_t *dst = &p->body;
        size_t before = dst->len;
        size_t max = p->r ? (size_t)1 << 30 : p->limit;
        int rc = corral_http_chunked_feed(&p->ch, data, n, &used, dst, max);
        if (rc < 0) {
            p->over = !p->r && rc == CORRAL_ETOOBIG;
            return true; /* bad framing or too big: end here */
        }
        if (p->streaming) {
            corral__stream_write(p->r->conn, dst->p, dst->len);
            corral_buf_reset(dst);
        } else if (p->r && dst->len > ERROR_BODY_MAX) {
            dst->len = before;
        }
        return rc == 1;
    }
    if (p->clen >= 0 && (int64_t)n > p->clen - p->got)
        n = (size_t)(p->clen - p->got);
    p->got += (int64_t)n;
    if (p->streaming)
        corral__stream_write(p->r->conn, data, n);
    else
        keep(p, data, n);
    return p->over || (p->clen >= 0 && p->got >= p->clen);
}

static void agent_read(struct bufferevent *bev, void *arg)
{
    call_t *p = arg;
    struct evbuffer *in = bufferevent_get_input(bev);
    if (!p->head_done && (!take_head(p, in) || !p->head_done))
        return;
    while (evbuffer_get_length(in)) {
        size_t n = evbuffer_get_contiguous_space(in);
        const char *data = (const char *)evbuffer_pullup(in, (ssize_t)n);
        bool complete = relay(p, data, n);
        evbuffer_drain(in, n);
        if (complete) {
            call_end(p, NULL);
            return;
        }
    }
    if (p->streaming && corral__conn_pending(p->r->conn) > p->r->srv->opts.watch_buffer)
        bufferevent_disable(bev, EV_READ); /* resumed by client_writable */
}

static void agent_event(struct bufferevent *bev, short what, void *arg)
{
    call_t *p = arg;
    if (what & BEV_EVENT_CONNECTED) {
        struct timeval tv = {READ_TIMEOUT_S, 0};
        bufferevent_set_timeouts(bev, p->r ? NULL : &tv, NULL);
        return;
    }
    if (what & BEV_EVENT_EOF) {
        call_end(p, p->head_done ? NULL : "the node agent closed the connection without answering");
        return;
    }
    char msg[512];
    snprintf(msg, sizeof(msg), "cannot reach the node agent of %s: %s", p->where,
             (what & BEV_EVENT_TIMEOUT)
                 ? (p->head_done || !p->r ? "timed out" : "connection timed out")
                 : evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR()));
    call_end(p, msg);
}

static void client_writable(corral__req_t *r)
{
    call_t *p = r->hctx;
    if (p && p->bev)
        bufferevent_enable(p->bev, EV_READ);
}

/* Connect to the agent and send req. 0 with *out, or CORRAL_EAGAIN (more
 * than max calls on count) or CORRAL_EIO with a message in err. */
static int call_start(struct event_base *base, const corral__agent_target_t *t, const char *req,
                      size_t reqlen, int *count, int max, call_t **out, char *err, size_t errlen)
{
    if (__atomic_add_fetch(count, 1, __ATOMIC_ACQ_REL) > max) {
        __atomic_sub_fetch(count, 1, __ATOMIC_ACQ_REL);
        snprintf(err, errlen, "too many calls to node agents open (%d); try again later", max);
        return CORRAL_EAGAIN;
    }
    call_t *p = corral_calloc(1, sizeof(*p));
    p->clen = -1;
    p->count = count;
    corral_buf_init(&p->body);
    snprintf(p->where, sizeof(p->where), "%s", t->where);
    p->bev = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
    if (!p->bev) {
        call_free(p);
        snprintf(err, errlen, "cannot create a socket to the node agent");
        return CORRAL_EIO;
    }
    bufferevent_setcb(p->bev, agent_read, NULL, agent_event, p);
    struct timeval tv = {CONNECT_TIMEOUT_S, 0};
    bufferevent_set_timeouts(p->bev, NULL, &tv);
    bufferevent_write(p->bev, req, reqlen); /* queued until connected */
    bufferevent_enable(p->bev, EV_READ | EV_WRITE);
    p->starting = true;
    int rc = bufferevent_socket_connect(p->bev, (const struct sockaddr *)&t->ss, (int)t->sl);
    p->starting = false;
    if (rc != 0 || p->early_fail) {
        if (p->early_fail)
            snprintf(err, errlen, "%s", p->msg);
        else
            snprintf(err, errlen, "cannot reach the node agent of %s: %s", t->where,
                     evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR()));
        call_free(p);
        return CORRAL_EIO;
    }
    *out = p;
    return 0;
}

int corral__agent_get(corral__loop_t *loop, const corral__agent_target_t *t, const char *path,
                      size_t limit, corral__agent_done_fn done, void *arg,
                      corral__agent_call_t **out, char *err, size_t errlen)
{
    corral_buf_t req;
    corral_buf_init(&req);
    corral_buf_printf(&req,
                      "GET %s HTTP/1.1\r\nHost: corral-agent\r\nUser-Agent: corral-apiserver\r\n"
                      "Accept: text/plain;version=0.0.4;q=1,*/*;q=0.1\r\nConnection: close\r\n\r\n",
                      path);
    call_t *p = NULL;
    int rc = call_start(loop->base, t, req.p, req.len, &loop->srv->agent_calls,
                        CORRAL__MAX_NODE_PROXIES, &p, err, errlen);
    corral_buf_fini(&req);
    if (rc)
        return rc;
    p->limit = limit;
    p->done = done;
    p->arg = arg;
    *out = p;
    return 0;
}

/* --- targets ------------------------------------------------------------------------------------
 */

int corral__agent_target(corral_store_reader_t *rd, corral_arena_t *a, const char *node, int port,
                         corral__agent_target_t *t, char *err, size_t errlen)
{
    corral_store_row_t row;
    corral_val_t *n = NULL;
    if (corral_store_get(rd, corral__res_of_kind(CORRAL_KIND_NODE)->key, "", node, a, &row) == 0)
        n = corral__json_tree(a, row.json, row.json_len);
    if (!n) {
        snprintf(err, errlen, "node \"%s\" does not exist", node);
        return CORRAL_ENOENT;
    }
    const corral_val_t *st = corral_val_get(n, "status");
    const corral_val_t *addrs = corral_val_get(st, "addresses");
    static const char *const prefer[] = {"InternalIP", "ExternalIP", "Hostname"};
    const char *addr = NULL;
    for (size_t k = 0; k < CORRAL_ARRAY_LEN(prefer) && !addr; k++) {
        for (size_t i = 0; addrs && addrs->kind == CORRAL_VAL_SEQ && i < addrs->n && !addr; i++) {
            const char *ty = corral_val_get_str(addrs->items[i], "type");
            if (ty && !strcmp(ty, prefer[k]))
                addr = corral_val_get_str(addrs->items[i], "address");
        }
    }
    const corral_val_t *pv = corral_val_dig(st, "daemonEndpoints.kubeletEndpoint.Port");
    int64_t p = port > 0 ? port : pv && pv->kind == CORRAL_VAL_INT ? pv->u.i : 0;
    memset(&t->ss, 0, sizeof(t->ss));
    struct sockaddr_in *v4 = (struct sockaddr_in *)&t->ss;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&t->ss;
    bool ok = p > 0 && p < 65536 && addr;
    if (ok && inet_pton(AF_INET, addr, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons((uint16_t)p);
        t->sl = sizeof(*v4);
    } else if (ok && inet_pton(AF_INET6, addr, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons((uint16_t)p);
        t->sl = sizeof(*v6);
    } else {
        snprintf(err, errlen,
                 "node \"%s\" advertises no agent endpoint: it needs a numeric address in "
                 "status.addresses and status.daemonEndpoints.kubeletEndpoint.Port "
                 "(has %s, port %lld)",
                 node, addr ? addr : "no address", (long long)p);
        return CORRAL_EINVAL;
    }
    snprintf(t->where, sizeof(t->where), "node \"%s\" at %s%s%s:%lld", node,
             t->ss.ss_family == AF_INET6 ? "[" : "", addr, t->ss.ss_family == AF_INET6 ? "]" : "",
             (long long)p);
    return 0;
}

/* --- pods/log ------------------------------------------------------------------------------ */

/* The container the request names, or the pod's only one; NULL after a 400. */
static const char *pick_container(corral__req_t *r, const corral_val_t *pod)
{
    const char *want = corral__param(r, "container");
    const corral_val_t *spec = corral_val_get(pod, "spec");
    const corral_val_t *lists[2] = {corral_val_get(spec, "containers"),
                                    corral_val_get(spec, "initContainers")};
    corral_buf_t names[2];
    size_t counts[2] = {0, 0};
    const char *only = NULL, *found = NULL;
    for (int k = 0; k < 2; k++) {
        corral_buf_init(&names[k]);
        for (size_t i = 0; lists[k] && lists[k]->kind == CORRAL_VAL_SEQ && i < lists[k]->n; i++) {
            const char *n = corral_val_get_str(lists[k]->items[i], "name");
            if (!n)
                continue;
            corral_buf_printf(&names[k], "%s%s", counts[k]++ ? " " : "", n);
            if (want && *want && !strcmp(n, want))
                found = n;
            if (k == 0)
                only = n;
        }
    }
    const char *pick = NULL;
    if (want && *want && found)
        pick = corral_arena_strdup(r->a, found);
    else if (want && *want)
        corral__status(r, 400, "BadRequest", NULL, NULL, "container %s is not valid for pod %s",
                       want, r->name);
    else if (counts[0] == 1)
        pick = corral_arena_strdup(r->a, only);
    else
        corral__status(r, 400, "BadRequest", NULL, NULL,
                       "a container name must be specified for pod %s, choose one of: [%s]%s%s%s",
                       r->name, corral_buf_str(&names[0]),
                       counts[1] ? " or one of the init containers: [" : "",
                       counts[1] ? corral_buf_str(&names[1]) : "", counts[1] ? "]" : "");
    corral_buf_fini(&names[0]);
    corral_buf_fini(&names[1]);
    return pick;
}

/* The agent's request line and headers, from validated parameters; false
 * after a 400. */
static bool agent_request(corral__req_t *r, const char *container, corral_buf_t *out)
{
    static const char *const bools[] = {"follow", "previous", "timestamps"};
    static const char *const ints[] = {"tailLines", "limitBytes", "sinceSeconds"};
    corral_buf_printf(out, "GET /containerLogs/%s/%s/%s", r->ns, r->name, container);
    char sep = '?';
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(bools); i++) {
        bool on = false;
        if (!corral__param_bool(r, bools[i], &on))
            return false;
        if (on) {
            corral_buf_printf(out, "%c%s=true", sep, bools[i]);
            sep = '&';
        }
    }
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(ints); i++) {
        int64_t v = 0;
        bool set = false;
        if (!corral__param_int(r, ints[i], &v, &set))
            return false;
        if (set) {
            corral_buf_printf(out, "%c%s=%lld", sep, ints[i], (long long)v);
            sep = '&';
        }
    }
    corral_buf_puts(out, " HTTP/1.1\r\nHost: corral-agent\r\nUser-Agent: corral-apiserver\r\n"
                         "Connection: close\r\n\r\n");
    return true;
}

/* Start the log stream of r (replies on failure). */
static void log_start(corral__req_t *r, const corral__agent_target_t *t, corral_buf_t *req)
{
    call_t *p = NULL;
    char err[512];
    int rc = call_start(r->loop->base, t, req->p, req->len, &r->srv->log_streams,
                        CORRAL__MAX_LOG_STREAMS, &p, err, sizeof(err));
    if (rc == CORRAL_EAGAIN) {
        corral__status(r, 429, "TooManyRequests", NULL, NULL,
                       "too many log streams open (%d); try again later", CORRAL__MAX_LOG_STREAMS);
        return;
    }
    if (rc) {
        corral__status(r, 502, "BadGateway", NULL, NULL, "%s", err);
        return;
    }
    p->r = r;
    r->hctx = p;
    r->cleanup = stream_gone;
    r->stream_closed = stream_gone;
    r->stream_writable = client_writable;
}

void corral__h_log(corral__req_t *r)
{
    corral__cur_t cur;
    if (!corral__read_current(r, &cur))
        return;
    const char *container = pick_container(r, cur.tree);
    if (!container)
        return;
    const char *node = corral_val_get_str(corral_val_get(cur.tree, "spec"), "nodeName");
    if (!node || !*node) {
        corral__status(r, 400, "BadRequest", NULL, NULL,
                       "container \"%s\" in pod \"%s\" is waiting to start: the pod is not "
                       "scheduled to a node yet",
                       container, r->name);
        return;
    }
    corral__agent_target_t t;
    char err[512];
    int rc = corral__agent_target(corral__rd(r), r->a, node, 0, &t, err, sizeof(err));
    if (rc == CORRAL_ENOENT) {
        corral__status(r, 500, "InternalError", NULL, NULL,
                       "pod \"%s\" is bound to node \"%s\", which does not exist", r->name, node);
        return;
    }
    if (rc) {
        corral__status(r, 500, "InternalError", NULL, NULL, "%s", err);
        return;
    }
    corral_buf_t req;
    corral_buf_init(&req);
    if (agent_request(r, container, &req))
        log_start(r, &t, &req);
    corral_buf_fini(&req);
}

/* --- nodes/NAME/proxy ----------------------------------------------------------------------- */

/* Only URL-safe characters travel to the agent. */
static bool url_safe(const char *s, size_t n, const char *extra)
{
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  strchr("-._~/", c) || (extra && strchr(extra, c));
        if (!ok || !c)
            return false;
    }
    return true;
}

static void node_proxy_done(void *arg, int code, const char *ctype, corral_buf_t *body,
                            const char *err)
{
    corral__req_t *r = arg;
    r->hctx = NULL;
    r->cleanup = NULL;
    if (!code) {
        corral__status(r, 502, "BadGateway", NULL, NULL, "%s", err);
        return;
    }
    corral__reply(r, code, ctype, body->p, body->len);
}

static void node_proxy_gone(corral__req_t *r)
{
    corral__agent_cancel(r->hctx);
    r->hctx = NULL;
}

/* GET /api/v1/nodes/NAME[:PORT]/proxy/PATH: the node agent's PATH, for the
 * metrics pages only (PATH /metrics, /metrics/resource or /healthz; PORT,
 * when given, the node's kubelet port): nodes/proxy is what a Prometheus is
 * granted, and it must not reach the agent's container logs, which pods/log
 * guards with its own RBAC, nor other ports of the node's address. */
void corral__h_node_proxy(corral__req_t *r)
{
    char node[256];
    int port = 0;
    const char *colon = strchr(r->name, ':');
    snprintf(node, sizeof(node), "%.*s", (int)(colon ? colon - r->name : (long)strlen(r->name)),
             r->name);
    if (colon) {
        int64_t v = 0;
        if (!corral__parse_u63(colon + 1, &v) || v < 1 || v > 65535) {
            corral__status(r, 400, "BadRequest", NULL, NULL, "invalid port in \"%s\"", r->name);
            return;
        }
        port = (int)v;
    }
    /* The path after .../proxy, as the client sent it (already decoded). */
    char prefix[320];
    snprintf(prefix, sizeof(prefix), "/api/v1/nodes/%s/proxy", r->name);
    size_t pl = strlen(prefix);
    const char *rest = strncmp(r->path, prefix, pl) == 0 ? r->path + pl : "";
    if (strlen(rest) + r->query_len > 1900) {
        corral__status(r, 414, "RequestURITooLong", NULL, NULL, "the proxied path is too long");
        return;
    }
    if (!url_safe(rest, strlen(rest), NULL) ||
        (r->query && !url_safe(r->query, r->query_len, "=&%+,:;"))) {
        corral__status(r, 400, "BadRequest", NULL, NULL,
                       "the proxied path and query may only hold URL-safe characters");
        return;
    }
    if (strcmp(rest, "/metrics") != 0 && strcmp(rest, "/metrics/resource") != 0 &&
        strcmp(rest, "/healthz") != 0) {
        corral__status(r, 403, "Forbidden", "nodes", node,
                       "the node proxy reaches only the agent's /metrics, /metrics/resource and "
                       "/healthz (container logs: pods/log)");
        return;
    }
    corral__agent_target_t t;
    char err[512];
    int rc = corral__agent_target(corral__rd(r), r->a, node, 0, &t, err, sizeof(err));
    if (rc == CORRAL_ENOENT) {
        corral__status(r, 404, "NotFound", "nodes", node, "nodes \"%s\" not found", node);
        return;
    }
    if (rc) {
        corral__status(r, 503, "ServiceUnavailable", NULL, NULL, "%s", err);
        return;
    }
    int kport = ntohs(t.ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&t.ss)->sin6_port
                                                 : ((struct sockaddr_in *)&t.ss)->sin_port);
    if (port && port != kport) {
        corral__status(r, 403, "Forbidden", "nodes", node,
                       "the node proxy reaches only the node's kubelet port (%d), not %d", kport,
                       port);
        return;
    }
    char path[2048];
    snprintf(path, sizeof(path), "%s%s%s%.*s", rest[0] == '/' ? "" : "/", rest, r->query ? "?" : "",
             (int)(r->query ? r->query_len : 0), r->query ? r->query : "");
    corral__agent_call_t *c = NULL;
    rc = corral__agent_get(r->loop, &t, path, NODE_PROXY_MAX, node_proxy_done, r, &c, err,
                           sizeof(err));
    if (rc == CORRAL_EAGAIN) {
        corral__status(r, 429, "TooManyRequests", NULL, NULL, "%s", err);
        return;
    }
    if (rc) {
        corral__status(r, 502, "BadGateway", NULL, NULL, "%s", err);
        return;
    }
    r->hctx = c;
    r->cleanup = node_proxy_gone;
}
