/* Selectors: Kubernetes' label and field selector grammar, label key and
 * value validation, matching semantics, and the messages people read. */
#include <criterion/criterion.h>
#include <string.h>

#include "corral/arena.h"
#include "corral/common.h"
#include "corral/selector.h"

static corral_arena_t arena;

static void setup(void)
{
    corral_arena_init(&arena);
}

static void teardown(void)
{
    corral_arena_fini(&arena);
}

TestSuite(selector, .init = setup, .fini = teardown);

static corral_selector_t lsel(const char *s)
{
    corral_selector_t sel;
    char why[256] = "";
    int rc = corral_labelsel_parse(&arena, s, strlen(s), &sel, why, sizeof(why));
    cr_assert_eq(rc, 0, "\"%s\": %s", s, why);
    return sel;
}

static corral_selector_t fsel(const char *s)
{
    corral_selector_t sel;
    char why[256] = "";
    int rc = corral_fieldsel_parse(&arena, s, strlen(s), &sel, why, sizeof(why));
    cr_assert_eq(rc, 0, "\"%s\": %s", s, why);
    return sel;
}

/* Expect a label selector error whose message contains want. */
static void lerr(const char *s, const char *want)
{
    corral_selector_t sel = {(corral_sel_req_t *)1, 99};
    char why[256] = "";
    int rc = corral_labelsel_parse(&arena, s, strlen(s), &sel, why, sizeof(why));
    cr_assert_eq(rc, CORRAL_EINVAL, "\"%s\" parsed", s);
    cr_assert(strstr(why, want), "\"%s\": got \"%s\", want \"%s\"", s, why, want);
    cr_assert_eq(sel.n, 0, "%s", s);
    cr_assert_null(sel.reqs, "%s", s);
}

static void ferr(const char *s, const char *want)
{
    corral_selector_t sel;
    char why[256] = "";
    int rc = corral_fieldsel_parse(&arena, s, strlen(s), &sel, why, sizeof(why));
    cr_assert_eq(rc, CORRAL_EINVAL, "\"%s\" parsed", s);
    cr_assert(strstr(why, want), "\"%s\": got \"%s\", want \"%s\"", s, why, want);
    cr_assert_eq(sel.n, 0, "%s", s);
}

static void assert_req(const corral_sel_req_t *r, const char *key, corral_sel_op_t op,
                       size_t nvalues)
{
    cr_assert_str_eq(r->key, key);
    cr_assert_eq(r->op, op, "%s: op %d", key, r->op);
    cr_assert_eq(r->nvalues, nvalues, "%s: %zu values", key, r->nvalues);
}

/* Labels given as "k1", "v1", "k2", "v2", ..., NULL. */
static corral_strmap_t labels(const char *kv[])
{
    corral_strmap_t m = {NULL, 0};
    size_t n = 0;
    while (kv[2 * n])
        n++;
    m.items = corral_arena_alloc(&arena, (n + 1) * sizeof(*m.items));
    for (size_t i = 0; i < n; i++) {
        m.items[i].key = kv[2 * i];
        m.items[i].value = kv[2 * i + 1];
    }
    m.n = n;
    return m;
}

static bool lmatch(const char *s, const corral_strmap_t *m)
{
    corral_selector_t sel = lsel(s);
    return corral_sel_matches_labels(&sel, m);
}

Test(selector, label_equality_forms)
{
    corral_selector_t s = lsel("a=b");
    cr_assert_eq(s.n, 1);
    assert_req(&s.reqs[0], "a", CORRAL_SEL_EQ, 1);
    cr_assert_str_eq(s.reqs[0].values[0], "b");
    s = lsel("a==b");
    assert_req(&s.reqs[0], "a", CORRAL_SEL_EQ, 1);
    cr_assert_str_eq(s.reqs[0].values[0], "b");
    s = lsel("a!=b");
    assert_req(&s.reqs[0], "a", CORRAL_SEL_NEQ, 1);
    cr_assert_str_eq(s.reqs[0].values[0], "b");
    s = lsel("  tier  ==  gpu-a100 ,\tzone\n!=\r\nus-1  ");
    cr_assert_eq(s.n, 2);
    assert_req(&s.reqs[0], "tier", CORRAL_SEL_EQ, 1);
    cr_assert_str_eq(s.reqs[0].values[0], "gpu-a100");
    assert_req(&s.reqs[1], "zone", CORRAL_SEL_NEQ, 1);
    cr_assert_str_eq(s.reqs[1].values[0], "us-1");
}

Test(selector, label_empty_values)
{
    corral_selector_t s = lsel("a=");
    assert_req(&s.reqs[0], "a", CORRAL_SEL_EQ, 1);
    cr_assert_str_eq(s.reqs[0].values[0], "");
    s = lsel("a!=,b");
    cr_assert_eq(s.n, 2);
    assert_req(&s.reqs[0], "a", CORRAL_SEL_NEQ, 1);
    cr_assert_str_eq(s.reqs[0].values[0], "");
    assert_req(&s.reqs[1], "b", CORRAL_SEL_EXISTS, 0);
    s = lsel("a== , b=c");
    cr_assert_str_eq(s.reqs[0].values[0], "");
}

Test(selector, label_set_forms)
{
    corral_selector_t s = lsel("env in (prod, staging,dev)");
    assert_req(&s.reqs[0], "env", CORRAL_SEL_IN, 3);
    /* A set, as Kubernetes' sets.String: sorted and without duplicates. */
    cr_assert_str_eq(s.reqs[0].values[0], "dev");
    cr_assert_str_eq(s.reqs[0].values[1], "prod");
    cr_assert_str_eq(s.reqs[0].values[2], "staging");
    s = lsel("env notin(x)");
    assert_req(&s.reqs[0], "env", CORRAL_SEL_NOTIN, 1);
    cr_assert_str_eq(s.reqs[0].values[0], "x");
    s = lsel("a in (b,b,a,b)");
    assert_req(&s.reqs[0], "a", CORRAL_SEL_IN, 2);
    cr_assert_str_eq(s.reqs[0].values[0], "a");
    cr_assert_str_eq(s.reqs[0].values[1], "b");
    s = lsel("a in (ab,a,abc)");
    cr_assert_str_eq(s.reqs[0].values[0], "a");
    cr_assert_str_eq(s.reqs[0].values[1], "ab");
    cr_assert_str_eq(s.reqs[0].values[2], "abc");
}

Test(selector, label_set_empty_entries_like_kubernetes)
{
    corral_selector_t s = lsel("a in (,)");
    assert_req(&s.reqs[0], "a", CORRAL_SEL_IN, 1);
    cr_assert_str_eq(s.reqs[0].values[0], "");
    s = lsel("a in (x,)");
    assert_req(&s.reqs[0], "a", CORRAL_SEL_IN, 2);
    cr_assert_str_eq(s.reqs[0].values[0], "");
    cr_assert_str_eq(s.reqs[0].values[1], "x");
    s = lsel("a in (,x)");
    assert_req(&s.reqs[0], "a", CORRAL_SEL_IN, 2);
    s = lsel("a notin (x,,y)");
    assert_req(&s.reqs[0], "a", CORRAL_SEL_NOTIN, 3);
}

Test(selector, label_exists_and_not_exists)
{
    corral_selector_t s = lsel("gpu");
    assert_req(&s.reqs[0], "gpu", CORRAL_SEL_EXISTS, 0);
    s = lsel("!gpu");
    assert_req(&s.reqs[0], "gpu", CORRAL_SEL_NOTEXISTS, 0);
    s = lsel("! gpu , x, !y");
    cr_assert_eq(s.n, 3);
    assert_req(&s.reqs[0], "gpu", CORRAL_SEL_NOTEXISTS, 0);
    assert_req(&s.reqs[1], "x", CORRAL_SEL_EXISTS, 0);
    assert_req(&s.reqs[2], "y", CORRAL_SEL_NOTEXISTS, 0);
}

Test(selector, label_gt_lt)
{
    corral_selector_t s = lsel("gpus>2, mem < 64");
    cr_assert_eq(s.n, 2);
    assert_req(&s.reqs[0], "gpus", CORRAL_SEL_GT, 1);
    cr_assert_str_eq(s.reqs[0].values[0], "2");
    assert_req(&s.reqs[1], "mem", CORRAL_SEL_LT, 1);
    lerr("gpus>two", "value \"two\" for '>' on label \"gpus\" must be an integer");
    lerr("gpus<", "must be an integer");
    lerr("gpus>99999999999999999999", "must be an integer");
}

Test(selector, keywords_are_identifiers_in_key_and_value_position)
{
    corral_selector_t s = lsel("in in (in, notin)");
    assert_req(&s.reqs[0], "in", CORRAL_SEL_IN, 2);
    cr_assert_str_eq(s.reqs[0].values[0], "in");
    cr_assert_str_eq(s.reqs[0].values[1], "notin");
    s = lsel("notin=in,!in");
    assert_req(&s.reqs[0], "notin", CORRAL_SEL_EQ, 1);
    cr_assert_str_eq(s.reqs[0].values[0], "in");
    assert_req(&s.reqs[1], "in", CORRAL_SEL_NOTEXISTS, 0);
    s = lsel("a notin (notin)");
    assert_req(&s.reqs[0], "a", CORRAL_SEL_NOTIN, 1);
    s = lsel("inx in (y)"); /* only whole words are keywords */
    assert_req(&s.reqs[0], "inx", CORRAL_SEL_IN, 1);
}

Test(selector, qualified_keys)
{
    corral_selector_t s = lsel("example.com/gpu-type=a100,kubernetes.io/hostname,a.b_c-D9=x");
    cr_assert_eq(s.n, 3);
    cr_assert_str_eq(s.reqs[0].key, "example.com/gpu-type");
    cr_assert_str_eq(s.reqs[1].key, "kubernetes.io/hostname");
    cr_assert_str_eq(s.reqs[2].key, "a.b_c-D9");
    lerr("Example.com/x", "prefix part a lowercase RFC 1123 subdomain");
    lerr("/x", "prefix part must be non-empty");
    lerr("a/b/c", "a qualified name must consist of");
    lerr("a/", "name part must be non-empty");
    lerr("-a=b", "name part must consist of alphanumeric characters");
    lerr("a_=b", "invalid label key \"a_\" at column 1");
}

Test(selector, empty_selector_matches_everything)
{
    const char *kv[] = {"a", "b", NULL};
    corral_strmap_t m = labels(kv);
    corral_strmap_t none = {NULL, 0};
    const char *empties[] = {"", " ", " \t\r\n "};
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(empties); i++) {
        corral_selector_t s = lsel(empties[i]);
        cr_assert_eq(s.n, 0);
        cr_assert(corral_sel_matches_labels(&s, &m));
        cr_assert(corral_sel_matches_labels(&s, &none));
    }
    cr_assert(corral_sel_matches_labels(NULL, &m));
    corral_selector_t s;
    cr_assert_eq(corral_labelsel_parse(&arena, NULL, 0, &s, NULL, 0), 0);
    cr_assert_eq(s.n, 0);
    cr_assert_eq(corral_fieldsel_parse(&arena, ", ,", 3, &s, NULL, 0), 0);
    cr_assert_eq(s.n, 0);
}

Test(selector, syntax_errors_say_where_and_what)
{
    lerr("a=)", "unexpected ')' at column 3; expected a value after '='");
    lerr("a==(", "unexpected '(' at column 4; expected a value after '=='");
    lerr("a!=!", "unexpected '!' at column 4; expected a value after '!='");
    lerr(",a", "unexpected ',' at column 1; expected a label key or '!'");
    lerr("a,", "unexpected end of selector; expected a label key or '!' after ','");
    lerr("a,,b", "unexpected ',' at column 3; expected a label key or '!' after ','");
    lerr("a b", "unexpected 'b' at column 3; expected an operator");
    lerr("a (b)", "unexpected '(' at column 3; expected an operator");
    lerr("a=b c", "unexpected 'c' at column 5; expected ',' or end of selector");
    lerr("a=b=c", "unexpected '=' at column 4; expected ',' or end of selector");
    lerr("a!==b", "unexpected '=' at column 4; expected a value after '!='");
    lerr("a in b", "unexpected 'b' at column 6; expected '(' after 'in'");
    lerr("a notin", "unexpected end of selector; expected '(' after 'notin'");
    lerr("a in (b", "unexpected end of selector; expected ',' or ')' in the value set");
    lerr("a in (b c)", "unexpected 'c' at column 9; expected ',' or ')'");
    lerr("a in (b,", "unexpected end of selector; expected a value or ','");
    lerr("a in (b,=)", "unexpected '=' at column 9; expected a value or ','");
    lerr("a in (b))", "unexpected ')' at column 9; expected ',' or end of selector");
    lerr("a in (b) c", "unexpected 'c' at column 10; expected ',' or end of selector");
    lerr("!", "unexpected end of selector; expected a label key after '!'");
    lerr("!!a", "unexpected '!' at column 2; expected a label key after '!'");
    lerr("!a=b", "unexpected '=' at column 3; expected ',' or end of selector");
    lerr("!a in (b)", "unexpected 'in' at column 4; expected ',' or end of selector");
    lerr("!=a", "unexpected '!=' at column 1; expected a label key or '!'");
    lerr("(a)", "unexpected '(' at column 1");
    lerr(")", "unexpected ')' at column 1");
    lerr("=", "unexpected '=' at column 1");
    lerr("a<=3", "unexpected '=' at column 3; expected a value after '<'");
    lerr("a>=3", "unexpected '=' at column 3; expected a value after '>'");
}

Test(selector, empty_set_is_an_error)
{
    lerr("a in ()", "empty value set '()' at column 6; 'in' needs at least one value");
    lerr("a notin ( )", "empty value set '()' at column 9; 'notin' needs at least one value");
}

Test(selector, invalid_keys_and_values_in_selectors)
{
    lerr("a=b!c", "unexpected '!' at column 4");
    lerr("a=-b", "invalid value \"-b\" for label \"a\" at column 3: a valid label must be an "
                 "empty string or consist of alphanumeric characters");
    lerr("a in (ok, b_)", "invalid value \"b_\" for label \"a\" at column 11");
    lerr("a=0123456789012345678901234567890123456789012345678901234567890123",
         "must be no more than 63 characters");
    lerr("0123456789012345678901234567890123456789012345678901234567890123",
         "name part must be no more than 63 characters");
    lerr("a.b/c$d", "invalid label key \"a.b/c$d\" at column 1: name part must consist");
    lerr("caf\xc3\xa9", "invalid label key \"caf\\xc3\\xa9\"");
    lerr("a=\x01", "invalid value \"\\x01\"");
    lerr("a=012345678901234567890123456789012345678901234567890123456789012345678901234567",
         "invalid value \"012345678901234567890123...\"");
}

Test(selector, nul_bytes_are_rejected)
{
    corral_selector_t s;
    char why[256];
    cr_assert_eq(corral_labelsel_parse(&arena, "a\0b=c", 5, &s, why, sizeof(why)), CORRAL_EINVAL);
    cr_assert(strstr(why, "\"a\\x00b\""), "%s", why);
    cr_assert_eq(corral_labelsel_parse(&arena, "a=b\0", 4, &s, why, sizeof(why)), CORRAL_EINVAL);
    cr_assert_eq(corral_fieldsel_parse(&arena, "a=b\0", 4, &s, why, sizeof(why)), CORRAL_EINVAL);
    cr_assert(strstr(why, "NUL byte at column 4"), "%s", why);
}

Test(selector, length_limit)
{
    size_t n = CORRAL_SEL_MAX_LEN + 1;
    char *big = corral_arena_alloc(&arena, n + 1);
    memset(big, 'a', n);
    corral_selector_t s;
    char why[128];
    cr_assert_eq(corral_labelsel_parse(&arena, big, n, &s, why, sizeof(why)), CORRAL_ETOOBIG);
    cr_assert(strstr(why, "at most 4096"), "%s", why);
    cr_assert_eq(corral_fieldsel_parse(&arena, big, n, &s, why, sizeof(why)), CORRAL_ETOOBIG);
    /* Exactly at the limit: parsed (and then rejected for the 63-byte name). */
    cr_assert_eq(corral_labelsel_parse(&arena, big, n - 1, &s, why, sizeof(why)), CORRAL_EINVAL);
    for (size_t i = 0; i + 1 < n; i += 4)
        memcpy(big + i, "a=b,", 4);
    big[n - 2] = 'c';
    cr_assert_eq(corral_labelsel_parse(&arena, big, n - 1, &s, why, sizeof(why)), 0, "%s", why);
    cr_assert_eq(s.n, CORRAL_SEL_MAX_LEN / 4);
}

Test(selector, null_why_and_bad_arguments)
{
    corral_selector_t s;
    cr_assert_eq(corral_labelsel_parse(&arena, "a=)", 3, &s, NULL, 0), CORRAL_EINVAL);
    cr_assert_eq(corral_fieldsel_parse(&arena, "a", 1, &s, NULL, 0), CORRAL_EINVAL);
    char tiny[8];
    cr_assert_eq(corral_labelsel_parse(&arena, "a=)", 3, &s, tiny, sizeof(tiny)), CORRAL_EINVAL);
    cr_assert_eq(strlen(tiny), 7);
    cr_assert_eq(corral_labelsel_parse(&arena, "a", 1, NULL, NULL, 0), CORRAL_EINVAL);
    cr_assert_eq(corral_labelsel_parse(NULL, "a", 1, &s, NULL, 0), CORRAL_EINVAL);
    cr_assert_eq(corral_labelsel_parse(&arena, NULL, 1, &s, NULL, 0), CORRAL_EINVAL);
}

Test(selector, matching_equality_and_sets)
{
    const char *kv[] = {"env", "prod", "tier", "gpu", "empty", "", NULL};
    corral_strmap_t m = labels(kv);
    cr_assert(lmatch("env=prod", &m));
    cr_assert(lmatch("env==prod,tier=gpu", &m));
    cr_assert_not(lmatch("env=dev", &m));
    cr_assert_not(lmatch("missing=x", &m));
    cr_assert_not(lmatch("missing=", &m)); /* = needs the key */
    cr_assert(lmatch("empty=", &m));
    cr_assert_not(lmatch("empty=x", &m));
    cr_assert(lmatch("env in (dev,prod)", &m));
    cr_assert_not(lmatch("env in (dev,test)", &m));
    cr_assert_not(lmatch("missing in (a,b)", &m));
    cr_assert(lmatch("empty in (x,)", &m));
    cr_assert_not(lmatch("env=prod,tier=cpu", &m)); /* all must hold */
}

Test(selector, matching_negations_accept_missing_keys)
{
    const char *kv[] = {"env", "prod", NULL};
    corral_strmap_t m = labels(kv);
    cr_assert(lmatch("env!=dev", &m));
    cr_assert_not(lmatch("env!=prod", &m));
    cr_assert(lmatch("missing!=x", &m));
    cr_assert(lmatch("missing!=", &m));
    cr_assert(lmatch("env notin (dev,test)", &m));
    cr_assert_not(lmatch("env notin (prod)", &m));
    cr_assert(lmatch("missing notin (a)", &m));
    cr_assert(lmatch("env", &m));
    cr_assert_not(lmatch("missing", &m));
    cr_assert(lmatch("!missing", &m));
    cr_assert_not(lmatch("!env", &m));
    corral_strmap_t none = {NULL, 0};
    cr_assert(lmatch("a!=b,c notin (d),!e", &none));
    cr_assert_not(lmatch("a", &none));
}

Test(selector, matching_gt_lt_integers_only)
{
    const char *kv[] = {"gpus", "8",  "neg",   "-3", "word", "eight", "big", "99999999999999999999",
                        "plus", "+4", "space", " 4", NULL};
    corral_strmap_t m = labels(kv);
    cr_assert(lmatch("gpus>4", &m));
    cr_assert_not(lmatch("gpus>8", &m));
    cr_assert(lmatch("gpus<9", &m));
    cr_assert_not(lmatch("gpus<8", &m));
    cr_assert(lmatch("neg<0", &m));
    cr_assert_not(lmatch("word>0", &m));
    cr_assert_not(lmatch("word<0", &m));
    cr_assert_not(lmatch("big>0", &m)); /* out of int64: not an integer */
    cr_assert(lmatch("plus>3", &m));    /* strconv.ParseInt takes a sign */
    cr_assert_not(lmatch("space>3", &m));
    cr_assert_not(lmatch("missing>0", &m));
    cr_assert_not(lmatch("missing<0", &m));
}

static const char *node_fields(const char *key, void *ctx)
{
    (void)ctx;
    if (strcmp(key, "metadata.name") == 0)
        return "node-1";
    if (strcmp(key, "spec.nodeName") == 0)
        return "";
    if (strcmp(key, "metadata.labels") == 0)
        return "a=b,c";
    return NULL;
}

Test(selector, structured_requirements_match)
{
    /* What the object model decodes from matchExpressions / node affinity. */
    const char *vals[] = {"a", "b"};
    const char *ten[] = {"10"};
    const char *junk[] = {"x"};
    corral_sel_req_t reqs[] = {
        {"k", CORRAL_SEL_IN, vals, 2}, {"n", CORRAL_SEL_GT, ten, 1},
        {"n", CORRAL_SEL_LT, ten, 1},  {"n", CORRAL_SEL_GT, junk, 1},
        {"n", CORRAL_SEL_GT, vals, 2}, {"k", (corral_sel_op_t)99, vals, 2},
    };
    const char *kv[] = {"k", "b", "n", "11", NULL};
    corral_strmap_t m = labels(kv);
    bool want[] = {true, true, false, false, false, false};
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(reqs); i++) {
        corral_selector_t s = {&reqs[i], 1};
        cr_assert_eq(corral_sel_matches_labels(&s, &m), want[i], "req %zu", i);
    }
}

Test(selector, field_selectors)
{
    corral_selector_t s = fsel("metadata.name=node-1,spec.nodeName!=,status.phase==Running");
    cr_assert_eq(s.n, 3);
    assert_req(&s.reqs[0], "metadata.name", CORRAL_SEL_EQ, 1);
    cr_assert_str_eq(s.reqs[0].values[0], "node-1");
    assert_req(&s.reqs[1], "spec.nodeName", CORRAL_SEL_NEQ, 1);
    cr_assert_str_eq(s.reqs[1].values[0], "");
    assert_req(&s.reqs[2], "status.phase", CORRAL_SEL_EQ, 1);
    cr_assert_str_eq(s.reqs[2].values[0], "Running");
    s = fsel(" metadata.name = x y ,, spec.nodeName=");
    cr_assert_eq(s.n, 2);
    cr_assert_str_eq(s.reqs[0].key, "metadata.name");
    cr_assert_str_eq(s.reqs[0].values[0], "x y");
    cr_assert_str_eq(s.reqs[1].values[0], "");
    /* Values are free-form: no label value rules apply. */
    s = fsel("metadata.name=Has Spaces_and!bangs()");
    cr_assert_str_eq(s.reqs[0].values[0], "Has Spaces_and!bangs()");
}

Test(selector, field_selector_escapes)
{
    corral_selector_t s = fsel("metadata.labels=a\\=b\\,c,spec.x=back\\\\slash");
    cr_assert_eq(s.n, 2);
    cr_assert_str_eq(s.reqs[0].values[0], "a=b,c");
    cr_assert_str_eq(s.reqs[1].values[0], "back\\slash");
    s = fsel("a=\\\\,b=c"); /* an escaped backslash does not escape the comma */
    cr_assert_eq(s.n, 2);
    cr_assert_str_eq(s.reqs[0].values[0], "\\");
    cr_assert(corral_sel_matches(&s, node_fields, NULL) == false);
    s = fsel("metadata.labels=a\\=b\\,c");
    cr_assert(corral_sel_matches(&s, node_fields, NULL));
}

Test(selector, field_selector_errors)
{
    ferr("metadata.name", "term \"metadata.name\" at column 1 has no operator; write field=value");
    ferr("a=b,c", "term \"c\" at column 5 has no operator");
    ferr("=x", "missing field path before '=' at column 1");
    ferr(" !=x", "missing field path before '!=' at column 2");
    ferr("a=b=c", "unescaped '=' at column 4 in a value; write '\\=' for a literal '='");
    ferr("a==b=c", "unescaped '=' at column 5");
    ferr("a=!=b", "unescaped '=' at column 4");
    ferr("a=b\\", "dangling '\\' at column 4");
    ferr("a=b\\x", "invalid escape '\\x' at column 4; only '\\\\', '\\,' and '\\=' are allowed");
    ferr("a=b\\\x01", "invalid escape '\\\\x01' at column 4");
    ferr("a b=c", "invalid field path \"a b\" at column 1; use dot-separated names");
    ferr("a..b=c", "invalid field path \"a..b\"");
    ferr(".a=c", "invalid field path \".a\"");
    ferr("a.=c", "invalid field path \"a.\"");
    ferr("a!b=c", "invalid field path \"a!b\"");
    ferr("a<3", "has no operator");
    ferr("a in (b)", "has no operator");
}

Test(selector, field_selector_matching)
{
    cr_assert(corral_sel_matches(&(corral_selector_t){0}, node_fields, NULL));
    corral_selector_t s = fsel("metadata.name=node-1");
    cr_assert(corral_sel_matches(&s, node_fields, NULL));
    s = fsel("metadata.name!=node-1");
    cr_assert_not(corral_sel_matches(&s, node_fields, NULL));
    s = fsel("metadata.name!=node-2,spec.nodeName=");
    cr_assert(corral_sel_matches(&s, node_fields, NULL));
    s = fsel("spec.nodeName!=");
    cr_assert_not(corral_sel_matches(&s, node_fields, NULL));
    s = fsel("spec.other=x");
    cr_assert_not(corral_sel_matches(&s, node_fields, NULL));
}

Test(selector, label_key_validation)
{
    const char *good[] = {
        "a",        "A",
        "0",        "a.b",
        "a-b_c.D",  "example.com/a",
        "k8s.io/x", "a-b.c-d/e",
        "1.2.3/x",  "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789a"};
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(good); i++)
        cr_assert_null(corral_label_key_error(good[i]), "%s", good[i]);
    struct {
        const char *key, *msg;
    } bad[] = {
        {"", "name part must be non-empty"},
        {NULL, "name part must be non-empty"},
        {"-a", "name part must consist of alphanumeric characters, '-', '_' or '.', and must "
               "start and end with an alphanumeric character"},
        {"a-", "name part must consist"},
        {"a b", "name part must consist"},
        {"a=b", "name part must consist"},
        {"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789ab",
         "name part must be no more than 63 characters"},
        {"/a", "prefix part must be non-empty"},
        {"a/", "name part must be non-empty"},
        {"A.com/a", "prefix part a lowercase RFC 1123 subdomain must consist of lower case "
                    "alphanumeric characters, '-' or '.', and must start and end with an "
                    "alphanumeric character"},
        {"a..b/c", "prefix part a lowercase RFC 1123"},
        {"-a.b/c", "prefix part a lowercase RFC 1123"},
        {"a-.b/c", "prefix part a lowercase RFC 1123"},
        {"a_b/c", "prefix part a lowercase RFC 1123"},
        {".a/c", "prefix part a lowercase RFC 1123"},
        {"a./c", "prefix part a lowercase RFC 1123"},
        {"a/b/c", "a qualified name must consist of alphanumeric characters"},
    };
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(bad); i++) {
        const char *err = corral_label_key_error(bad[i].key);
        cr_assert_not_null(err, "%s", bad[i].key);
        cr_assert(strstr(err, bad[i].msg), "%s: %s", bad[i].key, err);
    }
    /* The prefix may be up to 253 characters. */
    char key[300];
    memset(key, 'a', sizeof(key));
    memcpy(key + 253, "/x", 3);
    cr_assert_null(corral_label_key_error(key));
    memset(key, 'a', sizeof(key));
    memcpy(key + 254, "/x", 3);
    cr_assert_str_eq(corral_label_key_error(key),
                     "prefix part must be no more than 253 characters");
}

Test(selector, label_value_validation)
{
    const char *good[] = {"", "a", "Z9", "a.b-c_d",
                          ("0123456789012345678901234567890123456789"
                           "01234567890123456789012")};
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(good); i++)
        cr_assert_null(corral_label_value_error(good[i]), "%s", good[i]);
    cr_assert_null(corral_label_value_error(NULL));
    const char *bad[] = {"-a", "a-", "_a", "a.", "a b", "a/b", "a=b", "\xc3\xa9"};
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(bad); i++)
        cr_assert_str_eq(corral_label_value_error(bad[i]),
                         "a valid label must be an empty string or consist of alphanumeric "
                         "characters, '-', '_' or '.', and must start and end with an "
                         "alphanumeric character",
                         "%s", bad[i]);
    cr_assert_str_eq(corral_label_value_error(
                         "0123456789012345678901234567890123456789012345678901234567890123"),
                     "must be no more than 63 characters");
}
