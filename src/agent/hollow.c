/*
 * The hollow runtime: many simulated nodes in one process, as kubemark's
 * hollow nodes and kwok do, for scale tests and benchmarks. Nothing runs: a
 * pod bound to one of our nodes is Running at once, and Succeeded after its
 * corral.dev/sim-duration annotation (a Go duration; absent: until deleted);
 * a deletion is confirmed at once (DELETE gracePeriodSeconds=0).
 *
 * Threads: one informer on all pods (filtered here by node name: one watch
 * instead of one per node), the main thread (events, a timer heap of pod
 * end times, heartbeat scheduling), and a few writer threads that make the
 * requests. Node i belongs to writer i % W, which owns its Node state and
 * its connection (one per node when --token-file gives each node its own
 * token, else one per writer), so no request object is shared between
 * threads. Work reaches a writer as heap-allocated items on its queue, taken
 * in batches. Heartbeats are spread evenly over the period.
 */
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/agent_int.h"
#include "agent/gpu_int.h"
#include "agent/logserver.h"
#include "agent/telemetry.h"
#include "corral/io.h"
#include "corral/timefmt.h"

#define SIM_DURATION "corral.dev/sim-duration"

enum { W_REGISTER, W_LEASE, W_STATUS, W_REQUEST };

typedef struct witem {
    struct witem *next;
    int kind;
    int node;
    char *method, *path, *body, *ctype;
} witem_t;

typedef struct hollow hollow_t;

typedef struct writer {
    hollow_t *h;
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    witem_t *head, *tail;
    bool stop;
    corral_client_t *shared;
    corral_client_t **per_node; /* with a token file: indexed by node */
    uint64_t done, failed;
} writer_t;

typedef struct timer {
    int64_t at_us;
    char *uid;
} timer_t_;

struct hollow {
    const corral__agent_opts_t *o;
    const corral_client_config_t *cfg;
    corral_gpu_inventory_t inv;
    int nn;
    corral__node_t *nodes;
    char **tokens;         /* per node, or NULL */
    corral_hmap_t by_name; /* node name -> index */
    int64_t *next_lease, *next_status;
    writer_t *w;
    int nw;
    corral__podtab_t pods;
    timer_t_ *heap;
    size_t nheap, capheap;
    corral_evq_t *q;
    corral_informer_t *inf;
    corral_arena_t arena;
    /* metrics: each node's simulated GPUs and its own port on one log server thread */
    corral__telem_t **tm;
    corral_agent_logserver_t *logs;
    bool owners_dirty;
    int64_t next_owners_us;
};

/* --- the writers ---------------------------------------------------------------------------- */

static void push(hollow_t *h, witem_t *it)
{
    writer_t *w = &h->w[it->node % h->nw];
    pthread_mutex_lock(&w->mu);
    if (w->tail)
        w->tail->next = it;
    else
        w->head = it;
    w->tail = it;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

static void push_node(hollow_t *h, int kind, int node)
{
    witem_t *it = corral_calloc(1, sizeof(*it));
    it->kind = kind;
    it->node = node;
    push(h, it);
}

static void push_req(hollow_t *h, int node, const char *method, char *path, char *body,
                     const char *ctype)
{
    witem_t *it = corral_calloc(1, sizeof(*it));
    it->kind = W_REQUEST;
    it->node = node;
    it->method = corral_strdup(method);
    it->path = path;
    it->body = body;
    it->ctype = ctype ? corral_strdup(ctype) : NULL;
    push(h, it);
}

static corral_client_t *client_for(writer_t *w, int node)
{
    hollow_t *h = w->h;
    if (!h->tokens || !h->tokens[node])
        return w->shared;
    if (!w->per_node[node]) {
        corral_client_config_t c = *h->cfg; /* shallow: client_new copies it */
        c.token = h->tokens[node];
        c.token_file = NULL; /* the node's own token, never re-read from a file */
        c.exec = NULL;
        w->per_node[node] = corral_client_new(&c);
    }
    return w->per_node[node];
}

static void run_item(writer_t *w, witem_t *it)
{
    hollow_t *h = w->h;
    corral_client_t *c = client_for(w, it->node);
    corral__node_t *n = &h->nodes[it->node];
    char err[512] = "";
    int rc = 0;
    int64_t now = corral__now_us();
    if (it->kind == W_REGISTER) {
        rc = corral__node_register(c, n, err, sizeof(err));
    } else if (it->kind == W_LEASE) {
        rc = corral__node_lease(c, n, now, err, sizeof(err));
    } else if (it->kind == W_STATUS) {
        rc = corral__node_status(c, n, now, err, sizeof(err));
    } else {
        corral_client_resp_t r;
        corral_client_resp_init(&r);
        rc = corral_client_request(c, it->method, it->path, it->ctype, it->body,
                                   it->body ? strlen(it->body) : 0, &r);
        if (rc == 0 && r.code >= 300 && r.code != 404 && r.code != 409) {
            snprintf(err, sizeof(err), "%s %s: HTTP %ld", it->method, it->path, r.code);
            rc = CORRAL_EIO;
        } else if (rc) {
            snprintf(err, sizeof(err), "%s %s: %s", it->method, it->path, r.error);
        }
        corral_client_resp_fini(&r);
    }
    if (rc) {
        w->failed++;
        if (w->failed < 20 || w->failed % 1000 == 0)
            corral__log("hollow: %s", err);
    }
    w->done++;
}

static void item_free(witem_t *it)
{
    corral_free(it->method);
    corral_free(it->path);
    corral_free(it->body);
    corral_free(it->ctype);
    corral_free(it);
}

static void *writer_main(void *arg)
{
    writer_t *w = arg;
    for (;;) {
        pthread_mutex_lock(&w->mu);
        while (!w->head && !w->stop)
            pthread_cond_wait(&w->cv, &w->mu);
        witem_t *batch = w->head;
        w->head = w->tail = NULL;
        bool stop = w->stop;
        pthread_mutex_unlock(&w->mu);
        while (batch) {
            witem_t *next = batch->next;
            if (!stop)
                run_item(w, batch);
            item_free(batch);
            batch = next;
        }
        if (stop)
            return NULL;
    }
}

/* --- the timer heap ----------------------------------------------------------------------------
 */

static void heap_push(hollow_t *h, int64_t at, const char *uid)
{
    corral_grow((void **)&h->heap, &h->capheap, h->nheap + 1, sizeof(*h->heap));
    size_t i = h->nheap++;
    while (i > 0 && h->heap[(i - 1) / 2].at_us > at) {
        h->heap[i] = h->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h->heap[i] = (timer_t_){at, corral_strdup(uid)};
}

static timer_t_ heap_pop(hollow_t *h)
{
    timer_t_ top = h->heap[0];
    timer_t_ last = h->heap[--h->nheap];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < h->nheap && h->heap[l].at_us < last.at_us)
            m = l;
        if (l + 1 < h->nheap && h->heap[l + 1].at_us < (m == i ? last.at_us : h->heap[m].at_us))
            m = l + 1;
        if (m == i)
            break;
        h->heap[i] = h->heap[m];
        i = m;
    }
    if (h->nheap > 0)
        h->heap[i] = last;
    return top;
}

/* --- pods ----------------------------------------------------------------------------------- */

static int node_of(const corral__pod_t *p)
{
    return (int)strtol(p->node, NULL, 10);
}

static void write_status(hollow_t *h, corral__pod_t *p, int64_t now)
{
    corral_arena_t a;
    corral_arena_init(&a);
    corral_buf_t b;
    corral_buf_init(&b);
    corral_val_to_json(corral__pod_status(&a, p, "127.0.0.1", now), &b, false);
    char *path = corral_arena_printf(&a, "/api/v1/namespaces/%s/pods/%s/status", p->ns, p->name);
    push_req(h, node_of(p), "PATCH", corral_strdup(path), corral_buf_steal(&b),
             "application/merge-patch+json");
    corral_buf_fini(&b);
    corral_arena_fini(&a);
}

static void finalize(hollow_t *h, corral__pod_t *p)
{
    if (p->finalized)
        return;
    p->finalized = true;
    char path[1024];
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s?gracePeriodSeconds=0", p->ns,
             p->name);
    char *body = NULL;
    corral_buf_t b;
    corral_buf_init(&b);
    corral_buf_printf(&b, "{\"gracePeriodSeconds\":0,\"preconditions\":{\"uid\":\"%s\"}}", p->uid);
    body = corral_buf_steal(&b);
    push_req(h, node_of(p), "DELETE", corral_strdup(path), body, NULL);
}

static void complete(hollow_t *h, corral__pod_t *p, int64_t now)
{
    if (p->terminal || p->deleting)
        return;
    for (size_t i = 0; i < p->nctrs; i++) {
        corral__ctr_t *c = &p->ctrs[i];
        c->st = CORRAL__C_TERMINATED;
        c->term = (corral__term_t){
            .set = true, .exit_code = 0, .started_us = c->started_us, .finished_us = now};
        snprintf(c->term.reason, sizeof(c->term.reason), "Completed");
        snprintf(c->term.cid, sizeof(c->term.cid), "%s", c->cid);
    }
    if (p->gpu_ran) { /* its declared load over its run, on each of its GPUs (or its share) */
        int ids[CORRAL_GPU_MAX];
        int k = corral__gpu_ids_parse(p->gpu_ids, ids, CORRAL_GPU_MAX);
        double gpus = p->gpu_milli ? p->gpu_milli / 1000.0 : k;
        p->gpu_used_s = gpus * p->sim_util / 100.0 * (double)(now - p->start_us) / 1e6;
    }
    h->owners_dirty = true;
    corral_free(p->restart_policy); /* a finished hollow pod is Succeeded whatever the policy */
    p->restart_policy = corral_strdup("Never");
    p->terminal = true;
    write_status(h, p, now);
}

static void new_pod(hollow_t *h, corral_watch_ev_t *ev, int node, int64_t now)
{
    const corral_obj_t *o = ev->obj;
    corral__pod_t *p = corral_calloc(1, sizeof(*p));
    p->uid = corral_strdup(o->meta.uid ? o->meta.uid : "");
    p->ns = corral_strdup(ev->ns);
    p->name = corral_strdup(ev->name);
    char nb[16];
    snprintf(nb, sizeof(nb), "%d", node);
    p->node = corral_strdup(nb);
    corral__pod_containers(p, o);
    p->start_us = o->u.pod->status.start_us ? o->u.pod->status.start_us : now;
    const char *ids = corral_strmap_get(&o->meta.annotations, "corral.dev/gpu-ids");
    p->gpu_ids = ids ? corral_strdup(ids) : NULL;
    p->sim_util = corral__pod_sim_util(o);
    p->gpu_milli = corral__pod_gpu_milli(o);
    int tmp[CORRAL_GPU_MAX];
    p->gpu_ran = ids && corral__gpu_ids_parse(ids, tmp, CORRAL_GPU_MAX) > 0;
    h->owners_dirty = true;
    corral__podtab_add(&h->pods, p);
    const char *phase = o->u.pod->status.phase;
    if (phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed"))) {
        p->terminal = true;
        return;
    }
    for (size_t i = 0; i < p->nctrs; i++) {
        corral__ctr_t *c = &p->ctrs[i];
        bool init = c->init;
        c->st = init ? CORRAL__C_TERMINATED : CORRAL__C_RUNNING;
        c->started_us = p->start_us;
        c->instance = 0;
        snprintf(c->cid, sizeof(c->cid), "hollow://%s/%s", p->uid, c->name);
        if (init) {
            c->term = (corral__term_t){
                .set = true, .exit_code = 0, .started_us = p->start_us, .finished_us = p->start_us};
            snprintf(c->term.reason, sizeof(c->term.reason), "Completed");
        }
    }
    const char *d = corral_strmap_get(&o->meta.annotations, SIM_DURATION);
    int64_t ns = 0;
    if (d && corral_duration_parse(d, strlen(d), &ns) == 0) {
        int64_t at = p->start_us + ns / 1000;
        if (at <= now) {
            complete(h, p, now);
            return;
        }
        heap_push(h, at, p->uid);
    }
    write_status(h, p, now);
}

static void handle(hollow_t *h, corral_watch_ev_t *ev, int64_t now)
{
    const corral_obj_t *o = ev->obj;
    corral__pod_t *p = o ? corral__podtab_find(&h->pods, o->meta.uid) : NULL;
    if (!p && !o && ev->type == CORRAL_WATCH_DELETED) {
        for (size_t i = 0; i < h->pods.n && !p; i++)
            if (!strcmp(h->pods.pods[i]->ns, ev->ns) && !strcmp(h->pods.pods[i]->name, ev->name))
                p = h->pods.pods[i];
    }
    if (ev->type == CORRAL_WATCH_DELETED) {
        if (p)
            corral__podtab_drop(&h->pods, p);
        h->owners_dirty = true;
        return;
    }
    if (!o || o->info->kind != CORRAL_KIND_POD)
        return;
    uint32_t node;
    const char *nn = o->u.pod->spec.node_name;
    if (!p) {
        if (!nn || !corral_hmap_get(&h->by_name, nn, &node))
            return; /* not bound, or not ours */
        new_pod(h, ev, (int)node, now);
        p = corral__podtab_find(&h->pods, o->meta.uid);
    }
    if (p && o->meta.deletion_us && !p->deleting) {
        p->deleting = true;
        finalize(h, p);
    }
}

/* --- the loop ----------------------------------------------------------------------------------
 */

static int load_tokens(hollow_t *h, char *err, size_t errlen)
{
    char *text = NULL;
    size_t len = 0;
    corral_diag_t d;
    corral_diag_init(&d);
    int rc = corral_file_read(h->o->token_file, 1 << 24, &d, &text, &len);
    corral_diag_fini(&d);
    if (rc) {
        snprintf(err, errlen, "cannot read %s", h->o->token_file);
        return rc;
    }
    h->tokens = corral_calloc((size_t)h->nn, sizeof(char *));
    for (char *line = text; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        char *comma = strchr(line, ',');
        uint32_t i;
        if (comma) {
            *comma = '\0';
            char *tok = comma + 1;
            tok[strcspn(tok, "\r ")] = '\0';
            if (corral_hmap_get(&h->by_name, line, &i))
                h->tokens[i] = corral_arena_strdup(&h->arena, tok);
        }
        line = nl ? nl + 1 : NULL;
    }
    corral_free(text);
    return 0;
}

/* Room for a listening socket per node besides the API connections. */
static void raise_nofile(int nn)
{
    struct rlimit rl;
    rlim_t want = (rlim_t)nn + 1024;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < want) {
        rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want ? want : rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

/* Each hollow node gets simulated GPUs of its own (UUIDs from its name) and
 * a port on 127.0.0.1 for /metrics, /metrics/resource and /healthz, all
 * served by one thread (docs/decisions.md). */
static int metrics_setup(hollow_t *h, int64_t now, char *err, size_t errlen)
{
    raise_nofile(h->nn);
    h->tm = corral_calloc((size_t)h->nn, sizeof(corral__telem_t *));
    h->logs = corral_agent_logserver_new(NULL, corral__agent_page);
    corral_gpu_inventory_t *inv = corral_malloc(sizeof(*inv));
    for (int i = 0; i < h->nn; i++) {
        *inv = h->inv; /* shallow: the topology text stays h->inv's */
        corral__gpu_sim_rename(inv, h->nodes[i].name);
        h->tm[i] = corral__telem_new(inv, h->nodes[i].name, now);
        int port = 0;
        if (corral_agent_logserver_listen(h->logs, "127.0.0.1:0", h->tm[i], false, &port, err,
                                          errlen) != 0) {
            corral__log("hollow: node %s gets no metrics port: %s", h->nodes[i].name, err);
            continue;
        }
        h->nodes[i].kubelet_port = port;
    }
    corral_free(inv);
    return corral_agent_logserver_run(h->logs, err, errlen);
}

/* The holders of every hollow node's GPUs, from the pods (once a second
 * when something changed). */
static void owners_update(hollow_t *h, int64_t now)
{
    if (!h->owners_dirty || now < h->next_owners_us || !h->tm)
        return;
    h->owners_dirty = false;
    h->next_owners_us = now + 1000000;
    corral__gpu_owner_t *own = corral_calloc((size_t)h->nn * CORRAL_GPU_MAX, sizeof(*own));
    for (size_t i = 0; i < h->pods.n; i++) {
        const corral__pod_t *p = h->pods.pods[i];
        if (p->terminal || p->deleting || !p->gpu_ids)
            continue;
        int node = node_of(p), ids[CORRAL_GPU_MAX];
        int k = corral__gpu_ids_parse(p->gpu_ids, ids, CORRAL_GPU_MAX);
        for (int j = 0; j < k && node >= 0 && node < h->nn; j++)
            own[(size_t)node * CORRAL_GPU_MAX + (size_t)ids[j]] = (corral__gpu_owner_t){
                .ns = p->ns,
                .pod = p->name,
                .container = p->nctrs > p->ninit ? p->ctrs[p->ninit].name : "",
                .util = p->sim_util};
    }
    for (int n = 0; n < h->nn; n++)
        corral__telem_set_owners(h->tm[n], own + (size_t)n * CORRAL_GPU_MAX, h->inv.n, now);
    corral_free(own);
}

static int hollow_setup(hollow_t *h, char *err, size_t errlen)
{
    const corral__agent_opts_t *o = h->o;
    h->nn = o->hollow_n > 0 ? o->hollow_n : 1;
    h->nodes = corral_calloc((size_t)h->nn, sizeof(*h->nodes));
    h->next_lease = corral_calloc((size_t)h->nn, sizeof(int64_t));
    h->next_status = corral_calloc((size_t)h->nn, sizeof(int64_t));
    int64_t now = corral__now_us(), hb = (int64_t)o->heartbeat_s * 1000000;
    for (int i = 0; i < h->nn; i++) {
        const char *name =
            o->hollow_n > 0 ? corral_arena_printf(&h->arena, "%s%d", o->prefix, i) : o->node_name;
        corral__node_init(&h->nodes[i], name, &h->inv, o->lease_s);
        corral_hmap_put(&h->by_name, h->nodes[i].name, (uint32_t)i);
        h->next_lease[i] = now + hb * i / h->nn;
        h->next_status[i] = now + hb * o->status_every * i / h->nn + hb;
    }
    if (o->token_file && load_tokens(h, err, errlen) != 0)
        return CORRAL_EINVAL;
    if (metrics_setup(h, now, err, errlen) != 0)
        return CORRAL_EIO;
    h->nw = o->writers > 0 ? o->writers : 1;
    h->w = corral_calloc((size_t)h->nw, sizeof(*h->w));
    for (int i = 0; i < h->nw; i++) {
        writer_t *w = &h->w[i];
        w->h = h;
        pthread_mutex_init(&w->mu, NULL);
        pthread_cond_init(&w->cv, NULL);
        w->shared = corral_client_new(h->cfg);
        if (h->tokens)
            w->per_node = corral_calloc((size_t)h->nn, sizeof(corral_client_t *));
        pthread_create(&w->th, NULL, writer_main, w);
    }
    for (int i = 0; i < h->nn; i++)
        push_node(h, W_REGISTER, i);
    h->q = corral_evq_new();
    corral_informer_opts_t io = {.kind = CORRAL_KIND_POD, .name = "hollow pods"};
    if (corral_informer_start(h->cfg, &io, h->q, &h->inf, err, errlen) != 0)
        return CORRAL_EIO;
    corral__log("hollow: %d node(s), %d writer(s)", h->nn, h->nw);
    return 0;
}

static void hollow_teardown(hollow_t *h)
{
    corral_informer_stop(h->inf);
    for (int i = 0; h->w && i < h->nw; i++) {
        writer_t *w = &h->w[i];
        pthread_mutex_lock(&w->mu);
        w->stop = true;
        pthread_cond_signal(&w->cv);
        pthread_mutex_unlock(&w->mu);
        pthread_join(w->th, NULL);
        corral_client_free(w->shared);
        for (int k = 0; w->per_node && k < h->nn; k++)
            corral_client_free(w->per_node[k]);
        corral_free(w->per_node);
        pthread_mutex_destroy(&w->mu);
        pthread_cond_destroy(&w->cv);
    }
    corral_free(h->w);
    corral_agent_logserver_stop(h->logs);
    for (int i = 0; h->tm && i < h->nn; i++)
        corral__telem_free(h->tm[i]);
    corral_free(h->tm);
    corral_evq_free(h->q);
    corral__podtab_fini(&h->pods);
    for (size_t i = 0; i < h->nheap; i++)
        corral_free(h->heap[i].uid);
    corral_free(h->heap);
    for (int i = 0; h->nodes && i < h->nn; i++)
        corral__node_fini(&h->nodes[i]);
    corral_free(h->nodes);
    corral_free(h->next_lease);
    corral_free(h->next_status);
    corral_free(h->tokens);
    corral_hmap_fini(&h->by_name);
    corral_gpu_inventory_fini(&h->inv);
    corral_arena_fini(&h->arena);
}

static void tick(hollow_t *h, int64_t now)
{
    int64_t hb = (int64_t)h->o->heartbeat_s * 1000000;
    for (int i = 0; i < h->nn; i++) {
        if (now >= h->next_lease[i]) {
            h->next_lease[i] += hb;
            if (h->next_lease[i] < now)
                h->next_lease[i] = now + hb;
            push_node(h, W_LEASE, i);
        }
        if (now >= h->next_status[i]) {
            h->next_status[i] = now + hb * h->o->status_every;
            push_node(h, W_STATUS, i);
        }
    }
    owners_update(h, now);
    while (h->nheap > 0 && h->heap[0].at_us <= now) {
        timer_t_ t = heap_pop(h);
        corral__pod_t *p = corral__podtab_find(&h->pods, t.uid);
        if (p)
            complete(h, p, now);
        corral_free(t.uid);
    }
}

int corral_agent_hollow_run(const corral_agent_opts_t *o, const corral_client_config_t *cfg)
{
    hollow_t h = {.o = o, .cfg = cfg};
    corral_arena_init(&h.arena);
    corral_hmap_init(&h.by_name);
    corral__podtab_init(&h.pods);
    sigset_t sigs;
    corral__block_stop_signals(&sigs);
    char err[1024] = "";
    int rc = corral_gpu_discover(o->gpus, o->prefix, &h.inv, err, sizeof(err));
    if (rc == 0)
        rc = hollow_setup(&h, err, sizeof(err));
    if (rc)
        corral__log("hollow: %s", err);
    struct timespec zero = {0, 0};
    while (rc == 0 && sigtimedwait(&sigs, NULL, &zero) <= 0) {
        corral_watch_ev_t *evs = corral_evq_take(h.q, 50);
        int64_t now = corral__now_us();
        while (evs) {
            corral_watch_ev_t *next = evs->next;
            handle(&h, evs, now);
            corral_watch_ev_free(evs);
            evs = next;
        }
        tick(&h, now);
    }
    corral__log("hollow: shutting down");
    hollow_teardown(&h);
    return rc;
}
