/*
 * `corral controller`: run the controllers (Volcano Job, PodGroup and
 * Queue status, garbage collection, node lifecycle, InferenceService)
 * against an API server
 * until SIGINT or SIGTERM. Signals are taken with sigwait on a thread of
 * their own, which sets the stop flag and wakes the loop.
 */
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/kubecli.h"
#include "corral/controller.h"
#include "corral/timefmt.h"

static const char usage_text[] =
    "usage: corral controller [--server URL | --kubeconfig FILE] [--token T] [options]\n"
    "\n"
    "Runs the Volcano Job controller, PodGroup and Queue status, garbage collection\n"
    "by ownerReferences and node lifecycle against an API server (docs/controller.md).\n"
    "\n"
    "  --node-monitor-grace-period DUR  a node whose Lease is not renewed for this long\n"
    "                                   becomes Ready=Unknown and tainted unreachable (40s)\n"
    "  --node-monitor-period DUR        how often nodes are checked (5s)\n"
    "  --default-toleration-seconds N   how long pods without a toleration for\n"
    "                                   node.kubernetes.io/unreachable stay (300)\n"
    "  --status-period DUR              PodGroup and Queue status at most this often (500ms)\n"
    "  --workers N                      accepted; reconciling is serial\n"
    "  --controllers LIST               which run, as kube-controller-manager's: \"*\" (all,\n"
    "                                   the default), names, \"-NAME\" leaves one out; names:\n"
    "                                   job, queue, nodelifecycle, garbagecollector, usage,\n"
    "                                   inferenceservice (e.g. \"*,-job\" beside Volcano)\n"
    "  --leader-elect[=BOOL]            one active replica, elected with a Lease (default\n"
    "                                   false: run one)\n"
    "  --lease-name NAME                (corral-controller)\n"
    "  --lease-namespace NS             (kube-system)\n"
    "  --lease-duration DUR             (15s)\n"
    "  --renew-deadline DUR             (10s)\n"
    "  --retry-period DUR               (2s)\n"
    "  --metrics-listen ADDR            serve /metrics and /healthz on HOST:PORT\n"
    "                                   (127.0.0.1:10257; \"off\": none)\n"
    "  --usage-retention DUR            UsageRecords finished longer ago are pruned (90d)\n"
    "  --usage-max-records N            keep at most N UsageRecords, oldest pruned (100000)\n"
    "  --usage-prune-period DUR         how often retention runs (10m)\n"
    "\n"
    "The autoscaler of InferenceService revisions (Knative KPA, docs/inference.md):\n"
    "  --router-metrics URL[,URL...]    the routers' /metrics (HOST:PORT or URL; none: the\n"
    "                                   concurrency and rps metrics have no samples)\n"
    "  --agent-metrics-port N           read the agents' GPU metrics through\n"
    "                                   nodes/NODE:N/proxy (a cluster: 9400; default: the\n"
    "                                   node's own port, the agent's in corral up)\n"
    "  --autoscaler-tick DUR            how often metrics are collected (1s)\n"
    "  --autoscaler-stable-window DUR   the stable window (60s; 1s to 1h)\n"
    "  --autoscaler-panic-window DUR    the panic window (6s)\n"
    "  --scale-to-zero-grace DUR        idle this long after the stable window before\n"
    "                                   a revision goes to zero (30s)\n"
    "  --max-scale-up-rate X            at most X times the current replicas per decision (1000)\n"
    "  --max-scale-down-rate X          at least current / X replicas per decision (2)\n"
    "  --ingress-domain DOMAIN          InferenceService URLs: http://NAME.NS.DOMAIN "
    "(example.com)\n"
    "  --router-url URL                 InferenceService addresses: URL/serving/NS/NAME\n"
    "                                   (http://127.0.0.1:8080, the router's default)\n"
    "  -q, --quiet                      no log lines\n" CORRAL__KUBE_API_HELP CORRAL__CLI_HELP;

enum {
    OPT_GRACE = 3000,
    OPT_PERIOD,
    OPT_TOLERATION,
    OPT_STATUS,
    OPT_WORKERS,
    OPT_LEADER,
    OPT_METRICS,
    OPT_RETENTION,
    OPT_MAXREC,
    OPT_PRUNE,
    OPT_ROUTER_METRICS,
    OPT_AS_TICK,
    OPT_AS_STABLE,
    OPT_AS_PANIC,
    OPT_AS_GRACE,
    OPT_AS_UP,
    OPT_AS_DOWN,
    OPT_INGRESS_DOMAIN,
    OPT_ROUTER_URL,
    OPT_CONTROLLERS,
    OPT_AGENT_PORT,
    OPT_LEASE_NAME,
    OPT_LEASE_NS,
    OPT_LEASE_DUR,
    OPT_RENEW,
    OPT_RETRY,
};

static volatile int stop_flag;

typedef struct sigctx {
    sigset_t set;
    corral_controller_t *c;
} sigctx_t;

static void *sig_thread(void *arg)
{
    sigctx_t *s = arg;
    int sig = 0;
    sigwait(&s->set, &sig);
    fprintf(stderr, "corral controller: %s, shutting down\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
    stop_flag = 1;
    corral_controller_wake(s->c);
    return NULL;
}

/* --lease-duration, --renew-deadline, --retry-period: 100ms to 1h. */
static bool lease_duration(int ch, const char *s, corral_controller_opts_t *o)
{
    const char *flag = ch == OPT_LEASE_DUR ? "lease-duration"
                       : ch == OPT_RENEW   ? "renew-deadline"
                                           : "retry-period";
    int64_t ns = 0;
    if (!corral__flag_duration("controller", flag, s, &ns))
        return false;
    if (ns < 100000000 || ns > 3600 * CORRAL_NS_PER_SEC) {
        fprintf(stderr, "corral controller: --%s: must be from 100ms to 1h, got %s\n", flag, s);
        return false;
    }
    int64_t *dst = ch == OPT_LEASE_DUR ? &o->lease_ms
                   : ch == OPT_RENEW   ? &o->renew_ms
                                       : &o->retry_ms;
    *dst = ns / 1000000;
    return true;
}

/* A rate flag: a number greater than 1. */
static bool rate_flag(const char *flag, const char *s, double *out)
{
    char *end = NULL;
    double v = strtod(s, &end);
    if (end == s || *end || !(v > 1) || v > 1e6) {
        fprintf(stderr,
                "corral controller: --%s: want a number greater than 1 (e.g. 2), got "
                "\"%s\"\n",
                flag, s);
        return false;
    }
    *out = v;
    return true;
}

/* The autoscaler's durations: at least 1 s for windows and the tick at
 * least 10 ms; the stable window at most 1 h. */
static bool autoscaler_duration(int ch, const char *s, corral_controller_opts_t *o)
{
    static const struct {
        int ch;
        const char *flag;
        int64_t min_ns, max_ns;
    } f[] = {
        {OPT_AS_TICK, "autoscaler-tick", 10000000, 60 * CORRAL_NS_PER_SEC},
        {OPT_AS_STABLE, "autoscaler-stable-window", CORRAL_NS_PER_SEC, 3600 * CORRAL_NS_PER_SEC},
        {OPT_AS_PANIC, "autoscaler-panic-window", CORRAL_NS_PER_SEC, 3600 * CORRAL_NS_PER_SEC},
        {OPT_AS_GRACE, "scale-to-zero-grace", 0, 3600 * CORRAL_NS_PER_SEC},
    };
    int64_t *dst[] = {&o->autoscaler_tick_ns, &o->autoscaler_stable_window_ns,
                      &o->autoscaler_panic_window_ns, &o->scale_to_zero_grace_ns};
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(f); i++) {
        if (f[i].ch != ch)
            continue;
        int64_t ns = 0;
        if (corral_duration_parse(s, strlen(s), &ns) != 0) {
            fprintf(stderr,
                    "corral controller: --%s wants a duration like 30s or 500ms, got \"%s\"\n",
                    f[i].flag, s);
            return false;
        }
        if (ns < f[i].min_ns || ns > f[i].max_ns) {
            char lo[32], hi[32];
            corral_duration_format(f[i].min_ns, lo, sizeof(lo));
            corral_duration_format(f[i].max_ns, hi, sizeof(hi));
            fprintf(stderr, "corral controller: --%s: must be from %s to %s, got %s\n", f[i].flag,
                    lo, hi, s);
            return false;
        }
        /* 0 means "the default" to the autoscaler: a zero grace is 1 ns. */
        *dst[i] = ns > 0 ? ns : 1;
        return true;
    }
    return false;
}

/* One option of the controller's own (not -h, not the connection's):
 * 1 when taken, 0 when its value is wrong (said on stderr), -1 when ch is
 * not one. arg is non-NULL but for --leader-elect. */
static int parse_opt(int ch, const char *arg, corral_controller_opts_t *o)
{
    bool ok = true;
    long long v = 0;
    if (!arg && ch != OPT_LEADER && ch != 'q')
        return 0;
    switch (ch) {
    case OPT_GRACE:
        ok = corral__flag_duration("controller", "node-monitor-grace-period", arg,
                                   &o->node_monitor_grace_ns);
        break;
    case OPT_PERIOD:
        ok = corral__flag_duration("controller", "node-monitor-period", arg,
                                   &o->node_monitor_period_ns);
        break;
    case OPT_STATUS:
        ok = corral__flag_duration("controller", "status-period", arg, &o->status_period_ns);
        break;
    case OPT_TOLERATION:
        ok = corral__flag_int("controller", "default-toleration-seconds", arg, 0, INT64_MAX, &v);
        o->default_toleration_s = v;
        break;
    case OPT_WORKERS:
        ok = corral__flag_int("controller", "workers", arg, 0, INT32_MAX, &v);
        o->workers = (int)v;
        break;
    case OPT_LEADER:
        o->leader_elect = !arg || !strcmp(arg, "true");
        if (arg && strcmp(arg, "true") != 0 && strcmp(arg, "false") != 0) {
            fprintf(stderr, "corral controller: --leader-elect wants true or false, got \"%s\"\n",
                    arg);
            ok = false;
        }
        break;
    case OPT_CONTROLLERS: {
        unsigned mask;
        char why[300];
        o->controllers = arg;
        ok = corral_controller_parse_list(arg, &mask, why, sizeof(why)) == 0;
        if (!ok)
            fprintf(stderr, "corral controller: %s\n", why);
        break;
    }
    case OPT_LEASE_NAME:
        o->lease_name = arg;
        break;
    case OPT_AGENT_PORT:
        ok = corral__flag_int("controller", "agent-metrics-port", arg, 1, 65535, &v);
        o->agent_metrics_port = (int)v;
        break;
    case OPT_LEASE_NS:
        o->lease_ns = arg;
        break;
    case OPT_LEASE_DUR:
    case OPT_RENEW:
    case OPT_RETRY:
        ok = lease_duration(ch, arg, o);
        break;
    case OPT_METRICS:
        o->metrics_listen = arg;
        break;
    case OPT_RETENTION:
        ok = corral__flag_days("controller", "usage-retention", arg, &o->usage_retention_ns);
        break;
    case OPT_PRUNE:
        ok = corral__flag_duration("controller", "usage-prune-period", arg,
                                   &o->usage_prune_period_ns);
        break;
    case OPT_MAXREC:
        ok = corral__flag_int("controller", "usage-max-records", arg, 1, INT64_MAX, &v);
        o->usage_max_records = v;
        break;
    case OPT_ROUTER_METRICS:
        o->router_metrics = arg;
        break;
    case OPT_AS_TICK:
    case OPT_AS_STABLE:
    case OPT_AS_PANIC:
    case OPT_AS_GRACE:
        ok = autoscaler_duration(ch, arg, o);
        break;
    case OPT_AS_UP:
    case OPT_AS_DOWN:
        ok = rate_flag(ch == OPT_AS_UP ? "max-scale-up-rate" : "max-scale-down-rate", arg,
                       ch == OPT_AS_UP ? &o->max_scale_up_rate : &o->max_scale_down_rate);
        break;
    case OPT_INGRESS_DOMAIN:
        o->ingress_domain = arg;
        break;
    case OPT_ROUTER_URL:
        o->router_url = arg;
        break;
    case 'q':
        o->log = NULL;
        break;
    default:
        return -1;
    }
    return ok ? 1 : 0;
}

static int parse(int argc, char **argv, corral__cli_t *k, corral_controller_opts_t *o)
{
    static const struct option longopts[] = {
        {"node-monitor-grace-period", required_argument, NULL, OPT_GRACE},
        {"node-monitor-period", required_argument, NULL, OPT_PERIOD},
        {"default-toleration-seconds", required_argument, NULL, OPT_TOLERATION},
        {"status-period", required_argument, NULL, OPT_STATUS},
        {"workers", required_argument, NULL, OPT_WORKERS},
        {"leader-elect", optional_argument, NULL, OPT_LEADER},
        {"metrics-listen", required_argument, NULL, OPT_METRICS},
        {"usage-retention", required_argument, NULL, OPT_RETENTION},
        {"usage-max-records", required_argument, NULL, OPT_MAXREC},
        {"usage-prune-period", required_argument, NULL, OPT_PRUNE},
        {"router-metrics", required_argument, NULL, OPT_ROUTER_METRICS},
        {"autoscaler-tick", required_argument, NULL, OPT_AS_TICK},
        {"autoscaler-stable-window", required_argument, NULL, OPT_AS_STABLE},
        {"autoscaler-panic-window", required_argument, NULL, OPT_AS_PANIC},
        {"scale-to-zero-grace", required_argument, NULL, OPT_AS_GRACE},
        {"max-scale-up-rate", required_argument, NULL, OPT_AS_UP},
        {"max-scale-down-rate", required_argument, NULL, OPT_AS_DOWN},
        {"ingress-domain", required_argument, NULL, OPT_INGRESS_DOMAIN},
        {"router-url", required_argument, NULL, OPT_ROUTER_URL},
        {"controllers", required_argument, NULL, OPT_CONTROLLERS},
        {"agent-metrics-port", required_argument, NULL, OPT_AGENT_PORT},
        {"lease-name", required_argument, NULL, OPT_LEASE_NAME},
        {"lease-namespace", required_argument, NULL, OPT_LEASE_NS},
        {"lease-duration", required_argument, NULL, OPT_LEASE_DUR},
        {"renew-deadline", required_argument, NULL, OPT_RENEW},
        {"retry-period", required_argument, NULL, OPT_RETRY},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        CORRAL__CLI_LONGOPTS,
        CORRAL__KUBE_API_LONGOPTS,
        {NULL, 0, NULL, 0},
    };
    int ch;
    optind = 1;
    while ((ch = getopt_long(argc, argv, "s:n:qh", longopts, NULL)) != -1) {
        int kf = corral__component_flag("corral controller", &k->flags, ch, optarg);
        if (kf < 0)
            return CORRAL_EXIT_INVALID;
        if (kf > 0 || corral__cli_opt(k, ch, optarg))
            continue;
        if (ch == 'h') {
            fputs(usage_text, stdout);
            return CORRAL_EXIT_OK;
        }
        int r = parse_opt(ch, optarg, o);
        if (r < 0)
            fputs(usage_text, stderr);
        if (r != 1)
            return CORRAL_EXIT_INVALID;
    }
    if (optind < argc) {
        fprintf(stderr, "corral controller: unexpected argument '%s'\n", argv[optind]);
        return CORRAL_EXIT_INVALID;
    }
    return -1;
}

int corral_cmd_controller(int argc, char **argv)
{
    corral__cli_t k;
    corral__cli_init(&k, "corral controller");
    corral__component_flags_init(&k.flags);
    corral_controller_opts_t o = {
        .default_toleration_s = -1, .log = stderr, .metrics_listen = "127.0.0.1:10257"};
    int rc = parse(argc, argv, &k, &o);
    if (rc >= 0 || !corral__cli_connect(&k)) {
        corral__cli_fini(&k);
        return rc >= 0 ? rc : CORRAL_EXIT_FAIL;
    }
    o.cfg = &k.cfg;
    if (o.status_period_ns <= 0)
        o.status_period_ns = 500 * INT64_C(1000000);
    sigctx_t s;
    sigemptyset(&s.set);
    sigaddset(&s.set, SIGINT);
    sigaddset(&s.set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &s.set, NULL);
    char err[512] = "";
    if (corral_controller_new(&o, &s.c, err, sizeof(err)) != 0) {
        fprintf(stderr, "corral controller: %s\n", err);
        corral__cli_fini(&k);
        return CORRAL_EXIT_FAIL;
    }
    pthread_t th;
    pthread_create(&th, NULL, sig_thread, &s);
    fprintf(stderr, "corral controller: watching %s%s\n", k.cfg.server,
            o.leader_elect ? " (once elected leader)" : "");
    int run = corral_controller_run(s.c, &stop_flag);
    if (run != 0)
        pthread_cancel(th); /* no signal came: sigwait is a cancellation point */
    pthread_join(th, NULL);
    corral_controller_free(s.c);
    corral__cli_fini(&k);
    return run != 0 ? CORRAL_EXIT_FAIL : CORRAL_EXIT_OK;
}
