/* libFuzzer target: the autoscaler's parsers (router text, DCGM text, a
 * replica's /metrics, a Prometheus query answer) never crash, hang or leak
 * on any bytes, keep their tables within their bounds, and give finite,
 * non-negative values. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "controller/ascollect.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_table(const corral__asc_table_t *t)
{
    if (t->n > t->max)
        abort();
    for (size_t i = 0; i < t->n; i++)
        for (size_t j = 0; j < CORRAL__ASC_NVAL; j++)
            if (!isfinite(t->rows[i].v[j]) || t->rows[i].v[j] < 0)
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    char err[256];
    corral__asc_table_t revs, pods;
    corral__asc_table_init(&revs, 64);
    corral__asc_table_init(&pods, 64);
    corral__asc_parse_router(text, size, &revs, &pods, err, sizeof(err));
    corral__asc_parse_gpu(text, size, &pods, err, sizeof(err));
    check_table(&revs);
    check_table(&pods);
    corral__asc_table_fini(&revs);
    corral__asc_table_fini(&pods);
    static const char *const names[] = {"vllm:num_requests_waiting", "vllm:num_requests_running"};
    double sum = 0, v = 0;
    if (corral__asc_parse_pod(text, size, names, 2, &sum, err, sizeof(err)) >= 0 &&
        (!isfinite(sum) || sum < 0))
        abort();
    if (corral__asc_parse_prom(text, size, &v, err, sizeof(err)) == 0 && (!isfinite(v) || v < 0))
        abort();
    return 0;
}
