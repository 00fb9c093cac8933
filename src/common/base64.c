/*
 * Base64 encoding and decoding (include/corral/base64.h): one table-driven
 * implementation for the three alphabets' uses.
 */
#include <stdint.h>

#include "corral/base64.h"
#include "corral/common.h"

static const char std_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
static const char url_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

void corral_base64_encode(const void *p, size_t n, unsigned flags, corral_buf_t *out)
{
    const unsigned char *s = p;
    const char *al = (flags & CORRAL_B64_URL) ? url_alphabet : std_alphabet;
    bool pad = !(flags & CORRAL_B64_URL);
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)s[i] << 16;
        if (i + 1 < n)
            v |= (uint32_t)s[i + 1] << 8;
        if (i + 2 < n)
            v |= s[i + 2];
        char q[4] = {al[(v >> 18) & 63], al[(v >> 12) & 63], '=', '='};
        size_t k = 2;
        if (i + 1 < n)
            q[k++] = al[(v >> 6) & 63];
        if (i + 2 < n)
            q[k++] = al[v & 63];
        corral_buf_append(out, q, pad ? 4 : k);
    }
}

/* The value of c in the alphabets flags allow, or -1. */
static int digit(unsigned char c, unsigned flags)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    bool url = flags & (CORRAL_B64_URL | CORRAL_B64_LAX);
    bool std = !(flags & CORRAL_B64_URL) || (flags & CORRAL_B64_LAX);
    if ((c == '+' && std) || (c == '-' && url))
        return 62;
    if ((c == '/' && std) || (c == '_' && url))
        return 63;
    return -1;
}

static bool ignored(unsigned char c, unsigned flags)
{
    if (c == '\r' || c == '\n')
        return !(flags & CORRAL_B64_URL) || (flags & CORRAL_B64_LAX);
    return (flags & CORRAL_B64_LAX) && (c == ' ' || c == '\t');
}

int corral_base64_decode(const char *s, size_t n, unsigned flags, corral_buf_t *out)
{
    uint32_t acc = 0;
    size_t digits = 0, pads = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (ignored(c, flags))
            continue;
        if (c == '=') {
            pads++;
            continue;
        }
        int v = digit(c, flags);
        if (v < 0 || pads)
            return CORRAL_EINVAL; /* a bad character, or data after padding */
        acc = (acc << 6) | (uint32_t)v;
        if (++digits % 4 == 0) {
            char b[3] = {(char)(acc >> 16), (char)(acc >> 8), (char)acc};
            if (out)
                corral_buf_append(out, b, 3);
            acc = 0;
        }
    }
    size_t rest = digits % 4;
    if (rest == 1)
        return CORRAL_EINVAL; /* six bits cannot make a byte */
    bool padded = !(flags & (CORRAL_B64_URL | CORRAL_B64_LAX));
    if (pads > 2 || (pads && pads != (4 - rest) % 4) || (padded && (digits + pads) % 4 != 0))
        return CORRAL_EINVAL;
    if (rest && out) {
        acc <<= 6 * (4 - rest);
        char b[2] = {(char)(acc >> 16), (char)(acc >> 8)};
        corral_buf_append(out, b, rest - 1);
    }
    return 0;
}
