/* The API server with --token-auth-file and TLS, over HTTP(S): 401 for
 * missing and wrong tokens (health for everybody), system:masters allowed
 * everything, RBAC grants through Role/RoleBinding and ClusterRole/
 * ClusterRoleBinding (namespaces, subresources, resource names, groups,
 * service accounts, watch via fieldSelector names), kube's 403 bodies,
 * escalation checks on RBAC writes, immutable roleRef, validation of RBAC
 * objects, and HTTPS. */
#include "api_test.h"

#define TOKENS                                                                                     \
    "admin-token,admin,1,\"system:masters\"\n"                                                     \
    "alice-token,alice,2,\"dev\"\n"                                                                \
    "bob-token,bob,3\n"                                                                            \
    "sa-token,system:serviceaccount:ml:runner,4\n"

static void with_tokens(corral_apiserver_opts_t *o)
{
    o->token_auth_file = api_write_file(api_srv.dir, "tokens.csv", TOKENS);
}

static void start_secure(void)
{
    api_start_with(with_tokens);
    api_srv.token = "admin-token";
}

static void with_tls(corral_apiserver_opts_t *o)
{
    with_tokens(o);
    o->tls_cert_file = api_write_file(api_srv.dir, "cert.pem", API_TEST_CERT);
    o->tls_key_file = api_write_file(api_srv.dir, "key.pem", API_TEST_KEY);
}

static void start_tls(void)
{
    api_start_with(with_tls);
    api_srv.https = true;
    api_srv.token = "admin-token";
}

TestSuite(security, .init = start_secure, .fini = api_stop, .timeout = 30);

#define RBAC "/apis/rbac.authorization.k8s.io/v1"

/* Request as user (a token, or NULL for none); checks the code. */
static void as(const char *token, api_resp_t *r, long code, const char *method, const char *path,
               const char *body)
{
    const char *saved = api_srv.token;
    api_srv.token = token;
    api_req(r, method, path, NULL, body);
    api_srv.token = saved;
    cr_assert_eq(r->code, code, "%s %s as %s: got %ld: %s", method, path, token ? token : "nobody",
                 r->code, corral_buf_str(&r->body));
}

static void admin(long code, const char *method, const char *path, const char *body)
{
    api_resp_t r;
    as("admin-token", &r, code, method, path, body);
    api_free(&r);
}

static void ok(const char *token, long code, const char *method, const char *path, const char *body)
{
    api_resp_t r;
    as(token, &r, code, method, path, body);
    api_free(&r);
}

static void denied(const char *token, const char *method, const char *path, const char *body,
                   const char *msg)
{
    api_resp_t r;
    as(token, &r, 403, method, path, body);
    api_status(&r, "Forbidden", 403, msg);
    api_free(&r);
}

Test(security, tokens_authenticate_and_masters_may_do_everything)
{
    api_resp_t r;
    as(NULL, &r, 401, "GET", "/api/v1/namespaces/default/pods", NULL);
    api_status(&r, "Unauthorized", 401, "Unauthorized");
    api_free(&r);
    as("wrong", &r, 401, "GET", "/api/v1/namespaces", NULL);
    api_free(&r);
    as("wrong", &r, 401, "GET", "/healthz", NULL);
    api_free(&r);
    ok(NULL, 200, "GET", "/healthz", NULL);
    ok(NULL, 200, "GET", "/version", NULL);
    ok(NULL, 401, "GET", "/api", NULL);
    ok("bob-token", 200, "GET", "/api", NULL);
    ok("bob-token", 200, "GET", "/apis/scheduling.volcano.sh/v1beta1", NULL);
    ok("bob-token", 200, "GET", "/openapi/v2", NULL);
    admin(201, "POST", "/api/v1/namespaces", "{\"metadata\":{\"name\":\"ml\"}}");
    admin(200, "DELETE", "/api/v1/namespaces/ml", NULL);
    admin(200, "GET", RBAC "/clusterroles/cluster-admin", NULL);
}

Test(security, denials_are_kube_403_statuses)
{
    api_resp_t r;
    as("bob-token", &r, 403, "GET", "/api/v1/namespaces/default/pods/p", NULL);
    api_status(&r, "Forbidden", 403,
               "pods \"p\" is forbidden: User \"bob\" cannot get resource \"pods\" in API group "
               "\"\" in the namespace \"default\"");
    cr_assert_str_eq(api_str(r.json, "details.name"), "p");
    cr_assert_str_eq(api_str(r.json, "details.kind"), "pods");
    api_free(&r);
    denied("bob-token", "GET", "/apis/scheduling.volcano.sh/v1beta1/queues", NULL,
           "queues.scheduling.volcano.sh is forbidden: User \"bob\" cannot list resource "
           "\"queues\" in API group \"scheduling.volcano.sh\" at the cluster scope");
    denied("bob-token", "GET", "/api/v1/namespaces/default/pods?watch=1", NULL,
           "cannot watch resource \"pods\"");
    denied("bob-token", "DELETE", "/api/v1/namespaces/default/pods", NULL,
           "cannot deletecollection resource \"pods\"");
    denied("bob-token", "GET", "/api/v1/namespaces/default/pods/p/log", NULL,
           "cannot get resource \"pods/log\"");
    denied("bob-token", "GET", "/metrics", NULL,
           "forbidden: User \"bob\" cannot get path \"/metrics\"");
    denied("bob-token", "GET", "/api/v1/widgets", NULL, "cannot list resource \"widgets\"");
}

static void grant_pod_reader(const char *ns, const char *subject)
{
    char path[256], body[1024];
    snprintf(path, sizeof(path), RBAC "/namespaces/%s/roles", ns);
    admin(201, "POST", path,
          "{\"metadata\":{\"name\":\"pod-reader\"},\"rules\":[{\"apiGroups\":[\"\"],"
          "\"resources\":[\"pods\",\"pods/log\"],\"verbs\":[\"get\",\"list\",\"watch\"]},"
          "{\"apiGroups\":[\"\"],\"resources\":[\"configmaps\"],\"resourceNames\":[\"cfg\"],"
          "\"verbs\":[\"get\",\"update\",\"list\"]}]}");
    snprintf(path, sizeof(path), RBAC "/namespaces/%s/rolebindings", ns);
    snprintf(body, sizeof(body),
             "{\"metadata\":{\"name\":\"readers\"},\"subjects\":[%s],"
             "\"roleRef\":{\"kind\":\"Role\",\"name\":\"pod-reader\"}}",
             subject);
    admin(201, "POST", path, body);
}

Test(security, roles_grant_within_their_namespace)
{
    admin(201, "POST", "/api/v1/namespaces", "{\"metadata\":{\"name\":\"ml\"}}");
    grant_pod_reader("ml", "{\"kind\":\"User\",\"name\":\"alice\"}");
    ok("alice-token", 200, "GET", "/api/v1/namespaces/ml/pods", NULL);
    ok("alice-token", 200, "GET", "/api/v1/namespaces/ml/pods?watch=1&timeoutSeconds=1", NULL);
    ok("alice-token", 404, "GET", "/api/v1/namespaces/ml/pods/p", NULL);
    ok("alice-token", 404, "GET", "/api/v1/namespaces/ml/pods/p/log", NULL);
    denied("alice-token", "GET", "/api/v1/namespaces/default/pods", NULL,
           "in the namespace \"default\"");
    denied("alice-token", "GET", "/api/v1/pods", NULL, "at the cluster scope");
    denied("alice-token", "POST", "/api/v1/namespaces/ml/pods", "{}", "cannot create");
    /* resourceNames: only the named object, and no list. */
    admin(201, "POST", "/api/v1/namespaces/ml/configmaps", "{\"metadata\":{\"name\":\"cfg\"}}");
    ok("alice-token", 200, "GET", "/api/v1/namespaces/ml/configmaps/cfg", NULL);
    denied("alice-token", "GET", "/api/v1/namespaces/ml/configmaps/other", NULL,
           "configmaps \"other\" is forbidden");
    denied("alice-token", "GET", "/api/v1/namespaces/ml/configmaps", NULL, "cannot list");
    /* A list with a field selector on the name is a list of that object. */
    ok("alice-token", 200, "GET",
       "/api/v1/namespaces/ml/configmaps?fieldSelector=metadata.name%3Dcfg", NULL);
    ok("bob-token", 403, "GET", "/api/v1/namespaces/ml/pods", NULL);
}

Test(security, self_subject_access_reviews)
{
    admin(201, "POST", "/api/v1/namespaces", "{\"metadata\":{\"name\":\"ml\"}}");
    grant_pod_reader("ml", "{\"kind\":\"User\",\"name\":\"alice\"}");
    static const char path[] = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews";
    api_resp_t r;
    as("alice-token", &r, 201, "POST", path,
       "{\"apiVersion\":\"authorization.k8s.io/v1\",\"kind\":\"SelfSubjectAccessReview\","
       "\"spec\":{\"resourceAttributes\":{\"namespace\":\"ml\",\"verb\":\"list\","
       "\"resource\":\"pods\"}}}");
    cr_assert_str_eq(api_str(r.json, "status.allowed"), "true");
    cr_assert_str_eq(api_str(r.json, "kind"), "SelfSubjectAccessReview");
    api_free(&r);
    as("alice-token", &r, 201, "POST", path,
       "{\"spec\":{\"resourceAttributes\":{\"namespace\":\"default\",\"verb\":\"list\","
       "\"resource\":\"pods\"}}}");
    cr_assert_str_eq(api_str(r.json, "status.allowed"), "false");
    api_free(&r);
    as("bob-token", &r, 201, "POST", path,
       "{\"spec\":{\"nonResourceAttributes\":{\"verb\":\"get\",\"path\":\"/healthz\"}}}");
    cr_assert_str_eq(api_str(r.json, "status.allowed"), "true");
    api_free(&r);
    as("admin-token", &r, 201, "POST", path,
       "{\"spec\":{\"resourceAttributes\":{\"verb\":\"*\",\"resource\":\"*\"}}}");
    cr_assert_str_eq(api_str(r.json, "status.allowed"), "true");
    api_free(&r);
    as("bob-token", &r, 422, "POST", path, "{\"spec\":{}}");
    api_free(&r);
    ok(NULL, 401, "POST", path, "{\"spec\":{}}");
}

Test(security, groups_and_service_accounts_are_subjects)
{
    admin(201, "POST", "/api/v1/namespaces", "{\"metadata\":{\"name\":\"ml\"}}");
    grant_pod_reader("ml", "{\"kind\":\"Group\",\"name\":\"dev\"},"
                           "{\"kind\":\"ServiceAccount\",\"name\":\"runner\"}");
    ok("alice-token", 200, "GET", "/api/v1/namespaces/ml/pods", NULL);
    ok("sa-token", 200, "GET", "/api/v1/namespaces/ml/pods", NULL);
    ok("bob-token", 403, "GET", "/api/v1/namespaces/ml/pods", NULL);
}

Test(security, cluster_roles_grant_everywhere)
{
    admin(201, "POST", RBAC "/clusterroles",
          "{\"metadata\":{\"name\":\"queue-admin\"},\"rules\":[{\"apiGroups\":["
          "\"scheduling.volcano.sh\"],\"resources\":[\"queues\",\"queues/status\"],"
          "\"verbs\":[\"*\"]},{\"nonResourceURLs\":[\"/metrics\"],\"verbs\":[\"get\"]}]}");
    admin(201, "POST", RBAC "/clusterrolebindings",
          "{\"metadata\":{\"name\":\"bob-queues\"},\"subjects\":[{\"kind\":\"User\",\"name\":"
          "\"bob\"}],\"roleRef\":{\"kind\":\"ClusterRole\",\"name\":\"queue-admin\"}}");
    ok("bob-token", 200, "GET", "/apis/scheduling.volcano.sh/v1beta1/queues", NULL);
    ok("bob-token", 201, "POST", "/apis/scheduling.volcano.sh/v1beta1/queues",
       "{\"metadata\":{\"name\":\"q1\"},\"spec\":{\"weight\":2}}");
    ok("bob-token", 200, "DELETE", "/apis/scheduling.volcano.sh/v1beta1/queues/q1", NULL);
    ok("bob-token", 200, "GET", "/metrics", NULL);
    ok("bob-token", 403, "GET", "/apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups",
       NULL);
    /* A ClusterRole bound by a RoleBinding grants in that namespace only. */
    admin(201, "POST", RBAC "/clusterroles",
          "{\"metadata\":{\"name\":\"cm-reader\"},\"rules\":[{\"apiGroups\":[\"\"],"
          "\"resources\":[\"configmaps\"],\"verbs\":[\"list\"]}]}");
    admin(201, "POST", RBAC "/namespaces/kube-public/rolebindings",
          "{\"metadata\":{\"name\":\"alice-cm\"},\"subjects\":[{\"kind\":\"User\",\"name\":"
          "\"alice\"}],\"roleRef\":{\"kind\":\"ClusterRole\",\"name\":\"cm-reader\"}}");
    ok("alice-token", 200, "GET", "/api/v1/namespaces/kube-public/configmaps", NULL);
    ok("alice-token", 403, "GET", "/api/v1/namespaces/default/configmaps", NULL);
}

Test(security, a_binding_to_a_missing_role_says_so)
{
    admin(201, "POST", RBAC "/clusterrolebindings",
          "{\"metadata\":{\"name\":\"dangling\"},\"subjects\":[{\"kind\":\"User\",\"name\":"
          "\"bob\"}],\"roleRef\":{\"kind\":\"ClusterRole\",\"name\":\"gone\"}}");
    denied("bob-token", "GET", "/api/v1/nodes", NULL,
           "at the cluster scope: RBAC: clusterrole.rbac.authorization.k8s.io \"gone\" not found");
}

Test(security, rbac_writes_cannot_escalate)
{
    /* bob may manage roles and bindings in default, and read pods. */
    admin(201, "POST", RBAC "/namespaces/default/roles",
          "{\"metadata\":{\"name\":\"rbac-admin\"},\"rules\":[{\"apiGroups\":["
          "\"rbac.authorization.k8s.io\"],\"resources\":[\"roles\",\"rolebindings\"],"
          "\"verbs\":[\"create\",\"update\",\"patch\"]},{\"apiGroups\":[\"\"],\"resources\":["
          "\"pods\"],\"verbs\":[\"get\"]}]}");
    admin(201, "POST", RBAC "/namespaces/default/rolebindings",
          "{\"metadata\":{\"name\":\"bob-rbac\"},\"subjects\":[{\"kind\":\"User\",\"name\":"
          "\"bob\"}],\"roleRef\":{\"kind\":\"Role\",\"name\":\"rbac-admin\"}}");
    ok("bob-token", 201, "POST", RBAC "/namespaces/default/roles",
       "{\"metadata\":{\"name\":\"getter\"},\"rules\":[{\"apiGroups\":[\"\"],\"resources\":"
       "[\"pods\"],\"verbs\":[\"get\"]}]}");
    denied("bob-token", "POST", RBAC "/namespaces/default/roles",
           "{\"metadata\":{\"name\":\"deleter\"},\"rules\":[{\"apiGroups\":[\"\"],\"resources\":"
           "[\"pods\"],\"verbs\":[\"get\",\"delete\"]}]}",
           "roles.rbac.authorization.k8s.io \"deleter\" is forbidden: user \"bob\" "
           "(groups=[\"system:authenticated\"]) is attempting to grant RBAC permissions not "
           "currently held:\n{APIGroups:[\"\"], Resources:[\"pods\"], Verbs:[\"get\" \"delete\"]}");
    /* Binding a role whose rules bob holds is fine; cluster-admin is not. */
    ok("bob-token", 201, "POST", RBAC "/namespaces/default/rolebindings",
       "{\"metadata\":{\"name\":\"alice-get\"},\"subjects\":[{\"kind\":\"User\",\"name\":"
       "\"alice\"}],\"roleRef\":{\"kind\":\"Role\",\"name\":\"getter\"}}");
    ok("alice-token", 404, "GET", "/api/v1/namespaces/default/pods/p", NULL);
    denied("bob-token", "POST", RBAC "/namespaces/default/rolebindings",
           "{\"metadata\":{\"name\":\"alice-all\"},\"subjects\":[{\"kind\":\"User\",\"name\":"
           "\"alice\"}],\"roleRef\":{\"kind\":\"ClusterRole\",\"name\":\"cluster-admin\"}}",
           "is attempting to grant RBAC permissions not currently held");
    /* ... unless bob may `bind` it. */
    admin(201, "POST", RBAC "/namespaces/default/roles",
          "{\"metadata\":{\"name\":\"binder\"},\"rules\":[{\"apiGroups\":["
          "\"rbac.authorization.k8s.io\"],\"resources\":[\"clusterroles\"],\"verbs\":[\"bind\"],"
          "\"resourceNames\":[\"cluster-admin\"]}]}");
    admin(201, "POST", RBAC "/namespaces/default/rolebindings",
          "{\"metadata\":{\"name\":\"bob-binds\"},\"subjects\":[{\"kind\":\"User\",\"name\":"
          "\"bob\"}],\"roleRef\":{\"kind\":\"Role\",\"name\":\"binder\"}}");
    ok("bob-token", 201, "POST", RBAC "/namespaces/default/rolebindings",
       "{\"metadata\":{\"name\":\"alice-all\"},\"subjects\":[{\"kind\":\"User\",\"name\":"
       "\"alice\"}],\"roleRef\":{\"kind\":\"ClusterRole\",\"name\":\"cluster-admin\"}}");
    ok("alice-token", 200, "GET", "/api/v1/namespaces/default/secrets", NULL);
}

Test(security, role_ref_is_immutable_and_rbac_objects_are_validated)
{
    admin(201, "POST", RBAC "/namespaces/default/rolebindings",
          "{\"metadata\":{\"name\":\"b\"},\"subjects\":[{\"kind\":\"User\",\"name\":\"x\"}],"
          "\"roleRef\":{\"kind\":\"ClusterRole\",\"name\":\"cluster-admin\"}}");
    api_resp_t r;
    as("admin-token", &r, 200, "GET", RBAC "/namespaces/default/rolebindings/b", NULL);
    cr_assert_str_eq(api_str(r.json, "roleRef.apiGroup"), "rbac.authorization.k8s.io");
    cr_assert(strstr(corral_buf_str(&r.body),
                     "\"name\":\"x\",\"apiGroup\":\"rbac.authorization.k8s.io\""),
              "subjects' apiGroup defaulted: %s", corral_buf_str(&r.body));
    api_free(&r);
    api_srv.token = "admin-token";
    api_req(&r, "PATCH", RBAC "/namespaces/default/rolebindings/b", "application/merge-patch+json",
            "{\"roleRef\":{\"name\":\"system:discovery\"}}");
    cr_assert_eq(r.code, 422, "%s", corral_buf_str(&r.body));
    api_status(&r, "Invalid", 422, "roleRef: Invalid value: cannot change roleRef");
    api_free(&r);
    as("admin-token", &r, 422, "POST", RBAC "/clusterroles",
       "{\"metadata\":{\"name\":\"bad\"},\"rules\":[{\"resources\":[\"pods\"],\"verbs\":[]}]}");
    api_status(&r, "Invalid", 422, "rules[0].verbs: Required value");
    cr_assert(strstr(corral_buf_str(&r.body), "rules[0].apiGroups"), "%s", corral_buf_str(&r.body));
    api_free(&r);
    as("admin-token", &r, 422, "POST", RBAC "/namespaces/default/roles",
       "{\"metadata\":{\"name\":\"bad\"},\"rules\":[{\"nonResourceURLs\":[\"/x\"],\"verbs\":"
       "[\"get\"]}]}");
    api_status(&r, "Invalid", 422, "namespaced rules cannot apply to non-resource URLs");
    api_free(&r);
    as("admin-token", &r, 422, "POST", RBAC "/clusterrolebindings",
       "{\"metadata\":{\"name\":\"bad\"},\"subjects\":[{\"kind\":\"ServiceAccount\",\"name\":"
       "\"sa\"}],\"roleRef\":{\"kind\":\"Role\",\"name\":\"r\"}}");
    api_status(&r, "Invalid", 422, "roleRef.kind: Unsupported value: \"Role\"");
    cr_assert(strstr(corral_buf_str(&r.body), "subjects[0].namespace: Required value"), "%s",
              corral_buf_str(&r.body));
    api_free(&r);
}

TestSuite(tls, .init = start_tls, .fini = api_stop, .timeout = 30);

Test(tls, https_with_a_token)
{
    admin(200, "GET", "/api/v1/namespaces", NULL);
    admin(201, "POST", "/api/v1/namespaces/default/configmaps",
          "{\"metadata\":{\"name\":\"over-tls\"},\"data\":{\"k\":\"v\"}}");
    api_resp_t r;
    as("admin-token", &r, 200, "GET", "/api/v1/namespaces/default/configmaps/over-tls", NULL);
    cr_assert_str_eq(api_str(r.json, "data.k"), "v");
    api_free(&r);
    ok("wrong", 401, "GET", "/api/v1/namespaces", NULL);
    /* Plain HTTP on the TLS port gets no HTTP answer. */
    int fd = api_connect();
    api_send(fd, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
    char buf[256] = "";
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    cr_assert(n <= 0 || strncmp(buf, "HTTP/1.1 200", 12) != 0, "plain HTTP answered: %s", buf);
    close(fd);
}

Test(tls, bad_certificates_are_refused_at_start)
{
    corral_apiserver_opts_t o;
    memset(&o, 0, sizeof(o));
    char dir[128];
    snprintf(dir, sizeof(dir), "%s/other", api_srv.dir);
    o.data_dir = dir;
    o.listen = "127.0.0.1:0";
    o.tls_cert_file = api_write_file(api_srv.dir, "junk.pem", "not a certificate");
    o.tls_key_file = o.tls_cert_file;
    corral_apiserver_t *s = NULL;
    char err[256] = "";
    cr_assert_neq(corral_apiserver_new(&o, &s, err, sizeof(err)), 0);
    cr_assert(strstr(err, "junk.pem"), "%s", err);
    o.tls_key_file = NULL;
    cr_assert_neq(corral_apiserver_new(&o, &s, err, sizeof(err)), 0);
    cr_assert(strstr(err, "go together"), "%s", err);
    o.tls_cert_file = NULL;
    o.token_auth_file = api_write_file(api_srv.dir, "bad.csv", "a,b\n");
    cr_assert_neq(corral_apiserver_new(&o, &s, err, sizeof(err)), 0);
    cr_assert(strstr(err, "bad.csv:1: token file must have at least 3 columns"), "%s", err);
}
