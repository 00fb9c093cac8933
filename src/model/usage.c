/*
 * corral.dev/v1 UsageRecord: what one finished pod used, written by the
 * controller (src/controller/usage.c) and read by `corral report usage`
 * (docs/observability.md, "Accounting"). The strings a report groups
 * by are decoded; times, seconds and GPU-seconds are kept as written (the
 * report reads them from the object's value tree), but their types are
 * checked so that a hand-written record with a wrong type is refused.
 */
#include <string.h>

#include "model/model_int.h"

static void dec_number(corral__dec_t *d, const corral_val_t *v, void *out)
{
    (void)out;
    if (v && v->kind != CORRAL_VAL_NULL && v->kind != CORRAL_VAL_INT && v->kind != CORRAL_VAL_FLOAT)
        corral__dec_err(d, v, "expected a number");
}

static const corral__field_t spec_fields[] = {
    CORRAL__F("pod", corral__dec_str, corral_usage_t, pod),
    CORRAL__F("podUID", corral__dec_str, corral_usage_t, pod_uid),
    CORRAL__F("queue", corral__dec_str, corral_usage_t, queue),
    CORRAL__F("job", corral__dec_str, corral_usage_t, job),
    CORRAL__F("node", corral__dec_str, corral_usage_t, node),
    CORRAL__F("gpuModel", corral__dec_str, corral_usage_t, gpu_model),
    CORRAL__F("gpuIDs", corral__dec_str, corral_usage_t, gpu_ids),
    CORRAL__F("phase", corral__dec_str, corral_usage_t, phase),
    CORRAL__F("reason", corral__dec_str, corral_usage_t, reason),
    CORRAL__WHOLE("gpus", dec_number),
    CORRAL__WHOLE("exitCode", dec_number),
    CORRAL__WHOLE("waitSeconds", dec_number),
    CORRAL__WHOLE("runSeconds", dec_number),
    CORRAL__WHOLE("gpuSecondsAllocated", dec_number),
    CORRAL__WHOLE("gpuSecondsUsed", dec_number),
    CORRAL__KEEP("createdAt"),
    CORRAL__KEEP("scheduledAt"),
    CORRAL__KEEP("startedAt"),
    CORRAL__KEEP("finishedAt"),
};

static void dec_spec(corral__dec_t *d, const corral_val_t *v, void *out)
{
    CORRAL__DEC_MAP(d, v, spec_fields, out);
}

static const corral__field_t top_fields[] = {
    CORRAL__TOP_FIELDS,
    CORRAL__WHOLE("spec", dec_spec),
};

void corral__kind_usage(corral__dec_t *d, const corral_val_t *root, corral_obj_t *o)
{
    corral_usage_t *u = corral_arena_alloc(d->a, sizeof(*u));
    memset(u, 0, sizeof(*u));
    o->u.usage = u;
    CORRAL__DEC_MAP(d, root, top_fields, u);
    if (!corral_val_get(root, "spec"))
        corral__dec_err_field(d, root, "spec", "Required value");
}
