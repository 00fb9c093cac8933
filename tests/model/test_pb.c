/* Protobuf encoding (src/model/pb_encode.c) against the decoder: the bodies
 * kubectl 1.32 sent encode back to the same bytes once decoded; every
 * built-in object of the examples and scenarios decodes back to itself
 * (quantities written as numbers come back as strings, zero scalars that
 * Go's omitempty drops are dropped); the special types, maps, lists,
 * Status and watch events; lengths past one byte; the errors. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <string.h>

#include "../apiserver/proto_kubectl.h"
#include "corral/json.h"
#include "../common/val_assert.h"
#include "corral/pb.h"
#include "corral/yaml.h"

TestSuite(pb, .timeout = 30);

static corral_val_t *json(corral_arena_t *a, const char *s)
{
    corral_val_t *v = NULL;
    cr_assert_eq(corral_json_parse(a, s, strlen(s), &v, NULL), 0, "bad JSON: %s", s);
    return v;
}

static char *hex(const void *p, size_t n)
{
    static char out[8192];
    size_t o = 0;
    for (size_t i = 0; i < n && o + 4 < sizeof(out); i++)
        o += (size_t)snprintf(out + o, sizeof(out) - o, "%02x", ((const uint8_t *)p)[i]);
    out[o] = '\0';
    return out;
}

/* Encode v, decode it again; the tree decoded. */
static corral_val_t *round_trip(corral_arena_t *a, const corral_val_t *v, corral_buf_t *bytes)
{
    char why[256] = "";
    corral_buf_reset(bytes);
    int rc = corral_pb_encode(v, bytes, why, sizeof(why));
    cr_assert_eq(rc, 0, "encode: %d %s", rc, why);
    corral_val_t *back = NULL;
    rc = corral_pb_decode(a, bytes->p, bytes->len, &back, why, sizeof(why));
    cr_assert_eq(rc, 0, "decode: %d %s", rc, why);
    return back;
}

static void expect_same(const corral_val_t *got, const corral_val_t *want)
{
    val_assert_same(got, want, "");
}

Test(pb, kubectl_bodies_encode_back_to_their_bytes)
{
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(recorded_bodies); i++) {
        const recorded_body_t *r = &recorded_bodies[i];
        corral_arena_t a;
        corral_arena_init(&a);
        corral_buf_t b;
        corral_buf_init(&b);
        corral_val_t *v = NULL;
        char why[256] = "";
        cr_assert_eq(corral_pb_decode(&a, r->pb, r->len, &v, why, sizeof(why)), 0, "%s", why);
        cr_assert_eq(corral_pb_encode(v, &b, why, sizeof(why)), 0, "%s: %s", r->name, why);
        char want[8192];
        snprintf(want, sizeof(want), "%s", hex(r->pb, r->len));
        cr_assert(b.len == r->len && memcmp(b.p, r->pb, r->len) == 0, "%s:\ngot  %s\nwant %s",
                  r->name, hex(b.p, b.len), want);
        /* And the JSON kubectl printed encodes to the same bytes. */
        corral_buf_reset(&b);
        corral_val_t *j = json(&a, r->json);
        cr_assert_eq(corral_pb_encode(j, &b, why, sizeof(why)), 0, "%s: %s", r->name, why);
        expect_same(round_trip(&a, j, &b), v);
        corral_buf_fini(&b);
        corral_arena_fini(&a);
    }
}

/* x and y are the same object as Go reads them: a zero scalar in x may be
 * absent in y (omitempty), a number in x may be its text in y (Quantity). */
static bool loosely_equal(const corral_val_t *x, const corral_val_t *y)
{
    if (x->kind == CORRAL_VAL_MAP && y && y->kind == CORRAL_VAL_MAP) {
        for (size_t i = 0; i < x->n; i++) {
            const corral_val_t *xv = x->pairs[i].val;
            const corral_val_t *yv = corral_val_get(y, x->pairs[i].key->s);
            bool zero = xv->kind == CORRAL_VAL_NULL || (xv->kind == CORRAL_VAL_STR && !xv->len) ||
                        (xv->kind == CORRAL_VAL_INT && !xv->u.i) ||
                        (xv->kind == CORRAL_VAL_BOOL && !xv->u.b) ||
                        ((xv->kind == CORRAL_VAL_MAP || xv->kind == CORRAL_VAL_SEQ) && !xv->n);
            if (!yv && zero)
                continue;
            if (!yv || !loosely_equal(xv, yv)) {
                cr_log_error("differs at %s", x->pairs[i].key->s);
                return false;
            }
        }
        return true;
    }
    if (x->kind == CORRAL_VAL_SEQ && y && y->kind == CORRAL_VAL_SEQ && x->n == y->n) {
        for (size_t i = 0; i < x->n; i++) {
            if (!loosely_equal(x->items[i], y->items[i]))
                return false;
        }
        return true;
    }
    if (y && (x->kind == CORRAL_VAL_INT || x->kind == CORRAL_VAL_FLOAT) &&
        y->kind == CORRAL_VAL_STR)
        return x->len == y->len && memcmp(x->s, y->s, x->len) == 0;
    return y && corral_val_equal(x, y);
}

static size_t round_trip_dir(const char *dir)
{
    DIR *dp = opendir(dir);
    cr_assert(dp, "%s (tests run from the repository root)", dir);
    size_t done = 0;
    struct dirent *de;
    while ((de = readdir(dp))) {
        size_t len = strlen(de->d_name);
        if (len < 6 || strcmp(de->d_name + len - 5, ".yaml") != 0)
            continue;
        char path[512];
        snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
        FILE *fp = fopen(path, "r");
        cr_assert(fp, "%s", path);
        corral_buf_t text, b, b2;
        corral_buf_init(&text);
        corral_buf_init(&b);
        corral_buf_init(&b2);
        char buf[4096];
        size_t got;
        while ((got = fread(buf, 1, sizeof(buf), fp)) > 0)
            corral_buf_append(&text, buf, got);
        fclose(fp);
        corral_arena_t a;
        corral_arena_init(&a);
        corral_doc_t *docs = NULL;
        size_t n = 0;
        cr_assert_eq(corral_yaml_parse(&a, text.p, text.len, path, NULL, NULL, &docs, &n), 0);
        for (size_t i = 0; i < n; i++) {
            const corral_val_t *root = docs[i].root;
            if (!root || !corral_pb_has_kind(corral_val_get_str(root, "apiVersion"),
                                             corral_val_get_str(root, "kind")))
                continue;
            cr_log_info("%s #%zu", path, i);
            corral_val_t *back = round_trip(&a, root, &b);
            cr_assert(loosely_equal(root, back), "%s document %zu", path, i);
            corral_val_t *again = round_trip(&a, back, &b2);
            expect_same(again, back);
            cr_assert(b.len == b2.len && !memcmp(b.p, b2.p, b.len), "%s: bytes differ", path);
            done++;
        }
        corral_arena_fini(&a);
        corral_buf_fini(&text);
        corral_buf_fini(&b);
        corral_buf_fini(&b2);
    }
    closedir(dp);
    return done;
}

Test(pb, example_and_scenario_objects_decode_back_to_themselves)
{
    size_t n = round_trip_dir("examples") + round_trip_dir("examples/quickstart") +
               round_trip_dir("tests/scenarios");
    cr_assert_geq(n, 10, "only %zu built-in objects", n);
}

static void expect_round_trip(const char *in, const char *want)
{
    corral_arena_t a;
    corral_arena_init(&a);
    corral_buf_t b;
    corral_buf_init(&b);
    expect_same(round_trip(&a, json(&a, in), &b), json(&a, want ? want : in));
    corral_buf_fini(&b);
    corral_arena_fini(&a);
}

Test(pb, special_types_maps_lists_and_long_messages)
{
    /* Time drops sub-second parts as Go's does; MicroTime keeps micros. */
    expect_round_trip(
        "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\",\"metadata\":{\"name\":"
        "\"l\",\"creationTimestamp\":\"2024-05-06T07:08:09Z\",\"labels\":{\"z\":\"1\",\"a\":"
        "\"\"}},\"spec\":{\"renewTime\":\"2024-05-06T07:08:09.123456Z\",\"acquireTime\":null,"
        "\"leaseTransitions\":0}}",
        NULL);
    expect_round_trip("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"},"
                      "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\",\"resources\":{"
                      "\"limits\":{\"nvidia.com/gpu\":2,\"cpu\":\"500m\"}},\"ports\":[{"
                      "\"containerPort\":80}],\"readinessProbe\":{\"httpGet\":{\"port\":\"http\"},"
                      "\"periodSeconds\":-1},\"livenessProbe\":{\"tcpSocket\":{\"port\":8080}}}],"
                      "\"activeDeadlineSeconds\":1,\"securityContext\":{\"supplementalGroups\":"
                      "[1,2,3]}},\"status\":{}}",
                      "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"},"
                      "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\",\"resources\":{"
                      "\"limits\":{\"cpu\":\"500m\",\"nvidia.com/gpu\":\"2\"}},\"ports\":[{"
                      "\"containerPort\":80}],\"readinessProbe\":{\"httpGet\":{\"port\":\"http\"},"
                      "\"periodSeconds\":-1},\"livenessProbe\":{\"tcpSocket\":{\"port\":8080}}}],"
                      "\"activeDeadlineSeconds\":1,\"securityContext\":{\"supplementalGroups\":"
                      "[1,2,3]}},\"status\":{}}");
    expect_round_trip("{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":\"s\"},"
                      "\"data\":{\"k\":\"AAEC/w==\",\"e\":\"\"},\"type\":\"Opaque\"}",
                      NULL);
    expect_round_trip("{\"apiVersion\":\"v1\",\"kind\":\"Status\",\"metadata\":{},\"status\":"
                      "\"Failure\",\"message\":\"no\",\"reason\":\"NotFound\",\"details\":{"
                      "\"name\":\"x\",\"kind\":\"pods\",\"causes\":[{\"reason\":\"r\",\"field\":"
                      "\"f\"}],\"retryAfterSeconds\":3},\"code\":404}",
                      NULL);
    expect_round_trip("{\"apiVersion\":\"authorization.k8s.io/v1\",\"kind\":"
                      "\"SubjectAccessReview\",\"metadata\":{},\"spec\":{\"user\":\"u\",\"extra\":"
                      "{\"b\":[\"x\",\"y\"],\"a\":[]}},\"status\":{\"allowed\":true}}",
                      NULL);
    /* A list of many items: lengths of two and three bytes. */
    corral_buf_t big;
    corral_buf_init(&big);
    corral_buf_puts(&big, "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMapList\",\"metadata\":{"
                          "\"resourceVersion\":\"7\",\"continue\":\"c\"},\"items\":[");
    for (int i = 0; i < 300; i++) {
        corral_buf_printf(&big,
                          "%s{\"metadata\":{\"name\":\"cm%d\",\"namespace\":\"ns\"},"
                          "\"data\":{\"v\":\"",
                          i ? "," : "", i);
        for (int j = 0; j < i; j++)
            corral_buf_putc(&big, 'x');
        corral_buf_puts(&big, "\"}}");
    }
    corral_buf_puts(&big, "]}");
    expect_round_trip(corral_buf_str(&big), NULL);
    corral_buf_fini(&big);
}

Test(pb, ints_and_times_are_written_as_go_writes_them)
{
    corral_arena_t a;
    corral_arena_init(&a);
    corral_buf_t b;
    corral_buf_init(&b);
    char why[256];
    /* Lease spec: holderIdentity absent (a pointer), leaseDurationSeconds -1
     * as ten bytes, acquireTime the zero time: an empty message. */
    corral_val_t *v = json(&a, "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\","
                               "\"spec\":{\"leaseDurationSeconds\":-1,\"acquireTime\":"
                               "\"0001-01-01T00:00:00Z\",\"renewTime\":\"1970-01-01T00:00:01Z\"}}");
    cr_assert_eq(corral_pb_encode(v, &b, why, sizeof(why)), 0, "%s", why);
    const char *want = "6b387300"                                             /* magic */
                       "0a1f0a16636f6f7264696e6174696f6e2e6b38732e696f2f7631" /* typeMeta */
                       "12054c65617365"
                       "1215"                   /* raw */
                       "1213"                   /* spec */
                       "10ffffffffffffffffff01" /* leaseDurationSeconds -1 */
                       "1a00"                   /* acquireTime: zero */
                       "2204"
                       "0801"
                       "1000" /* renewTime {1, 0} */
                       "1a00"
                       "2200"; /* contentEncoding, contentType */
    cr_assert_str_eq(hex(b.p, b.len), want);
    corral_buf_fini(&b);
    corral_arena_fini(&a);
}

Test(pb, watch_events_and_kinds_without_protobuf)
{
    corral_arena_t a;
    corral_arena_init(&a);
    corral_buf_t b;
    corral_buf_init(&b);
    char why[256];
    corral_val_t *pod = json(&a, "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":"
                                 "\"p\",\"resourceVersion\":\"5\"},\"spec\":{},\"status\":{}}");
    cr_assert_eq(corral_pb_encode_watch_event("MODIFIED", pod, &b, why, sizeof(why)), 0, "%s", why);
    corral_val_t *ev = NULL;
    cr_assert_eq(corral_pb_decode_watch_event(&a, b.p, b.len, &ev, why, sizeof(why)), 0, "%s", why);
    expect_same(ev, json(&a, "{\"type\":\"MODIFIED\",\"object\":{\"apiVersion\":\"v1\",\"kind\":"
                             "\"Pod\",\"metadata\":{\"name\":\"p\",\"resourceVersion\":\"5\"},"
                             "\"spec\":{},\"status\":{}}}"));
    /* The event's object field holds a whole body: magic and envelope. */
    cr_assert_eq((uint8_t)b.p[0], 0x0a);
    cr_assert(memmem(b.p, b.len, "k8s\0", 4));
    corral_buf_reset(&b);
    corral_val_t *job = json(&a, "{\"apiVersion\":\"batch.volcano.sh/v1alpha1\",\"kind\":\"Job\"}");
    cr_assert_eq(corral_pb_encode(job, &b, why, sizeof(why)), CORRAL_EUNSUPPORTED);
    cr_assert(strstr(why, "no protobuf form"), "%s", why);
    cr_assert_eq(corral_pb_encode_watch_event("ADDED", job, &b, why, sizeof(why)),
                 CORRAL_EUNSUPPORTED);
    cr_assert_eq(b.len, 0, "nothing is left written on failure");
    corral_val_t *bad = json(&a, "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":"
                                 "\"p\"},\"spec\":{\"containers\":[{\"name\":7}]}}");
    cr_assert_eq(corral_pb_encode(bad, &b, why, sizeof(why)), CORRAL_EINVAL);
    cr_assert(strstr(why, "spec.containers.name: expected a string, got a"), "%s", why);
    cr_assert_eq(b.len, 0);
    bad = json(&a, "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"data\":{\"k\":\"%%%\"}}");
    cr_assert_eq(corral_pb_encode(bad, &b, why, sizeof(why)), CORRAL_EINVAL);
    cr_assert(strstr(why, "base64"), "%s", why);
    corral_buf_fini(&b);
    corral_arena_fini(&a);
}
