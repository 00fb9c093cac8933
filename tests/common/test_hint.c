/* Typo hints and diagnostics formatting. */
#include <criterion/criterion.h>
#include <string.h>

#include "corral/diag.h"
#include "corral/hint.h"

Test(hint, distance)
{
    cr_assert_eq(corral_hint_distance("minMember", "minMember"), 0);
    cr_assert_eq(corral_hint_distance("minMemeber", "minMember"), 1);
    cr_assert_eq(corral_hint_distance("mniMember", "minMember"), 1, "adjacent swap is one edit");
    cr_assert_eq(corral_hint_distance("", "abc"), 3);
}

Test(hint, closest)
{
    const char *f[] = {"minMember", "minResources", "queue", "priorityClassName"};
    cr_assert_str_eq(corral_hint_closest("minMemeber", f, 4), "minMember");
    cr_assert_str_eq(corral_hint_closest("min_member", f, 4), "minMember");
    cr_assert_str_eq(corral_hint_closest("Queue", f, 4), "queue");
    cr_assert_str_eq(corral_hint_closest("priorityclassname", f, 4), "priorityClassName");
    cr_assert_null(corral_hint_closest("replicas", f, 4));
    cr_assert_null(corral_hint_closest("q", f, 4));
}

Test(hint, colon_nospace)
{
    size_t k;
    cr_assert(corral_hint_colon_nospace("reclaimable:true", 16, &k));
    cr_assert_eq(k, 11);
    cr_assert(corral_hint_colon_nospace("nvidia.com/gpu:16", 17, &k));
    cr_assert_eq(k, 14);
    cr_assert_not(corral_hint_colon_nospace("http://x", 8, &k));
    cr_assert_not(corral_hint_colon_nospace("reclaimable: true", 17, &k));
    cr_assert_not(corral_hint_colon_nospace("8080:80", 7, &k));
    cr_assert_not(corral_hint_colon_nospace("plain", 5, &k));
}

Test(diag, format_and_sort)
{
    corral_diag_t d;
    corral_diag_init(&d);
    corral_diag_add(&d, CORRAL_SEV_ERROR, "a.yaml", 9, 2, "spec.x", "bad %d", 1);
    corral_diag_add(&d, CORRAL_SEV_WARNING, "a.yaml", 3, 1, NULL, "hm");
    corral_diag_add(&d, CORRAL_SEV_ERROR, "a.yaml", 0, 0, NULL, "whole file");
    corral_diag_sort(&d);
    corral_buf_t b;
    corral_buf_init(&b);
    corral_diag_format(&d.items[0], &b);
    cr_assert_str_eq(corral_buf_str(&b), "a.yaml: whole file");
    corral_buf_reset(&b);
    corral_diag_format(&d.items[1], &b);
    cr_assert_str_eq(corral_buf_str(&b), "a.yaml:3:1: warning: hm");
    corral_buf_reset(&b);
    corral_diag_format(&d.items[2], &b);
    cr_assert_str_eq(corral_buf_str(&b), "a.yaml:9:2: spec.x: bad 1");
    cr_assert_eq(d.errors, 2);
    cr_assert_eq(d.warnings, 1);
    corral_buf_fini(&b);
    corral_diag_fini(&d);
}
