/*
 * corral agent: the node agent's command line (flags to corral_agent_opts_t
 * and the API connection), and the hidden agent-shim subcommand every
 * container of the process runtime runs under. What the agent does is in
 * src/agent/ and docs/agent.md.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/kubecli.h"
#include "corral/agent.h"
#include "corral/client.h"

static void agent_usage(FILE *fp)
{
    fprintf(fp,
            "usage: corral agent --node-name NAME [--server URL | --kubeconfig FILE] [options]\n"
            "       corral agent --kube --node-name NAME [options]   (kubelet runs the pods)\n"
            "       corral agent --hollow-nodes N [--node-prefix hollow-] [options]\n"
            "\n"
            "  -s, --server URL            the API server (else as kubectl: $KUBECONFIG, ...)\n"
            "      --kubeconfig FILE       credentials and server\n"
            "      --token TOKEN           bearer token\n"
            "      --context NAME, --certificate-authority FILE, --insecure-skip-tls-verify\n"
            "      --kube-api-qps N        requests per second to the API server (50; -1: none)\n"
            "      --kube-api-burst N      burst above it (100)\n"
            "      --kube-api-content-type T   application/vnd.kubernetes.protobuf (default)\n"
            "                              or application/json\n"
            "      --node-name NAME        this node's name\n"
            "      --gpus SPEC             nvml, sim:PROFILE, auto (default), none\n"
            "      --print-gpus            print the GPUs found and exit\n"
            "      --runtime R             process (default) or hollow\n"
            "      --root DIR              state, working and log directories\n"
            "                              (default /var/lib/corral/agent)\n"
            "      --listen ADDR           the log server and /metrics (default 127.0.0.1:0)\n"
            "      --metrics-listen ADDR   /metrics also here (default :9400, the DCGM\n"
            "                              exporter's port; \"off\" or \"\": none)\n"
            "      --gpu-xid-hold-seconds N   an XID keeps the node GPUHealthy=False (300)\n"
            "      --model-cache-dir DIR   the model cache (default ROOT/models)\n"
            "      --pvc-root DIR          pvc://NAME/path models are read from DIR/NAME/path\n"
            "      --lease-duration-seconds N   (default 40)\n"
            "      --heartbeat-seconds N   Lease renewal period (default 10)\n"
            "      --status-every N        heartbeats between Node status updates (default 5)\n"
            "      --restart-backoff-ms N  first CrashLoopBackOff delay (default 10000)\n"
            "      --restart-backoff-max-ms N   its cap (default 300000)\n"
            "      --stop-pods-on-exit     stop every pod on SIGTERM/SIGINT (started again\n"
            "                              when the agent returns)\n"
            "      --hollow-nodes N        host N hollow nodes (implies --runtime hollow)\n"
            "      --node-prefix P         their names: P0 .. P<N-1> (default hollow-)\n"
            "      --token-file FILE       hollow: \"node,token\" lines, one token per node\n"
            "      --writers N             hollow: status writer threads (default 4)\n"
            "      --kube                  cluster mode: publish GPUs, health, metrics and\n"
            "                              the model cache for kubelet's Node; run no pod\n"
            "      --device-plugin[=false] kube: serve the kubelet device plugin (default true)\n"
            "      --device-plugin-dir DIR kube: kubelet's socket directory\n"
            "                              (default /var/lib/kubelet/device-plugins)\n"
            "      --device-plugin-resource R   kube: the resource (default nvidia.com/gpu)\n"
            "      --cdi-dir DIR           kube: also write a CDI spec there (default none)\n");
}

enum {
    OPT_NODE = 3000,
    OPT_GPUS,
    OPT_RUNTIME,
    OPT_ROOT,
    OPT_LISTEN,
    OPT_LEASE,
    OPT_HB,
    OPT_STOP,
    OPT_PRINT,
    OPT_HOLLOW,
    OPT_PREFIX,
    OPT_TOKFILE,
    OPT_BACKOFF,
    OPT_BACKOFF_MAX,
    OPT_WRITERS,
    OPT_STATUS_EVERY,
    OPT_METRICS_LISTEN,
    OPT_XID_HOLD,
    OPT_MODEL_CACHE_DIR,
    OPT_PVC_ROOT,
    OPT_KUBE,
    OPT_DP,
    OPT_DP_DIR,
    OPT_DP_RESOURCE,
    OPT_CDI_DIR,
};

/* The options that only keep their argument: true when c was one. */
static bool string_opt(int c, corral_agent_opts_t *o)
{
    const char **dst = NULL;
    switch (c) {
    case OPT_NODE:
        dst = &o->node_name;
        break;
    case OPT_GPUS:
        dst = &o->gpus;
        break;
    case OPT_RUNTIME:
        dst = &o->runtime;
        break;
    case OPT_ROOT:
        dst = &o->root;
        break;
    case OPT_MODEL_CACHE_DIR:
        dst = &o->model_cache_dir;
        break;
    case OPT_PVC_ROOT:
        dst = &o->pvc_root;
        break;
    case OPT_DP_DIR:
        dst = &o->dp_dir;
        break;
    case OPT_DP_RESOURCE:
        dst = &o->dp_resource;
        break;
    case OPT_CDI_DIR:
        dst = &o->cdi_dir;
        break;
    case OPT_LISTEN:
        dst = &o->listen;
        break;
    case OPT_METRICS_LISTEN:
        dst = &o->metrics_listen;
        break;
    case OPT_PREFIX:
        dst = &o->prefix;
        break;
    case OPT_TOKFILE:
        dst = &o->token_file;
        break;
    default:
        return false;
    }
    *dst = optarg;
    return true;
}

static int parse(int argc, char **argv, corral_agent_opts_t *o, corral_client_flags_t *f,
                 bool *print)
{
    static const struct option opts[] = {
        {"node-name", required_argument, NULL, OPT_NODE},
        {"gpus", required_argument, NULL, OPT_GPUS},
        {"runtime", required_argument, NULL, OPT_RUNTIME},
        {"root", required_argument, NULL, OPT_ROOT},
        {"listen", required_argument, NULL, OPT_LISTEN},
        {"metrics-listen", required_argument, NULL, OPT_METRICS_LISTEN},
        {"gpu-xid-hold-seconds", required_argument, NULL, OPT_XID_HOLD},
        {"model-cache-dir", required_argument, NULL, OPT_MODEL_CACHE_DIR},
        {"pvc-root", required_argument, NULL, OPT_PVC_ROOT},
        {"lease-duration-seconds", required_argument, NULL, OPT_LEASE},
        {"heartbeat-seconds", required_argument, NULL, OPT_HB},
        {"status-every", required_argument, NULL, OPT_STATUS_EVERY},
        {"stop-pods-on-exit", no_argument, NULL, OPT_STOP},
        {"print-gpus", no_argument, NULL, OPT_PRINT},
        {"hollow-nodes", required_argument, NULL, OPT_HOLLOW},
        {"node-prefix", required_argument, NULL, OPT_PREFIX},
        {"token-file", required_argument, NULL, OPT_TOKFILE},
        {"restart-backoff-ms", required_argument, NULL, OPT_BACKOFF},
        {"restart-backoff-max-ms", required_argument, NULL, OPT_BACKOFF_MAX},
        {"writers", required_argument, NULL, OPT_WRITERS},
        {"kube", no_argument, NULL, OPT_KUBE},
        {"device-plugin", optional_argument, NULL, OPT_DP},
        {"device-plugin-dir", required_argument, NULL, OPT_DP_DIR},
        {"device-plugin-resource", required_argument, NULL, OPT_DP_RESOURCE},
        {"cdi-dir", required_argument, NULL, OPT_CDI_DIR},
        CORRAL__COMPONENT_LONGOPTS,
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    int c;
    long long v = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "hs:", opts, NULL)) != -1) {
        bool ok = true;
        switch (c) {
        case OPT_XID_HOLD:
            ok = corral__flag_int("agent", "gpu-xid-hold-seconds", optarg, 0, INT32_MAX, &v) &&
                 ((o->xid_hold_s = (int)v) || true);
            break;
        case OPT_LEASE:
            ok = corral__flag_int("agent", "lease-duration-seconds", optarg, 1, INT32_MAX, &v) &&
                 (o->lease_s = (int)v);
            break;
        case OPT_HB:
            ok = corral__flag_int("agent", "heartbeat-seconds", optarg, 1, INT32_MAX, &v) &&
                 (o->heartbeat_s = (int)v);
            break;
        case OPT_STATUS_EVERY:
            ok = corral__flag_int("agent", "status-every", optarg, 1, INT32_MAX, &v) &&
                 (o->status_every = (int)v);
            break;
        case OPT_KUBE:
            o->kube = true;
            break;
        case OPT_DP:
            ok = !optarg || !strcmp(optarg, "true") || !strcmp(optarg, "false");
            if (!ok)
                fprintf(stderr, "corral agent: --device-plugin is true or false, not \"%s\"\n",
                        optarg);
            o->device_plugin = !optarg || !strcmp(optarg, "true");
            break;
        case OPT_STOP:
            o->stop_on_exit = true;
            break;
        case OPT_PRINT:
            *print = true;
            break;
        case OPT_HOLLOW:
            ok = corral__flag_int("agent", "hollow-nodes", optarg, 1, INT32_MAX, &v) &&
                 (o->hollow_n = (int)v);
            break;
        case OPT_BACKOFF:
            ok = corral__flag_int("agent", "restart-backoff-ms", optarg, 1, INT32_MAX, &v) &&
                 (o->backoff_ms = v);
            break;
        case OPT_BACKOFF_MAX:
            ok = corral__flag_int("agent", "restart-backoff-max-ms", optarg, 1, INT32_MAX, &v) &&
                 (o->backoff_max_ms = v);
            break;
        case OPT_WRITERS:
            ok = corral__flag_int("agent", "writers", optarg, 1, INT32_MAX, &v) &&
                 (o->writers = (int)v);
            break;
        case 'h':
            agent_usage(stdout);
            return -1;
        default: {
            int kf = corral__component_flag("corral agent", f, c, optarg);
            ok = kf >= 0;
            if (kf != 0 || string_opt(c, o))
                break;
            agent_usage(stderr);
            return CORRAL_EXIT_INVALID;
        }
        }
        if (!ok) /* corral__flag_int said why */
            return CORRAL_EXIT_INVALID;
    }
    if (optind < argc) {
        fprintf(stderr, "corral agent: unexpected argument \"%s\"\n", argv[optind]);
        return CORRAL_EXIT_INVALID;
    }
    return 0;
}

int corral_cmd_agent(int argc, char **argv)
{
    corral_agent_opts_t o;
    corral_agent_opts_init(&o);
    corral_client_flags_t f = {0};
    corral__component_flags_init(&f);
    bool print = false;
    int rc = parse(argc, argv, &o, &f, &print);
    if (rc)
        return rc < 0 ? CORRAL_EXIT_OK : rc;
    bool hollow = o.hollow_n > 0 || !strcmp(o.runtime, "hollow");
    if (strcmp(o.runtime, "process") != 0 && strcmp(o.runtime, "hollow") != 0) {
        fprintf(stderr, "corral agent: --runtime is process or hollow, not \"%s\"\n", o.runtime);
        return CORRAL_EXIT_INVALID;
    }
    if (print)
        return corral_agent_print_gpus(o.gpus, o.node_name ? o.node_name : "node")
                   ? CORRAL_EXIT_FAIL
                   : CORRAL_EXIT_OK;
    if (!o.node_name && o.hollow_n == 0) {
        fprintf(stderr, "corral agent: --node-name is required\n");
        return CORRAL_EXIT_INVALID;
    }
    if (o.kube && hollow) {
        fprintf(stderr, "corral agent: --kube runs beside kubelet, not with hollow nodes\n");
        return CORRAL_EXIT_INVALID;
    }
    corral_client_config_t cfg;
    corral_client_config_init(&cfg);
    char err[1024] = "";
    if (corral_client_config_load(&f, &cfg, err, sizeof(err)) != 0) {
        fprintf(stderr, "corral agent: %s\n", err);
        return CORRAL_EXIT_INVALID;
    }
    rc = o.kube   ? corral_agent_kube_run(&o, &cfg)
         : hollow ? corral_agent_hollow_run(&o, &cfg)
                  : corral_agent_run(&o, &cfg);
    corral_client_config_fini(&cfg);
    return rc ? CORRAL_EXIT_FAIL : CORRAL_EXIT_OK;
}

int corral_cmd_agent_shim(int argc, char **argv)
{
    return corral_agent_shim_main(argc, argv);
}
