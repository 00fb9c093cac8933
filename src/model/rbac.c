/*
 * RBAC kinds (rbac.authorization.k8s.io/v1): Role, ClusterRole, RoleBinding
 * and ClusterRoleBinding, which the API server evaluates to authorize
 * requests (src/apiserver/authz.c). Validation follows kube-apiserver's
 * (pkg/apis/rbac/validation) with its messages: a rule needs verbs; a
 * resource rule needs apiGroups and resources; non-resource URLs only in
 * ClusterRoles and never mixed with resources; a roleRef names a Role (from
 * a RoleBinding only) or a ClusterRole in this API group; subjects are
 * Users, Groups or ServiceAccounts, the latter with a namespace in
 * ClusterRoleBindings.
 */
#include <string.h>

#include "model/model_int.h"

#define RBAC_GROUP "rbac.authorization.k8s.io"

/* --- Role, ClusterRole ----------------------------------------------------------------- */

static const corral__field_t rule_fields[] = {
    CORRAL__F("verbs", corral__dec_strlist, corral_policy_rule_t, verbs),
    CORRAL__F("apiGroups", corral__dec_strlist, corral_policy_rule_t, api_groups),
    CORRAL__F("resources", corral__dec_strlist, corral_policy_rule_t, resources),
    CORRAL__F("resourceNames", corral__dec_strlist, corral_policy_rule_t, resource_names),
    CORRAL__F("nonResourceURLs", corral__dec_strlist, corral_policy_rule_t, non_resource_urls),
};

/* kube's ValidatePolicyRule; namespaced for the rules of a Role. */
static void check_rule(corral__dec_t *d, const corral_val_t *v, const corral_policy_rule_t *r,
                       bool namespaced)
{
    if (r->verbs.n == 0)
        corral__dec_err_field(d, v, "verbs",
                              "Required value: verbs must contain at least one value");
    if (r->non_resource_urls.n > 0) {
        const corral_val_t *at = corral_val_get(v, "nonResourceURLs");
        if (namespaced)
            corral__dec_err_field(d, at, "nonResourceURLs",
                                  "Invalid value: namespaced rules cannot apply to non-resource "
                                  "URLs");
        if (r->api_groups.n || r->resources.n || r->resource_names.n)
            corral__dec_err_field(d, at, "nonResourceURLs",
                                  "Invalid value: rules cannot apply to both regular resources and "
                                  "non-resource URLs");
        return;
    }
    if (r->api_groups.n == 0)
        corral__dec_err_field(d, v, "apiGroups",
                              "Required value: resource rules must supply at least one api group "
                              "(\"\" is the core group, \"*\" every group)");
    if (r->resources.n == 0)
        corral__dec_err_field(d, v, "resources",
                              "Required value: resource rules must supply at least one resource");
}

static void dec_rule(corral__dec_t *d, const corral_val_t *v, void *out)
{
    CORRAL__DEC_MAP(d, v, rule_fields, out);
}

static void dec_rules(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_role_t *r = out;
    corral__dec_seq(d, v, sizeof(corral_policy_rule_t), dec_rule, (void **)&r->rules, &r->nrules);
}

static const corral__field_t role_fields[] = {
    CORRAL__TOP_FIELDS,
    CORRAL__WHOLE("rules", dec_rules),
    CORRAL__KEEP("aggregationRule"),
};

void corral__kind_role(corral__dec_t *d, const corral_val_t *root, corral_obj_t *o)
{
    corral_role_t *r = corral_arena_alloc(d->a, sizeof(*r));
    o->u.role = r;
    CORRAL__DEC_MAP(d, root, role_fields, r);
    const corral_val_t *rules = corral_val_get(root, "rules");
    bool namespaced = o->info->kind == CORRAL_KIND_ROLE;
    for (size_t i = 0; i < r->nrules && rules && i < rules->n; i++) {
        size_t m = corral__dec_enter(d, "rules");
        size_t m2 = corral__dec_enter_index(d, i);
        check_rule(d, rules->items[i], &r->rules[i], namespaced);
        corral__dec_leave(d, m2);
        corral__dec_leave(d, m);
    }
}

/* --- RoleBinding, ClusterRoleBinding ------------------------------------------------------ */

static const corral__field_t subject_fields[] = {
    CORRAL__F("kind", corral__dec_str, corral_subject_t, kind),
    CORRAL__F("apiGroup", corral__dec_str, corral_subject_t, api_group),
    CORRAL__F("name", corral__dec_str, corral_subject_t, name),
    CORRAL__F("namespace", corral__dec_str, corral_subject_t, namespace),
};

static void dec_subject(corral__dec_t *d, const corral_val_t *v, void *out)
{
    CORRAL__DEC_MAP(d, v, subject_fields, out);
}

static void dec_subjects(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_role_binding_t *b = out;
    corral__dec_seq(d, v, sizeof(corral_subject_t), dec_subject, (void **)&b->subjects,
                    &b->nsubjects);
}

static const corral__field_t role_ref_fields[] = {
    CORRAL__F("apiGroup", corral__dec_str, corral_role_ref_t, api_group),
    CORRAL__F("kind", corral__dec_str, corral_role_ref_t, kind),
    CORRAL__F("name", corral__dec_str, corral_role_ref_t, name),
};

static void dec_role_ref(corral__dec_t *d, const corral_val_t *v, void *out)
{
    CORRAL__DEC_MAP(d, v, role_ref_fields, out);
}

static const corral__field_t binding_fields[] = {
    CORRAL__TOP_FIELDS,
    CORRAL__WHOLE("subjects", dec_subjects),
    CORRAL__F("roleRef", dec_role_ref, corral_role_binding_t, role_ref),
};

static bool eq(const char *a, const char *b)
{
    return a && strcmp(a, b) == 0;
}

static void check_role_ref(corral__dec_t *d, const corral_val_t *root, const corral_role_ref_t *r,
                           bool namespaced)
{
    const corral_val_t *rv = corral_val_get(root, "roleRef");
    if (!rv) {
        corral__dec_err_field(d, root, "roleRef",
                              "Required value: the Role or ClusterRole to bind");
        return;
    }
    /* An absent apiGroup is defaulted (corral_obj_default), as upstream. */
    if (r->api_group && *r->api_group && !eq(r->api_group, RBAC_GROUP))
        corral__dec_err_field(d, corral_val_get(rv, "apiGroup"), "roleRef.apiGroup",
                              "Unsupported value: \"%s\": supported values: \"" RBAC_GROUP "\"",
                              r->api_group ? r->api_group : "");
    if (!eq(r->kind, "ClusterRole") && !(namespaced && eq(r->kind, "Role")))
        corral__dec_err_field(d, corral_val_get(rv, "kind"), "roleRef.kind",
                              "Unsupported value: \"%s\": supported values: %s",
                              r->kind ? r->kind : "",
                              namespaced ? "\"Role\", \"ClusterRole\"" : "\"ClusterRole\"");
    if (!r->name || !*r->name)
        corral__dec_err_field(d, rv, "roleRef.name", "Required value");
    else if (strchr(r->name, '/') || strchr(r->name, '%') || !strcmp(r->name, ".") ||
             !strcmp(r->name, ".."))
        corral__dec_err_field(d, corral_val_get(rv, "name"), "roleRef.name",
                              "Invalid value: \"%s\": may not contain '/' or '%%' and may not be "
                              "'.' or '..'",
                              r->name);
}

static void check_subject(corral__dec_t *d, const corral_val_t *v, const corral_subject_t *s,
                          bool namespaced)
{
    if (!s->name || !*s->name)
        corral__dec_err_field(d, v, "name", "Required value");
    const char *g = s->api_group ? s->api_group : "";
    if (eq(s->kind, "ServiceAccount")) {
        if (*g)
            corral__dec_err_field(d, corral_val_get(v, "apiGroup"), "apiGroup",
                                  "Unsupported value: \"%s\": supported values: \"\"", g);
        if (s->name && *s->name && corral__dns1123_subdomain_error(s->name))
            corral__dec_err_field(d, corral_val_get(v, "name"), "name", "Invalid value: \"%s\": %s",
                                  s->name, corral__dns1123_subdomain_error(s->name));
        if (!namespaced && (!s->namespace || !*s->namespace))
            corral__dec_err_field(d, v, "namespace", "Required value");
    } else if (eq(s->kind, "User") || eq(s->kind, "Group")) {
        if (*g && strcmp(g, RBAC_GROUP) != 0) /* "" is defaulted */
            corral__dec_err_field(d, corral_val_get(v, "apiGroup"), "apiGroup",
                                  "Unsupported value: \"%s\": supported values: \"" RBAC_GROUP "\"",
                                  g);
    } else {
        corral__dec_err_field(d, corral_val_get(v, "kind"), "kind",
                              "Unsupported value: \"%s\": supported values: \"ServiceAccount\", "
                              "\"User\", \"Group\"",
                              s->kind ? s->kind : "");
    }
}

void corral__kind_role_binding(corral__dec_t *d, const corral_val_t *root, corral_obj_t *o)
{
    corral_role_binding_t *b = corral_arena_alloc(d->a, sizeof(*b));
    o->u.binding = b;
    CORRAL__DEC_MAP(d, root, binding_fields, b);
    bool namespaced = o->info->kind == CORRAL_KIND_ROLEBINDING;
    check_role_ref(d, root, &b->role_ref, namespaced);
    const corral_val_t *subjects = corral_val_get(root, "subjects");
    for (size_t i = 0; i < b->nsubjects && subjects && i < subjects->n; i++) {
        size_t m = corral__dec_enter(d, "subjects");
        size_t m2 = corral__dec_enter_index(d, i);
        check_subject(d, subjects->items[i], &b->subjects[i], namespaced);
        corral__dec_leave(d, m2);
        corral__dec_leave(d, m);
    }
}
