/*
 * The live scheduler's main loop: informers for Nodes, Queues, PriorityClasses,
 * HyperNodes, PodGroups, SchedulerConfigurations and Pods feed the engine one
 * object at a time, as `corral sim` does from a scenario; when something
 * changed (or a second has passed, for time-based backfill and eviction
 * protection) and this process leads, a cycle runs and its decisions go to
 * the writer pool (decide.c). Pods: those whose schedulerName is ours, and
 * every bound pod whatever its scheduler (it uses its node). A bound pod
 * whose node the engine does not have (it arrives before its node, or its
 * node was deleted) waits aside and is fed when the node comes; it is
 * dropped when the pod goes. Pods that Succeeded or Failed free their
 * resources; a pod being deleted holds them until it is gone. Node updates that change nothing the
 * engine reads (heartbeats, conditions) are skipped, so they do not force full cycles.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "corral/leader.h"
#include "corral/timefmt.h"
#include "corral/sim.h"
#include "scheduler/sched_int.h"

int64_t corral__now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void corral__slog(const sched_t *s, int level, const char *fmt, ...)
{
    if (level > s->o->verbosity)
        return;
    char ts[64];
    corral_time_format(corral__now_ms() * 1000, false, ts, sizeof(ts));
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s scheduler: ", ts);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* --- the key -> entry table --------------------------------------------------------- */

sentry_t *corral__st_get(stable_t *t, const char *key, bool create)
{
    uint32_t id;
    if (corral_hmap_get(&t->by_key, key, &id))
        return &t->items[id];
    if (!create)
        return NULL;
    if (t->nfree) {
        id = t->free[--t->nfree];
    } else {
        corral_grow((void **)&t->items, &t->cap, t->n + 1, sizeof(*t->items));
        id = (uint32_t)t->n++;
    }
    sentry_t *s = &t->items[id];
    memset(s, 0, sizeof(*s));
    s->key = corral_strdup(key);
    corral_hmap_put(&t->by_key, s->key, id);
    return s;
}

static void st_clear(sentry_t *s)
{
    corral_watch_ev_free(s->ev);
    corral_free(s->key);
    corral_free(s->cond_msg);
    corral_free(s->ev_msg);
    corral_free(s->ev_name);
    memset(s, 0, sizeof(*s));
}

void corral__st_del(stable_t *t, sentry_t *s)
{
    corral_hmap_del(&t->by_key, s->key);
    st_clear(s);
    corral_grow((void **)&t->free, &t->capfree, t->nfree + 1, sizeof(*t->free));
    t->free[t->nfree++] = (uint32_t)(s - t->items);
}

void corral__st_fini(stable_t *t)
{
    for (size_t i = 0; i < t->n; i++)
        st_clear(&t->items[i]);
    corral_free(t->items);
    corral_free(t->free);
    corral_hmap_fini(&t->by_key);
}

/* --- feeding the engine --------------------------------------------------------------- */

static bool our_name(const sched_t *s, const char *name)
{
    if (!name || !*name)
        name = "default-scheduler";
    for (size_t i = 0; i < s->o->nnames; i++) {
        if (strcmp(s->o->names[i], name) == 0)
            return true;
    }
    return false;
}

/* --- bound pods waiting for their node --------------------------------------------------- */

static void orphan_add(sched_t *s, sentry_t *p, const char *node)
{
    if (p->orphan)
        return;
    corral_grow((void **)&s->orphans, &s->caporphans, s->norphans + 1, sizeof(*s->orphans));
    s->orphans[s->norphans++] = corral_strdup(p->key);
    p->orphan = true;
    corral__slog(s, 1, "pod %s waits for its node %s", p->key, node);
}

static void orphan_drop(sched_t *s, sentry_t *p)
{
    if (!p->orphan)
        return;
    p->orphan = false;
    for (size_t i = 0; i < s->norphans; i++) {
        if (strcmp(s->orphans[i], p->key) == 0) {
            corral_free(s->orphans[i]);
            s->orphans[i] = s->orphans[--s->norphans];
            return;
        }
    }
}

static const char *node_name_of(const sentry_t *p)
{
    const corral_obj_t *o = p->ev ? p->ev->obj : NULL;
    return o && o->u.pod->spec.node_name ? o->u.pod->spec.node_name : "";
}

/* Node `node` came (or changed): give the engine the pods waiting for it. */
static void orphans_feed(sched_t *s, const char *node)
{
    for (size_t i = 0; i < s->norphans;) {
        sentry_t *p = corral__st_get(&s->pods, s->orphans[i], false);
        if (p && p->orphan && strcmp(node_name_of(p), node) == 0) {
            corral__pod_feed(s, p);
            if (!p->orphan)
                continue; /* taken: the last entry moved to i */
        }
        i++;
    }
}

/* Node `node` went, and with it its pods from the engine: they wait for it. */
static void orphans_of_node(sched_t *s, const char *node)
{
    for (size_t i = 0; i < s->pods.n; i++) {
        sentry_t *p = &s->pods.items[i];
        if (p->key && p->in_engine && strcmp(node_name_of(p), node) == 0) {
            p->in_engine = false;
            orphan_add(s, p, node);
        }
    }
}

static void pod_remove(sched_t *s, sentry_t *p)
{
    if (!p->in_engine)
        return;
    const char *slash = strchr(p->key, '/');
    char ns[256];
    snprintf(ns, sizeof(ns), "%.*s", (int)(slash - p->key), p->key);
    corral_engine_remove(s->e, CORRAL_KIND_POD, ns, slash + 1);
    p->in_engine = false;
    s->changed = true;
}

/* What the engine said about an object it took with a warning or refused
 * (a limit it has, a bad annotation): logged, never dropped. */
static void log_diag(sched_t *s, const corral_diag_t *diag)
{
    for (size_t i = 0; i < diag->n; i++)
        corral__slog(s, 0, "%s", diag->items[i].msg);
}

void corral__pod_feed(sched_t *s, sentry_t *p)
{
    corral_obj_t *o = p->ev ? p->ev->obj : NULL;
    if (!o || p->inflight)
        return; /* our own write is on its way: the engine already has its outcome */
    corral_pod_t *pod = o->u.pod;
    const char *phase = pod->status.phase;
    bool done = phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed"));
    bool bound = pod->spec.node_name && *pod->spec.node_name;
    if (done || (!bound && !our_name(s, pod->spec.scheduler_name))) {
        orphan_drop(s, p);
        pod_remove(s, p);
        return;
    }
    if (p->in_engine) {
        corral_pod_view_t v;
        int r = corral_engine_pod(s->e, o->meta.namespace, o->meta.name, &v);
        if (r == 0 && (!bound || v.bound))
            return; /* nothing the engine reads has changed */
        if (r != 0)
            p->in_engine = false; /* its node went (bound while the bind was in flight) */
    }
    corral_diag_t diag;
    corral_diag_init(&diag);
    int rc = corral_engine_upsert(s->e, o, now_ns(), &diag);
    if (rc == 0) {
        p->in_engine = true;
        orphan_drop(s, p);
        log_diag(s, &diag); /* taken, with a warning (a limit of the engine) */
    } else if (rc == CORRAL_ENOENT && bound) {
        orphan_add(s, p, pod->spec.node_name); /* its node is not known (yet) */
    } else {
        orphan_drop(s, p);
        /* Refused for a limit of the engine: a person must hear of it. */
        corral__slog(s, rc == CORRAL_ETOOBIG ? 0 : 1, "pod %s: not taken (%s)", p->key,
                     diag.n ? diag.items[0].msg : corral_strerror(rc));
    }
    corral_diag_fini(&diag);
    s->changed = true;
}

static void on_pod(sched_t *s, corral_watch_ev_t *ev)
{
    char key[512];
    snprintf(key, sizeof(key), "%s/%s", ev->ns, ev->name);
    sentry_t *p = corral__st_get(&s->pods, key, ev->type != CORRAL_WATCH_DELETED);
    if (!p) {
        corral_watch_ev_free(ev);
        return;
    }
    if (ev->type == CORRAL_WATCH_DELETED) {
        corral_watch_ev_free(ev);
        orphan_drop(s, p);
        pod_remove(s, p);
        corral__st_del(&s->pods, p);
        return;
    }
    corral_watch_ev_free(p->ev);
    p->ev = ev;
    corral__pod_feed(s, p);
}

/* What the engine reads of a node, hashed: labels, taints, unschedulable,
 * allocatable and the topology annotation. */
static uint32_t node_fp(const corral_obj_t *o)
{
    corral_buf_t b;
    corral_buf_init(&b);
    for (size_t i = 0; i < o->meta.labels.n; i++)
        corral_buf_printf(&b, "%s=%s\n", o->meta.labels.items[i].key,
                          o->meta.labels.items[i].value);
    const corral_node_t *n = o->u.node;
    for (size_t i = 0; i < n->ntaints; i++)
        corral_buf_printf(&b, "%s=%s:%s\n", n->taints[i].key ? n->taints[i].key : "",
                          n->taints[i].value ? n->taints[i].value : "",
                          n->taints[i].effect ? n->taints[i].effect : "");
    corral_buf_printf(&b, "|%d|", n->unschedulable);
    for (size_t i = 0; i < n->allocatable.n; i++) {
        const corral_qty_t *q = &n->allocatable.items[i].qty;
        corral_buf_printf(&b, "%s=%lld.%d.%d,", n->allocatable.items[i].name, (long long)q->mant,
                          q->exp10, q->exp2);
    }
    const char *t = corral_strmap_get(&o->meta.annotations, CORRAL_GPU_TOPO_ANNOTATION);
    corral_buf_puts(&b, t ? t : "");
    uint32_t h = corral_hash_str(corral_buf_str(&b));
    corral_buf_fini(&b);
    return h ? h : 1;
}

static void on_node(sched_t *s, corral_watch_ev_t *ev)
{
    sentry_t *n = corral__st_get(&s->nodes, ev->name, ev->type != CORRAL_WATCH_DELETED);
    if (ev->type == CORRAL_WATCH_DELETED) {
        if (n) {
            corral_engine_remove(s->e, CORRAL_KIND_NODE, "", ev->name);
            orphans_of_node(s, ev->name);
            corral__st_del(&s->nodes, n);
            s->changed = true;
            corral__slog(s, 1, "node %s removed", ev->name);
        }
        return;
    }
    uint32_t fp = node_fp(ev->obj);
    if (fp == n->fp)
        return;
    n->fp = fp;
    corral_diag_t diag;
    corral_diag_init(&diag);
    corral_engine_upsert(s->e, ev->obj, now_ns(), &diag);
    log_diag(s, &diag);
    corral_diag_fini(&diag);
    orphans_feed(s, ev->name);
    s->changed = true;
}

static void on_schedconf(sched_t *s, corral_watch_ev_t *ev)
{
    if (s->o->config_file || strcmp(ev->name, s->o->config_name) != 0)
        return;
    corral_sched_config_t c;
    corral_sched_config_default(&c);
    if (ev->type != CORRAL_WATCH_DELETED &&
        corral_sched_config_apply(&c, ev->obj->u.schedconf) != 0) {
        corral__slog(s, 0, "SchedulerConfiguration %s: unknown policy; keeping the last one",
                     ev->name);
        return;
    }
    corral_engine_set_config(s->e, &c);
    s->changed = true;
    corral__slog(s, 0, "configuration %s %s (policy %s)", ev->name,
                 ev->type == CORRAL_WATCH_DELETED ? "deleted: defaults" : "applied",
                 corral_policy_name(c.policy));
}

static void on_event(sched_t *s, corral_watch_ev_t *ev)
{
    s->stats->objects_seen++;
    if (ev->type == CORRAL_WATCH_SYNCED) {
        corral_watch_ev_free(ev);
        return;
    }
    switch (ev->kind) {
    case CORRAL_KIND_POD:
        on_pod(s, ev); /* keeps ev */
        return;
    case CORRAL_KIND_NODE:
        on_node(s, ev);
        break;
    case CORRAL_KIND_SCHEDCONF:
        on_schedconf(s, ev);
        break;
    default:
        if (ev->type == CORRAL_WATCH_DELETED) {
            corral_engine_remove(s->e, ev->kind, ev->ns, ev->name);
        } else {
            corral_diag_t diag;
            corral_diag_init(&diag);
            corral_engine_upsert(s->e, ev->obj, now_ns(), &diag);
            log_diag(s, &diag);
            corral_diag_fini(&diag);
        }
        s->changed = true;
    }
    corral_watch_ev_free(ev);
}

/* --- running ----------------------------------------------------------------------------- */

static const corral_kind_t first_kinds[] = {CORRAL_KIND_NODE,          CORRAL_KIND_QUEUE,
                                            CORRAL_KIND_PRIORITYCLASS, CORRAL_KIND_HYPERNODE,
                                            CORRAL_KIND_PODGROUP,      CORRAL_KIND_SCHEDCONF};
#define NKINDS (sizeof(first_kinds) / sizeof(first_kinds[0]) + 1)

static void drain(sched_t *s, int timeout_ms)
{
    corral_watch_ev_t *l = corral_evq_take(s->q, timeout_ms);
    while (l) {
        corral_watch_ev_t *next = l->next;
        l->next = NULL;
        on_event(s, l);
        l = next;
    }
    for (wjob_t *j = corral__wpool_done(&s->pool), *next; j; j = next) {
        next = j->next;
        corral__outcome(s, j);
        corral__wjob_free(j);
    }
    /* Pods whose bind failed go back to the engine after their backoff. */
    int64_t now = corral__now_ms();
    size_t k = 0;
    for (size_t i = 0; i < s->nretry; i++) {
        sentry_t *p = corral__st_get(&s->pods, s->retry[i], false);
        if (p && p->retry_ms > now) {
            s->retry[k++] = s->retry[i];
            continue;
        }
        if (p)
            corral__pod_feed(s, p);
        corral_free(s->retry[i]);
    }
    s->nretry = k;
}

static bool all_synced(corral_informer_t **inf, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!corral_informer_synced(inf[i]))
            return false;
    }
    return true;
}

static int start_one(sched_t *s, corral_kind_t kind, corral_informer_t **inf, size_t *ninf,
                     char *err, size_t errlen)
{
    corral_informer_opts_t io;
    memset(&io, 0, sizeof(io));
    io.kind = kind;
    int rc = corral_informer_start(s->o->client, &io, s->q, &inf[*ninf], err, errlen);
    if (rc == 0)
        (*ninf)++;
    return rc;
}

/* Pods only once the rest is known: a bound pod needs its node. */
static int start_informers(sched_t *s, corral_informer_t **inf, size_t *ninf, char *err,
                           size_t errlen)
{
    for (size_t i = 0; i < NKINDS - 1; i++) {
        if (first_kinds[i] == CORRAL_KIND_SCHEDCONF && s->o->config_file)
            continue;
        int rc = start_one(s, first_kinds[i], inf, ninf, err, errlen);
        if (rc != 0)
            return rc;
    }
    while (!*s->o->stop && !all_synced(inf, *ninf))
        drain(s, 100);
    return start_one(s, CORRAL_KIND_POD, inf, ninf, err, errlen);
}

static void run_cycle(sched_t *s)
{
    int64_t t0 = now_ns();
    const corral_decisions_t *d;
    corral_engine_cycle(s->e, t0, &d);
    uint64_t took = (uint64_t)(now_ns() - t0);
    s->stats->cycles++;
    s->stats->cycle_ns_total += took;
    if (took > s->stats->cycle_ns_max)
        s->stats->cycle_ns_max = took;
    corral__sm_cycle(s, took, d);
    if (d->nbinds || d->nevictions || d->npending)
        corral__slog(s, 1, "cycle %llu: %zu binds, %zu evictions, %zu new pending reasons, %.1f ms",
                     (unsigned long long)s->stats->cycles, d->nbinds, d->nevictions, d->npending,
                     (double)took / 1e6);
    corral__apply(s, d);
}

static void log_leader(void *ctx, const char *msg)
{
    corral__slog(ctx, 0, "%s", msg);
}

static int load_file_config(sched_t *s, char *err, size_t errlen)
{
    corral_arena_t a;
    corral_arena_init(&a);
    const corral_schedconf_t *sc;
    int rc = corral_schedconf_load(s->o->config_file, &a, stderr, &sc);
    corral_sched_config_t c;
    corral_sched_config_default(&c);
    if (rc == 0 && corral_sched_config_apply(&c, sc) != 0)
        rc = CORRAL_EINVAL;
    if (rc == 0)
        corral_engine_set_config(s->e, &c);
    else
        snprintf(err, errlen, "%s: not a usable SchedulerConfiguration", s->o->config_file);
    corral_arena_fini(&a);
    return rc;
}

static void sched_loop(sched_t *s, corral_informer_t **inf, size_t ninf, corral_leader_t *lead)
{
    int64_t last_cycle = 0, last_log = corral__now_ms();
    bool was_leader = false;
    while (!*s->o->stop && !(lead && corral_leader_lost(lead))) {
        drain(s, 100);
        bool leader = !lead || corral_leader_is_leader(lead);
        if (leader != was_leader) {
            s->changed = true; /* a new leader starts with a full look */
            corral__sm_leader(s, leader);
        }
        was_leader = leader;
        int64_t now = corral__now_ms();
        if (leader && all_synced(inf, ninf) && (s->changed || now - last_cycle >= 1000)) {
            s->changed = false;
            last_cycle = now;
            run_cycle(s);
        }
        if (s->o->verbosity >= 2 && now - last_log >= 10000) {
            last_log = now;
            corral__slog(s, 2, "%llu cycles, %llu binds (%llu failed), %llu evictions",
                         (unsigned long long)s->stats->cycles, (unsigned long long)s->stats->binds,
                         (unsigned long long)s->stats->bind_failures,
                         (unsigned long long)s->stats->evictions);
        }
    }
}

int corral_scheduler_run(const corral_scheduler_opts_t *o, corral_scheduler_stats_t *stats,
                         char *err, size_t errlen)
{
    sched_t s;
    memset(&s, 0, sizeof(s));
    memset(stats, 0, sizeof(*stats));
    s.o = o;
    s.stats = stats;
    corral_engine_new(NULL, &s.e);
    s.q = corral_evq_new();
    snprintf(s.instance, sizeof(s.instance), "corral-scheduler-%d", (int)getpid());
    int rc = o->config_file ? load_file_config(&s, err, errlen) : 0;
    if (rc == 0)
        corral__sm_start(&s);
    corral_leader_t *lead = NULL;
    corral_informer_t *inf[NKINDS] = {0};
    size_t ninf = 0;
    if (rc == 0)
        rc = corral__wpool_start(&s.pool, o->client, o->binders, s.q, err, errlen);
    s.pool.stats = stats;
    if (rc == 0)
        rc = start_informers(&s, inf, &ninf, err, errlen);
    if (rc == 0 && o->leader_elect) {
        corral_leader_opts_t lo = {o->lease_name, o->lease_ns, NULL,       o->lease_ms,
                                   o->renew_ms,   o->retry_ms, log_leader, &s};
        rc = corral_leader_start(o->client, &lo, &lead, err, errlen);
    }
    if (rc == 0) {
        corral__slog(&s, 0, "serving schedulerName %s%s, %d writers", o->names[0],
                     o->nnames > 1 ? " and others" : "", o->binders);
        sched_loop(&s, inf, ninf, lead);
        if (lead && corral_leader_lost(lead)) {
            snprintf(err, errlen, "lost leadership; exiting so that a new leader takes over");
            rc = CORRAL_EIO;
        }
    }
    for (size_t i = 0; i < ninf; i++)
        corral_informer_cancel(inf[i]);
    for (size_t i = 0; i < ninf; i++)
        corral_informer_stop(inf[i]);
    if (s.pool.qs)
        corral__wpool_stop(&s.pool, rc == 0 ? 5000 : 0);
    stats->status_writes = atomic_load(&s.pool.status_writes);
    stats->events = atomic_load(&s.pool.events);
    stats->write_failures = atomic_load(&s.pool.write_failures);
    corral_leader_stop(lead, true);
    corral__sm_stop(&s);
    for (size_t i = 0; i < s.nretry; i++)
        corral_free(s.retry[i]);
    corral_free(s.retry);
    for (size_t i = 0; i < s.norphans; i++)
        corral_free(s.orphans[i]);
    corral_free(s.orphans);
    corral__st_fini(&s.pods);
    corral__st_fini(&s.nodes);
    corral_evq_free(s.q);
    corral_engine_free(s.e);
    return rc;
}
