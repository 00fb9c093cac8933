/*
 * The core v1 kinds kubectl expects of any cluster that Corral stores but
 * does not act on: ServiceAccount, Service, Endpoints, ResourceQuota and
 * LimitRange. Each is a field table plus the upstream validation rules that
 * decide whether kube-apiserver would store the object (port ranges,
 * protocols, Service types, IntOrString target ports, unique port names,
 * quota scopes, limit range orderings). Defaults are in defaults.c.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "model/model_int.h"

/* --- ServiceAccount ---------------------------------------------------------------- */

static void dec_bool_opt(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_opt_i32_t *o = out;
    bool b = false;
    if (!v || v->kind == CORRAL_VAL_NULL)
        return;
    size_t before = d->errors;
    corral__dec_bool(d, v, &b);
    if (d->errors == before) {
        o->set = true;
        o->v = b;
    }
}

static const corral__field_t sa_fields[] = {
    CORRAL__TOP_FIELDS,
    CORRAL__KEEP("secrets"),
    CORRAL__KEEP("imagePullSecrets"),
    CORRAL__F("automountServiceAccountToken", dec_bool_opt, corral_service_account_t, automount),
};

void corral__kind_service_account(corral__dec_t *d, const corral_val_t *root, corral_obj_t *o)
{
    corral_service_account_t *sa = corral_arena_alloc(d->a, sizeof(*sa));
    o->u.sa = sa;
    CORRAL__DEC_MAP(d, root, sa_fields, sa);
}

/* --- ports -------------------------------------------------------------------------- */

static void dec_protocol(corral__dec_t *d, const corral_val_t *v, void *out)
{
    static const char *const p[] = {"TCP", "UDP", "SCTP"};
    corral__dec_enum(d, v, out, p, CORRAL_ARRAY_LEN(p));
}

static void check_port_num(corral__dec_t *d, const corral_val_t *at, const char *field, int64_t n,
                           int64_t lo)
{
    if (n < lo || n > 65535)
        corral__dec_err_field(d, at, field,
                              "Invalid value: %lld: must be between %lld and 65535, "
                              "inclusive",
                              (long long)n, (long long)lo);
}

/* IANA_SVC_NAME: 1-15 lower-case letters, digits and '-', at least one
 * letter, no '-' at either end nor two in a row. NULL when valid. */
static const char *iana_svc_name_error(const char *s)
{
    size_t n = strlen(s);
    bool letter = false;
    if (n == 0 || n > 15)
        return "must be no more than 15 characters";
    for (size_t i = 0; i < n; i++) {
        if (!(islower((unsigned char)s[i]) || isdigit((unsigned char)s[i]) || s[i] == '-'))
            return "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)";
        letter = letter || islower((unsigned char)s[i]);
        if (s[i] == '-' && i + 1 < n && s[i + 1] == '-')
            return "must not contain consecutive hyphens";
    }
    if (s[0] == '-' || s[n - 1] == '-')
        return "must not begin or end with a hyphen";
    return letter ? NULL : "must contain at least one letter (a-z)";
}

/* IntOrString targetPort: a number 1-65535 or an IANA service name. */
static void dec_target_port(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_service_port_t *p = out;
    if (!v || v->kind == CORRAL_VAL_NULL)
        return;
    if (v->kind == CORRAL_VAL_INT) {
        p->target_port = v->u.i >= 0 && v->u.i <= 65535 ? (int32_t)v->u.i : -1;
        if (v->u.i < 1 || v->u.i > 65535)
            corral__dec_err(d, v, "Invalid value: %lld: must be between 1 and 65535, inclusive",
                            (long long)v->u.i);
        return;
    }
    if (v->kind != CORRAL_VAL_STR) {
        corral__dec_err(d, v, "expected a port number or a port name, got %s",
                        corral_val_kind_name(v->kind));
        return;
    }
    p->target_port_name = v->s;
    const char *err = iana_svc_name_error(v->s);
    if (err)
        corral__dec_err(d, v, "Invalid value: \"%s\": %s", v->s, err);
}

static const corral__field_t svc_port_fields[] = {
    CORRAL__F("name", corral__dec_str, corral_service_port_t, name),
    CORRAL__F("protocol", dec_protocol, corral_service_port_t, protocol),
    CORRAL__KEEP("appProtocol"),
    CORRAL__F("port", corral__dec_int32, corral_service_port_t, port),
    CORRAL__WHOLE("targetPort", dec_target_port),
    CORRAL__F("nodePort", corral__dec_int32, corral_service_port_t, node_port),
};

static void dec_svc_port(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_service_port_t *p = out;
    p->protocol = "TCP";
    if (!CORRAL__DEC_MAP(d, v, svc_port_fields, p))
        return;
    const corral_val_t *pv = corral_val_get(v, "port");
    if (!pv)
        corral__dec_err_field(d, v, "port", "Required value");
    else
        check_port_num(d, pv, "port", p->port, 1);
    if (p->node_port)
        check_port_num(d, corral_val_get(v, "nodePort"), "nodePort", p->node_port, 1);
    if (p->name && *p->name) {
        const char *err = corral__dns1123_label_error(p->name);
        if (err)
            corral__dec_err_field(d, corral_val_get(v, "name"), "name", "Invalid value: \"%s\": %s",
                                  p->name, err);
    }
}

/* Port names: required when there are several, unique. */
static void check_port_names(corral__dec_t *d, const corral_val_t *seq, const char *field,
                             const corral_service_port_t *ports, size_t n)
{
    for (size_t i = 0; seq && seq->kind == CORRAL_VAL_SEQ && i < n && i < seq->n; i++) {
        size_t m = corral__dec_enter(d, field);
        size_t mi = corral__dec_enter_index(d, i);
        const char *name = ports[i].name ? ports[i].name : "";
        if (n > 1 && !*name)
            corral__dec_err_field(d, seq->items[i], "name", "Required value");
        for (size_t j = 0; *name && j < i; j++) {
            if (ports[j].name && strcmp(ports[j].name, name) == 0) {
                corral__dec_err_field(d, corral_val_get(seq->items[i], "name"), "name",
                                      "Duplicate value: \"%s\"", name);
                break;
            }
        }
        corral__dec_leave(d, mi);
        corral__dec_leave(d, m);
    }
}

/* --- Service ------------------------------------------------------------------------- */

static void dec_svc_type(corral__dec_t *d, const corral_val_t *v, void *out)
{
    static const char *const t[] = {"ClusterIP", "NodePort", "LoadBalancer", "ExternalName"};
    corral__dec_enum(d, v, out, t, CORRAL_ARRAY_LEN(t));
}

static void dec_affinity(corral__dec_t *d, const corral_val_t *v, void *out)
{
    static const char *const t[] = {"None", "ClientIP"};
    corral__dec_enum(d, v, out, t, CORRAL_ARRAY_LEN(t));
}

static void dec_svc_ports(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_service_t *s = out;
    corral__dec_seq(d, v, sizeof(corral_service_port_t), dec_svc_port, (void **)&s->ports,
                    &s->nports);
}

static const corral__field_t svc_spec_fields[] = {
    CORRAL__F("type", dec_svc_type, corral_service_t, type),
    CORRAL__F("clusterIP", corral__dec_str, corral_service_t, cluster_ip),
    CORRAL__KEEP("clusterIPs"),
    CORRAL__F("sessionAffinity", dec_affinity, corral_service_t, session_affinity),
    CORRAL__KEEP("sessionAffinityConfig"),
    CORRAL__F("externalName", corral__dec_str, corral_service_t, external_name),
    CORRAL__F("selector", corral__dec_strmap, corral_service_t, selector),
    CORRAL__WHOLE("ports", dec_svc_ports),
    CORRAL__KEEP("externalIPs"),
    CORRAL__KEEP("externalTrafficPolicy"),
    CORRAL__KEEP("internalTrafficPolicy"),
    CORRAL__KEEP("healthCheckNodePort"),
    CORRAL__KEEP("ipFamilies"),
    CORRAL__KEEP("ipFamilyPolicy"),
    CORRAL__KEEP("loadBalancerIP"),
    CORRAL__KEEP("loadBalancerSourceRanges"),
    CORRAL__KEEP("loadBalancerClass"),
    CORRAL__KEEP("allocateLoadBalancerNodePorts"),
    CORRAL__KEEP("publishNotReadyAddresses"),
    CORRAL__KEEP("trafficDistribution"),
};

static void dec_svc_spec(corral__dec_t *d, const corral_val_t *v, void *out)
{
    CORRAL__DEC_MAP(d, v, svc_spec_fields, out);
}

static const corral__field_t svc_fields[] = {
    CORRAL__TOP_FIELDS,
    CORRAL__WHOLE("spec", dec_svc_spec),
    CORRAL__KEEP("status"),
};

static bool ip_ok(const char *s)
{
    unsigned char buf[16];
    return inet_pton(AF_INET, s, buf) == 1 || inet_pton(AF_INET6, s, buf) == 1;
}

static void check_service(corral__dec_t *d, const corral_val_t *root, const corral_service_t *s)
{
    const corral_val_t *spec = corral_val_get(root, "spec");
    bool external = strcmp(s->type, "ExternalName") == 0;
    bool headless = s->cluster_ip && strcmp(s->cluster_ip, "None") == 0;
    if (s->cluster_ip && *s->cluster_ip && !headless && !ip_ok(s->cluster_ip))
        corral__dec_err_field(d, corral_val_get(spec, "clusterIP"), "spec.clusterIP",
                              "Invalid value: \"%s\": must be empty, 'None', or a valid IP "
                              "address",
                              s->cluster_ip);
    if (!s->nports && !external && !headless)
        corral__dec_err_field(d, spec ? spec : root, "spec.ports", "Required value");
    check_port_names(d, corral_val_get(spec, "ports"), "spec.ports", s->ports, s->nports);
    for (size_t i = 0; i < s->nports; i++) {
        bool np = !strcmp(s->type, "NodePort") || !strcmp(s->type, "LoadBalancer");
        if (s->ports[i].node_port && !np)
            corral__dec_err_field(d, spec, "spec.ports.nodePort",
                                  "Forbidden: may not be used when `type` is '%s'", s->type);
    }
    if (external) {
        const char *err = s->external_name && *s->external_name
                              ? corral__dns1123_subdomain_error(s->external_name)
                              : "Required value";
        if (err)
            corral__dec_err_field(d, corral_val_get(spec, "externalName"), "spec.externalName",
                                  "%s", err);
    }
}

void corral__kind_service(corral__dec_t *d, const corral_val_t *root, corral_obj_t *o)
{
    corral_service_t *s = corral_arena_alloc(d->a, sizeof(*s));
    o->u.svc = s;
    s->type = "ClusterIP";
    s->session_affinity = "None";
    CORRAL__DEC_MAP(d, root, svc_fields, s);
    check_service(d, root, s);
}

/* --- Endpoints ------------------------------------------------------------------------- */

typedef struct ep_addr {
    const char *ip;
} ep_addr_t;

static const corral__field_t ep_addr_fields[] = {
    CORRAL__F("ip", corral__dec_str, ep_addr_t, ip),
    CORRAL__KEEP("hostname"),
    CORRAL__KEEP("nodeName"),
    CORRAL__KEEP("targetRef"),
};

static void dec_ep_addr(corral__dec_t *d, const corral_val_t *v, void *out)
{
    ep_addr_t *a = out;
    if (!CORRAL__DEC_MAP(d, v, ep_addr_fields, a))
        return;
    if (!a->ip || !*a->ip)
        corral__dec_err_field(d, v, "ip", "Required value");
    else if (!ip_ok(a->ip))
        corral__dec_err_field(d, corral_val_get(v, "ip"), "ip",
                              "Invalid value: \"%s\": must be a valid IP address", a->ip);
}

static void dec_ep_addrs(corral__dec_t *d, const corral_val_t *v, void *out)
{
    void *items;
    size_t n;
    corral__dec_seq(d, v, sizeof(ep_addr_t), dec_ep_addr, &items, &n);
    *(size_t *)out = n;
}

typedef struct ep_subset {
    size_t naddrs, nnot_ready;
    corral_service_port_t *ports;
    size_t nports;
} ep_subset_t;

static void dec_ep_port(corral__dec_t *d, const corral_val_t *v, void *out)
{
    static const corral__field_t fields[] = {
        CORRAL__F("name", corral__dec_str, corral_service_port_t, name),
        CORRAL__F("protocol", dec_protocol, corral_service_port_t, protocol),
        CORRAL__F("port", corral__dec_int32, corral_service_port_t, port),
        CORRAL__KEEP("appProtocol"),
    };
    corral_service_port_t *p = out;
    p->protocol = "TCP";
    if (!CORRAL__DEC_MAP(d, v, fields, p))
        return;
    check_port_num(d, corral_val_get(v, "port"), "port", p->port, 1);
}

static void dec_ep_ports(corral__dec_t *d, const corral_val_t *v, void *out)
{
    ep_subset_t *s = out;
    corral__dec_seq(d, v, sizeof(corral_service_port_t), dec_ep_port, (void **)&s->ports,
                    &s->nports);
}

static const corral__field_t ep_subset_fields[] = {
    CORRAL__F("addresses", dec_ep_addrs, ep_subset_t, naddrs),
    CORRAL__F("notReadyAddresses", dec_ep_addrs, ep_subset_t, nnot_ready),
    CORRAL__WHOLE("ports", dec_ep_ports),
};

static void dec_ep_subset(corral__dec_t *d, const corral_val_t *v, void *out)
{
    ep_subset_t *s = out;
    if (!CORRAL__DEC_MAP(d, v, ep_subset_fields, s))
        return;
    if (!s->naddrs && !s->nnot_ready)
        corral__dec_err(d, v, "Required value: must specify `addresses` or `notReadyAddresses`");
    if (!s->nports)
        corral__dec_err_field(d, v, "ports", "Required value");
    check_port_names(d, corral_val_get(v, "ports"), "ports", s->ports, s->nports);
}

static void dec_ep_subsets(corral__dec_t *d, const corral_val_t *v, void *out)
{
    void *items;
    corral__dec_seq(d, v, sizeof(ep_subset_t), dec_ep_subset, &items,
                    &((corral_endpoints_t *)out)->nsubsets);
}

static const corral__field_t ep_fields[] = {
    CORRAL__TOP_FIELDS,
    CORRAL__WHOLE("subsets", dec_ep_subsets),
};

void corral__kind_endpoints(corral__dec_t *d, const corral_val_t *root, corral_obj_t *o)
{
    corral_endpoints_t *e = corral_arena_alloc(d->a, sizeof(*e));
    o->u.ep = e;
    CORRAL__DEC_MAP(d, root, ep_fields, e);
}

/* --- ResourceQuota ---------------------------------------------------------------------- */

static void dec_scopes(corral__dec_t *d, const corral_val_t *v, void *out)
{
    static const char *const scopes[] = {"Terminating",   "NotTerminating",
                                         "BestEffort",    "NotBestEffort",
                                         "PriorityClass", "CrossNamespacePodAffinity"};
    corral_strlist_t *l = out;
    corral__dec_strlist(d, v, l);
    for (size_t i = 0; v && v->kind == CORRAL_VAL_SEQ && i < l->n && i < v->n; i++) {
        const char *s = NULL;
        size_t m = corral__dec_enter_index(d, i);
        corral__dec_enum(d, v->items[i], &s, scopes, CORRAL_ARRAY_LEN(scopes));
        corral__dec_leave(d, m);
    }
}

static const corral__field_t quota_spec_fields[] = {
    CORRAL__F("hard", corral__dec_reslist, corral_resource_quota_t, hard),
    CORRAL__F("scopes", dec_scopes, corral_resource_quota_t, scopes),
    CORRAL__KEEP("scopeSelector"),
};

static void dec_quota_spec(corral__dec_t *d, const corral_val_t *v, void *out)
{
    CORRAL__DEC_MAP(d, v, quota_spec_fields, out);
}

static const corral__field_t quota_status_fields[] = {
    CORRAL__KEEP("hard"),
    CORRAL__KEEP("used"),
};

static void dec_quota_status(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_resource_quota_t scratch;
    (void)out;
    memset(&scratch, 0, sizeof(scratch));
    CORRAL__DEC_MAP(d, v, quota_status_fields, &scratch);
}

static const corral__field_t quota_fields[] = {
    CORRAL__TOP_FIELDS,
    CORRAL__WHOLE("spec", dec_quota_spec),
    CORRAL__WHOLE("status", dec_quota_status),
};

void corral__kind_resource_quota(corral__dec_t *d, const corral_val_t *root, corral_obj_t *o)
{
    corral_resource_quota_t *q = corral_arena_alloc(d->a, sizeof(*q));
    o->u.quota = q;
    CORRAL__DEC_MAP(d, root, quota_fields, q);
}

/* --- LimitRange --------------------------------------------------------------------------- */

static void dec_lr_type(corral__dec_t *d, const corral_val_t *v, void *out)
{
    static const char *const t[] = {"Pod", "Container", "PersistentVolumeClaim"};
    corral__dec_enum(d, v, out, t, CORRAL_ARRAY_LEN(t));
}

static const corral__field_t lr_item_fields[] = {
    CORRAL__F("type", dec_lr_type, corral_limit_range_item_t, type),
    CORRAL__F("max", corral__dec_reslist, corral_limit_range_item_t, max),
    CORRAL__F("min", corral__dec_reslist, corral_limit_range_item_t, min),
    CORRAL__F("default", corral__dec_reslist, corral_limit_range_item_t, dflt),
    CORRAL__F("defaultRequest", corral__dec_reslist, corral_limit_range_item_t, default_request),
    CORRAL__F("maxLimitRequestRatio", corral__dec_reslist, corral_limit_range_item_t,
              max_limit_request_ratio),
};

/* lo[name] <= hi[name] for every name both set; else "<what>". */
static void check_order(corral__dec_t *d, const corral_val_t *v, const corral_reslist_t *lo,
                        const char *lo_name, const corral_reslist_t *hi, const char *hi_name)
{
    for (size_t i = 0; i < lo->n; i++) {
        const corral_qty_t *h = corral_reslist_get(hi, lo->items[i].name);
        if (!h || corral_qty_cmp(&lo->items[i].qty, h) <= 0)
            continue;
        const corral_val_t *at = corral_val_get(corral_val_get(v, lo_name), lo->items[i].name);
        const corral_val_t *hv = corral_val_get(corral_val_get(v, hi_name), lo->items[i].name);
        char field[160];
        snprintf(field, sizeof(field), "%s[%s]", lo_name, lo->items[i].name);
        corral__dec_err_field(d, at, field,
                              "Invalid value: \"%s\": %s value %s is greater than %s value %s",
                              at ? at->s : "", lo_name, at ? at->s : "", hi_name, hv ? hv->s : "");
    }
}

static void dec_lr_item(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_limit_range_item_t *it = out;
    if (!CORRAL__DEC_MAP(d, v, lr_item_fields, it))
        return;
    if (!it->type)
        corral__dec_err_field(d, v, "type", "Required value");
    else if (strcmp(it->type, "Pod") == 0 && (it->dflt.n || it->default_request.n))
        corral__dec_err_field(d, v, it->dflt.n ? "default" : "defaultRequest",
                              "Forbidden: may not be specified when `type` is 'Pod'");
    check_order(d, v, &it->min, "min", &it->max, "max");
    check_order(d, v, &it->min, "min", &it->default_request, "defaultRequest");
    check_order(d, v, &it->default_request, "defaultRequest", &it->dflt, "default");
    check_order(d, v, &it->dflt, "default", &it->max, "max");
    check_order(d, v, &it->default_request, "defaultRequest", &it->max, "max");
}

static void dec_lr_limits(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_limit_range_t *l = out;
    corral__dec_seq(d, v, sizeof(corral_limit_range_item_t), dec_lr_item, (void **)&l->limits,
                    &l->nlimits);
}

static const corral__field_t lr_spec_fields[] = {
    CORRAL__WHOLE("limits", dec_lr_limits),
};

static void dec_lr_spec(corral__dec_t *d, const corral_val_t *v, void *out)
{
    CORRAL__DEC_MAP(d, v, lr_spec_fields, out);
}

static const corral__field_t lr_fields[] = {
    CORRAL__TOP_FIELDS,
    CORRAL__WHOLE("spec", dec_lr_spec),
};

void corral__kind_limit_range(corral__dec_t *d, const corral_val_t *root, corral_obj_t *o)
{
    corral_limit_range_t *l = corral_arena_alloc(d->a, sizeof(*l));
    o->u.limits = l;
    CORRAL__DEC_MAP(d, root, lr_fields, l);
    if (!corral_val_get(root, "spec"))
        corral__dec_err_field(d, root, "spec", "Required value");
}
