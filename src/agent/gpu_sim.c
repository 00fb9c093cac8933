/*
 * Simulated GPU servers, so that a machine without GPUs can host a
 * believable cluster: four built-in profiles modelled on real servers
 * (their nvidia-smi names, memory, compute capability and `nvidia-smi topo
 * -m` matrices), and the one routine that turns a profile, built-in or read
 * from a file (gpu_profile.c), into an inventory. A simulated GPU's UUID and
 * PCI bus id are derived from the node name, the profile and the index, so
 * every simulated node's GPUs are distinct and the same after a restart.
 */
#include <stdio.h>
#include <string.h>

#include "agent/gpu_int.h"
#include "corral/buf.h"
#include "corral/hmap.h"

#define SIM_DRIVER CORRAL__GPU_SIM_DRIVER

/* DGX H100: eight H100 SXM5 on four NVSwitches, 18 NVLinks per GPU. */
static const char topo_h100[] = "X,NV18,NV18,NV18,NV18,NV18,NV18,NV18;"
                                "NV18,X,NV18,NV18,NV18,NV18,NV18,NV18;"
                                "NV18,NV18,X,NV18,NV18,NV18,NV18,NV18;"
                                "NV18,NV18,NV18,X,NV18,NV18,NV18,NV18;"
                                "NV18,NV18,NV18,NV18,X,NV18,NV18,NV18;"
                                "NV18,NV18,NV18,NV18,NV18,X,NV18,NV18;"
                                "NV18,NV18,NV18,NV18,NV18,NV18,X,NV18;"
                                "NV18,NV18,NV18,NV18,NV18,NV18,NV18,X";

/* DGX-1 with V100: the hybrid cube-mesh, as its nvidia-smi topo -m prints it.
 * Six NVLinks per GPU; 0-3 and 4-7 are fully NVLinked quads (one per CPU
 * socket), each GPU has one NVLink peer in the other quad, and every other
 * cross-socket pair is SYS. */
static const char topo_dgx1[] = "X,NV1,NV1,NV2,NV2,SYS,SYS,SYS;"
                                "NV1,X,NV2,NV1,SYS,NV2,SYS,SYS;"
                                "NV1,NV2,X,NV2,SYS,SYS,NV1,SYS;"
                                "NV2,NV1,NV2,X,SYS,SYS,SYS,NV1;"
                                "NV2,SYS,SYS,SYS,X,NV1,NV1,NV2;"
                                "SYS,NV2,SYS,SYS,NV1,X,NV2,NV1;"
                                "SYS,SYS,NV1,SYS,NV1,NV2,X,NV2;"
                                "SYS,SYS,SYS,NV1,NV2,NV1,NV2,X";

/* Four A100 PCIe cards, two per CPU socket, each pair joined by three NVLink
 * bridges (12 links). */
static const char topo_a100[] = "X,NV12,SYS,SYS;"
                                "NV12,X,SYS,SYS;"
                                "SYS,SYS,X,NV12;"
                                "SYS,SYS,NV12,X";

/* Eight L4 cards, PCIe only, four per socket. Socket 0: two PCIe switches
 * (0-1, 2-3) under one upstream switch, so PIX inside a pair and PXB across;
 * socket 1: two switches (4-5, 6-7) on different root ports, so NODE across. */
static const char topo_l4[] = "X,PIX,PXB,PXB,SYS,SYS,SYS,SYS;"
                              "PIX,X,PXB,PXB,SYS,SYS,SYS,SYS;"
                              "PXB,PXB,X,PIX,SYS,SYS,SYS,SYS;"
                              "PXB,PXB,PIX,X,SYS,SYS,SYS,SYS;"
                              "SYS,SYS,SYS,SYS,X,PIX,NODE,NODE;"
                              "SYS,SYS,SYS,SYS,PIX,X,NODE,NODE;"
                              "SYS,SYS,SYS,SYS,NODE,NODE,X,PIX;"
                              "SYS,SYS,SYS,SYS,NODE,NODE,PIX,X";

static const uint8_t bus_h100[] = {0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb};
static const uint8_t bus_dgx1[] = {0x06, 0x07, 0x0a, 0x0b, 0x85, 0x86, 0x89, 0x8a};
static const uint8_t bus_a100[] = {0x17, 0x31, 0xb1, 0xca};
static const uint8_t bus_l4[] = {0x1b, 0x1c, 0x1f, 0x20, 0x9b, 0x9c, 0xc1, 0xc2};

#define GIB ((int64_t)1 << 30)

static const corral__gpu_sim_spec_t builtins[] = {
    {.profile = "h100-sxm-8",
     .n = 8,
     .model = "NVIDIA H100 80GB HBM3",
     .memory_mib = 81559,
     .topology = topo_h100,
     .compute_major = 9,
     .compute_minor = 0,
     .machine = "DGX-H100",
     .driver_version = SIM_DRIVER,
     .cuda_major = 12,
     .cuda_minor = 4,
     .cpu_milli = 224000,
     .memory_bytes = 2048 * GIB,
     .bus_ids = bus_h100},
    {.profile = "dgx1-v100-8",
     .n = 8,
     .model = "Tesla V100-SXM2-32GB",
     .memory_mib = 32768,
     .topology = topo_dgx1,
     .compute_major = 7,
     .compute_minor = 0,
     .machine = "DGX-1",
     .driver_version = SIM_DRIVER,
     .cuda_major = 12,
     .cuda_minor = 4,
     .cpu_milli = 80000,
     .memory_bytes = 512 * GIB,
     .bus_ids = bus_dgx1},
    {.profile = "a100-pcie-4",
     .n = 4,
     .model = "NVIDIA A100 80GB PCIe",
     .memory_mib = 81920,
     .topology = topo_a100,
     .compute_major = 8,
     .compute_minor = 0,
     .driver_version = SIM_DRIVER,
     .cuda_major = 12,
     .cuda_minor = 4,
     .cpu_milli = 64000,
     .memory_bytes = 512 * GIB,
     .bus_ids = bus_a100},
    {.profile = "l4-8",
     .n = 8,
     .model = "NVIDIA L4",
     .memory_mib = 23034,
     .topology = topo_l4,
     .compute_major = 8,
     .compute_minor = 9,
     .driver_version = SIM_DRIVER,
     .cuda_major = 12,
     .cuda_minor = 4,
     .cpu_milli = 128000,
     .memory_bytes = 1024 * GIB,
     .bus_ids = bus_l4},
};

const char *const corral_gpu_sim_profiles[] = {"h100-sxm-8", "dgx1-v100-8", "a100-pcie-4", "l4-8",
                                               NULL};

const corral__gpu_sim_spec_t *corral__gpu_sim_find(const char *name)
{
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(builtins); i++) {
        if (strcmp(builtins[i].profile, name) == 0)
            return &builtins[i];
    }
    return NULL;
}

/* A uniform matrix (every pair the same link), for profiles that give none. */
static char *uniform_matrix(int n, const char *link)
{
    corral_buf_t b;
    corral_buf_init(&b);
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < n; j++)
            corral_buf_printf(&b, "%s%s", j ? "," : "", i == j ? "X" : link);
        if (i + 1 < n)
            corral_buf_puts(&b, ";");
    }
    char *s = corral_strdup(corral_buf_str(&b));
    corral_buf_fini(&b);
    return s;
}

/* 32 bits of a stable hash of (node, profile, index, part). */
static uint32_t sim_hash(const char *node, const char *profile, int index, uint32_t part)
{
    char key[512];
    int len = snprintf(key, sizeof(key), "%s\n%s\n%d", node, profile, index);
    if (len < 0)
        len = 0;
    if ((size_t)len >= sizeof(key))
        len = (int)sizeof(key) - 1;
    return corral_hash_stable(key, (size_t)len, 0x9e3779b9u * (part + 1));
}

void corral__gpu_sim_fill(const corral__gpu_sim_spec_t *s, const char *node_name,
                          corral_gpu_inventory_t *out)
{
    corral_free(out->topology);
    memset(out, 0, sizeof(*out));
    snprintf(out->source, sizeof(out->source), "sim:%s", s->profile);
    corral__gpu_copy(out->profile, sizeof(out->profile), s->profile);
    out->n = s->n;
    /* The PCI domain stands for the node: bus ids differ across simulated nodes. */
    unsigned domain = sim_hash(node_name, "", -1, 0) & 0xffffu;
    for (int i = 0; i < s->n; i++) {
        corral_gpu_t *g = &out->gpus[i];
        g->index = i;
        corral__gpu_copy(g->name, sizeof(g->name), s->model);
        g->memory_mib = s->memory_mib;
        uint32_t h[4];
        for (uint32_t k = 0; k < 4; k++)
            h[k] = sim_hash(node_name, s->profile, i, k + 1);
        snprintf(g->uuid, sizeof(g->uuid), "GPU-%08x-%04x-%04x-%04x-%04x%08x", h[0], h[1] >> 16,
                 h[1] & 0xffffu, h[2] >> 16, h[2] & 0xffffu, h[3]);
        unsigned bus = s->bus_ids ? s->bus_ids[i] : (unsigned)(0x10 + 3 * i);
        snprintf(g->pci_bus_id, sizeof(g->pci_bus_id), "%08X:%02X:00.0", domain, bus & 0xffu);
    }
    out->topology = s->topology ? corral_strdup(s->topology) : uniform_matrix(s->n, "SYS");
    corral__gpu_copy(out->driver_version, sizeof(out->driver_version), s->driver_version);
    out->cuda_major = s->cuda_major;
    out->cuda_minor = s->cuda_minor;
    out->compute_major = s->compute_major;
    out->compute_minor = s->compute_minor;
    if (s->family)
        corral__gpu_copy(out->family, sizeof(out->family), s->family);
    if (s->machine)
        corral__gpu_copy(out->machine, sizeof(out->machine), s->machine);
    out->cpu_milli = s->cpu_milli;
    out->memory_bytes = s->memory_bytes;
}

int corral__gpu_sim_builtin(const char *name, const char *node_name, corral_gpu_inventory_t *out,
                            char *err, size_t errlen)
{
    const corral__gpu_sim_spec_t *s = corral__gpu_sim_find(name);
    if (!s) {
        corral__gpu_err(err, errlen,
                        "no built-in GPU profile \"%s\" (built-in: h100-sxm-8, dgx1-v100-8, "
                        "a100-pcie-4, l4-8; or give a profile file path)",
                        name);
        return CORRAL_ENOENT;
    }
    corral__gpu_sim_fill(s, node_name, out);
    return 0;
}

void corral__gpu_sim_rename(corral_gpu_inventory_t *inv, const char *node_name)
{
    char dom[16];
    snprintf(dom, sizeof(dom), "%08X", sim_hash(node_name, "", -1, 0) & 0xffffu);
    for (int i = 0; i < inv->n; i++) {
        corral_gpu_t *g = &inv->gpus[i];
        uint32_t h[4];
        for (uint32_t k = 0; k < 4; k++)
            h[k] = sim_hash(node_name, inv->profile, i, k + 1);
        snprintf(g->uuid, sizeof(g->uuid), "GPU-%08x-%04x-%04x-%04x-%04x%08x", h[0], h[1] >> 16,
                 h[1] & 0xffffu, h[2] >> 16, h[2] & 0xffffu, h[3]);
        if (strlen(g->pci_bus_id) > 8)
            memcpy(g->pci_bus_id, dom, 8);
    }
}
