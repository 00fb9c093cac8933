/*
 * corral.dev/v1alpha1 SchedulerConfiguration: which actions run, the node
 * scoring policy and the corral policy's criteria (docs/scheduling.md,
 * "Configuration"). Everything is optional; what is left out keeps the
 * engine's default. `actions` is read in both forms people write: Volcano's
 * comma-separated string ("enqueue, allocate, backfill") and a YAML list.
 */
#include <string.h>

#include "corral/hint.h"
#include "model/model_int.h"

static const char *const action_names[] = {"enqueue", "allocate", "backfill", "preempt", "reclaim"};

/* Must list the engine's policy names (tests/model checks they agree). */
static const char *const policy_names[] = {"corral",  "binpack", "spread", "random",
                                           "bestfit", "dotprod", "fgd"};

static void add_action(corral__dec_t *d, const corral_val_t *v, const char *name, size_t len,
                       unsigned *bits)
{
    char word[32];
    if (len >= sizeof(word))
        len = sizeof(word) - 1;
    memcpy(word, name, len);
    word[len] = 0;
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(action_names); i++) {
        if (strcmp(word, action_names[i]) == 0) {
            *bits |= 1u << i;
            return;
        }
    }
    const char *best = corral_hint_closest(word, action_names, CORRAL_ARRAY_LEN(action_names));
    if (best)
        corral__dec_err(d, v, "unknown action \"%s\"; did you mean `%s`?", word, best);
    else
        corral__dec_err(d, v,
                        "unknown action \"%s\"; actions are enqueue, allocate, backfill, "
                        "preempt and reclaim",
                        word);
}

/* "enqueue, allocate" (Volcano's form): words separated by commas and blanks. */
static void split_actions(corral__dec_t *d, const corral_val_t *v, unsigned *bits)
{
    const char *s = v->s;
    while (*s) {
        s += strspn(s, ", \t");
        size_t len = strcspn(s, ", \t");
        if (len)
            add_action(d, v, s, len, bits);
        s += len;
    }
}

static void dec_actions(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_schedconf_t *c = out;
    if (!v || v->kind == CORRAL_VAL_NULL)
        return;
    c->actions_set = true;
    if (v->kind == CORRAL_VAL_STR) {
        split_actions(d, v, &c->actions);
        return;
    }
    if (!corral__dec_expect(d, v, CORRAL_VAL_SEQ))
        return;
    for (size_t i = 0; i < v->n; i++) {
        const corral_val_t *e = v->items[i];
        size_t m = corral__dec_enter_index(d, i);
        if (corral__dec_expect(d, e, CORRAL_VAL_STR))
            add_action(d, e, e->s, strlen(e->s), &c->actions);
        corral__dec_leave(d, m);
    }
}

static void dec_policy(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral__dec_enum(d, v, out, policy_names, CORRAL_ARRAY_LEN(policy_names));
}

static void dec_opt_bool(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_opt_i32_t *o = out;
    bool b = false;
    if (!v || v->kind == CORRAL_VAL_NULL)
        return;
    size_t before = d->errors;
    corral__dec_bool(d, v, &b);
    if (d->errors == before)
        *o = (corral_opt_i32_t){true, b};
}

static void dec_opt_count(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_opt_i32_t *o = out;
    size_t before = d->errors;
    corral__dec_opt_i32(d, v, o);
    if (d->errors == before && o->set && o->v < 0)
        corral__dec_err(d, v, "must be 0 (no limit) or more, got %d", o->v);
}

static void dec_seed(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_opt_i64_t *o = out;
    size_t before = d->errors;
    corral__dec_opt_i64(d, v, o);
    if (d->errors == before && o->set && o->v < 0)
        corral__dec_err(d, v, "must be 0 or more, got %lld", (long long)o->v);
}

/* scoring.modelCache: 0 (off) to 100, a preferred affinity term's scale. */
static void dec_weight(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_opt_i32_t *o = out;
    size_t before = d->errors;
    corral__dec_opt_i32(d, v, o);
    if (d->errors == before && o->set && (o->v < 0 || o->v > 100))
        corral__dec_err(d, v, "must be from 0 to 100, got %d", o->v);
}

static const corral__field_t scoring_fields[] = {
    CORRAL__F("preferences", dec_opt_bool, corral_schedconf_t, preferences),
    CORRAL__F("fragmentation", dec_opt_bool, corral_schedconf_t, fragmentation),
    CORRAL__F("packing", dec_opt_bool, corral_schedconf_t, packing),
    CORRAL__F("topology", dec_opt_bool, corral_schedconf_t, topology),
    CORRAL__F("cpuMemory", dec_opt_bool, corral_schedconf_t, cpu_memory),
    CORRAL__F("modelCache", dec_weight, corral_schedconf_t, model_cache),
};

static void dec_scoring(corral__dec_t *d, const corral_val_t *v, void *out)
{
    CORRAL__DEC_MAP(d, v, scoring_fields, out);
}

/* fairShare.halfLife: "0s" (off) or 1m to 8760h. */
static void dec_half_life(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_schedconf_t *c = out;
    if (!v || v->kind == CORRAL_VAL_NULL)
        return;
    size_t before = d->errors;
    int64_t ns = 0;
    corral__dec_duration(d, v, &ns);
    if (d->errors != before)
        return;
    if (ns < 0)
        corral__dec_err(d, v, "halfLife must not be negative, got %s", v->s);
    else if (ns != 0 && (ns < CORRAL_FAIR_HALF_LIFE_MIN_NS || ns > CORRAL_FAIR_HALF_LIFE_MAX_NS))
        corral__dec_err(
            d, v, "halfLife must be between 1m and 8760h (a year), or 0s for off; got %s", v->s);
    else
        c->fair_half_life_ns = ns;
}

/* fairShare.usageWeight: a number from 0 to 1. */
static void dec_usage_weight(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_schedconf_t *c = out;
    if (!v || v->kind == CORRAL_VAL_NULL)
        return;
    if (v->kind != CORRAL_VAL_INT && v->kind != CORRAL_VAL_FLOAT) {
        corral__dec_err(d, v, "usageWeight must be a number from 0 to 1, got %s",
                        v->s ? v->s : "a list or map");
        return;
    }
    double w = v->kind == CORRAL_VAL_INT ? (double)v->u.i : v->u.f;
    if (!(w >= 0 && w <= 1)) {
        corral__dec_err(d, v,
                        "usageWeight must be from 0 (present allocation only) to 1 (past "
                        "usage only), got %s",
                        v->s);
        return;
    }
    c->fair_usage_weight = w;
    c->fair_usage_weight_set = true;
}

static const corral__field_t fair_fields[] = {
    CORRAL__WHOLE("halfLife", dec_half_life),
    CORRAL__WHOLE("usageWeight", dec_usage_weight),
};

static void dec_fair_share(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_schedconf_t *c = out;
    if (!v || v->kind == CORRAL_VAL_NULL)
        return;
    size_t before = d->errors;
    if (!CORRAL__DEC_MAP(d, v, fair_fields, out) || d->errors != before)
        return;
    if (!corral_val_get(v, "halfLife")) {
        corral__dec_err(d, v, "fairShare needs halfLife (e.g. 168h; 0s turns it off)");
        return;
    }
    c->fair_share_set = true;
}

static const corral__field_t spec_fields[] = {
    CORRAL__WHOLE("actions", dec_actions),
    CORRAL__F("policy", dec_policy, corral_schedconf_t, policy),
    CORRAL__F("strictOrder", dec_opt_bool, corral_schedconf_t, strict_order),
    CORRAL__F("seed", dec_seed, corral_schedconf_t, seed),
    CORRAL__F("maxEvictionsPerCycle", dec_opt_count, corral_schedconf_t, max_evictions),
    CORRAL__WHOLE("scoring", dec_scoring),
    CORRAL__WHOLE("fairShare", dec_fair_share),
};

static void dec_spec(corral__dec_t *d, const corral_val_t *v, void *out)
{
    CORRAL__DEC_MAP(d, v, spec_fields, out);
}

static const corral__field_t top_fields[] = {
    CORRAL__TOP_FIELDS,
    CORRAL__WHOLE("spec", dec_spec),
};

void corral__kind_schedconf(corral__dec_t *d, const corral_val_t *root, corral_obj_t *o)
{
    corral_schedconf_t *c = corral_arena_alloc(d->a, sizeof(*c));
    memset(c, 0, sizeof(*c));
    o->u.schedconf = c;
    CORRAL__DEC_MAP(d, root, top_fields, c);
    const corral_val_t *acts = corral_val_dig(root, "spec.actions");
    if (c->actions_set && !(c->actions & CORRAL_ACTION_ALLOCATE) && d->errors == 0)
        corral__dec_warn(d, acts, "spec.actions has no allocate: no pod will ever be placed");
}
