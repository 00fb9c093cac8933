/* libFuzzer target: any byte string through the YAML/JSON loader and the
 * object decoder (every kind), then the emitters. Must never crash, leak or
 * hang; emitted JSON must load back. The first byte picks YAML or JSON mode so
 * both parsers are explored. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "corral/model.h"
#include "corral/yaml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_json_round_trip(const corral_val_t *root)
{
    corral_buf_t b;
    corral_buf_init(&b);
    corral_val_to_json(root, &b, false);
    corral_arena_t a;
    corral_arena_init(&a);
    corral_diag_t d;
    corral_diag_init(&d);
    corral_doc_t *docs;
    size_t n;
    corral_yaml_opts_t o = {.json = true};
    if (corral_yaml_parse(&a, b.p ? b.p : "", b.len, "json", &o, &d, &docs, &n) != 0)
        abort(); /* our own JSON must always load */
    corral_diag_fini(&d);
    corral_arena_fini(&a);
    corral_buf_fini(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > (1 << 20))
        return 0;
    corral_yaml_opts_t opts = {.json = data[0] & 1};
    corral_arena_t a;
    corral_arena_init(&a);
    corral_diag_t d;
    corral_diag_init(&d);
    corral_doc_t *docs;
    size_t n;
    corral_yaml_parse(&a, (const char *)data + 1, size - 1, "fuzz", &opts, &d, &docs, &n);
    for (size_t i = 0; i < n; i++) {
        if (!docs[i].root)
            continue;
        corral_obj_t *o;
        corral_obj_decode(&a, docs[i].root, "fuzz", &d, &o);
        check_json_round_trip(docs[i].root);
        corral_buf_t y;
        corral_buf_init(&y);
        corral_val_to_yaml(docs[i].root, &y);
        corral_buf_fini(&y);
    }
    corral_diag_fini(&d);
    corral_arena_fini(&a);
    return 0;
}
