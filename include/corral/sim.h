/*
 * The simulator: scenario files (SCENARIOS.md §1) and, later, cluster traces,
 * driven through the same engine the live scheduler uses, in virtual time.
 */
#ifndef CORRAL_SIM_H
#define CORRAL_SIM_H

#include <stdbool.h>
#include <stdio.h>

#include "corral/engine.h"
#include "corral/model.h"

typedef struct corral_sim_opts {
    bool json;                        /* print the final placement as JSON */
    const corral_sched_config_t *cfg; /* NULL: defaults */
    FILE *out;                        /* results (stdout) */
    FILE *err;                        /* diagnostics and FAIL lines (stderr) */
    const char *policy;               /* --policy: wins over any configuration; NULL none */
} corral_sim_opts_t;

/*
 * Run a scenario file. A SchedulerConfiguration document in the file applies
 * on top of opts->cfg (then opts->policy). Returns the process exit status of `corral sim
 * --scenario`: 0 every expectation holds, 1 some failed (each printed as
 * "FAIL step N: <expectation>: <what happened>"), 2 the file is invalid
 * (printed as FILE:LINE:COL: message).
 */
int corral_sim_scenario(const char *path, const corral_sim_opts_t *opts);

/* --- traces (SCENARIOS.md §2) ------------------------------------------------------------ */

#define CORRAL_SIM_MAX_POLICIES 16

typedef struct corral_sim_trace_opts {
    const char *cluster; /* openb node CSV, or YAML of Node objects; NULL with nodes */
    int nodes;           /* synthetic cluster: --nodes N --gpus-per-node G */
    int gpus_per_node;
    const char *trace;                             /* openb pod CSV or Philly-style job CSV */
    const char *protocol;                          /* "replay" (default) or "fgd" */
    const char *policies[CORRAL_SIM_MAX_POLICIES]; /* names; "all" expands */
    size_t npolicies;
    int seeds;     /* fgd: runs per policy (default 10) */
    bool has_seed; /* fgd: the first seed (default 42, as the paper's runs) */
    uint64_t seed;
    bool json;
    const char *report_dir; /* write report.md and SVG charts here */
    int threads;            /* parallel runs; 0: one per core */
    bool progress;          /* progress bar on err */
    /* --config: applies to every policy run, except that the policy run
     * decides node choice (and without --policy, config's policy is run). */
    const corral_schedconf_t *config;
    /* replay: runtime estimates given to every policy, "oracle", "user"
     * (default) or "none"; every job checkpoints this often (0: never, a
     * restart starts over); every pod's corral.dev/min-runtime (0: none). */
    const char *estimates;
    int64_t checkpoint_ms;
    int64_t min_runtime_ms;
    FILE *out, *err;
} corral_sim_trace_opts_t;

/* Run a trace. Returns the exit status: 0 done, 2 invalid input (each bad row
 * printed as FILE:LINE: message). */
int corral_sim_trace(const corral_sim_trace_opts_t *o);

#endif
