/*
 * The stand-in kubelet (standin_kubelet.h) and `corral standin-kubelet`.
 * Threads: the Registration server's; one per registered plugin, holding
 * its ListAndWatch stream (on its own connection, as kubelet's endpoint
 * does); with --server, one watching the node's pods. Admissions are one at
 * a time (admit_mu), as kubelet admits pods; state is under mu.
 */
#include "agent/standin_kubelet.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent/grpc.h"
#include "corral/agent.h"
#include "corral/arena.h"
#include "corral/client.h"
#include "corral/json.h"
#include "corral/val.h"
#include "deviceplugin.pb-c.h"

#define MAX_PLUGINS 8
#define MAX_DEVS    64
#define MAX_PODS    256

typedef struct plugin {
    char resource[128], endpoint[128];
    bool prefer; /* GetPreferredAllocationAvailable */
    uint64_t regs, updates;
    char ids[MAX_DEVS][96];
    bool healthy[MAX_DEVS];
    char user[MAX_DEVS][256]; /* the pod using each device, "" when free */
    int n;
    pthread_t thr;
    bool running;
    volatile int stop;
    corral__skl_t *k;
} plugin_t;

struct corral__skl {
    char dir[4000], sock[4096];
    corral__grpc_server_t *srv;
    pthread_mutex_t mu, admit_mu;
    plugin_t *plugins[MAX_PLUGINS];
    int nplugins;
};

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static plugin_t *find_plugin(corral__skl_t *k, const char *resource)
{
    for (int i = 0; i < k->nplugins; i++)
        if (strcmp(k->plugins[i]->resource, resource) == 0)
            return k->plugins[i];
    return NULL;
}

/* --- a plugin's endpoint: options and ListAndWatch ----------------------------------------- */

static int on_devices(void *ctx, const uint8_t *msg, size_t len)
{
    plugin_t *p = ctx;
    V1beta1__ListAndWatchResponse *r = v1beta1__list_and_watch_response__unpack(NULL, len, msg);
    if (!r)
        return 1;
    corral__skl_t *k = p->k;
    pthread_mutex_lock(&k->mu);
    char keep[MAX_DEVS][256];
    char old[MAX_DEVS][96];
    int nold = p->n;
    memcpy(old, p->ids, sizeof old);
    memcpy(keep, p->user, sizeof keep);
    p->n = 0;
    for (size_t i = 0; i < r->n_devices && p->n < MAX_DEVS; i++) {
        int j = p->n++;
        snprintf(p->ids[j], sizeof p->ids[j], "%s", r->devices[i]->id);
        p->healthy[j] = strcmp(r->devices[i]->health, "Healthy") == 0;
        p->user[j][0] = 0;
        for (int o = 0; o < nold; o++)
            if (strcmp(old[o], p->ids[j]) == 0)
                memcpy(p->user[j], keep[o], sizeof p->user[j]);
    }
    p->updates++;
    pthread_mutex_unlock(&k->mu);
    v1beta1__list_and_watch_response__free_unpacked(r, NULL);
    return 0;
}

static void endpoint_path(plugin_t *p, char *out, size_t len)
{
    pthread_mutex_lock(&p->k->mu);
    snprintf(out, len, "%s/%s", p->k->dir, p->endpoint);
    pthread_mutex_unlock(&p->k->mu);
}

static void *plugin_main(void *arg)
{
    plugin_t *p = arg;
    char path[4300], why[256];
    endpoint_path(p, path, sizeof path);
    while (!p->stop) {
        corral__grpc_client_t *c = corral__grpc_connect(path, why, sizeof why);
        if (!c) {
            sleep_ms(100);
            continue;
        }
        corral_buf_t resp;
        corral_buf_init(&resp);
        V1beta1__Empty e = V1BETA1__EMPTY__INIT;
        corral_buf_t req;
        corral_buf_init(&req);
        corral__grpc_pack(&e.base, &req);
        int st = corral__grpc_call(c, "/v1beta1.DevicePlugin/GetDevicePluginOptions", req.p,
                                   req.len, &resp, 5000, why, sizeof why);
        if (st == 0) {
            V1beta1__DevicePluginOptions *o =
                v1beta1__device_plugin_options__unpack(NULL, resp.len, (const uint8_t *)resp.p);
            if (o) {
                pthread_mutex_lock(&p->k->mu);
                p->prefer = o->get_preferred_allocation_available;
                pthread_mutex_unlock(&p->k->mu);
                v1beta1__device_plugin_options__free_unpacked(o, NULL);
            }
            corral__grpc_stream(c, "/v1beta1.DevicePlugin/ListAndWatch", req.p, req.len, on_devices,
                                p, &p->stop, why, sizeof why);
        }
        if (!p->stop)
            fprintf(stderr, "corral standin-kubelet: %s: ListAndWatch ended: %s\n", p->resource,
                    why);
        corral_buf_fini(&resp);
        corral_buf_fini(&req);
        corral__grpc_close(c);
        /* Kubelet marks the devices unhealthy and waits for a new registration. */
        pthread_mutex_lock(&p->k->mu);
        for (int i = 0; i < p->n; i++)
            p->healthy[i] = false;
        pthread_mutex_unlock(&p->k->mu);
        break;
    }
    return NULL;
}

static void plugin_stop(plugin_t *p)
{
    if (p->running) {
        p->stop = 1;
        pthread_join(p->thr, NULL);
        p->running = false;
    }
}

/* --- Registration ------------------------------------------------------------------------ */

static int h_register(corral__skl_t *k, const uint8_t *req, size_t len, corral_buf_t *resp,
                      char *why, size_t whylen)
{
    V1beta1__RegisterRequest *r = v1beta1__register_request__unpack(NULL, len, req);
    if (!r) {
        snprintf(why, whylen, "Register: malformed request");
        return CORRAL__GRPC_INVALID_ARGUMENT;
    }
    int st = 0;
    if (strcmp(r->version, "v1beta1") != 0) {
        snprintf(why, whylen, "Register: unsupported version %.40s (v1beta1 is)", r->version);
        st = CORRAL__GRPC_INVALID_ARGUMENT;
    } else if (!r->resource_name[0] || strlen(r->resource_name) >= 128 || !r->endpoint[0] ||
               strlen(r->endpoint) >= 128 || strchr(r->endpoint, '/')) {
        snprintf(why, whylen, "Register: invalid resource name or endpoint");
        st = CORRAL__GRPC_INVALID_ARGUMENT;
    }
    pthread_mutex_lock(&k->mu);
    plugin_t *p = st ? NULL : find_plugin(k, r->resource_name);
    if (!st && !p && k->nplugins >= MAX_PLUGINS) {
        snprintf(why, whylen, "Register: too many plugins");
        st = CORRAL__GRPC_RESOURCE_EXHAUSTED;
    }
    if (!st && !p) {
        p = corral_calloc(1, sizeof *p);
        p->k = k;
        snprintf(p->resource, sizeof p->resource, "%s", r->resource_name);
        k->plugins[k->nplugins++] = p;
    }
    pthread_mutex_unlock(&k->mu);
    if (!st) {
        plugin_stop(p); /* a new registration replaces the endpoint */
        pthread_mutex_lock(&k->mu);
        snprintf(p->endpoint, sizeof p->endpoint, "%s", r->endpoint);
        p->regs++;
        p->stop = 0;
        pthread_mutex_unlock(&k->mu);
        p->running = pthread_create(&p->thr, NULL, plugin_main, p) == 0;
        fprintf(stderr, "corral standin-kubelet: registered %s at %s\n", p->resource, p->endpoint);
        V1beta1__Empty e = V1BETA1__EMPTY__INIT;
        corral__grpc_pack(&e.base, resp);
    }
    v1beta1__register_request__free_unpacked(r, NULL);
    return st;
}

static int handler(void *ctx, const char *path, const uint8_t *req, size_t len, corral_buf_t *resp,
                   char *why, size_t whylen)
{
    if (strcmp(path, "/v1beta1.Registration/Register") == 0)
        return h_register(ctx, req, len, resp, why, whylen);
    snprintf(why, whylen, "unknown method %.100s", path);
    return CORRAL__GRPC_UNIMPLEMENTED;
}

corral__skl_t *corral__skl_start(const char *dir, char *err, size_t errlen)
{
    if (strlen(dir) >= 3900) {
        snprintf(err, errlen, "directory name too long");
        return NULL;
    }
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(err, errlen, "cannot open %s: %s", dir, strerror(errno));
        return NULL;
    }
    for (struct dirent *e; (e = readdir(d));) {
        char p[4400];
        struct stat st;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        if (lstat(p, &st) == 0 && S_ISSOCK(st.st_mode))
            unlink(p);
    }
    closedir(d);
    corral__skl_t *k = corral_calloc(1, sizeof *k);
    snprintf(k->dir, sizeof k->dir, "%s", dir);
    snprintf(k->sock, sizeof k->sock, "%s/kubelet.sock", dir);
    pthread_mutex_init(&k->mu, NULL);
    pthread_mutex_init(&k->admit_mu, NULL);
    k->srv = corral__grpc_server_start(k->sock, handler, k, err, errlen);
    if (!k->srv) {
        pthread_mutex_destroy(&k->mu);
        pthread_mutex_destroy(&k->admit_mu);
        corral_free(k);
        return NULL;
    }
    return k;
}

void corral__skl_stop(corral__skl_t *k)
{
    if (!k)
        return;
    corral__grpc_server_stop(k->srv); /* no Register runs past this */
    for (int i = 0; i < k->nplugins; i++) {
        plugin_stop(k->plugins[i]);
        corral_free(k->plugins[i]);
    }
    pthread_mutex_destroy(&k->mu);
    pthread_mutex_destroy(&k->admit_mu);
    corral_free(k);
}

int corral__skl_plugin(corral__skl_t *k, const char *resource, uint64_t *registrations,
                       uint64_t *updates, int *healthy)
{
    pthread_mutex_lock(&k->mu);
    plugin_t *p = find_plugin(k, resource);
    int n = -1;
    if (p) {
        n = p->n;
        *registrations = p->regs;
        *updates = p->updates;
        *healthy = 0;
        for (int i = 0; i < p->n; i++)
            *healthy += p->healthy[i];
    }
    pthread_mutex_unlock(&k->mu);
    return n;
}

bool corral__skl_wait(corral__skl_t *k, const char *resource, uint64_t min_regs,
                      uint64_t min_updates, int timeout_ms)
{
    for (int waited = 0;; waited += 10) {
        uint64_t r = 0, u = 0;
        int h = 0;
        if (corral__skl_plugin(k, resource, &r, &u, &h) >= 0 && r >= min_regs && u >= min_updates)
            return true;
        if (waited >= timeout_ms)
            return false;
        sleep_ms(10);
    }
}

/* --- admission ----------------------------------------------------------------------------- */

/* One unary call of the plugin on a connection of its own. */
static int call_plugin(plugin_t *p, const char *method, const ProtobufCMessage *m,
                       corral_buf_t *resp, char *why, size_t whylen)
{
    char path[4300];
    endpoint_path(p, path, sizeof path);
    corral__grpc_client_t *c = corral__grpc_connect(path, why, whylen);
    if (!c)
        return CORRAL_EIO;
    corral_buf_t req;
    corral_buf_init(&req);
    corral__grpc_pack(m, &req);
    int st = corral__grpc_call(c, method, req.p, req.len, resp, 5000, why, whylen);
    corral_buf_fini(&req);
    corral__grpc_close(c);
    return st;
}

/* The plugin's preference among avail, into chosen (kept when unusable). */
static void preferred(plugin_t *p, char (*avail)[96], int navail, int n, char (*chosen)[96])
{
    char why[256];
    char *ap[MAX_DEVS];
    for (int i = 0; i < navail; i++)
        ap[i] = avail[i];
    V1beta1__ContainerPreferredAllocationRequest cq =
        V1BETA1__CONTAINER_PREFERRED_ALLOCATION_REQUEST__INIT;
    cq.n_available_deviceids = (size_t)navail;
    cq.available_deviceids = ap;
    cq.allocation_size = n;
    V1beta1__ContainerPreferredAllocationRequest *cqp = &cq;
    V1beta1__PreferredAllocationRequest q = V1BETA1__PREFERRED_ALLOCATION_REQUEST__INIT;
    q.n_container_requests = 1;
    q.container_requests = &cqp;
    corral_buf_t resp;
    corral_buf_init(&resp);
    if (call_plugin(p, "/v1beta1.DevicePlugin/GetPreferredAllocation", &q.base, &resp, why,
                    sizeof why) == 0) {
        V1beta1__PreferredAllocationResponse *r =
            v1beta1__preferred_allocation_response__unpack(NULL, resp.len, (const uint8_t *)resp.p);
        /* Kubelet takes the preference when it is n of the available devices. */
        bool ok = r && r->n_container_responses == 1 &&
                  r->container_responses[0]->n_deviceids == (size_t)n;
        for (int i = 0; ok && i < n; i++) {
            const char *id = r->container_responses[0]->deviceids[i];
            bool in = false;
            for (int j = 0; j < navail; j++)
                in = in || strcmp(avail[j], id) == 0;
            for (int j = 0; j < i; j++)
                in = in && strcmp(r->container_responses[0]->deviceids[j], id) != 0;
            ok = in;
        }
        for (int i = 0; ok && i < n; i++)
            snprintf(chosen[i], 96, "%s", r->container_responses[0]->deviceids[i]);
        if (r)
            v1beta1__preferred_allocation_response__free_unpacked(r, NULL);
    }
    corral_buf_fini(&resp);
}

static void json_map(corral_buf_t *line, const char *key, size_t n, char *const *keys,
                     char *const *vals)
{
    corral_buf_printf(line, ",\"%s\":{", key);
    for (size_t i = 0; i < n; i++) {
        corral_buf_puts(line, i ? "," : "");
        corral_json_quote(line, keys[i], strlen(keys[i]));
        corral_buf_putc(line, ':');
        corral_json_quote(line, vals[i], strlen(vals[i]));
    }
    corral_buf_putc(line, '}');
}

static int allocate(plugin_t *p, const char *pod, char (*chosen)[96], int n, corral_buf_t *line,
                    char *err, size_t errlen)
{
    char why[256];
    char *ip[MAX_DEVS];
    for (int i = 0; i < n; i++)
        ip[i] = chosen[i];
    V1beta1__ContainerAllocateRequest cq = V1BETA1__CONTAINER_ALLOCATE_REQUEST__INIT;
    cq.n_devices_ids = (size_t)n;
    cq.devices_ids = ip;
    V1beta1__ContainerAllocateRequest *cqp = &cq;
    V1beta1__AllocateRequest q = V1BETA1__ALLOCATE_REQUEST__INIT;
    q.n_container_requests = 1;
    q.container_requests = &cqp;
    corral_buf_t resp;
    corral_buf_init(&resp);
    int st = call_plugin(p, "/v1beta1.DevicePlugin/Allocate", &q.base, &resp, why, sizeof why);
    V1beta1__AllocateResponse *r =
        st == 0 ? v1beta1__allocate_response__unpack(NULL, resp.len, (const uint8_t *)resp.p)
                : NULL;
    corral_buf_fini(&resp);
    if (!r || r->n_container_responses != 1) {
        snprintf(err, errlen, "Allocate: %s", st ? why : "malformed response");
        if (r)
            v1beta1__allocate_response__free_unpacked(r, NULL);
        return st < 0 ? st : CORRAL_EIO;
    }
    const V1beta1__ContainerAllocateResponse *cr = r->container_responses[0];
    corral_buf_puts(line, "{\"pod\":");
    corral_json_quote(line, pod, strlen(pod));
    corral_buf_puts(line, ",\"devices\":[");
    for (int i = 0; i < n; i++) {
        corral_buf_puts(line, i ? "," : "");
        corral_json_quote(line, chosen[i], strlen(chosen[i]));
    }
    corral_buf_putc(line, ']');
    char *ek[64], *ev[64];
    size_t ne = 0;
    for (size_t i = 0; i < cr->n_envs && ne < 64; i++, ne++) {
        ek[ne] = cr->envs[i]->key;
        ev[ne] = cr->envs[i]->value;
    }
    json_map(line, "envs", ne, ek, ev);
    ne = 0;
    for (size_t i = 0; i < cr->n_annotations && ne < 64; i++, ne++) {
        ek[ne] = cr->annotations[i]->key;
        ev[ne] = cr->annotations[i]->value;
    }
    json_map(line, "annotations", ne, ek, ev);
    corral_buf_puts(line, ",\"cdiDevices\":[");
    for (size_t i = 0; i < cr->n_cdi_devices; i++) {
        corral_buf_puts(line, i ? "," : "");
        corral_json_quote(line, cr->cdi_devices[i]->name, strlen(cr->cdi_devices[i]->name));
    }
    corral_buf_puts(line, "]}");
    v1beta1__allocate_response__free_unpacked(r, NULL);
    return 0;
}

int corral__skl_admit(corral__skl_t *k, const char *pod, const char *resource, int n,
                      corral_buf_t *line, char *err, size_t errlen)
{
    if (n <= 0 || n > MAX_DEVS) {
        snprintf(err, errlen, "%d devices asked", n);
        return CORRAL_EINVAL;
    }
    pthread_mutex_lock(&k->admit_mu);
    pthread_mutex_lock(&k->mu);
    plugin_t *p = find_plugin(k, resource);
    char avail[MAX_DEVS][96], chosen[MAX_DEVS][96];
    int navail = 0;
    bool prefer = p && p->prefer;
    for (int i = 0; p && i < p->n; i++)
        if (p->healthy[i] && !p->user[i][0])
            snprintf(avail[navail++], 96, "%s", p->ids[i]);
    pthread_mutex_unlock(&k->mu);
    int rc = 0;
    if (!p || navail < n) {
        snprintf(err, errlen, "UnexpectedAdmissionError: %d %s wanted, %d free and healthy", n,
                 resource, navail);
        rc = CORRAL_EAGAIN;
        goto out;
    }
    for (int i = 0; i < n; i++)
        snprintf(chosen[i], 96, "%s", avail[i]);
    if (prefer)
        preferred(p, avail, navail, n, chosen);
    rc = allocate(p, pod, chosen, n, line, err, errlen);
    if (rc == 0) {
        pthread_mutex_lock(&k->mu);
        for (int i = 0; i < p->n; i++)
            for (int j = 0; j < n; j++)
                if (strcmp(p->ids[i], chosen[j]) == 0)
                    snprintf(p->user[i], sizeof p->user[i], "%s", pod);
        pthread_mutex_unlock(&k->mu);
    }
out:
    pthread_mutex_unlock(&k->admit_mu);
    return rc;
}

void corral__skl_release(corral__skl_t *k, const char *pod)
{
    pthread_mutex_lock(&k->mu);
    for (int i = 0; i < k->nplugins; i++)
        for (int j = 0; j < k->plugins[i]->n; j++)
            if (strcmp(k->plugins[i]->user[j], pod) == 0)
                k->plugins[i]->user[j][0] = 0;
    pthread_mutex_unlock(&k->mu);
}

/* --- the command: pods bound to the node ------------------------------------------------------ */

typedef struct watcher {
    corral__skl_t *k;
    corral_client_t *c;
    const char *node;
    volatile int stop;
    char pods[MAX_PODS][256]; /* admitted (or refused) pods */
    int npods;
    char rv[64];
} watcher_t;

static int pod_index(watcher_t *w, const char *pod)
{
    for (int i = 0; i < w->npods; i++)
        if (strcmp(w->pods[i], pod) == 0)
            return i;
    return -1;
}

static void forget(watcher_t *w, const char *pod)
{
    int i = pod_index(w, pod);
    if (i < 0)
        return;
    corral__skl_release(w->k, pod);
    memmove(w->pods[i], w->pods[w->npods - 1], sizeof w->pods[i]);
    w->npods--;
}

/* The extended resource the pod's containers ask for (limits, else
 * requests; the first name with a '/' outside kubernetes.io) into res, and
 * what each container asks of it into want[]; their count. */
static int wants(const corral_val_t *pod, char *res, size_t reslen, int *want, int cap)
{
    const corral_val_t *cs = corral_val_dig(pod, "spec.containers");
    int n = 0;
    res[0] = 0;
    for (size_t i = 0; cs && cs->kind == CORRAL_VAL_SEQ && i < cs->n && n < cap; i++) {
        const corral_val_t *r = corral_val_get(cs->items[i], "resources");
        const corral_val_t *m = corral_val_get(r, "limits");
        if (!m || m->kind != CORRAL_VAL_MAP || !m->n)
            m = corral_val_get(r, "requests");
        for (size_t j = 0; m && m->kind == CORRAL_VAL_MAP && j < m->n; j++) {
            const char *key = m->pairs[j].key->s;
            const corral_val_t *q = m->pairs[j].val;
            if (!strchr(key, '/') || strstr(key, "kubernetes.io/") ||
                (res[0] && strcmp(key, res) != 0))
                continue;
            long v = q && q->s ? strtol(q->s, NULL, 10) : 0;
            if (v <= 0 || v > MAX_DEVS)
                continue;
            snprintf(res, reslen, "%s", key);
            want[n++] = (int)v;
            break;
        }
    }
    return n;
}

static void admit_pod(watcher_t *w, const char *pod, const char *res, const int *want, int nw)
{
    if (w->npods >= MAX_PODS)
        return;
    snprintf(w->pods[w->npods++], sizeof w->pods[0], "%s", pod);
    corral_buf_t all;
    corral_buf_init(&all);
    char err[512] = "";
    int rc = 0;
    for (int i = 0; i < nw && rc == 0; i++) {
        corral_buf_t line;
        corral_buf_init(&line);
        uint64_t r, u;
        int h;
        /* The first admission may race the plugin's registration. */
        for (int t = 0; t < 50 && !w->stop && corral__skl_plugin(w->k, res, &r, &u, &h) < 1; t++)
            sleep_ms(100);
        rc = corral__skl_admit(w->k, pod, res, want[i], &line, err, sizeof err);
        if (rc == 0)
            corral_buf_printf(&all, "%s\n", corral_buf_str(&line));
        corral_buf_fini(&line);
    }
    if (rc != 0) {
        corral__skl_release(w->k, pod);
        corral_buf_reset(&all);
        corral_buf_puts(&all, "{\"pod\":");
        corral_json_quote(&all, pod, strlen(pod));
        corral_buf_puts(&all, ",\"error\":");
        corral_json_quote(&all, err, strlen(err));
        corral_buf_puts(&all, "}\n");
    }
    fputs(corral_buf_str(&all), stdout);
    fflush(stdout);
    corral_buf_fini(&all);
}

static void on_pod(watcher_t *w, const char *type, const corral_val_t *obj)
{
    const char *ns = corral_val_dig(obj, "metadata.namespace")
                         ? corral_val_dig(obj, "metadata.namespace")->s
                         : "default";
    const corral_val_t *nm = corral_val_dig(obj, "metadata.name");
    if (!nm || !nm->s)
        return;
    char pod[256];
    snprintf(pod, sizeof pod, "%s/%s", ns ? ns : "default", nm->s);
    const corral_val_t *ph = corral_val_dig(obj, "status.phase");
    bool gone = strcmp(type, "DELETED") == 0 ||
                (ph && ph->s && (strcmp(ph->s, "Succeeded") == 0 || strcmp(ph->s, "Failed") == 0));
    if (gone) {
        forget(w, pod);
        return;
    }
    if (pod_index(w, pod) >= 0 || corral_val_dig(obj, "metadata.deletionTimestamp"))
        return;
    int want[16];
    char res[256];
    int nw = wants(obj, res, sizeof res, want, 16);
    if (nw > 0)
        admit_pod(w, pod, res, want, nw);
}

static int on_line(void *ctx, const char *text, size_t len)
{
    watcher_t *w = ctx;
    corral_arena_t a;
    corral_arena_init(&a);
    corral_val_t *ev = NULL;
    corral_json_err_t jerr;
    if (corral_json_parse(&a, text, len, &ev, &jerr) == 0) {
        const char *type = corral_val_get_str(ev, "type");
        const corral_val_t *obj = corral_val_get(ev, "object");
        const corral_val_t *rv = corral_val_dig(obj, "metadata.resourceVersion");
        if (rv && rv->s)
            snprintf(w->rv, sizeof w->rv, "%s", rv->s);
        if (type && obj && strcmp(type, "BOOKMARK") != 0 && strcmp(type, "ERROR") != 0)
            on_pod(w, type, obj);
        if (type && strcmp(type, "ERROR") == 0)
            w->rv[0] = 0; /* expired: list again */
    }
    corral_arena_fini(&a);
    return w->stop;
}

/* LIST the node's pods: admit the new ones, forget those gone. */
static int list_pods(watcher_t *w)
{
    char path[512];
    snprintf(path, sizeof path, "/api/v1/pods?fieldSelector=spec.nodeName%%3D%s", w->node);
    corral_client_resp_t r;
    corral_client_resp_init(&r);
    int rc = corral_client_request(w->c, "GET", path, NULL, NULL, 0, &r);
    corral_arena_t a;
    corral_arena_init(&a);
    corral_val_t *list = NULL;
    corral_json_err_t jerr;
    if (rc == 0 && r.code == 200 &&
        corral_json_parse(&a, r.body.p, r.body.len, &list, &jerr) == 0) {
        const corral_val_t *items = corral_val_get(list, "items");
        char seen[MAX_PODS][256];
        int nseen = 0;
        for (size_t i = 0; items && items->kind == CORRAL_VAL_SEQ && i < items->n; i++) {
            on_pod(w, "ADDED", items->items[i]);
            const corral_val_t *ns = corral_val_dig(items->items[i], "metadata.namespace");
            const corral_val_t *nm = corral_val_dig(items->items[i], "metadata.name");
            if (nm && nm->s && nseen < MAX_PODS)
                snprintf(seen[nseen++], 256, "%s/%s", ns && ns->s ? ns->s : "default", nm->s);
        }
        for (int i = w->npods - 1; i >= 0; i--) {
            bool in = false;
            for (int j = 0; j < nseen && !in; j++)
                in = strcmp(seen[j], w->pods[i]) == 0;
            if (!in)
                forget(w, w->pods[i]);
        }
        const corral_val_t *rv = corral_val_dig(list, "metadata.resourceVersion");
        snprintf(w->rv, sizeof w->rv, "%s", rv && rv->s ? rv->s : "");
    } else {
        rc = rc ? rc : CORRAL_EIO;
        fprintf(stderr, "corral standin-kubelet: listing pods: HTTP %ld %s\n", r.code, r.error);
    }
    corral_arena_fini(&a);
    corral_client_resp_fini(&r);
    return rc;
}

static void *watch_main(void *arg)
{
    watcher_t *w = arg;
    while (!w->stop) {
        if (!w->rv[0] && list_pods(w) != 0) {
            sleep_ms(500);
            continue;
        }
        char path[600];
        snprintf(path, sizeof path,
                 "/api/v1/"
                 "pods?watch=1&allowWatchBookmarks=true&fieldSelector=spec.nodeName%%3D%s&"
                 "resourceVersion=%s",
                 w->node, w->rv);
        corral_client_resp_t r;
        corral_client_resp_init(&r);
        int rc = corral_client_stream(w->c, path, on_line, w, &r);
        if (rc != 0 || r.code != 200) {
            w->rv[0] = 0;
            if (!w->stop)
                sleep_ms(500);
        }
        corral_client_resp_fini(&r);
    }
    return NULL;
}

static void usage(void)
{
    fprintf(stderr, "usage: corral standin-kubelet --dir DIR [--server URL --node-name NODE]\n"
                    "  Serves kubelet's device plugin Registration on DIR/kubelet.sock and\n"
                    "  admits the pods bound to NODE as kubelet would (one JSON line each).\n");
}

int corral_agent_standin_kubelet(int argc, char **argv)
{
    static const struct option longopts[] = {{"dir", required_argument, NULL, 'd'},
                                             {"server", required_argument, NULL, 's'},
                                             {"node-name", required_argument, NULL, 'n'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    const char *dir = NULL, *server = NULL, *node = NULL;
    optind = 1;
    for (int ch; (ch = getopt_long(argc, argv, "", longopts, NULL)) != -1;) {
        switch (ch) {
        case 'd':
            dir = optarg;
            break;
        case 's':
            server = optarg;
            break;
        case 'n':
            node = optarg;
            break;
        case 'h':
            usage();
            return 0;
        default:
            usage();
            return 2;
        }
    }
    if (!dir || optind < argc || (server && !node)) {
        usage();
        return 2;
    }
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);
    char err[512];
    corral__skl_t *k = corral__skl_start(dir, err, sizeof err);
    if (!k) {
        fprintf(stderr, "corral standin-kubelet: %s\n", err);
        return 1;
    }
    fprintf(stderr, "corral standin-kubelet: serving %s/kubelet.sock\n", dir);
    watcher_t *w = NULL;
    pthread_t wt;
    corral_client_config_t cfg;
    corral_client_config_init(&cfg);
    if (server) {
        corral_client_flags_t f = {.server = server};
        if (corral_client_config_load(&f, &cfg, err, sizeof err) != 0) {
            fprintf(stderr, "corral standin-kubelet: %s\n", err);
            corral__skl_stop(k);
            corral_client_config_fini(&cfg);
            return 2;
        }
        w = corral_calloc(1, sizeof *w);
        w->k = k;
        w->node = node;
        w->c = corral_client_new(&cfg);
        corral_client_set_abort(w->c, &w->stop);
        if (pthread_create(&wt, NULL, watch_main, w) != 0) {
            corral_client_free(w->c);
            corral_free(w);
            w = NULL;
        }
    }
    int sig = 0;
    sigwait(&sigs, &sig);
    if (w) {
        w->stop = 1;
        pthread_join(wt, NULL);
        corral_client_free(w->c);
        corral_free(w);
    }
    corral_client_config_fini(&cfg);
    corral__skl_stop(k);
    return 0;
}
