/*
 * Volcano Job expansion: the PodGroup and the pods Volcano's job controller
 * creates for a batch.volcano.sh Job, in the two forms Corral needs: typed
 * objects for the simulator (pods share their task template's typed spec;
 * nothing is copied but metadata) and value trees the controller POSTs to
 * the API server. Both take their names, labels and annotations from one
 * place (corral_vcjob_pod_meta), so a pod looks the same in `corral sim` and
 * on a cluster: named <job>-<task>-<index>, grouped by the annotation
 * scheduling.k8s.io/group-name, labelled volcano.sh/job-name, task-spec,
 * job-namespace and queue-name, and inheriting the job's priority class and
 * scheduler when its template sets none.
 */
#include <stdio.h>
#include <string.h>

#include "corral/model.h"

/* --- shared metadata ----------------------------------------------------------------- */

static void kv_set(corral_arena_t *a, corral_strmap_t *m, size_t *cap, const char *k, const char *v)
{
    for (size_t i = 0; i < m->n; i++) {
        if (strcmp(m->items[i].key, k) == 0) {
            m->items[i].value = v;
            return;
        }
    }
    if (m->n == *cap) {
        size_t ncap = *cap ? *cap * 2 : 8;
        m->items =
            corral_arena_grow(a, m->items, *cap * sizeof(*m->items), ncap * sizeof(*m->items));
        *cap = ncap;
    }
    m->items[m->n].key = k;
    m->items[m->n].value = v;
    m->n++;
}

static void copy_map(corral_arena_t *a, corral_strmap_t *dst, size_t *cap,
                     const corral_strmap_t *src)
{
    for (size_t i = 0; i < src->n; i++)
        kv_set(a, dst, cap, src->items[i].key, src->items[i].value);
}

static const char *task_name(const corral_job_task_t *t)
{
    return t->name && *t->name ? t->name : "default";
}

static const char *job_queue(const corral_obj_t *job)
{
    return job->u.job->queue ? job->u.job->queue : "default";
}

void corral_vcjob_pod_meta(corral_arena_t *a, const corral_obj_t *job, const corral_job_task_t *t,
                           int64_t version, corral_strmap_t *labels, corral_strmap_t *annotations)
{
    const corral_meta_t *tm = &t->tmpl.meta;
    const char *jname = job->meta.name;
    size_t lcap = 0, acap = 0;
    memset(labels, 0, sizeof(*labels));
    memset(annotations, 0, sizeof(*annotations));
    copy_map(a, annotations, &acap, &tm->annotations);
    kv_set(a, annotations, &acap, CORRAL_VC_TASK_SPEC, task_name(t));
    kv_set(a, annotations, &acap, CORRAL_VC_GROUP_NAME, jname);
    kv_set(a, annotations, &acap, CORRAL_VC_JOB_NAME, jname);
    kv_set(a, annotations, &acap, CORRAL_VC_QUEUE_NAME, job_queue(job));
    kv_set(a, annotations, &acap, CORRAL_VC_JOB_VERSION,
           corral_arena_printf(a, "%lld", (long long)version));
    kv_set(a, annotations, &acap, CORRAL_VC_TEMPLATE_UID,
           corral_arena_printf(a, "%s-%s", jname, task_name(t)));
    copy_map(a, labels, &lcap, &tm->labels);
    kv_set(a, labels, &lcap, CORRAL_VC_JOB_NAME, jname);
    kv_set(a, labels, &lcap, CORRAL_VC_TASK_SPEC, task_name(t));
    kv_set(a, labels, &lcap, CORRAL_VC_JOB_NAMESPACE,
           job->meta.namespace ? job->meta.namespace : "default");
    kv_set(a, labels, &lcap, CORRAL_VC_QUEUE_NAME, job_queue(job));
}

const char *corral_vcjob_pod_name(corral_arena_t *a, const corral_obj_t *job,
                                  const corral_job_task_t *t, int32_t index)
{
    return corral_arena_printf(a, "%s-%s-%d", job->meta.name, t->name ? t->name : "task",
                               (int)index);
}

static const char *pod_scheduler(const corral_vcjob_t *j, const char *tmpl)
{
    if (!tmpl || !*tmpl || !strcmp(tmpl, "default-scheduler"))
        return j->scheduler_name ? j->scheduler_name : "volcano";
    return tmpl;
}

/* --- typed expansion (the simulator) ---------------------------------------------------- */

static corral_obj_t *new_obj(corral_arena_t *a, corral_kind_t kind, const corral_obj_t *job,
                             const char *name)
{
    corral_obj_t *o = corral_arena_alloc(a, sizeof(*o));
    o->info = corral_kind_get(kind);
    o->raw = job->raw;
    o->file = job->file;
    o->meta.name = corral_arena_strdup(a, name);
    o->meta.namespace = job->meta.namespace;
    return o;
}

static corral_obj_t *make_podgroup(corral_arena_t *a, const corral_obj_t *job)
{
    const corral_vcjob_t *j = job->u.job;
    corral_obj_t *o = new_obj(a, CORRAL_KIND_PODGROUP, job, job->meta.name);
    corral_podgroup_t *pg = corral_arena_alloc(a, sizeof(*pg));
    pg->min_member = j->min_available;
    pg->queue = job_queue(job);
    pg->priority_class_name = j->priority_class_name;
    pg->topology = j->topology;
    o->u.pg = pg;
    return o;
}

int corral_vcjob_expand(corral_arena_t *a, const corral_obj_t *job, corral_obj_t **pg,
                        corral_obj_t ***pods, size_t *npods)
{
    const corral_vcjob_t *j = job->u.job;
    size_t total = 0;
    for (size_t i = 0; i < j->ntasks; i++)
        total += j->tasks[i].replicas > 0 ? (size_t)j->tasks[i].replicas : 0;
    *pg = make_podgroup(a, job);
    *pods = corral_arena_alloc(a, (total + 1) * sizeof(corral_obj_t *));
    *npods = 0;
    for (size_t i = 0; i < j->ntasks; i++) {
        const corral_job_task_t *t = &j->tasks[i];
        corral_strmap_t labels, ann;
        corral_vcjob_pod_meta(a, job, t, 0, &labels, &ann);
        for (int32_t r = 0; r < t->replicas; r++) {
            corral_obj_t *o = new_obj(a, CORRAL_KIND_POD, job, corral_vcjob_pod_name(a, job, t, r));
            o->meta.labels = labels;
            o->meta.annotations = ann;
            corral_pod_t *p = corral_arena_alloc(a, sizeof(*p));
            p->spec = t->tmpl.spec;
            if (!p->spec.priority_class_name)
                p->spec.priority_class_name = j->priority_class_name;
            p->spec.scheduler_name = pod_scheduler(j, p->spec.scheduler_name);
            o->u.pod = p;
            (*pods)[(*npods)++] = o;
        }
    }
    return 0;
}

/* --- value trees (the controller) ------------------------------------------------------- */

static corral_val_t *strmap_val(corral_arena_t *a, const corral_strmap_t *m)
{
    corral_val_t *v = corral_val_new(a, CORRAL_VAL_MAP);
    for (size_t i = 0; i < m->n; i++)
        corral_val_set(a, v, m->items[i].key, corral_val_new_str(a, m->items[i].value));
    return v;
}

void corral_owner_ref_append(corral_arena_t *a, corral_val_t *meta, const corral_obj_t *owner)
{
    corral_val_t *refs = corral_val_get(meta, "ownerReferences");
    if (!refs || refs->kind != CORRAL_VAL_SEQ) {
        refs = corral_val_new(a, CORRAL_VAL_SEQ);
        corral_val_set(a, meta, "ownerReferences", refs);
    }
    corral_val_t *r = corral_val_new(a, CORRAL_VAL_MAP);
    corral_val_set(a, r, "apiVersion", corral_val_new_str(a, owner->info->api_version));
    corral_val_set(a, r, "kind", corral_val_new_str(a, owner->info->name));
    corral_val_set(a, r, "name", corral_val_new_str(a, owner->meta.name));
    corral_val_set(a, r, "uid", corral_val_new_str(a, owner->meta.uid ? owner->meta.uid : ""));
    corral_val_set(a, r, "controller", corral_val_new_bool(a, true));
    corral_val_set(a, r, "blockOwnerDeletion", corral_val_new_bool(a, true));
    corral_val_push(a, refs, r);
}

static corral_val_t *new_meta(corral_arena_t *a, corral_val_t *obj, const corral_obj_t *job,
                              const char *name)
{
    corral_val_t *meta = corral_val_ensure_map(a, obj, "metadata");
    corral_val_set(a, meta, "name", corral_val_new_str(a, name));
    corral_val_set(a, meta, "namespace", corral_val_new_str(a, job->meta.namespace));
    return meta;
}

static corral_val_t *new_object(corral_arena_t *a, corral_kind_t kind)
{
    const corral_kind_info_t *k = corral_kind_get(kind);
    corral_val_t *obj = corral_val_new(a, CORRAL_VAL_MAP);
    corral_val_set(a, obj, "apiVersion", corral_val_new_str(a, k->api_version));
    corral_val_set(a, obj, "kind", corral_val_new_str(a, k->name));
    return obj;
}

corral_val_t *corral_vcjob_pod_val(corral_arena_t *a, const corral_obj_t *job, size_t task,
                                   int32_t index, int64_t version)
{
    const corral_vcjob_t *j = job->u.job;
    const corral_job_task_t *t = &j->tasks[task];
    corral_val_t *obj = new_object(a, CORRAL_KIND_POD);
    corral_val_t *meta = new_meta(a, obj, job, corral_vcjob_pod_name(a, job, t, index));
    corral_strmap_t labels, ann;
    corral_vcjob_pod_meta(a, job, t, version, &labels, &ann);
    corral_val_set(a, meta, "labels", strmap_val(a, &labels));
    corral_val_set(a, meta, "annotations", strmap_val(a, &ann));
    corral_owner_ref_append(a, meta, job);
    const corral_val_t *tspec = corral_val_get(t->tmpl.raw, "spec");
    corral_val_t *spec = tspec ? corral_val_copy(a, tspec) : corral_val_new(a, CORRAL_VAL_MAP);
    corral_val_set(a, obj, "spec", spec);
    corral_val_set(
        a, spec, "schedulerName",
        corral_val_new_str(a, pod_scheduler(j, corral_val_get_str(spec, "schedulerName"))));
    if (!corral_val_get_str(spec, "priorityClassName") && j->priority_class_name)
        corral_val_set(a, spec, "priorityClassName", corral_val_new_str(a, j->priority_class_name));
    return obj;
}

/* --- the PodGroup ---------------------------------------------------------------------- */

typedef struct res_sum {
    const char *name;
    int64_t milli;
} res_sum_t;

static void add_requests(res_sum_t *sum, size_t *n, size_t max, const corral_reslist_t *l)
{
    for (size_t i = 0; i < l->n; i++) {
        int64_t m = 0;
        if (corral_qty_milli(&l->items[i].qty, &m) != 0)
            continue;
        size_t k = 0;
        while (k < *n && strcmp(sum[k].name, l->items[i].name) != 0)
            k++;
        if (k == *n) {
            if (*n == max)
                continue; /* more distinct resources than a pod template can name */
            sum[(*n)++] = (res_sum_t){l->items[i].name, 0};
        }
        sum[k].milli += m;
    }
}

/* The requests of the first minAvailable pods, tasks in order. */
static corral_val_t *min_resources(corral_arena_t *a, const corral_vcjob_t *j)
{
    enum { MAXRES = 64 };
    res_sum_t sum[MAXRES];
    size_t n = 0;
    int32_t count = 0;
    for (size_t i = 0; i < j->ntasks && count < j->min_available; i++) {
        const corral_job_task_t *t = &j->tasks[i];
        corral_reslist_t req;
        corral_pod_requests(a, &t->tmpl.spec, &req);
        for (int32_t r = 0; r < t->replicas && count < j->min_available; r++, count++)
            add_requests(sum, &n, MAXRES, &req);
    }
    corral_val_t *m = corral_val_new(a, CORRAL_VAL_MAP);
    for (size_t i = 0; i < n; i++) {
        char q[64];
        bool bytes = !strcmp(sum[i].name, "memory") || !strcmp(sum[i].name, "ephemeral-storage");
        if (bytes)
            corral_qty_format_bytes((sum[i].milli + 999) / 1000, q, sizeof(q));
        else
            corral_qty_format_milli(sum[i].milli, q, sizeof(q));
        corral_val_set(a, m, sum[i].name, corral_val_new_str(a, q));
    }
    return m;
}

corral_val_t *corral_vcjob_podgroup_val(corral_arena_t *a, const corral_obj_t *job)
{
    const corral_vcjob_t *j = job->u.job;
    corral_val_t *obj = new_object(a, CORRAL_KIND_PODGROUP);
    corral_val_t *meta = new_meta(a, obj, job, job->meta.name);
    if (job->meta.annotations.n)
        corral_val_set(a, meta, "annotations", strmap_val(a, &job->meta.annotations));
    corral_owner_ref_append(a, meta, job);
    corral_val_t *spec = corral_val_ensure_map(a, obj, "spec");
    corral_val_set(a, spec, "minMember", corral_val_new_int(a, j->min_available));
    corral_val_set(a, spec, "queue", corral_val_new_str(a, job_queue(job)));
    if (j->priority_class_name)
        corral_val_set(a, spec, "priorityClassName", corral_val_new_str(a, j->priority_class_name));
    corral_val_set(a, spec, "minResources", min_resources(a, j));
    const corral_val_t *nt = corral_val_dig(job->raw, "spec.networkTopology");
    if (nt)
        corral_val_set(a, spec, "networkTopology", corral_val_copy(a, nt));
    return obj;
}
