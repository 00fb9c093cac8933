/*
 * The snapshot's lifecycle and its doors: creating and freeing the engine,
 * upsert and remove (each kind handed to the file that keeps it: nodes.c,
 * pods.c, groups.c, objects.c), and the read-only views the simulator, the
 * CLI and tests use.
 *
 * Every update is O(1) amortised (hash lookups, array appends) except node
 * additions, which mark the name order dirty (re-sorted once, at the next
 * cycle) and pod removals, which are O(pods in the group + pods on the node).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine_int.h"

int corral_engine_new(const corral_sched_config_t *cfg, corral_engine_t **out)
{
    corral_engine_t *e = corral_calloc(1, sizeof(*e));
    if (cfg)
        e->cfg = *cfg;
    else
        corral_sched_config_default(&e->cfg);
    corral_arena_init(&e->keep);
    corral_arena_init(&e->cy.cyc);
    corral_arena_init(&e->rp.rsn_arena);
    e->rng = e->cfg.seed ? e->cfg.seed : 1;
    e->cy.next_timer = INT64_MAX;
    e->rv.blocked = NONE;
    e->rv.for_job = NONE;
    static const char *const fixed[RES_FIXED] = {"cpu", "memory", "nvidia.com/gpu", "pods",
                                                 "ephemeral-storage"};
    for (int i = 0; i < RES_FIXED; i++)
        e->res_names[i] = fixed[i];
    e->nres = RES_FIXED;
    *out = e;
    return 0;
}

int corral_engine_set_schedulers(corral_engine_t *e, const char *const *names, size_t n)
{
    for (size_t i = 0; i < e->pd.scheds.n; i++)
        corral_free(e->pd.scheds.items[i]);
    e->pd.scheds.n = 0;
    e->pd.scheds_set = names != NULL;
    for (size_t i = 0; names && i < n; i++)
        VEC_PUSH(e->pd.scheds, corral_strdup(names[i] ? names[i] : ""));
    return 0;
}

void corral_engine_set_config(corral_engine_t *e, const corral_sched_config_t *cfg)
{
    e->cy.epoch++;
    e->cfg = *cfg;
    e->rng = cfg->seed ? cfg->seed : 1;
}

static void free_node(enode_t *n)
{
    corral_free(n->name);
    corral_arena_free(n->arena);
    corral_free(n->pods);
    memset(n, 0, sizeof(*n));
}

void corral__free_pod(epod_t *p)
{
    corral_free(p->ns);
    corral_free(p->name);
    corral_free(p->key);
    corral_free(p->pc_name);
    corral_free(p->model_cache);
    memset(p, 0, sizeof(*p));
}

void corral__free_group(egroup_t *g)
{
    corral_free(g->ns);
    corral_free(g->name);
    corral_free(g->key);
    corral_free(g->queue_name);
    corral_free(g->pc_name);
    corral_free(g->pods);
    memset(g, 0, sizeof(*g));
}

void corral__free_hn(ehn_t *h)
{
    for (size_t i = 0; i < h->nmembers; i++) {
        if (h->members[i].has_regex)
            regfree(&h->members[i].re);
    }
    corral_free(h->name);
    corral_arena_free(h->arena);
    corral_free(h->nodes);
    corral_free(h->bits);
    memset(h, 0, sizeof(*h));
}

void corral_engine_free(corral_engine_t *e)
{
    if (!e)
        return;
    for (size_t i = 0; i < e->nd.nodes.n; i++)
        free_node(&e->nd.nodes.items[i]);
    for (size_t i = 0; i < e->pd.pods.n; i++)
        corral__free_pod(&e->pd.pods.items[i]);
    for (size_t i = 0; i < e->pd.groups.n; i++)
        corral__free_group(&e->pd.groups.items[i]);
    for (size_t i = 0; i < e->qs.queues.n; i++) {
        corral_free(e->qs.queues.items[i].name);
        corral_free(e->qs.queues.items[i].parent_name);
        corral_free(e->qs.queues.items[i].jobs);
    }
    for (size_t i = 0; i < e->hn.hns.n; i++)
        corral__free_hn(&e->hn.hns.items[i]);
    corral_free(e->nd.nodes.items);
    corral_free(e->pd.pods.items);
    corral_free(e->pd.pod_free.items);
    corral_free(e->pd.groups.items);
    corral_free(e->qs.queues.items);
    corral_free(e->pd.pc_values.items);
    corral_free(e->hn.hns.items);
    for (size_t i = 0; i < e->pd.profs.n; i++) {
        corral_free(e->pd.profs.items[i].cache);
        corral_arena_free(e->pd.profs.items[i].arena);
    }
    corral_free(e->pd.profs.items);
    corral_free(e->pd.prof_free.items);
    for (size_t i = 0; i < e->nd.classes.n; i++)
        corral_free(e->nd.classes.items[i].key);
    corral_free(e->nd.classes.items);
    corral_free(e->nd.cls_free.items);
    corral_free(e->nd.node_free.items);
    for (size_t i = 0; i < e->pd.rclss.n; i++)
        corral_free(e->pd.rclss.items[i].key);
    corral_free(e->pd.rclss.items);
    corral_free(e->pd.rcls_free.items);
    for (size_t i = 0; i < e->pd.pc_names.n; i++)
        corral_free(e->pd.pc_names.items[i]);
    corral_free(e->pd.pc_names.items);
    corral_free(e->pd.pc_free.items);
    for (size_t i = 0; i < e->fr.wshapes.n; i++)
        corral_free(e->fr.wshapes.items[i].key);
    corral_free(e->fr.wshape_free.items);
    corral_free(e->nd.node_order);
    corral_free(e->cy.binds.items);
    corral_free(e->cy.evicts.items);
    corral_free(e->cy.pendings.items);
    corral_free(e->cy.gstats.items);
    corral_free(e->cy.txn.items);
    corral_free(e->cy.txn_ver.items);
    corral_free(e->pd.running.items);
    corral__resv_clear(e);
    corral_hmap_fini(&e->nd.node_by_name);
    corral_hmap_fini(&e->pd.pod_by_key);
    corral_hmap_fini(&e->pd.group_by_key);
    corral_hmap_fini(&e->qs.queue_by_name);
    corral_free(e->qs.kid_first);
    corral_free(e->qs.kid_ids);
    corral_hmap_fini(&e->pd.pc_by_name);
    corral_hmap_fini(&e->hn.hn_by_name);
    corral_hmap_fini(&e->pd.prof_by_key);
    corral_hmap_fini(&e->nd.cls_by_key);
    corral_hmap_fini(&e->pm.reason_cache);
    corral_hmap_fini(&e->fr.model_ids);
    corral_hmap_fini(&e->fr.wshape_by_key);
    corral_hmap_fini(&e->pd.rcls_by_key);
    corral_hmap_fini(&e->rp.rsn_by_text);
    corral_arena_fini(&e->rp.rsn_arena);
    corral_free(e->rp.rsn_texts.items);
    corral_free(e->rp.changed.items);
    corral_free(e->rp.touched.items);
    corral_free(e->pd.group_free.items);
    corral_free(e->pd.group_dead.items);
    corral_free(e->pd.fresh.items);
    corral_free(e->pd.fresh_pods.items);
    corral_free(e->pd.unlisted.items);
    corral_free(e->fr.wshapes.items);
    corral_free(e->fr.shapes);
    corral_free(e->fr.shape_models);
    corral_free(e->fr.pressure);
    corral_free(e->pm.reason_vals.items);
    corral_engine_set_schedulers(e, NULL, 0);
    corral_free(e->pd.scheds.items);
    corral_arena_fini(&e->keep);
    corral_arena_fini(&e->cy.cyc);
    corral_free(e);
}

uint64_t corral__rand(corral_engine_t *e)
{
    /* xorshift64*: small, fast, and reproducible from the seed. */
    uint64_t x = e->rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    e->rng = x;
    return x * 0x2545F4914F6CDD1DULL;
}

int corral_engine_upsert(corral_engine_t *e, const corral_obj_t *o, int64_t now_ns,
                         corral_diag_t *diag)
{
    if (o->info->kind != CORRAL_KIND_POD && o->info->kind != CORRAL_KIND_PODGROUP)
        e->cy.epoch++;
    switch (o->info->kind) {
    case CORRAL_KIND_NODE:
        return corral__upsert_node(e, o, diag);
    case CORRAL_KIND_POD:
        return corral__upsert_pod(e, o, now_ns, diag);
    case CORRAL_KIND_PODGROUP:
        return corral__upsert_podgroup(e, o, diag);
    case CORRAL_KIND_QUEUE:
        return corral__upsert_queue(e, o, diag);
    case CORRAL_KIND_PRIORITYCLASS:
        return corral__upsert_pc(e, o);
    case CORRAL_KIND_HYPERNODE:
        return corral__upsert_hn(e, o, diag);
    default:
        return 0;
    }
}

static int remove_pod(corral_engine_t *e, const char *ns, const char *name)
{
    size_t kn = strlen(ns) + strlen(name) + 2;
    char *key = corral_malloc(kn);
    snprintf(key, kn, "%s/%s", ns, name);
    uint32_t pid;
    bool found = corral_hmap_get(&e->pd.pod_by_key, key, &pid);
    corral_free(key);
    if (!found)
        return CORRAL_ENOENT;
    epod_t *p = &e->pd.pods.items[pid];
    corral__unbind(e, pid);
    corral__nominate_clear(e, p);
    corral_hmap_del(&e->pd.pod_by_key, p->key);
    egroup_t *g = &e->pd.groups.items[p->group];
    corral__group_del_pod(g, pid, p->state == POD_PENDING);
    corral__touch(e, p->group);
    corral__contrib(e, p, -1);
    if (p->state == POD_PENDING || p->state == POD_FOREIGN)
        e->pd.npending--;
    corral__group_reap(e, p->group);
    corral__wshape_count(e, p, -1);
    corral__rcls_unref(e, p->rcls);
    corral__prof_unref(e, p->prof);
    corral__free_pod(p);
    VEC_PUSH(e->pd.pod_free, pid);
    e->fr.pods_version++;
    return 0;
}

static int remove_node(corral_engine_t *e, const char *name)
{
    uint32_t nid;
    if (!corral_hmap_get(&e->nd.node_by_name, name, &nid) || !e->nd.nodes.items[nid].alive)
        return CORRAL_ENOENT;
    e->nd.nodes_ver++;
    enode_t *n = &e->nd.nodes.items[nid];
    /* Pods cannot outlive their node (Kubernetes' pod GC deletes them). */
    while (n->npods) {
        epod_t *p = &e->pd.pods.items[n->pods[n->npods - 1]];
        char *ns = corral_strdup(p->ns), *pn = corral_strdup(p->name);
        remove_pod(e, ns, pn);
        corral_free(ns);
        corral_free(pn);
    }
    for (size_t i = 0; i < e->pd.pods.n; i++) {
        if (e->pd.pods.items[i].alive && e->pd.pods.items[i].nom_node == nid)
            corral__nominate_clear(e, &e->pd.pods.items[i]);
    }
    corral__hist(e, n, -1);
    corral__cls_unref(e, n->cls);
    corral_hmap_del(&e->nd.node_by_name, n->name);
    free_node(n); /* alive false; the slot is reused by the next new node */
    n->cls = NONE;
    VEC_PUSH(e->nd.node_free, nid);
    e->version = ++e->vseq;
    e->nd.order_dirty = true;
    e->hn.hn_dirty = true;
    return 0;
}

int corral_engine_remove(corral_engine_t *e, corral_kind_t kind, const char *ns, const char *name)
{
    uint32_t id;
    e->cy.epoch++;
    switch (kind) {
    case CORRAL_KIND_POD:
        return remove_pod(e, ns, name);
    case CORRAL_KIND_NODE:
        return remove_node(e, name);
    case CORRAL_KIND_QUEUE:
        if (!corral_hmap_get(&e->qs.queue_by_name, name, &id))
            return CORRAL_ENOENT;
        e->qs.queues.items[id].alive = strcmp(name, "default") == 0;
        e->qs.queues.items[id].implicit = true;
        e->qs.queue_ver++;
        return 0;
    case CORRAL_KIND_HYPERNODE:
        if (!corral_hmap_get(&e->hn.hn_by_name, name, &id))
            return CORRAL_ENOENT;
        e->hn.hns.items[id].alive = false;
        e->hn.hn_dirty = true;
        return 0;
    case CORRAL_KIND_PODGROUP: {
        size_t kn = strlen(ns) + strlen(name) + 2;
        char *key = corral_malloc(kn);
        snprintf(key, kn, "%s/%s", ns, name);
        bool found = corral_hmap_get(&e->pd.group_by_key, key, &id);
        corral_free(key);
        if (!found)
            return CORRAL_ENOENT;
        e->pd.groups.items[id].declared = false;
        corral__touch(e, id);
        corral__group_reap(e, id);
        return 0;
    }
    case CORRAL_KIND_PRIORITYCLASS:
        if (!corral_hmap_get(&e->pd.pc_by_name, name, &id))
            return CORRAL_ENOENT;
        corral_hmap_del(&e->pd.pc_by_name, name);
        corral_free(e->pd.pc_names.items[id]);
        e->pd.pc_names.items[id] = NULL;
        VEC_PUSH(e->pd.pc_free, id);
        e->pd.pc_dirty = true;
        return 0;
    default:
        return CORRAL_ENOENT;
    }
}

static void pod_view(const corral_engine_t *e, const epod_t *p, corral_pod_view_t *v)
{
    memset(v, 0, sizeof(*v));
    v->ns = p->ns;
    v->name = p->name;
    v->bound = POD_PLACED(p);
    v->terminating = p->state == POD_TERMINATING;
    v->node = v->bound ? e->nd.nodes.items[p->node].name : NULL;
    if (v->bound)
        corral__gpu_ids_str(p->gpu_mask, v->gpu_ids, sizeof(v->gpu_ids));
    v->start_ns = p->start_ns;
    v->reason = p->reason;
    const egroup_t *g = &e->pd.groups.items[p->group];
    v->queue = g->queue_name;
    v->priority = p->priority;
}

int corral_engine_pod(const corral_engine_t *e, const char *ns, const char *name,
                      corral_pod_view_t *out)
{
    char key[512];
    snprintf(key, sizeof(key), "%s/%s", ns, name);
    uint32_t pid;
    if (!corral_hmap_get(&e->pd.pod_by_key, key, &pid))
        return CORRAL_ENOENT;
    pod_view(e, &e->pd.pods.items[pid], out);
    return 0;
}

static int cmp_pod_age(const void *a, const void *b, void *ctx)
{
    const corral_engine_t *e = ctx;
    uint64_t x = e->pd.pods.items[*(const uint32_t *)a].age;
    uint64_t y = e->pd.pods.items[*(const uint32_t *)b].age;
    return x < y ? -1 : x > y;
}

void corral_engine_each_pod(const corral_engine_t *e, corral_pod_visit_fn fn, void *ctx)
{
    uint32_t *ids = corral_malloc((e->pd.pods.n + 1) * sizeof(*ids));
    size_t k = 0;
    for (size_t i = 0; i < e->pd.pods.n; i++) {
        if (e->pd.pods.items[i].alive)
            ids[k++] = (uint32_t)i;
    }
    qsort_r(ids, k, sizeof(*ids), cmp_pod_age, (void *)e);
    for (size_t i = 0; i < k; i++) {
        corral_pod_view_t v;
        pod_view(e, &e->pd.pods.items[ids[i]], &v);
        fn(&v, ctx);
    }
    corral_free(ids);
}

void corral_engine_each_pending(const corral_engine_t *e, corral_pod_visit_fn fn, void *ctx)
{
    for (size_t i = 0; i < e->pd.pods.n; i++) {
        const epod_t *p = &e->pd.pods.items[i];
        if (!p->alive || p->state != POD_PENDING)
            continue;
        corral_pod_view_t v;
        pod_view(e, p, &v);
        fn(&v, ctx);
    }
}

void corral_engine_each_queue(const corral_engine_t *e, corral_queue_visit_fn fn, void *ctx)
{
    for (size_t i = 0; i < e->qs.queues.n; i++) {
        const equeue_t *q = &e->qs.queues.items[i];
        if (!q->alive)
            continue;
        corral_queue_view_t v = {
            .name = q->name,
            .parent = q->parent_name && *q->parent_name ? q->parent_name : NULL,
            .closed = q->closed,
            .weight = q->weight,
            .nres = e->nres,
            .res = e->res_names,
            .allocated = q->alloc.v,
            .deserved = q->des_eff.v,
            .capability = q->cap.v,
            .capability_mask = q->cap_mask,
        };
        fn(&v, ctx);
    }
}

int corral_engine_max_free_gpus(const corral_engine_t *e)
{
    return corral__max_free_whole(e);
}

void corral_engine_totals(const corral_engine_t *e, corral_engine_totals_t *out)
{
    memset(out, 0, sizeof(*out));
    for (size_t i = 0; i < e->nd.nodes.n; i++) {
        const enode_t *n = &e->nd.nodes.items[i];
        if (!n->alive)
            continue;
        out->nodes++;
        out->gpu_milli_capacity += n->alloc.v[RES_GPU];
        out->gpu_milli_used += n->used.v[RES_GPU];
        out->cpu_milli_capacity += n->alloc.v[RES_CPU];
        out->cpu_milli_used += n->used.v[RES_CPU];
    }
    for (size_t i = 0; i < e->pd.pods.n; i++) {
        const epod_t *p = &e->pd.pods.items[i];
        if (!p->alive)
            continue;
        if (!POD_PLACED(p))
            out->pods_pending++;
        else
            out->pods_running++;
    }
}

int corral_engine_selfcheck(corral_engine_t *e, char *msg, size_t len)
{
    int64_t pending = 0;
    for (size_t i = 0; i < e->pd.pods.n; i++) {
        const epod_t *p = &e->pd.pods.items[i];
        pending += p->alive && (p->state == POD_PENDING || p->state == POD_FOREIGN);
    }
    if (pending != e->pd.npending) {
        snprintf(msg, len, "kept %lld pending pods, counted %lld", (long long)e->pd.npending,
                 (long long)pending);
        return CORRAL_EINVAL;
    }
    for (size_t i = 0; i < e->pd.groups.n; i++) {
        const egroup_t *g = &e->pd.groups.items[i];
        uint32_t n = 0;
        for (size_t j = 0; g->alive && j < g->npods; j++)
            n += e->pd.pods.items[g->pods[j]].state == POD_PENDING;
        if (g->alive && n != g->npend) {
            snprintf(msg, len, "group %s: kept %u pending pods, counted %u", g->key, g->npend, n);
            return CORRAL_EINVAL;
        }
    }
    return corral__tally_check(e, msg, len);
}
