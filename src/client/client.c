/*
 * Requests to an API server over libcurl: one easy handle per client (so
 * keep-alive and TLS sessions are reused between requests), the bearer
 * token and TLS settings of the configuration, whole responses or
 * line-by-line streams (watch events, followed logs), Warning headers
 * collected for the caller to print as kubectl does. Each request first
 * takes a token from the client's bucket (qps/burst), refreshes the
 * credential (a changed token file, an expired exec credential), and is
 * retried as client-go retries (Retry-After on 429/5xx, connection errors
 * of GETs, one more try with a new credential after a 401).
 */
#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

#include "client/codec.h"
#include "corral/client.h"
#include "corral/json.h"

struct corral_client {
    CURL *h;
    corral_client_config_t cfg;
    char *token;                    /* the bearer token now (static, file or exec) */
    corral_client_cred_t cred;      /* the exec plugin's credential, when one */
    const volatile int *abort_flag; /* see corral_client_set_abort */
    long timeout_ms;                /* corral_client_set_limits; 0: 60 s */
    size_t max_body;                /* 0: unbounded */
    bool pb;                        /* corral_client_set_accept: protobuf (codec.c) */
    /* the token file: what was read, and when */
    struct timespec tf_mtime;
    ino_t tf_ino;
    off_t tf_size;
    int64_t tf_read_us;
    /* rate limit: a token bucket */
    double qps, tokens;
    int burst;
    int64_t bucket_us;
    /* retries */
    int tries;
    long max_wait_ms;
    int64_t (*now_us)(void *ctx);
    void (*sleep_us)(void *ctx, int64_t us);
    void *clock_ctx;
    corral_client_stats_t stats;
    CURLcode last;      /* the last attempt's transfer result */
    char cred_err[256]; /* why the last credential refresh failed */
};

#define TOKEN_FILE_REREAD_US (60 * INT64_C(1000000)) /* client-go's file token cache */

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;

static void curl_init_once(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
}

corral_client_t *corral_client_new(const corral_client_config_t *cfg)
{
    pthread_once(&curl_once, curl_init_once);
    corral_client_t *c = corral_calloc(1, sizeof(*c));
    corral_client_config_copy(&c->cfg, cfg);
    c->h = curl_easy_init();
    if (!c->h) {
        corral_client_free(c);
        return NULL;
    }
    if (c->cfg.token && *c->cfg.token)
        c->token = corral_strdup(c->cfg.token);
    c->qps = cfg->qps == 0 ? CORRAL_CLIENT_DEFAULT_QPS : cfg->qps;
    c->burst = cfg->qps == 0 && cfg->burst <= 0 ? CORRAL_CLIENT_DEFAULT_BURST
                                                : (cfg->burst > 0 ? cfg->burst : 1);
    c->tokens = c->burst;
    c->tries = 10;
    c->max_wait_ms = 10000;
    if (c->cfg.token_file) { /* the token was read with the configuration */
        struct stat st;
        if (stat(c->cfg.token_file, &st) == 0) {
            c->tf_mtime = st.st_mtim;
            c->tf_ino = st.st_ino;
            c->tf_size = st.st_size;
        }
    }
    c->bucket_us = c->tf_read_us = -1;
    corral_client_set_accept(c, c->cfg.accept); /* --kube-api-content-type */
    return c;
}

void corral_client_free(corral_client_t *c)
{
    if (!c)
        return;
    if (c->h)
        curl_easy_cleanup(c->h);
    corral_client_config_fini(&c->cfg);
    corral_client_cred_fini(&c->cred);
    corral_free(c->token);
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

void corral_client_set_retry(corral_client_t *c, int tries, long max_wait_ms)
{
    c->tries = tries > 0 ? tries : 10;
    c->max_wait_ms = max_wait_ms > 0 ? max_wait_ms : 10000;
}

void corral_client_set_clock(corral_client_t *c, int64_t (*now_us)(void *ctx),
                             void (*sleep_us)(void *ctx, int64_t us), void *ctx)
{
    c->now_us = now_us;
    c->sleep_us = sleep_us;
    c->clock_ctx = ctx;
    c->bucket_us = c->tf_read_us = -1;
}

void corral_client_stats(const corral_client_t *c, corral_client_stats_t *out)
{
    *out = c->stats;
}

/* --- time, the token bucket, credentials ---------------------------------------------- */

static int64_t now_us(corral_client_t *c)
{
    if (c->now_us)
        return c->now_us(c->clock_ctx);
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* Sleep us, in slices so that the abort flag ends the wait. False when
 * aborted. */
static bool wait_us(corral_client_t *c, int64_t us)
{
    if (c->sleep_us) {
        c->sleep_us(c->clock_ctx, us);
        return !(c->abort_flag && *c->abort_flag);
    }
    while (us > 0) {
        if (c->abort_flag && *c->abort_flag)
            return false;
        int64_t step = us < 100000 ? us : 100000;
        struct timespec ts = {(time_t)(step / 1000000), (long)(step % 1000000) * 1000};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
            ;
        us -= step;
    }
    return !(c->abort_flag && *c->abort_flag);
}

/* Take a token (waiting for one as client-go's token bucket does: tokens
 * refill at qps up to burst; a request reserves one, waiting while the
 * balance is negative). False when aborted while waiting. */
static bool throttle(corral_client_t *c)
{
    if (c->qps < 0)
        return true;
    int64_t now = now_us(c);
    if (c->bucket_us >= 0) {
        c->tokens += (double)(now - c->bucket_us) * c->qps / 1e6;
        if (c->tokens > c->burst)
            c->tokens = c->burst;
    }
    c->bucket_us = now;
    c->tokens -= 1;
    if (c->tokens >= 0)
        return true;
    int64_t w = (int64_t)(-c->tokens * 1e6 / c->qps + 0.5);
    c->stats.throttled++;
    c->stats.throttled_us += w;
    return wait_us(c, w);
}

/* Re-read the token file when it changed (or a minute passed, or force). */
static void token_file_refresh(corral_client_t *c, bool force)
{
    struct stat st;
    int64_t now = now_us(c);
    if (stat(c->cfg.token_file, &st) != 0)
        return; /* keep the token we have, as client-go does */
    bool changed = st.st_mtim.tv_sec != c->tf_mtime.tv_sec ||
                   st.st_mtim.tv_nsec != c->tf_mtime.tv_nsec || st.st_ino != c->tf_ino ||
                   st.st_size != c->tf_size;
    if (!force && !changed && c->tf_read_us >= 0 && now - c->tf_read_us < TOKEN_FILE_REREAD_US)
        return;
    if (c->tf_read_us < 0 && !changed && !force) {
        c->tf_read_us = now;
        return;
    }
    FILE *fp = fopen(c->cfg.token_file, "re");
    if (!fp)
        return;
    char buf[16384];
    size_t n = fread(buf, 1, sizeof(buf) - 1, fp);
    fclose(fp);
    buf[n] = '\0';
    buf[strcspn(buf, "\r\n")] = '\0';
    c->tf_mtime = st.st_mtim;
    c->tf_ino = st.st_ino;
    c->tf_size = st.st_size;
    c->tf_read_us = now;
    if (!buf[0])
        return;
    corral_free(c->token);
    c->token = corral_strdup(buf);
}

/* The credential for the next request. failed: the credential a 401 came
 * with (run the plugin again), else NULL. Returns 0, or CORRAL_EIO with
 * c->cred_err set when the exec plugin cannot give one. */
static int refresh_credential(corral_client_t *c, const char *failed)
{
    if (c->cfg.exec) {
        corral_client_cred_t cr;
        int rc =
            corral_client_exec_credential(&c->cfg, failed, &cr, c->cred_err, sizeof(c->cred_err));
        if (rc)
            return rc;
        if (failed || !c->cred.token || !cr.token || strcmp(c->cred.token, cr.token) != 0 ||
            c->cred.expiry_us != cr.expiry_us)
            c->stats.credential_runs++;
        corral_client_cred_fini(&c->cred);
        c->cred = cr;
        corral_free(c->token);
        c->token = c->cred.token ? corral_strdup(c->cred.token) : NULL;
        return 0;
    }
    if (c->cfg.token_file)
        token_file_refresh(c, failed != NULL);
    return 0;
}

/* What a request was sent with, to tell after a 401 whether a refresh
 * changed anything. */
static char *credential_id(const corral_client_t *c)
{
    if (c->token)
        return corral_strdup(c->token);
    return c->cred.cert_data ? corral_strdup(c->cred.cert_data) : NULL;
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
    r->retry_after_s = -1;
}

/* Forget a failed attempt's answer before the next. */
static void resp_reset(corral_client_resp_t *r)
{
    r->code = 0;
    r->error[0] = '\0';
    r->retry_after_s = -1;
    corral_buf_reset(&r->body);
    corral_buf_reset(&r->warnings);
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
    if (c->cred.cert_data && c->cred.key_data) { /* the exec plugin's */
        blob(c->h, CURLOPT_SSLCERT_BLOB, c->cred.cert_data, strlen(c->cred.cert_data));
        blob(c->h, CURLOPT_SSLKEY_BLOB, c->cred.key_data, strlen(c->cred.key_data));
        return;
    }
    if (g->cert_data)
        blob(c->h, CURLOPT_SSLCERT_BLOB, g->cert_data, g->cert_data_len);
    else if (g->cert_file)
        curl_easy_setopt(c->h, CURLOPT_SSLCERT, g->cert_file);
    if (g->key_data)
        blob(c->h, CURLOPT_SSLKEY_BLOB, g->key_data, g->key_data_len);
    else if (g->key_file)
        curl_easy_setopt(c->h, CURLOPT_SSLKEY, g->key_file);
}

/* "Warning: 299 - "text"" headers: keep the text. "Retry-After: N":
 * keep N (client-go honours the seconds form only). */
static size_t header_cb(char *p, size_t size, size_t n, void *ud)
{
    corral_client_resp_t *r = ud;
    size_t len = size * n;
    if (len > 5 && strncmp(p, "HTTP/", 5) == 0)
        r->retry_after_s = -1; /* a new response (after a 100 or a redirect) */
    if (len > 12 && strncasecmp(p, "retry-after:", 12) == 0) {
        char v[32];
        snprintf(v, sizeof(v), "%.*s", (int)(len - 12 < 31 ? len - 12 : 31), p + 12);
        char *end = NULL;
        long secs = strtol(v, &end, 10);
        while (end && (*end == ' ' || *end == '\r' || *end == '\n'))
            end++;
        if (end && end != v && !*end && secs >= 0)
            r->retry_after_s = secs;
    }
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
    if (c->token && *c->token) {
        size_t n = strlen(c->token) + 32;
        char *auth = corral_malloc(n);
        snprintf(auth, n, "Authorization: Bearer %s", c->token);
        h = curl_slist_append(h, auth);
        corral_free(auth);
    }
    curl_easy_setopt(c->h, CURLOPT_HTTPHEADER, h);
    return h;
}

/*
 * After an attempt: how long to wait before the next one, or -1 not to
 * retry. As client-go: a 429 or 5xx with Retry-After is retried whatever
 * the method (the server says it did not act), for the seconds it names
 * (capped); a connection reset or closed before any answer (client-go's
 * IsConnectionReset / IsProbableEOF) only for GET, after a second; a
 * refused connection, a timeout and anything else are the caller's answer.
 */
static int64_t retry_wait(const corral_client_t *c, const char *method, int rc,
                          const corral_client_resp_t *r, int attempt)
{
    if (attempt >= c->tries || (c->abort_flag && *c->abort_flag))
        return -1;
    int64_t cap = (int64_t)c->max_wait_ms * 1000, w;
    if (r->code == 429 || r->code >= 500) {
        if (r->retry_after_s < 0)
            return -1;
        w = (int64_t)r->retry_after_s * 1000000;
    } else if (rc == CORRAL_EIO && r->code == 0 && strcmp(method, "GET") == 0 &&
               (c->last == CURLE_GOT_NOTHING || c->last == CURLE_RECV_ERROR ||
                c->last == CURLE_SEND_ERROR || c->last == CURLE_PARTIAL_FILE)) {
        w = 1000000;
    } else {
        return -1;
    }
    return w < cap ? w : cap;
}

/* Before an attempt: a token from the bucket and a current credential.
 * Returns 0, or CORRAL_EIO with r->error set. */
static int before_attempt(corral_client_t *c, corral_client_resp_t *r)
{
    c->last = CURLE_OK;
    if (!throttle(c)) {
        snprintf(r->error, sizeof(r->error), "aborted");
        return CORRAL_EIO;
    }
    c->stats.requests++;
    if (refresh_credential(c, NULL) != 0) {
        snprintf(r->error, sizeof(r->error), "%s", c->cred_err);
        return CORRAL_EIO;
    }
    return 0;
}

/* After an attempt: true when it is to be tried again (waited already). */
static bool again(corral_client_t *c, const char *method, int rc, corral_client_resp_t *r,
                  int attempt, bool *auth_retried)
{
    if (r->code == 401 && !*auth_retried && (c->cfg.exec || c->cfg.token_file)) {
        /* A rotated token or an expired credential: refresh, and try once
         * more when that changed what is sent. */
        *auth_retried = true;
        char *was = credential_id(c);
        if (was && refresh_credential(c, was) == 0) {
            char *now = credential_id(c);
            bool changed = !now || strcmp(now, was) != 0;
            corral_free(now);
            if (changed && attempt < c->tries) {
                corral_free(was);
                c->stats.retries++;
                return true;
            }
        }
        corral_free(was);
        return false;
    }
    int64_t w = retry_wait(c, method, rc, r, attempt);
    if (w < 0 || !wait_us(c, w))
        return false;
    c->stats.retries++;
    return true;
}

static int perform(corral_client_t *c, corral_client_resp_t *r, struct curl_slist *h)
{
    CURLcode rc = curl_easy_perform(c->h);
    c->last = rc;
    curl_slist_free_all(h);
    curl_easy_getinfo(c->h, CURLINFO_RESPONSE_CODE, &r->code);
    if (rc != CURLE_OK && rc != CURLE_WRITE_ERROR) {
        if (!r->error[0])
            snprintf(r->error, sizeof(r->error), "%s", curl_easy_strerror(rc));
        return r->code ? 0 : CORRAL_EIO;
    }
    return 0;
}

static int request_once(corral_client_t *c, const char *method, const char *path, const char *ctype,
                        const char *body, size_t len, corral_client_resp_t *r)
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

int corral_client_request(corral_client_t *c, const char *method, const char *path,
                          const char *ctype, const char *body, size_t len, corral_client_resp_t *r)
{
    bool auth_retried = false;
    for (int attempt = 1;; attempt++) {
        resp_reset(r);
        int rc = before_attempt(c, r);
        if (rc == 0)
            rc = request_once(c, method, path, ctype, body, len, r);
        if (rc == CORRAL_ETOOBIG || !again(c, method, rc, r, attempt, &auth_retried))
            return rc;
    }
}

typedef struct stream {
    corral_client_t *c;
    corral_client_resp_t *r;
    int (*line)(void *ctx, const char *text, size_t len);
    void *ctx;
    corral_buf_t pending;
    bool stopped;
    bool delivered; /* a 2xx body began: no retry */
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
    s->delivered = true;
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

static int stream_once(corral_client_t *c, const char *path, stream_t *s, corral_client_resp_t *r)
{
    struct curl_slist *h = prepare(c, "GET", path, NULL, r);
    curl_easy_setopt(c->h, CURLOPT_WRITEFUNCTION, stream_cb);
    curl_easy_setopt(c->h, CURLOPT_WRITEDATA, s);
    return perform(c, r, h);
}

int corral_client_stream(corral_client_t *c, const char *path,
                         int (*line)(void *ctx, const char *text, size_t len), void *ctx,
                         corral_client_resp_t *r)
{
    stream_t s = {c, r, line, ctx, {NULL, 0, 0}, false, false};
    corral_buf_init(&s.pending);
    bool auth_retried = false;
    int rc;
    for (int attempt = 1;; attempt++) {
        resp_reset(r);
        rc = before_attempt(c, r);
        if (rc == 0)
            rc = stream_once(c, path, &s, r);
        /* Retried only while nothing reached the caller: the watch is only
         * limited and retried as it opens. */
        if (s.delivered || s.stopped || !again(c, "GET", rc, r, attempt, &auth_retried))
            break;
    }
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
