/*
 * create, update and patch. Each handler reads what it needs, builds the
 * object to store (server-set metadata, defaults, validation), and submits a
 * compare-and-swap operation against the revision it read. When another
 * write got there first the handler simply runs again from the top, as
 * kube-apiserver's GuaranteedUpdate does, unless the client gave a
 * resourceVersion: then the answer is 409 Conflict.
 *
 * Rules, as upstream: metadata.generation starts at 1 and grows when
 * anything outside metadata and status changes (and when deletion starts);
 * uid, creationTimestamp and the deletion fields are the server's; the main
 * resource ignores status for kinds with a status subresource, and the
 * status subresource ignores everything else; an object being deleted takes
 * no new finalizers and goes away when its last finalizer is removed.
 */
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include "apiserver/apiserver_int.h"

/* Compare-and-swap retries of one request. Each round at least one of the
 * competing writers succeeds, so this only bounds pathological contention. */
#define MAX_ATTEMPTS 1000

static void random_bytes(unsigned char *p, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t k = getrandom(p + got, n - got, 0);
        if (k <= 0)
            break;
        got += (size_t)k;
    }
}

static const char *new_uid(corral_arena_t *a)
{
    unsigned char u[16];
    random_bytes(u, sizeof(u));
    u[6] = (unsigned char)((u[6] & 0x0f) | 0x40); /* version 4 */
    u[8] = (unsigned char)((u[8] & 0x3f) | 0x80); /* RFC 4122 variant */
    return corral_arena_printf(
        a, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2],
        u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
}

/* generateName plus five characters of kube's alphabet (no vowels, no
 * look-alikes), the prefix cut to leave a 63-character name. */
static const char *generate_name(corral_arena_t *a, const char *prefix)
{
    static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
    unsigned char rnd[5];
    random_bytes(rnd, sizeof(rnd));
    char suffix[6];
    for (int i = 0; i < 5; i++)
        suffix[i] = alphabet[rnd[i] % (sizeof(alphabet) - 1)];
    suffix[5] = '\0';
    size_t n = strlen(prefix);
    if (n > 58)
        n = 58;
    return corral_arena_printf(a, "%.*s%s", (int)n, prefix, suffix);
}

/* Guaranteed, Burstable or BestEffort, from the defaulted containers. */
static const char *qos_class(const corral_pod_spec_t *s)
{
    bool any = false, guaranteed = true;
    static const char *const names[] = {"cpu", "memory"};
    for (size_t i = 0; i < s->ncontainers + s->ninit_containers; i++) {
        const corral_container_t *c =
            i < s->ncontainers ? &s->containers[i] : &s->init_containers[i - s->ncontainers];
        for (size_t k = 0; k < 2; k++) {
            const corral_qty_t *req = corral_reslist_get(&c->requests, names[k]);
            const corral_qty_t *lim = corral_reslist_get(&c->limits, names[k]);
            any = any || req || lim;
            if (!lim || !req || corral_qty_cmp(req, lim) != 0)
                guaranteed = false;
        }
    }
    return !any ? "BestEffort" : guaranteed ? "Guaranteed" : "Burstable";
}

/* Server-set fields of a new object. */
static void prepare_new(corral_arena_t *a, const corral__res_t *res, corral_val_t *obj)
{
    corral_val_t *meta = corral__meta(a, obj);
    char now[40];
    corral__now_rfc3339(now, sizeof(now));
    const char *name = corral_val_get_str(meta, "name");
    const char *gen = corral_val_get_str(meta, "generateName");
    if ((!name || !*name) && gen && *gen)
        corral_val_set(a, meta, "name", corral_val_new_str(a, generate_name(a, gen)));
    corral_val_set(a, meta, "uid", corral_val_new_str(a, new_uid(a)));
    corral_val_set(a, meta, "creationTimestamp", corral_val_new_str(a, now));
    corral_val_set(a, meta, "generation", corral_val_new_int(a, 1));
    corral_val_del(meta, "resourceVersion");
    corral_val_del(meta, "deletionTimestamp");
    corral_val_del(meta, "deletionGracePeriodSeconds");
    corral_val_del(meta, "selfLink");
    if (res->info->kind == CORRAL_KIND_POD) {
        corral_val_t *st = corral_val_new(a, CORRAL_VAL_MAP);
        corral_val_set(a, st, "phase", corral_val_new_str(a, "Pending"));
        corral_val_set(a, obj, "status", st);
    } else if (res->info->kind == CORRAL_KIND_NAMESPACE) {
        corral_val_t *st = corral_val_new(a, CORRAL_VAL_MAP);
        corral_val_set(a, st, "phase", corral_val_new_str(a, "Active"));
        corral_val_set(a, obj, "status", st);
    } else if (!res->status_on_create) {
        corral_val_del(obj, "status"); /* create cannot set status */
    }
}

static void str_cond(corral_arena_t *a, corral_val_t *conds, const char *type, const char *status,
                     const char *reason, const char *msg, const char *now)
{
    corral_val_t *c = corral_val_new(a, CORRAL_VAL_MAP);
    corral_val_set(a, c, "type", corral_val_new_str(a, type));
    corral_val_set(a, c, "status", corral_val_new_str(a, status));
    corral_val_set(a, c, "lastTransitionTime", corral_val_new_str(a, now));
    corral_val_set(a, c, "reason", corral_val_new_str(a, reason));
    corral_val_set(a, c, "message", corral_val_new_str(a, msg));
    corral_val_push(a, conds, c);
}

/* A CustomResourceDefinition's status as kube's CRD controllers write it
 * once its names are accepted: acceptedNames, storedVersions, and the
 * NamesAccepted and Established conditions (`kubectl wait
 * --for=condition=Established` works). Established is True only when
 * Corral serves the kind the CRD names; the others are stored, not served. */
static void crd_status(corral_arena_t *a, corral_val_t *obj, const corral_obj_t *o)
{
    const corral_crd_t *crd = o->u.crd;
    corral_val_t *st = corral_val_ensure_map(a, obj, "status");
    corral_val_t *names = corral_val_dig(obj, "spec.names");
    if (names)
        corral_val_set(a, st, "acceptedNames", corral_val_copy(a, names));
    corral_val_t *stored = corral_val_get(st, "storedVersions");
    if (!stored || stored->kind != CORRAL_VAL_SEQ) {
        stored = corral_val_new(a, CORRAL_VAL_SEQ);
        corral_val_set(a, st, "storedVersions", stored);
    }
    bool have = false;
    for (size_t i = 0; crd->storage_version && i < stored->n; i++)
        have = have || (stored->items[i]->kind == CORRAL_VAL_STR &&
                        strcmp(stored->items[i]->s, crd->storage_version) == 0);
    if (crd->storage_version && !have)
        corral_val_push(a, stored, corral_val_new_str(a, crd->storage_version));
    char now[40];
    corral__now_rfc3339(now, sizeof(now));
    corral_val_t *old = corral_val_get(st, "conditions");
    bool same = false;
    for (size_t i = 0; old && old->kind == CORRAL_VAL_SEQ && i < old->n; i++) {
        const char *type = corral_val_get_str(old->items[i], "type");
        const char *status = corral_val_get_str(old->items[i], "status");
        if (type && status && !strcmp(type, "Established"))
            same = !strcmp(status, crd->served_by_corral ? "True" : "False");
    }
    if (same)
        return; /* keep the transition times */
    corral_val_t *conds = corral_val_new(a, CORRAL_VAL_SEQ);
    str_cond(a, conds, "NamesAccepted", "True", "NoConflicts", "no conflicts found", now);
    if (crd->served_by_corral)
        str_cond(a, conds, "Established", "True", "InitialNamesAccepted",
                 "the initial names have been accepted", now);
    else
        str_cond(a, conds, "Established", "False", "NotServed",
                 "objects of this CRD are not served by corral apiserver", now);
    corral_val_set(a, st, "conditions", conds);
}

static void after_validate(corral_arena_t *a, corral_val_t *obj, const corral_obj_t *o)
{
    if (o->info->kind == CORRAL_KIND_CRD) {
        crd_status(a, obj, o);
    } else if (o->info->kind == CORRAL_KIND_POD) {
        corral_val_t *st = corral_val_ensure_map(a, obj, "status");
        corral_val_set(a, st, "qosClass", corral_val_new_str(a, qos_class(&o->u.pod->spec)));
    }
}

void corral__retry(corral__req_t *r)
{
    r->attempts++;
    corral_buf_reset(&r->headers);
    r->hctx = NULL;
    r->handler(r);
}

/* --- write options ---------------------------------------------------------------------------- */

/* What kube names a manager that gives no fieldManager: the User-Agent up
 * to its first '/' ("kubectl", "OpenAPI-Generator", "python-requests"). */
static const char *manager_from_agent(corral__req_t *r)
{
    size_t len = 0;
    const char *ua = corral_http_header(r->http, "user-agent", &len);
    if (!ua || !len)
        return "unknown";
    const char *slash = memchr(ua, '/', len);
    size_t n = slash ? (size_t)(slash - ua) : len;
    if (n > 128)
        n = 128;
    return corral_arena_strndup(r->a, ua, n);
}

static void invalid_opt(corral__req_t *r, const char *what, const char *msg)
{
    corral__status(r, 422, "Invalid", what, "", "%s.meta.k8s.io \"\" is invalid: %s", what, msg);
}

bool corral__wopts_parse(corral__req_t *r, const char *what, bool apply)
{
    corral__wopts_t *o = corral_arena_alloc(r->a, sizeof(*o));
    memset(o, 0, sizeof(*o));
    r->wo = o;
    const char *dry = corral__param(r, "dryRun");
    if (dry && *dry && strcmp(dry, "All") != 0) {
        invalid_opt(r, what,
                    corral_arena_printf(r->a,
                                        "dryRun: Unsupported value: \"%s\": supported values: "
                                        "\"All\"",
                                        dry));
        return false;
    }
    o->dry_run = dry && *dry;
    const char *fv = corral__param(r, "fieldValidation");
    if (fv && *fv) {
        if (!strcmp(fv, "Strict"))
            o->validation = CORRAL__FV_STRICT;
        else if (!strcmp(fv, "Ignore"))
            o->validation = CORRAL__FV_IGNORE;
        else if (strcmp(fv, "Warn") != 0) {
            invalid_opt(r, what,
                        corral_arena_printf(r->a,
                                            "fieldValidation: Unsupported value: \"%s\": "
                                            "supported values: \"Ignore\", \"Strict\", "
                                            "\"Warn\"",
                                            fv));
            return false;
        }
    }
    const char *fm = corral__param(r, "fieldManager");
    o->manager_set = fm && *fm;
    if (fm && strlen(fm) > 128) {
        invalid_opt(r, what, "fieldManager: Too long: may not be more than 128 bytes");
        return false;
    }
    if (apply && !o->manager_set) {
        invalid_opt(r, what, "fieldManager: Required value: is required for apply patch");
        return false;
    }
    o->manager = o->manager_set ? fm : manager_from_agent(r);
    if (!corral__param_bool(r, "force", &o->force))
        return false;
    if (o->force && !apply) {
        invalid_opt(r, what, "force: Forbidden: may not be specified for non-apply patch");
        return false;
    }
    return true;
}

int corral__scope(const corral__req_t *r)
{
    if (r->sub && !strcmp(r->sub, "status"))
        return CORRAL__SCOPE_STATUS;
    return r->res->has_status ? CORRAL__SCOPE_SPEC : CORRAL__SCOPE_ALL;
}

void corral__reply_tree(corral__req_t *r, int code, const corral_val_t *obj)
{
    corral_buf_t b;
    corral_buf_init(&b);
    corral_val_to_json(obj, &b, false);
    corral__reply_obj(r, code, b.p ? b.p : "{}", b.len);
    corral_buf_fini(&b);
}

/* Does the client's managedFields ask for them to go ([{}], as upstream)? */
static bool clears_managed(const corral_val_t *mf)
{
    if (!mf || mf->kind != CORRAL_VAL_SEQ || mf->n == 0)
        return false;
    for (size_t i = 0; i < mf->n; i++) {
        if (mf->items[i]->kind != CORRAL_VAL_MAP || mf->items[i]->n != 0)
            return false;
    }
    return true;
}

/* Record a non-apply write from live (NULL: create) to next in next's
 * metadata.managedFields. The client's entries count when it sent some
 * (kubectl's client-side-apply upgrade does); none or [] keep the stored
 * ones; [{}] removes them all. */
static void track_update(corral__req_t *r, const corral_val_t *live, corral_val_t *next)
{
    if (r->res->view)
        return; /* fields named in the served shape: not tracked (docs/apiserver.md) */
    corral_val_t *nm = corral__meta(r->a, next);
    corral_val_t *sent = corral_val_get(nm, "managedFields");
    if (clears_managed(sent)) {
        corral_val_del(nm, "managedFields");
        return;
    }
    const corral_val_t *base = sent && sent->kind == CORRAL_VAL_SEQ && sent->n ? sent : NULL;
    if (!base && live)
        base = corral_val_get(corral_val_get(live, "metadata"), "managedFields");
    char now[40];
    corral__now_rfc3339(now, sizeof(now));
    corral__mf_opts_t o = {
        .manager = r->wo ? r->wo->manager : manager_from_agent(r),
        .api_version = r->res->info->api_version,
        .subresource = r->sub && !strcmp(r->sub, "status") ? "status" : NULL,
        .now = now,
        .scope = corral__scope(r),
    };
    corral_val_t *mf = corral__managed_update(r->a, base, live, next, &o);
    if (mf->n)
        corral_val_set(r->a, nm, "managedFields", mf);
    else
        corral_val_del(nm, "managedFields");
}

/* --- create ----------------------------------------------------------------------------- */

static void create_done(corral__req_t *r, corral_store_op_t *op)
{
    /* Take the event first: replying resets the arena op lives in. */
    corral_store_event_t *ev = op->ev;
    op->ev = NULL;
    if (op->rc == CORRAL_EEXIST && r->hctx && r->attempts < MAX_ATTEMPTS) {
        corral__retry(r); /* a generated name collided */
    } else if (op->rc == CORRAL_EEXIST) {
        r->name = op->name;
        corral__status(r, 409, "AlreadyExists", r->res->info->plural, op->name,
                       "%s \"%s\" already exists", r->res->name, op->name);
    } else if (op->rc) {
        corral__internal(r, op->rc);
    } else if (r->res->info->kind == CORRAL_KIND_NAMESPACE) {
        corral__create_default_sa(r, op->name, ev); /* replies; takes ev */
        return;
    } else {
        corral__reply_obj(r, 201, ev->json, ev->json_len);
    }
    corral_store_event_unref(ev);
}

/* Kube's Priority admission: spec.priority from the PriorityClass named by
 * spec.priorityClassName (or the global default). Replies 403 and returns
 * false when the class does not exist or the pod sets a different priority. */
static bool admit_priority(corral__req_t *r, corral_val_t *obj)
{
    corral_val_t *spec = corral_val_get(obj, "spec");
    if (!spec || spec->kind != CORRAL_VAL_MAP)
        return true;
    const char *pcn = corral_val_get_str(spec, "priorityClassName");
    if (!pcn || !*pcn) {
        pcn = corral__strict_default_priority(r);
        if (pcn)
            corral_val_set(r->a, spec, "priorityClassName", corral_val_new_str(r->a, pcn));
    }
    int64_t value = 0;
    const char *policy = NULL;
    if (pcn && *pcn) {
        corral_store_row_t row;
        if (corral_store_get(corral__rd(r), "priorityclasses.scheduling.k8s.io", "", pcn, r->a,
                             &row) != 0) {
            corral__status(r, 403, "Forbidden", r->res->info->plural, corral__meta_str(obj, "name"),
                           "%s \"%s\" is forbidden: no PriorityClass with name %s was found",
                           r->res->key,
                           corral__meta_str(obj, "name") ? corral__meta_str(obj, "name") : "", pcn);
            return false;
        }
        corral_val_t *pc = corral__json_tree(r->a, row.json, row.json_len);
        corral_val_t *v = corral_val_get(pc, "value");
        value = v && v->kind == CORRAL_VAL_INT ? v->u.i : 0;
        policy = corral_val_get_str(pc, "preemptionPolicy");
    }
    corral_val_t *prio = corral_val_get(spec, "priority");
    if (prio && prio->kind == CORRAL_VAL_INT && prio->u.i != value) {
        corral__status(r, 403, "Forbidden", r->res->info->plural, corral__meta_str(obj, "name"),
                       "%s \"%s\" is forbidden: the integer value of priority (%lld) must not be "
                       "provided in pod spec; priority admission controller computed %lld from "
                       "the given PriorityClass name",
                       r->res->key,
                       corral__meta_str(obj, "name") ? corral__meta_str(obj, "name") : "",
                       (long long)prio->u.i, (long long)value);
        return false;
    }
    corral_val_set(r->a, spec, "priority", corral_val_new_int(r->a, value));
    if (policy && !corral_val_get(spec, "preemptionPolicy"))
        corral_val_set(r->a, spec, "preemptionPolicy", corral_val_new_str(r->a, policy));
    return true;
}

static bool namespace_exists(corral__req_t *r)
{
    if (!r->res->info->namespaced)
        return true;
    corral_store_row_t row;
    if (corral_store_get(corral__rd(r), "namespaces", "", r->ns, r->a, &row) == 0)
        return true;
    const corral__res_t *saved = r->res;
    r->res = corral__res_of_kind(CORRAL_KIND_NAMESPACE);
    corral__status(r, 404, "NotFound", "namespaces", r->ns, "namespaces \"%s\" not found", r->ns);
    r->res = saved;
    return false;
}

void corral__create_with(corral__req_t *r, corral_val_t *obj, unsigned flags)
{
    if (!namespace_exists(r))
        return;
    const char *name = corral__meta_str(obj, "name");
    r->hctx = (!name || !*name) ? (void *)"generated" : NULL;
    prepare_new(r->a, r->res, obj);
    if (r->res->info->kind == CORRAL_KIND_POD && !admit_priority(r, obj))
        return;
    corral_obj_t *o = NULL;
    if (!corral__validate(r, obj, &o) || !corral__admit_rbac(r, o, NULL) ||
        !corral__admit_node(r, obj, NULL))
        return;
    after_validate(r->a, obj, o);
    if (!(flags & CORRAL__UPD_MANAGED))
        track_update(r, NULL, obj);
    if (r->wo && r->wo->dry_run) {
        corral__reply_tree(r, 201, obj); /* everything but the write */
        return;
    }
    corral_buf_t attrs;
    corral_buf_init(&attrs);
    corral__attrs(o, &attrs);
    corral_store_op_t *op = corral_arena_alloc(r->a, sizeof(*op));
    op->kind = CORRAL_STORE_CREATE;
    op->resource = r->res->key;
    op->ns = corral__ns_key(r);
    op->name = o->meta.name;
    op->obj = obj;
    op->arena = r->a;
    op->attrs = corral_arena_strndup(r->a, attrs.p ? attrs.p : "", attrs.len);
    op->attrs_len = attrs.len;
    corral_buf_fini(&attrs);
    r->cont = create_done;
    corral__submit(r, op);
}

void corral__h_create(corral__req_t *r)
{
    if (!corral__wopts_parse(r, "CreateOptions", false))
        return;
    corral_val_t *obj = corral__body_tree(r);
    if (!obj || !corral__check_identity(r, obj, false))
        return;
    if (!corral__view_in(r, obj, true))
        return;
    const char *rv = corral__meta_str(obj, "resourceVersion");
    if (rv && *rv) {
        /* kube-apiserver answers 500 (docs/apiserver.md); 400 says what it is. */
        int code = corral__strict(r) ? 500 : 400;
        corral__status(r, code, code == 500 ? "InternalError" : "BadRequest", NULL, NULL,
                       "resourceVersion should not be set on objects to be created");
        return;
    }
    corral__create_with(r, obj, 0);
}

corral_store_op_t *corral__create_op(corral_arena_t *a, const corral__res_t *res, const char *json)
{
    corral_val_t *obj = corral__json_tree(a, json, strlen(json));
    if (!obj)
        return NULL;
    prepare_new(a, res, obj);
    corral_obj_default(a, res->info, obj);
    corral_diag_t d;
    corral_diag_init(&d);
    corral_obj_t *o = NULL;
    int rc = corral_obj_decode(a, obj, NULL, &d, &o);
    corral_diag_fini(&d);
    if (rc != 0)
        return NULL;
    corral_buf_t attrs;
    corral_buf_init(&attrs);
    corral__attrs(o, &attrs);
    corral_store_op_t *op = corral_arena_alloc(a, sizeof(*op));
    op->kind = CORRAL_STORE_CREATE;
    op->resource = res->key;
    op->ns = o->meta.namespace ? o->meta.namespace : "";
    op->name = o->meta.name;
    op->obj = obj;
    op->arena = a;
    op->attrs = corral_arena_strndup(a, attrs.p ? attrs.p : "", attrs.len);
    op->attrs_len = attrs.len;
    corral_buf_fini(&attrs);
    return op;
}

static const corral__res_t *res_of_json(corral_arena_t *a, const char *json)
{
    corral_val_t *obj = corral__json_tree(a, json, strlen(json));
    const corral_kind_info_t *k = obj ? corral_kind_find(corral_val_get_str(obj, "apiVersion"),
                                                         corral_val_get_str(obj, "kind"))
                                      : NULL;
    return k ? corral__res_of_kind(k->kind) : NULL;
}

int corral__create_sync(corral_apiserver_t *s, corral_store_reader_t *rd, const char *json,
                        char *err, size_t errlen)
{
    (void)rd;
    corral_arena_t a;
    corral_arena_init(&a);
    const corral__res_t *res = res_of_json(&a, json);
    corral_store_op_t *op = res ? corral__create_op(&a, res, json) : NULL;
    int rc = op ? corral_store_write_sync(s->store, op) : CORRAL_EINVAL;
    if (op)
        corral_store_op_release(op);
    if (rc == CORRAL_EEXIST)
        rc = 0;
    if (rc)
        snprintf(err, errlen, "cannot create a built-in object: %s", corral_strerror(rc));
    corral_arena_fini(&a);
    return rc;
}

int corral__put_sync(corral_apiserver_t *s, corral_store_reader_t *rd, const char *json, char *err,
                     size_t errlen)
{
    corral_arena_t a;
    corral_arena_init(&a);
    const corral__res_t *res = res_of_json(&a, json);
    corral_store_op_t *op = res ? corral__create_op(&a, res, json) : NULL;
    corral_store_row_t row;
    int rc = op ? corral_store_get(rd, op->resource, op->ns, op->name, &a, &row) : CORRAL_EINVAL;
    if (rc == 0) {
        /* Replace what differs outside metadata; keep the stored metadata. */
        corral_val_t *cur = corral__json_tree(&a, row.json, row.json_len);
        corral_val_t *next = cur ? corral_val_copy(&a, op->obj) : NULL;
        if (next) {
            corral_val_set(&a, next, "metadata", corral_val_get(cur, "metadata"));
            corral_val_set(
                &a, corral__meta(&a, next), "resourceVersion",
                corral_val_new_str(&a, corral_arena_printf(&a, "%lld", (long long)row.rev)));
        }
        if (next && !corral_val_equal(next, cur)) {
            op->kind = CORRAL_STORE_UPDATE;
            op->obj = next;
            op->expect_rev = row.rev;
            op->prev_json = row.json;
            op->prev_len = row.json_len;
            op->prev_attrs = row.attrs;
            op->prev_attrs_len = row.attrs_len;
            rc = corral_store_write_sync(s->store, op);
            corral_store_op_release(op);
        }
    } else if (rc == CORRAL_ENOENT) {
        rc = corral_store_write_sync(s->store, op);
        corral_store_op_release(op);
    }
    if (rc)
        snprintf(err, errlen, "cannot write a built-in object: %s", corral_strerror(rc));
    corral_arena_fini(&a);
    return rc;
}

/* --- update ------------------------------------------------------------------------------ */

bool corral__read_current(corral__req_t *r, corral__cur_t *cur)
{
    int rc =
        corral_store_get(corral__rd(r), r->res->key, corral__ns_key(r), r->name, r->a, &cur->row);
    if (rc == CORRAL_ENOENT) {
        corral__not_found(r);
        return false;
    }
    cur->tree = rc ? NULL : corral__json_tree(r->a, cur->row.json, cur->row.json_len);
    if (!cur->tree) {
        corral__internal(r, rc ? rc : CORRAL_EPARSE);
        return false;
    }
    return true;
}

typedef struct upd_ctx {
    const char *user_rv;
    int code;
    unsigned flags;
} upd_ctx_t;

static void reply_success(corral__req_t *r, int code)
{
    corral_buf_t b;
    corral_buf_init(&b);
    corral__status_json(&b, code, "Success", NULL, NULL);
    corral__reply_buf(r, code, &b);
}

static void update_done(corral__req_t *r, corral_store_op_t *op)
{
    upd_ctx_t *u = r->hctx;
    corral_store_event_t *ev = op->ev;
    op->ev = NULL;
    int rc = op->rc;
    if (rc == CORRAL_ECONFLICT && !(u->user_rv && *u->user_rv) && r->attempts < MAX_ATTEMPTS)
        corral__retry(r); /* someone else wrote first: read again and redo */
    else if (rc == CORRAL_ECONFLICT)
        corral__conflict(r, NULL);
    else if (rc == CORRAL_ENOENT)
        corral__not_found(r);
    else if (rc)
        corral__internal(r, rc);
    else if (u->flags & CORRAL__UPD_BINDING)
        reply_success(r, u->code);
    else if (u->flags & CORRAL__UPD_SCALE)
        corral__reply_scale(r, u->code, ev->json, ev->json_len);
    else
        corral__reply_obj(r, u->code, ev->json, ev->json_len);
    corral_store_event_unref(ev);
}

/* Does anything outside metadata and status differ? */
static bool spec_changed(const corral_val_t *a, const corral_val_t *b)
{
    for (size_t i = 0; i < a->n; i++) {
        const char *k = a->pairs[i].key->s;
        if (!strcmp(k, "metadata") || !strcmp(k, "status"))
            continue;
        if (!corral_val_equal(a->pairs[i].val, corral_val_get(b, k)))
            return true;
    }
    for (size_t i = 0; i < b->n; i++) {
        const char *k = b->pairs[i].key->s;
        if (strcmp(k, "metadata") != 0 && strcmp(k, "status") != 0 && !corral_val_get(a, k))
            return true;
    }
    return false;
}

static bool has_str(const corral_val_t *seq, const char *s)
{
    for (size_t i = 0; seq && seq->kind == CORRAL_VAL_SEQ && i < seq->n; i++) {
        if (seq->items[i]->kind == CORRAL_VAL_STR && strcmp(seq->items[i]->s, s) == 0)
            return true;
    }
    return false;
}

/* Carry the server's metadata from cur to next; false (after a 422) when
 * next adds finalizers to an object being deleted. */
static bool carry_meta(corral__req_t *r, const corral_val_t *cur, corral_val_t *next)
{
    corral_val_t *cm = corral_val_get(cur, "metadata");
    corral_val_t *nm = corral__meta(r->a, next);
    static const char *const keep[] = {"uid", "creationTimestamp", "deletionTimestamp",
                                       "deletionGracePeriodSeconds", "generation"};
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(keep); i++) {
        corral_val_t *v = corral_val_get(cm, keep[i]);
        if (v)
            corral_val_set(r->a, nm, keep[i], v);
        else
            corral_val_del(nm, keep[i]);
    }
    if (!corral_val_get(cm, "deletionTimestamp"))
        return true;
    corral_val_t *nf = corral_val_get(nm, "finalizers");
    corral_val_t *cf = corral_val_get(cm, "finalizers");
    for (size_t i = 0; nf && nf->kind == CORRAL_VAL_SEQ && i < nf->n; i++) {
        if (nf->items[i]->kind == CORRAL_VAL_STR && !has_str(cf, nf->items[i]->s)) {
            corral_diag_t d;
            corral_diag_init(&d);
            corral_diag_add(&d, CORRAL_SEV_ERROR, NULL, 0, 0, "metadata.finalizers",
                            "Forbidden: no new finalizers can be added if the object is being "
                            "deleted, found new finalizers [\"%s\"]",
                            nf->items[i]->s);
            corral__invalid(r, r->res->info->name, r->name, &d);
            corral_diag_fini(&d);
            return false;
        }
    }
    return true;
}

/* An object being deleted goes away once it has no finalizers left and no
 * grace period pending. */
static bool deletion_complete(const corral_val_t *obj)
{
    corral_val_t *m = corral_val_get(obj, "metadata");
    if (!corral_val_get(m, "deletionTimestamp"))
        return false;
    corral_val_t *f = corral_val_get(m, "finalizers");
    if (f && f->kind == CORRAL_VAL_SEQ && f->n)
        return false;
    corral_val_t *g = corral_val_get(m, "deletionGracePeriodSeconds");
    return !g || g->kind != CORRAL_VAL_INT || g->u.i == 0;
}

/* A pod being deleted that reports a terminal phase has been stopped by its
 * node agent: its grace period is over. */
static void confirm_terminated(corral__req_t *r, corral_val_t *next)
{
    /* kube-apiserver waits for kubelet's DELETE with gracePeriodSeconds=0. */
    if (r->res->info->kind != CORRAL_KIND_POD || corral__strict(r))
        return;
    corral_val_t *m = corral_val_get(next, "metadata");
    const char *phase = corral_val_get_str(corral_val_get(next, "status"), "phase");
    if (corral_val_get(m, "deletionTimestamp") && phase &&
        (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed")))
        corral_val_set(r->a, m, "deletionGracePeriodSeconds", corral_val_new_int(r->a, 0));
}

static void submit_update(corral__req_t *r, const corral__cur_t *cur, corral_val_t *next,
                          const corral_obj_t *o, bool remove)
{
    corral_buf_t attrs;
    corral_buf_init(&attrs);
    corral__attrs(o, &attrs);
    corral_store_op_t *op = corral_arena_alloc(r->a, sizeof(*op));
    op->kind = remove ? CORRAL_STORE_DELETE : CORRAL_STORE_UPDATE;
    op->resource = r->res->key;
    op->ns = corral__ns_key(r);
    op->name = r->name;
    op->expect_rev = cur->row.rev;
    op->obj = next;
    op->arena = r->a;
    op->attrs = corral_arena_strndup(r->a, attrs.p ? attrs.p : "", attrs.len);
    op->attrs_len = attrs.len;
    op->prev_json = cur->row.json;
    op->prev_len = cur->row.json_len;
    op->prev_attrs = cur->row.attrs;
    op->prev_attrs_len = cur->row.attrs_len;
    corral_buf_fini(&attrs);
    r->cont = update_done;
    corral__submit(r, op);
}

void corral__update_with(corral__req_t *r, const corral__cur_t *cur, corral_val_t *next,
                         const char *user_rv, int success_code, unsigned flags)
{
    upd_ctx_t *u = corral_arena_alloc(r->a, sizeof(*u));
    u->user_rv = user_rv;
    u->code = success_code;
    u->flags = flags;
    r->hctx = u;
    char rv[24];
    snprintf(rv, sizeof(rv), "%lld", (long long)cur->row.rev);
    if (user_rv && *user_rv && strcmp(user_rv, rv) != 0) {
        corral__conflict(r, NULL);
        return;
    }
    if (!carry_meta(r, cur->tree, next))
        return;
    corral_val_t *nm = corral__meta(r->a, next);
    confirm_terminated(r, next);
    corral_obj_t *o = NULL;
    if (!corral__validate(r, next, &o) ||
        (!(flags & CORRAL__UPD_BINDING) && !corral__strict_update_ok(r, cur->tree, next)) ||
        !corral__admit_rbac(r, o, cur->tree) || !corral__admit_node(r, next, cur->tree))
        return;
    if (o->info->kind == CORRAL_KIND_CRD && !r->sub)
        after_validate(r->a, next, o); /* names and storage version as the spec says */
    /* After validation, which wrote the defaults the stored object has. */
    if (!(flags & CORRAL__UPD_BINDING) && spec_changed(cur->tree, next)) {
        corral_val_t *g = corral_val_get(nm, "generation");
        int64_t gen = g && g->kind == CORRAL_VAL_INT ? g->u.i : 0;
        corral_val_set(r->a, nm, "generation", corral_val_new_int(r->a, gen + 1));
    }
    corral_val_set(r->a, nm, "resourceVersion", corral_val_new_str(r->a, rv));
    if (!(flags & (CORRAL__UPD_MANAGED | CORRAL__UPD_BINDING)))
        track_update(r, cur->tree, next);
    bool remove = deletion_complete(next);
    if (!remove && corral_val_equal(next, cur->tree)) {
        /* Nothing changed: no write, no new resourceVersion (as upstream). */
        if (flags & CORRAL__UPD_SCALE)
            corral__reply_scale(r, success_code, cur->row.json, cur->row.json_len);
        else
            corral__reply_obj(r, success_code, cur->row.json, cur->row.json_len);
        return;
    }
    if (r->wo && r->wo->dry_run && (flags & CORRAL__UPD_SCALE)) {
        corral_buf_t b;
        corral_buf_init(&b);
        corral_val_to_json(next, &b, false);
        corral__reply_scale(r, success_code, corral_buf_str(&b), b.len);
        corral_buf_fini(&b);
        return;
    }
    if (r->wo && r->wo->dry_run) {
        corral__reply_tree(r, success_code, next); /* everything but the write */
        return;
    }
    submit_update(r, cur, next, o, remove);
}

/* The object to store for an update of r's resource (or its status) given
 * the current object and what the client sent. */
corral_val_t *corral__merge_for(corral__req_t *r, const corral__cur_t *cur, corral_val_t *in)
{
    if (r->sub) {
        corral_val_t *next = corral_val_copy(r->a, cur->tree);
        corral_val_t *st = corral_val_get(in, "status");
        if (st)
            corral_val_set(r->a, next, "status", st);
        else
            corral_val_del(next, "status");
        /* A pod's status update keeps its metadata's annotations, as
         * kube-apiserver's pod status strategy does (the node agent writes
         * corral.dev/gpu-seconds-used with a pod's last status). */
        const corral_val_t *ann = corral_val_dig(in, "metadata.annotations");
        if (r->res->info->kind == CORRAL_KIND_POD && ann && ann->kind == CORRAL_VAL_MAP)
            corral_val_set(r->a, corral__meta(r->a, next), "annotations",
                           corral_val_copy(r->a, ann));
        /* Upstream's pod status strategy keeps the labels sent too. */
        const corral_val_t *labels = corral_val_dig(in, "metadata.labels");
        if (r->res->info->kind == CORRAL_KIND_POD && corral__strict(r) && labels &&
            labels->kind == CORRAL_VAL_MAP)
            corral_val_set(r->a, corral__meta(r->a, next), "labels", corral_val_copy(r->a, labels));
        return next;
    }
    if (r->res->has_status) {
        corral_val_t *st = corral_val_get(cur->tree, "status");
        if (st)
            corral_val_set(r->a, in, "status", st);
        else
            corral_val_del(in, "status");
    }
    return in;
}

void corral__h_update(corral__req_t *r)
{
    if (!corral__wopts_parse(r, "UpdateOptions", false))
        return;
    corral_val_t *in = corral__body_tree(r);
    if (!in || !corral__check_identity(r, in, true) || !corral__view_in(r, in, false))
        return;
    corral__cur_t cur;
    if (!corral__read_current(r, &cur))
        return;
    const char *user_rv = corral__meta_str(in, "resourceVersion");
    const char *uid = corral__meta_str(in, "uid");
    const char *cur_uid = corral__meta_str(cur.tree, "uid");
    if (uid && *uid && cur_uid && strcmp(uid, cur_uid) != 0) {
        corral__status(r, 409, "Conflict", r->res->info->plural, r->name,
                       "Precondition failed: UID in precondition: %s, UID in object meta: %s", uid,
                       cur_uid);
        return;
    }
    corral__update_with(r, &cur, corral__merge_for(r, &cur, in), user_rv, 200, 0);
}

/* --- patch -------------------------------------------------------------------------------- */

/* Does the patch document set metadata.resourceVersion? */
static bool patch_sets_rv(const corral_val_t *patch, bool merge)
{
    if (merge)
        return corral_val_dig(patch, "metadata.resourceVersion") != NULL;
    for (size_t i = 0; patch->kind == CORRAL_VAL_SEQ && i < patch->n; i++) {
        const char *path = corral_val_get_str(patch->items[i], "path");
        const char *op = corral_val_get_str(patch->items[i], "op");
        if (path && op && strcmp(path, "/metadata/resourceVersion") == 0 &&
            (strcmp(op, "replace") == 0 || strcmp(op, "add") == 0))
            return true;
    }
    return false;
}

/* The patch type from Content-Type: 'm'erge, 'j'son, 's'trategic or 'a'pply; 0
 * after a 415 reply. */
static char patch_type(corral__req_t *r)
{
    size_t len = 0;
    const char *ct = corral_http_header(r->http, "content-type", &len);
    char type[64] = "";
    if (ct) {
        const char *semi = memchr(ct, ';', len);
        snprintf(type, sizeof(type), "%.*s", (int)(semi ? (size_t)(semi - ct) : len), ct);
    }
    bool builtin = corral__strategic_supported(r->res->info);
    if (strcmp(type, "application/merge-patch+json") == 0)
        return 'm';
    if (strcmp(type, "application/json-patch+json") == 0)
        return 'j';
    if (builtin && strcmp(type, "application/strategic-merge-patch+json") == 0)
        return 's';
    if (strcmp(type, "application/apply-patch+yaml") == 0 ||
        strcmp(type, "application/apply-patch+json") == 0)
        return 'a';
    corral__status(r, 415, "UnsupportedMediaType", NULL, NULL,
                   "the body of the request was in an unknown format - accepted media types "
                   "include: application/json-patch+json, application/merge-patch+json, "
                   "application/apply-patch+yaml%s",
                   builtin ? ", application/strategic-merge-patch+json" : "");
    return 0;
}

/* Does a patched object fit what a request may send (3 MiB)? The
 * managedFields the server keeps are not the client's and do not count: a
 * map of many keys has a field set of about its own size. */
static bool patched_fits(corral_arena_t *a, corral_val_t *work)
{
    corral_val_t *meta = corral_val_get(work, "metadata");
    corral_val_t *mf = corral_val_get(meta, "managedFields");
    if (mf)
        corral_val_del(meta, "managedFields");
    bool fits = corral__val_fits(work, CORRAL_APISERVER_MAX_BODY, CORRAL__PATCH_MAX_DEPTH, NULL);
    if (mf)
        corral_val_set(a, meta, "managedFields", mf);
    return fits;
}

void corral__h_patch(corral__req_t *r)
{
    char type = patch_type(r);
    if (type == 'a') {
        corral__h_apply(r);
        return;
    }
    if (!type || !corral__wopts_parse(r, "PatchOptions", false))
        return;
    corral_val_t *patch = corral__patch_tree(r);
    if (!patch)
        return;
    bool merge = type != 'j';
    if (merge && patch->kind != CORRAL_VAL_MAP) {
        corral__status(r, 400, "BadRequest", NULL, NULL, "a merge patch must be a JSON object");
        return;
    }
    corral__cur_t cur;
    if (!corral__read_current(r, &cur))
        return;
    corral_val_t *work = corral_val_copy(r->a, cur.tree);
    corral__view_out(r, work); /* the patch is written against the served shape */
    char why[256] = "";
    int rc = type == 'm'   ? corral__merge_patch(r->a, &work, patch)
             : type == 's' ? corral__strategic_patch(r->a, &work, patch, why, sizeof(why))
                           : corral__json_patch(r->a, &work, patch, why, sizeof(why));
    if (rc == CORRAL_ETOOBIG || (rc == 0 && !patched_fits(r->a, work))) {
        corral__status(r, 413, "RequestEntityTooLarge", NULL, NULL, "%s",
                       rc ? why : "the patched object is larger than 3 MiB or nested too deeply");
        return;
    }
    if (rc != 0 || !work || work->kind != CORRAL_VAL_MAP) {
        corral__status(r, 422, "Invalid", NULL, NULL, "the patch could not be applied: %s",
                       why[0] ? why : "the result is not an object");
        return;
    }
    if (!corral__check_identity(r, work, true) || !corral__view_in(r, work, false))
        return;
    /* A resourceVersion the patch sets is a precondition. */
    const char *user_rv =
        patch_sets_rv(patch, merge) ? corral__meta_str(work, "resourceVersion") : NULL;
    corral__update_with(r, &cur, corral__merge_for(r, &cur, work), user_rv, 200, 0);
}
