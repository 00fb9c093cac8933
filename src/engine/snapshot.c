/*
 * The snapshot: adding, updating and removing nodes, pods, pod groups,
 * queues, priority classes and HyperNodes one at a time, binding and
 * unbinding pods, and the read-only views the simulator and tests use.
 *
 * Every update is O(1) amortised (hash lookups, array appends) except node
 * additions, which mark the name order dirty (re-sorted once, at the next
 * cycle) and pod removals, which are O(pods in the group + pods on the node).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corral/timefmt.h"
#include "engine/engine_int.h"

#define ANN_GROUP      "scheduling.k8s.io/group-name"
#define ANN_VC_GROUP   "scheduling.volcano.sh/group-name"
#define ANN_VC_QUEUE   "scheduling.volcano.sh/queue-name"
#define ANN_GPU_IDS    "corral.dev/gpu-ids"
#define ANN_STARTED_AT "corral.dev/started-at"
#define ANN_ESTIMATE   "corral.dev/runtime-estimate"
#define ANN_MIN_RUN    "corral.dev/min-runtime"

/* --- lifecycle ------------------------------------------------------------------ */

int corral_engine_new(const corral_sched_config_t *cfg, corral_engine_t **out)
{
    corral_engine_t *e = corral_calloc(1, sizeof(*e));
    if (cfg)
        e->cfg = *cfg;
    else
        corral_sched_config_default(&e->cfg);
    corral_arena_init(&e->keep);
    corral_arena_init(&e->cyc);
    corral_arena_init(&e->rsn_arena);
    e->rng = e->cfg.seed ? e->cfg.seed : 1;
    e->next_timer = INT64_MAX;
    e->blocked = NONE;
    e->resv_for = NONE;
    static const char *const fixed[RES_FIXED] = {"cpu", "memory", "nvidia.com/gpu", "pods",
                                                 "ephemeral-storage"};
    for (int i = 0; i < RES_FIXED; i++)
        e->res_names[i] = fixed[i];
    e->nres = RES_FIXED;
    *out = e;
    return 0;
}

void corral_engine_set_config(corral_engine_t *e, const corral_sched_config_t *cfg)
{
    e->epoch++;
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

static void free_pod(epod_t *p)
{
    corral_free(p->ns);
    corral_free(p->name);
    corral_free(p->key);
    corral_free(p->pc_name);
    memset(p, 0, sizeof(*p));
}

static void free_group(egroup_t *g)
{
    corral_free(g->ns);
    corral_free(g->name);
    corral_free(g->key);
    corral_free(g->queue_name);
    corral_free(g->pc_name);
    corral_free(g->pods);
    memset(g, 0, sizeof(*g));
}

static void free_hn(ehn_t *h)
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
    for (size_t i = 0; i < e->nodes.n; i++)
        free_node(&e->nodes.items[i]);
    for (size_t i = 0; i < e->pods.n; i++)
        free_pod(&e->pods.items[i]);
    for (size_t i = 0; i < e->groups.n; i++)
        free_group(&e->groups.items[i]);
    for (size_t i = 0; i < e->queues.n; i++) {
        corral_free(e->queues.items[i].name);
        corral_free(e->queues.items[i].parent_name);
        corral_free(e->queues.items[i].jobs);
    }
    for (size_t i = 0; i < e->hns.n; i++)
        free_hn(&e->hns.items[i]);
    corral_free(e->nodes.items);
    corral_free(e->pods.items);
    corral_free(e->pod_free.items);
    corral_free(e->groups.items);
    corral_free(e->queues.items);
    corral_free(e->pc_values.items);
    corral_free(e->hns.items);
    for (size_t i = 0; i < e->profs.n; i++) {
        corral_free(e->profs.items[i].cache);
        corral_arena_free(e->profs.items[i].arena);
    }
    corral_free(e->profs.items);
    corral_free(e->prof_free.items);
    for (size_t i = 0; i < e->classes.n; i++)
        corral_free(e->classes.items[i].key);
    corral_free(e->classes.items);
    corral_free(e->cls_free.items);
    corral_free(e->node_free.items);
    for (size_t i = 0; i < e->rclss.n; i++)
        corral_free(e->rclss.items[i].key);
    corral_free(e->rclss.items);
    corral_free(e->rcls_free.items);
    for (size_t i = 0; i < e->pc_names.n; i++)
        corral_free(e->pc_names.items[i]);
    corral_free(e->pc_names.items);
    corral_free(e->pc_free.items);
    for (size_t i = 0; i < e->wshapes.n; i++)
        corral_free(e->wshapes.items[i].key);
    corral_free(e->wshape_free.items);
    corral_free(e->node_order);
    corral_free(e->binds.items);
    corral_free(e->evicts.items);
    corral_free(e->pendings.items);
    corral_free(e->gstats.items);
    corral_free(e->txn.items);
    corral_free(e->txn_ver.items);
    corral_free(e->running.items);
    corral__resv_clear(e);
    corral_hmap_fini(&e->node_by_name);
    corral_hmap_fini(&e->pod_by_key);
    corral_hmap_fini(&e->group_by_key);
    corral_hmap_fini(&e->queue_by_name);
    corral_free(e->kid_first);
    corral_free(e->kid_ids);
    corral_hmap_fini(&e->pc_by_name);
    corral_hmap_fini(&e->hn_by_name);
    corral_hmap_fini(&e->prof_by_key);
    corral_hmap_fini(&e->cls_by_key);
    corral_hmap_fini(&e->reason_cache);
    corral_hmap_fini(&e->model_ids);
    corral_hmap_fini(&e->wshape_by_key);
    corral_hmap_fini(&e->rcls_by_key);
    corral_hmap_fini(&e->rsn_by_text);
    corral_arena_fini(&e->rsn_arena);
    corral_free(e->rsn_texts.items);
    corral_free(e->changed.items);
    corral_free(e->touched.items);
    corral_free(e->group_free.items);
    corral_free(e->group_dead.items);
    corral_free(e->fresh.items);
    corral_free(e->fresh_pods.items);
    corral_free(e->unlisted.items);
    corral_free(e->wshapes.items);
    corral_free(e->shapes);
    corral_free(e->pressure);
    corral_free(e->reason_vals.items);
    corral_arena_fini(&e->keep);
    corral_arena_fini(&e->cyc);
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

/* --- resources ------------------------------------------------------------------ */

int corral__res_index(corral_engine_t *e, const char *name)
{
    if (strcmp(name, "corral.dev/gpu-milli") == 0)
        return RES_GPU;
    for (int i = 0; i < e->nres; i++) {
        if (strcmp(e->res_names[i], name) == 0)
            return i;
    }
    if (e->nres >= RES_MAX)
        return -1; /* more extended resources than we track: ignored */
    e->res_names[e->nres] = corral_arena_strdup(&e->keep, name);
    return e->nres++;
}

/* Convert a resource list; GPUs become milli-GPUs. */
static void to_rvec(corral_engine_t *e, const corral_reslist_t *l, rvec_t *out, uint32_t *mask)
{
    memset(out, 0, sizeof(*out));
    if (mask)
        *mask = 0;
    for (size_t i = 0; i < l->n; i++) {
        const char *name = l->items[i].name;
        int d = corral__res_index(e, name);
        if (d < 0)
            continue;
        int64_t v = 0;
        if (d == RES_CPU)
            corral_qty_milli(&l->items[i].qty, &v);
        else if (strcmp(name, "nvidia.com/gpu") == 0)
            corral_qty_scaled(&l->items[i].qty, 3, &v);
        else
            corral_qty_value(&l->items[i].qty, &v);
        out->v[d] += v;
        if (mask)
            *mask |= 1u << d;
    }
}

/* --- nodes ---------------------------------------------------------------------- */

/* Count a partly used GPU (used in 1..999 milli) in the gap histogram. */
void corral__gap(corral_engine_t *e, int used, int sign)
{
    if (used > 0 && used < 1000)
        e->gaps[(1000 - used) / 10] += sign;
}

int corral__free_whole(const enode_t *n)
{
    uint64_t all = n->ngpu >= 64 ? ~0ULL : (1ULL << n->ngpu) - 1;
    return __builtin_popcountll(all & ~(n->whole_mask | n->share_mask));
}

void corral__hist(corral_engine_t *e, const enode_t *n, int sign)
{
    if (n->alive)
        e->free_hist[corral__free_whole(n)] += (uint32_t)sign;
}

int corral__max_free_whole(const corral_engine_t *e)
{
    for (int f = MAX_GPUS; f > 0; f--) {
        if (e->free_hist[f])
            return f;
    }
    return 0;
}

static int cmp_kv(const void *a, const void *b)
{
    return strcmp(((const corral_kv_t *)a)->key, ((const corral_kv_t *)b)->key);
}

/* A node class nobody uses any more: its slot and its column of every
 * profile's predicate cache are freed for the next class. */
static void cls_unref(corral_engine_t *e, uint32_t id)
{
    if (id == NONE || --e->classes.items[id].refs > 0)
        return;
    ecls_t *c = &e->classes.items[id];
    corral_hmap_del(&e->cls_by_key, c->key);
    corral_free(c->key);
    c->key = NULL;
    for (size_t i = 0; i < e->profs.n; i++) {
        eprof_t *p = &e->profs.items[i];
        if (p->ncache > id)
            p->cache[id] = 0;
    }
    VEC_PUSH(e->cls_free, id);
}

/* Class key: sorted labels, taints, unschedulable. */
static uint32_t node_class(corral_engine_t *e, uint32_t nid)
{
    enode_t *n = &e->nodes.items[nid];
    corral_buf_t b;
    corral_buf_init(&b);
    qsort(n->labels, n->nlabels, sizeof(*n->labels), cmp_kv);
    for (size_t i = 0; i < n->nlabels; i++)
        corral_buf_printf(&b, "%s=%s\n", n->labels[i].key, n->labels[i].value);
    corral_buf_puts(&b, "|");
    for (size_t i = 0; i < n->ntaints; i++)
        corral_buf_printf(&b, "%s=%s:%s\n", n->taints[i].key,
                          n->taints[i].value ? n->taints[i].value : "", n->taints[i].effect);
    corral_buf_puts(&b, n->unschedulable ? "|U" : "|S");
    uint32_t id;
    if (!corral_hmap_get(&e->cls_by_key, corral_buf_str(&b), &id)) {
        ecls_t c = {corral_strdup(corral_buf_str(&b)), 0};
        if (e->cls_free.n) {
            id = e->cls_free.items[--e->cls_free.n];
            e->classes.items[id] = c;
        } else {
            id = (uint32_t)e->classes.n;
            VEC_PUSH(e->classes, c);
        }
        corral_hmap_put(&e->cls_by_key, c.key, id);
    }
    e->classes.items[id].refs++;
    corral_buf_fini(&b);
    return id;
}

static void node_topology(enode_t *n, const corral_obj_t *o, corral_diag_t *diag)
{
    const char *t = corral_strmap_get(&o->meta.annotations, CORRAL_GPU_TOPO_ANNOTATION);
    n->topo = NULL;
    if (!t || n->ngpu == 0)
        return;
    corral_gpu_topo_t topo;
    char why[200];
    if (corral_gpu_topo_parse(n->arena, t, &topo, why, sizeof(why)) != 0 || topo.n != n->ngpu) {
        if (diag)
            corral_diag_add(diag, CORRAL_SEV_WARNING, o->file, o->raw ? o->raw->line : 0, 0, NULL,
                            "node %s: GPU topology ignored (%s); GPUs treated as uniform", n->name,
                            topo.n != n->ngpu ? "size differs from nvidia.com/gpu" : why);
        return;
    }
    n->topo = topo.link;
}

static uint32_t new_node_slot(corral_engine_t *e, const char *name)
{
    enode_t n;
    memset(&n, 0, sizeof(n));
    n.name = corral_strdup(name);
    n.cls = NONE;
    uint32_t id;
    if (e->node_free.n) {
        id = e->node_free.items[--e->node_free.n];
        e->nodes.items[id] = n;
    } else {
        id = (uint32_t)e->nodes.n;
        VEC_PUSH(e->nodes, n);
    }
    corral_hmap_put(&e->node_by_name, e->nodes.items[id].name, id);
    e->order_dirty = true;
    return id;
}

static int upsert_node(corral_engine_t *e, const corral_obj_t *o, corral_diag_t *diag)
{
    e->nodes_ver++;
    const corral_node_t *src = o->u.node;
    uint32_t id;
    if (!corral_hmap_get(&e->node_by_name, o->meta.name, &id))
        id = new_node_slot(e, o->meta.name);
    enode_t *n = &e->nodes.items[id];
    if (!n->alive)
        e->order_dirty = true;
    corral__hist(e, n, -1);
    n->alive = true;
    corral_arena_free(n->arena);
    n->arena = corral_arena_new();
    n->nlabels = o->meta.labels.n;
    n->labels = corral_arena_alloc(n->arena, (n->nlabels + 1) * sizeof(*n->labels));
    for (size_t i = 0; i < n->nlabels; i++) {
        n->labels[i].key = corral_arena_strdup(n->arena, o->meta.labels.items[i].key);
        n->labels[i].value = corral_arena_strdup(n->arena, o->meta.labels.items[i].value);
    }
    n->ntaints = src->ntaints;
    n->taints = corral_arena_alloc(n->arena, (n->ntaints + 1) * sizeof(*n->taints));
    for (size_t i = 0; i < n->ntaints; i++) {
        const corral_taint_t *t = &src->taints[i];
        n->taints[i].key = corral_arena_strdup(n->arena, t->key ? t->key : "");
        n->taints[i].value = t->value ? corral_arena_strdup(n->arena, t->value) : NULL;
        n->taints[i].effect = corral_arena_strdup(n->arena, t->effect ? t->effect : "");
    }
    n->unschedulable = src->unschedulable;
    to_rvec(e, &src->allocatable, &n->alloc, NULL);
    if (!corral_reslist_get(&src->allocatable, "pods"))
        n->alloc.v[RES_PODS] = 110; /* the kubelet's default */
    n->ngpu = (int)(n->alloc.v[RES_GPU] / 1000);
    if (n->ngpu > MAX_GPUS)
        n->ngpu = MAX_GPUS;
    n->alloc.v[RES_GPU] = (int64_t)n->ngpu * 1000;
    if (n->alloc.v[RES_CPU] > e->max_node_cpu)
        e->max_node_cpu = n->alloc.v[RES_CPU];
    if (n->alloc.v[RES_GPU] > e->max_node_gpu)
        e->max_node_gpu = n->alloc.v[RES_GPU];
    node_topology(n, o, diag);
    memset(n->picks, 0, sizeof(n->picks)); /* topology may have changed */
    n->frag_valid = false;
    uint32_t old_cls = n->cls;
    n->cls = node_class(e, id);
    cls_unref(e, old_cls);
    n->model = corral__node_model(e, n);
    corral__hist(e, n, 1);
    e->version = ++e->vseq;
    e->hn_dirty = true;
    return 0;
}

static int cmp_node_name(const void *a, const void *b, void *ctx)
{
    const corral_engine_t *e = ctx;
    return strcmp(e->nodes.items[*(const uint32_t *)a].name,
                  e->nodes.items[*(const uint32_t *)b].name);
}

void corral__node_order(corral_engine_t *e)
{
    if (!e->order_dirty)
        return;
    corral_free(e->node_order);
    e->node_order = corral_malloc((e->nodes.n + 1) * sizeof(uint32_t));
    size_t k = 0;
    for (size_t i = 0; i < e->nodes.n; i++) {
        if (e->nodes.items[i].alive)
            e->node_order[k++] = (uint32_t)i;
    }
    qsort_r(e->node_order, k, sizeof(uint32_t), cmp_node_name, e);
    for (size_t i = 0; i < k; i++)
        e->nodes.items[e->node_order[i]].order = (uint32_t)i;
    e->nnode_order = k;
    e->order_dirty = false;
}

/* --- profiles (interned pod constraints) ------------------------------------------- */

static void key_sel(corral_buf_t *b, const corral_selector_t *s)
{
    for (size_t i = 0; i < s->n; i++) {
        corral_buf_printf(b, "%s~%d(", s->reqs[i].key, (int)s->reqs[i].op);
        for (size_t j = 0; j < s->reqs[i].nvalues; j++)
            corral_buf_printf(b, "%s,", s->reqs[i].values[j]);
        corral_buf_puts(b, ")");
    }
}

static void prof_key(const corral_pod_spec_t *sp, corral_buf_t *b)
{
    corral_kv_t *sel = corral_malloc((sp->node_selector.n + 1) * sizeof(*sel));
    if (sp->node_selector.n) {
        memcpy(sel, sp->node_selector.items, sp->node_selector.n * sizeof(*sel));
        qsort(sel, sp->node_selector.n, sizeof(*sel), cmp_kv);
    }
    for (size_t i = 0; i < sp->node_selector.n; i++)
        corral_buf_printf(b, "S%s=%s\n", sel[i].key, sel[i].value);
    corral_free(sel);
    const corral_node_affinity_t *na = &sp->node_affinity;
    for (size_t i = 0; i < na->nrequired; i++) {
        corral_buf_puts(b, "R");
        key_sel(b, &na->required[i].exprs);
        corral_buf_puts(b, "F");
        key_sel(b, &na->required[i].fields);
        corral_buf_puts(b, "\n");
    }
    for (size_t i = 0; i < na->npreferred; i++) {
        corral_buf_printf(b, "P%d", na->preferred[i].weight);
        key_sel(b, &na->preferred[i].pref.exprs);
        corral_buf_puts(b, "\n");
    }
    for (size_t i = 0; i < sp->tolerations.n; i++) {
        const corral_toleration_t *t = &sp->tolerations.items[i];
        corral_buf_printf(b, "T%s|%s|%s|%s\n", t->key ? t->key : "", t->op ? t->op : "",
                          t->value ? t->value : "", t->effect ? t->effect : "");
    }
}

static const char *kdup(corral_arena_t *a, const char *s)
{
    return s ? corral_arena_strdup(a, s) : NULL;
}

static void copy_sel(corral_arena_t *a, corral_selector_t *dst, const corral_selector_t *src)
{
    dst->n = src->n;
    dst->reqs = corral_arena_alloc(a, (src->n + 1) * sizeof(*dst->reqs));
    for (size_t i = 0; i < src->n; i++) {
        corral_sel_req_t *r = &dst->reqs[i];
        *r = src->reqs[i];
        r->key = kdup(a, src->reqs[i].key);
        r->values = corral_arena_alloc(a, (r->nvalues + 1) * sizeof(*r->values));
        for (size_t j = 0; j < r->nvalues; j++)
            r->values[j] = kdup(a, src->reqs[i].values[j]);
    }
}

static void copy_prof(eprof_t *p, const corral_pod_spec_t *sp)
{
    corral_arena_t *a = p->arena;
    p->nselector = sp->node_selector.n;
    p->selector = corral_arena_alloc(a, (p->nselector + 1) * sizeof(*p->selector));
    for (size_t i = 0; i < p->nselector; i++) {
        p->selector[i].key = kdup(a, sp->node_selector.items[i].key);
        p->selector[i].value = kdup(a, sp->node_selector.items[i].value);
        p->model_bound |= strcmp(p->selector[i].key, MODEL_LABEL) == 0;
    }
    const corral_node_affinity_t *na = &sp->node_affinity;
    p->nrequired = na->nrequired;
    p->required = corral_arena_alloc(a, (p->nrequired + 1) * sizeof(*p->required));
    for (size_t i = 0; i < na->nrequired; i++) {
        copy_sel(a, &p->required[i].exprs, &na->required[i].exprs);
        copy_sel(a, &p->required[i].fields, &na->required[i].fields);
        if (na->required[i].fields.n)
            p->uses_fields = true;
        for (size_t j = 0; j < p->required[i].exprs.n; j++)
            p->model_bound |= strcmp(p->required[i].exprs.reqs[j].key, MODEL_LABEL) == 0;
    }
    p->npreferred = na->npreferred;
    p->preferred = corral_arena_alloc(a, (p->npreferred + 1) * sizeof(*p->preferred));
    for (size_t i = 0; i < na->npreferred; i++) {
        p->preferred[i].weight = na->preferred[i].weight;
        copy_sel(a, &p->preferred[i].pref.exprs, &na->preferred[i].pref.exprs);
        copy_sel(a, &p->preferred[i].pref.fields, &na->preferred[i].pref.fields);
    }
    p->ntols = sp->tolerations.n;
    p->tols = corral_arena_alloc(a, (p->ntols + 1) * sizeof(*p->tols));
    for (size_t i = 0; i < p->ntols; i++) {
        const corral_toleration_t *t = &sp->tolerations.items[i];
        p->tols[i].key = kdup(a, t->key);
        p->tols[i].op = kdup(a, t->op ? t->op : "Equal");
        p->tols[i].value = kdup(a, t->value);
        p->tols[i].effect = kdup(a, t->effect);
    }
}

static uint32_t intern_prof(corral_engine_t *e, const corral_pod_spec_t *sp)
{
    corral_buf_t b;
    corral_buf_init(&b);
    prof_key(sp, &b);
    uint32_t id;
    if (!corral_hmap_get(&e->prof_by_key, corral_buf_str(&b), &id)) {
        eprof_t p;
        memset(&p, 0, sizeof(p));
        p.arena = corral_arena_new();
        p.key = corral_arena_strdup(p.arena, corral_buf_str(&b));
        copy_prof(&p, sp);
        if (e->prof_free.n) {
            id = e->prof_free.items[--e->prof_free.n];
            e->profs.items[id] = p;
        } else {
            id = (uint32_t)e->profs.n;
            VEC_PUSH(e->profs, p);
        }
        corral_hmap_put(&e->prof_by_key, e->profs.items[id].key, id);
    }
    e->profs.items[id].refs++;
    corral_buf_fini(&b);
    return id;
}

void corral__prof_ref(corral_engine_t *e, uint32_t id)
{
    e->profs.items[id].refs++;
}

/* Caches keyed by profile or request class ids (pending reasons, the
 * failure memo) check e->version: a freed id may come back meaning
 * something else, so freeing one starts a new version. */
static void ids_recycled(corral_engine_t *e)
{
    e->version = ++e->vseq;
}

void corral__prof_unref(corral_engine_t *e, uint32_t id)
{
    eprof_t *p = &e->profs.items[id];
    if (--p->refs > 0)
        return;
    corral_hmap_del(&e->prof_by_key, p->key);
    corral_arena_free(p->arena);
    corral_free(p->cache);
    memset(p, 0, sizeof(*p));
    VEC_PUSH(e->prof_free, id);
    ids_recycled(e);
}

/* --- groups ------------------------------------------------------------------------ */

static uint32_t group_get(corral_engine_t *e, const char *ns, const char *name, bool implicit)
{
    size_t n = strlen(ns) + strlen(name) + 3;
    char *key = corral_malloc(n);
    snprintf(key, n, "%s%s/%s", implicit ? "\x01" : "", ns, name);
    uint32_t id;
    if (corral_hmap_get(&e->group_by_key, key, &id)) {
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
    g.age = e->age_seq++;
    if (e->group_free.n) {
        id = e->group_free.items[--e->group_free.n];
        e->groups.items[id] = g;
    } else {
        id = (uint32_t)e->groups.n;
        VEC_PUSH(e->groups, g);
    }
    corral_hmap_put(&e->group_by_key, e->groups.items[id].key, id);
    return id;
}

/* A group without pods and without a PodGroup object is gone; its slot is
 * reused (a replay creates a group per job). */
static void group_reap(corral_engine_t *e, uint32_t gid)
{
    egroup_t *g = &e->groups.items[gid];
    if (!g->alive || g->npods > 0 || (g->declared && !g->implicit))
        return;
    corral_hmap_del(&e->group_by_key, g->key);
    free_group(g);
    VEC_PUSH(e->group_dead, gid);
}

static void group_add_pod(egroup_t *g, uint32_t pid)
{
    corral_grow((void **)&g->pods, &g->cappods, g->npods + 1, sizeof(*g->pods));
    g->pods[g->npods++] = pid;
}

static void group_del_pod(egroup_t *g, uint32_t pid)
{
    for (size_t i = 0; i < g->npods; i++) {
        if (g->pods[i] == pid) {
            memmove(&g->pods[i], &g->pods[i + 1], (g->npods - i - 1) * sizeof(*g->pods));
            g->npods--;
            return;
        }
    }
}

static void set_str(char **dst, const char *src)
{
    corral_free(*dst);
    *dst = src ? corral_strdup(src) : NULL;
}

static int upsert_podgroup(corral_engine_t *e, const corral_obj_t *o)
{
    const corral_podgroup_t *pg = o->u.pg;
    uint32_t id = group_get(e, o->meta.namespace, o->meta.name, false);
    egroup_t *g = &e->groups.items[id];
    if (g->npods > 0)
        e->epoch++; /* its pods' queue, gang size or class may change */
    g->declared = true;
    g->min_member = pg->min_member;
    set_str(&g->queue_name, pg->queue ? pg->queue : "default");
    g->queue_ver = 0;
    set_str(&g->pc_name, pg->priority_class_name);
    to_rvec(e, &pg->min_resources, &g->min_res, NULL);
    g->has_min_res = pg->min_resources.n > 0;
    g->topo_mode = 0;
    if (pg->topology.mode)
        g->topo_mode = strcmp(pg->topology.mode, "hard") == 0 ? 1 : 2;
    g->topo_tier = pg->topology.highest_tier.set ? pg->topology.highest_tier.v : 0;
    corral__touch(e, id);
    return 0;
}

/* --- binding ---------------------------------------------------------------------- */

static void nominate_drop(corral_engine_t *e, epod_t *p)
{
    if (p->nom_node == NONE)
        return;
    enode_t *n = &e->nodes.items[p->nom_node];
    rv_sub(&n->nominated, &p->req, RES_MAX);
    n->nominated_mask &= ~p->nom_mask;
    p->nom_node = NONE;
    p->nom_mask = 0;
}

/* Clear p's nomination, keeping its queue's accounting in step. */
static void nominate_clear(corral_engine_t *e, epod_t *p)
{
    if (p->nom_node == NONE)
        return;
    corral__contrib(e, p, -1);
    nominate_drop(e, p);
    corral__contrib(e, p, 1);
}

static void nominate_set(corral_engine_t *e, epod_t *p, uint32_t nid, uint64_t mask)
{
    enode_t *n = &e->nodes.items[nid];
    p->nom_node = nid;
    p->nom_mask = mask;
    rv_add(&n->nominated, &p->req, RES_MAX);
    n->nominated_mask |= mask;
}

void corral__nominate(corral_engine_t *e, uint32_t pid, uint32_t nid, uint64_t mask)
{
    epod_t *p = &e->pods.items[pid];
    corral__contrib(e, p, -1);
    nominate_drop(e, p);
    nominate_set(e, p, nid, mask); /* a nominated pod counts as its queue's */
    corral__contrib(e, p, 1);
}

/*
 * Bind: a nominated pod's nomination is suspended, not dropped, so that a
 * tentative bind that is rolled back leaves it as it was; the transaction
 * that records the bind drops it for good. A nominated pod is already
 * charged to its queue.
 */
/* What quiet cycles need to know about running pods as victims (full cycles
 * recount it): the lowest priority running in each queue, and when the next
 * eviction protection runs out. */
static void bind_victim_facts(corral_engine_t *e, const epod_t *p)
{
    uint32_t q = e->groups.items[p->group].queue;
    if (q != NONE && q < e->queues.n && p->priority < e->queues.items[q].min_run_prio)
        e->queues.items[q].min_run_prio = p->priority;
    if (p->min_run_ns > 0 && p->start_ns + p->min_run_ns < e->next_timer)
        e->next_timer = p->start_ns + p->min_run_ns;
}

static void running_add(corral_engine_t *e, uint32_t gid, int sign)
{
    egroup_t *g = &e->groups.items[gid];
    if (sign > 0 && g->nbound++ == 0) {
        g->run_idx = (uint32_t)e->running.n;
        VEC_PUSH(e->running, gid);
    } else if (sign < 0 && --g->nbound == 0) {
        uint32_t last = e->running.items[--e->running.n];
        e->running.items[g->run_idx] = last;
        e->groups.items[last].run_idx = g->run_idx;
    }
}

void corral__bind(corral_engine_t *e, uint32_t pid, uint32_t nid, uint64_t mask)
{
    epod_t *p = &e->pods.items[pid];
    enode_t *n = &e->nodes.items[nid];
    corral__contrib(e, p, -1);
    if (p->nom_node != NONE) {
        p->held_nom_node = p->nom_node;
        p->held_nom_mask = p->nom_mask;
        nominate_drop(e, p);
    }
    if (p->state == POD_PENDING || p->state == POD_FOREIGN)
        e->npending--;
    p->state = POD_BOUND; /* from pending, or GONE on the way back to terminating */
    p->node = nid;
    p->gpu_mask = mask;
    p->start_ns = e->now;
    bind_victim_facts(e, p);
    rv_add(&n->used, &p->req, RES_MAX);
    rv_add(&e->total_used, &p->req, e->nres);
    running_add(e, p->group, 1);
    corral__contrib(e, p, 1);
    corral__hist(e, n, -1);
    e->version = ++e->vseq;
    n->frag_valid = false;
    for (int g = 0; g < n->ngpu; g++) {
        if (!(mask >> g & 1))
            continue;
        if (p->share) {
            corral__gap(e, n->gpu_used[g], -1);
            n->gpu_used[g] = (uint16_t)(n->gpu_used[g] + p->share);
            corral__gap(e, n->gpu_used[g], 1);
            n->share_mask |= 1ULL << g;
        } else {
            n->gpu_used[g] = 1000;
            n->whole_mask |= 1ULL << g;
        }
    }
    corral__hist(e, n, 1);
    corral_grow((void **)&n->pods, &n->cappods, n->npods + 1, sizeof(*n->pods));
    n->pods[n->npods++] = pid;
}

void corral__unbind(corral_engine_t *e, uint32_t pid)
{
    epod_t *p = &e->pods.items[pid];
    if (!POD_PLACED(p))
        return;
    enode_t *n = &e->nodes.items[p->node];
    bool leaving = p->state == POD_TERMINATING;
    corral__contrib(e, p, -1);
    rv_sub(&n->used, &p->req, RES_MAX);
    rv_sub(&e->total_used, &p->req, e->nres);
    running_add(e, p->group, -1);
    bool held = p->held_nom_node != NONE;
    corral__hist(e, n, -1);
    e->version = ++e->vseq;
    n->frag_valid = false;
    for (int g = 0; g < n->ngpu; g++) {
        if (!(p->gpu_mask >> g & 1))
            continue;
        if (p->share) {
            corral__gap(e, n->gpu_used[g], -1);
            n->gpu_used[g] = (uint16_t)(n->gpu_used[g] - p->share);
            corral__gap(e, n->gpu_used[g], 1);
            if (n->gpu_used[g] == 0)
                n->share_mask &= ~(1ULL << g);
        } else {
            n->gpu_used[g] = 0;
            n->whole_mask &= ~(1ULL << g);
        }
    }
    corral__hist(e, n, 1);
    for (size_t i = 0; i < n->npods; i++) {
        if (n->pods[i] == pid) {
            n->pods[i] = n->pods[--n->npods];
            break;
        }
    }
    /* A terminating pod taken off stays out of everything (GONE): were it
     * pending, it would count for its queue again and could be placed. */
    p->state = leaving ? POD_GONE : POD_PENDING;
    e->npending += !leaving;
    p->node = NONE;
    p->gpu_mask = 0;
    if (held) {
        nominate_set(e, p, p->held_nom_node, p->held_nom_mask);
        p->held_nom_node = NONE;
    }
    corral__contrib(e, p, 1);
}

void corral__restore(corral_engine_t *e, uint32_t pid, uint32_t nid, uint64_t mask,
                     int64_t start_ns, uint8_t state)
{
    corral__bind(e, pid, nid, mask);
    epod_t *p = &e->pods.items[pid];
    p->start_ns = start_ns;
    if (state != p->state) {
        corral__contrib(e, p, -1);
        p->state = state;
        corral__contrib(e, p, 1);
    }
}

void corral__terminate(corral_engine_t *e, uint32_t pid)
{
    epod_t *p = &e->pods.items[pid];
    corral__contrib(e, p, -1);
    p->state = POD_TERMINATING;
    corral__contrib(e, p, 1);
}

void corral__gpu_ids_str(uint64_t mask, char *out, size_t len)
{
    size_t o = 0;
    out[0] = '\0';
    for (int g = 0; g < MAX_GPUS && o + 4 < len; g++) {
        if (mask >> g & 1)
            o += (size_t)snprintf(out + o, len - o, "%s%d", o ? "," : "", g);
    }
}

/* --- pods ------------------------------------------------------------------------- */

static bool ours(const char *sched)
{
    return !sched || !*sched || !strcmp(sched, "default-scheduler") || !strcmp(sched, "corral") ||
           !strcmp(sched, "volcano");
}

static int64_t ann_duration(const corral_obj_t *o, const char *key, int64_t dflt,
                            corral_diag_t *diag)
{
    const char *s = corral_strmap_get(&o->meta.annotations, key);
    int64_t ns;
    if (!s)
        return dflt;
    if (corral_duration_parse(s, strlen(s), &ns) != 0) {
        if (diag)
            corral_diag_add(diag, CORRAL_SEV_ERROR, o->file, o->raw ? o->raw->line : 0, 0,
                            "metadata.annotations", "%s: \"%s\" is not a duration like 90m", key,
                            s);
        return dflt;
    }
    return ns;
}

/* GPU ids from the annotation: a bitmask, or 0 with an error reported. */
static uint64_t ann_gpu_ids(const corral_obj_t *o, const enode_t *n, corral_diag_t *diag)
{
    const char *s = corral_strmap_get(&o->meta.annotations, ANN_GPU_IDS);
    uint64_t mask = 0;
    if (!s)
        return 0;
    for (const char *p = s; *p;) {
        char *end;
        long g = strtol(p, &end, 10);
        if (end == p || g < 0 || g >= n->ngpu) {
            if (diag)
                corral_diag_add(diag, CORRAL_SEV_ERROR, o->file, o->raw ? o->raw->line : 0, 0,
                                "metadata.annotations",
                                "%s: \"%s\" must list GPU indices 0..%d of node %s", ANN_GPU_IDS, s,
                                n->ngpu - 1, n->name);
            return 0;
        }
        mask |= 1ULL << g;
        p = *end == ',' ? end + 1 : end;
        if (*end && *end != ',')
            break;
    }
    return mask;
}

/* Pods with the same profile and request fit the same nodes (the failure
 * memo in cycle.c relies on it). */
static uint32_t intern_rcls(corral_engine_t *e, const epod_t *p)
{
    corral_buf_t b;
    corral_buf_init(&b);
    corral_buf_printf(&b, "%u|%u|%u", p->prof, p->gpus, p->share);
    for (int d = 0; d < e->nres; d++)
        corral_buf_printf(&b, "|%lld", (long long)p->req.v[d]);
    uint32_t id;
    if (!corral_hmap_get(&e->rcls_by_key, corral_buf_str(&b), &id)) {
        ercls_t c = {corral_strdup(corral_buf_str(&b)), 0};
        if (e->rcls_free.n) {
            id = e->rcls_free.items[--e->rcls_free.n];
            e->rclss.items[id] = c;
        } else {
            id = (uint32_t)e->rclss.n;
            VEC_PUSH(e->rclss, c);
        }
        corral_hmap_put(&e->rcls_by_key, c.key, id);
    }
    e->rclss.items[id].refs++;
    corral_buf_fini(&b);
    return id;
}

static void rcls_unref(corral_engine_t *e, uint32_t id)
{
    ercls_t *c = &e->rclss.items[id];
    if (--c->refs > 0)
        return;
    corral_hmap_del(&e->rcls_by_key, c->key);
    corral_free(c->key);
    c->key = NULL;
    VEC_PUSH(e->rcls_free, id);
    ids_recycled(e);
}

static uint32_t new_pod_slot(corral_engine_t *e)
{
    if (e->pod_free.n)
        return e->pod_free.items[--e->pod_free.n];
    epod_t p;
    memset(&p, 0, sizeof(p));
    VEC_PUSH(e->pods, p);
    return (uint32_t)(e->pods.n - 1);
}

static void pod_requests(corral_engine_t *e, epod_t *p, const corral_pod_t *src)
{
    corral_arena_t tmp;
    corral_arena_init(&tmp);
    corral_reslist_t req;
    corral_pod_requests(&tmp, &src->spec, &req);
    to_rvec(e, &req, &p->req, NULL);
    const corral_qty_t *whole = corral_reslist_get(&req, "nvidia.com/gpu");
    const corral_qty_t *share = corral_reslist_get(&req, "corral.dev/gpu-milli");
    int64_t v = 0;
    if (whole && corral_qty_value(whole, &v) == 0 && v > 0) {
        p->gpus = (uint16_t)(v > MAX_GPUS ? MAX_GPUS + 1 : v);
        p->req.v[RES_GPU] = v * 1000;
    } else if (share && corral_qty_value(share, &v) == 0 && v > 0) {
        p->share = (uint16_t)(v > 1000 ? 1000 : v);
    }
    p->req.v[RES_PODS] = 1;
    corral_arena_fini(&tmp);
}

static void pod_group(corral_engine_t *e, uint32_t pid, const corral_obj_t *o)
{
    epod_t *p = &e->pods.items[pid];
    const char *gname = corral_strmap_get(&o->meta.annotations, ANN_GROUP);
    if (!gname)
        gname = corral_strmap_get(&o->meta.annotations, ANN_VC_GROUP);
    uint32_t gid;
    if (gname && *gname) {
        gid = group_get(e, p->ns, gname, false);
    } else {
        gid = group_get(e, p->ns, p->name, true);
        egroup_t *g = &e->groups.items[gid];
        const char *q = corral_strmap_get(&o->meta.annotations, ANN_VC_QUEUE);
        set_str(&g->queue_name, q && *q ? q : "default");
        g->queue_ver = 0;
        set_str(&g->pc_name, o->u.pod->spec.priority_class_name);
        g->age = p->age;
    }
    p->group = gid;
    group_add_pod(&e->groups.items[gid], pid);
    corral__touch(e, gid);
}

static int bind_prebound(corral_engine_t *e, uint32_t pid, const corral_obj_t *o,
                         corral_diag_t *diag)
{
    epod_t *p = &e->pods.items[pid];
    const char *node = o->u.pod->spec.node_name;
    uint32_t nid;
    if (!corral_hmap_get(&e->node_by_name, node, &nid) || !e->nodes.items[nid].alive) {
        if (diag)
            corral_diag_add(diag, CORRAL_SEV_ERROR, o->file, o->raw ? o->raw->line : 0, 0,
                            "spec.nodeName", "pod %s is bound to node %s, which does not exist",
                            p->key, node);
        return CORRAL_ENOENT;
    }
    enode_t *n = &e->nodes.items[nid];
    uint64_t mask = ann_gpu_ids(o, n, diag);
    uint64_t busy = n->whole_mask | (p->share ? 0 : n->share_mask);
    if (mask && ((mask & busy) || (!p->share && __builtin_popcountll(mask) != p->gpus) ||
                 (p->share && __builtin_popcountll(mask) != 1))) {
        if (diag)
            corral_diag_add(diag, CORRAL_SEV_ERROR, o->file, o->raw ? o->raw->line : 0, 0,
                            "metadata.annotations",
                            "%s of pod %s names GPUs that are taken or do not match its request",
                            ANN_GPU_IDS, p->key);
        mask = 0;
    }
    if (!mask && (p->gpus || p->share)) {
        if (corral__res_fit(e, p, n, &mask) & (1u << RES_GPU | MISS_GPU_SHARE)) {
            if (diag)
                corral_diag_add(diag, CORRAL_SEV_WARNING, o->file, o->raw ? o->raw->line : 0, 0,
                                "spec.nodeName", "pod %s does not fit the GPUs left on node %s",
                                p->key, node);
        }
    }
    corral__bind(e, pid, nid, mask);
    return 0;
}

/* A new pending pod: the next cycle may be quiet and try only such pods. */
static void mark_fresh(corral_engine_t *e, uint32_t pid)
{
    VEC_PUSH(e->fresh_pods, pid);
    egroup_t *g = &e->groups.items[e->pods.items[pid].group];
    if (!g->fresh) {
        g->fresh = true;
        VEC_PUSH(e->fresh, e->pods.items[pid].group);
        VEC_PUSH(e->unlisted, e->pods.items[pid].group);
    }
}

static int upsert_pod(corral_engine_t *e, const corral_obj_t *o, int64_t now, corral_diag_t *diag)
{
    const corral_pod_t *src = o->u.pod;
    const char *phase = src->status.phase;
    bool done = phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed"));
    bool bound = src->spec.node_name && *src->spec.node_name;
    size_t kn = strlen(o->meta.namespace) + strlen(o->meta.name) + 2;
    char *key = corral_malloc(kn);
    snprintf(key, kn, "%s/%s", o->meta.namespace, o->meta.name);
    uint32_t pid;
    bool known = corral_hmap_get(&e->pod_by_key, key, &pid);
    if (done) {
        corral_free(key);
        if (known)
            corral_engine_remove(e, CORRAL_KIND_POD, o->meta.namespace, o->meta.name);
        return 0;
    }
    if (known) {
        corral_free(key);
        e->epoch++;
        epod_t *p = &e->pods.items[pid];
        p->est_ns = ann_duration(o, ANN_ESTIMATE, -1, diag);
        p->min_run_ns = ann_duration(o, ANN_MIN_RUN, 0, diag);
        if ((p->state == POD_PENDING || p->state == POD_FOREIGN) && bound) {
            corral__contrib(e, p, -1);
            p->state = POD_PENDING;
            corral__contrib(e, p, 1);
            return bind_prebound(e, pid, o, diag);
        }
        return 0;
    }
    pid = new_pod_slot(e);
    epod_t *p = &e->pods.items[pid];
    memset(p, 0, sizeof(*p));
    p->alive = true;
    p->ns = corral_strdup(o->meta.namespace);
    p->name = corral_strdup(o->meta.name);
    p->key = key;
    p->pc_name =
        src->spec.priority_class_name ? corral_strdup(src->spec.priority_class_name) : NULL;
    p->spec_priority = src->spec.priority;
    p->node = NONE;
    p->nom_node = NONE;
    p->held_nom_node = NONE;
    p->age = e->age_seq++;
    p->est_ns = ann_duration(o, ANN_ESTIMATE, -1, diag);
    p->min_run_ns = ann_duration(o, ANN_MIN_RUN, 0, diag);
    pod_requests(e, p, src);
    p->prof = intern_prof(e, &src->spec);
    p->rcls = intern_rcls(e, p);
    corral__wshape_count(e, p, 1);
    corral_hmap_put(&e->pod_by_key, p->key, pid);
    e->pods_version++;
    pod_group(e, pid, o);
    e->npending++;
    corral__contrib(e, p, 1);
    if (!bound && !ours(src->spec.scheduler_name)) {
        p->state = POD_FOREIGN;
        corral__set_reason(e, pid,
                           "not scheduled by Corral: spec.schedulerName names another scheduler");
    }
    if (!bound) {
        mark_fresh(e, pid);
        return 0;
    }
    e->epoch++;
    int64_t saved = e->now;
    e->now = ann_duration(o, ANN_STARTED_AT, now, diag);
    int rc = bind_prebound(e, pid, o, diag);
    e->now = saved;
    if (rc != 0)
        corral_engine_remove(e, CORRAL_KIND_POD, o->meta.namespace, o->meta.name);
    return rc;
}

/* --- queues, priority classes, HyperNodes --------------------------------------------- */

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

static int upsert_queue(corral_engine_t *e, const corral_obj_t *o)
{
    const corral_queue_t *src = o->u.queue;
    uint32_t id = corral__queue_get(e, o->meta.name);
    equeue_t *q = &e->queues.items[id];
    q->alive = true;
    q->implicit = false;
    e->queue_ver++;
    q->weight = src->weight > 0 ? src->weight : 1;
    to_rvec(e, &src->capability, &q->cap, &q->cap_mask);
    to_rvec(e, &src->deserved, &q->deserved, &q->des_mask);
    to_rvec(e, &src->guarantee, &q->guarantee, &q->gua_mask);
    q->reclaimable = src->reclaimable;
    q->closed =
        src->state && (strcmp(src->state, "Closed") == 0 || strcmp(src->state, "Closing") == 0);
    set_str(&q->parent_name, src->parent);
    q->prio = src->priority;
    return 0;
}

static int upsert_pc(corral_engine_t *e, const corral_obj_t *o)
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

static int upsert_hn(corral_engine_t *e, const corral_obj_t *o, corral_diag_t *diag)
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
    free_hn(h);
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
            copy_sel(h->arena, &d->labels, &m->labels);
    }
    e->hn_dirty = true;
    return 0;
}

/* --- dispatch ------------------------------------------------------------------------- */

int corral_engine_upsert(corral_engine_t *e, const corral_obj_t *o, int64_t now_ns,
                         corral_diag_t *diag)
{
    if (o->info->kind != CORRAL_KIND_POD && o->info->kind != CORRAL_KIND_PODGROUP)
        e->epoch++;
    switch (o->info->kind) {
    case CORRAL_KIND_NODE:
        return upsert_node(e, o, diag);
    case CORRAL_KIND_POD:
        return upsert_pod(e, o, now_ns, diag);
    case CORRAL_KIND_PODGROUP:
        return upsert_podgroup(e, o);
    case CORRAL_KIND_QUEUE:
        return upsert_queue(e, o);
    case CORRAL_KIND_PRIORITYCLASS:
        return upsert_pc(e, o);
    case CORRAL_KIND_HYPERNODE:
        return upsert_hn(e, o, diag);
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
    bool found = corral_hmap_get(&e->pod_by_key, key, &pid);
    corral_free(key);
    if (!found)
        return CORRAL_ENOENT;
    epod_t *p = &e->pods.items[pid];
    corral__unbind(e, pid);
    nominate_clear(e, p);
    corral_hmap_del(&e->pod_by_key, p->key);
    egroup_t *g = &e->groups.items[p->group];
    group_del_pod(g, pid);
    corral__touch(e, p->group);
    corral__contrib(e, p, -1);
    if (p->state == POD_PENDING || p->state == POD_FOREIGN)
        e->npending--;
    group_reap(e, p->group);
    corral__wshape_count(e, p, -1);
    rcls_unref(e, p->rcls);
    corral__prof_unref(e, p->prof);
    free_pod(p);
    VEC_PUSH(e->pod_free, pid);
    e->pods_version++;
    return 0;
}

static int remove_node(corral_engine_t *e, const char *name)
{
    uint32_t nid;
    if (!corral_hmap_get(&e->node_by_name, name, &nid) || !e->nodes.items[nid].alive)
        return CORRAL_ENOENT;
    e->nodes_ver++;
    enode_t *n = &e->nodes.items[nid];
    /* Pods cannot outlive their node (Kubernetes' pod GC deletes them). */
    while (n->npods) {
        epod_t *p = &e->pods.items[n->pods[n->npods - 1]];
        char *ns = corral_strdup(p->ns), *pn = corral_strdup(p->name);
        remove_pod(e, ns, pn);
        corral_free(ns);
        corral_free(pn);
    }
    for (size_t i = 0; i < e->pods.n; i++) {
        if (e->pods.items[i].alive && e->pods.items[i].nom_node == nid)
            nominate_clear(e, &e->pods.items[i]);
    }
    corral__hist(e, n, -1);
    cls_unref(e, n->cls);
    corral_hmap_del(&e->node_by_name, n->name);
    free_node(n); /* alive false; the slot is reused by the next new node */
    n->cls = NONE;
    VEC_PUSH(e->node_free, nid);
    e->version = ++e->vseq;
    e->order_dirty = true;
    e->hn_dirty = true;
    return 0;
}

int corral_engine_remove(corral_engine_t *e, corral_kind_t kind, const char *ns, const char *name)
{
    uint32_t id;
    e->epoch++;
    switch (kind) {
    case CORRAL_KIND_POD:
        return remove_pod(e, ns, name);
    case CORRAL_KIND_NODE:
        return remove_node(e, name);
    case CORRAL_KIND_QUEUE:
        if (!corral_hmap_get(&e->queue_by_name, name, &id))
            return CORRAL_ENOENT;
        e->queues.items[id].alive = strcmp(name, "default") == 0;
        e->queues.items[id].implicit = true;
        e->queue_ver++;
        return 0;
    case CORRAL_KIND_HYPERNODE:
        if (!corral_hmap_get(&e->hn_by_name, name, &id))
            return CORRAL_ENOENT;
        e->hns.items[id].alive = false;
        e->hn_dirty = true;
        return 0;
    case CORRAL_KIND_PODGROUP: {
        size_t kn = strlen(ns) + strlen(name) + 2;
        char *key = corral_malloc(kn);
        snprintf(key, kn, "%s/%s", ns, name);
        bool found = corral_hmap_get(&e->group_by_key, key, &id);
        corral_free(key);
        if (!found)
            return CORRAL_ENOENT;
        e->groups.items[id].declared = false;
        corral__touch(e, id);
        group_reap(e, id);
        return 0;
    }
    case CORRAL_KIND_PRIORITYCLASS:
        if (!corral_hmap_get(&e->pc_by_name, name, &id))
            return CORRAL_ENOENT;
        corral_hmap_del(&e->pc_by_name, name);
        corral_free(e->pc_names.items[id]);
        e->pc_names.items[id] = NULL;
        VEC_PUSH(e->pc_free, id);
        e->pc_dirty = true;
        return 0;
    default:
        return CORRAL_ENOENT;
    }
}

/* --- views ------------------------------------------------------------------------------ */

static void pod_view(const corral_engine_t *e, const epod_t *p, corral_pod_view_t *v)
{
    memset(v, 0, sizeof(*v));
    v->ns = p->ns;
    v->name = p->name;
    v->bound = POD_PLACED(p);
    v->terminating = p->state == POD_TERMINATING;
    v->node = v->bound ? e->nodes.items[p->node].name : NULL;
    if (v->bound) {
        corral__gpu_ids_str(p->gpu_mask, (char *)e->view_ids, sizeof(e->view_ids));
        v->gpu_ids = e->view_ids;
    }
    v->start_ns = p->start_ns;
    v->reason = p->reason;
    const egroup_t *g = &e->groups.items[p->group];
    v->queue = g->queue_name;
    v->priority = p->priority;
}

int corral_engine_pod(const corral_engine_t *e, const char *ns, const char *name,
                      corral_pod_view_t *out)
{
    char key[512];
    snprintf(key, sizeof(key), "%s/%s", ns, name);
    uint32_t pid;
    if (!corral_hmap_get(&e->pod_by_key, key, &pid))
        return CORRAL_ENOENT;
    pod_view(e, &e->pods.items[pid], out);
    return 0;
}

static int cmp_pod_age(const void *a, const void *b, void *ctx)
{
    const corral_engine_t *e = ctx;
    uint64_t x = e->pods.items[*(const uint32_t *)a].age;
    uint64_t y = e->pods.items[*(const uint32_t *)b].age;
    return x < y ? -1 : x > y;
}

void corral_engine_each_pod(const corral_engine_t *e, corral_pod_visit_fn fn, void *ctx)
{
    uint32_t *ids = corral_malloc((e->pods.n + 1) * sizeof(*ids));
    size_t k = 0;
    for (size_t i = 0; i < e->pods.n; i++) {
        if (e->pods.items[i].alive)
            ids[k++] = (uint32_t)i;
    }
    qsort_r(ids, k, sizeof(*ids), cmp_pod_age, (void *)e);
    for (size_t i = 0; i < k; i++) {
        corral_pod_view_t v;
        pod_view(e, &e->pods.items[ids[i]], &v);
        fn(&v, ctx);
    }
    corral_free(ids);
}

int corral_engine_max_free_gpus(const corral_engine_t *e)
{
    return corral__max_free_whole(e);
}

void corral_engine_totals(const corral_engine_t *e, corral_engine_totals_t *out)
{
    memset(out, 0, sizeof(*out));
    for (size_t i = 0; i < e->nodes.n; i++) {
        const enode_t *n = &e->nodes.items[i];
        if (!n->alive)
            continue;
        out->nodes++;
        out->gpu_milli_capacity += n->alloc.v[RES_GPU];
        out->gpu_milli_used += n->used.v[RES_GPU];
        out->cpu_milli_capacity += n->alloc.v[RES_CPU];
        out->cpu_milli_used += n->used.v[RES_CPU];
    }
    for (size_t i = 0; i < e->pods.n; i++) {
        const epod_t *p = &e->pods.items[i];
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
    for (size_t i = 0; i < e->pods.n; i++) {
        const epod_t *p = &e->pods.items[i];
        pending += p->alive && (p->state == POD_PENDING || p->state == POD_FOREIGN);
    }
    if (pending != e->npending) {
        snprintf(msg, len, "kept %lld pending pods, counted %lld", (long long)e->npending,
                 (long long)pending);
        return CORRAL_EINVAL;
    }
    return corral__tally_check(e, msg, len);
}
