/*
 * corral apply -f PATH: create or update every object of some manifests
 * (files, directories searched recursively, or - for standard input;
 * several documents per file). Each object is validated locally first
 * (FILE:LINE:COL messages, as `corral validate`), then created when it does
 * not exist, else sent as a JSON merge patch of the manifest: the fields
 * the manifest names take its values, the others (status, the scheduler's
 * spec.nodeName, other writers' labels) are left alone. Unlike kubectl
 * apply there is no last-applied-configuration annotation, so a field
 * deleted from the manifest is not deleted from the object (set it to null
 * in the manifest, or delete and apply again). Prints kubectl's
 * "kind/name created|configured|unchanged".
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/kubecli.h"

static void apply_usage(FILE *fp)
{
    fprintf(fp, "usage: corral apply -f PATH [-f PATH...] [-n NS] [connection flags]\n"
                "\n"
                "  -f, --filename PATH  a manifest file, a directory (searched recursively for\n"
                "                       .yaml, .yml and .json) or - for standard input\n"
                "\n"
                "Creates each object, or updates it with a merge patch of the manifest when it\n"
                "exists (fields not in the manifest are kept; see "
                "docs/apiserver.md).\n\n" CORRAL__CLI_HELP);
}

typedef struct apply_ctx {
    corral__cli_t *k;
    corral_arena_t *a;
    size_t failed;
} apply_ctx_t;

static const char *meta_str(const corral_val_t *o, const char *key)
{
    return corral_val_get_str(corral_val_get(o, "metadata"), key);
}

/* POST the object; prints "kind/name created". */
static void create(apply_ctx_t *x, const corral__cli_doc_t *d, const char *ns, const char *ref,
                   const corral_buf_t *json)
{
    corral_client_resp_t r;
    corral_client_resp_init(&r);
    const char *path = corral__cli_path(x->a, d->info, ns, NULL, NULL);
    corral_client_request(x->k->c, "POST", path, NULL, json->p, json->len, &r);
    corral__cli_warnings(&r);
    if (r.code == 201) {
        corral_arena_t a;
        corral_arena_init(&a);
        corral_val_t *v = corral__cli_json(&a, &r.body);
        const char *name = meta_str(d->root, "name");
        if (meta_str(v, "name"))
            name = meta_str(v, "name");
        printf("%s/%s created\n", ref, name ? name : "");
        corral_arena_fini(&a);
    } else {
        corral__cli_error(x->k, &r);
        x->failed++;
    }
    corral_client_resp_fini(&r);
}

/* PATCH the manifest onto the existing object. */
static void update(apply_ctx_t *x, const corral__cli_doc_t *d, const char *ns, const char *ref,
                   const corral_buf_t *json, const char *old_rv)
{
    corral_client_resp_t r;
    corral_client_resp_init(&r);
    const char *name = meta_str(d->root, "name");
    const char *path = corral__cli_path(x->a, d->info, ns, name, NULL);
    corral_client_request(x->k->c, "PATCH", path, "application/merge-patch+json", json->p,
                          json->len, &r);
    corral__cli_warnings(&r);
    if (r.code == 200) {
        corral_arena_t a;
        corral_arena_init(&a);
        const char *rv = meta_str(corral__cli_json(&a, &r.body), "resourceVersion");
        bool same = rv && old_rv && strcmp(rv, old_rv) == 0;
        printf("%s/%s %s\n", ref, name, same ? "unchanged" : "configured");
        corral_arena_fini(&a);
    } else {
        corral__cli_error(x->k, &r);
        x->failed++;
    }
    corral_client_resp_fini(&r);
}

static void apply_one(apply_ctx_t *x, corral__cli_doc_t *d)
{
    corral_val_t *meta = corral_val_ensure_map(x->a, d->root, "metadata");
    const char *ns = NULL;
    if (d->info->namespaced) {
        ns = corral_val_get_str(meta, "namespace");
        if (!ns || !*ns) {
            ns = x->k->ns;
            corral_val_set(x->a, meta, "namespace", corral_val_new_str(x->a, ns));
        } else if (x->k->flags.namespace && strcmp(ns, x->k->flags.namespace) != 0) {
            fprintf(stderr,
                    "%s: error: the namespace from the provided object \"%s\" does not match "
                    "the namespace \"%s\". You must pass '--namespace=%s' to perform this "
                    "operation.\n",
                    d->where, ns, x->k->flags.namespace, ns);
            x->failed++;
            return;
        }
    }
    const char *ref = corral__cli_kind_ref(x->a, d->info);
    corral_buf_t json;
    corral_buf_init(&json);
    corral_val_to_json(d->root, &json, false);
    const char *name = corral_val_get_str(meta, "name");
    if (!name || !*name) { /* generateName: always a new object */
        create(x, d, ns, ref, &json);
        corral_buf_fini(&json);
        return;
    }
    long code = 0;
    corral_val_t *cur =
        corral__cli_get(x->k, x->a, corral__cli_path(x->a, d->info, ns, name, NULL), &code);
    if (cur)
        update(x, d, ns, ref, &json, meta_str(cur, "resourceVersion"));
    else if (code == 404)
        create(x, d, ns, ref, &json);
    else
        x->failed++;
    corral_buf_fini(&json);
}

int corral_cmd_apply(int argc, char **argv)
{
    static const struct option opts[] = {{"filename", required_argument, NULL, 'f'},
                                         {"help", no_argument, NULL, 'h'},
                                         CORRAL__CLI_LONGOPTS,
                                         {NULL, 0, NULL, 0}};
    corral__cli_t k;
    corral__cli_init(&k, "corral apply");
    char *paths[256];
    size_t npaths = 0;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "f:hn:s:", opts, NULL)) != -1) {
        if (c == 'f' && npaths < CORRAL_ARRAY_LEN(paths)) {
            paths[npaths++] = optarg;
        } else if (c == 'h') {
            apply_usage(stdout);
            return CORRAL_EXIT_OK;
        } else if (!corral__cli_opt(&k, c, optarg)) {
            apply_usage(stderr);
            return CORRAL_EXIT_INVALID;
        }
    }
    if (npaths == 0 || optind < argc) {
        fprintf(stderr,
                "corral apply: give the manifests with -f PATH (a file, a directory or -)\n");
        return CORRAL_EXIT_INVALID;
    }
    corral_arena_t a;
    corral_arena_init(&a);
    corral__cli_doc_t *docs = NULL;
    size_t ndocs = 0;
    size_t errors = corral__cli_read_manifests(paths, npaths, &a, &docs, &ndocs);
    apply_ctx_t x = {&k, &a, errors};
    if (ndocs && corral__cli_connect(&k)) {
        for (size_t i = 0; i < ndocs; i++)
            apply_one(&x, &docs[i]);
    } else if (ndocs) {
        x.failed++;
    }
    corral__cli_fini(&k);
    corral_arena_fini(&a);
    return x.failed ? CORRAL_EXIT_FAIL : CORRAL_EXIT_OK;
}
