/*
 * Reading a SchedulerConfiguration file (`corral sim --config`, `corral
 * scheduler --config`): exactly
 * one corral.dev/v1alpha1 SchedulerConfiguration document; problems are
 * printed as FILE:LINE:COL: message.
 */
#include <string.h>

#include "corral/io.h"
#include "corral/model.h"
#include "corral/yaml.h"

static const corral_schedconf_t *pick(corral_arena_t *a, const char *path, corral_diag_t *diag,
                                      corral_doc_t *docs, size_t ndocs)
{
    const corral_obj_t *found = NULL;
    for (size_t i = 0; i < ndocs; i++) {
        corral_obj_t *o;
        if (!docs[i].root)
            continue;
        corral_obj_decode(a, docs[i].root, path, diag, &o);
        if (!o)
            continue;
        if (o->info->kind != CORRAL_KIND_SCHEDCONF)
            corral_diag_add(diag, CORRAL_SEV_ERROR, path, o->raw->line, o->raw->col, NULL,
                            "expected a corral.dev/v1alpha1 SchedulerConfiguration, got %s %s",
                            o->info->api_version, o->info->name);
        else if (found)
            corral_diag_add(diag, CORRAL_SEV_ERROR, path, o->raw->line, o->raw->col, NULL,
                            "a second SchedulerConfiguration (the first is at line %d)",
                            found->raw->line);
        else
            found = o;
    }
    if (!found && diag->errors == 0)
        corral_diag_add(diag, CORRAL_SEV_ERROR, path, 1, 1, NULL,
                        "no SchedulerConfiguration in the file");
    return found ? found->u.schedconf : NULL;
}

int corral_schedconf_load(const char *path, corral_arena_t *a, FILE *err,
                          const corral_schedconf_t **out)
{
    corral_diag_t diag;
    corral_diag_init(&diag);
    char *data = NULL;
    size_t len = 0;
    *out = NULL;
    if (corral_file_read(path, CORRAL_YAML_MAX_BYTES, &diag, &data, &len) == 0) {
        corral_doc_t *docs;
        size_t ndocs;
        /* The decoded tree points into the arena, not into data. */
        if (corral_yaml_parse(a, data, len, path, NULL, &diag, &docs, &ndocs) == 0)
            *out = pick(a, path, &diag, docs, ndocs);
    }
    corral_free(data);
    corral_diag_sort(&diag);
    corral_diag_print(&diag, err);
    int rc = diag.errors ? CORRAL_EINVAL : 0;
    if (rc)
        *out = NULL;
    corral_diag_fini(&diag);
    return rc;
}
