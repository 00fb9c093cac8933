/*
 * Object semantics shared by the handlers: query parameters, request bodies
 * (JSON, or YAML as kube-apiserver also accepts), the identity checks that
 * tie a body to its URL, defaulting and validation through the object model
 * (a 422 carries the decoder's messages; unknown fields become Warning
 * headers, as kube-apiserver's field validation does), label and field
 * selectors, and the selector attributes stored beside every object.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/time.h>
#include <time.h>

#include "apiserver/apiserver_int.h"
#include "corral/json.h"
#include "corral/pb.h"
#include "corral/timefmt.h"
#include "corral/yaml.h"

#define MAX_WARNINGS 20

const char *corral__param(corral__req_t *r, const char *name)
{
    if (!r->query)
        return NULL;
    size_t pos = 0, kl, vl;
    const char *k, *v;
    size_t nl = strlen(name);
    while (corral_http_query_next(r->query, r->query_len, &pos, &k, &kl, &v, &vl)) {
        char *key = corral_arena_alloc(r->a, kl + 1);
        if (corral_http_unescape(k, kl, true, key) != (int)nl || memcmp(key, name, nl) != 0)
            continue;
        char *val = corral_arena_alloc(r->a, vl + 1);
        if (corral_http_unescape(v, vl, true, val) < 0)
            return NULL;
        return val;
    }
    return NULL;
}

bool corral__param_bool(corral__req_t *r, const char *name, bool *out)
{
    const char *v = corral__param(r, name);
    *out = false;
    if (!v)
        return true;
    if (!*v || !strcmp(v, "true") || !strcmp(v, "1") || !strcasecmp(v, "True"))
        *out = true;
    else if (strcmp(v, "false") != 0 && strcmp(v, "0") != 0 && strcasecmp(v, "False") != 0) {
        corral__status(r, 400, "BadRequest", NULL, NULL,
                       "invalid value for %s: \"%s\" (want true or false)", name, v);
        return false;
    }
    return true;
}

bool corral__parse_u63(const char *s, int64_t *out)
{
    /* Decimal digits only (no sign, no space), and no overflow. */
    int64_t v = 0;
    if (!s || !*s)
        return false;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || v > (INT64_MAX - (*s - '0')) / 10)
            return false;
        v = v * 10 + (*s - '0');
    }
    *out = v;
    return true;
}

bool corral__param_int(corral__req_t *r, const char *name, int64_t *out, bool *set)
{
    const char *v = corral__param(r, name);
    *set = false;
    if (!v || !*v)
        return true;
    int64_t n = 0;
    if (!corral__parse_u63(v, &n)) {
        corral__status(r, 400, "BadRequest", NULL, NULL,
                       "invalid value for %s: \"%.64s\" (want a non-negative integer)", name, v);
        return false;
    }
    *out = n;
    *set = true;
    return true;
}

corral_val_t *corral__json_tree(corral_arena_t *a, const char *json, size_t len)
{
    corral_val_t *v = NULL;
    if (corral_json_parse(a, json, len, &v, NULL) != 0 || !v || v->kind != CORRAL_VAL_MAP)
        return NULL;
    return v;
}

/* The media type of the body, without parameters, lower case, in arena. */
static const char *content_type(corral__req_t *r)
{
    size_t len = 0;
    const char *ct = corral_http_header(r->http, "content-type", &len);
    if (!ct)
        return "";
    const char *semi = memchr(ct, ';', len);
    if (semi)
        len = (size_t)(semi - ct);
    while (len && (ct[len - 1] == ' ' || ct[len - 1] == '\t'))
        len--;
    char *out = corral_arena_strndup(r->a, ct, len);
    for (char *p = out; *p; p++)
        *p = (char)((*p >= 'A' && *p <= 'Z') ? *p + 32 : *p);
    return out;
}

static void bad_body(corral__req_t *r, int line, int col, const char *msg)
{
    corral__status(r, 400, "BadRequest", NULL, NULL,
                   "the request body could not be decoded: line %d, column %d: %s", line, col, msg);
}

/* YAML bodies (rare: kubectl sends JSON) go through libfyaml, which needs
 * time quadratic in whitespace trailing a flow collection: trim it first. */
static corral_val_t *parse_yaml_body(corral__req_t *r)
{
    size_t len = r->body_len;
    while (len && (r->body[len - 1] == ' ' || r->body[len - 1] == '\n' ||
                   r->body[len - 1] == '\r' || r->body[len - 1] == '\t'))
        len--;
    corral_diag_t d;
    corral_diag_init(&d);
    corral_doc_t *docs = NULL;
    size_t n = 0;
    corral_yaml_opts_t yo = {.max_alias_bytes = CORRAL_APISERVER_MAX_BODY};
    int rc = corral_yaml_parse(r->a, r->body, len, "body", &yo, &d, &docs, &n);
    corral_val_t *v = rc == 0 && n == 1 ? docs[0].root : NULL;
    if (!v) {
        const corral_diag_entry_t *e = d.n ? &d.items[0] : NULL;
        bad_body(r, e ? e->line : 1, e ? e->col : 1,
                 e        ? e->msg
                 : n != 1 ? "expected exactly one document"
                          : "empty document");
    }
    corral_diag_fini(&d);
    return v;
}

/* A duplicate field of a write's JSON body: the last wins; fieldValidation
 * decides what the client hears of it (corral__validate). */
static void note_dup(void *ctx, const char *path)
{
    corral__req_t *r = ctx;
    if (r->wo->ndups < CORRAL__MAX_DUPS)
        r->wo->dups[r->wo->ndups++] = corral_arena_strdup(r->a, path);
}

/* Parse body (as JSON unless yaml) into one value. Replies 400. */
static corral_val_t *parse_body(corral__req_t *r, bool yaml, bool want_map)
{
    int line = 0, col = 0;
    if (r->body_len == 0) {
        corral__status(r, 400, "BadRequest", NULL, NULL, "the request body is empty");
        return NULL;
    }
    if (corral_text_check(r->body, r->body_len, &line, &col) != 0) {
        corral__status(r, 400, "BadRequest", NULL, NULL,
                       "the request body is not UTF-8 text (line %d, column %d)", line, col);
        return NULL;
    }
    corral_val_t *v = NULL;
    if (yaml) {
        v = parse_yaml_body(r);
        if (!v)
            return NULL;
    } else {
        corral_json_err_t e;
        int rc = r->wo ? corral_json_parse_dups(r->a, r->body, r->body_len, &v, &e, note_dup, r)
                       : corral_json_parse(r->a, r->body, r->body_len, &v, &e);
        if (rc != 0) {
            bad_body(r, e.line, e.col, e.msg);
            return NULL;
        }
    }
    if (want_map && v->kind != CORRAL_VAL_MAP) {
        corral__status(r, 400, "BadRequest", NULL, NULL,
                       "the request body could not be decoded: expected an object, got a %s",
                       corral_val_kind_name(v->kind));
        return NULL;
    }
    return v;
}

/* A protobuf body (kubectl and client-go for built-in kinds). Replies 400. */
static corral_val_t *parse_proto_body(corral__req_t *r)
{
    char why[256];
    corral_val_t *v = NULL;
    if (r->body_len == 0) {
        corral__status(r, 400, "BadRequest", NULL, NULL, "the request body is empty");
        return NULL;
    }
    if (corral_pb_decode(r->a, r->body, r->body_len, &v, why, sizeof(why)) != 0) {
        corral__status(r, 400, "BadRequest", NULL, NULL,
                       "the body of the request could not be decoded as protobuf: %s", why);
        return NULL;
    }
    return v;
}

corral_val_t *corral__body_tree(corral__req_t *r)
{
    const char *ct = content_type(r);
    bool yaml = !strcmp(ct, "application/yaml") || !strcmp(ct, "application/x-yaml") ||
                !strcmp(ct, "text/yaml");
    if (!strcmp(ct, "application/vnd.kubernetes.protobuf"))
        return parse_proto_body(r);
    if (!yaml && ct[0] && strcmp(ct, "application/json") != 0 && strcmp(ct, "*/*") != 0) {
        corral__status(r, 415, "UnsupportedMediaType", NULL, NULL,
                       "the body of the request was in an unknown format - accepted media types "
                       "include: application/json, application/yaml, "
                       "application/vnd.kubernetes.protobuf");
        return NULL;
    }
    return parse_body(r, yaml, true);
}

corral_val_t *corral__apply_tree(corral__req_t *r)
{
    size_t i = 0;
    while (i < r->body_len &&
           (r->body[i] == ' ' || r->body[i] == '\n' || r->body[i] == '\r' || r->body[i] == '\t'))
        i++;
    return parse_body(r, i < r->body_len && r->body[i] != '{', true);
}

/* Patch documents: JSON, maps or lists (json-patch). */
corral_val_t *corral__patch_tree(corral__req_t *r)
{
    return parse_body(r, false, false);
}

corral_val_t *corral__meta(corral_arena_t *a, corral_val_t *obj)
{
    return corral_val_ensure_map(a, obj, "metadata");
}

const char *corral__meta_str(const corral_val_t *obj, const char *key)
{
    return corral_val_get_str(corral_val_get(obj, "metadata"), key);
}

void corral__now_rfc3339(char *out, size_t len)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    corral_time_format((int64_t)tv.tv_sec * 1000000, false, out, len);
}

const char *corral__ns_key(const corral__req_t *r)
{
    return r->res && r->res->info->namespaced && r->ns ? r->ns : "";
}

bool corral__check_identity(corral__req_t *r, corral_val_t *obj, bool need_name)
{
    const corral_kind_info_t *k = r->res->info;
    corral_val_t *av = corral_val_get(obj, "apiVersion"), *kv = corral_val_get(obj, "kind");
    if (!av || av->kind == CORRAL_VAL_NULL)
        corral_val_set(r->a, obj, "apiVersion", corral_val_new_str(r->a, k->api_version));
    else if (av->kind != CORRAL_VAL_STR || strcmp(av->s, k->api_version) != 0) {
        corral__status(r, 400, "BadRequest", NULL, NULL,
                       "the API version in the data (%s) does not match the expected API version "
                       "(%s)",
                       av->kind == CORRAL_VAL_STR ? av->s : "?", k->api_version);
        return false;
    }
    if (!kv || kv->kind == CORRAL_VAL_NULL)
        corral_val_set(r->a, obj, "kind", corral_val_new_str(r->a, k->name));
    else if (kv->kind != CORRAL_VAL_STR || strcmp(kv->s, k->name) != 0) {
        corral__status(r, 400, "BadRequest", NULL, NULL,
                       "the kind in the data (%s) does not match the expected kind (%s)",
                       kv->kind == CORRAL_VAL_STR ? kv->s : "?", k->name);
        return false;
    }
    corral_val_t *mv = corral_val_get(obj, "metadata");
    if (mv && mv->kind != CORRAL_VAL_MAP && mv->kind != CORRAL_VAL_NULL) {
        corral__status(r, 400, "BadRequest", NULL, NULL, "metadata must be an object");
        return false;
    }
    corral_val_t *meta = corral__meta(r->a, obj);
    corral_val_t *nv = corral_val_get(meta, "name");
    const char *name = nv && nv->kind == CORRAL_VAL_STR ? nv->s : NULL;
    if (need_name && r->name) {
        if (name && *name && strcmp(name, r->name) != 0) {
            corral__status(r, 400, "BadRequest", NULL, NULL,
                           "the name of the object (%s) does not match the name on the URL (%s)",
                           name, r->name);
            return false;
        }
        corral_val_set(r->a, meta, "name", corral_val_new_str(r->a, r->name));
    }
    const char *ns = corral_val_get_str(meta, "namespace");
    if (k->namespaced) {
        if (ns && *ns && strcmp(ns, r->ns) != 0) {
            corral__status(r, 400, "BadRequest", NULL, NULL,
                           "the namespace of the provided object does not match the namespace "
                           "sent on the request");
            return false;
        }
        corral_val_set(r->a, meta, "namespace", corral_val_new_str(r->a, r->ns));
    } else {
        corral_val_del(meta, "namespace");
    }
    return true;
}

/* "Warning: 299 - "<text>"" headers, as kube-apiserver sends for unknown
 * fields (kubectl prints them). */
static void add_warning_text(corral__req_t *r, const char *path, const char *text)
{
    corral_buf_t msg;
    corral_buf_init(&msg);
    if (path)
        corral_buf_printf(&msg, "%s: ", path);
    corral_buf_puts(&msg, text);
    corral_buf_puts(&r->headers, "Warning: 299 - \"");
    for (size_t i = 0; i < msg.len; i++) {
        char c = msg.p[i];
        if (c == '"' || c == '\\')
            corral_buf_putc(&r->headers, '\\');
        if ((unsigned char)c < 0x20)
            c = ' '; /* no control characters in a header */
        corral_buf_putc(&r->headers, c);
    }
    corral_buf_puts(&r->headers, "\"\r\n");
    corral_buf_fini(&msg);
}

static void add_warning(corral__req_t *r, const corral_diag_entry_t *e)
{
    add_warning_text(r, e->path, e->msg);
}

static bool unknown_field(const corral_diag_entry_t *e)
{
    return e->sev == CORRAL_SEV_WARNING && strncmp(e->msg, "unknown field", 13) == 0;
}

/* fieldValidation of a write: Strict turns unknown and duplicate fields
 * into one 400 (kube's "strict decoding error"), Ignore drops them, Warn
 * (the default) sends them as warnings. Returns false after a 400. */
static bool field_validation(corral__req_t *r, const corral_diag_t *d)
{
    int mode = r->wo ? r->wo->validation : CORRAL__FV_WARN;
    size_t ndups = r->wo ? r->wo->ndups : 0;
    if (mode == CORRAL__FV_STRICT) {
        corral_buf_t b;
        corral_buf_init(&b);
        size_t n = 0;
        for (size_t i = 0; i < d->n; i++) {
            if (unknown_field(&d->items[i]))
                corral_buf_printf(&b, "%sunknown field \"%s\"", n++ ? ", " : "",
                                  d->items[i].path ? d->items[i].path : "");
        }
        for (size_t i = 0; i < ndups; i++)
            corral_buf_printf(&b, "%sduplicate field \"%s\"", n++ ? ", " : "", r->wo->dups[i]);
        if (n) {
            const corral_kind_info_t *k = r->res->info;
            corral__status(r, 400, "BadRequest", NULL, NULL,
                           "%s in version \"%s\" cannot be handled as a %s: strict decoding "
                           "error: %s",
                           k->name, k->api_version, k->name, corral_buf_str(&b));
        }
        corral_buf_fini(&b);
        return n == 0;
    }
    size_t nw = 0;
    for (size_t i = 0; i < d->n && nw < MAX_WARNINGS; i++) {
        if (d->items[i].sev != CORRAL_SEV_WARNING ||
            (mode == CORRAL__FV_IGNORE && unknown_field(&d->items[i])))
            continue;
        add_warning(r, &d->items[i]);
        nw++;
    }
    for (size_t i = 0; mode == CORRAL__FV_WARN && i < ndups && nw < MAX_WARNINGS; i++, nw++)
        add_warning_text(r, NULL,
                         corral_arena_printf(r->a, "duplicate field \"%s\"", r->wo->dups[i]));
    if (r->wo)
        r->wo->ndups = 0; /* reported once, also when an update validates again */
    return true;
}

/* Report d's errors as a 422 (true when there were any). */
static bool report_invalid(corral__req_t *r, corral_val_t *obj, int rc, corral_obj_t *o,
                           corral_diag_t *d)
{
    if (rc == 0 && o)
        return false;
    const char *name = corral__meta_str(obj, "name");
    corral__invalid(r, r->res->info->name, name ? name : "", d);
    return true;
}

bool corral__validate(corral__req_t *r, corral_val_t *obj, corral_obj_t **out)
{
    /* Validate what the client sent, so a 422 says exactly what `corral
     * validate` says about the same document; then default and decode
     * again for the typed view of what is stored. */
    corral_diag_t d;
    corral_diag_init(&d);
    corral_obj_t *o = NULL;
    int rc = corral_obj_decode(r->a, obj, NULL, &d, &o);
    if (report_invalid(r, obj, rc, o, &d)) {
        corral_diag_fini(&d);
        return false;
    }
    bool ok = field_validation(r, &d);
    corral_diag_fini(&d);
    if (!ok)
        return false;
    corral_obj_default(r->a, r->res->info, obj);
    corral_diag_init(&d);
    rc = corral_obj_decode(r->a, obj, NULL, &d, out);
    bool bad = report_invalid(r, obj, rc, *out, &d);
    corral_diag_fini(&d);
    if (!bad && (*out)->info->kind == CORRAL_KIND_CRD && !(*out)->u.crd->served_by_corral)
        add_warning_text(r, NULL, "objects of this CRD are not served by corral apiserver");
    return !bad;
}

void corral__attrs(const corral_obj_t *o, corral_buf_t *out)
{
    corral_buf_reset(out);
    for (size_t i = 0; i < o->meta.labels.n; i++)
        corral_store_attrs_add(out, 'l', o->meta.labels.items[i].key,
                               o->meta.labels.items[i].value);
    corral_store_attrs_add(out, 'f', "metadata.name", o->meta.name ? o->meta.name : "");
    if (o->info->namespaced)
        corral_store_attrs_add(out, 'f', "metadata.namespace",
                               o->meta.namespace ? o->meta.namespace : "");
    const char *fields[32];
    size_t n = corral_kind_fields(o->info->kind, fields, CORRAL_ARRAY_LEN(fields));
    for (size_t i = 0; i < n && i < CORRAL_ARRAY_LEN(fields); i++) {
        const char *v = corral_obj_field(o, fields[i]);
        corral_store_attrs_add(out, 'f', fields[i], v ? v : "");
    }
}

/* --- selectors -------------------------------------------------------------------------- */

bool corral__filter_parse(corral__req_t *r, corral__filter_t *f)
{
    memset(f, 0, sizeof(*f));
    char why[256];
    const char *ls = corral__param(r, "labelSelector");
    if (ls && *ls) {
        if (corral_labelsel_parse(r->a, ls, strlen(ls), &f->labels, why, sizeof(why)) != 0) {
            corral__status(r, 400, "BadRequest", NULL, NULL, "unable to parse requirement: %s",
                           why);
            return false;
        }
        f->any = true;
    }
    const char *fs = corral__param(r, "fieldSelector");
    if (fs && *fs) {
        if (corral_fieldsel_parse(r->a, fs, strlen(fs), &f->fields, why, sizeof(why)) != 0) {
            corral__status(r, 400, "BadRequest", NULL, NULL, "invalid field selector: %s", why);
            return false;
        }
        for (size_t i = 0; i < f->fields.n; i++) {
            const char *label = corral__field_label(r, f->fields.reqs[i].key);
            if (!label) {
                corral__status(r, 400, "BadRequest", NULL, NULL, "field label not supported: %s",
                               f->fields.reqs[i].key);
                return false;
            }
            f->fields.reqs[i].key = label; /* as the stored attributes name it */
        }
        f->any = true;
    }
    return true;
}

typedef struct attrs_ctx {
    const char *attrs;
    size_t len;
    char tag;
} attrs_ctx_t;

static const char *attrs_lookup(const char *key, void *ctx)
{
    const attrs_ctx_t *c = ctx;
    return corral_store_attrs_get(c->attrs, c->len, c->tag, key);
}

bool corral__filter_match(const corral__filter_t *f, const char *attrs, size_t len)
{
    if (!f->any)
        return true;
    attrs_ctx_t l = {attrs, len, 'l'}, fl = {attrs, len, 'f'};
    return corral_sel_matches(&f->labels, attrs_lookup, &l) &&
           corral_sel_matches(&f->fields, attrs_lookup, &fl);
}
