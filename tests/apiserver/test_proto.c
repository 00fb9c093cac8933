/* Protobuf request bodies (src/model/pb.c, include/corral/pb.h): the bodies kubectl 1.32
 * sent, each decoded into exactly the tree of the JSON kubectl prints for
 * the same object; hand-encoded messages for what kubectl does not send
 * (a Pod with containers, Quantity, IntOrString, inline members; Secret
 * bytes; Time and MicroTime; DeleteOptions, Eviction, Binding, Scale,
 * TokenRequest, extra); packed and unpacked lists, unknown fields, map
 * duplicates; the errors and bounds; and over HTTP, a create and an SSAR
 * in protobuf answered in protobuf (src/apiserver/negotiate.c), the
 * Accept negotiation, a watch's frames. */
#include "api_test.h"
#include "apiserver/apiserver_int.h"
#include "corral/json.h"
#include "../common/val_assert.h"
#include "corral/pb.h"
#include "proto_kubectl.h"

TestSuite(proto, .timeout = 30);

/* --- a tiny encoder ------------------------------------------------------------ */

static void w_varint(corral_buf_t *b, uint64_t v)
{
    do {
        uint8_t c = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v)
            c |= 0x80;
        corral_buf_append(b, &c, 1);
    } while (v);
}

static void w_key(corral_buf_t *b, uint32_t num, int wt)
{
    w_varint(b, ((uint64_t)num << 3) | (uint64_t)wt);
}

static void w_int(corral_buf_t *b, uint32_t num, int64_t v)
{
    w_key(b, num, 0);
    w_varint(b, (uint64_t)v);
}

static void w_bytes(corral_buf_t *b, uint32_t num, const void *p, size_t n)
{
    w_key(b, num, 2);
    w_varint(b, n);
    corral_buf_append(b, p, n);
}

static void w_str(corral_buf_t *b, uint32_t num, const char *s)
{
    w_bytes(b, num, s, strlen(s));
}

/* Embeds sub (then empties it for reuse). */
static void w_msg(corral_buf_t *b, uint32_t num, corral_buf_t *sub)
{
    w_bytes(b, num, sub->p ? sub->p : "", sub->len);
    corral_buf_reset(sub);
}

static void w_entry(corral_buf_t *b, uint32_t num, const char *k, const char *v)
{
    corral_buf_t e;
    corral_buf_init(&e);
    w_str(&e, 1, k);
    w_str(&e, 2, v);
    w_msg(b, num, &e);
    corral_buf_fini(&e);
}

/* An entry whose value is a message. */
static void w_entry_msg(corral_buf_t *b, uint32_t num, const char *k, corral_buf_t *v)
{
    corral_buf_t e;
    corral_buf_init(&e);
    w_str(&e, 1, k);
    w_msg(&e, 2, v);
    w_msg(b, num, &e);
    corral_buf_fini(&e);
}

static void w_quantity_entry(corral_buf_t *b, uint32_t num, const char *k, const char *q)
{
    corral_buf_t v;
    corral_buf_init(&v);
    w_str(&v, 1, q);
    w_entry_msg(b, num, k, &v);
    corral_buf_fini(&v);
}

/* The body: magic, then runtime.Unknown{typeMeta, raw}. */
static void envelope(corral_buf_t *out, const char *av, const char *kind, corral_buf_t *raw)
{
    corral_buf_t tm;
    corral_buf_init(&tm);
    corral_buf_append(out, "k8s\0", 4);
    w_str(&tm, 1, av);
    w_str(&tm, 2, kind);
    w_msg(out, 1, &tm);
    w_msg(out, 2, raw);
    corral_buf_fini(&tm);
}

/* --- checking --------------------------------------------------------------------- */

/* Decode body and compare with the JSON want (key order aside). */
static void expect_json(const void *body, size_t len, const char *want)
{
    corral_arena_t a;
    corral_arena_init(&a);
    corral_val_t *got = NULL, *exp = NULL;
    char why[256] = "";
    int rc = corral_pb_decode(&a, body, len, &got, why, sizeof(why));
    cr_assert_eq(rc, 0, "decode failed (%d): %s", rc, why);
    cr_assert_eq(corral_json_parse(&a, want, strlen(want), &exp, NULL), 0, "bad want: %s", want);
    corral_buf_t b;
    corral_buf_init(&b);
    corral_val_to_json(got, &b, false);
    cr_assert(corral_val_equal(got, exp), "got  %s\nwant %s", corral_buf_str(&b), want);
    corral_buf_fini(&b);
    corral_arena_fini(&a);
}

/* Decode body, expect failure rc with why containing msg. */
static void expect_error(const void *body, size_t len, int want_rc, const char *msg)
{
    corral_arena_t a;
    corral_arena_init(&a);
    corral_val_t *got = NULL;
    char why[256] = "";
    int rc = corral_pb_decode(&a, body, len, &got, why, sizeof(why));
    cr_assert_eq(rc, want_rc, "rc %d (%s), want %d", rc, why, want_rc);
    cr_assert_null(got);
    cr_assert(strstr(why, msg), "why \"%s\" lacks \"%s\"", why, msg);
    corral_arena_fini(&a);
}

static void expect_buf(corral_buf_t *body, const char *want)
{
    expect_json(body->p, body->len, want);
}

/* --- recorded bodies ----------------------------------------------------------------- */

Test(proto, kubectl_132_bodies_decode_as_kubectl_prints_them)
{
    size_t n = sizeof(recorded_bodies) / sizeof(recorded_bodies[0]);
    cr_assert_geq(n, 15);
    for (size_t i = 0; i < n; i++) {
        cr_log_info("%s", recorded_bodies[i].name);
        expect_json(recorded_bodies[i].pb, recorded_bodies[i].len, recorded_bodies[i].json);
    }
}

Test(proto, every_truncation_of_a_recorded_body_fails_cleanly)
{
    /* A prefix either decodes (cut at a field boundary of the outer
     * message) or fails with a message; never reads past its end. */
    size_t n = sizeof(recorded_bodies) / sizeof(recorded_bodies[0]);
    for (size_t i = 0; i < n; i++) {
        for (size_t cut = 0; cut < recorded_bodies[i].len; cut++) {
            corral_arena_t a;
            corral_arena_init(&a);
            corral_val_t *v = NULL;
            char why[256] = "";
            uint8_t *copy = malloc(cut + 1);
            memcpy(copy, recorded_bodies[i].pb, cut);
            int rc = corral_pb_decode(&a, copy, cut, &v, why, sizeof(why));
            cr_assert(rc == 0 ? v != NULL : (v == NULL && why[0]), "%s cut %zu",
                      recorded_bodies[i].name, cut);
            free(copy);
            corral_arena_fini(&a);
        }
    }
}

/* --- hand-encoded messages --------------------------------------------------------------- */

Test(proto, pod_with_containers_resources_env_ports_probes_volumes)
{
    corral_buf_t body, pod, meta, spec, c, sub, sub2, t;
    corral_buf_t *all[] = {&body, &pod, &meta, &spec, &c, &sub, &sub2, &t};
    for (size_t i = 0; i < 8; i++)
        corral_buf_init(all[i]);
    /* metadata: name, namespace, labels, creationTimestamp, generation 0 */
    w_str(&meta, 1, "web");
    w_str(&meta, 3, "default");
    w_entry(&meta, 11, "app", "web");
    w_entry(&meta, 11, "tier", "front");
    w_int(&t, 1, 1704164645);
    w_int(&t, 2, 999999999); /* Time drops sub-seconds */
    w_msg(&meta, 8, &t);
    w_int(&meta, 7, 0);
    w_msg(&pod, 1, &meta);
    /* a container */
    w_str(&c, 1, "main");
    w_str(&c, 2, "nginx:1.25");
    w_str(&c, 3, "nginx");
    w_str(&c, 3, "-g");
    w_str(&c, 5, "");     /* workingDir "" is omitted */
    w_int(&sub, 2, 0);    /* hostPort 0: omitted */
    w_int(&sub, 3, 8080); /* containerPort */
    w_str(&sub, 4, "TCP");
    w_msg(&c, 6, &sub);
    w_int(&sub, 3, 0); /* containerPort 0: kept (no omitempty) */
    w_msg(&c, 6, &sub);
    w_str(&sub, 1, "MODE");
    w_str(&sub, 2, "prod");
    w_msg(&c, 7, &sub);
    w_str(&sub, 1, "EMPTY");
    w_str(&sub, 2, "");
    w_msg(&c, 7, &sub);
    w_quantity_entry(&sub, 1, "cpu", "500m");
    w_quantity_entry(&sub, 1, "nvidia.com/gpu", "1");
    w_quantity_entry(&sub, 2, "memory", "1Gi");
    w_msg(&c, 8, &sub);
    /* readinessProbe: inline ProbeHandler{httpGet{path, port=IntOrString int}} */
    w_str(&sub2, 1, "/healthz");
    {
        corral_buf_t ios;
        corral_buf_init(&ios);
        w_int(&ios, 1, 0);
        w_int(&ios, 2, 8080);
        w_msg(&sub2, 2, &ios);
        corral_buf_t h;
        corral_buf_init(&h);
        w_msg(&h, 2, &sub2);
        w_msg(&sub, 1, &h);
        w_int(&sub, 4, 5); /* periodSeconds */
        w_msg(&c, 11, &sub);
        /* livenessProbe: tcpSocket port "http" (IntOrString string) */
        w_int(&ios, 1, 1);
        w_str(&ios, 3, "http");
        w_msg(&sub2, 1, &ios);
        w_msg(&h, 3, &sub2);
        w_msg(&sub, 1, &h);
        w_msg(&c, 10, &sub);
        corral_buf_fini(&ios);
        corral_buf_fini(&h);
    }
    w_msg(&spec, 2, &c);
    /* a volume: name and inline VolumeSource{emptyDir{}} */
    w_str(&sub, 1, "scratch");
    w_msg(&sub2, 2, &t); /* empty EmptyDirVolumeSource */
    w_msg(&sub, 2, &sub2);
    w_msg(&spec, 1, &sub);
    w_str(&spec, 3, "Always");
    w_int(&spec, 4, 0);  /* terminationGracePeriodSeconds: a pointer, 0 kept */
    w_int(&spec, 11, 0); /* hostNetwork false: omitted */
    w_entry(&spec, 7, "gpu", "a100");
    w_msg(&pod, 2, &spec);
    w_msg(&pod, 3, &sub); /* empty status */
    envelope(&body, "v1", "Pod", &pod);
    expect_buf(&body,
               "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"web\","
               "\"namespace\":\"default\",\"labels\":{\"app\":\"web\",\"tier\":\"front\"},"
               "\"creationTimestamp\":\"2024-01-02T03:04:05Z\"},\"spec\":{\"containers\":[{"
               "\"name\":\"main\",\"image\":\"nginx:1.25\",\"command\":[\"nginx\",\"-g\"],"
               "\"ports\":[{\"containerPort\":8080,\"protocol\":\"TCP\"},{\"containerPort\":0}],"
               "\"env\":[{\"name\":\"MODE\",\"value\":\"prod\"},{\"name\":\"EMPTY\"}],"
               "\"resources\":{\"limits\":{\"cpu\":\"500m\",\"nvidia.com/gpu\":\"1\"},"
               "\"requests\":{\"memory\":\"1Gi\"}},\"readinessProbe\":{\"httpGet\":{\"path\":"
               "\"/healthz\",\"port\":8080},\"periodSeconds\":5},\"livenessProbe\":{"
               "\"tcpSocket\":{\"port\":\"http\"}}}],\"volumes\":[{\"name\":\"scratch\","
               "\"emptyDir\":{}}],\"restartPolicy\":\"Always\",\"terminationGracePeriodSeconds\":0,"
               "\"nodeSelector\":{\"gpu\":\"a100\"}},\"status\":{}}");
    for (size_t i = 0; i < 8; i++)
        corral_buf_fini(all[i]);
}

Test(proto, secret_bytes_are_base64_and_maps_sort_and_keep_the_last_duplicate)
{
    corral_buf_t body, s, meta, e;
    corral_buf_init(&body);
    corral_buf_init(&s);
    corral_buf_init(&meta);
    corral_buf_init(&e);
    w_str(&meta, 1, "tls");
    w_entry(&meta, 11, "z", "1");
    w_entry(&meta, 11, "a", "old");
    w_entry(&meta, 11, "a", "new");
    w_msg(&s, 1, &meta);
    const uint8_t bin[] = {0x00, 0xff, 0x10, 0x80};
    w_str(&e, 1, "bin");
    w_bytes(&e, 2, bin, sizeof(bin));
    w_msg(&s, 2, &e);
    w_str(&e, 1, "one");
    w_bytes(&e, 2, "a", 1);
    w_msg(&s, 2, &e);
    w_str(&e, 1, "two");
    w_bytes(&e, 2, "ab", 2);
    w_msg(&s, 2, &e);
    w_str(&e, 1, "three");
    w_bytes(&e, 2, "abc", 3);
    w_msg(&s, 2, &e);
    w_str(&e, 1, "empty"); /* no value: the zero value */
    w_msg(&s, 2, &e);
    w_str(&s, 3, "Opaque");
    w_int(&s, 5, 0); /* immutable: a pointer, false kept */
    envelope(&body, "v1", "Secret", &s);
    expect_buf(&body, "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":\"tls\","
                      "\"labels\":{\"a\":\"new\",\"z\":\"1\"}},\"data\":{\"bin\":\"AP8QgA==\","
                      "\"empty\":\"\",\"one\":\"YQ==\",\"three\":\"YWJj\",\"two\":\"YWI=\"},"
                      "\"type\":\"Opaque\",\"immutable\":false}");
    /* Sorted as Go writes maps. */
    corral_arena_t a;
    corral_arena_init(&a);
    corral_val_t *v = NULL;
    cr_assert_eq(corral_pb_decode(&a, body.p, body.len, &v, NULL, 0), 0);
    corral_val_t *d = corral_val_get(v, "data");
    cr_assert_str_eq(d->pairs[0].key->s, "bin");
    cr_assert_str_eq(d->pairs[4].key->s, "two");
    corral_arena_fini(&a);
    corral_buf_fini(&body);
    corral_buf_fini(&s);
    corral_buf_fini(&meta);
    corral_buf_fini(&e);
}

Test(proto, times_microtimes_and_a_zero_time)
{
    corral_buf_t body, l, spec, t;
    corral_buf_init(&body);
    corral_buf_init(&l);
    corral_buf_init(&spec);
    corral_buf_init(&t);
    w_str(&spec, 1, "node-a");
    w_int(&spec, 2, 40);
    w_int(&t, 1, 1714979289);
    w_int(&t, 2, 123456789);
    w_msg(&spec, 4, &t); /* renewTime: microseconds */
    w_msg(&spec, 3, &t); /* acquireTime: empty, Go's zero time: null */
    w_int(&spec, 5, 0);  /* leaseTransitions: a pointer, kept */
    w_msg(&l, 2, &spec);
    w_str(&t, 1, "lease1");
    w_msg(&l, 1, &t);
    envelope(&body, "coordination.k8s.io/v1", "Lease", &l);
    expect_buf(&body, "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\",\"metadata\":{"
                      "\"name\":\"lease1\"},\"spec\":{\"holderIdentity\":\"node-a\","
                      "\"leaseDurationSeconds\":40,\"renewTime\":\"2024-05-06T07:08:09.123456Z\","
                      "\"acquireTime\":null,\"leaseTransitions\":0}}");
    /* events.k8s.io/v1 Event: eventTime (MicroTime), deprecated Times. */
    corral_buf_reset(&body);
    w_int(&t, 1, 1704164645);
    w_msg(&l, 2, &t);
    w_int(&t, 1, 0); /* the epoch, explicitly */
    w_msg(&l, 13, &t);
    w_str(&l, 7, "Scheduled");
    w_str(&l, 11, "Normal");
    w_str(&spec, 1, "Pod");
    w_str(&spec, 3, "p1");
    w_msg(&l, 8, &spec);
    envelope(&body, "events.k8s.io/v1", "Event", &l);
    expect_buf(&body, "{\"apiVersion\":\"events.k8s.io/v1\",\"kind\":\"Event\",\"eventTime\":"
                      "\"2024-01-02T03:04:05.000000Z\",\"deprecatedFirstTimestamp\":"
                      "\"1970-01-01T00:00:00Z\",\"reason\":\"Scheduled\",\"type\":\"Normal\","
                      "\"regarding\":{\"kind\":\"Pod\",\"name\":\"p1\"}}");
    corral_buf_fini(&body);
    corral_buf_fini(&l);
    corral_buf_fini(&spec);
    corral_buf_fini(&t);
}

Test(proto, delete_options_eviction_binding_scale_token_request)
{
    corral_buf_t body, m, sub, sub2;
    corral_buf_init(&body);
    corral_buf_init(&m);
    corral_buf_init(&sub);
    corral_buf_init(&sub2);
    /* DeleteOptions as client-go sends it ("v1" too) */
    w_int(&m, 1, 0);
    w_str(&sub, 1, "uid-1");
    w_msg(&m, 2, &sub);
    w_str(&m, 4, "Foreground");
    w_str(&m, 5, "All");
#define WANT_DO                                                                                    \
    "{\"apiVersion\":\"%s\",\"kind\":\"DeleteOptions\",\"gracePeriodSeconds\":0,"                  \
    "\"preconditions\":{\"uid\":\"uid-1\"},\"propagationPolicy\":\"Foreground\",\"dryRun\":["      \
    "\"All\"]}"
    char want[512];
    corral_buf_t copy;
    corral_buf_init(&copy);
    corral_buf_append(&copy, m.p, m.len);
    envelope(&body, "meta.k8s.io/v1", "DeleteOptions", &m);
    snprintf(want, sizeof(want), WANT_DO, "meta.k8s.io/v1");
    expect_buf(&body, want);
    corral_buf_reset(&body);
    envelope(&body, "v1", "DeleteOptions", &copy);
    snprintf(want, sizeof(want), WANT_DO, "v1");
    expect_buf(&body, want);
    corral_buf_fini(&copy);
    /* Eviction with deleteOptions */
    corral_buf_reset(&body);
    w_str(&sub, 1, "p1");
    w_str(&sub, 3, "default");
    w_msg(&m, 1, &sub);
    w_int(&sub, 1, 30);
    w_msg(&m, 2, &sub);
    envelope(&body, "policy/v1", "Eviction", &m);
    expect_buf(&body, "{\"apiVersion\":\"policy/v1\",\"kind\":\"Eviction\",\"metadata\":{\"name\":"
                      "\"p1\",\"namespace\":\"default\"},\"deleteOptions\":{"
                      "\"gracePeriodSeconds\":30}}");
    /* Binding */
    corral_buf_reset(&body);
    w_str(&sub, 1, "p1");
    w_msg(&m, 1, &sub);
    w_str(&sub, 1, "Node");
    w_str(&sub, 3, "node-1");
    w_str(&sub, 5, "v1");
    w_msg(&m, 2, &sub);
    envelope(&body, "v1", "Binding", &m);
    expect_buf(&body, "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"p1\"},"
                      "\"target\":{\"kind\":\"Node\",\"name\":\"node-1\",\"apiVersion\":\"v1\"}}");
    /* Scale: replicas 0 is omitted as in Go's JSON */
    corral_buf_reset(&body);
    w_str(&sub, 1, "job");
    w_msg(&m, 1, &sub);
    w_int(&sub, 1, 3);
    w_msg(&m, 2, &sub);
    w_int(&sub, 1, 0);
    w_str(&sub, 2, "app=x");
    w_msg(&m, 3, &sub);
    envelope(&body, "autoscaling/v1", "Scale", &m);
    expect_buf(&body,
               "{\"apiVersion\":\"autoscaling/v1\",\"kind\":\"Scale\",\"metadata\":{\"name\":"
               "\"job\"},\"spec\":{\"replicas\":3},\"status\":{\"replicas\":0,"
               "\"selector\":\"app=x\"}}");
    /* TokenRequest */
    corral_buf_reset(&body);
    w_str(&sub, 1, "https://kubernetes.default.svc");
    w_str(&sub, 1, "corral");
    w_int(&sub, 4, 3600);
    w_str(&sub2, 1, "Pod");
    w_str(&sub2, 2, "v1");
    w_str(&sub2, 3, "p1");
    w_str(&sub2, 4, "u-1");
    w_msg(&sub, 3, &sub2);
    w_msg(&m, 2, &sub);
    envelope(&body, "authentication.k8s.io/v1", "TokenRequest", &m);
    expect_buf(&body,
               "{\"apiVersion\":\"authentication.k8s.io/v1\",\"kind\":\"TokenRequest\",\"spec\":{"
               "\"audiences\":[\"https://kubernetes.default.svc\",\"corral\"],"
               "\"expirationSeconds\":3600,\"boundObjectRef\":{\"kind\":\"Pod\",\"apiVersion\":"
               "\"v1\",\"name\":\"p1\",\"uid\":\"u-1\"}}}");
    corral_buf_fini(&body);
    corral_buf_fini(&m);
    corral_buf_fini(&sub);
    corral_buf_fini(&sub2);
}

Test(proto, subject_access_review_extra_is_a_map_of_lists)
{
    corral_buf_t body, m, spec, list;
    corral_buf_init(&body);
    corral_buf_init(&m);
    corral_buf_init(&spec);
    corral_buf_init(&list);
    w_str(&spec, 3, "alice");
    w_str(&spec, 4, "devs");
    w_str(&list, 1, "a");
    w_str(&list, 1, "b");
    w_entry_msg(&spec, 5, "scopes", &list);
    w_entry_msg(&spec, 5, "none", &list);
    w_msg(&m, 2, &spec);
    envelope(&body, "authorization.k8s.io/v1", "SubjectAccessReview", &m);
    expect_buf(&body, "{\"apiVersion\":\"authorization.k8s.io/v1\",\"kind\":"
                      "\"SubjectAccessReview\",\"spec\":{\"user\":\"alice\",\"groups\":[\"devs\"],"
                      "\"extra\":{\"none\":[],\"scopes\":[\"a\",\"b\"]}}}");
    corral_buf_fini(&body);
    corral_buf_fini(&m);
    corral_buf_fini(&spec);
    corral_buf_fini(&list);
}

Test(proto, packed_and_unpacked_lists_negative_ints_unknown_fields)
{
    corral_buf_t body, pod, spec, sc, packed;
    corral_buf_init(&body);
    corral_buf_init(&pod);
    corral_buf_init(&spec);
    corral_buf_init(&sc);
    corral_buf_init(&packed);
    w_int(&sc, 4, 1000); /* supplementalGroups, unpacked */
    w_varint(&packed, 2000);
    w_varint(&packed, 3000);
    w_msg(&sc, 4, &packed); /* and packed */
    w_int(&sc, 2, -1);      /* runAsUser -1: ten bytes on the wire */
    /* unknown fields of every wire type are skipped */
    w_int(&sc, 900, 7);
    w_key(&sc, 901, 1);
    corral_buf_append(&sc, "12345678", 8);
    w_key(&sc, 902, 5);
    corral_buf_append(&sc, "1234", 4);
    w_str(&sc, 903, "ignored");
    w_msg(&spec, 14, &sc);
    w_int(&spec, 5, -5); /* activeDeadlineSeconds */
    w_msg(&pod, 2, &spec);
    envelope(&body, "v1", "Pod", &pod);
    expect_buf(&body, "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"spec\":{\"securityContext\":{"
                      "\"supplementalGroups\":[1000,2000,3000],\"runAsUser\":-1},"
                      "\"activeDeadlineSeconds\":-5}}");
    corral_buf_fini(&body);
    corral_buf_fini(&pod);
    corral_buf_fini(&spec);
    corral_buf_fini(&sc);
    corral_buf_fini(&packed);
}

Test(proto, a_message_seen_twice_merges_and_a_scalar_seen_twice_keeps_the_last)
{
    corral_buf_t body, ns, meta;
    corral_buf_init(&body);
    corral_buf_init(&ns);
    corral_buf_init(&meta);
    w_str(&meta, 1, "first");
    w_msg(&ns, 1, &meta);
    w_str(&meta, 1, "second");
    w_entry(&meta, 11, "k", "v");
    w_msg(&ns, 1, &meta);
    envelope(&body, "v1", "Namespace", &ns);
    expect_buf(&body, "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":"
                      "\"second\",\"labels\":{\"k\":\"v\"}}}");
    corral_buf_fini(&body);
    corral_buf_fini(&ns);
    corral_buf_fini(&meta);
}

/* Message shapes that no served kind has: Duration, RawExtension, FieldsV1,
 * recursion (for the depth bound). */
static const corral_schema_msg_t test_self;
static const corral_schema_field_t test_fields[] = {
    {"d", 1, CORRAL_SCHEMA_DURATION, 0, NULL, NULL},
    {"raw", 2, CORRAL_SCHEMA_RAW, 0, NULL, NULL},
    {"f", 3, CORRAL_SCHEMA_FIELDSV1, 0, NULL, NULL},
    {"self", 4, CORRAL_SCHEMA_MSG, 0, &test_self, NULL},
    {"n", 5, CORRAL_SCHEMA_DOUBLE, 0, NULL, NULL},
    {"any", 6, CORRAL_SCHEMA_ANY, 0, NULL, NULL},
};
static const corral_schema_msg_t test_self = {"test.Self", test_fields, 6, NULL};

static const char *decode_test(corral_arena_t *a, corral_buf_t *b, char *why, size_t len)
{
    corral_val_t *v = NULL;
    if (corral__pb_decode_msg(a, &test_self, b->p, b->len, &v, why, len) != 0)
        return NULL;
    corral_buf_t out;
    corral_buf_init(&out);
    corral_val_to_json(v, &out, false);
    char *s = corral_arena_strndup(a, corral_buf_str(&out), out.len);
    corral_buf_fini(&out);
    return s;
}

Test(proto, duration_raw_extension_fieldsv1_double)
{
    corral_arena_t a;
    corral_arena_init(&a);
    corral_buf_t b, sub;
    corral_buf_init(&b);
    corral_buf_init(&sub);
    char why[256];
    w_int(&sub, 1, 5430000000000LL); /* 1h30m30s */
    w_msg(&b, 1, &sub);
    w_str(&sub, 1, "{\"a\":[1,true]}");
    w_msg(&b, 2, &sub);
    w_str(&sub, 1, "{\"f:metadata\":{}}");
    w_msg(&b, 3, &sub);
    double d = 2.5;
    w_key(&b, 5, 1);
    corral_buf_append(&b, &d, 8); /* little-endian hosts only, as the tests run */
    w_str(&b, 6, "skipped");
    cr_assert_str_eq(decode_test(&a, &b, why, sizeof(why)),
                     "{\"d\":\"1h30m30s\",\"raw\":{\"a\":[1,true]},\"f\":{\"f:metadata\":{}},"
                     "\"n\":2.5}");
    /* Sub-second durations as Go prints them; bad embedded JSON. */
    corral_buf_reset(&b);
    w_int(&sub, 1, 1500000);
    w_msg(&b, 1, &sub);
    w_str(&sub, 1, "{nope");
    w_msg(&b, 2, &sub);
    cr_assert_null(decode_test(&a, &b, why, sizeof(why)));
    cr_assert(strstr(why, "raw: embedded JSON"), "%s", why);
    corral_buf_reset(&b);
    w_int(&sub, 1, 1500000);
    w_msg(&b, 1, &sub);
    cr_assert_str_eq(decode_test(&a, &b, why, sizeof(why)), "{\"d\":\"1.5ms\"}");
    corral_buf_fini(&b);
    corral_buf_fini(&sub);
    corral_arena_fini(&a);
}

Test(proto, nesting_past_the_bound_is_refused)
{
    corral_arena_t a;
    corral_arena_init(&a);
    corral_buf_t b, sub;
    corral_buf_init(&b);
    corral_buf_init(&sub);
    char why[512];
    for (int i = 0; i < CORRAL_PB_MAX_DEPTH + 5; i++) {
        w_msg(&sub, 4, &b);
        corral_buf_append(&b, sub.p, sub.len);
        corral_buf_reset(&sub);
    }
    cr_assert_null(decode_test(&a, &b, why, sizeof(why)));
    cr_assert(strstr(why, "nested deeper than"), "%s", why);
    cr_assert(strstr(why, "self.self.self"), "%s", why);
    corral_buf_fini(&b);
    corral_buf_fini(&sub);
    corral_arena_fini(&a);
}

Test(proto, too_many_values_are_refused)
{
    corral_buf_t body, pod, spec, sc, packed;
    corral_buf_init(&body);
    corral_buf_init(&pod);
    corral_buf_init(&spec);
    corral_buf_init(&sc);
    corral_buf_init(&packed);
    for (size_t i = 0; i <= CORRAL_PB_MAX_ITEMS; i++)
        w_varint(&packed, 0);
    w_msg(&sc, 4, &packed);
    w_msg(&spec, 14, &sc);
    w_msg(&pod, 2, &spec);
    envelope(&body, "v1", "Pod", &pod);
    expect_error(body.p, body.len, CORRAL_ETOOBIG, "more than");
    corral_buf_fini(&body);
    corral_buf_fini(&pod);
    corral_buf_fini(&spec);
    corral_buf_fini(&sc);
    corral_buf_fini(&packed);
}

Test(proto, a_message_merged_many_times_stays_linear)
{
    /* 250,000 metadata fields of one label each: one map, sorted once. */
    corral_buf_t body, cm, meta;
    corral_buf_init(&body);
    corral_buf_init(&cm);
    corral_buf_init(&meta);
    char k[32];
    for (int i = 250000; i > 0; i--) {
        snprintf(k, sizeof(k), "k%06d", i);
        w_entry(&meta, 11, k, "v");
        w_msg(&cm, 1, &meta);
    }
    envelope(&body, "v1", "ConfigMap", &cm);
    corral_arena_t a;
    corral_arena_init(&a);
    corral_val_t *v = NULL;
    char why[256] = "";
    cr_assert_eq(corral_pb_decode(&a, body.p, body.len, &v, why, sizeof(why)), 0, "%s", why);
    corral_val_t *labels = corral_val_dig(v, "metadata.labels");
    cr_assert_eq(labels->n, 250000);
    cr_assert_str_eq(labels->pairs[0].key->s, "k000001");
    cr_assert_str_eq(labels->pairs[249999].key->s, "k250000");
    corral_arena_fini(&a);
    corral_buf_fini(&body);
    corral_buf_fini(&cm);
    corral_buf_fini(&meta);
}

Test(proto, malformed_bodies_give_a_message)
{
    expect_error("", 0, CORRAL_EPARSE, "magic");
    expect_error("{\"a\":1}", 7, CORRAL_EPARSE, "magic");
    corral_buf_t body, m, sub;
    corral_buf_init(&body);
    corral_buf_init(&m);
    corral_buf_init(&sub);
    /* an unknown kind */
    envelope(&body, "v1", "Widget", &m);
    expect_error(body.p, body.len, CORRAL_EUNSUPPORTED, "no protobuf message is known for v1");
    /* no typeMeta */
    corral_buf_reset(&body);
    corral_buf_append(&body, "k8s\0", 4);
    w_msg(&body, 2, &m);
    expect_error(body.p, body.len, CORRAL_EPARSE, "names no apiVersion and kind");
    /* a content encoding */
    w_str(&body, 3, "gzip");
    expect_error(body.p, body.len, CORRAL_EUNSUPPORTED, "contentEncoding \"gzip\"");
    /* a length past the end */
    corral_buf_reset(&body);
    w_str(&sub, 1, "x");
    w_msg(&m, 1, &sub);
    envelope(&body, "v1", "Namespace", &m);
    body.len -= 1;
    expect_error(body.p, body.len, CORRAL_EPARSE, "runs past the end");
    /* the wrong wire type, with the path */
    corral_buf_reset(&body);
    w_int(&sub, 1, 5);
    w_msg(&m, 1, &sub);
    envelope(&body, "v1", "Namespace", &m);
    expect_error(body.p, body.len, CORRAL_EPARSE, "metadata.name: wire type 0 where 2");
    /* not UTF-8 */
    corral_buf_reset(&body);
    w_bytes(&sub, 1, "a\xff", 2);
    w_msg(&m, 1, &sub);
    envelope(&body, "v1", "Namespace", &m);
    expect_error(body.p, body.len, CORRAL_EPARSE, "metadata.name: a string is not UTF-8");
    /* a NUL byte */
    corral_buf_reset(&body);
    w_bytes(&sub, 1, "a\0b", 3);
    w_msg(&m, 1, &sub);
    envelope(&body, "v1", "Namespace", &m);
    expect_error(body.p, body.len, CORRAL_EPARSE, "NUL");
    /* a group (wire type 3) */
    corral_buf_reset(&body);
    w_key(&m, 7, 3);
    envelope(&body, "v1", "Namespace", &m);
    expect_error(body.p, body.len, CORRAL_EPARSE, "unsupported wire type 3");
    /* an overlong varint */
    corral_buf_reset(&body);
    w_key(&m, 7, 0);
    corral_buf_append(&m, "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 11);
    envelope(&body, "v1", "Namespace", &m);
    expect_error(body.p, body.len, CORRAL_EPARSE, "varint");
    /* field number 0 */
    corral_buf_reset(&body);
    w_key(&m, 0, 0);
    w_varint(&m, 1);
    envelope(&body, "v1", "Namespace", &m);
    expect_error(body.p, body.len, CORRAL_EPARSE, "invalid field number 0");
    /* a time out of range */
    corral_buf_reset(&body);
    w_int(&sub, 1, 253402300800LL);
    corral_buf_t meta;
    corral_buf_init(&meta);
    w_msg(&meta, 8, &sub);
    w_msg(&m, 1, &meta);
    envelope(&body, "v1", "Namespace", &m);
    expect_error(body.p, body.len, CORRAL_EPARSE, "metadata.creationTimestamp: time");
    corral_buf_fini(&meta);
    corral_buf_fini(&body);
    corral_buf_fini(&m);
    corral_buf_fini(&sub);
}

/* --- lists, Status, watch events ----------------------------------------------------- */

Test(proto, a_pod_list_a_status_and_kinds_without_protobuf)
{
    corral_buf_t body, l, meta, item, m;
    corral_buf_init(&body);
    corral_buf_init(&l);
    corral_buf_init(&meta);
    corral_buf_init(&item);
    corral_buf_init(&m);
    w_str(&meta, 2, "42");
    w_str(&meta, 3, "");
    w_int(&meta, 4, 0); /* remainingItemCount: a pointer, kept */
    w_msg(&l, 1, &meta);
    w_str(&m, 1, "p1");
    w_msg(&item, 1, &m);
    w_msg(&l, 2, &item);
    w_str(&m, 1, "p2");
    w_msg(&item, 1, &m);
    w_msg(&l, 2, &item);
    envelope(&body, "v1", "PodList", &l);
    expect_buf(&body, "{\"apiVersion\":\"v1\",\"kind\":\"PodList\",\"metadata\":{"
                      "\"resourceVersion\":\"42\",\"remainingItemCount\":0},\"items\":["
                      "{\"metadata\":{\"name\":\"p1\"}},{\"metadata\":{\"name\":\"p2\"}}]}");
    corral_buf_reset(&body);
    w_msg(&l, 1, &meta); /* empty ListMeta */
    w_str(&l, 2, "Failure");
    w_str(&l, 3, "pods \"x\" not found");
    w_str(&l, 4, "NotFound");
    w_str(&m, 1, "x");
    w_str(&m, 3, "pods");
    w_str(&item, 1, "FieldValueRequired");
    w_str(&item, 3, "spec");
    w_msg(&m, 4, &item);
    w_msg(&l, 5, &m);
    w_int(&l, 6, 404);
    envelope(&body, "v1", "Status", &l);
    expect_buf(&body, "{\"apiVersion\":\"v1\",\"kind\":\"Status\",\"metadata\":{},"
                      "\"status\":\"Failure\",\"message\":\"pods \\\"x\\\" not found\","
                      "\"reason\":\"NotFound\",\"details\":{\"name\":\"x\",\"kind\":\"pods\","
                      "\"causes\":[{\"reason\":\"FieldValueRequired\",\"field\":\"spec\"}]},"
                      "\"code\":404}");
    cr_assert(corral_pb_has_kind("v1", "Pod"));
    cr_assert(corral_pb_has_kind("v1", "PodList"));
    cr_assert(corral_pb_has_kind("meta.k8s.io/v1", "Status"));
    cr_assert(corral_pb_has_kind("rbac.authorization.k8s.io/v1", "ClusterRoleBindingList"));
    cr_assert_not(corral_pb_has_kind("batch.volcano.sh/v1alpha1", "Job"));
    cr_assert_not(corral_pb_has_kind("batch.volcano.sh/v1alpha1", "JobList"));
    cr_assert_not(corral_pb_has_kind("meta.k8s.io/v1", "Table"));
    cr_assert_not(corral_pb_has_kind("v1", "List"));
    cr_assert_not(corral_pb_has_kind("v1", "APIResourceList"));
    /* A CRD kind in an envelope is refused, not decoded as an empty object. */
    corral_buf_reset(&body);
    envelope(&body, "batch.volcano.sh/v1alpha1", "Job", &l);
    expect_error(body.p, body.len, CORRAL_EUNSUPPORTED, "no protobuf message");
    corral_buf_fini(&body);
    corral_buf_fini(&l);
    corral_buf_fini(&meta);
    corral_buf_fini(&item);
    corral_buf_fini(&m);
}

static void expect_event(const corral_buf_t *ev, int want_rc, const char *want)
{
    corral_arena_t a;
    corral_arena_init(&a);
    corral_val_t *got = NULL, *exp = NULL;
    char why[256] = "";
    int rc = corral_pb_decode_watch_event(&a, ev->p, ev->len, &got, why, sizeof(why));
    cr_assert_eq(rc, want_rc, "rc %d (%s)", rc, why);
    if (want_rc) {
        cr_assert_null(got);
        cr_assert(strstr(why, want), "why \"%s\" lacks \"%s\"", why, want);
    } else {
        cr_assert_eq(corral_json_parse(&a, want, strlen(want), &exp, NULL), 0);
        corral_buf_t b;
        corral_buf_init(&b);
        corral_val_to_json(got, &b, false);
        cr_assert(corral_val_equal(got, exp), "got  %s\nwant %s", corral_buf_str(&b), want);
        corral_buf_fini(&b);
    }
    corral_arena_fini(&a);
}

Test(proto, watch_events_carry_a_whole_object_body)
{
    corral_buf_t ev, raw, obj, ns, m;
    corral_buf_init(&ev);
    corral_buf_init(&raw);
    corral_buf_init(&obj);
    corral_buf_init(&ns);
    corral_buf_init(&m);
    w_str(&m, 1, "ns1");
    w_msg(&ns, 1, &m);
    envelope(&obj, "v1", "Namespace", &ns);
    w_bytes(&raw, 1, obj.p, obj.len);
    w_str(&ev, 1, "ADDED");
    w_msg(&ev, 2, &raw);
    expect_event(&ev, 0,
                 "{\"type\":\"ADDED\",\"object\":{\"apiVersion\":\"v1\",\"kind\":"
                 "\"Namespace\",\"metadata\":{\"name\":\"ns1\"}}}");
    /* A JSON object in the RawExtension (as a CRD's event would carry). */
    corral_buf_reset(&ev);
    w_str(&raw, 1, "{\"kind\":\"Job\"}");
    w_str(&ev, 1, "MODIFIED");
    w_msg(&ev, 2, &raw);
    expect_event(&ev, 0, "{\"type\":\"MODIFIED\",\"object\":{\"kind\":\"Job\"}}");
    corral_buf_reset(&ev);
    w_str(&ev, 1, "DELETED");
    expect_event(&ev, CORRAL_EPARSE, "no object");
    corral_buf_reset(&ev);
    w_str(&raw, 1, "{}");
    w_msg(&ev, 2, &raw);
    expect_event(&ev, CORRAL_EPARSE, "no type");
    corral_buf_reset(&ev);
    w_str(&ev, 1, "ADDED");
    w_key(&ev, 2, 0);
    w_varint(&ev, 1);
    expect_event(&ev, CORRAL_EPARSE, "wire type");
    corral_buf_reset(&ev);
    w_str(&ev, 1, "ADDED");
    w_bytes(&ev, 2, "\x0a\x05k8s", 5); /* raw's length runs past the end */
    expect_event(&ev, CORRAL_EPARSE, "runs past");
    corral_buf_fini(&ev);
    corral_buf_fini(&raw);
    corral_buf_fini(&obj);
    corral_buf_fini(&ns);
    corral_buf_fini(&m);
}

/* --- over HTTP ---------------------------------------------------------------------------- */

static long pb_send(const char *method, const char *path, const void *body, size_t len,
                    corral_buf_t *out)
{
    CURL *c = curl_easy_init();
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    char url[512];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", api_srv.port, path);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)len);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, api_collect);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, out);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 20L);
    struct curl_slist *h = NULL;
    h = curl_slist_append(h, "Content-Type: application/vnd.kubernetes.protobuf");
    h = curl_slist_append(h, "Accept: application/vnd.kubernetes.protobuf,application/json");
    h = curl_slist_append(h, "Expect:");
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    cr_assert_eq(curl_easy_perform(c), CURLE_OK);
    long code = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    char *ct = NULL;
    curl_easy_getinfo(c, CURLINFO_CONTENT_TYPE, &ct);
    /* The answer comes in protobuf (the Accept prefers it): as JSON here. */
    cr_assert(ct && !strcmp(ct, "application/vnd.kubernetes.protobuf"), "%s", ct ? ct : "-");
    corral_arena_t a;
    corral_arena_init(&a);
    corral_val_t *v = NULL;
    char why[256];
    cr_assert_eq(corral_pb_decode(&a, out->p, out->len, &v, why, sizeof(why)), 0, "%s", why);
    corral_buf_reset(out);
    corral_val_to_json(v, out, false);
    corral_arena_fini(&a);
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    return code;
}

static long pb_post(const char *path, const void *body, size_t len, corral_buf_t *out)
{
    return pb_send("POST", path, body, len, out);
}

static const recorded_body_t *recorded(const char *name)
{
    for (size_t i = 0; i < sizeof(recorded_bodies) / sizeof(recorded_bodies[0]); i++) {
        if (!strcmp(recorded_bodies[i].name, name))
            return &recorded_bodies[i];
    }
    cr_assert_fail("no recorded body %s", name);
    return NULL;
}

Test(proto, http_create_and_review_in_protobuf_answered_in_protobuf)
{
    api_start();
    corral_buf_t out;
    corral_buf_init(&out);
    const recorded_body_t *ns = recorded("namespace");
    long code = pb_post("/api/v1/namespaces", ns->pb, ns->len, &out);
    cr_assert_eq(code, 201, "%ld %s", code, corral_buf_str(&out));
    cr_assert(strstr(corral_buf_str(&out), "\"name\":\"pns\""), "%s", corral_buf_str(&out));
    corral_buf_reset(&out);
    const recorded_body_t *cm = recorded("configmap");
    code = pb_post("/api/v1/namespaces/pns/configmaps", cm->pb, cm->len, &out);
    cr_assert_eq(code, 201, "%ld %s", code, corral_buf_str(&out));
    api_resp_t r;
    API_EXPECT(&r, 200, "GET", "/api/v1/namespaces/pns/configmaps/cm1", NULL, NULL);
    cr_assert_str_eq(api_str(r.json, "data.a"), "b");
    cr_assert_str_eq(api_str(r.json, "data.c"), "d");
    api_free(&r);
    corral_buf_reset(&out);
    const recorded_body_t *ssar = recorded("ssar");
    code = pb_post("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", ssar->pb, ssar->len,
                   &out);
    cr_assert_eq(code, 201, "%ld %s", code, corral_buf_str(&out));
    cr_assert(strstr(corral_buf_str(&out), "\"allowed\":true"), "%s", corral_buf_str(&out));
    /* DeleteOptions in protobuf: a wrong UID precondition is refused, then
     * a delete with gracePeriodSeconds 0 goes through. */
    corral_buf_t b, m, sub;
    corral_buf_init(&b);
    corral_buf_init(&m);
    corral_buf_init(&sub);
    w_int(&m, 1, 0);
    w_str(&sub, 1, "not-the-uid");
    w_msg(&m, 2, &sub);
    envelope(&b, "meta.k8s.io/v1", "DeleteOptions", &m);
    corral_buf_reset(&out);
    code = pb_send("DELETE", "/api/v1/namespaces/pns/configmaps/cm1", b.p, b.len, &out);
    cr_assert_eq(code, 409, "%ld %s", code, corral_buf_str(&out));
    cr_assert(strstr(corral_buf_str(&out), "UID in precondition: not-the-uid"), "%s",
              corral_buf_str(&out));
    corral_buf_reset(&b);
    w_int(&m, 1, 0);
    envelope(&b, "v1", "DeleteOptions", &m);
    corral_buf_reset(&out);
    code = pb_send("DELETE", "/api/v1/namespaces/pns/configmaps/cm1", b.p, b.len, &out);
    cr_assert_eq(code, 200, "%ld %s", code, corral_buf_str(&out));
    API_EXPECT(&r, 404, "GET", "/api/v1/namespaces/pns/configmaps/cm1", NULL, NULL);
    api_free(&r);
    /* A pod bound and evicted through protobuf bodies. */
    API_EXPECT(&r, 201, "POST", "/api/v1/namespaces/pns/pods", NULL,
               "{\"metadata\":{\"name\":\"p1\"},\"spec\":{\"containers\":[{\"name\":\"c\","
               "\"image\":\"i\"}]}}");
    api_free(&r);
    w_str(&sub, 1, "p1");
    w_msg(&m, 1, &sub);
    w_str(&sub, 1, "Node");
    w_str(&sub, 3, "node-1");
    w_msg(&m, 2, &sub);
    corral_buf_reset(&b);
    envelope(&b, "v1", "Binding", &m);
    corral_buf_reset(&out);
    code = pb_post("/api/v1/namespaces/pns/pods/p1/binding", b.p, b.len, &out);
    cr_assert_eq(code, 201, "%ld %s", code, corral_buf_str(&out));
    API_EXPECT(&r, 200, "GET", "/api/v1/namespaces/pns/pods/p1", NULL, NULL);
    cr_assert_str_eq(api_str(r.json, "spec.nodeName"), "node-1");
    api_free(&r);
    w_str(&sub, 1, "p1");
    w_str(&sub, 3, "pns");
    w_msg(&m, 1, &sub);
    w_int(&sub, 1, 0);
    w_msg(&m, 2, &sub);
    corral_buf_reset(&b);
    envelope(&b, "policy/v1", "Eviction", &m);
    corral_buf_reset(&out);
    code = pb_post("/api/v1/namespaces/pns/pods/p1/eviction", b.p, b.len, &out);
    cr_assert_eq(code, 201, "%ld %s", code, corral_buf_str(&out));
    corral_buf_fini(&b);
    corral_buf_fini(&m);
    corral_buf_fini(&sub);
    /* A body that is not protobuf: 400 with the decoder's message. */
    corral_buf_reset(&out);
    code = pb_post("/api/v1/namespaces", "{\"x\":1}", 7, &out);
    cr_assert_eq(code, 400);
    cr_assert(strstr(corral_buf_str(&out), "could not be decoded as protobuf"), "%s",
              corral_buf_str(&out));
    /* A type it does not know lists protobuf among what it accepts. */
    API_EXPECT(&r, 415, "POST", "/api/v1/namespaces", "application/cbor", "{}");
    cr_assert(strstr(corral_buf_str(&r.body), "application/vnd.kubernetes.protobuf"), "%s",
              corral_buf_str(&r.body));
    api_free(&r);
    corral_buf_fini(&out);
    api_stop();
}

Test(proto, accept_negotiation_as_kube_apiserver)
{
    static const struct {
        const char *accept;
        bool pb;
    } cases[] = {
        {"application/vnd.kubernetes.protobuf, application/json", true},
        {"application/vnd.kubernetes.protobuf,application/json", true},
        {"application/json, application/vnd.kubernetes.protobuf", false},
        {"application/json;q=0.5, application/vnd.kubernetes.protobuf", true},
        {"application/vnd.kubernetes.protobuf;q=0.9, application/json", false},
        {"application/vnd.kubernetes.protobuf;q=0, application/json", false},
        {"*/*, application/vnd.kubernetes.protobuf", true}, /* specific first at equal q */
        {"application/vnd.kubernetes.protobuf;stream=watch, application/json", true},
        {"Application/Vnd.Kubernetes.Protobuf", true},
        {"application/cbor, application/vnd.kubernetes.protobuf;q=0.1", true},
        {"application/json;as=Table;v=v1;g=meta.k8s.io, application/json", false},
        {"", false},
        {"*/*", false},
    };
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(cases); i++)
        cr_assert_eq(corral__accept_pb(cases[i].accept, strlen(cases[i].accept)), cases[i].pb, "%s",
                     cases[i].accept);
}

/* GET path with Accept pb: the protobuf body decoded, as JSON; ctype set. */
static corral_val_t *pb_get(corral_arena_t *a, const char *path, long want_code, char *ct,
                            size_t ctlen, corral_buf_t *raw)
{
    const char *const h[] = {"Accept: application/vnd.kubernetes.protobuf, application/json", NULL};
    api_resp_t r;
    api_req_h(&r, "GET", path, NULL, NULL, NULL, h);
    cr_assert_eq(r.code, want_code, "%s: %ld", path, r.code);
    const char *p = strcasestr(corral_buf_str(&r.headers), "content-type: ");
    cr_assert(p, "%s", corral_buf_str(&r.headers));
    snprintf(ct, ctlen, "%.*s", (int)strcspn(p + 14, "\r\n"), p + 14);
    corral_buf_reset(raw);
    corral_buf_append(raw, r.body.p, r.body.len);
    corral_val_t *v = NULL;
    if (!strcmp(ct, "application/vnd.kubernetes.protobuf")) {
        char why[256];
        cr_assert_eq(corral_pb_decode(a, r.body.p, r.body.len, &v, why, sizeof(why)), 0, "%s", why);
    } else if (!strcmp(ct, "application/json")) {
        cr_assert_eq(corral_json_parse(a, r.body.p, r.body.len, &v, NULL), 0);
    }
    api_free(&r);
    return v;
}

static corral_val_t *json_get(corral_arena_t *a, const char *path)
{
    api_resp_t r;
    API_EXPECT(&r, 200, "GET", path, NULL, NULL);
    corral_val_t *v = NULL;
    cr_assert_eq(corral_json_parse(a, r.body.p, r.body.len, &v, NULL), 0);
    api_free(&r);
    return v;
}

static void same_tree(const corral_val_t *got, const corral_val_t *want)
{
    val_assert_same(got, want, "");
}

Test(proto, http_get_list_error_and_watch_in_protobuf)
{
    api_start();
    api_resp_t r;
    API_EXPECT(&r, 201, "POST", "/api/v1/namespaces/default/pods", NULL,
               "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p1\",\"labels\":{"
               "\"b\":\"1\",\"a\":\"2\"}},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":"
               "\"i\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"1\"}}}]}}");
    api_free(&r);
    corral_arena_t a;
    corral_arena_init(&a);
    corral_buf_t raw;
    corral_buf_init(&raw);
    char ct[128];
    const char *paths[] = {"/api/v1/namespaces/default/pods/p1", "/api/v1/namespaces/default/pods",
                           "/api/v1/nodes"};
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(paths); i++) {
        corral_val_t *pb = pb_get(&a, paths[i], 200, ct, sizeof(ct), &raw);
        cr_assert_str_eq(ct, "application/vnd.kubernetes.protobuf", "%s", paths[i]);
        corral_val_t *js = json_get(&a, paths[i]);
        corral_val_t *items = corral_val_get(js, "items");
        for (size_t j = 0; items && j < items->n; j++) { /* not in protobuf's items */
            corral_val_del(items->items[j], "apiVersion");
            corral_val_del(items->items[j], "kind");
        }
        same_tree(pb, js);
    }
    /* A Status error in protobuf. */
    corral_val_t *st =
        pb_get(&a, "/api/v1/namespaces/default/pods/nope", 404, ct, sizeof(ct), &raw);
    cr_assert_str_eq(ct, "application/vnd.kubernetes.protobuf");
    cr_assert_str_eq(corral_val_get_str(st, "kind"), "Status");
    cr_assert_str_eq(corral_val_get_str(st, "reason"), "NotFound");
    /* CRD kinds and discovery stay JSON. */
    pb_get(&a, "/apis/batch.volcano.sh/v1alpha1/namespaces/default/jobs", 200, ct, sizeof(ct),
           &raw);
    cr_assert_str_eq(ct, "application/json");
    pb_get(&a, "/api/v1", 200, ct, sizeof(ct), &raw);
    cr_assert_str_eq(ct, "application/json");
    /* A watch: length-prefixed WatchEvent frames, then the stream ends. */
    corral_val_t *pod = json_get(&a, "/api/v1/namespaces/default/pods/p1");
    pb_get(&a, "/api/v1/namespaces/default/pods?watch=1&timeoutSeconds=1", 200, ct, sizeof(ct),
           &raw);
    cr_assert_str_eq(ct, "application/vnd.kubernetes.protobuf;stream=watch");
    cr_assert_geq(raw.len, 4);
    const uint8_t *p = (const uint8_t *)raw.p;
    size_t n = ((size_t)p[0] << 24) | ((size_t)p[1] << 16) | ((size_t)p[2] << 8) | p[3];
    cr_assert_eq(raw.len, 4 + n, "one frame");
    corral_val_t *ev = NULL;
    char why[256];
    cr_assert_eq(corral_pb_decode_watch_event(&a, p + 4, n, &ev, why, sizeof(why)), 0, "%s", why);
    cr_assert_str_eq(corral_val_get_str(ev, "type"), "ADDED");
    same_tree(corral_val_get(ev, "object"), pod);
    corral_buf_fini(&raw);
    corral_arena_fini(&a);
    api_stop();
}

/* A view resource (events.k8s.io/v1 over the stored core Events) watched in
 * protobuf: each event is converted, then framed; one frame, nothing else
 * on the stream (the converted JSON once leaked ahead of the frame). */
Test(proto, a_view_watched_in_protobuf_is_only_frames)
{
    api_start();
    api_resp_t r;
    API_EXPECT(&r, 201, "POST", "/api/v1/namespaces/default/events", NULL,
               "{\"apiVersion\":\"v1\",\"kind\":\"Event\",\"metadata\":{\"name\":\"e1\"},"
               "\"involvedObject\":{\"kind\":\"Pod\",\"name\":\"q\",\"namespace\":\"default\"},"
               "\"reason\":\"Pulled\",\"message\":\"image pulled\",\"type\":\"Warning\","
               "\"source\":{\"component\":\"kubelet\",\"host\":\"n1\"},"
               "\"firstTimestamp\":\"2024-01-02T03:04:05Z\",\"lastTimestamp\":"
               "\"2024-01-02T03:04:09Z\",\"count\":3}");
    api_free(&r);
    corral_arena_t a;
    corral_arena_init(&a);
    corral_buf_t raw;
    corral_buf_init(&raw);
    char ct[128];
    pb_get(&a, "/apis/events.k8s.io/v1/namespaces/default/events?watch=1&timeoutSeconds=1", 200, ct,
           sizeof(ct), &raw);
    cr_assert_str_eq(ct, "application/vnd.kubernetes.protobuf;stream=watch");
    cr_assert_geq(raw.len, 4);
    const uint8_t *p = (const uint8_t *)raw.p;
    size_t n = ((size_t)p[0] << 24) | ((size_t)p[1] << 16) | ((size_t)p[2] << 8) | p[3];
    cr_assert_eq(raw.len, 4 + n, "one frame and nothing else (%zu bytes, frame %zu)", raw.len, n);
    corral_val_t *ev = NULL;
    char why[256];
    cr_assert_eq(corral_pb_decode_watch_event(&a, p + 4, n, &ev, why, sizeof(why)), 0, "%s", why);
    corral_val_t *obj = corral_val_get(ev, "object");
    cr_assert_str_eq(corral_val_get_str(obj, "apiVersion"), "events.k8s.io/v1");
    cr_assert_str_eq(corral_val_get_str(obj, "note"), "image pulled");
    corral_buf_fini(&raw);
    corral_arena_fini(&a);
    api_stop();
}
