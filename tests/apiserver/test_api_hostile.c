/*
 * Requests meant to hurt the server (issue 10, point 5), at the unit level:
 * out-of-range parameters, JSON patches that grow without bound, YAML alias
 * bombs, and the start failures the review found. The same cases run
 * against the binary, with /healthz checked meanwhile, in
 * tests/cli/test_hostile.sh.
 */
#include <dirent.h>

#include "api_test.h"

TestSuite(hostile, .timeout = 60);

#define CMS "/api/v1/namespaces/default/configmaps"

Test(hostile, parameters_out_of_range_are_400, .init = api_start, .fini = api_stop)
{
    static const char *const bad[] = {
        CMS "?watch=1&resourceVersion=99999999999999999999",
        CMS "?watch=1&resourceVersion=-1",
        CMS "?watch=1&resourceVersion=abc",
        CMS "?watch=1&resourceVersion=%2B5",
        CMS "?watch=1&timeoutSeconds=-1",
        CMS "?watch=1&timeoutSeconds=1e3",
        CMS "?watch=1&timeoutSeconds=99999999999999999999",
        CMS "?watch=1&resourceVersion=1&resourceVersionMatch=Exact",
        CMS "?resourceVersion=x",
        CMS "?resourceVersion=18446744073709551616",
        CMS "?resourceVersionMatch=Exact",
        CMS "?resourceVersion=1&resourceVersionMatch=Newest",
        CMS "?resourceVersion=0&resourceVersionMatch=Exact",
        CMS "?limit=-1",
        CMS "?limit=ten",
        CMS "?limit=99999999999999999999",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        api_resp_t r;
        API_EXPECT(&r, 400, "GET", bad[i], NULL, NULL);
        api_status(&r, "BadRequest", 400, NULL);
        api_free(&r);
    }
    api_resp_t r;
    API_EXPECT(&r, 504, "GET", CMS "?resourceVersion=9223372036854775807", NULL, NULL);
    api_status(&r, "Timeout", 504, "Too large resource version");
    api_free(&r);
    API_EXPECT(&r, 200, "GET", CMS "?resourceVersion=1&resourceVersionMatch=NotOlderThan", NULL,
               NULL);
    api_free(&r);
}

static void short_wait(corral_apiserver_opts_t *o)
{
    o->future_rv_wait_ms = 200;
}

/* A watch at a revision far ahead waits (bounded), then gets kube's ERROR
 * event and the stream ends: before, INT64_MAX spun its loop thread. */
Test(hostile, watch_at_a_future_revision_ends_with_504)
{
    api_start_with(short_wait);
    api_resp_t r;
    API_EXPECT(&r, 200, "GET", CMS "?watch=1&resourceVersion=9223372036854775807", NULL, NULL);
    const char *b = corral_buf_str(&r.body);
    cr_assert(strstr(b, "\"type\":\"ERROR\""), "%s", b);
    cr_assert(strstr(b, "Too large resource version: 9223372036854775807"), "%s", b);
    cr_assert(strstr(b, "\"code\":504"), "%s", b);
    cr_assert(strstr(b, "ResourceVersionTooLarge"), "%s", b);
    api_free(&r);
    API_EXPECT(&r, 200, "GET", "/healthz", NULL, NULL);
    api_free(&r);
    api_stop();
}

static void json_patch_body(corral_buf_t *b, int copies, int tests, const char *tail)
{
    corral_buf_puts(b, "[{\"op\":\"add\",\"path\":\"/data\",\"value\":{\"x\":[\"");
    for (int i = 0; i < 100; i++)
        corral_buf_putc(b, 'y');
    corral_buf_puts(b, "\"]}}");
    for (int i = 0; i < copies; i++)
        corral_buf_puts(b, ",{\"op\":\"copy\",\"from\":\"/data/x\",\"path\":\"/data/x/-\"}");
    for (int i = 0; i < tests; i++)
        corral_buf_puts(b, ",{\"op\":\"test\",\"path\":\"/kind\",\"value\":\"ConfigMap\"}");
    corral_buf_puts(b, tail);
    corral_buf_puts(b, "]");
}

Test(hostile, json_patch_bounds, .init = api_start, .fini = api_stop)
{
    api_resp_t r;
    API_EXPECT(&r, 201, "POST", CMS, NULL,
               "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"p\"}}");
    api_free(&r);
    corral_buf_t b;
    corral_buf_init(&b);
    json_patch_body(&b, 40, 0, ""); /* 2^40 copies of 100 bytes */
    API_EXPECT(&r, 422, "PATCH", CMS "/p", "application/json-patch+json", corral_buf_str(&b));
    api_status(&r, "Invalid", 422, "accumulated size increase of copy");
    api_free(&r);
    corral_buf_reset(&b);
    json_patch_body(&b, 0, 10001, "");
    API_EXPECT(&r, 413, "PATCH", CMS "/p", "application/json-patch+json", corral_buf_str(&b));
    api_status(&r, "RequestEntityTooLarge", 413,
               "The allowed maximum operations in a JSON patch is 10000, got 10002");
    api_free(&r);
    corral_buf_reset(&b);
    json_patch_body(&b, 10, 9000, ",{\"op\":\"remove\",\"path\":\"/data/x\"}"); /* within limits */
    API_EXPECT(&r, 200, "PATCH", CMS "/p", "application/json-patch+json", corral_buf_str(&b));
    api_free(&r);
    corral_buf_fini(&b);
}

Test(hostile, yaml_alias_bomb_is_400_before_expanding, .init = api_start, .fini = api_stop)
{
    corral_buf_t b;
    corral_buf_init(&b);
    corral_buf_puts(&b, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bomb\n  labels:\n"
                        "    a0: &a0 xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\ndata:\n");
    for (int i = 1; i < 12; i++) {
        corral_buf_printf(&b, "  k%d: &a%d [", i, i);
        for (int j = 0; j < 10; j++)
            corral_buf_printf(&b, "%s*a%d", j ? "," : "", i - 1);
        corral_buf_puts(&b, "]\n");
    }
    api_resp_t r;
    API_EXPECT(&r, 400, "POST", CMS, "application/yaml", corral_buf_str(&b));
    api_status(&r, "BadRequest", 400, "aliases would expand the document by more than");
    api_free(&r);
    corral_buf_fini(&b);
}

static int open_fds(void)
{
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    cr_assert_not_null(d);
    while (readdir(d))
        n++;
    closedir(d);
    return n;
}

static void new_server(corral_apiserver_t **s, char *dir, size_t dl, int *rc)
{
    snprintf(dir, dl, "/tmp/corral-api-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    corral_apiserver_opts_t o;
    memset(&o, 0, sizeof(o));
    o.data_dir = dir;
    o.listen = "127.0.0.1:0";
    o.threads = 3;
    char err[256] = "";
    *rc = corral_apiserver_new(&o, s, err, sizeof(err));
}

/* A loop whose thread cannot start: the threads already running are
 * stopped and joined before their event bases are freed (under ASan, the
 * unit-san run, a use after free fails here). */
Test(hostile, failed_start_stops_the_threads_it_started)
{
    char dir[64];
    corral_apiserver_t *s = NULL;
    int rc = 0;
    new_server(&s, dir, sizeof(dir), &rc);
    cr_assert_eq(rc, 0);
    corral_apiserver_test_fail_thread = 2;
    cr_assert_eq(corral_apiserver_start(s), CORRAL_EIO);
    corral_apiserver_test_fail_thread = -1;
    corral_apiserver_free(s);
    api_rm_rf(dir);
}

/* A loop whose listener cannot be set up: no socket is left open. */
Test(hostile, failed_loop_leaks_no_socket)
{
    char dir[64];
    corral_apiserver_t *s = NULL;
    int rc = 0;
    int before = open_fds();
    corral_apiserver_test_fail_listener = 1;
    new_server(&s, dir, sizeof(dir), &rc);
    corral_apiserver_test_fail_listener = -1;
    cr_assert_eq(rc, CORRAL_EIO);
    cr_assert_null(s);
    cr_assert_eq(open_fds(), before);
    api_rm_rf(dir);
}

Test(hostile, listen_port_is_checked)
{
    static const char *const bad[] = {"127.0.0.1:99999", "127.0.0.1:abc", "127.0.0.1:-1",
                                      "127.0.0.1:+1", "127.0.0.1:65536"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        corral_apiserver_opts_t o;
        memset(&o, 0, sizeof(o));
        o.data_dir = "/nonexistent";
        o.listen = bad[i];
        corral_apiserver_t *s = NULL;
        char err[256] = "";
        cr_assert_eq(corral_apiserver_new(&o, &s, err, sizeof(err)), CORRAL_EINVAL, "%s", bad[i]);
        cr_assert(strstr(err, "port must be a number from 0 to 65535"), "%s", err);
    }
}
