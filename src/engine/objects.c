/*
 * Queues, priority classes and HyperNodes as they come in: a Queue (refused
 * when its tree would loop or be more than QUEUE_DEPTH_MAX levels deep), a
 * PriorityClass's value, a HyperNode's members. What they mean for
 * scheduling is in queues.c and hypernode.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine_int.h"

uint32_t corral__queue_get(corral_engine_t *e, const char *name)
{
    uint32_t id;
    if (corral_hmap_get(&e->queue_by_name, name, &id))
        return id;
    equeue_t q;
    memset(&q, 0, sizeof(q));
    q.name = corral_strdup(name);
    q.weight = 1;
    q.reclaimable = true;
    q.implicit = true;
    q.parent = NONE;
    q.alive = strcmp(name, "default") == 0; /* "default" exists implicitly */
    e->queue_ver++;
    id = (uint32_t)e->queues.n;
    VEC_PUSH(e->queues, q);
    corral_hmap_put(&e->queue_by_name, e->queues.items[id].name, id);
    return id;
}

/* How many queues deep the tree of queue o would be, through the queues
 * that exist: refused (CORRAL_ETOOBIG) past QUEUE_DEPTH_MAX levels and
 * (CORRAL_EINVAL) when its parent is its own descendant. */
static int queue_depth_ok(corral_engine_t *e, const corral_obj_t *o, corral_diag_t *diag)
{
    const char *self = o->meta.name;
    int up = 0; /* its ancestors */
    const char *loop = NULL;
    for (const char *pn = o->u.queue->parent; pn && *pn && up <= QUEUE_DEPTH_MAX; up++) {
        uint32_t id;
        if (strcmp(pn, self) == 0) {
            loop = pn;
            break;
        }
        if (!corral_hmap_get(&e->queue_by_name, pn, &id) || !e->queues.items[id].alive)
            break;
        pn = e->queues.items[id].parent_name;
    }
    int down = 0; /* the levels below it */
    for (size_t i = 0; !loop && i < e->queues.n; i++) {
        const equeue_t *q = &e->queues.items[i];
        if (!q->alive || strcmp(q->name, self) == 0)
            continue;
        int k = 1;
        for (const char *pn = q->parent_name; pn && *pn && k <= QUEUE_DEPTH_MAX; k++) {
            uint32_t id;
            if (strcmp(pn, self) == 0) {
                if (k > down)
                    down = k;
                break;
            }
            if (!corral_hmap_get(&e->queue_by_name, pn, &id) || !e->queues.items[id].alive)
                break;
            pn = e->queues.items[id].parent_name;
        }
    }
    if (!loop && up + 1 + down <= QUEUE_DEPTH_MAX)
        return 0;
    int line = o->raw ? o->raw->line : 0;
    if (diag && loop)
        corral_diag_add(diag, CORRAL_SEV_ERROR, o->file, line, 0, "spec.parent",
                        "queue %s: its parent %s is the queue itself or one of its descendants "
                        "(a loop); the queue is not taken",
                        self, o->u.queue->parent);
    else if (diag)
        corral_diag_add(diag, CORRAL_SEV_ERROR, o->file, line, 0, "spec.parent",
                        "queue %s: the queue tree would be more than %d levels deep (parent "
                        "%s); the queue is not taken",
                        self, QUEUE_DEPTH_MAX, o->u.queue->parent);
    return loop ? CORRAL_EINVAL : CORRAL_ETOOBIG;
}

int corral__upsert_queue(corral_engine_t *e, const corral_obj_t *o, corral_diag_t *diag)
{
    const corral_queue_t *src = o->u.queue;
    int rc = queue_depth_ok(e, o, diag);
    if (rc != 0)
        return rc;
    uint32_t id = corral__queue_get(e, o->meta.name);
    equeue_t *q = &e->queues.items[id];
    q->alive = true;
    q->implicit = false;
    e->queue_ver++;
    q->weight = src->weight > 0 ? src->weight : 1;
    const char *b1 = corral__to_rvec(e, &src->capability, &q->cap, &q->cap_mask);
    const char *b2 = corral__to_rvec(e, &src->deserved, &q->deserved, &q->des_mask);
    const char *b3 = corral__to_rvec(e, &src->guarantee, &q->guarantee, &q->gua_mask);
    const char *beyond = b1 ? b1 : b2 ? b2 : b3;
    if (beyond)
        corral__res_beyond(
            e, o, diag, CORRAL_SEV_WARNING, beyond,
            "the queue's amounts of it are ignored (pods asking for it are refused)");
    q->reclaimable = src->reclaimable;
    q->closed =
        src->state && (strcmp(src->state, "Closed") == 0 || strcmp(src->state, "Closing") == 0);
    corral__set_str(&q->parent_name, src->parent);
    q->prio = src->priority;
    return 0;
}

int corral__upsert_pc(corral_engine_t *e, const corral_obj_t *o)
{
    uint32_t id;
    if (!corral_hmap_get(&e->pc_by_name, o->meta.name, &id)) {
        char *name = corral_strdup(o->meta.name);
        if (e->pc_free.n) {
            id = e->pc_free.items[--e->pc_free.n];
            e->pc_names.items[id] = name;
        } else {
            id = (uint32_t)e->pc_values.n;
            VEC_PUSH(e->pc_values, 0);
            VEC_PUSH(e->pc_names, name);
        }
        corral_hmap_put(&e->pc_by_name, name, id);
    }
    e->pc_values.items[id] = o->u.pc->value;
    e->pc_dirty = true;
    return 0;
}

int corral__upsert_hn(corral_engine_t *e, const corral_obj_t *o, corral_diag_t *diag)
{
    uint32_t id;
    if (!corral_hmap_get(&e->hn_by_name, o->meta.name, &id)) {
        ehn_t h;
        memset(&h, 0, sizeof(h));
        h.name = corral_strdup(o->meta.name);
        id = (uint32_t)e->hns.n;
        VEC_PUSH(e->hns, h);
        corral_hmap_put(&e->hn_by_name, e->hns.items[id].name, id);
    }
    ehn_t *h = &e->hns.items[id];
    char *name = h->name;
    h->name = NULL;
    corral__free_hn(h);
    h->name = name;
    h->alive = true;
    h->arena = corral_arena_new();
    h->tier = o->u.hn->tier;
    h->nmembers = o->u.hn->nmembers;
    h->members = corral_arena_alloc(h->arena, (h->nmembers + 1) * sizeof(*h->members));
    for (size_t i = 0; i < h->nmembers; i++) {
        const corral_hn_member_t *m = &o->u.hn->members[i];
        ehn_member_t *d = &h->members[i];
        d->type = m->type;
        d->exact = m->exact_name ? corral_arena_strdup(h->arena, m->exact_name) : NULL;
        if (m->regex && regcomp(&d->re, m->regex, REG_EXTENDED | REG_NOSUB) == 0)
            d->has_regex = true;
        else if (m->regex && diag)
            corral_diag_add(diag, CORRAL_SEV_ERROR, o->file, 0, 0, NULL,
                            "HyperNode %s: bad pattern \"%s\"", h->name, m->regex);
        d->has_labels = m->has_labels;
        if (m->has_labels)
            corral__copy_sel(h->arena, &d->labels, &m->labels);
    }
    e->hn_dirty = true;
    return 0;
}
