/*
 * Turning the simulator's plain nodes and pods into the objects the engine
 * reads, exactly as the live scheduler would see them: nodes with their GPU
 * model as the nvidia.com/gpu.product label, pods with resource requests, GPU
 * model constraints as required node affinity, and a queue annotation.
 * Everything temporary goes in the caller's arena; the engine copies what it
 * keeps.
 */
#include <string.h>

#include "corral/engine.h"
#include "corral/timefmt.h"
#include "sim/trace_sim.h"

static corral_res_t res(const char *name, int64_t v, int exp10)
{
    corral_res_t r = {name, corral_qty_from_int(v)};
    r.qty.exp10 += exp10;
    return r;
}

void corral__sim_add_node(corral_engine_t *e, corral_arena_t *a, const sim_node_t *n)
{
    corral_obj_t o;
    memset(&o, 0, sizeof(o));
    corral_node_t node;
    memset(&node, 0, sizeof(node));
    o.info = corral_kind_get(CORRAL_KIND_NODE);
    o.meta.name = n->name;
    if (n->model && *n->model) {
        corral_kv_t *l = corral_arena_alloc(a, sizeof(*l));
        l->key = "nvidia.com/gpu.product";
        l->value = n->model;
        o.meta.labels = (corral_strmap_t){l, 1};
    }
    corral_res_t *r = corral_arena_alloc(a, 4 * sizeof(*r));
    r[0] = res("cpu", n->cpu_milli, -3);
    r[1] = res("memory", n->mem_mib << 20, 0);
    r[2] = res("nvidia.com/gpu", n->gpus, 0);
    r[3] = res("pods", 100000, 0); /* traces do not limit pods per node */
    node.allocatable = (corral_reslist_t){r, 4};
    o.u.node = &node;
    corral_engine_upsert(e, &o, 0, NULL);
}

static void model_affinity(corral_arena_t *a, const sim_pod_t *p, corral_pod_spec_t *spec)
{
    corral_nsel_term_t *t = corral_arena_alloc(a, sizeof(*t));
    corral_sel_req_t *r = corral_arena_alloc(a, sizeof(*r));
    r->key = "nvidia.com/gpu.product";
    r->op = CORRAL_SEL_IN;
    r->values = (const char **)p->models;
    r->nvalues = p->nmodels;
    t->exprs = (corral_selector_t){r, 1};
    spec->node_affinity.required = t;
    spec->node_affinity.nrequired = 1;
}

void corral__sim_add_pod(corral_engine_t *e, corral_arena_t *a, const sim_pod_t *p,
                         const char *name, const char *group, int64_t now)
{
    sim_pod_ann_t none = {-1, -1, -1};
    corral__sim_add_pod_est(e, a, p, name, group, now, &none);
}

static void ann_duration(corral_arena_t *a, corral_kv_t *kv, const char *key, int64_t ms)
{
    char *d = corral_arena_alloc(a, 40);
    corral_duration_format(ms * 1000000, d, 40);
    *kv = (corral_kv_t){key, d};
}

void corral__sim_add_pod_est(corral_engine_t *e, corral_arena_t *a, const sim_pod_t *p,
                             const char *name, const char *group, int64_t now,
                             const sim_pod_ann_t *pa)
{
    corral_obj_t o;
    memset(&o, 0, sizeof(o));
    corral_pod_t pod;
    memset(&pod, 0, sizeof(pod));
    o.info = corral_kind_get(CORRAL_KIND_POD);
    o.meta.name = name;
    o.meta.namespace = "default";
    corral_kv_t *ann = corral_arena_alloc(a, 6 * sizeof(*ann));
    size_t nann = 0;
    if (pa->est_ms >= 0)
        ann_duration(a, &ann[nann++], "corral.dev/runtime-estimate", pa->est_ms);
    if (pa->min_run_ms > 0)
        ann_duration(a, &ann[nann++], "corral.dev/min-runtime", pa->min_run_ms);
    if (pa->ckpt_ms > 0)
        ann_duration(a, &ann[nann++], "corral.dev/checkpoint-interval", pa->ckpt_ms);
    if (group)
        ann[nann++] = (corral_kv_t){"scheduling.k8s.io/group-name", group};
    if (p->queue)
        ann[nann++] = (corral_kv_t){"scheduling.volcano.sh/queue-name", p->queue};
    o.meta.annotations = (corral_strmap_t){ann, nann};
    corral_container_t *c = corral_arena_alloc(a, sizeof(*c));
    c->name = "main";
    corral_res_t *r = corral_arena_alloc(a, 3 * sizeof(*r));
    size_t nr = 0;
    r[nr++] = res("cpu", p->cpu_milli, -3);
    r[nr++] = res("memory", p->mem_mib << 20, 0);
    if (p->gpus && p->gpu_milli < 1000)
        r[nr++] = res("corral.dev/gpu-milli", p->gpu_milli, 0);
    else if (p->gpus)
        r[nr++] = res("nvidia.com/gpu", p->gpus, 0);
    c->requests = (corral_reslist_t){r, nr};
    pod.spec.containers = c;
    pod.spec.ncontainers = 1;
    if (p->nmodels)
        model_affinity(a, p, &pod.spec);
    o.u.pod = &pod;
    corral_engine_upsert(e, &o, now, NULL);
}
