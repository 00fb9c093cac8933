/*
 * KServe InferenceService (serving.kserve.io/v1beta1): the predictor and the
 * transformer components with their autoscaling settings (minReplicas,
 * maxReplicas, scaleMetric/scaleTarget or Corral's scaleMetrics list, canary
 * traffic, concurrency, timeout), the predictor's `model` (modelFormat,
 * runtime, storageUri, protocolVersion plus the container fields KServe inlines
 * into it), custom containers and the PodSpec fields the scheduler reads. The
 * explainer, the framework shortcuts (sklearn, triton, ...) and other upstream
 * fields are kept as written. Validation follows KServe's webhook (replica
 * bounds, one implementation per predictor) and the shared GPU resource rules.
 */
#include <string.h>
#include <strings.h>

#include "model/model_int.h"

#define METRIC_GPU "gpu_utilization"

/* --- scaling ------------------------------------------------------------------ */

/* KServe's ScaleMetric values, plus Corral's GPU utilisation (percent busy). */
static const char *const scale_metrics[] = {"cpu", "memory", "concurrency", "rps", METRIC_GPU};

static void dec_scale_metric(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral__dec_enum(d, v, out, scale_metrics, CORRAL_ARRAY_LEN(scale_metrics));
}

/* A scale target: a positive integer. */
static void dec_scale_target(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_opt_i32_t *o = out;
    corral__dec_opt_i32(d, v, o);
    if (o->set && o->v <= 0) {
        corral__dec_err(d, v,
                        "must be a positive integer (the metric value each replica aims "
                        "for), got %d",
                        o->v);
        o->set = false;
    }
}

typedef struct scale_entry {
    const char *type;
    corral_opt_i32_t target;
} scale_entry_t;

static const corral__field_t scale_entry_fields[] = {
    CORRAL__F("type", dec_scale_metric, scale_entry_t, type),
    CORRAL__F("targetValue", dec_scale_target, scale_entry_t, target),
};

static void dec_scale_entry(corral__dec_t *d, const corral_val_t *v, void *out)
{
    scale_entry_t *e = out;
    if (!CORRAL__DEC_MAP(d, v, scale_entry_fields, e) || !v || v->kind != CORRAL_VAL_MAP)
        return;
    if (!corral_val_get(v, "type"))
        corral__dec_err_field(d, v, "type",
                              "required: the metric to scale on (cpu, memory, concurrency, rps "
                              "or " METRIC_GPU ")");
}

/* Corral's list form `scaleMetrics: [{type, targetValue}]`: the first entry
 * is the component's metric and target. */
static void dec_scale_metrics(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_isvc_component_t *c = out;
    scale_entry_t *e = NULL;
    size_t n = 0;
    corral__dec_seq(d, v, sizeof(scale_entry_t), dec_scale_entry, (void **)&e, &n);
    if (n == 0)
        return;
    c->scale_metric = e[0].type;
    c->scale_target = e[0].target;
    if (n > 1) {
        size_t m = corral__dec_enter_index(d, 1);
        corral__dec_warn(d, v->items[1],
                         "Corral scales on the first entry of scaleMetrics only; this one and "
                         "any after it are kept as written");
        corral__dec_leave(d, m);
    }
}

static void dec_min_replicas(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_opt_i32_t *o = out;
    corral__dec_opt_i32(d, v, o);
    if (o->set && o->v < 0) {
        corral__dec_err(d, v, "must be 0 or more (0 lets the service scale to zero), got %d", o->v);
        o->set = false;
    }
}

static void dec_max_replicas(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_opt_i32_t *o = out;
    corral__dec_opt_i32(d, v, o);
    if (o->set && o->v < 0) {
        corral__dec_err(d, v, "must be 0 or more (0 means no upper limit), got %d", o->v);
        o->set = false;
    }
}

static void dec_canary(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_opt_i32_t *o = out;
    corral__dec_opt_i32(d, v, o);
    if (o->set && (o->v < 0 || o->v > 100)) {
        corral__dec_err(d, v,
                        "must be a percentage from 0 to 100 (the share of traffic the newest "
                        "revision gets), got %d",
                        o->v);
        o->set = false;
    }
}

static void dec_concurrency(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_opt_i64_t *o = out;
    corral__dec_opt_i64(d, v, o);
    if (o->set && o->v < 0) {
        corral__dec_err(d, v, "must be 0 (no limit) or more requests per replica, got %lld",
                        (long long)o->v);
        o->set = false;
    }
}

static void dec_timeout(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_opt_i64_t *o = out;
    corral__dec_opt_i64(d, v, o);
    if (o->set && o->v < 0) {
        corral__dec_err(d, v, "must be 0 or more seconds, got %lld", (long long)o->v);
        o->set = false;
    }
}

/* --- model ------------------------------------------------------------------------ */

typedef struct model_format {
    const char *name;
    const char *version;
} model_format_t;

static const corral__field_t model_format_fields[] = {
    CORRAL__F("name", corral__dec_str, model_format_t, name),
    CORRAL__F("version", corral__dec_str, model_format_t, version),
};

static void dec_model_format(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_isvc_component_t *c = out;
    model_format_t mf = {NULL, NULL};
    if (!CORRAL__DEC_MAP(d, v, model_format_fields, &mf))
        return;
    c->model_format = mf.name;
    c->model_format_version = mf.version;
}

static const char *const uri_schemes[] = {"gs://",   "s3://",    "pvc://", "file://",
                                          "http://", "https://", "hf://",  "oci://"};
#define URI_SCHEMES "gs://, s3://, pvc://, file://, http://, https://, hf://, oci://"

void corral__dec_storage_uri(corral__dec_t *d, const corral_val_t *v, void *out)
{
    const char *s = NULL;
    corral__dec_str(d, v, &s);
    if (!s)
        return;
    *(const char **)out = s;
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(uri_schemes); i++) {
        size_t n = strlen(uri_schemes[i]);
        if (strncmp(s, uri_schemes[i], n) == 0) {
            if (s[n] == '\0')
                corral__dec_err(d, v, "\"%s\" names no bucket or path after the scheme", s);
            return;
        }
        if (strncasecmp(s, uri_schemes[i], n) == 0) {
            corral__dec_err(d, v, "\"%s\": write the scheme in lower case, `%s%s`", s,
                            uri_schemes[i], s + n);
            return;
        }
    }
    if (s[0] == '/')
        corral__dec_err(d, v,
                        "\"%s\" has no scheme; for a path on the node write `file://%s` "
                        "(supported: " URI_SCHEMES ")",
                        s, s);
    else if (strstr(s, "://"))
        corral__dec_err(d, v, "unsupported storage scheme in \"%s\"; use one of: " URI_SCHEMES, s);
    else
        corral__dec_err(d, v,
                        "\"%s\" is not a storage URI; it must start with one of: " URI_SCHEMES, s);
}

static void dec_protocol(corral__dec_t *d, const corral_val_t *v, void *out)
{
    static const char *const p[] = {"v1", "v2", "grpc-v1", "grpc-v2"};
    corral__dec_enum(d, v, out, p, CORRAL_ARRAY_LEN(p));
}

/* Marks a container field inlined into `model`: decoded afterwards, in one
 * pass, by the shared container decoder (see dec_model). */
static void dec_container_part(corral__dec_t *d, const corral_val_t *v, void *out)
{
    (void)d;
    (void)v;
    (void)out;
}

#define CONTAINER_PART(name) CORRAL__WHOLE(name, dec_container_part)

/* One table for everything `model` may hold: KServe's ModelSpec fields and the
 * corev1.Container fields it inlines, so a typo of either gets a hint. */
static const corral__field_t model_fields[] = {
    CORRAL__WHOLE("modelFormat", dec_model_format),
    CORRAL__F("runtime", corral__dec_str, corral_isvc_component_t, runtime),
    CORRAL__F("storageUri", corral__dec_storage_uri, corral_isvc_component_t, storage_uri),
    CORRAL__F("protocolVersion", dec_protocol, corral_isvc_component_t, protocol_version),
    CORRAL__KEEP("runtimeVersion"),
    CORRAL__KEEP("storage"),
    CONTAINER_PART("name"),
    CONTAINER_PART("image"),
    CONTAINER_PART("imagePullPolicy"),
    CONTAINER_PART("workingDir"),
    CONTAINER_PART("command"),
    CONTAINER_PART("args"),
    CONTAINER_PART("env"),
    CONTAINER_PART("resources"),
    CONTAINER_PART("envFrom"),
    CONTAINER_PART("ports"),
    CONTAINER_PART("volumeMounts"),
    CONTAINER_PART("volumeDevices"),
    CONTAINER_PART("livenessProbe"),
    CONTAINER_PART("readinessProbe"),
    CONTAINER_PART("startupProbe"),
    CONTAINER_PART("lifecycle"),
    CONTAINER_PART("securityContext"),
    CONTAINER_PART("terminationMessagePath"),
    CONTAINER_PART("terminationMessagePolicy"),
    CONTAINER_PART("stdin"),
    CONTAINER_PART("stdinOnce"),
    CONTAINER_PART("tty"),
    CONTAINER_PART("resizePolicy"),
    CONTAINER_PART("restartPolicy"),
};

static bool is_container_part(const char *key)
{
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(model_fields); i++) {
        if (model_fields[i].fn == dec_container_part && strcmp(model_fields[i].name, key) == 0)
            return true;
    }
    return false;
}

static void dec_model(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_isvc_component_t *c = out;
    if (!v || v->kind == CORRAL_VAL_NULL)
        return;
    if (!CORRAL__DEC_MAP(d, v, model_fields, c))
        return;
    c->has_model = true;
    /* The container fields, as a mapping of their own, for the container
     * decoder (which also applies the GPU resource rules). */
    corral_val_t *part = corral_arena_alloc(d->a, sizeof(*part));
    part->kind = CORRAL_VAL_MAP;
    part->line = v->line;
    part->col = v->col;
    part->pairs = corral_arena_alloc(d->a, (v->n ? v->n : 1) * sizeof(*part->pairs));
    for (size_t i = 0; i < v->n; i++) {
        if (is_container_part(v->pairs[i].key->s))
            part->pairs[part->n++] = v->pairs[i];
    }
    part->cap = part->n;
    corral__dec_container(d, part, &c->model);
    const corral_val_t *mf = corral_val_get(v, "modelFormat");
    bool mf_usable = !mf || mf->kind == CORRAL_VAL_MAP || mf->kind == CORRAL_VAL_NULL;
    if (mf_usable && (!c->model_format || !*c->model_format)) {
        corral__dec_err_field(d, mf ? mf : v, mf ? "modelFormat.name" : "modelFormat",
                              "required: the model's format, e.g. `modelFormat: {name: "
                              "huggingface}` (KServe picks the serving runtime from it)");
    }
}

/* --- components ------------------------------------------------------------------- */

/* A custom container: the shared container fields; an image is required. */
static void dec_custom_container(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_container_t *c = out;
    corral__dec_container(d, v, c);
    if (v && v->kind == CORRAL_VAL_MAP && (!c->image || !*c->image))
        corral__dec_err_field(d, v, "image", "required: a container needs an image to run");
}

static void dec_containers(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_isvc_component_t *c = out;
    corral__dec_seq(d, v, sizeof(corral_container_t), dec_custom_container, (void **)&c->containers,
                    &c->ncontainers);
}

/* KServe's ComponentExtensionSpec and the PodSpec fields every component
 * inlines. */
#define COMPONENT_FIELDS                                                                           \
    CORRAL__F("minReplicas", dec_min_replicas, corral_isvc_component_t, min_replicas),             \
        CORRAL__F("maxReplicas", dec_max_replicas, corral_isvc_component_t, max_replicas),         \
        CORRAL__F("scaleMetric", dec_scale_metric, corral_isvc_component_t, scale_metric),         \
        CORRAL__F("scaleTarget", dec_scale_target, corral_isvc_component_t, scale_target),         \
        CORRAL__WHOLE("scaleMetrics", dec_scale_metrics),                                          \
        CORRAL__F("canaryTrafficPercent", dec_canary, corral_isvc_component_t,                     \
                  canary_traffic_percent),                                                         \
        CORRAL__F("containerConcurrency", dec_concurrency, corral_isvc_component_t,                \
                  container_concurrency),                                                          \
        CORRAL__F("timeout", dec_timeout, corral_isvc_component_t, timeout_seconds),               \
        CORRAL__WHOLE("containers", dec_containers),                                               \
        CORRAL__F("tolerations", corral__dec_tolerations, corral_isvc_component_t, tolerations),   \
        CORRAL__F("nodeSelector", corral__dec_strmap, corral_isvc_component_t, node_selector),     \
        CORRAL__F("affinity", corral__dec_affinity, corral_isvc_component_t, node_affinity),       \
        CORRAL__F("serviceAccountName", corral__dec_str, corral_isvc_component_t,                  \
                  service_account_name),                                                           \
        CORRAL__F("priorityClassName", corral__dec_str, corral_isvc_component_t,                   \
                  priority_class_name),                                                            \
        CORRAL__F("schedulerName", corral__dec_str, corral_isvc_component_t, scheduler_name),      \
        CORRAL__KEEP("scaleMetricType"), CORRAL__KEEP("autoScaling"), CORRAL__KEEP("logger"),      \
        CORRAL__KEEP("batcher"), CORRAL__KEEP("labels"), CORRAL__KEEP("annotations"),              \
        CORRAL__KEEP("deploymentStrategy"), CORRAL__KEEP("volumes"),                               \
        CORRAL__KEEP("initContainers"), CORRAL__KEEP("ephemeralContainers"),                       \
        CORRAL__KEEP("restartPolicy"), CORRAL__KEEP("terminationGracePeriodSeconds"),              \
        CORRAL__KEEP("activeDeadlineSeconds"), CORRAL__KEEP("dnsPolicy"),                          \
        CORRAL__KEEP("dnsConfig"), CORRAL__KEEP("serviceAccount"),                                 \
        CORRAL__KEEP("automountServiceAccountToken"), CORRAL__KEEP("nodeName"),                    \
        CORRAL__KEEP("hostNetwork"), CORRAL__KEEP("hostPID"), CORRAL__KEEP("hostIPC"),             \
        CORRAL__KEEP("shareProcessNamespace"), CORRAL__KEEP("securityContext"),                    \
        CORRAL__KEEP("imagePullSecrets"), CORRAL__KEEP("hostname"), CORRAL__KEEP("subdomain"),     \
        CORRAL__KEEP("hostAliases"), CORRAL__KEEP("priority"), CORRAL__KEEP("preemptionPolicy"),   \
        CORRAL__KEEP("runtimeClassName"), CORRAL__KEEP("enableServiceLinks"),                      \
        CORRAL__KEEP("topologySpreadConstraints"), CORRAL__KEEP("readinessGates"),                 \
        CORRAL__KEEP("overhead"), CORRAL__KEEP("setHostnameAsFQDN"), CORRAL__KEEP("os"),           \
        CORRAL__KEEP("hostUsers"), CORRAL__KEEP("schedulingGates"),                                \
        CORRAL__KEEP("resourceClaims"), CORRAL__KEEP("resources")

/* KServe's framework shortcuts: predictor implementations kept as written. */
static const char *const frameworks[] = {"sklearn",  "xgboost", "tensorflow",  "pytorch",
                                         "triton",   "onnx",    "huggingface", "pmml",
                                         "lightgbm", "paddle"};

static const corral__field_t predictor_fields[] = {
    COMPONENT_FIELDS,
    CORRAL__WHOLE("model", dec_model),
    CORRAL__KEEP("storageUris"),
    CORRAL__KEEP("workerSpec"),
    CORRAL__KEEP("sklearn"),
    CORRAL__KEEP("xgboost"),
    CORRAL__KEEP("tensorflow"),
    CORRAL__KEEP("pytorch"),
    CORRAL__KEEP("triton"),
    CORRAL__KEEP("onnx"),
    CORRAL__KEEP("huggingface"),
    CORRAL__KEEP("pmml"),
    CORRAL__KEEP("lightgbm"),
    CORRAL__KEEP("paddle"),
};

static const corral__field_t transformer_fields[] = {
    COMPONENT_FIELDS,
};

/* minReplicas <= maxReplicas (when the maximum is set), then the default. */
static void check_replicas(corral__dec_t *d, const corral_val_t *v, corral_isvc_component_t *c)
{
    int32_t min = c->min_replicas.set ? c->min_replicas.v : 1;
    if (c->max_replicas.set && c->max_replicas.v > 0 && min > c->max_replicas.v) {
        const corral_val_t *at = corral_val_get(v, "minReplicas");
        corral__dec_err_field(d, at ? at : corral_val_get(v, "maxReplicas"),
                              at ? "minReplicas" : "maxReplicas",
                              "minReplicas (%d%s) is more than maxReplicas (%d); raise "
                              "maxReplicas or lower minReplicas",
                              min, at ? "" : ", the default", c->max_replicas.v);
    }
    if (!c->min_replicas.set) {
        c->min_replicas.set = true;
        c->min_replicas.v = 1; /* KServe's default */
    }
}

static void check_scaling(corral__dec_t *d, const corral_val_t *v, const corral_isvc_component_t *c)
{
    const corral_val_t *list = corral_val_get(v, "scaleMetrics");
    if (list && list->kind != CORRAL_VAL_NULL &&
        (corral_val_get(v, "scaleMetric") || corral_val_get(v, "scaleTarget"))) {
        corral__dec_err_field(d, list, "scaleMetrics",
                              "give either scaleMetric/scaleTarget or scaleMetrics, not both");
        return;
    }
    if (c->scale_metric && strcmp(c->scale_metric, METRIC_GPU) == 0 && c->scale_target.set &&
        c->scale_target.v > 100) {
        const corral_val_t *at = corral_val_get(v, "scaleTarget");
        const char *field = "scaleTarget";
        if (!at) {
            at = corral_val_get(list && list->kind == CORRAL_VAL_SEQ && list->n ? list->items[0]
                                                                                : NULL,
                                "targetValue");
            field = "scaleMetrics[0].targetValue";
        }
        corral__dec_err_field(d, at, field,
                              METRIC_GPU " is a percentage of GPU busy time: the target must be "
                                         "from 1 to 100, got %d",
                              c->scale_target.v);
    }
}

static void check_node_selector(corral__dec_t *d, const corral_val_t *v,
                                const corral_isvc_component_t *c)
{
    const corral_val_t *ns = corral_val_get(v, "nodeSelector");
    for (size_t i = 0; i < c->node_selector.n; i++) {
        const char *err = corral_label_key_error(c->node_selector.items[i].key);
        if (!err)
            continue;
        size_t m = corral__dec_enter(d, "nodeSelector");
        corral__dec_err_field(d, ns->pairs[i].key, c->node_selector.items[i].key,
                              "invalid label key: %s", err);
        corral__dec_leave(d, m);
    }
}

/* A predictor serves exactly one model: `model`, one framework shortcut, or
 * custom containers. */
static void check_predictor(corral__dec_t *d, const corral_val_t *v,
                            const corral_isvc_component_t *c)
{
    const char *impls[CORRAL_ARRAY_LEN(frameworks) + 1];
    size_t n = 0;
    if (c->has_model)
        impls[n++] = "model";
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(frameworks); i++) {
        const corral_val_t *f = corral_val_get(v, frameworks[i]);
        if (!f || f->kind == CORRAL_VAL_NULL)
            continue;
        impls[n++] = frameworks[i];
        size_t m = corral__dec_enter(d, frameworks[i]);
        corral__dec_warn(d, f,
                         "kept as written, but Corral does not read its resources; write "
                         "`model: {modelFormat: {name: %s}, ...}` to have them scheduled",
                         frameworks[i]);
        corral__dec_leave(d, m);
    }
    if (n == 0 && c->ncontainers == 0)
        corral__dec_err(d, v,
                        "a predictor needs something to serve: `model` (modelFormat, "
                        "storageUri, resources) or `containers` (a custom predictor)");
    else if (n > 1)
        corral__dec_err_field(d, corral_val_get(v, impls[1]), impls[1],
                              "a predictor serves one model: found both `%s` and `%s`; keep one",
                              impls[0], impls[1]);
}

static void dec_component(corral__dec_t *d, const corral_val_t *v, corral_isvc_component_t *c,
                          const corral__field_t *fields, size_t nfields)
{
    if (!v || v->kind == CORRAL_VAL_NULL)
        return;
    if (!corral__dec_map(d, v, fields, nfields, c))
        return;
    c->present = true;
    check_replicas(d, v, c);
    check_scaling(d, v, c);
    check_node_selector(d, v, c);
}

static void dec_predictor(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_isvc_component_t *c = out;
    dec_component(d, v, c, predictor_fields, CORRAL_ARRAY_LEN(predictor_fields));
    if (c->present)
        check_predictor(d, v, c);
}

static void dec_transformer(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_isvc_component_t *c = out;
    dec_component(d, v, c, transformer_fields, CORRAL_ARRAY_LEN(transformer_fields));
    if (c->present && c->ncontainers == 0)
        corral__dec_err_field(d, v, "containers",
                              "required: a transformer runs custom containers (each with an "
                              "image)");
}

/* --- the kind --------------------------------------------------------------------- */

static const corral__field_t isvc_spec_fields[] = {
    CORRAL__F("predictor", dec_predictor, corral_isvc_t, predictor),
    CORRAL__F("transformer", dec_transformer, corral_isvc_t, transformer),
    CORRAL__KEEP("explainer"),
};

static void dec_isvc_spec(corral__dec_t *d, const corral_val_t *v, void *out)
{
    CORRAL__DEC_MAP(d, v, isvc_spec_fields, out);
}

static const corral__field_t isvc_status_fields[] = {
    CORRAL__F("url", corral__dec_str, corral_isvc_t, url),
    CORRAL__KEEP("address"),
    CORRAL__KEEP("conditions"),
    CORRAL__KEEP("components"),
    CORRAL__KEEP("modelStatus"),
    CORRAL__KEEP("observedGeneration"),
    CORRAL__KEEP("annotations"),
    CORRAL__KEEP("deploymentMode"),
    CORRAL__KEEP("servingRuntimeName"),
    CORRAL__KEEP("clusterServingRuntimeName"),
};

static void dec_isvc_status(corral__dec_t *d, const corral_val_t *v, void *out)
{
    CORRAL__DEC_MAP(d, v, isvc_status_fields, out);
}

static const corral__field_t isvc_fields[] = {
    CORRAL__TOP_FIELDS,
    CORRAL__WHOLE("spec", dec_isvc_spec),
    CORRAL__WHOLE("status", dec_isvc_status),
};

void corral__kind_isvc(corral__dec_t *d, const corral_val_t *root, corral_obj_t *o)
{
    corral_isvc_t *s = corral_arena_alloc(d->a, sizeof(*s));
    o->u.isvc = s;
    CORRAL__DEC_MAP(d, root, isvc_fields, s);
    const corral_val_t *spec = corral_val_get(root, "spec");
    const corral_val_t *pred = corral_val_get(spec, "predictor");
    if (!spec || spec->kind == CORRAL_VAL_NULL)
        corral__dec_err_field(d, spec ? spec : root, "spec",
                              "required: an InferenceService needs spec.predictor");
    else if (spec->kind == CORRAL_VAL_MAP && (!pred || pred->kind == CORRAL_VAL_NULL))
        corral__dec_err_field(d, pred ? pred : spec, "spec.predictor",
                              "required: an InferenceService needs a predictor with a `model` or "
                              "`containers`");
}
