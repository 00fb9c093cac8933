/*
 * corral delete KIND NAME... | KIND/NAME... | -f PATH: delete objects and
 * print kubectl's `kind "name" deleted`. A pod bound to a node is deleted
 * gracefully by the server (it stays with a deletionTimestamp until its
 * node agent confirms); --grace-period=0 asks for immediate removal, as
 * kubectl's --grace-period=0 --force does. --ignore-not-found makes a
 * missing object not an error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/kubecli.h"

static void delete_usage(FILE *fp)
{
    fprintf(fp, "usage: corral delete KIND NAME... [options]\n"
                "       corral delete KIND/NAME... [options]\n"
                "       corral delete -f PATH [options]\n"
                "\n"
                "  -f, --filename PATH      delete the objects of these manifests\n"
                "      --grace-period N     seconds a running pod gets to stop (0: at once)\n"
                "      --ignore-not-found   a missing object is not an error\n\n" CORRAL__CLI_HELP);
}

typedef struct del {
    corral__cli_t k;
    corral_arena_t a;
    const char *grace;
    bool ignore_missing;
    int failed;
} del_t;

static void delete_one(del_t *d, const corral_kind_info_t *info, const char *ns, const char *name)
{
    const char *path = corral__cli_path(&d->a, info, ns, name, NULL);
    if (d->grace)
        path = corral_arena_printf(&d->a, "%s?gracePeriodSeconds=%s", path, d->grace);
    corral_client_resp_t r;
    corral_client_resp_init(&r);
    corral_client_request(d->k.c, "DELETE", path, NULL, NULL, 0, &r);
    if (r.code == 200 || r.code == 202) {
        printf("%s \"%s\" deleted\n", corral__cli_kind_ref(&d->a, info), name);
    } else if (r.code == 404 && d->ignore_missing) {
        /* nothing */
    } else {
        corral__cli_error(&d->k, &r);
        d->failed = 1;
    }
    corral_client_resp_fini(&r);
}

static void delete_manifests(del_t *d, char *const *paths, size_t n)
{
    corral__cli_doc_t *docs = NULL;
    size_t ndocs = 0;
    if (corral__cli_read_manifests(paths, n, &d->a, &docs, &ndocs) != 0)
        d->failed = 1;
    for (size_t i = 0; i < ndocs; i++) {
        const corral_val_t *m = corral_val_get(docs[i].root, "metadata");
        const char *name = corral_val_get_str(m, "name");
        const char *ns = corral_val_get_str(m, "namespace");
        if (!name || !*name)
            continue; /* generateName objects cannot be found again */
        delete_one(d, docs[i].info, ns && *ns ? ns : d->k.ns, name);
    }
}

static void delete_args(del_t *d, char **args, size_t n)
{
    if (n && strchr(args[0], '/')) {
        for (size_t i = 0; i < n; i++) {
            char *slash = strchr(args[i], '/');
            if (!slash) {
                fprintf(stderr, "error: arguments in resource/name form must have a single "
                                "resource and name\n");
                d->failed = 1;
                return;
            }
            *slash = '\0';
            const corral_kind_info_t *info = corral__cli_resource(&d->k, args[i]);
            if (!info) {
                d->failed = 1;
                return;
            }
            delete_one(d, info, d->k.ns, slash + 1);
        }
        return;
    }
    const corral_kind_info_t *info = corral__cli_resource(&d->k, args[0]);
    if (!info) {
        d->failed = 1;
        return;
    }
    for (size_t i = 1; i < n; i++)
        delete_one(d, info, d->k.ns, args[i]);
}

int corral_cmd_delete(int argc, char **argv)
{
    static const struct option opts[] = {{"filename", required_argument, NULL, 'f'},
                                         {"grace-period", required_argument, NULL, 'g'},
                                         {"ignore-not-found", no_argument, NULL, 'i'},
                                         {"help", no_argument, NULL, 'h'},
                                         CORRAL__CLI_LONGOPTS,
                                         {NULL, 0, NULL, 0}};
    del_t d;
    memset(&d, 0, sizeof(d));
    corral__cli_init(&d.k, "corral delete");
    corral_arena_init(&d.a);
    char *paths[256];
    size_t npaths = 0;
    int c, rc = 0;
    optind = 1;
    while (rc == 0 && (c = getopt_long(argc, argv, "f:hn:s:", opts, NULL)) != -1) {
        char *end = NULL;
        if (c == 'f' && npaths < CORRAL_ARRAY_LEN(paths)) {
            paths[npaths++] = optarg;
        } else if (c == 'g') {
            d.grace = optarg;
            if (strtol(optarg, &end, 10) < 0 || !*optarg || *end) {
                fprintf(stderr, "corral delete: --grace-period wants a number of seconds\n");
                rc = CORRAL_EXIT_INVALID;
            }
        } else if (c == 'i') {
            d.ignore_missing = true;
        } else if (c == 'h') {
            delete_usage(stdout);
            rc = -1;
        } else if (!corral__cli_opt(&d.k, c, optarg)) {
            delete_usage(stderr);
            rc = CORRAL_EXIT_INVALID;
        }
    }
    size_t nargs = (size_t)(argc - optind);
    if (rc == 0 && ((npaths == 0 && nargs == 0) || (npaths && nargs) ||
                    (nargs == 1 && !strchr(argv[optind], '/')))) {
        fprintf(stderr, "corral delete: give KIND NAME..., KIND/NAME... or -f PATH\n");
        rc = CORRAL_EXIT_INVALID;
    }
    if (rc == 0 && !corral__cli_connect(&d.k))
        rc = CORRAL_EXIT_FAIL;
    if (rc == 0) {
        if (npaths)
            delete_manifests(&d, paths, npaths);
        else
            delete_args(&d, argv + optind, nargs);
        rc = d.failed ? CORRAL_EXIT_FAIL : CORRAL_EXIT_OK;
    }
    corral__cli_fini(&d.k);
    corral_arena_fini(&d.a);
    return rc < 0 ? CORRAL_EXIT_OK : rc;
}
