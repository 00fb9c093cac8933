/* Time formats: RFC 3339 timestamps with civil-date checks, and Go durations
 * (cases taken from Go's own time package tests where they exist). */
#include <criterion/criterion.h>
#include <string.h>

#include "corral/common.h"
#include "corral/timefmt.h"

#define US INT64_C(1000000)

static int64_t tparse(const char *s)
{
    int64_t us = -1;
    cr_assert_eq(corral_time_parse(s, strlen(s), &us), 0, "%s", s);
    return us;
}

static int64_t dparse(const char *s)
{
    int64_t ns = -1;
    int rc = corral_duration_parse(s, strlen(s), &ns);
    cr_assert_eq(rc, 0, "%s: rc %d", s, rc);
    return ns;
}

static const char *dfmt(int64_t ns, char *out)
{
    corral_duration_format(ns, out, 32);
    return out;
}

Test(timefmt, parse_utc_seconds)
{
    cr_assert_eq(tparse("1970-01-01T00:00:00Z"), 0);
    cr_assert_eq(tparse("2024-05-01T12:00:00Z"), INT64_C(1714564800) * US);
    cr_assert_eq(tparse("2024-02-29T00:00:00Z"), INT64_C(1709164800) * US);
    cr_assert_eq(tparse("2000-02-29T23:59:59Z"), INT64_C(951868799) * US);
    cr_assert_eq(tparse("1969-12-31T23:59:59Z"), -1 * US);
    cr_assert_eq(tparse("1900-03-01T00:00:00Z"), INT64_C(-2203891200) * US);
    cr_assert_eq(tparse("1600-02-29T12:34:56Z"), INT64_C(-11670953104) * US);
    cr_assert_eq(tparse("0001-01-01T00:00:00Z"), INT64_C(-62135596800) * US);
    cr_assert_eq(tparse("0000-01-01T00:00:00Z"), INT64_C(-62167219200) * US);
    cr_assert_eq(tparse("9999-12-31T23:59:59Z"), INT64_C(253402300799) * US);
}

Test(timefmt, parse_separators_and_offsets)
{
    int64_t base = INT64_C(1714564800) * US;
    cr_assert_eq(tparse("2024-05-01t12:00:00Z"), base);
    cr_assert_eq(tparse("2024-05-01T12:00:00z"), base);
    cr_assert_eq(tparse("2024-05-01T14:00:00+02:00"), base);
    cr_assert_eq(tparse("2024-05-01T06:30:00-05:30"), base);
    cr_assert_eq(tparse("2024-05-01T12:00:00+00:00"), base);
    cr_assert_eq(tparse("2024-05-01T12:00:00-00:00"), base);
    /* The offset may cross a day, month and year boundary. */
    cr_assert_eq(tparse("2024-04-30T23:00:00-13:00"), base);
    cr_assert_eq(tparse("2025-01-01T00:30:00+01:00"), tparse("2024-12-31T23:30:00Z"));
    cr_assert_eq(tparse("2024-05-01T12:00:00+23:59"), base - (23 * 3600 + 59 * 60) * US);
}

Test(timefmt, parse_fractions)
{
    int64_t base = INT64_C(1714564800) * US;
    cr_assert_eq(tparse("2024-05-01T12:00:00.123456Z"), base + 123456);
    cr_assert_eq(tparse("2024-05-01T12:00:00.5Z"), base + 500000);
    cr_assert_eq(tparse("2024-05-01T12:00:00.000001Z"), base + 1);
    cr_assert_eq(tparse("2024-05-01T12:00:00.0Z"), base);
    /* Beyond microseconds: truncated, never rounded. */
    cr_assert_eq(tparse("2024-05-01T12:00:00.1234569Z"), base + 123456);
    cr_assert_eq(tparse("2024-05-01T12:00:00.999999999Z"), base + 999999);
    cr_assert_eq(tparse("2024-05-01T12:00:00.12345678901234567890123Z"), base + 123456);
    cr_assert_eq(tparse("2024-05-01T14:00:00.25+02:00"), base + 250000);
    cr_assert_eq(tparse("1969-12-31T23:59:59.5Z"), -500000);
}

Test(timefmt, parse_rejects_invalid_dates)
{
    const char *bad[] = {
        "2024-02-30T00:00:00Z",      "2023-02-29T00:00:00Z", "1900-02-29T00:00:00Z",
        "2024-04-31T00:00:00Z",      "2024-06-31T00:00:00Z", "2024-09-31T00:00:00Z",
        "2024-11-31T00:00:00Z",      "2024-01-32T00:00:00Z", "2024-00-10T00:00:00Z",
        "2024-13-01T00:00:00Z",      "2024-01-00T00:00:00Z", "2024-01-01T24:00:00Z",
        "2024-01-01T23:60:00Z",      "2024-01-01T23:59:60Z", "2024-01-01T00:00:00+24:00",
        "2024-01-01T00:00:00+01:60",
    };
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(bad); i++) {
        int64_t us;
        cr_assert_eq(corral_time_parse(bad[i], strlen(bad[i]), &us), CORRAL_EINVAL, "%s", bad[i]);
    }
    /* Leap days that do exist. */
    tparse("2000-02-29T00:00:00Z");
    tparse("1600-02-29T00:00:00Z");
    tparse("2024-12-31T23:59:59Z");
}

Test(timefmt, parse_rejects_bad_syntax)
{
    const char *bad[] = {
        "",
        "2024-05-01",
        "2024-05-01T12:00:00",
        "2024-05-01T12:00Z",
        "2024-05-01 12:00:00Z",
        "2024-05-01T12:00:00ZZ",
        "2024-05-01T12:00:00Z ",
        " 2024-05-01T12:00:00Z",
        "2024-05-01T12:00:00.Z",
        "2024-05-01T12:00:00,5Z",
        "2024-05-01T12:00:00+0200",
        "2024-05-01T12:00:00+02",
        "2024-05-01T12:00:00+2:00",
        "2024-05-01T12:00:00UTC",
        "24-05-01T12:00:00Z",
        "2024-5-01T12:00:00Z",
        "2024-05-1T12:00:00Z",
        "2024-05-01T1:00:00Z",
        "2024/05/01T12:00:00Z",
        "+2024-05-01T12:00:00Z",
        "2024-05-01T12:00:00.12a4Z",
        "2024-0x-01T12:00:00Z",
        "2024-05-01T12:00:00-",
        "2024-05-01T12:00:00+02:0",
    };
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(bad); i++) {
        int64_t us;
        cr_assert_eq(corral_time_parse(bad[i], strlen(bad[i]), &us), CORRAL_EINVAL, "%s", bad[i]);
    }
    int64_t us;
    cr_assert_eq(corral_time_parse(NULL, 0, &us), CORRAL_EINVAL);
    /* len bounds the input: a valid prefix alone is not enough. */
    cr_assert_eq(corral_time_parse("2024-05-01T12:00:00Zjunk", 20, &us), 0);
    cr_assert_eq(corral_time_parse("2024-05-01T12:00:00Z", 19, &us), CORRAL_EINVAL);
}

Test(timefmt, format)
{
    char out[32];
    corral_time_format(0, false, out, sizeof(out));
    cr_assert_str_eq(out, "1970-01-01T00:00:00Z");
    corral_time_format(INT64_C(1714564800) * US + 123456, false, out, sizeof(out));
    cr_assert_str_eq(out, "2024-05-01T12:00:00Z");
    corral_time_format(INT64_C(1714564800) * US + 123456, true, out, sizeof(out));
    cr_assert_str_eq(out, "2024-05-01T12:00:00.123456Z");
    corral_time_format(INT64_C(1714564800) * US, true, out, sizeof(out));
    cr_assert_str_eq(out, "2024-05-01T12:00:00.000000Z");
    corral_time_format(INT64_C(1709164800) * US, false, out, sizeof(out));
    cr_assert_str_eq(out, "2024-02-29T00:00:00Z");
    /* Before the epoch, sub-second parts still truncate toward the past. */
    corral_time_format(-1, true, out, sizeof(out));
    cr_assert_str_eq(out, "1969-12-31T23:59:59.999999Z");
    corral_time_format(-1, false, out, sizeof(out));
    cr_assert_str_eq(out, "1969-12-31T23:59:59Z");
    corral_time_format(INT64_C(-11670953104) * US, false, out, sizeof(out));
    cr_assert_str_eq(out, "1600-02-29T12:34:56Z");
}

Test(timefmt, format_clamps_and_truncates)
{
    char out[32];
    corral_time_format(INT64_MAX, true, out, sizeof(out));
    cr_assert_str_eq(out, "9999-12-31T23:59:59.999999Z");
    corral_time_format(INT64_MIN, false, out, sizeof(out));
    cr_assert_str_eq(out, "0000-01-01T00:00:00Z");
    char small[11];
    corral_time_format(0, false, small, sizeof(small));
    cr_assert_str_eq(small, "1970-01-01");
    corral_time_format(0, false, NULL, 0); /* no-op, no crash */
}

Test(timefmt, time_round_trip)
{
    const char *in[] = {"2024-05-01T12:00:00.123456Z", "1969-07-20T20:17:40.000001Z",
                        "0000-01-01T00:00:00.000000Z", "9999-12-31T23:59:59.999999Z",
                        "2100-02-28T01:02:03.040506Z"};
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(in); i++) {
        char out[32];
        corral_time_format(tparse(in[i]), true, out, sizeof(out));
        cr_assert_str_eq(out, in[i]);
    }
    /* Every day over four centuries survives days-from-civil and back. */
    int64_t start = tparse("1800-01-01T00:00:00Z");
    for (int64_t day = 0; day < 146097; day++) {
        int64_t us = start + day * 86400 * US + 3723 * US;
        char out[32];
        corral_time_format(us, false, out, sizeof(out));
        cr_assert_eq(tparse(out), us, "%s", out);
    }
}

Test(timefmt, duration_simple_and_sign)
{
    cr_assert_eq(dparse("0"), 0);
    cr_assert_eq(dparse("-0"), 0);
    cr_assert_eq(dparse("+0"), 0);
    cr_assert_eq(dparse("0s"), 0);
    cr_assert_eq(dparse("5s"), 5 * CORRAL_NS_PER_SEC);
    cr_assert_eq(dparse("30s"), 30 * CORRAL_NS_PER_SEC);
    cr_assert_eq(dparse("1478s"), 1478 * CORRAL_NS_PER_SEC);
    cr_assert_eq(dparse("-5s"), -5 * CORRAL_NS_PER_SEC);
    cr_assert_eq(dparse("+5s"), 5 * CORRAL_NS_PER_SEC);
    cr_assert_eq(dparse("45s"), 45 * CORRAL_NS_PER_SEC);
    cr_assert_eq(dparse("90m"), 90 * CORRAL_NS_PER_MIN);
}

Test(timefmt, duration_decimals)
{
    cr_assert_eq(dparse("5.0s"), 5 * CORRAL_NS_PER_SEC);
    cr_assert_eq(dparse("5.6s"), 5600000000);
    cr_assert_eq(dparse("5.s"), 5 * CORRAL_NS_PER_SEC);
    cr_assert_eq(dparse(".5s"), 500000000);
    cr_assert_eq(dparse("1.0s"), CORRAL_NS_PER_SEC);
    cr_assert_eq(dparse("1.00s"), CORRAL_NS_PER_SEC);
    cr_assert_eq(dparse("1.004s"), 1004000000);
    cr_assert_eq(dparse("1.0040s"), 1004000000);
    cr_assert_eq(dparse("100.00100s"), 100001000000);
    cr_assert_eq(dparse("1.5h"), 90 * CORRAL_NS_PER_MIN);
    /* More digits than a float64 holds: Go's exact results. */
    cr_assert_eq(dparse("0.3333333333333333333h"), 20 * CORRAL_NS_PER_MIN);
    cr_assert_eq(dparse("0.100000000000000000000h"), 6 * CORRAL_NS_PER_MIN);
    cr_assert_eq(dparse("0.830103483285477580700h"),
                 49 * CORRAL_NS_PER_MIN + 48 * CORRAL_NS_PER_SEC + 372539827);
}

Test(timefmt, duration_units)
{
    cr_assert_eq(dparse("10ns"), 10);
    cr_assert_eq(dparse("11us"), 11000);
    cr_assert_eq(dparse("12\xc2\xb5s"), 12000); /* U+00B5 micro sign */
    cr_assert_eq(dparse("12\xce\xbcs"), 12000); /* U+03BC Greek mu */
    cr_assert_eq(dparse("13ms"), 13000000);
    cr_assert_eq(dparse("14s"), 14 * CORRAL_NS_PER_SEC);
    cr_assert_eq(dparse("15m"), 15 * CORRAL_NS_PER_MIN);
    cr_assert_eq(dparse("16h"), 16 * CORRAL_NS_PER_HOUR);
}

Test(timefmt, duration_sequences)
{
    cr_assert_eq(dparse("3h30m"), 3 * CORRAL_NS_PER_HOUR + 30 * CORRAL_NS_PER_MIN);
    cr_assert_eq(dparse("1h30m"), 90 * CORRAL_NS_PER_MIN);
    cr_assert_eq(dparse("10.5s4m"), 4 * CORRAL_NS_PER_MIN + 10500000000);
    cr_assert_eq(dparse("-2m3.4s"), -(2 * CORRAL_NS_PER_MIN + 3400000000));
    cr_assert_eq(dparse("1h2m3s4ms5us6ns"),
                 CORRAL_NS_PER_HOUR + 2 * CORRAL_NS_PER_MIN + 3 * CORRAL_NS_PER_SEC + 4005006);
    cr_assert_eq(dparse("39h9m14.425s"),
                 39 * CORRAL_NS_PER_HOUR + 9 * CORRAL_NS_PER_MIN + 14425000000);
    cr_assert_eq(dparse("1s1s"), 2 * CORRAL_NS_PER_SEC); /* repeats add up, as in Go */
}

Test(timefmt, duration_limits)
{
    cr_assert_eq(dparse("52763797000ns"), 52763797000);
    cr_assert_eq(dparse("9007199254740993ns"), (INT64_C(1) << 53) + 1);
    cr_assert_eq(dparse("9223372036854775807ns"), INT64_MAX);
    cr_assert_eq(dparse("9223372036854775.807us"), INT64_MAX);
    cr_assert_eq(dparse("9223372036s854ms775us807ns"), INT64_MAX);
    cr_assert_eq(dparse("-9223372036854775808ns"), INT64_MIN);
    cr_assert_eq(dparse("-9223372036854775.808us"), INT64_MIN);
    cr_assert_eq(dparse("-9223372036s854ms775us808ns"), INT64_MIN);
    cr_assert_eq(dparse("-2562047h47m16.854775808s"), INT64_MIN);
    cr_assert_eq(dparse("2562047h47m16.854775807s"), INT64_MAX);
}

Test(timefmt, duration_overflow_is_erange)
{
    const char *big[] = {
        "9223372036854775810ns",
        "9223372036854775808ns",
        "-9223372036854775809ns",
        "9223372036854776us",
        "3000000h",
        "9223372036854775.808us",
        "9223372036854ms775us808ns",
        "2562048h",
        "99999999999999999999s",
        "2562047h47m16.854775808s",
        "1h9223372036854775807ns",
    };
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(big); i++) {
        int64_t ns;
        cr_assert_eq(corral_duration_parse(big[i], strlen(big[i]), &ns), CORRAL_ERANGE, "%s",
                     big[i]);
    }
}

Test(timefmt, duration_invalid)
{
    const char *bad[] = {
        "",
        "3",
        "-",
        "s",
        ".",
        "-.",
        ".s",
        "+.s",
        "1d",
        "\x85\x85",
        "\xff\x66\x66",
        "hello \xff\x66\x66 world",
        "\xef\xbf\xbd",
        "00",
        "1 s",
        " 1s",
        "1s ",
        "1S",
        "1H",
        "1sec",
        "1.5",
        "1h30",
        "--1s",
        "+-1s",
        "1..5s",
        "1.5.5s",
        "1e3s",
        "0x10s",
        "µs",
        "1\xc2s",
        "1\xb5s",
        "1u",
        "1m s",
    };
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(bad); i++) {
        int64_t ns;
        cr_assert_eq(corral_duration_parse(bad[i], strlen(bad[i]), &ns), CORRAL_EINVAL, "%s",
                     bad[i]);
    }
    int64_t ns;
    cr_assert_eq(corral_duration_parse(NULL, 0, &ns), CORRAL_EINVAL);
    cr_assert_eq(corral_duration_parse("5s", 1, &ns), CORRAL_EINVAL); /* "5": no unit */
    cr_assert_eq(corral_duration_parse("0s", 1, &ns), 0);             /* "0" */
}

Test(timefmt, duration_format_like_go)
{
    char out[32];
    cr_assert_str_eq(dfmt(0, out), "0s");
    cr_assert_str_eq(dfmt(1, out), "1ns");
    cr_assert_str_eq(dfmt(999, out), "999ns");
    cr_assert_str_eq(dfmt(1000, out), "1\xc2\xb5s");
    cr_assert_str_eq(dfmt(1100, out), "1.1\xc2\xb5s");
    cr_assert_str_eq(dfmt(2200000, out), "2.2ms");
    cr_assert_str_eq(dfmt(300000000, out), "300ms");
    cr_assert_str_eq(dfmt(3300000000, out), "3.3s");
    cr_assert_str_eq(dfmt(1500000000, out), "1.5s");
    cr_assert_str_eq(dfmt(45 * CORRAL_NS_PER_SEC, out), "45s");
    cr_assert_str_eq(dfmt(4 * CORRAL_NS_PER_MIN + 5 * CORRAL_NS_PER_SEC, out), "4m5s");
    cr_assert_str_eq(dfmt(4 * CORRAL_NS_PER_MIN + 5001000000, out), "4m5.001s");
    cr_assert_str_eq(dfmt(5 * CORRAL_NS_PER_HOUR + 6 * CORRAL_NS_PER_MIN + 7001000000, out),
                     "5h6m7.001s");
    cr_assert_str_eq(dfmt(8 * CORRAL_NS_PER_MIN + 1, out), "8m0.000000001s");
    cr_assert_str_eq(dfmt(90 * CORRAL_NS_PER_MIN, out), "1h30m0s");
    cr_assert_str_eq(dfmt(CORRAL_NS_PER_HOUR, out), "1h0m0s");
    cr_assert_str_eq(dfmt(CORRAL_NS_PER_MIN, out), "1m0s");
    cr_assert_str_eq(dfmt(-CORRAL_NS_PER_MIN, out), "-1m0s");
    cr_assert_str_eq(dfmt(-1, out), "-1ns");
    cr_assert_str_eq(dfmt(-1500000, out), "-1.5ms");
    cr_assert_str_eq(dfmt(100 * CORRAL_NS_PER_HOUR, out), "100h0m0s");
    cr_assert_str_eq(dfmt(INT64_MAX, out), "2562047h47m16.854775807s");
    cr_assert_str_eq(dfmt(INT64_MIN, out), "-2562047h47m16.854775808s");
}

Test(timefmt, duration_format_truncates_to_buffer)
{
    char small[4];
    corral_duration_format(90 * CORRAL_NS_PER_MIN, small, sizeof(small));
    cr_assert_str_eq(small, "1h3");
    corral_duration_format(0, small, 1);
    cr_assert_str_eq(small, "");
    corral_duration_format(5, NULL, 0); /* no-op, no crash */
}

Test(timefmt, duration_round_trip)
{
    const int64_t vals[] = {0,
                            1,
                            -1,
                            999,
                            1000,
                            1001,
                            999999,
                            1000000,
                            123456789,
                            CORRAL_NS_PER_SEC,
                            CORRAL_NS_PER_SEC + 1,
                            59 * CORRAL_NS_PER_SEC + 999999999,
                            CORRAL_NS_PER_HOUR - 1,
                            90 * CORRAL_NS_PER_MIN,
                            INT64_MAX,
                            INT64_MIN,
                            INT64_MIN + 1,
                            -CORRAL_NS_PER_HOUR};
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(vals); i++) {
        char out[32];
        cr_assert_eq(dparse(dfmt(vals[i], out)), vals[i], "%s", out);
    }
}
