/* The API server's observability endpoints against a fake node agent (a
 * small HTTP server thread in this file serving fixed text): the node proxy
 * (/api/v1/nodes/NAME/proxy/PATH: body, status and Content-Type passed
 * through, unknown nodes, unsafe paths, RBAC nodes/proxy), the server's own
 * /metrics (the exposition's names), the promtext parser, and the built-in
 * metrics-server (CPU rates from two samples, memory, NodeMetrics and
 * PodMetrics list and get, discovery, selectors, entries of deleted pods
 * gone). */
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include "api_test.h"
#include "corral/json.h"
#include "corral/promtext.h"

/* --- a fake agent ---------------------------------------------------------------------- */

static struct {
    int lfd, port;
    pthread_t th;
    volatile bool stop;
    int scrapes;          /* /metrics/resource answers so far */
    volatile bool with_q; /* report pod q */
} agent;

#define DCGM                                                                                       \
    "# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).\n"                                        \
    "# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n"                                                          \
    "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-a\",device=\"nvidia0\",modelName=\"NVIDIA "         \
    "H100\",Hostname=\"n1\",container=\"main\",namespace=\"default\",pod=\"p\"} 85\n"

static void resource_body(corral_buf_t *b)
{
    int n = ++agent.scrapes;
    long long ts = 1700000000000LL + n * 1000LL;
    corral_buf_printf(b,
                      "# TYPE node_cpu_usage_seconds_total counter\n"
                      "node_cpu_usage_seconds_total %.3f %lld\n"
                      "node_memory_working_set_bytes 1073741824 %lld\n"
                      "container_cpu_usage_seconds_total{container=\"main\",namespace=\"default\","
                      "pod=\"p\"} %.3f %lld\n"
                      "container_memory_working_set_bytes{container=\"main\",namespace=\"default\","
                      "pod=\"p\"} 2097152 %lld\n"
                      "container_accelerator_duty_cycle{container=\"main\",namespace=\"default\","
                      "pod=\"p\",make=\"nvidia\",model=\"H100\",acc_id=\"GPU-a\"} 80 %lld\n"
                      "container_accelerator_duty_cycle{container=\"side\",namespace=\"default\","
                      "pod=\"p\",make=\"nvidia\",model=\"H100\",acc_id=\"GPU-b\"} 40 %lld\n",
                      n * 0.5, ts, ts, n * 0.25, ts, ts, ts, ts);
    if (agent.with_q)
        corral_buf_printf(
            b,
            "container_cpu_usage_seconds_total{container=\"c\",namespace=\"default\","
            "pod=\"q\"} %.3f %lld\n"
            "container_memory_working_set_bytes{container=\"c\",namespace=\"default\","
            "pod=\"q\"} 1024 %lld\n",
            n * 0.1, ts, ts);
}

static void serve_one(int fd)
{
    char head[4096];
    size_t got = 0;
    while (got < sizeof(head) - 1) {
        ssize_t k = read(fd, head + got, sizeof(head) - 1 - got);
        if (k <= 0)
            break;
        got += (size_t)k;
        head[got] = '\0';
        if (strstr(head, "\r\n\r\n"))
            break;
    }
    head[got] = '\0';
    corral_buf_t body, out;
    corral_buf_init(&body);
    corral_buf_init(&out);
    int code = 200;
    const char *ctype = "text/plain; version=0.0.4; charset=utf-8";
    if (!strncmp(head, "GET /metrics/resource ", 22))
        resource_body(&body);
    else if (!strncmp(head, "GET /metrics ", 13))
        corral_buf_puts(&body, DCGM);
    else if (!strncmp(head, "GET /healthz?", 13))
        corral_buf_append(&body, head + 4, (size_t)(strchr(head + 4, ' ') - (head + 4)));
    else {
        code = 404;
        ctype = "application/json";
        corral_buf_puts(&body, "{\"nope\":true}");
    }
    corral_buf_printf(&out, "HTTP/1.1 %d X\r\nContent-Type: %s\r\nContent-Length: %zu\r\n\r\n",
                      code, ctype, body.len);
    corral_buf_append(&out, body.p, body.len);
    ssize_t w = write(fd, out.p, out.len);
    (void)w;
    corral_buf_fini(&body);
    corral_buf_fini(&out);
}

static void *agent_main(void *arg)
{
    (void)arg;
    while (!agent.stop) {
        struct pollfd p = {agent.lfd, POLLIN, 0};
        if (poll(&p, 1, 50) <= 0)
            continue;
        int fd = accept(agent.lfd, NULL, NULL);
        if (fd < 0)
            continue;
        serve_one(fd);
        close(fd);
    }
    return NULL;
}

static void agent_start(void)
{
    memset(&agent, 0, sizeof(agent));
    agent.lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t sl = sizeof(sa);
    cr_assert_eq(bind(agent.lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    cr_assert_eq(listen(agent.lfd, 64), 0);
    getsockname(agent.lfd, (struct sockaddr *)&sa, &sl);
    agent.port = ntohs(sa.sin_port);
    pthread_create(&agent.th, NULL, agent_main, NULL);
}

static void agent_stop(void)
{
    agent.stop = true;
    pthread_join(agent.th, NULL);
    close(agent.lfd);
}

/* --- cluster objects ------------------------------------------------------------------- */

static void node(const char *name, int port, bool ready)
{
    char body[1024];
    snprintf(body, sizeof(body),
             "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\","
             "\"labels\":{\"pool\":\"a\"}},"
             "\"status\":{\"addresses\":[{\"type\":\"InternalIP\",\"address\":\"127.0.0.1\"}],"
             "\"conditions\":[{\"type\":\"Ready\",\"status\":\"%s\"}],"
             "\"daemonEndpoints\":{\"kubeletEndpoint\":{\"Port\":%d}}}}",
             name, ready ? "True" : "False", port);
    api_resp_t r;
    API_EXPECT(&r, 201, "POST", "/api/v1/nodes", NULL, body);
    api_free(&r);
}

static void pod(const char *name, const char *label)
{
    char body[1024];
    snprintf(body, sizeof(body),
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\","
             "\"labels\":{\"app\":\"%s\"}},\"spec\":{\"nodeName\":\"n1\","
             "\"containers\":[{\"name\":\"main\",\"image\":\"x\"}]}}",
             name, label);
    api_resp_t r;
    API_EXPECT(&r, 201, "POST", "/api/v1/namespaces/default/pods", NULL, body);
    api_free(&r);
}

static void fast_scrapes(corral_apiserver_opts_t *o)
{
    o->metrics_resolution_ms = 50;
}

static void setup(void)
{
    agent_start();
    api_start_with(fast_scrapes);
    node("n1", agent.port, true);
}

static void teardown(void)
{
    api_stop();
    agent_stop();
}

TestSuite(obs, .init = setup, .fini = teardown, .timeout = 60);

/* GET path until its body contains want (the scraper runs every 50 ms). */
static void wait_for(const char *path, const char *want, api_resp_t *r)
{
    for (int i = 0; i < 400; i++) {
        api_req(r, "GET", path, NULL, NULL);
        if (r->code == 200 && strstr(corral_buf_str(&r->body), want))
            return;
        api_free(r);
        usleep(10000);
    }
    cr_assert_fail("%s never contained %s", path, want);
}

Test(obs, node_proxy_passes_the_agents_answer_through)
{
    api_resp_t r;
    API_EXPECT(&r, 200, "GET", "/api/v1/nodes/n1/proxy/metrics", NULL, NULL);
    cr_assert_str_eq(corral_buf_str(&r.body), DCGM);
    cr_assert(strstr(corral_buf_str(&r.headers), "text/plain; version=0.0.4"), "%s",
              corral_buf_str(&r.headers));
    api_free(&r);
    /* The agent's status and body pass through (its /healthz answers 404). */
    API_EXPECT(&r, 404, "GET", "/api/v1/nodes/n1/proxy/healthz", NULL, NULL);
    cr_assert_str_eq(corral_buf_str(&r.body), "{\"nope\":true}");
    api_free(&r);
    char path[128];
    snprintf(path, sizeof(path), "/api/v1/nodes/n1:%d/proxy/healthz?a=1&b=x", agent.port);
    API_EXPECT(&r, 200, "GET", path, NULL, NULL);
    cr_assert_str_eq(corral_buf_str(&r.body), "/healthz?a=1&b=x");
    api_free(&r);
    /* Only the metrics pages: not the logs (pods/log has its own RBAC), not
     * another port of the node's address. */
    API_EXPECT(&r, 403, "GET", "/api/v1/nodes/n1/proxy/containerLogs/default/p/c", NULL, NULL);
    cr_assert(strstr(corral_buf_str(&r.body), "/metrics, /metrics/resource and /healthz"), "%s",
              corral_buf_str(&r.body));
    api_free(&r);
    API_EXPECT(&r, 403, "GET", "/api/v1/nodes/n1/proxy/metrics/../containerLogs/d/p/c", NULL, NULL);
    api_free(&r);
    snprintf(path, sizeof(path), "/api/v1/nodes/n1:%d/proxy/metrics", agent.port == 1 ? 2 : 1);
    API_EXPECT(&r, 403, "GET", path, NULL, NULL);
    cr_assert(strstr(corral_buf_str(&r.body), "kubelet port"), "%s", corral_buf_str(&r.body));
    api_free(&r);
    API_EXPECT(&r, 404, "GET", "/api/v1/nodes/ghost/proxy/metrics", NULL, NULL);
    api_free(&r);
    API_EXPECT(&r, 400, "GET", "/api/v1/nodes/n1/proxy/a%0d%0aHost:x", NULL, NULL);
    api_free(&r);
    API_EXPECT(&r, 400, "GET", "/api/v1/nodes/n1:99999/proxy/metrics", NULL, NULL);
    api_free(&r);
    /* A node whose agent is not there: 502 with the reason. */
    node("dead", 1, true);
    API_EXPECT(&r, 502, "GET", "/api/v1/nodes/dead/proxy/metrics", NULL, NULL);
    api_free(&r);
}

Test(obs, own_metrics_exposition)
{
    api_resp_t r;
    API_EXPECT(&r, 200, "GET", "/api/v1/nodes", NULL, NULL);
    api_free(&r);
    API_EXPECT(&r, 200, "GET", "/metrics", NULL, NULL);
    const char *m = corral_buf_str(&r.body);
    cr_assert(strstr(corral_buf_str(&r.headers), "text/plain; version=0.0.4"));
    cr_assert(strstr(m, "apiserver_request_total{verb=\"LIST\",group=\"\",version=\"v1\","
                        "resource=\"nodes\",subresource=\"\",scope=\"cluster\","
                        "component=\"apiserver\",code=\"200\"} 1"),
              "%s", m);
    cr_assert(strstr(m, "apiserver_request_total{verb=\"POST\",group=\"\",version=\"v1\","
                        "resource=\"nodes\""),
              "%s", m);
    static const char *const names[] = {
        "# TYPE apiserver_request_duration_seconds histogram",
        "apiserver_request_duration_seconds_bucket{verb=\"LIST\"",
        "# TYPE apiserver_longrunning_requests gauge",
        "corral_apiserver_open_watches 0",
        "corral_apiserver_sqlite_commit_duration_seconds_count ",
        "corral_apiserver_sqlite_commit_batch_ops_bucket",
        "corral_apiserver_store_revision ",
        "corral_apiserver_store_db_size_bytes ",
        "# TYPE corral_cluster_gpu_utilization_mean gauge",
    };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        cr_assert(strstr(m, names[i]), "no %s in\n%s", names[i], m);
    /* The exposition parses. */
    char err[128];
    cr_assert_gt(corral_promtext_parse(r.body.p, r.body.len, NULL, NULL, err, sizeof(err)), 10,
                 "%s", err);
    api_free(&r);
}

Test(obs, open_watches_are_counted)
{
    api_watch_t *w = api_watch_open("/api/v1/namespaces/default/pods?watch=1");
    api_resp_t r;
    wait_for("/metrics", "corral_apiserver_open_watches 1", &r);
    cr_assert(strstr(corral_buf_str(&r.body), "apiserver_longrunning_requests{verb=\"WATCH\","
                                              "group=\"\",version=\"v1\",resource=\"pods\""));
    api_free(&r);
    api_watch_close(w);
    wait_for("/metrics", "corral_apiserver_open_watches 0", &r);
    api_free(&r);
}

Test(obs, metrics_server_rates_from_two_samples)
{
    pod("p", "web");
    api_resp_t r;
    /* cpu grows 0.5 s per 1 s of sample time: 0.5 cores; memory 1 GiB. */
    wait_for("/apis/metrics.k8s.io/v1beta1/nodes", "\"name\":\"n1\"", &r);
    corral_val_t *v = NULL;
    corral_json_err_t je;
    cr_assert_eq(corral_json_parse(&r.a, r.body.p, r.body.len, &v, &je), 0);
    cr_assert_str_eq(api_str(v, "kind"), "NodeMetricsList");
    const corral_val_t *items = corral_val_get(v, "items");
    cr_assert_eq(items->n, 1);
    cr_assert_str_eq(api_str(items->items[0], "usage.cpu"), "500000000n");
    cr_assert_str_eq(api_str(items->items[0], "usage.memory"), "1048576Ki");
    cr_assert_str_eq(api_str(items->items[0], "window"), "1.000s");
    api_free(&r);
    API_EXPECT(&r, 200, "GET", "/apis/metrics.k8s.io/v1beta1/nodes/n1", NULL, NULL);
    cr_assert(strstr(corral_buf_str(&r.body), "\"kind\":\"NodeMetrics\""));
    api_free(&r);
    API_EXPECT(&r, 404, "GET", "/apis/metrics.k8s.io/v1beta1/nodes/ghost", NULL, NULL);
    api_free(&r);
    API_EXPECT(&r, 200, "GET", "/apis/metrics.k8s.io/v1beta1/nodes?labelSelector=pool%3Db", NULL,
               NULL);
    cr_assert(!strstr(corral_buf_str(&r.body), "n1"));
    api_free(&r);

    wait_for("/apis/metrics.k8s.io/v1beta1/namespaces/default/pods", "\"name\":\"p\"", &r);
    cr_assert(strstr(corral_buf_str(&r.body),
                     "\"containers\":[{\"name\":\"main\",\"usage\":{\"cpu\":\"250000000n\","
                     "\"memory\":\"2048Ki\"}}]"),
              "%s", corral_buf_str(&r.body));
    api_free(&r);
    API_EXPECT(&r, 200, "GET", "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/p", NULL,
               NULL);
    cr_assert(strstr(corral_buf_str(&r.body), "\"kind\":\"PodMetrics\""));
    api_free(&r);
    API_EXPECT(&r, 200, "GET", "/apis/metrics.k8s.io/v1beta1/pods?labelSelector=app%3Dweb", NULL,
               NULL);
    cr_assert(strstr(corral_buf_str(&r.body), "\"name\":\"p\""));
    api_free(&r);
    API_EXPECT(&r, 200, "GET", "/apis/metrics.k8s.io/v1beta1/pods?labelSelector=app%3Dother", NULL,
               NULL);
    cr_assert(!strstr(corral_buf_str(&r.body), "\"name\":\"p\""));
    api_free(&r);
    API_EXPECT(&r, 404, "GET", "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/q", NULL,
               NULL);
    api_free(&r);
    /* Two held GPUs at 80 and 40: the cluster mean is 60. */
    wait_for("/metrics", "corral_cluster_gpu_utilization_mean 60", &r);
    api_free(&r);
}

Test(obs, pods_that_go_away_lose_their_metrics)
{
    pod("p", "web");
    pod("q", "db");
    agent.with_q = true;
    api_resp_t r;
    wait_for("/apis/metrics.k8s.io/v1beta1/pods", "\"name\":\"q\"", &r);
    api_free(&r);
    /* Gone from the agent's report: gone from the answers. */
    agent.with_q = false;
    for (int i = 0; i < 400; i++) {
        api_req(&r, "GET", "/apis/metrics.k8s.io/v1beta1/pods", NULL, NULL);
        bool gone = !strstr(corral_buf_str(&r.body), "\"name\":\"q\"");
        api_free(&r);
        if (gone)
            break;
        usleep(10000);
    }
    API_EXPECT(&r, 404, "GET", "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/q", NULL,
               NULL);
    api_free(&r);
}

Test(obs, discovery_lists_metrics_k8s_io)
{
    api_resp_t r;
    API_EXPECT(&r, 200, "GET", "/apis", NULL, NULL);
    cr_assert(strstr(corral_buf_str(&r.body), "\"name\":\"metrics.k8s.io\""));
    api_free(&r);
    API_EXPECT(&r, 200, "GET", "/apis/metrics.k8s.io/v1beta1", NULL, NULL);
    cr_assert(strstr(corral_buf_str(&r.body), "\"kind\":\"NodeMetrics\""));
    cr_assert(strstr(corral_buf_str(&r.body), "\"name\":\"pods\",\"singularName\":\"\","
                                              "\"namespaced\":true"));
    api_free(&r);
    API_EXPECT(&r, 200, "GET", "/api/v1", NULL, NULL);
    cr_assert(strstr(corral_buf_str(&r.body), "\"name\":\"nodes/proxy\""));
    api_free(&r);
}

/* --- RBAC ------------------------------------------------------------------------------ */

static void with_tokens(corral_apiserver_opts_t *o)
{
    o->token_auth_file = api_write_file(api_srv.dir, "tokens.csv",
                                        "admin-token,admin,1,\"system:masters\"\n"
                                        "prom-token,prom,2\n"
                                        "viewer-token,viewer,3\n");
    o->metrics_resolution_ms = -1;
}

static void setup_rbac(void)
{
    agent_start();
    api_start_with(with_tokens);
    api_srv.token = "admin-token";
    node("n1", agent.port, true);
    api_resp_t r;
    static const char *const objs[] = {
        "{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"ClusterRole\",\"metadata\":"
        "{\"name\":\"scrape\"},\"rules\":[{\"apiGroups\":[\"\"],\"resources\":[\"nodes/proxy\"],"
        "\"verbs\":[\"get\"]},{\"nonResourceURLs\":[\"/metrics\"],\"verbs\":[\"get\"]}]}",
        "{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"ClusterRole\",\"metadata\":"
        "{\"name\":\"view-nodes\"},\"rules\":[{\"apiGroups\":[\"\"],\"resources\":[\"nodes\"],"
        "\"verbs\":[\"get\",\"list\"]}]}",
        "{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"ClusterRoleBinding\","
        "\"metadata\":{\"name\":\"scrape\"},\"roleRef\":{\"apiGroup\":\"rbac.authorization.k8s."
        "io\","
        "\"kind\":\"ClusterRole\",\"name\":\"scrape\"},\"subjects\":[{\"apiGroup\":"
        "\"rbac.authorization.k8s.io\",\"kind\":\"User\",\"name\":\"prom\"}]}",
        "{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"ClusterRoleBinding\","
        "\"metadata\":{\"name\":\"view\"},\"roleRef\":{\"apiGroup\":\"rbac.authorization.k8s.io\","
        "\"kind\":\"ClusterRole\",\"name\":\"view-nodes\"},\"subjects\":[{\"apiGroup\":"
        "\"rbac.authorization.k8s.io\",\"kind\":\"User\",\"name\":\"viewer\"}]}",
    };
    const char *paths[] = {"/apis/rbac.authorization.k8s.io/v1/clusterroles",
                           "/apis/rbac.authorization.k8s.io/v1/clusterroles",
                           "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
                           "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings"};
    for (size_t i = 0; i < 4; i++) {
        API_EXPECT(&r, 201, "POST", paths[i], NULL, objs[i]);
        api_free(&r);
    }
}

TestSuite(obs_rbac, .init = setup_rbac, .fini = teardown, .timeout = 60);

static long as(const char *token, const char *path)
{
    api_resp_t r;
    api_srv.token = token;
    api_req(&r, "GET", path, NULL, NULL);
    api_srv.token = "admin-token";
    long code = r.code;
    api_free(&r);
    return code;
}

Test(obs_rbac, nodes_proxy_needs_its_subresource)
{
    cr_assert_eq(as("prom-token", "/api/v1/nodes/n1/proxy/metrics"), 200);
    cr_assert_eq(as("prom-token", "/metrics"), 200);
    cr_assert_eq(as("viewer-token", "/api/v1/nodes/n1"), 200);
    cr_assert_eq(as("viewer-token", "/api/v1/nodes/n1/proxy/metrics"), 403);
    cr_assert_eq(as("viewer-token", "/metrics"), 403);
    cr_assert_eq(as(NULL, "/metrics"), 401);
}

/* --- the parser ------------------------------------------------------------------------ */

typedef struct seen {
    int n;
    double sum;
    char last_model[64];
} seen_t;

static int count(void *arg, const corral_promtext_sample_t *s)
{
    seen_t *x = arg;
    x->n++;
    if (isfinite(s->value))
        x->sum += s->value;
    const char *m = corral_promtext_label(s, "modelName");
    if (m)
        snprintf(x->last_model, sizeof(x->last_model), "%s", m);
    return 0;
}

Test(promtext, parses_and_rejects)
{
    const char *ok = "# HELP a x\n# TYPE a gauge\na 1\nb{x=\"1\",y=\"a\\\"b\\\\c\\n\",} 2.5 "
                     "1700000000000\r\n\n c{modelName=\"H 100\"} +Inf\nd NaN\n";
    seen_t s = {0};
    char err[128];
    cr_assert_eq(corral_promtext_parse(ok, strlen(ok), count, &s, err, sizeof(err)), 4, "%s", err);
    cr_assert_eq(s.n, 4);
    cr_assert_float_eq(s.sum, 3.5, 1e-9);
    cr_assert_str_eq(s.last_model, "H 100");
    static const char *const bad[] = {"a{b=\"c\" 1\n", "a{b=c} 1\n", "a 1 2 3\n",       "a\n",
                                      "1a 2\n",        "a 0x10\n",   "a{b=\"\\q\"} 1\n"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err[0] = '\0';
        cr_assert_lt(corral_promtext_parse(bad[i], strlen(bad[i]), NULL, NULL, err, sizeof(err)), 0,
                     "%s", bad[i]);
        cr_assert(strstr(err, "line 1"), "%s", err);
    }
}
