/*
 * GPU discovery for the node agent: what GPUs a node has, how they are linked,
 * and the labels and annotation that tell the scheduler. Two backends sit
 * behind one call, as Slurm's gres/gpu plugins do: NVML (the NVIDIA driver's
 * management library, loaded with dlopen at run time so that Corral builds and
 * runs without it) and simulated profiles (built-in servers such as an 8xH100
 * NVSwitch box or a DGX-1's hybrid cube-mesh, or a profile file), so that a
 * laptop can host a believable GPU cluster.
 *
 * The result is a caller-owned corral_gpu_inventory_t: plain fields plus the
 * corral.dev/gpu-topology matrix text ("nvidia-smi topo -m" cells, rows
 * separated by ';', cells by ','), which corral_gpu_topo_parse (model.h) reads.
 */
#ifndef CORRAL_GPU_H
#define CORRAL_GPU_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "corral/arena.h"
#include "corral/common.h"

#define CORRAL_GPU_MAX 64
/* A profile file larger than this is refused before it is read. */
#define CORRAL_GPU_PROFILE_MAX_BYTES ((size_t)1 << 20)

typedef struct corral_gpu {
    int index;           /* 0..n-1, as CUDA_VISIBLE_DEVICES numbers them */
    char uuid[80];       /* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" */
    char name[96];       /* "NVIDIA H100 80GB HBM3" */
    uint64_t memory_mib; /* total memory */
    char pci_bus_id[32]; /* "00000000:18:00.0" */
} corral_gpu_t;

typedef struct corral_gpu_inventory {
    char source[160]; /* "nvml" or "sim:h100-sxm-8" or "sim:/path/file.yaml" */
    int n;
    corral_gpu_t gpus[CORRAL_GPU_MAX];
    char *topology;             /* owned: corral.dev/gpu-topology matrix text (SCENARIOS.md format,
                                   rows ';', cells ','), NULL when n == 0 */
    char driver_version[32];    /* "550.54.15" */
    int cuda_major, cuda_minor; /* CUDA driver version (nvmlSystemGetCudaDriverVersion) */
    int compute_major, compute_minor; /* compute capability (of GPU 0) */
    char product[96];                 /* GFD product label value: name with spaces -> '-' e.g.
                                         "NVIDIA-H100-80GB-HBM3" */
    char family[32];      /* GFD family: "hopper", "ampere", "volta", "ada-lovelace", ... */
    int64_t cpu_milli;    /* sim profiles: the simulated node's cpu (0: use the host's) */
    int64_t memory_bytes; /* sim profiles: node memory (0: the host's) */
    /* Added beyond the first interface: */
    char machine[64]; /* GFD nvidia.com/gpu.machine value ("" when unknown), e.g. "DGX-H100" */
    char profile[64]; /* sim: profile name ("h100-sxm-8", or a file's `name`); "" for nvml */
} corral_gpu_inventory_t;

/*
 * spec: "nvml", "sim:PROFILE" (built-in name or a profile file path), "auto" (nvml when
 * it loads and finds >= 1 GPU, else sim:h100-sxm-8), or "none" (no GPUs).
 * node_name seeds the simulated UUIDs and PCI ids so every simulated node's GPUs are
 * unique and stable across restarts (NULL counts as ""). Fills *out (any previous
 * content is overwritten, not freed; call corral_gpu_inventory_fini when done, also
 * after an error). Returns 0, or a negative CORRAL_E* with a message a person can act
 * on in err (e.g. "NVML: libnvidia-ml.so.1 not found (no NVIDIA driver?); use --gpus
 * sim:h100-sxm-8 to simulate"). Environment: CORRAL_NVML_LIB names the NVML library
 * to load instead of libnvidia-ml.so.1 (tests use a fake one).
 */
int corral_gpu_discover(const char *spec, const char *node_name, corral_gpu_inventory_t *out,
                        char *err, size_t errlen);
/* Free what an inventory owns (its topology text) and reset it to no GPUs. NULL is fine. */
void corral_gpu_inventory_fini(corral_gpu_inventory_t *inv);

/*
 * Parse a simulated-node profile (YAML or JSON, format in docs/agent.md) of len bytes
 * named file (for messages) into *out, as corral_gpu_discover("sim:FILE") does after
 * reading the file. Errors read "FILE:LINE:COL: field: message", one per line, in err.
 * Returns 0, CORRAL_EPARSE (syntax), CORRAL_EINVAL (a bad field) or CORRAL_ETOOBIG.
 */
int corral_gpu_profile_parse(const char *text, size_t len, const char *file, const char *node_name,
                             corral_gpu_inventory_t *out, char *err, size_t errlen);

/* The built-in profile names, NULL-terminated (for --help and error messages). */
extern const char *const corral_gpu_sim_profiles[];

/* GFD architecture family for a compute capability ("hopper" for 9.x; "undefined" when
 * unknown), as NVIDIA's gpu-feature-discovery names it. */
const char *corral_gpu_family(int compute_major, int compute_minor);

/*
 * GPU Feature Discovery labels for the node (nvidia.com/gpu.product, gpu.count, gpu.memory
 * (MiB), gpu.family, gpu.compute.major/minor, cuda.driver.major/minor/rev,
 * cuda.runtime.major/minor if known, gpu.present=true, gpu.machine?, plus
 * corral.dev/gpu-source (nvml or sim) and corral.dev/gpu-profile for simulated nodes);
 * strings allocated in a. Nothing for an inventory without GPUs. Returns the count
 * stored (<= max; the full set is at most CORRAL_GPU_LABELS_MAX).
 */
#define CORRAL_GPU_LABELS_MAX 24
size_t corral_gpu_labels(const corral_gpu_inventory_t *inv, corral_arena_t *a, corral_kv_t *out,
                         size_t max);

/* Print the inventory for people (what `corral agent --print-gpus` shows): one line per
 * GPU, then the matrix as nvidia-smi topo -m prints it. */
void corral_gpu_print(const corral_gpu_inventory_t *inv, FILE *fp);

#endif
