/*
 * The replay report: report.md with the summary and per-queue tables, and
 * two charts drawn by Corral: GPU allocation over time (allocation.svg, one
 * line per policy, time-weighted means over 600 buckets) and the CDF of
 * queueing delay (delay-cdf.svg, log time axis).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "corral/svg.h"
#include "sim/replay_int.h"

#define BUCKETS 600

/* Time-weighted mean allocation (%) in each of BUCKETS buckets of [0, t1]
 * after the first arrival. */
static void bucketize(const rresult_t *r, double t1_ms, double *y)
{
    double w = t1_ms / BUCKETS;
    double area[BUCKETS] = {0};
    double t0 = r->nsamples ? (double)r->samples[0].t : 0; /* the first arrival */
    for (size_t i = 0; i < r->nsamples; i++) {
        double a = (double)r->samples[i].t - t0;
        double b = i + 1 < r->nsamples ? (double)r->samples[i + 1].t - t0 : t1_ms;
        double v = (double)r->samples[i].used;
        for (int k = (int)(a / w); k < BUCKETS && a < b; k++) {
            double end = fmin(b, (k + 1) * w);
            area[k] += v * (end - a);
            a = end;
        }
    }
    for (int k = 0; k < BUCKETS; k++)
        y[k] = 100.0 * area[k] / (w * (double)r->capacity_milli);
}

static int chart_allocation(const rresult_t *res, size_t n, const char *dir, corral_diag_t *d)
{
    double t1 = 0;
    for (size_t i = 0; i < n; i++)
        t1 = fmax(t1, res[i].makespan_s * 1000.0);
    if (t1 <= 0)
        t1 = 1;
    bool days = t1 > 2 * 86400e3;
    double unit = days ? 86400e3 : 3600e3;
    double *x = corral_malloc(BUCKETS * sizeof(double));
    double *y = corral_malloc(n * BUCKETS * sizeof(double));
    corral_svg_series_t *ser = corral_malloc((n + 1) * sizeof(*ser));
    for (int k = 0; k < BUCKETS; k++)
        x[k] = (k + 0.5) * t1 / BUCKETS / unit;
    for (size_t i = 0; i < n; i++) {
        bucketize(&res[i], t1, &y[i * BUCKETS]);
        ser[i] = (corral_svg_series_t){res[i].pol->name, x, &y[i * BUCKETS], BUCKETS};
    }
    corral_svg_chart_t c;
    corral_svg_chart_init(&c);
    c.title = "GPU allocation over time (replay)";
    c.x_label = days ? "time, days" : "time, hours";
    c.y_label = "allocated, % of GPU capacity";
    c.series = ser;
    c.nseries = n;
    c.x_min = 0;
    c.y_min = 0, c.y_max = 100;
    corral_buf_t b;
    corral_buf_init(&b);
    corral_svg_line_chart(&c, &b);
    int rc = corral__write_file(dir, "allocation.svg", &b, d);
    corral_buf_fini(&b);
    corral_free(ser);
    corral_free(y);
    corral_free(x);
    return rc;
}

/* Delays under a second are drawn at one second (the axis is logarithmic). */
static int chart_delays(const rresult_t *res, size_t n, const char *dir, corral_diag_t *d)
{
    corral_svg_samples_t *sets = corral_malloc((n + 1) * sizeof(*sets));
    double **v = corral_malloc((n + 1) * sizeof(*v));
    for (size_t i = 0; i < n; i++) {
        v[i] = corral_malloc((res[i].ndelays + 1) * sizeof(double));
        for (size_t k = 0; k < res[i].ndelays; k++)
            v[i][k] = fmax(res[i].delays[k], 1.0);
        sets[i] = (corral_svg_samples_t){res[i].pol->name, v[i], res[i].ndelays};
    }
    corral_svg_chart_t c;
    corral_svg_chart_init(&c);
    c.title = "Queueing delay, CDF over started jobs";
    c.x_label = "delay, seconds (under 1 s drawn at 1 s)";
    c.y_label = "jobs started within";
    c.x_log = true;
    c.y_percent = true;
    corral_buf_t b;
    corral_buf_init(&b);
    corral_svg_cdf(&c, sets, n, &b);
    int rc = corral__write_file(dir, "delay-cdf.svg", &b, d);
    corral_buf_fini(&b);
    for (size_t i = 0; i < n; i++)
        corral_free(v[i]);
    corral_free(v);
    corral_free(sets);
    return rc;
}

static void md_summary(corral_buf_t *b, const rresult_t *res, size_t n)
{
    corral_buf_puts(b, "\n| policy | mean alloc % | p50 alloc % | delay p50 s | delay p95 s | "
                       "delay p99 s | JCT mean s | JCT p95 s | evicted pods | lost GPU-h | "
                       "unstarted |\n|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (size_t i = 0; i < n; i++) {
        const rresult_t *r = &res[i];
        corral_buf_printf(
            b, "| %s | %.2f | %.2f | %.0f | %.0f | %.0f | %.0f | %.0f | %lld | %.1f | %lld |\n",
            r->pol->name, r->alloc_mean, r->alloc_p50, r->delay_p50, r->delay_p95, r->delay_p99,
            r->jct_mean, r->jct_p95, (long long)r->preempted_pods, r->lost_gpu_hours,
            (long long)r->unstarted);
    }
}

static void md_queues(corral_buf_t *b, const rresult_t *res, size_t n)
{
    if (res[0].nqueues < 2)
        return;
    corral_buf_puts(b, "\n### Share of GPU-time by queue, %\n\n| queue | jobs |");
    for (size_t i = 0; i < n; i++)
        corral_buf_printf(b, " %s |", res[i].pol->name);
    corral_buf_puts(b, "\n|---|---|");
    for (size_t i = 0; i < n; i++)
        corral_buf_puts(b, "---|");
    for (size_t k = 0; k < res[0].nqueues; k++) {
        corral_buf_printf(b, "\n| %s | %lld |", res[0].queues[k].name,
                          (long long)res[0].queues[k].jobs);
        for (size_t i = 0; i < n; i++)
            corral_buf_printf(b, " %.2f |", res[i].queues[k].share);
    }
    corral_buf_puts(b, "\n");
}

int corral__replay_report(const rresult_t *res, size_t n, const sim_cluster_t *c,
                          const corral_sim_trace_opts_t *o, corral_diag_t *d)
{
    corral_buf_t b;
    corral_buf_init(&b);
    corral_buf_printf(&b,
                      "# Trace simulation: replay\n\n- trace: `%s` (%lld jobs)\n"
                      "- cluster: %zu nodes, %lld GPUs\n- arrival window: %.1f h; last event "
                      "at %.1f h\n- allocation is time-weighted over the arrival window; delays "
                      "are first start minus arrival (nearest-rank percentiles)\n",
                      o->trace, (long long)res[0].jobs, c->nnodes, (long long)c->gpus,
                      res[0].window_s / 3600, res[0].makespan_s / 3600);
    corral_buf_printf(&b,
                      "- runtime estimates: %s (the same for every policy); checkpoint interval "
                      "%.0f s, min-runtime %.0f s (0: none)\n",
                      o->estimates ? o->estimates : "user", (double)o->checkpoint_ms / 1000.0,
                      (double)o->min_runtime_ms / 1000.0);
    md_summary(&b, res, n);
    md_queues(&b, res, n);
    corral__rshare_md(&b, res, n);
    corral_buf_puts(&b, "\n![allocation over time](allocation.svg)\n\n"
                        "![queueing delay CDF](delay-cdf.svg)\n");
    int rc = corral__write_file(o->report_dir, "report.md", &b, d);
    corral_buf_fini(&b);
    if (rc == 0)
        rc = chart_allocation(res, n, o->report_dir, d);
    if (rc == 0)
        rc = chart_delays(res, n, o->report_dir, d);
    return rc;
}
