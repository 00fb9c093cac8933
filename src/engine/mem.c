/*
 * What the engine holds: live entries and slots of each table and an
 * estimate of the heap behind them (array capacities, hash map slots, arena
 * bytes, owned strings). A scheduler runs for months over millions of pods;
 * the churn test (tests/engine/test_churn.c) checks with this that the
 * interned tables (profiles, node and request classes, shapes, priority
 * classes) give back what no object uses any more, so the numbers stay flat.
 */
#include <string.h>

#include "engine/engine_int.h"

#define VBYTES(v) ((v).cap * sizeof(*(v).items))

static size_t map_bytes(const corral_hmap_t *m)
{
    return m->cap * sizeof(corral_hmap_slot_t);
}

static size_t str_bytes(const char *s)
{
    return s ? strlen(s) + 1 : 0;
}

static size_t node_bytes(const corral_engine_t *e, corral_engine_mem_t *out)
{
    size_t b = VBYTES(e->nodes) + VBYTES(e->node_free) + map_bytes(&e->node_by_name);
    for (size_t i = 0; i < e->nodes.n; i++) {
        const enode_t *n = &e->nodes.items[i];
        out->nodes += n->alive;
        b += str_bytes(n->name) + n->cappods * sizeof(uint32_t);
        b += n->arena ? n->arena->used : 0;
    }
    out->node_slots = (uint32_t)e->nodes.n;
    for (size_t i = 0; i < e->classes.n; i++) {
        out->node_classes += e->classes.items[i].key != NULL;
        b += str_bytes(e->classes.items[i].key);
    }
    out->class_slots = (uint32_t)e->classes.n;
    return b + VBYTES(e->classes) + VBYTES(e->cls_free) + map_bytes(&e->cls_by_key) +
           (e->nnode_order + 1) * sizeof(uint32_t);
}

static size_t pod_bytes(const corral_engine_t *e, corral_engine_mem_t *out)
{
    size_t b = VBYTES(e->pods) + VBYTES(e->pod_free) + map_bytes(&e->pod_by_key);
    for (size_t i = 0; i < e->pods.n; i++) {
        const epod_t *p = &e->pods.items[i];
        if (!p->alive)
            continue;
        out->pods++;
        b += str_bytes(p->ns) + str_bytes(p->name) + str_bytes(p->key) + str_bytes(p->pc_name);
    }
    out->pod_slots = (uint32_t)e->pods.n;
    b += VBYTES(e->groups) + VBYTES(e->group_free) + VBYTES(e->group_dead) +
         map_bytes(&e->group_by_key);
    for (size_t i = 0; i < e->groups.n; i++) {
        const egroup_t *g = &e->groups.items[i];
        if (!g->alive)
            continue;
        out->groups++;
        b += str_bytes(g->ns) + str_bytes(g->name) + str_bytes(g->key) + str_bytes(g->queue_name) +
             str_bytes(g->pc_name) + g->cappods * sizeof(uint32_t);
    }
    out->group_slots = (uint32_t)e->groups.n;
    b += VBYTES(e->queues) + map_bytes(&e->queue_by_name);
    for (size_t i = 0; i < e->queues.n; i++) {
        const equeue_t *q = &e->queues.items[i];
        out->queues += q->alive;
        b += str_bytes(q->name) + str_bytes(q->parent_name) + q->capjobs * sizeof(uint32_t);
    }
    return b;
}

static size_t interned_bytes(const corral_engine_t *e, corral_engine_mem_t *out)
{
    size_t b = VBYTES(e->profs) + VBYTES(e->prof_free) + map_bytes(&e->prof_by_key);
    for (size_t i = 0; i < e->profs.n; i++) {
        const eprof_t *p = &e->profs.items[i];
        if (!p->arena)
            continue;
        out->profiles++;
        b += p->arena->used + p->ncache * sizeof(*p->cache);
    }
    out->profile_slots = (uint32_t)e->profs.n;
    b += VBYTES(e->rclss) + VBYTES(e->rcls_free) + map_bytes(&e->rcls_by_key);
    for (size_t i = 0; i < e->rclss.n; i++) {
        out->request_classes += e->rclss.items[i].key != NULL;
        b += str_bytes(e->rclss.items[i].key);
    }
    out->rcls_slots = (uint32_t)e->rclss.n;
    b += VBYTES(e->wshapes) + VBYTES(e->wshape_free) + map_bytes(&e->wshape_by_key);
    for (size_t i = 0; i < e->wshapes.n; i++) {
        out->shapes += e->wshapes.items[i].key != NULL;
        b += str_bytes(e->wshapes.items[i].key);
    }
    out->shape_slots = (uint32_t)e->wshapes.n;
    b +=
        VBYTES(e->pc_values) + VBYTES(e->pc_names) + VBYTES(e->pc_free) + map_bytes(&e->pc_by_name);
    for (size_t i = 0; i < e->pc_names.n; i++) {
        out->priority_classes += e->pc_names.items[i] != NULL;
        b += str_bytes(e->pc_names.items[i]);
    }
    out->pc_slots = (uint32_t)e->pc_names.n;
    out->reasons = (uint32_t)e->rsn_texts.n;
    b += e->rsn_arena.used + VBYTES(e->rsn_texts) + map_bytes(&e->rsn_by_text);
    b += map_bytes(&e->reason_cache) + VBYTES(e->reason_vals);
    return b + e->keep.used + e->cyc.used + e->nshapes * sizeof(eshape_t) +
           e->nshape_models * sizeof(int);
}

void corral_engine_mem(const corral_engine_t *e, corral_engine_mem_t *out)
{
    memset(out, 0, sizeof(*out));
    out->bytes = sizeof(*e);
    out->bytes += node_bytes(e, out);
    out->bytes += pod_bytes(e, out);
    out->bytes += interned_bytes(e, out);
    out->bytes += VBYTES(e->changed) + VBYTES(e->touched) + VBYTES(e->running) + VBYTES(e->fresh) +
                  VBYTES(e->fresh_pods) + VBYTES(e->unlisted) + VBYTES(e->binds) +
                  VBYTES(e->evicts) + VBYTES(e->pendings) + VBYTES(e->gstats);
}
