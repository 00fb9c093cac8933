/*
 * Pending reasons and what a cycle reports.
 *
 * A pod's pending reason lives until the pod is tried again, which may be
 * many cycles later (a cycle after nothing but new arrivals tries only the
 * new jobs), so reasons are interned for the engine's lifetime: equal texts
 * are one pointer, and "did the reason change" is a pointer comparison. A
 * cycle reports the pods whose reason is new or changed, and the pod groups
 * whose phase or message changed, rather than every pending pod each time:
 * with tens of thousands waiting, the unchanged ones are the bulk of it.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/engine_int.h"

/* Interned texts past this many are dropped (all at once, at the start of a
 * full cycle, which recomputes every reason): counts in reasons make texts
 * vary, and a long-running scheduler must not grow without bound. */
#define MAX_INTERNED 65536

const char *corral__intern(corral_engine_t *e, const char *s)
{
    /* The same interned text is often set on many pods in a row. (Only the
     * interned pointer is compared: a caller's buffer may be reused for
     * another text at the same address.) */
    if (s == e->rsn_last)
        return s;
    uint32_t id;
    char *copy;
    if (corral_hmap_get(&e->rsn_by_text, s, &id)) {
        copy = e->rsn_texts.items[id];
    } else {
        copy = corral_arena_strdup(&e->rsn_arena, s);
        id = (uint32_t)e->rsn_texts.n;
        VEC_PUSH(e->rsn_texts, copy);
        corral_hmap_put(&e->rsn_by_text, copy, id);
    }
    e->rsn_last = copy;
    return copy;
}

void corral__touch(corral_engine_t *e, uint32_t gid)
{
    egroup_t *g = &e->groups.items[gid];
    if (g->touched)
        return;
    g->touched = true;
    VEC_PUSH(e->touched, gid);
}

void corral__set_reason(corral_engine_t *e, uint32_t pid, const char *why)
{
    epod_t *p = &e->pods.items[pid];
    if (e->dry || p->reason == why)
        return;
    why = corral__intern(e, why);
    if (p->reason == why)
        return;
    p->reason = why;
    corral__touch(e, p->group);
    if (!p->reason_changed) {
        p->reason_changed = true;
        VEC_PUSH(e->changed, pid);
    }
}

/* Before a full cycle: forget the interned texts if there are too many. */
void corral__reasons_trim(corral_engine_t *e)
{
    if (e->rsn_texts.n < MAX_INTERNED)
        return;
    for (size_t i = 0; i < e->pods.n; i++)
        e->pods.items[i].reason = NULL;
    for (size_t i = 0; i < e->groups.n; i++) {
        e->groups.items[i].block = NULL;
        e->groups.items[i].st_msg = NULL;
        e->groups.items[i].st_phase = NULL;
    }
    corral_hmap_fini(&e->rsn_by_text);
    corral_hmap_init(&e->rsn_by_text);
    e->rsn_texts.n = 0;
    corral_arena_reset(&e->rsn_arena);
    e->rsn_last = NULL;
    e->reason_version = 0; /* the reason cache held interned texts */
    e->version = ++e->vseq;
}

static int cmp_pod_age(const void *a, const void *b, void *ctx)
{
    const corral_engine_t *e = ctx;
    uint64_t x = e->pods.items[*(const uint32_t *)a].age;
    uint64_t y = e->pods.items[*(const uint32_t *)b].age;
    return x < y ? -1 : x > y;
}

static void report_pending(corral_engine_t *e)
{
    uint32_t *ids = e->changed.items;
    size_t k = 0;
    for (size_t i = 0; i < e->changed.n; i++) {
        epod_t *p = &e->pods.items[ids[i]];
        p->reason_changed = false;
        if (p->alive && !POD_PLACED(p) && p->reason)
            ids[k++] = ids[i];
    }
    if (k > 1)
        qsort_r(ids, k, sizeof(*ids), cmp_pod_age, e);
    for (size_t i = 0; i < k; i++) {
        const epod_t *p = &e->pods.items[ids[i]];
        corral_pending_t pd = {p->ns, p->name, p->reason};
        VEC_PUSH(e->pendings, pd);
    }
    e->changed.n = 0;
}

static void group_status(corral_engine_t *e, egroup_t *g)
{
    size_t running = 0, pending = 0;
    const char *msg = NULL;
    for (size_t j = 0; j < g->npods; j++) {
        const epod_t *p = &e->pods.items[g->pods[j]];
        if (p->state == POD_BOUND)
            running++;
        else if (p->state == POD_PENDING) {
            pending++;
            msg = msg ? msg : p->reason;
        }
    }
    const char *phase = (int)running >= g->min_member && running > 0 ? "Running"
                        : g->block                                   ? "Pending"
                                                                     : "Inqueue";
    msg = pending ? msg : NULL;
    if (phase == g->st_phase && msg == g->st_msg)
        return;
    g->st_phase = phase;
    g->st_msg = msg;
    corral_group_status_t s = {g->ns, g->name, phase, msg};
    VEC_PUSH(e->gstats, s);
}

static int cmp_group_age(const void *a, const void *b, void *ctx)
{
    const corral_engine_t *e = ctx;
    uint64_t x = e->groups.items[*(const uint32_t *)a].age;
    uint64_t y = e->groups.items[*(const uint32_t *)b].age;
    return x < y ? -1 : x > y;
}

static void report_groups(corral_engine_t *e)
{
    if (e->touched.n > 1)
        qsort_r(e->touched.items, e->touched.n, sizeof(uint32_t), cmp_group_age, e);
    for (size_t i = 0; i < e->touched.n; i++) {
        egroup_t *g = &e->groups.items[e->touched.items[i]];
        g->touched = false;
        if (g->alive && !g->implicit)
            group_status(e, g);
    }
    e->touched.n = 0;
}

void corral__report(corral_engine_t *e)
{
    report_pending(e);
    report_groups(e);
    e->dec.binds = e->binds.items;
    e->dec.nbinds = e->binds.n;
    e->dec.evictions = e->evicts.items;
    e->dec.nevictions = e->evicts.n;
    e->dec.pending = e->pendings.items;
    e->dec.npending = e->pendings.n;
    e->dec.groups = e->gstats.items;
    e->dec.ngroups = e->gstats.n;
    e->dec.stats.pending = (uint32_t)e->npending;
}
