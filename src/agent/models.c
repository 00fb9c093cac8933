/*
 * The agent's side of KServe's local model cache (the cache itself is
 * modelcache.c): it follows LocalModelCaches, LocalModelNodeGroups and its
 * own Node (informers feeding the agent's queue), works out the groups its
 * Node belongs to (corral_model_node_group_selects: the group's
 * nodeSelector and persistentVolumeSpec nodeAffinity against the Node's
 * labels) and so the caches to keep and the storageLimit (the largest of
 * its groups'), and reports what it holds: its LocalModelNode
 * (spec.localModels, status.modelStatus) and the Node's annotation
 * corral.dev/model-caches (the caches on disk, comma-separated, which the
 * scheduler's engine prefers). A pod with corral.dev/model-uri waits
 * (Pending, Initialized=False) until the model is in the cache, then gets
 * MODEL_DIR and its corral.dev/model-fetch annotation ("hit 0.004s",
 * "fetched 3.214s": the time from the pod asking to the model being there).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent_int.h"
#include "corral/hmap.h"
#include "corral/json.h"

/* The LocalModelNode and the Node are written at most once a second. */
#define WRITE_EVERY_US INT64_C(1000000)
#define LMN_PATH       "/apis/serving.kserve.io/v1alpha1/localmodelnodes"

typedef struct objtab {
    corral_watch_ev_t **ev;
    size_t n, cap;
} objtab_t;

struct corral__models {
    char *node;
    corral__mcache_t *mc;
    objtab_t caches, groups;
    corral_watch_ev_t *node_ev; /* the latest Node */
    bool dirty;                 /* recompute what to keep */
    uint64_t written_version;
    char *written_node_ann;
    char *written_lmn;
    int64_t next_write_us;
    bool lmn_exists;
    char **sel; /* the groups this node is in */
    size_t nsel;
    char **reported; /* the modelStatus keys last written (a merge patch removes the others with
                        null) */
    size_t nreported;
};

static void strv_set(char ***v, size_t *n, const char *const *src, size_t k)
{
    for (size_t i = 0; i < *n; i++)
        corral_free((*v)[i]);
    corral_free(*v);
    *v = corral_calloc(k + 1, sizeof(char *));
    *n = k;
    for (size_t i = 0; i < k; i++)
        (*v)[i] = corral_strdup(src[i]);
}

static void tab_put(objtab_t *t, corral_watch_ev_t *ev)
{
    for (size_t i = 0; i < t->n; i++) {
        if (!strcmp(t->ev[i]->name, ev->name)) {
            corral_watch_ev_free(t->ev[i]);
            if (ev->type == CORRAL_WATCH_DELETED || !ev->obj) {
                t->ev[i] = t->ev[--t->n];
                corral_watch_ev_free(ev);
            } else {
                t->ev[i] = ev;
            }
            return;
        }
    }
    if (ev->type == CORRAL_WATCH_DELETED || !ev->obj) {
        corral_watch_ev_free(ev);
        return;
    }
    corral_grow((void **)&t->ev, &t->cap, t->n + 1, sizeof(corral_watch_ev_t *));
    t->ev[t->n++] = ev;
}

static void tab_free(objtab_t *t)
{
    for (size_t i = 0; i < t->n; i++)
        corral_watch_ev_free(t->ev[i]);
    corral_free(t->ev);
}

corral__models_t *corral__models_new(const char *node, const char *dir, const char *pvc_root,
                                     corral_metrics_t *reg)
{
    corral__mcache_t *mc = corral__mc_new(dir, pvc_root, reg);
    if (!mc)
        return NULL;
    corral__models_t *m = corral_calloc(1, sizeof(*m));
    m->node = corral_strdup(node);
    m->mc = mc;
    m->written_version = UINT64_MAX;
    corral__mc_start(mc);
    return m;
}

void corral__models_free(corral__models_t *m)
{
    if (!m)
        return;
    corral__mc_free(m->mc);
    tab_free(&m->caches);
    tab_free(&m->groups);
    corral_watch_ev_free(m->node_ev);
    corral_free(m->written_node_ann);
    corral_free(m->written_lmn);
    strv_set(&m->sel, &m->nsel, NULL, 0);
    corral_free(m->sel);
    strv_set(&m->reported, &m->nreported, NULL, 0);
    corral_free(m->reported);
    corral_free(m->node);
    corral_free(m);
}

bool corral__models_event(corral__models_t *m, corral_watch_ev_t *ev)
{
    if (ev->kind != CORRAL_KIND_LOCALMODELCACHE && ev->kind != CORRAL_KIND_LOCALMODELNODEGROUP &&
        ev->kind != CORRAL_KIND_NODE)
        return false;
    if (ev->type == CORRAL_WATCH_SYNCED) {
        corral_watch_ev_free(ev);
        return true;
    }
    m->dirty = true;
    if (ev->kind == CORRAL_KIND_NODE) {
        if (ev->obj && ev->type != CORRAL_WATCH_DELETED && !strcmp(ev->name, m->node)) {
            corral_watch_ev_free(m->node_ev);
            m->node_ev = ev;
        } else {
            corral_watch_ev_free(ev);
        }
        return true;
    }
    tab_put(ev->kind == CORRAL_KIND_LOCALMODELCACHE ? &m->caches : &m->groups, ev);
    return true;
}

/* Does cache c name one of the groups in sel (n of them)? Which one, or NULL. */
static const char *cache_group(const corral_obj_t *c, const char *const *sel, size_t n)
{
    const corral_strlist_t *g = &c->u.lmc->node_groups;
    for (size_t i = 0; i < g->n; i++)
        for (size_t k = 0; k < n; k++)
            if (!strcmp(g->items[i], sel[k]))
                return sel[k];
    return NULL;
}

/* Recompute the groups this node is in, the limit and the caches to keep. */
static void recompute(corral__models_t *m)
{
    m->dirty = false;
    if (!m->node_ev)
        return; /* the Node's labels are not known yet */
    const corral_obj_t *node = m->node_ev->obj;
    const char **sel = corral_calloc(m->groups.n + 1, sizeof(char *));
    size_t ns = 0;
    int64_t limit = 0;
    for (size_t i = 0; i < m->groups.n; i++) {
        const corral_obj_t *g = m->groups.ev[i]->obj;
        if (!g || g->info->kind != CORRAL_KIND_LOCALMODELNODEGROUP ||
            !corral_model_node_group_selects(g, m->node, &node->meta.labels))
            continue;
        sel[ns++] = g->meta.name;
        int64_t l = 0;
        if (corral_qty_value(&g->u.lmng->storage_limit, &l) == 0 && l > limit)
            limit = l;
    }
    const char **names = corral_calloc(m->caches.n + 1, sizeof(char *));
    const char **uris = corral_calloc(m->caches.n + 1, sizeof(char *));
    int64_t *sizes = corral_calloc(m->caches.n + 1, sizeof(int64_t));
    size_t nw = 0;
    for (size_t i = 0; i < m->caches.n; i++) {
        const corral_obj_t *c = m->caches.ev[i]->obj;
        if (!c || c->info->kind != CORRAL_KIND_LOCALMODELCACHE || !cache_group(c, sel, ns))
            continue;
        names[nw] = c->meta.name;
        uris[nw] = c->u.lmc->source_model_uri;
        corral_qty_value(&c->u.lmc->model_size, &sizes[nw]);
        nw++;
    }
    strv_set(&m->sel, &m->nsel, sel, ns);
    corral__mc_set_limit(m->mc, ns ? limit : 0);
    corral__mc_want(m->mc, names, uris, sizes, nw);
    corral_free(sizes);
    corral_free(uris);
    corral_free(names);
    corral_free(sel);
}

static const char *model_status(corral__mc_state_t s)
{
    switch (s) {
    case CORRAL__MC_READY:
        return CORRAL_MODEL_DOWNLOADED;
    case CORRAL__MC_DOWNLOADING:
        return CORRAL_MODEL_DOWNLOADING;
    case CORRAL__MC_ERROR:
        return CORRAL_MODEL_DOWNLOAD_ERROR;
    default:
        return CORRAL_MODEL_DOWNLOAD_PENDING;
    }
}

static int request(corral_client_t *c, const char *method, const char *path, const char *ctype,
                   const corral_buf_t *body, long *code)
{
    corral_client_resp_t r;
    corral_client_resp_init(&r);
    int rc = corral_client_request(c, method, path, ctype, body ? body->p : NULL,
                                   body ? body->len : 0, &r);
    *code = r.code;
    if (rc == 0 && (r.code < 200 || r.code > 299) && r.code != 404) {
        char reason[64], msg[300];
        corral_client_error(&r, reason, sizeof(reason), msg, sizeof(msg));
        corral__log("model cache: %s %s: HTTP %ld %s", method, path, r.code, msg);
    }
    corral_client_resp_fini(&r);
    return rc;
}

/* The LocalModelNode (spec and status as JSON texts) and the Node's annotation. */
static void report(corral__models_t *m, corral_client_t *c)
{
    corral__mc_info_t *inf = NULL;
    size_t n = corral__mc_list(m->mc, &inf);
    corral_arena_t a;
    corral_arena_init(&a);
    corral_val_t *obj = corral__jmap(&a, NULL, NULL);
    corral__jstr(&a, obj, "apiVersion", "serving.kserve.io/v1alpha1");
    corral__jstr(&a, obj, "kind", "LocalModelNode");
    corral__jstr(&a, corral__jmap(&a, obj, "metadata"), "name", m->node);
    corral_val_t *models = corral__jseq(&a, corral__jmap(&a, obj, "spec"), "localModels");
    corral_val_t *st = corral__jmap(&a, corral__jmap(&a, obj, "status"), "modelStatus");
    corral_buf_t ann;
    corral_buf_init(&ann);
    for (size_t i = 0; i < n; i++) {
        if (inf[i].state == CORRAL__MC_READY && inf[i].name[0] != '_')
            corral_buf_printf(&ann, "%s%s", ann.len ? "," : "", inf[i].name);
        if (!inf[i].wanted)
            continue;
        for (size_t k = 0; k < m->caches.n; k++) {
            const corral_obj_t *o = m->caches.ev[k]->obj;
            if (strcmp(o->meta.name, inf[i].name) != 0)
                continue;
            corral_val_t *lm = corral__jmap(&a, NULL, NULL);
            corral__jstr(&a, lm, "sourceModelUri", o->u.lmc->source_model_uri);
            corral__jstr(&a, lm, "modelName", o->meta.name);
            const char *g = cache_group(o, (const char *const *)m->sel, m->nsel);
            if (g)
                corral__jstr(&a, lm, "nodeGroup", g);
            corral_val_push(&a, models, lm);
        }
        corral__jstr(&a, st, inf[i].name, model_status(inf[i].state));
    }
    corral_buf_t b, patch;
    corral_buf_init(&b);
    corral_buf_init(&patch);
    corral_val_to_json(obj, &b, false);
    /* what we wrote before and no longer hold: null removes it (merge patch) */
    const char **keys = corral_calloc(st->n + 1, sizeof(char *));
    for (size_t i = 0; i < st->n; i++)
        keys[i] = st->pairs[i].key->s;
    size_t nkeys = st->n;
    for (size_t i = 0; i < m->nreported; i++)
        if (!corral_val_get(st, m->reported[i]))
            corral_val_set(&a, st, m->reported[i], corral_val_new(&a, CORRAL_VAL_NULL));
    corral_val_to_json(obj, &patch, false);
    long code = 0;
    if (!m->written_lmn || strcmp(m->written_lmn, corral_buf_str(&b)) != 0) {
        char path[512];
        snprintf(path, sizeof(path), LMN_PATH "/%s", m->node);
        bool ok = false;
        if (!m->lmn_exists && request(c, "POST", LMN_PATH, "application/json", &b, &code) == 0 &&
            (code == 201 || code == 200 || code == 409))
            m->lmn_exists = true;
        if (m->lmn_exists) {
            ok = request(c, "PATCH", path, "application/merge-patch+json", &patch, &code) == 0 &&
                 code == 200;
            snprintf(path, sizeof(path), LMN_PATH "/%s/status", m->node);
            ok = ok &&
                 request(c, "PATCH", path, "application/merge-patch+json", &patch, &code) == 0 &&
                 code == 200;
            if (code == 404)
                m->lmn_exists = false;
        }
        if (ok) {
            corral_free(m->written_lmn);
            m->written_lmn = corral_buf_steal(&b);
            strv_set(&m->reported, &m->nreported, keys, nkeys);
        }
    }
    const char *cur = corral_buf_str(&ann);
    if (m->node_ev && (!m->written_node_ann || strcmp(m->written_node_ann, cur) != 0)) {
        corral_buf_t p;
        corral_buf_init(&p);
        corral_buf_puts(&p,
                        "{\"metadata\":{\"annotations\":{\"" CORRAL_MODEL_CACHES_ANNOTATION "\":");
        if (*cur)
            corral_json_quote(&p, cur, strlen(cur));
        else
            corral_buf_puts(&p, "null");
        corral_buf_puts(&p, "}}}");
        char path[512];
        snprintf(path, sizeof(path), "/api/v1/nodes/%s", m->node);
        if (request(c, "PATCH", path, "application/merge-patch+json", &p, &code) == 0 &&
            code == 200) {
            corral_free(m->written_node_ann);
            m->written_node_ann = corral_strdup(cur);
        }
        corral_buf_fini(&p);
    }
    corral_free(keys);
    corral_buf_fini(&b);
    corral_buf_fini(&patch);
    corral_buf_fini(&ann);
    corral_arena_fini(&a);
    corral_free(inf);
}

void corral__models_tick(corral__models_t *m, corral_client_t *c, const corral__podtab_t *pods,
                         int64_t now_us)
{
    if (m->dirty)
        recompute(m);
    const char **use = corral_calloc(pods->n + 1, sizeof(char *));
    size_t nu = 0;
    for (size_t i = 0; i < pods->n; i++) {
        const corral__pod_t *p = pods->pods[i];
        if (p->model_entry && !p->terminal)
            use[nu++] = p->model_entry;
    }
    corral__mc_set_in_use(m->mc, use, nu);
    corral_free(use);
    uint64_t v = corral__mc_version(m->mc);
    if (now_us < m->next_write_us ||
        (v == m->written_version && m->written_lmn && m->written_node_ann))
        return;
    m->next_write_us = now_us + WRITE_EVERY_US;
    report(m, c);
    m->written_version = v;
}

/* The cache entry and subdirectory for a storage URI: the LocalModelCache
 * that covers it (longest source URI), else "_uri-<hash>". */
static void entry_for(const corral__models_t *m, const char *uri, char *name, size_t nlen,
                      const char **src, char *sub, size_t slen)
{
    size_t best = 0;
    *src = uri;
    sub[0] = '\0';
    for (size_t i = 0; i < m->caches.n; i++) {
        const corral_obj_t *c = m->caches.ev[i]->obj;
        const char *cu = c->u.lmc->source_model_uri;
        char rest[1024];
        if (!cu || strlen(cu) <= best || corral__mc_subpath(cu, uri, rest, sizeof(rest)) != 0)
            continue;
        best = strlen(cu);
        snprintf(name, nlen, "%s", c->meta.name);
        snprintf(sub, slen, "%s", rest);
        *src = cu;
    }
    if (!best)
        snprintf(name, nlen, "_uri-%08x%08x", corral_hash_stable(uri, strlen(uri), 1),
                 corral_hash_stable(uri, strlen(uri), 2));
}

int corral__models_pod(corral__models_t *m, corral__pod_t *p, int64_t now_us, char *msg, size_t len)
{
    msg[0] = '\0';
    if (!p->model_uri || p->model_dir)
        return 0;
    if (!m) {
        snprintf(msg, len, "this agent has no model cache");
        return CORRAL_EUNSUPPORTED;
    }
    char name[254], sub[1024];
    const char *src;
    entry_for(m, p->model_uri, name, sizeof(name), &src, sub, sizeof(sub));
    if (!p->model_entry) {
        p->model_entry = corral_strdup(name);
        p->model_t0_us = now_us;
    }
    corral__mc_state_t st = corral__mc_request(m->mc, name, src, msg, len);
    if (st == CORRAL__MC_ERROR)
        return CORRAL_EIO;
    if (st != CORRAL__MC_READY) {
        p->model_missed = true;
        snprintf(msg, len, "fetching model %s into the node's cache", p->model_uri);
        return CORRAL_EAGAIN;
    }
    char dir[4096];
    snprintf(dir, sizeof(dir), "%s/%s%s%s", corral__mc_dir(m->mc), name, *sub ? "/" : "", sub);
    p->model_dir = corral_strdup(dir);
    double s = (double)(now_us - p->model_t0_us) / 1e6;
    snprintf(p->model_fetch, sizeof(p->model_fetch), "%s %.3fs",
             p->model_missed ? "fetched" : "hit", s < 0 ? 0 : s);
    corral__log("pod %s/%s: model %s %s (%s)", p->ns, p->name, p->model_uri, p->model_fetch, dir);
    return 0;
}
