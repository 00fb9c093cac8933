/*
 * Charts for the simulator's reports, drawn by Corral itself as standalone
 * SVG 1.1 documents that open in any browser: line charts (one line per
 * series, with axes, gridlines at round tick values, a legend and colours
 * from the Okabe-Ito colour-blind-safe palette) and empirical CDFs. The
 * output depends only on the input (no locale, no clock), so reports are
 * reproducible byte for byte.
 */
#ifndef CORRAL_SVG_H
#define CORRAL_SVG_H

#include <stdbool.h>
#include <stddef.h>

#include "corral/buf.h"
#include "corral/common.h"

/* One line: n points (x[i], y[i]). Points with a NaN or infinite
 * coordinate (or x <= 0 on a log x axis) are skipped and break the line. */
typedef struct corral_svg_series {
    const char *name; /* legend text; NULL or "" for none */
    const double *x;
    const double *y;
    size_t n;
} corral_svg_series_t;

typedef struct corral_svg_chart {
    const char *title;   /* may be NULL */
    const char *x_label; /* may be NULL */
    const char *y_label; /* may be NULL */
    const corral_svg_series_t *series;
    size_t nseries;
    /* Axis ranges; NAN for automatic (the data's range widened to round
     * tick values). Data outside an explicit range is clipped. */
    double x_min, x_max;
    double y_min, y_max;
    bool x_percent; /* x values are fractions, labelled as percentages */
    bool y_percent; /* y values are fractions (0.25 is labelled "25%") */
    bool x_log;     /* logarithmic x axis (decades); x <= 0 is skipped */
} corral_svg_chart_t;

/* An empty chart: no series, automatic ranges, linear axes. */
void corral_svg_chart_init(corral_svg_chart_t *c);

/*
 * Append a complete SVG document (720x420) for chart c to out. All text is
 * XML-escaped (and invalid UTF-8 replaced), so any names are safe. Returns 0,
 * or CORRAL_EINVAL (out untouched) when c is NULL, a series with points lacks
 * x or y, or an explicit range is empty, inverted or not positive on a log
 * axis.
 */
int corral_svg_line_chart(const corral_svg_chart_t *c, corral_buf_t *out);

/* Raw samples for a CDF: n values, in any order; NaNs are ignored. */
typedef struct corral_svg_samples {
    const char *name;
    const double *v;
    size_t n;
} corral_svg_samples_t;

/*
 * Append an empirical CDF chart: for each sample set, the fraction of its
 * values <= x, as a step line (sorted copies; large sets are drawn through
 * 1,000 evenly spaced quantiles, which is exact to the pixel). c gives the
 * title, labels, x range and scale, and y_percent; its series are ignored
 * and the y range is 0..1 unless set. Returns as corral_svg_line_chart.
 */
int corral_svg_cdf(const corral_svg_chart_t *c, const corral_svg_samples_t *sets, size_t nsets,
                   corral_buf_t *out);

#endif
