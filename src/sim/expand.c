/*
 * Volcano Job expansion: the PodGroup and the pods Volcano's job controller
 * would create for a batch.volcano.sh Job. The pods share their task
 * template's typed spec (nothing is copied but metadata), carry the group
 * annotation, and inherit the job's priority class and scheduler when their
 * template does not set one.
 */
#include <stdio.h>
#include <string.h>

#include "corral/sim.h"

#define ANN_GROUP "scheduling.k8s.io/group-name"

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
    pg->queue = j->queue ? j->queue : "default";
    pg->priority_class_name = j->priority_class_name;
    pg->topology = j->topology;
    o->u.pg = pg;
    return o;
}

/* Template annotations plus the group annotation. */
static void pod_meta(corral_arena_t *a, corral_obj_t *o, const corral_job_task_t *t,
                     const corral_obj_t *job)
{
    const corral_meta_t *tm = &t->tmpl.meta;
    o->meta.labels = tm->labels;
    size_t n = tm->annotations.n;
    corral_kv_t *ann = corral_arena_alloc(a, (n + 1) * sizeof(*ann));
    if (n)
        memcpy(ann, tm->annotations.items, n * sizeof(*ann));
    ann[n].key = ANN_GROUP;
    ann[n].value = job->meta.name;
    o->meta.annotations.items = ann;
    o->meta.annotations.n = n + 1;
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
        for (int32_t r = 0; r < t->replicas; r++) {
            char name[512];
            snprintf(name, sizeof(name), "%s-%s-%d", job->meta.name, t->name ? t->name : "task",
                     (int)r);
            corral_obj_t *o = new_obj(a, CORRAL_KIND_POD, job, name);
            pod_meta(a, o, t, job);
            corral_pod_t *p = corral_arena_alloc(a, sizeof(*p));
            p->spec = t->tmpl.spec;
            if (!p->spec.priority_class_name)
                p->spec.priority_class_name = j->priority_class_name;
            if (!p->spec.scheduler_name || !strcmp(p->spec.scheduler_name, "default-scheduler"))
                p->spec.scheduler_name = j->scheduler_name ? j->scheduler_name : "volcano";
            o->u.pod = p;
            (*pods)[(*npods)++] = o;
        }
    }
    return 0;
}
