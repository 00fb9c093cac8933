/* Field sets in FieldsV1 form (managed.c): the set of an object (keyed
 * list items, sets of scalars, atomic lists), set algebra, comparing two
 * objects, removing fields, kube's path spelling, and managedFields after
 * updates and applies: ownership, shared ownership, conflicts, force and
 * the removal of fields an applier stops applying. */
#include "api_test.h"
#include "apiserver/apiserver_int.h"
#include "corral/json.h"

TestSuite(managed, .timeout = 10);

static corral_arena_t A;

static void setup(void)
{
    corral_arena_init(&A);
}

static void teardown(void)
{
    corral_arena_fini(&A);
}

static corral_val_t *J(const char *s)
{
    corral_val_t *v = NULL;
    cr_assert_eq(corral_json_parse(&A, s, strlen(s), &v, NULL), 0, "%s", s);
    return v;
}

static const char *S(const corral_val_t *v)
{
    corral_buf_t b;
    corral_buf_init(&b);
    corral_val_to_json(v, &b, false);
    const char *s = corral_arena_strdup(&A, corral_buf_str(&b));
    corral_buf_fini(&b);
    return s;
}

/* The FieldsV1 of obj's fields, as managedFields would hold them. */
static const char *fields(const char *obj)
{
    corral_val_t *set = corral__fields_of(&A, J(obj), false);
    return S(corral__fields_out(&A, corral__fields_strip(&A, set, CORRAL__SCOPE_ALL)));
}

Test(managed, fields_of_an_object, .init = setup, .fini = teardown)
{
    cr_assert_str_eq(fields("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
                            "\"x\",\"labels\":{\"a\":\"b\"}},\"data\":{\"k\":\"v\"}}"),
                     "{\"f:data\":{\"f:k\":{}},\"f:metadata\":{\"f:labels\":{\"f:a\":{}}}}");
    cr_assert_str_eq(
        fields("{\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\",\"args\":[\"a\"]}]}}"),
        "{\"f:spec\":{\"f:containers\":{\"k:{\\\"name\\\":\\\"c\\\"}\":{\".\":{},\"f:args\":{},"
        "\"f:image\":{},\"f:name\":{}}}}}");
    cr_assert_str_eq(fields("{\"metadata\":{\"finalizers\":[\"a\",\"b\"]}}"),
                     "{\"f:metadata\":{\"f:finalizers\":{\"v:\\\"a\\\"\":{},\"v:\\\"b\\\"\":{}}}}");
    /* Only the server's metadata: nothing. */
    cr_assert_str_eq(fields("{\"metadata\":{\"name\":\"x\",\"namespace\":\"d\"}}"), "{}");
}

Test(managed, set_algebra_and_fieldsv1_round_trip, .init = setup, .fini = teardown)
{
    corral_val_t *x = corral__fields_in(&A, J("{\"f:a\":{},\"f:b\":{\"f:c\":{}}}"));
    corral_val_t *y = corral__fields_in(&A, J("{\"f:b\":{\".\":{},\"f:c\":{},\"f:d\":{}}}"));
    cr_assert_str_eq(S(corral__fields_out(&A, corral__fields_union(&A, x, y))),
                     "{\"f:a\":{},\"f:b\":{\".\":{},\"f:c\":{},\"f:d\":{}}}");
    cr_assert_str_eq(S(corral__fields_out(&A, corral__fields_diff(&A, x, y))), "{\"f:a\":{}}");
    cr_assert_str_eq(S(corral__fields_out(&A, corral__fields_inter(&A, x, y))),
                     "{\"f:b\":{\"f:c\":{}}}");
    cr_assert(corral__fields_empty(corral__fields_diff(&A, x, x)));
}

Test(managed, compare_objects, .init = setup, .fini = teardown)
{
    corral_val_t *ad, *mo, *rm;
    corral__fields_compare(&A,
                           J("{\"data\":{\"a\":\"1\",\"b\":\"2\"},\"spec\":{\"containers\":[{"
                             "\"name\":\"c\",\"image\":\"i:1\"}]}}"),
                           J("{\"data\":{\"a\":\"9\",\"c\":\"3\"},\"spec\":{\"containers\":[{"
                             "\"name\":\"c\",\"image\":\"i:2\"}]}}"),
                           &ad, &mo, &rm);
    cr_assert_str_eq(S(corral__fields_out(&A, ad)), "{\"f:data\":{\"f:c\":{}}}");
    cr_assert_str_eq(S(corral__fields_out(&A, mo)),
                     "{\"f:data\":{\"f:a\":{}},\"f:spec\":{\"f:containers\":{\"k:{\\\"name\\\":"
                     "\\\"c\\\"}\":{\"f:image\":{}}}}}");
    cr_assert_str_eq(S(corral__fields_out(&A, rm)), "{\"f:data\":{\"f:b\":{}}}");
}

static void collect(void *ctx, const char *path)
{
    corral_buf_t *b = ctx;
    corral_buf_printf(b, "%s|", path);
}

Test(managed, paths_as_kube_prints_them, .init = setup, .fini = teardown)
{
    corral_val_t *set = corral__fields_in(
        &A, J("{\"f:spec\":{\"f:replicas\":{},\"f:containers\":{\"k:{\\\"name\\\":\\\"c\\\"}\":{"
              "\"f:image\":{}}}},\"f:metadata\":{\"f:finalizers\":{\"v:\\\"x\\\"\":{}}}}"));
    corral_buf_t b;
    corral_buf_init(&b);
    corral__fields_each(&A, set, collect, &b);
    cr_assert_str_eq(corral_buf_str(&b), ".metadata.finalizers[=\"x\"]|.spec.containers[name="
                                         "\"c\"].image|.spec.replicas|");
    corral_buf_fini(&b);
}

Test(managed, remove_fields_keeps_what_others_own, .init = setup, .fini = teardown)
{
    corral_val_t *obj = J("{\"data\":{\"a\":\"1\",\"b\":\"2\"},\"metadata\":{\"labels\":{\"x\":"
                          "\"y\"},\"finalizers\":[\"f1\",\"f2\"]}}");
    corral_val_t *gone = corral__fields_in(
        &A, J("{\"f:data\":{\"f:a\":{}},\"f:metadata\":{\"f:labels\":{\"f:x\":{}},"
              "\"f:finalizers\":{\"v:\\\"f1\\\"\":{}}}}"));
    corral__fields_remove(&A, obj, gone, NULL);
    cr_assert_str_eq(S(obj), "{\"data\":{\"b\":\"2\"},\"metadata\":{\"finalizers\":[\"f2\"]}}");
}

static corral__mf_opts_t opts(const char *mgr)
{
    corral__mf_opts_t o = {mgr, "v1", NULL, "2024-01-01T00:00:00Z", CORRAL__SCOPE_ALL};
    return o;
}

Test(managed, update_entries_per_manager, .init = setup, .fini = teardown)
{
    corral__mf_opts_t o = opts("kubectl-client-side-apply");
    corral_val_t *v1 = J("{\"data\":{\"a\":\"1\"}}");
    corral_val_t *mf = corral__managed_update(&A, NULL, NULL, v1, &o);
    cr_assert_eq(mf->n, 1);
    cr_assert_str_eq(S(corral_val_get(mf->items[0], "fieldsV1")),
                     "{\"f:data\":{\".\":{},\"f:a\":{}}}");
    cr_assert_str_eq(corral_val_get_str(mf->items[0], "operation"), "Update");
    /* Another manager changes a: it takes a over; the first keeps the map. */
    corral__mf_opts_t o2 = opts("kubectl-edit");
    mf = corral__managed_update(&A, mf, v1, J("{\"data\":{\"a\":\"2\"}}"), &o2);
    cr_assert_eq(mf->n, 2);
    cr_assert_str_eq(S(corral_val_get(mf->items[0], "fieldsV1")), "{\"f:data\":{}}");
    cr_assert_str_eq(S(corral_val_get(mf->items[1], "fieldsV1")), "{\"f:data\":{\"f:a\":{}}}");
}

Test(managed, apply_conflicts_force_and_prune, .init = setup, .fini = teardown)
{
    corral__mf_opts_t upd = opts("kubectl-client-side-apply");
    corral_val_t *live = J("{\"data\":{\"a\":\"1\",\"b\":\"2\"}}");
    corral_val_t *base = corral__managed_update(&A, NULL, NULL, live, &upd);
    corral__mf_opts_t ap = opts("m");
    corral_val_t *mf = NULL, *conflicts = NULL;
    /* Same value: shared, no conflict. */
    corral_val_t *merged = J("{\"data\":{\"a\":\"1\",\"b\":\"2\"}}");
    cr_assert_eq(corral__managed_apply(&A, base, live, J("{\"data\":{\"a\":\"1\"}}"), merged, &ap,
                                       false, &mf, &conflicts),
                 0);
    /* Another value: a conflict with kube's manager label and path. */
    merged = J("{\"data\":{\"a\":\"9\",\"b\":\"2\"}}");
    cr_assert_eq(corral__managed_apply(&A, base, live, J("{\"data\":{\"a\":\"9\"}}"), merged, &ap,
                                       false, &mf, &conflicts),
                 CORRAL_ECONFLICT);
    cr_assert_eq(conflicts->n, 1);
    cr_assert_str_eq(corral_val_get_str(conflicts->items[0], "manager"),
                     "\"kubectl-client-side-apply\" using v1");
    cr_assert_str_eq(corral_val_get_str(conflicts->items[0], "field"), ".data.a");
    /* force: m owns a, the updater loses it. */
    cr_assert_eq(corral__managed_apply(&A, base, live, J("{\"data\":{\"a\":\"9\"}}"), merged, &ap,
                                       true, &mf, &conflicts),
                 0);
    cr_assert_str_eq(S(corral_val_get(mf->items[0], "fieldsV1")),
                     "{\"f:data\":{\".\":{},\"f:b\":{}}}");
    cr_assert_str_eq(S(corral_val_get(mf->items[1], "fieldsV1")), "{\"f:data\":{\"f:a\":{}}}");
    /* m applies c and stops applying a: a goes (nobody else owns it). */
    corral_val_t *live2 = merged;
    corral_val_t *merged2 = J("{\"data\":{\"a\":\"9\",\"b\":\"2\",\"c\":\"3\"}}");
    cr_assert_eq(corral__managed_apply(&A, mf, live2, J("{\"data\":{\"c\":\"3\"}}"), merged2, &ap,
                                       false, &mf, &conflicts),
                 0);
    cr_assert_str_eq(S(merged2), "{\"data\":{\"b\":\"2\",\"c\":\"3\"}}");
}
