/*
 * Backfill reservations (Slurm-style, per GPU): when the first job in the
 * order of service cannot start, find the earliest time T at which it would
 * fit under every rule if each running pod ended at max(now, start +
 * estimate), and the GPUs, cpu and memory it would then use. Later jobs may
 * start now only if they leave those alone or end before T; cpu and memory
 * are judged at T, with the pods still running then (ruling 6). Pods
 * without an estimate are assumed never to end; terminating pods end now.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/engine_int.h"

void corral__resv_clear(corral_engine_t *e)
{
    reservation_t *r = &e->resv;
    corral_free(r->nodes);
    corral_free(r->masks);
    corral_free(r->res);
    memset(r, 0, sizeof(*r));
}

typedef struct ev {
    uint32_t pod;
    int64_t end;
} ev_t;

static int cmp_ev(const void *a, const void *b)
{
    const ev_t *x = a, *y = b;
    if (x->end != y->end)
        return x->end < y->end ? -1 : 1;
    return x->pod < y->pod ? -1 : x->pod > y->pod;
}

/* Running pods with a known end, soonest first. */
static ev_t *end_events(corral_engine_t *e, size_t *n)
{
    ev_t *ev = corral_malloc((e->pods.n + 1) * sizeof(*ev));
    size_t k = 0;
    for (size_t i = 0; i < e->pods.n; i++) {
        const epod_t *p = &e->pods.items[i];
        if (!p->alive || !POD_PLACED(p))
            continue;
        int64_t end;
        if (p->state == POD_TERMINATING)
            end = e->now;
        else if (p->est_ns >= 0)
            end = p->start_ns + p->est_ns > e->now ? p->start_ns + p->est_ns : e->now;
        else
            continue;
        ev[k++] = (ev_t){(uint32_t)i, end};
    }
    qsort(ev, k, sizeof(*ev), cmp_ev);
    *n = k;
    return ev;
}

/* Record where the job's tentative binds (since mark) landed. */
static void capture(corral_engine_t *e, size_t mark)
{
    reservation_t *r = &e->resv;
    size_t cnt = e->txn.n - mark;
    r->nodes = corral_malloc((cnt + 1) * sizeof(*r->nodes));
    r->masks = corral_calloc(cnt + 1, sizeof(*r->masks));
    r->res = corral_calloc(cnt + 1, sizeof(*r->res));
    r->n = 0;
    for (size_t i = mark; i < e->txn.n; i++) {
        const epod_t *p = &e->pods.items[e->txn.items[i]];
        size_t j = 0;
        while (j < r->n && r->nodes[j] != p->node)
            j++;
        if (j == r->n) {
            r->nodes[j] = p->node;
            r->n++;
        }
        r->masks[j] |= p->gpu_mask;
    }
    /* What each node's cpu and memory hold at T: the pods still running
     * then, and the job (ruling 6). Turned into a hold on today's state
     * once the pods ended for the trial are back (hold_at_t). */
    for (size_t j = 0; j < r->n; j++) {
        const enode_t *n = &e->nodes.items[r->nodes[j]];
        r->res[j].v[RES_CPU] = n->used.v[RES_CPU] + n->nominated.v[RES_CPU];
        r->res[j].v[RES_MEM] = n->used.v[RES_MEM] + n->nominated.v[RES_MEM];
    }
}

/* A later job K that runs past T may start on a reserved node when it fits
 * now and, with what runs at T, next to the job: used_now + K + hold <=
 * allocatable with hold = max(0, at_T - used_now). */
static void hold_at_t(corral_engine_t *e)
{
    reservation_t *r = &e->resv;
    for (size_t j = 0; j < r->n; j++) {
        const enode_t *n = &e->nodes.items[r->nodes[j]];
        for (int d = RES_CPU; d <= RES_MEM; d++) {
            int64_t now = n->used.v[d] + n->nominated.v[d];
            r->res[j].v[d] = r->res[j].v[d] > now ? r->res[j].v[d] - now : 0;
        }
    }
}

void corral__reserve(corral_engine_t *e, uint32_t gid)
{
    corral__resv_clear(e);
    e->resv_for = gid;
    size_t nev;
    ev_t *ev = end_events(e, &nev);
    uint32_t *saved_node = corral_malloc((nev + 1) * sizeof(uint32_t));
    uint64_t *saved_mask = corral_malloc((nev + 1) * sizeof(uint64_t));
    int64_t *saved_start = corral_malloc((nev + 1) * sizeof(int64_t));
    uint8_t *saved_state = corral_malloc(nev + 1);
    size_t removed = 0;
    bool saved_dry = e->dry;
    e->dry = true;
    while (removed < nev) {
        int64_t t = ev[removed].end;
        for (; removed < nev && ev[removed].end == t; removed++) {
            epod_t *p = &e->pods.items[ev[removed].pod];
            saved_node[removed] = p->node;
            saved_mask[removed] = p->gpu_mask;
            saved_start[removed] = p->start_ns;
            saved_state[removed] = p->state;
            corral__unbind(e, ev[removed].pod);
        }
        size_t mark = corral__txn_mark(e);
        const char *why;
        if (corral__place_job(e, gid, false, false, &why) == PLACE_OK && e->txn.n > mark) {
            capture(e, mark);
            e->resv.active = true;
            e->resv.group = gid;
            e->resv.t_ns = t;
        }
        corral__txn_rollback(e, mark);
        if (e->resv.active)
            break;
    }
    while (removed-- > 0) {
        corral__restore(e, ev[removed].pod, saved_node[removed], saved_mask[removed],
                        saved_start[removed], saved_state[removed]);
    }
    e->dry = saved_dry;
    if (e->resv.active)
        hold_at_t(e);
    corral_free(saved_node);
    corral_free(saved_mask);
    corral_free(saved_start);
    corral_free(saved_state);
    corral_free(ev);
}
