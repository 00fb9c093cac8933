/*
 * gRPC over nghttp2 on unix sockets (see grpc.h). The server runs one
 * thread polling its listening socket, a wake pipe and its connections;
 * each connection is an nghttp2 server session whose streams are requests.
 * The client is blocking: one call at a time on a connection.
 */
#include "agent/grpc.h"

#include <errno.h>
#include <fcntl.h>
#include <nghttp2/nghttp2.h>
#include <poll.h>
#include <protobuf-c/protobuf-c.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "corral/common.h"

#define PATH_CAP 128

int corral__grpc_frame_parse(const uint8_t *p, size_t len, size_t max, const uint8_t **msg,
                             size_t *msglen, size_t *used)
{
    if (len < 5)
        return 0;
    uint32_t n = ((uint32_t)p[1] << 24) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 8) | p[4];
    if (p[0] != 0)
        return CORRAL_EUNSUPPORTED;
    if (n > max)
        return CORRAL_ETOOBIG;
    if (len - 5 < n)
        return 0;
    *msg = p + 5;
    *msglen = n;
    *used = 5 + (size_t)n;
    return 1;
}

void corral__grpc_pack(const struct ProtobufCMessage *m, corral_buf_t *out)
{
    size_t n = protobuf_c_message_get_packed_size(m);
    corral_buf_reset(out);
    corral_buf_append(out, "", 0);
    uint8_t *p = corral_malloc(n + 1);
    protobuf_c_message_pack(m, p);
    corral_buf_append(out, p, n);
    corral_free(p);
}

/* Copy what is left of b from *off into buf (at most len bytes). */
static size_t copy_out(uint8_t *buf, size_t len, const corral_buf_t *b, size_t *off)
{
    size_t left = b->len - *off;
    size_t n = left < len ? left : len;
    if (n)
        memcpy(buf, b->p + *off, n);
    *off += n;
    return n;
}

void corral__grpc_frame_put(corral_buf_t *out, const void *msg, size_t len)
{
    uint8_t h[5] = {0, (uint8_t)(len >> 24), (uint8_t)(len >> 16), (uint8_t)(len >> 8),
                    (uint8_t)len};
    corral_buf_append(out, h, sizeof h);
    if (len)
        corral_buf_append(out, msg, len);
}

static void set_err(char *err, size_t errlen, const char *fmt, ...) CORRAL_PRINTF(3, 4);
static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || !errlen)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

#define NV(n, v)                                                                                   \
    {                                                                                              \
        (uint8_t *)(n), (uint8_t *)(v), sizeof(n) - 1, strlen(v), NGHTTP2_NV_FLAG_NO_COPY_NAME     \
    }

/* --- server ------------------------------------------------------------------------------ */

typedef struct stream {
    int32_t id;
    char path[PATH_CAP];
    bool post, grpc, bad_path, too_big, done, keep_open, closed_out;
    size_t header_bytes;
    corral_buf_t in;  /* request body (framed) */
    corral_buf_t out; /* framed messages to send */
    size_t out_off;
    int status;
    char why[160];
    struct stream *next;
} stream_t;

typedef struct conn {
    int fd; /* first: see fd_send */
    nghttp2_session *ses;
    stream_t *streams;
    int nstreams;
    corral__grpc_server_t *srv;
    bool dead;
    struct conn *next;
} conn_t;

typedef struct bcast {
    char path[PATH_CAP];
    corral_buf_t msg;
    struct bcast *next;
} bcast_t;

struct corral__grpc_server {
    int lfd, wake[2];
    char path[108];
    dev_t dev;
    ino_t ino;
    corral__grpc_handler_fn h;
    void *ctx;
    conn_t *conns;
    int nconns;
    pthread_t thr;
    pthread_mutex_t mu;
    bcast_t *bq, **bq_tail;
    int nopen; /* open server streams (under mu) */
    volatile int stop;
    bool started;
};

static stream_t *find_stream(conn_t *c, int32_t id)
{
    for (stream_t *s = c->streams; s; s = s->next)
        if (s->id == id)
            return s;
    return NULL;
}

static void stream_free(stream_t *s)
{
    corral_buf_fini(&s->in);
    corral_buf_fini(&s->out);
    corral_free(s);
}

/* nghttp2's send callback for both sides: ud is a conn_t or a client,
 * each starting with its socket (-1: the fuzz entry, which drops output). */
static ssize_t fd_send(nghttp2_session *ses, const uint8_t *data, size_t len, int flags, void *ud)
{
    (void)ses;
    (void)flags;
    int fd = *(const int *)ud;
    if (fd < 0)
        return (ssize_t)len;
    ssize_t n = send(fd, data, len, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        return NGHTTP2_ERR_WOULDBLOCK;
    if (n < 0)
        return NGHTTP2_ERR_CALLBACK_FAILURE;
    return n;
}

static int srv_begin_headers(nghttp2_session *ses, const nghttp2_frame *f, void *ud)
{
    (void)ses;
    conn_t *c = ud;
    if (f->hd.type != NGHTTP2_HEADERS || f->headers.cat != NGHTTP2_HCAT_REQUEST)
        return 0;
    if (c->nstreams >= CORRAL__GRPC_MAX_STREAMS)
        return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
    stream_t *s = corral_calloc(1, sizeof *s);
    s->id = f->hd.stream_id;
    s->next = c->streams;
    c->streams = s;
    c->nstreams++;
    return 0;
}

static int srv_header(nghttp2_session *ses, const nghttp2_frame *f, const uint8_t *name,
                      size_t nlen, const uint8_t *val, size_t vlen, uint8_t flags, void *ud)
{
    (void)ses;
    (void)flags;
    conn_t *c = ud;
    stream_t *s = find_stream(c, f->hd.stream_id);
    if (!s)
        return 0;
    s->header_bytes += nlen + vlen + 32;
    if (s->header_bytes > CORRAL__GRPC_MAX_HEADERS)
        return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
    if (nlen == 5 && memcmp(name, ":path", 5) == 0) {
        if (vlen >= PATH_CAP || memchr(val, 0, vlen)) {
            s->bad_path = true;
        } else {
            memcpy(s->path, val, vlen);
            s->path[vlen] = 0;
        }
    } else if (nlen == 7 && memcmp(name, ":method", 7) == 0) {
        s->post = vlen == 4 && memcmp(val, "POST", 4) == 0;
    } else if (nlen == 12 && memcmp(name, "content-type", 12) == 0) {
        s->grpc = vlen >= 16 && memcmp(val, "application/grpc", 16) == 0 &&
                  (vlen == 16 || val[16] == '+' || val[16] == ';');
    }
    return 0;
}

static int srv_data(nghttp2_session *ses, uint8_t flags, int32_t id, const uint8_t *data,
                    size_t len, void *ud)
{
    (void)ses;
    (void)flags;
    stream_t *s = find_stream(ud, id);
    if (!s || s->too_big)
        return 0;
    if (s->in.len + len > CORRAL__GRPC_MAX_MSG + 5) {
        s->too_big = true;
        corral_buf_fini(&s->in);
        return 0;
    }
    corral_buf_append(&s->in, data, len);
    return 0;
}

static ssize_t srv_read(nghttp2_session *ses, int32_t id, uint8_t *buf, size_t length,
                        uint32_t *dflags, nghttp2_data_source *src, void *ud)
{
    (void)ud;
    stream_t *s = src->ptr;
    size_t n = copy_out(buf, length, &s->out, &s->out_off);
    if (s->out_off == s->out.len) {
        corral_buf_reset(&s->out);
        s->out_off = 0;
        if (s->keep_open && !s->closed_out) {
            if (n == 0)
                return NGHTTP2_ERR_DEFERRED;
            return (ssize_t)n;
        }
        *dflags |= NGHTTP2_DATA_FLAG_EOF | NGHTTP2_DATA_FLAG_NO_END_STREAM;
        char st[12];
        snprintf(st, sizeof st, "%d", s->status);
        nghttp2_nv tr[] = {NV("grpc-status", st), NV("grpc-message", s->why)};
        nghttp2_submit_trailer(ses, id, tr, s->why[0] ? 2 : 1);
    }
    return (ssize_t)n;
}

/* Answer a finished request. */
static void srv_dispatch(conn_t *c, stream_t *s)
{
    corral__grpc_server_t *srv = c->srv;
    s->done = true;
    int st = CORRAL__GRPC_OK;
    corral_buf_t resp;
    corral_buf_init(&resp);
    if (!s->post || !s->grpc || s->bad_path || !s->path[0]) {
        st = CORRAL__GRPC_INVALID_ARGUMENT;
        snprintf(s->why, sizeof s->why, "not a gRPC request (POST, application/grpc, :path)");
    } else if (s->too_big) {
        st = CORRAL__GRPC_RESOURCE_EXHAUSTED;
        snprintf(s->why, sizeof s->why, "request message over %zu bytes", CORRAL__GRPC_MAX_MSG);
    } else {
        const uint8_t *msg = NULL;
        size_t mlen = 0, used = 0;
        int r = corral__grpc_frame_parse((const uint8_t *)s->in.p, s->in.len, CORRAL__GRPC_MAX_MSG,
                                         &msg, &mlen, &used);
        if (r == CORRAL_EUNSUPPORTED) {
            st = CORRAL__GRPC_UNIMPLEMENTED;
            snprintf(s->why, sizeof s->why, "compressed messages are not supported");
        } else if (r == CORRAL_ETOOBIG) {
            st = CORRAL__GRPC_RESOURCE_EXHAUSTED;
            snprintf(s->why, sizeof s->why, "request message over %zu bytes", CORRAL__GRPC_MAX_MSG);
        } else if (r != 1 || used != s->in.len) {
            st = CORRAL__GRPC_INVALID_ARGUMENT;
            snprintf(s->why, sizeof s->why, "a unary request needs exactly one whole message");
        } else {
            st = srv->h(srv->ctx, s->path, msg, mlen, &resp, s->why, sizeof s->why);
        }
    }
    corral_buf_fini(&s->in);
    if (st == CORRAL__GRPC_OK || st == CORRAL__GRPC_KEEP_OPEN) {
        s->keep_open = st == CORRAL__GRPC_KEEP_OPEN;
        s->status = CORRAL__GRPC_OK;
        corral__grpc_frame_put(&s->out, resp.p, resp.len);
        nghttp2_nv hd[] = {NV(":status", "200"), NV("content-type", "application/grpc")};
        nghttp2_data_provider prd = {.source.ptr = s, .read_callback = srv_read};
        nghttp2_submit_response(c->ses, s->id, hd, 2, &prd);
        if (s->keep_open && c->fd >= 0) {
            pthread_mutex_lock(&srv->mu);
            srv->nopen++;
            pthread_mutex_unlock(&srv->mu);
        }
    } else {
        char stbuf[12];
        snprintf(stbuf, sizeof stbuf, "%d", st);
        nghttp2_nv hd[] = {NV(":status", "200"), NV("content-type", "application/grpc"),
                           NV("grpc-status", stbuf), NV("grpc-message", s->why)};
        nghttp2_submit_response(c->ses, s->id, hd, 4, NULL);
    }
    corral_buf_fini(&resp);
}

static int srv_frame(nghttp2_session *ses, const nghttp2_frame *f, void *ud)
{
    (void)ses;
    conn_t *c = ud;
    if ((f->hd.type != NGHTTP2_DATA && f->hd.type != NGHTTP2_HEADERS) ||
        !(f->hd.flags & NGHTTP2_FLAG_END_STREAM))
        return 0;
    stream_t *s = find_stream(c, f->hd.stream_id);
    if (s && !s->done)
        srv_dispatch(c, s);
    return 0;
}

static int srv_close(nghttp2_session *ses, int32_t id, uint32_t code, void *ud)
{
    (void)ses;
    (void)code;
    conn_t *c = ud;
    for (stream_t **pp = &c->streams; *pp; pp = &(*pp)->next) {
        stream_t *s = *pp;
        if (s->id != id)
            continue;
        *pp = s->next;
        c->nstreams--;
        if (s->keep_open && c->fd >= 0) {
            pthread_mutex_lock(&c->srv->mu);
            c->srv->nopen--;
            pthread_mutex_unlock(&c->srv->mu);
        }
        stream_free(s);
        break;
    }
    return 0;
}

static nghttp2_session *session_new(bool server, void *ud)
{
    nghttp2_session_callbacks *cb;
    nghttp2_session *ses = NULL;
    if (nghttp2_session_callbacks_new(&cb) != 0)
        abort();
    if (server) {
        nghttp2_session_callbacks_set_send_callback(cb, fd_send);
        nghttp2_session_callbacks_set_on_begin_headers_callback(cb, srv_begin_headers);
        nghttp2_session_callbacks_set_on_header_callback(cb, srv_header);
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, srv_data);
        nghttp2_session_callbacks_set_on_frame_recv_callback(cb, srv_frame);
        nghttp2_session_callbacks_set_on_stream_close_callback(cb, srv_close);
    }
    nghttp2_option *opt;
    if (nghttp2_option_new(&opt) != 0)
        abort();
    nghttp2_option_set_max_send_header_block_length(opt, CORRAL__GRPC_MAX_HEADERS);
    nghttp2_option_set_max_settings(opt, 32);
    int r = server ? nghttp2_session_server_new2(&ses, cb, ud, opt)
                   : nghttp2_session_client_new2(&ses, cb, ud, opt);
    nghttp2_option_del(opt);
    nghttp2_session_callbacks_del(cb);
    if (r != 0)
        abort();
    nghttp2_settings_entry iv[] = {
        {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, CORRAL__GRPC_MAX_STREAMS},
        {NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, CORRAL__GRPC_MAX_HEADERS},
    };
    nghttp2_submit_settings(ses, NGHTTP2_FLAG_NONE, iv, 2);
    return ses;
}

static void conn_free(conn_t *c)
{
    nghttp2_session_del(c->ses); /* without stream close callbacks */
    while (c->streams) {
        stream_t *s = c->streams;
        c->streams = s->next;
        if (s->keep_open && c->fd >= 0) {
            pthread_mutex_lock(&c->srv->mu);
            c->srv->nopen--;
            pthread_mutex_unlock(&c->srv->mu);
        }
        stream_free(s);
    }
    if (c->fd >= 0)
        close(c->fd);
    corral_free(c);
}

static void conn_io(conn_t *c, short revents)
{
    if (revents & POLLIN) {
        uint8_t buf[16384];
        ssize_t n = recv(c->fd, buf, sizeof buf, MSG_DONTWAIT);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
            c->dead = true;
            return;
        }
        if (n > 0 && nghttp2_session_mem_recv(c->ses, buf, (size_t)n) < 0) {
            c->dead = true;
            return;
        }
    }
    if (revents & (POLLERR | POLLHUP) && !(revents & POLLIN))
        c->dead = true;
    if (nghttp2_session_send(c->ses) != 0)
        c->dead = true;
    if (!nghttp2_session_want_read(c->ses) && !nghttp2_session_want_write(c->ses))
        c->dead = true;
}

/* Queue msg on every open stream of path (server thread). */
static void srv_push(corral__grpc_server_t *srv, const char *path, const corral_buf_t *msg)
{
    for (conn_t *c = srv->conns; c; c = c->next) {
        for (stream_t *s = c->streams; s; s = s->next) {
            if (!s->keep_open || strcmp(s->path, path) != 0)
                continue;
            if (s->out.len - s->out_off + msg->len > CORRAL__GRPC_MAX_PENDING) {
                nghttp2_submit_rst_stream(c->ses, NGHTTP2_FLAG_NONE, s->id, NGHTTP2_CANCEL);
                continue;
            }
            corral__grpc_frame_put(&s->out, msg->p, msg->len);
            nghttp2_session_resume_data(c->ses, s->id);
        }
        if (nghttp2_session_send(c->ses) != 0)
            c->dead = true;
    }
}

static void srv_accept(corral__grpc_server_t *srv)
{
    int fd = accept4(srv->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0)
        return;
    if (srv->nconns >= CORRAL__GRPC_MAX_CONNS) {
        close(fd);
        return;
    }
    conn_t *c = corral_calloc(1, sizeof *c);
    c->fd = fd;
    c->srv = srv;
    c->ses = session_new(true, c);
    c->next = srv->conns;
    srv->conns = c;
    srv->nconns++;
    if (nghttp2_session_send(c->ses) != 0)
        c->dead = true;
}

static void srv_drain_wake(corral__grpc_server_t *srv)
{
    char b[64];
    while (read(srv->wake[0], b, sizeof b) > 0) {
    }
    pthread_mutex_lock(&srv->mu);
    bcast_t *q = srv->bq;
    srv->bq = NULL;
    srv->bq_tail = &srv->bq;
    pthread_mutex_unlock(&srv->mu);
    while (q) {
        bcast_t *n = q->next;
        srv_push(srv, q->path, &q->msg);
        corral_buf_fini(&q->msg);
        corral_free(q);
        q = n;
    }
}

static void *srv_main(void *arg)
{
    corral__grpc_server_t *srv = arg;
    struct pollfd pf[2 + CORRAL__GRPC_MAX_CONNS];
    conn_t *pc[2 + CORRAL__GRPC_MAX_CONNS];
    while (!srv->stop) {
        int n = 0;
        pf[n++] = (struct pollfd){.fd = srv->wake[0], .events = POLLIN};
        pf[n++] = (struct pollfd){.fd = srv->lfd, .events = POLLIN};
        for (conn_t *c = srv->conns; c; c = c->next) {
            short ev = POLLIN;
            if (nghttp2_session_want_write(c->ses))
                ev |= POLLOUT;
            pc[n] = c;
            pf[n++] = (struct pollfd){.fd = c->fd, .events = ev};
        }
        if (poll(pf, (nfds_t)n, 1000) < 0 && errno != EINTR)
            break;
        if (pf[0].revents)
            srv_drain_wake(srv);
        if (pf[1].revents & POLLIN)
            srv_accept(srv);
        for (int i = 2; i < n; i++)
            if (pf[i].revents)
                conn_io(pc[i], pf[i].revents);
        for (conn_t **pp = &srv->conns; *pp;) {
            conn_t *c = *pp;
            if (!c->dead) {
                pp = &c->next;
                continue;
            }
            *pp = c->next;
            srv->nconns--;
            conn_free(c);
        }
    }
    return NULL;
}

static int listen_unix(const char *path, char *err, size_t errlen)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof sa.sun_path) {
        set_err(err, errlen, "socket path %s is too long (%s)", path, "over 107 bytes");
        return -1;
    }
    memcpy(sa.sun_path, path, strlen(path) + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        set_err(err, errlen, "socket for %s: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode))
        unlink(path);
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(fd, 16) != 0) {
        set_err(err, errlen, "cannot listen on %s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

corral__grpc_server_t *corral__grpc_server_start(const char *path, corral__grpc_handler_fn h,
                                                 void *ctx, char *err, size_t errlen)
{
    int lfd = listen_unix(path, err, errlen);
    if (lfd < 0)
        return NULL;
    corral__grpc_server_t *srv = corral_calloc(1, sizeof *srv);
    srv->lfd = lfd;
    snprintf(srv->path, sizeof srv->path, "%s", path);
    struct stat st;
    if (stat(path, &st) == 0) {
        srv->dev = st.st_dev;
        srv->ino = st.st_ino;
    }
    srv->h = h;
    srv->ctx = ctx;
    srv->bq_tail = &srv->bq;
    pthread_mutex_init(&srv->mu, NULL);
    if (pipe2(srv->wake, O_CLOEXEC | O_NONBLOCK) != 0 ||
        pthread_create(&srv->thr, NULL, srv_main, srv) != 0) {
        set_err(err, errlen, "cannot start the server of %s: %s", path, strerror(errno));
        corral__grpc_server_stop(srv);
        return NULL;
    }
    srv->started = true;
    return srv;
}

static void srv_wake(corral__grpc_server_t *srv)
{
    ssize_t r = write(srv->wake[1], "w", 1);
    (void)r;
}

void corral__grpc_server_broadcast(corral__grpc_server_t *s, const char *path, const void *msg,
                                   size_t len)
{
    bcast_t *b = corral_calloc(1, sizeof *b);
    snprintf(b->path, sizeof b->path, "%s", path);
    corral_buf_append(&b->msg, msg, len);
    if (!len)
        corral_buf_append(&b->msg, "", 0);
    pthread_mutex_lock(&s->mu);
    *s->bq_tail = b;
    s->bq_tail = &b->next;
    pthread_mutex_unlock(&s->mu);
    srv_wake(s);
}

int corral__grpc_server_streams(corral__grpc_server_t *s)
{
    pthread_mutex_lock(&s->mu);
    int n = s->nopen;
    pthread_mutex_unlock(&s->mu);
    return n;
}

bool corral__grpc_server_socket_ok(corral__grpc_server_t *s)
{
    struct stat st;
    return stat(s->path, &st) == 0 && st.st_dev == s->dev && st.st_ino == s->ino;
}

void corral__grpc_server_stop(corral__grpc_server_t *s)
{
    if (!s)
        return;
    if (s->started) {
        s->stop = 1;
        srv_wake(s);
        pthread_join(s->thr, NULL);
    }
    while (s->conns) {
        conn_t *c = s->conns;
        s->conns = c->next;
        conn_free(c);
    }
    while (s->bq) {
        bcast_t *b = s->bq;
        s->bq = b->next;
        corral_buf_fini(&b->msg);
        corral_free(b);
    }
    if (corral__grpc_server_socket_ok(s))
        unlink(s->path);
    close(s->lfd);
    if (s->wake[0] > 0) {
        close(s->wake[0]);
        close(s->wake[1]);
    }
    pthread_mutex_destroy(&s->mu);
    corral_free(s);
}

void corral__grpc_server_feed(corral__grpc_handler_fn h, void *ctx, const uint8_t *data, size_t len)
{
    corral__grpc_server_t srv = {.h = h, .ctx = ctx, .lfd = -1};
    pthread_mutex_init(&srv.mu, NULL);
    conn_t *c = corral_calloc(1, sizeof *c);
    c->fd = -1;
    c->srv = &srv;
    c->ses = session_new(true, c);
    while (len && !c->dead) {
        size_t chunk = len < 4096 ? len : 4096;
        c->dead =
            nghttp2_session_mem_recv(c->ses, data, chunk) < 0 || nghttp2_session_send(c->ses) != 0;
        data += chunk;
        len -= chunk;
    }
    conn_free(c);
    pthread_mutex_destroy(&srv.mu);
}

/* --- client ------------------------------------------------------------------------------ */

struct corral__grpc_client {
    int fd; /* first: see fd_send */
    nghttp2_session *ses;
    /* the call in flight */
    int32_t sid;
    corral_buf_t req;
    size_t req_off;
    corral_buf_t in;
    size_t in_off;
    int status;          /* grpc-status, -1 until seen */
    int http;            /* :status */
    char why[256];       /* grpc-message */
    bool closed, failed; /* the stream ended; the connection broke */
    bool too_big;
    int (*on_msg)(void *, const uint8_t *, size_t);
    void *ctx;
    bool stopped_by_cb;
};

static int cli_header(nghttp2_session *ses, const nghttp2_frame *f, const uint8_t *name,
                      size_t nlen, const uint8_t *val, size_t vlen, uint8_t flags, void *ud)
{
    (void)ses;
    (void)flags;
    corral__grpc_client_t *c = ud;
    if (f->hd.stream_id != c->sid)
        return 0;
    char v[16];
    if (nlen == 7 && memcmp(name, ":status", 7) == 0 && vlen < sizeof v) {
        memcpy(v, val, vlen);
        v[vlen] = 0;
        c->http = (int)strtol(v, NULL, 10);
    } else if (nlen == 11 && memcmp(name, "grpc-status", 11) == 0 && vlen < sizeof v) {
        memcpy(v, val, vlen);
        v[vlen] = 0;
        c->status = (int)strtol(v, NULL, 10);
    } else if (nlen == 12 && memcmp(name, "grpc-message", 12) == 0) {
        size_t n = vlen < sizeof c->why - 1 ? vlen : sizeof c->why - 1;
        memcpy(c->why, val, n);
        c->why[n] = 0;
    }
    return 0;
}

/* Deliver the complete messages received so far (streams). */
static void cli_deliver(corral__grpc_client_t *c)
{
    while (c->on_msg && !c->stopped_by_cb) {
        const uint8_t *m;
        size_t ml, used;
        int r =
            corral__grpc_frame_parse((const uint8_t *)c->in.p + c->in_off, c->in.len - c->in_off,
                                     CORRAL__GRPC_MAX_MSG, &m, &ml, &used);
        if (r < 0) {
            c->too_big = true;
            return;
        }
        if (r == 0)
            break;
        c->in_off += used;
        if (c->on_msg(c->ctx, m, ml) != 0)
            c->stopped_by_cb = true;
    }
    if (c->on_msg && c->in_off == c->in.len) {
        corral_buf_reset(&c->in);
        c->in_off = 0;
    }
}

static int cli_data(nghttp2_session *ses, uint8_t flags, int32_t id, const uint8_t *data,
                    size_t len, void *ud)
{
    (void)ses;
    (void)flags;
    corral__grpc_client_t *c = ud;
    if (id != c->sid || c->too_big)
        return 0;
    if (c->in.len - c->in_off + len > CORRAL__GRPC_MAX_MSG + 5) {
        c->too_big = true;
        return 0;
    }
    corral_buf_append(&c->in, data, len);
    cli_deliver(c);
    return 0;
}

static int cli_close(nghttp2_session *ses, int32_t id, uint32_t code, void *ud)
{
    (void)ses;
    corral__grpc_client_t *c = ud;
    if (id != c->sid)
        return 0;
    c->closed = true;
    if (code != NGHTTP2_NO_ERROR && c->status < 0) {
        c->status =
            code == NGHTTP2_REFUSED_STREAM ? CORRAL__GRPC_UNAVAILABLE : CORRAL__GRPC_CANCELLED;
        snprintf(c->why, sizeof c->why, "stream reset by the server (HTTP/2 error %u)", code);
    }
    return 0;
}

static ssize_t cli_read(nghttp2_session *ses, int32_t id, uint8_t *buf, size_t length,
                        uint32_t *dflags, nghttp2_data_source *src, void *ud)
{
    (void)ses;
    (void)id;
    (void)ud;
    corral__grpc_client_t *c = src->ptr;
    size_t n = copy_out(buf, length, &c->req, &c->req_off);
    if (c->req_off == c->req.len)
        *dflags |= NGHTTP2_DATA_FLAG_EOF;
    return (ssize_t)n;
}

corral__grpc_client_t *corral__grpc_connect(const char *path, char *err, size_t errlen)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof sa.sun_path) {
        set_err(err, errlen, "socket path %s is too long (%s)", path, "over 107 bytes");
        return NULL;
    }
    memcpy(sa.sun_path, path, strlen(path) + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        set_err(err, errlen, "cannot connect to %s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    corral__grpc_client_t *c = corral_calloc(1, sizeof *c);
    c->fd = fd;
    nghttp2_session_callbacks *cb;
    if (nghttp2_session_callbacks_new(&cb) != 0)
        abort();
    nghttp2_session_callbacks_set_send_callback(cb, fd_send);
    nghttp2_session_callbacks_set_on_header_callback(cb, cli_header);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, cli_data);
    nghttp2_session_callbacks_set_on_stream_close_callback(cb, cli_close);
    if (nghttp2_session_client_new(&c->ses, cb, c) != 0)
        abort();
    nghttp2_session_callbacks_del(cb);
    nghttp2_settings_entry iv[] = {
        {NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, CORRAL__GRPC_MAX_HEADERS}};
    nghttp2_submit_settings(c->ses, NGHTTP2_FLAG_NONE, iv, 1);
    return c;
}

void corral__grpc_close(corral__grpc_client_t *c)
{
    if (!c)
        return;
    nghttp2_session_del(c->ses);
    close(c->fd);
    corral_buf_fini(&c->req);
    corral_buf_fini(&c->in);
    corral_free(c);
}

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Run one call to its end; timeout_ms < 0: none. */
static int cli_run(corral__grpc_client_t *c, const char *path, const void *req, size_t len,
                   int timeout_ms, const volatile int *stop, char *why, size_t whylen)
{
    if (c->failed) {
        set_err(why, whylen, "%s: %s", path, "the connection is broken");
        return CORRAL_EIO;
    }
    corral_buf_reset(&c->req);
    corral_buf_reset(&c->in);
    c->req_off = c->in_off = 0;
    c->status = -1;
    c->http = 0;
    c->why[0] = 0;
    c->closed = c->too_big = c->stopped_by_cb = false;
    corral__grpc_frame_put(&c->req, req, len);
    nghttp2_nv hd[] = {NV(":method", "POST"),     NV(":scheme", "http"),
                       NV(":path", path),         NV(":authority", "localhost"),
                       NV("te", "trailers"),      NV("content-type", "application/grpc"),
                       NV("user-agent", "corral")};
    nghttp2_data_provider prd = {.source.ptr = c, .read_callback = cli_read};
    c->sid = nghttp2_submit_request(c->ses, NULL, hd, CORRAL_ARRAY_LEN(hd), &prd, NULL);
    if (c->sid < 0) {
        set_err(why, whylen, "%s: %s", path, nghttp2_strerror(c->sid));
        return CORRAL_EIO;
    }
    int64_t deadline = timeout_ms >= 0 ? mono_ms() + timeout_ms : INT64_MAX;
    while (!c->closed) {
        if (nghttp2_session_send(c->ses) != 0)
            break;
        if (c->too_big || c->stopped_by_cb || (stop && *stop)) {
            nghttp2_submit_rst_stream(c->ses, NGHTTP2_FLAG_NONE, c->sid, NGHTTP2_CANCEL);
            nghttp2_session_send(c->ses);
            if (c->too_big) {
                set_err(why, whylen, "%s: response message over %s bytes", path, "262144");
                return CORRAL__GRPC_RESOURCE_EXHAUSTED;
            }
            set_err(why, whylen, "%s: %s", path, "cancelled");
            return CORRAL__GRPC_CANCELLED;
        }
        int64_t now = mono_ms();
        if (now >= deadline) {
            nghttp2_submit_rst_stream(c->ses, NGHTTP2_FLAG_NONE, c->sid, NGHTTP2_CANCEL);
            nghttp2_session_send(c->ses);
            set_err(why, whylen, "%s: %s", path, "deadline exceeded");
            return CORRAL__GRPC_DEADLINE_EXCEEDED;
        }
        int wait = deadline - now < 100 ? (int)(deadline - now) : 100;
        struct pollfd pf = {.fd = c->fd, .events = POLLIN};
        if (nghttp2_session_want_write(c->ses))
            pf.events |= POLLOUT;
        if (poll(&pf, 1, wait) < 0 && errno != EINTR)
            break;
        if (pf.revents & POLLIN) {
            uint8_t buf[16384];
            ssize_t n = recv(c->fd, buf, sizeof buf, MSG_DONTWAIT);
            if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
                break;
            if (n > 0 && nghttp2_session_mem_recv(c->ses, buf, (size_t)n) < 0)
                break;
        } else if (pf.revents & (POLLERR | POLLHUP)) {
            break;
        }
    }
    if (!c->closed) {
        c->failed = true;
        set_err(why, whylen, "%s: %s", path, "the connection closed");
        return CORRAL_EIO;
    }
    if (c->status < 0) {
        set_err(why, whylen, "%s: no grpc-status (HTTP %s)", path, c->http ? "response" : "none");
        return CORRAL__GRPC_UNKNOWN;
    }
    if (c->status != 0)
        set_err(why, whylen, "%s: %s", path, c->why[0] ? c->why : "error");
    return c->status;
}

int corral__grpc_call(corral__grpc_client_t *c, const char *path, const void *req, size_t len,
                      corral_buf_t *resp, int timeout_ms, char *why, size_t whylen)
{
    c->on_msg = NULL;
    int st = cli_run(c, path, req, len, timeout_ms, NULL, why, whylen);
    if (st != 0)
        return st;
    const uint8_t *m;
    size_t ml, used;
    if (corral__grpc_frame_parse((const uint8_t *)c->in.p, c->in.len, CORRAL__GRPC_MAX_MSG, &m, &ml,
                                 &used) != 1 ||
        used != c->in.len) {
        set_err(why, whylen, "%s: %s", path, "the response is not one whole message");
        return CORRAL__GRPC_INTERNAL;
    }
    corral_buf_reset(resp);
    corral_buf_append(resp, m, ml);
    if (!ml)
        corral_buf_append(resp, "", 0);
    return 0;
}

int corral__grpc_stream(corral__grpc_client_t *c, const char *path, const void *req, size_t len,
                        int (*on_msg)(void *ctx, const uint8_t *msg, size_t len), void *ctx,
                        const volatile int *stop, char *why, size_t whylen)
{
    c->on_msg = on_msg;
    c->ctx = ctx;
    int st = cli_run(c, path, req, len, -1, stop, why, whylen);
    c->on_msg = NULL;
    return st;
}
