/*
 * Prometheus metrics (see include/corral/metrics.h): a registry of families,
 * each a table of series keyed by their label values (joined with 0x1f into
 * one string, found through a corral_hmap), kept in insertion order so that
 * a rendering is stable. One mutex per registry guards every family and
 * series: an update is a lookup and an add under it, cheap next to the work
 * it counts.
 */
#include "corral/metrics.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corral/common.h"
#include "corral/hmap.h"

#define MAX_COLLECT 8
#define KEY_SEP     '\x1f'

typedef struct series {
    char *key;      /* label values joined with KEY_SEP */
    char **values;  /* nlabels strings, pointing into vals */
    char *vals;     /* the values, NUL-separated */
    double v;       /* counter or gauge */
    uint64_t count; /* histogram */
    double sum;
    uint64_t *buckets; /* nbounds + 1, not cumulative */
    uint32_t gen;      /* the family's generation when last updated */
} series_t;

struct corral_metric {
    corral_metrics_t *reg;
    char *name, *help;
    corral_metric_type_t type;
    size_t nlabels;
    char *labels[CORRAL_METRICS_MAX_LABELS];
    double bounds[CORRAL_METRICS_MAX_BUCKETS];
    size_t nbounds;
    series_t **series;
    size_t n, cap;
    corral_hmap_t idx;
    uint32_t gen; /* refills begun */
};

struct corral_metrics {
    pthread_mutex_t mu;
    corral_metric_t **fams;
    size_t n, cap;
    corral_hmap_t names;
    struct {
        corral_metrics_collect_fn fn;
        void *arg;
    } collect[MAX_COLLECT];
    size_t ncollect;
    corral_metric_t *dropped;
};

/* --- names -------------------------------------------------------------------------- */

static bool good_name(const char *s, bool colon_ok)
{
    if (!s || !*s)
        return false;
    for (const char *p = s; *p; p++) {
        char c = *p;
        bool alpha =
            (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (colon_ok && c == ':');
        if (!alpha && !(p > s && c >= '0' && c <= '9'))
            return false;
    }
    return true;
}

static void die(const char *name, const char *why)
{
    fprintf(stderr, "corral: metric %s: %s (a programming error)\n", name ? name : "(null)", why);
    abort();
}

/* --- registry ----------------------------------------------------------------------- */

corral_metrics_t *corral_metrics_new(void)
{
    corral_metrics_t *m = corral_calloc(1, sizeof(*m));
    pthread_mutex_init(&m->mu, NULL);
    corral_hmap_init(&m->names);
    m->dropped = corral_metrics_counter(
        m, "corral_metrics_dropped_series_total",
        "Updates dropped because their metric already had its maximum number of series.",
        (const char *const[]){"metric", NULL});
    return m;
}

static void series_free(series_t *s)
{
    corral_free(s->key);
    corral_free(s->values);
    corral_free(s->vals);
    corral_free(s->buckets);
    corral_free(s);
}

static void family_clear_locked(corral_metric_t *f)
{
    for (size_t i = 0; i < f->n; i++)
        series_free(f->series[i]);
    f->n = 0;
    corral_hmap_fini(&f->idx);
    corral_hmap_init(&f->idx);
}

void corral_metrics_free(corral_metrics_t *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n; i++) {
        corral_metric_t *f = m->fams[i];
        family_clear_locked(f);
        corral_hmap_fini(&f->idx);
        corral_free(f->series);
        for (size_t k = 0; k < f->nlabels; k++)
            corral_free(f->labels[k]);
        corral_free(f->name);
        corral_free(f->help);
        corral_free(f);
    }
    corral_free(m->fams);
    corral_hmap_fini(&m->names);
    pthread_mutex_destroy(&m->mu);
    corral_free(m);
}

static corral_metric_t *family_new(corral_metrics_t *m, const char *name, const char *help,
                                   corral_metric_type_t type, const char *const *labels)
{
    if (!good_name(name, true))
        die(name, "invalid name");
    corral_metric_t *f = corral_calloc(1, sizeof(*f));
    f->reg = m;
    f->name = corral_strdup(name);
    f->help = corral_strdup(help ? help : "");
    f->type = type;
    for (size_t i = 0; labels && labels[i]; i++) {
        if (i == CORRAL_METRICS_MAX_LABELS)
            die(name, "too many labels");
        if (!good_name(labels[i], false) || strncmp(labels[i], "__", 2) == 0 ||
            (type == CORRAL_METRIC_HISTOGRAM && strcmp(labels[i], "le") == 0))
            die(name, "invalid label name");
        f->labels[i] = corral_strdup(labels[i]);
        f->nlabels = i + 1;
    }
    corral_hmap_init(&f->idx);
    pthread_mutex_lock(&m->mu);
    uint32_t dummy;
    if (corral_hmap_get(&m->names, f->name, &dummy))
        die(name, "registered twice");
    corral_grow((void **)&m->fams, &m->cap, m->n + 1, sizeof(corral_metric_t *));
    corral_hmap_put(&m->names, f->name, (uint32_t)m->n);
    m->fams[m->n++] = f;
    pthread_mutex_unlock(&m->mu);
    return f;
}

corral_metric_t *corral_metrics_counter(corral_metrics_t *m, const char *name, const char *help,
                                        const char *const *labels)
{
    return family_new(m, name, help, CORRAL_METRIC_COUNTER, labels);
}

corral_metric_t *corral_metrics_gauge(corral_metrics_t *m, const char *name, const char *help,
                                      const char *const *labels)
{
    return family_new(m, name, help, CORRAL_METRIC_GAUGE, labels);
}

corral_metric_t *corral_metrics_histogram(corral_metrics_t *m, const char *name, const char *help,
                                          const char *const *labels, const double *bounds,
                                          size_t nbounds)
{
    if (nbounds == 0 || nbounds > CORRAL_METRICS_MAX_BUCKETS)
        die(name, "a histogram wants 1 to 32 bucket bounds");
    for (size_t i = 0; i < nbounds; i++)
        if (!isfinite(bounds[i]) || (i && bounds[i] <= bounds[i - 1]))
            die(name, "bucket bounds must be finite and increasing");
    corral_metric_t *f = family_new(m, name, help, CORRAL_METRIC_HISTOGRAM, labels);
    memcpy(f->bounds, bounds, nbounds * sizeof(*bounds));
    f->nbounds = nbounds;
    return f;
}

size_t corral_metrics_exp_buckets(double start, double factor, size_t count, double *out)
{
    if (count > CORRAL_METRICS_MAX_BUCKETS)
        count = CORRAL_METRICS_MAX_BUCKETS;
    double b = start;
    for (size_t i = 0; i < count; i++, b *= factor)
        out[i] = b;
    return count;
}

void corral_metrics_on_collect(corral_metrics_t *m, corral_metrics_collect_fn fn, void *arg)
{
    pthread_mutex_lock(&m->mu);
    if (m->ncollect == MAX_COLLECT)
        die("(collector)", "more than 8 collect callbacks");
    m->collect[m->ncollect].fn = fn;
    m->collect[m->ncollect].arg = arg;
    m->ncollect++;
    pthread_mutex_unlock(&m->mu);
}

/* --- series ------------------------------------------------------------------------- */

/* The series key: the label values joined with KEY_SEP, in stack when it
 * fits (the common case: no allocation for an update), else on the heap. */
static char *make_key(const corral_metric_t *f, const char *const *values, char *stack, size_t cap)
{
    size_t len = 0;
    for (size_t i = 0; i < f->nlabels; i++)
        len += strlen(values && values[i] ? values[i] : "") + 1;
    char *k = len <= cap ? stack : corral_malloc(len);
    char *p = k;
    for (size_t i = 0; i < f->nlabels; i++) {
        if (i)
            *p++ = KEY_SEP;
        /* A separator inside a value would merge two series' keys: take it out. */
        for (const char *v = values && values[i] ? values[i] : ""; *v; v++)
            *p++ = (char)(*v == KEY_SEP ? ' ' : *v);
    }
    *p = '\0';
    return k;
}

/* The series for values, created when absent; NULL when the family is full.
 * Called with the registry lock held. */
static series_t *series_get(corral_metric_t *f, const char *const *values, bool create)
{
    char stack[256];
    char *k = make_key(f, values, stack, sizeof(stack));
    uint32_t at;
    series_t *s = NULL;
    if (corral_hmap_get(&f->idx, k, &at)) {
        s = f->series[at];
    } else if (create && f->n < CORRAL_METRICS_MAX_SERIES) {
        s = corral_calloc(1, sizeof(*s));
        s->key = k == stack ? corral_strdup(k) : k;
        k = NULL;
        s->values = corral_calloc(f->nlabels ? f->nlabels : 1, sizeof(char *));
        size_t len = 0;
        for (size_t i = 0; i < f->nlabels; i++)
            len += strlen(values && values[i] ? values[i] : "") + 1;
        s->vals = corral_malloc(len ? len : 1);
        char *p = s->vals;
        for (size_t i = 0; i < f->nlabels; i++) {
            const char *v = values && values[i] ? values[i] : "";
            size_t n = strlen(v) + 1;
            memcpy(p, v, n);
            s->values[i] = p;
            p += n;
        }
        if (f->type == CORRAL_METRIC_HISTOGRAM)
            s->buckets = corral_calloc(f->nbounds + 1, sizeof(uint64_t));
        corral_grow((void **)&f->series, &f->cap, f->n + 1, sizeof(series_t *));
        corral_hmap_put(&f->idx, s->key, (uint32_t)f->n);
        f->series[f->n++] = s;
    }
    if (k != stack)
        corral_free(k);
    return s;
}

static void dropped_locked(corral_metric_t *f)
{
    const char *v[] = {f->name};
    series_t *d = series_get(f->reg->dropped, v, true);
    if (d)
        d->v += 1;
}

static void update(corral_metric_t *f, const char *const *values, double v, int op)
{
    pthread_mutex_lock(&f->reg->mu);
    series_t *s = series_get(f, values, true);
    if (s)
        s->gen = f->gen;
    if (!s) {
        dropped_locked(f);
    } else if (op == 0) {
        s->v += v;
    } else if (op == 1) {
        s->v = v;
    } else {
        size_t b = 0;
        while (b < f->nbounds && v > f->bounds[b])
            b++;
        s->buckets[b]++;
        s->count++;
        s->sum += v;
    }
    pthread_mutex_unlock(&f->reg->mu);
}

void corral_metric_add(corral_metric_t *f, const char *const *values, double v)
{
    if (f->type == CORRAL_METRIC_HISTOGRAM || (f->type == CORRAL_METRIC_COUNTER && !(v >= 0)))
        return;
    update(f, values, v, 0);
}

void corral_metric_set(corral_metric_t *f, const char *const *values, double v)
{
    if (f->type != CORRAL_METRIC_HISTOGRAM)
        update(f, values, v, 1);
}

void corral_metric_observe(corral_metric_t *f, const char *const *values, double v)
{
    if (f->type == CORRAL_METRIC_HISTOGRAM && !isnan(v))
        update(f, values, v, 2);
}

void corral_metric_clear(corral_metric_t *f)
{
    pthread_mutex_lock(&f->reg->mu);
    family_clear_locked(f);
    pthread_mutex_unlock(&f->reg->mu);
}

void corral_metric_refill_begin(corral_metric_t *f)
{
    pthread_mutex_lock(&f->reg->mu);
    f->gen++;
    pthread_mutex_unlock(&f->reg->mu);
}

void corral_metric_refill_end(corral_metric_t *f)
{
    pthread_mutex_lock(&f->reg->mu);
    size_t k = 0;
    for (size_t i = 0; i < f->n; i++) {
        if (f->series[i]->gen == f->gen)
            f->series[k++] = f->series[i];
        else
            series_free(f->series[i]);
    }
    if (k != f->n) { /* indices moved: index again */
        f->n = k;
        corral_hmap_fini(&f->idx);
        corral_hmap_init(&f->idx);
        for (size_t i = 0; i < f->n; i++)
            corral_hmap_put(&f->idx, f->series[i]->key, (uint32_t)i);
    }
    pthread_mutex_unlock(&f->reg->mu);
}

bool corral_metric_get(corral_metric_t *f, const char *const *values, double *out)
{
    pthread_mutex_lock(&f->reg->mu);
    series_t *s = series_get(f, values, false);
    if (s)
        *out = f->type == CORRAL_METRIC_HISTOGRAM ? (double)s->count : s->v;
    pthread_mutex_unlock(&f->reg->mu);
    return s != NULL;
}

/* --- rendering ---------------------------------------------------------------------- */

static void put_num(corral_buf_t *out, double v)
{
    if (isnan(v))
        corral_buf_puts(out, "NaN");
    else if (isinf(v))
        corral_buf_puts(out, v > 0 ? "+Inf" : "-Inf");
    else if (v == floor(v) && fabs(v) < 1e15)
        corral_buf_printf(out, "%.0f", v);
    else {
        /* The shortest of 15 or 17 digits that reads back as the same double. */
        char t[40];
        snprintf(t, sizeof(t), "%.15g", v);
        if (strtod(t, NULL) != v)
            snprintf(t, sizeof(t), "%.17g", v);
        corral_buf_puts(out, t);
    }
}

static void put_escaped(corral_buf_t *out, const char *s, bool quote)
{
    for (; *s; s++) {
        if (*s == '\\')
            corral_buf_puts(out, "\\\\");
        else if (*s == '\n')
            corral_buf_puts(out, "\\n");
        else if (quote && *s == '"')
            corral_buf_puts(out, "\\\"");
        else
            corral_buf_putc(out, *s);
    }
}

/* name{labels[,le="x"]} */
static void put_head(corral_buf_t *out, const corral_metric_t *f, const series_t *s,
                     const char *suffix, const char *le)
{
    corral_buf_puts(out, f->name);
    corral_buf_puts(out, suffix);
    if (!f->nlabels && !le)
        return;
    corral_buf_putc(out, '{');
    for (size_t i = 0; i < f->nlabels; i++) {
        corral_buf_printf(out, "%s%s=\"", i ? "," : "", f->labels[i]);
        put_escaped(out, s->values[i], true);
        corral_buf_putc(out, '"');
    }
    if (le)
        corral_buf_printf(out, "%sle=\"%s\"", f->nlabels ? "," : "", le);
    corral_buf_putc(out, '}');
}

static void render_histogram(corral_buf_t *out, const corral_metric_t *f, const series_t *s)
{
    uint64_t cum = 0;
    char le[40];
    for (size_t b = 0; b <= f->nbounds; b++) {
        cum += s->buckets[b];
        if (b < f->nbounds) {
            corral_buf_t t;
            corral_buf_init(&t);
            put_num(&t, f->bounds[b]);
            snprintf(le, sizeof(le), "%s", corral_buf_str(&t));
            corral_buf_fini(&t);
        } else {
            snprintf(le, sizeof(le), "+Inf");
        }
        put_head(out, f, s, "_bucket", le);
        corral_buf_printf(out, " %llu\n", (unsigned long long)cum);
    }
    put_head(out, f, s, "_sum", NULL);
    corral_buf_putc(out, ' ');
    put_num(out, s->sum);
    corral_buf_putc(out, '\n');
    put_head(out, f, s, "_count", NULL);
    corral_buf_printf(out, " %llu\n", (unsigned long long)s->count);
}

static const char *const type_names[] = {"counter", "gauge", "histogram"};

void corral_metrics_render(corral_metrics_t *m, corral_buf_t *out)
{
    pthread_mutex_lock(&m->mu);
    size_t nc = m->ncollect;
    pthread_mutex_unlock(&m->mu);
    for (size_t i = 0; i < nc; i++)
        m->collect[i].fn(m, m->collect[i].arg);
    pthread_mutex_lock(&m->mu);
    for (size_t i = 0; i < m->n; i++) {
        const corral_metric_t *f = m->fams[i];
        corral_buf_printf(out, "# HELP %s ", f->name);
        put_escaped(out, f->help, false);
        corral_buf_printf(out, "\n# TYPE %s %s\n", f->name, type_names[f->type]);
        for (size_t k = 0; k < f->n; k++) {
            const series_t *s = f->series[k];
            if (f->type == CORRAL_METRIC_HISTOGRAM) {
                render_histogram(out, f, s);
                continue;
            }
            put_head(out, f, s, "", NULL);
            corral_buf_putc(out, ' ');
            put_num(out, s->v);
            corral_buf_putc(out, '\n');
        }
    }
    pthread_mutex_unlock(&m->mu);
}
