/*
 * The small core kinds: Namespace, Event (v1), PriorityClass, Lease, ConfigMap
 * and Secret. Each is a field table and a few upstream validation rules.
 */
#include <ctype.h>
#include <string.h>

#include "corral/base64.h"
#include "model/model_int.h"

/* --- Namespace ------------------------------------------------------------------ */

static void dec_ns_phase(corral__dec_t *d, const corral_val_t *v, void *out)
{
    static const char *const p[] = {"Active", "Terminating"};
    corral__dec_enum(d, v, out, p, CORRAL_ARRAY_LEN(p));
}

static const corral__field_t ns_status_fields[] = {
    CORRAL__F("phase", dec_ns_phase, corral_namespace_t, phase),
    CORRAL__KEEP("conditions"),
};

static void dec_ns_status(corral__dec_t *d, const corral_val_t *v, void *out)
{
    CORRAL__DEC_MAP(d, v, ns_status_fields, out);
}

static const corral__field_t ns_spec_fields[] = {
    CORRAL__KEEP("finalizers"),
};

static void dec_ns_spec(corral__dec_t *d, const corral_val_t *v, void *out)
{
    CORRAL__DEC_MAP(d, v, ns_spec_fields, out);
}

static const corral__field_t ns_fields[] = {
    CORRAL__TOP_FIELDS,
    CORRAL__WHOLE("spec", dec_ns_spec),
    CORRAL__WHOLE("status", dec_ns_status),
};

void corral__kind_namespace(corral__dec_t *d, const corral_val_t *root, corral_obj_t *o)
{
    corral_namespace_t *ns = corral_arena_alloc(d->a, sizeof(*ns));
    o->u.ns = ns;
    CORRAL__DEC_MAP(d, root, ns_fields, ns);
}

/* --- Event (v1) -------------------------------------------------------------------- */

static const corral__field_t objref_fields[] = {
    CORRAL__F("apiVersion", corral__dec_str, corral_object_ref_t, api_version),
    CORRAL__F("kind", corral__dec_str, corral_object_ref_t, kind),
    CORRAL__F("namespace", corral__dec_str, corral_object_ref_t, namespace),
    CORRAL__F("name", corral__dec_str, corral_object_ref_t, name),
    CORRAL__F("uid", corral__dec_str, corral_object_ref_t, uid),
    CORRAL__F("resourceVersion", corral__dec_str, corral_object_ref_t, resource_version),
    CORRAL__F("fieldPath", corral__dec_str, corral_object_ref_t, field_path),
};

static void dec_objref(corral__dec_t *d, const corral_val_t *v, void *out)
{
    CORRAL__DEC_MAP(d, v, objref_fields, out);
}

typedef struct event_source {
    const char *component;
    const char *host;
} event_source_t;

static const corral__field_t source_fields[] = {
    CORRAL__F("component", corral__dec_str, event_source_t, component),
    CORRAL__F("host", corral__dec_str, event_source_t, host),
};

static void dec_source(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_event_t *e = out;
    event_source_t s = {NULL, NULL};
    CORRAL__DEC_MAP(d, v, source_fields, &s);
    e->source_component = s.component;
    e->source_host = s.host;
}

static void dec_event_type(corral__dec_t *d, const corral_val_t *v, void *out)
{
    static const char *const t[] = {"Normal", "Warning"};
    corral__dec_enum(d, v, out, t, CORRAL_ARRAY_LEN(t));
}

static const corral__field_t event_fields[] = {
    CORRAL__TOP_FIELDS,
    CORRAL__F("involvedObject", dec_objref, corral_event_t, involved),
    CORRAL__F("reason", corral__dec_str, corral_event_t, reason),
    CORRAL__F("message", corral__dec_str, corral_event_t, message),
    CORRAL__F("type", dec_event_type, corral_event_t, type),
    CORRAL__WHOLE("source", dec_source),
    CORRAL__F("firstTimestamp", corral__dec_time, corral_event_t, first_us),
    CORRAL__F("lastTimestamp", corral__dec_time, corral_event_t, last_us),
    CORRAL__F("eventTime", corral__dec_time, corral_event_t, event_us),
    CORRAL__F("count", corral__dec_int32, corral_event_t, count),
    CORRAL__F("action", corral__dec_str, corral_event_t, action),
    CORRAL__F("reportingComponent", corral__dec_str, corral_event_t, reporting_component),
    CORRAL__F("reportingInstance", corral__dec_str, corral_event_t, reporting_instance),
    CORRAL__KEEP("related"),
    CORRAL__KEEP("series"),
};

void corral__kind_event(corral__dec_t *d, const corral_val_t *root, corral_obj_t *o)
{
    corral_event_t *e = corral_arena_alloc(d->a, sizeof(*e));
    o->u.event = e;
    CORRAL__DEC_MAP(d, root, event_fields, e);
    if (!corral_val_get(root, "involvedObject"))
        corral__dec_err_field(d, root, "involvedObject", "required: the object the event is about");
    if (e->message && strlen(e->message) > 1024)
        corral__dec_warn(d, corral_val_get(root, "message"),
                         "message is %zu bytes; the API server truncates events at 1024",
                         strlen(e->message));
}

/* --- PriorityClass ------------------------------------------------------------------ */

static void dec_preempt(corral__dec_t *d, const corral_val_t *v, void *out)
{
    static const char *const p[] = {"PreemptLowerPriority", "Never"};
    corral__dec_enum(d, v, out, p, CORRAL_ARRAY_LEN(p));
}

static const corral__field_t pc_fields[] = {
    CORRAL__TOP_FIELDS,
    CORRAL__F("value", corral__dec_int32, corral_priorityclass_t, value),
    CORRAL__F("globalDefault", corral__dec_bool, corral_priorityclass_t, global_default),
    CORRAL__F("description", corral__dec_str, corral_priorityclass_t, description),
    CORRAL__F("preemptionPolicy", dec_preempt, corral_priorityclass_t, preemption_policy),
};

/* User priority classes stay at or below 1e9; above is reserved for system-*. */
#define PC_USER_MAX 1000000000

void corral__kind_priorityclass(corral__dec_t *d, const corral_val_t *root, corral_obj_t *o)
{
    corral_priorityclass_t *pc = corral_arena_alloc(d->a, sizeof(*pc));
    o->u.pc = pc;
    pc->preemption_policy = "PreemptLowerPriority";
    CORRAL__DEC_MAP(d, root, pc_fields, pc);
    const corral_val_t *v = corral_val_get(root, "value");
    if (!v)
        corral__dec_err_field(d, root, "value", "required: the priority, an integer");
    else if (pc->value > PC_USER_MAX && (!o->meta.name || strncmp(o->meta.name, "system-", 7) != 0))
        corral__dec_err_field(d, v, "value",
                              "must be at most 1000000000; larger values are reserved for "
                              "system-* priority classes");
}

/* --- Lease ---------------------------------------------------------------------------- */

static const corral__field_t lease_spec_fields[] = {
    CORRAL__F("holderIdentity", corral__dec_str, corral_lease_t, holder_identity),
    CORRAL__F("leaseDurationSeconds", corral__dec_opt_i32, corral_lease_t, lease_duration_seconds),
    CORRAL__F("acquireTime", corral__dec_time, corral_lease_t, acquire_us),
    CORRAL__F("renewTime", corral__dec_time, corral_lease_t, renew_us),
    CORRAL__F("leaseTransitions", corral__dec_int32, corral_lease_t, lease_transitions),
    CORRAL__KEEP("strategy"),
    CORRAL__KEEP("preferredHolder"),
};

static void dec_lease_spec(corral__dec_t *d, const corral_val_t *v, void *out)
{
    CORRAL__DEC_MAP(d, v, lease_spec_fields, out);
}

static const corral__field_t lease_fields[] = {
    CORRAL__TOP_FIELDS,
    CORRAL__WHOLE("spec", dec_lease_spec),
};

void corral__kind_lease(corral__dec_t *d, const corral_val_t *root, corral_obj_t *o)
{
    corral_lease_t *l = corral_arena_alloc(d->a, sizeof(*l));
    o->u.lease = l;
    CORRAL__DEC_MAP(d, root, lease_fields, l);
    if (l->lease_duration_seconds.set && l->lease_duration_seconds.v <= 0)
        corral__dec_err_field(d, corral_val_dig(root, "spec.leaseDurationSeconds"),
                              "spec.leaseDurationSeconds", "must be greater than 0");
    if (l->lease_transitions < 0)
        corral__dec_err_field(d, corral_val_dig(root, "spec.leaseTransitions"),
                              "spec.leaseTransitions", "must be greater than or equal to 0");
}

/* --- ConfigMap and Secret ----------------------------------------------------------------- */

/* Keys of data maps: [-._a-zA-Z0-9]+, at most 253 characters. */
static void check_data_keys(corral__dec_t *d, const corral_val_t *map, const char *field)
{
    if (!map || map->kind != CORRAL_VAL_MAP)
        return;
    for (size_t i = 0; i < map->n; i++) {
        const corral_val_t *k = map->pairs[i].key;
        bool ok = k->len > 0 && k->len <= 253;
        for (size_t j = 0; ok && j < k->len; j++)
            ok = isalnum((unsigned char)k->s[j]) || strchr("-._", k->s[j]);
        if (!ok || strcmp(k->s, ".") == 0 || strcmp(k->s, "..") == 0) {
            size_t m = corral__dec_enter(d, field);
            corral__dec_err_field(d, k, k->s,
                                  "a valid config key must consist of alphanumeric characters, "
                                  "'-', '_' or '.'");
            corral__dec_leave(d, m);
        }
    }
}

static void check_base64(corral__dec_t *d, const corral_val_t *map, const corral_strmap_t *m,
                         const char *field)
{
    for (size_t i = 0; i < m->n; i++) {
        const char *v = m->items[i].value;
        if (corral_base64_decode(v, strlen(v), CORRAL_B64_STD, NULL) == 0)
            continue;
        size_t mk = corral__dec_enter(d, field);
        corral__dec_err_field(d, map && i < map->n ? map->pairs[i].val : map, m->items[i].key,
                              "not valid base64; put plain text under stringData instead");
        corral__dec_leave(d, mk);
    }
}

static const corral__field_t cm_fields[] = {
    CORRAL__TOP_FIELDS,
    CORRAL__F("data", corral__dec_strmap_text, corral_configmap_t, data),
    CORRAL__F("binaryData", corral__dec_strmap, corral_configmap_t, binary_data),
    CORRAL__F("immutable", corral__dec_bool, corral_configmap_t, immutable),
};

void corral__kind_configmap(corral__dec_t *d, const corral_val_t *root, corral_obj_t *o)
{
    corral_configmap_t *cm = corral_arena_alloc(d->a, sizeof(*cm));
    o->u.cm = cm;
    CORRAL__DEC_MAP(d, root, cm_fields, cm);
    check_data_keys(d, corral_val_get(root, "data"), "data");
    check_data_keys(d, corral_val_get(root, "binaryData"), "binaryData");
    check_base64(d, corral_val_get(root, "binaryData"), &cm->binary_data, "binaryData");
    for (size_t i = 0; i < cm->data.n; i++) {
        if (corral_strmap_get(&cm->binary_data, cm->data.items[i].key))
            corral__dec_err_field(d, corral_val_get(root, "binaryData"), "binaryData",
                                  "duplicate of data key \"%s\"", cm->data.items[i].key);
    }
}

static const corral__field_t secret_fields[] = {
    CORRAL__TOP_FIELDS,
    CORRAL__F("type", corral__dec_str, corral_secret_t, type),
    CORRAL__F("data", corral__dec_strmap, corral_secret_t, data),
    CORRAL__F("stringData", corral__dec_strmap, corral_secret_t, string_data),
    CORRAL__F("immutable", corral__dec_bool, corral_secret_t, immutable),
};

void corral__kind_secret(corral__dec_t *d, const corral_val_t *root, corral_obj_t *o)
{
    corral_secret_t *s = corral_arena_alloc(d->a, sizeof(*s));
    o->u.secret = s;
    s->type = "Opaque";
    CORRAL__DEC_MAP(d, root, secret_fields, s);
    check_data_keys(d, corral_val_get(root, "data"), "data");
    check_data_keys(d, corral_val_get(root, "stringData"), "stringData");
    check_base64(d, corral_val_get(root, "data"), &s->data, "data");
}
