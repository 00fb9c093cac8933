/*
 * The InferenceService controller's pure half (isvc.h): pod templates and
 * their hash, revision names, the traffic split and the status, as KServe
 * (serverless mode) and Knative write them. No I/O and no clock: the
 * caller passes the time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/isvc.h"
#include "corral/hmap.h"
#include "corral/timefmt.h"

static bool eq(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

static bool set_str(const char *s)
{
    return s && *s;
}

/* --- the pod template --------------------------------------------------------------------- */

static corral_val_t *first_container(const corral_val_t *spec)
{
    const corral_val_t *cs = corral_val_get(spec, "containers");
    if (!cs || cs->kind != CORRAL_VAL_SEQ || cs->n == 0 || cs->items[0]->kind != CORRAL_VAL_MAP)
        return NULL;
    return cs->items[0];
}

int64_t corral__isvc_port(const corral_val_t *spec)
{
    const corral_val_t *ports = corral_val_get(first_container(spec), "ports");
    if (ports && ports->kind == CORRAL_VAL_SEQ && ports->n) {
        const corral_val_t *p = corral_val_get(ports->items[0], "containerPort");
        if (p && p->kind == CORRAL_VAL_INT && p->u.i > 0 && p->u.i < 65536)
            return p->u.i;
    }
    return CORRAL__ISVC_DEFAULT_PORT;
}

const char *corral__isvc_queue(const corral_obj_t *isvc)
{
    const char *q = corral_strmap_get(&isvc->meta.annotations, CORRAL__ISVC_QUEUE_ANN);
    return set_str(q) ? q : CORRAL__ISVC_DEFAULT_QUEUE;
}

static bool has_env(const corral_val_t *env, const char *name)
{
    for (size_t i = 0; env && env->kind == CORRAL_VAL_SEQ && i < env->n; i++) {
        if (eq(corral_val_get_str(env->items[i], "name"), name))
            return true;
    }
    return false;
}

/* PORT, POD_IP and the default TCP readiness probe (Knative's runtime
 * contract) on the first container. */
static void add_runtime_contract(corral_arena_t *a, corral_val_t *spec)
{
    corral_val_t *c = first_container(spec);
    if (!c)
        return;
    int64_t port = corral__isvc_port(spec);
    corral_val_t *env = corral_val_get(c, "env");
    if (!env || env->kind != CORRAL_VAL_SEQ) {
        env = corral_val_new(a, CORRAL_VAL_SEQ);
        corral_val_set(a, c, "env", env);
    }
    if (!has_env(env, "PORT")) {
        corral_val_t *e = corral_val_new(a, CORRAL_VAL_MAP);
        corral_val_set(a, e, "name", corral_val_new_str(a, "PORT"));
        char buf[16];
        snprintf(buf, sizeof(buf), "%lld", (long long)port);
        corral_val_set(a, e, "value", corral_val_new_str(a, buf));
        corral_val_push(a, env, e);
    }
    if (!has_env(env, "POD_IP")) {
        corral_val_t *e = corral_val_new(a, CORRAL_VAL_MAP);
        corral_val_set(a, e, "name", corral_val_new_str(a, "POD_IP"));
        corral_val_t *vf = corral_val_ensure_map(a, e, "valueFrom");
        corral_val_t *fr = corral_val_ensure_map(a, vf, "fieldRef");
        corral_val_set(a, fr, "fieldPath", corral_val_new_str(a, "status.podIP"));
        corral_val_push(a, env, e);
    }
    const corral_val_t *probe = corral_val_get(c, "readinessProbe");
    if (!probe || probe->kind == CORRAL_VAL_NULL) {
        corral_val_t *p = corral_val_new(a, CORRAL_VAL_MAP);
        corral_val_t *tcp = corral_val_ensure_map(a, p, "tcpSocket");
        corral_val_set(a, tcp, "port", corral_val_new_int(a, port));
        corral_val_set(a, p, "periodSeconds", corral_val_new_int(a, 1));
        corral_val_set(a, p, "failureThreshold", corral_val_new_int(a, 3));
        corral_val_set(a, c, "readinessProbe", p);
    }
}

void corral__isvc_template(corral_arena_t *a, const corral_obj_t *isvc, corral_val_t *tmpl,
                           const char *storage_uri)
{
    const char *name = isvc->meta.name;
    corral_val_t *m = corral_val_ensure_map(a, tmpl, "metadata");
    corral_val_t *labels = corral_val_ensure_map(a, m, "labels");
    corral_val_t *ann = corral_val_ensure_map(a, m, "annotations");
    corral_val_set(a, labels, CORRAL__ISVC_LABEL, corral_val_new_str(a, name));
    corral_val_set(a, labels, "component", corral_val_new_str(a, "predictor"));
    corral_val_set(a, labels, "app",
                   corral_val_new_str(a, corral_arena_printf(a, "isvc.%s-predictor", name)));
    corral_val_set(a, ann, CORRAL__ISVC_QUEUE_ANN, corral_val_new_str(a, corral__isvc_queue(isvc)));
    if (set_str(storage_uri))
        corral_val_set(a, ann, CORRAL__ISVC_URI_ANN, corral_val_new_str(a, storage_uri));
    add_runtime_contract(a, corral_val_ensure_map(a, tmpl, "spec"));
}

/* JSON with every map's keys sorted, so the hash does not depend on the
 * order a client wrote the fields in. */
static int cmp_pair(const void *x, const void *y)
{
    const corral_val_pair_t *p = x, *q = y;
    return strcmp(p->key->s, q->key->s);
}

static void canon(const corral_val_t *v, corral_buf_t *b)
{
    if (v && v->kind == CORRAL_VAL_MAP) {
        corral_val_pair_t *ps = corral_calloc(v->n ? v->n : 1, sizeof(*ps));
        memcpy(ps, v->pairs, v->n * sizeof(*ps));
        qsort(ps, v->n, sizeof(*ps), cmp_pair);
        corral_buf_puts(b, "{");
        for (size_t i = 0; i < v->n; i++) {
            if (i)
                corral_buf_puts(b, ",");
            corral_json_quote(b, ps[i].key->s, ps[i].key->len);
            corral_buf_puts(b, ":");
            canon(ps[i].val, b);
        }
        corral_buf_puts(b, "}");
        corral_free(ps);
    } else if (v && v->kind == CORRAL_VAL_SEQ) {
        corral_buf_puts(b, "[");
        for (size_t i = 0; i < v->n; i++) {
            if (i)
                corral_buf_puts(b, ",");
            canon(v->items[i], b);
        }
        corral_buf_puts(b, "]");
    } else if (v) {
        corral_val_to_json(v, b, false);
    } else {
        corral_buf_puts(b, "null");
    }
}

void corral__isvc_hash(const corral_val_t *tmpl, char out[17])
{
    static const uint64_t key[2] = {0x636f7272616c2d69ULL, 0x7376632d72657673ULL};
    corral_buf_t b;
    corral_buf_init(&b);
    canon(tmpl, &b);
    uint64_t h = corral_siphash(key, b.p ? b.p : "", b.len, 2, 4);
    corral_buf_fini(&b);
    snprintf(out, 17, "%016llx", (unsigned long long)h);
}

void corral__isvc_rev_name(char *buf, size_t len, const char *service, int64_t n)
{
    snprintf(buf, len, "%s-predictor-%05lld", service, (long long)n);
}

/* --- traffic -------------------------------------------------------------------------------- */

static const corral__isvc_rev_t *find_rev(const corral__isvc_traffic_in_t *in, const char *name)
{
    for (size_t i = 0; set_str(name) && i < in->nrevs; i++) {
        if (eq(in->revs[i].name, name))
            return &in->revs[i];
    }
    return NULL;
}

static void target(corral__isvc_traffic_t *o, const char *rev, int32_t pct, bool latest,
                   const char *tag)
{
    o->t[o->n++] = (corral__isvc_target_t){rev, pct, latest, tag};
}

void corral__isvc_traffic(const corral__isvc_traffic_in_t *in, corral__isvc_traffic_t *out)
{
    memset(out, 0, sizeof(*out));
    const corral__isvc_rev_t *newest = NULL, *ready = find_rev(in, in->latest_ready);
    for (size_t i = 0; i < in->nrevs; i++) {
        const corral__isvc_rev_t *r = &in->revs[i];
        if (!newest || r->num > newest->num)
            newest = r;
        if (r->ready_now && (!ready || r->num > ready->num))
            ready = r;
    }
    if (!newest)
        return;
    out->latest_created = newest->name;
    const corral__isvc_rev_t *rolled = find_rev(in, in->rolled);
    const corral__isvc_rev_t *prev = find_rev(in, in->prev_rolled);
    out->prev_rolled = prev ? prev->name : NULL;
    if (!ready) {
        /* never ready: the newest takes everything while it starts (the
         * router holds the requests) */
        out->rolled = rolled ? rolled->name : NULL;
        if (rolled) {
            target(out, rolled->name, 100, false, "prev");
            return;
        }
        target(out, newest->name, 100, true, "latest");
        return;
    }
    out->latest_ready = ready->name;
    bool canary = in->canary.set && in->canary.v < 100;
    if (canary && rolled && rolled != ready) {
        out->rolled = rolled->name;
        target(out, ready->name, in->canary.v, true, "latest");
        target(out, rolled->name, 100 - in->canary.v, false, "prev");
        return;
    }
    /* all to the latest ready revision: it is rolled out */
    if (rolled != ready) {
        out->promoted = true;
        out->prev_rolled = rolled ? rolled->name : out->prev_rolled;
    }
    out->rolled = ready->name;
    target(out, ready->name, 100, true, "latest");
}

int32_t corral__isvc_percent(const corral__isvc_traffic_t *t, const char *rev)
{
    int32_t p = -1;
    for (size_t i = 0; i < t->n; i++) {
        if (eq(t->t[i].rev, rev))
            p = (p < 0 ? 0 : p) + t->t[i].percent;
    }
    return p;
}

int32_t corral__isvc_clamp(int32_t desired, int32_t min, int32_t max, bool serving, bool proving)
{
    if (!serving)
        return proving ? 1 : 0;
    int32_t n = desired < min ? min : desired;
    if (max > 0 && n > max)
        n = max;
    if (n < 0)
        n = 0;
    return proving && n < 1 ? 1 : n;
}

/* --- status --------------------------------------------------------------------------------- */

typedef struct cond {
    const char *type, *status, *reason, *message;
    bool info; /* severity: Info */
} cond_t;

static const corral_val_t *old_cond(const corral_val_t *old, const char *type)
{
    const corral_val_t *cs = corral_val_get(old, "conditions");
    for (size_t i = 0; cs && cs->kind == CORRAL_VAL_SEQ && i < cs->n; i++) {
        if (eq(corral_val_get_str(cs->items[i], "type"), type))
            return cs->items[i];
    }
    return NULL;
}

static corral_val_t *cond_val(corral_arena_t *a, const cond_t *c, const corral_val_t *old,
                              int64_t now_us)
{
    corral_val_t *v = corral_val_new(a, CORRAL_VAL_MAP);
    const corral_val_t *o = old_cond(old, c->type);
    const char *ts = corral_val_get_str(o, "lastTransitionTime");
    char buf[40];
    if (!ts || !eq(corral_val_get_str(o, "status"), c->status)) {
        corral_time_format(now_us, false, buf, sizeof(buf));
        ts = buf;
    }
    corral_val_set(a, v, "lastTransitionTime", corral_val_new_str(a, ts));
    if (set_str(c->message))
        corral_val_set(a, v, "message", corral_val_new_str(a, c->message));
    if (set_str(c->reason))
        corral_val_set(a, v, "reason", corral_val_new_str(a, c->reason));
    if (c->info)
        corral_val_set(a, v, "severity", corral_val_new_str(a, "Info"));
    corral_val_set(a, v, "status", corral_val_new_str(a, c->status));
    corral_val_set(a, v, "type", corral_val_new_str(a, c->type));
    return v;
}

static corral_val_t *address(corral_arena_t *a, const char *url)
{
    corral_val_t *m = corral_val_new(a, CORRAL_VAL_MAP);
    corral_val_set(a, m, "url", corral_val_new_str(a, url));
    return m;
}

static corral_val_t *cold_val(corral_arena_t *a, const corral__isvc_cold_t *c)
{
    corral_val_t *m = corral_val_new(a, CORRAL_VAL_MAP);
    const char *s[][2] = {
        {"pod", c->pod}, {"node", c->node}, {"revision", c->revision}, {"fetch", c->fetch}};
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(s); i++) {
        if (set_str(s[i][1]))
            corral_val_set(a, m, s[i][0], corral_val_new_str(a, s[i][1]));
    }
    const double d[] = {c->schedule_s, c->fetch_s, c->load_s, c->total_s};
    static const char *const dk[] = {"scheduleSeconds", "fetchSeconds", "loadSeconds",
                                     "totalSeconds"};
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(d); i++) {
        char buf[32];
        snprintf(buf, sizeof(buf), "%.3f", d[i]);
        corral_val_set(a, m, dk[i], corral_val_new_str(a, buf));
    }
    return m;
}

static void set_s(corral_arena_t *a, corral_val_t *m, const char *k, const char *v)
{
    corral_val_set(a, m, k, corral_val_new_str(a, v));
}

/* KServe's modelStatus: transition, model states, copies, last failure. */
static corral_val_t *model_status(corral_arena_t *a, const corral__isvc_status_in_t *in,
                                  bool latest_ready)
{
    corral_val_t *m = corral_val_new(a, CORRAL_VAL_MAP);
    corral_val_t *states = corral_val_new(a, CORRAL_VAL_MAP);
    bool any = in->tr && in->tr->latest_ready;
    const char *transition;
    if (in->failure) {
        transition = "InvalidSpec";
        set_s(a, states, "targetModelState", "FailedToLoad");
    } else if (in->latest_failed) {
        transition = "BlockedByFailedLoad";
        set_s(a, states, "activeModelState", any ? "Loaded" : "");
        set_s(a, states, "targetModelState", "FailedToLoad");
    } else {
        transition = latest_ready ? "UpToDate" : "InProgress";
        set_s(a, states, "activeModelState", any ? "Loaded" : "Pending");
        set_s(a, states, "targetModelState", latest_ready ? "Loaded" : "Loading");
    }
    set_s(a, m, "transitionStatus", transition);
    corral_val_set(a, m, "states", states);
    corral_val_t *copies = corral_val_ensure_map(a, m, "copies");
    corral_val_set(a, copies, "failedCopies", corral_val_new_int(a, in->failed));
    corral_val_set(a, copies, "totalCopies", corral_val_new_int(a, in->ready));
    if (in->failure || in->latest_failed) {
        corral_val_t *f = corral_val_ensure_map(a, m, "lastFailureInfo");
        set_s(a, f, "reason",
              in->failure ? (in->failure_reason ? in->failure_reason : "InvalidPredictorSpec")
                          : "ModelLoadFailed");
        set_s(a, f, "message", in->failure ? in->failure : (in->waiting ? in->waiting : ""));
    }
    return m;
}

corral_val_t *corral__isvc_status(corral_arena_t *a, const corral__isvc_status_in_t *in)
{
    const corral__isvc_traffic_t *tr = in->tr;
    const char *latest = tr ? tr->latest_created : NULL;
    bool latest_ready = latest && eq(latest, tr->latest_ready);
    /* every revision that takes traffic has been ready */
    bool routes = tr && tr->n > 0;
    for (size_t i = 0; routes && i < tr->n; i++) {
        const corral__isvc_target_t *t = &tr->t[i];
        routes = t->percent == 0 || eq(t->rev, tr->latest_ready) || eq(t->rev, tr->rolled);
    }
    const char *cfg = corral_arena_printf(a, "%s-predictor", in->name);
    cond_t deploy = {"LatestDeploymentReady", "True", NULL, NULL, true};
    if (in->failure) {
        deploy =
            (cond_t){"LatestDeploymentReady", "False", "PredictorSpecInvalid", in->failure, true};
    } else if (!latest) {
        deploy = (cond_t){"LatestDeploymentReady", "Unknown", "RevisionMissing",
                          corral_arena_printf(a,
                                              "Configuration \"%s\" is waiting for a Revision to "
                                              "become ready.",
                                              cfg),
                          true};
    } else if (!latest_ready) {
        const char *why = in->waiting ? in->waiting : "waiting for a ready replica";
        deploy = (cond_t){"LatestDeploymentReady", in->latest_failed ? "False" : "Unknown",
                          in->latest_failed ? "RevisionFailed" : "RevisionMissing",
                          corral_arena_printf(a, "Revision \"%s\" %s: %s", latest,
                                              in->latest_failed ? "failed" : "is not ready", why),
                          true};
    }
    cond_t route = {"RoutesReady", "True", NULL, NULL, true};
    if (!routes)
        route = (cond_t){"RoutesReady", "Unknown", "RevisionMissing",
                         corral_arena_printf(a,
                                             "Configuration \"%s\" is waiting for a Revision to "
                                             "become ready.",
                                             cfg),
                         true};
    /* PredictorReady: the Knative service's Ready (routes and the latest
     * deployment); Ready: the predictor's and the ingress' */
    cond_t pred = {"PredictorReady", "True", NULL, NULL, false};
    if (!eq(deploy.status, "True"))
        pred = (cond_t){"PredictorReady", deploy.status, deploy.reason, deploy.message, false};
    else if (!eq(route.status, "True"))
        pred = (cond_t){"PredictorReady", route.status, route.reason, route.message, false};
    cond_t ingress = {"IngressReady", "True", NULL, NULL, false};
    if (!eq(pred.status, "True"))
        ingress = (cond_t){"IngressReady", "False", "Predictor ingress not created", NULL, false};
    cond_t ready = {"Ready", pred.status, pred.reason, pred.message, false};
    cond_t cfgc = {"PredictorConfigurationReady", deploy.status, deploy.reason, deploy.message,
                   true};
    cond_t routec = {"PredictorRouteReady", route.status, route.reason, route.message, true};
    /* in the order Knative's condition sets sort them: by type */
    const cond_t *conds[] = {&ingress, &deploy, &cfgc, &pred, &routec, &ready, &route};

    corral_val_t *st = corral_val_new(a, CORRAL_VAL_MAP);
    const char *url =
        corral_arena_printf(a, "http://%s.%s.%s", in->name, in->ns, in->ingress_domain);
    const char *addr = corral_arena_printf(a, "%s/serving/%s/%s", in->router_url, in->ns, in->name);
    corral_val_set(a, st, "url", corral_val_new_str(a, url));
    corral_val_set(a, st, "address", address(a, addr));
    corral_val_t *cs = corral_val_new(a, CORRAL_VAL_SEQ);
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(conds); i++)
        corral_val_push(a, cs, cond_val(a, conds[i], in->old, in->now_us));
    corral_val_set(a, st, "conditions", cs);
    corral_val_t *comps = corral_val_ensure_map(a, st, "components");
    corral_val_t *p = corral_val_ensure_map(a, comps, "predictor");
    const char *names[][2] = {{"latestCreatedRevision", latest},
                              {"latestReadyRevision", tr ? tr->latest_ready : NULL},
                              {"latestRolledoutRevision", tr ? tr->rolled : NULL},
                              {"previousRolledoutRevision", tr ? tr->prev_rolled : NULL}};
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(names); i++) {
        if (set_str(names[i][1]))
            corral_val_set(a, p, names[i][0], corral_val_new_str(a, names[i][1]));
    }
    corral_val_set(
        a, p, "url",
        corral_val_new_str(a, corral_arena_printf(a, "http://%s-predictor.%s.%s", in->name, in->ns,
                                                  in->ingress_domain)));
    corral_val_set(a, p, "address", address(a, addr));
    corral_val_t *traffic = corral_val_new(a, CORRAL_VAL_SEQ);
    for (size_t i = 0; tr && i < tr->n; i++) {
        corral_val_t *t = corral_val_new(a, CORRAL_VAL_MAP);
        corral_val_set(a, t, "latestRevision", corral_val_new_bool(a, tr->t[i].latest));
        corral_val_set(a, t, "percent", corral_val_new_int(a, tr->t[i].percent));
        corral_val_set(a, t, "revisionName", corral_val_new_str(a, tr->t[i].rev));
        corral_val_set(a, t, "tag", corral_val_new_str(a, tr->t[i].tag));
        corral_val_push(a, traffic, t);
    }
    corral_val_set(a, p, "traffic", traffic);
    const corral_val_t *oldcold = corral_val_dig(in->old, "components.predictor");
    oldcold = corral_val_get(oldcold, CORRAL__ISVC_COLD_START);
    if (in->cold)
        corral_val_set(a, p, CORRAL__ISVC_COLD_START, cold_val(a, in->cold));
    else if (oldcold)
        corral_val_set(a, p, CORRAL__ISVC_COLD_START, corral_val_copy(a, oldcold));
    corral_val_set(a, st, "modelStatus", model_status(a, in, latest_ready && !in->failure));
    corral_val_set(a, st, "observedGeneration", corral_val_new_int(a, in->generation));
    return st;
}
