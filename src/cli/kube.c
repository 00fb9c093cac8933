/*
 * What the API-client verbs share (src/cli/kubecli.h): connection flags
 * and the client, kubectl's error and warning output, resource names,
 * URL paths, and reading and validating manifests with the object model
 * (the same decoder as `corral validate`, so a bad manifest is reported
 * with its file, line and column before anything is sent).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "cli/kubecli.h"
#include "corral/io.h"
#include "corral/json.h"
#include "corral/yaml.h"

static const char *const manifest_exts[] = {".yaml", ".yml", ".json"};

void corral__cli_init(corral__cli_t *k, const char *prog)
{
    memset(k, 0, sizeof(*k));
    k->prog = prog;
    corral_client_config_init(&k->cfg);
}

void corral__cli_fini(corral__cli_t *k)
{
    corral_client_free(k->c);
    corral_client_config_fini(&k->cfg);
}

bool corral__cli_opt(corral__cli_t *k, int c, const char *arg)
{
    switch (c) {
    case 's':
    case CORRAL__OPT_SERVER:
        k->flags.server = arg;
        return true;
    case CORRAL__OPT_TOKEN:
        k->flags.token = arg;
        return true;
    case CORRAL__OPT_KUBECONFIG:
        k->flags.kubeconfig = arg;
        return true;
    case CORRAL__OPT_CONTEXT:
        k->flags.context = arg;
        return true;
    case CORRAL__OPT_INSECURE:
        k->flags.insecure = true;
        return true;
    case CORRAL__OPT_CA:
        k->flags.ca_file = arg;
        return true;
    case 'n':
        k->flags.namespace = arg;
        return true;
    default:
        return false;
    }
}

void corral__component_flags_init(corral_client_flags_t *f)
{
    f->qps = 50;
    f->burst = 100;
    f->accept = "application/vnd.kubernetes.protobuf";
}

int corral__component_flag(const char *prog, corral_client_flags_t *f, int c, const char *arg)
{
    char *end = NULL;
    switch (c) {
    case CORRAL__OPT_QPS:
        f->qps = strtod(arg, &end);
        if (end == arg || *end || f->qps == 0 || f->qps > 1e6 || f->qps != f->qps) {
            fprintf(stderr,
                    "%s: --kube-api-qps wants a number of requests per second (e.g. 50; "
                    "-1: no limit), got \"%s\"\n",
                    prog, arg);
            return -1;
        }
        return 1;
    case CORRAL__OPT_BURST: {
        long v = strtol(arg, &end, 10);
        if (end == arg || *end || v < 1 || v > 1000000) {
            fprintf(stderr,
                    "%s: --kube-api-burst wants a whole number from 1 to 1000000, got "
                    "\"%s\"\n",
                    prog, arg);
            return -1;
        }
        f->burst = (int)v;
        return 1;
    }
    case CORRAL__OPT_CONTENT_TYPE:
        if (strcmp(arg, "application/json") != 0 &&
            strcmp(arg, "application/vnd.kubernetes.protobuf") != 0) {
            fprintf(stderr,
                    "%s: --kube-api-content-type is application/json or "
                    "application/vnd.kubernetes.protobuf, not \"%s\"\n",
                    prog, arg);
            return -1;
        }
        f->accept = arg;
        return 1;
    case 'n':
        return 0; /* the verbs' namespace, not a component flag */
    default: {
        corral__cli_t k; /* the connection flags, as the verbs take them */
        memset(&k, 0, sizeof(k));
        k.flags = *f;
        if (!corral__cli_opt(&k, c, arg))
            return 0;
        *f = k.flags;
        return 1;
    }
    }
}

bool corral__cli_connect(corral__cli_t *k)
{
    char err[1024] = "";
    if (corral_client_config_load(&k->flags, &k->cfg, err, sizeof(err)) != 0) {
        fprintf(stderr, "%s: %s\n", k->prog, err);
        return false;
    }
    k->ns = k->cfg.namespace;
    k->c = corral_client_new(&k->cfg);
    if (!k->c) {
        fprintf(stderr, "%s: cannot initialise libcurl\n", k->prog);
        return false;
    }
    return true;
}

void corral__cli_warnings(const corral_client_resp_t *r)
{
    const char *p = r->warnings.p;
    while (p && *p) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        fprintf(stderr, "Warning: %.*s\n", (int)n, p);
        p = nl ? nl + 1 : p + n;
    }
}

void corral__cli_error(corral__cli_t *k, const corral_client_resp_t *r)
{
    if (!r->code) {
        fprintf(stderr, "%s: cannot reach the API server at %s: %s\n", k->prog,
                corral_client_server(k->c), r->error[0] ? r->error : "no response");
        return;
    }
    char reason[64], msg[4096];
    corral_client_error(r, reason, sizeof(reason), msg, sizeof(msg));
    if (reason[0])
        fprintf(stderr, "Error from server (%s): %s\n", reason, msg);
    else
        fprintf(stderr, "Error from server (HTTP %ld): %s\n", r->code, msg);
}

const corral_kind_info_t *corral__cli_resource(corral__cli_t *k, const char *name)
{
    const corral_kind_info_t *info = corral_kind_find_resource(name);
    if (!info)
        fprintf(stderr, "error: the server doesn't have a resource type \"%s\"\n", name);
    (void)k;
    return info;
}

const char *corral__cli_path(corral_arena_t *a, const corral_kind_info_t *k, const char *ns,
                             const char *name, const char *sub)
{
    corral_buf_t b;
    corral_buf_init(&b);
    if (k->group[0])
        corral_buf_printf(&b, "/apis/%s/%s", k->group, k->version);
    else
        corral_buf_printf(&b, "/api/%s", k->version);
    if (k->namespaced && ns)
        corral_buf_printf(&b, "/namespaces/%s", ns);
    corral_buf_printf(&b, "/%s", k->plural);
    if (name)
        corral_buf_printf(&b, "/%s", name);
    if (sub)
        corral_buf_printf(&b, "/%s", sub);
    const char *p = corral_arena_strdup(a, corral_buf_str(&b));
    corral_buf_fini(&b);
    return p;
}

const char *corral__cli_kind_ref(corral_arena_t *a, const corral_kind_info_t *k)
{
    char *lk = corral_arena_strdup(a, k->name);
    for (char *p = lk; *p; p++)
        *p = (char)((*p >= 'A' && *p <= 'Z') ? *p + 32 : *p);
    return k->group[0] ? corral_arena_printf(a, "%s.%s", lk, k->group) : lk;
}

corral_val_t *corral__cli_get(corral__cli_t *k, corral_arena_t *a, const char *path, long *code)
{
    corral_client_resp_t r;
    corral_client_resp_init(&r);
    corral_val_t *v = NULL;
    corral_client_request(k->c, "GET", path, NULL, NULL, 0, &r);
    if (code)
        *code = r.code;
    if (r.code == 200) {
        corral_json_err_t e;
        if (corral_json_parse(a, r.body.p ? r.body.p : "", r.body.len, &v, &e) != 0) {
            fprintf(stderr, "%s: the server's answer is not JSON: %s\n", k->prog, e.msg);
            v = NULL;
        }
    } else if (!code || r.code != 404) {
        corral__cli_error(k, &r);
    }
    corral_client_resp_fini(&r);
    return v;
}

corral_val_t *corral__cli_json(corral_arena_t *a, const corral_buf_t *body)
{
    corral_val_t *v = NULL;
    if (!body->len || corral_json_parse(a, body->p, body->len, &v, NULL) != 0)
        return NULL;
    return v;
}

int64_t corral__cli_now_us(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (int64_t)tv.tv_sec * 1000000 + tv.tv_usec;
}

/* --- manifests ---------------------------------------------------------------------------- */

static bool is_json(const char *path)
{
    size_t n = strlen(path);
    return n > 5 && strcmp(path + n - 5, ".json") == 0;
}

typedef struct docs {
    corral__cli_doc_t *items;
    size_t n, cap;
} docs_t;

static void add_doc(corral_arena_t *a, docs_t *d, corral_val_t *root, const corral_obj_t *o,
                    const char *file, int line)
{
    if (d->n == d->cap) {
        size_t ncap = d->cap ? 2 * d->cap : 16;
        d->items =
            corral_arena_grow(a, d->items, d->cap * sizeof(*d->items), ncap * sizeof(*d->items));
        d->cap = ncap;
    }
    corral__cli_doc_t *x = &d->items[d->n++];
    x->root = root;
    x->info = o->info;
    snprintf(x->where, sizeof(x->where), "%s:%d", file, line);
}

static void read_one(const char *path, corral_arena_t *a, docs_t *out, corral_diag_t *diag)
{
    const char *name = strcmp(path, "-") == 0 ? "<stdin>" : corral_arena_strdup(a, path);
    char *data = NULL;
    size_t len = 0;
    if (corral_file_read(path, CORRAL_YAML_MAX_BYTES, diag, &data, &len) != 0)
        return;
    corral_doc_t *docs = NULL;
    size_t ndocs = 0;
    corral_yaml_opts_t opts = {.json = is_json(path)};
    int rc = corral_yaml_parse(a, data, len, name, &opts, diag, &docs, &ndocs);
    size_t objects = 0;
    for (size_t i = 0; i < ndocs; i++) {
        if (!docs[i].root)
            continue;
        objects++;
        corral_obj_t *o = NULL;
        if (corral_obj_decode(a, docs[i].root, name, diag, &o) == 0)
            add_doc(a, out, docs[i].root, o, name, docs[i].root->line);
    }
    if (rc == 0 && objects == 0)
        corral_diag_add(diag, CORRAL_SEV_ERROR, name, 0, 0, NULL,
                        "no objects found (the file is empty or only comments)");
    corral_free(data);
}

size_t corral__cli_read_manifests(char *const *paths, size_t npaths, corral_arena_t *a,
                                  corral__cli_doc_t **docs, size_t *ndocs)
{
    corral_diag_t diag;
    corral_diag_init(&diag);
    char **files = NULL;
    size_t nfiles = 0;
    for (size_t i = 0; i < npaths; i++)
        corral_path_expand(paths[i], manifest_exts, CORRAL_ARRAY_LEN(manifest_exts), &diag, &files,
                           &nfiles);
    docs_t out = {NULL, 0, 0};
    for (size_t i = 0; i < nfiles; i++) {
        read_one(files[i], a, &out, &diag);
        corral_free(files[i]);
    }
    corral_free(files);
    if (nfiles == 0 && diag.errors == 0)
        corral_diag_add(&diag, CORRAL_SEV_ERROR, NULL, 0, 0, NULL,
                        "no .yaml, .yml or .json files found");
    corral_diag_sort(&diag);
    corral_diag_print(&diag, stderr);
    size_t errors = diag.errors;
    corral_diag_fini(&diag);
    *docs = out.items;
    *ndocs = out.n;
    return errors;
}
