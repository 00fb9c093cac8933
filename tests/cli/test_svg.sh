# SVG charts: a small program linked against build/libcorral.a draws charts
# with hostile text, empty, single-point, NaN, constant, log-scale and CDF
# data; xmllint must find every document well-formed. Skipped (exit 77) when
# xmllint or a C compiler is missing.
. tests/cli/lib.bash

command -v xmllint >/dev/null 2>&1 || { echo "xmllint not installed (Debian libxml2-utils)"; exit 77; }
cc=${CC:-cc}
command -v "$cc" >/dev/null 2>&1 || { echo "no C compiler"; exit 77; }
[ -f build/libcorral.a ] || { echo "build/libcorral.a not built"; exit 77; }

cat >"$TMP/charts.c" <<'C'
#include <math.h>
#include <stdio.h>

#include "corral/svg.h"

static int save(const char *dir, const char *name, corral_buf_t *b)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s.svg", dir, name);
    FILE *f = fopen(path, "w");
    if (!f)
        return 1;
    fwrite(b->p, 1, b->len, f);
    fclose(f);
    corral_buf_reset(b);
    return 0;
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : ".";
    double x[] = {0.5, 0.75, 0.9, 1.0, 1.1, 1.3}, y[] = {0.5, 0.75, 0.9, 0.95, 0.953, 0.954};
    double gap[] = {1, NAN, 3, INFINITY, 5, 6}, flat[] = {2, 2, 2, 2, 2, 2}, one = 4;
    corral_svg_series_t s[] = {{"<b>&amp; \"q\" 'a' \xff\xfe", x, y, 6}, {"gap", x, gap, 6},
                               {"flat", x, flat, 6}, {"one", &one, &one, 1}, {"none", NULL, NULL, 0}};
    corral_svg_chart_t c;
    corral_buf_t b;
    int rc = 0;
    corral_buf_init(&b);
    corral_svg_chart_init(&c);
    c.title = "T <&> \"x\" ]]> <!-- -->";
    c.x_label = "arrived & <done>";
    c.y_label = "alloc \x01\x7f";
    c.series = s;
    c.nseries = 5;
    c.x_percent = c.y_percent = true;
    rc |= corral_svg_line_chart(&c, &b) || save(dir, "mixed", &b);
    corral_svg_chart_init(&c);
    rc |= corral_svg_line_chart(&c, &b) || save(dir, "empty", &b);
    c.series = &s[3];
    c.nseries = 1;
    rc |= corral_svg_line_chart(&c, &b) || save(dir, "single", &b);
    double big[200], wave[200];
    for (int i = 0; i < 200; i++) {
        big[i] = 1 + i * i * 250.0;
        wave[i] = 0.5 + 0.4 * sin(i / 9.0);
    }
    corral_svg_series_t w = {"wave", big, wave, 200};
    corral_svg_chart_init(&c);
    c.series = &w;
    c.nseries = 1;
    c.x_log = true;
    rc |= corral_svg_line_chart(&c, &b) || save(dir, "log", &b);
    corral_svg_samples_t sets[] = {{"delay", big, 200}, {"wave", wave, 200}, {"nothing", NULL, 0}};
    corral_svg_chart_init(&c);
    c.title = "CDF";
    c.y_percent = true;
    rc |= corral_svg_cdf(&c, sets, 3, &b) || save(dir, "cdf", &b);
    corral_buf_fini(&b);
    return rc;
}
C

if ! "$cc" -std=c17 -D_GNU_SOURCE -Iinclude -o "$TMP/charts" "$TMP/charts.c" build/libcorral.a -lm \
    >"$TMP/cc.log" 2>&1; then
    fail "cannot build the chart program: $(cat "$TMP/cc.log")"
    finish
fi
expect_exit 0 "$TMP/charts" "$TMP"
for name in mixed empty single log cdf; do
    f=$TMP/$name.svg
    [ -s "$f" ] || { fail "$name.svg not written"; continue; }
    expect_exit 0 xmllint --noout "$f"
    expect_exit 0 xmllint --xpath 'string(/*[local-name()="svg"]/@width)' "$f"
    [ "$OUT" = 720 ] || fail "$name.svg: width $OUT"
done
expect_exit 0 xmllint --xpath 'string(//*[local-name()="title"])' "$TMP/mixed.svg"
expect_out 'T <&> "x" ]]> <!-- -->'
# One line each for the first and flat series, one for the gap series' last
# run (its other runs are lone points, drawn as markers), none for "one".
expect_exit 0 xmllint --xpath 'count(//*[local-name()="polyline"])' "$TMP/mixed.svg"
[ "$OUT" = 3 ] || fail "expected 3 polylines, got $OUT"
finish
