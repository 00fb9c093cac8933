/*
 * Patch documents applied to value trees: JSON merge patch (RFC 7386) and
 * JSON patch (RFC 6902, with RFC 6901 pointers). Pure functions over trees
 * in an arena, so they are fuzzed on their own (tests/fuzz/fuzz_patch.c).
 * The patched tree then goes through the same checks as an update.
 *
 * Bounds (a small patch must not build gigabytes): a JSON patch has at most
 * CORRAL__PATCH_MAX_OPS operations (kube's 10,000; more is 413), and what
 * its copy operations add is measured before copying, at most the request
 * body limit in all (kube's AccumulatedCopySizeLimit; more is 422). The
 * caller checks any patch's result with corral__val_fits.
 */
#include <stdio.h>
#include <string.h>

#include "apiserver/apiserver_int.h"

/* --- size of a tree ------------------------------------------------------------------- */

/* Approximate JSON bytes of v (quotes, commas, colons, brackets), adding
 * to *acc and stopping as soon as *acc passes max or depth passes
 * max_depth: the walk never costs more than about max / 2 nodes. */
static bool measure(const corral_val_t *v, size_t *acc, size_t max, int depth, int max_depth)
{
    if (!v) {
        *acc += 4;
        return *acc <= max;
    }
    if (depth > max_depth)
        return false;
    if (v->kind == CORRAL_VAL_MAP) {
        *acc += 2;
        for (size_t i = 0; i < v->n && *acc <= max; i++) {
            *acc += v->pairs[i].key->len + 4;
            if (!measure(v->pairs[i].val, acc, max, depth + 1, max_depth))
                return false;
        }
    } else if (v->kind == CORRAL_VAL_SEQ) {
        *acc += 2;
        for (size_t i = 0; i < v->n && *acc <= max; i++)
            if (!measure(v->items[i], acc, max, depth + 1, max_depth))
                return false;
    } else {
        *acc += v->len + 3;
    }
    return *acc <= max;
}

bool corral__val_fits(const corral_val_t *v, size_t max_bytes, int max_depth, size_t *size)
{
    size_t acc = 0;
    bool ok = measure(v, &acc, max_bytes, 0, max_depth);
    if (size)
        *size = acc;
    return ok;
}

/* --- merge patch -------------------------------------------------------------------- */

static corral_val_t *merge(corral_arena_t *a, corral_val_t *target, const corral_val_t *patch,
                           int depth)
{
    if (!patch || patch->kind != CORRAL_VAL_MAP || depth > 200)
        return corral_val_copy(a, patch);
    if (!target || target->kind != CORRAL_VAL_MAP)
        target = corral_val_new(a, CORRAL_VAL_MAP);
    for (size_t i = 0; i < patch->n; i++) {
        const char *k = patch->pairs[i].key->s;
        const corral_val_t *v = patch->pairs[i].val;
        if (!v || v->kind == CORRAL_VAL_NULL)
            corral_val_del(target, k);
        else
            corral_val_set(a, target, k, merge(a, corral_val_get(target, k), v, depth + 1));
    }
    return target;
}

int corral__merge_patch(corral_arena_t *a, corral_val_t **target, const corral_val_t *patch)
{
    *target = merge(a, *target, patch, 0);
    return 0;
}

/* --- JSON patch ------------------------------------------------------------------------ */

#define MAX_TOKENS 128

typedef struct ptr {
    char *tok[MAX_TOKENS];
    size_t n;
} ptr_t;

/* Split an RFC 6901 pointer ("/a/b~1c/0") into unescaped tokens. */
static bool ptr_parse(corral_arena_t *a, const char *s, ptr_t *p, char *why, size_t wl)
{
    p->n = 0;
    if (!*s)
        return true;
    if (*s != '/') {
        snprintf(why, wl, "path \"%s\" must start with '/'", s);
        return false;
    }
    while (*s == '/') {
        s++;
        const char *end = strchr(s, '/');
        size_t len = end ? (size_t)(end - s) : strlen(s);
        if (p->n == MAX_TOKENS) {
            snprintf(why, wl, "path is too deep");
            return false;
        }
        char *t = corral_arena_alloc(a, len + 1);
        size_t o = 0;
        for (size_t i = 0; i < len; i++) {
            if (s[i] == '~') {
                if (i + 1 < len && (s[i + 1] == '0' || s[i + 1] == '1')) {
                    t[o++] = s[i + 1] == '0' ? '~' : '/';
                    i++;
                    continue;
                }
                snprintf(why, wl, "bad escape in path");
                return false;
            }
            t[o++] = s[i];
        }
        t[o] = '\0';
        p->tok[p->n++] = t;
        s += len;
    }
    return true;
}

/* Array index: digits without leading zeros; "-" is len (append) when
 * allow_end. Returns -1 when invalid or out of range. */
static long index_of(const char *t, size_t len, bool allow_end)
{
    if (allow_end && strcmp(t, "-") == 0)
        return (long)len;
    if (!*t || (t[0] == '0' && t[1]) || strlen(t) > 9)
        return -1;
    long v = 0;
    for (const char *c = t; *c; c++) {
        if (*c < '0' || *c > '9')
            return -1;
        v = v * 10 + (*c - '0');
    }
    return v <= (long)len - (allow_end ? 0 : 1) ? v : -1;
}

static corral_val_t *child(corral_val_t *v, const char *t)
{
    if (!v)
        return NULL;
    if (v->kind == CORRAL_VAL_MAP)
        return corral_val_get(v, t);
    if (v->kind == CORRAL_VAL_SEQ) {
        long i = index_of(t, v->n, false);
        return i >= 0 ? v->items[i] : NULL;
    }
    return NULL;
}

static corral_val_t *get_at(corral_val_t *root, const ptr_t *p, size_t upto)
{
    corral_val_t *v = root;
    for (size_t i = 0; i < upto && v; i++)
        v = child(v, p->tok[i]);
    return v;
}

static void seq_insert(corral_arena_t *a, corral_val_t *seq, size_t at, corral_val_t *v)
{
    corral_val_push(a, seq, v);
    memmove(&seq->items[at + 1], &seq->items[at], (seq->n - 1 - at) * sizeof(corral_val_t *));
    seq->items[at] = v;
}

static int add_at(corral_arena_t *a, corral_val_t **root, const ptr_t *p, corral_val_t *v,
                  char *why, size_t wl)
{
    if (p->n == 0) {
        *root = v;
        return 0;
    }
    corral_val_t *parent = get_at(*root, p, p->n - 1);
    const char *last = p->tok[p->n - 1];
    if (parent && parent->kind == CORRAL_VAL_MAP) {
        corral_val_set(a, parent, last, v);
        return 0;
    }
    if (parent && parent->kind == CORRAL_VAL_SEQ) {
        long i = index_of(last, parent->n, true);
        if (i >= 0) {
            seq_insert(a, parent, (size_t)i, v);
            return 0;
        }
    }
    snprintf(why, wl, "no place to add at the path");
    return CORRAL_EINVAL;
}

static int remove_at(corral_val_t **root, const ptr_t *p, corral_val_t **removed, char *why,
                     size_t wl)
{
    if (p->n == 0) {
        snprintf(why, wl, "cannot remove the whole document");
        return CORRAL_EINVAL;
    }
    corral_val_t *parent = get_at(*root, p, p->n - 1);
    const char *last = p->tok[p->n - 1];
    *removed = child(parent, last);
    if (!*removed) {
        snprintf(why, wl, "the path does not exist");
        return CORRAL_EINVAL;
    }
    if (parent->kind == CORRAL_VAL_MAP) {
        corral_val_del(parent, last);
    } else {
        long i = index_of(last, parent->n, false);
        memmove(&parent->items[i], &parent->items[i + 1],
                (parent->n - (size_t)i - 1) * sizeof(corral_val_t *));
        parent->n--;
    }
    return 0;
}

/* Replace in place, keeping the key's position (maps) or index (lists). */
static int replace_at(corral_arena_t *a, corral_val_t **root, const ptr_t *p, corral_val_t *v,
                      char *why, size_t wl)
{
    if (p->n == 0) {
        *root = v;
        return 0;
    }
    corral_val_t *parent = get_at(*root, p, p->n - 1);
    const char *last = p->tok[p->n - 1];
    if (!child(parent, last)) {
        snprintf(why, wl, "the path does not exist");
        return CORRAL_EINVAL;
    }
    if (parent->kind == CORRAL_VAL_MAP)
        corral_val_set(a, parent, last, v);
    else
        parent->items[index_of(last, parent->n, false)] = v;
    return 0;
}

typedef struct jp_op {
    const char *op, *path, *from;
    const corral_val_t *value;
} jp_op_t;

static int apply_op(corral_arena_t *a, corral_val_t **root, const jp_op_t *o, size_t *copied,
                    char *why, size_t wl)
{
    ptr_t p, f;
    corral_val_t *old = NULL;
    if (!ptr_parse(a, o->path, &p, why, wl))
        return CORRAL_EINVAL;
    if (!strcmp(o->op, "add"))
        return add_at(a, root, &p, corral_val_copy(a, o->value), why, wl);
    if (!strcmp(o->op, "remove"))
        return remove_at(root, &p, &old, why, wl);
    if (!strcmp(o->op, "replace"))
        return replace_at(a, root, &p, corral_val_copy(a, o->value), why, wl);
    if (!strcmp(o->op, "test")) {
        if (corral_val_equal(get_at(*root, &p, p.n), o->value))
            return 0;
        snprintf(why, wl, "test failed at \"%s\"", o->path);
        return CORRAL_EINVAL;
    }
    if (!o->from || !ptr_parse(a, o->from, &f, why, wl)) {
        if (!o->from)
            snprintf(why, wl, "\"%s\" needs \"from\"", o->op);
        return CORRAL_EINVAL;
    }
    corral_val_t *src = get_at(*root, &f, f.n);
    if (!src) {
        snprintf(why, wl, "\"from\" path does not exist");
        return CORRAL_EINVAL;
    }
    if (!strcmp(o->op, "copy")) {
        /* Measure before copying: doubling a value 30 times is gigabytes. */
        size_t size = 0, left = CORRAL_APISERVER_MAX_BODY - *copied;
        if (!corral__val_fits(src, left, CORRAL__PATCH_MAX_DEPTH, &size)) {
            snprintf(why, wl,
                     "Unable to complete the copy, the accumulated size increase of copy is "
                     "over the limit %zu",
                     CORRAL_APISERVER_MAX_BODY);
            return CORRAL_EINVAL;
        }
        *copied += size;
        return add_at(a, root, &p, corral_val_copy(a, src), why, wl);
    }
    if (!strcmp(o->op, "move")) {
        size_t fl = strlen(o->from);
        if (strncmp(o->path, o->from, fl) == 0 && (o->path[fl] == '/' || !o->path[fl]) &&
            strcmp(o->path, o->from) != 0) {
            snprintf(why, wl, "cannot move a value into itself");
            return CORRAL_EINVAL;
        }
        if (remove_at(root, &f, &old, why, wl) != 0)
            return CORRAL_EINVAL;
        return add_at(a, root, &p, old, why, wl);
    }
    snprintf(why, wl, "unknown op \"%s\"", o->op);
    return CORRAL_EINVAL;
}

int corral__json_patch(corral_arena_t *a, corral_val_t **target, const corral_val_t *ops, char *why,
                       size_t why_len)
{
    if (!ops || ops->kind != CORRAL_VAL_SEQ) {
        snprintf(why, why_len, "a JSON patch must be a list of operations");
        return CORRAL_EINVAL;
    }
    if (ops->n > CORRAL__PATCH_MAX_OPS) {
        snprintf(why, why_len, "The allowed maximum operations in a JSON patch is %d, got %zu",
                 CORRAL__PATCH_MAX_OPS, ops->n);
        return CORRAL_ETOOBIG;
    }
    size_t copied = 0;
    for (size_t i = 0; i < ops->n; i++) {
        const corral_val_t *o = ops->items[i];
        jp_op_t op = {corral_val_get_str(o, "op"), corral_val_get_str(o, "path"),
                      corral_val_get_str(o, "from"), corral_val_get(o, "value")};
        if (!op.op || !op.path) {
            snprintf(why, why_len, "operation %zu needs \"op\" and \"path\"", i);
            return CORRAL_EINVAL;
        }
        bool needs_value =
            !strcmp(op.op, "add") || !strcmp(op.op, "replace") || !strcmp(op.op, "test");
        if (needs_value && !corral_val_get(o, "value")) {
            snprintf(why, why_len, "operation %zu (%s) needs \"value\"", i, op.op);
            return CORRAL_EINVAL;
        }
        char msg[200] = "";
        if (apply_op(a, target, &op, &copied, msg, sizeof(msg)) != 0) {
            snprintf(why, why_len, "operation %zu (%s %s): %s", i, op.op, op.path, msg);
            return CORRAL_EINVAL;
        }
    }
    return 0;
}
