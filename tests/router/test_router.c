/* The router: request and response heads (bounds, smuggling refusals),
 * the chunked decoder across every split, route matching by path, Host and
 * tag, the weighted split's exactness, least outstanding, and the event
 * loop over real sockets: the queue bound at zero and its release when a
 * replica appears, and which failed requests are retried. */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "corral/common.h"
#include "corral/informer.h"
#include "corral/router.h"
#include "router/router_int.h"
#include "router/router_loop.h"

/* --- heads ---------------------------------------------------------------------------------- */

Test(router_http, request_head)
{
    static const char req[] =
        "GET /serving/ns/s/v1/models?x=1 HTTP/1.1\r\nHost: s.ns.example.com"
        "\r\nX-A:  b \r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\nhello";
    corral__head_t h;
    int n = corral__http_parse_request(req, strlen(req), &h);
    cr_assert_eq(n, (int)strlen(req) - 5);
    cr_assert_eq(h.mlen, 3);
    cr_assert_eq(h.tlen, strlen("/serving/ns/s/v1/models?x=1"));
    cr_assert_eq(h.minor, 1);
    cr_assert_eq(h.content_length, 5);
    cr_assert(h.expect_continue);
    cr_assert_eq(h.nhdrs, 4);
    cr_assert_eq(h.hdrs[1].vlen, 1); /* blanks trimmed */
    cr_assert(h.host && h.host->vlen == strlen("s.ns.example.com"));
    for (size_t k = 0; k < strlen(req) - 5; k++) /* every prefix: more bytes needed */
        cr_assert_eq(corral__http_parse_request(req, k, &h), 0, "prefix %zu", k);
}

Test(router_http, request_refusals)
{
    corral__head_t h;
    static const struct {
        const char *s;
        int want;
    } cases[] = {
        {"GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n",
         -400},
        {"GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", -400},
        {"GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n", -501},
        {"GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, chunked\r\n\r\n", -501},
        {"GET / HTTP/1.1\r\nHost : a\r\n\r\n", -400},
        {"GET / HTTP/1.1\nHost: a\n\n", -400},
        {"GET / HTTP/1.1\r\n\r\n", -400}, /* no Host */
        {"GET / HTTP/2.0\r\nHost: a\r\n\r\n", -505},
        {"GET  / HTTP/1.1\r\nHost: a\r\n\r\n", -400},
        {"GET / HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n", -400},
        {"GET / HTTP/1.0\r\n\r\n", 18},
    };
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(cases); i++)
        cr_assert_eq(corral__http_parse_request(cases[i].s, strlen(cases[i].s), &h), cases[i].want,
                     "case %zu", i);
    cr_assert(h.conn_close); /* 1.0 without keep-alive */
}

Test(router_http, request_bounds)
{
    corral_buf_t b;
    corral_buf_init(&b);
    corral_buf_puts(&b, "GET / HTTP/1.1\r\nHost: a\r\n");
    for (int i = 0; i < CORRAL__HTTP_MAX_HEADERS; i++)
        corral_buf_printf(&b, "X-%d: v\r\n", i);
    corral_buf_puts(&b, "\r\n");
    corral__head_t h;
    cr_assert_eq(corral__http_parse_request(b.p, b.len, &h), -431);
    corral_buf_reset(&b);
    corral_buf_puts(&b, "GET / HTTP/1.1\r\nHost: a\r\nX-Big: ");
    while (b.len < CORRAL__HTTP_MAX_HEAD + 10)
        corral_buf_puts(&b, "aaaaaaaaaaaaaaaa");
    cr_assert_eq(corral__http_parse_request(b.p, b.len, &h), -431);
    corral_buf_reset(&b);
    corral_buf_puts(&b, "GET /");
    while (b.len < CORRAL__HTTP_MAX_TARGET + 100)
        corral_buf_puts(&b, "aaaaaaaaaaaaaaaa");
    cr_assert_eq(corral__http_parse_request(b.p, b.len, &h), -414);
    corral_buf_fini(&b);
}

Test(router_http, response_head)
{
    static const char r[] =
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n";
    corral__head_t h;
    cr_assert_eq(corral__http_parse_response(r, strlen(r), &h), (int)strlen(r));
    cr_assert_eq(h.status, 200);
    cr_assert(h.chunked && h.conn_close);
    cr_assert_eq(corral__http_parse_response("HTTP/1.1 20x OK\r\n\r\n", 19, &h), -502);
    cr_assert_eq(corral__http_parse_response("HTTP/1.1 100\r\n\r\n", 16, &h), 16);
    cr_assert_eq(h.status, 100);
}

/* --- chunked ---------------------------------------------------------------------------------- */

static void collect_span(void *arg, const char *p, size_t n)
{
    corral_buf_append(arg, p, n);
}

Test(router_http, chunked_every_split)
{
    static const char body[] =
        "5;ext=1\r\nhello\r\n1\r\n \r\nA\r\n0123456789\r\n0\r\nX-T: 1\r\n\r\nNEXT";
    size_t blen = strlen(body) - 4;
    for (size_t cut = 0; cut <= blen; cut++) {
        corral__chunked_t c = {0};
        corral_buf_t out;
        corral_buf_init(&out);
        ssize_t a = corral__chunked_feed(&c, body, cut, collect_span, &out);
        cr_assert_eq(a, (ssize_t)cut);
        ssize_t b = corral__chunked_feed(&c, body + cut, strlen(body) - cut, collect_span, &out);
        cr_assert_eq((size_t)a + (size_t)b, blen, "cut %zu", cut);
        cr_assert(corral__chunked_done(&c));
        cr_assert_str_eq(corral_buf_str(&out), "hello 0123456789");
        corral_buf_fini(&out);
    }
    static const char *const bad[] = {"x\r\n", "5\r\nhelloX", "1\nA\r\n", "fffffffffffffffff\r\n",
                                      "0\r\nbad\n"};
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(bad); i++) {
        corral__chunked_t c = {0};
        cr_assert_eq(corral__chunked_feed(&c, bad[i], strlen(bad[i]), NULL, NULL), -1, "bad %zu",
                     i);
    }
}

/* --- routes -------------------------------------------------------------------------------------
 */

static corral_arena_t arena;

static corral_obj_t *obj(const char *json)
{
    corral_obj_t *o = NULL;
    char err[256];
    cr_assert_eq(corral_obj_from_json(&arena, json, strlen(json), &o, err, sizeof(err)), 0, "%s",
                 err);
    return o;
}

static corral_obj_t *isvc(const char *ns, const char *name, const char *traffic)
{
    char *j = corral_arena_printf(
        &arena,
        "{\"apiVersion\":\"serving.kserve.io/v1beta1\",\"kind\":\"InferenceService\","
        "\"metadata\":{\"name\":\"%s\",\"namespace\":\"%s\"},\"spec\":{\"predictor\":"
        "{\"containers\":[{\"name\":\"m\",\"image\":\"x\"}]}},\"status\":{\"components\":"
        "{\"predictor\":{\"traffic\":%s}}}}",
        name, ns, traffic);
    return obj(j);
}

static corral_obj_t *pod(const char *ns, const char *name, const char *rev, const char *ip,
                         int port, const char *ready, const char *extra_meta)
{
    char *j = corral_arena_printf(
        &arena,
        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\",\"namespace\":"
        "\"%s\",\"labels\":{\"corral.dev/revision\":\"%s\"}%s},\"spec\":{\"containers\":[{"
        "\"name\":\"m\",\"image\":\"x\",\"ports\":[{\"containerPort\":%d}]}]},\"status\":{"
        "\"phase\":\"Running\",\"podIP\":\"%s\",\"conditions\":[{\"type\":\"Ready\",\"status\":"
        "\"%s\"}]}}",
        name, ns, rev, extra_meta, port, ip, ready);
    return obj(j);
}

static void routes_init(void)
{
    corral_arena_init(&arena);
}

static void routes_fini(void)
{
    corral_arena_fini(&arena);
}

TestSuite(router_routes, .init = routes_init, .fini = routes_fini);

Test(router_routes, table_and_match)
{
    const corral_obj_t *is[] = {
        isvc("ns", "s",
             "[{\"revisionName\":\"s-predictor-00001\",\"percent\":90,\"tag\":\"prev\"},"
             "{\"revisionName\":\"s-predictor-00002\",\"percent\":10,\"tag\":\"latest\","
             "\"latestRevision\":true}]"),
        isvc("ns", "latest-x", "[]"),
    };
    const corral_obj_t *ps[] = {
        pod("ns", "a", "s-predictor-00001", "127.0.0.5", 8000, "True", ""),
        pod("ns", "b", "s-predictor-00002", "127.0.0.6", 9000, "False", ""),
        pod("ns", "c", "s-predictor-00002", "127.0.0.7", 9000, "True",
            ",\"deletionTimestamp\":\"2024-01-01T00:00:00Z\""),
        pod("other", "d", "s-predictor-00001", "127.0.0.8", 9000, "True", ""),
    };
    corral__rt_table_t *t = corral__rt_build(is, 2, ps, 4);
    cr_assert_eq(t->nsvcs, 2);
    const corral__rt_svc_t *s = corral__rt_find(t, "ns", 2, "s", 1);
    cr_assert(s && s->nrevs == 2 && s->has_traffic);
    cr_assert_eq(s->revs[0].percent, 90);
    cr_assert_eq(s->revs[0].nready, 1);
    cr_assert_str_eq(s->revs[0].ready[0].addr, "127.0.0.5");
    cr_assert_eq(s->revs[0].ready[0].port, 8000);
    cr_assert_eq(s->revs[1].nready, 0);    /* b not Ready, c deleting */
    cr_assert_eq(s->revs[1].nstarting, 1); /* b is probed while requests wait */
    cr_assert_eq(corral__rt_tag_rev(s, "latest", 6), &s->revs[1]);
    cr_assert_eq(corral__rt_rev_named(s, "s-predictor-00001", 17), &s->revs[0]);

    corral__route_req_t rr;
    static const char p1[] = "/serving/ns/s/v1/completions";
    cr_assert_eq(corral__route(t, p1, strlen(p1), "h", 1, &rr), s);
    cr_assert_eq(rr.strip, strlen("/serving/ns/s"));
    static const char p2[] = "/serving/ns/s?x=1";
    cr_assert_eq(corral__route(t, p2, strlen(p2), NULL, 0, &rr), s);
    cr_assert_eq(rr.strip, strlen("/serving/ns/s"));
    static const char h1[] = "s.ns.example.com:8080";
    cr_assert_eq(corral__route(t, "/", 1, h1, strlen(h1), &rr), s);
    cr_assert_eq(rr.strip, 0);
    cr_assert_null(rr.tag);
    cr_assert_eq(corral__route(t, "/", 1, "s.ns", 4, &rr), s);
    static const char h2[] = "latest-s.ns.example.com";
    cr_assert_eq(corral__route(t, "/", 1, h2, strlen(h2), &rr), s);
    cr_assert_str_eq(rr.tag, "latest");
    static const char h3[] = "prev-s.ns";
    cr_assert_eq(corral__route(t, "/", 1, h3, strlen(h3), &rr), s);
    cr_assert_str_eq(rr.tag, "prev");
    /* a service whose own name starts with latest- is itself */
    static const char h4[] = "latest-x.ns";
    cr_assert_eq(corral__route(t, "/", 1, h4, strlen(h4), &rr), &t->svcs[1]);
    cr_assert_null(rr.tag);
    cr_assert_null(corral__route(t, "/", 1, "127.0.0.1:8080", 14, &rr));
    cr_assert_null(corral__route(t, "/", 1, "nope.ns", 7, &rr));
    cr_assert_eq(rr.svclen, 4);
    static const char p3[] = "/serving/ns/nope/x";
    cr_assert_null(corral__route(t, p3, strlen(p3), NULL, 0, &rr));
    cr_assert(rr.ns && rr.svclen == 4);
    corral__rt_free(t);
}

Test(router_routes, swrr_exact)
{
    int w[] = {90, 10};
    int64_t cw[2] = {0, 0};
    int got[2] = {0, 0};
    for (int i = 0; i < 2000; i++)
        got[corral__swrr(cw, w, 2)]++;
    cr_assert_eq(got[1], 200);
    /* every window of 100 holds exactly 10 */
    int seq[300];
    for (int i = 0; i < 300; i++)
        seq[i] = corral__swrr(cw, w, 2);
    for (int s = 0; s + 100 <= 300; s++) {
        int n = 0;
        for (int i = s; i < s + 100; i++)
            n += seq[i];
        cr_assert_eq(n, 10, "window at %d", s);
    }
    int w3[] = {50, 0, 50};
    int64_t c3[3] = {0};
    for (int i = 0; i < 10; i++)
        cr_assert_neq(corral__swrr(c3, w3, 3), 1);
    int w0[] = {0, 0};
    int64_t c0[2] = {0};
    cr_assert_eq(corral__swrr(c0, w0, 2), -1);
}

Test(router_routes, least_outstanding)
{
    uint32_t o[] = {3, 1, 1, 2};
    bool ex[] = {false, true, false, false};
    cr_assert_eq(corral__least(o, NULL, 4, 0), 1);
    cr_assert_eq(corral__least(o, NULL, 4, 2), 2); /* ties: rotation */
    cr_assert_eq(corral__least(o, ex, 4, 0), 2);
    bool all[] = {true, true, true, true};
    cr_assert_eq(corral__least(o, all, 4, 0), -1);
}

/* --- the loop over sockets -----------------------------------------------------------------------
 */

typedef struct backend {
    int fd;
    int mode; /* 0 answer "ok", 1 close after reading a request */
    int requests;
    pthread_t th;
} backend_t;

typedef struct bconn_arg {
    backend_t *b;
    int fd;
} bconn_arg_t;

/* One connection of a test replica: requests until it closes. */
static void *backend_conn(void *arg)
{
    bconn_arg_t *a = arg;
    backend_t *b = a->b;
    int c = a->fd;
    free(a);
    char buf[8192];
    size_t len = 0;
    for (;;) {
        ssize_t n = recv(c, buf + len, sizeof(buf) - 1 - len, 0);
        if (n <= 0)
            break;
        len += (size_t)n;
        buf[len] = 0;
        char *e = strstr(buf, "\r\n\r\n");
        if (!e)
            continue;
        char *cl = strcasestr(buf, "content-length: ");
        size_t body = cl ? (size_t)strtoul(cl + 16, NULL, 10) : 0;
        if (len < (size_t)(e + 4 - buf) + body)
            continue;
        __atomic_add_fetch(&b->requests, 1, __ATOMIC_SEQ_CST);
        if (b->mode == 1)
            break;
        static const char ok[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
        if (send(c, ok, strlen(ok), MSG_NOSIGNAL) < 0)
            break;
        len = 0;
    }
    close(c);
    return NULL;
}

static void *backend_main(void *arg)
{
    backend_t *b = arg;
    for (;;) {
        int c = accept(b->fd, NULL, NULL);
        if (c < 0)
            return NULL;
        bconn_arg_t *a = malloc(sizeof(*a));
        a->b = b;
        a->fd = c;
        pthread_t th;
        pthread_create(&th, NULL, backend_conn, a);
        pthread_detach(th);
    }
}

static void backend_start(backend_t *b, const char *ip, int port, int mode)
{
    b->fd = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(b->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, ip, &sa.sin_addr);
    cr_assert_eq(bind(b->fd, (struct sockaddr *)&sa, sizeof(sa)), 0, "bind %s:%d", ip, port);
    listen(b->fd, 64);
    b->mode = mode;
    pthread_create(&b->th, NULL, backend_main, b);
}

static void backend_stop(backend_t *b)
{
    shutdown(b->fd, SHUT_RDWR);
    close(b->fd);
    pthread_join(b->th, NULL);
}

static corral_router_t *rt;
static pthread_t loop_th;

static void *loop_main(void *arg)
{
    corral_router_run(arg);
    return NULL;
}

static void loop_start(int queue_limit)
{
    corral_router_opts_t o = {
        .listen = "127.0.0.1:0", .metrics_listen = "off", .queue_limit = queue_limit};
    char err[256];
    cr_assert_eq(corral_router_new(&o, &rt, err, sizeof(err)), 0, "%s", err);
    pthread_create(&loop_th, NULL, loop_main, rt);
}

static void loop_stop(void)
{
    corral_router_stop(rt);
    pthread_join(loop_th, NULL);
    corral_router_free(rt);
}

static int dial(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET,
                             .sin_port = htons((uint16_t)corral_router_port(rt))};
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    cr_assert_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    return fd;
}

/* Send req on a new connection; the status of the answer (0: none). */
static int status_of(int fd)
{
    char buf[4096];
    size_t len = 0;
    while (len < sizeof(buf) - 1) {
        ssize_t n = recv(fd, buf + len, sizeof(buf) - 1 - len, 0);
        if (n <= 0)
            break;
        len += (size_t)n;
        buf[len] = 0;
        if (strstr(buf, "\r\n\r\n"))
            break;
    }
    buf[len] = 0;
    int st = 0;
    sscanf(buf, "HTTP/1.1 %d", &st);
    return st;
}

static void publish(const corral_obj_t *const *is, size_t ni, const corral_obj_t *const *ps,
                    size_t np)
{
    corral__router_publish(rt, corral__rt_build(is, ni, ps, np));
    for (;;) { /* until the loop took it */
        pthread_mutex_lock(&rt->tmu);
        bool taken = rt->pending == NULL;
        pthread_mutex_unlock(&rt->tmu);
        if (taken)
            break;
        usleep(1000);
    }
}

/* The value of a revision's counter, read as the metrics thread does. */
static uint32_t queued_of(const char *key)
{
    uint32_t v = 0;
    pthread_mutex_lock(&rt->smu);
    for (size_t i = 0; i < rt->nrevs; i++)
        if (strcmp(rt->revs[i]->key, key) == 0)
            v = rt->revs[i]->queued;
    pthread_mutex_unlock(&rt->smu);
    return v;
}

Test(router_loop, queue_bound_and_release, .init = routes_init, .fini = routes_fini)
{
    loop_start(2);
    const corral_obj_t *is[] = {isvc("ns", "z", "[{\"revisionName\":\"z-1\",\"percent\":100}]")};
    publish(is, 1, NULL, 0);
    static const char req[] = "GET /serving/ns/z/a HTTP/1.1\r\nHost: x\r\n\r\n";
    int fds[3];
    for (int i = 0; i < 2; i++) {
        fds[i] = dial();
        send(fds[i], req, strlen(req), 0);
        while (queued_of("ns/z-1") < (uint32_t)i + 1)
            usleep(1000);
    }
    fds[2] = dial();
    send(fds[2], req, strlen(req), 0);
    cr_assert_eq(status_of(fds[2]), 503); /* over the bound at once */
    backend_t b = {0};
    backend_start(&b, "127.0.0.41", 18741, 0);
    const corral_obj_t *ps[] = {pod("ns", "z-a", "z-1", "127.0.0.41", 18741, "True", "")};
    publish(is, 1, ps, 1);
    cr_assert_eq(status_of(fds[0]), 200);
    cr_assert_eq(status_of(fds[1]), 200);
    for (int i = 0; i < 3; i++)
        close(fds[i]);
    loop_stop();
    backend_stop(&b);
}

Test(router_loop, retries_only_when_safe, .init = routes_init, .fini = routes_fini)
{
    loop_start(10);
    backend_t bad = {0}, good = {0};
    backend_start(&bad, "127.0.0.42", 18742, 1);
    backend_start(&good, "127.0.0.43", 18743, 0);
    const corral_obj_t *is[] = {isvc("ns", "r",
                                     "[{\"revisionName\":\"r-1\",\"percent\":100},"
                                     "{\"revisionName\":\"r-2\",\"percent\":0,\"tag\":\"t\"}]")};
    const corral_obj_t *ps[] = {
        pod("ns", "bad", "r-1", "127.0.0.42", 18742, "True", ""),
        pod("ns", "good", "r-1", "127.0.0.43", 18743, "True", ""),
        pod("ns", "bad2", "r-2", "127.0.0.42", 18742, "True", ""),
    };
    publish(is, 1, ps, 3);
    /* a GET that a replica drops is retried on the other */
    for (int i = 0; i < 4; i++) {
        int fd = dial();
        static const char get[] = "GET /serving/ns/r/ HTTP/1.1\r\nHost: x\r\n\r\n";
        send(fd, get, strlen(get), 0);
        cr_assert_eq(status_of(fd), 200);
        close(fd);
    }
    cr_assert_geq(bad.requests, 1);
    /* a POST whose body reached a replica is never sent again */
    int before = bad.requests;
    int fd = dial();
    static const char post[] = "POST /serving/ns/r/ HTTP/1.1\r\nHost: x\r\nKnative-Serving-Tag: t"
                               "\r\nContent-Length: 3\r\n\r\nabc";
    send(fd, post, strlen(post), 0);
    cr_assert_eq(status_of(fd), 502);
    close(fd);
    cr_assert_eq(bad.requests, before + 1);
    loop_stop();
    backend_stop(&bad);
    backend_stop(&good);
}
