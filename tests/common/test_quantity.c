/* Quantities: Kubernetes' grammar, exact conversions, overflow, hints. */
#include <criterion/criterion.h>
#include <string.h>

#include "corral/common.h"
#include "corral/quantity.h"

static int64_t scaled(const char *s, int scale)
{
    corral_qty_t q;
    char why[128];
    cr_assert_eq(corral_qty_parse(s, strlen(s), &q, why, sizeof(why)), 0, "%s: %s", s, why);
    int64_t v = -1;
    cr_assert_eq(corral_qty_scaled(&q, scale, &v), 0, "%s", s);
    return v;
}

Test(quantity, decimal_and_binary_suffixes)
{
    cr_assert_eq(scaled("500m", 3), 500);
    cr_assert_eq(scaled("1.5", 3), 1500);
    cr_assert_eq(scaled("2e3", 0), 2000);
    cr_assert_eq(scaled("100k", 0), 100000);
    cr_assert_eq(scaled("16Gi", 0), INT64_C(16) << 30);
    cr_assert_eq(scaled("1Ki", 0), 1024);
    cr_assert_eq(scaled("1M", 0), 1000000);
    cr_assert_eq(scaled("0.1", 3), 100);
    cr_assert_eq(scaled(".5", 3), 500);
    cr_assert_eq(scaled("5.", 0), 5);
    cr_assert_eq(scaled("+7", 0), 7);
    cr_assert_eq(scaled("-2", 0), -2);
    cr_assert_eq(scaled("1E2", 0), 100);
    cr_assert_eq(scaled("12e-1", 3), 1200);
    cr_assert_eq(scaled("250n", 9), 250);
    cr_assert_eq(scaled("3u", 6), 3);
    cr_assert_eq(scaled("0", 0), 0);
    cr_assert_eq(scaled("000016", 0), 16);
}

Test(quantity, value_rounds_up_like_kubernetes)
{
    cr_assert_eq(scaled("100m", 0), 1); /* Value() of 0.1 is 1 */
    cr_assert_eq(scaled("1001m", 0), 2);
    cr_assert_eq(scaled("0.5", 0), 1);
    cr_assert_eq(scaled("1n", 3), 1);
    cr_assert_eq(scaled("-1500m", 0), -1); /* ceiling toward +inf */
}

Test(quantity, exact_decimal_arithmetic)
{
    /* 0.1 + 0.2 must be exactly 300m, which floating point would not give. */
    cr_assert_eq(scaled("0.1", 3) + scaled("0.2", 3), 300);
    cr_assert_eq(scaled("123456789012345678", 0), INT64_C(123456789012345678));
    cr_assert_eq(scaled("1230000000000000000000m", 0), INT64_C(1230000000000000000));
}

Test(quantity, overflow_is_an_error)
{
    corral_qty_t q;
    int64_t v;
    cr_assert_eq(corral_qty_parse("100Ei", 5, &q, NULL, 0), 0);
    cr_assert_eq(corral_qty_scaled(&q, 0, &v), CORRAL_ERANGE);
    cr_assert_eq(corral_qty_parse("1e19", 4, &q, NULL, 0), 0);
    cr_assert_eq(corral_qty_scaled(&q, 0, &v), CORRAL_ERANGE);
    cr_assert_eq(corral_qty_parse("8e18", 4, &q, NULL, 0), 0);
    cr_assert_eq(corral_qty_scaled(&q, 0, &v), 0);
    cr_assert_eq(corral_qty_scaled(&q, 3, &v), CORRAL_ERANGE);
    cr_assert_eq(corral_qty_parse("1e1001", 6, &q, NULL, 0), CORRAL_ERANGE);
    cr_assert_eq(corral_qty_parse("1234567890123456789", 19, &q, NULL, 0), CORRAL_ERANGE);
}

Test(quantity, invalid_strings)
{
    const char *bad[] = {"",   "abc", "1.2.3", "--1", "1 Gi", "Gi", "1Gib",
                         "1e", "1e+", ".",     "1ki", "0x10", "1,5"};
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(bad); i++) {
        corral_qty_t q;
        cr_assert_neq(corral_qty_parse(bad[i], strlen(bad[i]), &q, NULL, 0), 0, "%s", bad[i]);
    }
}

Test(quantity, suffix_typo_suggestions)
{
    corral_qty_t q;
    char why[256];
    cr_assert_eq(corral_qty_parse("16GB", 4, &q, why, sizeof(why)), CORRAL_EINVAL);
    cr_assert(strstr(why, "`16Gi`") && strstr(why, "`16G`"), "%s", why);
    cr_assert_eq(corral_qty_parse("512MiB", 6, &q, why, sizeof(why)), CORRAL_EINVAL);
    cr_assert(strstr(why, "`512Mi`"), "%s", why);
    cr_assert_eq(corral_qty_parse("1kb", 3, &q, why, sizeof(why)), CORRAL_EINVAL);
    cr_assert(strstr(why, "`1Ki`") && strstr(why, "`1k`"), "%s", why);
}

Test(quantity, integer_and_compare)
{
    corral_qty_t a, b;
    cr_assert_eq(corral_qty_parse("0.5", 3, &a, NULL, 0), 0);
    cr_assert_not(corral_qty_is_integer(&a));
    cr_assert_eq(corral_qty_parse("2.0", 3, &b, NULL, 0), 0);
    cr_assert(corral_qty_is_integer(&b));
    cr_assert_lt(corral_qty_cmp(&a, &b), 0);
    cr_assert_eq(corral_qty_parse("2000m", 5, &a, NULL, 0), 0);
    cr_assert_eq(corral_qty_cmp(&a, &b), 0);
    cr_assert_eq(corral_qty_parse("1Ki", 3, &a, NULL, 0), 0);
    cr_assert_eq(corral_qty_parse("1k", 2, &b, NULL, 0), 0);
    cr_assert_gt(corral_qty_cmp(&a, &b), 0);
}

Test(quantity, formatting)
{
    char out[32];
    corral_qty_format_bytes(INT64_C(16) << 30, out, sizeof(out));
    cr_assert_str_eq(out, "16Gi");
    corral_qty_format_bytes(1500, out, sizeof(out));
    cr_assert_str_eq(out, "1500");
    corral_qty_format_milli(500, out, sizeof(out));
    cr_assert_str_eq(out, "500m");
    corral_qty_format_milli(4000, out, sizeof(out));
    cr_assert_str_eq(out, "4");
}
