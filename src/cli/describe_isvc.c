/*
 * corral describe isvc NAME: a KServe InferenceService as its controller
 * runs it: URL and address, conditions, the predictor's scaling bounds and
 * canary percent, its revisions (ControllerRevisions named NAME-predictor-
 * 0000N) with their traffic share, tag and replicas, the traffic list, each
 * replica (pod, revision, node, ready, why it is pending), the last cold
 * start by phase, and the service's events.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/kubecli.h"
#include "corral/table.h"

#define ISVC_LABEL "serving.kserve.io/inferenceservice"
#define REV_LABEL  "corral.dev/revision"

static const char *or_empty(const char *s)
{
    return s ? s : "";
}

static bool eq(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

static const corral_val_t *items_of(corral__cli_t *k, corral_arena_t *a, const char *path)
{
    const corral_val_t *items = corral_val_get(corral__cli_get(k, a, path, NULL), "items");
    return items && items->kind == CORRAL_VAL_SEQ ? items : NULL;
}

static bool pod_ready(const corral_val_t *p)
{
    const corral_val_t *cs = corral_val_dig(p, "status.conditions");
    for (size_t i = 0; cs && cs->kind == CORRAL_VAL_SEQ && i < cs->n; i++) {
        if (eq(corral_val_get_str(cs->items[i], "type"), "Ready"))
            return eq(corral_val_get_str(cs->items[i], "status"), "True");
    }
    return false;
}

/* Why a replica is not Ready: PodScheduled's reason and message, else the
 * phase. */
static const char *pending_reason(corral_arena_t *a, const corral_val_t *p)
{
    if (pod_ready(p))
        return "";
    if (corral__desc_str(p, "metadata.deletionTimestamp"))
        return "Terminating";
    const corral_val_t *cs = corral_val_dig(p, "status.conditions");
    for (size_t i = 0; cs && cs->kind == CORRAL_VAL_SEQ && i < cs->n; i++) {
        const corral_val_t *c = cs->items[i];
        if (eq(corral_val_get_str(c, "type"), "PodScheduled") &&
            eq(corral_val_get_str(c, "status"), "False"))
            return corral_arena_printf(a, "%s: %s", or_empty(corral_val_get_str(c, "reason")),
                                       or_empty(corral_val_get_str(c, "message")));
    }
    const char *ph = corral__desc_str(p, "status.phase");
    return ph ? ph : "Pending";
}

static const corral_val_t *traffic_of(const corral_val_t *pred, const char *rev, int64_t *pct)
{
    const corral_val_t *t = corral_val_get(pred, "traffic");
    *pct = 0;
    const corral_val_t *found = NULL;
    for (size_t i = 0; t && t->kind == CORRAL_VAL_SEQ && i < t->n; i++) {
        if (!eq(corral_val_get_str(t->items[i], "revisionName"), rev))
            continue;
        const corral_val_t *p = corral_val_get(t->items[i], "percent");
        *pct += p && p->kind == CORRAL_VAL_INT ? p->u.i : 0;
        found = t->items[i];
    }
    return found;
}

/* The markers of a revision: latest created, ready, rolled out, previous. */
static const char *rev_roles(corral_arena_t *a, const corral_val_t *pred, const char *rev)
{
    static const char *const keys[][2] = {{"latestCreatedRevision", "created"},
                                          {"latestReadyRevision", "ready"},
                                          {"latestRolledoutRevision", "rolled-out"},
                                          {"previousRolledoutRevision", "previous"}};
    corral_buf_t b;
    corral_buf_init(&b);
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(keys); i++) {
        if (eq(corral_val_get_str(pred, keys[i][0]), rev))
            corral_buf_printf(&b, "%s%s", b.len ? "," : "", keys[i][1]);
    }
    const char *s = corral_arena_strdup(a, b.len ? corral_buf_str(&b) : "-");
    corral_buf_fini(&b);
    return s;
}

static void desc_revisions(corral__cli_t *k, corral__dw_t *w, corral_arena_t *a, const char *ns,
                           const char *name, const corral_val_t *pred, const corral_val_t *pods)
{
    const char *path = corral_arena_printf(
        a, "/apis/apps/v1/namespaces/%s/controllerrevisions?labelSelector=%s%%3D%s", ns, ISVC_LABEL,
        name);
    const corral_val_t *revs = items_of(k, a, path);
    if (!revs || !revs->n) {
        corral__dw_kv(w, 0, "Revisions", "<none>");
        return;
    }
    static const char *const header[] = {"Name",    "Revision", "Hash",    "Role",
                                         "Traffic", "Tag",      "Replicas"};
    enum { NC = CORRAL_ARRAY_LEN(header) };
    const char **cells = corral_arena_alloc(a, revs->n * NC * sizeof(*cells));
    for (size_t i = 0; i < revs->n; i++) {
        const corral_val_t *r = revs->items[i];
        const char *rn = or_empty(corral__desc_str(r, "metadata.name"));
        int64_t pct;
        const corral_val_t *t = traffic_of(pred, rn, &pct);
        int ready = 0, total = 0;
        for (size_t j = 0; pods && j < pods->n; j++) {
            const corral_val_t *p = pods->items[j];
            if (!eq(corral_val_get_str(corral_val_dig(p, "metadata.labels"), REV_LABEL), rn))
                continue;
            total++;
            ready += pod_ready(p);
        }
        const char **c = cells + i * NC;
        c[0] = rn;
        c[1] = or_empty(corral__desc_str(r, "revision"));
        const corral_val_t *lab = corral_val_dig(r, "metadata.labels");
        c[2] = or_empty(corral_val_get_str(lab, "corral.dev/revision-hash"));
        c[3] = rev_roles(a, pred, rn);
        c[4] = t ? corral_arena_printf(a, "%lld%%", (long long)pct) : "-";
        c[5] = t ? or_empty(corral_val_get_str(t, "tag")) : "";
        c[6] = corral_arena_printf(a, "%d/%d", ready, total);
    }
    corral__dw_kv(w, 0, "Revisions", "%s", "");
    corral__dw_table(w, 1, header, cells, revs->n, NC);
}

static void desc_traffic(corral__dw_t *w, corral_arena_t *a, const corral_val_t *pred)
{
    const corral_val_t *t = corral_val_get(pred, "traffic");
    if (!t || t->kind != CORRAL_VAL_SEQ || !t->n) {
        corral__dw_kv(w, 0, "Traffic", "<none>");
        return;
    }
    static const char *const header[] = {"Revision", "Percent", "Tag", "Latest"};
    const char **cells = corral_arena_alloc(a, t->n * 4 * sizeof(*cells));
    for (size_t i = 0; i < t->n; i++) {
        const corral_val_t *e = t->items[i];
        const corral_val_t *lr = corral_val_get(e, "latestRevision");
        cells[i * 4] = or_empty(corral_val_get_str(e, "revisionName"));
        cells[i * 4 + 1] = corral_arena_printf(a, "%s%%", or_empty(corral__desc_str(e, "percent")));
        cells[i * 4 + 2] = or_empty(corral_val_get_str(e, "tag"));
        cells[i * 4 + 3] = lr && lr->kind == CORRAL_VAL_BOOL && lr->u.b ? "true" : "false";
    }
    corral__dw_kv(w, 0, "Traffic", "%s", "");
    corral__dw_table(w, 1, header, cells, t->n, 4);
}

static void desc_replicas(corral__dw_t *w, corral_arena_t *a, const corral_val_t *pods)
{
    if (!pods || !pods->n) {
        corral__dw_kv(w, 0, "Replicas", "<none>");
        return;
    }
    static const char *const header[] = {"Pod", "Revision", "Node", "Ready", "Waiting"};
    const char **cells = corral_arena_alloc(a, pods->n * 5 * sizeof(*cells));
    for (size_t i = 0; i < pods->n; i++) {
        const corral_val_t *p = pods->items[i];
        const char *node = corral__desc_str(p, "spec.nodeName");
        cells[i * 5] = or_empty(corral__desc_str(p, "metadata.name"));
        cells[i * 5 + 1] =
            or_empty(corral_val_get_str(corral_val_dig(p, "metadata.labels"), REV_LABEL));
        cells[i * 5 + 2] = node ? node : "<none>";
        cells[i * 5 + 3] = pod_ready(p) ? "True" : "False";
        cells[i * 5 + 4] = pending_reason(a, p);
    }
    corral__dw_kv(w, 0, "Replicas", "%s", "");
    corral__dw_table(w, 1, header, cells, pods->n, 5);
}

static void desc_cold(corral__dw_t *w, const corral_val_t *pred)
{
    const corral_val_t *c = corral_val_get(pred, "corral.dev/coldStart");
    if (!c || c->kind != CORRAL_VAL_MAP) {
        corral__dw_kv(w, 0, "Last Cold Start", "<none>");
        return;
    }
    corral__dw_kv(w, 0, "Last Cold Start", "%s", "");
    corral__dw_kv(w, 1, "Pod", "%s (revision %s, node %s)", or_empty(corral_val_get_str(c, "pod")),
                  or_empty(corral_val_get_str(c, "revision")),
                  or_empty(corral_val_get_str(c, "node")));
    corral__dw_kv(w, 1, "Schedule", "%ss", or_empty(corral_val_get_str(c, "scheduleSeconds")));
    const char *f = corral_val_get_str(c, "fetch");
    corral__dw_kv(w, 1, "Fetch", "%ss%s%s%s", or_empty(corral_val_get_str(c, "fetchSeconds")),
                  f ? " (cache " : "", f ? f : "", f ? ")" : "");
    corral__dw_kv(w, 1, "Load", "%ss", or_empty(corral_val_get_str(c, "loadSeconds")));
    corral__dw_kv(w, 1, "Total", "%ss", or_empty(corral_val_get_str(c, "totalSeconds")));
}

int corral__describe_isvc(corral__cli_t *k, corral_arena_t *a, const corral_val_t *o)
{
    corral__dw_t w;
    corral__dw_init(&w);
    const char *ns = or_empty(corral__desc_str(o, "metadata.namespace"));
    const char *name = or_empty(corral__desc_str(o, "metadata.name"));
    corral__desc_meta(&w, o, true, NULL);
    corral__dw_kv(&w, 0, "API Version", "%s", or_empty(corral__desc_str(o, "apiVersion")));
    corral__dw_kv(&w, 0, "Kind", "InferenceService");
    corral__dw_kv(&w, 0, "URL", "%s", or_empty(corral__desc_str(o, "status.url")));
    corral__dw_kv(&w, 0, "Address", "%s", or_empty(corral__desc_str(o, "status.address.url")));
    corral__desc_conditions(&w, a, o);
    const corral_val_t *sp = corral_val_dig(o, "spec.predictor");
    const char *min = corral__desc_str(sp, "minReplicas"),
               *max = corral__desc_str(sp, "maxReplicas");
    const char *canary = corral__desc_str(sp, "canaryTrafficPercent");
    corral__dw_kv(&w, 0, "Predictor", "%s", "");
    corral__dw_kv(&w, 1, "Min Replicas", "%s", min ? min : "1");
    corral__dw_kv(&w, 1, "Max Replicas", "%s", max && strcmp(max, "0") != 0 ? max : "no limit");
    corral__dw_kv(&w, 1, "Canary Traffic Percent", "%s", canary ? canary : "<unset> (promote)");
    const char *metric = corral__desc_str(sp, "scaleMetric");
    if (metric)
        corral__dw_kv(&w, 1, "Scale", "%s target %s", metric,
                      or_empty(corral__desc_str(sp, "scaleTarget")));
    const corral_val_t *pred = corral_val_dig(o, "status.components.predictor");
    const char *ppath = corral_arena_printf(
        a, "%s?labelSelector=%s%%3D%s",
        corral__cli_path(a, corral_kind_get(CORRAL_KIND_POD), ns, NULL, NULL), ISVC_LABEL, name);
    const corral_val_t *pods = items_of(k, a, ppath);
    desc_revisions(k, &w, a, ns, name, pred, pods);
    desc_traffic(&w, a, pred);
    desc_replicas(&w, a, pods);
    desc_cold(&w, pred);
    const corral_kind_info_t *info = corral_kind_get(CORRAL_KIND_ISVC);
    corral__desc_events(k, &w, a, info, ns, name, corral__desc_str(o, "metadata.uid"));
    corral__dw_flush(&w, stdout);
    return CORRAL_EXIT_OK;
}
