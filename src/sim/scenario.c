/*
 * corral sim --scenario: load a scenario file, apply its steps to the engine
 * in virtual time, run the scheduler to quiescence after each step, and check
 * the step's expectations (SCENARIOS.md §1).
 *
 * Step 0 is every document of the file other than the Scenario, plus what the
 * Scenario's first step applies. Within a step: the clock moves to `at`, then
 * `complete`, then `delete`, then `apply`; objects are applied kinds first
 * (priority classes, queues, HyperNodes, nodes, pod groups), then pods:
 * pre-bound pods with corral.dev/gpu-ids, pre-bound pods without, the rest, in
 * document order.
 */
#include <stdlib.h>
#include <string.h>

#include "corral/hmap.h"
#include "corral/io.h"
#include "corral/sim.h"
#include "corral/timefmt.h"
#include "corral/yaml.h"
#include "sim/sim_int.h"

#define ANN_STARTED_AT "corral.dev/started-at"

#define MAX_CYCLES 1000

/* --- loading ------------------------------------------------------------------------- */

static int load(scn_t *s)
{
    char *data = NULL;
    size_t len = 0;
    if (corral_file_read(s->path, CORRAL_YAML_MAX_BYTES, &s->diag, &data, &len) != 0)
        return CORRAL_EINVAL;
    s->data = data;
    corral_doc_t *docs;
    size_t ndocs;
    if (corral_yaml_parse(&s->a, data, len, s->path, NULL, &s->diag, &docs, &ndocs) != 0)
        return CORRAL_EINVAL;
    s->objs = corral_arena_alloc(&s->a, (ndocs + 1) * sizeof(corral_obj_t *));
    for (size_t i = 0; i < ndocs; i++) {
        if (!docs[i].root)
            continue;
        corral_obj_t *o;
        corral_obj_decode(&s->a, docs[i].root, s->path, &s->diag, &o);
        if (!o)
            continue;
        if (o->info->kind == CORRAL_KIND_SCHEDCONF) {
            if (s->conf)
                corral_diag_add(&s->diag, CORRAL_SEV_ERROR, s->path, o->raw->line, o->raw->col,
                                NULL, "a file holds at most one SchedulerConfiguration");
            s->conf = o->u.schedconf;
        } else if (o->info->kind != CORRAL_KIND_SCENARIO) {
            s->objs[s->nobjs++] = o;
        } else if (s->sc) {
            corral_diag_add(&s->diag, CORRAL_SEV_ERROR, s->path, o->raw->line, o->raw->col, NULL,
                            "a file holds at most one Scenario (the first is at line %d)",
                            s->scobj->raw->line);
        } else {
            s->sc = o->u.scenario;
            s->scobj = o;
        }
    }
    return s->diag.errors ? CORRAL_EINVAL : 0;
}

/* A pod's spec may not change between steps (apply would be rejected). */
static void check_immutable(scn_t *s, const corral_obj_t *o)
{
    if (o->info->kind != CORRAL_KIND_POD && o->info->kind != CORRAL_KIND_VCJOB)
        return;
    char key[600];
    snprintf(key, sizeof(key), "%s/%s/%s", o->info->name, o->meta.namespace, o->meta.name);
    const corral_val_t *spec = corral_val_get(o->raw, "spec");
    uint32_t id;
    if (!corral_hmap_get(&s->specs, key, &id)) {
        VEC_PUSH(s->spec_vals, spec); /* NOLINT(bugprone-sizeof-expression): pointers */
        corral_hmap_put(&s->specs, corral_arena_strdup(&s->a, key), (uint32_t)(s->spec_vals.n - 1));
        return;
    }
    if (!corral_val_equal(s->spec_vals.items[id], spec))
        corral_diag_add(&s->diag, CORRAL_SEV_ERROR, s->path, o->raw->line, o->raw->col, NULL,
                        "%s %s/%s: its spec changes in a later step; a %s's spec is immutable "
                        "(delete it and apply a new one)",
                        o->info->name, o->meta.namespace, o->meta.name, o->info->name);
}

static int validate_steps(scn_t *s)
{
    for (size_t i = 0; i < s->nobjs; i++)
        check_immutable(s, s->objs[i]);
    for (size_t st = 0; s->sc && st < s->sc->nsteps; st++) {
        const corral_scn_step_t *step = &s->sc->steps[st];
        for (size_t i = 0; i < step->napply; i++)
            check_immutable(s, step->apply[i]);
    }
    return s->diag.errors ? CORRAL_EINVAL : 0;
}

/* --- applying ---------------------------------------------------------------------------- */

static int apply_rank(const corral_obj_t *o)
{
    switch (o->info->kind) {
    case CORRAL_KIND_PRIORITYCLASS:
        return 0;
    case CORRAL_KIND_QUEUE:
        return 1;
    case CORRAL_KIND_HYPERNODE:
        return 2;
    case CORRAL_KIND_NODE:
        return 3;
    case CORRAL_KIND_PODGROUP:
    case CORRAL_KIND_VCJOB:
        return 4;
    case CORRAL_KIND_POD:
        if (!o->u.pod->spec.node_name || !*o->u.pod->spec.node_name)
            return 7;
        return corral_strmap_get(&o->meta.annotations, "corral.dev/gpu-ids") ? 5 : 6;
    default:
        return 8;
    }
}

/* The scheduler names a scenario's pods may give to be Corral's (SCENARIOS.md). */
static const char *const scn_schedulers[] = {"", "default-scheduler", "corral", "volcano"};

/* When a pod bound in the scenario started: the scenario's now, unless
 * annotation corral.dev/started-at gives an offset from the scenario start
 * ("-30m"), a simulator convention the engine does not know. */
static int64_t started_at(scn_t *s, const corral_obj_t *o)
{
    if (o->info->kind != CORRAL_KIND_POD || !o->u.pod->spec.node_name || !*o->u.pod->spec.node_name)
        return s->now;
    const char *v = corral_strmap_get(&o->meta.annotations, ANN_STARTED_AT);
    int64_t ns;
    if (!v)
        return s->now;
    if (corral_duration_parse(v, strlen(v), &ns) != 0) {
        corral_diag_add(&s->diag, CORRAL_SEV_ERROR, o->file, o->raw ? o->raw->line : 0, 0,
                        "metadata.annotations", "%s: \"%s\" is not a duration like 90m",
                        ANN_STARTED_AT, v);
        return s->now;
    }
    return ns;
}

static void upsert(scn_t *s, const corral_obj_t *o)
{
    size_t before = s->diag.errors;
    corral_engine_upsert(s->e, o, started_at(s, o), &s->diag);
    if (s->diag.errors > before)
        s->invalid = true;
}

static void apply_one(scn_t *s, const corral_obj_t *o)
{
    if (o->info->kind != CORRAL_KIND_VCJOB) {
        upsert(s, o);
        return;
    }
    corral_obj_t *pg, **pods;
    size_t n;
    corral_vcjob_expand(&s->a, o, &pg, &pods, &n);
    upsert(s, pg);
    for (size_t i = 0; i < n; i++)
        upsert(s, pods[i]);
}

static void apply_all(scn_t *s, corral_obj_t *const *objs, size_t n)
{
    for (int rank = 0; rank <= 8; rank++) {
        for (size_t i = 0; i < n; i++) {
            if (apply_rank(objs[i]) == rank)
                apply_one(s, objs[i]);
        }
    }
}

/* "name", "ns/name" (pods) or "Kind/ns/name" / "Kind/name" (any kind). */
void corral__sim_parse_ref(const char *ref, char *kind, char *ns, char *name, size_t len)
{
    const char *a = strchr(ref, '/');
    const char *b = a ? strchr(a + 1, '/') : NULL;
    snprintf(kind, len, "Pod");
    snprintf(ns, len, "default");
    if (!a) {
        snprintf(name, len, "%s", ref);
    } else if (b) {
        snprintf(kind, len, "%.*s", (int)(a - ref), ref);
        snprintf(ns, len, "%.*s", (int)(b - a - 1), a + 1);
        snprintf(name, len, "%s", b + 1);
    } else if (ref[0] >= 'A' && ref[0] <= 'Z') {
        snprintf(kind, len, "%.*s", (int)(a - ref), ref);
        snprintf(ns, len, "%s", "");
        snprintf(name, len, "%s", a + 1);
    } else {
        snprintf(ns, len, "%.*s", (int)(a - ref), ref);
        snprintf(name, len, "%s", a + 1);
    }
    if (!*ns)
        snprintf(ns, len, "default");
}

static void remove_ref(scn_t *s, const char *ref, int step)
{
    char kind[256], ns[256], name[256];
    corral__sim_parse_ref(ref, kind, ns, name, sizeof(kind));
    const corral_kind_info_t *k = corral_kind_find_resource(kind);
    int rc = CORRAL_ENOENT;
    if (k && k->kind == CORRAL_KIND_VCJOB) {
        rc = corral__sim_remove_job(s, ns, name);
    } else if (k) {
        rc = corral_engine_remove(s->e, k->kind, ns, name);
    }
    if (rc == CORRAL_ENOENT)
        fprintf(s->err, "%s: warning: step %d: %s does not exist\n", s->path, step, ref);
}

/* What the engine keeps up to date incrementally must equal a recount: a
 * scenario that breaks it is a bug in Corral, reported as a failure. */
static void self_check(scn_t *s)
{
    char msg[256];
    if (corral_engine_selfcheck(s->e, msg, sizeof(msg)) != 0)
        SIM_PUSH(s->failures, corral_arena_printf(&s->a, "FAIL internal error after cycle %d: %s",
                                                  s->cycles, msg));
}

/* Run cycles until one changes nothing; evicted pods leave at once. */
static void settle(scn_t *s)
{
    for (int i = 0; i < MAX_CYCLES; i++) {
        const corral_decisions_t *d;
        corral_engine_cycle(s->e, s->now, &d);
        s->cycles++;
        self_check(s);
        for (size_t j = 0; j < d->nevictions; j++) {
            char key[600];
            snprintf(key, sizeof(key), "%s/%s", d->evictions[j].ns, d->evictions[j].name);
            corral__sim_mark_evicted(s, key);
        }
        for (size_t j = 0; j < d->nevictions; j++)
            corral_engine_remove(s->e, CORRAL_KIND_POD, d->evictions[j].ns, d->evictions[j].name);
        if (d->nbinds == 0 && d->nevictions == 0)
            return;
    }
    fprintf(s->err, "%s: warning: the scheduler did not settle after %d cycles\n", s->path,
            MAX_CYCLES);
}

/* Evictions are reported per step: forget the previous step's. */
static void clear_evicted(scn_t *s)
{
    for (size_t i = 0; i < s->evicted.n; i++)
        corral_free(s->evicted.items[i]);
    s->evicted.n = 0;
}

static void run_step(scn_t *s, size_t idx, const corral_scn_step_t *step)
{
    clear_evicted(s);
    if (step && step->at_ns.set)
        s->now = step->at_ns.v;
    for (size_t i = 0; step && i < step->complete.n; i++)
        remove_ref(s, step->complete.items[i], (int)idx);
    for (size_t i = 0; step && i < step->del.n; i++)
        remove_ref(s, step->del.items[i], (int)idx);
    if (idx == 0)
        apply_all(s, s->objs, s->nobjs);
    if (step)
        apply_all(s, step->apply, step->napply);
    if (s->invalid)
        return;
    settle(s);
    if (step && step->expect.present)
        corral__sim_check(s, (int)idx, &step->expect);
}

/* --- entry point ---------------------------------------------------------------------------- */

static void scn_fini(scn_t *s)
{
    corral_engine_free(s->e);
    corral_hmap_fini(&s->specs);
    corral_free(s->spec_vals.items);
    clear_evicted(s);
    corral_free(s->evicted.items);
    corral_free(s->failures.items);
    corral_free(s->data);
    corral_diag_fini(&s->diag);
    corral_arena_fini(&s->a);
}

int corral_sim_scenario(const char *path, const corral_sim_opts_t *opts)
{
    scn_t s;
    memset(&s, 0, sizeof(s));
    s.path = path;
    s.out = opts && opts->out ? opts->out : stdout;
    s.err = opts && opts->err ? opts->err : stderr;
    s.json = opts && opts->json;
    corral_arena_init(&s.a);
    corral_diag_init(&s.diag);
    corral_hmap_init(&s.specs);
    int rc = 2;
    if (load(&s) == 0 && validate_steps(&s) == 0) {
        corral_sched_config_t cfg;
        if (opts && opts->cfg)
            cfg = *opts->cfg;
        else
            corral_sched_config_default(&cfg);
        if (s.conf)
            corral_sched_config_apply(&cfg, s.conf);
        int pol = opts && opts->policy ? corral_policy_from_name(opts->policy) : -1;
        if (pol >= 0)
            cfg.policy = (corral_policy_t)pol;
        corral_engine_new(&cfg, &s.e);
        corral_engine_set_schedulers(s.e, scn_schedulers, CORRAL_ARRAY_LEN(scn_schedulers));
        size_t nsteps = s.sc && s.sc->nsteps ? s.sc->nsteps : 1;
        for (size_t i = 0; i < nsteps && !s.invalid; i++)
            run_step(&s, i, s.sc && s.sc->nsteps ? &s.sc->steps[i] : NULL);
        if (!s.invalid) {
            corral__sim_report(&s);
            rc = s.failures.n ? 1 : 0;
        }
    }
    corral_diag_sort(&s.diag);
    corral_diag_print(&s.diag, s.err);
    scn_fini(&s);
    return rc;
}
