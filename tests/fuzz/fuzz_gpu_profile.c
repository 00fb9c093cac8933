/* libFuzzer target: simulated-node GPU profile files through
 * corral_gpu_profile_parse (the YAML loader, the field table, quantities,
 * versions and the topology matrix check). Must never crash, leak or hang;
 * on success the inventory has 1..64 GPUs and a matrix that
 * corral_gpu_topo_parse accepts, and an error always has a message. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "corral/gpu.h"
#include "corral/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > (256 << 10))
        return 0;
    corral_gpu_inventory_t inv;
    char err[1024] = "";
    /* Input that opens with '{' is read as strict JSON, as a *.json file name would. */
    const char *file = size > 0 && data[0] == '{' ? "/fuzz/p.json" : "/fuzz/p.yaml";
    int rc = corral_gpu_profile_parse((const char *)data, size, file, "fuzz-node", &inv, err,
                                      sizeof(err));
    if (rc == 0) {
        if (inv.n < 1 || inv.n > CORRAL_GPU_MAX || !inv.topology)
            abort();
        corral_arena_t a;
        corral_arena_init(&a);
        corral_gpu_topo_t t;
        char why[256];
        if (corral_gpu_topo_parse(&a, inv.topology, &t, why, sizeof(why)) != 0 || t.n != inv.n)
            abort();
        corral_kv_t kv[CORRAL_GPU_LABELS_MAX];
        size_t n = corral_gpu_labels(&inv, &a, kv, CORRAL_GPU_LABELS_MAX);
        for (size_t i = 0; i < n; i++) {
            if (strlen(kv[i].value) > 63)
                abort();
        }
        corral_arena_fini(&a);
    } else if (!err[0]) {
        abort();
    }
    corral_gpu_inventory_fini(&inv);
    return 0;
}
