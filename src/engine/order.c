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

static const char *enqueue_block_text(corral_engine_t *e, const egroup_t *g)
{
    if (!g->declared)
        return corral_arena_printf(&e->cy.cyc, "pod group %s/%s does not exist", g->ns, g->name);
    if (g->queue == NONE)
        return corral_arena_printf(&e->cy.cyc, "queue %s does not exist", g->queue_name);
    if (!e->qs.queues.items[g->queue].leaf)
        return corral_arena_printf(&e->cy.cyc,
                                   "queue %s is not a leaf queue; submit jobs to one of its "
                                   "children",
                                   g->queue_name);
    /* Ruling 7: a closed (or closing) queue, or one below a closed
     * ancestor, starts nothing. A job held back by a capability is tried
     * like any other (ruling 2): it may hold the backfill reservation and
     * reclaim inside the capped ancestor. */
    for (uint32_t q = g->queue; q != NONE; q = e->qs.queues.items[q].parent) {
        if (e->qs.queues.items[q].closed)
            return corral_arena_printf(&e->cy.cyc, "queue %s is closed",
                                       e->qs.queues.items[q].name);
    }
    return NULL;
}

void corral__group_reason(corral_engine_t *e, const egroup_t *g, const char *why)
{
    for (size_t i = 0; i < g->npods; i++) {
        if (e->pd.pods.items[g->pods[i]].state == POD_PENDING)
            corral__set_reason(e, g->pods[i], why);
    }
}

bool corral__has_pending(const corral_engine_t *e, const egroup_t *g)
{
    (void)e;
    return g->npend > 0;
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
    const egroup_t *x = &e->pd.groups.items[*(const uint32_t *)a];
    const egroup_t *y = &e->pd.groups.items[*(const uint32_t *)b];
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

/* Is entry gid of queue qid's list a job that still waits there? */
static bool listed_here(corral_engine_t *e, uint32_t gid, uint32_t qid)
{
    egroup_t *g = &e->pd.groups.items[gid];
    if (g->listed_q != qid)
        return false; /* moved, or its slot reused */
    if (!g->alive || g->queue != qid || !corral__has_pending(e, g)) {
        g->listed_q = NONE;
        return false;
    }
    return true;
}

/* Keep the jobs of queue q's list that still wait there. */
static void filter_list(corral_engine_t *e, equeue_t *q, uint32_t qid)
{
    size_t k = 0;
    for (size_t i = q->head; i < q->njobs; i++) {
        if (listed_here(e, q->jobs[i], qid))
            q->jobs[k++] = q->jobs[i];
    }
    q->njobs = k;
    q->head = 0;
    q->stale = 0;
}

/* Add sorted ids[0..n) (all of queue qid) to its sorted list: appended when
 * they all come after it (jobs mostly arrive in order), else merged. */
static void add_to_list(corral_engine_t *e, equeue_t *q, uint32_t qid, const uint32_t *ids,
                        size_t n)
{
    if (n == 0)
        return;
    for (size_t j = 0; j < n; j++)
        e->pd.groups.items[ids[j]].listed_q = qid;
    if (q->njobs == q->head || cmp_job(&q->jobs[q->njobs - 1], &ids[0], e) < 0) {
        corral_grow((void **)&q->jobs, &q->capjobs, q->njobs + n, sizeof(*q->jobs));
        memcpy(&q->jobs[q->njobs], ids, n * sizeof(*ids));
        q->njobs += n;
        return;
    }
    filter_list(e, q, qid);
    uint32_t *out = corral_malloc((q->njobs + n) * sizeof(*out));
    size_t i = 0, j = 0, k = 0;
    while (i < q->njobs || j < n) {
        bool take_old = j == n || (i < q->njobs && cmp_job(&q->jobs[i], &ids[j], e) < 0);
        out[k++] = take_old ? q->jobs[i++] : ids[j++];
    }
    corral_free(q->jobs);
    q->jobs = out;
    q->njobs = q->capjobs = k;
}

static int cmp_by_queue(const void *a, const void *b, void *ctx)
{
    const corral_engine_t *e = ctx;
    uint32_t qa = e->pd.groups.items[*(const uint32_t *)a].queue;
    uint32_t qb = e->pd.groups.items[*(const uint32_t *)b].queue;
    if (qa != qb)
        return qa < qb ? -1 : 1;
    return cmp_job(a, b, ctx);
}

/* The groups to add to lists: all waiting but unlisted ones after a
 * recount (queues changed), else those that got new pods since. */
static uint32_t *to_list(corral_engine_t *e, bool all, size_t *n)
{
    size_t cap = all ? e->pd.groups.n : e->pd.unlisted.n;
    uint32_t *add = corral_malloc((cap + 1) * sizeof(*add));
    size_t k = 0;
    for (size_t i = 0; i < cap; i++) {
        uint32_t gid = all ? (uint32_t)i : e->pd.unlisted.items[i];
        egroup_t *g = &e->pd.groups.items[gid];
        if (g->alive && g->queue != NONE && g->listed_q != g->queue && !g->adding &&
            corral__has_pending(e, g)) {
            g->adding = true;
            add[k++] = gid;
        }
    }
    for (size_t i = 0; i < k; i++)
        e->pd.groups.items[add[i]].adding = false;
    e->pd.unlisted.n = 0;
    *n = k;
    return add;
}

/* Bring every queue's list up to date: merge in waiting jobs not yet listed
 * (new, or moved to another queue); drop what no longer waits when a list
 * has gathered much of it. */
static void update_lists(corral_engine_t *e, bool all, bool resort)
{
    size_t nadd;
    uint32_t *add = to_list(e, all, &nadd);
    qsort_r(add, nadd, sizeof(*add), cmp_by_queue, e);
    for (size_t i = 0; i < nadd;) {
        uint32_t qid = e->pd.groups.items[add[i]].queue;
        size_t j = i;
        while (j < nadd && e->pd.groups.items[add[j]].queue == qid)
            j++;
        add_to_list(e, &e->qs.queues.items[qid], qid, &add[i], j - i);
        i = j;
    }
    corral_free(add);
    /* Slots of dead groups are reused only once no list names them (a list
     * entry would otherwise stand for the slot's next group). */
    bool release = e->pd.group_dead.n > 1024 + e->pd.groups.n / 4;
    for (size_t qi = 0; qi < e->qs.queues.n; qi++) {
        equeue_t *q = &e->qs.queues.items[qi];
        if (all || resort || release || q->stale > (q->njobs - q->head) / 2 + 64)
            filter_list(e, q, (uint32_t)qi);
        if (resort)
            sort_jobs(e, q->jobs, q->njobs);
    }
    if (release || all) {
        for (size_t i = 0; i < e->pd.group_dead.n; i++)
            VEC_PUSH(e->pd.group_free, e->pd.group_dead.items[i]);
        e->pd.group_dead.n = 0;
        e->rv.blocked = NONE;
    }
}

/* --- what a cycle tries ------------------------------------------------------------------ */

qjobs_t *corral__jobs_all(corral_engine_t *e, bool all, bool resort)
{
    update_lists(e, all, resort);
    if (all) {
        /* Jobs whose queue does not exist wait outside every list. */
        for (size_t i = 0; i < e->pd.groups.n; i++) {
            egroup_t *g = &e->pd.groups.items[i];
            if (g->alive && g->queue == NONE && corral__has_pending(e, g))
                runnable(e, g);
        }
    }
    qjobs_t *qj = corral_calloc(e->qs.queues.n + 1, sizeof(*qj));
    for (size_t qi = 0; qi < e->qs.queues.n; qi++) {
        equeue_t *q = &e->qs.queues.items[qi];
        qj[qi] = (qjobs_t){
            q->jobs ? q->jobs + q->head : NULL, q->njobs - q->head, 0, (uint32_t)qi, q, 0};
    }
    return qj;
}

qjobs_t *corral__jobs_of(corral_engine_t *e, const uint32_t *ids, size_t n)
{
    qjobs_t *qj = corral_calloc(e->qs.queues.n + 1, sizeof(*qj));
    uint32_t *ok = corral_malloc((n + 1) * sizeof(*ok));
    size_t nok = 0;
    for (size_t k = 0; k < n; k++) {
        egroup_t *g = &e->pd.groups.items[ids[k]];
        if (g->alive && corral__has_pending(e, g) && runnable(e, g))
            ok[nok++] = ids[k];
    }
    qsort_r(ok, nok, sizeof(*ok), cmp_by_queue, e);
    for (size_t i = 0; i < nok; i++)
        qj[e->pd.groups.items[ok[i]].queue].n++;
    size_t at = 0;
    for (size_t qi = 0; qi < e->qs.queues.n; qi++) {
        uint32_t *own = corral_malloc((qj[qi].n + 1) * sizeof(uint32_t));
        memcpy(own, &ok[at], qj[qi].n * sizeof(uint32_t));
        qj[qi].jobs = own;
        qj[qi].queue = (uint32_t)qi;
        at += qj[qi].n;
    }
    corral_free(ok);
    return qj;
}

void corral__jobs_free(corral_engine_t *e, qjobs_t *qj)
{
    for (size_t i = 0; i < e->qs.queues.n; i++) {
        if (!qj[i].list)
            corral_free((void *)qj[i].jobs);
    }
    corral_free(qj);
}

/* Queue qi's next job to try, skipping what no longer waits there (a list
 * entry) or may not run (its pods get the reason); NONE when none is left. */
uint32_t corral__peek(corral_engine_t *e, qjobs_t *qj)
{
    if (qj->ready == qj->next + 1)
        return qj->jobs[qj->next];
    while (qj->next < qj->n) {
        uint32_t gid = qj->jobs[qj->next];
        if (qj->list && !listed_here(e, gid, qj->queue)) {
            if (qj->list->head == (size_t)(qj->jobs - qj->list->jobs) + qj->next)
                qj->list->head++; /* gone from the front for good */
            else
                qj->list->stale++;
            qj->next++;
            continue;
        }
        if (qj->list && !runnable(e, &e->pd.groups.items[gid])) {
            qj->next++;
            continue;
        }
        qj->ready = qj->next + 1;
        return gid;
    }
    return NONE;
}

uint32_t corral__next_queue(corral_engine_t *e, qjobs_t *qj)
{
    uint32_t best = NONE;
    for (size_t i = 0; i < e->qs.queues.n; i++) {
        if (corral__peek(e, &qj[i]) == NONE)
            continue;
        if (best == NONE || corral__queue_cmp(e, (uint32_t)i, best) < 0)
            best = (uint32_t)i;
    }
    return best;
}
