/* libFuzzer target: base64 decoding never crashes, and whatever decodes
 * re-encodes to a text that decodes to the same bytes; encoding any bytes
 * in either alphabet decodes back to them. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "corral/base64.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void round_trip(const void *p, size_t n, unsigned flags)
{
    corral_buf_t enc, dec;
    corral_buf_init(&enc);
    corral_buf_init(&dec);
    corral_base64_encode(p, n, flags, &enc);
    if (corral_base64_decode(enc.p ? enc.p : "", enc.len, flags, &dec) != 0 || dec.len != n ||
        (n && memcmp(dec.p, p, n) != 0))
        abort();
    corral_buf_fini(&enc);
    corral_buf_fini(&dec);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const unsigned modes[] = {CORRAL_B64_STD, CORRAL_B64_URL, CORRAL_B64_LAX};
    for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
        corral_buf_t dec;
        corral_buf_init(&dec);
        if (corral_base64_decode((const char *)data, size, modes[m], &dec) == 0)
            round_trip(dec.p ? dec.p : "", dec.len, modes[m] & CORRAL_B64_URL);
        corral_buf_fini(&dec);
    }
    round_trip(data, size, CORRAL_B64_STD);
    round_trip(data, size, CORRAL_B64_URL);
    return 0;
}
