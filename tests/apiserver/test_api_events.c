/* events.k8s.io/v1 Events over HTTP: the same stored objects as core v1
 * Events in another shape. Created through either API, read through both
 * with one name, uid and resourceVersion; field by field conversion; lists,
 * watches across the two APIs, field selectors with the events.k8s.io
 * labels, upstream's create validation (eventTime, reportingController,
 * reportingInstance, ...), discovery, and RBAC on group events.k8s.io as a
 * resource of its own. */
#include "api_test.h"

TestSuite(events, .init = api_start, .fini = api_stop, .timeout = 30);

#define EV1  "/apis/events.k8s.io/v1"
#define CORE "/api/v1"

/* A complete events.k8s.io/v1 Event about pod "p". */
static const char *new_event(const char *name)
{
    static char buf[1024];
    snprintf(buf, sizeof(buf),
             "{\"apiVersion\":\"events.k8s.io/v1\",\"kind\":\"Event\",\"metadata\":{\"name\":"
             "\"%s\"},\"eventTime\":\"2024-01-02T03:04:05.000000Z\",\"reportingController\":"
             "\"corral.dev/scheduler\",\"reportingInstance\":\"sched-1\",\"action\":\"Binding\","
             "\"reason\":\"Scheduled\",\"type\":\"Normal\",\"note\":\"bound to n1\","
             "\"regarding\":{\"kind\":\"Pod\",\"name\":\"p\",\"namespace\":\"default\"},"
             "\"related\":{\"kind\":\"Node\",\"name\":\"n1\"},"
             "\"series\":{\"count\":2,\"lastObservedTime\":\"2024-01-02T03:05:00.000000Z\"}}",
             name);
    return buf;
}

/* A core v1 Event (the legacy fields) about pod "q". */
static const char *old_event(const char *name)
{
    static char buf[1024];
    snprintf(buf, sizeof(buf),
             "{\"apiVersion\":\"v1\",\"kind\":\"Event\",\"metadata\":{\"name\":\"%s\"},"
             "\"involvedObject\":{\"kind\":\"Pod\",\"name\":\"q\",\"namespace\":\"default\"},"
             "\"reason\":\"Pulled\",\"message\":\"image pulled\",\"type\":\"Warning\","
             "\"source\":{\"component\":\"kubelet\",\"host\":\"n1\"},"
             "\"firstTimestamp\":\"2024-01-02T03:04:05Z\",\"lastTimestamp\":"
             "\"2024-01-02T03:04:09Z\",\"count\":3,\"reportingComponent\":\"kubelet\"}",
             name);
    return buf;
}

static void same_identity(const api_resp_t *a, const api_resp_t *b)
{
    cr_assert_str_eq(api_str(a->json, "metadata.name"), api_str(b->json, "metadata.name"));
    cr_assert_str_eq(api_str(a->json, "metadata.uid"), api_str(b->json, "metadata.uid"));
    cr_assert_str_eq(api_str(a->json, "metadata.resourceVersion"),
                     api_str(b->json, "metadata.resourceVersion"));
}

Test(events, created_through_events_api_read_through_core)
{
    api_resp_t c, g, e;
    API_EXPECT(&c, 201, "POST", EV1 "/namespaces/default/events", NULL, new_event("e1"));
    cr_assert_str_eq(api_str(c.json, "apiVersion"), "events.k8s.io/v1");
    cr_assert_str_eq(api_str(c.json, "kind"), "Event");
    cr_assert_str_eq(api_str(c.json, "note"), "bound to n1");
    cr_assert_str_eq(api_str(c.json, "regarding.name"), "p");
    cr_assert_str_eq(api_str(c.json, "reportingController"), "corral.dev/scheduler");
    cr_assert_null(corral_val_get(c.json, "message"));
    cr_assert_null(corral_val_get(c.json, "involvedObject"));

    API_EXPECT(&g, 200, "GET", CORE "/namespaces/default/events/e1", NULL, NULL);
    same_identity(&c, &g);
    cr_assert_str_eq(api_str(g.json, "apiVersion"), "v1");
    cr_assert_str_eq(api_str(g.json, "message"), "bound to n1");
    cr_assert_str_eq(api_str(g.json, "involvedObject.kind"), "Pod");
    cr_assert_str_eq(api_str(g.json, "involvedObject.name"), "p");
    cr_assert_str_eq(api_str(g.json, "reportingComponent"), "corral.dev/scheduler");
    cr_assert_str_eq(api_str(g.json, "reportingInstance"), "sched-1");
    cr_assert_str_eq(api_str(g.json, "action"), "Binding");
    cr_assert_str_eq(api_str(g.json, "related.name"), "n1");
    cr_assert_str_eq(api_str(g.json, "series.count"), "2");
    cr_assert_str_eq(api_str(g.json, "eventTime"), "2024-01-02T03:04:05.000000Z");
    cr_assert_null(corral_val_get(g.json, "note"));
    cr_assert_null(corral_val_get(g.json, "regarding"));
    cr_assert_null(corral_val_get(g.json, "reportingController"));

    API_EXPECT(&e, 200, "GET", EV1 "/namespaces/default/events/e1", NULL, NULL);
    same_identity(&c, &e);
    cr_assert_str_eq(api_str(e.json, "note"), "bound to n1");
    api_free(&c);
    api_free(&g);
    api_free(&e);

    API_EXPECT(&c, 409, "POST", CORE "/namespaces/default/events", NULL,
               "{\"metadata\":{\"name\":\"e1\"},\"involvedObject\":{\"kind\":\"Pod\"}}");
    api_status(&c, "AlreadyExists", 409, "events \"e1\" already exists");
    api_free(&c);
    API_EXPECT(&c, 409, "POST", EV1 "/namespaces/default/events", NULL, new_event("e1"));
    api_status(&c, "AlreadyExists", 409, "events.events.k8s.io \"e1\" already exists");
    api_free(&c);
    API_EXPECT(&c, 404, "GET", EV1 "/namespaces/default/events/none", NULL, NULL);
    api_status(&c, "NotFound", 404, "events.events.k8s.io \"none\" not found");
    api_free(&c);
}

Test(events, created_through_core_read_through_events_api)
{
    api_resp_t c, g;
    API_EXPECT(&c, 201, "POST", CORE "/namespaces/default/events", NULL, old_event("old"));
    API_EXPECT(&g, 200, "GET", EV1 "/namespaces/default/events/old", NULL, NULL);
    same_identity(&c, &g);
    cr_assert_str_eq(api_str(g.json, "apiVersion"), "events.k8s.io/v1");
    cr_assert_str_eq(api_str(g.json, "kind"), "Event");
    cr_assert_str_eq(api_str(g.json, "regarding.name"), "q");
    cr_assert_str_eq(api_str(g.json, "note"), "image pulled");
    cr_assert_str_eq(api_str(g.json, "reason"), "Pulled");
    cr_assert_str_eq(api_str(g.json, "type"), "Warning");
    cr_assert_str_eq(api_str(g.json, "deprecatedSource.component"), "kubelet");
    cr_assert_str_eq(api_str(g.json, "deprecatedSource.host"), "n1");
    cr_assert_str_eq(api_str(g.json, "deprecatedFirstTimestamp"), "2024-01-02T03:04:05Z");
    cr_assert_str_eq(api_str(g.json, "deprecatedLastTimestamp"), "2024-01-02T03:04:09Z");
    cr_assert_str_eq(api_str(g.json, "deprecatedCount"), "3");
    cr_assert_str_eq(api_str(g.json, "reportingController"), "kubelet");
    static const char *const core_only[] = {"involvedObject",    "message",       "source",
                                            "firstTimestamp",    "lastTimestamp", "count",
                                            "reportingComponent"};
    for (size_t i = 0; i < sizeof(core_only) / sizeof(core_only[0]); i++)
        cr_assert_null(corral_val_get(g.json, core_only[i]), "%s", core_only[i]);
    api_free(&c);
    api_free(&g);
}

Test(events, updates_and_patches_through_either_api)
{
    api_resp_t r;
    API_EXPECT(&r, 201, "POST", CORE "/namespaces/default/events", NULL, old_event("u"));
    api_free(&r);
    API_EXPECT(&r, 200, "PATCH", EV1 "/namespaces/default/events/u", "application/merge-patch+json",
               "{\"note\":\"patched\",\"deprecatedCount\":4}");
    cr_assert_str_eq(api_str(r.json, "note"), "patched");
    cr_assert_str_eq(api_str(r.json, "deprecatedCount"), "4");
    cr_assert_str_eq(api_str(r.json, "regarding.name"), "q");
    api_free(&r);
    API_EXPECT(&r, 200, "GET", CORE "/namespaces/default/events/u", NULL, NULL);
    cr_assert_str_eq(api_str(r.json, "message"), "patched");
    cr_assert_str_eq(api_str(r.json, "count"), "4");
    cr_assert_null(corral_val_get(r.json, "note"));
    api_free(&r);
    /* A replace in the events.k8s.io shape. */
    API_EXPECT(&r, 200, "PUT", EV1 "/namespaces/default/events/u", NULL,
               "{\"apiVersion\":\"events.k8s.io/v1\",\"kind\":\"Event\",\"metadata\":{\"name\":"
               "\"u\"},\"regarding\":{\"kind\":\"Pod\",\"name\":\"q2\"},\"note\":\"replaced\","
               "\"type\":\"Normal\"}");
    cr_assert_str_eq(api_str(r.json, "regarding.name"), "q2");
    api_free(&r);
    API_EXPECT(&r, 200, "GET", CORE "/namespaces/default/events/u", NULL, NULL);
    cr_assert_str_eq(api_str(r.json, "involvedObject.name"), "q2");
    cr_assert_str_eq(api_str(r.json, "message"), "replaced");
    cr_assert_null(corral_val_get(r.json, "count"));
    api_free(&r);
    /* A core body sent to the events.k8s.io URL is refused by apiVersion. */
    API_EXPECT(&r, 400, "PUT", EV1 "/namespaces/default/events/u", NULL, old_event("u"));
    api_status(&r, "BadRequest", 400, "(events.k8s.io/v1)");
    api_free(&r);
    API_EXPECT(&r, 200, "DELETE", EV1 "/namespaces/default/events/u", NULL, NULL);
    cr_assert_str_eq(api_str(r.json, "status"), "Success");
    cr_assert_str_eq(api_str(r.json, "details.group"), "events.k8s.io");
    api_free(&r);
    API_EXPECT(&r, 404, "GET", CORE "/namespaces/default/events/u", NULL, NULL);
    api_free(&r);
}

Test(events, lists_and_field_selectors)
{
    api_resp_t r;
    API_EXPECT(&r, 201, "POST", EV1 "/namespaces/default/events", NULL, new_event("a"));
    api_free(&r);
    API_EXPECT(&r, 201, "POST", CORE "/namespaces/default/events", NULL, old_event("b"));
    api_free(&r);
    API_EXPECT(&r, 200, "GET", EV1 "/namespaces/default/events", NULL, NULL);
    cr_assert_str_eq(api_str(r.json, "kind"), "EventList");
    cr_assert_str_eq(api_str(r.json, "apiVersion"), "events.k8s.io/v1");
    corral_val_t *items = corral_val_get(r.json, "items");
    cr_assert_eq(items->n, 2);
    for (size_t i = 0; i < items->n; i++) {
        cr_assert_str_eq(api_str(items->items[i], "apiVersion"), "events.k8s.io/v1");
        cr_assert_not_null(corral_val_get(items->items[i], "regarding"));
    }
    api_free(&r);
    API_EXPECT(&r, 200, "GET", EV1 "/events", NULL, NULL);
    cr_assert_eq(corral_val_get(r.json, "items")->n, 2);
    api_free(&r);

    static const struct {
        const char *sel, *name;
    } cases[] = {
        {"regarding.name%3Dq", "b"},
        {"regarding.kind%3DPod,regarding.name%3Dp", "a"},
        {"regarding.namespace%3Ddefault,type%3DWarning", "b"},
        {"reportingController%3Dcorral.dev/scheduler", "a"},
        {"reason%3DScheduled", "a"},
        {"metadata.name%3Db", "b"},
        {"metadata.namespace%3Ddefault,source%3Dkubelet", "b"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char path[256];
        snprintf(path, sizeof(path), EV1 "/namespaces/default/events?fieldSelector=%s",
                 cases[i].sel);
        API_EXPECT(&r, 200, "GET", path, NULL, NULL);
        items = corral_val_get(r.json, "items");
        cr_assert_eq(items->n, 1, "%s: %s", cases[i].sel, corral_buf_str(&r.body));
        cr_assert_str_eq(api_str(items->items[0], "metadata.name"), cases[i].name);
        api_free(&r);
    }
    /* The core spellings are not labels of events.k8s.io/v1, and the
     * events.k8s.io ones not of core v1 (as upstream). */
    API_EXPECT(&r, 400, "GET", EV1 "/events?fieldSelector=involvedObject.name%3Dq", NULL, NULL);
    api_status(&r, "BadRequest", 400, "field label not supported: involvedObject.name");
    api_free(&r);
    API_EXPECT(&r, 400, "GET", CORE "/events?fieldSelector=regarding.name%3Dq", NULL, NULL);
    api_status(&r, "BadRequest", 400, "field label not supported: regarding.name");
    api_free(&r);
    API_EXPECT(&r, 200, "GET", CORE "/events?fieldSelector=involvedObject.name%3Dq", NULL, NULL);
    cr_assert_eq(corral_val_get(r.json, "items")->n, 1);
    api_free(&r);
}

Test(events, watches_see_writes_through_the_other_api)
{
    api_watch_t *ev = api_watch_open(EV1 "/namespaces/default/events?watch=1");
    api_watch_t *core = api_watch_open(CORE "/namespaces/default/events?watch=1");
    api_watch_t *sel =
        api_watch_open(EV1 "/namespaces/default/events?watch=1&fieldSelector=regarding.name%3Dq");
    api_resp_t r;
    API_EXPECT(&r, 201, "POST", CORE "/namespaces/default/events", NULL, old_event("w1"));
    api_free(&r);
    API_EXPECT(&r, 201, "POST", EV1 "/namespaces/default/events", NULL, new_event("w2"));
    api_free(&r);

    api_expect_event(ev, "ADDED", "w1");
    cr_assert(strstr(ev->line, "\"apiVersion\":\"events.k8s.io/v1\""), "%s", ev->line);
    cr_assert(strstr(ev->line, "\"regarding\":{"), "%s", ev->line);
    cr_assert(strstr(ev->line, "\"note\":\"image pulled\""), "%s", ev->line);
    cr_assert_null(strstr(ev->line, "involvedObject"), "%s", ev->line);
    api_expect_event(ev, "ADDED", "w2");

    api_expect_event(core, "ADDED", "w1");
    api_expect_event(core, "ADDED", "w2");
    cr_assert(strstr(core->line, "\"apiVersion\":\"v1\""), "%s", core->line);
    cr_assert(strstr(core->line, "\"involvedObject\":{"), "%s", core->line);
    cr_assert(strstr(core->line, "\"message\":\"bound to n1\""), "%s", core->line);

    api_expect_event(sel, "ADDED", "w1"); /* w2 is about p */
    API_EXPECT(&r, 200, "DELETE", CORE "/namespaces/default/events/w1", NULL, NULL);
    api_free(&r);
    api_expect_event(sel, "DELETED", "w1");
    cr_assert(strstr(sel->line, "\"regarding\":{"), "%s", sel->line);
    api_expect_event(ev, "DELETED", "w1");
    api_watch_close(ev);
    api_watch_close(core);
    api_watch_close(sel);
}

static const corral_val_t *cause0(const api_resp_t *r)
{
    const corral_val_t *c = corral_val_dig(r->json, "details.causes");
    cr_assert(c && c->kind == CORRAL_VAL_SEQ && c->n > 0, "%s", corral_buf_str(&r->body));
    return c->items[0];
}

Test(events, create_validation_follows_upstream)
{
    api_resp_t r;
    /* eventTime is required through events.k8s.io/v1 (not through core v1). */
    API_EXPECT(&r, 422, "POST", EV1 "/namespaces/default/events", NULL,
               "{\"metadata\":{\"name\":\"x\"},\"type\":\"Normal\",\"regarding\":{\"kind\":"
               "\"Pod\",\"name\":\"p\"}}");
    api_status(&r, "Invalid", 422,
               "Event.events.k8s.io \"x\" is invalid: eventTime: Required value");
    cr_assert_str_eq(api_str(r.json, "details.group"), "events.k8s.io");
    cr_assert_str_eq(api_str(r.json, "details.kind"), "Event");
    cr_assert_str_eq(api_str(cause0(&r), "field"), "eventTime");
    api_free(&r);
    /* With an eventTime the reporter, action and reason are required. */
    API_EXPECT(&r, 422, "POST", EV1 "/namespaces/default/events", NULL,
               "{\"metadata\":{\"name\":\"x\"},\"eventTime\":\"2024-01-02T03:04:05.000000Z\","
               "\"type\":\"Normal\",\"regarding\":{\"kind\":\"Pod\",\"name\":\"p\"}}");
    api_status(&r, "Invalid", 422,
               "Event.events.k8s.io \"x\" is invalid: [reportingController: Required value, "
               "reportingInstance: Required value, action: Required value, reason: Required "
               "value]");
    api_free(&r);
    /* The deprecated fields are for core v1 writers; type is Normal or Warning. */
    API_EXPECT(&r, 422, "POST", EV1 "/namespaces/default/events", NULL,
               "{\"metadata\":{\"name\":\"x\"},\"eventTime\":\"2024-01-02T03:04:05.000000Z\","
               "\"reportingController\":\"c\",\"reportingInstance\":\"i\",\"action\":\"A\","
               "\"reason\":\"R\",\"type\":\"Bad\",\"deprecatedCount\":2,"
               "\"deprecatedSource\":{\"component\":\"kubelet\"},"
               "\"regarding\":{\"kind\":\"Pod\",\"name\":\"p\"}}");
    api_status(&r, "Invalid", 422,
               "[type: Invalid value: \"\": has invalid value: Bad, deprecatedCount: Invalid "
               "value: \"\": needs to be unset, deprecatedSource: Invalid value: \"\": needs to "
               "be unset]");
    api_free(&r);
    /* The object model's errors name the events.k8s.io fields. */
    API_EXPECT(&r, 422, "POST", EV1 "/namespaces/default/events", NULL,
               "{\"metadata\":{\"name\":\"x\"},\"eventTime\":\"2024-01-02T03:04:05.000000Z\","
               "\"reportingController\":\"c\",\"reportingInstance\":\"i\",\"action\":\"A\","
               "\"reason\":\"R\",\"type\":\"Normal\",\"regarding\":{\"kind\":7}}");
    cr_assert_str_eq(api_str(cause0(&r), "field"), "regarding.kind", "%s", corral_buf_str(&r.body));
    api_free(&r);
    /* Core v1 keeps its legacy rules: no eventTime needed. */
    API_EXPECT(&r, 201, "POST", CORE "/namespaces/default/events", NULL,
               "{\"metadata\":{\"name\":\"x\"},\"involvedObject\":{\"kind\":\"Pod\"}}");
    api_free(&r);
}

Test(events, discovery_lists_events_k8s_io)
{
    api_resp_t r;
    API_EXPECT(&r, 200, "GET", "/apis", NULL, NULL);
    cr_assert(strstr(corral_buf_str(&r.body),
                     "{\"name\":\"events.k8s.io\",\"versions\":[{\"groupVersion\":"
                     "\"events.k8s.io/v1\",\"version\":\"v1\"}],\"preferredVersion\":{"
                     "\"groupVersion\":\"events.k8s.io/v1\",\"version\":\"v1\"}}"),
              "%s", corral_buf_str(&r.body));
    api_free(&r);
    API_EXPECT(&r, 200, "GET", "/apis/events.k8s.io", NULL, NULL);
    cr_assert_str_eq(api_str(r.json, "kind"), "APIGroup");
    cr_assert_str_eq(api_str(r.json, "name"), "events.k8s.io");
    cr_assert_str_eq(api_str(r.json, "preferredVersion.groupVersion"), "events.k8s.io/v1");
    api_free(&r);
    API_EXPECT(&r, 200, "GET", EV1, NULL, NULL);
    cr_assert_str_eq(corral_buf_str(&r.body),
                     "{\"kind\":\"APIResourceList\",\"apiVersion\":\"v1\",\"groupVersion\":"
                     "\"events.k8s.io/v1\",\"resources\":[{\"name\":\"events\",\"singularName\":"
                     "\"event\",\"namespaced\":true,\"kind\":\"Event\",\"verbs\":[\"create\","
                     "\"delete\",\"deletecollection\",\"get\",\"list\",\"patch\",\"update\","
                     "\"watch\"],\"shortNames\":[\"ev\"]}]}");
    api_free(&r);
    API_EXPECT(&r, 404, "GET", "/apis/events.k8s.io/v1beta1", NULL, NULL);
    api_free(&r);
    API_EXPECT(&r, 200, "GET", "/openapi/v2", NULL, NULL);
    cr_assert(strstr(corral_buf_str(&r.body), "\"io.k8s.api.events.v1.Event\":{"));
    api_free(&r);
}

Test(events, namespace_deletion_takes_events_once)
{
    api_resp_t r;
    API_EXPECT(&r, 201, "POST", CORE "/namespaces", NULL, "{\"metadata\":{\"name\":\"ml\"}}");
    api_free(&r);
    API_EXPECT(&r, 201, "POST", EV1 "/namespaces/ml/events", NULL,
               "{\"metadata\":{\"name\":\"e\"},\"eventTime\":\"2024-01-02T03:04:05.000000Z\","
               "\"reportingController\":\"c\",\"reportingInstance\":\"i\",\"action\":\"A\","
               "\"reason\":\"R\",\"type\":\"Normal\",\"regarding\":{\"kind\":\"Pod\","
               "\"name\":\"p\",\"namespace\":\"ml\"}}");
    api_free(&r);
    API_EXPECT(&r, 200, "DELETE", CORE "/namespaces/ml", NULL, NULL);
    api_free(&r);
    API_EXPECT(&r, 404, "GET", EV1 "/namespaces/ml/events/e", NULL, NULL);
    api_free(&r);
}

/* --- RBAC: events.k8s.io events are a resource of their own ------------------------------ */

static void with_tokens(corral_apiserver_opts_t *o)
{
    o->token_auth_file = api_write_file(api_srv.dir, "tokens.csv",
                                        "admin-token,admin,1,\"system:masters\"\n"
                                        "alice-token,alice,2\n");
}

static void start_secure(void)
{
    api_start_with(with_tokens);
    api_srv.token = "admin-token";
}

TestSuite(events_rbac, .init = start_secure, .fini = api_stop, .timeout = 30);

static long as_alice(api_resp_t *r, const char *method, const char *path)
{
    api_srv.token = "alice-token";
    api_req(r, method, path, NULL, NULL);
    api_srv.token = "admin-token";
    return r->code;
}

Test(events_rbac, group_events_k8s_io_is_authorized_separately)
{
    api_resp_t r;
    API_EXPECT(&r, 201, "POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles", NULL,
               "{\"metadata\":{\"name\":\"ev-reader\"},\"rules\":[{\"apiGroups\":"
               "[\"events.k8s.io\"],\"resources\":[\"events\"],\"verbs\":[\"get\",\"list\"]}]}");
    api_free(&r);
    API_EXPECT(&r, 201, "POST",
               "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings", NULL,
               "{\"metadata\":{\"name\":\"ev-reader\"},\"roleRef\":{\"apiGroup\":"
               "\"rbac.authorization.k8s.io\",\"kind\":\"Role\",\"name\":\"ev-reader\"},"
               "\"subjects\":[{\"kind\":\"User\",\"name\":\"alice\"}]}");
    api_free(&r);
    API_EXPECT(&r, 201, "POST", CORE "/namespaces/default/events", NULL, old_event("o"));
    api_free(&r);

    cr_assert_eq(as_alice(&r, "GET", EV1 "/namespaces/default/events"), 200, "%s",
                 corral_buf_str(&r.body));
    cr_assert_eq(corral_val_get(r.json, "items")->n, 1);
    api_free(&r);
    cr_assert_eq(as_alice(&r, "GET", EV1 "/namespaces/default/events/o"), 200);
    cr_assert_str_eq(api_str(r.json, "regarding.name"), "q");
    api_free(&r);
    /* The core resource is another one: not granted by the rule. */
    cr_assert_eq(as_alice(&r, "GET", CORE "/namespaces/default/events"), 403);
    api_status(&r, "Forbidden", 403,
               "events is forbidden: User \"alice\" cannot list resource \"events\" in API group "
               "\"\" in the namespace \"default\"");
    api_free(&r);
    cr_assert_eq(as_alice(&r, "DELETE", EV1 "/namespaces/default/events/o"), 403);
    api_status(&r, "Forbidden", 403,
               "events.events.k8s.io \"o\" is forbidden: User \"alice\" cannot delete resource "
               "\"events\" in API group \"events.k8s.io\" in the namespace \"default\"");
    api_free(&r);
    cr_assert_eq(as_alice(&r, "GET", EV1 "/namespaces/kube-system/events"), 403);
    api_free(&r);
}
