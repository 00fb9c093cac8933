/*
 * Server-side apply: PATCH with Content-Type application/apply-patch+yaml
 * (the body YAML or JSON). The applied configuration is merged into the
 * current object by the strategic-merge rules (lists by their merge keys,
 * sets of scalars, others atomic), the manager's Apply entry in
 * metadata.managedFields becomes the set of fields it applied, fields it
 * applied before and no longer does go when nobody else owns them, and a
 * change to a field another manager owns is a 409 Conflict with a
 * FieldManagerConflict cause per field, unless ?force=true, which takes
 * them over (managed.c does the field work). An absent object is created
 * (201). The rest (admission, defaulting, validation, the
 * compare-and-swap write, dry runs) is create's and update's in write.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/apiserver_int.h"
#include "corral/json.h"

typedef struct by_label {
    const char *label, *field;
} by_label_t;

static int label_cmp(const void *x, const void *y)
{
    const by_label_t *p = x, *q = y;
    return strcmp(p->label, q->label);
}

/* 409 with kube's message and causes (structured-merge-diff's wording). */
static void reply_conflicts(corral__req_t *r, const corral_val_t *list)
{
    size_t n = list->n;
    by_label_t *c = corral_arena_alloc(r->a, (n + 1) * sizeof(*c));
    for (size_t i = 0; i < n; i++) {
        c[i].label = corral_val_get_str(list->items[i], "manager");
        c[i].field = corral_val_get_str(list->items[i], "field");
    }
    corral_buf_t msg;
    corral_buf_init(&msg);
    if (n == 1) {
        corral_buf_printf(&msg, "Apply failed with 1 conflict: conflict with %s: %s", c[0].label,
                          c[0].field);
    } else {
        qsort(c, n, sizeof(*c), label_cmp); /* stable enough: paths come in order */
        corral_buf_printf(&msg, "Apply failed with %zu conflicts: ", n);
        for (size_t i = 0; i < n; i++) {
            if (i == 0 || strcmp(c[i].label, c[i - 1].label) != 0)
                corral_buf_printf(&msg, "%sconflicts with %s:", i ? "\n" : "", c[i].label);
            corral_buf_printf(&msg, "\n- %s", c[i].field);
        }
    }
    corral_buf_t b;
    corral_buf_init(&b);
    corral_buf_puts(&b, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":"
                        "\"Failure\",\"message\":");
    corral_json_quote(&b, msg.p, msg.len);
    corral_buf_puts(&b, ",\"reason\":\"Conflict\",\"details\":{\"causes\":[");
    for (size_t i = 0; i < n; i++) {
        const char *m = corral_arena_printf(r->a, "conflict with %s", c[i].label);
        corral_buf_puts(&b, i ? ",{" : "{");
        corral_buf_puts(&b, "\"type\":\"FieldManagerConflict\",\"message\":");
        corral_json_quote(&b, m, strlen(m));
        corral_buf_puts(&b, ",\"field\":");
        corral_json_quote(&b, c[i].field, strlen(c[i].field));
        corral_buf_putc(&b, '}');
    }
    corral_buf_puts(&b, "]},\"code\":409}");
    corral_buf_fini(&msg);
    corral__reply_buf(r, 409, &b);
}

#define LAST_APPLIED "kubectl.kubernetes.io/last-applied-configuration"

typedef struct allowed {
    const corral_val_t *conflicts;
    size_t covered;
} allowed_t;

static void count_covered(void *ctx, const char *path)
{
    allowed_t *al = ctx;
    for (size_t i = 0; i < al->conflicts->n; i++) {
        const char *f = corral_val_get_str(al->conflicts->items[i], "field");
        if (f && !strcmp(f, path))
            al->covered++;
    }
}

/* Upstream's lastAppliedManager: kubectl's server-side apply ("kubectl")
 * takes over, without conflicts, the fields a client-side apply set, as
 * the last-applied-configuration annotation of the live object lists them. */
static bool conflicts_allowed(corral__req_t *r, const corral_val_t *live,
                              const corral_val_t *conflicts)
{
    if (strcmp(r->wo->manager, "kubectl") != 0)
        return false;
    const char *la = corral_val_get_str(corral_val_dig(live, "metadata.annotations"), LAST_APPLIED);
    corral_val_t *obj = la ? corral__json_tree(r->a, la, strlen(la)) : NULL;
    if (!obj)
        return false;
    corral_val_t *set =
        corral__fields_strip(r->a, corral__fields_of(r->a, obj, false), corral__scope(r));
    allowed_t al = {conflicts, 0};
    corral__fields_each(r->a, set, count_covered, &al);
    return al.covered >= conflicts->n;
}

/* Upstream's lastAppliedUpdater: kubectl's server-side apply keeps an
 * existing last-applied-configuration annotation current. */
static void update_last_applied(corral__req_t *r, const corral_val_t *cfg, corral_val_t *merged)
{
    corral_val_t *ann = corral_val_dig(merged, "metadata.annotations");
    if (strcmp(r->wo->manager, "kubectl") != 0 || !corral_val_get(ann, LAST_APPLIED))
        return;
    corral_val_t *c = corral_val_copy(r->a, cfg);
    corral_val_t *ca = corral_val_dig(c, "metadata.annotations");
    if (ca)
        corral_val_del(ca, LAST_APPLIED);
    corral_buf_t b;
    corral_buf_init(&b);
    corral_val_to_json(c, &b, false);
    corral_val_set(r->a, ann, LAST_APPLIED, corral_val_new_strn(r->a, b.p ? b.p : "", b.len));
    corral_buf_fini(&b);
}

static void mf_opts(corral__req_t *r, corral__mf_opts_t *o, char *now, size_t len)
{
    corral__now_rfc3339(now, len);
    o->manager = r->wo->manager;
    o->api_version = r->res->info->api_version;
    o->subresource = r->sub && !strcmp(r->sub, "status") ? "status" : NULL;
    o->now = now;
    o->scope = corral__scope(r);
}

static void apply_create(corral__req_t *r, corral_val_t *cfg)
{
    if (r->sub) {
        corral__not_found(r);
        return;
    }
    corral_val_t *obj = corral_val_copy(r->a, cfg);
    if (!corral__view_in(r, obj, true))
        return;
    corral__mf_opts_t o;
    char now[40];
    mf_opts(r, &o, now, sizeof(now));
    corral_val_t *mf = NULL, *conflicts = NULL;
    corral__managed_apply(r->a, NULL, NULL, cfg, obj, &o, r->wo->force, &mf, &conflicts);
    if (mf && mf->n)
        corral_val_set(r->a, corral__meta(r->a, obj), "managedFields", mf);
    corral__create_with(r, obj, CORRAL__UPD_MANAGED);
}

void corral__h_apply(corral__req_t *r)
{
    if (!corral__wopts_parse(r, "PatchOptions", true))
        return;
    corral_val_t *cfg = corral__apply_tree(r);
    if (!cfg || !corral__check_identity(r, cfg, true))
        return;
    corral_val_t *meta = corral__meta(r->a, cfg);
    if (corral_val_get(meta, "managedFields")) {
        corral__status(r, 400, "BadRequest", NULL, NULL, "metadata.managedFields must be nil");
        return;
    }
    corral__cur_t cur;
    int rc =
        corral_store_get(corral__rd(r), r->res->key, corral__ns_key(r), r->name, r->a, &cur.row);
    if (rc == CORRAL_ENOENT) {
        apply_create(r, cfg);
        return;
    }
    cur.tree = rc ? NULL : corral__json_tree(r->a, cur.row.json, cur.row.json_len);
    if (!cur.tree) {
        corral__internal(r, rc ? rc : CORRAL_EPARSE);
        return;
    }
    corral_val_t *work = corral_val_copy(r->a, cur.tree);
    corral__view_out(r, work);
    char why[256] = "";
    if (corral__strategic_patch(r->a, &work, cfg, why, sizeof(why)) != 0 ||
        work->kind != CORRAL_VAL_MAP) {
        corral__status(r, 422, "Invalid", NULL, NULL, "the apply could not be merged: %s", why);
        return;
    }
    if (!corral__view_in(r, work, false))
        return;
    corral_val_t *merged = corral__merge_for(r, &cur, work);
    corral__mf_opts_t o;
    char now[40];
    mf_opts(r, &o, now, sizeof(now));
    corral_val_t *base = corral_val_get(corral_val_get(cur.tree, "metadata"), "managedFields");
    corral_val_t *mf = NULL, *conflicts = NULL;
    corral_val_t *copy = corral_val_copy(r->a, merged);
    if (corral__managed_apply(r->a, base, cur.tree, cfg, merged, &o, r->wo->force, &mf,
                              &conflicts) != 0) {
        if (!conflicts_allowed(r, cur.tree, conflicts)) {
            reply_conflicts(r, conflicts);
            return;
        }
        merged = copy;
        corral__managed_apply(r->a, base, cur.tree, cfg, merged, &o, true, &mf, &conflicts);
    }
    update_last_applied(r, cfg, merged);
    corral_val_t *nm = corral__meta(r->a, merged);
    if (mf->n)
        corral_val_set(r->a, nm, "managedFields", mf);
    else
        corral_val_del(nm, "managedFields");
    const char *user_rv = corral_val_get_str(meta, "resourceVersion");
    corral__update_with(r, &cur, merged, user_rv, 200, CORRAL__UPD_MANAGED);
}
