/*
 * The OpenAPI documents: GET /openapi/v2 (JSON, or gnostic's protobuf
 * openapi_v2.Document when the Accept header asks for protobuf, as kubectl
 * 1.20 and client-go's validation do) and GET /openapi/v3 (an index of
 * group-versions) with one document per group-version under
 * /openapi/v3/api/v1 and /openapi/v3/apis/<group>/<version> (kubectl 1.32's
 * `explain`).
 *
 * Definitions come from the field schema tables (include/corral/schema.h):
 * objects with properties, items, additionalProperties for maps, $refs
 * between messages, int32/int64/date-time/byte formats, Quantity and
 * IntOrString as kube renders them, `x-kubernetes-preserve-unknown-fields`
 * where a field holds any value, and `x-kubernetes-group-version-kind` on
 * each served kind. A served kind without a schema stays an "arbitrary"
 * definition (no type, no properties), which any object validates against;
 * so does a message a table names that no table defines (an open object).
 *
 * The documents are built once per server, by the first request for one,
 * as value trees written to JSON (and the v2 tree also to protobuf, with a
 * few lines of wire-format encoding), and served from those bytes with an
 * ETag; the v3 documents are addressed by their hash, as kube-apiserver
 * does.
 */
#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>

#include "apiserver/apiserver_int.h"
#include "corral/schema.h"

/* What clients ask for is "...spec.v2@v1.0+protobuf", but '@' is not valid
 * in a media type and Go's mime parser (client-go) refuses it in a
 * response: kube-openapi answers with this spelling. */
#define PB_MIME "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"

#define HASH_LEN 129 /* SHA-512 in upper-case hex, as kube-openapi's ETags */

typedef struct gv_doc {
    char path[192]; /* "api/v1", "apis/batch.volcano.sh/v1alpha1" */
    char hash[HASH_LEN];
    corral_buf_t json;
} gv_doc_t;

struct corral__openapi {
    pthread_mutex_t mu; /* held while the documents are built */
    bool built;
    corral_buf_t v2_json, v2_pb;
    char v2_hash[HASH_LEN];
    corral_buf_t v3_index;
    gv_doc_t *gvs;
    size_t ngvs;
};

/* --- names ------------------------------------------------------------------------------ */

/* The definition of a kind without a schema: "io.k8s.api.core.v1.Pod",
 * "io.k8s.api.rbac.v1.Role", "sh.volcano.scheduling.v1beta1.Queue" (CRDs:
 * the group reversed). */
static void definition_name(const corral_kind_info_t *k, char *out, size_t len)
{
    const char *g = k->group;
    size_t gl = strlen(g);
    if (gl == 0) {
        snprintf(out, len, "io.k8s.api.core.%s.%s", k->version, k->name);
        return;
    }
    if (gl > 7 && strcmp(g + gl - 7, ".k8s.io") == 0) {
        const char *dot = strchr(g, '.');
        snprintf(out, len, "io.k8s.api.%.*s.%s.%s", (int)(dot - g), g, k->version, k->name);
        return;
    }
    size_t o = 0;
    out[0] = '\0';
    for (size_t end = gl; end > 0 && o < len;) {
        size_t start = end;
        while (start > 0 && g[start - 1] != '.')
            start--;
        o += (size_t)snprintf(out + o, len - o, "%.*s.", (int)(end - start), g + start);
        end = start ? start - 1 : 0;
    }
    if (o < len)
        snprintf(out + o, len - o, "%s.%s", k->version, k->name);
}

static void hash_hex(const corral_buf_t *b, char out[HASH_LEN])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    out[0] = '\0';
    if (!EVP_Digest(b->p ? b->p : "", b->len, md, &n, EVP_sha512(), NULL))
        return;
    for (size_t i = 0; i < n && 2 * i + 2 < HASH_LEN; i++)
        snprintf(out + 2 * i, 3, "%02X", md[i]);
}

/* --- schemas as value trees --------------------------------------------------------------- */

typedef struct gen {
    corral_arena_t *a;
    bool v3;
    corral_val_t *defs; /* definition name -> schema */
} gen_t;

static corral_val_t *new_map(gen_t *g)
{
    return corral_val_new(g->a, CORRAL_VAL_MAP);
}

static void put_str(gen_t *g, corral_val_t *m, const char *key, const char *s)
{
    corral_val_set(g->a, m, key, corral_val_new_str(g->a, s));
}

static void put_true(gen_t *g, corral_val_t *m, const char *key)
{
    corral_val_set(g->a, m, key, corral_val_new_bool(g->a, true));
}

static corral_val_t *typed(gen_t *g, const char *type, const char *format)
{
    corral_val_t *m = new_map(g);
    put_str(g, m, "type", type);
    if (format)
        put_str(g, m, "format", format);
    return m;
}

/* An object of any fields (a message no table defines, RawExtension). */
static corral_val_t *open_object(gen_t *g)
{
    corral_val_t *m = typed(g, "object", NULL);
    put_true(g, m, "x-kubernetes-preserve-unknown-fields");
    return m;
}

/* apimachinery's types with their own OpenAPI form, as kube renders them:
 * definitions that fields refer to (so that explain names them). */
enum { BI_QUANTITY, BI_INTSTR, BI_TIME, BI_MICROTIME, BI_RAW, BI_FIELDSV1 };

static const struct builtin {
    const char *name;
    const char *type, *format; /* v2 (and v3 unless one_of) */
    const char *one_of[2];     /* v3: oneOf these types */
    const char *doc;
} builtins[] = {
    [BI_QUANTITY] = {"io.k8s.apimachinery.pkg.api.resource.Quantity",
                     "string",
                     NULL,
                     {"string", "number"},
                     "A fixed-point number with a suffix (`100m`, `2Gi`, `8`): a string or a "
                     "number in JSON."},
    [BI_INTSTR] = {"io.k8s.apimachinery.pkg.util.intstr.IntOrString",
                   "string",
                   "int-or-string",
                   {"integer", "string"},
                   "An integer or a string (a port number or name, a count or a percentage)."},
    [BI_TIME] = {"io.k8s.apimachinery.pkg.apis.meta.v1.Time",
                 "string",
                 "date-time",
                 {NULL, NULL},
                 "A time in RFC 3339 form, to the second."},
    [BI_MICROTIME] = {"io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime",
                      "string",
                      "date-time",
                      {NULL, NULL},
                      "A time in RFC 3339 form, to the microsecond."},
    [BI_RAW] = {"io.k8s.apimachinery.pkg.runtime.RawExtension",
                "object",
                NULL,
                {NULL, NULL},
                "An embedded object of any kind."},
    [BI_FIELDSV1] = {"io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1",
                     "object",
                     NULL,
                     {NULL, NULL},
                     "A set of fields (managedFields), in FieldsV1 form."},
};

static corral_val_t *ref_to(gen_t *g, const char *name)
{
    corral_val_t *r = new_map(g);
    const char *where = g->v3 ? "components/schemas" : "definitions";
    put_str(g, r, "$ref", corral_arena_printf(g->a, "#/%s/%s", where, name));
    return r;
}

static corral_val_t *builtin_ref(gen_t *g, int which)
{
    const struct builtin *b = &builtins[which];
    if (!corral_val_get(g->defs, b->name)) {
        corral_val_t *d = new_map(g);
        put_str(g, d, "description", b->doc);
        if (g->v3 && b->one_of[0]) {
            corral_val_t *alts = corral_val_new(g->a, CORRAL_VAL_SEQ);
            for (size_t i = 0; i < 2; i++)
                corral_val_push(g->a, alts, typed(g, b->one_of[i], NULL));
            if (b->format)
                put_str(g, d, "format", b->format);
            corral_val_set(g->a, d, "oneOf", alts);
        } else {
            put_str(g, d, "type", b->type);
            if (b->format)
                put_str(g, d, "format", b->format);
        }
        if (g->v3 && which == BI_RAW)
            put_true(g, d, "x-kubernetes-preserve-unknown-fields");
        corral_val_set(g->a, g->defs, b->name, d);
    }
    return ref_to(g, b->name);
}

static void add_def(gen_t *g, const corral_schema_msg_t *m);

static corral_val_t *msg_ref(gen_t *g, const corral_schema_msg_t *msg)
{
    const corral_schema_msg_t *m = corral_schema_resolve(msg);
    if (!m)
        return open_object(g);
    add_def(g, m);
    return ref_to(g, m->name);
}

/* The schema of one value of type t. */
static corral_val_t *type_schema(gen_t *g, int t, const corral_schema_msg_t *msg)
{
    switch (t) {
    case CORRAL_SCHEMA_BOOL:
        return typed(g, "boolean", NULL);
    case CORRAL_SCHEMA_INT32:
        return typed(g, "integer", "int32");
    case CORRAL_SCHEMA_INT64:
        return typed(g, "integer", "int64");
    case CORRAL_SCHEMA_DOUBLE:
        return typed(g, "number", "double");
    case CORRAL_SCHEMA_BYTES:
        return typed(g, "string", "byte");
    case CORRAL_SCHEMA_MSG:
        return msg_ref(g, msg);
    case CORRAL_SCHEMA_TIME:
        return builtin_ref(g, BI_TIME);
    case CORRAL_SCHEMA_MICROTIME:
        return builtin_ref(g, BI_MICROTIME);
    case CORRAL_SCHEMA_QUANTITY:
        return builtin_ref(g, BI_QUANTITY);
    case CORRAL_SCHEMA_INTORSTRING:
        return builtin_ref(g, BI_INTSTR);
    case CORRAL_SCHEMA_RAW:
        return builtin_ref(g, BI_RAW);
    case CORRAL_SCHEMA_FIELDSV1:
        return builtin_ref(g, BI_FIELDSV1);
    case CORRAL_SCHEMA_ANY:
    case CORRAL_SCHEMA_JSON: {
        corral_val_t *m = new_map(g);
        put_true(g, m, "x-kubernetes-preserve-unknown-fields");
        return m;
    }
    default: /* STRING, DURATION */
        return typed(g, "string", NULL);
    }
}

static corral_val_t *field_schema(gen_t *g, const corral_schema_field_t *f)
{
    corral_val_t *s = type_schema(g, f->type, f->msg);
    if (f->flags & CORRAL_SCHEMA_REPEATED) {
        corral_val_t *arr = typed(g, "array", NULL);
        corral_val_set(g->a, arr, "items", s);
        s = arr;
    }
    if (f->flags & CORRAL_SCHEMA_MAP) { /* with REPEATED: a map of lists */
        corral_val_t *map = typed(g, "object", NULL);
        corral_val_set(g->a, map, "additionalProperties", s);
        s = map;
    }
    if (!f->doc)
        return s;
    if (g->v3 && corral_val_get(s, "$ref")) {
        /* v3 allows no siblings next to $ref: kube wraps it. */
        corral_val_t *w = new_map(g);
        corral_val_t *all = corral_val_new(g->a, CORRAL_VAL_SEQ);
        corral_val_push(g->a, all, s);
        corral_val_set(g->a, w, "allOf", all);
        s = w;
    }
    put_str(g, s, "description", f->doc);
    return s;
}

/* m's fields as properties (and required names) of props; an embedded
 * message (INLINE, Go's json:",inline") puts its fields there too. */
static void add_props(gen_t *g, const corral_schema_msg_t *m, corral_val_t *props,
                      corral_val_t *req, int depth)
{
    for (size_t i = 0; m && depth < 8 && i < m->nfields; i++) {
        const corral_schema_field_t *f = &m->fields[i];
        if (f->flags & CORRAL_SCHEMA_INLINE) {
            add_props(g, corral_schema_resolve(f->msg), props, req, depth + 1);
            continue;
        }
        corral_val_set(g->a, props, f->name, field_schema(g, f));
        if (f->flags & CORRAL_SCHEMA_REQUIRED)
            corral_val_push(g->a, req, corral_val_new_str(g->a, f->name));
    }
}

/* The definition of m (and, through its fields, of what it refers to). */
static void add_def(gen_t *g, const corral_schema_msg_t *m)
{
    if (corral_val_get(g->defs, m->name))
        return;
    corral_val_t *d = new_map(g);
    corral_val_set(g->a, g->defs, m->name, d); /* first: messages may refer to themselves */
    if (m->doc)
        put_str(g, d, "description", m->doc);
    put_str(g, d, "type", "object");
    if (!m->nfields)
        return;
    corral_val_t *props = new_map(g);
    corral_val_t *req = corral_val_new(g->a, CORRAL_VAL_SEQ);
    add_props(g, m, props, req, 0);
    corral_val_set(g->a, d, "properties", props);
    if (req->n)
        corral_val_set(g->a, d, "required", req);
}

/* The definition of served kind k, with its group-version-kind added. */
static void add_kind(gen_t *g, const corral_kind_info_t *k)
{
    const corral_schema_msg_t *m = corral_schema_for(k->api_version, k->name);
    corral_val_t *d;
    if (m) {
        add_def(g, m);
        d = corral_val_get(g->defs, m->name);
    } else {
        char name[256];
        definition_name(k, name, sizeof(name));
        d = corral_val_get(g->defs, name);
        if (!d) {
            d = new_map(g);
            put_str(g, d, "description",
                    corral_arena_printf(g->a, "%s (%s), validated by the server", k->name,
                                        k->api_version));
            corral_val_set(g->a, g->defs, name, d);
        }
    }
    /* The protobuf messages leave out TypeMeta; OpenAPI names it. */
    corral_val_t *props = corral_val_get(d, "properties");
    if (props && !corral_val_get(props, "apiVersion")) {
        corral_val_t *av = typed(g, "string", NULL);
        put_str(g, av, "description",
                "APIVersion defines the versioned schema of this representation of an object.");
        corral_val_set(g->a, props, "apiVersion", av);
    }
    if (props && !corral_val_get(props, "kind")) {
        corral_val_t *kd = typed(g, "string", NULL);
        put_str(g, kd, "description",
                "Kind is a string value representing the REST resource this object represents.");
        corral_val_set(g->a, props, "kind", kd);
    }
    corral_val_t *gvks = corral_val_get(d, "x-kubernetes-group-version-kind");
    if (!gvks) {
        gvks = corral_val_new(g->a, CORRAL_VAL_SEQ);
        corral_val_set(g->a, d, "x-kubernetes-group-version-kind", gvks);
    }
    corral_val_t *gvk = new_map(g);
    put_str(g, gvk, "group", k->group);
    put_str(g, gvk, "kind", k->name);
    put_str(g, gvk, "version", k->version);
    corral_val_push(g->a, gvks, gvk);
}

static corral_val_t *info(gen_t *g)
{
    corral_val_t *i = new_map(g);
    put_str(g, i, "title", "Kubernetes");
    put_str(g, i, "version", CORRAL__GIT_VERSION);
    return i;
}

/* --- protobuf wire format (gnostic's openapi_v2 messages) ---------------------------------- */

static void pb_varint(corral_buf_t *b, uint64_t v)
{
    while (v >= 0x80) {
        corral_buf_putc(b, (char)((v & 0x7f) | 0x80));
        v >>= 7;
    }
    corral_buf_putc(b, (char)v);
}

/* A length-delimited field (string, bytes or embedded message). */
static void pb_bytes(corral_buf_t *b, unsigned field, const char *p, size_t n)
{
    pb_varint(b, ((uint64_t)field << 3) | 2);
    pb_varint(b, n);
    corral_buf_append(b, p, n);
}

static void pb_str(corral_buf_t *b, unsigned field, const char *s)
{
    pb_bytes(b, field, s, strlen(s));
}

static void pb_msg(corral_buf_t *b, unsigned field, const corral_buf_t *m)
{
    pb_bytes(b, field, m->p ? m->p : "", m->len);
}

static void pb_schema(corral_buf_t *out, const corral_val_t *s);

/* A message holding one embedded Schema in field inner (ItemsItem,
 * AdditionalPropertiesItem), put as field outer of out. */
static void pb_wrapped_schema(corral_buf_t *out, unsigned outer, unsigned inner,
                              const corral_val_t *s)
{
    corral_buf_t schema, wrap;
    corral_buf_init(&schema);
    corral_buf_init(&wrap);
    pb_schema(&schema, s);
    pb_msg(&wrap, inner, &schema);
    pb_msg(out, outer, &wrap);
    corral_buf_fini(&schema);
    corral_buf_fini(&wrap);
}

/* NamedSchema { name = 1, value = 2 } entries of a map of schemas, each
 * as field `field` of out (Properties, Definitions). */
static void pb_named_schemas(corral_buf_t *out, unsigned field, const corral_val_t *m)
{
    corral_buf_t schema, named;
    corral_buf_init(&schema);
    corral_buf_init(&named);
    for (size_t i = 0; m && i < m->n; i++) {
        corral_buf_reset(&schema);
        corral_buf_reset(&named);
        pb_schema(&schema, m->pairs[i].val);
        pb_str(&named, 1, m->pairs[i].key->s);
        pb_msg(&named, 2, &schema);
        pb_msg(out, field, &named);
    }
    corral_buf_fini(&schema);
    corral_buf_fini(&named);
}

/* NamedAny { name, Any { yaml } }: the value as JSON, which is YAML too;
 * field: the vendor_extension field of the enclosing message. */
static void pb_extension(corral_buf_t *out, unsigned field, const char *name, const corral_val_t *v)
{
    corral_buf_t json, any, named;
    corral_buf_init(&json);
    corral_buf_init(&any);
    corral_buf_init(&named);
    corral_val_to_json(v, &json, false);
    corral_buf_putc(&json, '\n');
    pb_msg(&any, 2, &json);
    pb_str(&named, 1, name);
    pb_msg(&named, 2, &any);
    pb_msg(out, field, &named);
    corral_buf_fini(&json);
    corral_buf_fini(&any);
    corral_buf_fini(&named);
}

/* openapi_v2.Schema from a v2 schema tree. */
static void pb_schema(corral_buf_t *out, const corral_val_t *s)
{
    for (size_t i = 0; s && s->kind == CORRAL_VAL_MAP && i < s->n; i++) {
        const char *k = s->pairs[i].key->s;
        const corral_val_t *v = s->pairs[i].val;
        if (strcmp(k, "$ref") == 0) {
            pb_str(out, 1, v->s);
        } else if (strcmp(k, "format") == 0) {
            pb_str(out, 2, v->s);
        } else if (strcmp(k, "description") == 0) {
            pb_str(out, 4, v->s);
        } else if (strcmp(k, "required") == 0) {
            for (size_t j = 0; j < v->n; j++)
                pb_str(out, 19, v->items[j]->s);
        } else if (strcmp(k, "additionalProperties") == 0) {
            pb_wrapped_schema(out, 21, 1, v);
        } else if (strcmp(k, "type") == 0) {
            corral_buf_t t;
            corral_buf_init(&t);
            pb_str(&t, 1, v->s); /* TypeItem.value */
            pb_msg(out, 22, &t);
            corral_buf_fini(&t);
        } else if (strcmp(k, "items") == 0) {
            pb_wrapped_schema(out, 23, 1, v);
        } else if (strcmp(k, "properties") == 0) {
            corral_buf_t props;
            corral_buf_init(&props);
            pb_named_schemas(&props, 1, v);
            pb_msg(out, 25, &props);
            corral_buf_fini(&props);
        } else if (strncmp(k, "x-", 2) == 0) {
            pb_extension(out, 31, k, v); /* Schema.vendor_extension */
        }
    }
}

static void pb_varint_field(corral_buf_t *b, unsigned field, uint64_t v)
{
    pb_varint(b, (uint64_t)field << 3);
    pb_varint(b, v);
}

/* ParametersItem { Parameter { NonBodyParameter { QueryParameterSubSchema
 * {in, name, type, unique_items} } } } of a v2 query parameter tree. */
static void pb_query_param(corral_buf_t *out, const corral_val_t *p)
{
    corral_buf_t q, nb, par, item;
    corral_buf_init(&q);
    corral_buf_init(&nb);
    corral_buf_init(&par);
    corral_buf_init(&item);
    pb_str(&q, 2, "query");
    pb_str(&q, 4, corral_val_get_str(p, "name"));
    pb_str(&q, 6, "string");
    pb_varint_field(&q, 20, 1);
    pb_msg(&nb, 3, &q);
    pb_msg(&par, 2, &nb);
    pb_msg(&item, 1, &par);
    pb_msg(out, 8, &item); /* Operation.parameters */
    corral_buf_fini(&q);
    corral_buf_fini(&nb);
    corral_buf_fini(&par);
    corral_buf_fini(&item);
}

/* openapi_v2.Operation from an operation tree (operation()). */
static void pb_operation(corral_buf_t *out, const corral_val_t *op)
{
    pb_str(out, 3, corral_val_get_str(op, "description"));
    pb_str(out, 5, corral_val_get_str(op, "operationId"));
    const corral_val_t *params = corral_val_get(op, "parameters");
    for (size_t i = 0; params && i < params->n; i++)
        pb_query_param(out, params->items[i]);
    corral_buf_t resp, rv, named, codes;
    corral_buf_init(&resp);
    corral_buf_init(&rv);
    corral_buf_init(&named);
    corral_buf_init(&codes);
    pb_str(&resp, 1, "OK");   /* Response.description */
    pb_msg(&rv, 1, &resp);    /* ResponseValue.response */
    pb_str(&named, 1, "200"); /* NamedResponseValue */
    pb_msg(&named, 2, &rv);
    pb_msg(&codes, 1, &named); /* Responses.response_code */
    pb_msg(out, 9, &codes);
    corral_buf_fini(&resp);
    corral_buf_fini(&rv);
    corral_buf_fini(&named);
    corral_buf_fini(&codes);
    for (size_t i = 0; i < op->n; i++) {
        const char *k = op->pairs[i].key->s;
        if (strncmp(k, "x-", 2) == 0) { /* Operation.vendor_extension (13) */
            pb_extension(out, 13, k, op->pairs[i].val);
        }
    }
}

/* Paths { NamedPathItem { name, PathItem { get = 2, patch = 8 } } }. */
static void pb_paths(corral_buf_t *out, const corral_val_t *paths)
{
    corral_buf_t item, named, op;
    corral_buf_init(&item);
    corral_buf_init(&named);
    corral_buf_init(&op);
    for (size_t i = 0; paths && i < paths->n; i++) {
        corral_buf_reset(&item);
        corral_buf_reset(&named);
        const corral_val_t *pi = paths->pairs[i].val;
        static const struct {
            const char *method;
            unsigned field;
        } methods[] = {{"get", 2}, {"patch", 8}};
        for (size_t m = 0; m < CORRAL_ARRAY_LEN(methods); m++) {
            const corral_val_t *o = corral_val_get(pi, methods[m].method);
            if (!o)
                continue;
            corral_buf_reset(&op);
            pb_operation(&op, o);
            pb_msg(&item, methods[m].field, &op);
        }
        pb_str(&named, 1, paths->pairs[i].key->s);
        pb_msg(&named, 2, &item);
        pb_msg(out, 2, &named); /* Paths.path */
    }
    corral_buf_fini(&item);
    corral_buf_fini(&named);
    corral_buf_fini(&op);
}

static void pb_document(corral_buf_t *out, const corral_val_t *defs, const corral_val_t *paths)
{
    corral_buf_t info_b, defs_b, paths_b;
    corral_buf_init(&info_b);
    corral_buf_init(&defs_b);
    corral_buf_init(&paths_b);
    pb_str(&info_b, 1, "Kubernetes");        /* Info.title */
    pb_str(&info_b, 2, CORRAL__GIT_VERSION); /* Info.version */
    pb_named_schemas(&defs_b, 1, defs);      /* Definitions.additional_properties */
    pb_paths(&paths_b, paths);
    pb_str(out, 1, "2.0");    /* Document.swagger */
    pb_msg(out, 2, &info_b);  /* Document.info */
    pb_msg(out, 8, &paths_b); /* Document.paths */
    pb_msg(out, 9, &defs_b);  /* Document.definitions */
    corral_buf_fini(&info_b);
    corral_buf_fini(&defs_b);
    corral_buf_fini(&paths_b);
}

/* --- the documents -------------------------------------------------------------------------- */

static void add_paths(gen_t *g, corral_val_t *paths, const corral_kind_info_t *k);

static void build_v2(corral__openapi_t *o)
{
    gen_t g = {corral_arena_new(), false, NULL};
    g.defs = new_map(&g);
    for (size_t i = 0, n = corral_schema_count(); i < n; i++)
        add_def(&g, corral_schema_at(i));
    size_t nres;
    const corral__res_t *all = corral__res_all(&nres);
    corral_val_t *paths = new_map(&g);
    for (size_t i = 0; i < nres; i++) {
        add_kind(&g, all[i].info);
        add_paths(&g, paths, all[i].info);
    }
    corral_val_t *doc = new_map(&g);
    put_str(&g, doc, "swagger", "2.0");
    corral_val_set(g.a, doc, "info", info(&g));
    corral_val_set(g.a, doc, "paths", paths);
    corral_val_set(g.a, doc, "definitions", g.defs);
    corral_val_to_json(doc, &o->v2_json, false);
    pb_document(&o->v2_pb, g.defs, paths);
    hash_hex(&o->v2_json, o->v2_hash);
    corral_arena_free(g.a);
}

/* An operation on kind k: action ("list", "get", "patch"), what it does,
 * and its query parameters (NULL-terminated names; may be NULL). */
static corral_val_t *operation(gen_t *g, const corral_kind_info_t *k, const char *action,
                               const char *what, const char *const *params)
{
    corral_val_t *op = new_map(g);
    put_str(g, op, "description", corral_arena_printf(g->a, "%s %s", what, k->name));
    put_str(g, op, "operationId",
            corral_arena_printf(g->a, "%c%s%s", action[0] - 'a' + 'A', action + 1, k->name));
    corral_val_t *list = corral_val_new(g->a, CORRAL_VAL_SEQ);
    for (size_t i = 0; params && params[i]; i++) {
        corral_val_t *p = new_map(g);
        put_str(g, p, "name", params[i]);
        put_str(g, p, "in", "query");
        if (g->v3) {
            corral_val_set(g->a, p, "schema", typed(g, "string", NULL));
        } else {
            put_str(g, p, "type", "string");
            put_true(g, p, "uniqueItems");
        }
        corral_val_push(g->a, list, p);
    }
    if (list->n)
        corral_val_set(g->a, op, "parameters", list);
    corral_val_t *ok = new_map(g);
    put_str(g, ok, "description", "OK");
    corral_val_t *responses = new_map(g);
    corral_val_set(g->a, responses, "200", ok);
    corral_val_set(g->a, op, "responses", responses);
    put_str(g, op, "x-kubernetes-action", action);
    corral_val_t *gvk = new_map(g);
    put_str(g, gvk, "group", k->group);
    put_str(g, gvk, "kind", k->name);
    put_str(g, gvk, "version", k->version);
    corral_val_set(g->a, op, "x-kubernetes-group-version-kind", gvk);
    return op;
}

/* Kind k's list and object paths, with operations naming its kind: how
 * kubectl explain finds the kind of a resource, and how kubectl 1.27+
 * learns that the server takes `fieldValidation` (then it leaves unknown
 * fields to the server's strict decoding instead of validating against
 * /openapi/v2 itself). Only these operations are described. */
static void add_paths(gen_t *g, corral_val_t *paths, const corral_kind_info_t *k)
{
    static const char *const patch_params[] = {"dryRun", "fieldManager", "fieldValidation", "force",
                                               NULL};
    const char *list =
        corral_arena_printf(g->a, "/%s%s/%s%s/%s", *k->group ? "apis/" : "api", k->group,
                            k->version, k->namespaced ? "/namespaces/{namespace}" : "", k->plural);
    corral_val_t *item = new_map(g);
    corral_val_set(g->a, item, "get",
                   operation(g, k, "list", "list or watch objects of kind", NULL));
    corral_val_set(g->a, paths, list, item);
    item = new_map(g);
    corral_val_set(g->a, item, "get", operation(g, k, "get", "read the specified", NULL));
    corral_val_set(g->a, item, "patch",
                   operation(g, k, "patch", "partially update the specified", patch_params));
    corral_val_set(g->a, paths, corral_arena_printf(g->a, "%s/{name}", list), item);
}

/* The v3 document of one group-version: its kinds and what they refer to. */
static void build_gv(gv_doc_t *d, const char *group, const char *version)
{
    gen_t g = {corral_arena_new(), true, NULL};
    g.defs = new_map(&g);
    corral_val_t *paths = new_map(&g);
    size_t nres;
    const corral__res_t *all = corral__res_all(&nres);
    for (size_t i = 0; i < nres; i++) {
        if (strcmp(all[i].info->group, group) != 0 || strcmp(all[i].info->version, version) != 0)
            continue;
        add_kind(&g, all[i].info);
        add_paths(&g, paths, all[i].info);
    }
    corral_val_t *doc = new_map(&g);
    put_str(&g, doc, "openapi", "3.0.0");
    corral_val_set(g.a, doc, "info", info(&g));
    corral_val_set(g.a, doc, "paths", paths);
    corral_val_t *comp = new_map(&g);
    corral_val_set(g.a, comp, "schemas", g.defs);
    corral_val_set(g.a, doc, "components", comp);
    corral_buf_init(&d->json);
    corral_val_to_json(doc, &d->json, false);
    hash_hex(&d->json, d->hash);
    corral_arena_free(g.a);
}

static void build_v3(corral__openapi_t *o)
{
    size_t nres;
    const corral__res_t *all = corral__res_all(&nres);
    o->gvs = corral_calloc(nres ? nres : 1, sizeof(*o->gvs));
    corral_buf_puts(&o->v3_index, "{\"paths\":{");
    for (size_t i = 0; i < nres; i++) {
        const corral_kind_info_t *k = all[i].info;
        char path[192];
        if (*k->group)
            snprintf(path, sizeof(path), "apis/%s/%s", k->group, k->version);
        else
            snprintf(path, sizeof(path), "api/%s", k->version);
        bool seen = false;
        for (size_t j = 0; j < o->ngvs && !seen; j++)
            seen = strcmp(o->gvs[j].path, path) == 0;
        if (seen)
            continue;
        gv_doc_t *d = &o->gvs[o->ngvs];
        snprintf(d->path, sizeof(d->path), "%s", path);
        build_gv(d, k->group, k->version);
        corral_buf_printf(&o->v3_index,
                          "%s\"%s\":{\"serverRelativeURL\":\"/openapi/v3/%s?hash=%s\"}",
                          o->ngvs ? "," : "", path, path, d->hash);
        o->ngvs++;
    }
    corral_buf_puts(&o->v3_index, "}}");
}

corral__openapi_t *corral__openapi_new(void)
{
    corral__openapi_t *o = corral_calloc(1, sizeof(*o));
    pthread_mutex_init(&o->mu, NULL);
    corral_buf_init(&o->v2_json);
    corral_buf_init(&o->v2_pb);
    corral_buf_init(&o->v3_index);
    return o;
}

/* The documents, built by the first request that asks (tens of
 * milliseconds, once per server; never again: they depend only on the
 * constant tables). */
static const corral__openapi_t *docs(corral__req_t *r)
{
    corral__openapi_t *o = r->srv->openapi;
    pthread_mutex_lock(&o->mu);
    if (!o->built) {
        build_v2(o);
        build_v3(o);
        o->built = true;
    }
    pthread_mutex_unlock(&o->mu);
    return o;
}

void corral__openapi_free(corral__openapi_t *o)
{
    if (!o)
        return;
    corral_buf_fini(&o->v2_json);
    corral_buf_fini(&o->v2_pb);
    corral_buf_fini(&o->v3_index);
    for (size_t i = 0; i < o->ngvs; i++)
        corral_buf_fini(&o->gvs[i].json);
    corral_free(o->gvs);
    pthread_mutex_destroy(&o->mu);
    corral_free(o);
}

/* --- handlers --------------------------------------------------------------------------------- */

static bool header_has(corral__req_t *r, const char *name, const char *what)
{
    size_t len = 0, wl = strlen(what);
    const char *h = corral_http_header(r->http, name, &len);
    for (size_t i = 0; h && i + wl <= len; i++) {
        if (memcmp(h + i, what, wl) == 0)
            return true;
    }
    return false;
}

/* Reply with a cached document: its ETag, and 304 when the client has it. */
static void reply_doc(corral__req_t *r, const char *ctype, const corral_buf_t *b, const char *hash)
{
    char etag[HASH_LEN + 4];
    snprintf(etag, sizeof(etag), "\"%s\"", hash);
    corral_buf_printf(&r->headers, "ETag: %s\r\n", etag);
    if (header_has(r, "if-none-match", etag)) {
        corral__reply(r, 304, NULL, NULL, 0);
        return;
    }
    corral__reply(r, 200, ctype, b->p ? b->p : "", b->len);
}

void corral__h_openapi(corral__req_t *r)
{
    const corral__openapi_t *o = docs(r);
    if (header_has(r, "accept", "protobuf")) {
        char hash[HASH_LEN + 3];
        snprintf(hash, sizeof(hash), "%.*s-pb", HASH_LEN - 1, o->v2_hash);
        reply_doc(r, PB_MIME, &o->v2_pb, hash);
        return;
    }
    reply_doc(r, "application/json", &o->v2_json, o->v2_hash);
}

void corral__h_openapi_v3(corral__req_t *r)
{
    const corral__openapi_t *o = docs(r);
    corral__reply(r, 200, "application/json", o->v3_index.p, o->v3_index.len);
}

void corral__h_openapi_v3_gv(corral__req_t *r)
{
    const corral__openapi_t *o = docs(r);
    char path[192];
    if (*r->group)
        snprintf(path, sizeof(path), "apis/%s/%s", r->group, r->version);
    else
        snprintf(path, sizeof(path), "api/%s", r->version);
    for (size_t i = 0; i < o->ngvs; i++) {
        const gv_doc_t *d = &o->gvs[i];
        if (strcmp(d->path, path) != 0)
            continue;
        const char *hash = corral__param(r, "hash");
        if (hash && strcmp(hash, d->hash) != 0) {
            /* An old hash: where the current document is, as kube answers. */
            corral_buf_printf(&r->headers, "Location: /openapi/v3/%s?hash=%s\r\n", d->path,
                              d->hash);
            corral__reply(r, 301, NULL, NULL, 0);
            return;
        }
        reply_doc(r, "application/json", &d->json, d->hash);
        return;
    }
    corral__status(r, 404, "NotFound", NULL, NULL,
                   "the server could not find the requested resource");
}
