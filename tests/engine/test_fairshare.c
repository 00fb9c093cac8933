/* Time-decayed fair share (src/engine/fairshare.c): the decay math, usage
 * rolling up to parents, "off" deciding exactly as before, the state going
 * with its queue, and the configuration's validation. */
#include <math.h>
#include <stdio.h>

#include "../model/model_test.h"
#include "engine/engine_int.h"
#include "engine_test.h"

#define HOUR (3600LL * 1000000000LL)
#define HEAD "apiVersion: corral.dev/v1alpha1\nkind: SchedulerConfiguration\nmetadata: {name: c}\n"

static const char *const cluster =
    "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
    "status: {allocatable: {cpu: '64', memory: 512Gi, pods: '110', nvidia.com/gpu: '4'}}\n"
    "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: eng}\n"
    "spec: {weight: 1}\n"
    "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: ops}\n"
    "spec: {weight: 1}\n"
    "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: nlp}\n"
    "spec: {weight: 1, parent: eng}\n"
    "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: cv}\n"
    "spec: {weight: 1, parent: eng}\n";

/* A one-pod job `name` asking for gpus GPUs in queue q. */
static void job(et_t *t, const char *name, const char *q, int gpus)
{
    char y[1024];
    snprintf(y, sizeof(y),
             "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: %s}\n"
             "spec: {minMember: 1, queue: %s}\n---\napiVersion: v1\nkind: Pod\n"
             "metadata: {name: %s, annotations: {scheduling.k8s.io/group-name: %s}}\n"
             "spec: {containers: [{name: m, image: i, resources: {requests: {cpu: '1', memory: "
             "1Gi}, limits: {nvidia.com/gpu: %d}}}]}\n",
             name, q, name, name, gpus);
    apply(t, y);
}

static void fair_init(et_t *t, int64_t half_life, double weight)
{
    et_init(t);
    corral_sched_config_t c;
    corral_sched_config_default(&c);
    c.fair_half_life_ns = half_life;
    c.fair_usage_weight = weight;
    corral_engine_set_config(t->e, &c);
    apply(t, cluster);
}

static const equeue_t *queue(et_t *t, const char *name)
{
    return &t->e->queues.items[corral__queue_get(t->e, name)];
}

static void cycle(et_t *t, int64_t now)
{
    const corral_decisions_t *d;
    cr_assert_eq(corral_engine_cycle(t->e, now, &d), 0);
}

Test(fairshare, one_half_life_halves_the_usage)
{
    et_t t;
    fair_init(&t, HOUR, 0.5);
    job(&t, "a", "ops", 4);
    cycle(&t, 0); /* binds a: ops holds 4000 milli-GPUs from now on */
    cycle(&t, HOUR);
    /* Held for one half-life: 4000 x H / ln 2 x (1 - 1/2). */
    double u1 = queue(&t, "ops")->fs_use[RES_GPU];
    double want = 4000.0 * (double)HOUR / M_LN2 * 0.5;
    cr_assert(fabs(u1 - want) < want * 1e-12, "usage %g, want %g", u1, want);
    cr_assert_eq(corral__fs_average(t.e, corral__queue_get(t.e, "ops"), RES_GPU), 4000,
                 "held all along: the average is what it held");
    cr_assert_eq(corral_engine_remove(t.e, CORRAL_KIND_POD, "default", "a"), 0);
    cycle(&t, HOUR); /* holds nothing from now on */
    cycle(&t, 2 * HOUR);
    double u2 = queue(&t, "ops")->fs_use[RES_GPU];
    cr_assert(fabs(u2 / u1 - 0.5) < 1e-12, "after one more half-life: %g of it", u2 / u1);
    cycle(&t, 4 * HOUR);
    cr_assert(fabs(queue(&t, "ops")->fs_use[RES_GPU] / u1 - 0.125) < 1e-12);
    et_fini(&t);
}

Test(fairshare, the_spacing_of_cycles_does_not_matter)
{
    et_t a, b;
    fair_init(&a, HOUR, 0.5);
    fair_init(&b, HOUR, 0.5);
    job(&a, "x", "ops", 2);
    job(&b, "x", "ops", 2);
    cycle(&a, 0);
    cycle(&b, 0);
    for (int i = 1; i <= 180; i++)
        cycle(&a, i * 60LL * 1000000000LL); /* every minute for 3 hours */
    cycle(&b, 3 * HOUR);                    /* once */
    double ua = queue(&a, "ops")->fs_use[RES_GPU], ub = queue(&b, "ops")->fs_use[RES_GPU];
    cr_assert(ua > 0 && fabs(ua - ub) < ub * 1e-9, "%g against %g", ua, ub);
    cr_assert(fabs(a.e->fs_window - b.e->fs_window) < b.e->fs_window * 1e-9);
    et_fini(&a);
    et_fini(&b);
}

Test(fairshare, children_roll_up_to_their_parent)
{
    et_t t;
    fair_init(&t, 24 * HOUR, 0.5);
    job(&t, "n", "nlp", 3);
    job(&t, "c", "cv", 1);
    cycle(&t, 0);
    cycle(&t, 10 * HOUR);
    double nlp = queue(&t, "nlp")->fs_use[RES_GPU], cv = queue(&t, "cv")->fs_use[RES_GPU];
    double eng = queue(&t, "eng")->fs_use[RES_GPU];
    cr_assert(nlp > 0 && fabs(nlp - 3 * cv) < nlp * 1e-12);
    cr_assert(fabs(eng - (nlp + cv)) < eng * 1e-12, "eng %g, children %g", eng, nlp + cv);
    cr_assert_eq(queue(&t, "ops")->fs_use[RES_GPU], 0);
    et_fini(&t);
}

Test(fairshare, a_queue_that_goes_takes_its_history)
{
    et_t t;
    fair_init(&t, HOUR, 0.5);
    job(&t, "a", "ops", 4);
    cycle(&t, 0);
    cycle(&t, HOUR);
    cr_assert_gt(queue(&t, "ops")->fs_use[RES_GPU], 0);
    cr_assert_eq(corral_engine_remove(t.e, CORRAL_KIND_POD, "default", "a"), 0);
    cr_assert_eq(corral_engine_remove(t.e, CORRAL_KIND_QUEUE, NULL, "ops"), 0);
    cycle(&t, 2 * HOUR);
    cr_assert_eq(queue(&t, "ops")->fs_use[RES_GPU], 0);
    /* Turned off: nothing is kept. */
    corral_sched_config_t c = t.e->cfg;
    c.fair_half_life_ns = 0;
    corral_engine_set_config(t.e, &c);
    cycle(&t, 3 * HOUR);
    cr_assert(!t.e->fs_on);
    cr_assert_eq(t.e->fs_window, 0);
    et_fini(&t);
}

/* Run a fixed history (nlp, under eng, fills the cluster for a day, then both
 * top-level queues and both of eng's children submit at once) and record
 * every bind. */
static void history(et_t *t, char *out, size_t len)
{
    size_t n = 0;
    out[0] = 0;
    job(t, "day", "nlp", 4);
    const corral_decisions_t *d;
    int64_t now = 0;
    for (int step = 0; step < 6; step++, now += 8 * HOUR) {
        if (step == 3) {
            corral_engine_remove(t->e, CORRAL_KIND_POD, "default", "day");
            job(t, "o1", "ops", 1);
            job(t, "o2", "ops", 1);
            job(t, "o3", "ops", 2);
            job(t, "n1", "nlp", 1);
            job(t, "c1", "cv", 2);
            job(t, "c2", "cv", 1);
        }
        cr_assert_eq(corral_engine_cycle(t->e, now, &d), 0);
        for (size_t i = 0; i < d->nbinds && n + 64 < len; i++)
            n += (size_t)snprintf(out + n, len - n, "%d:%s@%s[%s] ", step, d->binds[i].name,
                                  d->binds[i].node, d->binds[i].gpu_ids);
    }
}

Test(fairshare, off_or_without_weight_decides_as_before)
{
    char off[2048], zero[2048], on[2048];
    et_t t;
    fair_init(&t, 0, 0.5); /* off */
    history(&t, off, sizeof(off));
    et_fini(&t);
    fair_init(&t, 168 * HOUR, 0); /* on, the past weighted 0 */
    history(&t, zero, sizeof(zero));
    et_fini(&t);
    fair_init(&t, 168 * HOUR, 0.5); /* on */
    history(&t, on, sizeof(on));
    et_fini(&t);
    cr_assert_str_eq(zero, off, "usageWeight 0 must decide as fair share off");
    cr_assert_str_neq(on, off, "the test must be able to tell: with the past, ops goes first");
    /* Equal shares (0) at step 3: off serves eng first (by name), on serves
     * ops first (nlp's day counts for eng); each up to its deserved 2 GPUs. */
    cr_assert(strstr(off, "3:") && strchr("nc", strstr(off, "3:")[2]), "off: %s", off);
    cr_assert(strstr(on, "3:o1@") == strstr(on, "3:"), "on: %s", on);
}

Test(fairshare, configuration_is_validated)
{
    mt_t m;
    cr_assert_eq(mt_decode(&m, HEAD "spec:\n  fairShare: {halfLife: 168h, usageWeight: 0.25}\n"), 0,
                 "%s", mt_diags(&m));
    corral_sched_config_t c;
    corral_sched_config_default(&c);
    cr_assert_eq(c.fair_half_life_ns, 0, "off by default");
    cr_assert_eq(corral_sched_config_apply(&c, m.obj->u.schedconf), 0);
    cr_assert_eq(c.fair_half_life_ns, 168 * HOUR);
    cr_assert_float_eq(c.fair_usage_weight, 0.25, 1e-12);
    mt_fini(&m);

    cr_assert_eq(mt_decode(&m, HEAD "spec:\n  fairShare: {halfLife: 0s}\n"), 0, "%s", mt_diags(&m));
    corral_sched_config_default(&c);
    cr_assert_eq(corral_sched_config_apply(&c, m.obj->u.schedconf), 0);
    cr_assert_eq(c.fair_half_life_ns, 0, "0s: off");
    cr_assert_float_eq(c.fair_usage_weight, 0.5, 1e-12, "the default weight");
    mt_fini(&m);

    cr_assert_neq(mt_decode(&m, HEAD "spec:\n  fairShare:\n    halfLife: -1h\n"), 0);
    mt_assert_diag(&m, "spec.fairShare.halfLife", "must not be negative");
    mt_fini(&m);
    cr_assert_neq(mt_decode(&m, HEAD "spec:\n  fairShare:\n    halfLife: 30s\n"), 0);
    mt_assert_diag(&m, "spec.fairShare.halfLife", "between 1m and 8760h");
    mt_fini(&m);
    cr_assert_neq(mt_decode(&m, HEAD "spec:\n  fairShare:\n    halfLife: 9000h\n"), 0);
    mt_assert_diag(&m, "spec.fairShare.halfLife", "between 1m and 8760h");
    mt_fini(&m);
    cr_assert_neq(mt_decode(&m, HEAD "spec:\n  fairShare:\n    halfLife: 168\n"), 0);
    mt_assert_diag(&m, "spec.fairShare.halfLife", "needs a unit");
    mt_fini(&m);
    cr_assert_neq(mt_decode(&m, HEAD "spec:\n  fairShare: {halfLife: 1h, usageWeight: 1.5}\n"), 0);
    mt_assert_diag(&m, "spec.fairShare.usageWeight", "from 0", "got 1.5");
    mt_fini(&m);
    cr_assert_neq(mt_decode(&m, HEAD "spec:\n  fairShare: {halfLife: 1h, usageWeight: half}\n"), 0);
    mt_assert_diag(&m, "spec.fairShare.usageWeight", "must be a number");
    mt_fini(&m);
    cr_assert_neq(mt_decode(&m, HEAD "spec:\n  fairShare: {usageWeight: 0.5}\n"), 0);
    mt_assert_diag(&m, "spec.fairShare", "needs halfLife");
    mt_fini(&m);

    /* The engine refuses what the decoder would have, and keeps c as it was. */
    corral_schedconf_t s;
    memset(&s, 0, sizeof(s));
    s.fair_share_set = true;
    s.fair_half_life_ns = -HOUR;
    corral_sched_config_default(&c);
    cr_assert_eq(corral_sched_config_apply(&c, &s), CORRAL_EINVAL);
    cr_assert_eq(c.fair_half_life_ns, 0);
    s.fair_half_life_ns = HOUR;
    s.fair_usage_weight_set = true;
    s.fair_usage_weight = NAN;
    cr_assert_eq(corral_sched_config_apply(&c, &s), CORRAL_EINVAL);
    s.fair_usage_weight = 1;
    cr_assert_eq(corral_sched_config_apply(&c, &s), 0);
    cr_assert_eq(c.fair_half_life_ns, HOUR);
}
