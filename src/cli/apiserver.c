/*
 * corral apiserver --data-dir DIR [--listen HOST:PORT]: run the embedded API
 * server in the foreground until SIGINT or SIGTERM. Signals are taken with
 * sigwait on the main thread (blocked everywhere else), so shutdown runs as
 * ordinary code: stop the loops, complete queued writes, close the store.
 * --print-routes writes docs/api.md.
 */
#include <getopt.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "cli/cli.h"
#include "corral/apiserver.h"

static void apiserver_usage(FILE *fp)
{
    fprintf(fp,
            "usage: corral apiserver --data-dir DIR [--listen HOST:PORT] [options]\n"
            "\n"
            "  --data-dir DIR     where the database lives (created if missing)\n"
            "  --listen HOST:PORT address to serve on (default 127.0.0.1:6443; port 0 picks one)\n"
            "  --threads N        event loops (default: one per CPU, at most 4)\n"
            "  --history N        revisions kept for watches (default 100000)\n"
            "  --log-requests     one line per request on stderr\n"
            "  --no-fsync         commit without fsync (survives crashes, not power loss;\n"
            "                     benchmarks only)\n"
            "  --token-auth-file FILE\n"
            "                     authenticate bearer tokens from FILE (kube-apiserver's CSV:\n"
            "                     token,user,uid,\"group1,group2\") and authorize with RBAC;\n"
            "                     group system:masters may do everything\n"
            "  --tls-cert-file FILE, --tls-private-key-file FILE\n"
            "                     serve HTTPS with this PEM certificate (chain) and key\n"
            "  --metrics-resolution DURATION\n"
            "                     scrape period of the node agents' /metrics/resource for\n"
            "                     metrics.k8s.io (`kubectl top`): 15s (default), 500ms, 0 off\n"
            "  --strict           behave as kube-apiserver for every call the components make:\n"
            "                     no Corral-only shortcut (docs/apiserver.md, \"Strict mode\")\n"
            "  --print-routes     print the route table as Markdown (docs/api.md) and exit\n"
            "\n"
            "Serves the Kubernetes API subset described in docs/apiserver.md over HTTP(S).\n"
            "Prints \"listening on HOST:PORT\" on stderr once it accepts connections.\n");
}

static bool parse_long(const char *s, long min, long *out)
{
    char *end = NULL;
    long v = strtol(s, &end, 10);
    if (!*s || *end || v < min)
        return false;
    *out = v;
    return true;
}

enum {
    OPT_DATA = 1000,
    OPT_LISTEN,
    OPT_THREADS,
    OPT_HISTORY,
    OPT_LOG,
    OPT_NOFSYNC,
    OPT_ROUTES,
    OPT_TOKENS,
    OPT_CERT,
    OPT_KEY,
    OPT_MRES,
    OPT_STRICT
};

/* "15s", "500ms", "1m", "2" (seconds) into milliseconds; 0 turns scrapes off. */
static bool parse_duration_ms(const char *s, int *out)
{
    char *end = NULL;
    double v = strtod(s, &end);
    if (end == s || v < 0 || v > 86400000)
        return false;
    double mul = !strcmp(end, "ms") ? 1 : !strcmp(end, "m") ? 60000 : 1000;
    if (*end && strcmp(end, "ms") != 0 && strcmp(end, "s") != 0 && strcmp(end, "m") != 0)
        return false;
    double ms = v * mul;
    if (ms > 86400000.0)
        return false;
    *out = ms == 0 ? -1 : ms < 1 ? 1 : (int)ms;
    return true;
}

static int parse_opts(int argc, char **argv, corral_apiserver_opts_t *o, bool *routes)
{
    static const struct option opts[] = {{"data-dir", required_argument, NULL, OPT_DATA},
                                         {"listen", required_argument, NULL, OPT_LISTEN},
                                         {"threads", required_argument, NULL, OPT_THREADS},
                                         {"history", required_argument, NULL, OPT_HISTORY},
                                         {"log-requests", no_argument, NULL, OPT_LOG},
                                         {"no-fsync", no_argument, NULL, OPT_NOFSYNC},
                                         {"print-routes", no_argument, NULL, OPT_ROUTES},
                                         {"token-auth-file", required_argument, NULL, OPT_TOKENS},
                                         {"tls-cert-file", required_argument, NULL, OPT_CERT},
                                         {"tls-private-key-file", required_argument, NULL, OPT_KEY},
                                         {"metrics-resolution", required_argument, NULL, OPT_MRES},
                                         {"strict", no_argument, NULL, OPT_STRICT},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    int c;
    long v;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case OPT_DATA:
            o->data_dir = optarg;
            break;
        case OPT_LISTEN:
            o->listen = optarg;
            break;
        case OPT_THREADS:
        case OPT_HISTORY:
            if (!parse_long(optarg, 1, &v)) {
                fprintf(stderr, "corral apiserver: --%s wants a positive integer, got \"%s\"\n",
                        c == OPT_THREADS ? "threads" : "history", optarg);
                return CORRAL_EXIT_INVALID;
            }
            if (c == OPT_THREADS)
                o->threads = (int)(v > 64 ? 64 : v);
            else
                o->store.history = v;
            break;
        case OPT_LOG:
            o->log_requests = true;
            break;
        case OPT_NOFSYNC:
            o->store.no_fsync = true;
            break;
        case OPT_ROUTES:
            *routes = true;
            break;
        case OPT_STRICT:
            o->strict = true;
            break;
        case OPT_TOKENS:
            o->token_auth_file = optarg;
            break;
        case OPT_CERT:
            o->tls_cert_file = optarg;
            break;
        case OPT_KEY:
            o->tls_key_file = optarg;
            break;
        case OPT_MRES:
            if (!parse_duration_ms(optarg, &o->metrics_resolution_ms)) {
                fprintf(stderr,
                        "corral apiserver: --metrics-resolution wants a duration "
                        "(15s, 500ms), got \"%s\"\n",
                        optarg);
                return CORRAL_EXIT_INVALID;
            }
            break;
        case 'h':
            apiserver_usage(stdout);
            return -1;
        default:
            apiserver_usage(stderr);
            return CORRAL_EXIT_INVALID;
        }
    }
    return 0;
}

int corral_cmd_apiserver(int argc, char **argv)
{
    corral_apiserver_opts_t o;
    memset(&o, 0, sizeof(o));
    bool routes = false;
    int rc = parse_opts(argc, argv, &o, &routes);
    if (rc)
        return rc < 0 ? CORRAL_EXIT_OK : rc;
    if (routes) {
        corral_apiserver_print_routes(stdout);
        return CORRAL_EXIT_OK;
    }
    if (!o.data_dir) {
        fprintf(stderr, "corral apiserver: --data-dir DIR is required\n");
        return CORRAL_EXIT_INVALID;
    }
    /* Block the signals before any thread starts: all inherit the mask and
     * only sigwait below receives them. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    /* Every watch is a socket: the soft limit on descriptors (often 1024)
     * is raised to the hard one, as Go does for kube-apiserver. */
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    /* A big request's memory goes back to the system when it is done:
     * glibc would otherwise raise its mmap threshold after the first big
     * free and keep later big buffers in per-thread heaps for good. */
    mallopt(M_MMAP_THRESHOLD, 1 << 20);
    mallopt(M_TRIM_THRESHOLD, 8 << 20);
    corral_apiserver_t *s = NULL;
    char err[512] = "";
    if (corral_apiserver_new(&o, &s, err, sizeof(err)) != 0) {
        fprintf(stderr, "corral apiserver: %s\n", err);
        return CORRAL_EXIT_FAIL;
    }
    if (corral_apiserver_start(s) != 0) {
        fprintf(stderr, "corral apiserver: cannot start threads\n");
        corral_apiserver_free(s);
        return CORRAL_EXIT_FAIL;
    }
    const char *listen = o.listen ? o.listen : "127.0.0.1:6443";
    const char *colon = strrchr(listen, ':');
    fprintf(stderr, "corral apiserver: listening on %.*s:%d (%s, data %s%s)\n",
            (int)(colon ? colon - listen : 0), listen, corral_apiserver_port(s),
            o.tls_cert_file ? "https" : "http", o.data_dir,
            o.token_auth_file ? ", token authentication and RBAC" : "");
    int sig = 0;
    sigwait(&set, &sig);
    fprintf(stderr, "corral apiserver: %s, shutting down\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
    corral_apiserver_free(s);
    return CORRAL_EXIT_OK;
}
