/* The API client library: kubeconfig resolution (contexts, clusters,
 * users, base64 data, tokenFile, relative paths, errors with lines),
 * configuration precedence (flags, CORRAL_SERVER, KUBECONFIG, defaults),
 * error messages from Status bodies, kubectl's human durations and table
 * layout. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "corral/client.h"
#include "corral/metrics.h"
#include "corral/table.h"

TestSuite(client, .timeout = 10);

static const char kc[] =
    "apiVersion: v1\n"
    "kind: Config\n"
    "clusters:\n"
    "- name: prod\n"
    "  cluster:\n"
    "    server: https://10.0.0.1:6443\n"
    "    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==\n"
    "- name: dev\n"
    "  cluster: {server: 'http://127.0.0.1:8080', insecure-skip-tls-verify: "
    "true, certificate-authority: ca.pem}\n"
    "contexts:\n"
    "- name: p\n"
    "  context: {cluster: prod, user: admin, namespace: ml}\n"
    "- name: d\n"
    "  context: {cluster: dev, user: tf}\n"
    "current-context: p\n"
    "users:\n"
    "- name: admin\n"
    "  user: {token: s3cret, client-key-data: aGVsbG8=}\n"
    "- name: tf\n"
    "  user: {tokenFile: tok}\n";

Test(client, kubeconfig_current_context)
{
    corral_client_config_t c;
    corral_client_config_init(&c);
    char err[256] = "";
    cr_assert_eq(
        corral_kubeconfig_parse(kc, strlen(kc), "/etc/kube/config", NULL, &c, err, sizeof(err)), 0,
        "%s", err);
    cr_assert_str_eq(c.server, "https://10.0.0.1:6443");
    cr_assert_str_eq(c.token, "s3cret");
    cr_assert_str_eq(c.namespace, "ml");
    cr_assert_eq(c.ca_data_len, 28);
    cr_assert_eq(memcmp(c.ca_data, "-----BEGIN CERTIFICATE-----\n", 28), 0);
    cr_assert_eq(c.key_data_len, 5);
    cr_assert_not(c.insecure);
    corral_client_config_fini(&c);
}

Test(client, kubeconfig_named_context_token_file_and_relative_paths)
{
    char dir[] = "/tmp/corral-kc-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof(path), "%s/tok", dir);
    FILE *fp = fopen(path, "w");
    fputs("from-file\nignored\n", fp);
    fclose(fp);
    snprintf(path, sizeof(path), "%s/config", dir);
    corral_client_config_t c;
    corral_client_config_init(&c);
    char err[256] = "";
    cr_assert_eq(corral_kubeconfig_parse(kc, strlen(kc), path, "d", &c, err, sizeof(err)), 0, "%s",
                 err);
    cr_assert_str_eq(c.server, "http://127.0.0.1:8080");
    cr_assert_str_eq(c.token, "from-file");
    cr_assert(c.insecure);
    char want[256];
    snprintf(want, sizeof(want), "%s/ca.pem", dir);
    cr_assert_str_eq(c.ca_file, want);
    cr_assert_null(c.namespace);
    corral_client_config_fini(&c);
    snprintf(path, sizeof(path), "%s/tok", dir);
    unlink(path);
    rmdir(dir);
}

static void kc_err(const char *text, const char *context, const char *want)
{
    corral_client_config_t c;
    corral_client_config_init(&c);
    char err[256] = "";
    cr_assert_eq(corral_kubeconfig_parse(text, strlen(text), "kc", context, &c, err, sizeof(err)),
                 CORRAL_EINVAL, "accepted: %s", text);
    cr_assert(strstr(err, want), "\"%s\" lacks \"%s\"", err, want);
    corral_client_config_fini(&c);
}

Test(client, kubeconfig_errors)
{
    kc_err(kc, "nope", "kc:11:1: context \"nope\" not found");
    kc_err("current-context: x\ncontexts: [{name: x, context: {cluster: c}}]\n", NULL,
           "cluster \"c\" not found");
    kc_err("contexts: []\n", NULL, "no current-context is set; pass --context NAME");
    kc_err("- a\n", NULL, "a kubeconfig is a mapping");
    kc_err("current-context: x\ncontexts: [{name: x, context: {cluster: c}}]\n"
           "clusters: [{name: c, cluster: {server: h, certificate-authority-data: '%%%'}}]\n",
           NULL, "certificate-authority-data is not valid base64");
    kc_err("current-context: x\ncontexts: [{name: x, context: {cluster: c}}]\n"
           "clusters: [{name: c, cluster: {}}]\n",
           NULL, "the cluster has no server");
    kc_err("a: [\n", NULL, "kc:");
}

Test(client, precedence_flags_env_kubeconfig_default)
{
    char dir[] = "/tmp/corral-kc-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[256], env[600];
    snprintf(path, sizeof(path), "%s/config", dir);
    FILE *fp = fopen(path, "w");
    fputs(kc, fp);
    fclose(fp);
    snprintf(env, sizeof(env), "%s/missing:%s", dir, path);
    setenv("KUBECONFIG", env, 1);
    unsetenv("CORRAL_SERVER");
    corral_client_flags_t f;
    memset(&f, 0, sizeof(f));
    corral_client_config_t c;
    corral_client_config_init(&c);
    char err[256] = "";
    cr_assert_eq(corral_client_config_load(&f, &c, err, sizeof(err)), 0, "%s", err);
    cr_assert_str_eq(c.server, "https://10.0.0.1:6443");
    cr_assert_str_eq(c.source, path);
    corral_client_config_fini(&c);
    setenv("CORRAL_SERVER", "127.0.0.1:7000/", 1);
    f.token = "flag-token";
    f.namespace = "team";
    cr_assert_eq(corral_client_config_load(&f, &c, err, sizeof(err)), 0, "%s", err);
    cr_assert_str_eq(c.server, "https://127.0.0.1:7000", "scheme from the CA, slash dropped");
    cr_assert_str_eq(c.token, "flag-token");
    cr_assert_str_eq(c.namespace, "team");
    corral_client_config_fini(&c);
    f.server = "http://h:1";
    cr_assert_eq(corral_client_config_load(&f, &c, err, sizeof(err)), 0, "%s", err);
    cr_assert_str_eq(c.server, "http://h:1");
    cr_assert_str_eq(c.source, "--server");
    corral_client_config_fini(&c);
    setenv("KUBECONFIG", "/nonexistent", 1);
    setenv("HOME", "/nonexistent", 1);
    unsetenv("CORRAL_SERVER");
    memset(&f, 0, sizeof(f));
    cr_assert_eq(corral_client_config_load(&f, &c, err, sizeof(err)), 0, "%s", err);
    cr_assert_str_eq(c.server, CORRAL_CLIENT_DEFAULT_SERVER);
    cr_assert_str_eq(c.namespace, "default");
    corral_client_config_fini(&c);
    f.kubeconfig = "/nonexistent/config";
    cr_assert_neq(corral_client_config_load(&f, &c, err, sizeof(err)), 0);
    cr_assert(strstr(err, "/nonexistent/config"), "%s", err);
    corral_client_config_fini(&c);
    unlink(path);
    rmdir(dir);
}

Test(client, error_messages_from_status_bodies)
{
    corral_client_resp_t r;
    corral_client_resp_init(&r);
    r.code = 404;
    corral_buf_puts(&r.body, "{\"kind\":\"Status\",\"message\":\"pods \\\"x\\\" not found\","
                             "\"reason\":\"NotFound\",\"code\":404}");
    char reason[64], msg[256];
    corral_client_error(&r, reason, sizeof(reason), msg, sizeof(msg));
    cr_assert_str_eq(reason, "NotFound");
    cr_assert_str_eq(msg, "pods \"x\" not found");
    corral_buf_reset(&r.body);
    corral_buf_puts(&r.body, "plain text\n");
    corral_client_error(&r, reason, sizeof(reason), msg, sizeof(msg));
    cr_assert_str_eq(reason, "");
    cr_assert_str_eq(msg, "plain text");
    corral_client_resp_fini(&r);
}

Test(client, human_durations_as_kubectl)
{
    static const struct {
        int64_t s;
        const char *want;
    } cases[] = {{-5, "<invalid>"},   {-1, "0s"},       {0, "0s"},      {119, "119s"},
                 {120, "2m"},         {185, "3m5s"},    {600, "10m"},   {10799, "179m"},
                 {10800, "3h"},       {12600, "3h30m"}, {28800, "8h"},  {172799, "47h"},
                 {172800, "2d"},      {180000, "2d2h"}, {691200, "8d"}, {63072000, "2y"},
                 {66000000, "2y33d"}, {300000000, "9y"}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char out[32];
        corral_human_duration(cases[i].s, out, sizeof(out));
        cr_assert_str_eq(out, cases[i].want, "%lld s", (long long)cases[i].s);
    }
}

Test(client, tables_pad_columns_by_three)
{
    const char *header[] = {"NAME", "STATUS"};
    const char *rows[] = {"a-long-name", "Running", "b", "Pending"};
    char *text = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&text, &len);
    corral_table_print(fp, header, rows, 2, 2);
    fclose(fp);
    cr_assert_str_eq(text, "NAME          STATUS\na-long-name   Running\nb             Pending\n");
    free(text);
}

static const char *big_page(corral_buf_t *out, void *arg)
{
    (void)arg;
    for (int i = 0; i < 4096; i++)
        corral_buf_puts(out, "0123456789abcdef0123456789abcdef\n");
    return "text/plain";
}

/* corral_client_set_limits: a body over the cap is an error, not a partial
 * answer; under it the request is as before. */
Test(client, limits_bound_the_body)
{
    corral_metrics_page_t pages[] = {{"/big", big_page, NULL}};
    corral_metrics_server_t *srv = NULL;
    char err[256];
    int port = 0;
    cr_assert_eq(corral_metrics_serve("127.0.0.1:0", NULL, pages, 1, &port, &srv, err, sizeof(err)),
                 0, "%s", err);
    corral_client_config_t cfg;
    corral_client_config_init(&cfg);
    char url[64];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
    free(cfg.server);
    cfg.server = strdup(url);
    corral_client_t *c = corral_client_new(&cfg);
    corral_client_set_limits(c, 2000, 4096);
    corral_client_resp_t r;
    corral_client_resp_init(&r);
    cr_assert_eq(corral_client_request(c, "GET", "/big", NULL, NULL, 0, &r), CORRAL_ETOOBIG);
    cr_assert(strstr(r.error, "larger than 4096 bytes"), "%s", r.error);
    corral_client_resp_fini(&r);
    corral_client_set_limits(c, 2000, 1 << 20);
    corral_client_resp_init(&r);
    cr_assert_eq(corral_client_request(c, "GET", "/big", NULL, NULL, 0, &r), 0, "%s", r.error);
    cr_assert_eq(r.code, 200);
    cr_assert_eq(r.body.len, 4096u * 33);
    corral_client_resp_fini(&r);
    corral_client_free(c);
    corral_client_config_fini(&cfg);
    corral_metrics_server_stop(srv);
}
