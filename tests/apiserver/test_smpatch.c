/* Strategic merge patch: lists merged by upstream's keys (containers and
 * env by name, ports by containerPort, conditions by type), lists without
 * a key replaced (tolerations), sets of scalars merged (finalizers), the
 * $patch, $retainKeys, $deleteFromPrimitiveList and $setElementOrder
 * directives, errors; and over HTTP, the 415 for custom kinds. */
#include "api_test.h"
#include "apiserver/apiserver_int.h"
#include "corral/json.h"

TestSuite(smpatch, .timeout = 10);

/* Apply patch to doc; the result as compact JSON (static), or the error. */
static const char *sm(const char *doc, const char *patch)
{
    static char out[4096];
    corral_arena_t a;
    corral_arena_init(&a);
    corral_val_t *d = NULL, *p = NULL;
    cr_assert_eq(corral_json_parse(&a, doc, strlen(doc), &d, NULL), 0, "%s", doc);
    cr_assert_eq(corral_json_parse(&a, patch, strlen(patch), &p, NULL), 0, "%s", patch);
    char why[256] = "";
    if (corral__strategic_patch(&a, &d, p, why, sizeof(why)) != 0) {
        snprintf(out, sizeof(out), "error: %s", why);
    } else {
        corral_buf_t b;
        corral_buf_init(&b);
        corral_val_to_json(d, &b, false);
        snprintf(out, sizeof(out), "%s", corral_buf_str(&b));
        corral_buf_fini(&b);
    }
    corral_arena_fini(&a);
    return out;
}

#define POD(spec) "{\"metadata\":{\"name\":\"p\"},\"spec\":" spec "}"

Test(smpatch, containers_merge_by_name_and_env_by_name)
{
    const char *doc = POD("{\"containers\":[{\"name\":\"a\",\"image\":\"x:1\",\"env\":[{\"name\":"
                          "\"A\",\"value\":\"1\"},{\"name\":\"B\",\"value\":\"2\"}]},{\"name\":"
                          "\"b\",\"image\":\"y\"}]}");
    cr_assert_str_eq(sm(doc, "{\"spec\":{\"containers\":[{\"name\":\"a\",\"image\":\"x:2\",\"env\":"
                             "[{\"name\":\"B\",\"value\":\"3\"},{\"name\":\"C\",\"value\":\"4\"}]}"
                             "]}}"),
                     POD("{\"containers\":[{\"name\":\"a\",\"image\":\"x:2\",\"env\":[{\"name\":"
                         "\"A\",\"value\":\"1\"},{\"name\":\"B\",\"value\":\"3\"},{\"name\":\"C\","
                         "\"value\":\"4\"}]},{\"name\":\"b\",\"image\":\"y\"}]}"));
    /* A new container is appended; $patch: delete removes one. */
    cr_assert_str_eq(
        sm(doc, "{\"spec\":{\"containers\":[{\"name\":\"b\",\"$patch\":\"delete\"},"
                "{\"name\":\"c\",\"image\":\"z\"}]}}"),
        POD("{\"containers\":[{\"name\":\"a\",\"image\":\"x:1\",\"env\":[{\"name\":"
            "\"A\",\"value\":\"1\"},{\"name\":\"B\",\"value\":\"2\"}]},{\"name\":\"c\","
            "\"image\":\"z\"}]}"));
    /* null deletes a field inside a merged element. */
    cr_assert_str_eq(sm(doc, "{\"spec\":{\"containers\":[{\"name\":\"a\",\"env\":null}]}}"),
                     POD("{\"containers\":[{\"name\":\"a\",\"image\":\"x:1\"},{\"name\":\"b\","
                         "\"image\":\"y\"}]}"));
}

Test(smpatch, ports_by_container_port_conditions_by_type)
{
    cr_assert_str_eq(
        sm(POD("{\"containers\":[{\"name\":\"a\",\"ports\":[{\"containerPort\":80,\"name\":"
               "\"http\"}]}]}"),
           "{\"spec\":{\"containers\":[{\"name\":\"a\",\"ports\":[{\"containerPort\":80,"
           "\"protocol\":\"TCP\"},{\"containerPort\":443}]}]}}"),
        POD("{\"containers\":[{\"name\":\"a\",\"ports\":[{\"containerPort\":80,\"name\":\"http\","
            "\"protocol\":\"TCP\"},{\"containerPort\":443}]}]}"));
    cr_assert_str_eq(sm("{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"False\"},"
                        "{\"type\":\"PodScheduled\",\"status\":\"False\",\"reason\":\"U\"}]}}",
                        "{\"status\":{\"conditions\":[{\"type\":\"PodScheduled\",\"status\":"
                        "\"True\",\"reason\":null}]}}"),
                     "{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"False\"},{"
                     "\"type\":\"PodScheduled\",\"status\":\"True\"}]}}");
}

Test(smpatch, lists_without_a_key_are_replaced)
{
    cr_assert_str_eq(sm(POD("{\"tolerations\":[{\"key\":\"a\"},{\"key\":\"b\"}],\"containers\":"
                            "[{\"name\":\"c\",\"args\":[\"1\",\"2\"]}]}"),
                        "{\"spec\":{\"tolerations\":[{\"key\":\"c\"}],\"containers\":[{\"name\":"
                        "\"c\",\"args\":[\"3\"]}]}}"),
                     POD("{\"tolerations\":[{\"key\":\"c\"}],\"containers\":[{\"name\":\"c\","
                         "\"args\":[\"3\"]}]}"));
}

Test(smpatch, finalizers_merge_as_a_set)
{
    const char *doc = "{\"metadata\":{\"finalizers\":[\"a\",\"b\"]}}";
    cr_assert_str_eq(sm(doc, "{\"metadata\":{\"finalizers\":[\"b\",\"c\"]}}"),
                     "{\"metadata\":{\"finalizers\":[\"a\",\"b\",\"c\"]}}");
    cr_assert_str_eq(sm(doc, "{\"metadata\":{\"$deleteFromPrimitiveList/finalizers\":[\"a\"]}}"),
                     "{\"metadata\":{\"finalizers\":[\"b\"]}}");
}

Test(smpatch, replace_and_delete_directives)
{
    const char *doc = POD("{\"containers\":[{\"name\":\"a\"},{\"name\":\"b\"}],"
                          "\"nodeSelector\":{\"x\":\"1\",\"y\":\"2\"}}");
    cr_assert_str_eq(sm(doc, "{\"spec\":{\"containers\":[{\"$patch\":\"replace\"},{\"name\":"
                             "\"z\"}]}}"),
                     POD("{\"containers\":[{\"name\":\"z\"}],\"nodeSelector\":{\"x\":\"1\",\"y\":"
                         "\"2\"}}"));
    cr_assert_str_eq(sm(doc, "{\"spec\":{\"nodeSelector\":{\"$patch\":\"replace\",\"z\":\"3\"}}}"),
                     POD("{\"containers\":[{\"name\":\"a\"},{\"name\":\"b\"}],\"nodeSelector\":{"
                         "\"z\":\"3\"}}"));
    cr_assert_str_eq(sm(doc, "{\"spec\":{\"nodeSelector\":{\"$patch\":\"delete\"}}}"),
                     POD("{\"containers\":[{\"name\":\"a\"},{\"name\":\"b\"}]}"));
    cr_assert_str_eq(sm(doc, "{\"spec\":{\"$retainKeys\":[\"containers\"]}}"),
                     POD("{\"containers\":[{\"name\":\"a\"},{\"name\":\"b\"}]}"));
}

Test(smpatch, set_element_order_orders_the_merged_list)
{
    cr_assert_str_eq(sm(POD("{\"containers\":[{\"name\":\"a\"},{\"name\":\"b\"}]}"),
                        "{\"spec\":{\"$setElementOrder/containers\":[{\"name\":\"c\"},{\"name\":"
                        "\"b\"},{\"name\":\"a\"}],\"containers\":[{\"name\":\"c\"}]}}"),
                     POD("{\"containers\":[{\"name\":\"c\"},{\"name\":\"b\"},{\"name\":\"a\"}]}"));
    /* An order naming unknown elements is ignored gracefully. */
    cr_assert_str_eq(sm(POD("{\"containers\":[{\"name\":\"a\"}]}"),
                        "{\"spec\":{\"$setElementOrder/containers\":[{\"name\":\"q\"},7]}}"),
                     POD("{\"containers\":[{\"name\":\"a\"}]}"));
}

Test(smpatch, errors)
{
    cr_assert_str_eq(
        sm(POD("{\"containers\":[]}"), "{\"spec\":{\"containers\":[{\"image\":\"x\"}]}}"),
        "error: spec.containers: an element does not contain the declared merge key "
        "\"name\"");
    cr_assert_str_eq(sm(POD("{\"containers\":[]}"), "{\"spec\":{\"containers\":[1]}}"),
                     "error: spec.containers: a list merged by key takes objects");
    cr_assert_str_eq(sm("{}", "{\"spec\":{\"$patch\":\"explode\"}}"),
                     "error: unknown patch directive: $patch: explode");
    cr_assert_str_eq(sm("{}", "{\"$patch\":\"delete\"}"),
                     "error: the patch deletes the whole object");
    cr_assert_str_eq(sm("{}", "[]"), "error: a strategic merge patch must be a JSON object");
}

TestSuite(smpatch_http, .init = api_start, .fini = api_stop, .timeout = 30);

Test(smpatch_http, built_in_kinds_only)
{
    api_resp_t r;
    API_EXPECT(&r, 201, "POST", "/api/v1/namespaces/default/pods", NULL,
               "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":\"c\","
               "\"image\":\"i:1\",\"env\":[{\"name\":\"A\",\"value\":\"1\"}]}]}}");
    api_free(&r);
    API_EXPECT(&r, 200, "PATCH", "/api/v1/namespaces/default/pods/p",
               "application/strategic-merge-patch+json",
               "{\"spec\":{\"containers\":[{\"name\":\"c\",\"env\":[{\"name\":\"B\",\"value\":"
               "\"2\"}]}]}}");
    cr_assert(strstr(corral_buf_str(&r.body), "\"env\":[{\"name\":\"A\",\"value\":\"1\"},{\"name\":"
                                              "\"B\",\"value\":\"2\"}]"),
              "%s", corral_buf_str(&r.body));
    cr_assert_str_eq(api_str(r.json, "metadata.generation"), "2");
    api_free(&r);
    API_EXPECT(&r, 415, "PATCH", "/apis/scheduling.volcano.sh/v1beta1/queues/default",
               "application/strategic-merge-patch+json", "{\"spec\":{\"weight\":2}}");
    api_status(&r, "UnsupportedMediaType", 415,
               "accepted media types include: application/json-patch+json, "
               "application/merge-patch+json");
    cr_assert_null(strstr(corral_buf_str(&r.body), "strategic"));
    api_free(&r);
    API_EXPECT(&r, 422, "PATCH", "/api/v1/namespaces/default/pods/p",
               "application/strategic-merge-patch+json", "{\"spec\":{\"containers\":[{}]}}");
    api_status(&r, "Invalid", 422, "does not contain the declared merge key \"name\"");
    api_free(&r);
}

Test(smpatch_http, openapi_names_every_kind)
{
    api_resp_t r;
    API_EXPECT(&r, 200, "GET", "/openapi/v2", NULL, NULL);
    cr_assert_str_eq(api_str(r.json, "swagger"), "2.0");
    const char *b = corral_buf_str(&r.body);
    cr_assert(strstr(b, "\"io.k8s.api.core.v1.Pod\":{"), "%s", b);
    cr_assert(strstr(b, "\"sh.volcano.scheduling.v1beta1.Queue\":{"), "%s", b);
    cr_assert(strstr(b, "\"x-kubernetes-group-version-kind\":[{\"group\":\"scheduling.volcano.sh\","
                        "\"kind\":\"Queue\",\"version\":\"v1beta1\"}]"),
              "%s", b);
    cr_assert(strstr(b, "\"io.k8s.api.rbac.v1.ClusterRoleBinding\""), "%s", b);
    cr_assert(strstr(b, "\"io.kserve.serving.v1beta1.InferenceService\""), "%s", b);
    api_free(&r);
    /* kubectl asks for protobuf: gnostic's Document, field 1 "2.0" first. */
    int fd = api_connect();
    api_send(fd, "GET /openapi/v2 HTTP/1.1\r\nHost: x\r\nAccept: "
                 "application/com.github.proto-openapi.spec.v2@v1.0+protobuf\r\n\r\n");
    char buf[8192];
    size_t got = 0;
    while (got < sizeof(buf) - 1) {
        ssize_t n = read(fd, buf + got, sizeof(buf) - 1 - got);
        if (n <= 0)
            break;
        got += (size_t)n;
        buf[got] = '\0';
        const char *end = strstr(buf, "\r\n\r\n");
        const char *cl = strstr(buf, "Content-Length: ");
        if (end && cl && got >= (size_t)(end + 4 - buf) + strtoul(cl + 16, NULL, 10))
            break;
    }
    close(fd);
    cr_assert(
        strstr(buf, "Content-Type: application/com.github.proto-openapi.spec.v2.v1.0+protobuf"),
        "%.300s", buf);
    const char *body = strstr(buf, "\r\n\r\n") + 4;
    cr_assert_eq(memcmp(body,
                        "\x0a\x03"
                        "2.0\x12",
                        6),
                 0, "protobuf starts with swagger = 2.0");
    /* Its definitions: tests/apiserver/test_openapi.c. */
}
