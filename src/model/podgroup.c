/*
 * Volcano PodGroup (scheduling.volcano.sh/v1beta1): the gang a set of pods is
 * scheduled as. Decodes minMember (default 1), minTaskMember, queue (default
 * "default"), priorityClassName, minResources and networkTopology, and the
 * status Volcano writes (phase, running/succeeded/failed counts, conditions).
 * Also home of the networkTopology decoder that Volcano Jobs share.
 */
#include <string.h>

#include "model/model_int.h"

/* --- networkTopology (shared with batch.volcano.sh Jobs) ------------------------ */

static void dec_topology_mode(corral__dec_t *d, const corral_val_t *v, void *out)
{
    static const char *const modes[] = {"hard", "soft"};
    corral__dec_enum(d, v, out, modes, CORRAL_ARRAY_LEN(modes));
}

static const corral__field_t topology_fields[] = {
    CORRAL__F("mode", dec_topology_mode, corral_network_topology_t, mode),
    CORRAL__F("highestTierAllowed", corral__dec_opt_i32, corral_network_topology_t, highest_tier),
    CORRAL__KEEP("highestTierName"),
};

/*
 * {mode: hard|soft, highestTierAllowed: N}. A present networkTopology without
 * a mode is "hard", as Volcano defaults it; an absent (or null) one leaves mode
 * NULL. With hard, N is required: it is the whole constraint.
 */
void corral__dec_network_topology(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_network_topology_t *t = out;
    if (!v || v->kind == CORRAL_VAL_NULL)
        return;
    if (!CORRAL__DEC_MAP(d, v, topology_fields, t))
        return;
    const corral_val_t *mode_v = corral_val_get(v, "mode");
    if (!t->mode) {
        if (mode_v && mode_v->kind != CORRAL_VAL_NULL)
            return; /* an invalid mode was already reported */
        t->mode = "hard";
    }
    const corral_val_t *tier_v = corral_val_get(v, "highestTierAllowed");
    if (t->highest_tier.set && t->highest_tier.v < 1) {
        corral__dec_err_field(d, tier_v, "highestTierAllowed",
                              "must be at least 1 (tier 1 is the fastest), got %d",
                              t->highest_tier.v);
    } else if (!t->highest_tier.set && strcmp(t->mode, "hard") == 0 &&
               (!tier_v || tier_v->kind == CORRAL_VAL_NULL)) {
        bool by_name = corral_val_get(v, "highestTierName") != NULL;
        corral__dec_err_field(d, mode_v ? mode_v : v, "highestTierAllowed",
                              "required when mode is hard%s: the highest HyperNode tier the "
                              "group may span, e.g. `highestTierAllowed: 1`%s",
                              mode_v ? "" : " (the default mode)",
                              by_name ? " (Corral does not resolve highestTierName)" : "");
    }
}

/* --- minTaskMember: task name -> minimum pods ------------------------------------ */

static void dec_min_task_member(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_podgroup_t *pg = out;
    if (!v || v->kind == CORRAL_VAL_NULL)
        return;
    if (!corral__dec_expect(d, v, CORRAL_VAL_MAP) || v->n == 0)
        return;
    pg->min_task_member = corral_arena_alloc(d->a, v->n * sizeof(*pg->min_task_member));
    for (size_t i = 0; i < v->n; i++) {
        const corral_val_t *key = v->pairs[i].key;
        const corral_val_t *val = v->pairs[i].val;
        size_t m = corral__dec_enter(d, key->s);
        corral_opt_i32_t count = {false, 0};
        if (!val || val->kind == CORRAL_VAL_NULL)
            corral__dec_err(d, val && val->line ? val : key,
                            "expected the minimum number of pods of task \"%s\", got nothing",
                            key->s);
        else
            corral__dec_opt_i32(d, val, &count);
        if (count.set && count.v < 0)
            corral__dec_err(d, val, "must be greater than or equal to 0, got %d", count.v);
        corral__dec_leave(d, m);
        if (!*key->s) {
            corral__dec_err(d, key, "a task name must not be empty");
            continue;
        }
        if (!count.set || count.v < 0)
            continue;
        corral_task_count_t *tc = &pg->min_task_member[pg->nmin_task_member++];
        tc->name = key->s;
        tc->count = count.v;
    }
}

/* --- the PodGroup kind ------------------------------------------------------------- */

static const corral__field_t pg_spec_fields[] = {
    CORRAL__F("minMember", corral__dec_int32, corral_podgroup_t, min_member),
    CORRAL__WHOLE("minTaskMember", dec_min_task_member),
    CORRAL__F("queue", corral__dec_str, corral_podgroup_t, queue),
    CORRAL__F("priorityClassName", corral__dec_str, corral_podgroup_t, priority_class_name),
    CORRAL__F("minResources", corral__dec_reslist, corral_podgroup_t, min_resources),
    CORRAL__F("networkTopology", corral__dec_network_topology, corral_podgroup_t, topology),
    CORRAL__KEEP("preemptable"),
    CORRAL__KEEP("subGroupPolicy"),
};

static void dec_pg_phase(corral__dec_t *d, const corral_val_t *v, void *out)
{
    static const char *const phases[] = {"Pending", "Running", "Unknown", "Inqueue", "Completed"};
    corral__dec_enum(d, v, out, phases, CORRAL_ARRAY_LEN(phases));
}

static const corral__field_t pg_status_fields[] = {
    CORRAL__F("phase", dec_pg_phase, corral_podgroup_t, phase),
    CORRAL__F("running", corral__dec_int32, corral_podgroup_t, running),
    CORRAL__F("succeeded", corral__dec_int32, corral_podgroup_t, succeeded),
    CORRAL__F("failed", corral__dec_int32, corral_podgroup_t, failed),
    CORRAL__F("conditions", corral__dec_conditions, corral_podgroup_t, conditions),
};

static void dec_pg_spec(corral__dec_t *d, const corral_val_t *v, void *out)
{
    CORRAL__DEC_MAP(d, v, pg_spec_fields, out);
}

static void dec_pg_status(corral__dec_t *d, const corral_val_t *v, void *out)
{
    CORRAL__DEC_MAP(d, v, pg_status_fields, out);
}

static const corral__field_t pg_fields[] = {
    CORRAL__TOP_FIELDS,
    CORRAL__WHOLE("spec", dec_pg_spec),
    CORRAL__WHOLE("status", dec_pg_status),
};

static void check_pg(corral__dec_t *d, const corral_val_t *root, const corral_podgroup_t *pg)
{
    const corral_val_t *spec = corral_val_get(root, "spec");
    if (pg->min_member < 0)
        corral__dec_err_field(d, corral_val_get(spec, "minMember"), "spec.minMember",
                              "must be greater than or equal to 0, got %d", pg->min_member);
    const corral_val_t *q = corral_val_get(spec, "queue");
    if (q && q->kind == CORRAL_VAL_STR && *pg->queue) {
        const char *err = corral__dns1123_subdomain_error(pg->queue);
        if (err)
            corral__dec_err_field(d, q, "spec.queue", "invalid queue name \"%s\": %s", pg->queue,
                                  err);
    }
    size_t m = corral__dec_enter(d, "spec.minResources");
    corral__check_resources(d, corral_val_get(spec, "minResources"), &pg->min_resources);
    corral__dec_leave(d, m);
}

void corral__kind_podgroup(corral__dec_t *d, const corral_val_t *root, corral_obj_t *o)
{
    corral_podgroup_t *pg = corral_arena_alloc(d->a, sizeof(*pg));
    o->u.pg = pg;
    pg->min_member = 1;
    pg->queue = "default";
    CORRAL__DEC_MAP(d, root, pg_fields, pg);
    if (!pg->queue || !*pg->queue)
        pg->queue = "default";
    check_pg(d, root, pg);
}
