/*
 * Loading a cluster and a workload for trace simulation, from whatever the
 * user has: an openb node CSV, a YAML file of Node objects, or a synthetic
 * --nodes N --gpus-per-node G; an openb pod CSV or a Philly-style job CSV
 * (told apart by their header). Everything ends up as sim_node_t/sim_pod_t in
 * the caller's arena; bad rows are reported by the readers as FILE:LINE.
 */
#include <stdlib.h>
#include <string.h>

#include "corral/io.h"
#include "corral/trace.h"
#include "corral/yaml.h"
#include "sim/trace_sim.h"

static bool has_suffix(const char *s, const char *suf)
{
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && strcmp(s + n - m, suf) == 0;
}

static int64_t res_value(const corral_reslist_t *l, const char *name, int scale)
{
    const corral_qty_t *q = corral_reslist_get(l, name);
    int64_t v = 0;
    if (q)
        corral_qty_scaled(q, scale, &v);
    return v;
}

/* Nodes from a YAML file of Node objects (other kinds are ignored). */
static int nodes_from_yaml(const char *path, corral_arena_t *a, corral_diag_t *d, sim_cluster_t *c)
{
    char *data;
    size_t len;
    if (corral_file_read(path, CORRAL_YAML_MAX_BYTES, d, &data, &len) != 0)
        return CORRAL_EINVAL;
    corral_doc_t *docs;
    size_t nd;
    int rc = corral_yaml_parse(a, data, len, path, NULL, d, &docs, &nd);
    c->nodes = corral_arena_alloc(a, (nd + 1) * sizeof(*c->nodes));
    for (size_t i = 0; rc == 0 && i < nd; i++) {
        corral_obj_t *o;
        if (!docs[i].root || corral_obj_decode(a, docs[i].root, path, d, &o) != 0) {
            rc = docs[i].root ? CORRAL_EINVAL : rc;
            continue;
        }
        if (o->info->kind != CORRAL_KIND_NODE)
            continue;
        sim_node_t *n = &c->nodes[c->nnodes++];
        n->name = o->meta.name;
        n->cpu_milli = res_value(&o->u.node->allocatable, "cpu", 3);
        n->mem_mib = res_value(&o->u.node->allocatable, "memory", 0) >> 20;
        n->gpus = (int)res_value(&o->u.node->allocatable, "nvidia.com/gpu", 0);
        const char *model = corral_strmap_get(&o->meta.labels, "nvidia.com/gpu.product");
        n->model = model ? model : "";
        c->gpus += n->gpus;
    }
    corral_free(data);
    return rc;
}

int corral__load_cluster(const corral_sim_trace_opts_t *o, corral_arena_t *a, corral_diag_t *d,
                         sim_cluster_t *c)
{
    memset(c, 0, sizeof(*c));
    if (!o->cluster) {
        /* Synthetic: generous cpu and memory, so GPUs are what binds. */
        c->nodes = corral_arena_alloc(a, ((size_t)o->nodes + 1) * sizeof(*c->nodes));
        for (int i = 0; i < o->nodes; i++) {
            sim_node_t *n = &c->nodes[c->nnodes++];
            n->name = corral_arena_printf(a, "node-%05d", i);
            n->gpus = o->gpus_per_node;
            n->cpu_milli = (int64_t)(o->gpus_per_node > 0 ? o->gpus_per_node : 1) * 16000;
            n->mem_mib = (int64_t)(o->gpus_per_node > 0 ? o->gpus_per_node : 1) * 131072;
            n->model = "";
            c->gpus += n->gpus;
        }
        return 0;
    }
    if (has_suffix(o->cluster, ".yaml") || has_suffix(o->cluster, ".yml"))
        return nodes_from_yaml(o->cluster, a, d, c);
    corral_trace_node_t *rows;
    size_t n;
    if (corral_trace_read_nodes(o->cluster, a, d, &rows, &n) != 0)
        return CORRAL_EINVAL;
    c->nodes = corral_arena_alloc(a, (n + 1) * sizeof(*c->nodes));
    for (size_t i = 0; i < n; i++) {
        c->nodes[i] = (sim_node_t){rows[i].name, rows[i].cpu_milli, rows[i].memory_mib,
                                   rows[i].gpus, rows[i].model};
        c->gpus += rows[i].gpus;
    }
    c->nnodes = n;
    return 0;
}

static void pods_from_openb(const corral_trace_pod_t *r, size_t n, corral_arena_t *a,
                            sim_workload_t *w)
{
    w->pods = corral_arena_alloc(a, (n + 1) * sizeof(*w->pods));
    w->npods = n;
    w->timed = true;
    for (size_t i = 0; i < n; i++) {
        sim_pod_t *p = &w->pods[i];
        p->name = r[i].name;
        p->cpu_milli = r[i].cpu_milli;
        p->mem_mib = r[i].memory_mib;
        p->gpus = r[i].num_gpu;
        p->gpu_milli = r[i].num_gpu ? r[i].gpu_milli : 0;
        p->models = r[i].gpu_spec;
        p->nmodels = r[i].n_gpu_spec;
        p->arrive_ms = r[i].creation_time >= 0 ? r[i].creation_time * 1000 : 0;
        int64_t start = r[i].scheduled_time >= 0 ? r[i].scheduled_time : r[i].creation_time;
        p->duration_ms = r[i].deletion_time >= 0 && start >= 0 && r[i].deletion_time >= start
                             ? (r[i].deletion_time - start) * 1000
                             : -1;
        if (r[i].creation_time < 0)
            w->timed = false;
    }
}

static void pods_from_jobs(const corral_trace_job_t *r, size_t n, corral_arena_t *a,
                           sim_workload_t *w)
{
    int64_t t0 = n ? r[0].submit_ms : 0;
    for (size_t i = 1; i < n; i++)
        t0 = r[i].submit_ms < t0 ? r[i].submit_ms : t0;
    w->pods = corral_arena_alloc(a, (n + 1) * sizeof(*w->pods));
    w->npods = n;
    w->timed = true;
    w->jobs = true;
    for (size_t i = 0; i < n; i++) {
        sim_pod_t *p = &w->pods[i];
        p->name = corral_arena_printf(a, "job-%zu", i);
        p->gpus = r[i].num_gpus;
        p->gpu_milli = 1000;
        p->arrive_ms = r[i].submit_ms - t0;
        p->duration_ms = r[i].duration_ms;
        p->queue = r[i].queue;
    }
}

/* Which reader: a header with num_gpus and timestamp is a job list. */
static bool looks_like_jobs(const char *data, size_t len)
{
    const char *nl = memchr(data, '\n', len);
    size_t hl = nl ? (size_t)(nl - data) : len;
    char head[512];
    snprintf(head, sizeof(head), "%.*s", (int)(hl < 511 ? hl : 511), data);
    return strstr(head, "timestamp") && strstr(head, "num_gpus");
}

int corral__load_workload(const char *path, corral_arena_t *a, corral_diag_t *d, sim_workload_t *w)
{
    memset(w, 0, sizeof(*w));
    char *data;
    size_t len;
    if (corral_file_read(path, CORRAL_TRACE_MAX_BYTES, d, &data, &len) != 0)
        return CORRAL_EINVAL;
    int rc;
    if (looks_like_jobs(data, len)) {
        corral_trace_job_t *rows;
        size_t n;
        rc = corral_trace_read_jobs_mem(path, data, len, a, d, &rows, &n);
        if (rc == 0)
            pods_from_jobs(rows, n, a, w);
    } else {
        corral_trace_pod_t *rows;
        size_t n;
        rc = corral_trace_read_pods_mem(path, data, len, a, d, &rows, &n);
        if (rc == 0)
            pods_from_openb(rows, n, a, w);
    }
    corral_free(data);
    return rc == 0 ? 0 : CORRAL_EINVAL;
}
