/*
 * corral agent --kube: the node agent on a Kubernetes cluster, where kubelet
 * runs the pods. It runs no pod and writes no pod status; for the Node
 * kubelet registered (waited for, never created or deleted) it publishes
 * what Corral's scheduler reads and kubelet does not write:
 *   - the GPU Feature Discovery labels and corral.dev/gpu-topology (a merge
 *     patch of metadata, only the keys that differ);
 *   - GPU health: condition GPUHealthy (a strategic merge patch of
 *     nodes/NAME/status, conditions merge by type, so kubelet's stay) and the
 *     taint corral.dev/gpu-unhealthy:NoSchedule (spec.taints is replaced
 *     whole by a patch, so the patch carries the resourceVersion it read);
 *   - DCGM-named metrics on --metrics-listen for the pods kubelet runs (who
 *     holds which GPU: the running pods' corral.dev/gpu-ids);
 *   - the model cache (models.c: LocalModelNode, corral.dev/model-caches);
 *   - the kubelet device plugin (deviceplugin.h), whose lookup callback is
 *     here: which bound pod kubelet is admitting, from the pod informer.
 * Never written: the Lease, Ready and the other kubelet conditions,
 * capacity/allocatable (nvidia.com/gpu comes from the device plugin through
 * kubelet), addresses, nodeInfo.
 *
 * Threads: the agent's thread drains the informers and does every request;
 * the device plugin calls lookup on its own threads, so the table it reads
 * (kpods) is under mu, and a lookup that finds nothing waits a little for
 * the pod informer to catch up with kubelet (cond).
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/agent_int.h"
#include "agent/deviceplugin.h"
#include "agent/logserver.h"
#include "agent/telemetry.h"
#include "corral/json.h"
#include "corral/timefmt.h"

#define TICK_MS        100
#define TELEM_US       INT64_C(1000000)
#define LOOKUP_WAIT_MS 2000 /* a lookup that finds no pod waits this long for the informer */
#define NODE_PATH      "/api/v1/nodes"

/* --- the pure part: pods as the device plugin sees them ------------------------------------ */

static int64_t parse_time(const char *s)
{
    int64_t us = 0;
    return s && corral_time_parse(s, strlen(s), &us) == 0 ? us : 0;
}

/* A container's count of resource: limits (what extended resources use),
 * else requests; 0 when absent or not a whole number. */
static int ctr_want(const corral_val_t *ctr, const char *resource)
{
    const corral_val_t *res = corral_val_get(ctr, "resources");
    const corral_val_t *v = corral_val_get(corral_val_get(res, "limits"), resource);
    if (!v || !v->s)
        v = corral_val_get(corral_val_get(res, "requests"), resource);
    if (!v || !v->s)
        return 0;
    char *end = NULL;
    long n = strtol(v->s, &end, 10);
    return end && *end == '\0' && n > 0 && n <= CORRAL_GPU_MAX ? (int)n : 0;
}

/* Has kubelet started any container (it admitted the pod before)? */
static bool any_started(const corral_val_t *st)
{
    static const char *const lists[] = {"containerStatuses", "initContainerStatuses"};
    for (size_t l = 0; l < CORRAL_ARRAY_LEN(lists); l++) {
        const corral_val_t *cs = corral_val_get(st, lists[l]);
        for (size_t i = 0; cs && cs->kind == CORRAL_VAL_SEQ && i < cs->n; i++) {
            const corral_val_t *state = corral_val_get(cs->items[i], "state");
            const corral_val_t *started = corral_val_get(cs->items[i], "started");
            if (corral_val_get(state, "running") || corral_val_get(state, "terminated") ||
                (started && started->kind == CORRAL_VAL_BOOL && started->u.b))
                return true;
        }
    }
    return false;
}

static int64_t bound_time(const corral_val_t *st)
{
    const corral_val_t *cs = corral_val_get(st, "conditions");
    for (size_t i = 0; cs && cs->kind == CORRAL_VAL_SEQ && i < cs->n; i++) {
        const char *t = corral_val_get_str(cs->items[i], "type");
        const char *s = corral_val_get_str(cs->items[i], "status");
        if (t && s && !strcmp(t, "PodScheduled") && !strcmp(s, "True"))
            return parse_time(corral_val_get_str(cs->items[i], "lastTransitionTime"));
    }
    return 0;
}

void corral__kpod_clear(corral__kpod_t *kp)
{
    for (int i = 0; i < kp->nuuids; i++)
        corral_free(kp->uuids[i]);
    corral_free(kp->uuids);
    corral_free(kp->uid);
    corral_free(kp->ns);
    corral_free(kp->name);
    uint64_t given = kp->given;
    memset(kp, 0, sizeof(*kp));
    kp->given = given;
}

void corral__kpod_fill(corral__kpod_t *kp, const corral_obj_t *o, const char *resource,
                       const corral_gpu_inventory_t *inv)
{
    corral__kpod_clear(kp);
    kp->uid = corral_strdup(o->meta.uid ? o->meta.uid : "");
    kp->ns = corral_strdup(o->meta.namespace ? o->meta.namespace : "");
    kp->name = corral_strdup(o->meta.name ? o->meta.name : "");
    kp->created_us = o->meta.creation_us;
    const corral_val_t *st = corral_val_get(o->raw, "status");
    kp->bound_us = bound_time(st);
    const corral_val_t *cs = corral_val_dig(o->raw, "spec.containers");
    for (size_t i = 0; cs && cs->kind == CORRAL_VAL_SEQ && i < cs->n; i++) {
        if (kp->nctr == CORRAL__KPOD_MAX_CTRS)
            break;
        kp->want[kp->nctr++] = ctr_want(cs->items[i], resource);
    }
    const char *phase = corral_val_get_str(st, "phase");
    bool done = phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed"));
    kp->waiting = !done && !o->meta.deletion_us && !any_started(st);
    const char *ids = corral_strmap_get(&o->meta.annotations, "corral.dev/gpu-ids");
    int idx[CORRAL_GPU_MAX];
    int k = ids ? corral__gpu_ids_parse(ids, idx, CORRAL_GPU_MAX) : 0;
    kp->uuids = corral_calloc(k > 0 ? (size_t)k : 1, sizeof(char *));
    for (int i = 0; i < k; i++)
        kp->uuids[i] =
            inv && idx[i] >= 0 && idx[i] < inv->n ? corral_strdup(inv->gpus[idx[i]].uuid) : NULL;
    kp->nuuids = k > 0 ? k : 0;
}

static bool in_set(const char *id, const char *const *set, size_t n)
{
    for (size_t i = 0; id && i < n; i++)
        if (set[i] && !strcmp(set[i], id))
            return true;
    return false;
}

/* The container of kp this call is for (see corral__kpod_match). */
static bool next_slot(const corral__kpod_t *kp, const char *const *avail, size_t navail,
                      size_t want, int *ctr, int *off)
{
    int total = 0;
    for (int c = 0; c < kp->nctr; c++)
        total += kp->want[c];
    if (!kp->waiting || total == 0 || total != kp->nuuids)
        return false; /* gpu-ids absent or not what the containers ask */
    int at = 0;
    for (int c = 0; c < kp->nctr; c++) {
        int w = kp->want[c];
        if (w == 0)
            continue;
        bool fits = (size_t)w == want;
        for (int i = at; fits && i < at + w; i++)
            fits = in_set(kp->uuids[i], avail, navail);
        if (kp->given & (UINT64_C(1) << (c & 63))) {
            if (fits && navail == want) { /* the same devices again */
                *ctr = c;
                *off = at;
                return true;
            }
            at += w;
            continue;
        }
        if (!fits) /* kubelet allocates containers in order: this one is next */
            return false;
        *ctr = c;
        *off = at;
        return true;
    }
    return false;
}

static bool older(const corral__kpod_t *x, const corral__kpod_t *y)
{
    int64_t bx = x->bound_us ? x->bound_us : x->created_us;
    int64_t by = y->bound_us ? y->bound_us : y->created_us;
    if (bx != by)
        return bx < by;
    if (x->created_us != y->created_us)
        return x->created_us < y->created_us;
    return strcmp(x->uid ? x->uid : "", y->uid ? y->uid : "") < 0;
}

int corral__kpod_match(corral__kpod_t *const *pods, size_t n, const char *const *avail,
                       size_t navail, size_t want, int *ctr, int *off)
{
    int best = -1;
    for (size_t i = 0; i < n && want > 0; i++) {
        int c = 0, o = 0;
        if (!next_slot(pods[i], avail, navail, want, &c, &o))
            continue;
        if (best < 0 || older(pods[i], pods[best])) {
            best = (int)i;
            *ctr = c;
            *off = o;
        }
    }
    return best;
}

/* --- the agent ---------------------------------------------------------------------------- */

typedef struct kube {
    const corral__agent_opts_t *o;
    corral_client_t *c;
    corral_gpu_inventory_t inv;
    corral__node_t node;
    corral__telem_t *tm;
    corral_metrics_t *reg;
    corral_agent_logserver_t *srv;
    corral_evq_t *q;
    corral_informer_t *inf, *minf[3];
    corral__models_t *models;
    corral__podtab_t pods; /* for the metrics' owners and the model cache */
    /* the device plugin's view, under mu */
    pthread_mutex_t mu;
    pthread_cond_t cond;
    corral__kpod_t **kp;
    size_t nkp, capkp;
    corral__dp_t *dp;
    bool gpu_ok[CORRAL_GPU_MAX];
    char node_uid[128]; /* of the Node last seen; "" before */
    bool waiting_logged, alloc_warned;
    bool again; /* a write failed: sync the Node again in a second */
    int64_t next_node_us, next_telem_us, cond_written_us;
    char cond_written[700]; /* status|reason|message last written */
} kube_t;

static void kp_update(kube_t *k, const corral_obj_t *o)
{
    pthread_mutex_lock(&k->mu);
    corral__kpod_t *kp = NULL;
    for (size_t i = 0; i < k->nkp && !kp; i++)
        if (!strcmp(k->kp[i]->uid, o->meta.uid ? o->meta.uid : ""))
            kp = k->kp[i];
    if (!kp) {
        corral_grow((void **)&k->kp, &k->capkp, k->nkp + 1, sizeof(corral__kpod_t *));
        kp = k->kp[k->nkp++] = corral_calloc(1, sizeof(*kp));
    }
    corral__kpod_fill(kp, o, k->o->dp_resource, &k->inv);
    pthread_cond_broadcast(&k->cond);
    pthread_mutex_unlock(&k->mu);
}

/* The pod is gone: forget it (and what this agent gave it). */
static void kp_drop(kube_t *k, const char *uid, const char *ns, const char *name)
{
    pthread_mutex_lock(&k->mu);
    for (size_t i = 0; i < k->nkp; i++) {
        corral__kpod_t *kp = k->kp[i];
        if (uid ? strcmp(kp->uid, uid) != 0
                : strcmp(kp->ns, ns) != 0 || strcmp(kp->name, name) != 0)
            continue;
        corral__kpod_clear(kp);
        corral_free(kp);
        k->kp[i] = k->kp[--k->nkp];
        break;
    }
    pthread_mutex_unlock(&k->mu);
}

/* A known pod kubelet may be admitting that Corral did not place (no
 * gpu-ids), with a container asking want: its lookup fails at once rather
 * than waiting for a pod the informer has not delivered. Under mu. */
static bool unplaced_waiting(const kube_t *k, size_t want)
{
    for (size_t i = 0; i < k->nkp; i++) {
        const corral__kpod_t *kp = k->kp[i];
        if (!kp->waiting || kp->nuuids > 0)
            continue;
        for (int c = 0; c < kp->nctr && c < CORRAL__KPOD_MAX_CTRS; c++)
            if (kp->want[c] == (int)want && !(kp->given & (UINT64_C(1) << (c & 63))))
                return true;
    }
    return false;
}

/* The device plugin's lookup (deviceplugin.h). */
static int lookup(void *ctx, const char *const *available, size_t navailable, size_t want,
                  char (*ids)[CORRAL__KPOD_ID_LEN], char *pod, size_t podlen)
{
    kube_t *k = ctx;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += LOOKUP_WAIT_MS / 1000;
    pthread_mutex_lock(&k->mu);
    int i = -1, ctr = 0, off = 0;
    for (;;) {
        i = corral__kpod_match(k->kp, k->nkp, available, navailable, want, &ctr, &off);
        if (i >= 0 || unplaced_waiting(k, want) ||
            pthread_cond_timedwait(&k->cond, &k->mu, &until) != 0)
            break;
    }
    if (i < 0 && want > 0) /* the wait timed out: one last look */
        i = corral__kpod_match(k->kp, k->nkp, available, navailable, want, &ctr, &off);
    if (i >= 0) {
        corral__kpod_t *kp = k->kp[i];
        for (size_t j = 0; j < want; j++)
            snprintf(ids[j], CORRAL__KPOD_ID_LEN, "%s", kp->uuids[off + (int)j]);
        snprintf(pod, podlen, "%s/%s", kp->ns, kp->name);
        if (navailable == want) /* Allocate (kubelet chose these): the container has them */
            kp->given |= UINT64_C(1) << (ctr & 63);
    }
    pthread_mutex_unlock(&k->mu);
    return i >= 0 ? 0 : CORRAL_ENOENT;
}

/* The pod table the telemetry and the model cache read: containers'
 * states as kubelet reports them. */
static void pod_states(corral__pod_t *p, const corral_obj_t *o)
{
    const corral_val_t *st = corral_val_get(o->raw, "status");
    const char *phase = corral_val_get_str(st, "phase");
    p->terminal = phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed"));
    const corral_val_t *cs = corral_val_get(st, "containerStatuses");
    for (size_t i = 0; i < p->nctrs; i++) {
        corral__ctr_t *c = &p->ctrs[i];
        c->st = CORRAL__C_WAITING;
        for (size_t j = 0; cs && cs->kind == CORRAL_VAL_SEQ && j < cs->n && !c->init; j++) {
            const char *name = corral_val_get_str(cs->items[j], "name");
            if (!name || strcmp(name, c->name) != 0)
                continue;
            const corral_val_t *state = corral_val_get(cs->items[j], "state");
            c->st = corral_val_get(state, "running")      ? CORRAL__C_RUNNING
                    : corral_val_get(state, "terminated") ? CORRAL__C_TERMINATED
                                                          : CORRAL__C_WAITING;
        }
    }
}

static void pod_event(kube_t *k, corral_watch_ev_t *ev)
{
    if (ev->type == CORRAL_WATCH_SYNCED) {
        corral_watch_ev_free(ev);
        return;
    }
    corral__pod_t *p = ev->obj ? corral__podtab_find(&k->pods, ev->obj->meta.uid) : NULL;
    for (size_t i = 0; i < k->pods.n && !p && !ev->obj; i++)
        if (!strcmp(k->pods.pods[i]->ns, ev->ns) && !strcmp(k->pods.pods[i]->name, ev->name))
            p = k->pods.pods[i];
    if (ev->type == CORRAL_WATCH_DELETED || !ev->obj || ev->obj->info->kind != CORRAL_KIND_POD) {
        kp_drop(k, ev->obj ? ev->obj->meta.uid : NULL, ev->ns, ev->name);
        if (p && ev->type == CORRAL_WATCH_DELETED)
            corral__podtab_drop(&k->pods, p);
        corral_watch_ev_free(ev);
        return;
    }
    const corral_obj_t *o = ev->obj;
    kp_update(k, o);
    if (!p) {
        p = corral_calloc(1, sizeof(*p));
        p->uid = corral_strdup(o->meta.uid ? o->meta.uid : "");
        p->ns = corral_strdup(ev->ns);
        p->name = corral_strdup(ev->name);
        p->node = corral_strdup(k->o->node_name);
        const char *muri = corral_strmap_get(&o->meta.annotations, CORRAL_MODEL_URI_ANN);
        p->model_uri = muri && *muri ? corral_strdup(muri) : NULL;
        corral__pod_containers(p, o);
        corral__podtab_add(&k->pods, p);
    } else {
        corral_watch_ev_free(p->ev);
    }
    p->ev = ev;
    const char *ids = corral_strmap_get(&o->meta.annotations, "corral.dev/gpu-ids");
    corral_free(p->gpu_ids); /* the scheduler may write it after the binding */
    p->gpu_ids = ids && *ids ? corral_strdup(ids) : NULL;
    p->sim_util = corral__pod_sim_util(o);
    p->gpu_milli = corral__pod_gpu_milli(o);
    p->deleting = o->meta.deletion_us != 0;
    pod_states(p, o);
}

static void handle(kube_t *k, corral_watch_ev_t *ev)
{
    if (ev->kind == CORRAL_KIND_POD)
        pod_event(k, ev);
    else if (!k->models || !corral__models_event(k->models, ev))
        corral_watch_ev_free(ev);
}

/* --- the Node ------------------------------------------------------------------------------ */

static void log_failure(const kube_t *k, const char *what, const corral_client_resp_t *r)
{
    char reason[64], msg[400];
    if (r->code)
        corral_client_error(r, reason, sizeof(reason), msg, sizeof(msg));
    corral__log("node %s: %s failed: %s%ld %s", k->node.name, what, r->code ? "HTTP " : "", r->code,
                r->code ? msg : r->error);
}

/* Labels and annotations of ours that differ from the Node's, and the
 * taint when it must change: one merge patch of the Node. */
static void publish_meta(kube_t *k, corral_arena_t *a, const corral_val_t *cur)
{
    const corral__node_t *n = &k->node;
    corral_val_t *patch = corral__jmap(a, NULL, NULL);
    corral_val_t *meta = corral__jmap(a, patch, "metadata");
    const corral_val_t *labels = corral_val_dig(cur, "metadata.labels");
    const corral_val_t *anns = corral_val_dig(cur, "metadata.annotations");
    bool any = false;
    for (size_t i = 0; i < n->nlabels; i++) {
        const char *v = corral_val_get_str(labels, n->labels[i].key);
        if (!v || strcmp(v, n->labels[i].value) != 0) {
            corral__jstr(a, corral_val_ensure_map(a, meta, "labels"), n->labels[i].key,
                         n->labels[i].value);
            any = true;
        }
    }
    const char *t = corral_val_get_str(anns, CORRAL_GPU_TOPO_ANNOTATION);
    if (n->topology && (!t || strcmp(t, n->topology) != 0)) {
        corral__jstr(a, corral_val_ensure_map(a, meta, "annotations"), CORRAL_GPU_TOPO_ANNOTATION,
                     n->topology);
        any = true;
    }
    corral_val_t *taints = corral__node_gpu_taints(a, n, cur);
    if (taints) { /* taints are replaced whole: conflict with a concurrent edit */
        const char *rv = corral_val_get_str(corral_val_get(cur, "metadata"), "resourceVersion");
        if (rv)
            corral__jstr(a, meta, "resourceVersion", rv);
        corral_val_set(a, corral__jmap(a, patch, "spec"), "taints", taints);
        any = true;
    }
    if (!any)
        return;
    corral_client_resp_t r;
    corral_client_resp_init(&r);
    char path[512];
    snprintf(path, sizeof(path), NODE_PATH "/%s", n->name);
    if (corral__agent_send(k->c, "PATCH", path, "application/merge-patch+json", patch, &r) != 0 ||
        r.code != 200)
        log_failure(k, "patching labels, annotations and taints", &r);
    else if (taints)
        corral__log("node %s: taint %s:NoSchedule %s", n->name, CORRAL__GPU_TAINT,
                    n->gpu_bad ? "added" : "removed");
    if (r.code != 200)
        k->again = true; /* a conflict: read it again soon */
    corral_client_resp_fini(&r);
}

/* GPUHealthy through nodes/NAME/status: a strategic merge patch touches
 * only that condition. Written when it changes, and refreshed every
 * heartbeat x status-every (its lastHeartbeatTime). */
static void publish_condition(kube_t *k, corral_arena_t *a, int64_t now)
{
    const corral__node_t *n = &k->node;
    if (n->ngpu == 0)
        return;
    char key[sizeof(k->cond_written)];
    snprintf(key, sizeof(key), "%d|%s|%s", n->gpu_bad, n->gpu_reason, n->gpu_msg);
    int64_t every = (int64_t)k->o->heartbeat_s * k->o->status_every * 1000000;
    if (!strcmp(key, k->cond_written) && now - k->cond_written_us < every)
        return;
    corral_val_t *patch = corral__jmap(a, NULL, NULL);
    corral_val_t *seq = corral__jseq(a, corral__jmap(a, patch, "status"), "conditions");
    corral_val_push(a, seq, corral__node_gpu_condition(a, n, now));
    corral_client_resp_t r;
    corral_client_resp_init(&r);
    char path[512];
    snprintf(path, sizeof(path), NODE_PATH "/%s/status", n->name);
    if (corral__agent_send(k->c, "PATCH", path, "application/strategic-merge-patch+json", patch,
                           &r) == 0 &&
        r.code == 200) {
        snprintf(k->cond_written, sizeof(k->cond_written), "%s", key);
        k->cond_written_us = now;
    } else {
        log_failure(k, "patching the GPUHealthy condition", &r);
    }
    corral_client_resp_fini(&r);
}

/* kubelet's nvidia.com/gpu against what we see: said once, when they differ. */
static void check_allocatable(kube_t *k, const corral_val_t *cur)
{
    if (k->alloc_warned || k->node.ngpu == 0)
        return;
    const corral_val_t *al = corral_val_dig(cur, "status.allocatable");
    const char *v = corral_val_get_str(al, k->o->dp_resource);
    if (v && strtol(v, NULL, 10) == k->node.ngpu)
        return;
    k->alloc_warned = true;
    corral__log("node %s: kubelet reports %s %s but this agent sees %d GPUs; the scheduler "
                "counts kubelet's figure (is a device plugin registered? %s)",
                k->node.name, k->o->dp_resource, v ? v : "absent", k->node.ngpu,
                k->o->device_plugin ? "this agent's registers with kubelet at start"
                                    : "--device-plugin=false: NVIDIA's must run");
}

/* Read the Node, then publish what differs. Returns false while it does not exist. */
static bool node_sync(kube_t *k, int64_t now)
{
    corral_arena_t a;
    corral_arena_init(&a);
    corral_client_resp_t r;
    corral_client_resp_init(&r);
    char path[512];
    snprintf(path, sizeof(path), NODE_PATH "/%s", k->node.name);
    bool found = false;
    corral_val_t *cur = NULL;
    corral_json_err_t je;
    if (corral__agent_send(k->c, "GET", path, NULL, NULL, &r) == 0 && r.code == 404) {
        if (!k->waiting_logged)
            corral__log("node %s: waiting for kubelet to register it", k->node.name);
        k->waiting_logged = true;
        k->node_uid[0] = '\0';
    } else if (r.code != 200 || corral_json_parse(&a, r.body.p, r.body.len, &cur, &je) != 0) {
        log_failure(k, "reading the Node", &r);
    } else {
        found = true;
        const char *uid = corral_val_get_str(corral_val_get(cur, "metadata"), "uid");
        if (uid && strcmp(uid, k->node_uid) != 0) {
            corral__log("node %s (uid %s): publishing %d GPUs' labels, topology and health",
                        k->node.name, uid, k->node.ngpu);
            snprintf(k->node_uid, sizeof(k->node_uid), "%s", uid);
            k->cond_written[0] = '\0'; /* a new Node: everything again */
            k->waiting_logged = false;
        }
        publish_meta(k, &a, cur);
        publish_condition(k, &a, now);
        check_allocatable(k, cur);
    }
    corral_client_resp_fini(&r);
    corral_arena_fini(&a);
    return found;
}

/* --- the loop -------------------------------------------------------------------------------- */

static void telemetry(kube_t *k, int64_t now)
{
    if (now < k->next_telem_us)
        return;
    k->next_telem_us = now + TELEM_US;
    corral__usage_owners(k->tm, &k->pods, k->inv.n, now);
    corral__telem_update(k->tm, now);
    char reason[32], msg[512];
    bool ok = corral__telem_healthy(k->tm, now, reason, sizeof(reason), msg, sizeof(msg));
    if (k->inv.n > 0 && corral__node_set_gpu_health(&k->node, ok, reason, msg, now)) {
        corral__log("node %s: GPUHealthy=%s (%s: %s)", k->node.name, ok ? "True" : "False", reason,
                    msg);
        k->next_node_us = now; /* tell the API now */
    }
    for (int i = 0; i < k->inv.n; i++) {
        bool g = corral__telem_gpu_healthy(k->tm, i, now);
        if (g == k->gpu_ok[i])
            continue;
        k->gpu_ok[i] = g;
        if (k->dp)
            corral__dp_set_health(k->dp, k->inv.gpus[i].uuid, g);
    }
}

static void dp_log(void *ctx, const char *msg)
{
    (void)ctx;
    corral__log("device plugin: %s", msg);
}

/* The GPU's NUMA node from sysfs (-1 when unknown, e.g. simulated). */
static int numa_node(const corral_gpu_t *g)
{
    char bus[32], path[128];
    const char *b = g->pci_bus_id;
    if (strlen(b) > 12 && !strncmp(b, "0000", 4))
        b += 4; /* NVML's 8-digit domain, sysfs's 4 */
    snprintf(bus, sizeof(bus), "%s", b);
    for (char *p = bus; *p; p++)
        *p = (char)(*p >= 'A' && *p <= 'F' ? *p - 'A' + 'a' : *p);
    snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/numa_node", bus);
    FILE *fp = fopen(path, "re");
    int n = -1;
    if (fp) {
        if (fscanf(fp, "%d", &n) != 1)
            n = -1;
        fclose(fp);
    }
    return n;
}

static int dp_start(kube_t *k)
{
    corral__dp_device_t devs[CORRAL_GPU_MAX];
    for (int i = 0; i < k->inv.n; i++) {
        memset(&devs[i], 0, sizeof(devs[i]));
        snprintf(devs[i].id, sizeof(devs[i].id), "%s", k->inv.gpus[i].uuid);
        devs[i].index = k->inv.gpus[i].index;
        devs[i].healthy = k->gpu_ok[i];
        devs[i].numa_node = strncmp(k->inv.source, "nvml", 4) ? -1 : numa_node(&k->inv.gpus[i]);
    }
    corral__dp_config_t cfg = {.plugin_dir = k->o->dp_dir,
                               .resource = k->o->dp_resource,
                               .cdi_dir = k->o->cdi_dir && *k->o->cdi_dir ? k->o->cdi_dir : NULL,
                               .lookup = lookup,
                               .ctx = k,
                               .log = dp_log};
    char err[512] = "";
    k->dp = corral__dp_start(&cfg, devs, (size_t)k->inv.n, err, sizeof(err));
    if (!k->dp) {
        corral__log("cannot start the device plugin in %s: %s (--device-plugin=false when "
                    "NVIDIA's device plugin serves %s)",
                    k->o->dp_dir, err, k->o->dp_resource);
        return CORRAL_EIO;
    }
    corral__log("device plugin: serving %d GPUs as %s in %s", k->inv.n, k->o->dp_resource,
                k->o->dp_dir);
    return 0;
}

/* Pods with a model URI: fetch it into the cache (pods mount the cache
 * directory) and keep it from eviction while they live. */
static void models(kube_t *k, int64_t now)
{
    if (!k->models)
        return;
    for (size_t i = 0; i < k->pods.n; i++) {
        corral__pod_t *p = k->pods.pods[i];
        char msg[200];
        if (p->model_uri && !p->model_dir && !p->terminal && !p->deleting &&
            (!p->retry_us || now >= p->retry_us) &&
            corral__models_pod(k->models, p, now, msg, sizeof(msg)) != 0)
            p->retry_us = now + 1000000;
    }
    corral__models_tick(k->models, k->c, &k->pods, now);
}

static bool stop_requested(const sigset_t *set)
{
    struct timespec zero = {0, 0};
    return sigtimedwait(set, NULL, &zero) > 0;
}

static int setup(kube_t *k, const corral_client_config_t *cfg)
{
    const corral__agent_opts_t *o = k->o;
    char err[1024] = "";
    k->c = corral_client_new(cfg);
    corral__node_init(&k->node, o->node_name, &k->inv, o->lease_s);
    k->tm = corral__telem_new(&k->inv, o->node_name, corral__now_us());
    k->reg = corral_metrics_new();
    corral__telem_set_extra(k->tm, k->reg);
    corral__telem_set_xid_hold(k->tm, o->xid_hold_s);
    for (int i = 0; i < k->inv.n; i++)
        k->gpu_ok[i] = true;
    const char *ml = o->metrics_listen;
    if (ml && *ml && strcmp(ml, "off") != 0) {
        int port = 0;
        k->srv = corral_agent_logserver_new(o->root, corral__agent_page);
        if (corral_agent_logserver_listen(k->srv, ml, k->tm, false, &port, err, sizeof(err)) != 0 ||
            corral_agent_logserver_run(k->srv, err, sizeof(err)) != 0) {
            corral__log("cannot serve /metrics on %s: %s (--metrics-listen off disables it)", ml,
                        err);
            return CORRAL_EIO;
        }
        corral__log("serving /metrics on %s (port %d)", ml, port);
    }
    k->q = corral_evq_new();
    if (corral__agent_model_cache(o, cfg, k->q, k->reg, &k->models, k->minf) != 0)
        return CORRAL_EIO;
    char sel[512];
    snprintf(sel, sizeof(sel), "spec.nodeName=%s", o->node_name);
    corral_informer_opts_t io = {.kind = CORRAL_KIND_POD, .field_selector = sel, .name = "pods"};
    if (corral_informer_start(cfg, &io, k->q, &k->inf, err, sizeof(err)) != 0) {
        corral__log("cannot start the pod informer: %s", err);
        return CORRAL_EIO;
    }
    if (o->device_plugin && k->inv.n > 0 && dp_start(k) != 0)
        return CORRAL_EIO;
    return 0;
}

static void teardown(kube_t *k)
{
    corral__dp_stop(k->dp); /* before the table its lookups read */
    corral_informer_stop(k->inf);
    for (int i = 0; i < 3; i++)
        corral_informer_stop(k->minf[i]);
    corral__models_free(k->models);
    corral_agent_logserver_stop(k->srv);
    corral__telem_free(k->tm);
    corral_metrics_free(k->reg);
    corral__podtab_fini(&k->pods);
    corral_evq_free(k->q);
    for (size_t i = 0; i < k->nkp; i++) {
        corral__kpod_clear(k->kp[i]);
        corral_free(k->kp[i]);
    }
    corral_free(k->kp);
    pthread_cond_destroy(&k->cond);
    pthread_mutex_destroy(&k->mu);
    corral__node_fini(&k->node);
    corral_client_free(k->c);
    corral_gpu_inventory_fini(&k->inv);
}

int corral_agent_kube_run(const corral_agent_opts_t *o, const corral_client_config_t *cfg)
{
    kube_t k = {.o = o};
    corral__podtab_init(&k.pods);
    pthread_mutex_init(&k.mu, NULL);
    pthread_cond_init(&k.cond, NULL);
    sigset_t sigs;
    corral__block_stop_signals(&sigs);
    char err[1024] = "";
    if (corral_gpu_discover(o->gpus, o->node_name, &k.inv, err, sizeof(err)) != 0) {
        corral__log("GPU discovery (%s): %s", o->gpus, err);
        corral__podtab_fini(&k.pods);
        pthread_cond_destroy(&k.cond);
        pthread_mutex_destroy(&k.mu);
        return CORRAL_EINVAL;
    }
    int rc = setup(&k, cfg);
    if (rc == 0)
        corral__log("node %s: cluster mode (%d GPUs from %s); kubelet runs the pods", o->node_name,
                    k.inv.n, k.inv.source);
    while (rc == 0 && !stop_requested(&sigs)) {
        corral_watch_ev_t *evs = corral_evq_take(k.q, TICK_MS);
        int64_t now = corral__now_us();
        while (evs) {
            corral_watch_ev_t *next = evs->next;
            evs->next = NULL;
            handle(&k, evs);
            evs = next;
        }
        telemetry(&k, now);
        if (now >= k.next_node_us) {
            /* every second until the Node exists, then every heartbeat */
            k.again = false;
            bool found = node_sync(&k, now);
            k.next_node_us =
                now + (found && !k.again ? (int64_t)o->heartbeat_s * 1000000 : 1000000);
        }
        models(&k, now);
    }
    corral__log("shutting down");
    teardown(&k);
    return rc;
}
