/*
 * Scenario expectations and the final report. Each expectation that fails
 * becomes one line, "FAIL step N: <expectation>: <what happened>", worded so
 * that the line alone says what went wrong.
 */
#include <stdlib.h>
#include <string.h>

#include "corral/buf.h"
#include "sim/sim_int.h"

void corral__sim_mark_evicted(scn_t *s, const char *key)
{
    SIM_PUSH(s->evicted, corral_strdup(key));
}

static bool was_evicted(const scn_t *s, const char *ns, const char *name)
{
    char key[600];
    snprintf(key, sizeof(key), "%s/%s", ns, name);
    for (size_t i = 0; i < s->evicted.n; i++) {
        if (strcmp(s->evicted.items[i], key) == 0)
            return true;
    }
    return false;
}

int corral__sim_remove_job(scn_t *s, const char *ns, const char *name)
{
    int rc = corral_engine_remove(s->e, CORRAL_KIND_PODGROUP, ns, name);
    /* Its pods are <job>-<task>-<index>: find them among the job objects. */
    for (size_t i = 0; i < s->nobjs; i++) {
        const corral_obj_t *o = s->objs[i];
        if (o->info->kind != CORRAL_KIND_VCJOB || strcmp(o->meta.name, name) != 0 ||
            strcmp(o->meta.namespace, ns) != 0)
            continue;
        corral_obj_t *pg, **pods;
        size_t n;
        corral_vcjob_expand(&s->a, o, &pg, &pods, &n);
        for (size_t j = 0; j < n; j++)
            corral_engine_remove(s->e, CORRAL_KIND_POD, ns, pods[j]->meta.name);
    }
    return rc;
}

static void fail(scn_t *s, int step, const char *fmt, ...) CORRAL_PRINTF(3, 4);

static void fail(scn_t *s, int step, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *what = corral_arena_vprintf(&s->a, fmt, ap);
    va_end(ap);
    SIM_PUSH(s->failures, corral_arena_printf(&s->a, "FAIL step %d: %s", step, what));
}

/* What happened to a pod, for failure messages. */
static const char *describe(scn_t *s, const char *ns, const char *name)
{
    corral_pod_view_t v;
    if (corral_engine_pod(s->e, ns, name, &v) != 0)
        return was_evicted(s, ns, name) ? "evicted" : "no such pod";
    if (v.bound)
        return corral_arena_printf(&s->a, "bound to %s%s%s%s", v.node, *v.gpu_ids ? " (GPUs " : "",
                                   v.gpu_ids, *v.gpu_ids ? ")" : "");
    return corral_arena_printf(&s->a, "pending: %s", v.reason ? v.reason : "(no reason)");
}

static bool lookup(scn_t *s, const char *ref, char *ns, char *name, corral_pod_view_t *v)
{
    char kind[256];
    corral__sim_parse_ref(ref, kind, ns, name, 256);
    return corral_engine_pod(s->e, ns, name, v) == 0;
}

static void check_lists(scn_t *s, int step, const corral_scn_expect_t *ex)
{
    char ns[256], name[256];
    corral_pod_view_t v;
    for (size_t i = 0; i < ex->scheduled.n; i++, s->expectations++) {
        const char *r = ex->scheduled.items[i];
        if (!lookup(s, r, ns, name, &v) || !v.bound)
            fail(s, step, "scheduled %s: %s", r, describe(s, ns, name));
    }
    for (size_t i = 0; i < ex->pending.n; i++, s->expectations++) {
        const char *r = ex->pending.items[i];
        if (!lookup(s, r, ns, name, &v) || v.bound)
            fail(s, step, "pending %s: %s", r, describe(s, ns, name));
    }
    for (size_t i = 0; i < ex->evicted.n; i++, s->expectations++) {
        const char *r = ex->evicted.items[i];
        lookup(s, r, ns, name, &v);
        if (!was_evicted(s, ns, name))
            fail(s, step, "evicted %s: not evicted in this step (%s)", r, describe(s, ns, name));
    }
    for (size_t i = 0; i < ex->not_evicted.n; i++, s->expectations++) {
        const char *r = ex->not_evicted.items[i];
        lookup(s, r, ns, name, &v);
        if (was_evicted(s, ns, name))
            fail(s, step, "notEvicted %s: evicted in this step", r);
    }
}

static void check_maps(scn_t *s, int step, const corral_scn_expect_t *ex)
{
    char ns[256], name[256];
    corral_pod_view_t v;
    for (size_t i = 0; i < ex->bound.n; i++, s->expectations++) {
        const corral_kv_t *kv = &ex->bound.items[i];
        if (!lookup(s, kv->key, ns, name, &v) || !v.bound || strcmp(v.node, kv->value) != 0)
            fail(s, step, "bound %s -> %s: %s", kv->key, kv->value, describe(s, ns, name));
    }
    for (size_t i = 0; i < ex->reason.n; i++, s->expectations++) {
        const corral_kv_t *kv = &ex->reason.items[i];
        if (!lookup(s, kv->key, ns, name, &v) || v.bound || !v.reason ||
            !strstr(v.reason, kv->value))
            fail(s, step, "reason %s contains \"%s\": %s", kv->key, kv->value,
                 describe(s, ns, name));
    }
}

static int cmp_int32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return x < y ? -1 : x > y;
}

static void check_gpus(scn_t *s, int step, const corral_scn_expect_t *ex)
{
    char ns[256], name[256];
    corral_pod_view_t v;
    for (size_t i = 0; i < ex->ngpu_ids; i++, s->expectations++) {
        const corral_gpu_ids_expect_t *g = &ex->gpu_ids[i];
        int32_t *want = corral_malloc((g->n + 1) * sizeof(*want));
        memcpy(want, g->ids, g->n * sizeof(*want));
        qsort(want, g->n, sizeof(*want), cmp_int32);
        corral_buf_t w;
        corral_buf_init(&w);
        for (size_t j = 0; j < g->n; j++)
            corral_buf_printf(&w, "%s%d", j ? "," : "", want[j]);
        if (!lookup(s, g->pod, ns, name, &v) || !v.bound ||
            strcmp(v.gpu_ids, corral_buf_str(&w)) != 0)
            fail(s, step, "gpuIds %s = [%s]: %s", g->pod, corral_buf_str(&w),
                 describe(s, ns, name));
        corral_buf_fini(&w);
        corral_free(want);
    }
    for (size_t i = 0; i < ex->nsame_node; i++, s->expectations++) {
        const corral_strlist_t *grp = &ex->same_node[i];
        const char *node = NULL;
        bool ok = true;
        for (size_t j = 0; j < grp->n && ok; j++) {
            bool here = lookup(s, grp->items[j], ns, name, &v) && v.bound &&
                        (!node || strcmp(node, v.node) == 0);
            ok = here;
            node = here ? v.node : node;
        }
        if (!ok) {
            corral_buf_t b;
            corral_buf_init(&b);
            for (size_t j = 0; j < grp->n; j++) {
                lookup(s, grp->items[j], ns, name, &v);
                corral_buf_printf(&b, "%s%s %s", j ? "; " : "", grp->items[j],
                                  describe(s, ns, name));
            }
            fail(s, step, "sameNode [%s ...]: %s", grp->n ? grp->items[0] : "", corral_buf_str(&b));
            corral_buf_fini(&b);
        }
    }
}

void corral__sim_check(scn_t *s, int step, const corral_scn_expect_t *ex)
{
    check_lists(s, step, ex);
    check_maps(s, step, ex);
    check_gpus(s, step, ex);
}

/* --- report ---------------------------------------------------------------------------------- */

typedef struct rep {
    scn_t *s;
    corral_buf_t b;
    int n;
} rep_t;

static void json_pod(const corral_pod_view_t *v, void *ctx)
{
    rep_t *r = ctx;
    corral_buf_t *b = &r->b;
    corral_buf_puts(b, r->n++ ? ",\n    " : "\n    ");
    corral_buf_puts(b, "{\"namespace\": ");
    corral_json_quote(b, v->ns, strlen(v->ns));
    corral_buf_puts(b, ", \"name\": ");
    corral_json_quote(b, v->name, strlen(v->name));
    if (v->bound) {
        corral_buf_puts(b, ", \"node\": ");
        corral_json_quote(b, v->node, strlen(v->node));
        corral_buf_printf(b, ", \"gpuIds\": [%s]", v->gpu_ids);
        corral_buf_printf(b, ", \"status\": \"%s\"", v->terminating ? "Terminating" : "Running");
    } else {
        corral_buf_puts(b, ", \"node\": null, \"gpuIds\": [], \"status\": \"Pending\"");
        corral_buf_puts(b, ", \"reason\": ");
        const char *why = v->reason ? v->reason : "";
        corral_json_quote(b, why, strlen(why));
    }
    corral_buf_puts(b, "}");
}

static void text_pod(const corral_pod_view_t *v, void *ctx)
{
    rep_t *r = ctx;
    char pod[512];
    snprintf(pod, sizeof(pod), "%s/%s", v->ns, v->name);
    if (v->bound)
        corral_buf_printf(&r->b, "%-32s %-20s %-10s %s\n", pod, v->node,
                          *v->gpu_ids ? v->gpu_ids : "-", "Running");
    else
        corral_buf_printf(&r->b, "%-32s %-20s %-10s Pending: %s\n", pod, "-", "-",
                          v->reason ? v->reason : "");
    r->n++;
}

void corral__sim_report(scn_t *s)
{
    rep_t r = {s, {NULL, 0, 0}, 0};
    const char *name = s->scobj ? s->scobj->meta.name : "";
    FILE *fails = s->json ? s->err : s->out;
    for (size_t i = 0; i < s->failures.n; i++)
        fprintf(fails, "%s\n", s->failures.items[i]);
    if (s->json) {
        corral_buf_puts(&r.b, "{\n  \"scenario\": ");
        corral_json_quote(&r.b, name, strlen(name));
        corral_buf_printf(&r.b, ",\n  \"expectations\": %d,\n  \"failed\": %zu,\n  \"pods\": [",
                          s->expectations, s->failures.n);
        corral_engine_each_pod(s->e, json_pod, &r);
        corral_buf_puts(&r.b, r.n ? "\n  ]\n}\n" : "]\n}\n");
    } else {
        corral_buf_printf(&r.b, "%-32s %-20s %-10s %s\n", "POD", "NODE", "GPUS", "STATUS");
        corral_engine_each_pod(s->e, text_pod, &r);
        if (s->sc)
            corral_buf_printf(&r.b, "scenario %s: %d expectation(s), %zu failed\n", name,
                              s->expectations, s->failures.n);
    }
    fputs(corral_buf_str(&r.b), s->out);
    corral_buf_fini(&r.b);
}
