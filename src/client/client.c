/*
 * Requests to an API server over libcurl: one easy handle per client (so
 * keep-alive and TLS sessions are reused between requests), the bearer
 * token and TLS settings of the configuration, whole responses or
 * line-by-line streams (watch events, followed logs), Warning headers
 * collected for the caller to print as kubectl does.
 */
#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "client/codec.h"
#include "corral/client.h"
#include "corral/json.h"

struct corral_client {
    CURL *h;
    corral_client_config_t cfg;
    char *auth;                     /* "Authorization: Bearer ..." */
    const volatile int *abort_flag; /* see corral_client_set_abort */
    long timeout_ms;                /* corral_client_set_limits; 0: 60 s */
    size_t max_body;                /* 0: unbounded */
    bool pb;                        /* corral_client_set_accept: protobuf (codec.c) */
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;

static void curl_init_once(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
}

static char *dup_or_null(const char *s)
{
    return s ? corral_strdup(s) : NULL;
}

static char *dup_data(const char *p, size_t n)
{
    if (!p)
        return NULL;
    char *d = corral_malloc(n + 1);
    memcpy(d, p, n);
    d[n] = '\0';
    return d;
}

static void copy_config(corral_client_config_t *dst, const corral_client_config_t *src)
{
    corral_client_config_init(dst);
    dst->server = dup_or_null(src->server);
    dst->token = dup_or_null(src->token);
    dst->namespace = dup_or_null(src->namespace);
    dst->ca_file = dup_or_null(src->ca_file);
    dst->ca_data = dup_data(src->ca_data, src->ca_data_len);
    dst->ca_data_len = src->ca_data_len;
    dst->cert_file = dup_or_null(src->cert_file);
    dst->key_file = dup_or_null(src->key_file);
    dst->cert_data = dup_data(src->cert_data, src->cert_data_len);
    dst->cert_data_len = src->cert_data_len;
    dst->key_data = dup_data(src->key_data, src->key_data_len);
    dst->key_data_len = src->key_data_len;
    dst->insecure = src->insecure;
    dst->source = dup_or_null(src->source);
}

corral_client_t *corral_client_new(const corral_client_config_t *cfg)
{
    pthread_once(&curl_once, curl_init_once);
    corral_client_t *c = corral_calloc(1, sizeof(*c));
    copy_config(&c->cfg, cfg);
    c->h = curl_easy_init();
    if (!c->h) {
        corral_client_free(c);
        return NULL;
    }
    if (c->cfg.token && *c->cfg.token) {
        size_t n = strlen(c->cfg.token) + 32;
        c->auth = corral_malloc(n);
        snprintf(c->auth, n, "Authorization: Bearer %s", c->cfg.token);
    }
    return c;
}

void corral_client_free(corral_client_t *c)
{
    if (!c)
        return;
    if (c->h)
        curl_easy_cleanup(c->h);
    corral_client_config_fini(&c->cfg);
    corral_free(c->auth);
    corral_free(c);
}

const char *corral_client_server(const corral_client_t *c)
{
    return c->cfg.server;
}

void corral_client_set_abort(corral_client_t *c, const volatile int *flag)
{
    c->abort_flag = flag;
}

void corral_client_set_accept(corral_client_t *c, const char *accept)
{
    c->pb = accept && strstr(accept, "protobuf");
}

void corral_client_set_limits(corral_client_t *c, long timeout_ms, size_t max_body)
{
    c->timeout_ms = timeout_ms;
    c->max_body = max_body;
}

/* libcurl calls this about once a second even on an idle connection, so a
 * watch or a followed log ends within a second of the flag being set. */
static int progress_cb(void *ud, curl_off_t dlt, curl_off_t dln, curl_off_t ult, curl_off_t uln)
{
    (void)dlt;
    (void)dln;
    (void)ult;
    (void)uln;
    const corral_client_t *c = ud;
    return c->abort_flag && *c->abort_flag ? 1 : 0;
}

void corral_client_resp_init(corral_client_resp_t *r)
{
    memset(r, 0, sizeof(*r));
    corral_buf_init(&r->body);
    corral_buf_init(&r->warnings);
}

void corral_client_resp_fini(corral_client_resp_t *r)
{
    corral_buf_fini(&r->body);
    corral_buf_fini(&r->warnings);
}

static void blob(CURL *h, CURLoption opt, const char *p, size_t n)
{
    struct curl_blob b = {(void *)p, n, CURL_BLOB_COPY};
    curl_easy_setopt(h, opt, &b);
}

static void tls_options(corral_client_t *c)
{
    const corral_client_config_t *g = &c->cfg;
    if (g->insecure) {
        curl_easy_setopt(c->h, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(c->h, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    if (g->ca_data)
        blob(c->h, CURLOPT_CAINFO_BLOB, g->ca_data, g->ca_data_len);
    else if (g->ca_file)
        curl_easy_setopt(c->h, CURLOPT_CAINFO, g->ca_file);
    if (g->cert_data)
        blob(c->h, CURLOPT_SSLCERT_BLOB, g->cert_data, g->cert_data_len);
    else if (g->cert_file)
        curl_easy_setopt(c->h, CURLOPT_SSLCERT, g->cert_file);
    if (g->key_data)
        blob(c->h, CURLOPT_SSLKEY_BLOB, g->key_data, g->key_data_len);
    else if (g->key_file)
        curl_easy_setopt(c->h, CURLOPT_SSLKEY, g->key_file);
}

/* "Warning: 299 - "text"" headers: keep the text. */
static size_t header_cb(char *p, size_t size, size_t n, void *ud)
{
    corral_client_resp_t *r = ud;
    size_t len = size * n;
    if (len > 8 && strncasecmp(p, "warning:", 8) == 0) {
        const char *q = memchr(p, '"', len);
        const char *end = p + len;
        while (end > p && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' '))
            end--;
        if (q && end > q + 1 && end[-1] == '"') {
            for (const char *s = q + 1; s < end - 1; s++) {
                if (*s == '\\' && s + 1 < end - 1)
                    s++;
                corral_buf_putc(&r->warnings, *s);
            }
            corral_buf_putc(&r->warnings, '\n');
        }
    }
    return len;
}

typedef struct body_sink {
    corral_client_resp_t *r;
    size_t max; /* 0: unbounded */
    bool over;
} body_sink_t;

static size_t body_cb(char *p, size_t size, size_t n, void *ud)
{
    body_sink_t *b = ud;
    if (b->max && b->r->body.len + size * n > b->max) {
        b->over = true;
        return 0; /* stops the transfer */
    }
    corral_buf_append(&b->r->body, p, size * n);
    return size * n;
}

/* Common setup of one request; returns the header list to free. */
static struct curl_slist *prepare(corral_client_t *c, const char *method, const char *path,
                                  const char *ctype, corral_client_resp_t *r)
{
    curl_easy_reset(c->h);
    char url[4096];
    snprintf(url, sizeof(url), "%s%s", c->cfg.server, path);
    curl_easy_setopt(c->h, CURLOPT_URL, url);
    curl_easy_setopt(c->h, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(c->h, CURLOPT_HEADERFUNCTION, header_cb);
    curl_easy_setopt(c->h, CURLOPT_HEADERDATA, r);
    curl_easy_setopt(c->h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c->h, CURLOPT_CONNECTTIMEOUT, 10L);
    curl_easy_setopt(c->h, CURLOPT_USERAGENT, "corral/0.1.0");
    curl_easy_setopt(c->h, CURLOPT_ERRORBUFFER, r->error);
    tls_options(c);
    if (c->abort_flag) {
        curl_easy_setopt(c->h, CURLOPT_NOPROGRESS, 0L);
        curl_easy_setopt(c->h, CURLOPT_XFERINFOFUNCTION, progress_cb);
        curl_easy_setopt(c->h, CURLOPT_XFERINFODATA, c);
    }
    struct curl_slist *h = NULL;
    char ct[160];
    snprintf(ct, sizeof(ct), "Content-Type: %s", ctype ? ctype : "application/json");
    h = curl_slist_append(h, ct);
    h = curl_slist_append(h, corral__codec_accept(c->pb));
    h = curl_slist_append(h, "Expect:");
    if (c->auth)
        h = curl_slist_append(h, c->auth);
    curl_easy_setopt(c->h, CURLOPT_HTTPHEADER, h);
    return h;
}

static int perform(corral_client_t *c, corral_client_resp_t *r, struct curl_slist *h)
{
    CURLcode rc = curl_easy_perform(c->h);
    curl_slist_free_all(h);
    curl_easy_getinfo(c->h, CURLINFO_RESPONSE_CODE, &r->code);
    if (rc != CURLE_OK && rc != CURLE_WRITE_ERROR) {
        if (!r->error[0])
            snprintf(r->error, sizeof(r->error), "%s", curl_easy_strerror(rc));
        return r->code ? 0 : CORRAL_EIO;
    }
    return 0;
}

int corral_client_request(corral_client_t *c, const char *method, const char *path,
                          const char *ctype, const char *body, size_t len, corral_client_resp_t *r)
{
    struct curl_slist *h = prepare(c, method, path, ctype, r);
    body_sink_t sink = {r, c->max_body, false};
    curl_easy_setopt(c->h, CURLOPT_WRITEFUNCTION, body_cb);
    curl_easy_setopt(c->h, CURLOPT_WRITEDATA, &sink);
    curl_easy_setopt(c->h, CURLOPT_TIMEOUT_MS, c->timeout_ms > 0 ? c->timeout_ms : 60000L);
    if (c->timeout_ms > 0 && c->timeout_ms < 10000)
        curl_easy_setopt(c->h, CURLOPT_CONNECTTIMEOUT_MS, c->timeout_ms);
    if (body) {
        curl_easy_setopt(c->h, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(c->h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    }
    int rc = perform(c, r, h);
    corral__codec_body(&r->body);
    if (!sink.over)
        return rc;
    snprintf(r->error, sizeof(r->error), "response larger than %zu bytes", sink.max);
    return CORRAL_ETOOBIG;
}

typedef struct stream {
    corral_client_t *c;
    corral_client_resp_t *r;
    int (*line)(void *ctx, const char *text, size_t len);
    void *ctx;
    corral_buf_t pending;
    bool stopped;
} stream_t;

static size_t stream_cb(char *p, size_t size, size_t n, void *ud)
{
    stream_t *s = ud;
    size_t len = size * n;
    long code = 0;
    curl_easy_getinfo(s->c->h, CURLINFO_RESPONSE_CODE, &code);
    if (code < 200 || code > 299) {
        corral_buf_append(&s->r->body, p, len);
        return len;
    }
    int pb = s->c->pb ? corral__codec_stream(s->c->h, &s->pending, p, len, s->line, s->ctx) : 0;
    if (pb) {
        s->stopped = pb < 0;
        return pb < 0 ? 0 : len;
    }
    corral_buf_append(&s->pending, p, len);
    size_t start = 0;
    for (size_t i = 0; i < s->pending.len; i++) {
        if (s->pending.p[i] != '\n')
            continue;
        if (s->line(s->ctx, s->pending.p + start, i - start) != 0) {
            s->stopped = true;
            return 0; /* stops the transfer */
        }
        start = i + 1;
    }
    memmove(s->pending.p, s->pending.p + start, s->pending.len - start);
    s->pending.len -= start;
    s->pending.p[s->pending.len] = '\0';
    return len;
}

int corral_client_stream(corral_client_t *c, const char *path,
                         int (*line)(void *ctx, const char *text, size_t len), void *ctx,
                         corral_client_resp_t *r)
{
    stream_t s = {c, r, line, ctx, {NULL, 0, 0}, false};
    corral_buf_init(&s.pending);
    struct curl_slist *h = prepare(c, "GET", path, NULL, r);
    curl_easy_setopt(c->h, CURLOPT_WRITEFUNCTION, stream_cb);
    curl_easy_setopt(c->h, CURLOPT_WRITEDATA, &s);
    int rc = perform(c, r, h);
    corral__codec_body(&r->body);
    if (!s.stopped && s.pending.len && r->code >= 200 && r->code <= 299 &&
        !corral__codec_is_pb(c->h))
        line(ctx, s.pending.p, s.pending.len);
    if (s.stopped)
        r->error[0] = '\0';
    corral_buf_fini(&s.pending);
    return rc;
}

void corral_client_error(const corral_client_resp_t *r, char *reason, size_t rlen, char *out,
                         size_t len)
{
    reason[0] = '\0';
    corral_arena_t a;
    corral_arena_init(&a);
    corral_val_t *v = NULL;
    if (r->body.len && corral_json_parse(&a, r->body.p, r->body.len, &v, NULL) == 0 && v &&
        v->kind == CORRAL_VAL_MAP && corral_val_get_str(v, "message")) {
        snprintf(out, len, "%s", corral_val_get_str(v, "message"));
        const char *rs = corral_val_get_str(v, "reason");
        snprintf(reason, rlen, "%s", rs ? rs : "");
    } else if (r->body.len) {
        size_t n = r->body.len;
        while (n && (r->body.p[n - 1] == '\n' || r->body.p[n - 1] == ' '))
            n--;
        snprintf(out, len, "%.*s", (int)n, r->body.p);
    } else {
        snprintf(out, len, "%s", r->error[0] ? r->error : "no response");
    }
    corral_arena_fini(&a);
}
