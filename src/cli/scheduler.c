/*
 * `corral scheduler`: the live scheduler as a command (include/corral/scheduler.h,
 * docs/scheduler.md): flags, the client configuration, signals. SIGTERM and
 * SIGINT stop it cleanly (the Lease is released); a lost Lease ends it with
 * status 1 so that its supervisor starts it again as a candidate.
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/kubecli.h"
#include "corral/scheduler.h"
#include "corral/timefmt.h"

static volatile int stop_int;

static void on_signal(int sig)
{
    (void)sig;
    stop_int = 1;
}

static void usage(FILE *fp)
{
    fprintf(fp, "usage: corral scheduler [--server URL | --kubeconfig FILE] [--token T] [options]\n"
                "\n"
                "Schedule pods through an API server: watch, run the engine, bind, evict, report.\n"
                "\n"
                "  --server URL, --kubeconfig FILE, --context NAME, --token T,\n"
                "  --certificate-authority FILE, --insecure-skip-tls-verify\n"
                "                              where the API server is and how to log in\n"
                "  --kube-api-qps N            requests per second to the API server (50; -1: no "
                "limit)\n"
                "  --kube-api-burst N          burst above it (100)\n"
                "  --kube-api-content-type T   application/vnd.kubernetes.protobuf (default) or\n"
                "                              application/json\n"
                "  --scheduler-name NAME       schedulerName values served (repeatable or a comma\n"
                "                              list; default corral,volcano,default-scheduler)\n"
                "  --config FILE               a corral.dev/v1alpha1 SchedulerConfiguration file\n"
                "  --config-name NAME          else this SchedulerConfiguration from the API,\n"
                "                              watched (default corral)\n"
                "  --leader-elect[=BOOL]       elect one active scheduler with a Lease (default "
                "true)\n"
                "  --lease-name NAME           default corral-scheduler\n"
                "  --lease-namespace NS        default kube-system\n"
                "  --lease-duration D          default 15s\n"
                "  --renew-deadline D          default 10s\n"
                "  --retry-period D            default 2s\n"
                "  --binders N                 concurrent API writers (default 16)\n"
                "  --event-interval D          at most one FailedScheduling event write per pod\n"
                "                              per D (default 30s)\n"
                "  --metrics-listen ADDR       serve /metrics and /healthz on HOST:PORT (default\n"
                "                              127.0.0.1:10259; \"off\": none)\n"
                "  --v N                       log level: 0 changes of state, 1 decisions, 2 "
                "periodic counters\n");
}

enum {
    OPT_NAME = 256,
    OPT_CONFIG,
    OPT_CONFIG_NAME,
    OPT_ELECT,
    OPT_LEASE_NAME,
    OPT_LEASE_NS,
    OPT_LEASE_DUR,
    OPT_RENEW,
    OPT_RETRY,
    OPT_BINDERS,
    OPT_EVINT,
    OPT_V,
    OPT_METRICS
};

typedef struct sopts {
    corral_client_flags_t f;
    corral_scheduler_opts_t o;
    const char *names[16];
    char *names_buf[16];
} sopts_t;

static int add_names(sopts_t *s, const char *list)
{
    const char *p = list;
    while (*p) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n && s->o.nnames >= 16)
            return -1;
        if (n) {
            char *name = corral_malloc(n + 1);
            memcpy(name, p, n);
            name[n] = '\0';
            s->names_buf[s->o.nnames] = name;
            s->names[s->o.nnames++] = name;
        }
        p = end ? end + 1 : p + n;
    }
    return 0;
}

static int duration_ms(const char *flag, const char *v, int64_t *out)
{
    int64_t ns;
    if (!corral__flag_duration("scheduler", flag, v, &ns))
        return -1;
    *out = ns / 1000000;
    return 0;
}

static bool parse_bool(const char *v, bool *out)
{
    if (!v || !strcmp(v, "true") || !strcmp(v, "1")) {
        *out = true;
        return true;
    }
    if (!strcmp(v, "false") || !strcmp(v, "0")) {
        *out = false;
        return true;
    }
    return false;
}

static int parse_one(sopts_t *s, int c, const char *arg)
{
    long long v;
    switch (c) {
    case OPT_NAME:
        return add_names(s, arg);
    case OPT_CONFIG:
        s->o.config_file = arg;
        return 0;
    case OPT_CONFIG_NAME:
        s->o.config_name = arg;
        return 0;
    case OPT_ELECT:
        if (parse_bool(arg, &s->o.leader_elect))
            return 0;
        fprintf(stderr, "corral scheduler: --leader-elect wants true or false, got \"%s\"\n", arg);
        return -1;
    case OPT_LEASE_NAME:
        s->o.lease_name = arg;
        return 0;
    case OPT_LEASE_NS:
        s->o.lease_ns = arg;
        return 0;
    case OPT_LEASE_DUR:
        return duration_ms("lease-duration", arg, &s->o.lease_ms);
    case OPT_RENEW:
        return duration_ms("renew-deadline", arg, &s->o.renew_ms);
    case OPT_RETRY:
        return duration_ms("retry-period", arg, &s->o.retry_ms);
    case OPT_EVINT:
        return duration_ms("event-interval", arg, &s->o.event_interval_ms);
    case OPT_BINDERS:
        if (!corral__flag_int("scheduler", "binders", arg, 1, 256, &v))
            return -1;
        s->o.binders = (int)v;
        return 0;
    case OPT_METRICS:
        s->o.metrics_listen = arg;
        return 0;
    case OPT_V:
        if (!corral__flag_int("scheduler", "v", arg, 0, 256, &v))
            return -1;
        s->o.verbosity = (int)v;
        return 0;
    default:
        return -1;
    }
}

static int parse_opts(int argc, char **argv, sopts_t *s)
{
    static const struct option opts[] = {CORRAL__COMPONENT_LONGOPTS,
                                         {"scheduler-name", required_argument, NULL, OPT_NAME},
                                         {"config", required_argument, NULL, OPT_CONFIG},
                                         {"config-name", required_argument, NULL, OPT_CONFIG_NAME},
                                         {"leader-elect", optional_argument, NULL, OPT_ELECT},
                                         {"lease-name", required_argument, NULL, OPT_LEASE_NAME},
                                         {"lease-namespace", required_argument, NULL, OPT_LEASE_NS},
                                         {"lease-duration", required_argument, NULL, OPT_LEASE_DUR},
                                         {"renew-deadline", required_argument, NULL, OPT_RENEW},
                                         {"retry-period", required_argument, NULL, OPT_RETRY},
                                         {"binders", required_argument, NULL, OPT_BINDERS},
                                         {"event-interval", required_argument, NULL, OPT_EVINT},
                                         {"v", required_argument, NULL, OPT_V},
                                         {"metrics-listen", required_argument, NULL, OPT_METRICS},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (c == 'h') {
            usage(stdout);
            return -1;
        }
        int kf = c == '?' ? -1 : corral__component_flag("corral scheduler", &s->f, c, optarg);
        if (kf > 0)
            continue;
        if (kf < 0 || parse_one(s, c, optarg) != 0) { /* each failure said why */
            usage(stderr);
            return CORRAL_EXIT_INVALID;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "corral scheduler: unexpected argument \"%s\"\n", argv[optind]);
        return CORRAL_EXIT_INVALID;
    }
    if (!s->o.nnames)
        add_names(s, "corral,volcano,default-scheduler");
    return 0;
}

int corral_cmd_scheduler(int argc, char **argv)
{
    sopts_t s;
    memset(&s, 0, sizeof(s));
    corral__component_flags_init(&s.f);
    s.o.config_name = "corral";
    s.o.leader_elect = true;
    s.o.lease_name = "corral-scheduler";
    s.o.lease_ns = "kube-system";
    s.o.lease_ms = 15000;
    s.o.renew_ms = 10000;
    s.o.retry_ms = 2000;
    s.o.binders = 16;
    s.o.event_interval_ms = 30000;
    s.o.metrics_listen = "127.0.0.1:10259";
    s.o.names = s.names;
    int rc = parse_opts(argc, argv, &s);
    if (rc != 0) {
        for (size_t i = 0; i < s.o.nnames; i++)
            corral_free(s.names_buf[i]);
        return rc < 0 ? CORRAL_EXIT_OK : rc;
    }
    corral_client_config_t cfg;
    corral_client_config_init(&cfg);
    char err[512];
    rc = corral_client_config_load(&s.f, &cfg, err, sizeof(err));
    if (rc == 0) {
        struct sigaction sa;
        memset(&sa, 0, sizeof(sa));
        sa.sa_handler = on_signal;
        sigaction(SIGTERM, &sa, NULL);
        sigaction(SIGINT, &sa, NULL);
        signal(SIGPIPE, SIG_IGN);
        s.o.client = &cfg;
        s.o.stop = &stop_int;
        corral_scheduler_stats_t st;
        rc = corral_scheduler_run(&s.o, &st, err, sizeof(err));
        fprintf(stderr,
                "corral scheduler: stopped: %llu cycles, %llu binds (%llu failed), %llu "
                "evictions, %llu events\n",
                (unsigned long long)st.cycles, (unsigned long long)st.binds,
                (unsigned long long)st.bind_failures, (unsigned long long)st.evictions,
                (unsigned long long)st.events);
    }
    if (rc != 0)
        fprintf(stderr, "corral scheduler: %s\n", err);
    corral_client_config_fini(&cfg);
    for (size_t i = 0; i < s.o.nnames; i++)
        corral_free(s.names_buf[i]);
    return rc == 0 ? CORRAL_EXIT_OK : CORRAL_EXIT_FAIL;
}
