/*
 * The three trace readers (SCENARIOS.md §2): openb node lists, openb pod
 * lists and Philly-style job lists. Each reads the whole file, walks its rows
 * through the table layer, checks every field, and either returns all rows
 * (in file order, in the caller's arena) or, when any row was bad, nothing
 * but CORRAL_EINVAL and a diagnostic per problem. Rows are gathered in a
 * growable heap vector and copied into the arena once, so a file of blank
 * lines cannot make the arena reserve room for rows that never come.
 */
#include <math.h>
#include <string.h>

#include "corral/io.h"
#include "sim/trace_int.h"

/* A heap vector of rows of elem bytes. */
typedef struct row_vec {
    void *items;
    size_t n, cap, elem;
} row_vec_t;

static void *vec_push(row_vec_t *v)
{
    corral_grow(&v->items, &v->cap, v->n + 1, v->elem);
    void *p = (char *)v->items + v->n * v->elem;
    v->n++;
    memset(p, 0, v->elem);
    return p;
}

/* Hand the rows to the caller (arena copy) unless something was bad. */
static int vec_finish(row_vec_t *v, const trace_tab_t *t, corral_arena_t *a, void **rows, size_t *n)
{
    int rc = t->bad ? CORRAL_EINVAL : 0;
    if (rc == 0 && v->n) {
        *rows = corral_arena_alloc(a, v->n * v->elem);
        memcpy(*rows, v->items, v->n * v->elem);
        *n = v->n;
    }
    corral_free(v->items);
    return rc;
}

/* A trace format: its columns, its row type and the function that fills
 * one row from the current record. */
typedef struct trace_fmt {
    const trace_col_t *cols;
    size_t ncols;
    size_t elem;
    void (*row)(trace_tab_t *t, void *out);
} trace_fmt_t;

static int read_mem(const trace_fmt_t *f, const char *name, const char *data, size_t len,
                    corral_arena_t *a, corral_diag_t *diag, void **rows, size_t *n)
{
    *rows = NULL;
    *n = 0;
    trace_tab_t *t = corral_malloc(sizeof(*t));
    int rc = corral__trace_open(t, name, data, len, f->cols, f->ncols, a, diag);
    row_vec_t v = {NULL, 0, 0, f->elem};
    while (rc == 0 && corral__trace_next(t) > 0)
        f->row(t, vec_push(&v));
    if (rc == 0)
        rc = vec_finish(&v, t, a, rows, n);
    else
        corral_free(v.items);
    corral_free(t);
    return rc;
}

static int read_file(const trace_fmt_t *f, const char *path, corral_arena_t *a, corral_diag_t *diag,
                     void **rows, size_t *n)
{
    char *data = NULL;
    size_t len = 0;
    *rows = NULL;
    *n = 0;
    int rc = corral_file_read(path, CORRAL_TRACE_MAX_BYTES, diag, &data, &len);
    if (rc == 0)
        rc = read_mem(f, path, data, len, a, diag, rows, n);
    corral_free(data);
    return rc;
}

/* --- openb nodes --------------------------------------------------------- */

enum { N_SN, N_CPU, N_MEM, N_GPU, N_MODEL };
static const trace_col_t node_cols[] = {
    [N_SN] = {"sn", true},   [N_CPU] = {"cpu_milli", true}, [N_MEM] = {"memory_mib", true},
    [N_GPU] = {"gpu", true}, [N_MODEL] = {"model", true},
};

static void node_row(trace_tab_t *t, void *out)
{
    corral_trace_node_t *r = out;
    int64_t gpus = 0;
    r->line = t->rec.line;
    r->name = corral__trace_str(t, N_SN, true, false);
    corral__trace_int(t, N_CPU, 0, INT64_MAX, false, 0, &r->cpu_milli);
    corral__trace_int(t, N_MEM, 0, INT64_MAX, false, 0, &r->memory_mib);
    corral__trace_int(t, N_GPU, 0, CORRAL_TRACE_MAX_GPUS, false, 0, &gpus);
    r->gpus = (int)gpus;
    r->model = corral__trace_str(t, N_MODEL, false, true);
    if (!r->model)
        r->model = "";
}

static const trace_fmt_t nodes_fmt = {node_cols, CORRAL_ARRAY_LEN(node_cols),
                                      sizeof(corral_trace_node_t), node_row};

int corral_trace_read_nodes_mem(const char *name, const char *data, size_t len, corral_arena_t *a,
                                corral_diag_t *diag, corral_trace_node_t **rows, size_t *n)
{
    void *r = NULL;
    int rc = read_mem(&nodes_fmt, name, data, len, a, diag, &r, n);
    *rows = r;
    return rc;
}

/* --- openb pods ---------------------------------------------------------- */

enum { P_NAME, P_CPU, P_MEM, P_NGPU, P_MILLI, P_SPEC, P_QOS, P_PHASE, P_CTIME, P_DTIME, P_STIME };
static const trace_col_t pod_cols[] = {
    [P_NAME] = {"name", true},
    [P_CPU] = {"cpu_milli", true},
    [P_MEM] = {"memory_mib", true},
    [P_NGPU] = {"num_gpu", true},
    [P_MILLI] = {"gpu_milli", true},
    [P_SPEC] = {"gpu_spec", false},
    [P_QOS] = {"qos", false},
    [P_PHASE] = {"pod_phase", false},
    [P_CTIME] = {"creation_time", false},
    [P_DTIME] = {"deletion_time", false},
    [P_STIME] = {"scheduled_time", false},
};

/* gpu_spec "A|B|C" into an array of interned model names. */
static void pod_spec(trace_tab_t *t, corral_trace_pod_t *r)
{
    const corral_csv_field_t *f = corral__trace_field(t, P_SPEC);
    if (corral__trace_empty(f))
        return;
    size_t parts = 1;
    for (size_t j = 0; j < f->len; j++)
        parts += f->p[j] == '|';
    const char **spec = corral_arena_alloc(t->arena, parts * sizeof(*spec));
    size_t b = 0, k = 0;
    for (size_t j = 0; j <= f->len; j++) {
        if (j < f->len && f->p[j] != '|')
            continue;
        corral_csv_field_t part = {f->p + b, j - b, false};
        if (corral__trace_empty(&part)) {
            char got[128];
            corral__trace_show(f, got, sizeof(got));
            corral__trace_err(t, P_SPEC, "expected GPU models separated by \"|\", got %s", got);
            return;
        }
        spec[k++] = corral_arena_strndup(t->arena, part.p, part.len);
        b = j + 1;
    }
    r->gpu_spec = spec;
    r->n_gpu_spec = k;
}

/* The FGD trace's rule: a pod either takes whole GPUs or shares one. */
static void pod_gpu_check(trace_tab_t *t, const corral_trace_pod_t *r)
{
    if (r->num_gpu == 0 && r->gpu_milli != 0)
        corral__trace_err(t, P_MILLI, "must be 0 when num_gpu is 0, got %d", r->gpu_milli);
    else if (r->num_gpu == 1 && r->gpu_milli == 0)
        corral__trace_err(t, P_MILLI, "must be 1-1000 when num_gpu is 1, got 0");
    else if (r->num_gpu > 1 && r->gpu_milli != 1000)
        corral__trace_err(t, P_MILLI,
                          "must be 1000 when num_gpu is %d (only single-GPU pods share a GPU), "
                          "got %d",
                          r->num_gpu, r->gpu_milli);
}

static void pod_row(trace_tab_t *t, void *out)
{
    corral_trace_pod_t *r = out;
    int64_t ngpu = -1, milli = -1;
    r->line = t->rec.line;
    r->name = corral__trace_str(t, P_NAME, true, false);
    corral__trace_int(t, P_CPU, 0, INT64_MAX, false, 0, &r->cpu_milli);
    corral__trace_int(t, P_MEM, 0, INT64_MAX, false, 0, &r->memory_mib);
    int bad_n = corral__trace_int(t, P_NGPU, 0, CORRAL_TRACE_MAX_GPUS, false, 0, &ngpu);
    int bad_m = corral__trace_int(t, P_MILLI, 0, 1000, false, 0, &milli);
    r->num_gpu = (int)ngpu;
    r->gpu_milli = (int)milli;
    if (bad_n == 0 && bad_m == 0)
        pod_gpu_check(t, r);
    pod_spec(t, r);
    r->qos = corral__trace_str(t, P_QOS, false, true);
    r->phase = corral__trace_str(t, P_PHASE, false, true);
    corral__trace_int(t, P_CTIME, 0, INT64_MAX, true, -1, &r->creation_time);
    corral__trace_int(t, P_DTIME, 0, INT64_MAX, true, -1, &r->deletion_time);
    corral__trace_int(t, P_STIME, 0, INT64_MAX, true, -1, &r->scheduled_time);
}

static const trace_fmt_t pods_fmt = {pod_cols, CORRAL_ARRAY_LEN(pod_cols),
                                     sizeof(corral_trace_pod_t), pod_row};

int corral_trace_read_pods_mem(const char *name, const char *data, size_t len, corral_arena_t *a,
                               corral_diag_t *diag, corral_trace_pod_t **rows, size_t *n)
{
    void *r = NULL;
    int rc = read_mem(&pods_fmt, name, data, len, a, diag, &r, n);
    *rows = r;
    return rc;
}

/* --- Philly-style jobs --------------------------------------------------- */

enum { J_TIME, J_DUR, J_GPUS, J_CLUSTER };
static const trace_col_t job_cols[] = {
    [J_TIME] = {"timestamp", true},
    [J_DUR] = {"duration", true},
    [J_GPUS] = {"num_gpus", true},
    [J_CLUSTER] = {"cluster", false},
};

/* Largest number of seconds accepted (about 31,700 years), so that every
 * time converts to int64 milliseconds exactly enough. */
#define JOB_MAX_SECONDS 1e12

static void job_time(trace_tab_t *t, corral_trace_job_t *r)
{
    const corral_csv_field_t *f = corral__trace_field(t, J_TIME);
    int64_t s;
    double v;
    if (corral__trace_parse_date(f->p, f->len, &s) == 0) {
        r->submit_is_date = true;
        r->submit_ms = s * 1000;
        r->submit_s = s;
        return;
    }
    if (corral__trace_parse_num(f->p, f->len, &v) == 0 && v >= 0 && v <= JOB_MAX_SECONDS) {
        r->submit_ms = llround(v * 1000.0);
        r->submit_s = r->submit_ms / 1000;
        return;
    }
    char got[128];
    corral__trace_show(f, got, sizeof(got));
    corral__trace_err(t, J_TIME,
                      "expected a date YYYY-MM-DD HH:MM:SS (UTC) or a number of seconds >= 0, "
                      "got %s",
                      got);
}

static void job_row(trace_tab_t *t, void *out)
{
    corral_trace_job_t *r = out;
    r->line = t->rec.line;
    job_time(t, r);
    const corral_csv_field_t *f = corral__trace_field(t, J_DUR);
    double d;
    if (corral__trace_parse_num(f->p, f->len, &d) == 0 && d >= 0 && d <= JOB_MAX_SECONDS) {
        r->duration = d == 0 ? 0.0 : d; /* no -0 */
        r->duration_ms = llround(d * 1000.0);
    } else {
        char got[128];
        corral__trace_show(f, got, sizeof(got));
        corral__trace_err(t, J_DUR, "expected a number of seconds >= 0, got %s", got);
    }
    int64_t g = 0;
    corral__trace_int(t, J_GPUS, 1, CORRAL_TRACE_MAX_JOB_GPUS, false, 0, &g);
    r->num_gpus = (int)g;
    r->queue = corral__trace_str(t, J_CLUSTER, false, true);
}

static const trace_fmt_t jobs_fmt = {job_cols, CORRAL_ARRAY_LEN(job_cols),
                                     sizeof(corral_trace_job_t), job_row};

int corral_trace_read_jobs_mem(const char *name, const char *data, size_t len, corral_arena_t *a,
                               corral_diag_t *diag, corral_trace_job_t **rows, size_t *n)
{
    void *r = NULL;
    int rc = read_mem(&jobs_fmt, name, data, len, a, diag, &r, n);
    *rows = r;
    return rc;
}

/* --- from files ---------------------------------------------------------- */

int corral_trace_read_nodes(const char *path, corral_arena_t *a, corral_diag_t *diag,
                            corral_trace_node_t **rows, size_t *n)
{
    void *r = NULL;
    int rc = read_file(&nodes_fmt, path, a, diag, &r, n);
    *rows = r;
    return rc;
}

int corral_trace_read_pods(const char *path, corral_arena_t *a, corral_diag_t *diag,
                           corral_trace_pod_t **rows, size_t *n)
{
    void *r = NULL;
    int rc = read_file(&pods_fmt, path, a, diag, &r, n);
    *rows = r;
    return rc;
}

int corral_trace_read_jobs(const char *path, corral_arena_t *a, corral_diag_t *diag,
                           corral_trace_job_t **rows, size_t *n)
{
    void *r = NULL;
    int rc = read_file(&jobs_fmt, path, a, diag, &r, n);
    *rows = r;
    return rc;
}
