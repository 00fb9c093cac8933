/*
 * What the API server serves: one resource per kind of the model registry
 * (so a kind added to the model is served with no change here), with the
 * upstream scope, names, short names and subresources, plus the views
 * (events.k8s.io/v1 Events, views.c); and the discovery
 * documents built from that table in the shapes kubectl and the Python
 * client read (APIVersions, APIGroupList, APIGroup, APIResourceList), plus
 * /healthz, /livez, /readyz and /version.
 */
#include <stdio.h>
#include <string.h>

#include "apiserver/apiserver_int.h"

/* One resource per kind, indexed by kind, then the views. */
enum { NVIEWS = 1 };
static corral__res_t res_tab[CORRAL_KIND_COUNT + NVIEWS];

/* events.k8s.io/v1 Event: core v1 Events in another shape (events_v1.c). */
static const corral_kind_info_t events_v1_info = {
    .kind = CORRAL_KIND_EVENT,
    .group = "events.k8s.io",
    .version = "v1",
    .api_version = "events.k8s.io/v1",
    .name = "Event",
    .plural = "events",
    .singular = "event",
    .short_names = "ev",
    .namespaced = true,
};
static pthread_once_t res_once = PTHREAD_ONCE_INIT;

static bool kind_has_status(corral_kind_t k)
{
    switch (k) {
    case CORRAL_KIND_NAMESPACE:
    case CORRAL_KIND_NODE:
    case CORRAL_KIND_POD:
    case CORRAL_KIND_QUEUE:
    case CORRAL_KIND_VCJOB:
    case CORRAL_KIND_HYPERNODE:
    case CORRAL_KIND_ISVC:
    case CORRAL_KIND_SERVICE:
    case CORRAL_KIND_RESOURCEQUOTA:
    case CORRAL_KIND_LOCALMODELCACHE: /* as KServe's CRDs: the node group and runtimes have none */
    case CORRAL_KIND_LOCALMODELNODE:
    case CORRAL_KIND_DEPLOYMENT:
    case CORRAL_KIND_DAEMONSET:
    case CORRAL_KIND_CRD:
        return true;
    default:
        return false; /* e.g. Volcano's PodGroup CRD has no status subresource */
    }
}

static void res_init(void)
{
    for (int k = 0; k < CORRAL_KIND_COUNT; k++) {
        corral__res_t *r = &res_tab[k];
        r->info = corral_kind_get((corral_kind_t)k);
        if (r->info->group[0])
            snprintf(r->key, sizeof(r->key), "%s.%s", r->info->plural, r->info->group);
        else
            snprintf(r->key, sizeof(r->key), "%s", r->info->plural);
        _Static_assert(sizeof(r->name) == sizeof(r->key), "name holds a key");
        memcpy(r->name, r->key, sizeof(r->name));
        snprintf(r->list_kind, sizeof(r->list_kind), "%sList", r->info->name);
        r->has_status = kind_has_status((corral_kind_t)k);
        r->has_scale =
            k == CORRAL_KIND_VCJOB || k == CORRAL_KIND_ISVC || k == CORRAL_KIND_DEPLOYMENT;
        r->return_deleted = k == CORRAL_KIND_POD;
        /* Nodes register with their status (kubelet sends capacity on create). */
        r->status_on_create = k == CORRAL_KIND_NODE || !r->has_status;
    }
    /* Stored under core events' key, so both serve the same objects. */
    corral__res_t *ev = &res_tab[CORRAL_KIND_COUNT];
    *ev = res_tab[CORRAL_KIND_EVENT];
    ev->info = &events_v1_info;
    snprintf(ev->name, sizeof(ev->name), "events.events.k8s.io");
    ev->view = &corral__events_v1_view;
}

const corral__res_t *corral__res_all(size_t *n)
{
    pthread_once(&res_once, res_init);
    *n = CORRAL_ARRAY_LEN(res_tab);
    return res_tab;
}

const corral__res_t *corral__res_find(const char *group, const char *version, const char *plural)
{
    pthread_once(&res_once, res_init);
    for (size_t k = 0; k < CORRAL_ARRAY_LEN(res_tab); k++) {
        const corral_kind_info_t *i = res_tab[k].info;
        if (strcmp(i->group, group) == 0 && strcmp(i->version, version) == 0 &&
            strcmp(i->plural, plural) == 0)
            return &res_tab[k];
    }
    return NULL;
}

const corral__res_t *corral__res_of_kind(corral_kind_t k)
{
    pthread_once(&res_once, res_init);
    return (unsigned)k < CORRAL_KIND_COUNT ? &res_tab[k] : NULL;
}

static bool group_version_served(const char *group, const char *version)
{
    size_t n;
    const corral__res_t *all = corral__res_all(&n);
    for (size_t i = 0; i < n; i++) {
        if (strcmp(all[i].info->group, group) == 0 &&
            (!version || strcmp(all[i].info->version, version) == 0))
            return true;
    }
    return false;
}

/* --- health and version ------------------------------------------------------------- */

void corral__h_healthz(corral__req_t *r)
{
    int64_t n = 0;
    bool store_ok = corral_store_count(corral__rd(r), "namespaces", NULL, &n) == 0 && n > 0;
    const char *check = strrchr(r->path, '/');
    if (corral__param(r, "verbose")) {
        char body[256];
        int len = snprintf(body, sizeof(body), "[+]ping ok\n[%c]store %s\n%s check %s\n",
                           store_ok ? '+' : '-', store_ok ? "ok" : "failed", check ? check + 1 : "",
                           store_ok ? "passed" : "failed");
        corral__reply(r, store_ok ? 200 : 500, "text/plain; charset=utf-8", body, (size_t)len);
        return;
    }
    if (store_ok)
        corral__reply(r, 200, "text/plain; charset=utf-8", "ok", 2);
    else
        corral__reply(r, 500, "text/plain; charset=utf-8", "[-]store failed", 15);
}

void corral__h_version(corral__req_t *r)
{
#if defined(__x86_64__)
    const char *arch = "amd64";
#elif defined(__aarch64__)
    const char *arch = "arm64";
#else
    const char *arch = "unknown";
#endif
    corral_buf_t b;
    corral_buf_init(&b);
    corral_buf_printf(&b,
                      "{\"major\":\"%s\",\"minor\":\"%s\",\"gitVersion\":\"%s\",\"gitCommit\":\"\","
                      "\"gitTreeState\":\"clean\",\"buildDate\":\"1970-01-01T00:00:00Z\","
                      "\"goVersion\":\"none (corral is written in C)\",\"compiler\":\"gcc\","
                      "\"platform\":\"linux/%s\"}",
                      CORRAL__VERSION_MAJOR,
                      corral__strict(r) ? CORRAL__STRICT_MINOR : CORRAL__VERSION_MINOR,
                      corral__strict(r) ? CORRAL__STRICT_GIT_VERSION : CORRAL__GIT_VERSION, arch);
    corral__reply_buf(r, 200, &b);
}

/* --- discovery ---------------------------------------------------------------------- */

static void quoted(corral_buf_t *b, const char *s)
{
    corral_json_quote(b, s, strlen(s));
}

void corral__h_api(corral__req_t *r)
{
    corral_buf_t b;
    corral_buf_init(&b);
    corral_buf_puts(&b, "{\"kind\":\"APIVersions\",\"versions\":[\"v1\"],"
                        "\"serverAddressByClientCIDRs\":[{\"clientCIDR\":\"0.0.0.0/0\","
                        "\"serverAddress\":");
    char addr[300];
    snprintf(addr, sizeof(addr), "%s:%d", r->srv->listen_host, r->srv->port);
    quoted(&b, addr);
    corral_buf_puts(&b, "}]}");
    corral__reply_buf(r, 200, &b);
}

static void group_version_json(corral_buf_t *b, const char *group, const char *version)
{
    corral_buf_puts(b, "{\"groupVersion\":");
    corral_buf_printf(b, "\"%s/%s\"", group, version);
    corral_buf_puts(b, ",\"version\":");
    quoted(b, version);
    corral_buf_putc(b, '}');
}

/* The versions a group serves (at most max), the preferred one first: one
 * without alpha or beta in its name if there is one (corral.dev serves v1
 * UsageRecords and v1alpha1 configuration). version: when none is found. */
static size_t group_versions(const char *group, const char *version, const char **out, size_t max)
{
    size_t n, k = 0;
    const corral__res_t *all = corral__res_all(&n);
    for (size_t i = 0; i < n && k < max; i++) {
        const char *v = all[i].info->version;
        bool seen = strcmp(all[i].info->group, group) != 0;
        for (size_t j = 0; j < k && !seen; j++)
            seen = strcmp(out[j], v) == 0;
        if (!seen)
            out[k++] = v;
    }
    if (!k)
        out[k++] = version;
    for (size_t j = 1; j < k; j++) {
        if (!strstr(out[j], "alpha") && !strstr(out[j], "beta") &&
            (strstr(out[0], "alpha") || strstr(out[0], "beta"))) {
            const char *t = out[0];
            out[0] = out[j];
            out[j] = t;
        }
    }
    return k;
}

/* One APIGroup object. */
static void group_json(corral_buf_t *b, const char *group, const char *version, bool with_kind)
{
    const char *vs[4];
    size_t nv = group_versions(group, version, vs, CORRAL_ARRAY_LEN(vs));
    corral_buf_puts(b, with_kind ? "{\"kind\":\"APIGroup\",\"apiVersion\":\"v1\",\"name\":"
                                 : "{\"name\":");
    quoted(b, group);
    corral_buf_puts(b, ",\"versions\":[");
    for (size_t i = 0; i < nv; i++) {
        if (i)
            corral_buf_putc(b, ',');
        group_version_json(b, group, vs[i]);
    }
    corral_buf_puts(b, "],\"preferredVersion\":");
    group_version_json(b, group, vs[0]);
    corral_buf_putc(b, '}');
}

/* Resources that are not stored objects: the reviews (requests, create
 * only) and metrics.k8s.io (the built-in metrics-server, get and list).
 * They are served in discovery like the others. */
typedef struct review_res {
    const char *group, *version, *name, *kind, *singular;
    bool ns;
    const char *verbs;
} review_res_t;

static const review_res_t reviews[] = {
    {"authentication.k8s.io", "v1", "selfsubjectreviews", "SelfSubjectReview", "", false,
     "[\"create\"]"},
    {"authorization.k8s.io", "v1", "selfsubjectaccessreviews", "SelfSubjectAccessReview", "", false,
     "[\"create\"]"},
    {"authorization.k8s.io", "v1", "selfsubjectrulesreviews", "SelfSubjectRulesReview", "", false,
     "[\"create\"]"},
    {"metrics.k8s.io", "v1beta1", "nodes", "NodeMetrics", "", false, "[\"get\",\"list\"]"},
    {"metrics.k8s.io", "v1beta1", "pods", "PodMetrics", "", true, "[\"get\",\"list\"]"},
};

static bool review_group(const char *group, const char *version)
{
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(reviews); i++) {
        if (strcmp(reviews[i].group, group) == 0 &&
            (!version || strcmp(reviews[i].version, version) == 0))
            return true;
    }
    return false;
}

void corral__h_apis(corral__req_t *r)
{
    size_t n;
    const corral__res_t *all = corral__res_all(&n);
    corral_buf_t b;
    corral_buf_init(&b);
    corral_buf_puts(&b, "{\"kind\":\"APIGroupList\",\"apiVersion\":\"v1\",\"groups\":[");
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const corral_kind_info_t *info = all[i].info;
        bool seen = !info->group[0];
        for (size_t j = 0; j < i && !seen; j++)
            seen = strcmp(all[j].info->group, info->group) == 0;
        if (seen)
            continue;
        if (k++)
            corral_buf_putc(&b, ',');
        group_json(&b, info->group, info->version, false);
    }
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(reviews); i++) {
        if (i && strcmp(reviews[i].group, reviews[i - 1].group) == 0)
            continue;
        corral_buf_putc(&b, ',');
        group_json(&b, reviews[i].group, reviews[i].version, false);
    }
    corral_buf_puts(&b, "]}");
    corral__reply_buf(r, 200, &b);
}

void corral__h_apis_group(corral__req_t *r)
{
    size_t n;
    const corral__res_t *all = corral__res_all(&n);
    for (size_t i = 0; i < n; i++) {
        if (all[i].info->group[0] && strcmp(all[i].info->group, r->group) == 0) {
            corral_buf_t b;
            corral_buf_init(&b);
            group_json(&b, all[i].info->group, all[i].info->version, true);
            corral__reply_buf(r, 200, &b);
            return;
        }
    }
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(reviews); i++) {
        if (strcmp(reviews[i].group, r->group) == 0) {
            corral_buf_t b;
            corral_buf_init(&b);
            group_json(&b, reviews[i].group, reviews[i].version, true);
            corral__reply_buf(r, 200, &b);
            return;
        }
    }
    corral__status(r, 404, "NotFound", NULL, NULL,
                   "the server could not find the requested resource");
}

static const char *const all_verbs =
    "[\"create\",\"delete\",\"deletecollection\",\"get\",\"list\",\"patch\",\"update\",\"watch\"]";

static void resource_json(corral_buf_t *b, const char *name, const char *singular, bool ns,
                          const char *group, const char *version, const char *kind,
                          const char *verbs)
{
    corral_buf_puts(b, "{\"name\":");
    quoted(b, name);
    corral_buf_puts(b, ",\"singularName\":");
    quoted(b, singular);
    corral_buf_printf(b, ",\"namespaced\":%s", ns ? "true" : "false");
    if (group) {
        corral_buf_puts(b, ",\"group\":");
        quoted(b, group);
        corral_buf_puts(b, ",\"version\":");
        quoted(b, version);
    }
    corral_buf_puts(b, ",\"kind\":");
    quoted(b, kind);
    corral_buf_printf(b, ",\"verbs\":%s", verbs);
}

static void main_resource_json(corral_buf_t *b, const corral__res_t *res)
{
    const corral_kind_info_t *i = res->info;
    resource_json(b, i->plural, i->singular, i->namespaced, NULL, NULL, i->name, all_verbs);
    if (i->short_names[0]) {
        corral_buf_puts(b, ",\"shortNames\":[");
        const char *p = i->short_names;
        for (int k = 0; *p; k++) {
            const char *comma = strchr(p, ',');
            size_t len = comma ? (size_t)(comma - p) : strlen(p);
            if (k)
                corral_buf_putc(b, ',');
            corral_json_quote(b, p, len);
            p = comma ? comma + 1 : p + len;
        }
        corral_buf_putc(b, ']');
    }
    if (i->kind == CORRAL_KIND_POD)
        corral_buf_puts(b, ",\"categories\":[\"all\"]");
    corral_buf_putc(b, '}');
}

bool corral__scale_served(const corral__req_t *r)
{
    return !corral__strict(r) || r->res->info->kind == CORRAL_KIND_DEPLOYMENT;
}

static void subresources_json(corral_buf_t *b, const corral__res_t *res, bool strict)
{
    const corral_kind_info_t *i = res->info;
    char name[128];
    if (i->kind == CORRAL_KIND_POD) {
        corral_buf_putc(b, ',');
        resource_json(b, "pods/binding", "", true, NULL, NULL, "Binding", "[\"create\"]");
        corral_buf_puts(b, "},");
        resource_json(b, "pods/eviction", "", true, "policy", "v1", "Eviction", "[\"create\"]");
        corral_buf_puts(b, "},");
        resource_json(b, "pods/log", "", true, NULL, NULL, "Pod", "[\"get\"]");
        corral_buf_putc(b, '}');
    }
    if (i->kind == CORRAL_KIND_NODE) {
        corral_buf_putc(b, ',');
        resource_json(b, "nodes/proxy", "", false, NULL, NULL, "NodeProxyOptions", "[\"get\"]");
        corral_buf_putc(b, '}');
    }
    if (res->has_status) {
        snprintf(name, sizeof(name), "%s/status", i->plural);
        corral_buf_putc(b, ',');
        resource_json(b, name, "", i->namespaced, NULL, NULL, i->name,
                      "[\"get\",\"patch\",\"update\"]");
        corral_buf_putc(b, '}');
    }
    if (res->has_scale && (!strict || i->kind == CORRAL_KIND_DEPLOYMENT)) {
        snprintf(name, sizeof(name), "%s/scale", i->plural);
        corral_buf_putc(b, ',');
        resource_json(b, name, "", i->namespaced, "autoscaling", "v1", "Scale",
                      "[\"get\",\"patch\",\"update\"]");
        corral_buf_putc(b, '}');
    }
    if (i->kind == CORRAL_KIND_SERVICEACCOUNT) {
        corral_buf_putc(b, ',');
        resource_json(b, "serviceaccounts/token", "", true, "authentication.k8s.io", "v1",
                      "TokenRequest", "[\"create\"]");
        corral_buf_putc(b, '}');
    }
}

static void resource_list(corral__req_t *r, const char *group, const char *version)
{
    size_t n;
    const corral__res_t *all = corral__res_all(&n);
    corral_buf_t b;
    corral_buf_init(&b);
    corral_buf_puts(&b, "{\"kind\":\"APIResourceList\",\"apiVersion\":\"v1\",\"groupVersion\":");
    char gv[160];
    if (group[0])
        snprintf(gv, sizeof(gv), "%s/%s", group, version);
    else
        snprintf(gv, sizeof(gv), "%s", version);
    quoted(&b, gv);
    corral_buf_puts(&b, ",\"resources\":[");
    size_t k = 0;
    if (!group[0]) {
        resource_json(&b, "bindings", "", true, NULL, NULL, "Binding", "[\"create\"]");
        corral_buf_putc(&b, '}');
        k++;
    }
    for (size_t i = 0; i < n; i++) {
        if (strcmp(all[i].info->group, group) != 0 || strcmp(all[i].info->version, version) != 0)
            continue;
        if (k++)
            corral_buf_putc(&b, ',');
        main_resource_json(&b, &all[i]);
        subresources_json(&b, &all[i], corral__strict(r));
    }
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(reviews); i++) {
        if (strcmp(reviews[i].group, group) != 0 || strcmp(reviews[i].version, version) != 0)
            continue;
        if (k++)
            corral_buf_putc(&b, ',');
        resource_json(&b, reviews[i].name, reviews[i].singular, reviews[i].ns, NULL, NULL,
                      reviews[i].kind, reviews[i].verbs);
        corral_buf_putc(&b, '}');
    }
    corral_buf_puts(&b, "]}");
    corral__reply_buf(r, 200, &b);
}

void corral__h_api_version(corral__req_t *r)
{
    if (strcmp(r->version, "v1") != 0) {
        corral__status(r, 404, "NotFound", NULL, NULL,
                       "the server could not find the requested resource");
        return;
    }
    resource_list(r, "", "v1");
}

void corral__h_apis_version(corral__req_t *r)
{
    if (!r->group[0] ||
        (!group_version_served(r->group, r->version) && !review_group(r->group, r->version))) {
        corral__status(r, 404, "NotFound", NULL, NULL,
                       "the server could not find the requested resource");
        return;
    }
    resource_list(r, r->group, r->version);
}

void corral__print_resources(FILE *fp)
{
    size_t n;
    const corral__res_t *all = corral__res_all(&n);
    fprintf(fp, "| apiVersion | resource | kind | scope | short names | subresources |\n"
                "|---|---|---|---|---|---|\n");
    for (size_t i = 0; i < n; i++) {
        const corral_kind_info_t *k = all[i].info;
        const char *subs = k->kind == CORRAL_KIND_POD ? "status, binding, eviction, log"
                           : k->kind == CORRAL_KIND_SERVICEACCOUNT ? "token"
                           : all[i].has_status && all[i].has_scale ? "status, scale"
                           : all[i].has_status                     ? "status"
                                                                   : "";
        fprintf(fp, "| %s | %s | %s | %s | %s | %s |\n", k->api_version, k->plural, k->name,
                k->namespaced ? "Namespaced" : "Cluster", k->short_names, subs);
    }
}
