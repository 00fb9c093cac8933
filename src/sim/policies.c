/*
 * The policies trace simulation compares. All run the same engine; they
 * differ in node choice (the engine's policy) and in queue discipline: "fifo"
 * serves jobs in strict order with no backfill, as a plain batch queue does;
 * "fifo-easy" is FIFO with EASY backfill (Slurm's default): one queue in
 * arrival order, the first job that cannot start gets the one reservation,
 * later jobs start only if they do not delay it. That is the engine's
 * backfill on a single queue without strict order (strict order stops at
 * the first blocked job and has no backfill).
 * "fgd" is our implementation of the FGD paper's policy, there to check the
 * simulator against the paper's published numbers.
 */
#include <string.h>

#include "sim/trace_sim.h"

static const sim_policy_t policies[] = {
    {"corral", CORRAL_POLICY_CORRAL, false, true, true, NULL, NULL, false},
    {"random", CORRAL_POLICY_RANDOM, false, false, false, NULL, NULL, false},
    {"spread", CORRAL_POLICY_SPREAD, false, false, false, NULL, NULL, false},
    {"binpack", CORRAL_POLICY_BINPACK, false, false, false, NULL, NULL, false},
    {"bestfit", CORRAL_POLICY_BESTFIT, false, false, false, NULL, NULL, false},
    {"dotprod", CORRAL_POLICY_DOTPROD, false, false, false, NULL, NULL, false},
    {"fifo", CORRAL_POLICY_BINPACK, true, false, false, NULL, NULL, false},
    {"fgd", CORRAL_POLICY_FGD, false, false, false, NULL, NULL, false},
    {"fifo-easy", CORRAL_POLICY_BINPACK, false, true, false, NULL, NULL, true},
};

const sim_policy_t *corral__sim_policy(const char *name)
{
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(policies); i++) {
        if (strcmp(policies[i].name, name) == 0)
            return &policies[i];
    }
    return NULL;
}

size_t corral__sim_all_policies(const sim_policy_t **out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(policies) && n < max; i++)
        out[n++] = &policies[i];
    return n;
}

/* The policy's switches are defaults a configuration may override; node
 * choice and the run's seed are the policy's and the run's. */
void corral__sim_config(const sim_policy_t *p, uint64_t seed, corral_sched_config_t *cfg)
{
    corral_sched_config_default(cfg);
    cfg->strict_order = p->strict;
    cfg->backfill = p->backfill;
    cfg->preempt = p->evict;
    cfg->reclaim = p->evict;
    if (p->conf)
        corral_sched_config_apply(cfg, p->conf);
    if (p->tune)
        cfg->tune = *p->tune;
    cfg->policy = p->node;
    cfg->seed = seed;
}
