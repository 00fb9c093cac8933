/*
 * GET /openapi/v2: a minimal OpenAPI v2 document that names every served
 * kind, so that kubectl's client-side validation (`kubectl create/apply`
 * with --validate, the default) passes. kubectl 1.20 asks for the protobuf
 * form (gnostic's openapi_v2.Document), other clients for JSON; both are
 * written here by hand, the protobuf with a few lines of wire-format
 * encoding rather than a protobuf library.
 *
 * Each kind is a definition whose schema has no type and no properties (an
 * "arbitrary" value to kube-openapi, so any object validates) carrying
 * `x-kubernetes-group-version-kind`, the extension clients use to find a
 * kind's schema. Corral validates objects itself, with better messages
 * (422 with causes); the document exists so that clients find what they
 * look for, not to describe every field.
 */
#include <stdio.h>
#include <string.h>

#include "apiserver/apiserver_int.h"

/* What clients ask for is "...spec.v2@v1.0+protobuf", but '@' is not valid
 * in a media type and Go's mime parser (client-go) refuses it in a
 * response: kube-openapi answers with this spelling. */
#define PB_MIME "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"

/* "io.k8s.api.core.v1.Pod", "io.k8s.api.rbac.v1.Role",
 * "sh.volcano.scheduling.v1beta1.Queue" (CRDs: the group reversed). */
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

/* --- protobuf wire format ----------------------------------------------------------------- */

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

/* NamedSchema { name, Schema { description, vendor_extension: NamedAny {
 * "x-kubernetes-group-version-kind", Any { yaml } } } } */
static void pb_definition(corral_buf_t *defs, const corral_kind_info_t *k)
{
    char name[256], yaml[256], desc[256];
    definition_name(k, name, sizeof(name));
    snprintf(yaml, sizeof(yaml), "- group: \"%s\"\n  kind: %s\n  version: %s\n", k->group, k->name,
             k->version);
    snprintf(desc, sizeof(desc), "%s (%s), validated by the server", k->name, k->api_version);
    corral_buf_t any, named_any, schema, named_schema;
    corral_buf_init(&any);
    corral_buf_init(&named_any);
    corral_buf_init(&schema);
    corral_buf_init(&named_schema);
    pb_str(&any, 2, yaml);                                    /* Any.yaml */
    pb_str(&named_any, 1, "x-kubernetes-group-version-kind"); /* NamedAny.name */
    pb_msg(&named_any, 2, &any);                              /* NamedAny.value */
    pb_str(&schema, 4, desc);                                 /* Schema.description */
    pb_msg(&schema, 31, &named_any);                          /* Schema.vendor_extension */
    pb_str(&named_schema, 1, name);                           /* NamedSchema.name */
    pb_msg(&named_schema, 2, &schema);                        /* NamedSchema.value */
    pb_msg(defs, 1, &named_schema); /* Definitions.additional_properties */
    corral_buf_fini(&any);
    corral_buf_fini(&named_any);
    corral_buf_fini(&schema);
    corral_buf_fini(&named_schema);
}

static void openapi_pb(corral_buf_t *out)
{
    size_t n;
    const corral__res_t *all = corral__res_all(&n);
    corral_buf_t info, defs, empty;
    corral_buf_init(&info);
    corral_buf_init(&defs);
    corral_buf_init(&empty);
    pb_str(&info, 1, "Kubernetes");        /* Info.title */
    pb_str(&info, 2, CORRAL__GIT_VERSION); /* Info.version */
    for (size_t i = 0; i < n; i++)
        pb_definition(&defs, all[i].info);
    pb_str(out, 1, "2.0");  /* Document.swagger */
    pb_msg(out, 2, &info);  /* Document.info */
    pb_msg(out, 8, &empty); /* Document.paths */
    pb_msg(out, 9, &defs);  /* Document.definitions */
    corral_buf_fini(&info);
    corral_buf_fini(&defs);
    corral_buf_fini(&empty);
}

/* --- JSON ------------------------------------------------------------------------------------ */

static void openapi_json(corral_buf_t *b)
{
    size_t n;
    const corral__res_t *all = corral__res_all(&n);
    corral_buf_puts(
        b,
        "{\"swagger\":\"2.0\",\"info\":{\"title\":\"Kubernetes\",\"version\":\"" CORRAL__GIT_VERSION
        "\"},\"paths\":{},\"definitions\":{");
    for (size_t i = 0; i < n; i++) {
        const corral_kind_info_t *k = all[i].info;
        char name[256];
        definition_name(k, name, sizeof(name));
        corral_buf_printf(b,
                          "%s\"%s\":{\"description\":\"%s (%s), validated by the server\","
                          "\"x-kubernetes-group-version-kind\":[{\"group\":\"%s\",\"kind\":\"%s\","
                          "\"version\":\"%s\"}]}",
                          i ? "," : "", name, k->name, k->api_version, k->group, k->name,
                          k->version);
    }
    corral_buf_puts(b, "}}");
}

void corral__h_openapi(corral__req_t *r)
{
    size_t al = 0;
    const char *accept = corral_http_header(r->http, "accept", &al);
    bool pb = false;
    for (size_t i = 0; accept && i + 8 <= al && !pb; i++)
        pb = memcmp(accept + i, "protobuf", 8) == 0;
    corral_buf_t b;
    corral_buf_init(&b);
    if (pb) {
        openapi_pb(&b);
        corral__reply(r, 200, PB_MIME, b.p ? b.p : "", b.len);
        corral_buf_fini(&b);
        return;
    }
    openapi_json(&b);
    corral__reply_buf(r, 200, &b);
}
