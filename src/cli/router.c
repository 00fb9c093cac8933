/*
 * `corral router`: the inference router (src/router, docs/inference.md,
 * "The router") against an API server until SIGINT or SIGTERM. Signals are
 * taken with sigwait on a thread of their own, which stops the loop.
 */
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/kubecli.h"
#include "corral/router.h"

static const char usage_text[] =
    "usage: corral router [--server URL | --kubeconfig FILE] [--token T] [options]\n"
    "\n"
    "An HTTP/1.1 reverse proxy in front of every InferenceService: Host S.NS[.domain]\n"
    "or path /serving/NS/S/..., split by status.components.predictor.traffic,\n"
    "requests held while a revision has no ready replica (docs/inference.md).\n"
    "\n"
    "  --listen ADDR            serve on HOST:PORT (127.0.0.1:8080)\n"
    "  --metrics-listen ADDR    serve /metrics on HOST:PORT (127.0.0.1:9091; \"off\": none)\n"
    "  --queue-limit N          requests held per revision with no ready replica (1000)\n"
    "  --queue-timeout DUR      how long one is held before a 503 (5m)\n"
    "  --max-conns N            client connections at once (10000)\n"
    "  --idle-timeout DUR       a kept-alive client connection with no request (75s)\n"
    "  --header-timeout DUR     a request head must arrive within (30s)\n"
    "  --connect-timeout DUR    connecting to a replica (5s)\n"
    "  --probe-period DUR       probing starting replicas while requests wait (50ms)\n"
    "  --max-idle-per-pod N     kept-alive connections per replica (64)\n"
    "  -q, --quiet              no log lines\n" CORRAL__KUBE_API_HELP CORRAL__CLI_HELP;

enum {
    OPT_LISTEN = 3000,
    OPT_METRICS,
    OPT_QLIMIT,
    OPT_QTIMEOUT,
    OPT_MAXCONNS,
    OPT_IDLE,
    OPT_HEADER,
    OPT_CONNECT,
    OPT_PROBE,
    OPT_MAXIDLE,
};

static int parse(int argc, char **argv, corral__cli_t *k, corral_router_opts_t *o)
{
    static const struct option longopts[] = {
        {"listen", required_argument, NULL, OPT_LISTEN},
        {"metrics-listen", required_argument, NULL, OPT_METRICS},
        {"queue-limit", required_argument, NULL, OPT_QLIMIT},
        {"queue-timeout", required_argument, NULL, OPT_QTIMEOUT},
        {"max-conns", required_argument, NULL, OPT_MAXCONNS},
        {"idle-timeout", required_argument, NULL, OPT_IDLE},
        {"header-timeout", required_argument, NULL, OPT_HEADER},
        {"connect-timeout", required_argument, NULL, OPT_CONNECT},
        {"probe-period", required_argument, NULL, OPT_PROBE},
        {"max-idle-per-pod", required_argument, NULL, OPT_MAXIDLE},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        CORRAL__CLI_LONGOPTS,
        CORRAL__KUBE_API_LONGOPTS,
        {NULL, 0, NULL, 0},
    };
    int ch;
    long long v = 0;
    optind = 1;
    while ((ch = getopt_long(argc, argv, "s:n:qh", longopts, NULL)) != -1) {
        int kf = corral__component_flag("corral router", &k->flags, ch, optarg);
        if (kf < 0)
            return CORRAL_EXIT_INVALID;
        if (kf > 0 || corral__cli_opt(k, ch, optarg))
            continue;
        bool ok = true;
        switch (ch) {
        case OPT_LISTEN:
            o->listen = optarg;
            break;
        case OPT_METRICS:
            o->metrics_listen = optarg;
            break;
        case OPT_QLIMIT:
            ok = corral__flag_int("router", "queue-limit", optarg, 1, 1000000, &v);
            o->queue_limit = (int)v;
            break;
        case OPT_MAXCONNS:
            ok = corral__flag_int("router", "max-conns", optarg, 1, 1000000, &v);
            o->max_conns = (int)v;
            break;
        case OPT_MAXIDLE:
            ok = corral__flag_int("router", "max-idle-per-pod", optarg, 1, 100000, &v);
            o->max_idle_per_pod = (int)v;
            break;
        case OPT_QTIMEOUT:
            ok = corral__flag_duration("router", "queue-timeout", optarg, &o->queue_timeout_ns);
            break;
        case OPT_IDLE:
            ok = corral__flag_duration("router", "idle-timeout", optarg, &o->idle_timeout_ns);
            break;
        case OPT_HEADER:
            ok = corral__flag_duration("router", "header-timeout", optarg, &o->header_timeout_ns);
            break;
        case OPT_CONNECT:
            ok = corral__flag_duration("router", "connect-timeout", optarg, &o->connect_timeout_ns);
            break;
        case OPT_PROBE:
            ok = corral__flag_duration("router", "probe-period", optarg, &o->probe_period_ns);
            break;
        case 'q':
            o->log = NULL;
            break;
        case 'h':
            fputs(usage_text, stdout);
            return CORRAL_EXIT_OK;
        default:
            fputs(usage_text, stderr);
            return CORRAL_EXIT_INVALID;
        }
        if (!ok)
            return CORRAL_EXIT_INVALID;
    }
    if (optind < argc) {
        fprintf(stderr, "corral router: unexpected argument '%s'\n", argv[optind]);
        return CORRAL_EXIT_INVALID;
    }
    return -1;
}

typedef struct sigctx {
    sigset_t set;
    corral_router_t *r;
} sigctx_t;

static void *sig_thread(void *arg)
{
    sigctx_t *s = arg;
    int sig = 0;
    sigwait(&s->set, &sig);
    fprintf(stderr, "corral router: %s, shutting down\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
    corral_router_stop(s->r);
    return NULL;
}

int corral_cmd_router(int argc, char **argv)
{
    corral__cli_t k;
    corral__cli_init(&k, "corral router");
    corral__component_flags_init(&k.flags);
    corral_router_opts_t o = {.log = stderr};
    int rc = parse(argc, argv, &k, &o);
    if (rc >= 0 || !corral__cli_connect(&k)) {
        corral__cli_fini(&k);
        return rc >= 0 ? rc : CORRAL_EXIT_FAIL;
    }
    o.cfg = &k.cfg;
    sigctx_t s;
    sigemptyset(&s.set);
    sigaddset(&s.set, SIGINT);
    sigaddset(&s.set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &s.set, NULL);
    signal(SIGPIPE, SIG_IGN);
    char err[512] = "";
    if (corral_router_new(&o, &s.r, err, sizeof(err)) != 0) {
        fprintf(stderr, "corral router: %s\n", err);
        corral__cli_fini(&k);
        return CORRAL_EXIT_FAIL;
    }
    pthread_t th;
    pthread_create(&th, NULL, sig_thread, &s);
    fprintf(stderr, "corral router: listening on %s (metrics on %s), watching %s\n",
            o.listen ? o.listen : "127.0.0.1:8080",
            o.metrics_listen ? o.metrics_listen : "127.0.0.1:9091", k.cfg.server);
    corral_router_run(s.r);
    pthread_join(th, NULL);
    corral_router_free(s.r);
    corral__cli_fini(&k);
    return CORRAL_EXIT_OK;
}
