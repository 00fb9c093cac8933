/* Value trees: building, access, copy, equality, and the JSON/YAML emitters
 * (round trips through the loader). */
#include <criterion/criterion.h>
#include <string.h>

#include "corral/val.h"
#include "corral/yaml.h"

static corral_val_t *parse1(corral_arena_t *a, const char *s)
{
    corral_diag_t d;
    corral_diag_init(&d);
    corral_doc_t *docs;
    size_t n;
    int rc = corral_yaml_parse(a, s, strlen(s), "t", NULL, &d, &docs, &n);
    cr_assert_eq(rc, 0, "parse failed");
    corral_diag_fini(&d);
    cr_assert_eq(n, 1);
    return docs[0].root;
}

Test(val, build_and_access)
{
    corral_arena_t a;
    corral_arena_init(&a);
    corral_val_t *m = corral_val_new(&a, CORRAL_VAL_MAP);
    corral_val_set(&a, m, "name", corral_val_new_str(&a, "x"));
    corral_val_t *spec = corral_val_ensure_map(&a, m, "spec");
    corral_val_set(&a, spec, "replicas", corral_val_new_int(&a, 3));
    corral_val_set(&a, m, "name", corral_val_new_str(&a, "y"));
    cr_assert_eq(m->n, 2, "set replaces in place");
    cr_assert_str_eq(corral_val_get_str(m, "name"), "y");
    cr_assert_eq(corral_val_dig(m, "spec.replicas")->u.i, 3);
    cr_assert_null(corral_val_dig(m, "spec.missing"));
    cr_assert(corral_val_del(m, "name"));
    cr_assert_not(corral_val_del(m, "name"));
    corral_val_t *seq = corral_val_new(&a, CORRAL_VAL_SEQ);
    for (int i = 0; i < 100; i++)
        corral_val_push(&a, seq, corral_val_new_int(&a, i));
    cr_assert_eq(seq->n, 100);
    cr_assert_eq(seq->items[99]->u.i, 99);
    corral_arena_fini(&a);
}

Test(val, json_emit_escapes_and_numbers)
{
    corral_arena_t a;
    corral_arena_init(&a);
    corral_val_t *v =
        parse1(&a, "s: \"a\\\"b\\n\\t\\u0001\"\nf: 1.50\ng: .5\ni: -7\nb: false\nn: null\n");
    corral_buf_t out;
    corral_buf_init(&out);
    corral_val_to_json(v, &out, false);
    cr_assert_str_eq(corral_buf_str(&out),
                     "{\"s\":\"a\\\"b\\n\\t\\u0001\",\"f\":1.50,\"g\":0.5,\"i\":-7,\"b\":false,"
                     "\"n\":null}");
    corral_buf_fini(&out);
    corral_arena_fini(&a);
}

Test(val, yaml_emit_round_trips)
{
    const char *src = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  labels:\n    a: \"1\"\n"
                      "    b: 'true'\n    c: ''\nspec:\n  containers:\n  - name: c\n    args:\n"
                      "    - --x=1\n    - 'key: value'\n    - \"#hash\"\n  empty: {}\n"
                      "  list: []\n  nested:\n  - - 1\n    - 2\n";
    corral_arena_t a;
    corral_arena_init(&a);
    corral_val_t *v = parse1(&a, src);
    corral_buf_t out;
    corral_buf_init(&out);
    corral_val_to_yaml(v, &out);
    corral_val_t *back = parse1(&a, corral_buf_str(&out));
    cr_assert(corral_val_equal(v, back), "YAML round trip changed the tree:\n%s",
              corral_buf_str(&out));
    corral_buf_reset(&out);
    corral_val_to_json(v, &out, true);
    corral_val_t *back2 = parse1(&a, corral_buf_str(&out));
    cr_assert(corral_val_equal(v, back2), "JSON round trip changed the tree:\n%s",
              corral_buf_str(&out));
    corral_buf_fini(&out);
    corral_arena_fini(&a);
}

Test(val, copy_and_equal)
{
    corral_arena_t a, b;
    corral_arena_init(&a);
    corral_arena_init(&b);
    corral_val_t *v = parse1(&a, "x: {y: [1, 2, {z: q}]}\nw: 2.5\n");
    corral_val_t *c = corral_val_copy(&b, v);
    corral_arena_fini(&a); /* the copy must not share memory */
    corral_arena_init(&a);
    corral_val_t *v2 = parse1(&a, "w: 2.5\nx: {y: [1, 2, {z: q}]}\n");
    cr_assert(corral_val_equal(c, v2), "maps compare unordered");
    corral_val_t *v3 = parse1(&a, "w: 2.5\nx: {y: [2, 1, {z: q}]}\n");
    cr_assert_not(corral_val_equal(c, v3), "lists compare ordered");
    corral_arena_fini(&a);
    corral_arena_fini(&b);
}

Test(val, arena_large_and_many)
{
    corral_arena_t a;
    corral_arena_init(&a);
    for (int i = 0; i < 10000; i++) {
        char *p = corral_arena_alloc(&a, (size_t)(i % 100) + 1);
        p[0] = 'x';
    }
    char *big = corral_arena_alloc(&a, 4 << 20);
    big[(4 << 20) - 1] = 'y';
    char *s = corral_arena_printf(&a, "%s-%d", "n", 42);
    cr_assert_str_eq(s, "n-42");
    corral_arena_reset(&a);
    cr_assert_eq(a.used, 0);
    corral_arena_fini(&a);
}

/* Maps of many keys are indexed: get, set and del agree with a plain model
 * of the map through thousands of mixed operations, deletes keep every
 * other key reachable, and an index left stale by direct edits of pairs is
 * ignored rather than trusted. */
Test(val, big_maps_stay_consistent)
{
    corral_arena_t a;
    corral_arena_init(&a);
    corral_val_t *m = corral_val_new(&a, CORRAL_VAL_MAP);
    enum { N = 5000 };
    static int model[N]; /* value + 1, 0 absent */
    memset(model, 0, sizeof(model));
    unsigned seed = 12345;
    char key[32];
    for (int step = 0; step < 40000; step++) {
        seed = seed * 1103515245u + 12345u;
        int k = (int)((seed >> 8) % N), op = (int)((seed >> 20) % 3);
        snprintf(key, sizeof(key), "key-%d", k);
        if (op < 2) {
            corral_val_set(&a, m, key, corral_val_new_int(&a, step));
            model[k] = step + 1;
        } else {
            cr_assert_eq(corral_val_del(m, key), model[k] != 0, "del %s at %d", key, step);
            model[k] = 0;
        }
    }
    size_t live = 0;
    for (int k = 0; k < N; k++) {
        snprintf(key, sizeof(key), "key-%d", k);
        corral_val_t *v = corral_val_get(m, key);
        if (model[k]) {
            cr_assert_not_null(v, "%s lost", key);
            cr_assert_eq(v->u.i, model[k] - 1, "%s", key);
            live++;
        } else {
            cr_assert_null(v, "%s present after delete", key);
        }
    }
    cr_assert_eq(m->n, live);
    /* A copy is indexed too, and equal whatever the order of its pairs. */
    corral_val_t *c = corral_val_copy(&a, m);
    cr_assert(corral_val_equal(m, c));
    /* Reverse the pairs by hand and re-index, as a caller editing pairs must. */
    for (size_t i = 0; i < c->n / 2; i++) {
        corral_val_pair_t t = c->pairs[i];
        c->pairs[i] = c->pairs[c->n - 1 - i];
        c->pairs[c->n - 1 - i] = t;
    }
    corral_val_index(&a, c);
    cr_assert(corral_val_equal(m, c));
    /* Removing a pair by hand without re-indexing: lookups stay correct. */
    const char *last = c->pairs[c->n - 1].key->s;
    c->n--;
    cr_assert_null(corral_val_get(c, last));
    cr_assert_not_null(corral_val_get(c, c->pairs[0].key->s));
    corral_arena_fini(&a);
}
