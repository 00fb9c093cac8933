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
    c->w_model_cache = 50; /* half of the strongest preferred affinity term */
    c->w_cpu = 0;          /* measured: packing cpu and memory strands GPUs (docs/efficiency.md) */
    c->tune.frag_div = 1000; /* FGD's own; cross-validated, docs/decisions.md */
    /* Cross-validated (docs/efficiency.md): leaving whole-GPU pods unpacked
     * gains 1.3-1.5 points on held-out share-heavy lists but loses 0.13 on
     * the default list and 0.6 on a cpu-heavy one, so packing stays unless
     * shares are most of the workload's GPU pods (share_heavy, permille). */
    c->tune.share_pack = c->tune.whole_pack = c->tune.cpu_pack = 1;
    c->tune.share_heavy = 500;
    c->fair_half_life_ns = 0; /* fair share off: today's order of service exactly */
    c->fair_usage_weight = 0.5;
}

int corral_policy_from_name(const char *name)
{
    for (int i = 0; i < CORRAL_POLICY_COUNT; i++) {
        if (strcmp(name, corral__policy_ops(i)->name) == 0)
            return i;
    }
    return -1;
}

const char *corral_policy_name(corral_policy_t p)
{
    const policy_ops_t *ops = corral__policy_ops((int)p);
    return ops ? ops->name : "?";
}

static void set_flag(int *w, corral_opt_i32_t o)
{
    if (o.set)
        *w = o.v ? 1 : 0;
}

/* The fair-share settings s asks for, checked (the model's decoder gives the
 * message; here a value out of range is refused all the same). */
static int fair_share(const corral_schedconf_t *s, int64_t *half_life, double *weight)
{
    if (s->fair_share_set) {
        *half_life = s->fair_half_life_ns;
        if (*half_life != 0 && (*half_life < CORRAL_FAIR_HALF_LIFE_MIN_NS ||
                                *half_life > CORRAL_FAIR_HALF_LIFE_MAX_NS))
            return CORRAL_EINVAL;
    }
    if (s->fair_usage_weight_set) {
        *weight = s->fair_usage_weight;
        if (!(*weight >= 0 && *weight <= 1)) /* NaN too */
            return CORRAL_EINVAL;
    }
    return 0;
}

int corral_sched_config_apply(corral_sched_config_t *c, const corral_schedconf_t *s)
{
    int64_t half_life = c->fair_half_life_ns;
    double weight = c->fair_usage_weight;
    if (fair_share(s, &half_life, &weight) != 0)
        return CORRAL_EINVAL;
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
    if (s->model_cache.set)
        c->w_model_cache = s->model_cache.v;
    c->fair_half_life_ns = half_life;
    c->fair_usage_weight = weight;
    return 0;
}
