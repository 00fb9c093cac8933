/*
 * The kind registry (apiVersion/Kind, resource names, scope) and the entry
 * point that decodes any object: apiVersion and kind first, then metadata,
 * then the kind's own fields. Also the field-selector support table.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "corral/hint.h"
#include "model/model_int.h"

static const corral_kind_info_t kinds[CORRAL_KIND_COUNT] = {
    {CORRAL_KIND_NAMESPACE, "", "v1", "v1", "Namespace", "namespaces", "namespace", "ns", false},
    {CORRAL_KIND_NODE, "", "v1", "v1", "Node", "nodes", "node", "no", false},
    {CORRAL_KIND_POD, "", "v1", "v1", "Pod", "pods", "pod", "po", true},
    {CORRAL_KIND_EVENT, "", "v1", "v1", "Event", "events", "event", "ev", true},
    {CORRAL_KIND_PRIORITYCLASS, "scheduling.k8s.io", "v1", "scheduling.k8s.io/v1", "PriorityClass",
     "priorityclasses", "priorityclass", "pc", false},
    {CORRAL_KIND_LEASE, "coordination.k8s.io", "v1", "coordination.k8s.io/v1", "Lease", "leases",
     "lease", "", true},
    {CORRAL_KIND_CONFIGMAP, "", "v1", "v1", "ConfigMap", "configmaps", "configmap", "cm", true},
    {CORRAL_KIND_SECRET, "", "v1", "v1", "Secret", "secrets", "secret", "", true},
    {CORRAL_KIND_QUEUE, "scheduling.volcano.sh", "v1beta1", "scheduling.volcano.sh/v1beta1",
     "Queue", "queues", "queue", "q,queue-v1beta1", false},
    {CORRAL_KIND_PODGROUP, "scheduling.volcano.sh", "v1beta1", "scheduling.volcano.sh/v1beta1",
     "PodGroup", "podgroups", "podgroup", "pg,podgroup-v1beta1", true},
    {CORRAL_KIND_VCJOB, "batch.volcano.sh", "v1alpha1", "batch.volcano.sh/v1alpha1", "Job", "jobs",
     "job", "vcjob,vj", true},
    {CORRAL_KIND_HYPERNODE, "topology.volcano.sh", "v1alpha1", "topology.volcano.sh/v1alpha1",
     "HyperNode", "hypernodes", "hypernode", "hn", false},
    {CORRAL_KIND_ISVC, "serving.kserve.io", "v1beta1", "serving.kserve.io/v1beta1",
     "InferenceService", "inferenceservices", "inferenceservice", "isvc", true},
    {CORRAL_KIND_SCENARIO, "corral.dev", "v1alpha1", "corral.dev/v1alpha1", "Scenario", "scenarios",
     "scenario", "", false},
    {CORRAL_KIND_ROLE, "rbac.authorization.k8s.io", "v1", "rbac.authorization.k8s.io/v1", "Role",
     "roles", "role", "", true},
    {CORRAL_KIND_CLUSTERROLE, "rbac.authorization.k8s.io", "v1", "rbac.authorization.k8s.io/v1",
     "ClusterRole", "clusterroles", "clusterrole", "", false},
    {CORRAL_KIND_ROLEBINDING, "rbac.authorization.k8s.io", "v1", "rbac.authorization.k8s.io/v1",
     "RoleBinding", "rolebindings", "rolebinding", "", true},
    {CORRAL_KIND_CLUSTERROLEBINDING, "rbac.authorization.k8s.io", "v1",
     "rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "clusterrolebindings",
     "clusterrolebinding", "", false},
    {CORRAL_KIND_SCHEDCONF, "corral.dev", "v1alpha1", "corral.dev/v1alpha1",
     "SchedulerConfiguration", "schedulerconfigurations", "schedulerconfiguration", "schedconf",
     false},
    {CORRAL_KIND_SERVICEACCOUNT, "", "v1", "v1", "ServiceAccount", "serviceaccounts",
     "serviceaccount", "sa", true},
    {CORRAL_KIND_SERVICE, "", "v1", "v1", "Service", "services", "service", "svc", true},
    {CORRAL_KIND_ENDPOINTS, "", "v1", "v1", "Endpoints", "endpoints", "endpoints", "ep", true},
    {CORRAL_KIND_RESOURCEQUOTA, "", "v1", "v1", "ResourceQuota", "resourcequotas", "resourcequota",
     "quota", true},
    {CORRAL_KIND_LIMITRANGE, "", "v1", "v1", "LimitRange", "limitranges", "limitrange", "limits",
     true},
    {CORRAL_KIND_USAGE, "corral.dev", "v1", "corral.dev/v1", "UsageRecord", "usagerecords",
     "usagerecord", "ur", true},
    {CORRAL_KIND_SERVINGRUNTIME, "serving.kserve.io", "v1alpha1", "serving.kserve.io/v1alpha1",
     "ServingRuntime", "servingruntimes", "servingruntime", "", true},
    {CORRAL_KIND_CLUSTERSERVINGRUNTIME, "serving.kserve.io", "v1alpha1",
     "serving.kserve.io/v1alpha1", "ClusterServingRuntime", "clusterservingruntimes",
     "clusterservingruntime", "", false},
    {CORRAL_KIND_LOCALMODELCACHE, "serving.kserve.io", "v1alpha1", "serving.kserve.io/v1alpha1",
     "LocalModelCache", "localmodelcaches", "localmodelcache", "", false},
    {CORRAL_KIND_LOCALMODELNODEGROUP, "serving.kserve.io", "v1alpha1", "serving.kserve.io/v1alpha1",
     "LocalModelNodeGroup", "localmodelnodegroups", "localmodelnodegroup", "", false},
    {CORRAL_KIND_LOCALMODELNODE, "serving.kserve.io", "v1alpha1", "serving.kserve.io/v1alpha1",
     "LocalModelNode", "localmodelnodes", "localmodelnode", "", false},
    {CORRAL_KIND_CONTROLLERREVISION, "apps", "v1", "apps/v1", "ControllerRevision",
     "controllerrevisions", "controllerrevision", "", true},
    {CORRAL_KIND_DEPLOYMENT, "apps", "v1", "apps/v1", "Deployment", "deployments", "deployment",
     "deploy", true},
    {CORRAL_KIND_DAEMONSET, "apps", "v1", "apps/v1", "DaemonSet", "daemonsets", "daemonset", "ds",
     true},
    {CORRAL_KIND_CRD, "apiextensions.k8s.io", "v1", "apiextensions.k8s.io/v1",
     "CustomResourceDefinition", "customresourcedefinitions", "customresourcedefinition",
     "crd,crds", false},
};

static const corral__kind_fn kind_fns[CORRAL_KIND_COUNT] = {
    [CORRAL_KIND_NAMESPACE] = corral__kind_namespace,
    [CORRAL_KIND_NODE] = corral__kind_node,
    [CORRAL_KIND_POD] = corral__kind_pod,
    [CORRAL_KIND_EVENT] = corral__kind_event,
    [CORRAL_KIND_PRIORITYCLASS] = corral__kind_priorityclass,
    [CORRAL_KIND_LEASE] = corral__kind_lease,
    [CORRAL_KIND_CONFIGMAP] = corral__kind_configmap,
    [CORRAL_KIND_SECRET] = corral__kind_secret,
    [CORRAL_KIND_QUEUE] = corral__kind_queue,
    [CORRAL_KIND_PODGROUP] = corral__kind_podgroup,
    [CORRAL_KIND_VCJOB] = corral__kind_vcjob,
    [CORRAL_KIND_HYPERNODE] = corral__kind_hypernode,
    [CORRAL_KIND_ISVC] = corral__kind_isvc,
    [CORRAL_KIND_SCENARIO] = corral__kind_scenario,
    [CORRAL_KIND_ROLE] = corral__kind_role,
    [CORRAL_KIND_CLUSTERROLE] = corral__kind_role,
    [CORRAL_KIND_ROLEBINDING] = corral__kind_role_binding,
    [CORRAL_KIND_CLUSTERROLEBINDING] = corral__kind_role_binding,
    [CORRAL_KIND_SCHEDCONF] = corral__kind_schedconf,
    [CORRAL_KIND_SERVICEACCOUNT] = corral__kind_service_account,
    [CORRAL_KIND_SERVICE] = corral__kind_service,
    [CORRAL_KIND_ENDPOINTS] = corral__kind_endpoints,
    [CORRAL_KIND_RESOURCEQUOTA] = corral__kind_resource_quota,
    [CORRAL_KIND_LIMITRANGE] = corral__kind_limit_range,
    [CORRAL_KIND_USAGE] = corral__kind_usage,
    [CORRAL_KIND_SERVINGRUNTIME] = corral__kind_serving_runtime,
    [CORRAL_KIND_CLUSTERSERVINGRUNTIME] = corral__kind_serving_runtime,
    [CORRAL_KIND_LOCALMODELCACHE] = corral__kind_local_model_cache,
    [CORRAL_KIND_LOCALMODELNODEGROUP] = corral__kind_local_model_node_group,
    [CORRAL_KIND_LOCALMODELNODE] = corral__kind_local_model_node,
    [CORRAL_KIND_CONTROLLERREVISION] = corral__kind_controller_revision,
    [CORRAL_KIND_DEPLOYMENT] = corral__kind_deployment,
    [CORRAL_KIND_DAEMONSET] = corral__kind_daemonset,
    [CORRAL_KIND_CRD] = corral__kind_crd,
};

const corral_kind_info_t *corral_kind_get(corral_kind_t k)
{
    return (unsigned)k < CORRAL_KIND_COUNT ? &kinds[k] : NULL;
}

const corral_kind_info_t *corral_kind_find(const char *api_version, const char *kind)
{
    for (size_t i = 0; i < CORRAL_KIND_COUNT; i++) {
        if (strcmp(kinds[i].api_version, api_version) == 0 && strcmp(kinds[i].name, kind) == 0)
            return &kinds[i];
    }
    return NULL;
}

static bool in_list(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len == n && strncasecmp(p, name, n) == 0)
            return true;
        p = comma ? comma + 1 : p + len;
    }
    return false;
}

const corral_kind_info_t *corral_kind_find_resource(const char *name)
{
    /* Qualified forms ("jobs.batch.volcano.sh", "queue.scheduling.volcano.sh"). */
    const char *dot = strchr(name, '.');
    char base[64];
    const char *group = NULL;
    if (dot && (size_t)(dot - name) < sizeof(base)) {
        snprintf(base, sizeof(base), "%.*s", (int)(dot - name), name);
        group = dot + 1;
        name = base;
    }
    for (size_t i = 0; i < CORRAL_KIND_COUNT; i++) {
        const corral_kind_info_t *k = &kinds[i];
        if (group && strcmp(group, k->group) != 0)
            continue;
        if (!strcasecmp(name, k->plural) || !strcasecmp(name, k->singular) ||
            !strcasecmp(name, k->name) || in_list(k->short_names, name))
            return k;
    }
    return NULL;
}

/* --- decoding ---------------------------------------------------------------- */

static void unknown_kind(corral__dec_t *d, const corral_val_t *root, const char *api_version,
                         const char *kind)
{
    for (size_t i = 0; i < CORRAL_KIND_COUNT; i++) {
        if (strcmp(kinds[i].name, kind) == 0) {
            corral__dec_err_field(d, corral_val_get(root, "apiVersion"), "apiVersion",
                                  "%s is served as apiVersion %s, not \"%s\"", kind,
                                  kinds[i].api_version, api_version);
            return;
        }
    }
    const char *names[CORRAL_KIND_COUNT];
    char list[512] = "";
    size_t o = 0;
    for (size_t i = 0; i < CORRAL_KIND_COUNT; i++) {
        names[i] = kinds[i].name;
        if (o < sizeof(list))
            o += (size_t)snprintf(list + o, sizeof(list) - o, "%s%s", i ? ", " : "", kinds[i].name);
    }
    const char *best = corral_hint_closest(kind, names, CORRAL_KIND_COUNT);
    if (best)
        corral__dec_err_field(d, corral_val_get(root, "kind"), "kind",
                              "unknown kind \"%s\"; did you mean `%s`?", kind, best);
    else
        corral__dec_err_field(d, corral_val_get(root, "kind"), "kind",
                              "unknown kind \"%s\" (apiVersion %s); Corral accepts: %s", kind,
                              api_version, list);
}

/* apiVersion and kind: both required strings. NULL when either is unusable. */
static const corral_kind_info_t *decode_type(corral__dec_t *d, const corral_val_t *root)
{
    const corral_val_t *av = corral_val_get(root, "apiVersion");
    const corral_val_t *kv = corral_val_get(root, "kind");
    const char *api_version = NULL, *kind = NULL;
    size_t m = corral__dec_enter(d, "kind");
    if (!kv)
        corral__dec_err(d, root, "required: every object needs kind (Pod, Queue, ...)");
    else
        corral__dec_str(d, kv, &kind);
    corral__dec_leave(d, m);
    m = corral__dec_enter(d, "apiVersion");
    if (!av) {
        const corral_kind_info_t *k = kind ? corral_kind_find_resource(kind) : NULL;
        if (k && strcmp(k->name, kind) == 0)
            corral__dec_err(d, root, "required; %s objects use `apiVersion: %s`", kind,
                            k->api_version);
        else
            corral__dec_err(d, root, "required: every object needs apiVersion");
    } else {
        corral__dec_str(d, av, &api_version);
    }
    corral__dec_leave(d, m);
    if (!api_version || !kind)
        return NULL;
    const corral_kind_info_t *info = corral_kind_find(api_version, kind);
    if (!info)
        unknown_kind(d, root, api_version, kind);
    return info;
}

static int name_rule(corral_kind_t k)
{
    switch (k) {
    case CORRAL_KIND_NAMESPACE:
        return CORRAL__NAME_LABEL;
    case CORRAL_KIND_ROLE:
    case CORRAL_KIND_CLUSTERROLE:
    case CORRAL_KIND_ROLEBINDING:
    case CORRAL_KIND_CLUSTERROLEBINDING:
        return CORRAL__NAME_PATH_SEGMENT;
    default:
        return CORRAL__NAME_SUBDOMAIN;
    }
}

static void decode_meta(corral__dec_t *d, const corral_val_t *root, corral_obj_t *o)
{
    const corral_val_t *mv = corral_val_get(root, "metadata");
    size_t m = corral__dec_enter(d, "metadata");
    if (!mv)
        corral__dec_err(d, root, "required: every object needs metadata with a name");
    else
        corral__dec_meta(d, mv, &o->meta);
    corral__dec_leave(d, m);
    if (o->info->namespaced) {
        if (!o->meta.namespace || !*o->meta.namespace)
            o->meta.namespace = "default";
    } else if (o->meta.namespace && *o->meta.namespace) {
        corral__dec_warn(d, corral_val_get(mv, "namespace"),
                         "%s is cluster-scoped; metadata.namespace \"%s\" is ignored",
                         o->info->name, o->meta.namespace);
        o->meta.namespace = NULL;
    } else {
        o->meta.namespace = NULL;
    }
    if (mv)
        corral__check_object_name(d, mv, &o->meta, name_rule(o->info->kind));
}

int corral_obj_decode(corral_arena_t *a, corral_val_t *raw, const char *file, corral_diag_t *diag,
                      corral_obj_t **out)
{
    corral__dec_t d;
    corral__dec_init(&d, a, diag, file);
    *out = NULL;
    if (raw) {
        d.line = raw->line;
        d.col = raw->col;
    }
    if (!raw || raw->kind != CORRAL_VAL_MAP) {
        corral__dec_err(&d, raw,
                        "expected a Kubernetes object (a mapping with apiVersion, kind and "
                        "metadata), got %s",
                        raw ? corral_val_kind_name(raw->kind) : "nothing");
        corral__dec_fini(&d);
        return CORRAL_EINVAL;
    }
    const corral_kind_info_t *info = decode_type(&d, raw);
    if (!info) {
        corral__dec_fini(&d);
        return CORRAL_EINVAL;
    }
    corral_obj_t *o = corral_arena_alloc(a, sizeof(*o));
    o->info = info;
    o->raw = raw;
    o->file = file;
    decode_meta(&d, raw, o);
    kind_fns[info->kind](&d, raw, o);
    *out = o;
    int rc = d.errors ? CORRAL_EINVAL : 0;
    corral__dec_fini(&d);
    return rc;
}

const char *corral_obj_ref(const corral_obj_t *o, char *buf, size_t len)
{
    const char *name = o->meta.name && *o->meta.name ? o->meta.name : o->meta.generate_name;
    if (!name)
        name = "";
    if (o->info->namespaced)
        snprintf(buf, len, "%s/%s/%s", o->info->name, o->meta.namespace, name);
    else
        snprintf(buf, len, "%s/%s", o->info->name, name);
    return buf;
}

/* --- field selectors ------------------------------------------------------------ */

typedef struct field_sel {
    corral_kind_t kind;
    const char *field;
    const char *dflt; /* value when absent */
} field_sel_t;

static const field_sel_t field_sels[] = {
    {CORRAL_KIND_POD, "spec.nodeName", ""},
    {CORRAL_KIND_POD, "spec.restartPolicy", "Always"},
    {CORRAL_KIND_POD, "spec.schedulerName", "default-scheduler"},
    {CORRAL_KIND_POD, "spec.serviceAccountName", ""},
    {CORRAL_KIND_POD, "spec.hostNetwork", "false"},
    {CORRAL_KIND_POD, "status.phase", ""},
    {CORRAL_KIND_POD, "status.podIP", ""},
    {CORRAL_KIND_POD, "status.nominatedNodeName", ""},
    {CORRAL_KIND_NODE, "spec.unschedulable", "false"},
    {CORRAL_KIND_NAMESPACE, "status.phase", ""},
    {CORRAL_KIND_SECRET, "type", "Opaque"},
    {CORRAL_KIND_EVENT, "involvedObject.kind", ""},
    {CORRAL_KIND_EVENT, "involvedObject.namespace", ""},
    {CORRAL_KIND_EVENT, "involvedObject.name", ""},
    {CORRAL_KIND_EVENT, "involvedObject.uid", ""},
    {CORRAL_KIND_EVENT, "involvedObject.apiVersion", ""},
    {CORRAL_KIND_EVENT, "involvedObject.resourceVersion", ""},
    {CORRAL_KIND_EVENT, "involvedObject.fieldPath", ""},
    {CORRAL_KIND_EVENT, "reason", ""},
    {CORRAL_KIND_EVENT, "reportingComponent", ""},
    {CORRAL_KIND_EVENT, "source", ""},
    {CORRAL_KIND_EVENT, "type", ""},
};

static const field_sel_t *find_field_sel(corral_kind_t k, const char *field)
{
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(field_sels); i++) {
        if (field_sels[i].kind == k && strcmp(field_sels[i].field, field) == 0)
            return &field_sels[i];
    }
    return NULL;
}

size_t corral_kind_fields(corral_kind_t k, const char **out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(field_sels); i++) {
        if (field_sels[i].kind != k)
            continue;
        if (n < max)
            out[n] = field_sels[i].field;
        n++;
    }
    return n;
}

bool corral_kind_field_supported(corral_kind_t k, const char *field)
{
    if (strcmp(field, "metadata.name") == 0)
        return true;
    if (strcmp(field, "metadata.namespace") == 0)
        return kinds[k].namespaced;
    return find_field_sel(k, field) != NULL;
}

const char *corral_obj_field(const corral_obj_t *o, const char *field)
{
    if (strcmp(field, "metadata.name") == 0)
        return o->meta.name ? o->meta.name : "";
    if (strcmp(field, "metadata.namespace") == 0)
        return o->info->namespaced && o->meta.namespace ? o->meta.namespace : NULL;
    const field_sel_t *fs = find_field_sel(o->info->kind, field);
    if (!fs)
        return NULL;
    /* Events select "source" on source.component. */
    const corral_val_t *v =
        corral_val_dig(o->raw, strcmp(field, "source") == 0 && o->info->kind == CORRAL_KIND_EVENT
                                   ? "source.component"
                                   : field);
    if (!v || v->kind == CORRAL_VAL_NULL)
        return fs->dflt;
    if (v->kind == CORRAL_VAL_SEQ || v->kind == CORRAL_VAL_MAP)
        return fs->dflt;
    return v->s;
}
