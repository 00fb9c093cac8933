/*
 * The client asking protobuf (corral_client_set_accept, src/client/codec.c)
 * against an in-process API server reads the same JSON as asking JSON: an
 * object, a list, a Status error, a CRD kind (answered in JSON), and a
 * watch's events (protobuf frames turned into JSON lines).
 */
#include "../apiserver/api_test.h"
#include "corral/client.h"
#include "corral/json.h"
#include "../common/val_assert.h"

TestSuite(codec, .init = api_start, .fini = api_stop, .timeout = 30);

static corral_client_t *client(bool pb)
{
    corral_client_config_t cfg;
    corral_client_config_init(&cfg);
    char url[64];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d", api_srv.port);
    cfg.server = corral_strdup(url);
    corral_client_t *c = corral_client_new(&cfg);
    corral_client_config_fini(&cfg);
    cr_assert_not_null(c);
    corral_client_set_accept(c, pb ? "application/vnd.kubernetes.protobuf" : "application/json");
    return c;
}

static corral_val_t *get(corral_arena_t *a, corral_client_t *c, const char *path, long code)
{
    corral_client_resp_t r;
    corral_client_resp_init(&r);
    cr_assert_eq(corral_client_request(c, "GET", path, NULL, NULL, 0, &r), 0, "%s", r.error);
    cr_assert_eq(r.code, code, "%s: %ld %s", path, r.code, corral_buf_str(&r.body));
    corral_val_t *v = NULL;
    cr_assert_eq(corral_json_parse(a, r.body.p, r.body.len, &v, NULL), 0, "%s: not JSON: %s", path,
                 corral_buf_str(&r.body));
    corral_client_resp_fini(&r);
    return v;
}

static void same(const corral_val_t *got, const corral_val_t *want, const char *what)
{
    val_assert_same(got, want, what);
}

static void post(const char *path, const char *body)
{
    api_resp_t r;
    api_req(&r, "POST", path, NULL, body);
    cr_assert_eq(r.code, 201, "%s", corral_buf_str(&r.body));
    api_free(&r);
}

Test(codec, protobuf_reads_the_same_json_as_json)
{
    post("/api/v1/namespaces/default/pods",
         "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p1\",\"labels\":{\"a\":"
         "\"1\"},\"annotations\":{\"corral.dev/gpu-ids\":\"0,1\"}},\"spec\":{\"containers\":[{"
         "\"name\":\"c\",\"image\":\"i\",\"ports\":[{\"containerPort\":80,\"name\":\"http\"}],"
         "\"readinessProbe\":{\"httpGet\":{\"port\":\"http\",\"path\":\"/\"}},\"resources\":{"
         "\"limits\":{\"nvidia.com/gpu\":\"2\",\"cpu\":\"500m\",\"memory\":\"1Gi\"}}}],"
         "\"tolerations\":[{\"key\":\"k\",\"operator\":\"Exists\",\"tolerationSeconds\":30}]}}");
    post("/api/v1/namespaces/default/configmaps",
         "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"cm\"},\"data\":{"
         "\"k\":\"v\"}}");
    post("/api/v1/nodes", "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\","
                          "\"labels\":{\"nvidia.com/gpu.product\":\"H100\"}},\"spec\":{\"taints\":"
                          "[{\"key\":\"t\",\"effect\":\"NoSchedule\"}]}}");
    post("/apis/scheduling.volcano.sh/v1beta1/queues",
         "{\"apiVersion\":\"scheduling.volcano.sh/v1beta1\",\"kind\":\"Queue\",\"metadata\":{"
         "\"name\":\"q1\"},\"spec\":{\"weight\":1}}");
    corral_client_t *pb = client(true), *js = client(false);
    corral_arena_t a;
    corral_arena_init(&a);
    static const char *const paths[] = {
        "/api/v1/namespaces/default/pods/p1",
        "/api/v1/namespaces/default/pods",
        "/api/v1/pods?limit=1",
        "/api/v1/namespaces/default/configmaps/cm",
        "/api/v1/nodes",
        "/api/v1/nodes/n1",
        "/api/v1/namespaces/default",
        "/apis/rbac.authorization.k8s.io/v1/clusterroles",
        "/apis/scheduling.volcano.sh/v1beta1/queues",
        "/api/v1",
    };
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(paths); i++)
        same(get(&a, pb, paths[i], 200), get(&a, js, paths[i], 200), paths[i]);
    same(get(&a, pb, "/api/v1/namespaces/default/pods/nope", 404),
         get(&a, js, "/api/v1/namespaces/default/pods/nope", 404), "a Status");
    char reason[64], msg[256];
    corral_client_resp_t r;
    corral_client_resp_init(&r);
    corral_client_request(pb, "GET", "/api/v1/namespaces/default/pods/nope", NULL, NULL, 0, &r);
    corral_client_error(&r, reason, sizeof(reason), msg, sizeof(msg));
    cr_assert_str_eq(reason, "NotFound");
    cr_assert(strstr(msg, "\"nope\" not found"), "%s", msg);
    corral_client_resp_fini(&r);
    corral_arena_fini(&a);
    corral_client_free(pb);
    corral_client_free(js);
}

typedef struct lines {
    corral_buf_t all;
    size_t n;
} lines_t;

static int on_line(void *ctx, const char *text, size_t len)
{
    lines_t *l = ctx;
    corral_buf_append(&l->all, text, len);
    corral_buf_putc(&l->all, '\n');
    l->n++;
    return 0;
}

static void watch(corral_client_t *c, const char *path, lines_t *l)
{
    corral_buf_init(&l->all);
    l->n = 0;
    corral_client_resp_t r;
    corral_client_resp_init(&r);
    cr_assert_eq(corral_client_stream(c, path, on_line, l, &r), 0, "%s", r.error);
    cr_assert_eq(r.code, 200);
    corral_client_resp_fini(&r);
}

Test(codec, watch_events_arrive_as_the_same_json_lines)
{
    for (int i = 0; i < 3; i++) {
        char body[256];
        snprintf(body, sizeof(body),
                 "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"cm%d\"},"
                 "\"data\":{\"k\":\"%d\"}}",
                 i, i);
        post("/api/v1/namespaces/default/configmaps", body);
    }
    corral_client_t *pb = client(true), *js = client(false);
    lines_t lp, lj;
    const char *path = "/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=1";
    watch(pb, path, &lp);
    watch(js, path, &lj);
    cr_assert_eq(lp.n, 3);
    cr_assert_eq(lj.n, 3);
    corral_arena_t a;
    corral_arena_init(&a);
    const char *p = lp.all.p, *j = lj.all.p;
    for (size_t i = 0; i < 3; i++) {
        const char *pe = strchr(p, '\n'), *je = strchr(j, '\n');
        corral_val_t *vp = NULL, *vj = NULL;
        cr_assert_eq(corral_json_parse(&a, p, (size_t)(pe - p), &vp, NULL), 0);
        cr_assert_eq(corral_json_parse(&a, j, (size_t)(je - j), &vj, NULL), 0);
        same(vp, vj, "a watch event");
        p = pe + 1;
        j = je + 1;
    }
    corral_buf_fini(&lp.all);
    corral_buf_fini(&lj.all);
    /* A CRD kind's watch stays JSON lines with protobuf asked. */
    post("/apis/scheduling.volcano.sh/v1beta1/queues",
         "{\"apiVersion\":\"scheduling.volcano.sh/v1beta1\",\"kind\":\"Queue\",\"metadata\":{"
         "\"name\":\"q2\"},\"spec\":{\"weight\":1}}");
    watch(pb, "/apis/scheduling.volcano.sh/v1beta1/queues?watch=1&timeoutSeconds=1", &lp);
    cr_assert_geq(lp.n, 1);
    cr_assert(strstr(corral_buf_str(&lp.all), "\"name\":\"q2\""), "%s", corral_buf_str(&lp.all));
    corral_buf_fini(&lp.all);
    corral_arena_fini(&a);
    corral_client_free(pb);
    corral_client_free(js);
}
