/*
 * Client configuration as client-go resolves it: several kubeconfig files
 * merged ($KUBECONFIG), exec plugins in kubeconfigs and ExecCredential
 * answers, the plugin's cache and expiry, the in-cluster service account
 * and where it sits in the precedence, the token bucket on an injected
 * clock.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "corral/client.h"

TestSuite(clientcfg, .timeout = 20);

static char tmp[64];

static void mktmp(void)
{
    snprintf(tmp, sizeof(tmp), "/tmp/corral-cfg-XXXXXX");
    cr_assert_not_null(mkdtemp(tmp));
}

static void put(const char *name, const char *text)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/%s", tmp, name);
    if (strchr(name, '/')) {
        char dir[256];
        snprintf(dir, sizeof(dir), "%s", path);
        *strrchr(dir, '/') = '\0';
        mkdir(dir, 0700);
    }
    FILE *fp = fopen(path, "w");
    cr_assert_not_null(fp, "%s", path);
    fputs(text, fp);
    fclose(fp);
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void rmtmp(void)
{
    cr_assert_eq(nftw(tmp, rm_one, 8, FTW_DEPTH | FTW_PHYS), 0);
}

static void clear_env(void)
{
    unsetenv("CORRAL_SERVER");
    unsetenv("KUBERNETES_SERVICE_HOST");
    unsetenv("KUBERNETES_SERVICE_PORT");
    unsetenv("POD_NAMESPACE");
    setenv("HOME", "/nonexistent", 1);
    setenv("KUBECONFIG", "/nonexistent", 1);
}

/* --- KUBECONFIG merged ------------------------------------------------------------------- */

static const char file_a[] = "apiVersion: v1\n"
                             "kind: Config\n"
                             "current-context: a-ctx\n"
                             "contexts:\n"
                             "- {name: a-ctx, context: {cluster: shared, user: ua, namespace: "
                             "from-a}}\n"
                             "clusters:\n"
                             "- {name: shared, cluster: {server: 'https://a.example:6443'}}\n"
                             "users:\n"
                             "- {name: ua, user: {token: from-a}}\n";

static const char file_b[] = "apiVersion: v1\n"
                             "kind: Config\n"
                             "current-context: b-ctx\n"
                             "contexts:\n"
                             "- {name: a-ctx, context: {cluster: only-b, user: ub}}\n"
                             "- {name: b-ctx, context: {cluster: shared, user: ub}}\n"
                             "- {name: c-ctx, context: {cluster: only-b, user: ub}}\n"
                             "clusters:\n"
                             "- {name: shared, cluster: {server: 'https://b.example:6443'}}\n"
                             "- {name: only-b, cluster: {server: 'https://only-b:6443', "
                             "certificate-authority: ca.pem}}\n"
                             "users:\n"
                             "- {name: ua, user: {token: from-b}}\n"
                             "- {name: ub, user: {tokenFile: tok}}\n";

Test(clientcfg, kubeconfig_files_merge_first_wins)
{
    clear_env();
    mktmp();
    put("a/config", file_a);
    put("b/config", file_b);
    put("b/tok", "b-file-token\n");
    char env[512];
    snprintf(env, sizeof(env), "%s/missing::%s/a/config:%s/b/config:%s/a/config", tmp, tmp, tmp,
             tmp);
    setenv("KUBECONFIG", env, 1);
    corral_client_flags_t f = {0};
    corral_client_config_t c;
    corral_client_config_init(&c);
    char err[512] = "";
    /* current-context from the first file setting it; a-ctx and its cluster
     * and user from the first file naming them */
    cr_assert_eq(corral_client_config_load(&f, &c, err, sizeof(err)), 0, "%s", err);
    cr_assert_str_eq(c.server, "https://a.example:6443");
    cr_assert_str_eq(c.token, "from-a");
    cr_assert_str_eq(c.namespace, "from-a");
    char want[256];
    snprintf(want, sizeof(want), "%s/a/config:%s/b/config", tmp, tmp);
    cr_assert_str_eq(c.source, want);
    cr_assert_eq(c.qps, 0, "client-go's defaults when no flag sets them");
    corral_client_config_fini(&c);
    /* b-ctx: b's context, the shared cluster still a's, b's user whose
     * tokenFile is relative to b's directory */
    f.context = "b-ctx";
    cr_assert_eq(corral_client_config_load(&f, &c, err, sizeof(err)), 0, "%s", err);
    cr_assert_str_eq(c.server, "https://a.example:6443");
    cr_assert_str_eq(c.token, "b-file-token");
    snprintf(want, sizeof(want), "%s/b/tok", tmp);
    cr_assert_str_eq(c.token_file, want);
    cr_assert_str_eq(c.namespace, "default");
    corral_client_config_fini(&c);
    f.context = "c-ctx";
    cr_assert_eq(corral_client_config_load(&f, &c, err, sizeof(err)), 0, "%s", err);
    cr_assert_str_eq(c.server, "https://only-b:6443");
    snprintf(want, sizeof(want), "%s/b/ca.pem", tmp);
    cr_assert_str_eq(c.ca_file, want);
    corral_client_config_fini(&c);
    f.context = "nope";
    cr_assert_neq(corral_client_config_load(&f, &c, err, sizeof(err)), 0);
    cr_assert(strstr(err, "context \"nope\" not found"), "%s", err);
    corral_client_config_fini(&c);
    /* --kubeconfig names one file: no merging */
    snprintf(want, sizeof(want), "%s/b/config", tmp);
    f.context = NULL;
    f.kubeconfig = want;
    cr_assert_eq(corral_client_config_load(&f, &c, err, sizeof(err)), 0, "%s", err);
    cr_assert_str_eq(c.server, "https://b.example:6443");
    corral_client_config_fini(&c);
    /* a broken file of the list is an error naming it */
    put("bad", "clusters: [\n");
    snprintf(env, sizeof(env), "%s/a/config:%s/bad", tmp, tmp);
    setenv("KUBECONFIG", env, 1);
    f.kubeconfig = NULL;
    cr_assert_neq(corral_client_config_load(&f, &c, err, sizeof(err)), 0);
    cr_assert(strstr(err, "/bad:"), "%s", err);
    corral_client_config_fini(&c);
    rmtmp();
}

/* --- exec in a kubeconfig ------------------------------------------------------------------ */

static void exec_err(const char *user, const char *want)
{
    char text[1024];
    snprintf(text, sizeof(text),
             "current-context: x\ncontexts: [{name: x, context: {cluster: c, user: u}}]\n"
             "clusters: [{name: c, cluster: {server: 'https://h'}}]\n"
             "users: [{name: u, user: %s}]\n",
             user);
    corral_client_config_t c;
    corral_client_config_init(&c);
    char err[256] = "";
    cr_assert_eq(corral_kubeconfig_parse(text, strlen(text), "kc", NULL, &c, err, sizeof(err)),
                 CORRAL_EINVAL, "accepted %s", user);
    cr_assert(strstr(err, want), "\"%s\" lacks \"%s\"", err, want);
    corral_client_config_fini(&c);
}

Test(clientcfg, kubeconfig_exec_plugins)
{
    static const char kc[] =
        "current-context: x\n"
        "contexts: [{name: x, context: {cluster: c, user: u}}]\n"
        "clusters: [{name: c, cluster: {server: 'https://h:6443', tls-server-name: api}}]\n"
        "users:\n"
        "- name: u\n"
        "  user:\n"
        "    exec:\n"
        "      apiVersion: client.authentication.k8s.io/v1beta1\n"
        "      command: bin/get-token\n"
        "      args: [--cluster, prod, '1']\n"
        "      env: [{name: REGION, value: eu-1}, {name: EMPTY}]\n"
        "      installHint: install get-token from example.com\n"
        "      provideClusterInfo: true\n";
    corral_client_config_t c;
    corral_client_config_init(&c);
    char err[256] = "";
    cr_assert_eq(
        corral_kubeconfig_parse(kc, strlen(kc), "/etc/kube/config", NULL, &c, err, sizeof(err)), 0,
        "%s", err);
    cr_assert_not_null(c.exec);
    cr_assert_str_eq(c.exec->command, "/etc/kube/bin/get-token", "a path is the file's");
    cr_assert_eq(c.exec->nargs, 3);
    cr_assert_str_eq(c.exec->args[2], "1");
    cr_assert_eq(c.exec->nenv, 2);
    cr_assert_str_eq(c.exec->env[0], "REGION=eu-1");
    cr_assert_str_eq(c.exec->env[1], "EMPTY=");
    cr_assert_str_eq(c.exec->interactive_mode, "IfAvailable", "v1beta1's default");
    cr_assert(c.exec->provide_cluster_info);
    cr_assert_str_eq(c.tls_server_name, "api");
    corral_client_config_t d;
    corral_client_config_copy(&d, &c);
    cr_assert_str_eq(d.exec->args[1], "prod");
    cr_assert_neq(d.exec->args, c.exec->args);
    corral_client_config_fini(&d);
    corral_client_config_fini(&c);
    exec_err("{exec: {apiVersion: client.authentication.k8s.io/v1, command: x}}",
             "interactiveMode must be set");
    exec_err("{exec: {apiVersion: client.authentication.k8s.io/v1alpha1, command: x}}",
             "exec apiVersion must be");
    exec_err("{exec: {apiVersion: client.authentication.k8s.io/v1, interactiveMode: Never}}",
             "exec has no command");
    exec_err("{exec: {apiVersion: client.authentication.k8s.io/v1, command: x, "
             "interactiveMode: Sometimes}}",
             "interactiveMode must be Never, IfAvailable or Always");
    exec_err("{exec: {apiVersion: client.authentication.k8s.io/v1beta1, command: x, env: [{value: "
             "v}]}}",
             "exec env entries need a name");
}

/* --- ExecCredential answers ------------------------------------------------------------------ */

static void cred_err(const char *text, const char *want)
{
    corral_client_cred_t cr;
    char err[256] = "";
    cr_assert_neq(corral_exec_credential_parse(
                      text, strlen(text), "client.authentication.k8s.io/v1", &cr, err, sizeof(err)),
                  0, "accepted %s", text);
    cr_assert(strstr(err, want), "\"%s\" lacks \"%s\"", err, want);
}

Test(clientcfg, exec_credential_answers)
{
    static const char ok[] =
        "{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\","
        "\"status\":{\"token\":\"t0k\",\"expirationTimestamp\":\"2030-01-02T03:04:05Z\"}}";
    corral_client_cred_t cr;
    char err[256] = "";
    cr_assert_eq(corral_exec_credential_parse(ok, strlen(ok), "client.authentication.k8s.io/v1",
                                              &cr, err, sizeof(err)),
                 0, "%s", err);
    cr_assert_str_eq(cr.token, "t0k");
    cr_assert_eq(cr.expiry_us, INT64_C(1893553445) * 1000000);
    corral_client_cred_fini(&cr);
    static const char certs[] =
        "{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\","
        "\"status\":{\"clientCertificateData\":\"-----BEGIN CERTIFICATE-----\\n\","
        "\"clientKeyData\":\"-----BEGIN PRIVATE KEY-----\\n\"}}";
    cr_assert_eq(corral_exec_credential_parse(certs, strlen(certs),
                                              "client.authentication.k8s.io/v1", &cr, err,
                                              sizeof(err)),
                 0, "%s", err);
    cr_assert_null(cr.token);
    cr_assert_str_eq(cr.key_data, "-----BEGIN PRIVATE KEY-----\n");
    corral_client_cred_fini(&cr);
    cred_err("{\"apiVersion\":\"client.authentication.k8s.io/v1beta1\",\"kind\":"
             "\"ExecCredential\",\"status\":{\"token\":\"t\"}}",
             "configured to use API version client.authentication.k8s.io/v1, plugin returned "
             "version client.authentication.k8s.io/v1beta1");
    cred_err("{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\"}",
             "didn't return a status field");
    cred_err("{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\","
             "\"status\":{}}",
             "didn't return a token or cert/key pair");
    cred_err("{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\","
             "\"status\":{\"clientCertificateData\":\"x\"}}",
             "only certificate or key");
    cred_err("{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\","
             "\"status\":{\"token\":\"t\",\"expirationTimestamp\":\"soon\"}}",
             "is not RFC 3339");
    cred_err("token=abc", "not JSON");
    cred_err("{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"Status\"}",
             "not ExecCredential");
}

/* --- running plugins ------------------------------------------------------------------------- */

static corral_client_exec_t *plugin(const char *script, const char *exp, long timeout_ms)
{
    put("plugin.sh", script);
    char path[128], env[256];
    snprintf(path, sizeof(path), "%s/plugin.sh", tmp);
    chmod(path, 0755);
    corral_client_exec_t *e = corral_calloc(1, sizeof(*e));
    e->command = corral_strdup(path);
    e->api_version = corral_strdup("client.authentication.k8s.io/v1");
    e->interactive_mode = corral_strdup("Never");
    e->install_hint = corral_strdup("see docs/kubernetes.md");
    e->env = corral_calloc(2, sizeof(char *));
    snprintf(env, sizeof(env), "DIR=%s", tmp);
    e->env[0] = corral_strdup(env);
    snprintf(env, sizeof(env), "EXP=%s", exp);
    e->env[1] = corral_strdup(env);
    e->nenv = 2;
    e->timeout_ms = timeout_ms;
    return e;
}

static const char counting[] =
    "#!/bin/sh\n"
    "n=$(cat \"$DIR/count\" 2>/dev/null || echo 0); n=$((n+1)); echo $n >\"$DIR/count\"\n"
    "printf '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\","
    "\"status\":{\"token\":\"tok-%s\",\"expirationTimestamp\":\"%s\"}}' \"$n\" \"$EXP\"\n";

Test(clientcfg, exec_plugin_cached_until_it_expires)
{
    mktmp();
    corral_client_config_t cfg;
    corral_client_config_init(&cfg);
    cfg.server = corral_strdup("https://h:6443");
    cfg.exec = plugin(counting, "2999-01-01T00:00:00Z", 0);
    corral_client_cred_t cr;
    char err[256] = "";
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(corral_client_exec_credential(&cfg, NULL, &cr, err, sizeof(err)), 0, "%s",
                     err);
        cr_assert_str_eq(cr.token, "tok-1", "cached while unexpired");
        corral_client_cred_fini(&cr);
    }
    cr_assert_eq(corral_client_exec_runs(), 1);
    /* refused with an older token than the cache's: the cache stands */
    cr_assert_eq(corral_client_exec_credential(&cfg, "tok-0", &cr, err, sizeof(err)), 0);
    cr_assert_str_eq(cr.token, "tok-1");
    corral_client_cred_fini(&cr);
    /* refused with the cached one: run again */
    cr_assert_eq(corral_client_exec_credential(&cfg, "tok-1", &cr, err, sizeof(err)), 0);
    cr_assert_str_eq(cr.token, "tok-2");
    corral_client_cred_fini(&cr);
    corral_client_config_fini(&cfg);
    /* an expired credential runs the plugin every time */
    corral_client_config_init(&cfg);
    cfg.server = corral_strdup("https://h:6443");
    cfg.exec = plugin(counting, "2001-01-01T00:00:00Z", 0);
    for (int i = 3; i <= 4; i++) {
        cr_assert_eq(corral_client_exec_credential(&cfg, NULL, &cr, err, sizeof(err)), 0, "%s",
                     err);
        char want[16];
        snprintf(want, sizeof(want), "tok-%d", i);
        cr_assert_str_eq(cr.token, want);
        corral_client_cred_fini(&cr);
    }
    corral_client_config_fini(&cfg);
    rmtmp();
}

static void plugin_fails(const char *script, long timeout_ms, const char *want)
{
    corral_client_exec_forget(); /* each script is a plugin of its own */
    corral_client_config_t cfg;
    corral_client_config_init(&cfg);
    cfg.server = corral_strdup("https://h:6443");
    cfg.exec = plugin(script, "", timeout_ms);
    corral_client_cred_t cr;
    char err[512] = "";
    cr_assert_neq(corral_client_exec_credential(&cfg, NULL, &cr, err, sizeof(err)), 0);
    cr_assert(strstr(err, want), "\"%s\" lacks \"%s\"", err, want);
    corral_client_config_fini(&cfg);
}

Test(clientcfg, exec_plugin_failures_are_bounded_and_explained)
{
    mktmp();
    plugin_fails("#!/bin/sh\necho nope >&2\nexit 3\n", 0, "failed with exit code 3");
    plugin_fails("#!/bin/sh\nexec sleep 30\n", 300, "no answer within 300 ms (killed)");
    plugin_fails("#!/bin/sh\nexec yes\n", 0, "output larger than 1048576 bytes (killed)");
    plugin_fails("#!/bin/sh\necho '{}'\n", 0, "not ExecCredential");
    /* A plugin that closes its output and stays is killed at the deadline,
     * with what it started (its process group). */
    plugin_fails("#!/bin/sh\nexec >&-\nsleep 30\n", 300, "did not exit within 300 ms (killed)");
    /* A plugin that failed is not run again on every request: a second ask
     * within the backoff answers the first failure without a run. */
    corral_client_exec_forget();
    {
        corral_client_config_t cfg;
        corral_client_config_init(&cfg);
        cfg.server = corral_strdup("https://h:6443");
        cfg.exec = plugin("#!/bin/sh\nexit 3\n", "", 0);
        corral_client_cred_t cr;
        char err[512] = "";
        cr_assert_neq(corral_client_exec_credential(&cfg, NULL, &cr, err, sizeof(err)), 0);
        uint64_t runs = corral_client_exec_runs();
        cr_assert_neq(corral_client_exec_credential(&cfg, NULL, &cr, err, sizeof(err)), 0);
        cr_assert_eq(corral_client_exec_runs(), runs, "run again within the backoff");
        cr_assert(strstr(err, "exit code 3") && strstr(err, "not run again"), "%s", err);
        corral_client_config_fini(&cfg);
    }
    corral_client_exec_forget();
    corral_client_config_t cfg;
    corral_client_config_init(&cfg);
    cfg.server = corral_strdup("https://h:6443");
    cfg.exec = plugin("", "", 0);
    corral_free(cfg.exec->command);
    cfg.exec->command = corral_strdup("corral-no-such-plugin");
    corral_client_cred_t cr;
    char err[512] = "";
    cr_assert_neq(corral_client_exec_credential(&cfg, NULL, &cr, err, sizeof(err)), 0);
    cr_assert(strstr(err, "cannot run corral-no-such-plugin"), "%s", err);
    cr_assert(strstr(err, "see docs/kubernetes.md"), "the install hint: %s", err);
    corral_free(cfg.exec->interactive_mode);
    cfg.exec->interactive_mode = corral_strdup("Always");
    cr_assert_neq(corral_client_exec_credential(&cfg, NULL, &cr, err, sizeof(err)), 0);
    cr_assert(strstr(err, "no terminal"), "%s", err);
    corral_client_config_fini(&cfg);
    rmtmp();
}

/* --- in-cluster ------------------------------------------------------------------------------ */

Test(clientcfg, in_cluster_after_flags_and_kubeconfig)
{
    clear_env();
    mktmp();
    put("sa/token", "sa-token\n");
    put("sa/ca.crt", "-----BEGIN CERTIFICATE-----\n");
    put("sa/namespace", "corral-system");
    char dir[128];
    snprintf(dir, sizeof(dir), "%s/sa", tmp);
    setenv("CORRAL_SERVICEACCOUNT_DIR", dir, 1);
    corral_client_flags_t f = {0};
    corral_client_config_t c;
    corral_client_config_init(&c);
    char err[256] = "";
    /* not in a pod: the default server */
    cr_assert_eq(corral_client_config_load(&f, &c, err, sizeof(err)), 0, "%s", err);
    cr_assert_str_eq(c.server, CORRAL_CLIENT_DEFAULT_SERVER);
    cr_assert_not(c.in_cluster);
    corral_client_config_fini(&c);
    setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    cr_assert_eq(corral_client_config_load(&f, &c, err, sizeof(err)), 0, "%s", err);
    cr_assert_str_eq(c.server, "https://[fd00::1]:443");
    cr_assert_str_eq(c.token, "sa-token");
    cr_assert(c.in_cluster);
    char want[256];
    snprintf(want, sizeof(want), "%s/ca.crt", dir);
    cr_assert_str_eq(c.ca_file, want);
    cr_assert_str_eq(c.namespace, "corral-system");
    corral_client_config_fini(&c);
    setenv("POD_NAMESPACE", "from-env", 1);
    f.token = "flag-token";
    f.qps = 50;
    f.burst = 100;
    cr_assert_eq(corral_client_config_load(&f, &c, err, sizeof(err)), 0, "%s", err);
    cr_assert_str_eq(c.namespace, "from-env");
    cr_assert_str_eq(c.token, "flag-token");
    cr_assert_null(c.token_file, "--token replaces the service account's");
    cr_assert_eq(c.qps, 50);
    cr_assert_eq(c.burst, 100);
    corral_client_config_fini(&c);
    /* a server named elsewhere wins over the service account */
    memset(&f, 0, sizeof(f));
    setenv("CORRAL_SERVER", "http://127.0.0.1:7000", 1);
    cr_assert_eq(corral_client_config_load(&f, &c, err, sizeof(err)), 0, "%s", err);
    cr_assert_str_eq(c.server, "http://127.0.0.1:7000");
    cr_assert_not(c.in_cluster);
    corral_client_config_fini(&c);
    unsetenv("CORRAL_SERVER");
    put("kc", file_a);
    snprintf(want, sizeof(want), "%s/kc", tmp);
    setenv("KUBECONFIG", want, 1);
    cr_assert_eq(corral_client_config_load(&f, &c, err, sizeof(err)), 0, "%s", err);
    cr_assert_str_eq(c.server, "https://a.example:6443");
    corral_client_config_fini(&c);
    /* a token that cannot be read is an error, not another server */
    setenv("KUBECONFIG", "/nonexistent", 1);
    snprintf(want, sizeof(want), "%s/sa/token", tmp);
    chmod(want, 0);
    if (access(want, R_OK) != 0) { /* root reads it anyway */
        cr_assert_neq(corral_client_config_load(&f, &c, err, sizeof(err)), 0);
        cr_assert(strstr(err, "cannot read the service account token"), "%s", err);
        corral_client_config_fini(&c);
    }
    unsetenv("CORRAL_SERVICEACCOUNT_DIR");
    rmtmp();
}

/* --- the token bucket ------------------------------------------------------------------------ */

typedef struct fake_clock {
    int64_t now, slept;
} fake_clock_t;

static int64_t fake_now(void *ctx)
{
    return ((fake_clock_t *)ctx)->now;
}

static void fake_sleep(void *ctx, int64_t us)
{
    fake_clock_t *f = ctx;
    f->now += us;
    f->slept += us;
}

static void post(corral_client_t *c)
{
    corral_client_resp_t r;
    corral_client_resp_init(&r);
    corral_client_request(c, "POST", "/x", NULL, "{}", 2, &r); /* refused: no retry */
    corral_client_resp_fini(&r);
}

Test(clientcfg, token_bucket_on_an_injected_clock)
{
    corral_client_config_t cfg;
    corral_client_config_init(&cfg);
    cfg.server = corral_strdup("http://127.0.0.1:1");
    cfg.qps = 0; /* client-go's 5 per second, burst 10 */
    corral_client_t *c = corral_client_new(&cfg);
    fake_clock_t clk = {5000000, 0};
    corral_client_set_clock(c, fake_now, fake_sleep, &clk);
    for (int i = 0; i < 10; i++)
        post(c);
    corral_client_stats_t st;
    corral_client_stats(c, &st);
    cr_assert_eq(st.throttled, 0, "the burst");
    post(c);
    post(c);
    corral_client_stats(c, &st);
    cr_assert_eq(st.throttled, 2);
    cr_assert_eq(clk.slept, 400000, "two requests at 5/s wait 0.2 s each: %lld",
                 (long long)clk.slept);
    clk.now += 60000000; /* a quiet minute refills the bucket to the burst, no more */
    for (int i = 0; i < 10; i++)
        post(c);
    post(c);
    corral_client_stats(c, &st);
    cr_assert_eq(st.throttled, 3);
    cr_assert_eq(st.requests, 23);
    corral_client_free(c);
    /* qps 50, burst 100: 100 at once, the 101st waits 20 ms */
    cfg.qps = 50;
    cfg.burst = 100;
    c = corral_client_new(&cfg);
    clk.slept = 0;
    corral_client_set_clock(c, fake_now, fake_sleep, &clk);
    for (int i = 0; i < 101; i++)
        post(c);
    cr_assert_eq(clk.slept, 20000);
    corral_client_free(c);
    /* negative: no limit */
    cfg.qps = -1;
    c = corral_client_new(&cfg);
    clk.slept = 0;
    corral_client_set_clock(c, fake_now, fake_sleep, &clk);
    for (int i = 0; i < 50; i++)
        post(c);
    cr_assert_eq(clk.slept, 0);
    corral_client_free(c);
    corral_client_config_fini(&cfg);
}

/* A server that closes every connection as soon as it is accepted (an
 * apiserver going away): the client sees EOF before any answer. */
typedef struct closer {
    int fd, port;
    volatile int stop;
    pthread_t th;
} closer_t;

static void *close_all(void *arg)
{
    closer_t *k = arg;
    while (!k->stop) {
        struct pollfd p = {k->fd, POLLIN, 0};
        if (poll(&p, 1, 20) == 1) {
            int fd = accept(k->fd, NULL, NULL);
            if (fd >= 0)
                close(fd);
        }
    }
    return NULL;
}

static void closer_start(closer_t *k)
{
    memset(k, 0, sizeof(*k));
    k->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t sl = sizeof(sa);
    cr_assert_eq(bind(k->fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    cr_assert_eq(listen(k->fd, 16), 0);
    getsockname(k->fd, (struct sockaddr *)&sa, &sl);
    k->port = ntohs(sa.sin_port);
    pthread_create(&k->th, NULL, close_all, k);
}

static void closer_stop(closer_t *k)
{
    k->stop = 1;
    pthread_join(k->th, NULL);
    close(k->fd);
}

Test(clientcfg, get_retried_when_the_connection_drops_writes_not)
{
    closer_t k;
    closer_start(&k);
    corral_client_config_t cfg;
    corral_client_config_init(&cfg);
    char url[64];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d", k.port);
    cfg.server = corral_strdup(url);
    corral_client_t *c = corral_client_new(&cfg);
    fake_clock_t clk = {0, 0};
    corral_client_set_clock(c, fake_now, fake_sleep, &clk);
    corral_client_set_retry(c, 4, 0);
    corral_client_resp_t r;
    corral_client_resp_init(&r);
    cr_assert_eq(corral_client_request(c, "GET", "/x", NULL, NULL, 0, &r), CORRAL_EIO);
    corral_client_resp_fini(&r);
    corral_client_stats_t st;
    corral_client_stats(c, &st);
    cr_assert_eq(st.requests, 4);
    cr_assert_eq(st.retries, 3);
    cr_assert_eq(clk.slept, 3000000);
    post(c);
    corral_client_stats(c, &st);
    cr_assert_eq(st.requests, 5, "a POST that may have reached the server is not repeated");
    corral_client_free(c);
    closer_stop(&k);
    /* a refused connection is not retried either (client-go's rule) */
    c = corral_client_new(&cfg);
    corral_client_set_clock(c, fake_now, fake_sleep, &clk);
    corral_client_resp_init(&r);
    cr_assert_eq(corral_client_request(c, "GET", "/x", NULL, NULL, 0, &r), CORRAL_EIO);
    corral_client_resp_fini(&r);
    corral_client_stats(c, &st);
    cr_assert_eq(st.requests, 1);
    corral_client_free(c);
    corral_client_config_fini(&cfg);
}
