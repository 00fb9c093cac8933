/* Nodes (taints, allocatable, GPU topology matrix), Queues (defaults and the
 * guarantee <= deserved <= capability rule), and the small core kinds. */
#include "model_test.h"

Test(node, decodes_taints_and_topology)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, "apiVersion: v1\nkind: Node\nmetadata:\n  name: gpu-1\n"
                               "  labels: {nvidia.com/gpu.product: H100}\n"
                               "  annotations:\n"
                               "    corral.dev/gpu-topology: \"X,NV4,SYS,SYS;NV4,X,SYS,SYS;"
                               "SYS,SYS,X,NV4;SYS,SYS,NV4,X\"\n"
                               "spec:\n  taints: [{key: nvidia.com/gpu, value: present, "
                               "effect: NoSchedule}]\n"
                               "status:\n  capacity: {cpu: '64', memory: 512Gi, "
                               "nvidia.com/gpu: 4, pods: 110}\n"),
                 0, "%s", mt_diags(&t));
    corral_node_t *n = t.obj->u.node;
    cr_assert_eq(n->ntaints, 1);
    cr_assert_str_eq(n->taints[0].effect, "NoSchedule");
    cr_assert_eq(n->allocatable.n, 4, "allocatable falls back to capacity");
    cr_assert_null(t.obj->meta.namespace, "cluster-scoped");
    corral_gpu_topo_t topo;
    char why[200];
    cr_assert_eq(corral_gpu_topo_parse(&t.arena, "X NV12;NV12 X", &topo, why, sizeof(why)), 0);
    cr_assert_eq(topo.n, 2);
    cr_assert_eq(topo.link[1], CORRAL_LINK_NV + 12);
    mt_fini(&t);
}

Test(node, topology_errors)
{
    corral_arena_t a;
    corral_arena_init(&a);
    corral_gpu_topo_t topo;
    char why[200];
    cr_assert_neq(corral_gpu_topo_parse(&a, "X,NV4;NV4", &topo, why, sizeof(why)), 0);
    cr_assert_neq(corral_gpu_topo_parse(&a, "X,NV4;NV2,X", &topo, why, sizeof(why)), 0);
    cr_assert(strstr(why, "symmetric"), "%s", why);
    cr_assert_neq(corral_gpu_topo_parse(&a, "X,FOO;FOO,X", &topo, why, sizeof(why)), 0);
    cr_assert(strstr(why, "FOO"), "%s", why);
    cr_assert_neq(corral_gpu_topo_parse(&a, "NV1,X;X,NV1", &topo, why, sizeof(why)), 0);
    cr_assert_neq(corral_gpu_topo_parse(&a, "", &topo, why, sizeof(why)), 0);
    corral_arena_fini(&a);
    mt_t t;
    mt_decode(&t, "apiVersion: v1\nkind: Node\nmetadata:\n  name: n\n  annotations:\n"
                  "    corral.dev/gpu-topology: X,PIX;PIX,X\n"
                  "status: {capacity: {nvidia.com/gpu: 8}}\n");
    mt_assert_diag(&t, "t.yaml:6:30", "describes 2 GPUs but the node has nvidia.com/gpu: 8");
    mt_fini(&t);
}

Test(node, taint_rules)
{
    mt_t t;
    mt_decode(&t, "apiVersion: v1\nkind: Node\nmetadata: {name: n, namespace: x}\nspec:\n"
                  "  taints: [{value: v, effect: NoSchedule}, {key: k}, {key: k, effect: Nope}]\n");
    mt_assert_diag(&t, "warning", "cluster-scoped");
    mt_assert_diag(&t, "spec.taints[0].key", "required");
    mt_assert_diag(&t, "spec.taints[1].effect", "required");
    mt_assert_diag(&t, "spec.taints[2].effect", "unsupported value");
    mt_fini(&t);
}

Test(queue, defaults_and_fields)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\n"
                               "metadata: {name: q}\nspec:\n  capability: {nvidia.com/gpu: 16}\n"
                               "  deserved: {nvidia.com/gpu: 8}\n"
                               "  guarantee: {resource: {nvidia.com/gpu: 2}}\n"
                               "  parent: root\n  priority: 5\n"),
                 0, "%s", mt_diags(&t));
    corral_queue_t *q = t.obj->u.queue;
    cr_assert_eq(q->weight, 1);
    cr_assert(q->reclaimable);
    cr_assert_str_eq(q->parent, "root");
    cr_assert_eq(q->priority, 5);
    cr_assert_eq(q->guarantee.n, 1);
    mt_fini(&t);
}

Test(queue, ordering_and_weight_rules)
{
    mt_t t;
    mt_decode(&t, "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: q}\n"
                  "spec:\n  weight: 0\n  capability: {nvidia.com/gpu: 4}\n"
                  "  deserved: {nvidia.com/gpu: 8}\n  guarantee: {resource: {nvidia.com/gpu: 10}}\n"
                  "  reclaimable: \"false\"\n");
    mt_assert_diag(&t, "spec.weight", "positive");
    mt_assert_diag(&t, "t.yaml:7:30", "spec.deserved.nvidia.com/gpu", "spec.capability (4)");
    mt_assert_diag(&t, "spec.guarantee.resource.nvidia.com/gpu", "spec.deserved (8)");
    mt_assert_diag(&t, "spec.reclaimable", "remove the quotes");
    mt_fini(&t);
}

Test(queue, the_colon_typo_from_the_issue)
{
    mt_t t;
    mt_decode(&t, "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata:\n"
                  " name: training-queue\nspec:\n weight: 10\n capability:\n"
                  "  nvidia.com/gpu: 16\n reclaimable:true\n");
    cr_assert_eq(t.rc, CORRAL_EPARSE);
    mt_assert_diag(&t, "t.yaml:9:", "reclaimable", "`reclaimable: true`");
    mt_fini(&t);
    /* The same typo where YAML accepts it as a plain string value. */
    mt_decode(&t, "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata:\n"
                  " name: q\nspec:\n  reclaimable:true\n");
    mt_assert_diag(&t, "t.yaml:6:3", "spec.reclaimable", "`reclaimable: true`");
    mt_fini(&t);
}

Test(core, priorityclass_lease_namespace)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\n"
                               "metadata: {name: high}\nvalue: 1000\ndescription: x\n"),
                 0, "%s", mt_diags(&t));
    cr_assert_eq(t.obj->u.pc->value, 1000);
    cr_assert_str_eq(t.obj->u.pc->preemption_policy, "PreemptLowerPriority");
    mt_fini(&t);
    mt_decode(&t, "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: h}\n");
    mt_assert_diag(&t, "value", "required");
    mt_fini(&t);
    mt_decode(&t, "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: h}\n"
                  "value: 2000000000\n");
    mt_assert_diag(&t, "value", "system-");
    mt_fini(&t);
    cr_assert_eq(mt_decode(&t, "apiVersion: coordination.k8s.io/v1\nkind: Lease\n"
                               "metadata: {name: node-1, namespace: kube-node-lease}\nspec:\n"
                               "  holderIdentity: node-1\n  leaseDurationSeconds: 40\n"
                               "  renewTime: \"2024-05-01T12:00:00.123456Z\"\n"),
                 0, "%s", mt_diags(&t));
    cr_assert_eq(t.obj->u.lease->lease_duration_seconds.v, 40);
    cr_assert_neq(t.obj->u.lease->renew_us, 0);
    mt_fini(&t);
    mt_decode(&t, "apiVersion: v1\nkind: Namespace\nmetadata: {name: my.ns}\n");
    mt_assert_diag(&t, "metadata.name", "RFC 1123 label");
    mt_fini(&t);
}

Test(core, configmap_secret_event)
{
    mt_t t;
    cr_assert_eq(mt_decode(&t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"
                               "data: {a.conf: x}\nbinaryData: {b: aGVsbG8=}\n"),
                 0, "%s", mt_diags(&t));
    mt_fini(&t);
    mt_decode(&t,
              "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ndata: {tok: 'not base64!'}\n");
    mt_assert_diag(&t, "data.tok", "base64");
    mt_fini(&t);
    cr_assert_eq(mt_decode(&t, "apiVersion: v1\nkind: Event\nmetadata: {name: e.1}\n"
                               "involvedObject: {kind: Pod, name: p, namespace: default}\n"
                               "reason: FailedScheduling\ntype: Warning\n"
                               "message: '0/2 nodes are available'\nsource: {component: corral}\n"),
                 0, "%s", mt_diags(&t));
    cr_assert_str_eq(corral_obj_field(t.obj, "source"), "corral");
    cr_assert_str_eq(corral_obj_field(t.obj, "involvedObject.kind"), "Pod");
    cr_assert_null(corral_obj_field(t.obj, "spec.nodeName"));
    mt_fini(&t);
}

Test(core, kind_registry)
{
    cr_assert_eq(corral_kind_find_resource("po")->kind, CORRAL_KIND_POD);
    cr_assert_eq(corral_kind_find_resource("vcjob")->kind, CORRAL_KIND_VCJOB);
    cr_assert_eq(corral_kind_find_resource("isvc")->kind, CORRAL_KIND_ISVC);
    cr_assert_eq(corral_kind_find_resource("PodGroups")->kind, CORRAL_KIND_PODGROUP);
    cr_assert_eq(corral_kind_find_resource("queues.scheduling.volcano.sh")->kind,
                 CORRAL_KIND_QUEUE);
    cr_assert_eq(corral_kind_find_resource("deploy")->kind, CORRAL_KIND_DEPLOYMENT);
    cr_assert_null(corral_kind_find_resource("statefulsets"));
    cr_assert(corral_kind_field_supported(CORRAL_KIND_POD, "spec.nodeName"));
    cr_assert_not(corral_kind_field_supported(CORRAL_KIND_QUEUE, "spec.weight"));
    cr_assert_not(corral_kind_field_supported(CORRAL_KIND_NODE, "metadata.namespace"));
}
