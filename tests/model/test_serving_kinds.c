/* KServe's serving.kserve.io/v1alpha1 kinds (ServingRuntime,
 * ClusterServingRuntime, LocalModelCache, LocalModelNodeGroup,
 * LocalModelNode) and apps/v1 ControllerRevision: registry entries, decoding,
 * every validation rule with its field path, node group membership and
 * KServe's storage URI match. */
#include "model_test.h"

TestSuite(serving_kinds);

#define SR "apiVersion: serving.kserve.io/v1alpha1\n"

Test(serving_kinds, registry)
{
    const corral_kind_info_t *k = corral_kind_find("serving.kserve.io/v1alpha1", "ServingRuntime");
    cr_assert_not_null(k);
    cr_assert(k->namespaced);
    cr_assert_str_eq(k->plural, "servingruntimes");
    k = corral_kind_find_resource("clusterservingruntimes");
    cr_assert_not_null(k);
    cr_assert_not(k->namespaced);
    const char *cluster[] = {"localmodelcache", "localmodelnodegroups", "LocalModelNode"};
    for (size_t i = 0; i < 3; i++) {
        k = corral_kind_find_resource(cluster[i]);
        cr_assert_not_null(k, "%s", cluster[i]);
        cr_assert_not(k->namespaced, "%s is cluster-scoped upstream", cluster[i]);
        cr_assert_str_eq(k->short_names, "");
    }
    k = corral_kind_find_resource("controllerrevisions.apps");
    cr_assert_not_null(k);
    cr_assert_str_eq(k->api_version, "apps/v1");
    cr_assert(k->namespaced);
}

Test(serving_kinds, runtime_decodes)
{
    mt_t t;
    int rc = mt_decode(&t, SR "kind: ServingRuntime\n"
                              "metadata: {name: vllm, namespace: ml}\n"
                              "spec:\n"
                              "  supportedModelFormats:\n"
                              "  - {name: huggingface, version: \"1\", autoSelect: true, "
                              "priority: 2}\n"
                              "  - {name: vllm}\n"
                              "  protocolVersions: [v2, v1]\n"
                              "  multiModel: false\n"
                              "  disabled: true\n"
                              "  containers:\n"
                              "  - name: kserve-container\n"
                              "    image: vllm/vllm-openai\n"
                              "    args: [--port=8080]\n"
                              "    resources: {limits: {nvidia.com/gpu: 1}}\n"
                              "  nodeSelector: {gpu: a100}\n"
                              "  tolerations: [{key: gpu, operator: Exists}]\n"
                              "  labels: {team: ml}\n"
                              "  annotations: {a: b}\n"
                              "  schedulerName: corral\n"
                              "  volumes: [{name: shm, emptyDir: {medium: Memory}}]\n"
                              "  builtInAdapter: {serverType: triton}\n");
    cr_assert_eq(rc, 0, "%s", mt_diags(&t));
    cr_assert_eq(t.diag.n, 0, "%s", mt_diags(&t));
    const corral_serving_runtime_t *r = t.obj->u.runtime;
    cr_assert_str_eq(t.obj->meta.namespace, "ml");
    cr_assert_eq(r->nformats, 2);
    cr_assert_str_eq(r->formats[0].name, "huggingface");
    cr_assert_str_eq(r->formats[0].version, "1");
    cr_assert(r->formats[0].auto_select);
    cr_assert(r->formats[0].priority.set);
    cr_assert_eq(r->formats[0].priority.v, 2);
    cr_assert_not(r->formats[1].auto_select);
    cr_assert_null(r->formats[1].version);
    cr_assert_not(r->formats[1].priority.set);
    cr_assert(r->disabled);
    cr_assert_not(r->multi_model);
    cr_assert_eq(r->protocol_versions.n, 2);
    cr_assert_eq(r->ncontainers, 1);
    cr_assert_str_eq(r->containers[0].image, "vllm/vllm-openai");
    cr_assert_str_eq(corral_strmap_get(&r->node_selector, "gpu"), "a100");
    cr_assert_eq(r->tolerations.n, 1);
    cr_assert_str_eq(corral_strmap_get(&r->labels, "team"), "ml");
    cr_assert_str_eq(r->scheduler_name, "corral");
    mt_fini(&t);

    rc = mt_decode(&t, SR "kind: ClusterServingRuntime\n"
                          "metadata: {name: c, namespace: ignored}\n"
                          "spec: {containers: [{name: kserve-container, image: x}]}\n");
    cr_assert_eq(rc, 0, "%s", mt_diags(&t));
    cr_assert_null(t.obj->meta.namespace);
    mt_assert_diag(&t, "cluster-scoped");
    mt_fini(&t);
}

Test(serving_kinds, runtime_errors)
{
    mt_t t;
    int rc = mt_decode(&t, SR "kind: ServingRuntime\n"
                              "metadata: {name: bad}\n"
                              "spec:\n"
                              "  supportedModelFormats:\n"
                              "  - {name: huggingface, autoSelect: true, priority: 0}\n"
                              "  - {autoSelect: yes please}\n"
                              "  protocolVersions: [v3]\n"
                              "  containers: []\n");
    cr_assert_eq(rc, CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:6:", "spec.supportedModelFormats[0].priority",
                   "Invalid value: 0: must be 1 or more");
    mt_assert_diag(&t, "spec.supportedModelFormats[1].name", "Required value");
    mt_assert_diag(&t, "spec.supportedModelFormats[1].autoSelect");
    mt_assert_diag(&t, "spec.protocolVersions[0]", "unsupported value \"v3\"");
    mt_assert_diag(&t, "spec.containers", "Required value", "first container serves");
    mt_fini(&t);

    /* one priority per auto-selected format; unique named containers */
    rc = mt_decode(&t, SR "kind: ServingRuntime\n"
                          "metadata: {name: two}\n"
                          "spec:\n"
                          "  supportedModelFormats:\n"
                          "  - {name: onnx, version: \"1\", autoSelect: true, priority: 1}\n"
                          "  - {name: onnx, version: \"2\", autoSelect: true, priority: 2}\n"
                          "  - {name: sklearn, autoSelect: false, priority: 1}\n"
                          "  - {name: sklearn, autoSelect: false, priority: 3}\n"
                          "  containers:\n"
                          "  - {name: a, image: x}\n"
                          "  - {name: a, image: y}\n"
                          "  - {image: z}\n"
                          "  - {name: Bad_Name, image: z}\n");
    cr_assert_eq(rc, CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:7:",
                   "different priorities assigned for the model format onnx "
                   "under the servingruntime two");
    cr_assert_null(strstr(mt_diags(&t), "format sklearn"), "%s", mt_diags(&t));
    mt_assert_diag(&t, "Duplicate value: container name \"a\"");
    mt_assert_diag(&t, "spec.containers[2].name", "Required value");
    mt_assert_diag(&t, "spec.containers[3].name", "Invalid value: \"Bad_Name\"");
    mt_fini(&t);

    rc = mt_decode(&t, SR "kind: ServingRuntime\nmetadata: {name: empty}\n");
    cr_assert_eq(rc, CORRAL_EINVAL);
    mt_assert_diag(&t, "spec", "Required value");
    mt_fini(&t);
}

Test(serving_kinds, local_model_cache)
{
    mt_t t;
    int rc = mt_decode(&t, SR "kind: LocalModelCache\n"
                              "metadata: {name: llama3}\n"
                              "spec:\n"
                              "  sourceModelUri: hf://meta-llama/Meta-Llama-3-8B\n"
                              "  modelSize: 16Gi\n"
                              "  nodeGroups: [gpus]\n"
                              "  serviceAccountName: puller\n"
                              "  storage: {key: k}\n"
                              "status:\n"
                              "  copies: {available: 1, total: 2}\n"
                              "  nodeStatus: {a: NodeDownloaded, b: NodeDownloading}\n"
                              "  inferenceServices: [{namespace: ml, name: llama}]\n");
    cr_assert_eq(rc, 0, "%s", mt_diags(&t));
    cr_assert_eq(t.diag.n, 0, "%s", mt_diags(&t));
    const corral_local_model_cache_t *c = t.obj->u.lmc;
    cr_assert_null(t.obj->meta.namespace);
    cr_assert_str_eq(c->source_model_uri, "hf://meta-llama/Meta-Llama-3-8B");
    int64_t size = 0;
    cr_assert_eq(corral_qty_value(&c->model_size, &size), 0);
    cr_assert_eq(size, INT64_C(16) << 30);
    cr_assert_eq(c->node_groups.n, 1);
    cr_assert_str_eq(c->node_groups.items[0], "gpus");
    cr_assert_eq(c->copies_available, 1);
    cr_assert_eq(c->copies_total, 2);
    cr_assert_str_eq(corral_strmap_get(&c->node_status, "b"), CORRAL_NODE_DOWNLOADING);
    mt_fini(&t);

    rc = mt_decode(&t, SR "kind: LocalModelCache\n"
                          "metadata: {name: bad}\n"
                          "spec:\n"
                          "  sourceModelUri: /models/x\n"
                          "  modelSize: lots\n"
                          "  nodeGroups: []\n"
                          "status:\n"
                          "  copies: {available: -1}\n"
                          "  nodeStatus: {a: Downloaded}\n");
    cr_assert_eq(rc, CORRAL_EINVAL);
    mt_assert_diag(&t, "spec.sourceModelUri", "file:///models/x");
    mt_assert_diag(&t, "spec.modelSize");
    mt_assert_diag(&t, "spec.nodeGroups", "at least 1");
    mt_assert_diag(&t, "status.copies.available", "0 or more");
    mt_assert_diag(&t, "status.nodeStatus.a", "unsupported value \"Downloaded\"", "NodeDownloaded");
    mt_fini(&t);

    rc = mt_decode(&t, SR "kind: LocalModelCache\nmetadata: {name: x}\nspec: {}\n");
    cr_assert_eq(rc, CORRAL_EINVAL);
    mt_assert_diag(&t, "spec.sourceModelUri", "Required value");
    mt_assert_diag(&t, "spec.modelSize", "Required value");
    mt_assert_diag(&t, "spec.nodeGroups", "Required value");
    mt_fini(&t);
}

static corral_strmap_t labels(corral_kv_t *e, size_t n)
{
    corral_strmap_t m = {e, n};
    return m;
}

Test(serving_kinds, node_group)
{
    mt_t t;
    int rc = mt_decode(&t, SR "kind: LocalModelNodeGroup\n"
                              "metadata: {name: gpus}\n"
                              "spec:\n"
                              "  storageLimit: 100Gi\n"
                              "  nodeSelector: {gpu: \"true\"}\n"
                              "  persistentVolumeSpec:\n"
                              "    capacity: {storage: 100Gi}\n"
                              "    accessModes: [ReadWriteOnce]\n"
                              "    local: {path: /var/lib/models}\n"
                              "    nodeAffinity:\n"
                              "      required:\n"
                              "        nodeSelectorTerms:\n"
                              "        - matchExpressions:\n"
                              "          - {key: zone, operator: In, values: [a, b]}\n"
                              "        - matchFields:\n"
                              "          - {key: metadata.name, operator: In, values: [n9]}\n"
                              "  persistentVolumeClaimSpec: {accessModes: [ReadWriteOnce]}\n");
    cr_assert_eq(rc, 0, "%s", mt_diags(&t));
    cr_assert_eq(t.diag.n, 0, "%s", mt_diags(&t));
    const corral_local_model_node_group_t *g = t.obj->u.lmng;
    cr_assert_str_eq(g->local_path, "/var/lib/models");
    cr_assert_eq(g->nnode_terms, 2);
    corral_kv_t in_a[] = {{"gpu", "true"}, {"zone", "a"}};
    corral_kv_t in_c[] = {{"gpu", "true"}, {"zone", "c"}};
    corral_kv_t no_gpu[] = {{"zone", "a"}};
    corral_strmap_t l = labels(in_a, 2);
    cr_assert(corral_model_node_group_selects(t.obj, "n1", &l));
    l = labels(in_c, 2);
    cr_assert_not(corral_model_node_group_selects(t.obj, "n1", &l));
    cr_assert(corral_model_node_group_selects(t.obj, "n9", &l), "matchFields on the name");
    l = labels(no_gpu, 1);
    cr_assert_not(corral_model_node_group_selects(t.obj, "n1", &l), "nodeSelector holds too");
    mt_fini(&t);

    /* neither selector: every node */
    rc = mt_decode(&t, SR "kind: LocalModelNodeGroup\nmetadata: {name: all}\n"
                          "spec: {storageLimit: 1Gi}\n");
    cr_assert_eq(rc, 0, "%s", mt_diags(&t));
    l = labels(NULL, 0);
    cr_assert(corral_model_node_group_selects(t.obj, "any", &l));
    mt_fini(&t);

    rc = mt_decode(&t, SR "kind: LocalModelNodeGroup\nmetadata: {name: bad}\n"
                          "spec:\n"
                          "  nodeSelector: {\"bad key!\": x}\n"
                          "  persistentVolumeSpec: {nodeAffinity: {required: {nodeSelectorTerms: "
                          "[]}}, lokal: {}}\n");
    cr_assert_eq(rc, CORRAL_EINVAL);
    mt_assert_diag(&t, "spec.storageLimit", "Required value");
    mt_assert_diag(&t, "invalid label key");
    mt_assert_diag(&t, "at least one node selector term");
    mt_assert_diag(&t, "lokal", "local");
    mt_fini(&t);
}

Test(serving_kinds, local_model_node)
{
    mt_t t;
    int rc = mt_decode(&t, SR "kind: LocalModelNode\n"
                              "metadata: {name: node-a}\n"
                              "spec:\n"
                              "  localModels:\n"
                              "  - {sourceModelUri: \"file:///m/llama\", modelName: llama, "
                              "nodeGroup: gpus}\n"
                              "status:\n"
                              "  modelStatus: {llama: ModelDownloaded, other: \"\"}\n");
    cr_assert_eq(rc, 0, "%s", mt_diags(&t));
    const corral_local_model_node_t *n = t.obj->u.lmn;
    cr_assert_eq(n->nmodels, 1);
    cr_assert_str_eq(n->models[0].model_name, "llama");
    cr_assert_str_eq(n->models[0].node_group, "gpus");
    cr_assert_str_eq(corral_strmap_get(&n->model_status, "llama"), CORRAL_MODEL_DOWNLOADED);
    mt_fini(&t);

    rc = mt_decode(&t, SR "kind: LocalModelNode\n"
                          "metadata: {name: node-a}\n"
                          "spec:\n"
                          "  localModels: [{nodeGroup: gpus}]\n"
                          "status: {modelStatus: {llama: NodeDownloaded}}\n");
    cr_assert_eq(rc, CORRAL_EINVAL);
    mt_assert_diag(&t, "spec.localModels[0].sourceModelUri", "Required value");
    mt_assert_diag(&t, "spec.localModels[0].modelName", "Required value");
    mt_assert_diag(&t, "status.modelStatus.llama", "ModelDownloaded");
    mt_fini(&t);

    rc = mt_decode(&t, SR "kind: LocalModelNode\nmetadata: {name: n}\nspec: {}\n");
    cr_assert_eq(rc, CORRAL_EINVAL);
    mt_assert_diag(&t, "spec.localModels", "Required value");
    mt_fini(&t);
}

Test(serving_kinds, controller_revision)
{
    mt_t t;
    int rc = mt_decode(&t, "apiVersion: apps/v1\n"
                           "kind: ControllerRevision\n"
                           "metadata: {name: s-predictor-00001}\n"
                           "revision: 3\n"
                           "data: {spec: {containers: [{name: c, image: i}]}}\n");
    cr_assert_eq(rc, 0, "%s", mt_diags(&t));
    cr_assert_eq(t.obj->u.crev->revision, 3);
    cr_assert_not_null(corral_val_dig(t.obj->u.crev->data, "spec.containers"));
    cr_assert_str_eq(t.obj->meta.namespace, "default");
    mt_fini(&t);

    rc = mt_decode(&t, "apiVersion: apps/v1\nkind: ControllerRevision\n"
                       "metadata: {name: r}\nrevision: -2\n");
    cr_assert_eq(rc, CORRAL_EINVAL);
    mt_assert_diag(&t, "revision", "Invalid value: -2");
    mt_assert_diag(&t, "data", "Required value");
    mt_fini(&t);
}

Test(serving_kinds, storage_uri_match)
{
    cr_assert(corral_storage_uri_match("s3://b/llama", "s3://b/llama"));
    cr_assert(corral_storage_uri_match("s3://b/llama/", "s3://b/llama"));
    cr_assert(corral_storage_uri_match("s3://b/llama", "s3://b/llama/"));
    cr_assert(corral_storage_uri_match("s3://b/llama", "s3://b/llama/8b"));
    cr_assert(corral_storage_uri_match("s3://b/llama/", "s3://b/llama/8b"));
    cr_assert_not(corral_storage_uri_match("s3://b/llama", "s3://b/llama3"));
    cr_assert_not(corral_storage_uri_match("s3://b/llama/8b", "s3://b/llama"));
    cr_assert_not(corral_storage_uri_match("s3://b/llama", NULL));
}
