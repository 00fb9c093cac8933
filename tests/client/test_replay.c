/*
 * Recorded exchanges of a kube-apiserver (tests/client/exchanges/NAME.http,
 * written from the upstream API documentation and kube-apiserver's
 * answers) replayed against the client: an informer's paged LIST, WATCH
 * with bookmarks and a 410 Gone relist; leader election on a Lease through
 * a 409 Conflict; the components' writes (pods/binding, Event, node status
 * strategic merge patch); 429/503 with Retry-After retried, a 500 not; a
 * 401 that runs the exec plugin again; a 403 Status; a rotated service
 * account token. Each request is checked against the recording (replay.h).
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "corral/client.h"
#include "corral/informer.h"
#include "corral/io.h"
#include "corral/leader.h"
#include "replay.c.h"

TestSuite(exchanges, .timeout = 30);

#define EXCHANGES "tests/client/exchanges/"

static void config_for(corral_client_config_t *cfg, const replay_t *r, const char *token)
{
    corral_client_config_init(cfg);
    cfg->server = corral_strdup(replay_url(r));
    if (token)
        cfg->token = corral_strdup(token);
}

static void assert_all_played(replay_t *r)
{
    bool all = replay_wait(r, 10000);
    cr_assert_null(replay_diff(r), "%s", replay_diff(r));
    cr_assert(all, "%zu of %zu exchanges played", replay_played(r), replay_count(r));
}

/* The fake clock: waits advance it and are summed. */
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

/* --- informer: paged LIST, WATCH, BOOKMARK, 410 ------------------------------------------ */

typedef struct seen {
    corral_watch_type_t type;
    char name[64];
} seen_t;

static size_t collect(corral_evq_t *q, seen_t *out, size_t max, size_t want)
{
    size_t n = 0;
    for (int i = 0; i < 200 && n < want; i++) {
        corral_watch_ev_t *list = corral_evq_take(q, 50);
        while (list) {
            corral_watch_ev_t *next = list->next;
            if (n < max) {
                out[n].type = list->type;
                snprintf(out[n].name, sizeof(out[n].name), "%s", list->name);
            }
            n++;
            corral_watch_ev_free(list);
            list = next;
        }
    }
    return n;
}

Test(exchanges, informer_pages_watches_bookmarks_and_relists_on_410)
{
    replay_t *r = replay_start(EXCHANGES "informer_pods.http");
    corral_client_config_t cfg;
    config_for(&cfg, r, "replay-token");
    corral_evq_t *q = corral_evq_new();
    corral_informer_opts_t o = {
        .kind = CORRAL_KIND_POD, .page_size = 2, .watch_timeout_s = 300, .backoff_max_ms = 50};
    corral_informer_t *inf = NULL;
    char err[256];
    cr_assert_eq(corral_informer_start(&cfg, &o, q, &inf, err, sizeof(err)), 0, "%s", err);
    seen_t ev[32];
    size_t n = collect(q, ev, 32, 10);
    assert_all_played(r);
    corral_informer_stop(inf);
    static const struct {
        corral_watch_type_t type;
        const char *name;
    } want[] = {
        {CORRAL_WATCH_ADDED, "p1"},    {CORRAL_WATCH_ADDED, "p2"},   {CORRAL_WATCH_ADDED, "p3"},
        {CORRAL_WATCH_SYNCED, ""},     {CORRAL_WATCH_ADDED, "p4"},   {CORRAL_WATCH_MODIFIED, "p1"},
        {CORRAL_WATCH_MODIFIED, "p4"}, {CORRAL_WATCH_DELETED, "p2"}, {CORRAL_WATCH_DELETED, "p3"},
        {CORRAL_WATCH_SYNCED, ""},
    };
    cr_assert_eq(n, CORRAL_ARRAY_LEN(want), "%zu events", n);
    /* the relist's DELETED come in slot order: compare as a set there */
    for (size_t i = 0; i < n; i++) {
        bool found = false;
        size_t lo = i >= 7 && i <= 8 ? 7 : i, hi = i >= 7 && i <= 8 ? 8 : i;
        for (size_t j = lo; j <= hi; j++)
            found |= ev[i].type == want[j].type && !strcmp(ev[i].name, want[j].name);
        cr_assert(found, "event %zu: type %d %s", i, ev[i].type, ev[i].name);
    }
    corral_evq_free(q);
    corral_client_config_fini(&cfg);
    replay_stop(r);
}

/* --- leader election ----------------------------------------------------------------------- */

Test(exchanges, leader_creates_renews_and_survives_a_409)
{
    replay_t *r = replay_start(EXCHANGES "lease.http");
    corral_client_config_t cfg;
    config_for(&cfg, r, NULL);
    corral_leader_opts_t o = {.name = "corral-scheduler",
                              .ns = "kube-system",
                              .identity = "sched-a",
                              .lease_ms = 15000,
                              .renew_ms = 10000,
                              .retry_ms = 20};
    corral_leader_t *l = NULL;
    char err[256];
    cr_assert_eq(corral_leader_start(&cfg, &o, &l, err, sizeof(err)), 0, "%s", err);
    assert_all_played(r);
    cr_assert(corral_leader_is_leader(l));
    cr_assert_not(corral_leader_lost(l));
    corral_leader_stop(l, false);
    corral_client_config_fini(&cfg);
    replay_stop(r);
}

/* --- the components' writes ------------------------------------------------------------------ */

static long send_req(corral_client_t *c, const char *method, const char *path, const char *ctype,
                     const char *body, corral_client_resp_t *resp)
{
    corral_client_resp_init(resp);
    int rc = corral_client_request(c, method, path, ctype, body, body ? strlen(body) : 0, resp);
    cr_assert_eq(rc, 0, "%s %s: %s", method, path, resp->error);
    return resp->code;
}

Test(exchanges, binding_event_and_node_status_patch)
{
    replay_t *r = replay_start(EXCHANGES "writes.http");
    corral_client_config_t cfg;
    config_for(&cfg, r, "replay-token");
    corral_client_t *c = corral_client_new(&cfg);
    corral_client_resp_t resp;
    cr_assert_eq(send_req(c, "POST", "/api/v1/namespaces/default/pods/p1/binding", NULL,
                          "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":"
                          "\"p1\",\"namespace\":\"default\",\"annotations\":{\"corral.dev/"
                          "gpu-ids\":\"0,1\"}},\"target\":{\"apiVersion\":\"v1\",\"kind\":"
                          "\"Node\",\"name\":\"n1\"}}",
                          &resp),
                 201);
    cr_assert(strstr(resp.body.p, "\"status\":\"Success\""));
    corral_client_resp_fini(&resp);
    cr_assert_eq(send_req(c, "POST", "/api/v1/namespaces/default/events", NULL,
                          "{\"apiVersion\":\"v1\",\"kind\":\"Event\",\"metadata\":{\"name\":"
                          "\"p1.187d2a1b3c4d5e6f\",\"namespace\":\"default\"},"
                          "\"involvedObject\":{\"kind\":\"Pod\",\"namespace\":\"default\","
                          "\"name\":\"p1\"},\"reason\":\"Scheduled\",\"message\":\"Successfully "
                          "assigned default/p1 to n1\",\"type\":\"Normal\",\"source\":{"
                          "\"component\":\"corral-scheduler\"},\"count\":1}",
                          &resp),
                 201);
    corral_client_resp_fini(&resp);
    cr_assert_eq(send_req(c, "PATCH", "/api/v1/nodes/n1/status",
                          "application/strategic-merge-patch+json",
                          "{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\","
                          "\"reason\":\"KubeletReady\"}]}}",
                          &resp),
                 200);
    corral_client_resp_fini(&resp);
    assert_all_played(r);
    corral_client_free(c);
    corral_client_config_fini(&cfg);
    replay_stop(r);
}

/* --- Retry-After --------------------------------------------------------------------------- */

Test(exchanges, retry_after_on_429_and_503_capped_and_not_on_a_plain_500)
{
    replay_t *r = replay_start(EXCHANGES "retry_after.http");
    corral_client_config_t cfg;
    config_for(&cfg, r, NULL);
    corral_client_t *c = corral_client_new(&cfg);
    fake_clock_t clk = {1000000, 0};
    corral_client_set_clock(c, fake_now, fake_sleep, &clk);
    corral_client_set_retry(c, 10, 2000); /* the 503's 3 s capped at 2 */
    corral_client_resp_t resp;
    cr_assert_eq(send_req(c, "GET", "/api/v1/namespaces/default/pods/p1", NULL, NULL, &resp), 200);
    corral_client_resp_fini(&resp);
    cr_assert_eq(clk.slept, 1000000, "Retry-After: 1 waited %lld us", (long long)clk.slept);
    cr_assert_eq(send_req(c, "POST", "/api/v1/namespaces/default/pods/p1/binding", NULL,
                          "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":"
                          "\"p1\",\"namespace\":\"default\"},\"target\":{\"apiVersion\":\"v1\","
                          "\"kind\":\"Node\",\"name\":\"n1\"}}",
                          &resp),
                 201, "a write the server refused with Retry-After is sent again");
    corral_client_resp_fini(&resp);
    cr_assert_eq(clk.slept, 3000000);
    cr_assert_eq(send_req(c, "POST", "/api/v1/namespaces/default/events", NULL,
                          "{\"apiVersion\":\"v1\",\"kind\":\"Event\"}", &resp),
                 500, "a 500 without Retry-After is the answer");
    char reason[64], msg[256];
    corral_client_error(&resp, reason, sizeof(reason), msg, sizeof(msg));
    cr_assert_str_eq(reason, "InternalError");
    corral_client_resp_fini(&resp);
    assert_all_played(r);
    cr_assert_eq(replay_extra(r), 0, "the 500 was not retried");
    corral_client_stats_t st;
    corral_client_stats(c, &st);
    cr_assert_eq(st.retries, 2);
    cr_assert_eq(st.requests, 5);
    corral_client_free(c);
    corral_client_config_fini(&cfg);
    replay_stop(r);
}

/* --- 401: the exec plugin again ------------------------------------------------------------ */

static char plugin_dir[64];

/* A plugin that answers tok-1, tok-2, ... (one more each run). */
static void write_plugin(corral_client_config_t *cfg)
{
    snprintf(plugin_dir, sizeof(plugin_dir), "/tmp/corral-exec-XXXXXX");
    cr_assert_not_null(mkdtemp(plugin_dir));
    char path[128];
    snprintf(path, sizeof(path), "%s/plugin.sh", plugin_dir);
    FILE *fp = fopen(path, "w");
    fputs("#!/bin/sh\n"
          "n=$(cat \"$DIR/count\" 2>/dev/null || echo 0); n=$((n+1)); echo $n >\"$DIR/count\"\n"
          "printf '%s' \"$KUBERNETES_EXEC_INFO\" >\"$DIR/info\"\n"
          "printf '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":"
          "\"ExecCredential\",\"status\":{\"token\":\"tok-%s\"}}' \"$n\"\n",
          fp);
    fclose(fp);
    chmod(path, 0755);
    corral_client_exec_t *e = corral_calloc(1, sizeof(*e));
    e->command = corral_strdup(path);
    e->api_version = corral_strdup("client.authentication.k8s.io/v1");
    e->interactive_mode = corral_strdup("Never");
    e->env = corral_calloc(1, sizeof(char *));
    char env[128];
    snprintf(env, sizeof(env), "DIR=%s", plugin_dir);
    e->env[0] = corral_strdup(env);
    e->nenv = 1;
    e->provide_cluster_info = true;
    cfg->exec = e;
}

static void remove_plugin(void)
{
    const char *files[] = {"plugin.sh", "count", "info"};
    for (size_t i = 0; i < 3; i++) {
        char p[128];
        snprintf(p, sizeof(p), "%s/%s", plugin_dir, files[i]);
        unlink(p);
    }
    rmdir(plugin_dir);
}

Test(exchanges, a_401_runs_the_exec_plugin_again)
{
    replay_t *r = replay_start(EXCHANGES "exec_401.http");
    corral_client_config_t cfg;
    config_for(&cfg, r, NULL);
    write_plugin(&cfg);
    corral_client_t *c = corral_client_new(&cfg);
    corral_client_resp_t resp;
    cr_assert_eq(send_req(c, "GET", "/api/v1/nodes?limit=500", NULL, NULL, &resp), 200);
    corral_client_resp_fini(&resp);
    assert_all_played(r);
    cr_assert_eq(corral_client_exec_runs(), 2);
    /* KUBERNETES_EXEC_INFO: the spec, with the cluster (provideClusterInfo) */
    char path[128], *info = NULL;
    size_t len = 0;
    snprintf(path, sizeof(path), "%s/info", plugin_dir);
    corral_diag_t d;
    corral_diag_init(&d);
    cr_assert_eq(corral_file_read(path, 4096, &d, &info, &len), 0);
    corral_diag_fini(&d);
    cr_assert(strstr(info, "\"kind\":\"ExecCredential\""), "%s", info);
    cr_assert(strstr(info, "\"interactive\":false"), "%s", info);
    char want[128];
    snprintf(want, sizeof(want), "\"cluster\":{\"server\":\"%s\"", replay_url(r));
    cr_assert(strstr(info, want), "%s", info);
    corral_free(info);
    corral_client_free(c);
    corral_client_config_fini(&cfg);
    remove_plugin();
    replay_stop(r);
}

/* --- 403 ------------------------------------------------------------------------------------ */

Test(exchanges, a_403_status_is_reported_not_retried)
{
    replay_t *r = replay_start(EXCHANGES "forbidden.http");
    corral_client_config_t cfg;
    config_for(&cfg, r, "replay-token");
    corral_client_t *c = corral_client_new(&cfg);
    corral_client_resp_t resp;
    cr_assert_eq(send_req(c, "GET", "/api/v1/secrets?limit=500", NULL, NULL, &resp), 403);
    char reason[64], msg[512];
    corral_client_error(&resp, reason, sizeof(reason), msg, sizeof(msg));
    cr_assert_str_eq(reason, "Forbidden");
    cr_assert(strstr(msg, "cannot list resource \"secrets\""), "%s", msg);
    corral_client_resp_fini(&resp);
    assert_all_played(r);
    cr_assert_eq(replay_extra(r), 0);
    corral_client_free(c);
    corral_client_config_fini(&cfg);
    replay_stop(r);
}

/* --- the service account token rotated --------------------------------------------------- */

static void put_token(const char *dir, const char *tok)
{
    char tmp[128], path[128];
    snprintf(tmp, sizeof(tmp), "%s/.token.new", dir);
    snprintf(path, sizeof(path), "%s/token", dir);
    FILE *fp = fopen(tmp, "w");
    fputs(tok, fp);
    fclose(fp);
    rename(tmp, path); /* as kubelet swaps a projected volume's files */
}

Test(exchanges, a_rotated_service_account_token_is_read_again)
{
    replay_t *r = replay_start(EXCHANGES "token_rotation.http");
    char dir[] = "/tmp/corral-sa-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    put_token(dir, "tok-a");
    char path[128];
    snprintf(path, sizeof(path), "%s/namespace", dir);
    FILE *fp = fopen(path, "w");
    fputs("corral-system", fp);
    fclose(fp);
    setenv("CORRAL_SERVICEACCOUNT_DIR", dir, 1);
    setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    unsetenv("POD_NAMESPACE");
    corral_client_config_t cfg;
    corral_client_config_init(&cfg);
    char err[256];
    cr_assert_eq(corral_client_config_in_cluster(&cfg, err, sizeof(err)), 0, "%s", err);
    cr_assert_str_eq(cfg.server, "https://10.96.0.1:443");
    cr_assert_str_eq(cfg.namespace, "corral-system");
    corral_free(cfg.server);
    cfg.server = corral_strdup(replay_url(r)); /* the recording speaks HTTP */
    corral_client_t *c = corral_client_new(&cfg);
    fake_clock_t clk = {1000000, 0};
    corral_client_set_clock(c, fake_now, fake_sleep, &clk);
    const char *list = "/api/v1/namespaces/corral-system/pods?limit=500";
    corral_client_resp_t resp;
    cr_assert_eq(send_req(c, "GET", list, NULL, NULL, &resp), 200);
    corral_client_resp_fini(&resp);
    put_token(dir, "tok-b"); /* a new file: read at the next request */
    cr_assert_eq(send_req(c, "GET", list, NULL, NULL, &resp), 200);
    corral_client_resp_fini(&resp);
    /* tok-c written in place with the old mtime: only the 401 reveals it */
    snprintf(path, sizeof(path), "%s/token", dir);
    struct stat st;
    stat(path, &st);
    fp = fopen(path, "r+");
    fputs("tok-c", fp);
    fclose(fp);
    struct timespec times[2] = {st.st_atim, st.st_mtim};
    utimensat(AT_FDCWD, path, times, 0);
    cr_assert_eq(send_req(c, "GET", list, NULL, NULL, &resp), 200);
    corral_client_resp_fini(&resp);
    assert_all_played(r);
    corral_client_free(c);
    corral_client_config_fini(&cfg);
    unlink(path);
    snprintf(path, sizeof(path), "%s/namespace", dir);
    unlink(path);
    rmdir(dir);
    replay_stop(r);
}

/* --- the harness itself ------------------------------------------------------------------ */

Test(exchanges, a_request_unlike_the_recording_fails_with_a_diff)
{
    replay_t *r = replay_start(EXCHANGES "forbidden.http");
    corral_client_config_t cfg;
    config_for(&cfg, r, "another-token");
    corral_client_t *c = corral_client_new(&cfg);
    corral_client_resp_t resp;
    cr_assert_eq(send_req(c, "GET", "/api/v1/secrets?limit=50", NULL, NULL, &resp), 400);
    corral_client_resp_fini(&resp);
    const char *d = replay_diff(r);
    cr_assert_not_null(d);
    cr_assert(strstr(d, "forbidden.http:5: exchange 1"), "%s", d);
    cr_assert(strstr(d, "query: want limit=500"), "%s", d);
    cr_assert(strstr(d, "header Authorization: want \"Bearer replay-token\""), "%s", d);
    corral_client_free(c);
    corral_client_config_fini(&cfg);
    replay_stop(r);
}
