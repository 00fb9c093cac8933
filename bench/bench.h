/*
 * What the benchmark programs share: a monotonic clock in nanoseconds and
 * percentiles of sorted latency samples. Header-only: each bench/ program
 * is one .c file linked alone with libcorral.
 */
#ifndef CORRAL_BENCH_H
#define CORRAL_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

static inline int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* qsort comparator for int64_t samples. */
static inline int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The p-th percentile (0..1) of n sorted nanosecond samples, in ms. */
static inline double pct_ms(const int64_t *v, size_t n, double p)
{
    if (!n)
        return 0;
    size_t i = (size_t)(p * (double)(n - 1) + 0.5);
    return (double)v[i] / 1e6;
}

#endif
