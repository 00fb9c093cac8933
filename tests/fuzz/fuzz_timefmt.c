/* libFuzzer target: timestamp and duration parsing never crash; a parsed
 * duration formats (as Go's Duration.String) and parses back to the same
 * value, and a parsed timestamp formats and parses back to the same value
 * whenever it lies within years 0000..9999 UTC. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "corral/timefmt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_time(const char *s, size_t size)
{
    int64_t us, back;
    char out[32];
    if (corral_time_parse(s, size, &us) != 0)
        return;
    corral_time_format(us, true, out, sizeof(out));
    if (corral_time_parse(out, strlen(out), &back) != 0)
        abort();                                            /* what we write must always parse */
    const int64_t lo = INT64_C(-62167219200) * 1000000;     /* 0000-01-01T00:00:00Z */
    const int64_t hi = INT64_C(253402300800) * 1000000 - 1; /* 9999-12-31T23:59:59.999999Z */
    bool in_range = us >= lo && us <= hi;
    if ((in_range && back != us) || (!in_range && back != (us < lo ? lo : hi)))
        abort(); /* exact, or clamped to the nearest end */
    corral_time_format(us, false, out, sizeof(out));
    if (corral_time_parse(out, strlen(out), &back) != 0)
        abort();
    if (in_range && (back > us || us - back >= 1000000))
        abort(); /* whole seconds truncate toward the past */
}

static void check_duration(const char *s, size_t size)
{
    int64_t ns, back;
    char out[32];
    if (corral_duration_parse(s, size, &ns) != 0)
        return;
    corral_duration_format(ns, out, sizeof(out));
    if (corral_duration_parse(out, strlen(out), &back) != 0 || back != ns)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_time((const char *)data, size);
    check_duration((const char *)data, size);
    return 0;
}
