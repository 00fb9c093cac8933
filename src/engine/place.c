/*
 * Placement: the best node for one pod, and whole jobs as transactions. A job
 * (pod group) is placed gang first: at least minMember of its pods (counting
 * those already running) bind in the same transaction or none does, so a
 * half-placed gang never holds GPUs while it waits. The pods beyond minMember
 * are then placed one by one as room allows.
 *
 * Gangs are planned "one node before two": the nodes are chosen by how many of
 * the gang's pods each can hold, a single node that holds them all first
 * (the tightest such node), else the fewest nodes, largest first. Groups with
 * a network topology are tried inside one HyperNode at a time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine_int.h"

static bool in_bits(const uint64_t *bits, uint32_t nid)
{
    return !bits || (bits[nid / 64] >> (nid % 64) & 1);
}

/* --- transactions -------------------------------------------------------------------- */

size_t corral__txn_mark(corral_engine_t *e)
{
    return e->cy.txn.n;
}

void corral__txn_bind(corral_engine_t *e, uint32_t pid, uint32_t nid, uint64_t mask)
{
    VEC_PUSH(e->cy.txn_ver, e->version);
    corral__bind(e, pid, nid, mask);
    VEC_PUSH(e->cy.txn, pid);
}

void corral__txn_rollback(corral_engine_t *e, size_t mark)
{
    while (e->cy.txn.n > mark) {
        corral__unbind(e, e->cy.txn.items[--e->cy.txn.n]);
        e->version = e->cy.txn_ver.items[--e->cy.txn_ver.n]; /* the same state as then */
    }
}

/* Turn the binds since mark into decisions and close them. */
void corral__txn_record(corral_engine_t *e, size_t mark)
{
    for (size_t i = mark; i < e->cy.txn.n; i++) {
        epod_t *p = &e->pd.pods.items[e->cy.txn.items[i]];
        p->held_nom_node = NONE; /* the nomination is fulfilled */
        char ids[3 * MAX_GPUS];
        corral__gpu_ids_str(p->gpu_mask, ids, sizeof(ids));
        corral_bind_t b = {p->ns, p->name, e->nd.nodes.items[p->node].name,
                           corral_arena_strdup(&e->cy.cyc, ids)};
        VEC_PUSH(e->cy.binds, b);
        corral__touch(e, p->group);
        e->cy.dec.stats.placed++;
    }
    e->cy.txn.n = mark;
    e->cy.txn_ver.n = mark;
}

/* --- one pod ------------------------------------------------------------------------------- */

static bool fits(corral_engine_t *e, const epod_t *p, uint32_t nid, const place_ctx_t *pc,
                 uint64_t *mask)
{
    const enode_t *n = &e->nd.nodes.items[nid];
    if (!n->alive || !in_bits(pc->hn_bits, nid))
        return false;
    if (corral__static_fit(e, p, n) != FIT_OK)
        return false;
    return corral__res_fit_x(e, p, n, pc->use_resv, mask) == 0;
}

uint32_t corral__best_node(corral_engine_t *e, uint32_t pid, const place_ctx_t *pc, uint64_t *mask)
{
    const epod_t *p = &e->pd.pods.items[pid];
    /* A pod that preempted others goes where it made room. */
    if (p->nom_node != NONE && fits(e, p, p->nom_node, pc, mask))
        return p->nom_node;
    if (p->gpus > corral__max_free_whole(e))
        return NONE; /* no node has that many GPUs free */
    uint32_t best = NONE;
    int64_t bk[5], k[5];
    uint64_t m;
    for (size_t i = 0; i < e->nd.nnode_order; i++) {
        uint32_t nid = e->nd.node_order[i];
        e->cy.dec.stats.nodes_evaluated++;
        if (!fits(e, p, nid, pc, &m))
            continue;
        corral__score(e, p, &e->nd.nodes.items[nid], &m, k);
        /* Ties go to the first node in name order (docs/efficiency.md: FGD
         * with kube-scheduler's random tie-breaking loses 5 points). */
        if (best == NONE || corral__score_cmp(k, bk) > 0) {
            best = nid;
            memcpy(bk, k, sizeof(bk));
            *mask = m;
        }
    }
    return best;
}

/* --- gangs --------------------------------------------------------------------------------- */

/* How many copies of pod p node n can still take. */
static int node_capacity(corral_engine_t *e, const epod_t *p, const enode_t *n, bool use_resv)
{
    uint64_t m;
    if (corral__res_fit_x(e, p, n, use_resv, &m) != 0)
        return 0;
    int64_t c = 1 << 20;
    for (int d = 0; d < e->nres; d++) {
        if (d == RES_GPU || p->req.v[d] <= 0)
            continue;
        int64_t freev = n->alloc.v[d] - n->used.v[d] - n->nominated.v[d];
        if (freev / p->req.v[d] < c)
            c = freev / p->req.v[d];
    }
    if (p->gpus) {
        uint64_t all = n->ngpu >= 64 ? ~0ULL : (1ULL << n->ngpu) - 1;
        int freeg =
            __builtin_popcountll(all & ~(n->whole_mask | n->share_mask | n->nominated_mask));
        if (freeg / p->gpus < c)
            c = freeg / p->gpus;
    } else if (p->share) {
        int64_t s = 0;
        for (int g = 0; g < n->ngpu; g++) {
            if (!(n->whole_mask >> g & 1))
                s += (1000 - n->gpu_used[g]) / p->share;
        }
        if (s < c)
            c = s;
    }
    return c < 1 ? 1 : (int)c;
}

typedef struct plan {
    uint32_t *nodes;
    size_t n;
} plan_t;

/* Choose nodes for `need` copies of the representative pod: the tightest
 * single node that holds them all, else the largest nodes first. */
static void gang_plan(corral_engine_t *e, uint32_t rep, int need, const place_ctx_t *pc,
                      plan_t *plan)
{
    const epod_t *p = &e->pd.pods.items[rep];
    int *cap = corral_malloc((e->nd.nnode_order + 1) * sizeof(int));
    for (size_t i = 0; i < e->nd.nnode_order; i++) {
        uint64_t m;
        uint32_t nid = e->nd.node_order[i];
        cap[i] = fits(e, p, nid, pc, &m)
                     ? node_capacity(e, p, &e->nd.nodes.items[nid], pc->use_resv)
                     : 0;
    }
    plan->nodes = corral_malloc((e->nd.nnode_order + 1) * sizeof(uint32_t));
    plan->n = 0;
    int remaining = need;
    while (remaining > 0) {
        long pick = -1;
        for (size_t i = 0; i < e->nd.nnode_order; i++) {
            if (cap[i] >= remaining && (pick < 0 || cap[i] < cap[pick]))
                pick = (long)i;
        }
        if (pick < 0) {
            for (size_t i = 0; i < e->nd.nnode_order; i++) {
                if (cap[i] > 0 && (pick < 0 || cap[i] > cap[pick]))
                    pick = (long)i;
            }
        }
        if (pick < 0)
            break;
        plan->nodes[plan->n++] = e->nd.node_order[pick];
        remaining -= cap[pick];
        cap[pick] = 0;
    }
    corral_free(cap);
}

/* Place one pod: the plan's nodes first (in order), else the best node. */
static uint32_t place_pod(corral_engine_t *e, uint32_t pid, const plan_t *plan,
                          const place_ctx_t *pc, uint64_t *mask)
{
    const epod_t *p = &e->pd.pods.items[pid];
    if (plan) {
        for (size_t i = 0; i < plan->n; i++) {
            if (fits(e, p, plan->nodes[i], pc, mask))
                return plan->nodes[i];
        }
    }
    return corral__best_node(e, pid, pc, mask);
}

/* The order a group's pending pods are tried in (ruling 8): largest first
 * (whole GPUs, then GPU share, then cpu), then priority, then age. */
static int cmp_pending(const void *a, const void *b, void *ctx)
{
    const corral_engine_t *e = ctx;
    const epod_t *x = &e->pd.pods.items[*(const uint32_t *)a];
    const epod_t *y = &e->pd.pods.items[*(const uint32_t *)b];
    if (x->gpus != y->gpus)
        return x->gpus > y->gpus ? -1 : 1;
    if (x->share != y->share)
        return x->share > y->share ? -1 : 1;
    if (x->req.v[RES_CPU] != y->req.v[RES_CPU])
        return x->req.v[RES_CPU] > y->req.v[RES_CPU] ? -1 : 1;
    if (x->priority != y->priority)
        return x->priority > y->priority ? -1 : 1;
    return x->age < y->age ? -1 : x->age > y->age;
}

uint32_t *corral__group_pending(corral_engine_t *e, uint32_t gid, size_t *n, size_t *running)
{
    const egroup_t *g = &e->pd.groups.items[gid];
    uint32_t *ids = corral_malloc((g->npods + 1) * sizeof(*ids));
    size_t k = 0, r = 0;
    for (size_t i = 0; i < g->npods; i++) {
        const epod_t *p = &e->pd.pods.items[g->pods[i]];
        if (p->state == POD_PENDING)
            ids[k++] = g->pods[i];
        else if (p->state == POD_BOUND)
            r++;
    }
    qsort_r(ids, k, sizeof(*ids), cmp_pending, e);
    *n = k;
    *running = r;
    return ids;
}

/* The capability that keeps pod p of queue q from starting, or NULL. A
 * nominated pod already counts as its queue's (it made room by evicting). */
static const char *pod_cap_block(corral_engine_t *e, uint32_t q, const epod_t *p)
{
    if (q == NONE || p->nom_node != NONE)
        return NULL;
    return corral__capability_block(e, q, &p->req);
}

/* Bind `need` of pods[0..n) in one transaction, trying them in order and
 * passing over those that do not fit (ruling 8: M is what this finds).
 * Returns how many were placed (need on success, binds left open). A
 * capability that held a pod back is left in *cap_block. The state only
 * fills up during the attempt, so a request class that found no node once
 * finds none for the rest of it: those pods are passed over unscanned. */
static int gang_try(corral_engine_t *e, uint32_t q, const uint32_t *pods, size_t n, int need,
                    const place_ctx_t *pc, const char **cap_block)
{
    plan_t plan = {NULL, 0};
    bool planned = need <= 1; /* planned lazily: most attempts in a full cluster fail early */
    uint32_t failed[8];
    size_t nfailed = 0;
    int placed = 0;
    for (size_t i = 0; i < n && placed < need; i++) {
        if (e->dry && (int)(n - i) < need - placed)
            break; /* cannot be enough any more; only the count would differ */
        uint32_t pid = pods[i];
        const epod_t *p = &e->pd.pods.items[pid];
        const char *cap = pod_cap_block(e, q, p);
        if (cap) {
            *cap_block = *cap_block ? *cap_block : cap;
            continue;
        }
        if (q != NONE && !corral__guarantee_ok(e, q, &p->req))
            continue;
        if (p->gpus > corral__max_free_whole(e) && p->nom_node == NONE)
            continue; /* no node has that many GPUs free */
        bool known = false;
        for (size_t k = 0; k < nfailed && k < 8 && !known; k++)
            known = failed[k] == p->rcls && p->nom_node == NONE;
        if (known)
            continue;
        if (!planned) {
            gang_plan(e, pods[0], need, pc, &plan);
            planned = true;
        }
        uint64_t mask = 0;
        uint32_t nid = place_pod(e, pid, need > 1 ? &plan : NULL, pc, &mask);
        if (nid == NONE) {
            if (p->nom_node == NONE)
                failed[nfailed++ % 8] = p->rcls;
            continue;
        }
        corral__txn_bind(e, pid, nid, mask);
        placed++;
    }
    corral_free(plan.nodes);
    return placed;
}

/* --- topology (HyperNodes) -------------------------------------------------------------- */

typedef struct hn_cand {
    uint32_t hn;
    int32_t tier;
    int64_t free_gpus;
} hn_cand_t;

static int cmp_cand(const void *a, const void *b, void *ctx)
{
    const corral_engine_t *e = ctx;
    const hn_cand_t *x = a, *y = b;
    if (x->tier != y->tier)
        return x->tier < y->tier ? -1 : 1;
    if (x->free_gpus != y->free_gpus)
        return x->free_gpus < y->free_gpus ? -1 : 1;
    return strcmp(e->hn.hns.items[x->hn].name, e->hn.hns.items[y->hn].name);
}

/* HyperNodes a group may use: tier limit, and holding its running pods. */
static hn_cand_t *topo_candidates(corral_engine_t *e, const egroup_t *g, size_t *n)
{
    hn_cand_t *c = corral_malloc((e->hn.hns.n + 1) * sizeof(*c));
    size_t k = 0;
    for (size_t i = 0; i < e->hn.hns.n; i++) {
        const ehn_t *h = &e->hn.hns.items[i];
        if (!h->alive || !h->bits || (g->topo_mode == 1 && h->tier > g->topo_tier))
            continue;
        bool holds = true;
        for (size_t j = 0; j < g->npods && holds; j++) {
            const epod_t *p = &e->pd.pods.items[g->pods[j]];
            if (POD_PLACED(p) && !in_bits(h->bits, p->node))
                holds = false;
        }
        if (!holds)
            continue;
        int64_t freeg = 0;
        for (size_t j = 0; j < h->nnodes; j++) {
            const enode_t *nd = &e->nd.nodes.items[h->nodes[j]];
            freeg += nd->alloc.v[RES_GPU] - nd->used.v[RES_GPU];
        }
        c[k++] = (hn_cand_t){(uint32_t)i, h->tier, freeg};
    }
    qsort_r(c, k, sizeof(*c), cmp_cand, e);
    *n = k;
    return c;
}

/* Gang inside one HyperNode. Returns placed count of the best attempt; on
 * success the binds are left open. */
static int gang_in_topology(corral_engine_t *e, const egroup_t *g, const uint32_t *pods, size_t n,
                            int need, bool use_resv, const char **cap_block, bool *topo_block)
{
    size_t nc;
    hn_cand_t *c = topo_candidates(e, g, &nc);
    size_t mark = corral__txn_mark(e);
    int best = 0;
    for (size_t i = 0; i < nc; i++) {
        place_ctx_t pc = {use_resv, e->hn.hns.items[c[i].hn].bits};
        int placed = gang_try(e, g->queue, pods, n, need, &pc, cap_block);
        if (placed == need) {
            corral_free(c);
            return placed;
        }
        corral__txn_rollback(e, mark);
        if (placed > best)
            best = placed;
        if (*cap_block)
            break;
    }
    corral_free(c);
    if (g->topo_mode == 1) {
        *topo_block = !*cap_block;
        return best;
    }
    place_ctx_t pc = {use_resv, NULL}; /* soft: anywhere, if no HyperNode holds it */
    return gang_try(e, g->queue, pods, n, need, &pc, cap_block);
}

/* --- jobs --------------------------------------------------------------------------------- */

static void set_reason(corral_engine_t *e, const uint32_t *pods, size_t n, const char *why)
{
    for (size_t i = 0; i < n; i++)
        corral__set_reason(e, pods[i], why);
}

static const char *gang_reason(corral_engine_t *e, const egroup_t *g, uint32_t first, int placed,
                               size_t running, const char *cap, bool topo)
{
    if (cap)
        return corral_arena_printf(&e->cy.cyc, "queue %s is over its capability", cap);
    if (topo)
        return corral_arena_printf(&e->cy.cyc, "no HyperNode of tier <= %d can hold the pod group",
                                   g->topo_tier);
    if (g->min_member > 1)
        return corral_arena_printf(
            &e->cy.cyc, "pod group is not ready, %d pod(s) of minMember %d can be placed",
            (int)running + placed, g->min_member);
    place_ctx_t pc = {false, NULL};
    return corral__nodes_reason(e, first, &pc);
}

/* The HyperNodes a hard-topology group's further pods may use (ruling 9):
 * those of an allowed tier that hold all its placed pods, lowest tier first.
 * Placing a pod only narrows them: keep those holding its node. */
static void topo_narrow(const corral_engine_t *e, hn_cand_t *c, size_t *n, uint32_t nid)
{
    size_t k = 0;
    for (size_t i = 0; i < *n; i++) {
        if (in_bits(e->hn.hns.items[c[i].hn].bits, nid))
            c[k++] = c[i];
    }
    *n = k;
}

/* Pod pid of a hard-topology group inside one of the candidates; NONE when
 * none has room, and then *why says why. */
static uint32_t place_in_topology(corral_engine_t *e, const egroup_t *g, const hn_cand_t *c,
                                  size_t nc, uint32_t pid, bool use_resv, uint64_t *mask,
                                  const char **why)
{
    uint32_t nid = NONE;
    for (size_t i = 0; i < nc && nid == NONE; i++) {
        place_ctx_t pc = {use_resv, e->hn.hns.items[c[i].hn].bits};
        nid = corral__best_node(e, pid, &pc, mask);
    }
    if (nid == NONE && !e->dry) {
        place_ctx_t pc = {false, nc ? e->hn.hns.items[c[nc - 1].hn].bits : NULL};
        *why = nc ? corral__nodes_reason(e, pid, &pc)
                  : corral_arena_printf(&e->cy.cyc,
                                        "no HyperNode of tier <= %d can hold the pod group",
                                        g->topo_tier);
    }
    return nid;
}

/* Pods beyond the gang's minimum: each on its own, as room allows. */
static void place_rest(corral_engine_t *e, const egroup_t *g, const uint32_t *pods, size_t n,
                       bool use_resv)
{
    place_ctx_t pc = {use_resv, NULL};
    size_t nc = 0;
    hn_cand_t *c = NULL;
    for (size_t i = 0; i < n; i++) {
        uint32_t pid = pods[i];
        epod_t *p = &e->pd.pods.items[pid];
        if (p->state != POD_PENDING)
            continue; /* placed with the gang */
        const char *cap = pod_cap_block(e, g->queue, p);
        if (cap) {
            if (!e->dry)
                corral__set_reason(
                    e, pid,
                    corral_arena_printf(&e->cy.cyc, "queue %s is over its capability", cap));
            continue;
        }
        uint64_t mask = 0;
        uint32_t nid = NONE;
        const char *why = NULL;
        if (g->queue == NONE || corral__guarantee_ok(e, g->queue, &p->req)) {
            if (g->topo_mode == 1) {
                if (!c)
                    c = topo_candidates(e, g, &nc);
                nid = place_in_topology(e, g, c, nc, pid, use_resv, &mask, &why);
            } else {
                nid = corral__best_node(e, pid, &pc, &mask);
            }
        }
        if (nid == NONE) {
            place_ctx_t plain = {false, NULL};
            if (!e->dry)
                corral__set_reason(e, pid, why ? why : corral__nodes_reason(e, pid, &plain));
            continue;
        }
        corral__txn_bind(e, pid, nid, mask);
        if (c)
            topo_narrow(e, c, &nc, nid);
    }
    corral_free(c);
}

int corral__place_job(corral_engine_t *e, uint32_t gid, bool use_resv, bool record,
                      const char **why)
{
    egroup_t *g = &e->pd.groups.items[gid];
    size_t n, running;
    uint32_t *pods = corral__group_pending(e, gid, &n, &running);
    *why = NULL;
    if (n == 0) {
        corral_free(pods);
        return PLACE_OK;
    }
    int need = g->min_member - (int)running;
    if (need < 0)
        need = 0;
    size_t mark = corral__txn_mark(e);
    const char *cap = NULL;
    bool topo = false;
    int placed = 0;
    if (need > 0) {
        if (g->topo_mode)
            placed = gang_in_topology(e, g, pods, n, need, use_resv, &cap, &topo);
        else {
            place_ctx_t pc = {use_resv, NULL};
            placed = gang_try(e, g->queue, pods, n, need, &pc, &cap);
        }
        if (placed < need) {
            corral__txn_rollback(e, mark);
            *why = e->dry ? "" : gang_reason(e, g, pods[0], placed, running, cap, topo);
            set_reason(e, pods, n, *why);
            corral_free(pods);
            return cap ? PLACE_CAPABILITY : topo ? PLACE_TOPOLOGY : PLACE_FAIL;
        }
    }
    place_rest(e, g, pods, n, use_resv);
    if (record)
        corral__txn_record(e, mark);
    corral_free(pods);
    return PLACE_OK;
}

/* --- pending reasons ------------------------------------------------------------------------ */

typedef struct reason_count {
    char *text;
    int count;
} reason_count_t;

static void count_reason(corral_engine_t *e, reason_count_t *rc, size_t *n, const char *text)
{
    for (size_t i = 0; i < *n; i++) {
        if (strcmp(rc[i].text, text) == 0) {
            rc[i].count++;
            return;
        }
    }
    rc[*n].text = corral_arena_strdup(&e->cy.cyc, text);
    rc[*n].count = 1;
    (*n)++;
}

static int cmp_strp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void resource_reasons(corral_engine_t *e, const epod_t *p, uint32_t miss, reason_count_t *rc,
                             size_t *nrc)
{
    char buf[160];
    for (int d = 0; d < e->nres; d++) {
        if (!(miss >> d & 1))
            continue;
        if (d == RES_PODS)
            snprintf(buf, sizeof(buf), "Too many pods");
        else if (d == RES_GPU)
            snprintf(buf, sizeof(buf), "Insufficient nvidia.com/gpu");
        else
            snprintf(buf, sizeof(buf), "Insufficient %s", e->res_names[d]);
        count_reason(e, rc, nrc, buf);
    }
    if (miss & MISS_GPU_SHARE)
        count_reason(e, rc, nrc, "Insufficient corral.dev/gpu-milli");
    (void)p;
}

/* One node's contribution: the first failing check, and every missing resource. */
static void node_reason(corral_engine_t *e, const epod_t *p, const enode_t *n, bool reserved,
                        reason_count_t *rc, size_t *nrc)
{
    char buf[600];
    int code = corral__static_fit(e, p, n);
    if (code == FIT_UNSCHED) {
        count_reason(e, rc, nrc, "node(s) were unschedulable");
    } else if (code >= FIT_TAINT) {
        const corral_taint_t *t = &n->taints[code - FIT_TAINT];
        snprintf(buf, sizeof(buf), "node(s) had untolerated taint {%s: %s}", t->key,
                 t->value ? t->value : "");
        count_reason(e, rc, nrc, buf);
    } else if (code == FIT_AFFINITY) {
        count_reason(e, rc, nrc, "node(s) didn't match Pod's node affinity/selector");
    } else {
        uint64_t m;
        uint32_t miss = corral__res_fit_x(e, p, n, false, &m);
        if (reserved && p->gpus && !(miss & (1u << RES_GPU)))
            miss |= 1u << RES_GPU; /* the GPUs left are guaranteed to another queue */
        if (reserved && p->share && !(miss & MISS_GPU_SHARE))
            miss |= MISS_GPU_SHARE;
        resource_reasons(e, p, miss, rc, nrc);
    }
}

/* v in base 64 (digits '0'..'o', never the separator), then '|'. */
static char *put_u64(char *o, uint64_t v)
{
    do {
        *o++ = (char)('0' + (v & 63));
        v >>= 6;
    } while (v);
    *o++ = '|';
    return o;
}

/* Pods with the same constraints and request get the same reason in the same
 * cluster state: remember it until anything binds or unbinds. */
static const char *reason_cached(corral_engine_t *e, const epod_t *p, const place_ctx_t *pc,
                                 bool reserved, char *key, size_t len)
{
    if (e->pm.reason_version != e->version) {
        corral_hmap_fini(&e->pm.reason_cache);
        corral_hmap_init(&e->pm.reason_cache);
        e->pm.reason_vals.n = 0;
        e->pm.reason_version = e->version;
    }
    /* Built by hand: this runs for every pending pod in every cycle. */
    char *o = key, *end = key + len - (size_t)96;
    o = put_u64(o, p->prof);
    o = put_u64(o, reserved);
    o = put_u64(o, (uintptr_t)pc->hn_bits);
    o = put_u64(o, p->gpus);
    o = put_u64(o, p->share);
    for (int d = 0; d < e->nres && o < end; d++)
        o = put_u64(o, (uint64_t)p->req.v[d]);
    *o = '\0';
    uint32_t id;
    return corral_hmap_get(&e->pm.reason_cache, key, &id) ? e->pm.reason_vals.items[id] : NULL;
}

const char *corral__nodes_reason(corral_engine_t *e, uint32_t pid, const place_ctx_t *pc)
{
    const epod_t *p = &e->pd.pods.items[pid];
    const egroup_t *g = &e->pd.groups.items[p->group];
    bool reserved = g->queue != NONE && !corral__guarantee_ok(e, g->queue, &p->req);
    char key[512];
    const char *hit = reason_cached(e, p, pc, reserved, key, sizeof(key));
    if (hit)
        return hit;
    reason_count_t *rc = corral_malloc((size_t)(e->nres + 16 + e->nd.nnode_order) * sizeof(*rc));
    size_t nrc = 0, total = 0;
    for (size_t i = 0; i < e->nd.nnode_order; i++) {
        uint32_t nid = e->nd.node_order[i];
        if (!in_bits(pc->hn_bits, nid))
            continue;
        total++;
        node_reason(e, p, &e->nd.nodes.items[nid], reserved, rc, &nrc);
    }
    char **parts = corral_malloc((nrc + 1) * sizeof(*parts));
    for (size_t i = 0; i < nrc; i++)
        parts[i] = corral_arena_printf(&e->cy.cyc, "%d %s", rc[i].count, rc[i].text);
    qsort(parts, nrc, sizeof(*parts), cmp_strp);
    corral_buf_t b;
    corral_buf_init(&b);
    corral_buf_printf(&b, "0/%zu nodes are available", total);
    for (size_t i = 0; i < nrc; i++)
        corral_buf_printf(&b, "%s%s", i ? ", " : ": ", parts[i]);
    corral_buf_putc(&b, '.');
    const char *out = corral__intern(e, corral_buf_str(&b));
    corral_buf_fini(&b);
    corral_free(parts);
    corral_free(rc);
    VEC_PUSH(e->pm.reason_vals, out);
    corral_hmap_put(&e->pm.reason_cache, corral_arena_strdup(&e->cy.cyc, key),
                    (uint32_t)(e->pm.reason_vals.n - 1));
    return out;
}

/* --- outside cycles ------------------------------------------------------------------------ */

int corral_engine_place_one(corral_engine_t *e, const char *ns, const char *name, int64_t now_ns,
                            corral_bind_t *out)
{
    char key[512];
    snprintf(key, sizeof(key), "%s/%s", ns, name);
    uint32_t pid;
    if (!corral_hmap_get(&e->pd.pod_by_key, key, &pid))
        return CORRAL_ENOENT;
    if (e->pd.pods.items[pid].state != POD_PENDING)
        return CORRAL_EINVAL;
    e->now = now_ns;
    corral__node_order(e);
    if (corral__policy(e)->workload)
        corral__derive_workload(e);
    place_ctx_t pc = {false, NULL};
    uint64_t mask = 0;
    uint32_t nid = corral__best_node(e, pid, &pc, &mask);
    if (nid == NONE)
        return CORRAL_EAGAIN;
    corral__bind(e, pid, nid, mask);
    epod_t *p = &e->pd.pods.items[pid];
    corral__gpu_ids_str(mask, e->one_ids, sizeof(e->one_ids));
    out->ns = p->ns;
    out->name = p->name;
    out->node = e->nd.nodes.items[nid].name;
    out->gpu_ids = e->one_ids;
    return 0;
}
