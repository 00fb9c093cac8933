/*
 * Informers (see include/corral/informer.h): one thread per watched
 * resource that LISTs, then WATCHes from the list's resourceVersion, and
 * turns what it sees into typed events on a queue.
 *
 * The informer remembers the resourceVersion of every object it has
 * delivered (and nothing else: the consumer keeps the objects), so that a
 * relist can be reconciled into ADDED / MODIFIED / DELETED events and the
 * consumer never sees a gap. Memory follows the number of live objects:
 * an entry goes when its object is deleted.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "corral/hmap.h"
#include "corral/informer.h"
#include "corral/json.h"

/* --- events ----------------------------------------------------------------------------- */

static corral_watch_ev_t *ev_new(corral_watch_type_t type, corral_kind_t kind)
{
    corral_watch_ev_t *ev = corral_calloc(1, sizeof(*ev));
    corral_arena_init(&ev->arena);
    ev->type = type;
    ev->kind = kind;
    ev->ns = "";
    ev->name = "";
    ev->rv = "";
    return ev;
}

void corral_watch_ev_free(corral_watch_ev_t *ev)
{
    if (!ev)
        return;
    corral_arena_fini(&ev->arena);
    corral_free(ev);
}

void corral_watch_ev_free_list(corral_watch_ev_t *ev)
{
    while (ev) {
        corral_watch_ev_t *next = ev->next;
        corral_watch_ev_free(ev);
        ev = next;
    }
}

/* --- the queue ---------------------------------------------------------------------------- */

struct corral_evq {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    corral_watch_ev_t *head, *tail;
    size_t len;
    bool woken;
};

corral_evq_t *corral_evq_new(void)
{
    corral_evq_t *q = corral_calloc(1, sizeof(*q));
    pthread_mutex_init(&q->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&q->cv, &ca);
    pthread_condattr_destroy(&ca);
    return q;
}

void corral_evq_free(corral_evq_t *q)
{
    if (!q)
        return;
    corral_watch_ev_free_list(q->head);
    pthread_mutex_destroy(&q->mu);
    pthread_cond_destroy(&q->cv);
    corral_free(q);
}

void corral_evq_push(corral_evq_t *q, corral_watch_ev_t *ev)
{
    ev->next = NULL;
    pthread_mutex_lock(&q->mu);
    if (q->tail)
        q->tail->next = ev;
    else
        q->head = ev;
    q->tail = ev;
    q->len++;
    pthread_cond_signal(&q->cv);
    pthread_mutex_unlock(&q->mu);
}

static void deadline_after(struct timespec *ts, int ms)
{
    clock_gettime(CLOCK_MONOTONIC, ts);
    ts->tv_sec += ms / 1000;
    ts->tv_nsec += (long)(ms % 1000) * 1000000L;
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}

corral_watch_ev_t *corral_evq_take(corral_evq_t *q, int timeout_ms)
{
    struct timespec until;
    if (timeout_ms > 0)
        deadline_after(&until, timeout_ms);
    pthread_mutex_lock(&q->mu);
    while (!q->head && !q->woken && timeout_ms != 0) {
        int rc = timeout_ms < 0 ? pthread_cond_wait(&q->cv, &q->mu)
                                : pthread_cond_timedwait(&q->cv, &q->mu, &until);
        if (rc == ETIMEDOUT)
            break;
    }
    corral_watch_ev_t *list = q->head;
    q->head = q->tail = NULL;
    q->len = 0;
    q->woken = false;
    pthread_mutex_unlock(&q->mu);
    return list;
}

void corral_evq_wake(corral_evq_t *q)
{
    pthread_mutex_lock(&q->mu);
    q->woken = true;
    pthread_cond_broadcast(&q->cv);
    pthread_mutex_unlock(&q->mu);
}

size_t corral_evq_len(corral_evq_t *q)
{
    pthread_mutex_lock(&q->mu);
    size_t n = q->len;
    pthread_mutex_unlock(&q->mu);
    return n;
}

/* --- decoding ----------------------------------------------------------------------------- */

int corral_obj_from_json(corral_arena_t *a, const char *text, size_t len, corral_obj_t **out,
                         char *err, size_t errlen)
{
    corral_val_t *v = NULL;
    corral_json_err_t je;
    *out = NULL;
    if (corral_json_parse(a, text, len, &v, &je) != 0) {
        snprintf(err, errlen, "invalid JSON at %d:%d: %s", je.line, je.col, je.msg);
        return CORRAL_EINVAL;
    }
    if (!v || v->kind != CORRAL_VAL_MAP) {
        snprintf(err, errlen, "not a JSON object");
        return CORRAL_EINVAL;
    }
    corral_diag_t d;
    corral_diag_init(&d);
    int rc = corral_obj_decode(a, v, NULL, &d, out);
    if (rc != 0 || !*out) {
        corral_buf_t b;
        corral_buf_init(&b);
        if (d.n)
            corral_diag_format(&d.items[0], &b);
        snprintf(err, errlen, "%s", b.len ? b.p : "not an object Corral knows");
        corral_buf_fini(&b);
        *out = NULL;
        rc = CORRAL_EINVAL;
    }
    corral_diag_fini(&d);
    return rc;
}

/* --- the informer ------------------------------------------------------------------------- */

/* What was delivered for one object: its key and resourceVersion. */
typedef struct entry {
    char *key; /* "ns/name" or "name"; NULL when the slot is free */
    char *rv;
    uint64_t seen; /* the list generation that last saw it */
} entry_t;

struct corral_informer {
    corral_informer_opts_t o;
    char *ns, *lsel, *fsel, *label;
    const corral_kind_info_t *info;
    corral_client_config_t cfg;
    corral_evq_t *q;
    pthread_t thread;
    pthread_mutex_t mu; /* for the stop wait */
    pthread_cond_t cv;
    volatile int stop;
    atomic_bool synced;
    atomic_uint_fast64_t lists;
    /* delivered objects */
    corral_hmap_t index;
    entry_t *entries;
    size_t nentries, cap;
    uint32_t *free_slots;
    size_t nfree, free_cap;
    uint64_t gen;
    char rv[64]; /* where the next watch starts */
};

static void key_of(const char *ns, const char *name, char *buf, size_t len)
{
    if (ns && *ns)
        snprintf(buf, len, "%s/%s", ns, name);
    else
        snprintf(buf, len, "%s", name);
}

static entry_t *entry_find(corral_informer_t *inf, const char *key)
{
    uint32_t i;
    return corral_hmap_get(&inf->index, key, &i) ? &inf->entries[i] : NULL;
}

static entry_t *entry_add(corral_informer_t *inf, const char *key)
{
    uint32_t i;
    if (inf->nfree) {
        i = inf->free_slots[--inf->nfree];
    } else {
        corral_grow((void **)&inf->entries, &inf->cap, inf->nentries + 1, sizeof(entry_t));
        i = (uint32_t)inf->nentries++;
    }
    entry_t *e = inf->entries ? &inf->entries[i] : NULL;
    if (!e) /* cannot happen: corral_grow aborts rather than fail */
        abort();
    e->key = corral_strdup(key);
    e->rv = NULL;
    corral_hmap_put(&inf->index, e->key, i);
    return e;
}

static void entry_del(corral_informer_t *inf, entry_t *e)
{
    uint32_t i = (uint32_t)(e - inf->entries);
    corral_hmap_del(&inf->index, e->key);
    corral_free(e->key);
    corral_free(e->rv);
    e->key = e->rv = NULL;
    corral_grow((void **)&inf->free_slots, &inf->free_cap, inf->nfree + 1, sizeof(uint32_t));
    inf->free_slots[inf->nfree++] = i;
}

static void entry_set_rv(entry_t *e, const char *rv)
{
    corral_free(e->rv);
    e->rv = corral_strdup(rv ? rv : "");
}

/* Sleep up to ms, waking early on stop. Returns true when stopping. */
static bool nap(corral_informer_t *inf, int ms)
{
    struct timespec until;
    deadline_after(&until, ms);
    pthread_mutex_lock(&inf->mu);
    while (!inf->stop) {
        if (pthread_cond_timedwait(&inf->cv, &inf->mu, &until) == ETIMEDOUT)
            break;
    }
    pthread_mutex_unlock(&inf->mu);
    return inf->stop != 0;
}

static void append_escaped(corral_buf_t *b, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
            *p == '-' || *p == '_' || *p == '.' || *p == '~') {
            corral_buf_putc(b, (char)*p);
        } else {
            corral_buf_putc(b, '%');
            corral_buf_putc(b, hex[*p >> 4]);
            corral_buf_putc(b, hex[*p & 15]);
        }
    }
}

/* The collection path with the selectors; more query follows with '&'. */
static void base_path(const corral_informer_t *inf, corral_buf_t *b)
{
    const corral_kind_info_t *k = inf->info;
    if (k->group[0])
        corral_buf_printf(b, "/apis/%s/%s", k->group, k->version);
    else
        corral_buf_printf(b, "/api/%s", k->version);
    if (k->namespaced && inf->ns)
        corral_buf_printf(b, "/namespaces/%s", inf->ns);
    corral_buf_printf(b, "/%s?", k->plural);
    if (inf->lsel) {
        corral_buf_puts(b, "labelSelector=");
        append_escaped(b, inf->lsel);
        corral_buf_putc(b, '&');
    }
    if (inf->fsel) {
        corral_buf_puts(b, "fieldSelector=");
        append_escaped(b, inf->fsel);
        corral_buf_putc(b, '&');
    }
}

/* Decode one object (a tree in ev->arena) into ev; false when it is not
 * usable (logged). */
static bool fill_event(corral_informer_t *inf, corral_watch_ev_t *ev, corral_val_t *obj)
{
    if (!corral_val_get(obj, "apiVersion"))
        corral_val_set(&ev->arena, obj, "apiVersion",
                       corral_val_new_str(&ev->arena, inf->info->api_version));
    if (!corral_val_get(obj, "kind"))
        corral_val_set(&ev->arena, obj, "kind", corral_val_new_str(&ev->arena, inf->info->name));
    corral_diag_t d;
    corral_diag_init(&d);
    int rc = corral_obj_decode(&ev->arena, obj, NULL, &d, &ev->obj);
    if (rc != 0 || !ev->obj) {
        corral_buf_t b;
        corral_buf_init(&b);
        if (d.n)
            corral_diag_format(&d.items[0], &b);
        const char *name = corral_val_get_str(corral_val_get(obj, "metadata"), "name");
        fprintf(stderr, "informer %s: skipping %s: %s\n", inf->label, name ? name : "?",
                b.len ? b.p : "cannot decode");
        corral_buf_fini(&b);
        corral_diag_fini(&d);
        ev->obj = NULL;
        return false;
    }
    corral_diag_fini(&d);
    ev->ns = ev->obj->meta.namespace ? ev->obj->meta.namespace : "";
    ev->name = ev->obj->meta.name ? ev->obj->meta.name : "";
    ev->rv = ev->obj->meta.resource_version ? ev->obj->meta.resource_version : "";
    return true;
}

/* Deliver an object seen by a list or a watch ADDED/MODIFIED: ADDED when
 * new, MODIFIED when its resourceVersion differs, nothing when equal. */
static void deliver_seen(corral_informer_t *inf, corral_watch_ev_t *ev)
{
    char key[512];
    key_of(ev->ns, ev->name, key, sizeof(key));
    entry_t *e = entry_find(inf, key);
    if (e && e->rv && strcmp(e->rv, ev->rv) == 0) {
        e->seen = inf->gen;
        corral_watch_ev_free(ev);
        return;
    }
    ev->type = e ? CORRAL_WATCH_MODIFIED : CORRAL_WATCH_ADDED;
    if (!e)
        e = entry_add(inf, key);
    entry_set_rv(e, ev->rv);
    e->seen = inf->gen;
    corral_evq_push(inf->q, ev);
}

static void deliver_deleted(corral_informer_t *inf, corral_watch_ev_t *ev)
{
    char key[512];
    key_of(ev->ns, ev->name, key, sizeof(key));
    entry_t *e = entry_find(inf, key);
    if (e)
        entry_del(inf, e);
    ev->type = CORRAL_WATCH_DELETED;
    corral_evq_push(inf->q, ev);
}

/* After a complete list: whatever it did not show is gone. */
static void reconcile_after_list(corral_informer_t *inf)
{
    for (size_t i = 0; i < inf->nentries; i++) {
        entry_t *e = &inf->entries[i];
        if (!e->key || e->seen == inf->gen)
            continue;
        corral_watch_ev_t *ev = ev_new(CORRAL_WATCH_DELETED, inf->info->kind);
        const char *slash = strchr(e->key, '/');
        if (slash && inf->info->namespaced) {
            ev->ns = corral_arena_strndup(&ev->arena, e->key, (size_t)(slash - e->key));
            ev->name = corral_arena_strdup(&ev->arena, slash + 1);
        } else {
            ev->name = corral_arena_strdup(&ev->arena, e->key);
        }
        ev->rv = corral_arena_strdup(&ev->arena, e->rv ? e->rv : "");
        entry_del(inf, e);
        corral_evq_push(inf->q, ev);
    }
    /* The flag first: a consumer that sees SYNCED and asks
     * corral_informer_synced must get true. */
    atomic_fetch_add(&inf->lists, 1);
    atomic_store(&inf->synced, true);
    corral_evq_push(inf->q, ev_new(CORRAL_WATCH_SYNCED, inf->info->kind));
}

/* One page of a LIST: deliver its items; set cont to the continue token. */
static int list_page(corral_informer_t *inf, corral_client_t *c, const char *cont_in, char *cont,
                     size_t contlen)
{
    corral_buf_t path;
    corral_buf_init(&path);
    base_path(inf, &path);
    corral_buf_printf(&path, "limit=%d", inf->o.page_size > 0 ? inf->o.page_size : 500);
    if (cont_in && *cont_in) {
        corral_buf_puts(&path, "&continue=");
        append_escaped(&path, cont_in);
    }
    corral_client_resp_t r;
    corral_client_resp_init(&r);
    int rc = corral_client_request(c, "GET", path.p, NULL, NULL, 0, &r);
    corral_buf_fini(&path);
    cont[0] = '\0';
    if (rc != 0 || r.code != 200) {
        if (!inf->stop) {
            char reason[64], msg[256];
            corral_client_error(&r, reason, sizeof(reason), msg, sizeof(msg));
            fprintf(stderr, "informer %s: list failed (%ld): %s\n", inf->label, r.code, msg);
        }
        corral_client_resp_fini(&r);
        return rc ? rc : CORRAL_EIO;
    }
    corral_arena_t a;
    corral_arena_init(&a);
    corral_val_t *list = NULL;
    rc = corral_json_parse(&a, r.body.p, r.body.len, &list, NULL);
    corral_val_t *items = rc == 0 ? corral_val_get(list, "items") : NULL;
    corral_val_t *meta = rc == 0 ? corral_val_get(list, "metadata") : NULL;
    const char *rv = corral_val_get_str(meta, "resourceVersion");
    const char *next = corral_val_get_str(meta, "continue");
    if (rc != 0 || !rv) {
        fprintf(stderr, "informer %s: list answer is not a list\n", inf->label);
        rc = CORRAL_EIO;
    } else {
        snprintf(inf->rv, sizeof(inf->rv), "%s", rv);
        snprintf(cont, contlen, "%s", next ? next : "");
        for (size_t i = 0; items && items->kind == CORRAL_VAL_SEQ && i < items->n; i++) {
            corral_watch_ev_t *ev = ev_new(CORRAL_WATCH_ADDED, inf->info->kind);
            corral_val_t *obj = corral_val_copy(&ev->arena, items->items[i]);
            if (obj && obj->kind == CORRAL_VAL_MAP && fill_event(inf, ev, obj))
                deliver_seen(inf, ev);
            else
                corral_watch_ev_free(ev);
        }
    }
    corral_arena_fini(&a);
    corral_client_resp_fini(&r);
    return rc;
}

static int list_all(corral_informer_t *inf, corral_client_t *c)
{
    char cont[1024] = "", next[1024];
    inf->gen++;
    do {
        int rc = list_page(inf, c, cont, next, sizeof(next));
        if (rc != 0)
            return rc;
        memcpy(cont, next, sizeof(cont));
    } while (cont[0] && !inf->stop);
    if (inf->stop)
        return CORRAL_EAGAIN;
    reconcile_after_list(inf);
    return 0;
}

typedef struct watch_state {
    corral_informer_t *inf;
    bool gone; /* 410: relist */
    bool got_any;
} watch_state_t;

static int watch_line(void *ctx, const char *text, size_t len)
{
    watch_state_t *w = ctx;
    corral_informer_t *inf = w->inf;
    if (inf->stop)
        return 1;
    if (len == 0)
        return 0;
    corral_watch_ev_t *ev = ev_new(CORRAL_WATCH_ADDED, inf->info->kind);
    corral_val_t *v = NULL;
    if (corral_json_parse(&ev->arena, text, len, &v, NULL) != 0 || !v) {
        corral_watch_ev_free(ev);
        return 0;
    }
    const char *type = corral_val_get_str(v, "type");
    corral_val_t *obj = corral_val_get(v, "object");
    if (!type || !obj || obj->kind != CORRAL_VAL_MAP) {
        corral_watch_ev_free(ev);
        return 0;
    }
    w->got_any = true;
    if (strcmp(type, "ERROR") == 0) {
        corral_val_t *code = corral_val_get(obj, "code");
        w->gone = code && code->kind == CORRAL_VAL_INT && code->u.i == 410;
        if (!w->gone)
            fprintf(stderr, "informer %s: watch error: %s\n", inf->label,
                    corral_val_get_str(obj, "message") ? corral_val_get_str(obj, "message") : "?");
        corral_watch_ev_free(ev);
        return 1;
    }
    const char *rv = corral_val_get_str(corral_val_get(obj, "metadata"), "resourceVersion");
    if (rv && *rv)
        snprintf(inf->rv, sizeof(inf->rv), "%s", rv);
    if (strcmp(type, "BOOKMARK") == 0) {
        corral_watch_ev_free(ev);
        return 0;
    }
    if (!fill_event(inf, ev, obj)) {
        corral_watch_ev_free(ev);
        return 0;
    }
    if (strcmp(type, "DELETED") == 0)
        deliver_deleted(inf, ev);
    else
        deliver_seen(inf, ev);
    return 0;
}

/* One WATCH from inf->rv. Returns 0 when it ended normally (resume),
 * CORRAL_ENOENT when the version is gone (relist), else an error. */
static int watch_once(corral_informer_t *inf, corral_client_t *c)
{
    corral_buf_t path;
    corral_buf_init(&path);
    base_path(inf, &path);
    int t = inf->o.watch_timeout_s > 0 ? inf->o.watch_timeout_s
                                       : 240 + (int)(((uintptr_t)inf >> 4) % 120);
    corral_buf_printf(&path, "watch=1&allowWatchBookmarks=true&timeoutSeconds=%d", t);
    corral_buf_puts(&path, "&resourceVersion=");
    append_escaped(&path, inf->rv);
    watch_state_t w = {inf, false, false};
    corral_client_resp_t r;
    corral_client_resp_init(&r);
    int rc = corral_client_stream(c, path.p, watch_line, &w, &r);
    corral_buf_fini(&path);
    if (inf->stop) {
        rc = CORRAL_EAGAIN;
    } else if (w.gone || r.code == 410) {
        rc = CORRAL_ENOENT;
    } else if (rc != 0 || r.code != 200) {
        char reason[64], msg[256];
        corral_client_error(&r, reason, sizeof(reason), msg, sizeof(msg));
        fprintf(stderr, "informer %s: watch failed (%ld): %s\n", inf->label, r.code, msg);
        rc = CORRAL_EIO;
    }
    corral_client_resp_fini(&r);
    return rc;
}

static void *informer_main(void *arg)
{
    corral_informer_t *inf = arg;
    corral_client_t *c = corral_client_new(&inf->cfg);
    if (!c)
        return NULL;
    corral_client_set_abort(c, &inf->stop);
    int backoff = 0, cap = inf->o.backoff_max_ms > 0 ? inf->o.backoff_max_ms : 10000;
    bool need_list = true;
    while (!inf->stop) {
        int rc = need_list ? list_all(inf, c) : watch_once(inf, c);
        if (inf->stop)
            break;
        if (rc == 0) {
            if (need_list)
                backoff = 0;
            need_list = false;
            continue;
        }
        need_list = true;
        if (rc == CORRAL_ENOENT && backoff == 0) {
            backoff = 1; /* relist at once the first time; back off if it repeats */
            continue;
        }
        backoff = backoff < 100 ? 100 : backoff * 2;
        if (backoff > cap)
            backoff = cap;
        if (nap(inf, backoff))
            break;
    }
    corral_client_free(c);
    return NULL;
}

static char *dup_opt(const char *s)
{
    return s && *s ? corral_strdup(s) : NULL;
}

static void informer_free(corral_informer_t *inf)
{
    for (size_t i = 0; i < inf->nentries; i++) {
        corral_free(inf->entries[i].key);
        corral_free(inf->entries[i].rv);
    }
    corral_free(inf->entries);
    corral_free(inf->free_slots);
    corral_hmap_fini(&inf->index);
    corral_client_config_fini(&inf->cfg);
    corral_free(inf->ns);
    corral_free(inf->lsel);
    corral_free(inf->fsel);
    corral_free(inf->label);
    pthread_mutex_destroy(&inf->mu);
    pthread_cond_destroy(&inf->cv);
    corral_free(inf);
}

int corral_informer_start(const corral_client_config_t *cfg, const corral_informer_opts_t *o,
                          corral_evq_t *q, corral_informer_t **out, char *err, size_t errlen)
{
    *out = NULL;
    if ((unsigned)o->kind >= CORRAL_KIND_COUNT) {
        snprintf(err, errlen, "informer: unknown kind %d", (int)o->kind);
        return CORRAL_EINVAL;
    }
    corral_informer_t *inf = corral_calloc(1, sizeof(*inf));
    inf->o = *o;
    inf->info = corral_kind_get(o->kind);
    inf->ns = dup_opt(o->ns);
    inf->lsel = dup_opt(o->label_selector);
    inf->fsel = dup_opt(o->field_selector);
    inf->label = corral_strdup(o->name ? o->name : inf->info->plural);
    inf->o.ns = inf->o.label_selector = inf->o.field_selector = inf->o.name = NULL;
    inf->q = q;
    corral_client_config_copy(&inf->cfg, cfg);
    corral_hmap_init(&inf->index);
    pthread_mutex_init(&inf->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&inf->cv, &ca);
    pthread_condattr_destroy(&ca);
    atomic_init(&inf->synced, false);
    atomic_init(&inf->lists, 0);
    if (pthread_create(&inf->thread, NULL, informer_main, inf) != 0) {
        snprintf(err, errlen, "informer %s: cannot start a thread", inf->label);
        informer_free(inf);
        return CORRAL_EIO;
    }
    *out = inf;
    return 0;
}

void corral_informer_cancel(corral_informer_t *inf)
{
    if (!inf)
        return;
    pthread_mutex_lock(&inf->mu);
    inf->stop = 1;
    pthread_cond_broadcast(&inf->cv);
    pthread_mutex_unlock(&inf->mu);
}

void corral_informer_stop(corral_informer_t *inf)
{
    if (!inf)
        return;
    corral_informer_cancel(inf);
    pthread_join(inf->thread, NULL);
    informer_free(inf);
}

bool corral_informer_synced(const corral_informer_t *inf)
{
    return atomic_load(&((corral_informer_t *)inf)->synced);
}

uint64_t corral_informer_lists(const corral_informer_t *inf)
{
    return atomic_load(&((corral_informer_t *)inf)->lists);
}
