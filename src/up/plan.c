/*
 * The plan of `corral up` (include/corral/up.h): from the options, where
 * every file lives under the data directory, which identities get tokens,
 * and the exact command line of every component. Pure (nothing is written or
 * started), so tests check the command lines without running them.
 *
 * Layout of DIR:
 *   up.lock                 held (flock) by the running `corral up`
 *   pki/ca.crt, ca.key      the CA; pki/apiserver.crt, .key the serving pair
 *   tokens.csv              the API server's token file (0600)
 *   kubeconfig              the admin's kubeconfig (0600)
 *   kubeconfigs/NAME.kubeconfig   one per component (0600)
 *   apiserver/              the API server's SQLite store
 *   agents/NODE/            each agent's root (pod directories, logs)
 *   logs/COMPONENT.log      each component's stdout and stderr
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "corral/auth.h"
#include "corral/common.h"
#include "corral/up.h"

#define DEFAULT_LISTEN  "127.0.0.1:6443"
#define DEFAULT_PROFILE "h100-sxm-8"
#define MAX_ARGS        32
/* The scheduler's and controller's default --metrics-listen ports
 * (kube-scheduler's and kube-controller-manager's). */
#define DEFAULT_SCHED_METRICS  10259
#define DEFAULT_CTRL_METRICS   10257
#define DEFAULT_ROUTER         "127.0.0.1:8080"
#define DEFAULT_ROUTER_METRICS 9091

void corral_up_default_dir(char *out, size_t len)
{
    const char *xdg = getenv("XDG_DATA_HOME");
    const char *home = getenv("HOME");
    if (xdg && *xdg == '/')
        snprintf(out, len, "%s/corral", xdg);
    else
        snprintf(out, len, "%s/.local/share/corral", home && *home ? home : ".");
}

/* "HOST:PORT", "[V6]:PORT" or ":PORT" into host and port. */
static int parse_listen(corral_up_plan_t *p, const char *listen, char *err, size_t errlen)
{
    const char *colon = strrchr(listen, ':');
    const char *h = listen;
    size_t hl = colon ? (size_t)(colon - listen) : 0;
    bool bracketed = hl >= 2 && h[0] == '[' && h[hl - 1] == ']';
    if (bracketed) {
        h++;
        hl -= 2;
    }
    char *end = NULL;
    long port = colon ? strtol(colon + 1, &end, 10) : 0;
    if (!colon || !colon[1] || *end || port < 1 || port > 65535) {
        snprintf(err, errlen, "--listen wants HOST:PORT with a port from 1 to 65535, got \"%s\"",
                 listen);
        return CORRAL_EINVAL;
    }
    p->host = corral_arena_strndup(&p->a, hl ? h : "127.0.0.1", hl ? hl : strlen("127.0.0.1"));
    unsigned char buf[16];
    if ((bracketed || strchr(p->host, ':')) && inet_pton(AF_INET6, p->host, buf) != 1) {
        snprintf(err, errlen, "--listen: \"%s\" is not an IPv6 address", p->host);
        return CORRAL_EINVAL;
    }
    p->port = (int)port;
    /* Clients on this machine reach a wildcard listener through loopback. */
    const char *via = p->host;
    if (!strcmp(via, "0.0.0.0"))
        via = "127.0.0.1";
    else if (!strcmp(via, "::"))
        via = "::1";
    p->server = strchr(via, ':') ? corral_arena_printf(&p->a, "https://[%s]:%d", via, p->port)
                                 : corral_arena_printf(&p->a, "https://%s:%d", via, p->port);
    return 0;
}

/* A node name from a hostname: lower case, [a-z0-9.-] only. */
static char *node_name(corral_arena_t *a, const char *given)
{
    char hn[256] = "";
    if (given && *given)
        snprintf(hn, sizeof(hn), "%s", given);
    else if (gethostname(hn, sizeof(hn) - 1) != 0 || !*hn)
        snprintf(hn, sizeof(hn), "localhost");
    for (char *c = hn; *c; c++) {
        *c = (char)tolower((unsigned char)*c);
        if (!isalnum((unsigned char)*c) && *c != '.' && *c != '-')
            *c = '-';
    }
    return corral_arena_strdup(a, hn);
}

/* DIR/rel + name + ext (name and ext may be NULL). */
static char *path3(corral_up_plan_t *p, const char *rel, const char *name, const char *ext)
{
    return corral_arena_printf(&p->a, "%s/%s%s%s", p->dir, rel, name ? name : "", ext ? ext : "");
}

static char *path(corral_up_plan_t *p, const char *rel)
{
    return path3(p, rel, NULL, NULL);
}

static void add_ident(corral_up_plan_t *p, const char *user, const char *groups)
{
    corral_up_ident_t *id = &p->ids[p->nids++];
    memset(id, 0, sizeof(*id));
    id->user = corral_arena_strdup(&p->a, user);
    id->groups = groups;
}

/* Append a component; the variadic arguments follow "corral" and end with
 * NULL. */
/* The --extra-config entries for subcommand cmd, appended at argv[n..];
 * returns the new count. */
static int add_extra(corral_up_plan_t *p, const char *cmd, char **argv, int n)
{
    size_t len = strlen(cmd);
    for (size_t i = 0; i < p->nextra && n <= MAX_ARGS; i++) {
        const char *e = p->extra[i];
        if (strncmp(e, cmd, len) == 0 && e[len] == '.')
            argv[n++] = corral_arena_printf(&p->a, "--%s", e + len + 1);
    }
    return n;
}

static void add_comp(corral_up_plan_t *p, const char *name, corral_up_tier_t tier,
                     const char *const *args)
{
    corral_up_component_t *c = &p->comps[p->ncomps++];
    c->name = corral_arena_strdup(&p->a, name);
    c->command = args[0];
    c->tier = tier;
    c->argv = corral_arena_alloc(&p->a, (MAX_ARGS + 2) * sizeof(char *));
    c->argv[0] = corral_arena_strdup(&p->a, "corral");
    int n = 1;
    for (size_t i = 0; args[i] && n <= MAX_ARGS; i++)
        c->argv[n++] = corral_arena_strdup(&p->a, args[i]);
    n = add_extra(p, args[0], c->argv, n);
    c->argv[n] = NULL;
    c->argc = n;
}

/* Every component asks its own API server for JSON: Corral's stores JSON,
 * and a protobuf answer costs it a parse and an encode (docs/benchmarks.md,
 * "Protobuf against JSON"); protobuf is the components' default for
 * kube-apiserver. */
#define JSON "application/json"

/* The inference router (docs/inference.md): its own read-only identity. */
static void plan_router(corral_up_plan_t *p, const char *listen, int mport)
{
    if (!strcmp(listen, "off"))
        return;
    const char *args[] = {
        "router",
        "--kubeconfig",
        path(p, "kubeconfigs/router.kubeconfig"),
        "--listen",
        listen,
        "--metrics-listen",
        corral_arena_printf(&p->a, "127.0.0.1:%d", mport ? mport : DEFAULT_ROUTER_METRICS),
        "--kube-api-content-type",
        JSON,
        NULL};
    add_comp(p, "router", CORRAL_UP_TIER_CONTROL, args);
}

static void plan_control(corral_up_plan_t *p, const char *listen, int sport, int cport)
{
    const char *api[] = {"apiserver",
                         "--data-dir",
                         path(p, "apiserver"),
                         "--listen",
                         listen,
                         "--token-auth-file",
                         path(p, "tokens.csv"),
                         "--tls-cert-file",
                         path(p, "pki/apiserver.crt"),
                         "--tls-private-key-file",
                         path(p, "pki/apiserver.key"),
                         NULL};
    add_comp(p, "apiserver", CORRAL_UP_TIER_API, api);
    const char *sched[] = {"scheduler",
                           "--kubeconfig",
                           path(p, "kubeconfigs/scheduler.kubeconfig"),
                           "--scheduler-name",
                           "corral,volcano,default-scheduler",
                           "--kube-api-content-type",
                           JSON,
                           sport ? "--metrics-listen" : NULL,
                           corral_arena_printf(&p->a, "127.0.0.1:%d", sport),
                           NULL};
    add_comp(p, "scheduler", CORRAL_UP_TIER_CONTROL, sched);
    /* InferenceService URLs name the router; its autoscaler reads the
     * router's metrics (neither when the router is off). */
    const char *ctrl[14] = {"controller",
                            "--kubeconfig",
                            path(p, "kubeconfigs/controller.kubeconfig"),
                            "--ingress-domain",
                            "example.com",
                            "--kube-api-content-type",
                            JSON};
    size_t nc = 7;
    if (p->router) {
        ctrl[nc++] = "--router-url";
        ctrl[nc++] = p->router;
    }
    if (p->router_metrics) {
        ctrl[nc++] = "--router-metrics";
        ctrl[nc++] = p->router_metrics;
    }
    if (cport) {
        ctrl[nc++] = "--metrics-listen";
        ctrl[nc++] = corral_arena_printf(&p->a, "127.0.0.1:%d", cport);
    }
    add_comp(p, "controller", CORRAL_UP_TIER_CONTROL, ctrl);
    p->scheduler_metrics =
        corral_arena_printf(&p->a, "http://127.0.0.1:%d", sport ? sport : DEFAULT_SCHED_METRICS);
    p->controller_metrics =
        corral_arena_printf(&p->a, "http://127.0.0.1:%d", cport ? cport : DEFAULT_CTRL_METRICS);
}

/* The i-th entry of a comma-separated list, cycling (node i of
 * --sim-profile A,B gets A, B, A, ...). */
static const char *nth_profile(corral_up_plan_t *p, const char *list, size_t i)
{
    size_t n = 1;
    for (const char *c = list; *c; c++)
        n += *c == ',';
    i %= n;
    const char *s = list;
    while (i--)
        s = strchr(s, ',') + 1;
    const char *end = strchr(s, ',');
    return corral_arena_strndup(&p->a, s, end ? (size_t)(end - s) : strlen(s));
}

static void plan_agents(corral_up_plan_t *p, const char *profile, int hollow)
{
    for (size_t i = 0; i < p->nnodes; i++) {
        const char *node = p->nodes[i];
        const char *gpus = p->real_gpus
                               ? "nvml"
                               : corral_arena_printf(&p->a, "sim:%s", nth_profile(p, profile, i));
        const char *args[] = {"agent", "--node-name", node, "--gpus", gpus, "--root",
                              path3(p, "agents/", node, NULL), "--stop-pods-on-exit",
                              /* /metrics on the kubelet port only: several agents here must not
                                 share :9400 (docs/up.md) */
                              "--metrics-listen", "off", "--kubeconfig",
                              path3(p, "kubeconfigs/node-", node, ".kubeconfig"),
                              "--kube-api-content-type", JSON, NULL};
        add_comp(p, corral_arena_printf(&p->a, "agent-%s", node), CORRAL_UP_TIER_AGENT, args);
    }
    if (hollow > 0) {
        const char *args[] = {"agent",
                              "--runtime",
                              "hollow",
                              "--hollow-nodes",
                              corral_arena_printf(&p->a, "%d", hollow),
                              "--node-prefix",
                              "hollow-",
                              "--gpus",
                              corral_arena_printf(&p->a, "sim:%s", nth_profile(p, profile, 0)),
                              "--token-file",
                              path(p, "kubeconfigs/hollow-tokens.csv"),
                              "--metrics-listen",
                              "off",
                              "--kubeconfig",
                              path(p, "kubeconfigs/hollow.kubeconfig"),
                              "--kube-api-content-type",
                              JSON,
                              NULL};
        add_comp(p, "agent-hollow", CORRAL_UP_TIER_AGENT, args);
    }
}

int corral_up_plan(const corral_up_opts_t *o, bool real_gpus, corral_up_plan_t *p, char *err,
                   size_t errlen)
{
    memset(p, 0, sizeof(*p));
    corral_arena_init(&p->a);
    const char *gpus = o->gpus ? o->gpus : "auto";
    const char *profile = o->sim_profile ? o->sim_profile : DEFAULT_PROFILE;
    if (!strncmp(gpus, "sim:", 4) && gpus[4])
        profile = gpus + 4;
    else if (strcmp(gpus, "auto") != 0 && strcmp(gpus, "nvml") != 0) {
        snprintf(err, errlen, "--gpus wants auto, nvml or sim:PROFILE, got \"%s\"", gpus);
        return CORRAL_EINVAL;
    }
    if (o->scheduler_metrics_port < 0 || o->scheduler_metrics_port > 65535 ||
        o->controller_metrics_port < 0 || o->controller_metrics_port > 65535 ||
        o->router_metrics_port < 0 || o->router_metrics_port > 65535) {
        snprintf(err, errlen, "metrics ports must be 0 to 65535");
        return CORRAL_EINVAL;
    }
    if (o->sim_nodes < 0 || o->sim_nodes > 1000 || o->hollow_nodes < 0 ||
        o->hollow_nodes > 100000) {
        snprintf(err, errlen, "--sim-nodes wants 0 to 1000, --hollow-nodes 0 to 100000");
        return CORRAL_EINVAL;
    }
    p->real_gpus = !strcmp(gpus, "nvml") || (!strcmp(gpus, "auto") && real_gpus);
    static const char *const comps[] = {"apiserver.", "scheduler.", "controller.", "router.",
                                        "agent."};
    for (size_t i = 0; i < o->nextra; i++) {
        bool known = false;
        for (size_t k = 0; k < CORRAL_ARRAY_LEN(comps); k++)
            known = known || (strncmp(o->extra[i], comps[k], strlen(comps[k])) == 0 &&
                              o->extra[i][strlen(comps[k])] != '\0');
        if (!known) {
            snprintf(err, errlen,
                     "--extra-config wants COMPONENT.FLAG=VALUE with COMPONENT apiserver, "
                     "scheduler, controller, router or agent, got \"%s\"",
                     o->extra[i]);
            return CORRAL_EINVAL;
        }
    }
    p->extra = o->extra;
    p->nextra = o->nextra;
    char cwd[4096] = ".";
    if (o->data_dir[0] != '/' && !getcwd(cwd, sizeof(cwd)))
        snprintf(cwd, sizeof(cwd), ".");
    p->dir = o->data_dir[0] == '/' ? corral_arena_strdup(&p->a, o->data_dir)
                                   : corral_arena_printf(&p->a, "%s/%s", cwd, o->data_dir);
    for (size_t n = strlen(p->dir); n > 1 && p->dir[n - 1] == '/'; n--)
        p->dir[n - 1] = '\0';
    const char *listen = o->listen ? o->listen : DEFAULT_LISTEN;
    int rc = parse_listen(p, listen, err, errlen);
    if (rc != 0)
        return rc;
    const char *rlisten = o->router_listen ? o->router_listen : DEFAULT_ROUTER;
    const char *rcolon = strrchr(rlisten, ':');
    char *rend = NULL;
    long rport = rcolon ? strtol(rcolon + 1, &rend, 10) : 0;
    if (strcmp(rlisten, "off") != 0 &&
        (!rcolon || !rcolon[1] || *rend || rport < 1 || rport > 65535)) {
        snprintf(err, errlen,
                 "--router-listen wants HOST:PORT with a port from 1 to 65535, or off, got \"%s\"",
                 rlisten);
        return CORRAL_EINVAL;
    }
    size_t nnodes = p->real_gpus ? 1 : (size_t)o->sim_nodes;
    p->nodes = corral_arena_alloc(&p->a, (nnodes + 1) * sizeof(char *));
    for (size_t i = 0; i < nnodes; i++)
        p->nodes[i] = p->real_gpus ? node_name(&p->a, o->node_name)
                                   : corral_arena_printf(&p->a, "sim-node-%zu", i);
    p->nnodes = nnodes;
    p->ids = corral_arena_alloc(&p->a, (CORRAL_UP_ID_NODES + nnodes + (size_t)o->hollow_nodes) *
                                           sizeof(*p->ids));
    add_ident(p, "admin", CORRAL_GROUP_MASTERS);
    add_ident(p, "system:kube-scheduler", "");
    add_ident(p, "system:kube-controller-manager", "");
    add_ident(p, "system:corral-metrics", ""); /* deploy/rbac/metrics-reader.yaml */
    add_ident(p, "system:corral-router", "");  /* deploy/rbac/router.yaml */
    for (size_t i = 0; i < nnodes; i++)
        add_ident(p, corral_arena_printf(&p->a, "system:node:%s", p->nodes[i]), "system:nodes");
    for (int i = 0; i < o->hollow_nodes; i++)
        add_ident(p, corral_arena_printf(&p->a, "system:node:hollow-%d", i), "system:nodes");
    p->comps = corral_arena_alloc(&p->a, (4 + nnodes + 1) * sizeof(*p->comps));
    if (strcmp(rlisten, "off") != 0) {
        const char *h = rlisten;
        if (!strncmp(h, "0.0.0.0:", 8) || h[0] == ':')
            h = corral_arena_printf(&p->a, "127.0.0.1:%s", strrchr(rlisten, ':') + 1);
        p->router = corral_arena_printf(&p->a, "http://%s", h);
        p->router_metrics = corral_arena_printf(&p->a, "http://127.0.0.1:%d",
                                                o->router_metrics_port ? o->router_metrics_port
                                                                       : DEFAULT_ROUTER_METRICS);
    }
    plan_control(p, listen, o->scheduler_metrics_port, o->controller_metrics_port);
    plan_router(p, rlisten, o->router_metrics_port);
    plan_agents(p, profile, o->hollow_nodes);
    return 0;
}

void corral_up_plan_fini(corral_up_plan_t *p)
{
    corral_arena_fini(&p->a);
    memset(p, 0, sizeof(*p));
}
