/* The resources kubectl 1.32 looks for, over HTTP: ServiceAccounts (the
 * default one of every namespace, tokens and their authentication),
 * Services, Endpoints, ResourceQuotas and LimitRanges (validation and
 * defaults as upstream; the `kubernetes` Service and Endpoints),
 * SelfSubjectReview and SelfSubjectRulesReview, the scale subresource of
 * Volcano Jobs and InferenceServices, discovery of all of it, and
 * impersonation (Impersonate-User/Group/Uid/Extra-*, authorized by the
 * impersonate verb). */
#include <sys/stat.h>

#include "api_test.h"

#define TOKENS                                                                                     \
    "admin-token,admin,1,\"system:masters\"\n"                                                     \
    "alice-token,alice,2,\"dev\"\n"

static void with_tokens(corral_apiserver_opts_t *o)
{
    o->token_auth_file = api_write_file(api_srv.dir, "tokens.csv", TOKENS);
}

static void start_secure(void)
{
    api_start_with(with_tokens);
    api_srv.token = "admin-token";
}

TestSuite(res, .init = start_secure, .fini = api_stop, .timeout = 30);
TestSuite(res_open, .init = api_start, .fini = api_stop, .timeout = 30);

#define NS   "/api/v1/namespaces/default"
#define RBAC "/apis/rbac.authorization.k8s.io/v1"

/* api_req with extra request headers (NULL-terminated) and a token. */
static void req_h(api_resp_t *r, const char *token, const char *method, const char *path,
                  const char *body, const char *const *headers)
{
    api_req_h(r, method, path, NULL, body, token, headers);
}

static void expect(long code, const char *method, const char *path, const char *body)
{
    api_resp_t r;
    API_EXPECT(&r, code, method, path, NULL, body);
    api_free(&r);
}

/* 422 whose message contains each of the NULL-terminated msgs. */
static void invalid(const char *path, const char *body, const char *const *msgs)
{
    api_resp_t r;
    API_EXPECT(&r, 422, "POST", path, NULL, body);
    for (size_t i = 0; msgs[i]; i++)
        api_status(&r, "Invalid", 422, msgs[i]);
    api_free(&r);
}

/* --- the kinds ----------------------------------------------------------------------------- */

Test(res, services_default_and_validate_as_upstream)
{
    api_resp_t r;
    API_EXPECT(&r, 201, "POST", NS "/services", NULL,
               "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"web\"},"
               "\"spec\":{\"selector\":{\"app\":\"web\"},\"ports\":[{\"name\":\"http\",\"port\":80,"
               "\"targetPort\":\"http\"},{\"name\":\"https\",\"port\":443}]}}");
    cr_assert_str_eq(api_str(r.json, "spec.type"), "ClusterIP");
    cr_assert_str_eq(api_str(r.json, "spec.sessionAffinity"), "None");
    corral_val_t *ports = corral_val_dig(r.json, "spec.ports");
    cr_assert_eq(ports->n, 2);
    cr_assert_str_eq(api_str(ports->items[0], "protocol"), "TCP");
    cr_assert_str_eq(api_str(ports->items[0], "targetPort"), "http");
    cr_assert_str_eq(api_str(ports->items[1], "targetPort"), "443", "targetPort defaults to port");
    cr_assert_null(api_str(r.json, "spec.clusterIP"), "no cluster IP is allocated");
    api_free(&r);
    static const char *const bad[] = {"spec.type: unsupported value \"Cluster\"",
                                      "spec.ports[0].port: Invalid value: 0",
                                      "spec.ports[0].targetPort: Invalid value: 70000",
                                      "spec.ports[0].protocol: unsupported value \"tcp\"",
                                      "spec.ports[1].targetPort: Invalid value: \"Bad--name\"",
                                      "spec.ports[1].name: Required value",
                                      NULL};
    invalid(NS "/services",
            "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"bad\"},"
            "\"spec\":{\"type\":\"Cluster\",\"ports\":[{\"port\":0,\"targetPort\":70000,"
            "\"protocol\":\"tcp\"},{\"port\":80,\"targetPort\":\"Bad--name\"}]}}",
            bad);
    static const char *const noports[] = {"spec.ports: Required value", NULL};
    invalid(NS "/services",
            "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"bad\"},"
            "\"spec\":{}}",
            noports);
    static const char *const dup[] = {"spec.ports[1].name: Duplicate value: \"a\"", NULL};
    invalid(NS "/services",
            "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"bad\"},"
            "\"spec\":{\"ports\":[{\"name\":\"a\",\"port\":1},{\"name\":\"a\",\"port\":2}]}}",
            dup);
    /* Headless and ExternalName services need no ports. */
    expect(201, "POST", NS "/services",
           "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"headless\"},"
           "\"spec\":{\"clusterIP\":\"None\"}}");
    expect(201, "POST", NS "/services",
           "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"ext\"},"
           "\"spec\":{\"type\":\"ExternalName\",\"externalName\":\"db.example.com\"}}");
    /* Status is a subresource. */
    expect(200, "GET", NS "/services/web/status", NULL);
}

Test(res, quotas_limit_ranges_endpoints_and_service_accounts)
{
    api_resp_t r;
    API_EXPECT(&r, 201, "POST", NS "/resourcequotas", NULL,
               "{\"apiVersion\":\"v1\",\"kind\":\"ResourceQuota\",\"metadata\":{\"name\":\"q\"},"
               "\"spec\":{\"hard\":{\"requests.nvidia.com/gpu\":\"8\",\"pods\":\"10\"}}}");
    api_free(&r);
    expect(200, "GET", NS "/resourcequotas/q/status", NULL);
    static const char *const neg[] = {"spec.hard.pods: must be greater than or equal to 0", NULL};
    invalid(NS "/resourcequotas",
            "{\"apiVersion\":\"v1\",\"kind\":\"ResourceQuota\",\"metadata\":{\"name\":\"n\"},"
            "\"spec\":{\"hard\":{\"pods\":\"-1\"}}}",
            neg);
    API_EXPECT(&r, 201, "POST", NS "/limitranges", NULL,
               "{\"apiVersion\":\"v1\",\"kind\":\"LimitRange\",\"metadata\":{\"name\":\"l\"},"
               "\"spec\":{\"limits\":[{\"type\":\"Container\",\"max\":{\"cpu\":\"8\"},"
               "\"min\":{\"memory\":\"1Gi\"}}]}}");
    corral_val_t *item = corral_val_dig(r.json, "spec.limits")->items[0];
    cr_assert_str_eq(api_str(item, "default.cpu"), "8", "default from max");
    cr_assert_str_eq(api_str(item, "defaultRequest.cpu"), "8", "defaultRequest from default");
    cr_assert_str_eq(api_str(item, "defaultRequest.memory"), "1Gi", "then from min");
    api_free(&r);
    static const char *const order[] = {
        "spec.limits[0].min[cpu]: Invalid value: \"2\": min value 2 is greater than max value 1",
        NULL};
    invalid(NS "/limitranges",
            "{\"apiVersion\":\"v1\",\"kind\":\"LimitRange\",\"metadata\":{\"name\":\"b\"},"
            "\"spec\":{\"limits\":[{\"type\":\"Container\",\"max\":{\"cpu\":\"1\"},"
            "\"min\":{\"cpu\":\"2\"}}]}}",
            order);
    static const char *const pod[] = {"may not be specified when `type` is 'Pod'", NULL};
    invalid(NS "/limitranges",
            "{\"apiVersion\":\"v1\",\"kind\":\"LimitRange\",\"metadata\":{\"name\":\"b\"},"
            "\"spec\":{\"limits\":[{\"type\":\"Pod\",\"default\":{\"cpu\":\"1\"}}]}}",
            pod);
    static const char *const ep[] = {"subsets[0].addresses[0].ip: Invalid value: \"nope\"",
                                     "subsets[0].ports: Required value", NULL};
    invalid(NS "/endpoints",
            "{\"apiVersion\":\"v1\",\"kind\":\"Endpoints\",\"metadata\":{\"name\":\"e\"},"
            "\"subsets\":[{\"addresses\":[{\"ip\":\"nope\"}]}]}",
            ep);
    API_EXPECT(&r, 201, "POST", NS "/endpoints", NULL,
               "{\"apiVersion\":\"v1\",\"kind\":\"Endpoints\",\"metadata\":{\"name\":\"e\"},"
               "\"subsets\":[{\"addresses\":[{\"ip\":\"10.0.0.1\"}],\"ports\":[{\"port\":80}]}]}");
    corral_val_t *eports = corral_val_get(corral_val_dig(r.json, "subsets")->items[0], "ports");
    cr_assert_str_eq(api_str(eports->items[0], "protocol"), "TCP");
    api_free(&r);
    expect(201, "POST", NS "/serviceaccounts",
           "{\"apiVersion\":\"v1\",\"kind\":\"ServiceAccount\",\"metadata\":{\"name\":\"robot\"},"
           "\"automountServiceAccountToken\":false}");
    expect(404, "GET", NS "/serviceaccounts/robot/status", NULL);
}

Test(res, bootstrap_service_accounts_and_the_kubernetes_service)
{
    static const char *const nss[] = {"default", "kube-system", "kube-public", "kube-node-lease"};
    char path[256];
    for (size_t i = 0; i < 4; i++) {
        snprintf(path, sizeof(path), "/api/v1/namespaces/%s/serviceaccounts/default", nss[i]);
        expect(200, "GET", path, NULL);
    }
    api_resp_t r;
    API_EXPECT(&r, 200, "GET", NS "/services/kubernetes", NULL, NULL);
    cr_assert_str_eq(api_str(r.json, "spec.clusterIP"), "10.96.0.1");
    api_free(&r);
    API_EXPECT(&r, 200, "GET", NS "/endpoints/kubernetes", NULL, NULL);
    corral_val_t *ss = corral_val_dig(r.json, "subsets")->items[0];
    cr_assert_str_eq(api_str(corral_val_get(ss, "addresses")->items[0], "ip"), "127.0.0.1");
    char port[16];
    snprintf(port, sizeof(port), "%d", api_srv.port);
    cr_assert_str_eq(api_str(corral_val_get(ss, "ports")->items[0], "port"), port);
    api_free(&r);
    /* A new namespace gets its default ServiceAccount, as kube's controller does. */
    expect(201, "POST", "/api/v1/namespaces",
           "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"team\"}}");
    expect(200, "GET", "/api/v1/namespaces/team/serviceaccounts/default", NULL);
    /* cluster-info's list. */
    API_EXPECT(&r, 200, "GET",
               "/api/v1/namespaces/kube-system/services?labelSelector=kubernetes.io%2Fcluster-"
               "service%3Dtrue",
               NULL, NULL);
    api_free(&r);
}

Test(res, discovery_lists_the_new_resources_and_subresources)
{
    api_resp_t r;
    API_EXPECT(&r, 200, "GET", "/api/v1", NULL, NULL);
    static const char *const want[] = {"\"serviceaccounts\"",         "\"serviceaccounts/token\"",
                                       "\"services/status\"",         "\"resourcequotas/status\"",
                                       "\"shortNames\":[\"limits\"]", "\"shortNames\":[\"ep\"]"};
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(want); i++)
        cr_assert(strstr(corral_buf_str(&r.body), want[i]), "no %s", want[i]);
    api_free(&r);
    API_EXPECT(&r, 200, "GET", "/apis", NULL, NULL);
    cr_assert(strstr(corral_buf_str(&r.body), "\"authentication.k8s.io/v1\""));
    cr_assert(strstr(corral_buf_str(&r.body), "\"authorization.k8s.io/v1\""));
    api_free(&r);
    API_EXPECT(&r, 200, "GET", "/apis/authorization.k8s.io/v1", NULL, NULL);
    cr_assert(strstr(corral_buf_str(&r.body), "\"selfsubjectrulesreviews\""));
    api_free(&r);
    API_EXPECT(&r, 200, "GET", "/apis/batch.volcano.sh/v1alpha1", NULL, NULL);
    cr_assert(strstr(corral_buf_str(&r.body),
                     "\"name\":\"jobs/scale\",\"singularName\":\"\",\"namespaced\":true,"
                     "\"group\":\"autoscaling\",\"version\":\"v1\",\"kind\":\"Scale\""),
              "%s", corral_buf_str(&r.body));
    api_free(&r);
    expect(200, "GET", "/apis/authentication.k8s.io/v1", NULL);
    expect(200, "GET", "/apis/authentication.k8s.io", NULL);
}

/* --- tokens ------------------------------------------------------------------------------------
 */

static const char *new_token(api_resp_t *r, const char *sa, const char *body)
{
    char path[256];
    snprintf(path, sizeof(path), NS "/serviceaccounts/%s/token", sa);
    API_EXPECT(r, 201, "POST", path, NULL, body);
    cr_assert_str_eq(api_str(r->json, "kind"), "TokenRequest");
    cr_assert_not_null(api_str(r->json, "status.expirationTimestamp"));
    return api_str(r->json, "status.token");
}

static void whoami(const char *token, long code, const char *user)
{
    api_resp_t r;
    req_h(&r, token, "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", "{}", NULL);
    cr_assert_eq(r.code, code, "%ld %s", r.code, corral_buf_str(&r.body));
    if (user)
        cr_assert_str_eq(api_str(r.json, "status.userInfo.username"), user);
    api_free(&r);
}

Test(res, service_account_tokens_authenticate_while_the_account_lives)
{
    const char *sa = "{\"apiVersion\":\"v1\",\"kind\":\"ServiceAccount\",\"metadata\":{\"name\":"
                     "\"robot\"}}";
    expect(201, "POST", NS "/serviceaccounts", sa);
    api_resp_t t;
    const char *tok = new_token(&t, "robot", "{\"spec\":{\"expirationSeconds\":1200}}");
    cr_assert_str_eq(api_str(t.json, "spec.expirationSeconds"), "1200");
    api_resp_t r;
    req_h(&r, tok, "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", "{}", NULL);
    cr_assert_eq(r.code, 201);
    cr_assert_str_eq(api_str(r.json, "status.userInfo.username"),
                     "system:serviceaccount:default:robot");
    const corral_val_t *g = corral_val_dig(r.json, "status.userInfo.groups");
    cr_assert_eq(g->n, 3);
    cr_assert_str_eq(g->items[0]->s, "system:serviceaccounts");
    cr_assert_str_eq(g->items[1]->s, "system:serviceaccounts:default");
    cr_assert_str_eq(g->items[2]->s, "system:authenticated");
    api_free(&r);
    /* RBAC applies to it: nothing granted yet. */
    req_h(&r, tok, "GET", NS "/pods", NULL, NULL);
    api_status(&r, "Forbidden", 403,
               "User \"system:serviceaccount:default:robot\" cannot list resource \"pods\"");
    api_free(&r);
    /* A tampered token is refused. */
    char *bad = strdup(tok);
    bad[strlen(bad) - 2] = bad[strlen(bad) - 2] == 'A' ? 'B' : 'A';
    whoami(bad, 401, NULL);
    free(bad);
    /* Deleted and recreated: another uid, the old token is dead. */
    expect(200, "DELETE", NS "/serviceaccounts/robot", NULL);
    whoami(tok, 401, NULL);
    expect(201, "POST", NS "/serviceaccounts", sa);
    whoami(tok, 401, NULL);
    api_free(&t);
    /* Validation and missing accounts. */
    expect(404, "POST", NS "/serviceaccounts/nobody/token", "{}");
    api_req(&r, "POST", NS "/serviceaccounts/robot/token", NULL,
            "{\"spec\":{\"expirationSeconds\":60}}");
    api_status(&r, "Invalid", 422, "may not specify a duration less than 10 minutes");
    api_free(&r);
    /* Another audience is not for this server. */
    tok = new_token(&t, "robot", "{\"spec\":{\"audiences\":[\"vault\"]}}");
    whoami(tok, 401, NULL);
    api_free(&t);
    tok = new_token(&t, "robot", "");
    whoami(tok, 201, "system:serviceaccount:default:robot");
    api_free(&t);
    /* The key is the server's alone. */
    char key[128];
    snprintf(key, sizeof(key), "%s/sa-signing.key", api_srv.dir);
    struct stat st;
    cr_assert_eq(stat(key, &st), 0);
    cr_assert_eq(st.st_mode & 0777, 0600);
    cr_assert_eq(st.st_size, 32);
}

Test(res_open, tokens_and_impersonation_without_authentication_set_who_you_are)
{
    expect(201, "POST", NS "/serviceaccounts",
           "{\"apiVersion\":\"v1\",\"kind\":\"ServiceAccount\",\"metadata\":{\"name\":\"r\"}}");
    whoami(NULL, 201, "system:anonymous");
    api_resp_t t;
    const char *tok = new_token(&t, "r", "{}");
    whoami(tok, 201, "system:serviceaccount:default:r");
    api_free(&t);
    static const char *const as_bob[] = {"Impersonate-User: bob", NULL};
    api_resp_t r;
    req_h(&r, NULL, "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", "{}", as_bob);
    cr_assert_eq(r.code, 201);
    cr_assert_str_eq(api_str(r.json, "status.userInfo.username"), "bob");
    api_free(&r);
    req_h(&r, NULL, "GET", NS "/pods", NULL, as_bob);
    cr_assert_eq(r.code, 200, "no authorization without a token file");
    api_free(&r);
    req_h(&r, NULL, "POST", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
          "{\"spec\":{\"namespace\":\"default\"}}", NULL);
    cr_assert_eq(r.code, 201);
    cr_assert(strstr(corral_buf_str(&r.body), "\"resourceRules\":[{\"verbs\":[\"*\"],"
                                              "\"apiGroups\":[\"*\"],\"resources\":[\"*\"]}]"),
              "%s", corral_buf_str(&r.body));
    api_free(&r);
}

/* --- reviews and impersonation
 * --------------------------------------------------------------------- */

Test(res, self_subject_rules_reviews_list_the_rules_that_apply)
{
    expect(201, "POST", RBAC "/namespaces/default/roles",
           "{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"Role\",\"metadata\":"
           "{\"name\":\"pods\"},\"rules\":[{\"apiGroups\":[\"\"],\"resources\":[\"pods\"],"
           "\"verbs\":[\"get\",\"list\"],\"resourceNames\":[\"p\"]}]}");
    expect(201, "POST", RBAC "/namespaces/default/rolebindings",
           "{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"RoleBinding\",\"metadata\":"
           "{\"name\":\"pods\"},\"roleRef\":{\"apiGroup\":\"rbac.authorization.k8s.io\",\"kind\":"
           "\"Role\",\"name\":\"pods\"},\"subjects\":[{\"kind\":\"Group\",\"name\":\"dev\"}]}");
    api_resp_t r;
    const char *body = "{\"apiVersion\":\"authorization.k8s.io/v1\",\"kind\":"
                       "\"SelfSubjectRulesReview\",\"spec\":{\"namespace\":\"default\"}}";
    req_h(&r, "alice-token", "POST", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", body,
          NULL);
    cr_assert_eq(r.code, 201, "%s", corral_buf_str(&r.body));
    const char *b = corral_buf_str(&r.body);
    cr_assert(strstr(b, "{\"verbs\":[\"get\",\"list\"],\"apiGroups\":[\"\"],\"resources\":"
                        "[\"pods\"],\"resourceNames\":[\"p\"]}"),
              "%s", b);
    cr_assert(strstr(b, "\"selfsubjectreviews\""), "basic-user's rules: %s", b);
    cr_assert(strstr(b, "\"nonResourceURLs\":[\"/api\""), "%s", b);
    cr_assert(strstr(b, "\"incomplete\":false"), "%s", b);
    api_free(&r);
    /* In another namespace the Role does not apply. */
    req_h(&r, "alice-token", "POST", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
          "{\"spec\":{\"namespace\":\"kube-system\"}}", NULL);
    cr_assert_null(strstr(corral_buf_str(&r.body), "\"pods\""));
    api_free(&r);
    whoami("alice-token", 201, "alice");
}

Test(res, impersonation_needs_the_impersonate_verb)
{
    static const char *const as_bob[] = {"Impersonate-User: bob", "Impersonate-Group: dev",
                                         "Impersonate-Group: ops", NULL};
    api_resp_t r;
    req_h(&r, "alice-token", "GET", NS "/pods", NULL, as_bob);
    api_status(&r, "Forbidden", 403,
               "users \"bob\" is forbidden: User \"alice\" cannot impersonate resource \"users\" "
               "in API group \"\" at the cluster scope");
    api_free(&r);
    /* A master may; the request then runs as bob (denied), with his groups. */
    req_h(&r, "admin-token", "GET", NS "/pods", NULL, as_bob);
    api_status(&r, "Forbidden", 403, "User \"bob\" cannot list resource \"pods\"");
    api_free(&r);
    req_h(&r, "admin-token", "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", "{}",
          as_bob);
    cr_assert_eq(r.code, 201);
    cr_assert_str_eq(api_str(r.json, "status.userInfo.username"), "bob");
    const corral_val_t *g = corral_val_dig(r.json, "status.userInfo.groups");
    cr_assert_eq(g->n, 3);
    cr_assert_str_eq(g->items[2]->s, "system:authenticated");
    api_free(&r);
    /* Groups without a user: kube's 500. */
    static const char *const only_group[] = {"Impersonate-Group: dev", NULL};
    req_h(&r, "admin-token", "GET", NS "/pods", NULL, only_group);
    cr_assert_eq(r.code, 500);
    api_free(&r);
    /* Grant alice users and groups, but not the group ops. */
    expect(201, "POST", RBAC "/clusterroles",
           "{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"ClusterRole\",\"metadata\":"
           "{\"name\":\"imp\"},\"rules\":[{\"apiGroups\":[\"\"],\"resources\":[\"users\"],"
           "\"verbs\":[\"impersonate\"]},{\"apiGroups\":[\"\"],\"resources\":[\"groups\"],"
           "\"verbs\":[\"impersonate\"],\"resourceNames\":[\"dev\"]},{\"apiGroups\":"
           "[\"authentication.k8s.io\"],\"resources\":[\"userextras/scopes\"],\"verbs\":"
           "[\"impersonate\"]}]}");
    expect(
        201, "POST", RBAC "/clusterrolebindings",
        "{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"ClusterRoleBinding\","
        "\"metadata\":{\"name\":\"imp\"},\"roleRef\":{\"apiGroup\":\"rbac.authorization.k8s.io\","
        "\"kind\":\"ClusterRole\",\"name\":\"imp\"},\"subjects\":[{\"kind\":\"User\",\"name\":"
        "\"alice\"}]}");
    req_h(&r, "alice-token", "GET", NS "/pods", NULL, as_bob);
    api_status(
        &r, "Forbidden", 403,
        "groups \"ops\" is forbidden: User \"alice\" cannot impersonate resource \"groups\"");
    api_free(&r);
    static const char *const ok[] = {"Impersonate-User: bob", "Impersonate-Group: dev",
                                     "Impersonate-Extra-Scopes: view", NULL};
    req_h(&r, "alice-token", "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", "{}", ok);
    cr_assert_eq(r.code, 201, "%s", corral_buf_str(&r.body));
    cr_assert(strstr(corral_buf_str(&r.body), "\"extra\":{\"scopes\":[\"view\"]}"), "%s",
              corral_buf_str(&r.body));
    api_free(&r);
    static const char *const uid[] = {"Impersonate-User: bob", "Impersonate-Uid: 42", NULL};
    req_h(&r, "alice-token", "GET", NS "/pods", NULL, uid);
    api_status(&r, "Forbidden", 403,
               "uids.authentication.k8s.io \"42\" is forbidden: User \"alice\" cannot impersonate "
               "resource \"uids\" in API group \"authentication.k8s.io\"");
    api_free(&r);
    /* A service account user: serviceaccounts in its namespace, its groups. */
    static const char *const as_sa[] = {"Impersonate-User: system:serviceaccount:ml:runner", NULL};
    req_h(&r, "alice-token", "GET", NS "/pods", NULL, as_sa);
    api_status(&r, "Forbidden", 403,
               "serviceaccounts \"runner\" is forbidden: User \"alice\" cannot impersonate "
               "resource \"serviceaccounts\" in API group \"\" in the namespace \"ml\"");
    api_free(&r);
    req_h(&r, "admin-token", "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", "{}",
          as_sa);
    g = corral_val_dig(r.json, "status.userInfo.groups");
    cr_assert_eq(g->n, 3, "%s", corral_buf_str(&r.body));
    cr_assert_str_eq(g->items[1]->s, "system:serviceaccounts:ml");
    api_free(&r);
}

/* --- scale --------------------------------------------------------------------------------------
 */

#define JOB(name, tasks)                                                                           \
    "{\"apiVersion\":\"batch.volcano.sh/"                                                          \
    "v1alpha1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"" name "\"},\"spec\":{\"tasks\":[" tasks \
    "]}}"
#define TASK(name, n)                                                                              \
    "{\"name\":\"" name "\",\"replicas\":" #n                                                      \
    ",\"template\":{\"spec\":{\"containers\":[{\"name\":"                                          \
    "\"c\",\"image\":\"busybox\"}]}}}"
#define JOBS "/apis/batch.volcano.sh/v1alpha1/namespaces/default/jobs"
#define ISVC "/apis/serving.kserve.io/v1beta1/namespaces/default/inferenceservices"

Test(res, scale_volcano_jobs_with_one_task)
{
    expect(201, "POST", JOBS, JOB("one", TASK("w", 4)));
    api_resp_t r;
    API_EXPECT(&r, 200, "GET", JOBS "/one/scale", NULL, NULL);
    cr_assert_str_eq(api_str(r.json, "kind"), "Scale");
    cr_assert_str_eq(api_str(r.json, "apiVersion"), "autoscaling/v1");
    cr_assert_str_eq(api_str(r.json, "spec.replicas"), "4");
    cr_assert_str_eq(api_str(r.json, "status.replicas"), "0");
    cr_assert_str_eq(api_str(r.json, "status.selector"), "volcano.sh/job-name=one");
    api_free(&r);
    API_EXPECT(&r, 200, "PUT", JOBS "/one/scale", NULL,
               "{\"apiVersion\":\"autoscaling/v1\",\"kind\":\"Scale\",\"metadata\":{\"name\":"
               "\"one\"},\"spec\":{\"replicas\":2}}");
    cr_assert_str_eq(api_str(r.json, "spec.replicas"), "2");
    api_free(&r);
    API_EXPECT(&r, 200, "GET", JOBS "/one", NULL, NULL);
    cr_assert_str_eq(api_str(corral_val_dig(r.json, "spec.tasks")->items[0], "replicas"), "2");
    cr_assert_str_eq(api_str(corral_val_dig(r.json, "spec.tasks")->items[0], "minAvailable"), "2",
                     "minAvailable lowered to the replicas");
    cr_assert_str_eq(api_str(r.json, "spec.minAvailable"), "2");
    cr_assert_str_eq(api_str(r.json, "metadata.generation"), "2");
    api_free(&r);
    /* PATCH (kubectl scale's), and a stale resourceVersion on PUT. */
    API_EXPECT(&r, 200, "PATCH", JOBS "/one/scale", "application/merge-patch+json",
               "{\"spec\":{\"replicas\":6}}");
    cr_assert_str_eq(api_str(r.json, "spec.replicas"), "6");
    api_free(&r);
    expect(409, "PUT", JOBS "/one/scale",
           "{\"kind\":\"Scale\",\"metadata\":{\"name\":\"one\",\"resourceVersion\":\"1\"},"
           "\"spec\":{\"replicas\":3}}");
    api_req(&r, "PUT", JOBS "/one/scale", NULL, "{\"kind\":\"Scale\",\"spec\":{\"replicas\":-1}}");
    api_status(&r, "Invalid", 422, "spec.replicas: Invalid value: -1");
    api_free(&r);
    /* Several tasks: the scale is read, not written. */
    expect(201, "POST", JOBS, JOB("two", TASK("a", 1) "," TASK("b", 2)));
    API_EXPECT(&r, 200, "GET", JOBS "/two/scale", NULL, NULL);
    cr_assert_str_eq(api_str(r.json, "spec.replicas"), "3");
    api_free(&r);
    api_req(&r, "PATCH", JOBS "/two/scale", "application/merge-patch+json",
            "{\"spec\":{\"replicas\":5}}");
    api_status(&r, "Invalid", 422, "this job has 2");
    api_free(&r);
    expect(404, "GET", JOBS "/none/scale", NULL);
    expect(404, "GET", "/api/v1/namespaces/default/pods/x/scale", NULL);
}

Test(res, scale_inference_services_through_the_predictor)
{
    expect(201, "POST", ISVC,
           "{\"apiVersion\":\"serving.kserve.io/v1beta1\",\"kind\":\"InferenceService\","
           "\"metadata\":{\"name\":\"llm\"},\"spec\":{\"predictor\":{\"maxReplicas\":2,"
           "\"model\":{\"modelFormat\":{\"name\":\"pytorch\"},\"storageUri\":\"s3://m\"}}}}");
    api_resp_t r;
    API_EXPECT(&r, 200, "GET", ISVC "/llm/scale", NULL, NULL);
    cr_assert_str_eq(api_str(r.json, "spec.replicas"), "1", "KServe's default minReplicas");
    cr_assert_str_eq(api_str(r.json, "status.selector"), "serving.kserve.io/inferenceservice=llm");
    api_free(&r);
    API_EXPECT(&r, 200, "PATCH", ISVC "/llm/scale", "application/merge-patch+json",
               "{\"spec\":{\"replicas\":3}}");
    api_free(&r);
    API_EXPECT(&r, 200, "GET", ISVC "/llm", NULL, NULL);
    cr_assert_str_eq(api_str(r.json, "spec.predictor.minReplicas"), "3");
    cr_assert_str_eq(api_str(r.json, "spec.predictor.maxReplicas"), "3", "raised to fit");
    api_free(&r);
    API_EXPECT(&r, 200, "PATCH", ISVC "/llm/scale", "application/json-patch+json",
               "[{\"op\":\"replace\",\"path\":\"/spec/replicas\",\"value\":0}]");
    cr_assert_str_eq(api_str(r.json, "spec.replicas"), "0");
    api_free(&r);
}
