/*
 * An InferenceService's predictor resolved into the pod template of its
 * replicas, by KServe's rules (pkg/controller/v1beta1/inferenceservice:
 * components/predictor.go, utils/utils.go; pkg/apis/serving/v1beta1/
 * predictor_model.go):
 *
 * - `containers` (a custom predictor): the predictor's PodSpec fields and
 *   containers as written.
 * - `model`: the runtime named by model.runtime (a ServingRuntime of the
 *   service's namespace, else a ClusterServingRuntime), checked to be enabled,
 *   to speak the model's protocolVersion and to list its format; or, with no
 *   runtime named, the first supporting runtime: enabled, single-model, not
 *   multi-node, protocol supported (the model's, v1 when unset), the format
 *   (and version) among its autoSelect formats; namespace runtimes before
 *   cluster runtimes, each group ordered by protocol, newest first, name, then
 *   (stably) by the format's priority, highest first.
 *   The runtime's `kserve-container` (else its first container) merged with
 *   the model's container fields as KServe's strategic merge does it (fields
 *   override, maps merge key by key so resources add up per resource, env by
 *   name, ports by containerPort, volume mounts by mountPath) with args
 *   appended; runtimeVersion sets the image tag; the `{{.Name}}`-style
 *   placeholders of the container replaced from the service's metadata; then
 *   a `transformer-container`, the runtime's other containers and the
 *   predictor's own. Pod fields: the runtime's nodeSelector, affinity,
 *   tolerations, volumes, imagePullSecrets, schedulerName and resourceClaims
 *   merged with the predictor's PodSpec fields.
 *
 * Labels: the runtime's spec.labels, the service's, the predictor's, then
 * serving.kserve.io/inferenceservice and component; annotations: the
 * runtime's spec.annotations, the service's (less KServe's disallowed list),
 * the predictor's. Every container gets env INFERENCE_SERVICE_NAME.
 */
#include <stdio.h>
#include <string.h>

#include "model/model_int.h"

#define PREDICTOR_CONTAINER   "kserve-container"
#define TRANSFORMER_CONTAINER "transformer-container"

/* --- strategic merge of the few shapes involved ------------------------------------------ */

typedef struct merge_rule {
    const char *path; /* dotted path from the merged object */
    const char *key;  /* merge key; NULL: append (args) */
} merge_rule_t;

static const merge_rule_t container_rules[] = {
    {"args", NULL},
    {"env", "name"},
    {"ports", "containerPort"},
    {"volumeMounts", "mountPath"},
    {"volumeDevices", "devicePath"},
    {"resources.claims", "name"},
};

static const merge_rule_t pod_rules[] = {
    {"volumes", "name"},
    {"initContainers", "name"},
    {"ephemeralContainers", "name"},
    {"imagePullSecrets", "name"},
    {"resourceClaims", "name"},
    {"hostAliases", "ip"},
    {"topologySpreadConstraints", "topologyKey"},
    {"schedulingGates", "name"},
};

typedef struct merger {
    corral_arena_t *a;
    const merge_rule_t *rules;
    size_t nrules;
} merger_t;

static const merge_rule_t *rule_at(const merger_t *m, const char *path)
{
    for (size_t i = 0; i < m->nrules; i++) {
        if (strcmp(m->rules[i].path, path) == 0)
            return &m->rules[i];
    }
    return NULL;
}

static void merge_map(const merger_t *m, corral_val_t *dst, const corral_val_t *src,
                      const char *path);

static bool same_key(const corral_val_t *x, const corral_val_t *y, const char *key)
{
    const corral_val_t *a = corral_val_get(x, key), *b = corral_val_get(y, key);
    return a && b && a->s && b->s && strcmp(a->s, b->s) == 0;
}

/* src's elements merged into dst's by key (matched maps merge, the others
 * are appended), or appended when key is NULL. */
static void merge_list(const merger_t *m, corral_val_t *dst, const corral_val_t *src,
                       const char *key, const char *path)
{
    for (size_t i = 0; i < src->n; i++) {
        corral_val_t *e = src->items[i], *hit = NULL;
        for (size_t j = 0; key && e->kind == CORRAL_VAL_MAP && j < dst->n && !hit; j++) {
            if (dst->items[j]->kind == CORRAL_VAL_MAP && same_key(dst->items[j], e, key))
                hit = dst->items[j];
        }
        if (hit)
            merge_map(m, hit, e, path);
        else
            corral_val_push(m->a, dst, corral_val_copy(m->a, e));
    }
}

/* src merged into dst (a map of dst's own): maps merge key by key, null
 * deletes, lists with a rule merge, everything else is replaced. */
static void merge_map(const merger_t *m, corral_val_t *dst, const corral_val_t *src,
                      const char *path)
{
    for (size_t i = 0; src && src->kind == CORRAL_VAL_MAP && i < src->n; i++) {
        const char *k = src->pairs[i].key->s;
        const corral_val_t *v = src->pairs[i].val;
        char sub[256];
        snprintf(sub, sizeof(sub), "%s%s%s", path, *path ? "." : "", k);
        corral_val_t *cur = corral_val_get(dst, k);
        const merge_rule_t *r = rule_at(m, sub);
        if (v->kind == CORRAL_VAL_NULL) {
            corral_val_del(dst, k);
        } else if (cur && cur->kind == CORRAL_VAL_MAP && v->kind == CORRAL_VAL_MAP) {
            merge_map(m, cur, v, sub);
        } else if (cur && cur->kind == CORRAL_VAL_SEQ && v->kind == CORRAL_VAL_SEQ && r) {
            merge_list(m, cur, v, r->key, sub);
        } else {
            corral_val_set(m->a, dst, k, corral_val_copy(m->a, v));
        }
    }
}

/* --- which fields are which ---------------------------------------------------------------- */

/* core/v1 Container's fields: the part of a ModelSpec that is a container. */
static const char *const container_keys[] = {
    "name",
    "image",
    "command",
    "args",
    "workingDir",
    "ports",
    "envFrom",
    "env",
    "resources",
    "resizePolicy",
    "restartPolicy",
    "volumeMounts",
    "volumeDevices",
    "livenessProbe",
    "readinessProbe",
    "startupProbe",
    "lifecycle",
    "terminationMessagePath",
    "terminationMessagePolicy",
    "imagePullPolicy",
    "securityContext",
    "stdin",
    "stdinOnce",
    "tty",
};

/* core/v1 PodSpec's fields, less containers: what a predictor inlines. */
static const char *const pod_keys[] = {
    "volumes",
    "initContainers",
    "ephemeralContainers",
    "restartPolicy",
    "terminationGracePeriodSeconds",
    "activeDeadlineSeconds",
    "dnsPolicy",
    "nodeSelector",
    "serviceAccountName",
    "serviceAccount",
    "automountServiceAccountToken",
    "nodeName",
    "hostNetwork",
    "hostPID",
    "hostIPC",
    "shareProcessNamespace",
    "securityContext",
    "imagePullSecrets",
    "hostname",
    "subdomain",
    "affinity",
    "schedulerName",
    "tolerations",
    "hostAliases",
    "priorityClassName",
    "priority",
    "dnsConfig",
    "readinessGates",
    "runtimeClassName",
    "enableServiceLinks",
    "preemptionPolicy",
    "overhead",
    "topologySpreadConstraints",
    "setHostnameAsFQDN",
    "os",
    "hostUsers",
    "schedulingGates",
    "resourceClaims",
    "resources",
};

/* The pod fields a runtime contributes (KServe's MergePodSpec). */
static const char *const runtime_pod_keys[] = {
    "nodeSelector",     "affinity",      "tolerations",    "volumes",
    "imagePullSecrets", "schedulerName", "resourceClaims",
};

/* Annotations of the service that never reach its pods (KServe's default
 * serviceAnnotationDisallowedList, and kubectl's record of the object). */
static const char *const disallowed_annotations[] = {
    "autoscaling.knative.dev/min-scale",
    "autoscaling.knative.dev/max-scale",
    "internal.serving.kserve.io/storage-initializer-sourceuri",
    "kubectl.kubernetes.io/last-applied-configuration",
};

static bool in(const char *const *list, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++) {
        if (strcmp(list[i], s) == 0)
            return true;
    }
    return false;
}

/* The keys of src listed in keys, copied into a new map. */
static corral_val_t *pick(corral_arena_t *a, const corral_val_t *src, const char *const *keys,
                          size_t n)
{
    corral_val_t *m = corral_val_new(a, CORRAL_VAL_MAP);
    for (size_t i = 0; src && src->kind == CORRAL_VAL_MAP && i < src->n; i++) {
        if (in(keys, n, src->pairs[i].key->s) && src->pairs[i].val->kind != CORRAL_VAL_NULL)
            corral_val_set(a, m, src->pairs[i].key->s, corral_val_copy(a, src->pairs[i].val));
    }
    return m;
}

/* --- runtime selection ---------------------------------------------------------------------- */

static int protocol_int(const char *p)
{
    static const char *const order[] = {"v1", "v2", "grpc-v1", "grpc-v2"};
    for (int i = 0; i < 4; i++) {
        if (p && strcmp(p, order[i]) == 0)
            return i + 1;
    }
    return 5; /* Unknown */
}

/* KServe's GetProtocolVersionPriority: the lowest of the runtime's protocols. */
static int protocol_priority(const corral_serving_runtime_t *r)
{
    int best = 5;
    for (size_t i = 0; i < r->protocol_versions.n; i++) {
        int p = protocol_int(r->protocol_versions.items[i]);
        best = p < best ? p : best;
    }
    return best;
}

static bool protocol_supported(const corral_serving_runtime_t *r, const char *proto)
{
    if (!proto || !*proto || r->protocol_versions.n == 0)
        return true;
    for (size_t i = 0; i < r->protocol_versions.n; i++) {
        if (strcmp(r->protocol_versions.items[i], proto) == 0)
            return true;
    }
    return false;
}

/* KServe's RuntimeSupportsModel: the model's "name" or "name:version" among
 * the runtime's formats (only the autoSelect ones when no runtime is named). */
static bool supports_model(const corral_serving_runtime_t *r, const corral_isvc_component_t *p,
                           bool named)
{
    for (size_t i = 0; i < r->nformats; i++) {
        const corral_model_format_support_t *f = &r->formats[i];
        if (!named && !f->auto_select)
            continue;
        if (!f->name || !p->model_format || strcmp(f->name, p->model_format) != 0)
            continue;
        if (!p->model_format_version ||
            (f->version && strcmp(f->version, p->model_format_version) == 0))
            return true;
    }
    return false;
}

/* The priority of the model's format in r (its first entry of that name). */
static const corral_opt_i32_t *format_priority(const corral_serving_runtime_t *r, const char *name)
{
    for (size_t i = 0; i < r->nformats; i++) {
        if (r->formats[i].name && name && strcmp(r->formats[i].name, name) == 0)
            return &r->formats[i].priority;
    }
    return NULL;
}

typedef struct cand {
    const corral_obj_t *o;
    int proto;
    bool has_prio;
    int32_t prio;
} cand_t;

/* Protocol ascending, newest first, name: KServe's sortServingRuntimeList. */
static bool list_before(const cand_t *x, const cand_t *y)
{
    if (x->proto != y->proto)
        return x->proto < y->proto;
    if (x->o->meta.creation_us != y->o->meta.creation_us)
        return x->o->meta.creation_us > y->o->meta.creation_us;
    return strcmp(x->o->meta.name ? x->o->meta.name : "", y->o->meta.name ? y->o->meta.name : "") <
           0;
}

/* Priority set before unset, higher before lower: sortSupportedRuntimeByPriority. */
static bool prio_before(const cand_t *x, const cand_t *y)
{
    if (x->has_prio != y->has_prio)
        return x->has_prio;
    return x->has_prio && x->prio > y->prio;
}

/* The best candidate of one group (the first after both stable sorts). */
static const corral_obj_t *best_of(const cand_t *c, size_t n)
{
    const cand_t *best = NULL;
    for (size_t i = 0; i < n; i++) {
        if (!best || prio_before(&c[i], best) ||
            (!prio_before(best, &c[i]) && list_before(&c[i], best)))
            best = &c[i];
    }
    return best ? best->o : NULL;
}

static bool is_runtime(const corral_obj_t *o, bool cluster)
{
    return o && o->u.runtime &&
           o->info->kind ==
               (cluster ? CORRAL_KIND_CLUSTERSERVINGRUNTIME : CORRAL_KIND_SERVINGRUNTIME);
}

static const corral_obj_t *auto_select(corral_arena_t *a, const corral_obj_t *isvc,
                                       const corral_obj_t *const *rts, size_t n)
{
    const corral_isvc_component_t *p = &isvc->u.isvc->predictor;
    const char *proto = p->protocol_version ? p->protocol_version : "v1";
    bool multinode = corral_val_dig(isvc->raw, "spec.predictor.workerSpec") != NULL;
    cand_t *c = corral_arena_alloc(a, (n ? n : 1) * sizeof(*c));
    for (int cluster = 0; cluster < 2; cluster++) {
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
            const corral_obj_t *o = rts[i];
            if (!is_runtime(o, cluster))
                continue;
            if (!cluster && strcmp(o->meta.namespace, isvc->meta.namespace) != 0)
                continue;
            const corral_serving_runtime_t *r = o->u.runtime;
            bool workers = corral_val_dig(o->raw, "spec.workerSpec") != NULL;
            if (r->disabled || r->multi_model || workers != multinode ||
                !supports_model(r, p, false) || !protocol_supported(r, proto))
                continue;
            const corral_opt_i32_t *pr = format_priority(r, p->model_format);
            c[k++] = (cand_t){o, protocol_priority(r), pr && pr->set, pr && pr->set ? pr->v : 0};
        }
        const corral_obj_t *best = best_of(c, k);
        if (best)
            return best;
    }
    return NULL;
}

int corral_isvc_pick_runtime(const corral_obj_t *isvc, const corral_obj_t *const *runtimes,
                             size_t nruntimes, const corral_obj_t **out, char *err, size_t errlen)
{
    const corral_isvc_component_t *p = &isvc->u.isvc->predictor;
    *out = NULL;
    if (!p->has_model) {
        snprintf(err, errlen, "the predictor has no model: it runs its containers as written");
        return CORRAL_ENOENT;
    }
    if (!p->runtime) {
        corral_arena_t a;
        corral_arena_init(&a);
        *out = auto_select(&a, isvc, runtimes, nruntimes);
        corral_arena_fini(&a);
        if (!*out) {
            snprintf(err, errlen,
                     "no runtime found to support predictor with model type: {%s %s}: no "
                     "enabled ServingRuntime in namespace %s nor ClusterServingRuntime lists "
                     "this format with autoSelect: true and protocol %s",
                     p->model_format ? p->model_format : "",
                     p->model_format_version ? p->model_format_version : "<nil>",
                     isvc->meta.namespace, p->protocol_version ? p->protocol_version : "v1");
            return CORRAL_EINVAL;
        }
        return 0;
    }
    for (int cluster = 0; cluster < 2 && !*out; cluster++) {
        for (size_t i = 0; i < nruntimes && !*out; i++) {
            const corral_obj_t *o = runtimes[i];
            if (is_runtime(o, cluster) && o->meta.name && strcmp(o->meta.name, p->runtime) == 0 &&
                (cluster || strcmp(o->meta.namespace, isvc->meta.namespace) == 0))
                *out = o;
        }
    }
    const corral_serving_runtime_t *r = *out ? (*out)->u.runtime : NULL;
    if (!r) {
        snprintf(err, errlen, "No ServingRuntimes or ClusterServingRuntimes with the name: %s",
                 p->runtime);
        return CORRAL_ENOENT;
    }
    const char *why = r->disabled ? "is disabled"
                      : p->protocol_version && !protocol_supported(r, p->protocol_version)
                          ? "does not support specified protocol version"
                      : !supports_model(r, p, true) ? "does not support specified framework/version"
                                                    : NULL;
    if (!why)
        return 0;
    snprintf(err, errlen, "specified runtime %s %s", p->runtime, why);
    *out = NULL;
    return CORRAL_EINVAL;
}

/* --- placeholders ---------------------------------------------------------------------------- */

static const char *meta_map_get(const corral_val_t *map, const char *key)
{
    const char *v = corral_val_get_str(map, key);
    return v ? v : "<no value>"; /* Go's text/template for a missing map key */
}

/* The value of one template action (trimmed of spaces) on the service's
 * metadata, or NULL when Corral does not support it. */
static const char *action_value(const corral_obj_t *isvc, const char *act, size_t n, char *tmp,
                                size_t tmplen)
{
    const corral_val_t *meta = corral_val_get(isvc->raw, "metadata");
    snprintf(tmp, tmplen, "%.*s", (int)n, act);
    if (strcmp(tmp, ".Name") == 0)
        return isvc->meta.name ? isvc->meta.name : "";
    if (strcmp(tmp, ".Namespace") == 0)
        return isvc->meta.namespace ? isvc->meta.namespace : "";
    if (strcmp(tmp, ".GenerateName") == 0)
        return isvc->meta.generate_name ? isvc->meta.generate_name : "";
    if (strcmp(tmp, ".UID") == 0)
        return isvc->meta.uid ? isvc->meta.uid : "";
    static const char *const maps[] = {"Labels", "Annotations"};
    for (size_t i = 0; i < 2; i++) {
        char dot[32], idx[48];
        snprintf(dot, sizeof(dot), ".%s.", maps[i]);
        snprintf(idx, sizeof(idx), "index .%s \"", maps[i]);
        const corral_val_t *m = corral_val_get(meta, i ? "annotations" : "labels");
        if (strncmp(tmp, dot, strlen(dot)) == 0)
            return meta_map_get(m, tmp + strlen(dot));
        size_t len = strlen(tmp);
        if (strncmp(tmp, idx, strlen(idx)) == 0 && len > strlen(idx) && tmp[len - 1] == '"') {
            tmp[len - 1] = '\0';
            return meta_map_get(m, tmp + strlen(idx));
        }
    }
    return NULL;
}

/* s with its {{...}} actions replaced; NULL (and a message) on one Corral
 * cannot evaluate. */
static const char *subst(corral_arena_t *a, const corral_obj_t *isvc, const char *s, char *err,
                         size_t errlen)
{
    if (!strstr(s, "{{"))
        return s;
    corral_buf_t b;
    corral_buf_init(&b);
    const char *p = s, *open;
    while ((open = strstr(p, "{{")) != NULL) {
        corral_buf_append(&b, p, (size_t)(open - p));
        const char *close = strstr(open + 2, "}}");
        const char *act = open + 2;
        while (close && act < close && *act == ' ')
            act++;
        size_t n = close ? (size_t)(close - act) : 0;
        while (n && act[n - 1] == ' ')
            n--;
        char tmp[512];
        const char *v =
            close && n < sizeof(tmp) ? action_value(isvc, act, n, tmp, sizeof(tmp)) : NULL;
        if (!v) {
            snprintf(err, errlen,
                     "%.*s: Corral substitutes {{.Name}}, {{.Namespace}}, {{.Labels.KEY}}, "
                     "{{.Annotations.KEY}} and {{index .Labels \"KEY\"}}",
                     close ? (int)(close + 2 - open) : (int)strlen(open), open);
            corral_buf_fini(&b);
            return NULL;
        }
        corral_buf_puts(&b, v);
        p = close + 2;
    }
    corral_buf_puts(&b, p);
    const char *r = corral_arena_strdup(a, corral_buf_str(&b));
    corral_buf_fini(&b);
    return r;
}

static bool subst_tree(corral_arena_t *a, const corral_obj_t *isvc, corral_val_t *v, char *err,
                       size_t errlen)
{
    if (v->kind == CORRAL_VAL_STR) {
        const char *s = subst(a, isvc, v->s, err, errlen);
        if (!s)
            return false;
        if (s != v->s) {
            v->s = s;
            v->len = strlen(s);
        }
        return true;
    }
    for (size_t i = 0; i < v->n; i++) {
        corral_val_t *e = v->kind == CORRAL_VAL_SEQ   ? v->items[i]
                          : v->kind == CORRAL_VAL_MAP ? v->pairs[i].val
                                                      : NULL;
        if (e && !subst_tree(a, isvc, e, err, errlen))
            return false;
    }
    return true;
}

/* --- building the template ----------------------------------------------------------------------
 */

static const corral_val_t *named(const corral_val_t *list, const char *name)
{
    for (size_t i = 0; list && list->kind == CORRAL_VAL_SEQ && i < list->n; i++) {
        const char *n = corral_val_get_str(list->items[i], "name");
        if (n && strcmp(n, name) == 0)
            return list->items[i];
    }
    return NULL;
}

/* KServe's UpdateImageTag for runtimeVersion: replace or add the tag. */
static void set_image_tag(corral_arena_t *a, corral_val_t *c, const char *version)
{
    const char *image = corral_val_get_str(c, "image");
    if (!version || !image)
        return;
    const char *colon = strrchr(image, ':');
    bool tag = colon != NULL;
    for (const char *q = colon ? colon + 1 : ""; tag && *q; q++)
        tag = (*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9') ||
              *q == '_' || *q == '.' || *q == '-';
    size_t keep = tag ? (size_t)(colon - image) : strlen(image);
    char buf[1024];
    snprintf(buf, sizeof(buf), "%.*s:%s", (int)keep, image, version);
    corral_val_set(a, c, "image", corral_val_new_str(a, buf));
}

/* env name=value on every container, replacing one of that name. */
static void set_env_all(corral_arena_t *a, corral_val_t *containers, const char *name,
                        const char *value)
{
    for (size_t i = 0; i < containers->n; i++) {
        corral_val_t *c = containers->items[i];
        corral_val_t *env = corral_val_get(c, "env");
        if (!env || env->kind != CORRAL_VAL_SEQ) {
            env = corral_val_new(a, CORRAL_VAL_SEQ);
            corral_val_set(a, c, "env", env);
        }
        corral_val_t *e = (corral_val_t *)named(env, name);
        if (!e) {
            e = corral_val_new(a, CORRAL_VAL_MAP);
            corral_val_set(a, e, "name", corral_val_new_str(a, name));
            corral_val_push(a, env, e);
        }
        corral_val_del(e, "valueFrom");
        corral_val_set(a, e, "value", corral_val_new_str(a, value));
    }
}

static void union_into(corral_arena_t *a, corral_val_t *dst, const corral_val_t *src, bool filter)
{
    for (size_t i = 0; src && src->kind == CORRAL_VAL_MAP && i < src->n; i++) {
        const char *k = src->pairs[i].key->s;
        if (filter && in(disallowed_annotations, CORRAL_ARRAY_LEN(disallowed_annotations), k))
            continue;
        if (src->pairs[i].val->kind == CORRAL_VAL_STR)
            corral_val_set(a, dst, k, corral_val_copy(a, src->pairs[i].val));
    }
}

/* metadata {labels, annotations}: runtime < service < predictor < KServe's. */
static corral_val_t *template_meta(corral_arena_t *a, const corral_obj_t *isvc,
                                   const corral_obj_t *rt)
{
    const corral_val_t *pred = corral_val_dig(isvc->raw, "spec.predictor");
    const corral_val_t *meta = corral_val_get(isvc->raw, "metadata");
    corral_val_t *m = corral_val_new(a, CORRAL_VAL_MAP);
    corral_val_t *labels = corral_val_ensure_map(a, m, "labels");
    corral_val_t *ann = corral_val_ensure_map(a, m, "annotations");
    if (rt) {
        union_into(a, labels, corral_val_dig(rt->raw, "spec.labels"), false);
        union_into(a, ann, corral_val_dig(rt->raw, "spec.annotations"), true);
    }
    union_into(a, labels, corral_val_get(meta, "labels"), false);
    union_into(a, ann, corral_val_get(meta, "annotations"), true);
    union_into(a, labels, corral_val_get(pred, "labels"), false);
    union_into(a, ann, corral_val_get(pred, "annotations"), true);
    corral_val_set(a, labels, "serving.kserve.io/inferenceservice",
                   corral_val_new_str(a, isvc->meta.name ? isvc->meta.name : ""));
    corral_val_set(a, labels, "component", corral_val_new_str(a, "predictor"));
    return m;
}

/* The predictor container of a model: the runtime's merged with the model's
 * container fields, tag and placeholders applied. */
static corral_val_t *model_container(corral_arena_t *a, const corral_obj_t *isvc,
                                     const corral_obj_t *rt, char *err, size_t errlen)
{
    const corral_val_t *rcs = corral_val_dig(rt->raw, "spec.containers");
    const corral_val_t *base = named(rcs, PREDICTOR_CONTAINER);
    if (!base)
        base = rcs && rcs->kind == CORRAL_VAL_SEQ && rcs->n ? rcs->items[0] : NULL;
    if (!base) {
        snprintf(err, errlen, "failed to find %s in ServingRuntime containers",
                 PREDICTOR_CONTAINER);
        return NULL;
    }
    const corral_val_t *model = corral_val_dig(isvc->raw, "spec.predictor.model");
    merger_t m = {a, container_rules, CORRAL_ARRAY_LEN(container_rules)};
    corral_val_t *c = corral_val_copy(a, base);
    merge_map(&m, c, pick(a, model, container_keys, CORRAL_ARRAY_LEN(container_keys)), "");
    set_image_tag(a, c, corral_val_get_str(model, "runtimeVersion"));
    char why[384];
    if (!subst_tree(a, isvc, c, why, sizeof(why))) {
        snprintf(err, errlen,
                 "failed to replace placeholders in serving runtime %s Container %s: %s",
                 rt->meta.name, corral_val_get_str(c, "name"), why);
        return NULL;
    }
    return c;
}

/* The containers of a model's pod: predictor, transformer, the runtime's
 * others, the predictor's others. */
static corral_val_t *model_containers(corral_arena_t *a, const corral_obj_t *isvc,
                                      const corral_obj_t *rt, char *err, size_t errlen)
{
    corral_val_t *pc = model_container(a, isvc, rt, err, errlen);
    if (!pc)
        return NULL;
    const corral_val_t *rcs = corral_val_dig(rt->raw, "spec.containers");
    const corral_val_t *ics = corral_val_dig(isvc->raw, "spec.predictor.containers");
    corral_val_t *list = corral_val_new(a, CORRAL_VAL_SEQ);
    corral_val_push(a, list, pc);
    const corral_val_t *rt_tr = named(rcs, TRANSFORMER_CONTAINER);
    const corral_val_t *is_tr = named(ics, TRANSFORMER_CONTAINER);
    if (rt_tr || is_tr) {
        corral_val_t *t = corral_val_copy(a, rt_tr ? rt_tr : is_tr);
        if (rt_tr && is_tr) {
            merger_t m = {a, container_rules, CORRAL_ARRAY_LEN(container_rules)};
            merge_map(&m, t, is_tr, "");
        }
        char why[384];
        if (!subst_tree(a, isvc, t, why, sizeof(why))) {
            snprintf(err, errlen,
                     "failed to replace placeholders in serving runtime %s Container %s: %s",
                     rt->meta.name, TRANSFORMER_CONTAINER, why);
            return NULL;
        }
        corral_val_push(a, list, t);
    }
    const corral_val_t *used = named(rcs, PREDICTOR_CONTAINER);
    if (!used)
        used = rcs->items[0]; /* model_container found one */
    for (size_t i = 0; i < rcs->n; i++) {
        if (rcs->items[i] != used && rcs->items[i] != rt_tr)
            corral_val_push(a, list, corral_val_copy(a, rcs->items[i]));
    }
    for (size_t i = 0; ics && ics->kind == CORRAL_VAL_SEQ && i < ics->n; i++) {
        const char *n = corral_val_get_str(ics->items[i], "name");
        if (!n || strcmp(n, TRANSFORMER_CONTAINER) != 0)
            corral_val_push(a, list, corral_val_copy(a, ics->items[i]));
    }
    return list;
}

int corral_isvc_resolve(corral_arena_t *a, const corral_obj_t *isvc,
                        const corral_obj_t *const *runtimes, size_t nruntimes, corral_val_t **out,
                        char *err, size_t errlen)
{
    *out = NULL;
    if (!isvc || isvc->info->kind != CORRAL_KIND_ISVC || !isvc->u.isvc ||
        !isvc->u.isvc->predictor.present) {
        snprintf(err, errlen, "not an InferenceService with a predictor");
        return CORRAL_EINVAL;
    }
    const corral_val_t *pred = corral_val_dig(isvc->raw, "spec.predictor");
    const corral_obj_t *rt = NULL;
    corral_val_t *spec, *containers;
    if (isvc->u.isvc->predictor.has_model) {
        int rc = corral_isvc_pick_runtime(isvc, runtimes, nruntimes, &rt, err, errlen);
        if (rc != 0)
            return rc;
        const corral_val_t *rspec = corral_val_get(rt->raw, "spec");
        spec = pick(a, rspec, runtime_pod_keys, CORRAL_ARRAY_LEN(runtime_pod_keys));
        merger_t m = {a, pod_rules, CORRAL_ARRAY_LEN(pod_rules)};
        merge_map(&m, spec, pick(a, pred, pod_keys, CORRAL_ARRAY_LEN(pod_keys)), "");
        containers = model_containers(a, isvc, rt, err, errlen);
        if (!containers)
            return CORRAL_EINVAL;
    } else {
        spec = pick(a, pred, pod_keys, CORRAL_ARRAY_LEN(pod_keys));
        const corral_val_t *cs = corral_val_get(pred, "containers");
        containers = cs && cs->kind == CORRAL_VAL_SEQ ? corral_val_copy(a, cs)
                                                      : corral_val_new(a, CORRAL_VAL_SEQ);
        if (containers->n == 0) {
            snprintf(err, errlen, "the predictor has neither a model nor containers");
            return CORRAL_EINVAL;
        }
    }
    set_env_all(a, containers, "INFERENCE_SERVICE_NAME", isvc->meta.name ? isvc->meta.name : "");
    corral_val_set(a, spec, "containers", containers);
    corral_val_t *tmpl = corral_val_new(a, CORRAL_VAL_MAP);
    corral_val_set(a, tmpl, "metadata", template_meta(a, isvc, rt));
    corral_val_set(a, tmpl, "spec", spec);
    *out = tmpl;
    return 0;
}
