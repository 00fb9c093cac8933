/*
 * corral validate -f PATH...: read manifests (files, directories searched
 * recursively for .yaml/.yml/.json, or - for standard input), decode every
 * document, print "ok  <ref>" on stdout for each valid object and every error
 * and warning on stderr as FILE:LINE:COL: path: message. Exit 0 when all are
 * valid, 2 when any is not (or, with --strict, when any warning was printed).
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "corral/engine.h"
#include "corral/io.h"
#include "corral/model.h"
#include "corral/yaml.h"

static const char *const manifest_exts[] = {".yaml", ".yml", ".json"};

typedef struct vstats {
    size_t objects;
    size_t errors;
    size_t warnings;
} vstats_t;

static bool is_json(const char *path)
{
    size_t n = strlen(path);
    return n > 5 && strcmp(path + n - 5, ".json") == 0;
}

/* What the scheduling engine says of a file's objects taken together: the
 * limits it has (more kinds of extended resources than it tracks, more GPUs
 * on a node than it places on, queue trees too deep or looping) and
 * annotations it reads. Pods bound to a node are left out (their node may
 * be in another file). */
static void engine_check(corral_engine_t *e, const corral_obj_t *o, corral_diag_t *diag)
{
    if (o->info->kind == CORRAL_KIND_POD && o->u.pod->spec.node_name && *o->u.pod->spec.node_name)
        return;
    corral_engine_upsert(e, o, 0, diag);
}

/* Validate one file: parse, decode each document, print results. */
static void validate_file(const char *path, vstats_t *st)
{
    corral_diag_t diag;
    corral_diag_init(&diag);
    corral_arena_t arena;
    corral_arena_init(&arena);
    const char *name = strcmp(path, "-") == 0 ? "<stdin>" : path;
    char *data = NULL;
    size_t len = 0;
    if (corral_file_read(path, CORRAL_YAML_MAX_BYTES, &diag, &data, &len) == 0) {
        corral_doc_t *docs = NULL;
        size_t ndocs = 0;
        corral_yaml_opts_t opts = {.json = is_json(path)};
        int rc = corral_yaml_parse(&arena, data, len, name, &opts, &diag, &docs, &ndocs);
        size_t objects = 0;
        corral_engine_t *e = NULL;
        corral_engine_new(NULL, &e);
        for (size_t i = 0; i < ndocs; i++) {
            if (!docs[i].root)
                continue; /* an empty document ("---" twice) is not an object */
            objects++;
            corral_obj_t *o = NULL;
            if (corral_obj_decode(&arena, docs[i].root, name, &diag, &o) == 0) {
                char ref[512];
                size_t before = diag.errors;
                engine_check(e, o, &diag);
                if (diag.errors == before)
                    printf("ok  %s\n", corral_obj_ref(o, ref, sizeof(ref)));
                st->objects++;
            }
        }
        corral_engine_free(e);
        if (rc == 0 && objects == 0)
            corral_diag_add(&diag, CORRAL_SEV_ERROR, name, 0, 0, NULL,
                            "no objects found (the file is empty or only comments)");
    }
    fflush(stdout);
    corral_diag_sort(&diag);
    corral_diag_print(&diag, stderr);
    st->errors += diag.errors;
    st->warnings += diag.warnings;
    corral_free(data);
    corral_arena_fini(&arena);
    corral_diag_fini(&diag);
}

static void validate_usage(FILE *fp)
{
    fprintf(fp, "usage: corral validate -f PATH [-f PATH...] [--strict]\n"
                "\n"
                "  -f, --filename PATH  a manifest file, a directory (searched recursively\n"
                "                       for .yaml, .yml and .json) or - for standard input\n"
                "      --strict         treat warnings (unknown fields) as errors\n"
                "\n"
                "Prints \"ok  Kind/namespace/name\" for each valid object and\n"
                "FILE:LINE:COL: field: message for each problem. Exit status: 0 all valid,\n"
                "2 some object is invalid.\n");
}

int corral_cmd_validate(int argc, char **argv)
{
    static const struct option opts[] = {{"filename", required_argument, NULL, 'f'},
                                         {"strict", no_argument, NULL, 's'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    const char *paths[256];
    size_t npaths = 0;
    bool strict = false;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "f:h", opts, NULL)) != -1) {
        if (c == 'f' && npaths < CORRAL_ARRAY_LEN(paths)) {
            paths[npaths++] = optarg;
        } else if (c == 's') {
            strict = true;
        } else if (c == 'h') {
            validate_usage(stdout);
            return CORRAL_EXIT_OK;
        } else {
            validate_usage(stderr);
            return CORRAL_EXIT_INVALID;
        }
    }
    for (; optind < argc && npaths < CORRAL_ARRAY_LEN(paths); optind++)
        paths[npaths++] = argv[optind];
    if (npaths == 0) {
        fprintf(stderr, "corral validate: no input; give -f FILE, -f DIR or -f -\n");
        return CORRAL_EXIT_INVALID;
    }
    corral_diag_t diag;
    corral_diag_init(&diag);
    char **files = NULL;
    size_t nfiles = 0;
    for (size_t i = 0; i < npaths; i++)
        corral_path_expand(paths[i], manifest_exts, CORRAL_ARRAY_LEN(manifest_exts), &diag, &files,
                           &nfiles);
    corral_diag_print(&diag, stderr);
    vstats_t st = {0, diag.errors, 0};
    for (size_t i = 0; i < nfiles; i++) {
        validate_file(files[i], &st);
        corral_free(files[i]);
    }
    corral_free(files);
    corral_diag_fini(&diag);
    if (nfiles == 0 && st.errors == 0) {
        fprintf(stderr, "corral validate: no .yaml, .yml or .json files found\n");
        return CORRAL_EXIT_INVALID;
    }
    if (st.errors || (strict && st.warnings))
        return CORRAL_EXIT_INVALID;
    return CORRAL_EXIT_OK;
}
