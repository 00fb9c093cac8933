/*
 * Base64 (RFC 4648): the standard alphabet, padded, as Go's StdEncoding
 * (Secret data, []byte fields in JSON), and the URL-safe alphabet without
 * padding (continue tokens, JWTs).
 */
#ifndef CORRAL_BASE64_H
#define CORRAL_BASE64_H

#include <stddef.h>

#include "corral/buf.h"

#define CORRAL_B64_STD 0u /* + and /, padded to a multiple of 4 */
#define CORRAL_B64_URL 1u /* - and _, unpadded (padding accepted when decoding) */
#define CORRAL_B64_LAX 2u /* decoding only: either alphabet, blanks ignored, padding optional */

/* Append the encoding of p[0..n) to out. */
void corral_base64_encode(const void *p, size_t n, unsigned flags, corral_buf_t *out);

/* Decode s[0..n) and append the bytes to out (NULL: only check). Standard
 * decoding is Go's StdEncoding: padding required, CR and LF ignored.
 * Returns 0, or CORRAL_EINVAL when s is not valid base64 (out then holds
 * an unspecified prefix). */
int corral_base64_decode(const char *s, size_t n, unsigned flags, corral_buf_t *out);

#endif
