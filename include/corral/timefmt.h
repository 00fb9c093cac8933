/*
 * Time formats of the Kubernetes API and of Corral's own files:
 *  - RFC 3339 timestamps (metav1.Time "2024-05-01T12:00:00Z", MicroTime
 *    "2024-05-01T12:00:00.123456Z", any zone offset accepted on input),
 *  - Go-style durations ("45s", "90m", "1h30m", "1.5h", "300ms").
 * Times are int64 microseconds since the Unix epoch (UTC); durations are int64
 * nanoseconds, as Go's time.Duration.
 */
#ifndef CORRAL_TIMEFMT_H
#define CORRAL_TIMEFMT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CORRAL_NS_PER_SEC  INT64_C(1000000000)
#define CORRAL_NS_PER_MIN  (60 * CORRAL_NS_PER_SEC)
#define CORRAL_NS_PER_HOUR (60 * CORRAL_NS_PER_MIN)

/* Parse an RFC 3339 timestamp (len bytes) into microseconds since the epoch.
 * Fractions beyond microseconds are truncated. Returns 0 or CORRAL_EINVAL. */
int corral_time_parse(const char *s, size_t len, int64_t *unix_us);

/* Format as UTC "YYYY-MM-DDTHH:MM:SSZ", or with ".ffffffZ" when micro.
 * Sub-second parts truncate toward the past; times outside years 0000..9999
 * are clamped to them, so the output always parses again. out should hold
 * at least 32 bytes (longer output is cut, still NUL-terminated). */
void corral_time_format(int64_t unix_us, bool micro, char *out, size_t len);

/* Parse a Go duration: optional sign, then one or more <decimal><unit> with
 * unit one of ns us µs ms s m h ("0" alone is allowed). Returns 0,
 * CORRAL_EINVAL, or CORRAL_ERANGE past ~292 years. */
int corral_duration_parse(const char *s, size_t len, int64_t *ns);

/* Format like Go's Duration.String(): "1h30m0s", "45s", "1.5s", "300ms", "0s",
 * "1µs" (U+00B5). At most 26 bytes with the NUL; a smaller out is cut. */
void corral_duration_format(int64_t ns, char *out, size_t len);

#endif
