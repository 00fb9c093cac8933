/*
 * Quantity parsing and exact integer conversion. The grammar is Kubernetes':
 *   quantity ::= signedNumber suffix
 *   suffix   ::= binarySI (Ki Mi Gi Ti Pi Ei) | decimalSI (n u m "" k M G T P E)
 *              | decimalExponent (e|E signedNumber)
 *   number   ::= digits | digits.digits | digits. | .digits
 * Intermediate products use 128-bit integers, so every conversion is exact or
 * reports CORRAL_ERANGE.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "corral/common.h"
#include "corral/quantity.h"

typedef __int128 i128;

#define MANT_DIGITS 18

static void set_why(char *why, size_t n, const char *msg)
{
    if (why && n)
        snprintf(why, n, "%s", msg);
}

/* A suffix that is almost right ("GB", "gi", "MiB"): say what to write. */
static void suggest_suffix(const char *num, size_t numlen, const char *suf, char *why, size_t n)
{
    char c = suf[0];
    static const char letters[] = "kKmMgGtTpPeE";
    char number[CORRAL_QTY_MAX_LEN + 1];
    snprintf(number, sizeof(number), "%.*s", (int)numlen, num);
    if (!strchr(letters, c)) {
        if (why && n)
            snprintf(why, n,
                     "unknown unit suffix \"%s\"; use Ki Mi Gi Ti Pi Ei (powers of 2), "
                     "k M G T P E (powers of 10) or m (1/1000)",
                     suf);
        return;
    }
    char up = (char)toupper((unsigned char)c);
    char bin[CORRAL_QTY_MAX_LEN + 8], dec[CORRAL_QTY_MAX_LEN + 8];
    snprintf(bin, sizeof(bin), "%s%ci", number, up);
    snprintf(dec, sizeof(dec), "%s%c", number, up == 'K' ? 'k' : up);
    if (why && n)
        snprintf(why, n, "unknown unit suffix \"%s\"; did you mean `%s` or `%s`?", suf, bin, dec);
}

static int parse_suffix(const char *s, size_t len, corral_qty_t *q)
{
    static const struct {
        const char *s;
        int e10, e2;
    } tab[] = {{"", 0, 0},    {"n", -9, 0},  {"u", -6, 0},  {"m", -3, 0},
               {"k", 3, 0},   {"M", 6, 0},   {"G", 9, 0},   {"T", 12, 0},
               {"P", 15, 0},  {"E", 18, 0},  {"Ki", 0, 10}, {"Mi", 0, 20},
               {"Gi", 0, 30}, {"Ti", 0, 40}, {"Pi", 0, 50}, {"Ei", 0, 60}};
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(tab); i++) {
        if (strlen(tab[i].s) == len && memcmp(tab[i].s, s, len) == 0) {
            q->exp10 += tab[i].e10;
            q->exp2 += tab[i].e2;
            return 0;
        }
    }
    /* Decimal exponent: e|E followed by a signed integer. */
    if (len >= 2 && (s[0] == 'e' || s[0] == 'E')) {
        size_t i = 1;
        int sign = 1;
        if (s[i] == '+' || s[i] == '-')
            sign = s[i++] == '-' ? -1 : 1;
        if (i >= len)
            return CORRAL_EINVAL;
        long e = 0;
        for (; i < len; i++) {
            if (!isdigit((unsigned char)s[i]))
                return CORRAL_EINVAL;
            e = e * 10 + (s[i] - '0');
            if (e > 1000)
                return CORRAL_ERANGE;
        }
        q->exp10 += (int32_t)(sign * e);
        return 0;
    }
    return CORRAL_EINVAL;
}

int corral_qty_parse(const char *s, size_t len, corral_qty_t *q, char *why, size_t why_len)
{
    memset(q, 0, sizeof(*q));
    if (len == 0) {
        set_why(why, why_len, "empty quantity");
        return CORRAL_EINVAL;
    }
    if (len > CORRAL_QTY_MAX_LEN) {
        set_why(why, why_len, "quantity is longer than 64 characters");
        return CORRAL_EINVAL;
    }
    size_t i = 0;
    int sign = 1;
    if (s[i] == '+' || s[i] == '-')
        sign = s[i++] == '-' ? -1 : 1;
    int64_t mant = 0;
    int ndig = 0, frac = 0, exp_adj = 0;
    bool seen_digit = false, seen_dot = false;
    for (; i < len; i++) {
        char c = s[i];
        if (c == '.' && !seen_dot) {
            seen_dot = true;
            continue;
        }
        if (!isdigit((unsigned char)c))
            break;
        seen_digit = true;
        if (seen_dot)
            frac++;
        if (mant == 0 && c == '0')
            continue; /* leading zeros carry no precision */
        if (ndig < MANT_DIGITS) {
            mant = mant * 10 + (c - '0');
            ndig++;
        } else if (c == '0') {
            exp_adj++; /* trailing zero beyond our precision: exact as a power of ten */
        } else {
            set_why(why, why_len, "more than 18 significant digits");
            return CORRAL_ERANGE;
        }
    }
    if (!seen_digit) {
        if (why && why_len)
            snprintf(why, why_len,
                     "\"%.*s\" is not a quantity; expected a number such as 500m, 2 or 16Gi",
                     (int)len, s);
        return CORRAL_EINVAL;
    }
    q->mant = sign * mant;
    q->exp10 = exp_adj - frac;
    size_t numlen = i;
    int rc = parse_suffix(s + i, len - i, q);
    if (rc == CORRAL_ERANGE) {
        set_why(why, why_len, "exponent out of range");
        return rc;
    }
    if (rc != 0) {
        char suf[CORRAL_QTY_MAX_LEN + 1];
        snprintf(suf, sizeof(suf), "%.*s", (int)(len - i), s + i);
        suggest_suffix(s, numlen, suf, why, why_len);
        return CORRAL_EINVAL;
    }
    if (q->mant == 0)
        q->exp10 = 0, q->exp2 = 0;
    return 0;
}

int corral_qty_scaled(const corral_qty_t *q, int scale, int64_t *out)
{
    const i128 lim = INT64_MAX;
    i128 v = q->mant;
    if (v == 0) {
        *out = 0;
        return 0;
    }
    for (int32_t k = 0; k < q->exp2; k++) {
        v *= 2;
        if (v > lim * 1024 || v < -lim * 1024)
            return CORRAL_ERANGE;
    }
    int32_t e = q->exp10 + scale;
    for (; e > 0; e--) {
        v *= 10;
        if (v > lim || v < -lim)
            return CORRAL_ERANGE;
    }
    if (e < 0) {
        if (e < -36) {
            *out = v > 0 ? 1 : 0; /* a positive amount smaller than one unit rounds up */
            return 0;
        }
        i128 d = 1;
        for (; e < 0; e++)
            d *= 10;
        i128 quo = v / d;
        if (v % d != 0 && v > 0)
            quo++;
        v = quo;
    }
    if (v > lim || v < -lim)
        return CORRAL_ERANGE;
    *out = (int64_t)v;
    return 0;
}

bool corral_qty_is_integer(const corral_qty_t *q)
{
    if (q->mant == 0 || q->exp10 >= 0)
        return true;
    int64_t m = q->mant;
    for (int32_t e = q->exp10; e < 0; e++) {
        if (m % 10 != 0)
            return false;
        m /= 10;
    }
    return true;
}

int corral_qty_sign(const corral_qty_t *q)
{
    return q->mant > 0 ? 1 : q->mant < 0 ? -1 : 0;
}

int corral_qty_cmp(const corral_qty_t *a, const corral_qty_t *b)
{
    /* Exact when both convert at nano scale; resource quantities always do. */
    int64_t x, y;
    if (corral_qty_scaled(a, 9, &x) == 0 && corral_qty_scaled(b, 9, &y) == 0)
        return x < y ? -1 : x > y ? 1 : 0;
    if (corral_qty_scaled(a, 0, &x) == 0 && corral_qty_scaled(b, 0, &y) == 0)
        return x < y ? -1 : x > y ? 1 : 0;
    int sa = corral_qty_sign(a), sb = corral_qty_sign(b);
    if (sa != sb)
        return sa < sb ? -1 : 1;
    /* Both huge: compare decimal magnitude (log10 estimate). */
    double ma = (double)(a->exp10) + (double)a->exp2 * 0.30103;
    double mb = (double)(b->exp10) + (double)b->exp2 * 0.30103;
    return (ma < mb ? -1 : ma > mb ? 1 : 0) * sa;
}

corral_qty_t corral_qty_from_int(int64_t v)
{
    corral_qty_t q = {0, 0, 0};
    /* Keep |mant| < 10^18 by moving trailing zeros into the exponent. */
    while (v != 0 && (v >= 1000000000000000000LL || v <= -1000000000000000000LL) && v % 10 == 0) {
        v /= 10;
        q.exp10++;
    }
    q.mant = v;
    return q;
}

void corral_qty_format_bytes(int64_t bytes, char *out, size_t len)
{
    static const char *const suf[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
    int k = 0;
    int64_t v = bytes;
    while (k < 6 && v != 0 && v % 1024 == 0) {
        v /= 1024;
        k++;
    }
    snprintf(out, len, "%lld%s", (long long)v, suf[k]);
}

void corral_qty_format_milli(int64_t milli, char *out, size_t len)
{
    if (milli % 1000 == 0)
        snprintf(out, len, "%lld", (long long)(milli / 1000));
    else
        snprintf(out, len, "%lldm", (long long)milli);
}
