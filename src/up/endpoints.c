/*
 * DIR/endpoints.json: where the metrics endpoints of `corral up` are (the
 * API server, the scheduler, the controller, and the node proxy's template
 * that reaches every agent), so that tests and a Prometheus configured by
 * hand find them without parsing logs (docs/observability.md). Written
 * once, before the components start.
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

int corral_up_endpoints_write(const corral_up_plan_t *p, char *err, size_t errlen)
{
    corral_buf_t b;
    corral_buf_init(&b);
    corral_buf_puts(&b, "{\n  ");
    kv(&b, "apiserver", p->server, false);
    kv(&b, "scheduler", p->scheduler_metrics, true);
    kv(&b, "controller", p->controller_metrics, true);
    char tmpl[512];
    snprintf(tmpl, sizeof(tmpl), "%s/api/v1/nodes/{node}/proxy/metrics", p->server);
    kv(&b, "nodeMetrics", tmpl, true);
    if (p->router) {
        kv(&b, "router", p->router, true);
        kv(&b, "routerMetrics", p->router_metrics, true);
    }
    corral_buf_puts(&b, "\n}\n");
    char path[4096];
    snprintf(path, sizeof(path), "%s/endpoints.json", p->dir);
    int rc = corral__up_write_file(path, b.p, b.len, 0644, err, errlen);
    corral_buf_fini(&b);
    return rc;
}
