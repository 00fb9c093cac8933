/*
 * Kinds Corral stores and validates but runs nothing for, so that the
 * manifests of a Kubernetes install (deploy/kubernetes/) pass `kubectl
 * apply --dry-run=server` against `corral apiserver` as against
 * kube-apiserver: apps/v1 Deployment and DaemonSet, and
 * apiextensions.k8s.io/v1 CustomResourceDefinition.
 *
 * The rules are upstream's (pkg/apis/apps/validation, apiextensions-
 * apiserver's validation) for what decides whether an object is stored:
 * a workload's selector (required, not empty, matching the template's
 * labels), its pod template (validated as a pod's spec, restartPolicy
 * Always), replicas and the update strategy; a CRD's name, group, scope,
 * names, versions (exactly one storage version) and structural schemas.
 * Messages are upstream's where a client may read them.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model_int.h"

/* --- shared ----------------------------------------------------------------------------------- */

static void require(corral__dec_t *d, const corral_val_t *map, const char *field)
{
    const corral_val_t *f = corral_val_get(map, field);
    if (!f || f->kind == CORRAL_VAL_NULL)
        corral__dec_err_field(d, f ? f : map, field, "Required value");
}

static void dec_nonneg_i32(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral__dec_int32(d, v, out);
    if (*(int32_t *)out < 0)
        corral__dec_err(d, v, "Invalid value: %d: must be greater than or equal to 0",
                        (int)*(int32_t *)out);
}

/* An IntOrString of a rolling update: a non-negative integer or "N%".
 * *pct true for a percentage; *n the number. False when invalid. */
static bool dec_int_or_percent(corral__dec_t *d, const corral_val_t *v, bool max100, int64_t *n,
                               bool *pct)
{
    *n = 0;
    *pct = false;
    if (!v || v->kind == CORRAL_VAL_NULL)
        return true;
    if (v->kind == CORRAL_VAL_INT) {
        *n = v->u.i;
    } else if (v->kind == CORRAL_VAL_STR) {
        size_t len = v->len;
        bool ok = len >= 2 && v->s[len - 1] == '%' && len <= 12;
        for (size_t i = 0; ok && i + 1 < len; i++)
            ok = isdigit((unsigned char)v->s[i]) != 0;
        if (!ok) {
            corral__dec_err(d, v,
                            "Invalid value: \"%s\": a valid percent string must be a numeric "
                            "string followed by an ending '%%' (e.g. '1%%',  or '93%%', regex used "
                            "for validation is '[0-9]+%%')",
                            v->s);
            return false;
        }
        *n = strtoll(v->s, NULL, 10);
        *pct = true;
    } else {
        corral__dec_err(d, v, "expected an integer or a percentage such as \"25%%\", got %s",
                        corral_val_kind_name(v->kind));
        return false;
    }
    if (*n < 0) {
        corral__dec_err(d, v, "Invalid value: %lld: must be greater than or equal to 0",
                        (long long)*n);
        return false;
    }
    if (max100 && *pct && *n > 100) {
        corral__dec_err(d, v, "Invalid value: \"%s\": must not be greater than 100%%", v->s);
        return false;
    }
    return true;
}

/* rollingUpdate {maxUnavailable, maxSurge} of either workload. */
static void check_rolling(corral__dec_t *d, const corral_val_t *ru, bool surge_default_zero)
{
    if (!ru || ru->kind == CORRAL_VAL_NULL)
        return;
    if (!corral__dec_expect(d, ru, CORRAL_VAL_MAP))
        return;
    for (size_t i = 0; i < ru->n; i++) {
        const char *k = ru->pairs[i].key->s;
        if (strcmp(k, "maxUnavailable") != 0 && strcmp(k, "maxSurge") != 0)
            corral__dec_warn(d, ru->pairs[i].key, "unknown field \"%s\"", k);
    }
    int64_t mu = 0, ms = 0;
    bool mu_pct = false, ms_pct = false;
    const corral_val_t *muv = corral_val_get(ru, "maxUnavailable");
    const corral_val_t *msv = corral_val_get(ru, "maxSurge");
    size_t m = corral__dec_enter(d, "maxUnavailable");
    bool ok = dec_int_or_percent(d, muv, true, &mu, &mu_pct);
    corral__dec_leave(d, m);
    m = corral__dec_enter(d, "maxSurge");
    ok = dec_int_or_percent(d, msv, false, &ms, &ms_pct) && ok;
    corral__dec_leave(d, m);
    /* Absent values are upstream's defaults (25% / 25%, DaemonSet 1 / 0). */
    bool mu_zero = muv && muv->kind != CORRAL_VAL_NULL && mu == 0;
    bool ms_zero = msv && msv->kind != CORRAL_VAL_NULL ? ms == 0 : surge_default_zero;
    if (ok && mu_zero && ms_zero)
        corral__dec_err_field(d, muv, "maxUnavailable",
                              "Invalid value: %s%lld%s: may not be 0 when `maxSurge` is 0",
                              mu_pct ? "\"" : "", (long long)mu, mu_pct ? "%\"" : "");
}

/* The selector and template of a workload at spec. */
static void check_workload(corral__dec_t *d, const corral_val_t *spec, corral_workload_t *w,
                           const char *kind_lower)
{
    size_t m = corral__dec_enter(d, "spec");
    const corral_val_t *sel = corral_val_get(spec, "selector");
    if (!sel || sel->kind == CORRAL_VAL_NULL) {
        corral__dec_err_field(d, sel ? sel : spec, "selector", "Required value");
    } else if (w->selector.n == 0 && sel->kind == CORRAL_VAL_MAP) {
        corral__dec_err_field(d, sel, "selector",
                              "Invalid value: {}: empty selector is invalid for %s", kind_lower);
    }
    const corral_val_t *tmpl = corral_val_get(spec, "template");
    if (!tmpl || tmpl->kind == CORRAL_VAL_NULL) {
        corral__dec_err_field(d, tmpl ? tmpl : spec, "template", "Required value");
    } else if (w->selector.n && !corral_sel_matches_labels(&w->selector, &w->tmpl.meta.labels)) {
        const corral_val_t *labels = corral_val_dig(tmpl, "metadata.labels");
        corral__dec_err_field(d, labels ? labels : tmpl, "template.metadata.labels",
                              "Invalid value: the template's labels: `selector` does not match "
                              "template `labels`");
    }
    const char *rp = w->tmpl.spec.restart_policy;
    if (tmpl && tmpl->kind == CORRAL_VAL_MAP && rp && strcmp(rp, "Always") != 0)
        corral__dec_err_field(d, corral_val_dig(tmpl, "spec.restartPolicy"),
                              "template.spec.restartPolicy",
                              "Unsupported value: \"%s\": supported values: \"Always\"", rp);
    if (corral_val_dig(tmpl, "spec.activeDeadlineSeconds"))
        corral__dec_err_field(d, corral_val_dig(tmpl, "spec.activeDeadlineSeconds"),
                              "template.spec.activeDeadlineSeconds",
                              "Forbidden: activeDeadlineSeconds in %s is not Supported",
                              strcmp(kind_lower, "daemonset") == 0 ? "DaemonSet" : "ReplicaSet");
    corral__dec_leave(d, m);
}

/* The strategy (Deployment) or updateStrategy (DaemonSet) at spec.field. */
static void check_strategy(corral__dec_t *d, const corral_val_t *spec, const char *field,
                           const char *rolling, const char *other, corral_workload_t *w)
{
    const corral_val_t *st = corral_val_get(spec, field);
    if (!st || st->kind == CORRAL_VAL_NULL)
        return;
    size_t m = corral__dec_enter(d, "spec");
    size_t m2 = corral__dec_enter(d, field);
    if (corral__dec_expect(d, st, CORRAL_VAL_MAP)) {
        const corral_val_t *t = corral_val_get(st, "type");
        const char *type = rolling;
        if (t && t->kind == CORRAL_VAL_STR)
            type = t->s;
        else if (t && t->kind != CORRAL_VAL_NULL)
            corral__dec_err_field(d, t, "type", "expected a string, got %s",
                                  corral_val_kind_name(t->kind));
        if (strcmp(type, rolling) != 0 && strcmp(type, other) != 0)
            corral__dec_err_field(d, t, "type",
                                  "Unsupported value: \"%s\": supported values: \"%s\", \"%s\"",
                                  type, strcmp(rolling, other) < 0 ? rolling : other,
                                  strcmp(rolling, other) < 0 ? other : rolling);
        w->strategy = strcmp(type, rolling) == 0 ? rolling : other;
        const corral_val_t *ru = corral_val_get(st, "rollingUpdate");
        for (size_t i = 0; i < st->n; i++) {
            const char *k = st->pairs[i].key->s;
            if (strcmp(k, "type") != 0 && strcmp(k, "rollingUpdate") != 0)
                corral__dec_warn(d, st->pairs[i].key, "unknown field \"%s\"", k);
        }
        if (ru && ru->kind != CORRAL_VAL_NULL && strcmp(type, rolling) != 0) {
            corral__dec_err_field(d, ru, "rollingUpdate",
                                  "Forbidden: may not be specified when strategy `type` is '%s'",
                                  type);
        } else {
            size_t m3 = corral__dec_enter(d, "rollingUpdate");
            check_rolling(d, ru, strcmp(field, "updateStrategy") == 0);
            corral__dec_leave(d, m3);
        }
    }
    corral__dec_leave(d, m2);
    corral__dec_leave(d, m);
}

/* --- Deployment, DaemonSet -------------------------------------------------------------------- */

static const corral__field_t deploy_spec_fields[] = {
    CORRAL__F("replicas", dec_nonneg_i32, corral_workload_t, replicas),
    CORRAL__F("selector", corral__dec_label_selector, corral_workload_t, selector),
    CORRAL__F("template", corral__dec_pod_template, corral_workload_t, tmpl),
    CORRAL__KEEP("strategy"), /* check_strategy */
    CORRAL__F("minReadySeconds", dec_nonneg_i32, corral_workload_t, min_ready_seconds),
    CORRAL__KEEP("revisionHistoryLimit"),
    CORRAL__KEEP("paused"),
    CORRAL__KEEP("progressDeadlineSeconds"),
};

static const corral__field_t ds_spec_fields[] = {
    CORRAL__F("selector", corral__dec_label_selector, corral_workload_t, selector),
    CORRAL__F("template", corral__dec_pod_template, corral_workload_t, tmpl),
    CORRAL__KEEP("updateStrategy"), /* check_strategy */
    CORRAL__F("minReadySeconds", dec_nonneg_i32, corral_workload_t, min_ready_seconds),
    CORRAL__KEEP("revisionHistoryLimit"),
};

static void dec_deploy_spec(corral__dec_t *d, const corral_val_t *v, void *out)
{
    CORRAL__DEC_MAP(d, v, deploy_spec_fields, out);
}

static void dec_ds_spec(corral__dec_t *d, const corral_val_t *v, void *out)
{
    CORRAL__DEC_MAP(d, v, ds_spec_fields, out);
}

static const corral__field_t deploy_fields[] = {
    CORRAL__TOP_FIELDS,
    CORRAL__WHOLE("spec", dec_deploy_spec),
    CORRAL__KEEP("status"),
};

static const corral__field_t ds_fields[] = {
    CORRAL__TOP_FIELDS,
    CORRAL__WHOLE("spec", dec_ds_spec),
    CORRAL__KEEP("status"),
};

/* revisionHistoryLimit, progressDeadlineSeconds: integers, not negative. */
static void check_nonneg(corral__dec_t *d, const corral_val_t *spec, const char *field,
                         int64_t *out)
{
    const corral_val_t *v = corral_val_get(spec, field);
    *out = -1;
    if (!v || v->kind == CORRAL_VAL_NULL)
        return;
    size_t m = corral__dec_enter(d, "spec");
    int32_t n = 0;
    size_t m2 = corral__dec_enter(d, field);
    dec_nonneg_i32(d, v, &n);
    corral__dec_leave(d, m2);
    corral__dec_leave(d, m);
    *out = n;
}

static corral_workload_t *workload_new(corral__dec_t *d, corral_obj_t *o)
{
    corral_workload_t *w = corral_arena_alloc(d->a, sizeof(*w));
    memset(w, 0, sizeof(*w));
    o->u.workload = w;
    return w;
}

static const corral_val_t *spec_of(corral__dec_t *d, const corral_val_t *root)
{
    const corral_val_t *spec = corral_val_get(root, "spec");
    if (!spec || spec->kind == CORRAL_VAL_NULL) {
        corral__dec_err_field(d, spec ? spec : root, "spec", "Required value");
        return NULL;
    }
    return spec->kind == CORRAL_VAL_MAP ? spec : NULL;
}

void corral__kind_deployment(corral__dec_t *d, const corral_val_t *root, corral_obj_t *o)
{
    corral_workload_t *w = workload_new(d, o);
    w->replicas = 1;
    CORRAL__DEC_MAP(d, root, deploy_fields, w);
    const corral_val_t *spec = spec_of(d, root);
    if (!spec)
        return;
    check_workload(d, spec, w, "deployment");
    check_strategy(d, spec, "strategy", "RollingUpdate", "Recreate", w);
    int64_t rhl, pds;
    check_nonneg(d, spec, "revisionHistoryLimit", &rhl);
    check_nonneg(d, spec, "progressDeadlineSeconds", &pds);
    if (pds >= 0 && pds <= w->min_ready_seconds)
        corral__dec_err_field(
            d, corral_val_get(spec, "progressDeadlineSeconds"), "spec.progressDeadlineSeconds",
            "Invalid value: %lld: must be greater than minReadySeconds", (long long)pds);
}

void corral__kind_daemonset(corral__dec_t *d, const corral_val_t *root, corral_obj_t *o)
{
    corral_workload_t *w = workload_new(d, o);
    CORRAL__DEC_MAP(d, root, ds_fields, w);
    const corral_val_t *spec = spec_of(d, root);
    if (!spec)
        return;
    check_workload(d, spec, w, "daemonset");
    check_strategy(d, spec, "updateStrategy", "RollingUpdate", "OnDelete", w);
    int64_t rhl;
    check_nonneg(d, spec, "revisionHistoryLimit", &rhl);
}

/* --- CustomResourceDefinition ----------------------------------------------------------------- */

/* DNS-1035 label: lower-case alphanumerics and '-', starting with a letter,
 * ending with an alphanumeric, at most 63. NULL when valid. */
static const char *dns1035_error(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 63)
        return n ? "must be no more than 63 characters" : "must not be empty";
    bool ok = islower((unsigned char)s[0]) &&
              (islower((unsigned char)s[n - 1]) || isdigit((unsigned char)s[n - 1]));
    for (size_t i = 0; ok && i < n; i++)
        ok = islower((unsigned char)s[i]) || isdigit((unsigned char)s[i]) || s[i] == '-';
    return ok ? NULL
              : "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start "
                "with an alphabetic character, and end with an alphanumeric character (e.g. "
                "'my-name',  or 'abc-123', regex used for validation is "
                "'[a-z]([-a-z0-9]*[a-z0-9])?')";
}

static void check_dns1035(corral__dec_t *d, const corral_val_t *v, const char *field, const char *s)
{
    const char *err = s && *s ? dns1035_error(s) : NULL;
    if (err)
        corral__dec_err_field(d, v, field, "Invalid value: \"%s\": %s", s, err);
}

typedef struct crd_names {
    const char *plural, *singular, *kind, *list_kind;
} crd_names_t;

static const corral__field_t names_fields[] = {
    CORRAL__F("plural", corral__dec_str, crd_names_t, plural),
    CORRAL__F("singular", corral__dec_str, crd_names_t, singular),
    CORRAL__KEEP("shortNames"),
    CORRAL__F("kind", corral__dec_str, crd_names_t, kind),
    CORRAL__F("listKind", corral__dec_str, crd_names_t, list_kind),
    CORRAL__KEEP("categories"),
};

/* A kind name: what upstream checks, DNS-1035 after lower-casing. */
static void check_kind_name(corral__dec_t *d, const corral_val_t *v, const char *field,
                            const char *kind)
{
    char low[64];
    size_t n = strlen(kind);
    if (n >= sizeof(low)) {
        corral__dec_err_field(d, v, field,
                              "Invalid value: \"%s\": must be no more than 63 "
                              "characters",
                              kind);
        return;
    }
    for (size_t i = 0; i <= n; i++)
        low[i] = (char)tolower((unsigned char)kind[i]);
    if (dns1035_error(low))
        corral__dec_err_field(d, v, field,
                              "Invalid value: \"%s\": may have mixed case, but should otherwise "
                              "match: %s",
                              kind, dns1035_error(low));
}

static void check_names(corral__dec_t *d, const corral_val_t *names, crd_names_t *nm)
{
    size_t m = corral__dec_enter(d, "names");
    if (!names || names->kind == CORRAL_VAL_NULL) {
        corral__dec_leave(d, m);
        return;
    }
    CORRAL__DEC_MAP(d, names, names_fields, nm);
    if (!nm->plural || !*nm->plural)
        require(d, names, "plural");
    check_dns1035(d, corral_val_get(names, "plural"), "plural", nm->plural);
    check_dns1035(d, corral_val_get(names, "singular"), "singular", nm->singular);
    const corral_val_t *sn = corral_val_get(names, "shortNames");
    for (size_t i = 0; sn && sn->kind == CORRAL_VAL_SEQ && i < sn->n; i++) {
        size_t mi = corral__dec_enter(d, "shortNames");
        size_t mj = corral__dec_enter_index(d, i);
        const char *s = NULL;
        corral__dec_str(d, sn->items[i], &s);
        const char *err = s ? dns1035_error(s) : NULL;
        if (err)
            corral__dec_err(d, sn->items[i], "Invalid value: \"%s\": %s", s, err);
        corral__dec_leave(d, mj);
        corral__dec_leave(d, mi);
    }
    if (!nm->kind || !*nm->kind)
        corral__dec_err_field(d,
                              corral_val_get(names, "kind") ? corral_val_get(names, "kind") : names,
                              "kind", "Required value");
    else
        check_kind_name(d, corral_val_get(names, "kind"), "kind", nm->kind);
    /* singular and listKind are defaulted (lower-case kind, kind + "List"). */
    if (nm->list_kind && *nm->list_kind)
        check_kind_name(d, corral_val_get(names, "listKind"), "listKind", nm->list_kind);
    if (nm->kind && nm->list_kind && *nm->kind && strcmp(nm->kind, nm->list_kind) == 0)
        corral__dec_err_field(d, corral_val_get(names, "listKind"), "listKind",
                              "Invalid value: \"%s\": kind and listKind may not be the same",
                              nm->list_kind);
    corral__dec_leave(d, m);
}

/* A structural schema node (apiextensions' structural schema rules that
 * decide whether a CRD is stored): a type everywhere below the root unless
 * x-kubernetes-int-or-string or x-kubernetes-preserve-unknown-fields say
 * otherwise, and the type one of OpenAPI's. depth bounds the walk (the
 * JSON parser bounds nesting already). */
static void check_schema(corral__dec_t *d, const corral_val_t *s, bool root, int depth)
{
    static const char *const types[] = {"array",  "boolean", "integer",
                                        "number", "object",  "string"};
    if (!s || s->kind != CORRAL_VAL_MAP) {
        if (s && s->kind != CORRAL_VAL_NULL)
            corral__dec_err(d, s, "expected a schema object, got %s",
                            corral_val_kind_name(s->kind));
        return;
    }
    if (depth > 64) {
        corral__dec_err(d, s, "Invalid value: the schema is nested more than 64 levels");
        return;
    }
    const char *type = corral_val_get_str(s, "type");
    const corral_val_t *ios = corral_val_get(s, "x-kubernetes-int-or-string");
    const corral_val_t *pres = corral_val_get(s, "x-kubernetes-preserve-unknown-fields");
    bool int_or_string = ios && ios->kind == CORRAL_VAL_BOOL && ios->u.b;
    bool preserve = pres && pres->kind == CORRAL_VAL_BOOL && pres->u.b;
    if (root && (!type || !*type)) {
        corral__dec_err_field(d, s, "type", "Required value: must not be empty at the root");
    } else if (root && strcmp(type, "object") != 0) {
        corral__dec_err_field(d, corral_val_get(s, "type"), "type",
                              "Invalid value: \"%s\": must be object at the root", type);
    } else if ((!type || !*type) && !int_or_string && !preserve) {
        corral__dec_err_field(d, s, "type",
                              "Required value: must not be empty for specified object fields");
    } else if (type && *type) {
        bool known = false;
        for (size_t i = 0; i < CORRAL_ARRAY_LEN(types) && !known; i++)
            known = strcmp(type, types[i]) == 0;
        if (!known)
            corral__dec_err_field(d, corral_val_get(s, "type"), "type",
                                  "Unsupported value: \"%s\": supported values: \"array\", "
                                  "\"boolean\", \"integer\", \"number\", \"object\", \"string\"",
                                  type);
        if (int_or_string)
            corral__dec_err_field(d, corral_val_get(s, "type"), "type",
                                  "Invalid value: \"%s\": must be empty if "
                                  "x-kubernetes-int-or-string is true",
                                  type);
    }
    if (type && strcmp(type, "array") == 0 && !corral_val_get(s, "items"))
        corral__dec_err_field(d, s, "items", "Required value: must be specified");
    const corral_val_t *props = corral_val_get(s, "properties");
    if (props && props->kind == CORRAL_VAL_MAP) {
        size_t m = corral__dec_enter(d, "properties");
        for (size_t i = 0; i < props->n; i++) {
            size_t mk = corral__dec_enter(d, props->pairs[i].key->s);
            check_schema(d, props->pairs[i].val, false, depth + 1);
            corral__dec_leave(d, mk);
        }
        corral__dec_leave(d, m);
    }
    const corral_val_t *items = corral_val_get(s, "items");
    if (items && items->kind == CORRAL_VAL_MAP) {
        size_t m = corral__dec_enter(d, "items");
        check_schema(d, items, false, depth + 1);
        corral__dec_leave(d, m);
    } else if (items && items->kind == CORRAL_VAL_SEQ) {
        corral__dec_err_field(d, items, "items",
                              "Forbidden: items must be a schema object and not an array");
    }
    const corral_val_t *ap = corral_val_get(s, "additionalProperties");
    if (ap && ap->kind == CORRAL_VAL_MAP) {
        if (props && props->kind == CORRAL_VAL_MAP && props->n)
            corral__dec_err_field(d, ap, "additionalProperties",
                                  "Forbidden: additionalProperties and properties are mutual "
                                  "exclusive");
        size_t m = corral__dec_enter(d, "additionalProperties");
        check_schema(d, ap, false, depth + 1);
        corral__dec_leave(d, m);
    }
}

typedef struct crd_version {
    const char *name;
    bool served, storage;
} crd_version_t;

static const corral__field_t version_fields[] = {
    CORRAL__F("name", corral__dec_str, crd_version_t, name),
    CORRAL__F("served", corral__dec_bool, crd_version_t, served),
    CORRAL__F("storage", corral__dec_bool, crd_version_t, storage),
    CORRAL__KEEP("deprecated"),
    CORRAL__KEEP("deprecationWarning"),
    CORRAL__KEEP("schema"), /* check_schema */
    CORRAL__KEEP("subresources"),
    CORRAL__KEEP("additionalPrinterColumns"),
    CORRAL__KEEP("selectableFields"),
};

static void check_versions(corral__dec_t *d, const corral_val_t *spec, const crd_names_t *nm,
                           const char *group, corral_crd_t *crd)
{
    const corral_val_t *vs = corral_val_get(spec, "versions");
    size_t m = corral__dec_enter(d, "versions");
    if (!vs || vs->kind == CORRAL_VAL_NULL || (vs->kind == CORRAL_VAL_SEQ && vs->n == 0)) {
        corral__dec_err(d, vs ? vs : spec,
                        "Invalid value: []: must have exactly one version "
                        "marked as storage version");
        corral__dec_leave(d, m);
        return;
    }
    if (!corral__dec_expect(d, vs, CORRAL_VAL_SEQ)) {
        corral__dec_leave(d, m);
        return;
    }
    size_t nstorage = 0;
    for (size_t i = 0; i < vs->n; i++) {
        size_t mi = corral__dec_enter_index(d, i);
        crd_version_t v = {0};
        const corral_val_t *it = vs->items[i];
        if (CORRAL__DEC_MAP(d, it, version_fields, &v)) {
            if (!v.name || !*v.name)
                require(d, it, "name");
            else
                check_dns1035(d, corral_val_get(it, "name"), "name", v.name);
            for (size_t j = 0; v.name && j < i; j++) {
                const char *other = corral_val_get_str(vs->items[j], "name");
                if (other && strcmp(other, v.name) == 0)
                    corral__dec_err_field(d, corral_val_get(it, "name"), "name",
                                          "Invalid value: \"%s\": must appear only once", v.name);
            }
            if (v.storage) {
                nstorage++;
                crd->storage_version = v.name;
            }
            const corral_val_t *schema = corral_val_dig(it, "schema.openAPIV3Schema");
            if (!schema || schema->kind == CORRAL_VAL_NULL) {
                corral__dec_err_field(d, it, "schema.openAPIV3Schema",
                                      "Required value: schemas are required");
            } else {
                size_t ms = corral__dec_enter(d, "schema");
                size_t mo = corral__dec_enter(d, "openAPIV3Schema");
                check_schema(d, schema, true, 0);
                corral__dec_leave(d, mo);
                corral__dec_leave(d, ms);
            }
            if (v.served && v.name && group && nm->kind) {
                char av[320];
                snprintf(av, sizeof(av), "%s/%s", group, v.name);
                if (corral_kind_find(av, nm->kind))
                    crd->served_by_corral = true;
            }
        }
        corral__dec_leave(d, mi);
    }
    if (nstorage != 1)
        corral__dec_err(d, vs,
                        "Invalid value: must have exactly one version marked as storage "
                        "version");
    corral__dec_leave(d, m);
}

static const corral__field_t crd_spec_fields[] = {
    CORRAL__F("group", corral__dec_str, corral_crd_t, group),
    CORRAL__KEEP("names"),    /* check_names */
    CORRAL__KEEP("scope"),    /* below */
    CORRAL__KEEP("versions"), /* check_versions */
    CORRAL__KEEP("conversion"),
    CORRAL__KEEP("preserveUnknownFields"),
};

static void dec_crd_spec(corral__dec_t *d, const corral_val_t *v, void *out)
{
    CORRAL__DEC_MAP(d, v, crd_spec_fields, out);
}

static const corral__field_t crd_fields[] = {
    CORRAL__TOP_FIELDS,
    CORRAL__WHOLE("spec", dec_crd_spec),
    CORRAL__KEEP("status"),
};

void corral__kind_crd(corral__dec_t *d, const corral_val_t *root, corral_obj_t *o)
{
    corral_crd_t *crd = corral_arena_alloc(d->a, sizeof(*crd));
    memset(crd, 0, sizeof(*crd));
    o->u.crd = crd;
    CORRAL__DEC_MAP(d, root, crd_fields, crd);
    const corral_val_t *spec = spec_of(d, root);
    if (!spec)
        return;
    size_t m = corral__dec_enter(d, "spec");
    const char *group = crd->group;
    if (!group || !*group) {
        require(d, spec, "group");
    } else {
        const char *err = corral__dns1123_subdomain_error(group);
        if (err)
            corral__dec_err_field(d, corral_val_get(spec, "group"), "group",
                                  "Invalid value: \"%s\": %s", group, err);
        else if (!strchr(group, '.'))
            corral__dec_err_field(d, corral_val_get(spec, "group"), "group",
                                  "Invalid value: \"%s\": should be a domain with at least one "
                                  "dot",
                                  group);
    }
    const corral_val_t *scope = corral_val_get(spec, "scope");
    const char *sc = scope && scope->kind == CORRAL_VAL_STR ? scope->s : NULL;
    if (!sc || !*sc)
        corral__dec_err_field(d, scope ? scope : spec, "scope", "Required value");
    else if (strcmp(sc, "Cluster") != 0 && strcmp(sc, "Namespaced") != 0)
        corral__dec_err_field(d, scope, "scope",
                              "Unsupported value: \"%s\": supported values: \"Cluster\", "
                              "\"Namespaced\"",
                              sc);
    crd->scope = sc;
    crd_names_t nm = {0};
    const corral_val_t *names = corral_val_get(spec, "names");
    if (!names || names->kind == CORRAL_VAL_NULL)
        corral__dec_err_field(d, names ? names : spec, "names", "Required value");
    check_names(d, names, &nm);
    crd->plural = nm.plural;
    crd->singular = nm.singular;
    crd->kind = nm.kind;
    crd->list_kind = nm.list_kind;
    check_versions(d, spec, &nm, group, crd);
    const corral_val_t *conv = corral_val_dig(spec, "conversion.strategy");
    if (conv && conv->kind == CORRAL_VAL_STR && strcmp(conv->s, "None") != 0 &&
        strcmp(conv->s, "Webhook") != 0)
        corral__dec_err_field(d, conv, "conversion.strategy",
                              "Unsupported value: \"%s\": supported values: \"None\", "
                              "\"Webhook\"",
                              conv->s);
    const corral_val_t *puf = corral_val_get(spec, "preserveUnknownFields");
    if (puf && puf->kind == CORRAL_VAL_BOOL && puf->u.b)
        corral__dec_err_field(d, puf, "preserveUnknownFields",
                              "Invalid value: true: cannot set to true, set "
                              "x-kubernetes-preserve-unknown-fields to true in "
                              "spec.versions[*].schema instead");
    corral__dec_leave(d, m);
    const char *name = o->meta.name;
    if (name && *name && nm.plural && group) {
        size_t np = strlen(nm.plural);
        if (strncmp(name, nm.plural, np) != 0 || name[np] != '.' ||
            strcmp(name + np + 1, group) != 0)
            corral__dec_err_field(d, corral_val_dig(root, "metadata.name"), "metadata.name",
                                  "Invalid value: \"%s\": must be spec.names.plural+\".\"+"
                                  "spec.group",
                                  name);
    }
}
