/* The string hash map: put/get/replace/delete, growth, tombstone reuse. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>

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

/* The paper's SipHash-2-4 vectors: key 00..0f, messages 00..(n-1). */
Test(hmap, siphash_reference_vectors)
{
    uint64_t key[2] = {0x0706050403020100u, 0x0f0e0d0c0b0a0908u};
    unsigned char msg[16];
    for (int i = 0; i < 16; i++)
        msg[i] = (unsigned char)i;
    cr_assert_eq(corral_siphash(key, msg, 0, 2, 4), 0x726fdb47dd0e0e31u);
    cr_assert_eq(corral_siphash(key, msg, 15, 2, 4), 0xa129ca6149be45e5u);
    cr_assert_eq(corral_siphash(key, msg, 8, 2, 4), 0x93f5f5799a932462u);
}

/* Keys whose FNV-1a hashes agree in the low 20 bits (every table up to a
 * million slots puts them in one chain): FNV's low bits depend only on
 * low bits, and each step is invertible, so suffixes are run backwards to
 * the state a 4-character prefix must reach. */
#define COLL_BITS 20
static const char coll_alpha[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_";

static size_t colliding_keys(char (*keys)[8], size_t want)
{
    const uint32_t P = 16777619u, mask = (1u << COLL_BITS) - 1;
    uint32_t pinv = P; /* Newton: P * pinv = 1 mod 2^32 */
    for (int i = 0; i < 5; i++)
        pinv *= 2u - P * pinv;
    uint32_t *table = calloc((size_t)mask + 1, sizeof(uint32_t));
    for (uint32_t i = 0; i < (1u << 24); i++) {
        uint32_t h = 2166136261u;
        for (int j = 0; j < 4; j++)
            h = (h ^ (unsigned char)coll_alpha[(i >> (6 * j)) & 63]) * P;
        if (!table[h & mask])
            table[h & mask] = i + 1;
    }
    size_t n = 0;
    for (uint32_t sfx = 0; sfx < (1u << 18) && n < want; sfx++) {
        uint32_t s = 0; /* the target's low bits */
        for (int j = 2; j >= 0; j--)
            s = (s * pinv) ^ (unsigned char)coll_alpha[(sfx >> (6 * j)) & 63];
        uint32_t pre = table[s & mask];
        if (!pre--)
            continue;
        for (int j = 0; j < 4; j++)
            keys[n][j] = coll_alpha[(pre >> (6 * j)) & 63];
        for (int j = 0; j < 3; j++)
            keys[n][4 + j] = coll_alpha[(sfx >> (6 * j)) & 63];
        keys[n][7] = '\0';
        n++;
    }
    free(table);
    return n;
}

Test(hmap, fnv_colliding_keys_keep_short_chains)
{
    enum { N = 20000 };
    static char keys[N][8];
    cr_assert_eq(colliding_keys(keys, N), N);
    for (size_t i = 0; i < N; i++) /* they do collide under FNV-1a */
        cr_assert_eq(corral_hash_stable(keys[i], 7, 0) & ((1u << COLL_BITS) - 1), 0, "%s", keys[i]);
    corral_hmap_t m;
    corral_hmap_init(&m);
    for (uint32_t i = 0; i < N; i++)
        corral_hmap_put(&m, keys[i], i);
    cr_assert_eq(m.n, N);
    size_t worst = corral_hmap_max_probe(&m);
    cr_assert_lt(worst, 100, "longest probe %zu (FNV-1a: about %d)", worst, N);
    uint32_t v;
    for (uint32_t i = 0; i < N; i += 997)
        cr_assert(corral_hmap_get(&m, keys[i], &v) && v == i);
    corral_hmap_fini(&m);
}
