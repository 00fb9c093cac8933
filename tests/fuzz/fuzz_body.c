/* libFuzzer target: request bodies as the API server handles them. Any
 * bytes through the linear JSON parser (the tree must re-emit as JSON that
 * parses again), then through the object decoder, and applied as a JSON
 * merge patch and as a JSON patch to a fixed Pod; and through the
 * events.k8s.io/v1 view's conversions and create checks, both ways. Must
 * never crash, leak or hang. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/apiserver_int.h"
#include "corral/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char pod[] =
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"labels\":{\"a\":\"b\"},"
    "\"finalizers\":[\"f\"]},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\","
    "\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"1\"}}}]},\"status\":{\"phase\":\"Pending\"}}";

static corral_val_t *parse(corral_arena_t *a, const char *s, size_t n)
{
    corral_val_t *v = NULL;
    corral_json_err_t e;
    if (corral_json_parse(a, s, n, &v, &e) != 0)
        return NULL;
    return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > (1 << 20))
        return 0;
    corral_arena_t a;
    corral_arena_init(&a);
    corral_val_t *body = parse(&a, (const char *)data, size);
    if (body) {
        corral_buf_t b;
        corral_buf_init(&b);
        corral_val_to_json(body, &b, false);
        if (!parse(&a, b.p ? b.p : "", b.len))
            abort(); /* what we emit must load again */
        corral_buf_fini(&b);
        corral_diag_t d;
        corral_diag_init(&d);
        corral_obj_t *o;
        if (body->kind == CORRAL_VAL_MAP) {
            const corral_kind_info_t *k = corral_kind_find_resource("pods");
            corral_obj_decode(&a, body, NULL, &d, &o);
            corral_obj_default(&a, k, body);
        }
        corral_diag_fini(&d);
        if (body->kind == CORRAL_VAL_MAP) {
            const corral__view_t *v = &corral__events_v1_view;
            corral_diag_init(&d);
            v->check_create(body, "default", &d);
            corral_diag_fini(&d);
            v->to_stored(&a, body);
            v->to_served(&a, body);
        }
        corral_val_t *target = parse(&a, pod, strlen(pod));
        corral__merge_patch(&a, &target, body);
        target = parse(&a, pod, strlen(pod));
        char why[256];
        corral__json_patch(&a, &target, body, why, sizeof(why));
    }
    corral_arena_fini(&a);
    return 0;
}
