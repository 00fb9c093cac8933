/* The kubelet device plugin (src/agent/deviceplugin.c) against the stand-in
 * kubelet (src/agent/standin_kubelet.c), both in this process over unix
 * sockets in a temporary directory: registration, ListAndWatch updates,
 * GetPreferredAllocation and Allocate honouring the agent's lookup, the
 * fallback to kubelet's devices, re-registration after a kubelet restart,
 * and hostile input on the plugin's socket. Waits are bounded polls, never
 * timing assertions. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "agent/deviceplugin.h"
#include "agent/grpc.h"
#include "agent/standin_kubelet.h"
#include "corral/common.h"
#include "deviceplugin.pb-c.h"

#define RES "nvidia.com/gpu"

static char dir[] = "/tmp/corral-dp-XXXXXX";
static char cdi[300];
static corral__skl_t *kl;
static corral__dp_t *dp;

/* The agent's side: lookup answers from `pick` (NULL: no pod matches). */
static struct {
    pthread_mutex_t mu;
    const char *pick[8];
    size_t npick;
    int calls;
    char log[8192];
} agent = {.mu = PTHREAD_MUTEX_INITIALIZER};

static int lookup(void *ctx, const char *const *available, size_t navailable, size_t want,
                  char (*ids)[96], char *pod, size_t podlen)
{
    (void)ctx;
    (void)available;
    (void)navailable;
    pthread_mutex_lock(&agent.mu);
    agent.calls++;
    int rc = CORRAL_ENOENT;
    if (agent.npick && agent.npick == want) {
        for (size_t i = 0; i < want; i++)
            snprintf(ids[i], 96, "%s", agent.pick[i]);
        snprintf(pod, podlen, "team-a/train-0");
        rc = 0;
    }
    pthread_mutex_unlock(&agent.mu);
    return rc;
}

static void logfn(void *ctx, const char *msg)
{
    (void)ctx;
    pthread_mutex_lock(&agent.mu);
    size_t n = strlen(agent.log);
    snprintf(agent.log + n, sizeof agent.log - n, "%s\n", msg);
    pthread_mutex_unlock(&agent.mu);
}

static void set_pick(size_t n, const char *a, const char *b)
{
    pthread_mutex_lock(&agent.mu);
    agent.npick = n;
    agent.pick[0] = a;
    agent.pick[1] = b;
    pthread_mutex_unlock(&agent.mu);
}

static const corral__dp_device_t devs[4] = {
    {"GPU-00000000-0000-0000-0000-000000000000", 0, true, 0},
    {"GPU-11111111-1111-1111-1111-111111111111", 1, true, 0},
    {"GPU-22222222-2222-2222-2222-222222222222", 2, true, 1},
    {"GPU-33333333-3333-3333-3333-333333333333", 3, true, -1},
};

static void start_all(bool with_cdi)
{
    char err[512];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(cdi, sizeof cdi, "%s/cdi", dir);
    kl = corral__skl_start(dir, err, sizeof err);
    cr_assert_not_null(kl, "%s", err);
    corral__dp_config_t cfg = {
        .plugin_dir = dir, .lookup = lookup, .log = logfn, .cdi_dir = with_cdi ? cdi : NULL};
    dp = corral__dp_start(&cfg, devs, 4, err, sizeof err);
    cr_assert_not_null(dp, "%s", err);
    cr_assert(corral__skl_wait(kl, RES, 1, 1, 10000), "the plugin never registered");
}

static void setup(void)
{
    set_pick(0, NULL, NULL);
    agent.log[0] = 0;
    start_all(true);
}

static void teardown(void)
{
    corral__dp_stop(dp);
    corral__skl_stop(kl);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0); /* lint: allow (test cleanup) */
    memcpy(dir + strlen(dir) - 6, "XXXXXX", 6);
}

TestSuite(deviceplugin, .init = setup, .fini = teardown, .timeout = 60);

Test(deviceplugin, registers_and_lists_devices)
{
    uint64_t regs, upd;
    int healthy;
    cr_assert_eq(corral__skl_plugin(kl, RES, &regs, &upd, &healthy), 4);
    cr_assert_eq(healthy, 4);
    cr_assert_eq(regs, 1);
    cr_assert_geq(corral__dp_registrations(dp), 1);
}

Test(deviceplugin, list_and_watch_follows_health)
{
    corral__dp_set_health(dp, devs[1].id, false);
    cr_assert(corral__skl_wait(kl, RES, 1, 2, 10000));
    uint64_t regs, upd;
    int healthy;
    corral__skl_plugin(kl, RES, &regs, &upd, &healthy);
    cr_assert_eq(healthy, 3);
    corral__dp_set_health(dp, devs[1].id, false); /* no change: no update */
    corral__dp_set_health(dp, devs[1].id, true);
    cr_assert(corral__skl_wait(kl, RES, 1, 3, 10000));
    corral__skl_plugin(kl, RES, &regs, &upd, &healthy);
    cr_assert_eq(healthy, 4);
    cr_assert_eq(upd, 3);

    /* An unhealthy GPU is not offered to pods. */
    corral__dp_set_health(dp, devs[0].id, false);
    cr_assert(corral__skl_wait(kl, RES, 1, 4, 10000));
    corral_buf_t line;
    corral_buf_init(&line);
    char err[256];
    cr_assert_eq(corral__skl_admit(kl, "ns/p", RES, 1, &line, err, sizeof err), 0, "%s", err);
    cr_assert(strstr(line.p, "\"devices\":[\"GPU-1111"), "%s", line.p);
    corral_buf_fini(&line);
}

Test(deviceplugin, preferred_and_allocate_follow_lookup)
{
    set_pick(2, devs[3].id, devs[2].id);
    corral_buf_t line;
    corral_buf_init(&line);
    char err[256];
    cr_assert_eq(corral__skl_admit(kl, "team-a/train-0", RES, 2, &line, err, sizeof err), 0, "%s",
                 err);
    const char *want =
        "{\"pod\":\"team-a/train-0\",\"devices\":[\"GPU-33333333-3333-3333-3333-333333333333\","
        "\"GPU-22222222-2222-2222-2222-222222222222\"],"
        "\"envs\":{\"NVIDIA_VISIBLE_DEVICES\":\"GPU-33333333-3333-3333-3333-333333333333,"
        "GPU-22222222-2222-2222-2222-222222222222\",\"CORRAL_GPU_IDS\":\"3,2\"},"
        "\"annotations\":{\"corral.dev/gpu-ids\":\"3,2\"},"
        "\"cdiDevices\":[\"nvidia.com/gpu=GPU-33333333-3333-3333-3333-333333333333\","
        "\"nvidia.com/gpu=GPU-22222222-2222-2222-2222-222222222222\"]}";
    cr_assert_str_eq(line.p, want);
    cr_assert_geq(agent.calls, 2); /* GetPreferredAllocation and Allocate */

    /* Those two are in use now: the next pod gets others. */
    set_pick(0, NULL, NULL);
    corral_buf_reset(&line);
    cr_assert_eq(corral__skl_admit(kl, "ns/q", RES, 2, &line, err, sizeof err), 0, "%s", err);
    cr_assert(strstr(line.p, "\"CORRAL_GPU_IDS\":\"0,1\""), "%s", line.p);
    corral_buf_reset(&line);
    cr_assert_neq(corral__skl_admit(kl, "ns/r", RES, 1, &line, err, sizeof err), 0);
    cr_assert(strstr(err, "UnexpectedAdmissionError"), "%s", err);
    corral__skl_release(kl, "ns/q");
    cr_assert_eq(corral__skl_admit(kl, "ns/r", RES, 1, &line, err, sizeof err), 0, "%s", err);
    corral_buf_fini(&line);

    /* The CDI spec names each GPU by UUID and by index. */
    char path[400];
    snprintf(path, sizeof path, "%s/%s", cdi, CORRAL__DP_CDI_FILE);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    char spec[8192] = "";
    size_t n = fread(spec, 1, sizeof spec - 1, f);
    spec[n] = 0;
    fclose(f);
    cr_assert(strstr(spec, "\"cdiVersion\":\"0.6.0\",\"kind\":\"nvidia.com/gpu\""), "%s", spec);
    cr_assert(strstr(spec, "{\"name\":\"GPU-22222222-2222-2222-2222-222222222222\""), "%s", spec);
    cr_assert(strstr(spec, "{\"name\":\"2\""), "%s", spec);
}

Test(deviceplugin, lookup_failure_gives_kubelets_devices)
{
    corral_buf_t line;
    corral_buf_init(&line);
    char err[256];
    cr_assert_eq(corral__skl_admit(kl, "ns/p", RES, 1, &line, err, sizeof err), 0, "%s", err);
    cr_assert(
        strstr(line.p, "\"NVIDIA_VISIBLE_DEVICES\":\"GPU-00000000-0000-0000-0000-000000000000\""),
        "%s", line.p);
    cr_assert(strstr(line.p, "\"corral.dev/gpu-ids\":\"0\""), "%s", line.p);
    corral_buf_fini(&line);
    pthread_mutex_lock(&agent.mu);
    cr_assert(strstr(agent.log, "kubelet's choice"), "%s", agent.log);
    pthread_mutex_unlock(&agent.mu);
}

/* Kubelet ignored the preference: Allocate still gives the pod its GPUs. */
Test(deviceplugin, allocate_honours_gpu_ids_over_kubelets_choice)
{
    set_pick(1, devs[3].id, NULL);
    char path[300], why[256];
    snprintf(path, sizeof path, "%s/%s", dir, CORRAL__DP_ENDPOINT);
    corral__grpc_client_t *c = corral__grpc_connect(path, why, sizeof why);
    cr_assert_not_null(c, "%s", why);
    char *ids[1] = {(char *)devs[0].id};
    V1beta1__ContainerAllocateRequest cq = V1BETA1__CONTAINER_ALLOCATE_REQUEST__INIT;
    cq.n_devices_ids = 1;
    cq.devices_ids = ids;
    V1beta1__ContainerAllocateRequest *cqp = &cq;
    V1beta1__AllocateRequest q = V1BETA1__ALLOCATE_REQUEST__INIT;
    q.n_container_requests = 1;
    q.container_requests = &cqp;
    uint8_t req[512];
    size_t len = v1beta1__allocate_request__pack(&q, req);
    corral_buf_t resp;
    corral_buf_init(&resp);
    cr_assert_eq(corral__grpc_call(c, "/v1beta1.DevicePlugin/Allocate", req, len, &resp, 5000, why,
                                   sizeof why),
                 0, "%s", why);
    V1beta1__AllocateResponse *r =
        v1beta1__allocate_response__unpack(NULL, resp.len, (const uint8_t *)resp.p);
    cr_assert_not_null(r);
    cr_assert_eq(r->n_container_responses, 1);
    const V1beta1__ContainerAllocateResponse *cr = r->container_responses[0];
    cr_assert_eq(cr->n_envs, 2);
    cr_assert_str_eq(cr->envs[0]->value, devs[3].id);
    cr_assert_str_eq(cr->envs[1]->value, "3");
    v1beta1__allocate_response__free_unpacked(r, NULL);

    /* A device that is not ours is an error; unknown methods too. */
    set_pick(0, NULL, NULL);
    ids[0] = "GPU-nope";
    len = v1beta1__allocate_request__pack(&q, req);
    cr_assert_eq(corral__grpc_call(c, "/v1beta1.DevicePlugin/Allocate", req, len, &resp, 5000, why,
                                   sizeof why),
                 CORRAL__GRPC_INVALID_ARGUMENT);
    cr_assert_eq(
        corral__grpc_call(c, "/v1beta1.DevicePlugin/Nope", "", 0, &resp, 5000, why, sizeof why),
        CORRAL__GRPC_UNIMPLEMENTED);
    /* Options: preferred allocation offered, no PreStartContainer. */
    cr_assert_eq(corral__grpc_call(c, "/v1beta1.DevicePlugin/GetDevicePluginOptions", "", 0, &resp,
                                   5000, why, sizeof why),
                 0, "%s", why);
    V1beta1__DevicePluginOptions *o =
        v1beta1__device_plugin_options__unpack(NULL, resp.len, (const uint8_t *)resp.p);
    cr_assert(o && o->get_preferred_allocation_available && !o->pre_start_required);
    v1beta1__device_plugin_options__free_unpacked(o, NULL);
    corral_buf_fini(&resp);
    corral__grpc_close(c);
}

Test(deviceplugin, reregisters_after_kubelet_restart)
{
    corral__skl_stop(kl);
    char err[256];
    kl = corral__skl_start(dir, err, sizeof err); /* removes the plugin's socket too */
    cr_assert_not_null(kl, "%s", err);
    cr_assert(corral__skl_wait(kl, RES, 1, 1, 10000), "no re-registration");
    cr_assert_geq(corral__dp_registrations(dp), 2);
    corral_buf_t line;
    corral_buf_init(&line);
    cr_assert_eq(corral__skl_admit(kl, "ns/p", RES, 4, &line, err, sizeof err), 0, "%s", err);
    corral_buf_fini(&line);
}

static int raw_connect(void)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s/%s", dir, CORRAL__DP_ENDPOINT);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    cr_assert_eq(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    return fd;
}

Test(deviceplugin, garbage_and_oversize_refused)
{
    /* Not HTTP/2: the server drops the connection. */
    int fd = raw_connect();
    const char junk[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n\x00\x01\x02garbage";
    cr_assert_gt(write(fd, junk, sizeof junk), 0);
    char buf[4096];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0) {
    }
    cr_assert_eq(n, 0);
    close(fd);

    /* A message over the bound: RESOURCE_EXHAUSTED, and the plugin serves on. */
    char path[300], why[256];
    snprintf(path, sizeof path, "%s/%s", dir, CORRAL__DP_ENDPOINT);
    corral__grpc_client_t *c = corral__grpc_connect(path, why, sizeof why);
    cr_assert_not_null(c, "%s", why);
    size_t big = CORRAL__GRPC_MAX_MSG + 1;
    char *msg = calloc(1, big);
    corral_buf_t resp;
    corral_buf_init(&resp);
    cr_assert_eq(corral__grpc_call(c, "/v1beta1.DevicePlugin/Allocate", msg, big, &resp, 10000, why,
                                   sizeof why),
                 CORRAL__GRPC_RESOURCE_EXHAUSTED, "%s", why);
    free(msg);
    /* A malformed protobuf message. */
    cr_assert_eq(corral__grpc_call(c, "/v1beta1.DevicePlugin/Allocate", "\xff\xff\xff", 3, &resp,
                                   5000, why, sizeof why),
                 CORRAL__GRPC_INVALID_ARGUMENT, "%s", why);
    cr_assert_eq(corral__grpc_call(c, "/v1beta1.DevicePlugin/GetDevicePluginOptions", "", 0, &resp,
                                   5000, why, sizeof why),
                 0, "%s", why);
    corral_buf_fini(&resp);
    corral__grpc_close(c);
}

Test(deviceplugin, frames)
{
    const uint8_t *m;
    size_t ml, used;
    const uint8_t ok[] = {0, 0, 0, 0, 2, 'h', 'i', 0};
    cr_assert_eq(corral__grpc_frame_parse(ok, sizeof ok, 16, &m, &ml, &used), 1);
    cr_assert_eq(ml, 2);
    cr_assert_eq(used, 7);
    cr_assert_eq(corral__grpc_frame_parse(ok, 6, 16, &m, &ml, &used), 0);
    cr_assert_eq(corral__grpc_frame_parse(ok, 4, 16, &m, &ml, &used), 0);
    const uint8_t big[] = {0, 0x7f, 0xff, 0xff, 0xff};
    cr_assert_eq(corral__grpc_frame_parse(big, sizeof big, 16, &m, &ml, &used), CORRAL_ETOOBIG);
    const uint8_t zip[] = {1, 0, 0, 0, 0};
    cr_assert_eq(corral__grpc_frame_parse(zip, sizeof zip, 16, &m, &ml, &used),
                 CORRAL_EUNSUPPORTED);
    corral_buf_t b;
    corral_buf_init(&b);
    corral__grpc_frame_put(&b, "hi", 2);
    cr_assert_eq(b.len, 7);
    cr_assert_eq(memcmp(b.p, ok, 7), 0);
    corral_buf_fini(&b);
}
