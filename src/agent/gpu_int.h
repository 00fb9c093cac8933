/*
 * Internals shared by the GPU discovery files: the NVML backend
 * (gpu_nvml.c), the simulated profiles (gpu_sim.c), the profile file reader
 * (gpu_profile.c) and the common part (gpu.c: the spec dispatcher, labels,
 * printing). Every backend fills a corral_gpu_inventory_t and then calls
 * corral__gpu_finish for the fields derived the same way for all of them.
 */
#ifndef CORRAL_AGENT_GPU_INT_H
#define CORRAL_AGENT_GPU_INT_H

#include <stdarg.h>

#include "corral/gpu.h"

/* The NVML backend. Returns 0 (n may be 0: NVML loaded and found no GPU), or a
 * negative code with the reason in err. */
int corral__gpu_nvml_discover(corral_gpu_inventory_t *out, char *err, size_t errlen);

/* A built-in simulated profile by name; CORRAL_ENOENT when there is none such
 * (err then lists the built-in names). */
int corral__gpu_sim_builtin(const char *name, const char *node_name, corral_gpu_inventory_t *out,
                            char *err, size_t errlen);

/* Everything a simulated node shares, whichever way it was described: count,
 * model, memory, topology (NULL: a uniform matrix of link); the simulated
 * UUIDs and PCI bus ids come from node_name. bus_ids (may be NULL) gives the PCI
 * bus number of each GPU. */
typedef struct corral__gpu_sim_spec {
    const char *profile; /* name for labels and source */
    int n;
    const char *model;
    uint64_t memory_mib;
    const char *topology;
    int compute_major, compute_minor;
    const char *family;  /* NULL: from the compute capability */
    const char *machine; /* NULL: none */
    const char *driver_version;
    int cuda_major, cuda_minor;
    int64_t cpu_milli, memory_bytes;
    const uint8_t *bus_ids;
} corral__gpu_sim_spec_t;

/* The built-in profile called name, or NULL. */
const corral__gpu_sim_spec_t *corral__gpu_sim_find(const char *name);

/* Simulated driver defaults (an R550 driver, CUDA 12.4). */
#define CORRAL__GPU_SIM_DRIVER     "550.54.15"
#define CORRAL__GPU_SIM_CUDA_MAJOR 12
#define CORRAL__GPU_SIM_CUDA_MINOR 4

void corral__gpu_sim_fill(const corral__gpu_sim_spec_t *s, const char *node_name,
                          corral_gpu_inventory_t *out);

/* The UUIDs and PCI domains a simulated inventory would have on node_name
 * (hollow nodes share one discovery; each gets its own GPU identities). */
void corral__gpu_sim_rename(corral_gpu_inventory_t *inv, const char *node_name);

/* Derive product and family (and check count), once the backend filled the rest. */
void corral__gpu_finish(corral_gpu_inventory_t *inv);

/* A Kubernetes label value from free text the way GFD makes one (spaces become
 * '-', other characters a label value cannot hold are dropped, <= 63 chars). */
void corral__gpu_label_value(char *dst, size_t cap, const char *src);

/* snprintf into err that never overflows (err may be NULL). */
void corral__gpu_err(char *err, size_t errlen, const char *fmt, ...) CORRAL_PRINTF(3, 4);

/* Bounded copy that always terminates (dst of size cap). */
void corral__gpu_copy(char *dst, size_t cap, const char *src);

#endif
