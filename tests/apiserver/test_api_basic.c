/* The API server over HTTP, part 1: health, version, discovery documents,
 * create/get/list with their server-set fields and defaults, and the error
 * Status bodies (404, 405, 409, 400, 413, 415, 422) with exact codes. */
#include "api_test.h"

#include "corral/model.h"

TestSuite(api, .init = api_start, .fini = api_stop, .timeout = 30);

static const char *pod_json(const char *name, const char *extra_meta)
{
    static char buf[1024];
    snprintf(buf, sizeof(buf),
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\"%s},"
             "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"busybox:1.36\"}]}}",
             name, extra_meta ? extra_meta : "");
    return buf;
}

Test(api, health_and_version)
{
    api_resp_t r;
    API_EXPECT(&r, 200, "GET", "/healthz", NULL, NULL);
    cr_assert_str_eq(corral_buf_str(&r.body), "ok");
    api_free(&r);
    API_EXPECT(&r, 200, "GET", "/readyz?verbose", NULL, NULL);
    cr_assert(strstr(corral_buf_str(&r.body), "[+]store ok"));
    api_free(&r);
    API_EXPECT(&r, 200, "GET", "/livez", NULL, NULL);
    api_free(&r);
    API_EXPECT(&r, 200, "GET", "/version", NULL, NULL);
    cr_assert_str_eq(api_str(r.json, "major"), "1");
    cr_assert_not_null(api_str(r.json, "gitVersion"));
    cr_assert(strstr(corral_buf_str(&r.headers), "Content-Type: application/json"));
    api_free(&r);
}

Test(api, discovery_documents)
{
    api_resp_t r;
    API_EXPECT(&r, 200, "GET", "/api", NULL, NULL);
    cr_assert_str_eq(api_str(r.json, "kind"), "APIVersions");
    cr_assert_str_eq(corral_val_get(r.json, "versions")->items[0]->s, "v1");
    cr_assert_not_null(corral_val_get(r.json, "serverAddressByClientCIDRs"));
    api_free(&r);

    API_EXPECT(&r, 200, "GET", "/api/v1", NULL, NULL);
    cr_assert_str_eq(api_str(r.json, "kind"), "APIResourceList");
    cr_assert_str_eq(api_str(r.json, "groupVersion"), "v1");
    corral_val_t *res = corral_val_get(r.json, "resources");
    bool pods = false, eviction = false, status = false;
    for (size_t i = 0; i < res->n; i++) {
        const char *name = api_str(res->items[i], "name");
        if (!strcmp(name, "pods")) {
            pods = true;
            cr_assert_str_eq(api_str(res->items[i], "singularName"), "pod");
            cr_assert_str_eq(api_str(res->items[i], "kind"), "Pod");
            cr_assert_str_eq(api_str(res->items[i], "namespaced"), "true");
            cr_assert_str_eq(corral_val_get(res->items[i], "shortNames")->items[0]->s, "po");
            cr_assert_eq(corral_val_get(res->items[i], "verbs")->n, 8);
        }
        if (!strcmp(name, "pods/eviction")) {
            eviction = true;
            cr_assert_str_eq(api_str(res->items[i], "group"), "policy");
            cr_assert_str_eq(api_str(res->items[i], "kind"), "Eviction");
        }
        status = status || !strcmp(name, "nodes/status");
    }
    cr_assert(pods && eviction && status);
    api_free(&r);

    API_EXPECT(&r, 200, "GET", "/apis", NULL, NULL);
    cr_assert_str_eq(api_str(r.json, "kind"), "APIGroupList");
    cr_assert(strstr(corral_buf_str(&r.body),
                     "{\"name\":\"scheduling.volcano.sh\",\"versions\":[{\"groupVersion\":"
                     "\"scheduling.volcano.sh/v1beta1\",\"version\":\"v1beta1\"}],"
                     "\"preferredVersion\":{\"groupVersion\":\"scheduling.volcano.sh/v1beta1\","
                     "\"version\":\"v1beta1\"}}"));
    api_free(&r);

    API_EXPECT(&r, 200, "GET", "/apis/batch.volcano.sh/v1alpha1", NULL, NULL);
    cr_assert_str_eq(api_str(r.json, "groupVersion"), "batch.volcano.sh/v1alpha1");
    cr_assert(strstr(corral_buf_str(&r.body), "\"name\":\"jobs\",\"singularName\":\"job\","
                                              "\"namespaced\":true,\"kind\":\"Job\""));
    cr_assert(strstr(corral_buf_str(&r.body), "\"shortNames\":[\"vcjob\",\"vj\"]"));
    cr_assert(strstr(corral_buf_str(&r.body), "\"name\":\"jobs/status\""));
    api_free(&r);
    API_EXPECT(&r, 200, "GET", "/apis/scheduling.volcano.sh", NULL, NULL);
    cr_assert_str_eq(api_str(r.json, "kind"), "APIGroup");
    api_free(&r);
    API_EXPECT(&r, 404, "GET", "/apis/nope.example.com/v1", NULL, NULL);
    api_status(&r, "NotFound", 404, "could not find the requested resource");
    api_free(&r);
}

Test(api, bootstrap_objects)
{
    api_resp_t r;
    API_EXPECT(&r, 200, "GET", "/api/v1/namespaces/default", NULL, NULL);
    cr_assert_str_eq(api_str(r.json, "status.phase"), "Active");
    api_free(&r);
    API_EXPECT(&r, 200, "GET", "/apis/scheduling.k8s.io/v1/priorityclasses/system-node-critical",
               NULL, NULL);
    cr_assert_str_eq(api_str(r.json, "value"), "2000001000");
    api_free(&r);
    API_EXPECT(&r, 200, "GET", "/apis/scheduling.volcano.sh/v1beta1/queues/default", NULL, NULL);
    api_free(&r);
}

Test(api, create_sets_server_fields_and_defaults)
{
    api_resp_t r;
    API_EXPECT(&r, 201, "POST", "/api/v1/namespaces/default/pods", NULL,
               pod_json("p1", ",\"labels\":{\"app\":\"web\"}"));
    cr_assert_str_eq(api_str(r.json, "metadata.name"), "p1");
    cr_assert_str_eq(api_str(r.json, "metadata.namespace"), "default");
    cr_assert_eq(strlen(api_str(r.json, "metadata.uid")), 36);
    cr_assert_not_null(api_str(r.json, "metadata.creationTimestamp"));
    cr_assert_str_eq(api_str(r.json, "metadata.generation"), "1");
    const char *rv = api_str(r.json, "metadata.resourceVersion");
    cr_assert_not_null(rv);
    cr_assert_str_eq(api_str(r.json, "spec.restartPolicy"), "Always");
    cr_assert_str_eq(api_str(r.json, "spec.schedulerName"), "default-scheduler");
    cr_assert_str_eq(api_str(r.json, "spec.terminationGracePeriodSeconds"), "30");
    cr_assert_str_eq(api_str(r.json, "spec.priority"), "0");
    cr_assert_str_eq(api_str(r.json, "status.phase"), "Pending");
    cr_assert_str_eq(api_str(r.json, "status.qosClass"), "BestEffort");
    cr_assert_str_eq(api_str(corral_val_get(corral_val_dig(r.json, "spec"), "containers")->items[0],
                             "imagePullPolicy"),
                     "IfNotPresent");
    char body[4096];
    snprintf(body, sizeof(body), "%s", corral_buf_str(&r.body));
    api_free(&r);
    API_EXPECT(&r, 200, "GET", "/api/v1/namespaces/default/pods/p1", NULL, NULL);
    cr_assert_str_eq(corral_buf_str(&r.body), body, "get returns what create returned");
    api_free(&r);
}

Test(api, create_with_generate_name_and_yaml)
{
    api_resp_t r;
    API_EXPECT(&r, 201, "POST", "/api/v1/namespaces/default/configmaps", "application/yaml",
               "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  generateName: cfg-\ndata:\n  a: b\n");
    const char *name = api_str(r.json, "metadata.name");
    cr_assert_eq(strlen(name), 9);
    cr_assert_eq(strncmp(name, "cfg-", 4), 0);
    api_free(&r);
    /* apiVersion and kind may be left to the URL. */
    API_EXPECT(&r, 201, "POST", "/api/v1/namespaces/default/configmaps", NULL,
               "{\"metadata\":{\"name\":\"bare\"}}");
    cr_assert_str_eq(api_str(r.json, "kind"), "ConfigMap");
    api_free(&r);
    /* Secrets fold stringData into data. */
    API_EXPECT(&r, 201, "POST", "/api/v1/namespaces/default/secrets", NULL,
               "{\"metadata\":{\"name\":\"s\"},\"stringData\":{\"k\":\"hello\"}}");
    cr_assert_str_eq(api_str(r.json, "data.k"), "aGVsbG8=");
    cr_assert_null(corral_val_get(r.json, "stringData"));
    cr_assert_str_eq(api_str(r.json, "type"), "Opaque");
    api_free(&r);
}

Test(api, create_errors)
{
    api_resp_t r;
    API_EXPECT(&r, 201, "POST", "/api/v1/namespaces/default/pods", NULL, pod_json("dup", NULL));
    api_free(&r);
    API_EXPECT(&r, 409, "POST", "/api/v1/namespaces/default/pods", NULL, pod_json("dup", NULL));
    api_status(&r, "AlreadyExists", 409, "pods \"dup\" already exists");
    cr_assert_str_eq(api_str(r.json, "details.name"), "dup");
    cr_assert_str_eq(api_str(r.json, "details.kind"), "pods");
    api_free(&r);
    API_EXPECT(&r, 404, "POST", "/api/v1/namespaces/nowhere/pods", NULL, pod_json("x", NULL));
    api_status(&r, "NotFound", 404, "namespaces \"nowhere\" not found");
    api_free(&r);
    API_EXPECT(&r, 400, "POST", "/api/v1/namespaces/default/pods", NULL, "{\"metadata\": ");
    api_status(&r, "BadRequest", 400, "could not be decoded");
    api_free(&r);
    API_EXPECT(&r, 400, "POST", "/api/v1/namespaces/default/pods", NULL,
               "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n\"}}");
    api_status(&r, "BadRequest", 400, "does not match the expected kind (Pod)");
    api_free(&r);
    API_EXPECT(&r, 400, "POST", "/api/v1/namespaces/default/pods", NULL,
               pod_json("x", ",\"namespace\":\"other\""));
    api_status(&r, "BadRequest", 400, "namespace of the provided object does not match");
    api_free(&r);
    API_EXPECT(&r, 415, "POST", "/api/v1/namespaces/default/pods", "text/plain",
               pod_json("x", NULL));
    api_status(&r, "UnsupportedMediaType", 415, NULL);
    api_free(&r);
    API_EXPECT(&r, 403, "POST", "/api/v1/namespaces/default/pods", NULL,
               "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"priorityClassName\":\"nope\","
               "\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]}}");
    api_status(&r, "Forbidden", 403, "no PriorityClass with name nope was found");
    api_free(&r);
}

/* A 422 carries exactly what the object model (and so `corral validate`)
 * says, field by field. */
Test(api, invalid_objects_get_the_validator_messages)
{
    const char *pod = "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"g\"},"
                      "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\",\"resources\":"
                      "{\"limits\":{\"nvidia.com/gpu\":0.5}}}]}}";
    api_resp_t r;
    API_EXPECT(&r, 422, "POST", "/api/v1/namespaces/default/pods", NULL, pod);
    api_status(&r, "Invalid", 422, "Pod \"g\" is invalid: spec.containers[0].resources.limits");
    corral_val_t *causes = corral_val_dig(r.json, "details.causes");
    cr_assert_not_null(causes);
    cr_assert_eq(causes->n, 1);
    cr_assert_str_eq(api_str(causes->items[0], "reason"), "FieldValueInvalid");
    cr_assert_str_eq(api_str(causes->items[0], "field"),
                     "spec.containers[0].resources.limits.nvidia.com/gpu");
    /* The same message the decoder gives for the same document. */
    corral_arena_t a;
    corral_arena_init(&a);
    corral_diag_t d;
    corral_diag_init(&d);
    corral_doc_t *docs;
    size_t n;
    corral_yaml_opts_t o = {.json = true};
    cr_assert_eq(corral_yaml_parse(&a, pod, strlen(pod), "p", &o, &d, &docs, &n), 0);
    corral_obj_t *obj;
    cr_assert_eq(corral_obj_decode(&a, docs[0].root, "p", &d, &obj), CORRAL_EINVAL);
    cr_assert_str_eq(api_str(causes->items[0], "message"), d.items[0].msg);
    cr_assert(strstr(d.items[0].msg, "corral.dev/gpu-milli: 500"));
    corral_diag_fini(&d);
    corral_arena_fini(&a);
    api_free(&r);
    /* Several errors: all listed. */
    API_EXPECT(&r, 422, "POST", "/apis/scheduling.volcano.sh/v1beta1/queues", NULL,
               "{\"metadata\":{\"name\":\"Bad_Name\"},\"spec\":{\"weight\":\"x\"}}");
    api_status(&r, "Invalid", 422, "Queue.scheduling.volcano.sh \"Bad_Name\" is invalid: [");
    cr_assert_geq(corral_val_dig(r.json, "details.causes")->n, 2);
    cr_assert_str_eq(api_str(r.json, "details.group"), "scheduling.volcano.sh");
    api_free(&r);
}

Test(api, unknown_fields_are_warnings)
{
    api_resp_t r;
    API_EXPECT(&r, 201, "POST", "/apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups",
               NULL, "{\"metadata\":{\"name\":\"pg\"},\"spec\":{\"minMemeber\":2}}");
    cr_assert(strstr(corral_buf_str(&r.headers), "Warning: 299 - \"spec.minMemeber: unknown field"),
              "%s", corral_buf_str(&r.headers));
    cr_assert_str_eq(api_str(r.json, "spec.minMemeber"), "2", "kept, as upstream keeps it");
    cr_assert_str_eq(api_str(r.json, "spec.queue"), "default", "Volcano's default");
    api_free(&r);
}

Test(api, not_found_and_method_not_allowed)
{
    api_resp_t r;
    API_EXPECT(&r, 404, "GET", "/api/v1/namespaces/default/pods/ghost", NULL, NULL);
    api_status(&r, "NotFound", 404, "pods \"ghost\" not found");
    cr_assert_str_eq(api_str(r.json, "details.kind"), "pods");
    api_free(&r);
    API_EXPECT(&r, 404, "GET", "/apis/scheduling.volcano.sh/v1beta1/queues/ghost", NULL, NULL);
    api_status(&r, "NotFound", 404, "queues.scheduling.volcano.sh \"ghost\" not found");
    cr_assert_str_eq(api_str(r.json, "details.group"), "scheduling.volcano.sh");
    api_free(&r);
    API_EXPECT(&r, 404, "GET", "/api/v1/widgets", NULL, NULL);
    api_status(&r, "NotFound", 404, "the server could not find the requested resource");
    api_free(&r);
    API_EXPECT(&r, 405, "POST", "/api/v1/pods", NULL, pod_json("x", NULL));
    api_status(&r, "MethodNotAllowed", 405, NULL);
    api_free(&r);
    API_EXPECT(&r, 405, "PUT", "/version", NULL, "{}");
    api_free(&r);
    API_EXPECT(&r, 404, "GET", "/api/v1/namespaces/default/configmaps/x/status", NULL, NULL);
    api_free(&r);
}

static void create_cm(const char *ns, const char *name, const char *labels)
{
    char body[512], path[256];
    snprintf(body, sizeof(body), "{\"metadata\":{\"name\":\"%s\",\"labels\":{%s}}}", name, labels);
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/configmaps", ns);
    api_resp_t r;
    API_EXPECT(&r, 201, "POST", path, NULL, body);
    api_free(&r);
}

static size_t items(const api_resp_t *r)
{
    corral_val_t *it = corral_val_get(r->json, "items");
    cr_assert_not_null(it, "%s", corral_buf_str(&r->body));
    return it->n;
}

Test(api, list_with_selectors)
{
    api_resp_t r;
    API_EXPECT(&r, 201, "POST", "/api/v1/namespaces", NULL, "{\"metadata\":{\"name\":\"team\"}}");
    api_free(&r);
    create_cm("default", "a", "\"tier\":\"gpu\",\"app\":\"x\"");
    create_cm("default", "b", "\"tier\":\"cpu\"");
    create_cm("team", "c", "\"tier\":\"gpu\"");
    API_EXPECT(&r, 200, "GET", "/api/v1/configmaps", NULL, NULL);
    cr_assert_str_eq(api_str(r.json, "kind"), "ConfigMapList");
    cr_assert_eq(items(&r), 3);
    int64_t rv = strtoll(api_str(r.json, "metadata.resourceVersion"), NULL, 10);
    cr_assert_geq(rv, 3);
    api_free(&r);
    API_EXPECT(&r, 200, "GET", "/api/v1/namespaces/default/configmaps", NULL, NULL);
    cr_assert_eq(items(&r), 2);
    api_free(&r);
    API_EXPECT(&r, 200, "GET", "/api/v1/configmaps?labelSelector=tier%3Dgpu", NULL, NULL);
    cr_assert_eq(items(&r), 2);
    api_free(&r);
    API_EXPECT(&r, 200, "GET", "/api/v1/configmaps?labelSelector=tier+in+(gpu),!app", NULL, NULL);
    cr_assert_eq(items(&r), 1);
    api_free(&r);
    API_EXPECT(&r, 200, "GET", "/api/v1/configmaps?fieldSelector=metadata.namespace%3Dteam", NULL,
               NULL);
    cr_assert_eq(items(&r), 1);
    api_free(&r);
    API_EXPECT(&r, 200, "GET",
               "/api/v1/namespaces/default/configmaps?fieldSelector=metadata.name!%3Da", NULL,
               NULL);
    cr_assert_eq(items(&r), 1);
    api_free(&r);
    API_EXPECT(&r, 400, "GET", "/api/v1/configmaps?fieldSelector=spec.nodeName%3Dx", NULL, NULL);
    api_status(&r, "BadRequest", 400, "field label not supported: spec.nodeName");
    api_free(&r);
    API_EXPECT(&r, 400, "GET", "/api/v1/configmaps?labelSelector=a%3D%3D%3Db", NULL, NULL);
    api_status(&r, "BadRequest", 400, NULL);
    api_free(&r);
    API_EXPECT(&r, 504, "GET", "/api/v1/configmaps?resourceVersion=999999", NULL, NULL);
    api_status(&r, "Timeout", 504, "Too large resource version");
    api_free(&r);
}

Test(api, list_pages_with_limit_and_continue)
{
    for (int i = 0; i < 7; i++) {
        char name[16];
        snprintf(name, sizeof(name), "cm%d", i);
        create_cm("default", name, "\"x\":\"1\"");
    }
    char path[512] = "/api/v1/namespaces/default/configmaps?limit=3";
    int pages = 0, total = 0;
    char first_rv[32] = "";
    for (;;) {
        api_resp_t r;
        API_EXPECT(&r, 200, "GET", path, NULL, NULL);
        total += (int)items(&r);
        pages++;
        if (!first_rv[0])
            snprintf(first_rv, sizeof(first_rv), "%s", api_str(r.json, "metadata.resourceVersion"));
        cr_assert_str_eq(api_str(r.json, "metadata.resourceVersion"), first_rv,
                         "every page carries the first page's revision");
        const char *cont = api_str(r.json, "metadata.continue");
        if (!cont) {
            api_free(&r);
            break;
        }
        cr_assert_eq(items(&r), 3);
        snprintf(path, sizeof(path), "/api/v1/namespaces/default/configmaps?limit=3&continue=%s",
                 cont);
        api_free(&r);
        cr_assert_lt(pages, 10);
    }
    cr_assert_eq(pages, 3);
    cr_assert_eq(total, 7);
    api_resp_t r;
    API_EXPECT(&r, 400, "GET", "/api/v1/namespaces/default/configmaps?limit=3&continue=%25%25",
               NULL, NULL);
    api_free(&r);
}

Test(api, cluster_scoped_objects)
{
    api_resp_t r;
    API_EXPECT(&r, 201, "POST", "/api/v1/nodes", NULL,
               "{\"metadata\":{\"name\":\"n1\",\"namespace\":\"ignored\"},\"status\":{\"capacity\":"
               "{\"nvidia.com/gpu\":\"8\"}}}");
    cr_assert_null(api_str(r.json, "metadata.namespace"));
    cr_assert_str_eq(corral_val_get(corral_val_dig(r.json, "status.capacity"), "nvidia.com/gpu")->s,
                     "8", "nodes register with their status");
    api_free(&r);
    API_EXPECT(&r, 200, "GET", "/api/v1/nodes/n1", NULL, NULL);
    api_free(&r);
    API_EXPECT(&r, 404, "GET", "/api/v1/namespaces/default/nodes/n1", NULL, NULL);
    api_free(&r);
    API_EXPECT(&r, 201, "POST", "/apis/scheduling.volcano.sh/v1beta1/queues", NULL,
               "{\"metadata\":{\"name\":\"q\"},\"spec\":{},\"status\":{\"state\":\"Open\"}}");
    cr_assert_null(corral_val_get(r.json, "status"), "create cannot set a CRD's status");
    cr_assert_str_eq(api_str(r.json, "spec.weight"), "1");
    cr_assert_str_eq(api_str(r.json, "spec.reclaimable"), "true");
    api_free(&r);
}
