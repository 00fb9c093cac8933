/*
 * The edges of a view (corral__view_t): a resource served in another shape
 * of another resource's stored objects. Everything between the edges (the
 * store, selector attributes, the object model's validation, watch
 * history) sees only the stored shape, so an object written through either
 * resource is the same row, with one uid and one resourceVersion, and a
 * watch on either sees writes made through the other. Bodies are turned
 * into the stored shape on the way in, stored JSON into the served shape on
 * the way out, and field selector labels are mapped to the stored ones.
 */
#include <string.h>

#include "apiserver/apiserver_int.h"
#include "corral/json.h"

/* The served JSON of a stored object into b; false when it does not parse
 * (then the stored text is served as it is, rather than nothing). */
static bool convert_out(const corral__res_t *res, corral_buf_t *b, const char *json, size_t len)
{
    corral_arena_t a;
    corral_arena_init(&a);
    corral_val_t *t = corral__json_tree(&a, json, len);
    if (t) {
        res->view->to_served(&a, t);
        corral_val_to_json(t, b, false);
    }
    corral_arena_fini(&a);
    return t != NULL;
}

void corral__put_obj(corral_buf_t *b, const corral__res_t *res, const char *json, size_t len)
{
    if (!res->view || !convert_out(res, b, json, len))
        corral_buf_append(b, json, len);
}

void corral__reply_obj(corral__req_t *r, int code, const char *json, size_t len)
{
    if (!r->res || !r->res->view) {
        corral__reply_json(r, code, json, len);
        return;
    }
    corral_buf_t b;
    corral_buf_init(&b);
    corral__put_obj(&b, r->res, json, len);
    corral__reply_buf(r, code, &b);
}

bool corral__view_in(corral__req_t *r, corral_val_t *obj, bool create)
{
    const corral__view_t *v = r->res->view;
    if (!v)
        return true;
    if (create && v->check_create) {
        corral_diag_t d;
        corral_diag_init(&d);
        v->check_create(obj, corral__ns_key(r), &d);
        bool bad = d.errors > 0;
        if (bad) {
            const char *name = corral__meta_str(obj, "name");
            corral__invalid(r, r->res->info->name, name ? name : "", &d);
        }
        corral_diag_fini(&d);
        if (bad)
            return false;
    }
    v->to_stored(r->a, obj);
    return true;
}

void corral__view_out(corral__req_t *r, corral_val_t *obj)
{
    if (r->res->view)
        r->res->view->to_served(r->a, obj);
}

const char *corral__field_label(const corral__req_t *r, const char *label)
{
    const corral__res_t *res = r->res;
    if (res->view)
        return res->view->field_label(label);
    return corral_kind_field_supported(res->info->kind, label) ? label : NULL;
}
