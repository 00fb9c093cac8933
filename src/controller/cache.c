/*
 * The controllers' cache: the newest version of every object the informers
 * delivered, found by kind/namespace/name and by uid, with an index of
 * dependents by owner uid (the garbage collector's graph and the job
 * controller's "pods of this job"). An entry owns the watch event holding
 * its object; removing the entry frees it, so memory follows the objects
 * that exist. Also the timer heap (monotonic clock) the controllers share.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "controller/controller_int.h"
#include "corral/json.h"

int64_t corral__mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t corral__wall_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

void corral__cache_init(corral__cache_t *c)
{
    memset(c, 0, sizeof(*c));
    corral_hmap_init(&c->by_key);
    corral_hmap_init(&c->by_uid);
    corral_hmap_init(&c->deps);
}

static void free_entry(corral__entry_t *e)
{
    corral_watch_ev_free(e->ev);
    for (size_t i = 0; i < e->nowners; i++)
        corral_free(e->owners[i]);
    corral_free(e->owners);
    corral__entry_clear_jevs(e);
    corral_free(e->jevs);
    corral_free(e->key);
    corral_free(e->uid);
    corral_free(e);
}

void corral__cache_fini(corral__cache_t *c)
{
    for (size_t i = 0; i < c->nslots; i++) {
        if (c->slots[i])
            free_entry(c->slots[i]);
    }
    for (size_t i = 0; i < c->ndeplists; i++) {
        corral_free(c->deplists[i].items);
        corral_free(c->depkeys[i]);
    }
    corral_free(c->deplists);
    corral_free(c->depkeys);
    corral_free(c->depfree);
    corral_free(c->slots);
    corral_free(c->free);
    corral_hmap_fini(&c->by_key);
    corral_hmap_fini(&c->by_uid);
    corral_hmap_fini(&c->deps);
}

static char *make_key(corral_kind_t k, const char *ns, const char *name)
{
    size_t n = strlen(ns) + strlen(name) + 16;
    char *s = corral_malloc(n);
    snprintf(s, n, "%d|%s/%s", (int)k, ns, name);
    return s;
}

corral__entry_t *corral__cache_get(const corral__cache_t *c, corral_kind_t k, const char *ns,
                                   const char *name)
{
    char buf[600];
    snprintf(buf, sizeof(buf), "%d|%s/%s", (int)k, ns ? ns : "", name);
    uint32_t slot;
    return corral_hmap_get(&c->by_key, buf, &slot) ? c->slots[slot] : NULL;
}

corral__entry_t *corral__cache_by_uid(const corral__cache_t *c, const char *uid)
{
    uint32_t slot;
    return uid && corral_hmap_get(&c->by_uid, uid, &slot) ? c->slots[slot] : NULL;
}

const corral__entries_t *corral__cache_dependents(const corral__cache_t *c, const char *uid)
{
    uint32_t i;
    return uid && corral_hmap_get(&c->deps, uid, &i) ? &c->deplists[i] : NULL;
}

/* --- the dependents index ------------------------------------------------------------------ */

static void dep_add(corral__cache_t *c, const char *uid, corral__entry_t *e)
{
    uint32_t i;
    if (!corral_hmap_get(&c->deps, uid, &i)) {
        if (c->ndepfree) {
            i = c->depfree[--c->ndepfree];
        } else {
            i = (uint32_t)c->ndeplists++;
            c->deplists = corral_realloc(c->deplists, c->ndeplists * sizeof(*c->deplists));
            c->depkeys = corral_realloc(c->depkeys, c->ndeplists * sizeof(*c->depkeys));
        }
        memset(&c->deplists[i], 0, sizeof(c->deplists[i]));
        c->depkeys[i] = corral_strdup(uid);
        corral_hmap_put(&c->deps, c->depkeys[i], i);
    }
    corral__entries_t *l = &c->deplists[i];
    corral_grow((void **)&l->items, &l->cap, l->n + 1, sizeof(corral__entry_t *));
    l->items[l->n++] = e;
}

static void dep_del(corral__cache_t *c, const char *uid, const corral__entry_t *e)
{
    uint32_t i;
    if (!corral_hmap_get(&c->deps, uid, &i))
        return;
    corral__entries_t *l = &c->deplists[i];
    for (size_t k = 0; k < l->n; k++) {
        if (l->items[k] == e) {
            l->items[k] = l->items[--l->n];
            break;
        }
    }
    if (l->n)
        return;
    corral_hmap_del(&c->deps, c->depkeys[i]);
    corral_free(c->depkeys[i]);
    c->depkeys[i] = NULL;
    corral_free(l->items);
    memset(l, 0, sizeof(*l));
    corral_grow((void **)&c->depfree, &c->capdepfree, c->ndepfree + 1, sizeof(*c->depfree));
    c->depfree[c->ndepfree++] = i;
}

static void index_owners(corral__cache_t *c, corral__entry_t *e)
{
    const corral_meta_t *m = &e->ev->obj->meta;
    bool same = m->nowners == e->nowners;
    for (size_t i = 0; same && i < m->nowners; i++)
        same = m->owners[i].uid && strcmp(m->owners[i].uid, e->owners[i]) == 0;
    if (same)
        return;
    for (size_t i = 0; i < e->nowners; i++) {
        dep_del(c, e->owners[i], e);
        corral_free(e->owners[i]);
    }
    corral_free(e->owners);
    e->owners = corral_calloc(m->nowners + 1, sizeof(char *));
    e->nowners = 0;
    for (size_t i = 0; i < m->nowners; i++) {
        if (!m->owners[i].uid || !*m->owners[i].uid)
            continue;
        e->owners[e->nowners] = corral_strdup(m->owners[i].uid);
        dep_add(c, e->owners[e->nowners++], e);
    }
}

/* --- put and delete ------------------------------------------------------------------------ */

static void set_uid(corral__cache_t *c, corral__entry_t *e, const char *uid)
{
    if (e->uid && uid && strcmp(e->uid, uid) == 0)
        return;
    if (e->uid) {
        corral_hmap_del(&c->by_uid, e->uid);
        corral_free(e->uid);
        e->uid = NULL;
    }
    if (uid && *uid) {
        e->uid = corral_strdup(uid);
        corral_hmap_put(&c->by_uid, e->uid, e->slot);
    }
}

corral__entry_t *corral__cache_put(corral__cache_t *c, corral_watch_ev_t *ev,
                                   corral_watch_ev_t **old)
{
    *old = NULL;
    corral__entry_t *e = corral__cache_get(c, ev->kind, ev->ns, ev->name);
    if (e) {
        *old = e->ev;
    } else {
        e = corral_calloc(1, sizeof(*e));
        e->kind = ev->kind;
        e->key = make_key(ev->kind, ev->ns, ev->name);
        e->seen_ns = corral__mono_ns();
        if (c->nfree) {
            e->slot = c->free[--c->nfree];
        } else {
            e->slot = (uint32_t)c->nslots++;
            c->slots = corral_realloc(c->slots, c->nslots * sizeof(corral__entry_t *));
        }
        c->slots[e->slot] = e;
        corral_hmap_put(&c->by_key, e->key, e->slot);
    }
    ev->next = NULL;
    e->ev = ev;
    e->deleting = false;
    set_uid(c, e, ev->obj->meta.uid);
    index_owners(c, e);
    return e;
}

void corral__cache_del(corral__cache_t *c, corral__entry_t *e)
{
    for (size_t i = 0; i < e->nowners; i++)
        dep_del(c, e->owners[i], e);
    set_uid(c, e, NULL);
    corral_hmap_del(&c->by_key, e->key);
    c->slots[e->slot] = NULL;
    corral_grow((void **)&c->free, &c->capfree, c->nfree + 1, sizeof(*c->free));
    c->free[c->nfree++] = e->slot;
    free_entry(e);
}

corral_watch_ev_t *corral__ev_from_json(const char *text, size_t len)
{
    corral_watch_ev_t *ev = corral_calloc(1, sizeof(*ev));
    corral_arena_init(&ev->arena);
    char err[256];
    if (corral_obj_from_json(&ev->arena, text, len, &ev->obj, err, sizeof(err)) != 0 || !ev->obj ||
        !ev->obj->meta.name) {
        corral_watch_ev_free(ev);
        return NULL;
    }
    ev->type = CORRAL_WATCH_MODIFIED;
    ev->kind = ev->obj->info->kind;
    ev->ns = ev->obj->meta.namespace ? ev->obj->meta.namespace : "";
    ev->name = ev->obj->meta.name;
    ev->rv = ev->obj->meta.resource_version ? ev->obj->meta.resource_version : "";
    return ev;
}

/* --- job events ---------------------------------------------------------------------------- */

static char *dup_or_null(const char *s)
{
    return s ? corral_strdup(s) : NULL;
}

enum { MAX_JEVS = 256 }; /* past this a job just resyncs: the oldest events are dropped */

void corral__entry_add_jev(corral__entry_t *e, const corral__job_ev_t *ev)
{
    if (e->njevs == MAX_JEVS)
        return;
    corral_grow((void **)&e->jevs, &e->capjevs, e->njevs + 1, sizeof(*e->jevs));
    corral__job_ev_t *d = &e->jevs[e->njevs++];
    *d = *ev;
    d->event = dup_or_null(ev->event);
    d->task = dup_or_null(ev->task);
    d->pod = dup_or_null(ev->pod);
}

void corral__entry_clear_jevs(corral__entry_t *e)
{
    for (size_t i = 0; i < e->njevs; i++) {
        corral_free((void *)e->jevs[i].event);
        corral_free((void *)e->jevs[i].task);
        corral_free((void *)e->jevs[i].pod);
    }
    e->njevs = 0;
}

/* --- timers -------------------------------------------------------------------------------- */

static void swap(corral__timer_t *a, corral__timer_t *b)
{
    corral__timer_t t = *a;
    *a = *b;
    *b = t;
}

void corral__timers_push(corral__timers_t *t, int64_t at_ns, corral__timer_kind_t kind,
                         const char *key)
{
    corral_grow((void **)&t->h, &t->cap, t->n + 1, sizeof(*t->h));
    size_t i = t->n++;
    t->h[i] = (corral__timer_t){at_ns, kind, key ? corral_strdup(key) : NULL};
    while (i > 0 && t->h[(i - 1) / 2].at_ns > t->h[i].at_ns) {
        swap(&t->h[(i - 1) / 2], &t->h[i]);
        i = (i - 1) / 2;
    }
}

bool corral__timers_pop_due(corral__timers_t *t, int64_t now_ns, corral__timer_t *out)
{
    if (!t->n || t->h[0].at_ns > now_ns)
        return false;
    *out = t->h[0];
    t->h[0] = t->h[--t->n];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < t->n && t->h[l].at_ns < t->h[m].at_ns)
            m = l;
        if (r < t->n && t->h[r].at_ns < t->h[m].at_ns)
            m = r;
        if (m == i)
            break;
        swap(&t->h[i], &t->h[m]);
        i = m;
    }
    return true;
}

int64_t corral__timers_next(const corral__timers_t *t, int64_t now_ns)
{
    if (!t->n)
        return -1;
    return t->h[0].at_ns > now_ns ? t->h[0].at_ns - now_ns : 0;
}

void corral__timers_fini(corral__timers_t *t)
{
    for (size_t i = 0; i < t->n; i++)
        corral_free(t->h[i].key);
    corral_free(t->h);
    memset(t, 0, sizeof(*t));
}
