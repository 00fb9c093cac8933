/*
 * The ring of recent watch events and the events themselves. An event is one
 * allocation holding its strings (the object's JSON, its selector attributes
 * and, for MODIFIED, the previous JSON), reference-counted so that the ring
 * can drop it while a loop thread is still writing it to a socket. The ring
 * keeps at most cap events and max_bytes of JSON; watchers that fall further
 * behind than that read the on-disk log, or are told 410 Expired.
 */
#include <string.h>

#include "apiserver/store_int.h"

void corral_store_event_ref(corral_store_event_t *ev)
{
    __atomic_add_fetch(&ev->refs, 1, __ATOMIC_RELAXED);
}

void corral_store_event_unref(corral_store_event_t *ev)
{
    if (ev && __atomic_sub_fetch(&ev->refs, 1, __ATOMIC_ACQ_REL) == 0)
        corral_free(ev);
}

/* Copy s (n bytes) to *p, NUL-terminate, advance *p; returns the copy. */
static const char *put(char **p, const char *s, size_t n)
{
    char *d = *p;
    if (n)
        memcpy(d, s, n);
    d[n] = '\0';
    *p = d + n + 1;
    return d;
}

corral_store_event_t *corral__event_new(const corral_store_op_t *op, corral_store_ev_type_t type,
                                        int64_t rev, const char *json, size_t json_len)
{
    size_t lres = strlen(op->resource), lns = strlen(op->ns), lname = strlen(op->name);
    size_t prev_len = type == CORRAL_EV_MODIFIED && op->prev_json ? op->prev_len : 0;
    size_t prev_attrs_len = type == CORRAL_EV_MODIFIED && op->prev_attrs ? op->prev_attrs_len : 0;
    size_t total = sizeof(corral_store_event_t) + lres + lns + lname + json_len + op->attrs_len +
                   prev_len + prev_attrs_len + 7;
    corral_store_event_t *ev = corral_malloc(total);
    memset(ev, 0, sizeof(*ev));
    char *p = (char *)(ev + 1);
    ev->rev = rev;
    ev->type = type;
    ev->resource = put(&p, op->resource, lres);
    ev->ns = put(&p, op->ns, lns);
    ev->name = put(&p, op->name, lname);
    ev->json = put(&p, json, json_len);
    ev->json_len = json_len;
    ev->attrs = put(&p, op->attrs ? op->attrs : "", op->attrs_len);
    ev->attrs_len = op->attrs_len;
    if (type == CORRAL_EV_MODIFIED && op->prev_json) {
        ev->prev_json = put(&p, op->prev_json, prev_len);
        ev->prev_len = prev_len;
    } else {
        put(&p, "", 0);
    }
    if (type == CORRAL_EV_MODIFIED && op->prev_attrs) {
        ev->prev_attrs = put(&p, op->prev_attrs, prev_attrs_len);
        ev->prev_attrs_len = prev_attrs_len;
    } else {
        put(&p, "", 0);
    }
    ev->refs = 1;
    return ev;
}

void corral__ring_init(corral__ring_t *r, size_t cap, size_t max_bytes, int64_t next)
{
    pthread_mutex_init(&r->mu, NULL);
    r->cap = cap ? cap : 1;
    r->ev = corral_calloc(r->cap, sizeof(corral_store_event_t *));
    r->first = r->next = next;
    r->bytes = 0;
    r->max_bytes = max_bytes;
}

void corral__ring_fini(corral__ring_t *r)
{
    for (int64_t rev = r->first; rev < r->next; rev++)
        corral_store_event_unref(r->ev[rev % (int64_t)r->cap]);
    corral_free(r->ev);
    r->ev = NULL;
    pthread_mutex_destroy(&r->mu);
}

static size_t ev_bytes(const corral_store_event_t *ev)
{
    return ev->json_len + ev->prev_len + ev->attrs_len + ev->prev_attrs_len;
}

/* Takes over the caller's reference. Events arrive in revision order with
 * no gaps (one revision per write). */
void corral__ring_push(corral__ring_t *r, corral_store_event_t *ev)
{
    const int64_t cap = (int64_t)r->cap;
    if (cap <= 0) { /* not initialised: nothing can be kept */
        corral_store_event_unref(ev);
        return;
    }
    pthread_mutex_lock(&r->mu);
    if (r->next != ev->rev) {
        /* A gap cannot happen (revisions are consecutive); if it did, the
         * ring restarts so that no watcher is served a hole silently. */
        for (int64_t rev = r->first; rev < r->next; rev++)
            corral_store_event_unref(r->ev[rev % cap]);
        r->first = r->next = ev->rev;
        r->bytes = 0;
    }
    while (r->next - r->first >= cap ||
           (r->next > r->first && r->bytes + ev_bytes(ev) > r->max_bytes)) {
        corral_store_event_t *old = r->ev[r->first % cap];
        r->bytes -= ev_bytes(old);
        corral_store_event_unref(old);
        r->first++;
    }
    r->ev[ev->rev % cap] = ev;
    r->bytes += ev_bytes(ev);
    r->next = ev->rev + 1;
    pthread_mutex_unlock(&r->mu);
}

int corral_store_ring_get(corral_store_t *s, int64_t from, corral_store_event_t **out, size_t max,
                          size_t *n, int64_t *first)
{
    corral__ring_t *r = &s->ring;
    *n = 0;
    pthread_mutex_lock(&r->mu);
    if (first)
        *first = r->first;
    if (from < r->first) {
        pthread_mutex_unlock(&r->mu);
        return CORRAL_STORE_ECOMPACTED;
    }
    for (int64_t rev = from; rev < r->next && *n < max; rev++) {
        corral_store_event_t *ev = r->ev[rev % (int64_t)r->cap];
        corral_store_event_ref(ev);
        out[(*n)++] = ev;
    }
    pthread_mutex_unlock(&r->mu);
    return 0;
}

/* --- attributes ------------------------------------------------------------------ */

void corral_store_attrs_add(corral_buf_t *b, char tag, const char *key, const char *val)
{
    corral_buf_putc(b, tag);
    corral_buf_append(b, key, strlen(key) + 1);
    corral_buf_append(b, val, strlen(val) + 1);
}

const char *corral_store_attrs_get(const char *attrs, size_t len, char tag, const char *key)
{
    size_t i = 0;
    while (i < len) {
        const char *k = attrs + i;
        const char *kend = memchr(k, '\0', len - i);
        if (!kend)
            return NULL;
        const char *v = kend + 1;
        if (v >= attrs + len)
            return NULL;
        const char *vend = memchr(v, '\0', (size_t)(attrs + len - v));
        if (!vend)
            return NULL;
        if (k[0] == tag && strcmp(k + 1, key) == 0)
            return v;
        i = (size_t)(vend + 1 - attrs);
    }
    return NULL;
}
