/*
 * Node lifecycle, as Kubernetes' node lifecycle controller does it with
 * Leases: a node is healthy while its Lease in kube-node-lease keeps being
 * renewed. The controller notes, on its monotonic clock, when it last saw
 * renewTime change (or when it first saw the node), so clock skew between
 * machines does not matter and a restarted controller gives every node a
 * full grace period. A node silent for longer than the grace period gets
 * Ready=Unknown (and its other conditions Unknown) with kube's reason and
 * message, and the taints node.kubernetes.io/unreachable NoSchedule and
 * NoExecute; once the lease renews again the taints go (the agent sets
 * Ready=True itself).
 *
 * Pods on a node tainted unreachable:NoExecute are evicted once their
 * toleration runs out: the smallest tolerationSeconds of the tolerations
 * that match, forever when the matching ones set none, and
 * --default-toleration-seconds when none matches (what kube's
 * DefaultTolerationSeconds admission plugin would have added). The node's
 * agent is presumed dead, so nothing would ever confirm a graceful
 * deletion: the pod is deleted with gracePeriodSeconds=0 and goes at once,
 * and its Job controller recreates it or applies its PodEvicted policy. A
 * pod already being deleted there is forced once its grace has passed.
 */
#include <stdio.h>
#include <string.h>

#include "controller/controller_int.h"
#include "corral/timefmt.h"

#define UNREACHABLE "node.kubernetes.io/unreachable"
#define LEASE_NS    "kube-node-lease"

static bool eq(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

int64_t corral__toleration_seconds(const corral_pod_spec_t *spec, int64_t default_s)
{
    bool matched = false;
    int64_t min = -1;
    for (size_t i = 0; i < spec->tolerations.n; i++) {
        const corral_toleration_t *t = &spec->tolerations.items[i];
        if (t->effect && *t->effect && !eq(t->effect, "NoExecute"))
            continue;
        bool exists = eq(t->op, "Exists");
        bool key_ok = exists ? (!t->key || !*t->key || eq(t->key, UNREACHABLE))
                             : eq(t->key, UNREACHABLE) && (!t->value || !*t->value);
        if (!key_ok)
            continue;
        matched = true;
        if (t->seconds.set) {
            int64_t s = t->seconds.v < 0 ? 0 : t->seconds.v;
            if (min < 0 || s < min)
                min = s;
        }
    }
    if (!matched)
        return default_s;
    return min; /* -1: the matching tolerations set no seconds: forever */
}

static bool has_taint(const corral_node_t *n, const char *effect)
{
    for (size_t i = 0; i < n->ntaints; i++) {
        if (eq(n->taints[i].key, UNREACHABLE) && eq(n->taints[i].effect, effect))
            return true;
    }
    return false;
}

void corral__nodes_on_event(corral_controller_t *c, corral__entry_t *e, const corral_obj_t *old)
{
    const corral_obj_t *o = e->ev->obj;
    if (e->kind == CORRAL_KIND_LEASE) {
        int64_t renew = o->u.lease->renew_us;
        if (!old || renew != e->lease_renew_us)
            e->probe_ns = corral__mono_ns();
        e->lease_renew_us = renew;
        return;
    }
    if (e->kind != CORRAL_KIND_NODE)
        return;
    bool tainted = has_taint(o->u.node, "NoExecute");
    if (tainted && !e->probe_ns)
        e->probe_ns = corral__mono_ns();
    else if (!tainted)
        e->probe_ns = 0;
    (void)c;
}

/* --- writes -------------------------------------------------------------------------------- */

static long send_val(corral_controller_t *c, corral_arena_t *a, const corral_obj_t *o,
                     const char *sub, const char *ctype, const corral_val_t *doc)
{
    corral_buf_t body, resp;
    corral_buf_init(&body);
    corral_buf_init(&resp);
    corral_val_to_json(doc, &body, false);
    long code = corral__ctl_send(c, "PATCH", corral__ctl_path(a, o->info, NULL, o->meta.name, sub),
                                 ctype, &body, &resp);
    corral_buf_fini(&body);
    corral_buf_fini(&resp);
    return code;
}

static void mark_unknown(corral_controller_t *c, corral_arena_t *a, const corral_obj_t *o,
                         const char *now)
{
    const corral_conditions_t *cs = &o->u.node->conditions;
    corral_val_t *seq = corral_val_new(a, CORRAL_VAL_SEQ);
    bool ready = false;
    for (size_t i = 0; i < cs->n; i++) {
        ready |= eq(cs->items[i].type, "Ready");
        if (eq(cs->items[i].status, "Unknown"))
            continue;
        corral_val_t *m = corral_val_new(a, CORRAL_VAL_MAP);
        corral_val_set(a, m, "type", corral_val_new_str(a, cs->items[i].type));
        corral_val_set(a, m, "status", corral_val_new_str(a, "Unknown"));
        corral_val_set(a, m, "reason", corral_val_new_str(a, "NodeStatusUnknown"));
        corral_val_set(a, m, "message",
                       corral_val_new_str(a, "Kubelet stopped posting node status."));
        corral_val_set(a, m, "lastTransitionTime", corral_val_new_str(a, now));
        corral_val_push(a, seq, m);
    }
    if (!ready) {
        corral_val_t *m = corral_val_new(a, CORRAL_VAL_MAP);
        corral_val_set(a, m, "type", corral_val_new_str(a, "Ready"));
        corral_val_set(a, m, "status", corral_val_new_str(a, "Unknown"));
        corral_val_set(a, m, "reason", corral_val_new_str(a, "NodeStatusNeverUpdated"));
        corral_val_set(a, m, "message", corral_val_new_str(a, "Kubelet never posted node status."));
        corral_val_set(a, m, "lastTransitionTime", corral_val_new_str(a, now));
        corral_val_push(a, seq, m);
    }
    if (!seq->n)
        return;
    corral_val_t *doc = corral_val_new(a, CORRAL_VAL_MAP);
    corral_val_set(a, corral_val_ensure_map(a, doc, "status"), "conditions", seq);
    corral__ctl_log(c, "node %s: lease not renewed within the grace period: Ready=Unknown",
                    o->meta.name);
    send_val(c, a, o, "status", "application/strategic-merge-patch+json", doc);
}

/* Write the node's taints: the others as they are, ours added or removed. */
static void set_taints(corral_controller_t *c, corral_arena_t *a, const corral_obj_t *o, bool add,
                       const char *now)
{
    const corral_val_t *old = corral_val_dig(o->raw, "spec.taints");
    corral_val_t *seq = corral_val_new(a, CORRAL_VAL_SEQ);
    for (size_t i = 0; old && old->kind == CORRAL_VAL_SEQ && i < old->n; i++) {
        if (!eq(corral_val_get_str(old->items[i], "key"), UNREACHABLE))
            corral_val_push(a, seq, corral_val_copy(a, old->items[i]));
    }
    for (int k = 0; add && k < 2; k++) {
        const char *effect = k ? "NoExecute" : "NoSchedule";
        corral_val_t *t = corral_val_new(a, CORRAL_VAL_MAP);
        corral_val_set(a, t, "key", corral_val_new_str(a, UNREACHABLE));
        corral_val_set(a, t, "effect", corral_val_new_str(a, effect));
        corral_val_set(a, t, "timeAdded", corral_val_new_str(a, now));
        corral_val_push(a, seq, t);
    }
    corral_val_t *doc = corral_val_new(a, CORRAL_VAL_MAP);
    corral_val_set(a, corral_val_ensure_map(a, doc, "metadata"), "resourceVersion",
                   corral_val_new_str(a, o->meta.resource_version ? o->meta.resource_version : ""));
    corral_val_set(a, corral_val_ensure_map(a, doc, "spec"), "taints", seq);
    corral__ctl_log(c, "node %s: %s taints %s:NoSchedule,NoExecute", o->meta.name,
                    add ? "adding" : "removing", UNREACHABLE);
    send_val(c, a, o, NULL, "application/merge-patch+json", doc);
}

static bool ready_unknown(const corral_node_t *n)
{
    for (size_t i = 0; i < n->conditions.n; i++) {
        if (eq(n->conditions.items[i].type, "Ready"))
            return eq(n->conditions.items[i].status, "Unknown");
    }
    return false;
}

/* --- the pass ------------------------------------------------------------------------------ */

static void check_node(corral_controller_t *c, corral_arena_t *a, corral__entry_t *e, int64_t now,
                       const char *now_s)
{
    const corral_obj_t *o = e->ev->obj;
    const corral_node_t *n = o->u.node;
    corral__entry_t *lease =
        corral__cache_get(&c->cache, CORRAL_KIND_LEASE, LEASE_NS, o->meta.name);
    int64_t last = e->seen_ns;
    if (lease && lease->probe_ns > last)
        last = lease->probe_ns;
    bool ours = has_taint(n, "NoSchedule") && has_taint(n, "NoExecute");
    if (now - last > c->o.node_monitor_grace_ns) {
        if (!ready_unknown(n))
            mark_unknown(c, a, o, now_s);
        if (!ours)
            set_taints(c, a, o, true, now_s);
    } else if (has_taint(n, "NoSchedule") || has_taint(n, "NoExecute")) {
        set_taints(c, a, o, false, now_s);
    }
}

/* Evict what must go from one pod on a tainted node; returns its deadline
 * (monotonic) when it is still tolerated, else 0. */
static int64_t check_pod(corral_controller_t *c, corral__entry_t *pe, int64_t taint_ns, int64_t now)
{
    const corral_obj_t *p = pe->ev->obj;
    const char *ph = p->u.pod->status.phase;
    if (pe->deleting || eq(ph, "Succeeded") || eq(ph, "Failed"))
        return 0;
    if (p->meta.deletion_us) {
        if (corral__wall_us() >= p->meta.deletion_us) {
            corral__ctl_log(c, "pod %s/%s: terminating on an unreachable node: forcing it",
                            p->meta.namespace, p->meta.name);
            pe->deleting = corral__ctl_delete(c, p, 0);
            return 0;
        }
        return now + (p->meta.deletion_us - corral__wall_us()) * 1000;
    }
    int64_t secs = corral__toleration_seconds(&p->u.pod->spec, c->o.default_toleration_s);
    if (secs < 0)
        return 0;
    int64_t deadline = taint_ns + secs * CORRAL_NS_PER_SEC;
    if (now < deadline)
        return deadline;
    corral__ctl_log(c, "pod %s/%s: node %s unreachable for %llds: evicting it", p->meta.namespace,
                    p->meta.name, p->u.pod->spec.node_name, (long long)secs);
    pe->deleting = corral__ctl_delete(c, p, 0);
    return 0;
}

static void evict(corral_controller_t *c, int64_t now)
{
    corral_hmap_t tainted;
    corral_hmap_init(&tainted);
    for (size_t i = 0; i < c->cache.nslots; i++) {
        corral__entry_t *e = c->cache.slots[i];
        if (e && e->kind == CORRAL_KIND_NODE && e->probe_ns)
            corral_hmap_put(&tainted, e->ev->obj->meta.name, e->slot);
    }
    int64_t next = 0;
    for (size_t i = 0; tainted.n && i < c->cache.nslots; i++) {
        corral__entry_t *e = c->cache.slots[i];
        uint32_t ns;
        if (!e || e->kind != CORRAL_KIND_POD || !e->ev->obj->u.pod->spec.node_name ||
            !corral_hmap_get(&tainted, e->ev->obj->u.pod->spec.node_name, &ns))
            continue;
        int64_t d = check_pod(c, e, c->cache.slots[ns]->probe_ns, now);
        if (d && (!next || d < next))
            next = d;
    }
    corral_hmap_fini(&tainted);
    if (next && (!c->evict_timer_at || next < c->evict_timer_at)) {
        c->evict_timer_at = next;
        corral__timers_push(&c->timers, next, CORRAL__T_NODES, "evict");
    }
}

void corral__nodes_pass(corral_controller_t *c)
{
    if (!c->synced)
        return;
    corral_arena_t a;
    corral_arena_init(&a);
    int64_t now = corral__mono_ns();
    char now_s[40];
    corral_time_format(corral__wall_us(), false, now_s, sizeof(now_s));
    for (size_t i = 0; i < c->cache.nslots; i++) {
        corral__entry_t *e = c->cache.slots[i];
        if (e && e->kind == CORRAL_KIND_NODE)
            check_node(c, &a, e, now, now_s);
    }
    evict(c, now);
    corral_arena_fini(&a);
}
