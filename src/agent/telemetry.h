/*
 * GPU telemetry and resource metrics of one node (internal to the agent):
 * per GPU the readings NVIDIA's DCGM exporter publishes (utilization,
 * framebuffer, temperatures, power, energy, clocks, last XID, PCIe and
 * NVLink traffic), read from NVML (nvml_telem.c) or simulated from the pods
 * that hold each GPU (telemetry.c), the GPU health the Node's GPUHealthy
 * condition reports, and the CPU/memory snapshot kubelet's
 * /metrics/resource serves. telemetry.c renders both expositions; the log
 * server serves them (GET /metrics, GET /metrics/resource).
 *
 * Threads: every call takes the object's mutex; the agent's thread updates
 * owners, pods and health, the log server's thread renders.
 *
 * The simulation is a pure function of what the agent told it (who holds
 * which GPU at what load, from when) and the clock: utilization is the
 * holder's corral.dev/sim-utilization (default CORRAL__SIM_BUSY) with a
 * +-3 jitter seeded from node, GPU and 5 s time bucket; temperatures and
 * power follow it with first-order lags (30 s and 2 s); energy integrates
 * power exactly; memory used is proportional to load; SM clocks boost
 * under load. docs/observability.md lists every series.
 */
#ifndef CORRAL_AGENT_TELEMETRY_H
#define CORRAL_AGENT_TELEMETRY_H

#include <stdbool.h>
#include <stdint.h>

#include "corral/buf.h"
#include "corral/gpu.h"

#define CORRAL__SIM_BUSY     90 /* % for a GPU pod without corral.dev/sim-utilization */
#define CORRAL__SIM_UTIL_ANN "corral.dev/sim-utilization"
#define CORRAL__GPU_USED_ANN "corral.dev/gpu-seconds-used"
#define CORRAL__XID_HOLD_S   300 /* an XID keeps the GPU unhealthy this long */

/* The DCGM fields, in the order they are printed. */
enum {
    CORRAL__TM_SM_CLOCK,
    CORRAL__TM_MEM_CLOCK,
    CORRAL__TM_MEMORY_TEMP,
    CORRAL__TM_GPU_TEMP,
    CORRAL__TM_POWER_USAGE,
    CORRAL__TM_TOTAL_ENERGY,
    CORRAL__TM_PCIE_TX,
    CORRAL__TM_PCIE_RX,
    CORRAL__TM_GPU_UTIL,
    CORRAL__TM_MEM_COPY_UTIL,
    CORRAL__TM_XID_ERRORS,
    CORRAL__TM_FB_FREE,
    CORRAL__TM_FB_USED,
    CORRAL__TM_NVLINK_TOTAL,
    CORRAL__TM_N
};

/* One GPU's readings: a field whose bit is not in present is not printed
 * (NVML lacks the call or answered NOT_SUPPORTED). */
typedef struct corral__gpu_sample {
    uint32_t present;
    double v[CORRAL__TM_N];
} corral__gpu_sample_t;

/* Who holds a GPU: NULL pod means nobody (idle). util: simulated load, 0-100. */
typedef struct corral__gpu_owner {
    const char *ns, *pod, *container;
    int util;
    bool exact; /* util is the workload's own report (CORRAL_GPU_LOAD_FILE): no jitter */
} corral__gpu_owner_t;

/* One container's CPU and memory for /metrics/resource. */
typedef struct corral__ctr_usage {
    const char *ns, *pod, *container;
    double cpu_s;     /* cumulative core-seconds */
    double mem_bytes; /* working set */
} corral__ctr_usage_t;

typedef struct corral__telem corral__telem_t;

/* For inv's GPUs, labelled with hostname. An "nvml" inventory reads NVML
 * (a library that will not load leaves every GPU unreadable); any other is
 * simulated. now_us starts the simulation's clock. */
corral__telem_t *corral__telem_new(const corral_gpu_inventory_t *inv, const char *hostname,
                                   int64_t now_us);
void corral__telem_free(corral__telem_t *t);

/* Set the holders of every GPU at once (owners[i] for GPU i, n = the
 * inventory's count); strings are copied. */
void corral__telem_set_owners(corral__telem_t *t, const corral__gpu_owner_t *owners, int n,
                              int64_t now_us);
/* Replace the resource snapshot (node totals and containers), taken at now_us. */
void corral__telem_set_usage(corral__telem_t *t, double node_cpu_s, double node_mem_bytes,
                             const corral__ctr_usage_t *c, size_t n, int64_t now_us);

/* Bring the readings up to now_us: the simulation advances; NVML GPUs are
 * read and XID events drained. */
void corral__telem_update(corral__telem_t *t, int64_t now_us);
/* GPU i's utilization as last updated (0-100), and its integral in
 * GPU-seconds (utilization/100 x dt) since the object was made. */
double corral__telem_util(corral__telem_t *t, int i);
double corral__telem_util_seconds(corral__telem_t *t, int i);
/* A copy of GPU i's last readings. */
void corral__telem_sample(corral__telem_t *t, int i, corral__gpu_sample_t *out);

/* Health as of the last update: true when every GPU is readable and none
 * had an XID in the last hold_s seconds. Otherwise reason ("XidError" or
 * "GPUUnreadable") and a message naming the GPUs. */
bool corral__telem_healthy(corral__telem_t *t, int64_t now_us, char *reason, size_t rlen, char *msg,
                           size_t mlen);
void corral__telem_set_xid_hold(corral__telem_t *t, int hold_s);
/* GPU i alone, as corral__telem_healthy judges it (the device plugin's
 * per-device health). */
bool corral__telem_gpu_healthy(corral__telem_t *t, int i, int64_t now_us);
/* Record an XID on GPU i (NVML events do this; tests and simulations too). */
void corral__telem_xid(corral__telem_t *t, int i, uint64_t xid, int64_t now_us);

/* Render reg too at the end of /metrics (the model cache's series); NULL: none. */
struct corral_metrics;
void corral__telem_set_extra(corral__telem_t *t, struct corral_metrics *reg);
/* Append the DCGM exporter exposition (and corral_agent_* series). */
void corral__telem_render_dcgm(corral__telem_t *t, int64_t now_us, corral_buf_t *out);
/* Append kubelet's /metrics/resource exposition (and the accelerator series). */
void corral__telem_render_resource(corral__telem_t *t, int64_t now_us, corral_buf_t *out);

/* --- NVML readings (nvml_telem.c) ---------------------------------------------------------- */

typedef struct corral__nvml_tm corral__nvml_tm_t;

/* Load NVML and take a handle on GPUs 0..n-1; NULL (reason in err) when it
 * cannot. */
corral__nvml_tm_t *corral__nvml_tm_open(int n, char *err, size_t errlen);
void corral__nvml_tm_close(corral__nvml_tm_t *h);
/* Read GPU i into s. Returns false (NVML's reason in why) when the GPU
 * cannot be read at all (nvmlDeviceGetMemoryInfo fails). */
bool corral__nvml_tm_read(corral__nvml_tm_t *h, int i, corral__gpu_sample_t *s, char *why,
                          size_t whylen);
/* The next pending XID event (none waited for): true with GPU and XID. */
bool corral__nvml_tm_xid(corral__nvml_tm_t *h, int *gpu, uint64_t *xid);

#endif
