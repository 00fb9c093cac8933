/*
 * The OpenAPI documents (src/apiserver/openapi.c) and the field schema
 * tables they come from (include/corral/schema.h): /openapi/v2 as JSON and
 * as gnostic protobuf, /openapi/v3's index and per group-version documents,
 * their caching headers, that every $ref resolves, that the kinds' property
 * trees hold the fields the model decodes, and that every reference
 * manifest (examples/) fits the schemas as kubectl's client-side
 * validation checks it: no field the schema does not name.
 */
#include <dirent.h>

#include "api_test.h"
#include "corral/schema.h"

TestSuite(openapi, .init = api_start, .fini = api_stop, .timeout = 30);
TestSuite(schema_tables, .timeout = 30);

/* --- helpers ------------------------------------------------------------------------------- */

/* A GET with extra header lines ("Name: value\r\n..."); the status code, and
 * the body in out (Content-Length framed). */
static int raw_get(const char *path, const char *headers, corral_buf_t *out, corral_buf_t *head)
{
    int fd = api_connect();
    char req[1024];
    snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: x\r\n%s\r\n", path, headers);
    api_send(fd, req);
    corral_buf_t all;
    corral_buf_init(&all);
    char buf[65536];
    for (;;) {
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n <= 0)
            break;
        corral_buf_append(&all, buf, (size_t)n);
        const char *s = corral_buf_str(&all);
        const char *end = strstr(s, "\r\n\r\n");
        const char *cl = strstr(s, "Content-Length: ");
        if (end && cl && all.len >= (size_t)(end + 4 - s) + strtoul(cl + 16, NULL, 10))
            break;
    }
    close(fd);
    const char *s = corral_buf_str(&all);
    const char *end = strstr(s, "\r\n\r\n");
    cr_assert(end, "no response head: %.200s", s);
    corral_buf_append(head, s, (size_t)(end - s));
    corral_buf_append(out, end + 4, all.len - (size_t)(end + 4 - s));
    int code = (int)strtol(s + 9, NULL, 10);
    corral_buf_fini(&all);
    return code;
}

static const corral_val_t *def_of(const corral_val_t *defs, const char *name)
{
    const corral_val_t *d = corral_val_get(defs, name);
    cr_assert(d, "no definition %s", name);
    return d;
}

static const corral_val_t *prop(const corral_val_t *def, const char *name)
{
    const corral_val_t *p = corral_val_get(corral_val_get(def, "properties"), name);
    cr_assert(p, "no property %s", name);
    return p;
}

/* Every $ref under v names a definition of defs (prefix "#/definitions/"
 * or "#/components/schemas/"); returns how many it saw. */
static size_t check_refs(const corral_val_t *v, const corral_val_t *defs, const char *prefix)
{
    size_t n = 0;
    if (!v)
        return 0;
    if (v->kind == CORRAL_VAL_SEQ) {
        for (size_t i = 0; i < v->n; i++)
            n += check_refs(v->items[i], defs, prefix);
    } else if (v->kind == CORRAL_VAL_MAP) {
        for (size_t i = 0; i < v->n; i++) {
            const corral_val_t *val = v->pairs[i].val;
            if (strcmp(v->pairs[i].key->s, "properties") == 0 && val->kind == CORRAL_VAL_MAP) {
                /* Property names are not keywords (JSONSchemaProps has "$ref"). */
                for (size_t j = 0; j < val->n; j++)
                    n += check_refs(val->pairs[j].val, defs, prefix);
            } else if (strcmp(v->pairs[i].key->s, "$ref") == 0) {
                cr_assert(strncmp(val->s, prefix, strlen(prefix)) == 0, "$ref %s", val->s);
                cr_assert(corral_val_get(defs, val->s + strlen(prefix)), "dangling $ref %s",
                          val->s);
                n++;
            } else {
                n += check_refs(val, defs, prefix);
            }
        }
    }
    return n;
}

/* Does def's x-kubernetes-group-version-kind list name group/version/kind? */
static bool has_gvk(const corral_val_t *def, const char *group, const char *version,
                    const char *kind)
{
    const corral_val_t *l = corral_val_get(def, "x-kubernetes-group-version-kind");
    for (size_t i = 0; l && l->kind == CORRAL_VAL_SEQ && i < l->n; i++) {
        if (strcmp(api_str(l->items[i], "group"), group) == 0 &&
            strcmp(api_str(l->items[i], "version"), version) == 0 &&
            strcmp(api_str(l->items[i], "kind"), kind) == 0)
            return true;
    }
    return false;
}

/* The definition a property refers to (directly, through allOf, or as the
 * items / values of a list / map). */
static const corral_val_t *deref(const corral_val_t *p, const corral_val_t *defs,
                                 const char *prefix)
{
    const corral_val_t *all = corral_val_get(p, "allOf");
    if (all && all->n)
        p = all->items[0];
    if (corral_val_get(p, "items"))
        p = corral_val_get(p, "items");
    else if (corral_val_get(p, "additionalProperties"))
        p = corral_val_get(p, "additionalProperties");
    const char *ref = api_str(p, "$ref");
    cr_assert(ref, "not a $ref");
    return def_of(defs, ref + strlen(prefix));
}

/* --- /openapi/v2 JSON ------------------------------------------------------------------------ */

Test(openapi, v2_json_describes_fields)
{
    api_resp_t r;
    API_EXPECT(&r, 200, "GET", "/openapi/v2", NULL, NULL);
    cr_assert(r.json, "not JSON");
    cr_assert_str_eq(api_str(r.json, "swagger"), "2.0");
    const corral_val_t *defs = corral_val_get(r.json, "definitions");
    const char *P = "#/definitions/";
    cr_assert_gt(check_refs(defs, defs, P), 20);

    const corral_val_t *job = def_of(defs, "sh.volcano.batch.v1alpha1.Job");
    cr_assert(has_gvk(job, "batch.volcano.sh", "v1alpha1", "Job"));
    cr_assert_str_eq(api_str(job, "type"), "object");
    const corral_val_t *spec = deref(prop(job, "spec"), defs, P);
    const corral_val_t *tasks = prop(spec, "tasks");
    cr_assert_str_eq(api_str(tasks, "type"), "array");
    const corral_val_t *task = deref(tasks, defs, P);
    cr_assert_str_eq(api_str(prop(task, "replicas"), "type"), "integer");
    cr_assert_str_eq(api_str(prop(task, "replicas"), "format"), "int32");
    cr_assert_str_eq(api_str(prop(task, "name"), "description"),
                     "The task's name; its pods are named <job>-<task>-<index>.");
    /* The pod template: core/v1 PodTemplateSpec, whose spec is the k8s
     * table's PodSpec when it has one, else an object of any fields. */
    const corral_val_t *tmpl = deref(prop(task, "template"), defs, P);
    cr_assert_eq(tmpl, def_of(defs, "io.k8s.api.core.v1.PodTemplateSpec"));
    if (corral_schema_find("io.k8s.api.core.v1.PodSpec")) {
        const corral_val_t *pod_spec = deref(prop(tmpl, "spec"), defs, P);
        const corral_val_t *ctr = deref(prop(pod_spec, "containers"), defs, P);
        cr_assert_str_eq(api_str(prop(ctr, "image"), "type"), "string");
        cr_assert_str_eq(api_str(prop(ctr, "resources"), "$ref"),
                         "#/definitions/io.k8s.api.core.v1.ResourceRequirements");
        const corral_val_t *pod = def_of(defs, "io.k8s.api.core.v1.Pod");
        cr_assert_str_eq(api_str(prop(pod, "apiVersion"), "type"), "string");
    } else {
        cr_assert_str_eq(api_str(prop(tmpl, "spec"), "type"), "object");
    }
    /* Any value: no type at all. */
    cr_assert_null(corral_val_get(prop(spec, "plugins"), "type"));

    const corral_val_t *queue = def_of(defs, "sh.volcano.scheduling.v1beta1.Queue");
    cr_assert(has_gvk(queue, "scheduling.volcano.sh", "v1beta1", "Queue"));
    const corral_val_t *qspec = deref(prop(queue, "spec"), defs, P);
    const corral_val_t *cap = prop(qspec, "capability");
    cr_assert_str_eq(api_str(cap, "type"), "object");
    cr_assert_str_eq(api_str(cap, "additionalProperties.$ref"),
                     "#/definitions/io.k8s.apimachinery.pkg.api.resource.Quantity");
    cr_assert_str_eq(api_str(def_of(defs, "io.k8s.apimachinery.pkg.api.resource.Quantity"), "type"),
                     "string");

    const corral_val_t *isvc = def_of(defs, "io.kserve.serving.v1beta1.InferenceService");
    const corral_val_t *pred =
        deref(prop(deref(prop(isvc, "spec"), defs, P), "predictor"), defs, P);
    const corral_val_t *model = deref(prop(pred, "model"), defs, P);
    prop(model, "storageUri");
    prop(model, "image"); /* the container fields KServe inlines */
    cr_assert_str_eq(api_str(prop(pred, "nodeSelector"), "additionalProperties.type"), "string");

    /* Every served kind is named, with a schema or without. */
    static const char *const kinds[][4] = {
        {"io.k8s.api.core.v1.Pod", "", "v1", "Pod"},
        {"io.k8s.api.rbac.v1.ClusterRoleBinding", "rbac.authorization.k8s.io", "v1",
         "ClusterRoleBinding"},
        {"sh.volcano.topology.v1alpha1.HyperNode", "topology.volcano.sh", "v1alpha1", "HyperNode"},
        {"dev.corral.v1alpha1.Scenario", "corral.dev", "v1alpha1", "Scenario"},
    };
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(kinds); i++)
        cr_assert(has_gvk(def_of(defs, kinds[i][0]), kinds[i][1], kinds[i][2], kinds[i][3]), "%s",
                  kinds[i][0]);
    cr_assert(strstr(corral_buf_str(&r.headers), "ETag: \""), "%s", corral_buf_str(&r.headers));
    api_free(&r);
}

/* --- /openapi/v2 protobuf --------------------------------------------------------------------- */

typedef struct pb {
    const unsigned char *p, *end;
} pb_t;

static uint64_t pb_varint(pb_t *b)
{
    uint64_t v = 0;
    for (int shift = 0; b->p < b->end && shift < 64; shift += 7) {
        unsigned char c = *b->p++;
        v |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80))
            return v;
    }
    cr_assert_fail("truncated varint");
    return 0;
}

/* The next length-delimited field: its number and bytes (other wire types
 * are skipped). False at the end. */
static bool pb_next(pb_t *b, unsigned *field, pb_t *val)
{
    while (b->p < b->end) {
        uint64_t key = pb_varint(b);
        *field = (unsigned)(key >> 3);
        if ((key & 7) == 0) {
            pb_varint(b);
            continue;
        }
        cr_assert_eq(key & 7, 2, "wire type %u", (unsigned)(key & 7));
        uint64_t n = pb_varint(b);
        cr_assert_leq(n, (uint64_t)(b->end - b->p));
        val->p = b->p;
        val->end = b->p + n;
        b->p += n;
        return true;
    }
    return false;
}

static bool pb_is(const pb_t *v, const char *s)
{
    return (size_t)(v->end - v->p) == strlen(s) && memcmp(v->p, s, strlen(s)) == 0;
}

/* The Schema of NamedSchema entries (field 1 of m) named name, or false. */
static bool pb_named(pb_t m, const char *name, pb_t *schema)
{
    unsigned f, g;
    pb_t e, x;
    while (pb_next(&m, &f, &e)) {
        bool match = false;
        while (f == 1 && pb_next(&e, &g, &x)) {
            if (g == 1)
                match = pb_is(&x, name);
            else if (g == 2 && match) {
                *schema = x;
                return true;
            }
        }
    }
    return false;
}

/* Field n of message m (the first), or false. */
static bool pb_field(pb_t m, unsigned n, pb_t *out)
{
    unsigned f;
    while (pb_next(&m, &f, out)) {
        if (f == n)
            return true;
    }
    return false;
}

Test(openapi, v2_protobuf_matches_json)
{
    corral_buf_t body, head;
    corral_buf_init(&body);
    corral_buf_init(&head);
    int code = raw_get("/openapi/v2",
                       "Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf\r\n",
                       &body, &head);
    cr_assert_eq(code, 200);
    cr_assert(strstr(corral_buf_str(&head),
                     "Content-Type: application/com.github.proto-openapi.spec.v2.v1.0+protobuf"));
    pb_t doc = {(const unsigned char *)body.p, (const unsigned char *)body.p + body.len};
    pb_t swagger, defs, task, props, replicas, type, value, ext;
    cr_assert(pb_field(doc, 1, &swagger) && pb_is(&swagger, "2.0"));
    cr_assert(pb_field(doc, 9, &defs), "no definitions");
    /* As many definitions as the JSON form has. */
    size_t n = 0;
    unsigned f;
    pb_t e, d = defs;
    while (pb_next(&d, &f, &e))
        n += f == 1;
    api_resp_t r;
    API_EXPECT(&r, 200, "GET", "/openapi/v2", NULL, NULL);
    cr_assert_eq(n, corral_val_get(r.json, "definitions")->n);
    api_free(&r);
    /* TaskSpec.properties.replicas.type = [integer]. */
    cr_assert(pb_named(defs, "sh.volcano.batch.v1alpha1.TaskSpec", &task));
    cr_assert(pb_field(task, 25, &props), "no properties");
    cr_assert(pb_named(props, "replicas", &replicas));
    cr_assert(pb_field(replicas, 22, &type) && pb_field(type, 1, &value) &&
              pb_is(&value, "integer"));
    /* Job carries its group-version-kind as a vendor extension. */
    pb_t job;
    cr_assert(pb_named(defs, "sh.volcano.batch.v1alpha1.Job", &job));
    cr_assert(pb_field(job, 31, &ext) && pb_field(ext, 1, &value) &&
              pb_is(&value, "x-kubernetes-group-version-kind"));
    corral_buf_fini(&body);
    corral_buf_fini(&head);
}

/* --- /openapi/v3
 * ---------------------------------------------------------------------------------- */

Test(openapi, v3_documents_name_each_kind)
{
    api_resp_t idx;
    API_EXPECT(&idx, 200, "GET", "/openapi/v3", NULL, NULL);
    const corral_val_t *paths = corral_val_get(idx.json, "paths");
    cr_assert(paths && paths->n >= 8, "%s", corral_buf_str(&idx.body));
    cr_assert(corral_val_get(paths, "api/v1"));
    bool saw_job = false;
    for (size_t i = 0; i < paths->n; i++) {
        const char *url = api_str(paths->pairs[i].val, "serverRelativeURL");
        cr_assert(url && strstr(url, "?hash="), "%s", paths->pairs[i].key->s);
        api_resp_t r;
        API_EXPECT(&r, 200, "GET", url, NULL, NULL);
        cr_assert(r.json, "%s: not JSON", url);
        cr_assert_str_eq(api_str(r.json, "openapi"), "3.0.0");
        const corral_val_t *schemas =
            corral_val_get(corral_val_get(r.json, "components"), "schemas");
        check_refs(r.json, schemas, "#/components/schemas/");
        /* Each path's operation names a kind that has a schema here. */
        const corral_val_t *ops = corral_val_get(r.json, "paths");
        cr_assert(ops && ops->n > 0, "%s: no paths", url);
        for (size_t j = 0; j < ops->n; j++) {
            const corral_val_t *gvk = corral_val_get(corral_val_get(ops->pairs[j].val, "get"),
                                                     "x-kubernetes-group-version-kind");
            const char *g = api_str(gvk, "group"), *v = api_str(gvk, "version"),
                       *k = api_str(gvk, "kind");
            cr_assert(g && v && k, "%s", ops->pairs[j].key->s);
            bool found = false;
            for (size_t s = 0; s < schemas->n && !found; s++)
                found = has_gvk(schemas->pairs[s].val, g, v, k);
            cr_assert(found, "%s: no schema for %s", url, k);
        }
        if (strcmp(paths->pairs[i].key->s, "apis/batch.volcano.sh/v1alpha1") == 0) {
            saw_job = true;
            cr_assert(
                corral_val_get(ops, "/apis/batch.volcano.sh/v1alpha1/namespaces/{namespace}/jobs"));
            /* kubectl's check for fieldValidation: a patch operation of the kind. */
            const corral_val_t *patch = corral_val_dig(
                corral_val_get(
                    ops, "/apis/batch.volcano.sh/v1alpha1/namespaces/{namespace}/jobs/{name}"),
                "patch");
            cr_assert_str_eq(api_str(patch, "x-kubernetes-group-version-kind.kind"), "Job");
            const corral_val_t *params = corral_val_get(patch, "parameters");
            bool fv = false;
            for (size_t p = 0; params && p < params->n; p++)
                fv = fv || (strcmp(api_str(params->items[p], "name"), "fieldValidation") == 0 &&
                            strcmp(api_str(params->items[p], "in"), "query") == 0);
            cr_assert(fv, "no fieldValidation parameter");
            const char *P = "#/components/schemas/";
            const corral_val_t *job = def_of(schemas, "sh.volcano.batch.v1alpha1.Job");
            const corral_val_t *task =
                deref(prop(deref(prop(job, "spec"), schemas, P), "tasks"), schemas, P);
            cr_assert_str_eq(api_str(prop(task, "replicas"), "type"), "integer");
            /* v3 puts a description next to a $ref through allOf. */
            cr_assert(corral_val_get(prop(task, "dependsOn"), "allOf"));
            cr_assert_null(corral_val_get(schemas, "sh.volcano.scheduling.v1beta1.Queue"),
                           "only what the group-version refers to");
        }
        api_free(&r);
    }
    cr_assert(saw_job);
    api_free(&idx);
}

Test(openapi, v3_caching_headers)
{
    api_resp_t idx;
    API_EXPECT(&idx, 200, "GET", "/openapi/v3", NULL, NULL);
    const char *url = api_str(
        corral_val_get(corral_val_get(idx.json, "paths"), "apis/scheduling.volcano.sh/v1beta1"),
        "serverRelativeURL");
    cr_assert(url);
    const char *hash = strstr(url, "?hash=") + 6;
    corral_buf_t body, head;
    corral_buf_init(&body);
    corral_buf_init(&head);
    cr_assert_eq(raw_get(url, "", &body, &head), 200);
    char want[256];
    snprintf(want, sizeof(want), "ETag: \"%s\"", hash);
    cr_assert(strstr(corral_buf_str(&head), want), "%s", corral_buf_str(&head));
    /* The client has it: 304. */
    char inm[256];
    snprintf(inm, sizeof(inm), "If-None-Match: \"%s\"\r\n", hash);
    corral_buf_reset(&body);
    corral_buf_reset(&head);
    cr_assert_eq(raw_get(url, inm, &body, &head), 304);
    cr_assert_eq(body.len, 0);
    /* An old hash: redirected to the current one. */
    corral_buf_reset(&head);
    cr_assert_eq(
        raw_get("/openapi/v3/apis/scheduling.volcano.sh/v1beta1?hash=0123", "", &body, &head), 301);
    snprintf(want, sizeof(want), "Location: %s", url);
    cr_assert(strstr(corral_buf_str(&head), want), "%s", corral_buf_str(&head));
    corral_buf_reset(&head);
    cr_assert_eq(raw_get("/openapi/v3/apis/nope.example.com/v1", "", &body, &head), 404);
    corral_buf_fini(&body);
    corral_buf_fini(&head);
    api_free(&idx);
}

/* --- the tables --------------------------------------------------------------------------------
 */

Test(schema_tables, names_unique_references_unlisted)
{
    size_t n = corral_schema_count();
    cr_assert_gt(n, 30);
    for (size_t i = 0; i < n; i++) {
        const corral_schema_msg_t *m = corral_schema_at(i);
        cr_assert(m && m->name);
        cr_assert_eq(corral_schema_find(m->name), m, "%s listed twice", m->name);
        cr_assert_eq(corral_schema_resolve(m), m);
        for (size_t j = 0; j < m->nfields; j++) {
            const corral_schema_field_t *f = &m->fields[j];
            cr_assert(f->type != CORRAL_SCHEMA_MSG || f->msg, "%s.%s: no message", m->name,
                      f->name);
            cr_assert_eq(corral_schema_field(m, f->name), f, "%s.%s twice", m->name, f->name);
            /* A reference resolves to the table message of its name, or to nothing. */
            if (f->msg && !f->msg->fields)
                cr_assert_eq(corral_schema_resolve(f->msg), corral_schema_find(f->msg->name));
        }
    }
    cr_assert(corral_schema_for("batch.volcano.sh/v1alpha1", "Job"));
    cr_assert(corral_schema_of_kind(CORRAL_KIND_ISVC));
    cr_assert_null(corral_schema_for("example.com/v1", "Nope"));
}

/* Field name of m, also among the fields of the messages m embeds. */
static const corral_schema_field_t *field_of(const corral_schema_msg_t *m, const char *name)
{
    m = corral_schema_resolve(m);
    for (size_t i = 0; m && i < m->nfields; i++) {
        const corral_schema_field_t *f = &m->fields[i];
        if (f->flags & CORRAL_SCHEMA_INLINE) {
            const corral_schema_field_t *in = field_of(f->msg, name);
            if (in)
                return in;
        } else if (strcmp(f->name, name) == 0) {
            return f;
        }
    }
    return NULL;
}

/* Every key of v is a field the schema m names, recursively (what
 * kubectl's validation refuses as "unknown field"). */
static void fits(const corral_val_t *v, const corral_schema_msg_t *m, const char *file,
                 const char *path)
{
    m = corral_schema_resolve(m);
    if (!m || !m->nfields || !v || v->kind != CORRAL_VAL_MAP)
        return;
    for (size_t i = 0; i < v->n; i++) {
        const char *key = v->pairs[i].key->s;
        const corral_schema_field_t *f = field_of(m, key);
        if (!f && !*path && (!strcmp(key, "apiVersion") || !strcmp(key, "kind")))
            continue; /* TypeMeta: not in the protobuf messages, added by the documents */
        cr_assert(f, "%s: %s.%s is not in %s", file, path, key, m->name);
        if (f->type != CORRAL_SCHEMA_MSG)
            continue;
        char sub[512];
        snprintf(sub, sizeof(sub), "%s.%s", path, key);
        const corral_val_t *val = v->pairs[i].val;
        if ((f->flags & CORRAL_SCHEMA_REPEATED) && (f->flags & CORRAL_SCHEMA_MAP)) {
            continue; /* lists of messages by key: none in the manifests */
        } else if (f->flags & CORRAL_SCHEMA_REPEATED) {
            for (size_t j = 0; val->kind == CORRAL_VAL_SEQ && j < val->n; j++)
                fits(val->items[j], f->msg, file, sub);
        } else if (f->flags & CORRAL_SCHEMA_MAP) {
            for (size_t j = 0; val->kind == CORRAL_VAL_MAP && j < val->n; j++)
                fits(val->pairs[j].val, f->msg, file, sub);
        } else {
            fits(val, f->msg, file, sub);
        }
    }
}

static size_t fit_dir(const char *dir)
{
    DIR *dp = opendir(dir);
    cr_assert(dp, "%s (tests run from the repository root)", dir);
    size_t checked = 0;
    struct dirent *de;
    while ((de = readdir(dp))) {
        size_t len = strlen(de->d_name);
        if (len < 6 || strcmp(de->d_name + len - 5, ".yaml") != 0)
            continue;
        char path[512];
        snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
        FILE *fp = fopen(path, "r");
        cr_assert(fp, "%s", path);
        corral_buf_t text;
        corral_buf_init(&text);
        char buf[4096];
        size_t got;
        while ((got = fread(buf, 1, sizeof(buf), fp)) > 0)
            corral_buf_append(&text, buf, got);
        fclose(fp);
        corral_arena_t a;
        corral_arena_init(&a);
        corral_doc_t *docs = NULL;
        size_t n = 0;
        cr_assert_eq(corral_yaml_parse(&a, text.p, text.len, path, NULL, NULL, &docs, &n), 0, "%s",
                     path);
        for (size_t i = 0; i < n; i++) {
            const corral_val_t *root = docs[i].root;
            const corral_schema_msg_t *m = corral_schema_for(corral_val_get_str(root, "apiVersion"),
                                                             corral_val_get_str(root, "kind"));
            if (!m)
                continue;
            fits(root, m, path, "");
            checked++;
        }
        corral_arena_fini(&a);
        corral_buf_fini(&text);
    }
    closedir(dp);
    return checked;
}

Test(schema_tables, reference_manifests_fit)
{
    size_t n = fit_dir("examples") + fit_dir("examples/quickstart") + fit_dir("tests/scenarios");
    cr_assert_gt(n, 10, "only %zu objects with a schema", n);
}
