/* libFuzzer target: strategic merge patches. The input is split at the
 * first NUL byte into a document and a patch (without one, the input is the
 * patch and a fixed Pod the document); both are parsed as JSON and the
 * patch applied. Must never crash, leak or hang, and a successful result
 * must be a mapping that emits JSON that parses again. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/apiserver_int.h"
#include "corral/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char pod[] =
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"finalizers\":[\"f\"]},"
    "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\",\"env\":[{\"name\":\"A\"}],"
    "\"ports\":[{\"containerPort\":80}]}],\"tolerations\":[{\"key\":\"k\"}]},\"status\":{"
    "\"conditions\":[{\"type\":\"Ready\",\"status\":\"False\"}]}}";

static corral_val_t *parse(corral_arena_t *a, const char *s, size_t n)
{
    corral_val_t *v = NULL;
    return corral_json_parse(a, s, n, &v, NULL) == 0 ? v : NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > (1 << 20))
        return 0;
    const char *text = (const char *)data;
    const char *nul = memchr(text, '\0', size);
    corral_arena_t a;
    corral_arena_init(&a);
    corral_val_t *doc = nul ? parse(&a, text, (size_t)(nul - text)) : parse(&a, pod, strlen(pod));
    corral_val_t *patch =
        nul ? parse(&a, nul + 1, size - (size_t)(nul - text) - 1) : parse(&a, text, size);
    if (doc && patch) {
        char why[256];
        if (corral__strategic_patch(&a, &doc, patch, why, sizeof(why)) == 0) {
            if (!doc || doc->kind != CORRAL_VAL_MAP)
                abort();
            corral_buf_t b;
            corral_buf_init(&b);
            corral_val_to_json(doc, &b, false);
            if (!parse(&a, b.p ? b.p : "", b.len))
                abort();
            corral_buf_fini(&b);
        }
    }
    corral_arena_fini(&a);
    return 0;
}
