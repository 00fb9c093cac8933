/* KServe InferenceService decoding: the reference LLM service in both metric
 * forms, canary, defaults, kept upstream fields, and every validation error
 * with its file:line and field path. */
#include <stdio.h>

#include "model_test.h"

#define ISVC_HEAD                                                                                  \
    "apiVersion: serving.kserve.io/v1beta1\n"                                                      \
    "kind: InferenceService\n"                                                                     \
    "metadata:\n"                                                                                  \
    "  name: s\n"                                                                                  \
    "spec:\n"                                                                                      \
    "  predictor:\n"

/* A valid model, to complete a predictor whose other fields are under test. */
#define MODEL                                                                                      \
    "    model:\n"                                                                                 \
    "      modelFormat: {name: huggingface}\n"                                                     \
    "      storageUri: hf://meta-llama/Meta-Llama-3-8B\n"

TestSuite(isvc);

/* Decode ISVC_HEAD followed by body: the body's first line is line 7. */
static int decode_pred(mt_t *t, const char *body)
{
    static char buf[8192];
    snprintf(buf, sizeof(buf), ISVC_HEAD "%s", body);
    return mt_decode(t, buf);
}

static int64_t gpus(const corral_reslist_t *l)
{
    int64_t n = -1;
    const corral_qty_t *q = corral_reslist_get(l, "nvidia.com/gpu");
    cr_assert_not_null(q, "no nvidia.com/gpu");
    cr_assert_eq(corral_qty_value(q, &n), 0);
    return n;
}

Test(isvc, reference_service_model_form)
{
    mt_t t;
    int rc = mt_decode(&t, "apiVersion: serving.kserve.io/v1beta1\n"
                           "kind: InferenceService\n"
                           "metadata:\n"
                           "  name: llama3-service\n"
                           "  namespace: ml\n"
                           "spec:\n"
                           "  predictor:\n"
                           "    minReplicas: 0\n"
                           "    maxReplicas: 5\n"
                           "    scaleMetric: gpu_utilization\n"
                           "    scaleTarget: 70\n"
                           "    model:\n"
                           "      modelFormat:\n"
                           "        name: huggingface\n"
                           "        version: \"1\"\n"
                           "      runtime: vllm-runtime\n"
                           "      protocolVersion: v2\n"
                           "      storageUri: hf://meta-llama/Meta-Llama-3-8B\n"
                           "      image: vllm/vllm-openai:latest\n"
                           "      args: [--model, meta-llama/Meta-Llama-3-8B]\n"
                           "      env: [{name: HF_HOME, value: /cache}]\n"
                           "      resources:\n"
                           "        requests: {cpu: \"4\", memory: 32Gi}\n"
                           "        limits:\n"
                           "          nvidia.com/gpu: 1\n");
    cr_assert_eq(rc, 0, "%s", mt_diags(&t));
    cr_assert_eq(t.diag.n, 0, "%s", mt_diags(&t));
    cr_assert_eq(t.obj->info->kind, CORRAL_KIND_ISVC);
    cr_assert_str_eq(t.obj->meta.name, "llama3-service");
    cr_assert_str_eq(t.obj->meta.namespace, "ml");
    const corral_isvc_component_t *p = &t.obj->u.isvc->predictor;
    cr_assert(p->present);
    cr_assert(p->min_replicas.set);
    cr_assert_eq(p->min_replicas.v, 0);
    cr_assert(p->max_replicas.set);
    cr_assert_eq(p->max_replicas.v, 5);
    cr_assert_str_eq(p->scale_metric, "gpu_utilization");
    cr_assert(p->scale_target.set);
    cr_assert_eq(p->scale_target.v, 70);
    cr_assert(p->has_model);
    cr_assert_str_eq(p->model_format, "huggingface");
    cr_assert_str_eq(p->model_format_version, "1");
    cr_assert_str_eq(p->runtime, "vllm-runtime");
    cr_assert_str_eq(p->protocol_version, "v2");
    cr_assert_str_eq(p->storage_uri, "hf://meta-llama/Meta-Llama-3-8B");
    cr_assert_str_eq(p->model.image, "vllm/vllm-openai:latest");
    cr_assert_eq(p->model.args.n, 2);
    cr_assert_str_eq(p->model.args.items[0], "--model");
    cr_assert_str_eq(p->model.args.items[1], "meta-llama/Meta-Llama-3-8B");
    cr_assert_eq(p->model.nenv, 1);
    cr_assert_str_eq(p->model.env[0].name, "HF_HOME");
    cr_assert_eq(gpus(&p->model.limits), 1);
    cr_assert_not_null(corral_reslist_get(&p->model.requests, "memory"));
    cr_assert_eq(p->ncontainers, 0);
    cr_assert_not(t.obj->u.isvc->transformer.present);
    mt_fini(&t);
}

Test(isvc, reference_service_custom_container_and_scale_metrics_list)
{
    mt_t t;
    int rc = mt_decode(&t, "apiVersion: serving.kserve.io/v1beta1\n"
                           "kind: InferenceService\n"
                           "metadata: {name: llama3-service}\n"
                           "spec:\n"
                           "  predictor:\n"
                           "    minReplicas: 0\n"
                           "    maxReplicas: 5\n"
                           "    scaleMetrics:\n"
                           "    - type: gpu_utilization\n"
                           "      targetValue: 70\n"
                           "    containers:\n"
                           "    - name: kserve-container\n"
                           "      image: vllm/vllm-openai:latest\n"
                           "      args: [--model, meta-llama/Meta-Llama-3-8B]\n"
                           "      resources:\n"
                           "        limits: {nvidia.com/gpu: 1}\n"
                           "status:\n"
                           "  url: http://llama3-service.default.example.com\n"
                           "  conditions: [{type: Ready, status: \"True\"}]\n");
    cr_assert_eq(rc, 0, "%s", mt_diags(&t));
    cr_assert_eq(t.diag.n, 0, "%s", mt_diags(&t));
    const corral_isvc_t *s = t.obj->u.isvc;
    const corral_isvc_component_t *p = &s->predictor;
    cr_assert_str_eq(p->scale_metric, "gpu_utilization");
    cr_assert(p->scale_target.set);
    cr_assert_eq(p->scale_target.v, 70);
    cr_assert_eq(p->min_replicas.v, 0);
    cr_assert_eq(p->max_replicas.v, 5);
    cr_assert_not(p->has_model);
    cr_assert_eq(p->ncontainers, 1);
    cr_assert_str_eq(p->containers[0].name, "kserve-container");
    cr_assert_str_eq(p->containers[0].image, "vllm/vllm-openai:latest");
    cr_assert_eq(p->containers[0].args.n, 2);
    cr_assert_eq(gpus(&p->containers[0].limits), 1);
    cr_assert_str_eq(s->url, "http://llama3-service.default.example.com");
    mt_fini(&t);
}

Test(isvc, defaults_and_kept_upstream_fields)
{
    mt_t t;
    int rc = decode_pred(&t, MODEL "      runtimeVersion: \"0.5\"\n"
                                   "      ports: [{containerPort: 8080}]\n"
                                   "    logger: {mode: all}\n"
                                   "    batcher: {maxBatchSize: 32}\n"
                                   "    labels: {team: ml}\n"
                                   "    annotations: {a: b}\n"
                                   "    volumes: [{name: cache, emptyDir: {}}]\n"
                                   "    imagePullSecrets: [{name: reg}]\n"
                                   "    autoScaling: {behavior: {scaleDown: {policies: []}}}\n"
                                   "    deploymentStrategy: {type: Recreate}\n"
                                   "    workerSpec: {tensorParallelSize: 2}\n"
                                   "    serviceAccountName: sa\n"
                                   "    priorityClassName: high\n"
                                   "    schedulerName: corral\n"
                                   "    nodeSelector: {gpu.product: H100}\n"
                                   "    tolerations: [{key: nvidia.com/gpu, operator: Exists}]\n"
                                   "    affinity:\n"
                                   "      nodeAffinity:\n"
                                   "        requiredDuringSchedulingIgnoredDuringExecution:\n"
                                   "          nodeSelectorTerms:\n"
                                   "          - matchExpressions:\n"
                                   "            - {key: zone, operator: In, values: [a]}\n"
                                   "  explainer: {art: {type: SquareAttack}}\n");
    cr_assert_eq(rc, 0, "%s", mt_diags(&t));
    cr_assert_eq(t.diag.n, 0, "%s", mt_diags(&t));
    const corral_isvc_component_t *p = &t.obj->u.isvc->predictor;
    cr_assert(p->min_replicas.set, "KServe's default minReplicas is filled in");
    cr_assert_eq(p->min_replicas.v, 1);
    cr_assert_not(p->max_replicas.set);
    cr_assert_null(p->scale_metric);
    cr_assert_not(p->scale_target.set);
    cr_assert_not(p->canary_traffic_percent.set);
    cr_assert_not(p->container_concurrency.set);
    cr_assert_not(p->timeout_seconds.set);
    cr_assert_null(p->protocol_version);
    cr_assert_str_eq(p->service_account_name, "sa");
    cr_assert_str_eq(p->priority_class_name, "high");
    cr_assert_str_eq(p->scheduler_name, "corral");
    cr_assert_eq(p->node_selector.n, 1);
    cr_assert_str_eq(p->node_selector.items[0].value, "H100");
    cr_assert_eq(p->tolerations.n, 1);
    cr_assert_str_eq(p->tolerations.items[0].op, "Exists");
    cr_assert_eq(p->node_affinity.nrequired, 1);
    cr_assert_null(t.obj->u.isvc->url);
    mt_fini(&t);
}

Test(isvc, canary_and_transformer)
{
    mt_t t;
    int rc = decode_pred(&t, "    canaryTrafficPercent: 10\n"
                             "    containerConcurrency: 4\n"
                             "    timeout: 60\n"
                             "    scaleMetric: concurrency\n"
                             "    scaleTarget: 8\n" MODEL "  transformer:\n"
                             "    minReplicas: 2\n"
                             "    containers:\n"
                             "    - {name: pre, image: example/pre:1}\n");
    cr_assert_eq(rc, 0, "%s", mt_diags(&t));
    cr_assert_eq(t.diag.n, 0, "%s", mt_diags(&t));
    const corral_isvc_t *s = t.obj->u.isvc;
    cr_assert(s->predictor.canary_traffic_percent.set);
    cr_assert_eq(s->predictor.canary_traffic_percent.v, 10);
    cr_assert_eq(s->predictor.container_concurrency.v, 4);
    cr_assert_eq(s->predictor.timeout_seconds.v, 60);
    cr_assert_str_eq(s->predictor.scale_metric, "concurrency");
    cr_assert_eq(s->predictor.scale_target.v, 8);
    cr_assert(s->transformer.present);
    cr_assert_eq(s->transformer.min_replicas.v, 2);
    cr_assert_eq(s->transformer.ncontainers, 1);
    cr_assert_str_eq(s->transformer.containers[0].image, "example/pre:1");
    mt_fini(&t);
}

Test(isvc, canary_out_of_range)
{
    mt_t t;
    cr_assert_eq(decode_pred(&t, "    canaryTrafficPercent: 150\n" MODEL), CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:7:", "spec.predictor.canaryTrafficPercent",
                   "percentage from 0 to 100", "150");
    mt_fini(&t);
    cr_assert_eq(decode_pred(&t, "    canaryTrafficPercent: -1\n" MODEL), CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:7:", "spec.predictor.canaryTrafficPercent", "got -1");
    mt_fini(&t);
}

Test(isvc, replica_bounds)
{
    mt_t t;
    cr_assert_eq(decode_pred(&t, "    minReplicas: -1\n" MODEL), CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:7:18:", "spec.predictor.minReplicas", "0 or more", "scale to zero");
    mt_fini(&t);
    cr_assert_eq(decode_pred(&t, "    maxReplicas: -2\n" MODEL), CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:7:", "spec.predictor.maxReplicas", "0 or more", "got -2");
    mt_fini(&t);
    cr_assert_eq(decode_pred(&t, "    minReplicas: 3\n"
                                 "    maxReplicas: 2\n" MODEL),
                 CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:7:", "spec.predictor.minReplicas",
                   "minReplicas (3) is more than maxReplicas (2)");
    mt_fini(&t);
    /* maxReplicas 0 means no upper limit. */
    cr_assert_eq(decode_pred(&t, "    minReplicas: 3\n"
                                 "    maxReplicas: 0\n" MODEL),
                 0, "%s", mt_diags(&t));
    mt_fini(&t);
    /* A quoted number is not an integer. */
    cr_assert_eq(decode_pred(&t, "    minReplicas: \"1\"\n" MODEL), CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:7:", "spec.predictor.minReplicas", "remove the quotes");
    mt_fini(&t);
}

Test(isvc, scale_metric_errors)
{
    mt_t t;
    cr_assert_eq(decode_pred(&t, "    scaleMetric: gpu-utilization\n" MODEL), CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:7:", "spec.predictor.scaleMetric", "did you mean `gpu_utilization`",
                   "cpu, memory, concurrency, rps, gpu_utilization");
    mt_fini(&t);
    cr_assert_eq(decode_pred(&t, "    scaleTarget: 0\n" MODEL), CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:7:", "spec.predictor.scaleTarget", "positive integer", "got 0");
    mt_fini(&t);
    cr_assert_eq(decode_pred(&t, "    scaleMetric: gpu_utilization\n"
                                 "    scaleTarget: 150\n" MODEL),
                 CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:8:", "spec.predictor.scaleTarget", "from 1 to 100", "150");
    mt_fini(&t);
}

Test(isvc, scale_metrics_list_errors)
{
    mt_t t;
    cr_assert_eq(decode_pred(&t, "    scaleMetrics:\n"
                                 "    - targetValue: 70\n" MODEL),
                 CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:8:", "spec.predictor.scaleMetrics[0].type", "required");
    mt_fini(&t);
    cr_assert_eq(decode_pred(&t, "    scaleMetrics:\n"
                                 "    - {type: gpu_utilisation, targetValue: 0}\n" MODEL),
                 CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:8:", "spec.predictor.scaleMetrics[0].type",
                   "did you mean `gpu_utilization`");
    mt_assert_diag(&t, "t.yaml:8:", "spec.predictor.scaleMetrics[0].targetValue",
                   "positive integer");
    mt_fini(&t);
    cr_assert_eq(decode_pred(&t, "    scaleMetrics:\n"
                                 "    - {type: gpu_utilization, targetValue: 101}\n" MODEL),
                 CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:8:", "spec.predictor.scaleMetrics[0].targetValue", "from 1 to 100");
    mt_fini(&t);
    cr_assert_eq(decode_pred(&t, "    scaleMetric: cpu\n"
                                 "    scaleMetrics: [{type: cpu, targetValue: 80}]\n" MODEL),
                 CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:8:", "spec.predictor.scaleMetrics", "not both");
    mt_fini(&t);
    cr_assert_eq(decode_pred(&t, "    scaleMetrics:\n"
                                 "    - {type: gpu_utilization, targetValue: 70}\n"
                                 "    - {type: rps, targetValue: 100}\n" MODEL),
                 0, "%s", mt_diags(&t));
    mt_assert_diag(&t, "t.yaml:9:", "warning:", "spec.predictor.scaleMetrics[1]", "first entry");
    cr_assert_str_eq(t.obj->u.isvc->predictor.scale_metric, "gpu_utilization");
    mt_fini(&t);
}

Test(isvc, concurrency_and_timeout)
{
    mt_t t;
    cr_assert_eq(decode_pred(&t, "    containerConcurrency: -1\n"
                                 "    timeout: -5\n" MODEL),
                 CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:7:", "spec.predictor.containerConcurrency", "0 (no limit) or more");
    mt_assert_diag(&t, "t.yaml:8:", "spec.predictor.timeout", "0 or more seconds", "-5");
    mt_fini(&t);
}

/* Decode a model with the given storageUri (on line 9). */
static int decode_uri(mt_t *t, const char *uri)
{
    static char body[512];
    snprintf(body, sizeof(body),
             "    model:\n"
             "      modelFormat: {name: sklearn}\n"
             "      storageUri: \"%s\"\n",
             uri);
    return decode_pred(t, body);
}

Test(isvc, storage_uri_schemes)
{
    static const char *const ok[] = {"gs://b/m",   "s3://b/m",          "pvc://claim/m",
                                     "file:///m",  "http://h/m.tar.gz", "https://h/m",
                                     "hf://org/m", "oci://reg/m:1"};
    mt_t t;
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(ok); i++) {
        cr_assert_eq(decode_uri(&t, ok[i]), 0, "%s: %s", ok[i], mt_diags(&t));
        cr_assert_str_eq(t.obj->u.isvc->predictor.storage_uri, ok[i]);
        mt_fini(&t);
    }
    cr_assert_eq(decode_uri(&t, "ftp://h/m"), CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:9:", "spec.predictor.model.storageUri",
                   "unsupported storage scheme in \"ftp://h/m\"", "gs://, s3://, pvc://");
    mt_fini(&t);
    cr_assert_eq(decode_uri(&t, "/mnt/models"), CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:9:", "spec.predictor.model.storageUri", "has no scheme",
                   "`file:///mnt/models`");
    mt_fini(&t);
    cr_assert_eq(decode_uri(&t, "S3://b/m"), CORRAL_EINVAL);
    mt_assert_diag(&t, "spec.predictor.model.storageUri", "lower case", "`s3://b/m`");
    mt_fini(&t);
    cr_assert_eq(decode_uri(&t, "gs://"), CORRAL_EINVAL);
    mt_assert_diag(&t, "spec.predictor.model.storageUri", "no bucket or path");
    mt_fini(&t);
    cr_assert_eq(decode_uri(&t, "models"), CORRAL_EINVAL);
    mt_assert_diag(&t, "spec.predictor.model.storageUri", "not a storage URI", "hf://, oci://");
    mt_fini(&t);
}

Test(isvc, model_errors)
{
    mt_t t;
    cr_assert_eq(decode_pred(&t, "    model:\n"
                                 "      storageUri: s3://b/m\n"
                                 "      protocolVersion: v3\n"),
                 CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:9:", "spec.predictor.model.protocolVersion", "\"v3\"",
                   "v1, v2, grpc-v1, grpc-v2");
    mt_assert_diag(&t, "t.yaml:8:", "spec.predictor.model.modelFormat", "required",
                   "modelFormat: {name:");
    mt_fini(&t);
    cr_assert_eq(decode_pred(&t, "    model:\n"
                                 "      modelFormat: {version: \"2\"}\n"),
                 CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:8:", "spec.predictor.model.modelFormat.name", "required");
    mt_fini(&t);
}

Test(isvc, typos_get_hints_from_one_table)
{
    mt_t t;
    cr_assert_eq(decode_pred(&t, "    minReplica: 1\n"
                                 "    model:\n"
                                 "      modelFormat: {name: sklearn}\n"
                                 "      storageUrl: s3://b/m\n"
                                 "      arg: [--x]\n"
                                 "      resources: {limits: {nvidia.com/gpu: 1}}\n"),
                 0, "%s", mt_diags(&t));
    mt_assert_diag(&t, "t.yaml:7:", "warning:", "spec.predictor.minReplica",
                   "did you mean `minReplicas`");
    mt_assert_diag(&t, "t.yaml:10:", "warning:", "spec.predictor.model.storageUrl",
                   "did you mean `storageUri`");
    mt_assert_diag(&t, "t.yaml:11:", "warning:", "spec.predictor.model.arg", "did you mean `args`");
    cr_assert_eq(t.diag.n, 3, "each unknown field once:\n%s", mt_diags(&t));
    cr_assert_eq(gpus(&t.obj->u.isvc->predictor.model.limits), 1);
    mt_fini(&t);
}

Test(isvc, predictor_required)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, "apiVersion: serving.kserve.io/v1beta1\n"
                               "kind: InferenceService\n"
                               "metadata: {name: s}\n"),
                 CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:1:", "spec: required", "spec.predictor");
    mt_fini(&t);
    cr_assert_eq(mt_decode(&t, "apiVersion: serving.kserve.io/v1beta1\n"
                               "kind: InferenceService\n"
                               "metadata: {name: s}\n"
                               "spec:\n"
                               "  transformer: {containers: [{image: x}]}\n"),
                 CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:5:", "spec.predictor: required");
    mt_fini(&t);
    cr_assert_eq(decode_pred(&t, "    minReplicas: 1\n"), CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:7:", "spec.predictor:", "`model`", "`containers`");
    mt_fini(&t);
}

Test(isvc, framework_shortcuts)
{
    mt_t t;
    cr_assert_eq(decode_pred(&t, "    sklearn: {storageUri: gs://b/m}\n"), 0, "%s", mt_diags(&t));
    mt_assert_diag(&t, "t.yaml:7:", "warning:", "spec.predictor.sklearn",
                   "`model: {modelFormat: {name: sklearn}");
    mt_fini(&t);
    cr_assert_eq(decode_pred(&t, MODEL "    triton: {storageUri: gs://b/m}\n"), CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:10:", "spec.predictor.triton:", "both `model` and `triton`");
    mt_fini(&t);
}

Test(isvc, gpu_resource_rules)
{
    mt_t t;
    cr_assert_eq(decode_pred(&t, MODEL "      resources:\n"
                                       "        limits: {nvidia.com/gpu: 0.5}\n"),
                 CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:11:", "spec.predictor.model.resources.limits.nvidia.com/gpu",
                   "whole number of GPUs", "corral.dev/gpu-milli: 500");
    mt_fini(&t);
    cr_assert_eq(decode_pred(&t,
                             "    containers:\n"
                             "    - image: x\n"
                             "      resources:\n"
                             "        requests: {nvidia.com/gpu: 1}\n"
                             "        limits: {nvidia.com/gpu: 2, corral.dev/gpu-milli: 1500}\n"),
                 CORRAL_EINVAL);
    mt_assert_diag(&t,
                   "t.yaml:10:", "spec.predictor.containers[0].resources.requests.nvidia.com/gpu",
                   "equal to the limit");
    mt_assert_diag(
        &t, "t.yaml:11:", "spec.predictor.containers[0].resources.limits.corral.dev/gpu-milli",
        "1 to 999");
    mt_fini(&t);
}

Test(isvc, container_and_transformer_errors)
{
    mt_t t;
    cr_assert_eq(decode_pred(&t, "    containers:\n"
                                 "    - name: c\n"
                                 "      args: [x]\n"),
                 CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:8:", "spec.predictor.containers[0].image", "required");
    mt_fini(&t);
    cr_assert_eq(decode_pred(&t, MODEL "  transformer:\n"
                                       "    minReplicas: 1\n"),
                 CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:11:", "spec.transformer.containers", "required");
    mt_fini(&t);
    cr_assert_eq(decode_pred(&t, MODEL "  transformer:\n"
                                       "    model: {modelFormat: {name: x}}\n"
                                       "    containers: [{image: x}]\n"),
                 0, "%s", mt_diags(&t));
    mt_assert_diag(&t, "t.yaml:11:", "warning:", "spec.transformer.model", "unknown field");
    mt_fini(&t);
}

Test(isvc, node_selector_and_tolerations_checked)
{
    mt_t t;
    cr_assert_eq(decode_pred(&t, MODEL "    nodeSelector: {\"bad key!\": x}\n"
                                       "    tolerations: [{operator: Equal, value: x}]\n"),
                 CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:10:", "spec.predictor.nodeSelector.bad key!", "invalid label key");
    mt_assert_diag(&t, "t.yaml:11:", "spec.predictor.tolerations[0].operator", "must be 'Exists'");
    mt_fini(&t);
}

/* --- autoScaling.metrics and Knative's annotations ------------------------------- */

Test(isvc, autoscaling_external_prometheus)
{
    mt_t t;
    int rc =
        decode_pred(&t, "    minReplicas: 0\n"
                        "    autoScaling:\n"
                        "      metrics:\n"
                        "      - type: External\n"
                        "        external:\n"
                        "          metric:\n"
                        "            backend: prometheus\n"
                        "            serverAddress: http://127.0.0.1:9090\n"
                        "            query: sum(vllm:num_requests_waiting)\n"
                        "          target: {type: AverageValue, averageValue: \"2.5\"}\n" MODEL);
    cr_assert_eq(rc, 0, "%s", mt_diags(&t));
    cr_assert_eq(t.diag.n, 0, "%s", mt_diags(&t));
    const corral_isvc_component_t *p = &t.obj->u.isvc->predictor;
    cr_assert_eq(p->nmetrics, 1);
    cr_assert_str_eq(p->metrics[0].type, "External");
    cr_assert_str_eq(p->metrics[0].backend, "prometheus");
    cr_assert_str_eq(p->metrics[0].server_address, "http://127.0.0.1:9090");
    cr_assert_str_eq(p->metrics[0].query, "sum(vllm:num_requests_waiting)");
    cr_assert_str_eq(p->metrics[0].target.type, "AverageValue");
    cr_assert(p->metrics[0].target.average_value.set);
    cr_assert_float_eq(p->metrics[0].target.average_value.v, 2.5, 1e-9);
    mt_fini(&t);
}

Test(isvc, autoscaling_podmetric_and_resource)
{
    mt_t t;
    int rc = decode_pred(&t, "    autoScaling:\n"
                             "      metrics:\n"
                             "      - type: PodMetric\n"
                             "        podmetric:\n"
                             "          metric:\n"
                             "            backend: opentelemetry\n"
                             "            metricNames: [vllm:num_requests_waiting, "
                             "vllm:num_requests_running]\n"
                             "          target: {type: Value, value: 4}\n"
                             "      - type: Resource\n"
                             "        resource: {name: cpu, target: {type: Utilization, "
                             "averageUtilization: 60}}\n" MODEL);
    cr_assert_eq(rc, 0, "%s", mt_diags(&t));
    mt_assert_diag(&t, "first entry of autoScaling.metrics only");
    const corral_isvc_component_t *p = &t.obj->u.isvc->predictor;
    cr_assert_eq(p->nmetrics, 2);
    cr_assert_str_eq(p->metrics[0].type, "PodMetric");
    cr_assert_eq(p->metrics[0].metric_names.n, 2);
    cr_assert_str_eq(p->metrics[0].metric_names.items[1], "vllm:num_requests_running");
    cr_assert_float_eq(p->metrics[0].target.value.v, 4, 1e-9);
    cr_assert_str_eq(p->metrics[1].resource, "cpu");
    cr_assert_eq(p->metrics[1].target.average_utilization.v, 60);
    mt_fini(&t);
    /* A PodMetric query that is a bare metric name stands for metricNames. */
    rc = decode_pred(&t, "    autoScaling:\n"
                         "      metrics:\n"
                         "      - type: PodMetric\n"
                         "        podmetric:\n"
                         "          metric: {query: \"vllm:num_requests_waiting\"}\n"
                         "          target: {averageValue: 3}\n" MODEL);
    cr_assert_eq(rc, 0, "%s", mt_diags(&t));
    p = &t.obj->u.isvc->predictor;
    cr_assert_eq(p->metrics[0].metric_names.n, 1);
    cr_assert_str_eq(p->metrics[0].target.type, "AverageValue");
    mt_fini(&t);
}

Test(isvc, autoscaling_errors)
{
    mt_t t;
    cr_assert_eq(decode_pred(&t, "    autoScaling:\n"
                                 "      metrics:\n"
                                 "      - type: External\n"
                                 "        external:\n"
                                 "          metric: {backend: graphite}\n"
                                 "          target: {type: Value}\n" MODEL),
                 CORRAL_EINVAL);
    mt_assert_diag(&t, "spec.predictor.autoScaling.metrics[0].external.metric.backend",
                   "Prometheus only");
    mt_assert_diag(&t, "external.metric.query", "required");
    mt_assert_diag(&t, "external.metric.serverAddress", "required");
    mt_assert_diag(&t, "target.value", "required with type Value");
    mt_fini(&t);
    cr_assert_eq(decode_pred(&t, "    autoScaling:\n"
                                 "      metrics:\n"
                                 "      - type: Resource\n"
                                 "        resource: {name: cpu, target: {type: Utilization, "
                                 "averageUtilization: 140}}\n"
                                 "      - type: PodMetric\n"
                                 "        podmetric: {metric: {query: \"sum(x)\"}, target: {value: "
                                 "\"-1\"}}\n"
                                 "      - {type: External}\n"
                                 "      - external: {}\n" MODEL),
                 CORRAL_EINVAL);
    mt_assert_diag(&t, "metrics[0].resource.target.averageUtilization", "1 to 100", "140");
    mt_assert_diag(&t, "metrics[1].podmetric.metric.metricNames", "bare metric name");
    mt_assert_diag(&t, "metrics[1].podmetric.target.value", "greater than 0");
    mt_assert_diag(&t, "metrics[2].external", "required for type External");
    mt_assert_diag(&t, "metrics[3].type", "required");
    mt_fini(&t);
}

Test(isvc, knative_annotations)
{
    mt_t t;
    int rc = mt_decode(&t, "apiVersion: serving.kserve.io/v1beta1\n"
                           "kind: InferenceService\n"
                           "metadata:\n"
                           "  name: s\n"
                           "  annotations:\n"
                           "    autoscaling.knative.dev/target: \"10\"\n"
                           "    autoscaling.knative.dev/metric: rps\n"
                           "    autoscaling.knative.dev/window: 2m\n"
                           "    autoscaling.knative.dev/panic-window-percentage: \"20\"\n"
                           "    autoscaling.knative.dev/panic-threshold-percentage: \"300\"\n"
                           "    autoscaling.knative.dev/scale-to-zero-pod-retention-period: 90s\n"
                           "    autoscaling.knative.dev/max-scale-up-rate: \"4\"\n"
                           "    autoscaling.knative.dev/max-scale-down-rate: \"1.5\"\n"
                           "    autoscaling.knative.dev/initial-scale: \"0\"\n"
                           "    autoscaling.knative.dev/target-utilization-percentage: \"85\"\n"
                           "spec:\n"
                           "  predictor:\n"
                           "    annotations:\n"
                           "      autoscaling.knative.dev/target: \"12.5\"\n" MODEL);
    cr_assert_eq(rc, 0, "%s", mt_diags(&t));
    cr_assert_eq(t.diag.n, 0, "%s", mt_diags(&t));
    const corral_isvc_knative_t *k = &t.obj->u.isvc->predictor.knative;
    cr_assert_float_eq(k->target.v, 12.5, 1e-9); /* the component's own wins */
    cr_assert_str_eq(k->metric, "rps");
    cr_assert_eq(k->window_ns.v, 120000000000LL);
    cr_assert_float_eq(k->panic_window_pct.v, 20, 1e-9);
    cr_assert_float_eq(k->panic_threshold_pct.v, 300, 1e-9);
    cr_assert_eq(k->retention_ns.v, 90000000000LL);
    cr_assert_float_eq(k->max_scale_up_rate.v, 4, 1e-9);
    cr_assert_float_eq(k->max_scale_down_rate.v, 1.5, 1e-9);
    cr_assert(k->initial_scale.set);
    cr_assert_eq(k->initial_scale.v, 0);
    cr_assert_float_eq(k->target_utilization.v, 85, 1e-9);
    mt_fini(&t);
    rc = mt_decode(&t, "apiVersion: serving.kserve.io/v1beta1\n"
                       "kind: InferenceService\n"
                       "metadata:\n"
                       "  name: s\n"
                       "  annotations:\n"
                       "    autoscaling.knative.dev/window: 2s\n"
                       "    autoscaling.knative.dev/panic-threshold-percentage: \"50\"\n"
                       "    autoscaling.knative.dev/target: lots\n"
                       "spec:\n"
                       "  predictor:\n" MODEL);
    cr_assert_eq(rc, CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:6:", "autoscaling.knative.dev/window", "6s");
    mt_assert_diag(&t, "panic-threshold-percentage", "110 to 1000");
    mt_assert_diag(&t, "autoscaling.knative.dev/target", "lots");
    mt_fini(&t);
}
