/*
 * The pod subresources that are actions rather than views: binding (how the
 * scheduler places a pod: spec.nodeName, the Binding's annotations such as
 * corral.dev/gpu-ids, and the PodScheduled condition, all in one write),
 * and eviction (a delete with the Eviction's options; no PodDisruptionBudgets
 * yet). pods/log is in logproxy.c.
 */
#include <stdio.h>
#include <string.h>

#include "apiserver/apiserver_int.h"

static void invalid_binding(corral__req_t *r, const char *field, const char *msg)
{
    corral_diag_t d;
    corral_diag_init(&d);
    corral_diag_add(&d, CORRAL_SEV_ERROR, NULL, 0, 0, field, "%s", msg);
    const corral__res_t *saved = r->res;
    r->res = NULL; /* Binding is a core kind: no group in the details */
    corral__invalid(r, "Binding", r->name, &d);
    r->res = saved;
    corral_diag_fini(&d);
}

/* PodScheduled=True, replacing an earlier PodScheduled condition. */
static void set_scheduled(corral_arena_t *a, corral_val_t *pod)
{
    corral_val_t *st = corral_val_ensure_map(a, pod, "status");
    corral_val_t *conds = corral_val_get(st, "conditions");
    if (!conds || conds->kind != CORRAL_VAL_SEQ) {
        conds = corral_val_new(a, CORRAL_VAL_SEQ);
        corral_val_set(a, st, "conditions", conds);
    }
    char now[40];
    corral__now_rfc3339(now, sizeof(now));
    corral_val_t *c = corral_val_new(a, CORRAL_VAL_MAP);
    corral_val_set(a, c, "type", corral_val_new_str(a, "PodScheduled"));
    corral_val_set(a, c, "status", corral_val_new_str(a, "True"));
    corral_val_set(a, c, "lastProbeTime", corral_val_new(a, CORRAL_VAL_NULL));
    corral_val_set(a, c, "lastTransitionTime", corral_val_new_str(a, now));
    for (size_t i = 0; i < conds->n; i++) {
        if (corral_val_get_str(conds->items[i], "type") &&
            strcmp(corral_val_get_str(conds->items[i], "type"), "PodScheduled") == 0) {
            conds->items[i] = c;
            return;
        }
    }
    corral_val_push(a, conds, c);
}

/* Bind r->name (a pod in r->ns) as the Binding body says. */
static void bind_pod(corral__req_t *r, corral_val_t *binding)
{
    corral_val_t *target = corral_val_get(binding, "target");
    const char *tkind = corral_val_get_str(target, "kind");
    const char *node = corral_val_get_str(target, "name");
    if (tkind && *tkind && strcmp(tkind, "Node") != 0) {
        invalid_binding(r, "target.kind", "Invalid value: must be empty or 'Node'");
        return;
    }
    if (!node || !*node) {
        invalid_binding(r, "target.name", "Required value");
        return;
    }
    corral__cur_t cur;
    if (!corral__read_current(r, &cur))
        return;
    const char *uid = corral__meta_str(binding, "uid");
    const char *cur_uid = corral__meta_str(cur.tree, "uid");
    if (uid && *uid && cur_uid && strcmp(uid, cur_uid) != 0) {
        corral__status(r, 409, "Conflict", "pods", r->name,
                       "Precondition failed: UID in precondition: %s, UID in object meta: %s", uid,
                       cur_uid);
        return;
    }
    const char *bound = corral_val_get_str(corral_val_get(cur.tree, "spec"), "nodeName");
    if (bound && *bound) {
        corral__status(r, 409, "Conflict", "pods/binding", r->name,
                       "Operation cannot be fulfilled on pods/binding \"%s\": pod %s is already "
                       "assigned to node \"%s\"",
                       r->name, r->name, bound);
        return;
    }
    if (corral__meta_str(cur.tree, "deletionTimestamp")) {
        corral__status(r, 409, "Conflict", "pods/binding", r->name,
                       "Operation cannot be fulfilled on pods/binding \"%s\": pod %s is being "
                       "deleted, cannot be assigned to a host",
                       r->name, r->name);
        return;
    }
    corral_val_t *next = corral_val_copy(r->a, cur.tree);
    corral_val_t *spec = corral_val_ensure_map(r->a, next, "spec");
    corral_val_set(r->a, spec, "nodeName", corral_val_new_str(r->a, node));
    corral_val_t *ann = corral_val_get(corral_val_get(binding, "metadata"), "annotations");
    if (ann && ann->kind == CORRAL_VAL_MAP && ann->n) {
        corral_val_t *na = corral_val_ensure_map(r->a, corral__meta(r->a, next), "annotations");
        for (size_t i = 0; i < ann->n; i++)
            corral_val_set(r->a, na, ann->pairs[i].key->s, ann->pairs[i].val);
    }
    set_scheduled(r->a, next);
    corral__update_with(r, &cur, next, NULL, 201, CORRAL__UPD_BINDING);
}

static bool check_body(corral__req_t *r, corral_val_t *body, const char *kind,
                       const char *const *versions, size_t nversions)
{
    const char *k = corral_val_get_str(body, "kind");
    const char *av = corral_val_get_str(body, "apiVersion");
    bool av_ok = !av;
    for (size_t i = 0; av && i < nversions; i++)
        av_ok = av_ok || strcmp(av, versions[i]) == 0;
    if ((k && strcmp(k, kind) != 0) || !av_ok) {
        corral__status(r, 400, "BadRequest", NULL, NULL, "expected a %s (apiVersion %s), got %s %s",
                       kind, versions[0], av ? av : "(no apiVersion)", k ? k : "(no kind)");
        return false;
    }
    return true;
}

void corral__h_binding(corral__req_t *r)
{
    static const char *const v[] = {"v1"};
    corral_val_t *body = corral__body_tree(r);
    if (!body || !check_body(r, body, "Binding", v, 1))
        return;
    const char *name = corral__meta_str(body, "name");
    if (name && *name && strcmp(name, r->name) != 0) {
        corral__status(r, 400, "BadRequest", NULL, NULL,
                       "name in URL does not match name in Binding object");
        return;
    }
    bind_pod(r, body);
}

void corral__h_bindings(corral__req_t *r)
{
    static const char *const v[] = {"v1"};
    corral_val_t *body = corral__body_tree(r);
    if (!body || !check_body(r, body, "Binding", v, 1))
        return;
    const char *name = corral__meta_str(body, "name");
    if (!name || !*name) {
        invalid_binding(r, "metadata.name", "Required value: name or generateName is required");
        return;
    }
    r->name = name;
    bind_pod(r, body);
}

void corral__h_eviction(corral__req_t *r)
{
    static const char *const v[] = {"policy/v1", "policy/v1beta1"};
    corral_val_t *body = corral__body_tree(r);
    if (!body || !check_body(r, body, "Eviction", v, 2))
        return;
    const char *name = corral__meta_str(body, "name");
    if (name && *name && strcmp(name, r->name) != 0) {
        corral__status(r, 400, "BadRequest", NULL, NULL,
                       "name in URL does not match name in Eviction object");
        return;
    }
    corral__delopts_t *o = corral_arena_alloc(r->a, sizeof(*o));
    if (!corral__delopts_parse(r, corral_val_get(body, "deleteOptions"), o))
        return;
    corral__cur_t *cur = corral_arena_alloc(r->a, sizeof(*cur));
    if (!corral__read_current(r, cur) || !corral__admit_node_delete(r, cur->tree, true))
        return;
    corral__delete_one(r, cur, o, 201, true);
}
