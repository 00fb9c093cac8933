/*
 * Kubernetes resource quantities ("500m", "16Gi", "1.5", "2e3", "100k"),
 * held exactly: a decimal mantissa times a power of ten times a power of two.
 * Nothing passes through floating point, so "0.1" + "0.2" cpu is exactly 300m.
 * Conversions to integers round up, as Kubernetes' Value()/MilliValue() do,
 * and fail with CORRAL_ERANGE instead of overflowing.
 */
#ifndef CORRAL_QUANTITY_H
#define CORRAL_QUANTITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CORRAL_QTY_MAX_LEN 64 /* longer strings are rejected before parsing */

typedef struct corral_qty {
    int64_t mant;  /* significant digits with sign; |mant| < 10^18 */
    int32_t exp10; /* value = mant * 10^exp10 * 2^exp2 */
    int32_t exp2;
} corral_qty_t;

/*
 * Parse s (len bytes). Returns 0, or CORRAL_EINVAL / CORRAL_ERANGE with a
 * one-line explanation in why (which may suggest the intended spelling, e.g.
 * "16GB" -> "did you mean 16Gi or 16G?"). why may be NULL.
 */
int corral_qty_parse(const char *s, size_t len, corral_qty_t *q, char *why, size_t why_len);

/* value * 10^scale, rounded up (toward +inf). scale 0 = Value(), 3 = MilliValue(). */
int corral_qty_scaled(const corral_qty_t *q, int scale, int64_t *out);
static inline int corral_qty_value(const corral_qty_t *q, int64_t *out)
{
    return corral_qty_scaled(q, 0, out);
}
static inline int corral_qty_milli(const corral_qty_t *q, int64_t *out)
{
    return corral_qty_scaled(q, 3, out);
}

/* Is the quantity an exact whole number (within int64)? */
bool corral_qty_is_integer(const corral_qty_t *q);
/* Sign: -1, 0 or 1. */
int corral_qty_sign(const corral_qty_t *q);
/* Compare exactly: <0, 0, >0. Quantities too large to compare exactly are
 * ordered by magnitude estimate. */
int corral_qty_cmp(const corral_qty_t *a, const corral_qty_t *b);
/* A quantity from an integer count. */
corral_qty_t corral_qty_from_int(int64_t v);
/* Format an integer amount the way kubectl prints it: bytes with the largest
 * exact binary suffix ("16Gi"), milli-values as "500m" or "2". */
void corral_qty_format_bytes(int64_t bytes, char *out, size_t len);
void corral_qty_format_milli(int64_t milli, char *out, size_t len);

#endif
