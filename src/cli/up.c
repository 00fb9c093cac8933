/*
 * corral up: the whole platform on this machine (API server, scheduler,
 * controller, node agents) as one supervised process tree. The work is in
 * src/up (include/corral/up.h); this file reads the options.
 */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "corral/up.h"

static void up_usage(FILE *fp)
{
    char dir[4096];
    corral_up_default_dir(dir, sizeof(dir));
    fprintf(fp,
            "usage: corral up [options]\n"
            "\n"
            "Runs the API server, the scheduler, the controller and node agents on this\n"
            "machine until Ctrl-C; starting again resumes from the same data.\n"
            "\n"
            "  --data-dir DIR      where everything lives (default %s:\n"
            "                      $XDG_DATA_HOME/corral, else ~/.local/share/corral)\n"
            "  --listen HOST:PORT  the API server's address (default 127.0.0.1:6443)\n"
            "  --router-listen HOST:PORT\n"
            "                      the inference router's address (default 127.0.0.1:8080;\n"
            "                      off: no router)\n"
            "  --gpus auto|nvml|sim:PROFILE\n"
            "                      auto (default): one node with this machine's GPUs when\n"
            "                      NVML finds some, else --sim-nodes simulated nodes\n"
            "  --sim-nodes N       simulated nodes when there are no GPUs (default 2)\n"
            "  --sim-profile P     their GPUs: h100-sxm-8 (default), dgx1-v100-8,\n"
            "                      a100-pcie-4, l4-8, or a profile file; a list P1,P2\n"
            "                      gives node i the (i mod n)-th\n"
            "  --hollow-nodes N    add N hollow nodes (no processes; for scale tests)\n"
            "  --node-name NAME    the NVML node's name (default: the hostname)\n"
            "  --stop-timeout S    seconds each tier gets to stop before SIGKILL (default 15)\n"
            "  --ready-timeout S   seconds the API server gets to become ready (default 60)\n"
            "  --log-max-mb N      rotate a component's log past N MiB (default 64)\n"
            "  --extra-config COMPONENT.FLAG=VALUE\n"
            "                      pass --FLAG=VALUE to a component (apiserver, scheduler,\n"
            "                      controller, router, agent); repeatable, e.g.\n"
            "                      --extra-config controller.default-toleration-seconds=30\n"
            "\n"
            "See docs/up.md.\n",
            dir);
}

/* An integer flag into an int (see corral__flag_int). */
static bool parse_int(const char *flag, const char *s, long min, long max, int *out)
{
    long long v;
    if (!corral__flag_int("up", flag, s, min, max, &v))
        return false;
    *out = (int)v;
    return true;
}

#define MAX_EXTRA 32

enum {
    OPT_DATA = 1000,
    OPT_LISTEN,
    OPT_GPUS,
    OPT_SIM_NODES,
    OPT_PROFILE,
    OPT_HOLLOW,
    OPT_NODE,
    OPT_STOP,
    OPT_READY,
    OPT_LOGMAX,
    OPT_EXTRA,
    OPT_ROUTER
};

static const struct option up_opts[] = {{"data-dir", required_argument, NULL, OPT_DATA},
                                        {"listen", required_argument, NULL, OPT_LISTEN},
                                        {"gpus", required_argument, NULL, OPT_GPUS},
                                        {"sim-nodes", required_argument, NULL, OPT_SIM_NODES},
                                        {"sim-profile", required_argument, NULL, OPT_PROFILE},
                                        {"hollow-nodes", required_argument, NULL, OPT_HOLLOW},
                                        {"node-name", required_argument, NULL, OPT_NODE},
                                        {"stop-timeout", required_argument, NULL, OPT_STOP},
                                        {"ready-timeout", required_argument, NULL, OPT_READY},
                                        {"log-max-mb", required_argument, NULL, OPT_LOGMAX},
                                        {"extra-config", required_argument, NULL, OPT_EXTRA},
                                        {"router-listen", required_argument, NULL, OPT_ROUTER},
                                        {"help", no_argument, NULL, 'h'},
                                        {NULL, 0, NULL, 0}};

/* Returns 0, -1 for --help, or an exit status. */
static int parse_opts(int argc, char **argv, corral_up_opts_t *o)
{
    int c, mb = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", up_opts, NULL)) != -1) {
        bool ok = true;
        switch (c) {
        case OPT_DATA:
            o->data_dir = optarg;
            break;
        case OPT_LISTEN:
            o->listen = optarg;
            break;
        case OPT_GPUS:
            o->gpus = optarg;
            break;
        case OPT_SIM_NODES:
            ok = parse_int("sim-nodes", optarg, 0, 1000, &o->sim_nodes);
            break;
        case OPT_PROFILE:
            o->sim_profile = optarg;
            break;
        case OPT_HOLLOW:
            ok = parse_int("hollow-nodes", optarg, 0, 100000, &o->hollow_nodes);
            break;
        case OPT_NODE:
            o->node_name = optarg;
            break;
        case OPT_STOP:
            ok = parse_int("stop-timeout", optarg, 1, 3600, &o->stop_timeout_s);
            break;
        case OPT_READY:
            ok = parse_int("ready-timeout", optarg, 1, 3600, &o->ready_timeout_s);
            break;
        case OPT_LOGMAX:
            ok = parse_int("log-max-mb", optarg, 1, 1 << 20, &mb);
            o->log_max_bytes = (long)mb << 20;
            break;
        case OPT_ROUTER:
            o->router_listen = optarg;
            break;
        case OPT_EXTRA:
            if (o->nextra < MAX_EXTRA)
                o->extra[o->nextra++] = optarg;
            else
                fprintf(stderr, "corral up: at most %d --extra-config options\n", MAX_EXTRA);
            ok = o->nextra <= MAX_EXTRA && strchr(optarg, '.');
            break;
        case 'h':
            up_usage(stdout);
            return -1;
        default:
            up_usage(stderr);
            return CORRAL_EXIT_INVALID;
        }
        if (!ok)
            return CORRAL_EXIT_INVALID;
    }
    if (optind < argc) {
        fprintf(stderr, "corral up: unexpected argument \"%s\"\n", argv[optind]);
        return CORRAL_EXIT_INVALID;
    }
    return 0;
}

int corral_cmd_up(int argc, char **argv)
{
    corral_up_opts_t o;
    static const char *extra[MAX_EXTRA];
    memset(&o, 0, sizeof(o));
    o.sim_nodes = 2;
    o.extra = extra;
    int rc = parse_opts(argc, argv, &o);
    if (rc)
        return rc < 0 ? CORRAL_EXIT_OK : rc;
    char dir[4096];
    if (!o.data_dir) {
        corral_up_default_dir(dir, sizeof(dir));
        o.data_dir = dir;
    }
    /* The components run this very binary; its path now, so that a rebuild
     * during a run restarts components with the new one. */
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n <= 0)
        snprintf(exe, sizeof(exe), "/proc/self/exe");
    else
        exe[n] = '\0';
    rc = corral_up_run(&o, exe);
    return rc == 2 ? CORRAL_EXIT_INVALID : rc;
}
