/*
 * corral agent with the process runtime: discovers the GPUs, registers the
 * Node, then one thread does everything: it drains the pod informer's
 * events (pods with spec.nodeName = this node), renews the Lease and the
 * Node status, and every tick (100 ms) drives each pod's state machine
 * (sync.c) over the process runtime (proc.c). SIGTERM/SIGINT are blocked in
 * every thread and taken with sigtimedwait, so shutdown is orderly: with
 * --stop-pods-on-exit every pod is stopped first (SIGTERM, then SIGKILL
 * after min(grace, 10 s)) and marked to be started again; without it the
 * workloads keep running under their shims and the next agent adopts them.
 * After the first complete LIST, what runs for pods that are no longer
 * bound here (deleted while the agent was down) is killed and removed.
 */
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent/agent_int.h"
#include "agent/logserver.h"
#include "agent/telemetry.h"

#define TICK_MS       100
#define STOP_GRACE_US (10 * INT64_C(1000000))
#define TELEM_US      INT64_C(1000000) /* owners, usage and health every second */

typedef struct agent {
    const corral__agent_opts_t *o;
    corral_client_t *c;
    corral_gpu_inventory_t inv;
    corral__node_t node;
    corral__proc_t pr;
    corral_evq_t *q;
    corral_informer_t *inf;
    corral_agent_logserver_t *logs;
    corral__podtab_t pods;
    bool synced;
    corral__telem_t *tm;
    int64_t last_tick_us, next_telem_us;
    char podip_dir[4096 - 64];
    corral__prober_t *prober;   /* made when the first probe is due */
    corral__models_t *models;   /* the model cache, or NULL when its directory cannot be made */
    corral_metrics_t *reg;      /* the agent's own series beyond the telemetry's */
    corral_informer_t *minf[3]; /* LocalModelCaches, LocalModelNodeGroups, our Node */
} agent_t;

void corral_agent_opts_init(corral_agent_opts_t *o)
{
    memset(o, 0, sizeof(*o));
    o->gpus = "auto";
    o->runtime = "process";
    o->root = "/var/lib/corral/agent";
    o->listen = "127.0.0.1:0";
    o->lease_s = 40;
    o->heartbeat_s = 10;
    o->prefix = "hollow-";
    o->backoff_ms = 10000;
    o->backoff_max_ms = 300000;
    o->writers = 4;
    o->status_every = 5;
    o->metrics_listen = ":9400";
    o->xid_hold_s = 300;
    o->device_plugin = true;
    o->dp_dir = "/var/lib/kubelet/device-plugins";
    o->dp_resource = "nvidia.com/gpu";
}

/* --- events --------------------------------------------------------------------------------- */

static void begin_delete(agent_t *ag, corral__pod_t *p, const corral_obj_t *o)
{
    (void)ag;
    p->deleting = true;
    p->grace_s = o->meta.deletion_grace_seconds.set ? o->meta.deletion_grace_seconds.v
                                                    : o->u.pod->spec.termination_grace_seconds;
    if (p->grace_s < 0)
        p->grace_s = 0;
}

/* Claim the pod's own loopback address (the one recorded in its directory
 * first, so an adopted pod keeps its address) and record it. */
static void pod_address(agent_t *ag, corral__pod_t *p)
{
    corral_arena_t a;
    corral_arena_init(&a);
    const char *rec =
        corral_arena_printf(&a, "%s/.corral/podip", corral__pod_dir(&a, ag->o->root, p->uid));
    char prefer[CORRAL__PODIP_LEN] = "";
    FILE *fp = fopen(rec, "re");
    if (fp) {
        if (!fgets(prefer, sizeof(prefer), fp))
            prefer[0] = '\0';
        prefer[strcspn(prefer, "\n")] = '\0';
        fclose(fp);
    }
    p->ip = corral_malloc(sizeof(*p->ip));
    if (corral__podip_claim(p->ip, ag->podip_dir, p->uid, prefer) != 0) {
        corral__log("pod %s/%s: no free pod address in %s: using the host's", p->ns, p->name,
                    ag->podip_dir);
        corral_free(p->ip);
        p->ip = NULL;
    } else {
        if (prefer[0] && strcmp(prefer, p->ip->ip) != 0)
            corral__log("pod %s/%s: its address %s was taken: now %s", p->ns, p->name, prefer,
                        p->ip->ip);
        corral__agent_write_file(rec, p->ip->ip, strlen(p->ip->ip));
    }
    corral_arena_fini(&a);
}

static corral__pod_t *new_pod(agent_t *ag, corral_watch_ev_t *ev, int64_t now)
{
    const corral_obj_t *o = ev->obj;
    corral__pod_t *p = corral_calloc(1, sizeof(*p));
    p->uid = corral_strdup(o->meta.uid ? o->meta.uid : "");
    p->ns = corral_strdup(ev->ns);
    p->name = corral_strdup(ev->name);
    p->node = corral_strdup(ag->o->node_name);
    const char *ids = corral_strmap_get(&o->meta.annotations, "corral.dev/gpu-ids");
    p->gpu_ids = ids ? corral_strdup(ids) : NULL;
    const char *muri = corral_strmap_get(&o->meta.annotations, CORRAL_MODEL_URI_ANN);
    p->model_uri = muri && *muri ? corral_strdup(muri) : NULL;
    if (ag->pr.sim_gpus && ids && *ids) {
        corral_arena_t a;
        corral_arena_init(&a);
        p->gpu_load = corral_strdup(corral__pod_gpu_load_path(&a, ag->o->root, p->uid));
        corral_arena_fini(&a);
    }
    p->sim_util = corral__pod_sim_util(o);
    p->gpu_milli = corral__pod_gpu_milli(o);
    p->ev = ev;
    corral__pod_containers(p, o);
    p->start_us = o->u.pod->status.start_us ? o->u.pod->status.start_us : now;
    const char *phase = o->u.pod->status.phase;
    if (phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed"))) {
        p->terminal = true; /* finished before: nothing to run */
        corral__proc_adopt(&ag->pr, p, now);
    } else if (corral__proc_adopt(&ag->pr, p, now)) {
        corral__log("pod %s/%s: found its state from a previous run", p->ns, p->name);
    }
    corral__proc_record_pod(&ag->pr, p);
    pod_address(ag, p);
    for (size_t i = 0; i < p->nctrs; i++)
        if (p->ctrs[i].st == CORRAL__C_WAITING)
            snprintf(p->ctrs[i].wreason, sizeof(p->ctrs[i].wreason), "ContainerCreating");
    corral__podtab_add(&ag->pods, p);
    return p;
}

/* The pod is gone from the API: kill what is left and forget it. */
static void pod_gone(agent_t *ag, corral__pod_t *p)
{
    for (size_t i = 0; i < p->nctrs; i++)
        corral__proc_signal(&ag->pr, p, &p->ctrs[i], SIGKILL);
    corral__proc_cleanup(&ag->pr, p);
    corral__podtab_drop(&ag->pods, p);
}

/* After the first complete LIST: kill and remove what runs for pods that are
 * not bound here any more. */
static void purge_strays(agent_t *ag)
{
    char dir[4096];
    snprintf(dir, sizeof(dir), "%s/pods", ag->o->root);
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.' || corral__podtab_find(&ag->pods, de->d_name))
            continue;
        corral__log("pod uid %s is not bound to this node any more: killing what is left of it",
                    de->d_name);
        corral__proc_purge(&ag->pr, de->d_name);
    }
    closedir(d);
}

static void handle(agent_t *ag, corral_watch_ev_t *ev, int64_t now)
{
    if (ev->kind != CORRAL_KIND_POD) {
        if (!ag->models || !corral__models_event(ag->models, ev))
            corral_watch_ev_free(ev);
        return;
    }
    if (ev->type == CORRAL_WATCH_SYNCED) {
        if (!ag->synced)
            purge_strays(ag);
        ag->synced = true;
        corral_watch_ev_free(ev);
        return;
    }
    corral__pod_t *p = ev->obj ? corral__podtab_find(&ag->pods, ev->obj->meta.uid) : NULL;
    if (!p && !ev->obj) { /* a deletion seen by a relist */
        for (size_t i = 0; i < ag->pods.n && !p; i++)
            if (!strcmp(ag->pods.pods[i]->ns, ev->ns) && !strcmp(ag->pods.pods[i]->name, ev->name))
                p = ag->pods.pods[i];
    }
    if (ev->type == CORRAL_WATCH_DELETED) {
        if (p)
            pod_gone(ag, p);
        corral_watch_ev_free(ev);
        return;
    }
    if (!ev->obj || ev->obj->info->kind != CORRAL_KIND_POD) {
        corral_watch_ev_free(ev);
        return;
    }
    if (!p) {
        p = new_pod(ag, ev, now);
    } else {
        corral_watch_ev_free(p->ev);
        p->ev = ev;
    }
    if (ev->obj->meta.deletion_us && !p->deleting)
        begin_delete(ag, p, ev->obj);
}

/* --- driving one pod ------------------------------------------------------------------------- */

static size_t running(const corral__pod_t *p)
{
    size_t n = 0;
    for (size_t i = 0; i < p->nctrs; i++)
        n += p->ctrs[i].st == CORRAL__C_RUNNING;
    return n;
}

static void drive_delete(agent_t *ag, corral__pod_t *p, int64_t now)
{
    if (!p->kill_deadline_us) {
        p->kill_deadline_us = now + p->grace_s * 1000000;
        for (size_t i = 0; i < p->nctrs; i++)
            corral__proc_signal(&ag->pr, p, &p->ctrs[i], SIGTERM);
    }
    if (running(p) && now >= p->kill_deadline_us && !p->killed) {
        p->killed = true;
        for (size_t i = 0; i < p->nctrs; i++)
            corral__proc_signal(&ag->pr, p, &p->ctrs[i], SIGKILL);
    }
    if (!running(p) && !p->finalized && p->gpu_ran && !p->last_status_final) {
        /* the GPU time it used goes out with its last status, before it is removed */
        p->last_status_final = true;
        corral__pod_write_status(ag->c, p, "127.0.0.1", now);
    }
    if (!running(p) && !p->finalized && corral__pod_finalize(ag->c, p) == 0)
        p->finalized = true;
}

/* The restart policy for a container whose instance ended. */
static void after_exit(agent_t *ag, corral__pod_t *p, corral__ctr_t *c, int64_t now)
{
    c->handled = true;
    int code = c->term.exit_code;
    bool restart = c->init ? code != 0 && strcmp(p->restart_policy, "Never") != 0
                           : corral__should_restart(p->restart_policy, code);
    if (c->agent_stop) {
        c->agent_stop = false;
        c->last = c->term;
        c->st = CORRAL__C_WAITING;
        c->next_start_us = now;
        snprintf(c->wreason, sizeof(c->wreason), "ContainerCreating");
        return;
    }
    if (!restart || p->freason[0])
        return;
    if (c->term.finished_us - c->term.started_us > 2 * ag->o->backoff_max_ms * 1000)
        c->backoff_ms = 0; /* it ran fine for a long while */
    c->last = c->term;
    c->st = CORRAL__C_WAITING;
    c->next_start_us = now + c->backoff_ms * 1000;
    if (c->backoff_ms > 0) {
        char d[32];
        snprintf(c->wreason, sizeof(c->wreason), "CrashLoopBackOff");
        snprintf(d, sizeof(d), "%llds", (long long)(c->backoff_ms + 999) / 1000);
        snprintf(c->wmsg, sizeof(c->wmsg),
                 "back-off %s restarting failed container=%s pod=%s_%s(%s)", d, c->name, p->name,
                 p->ns, p->uid);
    } else {
        snprintf(c->wreason, sizeof(c->wreason), "ContainerCreating");
    }
    c->backoff_ms = corral__backoff_next(c->backoff_ms, ag->o->backoff_ms, ag->o->backoff_max_ms);
}

static void maybe_start(agent_t *ag, corral__pod_t *p, corral__ctr_t *c, int64_t now)
{
    if (c->st != CORRAL__C_WAITING || now < c->next_start_us || p->freason[0])
        return;
    int rc = corral__proc_start(&ag->pr, p, c, now);
    if (rc && c->st == CORRAL__C_WAITING) { /* config error: try again later */
        int64_t wait = ag->o->backoff_ms < 1000 ? ag->o->backoff_ms : 1000;
        c->next_start_us = now + wait * 1000;
    }
}

static void drive(agent_t *ag, corral__pod_t *p, int64_t now)
{
    if (p->terminal && !p->deleting) { /* reported; only a failed write is retried */
        if (p->retry_us && now >= p->retry_us)
            corral__pod_write_status(ag->c, p, "127.0.0.1", now);
        return;
    }
    for (size_t i = 0; i < p->nctrs; i++)
        corral__proc_poll(&ag->pr, p, &p->ctrs[i], now);
    if (p->deleting) {
        drive_delete(ag, p, now);
        return;
    }
    if (!p->last_status && corral__pod_write_status(ag->c, p, "127.0.0.1", now) != 0)
        return;                          /* its address is reported before its containers start */
    if (p->model_uri && !p->model_dir) { /* an init phase: its model into the node's cache */
        char msg[200];
        int rc = corral__models_pod(ag->models, p, now, msg, sizeof(msg));
        if (rc != 0) {
            for (size_t i = 0; i < p->nctrs; i++) {
                corral__ctr_t *c = &p->ctrs[i];
                if (c->st != CORRAL__C_WAITING)
                    continue;
                snprintf(c->wreason, sizeof(c->wreason), "%s",
                         rc == CORRAL_EAGAIN ? "ContainerCreating" : "ModelFetchError");
                snprintf(c->wmsg, sizeof(c->wmsg), "%s", msg);
            }
            if (!p->retry_us || now >= p->retry_us)
                corral__pod_write_status(ag->c, p, "127.0.0.1", now);
            return;
        }
        for (size_t i = 0; i < p->nctrs; i++)
            p->ctrs[i].wmsg[0] = '\0';
    }
    for (size_t i = 0; i < p->nctrs; i++)
        if (p->ctrs[i].st == CORRAL__C_TERMINATED && !p->ctrs[i].handled)
            after_exit(ag, p, &p->ctrs[i], now);
    size_t i = 0;
    for (; i < p->ninit; i++) { /* init containers one at a time, in order */
        corral__ctr_t *c = &p->ctrs[i];
        if (c->st == CORRAL__C_TERMINATED && c->term.exit_code == 0)
            continue;
        maybe_start(ag, p, c, now);
        break;
    }
    if (i == p->ninit)
        for (; i < p->nctrs; i++)
            maybe_start(ag, p, &p->ctrs[i], now);
    const char *phase = corral__pod_phase(p);
    if (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed"))
        p->terminal = true;
    if (!p->retry_us || now >= p->retry_us)
        corral__pod_write_status(ag->c, p, "127.0.0.1", now);
}

/* --- readiness probes ------------------------------------------------------------------------ */

#define PROBE_THREADS 4

/* Count the probes that finished, then hand the due ones to the workers. */
static void probes(agent_t *ag, int64_t now)
{
    corral__probe_result_t r;
    while (ag->prober && corral__prober_take(ag->prober, &r)) {
        corral__pod_t *p = corral__podtab_find(&ag->pods, r.uid);
        corral__ctr_t *c = p && r.ctr >= 0 && (size_t)r.ctr < p->nctrs ? &p->ctrs[r.ctr] : NULL;
        if (c && c->rp && c->st == CORRAL__C_RUNNING && c->instance == r.instance) {
            if (!r.ok)
                snprintf(c->rs.msg, sizeof(c->rs.msg), "%s", r.msg);
            if (corral__probe_record(c->rp, &c->rs, r.ok, now))
                corral__log("pod %s/%s container %s: %s%s", p->ns, p->name, c->name,
                            c->rs.ready ? "ready" : "not ready: ", c->rs.ready ? "" : c->rs.msg);
        }
        corral_free(r.uid);
    }
    for (size_t i = 0; i < ag->pods.n; i++) {
        corral__pod_t *p = ag->pods.pods[i];
        if (p->deleting || p->terminal)
            continue;
        for (size_t k = p->ninit; k < p->nctrs; k++) {
            corral__ctr_t *c = &p->ctrs[k];
            if (!c->rp || c->st != CORRAL__C_RUNNING ||
                !corral__probe_due(c->rp, &c->rs, c->started_us, now))
                continue;
            if (!ag->prober)
                ag->prober = corral__prober_new(PROBE_THREADS);
            corral_arena_t a;
            corral_arena_init(&a);
            if (corral__prober_submit(ag->prober, p->uid, (int)k, c->instance, c->rp,
                                      corral__pod_ip(p, "127.0.0.1"), c->env,
                                      corral__pod_dir(&a, ag->o->root, p->uid)) == 0)
                c->rs.busy = true;
            corral_arena_fini(&a);
        }
    }
}

/* --- shutdown ------------------------------------------------------------------------------- */

static void sleep_ms(int ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

static void stop_all(agent_t *ag)
{
    int64_t now = corral__now_us(), grace = 0;
    size_t n = 0;
    for (size_t i = 0; i < ag->pods.n; i++) {
        corral__pod_t *p = ag->pods.pods[i];
        if (!running(p))
            continue;
        corral__proc_mark_stopped(&ag->pr, p);
        int64_t g = p->ev ? p->ev->obj->u.pod->spec.termination_grace_seconds * 1000000 : 0;
        grace = g > grace ? g : grace;
        for (size_t k = 0; k < p->nctrs; k++)
            corral__proc_signal(&ag->pr, p, &p->ctrs[k], SIGTERM);
        n++;
    }
    if (!n)
        return;
    corral__log("stopping %zu pod(s) (--stop-pods-on-exit)", n);
    int64_t deadline = now + (grace < STOP_GRACE_US ? grace : STOP_GRACE_US);
    bool killed = false;
    for (;;) {
        now = corral__now_us();
        corral__proc_reap(&ag->pr);
        size_t left = 0;
        for (size_t i = 0; i < ag->pods.n; i++) {
            corral__pod_t *p = ag->pods.pods[i];
            for (size_t k = 0; k < p->nctrs; k++) {
                corral__proc_poll(&ag->pr, p, &p->ctrs[k], now);
                if (!killed && now >= deadline)
                    corral__proc_signal(&ag->pr, p, &p->ctrs[k], SIGKILL);
            }
            left += running(p);
        }
        killed = killed || now >= deadline;
        if (!left || now > deadline + 5 * INT64_C(1000000))
            break;
        sleep_ms(20);
    }
}

/* --- the loop --------------------------------------------------------------------------------- */

/* GPU time of running pods every tick; owners, readings, usage and health every second. */
static void telemetry(agent_t *ag, int64_t now)
{
    if (ag->last_tick_us && now > ag->last_tick_us)
        corral__usage_integrate(ag->tm, &ag->pods, now - ag->last_tick_us);
    ag->last_tick_us = now;
    if (now < ag->next_telem_us)
        return;
    ag->next_telem_us = now + TELEM_US;
    corral__usage_owners(ag->tm, &ag->pods, ag->inv.n, now);
    corral__telem_update(ag->tm, now);
    corral__usage_collect(ag->tm, &ag->pr, &ag->pods, now);
    char reason[32], msg[512];
    bool ok = corral__telem_healthy(ag->tm, now, reason, sizeof(reason), msg, sizeof(msg));
    if (ag->inv.n > 0 && corral__node_set_gpu_health(&ag->node, ok, reason, msg, now)) {
        corral__log("node %s: GPUHealthy=%s (%s: %s)", ag->node.name, ok ? "True" : "False", reason,
                    msg);
        ag->node.next_status_us = now; /* tell the API now, not at the next status period */
    }
}

static bool stop_requested(const sigset_t *set)
{
    struct timespec zero = {0, 0};
    return sigtimedwait(set, NULL, &zero) > 0;
}

int corral__agent_model_cache(const corral__agent_opts_t *o, const corral_client_config_t *cfg,
                              corral_evq_t *q, corral_metrics_t *reg, corral__models_t **models,
                              corral_informer_t *inf[3])
{
    char dir[4096], err[1024];
    if (o->model_cache_dir && *o->model_cache_dir)
        snprintf(dir, sizeof(dir), "%s", o->model_cache_dir);
    else
        snprintf(dir, sizeof(dir), "%s/models", o->root);
    *models = corral__models_new(o->node_name, dir, o->pvc_root, reg);
    if (!*models) {
        corral__log("cannot create the model cache %s: no model is cached on this node (pods "
                    "with %s wait)",
                    dir, CORRAL_MODEL_URI_ANN);
        return 0;
    }
    char nsel[512];
    snprintf(nsel, sizeof(nsel), "metadata.name=%s", o->node_name);
    corral_informer_opts_t io[3] = {
        {.kind = CORRAL_KIND_LOCALMODELCACHE, .name = "localmodelcaches"},
        {.kind = CORRAL_KIND_LOCALMODELNODEGROUP, .name = "localmodelnodegroups"},
        {.kind = CORRAL_KIND_NODE, .field_selector = nsel, .name = "node"}};
    for (int i = 0; i < 3; i++) {
        if (corral_informer_start(cfg, &io[i], q, &inf[i], err, sizeof(err)) != 0) {
            corral__log("cannot start the %s informer: %s", io[i].name, err);
            return CORRAL_EIO;
        }
    }
    return 0;
}

static int setup(agent_t *ag, const corral_client_config_t *cfg, const sigset_t *sigs)
{
    const corral__agent_opts_t *o = ag->o;
    char err[1024] = "";
    for (const char *sub = "pods"; sub; sub = !strcmp(sub, "pods") ? "logs" : NULL) {
        snprintf(err, sizeof(err), "%s/%s", o->root, sub);
        if (corral__mkdirs(err) != 0) {
            corral__log("cannot create %s", err);
            return CORRAL_EIO;
        }
    }
    ag->c = corral_client_new(cfg);
    corral__node_init(&ag->node, o->node_name, &ag->inv, o->lease_s);
    int port = 0;
    ag->tm = corral__telem_new(&ag->inv, o->node_name, corral__now_us());
    ag->reg = corral_metrics_new();
    corral__telem_set_extra(ag->tm, ag->reg);
    corral__telem_set_xid_hold(ag->tm, o->xid_hold_s);
    ag->logs = corral_agent_logserver_new(o->root, corral__agent_page);
    if (corral_agent_logserver_listen(ag->logs, o->listen, ag->tm, true, &port, err, sizeof(err)) !=
        0) {
        corral__log("cannot start the log server on %s: %s", o->listen, err);
        return CORRAL_EIO;
    }
    const char *ml = o->metrics_listen;
    int mport = 0;
    if (ml && *ml && strcmp(ml, "off") != 0 &&
        corral_agent_logserver_listen(ag->logs, ml, ag->tm, false, &mport, err, sizeof(err)) != 0) {
        corral__log("cannot serve /metrics on %s: %s (--metrics-listen off disables it)", ml, err);
        return CORRAL_EIO;
    }
    if (corral_agent_logserver_run(ag->logs, err, sizeof(err)) != 0) {
        corral__log("%s", err);
        return CORRAL_EIO;
    }
    if (mport)
        corral__log("serving /metrics on %s (port %d) and on the kubelet port %d", ml, mport, port);
    ag->node.kubelet_port = port;
    while (corral__node_register(ag->c, &ag->node, err, sizeof(err)) != 0) {
        corral__log("%s (retrying)", err);
        for (int i = 0; i < 10; i++) {
            if (stop_requested(sigs))
                return CORRAL_EAGAIN;
            sleep_ms(100);
        }
    }
    corral__log("node %s registered (%d GPUs, %lld mCPU, %lld bytes)", o->node_name, ag->node.ngpu,
                (long long)ag->node.cpu_milli, (long long)ag->node.memory_bytes);
    corral__proc_init(&ag->pr, o->root, &ag->inv, ag->node.cpu_milli, ag->node.memory_bytes, ag->c);
    ag->q = corral_evq_new();
    if (corral__agent_model_cache(o, cfg, ag->q, ag->reg, &ag->models, ag->minf) != 0)
        return CORRAL_EIO;
    char sel[512];
    snprintf(sel, sizeof(sel), "spec.nodeName=%s", o->node_name);
    corral_informer_opts_t io = {.kind = CORRAL_KIND_POD, .field_selector = sel, .name = "pods"};
    if (corral_informer_start(cfg, &io, ag->q, &ag->inf, err, sizeof(err)) != 0) {
        corral__log("cannot start the pod informer: %s", err);
        return CORRAL_EIO;
    }
    return 0;
}

static void teardown(agent_t *ag)
{
    corral_informer_stop(ag->inf);
    for (int i = 0; i < 3; i++)
        corral_informer_stop(ag->minf[i]);
    corral__models_free(ag->models);
    corral__prober_free(ag->prober);
    corral_agent_logserver_stop(ag->logs);
    corral__telem_free(ag->tm);
    corral_metrics_free(ag->reg);
    corral__podtab_fini(&ag->pods);
    corral_evq_free(ag->q);
    corral__proc_fini(&ag->pr);
    corral__node_fini(&ag->node);
    corral_client_free(ag->c);
    corral_gpu_inventory_fini(&ag->inv);
}

int corral_agent_run(const corral_agent_opts_t *o, const corral_client_config_t *cfg)
{
    agent_t ag = {.o = o};
    corral__podtab_init(&ag.pods);
    sigset_t sigs;
    corral__block_stop_signals(&sigs);
    char err[1024] = "";
    if (corral_gpu_discover(o->gpus, o->node_name, &ag.inv, err, sizeof(err)) != 0) {
        corral__log("GPU discovery (%s): %s", o->gpus, err);
        corral__podtab_fini(&ag.pods);
        return CORRAL_EINVAL;
    }
    corral__podip_default_dir(ag.podip_dir, sizeof(ag.podip_dir));
    int rc = setup(&ag, cfg, &sigs);
    while (rc == 0 && !stop_requested(&sigs)) {
        corral_watch_ev_t *evs = corral_evq_take(ag.q, TICK_MS);
        int64_t now = corral__now_us();
        while (evs) {
            corral_watch_ev_t *next = evs->next;
            evs->next = NULL;
            handle(&ag, evs, now);
            evs = next;
        }
        corral__proc_reap(&ag.pr);
        telemetry(&ag, now);
        corral__node_heartbeat(ag.c, &ag.node, now, o->heartbeat_s, o->status_every);
        probes(&ag, now);
        if (ag.models)
            corral__models_tick(ag.models, ag.c, &ag.pods, now);
        for (size_t i = 0; i < ag.pods.n; i++)
            drive(&ag, ag.pods.pods[i], now);
    }
    if (rc == 0 && o->stop_on_exit)
        stop_all(&ag);
    corral__log("shutting down");
    teardown(&ag);
    return rc == CORRAL_EAGAIN ? 0 : rc;
}

int corral_agent_print_gpus(const char *spec, const char *node_name)
{
    corral_gpu_inventory_t inv;
    char err[1024] = "";
    if (corral_gpu_discover(spec, node_name, &inv, err, sizeof(err)) != 0) {
        fprintf(stderr, "corral agent: GPU discovery (%s): %s\n", spec, err);
        return CORRAL_EINVAL;
    }
    corral_gpu_print(&inv, stdout);
    corral_gpu_inventory_fini(&inv);
    return 0;
}
