/*
 * RFC 3339 timestamps and Go durations, as the Kubernetes API writes them.
 * Civil dates are converted with Howard Hinnant's days-from-civil algorithm
 * instead of libc's mktime/gmtime family, so results never depend on TZ,
 * locale or the range of time_t. Duration parsing follows Go's
 * time.ParseDuration step by step (including its float64 rounding of
 * fractions) and formatting follows Duration.String(), so values written by
 * Kubernetes tools read back bit for bit and ours read back in Go.
 */
#include <stdio.h>
#include <string.h>

#include "corral/common.h"
#include "corral/timefmt.h"

#define US_PER_SEC  INT64_C(1000000)
#define SEC_PER_DAY INT64_C(86400)
#define U63         (UINT64_C(1) << 63)

/* Days since 1970-01-01 of the proleptic Gregorian date y-m-d. */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

/* Inverse of days_from_civil. */
static void civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    unsigned doe = (unsigned)(z - era * 146097);
    unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    unsigned mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = (int64_t)yoe + era * 400 + (*m <= 2);
}

static unsigned days_in_month(int64_t y, unsigned m)
{
    static const unsigned char mdays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return m == 2 && leap ? 29 : mdays[m - 1];
}

/* Read exactly n decimal digits at s[*i]; false when any is not a digit. */
static bool fixed_digits(const char *s, size_t len, size_t *i, int n, unsigned *out)
{
    unsigned v = 0;
    if (len - *i < (size_t)n)
        return false;
    for (int k = 0; k < n; k++) {
        char c = s[*i + (size_t)k];
        if (c < '0' || c > '9')
            return false;
        v = v * 10 + (unsigned)(c - '0');
    }
    *i += (size_t)n;
    *out = v;
    return true;
}

static bool expect_char(const char *s, size_t len, size_t *i, char c1, char c2)
{
    if (*i >= len || (s[*i] != c1 && s[*i] != c2))
        return false;
    (*i)++;
    return true;
}

/* Optional ".digits": microseconds, extra digits truncated. */
static bool parse_fraction(const char *s, size_t len, size_t *i, int64_t *us)
{
    *us = 0;
    if (*i >= len || s[*i] != '.')
        return true;
    (*i)++;
    size_t start = *i;
    int64_t scale = US_PER_SEC;
    while (*i < len && s[*i] >= '0' && s[*i] <= '9') {
        if (scale > 1) {
            scale /= 10;
            *us += (s[*i] - '0') * scale;
        }
        (*i)++;
    }
    return *i > start; /* "12:00:00.Z" has no digits */
}

/* "Z", "z" or "+hh:mm"/"-hh:mm": seconds east of UTC. */
static bool parse_offset(const char *s, size_t len, size_t *i, int64_t *off)
{
    unsigned oh, om;
    *off = 0;
    if (*i >= len)
        return false;
    if (s[*i] == 'Z' || s[*i] == 'z') {
        (*i)++;
        return true;
    }
    if (s[*i] != '+' && s[*i] != '-')
        return false;
    int sign = s[*i] == '-' ? -1 : 1;
    (*i)++;
    if (!fixed_digits(s, len, i, 2, &oh) || !expect_char(s, len, i, ':', ':') ||
        !fixed_digits(s, len, i, 2, &om) || oh > 23 || om > 59)
        return false;
    *off = sign * (int64_t)(oh * 3600 + om * 60);
    return true;
}

int corral_time_parse(const char *s, size_t len, int64_t *unix_us)
{
    unsigned yr, mo, dd, hh, mi, ss;
    int64_t frac, off;
    size_t i = 0;
    if (!s)
        return CORRAL_EINVAL;
    if (!fixed_digits(s, len, &i, 4, &yr) || !expect_char(s, len, &i, '-', '-') ||
        !fixed_digits(s, len, &i, 2, &mo) || !expect_char(s, len, &i, '-', '-') ||
        !fixed_digits(s, len, &i, 2, &dd) || !expect_char(s, len, &i, 'T', 't') ||
        !fixed_digits(s, len, &i, 2, &hh) || !expect_char(s, len, &i, ':', ':') ||
        !fixed_digits(s, len, &i, 2, &mi) || !expect_char(s, len, &i, ':', ':') ||
        !fixed_digits(s, len, &i, 2, &ss) || !parse_fraction(s, len, &i, &frac) ||
        !parse_offset(s, len, &i, &off) || i != len)
        return CORRAL_EINVAL;
    /* Go's time.Parse rejects leap seconds (:60) too. */
    if (mo < 1 || mo > 12 || dd < 1 || dd > days_in_month(yr, mo) || hh > 23 || mi > 59 || ss > 59)
        return CORRAL_EINVAL;
    int64_t sod = (int64_t)hh * 3600 + (int64_t)mi * 60 + (int64_t)ss;
    int64_t secs = days_from_civil(yr, mo, dd) * SEC_PER_DAY + sod - off;
    *unix_us = secs * US_PER_SEC + frac;
    return 0;
}

void corral_time_format(int64_t unix_us, bool micro, char *out, size_t len)
{
    /* Years outside 0000..9999 cannot be written in RFC 3339: clamp, so that
     * what we write always parses again. */
    const int64_t lo = days_from_civil(0, 1, 1) * SEC_PER_DAY * US_PER_SEC;
    const int64_t hi = (days_from_civil(10000, 1, 1) * SEC_PER_DAY) * US_PER_SEC - 1;
    if (!out || len == 0)
        return;
    if (unix_us < lo)
        unix_us = lo;
    if (unix_us > hi)
        unix_us = hi;
    /* Floor division: times before 1970 still truncate toward the past. */
    int64_t secs = unix_us / US_PER_SEC, us = unix_us % US_PER_SEC;
    if (us < 0) {
        us += US_PER_SEC;
        secs--;
    }
    int64_t days = secs / SEC_PER_DAY, sod = secs % SEC_PER_DAY;
    if (sod < 0) {
        sod += SEC_PER_DAY;
        days--;
    }
    int64_t y;
    unsigned m, d;
    civil_from_days(days, &y, &m, &d);
    char buf[40];
    int n = snprintf(buf, sizeof(buf), "%04d-%02u-%02uT%02d:%02d:%02d", (int)y, m, d,
                     (int)(sod / 3600), (int)(sod / 60 % 60), (int)(sod % 60));
    if (micro)
        snprintf(buf + n, sizeof(buf) - (size_t)n, ".%06dZ", (int)us);
    else
        snprintf(buf + n, sizeof(buf) - (size_t)n, "Z");
    snprintf(out, len, "%s", buf);
}

/* Go's leadingInt: digits into *x; false on overflow past 1<<63. */
static bool leading_int(const char *s, size_t len, size_t *i, uint64_t *x)
{
    *x = 0;
    for (; *i < len && s[*i] >= '0' && s[*i] <= '9'; (*i)++) {
        if (*x > U63 / 10)
            return false;
        *x = *x * 10 + (uint64_t)(s[*i] - '0');
        if (*x > U63)
            return false;
    }
    return true;
}

/* Go's leadingFraction: digits into *x and *scale, precision silently
 * dropped once x would overflow. */
static void leading_fraction(const char *s, size_t len, size_t *i, uint64_t *x, double *scale)
{
    bool overflow = false;
    *x = 0;
    *scale = 1;
    for (; *i < len && s[*i] >= '0' && s[*i] <= '9'; (*i)++) {
        if (overflow)
            continue;
        if (*x > (U63 - 1) / 10) {
            overflow = true;
            continue;
        }
        uint64_t y = *x * 10 + (uint64_t)(s[*i] - '0');
        if (y > U63) {
            overflow = true;
            continue;
        }
        *x = y;
        *scale *= 10;
    }
}

static uint64_t duration_unit(const char *u, size_t n)
{
    static const struct {
        const char *name;
        uint64_t ns;
    } units[] = {
        {"ns", 1},
        {"us", 1000},
        {"\xc2\xb5s", 1000}, /* U+00B5 micro sign */
        {"\xce\xbcs", 1000}, /* U+03BC Greek small letter mu */
        {"ms", 1000000},
        {"s", (uint64_t)CORRAL_NS_PER_SEC},
        {"m", (uint64_t)CORRAL_NS_PER_MIN},
        {"h", (uint64_t)CORRAL_NS_PER_HOUR},
    };
    for (size_t k = 0; k < CORRAL_ARRAY_LEN(units); k++) {
        if (strlen(units[k].name) == n && memcmp(units[k].name, u, n) == 0)
            return units[k].ns;
    }
    return 0;
}

/* One <decimal><unit> element at s[*i], added to *d. */
static int duration_element(const char *s, size_t len, size_t *i, uint64_t *d)
{
    uint64_t v, f = 0;
    double scale = 1;
    if (!(s[*i] == '.' || (s[*i] >= '0' && s[*i] <= '9')))
        return CORRAL_EINVAL;
    size_t start = *i;
    if (!leading_int(s, len, i, &v))
        return CORRAL_ERANGE;
    bool pre = *i != start, post = false;
    if (*i < len && s[*i] == '.') {
        (*i)++;
        start = *i;
        leading_fraction(s, len, i, &f, &scale);
        post = *i != start;
    }
    if (!pre && !post)
        return CORRAL_EINVAL; /* ".s" */
    /* The unit is everything up to the next '.' or digit, as in Go. */
    start = *i;
    while (*i < len && s[*i] != '.' && !(s[*i] >= '0' && s[*i] <= '9'))
        (*i)++;
    uint64_t unit = duration_unit(s + start, *i - start);
    if (unit == 0)
        return CORRAL_EINVAL; /* missing or unknown unit */
    if (v > U63 / unit)
        return CORRAL_ERANGE;
    v *= unit;
    if (f > 0) {
        /* float64, as Go: nanosecond-accurate for fractions of hours. */
        v += (uint64_t)((double)f * ((double)unit / scale));
        if (v > U63)
            return CORRAL_ERANGE;
    }
    *d += v;
    return *d > U63 ? CORRAL_ERANGE : 0;
}

int corral_duration_parse(const char *s, size_t len, int64_t *ns)
{
    size_t i = 0;
    bool neg = false;
    uint64_t d = 0;
    if (!s)
        return CORRAL_EINVAL;
    if (len > 0 && (s[0] == '-' || s[0] == '+')) {
        neg = s[0] == '-';
        i++;
    }
    if (len - i == 1 && s[i] == '0') {
        *ns = 0;
        return 0;
    }
    if (i == len)
        return CORRAL_EINVAL;
    while (i < len) {
        int rc = duration_element(s, len, &i, &d);
        if (rc < 0)
            return rc;
    }
    if (neg) {
        *ns = d == U63 ? INT64_MIN : -(int64_t)d;
        return 0;
    }
    if (d > U63 - 1)
        return CORRAL_ERANGE;
    *ns = (int64_t)d;
    return 0;
}

/* Go's fmtFrac: v/10^prec's fraction, trailing zeros dropped, into the tail
 * of buf ending at *w; returns v/10^prec. */
static uint64_t fmt_frac(char *buf, int *w, uint64_t v, int prec)
{
    bool print = false;
    for (int k = 0; k < prec; k++) {
        unsigned digit = (unsigned)(v % 10);
        print = print || digit != 0;
        if (print)
            buf[--*w] = (char)('0' + digit);
        v /= 10;
    }
    if (print)
        buf[--*w] = '.';
    return v;
}

static void fmt_int(char *buf, int *w, uint64_t v)
{
    do {
        buf[--*w] = (char)('0' + v % 10);
        v /= 10;
    } while (v > 0);
}

void corral_duration_format(int64_t ns, char *out, size_t len)
{
    char buf[32];
    int w = (int)sizeof(buf);
    bool neg = ns < 0;
    uint64_t u = neg ? -(uint64_t)ns : (uint64_t)ns;
    if (!out || len == 0)
        return;
    buf[--w] = '\0';
    buf[--w] = 's';
    if (u < (uint64_t)CORRAL_NS_PER_SEC) {
        /* Under a second: the largest unit that keeps an integer part. */
        int prec = 0;
        if (u == 0) {
            snprintf(out, len, "0s");
            return;
        } else if (u < 1000) {
            buf[--w] = 'n';
        } else if (u < 1000000) {
            prec = 3;
            buf[--w] = '\xb5'; /* U+00B5, as Go writes it */
            buf[--w] = '\xc2';
        } else {
            prec = 6;
            buf[--w] = 'm';
        }
        u = fmt_frac(buf, &w, u, prec);
        fmt_int(buf, &w, u);
    } else {
        u = fmt_frac(buf, &w, u, 9);
        fmt_int(buf, &w, u % 60);
        u /= 60;
        if (u > 0) { /* minutes, then hours: days vary in length */
            buf[--w] = 'm';
            fmt_int(buf, &w, u % 60);
            u /= 60;
            if (u > 0) {
                buf[--w] = 'h';
                fmt_int(buf, &w, u);
            }
        }
    }
    if (neg)
        buf[--w] = '-';
    snprintf(out, len, "%s", buf + w);
}
