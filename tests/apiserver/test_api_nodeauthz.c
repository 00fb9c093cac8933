/* The Node authorizer and NodeRestriction: node agents' tokens
 * (system:node:NAME in system:nodes) may change their own Node, Lease and
 * the status of pods bound to them, and nothing of other nodes; they read
 * configmaps and secrets only when a pod bound to them refers to them;
 * they create no pods; `kubectl auth can-i` answers the same; RBAC still
 * applies on top. */
#include "api_test.h"

#define TOKENS                                                                                     \
    "admin-token,admin,1,\"system:masters\"\n"                                                     \
    "n1-token,system:node:n1,2,\"system:nodes\"\n"                                                 \
    "n2-token,system:node:n2,3,\"system:nodes\"\n"                                                 \
    "fake-token,system:node:n1,4\n"

#define MERGE  "application/merge-patch+json"
#define LEASES "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases"

static void with_tokens(corral_apiserver_opts_t *o)
{
    o->token_auth_file = api_write_file(api_srv.dir, "tokens.csv", TOKENS);
}

/* Request as token with content type ct; checks the code; the caller frees r. */
static void as(const char *token, api_resp_t *r, long code, const char *method, const char *path,
               const char *ct, const char *body)
{
    api_srv.token = token;
    api_req(r, method, path, ct, body);
    api_srv.token = NULL;
    cr_assert_eq(r->code, code, "%s %s as %s: got %ld: %s", method, path, token, r->code,
                 corral_buf_str(&r->body));
}

static void ok(const char *token, long code, const char *method, const char *path, const char *ct,
               const char *body)
{
    api_resp_t r;
    as(token, &r, code, method, path, ct, body);
    api_free(&r);
}

/* 403 whose message contains msg. */
static void denied(const char *token, const char *method, const char *path, const char *ct,
                   const char *body, const char *msg)
{
    api_resp_t r;
    as(token, &r, 403, method, path, ct, body);
    api_status(&r, "Forbidden", 403, msg);
    api_free(&r);
}

static void node(const char *name)
{
    char body[256];
    snprintf(body, sizeof(body),
             "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":"
             "\"%s\"}}",
             name);
    ok("admin-token", 201, "POST", "/api/v1/nodes", NULL, body);
}

static void setup(void)
{
    api_start_with(with_tokens);
    node("n1");
    node("n2");
    static const char *const objs[][2] = {
        {"/api/v1/namespaces/default/configmaps", "{\"metadata\":{\"name\":\"cm1\"}}"},
        {"/api/v1/namespaces/default/configmaps", "{\"metadata\":{\"name\":\"cm2\"}}"},
        {"/api/v1/namespaces/default/configmaps", "{\"metadata\":{\"name\":\"cm3\"}}"},
        {"/api/v1/namespaces/default/secrets", "{\"metadata\":{\"name\":\"s1\"}}"},
        {"/api/v1/namespaces/default/secrets", "{\"metadata\":{\"name\":\"s2\"}}"},
        {"/api/v1/namespaces/default/pods",
         "{\"metadata\":{\"name\":\"p1\",\"labels\":{\"app\":\"a\"}},\"spec\":{\"nodeName\":\"n1\","
         "\"containers\":[{\"name\":\"c\",\"image\":\"x\",\"env\":[{\"name\":\"K\",\"valueFrom\":"
         "{\"configMapKeyRef\":{\"name\":\"cm1\",\"key\":\"k\"}}}]}],"
         "\"volumes\":[{\"name\":\"v\",\"secret\":{\"secretName\":\"s1\"}}]}}"},
        {"/api/v1/namespaces/default/pods",
         "{\"metadata\":{\"name\":\"p2\"},\"spec\":{\"nodeName\":\"n2\",\"containers\":[{\"name\":"
         "\"c\",\"image\":\"x\",\"envFrom\":[{\"configMapRef\":{\"name\":\"cm2\"}}]}]}}"},
        {"/api/v1/namespaces/default/pods",
         "{\"metadata\":{\"name\":\"p3\"},\"spec\":{\"nodeName\":\"n1\",\"containers\":[{\"name\":"
         "\"c\",\"image\":\"x\"}]}}"},
    };
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(objs); i++)
        ok("admin-token", 201, "POST", objs[i][0], NULL, objs[i][1]);
}

TestSuite(nodeauthz, .init = setup, .fini = api_stop, .timeout = 60);

Test(nodeauthz, own_node_only)
{
    ok("n1-token", 200, "GET", "/api/v1/nodes", NULL, NULL);
    ok("n1-token", 200, "GET", "/api/v1/nodes/n2", NULL, NULL);
    ok("n1-token", 200, "PATCH", "/api/v1/nodes/n1", MERGE,
       "{\"metadata\":{\"labels\":{\"nvidia.com/gpu.count\":\"8\"}}}");
    ok("n1-token", 200, "PATCH", "/api/v1/nodes/n1/status", MERGE,
       "{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}");
    denied("n1-token", "PATCH", "/api/v1/nodes/n2", MERGE,
           "{\"metadata\":{\"labels\":{\"a\":\"b\"}}}",
           "nodes \"n2\" is forbidden: User \"system:node:n1\" cannot patch resource \"nodes\" in "
           "API group \"\" at the cluster scope: node 'n1' cannot modify node 'n2'");
    denied("n1-token", "PATCH", "/api/v1/nodes/n2/status", MERGE, "{\"status\":{}}",
           "node 'n1' cannot modify node 'n2'");
    denied("n1-token", "PUT", "/api/v1/nodes/n2", NULL,
           "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n2\"}}",
           "cannot update resource \"nodes\"");
    denied("n1-token", "DELETE", "/api/v1/nodes/n2", NULL, NULL, "cannot delete resource");
    denied("n1-token", "POST", "/api/v1/nodes", NULL, "{\"metadata\":{\"name\":\"n3\"}}",
           "nodes \"n3\" is forbidden: node \"n1\" is not allowed to modify node \"n3\"");
    /* Registering itself again after the node was removed. */
    ok("admin-token", 200, "DELETE", "/api/v1/nodes/n1", NULL, NULL);
    ok("n1-token", 201, "POST", "/api/v1/nodes", NULL,
       "{\"metadata\":{\"name\":\"n1\"},\"spec\":{\"taints\":[{\"key\":\"k\",\"effect\":"
       "\"NoSchedule\"}]}}");
    denied("n1-token", "PATCH", "/api/v1/nodes/n1", MERGE, "{\"spec\":{\"taints\":null}}",
           "node \"n1\" is not allowed to modify taints");
    denied("n1-token", "PATCH", "/api/v1/nodes/n1", MERGE,
           "{\"metadata\":{\"labels\":{\"node-restriction.kubernetes.io/x\":\"y\"}}}",
           "is not allowed to modify labels: node-restriction.kubernetes.io/x");
    /* A node name without the system:nodes group is an ordinary user. */
    denied("fake-token", "PATCH", "/api/v1/nodes/n1", MERGE, "{}", "cannot patch resource");
    denied("fake-token", "GET", "/api/v1/nodes", NULL, NULL, "cannot list resource");
}

Test(nodeauthz, own_lease_only)
{
    static const char own[] =
        "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\","
        "\"metadata\":{\"name\":\"n1\"},\"spec\":{\"holderIdentity\":\"n1\"}}";
    ok("n1-token", 201, "POST", LEASES, NULL, own);
    ok("n1-token", 200, "GET", LEASES "/n1", NULL, NULL);
    ok("n1-token", 200, "PATCH", LEASES "/n1", MERGE, "{\"spec\":{\"leaseDurationSeconds\":40}}");
    denied("n1-token", "POST", LEASES, NULL,
           "{\"metadata\":{\"name\":\"n2\"},\"spec\":{\"holderIdentity\":\"n1\"}}",
           "can only access node lease with the same name as the requesting node");
    ok("n2-token", 201, "POST", LEASES, NULL, "{\"metadata\":{\"name\":\"n2\"}}");
    denied("n1-token", "GET", LEASES "/n2", NULL, NULL,
           "can only access node lease with the same name as the requesting node");
    denied("n1-token", "PATCH", LEASES "/n2", MERGE, "{}", "same name as the requesting node");
    denied("n1-token", "DELETE", LEASES "/n2", NULL, NULL, "same name as the requesting node");
    denied("n1-token", "GET", LEASES, NULL, NULL,
           "can only get, create, update, patch, or delete a node lease");
    denied("n1-token", "POST", "/apis/coordination.k8s.io/v1/namespaces/default/leases", NULL,
           "{\"metadata\":{\"name\":\"n1\"}}", "can only access leases in the kube-node-lease");
    ok("n1-token", 200, "DELETE", LEASES "/n1", NULL, NULL);
}

/* The model cache: a node reads caches and groups, writes its own LocalModelNode only. */
Test(nodeauthz, own_local_model_node_only)
{
#define LMN "/apis/serving.kserve.io/v1alpha1/localmodelnodes"
    static const char own[] = "{\"apiVersion\":\"serving.kserve.io/v1alpha1\","
                              "\"kind\":\"LocalModelNode\",\"metadata\":{\"name\":\"n1\"},"
                              "\"spec\":{\"localModels\":[]}}";
    ok("n1-token", 201, "POST", LMN, NULL, own);
    ok("n1-token", 200, "PATCH", LMN "/n1/status", MERGE,
       "{\"status\":{\"modelStatus\":{\"m\":\"ModelDownloaded\"}}}");
    ok("n1-token", 200, "GET", LMN, NULL, NULL);
    ok("n1-token", 200, "GET", "/apis/serving.kserve.io/v1alpha1/localmodelcaches", NULL, NULL);
    ok("n1-token", 200, "GET", "/apis/serving.kserve.io/v1alpha1/localmodelnodegroups", NULL, NULL);
    denied("n2-token", "PATCH", LMN "/n1/status", MERGE, "{}",
           "can only write its own LocalModelNode");
    denied("n2-token", "POST", LMN, NULL, own, "can only write its own LocalModelNode");
    denied("n1-token", "DELETE", LMN "/n1", NULL, NULL, "");
    denied("n1-token", "POST", "/apis/serving.kserve.io/v1alpha1/localmodelcaches", NULL,
           "{\"metadata\":{\"name\":\"x\"}}", "");
#undef LMN
}

Test(nodeauthz, pods_bound_to_the_node)
{
    ok("n1-token", 200, "GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Dn1", NULL, NULL);
    ok("n1-token", 200, "GET", "/api/v1/namespaces/default/pods/p2", NULL, NULL);
    ok("n1-token", 200, "PATCH", "/api/v1/namespaces/default/pods/p1/status", MERGE,
       "{\"status\":{\"phase\":\"Running\"}}");
    denied("n1-token", "PATCH", "/api/v1/namespaces/default/pods/p2/status", MERGE,
           "{\"status\":{\"phase\":\"Running\"}}",
           "pods \"p2\" is forbidden: node \"n1\" can only update pod status for pods with "
           "spec.nodeName set to itself");
    /* pods/status takes only status: labels sent there change nothing. */
    api_resp_t r;
    as("n1-token", &r, 200, "PATCH", "/api/v1/namespaces/default/pods/p1/status", MERGE,
       "{\"metadata\":{\"labels\":{\"app\":\"b\"}}}");
    cr_assert_str_eq(api_str(r.json, "metadata.labels.app"), "a");
    api_free(&r);
    /* Annotations: only the GPU time the pod used, nothing that places or
     * accounts it (gpu-ids, queue). */
    as("n1-token", &r, 200, "PATCH", "/api/v1/namespaces/default/pods/p1/status", MERGE,
       "{\"metadata\":{\"annotations\":{\"corral.dev/gpu-seconds-used\":\"12.5\"}}}");
    const corral_val_t *used = corral_val_get(corral_val_dig(r.json, "metadata.annotations"),
                                              "corral.dev/gpu-seconds-used");
    cr_assert(used && used->s && !strcmp(used->s, "12.5"));
    api_free(&r);
    denied("n1-token", "PATCH", "/api/v1/namespaces/default/pods/p1/status", MERGE,
           "{\"metadata\":{\"annotations\":{\"corral.dev/gpu-ids\":\"0,1,2\"}}}",
           "node \"n1\" can change only the corral.dev/gpu-seconds-used and "
           "corral.dev/model-fetch annotations");
    ok("n1-token", 200, "PATCH", "/api/v1/namespaces/default/pods/p1/status", MERGE,
       "{\"metadata\":{\"annotations\":{\"corral.dev/model-fetch\":\"hit 0.004s\"}}}");
    denied("n1-token", "PATCH", "/api/v1/namespaces/default/pods/p1", MERGE,
           "{\"metadata\":{\"labels\":{\"x\":\"y\"}}}", "cannot patch resource \"pods\"");
    denied("n1-token", "DELETE", "/api/v1/namespaces/default/pods/p2", NULL, NULL,
           "node \"n1\" can only delete pods with spec.nodeName set to itself");
    denied("n1-token", "POST", "/api/v1/namespaces/default/pods/p2/eviction", NULL,
           "{\"apiVersion\":\"policy/v1\",\"kind\":\"Eviction\",\"metadata\":{\"name\":\"p2\"}}",
           "node n1 can only evict pods with spec.nodeName set to itself");
    denied("n1-token", "POST", "/api/v1/namespaces/default/pods", NULL,
           "{\"metadata\":{\"name\":\"mine\"},\"spec\":{\"nodeName\":\"n1\",\"containers\":"
           "[{\"name\":\"c\",\"image\":\"x\"}]}}",
           "pods \"mine\" is forbidden: pod does not have \"kubernetes.io/config.mirror\" "
           "annotation, node \"n1\" can only create mirror pods");
    ok("n1-token", 200, "DELETE", "/api/v1/namespaces/default/pods/p3", NULL,
       "{\"gracePeriodSeconds\":0}");
    ok("n1-token", 201, "POST", "/api/v1/namespaces/default/events", NULL,
       "{\"metadata\":{\"name\":\"e1\"},\"involvedObject\":{\"kind\":\"Pod\",\"name\":\"p1\"},"
       "\"reason\":\"Started\",\"message\":\"m\"}");
    /* Authorized: nodes read services (and endpoints). */
    ok("n1-token", 200, "GET", "/api/v1/namespaces/default/services", NULL, NULL);
    denied("n1-token", "GET", "/api/v1/namespaces/default/replicationcontrollers", NULL, NULL,
           "cannot list resource");
}

Test(nodeauthz, configmaps_and_secrets_by_reference)
{
    ok("n1-token", 200, "GET", "/api/v1/namespaces/default/configmaps/cm1", NULL, NULL);
    ok("n1-token", 200, "GET", "/api/v1/namespaces/default/secrets/s1", NULL, NULL);
    ok("n2-token", 200, "GET", "/api/v1/namespaces/default/configmaps/cm2", NULL, NULL);
    denied("n1-token", "GET", "/api/v1/namespaces/default/configmaps/cm2", NULL, NULL,
           "configmaps \"cm2\" is forbidden: User \"system:node:n1\" cannot get resource "
           "\"configmaps\" in API group \"\" in the namespace \"default\": no relationship found "
           "between node 'n1' and this object");
    denied("n1-token", "GET", "/api/v1/namespaces/default/configmaps/cm3", NULL, NULL,
           "no relationship found");
    denied("n1-token", "GET", "/api/v1/namespaces/default/secrets/s2", NULL, NULL,
           "no relationship found");
    denied("n1-token", "GET", "/api/v1/namespaces/default/configmaps", NULL, NULL,
           "can only get individual resources of this type");
    denied("n1-token", "PUT", "/api/v1/namespaces/default/configmaps/cm1", NULL,
           "{\"metadata\":{\"name\":\"cm1\"}}", "cannot update resource \"configmaps\"");
    /* The reference goes when the pod does. */
    ok("admin-token", 200, "DELETE", "/api/v1/namespaces/default/pods/p1?gracePeriodSeconds=0",
       NULL, NULL);
    denied("n1-token", "GET", "/api/v1/namespaces/default/configmaps/cm1", NULL, NULL,
           "no relationship found");
    /* RBAC still grants on top of the Node authorizer. */
    ok("admin-token", 201, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", NULL,
       "{\"metadata\":{\"name\":\"cm-reader\"},\"rules\":[{\"apiGroups\":[\"\"],\"resources\":"
       "[\"configmaps\"],\"verbs\":[\"get\",\"list\"]}]}");
    ok("admin-token", 201, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", NULL,
       "{\"metadata\":{\"name\":\"nodes-read-cm\"},\"subjects\":[{\"kind\":\"Group\",\"name\":"
       "\"system:nodes\"}],\"roleRef\":{\"kind\":\"ClusterRole\",\"name\":\"cm-reader\"}}");
    ok("n1-token", 200, "GET", "/api/v1/namespaces/default/configmaps", NULL, NULL);
    ok("n1-token", 200, "GET", "/api/v1/namespaces/default/configmaps/cm3", NULL, NULL);
}

static bool can_i(const char *token, const char *attrs)
{
    char body[512];
    snprintf(body, sizeof(body), "{\"spec\":{\"resourceAttributes\":{%s}}}", attrs);
    api_resp_t r;
    as(token, &r, 201, "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", NULL,
       body);
    const char *allowed = api_str(r.json, "status.allowed");
    bool yes = allowed && strcmp(allowed, "true") == 0;
    api_free(&r);
    return yes;
}

Test(nodeauthz, can_i)
{
    cr_assert(can_i("n1-token", "\"verb\":\"patch\",\"resource\":\"nodes\",\"name\":\"n1\""));
    cr_assert_not(can_i("n1-token", "\"verb\":\"patch\",\"resource\":\"nodes\",\"name\":\"n2\""));
    cr_assert(can_i("n1-token",
                    "\"verb\":\"update\",\"group\":\"coordination.k8s.io\",\"resource\":"
                    "\"leases\",\"namespace\":\"kube-node-lease\",\"name\":\"n1\""));
    cr_assert_not(can_i("n1-token", "\"verb\":\"update\",\"group\":\"coordination.k8s.io\","
                                    "\"resource\":\"leases\",\"namespace\":\"kube-node-lease\","
                                    "\"name\":\"n2\""));
    cr_assert(can_i("n1-token", "\"verb\":\"get\",\"resource\":\"configmaps\",\"namespace\":"
                                "\"default\",\"name\":\"cm1\""));
    cr_assert_not(can_i("n1-token", "\"verb\":\"get\",\"resource\":\"configmaps\",\"namespace\":"
                                    "\"default\",\"name\":\"cm3\""));
    cr_assert(can_i("n1-token", "\"verb\":\"list\",\"resource\":\"pods\""));
    cr_assert_not(can_i("n1-token", "\"verb\":\"delete\",\"resource\":\"namespaces\""));
    cr_assert_not(can_i("fake-token", "\"verb\":\"list\",\"resource\":\"pods\""));
}
