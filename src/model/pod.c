/*
 * Pods: containers, resources, tolerations, node affinity, the pod spec and
 * status, pod templates, and the Pod kind itself. The pod spec is shared by
 * Pods, Volcano Job task templates and (through its parts) KServe predictors.
 *
 * GPU rules checked here: nvidia.com/gpu is a whole number (a share of one GPU
 * is corral.dev/gpu-milli, 1-999), and, as for every extended resource, its
 * request may not differ from its limit.
 */
#include <string.h>

#include "corral/timefmt.h"
#include "model/model_int.h"

#define RES_GPU       "nvidia.com/gpu"
#define RES_GPU_MILLI "corral.dev/gpu-milli"

/* --- containers ------------------------------------------------------------- */

static const corral__field_t env_fields[] = {
    CORRAL__F("name", corral__dec_str, corral_env_t, name),
    CORRAL__F("value", corral__dec_str, corral_env_t, value),
    CORRAL__KEEP("valueFrom"),
};

static void dec_env(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_env_t *e = out;
    if (CORRAL__DEC_MAP(d, v, env_fields, e) && !e->name)
        corral__dec_err_field(d, v, "name", "required");
}

static void dec_env_list(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_container_t *c = out;
    corral__dec_seq(d, v, sizeof(corral_env_t), dec_env, (void **)&c->env, &c->nenv);
}

typedef struct res_req {
    corral_reslist_t requests, limits;
} res_req_t;

static const corral__field_t resources_fields[] = {
    CORRAL__F("requests", corral__dec_reslist, res_req_t, requests),
    CORRAL__F("limits", corral__dec_reslist, res_req_t, limits),
    CORRAL__KEEP("claims"),
};

static bool is_extended(const char *name)
{
    /* Extended resources have a domain outside kubernetes.io (and no hugepages-). */
    return strchr(name, '/') != NULL && !strstr(name, "kubernetes.io/");
}

void corral__check_resources(corral__dec_t *d, const corral_val_t *v, const corral_reslist_t *l)
{
    for (size_t i = 0; i < l->n; i++) {
        const corral_res_t *r = &l->items[i];
        const corral_val_t *at = corral_val_get(v, r->name);
        if (strcmp(r->name, RES_GPU) == 0 && !corral_qty_is_integer(&r->qty)) {
            int64_t milli = 0;
            corral_qty_milli(&r->qty, &milli);
            corral__dec_err_field(d, at, r->name,
                                  "must be a whole number of GPUs, got %s; for a share of one "
                                  "GPU use `corral.dev/gpu-milli: %lld`",
                                  at ? at->s : "?", (long long)(milli % 1000));
        } else if (strcmp(r->name, RES_GPU_MILLI) == 0) {
            int64_t m = 0;
            if (!corral_qty_is_integer(&r->qty) || corral_qty_value(&r->qty, &m) != 0 || m < 1 ||
                m > 999)
                corral__dec_err_field(d, at, r->name,
                                      "must be a whole number from 1 to 999 (thousandths of one "
                                      "GPU); for whole GPUs use nvidia.com/gpu");
        } else if (is_extended(r->name) && !corral_qty_is_integer(&r->qty)) {
            corral__dec_err_field(d, at, r->name, "must be a whole number (extended resource)");
        }
    }
}

static void dec_resources(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_container_t *c = out;
    res_req_t rr;
    memset(&rr, 0, sizeof(rr));
    if (!CORRAL__DEC_MAP(d, v, resources_fields, &rr))
        return;
    c->requests = rr.requests;
    c->limits = rr.limits;
    const corral_val_t *rv = corral_val_get(v, "requests");
    const corral_val_t *lv = corral_val_get(v, "limits");
    size_t m = corral__dec_enter(d, "requests");
    corral__check_resources(d, rv, &rr.requests);
    corral__dec_leave(d, m);
    m = corral__dec_enter(d, "limits");
    corral__check_resources(d, lv, &rr.limits);
    corral__dec_leave(d, m);
    for (size_t i = 0; i < rr.requests.n; i++) {
        const corral_res_t *req = &rr.requests.items[i];
        const corral_qty_t *lim = corral_reslist_get(&rr.limits, req->name);
        if (!lim)
            continue;
        int cmp = corral_qty_cmp(&req->qty, lim);
        const corral_val_t *at = corral_val_get(rv, req->name);
        m = corral__dec_enter(d, "requests");
        if (is_extended(req->name) && cmp != 0)
            corral__dec_err_field(d, at, req->name,
                                  "must be equal to the limit (%s cannot be overcommitted)",
                                  req->name);
        else if (cmp > 0)
            corral__dec_err_field(d, at, req->name, "must be less than or equal to the limit");
        corral__dec_leave(d, m);
    }
}

static const corral__field_t container_fields[] = {
    CORRAL__F("name", corral__dec_str, corral_container_t, name),
    CORRAL__F("image", corral__dec_str, corral_container_t, image),
    CORRAL__F("imagePullPolicy", corral__dec_str, corral_container_t, image_pull_policy),
    CORRAL__F("workingDir", corral__dec_str, corral_container_t, working_dir),
    CORRAL__F("command", corral__dec_strlist, corral_container_t, command),
    CORRAL__F("args", corral__dec_strlist, corral_container_t, args),
    CORRAL__WHOLE("env", dec_env_list),
    CORRAL__WHOLE("resources", dec_resources),
    CORRAL__KEEP("envFrom"),
    CORRAL__KEEP("ports"),
    CORRAL__KEEP("volumeMounts"),
    CORRAL__KEEP("volumeDevices"),
    CORRAL__KEEP("livenessProbe"),
    CORRAL__KEEP("readinessProbe"),
    CORRAL__KEEP("startupProbe"),
    CORRAL__KEEP("lifecycle"),
    CORRAL__KEEP("securityContext"),
    CORRAL__KEEP("terminationMessagePath"),
    CORRAL__KEEP("terminationMessagePolicy"),
    CORRAL__KEEP("stdin"),
    CORRAL__KEEP("stdinOnce"),
    CORRAL__KEEP("tty"),
    CORRAL__KEEP("resizePolicy"),
    CORRAL__KEEP("restartPolicy"),
};

void corral__dec_container(corral__dec_t *d, const corral_val_t *v, void *out)
{
    CORRAL__DEC_MAP(d, v, container_fields, out);
}

/* Container fields plus the checks a Pod's containers must pass. */
static void dec_pod_container(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_container_t *c = out;
    if (!CORRAL__DEC_MAP(d, v, container_fields, c))
        return;
    if (!c->name || !*c->name) {
        corral__dec_err_field(d, v, "name", "required");
    } else {
        const char *err = corral__dns1123_label_error(c->name);
        if (err)
            corral__dec_err_field(d, corral_val_get(v, "name"), "name",
                                  "invalid container name \"%s\": %s", c->name, err);
    }
    if (!c->image || !*c->image)
        corral__dec_err_field(d, v, "image", "required");
}

/* --- tolerations ------------------------------------------------------------ */

static void dec_tol_op(corral__dec_t *d, const corral_val_t *v, void *out)
{
    static const char *const ops[] = {"Equal", "Exists"};
    corral__dec_enum(d, v, out, ops, CORRAL_ARRAY_LEN(ops));
}

static void dec_effect(corral__dec_t *d, const corral_val_t *v, void *out)
{
    static const char *const effects[] = {"NoSchedule", "PreferNoSchedule", "NoExecute", ""};
    corral__dec_enum(d, v, out, effects, CORRAL_ARRAY_LEN(effects));
}

static const corral__field_t toleration_fields[] = {
    CORRAL__F("key", corral__dec_str, corral_toleration_t, key),
    CORRAL__F("operator", dec_tol_op, corral_toleration_t, op),
    CORRAL__F("value", corral__dec_str, corral_toleration_t, value),
    CORRAL__F("effect", dec_effect, corral_toleration_t, effect),
    CORRAL__F("tolerationSeconds", corral__dec_opt_i64, corral_toleration_t, seconds),
};

static void dec_toleration(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_toleration_t *t = out;
    if (!CORRAL__DEC_MAP(d, v, toleration_fields, t))
        return;
    if (!t->op)
        t->op = "Equal";
    bool exists = strcmp(t->op, "Exists") == 0;
    if (exists && t->value && *t->value)
        corral__dec_err_field(d, corral_val_get(v, "value"), "value",
                              "must be empty when `operator` is 'Exists'");
    if ((!t->key || !*t->key) && !exists)
        corral__dec_err_field(d, corral_val_get(v, "operator"), "operator",
                              "must be 'Exists' when `key` is empty, which means \"match all "
                              "values and all keys\"");
    if (t->seconds.set && t->effect && strcmp(t->effect, "NoExecute") != 0)
        corral__dec_err_field(d, corral_val_get(v, "effect"), "effect",
                              "must be 'NoExecute' when `tolerationSeconds` is set");
}

void corral__dec_tolerations(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_tolerations_t *t = out;
    corral__dec_seq(d, v, sizeof(corral_toleration_t), dec_toleration, (void **)&t->items, &t->n);
}

/* --- node affinity ---------------------------------------------------------- */

static void dec_match_fields(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_selector_t *sel = out;
    corral__dec_node_sel_exprs(d, v, sel);
    for (size_t i = 0; i < sel->n; i++) {
        if (strcmp(sel->reqs[i].key, "metadata.name") != 0)
            corral__dec_err(d, v, "field \"%s\" is not supported; only metadata.name",
                            sel->reqs[i].key);
    }
}

static const corral__field_t term_fields[] = {
    CORRAL__F("matchExpressions", corral__dec_node_sel_exprs, corral_nsel_term_t, exprs),
    CORRAL__F("matchFields", dec_match_fields, corral_nsel_term_t, fields),
};

static void dec_term(corral__dec_t *d, const corral_val_t *v, void *out)
{
    CORRAL__DEC_MAP(d, v, term_fields, out);
}

typedef struct required {
    corral_nsel_term_t *terms;
    size_t n;
} required_t;

static void dec_terms(corral__dec_t *d, const corral_val_t *v, void *out)
{
    required_t *r = out;
    corral__dec_seq(d, v, sizeof(corral_nsel_term_t), dec_term, (void **)&r->terms, &r->n);
    if (r->n == 0 && v && v->kind == CORRAL_VAL_SEQ)
        corral__dec_err(d, v, "must have at least one node selector term");
}

static const corral__field_t required_fields[] = {
    CORRAL__WHOLE("nodeSelectorTerms", dec_terms),
};

static const corral__field_t pref_fields[] = {
    CORRAL__F("weight", corral__dec_int32, corral_pref_term_t, weight),
    CORRAL__F("preference", dec_term, corral_pref_term_t, pref),
};

static void dec_pref(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_pref_term_t *p = out;
    if (!CORRAL__DEC_MAP(d, v, pref_fields, p))
        return;
    if (p->weight < 1 || p->weight > 100)
        corral__dec_err_field(d, corral_val_get(v, "weight"), "weight",
                              "must be in the range 1-100");
}

void corral__dec_node_selector(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_node_affinity_t *na = out;
    required_t r = {NULL, 0};
    CORRAL__DEC_MAP(d, v, required_fields, &r);
    na->required = r.terms;
    na->nrequired = r.n;
}

static void dec_preferred(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_node_affinity_t *na = out;
    corral__dec_seq(d, v, sizeof(corral_pref_term_t), dec_pref, (void **)&na->preferred,
                    &na->npreferred);
}

static const corral__field_t node_affinity_fields[] = {
    CORRAL__WHOLE("requiredDuringSchedulingIgnoredDuringExecution", corral__dec_node_selector),
    CORRAL__WHOLE("preferredDuringSchedulingIgnoredDuringExecution", dec_preferred),
};

static void dec_node_affinity(corral__dec_t *d, const corral_val_t *v, void *out)
{
    CORRAL__DEC_MAP(d, v, node_affinity_fields, out);
}

static const corral__field_t affinity_fields[] = {
    CORRAL__WHOLE("nodeAffinity", dec_node_affinity),
    CORRAL__KEEP("podAffinity"),
    CORRAL__KEEP("podAntiAffinity"),
};

void corral__dec_affinity(corral__dec_t *d, const corral_val_t *v, void *out)
{
    CORRAL__DEC_MAP(d, v, affinity_fields, out);
}

/* --- pod spec --------------------------------------------------------------- */

static void dec_containers(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_pod_spec_t *s = out;
    corral__dec_seq(d, v, sizeof(corral_container_t), dec_pod_container, (void **)&s->containers,
                    &s->ncontainers);
}

static void dec_init_containers(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_pod_spec_t *s = out;
    corral__dec_seq(d, v, sizeof(corral_container_t), dec_pod_container,
                    (void **)&s->init_containers, &s->ninit_containers);
}

static void dec_restart_policy(corral__dec_t *d, const corral_val_t *v, void *out)
{
    static const char *const p[] = {"Always", "OnFailure", "Never"};
    corral__dec_enum(d, v, out, p, CORRAL_ARRAY_LEN(p));
}

static void dec_preemption_policy(corral__dec_t *d, const corral_val_t *v, void *out)
{
    static const char *const p[] = {"PreemptLowerPriority", "Never"};
    corral__dec_enum(d, v, out, p, CORRAL_ARRAY_LEN(p));
}

static const corral__field_t pod_spec_fields[] = {
    CORRAL__WHOLE("containers", dec_containers),
    CORRAL__WHOLE("initContainers", dec_init_containers),
    CORRAL__F("nodeName", corral__dec_str, corral_pod_spec_t, node_name),
    CORRAL__F("schedulerName", corral__dec_str, corral_pod_spec_t, scheduler_name),
    CORRAL__F("priorityClassName", corral__dec_str, corral_pod_spec_t, priority_class_name),
    CORRAL__F("priority", corral__dec_opt_i32, corral_pod_spec_t, priority),
    CORRAL__F("preemptionPolicy", dec_preemption_policy, corral_pod_spec_t, preemption_policy),
    CORRAL__F("restartPolicy", dec_restart_policy, corral_pod_spec_t, restart_policy),
    CORRAL__F("serviceAccountName", corral__dec_str, corral_pod_spec_t, service_account_name),
    CORRAL__F("hostNetwork", corral__dec_bool, corral_pod_spec_t, host_network),
    CORRAL__F("terminationGracePeriodSeconds", corral__dec_int64, corral_pod_spec_t,
              termination_grace_seconds),
    CORRAL__F("nodeSelector", corral__dec_strmap, corral_pod_spec_t, node_selector),
    CORRAL__F("affinity", corral__dec_affinity, corral_pod_spec_t, node_affinity),
    CORRAL__F("tolerations", corral__dec_tolerations, corral_pod_spec_t, tolerations),
    CORRAL__F("overhead", corral__dec_reslist, corral_pod_spec_t, overhead),
    CORRAL__KEEP("volumes"),
    CORRAL__KEEP("ephemeralContainers"),
    CORRAL__KEEP("activeDeadlineSeconds"),
    CORRAL__KEEP("dnsPolicy"),
    CORRAL__KEEP("dnsConfig"),
    CORRAL__KEEP("serviceAccount"),
    CORRAL__KEEP("automountServiceAccountToken"),
    CORRAL__KEEP("hostPID"),
    CORRAL__KEEP("hostIPC"),
    CORRAL__KEEP("shareProcessNamespace"),
    CORRAL__KEEP("securityContext"),
    CORRAL__KEEP("imagePullSecrets"),
    CORRAL__KEEP("hostname"),
    CORRAL__KEEP("subdomain"),
    CORRAL__KEEP("hostAliases"),
    CORRAL__KEEP("runtimeClassName"),
    CORRAL__KEEP("enableServiceLinks"),
    CORRAL__KEEP("topologySpreadConstraints"),
    CORRAL__KEEP("readinessGates"),
    CORRAL__KEEP("setHostnameAsFQDN"),
    CORRAL__KEEP("os"),
    CORRAL__KEEP("hostUsers"),
    CORRAL__KEEP("schedulingGates"),
    CORRAL__KEEP("resourceClaims"),
};

void corral__dec_pod_spec(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_pod_spec_t *s = out;
    s->termination_grace_seconds = 30;
    if (!CORRAL__DEC_MAP(d, v, pod_spec_fields, s))
        return;
    if (!s->scheduler_name)
        s->scheduler_name = "default-scheduler";
    if (!s->restart_policy)
        s->restart_policy = "Always";
    if (s->ncontainers == 0)
        corral__dec_err_field(d, v, "containers", "required: a pod needs at least one container");
    if (s->node_name && *s->node_name) {
        const char *err = corral__dns1123_subdomain_error(s->node_name);
        if (err)
            corral__dec_err_field(d, corral_val_get(v, "nodeName"), "nodeName", "%s", err);
    }
    const corral_val_t *ns = corral_val_get(v, "nodeSelector");
    for (size_t i = 0; i < s->node_selector.n; i++) {
        const char *err = corral_label_key_error(s->node_selector.items[i].key);
        if (err) {
            size_t m = corral__dec_enter(d, "nodeSelector");
            corral__dec_err_field(d, ns->pairs[i].key, s->node_selector.items[i].key,
                                  "invalid label key: %s", err);
            corral__dec_leave(d, m);
        }
    }
}

static const corral__field_t template_fields[] = {
    CORRAL__F("metadata", corral__dec_meta, corral_pod_template_t, meta),
    CORRAL__F("spec", corral__dec_pod_spec, corral_pod_template_t, spec),
};

void corral__dec_pod_template(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_pod_template_t *t = out;
    t->raw = v;
    if (!CORRAL__DEC_MAP(d, v, template_fields, t))
        return;
    if (!corral_val_get(v, "spec"))
        corral__dec_err_field(d, v, "spec", "required: the pod template needs a spec");
}

/* --- status and the kind ------------------------------------------------------ */

static void dec_phase(corral__dec_t *d, const corral_val_t *v, void *out)
{
    static const char *const p[] = {"Pending", "Running", "Succeeded", "Failed", "Unknown"};
    corral__dec_enum(d, v, out, p, CORRAL_ARRAY_LEN(p));
}

static const corral__field_t pod_status_fields[] = {
    CORRAL__F("phase", dec_phase, corral_pod_status_t, phase),
    CORRAL__F("reason", corral__dec_str, corral_pod_status_t, reason),
    CORRAL__F("message", corral__dec_str, corral_pod_status_t, message),
    CORRAL__F("hostIP", corral__dec_str, corral_pod_status_t, host_ip),
    CORRAL__F("podIP", corral__dec_str, corral_pod_status_t, pod_ip),
    CORRAL__F("nominatedNodeName", corral__dec_str, corral_pod_status_t, nominated_node_name),
    CORRAL__F("startTime", corral__dec_time, corral_pod_status_t, start_us),
    CORRAL__F("conditions", corral__dec_conditions, corral_pod_status_t, conditions),
    CORRAL__KEEP("hostIPs"),
    CORRAL__KEEP("podIPs"),
    CORRAL__KEEP("containerStatuses"),
    CORRAL__KEEP("initContainerStatuses"),
    CORRAL__KEEP("ephemeralContainerStatuses"),
    CORRAL__KEEP("qosClass"),
    CORRAL__KEEP("resize"),
    CORRAL__KEEP("resourceClaimStatuses"),
};

static void dec_pod_status(corral__dec_t *d, const corral_val_t *v, void *out)
{
    CORRAL__DEC_MAP(d, v, pod_status_fields, out);
}

static const corral__field_t pod_fields[] = {
    CORRAL__TOP_FIELDS,
    CORRAL__F("spec", corral__dec_pod_spec, corral_pod_t, spec),
    CORRAL__F("status", dec_pod_status, corral_pod_t, status),
};

void corral__kind_pod(corral__dec_t *d, const corral_val_t *root, corral_obj_t *o)
{
    corral_pod_t *p = corral_arena_alloc(d->a, sizeof(*p));
    o->u.pod = p;
    p->spec.termination_grace_seconds = 30;
    p->spec.scheduler_name = "default-scheduler";
    p->spec.restart_policy = "Always";
    CORRAL__DEC_MAP(d, root, pod_fields, p);
    if (!corral_val_get(root, "spec"))
        corral__dec_err_field(d, root, "spec", "required: a Pod needs a spec with containers");
}

/* --- effective requests --------------------------------------------------------- */

static void res_add(corral_arena_t *a, corral_reslist_t *out, size_t *cap, const char *name,
                    const corral_qty_t *q, bool take_max)
{
    for (size_t i = 0; i < out->n; i++) {
        corral_res_t *r = &out->items[i];
        if (strcmp(r->name, name) != 0)
            continue;
        int64_t x = 0, y = 0;
        corral_qty_scaled(&r->qty, 3, &x);
        corral_qty_scaled(q, 3, &y);
        int64_t v = take_max ? (x > y ? x : y) : x + y;
        r->qty = corral_qty_from_int(v);
        r->qty.exp10 -= 3;
        return;
    }
    if (out->n == *cap) {
        size_t c = *cap ? *cap * 2 : 8;
        out->items =
            corral_arena_grow(a, out->items, *cap * sizeof(*out->items), c * sizeof(*out->items));
        *cap = c;
    }
    out->items[out->n].name = name;
    out->items[out->n].qty = *q;
    out->n++;
}

/* A container's request for each resource: requests, else the limit. */
static void container_requests(corral_arena_t *a, const corral_container_t *c,
                               corral_reslist_t *out, size_t *cap, bool take_max)
{
    for (size_t i = 0; i < c->requests.n; i++)
        res_add(a, out, cap, c->requests.items[i].name, &c->requests.items[i].qty, take_max);
    for (size_t i = 0; i < c->limits.n; i++) {
        if (!corral_reslist_get(&c->requests, c->limits.items[i].name))
            res_add(a, out, cap, c->limits.items[i].name, &c->limits.items[i].qty, take_max);
    }
}

void corral_pod_requests(corral_arena_t *a, const corral_pod_spec_t *spec, corral_reslist_t *out)
{
    size_t cap = 0;
    out->items = NULL;
    out->n = 0;
    for (size_t i = 0; i < spec->ncontainers; i++)
        container_requests(a, &spec->containers[i], out, &cap, false);
    /* Init containers run one at a time before the others: the pod needs the
     * largest of them, if that exceeds the sum of the app containers. */
    for (size_t i = 0; i < spec->ninit_containers; i++)
        container_requests(a, &spec->init_containers[i], out, &cap, true);
    for (size_t i = 0; i < spec->overhead.n; i++)
        res_add(a, out, &cap, spec->overhead.items[i].name, &spec->overhead.items[i].qty, false);
}

int64_t corral_pod_gpu_milli(const corral_pod_spec_t *spec)
{
    corral_arena_t a;
    corral_arena_init(&a);
    corral_reslist_t req;
    corral_pod_requests(&a, spec, &req);
    const corral_qty_t *whole = corral_reslist_get(&req, RES_GPU);
    const corral_qty_t *share = corral_reslist_get(&req, RES_GPU_MILLI);
    int64_t g = 0, m = 0;
    if (whole && corral_qty_milli(whole, &g) != 0)
        g = 0;
    if (share && corral_qty_value(share, &m) == 0 && m > 0)
        g += m;
    corral_arena_fini(&a);
    return g;
}

const corral_qty_t *corral_reslist_get(const corral_reslist_t *l, const char *name)
{
    for (size_t i = 0; i < l->n; i++) {
        if (strcmp(l->items[i].name, name) == 0)
            return &l->items[i].qty;
    }
    return NULL;
}
