/* libFuzzer target: kube-apiserver's static token file (--token-auth-file)
 * through corral_tokens_parse, then a lookup of every field-like slice of
 * the input as a bearer token. Must never crash, leak or hang; a parsed
 * file's users must have a name, a uid and system:authenticated. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "corral/auth.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > (1 << 20))
        return 0;
    const char *text = (const char *)data;
    corral_tokens_t *t = NULL;
    char err[256];
    if (corral_tokens_parse(text, size, "fuzz", &t, err, sizeof(err)) != 0) {
        if (t || !err[0])
            abort();
        return 0;
    }
    for (size_t i = 0; i < size; i++) {
        size_t j = i;
        while (j < size && text[j] != ',' && text[j] != '\n')
            j++;
        const corral_user_t *u = corral_tokens_find(t, text + i, j - i);
        if (u && (!u->name || !u->uid || !corral_user_in_group(u, CORRAL_GROUP_AUTHENTICATED)))
            abort();
        i = j;
    }
    corral_tokens_free(t);
    return 0;
}
