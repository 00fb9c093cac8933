/*
 * TEMP gpu stub (dropped at merge): "sim:h100-sxm-8"-like fake inventory so
 * that the agent can be tested before the gpu branch lands.
 */
#include <stdio.h>
#include <string.h>

#include "corral/buf.h"
#include "corral/gpu.h"

int corral_gpu_discover(const char *spec, const char *node_name, corral_gpu_inventory_t *out,
                        char *err, size_t errlen)
{
    (void)node_name;
    memset(out, 0, sizeof(*out));
    if (!strcmp(spec, "none") || !strcmp(spec, "auto"))
        return 0;
    if (strncmp(spec, "sim:", 4) != 0) {
        snprintf(err, errlen, "stub: unknown spec %s", spec);
        return CORRAL_EINVAL;
    }
    out->n = 8;
    out->gpus = corral_calloc(8, sizeof(*out->gpus));
    for (int i = 0; i < 8; i++) {
        out->gpus[i].index = i;
        snprintf(out->gpus[i].uuid, sizeof(out->gpus[i].uuid), "GPU-sim-%d", i);
        snprintf(out->gpus[i].name, sizeof(out->gpus[i].name), "NVIDIA H100 80GB HBM3");
        out->gpus[i].memory_mib = 81559;
    }
    corral_buf_t b;
    corral_buf_init(&b);
    for (int r = 0; r < 8; r++) {
        for (int c = 0; c < 8; c++)
            corral_buf_printf(&b, "%s%s", c ? "," : "", r == c ? "X" : "NV18");
        if (r < 7)
            corral_buf_putc(&b, ';');
    }
    out->topology = corral_buf_steal(&b);
    snprintf(out->product, sizeof(out->product), "NVIDIA-H100-80GB-HBM3");
    out->cpu_milli = 0;
    return 0;
}

void corral_gpu_inventory_fini(corral_gpu_inventory_t *inv)
{
    corral_free(inv->gpus);
    corral_free(inv->topology);
    memset(inv, 0, sizeof(*inv));
}

size_t corral_gpu_labels(const corral_gpu_inventory_t *inv, corral_arena_t *a, corral_kv_t *out,
                         size_t max)
{
    if (inv->n == 0 || max < 2)
        return 0;
    out[0].key = "nvidia.com/gpu.product";
    out[0].value = corral_arena_strdup(a, inv->product);
    out[1].key = "nvidia.com/gpu.count";
    out[1].value = corral_arena_printf(a, "%d", inv->n);
    return 2;
}

void corral_gpu_print(const corral_gpu_inventory_t *inv, FILE *fp)
{
    for (int i = 0; i < inv->n; i++)
        fprintf(fp, "GPU %d: %s (%s)\n", i, inv->gpus[i].name, inv->gpus[i].uuid);
}
