/* The replay harness's implementation (see replay.h), included by the one
 * test file that uses it. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "corral/buf.h"
#include "corral/json.h"
#include "replay.h"

typedef struct rx {
    char method[16];
    char *target;
    corral_buf_t req_headers; /* "Name: value\n" lines */
    corral_buf_t req_body;
    int code;
    char *status_line; /* "200 OK" */
    corral_buf_t resp_headers;
    corral_buf_t resp_body;
    int line; /* where it starts in the file, for messages */
} rx_t;

struct replay {
    const char *file;
    rx_t *x;
    size_t n;
    atomic_size_t played, extra;
    int fd, port;
    char url[64];
    pthread_t th;
    atomic_int stop;
    pthread_mutex_t mu;
    char *diff;
};

static void rx_fini(rx_t *x)
{
    free(x->target);
    free(x->status_line);
    corral_buf_fini(&x->req_headers);
    corral_buf_fini(&x->req_body);
    corral_buf_fini(&x->resp_headers);
    corral_buf_fini(&x->resp_body);
}

/* --- the file ------------------------------------------------------------------------------ */

static void trim_body(corral_buf_t *b, bool keep_final_newline)
{
    while (b->len && (b->p[b->len - 1] == '\n' || b->p[b->len - 1] == '\r'))
        b->len--;
    if (b->len && keep_final_newline)
        b->p[b->len++] = '\n';
    if (b->p)
        b->p[b->len] = '\0';
}

static int load(replay_t *r, const char *file)
{
    FILE *fp = fopen(file, "r");
    if (!fp)
        return -1;
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int lineno = 0;
    enum { NONE, REQ_H, REQ_B, RESP_H, RESP_B } st = NONE;
    rx_t *cur = NULL;
    while ((len = getline(&line, &cap, fp)) >= 0) {
        lineno++;
        while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = '\0';
        if (!strncmp(line, ">>> ", 4)) {
            if (cur)
                trim_body(&cur->resp_body, true);
            r->x = realloc(r->x, (r->n + 1) * sizeof(rx_t));
            cur = &r->x[r->n++];
            memset(cur, 0, sizeof(*cur));
            corral_buf_init(&cur->req_headers);
            corral_buf_init(&cur->req_body);
            corral_buf_init(&cur->resp_headers);
            corral_buf_init(&cur->resp_body);
            cur->line = lineno;
            char target[8192];
            if (sscanf(line + 4, "%15s %8191s", cur->method, target) != 2) {
                free(line);
                fclose(fp);
                return -1;
            }
            cur->target = strdup(target);
            st = REQ_H;
            continue;
        }
        if (!strncmp(line, "<<< ", 4) && cur) {
            trim_body(&cur->req_body, false);
            cur->code = (int)strtol(line + 4, NULL, 10);
            cur->status_line = strdup(line + 4);
            st = RESP_H;
            continue;
        }
        if (st == NONE || (line[0] == '#' && (st == NONE || st == REQ_H || st == RESP_H)))
            continue;
        if (st == REQ_H || st == RESP_H) {
            if (!len) {
                st = st == REQ_H ? REQ_B : RESP_B;
                continue;
            }
            corral_buf_printf(st == REQ_H ? &cur->req_headers : &cur->resp_headers, "%s\n", line);
        } else {
            corral_buf_t *b = st == REQ_B ? &cur->req_body : &cur->resp_body;
            corral_buf_printf(b, "%s\n", line);
        }
    }
    if (cur)
        trim_body(&cur->resp_body, true);
    free(line);
    fclose(fp);
    return r->n ? 0 : -1;
}

/* --- matching ------------------------------------------------------------------------------- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Split a query into sorted "k=v" items (in buf, which is modified). */
static size_t query_items(char *q, char **items, size_t max)
{
    size_t n = 0;
    for (char *save = NULL, *t = strtok_r(q, "&", &save); t && n < max;
         t = strtok_r(NULL, "&", &save))
        items[n++] = t;
    qsort(items, n, sizeof(char *), cmp_str);
    return n;
}

static bool target_matches(const char *want, const char *got, corral_buf_t *why)
{
    char w[8192], g[8192];
    snprintf(w, sizeof(w), "%s", want);
    snprintf(g, sizeof(g), "%s", got);
    char *wq = strchr(w, '?'), *gq = strchr(g, '?');
    if (wq)
        *wq++ = '\0';
    if (gq)
        *gq++ = '\0';
    if (strcmp(w, g) != 0) {
        corral_buf_printf(why, "  path: want %s\n        got  %s\n", w, g);
        return false;
    }
    char *wi[64], *gi[64];
    size_t wn = wq ? query_items(wq, wi, 64) : 0, gn = gq ? query_items(gq, gi, 64) : 0;
    bool ok = wn == gn;
    for (size_t i = 0; ok && i < wn; i++) {
        const char *we = strchr(wi[i], '=');
        if (we && !strcmp(we + 1, "*"))
            ok = !strncmp(wi[i], gi[i], (size_t)(we - wi[i]) + 1);
        else
            ok = !strcmp(wi[i], gi[i]);
    }
    if (!ok) {
        corral_buf_printf(why, "  query: want");
        for (size_t i = 0; i < wn; i++)
            corral_buf_printf(why, " %s", wi[i]);
        corral_buf_printf(why, "\n         got ");
        for (size_t i = 0; i < gn; i++)
            corral_buf_printf(why, " %s", gi[i]);
        corral_buf_printf(why, "\n");
    }
    return ok;
}

/* The value of header name in a block of "Name: value" lines. */
static bool header_value(const char *block, const char *name, char *out, size_t outlen)
{
    size_t nl = strlen(name);
    for (const char *p = block; p && *p;) {
        const char *end = strpbrk(p, "\r\n");
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len > nl && p[nl] == ':' && !strncasecmp(p, name, nl)) {
            const char *v = p + nl + 1;
            while (*v == ' ')
                v++;
            snprintf(out, outlen, "%.*s", (int)(len - (size_t)(v - p)), v);
            return true;
        }
        p = end ? end + strspn(end, "\r\n") : NULL;
    }
    return false;
}

static bool headers_match(const rx_t *x, const char *got, corral_buf_t *why)
{
    bool ok = true;
    for (const char *p = x->req_headers.p; p && *p;) {
        const char *nl = strchr(p, '\n');
        const char *colon = memchr(p, ':', (size_t)(nl - p));
        char name[128], want[4096], have[4096];
        snprintf(name, sizeof(name), "%.*s", (int)(colon - p), p);
        header_value(p, name, want, sizeof(want));
        if (!header_value(got, name, have, sizeof(have))) {
            corral_buf_printf(why, "  header %s: want \"%s\", not sent\n", name, want);
            ok = false;
        } else if (strcmp(want, "*") != 0 && strcmp(want, have) != 0) {
            corral_buf_printf(why, "  header %s: want \"%s\"\n  %*s got  \"%s\"\n", name, want,
                              (int)strlen(name) + 6, "", have);
            ok = false;
        }
        p = nl + 1;
    }
    return ok;
}

/* Every field of want is in got with the same value ("*": any). */
static bool json_subset(const corral_val_t *want, const corral_val_t *got, const char *at,
                        corral_buf_t *why)
{
    if (want->kind == CORRAL_VAL_STR && !strcmp(want->s, "*"))
        return got != NULL;
    if (!got) {
        corral_buf_printf(why, "  body %s: missing\n", at);
        return false;
    }
    if (want->kind == CORRAL_VAL_MAP && got->kind == CORRAL_VAL_MAP) {
        bool ok = true;
        for (size_t i = 0; i < want->n; i++) {
            char sub[512];
            snprintf(sub, sizeof(sub), "%s.%s", at, want->pairs[i].key->s);
            ok &= json_subset(want->pairs[i].val, corral_val_get(got, want->pairs[i].key->s), sub,
                              why);
        }
        return ok;
    }
    if (want->kind == CORRAL_VAL_SEQ && got->kind == CORRAL_VAL_SEQ && want->n == got->n) {
        bool ok = true;
        for (size_t i = 0; i < want->n; i++) {
            char sub[512];
            snprintf(sub, sizeof(sub), "%s[%zu]", at, i);
            ok &= json_subset(want->items[i], got->items[i], sub, why);
        }
        return ok;
    }
    if (corral_val_equal(want, got))
        return true;
    corral_buf_t w, g;
    corral_buf_init(&w);
    corral_buf_init(&g);
    corral_val_to_json(want, &w, false);
    corral_val_to_json(got, &g, false);
    corral_buf_printf(why, "  body %s: want %s\n  %*s got  %s\n", at, w.p, (int)strlen(at) + 6, "",
                      g.p);
    corral_buf_fini(&w);
    corral_buf_fini(&g);
    return false;
}

static bool body_matches(const rx_t *x, const char *body, size_t len, corral_buf_t *why)
{
    if (!x->req_body.len)
        return true;
    corral_arena_t a;
    corral_arena_init(&a);
    corral_val_t *want = NULL, *got = NULL;
    bool ok;
    if (corral_json_parse(&a, x->req_body.p, x->req_body.len, &want, NULL) != 0) {
        corral_buf_printf(why, "  the recording's body is not JSON\n");
        ok = false;
    } else if (corral_json_parse(&a, body, len, &got, NULL) != 0) {
        corral_buf_printf(why, "  body: want JSON, got \"%.*s\"\n", (int)(len > 200 ? 200 : len),
                          body);
        ok = false;
    } else {
        ok = json_subset(want, got, "$", why);
    }
    corral_arena_fini(&a);
    return ok;
}

/* --- serving -------------------------------------------------------------------------------- */

static void send_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w <= 0)
            return;
        p += w;
        n -= (size_t)w;
    }
}

static void answer(int fd, const char *status, const char *headers, const char *body, size_t len,
                   bool streamed)
{
    corral_buf_t b;
    corral_buf_init(&b);
    corral_buf_printf(&b, "HTTP/1.1 %s\r\n", status);
    for (const char *p = headers; p && *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        if (strncasecmp(p, "transfer-encoding:", 18) != 0 && strncasecmp(p, "content-length:", 15))
            corral_buf_printf(&b, "%.*s\r\n", (int)n, p);
        p = nl ? nl + 1 : p + n;
    }
    if (!streamed)
        corral_buf_printf(&b, "Content-Length: %zu\r\n", len);
    corral_buf_puts(&b, "Connection: close\r\n\r\n");
    corral_buf_append(&b, body, len);
    send_all(fd, b.p, b.len);
    corral_buf_fini(&b);
}

static void serve_one(replay_t *r, int fd)
{
    corral_buf_t in;
    corral_buf_init(&in);
    char buf[8192];
    size_t head = 0, need = 0;
    for (;;) {
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 5000) <= 0)
            goto out;
        ssize_t n = recv(fd, buf, sizeof(buf), 0);
        if (n <= 0)
            goto out;
        corral_buf_append(&in, buf, (size_t)n);
        if (!head) {
            char *e = strstr(in.p, "\r\n\r\n");
            if (!e)
                continue;
            head = (size_t)(e - in.p) + 4;
            char cl[32];
            need = header_value(strchr(in.p, '\n') + 1, "Content-Length", cl, sizeof(cl))
                       ? (size_t)strtoul(cl, NULL, 10)
                       : 0;
        }
        if (in.len >= head + need)
            break;
    }
    char method[16] = "", target[8192] = "";
    sscanf(in.p, "%15s %8191s", method, target);
    size_t i = atomic_fetch_add(&r->played, 1);
    if (i >= r->n) {
        atomic_fetch_sub(&r->played, 1);
        atomic_fetch_add(&r->extra, 1);
        static const char past[] = "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":"
                                   "\"Failure\",\"message\":\"no more recorded exchanges\","
                                   "\"code\":500}";
        answer(fd, "500 Internal Server Error", "Content-Type: application/json\n", past,
               strlen(past), false);
        goto out;
    }
    const rx_t *x = &r->x[i];
    corral_buf_t why;
    corral_buf_init(&why);
    if (strcmp(method, x->method) != 0)
        corral_buf_printf(&why, "  method: want %s, got %s\n", x->method, method);
    target_matches(x->target, target, &why);
    headers_match(x, strchr(in.p, '\n') + 1, &why);
    body_matches(x, in.p + head, need, &why);
    if (why.len) {
        pthread_mutex_lock(&r->mu);
        if (!r->diff) {
            corral_buf_t d;
            corral_buf_init(&d);
            corral_buf_printf(&d,
                              "%s:%d: exchange %zu (%s %s) does not match the request %s %s:\n%s",
                              r->file, x->line, i + 1, x->method, x->target, method, target, why.p);
            r->diff = corral_buf_steal(&d);
        }
        pthread_mutex_unlock(&r->mu);
        answer(fd, "400 Bad Request", "Content-Type: text/plain\n", why.p, why.len, false);
    } else {
        char te[64];
        bool streamed = header_value(x->resp_headers.p, "Transfer-Encoding", te, sizeof(te));
        answer(fd, x->status_line, x->resp_headers.p, x->resp_body.p ? x->resp_body.p : "",
               x->resp_body.len, streamed);
    }
    corral_buf_fini(&why);
out:
    corral_buf_fini(&in);
    close(fd);
}

static void *serve(void *arg)
{
    replay_t *r = arg;
    while (!atomic_load(&r->stop)) {
        struct pollfd p = {r->fd, POLLIN, 0};
        if (poll(&p, 1, 50) <= 0)
            continue;
        int fd = accept(r->fd, NULL, NULL);
        if (fd >= 0)
            serve_one(r, fd);
    }
    return NULL;
}

replay_t *replay_start(const char *file)
{
    replay_t *r = calloc(1, sizeof(*r));
    r->file = file;
    pthread_mutex_init(&r->mu, NULL);
    if (load(r, file) != 0) {
        fprintf(stderr, "replay: cannot read the exchanges of %s\n", file);
        abort();
    }
    r->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t sl = sizeof(sa);
    if (bind(r->fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(r->fd, 16) != 0 ||
        getsockname(r->fd, (struct sockaddr *)&sa, &sl) != 0)
        abort();
    r->port = ntohs(sa.sin_port);
    snprintf(r->url, sizeof(r->url), "http://127.0.0.1:%d", r->port);
    pthread_create(&r->th, NULL, serve, r);
    return r;
}

const char *replay_url(const replay_t *r)
{
    return r->url;
}

bool replay_wait(replay_t *r, int ms)
{
    for (int t = 0; t < ms && atomic_load(&r->played) < r->n; t += 10)
        usleep(10000);
    return atomic_load(&r->played) == r->n;
}

size_t replay_count(const replay_t *r)
{
    return r->n;
}

size_t replay_played(const replay_t *r)
{
    return atomic_load(&((replay_t *)r)->played);
}

size_t replay_extra(const replay_t *r)
{
    return atomic_load(&((replay_t *)r)->extra);
}

const char *replay_diff(const replay_t *r)
{
    pthread_mutex_lock(&((replay_t *)r)->mu);
    const char *d = r->diff;
    pthread_mutex_unlock(&((replay_t *)r)->mu);
    return d;
}

void replay_stop(replay_t *r)
{
    atomic_store(&r->stop, 1);
    pthread_join(r->th, NULL);
    close(r->fd);
    for (size_t i = 0; i < r->n; i++)
        rx_fini(&r->x[i]);
    free(r->x);
    corral_free(r->diff);
    pthread_mutex_destroy(&r->mu);
    free(r);
}
