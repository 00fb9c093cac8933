/*
 * What a node agent may do, as Kubernetes' Node authorizer and
 * NodeRestriction admission plugin decide it for kubelets. A node user is
 * one named system:node:NAME in group system:nodes (from the token file).
 *
 * The authorizer (asked before RBAC, per request attributes) allows a node:
 * reading nodes, pods, services and endpoints; creating nodes and updating
 * or patching its own Node and nodes/status; creating, deleting and
 * updating the status of pods and creating pod evictions (admission
 * narrows these to pods bound to the node); creating and patching events;
 * getting a configmap or secret only when a pod bound to the node refers
 * to it (env valueFrom, envFrom, volumes, projected volumes, image pull
 * secrets); and get/create/update/patch/delete of its own Lease in
 * kube-node-lease only. Anything else has no opinion here and goes to RBAC,
 * so an administrator may still bind a node more roles; a denial carries
 * the authorizer's reason, as upstream's union authorizer does.
 *
 * Admission (after authorization, whatever allowed the request) keeps a
 * node to its own objects: its own Node (not another's; not its own taints
 * once registered; no node-restriction.kubernetes.io/ labels), its own
 * Lease, the status and deletion of pods bound to it, and no pod creation
 * at all (upstream lets kubelets create mirror pods of static pods; Corral
 * runs no static pods).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "apiserver/apiserver_int.h"

#define NODE_PREFIX        "system:node:"
#define NODES_GROUP        "system:nodes"
#define LEASE_NS           "kube-node-lease"
#define MIRROR_ANNOTATION  "kubernetes.io/config.mirror"
#define RESTRICTED_LABELS  "node-restriction.kubernetes.io"
#define NO_RELATIONSHIP    "no relationship found between node '%s' and this object"
#define LEASE_VERBS_REASON "can only get, create, update, patch, or delete a node lease"

const char *corral__node_of(const corral_user_t *u)
{
    if (!u || strncmp(u->name, NODE_PREFIX, strlen(NODE_PREFIX)) != 0 ||
        !u->name[strlen(NODE_PREFIX)] || !corral_user_in_group(u, NODES_GROUP))
        return NULL;
    return u->name + strlen(NODE_PREFIX);
}

static bool is(const char *s, const char *a)
{
    return s && strcmp(s, a) == 0;
}

static bool verb_in(const char *verb, const char *const *verbs)
{
    for (; *verbs; verbs++) {
        if (strcmp(verb, *verbs) == 0)
            return true;
    }
    return false;
}

/* --- the graph: does a pod bound to the node refer to this configmap/secret? ---------- */

typedef struct refs {
    const char *node;
    const char *name;
    bool secret;
    bool found;
    corral_arena_t *a;
} refs_t;

static bool name_is(const corral_val_t *m, const char *key, const char *name)
{
    return is(corral_val_get_str(m, key), name);
}

static bool container_refers(const corral_val_t *c, const refs_t *q)
{
    const char *ref = q->secret ? "secretKeyRef" : "configMapKeyRef";
    const char *from = q->secret ? "secretRef" : "configMapRef";
    const corral_val_t *env = corral_val_get(c, "env");
    for (size_t i = 0; env && env->kind == CORRAL_VAL_SEQ && i < env->n; i++) {
        const corral_val_t *vf = corral_val_get(env->items[i], "valueFrom");
        if (name_is(corral_val_get(vf, ref), "name", q->name))
            return true;
    }
    const corral_val_t *ef = corral_val_get(c, "envFrom");
    for (size_t i = 0; ef && ef->kind == CORRAL_VAL_SEQ && i < ef->n; i++) {
        if (name_is(corral_val_get(ef->items[i], from), "name", q->name))
            return true;
    }
    return false;
}

static bool volume_refers(const corral_val_t *v, const refs_t *q)
{
    if (q->secret ? name_is(corral_val_get(v, "secret"), "secretName", q->name)
                  : name_is(corral_val_get(v, "configMap"), "name", q->name))
        return true;
    const corral_val_t *src = corral_val_dig(v, "projected.sources");
    for (size_t i = 0; src && src->kind == CORRAL_VAL_SEQ && i < src->n; i++) {
        if (name_is(corral_val_get(src->items[i], q->secret ? "secret" : "configMap"), "name",
                    q->name))
            return true;
    }
    return false;
}

static bool pod_refers(const corral_val_t *spec, const refs_t *q)
{
    static const char *const lists[] = {"containers", "initContainers", "ephemeralContainers",
                                        "volumes"};
    for (size_t k = 0; k < CORRAL_ARRAY_LEN(lists); k++) {
        const corral_val_t *l = corral_val_get(spec, lists[k]);
        for (size_t i = 0; l && l->kind == CORRAL_VAL_SEQ && i < l->n; i++) {
            if (k == 3 ? volume_refers(l->items[i], q) : container_refers(l->items[i], q))
                return true;
        }
    }
    const corral_val_t *ips = corral_val_get(spec, "imagePullSecrets");
    for (size_t i = 0; q->secret && ips && ips->kind == CORRAL_VAL_SEQ && i < ips->n; i++) {
        if (name_is(ips->items[i], "name", q->name))
            return true;
    }
    return false;
}

static int pod_row(void *ctx, const corral_store_row_t *row)
{
    refs_t *q = ctx;
    const char *bound = corral_store_attrs_get(row->attrs, row->attrs_len, 'f', "spec.nodeName");
    if (!is(bound, q->node))
        return 0;
    corral_arena_t a;
    corral_arena_init(&a);
    const corral_val_t *pod = corral__json_tree(&a, row->json, row->json_len);
    q->found = pod && pod_refers(corral_val_get(pod, "spec"), q);
    corral_arena_fini(&a);
    return q->found ? 1 : 0;
}

static bool node_refers(corral__req_t *r, const char *node, const corral_authz_attrs_t *a)
{
    refs_t q = {node, a->name, strcmp(a->resource, "secrets") == 0, false, r->a};
    int64_t rev;
    corral_store_list(corral__rd(r), corral__res_of_kind(CORRAL_KIND_POD)->key, a->namespace, NULL,
                      NULL, pod_row, &q, &rev);
    return q.found;
}

/* --- the authorizer ------------------------------------------------------------------------ */

static const char *const READ[] = {"get", "list", "watch", NULL};
static const char *const UPDATE[] = {"update", "patch", NULL};

static bool authorize_core(corral__req_t *r, const corral_authz_attrs_t *a, const char *node,
                           char *why, size_t len)
{
    static const char *const node_verbs[] = {"get", "list", "watch", "create", NULL};
    static const char *const pod_verbs[] = {"get", "list", "watch", "create", "delete", NULL};
    static const char *const pod_status[] = {"get", "update", "patch", NULL};
    static const char *const event_verbs[] = {"create", "update", "patch", NULL};
    const char *res = a->resource, *sub = a->subresource, *v = a->verb;
    if (is(res, "nodes") && (!*sub || is(sub, "status"))) {
        if ((!*sub && verb_in(v, node_verbs)) || (is(sub, "status") && verb_in(v, READ)))
            return true;
        if (verb_in(v, UPDATE) && is(a->name, node))
            return true;
        if (verb_in(v, UPDATE))
            snprintf(why, len, "node '%s' cannot modify node '%s'", node, a->name);
        return false;
    }
    if (is(res, "pods"))
        return (!*sub && verb_in(v, pod_verbs)) || (is(sub, "status") && verb_in(v, pod_status)) ||
               (is(sub, "eviction") && is(v, "create"));
    if ((is(res, "services") || is(res, "endpoints")) && !*sub)
        return verb_in(v, READ);
    if (is(res, "events") && !*sub)
        return verb_in(v, event_verbs);
    if ((is(res, "configmaps") || is(res, "secrets")) && !*sub) {
        if (!verb_in(v, READ) || !*a->name) {
            snprintf(why, len, "can only get individual resources of this type");
            return false;
        }
        if (node_refers(r, node, a))
            return true;
        snprintf(why, len, NO_RELATIONSHIP, node);
    }
    return false;
}

static bool authorize_lease(const corral_authz_attrs_t *a, const char *node, char *why, size_t len)
{
    static const char *const verbs[] = {"get", "create", "update", "patch", "delete", NULL};
    if (!verb_in(a->verb, verbs))
        snprintf(why, len, LEASE_VERBS_REASON);
    else if (!is(a->namespace, LEASE_NS))
        snprintf(why, len, "can only access leases in the kube-node-lease namespace");
    else if (!is(a->name, node) && !(is(a->verb, "create") && !*a->name))
        snprintf(why, len, "can only access node lease with the same name as the requesting node");
    else
        return !*a->subresource;
    return false;
}

/* The model cache (docs/agent.md): a node reads LocalModelCaches and
 * LocalModelNodeGroups, and reads and writes its own LocalModelNode. */
static bool authorize_model_cache(const corral_authz_attrs_t *a, const char *node, char *why,
                                  size_t len)
{
    static const char *const own[] = {"get", "create", "update", "patch", NULL};
    const char *res = a->resource, *sub = a->subresource;
    if ((is(res, "localmodelcaches") || is(res, "localmodelnodegroups")) && !*sub)
        return verb_in(a->verb, READ);
    if (!is(res, "localmodelnodes") || (*sub && !is(sub, "status")))
        return false;
    if (verb_in(a->verb, READ) && !*sub)
        return true;
    if (verb_in(a->verb, own) && (is(a->name, node) || (is(a->verb, "create") && !*a->name)))
        return true;
    snprintf(why, len, "node '%s' can only write its own LocalModelNode", node);
    return false;
}

bool corral__node_authorize(corral__req_t *r, const corral_authz_attrs_t *a, const char *node,
                            char *why, size_t len)
{
    why[0] = '\0';
    if (!a->resource_request)
        return false;
    if (!*a->api_group)
        return authorize_core(r, a, node, why, len);
    if (is(a->api_group, "coordination.k8s.io") && is(a->resource, "leases"))
        return authorize_lease(a, node, why, len);
    if (is(a->api_group, "events.k8s.io") && is(a->resource, "events"))
        return verb_in(a->verb, (const char *const[]){"create", "update", "patch", NULL});
    if (is(a->api_group, "serving.kserve.io"))
        return authorize_model_cache(a, node, why, len);
    return false;
}

/* --- admission ----------------------------------------------------------------------------- */

static void refuse(corral__req_t *r, const char *name, const char *fmt, ...) CORRAL_PRINTF(3, 4);
static void refuse(corral__req_t *r, const char *name, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    corral__status(r, 403, "Forbidden", r->res->info->plural, name, "%s \"%s\" is forbidden: %s",
                   r->res->name, name ? name : "", msg);
}

/* Labels under node-restriction.kubernetes.io/ that differ between a and b. */
static const char *restricted_label_change(const corral_val_t *a, const corral_val_t *b)
{
    const corral_val_t *sides[2] = {a, b};
    for (int s = 0; s < 2; s++) {
        const corral_val_t *m = sides[s];
        for (size_t i = 0; m && m->kind == CORRAL_VAL_MAP && i < m->n; i++) {
            const char *k = m->pairs[i].key->s;
            const char *slash = strchr(k, '/');
            size_t pl = slash ? (size_t)(slash - k) : 0;
            size_t rl = strlen(RESTRICTED_LABELS);
            bool restricted = slash && pl >= rl && memcmp(slash - rl, RESTRICTED_LABELS, rl) == 0 &&
                              (pl == rl || k[pl - rl - 1] == '.');
            if (restricted && !corral_val_equal(m->pairs[i].val, corral_val_get(sides[1 - s], k)))
                return k;
        }
    }
    return NULL;
}

/* Taints other than corral.dev/gpu-unhealthy, which a node agent sets and
 * clears on itself from its GPUs' health (docs/agent.md); a copy in a. */
static corral_val_t *other_taints(corral_arena_t *a, const corral_val_t *taints)
{
    corral_val_t *out = corral_val_new(a, CORRAL_VAL_SEQ);
    for (size_t i = 0; taints && taints->kind == CORRAL_VAL_SEQ && i < taints->n; i++) {
        const char *k = corral_val_get_str(taints->items[i], "key");
        if (!k || strcmp(k, "corral.dev/gpu-unhealthy") != 0)
            corral_val_push(a, out, taints->items[i]);
    }
    return out;
}

static bool admit_node_object(corral__req_t *r, const char *node, const corral_val_t *obj,
                              const corral_val_t *cur)
{
    const char *name = obj ? corral__meta_str(obj, "name") : r->name;
    if (!is(name, node)) {
        refuse(r, name, "node \"%s\" is not allowed to modify node \"%s\"", node, name ? name : "");
        return false;
    }
    if (!obj)
        return true;
    const char *label =
        restricted_label_change(corral_val_dig(obj, "metadata.labels"),
                                cur ? corral_val_dig(cur, "metadata.labels") : NULL);
    if (label) {
        refuse(r, name,
               cur ? "node \"%s\" is not allowed to modify labels: %s"
                   : "node \"%s\" is not allowed to set the following labels: %s",
               node, label);
        return false;
    }
    if (cur && !corral_val_equal(other_taints(r->a, corral_val_dig(obj, "spec.taints")),
                                 other_taints(r->a, corral_val_dig(cur, "spec.taints")))) {
        refuse(r, name, "node \"%s\" is not allowed to modify taints", node);
        return false;
    }
    return true;
}

static bool admit_lease(corral__req_t *r, const char *node, const corral_val_t *obj)
{
    const char *name = obj ? corral__meta_str(obj, "name") : r->name;
    const char *ns = obj ? corral__meta_str(obj, "namespace") : r->ns;
    if (!ns)
        ns = r->ns;
    if (is(name, node) && is(ns, LEASE_NS))
        return true;
    refuse(r, name, "can only access node lease with the same name as the requesting node");
    return false;
}

/* The annotations a node writes on its pods: the GPU time the pod used,
 * with its final status (the controller's accounting reads it), and how its
 * model came to the node (the model cache: "hit 0.004s", "fetched 3.2s"). */
#define GPU_SECONDS_USED "corral.dev/gpu-seconds-used"
#define MODEL_FETCH      "corral.dev/model-fetch"

static bool skipped(const char *k)
{
    return is(k, GPU_SECONDS_USED) || is(k, MODEL_FETCH);
}

/* Does map a hold the same pairs as b, the node's own annotations aside?
 * (NULL: empty.) */
static bool same_except(const corral_val_t *a, const corral_val_t *b)
{
    size_t na = 0, nb = 0;
    for (size_t i = 0; a && a->kind == CORRAL_VAL_MAP && i < a->n; i++) {
        if (skipped(a->pairs[i].key->s))
            continue;
        na++;
        if (!corral_val_equal(a->pairs[i].val, corral_val_get(b, a->pairs[i].key->s)))
            return false;
    }
    for (size_t i = 0; b && b->kind == CORRAL_VAL_MAP && i < b->n; i++)
        nb += !skipped(b->pairs[i].key->s);
    return na == nb;
}

static bool admit_pod_write(corral__req_t *r, const char *node, const corral_val_t *obj,
                            const corral_val_t *cur)
{
    const char *name = corral__meta_str(obj, "name");
    if (!cur) {
        if (corral_val_get(corral_val_dig(obj, "metadata.annotations"), MIRROR_ANNOTATION))
            refuse(r, name,
                   "node \"%s\" can only create mirror pods of static pods, and Corral "
                   "runs none",
                   node);
        else
            refuse(r, name,
                   "pod does not have \"" MIRROR_ANNOTATION
                   "\" annotation, node \"%s\" can only create mirror pods",
                   node);
        return false;
    }
    if (!is(r->sub, "status")) {
        refuse(r, name,
               "unexpected operation \"UPDATE\", node \"%s\" can only create and delete "
               "mirror pods",
               node);
        return false;
    }
    if (!is(corral_val_get_str(corral_val_get(cur, "spec"), "nodeName"), node)) {
        refuse(r, name,
               "node \"%s\" can only update pod status for pods with spec.nodeName set to itself",
               node);
        return false;
    }
    if (!corral_val_equal(corral_val_dig(obj, "metadata.labels"),
                          corral_val_dig(cur, "metadata.labels"))) {
        refuse(r, name, "node \"%s\" cannot update labels through pod status", node);
        return false;
    }
    if (!same_except(corral_val_dig(obj, "metadata.annotations"),
                     corral_val_dig(cur, "metadata.annotations"))) {
        refuse(r, name,
               "node \"%s\" can change only the " GPU_SECONDS_USED " and " MODEL_FETCH
               " annotations through pod status",
               node);
        return false;
    }
    return true;
}

bool corral__admit_node(corral__req_t *r, const corral_val_t *obj, const corral_val_t *cur)
{
    const char *node = corral__node_of(r->user);
    if (!node)
        return true;
    if (cur && !is(r->method, "PUT") && !is(r->method, "PATCH"))
        return true; /* binding, graceful deletion: not an update the node asked for */
    switch (r->res->info->kind) {
    case CORRAL_KIND_NODE:
        return admit_node_object(r, node, obj, cur);
    case CORRAL_KIND_POD:
        return admit_pod_write(r, node, obj, cur);
    case CORRAL_KIND_LEASE:
        return admit_lease(r, node, obj);
    case CORRAL_KIND_LOCALMODELNODE: {
        const char *name = obj ? corral__meta_str(obj, "name") : r->name;
        if (is(name, node))
            return true;
        refuse(r, name, "node \"%s\" can only write its own LocalModelNode", node);
        return false;
    }
    default:
        return true;
    }
}

bool corral__admit_node_delete(corral__req_t *r, const corral_val_t *cur, bool eviction)
{
    const char *node = corral__node_of(r->user);
    if (!node)
        return true;
    switch (r->res->info->kind) {
    case CORRAL_KIND_NODE:
        return admit_node_object(r, node, NULL, NULL);
    case CORRAL_KIND_LEASE:
        return admit_lease(r, node, NULL);
    case CORRAL_KIND_POD:
        break;
    default:
        return true;
    }
    if (is(corral_val_get_str(corral_val_get(cur, "spec"), "nodeName"), node))
        return true;
    if (eviction)
        refuse(r, r->name, "node %s can only evict pods with spec.nodeName set to itself", node);
    else
        refuse(r, r->name, "node \"%s\" can only delete pods with spec.nodeName set to itself",
               node);
    return false;
}
