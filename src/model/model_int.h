/*
 * Internals of the object model: the table-driven decoder every kind uses.
 *
 * A kind describes each mapping it reads with a table of fields (name, decode
 * function, offset into the output struct). corral__dec_map walks a mapping,
 * dispatches known keys, and warns about unknown ones with a "did you mean"
 * hint drawn from the same table, so the list of known fields and the typo
 * hints can never disagree. Decoders never stop at the first error: they report
 * it with the field path and position and carry on.
 */
#ifndef CORRAL_MODEL_INT_H
#define CORRAL_MODEL_INT_H

#include <stddef.h>

#include "corral/buf.h"
#include "corral/model.h"

typedef struct corral__dec {
    corral_arena_t *a;
    corral_diag_t *diag;
    const char *file;
    corral_buf_t path; /* field path of the value being decoded */
    size_t errors;     /* errors reported by this decoder */
    int line, col;     /* fallback position: the object's start */
} corral__dec_t;

typedef void (*corral__dec_fn)(corral__dec_t *d, const corral_val_t *v, void *out);

typedef struct corral__field {
    const char *name;
    corral__dec_fn fn; /* NULL: a known upstream field kept as written, not interpreted */
    size_t off;        /* offset of the output within the struct */
} corral__field_t;

#define CORRAL__F(name, fn, type, member)                                                          \
    {                                                                                              \
        name, fn, offsetof(type, member)                                                           \
    }
/* A field whose decoder fills several members (a list and its count): the
 * function receives the whole struct. */
#define CORRAL__WHOLE(name, fn)                                                                    \
    {                                                                                              \
        name, fn, 0                                                                                \
    }
#define CORRAL__KEEP(name)                                                                         \
    {                                                                                              \
        name, NULL, 0                                                                              \
    }

void corral__dec_init(corral__dec_t *d, corral_arena_t *a, corral_diag_t *diag, const char *file);
void corral__dec_fini(corral__dec_t *d);

/* Path handling: enter returns a mark to pass to leave. */
size_t corral__dec_enter(corral__dec_t *d, const char *field);
size_t corral__dec_enter_index(corral__dec_t *d, size_t i);
void corral__dec_leave(corral__dec_t *d, size_t mark);

/* Report at v's position (or the object's when v is NULL) under the current path. */
void corral__dec_err(corral__dec_t *d, const corral_val_t *v, const char *fmt, ...)
    CORRAL_PRINTF(3, 4);
void corral__dec_warn(corral__dec_t *d, const corral_val_t *v, const char *fmt, ...)
    CORRAL_PRINTF(3, 4);
/* Report at a sub-path of the current path ("spec.weight" under the object). */
void corral__dec_err_field(corral__dec_t *d, const corral_val_t *v, const char *field,
                           const char *fmt, ...) CORRAL_PRINTF(4, 5);

/* Check v's kind; on mismatch report "expected a K, got ..." with hints. */
bool corral__dec_expect(corral__dec_t *d, const corral_val_t *v, corral_val_kind_t kind);

/* Decode mapping v into base with the field table. False when v is not a map. */
bool corral__dec_map(corral__dec_t *d, const corral_val_t *v, const corral__field_t *fields,
                     size_t nfields, void *base);
#define CORRAL__DEC_MAP(d, v, table, base)                                                         \
    corral__dec_map((d), (v), (table), CORRAL_ARRAY_LEN(table), (base))

/* Decode a list: allocates *items (n elements of elem_size) in the arena and
 * calls fn on each with the element's output slot. Null decodes as empty. */
void corral__dec_seq(corral__dec_t *d, const corral_val_t *v, size_t elem_size, corral__dec_fn fn,
                     void **items, size_t *n);

/* Primitive decoders (out points at the destination type in the comment). */
void corral__dec_str(corral__dec_t *d, const corral_val_t *v, void *out);     /* const char * */
void corral__dec_int32(corral__dec_t *d, const corral_val_t *v, void *out);   /* int32_t */
void corral__dec_int64(corral__dec_t *d, const corral_val_t *v, void *out);   /* int64_t */
void corral__dec_opt_i32(corral__dec_t *d, const corral_val_t *v, void *out); /* opt_i32 */
void corral__dec_opt_i64(corral__dec_t *d, const corral_val_t *v, void *out); /* opt_i64 */
void corral__dec_bool(corral__dec_t *d, const corral_val_t *v, void *out);    /* bool */
void corral__dec_strmap(corral__dec_t *d, const corral_val_t *v, void *out);  /* strmap */
/* The same, values free text (NUL characters allowed: ConfigMap data). */
void corral__dec_strmap_text(corral__dec_t *d, const corral_val_t *v, void *out);
void corral__dec_strlist(corral__dec_t *d, const corral_val_t *v, void *out);  /* strlist */
void corral__dec_reslist(corral__dec_t *d, const corral_val_t *v, void *out);  /* reslist */
void corral__dec_time(corral__dec_t *d, const corral_val_t *v, void *out);     /* int64 us */
void corral__dec_duration(corral__dec_t *d, const corral_val_t *v, void *out); /* int64 ns */
void corral__dec_raw(corral__dec_t *d, const corral_val_t *v, void *out);      /* const val * */
void corral__dec_conditions(corral__dec_t *d, const corral_val_t *v, void *out);
void corral__dec_label_selector(corral__dec_t *d, const corral_val_t *v, void *out); /* sel */
/* A nodeSelectorRequirement list (In, NotIn, Exists, DoesNotExist, Gt, Lt),
 * appended to the corral_selector_t at out. */
void corral__dec_node_sel_exprs(corral__dec_t *d, const corral_val_t *v, void *out);

/* A string that must be one of allowed (with a "did you mean" on a miss). */
void corral__dec_enum(corral__dec_t *d, const corral_val_t *v, const char **out,
                      const char *const *allowed, size_t n);

/* Shared sub-structures, used by several kinds. */
void corral__dec_meta(corral__dec_t *d, const corral_val_t *v, void *out);     /* meta */
void corral__dec_pod_spec(corral__dec_t *d, const corral_val_t *v, void *out); /* pod_spec */
void corral__dec_pod_template(corral__dec_t *d, const corral_val_t *v, void *out);
void corral__dec_container(corral__dec_t *d, const corral_val_t *v, void *out);   /* container */
void corral__dec_tolerations(corral__dec_t *d, const corral_val_t *v, void *out); /* tolerations */
void corral__dec_affinity(corral__dec_t *d, const corral_val_t *v, void *out); /* node_affinity */
/* A core v1 NodeSelector ({nodeSelectorTerms}) into the required terms of the
 * corral_node_affinity_t at out. */
void corral__dec_node_selector(corral__dec_t *d, const corral_val_t *v, void *out);
/* A KServe storage URI (gs://, s3://, pvc://, file://, http(s)://, hf://,
 * oci://) into the const char * at out. */
void corral__dec_storage_uri(corral__dec_t *d, const corral_val_t *v, void *out);
void corral__dec_network_topology(corral__dec_t *d, const corral_val_t *v, void *out);

/* Check metadata.name (or generateName) of a top-level object by rule: a
 * DNS-1123 subdomain (most kinds), a label (Namespace), or a path segment
 * (RBAC kinds: anything but '.', '..', '/' and '%'). */
enum { CORRAL__NAME_SUBDOMAIN = 0, CORRAL__NAME_LABEL, CORRAL__NAME_PATH_SEGMENT };
void corral__check_object_name(corral__dec_t *d, const corral_val_t *meta, const corral_meta_t *m,
                               int rule);

/* Validation helpers: NULL when valid, else a static message. */
const char *corral__dns1123_label_error(const char *s);
const char *corral__dns1123_subdomain_error(const char *s);

/* Check resource quantities of a container/pod: whole GPUs, gpu-milli range,
 * non-negative amounts. v is the mapping the list came from (for positions). */
void corral__check_resources(corral__dec_t *d, const corral_val_t *v, const corral_reslist_t *l);

/* Per-kind decoders: fill o->u from the object's top-level mapping. */
typedef void (*corral__kind_fn)(corral__dec_t *d, const corral_val_t *root, corral_obj_t *o);

void corral__kind_namespace(corral__dec_t *d, const corral_val_t *root, corral_obj_t *o);
void corral__kind_node(corral__dec_t *d, const corral_val_t *root, corral_obj_t *o);
void corral__kind_pod(corral__dec_t *d, const corral_val_t *root, corral_obj_t *o);
void corral__kind_event(corral__dec_t *d, const corral_val_t *root, corral_obj_t *o);
void corral__kind_priorityclass(corral__dec_t *d, const corral_val_t *root, corral_obj_t *o);
void corral__kind_lease(corral__dec_t *d, const corral_val_t *root, corral_obj_t *o);
void corral__kind_configmap(corral__dec_t *d, const corral_val_t *root, corral_obj_t *o);
void corral__kind_secret(corral__dec_t *d, const corral_val_t *root, corral_obj_t *o);
void corral__kind_queue(corral__dec_t *d, const corral_val_t *root, corral_obj_t *o);
void corral__kind_podgroup(corral__dec_t *d, const corral_val_t *root, corral_obj_t *o);
void corral__kind_vcjob(corral__dec_t *d, const corral_val_t *root, corral_obj_t *o);
void corral__kind_hypernode(corral__dec_t *d, const corral_val_t *root, corral_obj_t *o);
void corral__kind_isvc(corral__dec_t *d, const corral_val_t *root, corral_obj_t *o);
void corral__kind_scenario(corral__dec_t *d, const corral_val_t *root, corral_obj_t *o);
void corral__kind_role(corral__dec_t *d, const corral_val_t *root, corral_obj_t *o);
void corral__kind_role_binding(corral__dec_t *d, const corral_val_t *root, corral_obj_t *o);
void corral__kind_schedconf(corral__dec_t *d, const corral_val_t *root, corral_obj_t *o);
void corral__kind_service_account(corral__dec_t *d, const corral_val_t *root, corral_obj_t *o);
void corral__kind_service(corral__dec_t *d, const corral_val_t *root, corral_obj_t *o);
void corral__kind_endpoints(corral__dec_t *d, const corral_val_t *root, corral_obj_t *o);
void corral__kind_resource_quota(corral__dec_t *d, const corral_val_t *root, corral_obj_t *o);
void corral__kind_limit_range(corral__dec_t *d, const corral_val_t *root, corral_obj_t *o);
void corral__kind_usage(corral__dec_t *d, const corral_val_t *root, corral_obj_t *o);
void corral__kind_serving_runtime(corral__dec_t *d, const corral_val_t *root, corral_obj_t *o);
void corral__kind_local_model_cache(corral__dec_t *d, const corral_val_t *root, corral_obj_t *o);
void corral__kind_local_model_node_group(corral__dec_t *d, const corral_val_t *root,
                                         corral_obj_t *o);
void corral__kind_local_model_node(corral__dec_t *d, const corral_val_t *root, corral_obj_t *o);
void corral__kind_controller_revision(corral__dec_t *d, const corral_val_t *root, corral_obj_t *o);
void corral__kind_deployment(corral__dec_t *d, const corral_val_t *root, corral_obj_t *o);
void corral__kind_daemonset(corral__dec_t *d, const corral_val_t *root, corral_obj_t *o);
void corral__kind_crd(corral__dec_t *d, const corral_val_t *root, corral_obj_t *o);

/* Top-level fields every kind shares (apiVersion, kind, metadata), to splice
 * into a kind's own top-level table. */
#define CORRAL__TOP_FIELDS                                                                         \
    CORRAL__KEEP("apiVersion"), CORRAL__KEEP("kind"), CORRAL__KEEP("metadata")

#endif
