/*
 * Garbage collection by ownerReferences, background propagation: an object
 * all of whose owners are gone is deleted. Candidates come from the
 * dependents index (the owner was deleted) and from objects seen with an
 * owner the cache does not hold. Before deleting, every owner is looked up
 * on the server by name (as Kubernetes' garbage collector does): absent, or
 * present with another uid, means gone; an owner of a kind Corral does not
 * serve is never presumed gone. The API server has no orphan or foreground
 * deletion (no such finalizers), so background is the only policy.
 */
#include <stdio.h>
#include <string.h>

#include "controller/controller_int.h"

void corral__gc_queue(corral_controller_t *c, corral__entry_t *e)
{
    if (e->gc_check || !e->nowners)
        return;
    e->gc_check = true;
    corral_grow((void **)&c->gcq.items, &c->gcq.cap, c->gcq.n + 1, sizeof(corral__entry_t *));
    c->gcq.items[c->gcq.n++] = e;
}

void corral__gc_on_delete(corral_controller_t *c, const char *uid)
{
    const corral__entries_t *deps = corral__cache_dependents(&c->cache, uid);
    for (size_t i = 0; deps && i < deps->n; i++)
        corral__gc_queue(c, deps->items[i]);
}

/* 1: the owner exists, 0: it is gone, -1: cannot tell now. */
static int owner_alive(corral_controller_t *c, corral_arena_t *a, const corral_obj_t *dep,
                       const corral_owner_ref_t *r)
{
    if (corral__cache_by_uid(&c->cache, r->uid))
        return 1;
    const corral_kind_info_t *k = corral_kind_find(r->api_version, r->kind);
    if (!k || !r->name)
        return 1; /* a kind Corral does not serve: never presumed gone */
    const char *ns = k->namespaced ? dep->meta.namespace : NULL;
    if (k->namespaced && !ns)
        return 1;
    corral_buf_t resp;
    corral_buf_init(&resp);
    long code =
        corral__ctl_send(c, "GET", corral__ctl_path(a, k, ns, r->name, NULL), NULL, NULL, &resp);
    int alive = -1;
    if (code == 404) {
        alive = 0;
    } else if (code == 200) {
        corral_watch_ev_t *ev = corral__ev_from_json(resp.p ? resp.p : "", resp.len);
        alive = ev && ev->obj->meta.uid && strcmp(ev->obj->meta.uid, r->uid) == 0;
        corral_watch_ev_free(ev);
    }
    corral_buf_fini(&resp);
    return alive;
}

/* Returns false when it must be checked again later. */
static bool check(corral_controller_t *c, corral__entry_t *e)
{
    const corral_obj_t *o = e->ev->obj;
    if (e->deleting || o->meta.deletion_us || !o->meta.nowners)
        return true;
    corral_arena_t a;
    corral_arena_init(&a);
    bool gone = true, retry = false;
    for (size_t i = 0; gone && i < o->meta.nowners; i++) {
        if (!o->meta.owners[i].uid)
            continue;
        int alive = owner_alive(c, &a, o, &o->meta.owners[i]);
        gone = alive == 0;
        retry = alive < 0;
    }
    corral_arena_fini(&a);
    if (!gone)
        return !retry;
    char ref[600];
    corral__ctl_log(c, "garbage collector: %s: its owners are gone, deleting it",
                    corral_obj_ref(o, ref, sizeof(ref)));
    if (!corral__ctl_delete(c, o, -1))
        return false;
    e->deleting = true;
    return true;
}

void corral__gc_run(corral_controller_t *c)
{
    if (!c->synced || !c->gcq.n)
        return;
    corral__entries_t q = c->gcq;
    memset(&c->gcq, 0, sizeof(c->gcq));
    bool again = false;
    for (size_t i = 0; i < q.n; i++) {
        corral__entry_t *e = q.items[i];
        e->gc_check = false;
        if (!check(c, e)) {
            corral__gc_queue(c, e);
            again = true;
        }
    }
    corral_free(q.items);
    if (again)
        corral__timers_push(&c->timers, corral__mono_ns() + 1000000000, CORRAL__T_GC, NULL);
}
