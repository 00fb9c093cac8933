/*
 * Placeholder of the autoscaler (autoscale.h) while issue 13 is built: it
 * keeps each revision at the replicas it has. The KPA replaces this file.
 */
#include "controller/autoscale.h"

#include <stdio.h>

#include "corral/common.h"

struct corral__autoscaler {
    int unused;
};

int corral__as_new(const corral__as_opts_t *o, corral__autoscaler_t **out, char *err,
                   size_t errlen)
{
    (void)o;
    (void)err;
    (void)errlen;
    *out = corral_calloc(1, sizeof(**out));
    return 0;
}

void corral__as_free(corral__autoscaler_t *as)
{
    corral_free(as);
}

int corral__as_decide(corral__autoscaler_t *as, const corral__as_input_t *in, int64_t now_ns,
                      corral__as_decision_t *out)
{
    (void)as;
    (void)now_ns;
    out->desired = in->ready + in->pending;
    out->changed = false;
    snprintf(out->reason, sizeof(out->reason), "kept at %d", (int)out->desired);
    return 0;
}

size_t corral__as_victim(corral__autoscaler_t *as, const char *ns, const char *const *pods,
                         const bool *ready, size_t npods)
{
    (void)as;
    (void)ns;
    (void)pods;
    for (size_t i = 0; i < npods; i++)
        if (!ready[i])
            return i;
    return 0;
}

void corral__as_forget(corral__autoscaler_t *as, const char *ns, const char *revision)
{
    (void)as;
    (void)ns;
    (void)revision;
}
