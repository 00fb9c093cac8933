/*
 * corral sim: run the scheduling engine in virtual time. Today: scenario
 * files (--scenario FILE); trace replay arrives with issue 4.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "corral/sim.h"

static void sim_usage(FILE *fp)
{
    fprintf(fp, "usage: corral sim --scenario FILE [--output text|json] [--policy NAME]\n"
                "\n"
                "  --scenario FILE   a scenario (SCENARIOS.md): objects, steps, expectations\n"
                "  -o, --output FMT  text (default) or json (the final placement of every pod)\n"
                "  --policy NAME     corral (default), binpack, spread, random, bestfit, dotprod\n"
                "\n"
                "Exit status: 0 every expectation holds, 1 some failed, 2 the file is invalid.\n");
}

int corral_cmd_sim(int argc, char **argv)
{
    static const struct option opts[] = {{"scenario", required_argument, NULL, 's'},
                                         {"output", required_argument, NULL, 'o'},
                                         {"policy", required_argument, NULL, 'p'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    const char *scenario = NULL;
    corral_sched_config_t cfg;
    corral_sched_config_default(&cfg);
    corral_sim_opts_t so = {false, &cfg, stdout, stderr};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        if (c == 's') {
            scenario = optarg;
        } else if (c == 'o' && (!strcmp(optarg, "json") || !strcmp(optarg, "text"))) {
            so.json = strcmp(optarg, "json") == 0;
        } else if (c == 'p' && corral_policy_from_name(optarg) >= 0) {
            cfg.policy = (corral_policy_t)corral_policy_from_name(optarg);
        } else if (c == 'h') {
            sim_usage(stdout);
            return CORRAL_EXIT_OK;
        } else {
            if (c == 'o' || c == 'p')
                fprintf(stderr, "corral sim: unknown %s \"%s\"\n", c == 'o' ? "output" : "policy",
                        optarg);
            sim_usage(stderr);
            return CORRAL_EXIT_INVALID;
        }
    }
    if (!scenario) {
        sim_usage(stderr);
        return CORRAL_EXIT_INVALID;
    }
    return corral_sim_scenario(scenario, &so);
}
