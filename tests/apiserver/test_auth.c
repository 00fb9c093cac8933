/* The pure parts of authentication and authorization: kube-apiserver's
 * static token file (CSV quoting, groups, blank lines, duplicates, errors
 * with their line), bearer token lookup, RBAC rule matching (verbs,
 * groups, resources and subresources, resource names, non-resource URLs),
 * subject matching and kube's forbidden message. */
#include <criterion/criterion.h>
#include <string.h>

#include "corral/auth.h"

TestSuite(auth, .timeout = 10);

static corral_tokens_t *parse_ok(const char *text)
{
    corral_tokens_t *t = NULL;
    char err[256] = "";
    cr_assert_eq(corral_tokens_parse(text, strlen(text), "tokens.csv", &t, err, sizeof(err)), 0,
                 "%s", err);
    return t;
}

static void parse_err(const char *text, const char *want)
{
    corral_tokens_t *t = NULL;
    char err[256] = "";
    cr_assert_eq(corral_tokens_parse(text, strlen(text), "tokens.csv", &t, err, sizeof(err)),
                 CORRAL_EINVAL, "accepted %s", text);
    cr_assert_null(t);
    cr_assert(strstr(err, want), "error \"%s\" lacks \"%s\"", err, want);
}

static const corral_user_t *find(const corral_tokens_t *t, const char *tok)
{
    return corral_tokens_find(t, tok, strlen(tok));
}

Test(auth, token_file_as_kube_apiserver_reads_it)
{
    corral_tokens_t *t = parse_ok("t1,admin,1,\"system:masters\"\n"
                                  "\n"
                                  "  t2, bob , 2, \"dev, ml,\"\r\n"
                                  "t3,carol,3\n"
                                  "\"t,4\",\"d\"\"q\",4,\"multi\nline\"\n"
                                  ",nobody,5\n");
    cr_assert_eq(corral_tokens_count(t), 4);
    const corral_user_t *u = find(t, "t1");
    cr_assert_str_eq(u->name, "admin");
    cr_assert_str_eq(u->uid, "1");
    cr_assert_eq(u->ngroups, 2);
    cr_assert(corral_user_in_group(u, CORRAL_GROUP_MASTERS));
    cr_assert(corral_user_in_group(u, CORRAL_GROUP_AUTHENTICATED), "added to every user");
    u = find(t, "t2");
    cr_assert_str_eq(u->name, "bob ", "only leading blanks are trimmed, as encoding/csv");
    cr_assert(corral_user_in_group(u, "dev") && corral_user_in_group(u, "ml"));
    cr_assert_eq(u->ngroups, 3);
    cr_assert_eq(find(t, "t3")->ngroups, 1);
    cr_assert_str_eq(find(t, "t,4")->name, "d\"q");
    cr_assert(corral_user_in_group(find(t, "t,4"), "multi\nline"));
    cr_assert_null(find(t, "t"));
    cr_assert_null(find(t, "t11"));
    cr_assert_null(find(t, ""), "an empty token is never a user");
    corral_tokens_free(t);
}

Test(auth, later_records_replace_earlier_ones)
{
    corral_tokens_t *t = parse_ok("tok,first,1\ntok,second,2\n");
    cr_assert_eq(corral_tokens_count(t), 1);
    cr_assert_str_eq(find(t, "tok")->name, "second");
    corral_tokens_free(t);
}

Test(auth, bad_token_files_name_the_line)
{
    parse_err("a,b,c\nonly,two\n", "tokens.csv:2: token file must have at least 3 columns");
    parse_err("a,b\"c,d\n", "tokens.csv:1: a quote inside an unquoted field");
    parse_err("a,\"b\"x,c\n", "tokens.csv:1: unexpected text after a closing quote");
    parse_err("x,y,z\na,b,\"c\n", "tokens.csv:2: a quoted field is never closed");
    corral_tokens_t *t = NULL;
    char err[256];
    cr_assert_eq(corral_tokens_parse("a,b,c\0d\n", 8, "t", &t, err, sizeof(err)), CORRAL_EINVAL);
    cr_assert(strstr(err, "NUL"), "%s", err);
    cr_assert_eq(corral_tokens_load("/nonexistent/tokens.csv", &t, err, sizeof(err)),
                 CORRAL_ENOENT);
    cr_assert(strstr(err, "/nonexistent/tokens.csv"), "%s", err);
}

Test(auth, long_tokens)
{
    static char text[4096], tok[2001];
    memset(tok, 'x', 2000);
    snprintf(text, sizeof(text), "%s,long,1\n", tok);
    corral_tokens_t *t = parse_ok(text);
    cr_assert_str_eq(find(t, tok)->name, "long");
    tok[1999] = 'y';
    cr_assert_null(find(t, tok));
    corral_tokens_free(t);
}

Test(auth, empty_file_has_no_users)
{
    corral_tokens_t *t = parse_ok("\n\n");
    cr_assert_eq(corral_tokens_count(t), 0);
    corral_tokens_free(t);
}

/* --- rules ----------------------------------------------------------------------------------- */

#define LIST(...)                                                                                  \
    {                                                                                              \
        (const char *[]){__VA_ARGS__}, sizeof((const char *[]){__VA_ARGS__}) / sizeof(char *)      \
    }
#define NONE                                                                                       \
    {                                                                                              \
        NULL, 0                                                                                    \
    }

static corral_authz_attrs_t res(const char *verb, const char *group, const char *resource,
                                const char *sub, const char *ns, const char *name)
{
    corral_authz_attrs_t a;
    memset(&a, 0, sizeof(a));
    a.verb = verb;
    a.resource_request = true;
    a.api_group = group;
    a.resource = resource;
    a.subresource = sub;
    a.namespace = ns;
    a.name = name;
    return a;
}

Test(auth, rules_match_verbs_groups_and_resources)
{
    corral_policy_rule_t r = {LIST("get", "list"), LIST(""), LIST("pods"), NONE, NONE};
    corral_authz_attrs_t a = res("get", "", "pods", "", "ml", "p");
    cr_assert(corral_rbac_rule_allows(&r, &a));
    a.verb = "delete";
    cr_assert_not(corral_rbac_rule_allows(&r, &a));
    a = res("get", "batch.volcano.sh", "pods", "", "ml", "p");
    cr_assert_not(corral_rbac_rule_allows(&r, &a), "another group");
    a = res("get", "", "pods", "log", "ml", "p");
    cr_assert_not(corral_rbac_rule_allows(&r, &a), "pods does not grant pods/log");
    corral_policy_rule_t star = {LIST("*"), LIST("*"), LIST("*"), NONE, NONE};
    a = res("deletecollection", "scheduling.volcano.sh", "queues", "", "", "");
    cr_assert(corral_rbac_rule_allows(&star, &a));
}

Test(auth, rules_match_subresources)
{
    corral_policy_rule_t r = {LIST("get"), LIST(""), LIST("pods/log"), NONE, NONE};
    corral_authz_attrs_t a = res("get", "", "pods", "log", "ml", "p");
    cr_assert(corral_rbac_rule_allows(&r, &a));
    a = res("get", "", "pods", "", "ml", "p");
    cr_assert_not(corral_rbac_rule_allows(&r, &a), "pods/log does not grant pods");
    corral_policy_rule_t any_status = {LIST("update"), LIST("*"), LIST("*/status"), NONE, NONE};
    a = res("update", "scheduling.volcano.sh", "queues", "status", "", "q");
    cr_assert(corral_rbac_rule_allows(&any_status, &a));
    a.subresource = "";
    cr_assert_not(corral_rbac_rule_allows(&any_status, &a));
}

Test(auth, resource_names_limit_to_named_objects)
{
    corral_policy_rule_t r = {LIST("get", "update"), LIST(""), LIST("configmaps"), LIST("cfg"),
                              NONE};
    corral_authz_attrs_t a = res("get", "", "configmaps", "", "ml", "cfg");
    cr_assert(corral_rbac_rule_allows(&r, &a));
    a.name = "other";
    cr_assert_not(corral_rbac_rule_allows(&r, &a));
    a = res("list", "", "configmaps", "", "ml", "");
    r.verbs = (corral_strlist_t)LIST("list");
    cr_assert_not(corral_rbac_rule_allows(&r, &a), "a list has no name to match");
}

Test(auth, non_resource_urls_match_exactly_or_by_prefix)
{
    corral_policy_rule_t r = {LIST("get"), NONE, NONE, NONE, LIST("/healthz", "/apis/*")};
    corral_authz_attrs_t a;
    memset(&a, 0, sizeof(a));
    a.verb = "get";
    a.path = "/healthz";
    cr_assert(corral_rbac_rule_allows(&r, &a));
    a.path = "/apis/batch.volcano.sh/v1alpha1";
    cr_assert(corral_rbac_rule_allows(&r, &a));
    a.path = "/healthz/etcd";
    cr_assert_not(corral_rbac_rule_allows(&r, &a));
    a.verb = "post";
    a.path = "/healthz";
    cr_assert_not(corral_rbac_rule_allows(&r, &a));
    a = res("get", "", "pods", "", "", "");
    cr_assert_not(corral_rbac_rule_allows(&r, &a), "URL rules grant no resources");
}

Test(auth, subjects_name_users_groups_and_service_accounts)
{
    const char *groups[] = {"ml", CORRAL_GROUP_AUTHENTICATED};
    corral_user_t alice = {"alice", "1", groups, 2};
    corral_user_t sa = {"system:serviceaccount:ml:runner", "2", groups + 1, 1};
    corral_subject_t s = {"User", "rbac.authorization.k8s.io", "alice", NULL};
    cr_assert(corral_rbac_subject_matches(&s, &alice, NULL));
    cr_assert_not(corral_rbac_subject_matches(&s, &sa, NULL));
    s = (corral_subject_t){"Group", "rbac.authorization.k8s.io", "ml", NULL};
    cr_assert(corral_rbac_subject_matches(&s, &alice, NULL));
    s.name = CORRAL_GROUP_AUTHENTICATED;
    cr_assert(corral_rbac_subject_matches(&s, &sa, NULL));
    s = (corral_subject_t){"ServiceAccount", "", "runner", "ml"};
    cr_assert(corral_rbac_subject_matches(&s, &sa, NULL));
    s.namespace = NULL;
    cr_assert(corral_rbac_subject_matches(&s, &sa, "ml"), "the RoleBinding's namespace");
    cr_assert_not(corral_rbac_subject_matches(&s, &sa, "other"));
    cr_assert_not(corral_rbac_subject_matches(&s, &sa, NULL));
    s.name = "run";
    cr_assert_not(corral_rbac_subject_matches(&s, &sa, "ml"));
}

Test(auth, forbidden_messages_use_kube_wording)
{
    const char *groups[] = {CORRAL_GROUP_AUTHENTICATED};
    corral_user_t alice = {"alice", "1", groups, 1};
    char msg[512];
    corral_authz_attrs_t a = res("list", "", "pods", "", "ml", "");
    a.user = &alice;
    corral_rbac_forbidden_message(&a, msg, sizeof(msg));
    cr_assert_str_eq(msg, "User \"alice\" cannot list resource \"pods\" in API group \"\" in the "
                          "namespace \"ml\"");
    a = res("get", "", "pods", "log", "ml", "p");
    a.user = &alice;
    corral_rbac_forbidden_message(&a, msg, sizeof(msg));
    cr_assert_str_eq(msg,
                     "User \"alice\" cannot get resource \"pods/log\" in API group \"\" in the "
                     "namespace \"ml\"");
    a = res("create", "scheduling.volcano.sh", "queues", "", "", "");
    a.user = &alice;
    corral_rbac_forbidden_message(&a, msg, sizeof(msg));
    cr_assert_str_eq(msg, "User \"alice\" cannot create resource \"queues\" in API group "
                          "\"scheduling.volcano.sh\" at the cluster scope");
    memset(&a, 0, sizeof(a));
    a.user = &alice;
    a.verb = "get";
    a.path = "/metrics";
    corral_rbac_forbidden_message(&a, msg, sizeof(msg));
    cr_assert_str_eq(msg, "User \"alice\" cannot get path \"/metrics\"");
}
