/*
 * corral sim: run the scheduling engine in virtual time, on a scenario file
 * (--scenario FILE) or on a cluster trace (--cluster/--nodes with --trace).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "corral/sim.h"
#include "corral/timefmt.h"

static void sim_usage(FILE *fp)
{
    fprintf(fp,
            "usage: corral sim --scenario FILE [--output text|json] [--policy NAME]\n"
            "                  [--config FILE]\n"
            "       corral sim (--cluster NODES | --nodes N --gpus-per-node G) --trace PODS\n"
            "                  [--protocol replay|fgd] [--policy NAME]... [--seeds K] [--seed S]\n"
            "                  [--output text|json] [--report DIR] [--threads N] [--config FILE]\n"
            "                  [--estimates oracle|user|none] [--checkpoint-interval D]\n"
            "                  [--min-runtime D]\n"
            "\n"
            "  --scenario FILE    a scenario (SCENARIOS.md): objects, steps, expectations\n"
            "  --cluster FILE     openb node CSV, or a YAML file of Node objects\n"
            "  --nodes N, --gpus-per-node G   a synthetic cluster instead\n"
            "  --trace FILE       openb pod CSV, or a Philly-style job CSV\n"
            "  --protocol P       replay (default: arrivals and departures in virtual time)\n"
            "                     or fgd (inflate to 130%% of capacity, place one at a time)\n"
            "  --policy NAME      corral (default), random, spread, binpack, bestfit, dotprod,\n"
            "                     fifo, fifo-easy (FIFO with EASY backfill), fgd; or all\n"
            "                     (the first seven); repeatable\n"
            "  --seeds K          fgd: runs per policy (default 10); --seed S: first seed (42)\n"
            "                     (replay: --seed S draws the user estimates; default 1)\n"
            "  -o, --output FMT   text (default) or json\n"
            "  --report DIR       write DIR/report.md and SVG charts\n"
            "  --threads N        parallel runs (default: one per core)\n"
            "  --config FILE      a corral.dev/v1alpha1 SchedulerConfiguration (actions,\n"
            "                     policy, strict order, scoring); --policy still decides\n"
            "  --estimates E      replay: the runtime estimate every policy is given: user\n"
            "                     (default: a requested time limit, true x [1,5) rounded up\n"
            "                     to 15m..7d), oracle (the true duration) or none\n"
            "  --checkpoint-interval D   replay: jobs checkpoint every D (e.g. 1h); an evicted\n"
            "                     job resumes from its last checkpoint (default: starts over)\n"
            "  --min-runtime D    replay: every pod's corral.dev/min-runtime (default none)\n"
            "\n"
            "Exit status: 0 done (scenarios: every expectation holds), 1 expectations failed\n"
            "or a report could not be written, 2 invalid input.\n");
}

typedef struct sim_args {
    const char *scenario;
    const char *config; /* --config FILE */
    corral_sched_config_t cfg;
    corral_sim_trace_opts_t t;
    bool json;
} sim_args_t;

static int int_arg(const char *opt, const char *v, long lo, long hi, int *out)
{
    char *end;
    long n = strtol(v, &end, 10);
    if (*v == '\0' || *end != '\0' || n < lo || n > hi) {
        fprintf(stderr, "corral sim: %s expects a number %ld..%ld, got \"%s\"\n", opt, lo, hi, v);
        return -1;
    }
    *out = (int)n;
    return 0;
}

static int dur_arg(const char *opt, const char *v, int64_t *ms)
{
    int64_t ns;
    if (corral_duration_parse(v, strlen(v), &ns) != 0 || ns < 0) {
        fprintf(stderr, "corral sim: %s expects a duration such as 1h or 30m, got \"%s\"\n", opt,
                v);
        return -1;
    }
    *ms = ns / 1000000;
    return 0;
}

static int trace_opt(sim_args_t *a, int c, const char *v)
{
    corral_sim_trace_opts_t *t = &a->t;
    int seed;
    switch (c) {
    case 'C':
        t->cluster = v;
        return 0;
    case 'T':
        t->trace = v;
        return 0;
    case 'P':
        t->protocol = v;
        return 0;
    case 'R':
        t->report_dir = v;
        return 0;
    case 'N':
        return int_arg("--nodes", v, 1, 1000000, &t->nodes);
    case 'G':
        return int_arg("--gpus-per-node", v, 0, 64, &t->gpus_per_node);
    case 'K':
        return int_arg("--seeds", v, 1, 1000, &t->seeds);
    case 'j':
        return int_arg("--threads", v, 1, 64, &t->threads);
    case 'E':
        t->estimates = v;
        return 0;
    case 'I':
        return dur_arg("--checkpoint-interval", v, &t->checkpoint_ms);
    case 'M':
        return dur_arg("--min-runtime", v, &t->min_runtime_ms);
    case 'S':
        if (int_arg("--seed", v, 0, 2147483647, &seed) != 0)
            return -1;
        t->has_seed = true;
        t->seed = (uint64_t)seed;
        return 0;
    default:
        return -1;
    }
}

static int parse(int argc, char **argv, sim_args_t *a)
{
    static const struct option opts[] = {{"scenario", required_argument, NULL, 's'},
                                         {"output", required_argument, NULL, 'o'},
                                         {"policy", required_argument, NULL, 'p'},
                                         {"cluster", required_argument, NULL, 'C'},
                                         {"trace", required_argument, NULL, 'T'},
                                         {"protocol", required_argument, NULL, 'P'},
                                         {"report", required_argument, NULL, 'R'},
                                         {"nodes", required_argument, NULL, 'N'},
                                         {"gpus-per-node", required_argument, NULL, 'G'},
                                         {"seeds", required_argument, NULL, 'K'},
                                         {"seed", required_argument, NULL, 'S'},
                                         {"threads", required_argument, NULL, 'j'},
                                         {"config", required_argument, NULL, 'c'},
                                         {"estimates", required_argument, NULL, 'E'},
                                         {"checkpoint-interval", required_argument, NULL, 'I'},
                                         {"min-runtime", required_argument, NULL, 'M'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        if (c == 'h') {
            sim_usage(stdout);
            return 1;
        } else if (c == 's') {
            a->scenario = optarg;
        } else if (c == 'c') {
            a->config = optarg;
        } else if (c == 'o' && (!strcmp(optarg, "json") || !strcmp(optarg, "text"))) {
            a->json = strcmp(optarg, "json") == 0;
        } else if (c == 'p' && a->t.npolicies < CORRAL_SIM_MAX_POLICIES) {
            a->t.policies[a->t.npolicies++] = optarg;
        } else if (c == 'o' || c == '?' || trace_opt(a, c, optarg) != 0) {
            if (c == 'o')
                fprintf(stderr, "corral sim: unknown output \"%s\" (text or json)\n", optarg);
            sim_usage(stderr);
            return -1;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "corral sim: unexpected argument \"%s\"\n", argv[optind]);
        return -1;
    }
    return 0;
}

static int run_scenario(sim_args_t *a)
{
    if (a->t.npolicies > 1) {
        fprintf(stderr, "corral sim: a scenario runs one --policy\n");
        return CORRAL_EXIT_INVALID;
    }
    if (a->t.npolicies == 1 && corral_policy_from_name(a->t.policies[0]) < 0) {
        fprintf(stderr, "corral sim: unknown policy \"%s\"\n", a->t.policies[0]);
        return CORRAL_EXIT_INVALID;
    }
    corral_sim_opts_t so = {a->json, &a->cfg, stdout, stderr,
                            a->t.npolicies ? a->t.policies[0] : NULL};
    return corral_sim_scenario(a->scenario, &so);
}

/* --config, then the scenario or the trace. */
static int run(sim_args_t *a, corral_arena_t *arena)
{
    if (a->config) {
        const corral_schedconf_t *conf;
        if (corral_schedconf_load(a->config, arena, stderr, &conf) != 0)
            return CORRAL_EXIT_INVALID;
        corral_sched_config_apply(&a->cfg, conf);
        a->t.config = conf;
    }
    if (a->scenario)
        return run_scenario(a);
    if (!a->t.trace && !a->t.cluster && a->t.nodes == 0) {
        sim_usage(stderr);
        return CORRAL_EXIT_INVALID;
    }
    a->t.json = a->json;
    a->t.out = stdout;
    a->t.err = stderr;
    a->t.progress = isatty(STDERR_FILENO) && getenv("CI") == NULL;
    return corral_sim_trace(&a->t);
}

int corral_cmd_sim(int argc, char **argv)
{
    sim_args_t a;
    memset(&a, 0, sizeof(a));
    corral_sched_config_default(&a.cfg);
    int rc = parse(argc, argv, &a);
    if (rc != 0)
        return rc > 0 ? CORRAL_EXIT_OK : CORRAL_EXIT_INVALID;
    corral_arena_t arena;
    corral_arena_init(&arena);
    rc = run(&a, &arena);
    corral_arena_fini(&arena);
    return rc;
}
