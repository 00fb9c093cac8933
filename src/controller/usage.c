/*
 * Accounting: one corral.dev/v1 UsageRecord per finished pod, as Slurm's
 * accounting keeps one line per job step (docs/observability.md,
 * "Accounting"). A pod is recorded when it reaches Succeeded or Failed, or
 * when it is deleted after it started (phase Deleted). The record's name is
 * the pod's UID, so a write repeated after a restart (the informer lists
 * finished pods again) answers 409 and changes nothing. GPU-seconds used
 * come from annotation corral.dev/gpu-seconds-used, which the agent writes
 * when the pod ends; without it the field is absent (unknown).
 *
 * Retention: every prune period the controller pages through the records
 * (500 at a time, keeping only name, namespace and finish time) and deletes
 * those finished before now - retention, then the oldest beyond the most
 * records kept. Memory for a pass is a few dozen bytes per record.
 *
 * Writes start after the first such pass (at sync): the pods found finished
 * then are recorded unless a record with their UID exists, so a restart
 * does not post every finished pod again. A write that fails for a reason
 * that passes (no answer, 429, 5xx) is kept, with its body, in a bounded
 * retry list tried again every RETRY_S seconds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/controller_int.h"
#include "corral/json.h"
#include "corral/timefmt.h"

#define GPU_SECONDS_USED "corral.dev/gpu-seconds-used"
#define GPU_IDS          "corral.dev/gpu-ids"
#define GPU_PRODUCT      "nvidia.com/gpu.product"
#define PAGE             500
#define RETRY_S          5
#define RETRY_MAX        10000

struct corral__usage_retry {
    char *ns;
    corral_buf_t body;
};

static bool eq(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

static void q(corral_buf_t *b, const char *s)
{
    corral_json_quote(b, s ? s : "", s ? strlen(s) : 0);
}

static void put_time(corral_buf_t *b, const char *key, int64_t us)
{
    if (us <= 0)
        return;
    char ts[64];
    corral_time_format(us, false, ts, sizeof(ts));
    corral_buf_printf(b, ",\"%s\":\"%s\"", key, ts);
}

static int64_t scheduled_us(const corral_pod_t *p)
{
    for (size_t i = 0; i < p->status.conditions.n; i++) {
        const corral_condition_t *c = &p->status.conditions.items[i];
        if (eq(c->type, "PodScheduled") && eq(c->status, "True"))
            return c->last_transition_us;
    }
    return 0;
}

/* The first container's termination: finishedAt, exit code, reason. */
static int64_t terminated(const corral_obj_t *pod, bool *has_exit, int64_t *exit_code,
                          const char **reason)
{
    const corral_val_t *cs = corral_val_dig(pod->raw, "status.containerStatuses");
    *has_exit = false;
    if (!cs || cs->kind != CORRAL_VAL_SEQ || !cs->n)
        return 0;
    const corral_val_t *t = corral_val_dig(cs->items[0], "state.terminated");
    if (!t || t->kind != CORRAL_VAL_MAP)
        return 0;
    const corral_val_t *v = corral_val_get(t, "exitCode");
    if (v && v->kind == CORRAL_VAL_INT) {
        *has_exit = true;
        *exit_code = v->u.i;
    }
    const char *r = corral_val_get_str(t, "reason");
    if (r && *r)
        *reason = r;
    const char *f = corral_val_get_str(t, "finishedAt");
    int64_t us = 0;
    if (f && corral_time_parse(f, strlen(f), &us) != 0)
        us = 0;
    return us;
}

static double secs(int64_t from_us, int64_t to_us)
{
    return from_us > 0 && to_us > from_us ? (double)(to_us - from_us) / 1e6 : 0;
}

void corral__usage_build(const corral_obj_t *pod, const char *queue, const char *job,
                         const char *gpu_model, bool deleted, int64_t now_us, corral_buf_t *out)
{
    const corral_pod_t *p = pod->u.pod;
    const char *phase =
        deleted && !eq(p->status.phase, "Succeeded") && !eq(p->status.phase, "Failed")
            ? "Deleted"
            : p->status.phase;
    bool has_exit;
    int64_t code = 0;
    const char *reason = p->status.reason;
    int64_t fin = terminated(pod, &has_exit, &code, &reason);
    if (fin <= 0) /* no container says: the deletion, else when we saw it end */
        fin = deleted && pod->meta.deletion_us > 0 ? pod->meta.deletion_us : now_us;
    int64_t created = pod->meta.creation_us, sched = scheduled_us(p), start = p->status.start_us;
    double gpus = (double)corral_pod_gpu_milli(&pod->u.pod->spec) / 1000.0;
    double wait = secs(created, start > 0 ? start : (sched > 0 ? sched : fin));
    double run = secs(start, fin);
    corral_buf_puts(out, "{\"apiVersion\":\"corral.dev/v1\",\"kind\":\"UsageRecord\","
                         "\"metadata\":{\"name\":");
    q(out, pod->meta.uid);
    corral_buf_puts(out, ",\"namespace\":");
    q(out, pod->meta.namespace);
    corral_buf_puts(out, ",\"labels\":{\"corral.dev/queue\":");
    q(out, queue);
    corral_buf_puts(out, "}},\"spec\":{\"pod\":");
    q(out, pod->meta.name);
    corral_buf_puts(out, ",\"podUID\":");
    q(out, pod->meta.uid);
    corral_buf_puts(out, ",\"queue\":");
    q(out, queue);
    corral_buf_puts(out, ",\"job\":");
    q(out, job);
    corral_buf_puts(out, ",\"node\":");
    q(out, p->spec.node_name);
    corral_buf_printf(out, ",\"gpus\":%g", gpus);
    if (gpus > 0) {
        corral_buf_puts(out, ",\"gpuModel\":");
        q(out, gpu_model);
        corral_buf_puts(out, ",\"gpuIDs\":");
        q(out, corral_strmap_get(&pod->meta.annotations, GPU_IDS));
    }
    put_time(out, "createdAt", created);
    put_time(out, "scheduledAt", sched);
    put_time(out, "startedAt", start);
    put_time(out, "finishedAt", fin);
    corral_buf_printf(out, ",\"waitSeconds\":%.3f,\"runSeconds\":%.3f", wait, run);
    corral_buf_printf(out, ",\"gpuSecondsAllocated\":%.3f", gpus * run);
    const char *used = corral_strmap_get(&pod->meta.annotations, GPU_SECONDS_USED);
    char *end = NULL;
    double u = used ? strtod(used, &end) : -1;
    if (used && *used && end && !*end && u >= 0 && u < 1e15)
        corral_buf_printf(out, ",\"gpuSecondsUsed\":%.3f", u);
    corral_buf_puts(out, ",\"phase\":");
    q(out, phase ? phase : "Unknown");
    if (has_exit)
        corral_buf_printf(out, ",\"exitCode\":%lld", (long long)code);
    if (reason && *reason) {
        corral_buf_puts(out, ",\"reason\":");
        q(out, reason);
    }
    corral_buf_puts(out, "}}");
}

/* The pod's queue: its PodGroup's, else volcano.sh/queue-name, else default. */
static const char *queue_of(corral_controller_t *c, const corral_obj_t *pod)
{
    const char *g = corral_strmap_get(&pod->meta.annotations, CORRAL_VC_GROUP_NAME);
    corral__entry_t *pg =
        g ? corral__cache_get(&c->cache, CORRAL_KIND_PODGROUP, pod->meta.namespace, g) : NULL;
    if (pg && pg->ev->obj && pg->ev->obj->u.pg->queue && *pg->ev->obj->u.pg->queue)
        return pg->ev->obj->u.pg->queue;
    const char *l = corral_strmap_get(&pod->meta.labels, CORRAL_VC_QUEUE_NAME);
    if (!l || !*l)
        l = corral_strmap_get(&pod->meta.annotations, CORRAL_VC_QUEUE_NAME);
    return l && *l ? l : "default";
}

/* The Volcano Job's name, else the controlling owner's, else "". */
static const char *job_of(const corral_obj_t *pod)
{
    const char *j = corral_strmap_get(&pod->meta.annotations, CORRAL_VC_JOB_NAME);
    if (!j || !*j)
        j = corral_strmap_get(&pod->meta.labels, CORRAL_VC_JOB_NAME);
    if (j && *j)
        return j;
    for (size_t i = 0; i < pod->meta.nowners; i++) {
        if (pod->meta.owners[i].controller || i + 1 == pod->meta.nowners)
            return pod->meta.owners[i].name ? pod->meta.owners[i].name : "";
    }
    return "";
}

/* POST a record; false when it should be tried again (no answer, 429,
 * 5xx). Created, already there (409) or refused for good (other 4xx, logged
 * by the send) are done. */
static bool post(corral_controller_t *c, const char *ns, const corral_buf_t *body)
{
    int64_t t0 = corral__mono_ns();
    corral_arena_t a;
    corral_arena_init(&a);
    const char *path = corral__ctl_path(&a, corral_kind_get(CORRAL_KIND_USAGE), ns, NULL, NULL);
    long code = corral__ctl_send(c, "POST", path, NULL, body, NULL);
    corral__cm_usage_written(c, code, corral__mono_ns() - t0);
    corral_arena_fini(&a);
    return !(code == 0 || code == 429 || code >= 500);
}

static void keep_for_retry(corral_controller_t *c, const char *ns, corral_buf_t *body)
{
    if (c->nretry == RETRY_MAX) {
        corral__ctl_log(c, "usage records: %d waiting to be written already; one dropped",
                        RETRY_MAX);
        return;
    }
    if (c->nretry == 0)
        corral__timers_push(&c->timers, corral__mono_ns() + RETRY_S * CORRAL_NS_PER_SEC,
                            CORRAL__T_USAGE_RETRY, NULL);
    corral_grow((void **)&c->retry, &c->capretry, c->nretry + 1, sizeof(*c->retry));
    c->retry[c->nretry].ns = corral_strdup(ns ? ns : "");
    c->retry[c->nretry].body = *body;
    corral_buf_init(body); /* taken over */
    c->nretry++;
}

static const char *gpu_model_of(corral_controller_t *c, const corral_obj_t *pod)
{
    const char *n = pod->u.pod->spec.node_name;
    corral__entry_t *ne = n && *n ? corral__cache_get(&c->cache, CORRAL_KIND_NODE, "", n) : NULL;
    const char *m =
        ne && ne->ev->obj ? corral_strmap_get(&ne->ev->obj->meta.labels, GPU_PRODUCT) : NULL;
    return m ? m : "";
}

void corral__usage_on_pod(corral_controller_t *c, corral__entry_t *e, const corral_obj_t *pod,
                          bool deleted)
{
    /* Before the first list of records (at sync) the sweep of usage_sweep
     * records what finished meanwhile. */
    if (e->usage_done || !c->usage_listed || !pod || !pod->meta.uid || !*pod->meta.uid)
        return;
    const corral_pod_t *p = pod->u.pod;
    bool done = eq(p->status.phase, "Succeeded") || eq(p->status.phase, "Failed");
    bool started = p->status.start_us > 0 || eq(p->status.phase, "Running");
    if (!done && !(deleted && started))
        return;
    e->usage_done = true;
    corral_buf_t body;
    corral_buf_init(&body);
    corral__usage_build(pod, queue_of(c, pod), job_of(pod), gpu_model_of(c, pod), deleted,
                        corral__wall_us(), &body);
    if (!post(c, pod->meta.namespace, &body))
        keep_for_retry(c, pod->meta.namespace, &body);
    corral_buf_fini(&body);
}

/* The pods found finished when the first list of records came, except those
 * recorded already (names: the records' names, which are pod UIDs). */
static void usage_sweep(corral_controller_t *c, const corral_hmap_t *names)
{
    for (size_t i = 0; i < c->cache.nslots; i++) {
        corral__entry_t *e = c->cache.slots[i];
        if (!e || e->kind != CORRAL_KIND_POD || !e->ev || !e->ev->obj)
            continue;
        uint32_t dummy;
        if (e->uid && corral_hmap_get(names, e->uid, &dummy))
            e->usage_done = true;
        else
            corral__usage_on_pod(c, e, e->ev->obj, false);
    }
}

void corral__usage_retry(corral_controller_t *c)
{
    size_t i = 0;
    for (; i < c->nretry; i++) {
        if (!post(c, c->retry[i].ns, &c->retry[i].body))
            break; /* still failing: the rest waits for the next round */
        corral_free(c->retry[i].ns);
        corral_buf_fini(&c->retry[i].body);
    }
    memmove(c->retry, c->retry + i, (c->nretry - i) * sizeof(*c->retry));
    c->nretry -= i;
    if (c->nretry)
        corral__timers_push(&c->timers, corral__mono_ns() + RETRY_S * CORRAL_NS_PER_SEC,
                            CORRAL__T_USAGE_RETRY, NULL);
}

void corral__usage_fini(corral_controller_t *c)
{
    for (size_t i = 0; i < c->nretry; i++) {
        corral_free(c->retry[i].ns);
        corral_buf_fini(&c->retry[i].body);
    }
    corral_free(c->retry);
    c->retry = NULL;
    c->nretry = c->capretry = 0;
}

/* --- retention --------------------------------------------------------------------------- */

typedef struct urec {
    char *ns, *name;
    int64_t fin_us;
} urec_t;

typedef struct ulist {
    urec_t *items;
    size_t n, cap;
} ulist_t;

static int cmp_fin(const void *a, const void *b)
{
    const urec_t *x = a, *y = b;
    if (x->fin_us != y->fin_us)
        return x->fin_us < y->fin_us ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* One page of the list into l; the continue token into cont (empty: last). */
static int list_page(corral_controller_t *c, const char *path, ulist_t *l, char *cont,
                     size_t contlen)
{
    corral_buf_t resp;
    corral_buf_init(&resp);
    long code = corral__ctl_send(c, "GET", path, NULL, NULL, &resp);
    cont[0] = '\0';
    corral_arena_t a;
    corral_arena_init(&a);
    corral_val_t *root = NULL;
    corral_json_err_t jerr;
    int rc = code == 200 ? corral_json_parse(&a, corral_buf_str(&resp), resp.len, &root, &jerr)
                         : CORRAL_EIO;
    const corral_val_t *items = rc == 0 ? corral_val_get(root, "items") : NULL;
    for (size_t i = 0; items && items->kind == CORRAL_VAL_SEQ && i < items->n; i++) {
        const char *ns =
            corral_val_get_str(corral_val_get(items->items[i], "metadata"), "namespace");
        const char *name = corral_val_get_str(corral_val_get(items->items[i], "metadata"), "name");
        const char *f = corral_val_get_str(corral_val_get(items->items[i], "spec"), "finishedAt");
        if (!ns || !name)
            continue;
        int64_t us = 0;
        if (!f || corral_time_parse(f, strlen(f), &us) != 0)
            us = 0;
        corral_grow((void **)&l->items, &l->cap, l->n + 1, sizeof(*l->items));
        l->items[l->n++] = (urec_t){corral_strdup(ns), corral_strdup(name), us};
    }
    const char *next =
        rc == 0 ? corral_val_get_str(corral_val_get(root, "metadata"), "continue") : NULL;
    if (next)
        snprintf(cont, contlen, "%s", next);
    corral_arena_fini(&a);
    corral_buf_fini(&resp);
    return rc;
}

static void delete_rec(corral_controller_t *c, const urec_t *r)
{
    corral_arena_t a;
    corral_arena_init(&a);
    const char *path =
        corral__ctl_path(&a, corral_kind_get(CORRAL_KIND_USAGE), r->ns, r->name, NULL);
    long code = corral__ctl_send(c, "DELETE", path, NULL, NULL, NULL);
    if (code == 200 || code == 202 || code == 404)
        corral__cm_usage_pruned(c, 1);
    corral_arena_fini(&a);
}

void corral__usage_prune(corral_controller_t *c)
{
    ulist_t l = {0};
    char cont[1024] = "";
    int rc = 0;
    do {
        corral_buf_t path;
        corral_buf_init(&path);
        corral_buf_printf(&path, "/apis/corral.dev/v1/usagerecords?limit=%d", PAGE);
        if (cont[0]) {
            corral_buf_puts(&path, "&continue=");
            for (const char *s = cont; *s; s++) { /* escape what a URL query reserves */
                if (strchr("+/=&%#? ", *s))
                    corral_buf_printf(&path, "%%%02X", (unsigned char)*s);
                else
                    corral_buf_putc(&path, *s);
            }
        }
        rc = list_page(c, corral_buf_str(&path), &l, cont, sizeof(cont));
        corral_buf_fini(&path);
    } while (rc == 0 && cont[0]);
    if (rc != 0 && !c->usage_listed) /* records wait for this list: try it again soon */
        corral__timers_push(&c->timers, corral__mono_ns() + RETRY_S * CORRAL_NS_PER_SEC,
                            CORRAL__T_USAGE, NULL);
    if (rc == 0 && !c->usage_listed) {
        c->usage_listed = true;
        corral_hmap_t names;
        corral_hmap_init(&names);
        for (size_t i = 0; i < l.n; i++)
            corral_hmap_put(&names, l.items[i].name, 0);
        usage_sweep(c, &names);
        corral_hmap_fini(&names);
    }
    if (rc == 0 && l.n) {
        qsort(l.items, l.n, sizeof(*l.items), cmp_fin);
        int64_t cut = corral__wall_us() - c->o.usage_retention_ns / 1000;
        size_t over = c->o.usage_max_records > 0 && l.n > (size_t)c->o.usage_max_records
                          ? l.n - (size_t)c->o.usage_max_records
                          : 0;
        size_t gone = 0;
        for (size_t i = 0; i < l.n; i++) {
            if (i < over || (c->o.usage_retention_ns > 0 && l.items[i].fin_us < cut)) {
                delete_rec(c, &l.items[i]);
                gone++;
            }
        }
        if (gone)
            corral__ctl_log(c, "usage records: %zu pruned, %zu kept", gone, l.n - gone);
        corral__cm_usage_kept(c, (double)(l.n - gone));
    } else if (rc == 0) {
        corral__cm_usage_kept(c, 0);
    }
    for (size_t i = 0; i < l.n; i++) {
        corral_free(l.items[i].ns);
        corral_free(l.items[i].name);
    }
    corral_free(l.items);
}
