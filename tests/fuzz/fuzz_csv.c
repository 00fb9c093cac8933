/* libFuzzer target: the CSV tokenizer and the three trace readers never
 * crash, hang or leak on any bytes; every field lies inside the input or
 * the scratch buffer and within the limits; and feeding the input as a
 * stream of small windows gives exactly the records and errors that the
 * whole input gives. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "corral/buf.h"
#include "corral/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_FIELDS 8
#define MAX_LINE   64

typedef struct tok {
    corral_csv_field_t fields[MAX_FIELDS];
    char scratch[MAX_LINE];
    corral_csv_t c;
} tok_t;

static void check_record(const tok_t *t, const corral_csv_record_t *r, const char *lo,
                         const char *hi)
{
    if (r->n > MAX_FIELDS || r->line < 1)
        abort();
    for (size_t i = 0; i < r->n; i++) {
        const corral_csv_field_t *f = &r->fields[i];
        bool in_input = f->p >= lo && f->p + f->len <= hi;
        bool in_scratch = f->p >= t->scratch && f->p + f->len <= t->scratch + MAX_LINE;
        if (f->len > MAX_LINE || !(in_input || in_scratch))
            abort();
    }
}

static void dump_record(corral_buf_t *out, const corral_csv_record_t *r)
{
    corral_buf_printf(out, "%d:%zu:", r->line, r->n);
    for (size_t i = 0; i < r->n; i++) {
        corral_buf_printf(out, "%zu%c", r->fields[i].len, r->fields[i].quoted ? 'q' : 'p');
        corral_buf_append(out, r->fields[i].p, r->fields[i].len);
    }
    corral_buf_putc(out, '\n');
}

static void tokenize_whole(const char *d, size_t n, corral_buf_t *out)
{
    tok_t t;
    corral_csv_record_t r;
    corral_csv_init(&t.c, t.fields, MAX_FIELDS, t.scratch, MAX_LINE);
    corral_csv_feed(&t.c, d, n, true);
    int rc;
    while ((rc = corral_csv_next(&t.c, &r)) != 0) {
        if (rc == CORRAL_EAGAIN)
            abort(); /* final input never asks for more */
        if (rc < 0) {
            corral_buf_printf(out, "%d:error:%s\n", t.c.err_line, t.c.err);
            continue;
        }
        check_record(&t, &r, d, d + n);
        dump_record(out, &r);
    }
}

/* The same input in windows that grow by step bytes at a time. */
static void tokenize_stream(const char *d, size_t n, size_t step, corral_buf_t *out)
{
    tok_t t;
    corral_csv_record_t r;
    size_t b = 0, e = 0;
    corral_csv_init(&t.c, t.fields, MAX_FIELDS, t.scratch, MAX_LINE);
    for (;;) {
        corral_csv_feed(&t.c, d + b, e - b, e == n);
        int rc = corral_csv_next(&t.c, &r);
        if (rc == 0)
            break;
        b += corral_csv_consumed(&t.c);
        if (rc == CORRAL_EAGAIN) {
            if (e == n)
                abort();
            e = e + step < n ? e + step : n;
            continue;
        }
        if (rc < 0) {
            corral_buf_printf(out, "%d:error:%s\n", t.c.err_line, t.c.err);
            continue;
        }
        check_record(&t, &r, d, d + n);
        dump_record(out, &r);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *d = (const char *)data;
    corral_buf_t whole, stream;
    corral_buf_init(&whole);
    corral_buf_init(&stream);
    tokenize_whole(d, size, &whole);
    tokenize_stream(d, size, 1 + (size ? data[0] % 5 : 0), &stream);
    if (whole.len != stream.len || (whole.len && memcmp(whole.p, stream.p, whole.len) != 0))
        abort();
    corral_buf_fini(&whole);
    corral_buf_fini(&stream);

    corral_arena_t a;
    corral_diag_t diag;
    corral_arena_init(&a);
    corral_diag_init(&diag);
    corral_trace_node_t *nodes;
    corral_trace_pod_t *pods;
    corral_trace_job_t *jobs;
    size_t n;
    if (corral_trace_read_nodes_mem("f", d, size, &a, &diag, &nodes, &n) == 0 && n && !nodes)
        abort();
    if (corral_trace_read_pods_mem("f", d, size, &a, &diag, &pods, &n) == 0) {
        for (size_t i = 0; i < n; i++)
            if (pods[i].gpu_milli < 0 || pods[i].gpu_milli > 1000 ||
                (pods[i].num_gpu == 0) != (pods[i].gpu_milli == 0))
                abort();
    }
    if (corral_trace_read_jobs_mem("f", d, size, &a, &diag, &jobs, &n) == 0) {
        for (size_t i = 0; i < n; i++)
            if (jobs[i].num_gpus < 1 || jobs[i].duration_ms < 0 || !(jobs[i].duration >= 0))
                abort();
    }
    corral_diag_fini(&diag);
    corral_arena_fini(&a);
    return 0;
}
