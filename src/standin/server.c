/*
 * The stand-in's HTTP server: one libevent loop that owns every connection,
 * the decode-step timer, the GPU load timer and the drain. Requests are
 * framed by corral_http_parse_request (bounded head, fuzzed) and bodies of
 * at most CORRAL_STANDIN_MAX_BODY; a connection answers one request at a
 * time (pipelined ones wait in its input buffer). A completion request
 * becomes a sequence of the batch (batch.c); every decode step writes each
 * streaming sequence's token as one HTTP chunk at once, with TCP_NODELAY,
 * so a client sees tokens as they are produced. A client that goes away
 * takes its sequence out of the batch.
 *
 * Drain: a stop (SIGTERM, SIGINT, corral_standin_stop) makes /health answer
 * 503 and every response close its connection; after drain_window the
 * listener closes and idle connections with it; the loop ends when the last
 * connection is gone, or at drain_timeout.
 */
#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <event2/thread.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "corral/arena.h"
#include "corral/http.h"
#include "corral/metrics.h"
#include "corral/net.h"
#include "standin/standin_int.h"

#define IDLE_TIMEOUT_S 120 /* a connection that sends nothing (head, body, next request) */
#define LOAD_PERIOD_MS 200

enum { ST_HEAD, ST_BODY, ST_BUSY, ST_CLOSING };

typedef struct conn conn_t;

struct conn {
    corral_standin_t *s;
    struct bufferevent *bev;
    conn_t *prev, *next;
    int state;
    bool close_after; /* close once this response is written */
    bool chunked;     /* the streaming response uses chunked framing */
    bool in_process;  /* conn_process is on the stack (pipelined requests loop there) */
    corral_arena_t arena;
    corral_http_request_t http;
    corral_buf_t body;
    corral_http_chunked_t chunk;
    /* The completion being answered (ST_BUSY). */
    corral__si_req_t req;
    corral__si_seq_t seq;
    char id[48];
    int64_t t_arrive, t_first; /* monotonic ns */
    corral_buf_t text;         /* the reply so far (non-streaming) */
};

struct corral_standin {
    corral_standin_opts_t o;
    char *model_name;
    struct event_base *base;
    struct evconnlistener *listener;
    int port;
    struct event *step_ev, *load_ev, *stop_ev, *window_ev, *timeout_ev;
    struct event *sig_ev[2];
    bool stepping, draining;
    conn_t *conns;
    int nconns;
    corral__si_batch_t batch;
    uint64_t next_id;
    uint64_t bytes, files;
    int64_t created;
    corral_metrics_t *m;
    corral_metric_t *running, *waiting, *cache, *prompt_tokens, *gen_tokens, *success;
    corral_metric_t *ttft, *e2e, *tpot, *queue_time;
};

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void logf_(const corral_standin_t *s, const char *fmt, ...) CORRAL_PRINTF(2, 3);
static void logf_(const corral_standin_t *s, const char *fmt, ...)
{
    if (s->o.quiet)
        return;
    va_list ap;
    va_start(ap, fmt);
    fputs("standin-llm: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static struct timeval tv_of(int64_t ns)
{
    return (struct timeval){.tv_sec = ns / 1000000000, .tv_usec = (ns % 1000000000) / 1000};
}

/* --- metrics -------------------------------------------------------------------------- */

static void metrics_init(corral_standin_t *s)
{
    static const char *const lm[] = {"model_name", NULL};
    static const char *const lf[] = {"model_name", "finished_reason", NULL};
    /* vLLM's bucket bounds for these histograms. */
    static const double ttft_b[] = {0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1,
                                    0.25,  0.5,   0.75, 1.0,  2.5,  5.0,  7.5,  10.0};
    static const double e2e_b[] = {0.3,  0.5,  0.8,  1.0,  1.5,  2.0,  2.5, 5.0,
                                   10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0};
    static const double tpot_b[] = {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2,
                                    0.3,  0.4,   0.5,  0.75,  1.0, 2.5};
    corral_metrics_t *m = corral_metrics_new();
    s->m = m;
    s->running = corral_metrics_gauge(m, "vllm:num_requests_running",
                                      "Number of requests currently running on GPU.", lm);
    s->waiting = corral_metrics_gauge(m, "vllm:num_requests_waiting",
                                      "Number of requests waiting to be processed.", lm);
    s->cache = corral_metrics_gauge(m, "vllm:gpu_cache_usage_perc",
                                    "GPU KV-cache usage. 1 means 100 percent usage "
                                    "(stand-in: running / max-num-seqs).",
                                    lm);
    s->prompt_tokens = corral_metrics_counter(m, "vllm:prompt_tokens_total",
                                              "Number of prefill tokens processed.", lm);
    s->gen_tokens = corral_metrics_counter(m, "vllm:generation_tokens_total",
                                           "Number of generation tokens processed.", lm);
    s->success = corral_metrics_counter(m, "vllm:request_success_total",
                                        "Count of successfully processed requests.", lf);
    s->ttft = corral_metrics_histogram(m, "vllm:time_to_first_token_seconds",
                                       "Histogram of time to first token in seconds.", lm, ttft_b,
                                       CORRAL_ARRAY_LEN(ttft_b));
    s->tpot = corral_metrics_histogram(m, "vllm:time_per_output_token_seconds",
                                       "Histogram of time per output token in seconds.", lm, tpot_b,
                                       CORRAL_ARRAY_LEN(tpot_b));
    s->e2e = corral_metrics_histogram(m, "vllm:e2e_request_latency_seconds",
                                      "Histogram of end to end request latency in seconds.", lm,
                                      e2e_b, CORRAL_ARRAY_LEN(e2e_b));
    s->queue_time =
        corral_metrics_histogram(m, "vllm:request_queue_time_seconds",
                                 "Histogram of time spent in WAITING phase for request.", lm, e2e_b,
                                 CORRAL_ARRAY_LEN(e2e_b));
    const char *v[] = {s->model_name};
    corral_metric_set(s->running, v, 0);
    corral_metric_set(s->waiting, v, 0);
    corral_metric_set(s->cache, v, 0);
    corral_metric_add(s->prompt_tokens, v, 0);
    corral_metric_add(s->gen_tokens, v, 0);
}

static double load_fraction(const corral_standin_t *s)
{
    return (double)s->batch.running.n / (double)s->batch.max_running;
}

static void metrics_refresh(corral_standin_t *s)
{
    const char *v[] = {s->model_name};
    corral_metric_set(s->running, v, s->batch.running.n);
    corral_metric_set(s->waiting, v, s->batch.waiting.n);
    corral_metric_set(s->cache, v, load_fraction(s));
}

/* --- connections ------------------------------------------------------------------------ */

static void conn_process(conn_t *c);
static void check_drained(corral_standin_t *s);

static void conn_free(conn_t *c)
{
    corral_standin_t *s = c->s;
    if (c->seq.state)
        corral__si_batch_remove(&s->batch, &c->seq);
    if (c->prev)
        c->prev->next = c->next;
    else
        s->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    s->nconns--;
    bufferevent_free(c->bev);
    corral_arena_fini(&c->arena);
    corral_buf_fini(&c->body);
    corral_buf_fini(&c->text);
    corral_free(c);
    check_drained(s);
}

static void set_read_timeout(conn_t *c, bool on)
{
    struct timeval tv = {IDLE_TIMEOUT_S, 0};
    bufferevent_set_timeouts(c->bev, on ? &tv : NULL, NULL);
}

/* The status line and headers; body_len < 0: a streamed body. */
static void put_head(conn_t *c, int code, const char *ctype, ssize_t body_len)
{
    corral_standin_t *s = c->s;
    struct evbuffer *out = bufferevent_get_output(c->bev);
    if (!c->http.keep_alive || s->draining)
        c->close_after = true;
    evbuffer_add_printf(out, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\n", code,
                        corral_http_reason(code), ctype);
    if (body_len >= 0)
        evbuffer_add_printf(out, "Content-Length: %zd\r\n", body_len);
    else if (c->http.minor >= 1)
        evbuffer_add_printf(out, "Transfer-Encoding: chunked\r\nCache-Control: no-cache\r\n");
    else
        c->close_after = true; /* HTTP/1.0: the body ends when the connection does */
    if (s->o.pod_name)
        evbuffer_add_printf(out, "X-Corral-Pod: %s\r\n", s->o.pod_name);
    evbuffer_add_printf(out, "X-Corral-Model: %s\r\n%s\r\n", s->model_name,
                        c->close_after ? "Connection: close\r\n" : "");
    c->chunked = body_len < 0 && c->http.minor >= 1;
}

/* The response is written: next request, or close once the bytes are out. */
static void finish_response(conn_t *c)
{
    corral_arena_reset(&c->arena);
    memset(&c->http, 0, sizeof(c->http));
    corral_buf_reset(&c->body);
    corral_buf_reset(&c->text);
    memset(&c->chunk, 0, sizeof(c->chunk));
    if (c->close_after) {
        c->state = ST_CLOSING;
        if (!c->in_process && evbuffer_get_length(bufferevent_get_output(c->bev)) == 0)
            conn_free(c);
        return;
    }
    c->state = ST_HEAD;
    set_read_timeout(c, true);
    conn_process(c);
}

static void reply(conn_t *c, int code, const char *ctype, const char *body, size_t len)
{
    put_head(c, code, ctype, (ssize_t)len);
    evbuffer_add(bufferevent_get_output(c->bev), body, len);
    finish_response(c);
}

static void reply_error(conn_t *c, int code, const char *msg)
{
    corral_buf_t b;
    corral_buf_init(&b);
    corral__si_encode_error(&b, code, msg);
    reply(c, code, "application/json", corral_buf_str(&b), b.len);
    corral_buf_fini(&b);
}

/* An error found while framing: the rest of the input cannot be trusted. */
static void frame_error(conn_t *c, int code, const char *msg)
{
    c->http.keep_alive = false;
    c->state = ST_BUSY;
    reply_error(c, code, msg);
}

static void write_chunk(conn_t *c, const char *data, size_t len)
{
    struct evbuffer *out = bufferevent_get_output(c->bev);
    if (c->chunked)
        evbuffer_add_printf(out, "%zx\r\n", len);
    evbuffer_add(out, data, len);
    if (c->chunked)
        evbuffer_add(out, "\r\n", 2);
}

/* --- completions ------------------------------------------------------------------------ */

static void step_cb(evutil_socket_t fd, short what, void *arg);

static void start_stepping(corral_standin_t *s)
{
    if (s->stepping)
        return;
    struct timeval tv = tv_of(s->o.token_ns);
    event_add(s->step_ev, &tv);
    s->stepping = true;
}

static void resp_of(const conn_t *c, corral__si_resp_t *r)
{
    r->req = &c->req;
    r->id = c->id;
    r->created = time(NULL);
    r->model = c->s->model_name;
}

static void finish_completion(conn_t *c, int64_t now)
{
    corral_standin_t *s = c->s;
    const char *v[] = {s->model_name};
    const char *vf[] = {s->model_name, "length"};
    int n = c->seq.generated;
    corral_metric_add(s->success, vf, 1);
    corral_metric_observe(s->e2e, v, (double)(now - c->t_arrive) / 1e9);
    if (n > 1)
        corral_metric_observe(s->tpot, v, (double)(now - c->t_first) / 1e9 / (n - 1));
    c->seq.state = 0;
    corral__si_resp_t r;
    resp_of(c, &r);
    corral_buf_t b;
    corral_buf_init(&b);
    if (c->req.stream) {
        if (c->req.include_usage)
            corral__si_encode_usage(&b, &r, n);
        corral_buf_puts(&b, "data: [DONE]\n\n");
        write_chunk(c, b.p, b.len);
        if (c->chunked)
            evbuffer_add(bufferevent_get_output(c->bev), "0\r\n\r\n", 5);
        corral_buf_fini(&b);
        finish_response(c);
        return;
    }
    corral__si_encode_full(&b, &r, corral_buf_str(&c->text), n);
    reply(c, 200, "application/json", b.p, b.len);
    corral_buf_fini(&b);
}

/* One token of one sequence (the batch's callback). */
static void on_token(corral__si_seq_t *seq, void *arg)
{
    int64_t now = *(const int64_t *)arg;
    conn_t *c = seq->owner;
    corral_standin_t *s = c->s;
    const char *v[] = {s->model_name};
    const char *tok = corral__si_token(c->req.seed, seq->generated - 1);
    corral_metric_add(s->gen_tokens, v, 1);
    if (seq->generated == 1) {
        c->t_first = now;
        corral_metric_observe(s->ttft, v, (double)(now - c->t_arrive) / 1e9);
        corral_metric_observe(s->queue_time, v, (double)(now - c->t_arrive) / 1e9);
    }
    bool last = seq->state == CORRAL__SI_DONE;
    if (c->req.stream) {
        corral__si_resp_t r;
        resp_of(c, &r);
        corral_buf_t b;
        corral_buf_init(&b);
        if (seq->generated == 1 && c->req.kind == CORRAL__SI_CHAT)
            corral__si_encode_chunk(&b, &r, NULL, NULL);
        corral__si_encode_chunk(&b, &r, tok, last ? "length" : NULL);
        write_chunk(c, b.p, b.len);
        corral_buf_fini(&b);
    } else {
        corral_buf_puts(&c->text, tok);
    }
    if (last)
        finish_completion(c, now);
}

static void step_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    corral_standin_t *s = arg;
    int64_t now = mono_ns();
    corral__si_batch_step(&s->batch, on_token, &now);
    if (s->batch.running.n == 0 && s->batch.waiting.n == 0) {
        event_del(s->step_ev);
        s->stepping = false;
    }
}

static void start_completion(conn_t *c, corral__si_kind_t kind)
{
    corral_standin_t *s = c->s;
    char err[256];
    int rc = corral__si_parse(c->body.p ? c->body.p : "", c->body.len, kind,
                              s->o.max_tokens_default, &c->req, err, sizeof(err));
    if (rc < 0) {
        reply_error(c, 400, err);
        return;
    }
    if (c->req.model[0] && strcmp(c->req.model, s->model_name) != 0) {
        char msg[CORRAL__SI_MAX_MODEL + 64];
        snprintf(msg, sizeof(msg), "The model `%s` does not exist.", c->req.model);
        reply_error(c, 404, msg);
        return;
    }
    const char *v[] = {s->model_name};
    corral_metric_add(s->prompt_tokens, v, c->req.prompt_tokens);
    snprintf(c->id, sizeof(c->id), "%s-%llx", kind == CORRAL__SI_CHAT ? "chatcmpl" : "cmpl",
             (unsigned long long)++s->next_id);
    c->t_arrive = mono_ns();
    c->seq = (corral__si_seq_t){.max_tokens = c->req.max_tokens, .owner = c};
    corral__si_batch_add(&s->batch, &c->seq);
    if (c->req.stream)
        put_head(c, 200, "text/event-stream; charset=utf-8", -1);
    start_stepping(s);
}

static void reply_metrics(conn_t *c)
{
    corral_standin_t *s = c->s;
    metrics_refresh(s);
    corral_buf_t b;
    corral_buf_init(&b);
    corral_metrics_render(s->m, &b);
    reply(c, 200, CORRAL_METRICS_CONTENT_TYPE, corral_buf_str(&b), b.len);
    corral_buf_fini(&b);
}

static void dispatch(conn_t *c)
{
    corral_standin_t *s = c->s;
    c->state = ST_BUSY;
    set_read_timeout(c, false);
    const char *t = c->http.target;
    size_t tl = c->http.target_len;
    const char *q = memchr(t, '?', tl);
    char *path = corral_arena_strndup(&c->arena, t, q ? (size_t)(q - t) : tl);
    bool get = c->http.method_len == 3 && !memcmp(c->http.method, "GET", 3);
    bool post = c->http.method_len == 4 && !memcmp(c->http.method, "POST", 4);
    bool is_post_path = !strcmp(path, "/v1/completions") || !strcmp(path, "/v1/chat/completions");
    bool is_get_path =
        !strcmp(path, "/health") || !strcmp(path, "/metrics") || !strcmp(path, "/v1/models");
    if ((is_post_path && !post) || (is_get_path && !get)) {
        reply_error(c, 405, "Method Not Allowed");
    } else if (!strcmp(path, "/v1/completions")) {
        start_completion(c, CORRAL__SI_COMPLETION);
    } else if (!strcmp(path, "/v1/chat/completions")) {
        start_completion(c, CORRAL__SI_CHAT);
    } else if (!strcmp(path, "/health")) {
        if (s->draining)
            reply_error(c, 503, "draining: the server is shutting down");
        else
            reply(c, 200, "text/plain", "", 0);
    } else if (!strcmp(path, "/metrics")) {
        reply_metrics(c);
    } else if (!strcmp(path, "/v1/models")) {
        corral_buf_t b;
        corral_buf_init(&b);
        corral__si_encode_models(&b, s->model_name, s->o.model_dir, s->created);
        reply(c, 200, "application/json", b.p, b.len);
        corral_buf_fini(&b);
    } else {
        reply_error(c, 404, "Not Found");
    }
}

/* --- framing --------------------------------------------------------------------------- */

static bool read_head(conn_t *c, struct evbuffer *in)
{
    size_t n = evbuffer_get_length(in);
    if (n == 0)
        return false;
    size_t look = n < CORRAL_STANDIN_MAX_HEAD + 1 ? n : CORRAL_STANDIN_MAX_HEAD + 1;
    const char *p = (const char *)evbuffer_pullup(in, (ssize_t)look);
    int rc = corral_http_parse_request(p, look, CORRAL_STANDIN_MAX_HEAD, &c->http);
    if (rc == CORRAL_EAGAIN)
        return false;
    if (rc < 0) {
        memset(&c->http, 0, sizeof(c->http));
        c->http.minor = 1;
        frame_error(c,
                    rc == CORRAL_ETOOBIG        ? 431
                    : rc == CORRAL_EUNSUPPORTED ? 501
                                                : 400,
                    rc == CORRAL_ETOOBIG ? "request head over 16 KiB or over 64 headers"
                                         : "malformed HTTP request");
        return false;
    }
    /* Keep the head in the arena: the parsed strings point into it. */
    char *head = corral_arena_strndup(&c->arena, p, (size_t)rc);
    corral_http_parse_request(head, (size_t)rc, CORRAL_STANDIN_MAX_HEAD, &c->http);
    evbuffer_drain(in, (size_t)rc);
    if (c->http.content_length > (int64_t)CORRAL_STANDIN_MAX_BODY) {
        frame_error(c, 413, "request body over the limit of 1 MiB");
        return false;
    }
    if (c->http.expect_continue && (c->http.content_length > 0 || c->http.chunked))
        evbuffer_add_printf(bufferevent_get_output(c->bev), "HTTP/1.1 100 Continue\r\n\r\n");
    c->state = ST_BODY;
    return true;
}

static bool read_body(conn_t *c, struct evbuffer *in)
{
    size_t n = evbuffer_get_length(in);
    if (c->http.chunked) {
        if (n == 0)
            return false;
        const char *p = (const char *)evbuffer_pullup(in, -1);
        size_t used = 0;
        int rc =
            corral_http_chunked_feed(&c->chunk, p, n, &used, &c->body, CORRAL_STANDIN_MAX_BODY);
        evbuffer_drain(in, used);
        if (rc == CORRAL_ETOOBIG)
            frame_error(c, 413, "request body over the limit of 1 MiB");
        else if (rc < 0)
            frame_error(c, 400, "malformed chunked request body");
        return rc == 1;
    }
    size_t want = c->http.content_length > 0 ? (size_t)c->http.content_length : 0;
    if (n < want)
        return false;
    if (want) {
        corral_buf_append(&c->body, evbuffer_pullup(in, (ssize_t)want), want);
        evbuffer_drain(in, want);
    }
    return true;
}

/* Frame and answer what the input holds. Answers never free c here: a
 * closing connection still has its response to write. */
static void conn_process(conn_t *c)
{
    if (c->in_process)
        return; /* an answer given from inside dispatch: the loop below goes on */
    c->in_process = true;
    while (c->state == ST_HEAD || c->state == ST_BODY) {
        struct evbuffer *in = bufferevent_get_input(c->bev);
        if (c->state == ST_HEAD && !read_head(c, in))
            break;
        if (c->state != ST_BODY || !read_body(c, in))
            break;
        dispatch(c);
    }
    c->in_process = false;
}

static void read_cb(struct bufferevent *bev, void *arg)
{
    (void)bev;
    conn_t *c = arg;
    if (c->state == ST_HEAD || c->state == ST_BODY)
        conn_process(c);
}

static void write_cb(struct bufferevent *bev, void *arg)
{
    conn_t *c = arg;
    if (c->state == ST_CLOSING && evbuffer_get_length(bufferevent_get_output(bev)) == 0)
        conn_free(c);
}

static void event_cb(struct bufferevent *bev, short what, void *arg)
{
    (void)bev;
    conn_t *c = arg;
    if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR | BEV_EVENT_TIMEOUT))
        conn_free(c);
}

static void accept_cb(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int salen,
                      void *arg)
{
    (void)l;
    (void)sa;
    (void)salen;
    corral_standin_t *s = arg;
    if (s->nconns >= s->o.max_conns) {
        static const char busy[] = "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n"
                                   "Connection: close\r\n\r\n";
        ssize_t w = write(fd, busy, sizeof(busy) - 1);
        (void)w;
        close(fd);
        return;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    conn_t *c = corral_calloc(1, sizeof(*c));
    c->s = s;
    c->bev = bufferevent_socket_new(s->base, fd, BEV_OPT_CLOSE_ON_FREE);
    if (!c->bev) {
        close(fd);
        corral_free(c);
        return;
    }
    corral_arena_init(&c->arena);
    corral_buf_init(&c->body);
    corral_buf_init(&c->text);
    c->next = s->conns;
    if (s->conns)
        s->conns->prev = c;
    s->conns = c;
    s->nconns++;
    bufferevent_setcb(c->bev, read_cb, write_cb, event_cb, c);
    /* Stop reading past one request's worth: the bound on buffered input. */
    bufferevent_setwatermark(c->bev, EV_READ, 0, CORRAL_STANDIN_MAX_HEAD + CORRAL_STANDIN_MAX_BODY);
    set_read_timeout(c, true);
    bufferevent_enable(c->bev, EV_READ | EV_WRITE);
}

/* --- GPU load, drain ----------------------------------------------------------------------- */

static void load_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    corral_standin_t *s = arg;
    if (corral__si_write_load(s->o.gpu_load_file, 100.0 * load_fraction(s)) < 0)
        logf_(s, "cannot write the GPU load file %s: %s", s->o.gpu_load_file, strerror(errno));
}

static void check_drained(corral_standin_t *s)
{
    if (s->draining && !s->listener && s->nconns == 0)
        event_base_loopbreak(s->base);
}

static void window_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    corral_standin_t *s = arg;
    if (s->listener) {
        evconnlistener_free(s->listener);
        s->listener = NULL;
    }
    logf_(s, "no longer accepting; %d request(s) running, %d waiting", s->batch.running.n,
          s->batch.waiting.n);
    conn_t *next;
    for (conn_t *c = s->conns; c; c = next) {
        next = c->next;
        if (c->state == ST_HEAD && evbuffer_get_length(bufferevent_get_input(c->bev)) == 0)
            conn_free(c); /* idle keep-alive connection */
        else
            c->close_after = true;
    }
    check_drained(s);
}

static void timeout_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    corral_standin_t *s = arg;
    logf_(s, "drain timeout: abandoning %d request(s)", s->batch.running.n + s->batch.waiting.n);
    event_base_loopbreak(s->base);
}

static void stop_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    corral_standin_t *s = arg;
    if (s->draining)
        return;
    s->draining = true;
    logf_(s, "stopping: draining %d request(s) in flight", s->batch.running.n + s->batch.waiting.n);
    struct timeval w = tv_of(s->o.drain_window_ns), t = tv_of(s->o.drain_timeout_ns);
    event_add(s->window_ev, &w);
    event_add(s->timeout_ev, &t);
}

/* --- lifecycle ----------------------------------------------------------------------------- */

void corral_standin_opts_init(corral_standin_opts_t *o)
{
    *o = (corral_standin_opts_t){
        .host = "127.0.0.1",
        .port = 8000,
        .token_ns = 20 * 1000000LL,
        .max_num_seqs = 256,
        .max_tokens_default = 16,
        .drain_window_ns = 1000000000LL,
        .drain_timeout_ns = 30 * 1000000000LL,
        .max_conns = 4096,
    };
}

static pthread_once_t evthread_once = PTHREAD_ONCE_INIT;

static void evthread_init(void)
{
    evthread_use_pthreads();
    signal(SIGPIPE, SIG_IGN);
}

static char *default_model_name(const char *dir)
{
    if (!dir || !dir[0])
        return corral_strdup("standin");
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/')
        n--;
    const char *b = dir;
    for (size_t i = 0; i < n; i++)
        if (dir[i] == '/' && i + 1 < n)
            b = dir + i + 1;
    return corral_strndup(b, (size_t)(dir + n - b));
}

/* Read the model and wait out the simulated load time. */
static int load_model(corral_standin_t *s, char *err, size_t errlen)
{
    if (!s->o.model_dir)
        return 0;
    int64_t t0 = mono_ns();
    int rc = corral__si_read_model(s->o.model_dir, &s->bytes, &s->files, err, errlen);
    if (rc < 0)
        return rc;
    double gib = (double)s->bytes / (1024.0 * 1024.0 * 1024.0);
    int64_t extra = (int64_t)(s->o.load_ms_per_gib * gib * 1e6);
    logf_(s, "read %llu bytes in %llu files from %s in %.3f s; simulated load %.3f s",
          (unsigned long long)s->bytes, (unsigned long long)s->files, s->o.model_dir,
          (double)(mono_ns() - t0) / 1e9, (double)extra / 1e9);
    struct timespec ts = {.tv_sec = extra / 1000000000, .tv_nsec = extra % 1000000000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
    return 0;
}

static int setup_loop(corral_standin_t *s, char *err, size_t errlen)
{
    char addr[300];
    bool v6 = strchr(s->o.host, ':') != NULL;
    snprintf(addr, sizeof(addr), v6 ? "[%s]:%d" : "%s:%d", s->o.host, s->o.port);
    int fd = corral_net_listen(addr, 1024, &s->port, "standin-llm", err, errlen);
    if (fd < 0)
        return CORRAL_EIO;
    s->base = event_base_new();
    s->listener =
        s->base ? evconnlistener_new(s->base, accept_cb, s, LEV_OPT_CLOSE_ON_FREE, -1, fd) : NULL;
    if (!s->listener) {
        close(fd);
        snprintf(err, errlen, "standin-llm: cannot start the event loop");
        return CORRAL_EIO;
    }
    s->step_ev = event_new(s->base, -1, EV_PERSIST, step_cb, s);
    s->stop_ev = event_new(s->base, -1, 0, stop_cb, s);
    s->window_ev = evtimer_new(s->base, window_cb, s);
    s->timeout_ev = evtimer_new(s->base, timeout_cb, s);
    if (s->o.gpu_load_file) {
        struct timeval tv = {0, (suseconds_t)LOAD_PERIOD_MS * 1000};
        s->load_ev = event_new(s->base, -1, EV_PERSIST, load_cb, s);
        event_add(s->load_ev, &tv);
        load_cb(-1, 0, s);
    }
    if (s->o.handle_signals) {
        s->sig_ev[0] = evsignal_new(s->base, SIGTERM, stop_cb, s);
        s->sig_ev[1] = evsignal_new(s->base, SIGINT, stop_cb, s);
        event_add(s->sig_ev[0], NULL);
        event_add(s->sig_ev[1], NULL);
    }
    return 0;
}

int corral_standin_new(const corral_standin_opts_t *o, corral_standin_t **out, char *err,
                       size_t errlen)
{
    *out = NULL;
    pthread_once(&evthread_once, evthread_init);
    corral_standin_t *s = corral_calloc(1, sizeof(*s));
    s->o = *o;
    if (!s->o.host || !s->o.host[0])
        s->o.host = "127.0.0.1";
    if (s->o.max_conns < 1)
        s->o.max_conns = 1;
    if (s->o.max_tokens_default < 1 || s->o.max_tokens_default > CORRAL_STANDIN_MAX_TOKENS)
        s->o.max_tokens_default = 16;
    s->model_name = o->served_model_name && o->served_model_name[0]
                        ? corral_strdup(o->served_model_name)
                        : default_model_name(o->model_dir);
    s->created = time(NULL);
    corral__si_batch_init(&s->batch, o->max_num_seqs);
    metrics_init(s);
    int rc = load_model(s, err, errlen);
    if (rc == 0)
        rc = setup_loop(s, err, errlen);
    if (rc < 0) {
        corral_standin_free(s);
        return rc;
    }
    logf_(s, "serving %s on %s:%d (a stand-in, not vLLM: %d sequences at once, %.1f ms per token)",
          s->model_name, s->o.host, s->port, s->batch.max_running, (double)s->o.token_ns / 1e6);
    *out = s;
    return 0;
}

int corral_standin_port(const corral_standin_t *s)
{
    return s->port;
}

void corral_standin_loaded(const corral_standin_t *s, uint64_t *bytes, uint64_t *files)
{
    *bytes = s->bytes;
    *files = s->files;
}

int corral_standin_run(corral_standin_t *s)
{
    event_base_dispatch(s->base);
    if (s->o.gpu_load_file)
        corral__si_write_load(s->o.gpu_load_file, 0);
    logf_(s, "stopped");
    return 0;
}

void corral_standin_stop(corral_standin_t *s)
{
    event_active(s->stop_ev, EV_TIMEOUT, 0);
}

void corral_standin_free(corral_standin_t *s)
{
    if (!s)
        return;
    while (s->conns)
        conn_free(s->conns);
    if (s->listener)
        evconnlistener_free(s->listener);
    struct event *evs[] = {s->step_ev,    s->load_ev,   s->stop_ev,  s->window_ev,
                           s->timeout_ev, s->sig_ev[0], s->sig_ev[1]};
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(evs); i++)
        if (evs[i])
            event_free(evs[i]);
    if (s->base)
        event_base_free(s->base);
    corral_metrics_free(s->m);
    corral_free(s->model_name);
    corral_free(s);
}
