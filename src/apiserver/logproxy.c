/*
 * pods/log: the API server proxies to the log server of the pod's node
 * agent, as kube-apiserver proxies to kubelet's /containerLogs. The target
 * comes only from stored objects: the pod's spec.nodeName, then that Node's
 * status.addresses (InternalIP, else ExternalIP, else Hostname; a numeric
 * address, so that nothing blocks on a DNS lookup) and
 * status.daemonEndpoints.kubeletEndpoint.Port. Nothing the client sends
 * chooses where the server connects; the client's query is passed on only
 * as re-encoded, validated values (follow, previous, timestamps,
 * tailLines, limitBytes, sinceSeconds).
 *
 * Everything runs on the request's loop thread: a non-blocking connect
 * through a bufferevent (with a timeout), the agent's answer relayed as it
 * arrives. A 200 becomes a chunked stream to the client (text/plain);
 * another status is collected (at most 64 KiB) and passed through, so the
 * agent's Status (a missing previous instance, no logs) reaches kubectl
 * unchanged. Flow control: reading from the agent pauses while more than
 * the watch buffer waits on the client's socket. The stream ends when the
 * agent closes; when the client goes away the agent connection is closed.
 * At most CORRAL__MAX_LOG_STREAMS proxied streams are open at once (429
 * beyond).
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

#define CORRAL__MAX_LOG_STREAMS 256
#define CONNECT_TIMEOUT_S       10
#define HEAD_MAX                ((size_t)16 << 10)
#define ERROR_BODY_MAX          ((size_t)64 << 10)

typedef struct logproxy {
    corral__req_t *r;
    struct bufferevent *bev;
    bool head_done, streaming;
    int code;
    char ctype[96];
    bool chunked;
    int64_t clen, got; /* Content-Length (-1: until close) and body bytes seen */
    corral_http_chunked_t ch;
    corral_buf_t body; /* an error answer's body; a chunked stream's decoded bytes */
    char where[320];   /* node "n" at ADDR:PORT, for messages */
} logproxy_t;

/* --- ending ----------------------------------------------------------------------------- */

static void proxy_free(corral__req_t *r)
{
    logproxy_t *p = r->hctx;
    if (!p)
        return;
    if (p->bev)
        bufferevent_free(p->bev);
    corral_buf_fini(&p->body);
    __atomic_sub_fetch(&r->srv->log_streams, 1, __ATOMIC_ACQ_REL);
    corral_free(p);
    r->hctx = NULL;
    r->cleanup = NULL;
    r->stream_closed = NULL;
    r->stream_writable = NULL;
}

/* The agent is done (or failed after the stream began): finish r. */
static void proxy_end(logproxy_t *p)
{
    corral__req_t *r = p->r;
    if (p->streaming) {
        proxy_free(r);
        corral__stream_end(r->conn);
        return;
    }
    int code = p->code;
    char ctype[96];
    snprintf(ctype, sizeof(ctype), "%s", p->ctype[0] ? p->ctype : "text/plain");
    corral_buf_t b = p->body;
    corral_buf_init(&p->body);
    proxy_free(r);
    corral__reply(r, code, ctype, b.p, b.len);
    corral_buf_fini(&b);
}

/* Fail before anything was sent (502 with msg), or end the stream. */
static void proxy_fail(logproxy_t *p, const char *msg)
{
    if (p->streaming || p->head_done) {
        proxy_end(p);
        return;
    }
    corral__req_t *r = p->r;
    char m[512];
    snprintf(m, sizeof(m), "%s", msg);
    proxy_free(r);
    corral__status(r, 502, "BadGateway", NULL, NULL, "%s", m);
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

/* Parse the agent's response head; false (after failing) when malformed. */
static bool take_head(logproxy_t *p, struct evbuffer *in)
{
    struct evbuffer_ptr e = evbuffer_search(in, "\r\n\r\n", 4, NULL);
    if (e.pos < 0) {
        if (evbuffer_get_length(in) > HEAD_MAX) {
            proxy_fail(p, "the node agent's answer has an oversized head");
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
        proxy_fail(p, "the node agent's answer is not HTTP");
        return false;
    }
    char v[96];
    p->code = code;
    p->chunked = head_value(head, "Transfer-Encoding", v, sizeof(v)) && strcasestr(v, "chunked");
    p->clen = head_value(head, "Content-Length", v, sizeof(v)) ? strtoll(v, NULL, 10) : -1;
    if (!head_value(head, "Content-Type", p->ctype, sizeof(p->ctype)))
        p->ctype[0] = '\0';
    corral_free(head);
    p->head_done = true;
    if (code == 200) {
        p->streaming = true;
        corral__stream_start_as(p->r, 200, p->ctype[0] ? p->ctype : "text/plain");
    }
    return true;
}

/* Relay body bytes; returns true when the body is complete. */
static bool relay(logproxy_t *p, const char *data, size_t n)
{
    bool complete = false;
    if (p->chunked) {
        size_t used = 0;
        corral_buf_t *dst = &p->body;
        size_t before = dst->len;
        int rc = corral_http_chunked_feed(&p->ch, data, n, &used, dst, (size_t)1 << 30);
        if (rc < 0)
            return true; /* bad framing: end here */
        complete = rc == 1;
        if (p->streaming) {
            corral__stream_write(p->r->conn, dst->p, dst->len);
            corral_buf_reset(dst);
        } else if (dst->len > ERROR_BODY_MAX) {
            dst->len = before;
        }
        return complete;
    }
    if (p->clen >= 0 && (int64_t)n > p->clen - p->got)
        n = (size_t)(p->clen - p->got);
    p->got += (int64_t)n;
    if (p->streaming)
        corral__stream_write(p->r->conn, data, n);
    else if (p->body.len + n <= ERROR_BODY_MAX)
        corral_buf_append(&p->body, data, n);
    return p->clen >= 0 && p->got >= p->clen;
}

static void agent_read(struct bufferevent *bev, void *arg)
{
    logproxy_t *p = arg;
    struct evbuffer *in = bufferevent_get_input(bev);
    if (!p->head_done && (!take_head(p, in) || !p->head_done))
        return;
    while (evbuffer_get_length(in)) {
        size_t n = evbuffer_get_contiguous_space(in);
        const char *data = (const char *)evbuffer_pullup(in, (ssize_t)n);
        bool complete = relay(p, data, n);
        evbuffer_drain(in, n);
        if (complete) {
            proxy_end(p);
            return;
        }
    }
    if (p->streaming && corral__conn_pending(p->r->conn) > p->r->srv->opts.watch_buffer)
        bufferevent_disable(bev, EV_READ); /* resumed by client_writable */
}

static void agent_event(struct bufferevent *bev, short what, void *arg)
{
    logproxy_t *p = arg;
    if (what & BEV_EVENT_CONNECTED) {
        bufferevent_set_timeouts(bev, NULL, NULL);
        return;
    }
    if (what & BEV_EVENT_EOF) {
        if (p->head_done)
            proxy_end(p);
        else
            proxy_fail(p, "the node agent closed the connection without answering");
        return;
    }
    char msg[512];
    snprintf(msg, sizeof(msg), "cannot reach the log server of %s: %s", p->where,
             (what & BEV_EVENT_TIMEOUT) ? "connection timed out"
                                        : evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR()));
    proxy_fail(p, msg);
}

static void client_writable(corral__req_t *r)
{
    logproxy_t *p = r->hctx;
    if (p && p->bev)
        bufferevent_enable(p->bev, EV_READ);
}

/* --- the request ------------------------------------------------------------------------------ */

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

/* The node's log endpoint from its stored status; false after a reply. */
static bool node_endpoint(corral__req_t *r, const char *node, struct sockaddr_storage *ss,
                          socklen_t *sl, char *where, size_t wlen)
{
    corral_store_row_t row;
    corral_val_t *n = NULL;
    if (corral_store_get(corral__rd(r), corral__res_of_kind(CORRAL_KIND_NODE)->key, "", node, r->a,
                         &row) == 0)
        n = corral__json_tree(r->a, row.json, row.json_len);
    if (!n) {
        corral__status(r, 500, "InternalError", NULL, NULL,
                       "pod \"%s\" is bound to node \"%s\", which does not exist", r->name, node);
        return false;
    }
    const corral_val_t *st = corral_val_get(n, "status");
    const corral_val_t *addrs = corral_val_get(st, "addresses");
    static const char *const prefer[] = {"InternalIP", "ExternalIP", "Hostname"};
    const char *addr = NULL;
    for (size_t k = 0; k < CORRAL_ARRAY_LEN(prefer) && !addr; k++) {
        for (size_t i = 0; addrs && addrs->kind == CORRAL_VAL_SEQ && i < addrs->n && !addr; i++) {
            const char *t = corral_val_get_str(addrs->items[i], "type");
            if (t && !strcmp(t, prefer[k]))
                addr = corral_val_get_str(addrs->items[i], "address");
        }
    }
    const corral_val_t *pv = corral_val_dig(st, "daemonEndpoints.kubeletEndpoint.Port");
    int64_t port = pv && pv->kind == CORRAL_VAL_INT ? pv->u.i : 0;
    memset(ss, 0, sizeof(*ss));
    struct sockaddr_in *v4 = (struct sockaddr_in *)ss;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)ss;
    bool ok = port > 0 && port < 65536 && addr;
    if (ok && inet_pton(AF_INET, addr, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons((uint16_t)port);
        *sl = sizeof(*v4);
    } else if (ok && inet_pton(AF_INET6, addr, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons((uint16_t)port);
        *sl = sizeof(*v6);
    } else {
        corral__status(r, 500, "InternalError", NULL, NULL,
                       "node \"%s\" advertises no log endpoint: it needs a numeric address in "
                       "status.addresses and status.daemonEndpoints.kubeletEndpoint.Port "
                       "(has %s, port %lld)",
                       node, addr ? addr : "no address", (long long)port);
        return false;
    }
    snprintf(where, wlen, "node \"%s\" at %s%s%s:%lld", node, ss->ss_family == AF_INET6 ? "[" : "",
             addr, ss->ss_family == AF_INET6 ? "]" : "", (long long)port);
    return true;
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

/* Connect to the agent and send the request; replies on failure. */
static void proxy_start(corral__req_t *r, const struct sockaddr_storage *ss, socklen_t sl,
                        const char *where, corral_buf_t *req)
{
    if (__atomic_add_fetch(&r->srv->log_streams, 1, __ATOMIC_ACQ_REL) > CORRAL__MAX_LOG_STREAMS) {
        __atomic_sub_fetch(&r->srv->log_streams, 1, __ATOMIC_ACQ_REL);
        corral__status(r, 429, "TooManyRequests", NULL, NULL,
                       "too many log streams open (%d); try again later", CORRAL__MAX_LOG_STREAMS);
        return;
    }
    logproxy_t *p = corral_calloc(1, sizeof(*p));
    p->r = r;
    p->clen = -1;
    corral_buf_init(&p->body);
    snprintf(p->where, sizeof(p->where), "%s", where);
    r->hctx = p;
    r->cleanup = proxy_free;
    r->stream_closed = proxy_free;
    r->stream_writable = client_writable;
    p->bev = bufferevent_socket_new(r->loop->base, -1, BEV_OPT_CLOSE_ON_FREE);
    if (!p->bev) {
        proxy_fail(p, "cannot create a socket for the log proxy");
        return;
    }
    bufferevent_setcb(p->bev, agent_read, NULL, agent_event, p);
    struct timeval tv = {CONNECT_TIMEOUT_S, 0};
    bufferevent_set_timeouts(p->bev, NULL, &tv);
    bufferevent_write(p->bev, req->p, req->len); /* queued until connected */
    bufferevent_enable(p->bev, EV_READ | EV_WRITE);
    /* A failure may already have been reported through agent_event. */
    if (bufferevent_socket_connect(p->bev, (const struct sockaddr *)ss, (int)sl) != 0 &&
        r->hctx == p) {
        char msg[512];
        snprintf(msg, sizeof(msg), "cannot reach the log server of %s: %s", where,
                 evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR()));
        proxy_fail(p, msg);
    }
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
    struct sockaddr_storage ss;
    socklen_t sl = 0;
    char where[320];
    if (!node_endpoint(r, node, &ss, &sl, where, sizeof(where)))
        return;
    corral_buf_t req;
    corral_buf_init(&req);
    if (agent_request(r, container, &req))
        proxy_start(r, &ss, sl, where, &req);
    corral_buf_fini(&req);
}
