/*
 * Node scoring: which of the nodes that can take a pod should. A score is a
 * short vector compared lexicographically (higher wins; the node visited
 * first, in name order, wins ties), so each policy states its priorities
 * plainly instead of hiding them in weights.
 *
 * corral (default), in order:
 *   1. preferences the user wrote: preferred node affinity weights, minus
 *      untolerated PreferNoSchedule taints;
 *   1b. GPU models: a pod that may run on any model prefers the models the
 *      workload's model-bound pods want least (model pressure, frag.c);
 *   2. GPU packing: whole-GPU pods go where the fewest whole GPUs stay free,
 *      unless shares are most of the workload's GPU pods (then a whole GPU
 *      left free is more use to the shares; frag.c derives the fraction once
 *      per workload); shares go to the GPU with the least room left; pods without GPUs avoid
 *      nodes with free GPUs (each switchable in cfg.tune, cross-validated
 *      against the alternatives in docs/efficiency.md);
 *   3. NVLink quality of the chosen set (slowest link, then NVLink count);
 *   4. what stays free is still useful: prefer leaving free GPUs that are
 *      well connected to each other (fragmentation);
 *   5. cpu and memory packing, off by default (scoring.cpuMemory): on GPU
 *      nodes it exhausts the cpu of nodes with GPUs still free.
 * The baselines (binpack, spread, random, bestfit, dotprod) are the classic
 * single-number policies, implemented here so that comparisons run the same
 * engine with only the scoring changed.
 */
#include <math.h>
#include <string.h>

#include "engine/engine_int.h"

#define SCALE 1000000

static int free_whole(const enode_t *n, uint64_t taken)
{
    uint64_t all = n->ngpu >= 64 ? ~0ULL : (1ULL << n->ngpu) - 1;
    return __builtin_popcountll(all & ~(n->whole_mask | n->share_mask | taken));
}

static int64_t frac(int64_t num, int64_t den)
{
    return den > 0 ? (int64_t)((__int128)num * SCALE / den) : 0;
}

/* cpu + memory utilisation after placing p (higher = fuller). */
static int64_t cpu_mem_pack(const epod_t *p, const enode_t *n)
{
    return frac(n->used.v[RES_CPU] + p->req.v[RES_CPU], n->alloc.v[RES_CPU]) +
           frac(n->used.v[RES_MEM] + p->req.v[RES_MEM], n->alloc.v[RES_MEM]);
}

/* How well connected the GPUs left free are: the slowest link of the best
 * pair among them is a fair proxy for "a 2-GPU job can still run well here". */
static int64_t leftover_quality(const enode_t *n, uint64_t taken)
{
    uint64_t all = n->ngpu >= 64 ? ~0ULL : (1ULL << n->ngpu) - 1;
    uint64_t free = all & ~(n->whole_mask | n->share_mask | taken);
    if (!n->topo || __builtin_popcountll(free) < 2)
        return 0;
    int best = 0;
    for (int a = 0; a < n->ngpu; a++) {
        if (!(free >> a & 1))
            continue;
        for (int b = a + 1; b < n->ngpu; b++) {
            if ((free >> b & 1) && n->topo[(size_t)a * (size_t)n->ngpu + (size_t)b] > best)
                best = n->topo[(size_t)a * (size_t)n->ngpu + (size_t)b];
        }
    }
    return best;
}

/* The change in the node's fragment, in steps of FGD's score: 100 *
 * sigmoid(decrease in GPUs), truncated. Coarse on purpose: a finer measure
 * chases tiny differences across the cluster and scatters pods, while equal
 * steps leave the choice to packing below (measured: docs/efficiency.md).
 * For a share this also picks the GPU (the first of the best). */
static int64_t frag_step(const corral_engine_t *e, double before, double after)
{
    double div = e->cfg.tune.frag_div > 0 ? (double)e->cfg.tune.frag_div : 1000.0;
    return (int64_t)(100.0 / (1.0 + exp(-(before - after) / div)));
}

/* For a share, the GPU: the best step (tune.share_first: the fullest GPU
 * first, then the step); among equals the first, or (tune.share_gpu) the
 * fullest. */
static int64_t frag_gain(corral_engine_t *e, const epod_t *p, enode_t *n, uint64_t *mask)
{
    double before = corral__node_frag(e, n);
    if (!p->share)
        return frag_step(e, before, corral__frag_after(e, n, p, *mask));
    const corral_score_tune_t *t = &e->cfg.tune;
    int64_t best = -1;
    int best_used = -1;
    for (int g = 0; g < n->ngpu; g++) {
        if ((n->whole_mask >> g & 1) || n->gpu_used[g] + p->share > 1000 ||
            (n->nominated_mask >> g & 1))
            continue;
        int used = n->gpu_used[g];
        if (t->share_first && used < best_used)
            continue;
        int64_t s = frag_step(e, before, corral__frag_after(e, n, p, 1ULL << g));
        bool better = t->share_first ? used > best_used || s > best
                                     : s > best || (t->share_gpu && s == best && used > best_used);
        if (better) {
            best = s;
            best_used = used;
            *mask = 1ULL << g;
        }
    }
    return best;
}

/* cpu left on the node after p, per GPU that stays free (whole or share
 * room counted in GPUs), in milli-cpu; higher keeps cpu for the free GPUs. */
static int64_t cpu_per_free_gpu(const epod_t *p, const enode_t *n, uint64_t taken)
{
    int64_t cpu = n->alloc.v[RES_CPU] - n->used.v[RES_CPU] - p->req.v[RES_CPU];
    int64_t idle = n->alloc.v[RES_GPU] - n->used.v[RES_GPU] - p->req.v[RES_GPU];
    (void)taken;
    return idle > 0 ? cpu * 1000 / idle : cpu * 1000;
}

bool corral__holds_model(const enode_t *n, const char *cache)
{
    if (!cache || !n->model_caches)
        return false;
    size_t len = strlen(cache);
    for (const char *s = n->model_caches; *s;) {
        while (*s == ',' || *s == ' ')
            s++;
        size_t k = strcspn(s, ", ");
        if (k == len && !strncmp(s, cache, len))
            return true;
        s += k;
    }
    return false;
}

static void score_corral(corral_engine_t *e, const epod_t *p, enode_t *n, uint64_t *mask,
                         int64_t *k)
{
    const corral_sched_config_t *c = &e->cfg;
    const corral_score_tune_t *t = &c->tune;
    k[0] = c->w_prefer ? corral__prefer_score(&e->pd.profs.items[p->prof], n) : 0;
    if (c->w_model_cache && corral__holds_model(n, p->model_cache))
        k[0] += c->w_model_cache;
    int64_t step = c->w_frag && e->fr.nshapes ? frag_gain(e, p, n, mask) : 0;
    /* A pod that may use any GPU model leaves the models others need. */
    int64_t pressure = 0;
    if (c->w_frag && e->fr.nshapes && (p->gpus || p->share) &&
        !e->pd.profs.items[p->prof].model_bound)
        pressure = corral__model_pressure(e, n->model);
    k[1] = step - 1000 * pressure;
    if (p->gpus) {
        uint64_t all = n->ngpu >= 64 ? ~0ULL : (1ULL << n->ngpu) - 1;
        uint64_t free = all & ~(n->whole_mask | n->share_mask | n->nominated_mask);
        const struct gpu_pick *pk =
            p->gpus <= GPU_PICK_MAX ? corral__gpu_pick(n, free, p->gpus) : NULL;
        k[2] = c->w_pack && t->whole_pack && e->fr.share_permille <= t->share_heavy
                   ? -free_whole(n, *mask)
                   : 0;
        int worst, nv, left;
        if (pk && pk->set == *mask) {
            worst = pk->worst, nv = pk->nvsum, left = pk->leftover;
        } else {
            worst = corral__set_quality(n, *mask, &nv);
            left = (int)leftover_quality(n, *mask);
        }
        k[3] = c->w_topology ? (int64_t)worst * 1000000 + (int64_t)nv * 1000 + left : 0;
        if (t->whole_cpu)
            k[4] = cpu_per_free_gpu(p, n, *mask);
    } else if (p->share) {
        int g = __builtin_ctzll(*mask);
        k[2] = c->w_pack && t->share_pack ? n->gpu_used[g] + p->share : 0;
        if (c->w_pack && t->share_first) { /* the GPU's fill above the step */
            k[1] = -10000 * pressure + k[2];
            k[2] = step;
        }
        /* measured: preferring nodes with few free whole GPUs helps
         * all-share workloads and hurts others (docs/efficiency.md) */
        k[3] = c->w_pack && t->share_node ? -free_whole(n, *mask) : 0;
    } else {
        k[2] = c->w_pack && t->cpu_pack ? -free_whole(n, 0) : 0;
        k[3] = t->cpu_pod ? cpu_per_free_gpu(p, n, 0) : 0;
        if (t->cpu_pod == 2) { /* cpu where the GPUs need it least, first */
            int64_t x = k[2];
            k[2] = k[3];
            k[3] = x;
        }
    }
    if (c->w_cpu)
        k[4] = cpu_mem_pack(p, n);
}

/* Utilisation (or its complement) averaged over the resources the node has. */
static int64_t mean_util(const epod_t *p, const enode_t *n, bool free_side)
{
    static const int dims[] = {RES_CPU, RES_MEM, RES_GPU};
    int64_t sum = 0;
    int cnt = 0;
    for (size_t i = 0; i < 3; i++) {
        int d = dims[i];
        if (n->alloc.v[d] <= 0)
            continue;
        int64_t after = n->used.v[d] + p->req.v[d];
        sum += frac(free_side ? n->alloc.v[d] - after : after, n->alloc.v[d]);
        cnt++;
    }
    return cnt ? sum / cnt : 0;
}

/* Best fit as the FGD paper's baseline: what is left of cpu and GPU, each
 * scaled by the largest node's size and weighted equally (lower is better). */
static int64_t best_fit_left(const corral_engine_t *e, const epod_t *p, const enode_t *n)
{
    int64_t cpu = n->alloc.v[RES_CPU] - n->used.v[RES_CPU] - p->req.v[RES_CPU];
    int64_t gpu = n->alloc.v[RES_GPU] - n->used.v[RES_GPU] - p->req.v[RES_GPU];
    return frac(cpu, e->nd.max_node_cpu) / 2 + frac(gpu, e->nd.max_node_gpu) / 2;
}

/*
 * Tetris's alignment as the FGD paper's baseline scores it: the node is seen
 * as "virtual nodes", one per GPU holding shares (its milli left) and one for
 * its untouched GPUs together, each with the node's free cpu; the score of
 * one is 1 - (request . free) / 2 with cpu and GPU scaled by the largest
 * node's, and the node scores its best virtual node (fit or not, as the
 * artifact does), in 100 integer steps. Higher wins; ties go to the first
 * node by name.
 */
static int64_t dot_product(const corral_engine_t *e, const epod_t *p, const enode_t *n)
{
    double cpu =
        (double)p->req.v[RES_CPU] / (double)(e->nd.max_node_cpu > 0 ? e->nd.max_node_cpu : 1);
    double free_cpu = (double)(n->alloc.v[RES_CPU] - n->used.v[RES_CPU]) /
                      (double)(e->nd.max_node_cpu > 0 ? e->nd.max_node_cpu : 1);
    double gmax = (double)(e->nd.max_node_gpu > 0 ? e->nd.max_node_gpu : 1000);
    double gpu = (double)(p->share ? p->share : p->gpus * 1000) / gmax;
    double best = -1;
    int untouched = 0;
    for (int g = 0; g < n->ngpu; g++) {
        int used = n->gpu_used[g];
        if (used == 0) {
            untouched++;
        } else if (used < 1000) {
            double s = 1.0 - (cpu * free_cpu + gpu * (1000 - used) / gmax) / 2;
            best = s > best ? s : best;
        }
    }
    double s = 1.0 - (cpu * free_cpu + gpu * untouched * 1000 / gmax) / 2;
    best = s > best ? s : best;
    return (int64_t)(100.0 * best);
}

/* FGD as published: 100 * sigmoid(fragment decrease in GPUs), truncated to an
 * integer (kube-scheduler scores are integers); equal scores go to the first
 * node in name order, which reproduces the paper's numbers (random ties do
 * not: they scatter small pods and starve 8-GPU ones). A share goes to the
 * GPU that scores best (first on ties). */
static int64_t fgd_quantize(double before, double after)
{
    double x = (before - after) / 1000.0;
    return (int64_t)(100.0 / (1.0 + exp(-x)));
}

static int64_t score_fgd(corral_engine_t *e, const epod_t *p, enode_t *n, uint64_t *mask)
{
    double before = corral__node_frag(e, n);
    if (!p->share)
        return fgd_quantize(before, corral__frag_after(e, n, p, *mask));
    int64_t best = -1;
    for (int g = 0; g < n->ngpu; g++) {
        if ((n->whole_mask >> g & 1) || n->gpu_used[g] + p->share > 1000 ||
            (n->nominated_mask >> g & 1))
            continue;
        int64_t s = fgd_quantize(before, corral__frag_after(e, n, p, 1ULL << g));
        if (s > best) {
            best = s;
            *mask = 1ULL << g;
        }
    }
    return best;
}

/* --- the policies, as a table (the design's plug-in table) ---------------------------- */

static void score_binpack(corral_engine_t *e, const epod_t *p, enode_t *n, uint64_t *mask,
                          int64_t k[5])
{
    (void)e, (void)mask;
    k[0] = mean_util(p, n, false);
}

static void score_spread(corral_engine_t *e, const epod_t *p, enode_t *n, uint64_t *mask,
                         int64_t k[5])
{
    (void)e, (void)mask;
    k[0] = mean_util(p, n, true);
}

static void score_random(corral_engine_t *e, const epod_t *p, enode_t *n, uint64_t *mask,
                         int64_t k[5])
{
    (void)p, (void)n, (void)mask;
    k[0] = (int64_t)(corral__rand(e) >> 1);
}

static void score_bestfit(corral_engine_t *e, const epod_t *p, enode_t *n, uint64_t *mask,
                          int64_t k[5])
{
    (void)mask;
    k[0] = -best_fit_left(e, p, n);
}

static void score_dotprod(corral_engine_t *e, const epod_t *p, enode_t *n, uint64_t *mask,
                          int64_t k[5])
{
    (void)mask;
    k[0] = dot_product(e, p, n);
}

static void score_fgd_k(corral_engine_t *e, const epod_t *p, enode_t *n, uint64_t *mask,
                        int64_t k[5])
{
    k[0] = score_fgd(e, p, n, mask);
}

/* In corral_policy_t order. */
static const policy_ops_t policies[CORRAL_POLICY_COUNT] = {
    [CORRAL_POLICY_CORRAL] = {"corral", score_corral, true},
    [CORRAL_POLICY_BINPACK] = {"binpack", score_binpack, false},
    [CORRAL_POLICY_SPREAD] = {"spread", score_spread, false},
    [CORRAL_POLICY_RANDOM] = {"random", score_random, false},
    [CORRAL_POLICY_BESTFIT] = {"bestfit", score_bestfit, false},
    [CORRAL_POLICY_DOTPROD] = {"dotprod", score_dotprod, false},
    [CORRAL_POLICY_FGD] = {"fgd", score_fgd_k, true},
};

const policy_ops_t *corral__policy_ops(int policy)
{
    return policy >= 0 && policy < CORRAL_POLICY_COUNT ? &policies[policy] : NULL;
}

const policy_ops_t *corral__policy(const corral_engine_t *e)
{
    const policy_ops_t *ops = corral__policy_ops((int)e->cfg.policy);
    return ops ? ops : &policies[CORRAL_POLICY_CORRAL];
}

void corral__score(corral_engine_t *e, const epod_t *p, enode_t *n, uint64_t *mask, int64_t k[5])
{
    memset(k, 0, 5 * sizeof(*k));
    corral__policy(e)->score(e, p, n, mask, k);
}

int corral__score_cmp(const int64_t *a, const int64_t *b)
{
    for (int i = 0; i < 5; i++) {
        if (a[i] != b[i])
            return a[i] > b[i] ? 1 : -1;
    }
    return 0;
}
