/*
 * TEMP gpu stub (dropped at merge): the GPU discovery interface as declared
 * by the gpu branch, so that the agent builds before it lands.
 */
#ifndef CORRAL_GPU_H
#define CORRAL_GPU_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "corral/arena.h"
#include "corral/common.h"

typedef struct corral_gpu_dev {
    int index;
    char uuid[96];
    char name[96];
    uint64_t memory_mib;
    char pci_bus_id[32];
} corral_gpu_dev_t;

typedef struct corral_gpu_inventory {
    int n;
    corral_gpu_dev_t *gpus;
    char *topology;
    char driver_version[32];
    int cuda_major, cuda_minor;
    char product[96];
    char family[32];
    int64_t cpu_milli;
    int64_t memory_bytes;
} corral_gpu_inventory_t;

int corral_gpu_discover(const char *spec, const char *node_name, corral_gpu_inventory_t *out,
                        char *err, size_t errlen);
void corral_gpu_inventory_fini(corral_gpu_inventory_t *inv);
size_t corral_gpu_labels(const corral_gpu_inventory_t *inv, corral_arena_t *a, corral_kv_t *out,
                         size_t max);
void corral_gpu_print(const corral_gpu_inventory_t *inv, FILE *fp);

#endif
