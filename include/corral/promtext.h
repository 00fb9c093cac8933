/*
 * A parser of the Prometheus text exposition format 0.0.4: the bodies the
 * node agents serve at /metrics (the DCGM exporter's names) and
 * /metrics/resource (kubelet's resource metrics), read by the API server's
 * built-in metrics-server and by `corral top`. It is bounded (at most
 * CORRAL_PROMTEXT_MAX_LINE bytes per line, CORRAL_PROMTEXT_MAX_LABELS labels
 * per sample) and allocates one scratch buffer per call; samples are handed
 * to a callback one at a time, with their name and label values unescaped
 * into that buffer. Comment lines (# HELP, # TYPE) and blank lines are
 * skipped. A malformed line stops the parse with its line number in err.
 */
#ifndef CORRAL_PROMTEXT_H
#define CORRAL_PROMTEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CORRAL_PROMTEXT_MAX_LINE   ((size_t)64 << 10)
#define CORRAL_PROMTEXT_MAX_LABELS 32

typedef struct corral_promtext_label {
    const char *name, *value;
} corral_promtext_label_t;

typedef struct corral_promtext_sample {
    const char *name;
    corral_promtext_label_t labels[CORRAL_PROMTEXT_MAX_LABELS];
    size_t nlabels;
    double value; /* NaN and +-Inf as written */
    bool has_ts;
    int64_t ts_ms; /* the optional timestamp (milliseconds since the epoch) */
    size_t line;   /* 1-based line number in the input */
} corral_promtext_sample_t;

/* Called once per sample; the strings live until it returns. A non-zero
 * return stops the parse, which then returns that value. */
typedef int (*corral_promtext_fn)(void *arg, const corral_promtext_sample_t *s);

/*
 * Parse text[0..len). Returns the number of samples (>= 0), the callback's
 * non-zero value, or CORRAL_EPARSE / CORRAL_ETOOBIG with a message naming the
 * line in err (may be NULL).
 */
int corral_promtext_parse(const char *text, size_t len, corral_promtext_fn fn, void *arg, char *err,
                          size_t errlen);

/* The value of label name of s, or NULL when s has no such label. */
const char *corral_promtext_label(const corral_promtext_sample_t *s, const char *name);

#endif
