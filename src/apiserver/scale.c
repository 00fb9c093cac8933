/*
 * The scale subresource (autoscaling/v1 Scale) of apps/v1 Deployments (as
 * upstream), Volcano Jobs and KServe InferenceServices, so `kubectl scale`
 * works on them. Neither upstream CRD
 * declares one; Corral maps it onto the field that decides how many pods
 * run (docs/decisions.md, "scale subresource"):
 *   - a Volcano Job: spec.replicas is the sum of its tasks' replicas;
 *     setting it is allowed on a job with one task (its replicas, and the
 *     task's and the job's minAvailable lowered to it when above) and
 *     refused with 422 on a job with several; status.replicas is
 *     status.running; the selector is volcano.sh/job-name=NAME.
 *   - an InferenceService: spec.replicas is spec.predictor.minReplicas
 *     (KServe's default 1 when unset); setting it raises maxReplicas when
 *     that is set and lower; the selector is KServe's pod label
 *     serving.kserve.io/inferenceservice=NAME; status.replicas is 0 (no
 *     controller reports it).
 * GET answers the Scale; PUT takes a Scale (metadata.resourceVersion a
 * precondition); PATCH patches the Scale (merge, JSON or strategic) and
 * stores what it then says. Both answer the new Scale.
 */
#include <stdio.h>
#include <string.h>

#include "apiserver/apiserver_int.h"

static int64_t int_at(const corral_val_t *v, const char *path, int64_t dflt)
{
    const corral_val_t *x = corral_val_dig(v, path);
    return x && x->kind == CORRAL_VAL_INT ? x->u.i : dflt;
}

static corral_val_t *job_tasks(const corral_val_t *obj)
{
    corral_val_t *t = corral_val_dig(obj, "spec.tasks");
    return t && t->kind == CORRAL_VAL_SEQ ? t : NULL;
}

/* spec.replicas, status.replicas and the selector of obj. */
static void scale_of(const corral__res_t *res, const corral_val_t *obj, int64_t *spec,
                     int64_t *status, const char **selector, corral_arena_t *a)
{
    const char *name = corral__meta_str(obj, "name");
    if (res->info->kind == CORRAL_KIND_VCJOB) {
        const corral_val_t *tasks = job_tasks(obj);
        *spec = 0;
        for (size_t i = 0; tasks && i < tasks->n; i++)
            *spec += int_at(tasks->items[i], "replicas", 0);
        *status = int_at(obj, "status.running", 0);
        *selector = corral_arena_printf(a, "%s=%s", CORRAL_VC_JOB_NAME, name ? name : "");
    } else if (res->info->kind == CORRAL_KIND_DEPLOYMENT) {
        /* Upstream's: spec.replicas, status.replicas, the selector as a
         * label selector string (matchLabels only; expressions are not
         * rendered). */
        *spec = int_at(obj, "spec.replicas", 1);
        *status = int_at(obj, "status.replicas", 0);
        const corral_val_t *ml = corral_val_dig(obj, "spec.selector.matchLabels");
        corral_buf_t b;
        corral_buf_init(&b);
        for (size_t i = 0; ml && ml->kind == CORRAL_VAL_MAP && i < ml->n; i++) {
            if (ml->pairs[i].val->kind == CORRAL_VAL_STR)
                corral_buf_printf(&b, "%s%s=%s", b.len ? "," : "", ml->pairs[i].key->s,
                                  ml->pairs[i].val->s);
        }
        *selector = corral_arena_strdup(a, corral_buf_str(&b));
        corral_buf_fini(&b);
    } else {
        *spec = int_at(obj, "spec.predictor.minReplicas", 1);
        *status = 0;
        *selector =
            corral_arena_printf(a, "serving.kserve.io/inferenceservice=%s", name ? name : "");
    }
}

/* The Scale of obj (stored JSON) as a value tree. */
static corral_val_t *scale_tree(corral_arena_t *a, const corral__res_t *res,
                                const corral_val_t *obj)
{
    int64_t spec, status;
    const char *sel;
    scale_of(res, obj, &spec, &status, &sel, a);
    corral_val_t *s = corral_val_new(a, CORRAL_VAL_MAP);
    corral_val_set(a, s, "kind", corral_val_new_str(a, "Scale"));
    corral_val_set(a, s, "apiVersion", corral_val_new_str(a, "autoscaling/v1"));
    corral_val_t *m = corral_val_new(a, CORRAL_VAL_MAP);
    static const char *const keys[] = {"name", "namespace", "uid", "resourceVersion",
                                       "creationTimestamp"};
    corral_val_t *om = corral_val_get(obj, "metadata");
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(keys); i++) {
        corral_val_t *v = corral_val_get(om, keys[i]);
        if (v)
            corral_val_set(a, m, keys[i], v);
    }
    corral_val_set(a, s, "metadata", m);
    corral_val_t *sp = corral_val_new(a, CORRAL_VAL_MAP);
    corral_val_set(a, sp, "replicas", corral_val_new_int(a, spec));
    corral_val_set(a, s, "spec", sp);
    corral_val_t *st = corral_val_new(a, CORRAL_VAL_MAP);
    corral_val_set(a, st, "replicas", corral_val_new_int(a, status));
    corral_val_set(a, st, "selector", corral_val_new_str(a, sel));
    corral_val_set(a, s, "status", st);
    return s;
}

void corral__reply_scale(corral__req_t *r, int code, const char *json, size_t len)
{
    corral_val_t *obj = corral__json_tree(r->a, json, len);
    if (!obj) {
        corral__internal(r, CORRAL_EPARSE);
        return;
    }
    corral_buf_t b;
    corral_buf_init(&b);
    corral_val_to_json(scale_tree(r->a, r->res, obj), &b, false);
    corral__reply_buf(r, code, &b);
}

/* Volcano's and KServe's CRDs declare no scale subresource: in strict
 * mode their /scale is what kube-apiserver answers, 404. */
static bool scale_served(corral__req_t *r)
{
    if (corral__scale_served(r))
        return true;
    corral__status(r, 404, "NotFound", NULL, NULL,
                   "the server could not find the requested resource");
    return false;
}

void corral__h_scale_get(corral__req_t *r)
{
    if (!scale_served(r))
        return;
    corral__cur_t cur;
    if (corral__read_current(r, &cur))
        corral__reply_scale(r, 200, cur.row.json, cur.row.json_len);
}

static void scale_invalid(corral__req_t *r, const char *field, const char *msg)
{
    corral_diag_t d;
    corral_diag_init(&d);
    corral_diag_add(&d, CORRAL_SEV_ERROR, NULL, 0, 0, field, "%s", msg);
    corral__invalid(r, "Scale", r->name, &d);
    corral_diag_fini(&d);
}

static void set_int(corral_arena_t *a, corral_val_t *m, const char *key, int64_t v)
{
    corral_val_set(a, m, key, corral_val_new_int(a, v));
}

/* Write replicas into next (a copy of the current object); false after a 422. */
static bool apply_replicas(corral__req_t *r, corral_val_t *next, int64_t n)
{
    if (r->res->info->kind == CORRAL_KIND_VCJOB) {
        corral_val_t *tasks = job_tasks(next);
        int64_t cur = 0;
        for (size_t i = 0; tasks && i < tasks->n; i++)
            cur += int_at(tasks->items[i], "replicas", 0);
        if (cur == n)
            return true;
        if (!tasks || tasks->n != 1 || tasks->items[0]->kind != CORRAL_VAL_MAP) {
            char msg[256];
            snprintf(msg, sizeof(msg),
                     "Invalid value: %lld: a Volcano Job is scaled through its only task; this "
                     "job has %zu (set each task's replicas instead)",
                     (long long)n, tasks ? tasks->n : (size_t)0);
            scale_invalid(r, "spec.replicas", msg);
            return false;
        }
        corral_val_t *t = tasks->items[0];
        set_int(r->a, t, "replicas", n);
        if (int_at(t, "minAvailable", 0) > n)
            set_int(r->a, t, "minAvailable", n);
        corral_val_t *spec = corral_val_get(next, "spec");
        if (int_at(spec, "minAvailable", 0) > n)
            set_int(r->a, spec, "minAvailable", n);
        return true;
    }
    corral_val_t *spec = corral_val_ensure_map(r->a, next, "spec");
    if (r->res->info->kind == CORRAL_KIND_DEPLOYMENT) {
        set_int(r->a, spec, "replicas", n);
        return true;
    }
    corral_val_t *pred = corral_val_ensure_map(r->a, spec, "predictor");
    set_int(r->a, pred, "minReplicas", n);
    corral_val_t *max = corral_val_get(pred, "maxReplicas");
    if (max && max->kind == CORRAL_VAL_INT && max->u.i > 0 && max->u.i < n)
        set_int(r->a, pred, "maxReplicas", n);
    return true;
}

/* Store what the Scale s asks of the current object. */
static void scale_to(corral__req_t *r, corral__cur_t *cur, const corral_val_t *s, bool put)
{
    const char *kind = corral_val_get_str(s, "kind");
    if (put && kind && strcmp(kind, "Scale") != 0) {
        corral__status(r, 400, "BadRequest", NULL, NULL, "expected a Scale, got %s", kind);
        return;
    }
    const char *name = corral__meta_str(s, "name");
    if (name && *name && strcmp(name, r->name) != 0) {
        corral__status(r, 400, "BadRequest", NULL, NULL,
                       "the name of the object (%s) does not match the name on the URL (%s)", name,
                       r->name);
        return;
    }
    const corral_val_t *rep = corral_val_dig(s, "spec.replicas");
    int64_t n = rep && rep->kind == CORRAL_VAL_INT ? rep->u.i : 0;
    if (rep && rep->kind != CORRAL_VAL_INT && rep->kind != CORRAL_VAL_NULL) {
        scale_invalid(r, "spec.replicas", "Invalid value: must be an integer");
        return;
    }
    if (n < 0 || n > INT32_MAX) {
        char msg[128];
        snprintf(msg, sizeof(msg), "Invalid value: %lld: must be greater than or equal to 0",
                 (long long)n);
        scale_invalid(r, "spec.replicas", msg);
        return;
    }
    corral_val_t *next = corral_val_copy(r->a, cur->tree);
    if (!apply_replicas(r, next, n))
        return;
    const char *rv = corral__meta_str(s, "resourceVersion");
    corral__update_with(r, cur, next, put ? rv : NULL, 200, CORRAL__UPD_SCALE);
}

void corral__h_scale_update(corral__req_t *r)
{
    if (!scale_served(r))
        return;
    corral_val_t *in = corral__body_tree(r);
    if (!in)
        return;
    corral__cur_t cur;
    if (corral__read_current(r, &cur))
        scale_to(r, &cur, in, true);
}

void corral__h_scale_patch(corral__req_t *r)
{
    if (!scale_served(r))
        return;
    size_t len = 0;
    const char *ct = corral_http_header(r->http, "content-type", &len);
    char type[64] = "";
    if (ct) {
        const char *semi = memchr(ct, ';', len);
        snprintf(type, sizeof(type), "%.*s", (int)(semi ? (size_t)(semi - ct) : len), ct);
    }
    bool merge = !strcmp(type, "application/merge-patch+json") ||
                 !strcmp(type, "application/strategic-merge-patch+json");
    if (!merge && strcmp(type, "application/json-patch+json") != 0) {
        corral__status(r, 415, "UnsupportedMediaType", NULL, NULL,
                       "the body of the request was in an unknown format - accepted media types "
                       "include: application/json-patch+json, application/merge-patch+json, "
                       "application/strategic-merge-patch+json");
        return;
    }
    corral_val_t *patch = corral__patch_tree(r);
    if (!patch)
        return;
    corral__cur_t cur;
    if (!corral__read_current(r, &cur))
        return;
    corral_val_t *s = scale_tree(r->a, r->res, cur.tree);
    char why[256] = "";
    int rc = merge ? (patch->kind == CORRAL_VAL_MAP ? corral__merge_patch(r->a, &s, patch)
                                                    : CORRAL_EINVAL)
                   : corral__json_patch(r->a, &s, patch, why, sizeof(why));
    if (rc != 0 || !s || s->kind != CORRAL_VAL_MAP) {
        corral__status(r, 422, "Invalid", NULL, NULL, "the patch could not be applied: %s",
                       why[0] ? why : "the result is not an object");
        return;
    }
    scale_to(r, &cur, s, false);
}
