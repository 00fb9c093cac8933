/* Server-side apply, managedFields, dryRun and fieldValidation over HTTP:
 * apply creates (201) and updates, fieldManager is required, conflicts
 * are 409 with FieldManagerConflict causes, force takes over, managedFields
 * follow creates, updates and status writes, [{}] clears them, dryRun=All
 * writes nothing, fieldValidation Strict/Warn/Ignore with unknown and
 * duplicate fields. */
#include "api_test.h"

TestSuite(apply, .init = api_start, .fini = api_stop, .timeout = 30);

#define CMS   "/api/v1/namespaces/default/configmaps"
#define APPLY "application/apply-patch+yaml"

Test(apply, create_update_conflict_force)
{
    api_resp_t r;
    const char *cfg = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: \"1\"\n";
    API_EXPECT(&r, 422, "PATCH", CMS "/c", APPLY, cfg);
    cr_assert(strstr(corral_buf_str(&r.body), "fieldManager: Required value"));
    api_free(&r);
    API_EXPECT(&r, 201, "PATCH", CMS "/c?fieldManager=one", APPLY, cfg);
    cr_assert_str_eq(api_str(r.json, "data.a"), "1");
    api_free(&r);
    API_EXPECT(&r, 200, "PATCH", CMS "/c?fieldManager=one", APPLY, cfg);
    api_free(&r);
    const char *other =
        "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c\"},"
        "\"data\":{\"a\":\"2\"}}";
    API_EXPECT(&r, 409, "PATCH", CMS "/c?fieldManager=two", APPLY, other);
    const char *b = corral_buf_str(&r.body);
    cr_assert(strstr(b, "Apply failed with 1 conflict: conflict with \\\"one\\\": .data.a"), "%s",
              b);
    cr_assert(strstr(b, "\"type\":\"FieldManagerConflict\""), "%s", b);
    cr_assert(strstr(b, "\"reason\":\"Conflict\""), "%s", b);
    api_free(&r);
    API_EXPECT(&r, 200, "PATCH", CMS "/c?fieldManager=two&force=true", APPLY, other);
    cr_assert_str_eq(api_str(r.json, "data.a"), "2");
    cr_assert(strstr(corral_buf_str(&r.body), "\"manager\":\"two\""));
    api_free(&r);
    /* force on a merge patch is refused. */
    API_EXPECT(&r, 422, "PATCH", CMS "/c?force=true", "application/merge-patch+json", "{}");
    api_free(&r);
}

Test(apply, managed_fields_on_updates_and_clearing)
{
    api_resp_t r;
    API_EXPECT(&r, 201, "POST", CMS "?fieldManager=creator", NULL,
               "{\"metadata\":{\"name\":\"m\"},\"data\":{\"a\":\"1\"}}");
    cr_assert(strstr(corral_buf_str(&r.body),
                     "\"manager\":\"creator\",\"operation\":\"Update\",\"apiVersion\":\"v1\""));
    cr_assert(strstr(corral_buf_str(&r.body), "\"fieldsV1\":{\"f:data\":{\".\":{},\"f:a\":{}}}"));
    api_free(&r);
    /* A patch without managedFields keeps them and adds its manager. */
    API_EXPECT(&r, 200, "PATCH", CMS "/m?fieldManager=patcher", "application/merge-patch+json",
               "{\"data\":{\"b\":\"2\"}}");
    cr_assert(strstr(corral_buf_str(&r.body), "\"manager\":\"creator\""));
    cr_assert(strstr(corral_buf_str(&r.body), "\"manager\":\"patcher\""));
    api_free(&r);
    /* [{}] clears them. */
    API_EXPECT(&r, 200, "PATCH", CMS "/m", "application/merge-patch+json",
               "{\"metadata\":{\"managedFields\":[{}]}}");
    cr_assert_null(strstr(corral_buf_str(&r.body), "managedFields"), "%s", corral_buf_str(&r.body));
    api_free(&r);
}

Test(apply, dry_run_writes_nothing)
{
    api_resp_t r;
    API_EXPECT(&r, 201, "POST", CMS "?dryRun=All", NULL,
               "{\"metadata\":{\"generateName\":\"g-\"},\"data\":{\"a\":\"1\"}}");
    cr_assert_not_null(api_str(r.json, "metadata.uid"));
    cr_assert_not_null(api_str(r.json, "metadata.creationTimestamp"));
    cr_assert_null(api_str(r.json, "metadata.resourceVersion"));
    cr_assert_eq(strncmp(api_str(r.json, "metadata.name"), "g-", 2), 0);
    api_free(&r);
    API_EXPECT(&r, 200, "GET", CMS, NULL, NULL);
    cr_assert_null(strstr(corral_buf_str(&r.body), "\"g-"));
    api_free(&r);
    API_EXPECT(&r, 422, "POST", CMS "?dryRun=Some", NULL, "{\"metadata\":{\"name\":\"x\"}}");
    cr_assert(strstr(corral_buf_str(&r.body), "dryRun: Unsupported value: \\\"Some\\\""));
    api_free(&r);
    API_EXPECT(&r, 201, "POST", CMS, NULL,
               "{\"metadata\":{\"name\":\"d\"},\"data\":{\"a\":\"1\"}}");
    const char *rv = corral_arena_strdup(&r.a, api_str(r.json, "metadata.resourceVersion"));
    char want[64];
    snprintf(want, sizeof(want), "%s", rv);
    api_free(&r);
    API_EXPECT(&r, 200, "PATCH", CMS "/d?dryRun=All", "application/merge-patch+json",
               "{\"data\":{\"a\":\"2\"}}");
    cr_assert_str_eq(api_str(r.json, "data.a"), "2");
    cr_assert_str_eq(api_str(r.json, "metadata.resourceVersion"), want);
    api_free(&r);
    API_EXPECT(&r, 200, "PATCH", CMS "/d?dryRun=All&fieldManager=x&force=true", APPLY,
               "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"d\"},"
               "\"data\":{\"a\":\"3\"}}");
    api_free(&r);
    API_EXPECT(&r, 200, "DELETE", CMS "/d?dryRun=All", NULL, NULL);
    api_free(&r);
    API_EXPECT(&r, 200, "GET", CMS "/d", NULL, NULL);
    cr_assert_str_eq(api_str(r.json, "data.a"), "1");
    cr_assert_str_eq(api_str(r.json, "metadata.resourceVersion"), want);
    api_free(&r);
    API_EXPECT(&r, 422, "DELETE", CMS "/d?dryRun=x", NULL, NULL);
    api_free(&r);
}

Test(apply, field_validation)
{
    api_resp_t r;
    const char *body = "{\"metadata\":{\"name\":\"v\",\"name\":\"v\"},\"data\":{},\"foo\":1}";
    API_EXPECT(&r, 400, "POST", CMS "?fieldValidation=Strict", NULL, body);
    cr_assert(strstr(corral_buf_str(&r.body),
                     "strict decoding error: unknown field \\\"foo\\\", duplicate field "
                     "\\\"metadata.name\\\""),
              "%s", corral_buf_str(&r.body));
    api_free(&r);
    API_EXPECT(&r, 422, "POST", CMS "?fieldValidation=Loose", NULL, body);
    api_free(&r);
    API_EXPECT(&r, 201, "POST", CMS "?fieldValidation=Ignore&dryRun=All", NULL, body);
    cr_assert_null(strstr(corral_buf_str(&r.headers), "Warning"));
    api_free(&r);
    API_EXPECT(&r, 201, "POST", CMS, NULL, body);
    cr_assert(strstr(corral_buf_str(&r.headers), "duplicate field \\\"metadata.name\\\""));
    cr_assert(strstr(corral_buf_str(&r.headers), "unknown field"));
    api_free(&r);
}
