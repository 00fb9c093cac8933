/*
 * ObjectMeta: names, namespaces, labels, annotations, owner references, and the
 * Kubernetes naming rules (DNS-1123 labels and subdomains) with their upstream
 * wording, plus a suggestion when a name only breaks the rules by case or '_'.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "model/model_int.h"

#define ANNOTATIONS_MAX_BYTES ((size_t)256 * 1024)

static bool dns_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/* One label: [a-z0-9]([-a-z0-9]*[a-z0-9])? */
static bool dns_label_ok(const char *s, size_t n)
{
    if (n == 0 || !dns_alnum(s[0]) || !dns_alnum(s[n - 1]))
        return false;
    for (size_t i = 0; i < n; i++) {
        if (!dns_alnum(s[i]) && s[i] != '-')
            return false;
    }
    return true;
}

const char *corral__dns1123_label_error(const char *s)
{
    size_t n = strlen(s);
    if (n > 63)
        return "must be no more than 63 characters";
    if (!dns_label_ok(s, n))
        return "a lowercase RFC 1123 label must consist of lower case alphanumeric characters "
               "or '-', and must start and end with an alphanumeric character";
    return NULL;
}

const char *corral__dns1123_subdomain_error(const char *s)
{
    size_t n = strlen(s);
    if (n > 253)
        return "must be no more than 253 characters";
    const char *p = s;
    for (;;) {
        const char *dot = strchr(p, '.');
        size_t len = dot ? (size_t)(dot - p) : strlen(p);
        if (!dns_label_ok(p, len))
            return "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                   "characters, '-' or '.', and must start and end with an alphanumeric "
                   "character";
        if (!dot)
            return NULL;
        p = dot + 1;
    }
}

/* "Training_Queue" -> "training-queue", when that fixes the name. */
static bool suggest_name(const char *s, char *out, size_t len, bool label)
{
    size_t n = strlen(s);
    if (n + 1 > len)
        return false;
    for (size_t i = 0; i <= n; i++)
        out[i] = (char)(s[i] == '_' || s[i] == ' ' ? '-' : tolower((unsigned char)s[i]));
    if (strcmp(out, s) == 0)
        return false;
    return label ? !corral__dns1123_label_error(out) : !corral__dns1123_subdomain_error(out);
}

static void check_name(corral__dec_t *d, const corral_val_t *at, const char *field,
                       const char *name, bool label)
{
    const char *err =
        label ? corral__dns1123_label_error(name) : corral__dns1123_subdomain_error(name);
    if (!err)
        return;
    char fix[256] = "";
    if (suggest_name(name, fix, sizeof(fix), label))
        corral__dec_err_field(d, at, field, "invalid name \"%s\": %s (did you mean \"%s\"?)", name,
                              err, fix);
    else
        corral__dec_err_field(d, at, field, "invalid name \"%s\": %s", name, err);
}

static const corral__field_t owner_fields[] = {
    CORRAL__F("apiVersion", corral__dec_str, corral_owner_ref_t, api_version),
    CORRAL__F("kind", corral__dec_str, corral_owner_ref_t, kind),
    CORRAL__F("name", corral__dec_str, corral_owner_ref_t, name),
    CORRAL__F("uid", corral__dec_str, corral_owner_ref_t, uid),
    CORRAL__F("controller", corral__dec_bool, corral_owner_ref_t, controller),
    CORRAL__F("blockOwnerDeletion", corral__dec_bool, corral_owner_ref_t, block_owner_deletion),
};

static void dec_owner(corral__dec_t *d, const corral_val_t *v, void *out)
{
    CORRAL__DEC_MAP(d, v, owner_fields, out);
}

static void dec_owners(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_meta_t *m = out;
    corral__dec_seq(d, v, sizeof(corral_owner_ref_t), dec_owner, (void **)&m->owners, &m->nowners);
}

static const corral__field_t meta_fields[] = {
    CORRAL__F("name", corral__dec_str, corral_meta_t, name),
    CORRAL__F("generateName", corral__dec_str, corral_meta_t, generate_name),
    CORRAL__F("namespace", corral__dec_str, corral_meta_t, namespace),
    CORRAL__F("uid", corral__dec_str, corral_meta_t, uid),
    CORRAL__F("resourceVersion", corral__dec_str, corral_meta_t, resource_version),
    CORRAL__F("generation", corral__dec_int64, corral_meta_t, generation),
    CORRAL__F("creationTimestamp", corral__dec_time, corral_meta_t, creation_us),
    CORRAL__F("deletionTimestamp", corral__dec_time, corral_meta_t, deletion_us),
    CORRAL__F("deletionGracePeriodSeconds", corral__dec_opt_i64, corral_meta_t,
              deletion_grace_seconds),
    CORRAL__F("labels", corral__dec_strmap, corral_meta_t, labels),
    CORRAL__F("annotations", corral__dec_strmap, corral_meta_t, annotations),
    CORRAL__F("finalizers", corral__dec_strlist, corral_meta_t, finalizers),
    CORRAL__WHOLE("ownerReferences", dec_owners),
    CORRAL__KEEP("managedFields"),
    CORRAL__KEEP("selfLink"),
};

static void check_labels(corral__dec_t *d, const corral_val_t *v, const corral_meta_t *m)
{
    const corral_val_t *lv = corral_val_get(v, "labels");
    for (size_t i = 0; i < m->labels.n; i++) {
        const corral_kv_t *kv = &m->labels.items[i];
        const corral_val_t *at = lv && i < lv->n ? lv->pairs[i].key : lv;
        size_t mk = corral__dec_enter(d, "labels");
        const char *err = corral_label_key_error(kv->key);
        if (err)
            corral__dec_err_field(d, at, kv->key, "invalid label key: %s", err);
        err = corral_label_value_error(kv->value);
        if (err)
            corral__dec_err_field(d, lv && i < lv->n ? lv->pairs[i].val : lv, kv->key,
                                  "invalid label value \"%s\": %s", kv->value, err);
        corral__dec_leave(d, mk);
    }
    const corral_val_t *av = corral_val_get(v, "annotations");
    size_t total = 0;
    for (size_t i = 0; i < m->annotations.n; i++) {
        const corral_kv_t *kv = &m->annotations.items[i];
        total += strlen(kv->key) + strlen(kv->value);
        const char *err = corral_label_key_error(kv->key);
        if (err) {
            size_t mk = corral__dec_enter(d, "annotations");
            corral__dec_err_field(d, av && i < av->n ? av->pairs[i].key : av, kv->key,
                                  "invalid annotation key: %s", err);
            corral__dec_leave(d, mk);
        }
    }
    if (total > ANNOTATIONS_MAX_BYTES)
        corral__dec_err_field(d, av, "annotations",
                              "total size %zu bytes is over the limit of %zu bytes", total,
                              ANNOTATIONS_MAX_BYTES);
}

void corral__dec_meta(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_meta_t *m = out;
    if (!CORRAL__DEC_MAP(d, v, meta_fields, m))
        return;
    if (m->namespace && *m->namespace) {
        const char *err = corral__dns1123_label_error(m->namespace);
        if (err)
            corral__dec_err_field(d, corral_val_get(v, "namespace"), "namespace",
                                  "invalid namespace \"%s\": %s", m->namespace, err);
    }
    check_labels(d, v, m);
}

/* kube's ValidatePathSegmentName (RBAC kinds: "system:discovery" is valid). */
static void check_path_segment(corral__dec_t *d, const corral_val_t *at, const char *name)
{
    if (!strcmp(name, ".") || !strcmp(name, ".."))
        corral__dec_err_field(d, at, "name", "invalid name \"%s\": may not be '.' or '..'", name);
    else if (strchr(name, '/') || strchr(name, '%'))
        corral__dec_err_field(d, at, "name", "invalid name \"%s\": may not contain '/' or '%%'",
                              name);
}

void corral__check_object_name(corral__dec_t *d, const corral_val_t *meta, const corral_meta_t *m,
                               int rule)
{
    size_t mk = corral__dec_enter(d, "metadata");
    if (m->name && *m->name && rule == CORRAL__NAME_PATH_SEGMENT) {
        check_path_segment(d, corral_val_get(meta, "name"), m->name);
    } else if (m->name && *m->name) {
        check_name(d, corral_val_get(meta, "name"), "name", m->name, rule == CORRAL__NAME_LABEL);
    } else if (!m->generate_name || !*m->generate_name) {
        corral__dec_err_field(d, meta, "name", "required: every object needs metadata.name");
    }
    corral__dec_leave(d, mk);
}
