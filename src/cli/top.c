/*
 * corral top nodes|pods|gpus: resource usage, as `kubectl top` prints it,
 * plus GPUs. nodes and pods read metrics.k8s.io (the API server's built-in
 * metrics-server: CPU in cores as a rate over its window, memory working
 * set) and add each node's GPUs (allocatable nvidia.com/gpu, and how many
 * running pods request) and each pod's GPUs. gpus is a per-GPU view from
 * every node's DCGM exposition, read through the API server's node proxy
 * (/api/v1/nodes/NAME/proxy/metrics) and parsed with promtext.c:
 * utilization, framebuffer memory used of total, power, temperature and
 * the pod holding the GPU.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/kubecli.h"
#include "corral/hmap.h"
#include "corral/promtext.h"
#include "corral/quantity.h"
#include "corral/table.h"

#define GPU_RES      "nvidia.com/gpu"
#define MAX_GPU_ROWS 4096

static void top_usage(FILE *fp)
{
    fprintf(fp, "usage: corral top nodes|pods|gpus [NAME] [-n NS | -A] [-l SELECTOR]\n"
                "\n"
                "  nodes   CPU and memory of each node (metrics.k8s.io) and its GPUs allocated\n"
                "  pods    CPU and memory of each pod and the GPUs it requests\n"
                "  gpus    each GPU: utilization, memory, power, temperature, owning pod\n"
                "          (the nodes' DCGM metrics through /api/v1/nodes/NAME/proxy/metrics)\n"
                "  -A, --all-namespaces   pods of every namespace\n"
                "  -l, --selector SEL     only objects with these labels\n\n" CORRAL__CLI_HELP);
}

/* A quantity string at path of v, scaled (0: units, 3: milli); 0 when absent. */
static int64_t qty_at(const corral_val_t *v, const char *key, int scale)
{
    const corral_val_t *q = v ? corral_val_get(v, key) : NULL;
    if (!q || !q->s)
        return 0;
    corral_qty_t x;
    int64_t out = 0;
    if (corral_qty_parse(q->s, strlen(q->s), &x, NULL, 0) != 0 ||
        corral_qty_scaled(&x, scale, &out))
        return 0;
    return out;
}

/* Whole GPUs a pod asks for: its effective requests, as the scheduler counts them. */
static int64_t pod_gpus(corral_arena_t *a, corral_val_t *pod)
{
    corral_diag_t d;
    corral_diag_init(&d);
    corral_obj_t *o = NULL;
    corral_obj_decode(a, pod, NULL, &d, &o);
    corral_diag_fini(&d);
    return o && o->u.pod ? corral_pod_gpu_milli(&o->u.pod->spec) / 1000 : 0;
}

static bool pod_active(const corral_val_t *pod)
{
    const char *ph = corral_val_get_str(corral_val_get(pod, "status"), "phase");
    return !ph || (strcmp(ph, "Succeeded") != 0 && strcmp(ph, "Failed") != 0);
}

static const corral_val_t *items_of(const corral_val_t *list)
{
    const corral_val_t *it = corral_val_get(list, "items");
    return it && it->kind == CORRAL_VAL_SEQ ? it : NULL;
}

/* The key of an object of a list: "NS/NAME", or "NAME" when ns is NULL. */
static const char *key_of(corral_arena_t *a, const char *ns, const char *name)
{
    return ns ? corral_arena_printf(a, "%s/%s", ns, name ? name : "")
              : corral_arena_strdup(a, name ? name : "");
}

/* Index a list's items by key_of (namespaced: with their namespace), so that
 * joining two lists is one pass over each, not one over the other per item. */
static void index_items(corral_arena_t *a, const corral_val_t *items, bool namespaced,
                        corral_hmap_t *idx)
{
    corral_hmap_init(idx);
    for (size_t i = 0; items && i < items->n; i++) {
        const corral_val_t *md = corral_val_get(items->items[i], "metadata");
        const char *ns = namespaced ? corral_val_get_str(md, "namespace") : NULL;
        corral_hmap_put(
            idx, key_of(a, namespaced ? (ns ? ns : "") : NULL, corral_val_get_str(md, "name")),
            (uint32_t)i);
    }
}

static corral_val_t *find_named(corral_arena_t *a, const corral_hmap_t *idx,
                                const corral_val_t *items, const char *ns, const char *name)
{
    uint32_t i;
    return items && corral_hmap_get(idx, key_of(a, ns, name), &i) ? items->items[i] : NULL;
}

static const char *sel_query(corral_arena_t *a, const char *sel)
{
    if (!sel)
        return "";
    corral_buf_t b;
    corral_buf_init(&b);
    for (const char *p = sel; *p; p++) {
        if (strchr("=!,()", *p) || *p == ' ')
            corral_buf_printf(&b, "%%%02X", (unsigned char)*p);
        else
            corral_buf_putc(&b, *p);
    }
    const char *q = corral_arena_printf(a, "?labelSelector=%s", corral_buf_str(&b));
    corral_buf_fini(&b);
    return q;
}

static int top_nodes(corral__cli_t *k, corral_arena_t *a, const char *name, const char *sel)
{
    const char *q = sel_query(a, sel);
    const char *mpath = name ? corral_arena_printf(a, "/apis/metrics.k8s.io/v1beta1/nodes/%s", name)
                             : corral_arena_printf(a, "/apis/metrics.k8s.io/v1beta1/nodes%s", q);
    corral_val_t *m = corral__cli_get(k, a, mpath, NULL);
    corral_val_t *nodes =
        m ? corral__cli_get(k, a, corral_arena_printf(a, "/api/v1/nodes%s", q), NULL) : NULL;
    corral_val_t *pods = nodes ? corral__cli_get(k, a, "/api/v1/pods", NULL) : NULL;
    if (!pods)
        return CORRAL_EXIT_FAIL;
    corral_val_t one = {.kind = CORRAL_VAL_SEQ, .n = 1, .items = &m};
    const corral_val_t *mi = name ? &one : items_of(m);
    if (!mi || mi->n == 0) {
        fprintf(stderr, "error: metrics not available yet\n");
        return CORRAL_EXIT_FAIL;
    }
    static const char *const hdr[] = {"NAME",    "CPU(cores)", "CPU%",     "MEMORY(bytes)",
                                      "MEMORY%", "GPUS",       "GPU-ALLOC"};
    const char **rows = corral_arena_alloc(a, mi->n * 7 * sizeof(*rows));
    /* GPUs held on each node of the metrics: one pass over the pods. */
    corral_hmap_t rowof, nodeidx;
    index_items(a, mi, false, &rowof);
    index_items(a, items_of(nodes), false, &nodeidx);
    int64_t *held = corral_arena_alloc(a, mi->n * sizeof(*held));
    memset(held, 0, mi->n * sizeof(*held));
    const corral_val_t *pi = items_of(pods);
    for (size_t j = 0; pi && j < pi->n; j++) {
        const char *on = corral_val_get_str(corral_val_get(pi->items[j], "spec"), "nodeName");
        uint32_t row;
        if (on && corral_hmap_get(&rowof, on, &row) && pod_active(pi->items[j]))
            held[row] += pod_gpus(a, pi->items[j]);
    }
    for (size_t i = 0; i < mi->n; i++) {
        const char *n = corral_val_get_str(corral_val_get(mi->items[i], "metadata"), "name");
        const corral_val_t *u = corral_val_get(mi->items[i], "usage");
        int64_t cpu_m = qty_at(u, "cpu", 3), mem = qty_at(u, "memory", 0);
        const corral_val_t *node = find_named(a, &nodeidx, items_of(nodes), NULL, n);
        const corral_val_t *alloc = corral_val_dig(node, "status.allocatable");
        int64_t acpu = qty_at(alloc, "cpu", 3), amem = qty_at(alloc, "memory", 0);
        int64_t gpus = qty_at(alloc, GPU_RES, 0), used = held[i];
        const char **r = rows + i * 7;
        r[0] = n ? n : "";
        r[1] = corral_arena_printf(a, "%lldm", (long long)cpu_m);
        r[2] =
            acpu ? corral_arena_printf(a, "%lld%%", (long long)(cpu_m * 100 / acpu)) : "<unknown>";
        r[3] = corral_arena_printf(a, "%lldMi", (long long)(mem >> 20));
        r[4] = amem ? corral_arena_printf(a, "%lld%%", (long long)(mem * 100 / amem)) : "<unknown>";
        r[5] = corral_arena_printf(a, "%lld", (long long)gpus);
        r[6] = corral_arena_printf(a, "%lld", (long long)used);
    }
    corral_table_print(stdout, hdr, rows, mi->n, 7);
    corral_hmap_fini(&rowof);
    corral_hmap_fini(&nodeidx);
    return CORRAL_EXIT_OK;
}

static int top_pods(corral__cli_t *k, corral_arena_t *a, const char *name, const char *sel,
                    bool all)
{
    const char *q = sel_query(a, sel);
    const char *base =
        all ? "/apis/metrics.k8s.io/v1beta1/pods"
            : corral_arena_printf(a, "/apis/metrics.k8s.io/v1beta1/namespaces/%s/pods", k->ns);
    const char *path = name ? corral_arena_printf(a, "%s/%s", base, name)
                            : corral_arena_printf(a, "%s%s", base, q);
    corral_val_t *m = corral__cli_get(k, a, path, NULL);
    const char *ppath =
        all ? "/api/v1/pods" : corral_arena_printf(a, "/api/v1/namespaces/%s/pods", k->ns);
    corral_val_t *pods = m ? corral__cli_get(k, a, ppath, NULL) : NULL;
    if (!pods)
        return CORRAL_EXIT_FAIL;
    corral_val_t one = {.kind = CORRAL_VAL_SEQ, .n = 1, .items = &m};
    const corral_val_t *mi = name ? &one : items_of(m);
    if (!mi || mi->n == 0) {
        fprintf(stderr, "error: metrics not available yet\n");
        return CORRAL_EXIT_FAIL;
    }
    size_t nc = all ? 5 : 4;
    static const char *const hdr_all[] = {"NAMESPACE", "NAME", "CPU(cores)", "MEMORY(bytes)",
                                          "GPUS"};
    const char **rows = corral_arena_alloc(a, mi->n * nc * sizeof(*rows));
    corral_hmap_t podidx;
    index_items(a, items_of(pods), true, &podidx);
    for (size_t i = 0; i < mi->n; i++) {
        const corral_val_t *md = corral_val_get(mi->items[i], "metadata");
        const char *n = corral_val_get_str(md, "name"), *ns = corral_val_get_str(md, "namespace");
        int64_t cpu_m = 0, mem = 0;
        const corral_val_t *cs = corral_val_get(mi->items[i], "containers");
        for (size_t j = 0; cs && cs->kind == CORRAL_VAL_SEQ && j < cs->n; j++) {
            const corral_val_t *u = corral_val_get(cs->items[j], "usage");
            cpu_m += qty_at(u, "cpu", 3);
            mem += qty_at(u, "memory", 0);
        }
        corral_val_t *pod = find_named(a, &podidx, items_of(pods), ns ? ns : "", n);
        const char **r = rows + i * nc;
        size_t c = 0;
        if (all)
            r[c++] = ns ? ns : "";
        r[c++] = n ? n : "";
        r[c++] = corral_arena_printf(a, "%lldm", (long long)cpu_m);
        r[c++] = corral_arena_printf(a, "%lldMi", (long long)(mem >> 20));
        r[c++] = corral_arena_printf(a, "%lld", (long long)(pod ? pod_gpus(a, pod) : 0));
    }
    corral_hmap_fini(&podidx);
    corral_table_print(stdout, all ? hdr_all : hdr_all + 1, rows, mi->n, nc);
    return CORRAL_EXIT_OK;
}

/* --- gpus ---------------------------------------------------------------------------------- */

typedef struct gpu_row {
    char node[128], gpu[16], model[96], ns[128], pod[256];
    double util, used, free_, power, temp;
} gpu_row_t;

typedef struct gpu_set {
    gpu_row_t *rows;
    size_t n, cap;
    const char *node;
} gpu_set_t;

static gpu_row_t *gpu_for(gpu_set_t *g, const char *idx)
{
    for (size_t i = 0; i < g->n; i++)
        if (!strcmp(g->rows[i].node, g->node) && !strcmp(g->rows[i].gpu, idx))
            return &g->rows[i];
    if (g->n >= MAX_GPU_ROWS)
        return NULL;
    corral_grow((void **)&g->rows, &g->cap, g->n + 1, sizeof(gpu_row_t));
    gpu_row_t *r = &g->rows[g->n++];
    memset(r, 0, sizeof(*r));
    r->util = r->used = r->free_ = r->power = r->temp = NAN;
    snprintf(r->node, sizeof(r->node), "%s", g->node);
    snprintf(r->gpu, sizeof(r->gpu), "%s", idx);
    return r;
}

static int on_dcgm(void *arg, const corral_promtext_sample_t *s)
{
    gpu_set_t *g = arg;
    if (strncmp(s->name, "DCGM_FI_DEV_", 12) != 0)
        return 0;
    const char *idx = corral_promtext_label(s, "gpu");
    gpu_row_t *r = idx ? gpu_for(g, idx) : NULL;
    if (!r)
        return 0;
    const char *f = s->name + 12;
    if (!strcmp(f, "GPU_UTIL"))
        r->util = s->value;
    else if (!strcmp(f, "FB_USED"))
        r->used = s->value;
    else if (!strcmp(f, "FB_FREE"))
        r->free_ = s->value;
    else if (!strcmp(f, "POWER_USAGE"))
        r->power = s->value;
    else if (!strcmp(f, "GPU_TEMP"))
        r->temp = s->value;
    const char *v;
    if ((v = corral_promtext_label(s, "modelName")) && *v)
        snprintf(r->model, sizeof(r->model), "%s", v);
    if ((v = corral_promtext_label(s, "namespace")) && *v)
        snprintf(r->ns, sizeof(r->ns), "%s", v);
    if ((v = corral_promtext_label(s, "pod")) && *v)
        snprintf(r->pod, sizeof(r->pod), "%s", v);
    return 0;
}

static const char *num(corral_arena_t *a, double v, int decimals, const char *unit)
{
    return isfinite(v) ? corral_arena_printf(a, "%.*f%s", decimals, v, unit) : "-";
}

static void print_gpus(corral_arena_t *a, const gpu_set_t *g)
{
    static const char *const hdr[] = {"NODE",        "GPU",      "MODEL",   "UTIL",
                                      "MEMORY(MiB)", "POWER(W)", "TEMP(C)", "POD"};
    const char **rows = corral_arena_alloc(a, (g->n ? g->n : 1) * 8 * sizeof(*rows));
    for (size_t i = 0; i < g->n; i++) {
        const gpu_row_t *x = &g->rows[i];
        const char **r = rows + i * 8;
        r[0] = x->node;
        r[1] = x->gpu;
        r[2] = x->model[0] ? x->model : "-";
        r[3] = num(a, x->util, 0, "%");
        r[4] = isfinite(x->used) && isfinite(x->free_)
                   ? corral_arena_printf(a, "%.0f/%.0f", x->used, x->used + x->free_)
                   : num(a, x->used, 0, "");
        r[5] = num(a, x->power, 1, "");
        r[6] = num(a, x->temp, 0, "");
        r[7] = x->pod[0] ? corral_arena_printf(a, "%s/%s", x->ns, x->pod) : "<none>";
    }
    corral_table_print(stdout, hdr, rows, g->n, 8);
}

static int top_gpus(corral__cli_t *k, corral_arena_t *a, const char *name, const char *sel)
{
    const char *path = name ? corral_arena_printf(a, "/api/v1/nodes/%s", name)
                            : corral_arena_printf(a, "/api/v1/nodes%s", sel_query(a, sel));
    corral_val_t *nodes = corral__cli_get(k, a, path, NULL);
    if (!nodes)
        return CORRAL_EXIT_FAIL;
    corral_val_t one = {.kind = CORRAL_VAL_SEQ, .n = 1, .items = &nodes};
    const corral_val_t *ni = name ? &one : items_of(nodes);
    gpu_set_t g = {0};
    int rc = CORRAL_EXIT_OK;
    for (size_t i = 0; ni && i < ni->n; i++) {
        g.node = corral_val_get_str(corral_val_get(ni->items[i], "metadata"), "name");
        if (!g.node)
            continue;
        corral_client_resp_t r;
        corral_client_resp_init(&r);
        const char *pp = corral_arena_printf(a, "/api/v1/nodes/%s/proxy/metrics", g.node);
        if (corral_client_request(k->c, "GET", pp, NULL, NULL, 0, &r) != 0 || r.code != 200) {
            fprintf(stderr, "corral top gpus: node %s: ", g.node);
            corral__cli_error(k, &r);
            rc = CORRAL_EXIT_FAIL;
        } else {
            char err[256];
            if (corral_promtext_parse(r.body.p ? r.body.p : "", r.body.len, on_dcgm, &g, err,
                                      sizeof(err)) < 0) {
                fprintf(stderr, "corral top gpus: node %s: %s\n", g.node, err);
                rc = CORRAL_EXIT_FAIL;
            }
        }
        corral_client_resp_fini(&r);
    }
    if (g.n)
        print_gpus(a, &g);
    else
        fprintf(stderr, "No GPUs found\n");
    corral_free(g.rows);
    return rc;
}

int corral_cmd_top(int argc, char **argv)
{
    static const struct option opts[] = {{"all-namespaces", no_argument, NULL, 'A'},
                                         {"selector", required_argument, NULL, 'l'},
                                         {"help", no_argument, NULL, 'h'},
                                         CORRAL__CLI_LONGOPTS,
                                         {NULL, 0, NULL, 0}};
    corral__cli_t k;
    corral__cli_init(&k, "corral top");
    const char *sel = NULL;
    bool all = false;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "Al:hn:s:", opts, NULL)) != -1) {
        if (c == 'A') {
            all = true;
        } else if (c == 'l') {
            sel = optarg;
        } else if (c == 'h') {
            top_usage(stdout);
            return CORRAL_EXIT_OK;
        } else if (!corral__cli_opt(&k, c, optarg)) {
            top_usage(stderr);
            return CORRAL_EXIT_INVALID;
        }
    }
    int left = argc - optind;
    const char *what = left >= 1 ? argv[optind] : NULL;
    const char *name = left >= 2 ? argv[optind + 1] : NULL;
    bool known = what && (!strcmp(what, "nodes") || !strcmp(what, "node") || !strcmp(what, "no") ||
                          !strcmp(what, "pods") || !strcmp(what, "pod") || !strcmp(what, "po") ||
                          !strcmp(what, "gpus") || !strcmp(what, "gpu"));
    if (!known || left > 2) {
        top_usage(stderr);
        return CORRAL_EXIT_INVALID;
    }
    if (!corral__cli_connect(&k))
        return CORRAL_EXIT_FAIL;
    corral_arena_t a;
    corral_arena_init(&a);
    int rc = what[0] == 'n'   ? top_nodes(&k, &a, name, sel)
             : what[0] == 'p' ? top_pods(&k, &a, name, sel, all)
                              : top_gpus(&k, &a, name, sel);
    corral_arena_fini(&a);
    corral__cli_fini(&k);
    return rc;
}
