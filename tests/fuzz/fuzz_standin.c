/* libFuzzer target: the stand-in's OpenAI request decoder never crashes,
 * hangs or leaks on any bytes, as a completion or a chat request; what it
 * accepts is inside its bounds, and what it refuses comes with a message. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "standin/standin_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > CORRAL_STANDIN_MAX_BODY)
        return 0;
    for (int k = 0; k < 2; k++) {
        corral__si_req_t r;
        char err[256];
        int rc =
            corral__si_parse((const char *)data, size, k ? CORRAL__SI_CHAT : CORRAL__SI_COMPLETION,
                             16, &r, err, sizeof(err));
        if (rc < 0 && !err[0])
            abort();
        if (rc == 0 && (r.max_tokens < 1 || r.max_tokens > CORRAL_STANDIN_MAX_TOKENS ||
                        strlen(r.model) >= sizeof(r.model)))
            abort();
        if (rc == 0 && !corral__si_token(r.seed, r.max_tokens))
            abort();
    }
    return 0;
}
