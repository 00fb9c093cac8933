/*
 * The agent's container log server (see logserver.h): one thread running a
 * poll(2) loop over a listening socket, a wake pipe (stop) and at most
 * CORRAL_AGENT_LOG_MAX_CONNS connections. A connection reads one request
 * head (16 KiB at most, 10 s at most), then either gets a Status and is
 * closed, or becomes a stream: the log file is copied to the socket 64 KiB
 * at a time, and only when what was queued has been taken by the kernel, so
 * a slow reader costs one buffer and no more. A follow stream polls its
 * file every 100 ms once it has caught up (files on any filesystem work;
 * no inotify watch to run out of) and ends when the instance has ended
 * (<N>.exit exists, checked before the last read so that nothing written
 * before the exit is lost) or a newer instance <N+1>.log appears, or when
 * the client goes away.
 */
#include "agent/logserver.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "corral/buf.h"
#include "corral/common.h"
#include "corral/http.h"
#include "corral/net.h"
#include "corral/val.h"

#define HEAD_MAX        ((size_t)16 << 10)
#define CHUNK           ((size_t)64 << 10)
#define POLL_MS         100
#define HEAD_TIMEOUT_MS 10000
#define NAME_MAX_LEN    253

typedef struct lconn {
    int fd;
    bool streaming; /* the head was answered 200: copying the log */
    bool done;      /* close once out has been sent */
    corral_buf_t in, out;
    size_t out_off;
    int logfd;
    char dir[PATH_MAX]; /* the container's log directory */
    long inst;          /* the instance being sent */
    bool follow;
    int64_t left; /* limitBytes still to send; -1: no limit */
    int64_t t0_ms;
    const struct listener *from;
} lconn_t;

typedef struct listener {
    int fd;
    void *ctx;
    bool logs;
} listener_t;

struct corral_agent_logserver {
    char *root;
    corral_agent_page_fn pages;
    listener_t *ls;
    size_t nls;
    int wake[2];
    bool running;
    pthread_t thread;
    lconn_t *conns[CORRAL_AGENT_LOG_MAX_CONNS];
    size_t n;
};

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* --- answers ------------------------------------------------------------------------ */

static void put_status(lconn_t *c, int code, const char *reason, const char *msg)
{
    corral_buf_t b;
    corral_buf_init(&b);
    corral_buf_puts(&b, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
                        "\"status\":\"Failure\",\"message\":");
    corral_json_quote(&b, msg, strlen(msg));
    corral_buf_printf(&b, ",\"reason\":\"%s\",\"code\":%d}", reason, code);
    corral_buf_printf(&c->out,
                      "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\n"
                      "Content-Length: %zu\r\nConnection: close\r\n\r\n",
                      code, corral_http_reason(code), b.len);
    corral_buf_append(&c->out, b.p, b.len);
    corral_buf_fini(&b);
    c->done = true;
}

/* --- finding the files -------------------------------------------------------------- */

/* A DNS-style name: letters, digits, '-', '.' (no '/', no '_', not "." or ".."). */
static bool good_name(const char *s, size_t n)
{
    if (n == 0 || n > NAME_MAX_LEN || s[0] == '.')
        return false;
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              ch == '-' || ch == '.'))
            return false;
    }
    return true;
}

/* ROOT/logs/<ns>_<pod>_<uid> with the newest mtime into out; false when none. */
static bool pod_dir(const char *root, const char *ns, const char *pod, char *out, size_t len)
{
    char logs[PATH_MAX], prefix[2 * NAME_MAX_LEN + 4];
    snprintf(logs, sizeof(logs), "%s/logs", root);
    int pl = snprintf(prefix, sizeof(prefix), "%s_%s_", ns, pod);
    DIR *d = opendir(logs);
    if (!d)
        return false;
    struct timespec best = {0, 0};
    bool found = false;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, prefix, (size_t)pl) != 0 || !e->d_name[pl])
            continue;
        char path[PATH_MAX];
        struct stat st;
        if (snprintf(path, sizeof(path), "%s/%s", logs, e->d_name) >= (int)sizeof(path) ||
            stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
            continue;
        if (!found || st.st_mtim.tv_sec > best.tv_sec ||
            (st.st_mtim.tv_sec == best.tv_sec && st.st_mtim.tv_nsec > best.tv_nsec)) {
            best = st.st_mtim;
            snprintf(out, len, "%s", path);
            found = true;
        }
    }
    closedir(d);
    return found;
}

/* The highest N of the <N>.log files in dir; -1 when none. */
static long newest_instance(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    long best = -1;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char *end = NULL;
        errno = 0;
        long n = strtol(e->d_name, &end, 10);
        if (end != e->d_name && e->d_name[0] >= '0' && e->d_name[0] <= '9' && !errno &&
            strcmp(end, ".log") == 0 && n > best)
            best = n;
    }
    closedir(d);
    return best;
}

static bool inst_file_exists(const char *dir, long n, const char *ext)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof(path), "%s/%ld.%s", dir, n, ext);
    return access(path, F_OK) == 0;
}

/* The offset where the last k lines of fd begin (a final line without a
 * newline counts as a line). */
static off_t tail_offset(int fd, int64_t k)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return 0;
    off_t end = st.st_size;
    if (k == 0 || end == 0)
        return end;
    char ch;
    if (pread(fd, &ch, 1, end - 1) == 1 && ch == '\n')
        end--;
    char buf[4096];
    int64_t found = 0;
    for (off_t pos = end; pos > 0;) {
        off_t from = pos > (off_t)sizeof(buf) ? pos - (off_t)sizeof(buf) : 0;
        ssize_t got = pread(fd, buf, (size_t)(pos - from), from);
        if (got <= 0)
            return 0;
        for (ssize_t i = got - 1; i >= 0; i--) {
            if (buf[i] == '\n' && ++found == k)
                return from + i + 1;
        }
        pos = from;
    }
    return 0;
}

/* --- requests ----------------------------------------------------------------------- */

typedef struct logq {
    bool follow, previous;
    int64_t tail;  /* -1: all */
    int64_t limit; /* -1: none */
} logq_t;

static bool parse_int(const char *v, int64_t *out)
{
    char *end = NULL;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (!*v || *end || errno || x < 0)
        return false;
    *out = x;
    return true;
}

/* Parse the query; false (after a 400) on a bad number. */
static bool parse_query(lconn_t *c, const char *q, size_t qlen, logq_t *o)
{
    o->follow = o->previous = false;
    o->tail = o->limit = -1;
    size_t pos = 0;
    const char *k, *v;
    size_t kl, vl;
    while (corral_http_query_next(q, qlen, &pos, &k, &kl, &v, &vl)) {
        char key[32], val[64];
        if (kl >= sizeof(key) || vl >= sizeof(val))
            continue;
        if (corral_http_unescape(k, kl, true, key) < 0 ||
            corral_http_unescape(v, vl, true, val) < 0)
            continue;
        bool on = !strcmp(val, "true") || !strcmp(val, "1") || !strcmp(val, "True");
        if (!strcmp(key, "follow"))
            o->follow = on;
        else if (!strcmp(key, "previous"))
            o->previous = on;
        else if ((!strcmp(key, "tailLines") && !parse_int(val, &o->tail)) ||
                 (!strcmp(key, "limitBytes") && (!parse_int(val, &o->limit) || o->limit == 0))) {
            char msg[160];
            snprintf(msg, sizeof(msg), "invalid %s: \"%s\"", key, val);
            put_status(c, 400, "BadRequest", msg);
            return false;
        }
    }
    return true;
}

/* Split /containerLogs/NS/POD/CONTAINER into parts (each NUL-terminated). */
static bool split_path(const char *path, size_t len, char parts[3][NAME_MAX_LEN + 1])
{
    static const char pre[] = "/containerLogs/";
    if (len < sizeof(pre) - 1 || memcmp(path, pre, sizeof(pre) - 1) != 0)
        return false;
    const char *p = path + sizeof(pre) - 1, *end = path + len;
    for (int i = 0; i < 3; i++) {
        const char *slash = memchr(p, '/', (size_t)(end - p));
        const char *stop = slash ? slash : end;
        if ((i < 2 && !slash) || (i == 2 && slash) || !good_name(p, (size_t)(stop - p)))
            return false;
        memcpy(parts[i], p, (size_t)(stop - p));
        parts[i][stop - p] = '\0';
        p = stop + 1;
    }
    return true;
}

/* Open the instance the query asks for and answer the head; false after
 * an error Status. */
static bool open_log(corral_agent_logserver_t *s, lconn_t *c, char parts[3][NAME_MAX_LEN + 1],
                     const logq_t *q)
{
    char pdir[PATH_MAX], msg[2 * NAME_MAX_LEN + 96];
    long cur = -1;
    if (pod_dir(s->root, parts[0], parts[1], pdir, sizeof(pdir)) &&
        snprintf(c->dir, sizeof(c->dir), "%s/%s", pdir, parts[2]) < (int)sizeof(c->dir))
        cur = newest_instance(c->dir);
    if (cur < 0) {
        snprintf(msg, sizeof(msg), "container \"%s\" in pod \"%s\" is not available", parts[2],
                 parts[1]);
        put_status(c, 404, "NotFound", msg);
        return false;
    }
    long n = q->previous ? cur - 1 : cur;
    if (n < 0 || !inst_file_exists(c->dir, n, "log")) {
        snprintf(msg, sizeof(msg), "previous terminated container \"%s\" in pod \"%s\" not found",
                 parts[2], parts[1]);
        put_status(c, 400, "BadRequest", msg);
        return false;
    }
    char path[PATH_MAX + 32];
    snprintf(path, sizeof(path), "%s/%ld.log", c->dir, n);
    c->logfd = open(path, O_RDONLY | O_CLOEXEC);
    if (c->logfd < 0) {
        snprintf(msg, sizeof(msg), "container \"%s\" in pod \"%s\" is not available", parts[2],
                 parts[1]);
        put_status(c, 404, "NotFound", msg);
        return false;
    }
    if (q->tail >= 0)
        lseek(c->logfd, tail_offset(c->logfd, q->tail), SEEK_SET);
    c->inst = n;
    c->follow = q->follow && !q->previous;
    c->left = q->limit;
    c->streaming = true;
    corral_buf_puts(&c->out, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                             "Connection: close\r\n\r\n");
    return true;
}

/* A page of the pages function (metrics); false when it has none such. */
static bool serve_page(corral_agent_logserver_t *s, lconn_t *c, const char *target, size_t len)
{
    char path[256];
    memcpy(path, target, len);
    path[len] = '\0';
    corral_buf_t b;
    corral_buf_init(&b);
    const char *ctype = NULL;
    int rc = s->pages(c->from->ctx, path, &b, &ctype);
    if (rc == 0) {
        corral_buf_printf(&c->out,
                          "HTTP/1.1 200 OK\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
                          "Connection: close\r\n\r\n",
                          ctype ? ctype : "text/plain; version=0.0.4; charset=utf-8", b.len);
        corral_buf_append(&c->out, b.p, b.len);
        c->done = true;
    }
    corral_buf_fini(&b);
    return rc == 0;
}

/* A complete head is in c->in: answer it. */
static void handle(corral_agent_logserver_t *s, lconn_t *c, const corral_http_request_t *req)
{
    if (req->method_len != 3 || memcmp(req->method, "GET", 3) != 0) {
        put_status(c, 405, "MethodNotAllowed", "only GET is served");
        return;
    }
    const char *q = memchr(req->target, '?', req->target_len);
    size_t pl = q ? (size_t)(q - req->target) : req->target_len;
    if (s->pages && pl < 256 && serve_page(s, c, req->target, pl))
        return;
    char parts[3][NAME_MAX_LEN + 1];
    if (!c->from->logs || !s->root || !split_path(req->target, pl, parts)) {
        put_status(c, 404, "NotFound", "the server could not find the requested resource");
        return;
    }
    logq_t lq;
    if (!parse_query(c, q ? q + 1 : "", q ? req->target_len - pl - 1 : 0, &lq))
        return;
    open_log(s, c, parts, &lq);
}

/* --- connections -------------------------------------------------------------------- */

static void conn_free(lconn_t *c)
{
    close(c->fd);
    if (c->logfd >= 0)
        close(c->logfd);
    corral_buf_fini(&c->in);
    corral_buf_fini(&c->out);
    corral_free(c);
}

/* Read from the socket; false when the connection should close. */
static bool conn_read(corral_agent_logserver_t *s, lconn_t *c)
{
    char buf[4096];
    ssize_t k = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT);
    if (k == 0 || (k < 0 && errno != EAGAIN && errno != EINTR))
        return false;
    if (k < 0 || c->streaming || c->done)
        return true; /* a stream's client has nothing more to say */
    corral_buf_append(&c->in, buf, (size_t)k);
    corral_http_request_t req;
    int rc = corral_http_parse_request(c->in.p, c->in.len, HEAD_MAX, &req);
    if (rc == CORRAL_EAGAIN)
        return true;
    if (rc < 0)
        put_status(c, rc == CORRAL_ETOOBIG ? 431 : 400, "BadRequest", "malformed request");
    else
        handle(s, c, &req);
    return true;
}

/* Has the instance being followed ended? */
static bool inst_ended(const lconn_t *c)
{
    return inst_file_exists(c->dir, c->inst, "exit") ||
           inst_file_exists(c->dir, c->inst + 1, "log");
}

/* Queue more of the log when what was queued has been sent. */
static void conn_fill(lconn_t *c)
{
    if (!c->streaming || c->done || c->out_off < c->out.len)
        return;
    corral_buf_reset(&c->out);
    c->out_off = 0;
    if (c->left == 0) {
        c->done = true;
        return;
    }
    char buf[CHUNK];
    size_t want = c->left > 0 && (uint64_t)c->left < CHUNK ? (size_t)c->left : CHUNK;
    /* Look at the end markers before reading: whatever was written before
     * them is read now or was read already. */
    bool ended = !c->follow || inst_ended(c);
    ssize_t k = read(c->logfd, buf, want);
    if (k > 0) {
        corral_buf_append(&c->out, buf, (size_t)k);
        if (c->left > 0)
            c->left -= k;
    } else if (ended || k < 0) {
        c->done = true;
    }
}

/* Send what is queued; false when the connection should close. */
static bool conn_flush(lconn_t *c)
{
    while (c->out_off < c->out.len) {
        ssize_t k = send(c->fd, c->out.p + c->out_off, c->out.len - c->out_off,
                         MSG_DONTWAIT | MSG_NOSIGNAL);
        if (k < 0 && (errno == EAGAIN || errno == EINTR))
            return true;
        if (k <= 0)
            return false;
        c->out_off += (size_t)k;
    }
    return !c->done;
}

static void accept_all(corral_agent_logserver_t *s, const listener_t *l)
{
    for (;;) {
        int fd = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return;
        lconn_t *c = corral_calloc(1, sizeof(*c));
        c->fd = fd;
        c->logfd = -1;
        c->from = l;
        c->t0_ms = now_ms();
        corral_buf_init(&c->in);
        corral_buf_init(&c->out);
        if (s->n == CORRAL_AGENT_LOG_MAX_CONNS) {
            put_status(c, 503, "ServiceUnavailable", "too many log streams on this node");
            conn_flush(c);
            conn_free(c);
            continue;
        }
        s->conns[s->n++] = c;
    }
}

/* One round over the connections after poll: read, fill, send, close. */
static void serve_conns(corral_agent_logserver_t *s, const struct pollfd *pf)
{
    int64_t now = now_ms();
    /* Backwards, so that the connection moved into a freed slot (the last
     * one) has had its turn with its own poll result. */
    for (size_t i = s->n; i-- > 0;) {
        lconn_t *c = s->conns[i];
        short ev = pf[i].revents;
        bool keep = !(ev & (POLLERR | POLLNVAL));
        if (keep && (ev & (POLLIN | POLLHUP)))
            keep = conn_read(s, c);
        if (keep && !c->streaming && !c->done && now - c->t0_ms > HEAD_TIMEOUT_MS)
            keep = false;
        if (keep) {
            conn_fill(c);
            keep = conn_flush(c);
            /* Sent everything there is: fill again at once, not after POLL_MS. */
            for (int round = 0; round < 16 && keep && c->streaming && !c->done &&
                                c->out_off >= c->out.len && c->out.len;
                 round++) {
                conn_fill(c);
                keep = conn_flush(c);
            }
        }
        if (!keep) {
            conn_free(c);
            s->conns[i] = s->conns[--s->n];
        }
    }
}

static void *serve(void *arg)
{
    corral_agent_logserver_t *s = arg;
    size_t nl = s->nls;
    struct pollfd *pf = corral_calloc(CORRAL_AGENT_LOG_MAX_CONNS + nl + 1, sizeof(*pf));
    for (;;) {
        bool timed = false;
        for (size_t i = 0; i < s->n; i++) {
            lconn_t *c = s->conns[i];
            pf[i].fd = c->fd;
            pf[i].events = POLLIN;
            pf[i].revents = 0;
            if (c->out_off < c->out.len)
                pf[i].events |= POLLOUT;
            else if (c->follow || !c->streaming)
                timed = true; /* a follow waiting for the file, or a head deadline */
        }
        size_t n0 = s->n;
        for (size_t i = 0; i < nl; i++)
            pf[n0 + i] = (struct pollfd){s->ls[i].fd, POLLIN, 0};
        pf[n0 + nl] = (struct pollfd){s->wake[0], POLLIN, 0};
        if (poll(pf, n0 + nl + 1, timed ? POLL_MS : -1) < 0 && errno != EINTR)
            break;
        if (pf[n0 + nl].revents)
            break;
        /* serve_conns reorders conns; the listeners' results are read first */
        bool *incoming = corral_calloc(nl ? nl : 1, sizeof(bool));
        for (size_t i = 0; i < nl; i++)
            incoming[i] = pf[n0 + i].revents & POLLIN;
        serve_conns(s, pf);
        for (size_t i = 0; i < nl; i++)
            if (incoming[i])
                accept_all(s, &s->ls[i]);
        corral_free(incoming);
    }
    corral_free(pf);
    return NULL;
}

/* --- start and stop ----------------------------------------------------------------- */

corral_agent_logserver_t *corral_agent_logserver_new(const char *root, corral_agent_page_fn pages)
{
    corral_agent_logserver_t *s = corral_calloc(1, sizeof(*s));
    s->root = root ? corral_strdup(root) : NULL;
    s->pages = pages;
    s->wake[0] = s->wake[1] = -1;
    return s;
}

int corral_agent_logserver_listen(corral_agent_logserver_t *s, const char *listen, void *ctx,
                                  bool logs, int *port_out, char *err, size_t errlen)
{
    int port = 0;
    int fd = corral_net_listen(listen, 128, &port, "log server", err, errlen);
    if (fd < 0)
        return CORRAL_EIO;
    s->ls = corral_realloc(s->ls, (s->nls + 1) * sizeof(*s->ls));
    s->ls[s->nls++] = (listener_t){.fd = fd, .ctx = ctx, .logs = logs};
    if (port_out)
        *port_out = port;
    return 0;
}

int corral_agent_logserver_run(corral_agent_logserver_t *s, char *err, size_t errlen)
{
    if (pipe2(s->wake, O_CLOEXEC) != 0) {
        snprintf(err, errlen, "log server: cannot start: %s", strerror(errno));
        return CORRAL_EIO;
    }
    if (pthread_create(&s->thread, NULL, serve, s) != 0) {
        snprintf(err, errlen, "log server: cannot start its thread");
        return CORRAL_EIO;
    }
    s->running = true;
    return 0;
}

int corral_agent_logserver_start(const char *root, const char *listen, int *port_out,
                                 corral_agent_logserver_t **out, char *err, size_t errlen)
{
    *out = NULL;
    corral_agent_logserver_t *s = corral_agent_logserver_new(root, NULL);
    if (corral_agent_logserver_listen(s, listen, NULL, true, port_out, err, errlen) != 0 ||
        corral_agent_logserver_run(s, err, errlen) != 0) {
        corral_agent_logserver_stop(s);
        return CORRAL_EIO;
    }
    *out = s;
    return 0;
}

void corral_agent_logserver_stop(corral_agent_logserver_t *s)
{
    if (!s)
        return;
    char b = 1;
    if (s->running) {
        while (write(s->wake[1], &b, 1) < 0 && errno == EINTR)
            ;
        pthread_join(s->thread, NULL);
    }
    for (size_t i = 0; i < s->n; i++)
        conn_free(s->conns[i]);
    for (size_t i = 0; i < s->nls; i++)
        close(s->ls[i].fd);
    corral_free(s->ls);
    if (s->wake[0] >= 0) {
        close(s->wake[0]);
        close(s->wake[1]);
    }
    corral_free(s->root);
    corral_free(s);
}
