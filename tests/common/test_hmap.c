/* The string hash map: put/get/replace/delete, growth, tombstone reuse. */
#include <criterion/criterion.h>
#include <stdio.h>

#include "corral/common.h"
#include "corral/hmap.h"

Test(hmap, put_get_replace_delete)
{
    corral_hmap_t m;
    corral_hmap_init(&m);
    uint32_t v;
    cr_assert_not(corral_hmap_get(&m, "a", &v));
    corral_hmap_put(&m, "a", 1);
    corral_hmap_put(&m, "b", 2);
    corral_hmap_put(&m, "a", 3);
    cr_assert(corral_hmap_get(&m, "a", &v));
    cr_assert_eq(v, 3);
    cr_assert_eq(m.n, 2);
    cr_assert(corral_hmap_del(&m, "a"));
    cr_assert_not(corral_hmap_get(&m, "a", &v));
    cr_assert_not(corral_hmap_del(&m, "a"));
    cr_assert(corral_hmap_get(&m, "b", &v));
    corral_hmap_fini(&m);
}

Test(hmap, many_keys_and_churn)
{
    enum { N = 20000 };
    static char keys[N][16];
    corral_hmap_t m;
    corral_hmap_init(&m);
    for (int i = 0; i < N; i++) {
        snprintf(keys[i], sizeof(keys[i]), "k%d", i);
        corral_hmap_put(&m, keys[i], (uint32_t)i);
    }
    for (int i = 0; i < N; i += 2)
        cr_assert(corral_hmap_del(&m, keys[i]));
    for (int i = 0; i < N; i += 2)
        corral_hmap_put(&m, keys[i], (uint32_t)(i + 1)); /* reuses tombstones */
    for (int i = 0; i < N; i++) {
        uint32_t v;
        cr_assert(corral_hmap_get(&m, keys[i], &v), "%s", keys[i]);
        cr_assert_eq(v, (uint32_t)(i % 2 ? i : i + 1));
    }
    cr_assert_eq(m.n, N);
    corral_hmap_fini(&m);
}
