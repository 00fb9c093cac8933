/*
 * The route table: every path the API server serves, as one declarative
 * list of (method, pattern, handler, doc), in the manner of Redis' command
 * table. Dispatch walks it in order; docs/api.md is generated from it
 * (`corral apiserver --print-routes`) and a test fails when the two differ.
 *
 * Pattern segments: a literal; {version}, {group}, {namespace}, {name} which
 * capture one segment; {resource} which captures a resource name and must
 * name a served resource of the group/version; {prefix}, which stands for
 * /api/{version} (the core group) or /apis/{group}/{version}; and {path},
 * last, which takes every remaining segment (none or more).
 */
#include <stdio.h>
#include <string.h>

#include "apiserver/apiserver_int.h"

enum { SC_NONE = 0, SC_NS, SC_CLUSTER, SC_ANY };
enum { SUB_NONE = 0, SUB_STATUS = 1, SUB_SCALE = 2 };

typedef struct route {
    const char *method;
    const char *pattern;
    int scope;  /* for {resource}: which scope the resource must have */
    int status; /* SUB_STATUS, SUB_SCALE: the resource must have that subresource */
    int kind;   /* fixed resource (pods/...): its kind, else -1 */
    void (*fn)(corral__req_t *r);
    const char *doc;
} route_t;

#define NS_OBJ "{prefix}/namespaces/{namespace}/{resource}/{name}"
#define CL_OBJ "{prefix}/{resource}/{name}"
#define POD    "/api/{version}/namespaces/{namespace}/pods/{name}"

static const route_t routes[] = {
    {"GET", "/healthz", SC_NONE, false, -1, corral__h_healthz,
     "`ok` when the store answers; `?verbose` lists the checks"},
    {"GET", "/livez", SC_NONE, false, -1, corral__h_healthz, "as /healthz"},
    {"GET", "/readyz", SC_NONE, false, -1, corral__h_healthz, "as /healthz"},
    {"GET", "/version", SC_NONE, false, -1, corral__h_version,
     "version.Info: the Kubernetes version served (major, minor, gitVersion)"},
    {"GET", "/openapi/v2", SC_NONE, false, -1, corral__h_openapi,
     "OpenAPI v2: every kind's fields (`x-kubernetes-group-version-kind`), JSON or protobuf"},
    {"GET", "/openapi/v3", SC_NONE, false, -1, corral__h_openapi_v3,
     "OpenAPI v3 index: each group-version's document by hash"},
    {"GET", "/openapi/v3/api/{version}", SC_NONE, false, -1, corral__h_openapi_v3_gv,
     "OpenAPI v3 document of the core group (components.schemas)"},
    {"GET", "/openapi/v3/apis/{group}/{version}", SC_NONE, false, -1, corral__h_openapi_v3_gv,
     "OpenAPI v3 document of a group-version"},
    {"GET", "/api", SC_NONE, false, -1, corral__h_api, "APIVersions: the core group's versions"},
    {"GET", "/api/{version}", SC_NONE, false, -1, corral__h_api_version,
     "APIResourceList of the core group (v1)"},
    {"GET", "/apis", SC_NONE, false, -1, corral__h_apis, "APIGroupList: every other group"},
    {"GET", "/apis/{group}", SC_NONE, false, -1, corral__h_apis_group, "APIGroup"},
    {"GET", "/apis/{group}/{version}", SC_NONE, false, -1, corral__h_apis_version,
     "APIResourceList of a group version"},
    {"GET", "/metrics", SC_NONE, false, -1, corral__h_metrics,
     "the API server's metrics, Prometheus text format (nonResourceURL `/metrics`, get)"},
    {"GET", "/apis/metrics.k8s.io/v1beta1/nodes", SC_NONE, false, -1, corral__h_nodemetrics,
     "NodeMetricsList from the built-in metrics-server (`kubectl top nodes`)"},
    {"GET", "/apis/metrics.k8s.io/v1beta1/nodes/{name}", SC_NONE, false, -1, corral__h_nodemetrics,
     "NodeMetrics of one node"},
    {"GET", "/apis/metrics.k8s.io/v1beta1/pods", SC_NONE, false, -1, corral__h_podmetrics,
     "PodMetricsList of every namespace"},
    {"GET", "/apis/metrics.k8s.io/v1beta1/namespaces/{namespace}/pods", SC_NONE, false, -1,
     corral__h_podmetrics, "PodMetricsList of a namespace (`kubectl top pods`)"},
    {"GET", "/apis/metrics.k8s.io/v1beta1/namespaces/{namespace}/pods/{name}", SC_NONE, false, -1,
     corral__h_podmetrics, "PodMetrics of one pod"},
    {"GET", "{prefix}/watch/{resource}", SC_ANY, false, -1, corral__h_watch,
     "watch (deprecated path form of `?watch=1`), every namespace"},
    {"GET", "{prefix}/watch/namespaces/{namespace}/{resource}", SC_NS, false, -1, corral__h_watch,
     "watch (deprecated path form of `?watch=1`) in one namespace"},
    {"GET", "{prefix}/{resource}", SC_ANY, false, -1, corral__h_list,
     "list (every namespace for namespaced resources), or watch with `?watch=1`"},
    {"POST", "{prefix}/{resource}", SC_CLUSTER, false, -1, corral__h_create,
     "create a cluster-scoped object (201)"},
    {"DELETE", "{prefix}/{resource}", SC_CLUSTER, false, -1, corral__h_delete_collection,
     "deletecollection of cluster-scoped objects matching the selectors"},
    {"GET", CL_OBJ, SC_CLUSTER, false, -1, corral__h_get, "get a cluster-scoped object"},
    {"PUT", CL_OBJ, SC_CLUSTER, false, -1, corral__h_update,
     "update (replace); `metadata.resourceVersion` is a precondition (409)"},
    {"PATCH", CL_OBJ, SC_CLUSTER, false, -1, corral__h_patch,
     "patch: merge-patch+json, json-patch+json, strategic-merge-patch+json (built-in kinds)"},
    {"DELETE", CL_OBJ, SC_CLUSTER, false, -1, corral__h_delete,
     "delete (finalizers honoured; a Namespace takes its objects with it)"},
    {"GET", CL_OBJ "/status", SC_CLUSTER, true, -1, corral__h_get,
     "get, via the status subresource"},
    {"PUT", CL_OBJ "/status", SC_CLUSTER, true, -1, corral__h_update,
     "replace status only (spec and metadata changes are ignored)"},
    {"PATCH", CL_OBJ "/status", SC_CLUSTER, true, -1, corral__h_patch, "patch status only"},
    {"POST", "/api/{version}/namespaces/{namespace}/bindings", SC_NONE, false, CORRAL_KIND_POD,
     corral__h_bindings, "bind the pod named by the Binding's metadata.name (201)"},
    {"GET", "{prefix}/namespaces/{namespace}/{resource}", SC_NS, false, -1, corral__h_list,
     "list in a namespace, or watch with `?watch=1`"},
    {"POST", "{prefix}/namespaces/{namespace}/{resource}", SC_NS, false, -1, corral__h_create,
     "create in a namespace (201; `generateName` honoured)"},
    {"DELETE", "{prefix}/namespaces/{namespace}/{resource}", SC_NS, false, -1,
     corral__h_delete_collection, "deletecollection in a namespace"},
    {"GET", NS_OBJ, SC_NS, false, -1, corral__h_get, "get"},
    {"PUT", NS_OBJ, SC_NS, false, -1, corral__h_update,
     "update (replace); `metadata.resourceVersion` is a precondition (409)"},
    {"PATCH", NS_OBJ, SC_NS, false, -1, corral__h_patch,
     "patch: merge-patch+json, json-patch+json, strategic-merge-patch+json (built-in kinds)"},
    {"DELETE", NS_OBJ, SC_NS, false, -1, corral__h_delete,
     "delete; a pod bound to a node is deleted gracefully (deletionTimestamp)"},
    {"GET", NS_OBJ "/status", SC_NS, true, -1, corral__h_get, "get, via the status subresource"},
    {"PUT", NS_OBJ "/status", SC_NS, true, -1, corral__h_update,
     "replace status only (spec and metadata changes are ignored)"},
    {"PATCH", NS_OBJ "/status", SC_NS, true, -1, corral__h_patch, "patch status only"},
    {"GET", NS_OBJ "/scale", SC_NS, SUB_SCALE, -1, corral__h_scale_get,
     "autoscaling/v1 Scale of a Deployment, a Volcano Job or an InferenceService (scale.c)"},
    {"PUT", NS_OBJ "/scale", SC_NS, SUB_SCALE, -1, corral__h_scale_update,
     "set spec.replicas from a Scale; answers the new Scale"},
    {"PATCH", NS_OBJ "/scale", SC_NS, SUB_SCALE, -1, corral__h_scale_patch,
     "patch the Scale (merge, JSON or strategic); answers the new Scale"},
    {"POST", "/api/{version}/namespaces/{namespace}/serviceaccounts/{name}/token", SC_NONE, false,
     CORRAL_KIND_SERVICEACCOUNT, corral__h_sa_token,
     "TokenRequest (`kubectl create token`): a signed token for the ServiceAccount (201)"},
    {"POST", POD "/binding", SC_NONE, false, CORRAL_KIND_POD, corral__h_binding,
     "bind to a node: spec.nodeName, the Binding's annotations, PodScheduled=True (201)"},
    {"POST", POD "/eviction", SC_NONE, false, CORRAL_KIND_POD, corral__h_eviction,
     "evict (policy/v1 or v1beta1 Eviction): delete with its DeleteOptions (201)"},
    {"POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", SC_NONE, false, -1,
     corral__h_ssar,
     "SelfSubjectAccessReview (`kubectl auth can-i`): may the requesting user do this? (201)"},
    {"POST", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", SC_NONE, false, -1,
     corral__h_ssrr,
     "SelfSubjectRulesReview (`kubectl auth can-i --list`): the user's rules in a namespace (201)"},
    {"POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", SC_NONE, false, -1, corral__h_ssr,
     "SelfSubjectReview (`kubectl auth whoami`): the requesting user (201)"},
    {"GET", POD "/log", SC_NONE, false, CORRAL_KIND_POD, corral__h_log,
     "container log (proxied to the node agent's log server)"},
    {"GET", "/api/{version}/nodes/{name}/proxy/{path}", SC_NONE, false, CORRAL_KIND_NODE,
     corral__h_node_proxy,
     "GET the node agent's PATH (`/metrics`, `/metrics/resource`); NAME:PORT for another port"},
    {"GET", "/ui", SC_NONE, false, -1, corral__h_ui,
     "the web dashboard (docs/observability.md): static page, no data; public like /healthz"},
    {"GET", "/ui/{name}", SC_NONE, false, -1, corral__h_ui,
     "a file of the dashboard (`app.js`, `style.css`, `favicon.svg`), with an ETag"},
};

/* Split path into segments (in arena). A trailing slash is ignored. */
static size_t split(corral_arena_t *a, const char *path, const char ***out)
{
    size_t n = 0, cap = 8;
    const char **seg = corral_arena_alloc(a, cap * sizeof(*seg));
    const char *p = path;
    if (*p == '/')
        p++;
    while (*p) {
        const char *slash = strchr(p, '/');
        size_t len = slash ? (size_t)(slash - p) : strlen(p);
        if (n == cap) {
            seg = corral_arena_grow(a, seg, cap * sizeof(*seg), 2 * cap * sizeof(*seg));
            cap *= 2;
        }
        seg[n++] = corral_arena_strndup(a, p, len);
        if (!slash)
            break;
        p = slash + 1;
    }
    *out = seg;
    return n;
}

typedef struct caps {
    const char *group, *version, *ns, *resource, *name;
} caps_t;

static bool match(const char *pattern, const char **seg, size_t nseg, caps_t *c)
{
    char pat[160];
    snprintf(pat, sizeof(pat), "%s", pattern);
    memset(c, 0, sizeof(*c));
    size_t i = 0;
    char *save = NULL;
    for (char *tok = strtok_r(pat, "/", &save); tok; tok = strtok_r(NULL, "/", &save)) {
        if (strcmp(tok, "{path}") == 0) {
            i = nseg;
            break;
        }
        if (strcmp(tok, "{prefix}") == 0) {
            if (i + 2 <= nseg && strcmp(seg[i], "api") == 0) {
                c->group = "";
                c->version = seg[i + 1];
                i += 2;
            } else if (i + 3 <= nseg && strcmp(seg[i], "apis") == 0) {
                c->group = seg[i + 1];
                c->version = seg[i + 2];
                i += 3;
            } else {
                return false;
            }
            continue;
        }
        if (i >= nseg || !seg[i][0])
            return false;
        if (strcmp(tok, "{group}") == 0)
            c->group = seg[i];
        else if (strcmp(tok, "{version}") == 0)
            c->version = seg[i];
        else if (strcmp(tok, "{namespace}") == 0)
            c->ns = seg[i];
        else if (strcmp(tok, "{resource}") == 0)
            c->resource = seg[i];
        else if (strcmp(tok, "{name}") == 0)
            c->name = seg[i];
        else if (strcmp(tok, seg[i]) != 0)
            return false;
        i++;
    }
    return i == nseg;
}

/* Check what the captures name; sets r's routing fields. */
static bool resolve(const route_t *rt, const caps_t *c, corral__req_t *r)
{
    const corral__res_t *res = NULL;
    if (rt->kind >= 0) {
        res = corral__res_of_kind((corral_kind_t)rt->kind);
        if (!c->version || strcmp(c->version, res->info->version) != 0)
            return false;
    } else if (c->resource) {
        res = corral__res_find(c->group, c->version, c->resource);
        if (!res)
            return false;
        if (rt->scope == SC_NS && !res->info->namespaced)
            return false;
        if (rt->scope == SC_CLUSTER && res->info->namespaced)
            return false;
        if (rt->status == SUB_STATUS && !res->has_status)
            return false;
        if (rt->status == SUB_SCALE && !res->has_scale)
            return false;
    }
    r->res = res;
    r->group = c->group ? c->group : "";
    r->version = c->version ? c->version : "";
    r->ns = c->ns;
    r->name = c->name;
    r->sub = rt->status == SUB_STATUS ? "status" : rt->status == SUB_SCALE ? "scale" : NULL;
    return true;
}

void corral__dispatch(corral__req_t *r)
{
    if (!corral__authorize(r))
        return;
    const char **seg;
    size_t nseg = split(r->a, r->path, &seg);
    bool path_known = false;
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(routes); i++) {
        const route_t *rt = &routes[i];
        caps_t c;
        if (!match(rt->pattern, seg, nseg, &c) || !resolve(rt, &c, r))
            continue;
        if (strcmp(rt->method, r->method) == 0) {
            r->handler = rt->fn;
            /* Writes on a worker: a big body's (create), or any update or
             * patch (its cost is the stored object's, whatever the body). */
            bool heavy = rt->fn == corral__h_update || rt->fn == corral__h_patch ||
                         (rt->fn == corral__h_create && r->body_len >= CORRAL__OFFLOAD_MIN);
            if (!heavy || !corral__offload(r, rt->fn))
                rt->fn(r);
            return;
        }
        path_known = true;
    }
    r->res = NULL;
    r->name = NULL;
    if (path_known)
        corral__status(r, 405, "MethodNotAllowed", NULL, NULL,
                       "the server does not allow this method on the requested resource");
    else
        corral__status(r, 404, "NotFound", NULL, NULL,
                       "the server could not find the requested resource");
}

void corral_apiserver_print_routes(FILE *fp)
{
    fprintf(fp, "# API routes\n\n"
                "Generated by `corral apiserver --print-routes` from the route table in\n"
                "`src/apiserver/routes.c`; `make test` fails when this file is stale.\n"
                "What the routes mean, and how they differ from kube-apiserver, is in\n"
                "[apiserver.md](apiserver.md).\n\n"
                "`{prefix}` is `/api/{version}` for the core group and\n"
                "`/apis/{group}/{version}` for the others; `{resource}` is one of the\n"
                "resources below, of the scope the route needs. Routes are tried in\n"
                "order; a path that matches with another method gets 405.\n\n"
                "| method | path | what |\n|---|---|---|\n");
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(routes); i++)
        fprintf(fp, "| %s | `%s` | %s |\n", routes[i].method, routes[i].pattern, routes[i].doc);
    fprintf(fp, "\n## Resources\n\n"
                "Every resource supports get, list, watch, create, update, patch, delete and\n"
                "deletecollection.\n\n");
    corral__print_resources(fp);
    fprintf(fp,
            "\n## Not served\n\n"
            "Requests for these get 404 (or 405), as from a kube-apiserver without them:\n\n"
            "- Workload APIs Corral's controllers do not run: `apps/v1` ReplicaSets and\n"
            "  StatefulSets (Deployments and DaemonSets are stored and validated, run by\n"
            "  nothing; ControllerRevisions are served: the InferenceService controller\n"
            "  keeps its revisions in them), `batch/v1` Jobs and CronJobs,\n"
            "  `autoscaling` HorizontalPodAutoscalers, PodDisruptionBudgets.\n"
            "- Networking and storage: Ingress, NetworkPolicy, EndpointSlices,\n"
            "  PersistentVolumes and claims, StorageClasses, CSI objects.\n"
            "- Objects of CustomResourceDefinitions (CRDs are stored and validated; the\n"
            "  Volcano, KServe and Corral kinds are built in) and API aggregation\n"
            "  (`apiregistration.k8s.io`).\n"
            "- Admission webhooks, certificates (CSRs), TokenReview, SubjectAccessReview\n"
            "  and LocalSubjectAccessReview, FlowSchemas.\n"
            "- Subresources `pods/exec`, `attach`, `portforward`, `proxy`, `ephemeralcontainers`,\n"
            "  `resize`; `services/proxy`; methods other than GET on `nodes/proxy`.\n"
            "- Protobuf and CBOR answers (requests in protobuf are decoded; answers are JSON),\n"
            "  `sendInitialEvents` watches, the aggregated discovery document\n"
            "  (`application/json;g=apidiscovery.k8s.io`; clients fall back).\n");
}
