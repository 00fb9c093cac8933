/*
 * Authentication and authorization of every request, when the server runs
 * with --token-auth-file (without it every request is allowed, as before).
 *
 * Authentication: `Authorization: Bearer TOKEN` must name a token of the
 * file (else 401 Unauthorized). A request without the header is
 * system:anonymous in group system:unauthenticated: it gets only what RBAC
 * grants that group (the bootstrap system:public-info-viewer role: health
 * and version), and 401 otherwise, never 403.
 *
 * Authorization: members of system:masters may do everything; everybody
 * else what the stored RBAC objects grant (the ClusterRoleBindings, and the
 * RoleBindings of the request's namespace), evaluated per request from the
 * loop's store reader, so a new binding takes effect on the next request.
 * Node agents (system:node:NAME in system:nodes) are first asked of the
 * Node authorizer (nodeauthz.c), then of RBAC like everybody else.
 * A denial is kube's 403 Forbidden with its wording. The request's
 * attributes (verb, group, resource, subresource, namespace, name) are
 * derived from the method and path as kube's RequestInfoFactory does, not
 * from the route table, so an unknown resource is denied (403) before it
 * is found missing (404).
 *
 * Writes of RBAC objects are checked for privilege escalation as upstream:
 * a Role or ClusterRole may only grant what its author holds (or the author
 * has the `escalate` verb on it), and a binding only a role whose rules its
 * author holds (or the `bind` verb on that role). A binding's roleRef
 * cannot change.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "apiserver/apiserver_int.h"

static const char *const anon_groups[] = {CORRAL_GROUP_UNAUTHENTICATED};
static const corral_user_t anonymous = {CORRAL_USER_ANONYMOUS, "", (const char **)anon_groups, 1};

/* --- request attributes --------------------------------------------------------------- */

static const char *lower_method(corral_arena_t *a, const char *m)
{
    char *s = corral_arena_strdup(a, m);
    for (char *p = s; *p; p++)
        *p = (char)((*p >= 'A' && *p <= 'Z') ? *p + 32 : *p);
    return s;
}

static const char *method_verb(const char *m)
{
    if (!strcmp(m, "POST"))
        return "create";
    if (!strcmp(m, "GET") || !strcmp(m, "HEAD"))
        return "get";
    if (!strcmp(m, "PUT"))
        return "update";
    if (!strcmp(m, "PATCH"))
        return "patch";
    if (!strcmp(m, "DELETE"))
        return "delete";
    return "";
}

/* metadata.name=NAME when the field selector requires exactly that. */
static const char *selector_name(corral__req_t *r)
{
    const char *fs = corral__param(r, "fieldSelector");
    if (!fs || !*fs)
        return NULL;
    corral_selector_t sel;
    char why[64];
    if (corral_fieldsel_parse(r->a, fs, strlen(fs), &sel, why, sizeof(why)) != 0)
        return NULL;
    for (size_t i = 0; i < sel.n; i++) {
        const corral_sel_req_t *q = &sel.reqs[i];
        if (strcmp(q->key, "metadata.name") == 0 && q->op == CORRAL_SEL_EQ && q->nvalues == 1 &&
            !strchr(q->values[0], '/') && !strchr(q->values[0], '%') && *q->values[0])
            return q->values[0];
    }
    return NULL;
}

/* Resource parts after /api/VERSION or /apis/GROUP/VERSION. */
static void resource_parts(corral__req_t *r, corral_authz_attrs_t *a, const char **seg, size_t n)
{
    if (n >= 2 && !strcmp(seg[0], "watch") && !strcmp(a->verb, "get")) {
        a->verb = "watch";
        seg++;
        n--;
    }
    if (n >= 1 && !strcmp(seg[0], "namespaces")) {
        if (n > 1) {
            a->namespace = seg[1];
            if (n > 2 && strcmp(seg[2], "status") != 0 && strcmp(seg[2], "finalize") != 0) {
                seg += 2;
                n -= 2;
            }
        }
    }
    if (n >= 3 && strcmp(a->verb, "watch") != 0)
        a->subresource = seg[2];
    if (n >= 2)
        a->name = seg[1];
    if (n >= 1)
        a->resource = seg[0];
    if (!*a->name && !strcmp(a->verb, "get")) {
        bool watch = false;
        const char *w = corral__param(r, "watch");
        watch = w && (!*w || !strcmp(w, "true") || !strcmp(w, "1") || !strcasecmp(w, "True"));
        a->verb = watch ? "watch" : "list";
        const char *name = selector_name(r);
        if (name)
            a->name = name;
    }
    if (!*a->name && !strcmp(a->verb, "delete"))
        a->verb = "deletecollection";
}

void corral__request_attrs(corral__req_t *r, corral_authz_attrs_t *a)
{
    memset(a, 0, sizeof(*a));
    a->user = r->user;
    a->api_group = a->api_version = a->resource = a->subresource = a->namespace = a->name = "";
    a->path = r->path;
    a->verb = lower_method(r->a, r->method);
    const char *seg[64];
    size_t n = 0;
    const char *p = r->path;
    while (*p && n < CORRAL_ARRAY_LEN(seg)) {
        while (*p == '/')
            p++;
        if (!*p)
            break;
        const char *slash = strchr(p, '/');
        size_t len = slash ? (size_t)(slash - p) : strlen(p);
        seg[n++] = corral_arena_strndup(r->a, p, len);
        p += len;
    }
    size_t used;
    if (n >= 3 && !strcmp(seg[0], "api")) {
        a->api_version = seg[1];
        used = 2;
    } else if (n >= 4 && !strcmp(seg[0], "apis")) {
        a->api_group = seg[1];
        a->api_version = seg[2];
        used = 3;
    } else {
        return; /* a non-resource request: verb is the method */
    }
    a->resource_request = true;
    a->verb = method_verb(r->method);
    resource_parts(r, a, seg + used, n - used);
}

/* --- RBAC evaluation ------------------------------------------------------------------- */

typedef struct rules {
    corral_policy_rule_t *items;
    size_t n, cap;
    char reason[256]; /* "RBAC: clusterrole... not found", when one is missing */
} rules_t;

typedef struct binding_ref {
    const char *kind, *name;
} binding_ref_t;

typedef struct collect {
    corral__req_t *r;
    const corral_user_t *user;
    const char *ns; /* RoleBindings' namespace, NULL for ClusterRoleBindings */
    binding_ref_t *refs;
    size_t n, cap;
} collect_t;

static corral_obj_t *decode_row(corral_arena_t *a, const char *json, size_t len)
{
    corral_val_t *v = corral__json_tree(a, json, len);
    if (!v)
        return NULL;
    corral_diag_t d;
    corral_diag_init(&d);
    corral_obj_t *o = NULL;
    int rc = corral_obj_decode(a, v, NULL, &d, &o);
    corral_diag_fini(&d);
    return rc == 0 ? o : NULL;
}

/* A binding row: remember its roleRef when a subject names the user. */
static int binding_cb(void *ctx, const corral_store_row_t *row)
{
    collect_t *c = ctx;
    corral_obj_t *o = decode_row(c->r->a, row->json, row->json_len);
    if (!o)
        return 0;
    const corral_role_binding_t *b = o->u.binding;
    for (size_t i = 0; i < b->nsubjects; i++) {
        if (!corral_rbac_subject_matches(&b->subjects[i], c->user, c->ns))
            continue;
        if (c->n == c->cap) {
            size_t ncap = c->cap ? 2 * c->cap : 8;
            c->refs = corral_arena_grow(c->r->a, c->refs, c->cap * sizeof(*c->refs),
                                        ncap * sizeof(*c->refs));
            c->cap = ncap;
        }
        c->refs[c->n].kind = b->role_ref.kind;
        c->refs[c->n].name = b->role_ref.name;
        c->n++;
        break;
    }
    return 0;
}

static void add_role_rules(corral__req_t *r, rules_t *out, const binding_ref_t *ref, const char *ns)
{
    bool cluster = strcmp(ref->kind, "ClusterRole") == 0;
    const corral__res_t *res =
        corral__res_of_kind(cluster ? CORRAL_KIND_CLUSTERROLE : CORRAL_KIND_ROLE);
    corral_store_row_t row;
    if (corral_store_get(corral__rd(r), res->key, cluster ? "" : ns, ref->name, r->a, &row) != 0) {
        if (!out->reason[0])
            snprintf(out->reason, sizeof(out->reason),
                     "RBAC: %s.rbac.authorization.k8s.io \"%s\" "
                     "not found",
                     cluster ? "clusterrole" : "role", ref->name);
        return;
    }
    corral_obj_t *o = decode_row(r->a, row.json, row.json_len);
    if (!o)
        return;
    const corral_role_t *role = o->u.role;
    for (size_t i = 0; i < role->nrules; i++) {
        if (out->n == out->cap) {
            size_t ncap = out->cap ? 2 * out->cap : 16;
            out->items = corral_arena_grow(r->a, out->items, out->cap * sizeof(*out->items),
                                           ncap * sizeof(*out->items));
            out->cap = ncap;
        }
        out->items[out->n++] = role->rules[i];
    }
}

/* Every rule that applies to user in namespace ns ("" at the cluster scope):
 * the ClusterRoleBindings', and the RoleBindings' of ns. */
static void collect_rules(corral__req_t *r, const corral_user_t *user, const char *ns, rules_t *out)
{
    memset(out, 0, sizeof(*out));
    collect_t c;
    memset(&c, 0, sizeof(c));
    c.r = r;
    c.user = user;
    int64_t rev;
    corral_store_list(corral__rd(r), corral__res_of_kind(CORRAL_KIND_CLUSTERROLEBINDING)->key, NULL,
                      NULL, NULL, binding_cb, &c, &rev);
    for (size_t i = 0; i < c.n; i++)
        add_role_rules(r, out, &c.refs[i], "");
    if (!ns || !*ns)
        return;
    c.n = 0;
    c.ns = ns;
    corral_store_list(corral__rd(r), corral__res_of_kind(CORRAL_KIND_ROLEBINDING)->key, ns, NULL,
                      NULL, binding_cb, &c, &rev);
    for (size_t i = 0; i < c.n; i++)
        add_role_rules(r, out, &c.refs[i], ns);
}

static bool rules_allow(const rules_t *rules, const corral_authz_attrs_t *a)
{
    for (size_t i = 0; i < rules->n; i++) {
        if (corral_rbac_rule_allows(&rules->items[i], a))
            return true;
    }
    return false;
}

/* --- the checks ------------------------------------------------------------------------- */

static void unauthorized(corral__req_t *r)
{
    corral_buf_t b;
    corral_buf_init(&b);
    corral__status_json(&b, 401, "Failure", "Unauthorized", "Unauthorized");
    corral__reply_buf(r, 401, &b);
}

/* kube's NewForbidden: "<resource>[.<group>] ["<name>"] is forbidden: <msg>". */
static void forbidden(corral__req_t *r, const corral_authz_attrs_t *a, const char *msg)
{
    corral_buf_t b, m;
    corral_buf_init(&b);
    corral_buf_init(&m);
    if (!a->resource_request || !*a->resource)
        corral_buf_puts(&m, "forbidden: ");
    else {
        corral_buf_puts(&m, a->resource);
        if (*a->api_group)
            corral_buf_printf(&m, ".%s", a->api_group);
        if (*a->name)
            corral_buf_printf(&m, " \"%s\"", a->name);
        corral_buf_puts(&m, " is forbidden: ");
    }
    corral_buf_puts(&m, msg);
    corral_buf_puts(&b, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
                        "\"status\":\"Failure\",\"message\":");
    corral_json_quote(&b, m.p, m.len);
    corral_buf_puts(&b, ",\"reason\":\"Forbidden\",\"details\":{");
    bool comma = false;
    if (a->resource_request && *a->name) {
        corral_buf_puts(&b, "\"name\":");
        corral_json_quote(&b, a->name, strlen(a->name));
        comma = true;
    }
    if (a->resource_request && *a->api_group) {
        corral_buf_puts(&b, comma ? ",\"group\":" : "\"group\":");
        corral_json_quote(&b, a->api_group, strlen(a->api_group));
        comma = true;
    }
    if (a->resource_request && *a->resource) {
        corral_buf_puts(&b, comma ? ",\"kind\":" : "\"kind\":");
        corral_json_quote(&b, a->resource, strlen(a->resource));
    }
    corral_buf_puts(&b, "},\"code\":403}");
    corral_buf_fini(&m);
    corral__reply_buf(r, 403, &b);
}

static bool is_master(const corral_user_t *u)
{
    return corral_user_in_group(u, CORRAL_GROUP_MASTERS);
}

/* The bearer token of the request: NULL when there is no Authorization
 * header, "" when there is one that is not a bearer token. */
static const char *bearer(corral__req_t *r, size_t *len)
{
    size_t hl = 0;
    const char *h = corral_http_header(r->http, "authorization", &hl);
    if (!h)
        return NULL;
    if (hl < 7 || strncasecmp(h, "Bearer ", 7) != 0) {
        *len = 0;
        return "";
    }
    h += 7;
    hl -= 7;
    while (hl && (*h == ' ' || *h == '\t')) {
        h++;
        hl--;
    }
    *len = hl;
    return h;
}

/* --- impersonation ---------------------------------------------------------------------------- */

typedef struct imp {
    const char *user, *uid;
    const char **groups;
    size_t ngroups;
    corral_val_t *extra; /* key -> [values] */
    bool any;
} imp_t;

static bool header_is(const corral_http_header_t *h, const char *name)
{
    return h->name_len == strlen(name) && strncasecmp(h->name, name, h->name_len) == 0;
}

/* The Impersonate-* headers of r. Extra keys are lower-cased and
 * percent-decoded as kube does. */
static void imp_headers(corral__req_t *r, imp_t *im)
{
    static const char extra[] = "impersonate-extra-";
    memset(im, 0, sizeof(*im));
    const corral_http_request_t *h = r->http;
    im->groups = corral_arena_alloc(r->a, (h->nheaders + 1) * sizeof(*im->groups));
    for (size_t i = 0; i < h->nheaders; i++) {
        const corral_http_header_t *x = &h->headers[i];
        const char *v = corral_arena_strndup(r->a, x->value, x->value_len);
        if (header_is(x, "impersonate-user")) {
            im->user = v;
        } else if (header_is(x, "impersonate-uid")) {
            im->uid = v;
        } else if (header_is(x, "impersonate-group")) {
            im->groups[im->ngroups++] = v;
        } else if (x->name_len > sizeof(extra) - 1 &&
                   strncasecmp(x->name, extra, sizeof(extra) - 1) == 0) {
            char *key = corral_arena_strndup(r->a, x->name + sizeof(extra) - 1,
                                             x->name_len - (sizeof(extra) - 1));
            char *o = key;
            for (const char *p = key; *p; p++) {
                unsigned hi, lo;
                if (*p == '%' && sscanf(p + 1, "%1x%1x", &hi, &lo) == 2) {
                    *o++ = (char)(hi << 4 | lo);
                    p += 2;
                } else {
                    *o++ = (char)((*p >= 'A' && *p <= 'Z') ? *p + 32 : *p);
                }
            }
            *o = '\0';
            if (!im->extra)
                im->extra = corral_val_new(r->a, CORRAL_VAL_MAP);
            corral_val_t *vals = corral_val_get(im->extra, key);
            if (!vals) {
                vals = corral_val_new(r->a, CORRAL_VAL_SEQ);
                corral_val_set(r->a, im->extra, key, vals);
            }
            corral_val_push(r->a, vals, corral_val_new_str(r->a, v));
        } else {
            continue;
        }
        im->any = true;
    }
}

/* May user do attrs a (verb impersonate)? */
static bool may(corral__req_t *r, const corral_user_t *u, const corral_authz_attrs_t *a)
{
    if (is_master(u))
        return true;
    rules_t rules;
    collect_rules(r, u, a->namespace, &rules);
    return rules_allow(&rules, a);
}

/* Check one impersonation; 403 and false when the requester may not. */
static bool imp_check(corral__req_t *r, const char *group, const char *resource, const char *sub,
                      const char *ns, const char *name)
{
    if (!r->srv->tokens)
        return true;
    corral_authz_attrs_t a;
    memset(&a, 0, sizeof(a));
    a.user = r->user;
    a.verb = "impersonate";
    a.resource_request = true;
    a.api_group = group;
    a.api_version = "";
    a.resource = resource;
    a.subresource = sub;
    a.namespace = ns;
    a.name = name;
    a.path = r->path;
    if (may(r, r->user, &a))
        return true;
    char msg[1024];
    corral_rbac_forbidden_message(&a, msg, sizeof(msg));
    forbidden(r, &a, msg);
    return false;
}

/* The impersonated user: every part authorized, then the user assembled as
 * kube's WithImpersonation does. False after a reply. */
static bool impersonate(corral__req_t *r, const imp_t *im)
{
    if (!im->user) {
        corral__status(r, 500, "InternalError", NULL, NULL,
                       "Internal error occurred: requested impersonation of groups, uid or extra "
                       "without impersonating a user");
        return false;
    }
    static const char sa_prefix[] = "system:serviceaccount:";
    const char *sa_ns = NULL, *sa_name = NULL;
    if (strncmp(im->user, sa_prefix, sizeof(sa_prefix) - 1) == 0) {
        const char *rest = im->user + sizeof(sa_prefix) - 1;
        const char *colon = strchr(rest, ':');
        if (colon && colon > rest && colon[1] && !strchr(colon + 1, ':')) {
            sa_ns = corral_arena_strndup(r->a, rest, (size_t)(colon - rest));
            sa_name = colon + 1;
        }
    }
    if (!(sa_ns ? imp_check(r, "", "serviceaccounts", "", sa_ns, sa_name)
                : imp_check(r, "", "users", "", "", im->user)))
        return false;
    for (size_t i = 0; i < im->ngroups; i++) {
        if (!imp_check(r, "", "groups", "", "", im->groups[i]))
            return false;
    }
    if (im->uid && !imp_check(r, "authentication.k8s.io", "uids", "", "", im->uid))
        return false;
    for (size_t i = 0; im->extra && i < im->extra->n; i++) {
        const corral_val_t *vals = im->extra->pairs[i].val;
        for (size_t j = 0; j < vals->n; j++) {
            if (!imp_check(r, "authentication.k8s.io", "userextras", im->extra->pairs[i].key->s, "",
                           vals->items[j]->s))
                return false;
        }
    }
    corral_user_t *u = corral_arena_alloc(r->a, sizeof(*u));
    if (sa_ns && !im->ngroups) {
        *u = *corral__sa_user(r->a, sa_ns, sa_name, im->uid, NULL, 0);
        u->ngroups--; /* without system:authenticated: added below */
    } else {
        u->name = im->user;
        u->uid = im->uid ? im->uid : "";
        u->groups = corral_arena_alloc(r->a, (im->ngroups + 1) * sizeof(*u->groups));
        memcpy(u->groups, im->groups, im->ngroups * sizeof(*u->groups));
        u->ngroups = im->ngroups;
    }
    bool anon = strcmp(u->name, CORRAL_USER_ANONYMOUS) == 0;
    const char *all = anon ? CORRAL_GROUP_UNAUTHENTICATED : CORRAL_GROUP_AUTHENTICATED;
    if (!corral_user_in_group(u, all))
        u->groups[u->ngroups++] = all;
    if (im->uid)
        u->uid = im->uid;
    r->ident = u;
    r->ident_extra = im->extra;
    if (r->srv->tokens)
        r->user = u;
    return true;
}

/* Authentication: the token file's user, a ServiceAccount token's, or
 * anonymous (*out). False after a 401 (r is finished then). */
static bool authenticate(corral__req_t *r, const corral_user_t **out)
{
    size_t tl = 0;
    const char *tok = bearer(r, &tl);
    *out = &anonymous;
    if (!tok)
        return true;
    const corral_user_t *u = r->srv->tokens ? corral_tokens_find(r->srv->tokens, tok, tl) : NULL;
    if (!u && corral__sa_token_like(tok, tl))
        u = corral__sa_authenticate(r, tok, tl);
    if (!u && r->srv->tokens) {
        unauthorized(r);
        return false;
    }
    if (u)
        *out = u;
    return true;
}

bool corral__authorize(corral__req_t *r)
{
    const corral_user_t *who;
    if (!authenticate(r, &who))
        return false;
    r->ident = who == &anonymous ? NULL : who;
    if (r->srv->tokens)
        r->user = who;
    imp_t im;
    imp_headers(r, &im);
    if (im.any && !impersonate(r, &im))
        return false;
    if (!r->srv->tokens || is_master(r->user))
        return true;
    corral_authz_attrs_t a;
    corral__request_attrs(r, &a);
    const char *node = corral__node_of(r->user);
    char why[256] = "";
    if (node && corral__node_authorize(r, &a, node, why, sizeof(why)))
        return true;
    rules_t rules;
    collect_rules(r, r->user, a.namespace, &rules);
    if (rules_allow(&rules, &a))
        return true;
    if (r->user == &anonymous) {
        unauthorized(r);
        return false;
    }
    char msg[1024];
    corral_rbac_forbidden_message(&a, msg, sizeof(msg));
    /* The reasons of the authorizers that denied, as kube's union joins them. */
    if (why[0] || rules.reason[0]) {
        size_t n = strlen(msg);
        snprintf(msg + n, sizeof(msg) - n, ": %s%s%s", why, why[0] && rules.reason[0] ? ", " : "",
                 rules.reason);
    }
    forbidden(r, &a, msg);
    return false;
}

/* --- escalation checks for RBAC writes ---------------------------------------------------- */

static void rule_text(const corral_policy_rule_t *rule, corral_buf_t *b)
{
    const corral_strlist_t *lists[] = {&rule->api_groups, &rule->resources, &rule->resource_names,
                                       &rule->non_resource_urls, &rule->verbs};
    static const char *const names[] = {"APIGroups", "Resources", "ResourceNames",
                                        "NonResourceURLs", "Verbs"};
    corral_buf_putc(b, '{');
    bool first = true;
    for (size_t k = 0; k < CORRAL_ARRAY_LEN(lists); k++) {
        if (lists[k]->n == 0)
            continue;
        corral_buf_printf(b, "%s%s:[", first ? "" : ", ", names[k]);
        for (size_t i = 0; i < lists[k]->n; i++)
            corral_buf_printf(b, "%s\"%s\"", i ? " " : "", lists[k]->items[i]);
        corral_buf_putc(b, ']');
        first = false;
    }
    corral_buf_putc(b, '}');
}

/* Does held cover every permission rule grants in ns? The rule is broken
 * down into single (verb, group, resource, name) requests, and "*" in it is
 * only covered by "*" (as kube's ConfirmNoEscalation). */
static bool covers(const rules_t *held, const corral_policy_rule_t *rule, const char *ns)
{
    corral_authz_attrs_t a;
    memset(&a, 0, sizeof(a));
    a.namespace = ns;
    a.api_version = a.subresource = "";
    for (size_t v = 0; v < rule->verbs.n; v++) {
        a.verb = rule->verbs.items[v];
        a.resource_request = false;
        for (size_t u = 0; u < rule->non_resource_urls.n; u++) {
            a.path = rule->non_resource_urls.items[u];
            if (!rules_allow(held, &a))
                return false;
        }
        a.resource_request = true;
        for (size_t g = 0; g < rule->api_groups.n; g++) {
            a.api_group = rule->api_groups.items[g];
            for (size_t k = 0; k < rule->resources.n; k++) {
                char res[256];
                snprintf(res, sizeof(res), "%s", rule->resources.items[k]);
                char *slash = strchr(res, '/');
                if (slash)
                    *slash = '\0';
                a.resource = res;
                a.subresource = slash ? slash + 1 : "";
                size_t nn = rule->resource_names.n ? rule->resource_names.n : 1;
                for (size_t i = 0; i < nn; i++) {
                    a.name = rule->resource_names.n ? rule->resource_names.items[i] : "";
                    if (!rules_allow(held, &a))
                        return false;
                }
            }
        }
    }
    return true;
}

/* 403 unless held covers every rule of role. */
static bool confirm_no_escalation(corral__req_t *r, const char *name, const rules_t *held,
                                  const corral_policy_rule_t *rules, size_t n, const char *ns)
{
    for (size_t i = 0; i < n; i++) {
        if (covers(held, &rules[i], ns))
            continue;
        corral_buf_t m;
        corral_buf_init(&m);
        corral_buf_printf(&m, "%s \"%s\" is forbidden: user \"%s\" (groups=[", r->res->key, name,
                          r->user->name);
        for (size_t g = 0; g < r->user->ngroups; g++)
            corral_buf_printf(&m, "%s\"%s\"", g ? " " : "", r->user->groups[g]);
        corral_buf_puts(&m, "]) is attempting to grant RBAC permissions not currently held:\n");
        rule_text(&rules[i], &m);
        corral__status(r, 403, "Forbidden", r->res->info->plural, name, "%s", corral_buf_str(&m));
        corral_buf_fini(&m);
        return false;
    }
    return true;
}

/* Does the user hold verb (escalate, bind) on the named role? */
static bool holds_verb(corral__req_t *r, const rules_t *held, const char *verb, const char *res,
                       const char *ns, const char *name)
{
    corral_authz_attrs_t a;
    memset(&a, 0, sizeof(a));
    a.user = r->user;
    a.verb = verb;
    a.resource_request = true;
    a.api_group = "rbac.authorization.k8s.io";
    a.api_version = a.subresource = "";
    a.resource = res;
    a.namespace = ns;
    a.name = name;
    return rules_allow(held, &a);
}

static bool admit_role(corral__req_t *r, const corral_obj_t *o, const rules_t *held, const char *ns)
{
    if (holds_verb(r, held, "escalate", o->info->plural, ns, o->meta.name))
        return true;
    return confirm_no_escalation(r, o->meta.name, held, o->u.role->rules, o->u.role->nrules, ns);
}

static bool admit_binding(corral__req_t *r, const corral_obj_t *o, const rules_t *held,
                          const char *ns)
{
    const corral_role_ref_t *ref = &o->u.binding->role_ref;
    bool cluster = ref->kind && strcmp(ref->kind, "ClusterRole") == 0;
    if (holds_verb(r, held, "bind", cluster ? "clusterroles" : "roles", ns, ref->name))
        return true;
    rules_t granted;
    memset(&granted, 0, sizeof(granted));
    binding_ref_t br = {ref->kind ? ref->kind : "", ref->name ? ref->name : ""};
    add_role_rules(r, &granted, &br, ns);
    if (granted.reason[0]) {
        corral__status(r, 403, "Forbidden", r->res->info->plural, o->meta.name,
                       "%s \"%s\" is forbidden: %s", r->res->key, o->meta.name,
                       granted.reason + 6 /* without "RBAC: " */);
        return false;
    }
    return confirm_no_escalation(r, o->meta.name, held, granted.items, granted.n, ns);
}

/* roleRef of a binding is immutable (422). */
static bool role_ref_unchanged(corral__req_t *r, const corral_val_t *cur, const corral_val_t *next)
{
    const corral_val_t *a = corral_val_get(cur, "roleRef"), *b = corral_val_get(next, "roleRef");
    if (!cur || corral_val_equal(a, b))
        return true;
    corral_diag_t d;
    corral_diag_init(&d);
    corral_diag_add(&d, CORRAL_SEV_ERROR, NULL, 0, 0, "roleRef",
                    "Invalid value: cannot change roleRef");
    corral__invalid(r, r->res->info->name, r->name, &d);
    corral_diag_fini(&d);
    return false;
}

bool corral__admit_rbac(corral__req_t *r, const corral_obj_t *o, const corral_val_t *cur)
{
    corral_kind_t k = o->info->kind;
    bool binding = k == CORRAL_KIND_ROLEBINDING || k == CORRAL_KIND_CLUSTERROLEBINDING;
    bool role = k == CORRAL_KIND_ROLE || k == CORRAL_KIND_CLUSTERROLE;
    if (!binding && !role)
        return true;
    if (binding && cur && !role_ref_unchanged(r, cur, o->raw))
        return false;
    if (!r->user || is_master(r->user))
        return true;
    const char *ns = o->info->namespaced && o->meta.namespace ? o->meta.namespace : "";
    rules_t held;
    collect_rules(r, r->user, ns, &held);
    return role ? admit_role(r, o, &held, ns) : admit_binding(r, o, &held, ns);
}

/* --- SelfSubjectAccessReview (kubectl auth can-i) ---------------------------------------- */

static const char *attr_str(const corral_val_t *m, const char *key)
{
    const char *s = corral_val_get_str(m, key);
    return s ? s : "";
}

/* Would the requesting user be allowed spec's request? */
static bool ssar_allowed(corral__req_t *r, const corral_val_t *spec)
{
    if (!r->srv->tokens || is_master(r->user))
        return true;
    corral_authz_attrs_t a;
    memset(&a, 0, sizeof(a));
    a.user = r->user;
    const corral_val_t *ra = corral_val_get(spec, "resourceAttributes");
    const corral_val_t *na = corral_val_get(spec, "nonResourceAttributes");
    if (ra) {
        a.resource_request = true;
        a.verb = attr_str(ra, "verb");
        a.api_group = attr_str(ra, "group");
        a.api_version = attr_str(ra, "version");
        a.resource = attr_str(ra, "resource");
        a.subresource = attr_str(ra, "subresource");
        a.namespace = attr_str(ra, "namespace");
        a.name = attr_str(ra, "name");
    } else {
        a.verb = attr_str(na, "verb");
        a.path = attr_str(na, "path");
    }
    const char *node = corral__node_of(r->user);
    char why[256];
    if (node && corral__node_authorize(r, &a, node, why, sizeof(why)))
        return true;
    rules_t rules;
    collect_rules(r, r->user, a.namespace, &rules);
    return rules_allow(&rules, &a);
}

void corral__h_ssar(corral__req_t *r)
{
    corral_val_t *body = corral__body_tree(r);
    if (!body)
        return;
    const corral_val_t *spec = corral_val_get(body, "spec");
    if (!spec || spec->kind != CORRAL_VAL_MAP ||
        (!corral_val_get(spec, "resourceAttributes") &&
         !corral_val_get(spec, "nonResourceAttributes"))) {
        corral__status(r, 422, "Invalid", NULL, NULL,
                       "SelfSubjectAccessReview.authorization.k8s.io \"\" is invalid: "
                       "spec.resourceAttributes: Invalid value: null: exactly one of "
                       "nonResourceAttributes or resourceAttributes must be specified");
        return;
    }
    bool allowed = ssar_allowed(r, spec);
    corral_buf_t b;
    corral_buf_init(&b);
    corral_buf_puts(&b, "{\"kind\":\"SelfSubjectAccessReview\",\"apiVersion\":"
                        "\"authorization.k8s.io/v1\",\"metadata\":{\"creationTimestamp\":null},"
                        "\"spec\":");
    corral_val_to_json(spec, &b, false);
    corral_buf_printf(&b, ",\"status\":{\"allowed\":%s}}", allowed ? "true" : "false");
    corral__reply_buf(r, 201, &b);
}

/* --- SelfSubjectRulesReview (kubectl auth can-i --list) --------------------------------------- */

static void strlist_json(corral_buf_t *b, const char *key, const corral_strlist_t *l, bool always)
{
    if (!l->n && !always)
        return;
    corral_buf_printf(b, ",\"%s\":[", key);
    for (size_t i = 0; i < l->n; i++) {
        if (i)
            corral_buf_putc(b, ',');
        corral_json_quote(b, l->items[i], strlen(l->items[i]));
    }
    corral_buf_putc(b, ']');
}

static void rules_json(corral_buf_t *b, const rules_t *rules, bool resource)
{
    size_t k = 0;
    for (size_t i = 0; i < rules->n; i++) {
        const corral_policy_rule_t *p = &rules->items[i];
        if (resource ? !p->resources.n : !p->non_resource_urls.n)
            continue;
        corral_buf_puts(b, k++ ? ",{\"verbs\":[" : "{\"verbs\":[");
        for (size_t j = 0; j < p->verbs.n; j++) {
            if (j)
                corral_buf_putc(b, ',');
            corral_json_quote(b, p->verbs.items[j], strlen(p->verbs.items[j]));
        }
        corral_buf_putc(b, ']');
        if (resource) {
            strlist_json(b, "apiGroups", &p->api_groups, true);
            strlist_json(b, "resources", &p->resources, true);
            strlist_json(b, "resourceNames", &p->resource_names, false);
        } else {
            strlist_json(b, "nonResourceURLs", &p->non_resource_urls, true);
        }
        corral_buf_putc(b, '}');
    }
}

void corral__h_ssrr(corral__req_t *r)
{
    corral_val_t *body = r->body_len ? corral__body_tree(r) : corral_val_new(r->a, CORRAL_VAL_MAP);
    if (!body)
        return;
    const char *ns = corral_val_get_str(corral_val_get(body, "spec"), "namespace");
    rules_t rules;
    memset(&rules, 0, sizeof(rules));
    static const char *star[] = {"*"};
    if (!r->srv->tokens || is_master(r->user)) {
        corral_strlist_t s1 = {(const char **)star, 1};
        corral_strlist_t none = {NULL, 0};
        corral_policy_rule_t res = {s1, s1, s1, none, none}, nonres = {s1, none, none, none, s1};
        corral_policy_rule_t *two = corral_arena_alloc(r->a, 2 * sizeof(*two));
        two[0] = res;
        two[1] = nonres;
        rules.items = two;
        rules.n = 2;
    } else {
        collect_rules(r, r->user, ns ? ns : "", &rules);
    }
    corral_buf_t b;
    corral_buf_init(&b);
    corral_buf_puts(&b, "{\"kind\":\"SelfSubjectRulesReview\",\"apiVersion\":"
                        "\"authorization.k8s.io/v1\",\"metadata\":{\"creationTimestamp\":null},"
                        "\"spec\":{\"namespace\":");
    corral_json_quote(&b, ns ? ns : "", ns ? strlen(ns) : 0);
    corral_buf_puts(&b, "},\"status\":{\"resourceRules\":[");
    rules_json(&b, &rules, true);
    corral_buf_puts(&b, "],\"nonResourceRules\":[");
    rules_json(&b, &rules, false);
    corral_buf_puts(&b, "],\"incomplete\":false");
    if (rules.reason[0]) {
        corral_buf_puts(&b, ",\"evaluationError\":");
        corral_json_quote(&b, rules.reason, strlen(rules.reason));
    }
    corral_buf_puts(&b, "}}");
    corral__reply_buf(r, 201, &b);
}
