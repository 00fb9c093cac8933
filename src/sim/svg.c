/*
 * SVG line charts and CDFs for simulation reports. A chart is laid out on a
 * fixed 720x420 canvas: title on top, plot area with gridlines at "nice"
 * round ticks (1, 2 or 5 times a power of ten; decades on a log axis), tick
 * labels shortened with k/M/G, axis labels, and a legend on the right. Every
 * number is written with integer arithmetic rather than printf's %f, so a
 * process locale with a decimal comma cannot break the document, and every
 * piece of text goes through one escaper that also repairs invalid UTF-8
 * (which XML parsers reject).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "corral/svg.h"

#define SVG_W        720
#define SVG_H        420
#define PLOT_L       72.0
#define PLOT_R       548.0 /* with a legend; 700 without */
#define PLOT_T       44.0
#define PLOT_B       360.0
#define LEGEND_X     564
#define LEGEND_ROW   20
#define MAX_TICKS    24
#define MARKER_LIMIT 30 /* series with at most this many points get markers */

/* Okabe & Ito's colour-blind-safe palette, yellow left out (too pale on
 * white); after seven series the colours repeat with dashes. */
static const char *const palette[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                      "#E69F00", "#56B4E9", "#000000"};
static const char *const dashes[] = {NULL, "7 4", "2 3"};

typedef struct axis {
    double lo, hi; /* range shown */
    bool log, pct; /* log10 scale; labels as percentages */
    double ticks[MAX_TICKS];
    int nticks;
    double minor[MAX_TICKS * 8]; /* log axes: 2..9 times each decade */
    int nminor;
    int decimals;       /* of tick labels (after unit and percent scaling) */
    double unit;        /* labels are value / unit ... */
    const char *suffix; /* ... followed by this ("k", "M", "%") */
} axis_t;

typedef struct layout {
    double l, r, t, b; /* plot area */
    bool legend;
} layout_t;

void corral_svg_chart_init(corral_svg_chart_t *c)
{
    memset(c, 0, sizeof(*c));
    c->x_min = c->x_max = c->y_min = c->y_max = NAN;
}

/* --- text and numbers ---------------------------------------------------- */

/* Length of a valid UTF-8 sequence for an XML character at s, or 0. */
static size_t utf8_len(const unsigned char *s, size_t left)
{
    unsigned c = s[0];
    size_t n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
    if (c < 0xC2 || c > 0xF4 || n > left)
        return 0;
    uint32_t cp = c & (0x7F >> n);
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    static const uint32_t min_cp[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min_cp[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF) || cp == 0xFFFE ||
        cp == 0xFFFF)
        return 0;
    return n;
}

/* Append s as XML character data, at most max characters (then "…"). */
static void put_text(corral_buf_t *b, const char *s, size_t max)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    size_t left = strlen((const char *)p), chars = 0;
    while (left) {
        if (chars++ == max) {
            corral_buf_puts(b, "\xE2\x80\xA6");
            return;
        }
        size_t n = 1;
        unsigned c = *p;
        if (c == '&')
            corral_buf_puts(b, "&amp;");
        else if (c == '<')
            corral_buf_puts(b, "&lt;");
        else if (c == '>')
            corral_buf_puts(b, "&gt;");
        else if (c == '"')
            corral_buf_puts(b, "&quot;");
        else if (c == '\'')
            corral_buf_puts(b, "&#39;");
        else if (c < 0x20 || c == 0x7F)
            corral_buf_putc(b, ' ');
        else if (c < 0x80)
            corral_buf_putc(b, (char)c);
        else if ((n = utf8_len(p, left)) != 0)
            corral_buf_append(b, p, n);
        else {
            corral_buf_puts(b, "\xEF\xBF\xBD"); /* U+FFFD for a bad byte */
            n = 1;
        }
        p += n;
        left -= n;
    }
}

/* Append v with the given decimals (0..6), trailing zeros dropped; no
 * locale. Values too large for that go out as mantissa "e" exponent. */
static void put_num(corral_buf_t *b, double v, int decimals)
{
    static const int64_t p10[] = {1, 10, 100, 1000, 10000, 100000, 1000000};
    if (!isfinite(v)) {
        corral_buf_putc(b, '0');
        return;
    }
    decimals = decimals < 0 ? 0 : decimals > 6 ? 6 : decimals;
    double scaled = v * (double)p10[decimals];
    if (fabs(scaled) >= 9e15) {
        int e = (int)floor(log10(fabs(v)));
        put_num(b, v / pow(10.0, e), 2);
        corral_buf_printf(b, "e%d", e);
        return;
    }
    int64_t q = llround(scaled);
    if (q < 0)
        corral_buf_putc(b, '-');
    uint64_t a = q < 0 ? (uint64_t)0 - (uint64_t)q : (uint64_t)q;
    corral_buf_printf(b, "%llu", (unsigned long long)(a / (uint64_t)p10[decimals]));
    uint64_t frac = a % (uint64_t)p10[decimals];
    if (frac == 0)
        return;
    char digits[8] = {0};
    for (int i = decimals - 1; i >= 0; i--, frac /= 10)
        digits[i] = (char)('0' + frac % 10);
    int n = decimals;
    while (n > 0 && digits[n - 1] == '0')
        n--;
    corral_buf_putc(b, '.');
    corral_buf_append(b, digits, (size_t)n);
}

/* A pixel coordinate: one decimal, clamped far outside the canvas. */
static void put_px(corral_buf_t *b, double v)
{
    v = v < -1e6 ? -1e6 : v > 1e6 ? 1e6 : v;
    put_num(b, v, 1);
}

/* --- axes ---------------------------------------------------------------- */

/* Heckbert's nice numbers: 1, 2, 5 or 10 times a power of ten. */
static double nice_num(double x, bool round_it)
{
    double e = floor(log10(x)), f = x / pow(10.0, e), nf;
    if (round_it)
        nf = f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10;
    else
        nf = f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10;
    return nf * pow(10.0, e);
}

/* Decimals needed to tell ticks step apart (step a nice number). */
static int step_decimals(double step)
{
    double d = -floor(log10(step) + 1e-9);
    return !(d > 0) ? 0 : d > 20 ? 20 : (int)d;
}

static void axis_units(axis_t *a, double step)
{
    static const struct {
        double unit;
        const char *suffix;
    } units[] = {{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}};
    double big = fmax(fabs(a->lo), fabs(a->hi));
    a->unit = 1;
    a->suffix = "";
    if (a->pct) {
        a->unit = 0.01;
        a->suffix = "%";
    } else if (big >= 1e4) {
        for (size_t i = 0; i < CORRAL_ARRAY_LEN(units); i++)
            if (big >= units[i].unit) {
                a->unit = units[i].unit;
                a->suffix = units[i].suffix;
                break;
            }
    }
    a->decimals = step_decimals(step / a->unit);
}

/* Give a range too narrow to draw (one value, a constant series) room:
 * around the value when both ends are automatic, else on the automatic
 * side of the fixed end. */
static void axis_widen(axis_t *a, bool auto_lo, bool auto_hi)
{
    double v = auto_lo && !auto_hi ? a->hi : a->lo;
    double pad = v == 0 ? 1 : fmax(fabs(v) * 0.1, 1e-200);
    if (auto_lo && auto_hi) {
        a->lo -= pad;
        a->hi += pad;
    } else if (auto_lo) {
        a->lo = a->hi - pad;
    } else {
        a->hi = a->lo + pad;
    }
}

/* A linear axis over data [dlo, dhi] (dlo > dhi when there is none), with
 * explicit ends flo/fhi unless NaN. */
static void axis_linear(axis_t *a, double dlo, double dhi, double flo, double fhi)
{
    bool auto_lo = isnan(flo), auto_hi = isnan(fhi);
    if (dlo > dhi)
        dlo = 0, dhi = 1;
    a->lo = auto_lo ? dlo : flo;
    a->hi = auto_hi ? dhi : fhi;
    double min_span = fmax(fmax(fabs(a->lo), fabs(a->hi)) * 1e-9, 1e-200);
    if (!(a->hi - a->lo >= min_span))
        axis_widen(a, auto_lo, auto_hi);
    double step = nice_num(nice_num(a->hi - a->lo, false) / 5, true);
    if (auto_lo)
        a->lo = floor(a->lo / step) * step;
    if (auto_hi)
        a->hi = ceil(a->hi / step) * step;
    a->nticks = 0;
    double k0 = ceil(a->lo / step - 1e-9);
    for (int i = 0; a->nticks < MAX_TICKS; i++) {
        double v = (k0 + i) * step;
        if (v > a->hi + step * 1e-9)
            break;
        a->ticks[a->nticks++] = fabs(v) < step * 1e-9 ? 0 : v;
    }
    axis_units(a, step);
}

/* A log10 axis over positive data [dlo, dhi]. */
static void axis_log(axis_t *a, double dlo, double dhi, double flo, double fhi)
{
    if (dlo > dhi)
        dlo = 1, dhi = 10;
    a->lo = isnan(flo) ? pow(10.0, floor(log10(dlo))) : flo;
    a->hi = isnan(fhi) ? pow(10.0, ceil(log10(dhi))) : fhi;
    if (a->hi <= a->lo)
        a->hi = a->lo * 10;
    int e0 = (int)ceil(log10(a->lo) - 1e-9), e1 = (int)floor(log10(a->hi) + 1e-9);
    int every = (e1 - e0) / (MAX_TICKS / 2) + 1;
    a->nticks = a->nminor = 0;
    for (int e = e0; e <= e1 && a->nticks < MAX_TICKS; e += every)
        a->ticks[a->nticks++] = pow(10.0, e);
    for (int e = e0 - 1; every == 1 && e1 - e0 <= 8 && e <= e1; e++)
        for (int m = 2; m <= 9; m++) {
            double v = m * pow(10.0, e);
            if (v > a->lo && v < a->hi)
                a->minor[a->nminor++] = v;
        }
    a->unit = a->pct ? 0.01 : 1;
    a->suffix = a->pct ? "%" : "";
    a->decimals = 0;
}

/* A tick label. Log axes pick units per tick (1, 10, 100, 1k, 10k, 1M). */
static void put_tick_label(corral_buf_t *b, const axis_t *a, double v)
{
    if (a->log && !a->pct) {
        static const char *const sfx[] = {"", "k", "M", "G", "T"};
        int e = (int)floor(log10(v) + 1e-9), u = e >= 3 ? (e / 3 < 4 ? e / 3 : 4) : 0;
        put_num(b, v / pow(10.0, 3 * u), e < 0 ? -e : 0);
        corral_buf_puts(b, sfx[u]);
        return;
    }
    int dec = a->decimals;
    if (a->log) { /* a percentage on a log axis */
        int e = (int)floor(log10(v / a->unit) + 1e-9);
        dec = e < 0 ? -e : 0;
    }
    put_num(b, v / a->unit, dec);
    if (v != 0 || a->pct) /* "0", not "0k" */
        corral_buf_puts(b, a->suffix);
}

/* Position of v along [p0, p1]. */
static double axis_pos(const axis_t *a, double v, double p0, double p1)
{
    double f = a->log ? (log10(v) - log10(a->lo)) / (log10(a->hi) - log10(a->lo))
                      : (v - a->lo) / (a->hi - a->lo);
    return p0 + f * (p1 - p0);
}

/* --- drawing ------------------------------------------------------------- */

/* Values beyond +-1e300 (and below 1e-300 on a log axis) are not drawn,
 * so that no range arithmetic can overflow. */
#define SVG_HUGE 1e300

static bool point_ok(const corral_svg_chart_t *c, size_t s, size_t i)
{
    double x = c->series[s].x[i], y = c->series[s].y[i];
    return fabs(x) <= SVG_HUGE && fabs(y) <= SVG_HUGE && (!c->x_log || x >= 1 / SVG_HUGE);
}

/* The data's range on both axes; false when there is no point at all. */
static bool data_range(const corral_svg_chart_t *c, double *x0, double *x1, double *y0, double *y1)
{
    *x0 = *y0 = INFINITY;
    *x1 = *y1 = -INFINITY;
    for (size_t s = 0; s < c->nseries; s++)
        for (size_t i = 0; i < c->series[s].n; i++) {
            if (!point_ok(c, s, i))
                continue;
            *x0 = fmin(*x0, c->series[s].x[i]);
            *x1 = fmax(*x1, c->series[s].x[i]);
            *y0 = fmin(*y0, c->series[s].y[i]);
            *y1 = fmax(*y1, c->series[s].y[i]);
        }
    return *x0 <= *x1;
}

static void put_attr_num(corral_buf_t *b, const char *name, double v)
{
    corral_buf_printf(b, " %s=\"", name);
    put_px(b, v);
    corral_buf_putc(b, '"');
}

static void draw_line(corral_buf_t *b, double x1, double y1, double x2, double y2)
{
    corral_buf_puts(b, "<line");
    put_attr_num(b, "x1", x1);
    put_attr_num(b, "y1", y1);
    put_attr_num(b, "x2", x2);
    put_attr_num(b, "y2", y2);
    corral_buf_puts(b, "/>\n");
}

static void draw_grid(corral_buf_t *b, const layout_t *L, const axis_t *ax, const axis_t *ay)
{
    corral_buf_puts(b, "<g stroke=\"#f0f0f0\" stroke-width=\"1\">\n");
    for (int i = 0; i < ax->nminor; i++) {
        double x = axis_pos(ax, ax->minor[i], L->l, L->r);
        draw_line(b, x, L->t, x, L->b);
    }
    corral_buf_puts(b, "</g>\n<g stroke=\"#dddddd\" stroke-width=\"1\">\n");
    for (int i = 0; i < ax->nticks; i++) {
        double x = axis_pos(ax, ax->ticks[i], L->l, L->r);
        draw_line(b, x, L->t, x, L->b + 4);
    }
    for (int i = 0; i < ay->nticks; i++) {
        double y = axis_pos(ay, ay->ticks[i], L->b, L->t);
        draw_line(b, L->l - 4, y, L->r, y);
    }
    corral_buf_puts(b, "</g>\n<rect fill=\"none\" stroke=\"#444444\" stroke-width=\"1\"");
    put_attr_num(b, "x", L->l);
    put_attr_num(b, "y", L->t);
    put_attr_num(b, "width", L->r - L->l);
    put_attr_num(b, "height", L->b - L->t);
    corral_buf_puts(b, "/>\n");
}

static void draw_tick_labels(corral_buf_t *b, const layout_t *L, const axis_t *ax, const axis_t *ay)
{
    corral_buf_puts(b, "<g font-size=\"11\" fill=\"#333333\" text-anchor=\"middle\">\n");
    for (int i = 0; i < ax->nticks; i++) {
        corral_buf_puts(b, "<text");
        put_attr_num(b, "x", axis_pos(ax, ax->ticks[i], L->l, L->r));
        put_attr_num(b, "y", L->b + 18);
        corral_buf_putc(b, '>');
        put_tick_label(b, ax, ax->ticks[i]);
        corral_buf_puts(b, "</text>\n");
    }
    corral_buf_puts(b, "</g>\n<g font-size=\"11\" fill=\"#333333\" text-anchor=\"end\">\n");
    for (int i = 0; i < ay->nticks; i++) {
        corral_buf_puts(b, "<text");
        put_attr_num(b, "x", L->l - 7);
        put_attr_num(b, "y", axis_pos(ay, ay->ticks[i], L->b, L->t) + 4);
        corral_buf_putc(b, '>');
        put_tick_label(b, ay, ay->ticks[i]);
        corral_buf_puts(b, "</text>\n");
    }
    corral_buf_puts(b, "</g>\n");
}

static void draw_labels(corral_buf_t *b, const corral_svg_chart_t *c, const layout_t *L)
{
    if (c->title && *c->title) {
        corral_buf_printf(b,
                          "<text x=\"%d\" y=\"26\" text-anchor=\"middle\" font-size=\"16\" "
                          "font-weight=\"bold\">",
                          SVG_W / 2);
        put_text(b, c->title, 80);
        corral_buf_puts(b, "</text>\n");
    }
    if (c->x_label && *c->x_label) {
        corral_buf_puts(b, "<text text-anchor=\"middle\"");
        put_attr_num(b, "x", (L->l + L->r) / 2);
        corral_buf_printf(b, " y=\"%d\">", SVG_H - 14);
        put_text(b, c->x_label, 90);
        corral_buf_puts(b, "</text>\n");
    }
    if (c->y_label && *c->y_label) {
        double y = (L->t + L->b) / 2;
        corral_buf_puts(b, "<text text-anchor=\"middle\" x=\"18\"");
        put_attr_num(b, "y", y);
        corral_buf_puts(b, " transform=\"rotate(-90 18 ");
        put_px(b, y);
        corral_buf_puts(b, ")\">");
        put_text(b, c->y_label, 50);
        corral_buf_puts(b, "</text>\n");
    }
}

/* Style attributes of series s: colour and dash. */
static void put_style(corral_buf_t *b, size_t s, const char *attr)
{
    size_t np = CORRAL_ARRAY_LEN(palette);
    const char *dash = dashes[(s / np) % CORRAL_ARRAY_LEN(dashes)];
    corral_buf_printf(b, " %s=\"%s\"", attr, palette[s % np]);
    if (dash && strcmp(attr, "stroke") == 0)
        corral_buf_printf(b, " stroke-dasharray=\"%s\"", dash);
}

static void draw_marker(corral_buf_t *b, size_t s, double x, double y)
{
    corral_buf_puts(b, "<circle r=\"3\"");
    put_attr_num(b, "cx", x);
    put_attr_num(b, "cy", y);
    put_style(b, s, "fill");
    corral_buf_puts(b, "/>\n");
}

/* Whether series s is drawn with a marker at each point (few points). */
static bool series_markers(const corral_svg_chart_t *c, size_t s)
{
    size_t valid = 0;
    for (size_t i = 0; i < c->series[s].n && valid <= MARKER_LIMIT; i++)
        valid += point_ok(c, s, i);
    return valid <= MARKER_LIMIT;
}

/* One polyline per run of drawable points; a lone point gets a marker. */
static void draw_series(corral_buf_t *b, const corral_svg_chart_t *c, size_t s, const layout_t *L,
                        const axis_t *ax, const axis_t *ay)
{
    const corral_svg_series_t *sr = &c->series[s];
    bool markers = series_markers(c, s);
    size_t i = 0;
    while (i < sr->n) {
        if (!point_ok(c, s, i)) {
            i++;
            continue;
        }
        size_t j = i;
        while (j < sr->n && point_ok(c, s, j))
            j++;
        if (j - i > 1) {
            corral_buf_puts(b, "<polyline");
            put_style(b, s, "stroke");
            corral_buf_puts(b, " points=\"");
            for (size_t k = i; k < j; k++) {
                if (k > i)
                    corral_buf_putc(b, ' ');
                put_px(b, axis_pos(ax, sr->x[k], L->l, L->r));
                corral_buf_putc(b, ',');
                put_px(b, axis_pos(ay, sr->y[k], L->b, L->t));
            }
            corral_buf_puts(b, "\"/>\n");
        }
        for (size_t k = i; k < j && (markers || j - i == 1); k++)
            draw_marker(b, s, axis_pos(ax, sr->x[k], L->l, L->r),
                        axis_pos(ay, sr->y[k], L->b, L->t));
        i = j;
    }
}

static void draw_legend(corral_buf_t *b, const corral_svg_chart_t *c, const layout_t *L)
{
    int rows = (int)((L->b - L->t) / LEGEND_ROW), row = 0;
    size_t named = 0;
    for (size_t s = 0; s < c->nseries; s++)
        named += c->series[s].name && *c->series[s].name;
    corral_buf_puts(b, "<g font-size=\"12\" fill=\"#222222\">\n");
    for (size_t s = 0; s < c->nseries; s++) {
        if (!c->series[s].name || !*c->series[s].name)
            continue;
        double y = L->t + 10 + row * LEGEND_ROW;
        if (row == rows - 1 && named > (size_t)rows) {
            corral_buf_printf(b, "<text x=\"%d\" y=\"", LEGEND_X);
            put_px(b, y + 4);
            corral_buf_printf(b, "\">+%zu more</text>\n", named - (size_t)row);
            break;
        }
        corral_buf_puts(b, "<line stroke-width=\"2\"");
        put_style(b, s, "stroke");
        corral_buf_printf(b, " x1=\"%d\" x2=\"%d\" y1=\"", LEGEND_X, LEGEND_X + 22);
        put_px(b, y);
        corral_buf_puts(b, "\" y2=\"");
        put_px(b, y);
        corral_buf_puts(b, "\"/>\n");
        if (series_markers(c, s))
            draw_marker(b, s, LEGEND_X + 11, y);
        corral_buf_printf(b, "<text x=\"%d\" y=\"", LEGEND_X + 28);
        put_px(b, y + 4);
        corral_buf_puts(b, "\">");
        put_text(b, c->series[s].name, 16);
        corral_buf_puts(b, "</text>\n");
        row++;
    }
    corral_buf_puts(b, "</g>\n");
}

/* --- charts -------------------------------------------------------------- */

static bool range_ok(double lo, double hi, bool log)
{
    if ((!isnan(lo) && !(fabs(lo) <= SVG_HUGE)) || (!isnan(hi) && !(fabs(hi) <= SVG_HUGE)))
        return false;
    if (!isnan(lo) && !isnan(hi) && lo >= hi)
        return false;
    return !log || ((isnan(lo) || lo >= 1 / SVG_HUGE) && (isnan(hi) || hi >= 1 / SVG_HUGE));
}

static int chart_check(const corral_svg_chart_t *c)
{
    if (!c || (c->nseries && !c->series))
        return CORRAL_EINVAL;
    for (size_t s = 0; s < c->nseries; s++)
        if (c->series[s].n && (!c->series[s].x || !c->series[s].y))
            return CORRAL_EINVAL;
    if (!range_ok(c->x_min, c->x_max, c->x_log) || !range_ok(c->y_min, c->y_max, false))
        return CORRAL_EINVAL;
    return 0;
}

static void chart_axes(const corral_svg_chart_t *c, axis_t *ax, axis_t *ay, bool *any)
{
    double x0, x1, y0, y1;
    *any = data_range(c, &x0, &x1, &y0, &y1);
    memset(ax, 0, sizeof(*ax));
    memset(ay, 0, sizeof(*ay));
    ax->log = c->x_log;
    ax->pct = c->x_percent;
    ay->pct = c->y_percent;
    if (ax->log)
        axis_log(ax, x0, x1, c->x_min, c->x_max);
    else
        axis_linear(ax, x0, x1, c->x_min, c->x_max);
    axis_linear(ay, y0, y1, c->y_min, c->y_max);
}

int corral_svg_line_chart(const corral_svg_chart_t *c, corral_buf_t *out)
{
    if (chart_check(c) != 0)
        return CORRAL_EINVAL;
    axis_t ax, ay;
    bool any;
    chart_axes(c, &ax, &ay, &any);
    layout_t L = {PLOT_L, PLOT_R, PLOT_T, PLOT_B, false};
    for (size_t s = 0; s < c->nseries; s++)
        L.legend |= c->series[s].name && *c->series[s].name;
    if (!L.legend)
        L.r = SVG_W - 20;
    corral_buf_printf(out,
                      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                      "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" "
                      "height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" "
                      "font-size=\"12\">\n<title>",
                      SVG_W, SVG_H, SVG_W, SVG_H);
    put_text(out, c->title ? c->title : "chart", 200);
    corral_buf_printf(out, "</title>\n<rect width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", SVG_W,
                      SVG_H);
    corral_buf_puts(out, "<defs><clipPath id=\"plot-area\"><rect");
    put_attr_num(out, "x", L.l);
    put_attr_num(out, "y", L.t);
    put_attr_num(out, "width", L.r - L.l);
    put_attr_num(out, "height", L.b - L.t);
    corral_buf_puts(out, "/></clipPath></defs>\n");
    draw_labels(out, c, &L);
    draw_grid(out, &L, &ax, &ay);
    draw_tick_labels(out, &L, &ax, &ay);
    corral_buf_puts(out, "<g clip-path=\"url(#plot-area)\" fill=\"none\" stroke-width=\"2\" "
                         "stroke-linejoin=\"round\" stroke-linecap=\"round\">\n");
    for (size_t s = 0; s < c->nseries; s++)
        draw_series(out, c, s, &L, &ax, &ay);
    corral_buf_puts(out, "</g>\n");
    if (!any) {
        corral_buf_puts(out, "<text text-anchor=\"middle\" fill=\"#888888\" font-size=\"14\"");
        put_attr_num(out, "x", (L.l + L.r) / 2);
        put_attr_num(out, "y", (L.t + L.b) / 2);
        corral_buf_puts(out, ">no data</text>\n");
    }
    if (L.legend)
        draw_legend(out, c, &L);
    corral_buf_puts(out, "</svg>\n");
    return 0;
}

/* --- CDF ----------------------------------------------------------------- */

#define CDF_EXACT_MAX 2000 /* above this many samples, draw through quantiles */
#define CDF_LEVELS    1000

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The step line of one sample set into xs/ys (2 points per step); returns
 * the number of points. */
static size_t cdf_steps(const corral_svg_samples_t *set, double *xs, double *ys)
{
    double *v = corral_malloc((set->n ? set->n : 1) * sizeof(*v));
    size_t n = 0, k = 0;
    for (size_t i = 0; i < set->n; i++)
        if (!isnan(set->v[i]))
            v[n++] = set->v[i];
    qsort(v, n, sizeof(*v), cmp_double);
    size_t steps = n <= CDF_EXACT_MAX ? n : CDF_LEVELS;
    for (size_t i = 0; i < steps; i++) {
        /* Step i rises to (i+1)/steps at the smallest value reaching it. */
        size_t idx =
            n <= CDF_EXACT_MAX ? i : (size_t)(((uint64_t)(i + 1) * n + steps - 1) / steps) - 1;
        xs[k] = v[idx];
        ys[k++] = (double)i / (double)steps;
        xs[k] = v[idx];
        ys[k++] = (double)(i + 1) / (double)steps;
    }
    corral_free(v);
    return k;
}

int corral_svg_cdf(const corral_svg_chart_t *c, const corral_svg_samples_t *sets, size_t nsets,
                   corral_buf_t *out)
{
    if (!c || (nsets && !sets))
        return CORRAL_EINVAL;
    for (size_t s = 0; s < nsets; s++)
        if (sets[s].n && !sets[s].v)
            return CORRAL_EINVAL;
    corral_svg_chart_t ch = *c;
    corral_svg_series_t *series = corral_calloc(nsets ? nsets : 1, sizeof(*series));
    for (size_t s = 0; s < nsets; s++) {
        size_t cap = 2 * (sets[s].n <= CDF_EXACT_MAX ? sets[s].n : CDF_EXACT_MAX);
        double *xs = corral_malloc((cap ? cap : 1) * sizeof(*xs));
        double *ys = corral_malloc((cap ? cap : 1) * sizeof(*ys));
        series[s].name = sets[s].name;
        series[s].n = cdf_steps(&sets[s], xs, ys);
        series[s].x = xs;
        series[s].y = ys;
    }
    ch.series = series;
    ch.nseries = nsets;
    if (isnan(ch.y_min))
        ch.y_min = 0;
    if (isnan(ch.y_max))
        ch.y_max = 1;
    int rc = corral_svg_line_chart(&ch, out);
    for (size_t s = 0; s < nsets; s++) {
        corral_free((void *)series[s].x);
        corral_free((void *)series[s].y);
    }
    corral_free(series);
    return rc;
}
