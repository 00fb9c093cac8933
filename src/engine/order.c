/*
 * The order of service: which jobs may run (enqueue), and in what order they
 * are tried. Each queue keeps its waiting jobs in a list sorted by priority,
 * then age, from one cycle to the next: jobs arrive mostly in age order and
 * are appended, so a cycle filters the list and merges in what is new instead
 * of sorting every waiting job again (group slots are reused, so the order of
 * group ids says nothing). The allocate action then repeatedly takes the next
 * job of the queue that comes first (priority, then lowest share, level by
 * level; see queues.c).
 */
#include <stdlib.h>
#include <string.h>

#include "engine/engine_int.h"

/* --- enqueue ------------------------------------------------------------------------- */

/* The gang's minimum request: minResources, else its first minMember pods. */
static void gang_minimum(corral_engine_t *e, const egroup_t *g, rvec_t *out)
{
    if (g->has_min_res) {
        *out = g->min_res;
        return;
    }
    memset(out, 0, sizeof(*out));
    int count = 0, want = g->min_member > 1 ? g->min_member : 1;
    for (size_t i = 0; i < g->npods && count < want; i++) {
        const epod_t *p = &e->pods.items[g->pods[i]];
        if (p->state == POD_PENDING) {
            rv_add(out, &p->req, e->nres);
            count++;
        }
    }
}

static const char *enqueue_block_text(corral_engine_t *e, const egroup_t *g)
{
    if (!g->declared)
        return corral_arena_printf(&e->cyc, "pod group %s/%s does not exist", g->ns, g->name);
    if (g->queue == NONE)
        return corral_arena_printf(&e->cyc, "queue %s does not exist", g->queue_name);
    if (!e->queues.items[g->queue].leaf)
        return corral_arena_printf(&e->cyc,
                                   "queue %s is not a leaf queue; submit jobs to one of its "
                                   "children",
                                   g->queue_name);
    if (!e->cfg.enqueue || !e->queues.items[g->queue].capped)
        return NULL;
    rvec_t min;
    gang_minimum(e, g, &min);
    const char *cap = corral__capability_block(e, g->queue, &min);
    if (cap)
        return corral_arena_printf(&e->cyc, "queue %s is over its capability", cap);
    return NULL;
}

void corral__group_reason(corral_engine_t *e, const egroup_t *g, const char *why)
{
    for (size_t i = 0; i < g->npods; i++) {
        if (e->pods.items[g->pods[i]].state == POD_PENDING)
            corral__set_reason(e, g->pods[i], why);
    }
}

bool corral__has_pending(const corral_engine_t *e, const egroup_t *g)
{
    for (size_t i = 0; i < g->npods; i++) {
        if (e->pods.items[g->pods[i]].state == POD_PENDING)
            return true;
    }
    return false;
}

/* May group g be tried this cycle? If not, its pods say why. */
static bool runnable(corral_engine_t *e, egroup_t *g)
{
    const char *why = enqueue_block_text(e, g);
    g->block = why ? corral__intern(e, why) : NULL;
    if (g->block || !e->cfg.allocate) {
        corral__group_reason(e, g, g->block ? g->block : "not considered in this cycle");
        return false;
    }
    return true;
}

/* --- the job lists --------------------------------------------------------------------- */

static int cmp_job(const void *a, const void *b, void *ctx)
{
    const corral_engine_t *e = ctx;
    const egroup_t *x = &e->groups.items[*(const uint32_t *)a];
    const egroup_t *y = &e->groups.items[*(const uint32_t *)b];
    if (x->priority != y->priority)
        return x->priority > y->priority ? -1 : 1;
    if (x->age != y->age)
        return x->age < y->age ? -1 : 1;
    return strcmp(x->key, y->key);
}

static void sort_jobs(corral_engine_t *e, uint32_t *ids, size_t n)
{
    bool sorted = true;
    for (size_t k = 1; k < n && sorted; k++)
        sorted = cmp_job(&ids[k - 1], &ids[k], e) < 0;
    if (!sorted)
        qsort_r(ids, n, sizeof(*ids), cmp_job, e);
}

/* Keep the jobs of queue q's list that still wait there. */
static void filter_list(corral_engine_t *e, equeue_t *q, uint32_t qid)
{
    size_t k = 0;
    for (size_t i = 0; i < q->njobs; i++) {
        egroup_t *g = &e->groups.items[q->jobs[i]];
        if (g->listed_q != qid)
            continue; /* moved, or its slot reused */
        if (!g->alive || g->queue != qid || !corral__has_pending(e, g)) {
            g->listed_q = NONE;
            continue;
        }
        q->jobs[k++] = q->jobs[i];
    }
    q->njobs = k;
}

/* Merge sorted ids[0..n) (all of queue qid) into its sorted list. */
static void merge_into(corral_engine_t *e, equeue_t *q, uint32_t qid, const uint32_t *ids, size_t n)
{
    if (n == 0)
        return;
    uint32_t *out = corral_malloc((q->njobs + n) * sizeof(*out));
    size_t i = 0, j = 0, k = 0;
    while (i < q->njobs || j < n) {
        bool take_old = j == n || (i < q->njobs && cmp_job(&q->jobs[i], &ids[j], e) < 0);
        out[k++] = take_old ? q->jobs[i++] : ids[j++];
    }
    for (j = 0; j < n; j++)
        e->groups.items[ids[j]].listed_q = qid;
    corral_free(q->jobs);
    q->jobs = out;
    q->njobs = q->capjobs = k;
}

static int cmp_by_queue(const void *a, const void *b, void *ctx)
{
    const corral_engine_t *e = ctx;
    uint32_t qa = e->groups.items[*(const uint32_t *)a].queue;
    uint32_t qb = e->groups.items[*(const uint32_t *)b].queue;
    if (qa != qb)
        return qa < qb ? -1 : 1;
    return cmp_job(a, b, ctx);
}

/* Bring every queue's list up to date: drop what no longer waits, merge in
 * waiting jobs not yet listed (new, or moved to another queue). */
static void update_lists(corral_engine_t *e, bool resort)
{
    for (size_t qi = 0; qi < e->queues.n; qi++)
        filter_list(e, &e->queues.items[qi], (uint32_t)qi);
    uint32_t *add = corral_malloc((e->groups.n + 1) * sizeof(*add));
    size_t nadd = 0;
    for (size_t i = 0; i < e->groups.n; i++) {
        egroup_t *g = &e->groups.items[i];
        if (g->alive && g->queue != NONE && g->listed_q != g->queue && corral__has_pending(e, g))
            add[nadd++] = (uint32_t)i;
    }
    qsort_r(add, nadd, sizeof(*add), cmp_by_queue, e);
    for (size_t i = 0; i < nadd;) {
        uint32_t qid = e->groups.items[add[i]].queue;
        size_t j = i;
        while (j < nadd && e->groups.items[add[j]].queue == qid)
            j++;
        merge_into(e, &e->queues.items[qid], qid, &add[i], j - i);
        i = j;
    }
    corral_free(add);
    for (size_t qi = 0; resort && qi < e->queues.n; qi++)
        sort_jobs(e, e->queues.items[qi].jobs, e->queues.items[qi].njobs);
}

/* --- what a cycle tries ------------------------------------------------------------------ */

static qjobs_t *from_lists(corral_engine_t *e)
{
    qjobs_t *qj = corral_calloc(e->queues.n + 1, sizeof(*qj));
    for (size_t qi = 0; qi < e->queues.n; qi++) {
        const equeue_t *q = &e->queues.items[qi];
        qj[qi].jobs = corral_malloc((q->njobs + 1) * sizeof(uint32_t));
        for (size_t i = 0; i < q->njobs; i++) {
            if (runnable(e, &e->groups.items[q->jobs[i]]))
                qj[qi].jobs[qj[qi].n++] = q->jobs[i];
        }
    }
    return qj;
}

qjobs_t *corral__jobs_all(corral_engine_t *e, bool resort)
{
    update_lists(e, resort);
    /* Jobs whose queue does not exist wait outside every list. */
    for (size_t i = 0; i < e->groups.n; i++) {
        egroup_t *g = &e->groups.items[i];
        if (g->alive && g->queue == NONE && corral__has_pending(e, g))
            runnable(e, g);
    }
    return from_lists(e);
}

qjobs_t *corral__jobs_of(corral_engine_t *e, const uint32_t *ids, size_t n)
{
    qjobs_t *qj = corral_calloc(e->queues.n + 1, sizeof(*qj));
    uint32_t *ok = corral_malloc((n + 1) * sizeof(*ok));
    size_t nok = 0;
    for (size_t k = 0; k < n; k++) {
        egroup_t *g = &e->groups.items[ids[k]];
        if (g->alive && corral__has_pending(e, g) && runnable(e, g))
            ok[nok++] = ids[k];
    }
    qsort_r(ok, nok, sizeof(*ok), cmp_by_queue, e);
    for (size_t i = 0; i < nok; i++)
        qj[e->groups.items[ok[i]].queue].n++;
    size_t at = 0;
    for (size_t qi = 0; qi < e->queues.n; qi++) {
        qj[qi].jobs = corral_malloc((qj[qi].n + 1) * sizeof(uint32_t));
        memcpy(qj[qi].jobs, &ok[at], qj[qi].n * sizeof(uint32_t));
        at += qj[qi].n;
    }
    corral_free(ok);
    return qj;
}

void corral__jobs_free(corral_engine_t *e, qjobs_t *qj)
{
    for (size_t i = 0; i < e->queues.n; i++)
        corral_free(qj[i].jobs);
    corral_free(qj);
}

uint32_t corral__next_queue(corral_engine_t *e, const qjobs_t *qj)
{
    uint32_t best = NONE;
    for (size_t i = 0; i < e->queues.n; i++) {
        if (qj[i].next >= qj[i].n)
            continue;
        if (best == NONE || corral__queue_cmp(e, (uint32_t)i, best) < 0)
            best = (uint32_t)i;
    }
    return best;
}
