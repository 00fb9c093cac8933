/*
 * Pod groups: PodGroup objects and the implicit gang of one of a pod
 * without a group, the pods each holds, and freeing a group that nothing
 * uses any more.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine_int.h"

uint32_t corral__group_get(corral_engine_t *e, const char *ns, const char *name, bool implicit)
{
    size_t n = strlen(ns) + strlen(name) + 3;
    char *key = corral_malloc(n);
    snprintf(key, n, "%s%s/%s", implicit ? "\x01" : "", ns, name);
    uint32_t id;
    if (corral_hmap_get(&e->pd.group_by_key, key, &id)) {
        corral_free(key);
        return id;
    }
    egroup_t g;
    memset(&g, 0, sizeof(g));
    g.ns = corral_strdup(ns);
    g.name = corral_strdup(name);
    g.key = key;
    g.alive = true;
    g.implicit = implicit;
    g.declared = implicit;
    g.min_member = 1;
    g.queue = NONE;
    g.listed_q = NONE;
    g.queue_name = corral_strdup("default");
    g.age = e->pd.age_seq++;
    if (e->pd.group_free.n) {
        id = e->pd.group_free.items[--e->pd.group_free.n];
        e->pd.groups.items[id] = g;
    } else {
        id = (uint32_t)e->pd.groups.n;
        VEC_PUSH(e->pd.groups, g);
    }
    corral_hmap_put(&e->pd.group_by_key, e->pd.groups.items[id].key, id);
    return id;
}

/* A group without pods and without a PodGroup object is gone; its slot is
 * reused (a replay creates a group per job). */
void corral__group_reap(corral_engine_t *e, uint32_t gid)
{
    egroup_t *g = &e->pd.groups.items[gid];
    if (!g->alive || g->npods > 0 || (g->declared && !g->implicit))
        return;
    corral_hmap_del(&e->pd.group_by_key, g->key);
    corral__free_group(g);
    VEC_PUSH(e->pd.group_dead, gid);
}

void corral__group_add_pod(egroup_t *g, uint32_t pid, bool pending)
{
    corral_grow((void **)&g->pods, &g->cappods, g->npods + 1, sizeof(*g->pods));
    g->pods[g->npods++] = pid;
    g->npend += pending;
}

void corral__group_del_pod(egroup_t *g, uint32_t pid, bool pending)
{
    for (size_t i = 0; i < g->npods; i++) {
        if (g->pods[i] == pid) {
            memmove(&g->pods[i], &g->pods[i + 1], (g->npods - i - 1) * sizeof(*g->pods));
            g->npods--;
            g->npend -= pending;
            return;
        }
    }
}

int corral__upsert_podgroup(corral_engine_t *e, const corral_obj_t *o, corral_diag_t *diag)
{
    const corral_podgroup_t *pg = o->u.pg;
    uint32_t id = corral__group_get(e, o->meta.namespace, o->meta.name, false);
    egroup_t *g = &e->pd.groups.items[id];
    if (g->npods > 0)
        e->cy.epoch++; /* its pods' queue, gang size or class may change */
    g->declared = true;
    g->min_member = pg->min_member;
    corral__set_str(&g->queue_name, pg->queue ? pg->queue : "default");
    g->queue_ver = 0;
    corral__set_str(&g->pc_name, pg->priority_class_name);
    const char *beyond = corral__to_rvec(e, &pg->min_resources, &g->min_res, NULL);
    if (beyond)
        corral__res_beyond(e, o, diag, CORRAL_SEV_WARNING, beyond,
                           "minResources is checked without it (pods asking for it are refused)");
    g->has_min_res = pg->min_resources.n > 0;
    g->topo_mode = 0;
    if (pg->topology.mode)
        g->topo_mode = strcmp(pg->topology.mode, "hard") == 0 ? 1 : 2;
    g->topo_tier = pg->topology.highest_tier.set ? pg->topology.highest_tier.v : 0;
    corral__touch(e, id);
    return 0;
}
