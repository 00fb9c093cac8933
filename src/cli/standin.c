/*
 * `corral standin-llm`: the stand-in model server as a command
 * (include/corral/standin.h, docs/inference.md): flags in, a server that
 * serves until SIGTERM or SIGINT and its drain, exit 0.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "corral/standin.h"

static void usage(FILE *fp)
{
    fprintf(fp,
            "usage: corral standin-llm [--host ADDR] [--port N] [--model-dir DIR] [options]\n"
            "\n"
            "A STAND-IN for an LLM server, for tests and demos: it is not vLLM and runs no\n"
            "model. It answers OpenAI requests (GET /v1/models, POST /v1/completions and\n"
            "/v1/chat/completions, streaming or not) with deterministic filler text, one\n"
            "token per running request every --token-ms, at most --max-num-seqs at once\n"
            "(continuous batching; the rest wait), and serves GET /health and GET /metrics\n"
            "with vLLM's metric names. At start it reads every file under --model-dir and\n"
            "waits --load-ms-per-gib per GiB read before it listens. Its simulated GPU load\n"
            "(running / max-num-seqs, in percent) goes to $CORRAL_GPU_LOAD_FILE every 200 ms.\n"
            "SIGTERM: keeps accepting for --drain-window, then finishes the requests in\n"
            "flight (at most --drain-timeout) and exits 0.\n"
            "\n"
            "  --host ADDR               address to listen on (default 127.0.0.1; in a pod:\n"
            "                            $(POD_IP))\n"
            "  --port N                  default 8000 (0: any free port, printed)\n"
            "  --model-dir DIR           the model's files (alias --model)\n"
            "  --served-model-name NAME  the model name clients use (default: DIR's base name)\n"
            "  --token-ms N              milliseconds per decode step (default 20)\n"
            "  --max-num-seqs N          sequences decoded at once (default 256)\n"
            "  --max-tokens N            max_tokens when a request gives none (default 16;\n"
            "                            a request may ask up to 4096)\n"
            "  --load-ms-per-gib MS      simulated load time per GiB of model files (default 0)\n"
            "  --gpu-load-file FILE      default $CORRAL_GPU_LOAD_FILE (unset: none)\n"
            "  --pod-name NAME           sent back in X-Corral-Pod (default $HOSTNAME)\n"
            "  --drain-window D          keep accepting this long after SIGTERM (default 1s)\n"
            "  --drain-timeout D         give up on requests in flight after (default 30s)\n"
            "  --max-connections N       default 4096\n"
            "  --quiet                   no log lines\n");
}

enum {
    OPT_HOST = 256,
    OPT_PORT,
    OPT_MODEL,
    OPT_NAME,
    OPT_TOKEN,
    OPT_SEQS,
    OPT_MAXTOK,
    OPT_LOAD,
    OPT_GPUFILE,
    OPT_POD,
    OPT_WINDOW,
    OPT_TIMEOUT,
    OPT_CONNS,
    OPT_QUIET,
    OPT_HELP
};

static bool duration_or_zero(const char *flag, const char *v, int64_t *out)
{
    if (!strcmp(v, "0")) {
        *out = 0;
        return true;
    }
    return corral__flag_duration("standin-llm", flag, v, out);
}

static bool parse_one(corral_standin_opts_t *o, int c, const char *arg)
{
    long long v;
    bool ok = true;
    switch (c) {
    case OPT_HOST:
        o->host = arg;
        break;
    case OPT_PORT:
        ok = corral__flag_int("standin-llm", "port", arg, 0, 65535, &v);
        o->port = (int)v;
        break;
    case OPT_MODEL:
        o->model_dir = arg;
        break;
    case OPT_NAME:
        o->served_model_name = arg;
        break;
    case OPT_TOKEN:
        ok = corral__flag_int("standin-llm", "token-ms", arg, 0, 60000, &v);
        o->token_ns = v * 1000000LL;
        break;
    case OPT_SEQS:
        ok = corral__flag_int("standin-llm", "max-num-seqs", arg, 1, 65536, &v);
        o->max_num_seqs = (int)v;
        break;
    case OPT_MAXTOK:
        ok = corral__flag_int("standin-llm", "max-tokens", arg, 1, CORRAL_STANDIN_MAX_TOKENS, &v);
        o->max_tokens_default = (int)v;
        break;
    case OPT_LOAD:
        ok = corral__flag_int("standin-llm", "load-ms-per-gib", arg, 0, 3600000, &v);
        o->load_ms_per_gib = (double)v;
        break;
    case OPT_GPUFILE:
        o->gpu_load_file = arg[0] ? arg : NULL;
        break;
    case OPT_POD:
        o->pod_name = arg[0] ? arg : NULL;
        break;
    case OPT_WINDOW:
        ok = duration_or_zero("drain-window", arg, &o->drain_window_ns);
        break;
    case OPT_TIMEOUT:
        ok = corral__flag_duration("standin-llm", "drain-timeout", arg, &o->drain_timeout_ns);
        break;
    case OPT_CONNS:
        ok = corral__flag_int("standin-llm", "max-connections", arg, 1, 1000000, &v);
        o->max_conns = (int)v;
        break;
    case OPT_QUIET:
        o->quiet = true;
        break;
    default:
        ok = false;
    }
    return ok;
}

int corral_cmd_standin(int argc, char **argv)
{
    static const struct option opts[] = {
        {"host", required_argument, NULL, OPT_HOST},
        {"port", required_argument, NULL, OPT_PORT},
        {"model-dir", required_argument, NULL, OPT_MODEL},
        {"model", required_argument, NULL, OPT_MODEL},
        {"served-model-name", required_argument, NULL, OPT_NAME},
        {"token-ms", required_argument, NULL, OPT_TOKEN},
        {"max-num-seqs", required_argument, NULL, OPT_SEQS},
        {"max-tokens", required_argument, NULL, OPT_MAXTOK},
        {"load-ms-per-gib", required_argument, NULL, OPT_LOAD},
        {"gpu-load-file", required_argument, NULL, OPT_GPUFILE},
        {"pod-name", required_argument, NULL, OPT_POD},
        {"drain-window", required_argument, NULL, OPT_WINDOW},
        {"drain-timeout", required_argument, NULL, OPT_TIMEOUT},
        {"max-connections", required_argument, NULL, OPT_CONNS},
        {"quiet", no_argument, NULL, OPT_QUIET},
        {"help", no_argument, NULL, OPT_HELP},
        {NULL, 0, NULL, 0},
    };
    corral_standin_opts_t o;
    corral_standin_opts_init(&o);
    o.gpu_load_file = getenv("CORRAL_GPU_LOAD_FILE");
    o.pod_name = getenv("HOSTNAME");
    o.handle_signals = true;
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (c == 'h' || c == OPT_HELP) {
            usage(stdout);
            return CORRAL_EXIT_OK;
        }
        if (c == '?' || !parse_one(&o, c, optarg)) {
            if (c == '?')
                usage(stderr);
            return CORRAL_EXIT_INVALID;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "corral standin-llm: unexpected argument \"%s\"\n", argv[optind]);
        return CORRAL_EXIT_INVALID;
    }
    if (o.gpu_load_file && !o.gpu_load_file[0])
        o.gpu_load_file = NULL;
    if (o.pod_name && !o.pod_name[0])
        o.pod_name = NULL;
    corral_standin_t *s;
    char err[512];
    if (corral_standin_new(&o, &s, err, sizeof(err)) < 0) {
        fprintf(stderr, "corral standin-llm: %s\n", err);
        return CORRAL_EXIT_FAIL;
    }
    corral_standin_run(s);
    corral_standin_free(s);
    return CORRAL_EXIT_OK;
}
