/*
 * corral describe node NAME: kubectl's node description (labels, taints,
 * conditions, addresses, capacity, allocatable, system info, the
 * non-terminated pods and the allocated resources with their share of
 * allocatable) plus what a GPU node needs: the link matrix of annotation
 * corral.dev/gpu-topology as a table, and which pod holds each GPU (from
 * the pods' corral.dev/gpu-ids).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/kubecli.h"
#include "corral/table.h"

#define MAX_RES 16

typedef struct alloc {
    const char *name[MAX_RES];
    int64_t req[MAX_RES], lim[MAX_RES]; /* milli-units */
    size_t n;
} alloc_t;

static size_t res_slot(alloc_t *al, const char *name)
{
    for (size_t i = 0; i < al->n; i++) {
        if (strcmp(al->name[i], name) == 0)
            return i;
    }
    if (al->n == MAX_RES)
        return MAX_RES;
    al->name[al->n] = name;
    al->req[al->n] = al->lim[al->n] = 0;
    return al->n++;
}

static int64_t milli_of(const corral_val_t *v)
{
    corral_qty_t q;
    int64_t m = 0;
    if (v && v->s && corral_qty_parse(v->s, v->len, &q, NULL, 0) == 0)
        corral_qty_milli(&q, &m);
    return m;
}

static const char *fmt_qty(corral_arena_t *a, const char *res, int64_t milli)
{
    char buf[64];
    if (strcmp(res, "cpu") == 0)
        corral_qty_format_milli(milli, buf, sizeof(buf));
    else if (strcmp(res, "memory") == 0 || strstr(res, "storage"))
        corral_qty_format_bytes((milli + 999) / 1000, buf, sizeof(buf));
    else
        snprintf(buf, sizeof(buf), "%lld", (long long)((milli + 999) / 1000));
    return corral_arena_strdup(a, buf);
}

/* Add one pod's effective requests and its containers' limits. */
static void add_pod(corral_arena_t *a, alloc_t *al, corral_val_t *pod)
{
    corral_diag_t d;
    corral_diag_init(&d);
    corral_obj_t *o = NULL;
    corral_obj_decode(a, pod, NULL, &d, &o);
    corral_diag_fini(&d);
    if (!o || !o->u.pod)
        return;
    corral_reslist_t req;
    corral_pod_requests(a, &o->u.pod->spec, &req);
    for (size_t i = 0; i < req.n; i++) {
        size_t s = res_slot(al, req.items[i].name);
        int64_t m = 0;
        if (s < MAX_RES && corral_qty_milli(&req.items[i].qty, &m) == 0)
            al->req[s] += m;
    }
    const corral_pod_spec_t *sp = &o->u.pod->spec;
    for (size_t c = 0; c < sp->ncontainers; c++) {
        const corral_reslist_t *l = &sp->containers[c].limits;
        for (size_t i = 0; i < l->n; i++) {
            size_t s = res_slot(al, l->items[i].name);
            int64_t m = 0;
            if (s < MAX_RES && corral_qty_milli(&l->items[i].qty, &m) == 0)
                al->lim[s] += m;
        }
    }
}

static const char *pct(corral_arena_t *a, const char *res, int64_t v, const corral_val_t *alloc)
{
    int64_t total = milli_of(corral_val_get(alloc, res));
    const char *q = fmt_qty(a, res, v);
    if (total <= 0)
        return q;
    return corral_arena_printf(a, "%s (%lld%%)", q, (long long)(v * 100 / total));
}

static void desc_allocated(corral__dw_t *w, corral_arena_t *a, alloc_t *al,
                           const corral_val_t *alloc)
{
    static const char *const always[] = {"cpu", "memory", "nvidia.com/gpu"};
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(always); i++)
        res_slot(al, always[i]);
    corral__dw_kv(w, 0, "Allocated resources", "%s", "");
    corral__dw_raw(w, "  (Total limits may be over 100 percent, i.e., overcommitted.)");
    const char **cells = corral_arena_alloc(a, (al->n + 1) * 3 * sizeof(*cells));
    cells[0] = "--------";
    cells[1] = "--------";
    cells[2] = "------";
    for (size_t i = 0; i < al->n; i++) {
        cells[(i + 1) * 3] = al->name[i];
        cells[(i + 1) * 3 + 1] = pct(a, al->name[i], al->req[i], alloc);
        cells[(i + 1) * 3 + 2] = pct(a, al->name[i], al->lim[i], alloc);
    }
    static const char *const header[] = {"Resource", "Requests", "Limits"};
    corral__dw_table(w, 1, header, cells, al->n + 1, 3);
}

/* The pods: a table, the allocation sums, and GPU -> pod. */
static void desc_node_pods(corral__cli_t *k, corral__dw_t *w, corral_arena_t *a, const char *name,
                           const corral_val_t *alloc, const char **gpu_owner, int ngpus)
{
    const corral_kind_info_t *pod = corral_kind_get(CORRAL_KIND_POD);
    const char *path = corral_arena_printf(a,
                                           "%s?fieldSelector=spec.nodeName%%3D%s%%2Cstatus.phase!%%"
                                           "3DSucceeded%%2Cstatus.phase!%%3DFailed",
                                           corral__cli_path(a, pod, NULL, NULL, NULL), name);
    corral_val_t *list = corral__cli_get(k, a, path, NULL);
    corral_val_t *items = corral_val_get(list, "items");
    size_t n = items && items->kind == CORRAL_VAL_SEQ ? items->n : 0;
    alloc_t al;
    memset(&al, 0, sizeof(al));
    const char **cells = corral_arena_alloc(a, (n + 1) * 6 * sizeof(*cells));
    int64_t now = corral__cli_now_us();
    for (size_t i = 0; i < n; i++) {
        corral_val_t *p = items->items[i];
        const char **c = cells + i * 6;
        const char *ns = corral__desc_str(p, "metadata.namespace");
        const char *pn = corral__desc_str(p, "metadata.name");
        const char *ids =
            corral_val_get_str(corral_val_dig(p, "metadata.annotations"), "corral.dev/gpu-ids");
        alloc_t one;
        memset(&one, 0, sizeof(one));
        add_pod(a, &one, corral_val_copy(a, p));
        add_pod(a, &al, p);
        size_t cpu = res_slot(&one, "cpu"), mem = res_slot(&one, "memory");
        size_t gpu = res_slot(&one, "nvidia.com/gpu");
        c[0] = ns ? ns : "";
        c[1] = pn ? pn : "";
        c[2] = fmt_qty(a, "cpu", one.req[cpu]);
        c[3] = fmt_qty(a, "memory", one.req[mem]);
        c[4] = fmt_qty(a, "nvidia.com/gpu", one.req[gpu]);
        c[5] = corral_table_age(p, now, a);
        for (const char *q = ids; q && *q;) { /* "0,1,2" */
            char *end = NULL;
            long g = strtol(q, &end, 10);
            if (end == q)
                break;
            if (g >= 0 && g < ngpus)
                gpu_owner[g] = corral_arena_printf(a, "%s/%s", ns ? ns : "", pn ? pn : "");
            q = *end == ',' ? end + 1 : end;
        }
    }
    corral__dw_kv(w, 0, "Non-terminated Pods", "(%zu in total)", n);
    if (n) {
        static const char *const header[] = {"Namespace",       "Name", "CPU Requests",
                                             "Memory Requests", "GPUs", "Age"};
        corral__dw_table(w, 1, header, cells, n, 6);
    }
    desc_allocated(w, a, &al, alloc);
}

/* The link matrix, with a header row and column of GPU names. */
static int desc_topology(corral__dw_t *w, corral_arena_t *a, const char *topo)
{
    if (!topo) {
        corral__dw_kv(w, 0, "GPU Topology", "<none>");
        return 0;
    }
    corral_gpu_topo_t t;
    char why[200];
    if (corral_gpu_topo_parse(a, topo, &t, why, sizeof(why)) != 0) {
        corral__dw_kv(w, 0, "GPU Topology", "invalid annotation: %s", why);
        return 0;
    }
    corral__dw_kv(w, 0, "GPU Topology", "%s", "");
    size_t n = (size_t)t.n + 1;
    const char **cells = corral_arena_alloc(a, (size_t)t.n * n * sizeof(*cells));
    const char **header = corral_arena_alloc(a, n * sizeof(*header));
    header[0] = "";
    int r = 0;
    for (const char *p = topo; *p && r < t.n;) {
        const char *semi = strchr(p, ';');
        size_t len = semi ? (size_t)(semi - p) : strlen(p);
        size_t col = 1;
        cells[(size_t)r * n] = corral_arena_printf(a, "GPU%d", r);
        header[r + 1] = cells[(size_t)r * n];
        for (size_t i = 0; i < len && col < n;) {
            while (i < len && (p[i] == ',' || p[i] == ' ' || p[i] == '\t'))
                i++;
            size_t s = i;
            while (i < len && p[i] != ',' && p[i] != ' ' && p[i] != '\t')
                i++;
            if (i > s)
                cells[(size_t)r * n + col++] = corral_arena_strndup(a, p + s, i - s);
        }
        if (col > 1)
            r++;
        p = semi ? semi + 1 : p + len;
    }
    corral__dw_table(w, 1, header, cells, (size_t)t.n, n);
    return t.n;
}

static void desc_taints(corral__dw_t *w, const corral_val_t *o)
{
    const corral_val_t *ts = corral_val_dig(o, "spec.taints");
    if (!ts || ts->kind != CORRAL_VAL_SEQ || !ts->n) {
        corral__dw_kv(w, 0, "Taints", "<none>");
        return;
    }
    corral_buf_t b;
    corral_buf_init(&b);
    for (size_t i = 0; i < ts->n; i++) {
        const char *k = corral_val_get_str(ts->items[i], "key");
        const char *v = corral_val_get_str(ts->items[i], "value");
        const char *e = corral_val_get_str(ts->items[i], "effect");
        corral_buf_printf(&b, "%s%s%s%s:%s", i ? "\n" : "", k ? k : "", v ? "=" : "", v ? v : "",
                          e ? e : "");
    }
    corral__dw_kv(w, 0, "Taints", "%s", corral_buf_str(&b));
    corral_buf_fini(&b);
}

static void desc_conditions(corral__dw_t *w, corral_arena_t *a, const corral_val_t *o)
{
    const corral_val_t *cs = corral_val_dig(o, "status.conditions");
    size_t n = cs && cs->kind == CORRAL_VAL_SEQ ? cs->n : 0;
    if (!n) {
        corral__dw_kv(w, 0, "Conditions", "<none>");
        return;
    }
    corral__dw_kv(w, 0, "Conditions", "%s", "");
    static const char *const header[] = {"Type", "Status", "LastHeartbeatTime", "Reason",
                                         "Message"};
    const char **cells = corral_arena_alloc(a, (n + 1) * 5 * sizeof(*cells));
    static const char *const rule[] = {"----", "------", "-----------------", "------", "-------"};
    memcpy(cells, rule, sizeof(rule));
    for (size_t i = 0; i < n; i++) {
        const corral_val_t *c = cs->items[i];
        const char **r = cells + (i + 1) * 5;
        const char *hb = corral_val_get_str(c, "lastHeartbeatTime");
        r[0] = corral_val_get_str(c, "type") ? corral_val_get_str(c, "type") : "";
        r[1] = corral_val_get_str(c, "status") ? corral_val_get_str(c, "status") : "";
        r[2] = hb ? corral__desc_time(a, hb) : "";
        r[3] = corral_val_get_str(c, "reason") ? corral_val_get_str(c, "reason") : "";
        r[4] = corral_val_get_str(c, "message") ? corral_val_get_str(c, "message") : "";
    }
    corral__dw_table(w, 1, header, cells, n + 1, 5);
}

static void desc_addresses(corral__dw_t *w, const corral_val_t *o)
{
    const corral_val_t *as = corral_val_dig(o, "status.addresses");
    if (!as || as->kind != CORRAL_VAL_SEQ || !as->n)
        return;
    corral__dw_kv(w, 0, "Addresses", "%s", "");
    for (size_t i = 0; i < as->n; i++) {
        const char *t = corral_val_get_str(as->items[i], "type");
        const char *ad = corral_val_get_str(as->items[i], "address");
        corral__dw_kv(w, 1, t ? t : "?", "%s", ad ? ad : "");
    }
}

int corral__describe_node(corral__cli_t *k, corral_arena_t *a, corral_val_t *o)
{
    corral__dw_t w;
    corral__dw_init(&w);
    const char *name = corral__desc_str(o, "metadata.name");
    const char *row[12];
    corral_table_row(CORRAL_KIND_NODE, o, corral__cli_now_us(), a, row);
    corral__desc_meta(&w, o, false, row[2]);
    corral__dw_kv(&w, 0, "CreationTimestamp", "%s",
                  corral__desc_time(a, corral__desc_str(o, "metadata.creationTimestamp")));
    desc_taints(&w, o);
    const char *u = corral__desc_str(o, "spec.unschedulable");
    corral__dw_kv(&w, 0, "Unschedulable", "%s", u ? u : "false");
    desc_conditions(&w, a, o);
    desc_addresses(&w, o);
    const corral_val_t *cap = corral_val_dig(o, "status.capacity");
    const corral_val_t *alloc = corral_val_dig(o, "status.allocatable");
    corral__desc_resources(&w, 0, "Capacity", cap);
    corral__desc_resources(&w, 0, "Allocatable", alloc ? alloc : cap);
    const corral_val_t *info = corral_val_dig(o, "status.nodeInfo");
    if (info && info->kind == CORRAL_VAL_MAP && info->n) {
        corral__dw_kv(&w, 0, "System Info", "%s", "");
        for (size_t i = 0; i < info->n; i++) {
            const corral_val_t *v = info->pairs[i].val;
            corral__dw_kv(&w, 1, info->pairs[i].key->s, "%s", v && v->s ? v->s : "");
        }
    }
    const char *topo =
        corral_val_get_str(corral_val_dig(o, "metadata.annotations"), CORRAL_GPU_TOPO_ANNOTATION);
    int ngpus = desc_topology(&w, a, topo);
    const char *owner[CORRAL_GPU_TOPO_MAX] = {0};
    desc_node_pods(k, &w, a, name ? name : "", alloc ? alloc : cap, owner, ngpus);
    if (ngpus) {
        const char **cells = corral_arena_alloc(a, (size_t)ngpus * 2 * sizeof(*cells));
        for (size_t g = 0; g < (size_t)ngpus; g++) {
            cells[g * 2] = corral_arena_printf(a, "GPU%zu", g);
            cells[g * 2 + 1] = owner[g] ? owner[g] : "(free)";
        }
        static const char *const header[] = {"GPU", "Pod"};
        corral__dw_kv(&w, 0, "GPU Allocation", "%s", "");
        corral__dw_table(&w, 1, header, cells, (size_t)ngpus, 2);
    }
    corral__desc_events(k, &w, a, corral_kind_get(CORRAL_KIND_NODE), NULL, name ? name : "", NULL);
    corral__dw_flush(&w, stdout);
    return CORRAL_EXIT_OK;
}
