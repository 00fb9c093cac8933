/*
 * Time-decayed fair share (docs/scheduling.md, "Fair share"): with a
 * half-life H configured, every queue keeps its past allocation, per
 * resource, weighted 2^(-age / H), and the order of service counts it.
 *
 *  - Usage. Time comes only from the cycles' now: the allocation a queue
 *    holds when a cycle ends (its subtree's, as corral__contrib keeps it) is
 *    taken to last until the next cycle begins, and is then added to the
 *    queue's decayed usage U (resource x ns) exactly: over dt, U becomes
 *    U f + a H / ln 2 (1 - f) with f = 2^(-dt / H). The window W (the decayed
 *    length of the time counted) follows the same rule with a = 1, so U / W
 *    is the queue's average allocation over the decayed past, whatever the
 *    cycles' spacing. It is rounded to the resource's unit (a milli-GPU, a
 *    millicore, a byte), and below a millionth of the cluster's amount it
 *    counts as none: about 20 half-lives after a queue last held anything,
 *    its past no longer matters at all.
 *  - Share. For ordering, a queue's allocation is the blend
 *    a' = (1 - w) allocated + w average, w the usage weight, and its fair
 *    share is max over resources of a' / deserved (the same rule and the same
 *    entitlement as the plain share). average / deserved is the queue's
 *    usage share of the cluster over its entitled fraction: Slurm's U / S.
 *  - Order. Queues below their deserved share now come before the others
 *    (as with the plain share), and within each side the lower fair share
 *    goes first. The first rule keeps allocation from handing a queue more
 *    than its deserved share while a queue below it waits (reclaim would
 *    take it back at once); history decides who goes first within each side
 *    and who borrows idle resources. Reclaim's limits ("within" and "above
 *    its deserved share") stay on the present allocation: see
 *    docs/decisions.md.
 *
 * Parents roll up their children: a queue's allocation is its subtree's, so
 * is its usage. The state is per queue, inside the queue's slot, and cleared
 * when the queue goes; nothing is allocated.
 */
#include <math.h>
#include <string.h>

#include "engine/engine_int.h"

static void fs_reset(corral_engine_t *e)
{
    for (size_t i = 0; i < e->queues.n; i++) {
        equeue_t *q = &e->queues.items[i];
        memset(q->fs_use, 0, sizeof(q->fs_use));
        memset(&q->fs_held, 0, sizeof(q->fs_held));
    }
    e->fs_window = 0;
}

void corral__fs_advance(corral_engine_t *e, int64_t now)
{
    int64_t h = e->cfg.fair_half_life_ns;
    if (h <= 0) {
        if (e->fs_on)
            fs_reset(e);
        e->fs_on = false;
        return;
    }
    if (!e->fs_on) {
        fs_reset(e); /* counting starts now */
        e->fs_on = true;
        e->fs_last = now;
        return;
    }
    if (now <= e->fs_last)
        return; /* no time has passed (or the caller's clock went back) */
    double x = (double)(now - e->fs_last) * M_LN2 / (double)h;
    double f = exp(-x);                        /* decay over dt */
    double g = -expm1(-x) * (double)h / M_LN2; /* integral of the decay over dt, ns */
    e->fs_window = e->fs_window * f + g;
    for (size_t i = 0; i < e->queues.n; i++) {
        equeue_t *q = &e->queues.items[i];
        if (!q->alive) {
            memset(q->fs_use, 0, sizeof(q->fs_use)); /* its history goes with it */
            memset(&q->fs_held, 0, sizeof(q->fs_held));
            continue;
        }
        for (int d = 0; d < e->nres; d++)
            q->fs_use[d] = q->fs_use[d] * f + (double)q->fs_held.v[d] * g;
    }
    e->fs_last = now;
}

void corral__fs_hold(corral_engine_t *e)
{
    if (!e->fs_on)
        return;
    for (size_t i = 0; i < e->queues.n; i++) {
        equeue_t *q = &e->queues.items[i];
        if (q->alive)
            q->fs_held = q->alloc;
        else
            memset(&q->fs_held, 0, sizeof(q->fs_held));
    }
}

int64_t corral__fs_average(const corral_engine_t *e, uint32_t q, int d)
{
    if (!e->fs_on || e->fs_window <= 0 || q >= e->queues.n || d < 0 || d >= RES_MAX)
        return 0;
    double avg = e->queues.items[q].fs_use[d] / e->fs_window;
    /* A past below a millionth of the cluster is none (about 20 half-lives
     * after the queue last held anything, it no longer matters at all). */
    if (avg * 1e6 < (double)e->total_alloc.v[d])
        return 0;
    return llround(avg);
}

double corral__fs_key(const corral_engine_t *e, uint32_t q)
{
    const equeue_t *x = &e->queues.items[q];
    double w = e->cfg.fair_usage_weight;
    double share = 0;
    for (int d = 0; d < e->nres; d++) {
        if (d == RES_PODS || d == RES_EPH)
            continue;
        double a = (1 - w) * (double)x->alloc.v[d] + w * (double)corral__fs_average(e, q, d);
        double s;
        if (x->des_eff.v[d] > 0)
            s = a / (double)x->des_eff.v[d];
        else
            s = a > 0 ? 1.0 : 0.0;
        if (s > share)
            share = s;
    }
    /* Below its deserved share now: [0, 1); at or above: [1, 2). Within
     * each, the fair share, mapped monotonically into [0, 1). */
    double side = corral__queue_share(e, q) >= 1.0 ? 1.0 : 0.0;
    return side + share / (1.0 + share);
}
