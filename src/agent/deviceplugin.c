/*
 * The kubelet device plugin (deviceplugin.h). Threads: the gRPC server's
 * (the DevicePlugin service; handlers below) and a manager that keeps the
 * plugin registered: it re-creates its socket when kubelet removed it and
 * registers again when kubelet.sock is a new file (a restarted kubelet),
 * woken by inotify on the directory and checking every second anyway.
 * The device list is under mu; lookup runs without it.
 */
#include "agent/deviceplugin.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/agent_int.h"
#include "agent/grpc.h"
#include "corral/common.h"
#include "corral/val.h"
#include "deviceplugin.pb-c.h"

#define P_OPTIONS  "/v1beta1.DevicePlugin/GetDevicePluginOptions"
#define P_LAW      "/v1beta1.DevicePlugin/ListAndWatch"
#define P_PREFER   "/v1beta1.DevicePlugin/GetPreferredAllocation"
#define P_ALLOCATE "/v1beta1.DevicePlugin/Allocate"
#define P_PRESTART "/v1beta1.DevicePlugin/PreStartContainer"
#define P_REGISTER "/v1beta1.Registration/Register"

struct corral__dp {
    char *plugin_dir, *resource, *endpoint, *cdi_dir;
    char sock[4096], kubelet[4096];
    int (*lookup)(void *ctx, const char *const *available, size_t navailable, size_t want,
                  char (*ids)[96], char *pod, size_t podlen);
    void *ctx;
    void (*log)(void *ctx, const char *msg);
    pthread_mutex_t mu;
    corral__dp_device_t devs[CORRAL__DP_MAX_DEVS];
    size_t n;
    corral__grpc_server_t *srv; /* under mu */
    uint64_t regs;              /* under mu */
    pthread_t mgr;
    int wake[2], ino_fd;
    volatile int stop;
};

static void dp_log(corral__dp_t *dp, const char *fmt, ...) CORRAL_PRINTF(2, 3);
static void dp_log(corral__dp_t *dp, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (dp->log)
        dp->log(dp->ctx, msg);
    else
        fprintf(stderr, "corral agent: device plugin: %s\n", msg);
}

static const corral__dp_device_t *find_dev(const corral__dp_t *dp, const char *id)
{
    for (size_t i = 0; i < dp->n; i++)
        if (strcmp(dp->devs[i].id, id) == 0)
            return &dp->devs[i];
    return NULL;
}

/* --- messages ---------------------------------------------------------------------------- */

/* The ListAndWatch message for the current devices (under mu). */
static void devices_msg(const corral__dp_t *dp, corral_buf_t *out)
{
    V1beta1__Device d[CORRAL__DP_MAX_DEVS];
    V1beta1__Device *dp_[CORRAL__DP_MAX_DEVS];
    V1beta1__TopologyInfo topo[CORRAL__DP_MAX_DEVS];
    V1beta1__NUMANode numa[CORRAL__DP_MAX_DEVS];
    V1beta1__NUMANode *numap[CORRAL__DP_MAX_DEVS];
    for (size_t i = 0; i < dp->n; i++) {
        v1beta1__device__init(&d[i]);
        d[i].id = (char *)dp->devs[i].id;
        d[i].health = dp->devs[i].healthy ? "Healthy" : "Unhealthy";
        if (dp->devs[i].numa_node >= 0) {
            v1beta1__topology_info__init(&topo[i]);
            v1beta1__numanode__init(&numa[i]);
            numa[i].id = dp->devs[i].numa_node;
            numap[i] = &numa[i];
            topo[i].n_nodes = 1;
            topo[i].nodes = &numap[i];
            d[i].topology = &topo[i];
        }
        dp_[i] = &d[i];
    }
    V1beta1__ListAndWatchResponse r = V1BETA1__LIST_AND_WATCH_RESPONSE__INIT;
    r.n_devices = dp->n;
    r.devices = dp_;
    corral__grpc_pack(&r.base, out);
}

/* --- GetPreferredAllocation and Allocate --------------------------------------------------- */

static bool in_list(char *const *l, size_t n, const char *id)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(l[i], id) == 0)
            return true;
    return false;
}

/* Ask the agent; 0 when it named want distinct devices of ours, all in
 * avail when in_avail (a preference kubelet can take). */
static int ask(corral__dp_t *dp, char *const *avail, size_t navail, size_t want, bool in_avail,
               char (*ids)[96], char *pod, size_t podlen)
{
    pod[0] = 0;
    if (!dp->lookup || want == 0)
        return CORRAL_ENOENT;
    int r = dp->lookup(dp->ctx, (const char *const *)avail, navail, want, ids, pod, podlen);
    if (r != 0)
        return r;
    for (size_t i = 0; i < want; i++) {
        ids[i][95] = 0;
        if (in_avail && !in_list(avail, navail, ids[i]))
            return CORRAL_EINVAL;
        pthread_mutex_lock(&dp->mu);
        bool ours = find_dev(dp, ids[i]) != NULL;
        pthread_mutex_unlock(&dp->mu);
        if (!ours)
            return CORRAL_EINVAL;
        for (size_t j = 0; j < i; j++)
            if (strcmp(ids[i], ids[j]) == 0)
                return CORRAL_EINVAL;
    }
    return 0;
}

static int prefer_one(corral__dp_t *dp, const V1beta1__ContainerPreferredAllocationRequest *q,
                      V1beta1__ContainerPreferredAllocationResponse *out, char (*ids)[96],
                      char **idp, char *why, size_t whylen)
{
    size_t want = q->allocation_size > 0 ? (size_t)q->allocation_size : 0;
    if (q->n_available_deviceids > CORRAL__DP_MAX_DEVS || want > q->n_available_deviceids ||
        q->n_must_include_deviceids > want) {
        snprintf(why, whylen, "GetPreferredAllocation: size %zu of %zu available devices", want,
                 q->n_available_deviceids);
        return CORRAL__GRPC_INVALID_ARGUMENT;
    }
    char pod[256];
    int r =
        ask(dp, q->available_deviceids, q->n_available_deviceids, want, true, ids, pod, sizeof pod);
    bool ok = r == 0;
    for (size_t i = 0; ok && i < q->n_must_include_deviceids; i++) {
        bool found = false;
        for (size_t j = 0; j < want; j++)
            found = found || strcmp(ids[j], q->must_include_deviceids[i]) == 0;
        ok = found;
    }
    if (!ok) {
        /* No bound pod matches: kubelet's own order, must-include first. */
        size_t k = 0;
        for (size_t i = 0; i < q->n_must_include_deviceids && k < want; i++)
            snprintf(ids[k++], 96, "%s", q->must_include_deviceids[i]);
        for (size_t i = 0; i < q->n_available_deviceids && k < want; i++)
            if (!in_list(q->must_include_deviceids, q->n_must_include_deviceids,
                         q->available_deviceids[i]))
                snprintf(ids[k++], 96, "%s", q->available_deviceids[i]);
        dp_log(dp,
               "GetPreferredAllocation: no bound pod waits for %zu GPUs among the %zu offered "
               "(%s); no preference",
               want, q->n_available_deviceids, corral_strerror(r));
    }
    for (size_t i = 0; i < want; i++)
        idp[i] = ids[i];
    out->n_deviceids = want;
    out->deviceids = idp;
    return 0;
}

static int h_prefer(corral__dp_t *dp, const uint8_t *req, size_t len, corral_buf_t *resp, char *why,
                    size_t whylen)
{
    V1beta1__PreferredAllocationRequest *q =
        v1beta1__preferred_allocation_request__unpack(NULL, len, req);
    if (!q) {
        snprintf(why, whylen, "GetPreferredAllocation: malformed request");
        return CORRAL__GRPC_INVALID_ARGUMENT;
    }
    size_t nc = q->n_container_requests;
    if (nc > 16) {
        v1beta1__preferred_allocation_request__free_unpacked(q, NULL);
        snprintf(why, whylen, "GetPreferredAllocation: %zu containers (at most 16)", nc);
        return CORRAL__GRPC_INVALID_ARGUMENT;
    }
    V1beta1__ContainerPreferredAllocationResponse cr[16];
    V1beta1__ContainerPreferredAllocationResponse *crp[16];
    char(*ids)[96] = corral_calloc(nc * CORRAL__DP_MAX_DEVS + 1, 96);
    char **idp = corral_calloc(nc * CORRAL__DP_MAX_DEVS + 1, sizeof *idp);
    int st = 0;
    for (size_t i = 0; i < nc && st == 0; i++) {
        v1beta1__container_preferred_allocation_response__init(&cr[i]);
        crp[i] = &cr[i];
        st = prefer_one(dp, q->container_requests[i], &cr[i], ids + i * CORRAL__DP_MAX_DEVS,
                        idp + i * CORRAL__DP_MAX_DEVS, why, whylen);
    }
    if (st == 0) {
        V1beta1__PreferredAllocationResponse r = V1BETA1__PREFERRED_ALLOCATION_RESPONSE__INIT;
        r.n_container_responses = nc;
        r.container_responses = crp;
        corral__grpc_pack(&r.base, resp);
    }
    corral_free(ids);
    corral_free(idp);
    v1beta1__preferred_allocation_request__free_unpacked(q, NULL);
    return st;
}

/* One container's response; the strings live in a. */
static int allocate_one(corral__dp_t *dp, const V1beta1__ContainerAllocateRequest *q,
                        corral_arena_t *a, V1beta1__ContainerAllocateResponse *out, char *why,
                        size_t whylen)
{
    size_t n = q->n_devices_ids;
    if (n > CORRAL__DP_MAX_DEVS) {
        snprintf(why, whylen, "Allocate: %zu devices (at most %d)", n, CORRAL__DP_MAX_DEVS);
        return CORRAL__GRPC_INVALID_ARGUMENT;
    }
    char(*ids)[96] = corral_arena_alloc(a, (n + 1) * 96);
    char pod[256];
    int r = ask(dp, q->devices_ids, n, n, false, ids, pod, sizeof pod);
    corral_buf_t kub;
    corral_buf_init(&kub);
    for (size_t i = 0; i < n; i++)
        corral_buf_printf(&kub, "%s%s", i ? "," : "", q->devices_ids[i]);
    if (r != 0) {
        for (size_t i = 0; i < n; i++)
            snprintf(ids[i], 96, "%s", q->devices_ids[i]);
        if (n)
            dp_log(dp,
                   "Allocate: no bound pod waits for %zu GPUs (%s); the container gets kubelet's "
                   "choice %s",
                   n, corral_strerror(r), corral_buf_str(&kub));
    } else {
        dp_log(dp, "Allocate: pod %s gets its corral.dev/gpu-ids (kubelet chose %s)", pod,
               corral_buf_str(&kub));
    }
    corral_buf_fini(&kub);
    corral_buf_t uu, ix;
    corral_buf_init(&uu);
    corral_buf_init(&ix);
    corral_buf_append(&uu, "", 0);
    corral_buf_append(&ix, "", 0);
    out->cdi_devices = corral_arena_alloc(a, (n + 1) * sizeof(V1beta1__CDIDevice *));
    int st = 0;
    pthread_mutex_lock(&dp->mu);
    for (size_t i = 0; i < n && st == 0; i++) {
        const corral__dp_device_t *d = find_dev(dp, ids[i]);
        if (!d) {
            snprintf(why, whylen, "Allocate: unknown device %.96s", ids[i]);
            st = CORRAL__GRPC_INVALID_ARGUMENT;
            break;
        }
        corral_buf_printf(&uu, "%s%s", i ? "," : "", d->id);
        corral_buf_printf(&ix, "%s%d", i ? "," : "", d->index);
        if (dp->cdi_dir) {
            V1beta1__CDIDevice *c = corral_arena_alloc(a, sizeof *c);
            v1beta1__cdidevice__init(c);
            c->name = corral_arena_printf(a, "nvidia.com/gpu=%s", d->id);
            out->cdi_devices[out->n_cdi_devices++] = c;
        }
    }
    pthread_mutex_unlock(&dp->mu);
    const char *keys[3] = {"NVIDIA_VISIBLE_DEVICES", "CORRAL_GPU_IDS", "corral.dev/gpu-ids"};
    const char *vals[3] = {corral_arena_strdup(a, corral_buf_str(&uu)),
                           corral_arena_strdup(a, corral_buf_str(&ix)),
                           corral_arena_strdup(a, corral_buf_str(&ix))};
    corral_buf_fini(&uu);
    corral_buf_fini(&ix);
    if (st != 0)
        return st;
    V1beta1__ContainerAllocateResponse__EnvsEntry *ev = corral_arena_alloc(a, 2 * sizeof *ev);
    V1beta1__ContainerAllocateResponse__AnnotationsEntry *an = corral_arena_alloc(a, sizeof *an);
    out->envs = corral_arena_alloc(a, 2 * sizeof(V1beta1__ContainerAllocateResponse__EnvsEntry *));
    for (int i = 0; i < 2; i++) {
        v1beta1__container_allocate_response__envs_entry__init(&ev[i]);
        ev[i].key = (char *)keys[i];
        ev[i].value = (char *)vals[i];
        out->envs[i] = &ev[i];
    }
    out->n_envs = 2;
    v1beta1__container_allocate_response__annotations_entry__init(an);
    an->key = (char *)keys[2];
    an->value = (char *)vals[2];
    out->annotations =
        corral_arena_alloc(a, sizeof(V1beta1__ContainerAllocateResponse__AnnotationsEntry *));
    out->annotations[0] = an;
    out->n_annotations = 1;
    return 0;
}

static int h_allocate(corral__dp_t *dp, const uint8_t *req, size_t len, corral_buf_t *resp,
                      char *why, size_t whylen)
{
    V1beta1__AllocateRequest *q = v1beta1__allocate_request__unpack(NULL, len, req);
    if (!q) {
        snprintf(why, whylen, "Allocate: malformed request");
        return CORRAL__GRPC_INVALID_ARGUMENT;
    }
    size_t nc = q->n_container_requests;
    int st = 0;
    if (nc > 16) {
        snprintf(why, whylen, "Allocate: %zu containers (at most 16)", nc);
        st = CORRAL__GRPC_INVALID_ARGUMENT;
    }
    corral_arena_t a;
    corral_arena_init(&a);
    V1beta1__ContainerAllocateResponse cr[16];
    V1beta1__ContainerAllocateResponse *crp[16];
    for (size_t i = 0; i < nc && st == 0; i++) {
        v1beta1__container_allocate_response__init(&cr[i]);
        crp[i] = &cr[i];
        st = allocate_one(dp, q->container_requests[i], &a, &cr[i], why, whylen);
    }
    if (st == 0) {
        V1beta1__AllocateResponse r = V1BETA1__ALLOCATE_RESPONSE__INIT;
        r.n_container_responses = nc;
        r.container_responses = crp;
        corral__grpc_pack(&r.base, resp);
    }
    corral_arena_fini(&a);
    v1beta1__allocate_request__free_unpacked(q, NULL);
    return st;
}

int corral__dp_handle(void *ctx, const char *path, const uint8_t *req, size_t len,
                      corral_buf_t *resp, char *why, size_t whylen)
{
    corral__dp_t *dp = ctx;
    if (strcmp(path, P_OPTIONS) == 0) {
        V1beta1__DevicePluginOptions o = V1BETA1__DEVICE_PLUGIN_OPTIONS__INIT;
        o.pre_start_required = false;
        o.get_preferred_allocation_available = true;
        corral__grpc_pack(&o.base, resp);
        return 0;
    }
    if (strcmp(path, P_LAW) == 0) {
        pthread_mutex_lock(&dp->mu);
        devices_msg(dp, resp);
        pthread_mutex_unlock(&dp->mu);
        return CORRAL__GRPC_KEEP_OPEN;
    }
    if (strcmp(path, P_PREFER) == 0)
        return h_prefer(dp, req, len, resp, why, whylen);
    if (strcmp(path, P_ALLOCATE) == 0)
        return h_allocate(dp, req, len, resp, why, whylen);
    if (strcmp(path, P_PRESTART) == 0) {
        V1beta1__PreStartContainerResponse r = V1BETA1__PRE_START_CONTAINER_RESPONSE__INIT;
        corral__grpc_pack(&r.base, resp);
        return 0;
    }
    snprintf(why, whylen, "unknown method %.100s", path);
    return CORRAL__GRPC_UNIMPLEMENTED;
}

static int grpc_handler(void *ctx, const char *path, const uint8_t *req, size_t len,
                        corral_buf_t *resp, char *why, size_t whylen)
{
    return corral__dp_handle(ctx, path, req, len, resp, why, whylen);
}

/* --- CDI --------------------------------------------------------------------------------- */

static void cdi_node(corral_buf_t *out, const char *dev_dir, const char *name, bool *first)
{
    char host[4096];
    snprintf(host, sizeof host, "%s/%s", dev_dir, name);
    if (access(host, F_OK) != 0)
        return;
    corral_buf_printf(out, "%s{\"path\":\"/dev/%s\"", *first ? "" : ",", name);
    if (strcmp(dev_dir, "/dev") != 0) {
        corral_buf_puts(out, ",\"hostPath\":");
        corral_json_quote(out, host, strlen(host));
    }
    corral_buf_putc(out, '}');
    *first = false;
}

static void cdi_device(corral_buf_t *out, const corral__dp_device_t *d, const char *name,
                       const char *dev_dir)
{
    corral_buf_puts(out, "{\"name\":");
    corral_json_quote(out, name, strlen(name));
    corral_buf_puts(out, ",\"containerEdits\":{\"deviceNodes\":[");
    char node[32];
    snprintf(node, sizeof node, "nvidia%d", d->index);
    bool first = true;
    cdi_node(out, dev_dir, node, &first);
    corral_buf_puts(out, "]");
    if (first) {
        /* No device node here (a simulated GPU): an edit CDI accepts. */
        corral_buf_printf(out, ",\"env\":[\"CORRAL_CDI_GPU_%d=", d->index);
        corral_buf_puts(out, d->id);
        corral_buf_puts(out, "\"]");
    }
    corral_buf_puts(out, "}}");
}

void corral__dp_cdi_spec(const corral__dp_device_t *devs, size_t n, const char *dev_dir,
                         corral_buf_t *out)
{
    corral_buf_puts(out, "{\"cdiVersion\":\"0.6.0\",\"kind\":\"nvidia.com/gpu\",\"devices\":[");
    for (size_t i = 0; i < n; i++) {
        char idx[16];
        snprintf(idx, sizeof idx, "%d", devs[i].index);
        corral_buf_puts(out, i ? "," : "");
        cdi_device(out, &devs[i], devs[i].id, dev_dir);
        corral_buf_putc(out, ',');
        cdi_device(out, &devs[i], idx, dev_dir);
    }
    corral_buf_puts(out, "],\"containerEdits\":{\"deviceNodes\":[");
    bool first = true;
    cdi_node(out, dev_dir, "nvidiactl", &first);
    cdi_node(out, dev_dir, "nvidia-uvm", &first);
    cdi_node(out, dev_dir, "nvidia-uvm-tools", &first);
    corral_buf_puts(out, "]}}\n");
}

static int write_cdi(corral__dp_t *dp, char *err, size_t errlen)
{
    const char *dev_dir = getenv("CORRAL_DP_DEV_DIR");
    if (!dev_dir || !*dev_dir)
        dev_dir = "/dev";
    corral_buf_t b;
    corral_buf_init(&b);
    corral__dp_cdi_spec(dp->devs, dp->n, dev_dir, &b);
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dp->cdi_dir, CORRAL__DP_CDI_FILE);
    int r = corral__mkdirs(dp->cdi_dir);
    if (r == 0)
        r = corral__agent_write_file(path, b.p, b.len);
    corral_buf_fini(&b);
    if (r != 0)
        snprintf(err, errlen, "cannot write the CDI spec %s: %s", path, strerror(errno));
    return r;
}

/* --- registration ------------------------------------------------------------------------ */

static int do_register(corral__dp_t *dp, char *why, size_t whylen)
{
    corral__grpc_client_t *c = corral__grpc_connect(dp->kubelet, why, whylen);
    if (!c)
        return CORRAL_EIO;
    V1beta1__DevicePluginOptions o = V1BETA1__DEVICE_PLUGIN_OPTIONS__INIT;
    o.get_preferred_allocation_available = true;
    V1beta1__RegisterRequest q = V1BETA1__REGISTER_REQUEST__INIT;
    q.version = "v1beta1";
    q.endpoint = dp->endpoint;
    q.resource_name = dp->resource;
    q.options = &o;
    corral_buf_t req, resp;
    corral_buf_init(&req);
    corral_buf_init(&resp);
    corral__grpc_pack(&q.base, &req);
    int st = corral__grpc_call(c, P_REGISTER, req.p, req.len, &resp, 5000, why, whylen);
    corral_buf_fini(&req);
    corral_buf_fini(&resp);
    corral__grpc_close(c);
    return st;
}

static bool stat_ino(const char *path, ino_t *ino)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISSOCK(st.st_mode))
        return false;
    *ino = st.st_ino;
    return true;
}

/* Make sure the socket is served; false when it cannot be. */
static bool ensure_server(corral__dp_t *dp, bool *need_register)
{
    pthread_mutex_lock(&dp->mu);
    corral__grpc_server_t *old = dp->srv;
    bool ok = old && corral__grpc_server_socket_ok(old);
    if (!ok)
        dp->srv = NULL;
    pthread_mutex_unlock(&dp->mu);
    if (ok)
        return true;
    if (old)
        dp_log(dp, "%s was removed (kubelet restarted?): serving it again", dp->sock);
    corral__grpc_server_stop(old);
    char err[256];
    corral__grpc_server_t *s =
        corral__grpc_server_start(dp->sock, grpc_handler, dp, err, sizeof err);
    if (!s) {
        dp_log(dp, "%s", err);
        return false;
    }
    pthread_mutex_lock(&dp->mu);
    dp->srv = s;
    pthread_mutex_unlock(&dp->mu);
    *need_register = true;
    return true;
}

static void *mgr_main(void *arg)
{
    corral__dp_t *dp = arg;
    bool need = true, warned = false;
    ino_t kino = 0;
    while (!dp->stop) {
        bool served = ensure_server(dp, &need);
        ino_t now = 0;
        bool up = stat_ino(dp->kubelet, &now);
        if (up && now != kino)
            need = true;
        if (served && need && up) {
            char why[256];
            int st = do_register(dp, why, sizeof why);
            if (st == 0) {
                need = warned = false;
                kino = now;
                pthread_mutex_lock(&dp->mu);
                dp->regs++;
                pthread_mutex_unlock(&dp->mu);
                dp_log(dp, "registered %s (endpoint %s) with kubelet at %s", dp->resource,
                       dp->endpoint, dp->kubelet);
            } else if (!warned) {
                warned = true;
                dp_log(dp, "registering with kubelet failed, retrying every second: %s", why);
            }
        }
        struct pollfd pf[2] = {{.fd = dp->wake[0], .events = POLLIN},
                               {.fd = dp->ino_fd, .events = POLLIN}};
        if (poll(pf, dp->ino_fd >= 0 ? 2 : 1, 1000) > 0 && (pf[1].revents & POLLIN)) {
            char buf[4096];
            while (read(dp->ino_fd, buf, sizeof buf) > 0) {
            }
        }
    }
    return NULL;
}

/* --- start and stop ---------------------------------------------------------------------- */

/* Everything but the manager thread (stopped, or never started). */
static void dp_free(corral__dp_t *dp)
{
    corral__grpc_server_stop(dp->srv);
    if (dp->ino_fd >= 0)
        close(dp->ino_fd);
    if (dp->wake[0] >= 0) {
        close(dp->wake[0]);
        close(dp->wake[1]);
    }
    pthread_mutex_destroy(&dp->mu);
    corral_free(dp->plugin_dir);
    corral_free(dp->resource);
    corral_free(dp->endpoint);
    corral_free(dp->cdi_dir);
    corral_free(dp);
}

static char *dup_or(const char *s, const char *def)
{
    return corral_strdup(s && *s ? s : def);
}

corral__dp_t *corral__dp_start(const corral__dp_config_t *cfg, const corral__dp_device_t *devs,
                               size_t n, char *err, size_t errlen)
{
    if (n > CORRAL__DP_MAX_DEVS) {
        snprintf(err, errlen, "device plugin: %zu GPUs (at most %d)", n, CORRAL__DP_MAX_DEVS);
        return NULL;
    }
    corral__dp_t *dp = corral_calloc(1, sizeof *dp);
    dp->plugin_dir = dup_or(cfg->plugin_dir, CORRAL__DP_PLUGIN_DIR);
    dp->resource = dup_or(cfg->resource, CORRAL__DP_RESOURCE);
    dp->endpoint = dup_or(cfg->endpoint, CORRAL__DP_ENDPOINT);
    dp->cdi_dir = cfg->cdi_dir ? corral_strdup(cfg->cdi_dir) : NULL;
    dp->lookup = cfg->lookup;
    dp->ctx = cfg->ctx;
    dp->log = cfg->log;
    dp->wake[0] = dp->wake[1] = dp->ino_fd = -1;
    memcpy(dp->devs, devs, n * sizeof *devs);
    for (size_t i = 0; i < n; i++)
        dp->devs[i].id[sizeof dp->devs[i].id - 1] = 0;
    dp->n = n;
    snprintf(dp->sock, sizeof dp->sock, "%s/%s", dp->plugin_dir, dp->endpoint);
    snprintf(dp->kubelet, sizeof dp->kubelet, "%s/kubelet.sock", dp->plugin_dir);
    pthread_mutex_init(&dp->mu, NULL);
    if (strchr(dp->endpoint, '/')) {
        snprintf(err, errlen, "device plugin: endpoint %s must be a file name in %s", dp->endpoint,
                 dp->plugin_dir);
        goto fail;
    }
    if (dp->cdi_dir && write_cdi(dp, err, errlen) != 0)
        goto fail;
    dp->srv = corral__grpc_server_start(dp->sock, grpc_handler, dp, err, errlen);
    if (!dp->srv)
        goto fail;
    dp->ino_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (dp->ino_fd >= 0 &&
        inotify_add_watch(dp->ino_fd, dp->plugin_dir,
                          IN_CREATE | IN_DELETE | IN_MOVED_TO | IN_MOVED_FROM) < 0) {
        close(dp->ino_fd);
        dp->ino_fd = -1;
    }
    if (pipe2(dp->wake, O_CLOEXEC | O_NONBLOCK) != 0 ||
        pthread_create(&dp->mgr, NULL, mgr_main, dp) != 0) {
        snprintf(err, errlen, "device plugin: cannot start its thread: %s", strerror(errno));
        goto fail;
    }
    return dp;
fail:
    dp_free(dp);
    return NULL;
}

void corral__dp_set_health(corral__dp_t *dp, const char *id, bool healthy)
{
    pthread_mutex_lock(&dp->mu);
    bool changed = false;
    for (size_t i = 0; i < dp->n; i++) {
        if (strcmp(dp->devs[i].id, id) == 0 && dp->devs[i].healthy != healthy) {
            dp->devs[i].healthy = healthy;
            changed = true;
        }
    }
    if (changed && dp->srv) {
        corral_buf_t m;
        corral_buf_init(&m);
        devices_msg(dp, &m);
        corral__grpc_server_broadcast(dp->srv, P_LAW, m.p, m.len);
        corral_buf_fini(&m);
    }
    pthread_mutex_unlock(&dp->mu);
    if (changed)
        dp_log(dp, "GPU %s is now %s: kubelet told", id, healthy ? "healthy" : "unhealthy");
}

uint64_t corral__dp_registrations(corral__dp_t *dp)
{
    pthread_mutex_lock(&dp->mu);
    uint64_t n = dp->regs;
    pthread_mutex_unlock(&dp->mu);
    return n;
}

void corral__dp_stop(corral__dp_t *dp)
{
    if (!dp)
        return;
    dp->stop = 1;
    ssize_t w = write(dp->wake[1], "s", 1);
    (void)w;
    pthread_join(dp->mgr, NULL);
    dp_free(dp);
}
