/*
 * Choosing GPUs inside a node. For k whole GPUs: the k-set of free GPUs whose
 * slowest pairwise link is fastest, ties to the most NVLinks summed over
 * pairs, then to the lexicographically smallest index list (SCENARIOS.md). For
 * one GPU or a share: keep well-connected sets free, i.e. take the free GPU
 * least connected to the other free GPUs, and pack shares onto the GPU with
 * the least room that still fits.
 */
#include <string.h>

#include "engine/engine_int.h"

#define SEARCH_LIMIT 20000 /* k-subsets examined before falling back to greedy */

static inline int link_at(const enode_t *n, int a, int b)
{
    return n->topo ? n->topo[(size_t)a * (size_t)n->ngpu + (size_t)b] : CORRAL_LINK_NV;
}

static inline int nv_count(int rank)
{
    return rank > CORRAL_LINK_NV ? rank - CORRAL_LINK_NV : 0;
}

int corral__set_quality(const enode_t *n, uint64_t set, int *nvsum)
{
    int worst = 1 << 20, sum = 0;
    for (int a = 0; a < n->ngpu; a++) {
        if (!(set >> a & 1))
            continue;
        for (int b = a + 1; b < n->ngpu; b++) {
            if (!(set >> b & 1))
                continue;
            int r = link_at(n, a, b);
            if (r < worst)
                worst = r;
            sum += nv_count(r);
        }
    }
    if (nvsum)
        *nvsum = sum;
    return worst;
}

/* The free GPU least connected to the other free GPUs (ties: lowest index). */
static int least_connected(const enode_t *n, uint64_t free)
{
    int best = -1;
    long best_sum = 0;
    for (int g = 0; g < n->ngpu; g++) {
        if (!(free >> g & 1))
            continue;
        long sum = 0;
        for (int h = 0; h < n->ngpu; h++) {
            if (h != g && (free >> h & 1))
                sum += link_at(n, g, h);
        }
        if (best < 0 || sum < best_sum) {
            best = g;
            best_sum = sum;
        }
    }
    return best;
}

typedef struct search {
    const enode_t *n;
    int idx[MAX_GPUS]; /* free GPU indices, ascending */
    int nfree, k;
    int pick[MAX_GPUS];
    uint64_t best;
    int best_worst, best_nv;
    long visited;
} search_t;

/* Enumerate k-subsets in lexicographic order; keep the first best one. */
static void search_rec(search_t *s, int start, int depth, int worst, int nv)
{
    if (s->visited > SEARCH_LIMIT)
        return;
    if (depth == s->k) {
        s->visited++;
        if (worst > s->best_worst || (worst == s->best_worst && nv > s->best_nv)) {
            uint64_t m = 0;
            for (int i = 0; i < depth; i++)
                m |= 1ULL << s->pick[i];
            s->best = m;
            s->best_worst = worst;
            s->best_nv = nv;
        }
        return;
    }
    for (int i = start; i <= s->nfree - (s->k - depth); i++) {
        int g = s->idx[i], w = worst, v = nv;
        for (int j = 0; j < depth; j++) {
            int r = link_at(s->n, s->pick[j], g);
            if (r < w)
                w = r;
            v += nv_count(r);
        }
        if (w < s->best_worst)
            continue; /* cannot beat the best slowest link any more */
        s->pick[depth] = g;
        search_rec(s, i + 1, depth + 1, w, v);
    }
}

/* Greedy fallback for very large nodes: grow the set by the best next GPU. */
static uint64_t greedy_set(const enode_t *n, uint64_t free, int k)
{
    uint64_t set = 0;
    for (int step = 0; step < k; step++) {
        int best = -1, bw = -1, bv = -1;
        for (int g = 0; g < n->ngpu; g++) {
            if (!(free >> g & 1) || (set >> g & 1))
                continue;
            int v, w = corral__set_quality(n, set | 1ULL << g, &v);
            if (w > bw || (w == bw && v > bv))
                best = g, bw = w, bv = v;
        }
        if (best < 0)
            break;
        set |= 1ULL << best;
    }
    return set;
}

/* Best pair link among GPUs left free: "can a 2-GPU job still run well". */
static int leftover_quality(const enode_t *n, uint64_t free)
{
    if (!n->topo || __builtin_popcountll(free) < 2)
        return 0;
    int best = 0;
    for (int a = 0; a < n->ngpu; a++) {
        if (!(free >> a & 1))
            continue;
        for (int b = a + 1; b < n->ngpu; b++) {
            if ((free >> b & 1) && link_at(n, a, b) > best)
                best = link_at(n, a, b);
        }
    }
    return best;
}

const struct gpu_pick *corral__gpu_pick(enode_t *n, uint64_t free, int k)
{
    static const struct gpu_pick none = {0, 0, 0, 0, 0};
    if (k < 1 || k > GPU_PICK_MAX || free == 0)
        return &none;
    /* A memo of a pure function of the node's topology and free GPUs. */
    struct gpu_pick *c = &n->picks[k];
    if (c->free == free && c->set)
        return c;
    c->free = free;
    c->set = corral__pick_gpus(n, free, k);
    int nv = 0;
    c->worst = corral__set_quality(n, c->set, &nv);
    c->nvsum = nv;
    c->leftover = leftover_quality(n, free & ~c->set);
    return c;
}

uint64_t corral__pick_gpus(const enode_t *n, uint64_t free, int k)
{
    int nfree = __builtin_popcountll(free);
    if (k <= 0 || nfree < k)
        return 0;
    if (nfree == k)
        return free;
    if (k == 1)
        return 1ULL << least_connected(n, free);
    if (!n->topo) {
        uint64_t m = 0;
        for (int g = 0; g < n->ngpu && k > 0; g++) {
            if (free >> g & 1)
                m |= 1ULL << g, k--;
        }
        return m;
    }
    search_t s;
    memset(&s, 0, sizeof(s));
    s.n = n;
    s.nfree = 0;
    for (int g = 0; g < n->ngpu; g++) {
        if (free >> g & 1)
            s.idx[s.nfree++] = g;
    }
    s.k = k;
    s.best = 0;
    s.best_worst = -1;
    s.best_nv = -1;
    s.visited = 0;
    search_rec(&s, 0, 0, 1 << 20, 0);
    if (s.visited > SEARCH_LIMIT)
        return greedy_set(n, free, k);
    return s.best;
}

int corral__pick_share(const enode_t *n, uint16_t share)
{
    int best = -1, best_used = -1;
    uint64_t empty = 0;
    for (int g = 0; g < n->ngpu; g++) {
        if (n->whole_mask >> g & 1)
            continue;
        int used = n->gpu_used[g];
        if (used + share > 1000)
            continue;
        if (used == 0)
            empty |= 1ULL << g;
        if (used > best_used) {
            best = g;
            best_used = used;
        }
    }
    if (best_used == 0)
        return least_connected(n, empty); /* start a new GPU where it hurts least */
    return best;
}
