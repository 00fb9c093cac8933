/* The corral.dev Scenario document (SCENARIOS.md, "The Scenario document"):
 * steps with times, applied objects, deletions, completions and every kind of
 * expectation; a decreasing `at`; objects inside `apply` reported at their own
 * lines and paths; and the messages for malformed expectations. */
#include <stdio.h>

#include "model_test.h"

#define SCN_HEAD                                                                                   \
    "apiVersion: corral.dev/v1alpha1\n"                                                            \
    "kind: Scenario\n"                                                                             \
    "metadata: {name: s}\n"                                                                        \
    "spec:\n"                                                                                      \
    "  steps:\n"

TestSuite(scenario);

/* Decode SCN_HEAD followed by steps: the first step's line is line 6. */
static int decode_steps(mt_t *t, const char *steps)
{
    static char buf[8192];
    snprintf(buf, sizeof(buf), SCN_HEAD "%s", steps);
    return mt_decode(t, buf);
}

static void assert_list(const corral_strlist_t *l, size_t n, const char *first)
{
    cr_assert_eq(l->n, n);
    if (n)
        cr_assert_str_eq(l->items[0], first);
}

Test(scenario, full_document)
{
    mt_t t;
    int rc = mt_decode(
        &t, "apiVersion: corral.dev/v1alpha1\n"
            "kind: Scenario\n"
            "metadata: {name: reclaim-borrowed-gpus}\n"
            "spec:\n"
            "  description: queue b reclaims what a borrowed\n"
            "  steps:\n"
            "  - expect:\n"
            "      scheduled: [a-1, a-2]\n"
            "  - at: 90m\n"
            "    apply:\n"
            "    - apiVersion: v1\n"
            "      kind: Pod\n"
            "      metadata: {name: b-1, namespace: team-b}\n"
            "      spec:\n"
            "        containers:\n"
            "        - {name: c, image: busybox, resources: {limits: {nvidia.com/gpu: 1}}}\n"
            "    - {apiVersion: v1, kind: Pod, metadata: {name: w-0},\n"
            "       spec: {containers: [{name: c, image: x}]}}\n"
            "    delete: [a-0, PodGroup/default/pg-1]\n"
            "    complete: [a-3]\n"
            "    expect:\n"
            "      bound: {team-b/b-1: node-2}\n"
            "      scheduled: [team-b/b-1]\n"
            "      pending: [a-4]\n"
            "      evicted: [a-1]\n"
            "      notEvicted: [a-2, default/a-5]\n"
            "      sameNode: [[w-0, w-1], [x-0, x-1, x-2]]\n"
            "      gpuIds: {w-0: [0, 1], w-1: [3]}\n"
            "      reason: {a-4: \"Insufficient nvidia.com/gpu\"}\n"
            "  - at: 2h\n"
            "    complete: [w-0]\n");
    cr_assert_eq(rc, 0, "%s", mt_diags(&t));
    cr_assert_eq(t.diag.n, 0, "%s", mt_diags(&t));
    cr_assert_eq(t.obj->info->kind, CORRAL_KIND_SCENARIO);
    const corral_scenario_t *sc = t.obj->u.scenario;
    cr_assert_str_eq(sc->description, "queue b reclaims what a borrowed");
    cr_assert_eq(sc->nsteps, 3);

    const corral_scn_step_t *s0 = &sc->steps[0];
    cr_assert_eq(s0->line, 7);
    cr_assert_not(s0->at_ns.set);
    cr_assert_eq(s0->napply, 0);
    cr_assert(s0->expect.present);
    assert_list(&s0->expect.scheduled, 2, "a-1");
    cr_assert_str_eq(s0->expect.scheduled.items[1], "a-2");

    const corral_scn_step_t *s1 = &sc->steps[1];
    cr_assert_eq(s1->line, 9);
    cr_assert(s1->at_ns.set);
    cr_assert_eq(s1->at_ns.v, INT64_C(90) * 60 * 1000000000);
    cr_assert_eq(s1->napply, 2);
    cr_assert_eq(s1->apply[0]->info->kind, CORRAL_KIND_POD);
    cr_assert_str_eq(s1->apply[0]->meta.name, "b-1");
    cr_assert_str_eq(s1->apply[0]->meta.namespace, "team-b");
    cr_assert_eq(s1->apply[0]->u.pod->spec.ncontainers, 1);
    cr_assert_str_eq(s1->apply[1]->meta.name, "w-0");
    cr_assert_str_eq(s1->apply[1]->meta.namespace, "default");
    assert_list(&s1->del, 2, "a-0");
    cr_assert_str_eq(s1->del.items[1], "PodGroup/default/pg-1");
    assert_list(&s1->complete, 1, "a-3");
    const corral_scn_expect_t *e = &s1->expect;
    cr_assert(e->present);
    cr_assert_eq(e->bound.n, 1);
    cr_assert_str_eq(corral_strmap_get(&e->bound, "team-b/b-1"), "node-2");
    assert_list(&e->scheduled, 1, "team-b/b-1");
    assert_list(&e->pending, 1, "a-4");
    assert_list(&e->evicted, 1, "a-1");
    assert_list(&e->not_evicted, 2, "a-2");
    cr_assert_eq(e->nsame_node, 2);
    assert_list(&e->same_node[0], 2, "w-0");
    assert_list(&e->same_node[1], 3, "x-0");
    cr_assert_eq(e->ngpu_ids, 2);
    cr_assert_str_eq(e->gpu_ids[0].pod, "w-0");
    cr_assert_eq(e->gpu_ids[0].n, 2);
    cr_assert_eq(e->gpu_ids[0].ids[0], 0);
    cr_assert_eq(e->gpu_ids[0].ids[1], 1);
    cr_assert_str_eq(e->gpu_ids[1].pod, "w-1");
    cr_assert_eq(e->gpu_ids[1].n, 1);
    cr_assert_eq(e->gpu_ids[1].ids[0], 3);
    cr_assert_str_eq(corral_strmap_get(&e->reason, "a-4"), "Insufficient nvidia.com/gpu");

    const corral_scn_step_t *s2 = &sc->steps[2];
    cr_assert_eq(s2->line, 30);
    cr_assert_eq(s2->at_ns.v, INT64_C(2) * 3600 * 1000000000);
    cr_assert_not(s2->expect.present);
    assert_list(&s2->complete, 1, "w-0");
    mt_fini(&t);
}

Test(scenario, decreasing_at_is_rejected)
{
    mt_t t;
    cr_assert_eq(decode_steps(&t, "  - at: 1h\n"
                                  "  - expect: {}\n"
                                  "  - at: 30m\n"
                                  "  - at: 45m\n"
                                  "  - at: 1h30m\n"),
                 CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:8:9: spec.steps[2].at: at 30m is earlier than the previous "
                       "step's 1h");
    mt_assert_diag(&t, "t.yaml:9:9: spec.steps[3].at: at 45m is earlier than the previous "
                       "step's 1h");
    cr_assert_eq(t.diag.n, 2, "%s", mt_diags(&t));
    cr_assert(t.obj->u.scenario->steps[1].expect.present);
    mt_fini(&t);
    /* Equal times are fine: `at` never decreases, it may stay. */
    cr_assert_eq(decode_steps(&t, "  - at: 60m\n"
                                  "  - at: 1h\n"),
                 0, "%s", mt_diags(&t));
    mt_fini(&t);
}

Test(scenario, bad_at)
{
    mt_t t;
    cr_assert_eq(decode_steps(&t, "  - at: 90\n"
                                  "  - at: soon\n"
                                  "  - at: -5m\n"),
                 CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:6:9:", "spec.steps[0].at", "needs a unit", "\"90m\"");
    mt_assert_diag(&t, "t.yaml:7:9:", "spec.steps[1].at", "\"soon\" is not a duration");
    mt_assert_diag(&t, "t.yaml:8:9:", "spec.steps[2].at", "must not be negative");
    cr_assert_not(t.obj->u.scenario->steps[0].at_ns.set);
    mt_fini(&t);
}

Test(scenario, nested_object_errors_keep_their_own_path)
{
    mt_t t;
    int rc = decode_steps(&t, "  - apply:\n"
                              "    - apiVersion: v1\n"
                              "      kind: Pod\n"
                              "      metadata: {name: p}\n"
                              "      spec:\n"
                              "        containers:\n"
                              "        - name: c\n"
                              "          image: x\n"
                              "          resources: {limits: {nvidia.com/gpu: 0.5}}\n"
                              "    - {apiVersion: v1, kind: Pdo, metadata: {name: q}}\n"
                              "    - {apiVersion: v1, kind: Pod, metadata: {name: ok},\n"
                              "       spec: {containers: [{name: c, image: x}]}}\n");
    cr_assert_eq(rc, CORRAL_EINVAL, "the scenario fails with the objects in it");
    mt_assert_diag(&t, "t.yaml:14:", "spec.containers[0].resources.limits.nvidia.com/gpu",
                   "whole number of GPUs");
    mt_assert_diag(&t, "t.yaml:15:", "kind: unknown kind \"Pdo\"", "`Pod`");
    const corral_scn_step_t *s = &t.obj->u.scenario->steps[0];
    cr_assert_eq(s->napply, 2, "objects of a known kind are kept");
    cr_assert_str_eq(s->apply[0]->meta.name, "p");
    cr_assert_str_eq(s->apply[1]->meta.name, "ok");
    mt_fini(&t);
}

Test(scenario, apply_cannot_hold_a_scenario)
{
    mt_t t;
    cr_assert_eq(decode_steps(&t, "  - apply:\n"
                                  "    - apiVersion: corral.dev/v1alpha1\n"
                                  "      kind: Scenario\n"
                                  "      metadata: {name: inner}\n"
                                  "      spec: {steps: []}\n"
                                  "    - \"not an object\"\n"),
                 CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:7:", "spec.steps[0].apply[0]", "cannot apply a Scenario");
    mt_assert_diag(&t, "t.yaml:11:", "expected a Kubernetes object");
    cr_assert_eq(t.obj->u.scenario->steps[0].napply, 0);
    mt_fini(&t);
    cr_assert_eq(decode_steps(&t, "  - apply: {kind: Pod}\n"), CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:6:", "spec.steps[0].apply", "expected a list");
    mt_fini(&t);
}

Test(scenario, gpu_ids)
{
    mt_t t;
    cr_assert_eq(decode_steps(&t, "  - expect:\n"
                                  "      gpuIds:\n"
                                  "        w-0: [0, -1, 0]\n"
                                  "        w-1: \"0,1\"\n"
                                  "        w-2: [a]\n"
                                  "        w-3: []\n"),
                 CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:8:", "spec.steps[0].expect.gpuIds.w-0[1]", "numbered from 0", "-1");
    mt_assert_diag(&t, "t.yaml:8:", "spec.steps[0].expect.gpuIds.w-0[2]", "GPU 0 is listed twice");
    mt_assert_diag(&t, "t.yaml:9:", "spec.steps[0].expect.gpuIds.w-1",
                   "list of GPU indices such as [0, 1]", "\"0,1\"");
    mt_assert_diag(&t, "t.yaml:10:", "spec.steps[0].expect.gpuIds.w-2[0]", "expected an integer");
    cr_assert_eq(t.diag.n, 4, "%s", mt_diags(&t));
    const corral_scn_expect_t *e = &t.obj->u.scenario->steps[0].expect;
    cr_assert_eq(e->ngpu_ids, 4);
    cr_assert_str_eq(e->gpu_ids[3].pod, "w-3");
    cr_assert_eq(e->gpu_ids[3].n, 0);
    mt_fini(&t);
}

Test(scenario, unknown_keys_get_hints)
{
    mt_t t;
    cr_assert_eq(decode_steps(&t, "  - expect:\n"
                                  "      schedule: [a]\n"
                                  "      notevicted: [b]\n"
                                  "    expected: {}\n"
                                  "    completed: [c]\n"),
                 0, "%s", mt_diags(&t));
    mt_assert_diag(&t, "t.yaml:7:", "warning:", "spec.steps[0].expect.schedule",
                   "did you mean `scheduled`");
    mt_assert_diag(&t, "t.yaml:8:", "warning:", "spec.steps[0].expect.notevicted",
                   "did you mean `notEvicted`");
    mt_assert_diag(&t, "t.yaml:9:", "warning:", "spec.steps[0].expected", "did you mean `expect`");
    mt_assert_diag(&t, "t.yaml:10:", "warning:", "spec.steps[0].completed",
                   "did you mean `complete`");
    mt_fini(&t);
}

Test(scenario, same_node_shape)
{
    mt_t t;
    cr_assert_eq(decode_steps(&t, "  - expect:\n"
                                  "      sameNode: [w-0, w-1]\n"),
                 CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:7:", "spec.steps[0].expect.sameNode[0]", "list of groups",
                   "`sameNode: [[w-0, ...]]`");
    mt_fini(&t);
    cr_assert_eq(decode_steps(&t, "  - expect:\n"
                                  "      sameNode: [[w-0]]\n"),
                 0, "%s", mt_diags(&t));
    mt_assert_diag(&t, "t.yaml:7:", "warning:", "spec.steps[0].expect.sameNode[0]", "two or more");
    mt_fini(&t);
}

Test(scenario, names_and_references)
{
    mt_t t;
    cr_assert_eq(decode_steps(&t, "  - delete: [a/b/c/d, \"\", Kind/ns/name, /x, Node//n-1]\n"
                                  "    complete: [ns/pod/extra]\n"
                                  "    expect:\n"
                                  "      pending: [ok, ns/ok, \"ns/\"]\n"
                                  "      bound: {p: , q: \"\", r: node-1}\n"
                                  "      reason: {a/b/c: x}\n"),
                 CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:6:", "spec.steps[0].delete[0]", "\"a/b/c/d\" is not an object");
    mt_assert_diag(&t, "t.yaml:6:", "spec.steps[0].delete[1]", "\"\" is not an object");
    mt_assert_diag(&t, "t.yaml:6:", "spec.steps[0].delete[3]", "\"/x\" is not an object");
    mt_assert_diag(&t, "t.yaml:7:", "spec.steps[0].complete[0]", "is not a pod",
                   "\"namespace/name\"");
    mt_assert_diag(&t, "t.yaml:9:", "spec.steps[0].expect.pending[2]", "\"ns/\" is not a pod");
    mt_assert_diag(&t, "t.yaml:10:", "spec.steps[0].expect.bound.p", "needs a node name");
    mt_assert_diag(&t, "t.yaml:10:", "spec.steps[0].expect.bound.q", "needs a node name");
    mt_assert_diag(&t, "t.yaml:11:", "spec.steps[0].expect.reason.a/b/c", "is not a pod");
    cr_assert_eq(t.diag.n, 8, "%s", mt_diags(&t));
    mt_fini(&t);
}

Test(scenario, spec_and_steps)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, "apiVersion: corral.dev/v1alpha1\n"
                               "kind: Scenario\n"
                               "metadata: {name: s}\n"),
                 CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:1:", "spec: required");
    mt_fini(&t);
    cr_assert_eq(mt_decode(&t, "apiVersion: corral.dev/v1alpha1\n"
                               "kind: Scenario\n"
                               "metadata: {name: s}\n"
                               "spec: {description: nothing}\n"),
                 0, "%s", mt_diags(&t));
    mt_assert_diag(&t, "t.yaml:4:", "warning:", "no steps");
    cr_assert_eq(t.obj->u.scenario->nsteps, 0);
    mt_fini(&t);
    cr_assert_eq(decode_steps(&t, "  - null\n"
                                  "  - {}\n"),
                 0, "%s", mt_diags(&t));
    cr_assert_eq(t.obj->u.scenario->nsteps, 2);
    cr_assert_not(t.obj->u.scenario->steps[1].expect.present);
    mt_fini(&t);
}
