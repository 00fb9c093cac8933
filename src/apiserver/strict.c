/*
 * Strict mode (`corral apiserver --strict`, docs/apiserver.md "Strict
 * mode"): the rules kube-apiserver enforces that Corral's default mode
 * leaves out, checked here so that the components are tested against
 * what a real cluster answers:
 *   - per-kind update rules: a pod's spec changes only where upstream's
 *     ValidatePodUpdate allows (container and init container images,
 *     activeDeadlineSeconds, added tolerations, removed scheduling gates),
 *     so spec.nodeName is set only through pods/binding; a Deployment's
 *     or DaemonSet's selector and a PriorityClass's value are immutable;
 *   - the Priority admission of a pod without priorityClassName takes the
 *     globalDefault PriorityClass.
 * The other switches (the version reported, the scale subresources of
 * Volcano Jobs and InferenceServices, pods removed by a terminal status,
 * resourceVersion on create) are one test each where they are served.
 */
#include <stdio.h>
#include <string.h>

#include "apiserver/apiserver_int.h"

static void refuse(corral__req_t *r, const char *field, const char *msg)
{
    corral_diag_t d;
    corral_diag_init(&d);
    corral_diag_add(&d, CORRAL_SEV_ERROR, NULL, 0, 0, field, "%s", msg);
    corral__invalid(r, r->res->info->name, r->name, &d);
    corral_diag_fini(&d);
}

/* Is every element of old in new (tolerations may only be added)? */
static bool superset(const corral_val_t *new_, const corral_val_t *old)
{
    for (size_t i = 0; old && old->kind == CORRAL_VAL_SEQ && i < old->n; i++) {
        bool found = false;
        for (size_t j = 0; !found && new_ && new_->kind == CORRAL_VAL_SEQ && j < new_->n; j++)
            found = corral_val_equal(old->items[i], new_->items[j]);
        if (!found)
            return false;
    }
    return true;
}

/* A container list of next with the images of cur (same names, same order). */
static void keep_images(corral_arena_t *a, corral_val_t *spec, const corral_val_t *cur,
                        const char *key)
{
    corral_val_t *n = corral_val_get(spec, key);
    const corral_val_t *c = corral_val_get(cur, key);
    if (!n || !c || n->kind != CORRAL_VAL_SEQ || c->kind != CORRAL_VAL_SEQ || n->n != c->n)
        return;
    for (size_t i = 0; i < n->n; i++) {
        const corral_val_t *img = corral_val_get(c->items[i], "image");
        if (n->items[i]->kind == CORRAL_VAL_MAP && img)
            corral_val_set(a, n->items[i], "image", corral_val_copy(a, img));
    }
}

static void keep(corral_arena_t *a, corral_val_t *spec, const corral_val_t *cur, const char *key)
{
    const corral_val_t *v = corral_val_get(cur, key);
    if (v)
        corral_val_set(a, spec, key, corral_val_copy(a, v));
    else
        corral_val_del(spec, key);
}

/* ValidatePodUpdate's rule on spec. */
static bool pod_spec_ok(corral__req_t *r, const corral_val_t *cur, const corral_val_t *next)
{
    const corral_val_t *cs = corral_val_get(cur, "spec");
    const corral_val_t *ns = corral_val_get(next, "spec");
    if (!cs || !ns || corral_val_equal(cs, ns))
        return true;
    corral_val_t *spec = corral_val_copy(r->a, ns);
    keep_images(r->a, spec, cs, "containers");
    keep_images(r->a, spec, cs, "initContainers");
    keep(r->a, spec, cs, "activeDeadlineSeconds");
    if (superset(corral_val_get(ns, "tolerations"), corral_val_get(cs, "tolerations")))
        keep(r->a, spec, cs, "tolerations");
    if (superset(corral_val_get(cs, "schedulingGates"), corral_val_get(ns, "schedulingGates")))
        keep(r->a, spec, cs, "schedulingGates");
    /* upstream: a negative grace period (old clients) may become 1, nothing else */
    const corral_val_t *g = corral_val_get(cs, "terminationGracePeriodSeconds");
    const corral_val_t *ng = corral_val_get(ns, "terminationGracePeriodSeconds");
    if (g && g->kind == CORRAL_VAL_INT && g->u.i < 0 && ng && ng->kind == CORRAL_VAL_INT &&
        ng->u.i == 1)
        keep(r->a, spec, cs, "terminationGracePeriodSeconds");
    if (corral_val_equal(spec, cs))
        return true;
    refuse(r, "spec",
           "Forbidden: pod updates may not change fields other than `spec.containers[*].image`,"
           "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` "
           "(only additions to existing tolerations),`spec.terminationGracePeriodSeconds` "
           "(allow it to be set to 1 if it was previously negative)");
    return false;
}

static bool immutable(corral__req_t *r, const corral_val_t *cur, const corral_val_t *next,
                      const char *path, bool forbidden)
{
    const corral_val_t *c = corral_val_dig(cur, path);
    const corral_val_t *n = corral_val_dig(next, path);
    if ((!c && !n) || (c && n && corral_val_equal(c, n)))
        return true;
    if (forbidden) {
        refuse(r, path, "Forbidden: may not be changed in an update.");
        return false;
    }
    corral_buf_t b;
    corral_buf_init(&b);
    if (n)
        corral_val_to_json(n, &b, false);
    else
        corral_buf_puts(&b, "null");
    refuse(r, path,
           corral_arena_printf(r->a, "Invalid value: %s: field is immutable", corral_buf_str(&b)));
    corral_buf_fini(&b);
    return false;
}

bool corral__strict_update_ok(corral__req_t *r, const corral_val_t *cur, const corral_val_t *next)
{
    if (!corral__strict(r) || (r->sub && strcmp(r->sub, "status") == 0))
        return true;
    switch (r->res->info->kind) {
    case CORRAL_KIND_POD:
        return pod_spec_ok(r, cur, next);
    case CORRAL_KIND_DEPLOYMENT:
    case CORRAL_KIND_DAEMONSET:
        return immutable(r, cur, next, "spec.selector", false);
    case CORRAL_KIND_PRIORITYCLASS:
        return immutable(r, cur, next, "value", true);
    case CORRAL_KIND_CRD:
        return immutable(r, cur, next, "spec.scope", false);
    default:
        return true;
    }
}

typedef struct gd_ctx {
    corral_arena_t *a;
    const char *name;
} gd_ctx_t;

static int find_global_default(void *ctx, const corral_store_row_t *row)
{
    gd_ctx_t *g = ctx;
    corral_val_t *pc = corral__json_tree(g->a, row->json, row->json_len);
    const corral_val_t *gd = corral_val_get(pc, "globalDefault");
    if (gd && gd->kind == CORRAL_VAL_BOOL && gd->u.b) {
        g->name = corral__meta_str(pc, "name");
        return 1;
    }
    return 0;
}

const char *corral__strict_default_priority(corral__req_t *r)
{
    if (!corral__strict(r))
        return NULL;
    /* PriorityClasses are few (cluster-scoped, a handful): a scan is fine. */
    gd_ctx_t g = {r->a, NULL};
    int64_t rev = 0;
    corral_store_list(corral__rd(r), "priorityclasses.scheduling.k8s.io", NULL, NULL, NULL,
                      find_global_default, &g, &rev);
    return g.name;
}
