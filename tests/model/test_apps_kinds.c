/* apps/v1 Deployment and DaemonSet, apiextensions.k8s.io/v1
 * CustomResourceDefinition: registry entries, what decodes cleanly, and
 * upstream's validation rules with their field paths and messages. */
#include "model_test.h"

TestSuite(apps_kinds);

#define TEMPLATE                                                                                   \
    "  template:\n"                                                                                \
    "    metadata: {labels: {app: a, tier: t}}\n"                                                  \
    "    spec:\n"                                                                                  \
    "      containers: [{name: c, image: img}]\n"

Test(apps_kinds, registry)
{
    const corral_kind_info_t *k = corral_kind_find_resource("deploy");
    cr_assert_not_null(k);
    cr_assert_eq(k->kind, CORRAL_KIND_DEPLOYMENT);
    cr_assert_str_eq(k->api_version, "apps/v1");
    cr_assert(k->namespaced);
    k = corral_kind_find_resource("ds");
    cr_assert_not_null(k);
    cr_assert_str_eq(k->plural, "daemonsets");
    k = corral_kind_find_resource("crds");
    cr_assert_not_null(k);
    cr_assert_not(k->namespaced);
    cr_assert_str_eq(k->api_version, "apiextensions.k8s.io/v1");
}

Test(apps_kinds, deployment_decodes)
{
    mt_t t;
    int rc = mt_decode(&t, "apiVersion: apps/v1\nkind: Deployment\n"
                           "metadata: {name: d, namespace: ns}\n"
                           "spec:\n"
                           "  replicas: 3\n"
                           "  selector: {matchLabels: {app: a}}\n"
                           "  strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 1, "
                           "maxUnavailable: \"10%\"}}\n"
                           "  revisionHistoryLimit: 2\n"
                           "  progressDeadlineSeconds: 60\n" TEMPLATE
                           "status: {replicas: 3, readyReplicas: 1}\n");
    cr_assert_eq(rc, 0, "%s", mt_diags(&t));
    cr_assert_eq(t.diag.n, 0, "%s", mt_diags(&t));
    cr_assert_eq(t.obj->u.workload->replicas, 3);
    cr_assert_str_eq(t.obj->u.workload->strategy, "RollingUpdate");
    cr_assert_eq(t.obj->u.workload->tmpl.spec.ncontainers, 1);
    mt_fini(&t);
}

Test(apps_kinds, deployment_rules)
{
    mt_t t;
    int rc = mt_decode(&t, "apiVersion: apps/v1\nkind: Deployment\n"
                           "metadata: {name: d}\n"
                           "spec:\n"
                           "  replicas: -1\n"
                           "  selector: {matchLabels: {app: other}}\n"
                           "  strategy: {type: Recreate, rollingUpdate: {maxSurge: 1}}\n"
                           "  template:\n"
                           "    metadata: {labels: {app: a}}\n"
                           "    spec:\n"
                           "      restartPolicy: Never\n"
                           "      containers: [{name: c, image: img}]\n");
    cr_assert_neq(rc, 0);
    mt_assert_diag(&t, "spec.replicas", "must be greater than or equal to 0");
    mt_assert_diag(&t, "spec.template.metadata.labels", "`selector` does not match template");
    mt_assert_diag(&t, "spec.template.spec.restartPolicy", "supported values: \"Always\"");
    mt_assert_diag(&t, "spec.strategy.rollingUpdate", "Forbidden");
    mt_fini(&t);

    rc = mt_decode(&t, "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n"
                       "spec:\n"
                       "  selector: {}\n"
                       "  strategy: {type: Sideways}\n" TEMPLATE);
    cr_assert_neq(rc, 0);
    mt_assert_diag(&t, "spec.selector", "empty selector is invalid for deployment");
    mt_assert_diag(&t, "spec.strategy.type", "Unsupported value: \"Sideways\"");
    mt_fini(&t);

    rc = mt_decode(&t, "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n"
                       "spec:\n"
                       "  selector: {matchLabels: {app: a}}\n"
                       "  strategy: {rollingUpdate: {maxSurge: 0, maxUnavailable: 0}}\n" TEMPLATE);
    cr_assert_neq(rc, 0);
    mt_assert_diag(&t, "maxUnavailable", "may not be 0 when `maxSurge` is 0");
    mt_fini(&t);

    rc = mt_decode(&t, "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n"
                       "spec:\n"
                       "  selector: {matchLabels: {app: a}}\n"
                       "  strategy: {rollingUpdate: {maxUnavailable: \"120%\", maxSurge: x}}\n"
                       "  template: {metadata: {labels: {app: a}}, spec: {containers: []}}\n");
    cr_assert_neq(rc, 0);
    mt_assert_diag(&t, "maxUnavailable", "must not be greater than 100%");
    mt_assert_diag(&t, "maxSurge", "a valid percent string");
    mt_assert_diag(&t, "spec.template.spec.containers", "at least one container");
    mt_fini(&t);
}

Test(apps_kinds, daemonset_rules)
{
    mt_t t;
    int rc = mt_decode(&t, "apiVersion: apps/v1\nkind: DaemonSet\n"
                           "metadata: {name: ds, namespace: kube-system}\n"
                           "spec:\n"
                           "  selector: {matchExpressions: [{key: app, operator: In, values: "
                           "[a]}]}\n"
                           "  updateStrategy: {type: OnDelete}\n" TEMPLATE);
    cr_assert_eq(rc, 0, "%s", mt_diags(&t));
    cr_assert_eq(t.diag.n, 0, "%s", mt_diags(&t));
    cr_assert_str_eq(t.obj->u.workload->strategy, "OnDelete");
    mt_fini(&t);

    rc = mt_decode(&t, "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: ds}\n"
                       "spec:\n"
                       "  updateStrategy: {type: Recreate}\n" TEMPLATE);
    cr_assert_neq(rc, 0);
    mt_assert_diag(&t, "spec.selector", "Required value");
    mt_assert_diag(&t, "spec.updateStrategy.type", "\"OnDelete\", \"RollingUpdate\"");
    mt_fini(&t);

    /* A DaemonSet's maxSurge defaults to 0: maxUnavailable 0 alone is invalid. */
    rc = mt_decode(&t, "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: ds}\n"
                       "spec:\n"
                       "  selector: {matchLabels: {app: a}}\n"
                       "  updateStrategy: {rollingUpdate: {maxUnavailable: 0}}\n" TEMPLATE);
    cr_assert_neq(rc, 0);
    mt_assert_diag(&t, "maxUnavailable", "may not be 0");
    mt_fini(&t);
}

#define CRD_HEAD "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n"

Test(apps_kinds, crd_decodes)
{
    mt_t t;
    int rc = mt_decode(&t, CRD_HEAD "metadata: {name: queues.scheduling.volcano.sh}\n"
                                    "spec:\n"
                                    "  group: scheduling.volcano.sh\n"
                                    "  names: {kind: Queue, listKind: QueueList, plural: queues, "
                                    "singular: queue, shortNames: [q]}\n"
                                    "  scope: Cluster\n"
                                    "  versions:\n"
                                    "  - name: v1beta1\n"
                                    "    served: true\n"
                                    "    storage: true\n"
                                    "    subresources: {status: {}}\n"
                                    "    schema:\n"
                                    "      openAPIV3Schema:\n"
                                    "        type: object\n"
                                    "        properties:\n"
                                    "          spec:\n"
                                    "            type: object\n"
                                    "            properties:\n"
                                    "              weight: {type: integer, default: 1}\n"
                                    "              port: {x-kubernetes-int-or-string: true}\n"
                                    "              any: {x-kubernetes-preserve-unknown-fields: "
                                    "true}\n"
                                    "              list: {type: array, items: {type: string}}\n"
                                    "              map: {type: object, additionalProperties: "
                                    "{type: string}}\n");
    cr_assert_eq(rc, 0, "%s", mt_diags(&t));
    cr_assert_eq(t.diag.n, 0, "%s", mt_diags(&t));
    cr_assert(t.obj->u.crd->served_by_corral, "Corral serves Volcano's Queue");
    cr_assert_str_eq(t.obj->u.crd->storage_version, "v1beta1");
    mt_fini(&t);

    rc = mt_decode(&t, CRD_HEAD "metadata: {name: servicemonitors.monitoring.coreos.com}\n"
                                "spec:\n"
                                "  group: monitoring.coreos.com\n"
                                "  names: {kind: ServiceMonitor, plural: servicemonitors}\n"
                                "  scope: Namespaced\n"
                                "  versions:\n"
                                "  - {name: v1, served: true, storage: true, schema: "
                                "{openAPIV3Schema: {type: object, "
                                "x-kubernetes-preserve-unknown-fields: true}}}\n");
    cr_assert_eq(rc, 0, "%s", mt_diags(&t));
    cr_assert_not(t.obj->u.crd->served_by_corral);
    mt_fini(&t);
}

Test(apps_kinds, crd_rules)
{
    mt_t t;
    int rc = mt_decode(&t, CRD_HEAD "metadata: {name: foos.example}\n"
                                    "spec:\n"
                                    "  group: example\n"
                                    "  names: {kind: foo_bar, plural: Foos, listKind: foo_bar}\n"
                                    "  scope: Global\n"
                                    "  preserveUnknownFields: true\n"
                                    "  versions:\n"
                                    "  - {name: v1, served: true, storage: false, schema: "
                                    "{openAPIV3Schema: {type: string}}}\n"
                                    "  - {name: v1, served: true, storage: false, schema: "
                                    "{openAPIV3Schema: {type: object, properties: {spec: "
                                    "{properties: {a: {type: integer}}}}}}}\n"
                                    "  - {name: v3, served: true, storage: false}\n");
    cr_assert_neq(rc, 0);
    mt_assert_diag(&t, "spec.group", "should be a domain with at least one dot");
    mt_assert_diag(&t, "spec.scope", "supported values: \"Cluster\", \"Namespaced\"");
    mt_assert_diag(&t, "spec.names.plural", "DNS-1035");
    mt_assert_diag(&t, "spec.names.kind", "may have mixed case");
    mt_assert_diag(&t, "spec.names.listKind", "kind and listKind may not be the same");
    mt_assert_diag(&t, "spec.versions[0].schema.openAPIV3Schema.type",
                   "must be object at the root");
    mt_assert_diag(&t, "spec.versions[1].name", "must appear only once");
    mt_assert_diag(&t, "properties.spec.type", "must not be empty for specified object fields");
    mt_assert_diag(&t, "spec.versions[2].schema.openAPIV3Schema", "schemas are required");
    mt_assert_diag(&t, "spec.versions", "exactly one version marked as storage");
    mt_assert_diag(&t, "spec.preserveUnknownFields", "cannot set to true");
    mt_assert_diag(&t, "metadata.name", "must be spec.names.plural+\".\"+spec.group");
    mt_fini(&t);

    rc = mt_decode(&t, CRD_HEAD "metadata: {name: bars.example.com}\n"
                                "spec: {group: example.com, scope: Namespaced, versions: [],\n"
                                "       names: {plural: bars}}\n");
    cr_assert_neq(rc, 0);
    mt_assert_diag(&t, "spec.names.kind", "Required value");
    mt_assert_diag(&t, "spec.versions", "must have exactly one version");
    mt_fini(&t);
}

Test(apps_kinds, defaults)
{
    corral_arena_t a;
    corral_arena_init(&a);
    corral_doc_t *docs;
    size_t n;
    const char *y = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n"
                    "spec:\n  selector: {matchLabels: {app: a}}\n" TEMPLATE;
    cr_assert_eq(corral_yaml_parse(&a, y, strlen(y), "t", NULL, NULL, &docs, &n), 0);
    corral_val_t *obj = docs[0].root;
    corral_obj_default(&a, corral_kind_find("apps/v1", "Deployment"), obj);
    cr_assert_eq(corral_val_dig(obj, "spec.replicas")->u.i, 1);
    cr_assert_str_eq(corral_val_dig(obj, "spec.strategy.type")->s, "RollingUpdate");
    cr_assert_str_eq(corral_val_dig(obj, "spec.strategy.rollingUpdate.maxSurge")->s, "25%");
    cr_assert_eq(corral_val_dig(obj, "spec.revisionHistoryLimit")->u.i, 10);
    cr_assert_eq(corral_val_dig(obj, "spec.progressDeadlineSeconds")->u.i, 600);
    cr_assert_str_eq(corral_val_dig(obj, "spec.template.spec.restartPolicy")->s, "Always");

    y = CRD_HEAD "metadata: {name: foos.x.io}\n"
                 "spec: {group: x.io, scope: Cluster, names: {kind: Foo, plural: foos}}\n";
    cr_assert_eq(corral_yaml_parse(&a, y, strlen(y), "t", NULL, NULL, &docs, &n), 0);
    obj = docs[0].root;
    corral_obj_default(&a, corral_kind_find("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
                       obj);
    cr_assert_str_eq(corral_val_dig(obj, "spec.names.singular")->s, "foo");
    cr_assert_str_eq(corral_val_dig(obj, "spec.names.listKind")->s, "FooList");
    cr_assert_str_eq(corral_val_dig(obj, "spec.conversion.strategy")->s, "None");
    corral_arena_fini(&a);
}
