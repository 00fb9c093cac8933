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
} corral_sim_opts_t;

/*
 * Run a scenario file. Returns the process exit status of `corral sim
 * --scenario`: 0 every expectation holds, 1 some failed (each printed as
 * "FAIL step N: <expectation>: <what happened>"), 2 the file is invalid
 * (printed as FILE:LINE:COL: message).
 */
int corral_sim_scenario(const char *path, const corral_sim_opts_t *opts);

/*
 * Expand a Volcano Job into its PodGroup (named after the job) and pods named
 * <job>-<task>-<index>, as Volcano's job controller does. Everything is
 * allocated in arena a. Returns 0 or CORRAL_EINVAL.
 */
int corral_vcjob_expand(corral_arena_t *a, const corral_obj_t *job, corral_obj_t **pg,
                        corral_obj_t ***pods, size_t *npods);

#endif
