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
    if (s == e->rp.rsn_last)
        return s;
    uint32_t id;
    char *copy;
    if (corral_hmap_get(&e->rp.rsn_by_text, s, &id)) {
        copy = e->rp.rsn_texts.items[id];
    } else {
        copy = corral_arena_strdup(&e->rp.rsn_arena, s);
        id = (uint32_t)e->rp.rsn_texts.n;
        VEC_PUSH(e->rp.rsn_texts, copy);
        corral_hmap_put(&e->rp.rsn_by_text, copy, id);
    }
    e->rp.rsn_last = copy;
    return copy;
}

void corral__touch(corral_engine_t *e, uint32_t gid)
{
    egroup_t *g = &e->pd.groups.items[gid];
    if (g->touched)
        return;
    g->touched = true;
    VEC_PUSH(e->rp.touched, gid);
}

void corral__set_reason(corral_engine_t *e, uint32_t pid, const char *why)
{
    epod_t *p = &e->pd.pods.items[pid];
    if (e->dry || p->reason == why)
        return;
    why = corral__intern(e, why);
    if (p->reason == why)
        return;
    p->reason = why;
    corral__touch(e, p->group);
    if (!p->reason_changed) {
        p->reason_changed = true;
        VEC_PUSH(e->rp.changed, pid);
    }
}

/* Before a full cycle: forget the interned texts if there are too many. */
void corral__reasons_trim(corral_engine_t *e)
{
    if (e->rp.rsn_texts.n < MAX_INTERNED)
        return;
    for (size_t i = 0; i < e->pd.pods.n; i++)
        e->pd.pods.items[i].reason = NULL;
    for (size_t i = 0; i < e->pd.groups.n; i++) {
        e->pd.groups.items[i].block = NULL;
        e->pd.groups.items[i].st_msg = NULL;
        e->pd.groups.items[i].st_phase = NULL;
    }
    corral_hmap_fini(&e->rp.rsn_by_text);
    corral_hmap_init(&e->rp.rsn_by_text);
    e->rp.rsn_texts.n = 0;
    corral_arena_reset(&e->rp.rsn_arena);
    e->rp.rsn_last = NULL;
    e->pm.reason_version = 0; /* the reason cache held interned texts */
    e->version = ++e->vseq;
}

static int cmp_pod_age(const void *a, const void *b, void *ctx)
{
    const corral_engine_t *e = ctx;
    uint64_t x = e->pd.pods.items[*(const uint32_t *)a].age;
    uint64_t y = e->pd.pods.items[*(const uint32_t *)b].age;
    return x < y ? -1 : x > y;
}

static void report_pending(corral_engine_t *e)
{
    uint32_t *ids = e->rp.changed.items;
    size_t k = 0;
    for (size_t i = 0; i < e->rp.changed.n; i++) {
        epod_t *p = &e->pd.pods.items[ids[i]];
        p->reason_changed = false;
        if (p->alive && !POD_PLACED(p) && p->reason)
            ids[k++] = ids[i];
    }
    if (k > 1)
        qsort_r(ids, k, sizeof(*ids), cmp_pod_age, e);
    for (size_t i = 0; i < k; i++) {
        const epod_t *p = &e->pd.pods.items[ids[i]];
        corral_pending_t pd = {p->ns, p->name, p->reason};
        VEC_PUSH(e->cy.pendings, pd);
    }
    e->rp.changed.n = 0;
}

static void group_status(corral_engine_t *e, egroup_t *g)
{
    size_t running = 0, pending = 0;
    const char *msg = NULL;
    for (size_t j = 0; j < g->npods; j++) {
        const epod_t *p = &e->pd.pods.items[g->pods[j]];
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
    VEC_PUSH(e->cy.gstats, s);
}

static int cmp_group_age(const void *a, const void *b, void *ctx)
{
    const corral_engine_t *e = ctx;
    uint64_t x = e->pd.groups.items[*(const uint32_t *)a].age;
    uint64_t y = e->pd.groups.items[*(const uint32_t *)b].age;
    return x < y ? -1 : x > y;
}

static void report_groups(corral_engine_t *e)
{
    if (e->rp.touched.n > 1)
        qsort_r(e->rp.touched.items, e->rp.touched.n, sizeof(uint32_t), cmp_group_age, e);
    for (size_t i = 0; i < e->rp.touched.n; i++) {
        egroup_t *g = &e->pd.groups.items[e->rp.touched.items[i]];
        g->touched = false;
        if (g->alive && !g->implicit)
            group_status(e, g);
    }
    e->rp.touched.n = 0;
}

void corral__report(corral_engine_t *e)
{
    report_pending(e);
    report_groups(e);
    e->cy.dec.binds = e->cy.binds.items;
    e->cy.dec.nbinds = e->cy.binds.n;
    e->cy.dec.evictions = e->cy.evicts.items;
    e->cy.dec.nevictions = e->cy.evicts.n;
    e->cy.dec.pending = e->cy.pendings.items;
    e->cy.dec.npending = e->cy.pendings.n;
    e->cy.dec.groups = e->cy.gstats.items;
    e->cy.dec.ngroups = e->cy.gstats.n;
    e->cy.dec.stats.pending = (uint32_t)e->pd.npending;
}
