/*
 * Queues: the hierarchy, what each queue holds and wants, its entitlement
 * (deserved), its share, and the rules that cap it (capability) or protect
 * others from it (guarantee). Semantics are SCENARIOS.md's:
 *
 *  - A queue that sets deserved gets it. Every other queue first receives its
 *    guarantee; the rest of its parent's amount is water-filled by weight over
 *    the queues whose demand exceeds their guarantee, each capped by its
 *    capability and its demand. Computed per resource, level by level.
 *  - share = max over resources of allocated / deserved (Volcano's rule: a
 *    zero entitlement with something allocated counts as 1).
 *  - Order of service: at each level of the tree, higher queue priority
 *    first, then lower share, then name.
 */
#include <stdio.h>
#include <string.h>

#include "engine/engine_int.h"

#define INF64 INT64_MAX

static uint32_t resolve_queue(corral_engine_t *e, egroup_t *g)
{
    if (g->queue_ver == e->qs.queue_ver && e->qs.queue_ver != 0)
        return g->queue; /* resolved against these queues already */
    uint32_t id;
    if (!corral_hmap_get(&e->qs.queue_by_name, g->queue_name, &id) || !e->qs.queues.items[id].alive)
        id = NONE;
    g->queue_ver = e->qs.queue_ver;
    return id;
}

uint32_t corral__queue_of(corral_engine_t *e, egroup_t *g)
{
    uint32_t id = resolve_queue(e, g);
    if (id == g->queue)
        return id;
    /* Its pods' accounting moves with it. */
    for (size_t i = 0; i < g->npods; i++)
        corral__contrib(e, &e->pd.pods.items[g->pods[i]], -1);
    g->queue = id;
    for (size_t i = 0; i < g->npods; i++)
        corral__contrib(e, &e->pd.pods.items[g->pods[i]], 1);
    VEC_PUSH(e->pd.unlisted, (uint32_t)(g - e->pd.groups.items)); /* into its new queue's list */
    return id;
}

void corral__contrib(corral_engine_t *e, const epod_t *p, int sign)
{
    if (!p->alive || p->state == POD_TERMINATING || p->state == POD_FOREIGN || p->state == POD_GONE)
        return;
    uint32_t q = e->pd.groups.items[p->group].queue;
    bool held = p->state == POD_BOUND || p->nom_node != NONE;
    /* Parents are as resolve_tree left them: acyclic, at most 65 deep. */
    for (int depth = 0; q != NONE && q < e->qs.queues.n && depth <= 65;
         q = e->qs.queues.items[q].parent, depth++) {
        equeue_t *x = &e->qs.queues.items[q];
        x->share_dirty = true;
        if (sign > 0) {
            rv_add(&x->demand, &p->req, e->nres);
            if (held)
                rv_add(&x->alloc, &p->req, e->nres);
        } else {
            rv_sub(&x->demand, &p->req, e->nres);
            if (held)
                rv_sub(&x->alloc, &p->req, e->nres);
        }
    }
}

/* Children lists (CSR, in id order; the root is index queues.n). */
static void build_kids(corral_engine_t *e)
{
    size_t n = e->qs.queues.n;
    corral_free(e->qs.kid_first);
    corral_free(e->qs.kid_ids);
    e->qs.kid_first = corral_calloc(n + 3, sizeof(uint32_t));
    e->qs.kid_ids = corral_malloc((n + 1) * sizeof(uint32_t));
    for (size_t i = 0; i < n; i++) {
        const equeue_t *q = &e->qs.queues.items[i];
        if (q->alive)
            e->qs.kid_first[(q->parent == NONE ? n : q->parent) + 2]++;
    }
    for (size_t i = 2; i < n + 3; i++)
        e->qs.kid_first[i] += e->qs.kid_first[i - 1];
    for (size_t i = 0; i < n; i++) {
        const equeue_t *q = &e->qs.queues.items[i];
        if (q->alive)
            e->qs.kid_ids[e->qs.kid_first[(q->parent == NONE ? n : q->parent) + 1]++] = (uint32_t)i;
    }
}

/* Effective guarantees, bottom up: a parent's is the larger of its own and
 * the sum of its children's (ruling 4). */
static void effective_guarantees(corral_engine_t *e)
{
    size_t n = e->qs.queues.n;
    rvec_t *kids = corral_calloc(n + 1, sizeof(*kids)); /* children's sums */
    uint32_t maxd = 0;
    for (size_t i = 0; i < n; i++) {
        equeue_t *q = &e->qs.queues.items[i];
        q->gua_eff = q->guarantee;
        q->gua_eff_mask = q->gua_mask;
        for (int d = 0; d < RES_MAX; d++) {
            if (!(q->gua_mask >> d & 1))
                q->gua_eff.v[d] = 0;
        }
        maxd = q->alive && q->depth > maxd ? q->depth : maxd;
    }
    for (uint32_t depth = maxd; depth > 0; depth--) {
        /* Queues at this depth are final (their children are deeper): add
         * each to its parent's sum, then settle the parents' level. */
        for (size_t i = 0; i < n; i++) {
            const equeue_t *q = &e->qs.queues.items[i];
            if (!q->alive || q->depth != depth || q->parent == NONE)
                continue;
            rv_add(&kids[q->parent], &q->gua_eff, RES_MAX);
            e->qs.queues.items[q->parent].gua_eff_mask |= q->gua_eff_mask;
        }
        for (size_t i = 0; i < n; i++) {
            equeue_t *q = &e->qs.queues.items[i];
            if (!q->alive || q->depth != depth - 1)
                continue;
            for (int d = 0; d < RES_MAX; d++) {
                if (kids[i].v[d] > q->gua_eff.v[d])
                    q->gua_eff.v[d] = kids[i].v[d];
            }
        }
    }
    corral_free(kids);
}

static void resolve_tree(corral_engine_t *e)
{
    e->qs.any_guarantee = false;
    for (size_t i = 0; i < e->qs.queues.n; i++) {
        equeue_t *q = &e->qs.queues.items[i];
        uint32_t p = NONE;
        q->parent = NONE;
        q->leaf = true;
        if (q->alive && q->parent_name &&
            corral_hmap_get(&e->qs.queue_by_name, q->parent_name, &p) &&
            e->qs.queues.items[p].alive && p != i)
            q->parent = p;
    }
    /* Break cycles: a queue whose ancestry loops becomes top-level. */
    for (size_t i = 0; i < e->qs.queues.n; i++) {
        uint32_t cur = (uint32_t)i;
        int depth = 0;
        while (cur != NONE && depth <= 64) {
            cur = e->qs.queues.items[cur].parent;
            depth++;
        }
        if (depth > 64)
            e->qs.queues.items[i].parent = NONE;
        e->qs.queues.items[i].depth = (uint32_t)(depth - 1);
    }
    for (size_t i = 0; i < e->qs.queues.n; i++) {
        equeue_t *q = &e->qs.queues.items[i];
        if (q->alive && q->parent != NONE)
            e->qs.queues.items[q->parent].leaf = false;
        q->capped = false;
        q->reclaim_eff = true;
        e->qs.any_guarantee |= q->alive && q->gua_mask != 0;
        for (uint32_t c = (uint32_t)i; c != NONE; c = e->qs.queues.items[c].parent) {
            const equeue_t *a = &e->qs.queues.items[c];
            q->capped |= a->cap_mask != 0;
            q->reclaim_eff &= a->reclaimable;
        }
    }
    build_kids(e);
    effective_guarantees(e);
}

/* Count every queue's allocation and demand from scratch (corral__contrib
 * keeps them in step between counts). */
static void tally(corral_engine_t *e)
{
    for (size_t i = 0; i < e->qs.queues.n; i++) {
        memset(&e->qs.queues.items[i].alloc, 0, sizeof(rvec_t));
        memset(&e->qs.queues.items[i].demand, 0, sizeof(rvec_t));
    }
    for (size_t i = 0; i < e->pd.groups.n; i++) {
        egroup_t *g = &e->pd.groups.items[i];
        if (g->alive)
            g->queue = resolve_queue(e, g);
    }
    for (size_t i = 0; i < e->pd.pods.n; i++)
        corral__contrib(e, &e->pd.pods.items[i], 1);
}

/* Water-fill amount r over the children of parent (NONE: top level), one
 * resource dimension d at a time. */
static void fill_level(corral_engine_t *e, uint32_t parent, int d, int64_t avail)
{
    size_t nk = 0;
    for (size_t i = 0; i < e->qs.queues.n; i++)
        nk += e->qs.queues.items[i].alive && e->qs.queues.items[i].parent == parent;
    uint32_t *kids = corral_malloc((nk + 1) * sizeof(*kids));
    bool *active = corral_malloc((nk + 1) * sizeof(*active));
    int64_t *room = corral_malloc((nk + 1) * sizeof(*room));
    nk = 0;
    for (size_t i = 0; i < e->qs.queues.n; i++) {
        const equeue_t *q = &e->qs.queues.items[i];
        if (q->alive && q->parent == parent)
            kids[nk++] = (uint32_t)i;
    }
    int64_t r = avail;
    for (size_t i = 0; i < nk; i++) {
        equeue_t *q = &e->qs.queues.items[kids[i]];
        int64_t g = (q->gua_eff_mask >> d & 1) ? q->gua_eff.v[d] : 0;
        q->des_eff.v[d] = (q->des_mask >> d & 1) ? q->deserved.v[d] : g;
        r -= q->des_eff.v[d];
        int64_t cap = (q->cap_mask >> d & 1) ? q->cap.v[d] : INF64;
        int64_t want = q->demand.v[d] < cap ? q->demand.v[d] : cap;
        active[i] = !(q->des_mask >> d & 1) && q->demand.v[d] > g;
        room[i] = want > q->des_eff.v[d] ? want - q->des_eff.v[d] : 0;
        if (room[i] == 0)
            active[i] = false;
    }
    while (r > 0) {
        int64_t wsum = 0;
        for (size_t i = 0; i < nk; i++)
            wsum += active[i] ? e->qs.queues.items[kids[i]].weight : 0;
        if (wsum == 0)
            break;
        bool capped = false;
        int64_t given = 0;
        for (size_t i = 0; i < nk; i++) {
            if (!active[i])
                continue;
            equeue_t *q = &e->qs.queues.items[kids[i]];
            int64_t part = (int64_t)((__int128)r * q->weight / wsum);
            if (part >= room[i]) {
                part = room[i];
                active[i] = false;
                capped = true;
            }
            q->des_eff.v[d] += part;
            room[i] -= part;
            given += part;
        }
        r -= given;
        if (!capped || given == 0)
            break;
    }
    corral_free(active);
    corral_free(room);
    for (size_t i = 0; i < nk; i++)
        fill_level(e, kids[i], d, e->qs.queues.items[kids[i]].des_eff.v[d]);
    corral_free(kids);
}

bool corral__queues_recount(corral_engine_t *e)
{
    corral__queue_get(e, "default"); /* always exists */
    if (e->qs.tally_ver == e->qs.queue_ver)
        return false; /* corral__contrib has kept every queue's numbers */
    /* Queues came, went or moved: count again. */
    resolve_tree(e);
    tally(e);
    e->qs.tally_ver = e->qs.queue_ver;
    return true;
}

void corral__queues_prepare(corral_engine_t *e)
{
    memset(&e->nd.total_alloc, 0, sizeof(e->nd.total_alloc));
    memset(&e->nd.total_used, 0, sizeof(e->nd.total_used));
    for (size_t i = 0; i < e->nd.nodes.n; i++) {
        const enode_t *n = &e->nd.nodes.items[i];
        if (n->alive) {
            rv_add(&e->nd.total_alloc, &n->alloc, e->nres);
            rv_add(&e->nd.total_used, &n->used, e->nres);
        }
    }
    for (size_t i = 0; i < e->qs.queues.n; i++) {
        memset(&e->qs.queues.items[i].des_eff, 0, sizeof(rvec_t));
        e->qs.queues.items[i].share_dirty = true;
    }
    for (int d = 0; d < e->nres; d++)
        fill_level(e, NONE, d, e->nd.total_alloc.v[d]);
}

int corral__tally_check(corral_engine_t *e, char *msg, size_t len)
{
    /* Count with each group's queue as it stands (a group whose queue is to
     * be resolved again moves its pods' accounting when it is, next cycle),
     * then put the kept numbers back: the check changes nothing. */
    size_t n = e->qs.queues.n;
    rvec_t *was = corral_malloc((2 * n + 1) * sizeof(*was));
    for (size_t i = 0; i < n; i++) {
        equeue_t *q = &e->qs.queues.items[i];
        was[2 * i] = q->alloc;
        was[2 * i + 1] = q->demand;
        memset(&q->alloc, 0, sizeof(rvec_t));
        memset(&q->demand, 0, sizeof(rvec_t));
    }
    for (size_t i = 0; i < e->pd.pods.n; i++)
        corral__contrib(e, &e->pd.pods.items[i], 1);
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        equeue_t *q = &e->qs.queues.items[i];
        for (int d = 0; d < e->nres && rc == 0; d++) {
            if (q->alloc.v[d] != was[2 * i].v[d] || q->demand.v[d] != was[2 * i + 1].v[d]) {
                snprintf(msg, len,
                         "queue %s, resource %s: kept allocation %lld, demand %lld; counted "
                         "%lld, %lld",
                         q->name, e->res_names[d], (long long)was[2 * i].v[d],
                         (long long)was[2 * i + 1].v[d], (long long)q->alloc.v[d],
                         (long long)q->demand.v[d]);
                rc = CORRAL_EINVAL;
            }
        }
        q->alloc = was[2 * i];
        q->demand = was[2 * i + 1];
    }
    corral_free(was);
    return rc;
}

const char *corral__capability_block(corral_engine_t *e, uint32_t q, const rvec_t *req)
{
    for (; q != NONE; q = e->qs.queues.items[q].parent) {
        const equeue_t *x = &e->qs.queues.items[q];
        for (int d = 0; d < e->nres; d++) {
            if ((x->cap_mask >> d & 1) && req->v[d] > 0 && x->alloc.v[d] + req->v[d] > x->cap.v[d])
                return x->name;
        }
    }
    return NULL;
}

/* What subtree s keeps from every queue outside it, in dimension d: its own
 * guarantee beyond what the subtree holds, or what its children keep, the
 * larger (ruling 4: a child's guarantee holds against its siblings too). */
static int64_t reserved_by(const corral_engine_t *e, uint32_t s, int d, int depth)
{
    const equeue_t *x = &e->qs.queues.items[s];
    if (!(x->gua_eff_mask >> d & 1))
        return 0;
    int64_t own = (x->gua_mask >> d & 1) ? x->guarantee.v[d] - x->alloc.v[d] : 0;
    int64_t kids = 0;
    for (uint32_t k = e->qs.kid_first[s]; depth < 65 && k < e->qs.kid_first[s + 1]; k++)
        kids += reserved_by(e, e->qs.kid_ids[k], d, depth + 1);
    int64_t r = own > kids ? own : kids;
    return r > 0 ? r : 0;
}

bool corral__guarantee_ok(corral_engine_t *e, uint32_t q, const rvec_t *req)
{
    if (!e->qs.any_guarantee)
        return true;
    uint32_t root = (uint32_t)e->qs.queues.n;
    for (int d = 0; d < e->nres; d++) {
        if (req->v[d] <= 0 || d == RES_PODS)
            continue;
        int64_t reserved = 0;
        /* Along q's path, every sibling subtree keeps what it reserves. */
        for (uint32_t c = q; c != NONE; c = e->qs.queues.items[c].parent) {
            uint32_t parent = e->qs.queues.items[c].parent;
            uint32_t p = parent == NONE ? root : parent;
            for (uint32_t k = e->qs.kid_first[p]; k < e->qs.kid_first[p + 1]; k++) {
                if (e->qs.kid_ids[k] != c)
                    reserved += reserved_by(e, e->qs.kid_ids[k], d, 0);
            }
        }
        if (reserved && e->nd.total_alloc.v[d] - e->nd.total_used.v[d] - req->v[d] < reserved)
            return false;
    }
    return true;
}

double corral__queue_share(const corral_engine_t *e, uint32_t q)
{
    const equeue_t *x = &e->qs.queues.items[q];
    double share = 0;
    for (int d = 0; d < e->nres; d++) {
        if (d == RES_PODS || d == RES_EPH)
            continue;
        double s;
        if (x->des_eff.v[d] > 0)
            s = (double)x->alloc.v[d] / (double)x->des_eff.v[d];
        else
            s = x->alloc.v[d] > 0 ? 1.0 : 0.0;
        if (s > share)
            share = s;
    }
    return share;
}

/* Shares for ordering, recomputed only for queues whose allocation changed
 * (corral__charge and corral__nominate mark them): the order of service
 * compares queues once per job tried. With fair share on, the key that
 * counts past usage (fairshare.c). */
double corral__share_cached(corral_engine_t *e, uint32_t q)
{
    equeue_t *x = &e->qs.queues.items[q];
    if (x->share_dirty) {
        x->share_c = e->qs.fs_on ? corral__fs_key(e, q) : corral__queue_share(e, q);
        x->share_dirty = false;
    }
    return x->share_c;
}

static int level_cmp(corral_engine_t *e, uint32_t a, uint32_t b)
{
    const equeue_t *x = &e->qs.queues.items[a], *y = &e->qs.queues.items[b];
    if (x->prio != y->prio)
        return x->prio > y->prio ? -1 : 1;
    double sa = corral__share_cached(e, a), sb = corral__share_cached(e, b);
    if (sa != sb)
        return sa < sb ? -1 : 1;
    return strcmp(x->name, y->name);
}

int corral__queue_cmp(corral_engine_t *e, uint32_t a, uint32_t b)
{
    /* Siblings (the common flat case) compare directly. */
    if (e->qs.queues.items[a].parent == e->qs.queues.items[b].parent)
        return level_cmp(e, a, b);
    /* Trees are at most QUEUE_DEPTH_MAX deep (deeper ones are refused). */
    uint32_t pa[QUEUE_DEPTH_MAX + 2] = {0}, pb[QUEUE_DEPTH_MAX + 2] = {0};
    int na = 0, nb = 0;
    for (uint32_t c = a; c != NONE && na <= QUEUE_DEPTH_MAX; c = e->qs.queues.items[c].parent)
        pa[na++] = c;
    for (uint32_t c = b; c != NONE && nb <= QUEUE_DEPTH_MAX; c = e->qs.queues.items[c].parent)
        pb[nb++] = c;
    /* Walk from the root down to the first level where the paths part. */
    while (na > 0 && nb > 0 && pa[na - 1] == pb[nb - 1])
        na--, nb--;
    if (na == 0 || nb == 0)
        return na - nb;
    return level_cmp(e, pa[na - 1], pb[nb - 1]);
}
