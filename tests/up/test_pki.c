/* `corral up`'s pieces without processes: the PKI (the serving certificate
 * verifies against the CA as a TLS server certificate and names the hosts
 * clients use; the CA is never replaced; the serving certificate is
 * reissued when the host changes or expiry nears; keys are 0600), the token
 * file (tokens kept across starts, readable by the API server's parser),
 * kubeconfigs (readable by the client library), the component command
 * lines, and the embedded RBAC manifests (the files of deploy/rbac). */
#include <criterion/criterion.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "corral/auth.h"
#include "corral/client.h"
#include "corral/io.h"
#include "corral/up.h"

TestSuite(up, .timeout = 30);

static char tmpdir[256];

static const char *mktmp(void)
{
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/corral-up-test-XXXXXX");
    cr_assert_not_null(mkdtemp(tmpdir));
    return tmpdir;
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
    nftw(tmpdir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static X509 *load(const char *dir, const char *name)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s missing", path);
    X509 *x = PEM_read_X509(f, NULL, NULL, NULL);
    fclose(f);
    cr_assert_not_null(x, "%s is not a PEM certificate", path);
    return x;
}

/* Verify leaf against ca as a TLS server certificate. */
static int verify(X509 *ca, X509 *leaf)
{
    X509_STORE *st = X509_STORE_new();
    X509_STORE_add_cert(st, ca);
    X509_STORE_CTX *ctx = X509_STORE_CTX_new();
    X509_STORE_CTX_init(ctx, st, leaf, NULL);
    X509_STORE_CTX_set_purpose(ctx, X509_PURPOSE_SSL_SERVER);
    int ok = X509_verify_cert(ctx);
    int e = X509_STORE_CTX_get_error(ctx);
    X509_STORE_CTX_free(ctx);
    X509_STORE_free(st);
    return ok == 1 ? 0 : e;
}

static void fingerprint(X509 *x, unsigned char out[EVP_MAX_MD_SIZE])
{
    unsigned n = 0;
    memset(out, 0, EVP_MAX_MD_SIZE);
    X509_digest(x, EVP_sha256(), out, &n);
}

static int mode_of(const char *dir, const char *name)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    struct stat st;
    cr_assert_eq(stat(path, &st), 0, "%s", path);
    return (int)(st.st_mode & 0777);
}

Test(up, pki_first_start)
{
    const char *dir = mktmp();
    corral_pki_opts_t o = {.dir = dir, .host = "10.1.2.3"};
    corral_pki_status_t st;
    char err[512] = "";
    cr_assert_eq(corral_pki_ensure(&o, &st, err, sizeof(err)), 0, "%s", err);
    cr_assert(st.ca_created);
    cr_assert(st.cert_issued);
    X509 *ca = load(dir, "ca.crt"), *srv = load(dir, "apiserver.crt");
    cr_assert_eq(verify(ca, srv), 0, "verify error %d", verify(ca, srv));
    cr_assert_eq(X509_check_ca(ca), 1);
    cr_assert_eq(X509_check_ip_asc(srv, "127.0.0.1", 0), 1);
    cr_assert_eq(X509_check_ip_asc(srv, "::1", 0), 1);
    cr_assert_eq(X509_check_ip_asc(srv, "10.1.2.3", 0), 1);
    cr_assert_eq(X509_check_host(srv, "localhost", 0, 0, NULL), 1);
    cr_assert_neq(X509_check_ip_asc(srv, "10.9.9.9", 0), 1);
    /* A self-signed "server" is not accepted: the check can fail. */
    cr_assert_neq(verify(srv, srv), 0);
    cr_assert_eq(mode_of(dir, "ca.key"), 0600);
    cr_assert_eq(mode_of(dir, "apiserver.key"), 0600);
    /* Nothing to do the second time. */
    cr_assert_eq(corral_pki_ensure(&o, &st, err, sizeof(err)), 0, "%s", err);
    cr_assert(!st.ca_created && !st.cert_issued, "why: %s", st.why);
    X509_free(ca);
    X509_free(srv);
    rmtmp();
}

Test(up, pki_host_change_keeps_ca)
{
    const char *dir = mktmp();
    corral_pki_opts_t o = {.dir = dir, .host = "127.0.0.1"};
    corral_pki_status_t st;
    char err[512] = "";
    cr_assert_eq(corral_pki_ensure(&o, &st, err, sizeof(err)), 0, "%s", err);
    X509 *ca1 = load(dir, "ca.crt");
    unsigned char f1[EVP_MAX_MD_SIZE], f2[EVP_MAX_MD_SIZE];
    fingerprint(ca1, f1);
    o.host = "0.0.0.0";
    cr_assert_eq(corral_pki_ensure(&o, &st, err, sizeof(err)), 0, "%s", err);
    cr_assert(!st.ca_created);
    cr_assert(st.cert_issued, "a wildcard host adds the hostname");
    X509 *ca2 = load(dir, "ca.crt"), *srv = load(dir, "apiserver.crt");
    fingerprint(ca2, f2);
    cr_assert_eq(memcmp(f1, f2, sizeof(f1)), 0, "the CA changed");
    char hn[256] = "";
    gethostname(hn, sizeof(hn) - 1);
    if (*hn && strcmp(hn, "localhost") != 0)
        cr_assert_eq(X509_check_host(srv, hn, 0, 0, NULL), 1, "hostname %s", hn);
    cr_assert_eq(verify(ca2, srv), 0);
    X509_free(ca1);
    X509_free(ca2);
    X509_free(srv);
    rmtmp();
}

Test(up, pki_renews_near_expiry)
{
    const char *dir = mktmp();
    corral_pki_opts_t o = {.dir = dir, .host = "127.0.0.1", .cert_days = 10};
    corral_pki_status_t st;
    char err[512] = "";
    cr_assert_eq(corral_pki_ensure(&o, &st, err, sizeof(err)), 0, "%s", err);
    o.cert_days = 0;
    cr_assert_eq(corral_pki_ensure(&o, &st, err, sizeof(err)), 0, "%s", err);
    cr_assert(st.cert_issued);
    cr_assert(strstr(st.why, "expires within 30 days"), "why: %s", st.why);
    cr_assert_eq(corral_pki_ensure(&o, &st, err, sizeof(err)), 0, "%s", err);
    cr_assert(!st.cert_issued, "why: %s", st.why);
    rmtmp();
}

Test(up, pki_never_replaces_a_broken_ca)
{
    const char *dir = mktmp();
    corral_pki_opts_t o = {.dir = dir, .host = "127.0.0.1"};
    corral_pki_status_t st;
    char err[512] = "", path[512];
    cr_assert_eq(corral_pki_ensure(&o, &st, err, sizeof(err)), 0, "%s", err);
    snprintf(path, sizeof(path), "%s/ca.key", dir);
    cr_assert_eq(unlink(path), 0);
    cr_assert_neq(corral_pki_ensure(&o, &st, err, sizeof(err)), 0);
    cr_assert(strstr(err, "ca.key"), "%s", err);
    snprintf(path, sizeof(path), "%s/ca.crt", dir);
    cr_assert_eq(access(path, F_OK), 0, "the CA certificate was removed");
    rmtmp();
}

Test(up, tokens_kept_and_parsed)
{
    const char *dir = mktmp();
    char path[512], err[512] = "";
    snprintf(path, sizeof(path), "%s/tokens.csv", dir);
    corral_up_ident_t ids[2] = {{.user = "admin", .groups = "system:masters"},
                                {.user = "system:node:n1", .groups = "system:nodes"}};
    cr_assert_eq(corral_up_tokens_ensure(path, ids, 2, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(strlen(ids[0].token), 64);
    cr_assert_str_neq(ids[0].token, ids[1].token);
    cr_assert_eq(mode_of(dir, "tokens.csv"), 0600);
    char keep[65];
    memcpy(keep, ids[1].token, sizeof(keep));
    corral_up_ident_t more[2] = {{.user = "system:node:n1", .groups = "system:nodes"},
                                 {.user = "system:kube-scheduler", .groups = ""}};
    cr_assert_eq(corral_up_tokens_ensure(path, more, 2, err, sizeof(err)), 0, "%s", err);
    cr_assert_str_eq(more[0].token, keep, "a token changed across starts");
    corral_tokens_t *t = NULL;
    cr_assert_eq(corral_tokens_load(path, &t, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(corral_tokens_count(t), 3);
    const corral_user_t *u = corral_tokens_find(t, ids[0].token, 64);
    cr_assert_not_null(u);
    cr_assert_str_eq(u->name, "admin");
    cr_assert(corral_user_in_group(u, "system:masters"));
    u = corral_tokens_find(t, keep, 64);
    cr_assert_not_null(u);
    cr_assert(corral_user_in_group(u, "system:nodes"));
    corral_tokens_free(t);
    rmtmp();
}

Test(up, kubeconfig_readable_by_client)
{
    const char *dir = mktmp();
    char path[512], err[512] = "";
    snprintf(path, sizeof(path), "%s/kubeconfig", dir);
    const char *pem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
    cr_assert_eq(corral_up_kubeconfig_write(path, "https://127.0.0.1:7443", pem, "system:node:n1",
                                            "abc123", err, sizeof(err)),
                 0, "%s", err);
    cr_assert_eq(mode_of(dir, "kubeconfig"), 0600);
    char *text = NULL;
    size_t len = 0;
    corral_diag_t d;
    corral_diag_init(&d);
    cr_assert_eq(corral_file_read(path, 1 << 20, &d, &text, &len), 0);
    corral_diag_fini(&d);
    corral_client_config_t c;
    corral_client_config_init(&c);
    cr_assert_eq(corral_kubeconfig_parse(text, len, path, NULL, &c, err, sizeof(err)), 0, "%s",
                 err);
    cr_assert_str_eq(c.server, "https://127.0.0.1:7443");
    cr_assert_str_eq(c.token, "abc123");
    cr_assert_eq(c.ca_data_len, strlen(pem));
    cr_assert_eq(memcmp(c.ca_data, pem, c.ca_data_len), 0);
    corral_client_config_fini(&c);
    corral_free(text);
    rmtmp();
}

/* argv of the component named name, as one space-separated string. */
static const char *cmdline(const corral_up_plan_t *p, const char *name, char *buf, size_t len)
{
    for (size_t i = 0; i < p->ncomps; i++) {
        if (strcmp(p->comps[i].name, name) != 0)
            continue;
        size_t used = 0;
        buf[0] = '\0';
        for (int j = 0; j < p->comps[i].argc; j++)
            used +=
                (size_t)snprintf(buf + used, len - used, "%s%s", j ? " " : "", p->comps[i].argv[j]);
        cr_assert_null(p->comps[i].argv[p->comps[i].argc]);
        return buf;
    }
    return NULL;
}

Test(up, plan_simulated)
{
    corral_up_opts_t o = {.data_dir = "/d", .sim_nodes = 2, .hollow_nodes = 3};
    corral_up_plan_t p;
    char err[256] = "", buf[2048];
    cr_assert_eq(corral_up_plan(&o, false, &p, err, sizeof(err)), 0, "%s", err);
    cr_assert_str_eq(p.server, "https://127.0.0.1:6443");
    cr_assert_eq(p.ncomps, 7);
    cr_assert_str_eq(cmdline(&p, "apiserver", buf, sizeof(buf)),
                     "corral apiserver --data-dir /d/apiserver --listen 127.0.0.1:6443 "
                     "--token-auth-file /d/tokens.csv --tls-cert-file /d/pki/apiserver.crt "
                     "--tls-private-key-file /d/pki/apiserver.key");
    cr_assert_str_eq(cmdline(&p, "scheduler", buf, sizeof(buf)),
                     "corral scheduler --kubeconfig /d/kubeconfigs/scheduler.kubeconfig "
                     "--scheduler-name corral,volcano,default-scheduler "
                     "--kube-api-content-type application/json");
    cr_assert_str_eq(cmdline(&p, "controller", buf, sizeof(buf)),
                     "corral controller --kubeconfig /d/kubeconfigs/controller.kubeconfig "
                     "--ingress-domain example.com --kube-api-content-type application/json "
                     "--router-url http://127.0.0.1:8080 --router-metrics http://127.0.0.1:9091");
    cr_assert_str_eq(cmdline(&p, "agent-sim-node-1", buf, sizeof(buf)),
                     "corral agent --node-name sim-node-1 --gpus sim:h100-sxm-8 --root "
                     "/d/agents/sim-node-1 --stop-pods-on-exit --metrics-listen off --kubeconfig "
                     "/d/kubeconfigs/node-sim-node-1.kubeconfig --kube-api-content-type "
                     "application/json");
    cr_assert_str_eq(
        cmdline(&p, "agent-hollow", buf, sizeof(buf)),
        "corral agent --runtime hollow --hollow-nodes 3 --node-prefix hollow- "
        "--gpus sim:h100-sxm-8 --token-file /d/kubeconfigs/hollow-tokens.csv --metrics-listen off "
        "--kubeconfig /d/kubeconfigs/hollow.kubeconfig --kube-api-content-type application/json");
    /* Stop order: agents, then control, then the API server. */
    cr_assert_eq(p.comps[0].tier, CORRAL_UP_TIER_API);
    cr_assert_str_eq(cmdline(&p, "router", buf, sizeof(buf)),
                     "corral router --kubeconfig /d/kubeconfigs/router.kubeconfig --listen "
                     "127.0.0.1:8080 --metrics-listen 127.0.0.1:9091 --kube-api-content-type "
                     "application/json");
    cr_assert_str_eq(p.router, "http://127.0.0.1:8080");
    cr_assert_str_eq(p.router_metrics, "http://127.0.0.1:9091");
    cr_assert_eq(p.comps[3].tier, CORRAL_UP_TIER_CONTROL);
    cr_assert_eq(p.comps[4].tier, CORRAL_UP_TIER_AGENT);
    cr_assert_eq(p.nids, 5 + 2 + 3);
    cr_assert_str_eq(p.ids[0].groups, "system:masters");
    cr_assert_str_eq(p.ids[1].user, "system:kube-scheduler");
    cr_assert_str_eq(p.ids[2].user, "system:kube-controller-manager");
    cr_assert_str_eq(p.ids[3].user, "system:corral-metrics");
    cr_assert_str_eq(p.ids[4].user, "system:corral-router");
    cr_assert_str_eq(p.ids[5].user, "system:node:sim-node-0");
    cr_assert_str_eq(p.ids[9].user, "system:node:hollow-2");
    corral_up_plan_fini(&p);
    o.router_listen = "off";
    cr_assert_eq(corral_up_plan(&o, false, &p, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(p.ncomps, 6);
    cr_assert_null(p.router);
    corral_up_plan_fini(&p);
    o.router_listen = "127.0.0.1";
    cr_assert_neq(corral_up_plan(&o, false, &p, err, sizeof(err)), 0);
    cr_assert(strstr(err, "--router-listen"), "%s", err);
    corral_up_plan_fini(&p);
}

Test(up, plan_nvml_and_listen)
{
    corral_up_opts_t o = {
        .data_dir = "/d/", .sim_nodes = 4, .listen = "0.0.0.0:7443", .node_name = "GPU_Box.Lab"};
    corral_up_plan_t p;
    char err[256] = "", buf[2048];
    cr_assert_eq(corral_up_plan(&o, true, &p, err, sizeof(err)), 0, "%s", err);
    cr_assert_str_eq(p.server, "https://127.0.0.1:7443");
    cr_assert_str_eq(p.host, "0.0.0.0");
    cr_assert_eq(p.nnodes, 1);
    cr_assert_str_eq(
        cmdline(&p, "agent-gpu-box.lab", buf, sizeof(buf)),
        "corral agent --node-name gpu-box.lab --gpus nvml --root /d/agents/gpu-box.lab "
        "--stop-pods-on-exit --metrics-listen off --kubeconfig "
        "/d/kubeconfigs/node-gpu-box.lab.kubeconfig --kube-api-content-type application/json");
    corral_up_plan_fini(&p);
    /* sim:PROFILE forces simulation even with GPUs present. */
    o.gpus = "sim:dgx1-v100-8";
    o.listen = "[::1]:7443";
    cr_assert_eq(corral_up_plan(&o, true, &p, err, sizeof(err)), 0, "%s", err);
    cr_assert_str_eq(p.server, "https://[::1]:7443");
    cr_assert_eq(p.nnodes, 4);
    cr_assert(strstr(cmdline(&p, "agent-sim-node-3", buf, sizeof(buf)), "--gpus sim:dgx1-v100-8"));
    corral_up_plan_fini(&p);
    static const char *const bad[] = {"127.0.0.1", "127.0.0.1:0", "127.0.0.1:x", ":99999",
                                      "[zz]:80"};
    o.gpus = NULL;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        o.listen = bad[i];
        cr_assert_neq(corral_up_plan(&o, false, &p, err, sizeof(err)), 0, "%s accepted", bad[i]);
        cr_assert(strstr(err, "--listen"), "%s", err);
        corral_up_plan_fini(&p);
    }
    o.listen = NULL;
    o.gpus = "cuda";
    cr_assert_neq(corral_up_plan(&o, false, &p, err, sizeof(err)), 0);
    corral_up_plan_fini(&p);
}

Test(up, plan_profiles_and_extra_config)
{
    const char *extra[] = {"controller.node-monitor-grace-period=4s", "agent.heartbeat-seconds=1",
                           "scheduler.lease-duration=3s"};
    corral_up_opts_t o = {.data_dir = "/d",
                          .sim_nodes = 3,
                          .sim_profile = "h100-sxm-8,dgx1-v100-8",
                          .extra = extra,
                          .nextra = 3};
    corral_up_plan_t p;
    char err[256] = "", buf[2048];
    cr_assert_eq(corral_up_plan(&o, false, &p, err, sizeof(err)), 0, "%s", err);
    cr_assert(strstr(cmdline(&p, "agent-sim-node-0", buf, sizeof(buf)), "--gpus sim:h100-sxm-8 "));
    cr_assert(strstr(cmdline(&p, "agent-sim-node-1", buf, sizeof(buf)), "--gpus sim:dgx1-v100-8"));
    cr_assert(strstr(cmdline(&p, "agent-sim-node-2", buf, sizeof(buf)), "--gpus sim:h100-sxm-8 "));
    cr_assert(strstr(cmdline(&p, "agent-sim-node-2", buf, sizeof(buf)), " --heartbeat-seconds=1"));
    cr_assert(
        strstr(cmdline(&p, "controller", buf, sizeof(buf)), " --node-monitor-grace-period=4s"));
    cr_assert_null(strstr(cmdline(&p, "controller", buf, sizeof(buf)), "heartbeat"));
    cr_assert(strstr(cmdline(&p, "scheduler", buf, sizeof(buf)), " --lease-duration=3s"));
    corral_up_plan_fini(&p);
    const char *bad[] = {"kubelet.x=1"};
    o.extra = bad;
    o.nextra = 1;
    cr_assert_neq(corral_up_plan(&o, false, &p, err, sizeof(err)), 0);
    cr_assert(strstr(err, "--extra-config"), "%s", err);
    corral_up_plan_fini(&p);
}

Test(up, rbac_embedded_matches_deploy)
{
    cr_assert_eq(corral_up_rbac_count(), 5);
    for (size_t i = 0; i < corral_up_rbac_count(); i++) {
        size_t len = 0;
        const char *text = corral_up_rbac_text(i, &len);
        char *file = NULL;
        size_t flen = 0;
        corral_diag_t d;
        corral_diag_init(&d);
        cr_assert_eq(corral_file_read(corral_up_rbac_name(i), 1 << 20, &d, &file, &flen), 0, "%s",
                     corral_up_rbac_name(i));
        corral_diag_fini(&d);
        cr_assert_eq(len, flen, "%s: stale embedded copy", corral_up_rbac_name(i));
        cr_assert_eq(memcmp(text, file, len), 0);
        cr_assert_eq(text[len], '\0');
        corral_free(file);
    }
}

Test(up, metrics_ports_and_endpoints_json)
{
    char dir[] = "/tmp/corral-endpoints-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    corral_up_opts_t o = {.data_dir = dir,
                          .sim_nodes = 1,
                          .scheduler_metrics_port = 20259,
                          .controller_metrics_port = 20257};
    corral_up_plan_t p;
    char err[256] = "", buf[2048];
    cr_assert_eq(corral_up_plan(&o, false, &p, err, sizeof(err)), 0, "%s", err);
    cr_assert(
        strstr(cmdline(&p, "scheduler", buf, sizeof(buf)), " --metrics-listen 127.0.0.1:20259"));
    cr_assert(
        strstr(cmdline(&p, "controller", buf, sizeof(buf)), " --metrics-listen 127.0.0.1:20257"));
    cr_assert_eq(corral_up_endpoints_write(&p, err, sizeof(err)), 0, "%s", err);
    char path[512], *text = NULL;
    size_t len = 0;
    snprintf(path, sizeof(path), "%s/endpoints.json", dir);
    corral_diag_t d;
    corral_diag_init(&d);
    cr_assert_eq(corral_file_read(path, 1 << 20, &d, &text, &len), 0);
    corral_diag_fini(&d);
    cr_assert(strstr(text, "\"scheduler\": \"http://127.0.0.1:20259\""), "%s", text);
    cr_assert(strstr(text, "\"controller\": \"http://127.0.0.1:20257\""), "%s", text);
    cr_assert(strstr(text, "\"nodeMetrics\": "
                           "\"https://127.0.0.1:6443/api/v1/nodes/{node}/proxy/metrics\""),
              "%s", text);
    cr_assert(strstr(text, "\"apiserver\": \"https://127.0.0.1:6443\""), "%s", text);
    cr_assert(strstr(text, "\"router\": \"http://127.0.0.1:8080\""), "%s", text);
    cr_assert(strstr(text, "\"routerMetrics\": \"http://127.0.0.1:9091\""), "%s", text);
    corral_free(text);
    unlink(path);
    rmdir(dir);
    corral_up_plan_fini(&p);
}
