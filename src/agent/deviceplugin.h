/*
 * The kubelet device plugin (API v1beta1) the agent runs in cluster mode
 * (`corral agent --kube`), so that the GPUs Corral's scheduler chose for a
 * pod (its corral.dev/gpu-ids) are the GPUs its container gets: the plugin
 * registers with kubelet on plugin_dir/kubelet.sock, serves DevicePlugin on
 * plugin_dir/endpoint on its own threads, re-registers when kubelet
 * restarts, and asks the agent (lookup, from its informer's cache: never the
 * API server on kubelet's path) which GPUs the pod being admitted was given.
 * docs/agent.md, "Device plugin"; docs/kubernetes.md, "Device plugin".
 */
#ifndef CORRAL_AGENT_DEVICEPLUGIN_H
#define CORRAL_AGENT_DEVICEPLUGIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "corral/buf.h"

typedef struct corral__dp corral__dp_t;
typedef struct corral__dp_device {
    char id[96]; /* the GPU's UUID: the device ID kubelet sees */
    int index;   /* NVML index: what corral.dev/gpu-ids names */
    bool healthy;
    int numa_node; /* -1 unknown */
} corral__dp_device_t;
typedef struct corral__dp_config {
    const char *plugin_dir; /* default /var/lib/kubelet/device-plugins */
    const char *resource;   /* default nvidia.com/gpu */
    const char *endpoint;   /* socket name in plugin_dir, default corral-gpu.sock */
    const char *cdi_dir;    /* write a CDI spec here when non-NULL (e.g. /var/run/cdi) */
    /* The GPUs the scheduler gave the pod kubelet is admitting: called by
     * GetPreferredAllocation (available = the devices kubelet may give, size =
     * want) and by Allocate (available = the devices kubelet chose). Fills
     * ids[0..want) with device IDs (UUIDs) and pod with "ns/name"; returns 0,
     * or CORRAL_ENOENT when no bound pod waiting for `want` GPUs matches. */
    int (*lookup)(void *ctx, const char *const *available, size_t navailable, size_t want,
                  char (*ids)[96], char *pod, size_t podlen);
    void *ctx;
    void (*log)(void *ctx, const char *msg);
} corral__dp_config_t;
corral__dp_t *corral__dp_start(const corral__dp_config_t *cfg, const corral__dp_device_t *devs,
                               size_t n, char *err, size_t errlen);
void corral__dp_set_health(corral__dp_t *dp, const char *id, bool healthy);
void corral__dp_stop(corral__dp_t *dp);

/* --- beyond the agent's contract: tests and the fuzz target ------------------------------ */

#define CORRAL__DP_PLUGIN_DIR "/var/lib/kubelet/device-plugins"
#define CORRAL__DP_RESOURCE   "nvidia.com/gpu"
#define CORRAL__DP_ENDPOINT   "corral-gpu.sock"
#define CORRAL__DP_CDI_FILE   "corral-nvidia-gpu.json"
#define CORRAL__DP_MAX_DEVS   64

/* Registrations done so far (the first and every re-registration). */
uint64_t corral__dp_registrations(corral__dp_t *dp);
/* The DevicePlugin service's handler (a corral__grpc_handler_fn; ctx is dp). */
int corral__dp_handle(void *dp, const char *path, const uint8_t *req, size_t len,
                      corral_buf_t *resp, char *why, size_t whylen);
/* The CDI spec for devs as JSON into out; dev_dir is where the device nodes
 * are looked for ("/dev"). */
void corral__dp_cdi_spec(const corral__dp_device_t *devs, size_t n, const char *dev_dir,
                         corral_buf_t *out);

#endif
