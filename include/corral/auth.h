/*
 * Authentication and authorization building blocks of the API server, as
 * pure functions: kube-apiserver's static token file
 * (--token-auth-file: `token,user,uid,"group1,group2"` CSV lines) and
 * RBAC rule and subject matching with kube's semantics. The server
 * (src/apiserver/authz.c) combines them with the Role and binding objects
 * it stores; tests and the fuzz target (tests/fuzz/fuzz_tokens.c) call them
 * directly.
 */
#ifndef CORRAL_AUTH_H
#define CORRAL_AUTH_H

#include <stdbool.h>
#include <stddef.h>

#include "corral/model.h"

#define CORRAL_GROUP_MASTERS         "system:masters"
#define CORRAL_GROUP_AUTHENTICATED   "system:authenticated"
#define CORRAL_GROUP_UNAUTHENTICATED "system:unauthenticated"
#define CORRAL_USER_ANONYMOUS        "system:anonymous"

/* An authenticated user: name, uid and groups. Every user from a token file
 * is also in system:authenticated (added at load, as kube does). */
typedef struct corral_user {
    const char *name;
    const char *uid;
    const char **groups;
    size_t ngroups;
} corral_user_t;

/* Is the user in group g? */
bool corral_user_in_group(const corral_user_t *u, const char *g);

/* --- static token file ----------------------------------------------------------------- */

typedef struct corral_tokens corral_tokens_t;

/*
 * Parse a token file's text (len bytes, need not be NUL-terminated): CSV
 * records of at least three fields (token, user name, uid), an optional
 * fourth holding comma-separated groups, fields optionally double-quoted
 * (with "" for a quote), blank lines skipped. A later record for a token
 * already seen replaces it (kube warns and does the same). file names the
 * input in messages. Returns 0 and *out (free with corral_tokens_free), or
 * CORRAL_EINVAL with "FILE:LINE: message" in err.
 */
int corral_tokens_parse(const char *text, size_t len, const char *file, corral_tokens_t **out,
                        char *err, size_t errlen);
/* Read and parse a token file (at most 16 MiB). */
int corral_tokens_load(const char *path, corral_tokens_t **out, char *err, size_t errlen);
void corral_tokens_free(corral_tokens_t *t);
/* Number of distinct tokens. */
size_t corral_tokens_count(const corral_tokens_t *t);
/* The user a bearer token belongs to, or NULL. Borrowed from t. */
const corral_user_t *corral_tokens_find(const corral_tokens_t *t, const char *token, size_t len);

/* --- RBAC ----------------------------------------------------------------------------- */

/* What a request asks to do (kube's authorizer.Attributes). Resource
 * requests name a verb (get, list, watch, create, update, patch, delete,
 * deletecollection, or bind/escalate for RBAC checks), an API group ("" for
 * core), a resource, an optional subresource ("log" of pods/log), a
 * namespace ("" at the cluster scope) and a name ("" for collections).
 * Other requests (discovery, /healthz) name a path and the lower-case HTTP
 * method as verb. */
typedef struct corral_authz_attrs {
    const corral_user_t *user;
    const char *verb;
    bool resource_request;
    const char *api_group;
    const char *api_version;
    const char *resource;
    const char *subresource;
    const char *namespace;
    const char *name;
    const char *path;
} corral_authz_attrs_t;

/* Does rule allow the request? As kube's RuleAllows: verbs and apiGroups
 * match exactly or by "*"; resources match "*", the resource (or
 * "resource/subresource" for a subresource), or "*\/subresource";
 * resourceNames, when present, must include the name; non-resource paths
 * match exactly or by a trailing '*' prefix. */
bool corral_rbac_rule_allows(const corral_policy_rule_t *rule, const corral_authz_attrs_t *a);

/* Does subject s name user u? binding_ns is the binding's namespace
 * (RoleBinding; NULL for ClusterRoleBinding): a ServiceAccount subject
 * without a namespace means one in binding_ns. ServiceAccounts are users
 * named "system:serviceaccount:NAMESPACE:NAME". */
bool corral_rbac_subject_matches(const corral_subject_t *s, const corral_user_t *u,
                                 const char *binding_ns);

/* kube's message for a denied request, without the leading
 * "<resource> \"<name>\" is forbidden: " (e.g. `User "alice" cannot list
 * resource "pods" in API group "" in the namespace "ml"`), into out. */
void corral_rbac_forbidden_message(const corral_authz_attrs_t *a, char *out, size_t len);

#endif
