/*
 * The corral.dev/v1alpha1 Scenario document `corral sim` runs (the contract is
 * docs SCENARIOS.md, "The Scenario document"): a description and steps, each
 * with a time (`at`, never decreasing), objects to apply (decoded as full
 * objects of their own kinds, so their errors point at their own fields),
 * pods to delete or complete, and expectations checked once the scheduler is
 * quiet. Names are checked for shape here ("pod", "ns/pod", "Kind/ns/name");
 * whether they exist is for the simulator to say.
 */
#include <string.h>

#include "model/model_int.h"

/* --- references -------------------------------------------------------------------- */

/* A name with at most max_slashes '/' and no empty part (for three parts,
 * "Kind/ns/name", the namespace may be empty: a cluster-scoped object). */
static bool ref_ok(const char *s, int max_slashes)
{
    int slashes = 0;
    size_t len = strlen(s);
    for (size_t i = 0; i < len; i++)
        slashes += s[i] == '/';
    if (len == 0 || slashes > max_slashes || s[0] == '/' || s[len - 1] == '/')
        return false;
    return slashes == 2 || !strstr(s, "//");
}

static void check_pod_ref(corral__dec_t *d, const corral_val_t *v, const char *s)
{
    if (!ref_ok(s, 1))
        corral__dec_err(d, v, "\"%s\" is not a pod: write \"name\" or \"namespace/name\"", s);
}

static void dec_pod_ref(corral__dec_t *d, const corral_val_t *v, void *out)
{
    const char **s = out;
    *s = "";
    corral__dec_str(d, v, s);
    if (!*s)
        *s = "";
    else if (v && v->kind == CORRAL_VAL_STR)
        check_pod_ref(d, v, *s);
}

static void dec_pod_refs(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_strlist_t *l = out;
    corral__dec_seq(d, v, sizeof(const char *), dec_pod_ref, (void **)&l->items, &l->n);
}

static void dec_obj_ref(corral__dec_t *d, const corral_val_t *v, void *out)
{
    const char **s = out;
    *s = "";
    corral__dec_str(d, v, s);
    if (!*s)
        *s = "";
    else if (v && v->kind == CORRAL_VAL_STR && !ref_ok(*s, 2))
        corral__dec_err(d, v,
                        "\"%s\" is not an object: write a pod as \"name\" or \"namespace/name\", "
                        "anything else as \"Kind/namespace/name\"",
                        *s);
}

static void dec_obj_refs(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_strlist_t *l = out;
    corral__dec_seq(d, v, sizeof(const char *), dec_obj_ref, (void **)&l->items, &l->n);
}

/* A map keyed by pod; values must be non-empty strings (what: what they are). */
static void dec_pod_map(corral__dec_t *d, const corral_val_t *v, corral_strmap_t *m,
                        const char *what)
{
    corral__dec_strmap(d, v, m);
    for (size_t i = 0; i < m->n; i++) {
        const corral_val_pair_t *p = &v->pairs[i];
        size_t mk = corral__dec_enter(d, p->key->s);
        check_pod_ref(d, p->key, p->key->s);
        if (p->val->kind == CORRAL_VAL_NULL || (p->val->kind == CORRAL_VAL_STR && !*p->val->s))
            corral__dec_err(d, p->val->line ? p->val : p->key, "needs %s", what);
        corral__dec_leave(d, mk);
    }
}

/* --- expectations ------------------------------------------------------------------- */

static void dec_bound(corral__dec_t *d, const corral_val_t *v, void *out)
{
    dec_pod_map(d, v, out, "a node name: the node the pod must be bound to");
}

static void dec_reason(corral__dec_t *d, const corral_val_t *v, void *out)
{
    dec_pod_map(d, v, out, "text: a part of the pod's pending reason");
}

static void dec_group(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_strlist_t *l = out;
    if (v && v->kind == CORRAL_VAL_STR) {
        corral__dec_err(d, v,
                        "sameNode is a list of groups of pods, got the name \"%s\"; write "
                        "`sameNode: [[%s, ...]]`",
                        v->s, v->s);
        return;
    }
    dec_pod_refs(d, v, l);
    if (v && v->kind == CORRAL_VAL_SEQ && l->n < 2)
        corral__dec_warn(d, v, "a group of %zu pod(s) always holds; list two or more", l->n);
}

static void dec_same_node(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_scn_expect_t *e = out;
    corral__dec_seq(d, v, sizeof(corral_strlist_t), dec_group, (void **)&e->same_node,
                    &e->nsame_node);
}

static void dec_gpu_id(corral__dec_t *d, const corral_val_t *v, void *out)
{
    int32_t *id = out;
    *id = -1;
    if (v && v->kind == CORRAL_VAL_INT && v->u.i < 0) {
        corral__dec_err(d, v, "GPUs are numbered from 0, got %s", v->s);
        return;
    }
    if (!v || v->kind == CORRAL_VAL_NULL) {
        corral__dec_err(d, v, "expected a GPU index (0, 1, ...), got nothing");
        return;
    }
    corral__dec_int32(d, v, id);
}

/* One pod's GPU list: non-negative indices, each at most once. */
static void dec_gpu_list(corral__dec_t *d, const corral_val_t *v, corral_gpu_ids_expect_t *g)
{
    if (v && (v->kind == CORRAL_VAL_STR || v->kind == CORRAL_VAL_INT)) {
        corral__dec_err(d, v, "expected a list of GPU indices such as [0, 1], got %s \"%s\"",
                        corral_val_kind_name(v->kind), v->s);
        return;
    }
    corral__dec_seq(d, v, sizeof(int32_t), dec_gpu_id, (void **)&g->ids, &g->n);
    if (!v || g->n == 0)
        return;
    for (size_t i = 0; i < g->n; i++) {
        for (size_t j = 0; j < i && g->ids[i] >= 0; j++) {
            if (g->ids[i] != g->ids[j])
                continue;
            size_t m = corral__dec_enter_index(d, i);
            corral__dec_err(d, v->items[i], "GPU %d is listed twice", (int)g->ids[i]);
            corral__dec_leave(d, m);
            break;
        }
    }
}

static void dec_gpu_ids(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_scn_expect_t *e = out;
    if (!v || v->kind == CORRAL_VAL_NULL || !corral__dec_expect(d, v, CORRAL_VAL_MAP))
        return;
    e->gpu_ids = corral_arena_alloc(d->a, (v->n ? v->n : 1) * sizeof(*e->gpu_ids));
    for (size_t i = 0; i < v->n; i++) {
        corral_gpu_ids_expect_t *g = &e->gpu_ids[e->ngpu_ids++];
        g->pod = v->pairs[i].key->s;
        size_t m = corral__dec_enter(d, g->pod);
        check_pod_ref(d, v->pairs[i].key, g->pod);
        dec_gpu_list(d, v->pairs[i].val, g);
        corral__dec_leave(d, m);
    }
}

static const corral__field_t expect_fields[] = {
    CORRAL__F("scheduled", dec_pod_refs, corral_scn_expect_t, scheduled),
    CORRAL__F("pending", dec_pod_refs, corral_scn_expect_t, pending),
    CORRAL__F("evicted", dec_pod_refs, corral_scn_expect_t, evicted),
    CORRAL__F("notEvicted", dec_pod_refs, corral_scn_expect_t, not_evicted),
    CORRAL__F("bound", dec_bound, corral_scn_expect_t, bound),
    CORRAL__F("reason", dec_reason, corral_scn_expect_t, reason),
    CORRAL__WHOLE("sameNode", dec_same_node),
    CORRAL__WHOLE("gpuIds", dec_gpu_ids),
};

static void dec_expect(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_scn_expect_t *e = out;
    e->present = true;
    CORRAL__DEC_MAP(d, v, expect_fields, e);
}

/* --- steps ---------------------------------------------------------------------------- */

static void dec_at(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_opt_i64_t *o = out;
    int64_t ns = 0;
    size_t errors = d->errors;
    if (!v || v->kind == CORRAL_VAL_NULL)
        return;
    corral__dec_duration(d, v, &ns);
    if (d->errors != errors)
        return;
    if (ns < 0) {
        corral__dec_err(d, v, "must not be negative: `at` is the time since the scenario start");
        return;
    }
    o->set = true;
    o->v = ns;
}

/* Objects added by a step: each is a whole object of its own kind, decoded
 * (and reported on) as if it were a document of the file. */
static void dec_apply(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_scn_step_t *s = out;
    if (!v || v->kind == CORRAL_VAL_NULL || !corral__dec_expect(d, v, CORRAL_VAL_SEQ))
        return;
    size_t ptr_size = sizeof(corral_obj_t *); /* an array of object pointers */
    s->apply = corral_arena_alloc(d->a, (v->n ? v->n : 1) * ptr_size);
    for (size_t i = 0; i < v->n; i++) {
        const corral_val_t *item = v->items[i];
        corral_obj_t *obj = NULL;
        if (corral_obj_decode(d->a, (corral_val_t *)item, d->file, d->diag, &obj) != 0)
            d->errors++; /* reported by corral_obj_decode; counted so the scenario fails */
        if (obj && obj->info->kind == CORRAL_KIND_SCENARIO) {
            size_t m = corral__dec_enter_index(d, i);
            corral__dec_err(d, item,
                            "a step cannot apply a Scenario; a file holds at most one, at the "
                            "top level");
            corral__dec_leave(d, m);
        } else if (obj) {
            s->apply[s->napply++] = obj;
        }
    }
}

static const corral__field_t step_fields[] = {
    CORRAL__F("at", dec_at, corral_scn_step_t, at_ns),
    CORRAL__WHOLE("apply", dec_apply),
    CORRAL__F("delete", dec_obj_refs, corral_scn_step_t, del),
    CORRAL__F("complete", dec_pod_refs, corral_scn_step_t, complete),
    CORRAL__F("expect", dec_expect, corral_scn_step_t, expect),
};

static void dec_step(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_scn_step_t *s = out;
    s->line = v && v->line ? v->line : d->line;
    CORRAL__DEC_MAP(d, v, step_fields, s);
}

/* `at` never decreases; a step without it keeps the time before it. */
static void check_times(corral__dec_t *d, const corral_val_t *v, const corral_scenario_t *sc)
{
    int64_t prev = 0;
    const char *prev_text = NULL;
    for (size_t i = 0; i < sc->nsteps; i++) {
        const corral_scn_step_t *s = &sc->steps[i];
        if (!s->at_ns.set)
            continue;
        const corral_val_t *at = corral_val_get(v->items[i], "at");
        if (prev_text && s->at_ns.v < prev) {
            size_t m = corral__dec_enter_index(d, i);
            corral__dec_err_field(d, at, "at",
                                  "at %s is earlier than the previous step's %s; `at` is the "
                                  "time since the scenario start and never decreases",
                                  at->s, prev_text);
            corral__dec_leave(d, m);
            continue;
        }
        prev = s->at_ns.v;
        prev_text = at->s;
    }
}

static void dec_steps(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_scenario_t *sc = out;
    corral__dec_seq(d, v, sizeof(corral_scn_step_t), dec_step, (void **)&sc->steps, &sc->nsteps);
    if (sc->nsteps)
        check_times(d, v, sc);
}

/* --- the kind -------------------------------------------------------------------------- */

static const corral__field_t scenario_spec_fields[] = {
    CORRAL__F("description", corral__dec_str, corral_scenario_t, description),
    CORRAL__WHOLE("steps", dec_steps),
};

static void dec_scenario_spec(corral__dec_t *d, const corral_val_t *v, void *out)
{
    CORRAL__DEC_MAP(d, v, scenario_spec_fields, out);
}

static const corral__field_t scenario_fields[] = {
    CORRAL__TOP_FIELDS,
    CORRAL__WHOLE("spec", dec_scenario_spec),
};

void corral__kind_scenario(corral__dec_t *d, const corral_val_t *root, corral_obj_t *o)
{
    corral_scenario_t *sc = corral_arena_alloc(d->a, sizeof(*sc));
    o->u.scenario = sc;
    CORRAL__DEC_MAP(d, root, scenario_fields, sc);
    const corral_val_t *spec = corral_val_get(root, "spec");
    if (!spec || spec->kind == CORRAL_VAL_NULL)
        corral__dec_err_field(d, spec ? spec : root, "spec",
                              "required: a Scenario needs spec.steps (what to apply and what "
                              "to expect)");
    else if (spec->kind == CORRAL_VAL_MAP && sc->nsteps == 0 && !corral_val_get(spec, "steps"))
        corral__dec_warn(d, spec, "no steps: this Scenario checks nothing");
}
