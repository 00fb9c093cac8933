/* YAML/JSON loading: typing, positions, multi-document streams, limits, and
 * the syntax-error hints. */
#include <criterion/criterion.h>
#include <string.h>

#include "corral/buf.h"
#include "corral/yaml.h"

typedef struct yt {
    corral_arena_t a;
    corral_diag_t d;
    corral_doc_t *docs;
    size_t n;
    int rc;
} yt_t;

static void yt_parse(yt_t *t, const char *text, bool json)
{
    corral_arena_init(&t->a);
    corral_diag_init(&t->d);
    corral_yaml_opts_t o = {.json = json};
    t->rc = corral_yaml_parse(&t->a, text, strlen(text), "f.yaml", &o, &t->d, &t->docs, &t->n);
}

static void yt_fini(yt_t *t)
{
    corral_diag_fini(&t->d);
    corral_arena_fini(&t->a);
}

static const char *first_diag(yt_t *t)
{
    static char out[1024];
    cr_assert_geq(t->d.n, 1, "expected a diagnostic");
    corral_buf_t b;
    corral_buf_init(&b);
    corral_diag_format(&t->d.items[0], &b);
    snprintf(out, sizeof(out), "%s", corral_buf_str(&b));
    corral_buf_fini(&b);
    return out;
}

Test(yaml, core_schema_typing)
{
    yt_t t;
    yt_parse(&t,
             "a: 1\nb: -2\nc: 1.5\nd: true\ne: null\nf: ~\ng: \"1\"\nh: yes\ni: 0x1F\nj: 1e3\n"
             "k: 'true'\nl:\nm: .inf\n",
             false);
    cr_assert_eq(t.rc, 0);
    cr_assert_eq(t.n, 1);
    corral_val_t *r = t.docs[0].root;
    cr_assert_eq(corral_val_get(r, "a")->kind, CORRAL_VAL_INT);
    cr_assert_eq(corral_val_get(r, "b")->u.i, -2);
    cr_assert_eq(corral_val_get(r, "c")->kind, CORRAL_VAL_FLOAT);
    cr_assert_eq(corral_val_get(r, "d")->kind, CORRAL_VAL_BOOL);
    cr_assert_eq(corral_val_get(r, "e")->kind, CORRAL_VAL_NULL);
    cr_assert_eq(corral_val_get(r, "f")->kind, CORRAL_VAL_NULL);
    cr_assert_eq(corral_val_get(r, "g")->kind, CORRAL_VAL_STR);
    cr_assert_eq(corral_val_get(r, "h")->kind, CORRAL_VAL_STR, "YAML 1.2: yes is a string");
    cr_assert_eq(corral_val_get(r, "i")->u.i, 31);
    cr_assert_eq(corral_val_get(r, "j")->kind, CORRAL_VAL_FLOAT);
    cr_assert_str_eq(corral_val_get(r, "j")->s, "1e3", "text kept as written");
    cr_assert_eq(corral_val_get(r, "k")->kind, CORRAL_VAL_STR);
    cr_assert_eq(corral_val_get(r, "l")->kind, CORRAL_VAL_NULL);
    cr_assert_eq(corral_val_get(r, "m")->kind, CORRAL_VAL_FLOAT);
    yt_fini(&t);
}

Test(yaml, positions_are_one_based)
{
    yt_t t;
    yt_parse(&t, "a:\n  b: [1, 2]\n  c:\n  - x: y\n", false);
    cr_assert_eq(t.rc, 0);
    corral_val_t *r = t.docs[0].root;
    corral_val_t *b = corral_val_dig(r, "a.b");
    cr_assert_eq(b->line, 2);
    cr_assert_eq(b->col, 6);
    cr_assert_eq(b->items[1]->col, 10);
    corral_val_t *c = corral_val_dig(r, "a.c");
    corral_val_t *y = corral_val_get(c->items[0], "x");
    cr_assert_eq(y->line, 4);
    cr_assert_eq(y->col, 8);
    yt_fini(&t);
}

Test(yaml, multi_document_stream)
{
    yt_t t;
    yt_parse(&t, "a: 1\n---\n---\nb: 2\n...\n---\nc: 3\n", false);
    cr_assert_eq(t.rc, 0);
    cr_assert_eq(t.n, 4);
    cr_assert_not_null(t.docs[0].root);
    cr_assert_null(t.docs[1].root, "an empty document has no root");
    cr_assert_eq(t.docs[2].line, 3);
    cr_assert_eq(corral_val_get(t.docs[3].root, "c")->u.i, 3);
    yt_fini(&t);
}

Test(yaml, empty_stream_has_no_documents)
{
    yt_t t;
    yt_parse(&t, "", false);
    cr_assert_eq(t.rc, 0);
    cr_assert_eq(t.n, 0);
    yt_fini(&t);
    yt_parse(&t, "# only a comment\n", false);
    cr_assert_eq(t.rc, 0);
    cr_assert_eq(t.n, 0);
    yt_fini(&t);
}

Test(yaml, json_input)
{
    yt_t t;
    yt_parse(&t, "{\"a\": [1, 2.5, \"x\", true, null], \"b\": {\"c\": \"d\"}}", true);
    cr_assert_eq(t.rc, 0);
    corral_val_t *a = corral_val_get(t.docs[0].root, "a");
    cr_assert_eq(a->n, 5);
    cr_assert_eq(a->items[4]->kind, CORRAL_VAL_NULL);
    yt_fini(&t);
}

Test(yaml, colon_without_space_is_located_and_hinted)
{
    yt_t t;
    yt_parse(&t,
             "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata:\n name: q\nspec:\n"
             " weight: 10\n capability:\n  nvidia.com/gpu: 16\n reclaimable:true\n",
             false);
    cr_assert_eq(t.rc, CORRAL_EPARSE);
    const char *m = first_diag(&t);
    cr_assert(strstr(m, "f.yaml:9:2: spec.reclaimable:"), "%s", m);
    cr_assert(strstr(m, "`reclaimable: true`"), "%s", m);
    yt_fini(&t);
}

Test(yaml, duplicate_keys_are_errors)
{
    yt_t t;
    yt_parse(&t, "a: 1\nb: 2\na: 3\n", false);
    cr_assert_eq(t.rc, CORRAL_EPARSE);
    cr_assert(strstr(first_diag(&t), "duplicate key \"a\" (first at line 1)"), "%s",
              first_diag(&t));
    cr_assert(strstr(first_diag(&t), "f.yaml:3:1"), "%s", first_diag(&t));
    yt_fini(&t);
}

Test(yaml, binary_and_invalid_utf8)
{
    yt_t t;
    const char bin[] = "a: b\nc: \xff\xfe\n";
    yt_parse(&t, bin, false);
    cr_assert_eq(t.rc, CORRAL_EPARSE);
    cr_assert(strstr(first_diag(&t), "f.yaml:2:4"), "%s", first_diag(&t));
    yt_fini(&t);
    corral_arena_init(&t.a);
    corral_diag_init(&t.d);
    t.rc = corral_yaml_parse(&t.a, "a: \0b", 5, "f.yaml", NULL, &t.d, &t.docs, &t.n);
    cr_assert_eq(t.rc, CORRAL_EPARSE);
    yt_fini(&t);
}

Test(yaml, deep_nesting_is_refused)
{
    size_t depth = 10000;
    char *s = corral_malloc(2 * depth + 1);
    memset(s, '[', depth);
    memset(s + depth, ']', depth);
    s[2 * depth] = '\0';
    yt_t t;
    yt_parse(&t, s, false);
    cr_assert_eq(t.rc, CORRAL_EPARSE);
    cr_assert(strstr(first_diag(&t), "nesting is deeper than"), "%s", first_diag(&t));
    yt_fini(&t);
    corral_free(s);
}

Test(yaml, alias_bomb_is_refused)
{
    /* Each level doubles ten times: 10^9 nodes if expanded. */
    const char *bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
                       "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
                       "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
                       "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
                       "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
                       "f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
                       "g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]\n"
                       "h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g, *g]\n";
    yt_t t;
    yt_parse(&t, bomb, false);
    cr_assert_eq(t.rc, CORRAL_EPARSE);
    cr_assert(strstr(first_diag(&t), "alias expansion"), "%s", first_diag(&t));
    yt_fini(&t);
}

Test(yaml, aliases_resolve)
{
    yt_t t;
    yt_parse(&t, "base: &r {cpu: 1}\nx: *r\n", false);
    cr_assert_eq(t.rc, 0);
    cr_assert_eq(corral_val_dig(t.docs[0].root, "x.cpu")->u.i, 1);
    yt_fini(&t);
}

Test(yaml, unsupported_tags_and_complex_keys)
{
    yt_t t;
    yt_parse(&t, "a: !custom x\n", false);
    cr_assert_eq(t.rc, CORRAL_EPARSE);
    yt_fini(&t);
    yt_parse(&t, "? [a, b]\n: c\n", false);
    cr_assert_eq(t.rc, CORRAL_EPARSE);
    cr_assert(strstr(first_diag(&t), "mapping keys must be strings"), "%s", first_diag(&t));
    yt_fini(&t);
    yt_parse(&t, "a: !!str 123\n", false);
    cr_assert_eq(t.rc, 0);
    cr_assert_eq(corral_val_get(t.docs[0].root, "a")->kind, CORRAL_VAL_STR);
    yt_fini(&t);
}

Test(yaml, syntax_error_reports_line)
{
    yt_t t;
    yt_parse(&t, "a: [1, 2\nb: 3\n", false);
    cr_assert_eq(t.rc, CORRAL_EPARSE);
    cr_assert(strstr(first_diag(&t), "YAML syntax error"), "%s", first_diag(&t));
    cr_assert(strstr(first_diag(&t), "f.yaml:"), "%s", first_diag(&t));
    yt_fini(&t);
}

Test(yaml, single_quoted_scalars)
{
    yt_t t;
    yt_parse(&t, "a: 'it''s'\nb: ''\nc: 'x''''y'\nd: 'multi\n  line'\ne: [' q''', 'r']\n", false);
    cr_assert_eq(t.rc, 0);
    corral_val_t *r = t.docs[0].root;
    cr_assert_str_eq(corral_val_get(r, "a")->s, "it's");
    cr_assert_str_eq(corral_val_get(r, "b")->s, "");
    cr_assert_eq(corral_val_get(r, "b")->kind, CORRAL_VAL_STR);
    cr_assert_str_eq(corral_val_get(r, "c")->s, "x''y");
    cr_assert_str_eq(corral_val_get(r, "d")->s, "multi line");
    cr_assert_str_eq(corral_val_get(r, "e")->items[0]->s, " q'");
    cr_assert_eq(corral_val_get(r, "e")->items[0]->len, 3);
    yt_fini(&t);
}

Test(yaml, single_quoted_folding)
{
    yt_t t;
    yt_parse(&t, "a: 'one  \n   two\n\n   three\n\n\n  four  '\nb: 'x\n  '\nc: 'it''s\n  ''q'''\n",
             false);
    cr_assert_eq(t.rc, 0);
    corral_val_t *r = t.docs[0].root;
    cr_assert_str_eq(corral_val_get(r, "a")->s, "one two\nthree\n\nfour  ");
    cr_assert_str_eq(corral_val_get(r, "b")->s, "x ");
    cr_assert_str_eq(corral_val_get(r, "c")->s, "it's 'q'");
    yt_fini(&t);
    /* libfyaml 0.7.12 returns "'''b' " for this; YAML 1.2 says "''b'  ". */
    yt_parse(&t, "k: '''''b''  '\n", false);
    cr_assert_eq(t.rc, 0);
    cr_assert_str_eq(corral_val_get(t.docs[0].root, "k")->s, "''b'  ");
    yt_fini(&t);
}

Test(yaml, duplicate_keys_in_large_maps)
{
    corral_buf_t b;
    corral_buf_init(&b);
    for (int i = 0; i < 5000; i++)
        corral_buf_printf(&b, "k%d: v\n", i);
    corral_buf_puts(&b, "k4321: again\n");
    yt_t t;
    yt_parse(&t, corral_buf_str(&b), false);
    cr_assert_eq(t.rc, CORRAL_EPARSE);
    cr_assert(strstr(first_diag(&t), "duplicate key \"k4321\" (first at line 4322)"), "%s",
              first_diag(&t));
    yt_fini(&t);
    corral_buf_fini(&b);
}

Test(yaml, json_trailing_whitespace)
{
    char *s = corral_malloc(200001);
    memcpy(s, "{\"a\": 1}", 8);
    memset(s + 8, ' ', 200000 - 8);
    s[200000] = '\0';
    yt_t t;
    yt_parse(&t, s, true);
    cr_assert_eq(t.rc, 0);
    cr_assert_eq(t.n, 1);
    yt_fini(&t);
    corral_free(s);
}
