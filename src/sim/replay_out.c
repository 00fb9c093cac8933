/*
 * The replay protocol for several policies: one replay per policy, on a
 * small pool of threads (each has its own engine), then a table, JSON, and a
 * report with allocation over time and the queueing-delay CDF.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "corral/svg.h"
#include "corral/val.h"
#include "sim/replay_int.h"

typedef struct rpool {
    const sim_cluster_t *c;
    const sim_workload_t *w;
    const sim_policy_t **pol;
    size_t npol;
    rresult_t *res;
    size_t next;
    size_t *done; /* arrivals handled, per policy */
    pthread_mutex_t mu;
    FILE *progress;
} rpool_t;

typedef struct rslot {
    rpool_t *p;
    size_t i;
} rslot_t;

static void print_progress(rpool_t *p)
{
    size_t sum = 0;
    for (size_t i = 0; i < p->npol; i++)
        sum += p->done[i];
    fprintf(p->progress, "\r  replay: %zu/%zu arrivals", sum, p->npol * p->w->npods);
}

static void progress(void *ctx, size_t done, size_t total)
{
    (void)total;
    rslot_t *s = ctx;
    pthread_mutex_lock(&s->p->mu);
    s->p->done[s->i] = done;
    print_progress(s->p);
    pthread_mutex_unlock(&s->p->mu);
}

static void *worker(void *arg)
{
    rpool_t *p = arg;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        size_t i = p->next < p->npol ? p->next++ : SIZE_MAX;
        pthread_mutex_unlock(&p->mu);
        if (i == SIZE_MAX)
            return NULL;
        rslot_t slot = {p, i};
        corral__replay_run(p->c, p->w, p->pol[i], p->progress ? progress : NULL, &slot, &p->res[i]);
        pthread_mutex_lock(&p->mu);
        p->done[i] = p->w->npods;
        if (p->progress)
            print_progress(p);
        pthread_mutex_unlock(&p->mu);
    }
}

static void run_all(rpool_t *p, int threads)
{
    pthread_mutex_init(&p->mu, NULL);
    corral__sim_parallel(worker, p, threads, p->npol);
    pthread_mutex_destroy(&p->mu);
    if (p->progress)
        fprintf(p->progress, "\n");
}

/* --- text ----------------------------------------------------------------------------------- */

/* A duration for people: 42s, 17m, 3.5h, 2.1d. */
static const char *human(double s, char *buf, size_t n)
{
    if (s < 120)
        snprintf(buf, n, "%.0fs", s);
    else if (s < 7200)
        snprintf(buf, n, "%.0fm", s / 60);
    else if (s < 172800)
        snprintf(buf, n, "%.1fh", s / 3600);
    else
        snprintf(buf, n, "%.1fd", s / 86400);
    return buf;
}

static void print_table(FILE *out, const rpool_t *p)
{
    fprintf(out, "\n%-8s %7s %7s %8s %8s %8s %8s %8s %8s %9s %9s\n", "policy", "alloc%", "p50%",
            "delay50", "delay95", "delay99", "jct-mean", "jct-p95", "evicted", "unstarted",
            "lost-GPUh");
    for (size_t i = 0; i < p->npol; i++) {
        const rresult_t *r = &p->res[i];
        char a[5][16];
        fprintf(out, "%-8s %7.2f %7.2f %8s %8s %8s %8s %8s %8lld %9lld %9.1f\n", r->pol->name,
                r->alloc_mean, r->alloc_p50, human(r->delay_p50, a[0], 16),
                human(r->delay_p95, a[1], 16), human(r->delay_p99, a[2], 16),
                human(r->jct_mean, a[3], 16), human(r->jct_p95, a[4], 16),
                (long long)r->preempted_pods, (long long)r->unstarted, r->lost_gpu_hours);
    }
}

static void print_queues(FILE *out, const rpool_t *p)
{
    const rresult_t *r0 = &p->res[0];
    if (r0->nqueues < 2)
        return;
    fprintf(out, "\nshare of GPU-time by queue, %%\n%-14s %7s", "queue", "jobs");
    for (size_t i = 0; i < p->npol; i++)
        fprintf(out, " %8s", p->pol[i]->name);
    fprintf(out, "\n");
    for (size_t k = 0; k < r0->nqueues; k++) {
        fprintf(out, "%-14s %7lld", r0->queues[k].name, (long long)r0->queues[k].jobs);
        for (size_t i = 0; i < p->npol; i++)
            fprintf(out, " %8.2f", p->res[i].queues[k].share);
        fprintf(out, "\n");
    }
}

static void print_text(FILE *out, const rpool_t *p, const corral_sim_trace_opts_t *o)
{
    const rresult_t *r0 = &p->res[0];
    char a[2][16];
    fprintf(out,
            "replay: %zu nodes, %lld GPUs, %lld jobs in %s; arrivals over %s, last event at %s\n",
            p->c->nnodes, (long long)p->c->gpus, (long long)r0->jobs, o->trace,
            human(r0->window_s, a[0], 16), human(r0->makespan_s, a[1], 16));
    fprintf(out, "runtime estimates: %s", corral__estimates_name(p->w->estimates));
    if (p->w->checkpoint_ms > 0)
        fprintf(out, "; checkpoints every %s",
                human((double)p->w->checkpoint_ms / 1000.0, a[0], 16));
    if (p->w->min_runtime_ms > 0)
        fprintf(out, "; min-runtime %s", human((double)p->w->min_runtime_ms / 1000.0, a[0], 16));
    fprintf(out, "\n");
    print_table(out, p);
    if (r0->infeasible)
        fprintf(out, "(%lld jobs ask for more GPUs than the cluster has and never run)\n",
                (long long)r0->infeasible);
    print_queues(out, p);
    corral__rshare_print(out, p->res, p->npol);
}

/* --- JSON ----------------------------------------------------------------------------------- */

static void json_result(corral_buf_t *b, const rresult_t *r, const char *ind)
{
    corral_buf_printf(b, "%s\"policy\": \"%s\",\n", ind, r->pol->name);
    corral_buf_printf(b, "%s\"allocation_mean_pct\": %.4f,\n%s\"allocation_p50_pct\": %.4f,\n", ind,
                      r->alloc_mean, ind, r->alloc_p50);
    corral_buf_printf(b,
                      "%s\"queueing_delay_s\": {\"mean\": %.3f, \"p50\": %.3f, \"p95\": %.3f, "
                      "\"p99\": %.3f},\n",
                      ind, r->delay_mean, r->delay_p50, r->delay_p95, r->delay_p99);
    corral_buf_printf(b, "%s\"jct_s\": {\"mean\": %.3f, \"p50\": %.3f, \"p95\": %.3f},\n", ind,
                      r->jct_mean, r->jct_p50, r->jct_p95);
    corral_buf_printf(b,
                      "%s\"jobs\": %lld, \"started\": %lld, \"completed\": %lld, \"unstarted\": "
                      "%lld, \"infeasible\": %lld,\n",
                      ind, (long long)r->jobs, (long long)r->started, (long long)r->completed,
                      (long long)r->unstarted, (long long)r->infeasible);
    corral_buf_printf(b,
                      "%s\"preempted_pods\": %lld, \"restarts\": %lld, \"lost_gpu_hours\": %.3f, "
                      "\"cycles\": %lld,\n",
                      ind, (long long)r->preempted_pods, (long long)r->restarts, r->lost_gpu_hours,
                      (long long)r->cycles);
    corral_buf_printf(b, "%s\"queues\": [", ind);
    for (size_t k = 0; k < r->nqueues; k++) {
        const rqueue_t *q = &r->queues[k];
        corral_buf_printf(b, "%s\n%s  {\"name\": ", k ? "," : "", ind);
        corral_json_quote(b, q->name, strlen(q->name));
        corral_buf_printf(b,
                          ", \"jobs\": %lld, \"gpu_time_share_pct\": %.4f, \"delay_p50_s\": "
                          "%.3f, \"delay_p99_s\": %.3f}",
                          (long long)q->jobs, q->share, q->delay_p50, q->delay_p99);
    }
    corral_buf_printf(b, "\n%s]", ind);
    corral__rshare_json(b, r, ind);
}

static void print_json(FILE *out, const rpool_t *p, const corral_sim_trace_opts_t *o)
{
    corral_buf_t b;
    corral_buf_init(&b);
    corral_buf_puts(&b, "{\n  \"protocol\": \"replay\",\n  \"trace\": ");
    corral_json_quote(&b, o->trace, strlen(o->trace));
    corral_buf_printf(&b,
                      ",\n  \"nodes\": %zu,\n  \"gpus\": %lld,\n  \"window_s\": %.3f,\n"
                      "  \"makespan_s\": %.3f,\n",
                      p->c->nnodes, (long long)p->c->gpus, p->res[0].window_s,
                      p->res[0].makespan_s);
    corral_buf_printf(&b,
                      "  \"estimates\": \"%s\",\n  \"checkpoint_interval_s\": %.3f,\n"
                      "  \"min_runtime_s\": %.3f,\n",
                      corral__estimates_name(p->w->estimates), (double)p->w->checkpoint_ms / 1000.0,
                      (double)p->w->min_runtime_ms / 1000.0);
    if (p->npol == 1) {
        json_result(&b, &p->res[0], "  ");
        corral_buf_puts(&b, "\n}\n");
    } else {
        corral_buf_puts(&b, "  \"policies\": [");
        for (size_t i = 0; i < p->npol; i++) {
            corral_buf_puts(&b, i ? ",\n    {\n" : "\n    {\n");
            json_result(&b, &p->res[i], "      ");
            corral_buf_puts(&b, "\n    }");
        }
        corral_buf_puts(&b, "\n  ]\n}\n");
    }
    fputs(corral_buf_str(&b), out);
    corral_buf_fini(&b);
}

int corral__replay_main(const corral_sim_trace_opts_t *o, const sim_cluster_t *c,
                        const sim_workload_t *w, const sim_policy_t **pol, size_t npol,
                        corral_diag_t *d)
{
    rpool_t p;
    memset(&p, 0, sizeof(p));
    p.c = c;
    p.w = w;
    p.pol = pol;
    p.npol = npol;
    p.res = corral_calloc(npol, sizeof(*p.res));
    p.done = corral_calloc(npol, sizeof(*p.done));
    p.progress = o->progress ? o->err : NULL;
    run_all(&p, o->threads);
    if (o->json)
        print_json(o->out, &p, o);
    else
        print_text(o->out, &p, o);
    int rc = o->report_dir ? corral__replay_report(p.res, npol, c, o, d) : 0;
    for (size_t i = 0; i < npol; i++)
        corral__replay_result_free(&p.res[i]);
    corral_free(p.res);
    corral_free(p.done);
    return rc;
}
