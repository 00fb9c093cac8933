/*
 * KServe's serving.kserve.io/v1alpha1 kinds beside the InferenceService:
 * ServingRuntime (namespaced) and ClusterServingRuntime (cluster-scoped),
 * the runtimes a predictor's `model` resolves to (src/model/isvc_resolve.c);
 * LocalModelCache, LocalModelNodeGroup and LocalModelNode (all
 * cluster-scoped, as upstream), the model cache the agents fill and the
 * controller reports on; and apps/v1 ControllerRevision, where the
 * InferenceService controller keeps each revision's pod template.
 *
 * Fields, scopes and required fields follow the upstream CRDs
 * (config/crd/full) and types (pkg/apis/serving/v1alpha1); the per-object
 * rules of KServe's ServingRuntime webhook (one priority per model format)
 * are checked here, the rules across runtimes (two auto-selected runtimes of
 * one format with the same priority) are not: resolution breaks such a tie
 * by kind and name (docs/inference.md).
 */
#include <string.h>

#include "model/model_int.h"

/* --- shared ----------------------------------------------------------------------------------- */

/* A required resource.Quantity, non-negative. */
static void dec_qty(corral__dec_t *d, const corral_val_t *v, void *out)
{
    char why[256];
    if (!v || v->kind == CORRAL_VAL_NULL)
        return;
    if (v->kind != CORRAL_VAL_STR && v->kind != CORRAL_VAL_INT && v->kind != CORRAL_VAL_FLOAT) {
        corral__dec_err(d, v, "expected a quantity such as 10Gi or 500M, got %s",
                        corral_val_kind_name(v->kind));
        return;
    }
    if (corral_qty_parse(v->s, v->len, out, why, sizeof(why)) != 0)
        corral__dec_err(d, v, "%s", why);
    else if (corral_qty_sign(out) < 0)
        corral__dec_err(d, v, "must be greater than or equal to 0, got %s", v->s);
}

static void require(corral__dec_t *d, const corral_val_t *map, const char *field, const char *why)
{
    const corral_val_t *f = corral_val_get(map, field);
    if (!f || f->kind == CORRAL_VAL_NULL)
        corral__dec_err_field(d, f ? f : map, field, "Required value: %s", why);
}

/* The spec mapping: required, must be a mapping. NULL when absent. */
static const corral_val_t *spec_of(corral__dec_t *d, const corral_val_t *root, const char *what)
{
    const corral_val_t *spec = corral_val_get(root, "spec");
    if (!spec || spec->kind == CORRAL_VAL_NULL) {
        corral__dec_err_field(d, spec ? spec : root, "spec", "Required value: %s", what);
        return NULL;
    }
    return spec->kind == CORRAL_VAL_MAP ? spec : NULL;
}

/* A status map whose values must be one of allowed. */
static void dec_status_map(corral__dec_t *d, const corral_val_t *v, corral_strmap_t *m,
                           const char *const *allowed, size_t n)
{
    corral__dec_strmap(d, v, m);
    for (size_t i = 0; i < m->n; i++) {
        const char *s = NULL;
        if (!*m->items[i].value)
            continue; /* "" is in upstream's enum */
        size_t mk = corral__dec_enter(d, m->items[i].key);
        corral__dec_enum(d, v->pairs[i].val, &s, allowed, n);
        corral__dec_leave(d, mk);
    }
}

/* --- ServingRuntime, ClusterServingRuntime ---------------------------------------------------- */

static void dec_auto_select(corral__dec_t *d, const corral_val_t *v, void *out)
{
    if (v && v->kind != CORRAL_VAL_NULL)
        corral__dec_bool(d, v, out);
}

static void dec_priority(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_opt_i32_t *o = out;
    corral__dec_opt_i32(d, v, o);
    if (o->set && o->v < 1) {
        corral__dec_err(d, v,
                        "Invalid value: %d: must be 1 or more (the highest priority wins "
                        "auto-selection)",
                        o->v);
        o->set = false;
    }
}

static const corral__field_t format_fields[] = {
    CORRAL__F("name", corral__dec_str, corral_model_format_support_t, name),
    CORRAL__F("version", corral__dec_str, corral_model_format_support_t, version),
    CORRAL__F("autoSelect", dec_auto_select, corral_model_format_support_t, auto_select),
    CORRAL__F("priority", dec_priority, corral_model_format_support_t, priority),
};

static void dec_format(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_model_format_support_t *f = out;
    if (!CORRAL__DEC_MAP(d, v, format_fields, f))
        return;
    if (!f->name || !*f->name)
        corral__dec_err_field(d, v, "name",
                              "Required value: the model format this runtime serves (e.g. "
                              "huggingface)");
}

static void dec_formats(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_serving_runtime_t *r = out;
    corral__dec_seq(d, v, sizeof(corral_model_format_support_t), dec_format, (void **)&r->formats,
                    &r->nformats);
}

static void dec_protocol_item(corral__dec_t *d, const corral_val_t *v, void *out)
{
    static const char *const p[] = {"v1", "v2", "grpc-v1", "grpc-v2"};
    corral__dec_enum(d, v, out, p, CORRAL_ARRAY_LEN(p));
}

static void dec_protocols(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_strlist_t *l = out;
    corral__dec_seq(d, v, sizeof(const char *), dec_protocol_item, (void **)&l->items, &l->n);
}

static void dec_runtime_container(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_container_t *c = out;
    corral__dec_container(d, v, c);
    if (!v || v->kind != CORRAL_VAL_MAP)
        return;
    if (!c->name || !*c->name) {
        corral__dec_err_field(d, v, "name",
                              "Required value: every container needs a name (KServe's serving "
                              "container is `kserve-container`)");
    } else {
        const char *err = corral__dns1123_label_error(c->name);
        if (err)
            corral__dec_err_field(d, corral_val_get(v, "name"), "name", "Invalid value: \"%s\": %s",
                                  c->name, err);
    }
}

static void dec_runtime_containers(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_serving_runtime_t *r = out;
    corral__dec_seq(d, v, sizeof(corral_container_t), dec_runtime_container,
                    (void **)&r->containers, &r->ncontainers);
}

static const corral__field_t runtime_spec_fields[] = {
    CORRAL__WHOLE("supportedModelFormats", dec_formats),
    CORRAL__F("multiModel", dec_auto_select, corral_serving_runtime_t, multi_model),
    CORRAL__F("disabled", dec_auto_select, corral_serving_runtime_t, disabled),
    CORRAL__F("protocolVersions", dec_protocols, corral_serving_runtime_t, protocol_versions),
    CORRAL__KEEP("workerSpec"),
    /* ServingRuntimePodSpec, inlined */
    CORRAL__WHOLE("containers", dec_runtime_containers),
    CORRAL__KEEP("volumes"),
    CORRAL__F("nodeSelector", corral__dec_strmap, corral_serving_runtime_t, node_selector),
    CORRAL__F("affinity", corral__dec_affinity, corral_serving_runtime_t, node_affinity),
    CORRAL__F("tolerations", corral__dec_tolerations, corral_serving_runtime_t, tolerations),
    CORRAL__F("labels", corral__dec_strmap, corral_serving_runtime_t, labels),
    CORRAL__F("annotations", corral__dec_strmap, corral_serving_runtime_t, annotations),
    CORRAL__KEEP("imagePullSecrets"),
    CORRAL__KEEP("hostIPC"),
    CORRAL__F("schedulerName", corral__dec_str, corral_serving_runtime_t, scheduler_name),
    CORRAL__KEEP("resourceClaims"),
    /* ModelMesh */
    CORRAL__KEEP("grpcEndpoint"),
    CORRAL__KEEP("grpcDataEndpoint"),
    CORRAL__KEEP("httpDataEndpoint"),
    CORRAL__KEEP("replicas"),
    CORRAL__KEEP("storageHelper"),
    CORRAL__KEEP("builtInAdapter"),
};

/* KServe's webhook: one priority per auto-selected model format within a
 * runtime; container names unique. */
static void check_runtime(corral__dec_t *d, const corral_val_t *spec,
                          const corral_serving_runtime_t *r, const char *name)
{
    const corral_val_t *fl = corral_val_get(spec, "supportedModelFormats");
    for (size_t i = 0; i < r->nformats; i++) {
        const corral_model_format_support_t *f = &r->formats[i];
        if (!f->auto_select || !f->priority.set || !f->name)
            continue;
        for (size_t j = 0; j < i; j++) {
            const corral_model_format_support_t *g = &r->formats[j];
            if (g->auto_select && g->priority.set && g->name && strcmp(g->name, f->name) == 0 &&
                g->priority.v != f->priority.v) {
                corral__dec_err_field(
                    d, fl && fl->kind == CORRAL_VAL_SEQ && i < fl->n ? fl->items[i] : spec,
                    "spec.supportedModelFormats",
                    "different priorities assigned for the model format %s under the "
                    "servingruntime %s (%d and %d); give each auto-selected entry of one "
                    "format the same priority",
                    f->name, name ? name : "", g->priority.v, f->priority.v);
                break;
            }
        }
    }
    const corral_val_t *cl = corral_val_get(spec, "containers");
    for (size_t i = 0; i < r->ncontainers; i++) {
        for (size_t j = 0; r->containers[i].name && j < i; j++) {
            if (r->containers[j].name && strcmp(r->containers[j].name, r->containers[i].name) == 0)
                corral__dec_err_field(d, cl && i < cl->n ? cl->items[i] : spec, "spec.containers",
                                      "Duplicate value: container name \"%s\"",
                                      r->containers[i].name);
        }
    }
}

static void dec_runtime_spec(corral__dec_t *d, const corral_val_t *v, void *out)
{
    CORRAL__DEC_MAP(d, v, runtime_spec_fields, out);
}

static const corral__field_t runtime_fields[] = {
    CORRAL__TOP_FIELDS,
    CORRAL__WHOLE("spec", dec_runtime_spec),
    CORRAL__KEEP("status"),
};

void corral__kind_serving_runtime(corral__dec_t *d, const corral_val_t *root, corral_obj_t *o)
{
    corral_serving_runtime_t *r = corral_arena_alloc(d->a, sizeof(*r));
    memset(r, 0, sizeof(*r));
    o->u.runtime = r;
    CORRAL__DEC_MAP(d, root, runtime_fields, r);
    const corral_val_t *spec =
        spec_of(d, root, "a serving runtime needs spec.containers and spec.supportedModelFormats");
    if (!spec)
        return;
    if (r->ncontainers == 0) {
        const corral_val_t *c = corral_val_get(spec, "containers");
        corral__dec_err_field(d, c ? c : spec, "spec.containers",
                              "Required value: the runtime's model server container (its first "
                              "container serves the model)");
    }
    check_runtime(d, spec, r, o->meta.name);
}

/* --- LocalModelCache -------------------------------------------------------------------------- */

static void dec_node_groups(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_strlist_t *l = out;
    corral__dec_strlist(d, v, l);
    if (v && v->kind == CORRAL_VAL_SEQ && l->n == 0)
        corral__dec_err(d, v,
                        "should have at least 1 items: the LocalModelNodeGroups to cache the "
                        "model on");
}

static const corral__field_t lmc_spec_fields[] = {
    CORRAL__F("sourceModelUri", corral__dec_storage_uri, corral_local_model_cache_t,
              source_model_uri),
    CORRAL__F("modelSize", dec_qty, corral_local_model_cache_t, model_size),
    CORRAL__F("nodeGroups", dec_node_groups, corral_local_model_cache_t, node_groups),
    CORRAL__F("serviceAccountName", corral__dec_str, corral_local_model_cache_t,
              service_account_name),
    CORRAL__KEEP("storage"),
};

static void dec_lmc_spec(corral__dec_t *d, const corral_val_t *v, void *out)
{
    CORRAL__DEC_MAP(d, v, lmc_spec_fields, out);
}

static void dec_copy_count(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral__dec_int32(d, v, out);
    if (*(int32_t *)out < 0)
        corral__dec_err(d, v, "must be 0 or more, got %d", *(int32_t *)out);
}

static const corral__field_t copies_fields[] = {
    CORRAL__F("available", dec_copy_count, corral_local_model_cache_t, copies_available),
    CORRAL__F("total", dec_copy_count, corral_local_model_cache_t, copies_total),
    CORRAL__F("failed", dec_copy_count, corral_local_model_cache_t, copies_failed),
};

static void dec_copies(corral__dec_t *d, const corral_val_t *v, void *out)
{
    if (v && v->kind != CORRAL_VAL_NULL)
        CORRAL__DEC_MAP(d, v, copies_fields, out);
}

static void dec_node_status(corral__dec_t *d, const corral_val_t *v, void *out)
{
    static const char *const s[] = {CORRAL_NODE_NOT_READY, CORRAL_NODE_DOWNLOAD_PENDING,
                                    CORRAL_NODE_DOWNLOADING, CORRAL_NODE_DOWNLOADED,
                                    CORRAL_NODE_DOWNLOAD_ERROR};
    corral_local_model_cache_t *c = out;
    dec_status_map(d, v, &c->node_status, s, CORRAL_ARRAY_LEN(s));
}

static const corral__field_t lmc_status_fields[] = {
    CORRAL__WHOLE("nodeStatus", dec_node_status),
    CORRAL__WHOLE("copies", dec_copies),
    CORRAL__KEEP("inferenceServices"),
    CORRAL__KEEP("llmInferenceServices"),
};

static void dec_lmc_status(corral__dec_t *d, const corral_val_t *v, void *out)
{
    if (v && v->kind != CORRAL_VAL_NULL)
        CORRAL__DEC_MAP(d, v, lmc_status_fields, out);
}

static const corral__field_t lmc_fields[] = {
    CORRAL__TOP_FIELDS,
    CORRAL__WHOLE("spec", dec_lmc_spec),
    CORRAL__WHOLE("status", dec_lmc_status),
};

void corral__kind_local_model_cache(corral__dec_t *d, const corral_val_t *root, corral_obj_t *o)
{
    corral_local_model_cache_t *c = corral_arena_alloc(d->a, sizeof(*c));
    memset(c, 0, sizeof(*c));
    o->u.lmc = c;
    CORRAL__DEC_MAP(d, root, lmc_fields, c);
    const corral_val_t *spec =
        spec_of(d, root, "a LocalModelCache needs spec.sourceModelUri, modelSize and nodeGroups");
    if (!spec)
        return;
    size_t m = corral__dec_enter(d, "spec");
    require(d, spec, "sourceModelUri", "where the model is (file://, http(s)://, pvc://, ...)");
    require(d, spec, "modelSize", "the model's size (e.g. 16Gi), checked against storageLimit");
    require(d, spec, "nodeGroups", "the LocalModelNodeGroups to cache the model on");
    corral__dec_leave(d, m);
}

/* --- LocalModelNodeGroup ---------------------------------------------------------------------- */

typedef struct pv_path {
    const char *path;
} pv_path_t;

static const corral__field_t pv_path_fields[] = {
    CORRAL__F("path", corral__dec_str, pv_path_t, path),
    CORRAL__KEEP("type"),
    CORRAL__KEEP("fsType"),
};

static void dec_pv_path(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_local_model_node_group_t *g = out;
    pv_path_t p = {NULL};
    if (!v || v->kind == CORRAL_VAL_NULL)
        return;
    CORRAL__DEC_MAP(d, v, pv_path_fields, &p);
    if (p.path && !g->local_path)
        g->local_path = p.path;
}

static const corral__field_t vol_node_affinity_fields[] = {
    CORRAL__WHOLE("required", corral__dec_node_selector),
};

static void dec_vol_node_affinity(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_local_model_node_group_t *g = out;
    corral_node_affinity_t na;
    memset(&na, 0, sizeof(na));
    if (!v || v->kind == CORRAL_VAL_NULL)
        return;
    CORRAL__DEC_MAP(d, v, vol_node_affinity_fields, &na);
    g->node_terms = na.required;
    g->nnode_terms = na.nrequired;
}

/* core v1 PersistentVolumeSpec: the node affinity and a local or hostPath
 * path are read; the rest is kept as written. */
static const corral__field_t pv_spec_fields[] = {
    CORRAL__WHOLE("nodeAffinity", dec_vol_node_affinity),
    CORRAL__WHOLE("local", dec_pv_path),
    CORRAL__WHOLE("hostPath", dec_pv_path),
    CORRAL__KEEP("accessModes"),
    CORRAL__KEEP("capacity"),
    CORRAL__KEEP("claimRef"),
    CORRAL__KEEP("mountOptions"),
    CORRAL__KEEP("persistentVolumeReclaimPolicy"),
    CORRAL__KEEP("storageClassName"),
    CORRAL__KEEP("volumeMode"),
    CORRAL__KEEP("volumeAttributesClassName"),
    CORRAL__KEEP("awsElasticBlockStore"),
    CORRAL__KEEP("azureDisk"),
    CORRAL__KEEP("azureFile"),
    CORRAL__KEEP("cephfs"),
    CORRAL__KEEP("cinder"),
    CORRAL__KEEP("csi"),
    CORRAL__KEEP("fc"),
    CORRAL__KEEP("flexVolume"),
    CORRAL__KEEP("flocker"),
    CORRAL__KEEP("gcePersistentDisk"),
    CORRAL__KEEP("glusterfs"),
    CORRAL__KEEP("iscsi"),
    CORRAL__KEEP("nfs"),
    CORRAL__KEEP("photonPersistentDisk"),
    CORRAL__KEEP("portworxVolume"),
    CORRAL__KEEP("quobyte"),
    CORRAL__KEEP("rbd"),
    CORRAL__KEEP("scaleIO"),
    CORRAL__KEEP("storageos"),
    CORRAL__KEEP("vsphereVolume"),
};

static void dec_pv_spec(corral__dec_t *d, const corral_val_t *v, void *out)
{
    if (v && v->kind != CORRAL_VAL_NULL)
        CORRAL__DEC_MAP(d, v, pv_spec_fields, out);
}

static void check_selector_keys(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_strmap_t *m = out;
    corral__dec_strmap(d, v, m);
    for (size_t i = 0; i < m->n; i++) {
        const char *err = corral_label_key_error(m->items[i].key);
        if (err)
            corral__dec_err_field(d, v->pairs[i].key, m->items[i].key, "invalid label key: %s",
                                  err);
    }
}

static const corral__field_t lmng_spec_fields[] = {
    CORRAL__F("storageLimit", dec_qty, corral_local_model_node_group_t, storage_limit),
    CORRAL__WHOLE("persistentVolumeSpec", dec_pv_spec),
    CORRAL__KEEP("persistentVolumeClaimSpec"),
    CORRAL__F("nodeSelector", check_selector_keys, corral_local_model_node_group_t, node_selector),
};

static void dec_lmng_spec(corral__dec_t *d, const corral_val_t *v, void *out)
{
    CORRAL__DEC_MAP(d, v, lmng_spec_fields, out);
}

static const corral__field_t lmng_status_fields[] = {
    CORRAL__KEEP("used"),
    CORRAL__KEEP("available"),
};

static void dec_lmng_status(corral__dec_t *d, const corral_val_t *v, void *out)
{
    if (v && v->kind != CORRAL_VAL_NULL)
        CORRAL__DEC_MAP(d, v, lmng_status_fields, out);
}

static const corral__field_t lmng_fields[] = {
    CORRAL__TOP_FIELDS,
    CORRAL__WHOLE("spec", dec_lmng_spec),
    CORRAL__WHOLE("status", dec_lmng_status),
};

void corral__kind_local_model_node_group(corral__dec_t *d, const corral_val_t *root,
                                         corral_obj_t *o)
{
    corral_local_model_node_group_t *g = corral_arena_alloc(d->a, sizeof(*g));
    memset(g, 0, sizeof(*g));
    o->u.lmng = g;
    CORRAL__DEC_MAP(d, root, lmng_fields, g);
    const corral_val_t *spec = spec_of(d, root, "a LocalModelNodeGroup needs spec.storageLimit");
    if (!spec)
        return;
    size_t m = corral__dec_enter(d, "spec");
    require(d, spec, "storageLimit", "the most each node of the group may cache (e.g. 100Gi)");
    corral__dec_leave(d, m);
}

static const char *node_name_field(const char *key, void *ctx)
{
    return strcmp(key, "metadata.name") == 0 ? ctx : NULL;
}

bool corral_model_node_group_selects(const corral_obj_t *group, const char *node_name,
                                     const corral_strmap_t *node_labels)
{
    const corral_local_model_node_group_t *g = group->u.lmng;
    for (size_t i = 0; i < g->node_selector.n; i++) {
        const char *v = corral_strmap_get(node_labels, g->node_selector.items[i].key);
        if (!v || strcmp(v, g->node_selector.items[i].value) != 0)
            return false;
    }
    if (g->nnode_terms == 0)
        return true;
    for (size_t i = 0; i < g->nnode_terms; i++) {
        const corral_nsel_term_t *t = &g->node_terms[i];
        if (t->exprs.n == 0 && t->fields.n == 0)
            continue; /* an empty term matches nothing, as in Kubernetes */
        if (corral_sel_matches_labels(&t->exprs, node_labels) &&
            corral_sel_matches(&t->fields, node_name_field, (void *)node_name))
            return true;
    }
    return false;
}

/* --- LocalModelNode --------------------------------------------------------------------------- */

static const corral__field_t lm_info_fields[] = {
    CORRAL__F("sourceModelUri", corral__dec_str, corral_local_model_info_t, source_model_uri),
    CORRAL__F("modelName", corral__dec_str, corral_local_model_info_t, model_name),
    CORRAL__F("namespace", corral__dec_str, corral_local_model_info_t, namespace),
    CORRAL__F("nodeGroup", corral__dec_str, corral_local_model_info_t, node_group),
    CORRAL__F("serviceAccountName", corral__dec_str, corral_local_model_info_t,
              service_account_name),
    CORRAL__KEEP("storage"),
};

static void dec_lm_info(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_local_model_info_t *m = out;
    if (!CORRAL__DEC_MAP(d, v, lm_info_fields, m))
        return;
    if (!m->source_model_uri || !*m->source_model_uri)
        corral__dec_err_field(d, v, "sourceModelUri", "Required value");
    if (!m->model_name || !*m->model_name)
        corral__dec_err_field(d, v, "modelName",
                              "Required value: the LocalModelCache's name (the model's "
                              "directory on the node)");
}

static void dec_local_models(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_local_model_node_t *n = out;
    corral__dec_seq(d, v, sizeof(corral_local_model_info_t), dec_lm_info, (void **)&n->models,
                    &n->nmodels);
}

static const corral__field_t lmn_spec_fields[] = {
    CORRAL__WHOLE("localModels", dec_local_models),
};

static void dec_lmn_spec(corral__dec_t *d, const corral_val_t *v, void *out)
{
    CORRAL__DEC_MAP(d, v, lmn_spec_fields, out);
}

static void dec_model_status(corral__dec_t *d, const corral_val_t *v, void *out)
{
    static const char *const s[] = {CORRAL_MODEL_DOWNLOAD_PENDING, CORRAL_MODEL_DOWNLOADING,
                                    CORRAL_MODEL_DOWNLOADED, CORRAL_MODEL_DOWNLOAD_ERROR};
    corral_local_model_node_t *n = out;
    dec_status_map(d, v, &n->model_status, s, CORRAL_ARRAY_LEN(s));
}

static const corral__field_t lmn_status_fields[] = {
    CORRAL__WHOLE("modelStatus", dec_model_status),
};

static void dec_lmn_status(corral__dec_t *d, const corral_val_t *v, void *out)
{
    if (v && v->kind != CORRAL_VAL_NULL)
        CORRAL__DEC_MAP(d, v, lmn_status_fields, out);
}

static const corral__field_t lmn_fields[] = {
    CORRAL__TOP_FIELDS,
    CORRAL__WHOLE("spec", dec_lmn_spec),
    CORRAL__WHOLE("status", dec_lmn_status),
};

void corral__kind_local_model_node(corral__dec_t *d, const corral_val_t *root, corral_obj_t *o)
{
    corral_local_model_node_t *n = corral_arena_alloc(d->a, sizeof(*n));
    memset(n, 0, sizeof(*n));
    o->u.lmn = n;
    CORRAL__DEC_MAP(d, root, lmn_fields, n);
    const corral_val_t *spec = spec_of(d, root, "a LocalModelNode needs spec.localModels");
    if (spec) {
        size_t m = corral__dec_enter(d, "spec");
        require(d, spec, "localModels", "the models this node caches (may be empty: [])");
        corral__dec_leave(d, m);
    }
}

/* --- ControllerRevision (apps/v1) ------------------------------------------------------------- */

static void dec_revision(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral__dec_int64(d, v, out);
    if (*(int64_t *)out < 0)
        corral__dec_err(d, v, "Invalid value: %lld: must be greater than or equal to 0",
                        (long long)*(int64_t *)out);
}

static const corral__field_t crev_fields[] = {
    CORRAL__TOP_FIELDS,
    CORRAL__F("data", corral__dec_raw, corral_controller_revision_t, data),
    CORRAL__F("revision", dec_revision, corral_controller_revision_t, revision),
};

void corral__kind_controller_revision(corral__dec_t *d, const corral_val_t *root, corral_obj_t *o)
{
    corral_controller_revision_t *r = corral_arena_alloc(d->a, sizeof(*r));
    memset(r, 0, sizeof(*r));
    o->u.crev = r;
    CORRAL__DEC_MAP(d, root, crev_fields, r);
    const corral_val_t *data = corral_val_get(root, "data");
    if (!data || data->kind == CORRAL_VAL_NULL)
        corral__dec_err_field(d, data ? data : root, "data", "Required value: data is mandatory");
}

/* --- storage URIs ----------------------------------------------------------------------------- */

bool corral_storage_uri_match(const char *cached_uri, const char *storage_uri)
{
    if (!cached_uri || !storage_uri)
        return false;
    size_t nc = strlen(cached_uri), ns = strlen(storage_uri);
    if (nc && cached_uri[nc - 1] == '/')
        nc--;
    if (ns && storage_uri[ns - 1] == '/')
        ns--;
    if (ns < nc || strncmp(storage_uri, cached_uri, nc) != 0)
        return false;
    return ns == nc || storage_uri[nc] == '/';
}
