/*
 * Running the FGD protocol for several policies and seeds: the runs are
 * independent (an engine each), so they go on a small pool of threads; then
 * the mean and spread over seeds at each report point, as a table, as JSON,
 * and as a report with a chart of allocation against arrived work.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "corral/buf.h"
#include "corral/svg.h"
#include "sim/trace_sim.h"

#define FIRST_SEED 42 /* the paper's seeds are 42..51 */

typedef struct pool {
    const sim_cluster_t *c;
    const sim_workload_t *w;
    const sim_policy_t **pol;
    size_t npol;
    int seeds;
    uint64_t first_seed;
    fgd_run_t *runs; /* npol * seeds */
    size_t next, done, total;
    pthread_mutex_t mu;
    FILE *progress;
} pool_t;

static void *worker(void *arg)
{
    pool_t *p = arg;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        size_t i = p->next < p->total ? p->next++ : SIZE_MAX;
        pthread_mutex_unlock(&p->mu);
        if (i == SIZE_MAX)
            return NULL;
        size_t pi = i / (size_t)p->seeds, si = i % (size_t)p->seeds;
        corral__fgd_run(p->c, p->w->pods, p->w->npods, p->pol[pi], p->first_seed + si, &p->runs[i]);
        pthread_mutex_lock(&p->mu);
        p->done++;
        if (p->progress)
            fprintf(p->progress, "\r  fgd protocol: %zu/%zu runs", p->done, p->total);
        pthread_mutex_unlock(&p->mu);
    }
}

static void run_all(pool_t *p, int threads)
{
    pthread_mutex_init(&p->mu, NULL);
    corral__sim_parallel(worker, p, threads, p->total);
    pthread_mutex_destroy(&p->mu);
    if (p->progress)
        fprintf(p->progress, "\n");
}

/* --- aggregation ------------------------------------------------------------------------------ */

typedef struct stat {
    double mean, sd;
} stat_t;

static stat_t over_seeds(const fgd_run_t *runs, int seeds, int what, int point)
{
    double sum = 0, sq = 0;
    for (int s = 0; s < seeds; s++) {
        const fgd_run_t *r = &runs[s];
        double v = what == 0   ? 100.0 - r->alloc[point]
                   : what == 1 ? r->frag[point]
                   : what == 2 ? r->frag_ratio[point]
                               : r->alloc[point];
        sum += v;
        sq += v * v;
    }
    stat_t st = {sum / seeds, 0};
    if (seeds > 1) {
        double var = (sq - sum * sum / seeds) / (seeds - 1);
        st.sd = var > 0 ? sqrt(var) : 0;
    }
    return st;
}

static void table(FILE *out, const pool_t *p, int what, const char *title)
{
    fprintf(out, "\n%s (mean ± sd over %d seeds) when arrived work reaches\n%-9s", title, p->seeds,
            "policy");
    for (int k = 0; k < FGD_POINTS; k++)
        fprintf(out, " %12d%%", corral__fgd_points[k]);
    fprintf(out, "\n");
    for (size_t i = 0; i < p->npol; i++) {
        fprintf(out, "%-9s", p->pol[i]->name);
        for (int k = 0; k < FGD_POINTS; k++) {
            stat_t st = over_seeds(&p->runs[i * (size_t)p->seeds], p->seeds, what, k);
            fprintf(out, " %7.2f±%-5.2f", st.mean, st.sd);
        }
        fprintf(out, "\n");
    }
}

static void json_policy(corral_buf_t *b, const pool_t *p, size_t i, const char *indent)
{
    const fgd_run_t *runs = &p->runs[i * (size_t)p->seeds];
    stat_t u100 = over_seeds(runs, p->seeds, 0, 3);
    corral_buf_printf(b, "%s\"policy\": \"%s\",\n%s\"unallocated_gpu_pct_at_100\": %.4f,\n", indent,
                      p->pol[i]->name, indent, u100.mean);
    corral_buf_printf(b, "%s\"unallocated_gpu_pct_at_100_sd\": %.4f,\n%s\"points\": [", indent,
                      u100.sd, indent);
    for (int k = 0; k < FGD_POINTS; k++) {
        stat_t a = over_seeds(runs, p->seeds, 3, k), u = over_seeds(runs, p->seeds, 0, k);
        stat_t f = over_seeds(runs, p->seeds, 1, k), r = over_seeds(runs, p->seeds, 2, k);
        corral_buf_printf(b,
                          "%s\n%s  {\"arrived_pct\": %d, \"allocation_pct\": %.4f, "
                          "\"allocation_pct_sd\": %.4f, \"unallocated_pct\": %.4f, "
                          "\"frag_pct\": %.4f, \"frag_pct_sd\": %.4f, \"frag_ratio_pct\": %.4f}",
                          k ? "," : "", indent, corral__fgd_points[k], a.mean, a.sd, u.mean, f.mean,
                          f.sd, r.mean);
    }
    corral_buf_printf(b, "\n%s],\n%s\"allocation_curve\": [", indent, indent);
    for (int x = 0; x <= 130; x++) {
        double s = 0;
        for (int j = 0; j < p->seeds; j++)
            s += runs[j].curve[x];
        corral_buf_printf(b, "%s%.3f", x ? ", " : "", s / p->seeds);
    }
    int64_t failed = 0, pods = 0;
    for (int j = 0; j < p->seeds; j++)
        failed += runs[j].failed, pods += runs[j].pods;
    corral_buf_printf(b, "],\n%s\"pods_per_run\": %.1f,\n%s\"failed_per_run\": %.1f", indent,
                      (double)pods / p->seeds, indent, (double)failed / p->seeds);
}

static void print_json(FILE *out, const pool_t *p, const corral_sim_trace_opts_t *o)
{
    corral_buf_t b;
    corral_buf_init(&b);
    corral_buf_puts(&b, "{\n  \"protocol\": \"fgd\",\n  \"trace\": ");
    corral_json_quote(&b, o->trace, strlen(o->trace));
    corral_buf_printf(&b, ",\n  \"nodes\": %zu,\n  \"gpus\": %lld,\n  \"seeds\": %d,\n",
                      p->c->nnodes, (long long)p->c->gpus, p->seeds);
    if (p->npol == 1) {
        json_policy(&b, p, 0, "  ");
        corral_buf_puts(&b, "\n}\n");
    } else {
        corral_buf_puts(&b, "  \"policies\": [");
        for (size_t i = 0; i < p->npol; i++) {
            corral_buf_puts(&b, i ? ",\n    {\n" : "\n    {\n");
            json_policy(&b, p, i, "      ");
            corral_buf_puts(&b, "\n    }");
        }
        corral_buf_puts(&b, "\n  ]\n}\n");
    }
    fputs(corral_buf_str(&b), out);
    corral_buf_fini(&b);
}

/* --- report ---------------------------------------------------------------------------------- */

static void md_table(corral_buf_t *b, const pool_t *p, int what, const char *title)
{
    corral_buf_printf(b, "\n### %s\n\n| policy |", title);
    for (int k = 0; k < FGD_POINTS; k++)
        corral_buf_printf(b, " %d%% |", corral__fgd_points[k]);
    corral_buf_puts(b, "\n|---|");
    for (int k = 0; k < FGD_POINTS; k++)
        corral_buf_puts(b, "---|");
    for (size_t i = 0; i < p->npol; i++) {
        corral_buf_printf(b, "\n| %s |", p->pol[i]->name);
        for (int k = 0; k < FGD_POINTS; k++) {
            stat_t st = over_seeds(&p->runs[i * (size_t)p->seeds], p->seeds, what, k);
            corral_buf_printf(b, " %.2f ± %.2f |", st.mean, st.sd);
        }
    }
    corral_buf_puts(b, "\n");
}

static int write_chart(const pool_t *p, const char *dir, corral_diag_t *d)
{
    double x[131];
    for (int i = 0; i <= 130; i++)
        x[i] = i;
    double *y = corral_malloc(p->npol * 131 * sizeof(double));
    corral_svg_series_t *ser = corral_malloc((p->npol + 1) * sizeof(*ser));
    for (size_t i = 0; i < p->npol; i++) {
        for (int k = 0; k <= 130; k++) {
            double s = 0;
            for (int j = 0; j < p->seeds; j++)
                s += p->runs[i * (size_t)p->seeds + (size_t)j].curve[k];
            y[i * 131 + (size_t)k] = s / p->seeds;
        }
        ser[i] = (corral_svg_series_t){p->pol[i]->name, x, &y[i * 131], 131};
    }
    corral_svg_chart_t c;
    corral_svg_chart_init(&c);
    c.title = "GPU allocation as work arrives (FGD protocol, mean over seeds)";
    c.x_label = "arrived work, % of GPU capacity";
    c.y_label = "allocated, % of GPU capacity";
    c.series = ser;
    c.nseries = p->npol;
    c.x_min = 0, c.x_max = 130, c.y_min = 0, c.y_max = 100;
    corral_buf_t b;
    corral_buf_init(&b);
    corral_svg_line_chart(&c, &b);
    int rc = corral__write_file(dir, "allocation.svg", &b, d);
    corral_buf_fini(&b);
    corral_free(ser);
    corral_free(y);
    return rc;
}

static int write_report(const pool_t *p, const corral_sim_trace_opts_t *o, corral_diag_t *d)
{
    corral_buf_t b;
    corral_buf_init(&b);
    corral_buf_printf(&b,
                      "# Trace simulation: FGD protocol\n\n"
                      "- trace: `%s`\n- cluster: %zu nodes, %lld GPUs\n- seeds: %d (%llu..%llu)\n"
                      "- protocol: inflate to 130%% of GPU capacity, shuffle, place one at a "
                      "time, no departures (SCENARIOS.md §2)\n\n![allocation](allocation.svg)\n",
                      o->trace, p->c->nnodes, (long long)p->c->gpus, p->seeds,
                      (unsigned long long)p->first_seed,
                      (unsigned long long)p->first_seed + (unsigned)p->seeds - 1);
    md_table(&b, p, 0, "Unallocated GPU % (lower is better)");
    md_table(&b, p, 1, "Fragmentation, % of GPU capacity");
    md_table(&b, p, 2, "Fragmentation ratio, % of idle GPU");
    int rc = corral__write_file(o->report_dir, "report.md", &b, d);
    corral_buf_fini(&b);
    if (rc == 0)
        rc = write_chart(p, o->report_dir, d);
    return rc;
}

int corral__fgd_main(const corral_sim_trace_opts_t *o, const sim_cluster_t *c,
                     const sim_workload_t *w, const sim_policy_t **pol, size_t npol,
                     corral_diag_t *d)
{
    pool_t p;
    memset(&p, 0, sizeof(p));
    p.c = c;
    p.w = w;
    p.pol = pol;
    p.npol = npol;
    p.seeds = o->seeds > 0 ? o->seeds : 10;
    p.first_seed = o->has_seed ? o->seed : FIRST_SEED;
    p.total = npol * (size_t)p.seeds;
    p.runs = corral_calloc(p.total, sizeof(*p.runs));
    p.progress = o->progress ? o->err : NULL;
    run_all(&p, o->threads);
    if (o->json) {
        print_json(o->out, &p, o);
    } else {
        fprintf(o->out, "FGD protocol: %zu nodes, %lld GPUs, %zu pods in %s, %d seeds\n", c->nnodes,
                (long long)c->gpus, w->npods, o->trace, p.seeds);
        table(o->out, &p, 0, "unallocated GPU %");
        table(o->out, &p, 1, "fragmentation, % of GPU capacity");
        table(o->out, &p, 2, "fragmentation ratio, % of idle GPU");
    }
    int rc = o->report_dir ? write_report(&p, o, d) : 0;
    corral_free(p.runs);
    return rc;
}
