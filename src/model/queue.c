/*
 * Volcano Queue (scheduling.volcano.sh/v1beta1): weight, capability, deserved,
 * guarantee, reclaimable, parent and priority, with Volcano's defaults (weight
 * 1, reclaimable true) and the ordering rule guarantee <= deserved <=
 * capability for every resource that both sides name.
 */
#include <string.h>

#include "model/model_int.h"

typedef struct guarantee {
    corral_reslist_t resource;
} guarantee_t;

static const corral__field_t guarantee_fields[] = {
    CORRAL__F("resource", corral__dec_reslist, guarantee_t, resource),
};

static void dec_guarantee(corral__dec_t *d, const corral_val_t *v, void *out)
{
    guarantee_t g = {{NULL, 0}};
    CORRAL__DEC_MAP(d, v, guarantee_fields, &g);
    *(corral_reslist_t *)out = g.resource;
}

static const corral__field_t queue_spec_fields[] = {
    CORRAL__F("weight", corral__dec_int32, corral_queue_t, weight),
    CORRAL__F("capability", corral__dec_reslist, corral_queue_t, capability),
    CORRAL__F("deserved", corral__dec_reslist, corral_queue_t, deserved),
    CORRAL__F("guarantee", dec_guarantee, corral_queue_t, guarantee),
    CORRAL__F("reclaimable", corral__dec_bool, corral_queue_t, reclaimable),
    CORRAL__F("parent", corral__dec_str, corral_queue_t, parent),
    CORRAL__F("priority", corral__dec_int32, corral_queue_t, priority),
    CORRAL__KEEP("affinity"),
    CORRAL__KEEP("extendClusters"),
    CORRAL__KEEP("type"),
    CORRAL__KEEP("dequeueStrategy"),
};

static const corral__field_t queue_status_fields[] = {
    CORRAL__F("state", corral__dec_str, corral_queue_t, state),
    CORRAL__KEEP("unknown"),
    CORRAL__KEEP("pending"),
    CORRAL__KEEP("running"),
    CORRAL__KEEP("inqueue"),
    CORRAL__KEEP("completed"),
    CORRAL__KEEP("reservation"),
    CORRAL__KEEP("allocated"),
};

static void dec_queue_spec(corral__dec_t *d, const corral_val_t *v, void *out)
{
    CORRAL__DEC_MAP(d, v, queue_spec_fields, out);
}

static void dec_queue_status(corral__dec_t *d, const corral_val_t *v, void *out)
{
    CORRAL__DEC_MAP(d, v, queue_status_fields, out);
}

static const corral__field_t queue_fields[] = {
    CORRAL__TOP_FIELDS,
    CORRAL__WHOLE("spec", dec_queue_spec),
    CORRAL__WHOLE("status", dec_queue_status),
};

/* Every resource in lo must be <= the same resource in hi (when hi names it). */
static void check_order(corral__dec_t *d, const corral_val_t *spec, const char *lo_path,
                        const corral_reslist_t *lo, const char *hi_name, const corral_reslist_t *hi)
{
    const corral_val_t *lo_v = corral_val_dig(spec, lo_path);
    for (size_t i = 0; i < lo->n; i++) {
        const corral_qty_t *h = corral_reslist_get(hi, lo->items[i].name);
        if (!h || corral_qty_cmp(&lo->items[i].qty, h) <= 0)
            continue;
        const corral_val_t *at = corral_val_get(lo_v, lo->items[i].name);
        const corral_val_t *hv = corral_val_get(corral_val_get(spec, hi_name), lo->items[i].name);
        size_t m = corral__dec_enter(d, "spec");
        size_t m2 = corral__dec_enter(d, lo_path);
        corral__dec_err_field(d, at, lo->items[i].name,
                              "%s is more than spec.%s (%s); a queue needs guarantee <= deserved "
                              "<= capability",
                              at ? at->s : "?", hi_name, hv ? hv->s : "?");
        corral__dec_leave(d, m2);
        corral__dec_leave(d, m);
    }
}

void corral__kind_queue(corral__dec_t *d, const corral_val_t *root, corral_obj_t *o)
{
    corral_queue_t *q = corral_arena_alloc(d->a, sizeof(*q));
    o->u.queue = q;
    q->weight = 1;
    q->reclaimable = true;
    CORRAL__DEC_MAP(d, root, queue_fields, q);
    const corral_val_t *spec = corral_val_get(root, "spec");
    if (q->weight < 1)
        corral__dec_err_field(d, corral_val_get(spec, "weight"), "spec.weight",
                              "must be a positive integer, got %d", q->weight);
    if (q->parent && strcmp(q->parent, o->meta.name ? o->meta.name : "") == 0)
        corral__dec_err_field(d, corral_val_get(spec, "parent"), "spec.parent",
                              "a queue cannot be its own parent");
    check_order(d, spec, "guarantee.resource", &q->guarantee, "deserved", &q->deserved);
    check_order(d, spec, "guarantee.resource", &q->guarantee, "capability", &q->capability);
    check_order(d, spec, "deserved", &q->deserved, "capability", &q->capability);
}
