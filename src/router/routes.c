/*
 * The route table: InferenceServices' traffic lists and their revisions'
 * pods, built from the informers' objects into one arena, immutable once
 * published to the loop (which binds its own per-revision and per-pod state
 * to it). And the pure choices: which service a request names, which
 * revision (smooth weighted round robin), which pod (least outstanding).
 */
#include <string.h>

#include "corral/common.h"
#include "router/router_int.h"

#define LABEL_REVISION "corral.dev/revision"
#define DEFAULT_PORT   8080

static bool cond_true(const corral_conditions_t *c, const char *type)
{
    for (size_t i = 0; i < c->n; i++)
        if (c->items[i].type && strcmp(c->items[i].type, type) == 0)
            return c->items[i].status && strcmp(c->items[i].status, "True") == 0;
    return false;
}

static int pod_port(const corral_obj_t *p)
{
    const corral_val_t *cs = corral_val_dig(p->raw, "spec.containers");
    if (!cs || cs->kind != CORRAL_VAL_SEQ || cs->n == 0)
        return DEFAULT_PORT;
    const corral_val_t *ports = corral_val_get(cs->items[0], "ports");
    if (!ports || ports->kind != CORRAL_VAL_SEQ || ports->n == 0)
        return DEFAULT_PORT;
    const corral_val_t *cp = corral_val_get(ports->items[0], "containerPort");
    if (!cp || cp->kind != CORRAL_VAL_INT || cp->u.i <= 0 || cp->u.i > 65535)
        return DEFAULT_PORT;
    return (int)cp->u.i;
}

static const corral_val_t *traffic_of(const corral_obj_t *o)
{
    const corral_val_t *t = corral_val_dig(o->raw, "status.components.predictor.traffic");
    return t && t->kind == CORRAL_VAL_SEQ ? t : NULL;
}

static void add_pod(corral_arena_t *a, corral__rt_pod_t **arr, size_t *n, const corral_obj_t *p)
{
    corral__rt_pod_t *na = corral_arena_grow(a, *arr, *n * sizeof(**arr), (*n + 1) * sizeof(**arr));
    corral__rt_pod_t *x = &na[*n];
    x->name = p->meta.name;
    x->key = corral_arena_printf(a, "%s/%s", p->meta.namespace, p->meta.name);
    x->addr = p->u.pod->status.pod_ip;
    x->port = pod_port(p);
    *arr = na;
    (*n)++;
}

corral__rt_table_t *corral__rt_build(const corral_obj_t *const *isvcs, size_t nisvcs,
                                     const corral_obj_t *const *pods, size_t npods)
{
    corral__rt_table_t *t = corral_calloc(1, sizeof(*t));
    corral_arena_init(&t->arena);
    corral_hmap_init(&t->by_key);
    corral_arena_t *a = &t->arena;
    t->svcs = corral_arena_alloc(a, (nisvcs ? nisvcs : 1) * sizeof(*t->svcs));
    /* revisions by "NS/revision" -> (svc << 16 | rev), to place pods */
    corral_hmap_t revs;
    corral_hmap_init(&revs);
    /* (svc << 16 | rev) holds 65,535 services of 65,535 revisions each: a
     * table past that routes the first ones (logged by the caller) */
    for (size_t i = 0; i < nisvcs && t->nsvcs < 0xffff; i++) {
        const corral_obj_t *o = isvcs[i];
        corral__rt_svc_t *s = &t->svcs[t->nsvcs];
        s->ns = o->meta.namespace;
        s->name = o->meta.name;
        const corral_val_t *tr = traffic_of(o);
        s->has_traffic = tr != NULL;
        size_t cap = tr ? tr->n : 0;
        s->revs = corral_arena_alloc(a, (cap ? cap : 1) * sizeof(*s->revs));
        s->tags = corral_arena_alloc(a, (cap ? cap : 1) * sizeof(*s->tags));
        for (size_t k = 0; k < cap && s->nrevs < 0xffff; k++) {
            const corral_val_t *e = tr->items[k];
            const char *rn = corral_val_get_str(e, "revisionName");
            if (!rn || !*rn)
                continue;
            const corral_val_t *pc = corral_val_get(e, "percent");
            int pct = pc && pc->kind == CORRAL_VAL_INT && pc->u.i > 0 && pc->u.i <= 100
                          ? (int)pc->u.i
                          : 0;
            size_t r = 0;
            while (r < s->nrevs && strcmp(s->revs[r].name, rn) != 0)
                r++;
            if (r == s->nrevs) {
                corral__rt_rev_t *rv = &s->revs[s->nrevs++];
                rv->name = rn;
                rv->key = corral_arena_printf(a, "%s/%s", s->ns, rn);
                uint32_t prev;
                if (!corral_hmap_get(&revs, rv->key, &prev))
                    corral_hmap_put(&revs, rv->key, (uint32_t)(t->nsvcs << 16 | r));
            }
            s->revs[r].percent += pct;
            const char *tag = corral_val_get_str(e, "tag");
            if (tag && *tag) {
                s->tags[s->ntags].tag = tag;
                s->tags[s->ntags].rev = r;
                s->ntags++;
            }
        }
        const char *key = corral_arena_printf(a, "%s/%s", s->ns, s->name);
        corral_hmap_put(&t->by_key, key, (uint32_t)t->nsvcs);
        t->nsvcs++;
    }
    for (size_t i = 0; i < npods; i++) {
        const corral_obj_t *p = pods[i];
        const char *rn = corral_strmap_get(&p->meta.labels, LABEL_REVISION);
        const corral_pod_status_t *st = &p->u.pod->status;
        if (!rn || p->meta.deletion_us || !st->pod_ip || !*st->pod_ip)
            continue;
        char *k = corral_arena_printf(a, "%s/%s", p->meta.namespace, rn);
        uint32_t v;
        if (!corral_hmap_get(&revs, k, &v))
            continue;
        corral__rt_rev_t *rv = &t->svcs[v >> 16].revs[v & 0xffff];
        if (cond_true(&st->conditions, "Ready"))
            add_pod(a, &rv->ready, &rv->nready, p);
        else if (st->phase && strcmp(st->phase, "Running") == 0)
            add_pod(a, &rv->starting, &rv->nstarting, p);
    }
    corral_hmap_fini(&revs);
    return t;
}

void corral__rt_free(corral__rt_table_t *t)
{
    if (!t)
        return;
    corral_hmap_fini(&t->by_key);
    corral_arena_fini(&t->arena);
    corral_free(t);
}

const corral__rt_svc_t *corral__rt_find(const corral__rt_table_t *t, const char *ns, size_t nslen,
                                        const char *name, size_t namelen)
{
    char key[512];
    if (!t || nslen + namelen + 2 > sizeof(key) || nslen == 0 || namelen == 0)
        return NULL;
    memcpy(key, ns, nslen);
    key[nslen] = '/';
    memcpy(key + nslen + 1, name, namelen);
    key[nslen + 1 + namelen] = 0;
    uint32_t v;
    return corral_hmap_get(&t->by_key, key, &v) ? &t->svcs[v] : NULL;
}

const corral__rt_rev_t *corral__rt_tag_rev(const corral__rt_svc_t *s, const char *tag, size_t len)
{
    for (size_t i = 0; i < s->ntags; i++)
        if (strlen(s->tags[i].tag) == len && memcmp(s->tags[i].tag, tag, len) == 0)
            return &s->revs[s->tags[i].rev];
    return NULL;
}

const corral__rt_rev_t *corral__rt_rev_named(const corral__rt_svc_t *s, const char *name,
                                             size_t len)
{
    for (size_t i = 0; i < s->nrevs; i++)
        if (strlen(s->revs[i].name) == len && memcmp(s->revs[i].name, name, len) == 0)
            return &s->revs[i];
    return NULL;
}

static const char *memchr_c(const char *p, size_t n, char c)
{
    return n ? memchr(p, c, n) : NULL;
}

const corral__rt_svc_t *corral__route(const corral__rt_table_t *t, const char *path, size_t plen,
                                      const char *host, size_t hlen, corral__route_req_t *rr)
{
    memset(rr, 0, sizeof(*rr));
    static const char pre[] = "/serving/";
    if (plen > sizeof(pre) - 1 && memcmp(path, pre, sizeof(pre) - 1) == 0) {
        const char *ns = path + sizeof(pre) - 1, *end = path + plen;
        const char *q = memchr_c(ns, (size_t)(end - ns), '?');
        if (q)
            end = q;
        const char *sl = memchr_c(ns, (size_t)(end - ns), '/');
        if (sl && sl > ns) {
            const char *sv = sl + 1;
            const char *se = memchr_c(sv, (size_t)(end - sv), '/');
            if (!se)
                se = end;
            if (se > sv) {
                rr->ns = ns;
                rr->nslen = (size_t)(sl - ns);
                rr->svc = sv;
                rr->svclen = (size_t)(se - sv);
                rr->strip = (size_t)(se - path);
                return corral__rt_find(t, rr->ns, rr->nslen, rr->svc, rr->svclen);
            }
        }
    }
    /* Host: S.NS[.anything][:port] */
    if (!host || hlen == 0)
        return NULL;
    size_t hl = hlen;
    if (host[0] == '[')
        return NULL; /* an IPv6 literal names no service */
    const char *colon = memchr_c(host, hl, ':');
    if (colon)
        hl = (size_t)(colon - host);
    const char *d1 = memchr_c(host, hl, '.');
    if (!d1 || d1 == host)
        return NULL;
    const char *ns = d1 + 1;
    const char *d2 = memchr_c(ns, (size_t)(host + hl - ns), '.');
    size_t nslen = d2 ? (size_t)(d2 - ns) : (size_t)(host + hl - ns);
    if (nslen == 0)
        return NULL;
    rr->ns = ns;
    rr->nslen = nslen;
    rr->svc = host;
    rr->svclen = (size_t)(d1 - host);
    const corral__rt_svc_t *s = corral__rt_find(t, ns, nslen, host, rr->svclen);
    if (s)
        return s;
    static const char *const tags[] = {"latest", "prev"};
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(tags); i++) {
        size_t tl = strlen(tags[i]);
        if (rr->svclen > tl + 1 && memcmp(host, tags[i], tl) == 0 && host[tl] == '-') {
            s = corral__rt_find(t, ns, nslen, host + tl + 1, rr->svclen - tl - 1);
            if (s) {
                rr->tag = tags[i];
                rr->taglen = tl;
                rr->svc = host + tl + 1;
                rr->svclen -= tl + 1;
                return s;
            }
        }
    }
    return NULL;
}

int corral__swrr(int64_t *cw, const int *weights, size_t n)
{
    int64_t total = 0;
    int best = -1;
    for (size_t i = 0; i < n; i++) {
        if (weights[i] <= 0)
            continue;
        cw[i] += weights[i];
        total += weights[i];
        if (best < 0 || cw[i] > cw[best])
            best = (int)i;
    }
    if (best >= 0)
        cw[best] -= total;
    return best;
}

int corral__least(const uint32_t *outstanding, const bool *excl, size_t n, size_t start)
{
    int best = -1;
    for (size_t k = 0; k < n; k++) {
        size_t i = (start + k) % n;
        if (excl && excl[i])
            continue;
        if (best < 0 || outstanding[i] < outstanding[best])
            best = (int)i;
    }
    return best;
}
