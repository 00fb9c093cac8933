/*
 * DIR/endpoints.json: where the metrics endpoints of `corral up` are (the
 * API server, the scheduler, the controller, and each agent), so that tests
 * and a Prometheus configured by hand find them without parsing logs
 * (docs/observability-sched.md). Written once before the components start
 * and again by whoever learns more (the agents' ports once their nodes
 * register): corral_up_endpoints_write takes the agents it knows.
 */
#include <stdio.h>
#include <string.h>

#include "corral/buf.h"
#include "corral/json.h"
#include "up/up_int.h"

static void kv(corral_buf_t *b, const char *k, const char *v, bool comma)
{
    if (comma)
        corral_buf_puts(b, ",\n  ");
    corral_json_quote(b, k, strlen(k));
    corral_buf_puts(b, ": ");
    corral_json_quote(b, v ? v : "", v ? strlen(v) : 0);
}

int corral_up_endpoints_write(const corral_up_plan_t *p, const corral_up_endpoint_t *agents,
                              size_t n, char *err, size_t errlen)
{
    corral_buf_t b;
    corral_buf_init(&b);
    corral_buf_puts(&b, "{\n  ");
    kv(&b, "apiserver", p->server, false);
    kv(&b, "scheduler", p->scheduler_metrics, true);
    kv(&b, "controller", p->controller_metrics, true);
    corral_buf_puts(&b, ",\n  \"agents\": {");
    for (size_t i = 0; i < n; i++) {
        corral_buf_puts(&b, i ? ",\n    " : "\n    ");
        kv(&b, agents[i].node, agents[i].url, false);
    }
    corral_buf_puts(&b, n ? "\n  }\n}\n" : "}\n}\n");
    char path[4096];
    snprintf(path, sizeof(path), "%s/endpoints.json", p->dir);
    int rc = corral__up_write_file(path, b.p, b.len, 0644, err, errlen);
    corral_buf_fini(&b);
    return rc;
}
