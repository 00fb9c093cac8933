/* pods/log through the API server to a node agent's log server (started
 * in-process over a temporary directory): the Node's advertised address
 * and port, the client's tailLines/previous/follow passed on, the agent's
 * Status passed through, kube's errors for unscheduled pods, ambiguous
 * containers and nodes without a log endpoint, and streams released when
 * their client goes away. */
#include <sys/stat.h>

#include "agent/logserver.h"
#include "api_test.h"

static corral_agent_logserver_t *logsrv;
static int logport;

static void put(const char *rel, const char *text, const char *mode)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", api_srv.dir, rel);
    for (char *p = path + strlen(api_srv.dir) + 1; (p = strchr(p, '/')) != NULL; p++) {
        *p = '\0';
        mkdir(path, 0755);
        *p = '/';
    }
    FILE *fp = fopen(path, mode);
    cr_assert_not_null(fp, "%s", path);
    fputs(text, fp);
    fclose(fp);
}

static void node(const char *name, const char *addr, int port)
{
    char body[1024];
    snprintf(body, sizeof(body),
             "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\"},"
             "\"status\":{\"addresses\":[{\"type\":\"Hostname\",\"address\":\"%s\"},"
             "{\"type\":\"InternalIP\",\"address\":\"%s\"}],"
             "\"daemonEndpoints\":{\"kubeletEndpoint\":{\"Port\":%d}}}}",
             name, name, addr, port);
    api_resp_t r;
    API_EXPECT(&r, 201, "POST", "/api/v1/nodes", NULL, body);
    api_free(&r);
}

static void pod(const char *name, const char *nodename, const char *containers)
{
    char body[1024];
    snprintf(body, sizeof(body),
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\"},"
             "\"spec\":{%s%s%s\"containers\":[%s]}}",
             name, nodename ? "\"nodeName\":\"" : "", nodename ? nodename : "",
             nodename ? "\"," : "", containers);
    api_resp_t r;
    API_EXPECT(&r, 201, "POST", "/api/v1/namespaces/default/pods", NULL, body);
    api_free(&r);
}

#define MAIN "{\"name\":\"main\",\"image\":\"x\"}"

static void setup(void)
{
    api_start();
    char err[256] = "";
    cr_assert_eq(corral_agent_logserver_start(api_srv.dir, "127.0.0.1:0", &logport, &logsrv, err,
                                              sizeof(err)),
                 0, "%s", err);
    node("n1", "127.0.0.1", logport);
    pod("p", "n1", MAIN);
    put("logs/default_p_u1/main/0.log", "old one\nold two\n", "w");
    put("logs/default_p_u1/main/0.exit", "1\n", "w");
    put("logs/default_p_u1/main/1.log", "one\ntwo\nthree\n", "w");
}

static void teardown(void)
{
    corral_agent_logserver_stop(logsrv);
    api_stop();
}

TestSuite(logs, .init = setup, .fini = teardown, .timeout = 60);

static void expect_body(const char *path, const char *want)
{
    api_resp_t r;
    API_EXPECT(&r, 200, "GET", path, NULL, NULL);
    cr_assert_str_eq(corral_buf_str(&r.body), want, "%s", path);
    cr_assert(strstr(corral_buf_str(&r.headers), "text/plain"), "%s", corral_buf_str(&r.headers));
    api_free(&r);
}

Test(logs, plain_tail_previous_limit)
{
    expect_body("/api/v1/namespaces/default/pods/p/log", "one\ntwo\nthree\n");
    expect_body("/api/v1/namespaces/default/pods/p/log?container=main", "one\ntwo\nthree\n");
    expect_body("/api/v1/namespaces/default/pods/p/log?tailLines=1", "three\n");
    expect_body("/api/v1/namespaces/default/pods/p/log?previous=true", "old one\nold two\n");
    expect_body("/api/v1/namespaces/default/pods/p/log?previous=true&tailLines=1", "old two\n");
    expect_body("/api/v1/namespaces/default/pods/p/log?limitBytes=6", "one\ntw");
    api_resp_t r;
    API_EXPECT(&r, 400, "GET", "/api/v1/namespaces/default/pods/p/log?tailLines=x", NULL, NULL);
    api_free(&r);
}

Test(logs, the_agents_status_is_passed_through)
{
    pod("q", "n1", MAIN);
    put("logs/default_q_u2/main/0.log", "first\n", "w");
    api_resp_t r;
    API_EXPECT(&r, 400, "GET", "/api/v1/namespaces/default/pods/q/log?previous=true", NULL, NULL);
    api_status(&r, "BadRequest", 400,
               "previous terminated container \"main\" in pod \"q\" not found");
    api_free(&r);
    pod("nolog", "n1", MAIN);
    API_EXPECT(&r, 404, "GET", "/api/v1/namespaces/default/pods/nolog/log", NULL, NULL);
    api_status(&r, "NotFound", 404, "container \"main\" in pod \"nolog\" is not available");
    api_free(&r);
}

Test(logs, kube_errors)
{
    api_resp_t r;
    pod("pending", NULL, MAIN);
    API_EXPECT(&r, 400, "GET", "/api/v1/namespaces/default/pods/pending/log", NULL, NULL);
    api_status(&r, "BadRequest", 400, "container \"main\" in pod \"pending\" is waiting to start");
    api_free(&r);
    pod("two", "n1", "{\"name\":\"a\",\"image\":\"x\"},{\"name\":\"b\",\"image\":\"x\"}");
    API_EXPECT(&r, 400, "GET", "/api/v1/namespaces/default/pods/two/log", NULL, NULL);
    api_status(&r, "BadRequest", 400,
               "a container name must be specified for pod two, choose one of: [a b]");
    api_free(&r);
    API_EXPECT(&r, 400, "GET", "/api/v1/namespaces/default/pods/two/log?container=c", NULL, NULL);
    api_status(&r, "BadRequest", 400, "container c is not valid for pod two");
    api_free(&r);
    API_EXPECT(&r, 404, "GET", "/api/v1/namespaces/default/pods/none/log", NULL, NULL);
    api_free(&r);
}

Test(logs, nodes_without_a_reachable_agent)
{
    api_resp_t r;
    /* No endpoint at all. */
    API_EXPECT(&r, 201, "POST", "/api/v1/nodes", NULL,
               "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"bare\"}}");
    api_free(&r);
    pod("onbare", "bare", MAIN);
    API_EXPECT(&r, 500, "GET", "/api/v1/namespaces/default/pods/onbare/log", NULL, NULL);
    api_status(&r, "InternalError", 500, "node \"bare\" advertises no agent endpoint");
    api_free(&r);
    /* A port nobody listens on: take one and close it. */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t sl = sizeof(sa);
    cr_assert_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    getsockname(fd, (struct sockaddr *)&sa, &sl);
    int dead = ntohs(sa.sin_port);
    close(fd);
    node("gone", "127.0.0.1", dead);
    pod("ongone", "gone", MAIN);
    API_EXPECT(&r, 502, "GET", "/api/v1/namespaces/default/pods/ongone/log", NULL, NULL);
    char want[128];
    snprintf(want, sizeof(want), "node \"gone\" at 127.0.0.1:%d", dead);
    api_status(&r, NULL, 502, want);
    api_free(&r);
    /* A pod on a node that does not exist. */
    pod("onghost", "ghost", MAIN);
    API_EXPECT(&r, 500, "GET", "/api/v1/namespaces/default/pods/onghost/log", NULL, NULL);
    api_status(&r, "InternalError", 500, "node \"ghost\", which does not exist");
    api_free(&r);
}

Test(logs, follow_streams_as_the_log_grows)
{
    api_watch_t *w =
        api_watch_open("/api/v1/namespaces/default/pods/p/log?follow=true&tailLines=1");
    const char *l = api_watch_next(w, 5000);
    cr_assert_not_null(l);
    cr_assert_str_eq(l, "three");
    cr_assert_eq(w->code, 200);
    put("logs/default_p_u1/main/1.log", "four\n", "a");
    l = api_watch_next(w, 5000);
    cr_assert_not_null(l);
    cr_assert_str_eq(l, "four");
    put("logs/default_p_u1/main/1.log", "five\n", "a");
    put("logs/default_p_u1/main/1.exit", "0\n", "w");
    l = api_watch_next(w, 5000);
    cr_assert_not_null(l);
    cr_assert_str_eq(l, "five");
    cr_assert_null(api_watch_next(w, 5000));
    cr_assert(w->ended, "the stream did not end when the container did");
    api_watch_close(w);
    /* The connection served its stream; the server still answers. */
    expect_body("/api/v1/namespaces/default/pods/p/log?tailLines=1", "five\n");
}

Test(logs, streams_are_released_when_clients_go)
{
    /* More streams than the limit, one after the other: each must be
     * released when its client closes. */
    for (int i = 0; i < 270; i++) {
        api_watch_t *w = api_watch_open("/api/v1/namespaces/default/pods/p/log?follow=true");
        const char *l = api_watch_next(w, 5000);
        cr_assert_not_null(l, "stream %d", i);
        cr_assert_eq(w->code, 200, "stream %d", i);
        api_watch_close(w);
    }
}
