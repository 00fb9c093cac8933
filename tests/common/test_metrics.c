/* Metrics: the text exposition of counters, gauges and histograms (names,
 * escaping, cumulative buckets), the series bound, snapshot gauges, collect
 * callbacks, and the metrics server answering /metrics, /healthz, pages,
 * 404, 405 and keep-alive over a real socket. */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "corral/common.h"
#include "corral/metrics.h"

static char *render(corral_metrics_t *m)
{
    corral_buf_t b;
    corral_buf_init(&b);
    corral_metrics_render(m, &b);
    return corral_buf_steal(&b);
}

Test(metrics, counter_and_gauge_text)
{
    corral_metrics_t *m = corral_metrics_new();
    corral_metric_t *c = corral_metrics_counter(m, "corral_things_total", "Things done.",
                                                (const char *const[]){"queue", "kind", NULL});
    corral_metric_t *g =
        corral_metrics_gauge(m, "corral_level", "A level\nwith \\ a newline.", NULL);
    corral_metric_add(c, (const char *const[]){"q1", "a"}, 2);
    corral_metric_add(c, (const char *const[]){"q1", "a"}, 3);
    corral_metric_add(c, (const char *const[]){"we\"ird\\\n", NULL}, 1);
    corral_metric_add(c, (const char *const[]){"q1", "a"}, -1); /* ignored: counters only rise */
    corral_metric_set(g, NULL, 0.25);
    char *t = render(m);
    cr_assert(strstr(t, "# HELP corral_things_total Things done.\n"
                        "# TYPE corral_things_total counter\n"
                        "corral_things_total{queue=\"q1\",kind=\"a\"} 5\n"
                        "corral_things_total{queue=\"we\\\"ird\\\\\\n\",kind=\"\"} 1\n"),
              "%s", t);
    cr_assert(strstr(t, "# HELP corral_level A level\\nwith \\\\ a newline.\n"
                        "# TYPE corral_level gauge\ncorral_level 0.25\n"),
              "%s", t);
    double v = 0;
    cr_assert(corral_metric_get(c, (const char *const[]){"q1", "a"}, &v));
    cr_assert_eq(v, 5);
    cr_assert_not(corral_metric_get(c, (const char *const[]){"q2", "a"}, &v));
    corral_free(t);
    corral_metrics_free(m);
}

Test(metrics, histogram_buckets_are_cumulative)
{
    corral_metrics_t *m = corral_metrics_new();
    double b[3];
    cr_assert_eq(corral_metrics_exp_buckets(0.001, 10, 3, b), 3);
    corral_metric_t *h = corral_metrics_histogram(m, "corral_op_seconds", "Op time.",
                                                  (const char *const[]){"op", NULL}, b, 3);
    const char *op[] = {"bind"};
    corral_metric_observe(h, op, 0.0005);
    corral_metric_observe(h, op, 0.001); /* on a bound: counts in that bucket (le) */
    corral_metric_observe(h, op, 0.05);
    corral_metric_observe(h, op, 7);
    char *t = render(m);
    cr_assert(strstr(t, "corral_op_seconds_bucket{op=\"bind\",le=\"0.001\"} 2\n"
                        "corral_op_seconds_bucket{op=\"bind\",le=\"0.01\"} 2\n"
                        "corral_op_seconds_bucket{op=\"bind\",le=\"0.1\"} 3\n"
                        "corral_op_seconds_bucket{op=\"bind\",le=\"+Inf\"} 4\n"
                        "corral_op_seconds_sum{op=\"bind\"} 7.0515\n"
                        "corral_op_seconds_count{op=\"bind\"} 4\n"),
              "%s", t);
    corral_free(t);
    corral_metrics_free(m);
}

Test(metrics, series_are_bounded_and_clear_empties_a_family)
{
    corral_metrics_t *m = corral_metrics_new();
    corral_metric_t *g =
        corral_metrics_gauge(m, "corral_pending", "Pending.", (const char *const[]){"pod", NULL});
    char name[32];
    for (int i = 0; i < CORRAL_METRICS_MAX_SERIES + 5; i++) {
        snprintf(name, sizeof(name), "p%d", i);
        corral_metric_set(g, (const char *const[]){name}, 1);
    }
    double v = 0;
    cr_assert(corral_metric_get(g, (const char *const[]){"p0"}, &v));
    cr_assert_not(corral_metric_get(g, (const char *const[]){"p10004"}, &v));
    char *t = render(m);
    cr_assert(strstr(t, "corral_metrics_dropped_series_total{metric=\"corral_pending\"} 5\n"),
              "%.300s", t);
    corral_free(t);
    corral_metric_clear(g);
    cr_assert_not(corral_metric_get(g, (const char *const[]){"p0"}, &v));
    corral_metric_set(g, (const char *const[]){"p10004"}, 2);
    cr_assert(corral_metric_get(g, (const char *const[]){"p10004"}, &v));
    cr_assert_eq(v, 2);
    corral_metrics_free(m);
}

/* A refill keeps every series visible until end, then drops those not set. */
Test(metrics, refill_replaces_a_snapshot_without_a_gap)
{
    corral_metrics_t *m = corral_metrics_new();
    corral_metric_t *g =
        corral_metrics_gauge(m, "corral_pending", "Pending.", (const char *const[]){"queue", NULL});
    corral_metric_set(g, (const char *const[]){"a"}, 1);
    corral_metric_set(g, (const char *const[]){"b"}, 2);
    corral_metric_set(g, (const char *const[]){"c"}, 3);
    corral_metric_refill_begin(g);
    corral_metric_set(g, (const char *const[]){"c"}, 30);
    double v = 0;
    cr_assert(corral_metric_get(g, (const char *const[]){"a"}, &v), "a stays during a refill");
    corral_metric_set(g, (const char *const[]){"d"}, 4);
    corral_metric_refill_end(g);
    cr_assert_not(corral_metric_get(g, (const char *const[]){"a"}, &v));
    cr_assert_not(corral_metric_get(g, (const char *const[]){"b"}, &v));
    cr_assert(corral_metric_get(g, (const char *const[]){"c"}, &v) && v == 30);
    cr_assert(corral_metric_get(g, (const char *const[]){"d"}, &v) && v == 4);
    char *t = render(m);
    cr_assert(strstr(t, "corral_pending{queue=\"c\"} 30\ncorral_pending{queue=\"d\"} 4\n"), "%s",
              t);
    corral_free(t);
    corral_metric_set(g, (const char *const[]){"e"}, 5); /* found by the new index */
    corral_metric_set(g, (const char *const[]){"d"}, 40);
    cr_assert(corral_metric_get(g, (const char *const[]){"d"}, &v) && v == 40);
    corral_metrics_free(m);
}

static void collect(corral_metrics_t *m, void *arg)
{
    (void)m;
    int *calls = arg;
    (*calls)++;
}

Test(metrics, collect_runs_at_each_render)
{
    corral_metrics_t *m = corral_metrics_new();
    int calls = 0;
    corral_metrics_on_collect(m, collect, &calls);
    corral_free(render(m));
    corral_free(render(m));
    cr_assert_eq(calls, 2);
    corral_metrics_free(m);
}

/* --- the server --------------------------------------------------------------------- */

static const char *page(corral_buf_t *out, void *arg)
{
    corral_buf_puts(out, (const char *)arg);
    return "application/json";
}

static int dial(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    cr_assert_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    return fd;
}

/* Send req, read until the answer's body (Content-Length) is complete. */
static void ask(int fd, const char *req, char *out, size_t cap)
{
    cr_assert_eq(write(fd, req, strlen(req)), (ssize_t)strlen(req));
    size_t n = 0;
    for (;;) {
        ssize_t k = read(fd, out + n, cap - 1 - n);
        cr_assert(k > 0, "connection closed early");
        n += (size_t)k;
        out[n] = '\0';
        const char *end = strstr(out, "\r\n\r\n");
        const char *cl = strstr(out, "Content-Length: ");
        if (end && cl && n - (size_t)(end + 4 - out) >= strtoul(cl + 16, NULL, 10))
            return;
    }
}

Test(metrics, server_answers_and_keeps_connections)
{
    corral_metrics_t *m = corral_metrics_new();
    corral_metric_t *c = corral_metrics_counter(m, "corral_x_total", "X.", NULL);
    corral_metric_add(c, NULL, 7);
    corral_metrics_page_t pages[] = {{"/stats", page, "{\"a\":1}"}};
    corral_metrics_server_t *s = NULL;
    char err[256];
    int port = 0;
    cr_assert_eq(corral_metrics_serve("127.0.0.1:0", m, pages, 1, &port, &s, err, sizeof(err)), 0,
                 "%s", err);
    cr_assert(port > 0);
    int fd = dial(port);
    char buf[8192];
    ask(fd, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", buf, sizeof(buf));
    cr_assert(strstr(buf, "HTTP/1.1 200 OK\r\n"), "%s", buf);
    cr_assert(strstr(buf, "Content-Type: " CORRAL_METRICS_CONTENT_TYPE), "%s", buf);
    cr_assert(strstr(buf, "\ncorral_x_total 7\n"), "%s", buf);
    ask(fd, "GET /stats?x=1 HTTP/1.1\r\nHost: x\r\n\r\n", buf, sizeof(buf)); /* same connection */
    cr_assert(strstr(buf, "application/json") && strstr(buf, "{\"a\":1}"), "%s", buf);
    ask(fd, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", buf, sizeof(buf));
    cr_assert(strstr(buf, "200 OK") && strstr(buf, "\r\n\r\nok"), "%s", buf);
    ask(fd, "GET /nope HTTP/1.1\r\nHost: x\r\n\r\n", buf, sizeof(buf));
    cr_assert(strstr(buf, "HTTP/1.1 404 "), "%s", buf);
    ask(fd, "DELETE /metrics HTTP/1.1\r\nHost: x\r\n\r\n", buf, sizeof(buf));
    cr_assert(strstr(buf, "HTTP/1.1 405 "), "%s", buf);
    close(fd);
    fd = dial(port);
    ask(fd, "GARBAGE\r\n\r\n", buf, sizeof(buf));
    cr_assert(strstr(buf, "HTTP/1.1 400 "), "%s", buf);
    close(fd);
    corral_metrics_server_stop(s);
    corral_metrics_free(m);
}

/* Pipelined requests are answered one after another, in order, each once
 * the answer before it has gone (a client that never reads holds one). */
Test(metrics, server_answers_pipelined_requests_in_order)
{
    corral_metrics_page_t pages[] = {{"/a", page, "first"}, {"/b", page, "second"}};
    corral_metrics_server_t *s = NULL;
    char err[256];
    int port = 0;
    cr_assert_eq(corral_metrics_serve("127.0.0.1:0", NULL, pages, 2, &port, &s, err, sizeof(err)),
                 0, "%s", err);
    int fd = dial(port);
    const char *req = "GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n"
                      "GET /a HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    cr_assert_eq(write(fd, req, strlen(req)), (ssize_t)strlen(req));
    char buf[8192];
    size_t n = 0;
    ssize_t k;
    while (n < sizeof(buf) - 1 && (k = read(fd, buf + n, sizeof(buf) - 1 - n)) > 0)
        n += (size_t)k; /* until the server closes after the third */
    buf[n] = '\0';
    const char *a = strstr(buf, "\r\n\r\nfirst");
    const char *b = a ? strstr(a, "\r\n\r\nsecond") : NULL;
    const char *c = b ? strstr(b, "\r\n\r\nfirst") : NULL;
    cr_assert(a && b && c, "%s", buf);
    cr_assert(strstr(c - 200 > buf ? c - 200 : buf, "Connection: close"), "%s", buf);
    close(fd);
    corral_metrics_server_stop(s);
}

Test(metrics, server_refuses_a_bad_address)
{
    corral_metrics_server_t *s = NULL;
    char err[256];
    cr_assert_lt(corral_metrics_serve("nohost", NULL, NULL, 0, NULL, &s, err, sizeof(err)), 0);
    cr_assert(strstr(err, "HOST:PORT"), "%s", err);
    cr_assert_null(s);
}
