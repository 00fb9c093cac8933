/* libFuzzer target: the Prometheus text parser never crashes, hangs or
 * leaks on any bytes; every sample it hands out has a valid name, at most
 * the maximum of labels, NUL-terminated strings inside the limits, and the
 * count it returns equals the callbacks it made. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "corral/promtext.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int check(void *arg, const corral_promtext_sample_t *s)
{
    int *n = arg;
    (*n)++;
    if (!s->name || !s->name[0] || strlen(s->name) > CORRAL_PROMTEXT_MAX_LINE ||
        s->nlabels > CORRAL_PROMTEXT_MAX_LABELS || s->line < 1)
        abort();
    for (size_t i = 0; i < s->nlabels; i++) {
        if (!s->labels[i].name[0] || strlen(s->labels[i].value) > CORRAL_PROMTEXT_MAX_LINE)
            abort();
        if (corral_promtext_label(s, s->labels[i].name) == NULL)
            abort();
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int n = 0;
    char err[128];
    int rc = corral_promtext_parse((const char *)data, size, check, &n, err, sizeof(err));
    if (rc >= 0 && rc != n)
        abort();
    if (rc < 0 && !err[0])
        abort();
    return 0;
}
