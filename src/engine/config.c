/*
 * The scheduler's configuration: the defaults docs/scheduling.md documents,
 * policy names, and applying a SchedulerConfiguration object on top of them.
 */
#include <string.h>

#include "engine/engine_int.h"

void corral_sched_config_default(corral_sched_config_t *c)
{
    memset(c, 0, sizeof(*c));
    c->enqueue = c->allocate = c->backfill = c->preempt = c->reclaim = true;
    c->policy = CORRAL_POLICY_CORRAL;
    c->seed = 1;
    c->w_prefer = 1;
    c->w_pack = 1;
    c->w_topology = 1;
    c->w_frag = 1;
    c->w_cpu = 0; /* measured: packing cpu and memory strands GPUs (docs/efficiency.md) */
    c->tune.frag_div = 1000; /* FGD's own; cross-validated, docs/decisions.md */
    /* Cross-validated (docs/efficiency.md): leaving whole-GPU pods unpacked
     * gains 1.5 points on held-out share-heavy lists but loses 0.13 on the
     * default list and 0.6 on a cpu-heavy one, so packing stays. */
    c->tune.share_pack = c->tune.whole_pack = c->tune.cpu_pack = 1;
}

static const char *const policy_names[CORRAL_POLICY_COUNT] = {
    "corral", "binpack", "spread", "random", "bestfit", "dotprod", "fgd"};

int corral_policy_from_name(const char *name)
{
    for (int i = 0; i < CORRAL_POLICY_COUNT; i++) {
        if (strcmp(name, policy_names[i]) == 0)
            return i;
    }
    return -1;
}

const char *corral_policy_name(corral_policy_t p)
{
    return (unsigned)p < CORRAL_POLICY_COUNT ? policy_names[p] : "?";
}

static void set_flag(int *w, corral_opt_i32_t o)
{
    if (o.set)
        *w = o.v ? 1 : 0;
}

int corral_sched_config_apply(corral_sched_config_t *c, const corral_schedconf_t *s)
{
    if (s->policy) {
        int p = corral_policy_from_name(s->policy);
        if (p < 0)
            return CORRAL_EINVAL; /* the model validates names; a mismatch is a bug */
        c->policy = (corral_policy_t)p;
    }
    if (s->actions_set) {
        c->enqueue = s->actions & CORRAL_ACTION_ENQUEUE;
        c->allocate = s->actions & CORRAL_ACTION_ALLOCATE;
        c->backfill = s->actions & CORRAL_ACTION_BACKFILL;
        c->preempt = s->actions & CORRAL_ACTION_PREEMPT;
        c->reclaim = s->actions & CORRAL_ACTION_RECLAIM;
    }
    if (s->strict_order.set)
        c->strict_order = s->strict_order.v != 0;
    if (s->seed.set)
        c->seed = (uint64_t)s->seed.v;
    if (s->max_evictions.set)
        c->max_evictions = s->max_evictions.v;
    set_flag(&c->w_prefer, s->preferences);
    set_flag(&c->w_frag, s->fragmentation);
    set_flag(&c->w_pack, s->packing);
    set_flag(&c->w_topology, s->topology);
    set_flag(&c->w_cpu, s->cpu_memory);
    return 0;
}
