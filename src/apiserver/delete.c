/*
 * delete and deletecollection. The decision per object follows upstream:
 *   - an object with finalizers gets deletionTimestamp and stays until an
 *     update removes the last finalizer (write.c completes that);
 *   - a pod bound to a node and not yet finished is deleted gracefully: it
 *     gets deletionTimestamp = now + grace and deletionGracePeriodSeconds,
 *     and goes when its node agent confirms (a delete with
 *     gracePeriodSeconds=0, or a status update to Succeeded/Failed);
 *   - anything else (unbound pods included) is removed at once.
 * Starting a graceful deletion bumps metadata.generation, as upstream.
 * Deleting a Namespace removes every object in it with it (Corral has no
 * namespace controller; docs/apiserver.md).
 */
#include <stdio.h>
#include <string.h>
#include <sys/time.h>

#include "apiserver/apiserver_int.h"
#include "corral/timefmt.h"

#define MAX_ATTEMPTS 1000 /* as in write.c */

/* dryRun takes only "All" (as upstream's ValidateDeleteOptions). */
static bool dry_value(corral__req_t *r, const char *v)
{
    if (!strcmp(v, "All"))
        return true;
    corral__status(r, 422, "Invalid", "DeleteOptions", "",
                   "DeleteOptions.meta.k8s.io \"\" is invalid: dryRun: Unsupported value: "
                   "\"%s\": supported values: \"All\"",
                   v);
    return false;
}

bool corral__delopts_parse(corral__req_t *r, const corral_val_t *body, corral__delopts_t *o)
{
    memset(o, 0, sizeof(*o));
    if (body && body->kind == CORRAL_VAL_MAP) {
        corral_val_t *g = corral_val_get(body, "gracePeriodSeconds");
        if (g && g->kind == CORRAL_VAL_INT) {
            o->grace = g->u.i;
            o->grace_set = true;
        }
        corral_val_t *pre = corral_val_get(body, "preconditions");
        o->pre_uid = corral_val_get_str(pre, "uid");
        o->pre_rv = corral_val_get_str(pre, "resourceVersion");
        corral_val_t *dry = corral_val_get(body, "dryRun");
        for (size_t i = 0; dry && dry->kind == CORRAL_VAL_SEQ && i < dry->n; i++) {
            if (!dry_value(r, dry->items[i]->kind == CORRAL_VAL_STR ? dry->items[i]->s : "?"))
                return false;
            o->dry_run = true;
        }
    }
    int64_t g = 0;
    bool set = false;
    if (!corral__param_int(r, "gracePeriodSeconds", &g, &set))
        return false;
    if (set) {
        o->grace = g;
        o->grace_set = true;
    }
    if (o->grace < 0) {
        corral__status(r, 422, "Invalid", NULL, NULL,
                       "gracePeriodSeconds: must be greater than or equal to 0");
        return false;
    }
    const char *dry = corral__param(r, "dryRun");
    if (dry && *dry) {
        if (!dry_value(r, dry))
            return false;
        o->dry_run = true;
    }
    return true;
}

static int64_t int_at(const corral_val_t *m, const char *key, int64_t dflt)
{
    corral_val_t *v = corral_val_get(m, key);
    return v && v->kind == CORRAL_VAL_INT ? v->u.i : dflt;
}

/* The grace period for this deletion; 0 means remove at once. */
static int64_t grace_for(const corral__res_t *res, const corral_val_t *obj,
                         const corral__delopts_t *o)
{
    if (res->info->kind != CORRAL_KIND_POD)
        return 0;
    const corral_val_t *spec = corral_val_get(obj, "spec");
    const char *node = corral_val_get_str(spec, "nodeName");
    const char *phase = corral_val_get_str(corral_val_get(obj, "status"), "phase");
    /* Not on a node, or finished: nothing to stop. */
    if (!node || !*node || (phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed"))))
        return 0;
    return o->grace_set ? o->grace : int_at(spec, "terminationGracePeriodSeconds", 30);
}

static void set_deleting(corral_arena_t *a, corral_val_t *meta, int64_t grace)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    char ts[40];
    corral_time_format(((int64_t)tv.tv_sec + grace) * 1000000, false, ts, sizeof(ts));
    corral_val_set(a, meta, "deletionTimestamp", corral_val_new_str(a, ts));
    corral_val_set(a, meta, "deletionGracePeriodSeconds", corral_val_new_int(a, grace));
}

/*
 * The op that deletes, or starts or speeds up deleting, the object in row
 * (tree parsed from it). NULL when nothing changes (already deleting with no
 * shorter grace). *removed says whether the op removes the object.
 */
static corral_store_op_t *plan(corral__req_t *r, const corral__res_t *res, const char *ns,
                               const corral_store_row_t *row, corral_val_t *tree,
                               const corral__delopts_t *o, bool *removed)
{
    corral_val_t *meta = corral__meta(r->a, tree);
    corral_val_t *fin = corral_val_get(meta, "finalizers");
    bool finalizers = fin && fin->kind == CORRAL_VAL_SEQ && fin->n > 0;
    bool deleting = corral_val_get(meta, "deletionTimestamp") != NULL;
    int64_t grace = grace_for(res, tree, o);
    corral_store_op_t *op = corral_arena_alloc(r->a, sizeof(*op));
    op->resource = res->key;
    op->ns = corral_arena_strdup(r->a, ns);
    op->name = corral_arena_strdup(r->a, row->name);
    op->expect_rev = row->rev;
    op->arena = r->a;
    op->attrs = row->attrs;
    op->attrs_len = row->attrs_len;
    *removed = !finalizers && grace == 0;
    if (*removed) {
        op->kind = CORRAL_STORE_DELETE;
        op->obj = tree;
        return op;
    }
    corral_val_t *next = corral_val_copy(r->a, tree);
    corral_val_t *nm = corral__meta(r->a, next);
    int64_t cur_grace = int_at(meta, "deletionGracePeriodSeconds", 0);
    if (!deleting) {
        set_deleting(r->a, nm, grace);
        corral_val_set(r->a, nm, "generation",
                       corral_val_new_int(r->a, int_at(meta, "generation", 0) + 1));
    } else if (grace < cur_grace) {
        set_deleting(r->a, nm, grace);
    } else {
        return NULL;
    }
    op->kind = CORRAL_STORE_UPDATE;
    op->obj = next;
    op->prev_json = row->json;
    op->prev_len = row->json_len;
    op->prev_attrs = row->attrs;
    op->prev_attrs_len = row->attrs_len;
    return op;
}

/* --- delete one -------------------------------------------------------------------------- */

typedef struct del_ctx {
    const corral__delopts_t *opts;
    int code;
    bool status_reply; /* answer with a Status (eviction) */
    bool removed;
    int ns_rc; /* namespace deletion: the namespace's own op */
    const corral__cur_t *cur;
} del_ctx_t;

static void reply_deleted(corral__req_t *r, del_ctx_t *d, const char *json, size_t len)
{
    if (d->status_reply) {
        corral_buf_t b;
        corral_buf_init(&b);
        corral__status_json(&b, d->code, "Success", NULL, NULL);
        corral__reply_buf(r, d->code, &b);
        return;
    }
    if (!d->removed || r->res->return_deleted) {
        corral__reply_obj(r, d->code, json, len);
        return;
    }
    /* What kube-apiserver answers when the object is gone. */
    const char *uid = corral__meta_str(d->cur->tree, "uid");
    corral_buf_t b;
    corral_buf_init(&b);
    corral_buf_puts(&b, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":"
                        "\"Success\",\"details\":{\"name\":");
    corral_json_quote(&b, r->name, strlen(r->name));
    if (r->res->info->group[0]) {
        corral_buf_puts(&b, ",\"group\":");
        corral_json_quote(&b, r->res->info->group, strlen(r->res->info->group));
    }
    corral_buf_puts(&b, ",\"kind\":");
    corral_json_quote(&b, r->res->info->plural, strlen(r->res->info->plural));
    if (uid) {
        corral_buf_puts(&b, ",\"uid\":");
        corral_json_quote(&b, uid, strlen(uid));
    }
    corral_buf_puts(&b, "}}");
    corral__reply_buf(r, d->code, &b);
}

static void delete_done(corral__req_t *r, corral_store_op_t *op)
{
    del_ctx_t *d = r->hctx;
    corral_store_event_t *ev = op->ev;
    op->ev = NULL;
    int rc = op->rc;
    if (rc == CORRAL_ECONFLICT && !d->opts->pre_rv && r->attempts < MAX_ATTEMPTS)
        corral__retry(r);
    else if (rc == CORRAL_ECONFLICT)
        corral__conflict(r, NULL);
    else if (rc == CORRAL_ENOENT)
        corral__not_found(r);
    else if (rc)
        corral__internal(r, rc);
    else if (d->removed && r->res->return_deleted)
        reply_deleted(r, d, d->cur->row.json, d->cur->row.json_len);
    else
        reply_deleted(r, d, ev->json, ev->json_len);
    corral_store_event_unref(ev);
}

void corral__delete_one(corral__req_t *r, const corral__cur_t *cur, const corral__delopts_t *o,
                        int success_code, bool status_reply)
{
    const char *uid = corral__meta_str(cur->tree, "uid");
    char rv[24];
    snprintf(rv, sizeof(rv), "%lld", (long long)cur->row.rev);
    if (o->pre_uid && uid && strcmp(o->pre_uid, uid) != 0) {
        corral__status(r, 409, "Conflict", r->res->info->plural, r->name,
                       "Precondition failed: UID in precondition: %s, UID in object meta: %s",
                       o->pre_uid, uid);
        return;
    }
    if (o->pre_rv && strcmp(o->pre_rv, rv) != 0) {
        corral__status(r, 409, "Conflict", r->res->info->plural, r->name,
                       "Precondition failed: ResourceVersion in precondition: %s, "
                       "ResourceVersion in object meta: %s",
                       o->pre_rv, rv);
        return;
    }
    del_ctx_t *d = corral_arena_alloc(r->a, sizeof(*d));
    d->opts = o;
    d->code = success_code;
    d->status_reply = status_reply;
    d->cur = cur;
    r->hctx = d;
    corral_store_op_t *op = plan(r, r->res, corral__ns_key(r), &cur->row,
                                 corral_val_copy(r->a, cur->tree), o, &d->removed);
    if (op && o->dry_run && !d->removed) {
        /* The object as a real deletion would leave it; nothing is written. */
        corral_buf_t b;
        corral_buf_init(&b);
        corral_val_to_json(op->obj, &b, false);
        reply_deleted(r, d, b.p ? b.p : "{}", b.len);
        corral_buf_fini(&b);
        return;
    }
    if (!op || o->dry_run) {
        reply_deleted(r, d, cur->row.json, cur->row.json_len);
        return;
    }
    r->cont = delete_done;
    corral__submit(r, op);
}

/* --- namespaces ------------------------------------------------------------------------------ */

typedef struct ns_ctx {
    corral__req_t *r;
    const corral__res_t *res;
    corral_store_op_t **ops; /* collected, submitted together at the end */
} ns_ctx_t;

/* Submit a list of ops linked by next. Nothing may allocate from the
 * request's arena once the first is submitted: the writer thread sets the
 * resourceVersion in each object with that arena. */
static void submit_all(corral__req_t *r, corral_store_op_t *list)
{
    while (list) {
        corral_store_op_t *next = list->next;
        corral__submit(r, list);
        list = next;
    }
}

static int ns_row(void *arg, const corral_store_row_t *row)
{
    ns_ctx_t *c = arg;
    corral__req_t *r = c->r;
    corral_val_t *tree = corral__json_tree(r->a, row->json, row->json_len);
    if (!tree)
        return 0;
    corral_store_op_t *op = corral_arena_alloc(r->a, sizeof(*op));
    op->kind = CORRAL_STORE_DELETE;
    op->resource = c->res->key;
    op->ns = corral_arena_strdup(r->a, row->ns);
    op->name = corral_arena_strdup(r->a, row->name);
    op->obj = tree;
    op->arena = r->a;
    op->attrs = corral_arena_strndup(r->a, row->attrs, row->attrs_len);
    op->attrs_len = row->attrs_len;
    op->next = *c->ops;
    *c->ops = op;
    return 0;
}

/* Each op of a namespace deletion completes here; the namespace's own op
 * (submitted last) carries the answer. */
static void ns_done(corral__req_t *r, corral_store_op_t *op)
{
    del_ctx_t *d = r->hctx;
    if (strcmp(op->resource, "namespaces") == 0)
        d->ns_rc = op->rc;
    corral_store_op_release(op); /* before replying: the op lives in the arena */
    if (r->pending > 0)
        return;
    if (d->ns_rc == 0)
        reply_deleted(r, d, d->cur->row.json, d->cur->row.json_len);
    else if (d->ns_rc == CORRAL_ENOENT)
        corral__not_found(r);
    else
        corral__internal(r, d->ns_rc);
}

static void delete_namespace(corral__req_t *r, const corral__cur_t *cur)
{
    if (!strcmp(r->name, "default") || !strcmp(r->name, "kube-system") ||
        !strcmp(r->name, "kube-public")) {
        corral__status(r, 403, "Forbidden", "namespaces", r->name,
                       "namespaces \"%s\" is forbidden: this namespace may not be deleted",
                       r->name);
        return;
    }
    del_ctx_t *d = corral_arena_alloc(r->a, sizeof(*d));
    d->cur = cur;
    d->code = 200;
    d->removed = true;
    r->hctx = d;
    r->cont = ns_done;
    size_t n;
    const corral__res_t *all = corral__res_all(&n);
    corral_store_op_t *ops = NULL;
    for (size_t i = 0; i < n; i++) {
        if (!all[i].info->namespaced || all[i].view)
            continue; /* a view's objects are deleted as its stored resource's */
        ns_ctx_t c = {r, &all[i], &ops};
        int64_t rev;
        corral_store_list(corral__rd(r), all[i].key, r->name, NULL, NULL, ns_row, &c, &rev);
    }
    corral_store_op_t *op = corral_arena_alloc(r->a, sizeof(*op));
    op->kind = CORRAL_STORE_DELETE;
    op->resource = r->res->key;
    op->ns = "";
    op->name = r->name;
    op->obj = corral_val_copy(r->a, cur->tree);
    op->arena = r->a;
    op->attrs = cur->row.attrs;
    op->attrs_len = cur->row.attrs_len;
    op->next = NULL;
    /* The namespace goes last, after what it held. */
    corral_store_op_t **tail = &ops;
    while (*tail)
        tail = &(*tail)->next;
    *tail = op;
    submit_all(r, ops);
}

void corral__h_delete(corral__req_t *r)
{
    corral_val_t *body = NULL;
    if (r->body_len > 0 && !(body = corral__body_tree(r)))
        return;
    corral__delopts_t *o = corral_arena_alloc(r->a, sizeof(*o));
    if (!corral__delopts_parse(r, body, o))
        return;
    corral__cur_t *cur = corral_arena_alloc(r->a, sizeof(*cur));
    if (!corral__read_current(r, cur) || !corral__admit_node_delete(r, cur->tree, false))
        return;
    if (r->res->info->kind == CORRAL_KIND_NAMESPACE && !o->dry_run) {
        delete_namespace(r, cur);
        return;
    }
    corral__delete_one(r, cur, o, 200, false);
}

/* --- deletecollection ------------------------------------------------------------------------- */

typedef struct coll_ctx {
    corral__req_t *r;
    corral__filter_t filter;
    const corral__delopts_t *opts;
    corral_buf_t *items;
    size_t nitems;
    corral_store_op_t *ops; /* collected, submitted together at the end */
} coll_ctx_t;

static int coll_row(void *arg, const corral_store_row_t *row)
{
    coll_ctx_t *c = arg;
    corral__req_t *r = c->r;
    if (!corral__filter_match(&c->filter, row->attrs, row->attrs_len))
        return 0;
    corral_val_t *tree = corral__json_tree(r->a, row->json, row->json_len);
    if (!tree)
        return 0;
    corral_store_row_t *copy = corral_arena_alloc(r->a, sizeof(*copy));
    *copy = *row;
    copy->ns = corral_arena_strdup(r->a, row->ns);
    copy->name = corral_arena_strdup(r->a, row->name);
    copy->json = corral_arena_strndup(r->a, row->json, row->json_len);
    copy->attrs = corral_arena_strndup(r->a, row->attrs, row->attrs_len);
    bool removed = false;
    corral_store_op_t *op = plan(r, r->res, copy->ns, copy, tree, c->opts, &removed);
    if (op && c->opts->dry_run) {
        /* What a real deletecollection would answer; nothing is written. */
        if (c->nitems++)
            corral_buf_putc(c->items, ',');
        if (removed) {
            corral__put_obj(c->items, r->res, copy->json, copy->json_len);
        } else {
            corral_buf_t b;
            corral_buf_init(&b);
            corral_val_to_json(op->obj, &b, false);
            corral__put_obj(c->items, r->res, b.p ? b.p : "{}", b.len);
            corral_buf_fini(&b);
        }
        return 0;
    }
    if (!op)
        return 0;
    op->next = c->ops;
    c->ops = op;
    return 0;
}

static void coll_done(corral__req_t *r, corral_store_op_t *op)
{
    coll_ctx_t *c = r->hctx;
    if (op->rc == 0) {
        if (c->nitems++)
            corral_buf_putc(c->items, ',');
        corral__put_obj(c->items, r->res, op->ev->json, op->ev->json_len);
    }
    corral_store_op_release(op); /* before replying: the op lives in the arena */
    if (r->pending > 0)
        return;
    corral_buf_puts(c->items, "]}");
    r->cleanup = NULL;
    corral__reply_buf(r, 200, c->items); /* takes the buffer */
}

static void coll_cleanup(corral__req_t *r)
{
    coll_ctx_t *c = r->hctx;
    corral_buf_fini(c->items);
}

void corral__h_delete_collection(corral__req_t *r)
{
    corral_val_t *body = NULL;
    if (r->body_len > 0 && !(body = corral__body_tree(r)))
        return;
    corral__delopts_t *o = corral_arena_alloc(r->a, sizeof(*o));
    if (!corral__delopts_parse(r, body, o))
        return;
    coll_ctx_t *c = corral_arena_alloc(r->a, sizeof(*c));
    c->r = r;
    c->opts = o;
    if (!corral__filter_parse(r, &c->filter))
        return;
    c->items = corral_arena_alloc(r->a, sizeof(*c->items));
    corral_buf_init(c->items);
    corral_buf_printf(c->items,
                      "{\"kind\":\"%s\",\"apiVersion\":\"%s\",\"metadata\":{},\"items\":[",
                      r->res->list_kind, r->res->info->api_version);
    r->hctx = c;
    r->cont = coll_done;
    r->cleanup = coll_cleanup;
    int64_t rev;
    const char *ns = r->res->info->namespaced ? r->ns : NULL;
    corral_store_list(corral__rd(r), r->res->key, ns, NULL, NULL, coll_row, c, &rev);
    submit_all(r, c->ops);
    if (r->pending == 0) {
        corral_buf_puts(c->items, "]}");
        r->cleanup = NULL;
        corral__reply_buf(r, 200, c->items);
    }
}
