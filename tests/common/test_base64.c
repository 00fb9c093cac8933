/* Base64: RFC 4648 test vectors in both alphabets, and the decoding rules
 * of Go's StdEncoding (padding required, CR/LF ignored) kube applies to
 * Secret data. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "corral/base64.h"
#include "corral/common.h"

static const char *enc(const char *s, unsigned flags)
{
    static char out[256];
    corral_buf_t b;
    corral_buf_init(&b);
    corral_base64_encode(s, strlen(s), flags, &b);
    snprintf(out, sizeof(out), "%s", corral_buf_str(&b));
    corral_buf_fini(&b);
    return out;
}

static int dec(const char *s, unsigned flags, char *out, size_t cap)
{
    corral_buf_t b;
    corral_buf_init(&b);
    int rc = corral_base64_decode(s, strlen(s), flags, &b);
    snprintf(out, cap, "%s", corral_buf_str(&b));
    corral_buf_fini(&b);
    return rc;
}

Test(base64, rfc4648_vectors)
{
    static const char *const plain[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
    static const char *const std[] = {"",         "Zg==",     "Zm8=",    "Zm9v",
                                      "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
    static const char *const url[] = {"", "Zg", "Zm8", "Zm9v", "Zm9vYg", "Zm9vYmE", "Zm9vYmFy"};
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(plain); i++) {
        char out[64];
        cr_assert_str_eq(enc(plain[i], CORRAL_B64_STD), std[i]);
        cr_assert_str_eq(enc(plain[i], CORRAL_B64_URL), url[i]);
        cr_assert_eq(dec(std[i], CORRAL_B64_STD, out, sizeof(out)), 0, "%s", std[i]);
        cr_assert_str_eq(out, plain[i]);
        cr_assert_eq(dec(url[i], CORRAL_B64_URL, out, sizeof(out)), 0, "%s", url[i]);
        cr_assert_str_eq(out, plain[i]);
        cr_assert_eq(dec(std[i], CORRAL_B64_URL, out, sizeof(out)), 0, "padding is accepted");
        cr_assert_str_eq(out, plain[i]);
    }
    cr_assert_str_eq(enc("\xfb\xff", CORRAL_B64_STD), "+/8=");
    cr_assert_str_eq(enc("\xfb\xff", CORRAL_B64_URL), "-_8");
}

Test(base64, standard_decoding_is_strict)
{
    char out[64];
    static const char *const bad[] = {
        "Zg", "Zg=", "Zm9v=", "Z===", "Zg==Zg==", "Zm9 v", "-_8=", "Zg=a", "a", "Zm9vY"};
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(bad); i++)
        cr_assert_eq(dec(bad[i], CORRAL_B64_STD, out, sizeof(out)), CORRAL_EINVAL, "%s", bad[i]);
    cr_assert_eq(dec("Zm9v\r\nYmFy", CORRAL_B64_STD, out, sizeof(out)), 0, "CR LF ignored");
    cr_assert_str_eq(out, "foobar");
    cr_assert_eq(dec("+/8=", CORRAL_B64_URL, out, sizeof(out)), CORRAL_EINVAL);
}

Test(base64, lax_takes_either_alphabet_and_blanks)
{
    char out[64];
    cr_assert_eq(dec(" Zm9v\n YmE ", CORRAL_B64_LAX, out, sizeof(out)), 0);
    cr_assert_str_eq(out, "fooba");
    cr_assert_eq(dec("-_8=", CORRAL_B64_LAX, out, sizeof(out)), 0);
    cr_assert_eq(dec("+/8", CORRAL_B64_LAX, out, sizeof(out)), 0);
    cr_assert_eq(dec("Zm9v!", CORRAL_B64_LAX, out, sizeof(out)), CORRAL_EINVAL);
}

Test(base64, only_checking)
{
    cr_assert_eq(corral_base64_decode("Zm9v", 4, CORRAL_B64_STD, NULL), 0);
    cr_assert_eq(corral_base64_decode("Zm9", 3, CORRAL_B64_STD, NULL), CORRAL_EINVAL);
}
