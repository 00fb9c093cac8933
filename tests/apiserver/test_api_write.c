/* The API server over HTTP, part 2: update with resourceVersion
 * preconditions, generation, status subresources, patches, deletion
 * (graceful pods, finalizers, namespaces, collections), binding, eviction
 * and log. */
#include "api_test.h"

TestSuite(write, .init = api_start, .fini = api_stop, .timeout = 30);

#define PODS "/api/v1/namespaces/default/pods"

static void create_pod(const char *name, const char *extra_spec)
{
    char body[1024];
    snprintf(body, sizeof(body),
             "{\"metadata\":{\"name\":\"%s\",\"labels\":{\"app\":\"a\"}},\"spec\":{%s"
             "\"containers\":[{\"name\":\"c\",\"image\":\"i:1\"}]}}",
             name, extra_spec ? extra_spec : "");
    api_resp_t r;
    API_EXPECT(&r, 201, "POST", PODS, NULL, body);
    api_free(&r);
}

/* Fetch an object; the caller frees r. */
static void get(api_resp_t *r, const char *path)
{
    API_EXPECT(r, 200, "GET", path, NULL, NULL);
}

static long rv_of(const api_resp_t *r)
{
    return strtol(api_str(r->json, "metadata.resourceVersion"), NULL, 10);
}

/* The current JSON of path with `from` replaced by `to` (once), for PUT. */
static char *modified(const char *path, const char *from, const char *to)
{
    api_resp_t r;
    get(&r, path);
    const char *body = corral_buf_str(&r.body);
    const char *at = strstr(body, from);
    cr_assert_not_null(at, "%s not in %s", from, body);
    corral_buf_t b;
    corral_buf_init(&b);
    corral_buf_append(&b, body, (size_t)(at - body));
    corral_buf_puts(&b, to);
    corral_buf_puts(&b, at + strlen(from));
    api_free(&r);
    return corral_buf_steal(&b);
}

Test(write, update_with_resource_version_precondition)
{
    create_pod("p", NULL);
    api_resp_t r;
    get(&r, PODS "/p");
    long rv = rv_of(&r);
    api_free(&r);
    char from[64], to[64];
    snprintf(from, sizeof(from), "\"resourceVersion\":\"%ld\"", rv);
    snprintf(to, sizeof(to), "\"resourceVersion\":\"%ld\"", rv - 1);
    char *stale = modified(PODS "/p", from, to);
    API_EXPECT(&r, 409, "PUT", PODS "/p", NULL, stale);
    api_status(&r, "Conflict", 409,
               "Operation cannot be fulfilled on pods \"p\": the object has been modified; please "
               "apply your changes to the latest version and try again");
    corral_free(stale);
    api_free(&r);
    char *body = modified(PODS "/p", "\"app\":\"a\"", "\"app\":\"b\"");
    API_EXPECT(&r, 200, "PUT", PODS "/p", NULL, body);
    cr_assert_gt(rv_of(&r), rv);
    cr_assert_str_eq(api_str(r.json, "metadata.labels.app"), "b");
    cr_assert_str_eq(api_str(r.json, "metadata.generation"), "1", "labels are not spec");
    long rv2 = rv_of(&r);
    api_free(&r);
    corral_free(body);
    /* The same object again: nothing changes, not even the revision. */
    body = modified(PODS "/p", "\"app\":\"b\"", "\"app\":\"b\"");
    API_EXPECT(&r, 200, "PUT", PODS "/p", NULL, body);
    cr_assert_eq(rv_of(&r), rv2);
    api_free(&r);
    corral_free(body);
    /* A spec change bumps the generation. */
    body = modified(PODS "/p", "\"image\":\"i:1\"", "\"image\":\"i:2\"");
    API_EXPECT(&r, 200, "PUT", PODS "/p", NULL, body);
    cr_assert_str_eq(api_str(r.json, "metadata.generation"), "2");
    api_free(&r);
    corral_free(body);
    API_EXPECT(&r, 400, "PUT", PODS "/p", NULL, "{\"metadata\":{\"name\":\"other\"}}");
    api_status(&r, "BadRequest", 400, "does not match the name on the URL");
    api_free(&r);
    API_EXPECT(&r, 404, "PUT", PODS "/ghost", NULL, "{\"metadata\":{\"name\":\"ghost\"}}");
    api_free(&r);
    API_EXPECT(&r, 409, "PUT", PODS "/p", NULL,
               "{\"metadata\":{\"name\":\"p\",\"uid\":\"not-the-uid\"},\"spec\":{\"containers\":"
               "[{\"name\":\"c\",\"image\":\"i\"}]}}");
    api_status(&r, "Conflict", 409, "Precondition failed: UID in precondition");
    api_free(&r);
}

Test(write, server_fields_survive_updates)
{
    create_pod("p", NULL);
    api_resp_t r;
    get(&r, PODS "/p");
    char uid[64], ts[64];
    snprintf(uid, sizeof(uid), "%s", api_str(r.json, "metadata.uid"));
    snprintf(ts, sizeof(ts), "%s", api_str(r.json, "metadata.creationTimestamp"));
    api_free(&r);
    char *body = modified(PODS "/p", "\"generation\":1", "\"generation\":9");
    API_EXPECT(&r, 200, "PUT", PODS "/p", NULL, body);
    corral_free(body);
    cr_assert_str_eq(api_str(r.json, "metadata.uid"), uid);
    cr_assert_str_eq(api_str(r.json, "metadata.creationTimestamp"), ts);
    cr_assert_str_eq(api_str(r.json, "metadata.generation"), "1");
    api_free(&r);
    char from[96];
    snprintf(from, sizeof(from), "\"creationTimestamp\":\"%s\"", ts);
    body = modified(PODS "/p", from, "\"creationTimestamp\":\"2000-01-01T00:00:00Z\"");
    API_EXPECT(&r, 200, "PUT", PODS "/p", NULL, body);
    corral_free(body);
    cr_assert_str_eq(api_str(r.json, "metadata.creationTimestamp"), ts);
    api_free(&r);
}

Test(write, status_subresource_is_separate)
{
    create_pod("p", NULL);
    api_resp_t r;
    /* The main resource ignores status... */
    char *body = modified(PODS "/p", "\"phase\":\"Pending\"", "\"phase\":\"Running\"");
    API_EXPECT(&r, 200, "PUT", PODS "/p", NULL, body);
    corral_free(body);
    cr_assert_str_eq(api_str(r.json, "status.phase"), "Pending");
    api_free(&r);
    /* ...and status ignores everything else. */
    API_EXPECT(&r, 200, "PUT", PODS "/p/status", NULL,
               "{\"metadata\":{\"name\":\"p\",\"labels\":{\"x\":\"y\"}},\"spec\":{\"containers\":"
               "[{\"name\":\"c\",\"image\":\"changed\"}]},\"status\":{\"phase\":\"Running\"}}");
    cr_assert_str_eq(api_str(r.json, "status.phase"), "Running");
    cr_assert_null(api_str(r.json, "metadata.labels.x"));
    cr_assert_str_eq(api_str(corral_val_dig(r.json, "spec.containers")->items[0], "image"), "i:1");
    cr_assert_str_eq(api_str(r.json, "metadata.generation"), "1");
    api_free(&r);
    API_EXPECT(&r, 200, "PATCH", PODS "/p/status", "application/merge-patch+json",
               "{\"status\":{\"podIP\":\"10.0.0.9\"},\"spec\":{\"nodeName\":\"sneaky\"}}");
    cr_assert_str_eq(api_str(r.json, "status.podIP"), "10.0.0.9");
    cr_assert_str_eq(api_str(r.json, "status.phase"), "Running");
    cr_assert_null(api_str(r.json, "spec.nodeName"));
    api_free(&r);
    API_EXPECT(&r, 200, "GET", PODS "/p/status", NULL, NULL);
    cr_assert_str_eq(api_str(r.json, "kind"), "Pod");
    api_free(&r);
    /* PodGroups have no status subresource: status is part of the object. */
    API_EXPECT(&r, 201, "POST", "/apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups",
               NULL, "{\"metadata\":{\"name\":\"pg\"},\"spec\":{\"minMember\":1}}");
    api_free(&r);
    API_EXPECT(&r, 200, "PATCH",
               "/apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups/pg",
               "application/merge-patch+json", "{\"status\":{\"phase\":\"Running\"}}");
    cr_assert_str_eq(api_str(r.json, "status.phase"), "Running");
    api_free(&r);
    API_EXPECT(&r, 404, "GET",
               "/apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups/pg/status", NULL,
               NULL);
    api_free(&r);
}

Test(write, patches)
{
    create_pod("p", NULL);
    api_resp_t r;
    API_EXPECT(
        &r, 200, "PATCH", PODS "/p", "application/merge-patch+json",
        "{\"metadata\":{\"labels\":{\"app\":null,\"new\":\"1\"},\"annotations\":{\"a\":\"b\"}}}");
    cr_assert_null(api_str(r.json, "metadata.labels.app"));
    cr_assert_str_eq(api_str(r.json, "metadata.labels.new"), "1");
    cr_assert_str_eq(api_str(r.json, "metadata.annotations.a"), "b");
    long rv = rv_of(&r);
    api_free(&r);
    API_EXPECT(&r, 200, "PATCH", PODS "/p", "application/json-patch+json",
               "[{\"op\":\"test\",\"path\":\"/metadata/labels/new\",\"value\":\"1\"},"
               "{\"op\":\"add\",\"path\":\"/metadata/labels/k~1x\",\"value\":\"v\"},"
               "{\"op\":\"replace\",\"path\":\"/spec/containers/0/image\",\"value\":\"i:9\"}]");
    cr_assert_str_eq(corral_val_get(corral_val_dig(r.json, "metadata.labels"), "k/x")->s, "v");
    cr_assert_str_eq(api_str(r.json, "metadata.generation"), "2");
    api_free(&r);
    API_EXPECT(&r, 422, "PATCH", PODS "/p", "application/json-patch+json",
               "[{\"op\":\"test\",\"path\":\"/metadata/labels/new\",\"value\":\"2\"}]");
    api_status(&r, "Invalid", 422, "test failed");
    api_free(&r);
    char body[128];
    snprintf(body, sizeof(body), "{\"metadata\":{\"resourceVersion\":\"%ld\"}}", rv);
    API_EXPECT(&r, 409, "PATCH", PODS "/p", "application/merge-patch+json", body);
    api_status(&r, "Conflict", 409, NULL);
    api_free(&r);
    API_EXPECT(&r, 200, "PATCH", PODS "/p", "application/strategic-merge-patch+json", "{}");
    api_free(&r);
    API_EXPECT(&r, 422, "PATCH", PODS "/p", "application/apply-patch+yaml", "{}");
    api_status(&r, "Invalid", 422, NULL); /* served: fieldManager is required */
    api_free(&r);
    API_EXPECT(&r, 415, "PATCH", "/apis/scheduling.volcano.sh/v1beta1/queues/default",
               "application/strategic-merge-patch+json", "{}");
    api_free(&r);
    API_EXPECT(&r, 422, "PATCH", PODS "/p", "application/merge-patch+json",
               "{\"spec\":{\"containers\":null}}");
    api_status(&r, "Invalid", 422, "spec.containers");
    api_free(&r);
    API_EXPECT(&r, 404, "PATCH", PODS "/ghost", "application/merge-patch+json", "{}");
    api_free(&r);
}

Test(write, delete_unbound_pod_at_once)
{
    create_pod("p", NULL);
    api_resp_t r;
    API_EXPECT(&r, 200, "DELETE", PODS "/p", NULL, NULL);
    cr_assert_str_eq(api_str(r.json, "kind"), "Pod", "pods answer with the deleted object");
    api_free(&r);
    API_EXPECT(&r, 404, "GET", PODS "/p", NULL, NULL);
    api_free(&r);
    API_EXPECT(&r, 404, "DELETE", PODS "/p", NULL, NULL);
    api_status(&r, "NotFound", 404, "pods \"p\" not found");
    api_free(&r);
    API_EXPECT(&r, 201, "POST", "/api/v1/namespaces/default/configmaps", NULL,
               "{\"metadata\":{\"name\":\"c\"}}");
    api_free(&r);
    API_EXPECT(&r, 200, "DELETE", "/api/v1/namespaces/default/configmaps/c", NULL, NULL);
    cr_assert_str_eq(api_str(r.json, "kind"), "Status");
    cr_assert_str_eq(api_str(r.json, "status"), "Success");
    cr_assert_str_eq(api_str(r.json, "details.kind"), "configmaps");
    api_free(&r);
}

static void bind_to(const char *pod, const char *node, int code)
{
    char body[512], path[256];
    snprintf(body, sizeof(body),
             "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"%s\","
             "\"annotations\":{\"corral.dev/gpu-ids\":\"0,1\"}},\"target\":{\"apiVersion\":\"v1\","
             "\"kind\":\"Node\",\"name\":\"%s\"}}",
             pod, node);
    snprintf(path, sizeof(path), PODS "/%s/binding", pod);
    api_resp_t r;
    API_EXPECT(&r, code, "POST", path, NULL, body);
    if (code == 201) {
        api_status(&r, NULL, 201, NULL);
        cr_assert_str_eq(api_str(r.json, "status"), "Success");
    }
    api_free(&r);
}

Test(write, binding_sets_node_annotations_and_condition)
{
    create_pod("p", NULL);
    bind_to("p", "gpu-1", 201);
    api_resp_t r;
    get(&r, PODS "/p");
    cr_assert_str_eq(api_str(r.json, "spec.nodeName"), "gpu-1");
    cr_assert_str_eq(
        corral_val_get(corral_val_dig(r.json, "metadata.annotations"), "corral.dev/gpu-ids")->s,
        "0,1");
    corral_val_t *c = corral_val_dig(r.json, "status.conditions");
    cr_assert_eq(c->n, 1);
    cr_assert_str_eq(api_str(c->items[0], "type"), "PodScheduled");
    cr_assert_str_eq(api_str(c->items[0], "status"), "True");
    api_free(&r);
    API_EXPECT(&r, 409, "POST", PODS "/p/binding", NULL,
               "{\"metadata\":{\"name\":\"p\"},\"target\":{\"name\":\"gpu-2\"}}");
    api_status(&r, "Conflict", 409, "pod p is already assigned to node \"gpu-1\"");
    api_free(&r);
    API_EXPECT(&r, 404, "POST", PODS "/ghost/binding", NULL,
               "{\"metadata\":{\"name\":\"ghost\"},\"target\":{\"name\":\"n\"}}");
    api_free(&r);
    API_EXPECT(&r, 400, "POST", PODS "/p/binding", NULL,
               "{\"metadata\":{\"name\":\"q\"},\"target\":{\"name\":\"n\"}}");
    api_free(&r);
    create_pod("q", NULL);
    API_EXPECT(&r, 422, "POST", PODS "/q/binding", NULL, "{\"metadata\":{\"name\":\"q\"}}");
    api_status(&r, "Invalid", 422, "target.name");
    api_free(&r);
    /* The older collection form. */
    API_EXPECT(&r, 201, "POST", "/api/v1/namespaces/default/bindings", NULL,
               "{\"kind\":\"Binding\",\"metadata\":{\"name\":\"q\"},\"target\":{\"name\":\"n2\"}}");
    api_free(&r);
    API_EXPECT(&r, 200, "GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Dn2", NULL, NULL);
    cr_assert_eq(corral_val_get(r.json, "items")->n, 1);
    api_free(&r);
}

Test(write, bound_pods_are_deleted_gracefully)
{
    create_pod("p", NULL);
    bind_to("p", "n1", 201);
    api_resp_t r;
    API_EXPECT(&r, 200, "DELETE", PODS "/p", NULL, NULL);
    cr_assert_not_null(api_str(r.json, "metadata.deletionTimestamp"));
    cr_assert_str_eq(api_str(r.json, "metadata.deletionGracePeriodSeconds"), "30");
    cr_assert_str_eq(api_str(r.json, "metadata.generation"), "2");
    api_free(&r);
    get(&r, PODS "/p");
    api_free(&r);
    bind_to("p", "n2", 409); /* being deleted: cannot be bound */
    /* The node agent confirms with gracePeriodSeconds=0. */
    API_EXPECT(&r, 200, "DELETE", PODS "/p", NULL,
               "{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\",\"gracePeriodSeconds\":0}");
    api_free(&r);
    API_EXPECT(&r, 404, "GET", PODS "/p", NULL, NULL);
    api_free(&r);
    /* Or by reporting that the pod has stopped. */
    create_pod("s", NULL);
    bind_to("s", "n1", 201);
    API_EXPECT(&r, 200, "DELETE", PODS "/s?gracePeriodSeconds=60", NULL, NULL);
    cr_assert_str_eq(api_str(r.json, "metadata.deletionGracePeriodSeconds"), "60");
    api_free(&r);
    API_EXPECT(&r, 200, "PATCH", PODS "/s/status", "application/merge-patch+json",
               "{\"status\":{\"phase\":\"Succeeded\"}}");
    api_free(&r);
    API_EXPECT(&r, 404, "GET", PODS "/s", NULL, NULL);
    api_free(&r);
}

Test(write, finalizers_hold_deletion)
{
    api_resp_t r;
    API_EXPECT(&r, 201, "POST", "/api/v1/namespaces/default/configmaps", NULL,
               "{\"metadata\":{\"name\":\"f\",\"finalizers\":[\"corral.dev/keep\"]}}");
    api_free(&r);
    API_EXPECT(&r, 200, "DELETE", "/api/v1/namespaces/default/configmaps/f", NULL, NULL);
    cr_assert_str_eq(api_str(r.json, "kind"), "ConfigMap", "still there: the object is returned");
    cr_assert_not_null(api_str(r.json, "metadata.deletionTimestamp"));
    api_free(&r);
    API_EXPECT(&r, 422, "PATCH", "/api/v1/namespaces/default/configmaps/f",
               "application/merge-patch+json",
               "{\"metadata\":{\"finalizers\":[\"corral.dev/keep\",\"more\"]}}");
    api_status(&r, "Invalid", 422, "no new finalizers can be added");
    api_free(&r);
    API_EXPECT(&r, 200, "PATCH", "/api/v1/namespaces/default/configmaps/f",
               "application/merge-patch+json", "{\"metadata\":{\"finalizers\":null}}");
    api_free(&r);
    API_EXPECT(&r, 404, "GET", "/api/v1/namespaces/default/configmaps/f", NULL, NULL);
    api_free(&r);
}

Test(write, delete_preconditions)
{
    create_pod("p", NULL);
    api_resp_t r;
    API_EXPECT(&r, 409, "DELETE", PODS "/p", NULL,
               "{\"preconditions\":{\"resourceVersion\":\"1\"}}");
    api_status(&r, "Conflict", 409, "Precondition failed: ResourceVersion in precondition: 1");
    api_free(&r);
    API_EXPECT(&r, 409, "DELETE", PODS "/p", NULL, "{\"preconditions\":{\"uid\":\"x\"}}");
    api_free(&r);
    API_EXPECT(&r, 200, "DELETE", PODS "/p?dryRun=All", NULL, NULL);
    api_free(&r);
    get(&r, PODS "/p");
    api_free(&r);
}

Test(write, eviction)
{
    create_pod("p", NULL);
    api_resp_t r;
    API_EXPECT(
        &r, 201, "POST", PODS "/p/eviction", NULL,
        "{\"apiVersion\":\"policy/v1\",\"kind\":\"Eviction\",\"metadata\":{\"name\":\"p\"}}");
    api_status(&r, NULL, 201, NULL);
    cr_assert_str_eq(api_str(r.json, "status"), "Success");
    api_free(&r);
    API_EXPECT(&r, 404, "GET", PODS "/p", NULL, NULL);
    api_free(&r);
    create_pod("b", NULL);
    bind_to("b", "n1", 201);
    API_EXPECT(&r, 201, "POST", PODS "/b/eviction", NULL,
               "{\"apiVersion\":\"policy/v1beta1\",\"kind\":\"Eviction\",\"metadata\":{\"name\":"
               "\"b\"},\"deleteOptions\":{\"gracePeriodSeconds\":5}}");
    api_free(&r);
    get(&r, PODS "/b");
    cr_assert_str_eq(api_str(r.json, "metadata.deletionGracePeriodSeconds"), "5");
    api_free(&r);
    API_EXPECT(&r, 404, "POST", PODS "/ghost/eviction", NULL,
               "{\"apiVersion\":\"policy/v1\",\"kind\":\"Eviction\",\"metadata\":{\"name\":"
               "\"ghost\"}}");
    api_free(&r);
    API_EXPECT(&r, 400, "POST", PODS "/b/eviction", NULL,
               "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"b\"}}");
    api_free(&r);
}

Test(write, pod_log)
{
    create_pod("p", NULL);
    api_resp_t r;
    API_EXPECT(&r, 400, "GET", PODS "/p/log", NULL, NULL);
    api_status(&r, "BadRequest", 400, "not scheduled");
    api_free(&r);
    API_EXPECT(&r, 400, "GET", PODS "/p/log?container=nope", NULL, NULL);
    api_free(&r);
    bind_to("p", "n1", 201);
    /* Bound to a node that has no Node object: no log endpoint to proxy to
     * (test_api_logs.c covers the proxy). */
    API_EXPECT(&r, 500, "GET", PODS "/p/log?follow=true&tailLines=10", NULL, NULL);
    api_status(&r, "InternalError", 500, "node \"n1\", which does not exist");
    api_free(&r);
    API_EXPECT(&r, 404, "GET", PODS "/ghost/log", NULL, NULL);
    api_free(&r);
}

Test(write, namespace_deletion_takes_its_objects)
{
    api_resp_t r;
    API_EXPECT(&r, 201, "POST", "/api/v1/namespaces", NULL, "{\"metadata\":{\"name\":\"team\"}}");
    api_free(&r);
    API_EXPECT(&r, 201, "POST", "/api/v1/namespaces/team/configmaps", NULL,
               "{\"metadata\":{\"name\":\"c\"}}");
    api_free(&r);
    API_EXPECT(&r, 201, "POST", "/api/v1/namespaces/team/pods", NULL,
               "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":\"c\","
               "\"image\":\"i\"}]}}");
    api_free(&r);
    API_EXPECT(&r, 200, "DELETE", "/api/v1/namespaces/team", NULL, NULL);
    api_free(&r);
    API_EXPECT(&r, 404, "GET", "/api/v1/namespaces/team/configmaps/c", NULL, NULL);
    api_free(&r);
    API_EXPECT(&r, 200, "GET", "/api/v1/pods", NULL, NULL);
    cr_assert_eq(corral_val_get(r.json, "items")->n, 0);
    api_free(&r);
    API_EXPECT(&r, 403, "DELETE", "/api/v1/namespaces/default", NULL, NULL);
    api_status(&r, "Forbidden", 403, "may not be deleted");
    api_free(&r);
}

Test(write, delete_collection)
{
    for (int i = 0; i < 4; i++) {
        char name[16];
        snprintf(name, sizeof(name), "p%d", i);
        create_pod(name, i < 2 ? "\"nodeName\":\"n1\"," : NULL);
    }
    api_resp_t r;
    API_EXPECT(&r, 200, "DELETE", PODS "?fieldSelector=spec.nodeName%3D", NULL, NULL);
    cr_assert_str_eq(api_str(r.json, "kind"), "PodList");
    cr_assert_eq(corral_val_get(r.json, "items")->n, 2);
    api_free(&r);
    API_EXPECT(&r, 200, "GET", PODS, NULL, NULL);
    cr_assert_eq(corral_val_get(r.json, "items")->n, 2, "only the unbound pods went");
    api_free(&r);
    API_EXPECT(&r, 200, "DELETE", PODS, NULL, NULL);
    api_free(&r);
    API_EXPECT(&r, 200, "GET", PODS, NULL, NULL);
    corral_val_t *it = corral_val_get(r.json, "items");
    cr_assert_eq(it->n, 2);
    for (size_t i = 0; i < it->n; i++)
        cr_assert_not_null(api_str(it->items[i], "metadata.deletionTimestamp"),
                           "bound pods are being deleted gracefully");
    api_free(&r);
}

Test(write, concurrent_updates_without_precondition_all_apply)
{
    api_resp_t r;
    API_EXPECT(&r, 201, "POST", "/api/v1/namespaces/default/configmaps", NULL,
               "{\"metadata\":{\"name\":\"counter\"}}");
    api_free(&r);
    /* 20 patches, each adding its own key, over parallel connections: the
     * compare-and-swap retries must not lose any. */
    CURLM *m = curl_multi_init();
    CURL *h[20];
    struct curl_slist *hdr = curl_slist_append(NULL, "Content-Type: application/merge-patch+json");
    char bodies[20][64], url[256];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/api/v1/namespaces/default/configmaps/counter",
             api_srv.port);
    corral_buf_t sink;
    corral_buf_init(&sink);
    for (int i = 0; i < 20; i++) {
        h[i] = curl_easy_init();
        snprintf(bodies[i], sizeof(bodies[i]), "{\"data\":{\"k%d\":\"v\"}}", i);
        curl_easy_setopt(h[i], CURLOPT_URL, url);
        curl_easy_setopt(h[i], CURLOPT_CUSTOMREQUEST, "PATCH");
        curl_easy_setopt(h[i], CURLOPT_POSTFIELDS, bodies[i]);
        curl_easy_setopt(h[i], CURLOPT_HTTPHEADER, hdr);
        curl_easy_setopt(h[i], CURLOPT_WRITEFUNCTION, api_collect);
        curl_easy_setopt(h[i], CURLOPT_WRITEDATA, &sink);
        curl_multi_add_handle(m, h[i]);
    }
    int running = 1;
    while (running) {
        curl_multi_perform(m, &running);
        curl_multi_wait(m, NULL, 0, 100, NULL);
    }
    for (int i = 0; i < 20; i++) {
        long code = 0;
        curl_easy_getinfo(h[i], CURLINFO_RESPONSE_CODE, &code);
        cr_assert_eq(code, 200);
        curl_multi_remove_handle(m, h[i]);
        curl_easy_cleanup(h[i]);
    }
    curl_multi_cleanup(m);
    curl_slist_free_all(hdr);
    corral_buf_fini(&sink);
    get(&r, "/api/v1/namespaces/default/configmaps/counter");
    cr_assert_eq(corral_val_get(r.json, "data")->n, 20);
    api_free(&r);
}
