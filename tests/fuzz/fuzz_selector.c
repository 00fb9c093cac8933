/* libFuzzer target: label and field selector parsing never crashes, a
 * parsed selector holds only valid label keys and values, and matching a
 * fixed label map (and a field lookup) always terminates cleanly. The first
 * input byte picks label or field syntax; the rest is the selector. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "corral/arena.h"
#include "corral/selector.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *fields(const char *key, void *ctx)
{
    (void)ctx;
    if (strcmp(key, "metadata.name") == 0)
        return "pod-1";
    if (strcmp(key, "spec.nodeName") == 0)
        return "";
    return NULL;
}

static void check_labels(const corral_selector_t *sel)
{
    for (size_t i = 0; i < sel->n; i++) {
        const corral_sel_req_t *r = &sel->reqs[i];
        if (corral_label_key_error(r->key))
            abort();
        for (size_t k = 0; k < r->nvalues; k++) {
            if (corral_label_value_error(r->values[k]))
                abort();
        }
        if ((r->op == CORRAL_SEL_IN || r->op == CORRAL_SEL_NOTIN) && r->nvalues == 0)
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    corral_kv_t kv[] = {{"app", "web"}, {"tier", "gpu"},           {"gpus", "8"},
                        {"empty", ""},  {"example.com/zone", "a"}, {"in", "notin"},
                        {"neg", "-3"},  {"word", "eight"}};
    corral_strmap_t labels = {kv, sizeof(kv) / sizeof(kv[0])};
    corral_arena_t a;
    corral_selector_t sel;
    char why[256];
    if (size == 0)
        return 0;
    corral_arena_init(&a);
    const char *s = (const char *)data + 1;
    if (data[0] & 1) {
        if (corral_fieldsel_parse(&a, s, size - 1, &sel, why, sizeof(why)) == 0)
            (void)corral_sel_matches(&sel, fields, NULL);
    } else if (corral_labelsel_parse(&a, s, size - 1, &sel, why, sizeof(why)) == 0) {
        check_labels(&sel);
        (void)corral_sel_matches_labels(&sel, &labels);
    } else if (sel.n != 0) {
        abort(); /* a failed parse leaves nothing behind */
    }
    corral_arena_fini(&a);
    return 0;
}
