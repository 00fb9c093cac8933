/* corral_isvc_resolve and corral_isvc_pick_runtime: an InferenceService's
 * predictor into its replicas' pod template by KServe's rules: custom
 * containers, a named runtime (namespace before cluster), auto-selection
 * (autoSelect, disabled, multi-model, protocol, version, priority, namespace
 * first, newest first), KServe's container merge, runtimeVersion, the
 * placeholders, pod fields, labels and annotations, and KServe's errors. */
#include <stdio.h>

#include "corral/yaml.h"
#include "model_test.h"

TestSuite(isvc_resolve);

static corral_arena_t A;

static void setup(void)
{
    corral_arena_init(&A);
}

static void teardown(void)
{
    corral_arena_fini(&A);
}

static corral_obj_t *dec(const char *yaml)
{
    corral_diag_t d;
    corral_diag_init(&d);
    corral_doc_t *docs;
    size_t n;
    cr_assert_eq(corral_yaml_parse(&A, yaml, strlen(yaml), "t.yaml", NULL, &d, &docs, &n), 0);
    corral_obj_t *o = NULL;
    int rc = corral_obj_decode(&A, docs[0].root, "t.yaml", &d, &o);
    corral_buf_t b;
    corral_buf_init(&b);
    for (size_t i = 0; i < d.n; i++)
        corral_diag_format(&d.items[i], &b);
    cr_assert_eq(rc, 0, "%s\n%s", yaml, corral_buf_str(&b));
    corral_buf_fini(&b);
    corral_diag_fini(&d);
    return o;
}

/* A runtime: kind (ServingRuntime or ClusterServingRuntime), name, then the
 * spec's lines. */
static corral_obj_t *runtime(const char *kind, const char *name, const char *ns, const char *spec)
{
    char buf[4096];
    snprintf(buf, sizeof(buf),
             "apiVersion: serving.kserve.io/v1alpha1\nkind: %s\n"
             "metadata: {name: %s, namespace: %s}\nspec:\n%s",
             kind, name, ns, spec);
    return dec(buf);
}

/* A simple runtime of one format. */
static corral_obj_t *simple(const char *kind, const char *name, const char *format_line)
{
    char spec[1024];
    snprintf(spec, sizeof(spec),
             "  supportedModelFormats: [%s]\n"
             "  containers: [{name: kserve-container, image: %s}]\n",
             format_line, name);
    return runtime(kind, name, "ml", spec);
}

static corral_obj_t *isvc_model(const char *model_lines)
{
    char buf[4096];
    snprintf(buf, sizeof(buf),
             "apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\n"
             "metadata: {name: llama, namespace: ml}\n"
             "spec:\n  predictor:\n    model:\n%s",
             model_lines);
    return dec(buf);
}

static const char *image_of(const corral_val_t *tmpl)
{
    const corral_val_t *cs = corral_val_dig(tmpl, "spec.containers");
    cr_assert(cs && cs->n > 0);
    return corral_val_get_str(cs->items[0], "image");
}

static const char *pick_name(const corral_obj_t *isvc, corral_obj_t **rts, size_t n, int *rc,
                             char *err, size_t errlen)
{
    const corral_obj_t *out = NULL;
    *rc = corral_isvc_pick_runtime(isvc, (const corral_obj_t *const *)rts, n, &out, err, errlen);
    return out ? out->meta.name : NULL;
}

static const char *json(const corral_val_t *v)
{
    static char out[16384];
    corral_buf_t b;
    corral_buf_init(&b);
    corral_val_to_json(v, &b, false);
    snprintf(out, sizeof(out), "%s", corral_buf_str(&b));
    corral_buf_fini(&b);
    return out;
}

Test(isvc_resolve, custom_containers_as_written, .init = setup, .fini = teardown)
{
    corral_obj_t *s = dec("apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\n"
                          "metadata:\n"
                          "  name: echo\n"
                          "  namespace: ml\n"
                          "  labels: {team: a}\n"
                          "  annotations:\n"
                          "    note: kept\n"
                          "    kubectl.kubernetes.io/last-applied-configuration: '{}'\n"
                          "spec:\n"
                          "  predictor:\n"
                          "    minReplicas: 0\n"
                          "    labels: {team: b, tier: gpu}\n"
                          "    annotations: {scheduling.volcano.sh/queue-name: q}\n"
                          "    serviceAccountName: runner\n"
                          "    priorityClassName: high\n"
                          "    nodeSelector: {gpu: a100}\n"
                          "    tolerations: [{key: gpu, operator: Exists}]\n"
                          "    volumes: [{name: shm, emptyDir: {}}]\n"
                          "    containers:\n"
                          "    - name: server\n"
                          "      image: corral\n"
                          "      command: [corral, standin-llm]\n"
                          "      env: [{name: INFERENCE_SERVICE_NAME, value: stale}]\n"
                          "      ports: [{containerPort: 8000}]\n"
                          "    - {name: side, image: busybox}\n");
    corral_val_t *t = NULL;
    char err[512] = "";
    cr_assert_eq(corral_isvc_resolve(&A, s, NULL, 0, &t, err, sizeof(err)), 0, "%s", err);
    const char *j = json(t);
    cr_assert_str_eq(corral_val_get_str(corral_val_dig(t, "metadata.labels"), "team"), "b", "%s",
                     j);
    cr_assert_str_eq(corral_val_get_str(corral_val_dig(t, "metadata.labels"), "tier"), "gpu");
    cr_assert_str_eq(corral_val_get_str(corral_val_dig(t, "metadata.labels"),
                                        "serving.kserve.io/inferenceservice"),
                     "echo");
    cr_assert_str_eq(corral_val_get_str(corral_val_dig(t, "metadata.labels"), "component"),
                     "predictor");
    const corral_val_t *ann = corral_val_dig(t, "metadata.annotations");
    cr_assert_str_eq(corral_val_get_str(ann, "note"), "kept");
    cr_assert_str_eq(corral_val_get_str(ann, "scheduling.volcano.sh/queue-name"), "q");
    cr_assert_null(corral_val_get(ann, "kubectl.kubernetes.io/last-applied-configuration"));
    const corral_val_t *spec = corral_val_get(t, "spec");
    cr_assert_str_eq(corral_val_get_str(spec, "serviceAccountName"), "runner");
    cr_assert_str_eq(corral_val_get_str(spec, "priorityClassName"), "high");
    cr_assert_str_eq(corral_val_get_str(corral_val_get(spec, "nodeSelector"), "gpu"), "a100");
    cr_assert_null(corral_val_get(spec, "minReplicas"), "%s", j);
    cr_assert_null(corral_val_get(spec, "labels"), "%s", j);
    const corral_val_t *cs = corral_val_get(spec, "containers");
    cr_assert_eq(cs->n, 2);
    cr_assert_str_eq(corral_val_get_str(cs->items[0], "name"), "server");
    const corral_val_t *env = corral_val_get(cs->items[0], "env");
    cr_assert_eq(env->n, 1, "%s", j);
    cr_assert_str_eq(corral_val_get_str(env->items[0], "value"), "echo");
    cr_assert_str_eq(corral_val_get_str(corral_val_dig(cs->items[1], "env")->items[0], "name"),
                     "INFERENCE_SERVICE_NAME");
    /* the service is untouched */
    cr_assert_str_eq(
        corral_val_get_str(
            corral_val_dig(s->raw, "spec.predictor.containers")->items[0]->pairs[3].val->items[0],
            "value"),
        "stale");
}

Test(isvc_resolve, model_merged_into_named_runtime, .init = setup, .fini = teardown)
{
    corral_obj_t *rts[3];
    rts[0] = runtime("ServingRuntime", "vllm", "ml",
                     "  supportedModelFormats: [{name: huggingface}]\n"
                     "  labels: {runtime: vllm, team: rt}\n"
                     "  annotations: {rt-note: x}\n"
                     "  nodeSelector: {gpu: a100, zone: a}\n"
                     "  tolerations: [{key: rt, operator: Exists}]\n"
                     "  volumes: [{name: shm, emptyDir: {medium: Memory}}, {name: cache, "
                     "emptyDir: {}}]\n"
                     "  schedulerName: rt-sched\n"
                     "  hostIPC: true\n"
                     "  containers:\n"
                     "  - name: sidecar\n"
                     "    image: busybox\n"
                     "  - name: kserve-container\n"
                     "    image: vllm/vllm-openai:v0.5\n"
                     "    command: [python3, -m, vllm.entrypoints.openai.api_server]\n"
                     "    args: [\"--model={{.Name}}\", \"--ns={{ .Namespace }}\", "
                     "\"--team={{.Labels.team}}\", \"--q={{index .Annotations \\\"a/b\\\"}}\", "
                     "\"--none={{.Labels.missing}}\"]\n"
                     "    env: [{name: A, value: rt}, {name: B, value: rt}]\n"
                     "    ports: [{containerPort: 8080, protocol: TCP}]\n"
                     "    resources:\n"
                     "      requests: {cpu: \"1\", memory: 2Gi}\n"
                     "      limits: {memory: 4Gi}\n");
    /* the same name cluster-wide and in another namespace: the namespace's wins */
    rts[1] = runtime("ClusterServingRuntime", "vllm", "",
                     "  supportedModelFormats: [{name: huggingface}]\n"
                     "  containers: [{name: kserve-container, image: cluster}]\n");
    rts[2] = runtime("ServingRuntime", "vllm", "other",
                     "  supportedModelFormats: [{name: huggingface}]\n"
                     "  containers: [{name: kserve-container, image: other}]\n");
    corral_obj_t *s = dec("apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\n"
                          "metadata:\n"
                          "  name: llama\n"
                          "  namespace: ml\n"
                          "  labels: {team: svc}\n"
                          "  annotations: {a/b: queue}\n"
                          "spec:\n"
                          "  predictor:\n"
                          "    labels: {team: pred}\n"
                          "    nodeSelector: {zone: b}\n"
                          "    tolerations: [{key: pred, operator: Exists}]\n"
                          "    volumes: [{name: cache, hostPath: {path: /c}}]\n"
                          "    serviceAccountName: runner\n"
                          "    containers: [{name: logger, image: fluent}]\n"
                          "    model:\n"
                          "      modelFormat: {name: huggingface}\n"
                          "      runtime: vllm\n"
                          "      runtimeVersion: v0.6.1\n"
                          "      storageUri: hf://meta-llama/Meta-Llama-3-8B\n"
                          "      args: [--max-model-len=4096]\n"
                          "      env: [{name: B, value: model}, {name: C, value: model}]\n"
                          "      ports: [{containerPort: 8080, name: http1}]\n"
                          "      resources:\n"
                          "        requests: {nvidia.com/gpu: 1, memory: 16Gi}\n"
                          "        limits: {nvidia.com/gpu: 1}\n");
    corral_val_t *t = NULL;
    char err[512] = "";
    int rc = corral_isvc_resolve(&A, s, (const corral_obj_t *const *)rts, 3, &t, err, sizeof(err));
    cr_assert_eq(rc, 0, "%s", err);
    const char *j = json(t);
    const corral_val_t *spec = corral_val_get(t, "spec");
    const corral_val_t *cs = corral_val_get(spec, "containers");
    cr_assert_eq(cs->n, 3, "%s", j);
    const corral_val_t *c = cs->items[0];
    cr_assert_str_eq(corral_val_get_str(c, "name"), "kserve-container");
    cr_assert_str_eq(corral_val_get_str(c, "image"), "vllm/vllm-openai:v0.6.1");
    cr_assert_str_eq(corral_val_get_str(cs->items[1], "name"), "sidecar");
    cr_assert_str_eq(corral_val_get_str(cs->items[2], "name"), "logger");
    const corral_val_t *args = corral_val_get(c, "args");
    cr_assert_eq(args->n, 6, "%s", j);
    cr_assert_str_eq(args->items[0]->s, "--model=llama");
    cr_assert_str_eq(args->items[1]->s, "--ns=ml");
    cr_assert_str_eq(args->items[2]->s, "--team=svc", "placeholders read the service's metadata");
    cr_assert_str_eq(args->items[3]->s, "--q=queue");
    cr_assert_str_eq(args->items[4]->s, "--none=<no value>");
    cr_assert_str_eq(args->items[5]->s, "--max-model-len=4096");
    cr_assert_eq(corral_val_get(c, "command")->n, 3);
    const corral_val_t *env = corral_val_get(c, "env");
    cr_assert_eq(env->n, 4, "%s", j); /* A, B (model's), C, INFERENCE_SERVICE_NAME */
    cr_assert_str_eq(corral_val_get_str(env->items[0], "value"), "rt");
    cr_assert_str_eq(corral_val_get_str(env->items[1], "value"), "model");
    cr_assert_str_eq(corral_val_get_str(env->items[2], "name"), "C");
    const corral_val_t *ports = corral_val_get(c, "ports");
    cr_assert_eq(ports->n, 1);
    cr_assert_str_eq(corral_val_get_str(ports->items[0], "name"), "http1");
    cr_assert_str_eq(corral_val_get_str(ports->items[0], "protocol"), "TCP");
    const corral_val_t *req = corral_val_dig(c, "resources.requests");
    cr_assert_str_eq(corral_val_get_str(req, "cpu"), "1");
    cr_assert_str_eq(corral_val_get_str(req, "memory"), "16Gi");
    cr_assert_str_eq(corral_val_get(req, "nvidia.com/gpu")->s, "1");
    cr_assert_str_eq(corral_val_get_str(corral_val_dig(c, "resources.limits"), "memory"), "4Gi");
    cr_assert_null(corral_val_get(c, "storageUri"), "%s", j);
    cr_assert_null(corral_val_get(c, "modelFormat"));
    /* pod fields: maps merge, tolerations replaced, volumes by name */
    const corral_val_t *ns = corral_val_get(spec, "nodeSelector");
    cr_assert_str_eq(corral_val_get_str(ns, "gpu"), "a100");
    cr_assert_str_eq(corral_val_get_str(ns, "zone"), "b");
    const corral_val_t *tol = corral_val_get(spec, "tolerations");
    cr_assert_eq(tol->n, 1);
    cr_assert_str_eq(corral_val_get_str(tol->items[0], "key"), "pred");
    const corral_val_t *vols = corral_val_get(spec, "volumes");
    cr_assert_eq(vols->n, 2, "%s", j);
    cr_assert_not_null(corral_val_get(vols->items[1], "hostPath"), "%s", j);
    cr_assert_str_eq(corral_val_get_str(spec, "schedulerName"), "rt-sched");
    cr_assert_str_eq(corral_val_get_str(spec, "serviceAccountName"), "runner");
    cr_assert_null(corral_val_get(spec, "hostIPC"), "KServe's MergePodSpec drops it");
    const corral_val_t *labels = corral_val_dig(t, "metadata.labels");
    cr_assert_str_eq(corral_val_get_str(labels, "runtime"), "vllm");
    cr_assert_str_eq(corral_val_get_str(labels, "team"), "pred");
    cr_assert_str_eq(corral_val_get_str(corral_val_dig(t, "metadata.annotations"), "rt-note"), "x");
    /* the runtime is untouched */
    cr_assert_eq(corral_val_dig(rts[0]->raw, "spec.containers")->items[1]->n, 7);
    const char *name;
    const corral_obj_t *got = NULL;
    cr_assert_eq(
        corral_isvc_pick_runtime(s, (const corral_obj_t *const *)rts, 3, &got, err, sizeof(err)),
        0);
    name = got->info->name;
    cr_assert_str_eq(name, "ServingRuntime");
    /* without the namespace's, the cluster runtime */
    cr_assert_eq(
        corral_isvc_resolve(&A, s, (const corral_obj_t *const *)rts + 1, 2, &t, err, sizeof(err)),
        0, "%s", err);
    cr_assert_str_eq(image_of(t), "cluster:v0.6.1");
}

Test(isvc_resolve, named_runtime_errors, .init = setup, .fini = teardown)
{
    corral_obj_t *rts[2];
    rts[0] = runtime("ServingRuntime", "off", "ml",
                     "  disabled: true\n"
                     "  supportedModelFormats: [{name: huggingface}]\n"
                     "  containers: [{name: kserve-container, image: x}]\n");
    rts[1] = runtime("ClusterServingRuntime", "v2only", "",
                     "  protocolVersions: [v2]\n"
                     "  supportedModelFormats: [{name: huggingface, version: \"1\"}]\n"
                     "  containers: [{name: kserve-container, image: x}]\n");
    char err[512];
    int rc;
    corral_obj_t *s = isvc_model("      modelFormat: {name: huggingface}\n      runtime: nope\n");
    cr_assert_null(pick_name(s, rts, 2, &rc, err, sizeof(err)));
    cr_assert_eq(rc, CORRAL_ENOENT);
    cr_assert_str_eq(err, "No ServingRuntimes or ClusterServingRuntimes with the name: nope");
    s = isvc_model("      modelFormat: {name: huggingface}\n      runtime: \"off\"\n");
    cr_assert_null(pick_name(s, rts, 2, &rc, err, sizeof(err)));
    cr_assert_eq(rc, CORRAL_EINVAL);
    cr_assert_str_eq(err, "specified runtime off is disabled");
    s = isvc_model("      modelFormat: {name: huggingface}\n      runtime: v2only\n"
                   "      protocolVersion: v1\n");
    cr_assert_null(pick_name(s, rts, 2, &rc, err, sizeof(err)));
    cr_assert_str_eq(err, "specified runtime v2only does not support specified protocol version");
    s = isvc_model("      modelFormat: {name: huggingface, version: \"2\"}\n"
                   "      runtime: v2only\n");
    cr_assert_null(pick_name(s, rts, 2, &rc, err, sizeof(err)));
    cr_assert_str_eq(err, "specified runtime v2only does not support specified framework/version");
    /* a named runtime needs no autoSelect, and the unset protocol is not checked */
    s = isvc_model("      modelFormat: {name: huggingface, version: \"1\"}\n"
                   "      runtime: v2only\n");
    cr_assert_str_eq(pick_name(s, rts, 2, &rc, err, sizeof(err)), "v2only");
    cr_assert_eq(rc, 0);
}

Test(isvc_resolve, auto_selection, .init = setup, .fini = teardown)
{
    char err[512];
    int rc;
    corral_obj_t *rts[9];
    rts[0] = simple("ClusterServingRuntime", "c-high", "{name: hf, autoSelect: true, priority: 9}");
    rts[1] = simple("ServingRuntime", "ns-low", "{name: hf, autoSelect: true, priority: 1}");
    rts[2] = simple("ServingRuntime", "ns-mid", "{name: hf, autoSelect: true, priority: 5}");
    rts[3] = simple("ServingRuntime", "ns-manual", "{name: hf, priority: 8}");
    rts[4] = runtime("ServingRuntime", "ns-off", "ml",
                     "  disabled: true\n"
                     "  supportedModelFormats: [{name: hf, autoSelect: true, priority: 10}]\n"
                     "  containers: [{name: kserve-container, image: x}]\n");
    rts[5] = runtime("ServingRuntime", "ns-mm", "ml",
                     "  multiModel: true\n"
                     "  supportedModelFormats: [{name: hf, autoSelect: true, priority: 10}]\n"
                     "  containers: [{name: kserve-container, image: x}]\n");
    rts[6] = runtime("ServingRuntime", "ns-v2", "ml",
                     "  protocolVersions: [v2]\n"
                     "  supportedModelFormats: [{name: hf, autoSelect: true, priority: 10}]\n"
                     "  containers: [{name: kserve-container, image: x}]\n");
    rts[7] = runtime("ServingRuntime", "elsewhere", "other",
                     "  supportedModelFormats: [{name: hf, autoSelect: true, priority: 10}]\n"
                     "  containers: [{name: kserve-container, image: x}]\n");
    rts[8] = runtime("ServingRuntime", "ns-workers", "ml",
                     "  workerSpec: {containers: [{name: worker, image: x}]}\n"
                     "  supportedModelFormats: [{name: hf, autoSelect: true, priority: 10}]\n"
                     "  containers: [{name: kserve-container, image: x}]\n");
    corral_obj_t *s = isvc_model("      modelFormat: {name: hf}\n");
    cr_assert_str_eq(pick_name(s, rts, 9, &rc, err, sizeof(err)), "ns-mid", "%s", err);
    /* protocol v2 asked: only ns-v2 of the namespace's speaks it (the others
     * list none, so they support any) and it has the highest priority */
    s = isvc_model("      modelFormat: {name: hf}\n      protocolVersion: v2\n");
    cr_assert_str_eq(pick_name(s, rts, 9, &rc, err, sizeof(err)), "ns-v2");
    /* namespace runtimes first: the cluster one only when none fits */
    cr_assert_str_eq(pick_name(s, rts, 1, &rc, err, sizeof(err)), "c-high");
    /* nothing fits */
    s = isvc_model("      modelFormat: {name: onnx, version: \"1\"}\n");
    cr_assert_null(pick_name(s, rts, 9, &rc, err, sizeof(err)));
    cr_assert_eq(rc, CORRAL_EINVAL);
    cr_assert(strstr(err, "no runtime found to support predictor with model type: {onnx 1}"), "%s",
              err);
}

Test(isvc_resolve, auto_selection_versions_and_ties, .init = setup, .fini = teardown)
{
    char err[512];
    int rc;
    corral_obj_t *rts[4];
    rts[0] = simple("ServingRuntime", "b-v1", "{name: hf, version: \"1\", autoSelect: true}");
    rts[1] = simple("ServingRuntime", "a-v1", "{name: hf, version: \"1\", autoSelect: true}");
    rts[2] = simple("ServingRuntime", "c-any", "{name: hf, autoSelect: true}");
    rts[3] = simple("ServingRuntime", "d-v2", "{name: hf, version: \"2\", autoSelect: true}");
    corral_obj_t *s = isvc_model("      modelFormat: {name: hf, version: \"2\"}\n");
    cr_assert_str_eq(pick_name(s, rts, 4, &rc, err, sizeof(err)), "d-v2");
    s = isvc_model("      modelFormat: {name: hf, version: \"1\"}\n");
    cr_assert_str_eq(pick_name(s, rts, 4, &rc, err, sizeof(err)), "a-v1", "same age: by name");
    rts[0]->meta.creation_us = 2000000;
    rts[1]->meta.creation_us = 1000000;
    cr_assert_str_eq(pick_name(s, rts, 4, &rc, err, sizeof(err)), "b-v1", "newest first");
    /* no version asked: every runtime of the format */
    s = isvc_model("      modelFormat: {name: hf}\n");
    cr_assert_str_eq(pick_name(s, rts, 4, &rc, err, sizeof(err)), "b-v1");
}

Test(isvc_resolve, runtime_without_kserve_container_and_transformer, .init = setup,
     .fini = teardown)
{
    corral_obj_t *rt = runtime("ServingRuntime", "plain", "ml",
                               "  supportedModelFormats: [{name: hf, autoSelect: true}]\n"
                               "  containers:\n"
                               "  - {name: server, image: s, args: [a]}\n"
                               "  - {name: transformer-container, image: t, args: "
                               "[\"--for={{.Name}}\"]}\n"
                               "  - {name: extra, image: e}\n");
    corral_obj_t *s = dec("apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\n"
                          "metadata: {name: llama, namespace: ml}\n"
                          "spec:\n"
                          "  predictor:\n"
                          "    model: {modelFormat: {name: hf}, args: [b], image: mine}\n"
                          "    containers:\n"
                          "    - {name: transformer-container, image: t2, args: [--x]}\n");
    corral_val_t *t = NULL;
    char err[512] = "";
    cr_assert_eq(
        corral_isvc_resolve(&A, s, (const corral_obj_t *const *)&rt, 1, &t, err, sizeof(err)), 0,
        "%s", err);
    const char *j = json(t);
    const corral_val_t *cs = corral_val_dig(t, "spec.containers");
    cr_assert_eq(cs->n, 3, "%s", j);
    cr_assert_str_eq(corral_val_get_str(cs->items[0], "name"), "server");
    cr_assert_str_eq(corral_val_get_str(cs->items[0], "image"), "mine");
    cr_assert_eq(corral_val_get(cs->items[0], "args")->n, 2);
    cr_assert_str_eq(corral_val_get_str(cs->items[1], "name"), "transformer-container");
    const corral_val_t *targs = corral_val_get(cs->items[1], "args");
    cr_assert_eq(targs->n, 2, "%s", j);
    cr_assert_str_eq(targs->items[0]->s, "--for=llama");
    cr_assert_str_eq(corral_val_get_str(cs->items[2], "name"), "extra");
}

Test(isvc_resolve, placeholder_errors, .init = setup, .fini = teardown)
{
    corral_obj_t *rt = runtime("ServingRuntime", "tmpl", "ml",
                               "  supportedModelFormats: [{name: hf, autoSelect: true}]\n"
                               "  containers:\n"
                               "  - {name: kserve-container, image: s, args: [\"{{.Spec}}\"]}\n");
    corral_obj_t *s = isvc_model("      modelFormat: {name: hf}\n");
    corral_val_t *t = NULL;
    char err[512] = "";
    cr_assert_eq(
        corral_isvc_resolve(&A, s, (const corral_obj_t *const *)&rt, 1, &t, err, sizeof(err)),
        CORRAL_EINVAL);
    cr_assert_null(t);
    cr_assert(strstr(err, "failed to replace placeholders in serving runtime tmpl Container "
                          "kserve-container: {{.Spec}}"),
              "%s", err);
    /* no runtime at all */
    cr_assert_eq(corral_isvc_resolve(&A, s, NULL, 0, &t, err, sizeof(err)), CORRAL_EINVAL);
    cr_assert(strstr(err, "no runtime found"), "%s", err);
}
