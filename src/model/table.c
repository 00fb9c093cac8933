/*
 * Table columns and cells per kind (include/corral/table.h), following
 * kubectl's printers (pkg/printers/internalversion) for the core kinds and
 * the CRDs' printer columns for Volcano's and KServe's, plus kubectl's
 * HumanDuration for ages and its tabwriter layout (three spaces between
 * columns).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corral/table.h"
#include "corral/timefmt.h"

#define NONE "<none>"

typedef void (*row_fn)(const corral_val_t *o, int64_t now, corral_arena_t *a, const char **c);

typedef struct kind_table {
    corral_kind_t kind;
    const corral_table_col_t *cols;
    size_t ncols;
    row_fn fn;
} kind_table_t;

/* --- helpers ------------------------------------------------------------------------------ */

/* The text at a dotted path (scalars only), or NULL. */
static const char *str(const corral_val_t *o, const char *path)
{
    const corral_val_t *v = corral_val_dig(o, path);
    if (!v || v->kind == CORRAL_VAL_MAP || v->kind == CORRAL_VAL_SEQ || v->kind == CORRAL_VAL_NULL)
        return NULL;
    return v->s;
}

static const char *or_none(const char *s)
{
    return s && *s ? s : NONE;
}

static const char *or_zero(const char *s)
{
    return s && *s ? s : "0";
}

static size_t count(const corral_val_t *o, const char *path)
{
    const corral_val_t *v = corral_val_dig(o, path);
    return v && (v->kind == CORRAL_VAL_MAP || v->kind == CORRAL_VAL_SEQ) ? v->n : 0;
}

static int64_t int_at(const corral_val_t *o, const char *path)
{
    const corral_val_t *v = corral_val_dig(o, path);
    return v && v->kind == CORRAL_VAL_INT ? v->u.i : 0;
}

#define MIN_S  INT64_C(60)
#define HOUR_S INT64_C(3600)
#define DAY_S  INT64_C(86400)
#define YEAR_S (365 * DAY_S)

void corral_human_duration(int64_t s, char *out, size_t len)
{
    if (s < -1) {
        snprintf(out, len, "<invalid>");
    } else if (s < 0) {
        snprintf(out, len, "0s");
    } else if (s < 120) {
        snprintf(out, len, "%llds", (long long)s);
    } else if (s < 10 * MIN_S) {
        int64_t m = s / 60, r = s % 60;
        if (r)
            snprintf(out, len, "%lldm%llds", (long long)m, (long long)r);
        else
            snprintf(out, len, "%lldm", (long long)m);
    } else if (s < 3 * HOUR_S) {
        snprintf(out, len, "%lldm", (long long)(s / 60));
    } else if (s < 8 * HOUR_S) {
        int64_t h = s / 3600, m = (s / 60) % 60;
        if (m)
            snprintf(out, len, "%lldh%lldm", (long long)h, (long long)m);
        else
            snprintf(out, len, "%lldh", (long long)h);
    } else if (s < 48 * HOUR_S) {
        snprintf(out, len, "%lldh", (long long)(s / 3600));
    } else if (s < 8 * DAY_S) {
        int64_t d = s / 86400, h = (s / 3600) % 24;
        if (h)
            snprintf(out, len, "%lldd%lldh", (long long)d, (long long)h);
        else
            snprintf(out, len, "%lldd", (long long)d);
    } else if (s < 2 * YEAR_S) {
        snprintf(out, len, "%lldd", (long long)(s / 86400));
    } else {
        int64_t y = s / YEAR_S, d = (s / 86400) % 365;
        if (d && s < 8 * YEAR_S)
            snprintf(out, len, "%lldy%lldd", (long long)y, (long long)d);
        else
            snprintf(out, len, "%lldy", (long long)y);
    }
}

static const char *age_of(const char *ts, int64_t now, corral_arena_t *a)
{
    int64_t us;
    if (!ts || corral_time_parse(ts, strlen(ts), &us) != 0)
        return "<unknown>";
    char buf[32];
    corral_human_duration((now - us) / 1000000, buf, sizeof(buf));
    return corral_arena_strdup(a, buf);
}

const char *corral_table_age(const corral_val_t *obj, int64_t now_us, corral_arena_t *a)
{
    return age_of(str(obj, "metadata.creationTimestamp"), now_us, a);
}

static const char *name_of(const corral_val_t *o)
{
    return or_none(str(o, "metadata.name"));
}

/* The status of the condition of the given type, or NULL. */
static const corral_val_t *condition(const corral_val_t *o, const char *path, const char *type)
{
    const corral_val_t *cs = corral_val_dig(o, path);
    for (size_t i = 0; cs && cs->kind == CORRAL_VAL_SEQ && i < cs->n; i++) {
        const char *t = corral_val_get_str(cs->items[i], "type");
        if (t && strcmp(t, type) == 0)
            return cs->items[i];
    }
    return NULL;
}

/* --- pods --------------------------------------------------------------------------------- */

static const corral_table_col_t pod_cols[] = {
    {"NAME", 0}, {"READY", 0}, {"STATUS", 0},         {"RESTARTS", 0}, {"AGE", 0},
    {"IP", 1},   {"NODE", 1},  {"NOMINATED NODE", 1}, {"GPUS", 1},
};

/* kubectl's pod STATUS: the phase, overridden by a container's waiting or
 * terminated reason, "Terminating" while being deleted. */
static const char *pod_status(const corral_val_t *o)
{
    const char *reason = str(o, "status.reason");
    if (!reason || !*reason)
        reason = or_none(str(o, "status.phase"));
    if (!strcmp(reason, NONE))
        reason = "Pending";
    const corral_val_t *cs = corral_val_dig(o, "status.containerStatuses");
    for (size_t i = cs && cs->kind == CORRAL_VAL_SEQ ? cs->n : 0; i-- > 0;) {
        const char *w = str(cs->items[i], "state.waiting.reason");
        const char *t = str(cs->items[i], "state.terminated.reason");
        if (w && *w)
            reason = w;
        else if (t && *t)
            reason = t;
    }
    if (corral_val_dig(o, "metadata.deletionTimestamp"))
        reason = strcmp(reason, "NodeLost") == 0 ? "Unknown" : "Terminating";
    return reason;
}

static void pod_row(const corral_val_t *o, int64_t now, corral_arena_t *a, const char **c)
{
    size_t total = count(o, "spec.containers"), ready = 0;
    int64_t restarts = 0;
    const corral_val_t *cs = corral_val_dig(o, "status.containerStatuses");
    for (size_t i = 0; cs && cs->kind == CORRAL_VAL_SEQ && i < cs->n; i++) {
        const corral_val_t *r = corral_val_get(cs->items[i], "ready");
        ready += r && r->kind == CORRAL_VAL_BOOL && r->u.b;
        restarts += int_at(cs->items[i], "restartCount");
    }
    c[0] = name_of(o);
    c[1] = corral_arena_printf(a, "%zu/%zu", ready, total);
    c[2] = pod_status(o);
    c[3] = corral_arena_printf(a, "%lld", (long long)restarts);
    c[4] = corral_table_age(o, now, a);
    c[5] = or_none(str(o, "status.podIP"));
    c[6] = or_none(str(o, "spec.nodeName"));
    c[7] = or_none(str(o, "status.nominatedNodeName"));
    const corral_val_t *ann = corral_val_dig(o, "metadata.annotations");
    c[8] = or_none(corral_val_get_str(ann, "corral.dev/gpu-ids"));
}

/* --- nodes -------------------------------------------------------------------------------- */

static const corral_table_col_t node_cols[] = {
    {"NAME", 0},           {"STATUS", 0},
    {"ROLES", 0},          {"AGE", 0},
    {"VERSION", 0},        {"INTERNAL-IP", 1},
    {"EXTERNAL-IP", 1},    {"OS-IMAGE", 1},
    {"KERNEL-VERSION", 1}, {"CONTAINER-RUNTIME", 1},
    {"GPUS", 1},           {"GPU-PRODUCT", 1},
};

static const char *node_address(const corral_val_t *o, const char *type)
{
    const corral_val_t *as = corral_val_dig(o, "status.addresses");
    for (size_t i = 0; as && as->kind == CORRAL_VAL_SEQ && i < as->n; i++) {
        const char *t = corral_val_get_str(as->items[i], "type");
        if (t && strcmp(t, type) == 0)
            return corral_val_get_str(as->items[i], "address");
    }
    return NULL;
}

static const char *node_roles(const corral_val_t *o, corral_arena_t *a)
{
    const corral_val_t *l = corral_val_dig(o, "metadata.labels");
    corral_buf_t b;
    corral_buf_init(&b);
    static const char prefix[] = "node-role.kubernetes.io/";
    for (size_t i = 0; l && l->kind == CORRAL_VAL_MAP && i < l->n; i++) {
        const char *k = l->pairs[i].key->s;
        if (strncmp(k, prefix, sizeof(prefix) - 1) == 0 && k[sizeof(prefix) - 1])
            corral_buf_printf(&b, "%s%s", b.len ? "," : "", k + sizeof(prefix) - 1);
    }
    const char *r = corral_arena_strdup(a, b.len ? b.p : NONE);
    corral_buf_fini(&b);
    return r;
}

static void node_row(const corral_val_t *o, int64_t now, corral_arena_t *a, const char **c)
{
    const corral_val_t *ready = condition(o, "status.conditions", "Ready");
    const char *st = ready ? corral_val_get_str(ready, "status") : NULL;
    const char *status = st && !strcmp(st, "True") ? "Ready" : ready ? "NotReady" : "Unknown";
    const corral_val_t *u = corral_val_dig(o, "spec.unschedulable");
    if (u && u->kind == CORRAL_VAL_BOOL && u->u.b)
        status = corral_arena_printf(a, "%s,SchedulingDisabled", status);
    c[0] = name_of(o);
    c[1] = status;
    c[2] = node_roles(o, a);
    c[3] = corral_table_age(o, now, a);
    c[4] = or_none(str(o, "status.nodeInfo.kubeletVersion"));
    c[5] = or_none(node_address(o, "InternalIP"));
    c[6] = or_none(node_address(o, "ExternalIP"));
    c[7] = or_none(str(o, "status.nodeInfo.osImage"));
    c[8] = or_none(str(o, "status.nodeInfo.kernelVersion"));
    c[9] = or_none(str(o, "status.nodeInfo.containerRuntimeVersion"));
    const corral_val_t *alloc = corral_val_dig(o, "status.allocatable");
    if (!alloc)
        alloc = corral_val_dig(o, "status.capacity");
    const corral_val_t *g = corral_val_get(alloc, "nvidia.com/gpu");
    c[10] = g && g->s ? g->s : "0";
    const corral_val_t *l = corral_val_dig(o, "metadata.labels");
    c[11] = or_none(corral_val_get_str(l, "nvidia.com/gpu.product"));
}

/* --- other core kinds ------------------------------------------------------------------------ */

static const corral_table_col_t ns_cols[] = {{"NAME", 0}, {"STATUS", 0}, {"AGE", 0}};

static void ns_row(const corral_val_t *o, int64_t now, corral_arena_t *a, const char **c)
{
    c[0] = name_of(o);
    c[1] = or_none(str(o, "status.phase"));
    c[2] = corral_table_age(o, now, a);
}

static const corral_table_col_t event_cols[] = {
    {"LAST SEEN", 0}, {"TYPE", 0},  {"REASON", 0},     {"OBJECT", 0}, {"MESSAGE", 0},
    {"SOURCE", 1},    {"COUNT", 1}, {"FIRST SEEN", 1}, {"NAME", 1},
};

static void event_row(const corral_val_t *o, int64_t now, corral_arena_t *a, const char **c)
{
    const char *last = str(o, "lastTimestamp");
    if (!last)
        last = str(o, "eventTime");
    if (!last)
        last = str(o, "metadata.creationTimestamp");
    const char *kind = or_none(str(o, "involvedObject.kind"));
    char *lk = corral_arena_strdup(a, kind);
    for (char *p = lk; *p; p++)
        *p = (char)((*p >= 'A' && *p <= 'Z') ? *p + 32 : *p);
    c[0] = age_of(last, now, a);
    c[1] = or_none(str(o, "type"));
    c[2] = or_none(str(o, "reason"));
    c[3] = corral_arena_printf(a, "%s/%s", lk, or_none(str(o, "involvedObject.name")));
    c[4] = or_none(str(o, "message"));
    const char *src = str(o, "source.component");
    c[5] = or_none(src ? src : str(o, "reportingComponent"));
    c[6] = or_zero(str(o, "count"));
    const char *first = str(o, "firstTimestamp");
    c[7] = age_of(first ? first : last, now, a);
    c[8] = name_of(o);
}

static const corral_table_col_t pc_cols[] = {
    {"NAME", 0}, {"VALUE", 0}, {"GLOBAL-DEFAULT", 0}, {"AGE", 0}};

static void pc_row(const corral_val_t *o, int64_t now, corral_arena_t *a, const char **c)
{
    const corral_val_t *g = corral_val_get(o, "globalDefault");
    c[0] = name_of(o);
    c[1] = or_zero(str(o, "value"));
    c[2] = g && g->kind == CORRAL_VAL_BOOL && g->u.b ? "true" : "false";
    c[3] = corral_table_age(o, now, a);
}

static const corral_table_col_t lease_cols[] = {{"NAME", 0}, {"HOLDER", 0}, {"AGE", 0}};

static void lease_row(const corral_val_t *o, int64_t now, corral_arena_t *a, const char **c)
{
    c[0] = name_of(o);
    c[1] = or_none(str(o, "spec.holderIdentity"));
    c[2] = corral_table_age(o, now, a);
}

static const corral_table_col_t cm_cols[] = {{"NAME", 0}, {"DATA", 0}, {"AGE", 0}};

static void cm_row(const corral_val_t *o, int64_t now, corral_arena_t *a, const char **c)
{
    c[0] = name_of(o);
    c[1] = corral_arena_printf(a, "%zu", count(o, "data") + count(o, "binaryData"));
    c[2] = corral_table_age(o, now, a);
}

static const corral_table_col_t secret_cols[] = {{"NAME", 0}, {"TYPE", 0}, {"DATA", 0}, {"AGE", 0}};

static void secret_row(const corral_val_t *o, int64_t now, corral_arena_t *a, const char **c)
{
    c[0] = name_of(o);
    c[1] = or_none(str(o, "type"));
    c[2] = corral_arena_printf(a, "%zu", count(o, "data"));
    c[3] = corral_table_age(o, now, a);
}

/* --- Volcano, KServe ------------------------------------------------------------------------ */

static const corral_table_col_t queue_cols[] = {{"NAME", 0},  {"WEIGHT", 0}, {"RECLAIMABLE", 0},
                                                {"STATE", 0}, {"AGE", 0},    {"PARENT", 1}};

static void queue_row(const corral_val_t *o, int64_t now, corral_arena_t *a, const char **c)
{
    c[0] = name_of(o);
    c[1] = or_none(str(o, "spec.weight"));
    c[2] = or_none(str(o, "spec.reclaimable"));
    c[3] = or_none(str(o, "status.state"));
    c[4] = corral_table_age(o, now, a);
    c[5] = or_none(str(o, "spec.parent"));
}

static const corral_table_col_t pg_cols[] = {{"NAME", 0},     {"STATUS", 0}, {"MINMEMBER", 0},
                                             {"RUNNINGS", 0}, {"AGE", 0},    {"QUEUE", 1}};

static void pg_row(const corral_val_t *o, int64_t now, corral_arena_t *a, const char **c)
{
    c[0] = name_of(o);
    c[1] = or_none(str(o, "status.phase"));
    c[2] = or_zero(str(o, "spec.minMember"));
    c[3] = or_zero(str(o, "status.running"));
    c[4] = corral_table_age(o, now, a);
    c[5] = or_none(str(o, "spec.queue"));
}

static const corral_table_col_t job_cols[] = {{"NAME", 0},     {"STATUS", 0}, {"MINAVAILABLE", 0},
                                              {"RUNNINGS", 0}, {"AGE", 0},    {"QUEUE", 1}};

static void job_row(const corral_val_t *o, int64_t now, corral_arena_t *a, const char **c)
{
    c[0] = name_of(o);
    c[1] = or_none(str(o, "status.state.phase"));
    c[2] = or_zero(str(o, "spec.minAvailable"));
    c[3] = or_zero(str(o, "status.running"));
    c[4] = corral_table_age(o, now, a);
    c[5] = or_none(str(o, "spec.queue"));
}

static const corral_table_col_t hn_cols[] = {
    {"NAME", 0}, {"TIER", 0}, {"NODECOUNT", 0}, {"AGE", 0}};

static void hn_row(const corral_val_t *o, int64_t now, corral_arena_t *a, const char **c)
{
    c[0] = name_of(o);
    c[1] = or_none(str(o, "spec.tier"));
    c[2] = or_zero(str(o, "status.nodeCount"));
    c[3] = corral_table_age(o, now, a);
}

/* KServe's printer columns; an absent value is blank, as kubectl shows them. */
static const corral_table_col_t isvc_cols[] = {{"NAME", 0},
                                               {"URL", 0},
                                               {"READY", 0},
                                               {"PREV", 0},
                                               {"LATEST", 0},
                                               {"PREVROLLEDOUTREVISION", 0},
                                               {"LATESTREADYREVISION", 0},
                                               {"AGE", 0},
                                               {"MIN", 1},
                                               {"MAX", 1}};

/* The predictor's traffic entry with tag (or, tag NULL, latestRevision true). */
static const corral_val_t *isvc_target(const corral_val_t *o, const char *tag)
{
    const corral_val_t *t = corral_val_dig(o, "status.components.predictor.traffic");
    for (size_t i = 0; t && t->kind == CORRAL_VAL_SEQ && i < t->n; i++) {
        const corral_val_t *e = t->items[i];
        const char *et = corral_val_get_str(e, "tag");
        const corral_val_t *lr = corral_val_get(e, "latestRevision");
        if (tag ? et && !strcmp(et, tag) : lr && lr->kind == CORRAL_VAL_BOOL && lr->u.b)
            return e;
    }
    return NULL;
}

static const char *or_blank(const char *s)
{
    return s ? s : "";
}

static void isvc_row(const corral_val_t *o, int64_t now, corral_arena_t *a, const char **c)
{
    const corral_val_t *ready = condition(o, "status.conditions", "Ready");
    const corral_val_t *prev = isvc_target(o, "prev"), *latest = isvc_target(o, NULL);
    c[0] = name_of(o);
    c[1] = or_blank(str(o, "status.url"));
    c[2] = or_blank(ready ? corral_val_get_str(ready, "status") : NULL);
    c[3] = or_blank(str(prev, "percent"));
    c[4] = or_blank(str(latest, "percent"));
    c[5] = or_blank(str(prev, "revisionName"));
    c[6] = or_blank(str(o, "status.components.predictor.latestReadyRevision"));
    c[7] = corral_table_age(o, now, a);
    c[8] = or_none(str(o, "spec.predictor.minReplicas"));
    c[9] = or_none(str(o, "spec.predictor.maxReplicas"));
}

/* --- generic and RBAC ------------------------------------------------------------------------- */

static const corral_table_col_t name_age_cols[] = {{"NAME", 0}, {"AGE", 0}};

static void name_age_row(const corral_val_t *o, int64_t now, corral_arena_t *a, const char **c)
{
    c[0] = name_of(o);
    c[1] = corral_table_age(o, now, a);
}

static const corral_table_col_t role_cols[] = {{"NAME", 0}, {"CREATED AT", 0}};

static void role_row(const corral_val_t *o, int64_t now, corral_arena_t *a, const char **c)
{
    (void)now;
    (void)a;
    c[0] = name_of(o);
    c[1] = or_none(str(o, "metadata.creationTimestamp"));
}

static const corral_table_col_t binding_cols[] = {
    {"NAME", 0}, {"ROLE", 0}, {"AGE", 0}, {"USERS", 1}, {"GROUPS", 1}, {"SERVICEACCOUNTS", 1}};

static const char *subjects_of(const corral_val_t *o, const char *kind, corral_arena_t *a)
{
    const corral_val_t *ss = corral_val_get(o, "subjects");
    corral_buf_t b;
    corral_buf_init(&b);
    for (size_t i = 0; ss && ss->kind == CORRAL_VAL_SEQ && i < ss->n; i++) {
        const char *k = corral_val_get_str(ss->items[i], "kind");
        const char *n = corral_val_get_str(ss->items[i], "name");
        if (!k || !n || strcmp(k, kind) != 0)
            continue;
        const char *ns = corral_val_get_str(ss->items[i], "namespace");
        if (ns && !strcmp(kind, "ServiceAccount"))
            corral_buf_printf(&b, "%s%s/%s", b.len ? ", " : "", ns, n);
        else
            corral_buf_printf(&b, "%s%s", b.len ? ", " : "", n);
    }
    const char *r = corral_arena_strdup(a, corral_buf_str(&b));
    corral_buf_fini(&b);
    return r;
}

static void binding_row(const corral_val_t *o, int64_t now, corral_arena_t *a, const char **c)
{
    c[0] = name_of(o);
    c[1] = corral_arena_printf(a, "%s/%s", or_none(str(o, "roleRef.kind")),
                               or_none(str(o, "roleRef.name")));
    c[2] = corral_table_age(o, now, a);
    c[3] = subjects_of(o, "User", a);
    c[4] = subjects_of(o, "Group", a);
    c[5] = subjects_of(o, "ServiceAccount", a);
}

/* --- core v1 kinds Corral stores only (kubectl's printers) ------------------------------------ */

static const corral_table_col_t sa_cols[] = {{"NAME", 0}, {"SECRETS", 0}, {"AGE", 0}};

static void sa_row(const corral_val_t *o, int64_t now, corral_arena_t *a, const char **c)
{
    c[0] = name_of(o);
    c[1] = corral_arena_printf(a, "%zu", count(o, "secrets"));
    c[2] = corral_table_age(o, now, a);
}

static const corral_table_col_t svc_cols[] = {{"NAME", 0},        {"TYPE", 0},    {"CLUSTER-IP", 0},
                                              {"EXTERNAL-IP", 0}, {"PORT(S)", 0}, {"AGE", 0},
                                              {"SELECTOR", 1}};

/* "80/TCP,443:30443/TCP" as kubectl's makePortString. */
static const char *svc_ports(const corral_val_t *o, corral_arena_t *a)
{
    const corral_val_t *ports = corral_val_dig(o, "spec.ports");
    corral_buf_t b;
    corral_buf_init(&b);
    for (size_t i = 0; ports && ports->kind == CORRAL_VAL_SEQ && i < ports->n; i++) {
        const corral_val_t *p = ports->items[i];
        int64_t np = int_at(p, "nodePort");
        corral_buf_printf(&b, "%s%lld", i ? "," : "", (long long)int_at(p, "port"));
        if (np)
            corral_buf_printf(&b, ":%lld", (long long)np);
        corral_buf_printf(&b, "/%s", or_none(str(p, "protocol")));
    }
    const char *r = corral_arena_strdup(a, b.len ? corral_buf_str(&b) : NONE);
    corral_buf_fini(&b);
    return r;
}

static const char *map_text(const corral_val_t *m, corral_arena_t *a)
{
    corral_buf_t b;
    corral_buf_init(&b);
    for (size_t i = 0; m && m->kind == CORRAL_VAL_MAP && i < m->n; i++) {
        const corral_val_t *v = m->pairs[i].val;
        corral_buf_printf(&b, "%s%s=%s", i ? "," : "", m->pairs[i].key->s,
                          v->kind == CORRAL_VAL_MAP || v->kind == CORRAL_VAL_SEQ ? "" : v->s);
    }
    const char *r = corral_arena_strdup(a, b.len ? corral_buf_str(&b) : NONE);
    corral_buf_fini(&b);
    return r;
}

static void svc_row(const corral_val_t *o, int64_t now, corral_arena_t *a, const char **c)
{
    const char *type = str(o, "spec.type");
    c[0] = name_of(o);
    c[1] = type ? type : "ClusterIP";
    c[2] = or_none(str(o, "spec.clusterIP"));
    c[3] = type && !strcmp(type, "ExternalName") ? or_none(str(o, "spec.externalName")) : NONE;
    c[4] = svc_ports(o, a);
    c[5] = corral_table_age(o, now, a);
    c[6] = map_text(corral_val_dig(o, "spec.selector"), a);
}

static const corral_table_col_t ep_cols[] = {{"NAME", 0}, {"ENDPOINTS", 0}, {"AGE", 0}};

/* "10.0.0.1:443,10.0.0.2:443" (kubectl shows at most three, then "+ N more...") */
static const char *ep_text(const corral_val_t *o, corral_arena_t *a)
{
    const corral_val_t *subsets = corral_val_get(o, "subsets");
    corral_buf_t b;
    corral_buf_init(&b);
    size_t n = 0;
    for (size_t i = 0; subsets && subsets->kind == CORRAL_VAL_SEQ && i < subsets->n; i++) {
        const corral_val_t *addrs = corral_val_get(subsets->items[i], "addresses");
        const corral_val_t *ports = corral_val_get(subsets->items[i], "ports");
        for (size_t j = 0; addrs && addrs->kind == CORRAL_VAL_SEQ && j < addrs->n; j++) {
            size_t np = ports && ports->kind == CORRAL_VAL_SEQ ? ports->n : 0;
            for (size_t k = 0; k < (np ? np : 1); k++, n++) {
                if (n >= 3)
                    continue;
                corral_buf_printf(&b, "%s%s", n ? "," : "", or_none(str(addrs->items[j], "ip")));
                if (np)
                    corral_buf_printf(&b, ":%lld", (long long)int_at(ports->items[k], "port"));
            }
        }
    }
    if (n > 3)
        corral_buf_printf(&b, " + %zu more...", n - 3);
    const char *r = corral_arena_strdup(a, b.len ? corral_buf_str(&b) : NONE);
    corral_buf_fini(&b);
    return r;
}

static void ep_row(const corral_val_t *o, int64_t now, corral_arena_t *a, const char **c)
{
    c[0] = name_of(o);
    c[1] = ep_text(o, a);
    c[2] = corral_table_age(o, now, a);
}

static const corral_table_col_t quota_cols[] = {
    {"NAME", 0}, {"AGE", 0}, {"REQUEST", 0}, {"LIMIT", 0}};

/* "cpu: 0/10, pods: 0/5" from status.used and status.hard (spec.hard when
 * there is no status yet: nothing counts usage), split into requests and
 * limits as kubectl does. */
static const char *quota_text(const corral_val_t *o, bool limits, corral_arena_t *a)
{
    const corral_val_t *hard = corral_val_dig(o, "status.hard");
    if (!hard || hard->kind != CORRAL_VAL_MAP)
        hard = corral_val_dig(o, "spec.hard");
    const corral_val_t *used = corral_val_dig(o, "status.used");
    corral_buf_t b;
    corral_buf_init(&b);
    for (size_t i = 0; hard && hard->kind == CORRAL_VAL_MAP && i < hard->n; i++) {
        const char *k = hard->pairs[i].key->s;
        if ((strncmp(k, "limits.", 7) == 0) != limits)
            continue;
        const corral_val_t *u = corral_val_get(used, k);
        corral_buf_printf(&b, "%s%s: %s/%s", b.len ? ", " : "", k,
                          u && u->kind != CORRAL_VAL_MAP && u->kind != CORRAL_VAL_SEQ ? u->s : "0",
                          hard->pairs[i].val->kind == CORRAL_VAL_MAP ? "" : hard->pairs[i].val->s);
    }
    const char *r = corral_arena_strdup(a, corral_buf_str(&b));
    corral_buf_fini(&b);
    return r;
}

static void quota_row(const corral_val_t *o, int64_t now, corral_arena_t *a, const char **c)
{
    c[0] = name_of(o);
    c[1] = corral_table_age(o, now, a);
    c[2] = quota_text(o, false, a);
    c[3] = quota_text(o, true, a);
}

/* --- corral.dev ------------------------------------------------------------------------------ */

static const corral_table_col_t usage_cols[] = {
    {"NAME", 0}, {"POD", 0}, {"QUEUE", 0}, {"PHASE", 0}, {"GPUS", 0},        {"WAIT", 0},
    {"RUN", 0},  {"AGE", 0}, {"JOB", 1},   {"NODE", 1},  {"GPU-SECONDS", 1}, {"USED", 1}};

/* Seconds as written ("12.5") as kubectl's human duration. */
static const char *secs(const corral_val_t *o, const char *path, corral_arena_t *a)
{
    const char *s = str(o, path);
    if (!s || !*s)
        return NONE;
    char *end;
    double v = strtod(s, &end);
    if (*end || v < 0)
        return NONE;
    char buf[32];
    corral_human_duration((int64_t)v, buf, sizeof(buf));
    return corral_arena_strdup(a, buf);
}

static void usage_row(const corral_val_t *o, int64_t now, corral_arena_t *a, const char **c)
{
    c[0] = name_of(o);
    c[1] = or_none(str(o, "spec.pod"));
    c[2] = or_none(str(o, "spec.queue"));
    c[3] = or_none(str(o, "spec.phase"));
    c[4] = or_zero(str(o, "spec.gpus"));
    c[5] = secs(o, "spec.waitSeconds", a);
    c[6] = secs(o, "spec.runSeconds", a);
    c[7] = corral_table_age(o, now, a);
    c[8] = or_none(str(o, "spec.job"));
    c[9] = or_none(str(o, "spec.node"));
    c[10] = or_zero(str(o, "spec.gpuSecondsAllocated"));
    c[11] = or_none(str(o, "spec.gpuSecondsUsed"));
}

/* --- serving.kserve.io/v1alpha1 and apps/v1 ------------------------------------------------- */

/* The field named key of every element of the list at path, joined by
 * spaces (what a CRD printer column's `[*]` JSONPath prints); "" when none. */
static const char *each(const corral_val_t *o, const char *path, const char *key, corral_arena_t *a)
{
    const corral_val_t *l = corral_val_dig(o, path);
    corral_buf_t b;
    corral_buf_init(&b);
    for (size_t i = 0; l && l->kind == CORRAL_VAL_SEQ && i < l->n; i++) {
        const char *s = corral_val_get_str(l->items[i], key);
        if (s)
            corral_buf_printf(&b, "%s%s", b.len ? " " : "", s);
    }
    const char *r = corral_arena_strdup(a, b.len ? corral_buf_str(&b) : "");
    corral_buf_fini(&b);
    return r;
}

/* KServe's printer columns of ServingRuntime and ClusterServingRuntime. */
static const corral_table_col_t runtime_cols[] = {
    {"NAME", 0}, {"DISABLED", 0}, {"MODELTYPE", 0}, {"CONTAINERS", 0}, {"AGE", 0}};

static void runtime_row(const corral_val_t *o, int64_t now, corral_arena_t *a, const char **c)
{
    const char *disabled = str(o, "spec.disabled");
    c[0] = name_of(o);
    c[1] = disabled ? disabled : "";
    c[2] = each(o, "spec.supportedModelFormats", "name", a);
    c[3] = each(o, "spec.containers", "name", a);
    c[4] = corral_table_age(o, now, a);
}

/* kubectl's Deployment, DaemonSet and CRD printers. */
static const corral_table_col_t deploy_cols[] = {
    {"NAME", 0}, {"READY", 0}, {"UP-TO-DATE", 0}, {"AVAILABLE", 0}, {"AGE", 0}};

static void deploy_row(const corral_val_t *o, int64_t now, corral_arena_t *a, const char **c)
{
    const corral_val_t *r = corral_val_dig(o, "spec.replicas");
    c[0] = name_of(o);
    c[1] = corral_arena_printf(a, "%lld/%lld", (long long)int_at(o, "status.readyReplicas"),
                               (long long)(r && r->kind == CORRAL_VAL_INT ? r->u.i : 1));
    c[2] = corral_arena_printf(a, "%lld", (long long)int_at(o, "status.updatedReplicas"));
    c[3] = corral_arena_printf(a, "%lld", (long long)int_at(o, "status.availableReplicas"));
    c[4] = corral_table_age(o, now, a);
}

static const corral_table_col_t ds_cols[] = {
    {"NAME", 0},       {"DESIRED", 0},   {"CURRENT", 0},       {"READY", 0},
    {"UP-TO-DATE", 0}, {"AVAILABLE", 0}, {"NODE SELECTOR", 0}, {"AGE", 0}};

static void ds_row(const corral_val_t *o, int64_t now, corral_arena_t *a, const char **c)
{
    static const char *const keys[] = {"status.desiredNumberScheduled",
                                       "status.currentNumberScheduled", "status.numberReady",
                                       "status.updatedNumberScheduled", "status.numberAvailable"};
    c[0] = name_of(o);
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(keys); i++)
        c[1 + i] = corral_arena_printf(a, "%lld", (long long)int_at(o, keys[i]));
    const corral_val_t *ns = corral_val_dig(o, "spec.template.spec.nodeSelector");
    c[6] = ns && ns->kind == CORRAL_VAL_MAP && ns->n ? map_text(ns, a) : "<none>";
    c[7] = corral_table_age(o, now, a);
}

static const corral_table_col_t crd_cols[] = {{"NAME", 0}, {"CREATED AT", 0}};

static void crd_row(const corral_val_t *o, int64_t now, corral_arena_t *a, const char **c)
{
    (void)now;
    (void)a;
    c[0] = name_of(o);
    c[1] = or_blank(str(o, "metadata.creationTimestamp"));
}

/* kubectl's ControllerRevision printer: CONTROLLER is kind.group/name of
 * the controlling owner. */
static const corral_table_col_t crev_cols[] = {
    {"NAME", 0}, {"CONTROLLER", 0}, {"REVISION", 0}, {"AGE", 0}};

static void crev_row(const corral_val_t *o, int64_t now, corral_arena_t *a, const char **c)
{
    const corral_val_t *owners = corral_val_dig(o, "metadata.ownerReferences");
    c[1] = NONE;
    for (size_t i = 0; owners && owners->kind == CORRAL_VAL_SEQ && i < owners->n; i++) {
        const corral_val_t *r = owners->items[i];
        const corral_val_t *ctl = corral_val_get(r, "controller");
        if (!ctl || ctl->kind != CORRAL_VAL_BOOL || !ctl->u.b)
            continue;
        const char *av = corral_val_get_str(r, "apiVersion"), *kind = corral_val_get_str(r, "kind");
        const char *slash = av ? strchr(av, '/') : NULL;
        char buf[512];
        snprintf(buf, sizeof(buf), "%s%s%.*s/%s", kind ? kind : "", slash ? "." : "",
                 slash ? (int)(slash - av) : 0, slash ? av : "",
                 or_none(corral_val_get_str(r, "name")));
        for (char *p = buf; *p && *p != '/'; p++)
            *p = (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
        c[1] = corral_arena_strdup(a, buf);
        break;
    }
    c[0] = name_of(o);
    c[2] = or_zero(str(o, "revision"));
    c[3] = corral_table_age(o, now, a);
}

#define T(k, cols, fn)                                                                             \
    {                                                                                              \
        k, cols, CORRAL_ARRAY_LEN(cols), fn                                                        \
    }

static const kind_table_t tables[] = {
    T(CORRAL_KIND_NAMESPACE, ns_cols, ns_row),
    T(CORRAL_KIND_NODE, node_cols, node_row),
    T(CORRAL_KIND_POD, pod_cols, pod_row),
    T(CORRAL_KIND_EVENT, event_cols, event_row),
    T(CORRAL_KIND_PRIORITYCLASS, pc_cols, pc_row),
    T(CORRAL_KIND_LEASE, lease_cols, lease_row),
    T(CORRAL_KIND_CONFIGMAP, cm_cols, cm_row),
    T(CORRAL_KIND_SECRET, secret_cols, secret_row),
    T(CORRAL_KIND_QUEUE, queue_cols, queue_row),
    T(CORRAL_KIND_PODGROUP, pg_cols, pg_row),
    T(CORRAL_KIND_VCJOB, job_cols, job_row),
    T(CORRAL_KIND_HYPERNODE, hn_cols, hn_row),
    T(CORRAL_KIND_ISVC, isvc_cols, isvc_row),
    T(CORRAL_KIND_ROLE, role_cols, role_row),
    T(CORRAL_KIND_CLUSTERROLE, role_cols, role_row),
    T(CORRAL_KIND_ROLEBINDING, binding_cols, binding_row),
    T(CORRAL_KIND_CLUSTERROLEBINDING, binding_cols, binding_row),
    T(CORRAL_KIND_SERVICEACCOUNT, sa_cols, sa_row),
    T(CORRAL_KIND_SERVICE, svc_cols, svc_row),
    T(CORRAL_KIND_ENDPOINTS, ep_cols, ep_row),
    T(CORRAL_KIND_RESOURCEQUOTA, quota_cols, quota_row),
    T(CORRAL_KIND_LIMITRANGE, role_cols, role_row),
    T(CORRAL_KIND_USAGE, usage_cols, usage_row),
    T(CORRAL_KIND_SERVINGRUNTIME, runtime_cols, runtime_row),
    T(CORRAL_KIND_CLUSTERSERVINGRUNTIME, runtime_cols, runtime_row),
    T(CORRAL_KIND_CONTROLLERREVISION, crev_cols, crev_row),
    T(CORRAL_KIND_DEPLOYMENT, deploy_cols, deploy_row),
    T(CORRAL_KIND_DAEMONSET, ds_cols, ds_row),
    T(CORRAL_KIND_CRD, crd_cols, crd_row),
};

static const kind_table_t generic = T(CORRAL_KIND_COUNT, name_age_cols, name_age_row);

static const kind_table_t *table_of(corral_kind_t k)
{
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(tables); i++) {
        if (tables[i].kind == k)
            return &tables[i];
    }
    return &generic;
}

const corral_table_col_t *corral_table_columns(corral_kind_t k, size_t *n)
{
    const kind_table_t *t = table_of(k);
    *n = t->ncols;
    return t->cols;
}

void corral_table_row(corral_kind_t k, const corral_val_t *obj, int64_t now_us, corral_arena_t *a,
                      const char **cells)
{
    table_of(k)->fn(obj, now_us, a, cells);
}

void corral_table_print(FILE *fp, const char *const *header, const char *const *rows, size_t nrows,
                        size_t ncols)
{
    size_t *w = corral_calloc(ncols ? ncols : 1, sizeof(*w));
    for (size_t j = 0; j < ncols; j++) {
        w[j] = header ? strlen(header[j]) : 0;
        for (size_t i = 0; i < nrows; i++) {
            size_t l = strlen(rows[i * ncols + j]);
            w[j] = l > w[j] ? l : w[j];
        }
    }
    for (size_t i = header ? 0 : 1; i <= nrows; i++) {
        const char *const *row = i == 0 ? header : rows + (i - 1) * ncols;
        for (size_t j = 0; j < ncols; j++) {
            if (j + 1 < ncols)
                fprintf(fp, "%-*s   ", (int)w[j], row[j]);
            else
                fprintf(fp, "%s\n", row[j]);
        }
    }
    corral_free(w);
}
