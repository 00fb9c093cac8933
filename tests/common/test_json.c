/* The linear JSON parser: the same trees as the YAML loader's JSON mode
 * (checked by re-emitting both), its errors with positions, its limits, and
 * the inputs that made libfyaml slow (trailing whitespace, huge maps) parsed
 * in linear time. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "corral/json.h"
#include "corral/yaml.h"

static void same_as_yaml(const char *text)
{
    corral_arena_t a;
    corral_arena_init(&a);
    corral_val_t *v = NULL;
    corral_json_err_t e;
    cr_assert_eq(corral_json_parse(&a, text, strlen(text), &v, &e), 0, "%s: %d:%d %s", text, e.line,
                 e.col, e.msg);
    corral_doc_t *docs;
    size_t n;
    corral_yaml_opts_t o = {.json = true};
    cr_assert_eq(corral_yaml_parse(&a, text, strlen(text), "t", &o, NULL, &docs, &n), 0);
    corral_buf_t x, y;
    corral_buf_init(&x);
    corral_buf_init(&y);
    corral_val_to_json(v, &x, false);
    corral_val_to_json(docs[0].root, &y, false);
    cr_assert_str_eq(corral_buf_str(&x), corral_buf_str(&y), "for %s", text);
    cr_assert(corral_val_equal(v, docs[0].root));
    corral_buf_fini(&x);
    corral_buf_fini(&y);
    corral_arena_fini(&a);
}

Test(json, same_trees_as_the_yaml_loader)
{
    static const char *const docs[] = {
        "{}",
        "[]",
        "{\"a\":1,\"b\":[true,false,null],\"c\":{\"d\":\"e\"}}",
        " { \"q\" : \"1.50\" , \"n\" : 1.50 , \"e\" : 2e3 , \"neg\" : -0.5 } ",
        "{\"big\":123456789012345678901234567890,\"min\":-9223372036854775808}",
        "{\"s\":\"tab\\tnl\\nq\\\"bs\\\\sl\\/u\\u00e9\\ud83d\\ude00\"}",
        "[[[[[]]]],{\"a\":[{}]}]",
        "\"just a string\"",
        "42",
        "{\"nested\":{\"list\":[1,2,{\"x\":[3]}],\"empty\":{}}}",
    };
    for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++)
        same_as_yaml(docs[i]);
}

Test(json, scalars_keep_their_text)
{
    corral_arena_t a;
    corral_arena_init(&a);
    corral_val_t *v = NULL;
    const char *t = "{\"f\":1.50,\"i\":7,\"b\":true,\"z\":null}";
    cr_assert_eq(corral_json_parse(&a, t, strlen(t), &v, NULL), 0);
    corral_val_t *f = corral_val_get(v, "f");
    cr_assert_eq(f->kind, CORRAL_VAL_FLOAT);
    cr_assert_str_eq(f->s, "1.50");
    cr_assert_eq(corral_val_get(v, "i")->kind, CORRAL_VAL_INT);
    cr_assert_eq(corral_val_get(v, "i")->u.i, 7);
    cr_assert_eq(corral_val_get(v, "b")->kind, CORRAL_VAL_BOOL);
    cr_assert_eq(corral_val_get(v, "z")->kind, CORRAL_VAL_NULL);
    cr_assert_eq(f->line, 1);
    cr_assert_eq(f->col, 6);
    corral_arena_fini(&a);
}

static void bad(const char *text, int line, int col, const char *words)
{
    corral_arena_t a;
    corral_arena_init(&a);
    corral_val_t *v = NULL;
    corral_json_err_t e;
    cr_assert_neq(corral_json_parse(&a, text, strlen(text), &v, &e), 0, "accepted %s", text);
    cr_assert_null(v);
    cr_assert_eq(e.line, line, "%s: line %d", text, e.line);
    cr_assert_eq(e.col, col, "%s: col %d (%s)", text, e.col, e.msg);
    cr_assert(strstr(e.msg, words), "%s: %s", text, e.msg);
    corral_arena_fini(&a);
}

Test(json, errors_have_positions)
{
    bad("{\"a\":1,\"a\":2}", 1, 8, "duplicate key \"a\"");
    bad("{\"a\":1,}", 1, 8, "expected a string key");
    bad("{\"a\" 1}", 1, 6, "expected ':'");
    bad("[1 2]", 1, 4, "expected ',' or ']'");
    bad("{\"a\":\n  tru}", 2, 3, "unexpected character");
    bad("[01]", 1, 2, "leading zeros");
    bad("[1.]", 1, 2, "invalid number");
    bad("\"abc", 1, 1, "unterminated string");
    bad("\"a\\x\"", 1, 3, "invalid escape");
    bad("\"\\ud800\"", 1, 8, "unpaired surrogate");
    bad("\"\\u0000\"", 1, 2, "\\u0000");
    bad("{} {}", 1, 4, "unexpected data after");
    bad("", 1, 1, "unexpected end");
    bad("\"a\tb\"", 1, 3, "control character");
}

Test(json, limits)
{
    char deep[512];
    size_t n = 0;
    for (int i = 0; i < 150; i++)
        deep[n++] = '[';
    deep[n] = '\0';
    corral_arena_t a;
    corral_arena_init(&a);
    corral_val_t *v;
    corral_json_err_t e;
    cr_assert_eq(corral_json_parse(&a, deep, n, &v, &e), CORRAL_ETOOBIG);
    cr_assert(strstr(e.msg, "nested"));
    corral_arena_fini(&a);
}

static double seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

Test(json, linear_on_inputs_that_were_slow, .timeout = 20)
{
    size_t len = (size_t)3 << 20;
    char *s = malloc(len + 1);
    memset(s, ' ', len);
    memcpy(s, "{\"metadata\":{\"name\":\"x\"}}", 25);
    s[len] = '\0';
    corral_arena_t a;
    corral_arena_init(&a);
    corral_val_t *v;
    double t0 = seconds();
    cr_assert_eq(corral_json_parse(&a, s, len, &v, NULL), 0);
    /* 100,000 keys: duplicate detection must not be quadratic. */
    size_t o = 0;
    o += (size_t)snprintf(s + o, len - o, "{");
    for (int i = 0; i < 100000; i++)
        o += (size_t)snprintf(s + o, len - o, "%s\"k%d\":%d", i ? "," : "", i, i);
    o += (size_t)snprintf(s + o, len - o, "}");
    cr_assert_eq(corral_json_parse(&a, s, o, &v, NULL), 0);
    cr_assert_eq(v->n, 100000);
    double dt = seconds() - t0;
    cr_assert_lt(dt, 2.0, "took %.2f s", dt);
    memcpy(s + o - 1, ",\"k5\":1}", 9);
    corral_json_err_t e;
    cr_assert_eq(corral_json_parse(&a, s, o + 7, &v, &e), CORRAL_EPARSE);
    cr_assert(strstr(e.msg, "duplicate key \"k5\""), "%s", e.msg);
    corral_arena_fini(&a);
    free(s);
}
