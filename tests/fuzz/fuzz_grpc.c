/* libFuzzer target: the device plugin's gRPC server (src/agent/grpc.c over
 * nghttp2) and its handlers (src/agent/deviceplugin.c, protobuf-c messages)
 * never crash, hang or leak on any bytes. The first byte picks the entry:
 * 0: the bytes are what a peer sends on a fresh connection (HTTP/2 preface,
 * frames, gRPC messages); otherwise the byte picks a method and the rest is
 * its request message, handed to the handler as the server would. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/deviceplugin.h"
#include "agent/grpc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static corral__dp_t *dp;

static int lookup(void *ctx, const char *const *available, size_t navailable, size_t want,
                  char (*ids)[96], char *pod, size_t podlen)
{
    (void)ctx;
    if (want > navailable)
        return -2;
    for (size_t i = 0; i < want; i++)
        snprintf(ids[i], 96, "%s", available[navailable - 1 - i]);
    snprintf(pod, podlen, "ns/pod");
    return 0;
}

static void quiet(void *ctx, const char *msg)
{
    (void)ctx;
    (void)msg;
}

static char dir[] = "/tmp/corral-fuzz-grpc-XXXXXX";

/* At exit: the plugin's socket and the directory go (replays leave none). */
static void done(void)
{
    corral__dp_stop(dp);
    rmdir(dir);
}

static void init(void)
{
    static corral__dp_device_t devs[3] = {
        {"GPU-a", 0, true, 0}, {"GPU-b", 1, true, -1}, {"GPU-c", 2, false, 1}};
    if (!mkdtemp(dir))
        abort();
    corral__dp_config_t cfg = {.plugin_dir = dir, .lookup = lookup, .log = quiet};
    char err[256];
    dp = corral__dp_start(&cfg, devs, 3, err, sizeof err);
    if (!dp)
        abort();
    atexit(done);
}

static const char *const paths[] = {
    "/v1beta1.DevicePlugin/GetDevicePluginOptions", "/v1beta1.DevicePlugin/ListAndWatch",
    "/v1beta1.DevicePlugin/GetPreferredAllocation", "/v1beta1.DevicePlugin/Allocate",
    "/v1beta1.DevicePlugin/PreStartContainer",      "/v1beta1.DevicePlugin/Nope",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!dp)
        init();
    if (size < 1 || size > 4 * CORRAL__GRPC_MAX_MSG)
        return 0;
    if (data[0] == 0) {
        corral__grpc_server_feed(corral__dp_handle, dp, data + 1, size - 1);
        return 0;
    }
    if (size - 1 > CORRAL__GRPC_MAX_MSG)
        return 0;
    corral_buf_t resp;
    corral_buf_init(&resp);
    char why[256] = "";
    int st = corral__dp_handle(dp, paths[data[0] % 6], data + 1, size - 1, &resp, why, sizeof why);
    if (st > 0 && !why[0])
        abort();
    corral_buf_fini(&resp);
    return 0;
}
