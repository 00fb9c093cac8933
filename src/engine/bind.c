/*
 * Binding: a pod placed on a node and GPUs, taken off for a trial and put
 * back, evicted (terminating), or nominated for the node it will go to. Each
 * change keeps the node's usage, the queue accounting (corral__contrib), the
 * running list and the state's version in step.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine_int.h"

static void nominate_drop(corral_engine_t *e, epod_t *p)
{
    if (p->nom_node == NONE)
        return;
    enode_t *n = &e->nd.nodes.items[p->nom_node];
    rv_sub(&n->nominated, &p->req, RES_MAX);
    n->nominated_mask &= ~p->nom_mask;
    p->nom_node = NONE;
    p->nom_mask = 0;
}

/* Clear p's nomination, keeping its queue's accounting in step. */
void corral__nominate_clear(corral_engine_t *e, epod_t *p)
{
    if (p->nom_node == NONE)
        return;
    corral__contrib(e, p, -1);
    nominate_drop(e, p);
    corral__contrib(e, p, 1);
}

static void nominate_set(corral_engine_t *e, epod_t *p, uint32_t nid, uint64_t mask)
{
    enode_t *n = &e->nd.nodes.items[nid];
    p->nom_node = nid;
    p->nom_mask = mask;
    rv_add(&n->nominated, &p->req, RES_MAX);
    n->nominated_mask |= mask;
}

void corral__nominate(corral_engine_t *e, uint32_t pid, uint32_t nid, uint64_t mask)
{
    epod_t *p = &e->pd.pods.items[pid];
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
    uint32_t q = e->pd.groups.items[p->group].queue;
    if (q != NONE && q < e->qs.queues.n && p->priority < e->qs.queues.items[q].min_run_prio)
        e->qs.queues.items[q].min_run_prio = p->priority;
    if (p->min_run_ns > 0 && p->start_ns + p->min_run_ns < e->cy.next_timer)
        e->cy.next_timer = p->start_ns + p->min_run_ns;
}

static void running_add(corral_engine_t *e, uint32_t gid, int sign)
{
    egroup_t *g = &e->pd.groups.items[gid];
    if (sign > 0 && g->nbound++ == 0) {
        g->run_idx = (uint32_t)e->pd.running.n;
        VEC_PUSH(e->pd.running, gid);
    } else if (sign < 0 && --g->nbound == 0) {
        uint32_t last = e->pd.running.items[--e->pd.running.n];
        e->pd.running.items[g->run_idx] = last;
        e->pd.groups.items[last].run_idx = g->run_idx;
    }
}

void corral__bind(corral_engine_t *e, uint32_t pid, uint32_t nid, uint64_t mask)
{
    epod_t *p = &e->pd.pods.items[pid];
    enode_t *n = &e->nd.nodes.items[nid];
    corral__contrib(e, p, -1);
    if (p->nom_node != NONE) {
        p->held_nom_node = p->nom_node;
        p->held_nom_mask = p->nom_mask;
        nominate_drop(e, p);
    }
    if (p->state == POD_PENDING || p->state == POD_FOREIGN)
        e->pd.npending--;
    corral__pod_state(e, p, POD_BOUND); /* from pending, or GONE on the way back to terminating */
    p->node = nid;
    p->gpu_mask = mask;
    p->start_ns = e->now;
    bind_victim_facts(e, p);
    rv_add(&n->used, &p->req, RES_MAX);
    rv_add(&e->nd.total_used, &p->req, e->nres);
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
    epod_t *p = &e->pd.pods.items[pid];
    if (!POD_PLACED(p))
        return;
    enode_t *n = &e->nd.nodes.items[p->node];
    bool leaving = p->state == POD_TERMINATING;
    corral__contrib(e, p, -1);
    rv_sub(&n->used, &p->req, RES_MAX);
    rv_sub(&e->nd.total_used, &p->req, e->nres);
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
    corral__pod_state(e, p, leaving ? POD_GONE : POD_PENDING);
    e->pd.npending += !leaving;
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
    epod_t *p = &e->pd.pods.items[pid];
    p->start_ns = start_ns;
    if (state != p->state) {
        corral__contrib(e, p, -1);
        corral__pod_state(e, p, state);
        corral__contrib(e, p, 1);
    }
}

void corral__terminate(corral_engine_t *e, uint32_t pid)
{
    epod_t *p = &e->pd.pods.items[pid];
    corral__contrib(e, p, -1);
    corral__pod_state(e, p, POD_TERMINATING);
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
