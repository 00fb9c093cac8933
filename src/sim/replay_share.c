/*
 * Each queue's GPU share over time in a replay: the GPU-time its bound pods
 * hold in each window of the run (a day when the arrivals span at most two
 * weeks, else a week), as % of the cluster's GPU capacity over that window,
 * so a window's shares add up to its allocation. It shows who the scheduler
 * served when, which a whole-run share hides: with time-decayed fair share
 * (docs/scheduling.md, "Fair share") a queue that took more than its share
 * yields later. Counted as pods bind and leave (replay.c calls
 * corral__rshare_change), printed in the text, the JSON and the report.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corral/hmap.h"
#include "corral/val.h"
#include "sim/replay_int.h"

#define DAY_MS (86400LL * 1000)

struct rshare {
    corral_hmap_t idx;
    const char **names; /* by name */
    size_t nq;
    uint32_t *qof;   /* per job: its queue */
    int64_t *held;   /* per queue: milli-GPUs held now */
    int64_t *since;  /* per queue: held unchanged since (ms) */
    int64_t t0, win; /* first arrival; window length (ms) */
    double *gpu;     /* per window x queue: milli-GPU x ms */
    size_t nwin;
};

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static const char *queue_name(const rjob_t *j)
{
    return j->src->queue ? j->src->queue : "default";
}

void corral__rshare_init(replay_t *r)
{
    rshare_t *s = corral_calloc(1, sizeof(*s));
    size_t n = r->w->npods;
    corral_hmap_init(&s->idx);
    s->names = corral_malloc((n + 1) * sizeof(*s->names));
    for (size_t i = 0; i < n; i++) {
        uint32_t k;
        if (!corral_hmap_get(&s->idx, queue_name(&r->jobs[i]), &k)) {
            corral_hmap_put(&s->idx, queue_name(&r->jobs[i]), 0);
            s->names[s->nq++] = queue_name(&r->jobs[i]);
        }
    }
    qsort(s->names, s->nq, sizeof(*s->names), cmp_name);
    for (size_t k = 0; k < s->nq; k++)
        corral_hmap_put(&s->idx, s->names[k], (uint32_t)k);
    s->qof = corral_malloc((n + 1) * sizeof(*s->qof));
    for (size_t i = 0; i < n; i++)
        corral_hmap_get(&s->idx, queue_name(&r->jobs[i]), &s->qof[i]);
    s->held = corral_calloc(s->nq + 1, sizeof(*s->held));
    s->since = corral_calloc(s->nq + 1, sizeof(*s->since));
    s->t0 = n ? r->jobs[r->order[0]].src->arrive_ms : 0;
    int64_t span = n ? r->jobs[r->order[n - 1]].src->arrive_ms - s->t0 : 0;
    s->win = span <= 14 * DAY_MS ? DAY_MS : 7 * DAY_MS;
    for (size_t k = 0; k < s->nq; k++)
        s->since[k] = s->t0;
    r->share = s;
}

/* Add queue k's holding over [since, t) to the windows it covers. */
static void settle(rshare_t *s, size_t k, int64_t t)
{
    int64_t a = s->since[k] > s->t0 ? s->since[k] : s->t0;
    s->since[k] = t;
    if (s->held[k] == 0 || t <= a)
        return;
    size_t last = (size_t)((t - 1 - s->t0) / s->win);
    if (last + 1 > s->nwin) {
        s->gpu = corral_realloc(s->gpu, (last + 1) * s->nq * sizeof(*s->gpu));
        memset(s->gpu + s->nwin * s->nq, 0, (last + 1 - s->nwin) * s->nq * sizeof(*s->gpu));
        s->nwin = last + 1;
    }
    while (a < t) {
        size_t w = (size_t)((a - s->t0) / s->win);
        int64_t end = s->t0 + (int64_t)(w + 1) * s->win;
        end = end < t ? end : t;
        s->gpu[w * s->nq + k] += (double)s->held[k] * (double)(end - a);
        a = end;
    }
}

void corral__rshare_change(replay_t *r, uint32_t job, int64_t delta_milli)
{
    rshare_t *s = r->share;
    size_t k = s->qof[job];
    settle(s, k, r->now);
    s->held[k] += delta_milli;
}

void corral__rshare_result(const replay_t *r, rresult_t *out)
{
    rshare_t *s = r->share;
    for (size_t k = 0; k < s->nq; k++)
        settle(s, k, r->now);
    out->share_window_s = (double)s->win / 1000.0;
    out->share_nwin = s->nwin;
    out->share_nq = s->nq;
    out->share_names = corral_malloc((s->nq + 1) * sizeof(*out->share_names));
    memcpy(out->share_names, s->names, s->nq * sizeof(*s->names));
    out->share_pct = corral_calloc(s->nwin * s->nq + 1, sizeof(double));
    double cap = (double)r->c->gpus * 1000.0;
    for (size_t w = 0; w < s->nwin; w++) {
        /* the last window ends with the run */
        int64_t a = s->t0 + (int64_t)w * s->win, b = a + s->win;
        b = b < r->now ? b : r->now;
        for (size_t k = 0; b > a && cap > 0 && k < s->nq; k++)
            out->share_pct[w * s->nq + k] = 100.0 * s->gpu[w * s->nq + k] / (cap * (double)(b - a));
    }
}

void corral__rshare_free(replay_t *r)
{
    rshare_t *s = r->share;
    if (!s)
        return;
    corral_hmap_fini(&s->idx);
    corral_free(s->names);
    corral_free(s->qof);
    corral_free(s->held);
    corral_free(s->since);
    corral_free(s->gpu);
    corral_free(s);
    r->share = NULL;
}

/* --- output ----------------------------------------------------------------------------------- */

static const char *unit_name(const rresult_t *r)
{
    return r->share_window_s >= 7 * 86400 ? "week" : "day";
}

void corral__rshare_print(FILE *out, const rresult_t *res, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const rresult_t *r = &res[i];
        if (r->share_nq < 2)
            continue;
        fprintf(out, "\nGPU share by queue over time, %s, %% of GPU capacity per %s\n%-6s",
                r->pol->name, unit_name(r), unit_name(r));
        for (size_t k = 0; k < r->share_nq; k++)
            fprintf(out, " %7.7s", r->share_names[k]);
        fprintf(out, "\n");
        for (size_t w = 0; w < r->share_nwin; w++) {
            fprintf(out, "%-6zu", w + 1);
            for (size_t k = 0; k < r->share_nq; k++)
                fprintf(out, " %7.1f", r->share_pct[w * r->share_nq + k]);
            fprintf(out, "\n");
        }
    }
}

void corral__rshare_json(corral_buf_t *b, const rresult_t *r, const char *ind)
{
    corral_buf_printf(b, ",\n%s\"share_over_time\": {\"window_s\": %.0f, \"queues\": {", ind,
                      r->share_window_s);
    for (size_t k = 0; k < r->share_nq; k++) {
        corral_buf_printf(b, "%s\n%s  ", k ? "," : "", ind);
        corral_json_quote(b, r->share_names[k], strlen(r->share_names[k]));
        corral_buf_puts(b, ": [");
        for (size_t w = 0; w < r->share_nwin; w++)
            corral_buf_printf(b, "%s%.3f", w ? ", " : "", r->share_pct[w * r->share_nq + k]);
        corral_buf_puts(b, "]");
    }
    corral_buf_printf(b, "\n%s}}", ind);
}

void corral__rshare_md(corral_buf_t *b, const rresult_t *res, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const rresult_t *r = &res[i];
        if (r->share_nq < 2)
            continue;
        corral_buf_printf(b,
                          "\n### GPU share by queue over time: %s (%% of GPU capacity per %s)\n\n"
                          "| %s |",
                          r->pol->name, unit_name(r), unit_name(r));
        for (size_t k = 0; k < r->share_nq; k++)
            corral_buf_printf(b, " %s |", r->share_names[k]);
        corral_buf_puts(b, "\n|---|");
        for (size_t k = 0; k < r->share_nq; k++)
            corral_buf_puts(b, "---|");
        for (size_t w = 0; w < r->share_nwin; w++) {
            corral_buf_printf(b, "\n| %zu |", w + 1);
            for (size_t k = 0; k < r->share_nq; k++)
                corral_buf_printf(b, " %.1f |", r->share_pct[w * r->share_nq + k]);
        }
        corral_buf_puts(b, "\n");
    }
}
