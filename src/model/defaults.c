/*
 * Upstream defaults written into an object's value tree, as kube-apiserver's
 * defaulting functions (and Volcano's mutating webhook) write them before an
 * object is validated and stored: a pod read back from the API server shows
 * restartPolicy: Always, terminationGracePeriodSeconds: 30 and so on, and
 * clients such as kubectl or the scheduler rely on seeing them. The typed
 * decoders apply the same defaults to their views; this writes them into the
 * stored object. Only absent fields are filled; nothing is validated here
 * (the decoder does that next) and values of the wrong type are left alone.
 */
#include <string.h>

#include "corral/base64.h"
#include "corral/model.h"

static corral_val_t *map_at(const corral_val_t *m, const char *key)
{
    corral_val_t *v = corral_val_get(m, key);
    return v && v->kind == CORRAL_VAL_MAP ? v : NULL;
}

static corral_val_t *seq_at(const corral_val_t *m, const char *key)
{
    corral_val_t *v = corral_val_get(m, key);
    return v && v->kind == CORRAL_VAL_SEQ ? v : NULL;
}

static bool absent(const corral_val_t *m, const char *key)
{
    corral_val_t *v = corral_val_get(m, key);
    return !v || v->kind == CORRAL_VAL_NULL;
}

static void set_str(corral_arena_t *a, corral_val_t *m, const char *key, const char *val)
{
    if (absent(m, key))
        corral_val_set(a, m, key, corral_val_new_str(a, val));
}

static void set_int(corral_arena_t *a, corral_val_t *m, const char *key, int64_t val)
{
    if (absent(m, key))
        corral_val_set(a, m, key, corral_val_new_int(a, val));
}

static void set_bool(corral_arena_t *a, corral_val_t *m, const char *key, bool val)
{
    if (absent(m, key))
        corral_val_set(a, m, key, corral_val_new_bool(a, val));
}

/* imagePullPolicy: Always for ":latest" or no tag, else IfNotPresent (a
 * digest counts as a tag). */
static const char *pull_policy(const corral_val_t *c)
{
    const char *image = corral_val_get_str(c, "image");
    if (!image)
        return NULL;
    if (strchr(image, '@'))
        return "IfNotPresent";
    const char *slash = strrchr(image, '/');
    const char *colon = strrchr(slash ? slash : image, ':');
    if (!colon || strcmp(colon, ":latest") == 0)
        return "Always";
    return "IfNotPresent";
}

static void default_container(corral_arena_t *a, corral_val_t *c)
{
    set_str(a, c, "terminationMessagePath", "/dev/termination-log");
    set_str(a, c, "terminationMessagePolicy", "File");
    const char *pp = pull_policy(c);
    if (pp)
        set_str(a, c, "imagePullPolicy", pp);
    corral_val_t *ports = seq_at(c, "ports");
    for (size_t i = 0; ports && i < ports->n; i++) {
        if (ports->items[i] && ports->items[i]->kind == CORRAL_VAL_MAP)
            set_str(a, ports->items[i], "protocol", "TCP");
    }
    /* A resource with a limit and no request requests its limit. */
    corral_val_t *res = map_at(c, "resources");
    corral_val_t *limits = res ? map_at(res, "limits") : NULL;
    if (!limits || limits->n == 0)
        return;
    corral_val_t *req = map_at(res, "requests");
    if (!req) {
        if (!absent(res, "requests"))
            return;
        req = corral_val_ensure_map(a, res, "requests");
    }
    for (size_t i = 0; i < limits->n; i++) {
        const char *name = limits->pairs[i].key->s;
        if (!corral_val_get(req, name))
            corral_val_set(a, req, name, corral_val_copy(a, limits->pairs[i].val));
    }
}

static void default_containers(corral_arena_t *a, corral_val_t *spec, const char *key)
{
    corral_val_t *cs = seq_at(spec, key);
    for (size_t i = 0; cs && i < cs->n; i++) {
        if (cs->items[i] && cs->items[i]->kind == CORRAL_VAL_MAP)
            default_container(a, cs->items[i]);
    }
}

static void default_pod(corral_arena_t *a, corral_val_t *raw)
{
    corral_val_t *spec = map_at(raw, "spec");
    if (!spec)
        return;
    set_str(a, spec, "restartPolicy", "Always");
    set_int(a, spec, "terminationGracePeriodSeconds", 30);
    set_str(a, spec, "dnsPolicy", "ClusterFirst");
    set_str(a, spec, "schedulerName", "default-scheduler");
    set_bool(a, spec, "enableServiceLinks", true);
    if (absent(spec, "securityContext"))
        corral_val_set(a, spec, "securityContext", corral_val_new(a, CORRAL_VAL_MAP));
    default_containers(a, spec, "containers");
    default_containers(a, spec, "initContainers");
}

/* A workload's pod template: the pod spec's defaults (apps/v1 defaulting
 * runs the core ones on templates). */
static void default_template(corral_arena_t *a, corral_val_t *spec)
{
    corral_val_t *tmpl = map_at(spec, "template");
    if (tmpl)
        default_pod(a, tmpl);
}

static void set_intstr(corral_arena_t *a, corral_val_t *m, const char *key, const char *pct,
                       int64_t n)
{
    if (!absent(m, key))
        return;
    corral_val_set(a, m, key, pct ? corral_val_new_str(a, pct) : corral_val_new_int(a, n));
}

/* apps/v1 SetDefaults_Deployment and SetDefaults_DaemonSet. */
static void default_workload(corral_arena_t *a, corral_val_t *raw, bool deployment)
{
    corral_val_t *spec = map_at(raw, "spec");
    if (!spec)
        return;
    const char *skey = deployment ? "strategy" : "updateStrategy";
    corral_val_t *st = map_at(spec, skey);
    if (!st && absent(spec, skey)) {
        st = corral_val_new(a, CORRAL_VAL_MAP);
        corral_val_set(a, spec, skey, st);
    }
    if (st) {
        set_str(a, st, "type", "RollingUpdate");
        const char *type = corral_val_get_str(st, "type");
        if (type && strcmp(type, "RollingUpdate") == 0) {
            corral_val_t *ru = map_at(st, "rollingUpdate");
            if (!ru && absent(st, "rollingUpdate")) {
                ru = corral_val_new(a, CORRAL_VAL_MAP);
                corral_val_set(a, st, "rollingUpdate", ru);
            }
            if (ru && deployment) {
                set_intstr(a, ru, "maxUnavailable", "25%", 0);
                set_intstr(a, ru, "maxSurge", "25%", 0);
            } else if (ru) {
                set_intstr(a, ru, "maxUnavailable", NULL, 1);
                set_intstr(a, ru, "maxSurge", NULL, 0);
            }
        }
    }
    if (deployment) {
        set_int(a, spec, "replicas", 1);
        set_int(a, spec, "progressDeadlineSeconds", 600);
    }
    set_int(a, spec, "revisionHistoryLimit", 10);
    default_template(a, spec);
}

/* SetDefaults_CustomResourceDefinition(Spec): singular, listKind,
 * conversion strategy None. */
static void default_crd(corral_arena_t *a, corral_val_t *raw)
{
    corral_val_t *spec = map_at(raw, "spec");
    if (!spec)
        return;
    corral_val_t *names = map_at(spec, "names");
    const char *kind = names ? corral_val_get_str(names, "kind") : NULL;
    if (kind && *kind) {
        if (absent(names, "singular") || !*corral_val_get_str(names, "singular")) {
            char *low = corral_arena_strdup(a, kind);
            for (char *p = low; *p; p++)
                *p = (char)((*p >= 'A' && *p <= 'Z') ? *p - 'A' + 'a' : *p);
            corral_val_set(a, names, "singular", corral_val_new_str(a, low));
        }
        if (absent(names, "listKind") || !*corral_val_get_str(names, "listKind"))
            corral_val_set(a, names, "listKind",
                           corral_val_new_str(a, corral_arena_printf(a, "%sList", kind)));
    }
    corral_val_t *conv = map_at(spec, "conversion");
    if (!conv && absent(spec, "conversion")) {
        conv = corral_val_new(a, CORRAL_VAL_MAP);
        corral_val_set(a, spec, "conversion", conv);
    }
    if (conv)
        set_str(a, conv, "strategy", "None");
}

/* The API server merges stringData into data (base64) and drops it. */
static void default_secret(corral_arena_t *a, corral_val_t *raw)
{
    set_str(a, raw, "type", "Opaque");
    corral_val_t *sd = map_at(raw, "stringData");
    if (!sd)
        return;
    for (size_t i = 0; i < sd->n; i++) {
        if (sd->pairs[i].val->kind != CORRAL_VAL_STR)
            return; /* left for the validator to report */
    }
    corral_val_t *data = map_at(raw, "data");
    if (!data) {
        if (!absent(raw, "data"))
            return;
        data = corral_val_ensure_map(a, raw, "data");
    }
    corral_buf_t b;
    corral_buf_init(&b);
    for (size_t i = 0; i < sd->n; i++) {
        corral_buf_reset(&b);
        corral_base64_encode(sd->pairs[i].val->s, sd->pairs[i].val->len, CORRAL_B64_STD, &b);
        corral_val_set(a, data, sd->pairs[i].key->s, corral_val_new_str(a, corral_buf_str(&b)));
    }
    corral_buf_fini(&b);
    corral_val_del(raw, "stringData");
}

static int64_t int_at(const corral_val_t *m, const char *key, int64_t dflt)
{
    corral_val_t *v = corral_val_get(m, key);
    return v && v->kind == CORRAL_VAL_INT ? v->u.i : dflt;
}

/* Volcano's webhooks treat 0 like unset. */
static bool zero_or_absent(const corral_val_t *m, const char *key)
{
    return absent(m, key) || int_at(m, key, -1) == 0;
}

/* Volcano's job webhook: queue, schedulerName, maxRetry, task names and
 * minAvailable, and the job's minAvailable as the sum over its tasks. */
static void default_vcjob(corral_arena_t *a, corral_val_t *raw)
{
    corral_val_t *spec = map_at(raw, "spec");
    if (!spec)
        return;
    set_str(a, spec, "queue", "default");
    set_str(a, spec, "schedulerName", "volcano");
    if (zero_or_absent(spec, "maxRetry"))
        corral_val_set(a, spec, "maxRetry", corral_val_new_int(a, 3));
    corral_val_t *tasks = seq_at(spec, "tasks");
    int64_t sum = 0;
    for (size_t i = 0; tasks && i < tasks->n; i++) {
        corral_val_t *t = tasks->items[i];
        if (!t || t->kind != CORRAL_VAL_MAP)
            continue;
        if (absent(t, "name"))
            corral_val_set(a, t, "name",
                           corral_val_new_str(a, corral_arena_printf(a, "default%zu", i)));
        int64_t replicas = int_at(t, "replicas", 0);
        if (absent(t, "minAvailable") && corral_val_get(t, "replicas"))
            set_int(a, t, "minAvailable", replicas);
        sum += int_at(t, "minAvailable", replicas);
    }
    if (tasks && sum > 0 && zero_or_absent(spec, "minAvailable"))
        corral_val_set(a, spec, "minAvailable", corral_val_new_int(a, sum));
}

/* core v1 Service: type ClusterIP, sessionAffinity None, each port's
 * protocol TCP and targetPort its port, internalTrafficPolicy Cluster (not
 * for ExternalName), as SetDefaults_Service. No cluster IP is allocated. */
static void default_service(corral_arena_t *a, corral_val_t *raw)
{
    corral_val_t *spec = map_at(raw, "spec");
    if (!spec)
        return;
    set_str(a, spec, "type", "ClusterIP");
    set_str(a, spec, "sessionAffinity", "None");
    const char *type = corral_val_get_str(spec, "type");
    if (type && strcmp(type, "ExternalName") != 0)
        set_str(a, spec, "internalTrafficPolicy", "Cluster");
    corral_val_t *ports = seq_at(spec, "ports");
    for (size_t i = 0; ports && i < ports->n; i++) {
        corral_val_t *p = ports->items[i];
        if (!p || p->kind != CORRAL_VAL_MAP)
            continue;
        set_str(a, p, "protocol", "TCP");
        corral_val_t *port = corral_val_get(p, "port");
        corral_val_t *tp = corral_val_get(p, "targetPort");
        if (port && port->kind == CORRAL_VAL_INT &&
            (!tp || tp->kind == CORRAL_VAL_NULL || (tp->kind == CORRAL_VAL_INT && tp->u.i == 0) ||
             (tp->kind == CORRAL_VAL_STR && !tp->len)))
            corral_val_set(a, p, "targetPort", port);
    }
}

/* Endpoints: every port's protocol TCP. */
static void default_endpoints(corral_arena_t *a, corral_val_t *raw)
{
    corral_val_t *subsets = seq_at(raw, "subsets");
    for (size_t i = 0; subsets && i < subsets->n; i++) {
        corral_val_t *ports = subsets->items[i] && subsets->items[i]->kind == CORRAL_VAL_MAP
                                  ? seq_at(subsets->items[i], "ports")
                                  : NULL;
        for (size_t j = 0; ports && j < ports->n; j++) {
            if (ports->items[j] && ports->items[j]->kind == CORRAL_VAL_MAP)
                set_str(a, ports->items[j], "protocol", "TCP");
        }
    }
}

/* Copy to[k] = from[k] for each k of from that to lacks (to created when absent). */
static void fill_from(corral_arena_t *a, corral_val_t *item, const char *to, const char *from)
{
    corral_val_t *src = map_at(item, from);
    if (!src || !src->n)
        return;
    corral_val_t *dst = map_at(item, to);
    if (!dst) {
        if (!absent(item, to))
            return;
        dst = corral_val_ensure_map(a, item, to);
    }
    for (size_t i = 0; i < src->n; i++) {
        if (!corral_val_get(dst, src->pairs[i].key->s))
            corral_val_set(a, dst, src->pairs[i].key->s, src->pairs[i].val);
    }
}

/* LimitRange, as SetDefaults_LimitRangeItem for Container items: default
 * from max, defaultRequest from default, then from min. */
static void default_limit_range(corral_arena_t *a, corral_val_t *raw)
{
    corral_val_t *limits = seq_at(map_at(raw, "spec"), "limits");
    for (size_t i = 0; limits && i < limits->n; i++) {
        corral_val_t *it = limits->items[i];
        const char *type = it && it->kind == CORRAL_VAL_MAP ? corral_val_get_str(it, "type") : NULL;
        if (!type || strcmp(type, "Container") != 0)
            continue;
        fill_from(a, it, "default", "max");
        fill_from(a, it, "defaultRequest", "default");
        fill_from(a, it, "defaultRequest", "min");
    }
}

/* An absent or empty string field gets val (kube defaults on len == 0). */
static void set_str_nonempty(corral_arena_t *a, corral_val_t *m, const char *key, const char *val)
{
    const char *cur = corral_val_get_str(m, key);
    if (absent(m, key) || (cur && !*cur))
        corral_val_set(a, m, key, corral_val_new_str(a, val));
}

/* rbac/v1 defaults: roleRef.apiGroup, and subjects' apiGroup by kind. */
static void default_binding(corral_arena_t *a, corral_val_t *raw)
{
    corral_val_t *ref = map_at(raw, "roleRef");
    if (ref)
        set_str_nonempty(a, ref, "apiGroup", "rbac.authorization.k8s.io");
    corral_val_t *subjects = seq_at(raw, "subjects");
    for (size_t i = 0; subjects && i < subjects->n; i++) {
        corral_val_t *s = subjects->items[i];
        const char *kind = s && s->kind == CORRAL_VAL_MAP ? corral_val_get_str(s, "kind") : NULL;
        if (!kind)
            continue;
        if (strcmp(kind, "User") == 0 || strcmp(kind, "Group") == 0)
            set_str_nonempty(a, s, "apiGroup", "rbac.authorization.k8s.io");
    }
}

void corral_obj_default(corral_arena_t *a, const corral_kind_info_t *k, corral_val_t *raw)
{
    if (!raw || raw->kind != CORRAL_VAL_MAP || !k)
        return;
    corral_val_t *spec;
    switch (k->kind) {
    case CORRAL_KIND_POD:
        default_pod(a, raw);
        break;
    case CORRAL_KIND_NAMESPACE:
        spec = corral_val_ensure_map(a, raw, "spec");
        if (absent(spec, "finalizers")) {
            corral_val_t *f = corral_val_new(a, CORRAL_VAL_SEQ);
            corral_val_push(a, f, corral_val_new_str(a, "kubernetes"));
            corral_val_set(a, spec, "finalizers", f);
        }
        break;
    case CORRAL_KIND_SECRET:
        default_secret(a, raw);
        break;
    case CORRAL_KIND_PRIORITYCLASS:
        set_str(a, raw, "preemptionPolicy", "PreemptLowerPriority");
        break;
    case CORRAL_KIND_QUEUE:
        spec = map_at(raw, "spec");
        if (!spec && absent(raw, "spec"))
            spec = corral_val_ensure_map(a, raw, "spec");
        if (spec) {
            if (zero_or_absent(spec, "weight"))
                corral_val_set(a, spec, "weight", corral_val_new_int(a, 1));
            set_bool(a, spec, "reclaimable", true);
        }
        break;
    case CORRAL_KIND_PODGROUP:
        spec = map_at(raw, "spec");
        if (spec)
            set_str(a, spec, "queue", "default");
        break;
    case CORRAL_KIND_VCJOB:
        default_vcjob(a, raw);
        break;
    case CORRAL_KIND_ROLEBINDING:
    case CORRAL_KIND_CLUSTERROLEBINDING:
        default_binding(a, raw);
        break;
    case CORRAL_KIND_SERVICE:
        default_service(a, raw);
        break;
    case CORRAL_KIND_ENDPOINTS:
        default_endpoints(a, raw);
        break;
    case CORRAL_KIND_LIMITRANGE:
        default_limit_range(a, raw);
        break;
    case CORRAL_KIND_DEPLOYMENT:
    case CORRAL_KIND_DAEMONSET:
        default_workload(a, raw, k->kind == CORRAL_KIND_DEPLOYMENT);
        break;
    case CORRAL_KIND_CRD:
        default_crd(a, raw);
        break;
    default:
        break;
    }
}
