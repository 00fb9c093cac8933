/* Helpers for the API server tests: a server started in-process on
 * 127.0.0.1 and a free port with a fresh data directory (Criterion forks
 * each test, so each test has its own), requests through libcurl, JSON
 * answers parsed into value trees, and a raw-socket watch client that
 * decodes chunked streams line by line. Header-only, like model_test.h. */
#ifndef CORRAL_TESTS_API_TEST_H
#define CORRAL_TESTS_API_TEST_H

#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <curl/curl.h>
#include <errno.h>
#include <ftw.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "corral/apiserver.h"
#include "corral/buf.h"
#include "corral/http.h"
#include "corral/yaml.h"

static inline int api_rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static inline void api_rm_rf(const char *path)
{
    nftw(path, api_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

typedef struct api_srv {
    corral_apiserver_t *s;
    char dir[64];
    int port;
    const char *token; /* sent as a bearer token by api_req when set */
    bool https;        /* api_req speaks TLS, trusting API_TEST_CERT */
} api_srv_t;

static api_srv_t api_srv;

/* A self-signed EC certificate for 127.0.0.1 (valid until 2126) and its key,
 * for the TLS tests; api_write_file puts them where the server reads them. */
static const char API_TEST_CERT[] =
    "-----BEGIN CERTIFICATE-----\n"
    "MIIBkTCCATagAwIBAgIUbAa+Bqf9dFnIEckOyFDxz8PpWE8wCgYIKoZIzj0EAwIw\n"
    "FDESMBAGA1UEAwwJMTI3LjAuMC4xMCAXDTI2MTEzMDAxMDgxM1oYDzIxMjYxMTA2\n"
    "MDEwODEzWjAUMRIwEAYDVQQDDAkxMjcuMC4wLjEwWTATBgcqhkjOPQIBBggqhkjO\n"
    "PQMBBwNCAASPN1FDZGFJezxmr3dkdxUe6lLe846OGng37eDqcxEqpDz2ESRuYyVV\n"
    "V1RAgnEvk9VhTAIJH66g4vOjCmNdr37vo2QwYjAdBgNVHQ4EFgQU14qmL9ppyH6K\n"
    "oMiVuSDmcW29aHMwHwYDVR0jBBgwFoAU14qmL9ppyH6KoMiVuSDmcW29aHMwDwYD\n"
    "VR0TAQH/BAUwAwEB/zAPBgNVHREECDAGhwR/AAABMAoGCCqGSM49BAMCA0kAMEYC\n"
    "IQDOsFaGeW/c74RttTdzIQtSbxm3Ss7k1TDgbeKIys2BegIhALy//neSgR8/SDYI\n"
    "kcc5aaI+uc8QXZTTJcjFYMwBUH1e\n"
    "-----END CERTIFICATE-----\n";
static const char API_TEST_KEY[] =
    "-----BEGIN PRIVATE KEY-----\n"
    "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgIRPD6u6KXvHlc3oB\n"
    "ZEiCV3xIml1aWYZPkLqwDe4GjjChRANCAASPN1FDZGFJezxmr3dkdxUe6lLe846O\n"
    "Gng37eDqcxEqpDz2ESRuYyVVV1RAgnEvk9VhTAIJH66g4vOjCmNdr37v\n"
    "-----END PRIVATE KEY-----\n";

/* Write text to DIR/name (the test's data directory); returns the path. */
static inline const char *api_write_file(const char *dir, const char *name, const char *text)
{
    static char path[4][256];
    static int next;
    char *p = path[next++ % 4];
    snprintf(p, sizeof(path[0]), "%s/%s", dir, name);
    FILE *fp = fopen(p, "w");
    cr_assert_not_null(fp, "%s", p);
    fputs(text, fp);
    fclose(fp);
    return p;
}

/* Start a server; tweak (may be NULL) adjusts the options first. */
static inline void api_start_with(void (*tweak)(corral_apiserver_opts_t *o))
{
    snprintf(api_srv.dir, sizeof(api_srv.dir), "/tmp/corral-api-XXXXXX");
    cr_assert_not_null(mkdtemp(api_srv.dir));
    corral_apiserver_opts_t o;
    memset(&o, 0, sizeof(o));
    o.data_dir = api_srv.dir;
    o.listen = "127.0.0.1:0";
    o.threads = 2;
    if (tweak)
        tweak(&o);
    char err[256] = "";
    cr_assert_eq(corral_apiserver_new(&o, &api_srv.s, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(corral_apiserver_start(api_srv.s), 0);
    api_srv.port = corral_apiserver_port(api_srv.s);
}

static inline void api_start(void)
{
    api_start_with(NULL);
}

static inline void api_stop(void)
{
    corral_apiserver_free(api_srv.s);
    api_srv.s = NULL;
    api_rm_rf(api_srv.dir);
}

typedef struct api_resp {
    long code;
    corral_buf_t body;
    corral_buf_t headers;
    corral_arena_t a;
    corral_val_t *json; /* parsed body when it is JSON, else NULL */
} api_resp_t;

static inline size_t api_collect(char *p, size_t size, size_t n, void *ud)
{
    corral_buf_append(ud, p, size * n);
    return size * n;
}

/* One request with a bearer token (NULL: none) and extra header lines
 * (NULL-terminated, or NULL); body may be NULL, ctype NULL means
 * application/json. */
static inline void api_req_h(api_resp_t *r, const char *method, const char *path, const char *ctype,
                             const char *body, const char *token, const char *const *headers)
{
    memset(r, 0, sizeof(*r));
    corral_buf_init(&r->body);
    corral_buf_init(&r->headers);
    corral_arena_init(&r->a);
    CURL *c = curl_easy_init();
    char url[1024];
    snprintf(url, sizeof(url), "%s://127.0.0.1:%d%s", api_srv.https ? "https" : "http",
             api_srv.port, path);
    curl_easy_setopt(c, CURLOPT_URL, url);
    if (api_srv.https) {
        struct curl_blob ca = {(void *)API_TEST_CERT, sizeof(API_TEST_CERT) - 1, CURL_BLOB_COPY};
        curl_easy_setopt(c, CURLOPT_CAINFO_BLOB, &ca);
    }
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, api_collect);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &r->body);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, api_collect);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, &r->headers);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 20L);
    struct curl_slist *h = NULL;
    if (body) {
        char ct[128];
        snprintf(ct, sizeof(ct), "Content-Type: %s", ctype ? ctype : "application/json");
        h = curl_slist_append(h, ct);
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
    }
    h = curl_slist_append(h, "Expect:");
    if (token) {
        char auth[2048];
        snprintf(auth, sizeof(auth), "Authorization: Bearer %s", token);
        h = curl_slist_append(h, auth);
    }
    for (size_t i = 0; headers && headers[i]; i++)
        h = curl_slist_append(h, headers[i]);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    CURLcode rc = curl_easy_perform(c);
    cr_assert_eq(rc, CURLE_OK, "%s %s: %s", method, path, curl_easy_strerror(rc));
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->code);
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    corral_doc_t *docs = NULL;
    size_t n = 0;
    corral_yaml_opts_t o = {.json = true};
    if (r->body.len && r->body.p[0] == '{' &&
        corral_yaml_parse(&r->a, r->body.p, r->body.len, "resp", &o, NULL, &docs, &n) == 0 &&
        n == 1)
        r->json = docs[0].root;
}

/* One request as the suite's user (api_srv.token). */
static inline void api_req(api_resp_t *r, const char *method, const char *path, const char *ctype,
                           const char *body)
{
    api_req_h(r, method, path, ctype, body, api_srv.token, NULL);
}

static inline void api_free(api_resp_t *r)
{
    corral_buf_fini(&r->body);
    corral_buf_fini(&r->headers);
    corral_arena_fini(&r->a);
}

/* The string at a dotted path of a JSON tree, or NULL. */
static inline const char *api_str(const corral_val_t *v, const char *path)
{
    corral_val_t *x = corral_val_dig(v, path);
    return x && x->s && x->kind != CORRAL_VAL_MAP && x->kind != CORRAL_VAL_SEQ ? x->s : NULL;
}

/* Request and check the status code; the caller frees r. */
#define API_EXPECT(r_, code_, m_, p_, ct_, b_)                                                     \
    do {                                                                                           \
        api_req((r_), (m_), (p_), (ct_), (b_));                                                    \
        cr_assert_eq((r_)->code, (code_), "%s %s: got %ld: %s", (m_), (p_), (r_)->code,            \
                     corral_buf_str(&(r_)->body));                                                 \
    } while (0)

/* Check a Status body: reason and code, and that message contains msg. */
static inline void api_status(const api_resp_t *r, const char *reason, int code, const char *msg)
{
    cr_assert_not_null(r->json, "not JSON: %s", corral_buf_str(&r->body));
    cr_assert_str_eq(api_str(r->json, "kind"), "Status");
    cr_assert_str_eq(api_str(r->json, "apiVersion"), "v1");
    if (reason)
        cr_assert_str_eq(api_str(r->json, "reason"), reason, "%s", corral_buf_str(&r->body));
    char c[16];
    snprintf(c, sizeof(c), "%d", code);
    cr_assert_str_eq(api_str(r->json, "code"), c);
    if (msg)
        cr_assert(strstr(api_str(r->json, "message"), msg), "message lacks \"%s\": %s", msg,
                  corral_buf_str(&r->body));
}

/* --- a raw watch client ------------------------------------------------------------------ */

typedef struct api_watch {
    int fd;
    corral_buf_t in;   /* raw bytes not yet decoded */
    corral_buf_t body; /* decoded body bytes not yet returned */
    corral_http_chunked_t ch;
    bool head_done, ended;
    int code;
    char line[1 << 20];
} api_watch_t;

/* rcvbuf > 0: the socket's receive buffer, set before connecting. */
static inline int api_connect_rcvbuf(int rcvbuf)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (rcvbuf > 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)api_srv.port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    cr_assert_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    return fd;
}

static inline int api_connect(void)
{
    return api_connect_rcvbuf(0);
}

static inline void api_send(int fd, const char *s)
{
    size_t n = strlen(s);
    cr_assert_eq(write(fd, s, n), (ssize_t)n);
}

static inline api_watch_t *api_watch_open(const char *path)
{
    api_watch_t *w = calloc(1, sizeof(*w));
    corral_buf_init(&w->in);
    corral_buf_init(&w->body);
    w->fd = api_connect();
    char req[1200];
    snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: t\r\n\r\n", path);
    api_send(w->fd, req);
    return w;
}

/* Move decodable bytes from in to body. */
static inline void api_watch_decode(api_watch_t *w)
{
    if (!w->head_done) {
        const char *end = w->in.p ? strstr(w->in.p, "\r\n\r\n") : NULL;
        if (!end)
            return;
        w->code = (int)strtol(w->in.p + 9, NULL, 10);
        size_t hl = (size_t)(end + 4 - w->in.p);
        memmove(w->in.p, w->in.p + hl, w->in.len - hl + 1);
        w->in.len -= hl;
        w->head_done = true;
    }
    if (w->ended || w->in.len == 0)
        return;
    size_t used = 0;
    int rc = corral_http_chunked_feed(&w->ch, w->in.p, w->in.len, &used, &w->body, 1 << 30);
    cr_assert_geq(rc, 0, "bad chunked framing from the server");
    memmove(w->in.p, w->in.p + used, w->in.len - used + 1);
    w->in.len -= used;
    if (rc == 1)
        w->ended = true;
}

/* The next event line (without the newline), or NULL when none arrives
 * within timeout_ms or the stream ended. */
static inline const char *api_watch_next(api_watch_t *w, int timeout_ms)
{
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        api_watch_decode(w);
        char *nl = w->body.p ? memchr(w->body.p, '\n', w->body.len) : NULL;
        if (nl) {
            size_t n = (size_t)(nl - w->body.p);
            cr_assert_lt(n, sizeof(w->line));
            memcpy(w->line, w->body.p, n);
            w->line[n] = '\0';
            memmove(w->body.p, nl + 1, w->body.len - n - 1);
            w->body.len -= n + 1;
            w->body.p[w->body.len] = '\0';
            return w->line;
        }
        if (w->ended)
            return NULL;
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        long left =
            timeout_ms - ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000);
        struct pollfd p = {w->fd, POLLIN, 0};
        if (poll(&p, 1, left > 0 ? (int)left : 0) <= 0) {
            if (left <= 0)
                return NULL;
            continue;
        }
        char buf[65536];
        ssize_t n = read(w->fd, buf, sizeof(buf));
        if (n <= 0) {
            w->ended = true;
            continue;
        }
        corral_buf_append(&w->in, buf, (size_t)n);
    }
}

static inline void api_watch_close(api_watch_t *w)
{
    close(w->fd);
    corral_buf_fini(&w->in);
    corral_buf_fini(&w->body);
    free(w);
}

/* Next event must have this type and name (substring checks on the line). */
static inline void api_expect_event(api_watch_t *w, const char *type, const char *name)
{
    const char *l = api_watch_next(w, 5000);
    cr_assert_not_null(l, "no %s event for %s", type, name);
    char want[64];
    snprintf(want, sizeof(want), "{\"type\":\"%s\"", type);
    cr_assert_eq(strncmp(l, want, strlen(want)), 0, "want %s %s, got %.300s", type, name, l);
    char nm[128];
    snprintf(nm, sizeof(nm), "\"name\":\"%s\"", name);
    cr_assert(strstr(l, nm), "want %s %s, got %.300s", type, name, l);
}

#endif
