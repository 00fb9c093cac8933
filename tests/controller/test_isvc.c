/*
 * The InferenceService controller's pure half: the pod template and its
 * hash, revision names, KServe's canary traffic rules (new service, canary,
 * promotion, rollback, a revision that is not ready), replica clamping and
 * the status with its conditions.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "controller/isvc.h"
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

TestSuite(isvcctl, .init = setup, .fini = teardown);

static corral_obj_t *isvc_yaml(const char *yaml)
{
    corral_diag_t d;
    corral_diag_init(&d);
    corral_doc_t *docs;
    size_t n;
    cr_assert_eq(corral_yaml_parse(&A, yaml, strlen(yaml), "t.yaml", NULL, &d, &docs, &n), 0);
    corral_val_t *root = docs[0].root;
    corral_obj_default(
        &A,
        corral_kind_find(corral_val_get_str(root, "apiVersion"), corral_val_get_str(root, "kind")),
        root);
    corral_obj_t *o = NULL;
    cr_assert_eq(corral_obj_decode(&A, root, "t.yaml", &d, &o), 0, "decode failed");
    corral_diag_fini(&d);
    return o;
}

#define SVC(extra, container)                                                                      \
    "apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\n"                              \
    "metadata: {name: llm, namespace: ml, uid: u1" extra "}\n"                                     \
    "spec:\n  predictor:\n    minReplicas: 0\n    maxReplicas: 3\n    canaryTrafficPercent: 10\n"  \
    "    containers:\n    - " container "\n"

static corral_val_t *template_of(const corral_obj_t *o)
{
    corral_val_t *t = NULL;
    char err[256];
    cr_assert_eq(corral_isvc_resolve(&A, o, NULL, 0, &t, err, sizeof(err)), 0, "%s", err);
    corral__isvc_template(&A, o, t, "file:///models/llm");
    return t;
}

/* The entry of env named name, or NULL. */
static const corral_val_t *env_of(const corral_val_t *env, const char *name)
{
    for (size_t i = 0; env && i < env->n; i++) {
        if (!strcmp(corral_val_get_str(env->items[i], "name"), name))
            return env->items[i];
    }
    return NULL;
}

Test(isvcctl, template_adds_the_runtime_contract)
{
    corral_obj_t *o = isvc_yaml(SVC("", "{name: c, image: x, command: [sleep, '100'], "
                                        "ports: [{containerPort: 8000}]}"));
    corral_val_t *t = template_of(o);
    const corral_val_t *spec = corral_val_get(t, "spec");
    cr_assert_null(corral_val_get(spec, "minReplicas"));
    cr_assert_null(corral_val_get(spec, "canaryTrafficPercent"));
    cr_assert_eq(corral__isvc_port(spec), 8000);
    const corral_val_t *c = corral_val_dig(spec, "containers")->items[0];
    const corral_val_t *env = corral_val_get(c, "env");
    cr_assert_str_eq(corral_val_get_str(env_of(env, "PORT"), "value"), "8000");
    cr_assert_str_eq(corral_val_get_str(corral_val_dig(env_of(env, "POD_IP"), "valueFrom.fieldRef"),
                                        "fieldPath"),
                     "status.podIP");
    cr_assert_eq(corral_val_dig(c, "readinessProbe.tcpSocket.port")->u.i, 8000);
    cr_assert_eq(corral_val_dig(c, "readinessProbe.periodSeconds")->u.i, 1);
    const corral_val_t *l = corral_val_dig(t, "metadata.labels");
    cr_assert_str_eq(corral_val_get_str(l, CORRAL__ISVC_LABEL), "llm");
    cr_assert_str_eq(corral_val_get_str(l, "component"), "predictor");
    cr_assert_str_eq(corral_val_get_str(l, "app"), "isvc.llm-predictor");
    const corral_val_t *an = corral_val_dig(t, "metadata.annotations");
    cr_assert_str_eq(corral_val_get_str(an, CORRAL__ISVC_QUEUE_ANN), "inference");
    cr_assert_str_eq(corral_val_get_str(an, CORRAL__ISVC_URI_ANN), "file:///models/llm");
}

Test(isvcctl, template_keeps_a_probe_and_names_the_queue)
{
    corral_obj_t *o = isvc_yaml(SVC(", annotations: {scheduling.volcano.sh/queue-name: q1}",
                                    "{name: c, image: x, env: [{name: PORT, value: '9'}], "
                                    "readinessProbe: {httpGet: {path: /health, port: 9}}}"));
    corral_val_t *t = template_of(o);
    const corral_val_t *c = corral_val_dig(t, "spec.containers")->items[0];
    const corral_val_t *env = corral_val_get(c, "env");
    cr_assert_str_eq(corral_val_get_str(env_of(env, "PORT"), "value"), "9", "kept as written");
    cr_assert_not_null(env_of(env, "POD_IP"));
    cr_assert_not_null(corral_val_dig(c, "readinessProbe.httpGet"));
    cr_assert_null(corral_val_dig(c, "readinessProbe.tcpSocket"));
    cr_assert_eq(corral__isvc_port(corral_val_get(t, "spec")), 8080);
    cr_assert_str_eq(
        corral_val_get_str(corral_val_dig(t, "metadata.annotations"), CORRAL__ISVC_QUEUE_ANN),
        "q1");
}

Test(isvcctl, hash_follows_the_template_not_the_field_order)
{
    char h1[17], h2[17], h3[17];
    corral__isvc_hash(template_of(isvc_yaml(SVC("", "{name: c, image: x, command: [a]}"))), h1);
    corral__isvc_hash(template_of(isvc_yaml(SVC("", "{image: x, command: [a], name: c}"))), h2);
    corral__isvc_hash(template_of(isvc_yaml(SVC("", "{name: c, image: x, command: [b]}"))), h3);
    cr_assert_str_eq(h1, h2);
    cr_assert_str_neq(h1, h3);
    cr_assert_eq(strlen(h1), 16);
}

Test(isvcctl, revision_names)
{
    char b[64];
    corral__isvc_rev_name(b, sizeof(b), "llm", 2);
    cr_assert_str_eq(b, "llm-predictor-00002");
}

/* --- traffic -------------------------------------------------------------------------------- */

static corral__isvc_rev_t R1 = {"s-predictor-00001", 1, false};
static corral__isvc_rev_t R2 = {"s-predictor-00002", 2, false};

static void traffic(const corral__isvc_rev_t *revs, size_t n, const char *ready, const char *rolled,
                    const char *prev, int canary, corral__isvc_traffic_t *out)
{
    corral__isvc_traffic_in_t in = {revs, n, ready, rolled, prev, {canary >= 0, canary}};
    corral__isvc_traffic(&in, out);
}

Test(isvcctl, new_service_sends_everything_to_its_first_revision_at_once)
{
    corral__isvc_rev_t r[] = {R1};
    corral__isvc_traffic_t t;
    traffic(r, 1, NULL, NULL, NULL, -1, &t);
    cr_assert_eq(t.n, 1);
    cr_assert_str_eq(t.t[0].rev, R1.name);
    cr_assert_eq(t.t[0].percent, 100);
    cr_assert(t.t[0].latest);
    cr_assert_str_eq(t.t[0].tag, "latest");
    cr_assert_null(t.rolled);
    cr_assert_null(t.latest_ready);
    cr_assert_str_eq(t.latest_created, R1.name);
    r[0].ready_now = true;
    traffic(r, 1, NULL, NULL, NULL, 10, &t); /* canary with nothing rolled out: all */
    cr_assert_eq(t.n, 1);
    cr_assert_str_eq(t.rolled, R1.name);
    cr_assert(t.promoted);
    cr_assert_str_eq(t.latest_ready, R1.name);
}

Test(isvcctl, canary_waits_for_the_new_revision_then_splits)
{
    corral__isvc_rev_t r[] = {R2, R1};
    r[1].ready_now = true;
    corral__isvc_traffic_t t;
    traffic(r, 2, R1.name, R1.name, NULL, 10, &t);
    cr_assert_eq(t.n, 1, "traffic stays while revision 2 is not ready");
    cr_assert_str_eq(t.t[0].rev, R1.name);
    cr_assert_eq(t.t[0].percent, 100);
    cr_assert_str_eq(t.latest_created, R2.name);
    r[0].ready_now = true;
    traffic(r, 2, R1.name, R1.name, NULL, 10, &t);
    cr_assert_eq(t.n, 2);
    cr_assert_str_eq(t.t[0].rev, R2.name);
    cr_assert_eq(t.t[0].percent, 10);
    cr_assert_str_eq(t.t[0].tag, "latest");
    cr_assert(t.t[0].latest);
    cr_assert_str_eq(t.t[1].rev, R1.name);
    cr_assert_eq(t.t[1].percent, 90);
    cr_assert_str_eq(t.t[1].tag, "prev");
    cr_assert_not(t.t[1].latest);
    cr_assert_str_eq(t.rolled, R1.name);
    cr_assert_not(t.promoted);
    cr_assert_str_eq(t.latest_ready, R2.name);
    /* revision 2 has no replica at the moment: it stays the latest ready */
    r[0].ready_now = false;
    traffic(r, 2, R2.name, R1.name, NULL, 10, &t);
    cr_assert_eq(corral__isvc_percent(&t, R2.name), 10);
}

Test(isvcctl, zero_rolls_back_and_absent_or_100_promotes)
{
    corral__isvc_rev_t r[] = {R1, R2};
    r[0].ready_now = r[1].ready_now = true;
    corral__isvc_traffic_t t;
    traffic(r, 2, R2.name, R1.name, NULL, 0, &t);
    cr_assert_eq(corral__isvc_percent(&t, R2.name), 0);
    cr_assert_eq(corral__isvc_percent(&t, R1.name), 100);
    cr_assert_str_eq(t.t[1].tag, "prev");
    cr_assert_str_eq(t.rolled, R1.name);
    for (int canary = -1; canary <= 100; canary += 101) {
        traffic(r, 2, R2.name, R1.name, NULL, canary, &t);
        cr_assert_eq(t.n, 1);
        cr_assert_eq(corral__isvc_percent(&t, R2.name), 100);
        cr_assert_eq(corral__isvc_percent(&t, R1.name), -1);
        cr_assert(t.promoted);
        cr_assert_str_eq(t.rolled, R2.name);
        cr_assert_str_eq(t.prev_rolled, R1.name);
    }
    /* once rolled out, nothing moves again */
    traffic(r, 2, R2.name, R2.name, R1.name, -1, &t);
    cr_assert_not(t.promoted);
    cr_assert_str_eq(t.prev_rolled, R1.name);
}

Test(isvcctl, a_revision_that_is_gone_is_not_named)
{
    corral__isvc_rev_t r[] = {R2};
    r[0].ready_now = true;
    corral__isvc_traffic_t t;
    traffic(r, 1, R1.name, R1.name, NULL, 10, &t);
    cr_assert_eq(t.n, 1);
    cr_assert_str_eq(t.t[0].rev, R2.name);
    cr_assert_null(t.prev_rolled);
    traffic(NULL, 0, NULL, NULL, NULL, -1, &t);
    cr_assert_eq(t.n, 0);
    cr_assert_null(t.latest_created);
}

Test(isvcctl, clamp)
{
    cr_assert_eq(corral__isvc_clamp(0, 1, 0, true, false), 1);
    cr_assert_eq(corral__isvc_clamp(9, 1, 5, true, false), 5);
    cr_assert_eq(corral__isvc_clamp(9, 1, 0, true, false), 9, "max 0: no limit");
    cr_assert_eq(corral__isvc_clamp(0, 0, 5, true, false), 0, "scale to zero");
    cr_assert_eq(corral__isvc_clamp(4, 1, 5, false, false), 0, "no traffic: zero");
    cr_assert_eq(corral__isvc_clamp(0, 0, 5, false, true), 1, "a new revision shows it runs");
    cr_assert_eq(corral__isvc_clamp(0, 0, 5, true, true), 1);
    cr_assert_eq(corral__isvc_clamp(3, 0, 5, true, true), 3);
}

/* --- status --------------------------------------------------------------------------------- */

static const char *cond(const corral_val_t *st, const char *type, const char *field)
{
    const corral_val_t *cs = corral_val_get(st, "conditions");
    for (size_t i = 0; i < cs->n; i++) {
        if (!strcmp(corral_val_get_str(cs->items[i], "type"), type))
            return corral_val_get_str(cs->items[i], field);
    }
    return NULL;
}

Test(isvcctl, status_of_a_ready_canary)
{
    corral__isvc_rev_t r[] = {R1, R2};
    r[0].ready_now = r[1].ready_now = true;
    corral__isvc_traffic_t t;
    traffic(r, 2, R1.name, R1.name, NULL, 10, &t);
    corral__isvc_cold_t cold = {"p", "n1", R2.name, "hit", 0.1, 0.004, 1.5, 1.604};
    corral__isvc_status_in_t in = {.ns = "ml",
                                   .name = "s",
                                   .ingress_domain = "example.com",
                                   .router_url = "http://127.0.0.1:8080",
                                   .generation = 3,
                                   .tr = &t,
                                   .cold = &cold,
                                   .now_us = 1700000000000000};
    corral_val_t *st = corral__isvc_status(&A, &in);
    cr_assert_str_eq(corral_val_get_str(st, "url"), "http://s.ml.example.com");
    cr_assert_str_eq(corral_val_get_str(corral_val_get(st, "address"), "url"),
                     "http://127.0.0.1:8080/serving/ml/s");
    cr_assert_str_eq(cond(st, "Ready", "status"), "True");
    cr_assert_str_eq(cond(st, "PredictorReady", "status"), "True");
    cr_assert_str_eq(cond(st, "IngressReady", "status"), "True");
    cr_assert_str_eq(cond(st, "RoutesReady", "status"), "True");
    cr_assert_str_eq(cond(st, "LatestDeploymentReady", "severity"), "Info");
    const corral_val_t *p = corral_val_dig(st, "components.predictor");
    cr_assert_str_eq(corral_val_get_str(p, "latestCreatedRevision"), R2.name);
    cr_assert_str_eq(corral_val_get_str(p, "latestReadyRevision"), R2.name);
    cr_assert_str_eq(corral_val_get_str(p, "latestRolledoutRevision"), R1.name);
    cr_assert_null(corral_val_get(p, "previousRolledoutRevision"));
    const corral_val_t *tr = corral_val_get(p, "traffic");
    cr_assert_eq(tr->n, 2);
    cr_assert_eq(corral_val_get(tr->items[0], "percent")->u.i, 10);
    cr_assert_str_eq(corral_val_get_str(tr->items[1], "tag"), "prev");
    cr_assert_str_eq(
        corral_val_get_str(corral_val_get(p, CORRAL__ISVC_COLD_START), "scheduleSeconds"), "0.100");
    cr_assert_eq(corral_val_get(st, "observedGeneration")->u.i, 3);
    cr_assert_str_eq(corral_val_get_str(corral_val_get(st, "modelStatus"), "transitionStatus"),
                     "UpToDate");
    cr_assert_str_eq(
        corral_val_get_str(corral_val_dig(st, "modelStatus.states"), "activeModelState"), "Loaded");
    /* the same inputs a second later: equal (transition times kept), cold start kept */
    in.old = st;
    in.cold = NULL;
    in.now_us += 1000000;
    cr_assert(corral_val_equal(corral__isvc_status(&A, &in), st));
}

Test(isvcctl, status_while_the_first_revision_waits_for_gpus)
{
    corral__isvc_rev_t r[] = {R1};
    corral__isvc_traffic_t t;
    traffic(r, 1, NULL, NULL, NULL, -1, &t);
    corral__isvc_status_in_t in = {.ns = "ml",
                                   .name = "s",
                                   .ingress_domain = "example.com",
                                   .router_url = "http://r",
                                   .tr = &t,
                                   .waiting = "replica s-predictor-00001-x pending: PodScheduled "
                                              "False (Unschedulable): 0/1 nodes have 1 free GPU",
                                   .now_us = 1};
    corral_val_t *st = corral__isvc_status(&A, &in);
    cr_assert_str_eq(cond(st, "Ready", "status"), "Unknown");
    cr_assert_str_eq(cond(st, "Ready", "reason"), "RevisionMissing");
    cr_assert(strstr(cond(st, "Ready", "message"), "Unschedulable"));
    cr_assert_str_eq(cond(st, "IngressReady", "status"), "False");
    cr_assert_str_eq(cond(st, "IngressReady", "reason"), "Predictor ingress not created");
    cr_assert_str_eq(cond(st, "RoutesReady", "status"), "Unknown");
    const corral_val_t *tr = corral_val_dig(st, "components.predictor.traffic");
    cr_assert_eq(tr->n, 1, "the router must know where to queue");
    cr_assert_eq(corral_val_get(tr->items[0], "percent")->u.i, 100);
    cr_assert_str_eq(corral_val_get_str(corral_val_get(st, "modelStatus"), "transitionStatus"),
                     "InProgress");
    cr_assert_str_eq(
        corral_val_get_str(corral_val_dig(st, "modelStatus.states"), "activeModelState"),
        "Pending");
    in.latest_failed = true;
    st = corral__isvc_status(&A, &in);
    cr_assert_str_eq(corral_val_get_str(corral_val_get(st, "modelStatus"), "transitionStatus"),
                     "BlockedByFailedLoad");
    cr_assert_str_eq(
        corral_val_get_str(corral_val_dig(st, "modelStatus.lastFailureInfo"), "reason"),
        "ModelLoadFailed");
    cr_assert_str_eq(cond(st, "Ready", "status"), "False");
    cr_assert_str_eq(cond(st, "Ready", "reason"), "RevisionFailed");
}

Test(isvcctl, status_of_a_predictor_without_runtime)
{
    corral__isvc_status_in_t in = {.ns = "ml",
                                   .name = "s",
                                   .ingress_domain = "example.com",
                                   .router_url = "http://r",
                                   .failure = "no runtime found to support predictor",
                                   .failure_reason = "NoSupportingRuntime",
                                   .now_us = 1};
    corral_val_t *st = corral__isvc_status(&A, &in);
    cr_assert_str_eq(cond(st, "Ready", "status"), "False");
    cr_assert_str_eq(cond(st, "Ready", "reason"), "PredictorSpecInvalid");
    cr_assert_str_eq(corral_val_get_str(corral_val_get(st, "modelStatus"), "transitionStatus"),
                     "InvalidSpec");
    cr_assert_str_eq(
        corral_val_get_str(corral_val_dig(st, "modelStatus.lastFailureInfo"), "reason"),
        "NoSupportingRuntime");
    cr_assert_eq(corral_val_dig(st, "components.predictor.traffic")->n, 0);
}
