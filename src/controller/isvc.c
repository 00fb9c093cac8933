/*
 * The InferenceService controller's I/O half (isvc.h): per service, the
 * resolved pod template becomes a ControllerRevision when its hash changes,
 * the traffic split follows KServe's canary rules, each revision's replicas
 * follow the autoscaler clamped to the service's bounds and share, and the
 * status is written through the status subresource when it changes. A
 * service is reconciled when it, one of its pods or revisions changes, and
 * every second (the autoscaler's tick). The cold start of each replica
 * (created -> bound -> Ready, as this controller saw them, and the agent's
 * model-fetch annotation) goes to a histogram and the service's status.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/autoscale.h"
#include "controller/controller_int.h"
#include "controller/isvc.h"
#include "corral/timefmt.h"

#define KIND_REV         CORRAL_KIND_CONTROLLERREVISION
#define ISVC_API         "serving.kserve.io/v1beta1"
#define BACKOFF_MAX_NS   (60 * CORRAL_NS_PER_SEC)
#define BACKOFF_RESET_NS (10 * CORRAL_NS_PER_SEC)

static bool eq(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

/* --- per-service memory --------------------------------------------------------------------- */

/* Per revision: replicas that failed in a row, and when the next may be
 * created (a backoff that doubles from 1 s to 60 s). */
struct corral__isvc_state {
    char *key; /* ns/revision */
    int fails;
    int64_t create_after_ns;
};

static corral__isvc_state_t *state_of(corral_controller_t *c, const char *ns, const char *rev)
{
    char key[600];
    snprintf(key, sizeof(key), "%s/%s", ns, rev);
    for (size_t i = 0; i < c->nisvc_state; i++) {
        if (eq(c->isvc_state[i].key, key))
            return &c->isvc_state[i];
    }
    corral_grow((void **)&c->isvc_state, &c->capisvc_state, c->nisvc_state + 1,
                sizeof(*c->isvc_state));
    corral__isvc_state_t *s = &c->isvc_state[c->nisvc_state++];
    memset(s, 0, sizeof(*s));
    s->key = corral_strdup(key);
    return s;
}

/* Forget the revision ns/rev, or (prefix) every revision of service ns/rev. */
static void state_drop(corral_controller_t *c, const char *ns, const char *rev, bool prefix)
{
    char key[600];
    snprintf(key, sizeof(key), "%s/%s%s", ns, rev, prefix ? "-predictor-" : "");
    size_t n = strlen(key);
    for (size_t i = 0; i < c->nisvc_state; i++) {
        const char *k = c->isvc_state[i].key;
        if (prefix ? strncmp(k, key, n) != 0 : strcmp(k, key) != 0)
            continue;
        corral_free(c->isvc_state[i].key);
        c->isvc_state[i--] = c->isvc_state[--c->nisvc_state];
    }
}

/* --- events in ------------------------------------------------------------------------------- */

static const char *isvc_owner(const corral_obj_t *o)
{
    return corral__ctl_owner(o, ISVC_API, "InferenceService");
}

static void mark(corral_controller_t *c, corral__entry_t *e)
{
    if (!e || e->kind != CORRAL_KIND_ISVC || e->isvc_dirty)
        return;
    e->isvc_dirty = true;
    corral_grow((void **)&c->isvc_dirty.items, &c->isvc_dirty.cap, c->isvc_dirty.n + 1,
                sizeof(corral__entry_t *));
    c->isvc_dirty.items[c->isvc_dirty.n++] = e;
}

static bool pod_ready(const corral_obj_t *pod)
{
    const corral_conditions_t *cs = &pod->u.pod->status.conditions;
    for (size_t i = 0; i < cs->n; i++) {
        if (eq(cs->items[i].type, "Ready"))
            return eq(cs->items[i].status, "True");
    }
    return false;
}

void corral__isvc_on_event(corral_controller_t *c, corral__entry_t *e, const corral_obj_t *old,
                           corral_watch_type_t type)
{
    const corral_obj_t *o = e->ev->obj;
    if (e->kind == CORRAL_KIND_ISVC) {
        if (type == CORRAL_WATCH_DELETED)
            state_drop(c, o->meta.namespace, o->meta.name, true);
        else
            mark(c, e);
        return;
    }
    if (e->kind != CORRAL_KIND_POD && e->kind != KIND_REV)
        return;
    const char *owner = isvc_owner(o);
    if (!owner)
        return;
    if (e->kind == CORRAL_KIND_POD && type != CORRAL_WATCH_DELETED) {
        const char *node = o->u.pod->spec.node_name;
        if (node && *node && !e->bound_ns)
            e->bound_ns = corral__mono_ns();
        if (!e->ready_ns && pod_ready(o)) {
            e->ready_ns = corral__mono_ns();
            e->cold_done = e->cold_done || !old; /* Ready before this controller saw it */
        }
    }
    if (e->kind == KIND_REV && type == CORRAL_WATCH_DELETED) {
        /* a revision gone (pruned, or with its service: the garbage
         * collector deletes them): its autoscaler state and scrapes too */
        state_drop(c, o->meta.namespace, o->meta.name, false);
        corral__as_forget(c->as, o->meta.namespace, o->meta.name);
    }
    mark(c, corral__cache_by_uid(&c->cache, owner));
}

/* --- writes --------------------------------------------------------------------------------- */

static long send_val(corral_controller_t *c, const char *method, const char *path,
                     const corral_val_t *obj, bool cache)
{
    corral_buf_t body, resp;
    corral_buf_init(&body);
    corral_buf_init(&resp);
    corral_val_to_json(obj, &body, false);
    long code = corral__ctl_send(c, method, path, NULL, &body, &resp);
    if (cache && (code == 200 || code == 201))
        corral__ctl_cache(c, &resp);
    corral_buf_fini(&body);
    corral_buf_fini(&resp);
    return code;
}

static corral_val_t *owner_refs(corral_arena_t *a, const corral_obj_t *isvc)
{
    corral_val_t *refs = corral_val_new(a, CORRAL_VAL_SEQ);
    corral_val_t *r = corral_val_new(a, CORRAL_VAL_MAP);
    corral_val_set(a, r, "apiVersion", corral_val_new_str(a, ISVC_API));
    corral_val_set(a, r, "kind", corral_val_new_str(a, "InferenceService"));
    corral_val_set(a, r, "name", corral_val_new_str(a, isvc->meta.name));
    corral_val_set(a, r, "uid", corral_val_new_str(a, isvc->meta.uid ? isvc->meta.uid : ""));
    corral_val_set(a, r, "controller", corral_val_new_bool(a, true));
    corral_val_set(a, r, "blockOwnerDeletion", corral_val_new_bool(a, true));
    corral_val_push(a, refs, r);
    return refs;
}

/* A core v1 Event about the service. */
static void post_event(corral_controller_t *c, corral_arena_t *a, const corral_obj_t *isvc,
                       const char *type, const char *reason, const char *msg)
{
    char ts[40];
    corral_time_format(corral__wall_us(), false, ts, sizeof(ts));
    corral_val_t *ev = corral_val_new(a, CORRAL_VAL_MAP);
    corral_val_set(a, ev, "apiVersion", corral_val_new_str(a, "v1"));
    corral_val_set(a, ev, "kind", corral_val_new_str(a, "Event"));
    corral_val_t *m = corral_val_ensure_map(a, ev, "metadata");
    corral_val_set(a, m, "name",
                   corral_val_new_str(a, corral_arena_printf(a, "%.200s.%llx%04x", isvc->meta.name,
                                                             (unsigned long long)corral__wall_us(),
                                                             (unsigned)(c->actions & 0xffff))));
    corral_val_set(a, m, "namespace", corral_val_new_str(a, isvc->meta.namespace));
    corral_val_t *io = corral_val_ensure_map(a, ev, "involvedObject");
    corral_val_set(a, io, "apiVersion", corral_val_new_str(a, ISVC_API));
    corral_val_set(a, io, "kind", corral_val_new_str(a, "InferenceService"));
    corral_val_set(a, io, "namespace", corral_val_new_str(a, isvc->meta.namespace));
    corral_val_set(a, io, "name", corral_val_new_str(a, isvc->meta.name));
    corral_val_set(a, io, "uid", corral_val_new_str(a, isvc->meta.uid ? isvc->meta.uid : ""));
    corral_val_set(a, ev, "reason", corral_val_new_str(a, reason));
    corral_val_set(a, ev, "message", corral_val_new_str(a, msg));
    corral_val_set(a, ev, "type", corral_val_new_str(a, type));
    corral_val_t *src = corral_val_ensure_map(a, ev, "source");
    corral_val_set(a, src, "component", corral_val_new_str(a, "corral-controller"));
    corral_val_set(a, ev, "reportingComponent", corral_val_new_str(a, "corral-controller"));
    corral_val_set(a, ev, "firstTimestamp", corral_val_new_str(a, ts));
    corral_val_set(a, ev, "lastTimestamp", corral_val_new_str(a, ts));
    corral_val_set(a, ev, "count", corral_val_new_int(a, 1));
    const char *path =
        corral__ctl_path(a, corral_kind_get(CORRAL_KIND_EVENT), isvc->meta.namespace, NULL, NULL);
    send_val(c, "POST", path, ev, false);
}

/* The queue `inference` when the service uses it and it is missing
 * (docs/decisions.md, "the inference queue"). */
static void ensure_queue(corral_controller_t *c, corral_arena_t *a, const char *queue)
{
    if (!eq(queue, CORRAL__ISVC_DEFAULT_QUEUE) ||
        corral__cache_get(&c->cache, CORRAL_KIND_QUEUE, "", queue))
        return;
    corral_val_t *q = corral_val_new(a, CORRAL_VAL_MAP);
    const corral_kind_info_t *k = corral_kind_get(CORRAL_KIND_QUEUE);
    corral_val_set(a, q, "apiVersion", corral_val_new_str(a, k->api_version));
    corral_val_set(a, q, "kind", corral_val_new_str(a, k->name));
    corral_val_t *m = corral_val_ensure_map(a, q, "metadata");
    corral_val_set(a, m, "name", corral_val_new_str(a, queue));
    corral_val_t *sp = corral_val_ensure_map(a, q, "spec");
    corral_val_set(a, sp, "weight", corral_val_new_int(a, 1));
    corral_val_set(a, sp, "reclaimable", corral_val_new_bool(a, true));
    long code = send_val(c, "POST", corral__ctl_path(a, k, NULL, NULL, NULL), q, true);
    if (code == 201 || code == 200)
        corral__ctl_log(c, "created queue %s for InferenceServices", queue);
}

/* --- the view of one service ----------------------------------------------------------------- */

typedef struct rpod {
    corral__entry_t *e;
    const corral_obj_t *o;
    bool ready, failed, gone; /* gone: deleting or being deleted */
} rpod_t;

typedef struct rev {
    corral__entry_t *e;
    const char *name, *hash;
    int64_t num;
    rpod_t *pods;
    size_t npods, cap;
    int32_t ready, pending, failed;
} rev_t;

typedef struct view {
    rev_t *revs;
    size_t nrevs;
    rpod_t *orphans; /* pods of a revision that is gone */
    size_t norphans, caporphans;
} view_t;

static rev_t *find_rev(view_t *v, const char *name)
{
    for (size_t i = 0; name && i < v->nrevs; i++) {
        if (eq(v->revs[i].name, name))
            return &v->revs[i];
    }
    return NULL;
}

static void add_pod(corral_arena_t *a, rpod_t **l, size_t *n, size_t *cap, rpod_t p)
{
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 4;
        rpod_t *x = corral_arena_alloc(a, nc * sizeof(*x));
        if (*n)
            memcpy(x, *l, *n * sizeof(*x));
        *l = x;
        *cap = nc;
    }
    (*l)[(*n)++] = p;
}

static void build_view(corral_controller_t *c, corral_arena_t *a, const corral__entry_t *se,
                       view_t *v)
{
    memset(v, 0, sizeof(*v));
    const corral__entries_t *deps = corral__cache_dependents(&c->cache, se->uid);
    size_t n = deps ? deps->n : 0;
    v->revs = corral_arena_alloc(a, (n + 1) * sizeof(*v->revs));
    for (size_t i = 0; i < n; i++) {
        corral__entry_t *d = deps->items[i];
        const corral_obj_t *o = d->ev->obj;
        if (d->kind != KIND_REV || !eq(isvc_owner(o), se->uid))
            continue;
        rev_t *r = &v->revs[v->nrevs++];
        memset(r, 0, sizeof(*r));
        r->e = d;
        r->name = o->meta.name;
        r->hash = corral_strmap_get(&o->meta.labels, CORRAL__ISVC_HASH_LABEL);
        const corral_val_t *num = corral_val_get(o->raw, "revision");
        r->num = num && num->kind == CORRAL_VAL_INT ? num->u.i : 0;
    }
    for (size_t i = 0; i < n; i++) {
        corral__entry_t *d = deps->items[i];
        const corral_obj_t *o = d->ev->obj;
        if (d->kind != CORRAL_KIND_POD || !eq(isvc_owner(o), se->uid))
            continue;
        const char *ph = o->u.pod->status.phase;
        rpod_t p = {d, o, false, eq(ph, "Failed") || eq(ph, "Succeeded"),
                    d->deleting || o->meta.deletion_us};
        p.ready = !p.failed && !p.gone && pod_ready(o);
        rev_t *r = find_rev(v, corral_strmap_get(&o->meta.labels, CORRAL__ISVC_REV_LABEL));
        if (!r) {
            add_pod(a, &v->orphans, &v->norphans, &v->caporphans, p);
            continue;
        }
        add_pod(a, &r->pods, &r->npods, &r->cap, p);
        if (p.gone)
            continue;
        if (p.failed)
            r->failed++;
        else if (p.ready)
            r->ready++;
        else
            r->pending++;
    }
}

static rev_t *newest(view_t *v)
{
    rev_t *best = NULL;
    for (size_t i = 0; i < v->nrevs; i++) {
        if (!best || v->revs[i].num > best->num)
            best = &v->revs[i];
    }
    return best;
}

/* --- revisions ------------------------------------------------------------------------------- */

static rev_t *create_revision(corral_controller_t *c, corral_arena_t *a, const corral_obj_t *isvc,
                              view_t *v, corral_val_t *tmpl, const char *hash, int64_t num)
{
    char name[300];
    corral__isvc_rev_name(name, sizeof(name), isvc->meta.name, num);
    const corral_kind_info_t *k = corral_kind_get(KIND_REV);
    corral_val_t *cr = corral_val_new(a, CORRAL_VAL_MAP);
    corral_val_set(a, cr, "apiVersion", corral_val_new_str(a, k->api_version));
    corral_val_set(a, cr, "kind", corral_val_new_str(a, k->name));
    corral_val_t *m = corral_val_ensure_map(a, cr, "metadata");
    corral_val_set(a, m, "name", corral_val_new_str(a, name));
    corral_val_set(a, m, "namespace", corral_val_new_str(a, isvc->meta.namespace));
    corral_val_t *l = corral_val_ensure_map(a, m, "labels");
    corral_val_set(a, l, CORRAL__ISVC_LABEL, corral_val_new_str(a, isvc->meta.name));
    corral_val_set(a, l, "component", corral_val_new_str(a, "predictor"));
    corral_val_set(a, l, CORRAL__ISVC_HASH_LABEL, corral_val_new_str(a, hash));
    corral_val_set(a, m, "ownerReferences", owner_refs(a, isvc));
    corral_val_set(a, cr, "revision", corral_val_new_int(a, num));
    corral_val_set(a, cr, "data", tmpl);
    long code =
        send_val(c, "POST", corral__ctl_path(a, k, isvc->meta.namespace, NULL, NULL), cr, true);
    if (code != 201 && code != 200)
        return NULL;
    corral__ctl_log(c, "inferenceservice %s/%s: revision %s (template %s)", isvc->meta.namespace,
                    isvc->meta.name, name, hash);
    corral__entry_t *e = corral__cache_get(&c->cache, KIND_REV, isvc->meta.namespace, name);
    if (!e)
        return NULL;
    rev_t *r = &v->revs[v->nrevs++];
    memset(r, 0, sizeof(*r));
    r->e = e;
    r->name = e->ev->obj->meta.name;
    r->hash = corral_strmap_get(&e->ev->obj->meta.labels, CORRAL__ISVC_HASH_LABEL);
    r->num = num;
    return r;
}

static bool referenced(const corral__isvc_traffic_t *tr, const char *name)
{
    return eq(name, tr->latest_created) || eq(name, tr->latest_ready) || eq(name, tr->rolled) ||
           eq(name, tr->prev_rolled) || corral__isvc_percent(tr, name) >= 0;
}

/* Delete revisions nobody references beyond the newest few; their pods go. */
static void prune_revisions(corral_controller_t *c, const corral_obj_t *isvc, view_t *v,
                            const corral__isvc_traffic_t *tr)
{
    for (size_t i = 0; i < v->nrevs; i++) {
        rev_t *r = &v->revs[i];
        if (referenced(tr, r->name) || r->e->deleting)
            continue;
        size_t newer = 0;
        for (size_t j = 0; j < v->nrevs; j++)
            newer += v->revs[j].num > r->num && !referenced(tr, v->revs[j].name);
        if (newer < CORRAL__ISVC_KEEP_REVISIONS)
            continue;
        if (corral__ctl_delete(c, r->e->ev->obj, -1)) {
            r->e->deleting = true;
            corral__as_forget(c->as, isvc->meta.namespace, r->name);
        }
    }
}

/* --- replicas -------------------------------------------------------------------------------- */

static const char *model_cache(corral_controller_t *c, const char *ns, const char *uri)
{
    for (size_t i = 0; uri && i < c->cache.nslots; i++) {
        corral__entry_t *e = c->cache.slots[i];
        if (!e || e->kind != CORRAL_KIND_LOCALMODELCACHE)
            continue;
        const corral_obj_t *o = e->ev->obj;
        if (o->meta.namespace && *o->meta.namespace && !eq(o->meta.namespace, ns))
            continue;
        if (corral_storage_uri_match(o->u.lmc->source_model_uri, uri))
            return o->meta.name;
    }
    return NULL;
}

static bool create_pod(corral_controller_t *c, corral_arena_t *a, const corral_obj_t *isvc,
                       const rev_t *r)
{
    const corral_val_t *data = corral_val_get(r->e->ev->obj->raw, "data");
    corral_val_t *pod = corral_val_new(a, CORRAL_VAL_MAP);
    corral_val_set(a, pod, "apiVersion", corral_val_new_str(a, "v1"));
    corral_val_set(a, pod, "kind", corral_val_new_str(a, "Pod"));
    corral_val_t *m = corral_val_ensure_map(a, pod, "metadata");
    corral_val_set(a, m, "generateName",
                   corral_val_new_str(a, corral_arena_printf(a, "%s-", r->name)));
    corral_val_set(a, m, "namespace", corral_val_new_str(a, isvc->meta.namespace));
    corral_val_t *l = corral_val_copy(a, corral_val_dig(data, "metadata.labels"));
    if (!l || l->kind != CORRAL_VAL_MAP)
        l = corral_val_new(a, CORRAL_VAL_MAP);
    corral_val_set(a, l, CORRAL__ISVC_REV_LABEL, corral_val_new_str(a, r->name));
    corral_val_set(a, m, "labels", l);
    corral_val_t *an = corral_val_copy(a, corral_val_dig(data, "metadata.annotations"));
    if (!an || an->kind != CORRAL_VAL_MAP)
        an = corral_val_new(a, CORRAL_VAL_MAP);
    const char *cache =
        model_cache(c, isvc->meta.namespace, corral_val_get_str(an, CORRAL__ISVC_URI_ANN));
    if (cache)
        corral_val_set(a, an, CORRAL__ISVC_CACHE_ANN, corral_val_new_str(a, cache));
    corral_val_set(a, m, "annotations", an);
    corral_val_set(a, m, "ownerReferences", owner_refs(a, isvc));
    corral_val_t *spec = corral_val_copy(a, corral_val_get(data, "spec"));
    corral_val_set(a, pod, "spec", spec ? spec : corral_val_new(a, CORRAL_VAL_MAP));
    long code = send_val(
        c, "POST",
        corral__ctl_path(a, corral_kind_get(CORRAL_KIND_POD), isvc->meta.namespace, NULL, NULL),
        pod, true);
    return code == 201 || code == 200;
}

static void delete_pod(corral_controller_t *c, rpod_t *p)
{
    if (p->gone)
        return;
    if (corral__ctl_delete(c, p->o, -1))
        p->e->deleting = true;
    p->gone = true;
}

static const char *scale_reason(int32_t desired, int32_t now)
{
    if (desired == 0)
        return "ScaledToZero";
    return desired > now ? "ScaledUp" : "ScaledDown";
}

/* Bring revision r to want replicas: replace failed ones (with a backoff),
 * create the missing, remove the autoscaler's victims. */
static void scale_rev(corral_controller_t *c, corral_arena_t *a, const corral_obj_t *isvc, rev_t *r,
                      int32_t want, int64_t now)
{
    corral__isvc_state_t *st = state_of(c, isvc->meta.namespace, r->name);
    /* the backoff ends once a replica has stayed Ready a while */
    for (size_t i = 0; !r->failed && i < r->npods; i++) {
        const corral__entry_t *e = r->pods[i].e;
        if (r->pods[i].ready && e->ready_ns && now - e->ready_ns >= BACKOFF_RESET_NS)
            st->fails = 0;
    }
    for (size_t i = 0; i < r->npods; i++) {
        rpod_t *p = &r->pods[i];
        if (p->failed && !p->gone) {
            corral__ctl_log(c, "inferenceservice %s/%s: replica %s %s, replacing it",
                            isvc->meta.namespace, isvc->meta.name, p->o->meta.name,
                            p->o->u.pod->status.phase);
            delete_pod(c, p);
            if (st->fails < 7) /* the backoff stops doubling at 64 s */
                st->fails++;
            int shift = st->fails < 1 ? 0 : st->fails - 1;
            int64_t back = CORRAL_NS_PER_SEC << shift;
            st->create_after_ns = now + (back > BACKOFF_MAX_NS ? BACKOFF_MAX_NS : back);
        }
    }
    int32_t active = r->ready + r->pending;
    if (active < want && now >= st->create_after_ns) {
        for (int32_t i = active; i < want; i++) {
            if (!create_pod(c, a, isvc, r))
                break;
        }
    }
    while (active > want) {
        const char **names = corral_arena_alloc(a, (r->npods + 1) * sizeof(char *));
        bool *ready = corral_arena_alloc(a, r->npods + 1);
        size_t *idx = corral_arena_alloc(a, (r->npods + 1) * sizeof(size_t));
        size_t n = 0;
        for (size_t i = 0; i < r->npods; i++) {
            if (r->pods[i].gone || r->pods[i].failed)
                continue;
            names[n] = r->pods[i].o->meta.name;
            ready[n] = r->pods[i].ready;
            idx[n++] = i;
        }
        if (!n)
            break;
        size_t vi = want == 0 ? 0 : corral__as_victim(c->as, isvc->meta.namespace, names, ready, n);
        if (want == 0) {
            for (size_t i = 0; i < n; i++)
                delete_pod(c, &r->pods[idx[i]]);
            break;
        }
        delete_pod(c, &r->pods[idx[vi < n ? vi : 0]]);
        active--;
    }
}

/* Ask the autoscaler for a revision that serves. */
static int32_t decide(corral_controller_t *c, corral_arena_t *a, const corral_obj_t *isvc, rev_t *r,
                      int64_t port, int64_t now)
{
    const char **pods = corral_arena_alloc(a, (r->npods + 1) * sizeof(char *));
    const char **nodes = corral_arena_alloc(a, (r->npods + 1) * sizeof(char *));
    const char **addrs = corral_arena_alloc(a, (r->npods + 1) * sizeof(char *));
    size_t n = 0;
    for (size_t i = 0; i < r->npods; i++) {
        const rpod_t *p = &r->pods[i];
        if (p->gone || p->failed)
            continue;
        pods[n] = p->o->meta.name;
        nodes[n] = p->o->u.pod->spec.node_name;
        const char *ip = p->o->u.pod->status.pod_ip;
        addrs[n++] = ip && *ip ? corral_arena_printf(a, "%s:%lld", ip, (long long)port) : NULL;
    }
    corral__as_input_t in = {.ns = isvc->meta.namespace,
                             .service = isvc->meta.name,
                             .revision = r->name,
                             .comp = &isvc->u.isvc->predictor,
                             .ready = r->ready,
                             .pending = r->pending,
                             .pods = pods,
                             .pod_nodes = nodes,
                             .pod_addrs = addrs,
                             .npods = n};
    corral__as_decision_t d = {0};
    if (corral__as_decide(c->as, &in, now, &d) != 0)
        return r->ready + r->pending;
    if (d.changed) {
        const char *reason = scale_reason(d.desired, r->ready + r->pending);
        char msg[700];
        snprintf(msg, sizeof(msg), "revision %s: %s", r->name, d.reason);
        post_event(c, a, isvc, "Normal", reason, msg);
        corral__ctl_log(c, "inferenceservice %s/%s: %s %s", isvc->meta.namespace, isvc->meta.name,
                        reason, msg);
    }
    return d.desired;
}

/* Why the newest revision has no Ready replica yet: a pending replica's
 * PodScheduled condition, or a failed one's reason. */
static const char *waiting_reason(corral_arena_t *a, const rev_t *r, bool *failed)
{
    *failed = false;
    const char *why = NULL;
    for (size_t i = 0; r && i < r->npods; i++) {
        const corral_obj_t *o = r->pods[i].o;
        const corral_pod_status_t *s = &o->u.pod->status;
        if (r->pods[i].failed) {
            *failed = true;
            return corral_arena_printf(a, "replica %s %s%s%s", o->meta.name, s->phase,
                                       s->reason ? ": " : "", s->reason ? s->reason : "");
        }
        for (size_t j = 0; !why && j < s->conditions.n; j++) {
            const corral_condition_t *cd = &s->conditions.items[j];
            if (eq(cd->type, "PodScheduled") && eq(cd->status, "False"))
                why = corral_arena_printf(a, "replica %s pending: PodScheduled False (%s): %s",
                                          o->meta.name, cd->reason ? cd->reason : "",
                                          cd->message ? cd->message : "");
        }
    }
    return why;
}

/* --- cold starts ---------------------------------------------------------------------------- */

static double secs(int64_t ns)
{
    return ns > 0 ? (double)ns / 1e9 : 0;
}

/* The agent's "hit 0.004s" / "fetched 3.214s". */
static const char *parse_fetch(const char *ann, double *s)
{
    *s = 0;
    if (!ann)
        return NULL;
    const char *kind = strncmp(ann, "hit ", 4) == 0       ? "hit"
                       : strncmp(ann, "fetched ", 8) == 0 ? "fetched"
                                                          : NULL;
    if (!kind)
        return NULL;
    *s = strtod(strchr(ann, ' ') + 1, NULL);
    if (*s < 0)
        *s = 0;
    return kind;
}

/* Record the cold start of replicas that just became Ready (once each);
 * the last one goes into *out. */
static bool cold_starts(corral_controller_t *c, const corral_obj_t *isvc, view_t *v,
                        corral__isvc_cold_t *out)
{
    bool any = false;
    for (size_t i = 0; i < v->nrevs; i++) {
        rev_t *r = &v->revs[i];
        for (size_t j = 0; j < r->npods; j++) {
            corral__entry_t *e = r->pods[j].e;
            if (!r->pods[j].ready || e->cold_done || !e->ready_ns)
                continue;
            e->cold_done = true;
            const corral_obj_t *o = r->pods[j].o;
            int64_t bound = e->bound_ns ? e->bound_ns : e->ready_ns;
            corral__isvc_cold_t cs = {
                .pod = o->meta.name, .node = o->u.pod->spec.node_name, .revision = r->name};
            cs.fetch = parse_fetch(corral_strmap_get(&o->meta.annotations, CORRAL__ISVC_FETCH_ANN),
                                   &cs.fetch_s);
            cs.schedule_s = secs(bound - e->seen_ns);
            cs.total_s = secs(e->ready_ns - e->seen_ns);
            cs.load_s = secs(e->ready_ns - bound) - cs.fetch_s;
            if (cs.load_s < 0)
                cs.load_s = 0;
            corral__cm_cold_start(c, isvc->meta.namespace, isvc->meta.name, &cs);
            *out = cs;
            any = true;
        }
    }
    return any;
}

/* --- the reconcile --------------------------------------------------------------------------- */

static bool write_status(corral_controller_t *c, corral_arena_t *a, const corral_obj_t *isvc,
                         corral_val_t *status)
{
    corral_val_t *obj = corral_val_copy(a, isvc->raw);
    corral_val_set(a, obj, "status", status);
    const char *path =
        corral__ctl_path(a, isvc->info, isvc->meta.namespace, isvc->meta.name, "status");
    return send_val(c, "PUT", path, obj, true) == 200;
}

static const char *old_str(const corral_val_t *st, const char *key)
{
    return corral_val_get_str(corral_val_dig(st, "components.predictor"), key);
}

/* The runtimes a `model` predictor may resolve to: the service's
 * namespace's ServingRuntimes and every ClusterServingRuntime. */
static const corral_obj_t **runtimes(corral_controller_t *c, corral_arena_t *a, const char *ns,
                                     size_t *n)
{
    const corral_obj_t **out =
        corral_arena_alloc(a, (c->cache.nslots + 1) * sizeof(const corral_obj_t *));
    *n = 0;
    for (size_t i = 0; i < c->cache.nslots; i++) {
        const corral__entry_t *e = c->cache.slots[i];
        if (e && (e->kind == CORRAL_KIND_CLUSTERSERVINGRUNTIME ||
                  (e->kind == CORRAL_KIND_SERVINGRUNTIME && eq(e->ev->obj->meta.namespace, ns))))
            out[(*n)++] = e->ev->obj;
    }
    return out;
}

/* The replicas' template and the model's storage URI, or NULL with why. */
static corral_val_t *resolve(corral_controller_t *c, corral_arena_t *a, const corral_obj_t *isvc,
                             const char **uri, const char **why, const char **reason)
{
    const corral_isvc_component_t *p = &isvc->u.isvc->predictor;
    *uri = p->storage_uri;
    *why = NULL;
    /* KServe's custom containers name their model in env STORAGE_URI */
    for (size_t i = 0; !*uri && p->ncontainers && i < p->containers[0].nenv; i++) {
        if (eq(p->containers[0].env[i].name, "STORAGE_URI"))
            *uri = p->containers[0].env[i].value;
    }
    size_t n = 0;
    const corral_obj_t **rts = p->has_model ? runtimes(c, a, isvc->meta.namespace, &n) : NULL;
    char err[512] = "";
    corral_val_t *tmpl = NULL;
    int rc = corral_isvc_resolve(a, isvc, rts, n, &tmpl, err, sizeof(err));
    if (rc != 0 || !tmpl) {
        *why = corral_arena_strdup(a, err[0] ? err : "the predictor cannot be resolved");
        *reason = !p->has_model         ? "InvalidPredictorSpec"
                  : rc == CORRAL_ENOENT ? "RuntimeNotRecognized"
                                        : "NoSupportingRuntime";
        return NULL;
    }
    return tmpl;
}

static void reconcile_one(corral_controller_t *c, corral__entry_t *se)
{
    corral_arena_t a;
    corral_arena_init(&a);
    const corral_obj_t *isvc = se->ev->obj;
    const char *ns = isvc->meta.namespace, *name = isvc->meta.name;
    if (isvc->meta.deletion_us || !isvc->u.isvc->predictor.present) {
        corral_arena_fini(&a);
        return;
    }
    int64_t now = corral__mono_ns();
    const corral_val_t *old = corral_val_get(isvc->raw, "status");
    view_t v;
    build_view(c, &a, se, &v);
    const char *uri = NULL, *why = NULL, *reason = NULL;
    corral_val_t *tmpl = resolve(c, &a, isvc, &uri, &why, &reason);
    int64_t port = CORRAL__ISVC_DEFAULT_PORT;
    if (tmpl) {
        corral__isvc_template(&a, isvc, tmpl, uri);
        port = corral__isvc_port(corral_val_get(tmpl, "spec"));
        char hash[17];
        corral__isvc_hash(tmpl, hash);
        rev_t *last = newest(&v);
        if (!last || !eq(last->hash, hash))
            create_revision(c, &a, isvc, &v, tmpl, hash, last ? last->num + 1 : 1);
        ensure_queue(c, &a, corral__isvc_queue(isvc));
    }
    /* traffic */
    corral__isvc_rev_t *rs = corral_arena_alloc(&a, (v.nrevs + 1) * sizeof(*rs));
    size_t nrs = 0;
    for (size_t i = 0; i < v.nrevs; i++) {
        if (!v.revs[i].e->deleting)
            rs[nrs++] = (corral__isvc_rev_t){v.revs[i].name, v.revs[i].num, v.revs[i].ready > 0};
    }
    corral__isvc_traffic_in_t tin = {rs,
                                     nrs,
                                     old_str(old, "latestReadyRevision"),
                                     old_str(old, "latestRolledoutRevision"),
                                     old_str(old, "previousRolledoutRevision"),
                                     isvc->u.isvc->predictor.canary_traffic_percent};
    corral__isvc_traffic_t tr;
    corral__isvc_traffic(&tin, &tr);
    if (tr.promoted)
        corral__ctl_log(c, "inferenceservice %s/%s: %s rolled out", ns, name, tr.rolled);
    /* replicas */
    const corral_isvc_component_t *pc = &isvc->u.isvc->predictor;
    int32_t min = pc->min_replicas.set ? pc->min_replicas.v : 1;
    int32_t max = pc->max_replicas.set ? pc->max_replicas.v : 0;
    rev_t *ready_rev = find_rev(&v, tr.latest_ready);
    for (size_t i = 0; i < v.nrevs; i++) {
        rev_t *r = &v.revs[i];
        int32_t pct = corral__isvc_percent(&tr, r->name);
        bool serving = !r->e->deleting && (pct > 0 || eq(r->name, tr.rolled));
        /* listed at 0% (a rolled-back canary): reachable by its tag, so it
         * scales on what the router holds for it, from zero */
        bool tagged = !r->e->deleting && !serving && pct == 0;
        bool proving = !r->e->deleting && eq(r->name, tr.latest_created) &&
                       (!ready_rev || r->num > ready_rev->num);
        int32_t desired = serving || tagged ? decide(c, &a, isvc, r, port, now) : 0;
        int32_t want =
            corral__isvc_clamp(desired, tagged ? 0 : min, max, serving || tagged, proving);
        if (!serving && !tagged && !proving && r->ready + r->pending == 0)
            corral__as_forget(c->as, ns, r->name);
        scale_rev(c, &a, isvc, r, want, now);
    }
    for (size_t i = 0; i < v.norphans; i++)
        delete_pod(c, &v.orphans[i]);
    prune_revisions(c, isvc, &v, &tr);
    /* status */
    bool failed = false;
    rev_t *latest = find_rev(&v, tr.latest_created);
    const char *waiting =
        latest && latest != ready_rev ? waiting_reason(&a, latest, &failed) : NULL;
    int32_t ready = 0, nfailed = 0;
    for (size_t i = 0; i < v.nrevs; i++) {
        ready += v.revs[i].ready;
        nfailed += v.revs[i].failed;
    }
    corral__isvc_cold_t cold;
    bool have_cold = cold_starts(c, isvc, &v, &cold);
    corral__isvc_status_in_t sin = {.ns = ns,
                                    .name = name,
                                    .ingress_domain = c->o.ingress_domain,
                                    .router_url = c->o.router_url,
                                    .generation = isvc->meta.generation,
                                    .tr = &tr,
                                    .failure = tmpl ? NULL : why,
                                    .failure_reason = reason,
                                    .ready = ready,
                                    .failed = nfailed,
                                    .waiting = waiting,
                                    .latest_failed = failed,
                                    .cold = have_cold ? &cold : NULL,
                                    .old = old,
                                    .now_us = corral__wall_us()};
    corral_val_t *status = corral__isvc_status(&a, &sin);
    /* a write that fails is tried again at the next tick */
    if (!corral_val_equal(status, old))
        write_status(c, &a, isvc, status);
    corral_arena_fini(&a);
}

void corral__isvc_reconcile(corral_controller_t *c)
{
    if (atomic_exchange(&c->isvc_poke, false)) {
        for (size_t i = 0; i < c->cache.nslots; i++) {
            corral__entry_t *e = c->cache.slots[i];
            if (e && e->kind == CORRAL_KIND_ISVC)
                mark(c, e);
        }
    }
    while (c->isvc_dirty.n) {
        corral__entry_t *e = c->isvc_dirty.items[--c->isvc_dirty.n];
        e->isvc_dirty = false;
        int64_t t0 = corral__mono_ns();
        reconcile_one(c, e);
        corral__cm_reconciled(c, "inferenceservice", corral__mono_ns() - t0);
    }
}

void corral__isvc_tick(corral_controller_t *c)
{
    atomic_store(&c->isvc_poke, true);
    corral__isvc_reconcile(c);
}

void corral__isvc_forget(corral_controller_t *c, corral__entry_t *e)
{
    for (size_t i = 0; i < c->isvc_dirty.n; i++) {
        if (c->isvc_dirty.items[i] == e)
            c->isvc_dirty.items[i--] = c->isvc_dirty.items[--c->isvc_dirty.n];
    }
}

int corral__isvc_start(corral_controller_t *c, char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    if (!c->o.ingress_domain || !*c->o.ingress_domain)
        c->o.ingress_domain = "example.com";
    if (!c->o.router_url || !*c->o.router_url)
        c->o.router_url = "http://127.0.0.1:8080";
    atomic_init(&c->isvc_poke, false);
    return 0;
}

void corral__isvc_poke(corral_controller_t *c)
{
    atomic_store(&c->isvc_poke, true);
    corral_controller_wake(c);
}

void corral__isvc_stop(corral_controller_t *c)
{
    for (size_t i = 0; i < c->nisvc_state; i++)
        corral_free(c->isvc_state[i].key);
    corral_free(c->isvc_state);
    corral_free(c->isvc_dirty.items);
}
