/*
 * The table-driven decoder: path tracking, error reporting with hints, and the
 * primitive field decoders (strings, integers, booleans, maps, lists, resource
 * lists, times, durations, conditions, label selectors).
 *
 * Type rules follow what the API server's JSON decoding accepts, so a file that
 * passes `corral validate` is accepted by Corral's API server and by
 * kube-apiserver: a number is not a string ("quote it"), a quoted number is not
 * an integer ("remove the quotes"), null means "unset".
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corral/hint.h"
#include "corral/timefmt.h"
#include "model/model_int.h"

void corral__dec_init(corral__dec_t *d, corral_arena_t *a, corral_diag_t *diag, const char *file)
{
    memset(d, 0, sizeof(*d));
    d->a = a;
    d->diag = diag;
    d->file = file;
    corral_buf_init(&d->path);
}

void corral__dec_fini(corral__dec_t *d)
{
    corral_buf_fini(&d->path);
}

size_t corral__dec_enter(corral__dec_t *d, const char *field)
{
    size_t mark = d->path.len;
    if (d->path.len)
        corral_buf_putc(&d->path, '.');
    corral_buf_puts(&d->path, field);
    return mark;
}

size_t corral__dec_enter_index(corral__dec_t *d, size_t i)
{
    size_t mark = d->path.len;
    corral_buf_printf(&d->path, "[%zu]", i);
    return mark;
}

void corral__dec_leave(corral__dec_t *d, size_t mark)
{
    d->path.len = mark;
    if (d->path.p)
        d->path.p[mark] = '\0';
}

static void dec_report(corral__dec_t *d, corral_severity_t sev, const corral_val_t *v,
                       const char *path, const char *fmt, va_list ap) CORRAL_PRINTF(5, 0);

static void dec_report(corral__dec_t *d, corral_severity_t sev, const corral_val_t *v,
                       const char *path, const char *fmt, va_list ap)
{
    int line = v && v->line ? v->line : d->line;
    int col = v && v->line ? v->col : d->col;
    if (sev == CORRAL_SEV_ERROR)
        d->errors++;
    corral_diag_vadd(d->diag, sev, d->file, line, col, path, fmt, ap);
}

void corral__dec_err(corral__dec_t *d, const corral_val_t *v, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    dec_report(d, CORRAL_SEV_ERROR, v, corral_buf_str(&d->path), fmt, ap);
    va_end(ap);
}

void corral__dec_warn(corral__dec_t *d, const corral_val_t *v, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    dec_report(d, CORRAL_SEV_WARNING, v, corral_buf_str(&d->path), fmt, ap);
    va_end(ap);
}

void corral__dec_err_field(corral__dec_t *d, const corral_val_t *v, const char *field,
                           const char *fmt, ...)
{
    size_t m = corral__dec_enter(d, field);
    va_list ap;
    va_start(ap, fmt);
    dec_report(d, CORRAL_SEV_ERROR, v, corral_buf_str(&d->path), fmt, ap);
    va_end(ap);
    corral__dec_leave(d, m);
}

/* A short, quoted rendering of a scalar for messages. */
static void describe(const corral_val_t *v, char *out, size_t len)
{
    if (!v || v->kind == CORRAL_VAL_NULL) {
        snprintf(out, len, "nothing (null)");
    } else if (v->kind == CORRAL_VAL_SEQ) {
        snprintf(out, len, "a list");
    } else if (v->kind == CORRAL_VAL_MAP) {
        snprintf(out, len, "a mapping");
    } else {
        const char *what = corral_val_kind_name(v->kind);
        int n = v->len > 40 ? 40 : (int)v->len;
        snprintf(out, len, "%s \"%.*s%s\"", what, n, v->s, v->len > 40 ? "..." : "");
    }
}

static const char *article(corral_val_kind_t k)
{
    return k == CORRAL_VAL_INT ? "an" : "a";
}

bool corral__dec_expect(corral__dec_t *d, const corral_val_t *v, corral_val_kind_t kind)
{
    if (v && v->kind == kind)
        return true;
    size_t klen;
    if (kind == CORRAL_VAL_MAP && v && v->kind == CORRAL_VAL_STR &&
        corral_hint_colon_nospace(v->s, v->len, &klen)) {
        char key[128];
        snprintf(key, sizeof(key), "%.*s", (int)(klen < 127 ? klen : 127), v->s);
        size_t m = corral__dec_enter(d, key);
        corral__dec_err(d, v, "missing space after ':' in \"%s\"; did you mean `%s: %s`?", v->s,
                        key, v->s + klen + 1);
        corral__dec_leave(d, m);
        return false;
    }
    if (kind == CORRAL_VAL_SEQ && v && v->kind == CORRAL_VAL_STR && v->len > 1 && v->s[0] == '-' &&
        v->s[1] != ' ' && v->s[1] != '-') {
        corral__dec_err(d, v,
                        "expected a list, got \"%s\"; a list item needs a space after "
                        "'-': did you mean `- %s`?",
                        v->s, v->s + 1);
        return false;
    }
    if (kind == CORRAL_VAL_SEQ && v && v->kind == CORRAL_VAL_MAP && v->n > 0 &&
        v->pairs[0].key->s[0] == '-' && v->pairs[0].key->len > 1) {
        const corral_val_t *k = v->pairs[0].key;
        corral__dec_err(d, k,
                        "expected a list, got a mapping with key \"%s\"; a list item needs a "
                        "space after '-': did you mean `- %s:`?",
                        k->s, k->s + 1);
        return false;
    }
    char got[80];
    describe(v, got, sizeof(got));
    corral__dec_err(d, v, "expected %s %s, got %s", article(kind), corral_val_kind_name(kind), got);
    return false;
}

/* An unknown key: a typo of a known field, a missing space after '-', or a
 * field Corral does not know (kept, with a warning). */
static void dec_unknown(corral__dec_t *d, const corral_val_t *key, const corral__field_t *fields,
                        size_t n)
{
    const char *names[128];
    size_t nn = n < 128 ? n : 128;
    for (size_t i = 0; i < nn; i++)
        names[i] = fields[i].name;
    size_t m = corral__dec_enter(d, key->s);
    if (key->s[0] == '-' && key->len > 1) {
        const char *rest = key->s + 1;
        corral__dec_err(d, key,
                        "\"%s\" is not a field: a list item needs a space after '-'; did you "
                        "mean `- %s:`?",
                        key->s, rest);
    } else {
        const char *best = corral_hint_closest(key->s, names, nn);
        if (best)
            corral__dec_warn(d, key, "unknown field \"%s\"; did you mean `%s`?", key->s, best);
        else
            corral__dec_warn(d, key, "unknown field \"%s\" (kept as written; Corral ignores it)",
                             key->s);
    }
    corral__dec_leave(d, m);
}

bool corral__dec_map(corral__dec_t *d, const corral_val_t *v, const corral__field_t *fields,
                     size_t nfields, void *base)
{
    if (!v || v->kind == CORRAL_VAL_NULL)
        return true; /* null: every field unset */
    if (!corral__dec_expect(d, v, CORRAL_VAL_MAP))
        return false;
    for (size_t i = 0; i < v->n; i++) {
        const corral_val_t *key = v->pairs[i].key;
        const corral__field_t *f = NULL;
        for (size_t j = 0; j < nfields; j++) {
            if (strcmp(fields[j].name, key->s) == 0) {
                f = &fields[j];
                break;
            }
        }
        if (!f) {
            dec_unknown(d, key, fields, nfields);
            continue;
        }
        if (!f->fn)
            continue;
        size_t m = corral__dec_enter(d, key->s);
        f->fn(d, v->pairs[i].val, (char *)base + f->off);
        corral__dec_leave(d, m);
    }
    return true;
}

void corral__dec_seq(corral__dec_t *d, const corral_val_t *v, size_t elem_size, corral__dec_fn fn,
                     void **items, size_t *n)
{
    *items = NULL;
    *n = 0;
    if (!v || v->kind == CORRAL_VAL_NULL)
        return;
    if (!corral__dec_expect(d, v, CORRAL_VAL_SEQ))
        return;
    if (v->n == 0)
        return;
    char *arr = corral_arena_alloc(d->a, v->n * elem_size);
    for (size_t i = 0; i < v->n; i++) {
        size_t m = corral__dec_enter_index(d, i);
        fn(d, v->items[i], arr + i * elem_size);
        corral__dec_leave(d, m);
    }
    *items = arr;
    *n = v->n;
}

/* --- primitives -------------------------------------------------------------- */

void corral__dec_str(corral__dec_t *d, const corral_val_t *v, void *out)
{
    const char **s = out;
    if (!v || v->kind == CORRAL_VAL_NULL)
        return;
    if (v->kind == CORRAL_VAL_STR) {
        *s = v->s;
        if (strlen(v->s) != v->len) /* a \u0000 escape: C code would see a shorter string */
            corral__dec_err(d, v, "must not contain a NUL character (\\u0000)");
        return;
    }
    if (v->kind == CORRAL_VAL_INT || v->kind == CORRAL_VAL_FLOAT || v->kind == CORRAL_VAL_BOOL) {
        corral__dec_err(d, v, "expected a string, got %s %s; quote it: \"%s\"",
                        corral_val_kind_name(v->kind), v->s, v->s);
        *s = v->s; /* keep going with the text */
        return;
    }
    corral__dec_expect(d, v, CORRAL_VAL_STR);
}

static bool dec_integer(corral__dec_t *d, const corral_val_t *v, int64_t lo, int64_t hi,
                        int64_t *out)
{
    if (v->kind == CORRAL_VAL_INT) {
        if (v->u.i < lo || v->u.i > hi) {
            corral__dec_err(d, v, "%lld is out of range [%lld, %lld]", (long long)v->u.i,
                            (long long)lo, (long long)hi);
            return false;
        }
        *out = v->u.i;
        return true;
    }
    if (v->kind == CORRAL_VAL_FLOAT) {
        corral__dec_err(d, v, "expected a whole number, got %s", v->s);
        return false;
    }
    if (v->kind == CORRAL_VAL_STR && v->len) {
        char *end = NULL;
        (void)strtoll(v->s, &end, 10);
        if (end && *end == '\0') {
            corral__dec_err(d, v, "expected an integer, got string \"%s\"; remove the quotes",
                            v->s);
            return false;
        }
    }
    corral__dec_expect(d, v, CORRAL_VAL_INT);
    return false;
}

void corral__dec_int32(corral__dec_t *d, const corral_val_t *v, void *out)
{
    int64_t x;
    if (!v || v->kind == CORRAL_VAL_NULL)
        return;
    if (dec_integer(d, v, INT32_MIN, INT32_MAX, &x))
        *(int32_t *)out = (int32_t)x;
}

void corral__dec_int64(corral__dec_t *d, const corral_val_t *v, void *out)
{
    int64_t x;
    if (!v || v->kind == CORRAL_VAL_NULL)
        return;
    if (dec_integer(d, v, INT64_MIN, INT64_MAX, &x))
        *(int64_t *)out = x;
}

void corral__dec_opt_i32(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_opt_i32_t *o = out;
    int64_t x;
    if (!v || v->kind == CORRAL_VAL_NULL)
        return;
    if (dec_integer(d, v, INT32_MIN, INT32_MAX, &x)) {
        o->set = true;
        o->v = (int32_t)x;
    }
}

void corral__dec_opt_i64(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_opt_i64_t *o = out;
    int64_t x;
    if (!v || v->kind == CORRAL_VAL_NULL)
        return;
    if (dec_integer(d, v, INT64_MIN, INT64_MAX, &x)) {
        o->set = true;
        o->v = x;
    }
}

void corral__dec_bool(corral__dec_t *d, const corral_val_t *v, void *out)
{
    if (!v || v->kind == CORRAL_VAL_NULL)
        return;
    if (v->kind == CORRAL_VAL_BOOL) {
        *(bool *)out = v->u.b;
        return;
    }
    if (v->kind == CORRAL_VAL_STR) {
        static const char *const yaml11[] = {"yes", "no",  "on",  "off", "Yes", "No",
                                             "On",  "Off", "YES", "NO",  "y",   "n"};
        for (size_t i = 0; i < CORRAL_ARRAY_LEN(yaml11); i++) {
            if (strcmp(v->s, yaml11[i]) == 0) {
                corral__dec_err(d, v, "expected a boolean, got \"%s\"; write true or false", v->s);
                return;
            }
        }
        if (strcmp(v->s, "true") == 0 || strcmp(v->s, "false") == 0) {
            corral__dec_err(d, v, "expected a boolean, got string \"%s\"; remove the quotes", v->s);
            return;
        }
    }
    corral__dec_expect(d, v, CORRAL_VAL_BOOL);
}

/* A map of strings; values may hold NUL characters when any_text (the
 * typed view then holds the text up to the first; the value tree all of it). */
static void dec_strmap(corral__dec_t *d, const corral_val_t *v, corral_strmap_t *m, bool any_text)
{
    m->items = NULL;
    m->n = 0;
    if (!v || v->kind == CORRAL_VAL_NULL)
        return;
    if (!corral__dec_expect(d, v, CORRAL_VAL_MAP))
        return;
    m->items = corral_arena_alloc(d->a, (v->n ? v->n : 1) * sizeof(*m->items));
    for (size_t i = 0; i < v->n; i++) {
        const corral_val_t *key = v->pairs[i].key, *val = v->pairs[i].val;
        size_t mk = corral__dec_enter(d, key->s);
        const char *s = "";
        if (strlen(key->s) != key->len)
            corral__dec_err(d, key, "a key must not contain a NUL character (\\u0000)");
        if (val->kind == CORRAL_VAL_STR && any_text)
            s = val->s;
        else if (val->kind != CORRAL_VAL_NULL)
            corral__dec_str(d, val, &s);
        corral__dec_leave(d, mk);
        m->items[m->n].key = key->s;
        m->items[m->n].value = s ? s : "";
        m->n++;
    }
}

void corral__dec_strmap(corral__dec_t *d, const corral_val_t *v, void *out)
{
    dec_strmap(d, v, out, false);
}

void corral__dec_strmap_text(corral__dec_t *d, const corral_val_t *v, void *out)
{
    dec_strmap(d, v, out, true);
}

static void dec_strlist_item(corral__dec_t *d, const corral_val_t *v, void *out)
{
    const char **s = out;
    *s = "";
    corral__dec_str(d, v, s);
    if (!*s)
        *s = "";
}

void corral__dec_strlist(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_strlist_t *l = out;
    corral__dec_seq(d, v, sizeof(const char *), dec_strlist_item, (void **)&l->items, &l->n);
}

void corral__dec_reslist(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_reslist_t *l = out;
    l->items = NULL;
    l->n = 0;
    if (!v || v->kind == CORRAL_VAL_NULL)
        return;
    if (!corral__dec_expect(d, v, CORRAL_VAL_MAP))
        return;
    l->items = corral_arena_alloc(d->a, (v->n ? v->n : 1) * sizeof(*l->items));
    for (size_t i = 0; i < v->n; i++) {
        const corral_val_t *q = v->pairs[i].val;
        const char *name = v->pairs[i].key->s;
        size_t m = corral__dec_enter(d, name);
        char why[256];
        corral_res_t *r = &l->items[l->n];
        if (q->kind != CORRAL_VAL_STR && q->kind != CORRAL_VAL_INT && q->kind != CORRAL_VAL_FLOAT) {
            char got[80];
            describe(q, got, sizeof(got));
            corral__dec_err(d, q, "expected a quantity such as 2, 500m or 16Gi, got %s", got);
        } else if (corral_qty_parse(q->s, q->len, &r->qty, why, sizeof(why)) != 0) {
            corral__dec_err(d, q, "%s", why);
        } else if (corral_qty_sign(&r->qty) < 0) {
            corral__dec_err(d, q, "must be greater than or equal to 0, got %s", q->s);
        } else {
            r->name = name;
            l->n++;
        }
        corral__dec_leave(d, m);
    }
}

void corral__dec_time(corral__dec_t *d, const corral_val_t *v, void *out)
{
    if (!v || v->kind == CORRAL_VAL_NULL)
        return;
    if (!corral__dec_expect(d, v, CORRAL_VAL_STR))
        return;
    if (corral_time_parse(v->s, v->len, (int64_t *)out) != 0)
        corral__dec_err(d, v, "\"%s\" is not an RFC 3339 time such as 2024-05-01T12:00:00Z", v->s);
}

void corral__dec_duration(corral__dec_t *d, const corral_val_t *v, void *out)
{
    if (!v || v->kind == CORRAL_VAL_NULL)
        return;
    if (v->kind == CORRAL_VAL_INT) {
        corral__dec_err(d, v, "a duration needs a unit: %s s, m or h (e.g. \"%sm\")", v->s, v->s);
        return;
    }
    if (!corral__dec_expect(d, v, CORRAL_VAL_STR))
        return;
    if (corral_duration_parse(v->s, v->len, (int64_t *)out) != 0)
        corral__dec_err(d, v, "\"%s\" is not a duration such as 45s, 90m or 1h30m", v->s);
}

void corral__dec_raw(corral__dec_t *d, const corral_val_t *v, void *out)
{
    (void)d;
    *(const corral_val_t **)out = v;
}

void corral__dec_enum(corral__dec_t *d, const corral_val_t *v, const char **out,
                      const char *const *allowed, size_t n)
{
    const char *s = NULL;
    corral__dec_str(d, v, &s);
    if (!s)
        return;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(s, allowed[i]) == 0) {
            *out = allowed[i];
            return;
        }
    }
    char list[256] = "";
    size_t o = 0;
    for (size_t i = 0; i < n && o < sizeof(list); i++)
        o += (size_t)snprintf(list + o, sizeof(list) - o, "%s%s", i ? ", " : "", allowed[i]);
    const char *best = corral_hint_closest(s, allowed, n);
    if (best)
        corral__dec_err(d, v, "unsupported value \"%s\"; did you mean `%s`? (one of: %s)", s, best,
                        list);
    else
        corral__dec_err(d, v, "unsupported value \"%s\"; must be one of: %s", s, list);
}

/* --- conditions --------------------------------------------------------------- */

static const corral__field_t condition_fields[] = {
    CORRAL__F("type", corral__dec_str, corral_condition_t, type),
    CORRAL__F("status", corral__dec_str, corral_condition_t, status),
    CORRAL__F("reason", corral__dec_str, corral_condition_t, reason),
    CORRAL__F("message", corral__dec_str, corral_condition_t, message),
    CORRAL__F("lastTransitionTime", corral__dec_time, corral_condition_t, last_transition_us),
    CORRAL__KEEP("lastProbeTime"),
    CORRAL__KEEP("lastHeartbeatTime"),
    CORRAL__KEEP("lastUpdateTime"),
    CORRAL__KEEP("observedGeneration"),
    CORRAL__KEEP("transitionID"),
};

static void dec_condition(corral__dec_t *d, const corral_val_t *v, void *out)
{
    CORRAL__DEC_MAP(d, v, condition_fields, out);
}

void corral__dec_conditions(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_conditions_t *c = out;
    corral__dec_seq(d, v, sizeof(corral_condition_t), dec_condition, (void **)&c->items, &c->n);
}

/* --- label selectors (matchLabels / matchExpressions) --------------------------- */

typedef struct sel_expr {
    const char *key;
    const char *op;
    corral_strlist_t values;
} sel_expr_t;

static void dec_sel_op(corral__dec_t *d, const corral_val_t *v, void *out)
{
    static const char *const ops[] = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"};
    corral__dec_enum(d, v, out, ops, CORRAL_ARRAY_LEN(ops));
}

static const corral__field_t sel_expr_fields[] = {
    CORRAL__F("key", corral__dec_str, sel_expr_t, key),
    CORRAL__F("operator", dec_sel_op, sel_expr_t, op),
    CORRAL__F("values", corral__dec_strlist, sel_expr_t, values),
};

static void dec_sel_expr(corral__dec_t *d, const corral_val_t *v, void *out)
{
    CORRAL__DEC_MAP(d, v, sel_expr_fields, out);
}

/* Turn one decoded expression into a requirement; checks the value rules.
 * allow_cmp: Gt/Lt are allowed (node affinity) or not (label selectors). */
static bool sel_req_from_expr(corral__dec_t *d, const corral_val_t *at, const sel_expr_t *e,
                              bool allow_cmp, corral_sel_req_t *r)
{
    if (!e->key || !*e->key) {
        corral__dec_err_field(d, at, "key", "required");
        return false;
    }
    const char *kerr = corral_label_key_error(e->key);
    if (kerr)
        corral__dec_err_field(d, at, "key", "invalid label key \"%s\": %s", e->key, kerr);
    if (!e->op) {
        corral__dec_err_field(d, at, "operator", "required (In, NotIn, Exists or DoesNotExist)");
        return false;
    }
    r->key = e->key;
    r->values = e->values.items;
    r->nvalues = e->values.n;
    if (!strcmp(e->op, "In") || !strcmp(e->op, "NotIn")) {
        r->op = e->op[0] == 'I' ? CORRAL_SEL_IN : CORRAL_SEL_NOTIN;
        if (e->values.n == 0)
            corral__dec_err_field(d, at, "values", "must be non-empty for operator %s", e->op);
    } else if (!strcmp(e->op, "Exists") || !strcmp(e->op, "DoesNotExist")) {
        r->op = e->op[0] == 'E' ? CORRAL_SEL_EXISTS : CORRAL_SEL_NOTEXISTS;
        if (e->values.n != 0)
            corral__dec_err_field(d, at, "values", "must be empty for operator %s", e->op);
    } else if (allow_cmp) {
        r->op = e->op[0] == 'G' ? CORRAL_SEL_GT : CORRAL_SEL_LT;
        char *end = NULL;
        if (e->values.n != 1 || (strtoll(e->values.items[0], &end, 10), *end != '\0'))
            corral__dec_err_field(d, at, "values", "operator %s needs exactly one integer value",
                                  e->op);
    } else {
        corral__dec_err_field(d, at, "operator", "%s is only valid in node affinity", e->op);
        return false;
    }
    return true;
}

/* Decode a list of {key, operator, values} into sel (appending). */
static void dec_sel_exprs(corral__dec_t *d, const corral_val_t *v, bool allow_cmp,
                          corral_selector_t *sel)
{
    sel_expr_t *ex = NULL;
    size_t n = 0;
    corral__dec_seq(d, v, sizeof(sel_expr_t), dec_sel_expr, (void **)&ex, &n);
    if (!n)
        return;
    corral_sel_req_t *reqs = corral_arena_alloc(d->a, (sel->n + n) * sizeof(*reqs));
    if (sel->n)
        memcpy(reqs, sel->reqs, sel->n * sizeof(*reqs));
    for (size_t i = 0; i < n; i++) {
        size_t m = corral__dec_enter_index(d, i);
        if (sel_req_from_expr(d, v->items[i], &ex[i], allow_cmp, &reqs[sel->n]))
            sel->n++;
        corral__dec_leave(d, m);
    }
    sel->reqs = reqs;
}

void corral__dec_node_sel_exprs(corral__dec_t *d, const corral_val_t *v, void *out)
{
    dec_sel_exprs(d, v, true, out);
}

static void dec_match_labels(corral__dec_t *d, const corral_val_t *v, corral_selector_t *sel)
{
    corral_strmap_t m;
    corral__dec_strmap(d, v, &m);
    if (!m.n)
        return;
    corral_sel_req_t *reqs = corral_arena_alloc(d->a, (sel->n + m.n) * sizeof(*reqs));
    if (sel->n)
        memcpy(reqs, sel->reqs, sel->n * sizeof(*reqs));
    for (size_t i = 0; i < m.n; i++) {
        corral_sel_req_t *r = &reqs[sel->n++];
        r->key = m.items[i].key;
        r->op = CORRAL_SEL_EQ;
        r->values = corral_arena_alloc(d->a, sizeof(const char *));
        r->values[0] = m.items[i].value;
        r->nvalues = 1;
        const char *err = corral_label_key_error(r->key);
        if (err)
            corral__dec_err_field(d, v->pairs[i].key, r->key, "invalid label key: %s", err);
        err = corral_label_value_error(r->values[0]);
        if (err)
            corral__dec_err_field(d, v->pairs[i].val, r->key, "invalid label value: %s", err);
    }
    sel->reqs = reqs;
}

void corral__dec_label_selector(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_selector_t *sel = out;
    sel->reqs = NULL;
    sel->n = 0;
    if (!v || v->kind == CORRAL_VAL_NULL)
        return;
    if (!corral__dec_expect(d, v, CORRAL_VAL_MAP))
        return;
    for (size_t i = 0; i < v->n; i++) {
        const char *k = v->pairs[i].key->s;
        size_t m = corral__dec_enter(d, k);
        if (strcmp(k, "matchLabels") == 0)
            dec_match_labels(d, v->pairs[i].val, sel);
        else if (strcmp(k, "matchExpressions") == 0)
            dec_sel_exprs(d, v->pairs[i].val, false, sel);
        else
            corral__dec_err(d, v->pairs[i].key,
                            "unknown field \"%s\"; a label selector has matchLabels and "
                            "matchExpressions",
                            k);
        corral__dec_leave(d, m);
    }
}
