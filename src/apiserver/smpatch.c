/*
 * Strategic merge patch (application/strategic-merge-patch+json) for the
 * built-in kinds, as kube-apiserver applies it (apimachinery's
 * strategicpatch): maps merge key by key, null deletes; a list merges only
 * where upstream's Go types declare `patchStrategy:"merge"`: by its
 * `patchMergeKey` (containers by name, env by name, ports by
 * containerPort, conditions by type, ...) or, for lists of strings
 * (finalizers), as a set union; every other list (tolerations, taints,
 * rules, subjects, args) is replaced. Directives: `$patch: replace|delete`
 * on a map or a list element, `$retainKeys`, `$deleteFromPrimitiveList/<f>`
 * and `$setElementOrder/<f>` (which orders the merged list). The merge keys
 * are a table keyed by field path, below. Custom kinds (Volcano, KServe,
 * corral.dev) have no Go types to take keys from: kube-apiserver answers
 * 415 for them, and so does write.c.
 *
 * A pure function over value trees in an arena, fuzzed by
 * tests/fuzz/fuzz_smpatch.c.
 */
#include <stdio.h>
#include <string.h>

#include "apiserver/apiserver_int.h"

#define MAX_DEPTH 100

/* How a list field merges. key NULL: a set of scalars (union). */
typedef struct list_rule {
    const char *path; /* dotted field path; "[]" stands for an element of a list */
    const char *key;
} list_rule_t;

/* From the patchStrategy/patchMergeKey tags of k8s.io/api (core/v1). The
 * metadata rules hold for every built-in kind; the others only where the
 * path exists, which keeps one table for all of them. */
static const list_rule_t list_rules[] = {
    {"metadata.finalizers", NULL},
    {"metadata.ownerReferences", "uid"},
    {"spec.containers", "name"},
    {"spec.initContainers", "name"},
    {"spec.ephemeralContainers", "name"},
    {"spec.containers[].env", "name"},
    {"spec.initContainers[].env", "name"},
    {"spec.ephemeralContainers[].env", "name"},
    {"spec.containers[].ports", "containerPort"},
    {"spec.initContainers[].ports", "containerPort"},
    {"spec.ephemeralContainers[].ports", "containerPort"},
    {"spec.containers[].volumeMounts", "mountPath"},
    {"spec.initContainers[].volumeMounts", "mountPath"},
    {"spec.ephemeralContainers[].volumeMounts", "mountPath"},
    {"spec.containers[].volumeDevices", "devicePath"},
    {"spec.initContainers[].volumeDevices", "devicePath"},
    {"spec.ephemeralContainers[].volumeDevices", "devicePath"},
    {"spec.volumes", "name"},
    {"spec.imagePullSecrets", "name"},
    {"spec.hostAliases", "ip"},
    {"spec.topologySpreadConstraints", "topologyKey"},
    {"spec.schedulingGates", "name"},
    {"spec.resourceClaims", "name"},
    {"spec.podCIDRs", NULL}, /* Node */
    {"status.conditions", "type"},
    {"status.podIPs", "ip"},
    {"status.hostIPs", "ip"},
    {"status.addresses", "type"}, /* Node */
};

typedef struct sm {
    corral_arena_t *a;
    char *why;
    size_t why_len;
    bool failed;
} sm_t;

static const list_rule_t *rule_for(const char *path)
{
    /* A workload's pod template (apps/v1) merges as a pod. */
    if (strncmp(path, "spec.template.spec.", 19) == 0)
        path += 14;
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(list_rules); i++) {
        if (strcmp(list_rules[i].path, path) == 0)
            return &list_rules[i];
    }
    return NULL;
}

static void fail(sm_t *s, const char *what, const char *detail)
{
    if (!s->failed)
        snprintf(s->why, s->why_len, "%s%s", what, detail);
    s->failed = true;
}

static bool is_directive(const char *k)
{
    return k[0] == '$';
}

static const char *prefixed(const char *k, const char *prefix)
{
    size_t n = strlen(prefix);
    return strncmp(k, prefix, n) == 0 ? k + n : NULL;
}

static const char *child_path(corral_arena_t *a, const char *path, const char *key)
{
    return *path ? corral_arena_printf(a, "%s.%s", path, key) : key;
}

static corral_val_t *merge_map(sm_t *s, const corral_val_t *orig, const corral_val_t *patch,
                               const char *path, int depth, bool *deleted);

/* A value from the patch where there is nothing to merge it with: nulls
 * and directives are dropped from maps, recursively. */
static corral_val_t *fresh(sm_t *s, const corral_val_t *v, const char *path, int depth)
{
    if (v && v->kind == CORRAL_VAL_MAP) {
        bool deleted = false;
        corral_val_t *m = merge_map(s, NULL, v, path, depth + 1, &deleted);
        return deleted ? NULL : m;
    }
    if (v && v->kind == CORRAL_VAL_SEQ) {
        corral_val_t *l = corral_val_new(s->a, CORRAL_VAL_SEQ);
        const char *ep = corral_arena_printf(s->a, "%s[]", path);
        for (size_t i = 0; i < v->n; i++) {
            const corral_val_t *e = v->items[i];
            if (e && e->kind == CORRAL_VAL_MAP && corral_val_get_str(e, "$patch"))
                continue; /* a directive element has nothing to add */
            corral_val_t *c = fresh(s, e, ep, depth + 1);
            if (c)
                corral_val_push(s->a, l, c);
        }
        return l;
    }
    return corral_val_copy(s->a, v);
}

/* A value's canonical JSON: lists are merged through maps of these, so
 * that a patch of n items against a list of m costs n + m lookups, not
 * n * m comparisons. */
static const char *canon(corral_arena_t *a, const corral_val_t *v)
{
    corral_buf_t b;
    corral_buf_init(&b);
    corral_val_to_json(v, &b, false);
    const char *s = corral_arena_strndup(a, b.p ? b.p : "", b.len);
    corral_buf_fini(&b);
    return s;
}

/* Drop the NULL holes removals left in list. */
static void compact(corral_val_t *list)
{
    size_t o = 0;
    for (size_t i = 0; i < list->n; i++) {
        if (list->items[i])
            list->items[o++] = list->items[i];
    }
    list->n = o;
}

/* A list merged by key: patch elements update the element with the same
 * key, or are appended; `$patch: delete` removes it; an element
 * `{"$patch": "replace"}` makes the rest of the patch replace the list. */
static corral_val_t *merge_keyed(sm_t *s, const corral_val_t *orig, const corral_val_t *patch,
                                 const char *key, const char *path, int depth)
{
    const char *ep = corral_arena_printf(s->a, "%s[]", path);
    for (size_t i = 0; i < patch->n; i++) {
        const char *d = corral_val_get_str(patch->items[i], "$patch");
        if (d && strcmp(d, "replace") == 0)
            return fresh(s, patch, path, depth);
    }
    corral_val_t *out = orig && orig->kind == CORRAL_VAL_SEQ ? corral_val_copy(s->a, orig)
                                                             : corral_val_new(s->a, CORRAL_VAL_SEQ);
    /* Position + 1 of each key value in out (the first of duplicates). */
    corral_val_t *pos = corral_val_new(s->a, CORRAL_VAL_MAP);
    for (size_t i = 0; i < out->n; i++) {
        const corral_val_t *k = corral_val_get(out->items[i], key);
        const char *c = k ? canon(s->a, k) : NULL;
        if (c && !corral_val_get(pos, c))
            corral_val_set(s->a, pos, c, corral_val_new_int(s->a, (int64_t)i + 1));
    }
    for (size_t i = 0; i < patch->n && !s->failed; i++) {
        const corral_val_t *e = patch->items[i];
        if (!e || e->kind != CORRAL_VAL_MAP) {
            fail(s, path, ": a list merged by key takes objects");
            break;
        }
        const corral_val_t *kv = corral_val_get(e, key);
        if (!kv) {
            fail(s, path,
                 corral_arena_printf(s->a,
                                     ": an element does not contain the declared merge key "
                                     "\"%s\"",
                                     key));
            break;
        }
        const char *c = canon(s->a, kv);
        const corral_val_t *p = corral_val_get(pos, c);
        long at = p ? (long)p->u.i - 1 : -1;
        const char *d = corral_val_get_str(e, "$patch");
        bool deleted = d && strcmp(d, "delete") == 0;
        corral_val_t *m = NULL;
        if (!deleted)
            m = merge_map(s, at >= 0 ? out->items[at] : NULL, e, ep, depth + 1, &deleted);
        if (deleted || !m) {
            if (at >= 0) {
                out->items[at] = NULL; /* compacted at the end */
                corral_val_del(pos, c);
            }
        } else if (at >= 0) {
            out->items[at] = m;
        } else {
            corral_val_push(s->a, out, m);
            corral_val_set(s->a, pos, c, corral_val_new_int(s->a, (int64_t)out->n));
        }
    }
    compact(out);
    return out;
}

/* A list of scalars merged as a set: the original, then what is new. */
static corral_val_t *merge_set(sm_t *s, const corral_val_t *orig, const corral_val_t *patch)
{
    corral_val_t *out = orig && orig->kind == CORRAL_VAL_SEQ ? corral_val_copy(s->a, orig)
                                                             : corral_val_new(s->a, CORRAL_VAL_SEQ);
    corral_val_t *seen = corral_val_new(s->a, CORRAL_VAL_MAP);
    for (size_t j = 0; j < out->n; j++)
        corral_val_set(s->a, seen, canon(s->a, out->items[j]), out->items[j]);
    for (size_t i = 0; i < patch->n; i++) {
        const char *c = canon(s->a, patch->items[i]);
        if (corral_val_get(seen, c))
            continue;
        corral_val_t *v = corral_val_copy(s->a, patch->items[i]);
        corral_val_push(s->a, out, v);
        corral_val_set(s->a, seen, c, v);
    }
    return out;
}

static corral_val_t *merge_list(sm_t *s, const corral_val_t *orig, const corral_val_t *patch,
                                const char *path, int depth)
{
    const list_rule_t *rule = rule_for(path);
    if (!rule)
        return fresh(s, patch, path, depth); /* replaced, as upstream */
    if (!rule->key)
        return merge_set(s, orig, patch);
    return merge_keyed(s, orig, patch, rule->key, path, depth);
}

/* $deleteFromPrimitiveList/<field>: remove the listed scalars. */
static void delete_from_list(sm_t *s, corral_val_t *out, const char *field,
                             const corral_val_t *values)
{
    corral_val_t *l = corral_val_get(out, field);
    if (!l || l->kind != CORRAL_VAL_SEQ || !values || values->kind != CORRAL_VAL_SEQ)
        return;
    corral_val_t *drop = corral_val_new(s->a, CORRAL_VAL_MAP);
    for (size_t i = 0; i < values->n; i++)
        corral_val_set(s->a, drop, canon(s->a, values->items[i]), values->items[i]);
    for (size_t j = 0; j < l->n; j++) {
        if (corral_val_get(drop, canon(s->a, l->items[j])))
            l->items[j] = NULL;
    }
    compact(l);
}

/* $setElementOrder/<field>: the elements it names first, in its order. */
static void set_order(sm_t *s, corral_val_t *out, const char *field, const corral_val_t *order,
                      const char *path)
{
    corral_val_t *l = corral_val_get(out, field);
    if (!l || l->kind != CORRAL_VAL_SEQ || !order || order->kind != CORRAL_VAL_SEQ)
        return;
    const list_rule_t *rule = rule_for(child_path(s->a, path, field));
    corral_val_t **sorted = corral_arena_alloc(s->a, (l->n + 1) * sizeof(corral_val_t *));
    bool *used = corral_arena_alloc(s->a, l->n + 1);
    size_t n = 0;
    /* Position + 1 of each element (by key) in l: the first of equal ones. */
    corral_val_t *pos = corral_val_new(s->a, CORRAL_VAL_MAP);
    for (size_t j = 0; j < l->n; j++) {
        const corral_val_t *have =
            rule && rule->key ? corral_val_get(l->items[j], rule->key) : l->items[j];
        const char *c = have ? canon(s->a, have) : NULL;
        if (c && !corral_val_get(pos, c))
            corral_val_set(s->a, pos, c, corral_val_new_int(s->a, (int64_t)j + 1));
    }
    for (size_t i = 0; i < order->n; i++) {
        const corral_val_t *want = order->items[i];
        if (rule && rule->key)
            want = corral_val_get(want, rule->key);
        const corral_val_t *p = want ? corral_val_get(pos, canon(s->a, want)) : NULL;
        if (p && !used[p->u.i - 1]) {
            used[p->u.i - 1] = true;
            sorted[n++] = l->items[p->u.i - 1];
        }
    }
    for (size_t j = 0; j < l->n; j++) {
        if (!used[j])
            sorted[n++] = l->items[j];
    }
    memcpy(l->items, sorted, n * sizeof(corral_val_t *));
}

/* Keys of out not in $retainKeys go. */
static void retain_keys(sm_t *s, corral_val_t *out, const corral_val_t *keep)
{
    if (!keep || keep->kind != CORRAL_VAL_SEQ)
        return;
    corral_val_t *kept = corral_val_new(s->a, CORRAL_VAL_MAP);
    for (size_t j = 0; j < keep->n; j++) {
        if (keep->items[j]->kind == CORRAL_VAL_STR)
            corral_val_set(s->a, kept, keep->items[j]->s, keep->items[j]);
    }
    for (size_t i = out->n; i-- > 0;) {
        const char *k = out->pairs[i].key->s;
        if (!corral_val_get(kept, k))
            corral_val_del(out, k);
    }
}

/* The map directive of patch; false (after fail) when it is unknown. */
static bool map_directive(sm_t *s, const corral_val_t *patch, const char **d)
{
    const corral_val_t *dv = corral_val_get(patch, "$patch");
    *d = NULL;
    if (!dv)
        return true;
    if (dv->kind == CORRAL_VAL_STR &&
        (!strcmp(dv->s, "replace") || !strcmp(dv->s, "delete") || !strcmp(dv->s, "merge"))) {
        *d = dv->s;
        return true;
    }
    fail(s, "unknown patch directive: $patch: ",
         dv->kind == CORRAL_VAL_STR ? dv->s : "(not a string)");
    return false;
}

static void merge_key(sm_t *s, corral_val_t *out, const char *k, const corral_val_t *v,
                      const char *path, int depth)
{
    corral_val_t *orig = corral_val_get(out, k);
    const char *cp = child_path(s->a, path, k);
    if (!v || v->kind == CORRAL_VAL_NULL) {
        corral_val_del(out, k);
    } else if (v->kind == CORRAL_VAL_MAP) {
        bool deleted = false;
        corral_val_t *m = merge_map(s, orig && orig->kind == CORRAL_VAL_MAP ? orig : NULL, v, cp,
                                    depth, &deleted);
        if (deleted)
            corral_val_del(out, k);
        else if (m)
            corral_val_set(s->a, out, k, m);
    } else if (v->kind == CORRAL_VAL_SEQ) {
        corral_val_set(s->a, out, k, merge_list(s, orig, v, cp, depth));
    } else {
        corral_val_set(s->a, out, k, corral_val_copy(s->a, v));
    }
}

static corral_val_t *merge_map(sm_t *s, const corral_val_t *orig, const corral_val_t *patch,
                               const char *path, int depth, bool *deleted)
{
    *deleted = false;
    if (depth > MAX_DEPTH) {
        fail(s, path, ": the patch is nested too deeply");
        return NULL;
    }
    const char *d;
    if (!map_directive(s, patch, &d))
        return NULL;
    if (d && !strcmp(d, "delete")) {
        *deleted = true;
        return NULL;
    }
    bool replace = d && !strcmp(d, "replace");
    bool keep = orig && orig->kind == CORRAL_VAL_MAP && !replace;
    corral_val_t *out = keep ? corral_val_copy(s->a, orig) : corral_val_new(s->a, CORRAL_VAL_MAP);
    retain_keys(s, out, corral_val_get(patch, "$retainKeys"));
    for (size_t i = 0; i < patch->n && !s->failed; i++) {
        const char *k = patch->pairs[i].key->s;
        const corral_val_t *v = patch->pairs[i].val;
        const char *f = prefixed(k, "$deleteFromPrimitiveList/");
        if (f)
            delete_from_list(s, out, f, v);
        else if (!is_directive(k))
            merge_key(s, out, k, v, path, depth + 1);
    }
    for (size_t i = 0; i < patch->n && !s->failed; i++) {
        const char *f = prefixed(patch->pairs[i].key->s, "$setElementOrder/");
        if (f)
            set_order(s, out, f, patch->pairs[i].val, path);
    }
    return s->failed ? NULL : out;
}

int corral__strategic_patch(corral_arena_t *a, corral_val_t **target, const corral_val_t *patch,
                            char *why, size_t why_len)
{
    sm_t s = {a, why, why_len, false};
    if (!patch || patch->kind != CORRAL_VAL_MAP) {
        snprintf(why, why_len, "a strategic merge patch must be a JSON object");
        return CORRAL_EINVAL;
    }
    bool deleted = false;
    corral_val_t *out = merge_map(&s, *target, patch, "", 0, &deleted);
    if (s.failed)
        return CORRAL_EINVAL;
    if (deleted || !out) {
        snprintf(why, why_len, "the patch deletes the whole object");
        return CORRAL_EINVAL;
    }
    *target = out;
    return 0;
}

bool corral__strategic_supported(const corral_kind_info_t *k)
{
    size_t n = strlen(k->group);
    return n == 0 || strcmp(k->group, "apps") == 0 ||
           (n > 7 && strcmp(k->group + n - 7, ".k8s.io") == 0);
}

char corral__list_type(const char *path, const char **key)
{
    const list_rule_t *rule = rule_for(path);
    *key = rule ? rule->key : NULL;
    return (char)(!rule ? 'a' : rule->key ? 'k' : 's');
}
