/* SVG charts: complete, well-formed documents (checked by a small XML
 * checker here; tests/cli/test_svg.sh also runs xmllint), escaped text,
 * empty series, single points, NaN gaps, constant series, tick labels,
 * colours, CDFs, and argument errors. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corral/svg.h"

/* --- a small XML well-formedness checker --------------------------------- */

typedef struct xml {
    const char *p;
    char why[128];
    char stack[32][32];
    int depth;
    int roots;
} xml_t;

static bool xml_fail(xml_t *x, const char *why)
{
    snprintf(x->why, sizeof(x->why), "%s at \"%.30s\"", why, x->p);
    return false;
}

static bool xml_name_char(char c, bool first)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
           (!first && ((c >= '0' && c <= '9') || c == '-' || c == '.'));
}

static size_t xml_name(const char *p)
{
    size_t n = 0;
    while (xml_name_char(p[n], n == 0))
        n++;
    return n;
}

/* An entity at p ('&'): its length, or 0 when not a valid one. */
static size_t xml_entity(const char *p)
{
    static const char *const named[] = {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;"};
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(named); i++)
        if (strncmp(p, named[i], strlen(named[i])) == 0)
            return strlen(named[i]);
    if (p[1] != '#')
        return 0;
    size_t n = 2;
    while (p[n] >= '0' && p[n] <= '9')
        n++;
    return n > 2 && p[n] == ';' ? n + 1 : 0;
}

/* Character data up to '<' (or the closing quote q in an attribute). */
static bool xml_chars(xml_t *x, char q)
{
    while (*x->p && *x->p != (q ? q : '<')) {
        if (*x->p == '<')
            return xml_fail(x, "'<' in an attribute");
        if (*x->p == '&') {
            size_t n = xml_entity(x->p);
            if (!n)
                return xml_fail(x, "bad entity");
            x->p += n;
            continue;
        }
        if (x->depth == 0 && q == 0 && *x->p != '\n' && *x->p != ' ')
            return xml_fail(x, "text outside the root");
        x->p++;
    }
    return true;
}

static bool xml_tag(xml_t *x)
{
    x->p++;
    size_t n = xml_name(x->p);
    if (!n || n >= sizeof(x->stack[0]))
        return xml_fail(x, "bad tag name");
    char name[32];
    memcpy(name, x->p, n);
    name[n] = '\0';
    x->p += n;
    for (;;) {
        while (*x->p == ' ' || *x->p == '\n')
            x->p++;
        if (strncmp(x->p, "/>", 2) == 0 || *x->p == '>')
            break;
        size_t an = xml_name(x->p);
        if (!an || x->p[an] != '=' || (x->p[an + 1] != '"' && x->p[an + 1] != '\''))
            return xml_fail(x, "bad attribute");
        char q = x->p[an + 1];
        x->p += an + 2;
        if (!xml_chars(x, q) || *x->p != q)
            return xml_fail(x, "unterminated attribute");
        x->p++;
    }
    if (x->depth == 0 && ++x->roots > 1)
        return xml_fail(x, "two roots");
    if (*x->p == '/') {
        x->p += 2;
        return true;
    }
    x->p++;
    if (x->depth == 32)
        return xml_fail(x, "too deep");
    memcpy(x->stack[x->depth++], name, n + 1);
    return true;
}

static bool xml_close(xml_t *x)
{
    x->p += 2;
    size_t n = xml_name(x->p);
    if (x->depth == 0 || strlen(x->stack[x->depth - 1]) != n ||
        strncmp(x->stack[x->depth - 1], x->p, n) != 0 || x->p[n] != '>')
        return xml_fail(x, "mismatched close tag");
    x->depth--;
    x->p += n + 1;
    return true;
}

static bool xml_well_formed(const char *doc, char *why, size_t why_len)
{
    xml_t x = {.p = doc};
    bool ok = strncmp(doc, "<?xml ", 6) == 0;
    if (ok) {
        const char *e = strstr(doc, "?>");
        x.p = e ? e + 2 : doc + strlen(doc);
    } else {
        xml_fail(&x, "no XML declaration");
    }
    while (ok && *x.p) {
        if (strncmp(x.p, "<!--", 4) == 0) {
            const char *e = strstr(x.p, "-->");
            ok = e != NULL;
            x.p = e ? e + 3 : x.p;
        } else if (strncmp(x.p, "</", 2) == 0) {
            ok = xml_close(&x);
        } else if (*x.p == '<') {
            ok = xml_tag(&x);
        } else {
            ok = xml_chars(&x, 0);
        }
    }
    if (ok && (x.depth != 0 || x.roots != 1))
        ok = xml_fail(&x, "unbalanced document");
    snprintf(why, why_len, "%s", x.why);
    return ok;
}

static void assert_svg(const corral_buf_t *b)
{
    char why[160];
    const char *s = corral_buf_str(b);
    cr_assert(xml_well_formed(s, why, sizeof(why)), "not well-formed: %s\n%s", why, s);
    cr_assert_not_null(strstr(s, "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" "
                                 "width=\"720\" height=\"420\""));
    cr_assert(b->len > 7 && strcmp(s + b->len - 7, "</svg>\n") == 0);
    cr_assert_null(strstr(s, "nan"), "%s", s);
    cr_assert_null(strstr(s, "inf"), "%s", s);
}

static size_t count(const char *s, const char *what)
{
    size_t n = 0;
    for (const char *p = strstr(s, what); p; p = strstr(p + 1, what))
        n++;
    return n;
}

/* --- tests --------------------------------------------------------------- */

static const double xs[] = {0, 1, 2, 3, 4, 5};
static const double ys[] = {0.1, 0.4, 0.2, 0.8, 0.5, 0.9};

Test(svg, self_check_of_the_xml_checker)
{
    char why[160];
    cr_assert(xml_well_formed("<?xml version=\"1.0\"?>\n<a x=\"1\"><b/>t &amp; u</a>\n", why,
                              sizeof(why)));
    cr_assert_not(xml_well_formed("<?xml version=\"1.0\"?><a><b></a></b>", why, sizeof(why)));
    cr_assert_not(xml_well_formed("<?xml version=\"1.0\"?><a>x & y</a>", why, sizeof(why)));
    cr_assert_not(xml_well_formed("<?xml version=\"1.0\"?><a t=\"<\"/>", why, sizeof(why)));
    cr_assert_not(xml_well_formed("<?xml version=\"1.0\"?><a/><b/>", why, sizeof(why)));
}

Test(svg, line_chart_is_a_complete_document)
{
    corral_svg_series_t s[2] = {{"alpha", xs, ys, 6}, {"beta", ys, xs, 6}};
    corral_svg_chart_t c;
    corral_svg_chart_init(&c);
    c.title = "Allocation";
    c.x_label = "arrived";
    c.y_label = "allocated";
    c.series = s;
    c.nseries = 2;
    corral_buf_t b;
    corral_buf_init(&b);
    cr_assert_eq(corral_svg_line_chart(&c, &b), 0);
    assert_svg(&b);
    const char *out = corral_buf_str(&b);
    cr_assert(strncmp(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", 39) == 0);
    cr_assert_not_null(strstr(out, "<title>Allocation</title>"));
    cr_assert_not_null(strstr(out, ">arrived</text>"));
    cr_assert_not_null(strstr(out, ">allocated</text>"));
    cr_assert_not_null(strstr(out, ">alpha</text>"));
    cr_assert_not_null(strstr(out, ">beta</text>"));
    cr_assert_eq(count(out, "<polyline"), 2);
    cr_assert_eq(count(out, "<circle"), 12 + 2, "markers on few points, and in the legend");
    cr_assert_not_null(strstr(out, "stroke=\"#0072B2\""));
    cr_assert_not_null(strstr(out, "stroke=\"#D55E00\""));
    /* The same input gives the same bytes. */
    corral_buf_t again;
    corral_buf_init(&again);
    cr_assert_eq(corral_svg_line_chart(&c, &again), 0);
    cr_assert_str_eq(corral_buf_str(&again), out);
    corral_buf_fini(&again);
    corral_buf_fini(&b);
}

Test(svg, text_is_escaped)
{
    corral_svg_series_t s[1] = {{"<x>&'y'", xs, ys, 6}};
    corral_svg_chart_t c;
    corral_svg_chart_init(&c);
    c.title = "a<b & \"c\"";
    c.x_label = "bad \xff utf-8 \xc3\x28 and \x01 control";
    c.y_label = "caf\xc3\xa9 \xe2\x80\x94 ok";
    c.series = s;
    c.nseries = 1;
    corral_buf_t b;
    corral_buf_init(&b);
    cr_assert_eq(corral_svg_line_chart(&c, &b), 0);
    assert_svg(&b);
    const char *out = corral_buf_str(&b);
    cr_assert_not_null(strstr(out, ">a&lt;b &amp; &quot;c&quot;</text>"));
    cr_assert_not_null(strstr(out, ">&lt;x&gt;&amp;&#39;y&#39;</text>"));
    cr_assert_not_null(strstr(out, ">bad \xef\xbf\xbd utf-8 \xef\xbf\xbd( and   control</text>"));
    cr_assert_not_null(strstr(out, ">caf\xc3\xa9 \xe2\x80\x94 ok</text>"));
    corral_buf_fini(&b);
}

Test(svg, long_legend_names_are_shortened)
{
    corral_svg_series_t s[1] = {{"a-very-long-policy-name-that-never-ends", xs, ys, 6}};
    corral_svg_chart_t c;
    corral_svg_chart_init(&c);
    c.series = s;
    c.nseries = 1;
    corral_buf_t b;
    corral_buf_init(&b);
    cr_assert_eq(corral_svg_line_chart(&c, &b), 0);
    assert_svg(&b);
    cr_assert_not_null(strstr(corral_buf_str(&b), ">a-very-long-poli\xe2\x80\xa6</text>"));
    corral_buf_fini(&b);
}

Test(svg, empty_series_and_no_series)
{
    corral_svg_series_t s[2] = {{"none", NULL, NULL, 0}, {"gap", xs, (double[]){NAN}, 1}};
    corral_svg_chart_t c;
    corral_svg_chart_init(&c);
    corral_buf_t b;
    corral_buf_init(&b);
    cr_assert_eq(corral_svg_line_chart(&c, &b), 0);
    assert_svg(&b);
    cr_assert_not_null(strstr(corral_buf_str(&b), ">no data</text>"));
    corral_buf_reset(&b);
    c.series = s;
    c.nseries = 2;
    cr_assert_eq(corral_svg_line_chart(&c, &b), 0);
    assert_svg(&b);
    const char *out = corral_buf_str(&b);
    cr_assert_not_null(strstr(out, ">no data</text>"));
    cr_assert_not_null(strstr(out, ">none</text>"));
    cr_assert_eq(count(out, "<polyline"), 0);
    corral_buf_fini(&b);
}

Test(svg, single_point_gets_a_marker_and_a_real_range)
{
    double x = 42, y = 7;
    corral_svg_series_t s[1] = {{NULL, &x, &y, 1}};
    corral_svg_chart_t c;
    corral_svg_chart_init(&c);
    c.series = s;
    c.nseries = 1;
    corral_buf_t b;
    corral_buf_init(&b);
    cr_assert_eq(corral_svg_line_chart(&c, &b), 0);
    assert_svg(&b);
    const char *out = corral_buf_str(&b);
    cr_assert_eq(count(out, "<polyline"), 0);
    cr_assert_eq(count(out, "<circle"), 1);
    cr_assert_null(strstr(out, "<line stroke-width=\"2\""), "no legend without names");
    /* y is 7 +- 0.7, widened to round ticks: 6, 6.5, ... 8 */
    cr_assert_not_null(strstr(out, ">6</text>"), "%s", out);
    cr_assert_not_null(strstr(out, ">6.5</text>"), "%s", out);
    cr_assert_not_null(strstr(out, ">8</text>"), "%s", out);
    corral_buf_fini(&b);
}

Test(svg, nan_values_are_skipped_and_break_the_line)
{
    double y[] = {0, 1, NAN, 3, INFINITY, 5, 6, 7};
    double x[] = {0, 1, 2, 3, 4, 5, 6, NAN};
    corral_svg_series_t s[1] = {{"gappy", x, y, 8}};
    corral_svg_chart_t c;
    corral_svg_chart_init(&c);
    c.series = s;
    c.nseries = 1;
    corral_buf_t b;
    corral_buf_init(&b);
    cr_assert_eq(corral_svg_line_chart(&c, &b), 0);
    assert_svg(&b);
    const char *out = corral_buf_str(&b);
    /* runs {0,1}, {3}, {5,6}: two polylines, 5 markers plus the legend's */
    cr_assert_eq(count(out, "<polyline"), 2, "%s", out);
    cr_assert_eq(count(out, "<circle"), 6);
    corral_buf_fini(&b);
}

Test(svg, constant_series_gets_height)
{
    double y[] = {5, 5, 5, 5, 5, 5};
    double z[] = {0, 0, 0, 0, 0, 0};
    corral_svg_series_t s[1] = {{"flat", xs, y, 6}};
    corral_svg_chart_t c;
    corral_svg_chart_init(&c);
    c.series = s;
    c.nseries = 1;
    corral_buf_t b;
    corral_buf_init(&b);
    cr_assert_eq(corral_svg_line_chart(&c, &b), 0);
    assert_svg(&b);
    cr_assert_not_null(strstr(corral_buf_str(&b), ">4.4</text>"));
    cr_assert_not_null(strstr(corral_buf_str(&b), ">5.6</text>"));
    corral_buf_reset(&b);
    s[0].y = z;
    cr_assert_eq(corral_svg_line_chart(&c, &b), 0);
    assert_svg(&b);
    cr_assert_not_null(strstr(corral_buf_str(&b), ">-1</text>"));
    cr_assert_not_null(strstr(corral_buf_str(&b), ">1</text>"));
    corral_buf_fini(&b);
}

Test(svg, tick_labels_percent_units_and_explicit_ranges)
{
    double big[] = {0, 3e6, 12.9e6};
    double frac[] = {0.05, 0.5, 0.97};
    corral_svg_series_t s[1] = {{"s", big, frac, 3}};
    corral_svg_chart_t c;
    corral_svg_chart_init(&c);
    c.series = s;
    c.nseries = 1;
    c.y_percent = true;
    corral_buf_t b;
    corral_buf_init(&b);
    cr_assert_eq(corral_svg_line_chart(&c, &b), 0);
    assert_svg(&b);
    const char *out = corral_buf_str(&b);
    cr_assert_not_null(strstr(out, ">0</text>"), "%s", out);
    cr_assert_not_null(strstr(out, ">5M</text>"), "%s", out);
    cr_assert_not_null(strstr(out, ">15M</text>"), "%s", out);
    cr_assert_not_null(strstr(out, ">0%</text>"), "%s", out);
    cr_assert_not_null(strstr(out, ">100%</text>"), "%s", out);
    corral_buf_reset(&b);
    c.x_min = 0;
    c.x_max = 10e6;
    c.y_min = 0.5;
    c.y_max = 1;
    cr_assert_eq(corral_svg_line_chart(&c, &b), 0);
    assert_svg(&b);
    out = corral_buf_str(&b);
    cr_assert_not_null(strstr(out, ">10M</text>"), "%s", out);
    cr_assert_null(strstr(out, ">15M</text>"), "%s", out);
    cr_assert_not_null(strstr(out, ">50%</text>"), "%s", out);
    cr_assert_null(strstr(out, ">40%</text>"), "%s", out);
    cr_assert_not_null(strstr(out, "clip-path=\"url(#plot-area)\""));
    corral_buf_fini(&b);
}

Test(svg, log_x_axis)
{
    double x[] = {-1, 0, 1, 50, 2e3, 9e5};
    corral_svg_series_t s[1] = {{"log", x, ys, 6}};
    corral_svg_chart_t c;
    corral_svg_chart_init(&c);
    c.series = s;
    c.nseries = 1;
    c.x_log = true;
    corral_buf_t b;
    corral_buf_init(&b);
    cr_assert_eq(corral_svg_line_chart(&c, &b), 0);
    assert_svg(&b);
    const char *out = corral_buf_str(&b);
    const char *labels[] = {">1</text>",   ">10</text>",   ">100</text>", ">1k</text>",
                            ">10k</text>", ">100k</text>", ">1M</text>"};
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(labels); i++)
        cr_assert_not_null(strstr(out, labels[i]), "%s", labels[i]);
    cr_assert_eq(count(out, "<polyline"), 1);
    cr_assert_eq(count(out, "<circle"), 4 + 1, "x <= 0 is not drawn");
    corral_buf_fini(&b);
}

Test(svg, palette_is_distinct_then_dashed)
{
    corral_svg_series_t s[9];
    const char *names[] = {"s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8"};
    for (int i = 0; i < 9; i++)
        s[i] = (corral_svg_series_t){names[i], xs, ys, 6};
    corral_svg_chart_t c;
    corral_svg_chart_init(&c);
    c.series = s;
    c.nseries = 9;
    corral_buf_t b;
    corral_buf_init(&b);
    cr_assert_eq(corral_svg_line_chart(&c, &b), 0);
    assert_svg(&b);
    const char *out = corral_buf_str(&b);
    const char *colours[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                             "#E69F00", "#56B4E9", "#000000"};
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(colours); i++) {
        char want[64];
        snprintf(want, sizeof(want), "<polyline stroke=\"%s\" points", colours[i]);
        cr_assert_eq(count(out, want), 1, "%s", colours[i]);
    }
    cr_assert_eq(count(out, "<polyline stroke=\"#0072B2\" stroke-dasharray=\"7 4\""), 1);
    cr_assert_eq(count(out, "<polyline stroke=\"#D55E00\" stroke-dasharray=\"7 4\""), 1);
    corral_buf_fini(&b);
}

Test(svg, many_series_legend_overflows_politely)
{
    corral_svg_series_t s[40];
    for (int i = 0; i < 40; i++)
        s[i] = (corral_svg_series_t){"name", xs, ys, 6};
    corral_svg_chart_t c;
    corral_svg_chart_init(&c);
    c.series = s;
    c.nseries = 40;
    corral_buf_t b;
    corral_buf_init(&b);
    cr_assert_eq(corral_svg_line_chart(&c, &b), 0);
    assert_svg(&b);
    cr_assert_not_null(strstr(corral_buf_str(&b), ">+26 more</text>"), "%s", corral_buf_str(&b));
    corral_buf_fini(&b);
}

Test(svg, invalid_arguments)
{
    corral_buf_t b;
    corral_buf_init(&b);
    corral_svg_chart_t c;
    corral_svg_series_t s[1] = {{"x", NULL, ys, 3}};
    cr_assert_eq(corral_svg_line_chart(NULL, &b), CORRAL_EINVAL);
    corral_svg_chart_init(&c);
    c.series = s;
    c.nseries = 1;
    cr_assert_eq(corral_svg_line_chart(&c, &b), CORRAL_EINVAL);
    s[0].x = xs;
    c.x_min = 5;
    c.x_max = 5;
    cr_assert_eq(corral_svg_line_chart(&c, &b), CORRAL_EINVAL);
    c.x_max = INFINITY;
    cr_assert_eq(corral_svg_line_chart(&c, &b), CORRAL_EINVAL);
    c.x_min = 0;
    c.x_max = 10;
    c.x_log = true;
    cr_assert_eq(corral_svg_line_chart(&c, &b), CORRAL_EINVAL);
    c.nseries = 0;
    c.series = NULL;
    c.x_log = false;
    c.nseries = 1;
    cr_assert_eq(corral_svg_line_chart(&c, &b), CORRAL_EINVAL);
    cr_assert_eq(b.len, 0, "nothing written on error");
    cr_assert_eq(corral_svg_cdf(NULL, NULL, 0, &b), CORRAL_EINVAL);
    corral_svg_chart_init(&c);
    corral_svg_samples_t bad = {"x", NULL, 4};
    cr_assert_eq(corral_svg_cdf(&c, &bad, 1, &b), CORRAL_EINVAL);
    cr_assert_eq(b.len, 0);
    corral_buf_fini(&b);
}

Test(svg, extreme_values_stay_valid)
{
    double x[] = {-1e308, 1e-310, 1e299, 2e299};
    double y[] = {1e300, -1e300, 1e-300, 1e-300};
    corral_svg_series_t s[1] = {{"extreme", x, y, 4}};
    corral_svg_chart_t c;
    corral_svg_chart_init(&c);
    c.series = s;
    c.nseries = 1;
    corral_buf_t b;
    corral_buf_init(&b);
    cr_assert_eq(corral_svg_line_chart(&c, &b), 0);
    assert_svg(&b);
    corral_buf_reset(&b);
    c.x_log = true;
    cr_assert_eq(corral_svg_line_chart(&c, &b), 0);
    assert_svg(&b);
    /* Found by fuzzing: a subnormal alone, and values one ulp apart. */
    double tiny = 9.4e-323, close[] = {1, 1 + 2.2e-16};
    corral_svg_samples_t set = {"tiny", &tiny, 1};
    corral_svg_chart_init(&c);
    corral_buf_reset(&b);
    cr_assert_eq(corral_svg_cdf(&c, &set, 1, &b), 0);
    assert_svg(&b);
    s[0] = (corral_svg_series_t){"close", close, close, 2};
    c.series = s;
    c.nseries = 1;
    corral_buf_reset(&b);
    cr_assert_eq(corral_svg_line_chart(&c, &b), 0);
    assert_svg(&b);
    corral_buf_fini(&b);
}

/* Polyline point count of the first polyline in s. */
static size_t polyline_points(const char *s)
{
    const char *p = strstr(s, "points=\"");
    cr_assert_not_null(p);
    p += 8;
    size_t n = 1;
    for (; *p != '"'; p++)
        n += *p == ' ';
    return n;
}

Test(svg, cdf_steps_exact_and_through_quantiles)
{
    double v[] = {3, 1, NAN, 2};
    corral_svg_samples_t set = {"delay", v, 4};
    corral_svg_chart_t c;
    corral_svg_chart_init(&c);
    c.title = "Queueing delay";
    c.y_percent = true;
    corral_buf_t b;
    corral_buf_init(&b);
    cr_assert_eq(corral_svg_cdf(&c, &set, 1, &b), 0);
    assert_svg(&b);
    const char *out = corral_buf_str(&b);
    cr_assert_eq(polyline_points(out), 6, "two points per sample, NaN dropped");
    cr_assert_not_null(strstr(out, ">100%</text>"));
    cr_assert_not_null(strstr(out, ">0%</text>"));
    cr_assert_eq(v[0], 3, "the samples are not sorted in place");

    size_t n = 100000;
    double *many = malloc(n * sizeof(*many));
    for (size_t i = 0; i < n; i++)
        many[i] = (double)((i * 7919) % n) + 1;
    corral_svg_samples_t sets[2] = {{"many", many, n}, {"empty", NULL, 0}};
    c.x_log = true;
    corral_buf_reset(&b);
    cr_assert_eq(corral_svg_cdf(&c, sets, 2, &b), 0);
    assert_svg(&b);
    cr_assert_eq(polyline_points(corral_buf_str(&b)), 2000);
    cr_assert_lt(b.len, 64 * 1024);
    free(many);
    corral_buf_fini(&b);
}
