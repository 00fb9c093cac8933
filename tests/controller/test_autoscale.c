/* The autoscaler's collectors and decisions against fixture servers: the
 * router's counters (concurrency, rps, queue at zero, in-flight per pod for
 * the victim), the agents' DCGM text through the node proxy, a replica's
 * vLLM queue, and a Prometheus query answer; plus the parsers on their own.
 * The collector thread sleeps (tick 1 h); the tests run each pass with an
 * explicit time, so nothing depends on the wall clock. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "controller/ascollect.h"
#include "controller/autoscale.h"
#include "corral/metrics.h"

#define S 1000000000LL

TestSuite(autoscale, .timeout = 30);

/* --- fixtures ---------------------------------------------------------------------- */

static pthread_mutex_t fx_mu = PTHREAD_MUTEX_INITIALIZER;
static char fx_router[4096], fx_node[4096], fx_pod[1024], fx_prom[1024];

static const char *fx_page(corral_buf_t *out, void *arg)
{
    pthread_mutex_lock(&fx_mu);
    corral_buf_puts(out, (const char *)arg);
    pthread_mutex_unlock(&fx_mu);
    return arg == (void *)fx_prom ? "application/json" : NULL;
}

static void fx_set(char *dst, size_t len, const char *text)
{
    pthread_mutex_lock(&fx_mu);
    snprintf(dst, len, "%s", text);
    pthread_mutex_unlock(&fx_mu);
}

static void router_counters(double arrivals, double conc, double queued)
{
    char t[2048];
    snprintf(t, sizeof(t),
             "# TYPE corral_router_request_arrivals_total counter\n"
             "corral_router_request_arrivals_total{namespace=\"ml\",service=\"s\","
             "revision=\"s-predictor-00001\"} %g\n"
             "corral_router_concurrency_seconds_total{namespace=\"ml\",service=\"s\","
             "revision=\"s-predictor-00001\"} %g\n"
             "corral_router_queued_requests{namespace=\"ml\",service=\"s\","
             "revision=\"s-predictor-00001\"} 0\n"
             "corral_router_queued_requests{namespace=\"ml\",service=\"z\","
             "revision=\"z-predictor-00001\"} %g\n"
             "corral_router_pod_in_flight_requests{namespace=\"ml\",pod=\"a\"} 3\n"
             "corral_router_pod_in_flight_requests{namespace=\"ml\",pod=\"b\"} 0\n"
             "corral_router_pod_in_flight_requests{namespace=\"ml\",pod=\"c\"} 1\n",
             arrivals, conc, queued);
    fx_set(fx_router, sizeof(fx_router), t);
}

static int notified;

static void on_notify(void *arg)
{
    (*(int *)arg)++;
}

typedef struct fx {
    corral_metrics_server_t *srv, *pod_srv;
    int port, pod_port;
    corral_client_config_t cfg;
    corral_metrics_t *reg;
    corral__autoscaler_t *as;
} fx_t;

static void fx_start(fx_t *f, bool router)
{
    memset(f, 0, sizeof(*f));
    router_counters(0, 0, 0);
    fx_set(fx_node, sizeof(fx_node),
           "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",namespace=\"ml\",pod=\"g1\"} 80\n"
           "DCGM_FI_DEV_GPU_UTIL{gpu=\"1\",namespace=\"ml\",pod=\"g1\"} 60\n"
           "DCGM_FI_DEV_GPU_UTIL{gpu=\"2\",namespace=\"ml\",pod=\"g2\"} 40\n"
           "DCGM_FI_DEV_GPU_UTIL{gpu=\"3\",namespace=\"other\",pod=\"g2\"} 100\n"
           "DCGM_FI_DEV_GPU_UTIL{gpu=\"4\",namespace=\"\",pod=\"\"} 100\n");
    fx_set(fx_pod, sizeof(fx_pod),
           "# TYPE vllm:num_requests_waiting gauge\n"
           "vllm:num_requests_waiting{model_name=\"m\"} 4\n"
           "vllm:num_requests_running{model_name=\"m\"} 2\n"
           "vllm:gpu_cache_usage_perc{model_name=\"m\"} 0.5\n");
    fx_set(fx_prom, sizeof(fx_prom),
           "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
           "{\"metric\":{\"a\":\"1\"},\"value\":[1712345678.1,\"5\"]},"
           "{\"metric\":{\"a\":\"2\"},\"value\":[1712345678.1,\"4\"]}]}}");
    corral_metrics_page_t pages[] = {
        {"/metrics", fx_page, fx_router},
        {"/api/v1/nodes/n1/proxy/metrics", fx_page, fx_node},
        {"/api/v1/query", fx_page, fx_prom},
    };
    char err[256];
    cr_assert_eq(
        corral_metrics_serve("127.0.0.1:0", NULL, pages, 3, &f->port, &f->srv, err, sizeof(err)), 0,
        "%s", err);
    corral_metrics_page_t pod_pages[] = {{"/metrics", fx_page, fx_pod}};
    cr_assert_eq(corral_metrics_serve("127.0.0.1:0", NULL, pod_pages, 1, &f->pod_port, &f->pod_srv,
                                      err, sizeof(err)),
                 0, "%s", err);
    corral_client_config_init(&f->cfg);
    char url[64];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d", f->port);
    free(f->cfg.server);
    f->cfg.server = strdup(url);
    f->reg = corral_metrics_new();
    char rm[64];
    snprintf(rm, sizeof(rm), "127.0.0.1:%d", f->port);
    corral__as_opts_t o = {
        .cfg = &f->cfg,
        .router_metrics = router ? rm : NULL,
        .tick_ns = 3600 * S,
        .stable_window_ns = 10 * S,
        .panic_window_ns = 2 * S,
        .scale_to_zero_grace_ns = 5 * S,
        .metrics = f->reg,
        .notify = on_notify,
        .notify_arg = &notified,
    };
    notified = 0;
    cr_assert_eq(corral__as_new(&o, &f->as, err, sizeof(err)), 0, "%s", err);
}

static void fx_stop(fx_t *f)
{
    corral__as_free(f->as);
    corral_metrics_server_stop(f->srv);
    corral_metrics_server_stop(f->pod_srv);
    corral_metrics_free(f->reg);
    corral_client_config_fini(&f->cfg);
}

static corral__as_decision_t decide(fx_t *f, const corral_isvc_component_t *c, const char *svc,
                                    int32_t ready, int32_t pending, const char *const *pods,
                                    const char *const *nodes, const char *const *addrs,
                                    size_t npods, int64_t now)
{
    char rev[64];
    snprintf(rev, sizeof(rev), "%s-predictor-00001", svc);
    corral__as_input_t in = {
        .ns = "ml",
        .service = svc,
        .revision = rev,
        .comp = c,
        .ready = ready,
        .pending = pending,
        .pods = pods,
        .pod_nodes = nodes,
        .pod_addrs = addrs,
        .npods = npods,
    };
    corral__as_decision_t d;
    cr_assert_eq(corral__as_decide(f->as, &in, now, &d), 0);
    return d;
}

static corral_isvc_component_t comp(const char *metric, int32_t target)
{
    corral_isvc_component_t c = {0};
    c.present = true;
    c.scale_metric = metric;
    if (target > 0) {
        c.scale_target.set = true;
        c.scale_target.v = target;
    }
    return c;
}

static char logged[512];
static int nlogged;

static void on_log(void *arg, const char *line)
{
    (void)arg;
    if (nlogged++ == 0)
        snprintf(logged, sizeof(logged), "%s", line);
}

/* --- through the fixtures ---------------------------------------------------------- */

Test(autoscale, router_concurrency_panics_up_with_its_inputs_in_the_reason)
{
    fx_t f;
    fx_start(&f, true);
    corral_isvc_component_t c = comp("concurrency", 1); /* x 70%: 0.7 per replica */
    const char *pods[] = {"a", "b", "c"};
    corral__as_decision_t d = decide(&f, &c, "s", 1, 0, pods, NULL, NULL, 1, 0);
    cr_assert_eq(d.desired, 1, "%s", d.reason);
    corral__as_collect(f.as, 1 * S); /* the counters' baseline */
    router_counters(3, 3, 0);
    corral__as_collect(f.as, 2 * S); /* 3 request-seconds in 1 s: concurrency 3 */
    d = decide(&f, &c, "s", 1, 0, pods, NULL, NULL, 1, 2 * S);
    cr_assert_eq(d.desired, 5, "ceil(3 / 0.7): %s", d.reason);
    cr_assert(d.changed);
    cr_assert(strstr(d.reason, "concurrency 3 (stable 10s 3, panic 2s 3, target 0.7): panic"), "%s",
              d.reason);
    cr_assert(strstr(d.reason, "1 -> 5"), "%s", d.reason);
    /* The least loaded by the router's in-flight count goes first; a
     * replica not Ready before any. */
    bool ready[] = {true, true, true};
    cr_assert_eq(corral__as_victim(f.as, "ml", pods, ready, 3), 1);
    bool ready2[] = {true, true, false};
    cr_assert_eq(corral__as_victim(f.as, "ml", pods, ready2, 3), 2);
    const char *fresh[] = {"c", "x"}; /* x: never routed to, none in flight */
    cr_assert_eq(corral__as_victim(f.as, "ml", fresh, ready, 2), 1);
    /* The autoscaler's metrics. */
    corral_buf_t b;
    corral_buf_init(&b);
    corral_metrics_render(f.reg, &b);
    const char *txt = corral_buf_str(&b);
    cr_assert(strstr(txt, "corral_autoscaler_desired_replicas{namespace=\"ml\",service=\"s\","
                          "revision=\"s-predictor-00001\"} 5"),
              "%s", txt);
    cr_assert(strstr(txt, "corral_autoscaler_panic_mode{namespace=\"ml\",service=\"s\","
                          "revision=\"s-predictor-00001\"} 1"),
              "%s", txt);
    cr_assert(strstr(txt, "corral_autoscaler_scrapes_total{source=\"router\"} 2"), "%s", txt);
    corral_buf_fini(&b);
    fx_stop(&f);
}

Test(autoscale, queued_at_the_router_brings_a_revision_at_zero_to_one)
{
    fx_t f;
    fx_start(&f, true);
    corral_isvc_component_t c = comp("rps", 10);
    c.knative.initial_scale.set = true; /* starts at zero */
    corral__as_decision_t d = decide(&f, &c, "z", 0, 0, NULL, NULL, NULL, 0, 0);
    cr_assert_eq(d.desired, 0, "%s", d.reason);
    router_counters(0, 0, 2);
    corral__as_collect(f.as, 1 * S);
    cr_assert_eq(notified, 1, "the controller is woken to decide again");
    d = decide(&f, &c, "z", 0, 0, NULL, NULL, NULL, 0, 1 * S);
    cr_assert_eq(d.desired, 1, "%s", d.reason);
    cr_assert(d.changed);
    cr_assert(strstr(d.reason, "queued 2"), "%s", d.reason);
    fx_stop(&f);
}

Test(autoscale, gpu_utilization_through_the_node_proxy)
{
    fx_t f;
    fx_start(&f, false);
    corral_isvc_component_t c = comp("gpu_utilization", 50);
    const char *pods[] = {"g1", "g2", "g3"};
    const char *nodes[] = {"n1", "n1", NULL}; /* g3 pending: no node yet */
    decide(&f, &c, "g", 2, 1, pods, nodes, NULL, 3, 0);
    corral__as_collect(f.as, 1 * S);
    /* g1: mean of 80 and 60 = 70, g2: 40 (other namespaces and free GPUs
     * not counted): 110 over 50 per replica. */
    corral__as_decision_t d = decide(&f, &c, "g", 2, 1, pods, nodes, NULL, 3, 1 * S);
    cr_assert_eq(d.desired, 3, "%s", d.reason);
    cr_assert_not(d.changed, "3 replicas are there (1 pending): %s", d.reason);
    cr_assert(strstr(d.reason, "gpu_utilization 110"), "%s", d.reason);
    cr_assert(strstr(d.reason, "(1 pending)"), "%s", d.reason);
    /* The victim without router data: the least busy GPU. */
    bool ready[] = {true, true};
    cr_assert_eq(corral__as_victim(f.as, "ml", pods, ready, 2), 1);
    fx_stop(&f);
}

Test(autoscale, vllm_queue_from_the_replicas_and_a_prometheus_query)
{
    fx_t f;
    fx_start(&f, false);
    const char *names[] = {"vllm:num_requests_waiting", "vllm:num_requests_running"};
    corral_isvc_metric_t pm = {
        .type = "PodMetric",
        .metric_names = {names, 2},
        .target = {.type = "AverageValue", .average_value = {true, 2}},
    };
    corral_isvc_component_t c = comp(NULL, 0);
    c.metrics = &pm;
    c.nmetrics = 1;
    const char *pods[] = {"p1", "p2"};
    char addr[64];
    snprintf(addr, sizeof(addr), "127.0.0.1:%d", f.pod_port);
    const char *addrs[] = {addr, addr};
    decide(&f, &c, "v", 2, 0, pods, NULL, addrs, 2, 0);
    char srv[64];
    snprintf(srv, sizeof(srv), "http://127.0.0.1:%d/", f.port);
    corral_isvc_metric_t em = {
        .type = "External",
        .backend = "prometheus",
        .server_address = srv,
        .query = "sum(rate(x[1m])) by (a)",
        .target = {.type = "AverageValue", .average_value = {true, 3}},
    };
    corral_isvc_component_t ce = comp(NULL, 0);
    ce.metrics = &em;
    ce.nmetrics = 1;
    decide(&f, &ce, "e", 1, 0, NULL, NULL, NULL, 0, 0);
    corral__as_collect(f.as, 1 * S);
    /* (4 waiting + 2 running) x 2 replicas over 2 each. */
    corral__as_decision_t d = decide(&f, &c, "v", 2, 0, pods, NULL, addrs, 2, 1 * S);
    cr_assert_eq(d.desired, 6, "%s", d.reason);
    cr_assert(strstr(d.reason, "vllm:num_requests_waiting+ 12"), "%s", d.reason);
    /* 5 + 4 over 3 per replica. */
    d = decide(&f, &ce, "e", 1, 0, NULL, NULL, NULL, 0, 1 * S);
    cr_assert_eq(d.desired, 3, "%s", d.reason);
    cr_assert(strstr(d.reason, "external 9"), "%s", d.reason);
    /* A failing query: no sample, the count is kept; the error counted. */
    fx_set(fx_prom, sizeof(fx_prom),
           "{\"status\":\"error\",\"errorType\":\"bad_data\",\"error\":\"parse error\"}");
    corral__as_forget(f.as, "ml", "v-predictor-00001");
    corral__as_collect(f.as, 30 * S);
    d = decide(&f, &ce, "e", 3, 0, NULL, NULL, NULL, 0, 30 * S);
    cr_assert_eq(d.desired, 3, "%s", d.reason);
    cr_assert(strstr(d.reason, "no sample"), "%s", d.reason);
    corral_buf_t b;
    corral_buf_init(&b);
    corral_metrics_render(f.reg, &b);
    cr_assert(strstr(corral_buf_str(&b), "corral_autoscaler_scrape_errors_total{source="
                                         "\"prometheus\"} 1"),
              "%s", corral_buf_str(&b));
    cr_assert_null(strstr(corral_buf_str(&b), "v-predictor-00001"), "forgotten");
    corral_buf_fini(&b);
    fx_stop(&f);
}

Test(autoscale, unmeasured_metric_and_unreachable_router_keep_the_count)
{
    fx_t f;
    fx_start(&f, true);
    corral_isvc_component_t c = comp("cpu", 0);
    corral__as_decision_t d = decide(&f, &c, "c", 2, 0, NULL, NULL, NULL, 0, 0);
    cr_assert_eq(d.desired, 2, "%s", d.reason);
    cr_assert(strstr(d.reason, "cpu is not measured"), "%s", d.reason);
    fx_stop(&f);
    /* A router that answers nothing: no samples, so no scale to zero. */
    fx_start(&f, false);
    corral__as_opts_t o = {.router_metrics = "127.0.0.1:1",
                           .tick_ns = 3600 * S,
                           .stable_window_ns = 2 * S,
                           .scale_to_zero_grace_ns = 1,
                           .log = on_log};
    corral__autoscaler_t *as = NULL;
    char err[256];
    cr_assert_eq(corral__as_new(&o, &as, err, sizeof(err)), 0, "%s", err);
    corral__autoscaler_t *keep = f.as;
    f.as = as;
    corral_isvc_component_t cc = comp("concurrency", 1);
    decide(&f, &cc, "s", 2, 0, NULL, NULL, NULL, 0, 0);
    for (int64_t t = 1; t < 10; t++)
        corral__as_collect(as, t * S);
    d = decide(&f, &cc, "s", 2, 0, NULL, NULL, NULL, 0, 10 * S);
    cr_assert_eq(d.desired, 2, "%s", d.reason);
    /* The failure is logged with its address, not once per tick. */
    cr_assert_geq(nlogged, 1);
    cr_assert_lt(nlogged, 9, "rate-limited");
    cr_assert(strstr(logged, "autoscaler: router metrics: http://127.0.0.1:1/metrics"), "%s",
              logged);
    f.as = keep;
    corral__as_free(as);
    fx_stop(&f);
}

/* --- parsers ----------------------------------------------------------------------- */

Test(autoscale, parse_prometheus_answers)
{
    double v = -1;
    char err[256];
    const char *scalar = "{\"status\":\"success\",\"data\":{\"resultType\":\"scalar\","
                         "\"result\":[1.5,\"7.25\"]}}";
    cr_assert_eq(corral__asc_parse_prom(scalar, strlen(scalar), &v, err, sizeof(err)), 0, "%s",
                 err);
    cr_assert_float_eq(v, 7.25, 1e-9);
    const char *empty = "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\","
                        "\"result\":[]}}";
    cr_assert_eq(corral__asc_parse_prom(empty, strlen(empty), &v, err, sizeof(err)), 0);
    cr_assert_float_eq(v, 0, 1e-9);
    const char *nan = "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":"
                      "[{\"metric\":{},\"value\":[1,\"NaN\"]}]}}";
    cr_assert_eq(corral__asc_parse_prom(nan, strlen(nan), &v, err, sizeof(err)), 0);
    cr_assert_float_eq(v, 0, 1e-9);
    const char *matrix = "{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\","
                         "\"result\":[]}}";
    cr_assert_lt(corral__asc_parse_prom(matrix, strlen(matrix), &v, err, sizeof(err)), 0);
    cr_assert(strstr(err, "instant vector"), "%s", err);
    cr_assert_lt(corral__asc_parse_prom("{", 1, &v, err, sizeof(err)), 0);
    cr_assert(strstr(err, "not JSON"), "%s", err);
    const char *bad = "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":"
                      "[{\"value\":[1,2]}]}}";
    cr_assert_lt(corral__asc_parse_prom(bad, strlen(bad), &v, err, sizeof(err)), 0);
}

Test(autoscale, parse_router_bounds_its_rows)
{
    corral__asc_table_t revs, pods;
    corral__asc_table_init(&revs, 2);
    corral__asc_table_init(&pods, 8);
    const char *t = "corral_router_request_arrivals_total{namespace=\"a\",revision=\"r1\"} 1\n"
                    "corral_router_request_arrivals_total{namespace=\"a\",revision=\"r2\"} 2\n"
                    "corral_router_request_arrivals_total{namespace=\"a\",revision=\"r3\"} 3\n"
                    "corral_router_request_arrivals_total{revision=\"r4\"} 3\n"
                    "corral_router_in_flight_requests{namespace=\"a\",revision=\"r1\"} 4\n"
                    "corral_router_request_arrivals_total{namespace=\"a\",revision=\"r1\"} +Inf\n";
    char err[256];
    cr_assert_geq(corral__asc_parse_router(t, strlen(t), &revs, &pods, err, sizeof(err)), 0, "%s",
                  err);
    cr_assert_eq(revs.n, 2);
    cr_assert(revs.over);
    const double *r1 = corral__asc_table_get(&revs, "a", "r1");
    cr_assert_float_eq(r1[CORRAL__ASC_ARRIVALS], 1, 1e-9);
    cr_assert_float_eq(r1[CORRAL__ASC_IN_FLIGHT], 4, 1e-9);
    cr_assert_null(corral__asc_table_get(&revs, "a", "r3"));
    cr_assert_lt(corral__asc_parse_router("x{", 2, &revs, &pods, err, sizeof(err)), 0);
    corral__asc_table_fini(&revs);
    corral__asc_table_fini(&pods);
    char url[128];
    corral__asc_url("127.0.0.1:9091", "/metrics", url, sizeof(url));
    cr_assert_str_eq(url, "http://127.0.0.1:9091/metrics");
    corral__asc_url("http://r:1/custom", "/metrics", url, sizeof(url));
    cr_assert_str_eq(url, "http://r:1/custom");
}
