/* libFuzzer target: quantity parsing and conversion never crash, and a parsed
 * quantity converts or reports ERANGE, never a wrong sign. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "corral/quantity.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    corral_qty_t q;
    char why[256];
    if (corral_qty_parse((const char *)data, size, &q, why, sizeof(why)) != 0)
        return 0;
    for (int scale = 0; scale <= 9; scale += 3) {
        int64_t v;
        if (corral_qty_scaled(&q, scale, &v) == 0 && corral_qty_sign(&q) > 0 && v <= 0)
            abort();
    }
    (void)corral_qty_is_integer(&q);
    return 0;
}
