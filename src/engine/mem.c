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
    size_t b = VBYTES(e->nd.nodes) + VBYTES(e->nd.node_free) + map_bytes(&e->nd.node_by_name);
    for (size_t i = 0; i < e->nd.nodes.n; i++) {
        const enode_t *n = &e->nd.nodes.items[i];
        out->nodes += n->alive;
        b += str_bytes(n->name) + n->cappods * sizeof(uint32_t);
        b += n->arena ? n->arena->used : 0;
    }
    out->node_slots = (uint32_t)e->nd.nodes.n;
    for (size_t i = 0; i < e->nd.classes.n; i++) {
        out->node_classes += e->nd.classes.items[i].key != NULL;
        b += str_bytes(e->nd.classes.items[i].key);
    }
    out->class_slots = (uint32_t)e->nd.classes.n;
    return b + VBYTES(e->nd.classes) + VBYTES(e->nd.cls_free) + map_bytes(&e->nd.cls_by_key) +
           (e->nd.nnode_order + 1) * sizeof(uint32_t);
}

static size_t pod_bytes(const corral_engine_t *e, corral_engine_mem_t *out)
{
    size_t b = VBYTES(e->pd.pods) + VBYTES(e->pd.pod_free) + map_bytes(&e->pd.pod_by_key);
    for (size_t i = 0; i < e->pd.pods.n; i++) {
        const epod_t *p = &e->pd.pods.items[i];
        if (!p->alive)
            continue;
        out->pods++;
        b += str_bytes(p->ns) + str_bytes(p->name) + str_bytes(p->key) + str_bytes(p->pc_name);
    }
    out->pod_slots = (uint32_t)e->pd.pods.n;
    b += VBYTES(e->pd.groups) + VBYTES(e->pd.group_free) + VBYTES(e->pd.group_dead) +
         map_bytes(&e->pd.group_by_key);
    for (size_t i = 0; i < e->pd.groups.n; i++) {
        const egroup_t *g = &e->pd.groups.items[i];
        if (!g->alive)
            continue;
        out->groups++;
        b += str_bytes(g->ns) + str_bytes(g->name) + str_bytes(g->key) + str_bytes(g->queue_name) +
             str_bytes(g->pc_name) + g->cappods * sizeof(uint32_t);
    }
    out->group_slots = (uint32_t)e->pd.groups.n;
    b += VBYTES(e->qs.queues) + map_bytes(&e->qs.queue_by_name);
    for (size_t i = 0; i < e->qs.queues.n; i++) {
        const equeue_t *q = &e->qs.queues.items[i];
        out->queues += q->alive;
        b += str_bytes(q->name) + str_bytes(q->parent_name) + q->capjobs * sizeof(uint32_t);
    }
    return b;
}

static size_t interned_bytes(const corral_engine_t *e, corral_engine_mem_t *out)
{
    size_t b = VBYTES(e->pd.profs) + VBYTES(e->pd.prof_free) + map_bytes(&e->pd.prof_by_key);
    for (size_t i = 0; i < e->pd.profs.n; i++) {
        const eprof_t *p = &e->pd.profs.items[i];
        if (!p->arena)
            continue;
        out->profiles++;
        b += p->arena->used + p->ncache * sizeof(*p->cache);
    }
    out->profile_slots = (uint32_t)e->pd.profs.n;
    b += VBYTES(e->pd.rclss) + VBYTES(e->pd.rcls_free) + map_bytes(&e->pd.rcls_by_key);
    for (size_t i = 0; i < e->pd.rclss.n; i++) {
        out->request_classes += e->pd.rclss.items[i].key != NULL;
        b += str_bytes(e->pd.rclss.items[i].key);
    }
    out->rcls_slots = (uint32_t)e->pd.rclss.n;
    b += VBYTES(e->fr.wshapes) + VBYTES(e->fr.wshape_free) + map_bytes(&e->fr.wshape_by_key);
    for (size_t i = 0; i < e->fr.wshapes.n; i++) {
        out->shapes += e->fr.wshapes.items[i].key != NULL;
        b += str_bytes(e->fr.wshapes.items[i].key);
    }
    out->shape_slots = (uint32_t)e->fr.wshapes.n;
    b += VBYTES(e->pd.pc_values) + VBYTES(e->pd.pc_names) + VBYTES(e->pd.pc_free) +
         map_bytes(&e->pd.pc_by_name);
    for (size_t i = 0; i < e->pd.pc_names.n; i++) {
        out->priority_classes += e->pd.pc_names.items[i] != NULL;
        b += str_bytes(e->pd.pc_names.items[i]);
    }
    out->pc_slots = (uint32_t)e->pd.pc_names.n;
    out->reasons = (uint32_t)e->rp.rsn_texts.n;
    b += e->rp.rsn_arena.used + VBYTES(e->rp.rsn_texts) + map_bytes(&e->rp.rsn_by_text);
    b += map_bytes(&e->pm.reason_cache) + VBYTES(e->pm.reason_vals);
    return b + e->keep.used + e->cy.cyc.used + e->fr.nshapes * sizeof(eshape_t) +
           e->fr.nshape_models * sizeof(int);
}

void corral_engine_mem(const corral_engine_t *e, corral_engine_mem_t *out)
{
    memset(out, 0, sizeof(*out));
    out->bytes = sizeof(*e);
    out->bytes += node_bytes(e, out);
    out->bytes += pod_bytes(e, out);
    out->bytes += interned_bytes(e, out);
    out->bytes += VBYTES(e->rp.changed) + VBYTES(e->rp.touched) + VBYTES(e->pd.running) +
                  VBYTES(e->pd.fresh) + VBYTES(e->pd.fresh_pods) + VBYTES(e->pd.unlisted) +
                  VBYTES(e->cy.binds) + VBYTES(e->cy.evicts) + VBYTES(e->cy.pendings) +
                  VBYTES(e->cy.gstats);
}
