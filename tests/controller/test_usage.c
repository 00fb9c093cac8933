/*
 * Accounting records (src/controller/usage.c): the UsageRecord a finished
 * pod gives (times, wait and run seconds, GPU-seconds allocated and used,
 * exit code), a pod deleted while running, and the record decoding back
 * through the object model (corral.dev/v1 UsageRecord).
 */
#include <criterion/criterion.h>
#include <string.h>

#include "controller/controller_int.h"
#include "corral/json.h"
#include "corral/yaml.h"

static corral_arena_t A;

static void setup(void)
{
    corral_arena_init(&A);
}

static void teardown(void)
{
    corral_arena_fini(&A);
}

TestSuite(usage, .init = setup, .fini = teardown);

static corral_obj_t *decode_text(const char *text)
{
    corral_diag_t d;
    corral_diag_init(&d);
    corral_doc_t *docs;
    size_t n;
    cr_assert_eq(corral_yaml_parse(&A, text, strlen(text), "t.yaml", NULL, &d, &docs, &n), 0);
    corral_obj_t *o = NULL;
    int rc = corral_obj_decode(&A, docs[0].root, "t.yaml", &d, &o);
    cr_assert_eq(rc, 0, "decode failed: %s", d.n ? d.items[0].msg : "");
    corral_diag_fini(&d);
    return o;
}

#define POD_HEAD                                                                                   \
    "apiVersion: v1\nkind: Pod\n"                                                                  \
    "metadata:\n  name: p1\n  namespace: alice\n  uid: 0b6f-uid\n"                                 \
    "  creationTimestamp: '2026-01-01T00:00:00Z'\n"

#define POD_SPEC                                                                                   \
    "spec:\n  nodeName: n1\n  containers:\n  - name: c\n    image: x\n"                            \
    "    resources: {limits: {nvidia.com/gpu: 2}}\n"

static const corral_val_t *spec_of(const corral_buf_t *b)
{
    corral_val_t *v = NULL;
    corral_json_err_t e;
    cr_assert_eq(corral_json_parse(&A, b->p, b->len, &v, &e), 0, "not JSON: %s", b->p);
    return corral_val_get(v, "spec");
}

static double num(const corral_val_t *spec, const char *k)
{
    const corral_val_t *v = corral_val_get(spec, k);
    cr_assert(v && (v->kind == CORRAL_VAL_INT || v->kind == CORRAL_VAL_FLOAT), "%s missing", k);
    return strtod(v->s, NULL);
}

Test(usage, finished_pod)
{
    corral_obj_t *pod = decode_text(
        POD_HEAD "  annotations: {corral.dev/gpu-ids: '0,3', corral.dev/gpu-seconds-used: '90.5'}\n"
                 "  labels: {volcano.sh/job-name: train}\n" POD_SPEC
                 "status:\n  phase: Failed\n  startTime: '2026-01-01T00:00:10Z'\n"
                 "  conditions:\n  - {type: PodScheduled, status: 'True', "
                 "lastTransitionTime: '2026-01-01T00:00:04Z'}\n"
                 "  containerStatuses:\n  - name: c\n    state:\n      terminated: {exitCode: 3, "
                 "reason: Error, finishedAt: '2026-01-01T00:01:10Z'}\n");
    corral_buf_t b;
    corral_buf_init(&b);
    corral__usage_build(pod, "research", "train", "NVIDIA H100", false, 0, &b);
    const corral_val_t *s = spec_of(&b);
    cr_assert_str_eq(corral_val_get_str(s, "pod"), "p1");
    cr_assert_str_eq(corral_val_get_str(s, "queue"), "research");
    cr_assert_str_eq(corral_val_get_str(s, "job"), "train");
    cr_assert_str_eq(corral_val_get_str(s, "gpuIDs"), "0,3");
    cr_assert_str_eq(corral_val_get_str(s, "gpuModel"), "NVIDIA H100");
    cr_assert_str_eq(corral_val_get_str(s, "phase"), "Failed");
    cr_assert_str_eq(corral_val_get_str(s, "reason"), "Error");
    cr_assert_str_eq(corral_val_get_str(s, "finishedAt"), "2026-01-01T00:01:10Z");
    cr_assert_float_eq(num(s, "gpus"), 2, 1e-9);
    cr_assert_float_eq(num(s, "waitSeconds"), 10, 1e-9);
    cr_assert_float_eq(num(s, "runSeconds"), 60, 1e-9);
    cr_assert_float_eq(num(s, "gpuSecondsAllocated"), 120, 1e-9);
    cr_assert_float_eq(num(s, "gpuSecondsUsed"), 90.5, 1e-9);
    cr_assert_float_eq(num(s, "exitCode"), 3, 1e-9);
    /* The record is a valid corral.dev/v1 UsageRecord named by the pod's UID. */
    corral_obj_t *rec = decode_text(b.p);
    cr_assert_eq(rec->info->kind, CORRAL_KIND_USAGE);
    cr_assert_str_eq(rec->meta.name, "0b6f-uid");
    cr_assert_str_eq(rec->u.usage->queue, "research");
    corral_buf_fini(&b);
}

Test(usage, deleted_while_running_and_unknown_use)
{
    corral_obj_t *pod =
        decode_text(POD_HEAD "  deletionTimestamp: '2026-01-01T00:00:40Z'\n" POD_SPEC
                             "status:\n  phase: Running\n  startTime: '2026-01-01T00:00:20Z'\n");
    corral_buf_t b;
    corral_buf_init(&b);
    corral__usage_build(pod, "default", "", "", true, 0, &b);
    const corral_val_t *s = spec_of(&b);
    cr_assert_str_eq(corral_val_get_str(s, "phase"), "Deleted");
    cr_assert_float_eq(num(s, "runSeconds"), 20, 1e-9);
    cr_assert_float_eq(num(s, "gpuSecondsAllocated"), 40, 1e-9);
    cr_assert_null(corral_val_get(s, "gpuSecondsUsed"), "unknown use is absent, not 0");
    cr_assert_null(corral_val_get(s, "exitCode"));
    corral_buf_fini(&b);
}

Test(usage, bad_record_refused)
{
    const char *t = "apiVersion: corral.dev/v1\nkind: UsageRecord\nmetadata: {name: x}\n"
                    "spec: {pod: p, runSeconds: soon}\n";
    corral_diag_t d;
    corral_diag_init(&d);
    corral_doc_t *docs;
    size_t n;
    cr_assert_eq(corral_yaml_parse(&A, t, strlen(t), "t.yaml", NULL, &d, &docs, &n), 0);
    corral_obj_t *o = NULL;
    cr_assert_neq(corral_obj_decode(&A, docs[0].root, "t.yaml", &d, &o), 0);
    corral_diag_fini(&d);
}
