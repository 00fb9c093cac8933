/*
 * PodGroup and Queue status. One pass over the cached pods and PodGroups
 * counts, per PodGroup, its running, succeeded and failed pods (the pods
 * whose scheduling.k8s.io/group-name annotation names it), and per Queue
 * its PodGroups by phase (pending, running, inqueue, completed, unknown) and
 * the resources allocated to it: the requests of its bound pods that have
 * not finished. A pod belongs to the queue of its PodGroup, else to the
 * queue its volcano.sh/queue-name label names. Each status is written only
 * when it differs, with a merge patch of just those fields: the scheduler
 * writes the PodGroup's phase and conditions with its own patches. The pass
 * runs at most once per status period, when something changed.
 */
#include <stdio.h>
#include <string.h>

#include "controller/controller_int.h"

static bool eq(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

typedef struct pgc {
    corral__entry_t *pg;
    int32_t running, succeeded, failed;
} pgc_t;

enum { NRES = 32 };

typedef struct qc {
    corral__entry_t *q;
    int32_t pending, running, inqueue, completed, unknown;
    const char *res[NRES];
    int64_t milli[NRES];
    size_t nres;
} qc_t;

typedef struct pass {
    corral_arena_t a;
    corral_hmap_t pgs, queues;
    pgc_t *pg;
    size_t npg;
    qc_t *qs;
    size_t nq;
} pass_t;

static qc_t *queue_of(pass_t *s, const char *name)
{
    uint32_t i;
    return name && corral_hmap_get(&s->queues, name, &i) ? &s->qs[i] : NULL;
}

static void add_res(qc_t *q, const corral_reslist_t *l)
{
    for (size_t i = 0; i < l->n; i++) {
        int64_t m = 0;
        if (corral_qty_milli(&l->items[i].qty, &m) != 0)
            continue;
        size_t k = 0;
        while (k < q->nres && strcmp(q->res[k], l->items[i].name) != 0)
            k++;
        if (k == q->nres) {
            if (q->nres == NRES)
                continue; /* more resource names than any node offers */
            q->res[q->nres] = l->items[i].name;
            q->milli[q->nres++] = 0;
        }
        q->milli[k] += m;
    }
}

static void index_all(pass_t *s, corral__cache_t *c)
{
    s->pg = corral_arena_alloc(&s->a, (c->nslots + 1) * sizeof(*s->pg));
    s->qs = corral_arena_alloc(&s->a, (c->nslots + 1) * sizeof(*s->qs));
    for (size_t i = 0; i < c->nslots; i++) {
        corral__entry_t *e = c->slots[i];
        if (e && e->kind == CORRAL_KIND_PODGROUP) {
            s->pg[s->npg].pg = e;
            corral_hmap_put(&s->pgs, e->key, (uint32_t)s->npg++);
        } else if (e && e->kind == CORRAL_KIND_QUEUE) {
            s->qs[s->nq].q = e;
            corral_hmap_put(&s->queues, e->ev->obj->meta.name, (uint32_t)s->nq++);
        }
    }
    for (size_t i = 0; i < s->npg; i++) {
        const corral_podgroup_t *pg = s->pg[i].pg->ev->obj->u.pg;
        qc_t *q = queue_of(s, pg->queue ? pg->queue : "default");
        if (!q)
            continue;
        const char *ph = pg->phase ? pg->phase : "Pending";
        q->pending += eq(ph, "Pending");
        q->running += eq(ph, "Running");
        q->inqueue += eq(ph, "Inqueue");
        q->completed += eq(ph, "Completed");
        q->unknown += eq(ph, "Unknown");
    }
}

static void count_pod(pass_t *s, const corral_obj_t *o)
{
    const char *group = corral_strmap_get(&o->meta.annotations, CORRAL_VC_GROUP_NAME);
    const char *ph = o->u.pod->status.phase;
    pgc_t *g = NULL;
    if (group) {
        char key[600];
        snprintf(key, sizeof(key), "%d|%s/%s", (int)CORRAL_KIND_PODGROUP, o->meta.namespace, group);
        uint32_t i;
        if (corral_hmap_get(&s->pgs, key, &i))
            g = &s->pg[i];
    }
    if (g && !o->meta.deletion_us) {
        g->running += eq(ph, "Running");
        g->succeeded += eq(ph, "Succeeded");
        g->failed += eq(ph, "Failed");
    }
    const char *qname =
        g ? g->pg->ev->obj->u.pg->queue : corral_strmap_get(&o->meta.labels, CORRAL_VC_QUEUE_NAME);
    qc_t *q = queue_of(s, g && !qname ? "default" : qname);
    const char *node = o->u.pod->spec.node_name;
    if (q && node && *node && !eq(ph, "Succeeded") && !eq(ph, "Failed")) {
        corral_reslist_t req;
        corral_pod_requests(&s->a, &o->u.pod->spec, &req);
        add_res(q, &req);
    }
}

static long patch(corral_controller_t *c, corral_arena_t *a, const corral_obj_t *o, const char *sub,
                  const corral_val_t *status)
{
    corral_val_t *doc = corral_val_new(a, CORRAL_VAL_MAP);
    corral_val_set(a, doc, "status", (corral_val_t *)status);
    corral_buf_t body, resp;
    corral_buf_init(&body);
    corral_buf_init(&resp);
    corral_val_to_json(doc, &body, false);
    const char *path = corral__ctl_path(a, o->info, o->meta.namespace, o->meta.name, sub);
    long code = corral__ctl_send(c, "PATCH", path, "application/merge-patch+json", &body, &resp);
    corral_buf_fini(&body);
    corral_buf_fini(&resp);
    return code;
}

static void put_int(corral_arena_t *a, corral_val_t *m, const char *k, int64_t v)
{
    corral_val_set(a, m, k, corral_val_new_int(a, v));
}

static void write_pg(corral_controller_t *c, pass_t *s, const pgc_t *g)
{
    const corral_obj_t *o = g->pg->ev->obj;
    const corral_podgroup_t *pg = o->u.pg;
    if (g->pg->deleting ||
        (pg->running == g->running && pg->succeeded == g->succeeded && pg->failed == g->failed))
        return;
    corral_val_t *st = corral_val_new(&s->a, CORRAL_VAL_MAP);
    put_int(&s->a, st, "running", g->running);
    put_int(&s->a, st, "succeeded", g->succeeded);
    put_int(&s->a, st, "failed", g->failed);
    long code = 0;
    if (c->pg_status_sub >= 0) {
        code = patch(c, &s->a, o, "status", st);
        if (code == 404 || code == 405)
            c->pg_status_sub = -1; /* Volcano's CRD without the status subresource */
        else
            c->pg_status_sub = 1;
    }
    if (c->pg_status_sub < 0)
        code = patch(c, &s->a, o, NULL, st);
    if (code != 200)
        c->status_dirty = true;
}

static void write_queue(corral_controller_t *c, pass_t *s, const qc_t *q)
{
    const corral_obj_t *o = q->q->ev->obj;
    corral_arena_t *a = &s->a;
    corral_val_t *st = corral_val_new(a, CORRAL_VAL_MAP);
    const char *state = o->u.queue->state;
    bool closed = eq(state, "Closed") || eq(state, "Closing");
    corral_val_set(a, st, "state", corral_val_new_str(a, closed ? state : "Open"));
    put_int(a, st, "pending", q->pending);
    put_int(a, st, "running", q->running);
    put_int(a, st, "inqueue", q->inqueue);
    put_int(a, st, "completed", q->completed);
    put_int(a, st, "unknown", q->unknown);
    corral_val_t *alloc = corral_val_new(a, CORRAL_VAL_MAP);
    for (size_t i = 0; i < q->nres; i++) {
        if (!q->milli[i])
            continue;
        char v[64];
        bool bytes = eq(q->res[i], "memory") || eq(q->res[i], "ephemeral-storage");
        if (bytes)
            corral_qty_format_bytes((q->milli[i] + 999) / 1000, v, sizeof(v));
        else
            corral_qty_format_milli(q->milli[i], v, sizeof(v));
        corral_val_set(a, alloc, q->res[i], corral_val_new_str(a, v));
    }
    corral_val_set(a, st, "allocated", alloc);
    /* Compare with what is there (fields written by others are left alone). */
    const corral_val_t *old = corral_val_get(o->raw, "status");
    bool same = old != NULL;
    for (size_t i = 0; same && i < st->n; i++) {
        const corral_val_t *ov = corral_val_get(old, st->pairs[i].key->s);
        same = ov && corral_val_equal(ov, st->pairs[i].val);
    }
    if (same)
        return;
    /* allocated is replaced whole: a resource that went to zero must vanish */
    corral_val_t *doc = corral_val_copy(a, st);
    if (old && corral_val_get(old, "allocated")) {
        const corral_val_t *oa = corral_val_get(old, "allocated");
        for (size_t i = 0; oa->kind == CORRAL_VAL_MAP && i < oa->n; i++) {
            if (!corral_val_get(alloc, oa->pairs[i].key->s))
                corral_val_set(a, corral_val_get(doc, "allocated"), oa->pairs[i].key->s,
                               corral_val_new(a, CORRAL_VAL_NULL));
        }
    }
    if (patch(c, a, o, "status", doc) != 200)
        c->status_dirty = true;
}

void corral__status_sync(corral_controller_t *c)
{
    pass_t s;
    memset(&s, 0, sizeof(s));
    corral_arena_init(&s.a);
    corral_hmap_init(&s.pgs);
    corral_hmap_init(&s.queues);
    index_all(&s, &c->cache);
    for (size_t i = 0; i < c->cache.nslots; i++) {
        corral__entry_t *e = c->cache.slots[i];
        if (e && e->kind == CORRAL_KIND_POD)
            count_pod(&s, e->ev->obj);
    }
    c->status_dirty = false;
    for (size_t i = 0; i < s.npg; i++)
        write_pg(c, &s, &s.pg[i]);
    for (size_t i = 0; i < s.nq; i++)
        write_queue(c, &s, &s.qs[i]);
    corral__modelcache_sync(c);
    corral_hmap_fini(&s.pgs);
    corral_hmap_fini(&s.queues);
    corral_arena_fini(&s.a);
}
