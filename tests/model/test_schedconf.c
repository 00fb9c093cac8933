/* SchedulerConfiguration: both forms of `actions`, validation with hints,
 * and how it applies on top of the engine's defaults. */
#include "corral/engine.h"
#include "model_test.h"

#define HEAD "apiVersion: corral.dev/v1alpha1\nkind: SchedulerConfiguration\nmetadata: {name: c}\n"

Test(schedconf, volcano_string_form_and_apply)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, HEAD "spec:\n  actions: \"enqueue, allocate,backfill\"\n"
                                    "  policy: spread\n  strictOrder: true\n  seed: 7\n"
                                    "  maxEvictionsPerCycle: 3\n"
                                    "  scoring: {fragmentation: false, topology: true}\n"),
                 0, "%s", mt_diags(&t));
    const corral_schedconf_t *s = t.obj->u.schedconf;
    cr_assert(s->actions_set);
    cr_assert_eq(s->actions,
                 CORRAL_ACTION_ENQUEUE | CORRAL_ACTION_ALLOCATE | CORRAL_ACTION_BACKFILL);
    corral_sched_config_t c;
    corral_sched_config_default(&c);
    cr_assert_eq(corral_sched_config_apply(&c, s), 0);
    cr_assert(c.enqueue && c.allocate && c.backfill && !c.preempt && !c.reclaim);
    cr_assert_eq(c.policy, CORRAL_POLICY_SPREAD);
    cr_assert(c.strict_order);
    cr_assert_eq(c.seed, 7);
    cr_assert_eq(c.max_evictions, 3);
    cr_assert_eq(c.w_frag, 0);
    cr_assert_eq(c.w_topology, 1);
    cr_assert_eq(c.w_pack, 1, "a criterion left out keeps its default");
    mt_fini(&t);
}

Test(schedconf, list_form_and_empty_spec_keep_defaults)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, HEAD "spec:\n  actions: [reclaim, allocate]\n"), 0, "%s",
                 mt_diags(&t));
    cr_assert_eq(t.obj->u.schedconf->actions, CORRAL_ACTION_RECLAIM | CORRAL_ACTION_ALLOCATE);
    mt_fini(&t);
    cr_assert_eq(mt_decode(&t, HEAD), 0, "%s", mt_diags(&t));
    corral_sched_config_t c, d;
    corral_sched_config_default(&c);
    corral_sched_config_default(&d);
    cr_assert_eq(corral_sched_config_apply(&c, t.obj->u.schedconf), 0);
    cr_assert_eq(memcmp(&c, &d, sizeof(c)), 0, "nothing set: the defaults stay");
    mt_fini(&t);
}

Test(schedconf, errors_with_positions_and_hints)
{
    mt_t t;
    cr_assert_neq(mt_decode(&t, HEAD "spec:\n  actions: enqueue, alocate\n  policy: binpak\n"
                                     "  strictOrder: \"yes\"\n  maxEvictionsPerCycle: -1\n"
                                     "  scoring: {packing: 1}\n"),
                  0);
    mt_assert_diag(&t, "t.yaml:5:12", "spec.actions", "alocate", "did you mean `allocate`");
    mt_assert_diag(&t, "t.yaml:6:11", "spec.policy", "did you mean `binpack`");
    mt_assert_diag(&t, "spec.strictOrder", "expected a boolean");
    mt_assert_diag(&t, "spec.maxEvictionsPerCycle", "0 (no limit) or more");
    mt_assert_diag(&t, "spec.scoring.packing");
    mt_fini(&t);
    cr_assert_eq(mt_decode(&t, HEAD "spec: {actions: [enqueue]}\n"), 0);
    mt_assert_diag(&t, "warning", "no allocate");
    mt_fini(&t);
}

/* The model validates policy names on its own; they must be the engine's. */
Test(schedconf, policy_names_are_the_engines)
{
    for (int p = 0; p < CORRAL_POLICY_COUNT; p++) {
        char y[256];
        snprintf(y, sizeof(y), HEAD "spec: {policy: %s}\n", corral_policy_name((corral_policy_t)p));
        mt_t t;
        cr_assert_eq(mt_decode(&t, y), 0, "%s", mt_diags(&t));
        corral_sched_config_t c;
        corral_sched_config_default(&c);
        cr_assert_eq(corral_sched_config_apply(&c, t.obj->u.schedconf), 0);
        cr_assert_eq(c.policy, (corral_policy_t)p);
        mt_fini(&t);
    }
}
