/* libFuzzer target: the protobuf decoder (src/model/pb.c). An input that
 * starts with the magic "k8s\0" is a whole body (envelope and message); any
 * other input is the bytes of a Pod message, then of a SubjectAccessReview
 * and a Secret, so mutations reach deep fields without the envelope around
 * them, and then a watch event's payload. A whole body decoded must encode
 * back to a body that decodes to the same tree. Must never crash, leak or hang; a decoded tree
 * must be a mapping whose JSON parses again; a failure must say why. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "corral/pb.h"
#include "corral/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(corral_arena_t *a, int rc, const corral_val_t *v, const char *why)
{
    if (rc != 0) {
        if (v || !why[0])
            abort(); /* a failure leaves no tree and says why */
        return;
    }
    if (!v || v->kind != CORRAL_VAL_MAP)
        abort();
    corral_buf_t b;
    corral_buf_init(&b);
    corral_val_to_json(v, &b, false);
    corral_val_t *again = NULL;
    if (corral_json_parse(a, b.p ? b.p : "", b.len, &again, NULL) != 0)
        abort(); /* what we emit must load again */
    corral_buf_fini(&b);
}

/* A whole object decoded encodes again (or says why not) and decodes back
 * to the same tree. */
static void check_round_trip(corral_arena_t *a, const corral_val_t *v)
{
    corral_buf_t b;
    corral_buf_init(&b);
    char why[256] = "";
    int rc = corral_pb_encode(v, &b, why, sizeof(why));
    if (rc != 0) {
        if (!why[0] || b.len)
            abort();
    } else {
        corral_val_t *back = NULL;
        if (corral_pb_decode(a, b.p, b.len, &back, why, sizeof(why)) != 0 ||
            !corral_val_equal(v, back))
            abort();
    }
    corral_buf_fini(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > (3 << 20))
        return 0;
    corral_arena_t a;
    corral_arena_init(&a);
    corral_val_t *v = NULL;
    char why[256] = "";
    if (size >= 4 && memcmp(data, "k8s\0", 4) == 0) {
        int rc = corral_pb_decode(&a, data, size, &v, why, sizeof(why));
        check(&a, rc, v, why);
        if (rc == 0)
            check_round_trip(&a, v);
    } else {
        static const char *const kinds[][2] = {
            {"v1", "Pod"}, {"authorization.k8s.io/v1", "SubjectAccessReview"}, {"v1", "Secret"}};
        for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
            const corral_schema_msg_t *m = corral_schema_for(kinds[i][0], kinds[i][1]);
            if (!m)
                abort();
            why[0] = '\0';
            int rc = corral__pb_decode_msg(&a, m, data, size, &v, why, sizeof(why));
            check(&a, rc, v, why);
        }
        why[0] = '\0';
        int rc = corral_pb_decode_watch_event(&a, data, size, &v, why, sizeof(why));
        check(&a, rc, v, why);
    }
    corral_arena_fini(&a);
    return 0;
}
