/* Pods: containers, resources and the GPU rules, tolerations, affinity,
 * metadata naming rules, effective requests, and unknown-field round trips. */
#include "model_test.h"

#include "corral/buf.h"

static const char *gpu_pod = "apiVersion: v1\n"
                             "kind: Pod\n"
                             "metadata:\n"
                             "  name: trainer\n"
                             "  namespace: ml\n"
                             "  labels: {app: train}\n"
                             "spec:\n"
                             "  priorityClassName: high\n"
                             "  nodeSelector:\n"
                             "    nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3\n"
                             "  tolerations:\n"
                             "  - key: nvidia.com/gpu\n"
                             "    operator: Exists\n"
                             "    effect: NoSchedule\n"
                             "  affinity:\n"
                             "    nodeAffinity:\n"
                             "      requiredDuringSchedulingIgnoredDuringExecution:\n"
                             "        nodeSelectorTerms:\n"
                             "        - matchExpressions:\n"
                             "          - {key: zone, operator: In, values: [a, b]}\n"
                             "          - {key: gen, operator: Gt, values: ['3']}\n"
                             "      preferredDuringSchedulingIgnoredDuringExecution:\n"
                             "      - weight: 10\n"
                             "        preference:\n"
                             "          matchExpressions: [{key: fast, operator: Exists}]\n"
                             "  containers:\n"
                             "  - name: main\n"
                             "    image: pytorch/pytorch:2.3\n"
                             "    args: [--epochs, '10']\n"
                             "    env: [{name: A, value: b}]\n"
                             "    resources:\n"
                             "      requests: {cpu: 500m, memory: 16Gi}\n"
                             "      limits: {cpu: '2', memory: 16Gi, nvidia.com/gpu: 4}\n";

Test(pod, decodes_a_gpu_pod)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, gpu_pod), 0, "%s", mt_diags(&t));
    corral_pod_t *p = t.obj->u.pod;
    cr_assert_str_eq(t.obj->meta.namespace, "ml");
    cr_assert_str_eq(p->spec.scheduler_name, "default-scheduler");
    cr_assert_str_eq(p->spec.restart_policy, "Always");
    cr_assert_eq(p->spec.termination_grace_seconds, 30);
    cr_assert_eq(p->spec.tolerations.n, 1);
    cr_assert_str_eq(p->spec.tolerations.items[0].op, "Exists");
    cr_assert_eq(p->spec.node_affinity.nrequired, 1);
    cr_assert_eq(p->spec.node_affinity.required[0].exprs.n, 2);
    cr_assert_eq(p->spec.node_affinity.required[0].exprs.reqs[1].op, CORRAL_SEL_GT);
    cr_assert_eq(p->spec.node_affinity.npreferred, 1);
    cr_assert_eq(p->spec.containers[0].args.n, 2);
    corral_reslist_t req;
    corral_pod_requests(&t.arena, &p->spec, &req);
    int64_t v;
    cr_assert_eq(corral_qty_milli(corral_reslist_get(&req, "cpu"), &v), 0);
    cr_assert_eq(v, 500);
    cr_assert_eq(corral_qty_value(corral_reslist_get(&req, "nvidia.com/gpu"), &v), 0);
    cr_assert_eq(v, 4, "limits stand in for absent requests");
    cr_assert_eq(t.diag.n, 0, "%s", mt_diags(&t));
    mt_fini(&t);
}

Test(pod, requests_sum_containers_and_max_init)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
                               "  initContainers:\n"
                               "  - {name: i, image: x, resources: {requests: {cpu: '3'}}}\n"
                               "  containers:\n"
                               "  - {name: a, image: x, resources: {requests: {cpu: '1'}}}\n"
                               "  - {name: b, image: x, resources: {requests: {cpu: 1500m}}}\n"
                               "  overhead: {cpu: 100m}\n"),
                 0, "%s", mt_diags(&t));
    corral_reslist_t req;
    corral_pod_requests(&t.arena, &t.obj->u.pod->spec, &req);
    int64_t v;
    corral_qty_milli(corral_reslist_get(&req, "cpu"), &v);
    cr_assert_eq(v, 3100, "max(1+1.5, 3) + 0.1");
    mt_fini(&t);
}

Test(pod, gpu_rules)
{
    mt_t t;
    mt_decode(&t, "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
                  "  - name: a\n    image: x\n    resources:\n"
                  "      requests: {nvidia.com/gpu: 1}\n"
                  "      limits: {nvidia.com/gpu: 2, corral.dev/gpu-milli: 1500}\n");
    cr_assert_eq(t.rc, CORRAL_EINVAL);
    mt_assert_diag(&t, "t.yaml:9:", "requests.nvidia.com/gpu", "equal to the limit");
    mt_assert_diag(&t, "limits.corral.dev/gpu-milli", "1 to 999");
    mt_fini(&t);
    mt_decode(&t, "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
                  "  - name: a\n    image: x\n    resources:\n      limits:\n"
                  "        nvidia.com/gpu: 0.5\n");
    mt_assert_diag(&t, "t.yaml:10:25", "whole number", "corral.dev/gpu-milli: 500");
    mt_fini(&t);
    mt_decode(&t, "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
                  "  - name: a\n    image: x\n    resources:\n      limits: {memory: 16GB}\n"
                  "      requests: {cpu: -1}\n");
    mt_assert_diag(&t, "limits.memory", "`16Gi` or `16G`");
    mt_assert_diag(&t, "requests.cpu", "greater than or equal to 0");
    mt_fini(&t);
}

Test(pod, container_and_spec_requirements)
{
    mt_t t;
    mt_decode(&t, "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
                  "  - name: Bad_Name\n  restartPolicy: Sometimes\n");
    mt_assert_diag(&t, "spec.containers[0].name", "invalid container name");
    mt_assert_diag(&t, "spec.containers[0].image", "required");
    mt_assert_diag(&t, "spec.restartPolicy", "Always, OnFailure, Never");
    mt_fini(&t);
    mt_decode(&t, "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {}\n");
    mt_assert_diag(&t, "spec.containers", "at least one container");
    mt_fini(&t);
}

Test(pod, toleration_rules)
{
    mt_t t;
    mt_decode(&t, "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
                  "  containers: [{name: a, image: x}]\n  tolerations:\n"
                  "  - {key: k, operator: Exists, value: v}\n"
                  "  - {operator: Equal, value: v}\n"
                  "  - {key: k, effect: NoSchedul}\n"
                  "  - {key: k, effect: NoSchedule, tolerationSeconds: 5}\n");
    mt_assert_diag(&t, "tolerations[0].value", "must be empty");
    mt_assert_diag(&t, "tolerations[1].operator", "must be 'Exists' when `key` is empty");
    mt_assert_diag(&t, "tolerations[2].effect", "did you mean `NoSchedule`");
    mt_assert_diag(&t, "tolerations[3].effect", "NoExecute");
    mt_fini(&t);
}

Test(pod, affinity_rules)
{
    mt_t t;
    mt_decode(&t, "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
                  "  containers: [{name: a, image: x}]\n  affinity:\n    nodeAffinity:\n"
                  "      requiredDuringSchedulingIgnoredDuringExecution:\n"
                  "        nodeSelectorTerms:\n"
                  "        - matchExpressions:\n"
                  "          - {key: a, operator: In}\n"
                  "          - {key: b, operator: Exists, values: [x]}\n"
                  "          - {key: c, operator: Gt, values: [x]}\n"
                  "          matchFields: [{key: spec.x, operator: In, values: [n]}]\n"
                  "      preferredDuringSchedulingIgnoredDuringExecution:\n"
                  "      - {weight: 0, preference: {}}\n");
    mt_assert_diag(&t, "matchExpressions[0].values", "non-empty");
    mt_assert_diag(&t, "matchExpressions[1].values", "must be empty");
    mt_assert_diag(&t, "matchExpressions[2].values", "one integer");
    mt_assert_diag(&t, "matchFields", "only metadata.name");
    mt_assert_diag(&t, "weight", "1-100");
    mt_fini(&t);
}

Test(pod, metadata_rules)
{
    mt_t t;
    mt_decode(&t, "apiVersion: v1\nkind: Pod\nmetadata:\n  name: Train_Job\n  namespace: ML\n"
                  "  labels:\n    version: 1.0\n    bad key: x\n"
                  "  annotations: {ok/fine: x}\nspec:\n  containers: [{name: a, image: x}]\n");
    mt_assert_diag(&t, "t.yaml:4:9: metadata.name", "did you mean \"train-job\"");
    mt_assert_diag(&t, "metadata.namespace", "invalid namespace");
    mt_assert_diag(&t, "t.yaml:7:14: metadata.labels.version", "quote it");
    mt_assert_diag(&t, "metadata.labels.bad key", "invalid label key");
    mt_fini(&t);
    mt_decode(&t, "apiVersion: v1\nkind: Pod\nmetadata: {labels: {a: b}}\n"
                  "spec: {containers: [{name: a, image: x}]}\n");
    mt_assert_diag(&t, "metadata.name", "required");
    mt_fini(&t);
}

Test(pod, unknown_fields_warn_and_survive_round_trip)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
                               "  nodeSelecter: {a: b}\n  futureField: {x: 1}\n"
                               "  containers: [{name: a, image: x, volumeMounts: []}]\n"),
                 0, "warnings only: %s", mt_diags(&t));
    mt_assert_diag(&t, "warning", "spec.nodeSelecter", "did you mean `nodeSelector`");
    mt_assert_diag(&t, "warning", "spec.futureField", "unknown field");
    cr_assert_eq(t.diag.warnings, 2, "known upstream fields do not warn: %s", mt_diags(&t));
    corral_buf_t b;
    corral_buf_init(&b);
    corral_val_to_json(t.obj->raw, &b, false);
    cr_assert(strstr(corral_buf_str(&b), "\"futureField\":{\"x\":1}"), "%s", corral_buf_str(&b));
    corral_buf_fini(&b);
    mt_fini(&t);
}

Test(pod, list_item_without_space)
{
    mt_t t;
    mt_decode(&t, "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
                  "  - name: a\n    image: x\n  -name: b\n");
    mt_assert_diag(&t, "t.yaml:8:3", "a list item needs a space after '-'", "`- name:`");
    mt_fini(&t);
}

Test(pod, type_errors_have_hints)
{
    mt_t t;
    mt_decode(&t, "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
                  "  containers: [{name: a, image: x}]\n  priority: \"10\"\n"
                  "  hostNetwork: yes\n  terminationGracePeriodSeconds: 1.5\n");
    mt_assert_diag(&t, "spec.priority", "remove the quotes");
    mt_assert_diag(&t, "spec.hostNetwork", "write true or false");
    mt_assert_diag(&t, "spec.terminationGracePeriodSeconds", "whole number");
    mt_fini(&t);
}

Test(pod, not_an_object)
{
    mt_t t;
    mt_decode(&t, "- a\n- b\n");
    mt_assert_diag(&t, "t.yaml:1:1", "expected a Kubernetes object");
    mt_fini(&t);
    mt_decode(&t, "kind: Pod\nmetadata: {name: x}\n");
    mt_assert_diag(&t, "apiVersion", "`apiVersion: v1`");
    mt_fini(&t);
}
