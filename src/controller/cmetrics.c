/*
 * The controller's Prometheus metrics (docs/observability.md), served
 * on --metrics-listen with /healthz: reconciles and their durations per
 * controller, the depth of its work queues, Volcano Jobs by phase, the
 * UsageRecords written and pruned, and InferenceService cold starts. Everything is updated on the
 * controller's one thread; the gauges that need a walk of the cache (jobs
 * by phase) are refreshed at most once a second, never by a scrape.
 */
#include <string.h>

#include "controller/controller_int.h"
#include "controller/isvc.h"
#include "corral/timefmt.h"

static const char *const no_labels[] = {NULL};

static const char *const job_phases[] = {
    "Pending", "Running",     "Restarting", "Completing", "Completed", "Aborting",
    "Aborted", "Terminating", "Terminated", "Failed",     ""};

void corral__cm_start(corral_controller_t *c)
{
    corral__cmetrics_t *m = &c->m;
    m->reg = corral_metrics_new();
    corral_metrics_t *r = m->reg;
    static const char *const ctl[] = {"controller", NULL};
    double b[CORRAL_METRICS_MAX_BUCKETS];
    size_t nb = corral_metrics_exp_buckets(0.0001, 2, 18, b);
    m->rec = corral_metrics_counter(r, "corral_controller_reconciles_total",
                                    "Reconciles (passes) run, by controller.", ctl);
    m->rec_dur = corral_metrics_histogram(r, "corral_controller_reconcile_duration_seconds",
                                          "Length of one reconcile, by controller.", ctl, b, nb);
    static const char *const wq[] = {"queue", NULL};
    m->depth = corral_metrics_gauge(r, "corral_controller_workqueue_depth",
                                    "Items waiting: jobs to reconcile (job), objects whose owners "
                                    "to check (gc), timers armed (timers).",
                                    wq);
    static const char *const ph[] = {"phase", NULL};
    m->jobs =
        corral_metrics_gauge(r, "corral_controller_jobs",
                             "Volcano Jobs by status.state.phase (\"\" before the first).", ph);
    m->writes = corral_metrics_counter(r, "corral_controller_api_writes_total",
                                       "Writes sent to the API server.", NULL);
    m->u_written = corral_metrics_counter(r, "corral_usage_records_written_total",
                                          "UsageRecords created (one per finished pod).", NULL);
    m->u_exists = corral_metrics_counter(
        r, "corral_usage_records_existing_total",
        "UsageRecord writes answered 409: the record was there (a restart saw the pod again).",
        NULL);
    m->u_failed = corral_metrics_counter(r, "corral_usage_record_write_failures_total",
                                         "UsageRecord writes that failed.", NULL);
    m->u_pruned = corral_metrics_counter(r, "corral_usage_records_pruned_total",
                                         "UsageRecords deleted by retention.", NULL);
    m->u_kept = corral_metrics_gauge(r, "corral_usage_records",
                                     "UsageRecords kept after the last retention pass.", NULL);
    static const char *const cold[] = {"namespace", "service", "phase", NULL};
    double cb[CORRAL_METRICS_MAX_BUCKETS];
    size_t ncb = corral_metrics_exp_buckets(0.05, 2, 14, cb);
    m->cold_start = corral_metrics_histogram(
        r, "corral_inference_cold_start_seconds",
        "Cold start of an InferenceService replica, by phase: schedule (created to bound), "
        "fetch (the agent's model fetch), load (bound to Ready less the fetch), total "
        "(created to Ready), as the controller saw them.",
        cold, cb, ncb);
    corral_metric_t *zero[] = {m->writes,   m->u_written, m->u_exists,
                               m->u_failed, m->u_pruned,  m->u_kept};
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(zero); i++)
        corral_metric_add(zero[i], no_labels, 0); /* every series from the first scrape */
    const char *l = c->o.metrics_listen;
    if (!l || !*l || strcmp(l, "off") == 0)
        return;
    char err[256] = "";
    int port = 0;
    if (corral_metrics_serve(l, m->reg, NULL, 0, &port, &m->srv, err, sizeof(err)) == 0)
        corral__ctl_log(c, "metrics on %s (port %d): /metrics, /healthz", l, port);
    else
        corral__ctl_log(c, "metrics: cannot serve on %s: %s; continuing without them", l, err);
}

void corral__cm_stop(corral_controller_t *c)
{
    corral_metrics_server_stop(c->m.srv);
    c->m.srv = NULL;
    corral_metrics_free(c->m.reg);
    c->m.reg = NULL;
}

void corral__cm_reconciled(corral_controller_t *c, const char *controller, int64_t ns)
{
    const char *l[] = {controller};
    corral_metric_add(c->m.rec, l, 1);
    corral_metric_observe(c->m.rec_dur, l, (double)ns / 1e9);
}

void corral__cm_usage_written(corral_controller_t *c, long code, int64_t ns)
{
    corral__cm_reconciled(c, "usage", ns);
    corral_metric_add(code / 100 == 2 ? c->m.u_written
                      : code == 409   ? c->m.u_exists
                                      : c->m.u_failed,
                      no_labels, 1);
}

void corral__cm_usage_pruned(corral_controller_t *c, int n)
{
    corral_metric_add(c->m.u_pruned, no_labels, n);
}

void corral__cm_usage_kept(corral_controller_t *c, double n)
{
    corral_metric_set(c->m.u_kept, no_labels, n);
}

static void count_jobs(corral_controller_t *c)
{
    double n[CORRAL_ARRAY_LEN(job_phases)] = {0};
    for (size_t i = 0; i < c->cache.nslots; i++) {
        const corral__entry_t *e = c->cache.slots[i];
        if (!e || e->kind != CORRAL_KIND_VCJOB || !e->ev || !e->ev->obj)
            continue;
        const char *ph = e->ev->obj->u.job->phase;
        size_t k = 0;
        while (k + 1 < CORRAL_ARRAY_LEN(job_phases) && !(ph && !strcmp(ph, job_phases[k])))
            k++;
        n[k]++;
    }
    for (size_t k = 0; k < CORRAL_ARRAY_LEN(job_phases); k++) {
        const char *l[] = {job_phases[k]};
        corral_metric_set(c->m.jobs, l, n[k]);
    }
}

void corral__cm_tick(corral_controller_t *c)
{
    const char *l[] = {"job"};
    corral_metric_set(c->m.depth, l, (double)c->dirty.n);
    l[0] = "gc";
    corral_metric_set(c->m.depth, l, (double)c->gcq.n);
    l[0] = "timers";
    corral_metric_set(c->m.depth, l, (double)c->timers.n);
    corral_metric_set(c->m.writes, no_labels, (double)c->actions);
    int64_t now = corral__mono_ns();
    if (now - c->m.last_count_ns < CORRAL_NS_PER_SEC)
        return;
    c->m.last_count_ns = now;
    count_jobs(c);
}

void corral__cm_cold_start(corral_controller_t *c, const char *ns, const char *service,
                           const corral__isvc_cold_t *cs)
{
    static const char *const phases[] = {"schedule", "fetch", "load", "total"};
    const double v[] = {cs->schedule_s, cs->fetch_s, cs->load_s, cs->total_s};
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(phases); i++) {
        const char *l[] = {ns, service, phases[i]};
        corral_metric_observe(c->m.cold_start, l, v[i]);
    }
}
