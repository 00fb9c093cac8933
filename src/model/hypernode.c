/*
 * Volcano HyperNode (topology.volcano.sh/v1alpha1): one level of the network
 * topology tree. A HyperNode of tier T (1 = fastest) groups members, each a
 * Node or a lower-tier HyperNode, chosen by exactly one selector: an exact
 * name, an unanchored POSIX extended regular expression (checked here with
 * regcomp so a bad pattern is reported at load time, not at scheduling time),
 * or a label selector.
 */
#include <regex.h>
#include <string.h>

#include "model/model_int.h"

typedef struct exact_match {
    const char *name;
} exact_match_t;

typedef struct regex_match {
    const char *pattern;
} regex_match_t;

static const corral__field_t exact_fields[] = {
    CORRAL__F("name", corral__dec_str, exact_match_t, name),
};

static const corral__field_t regex_fields[] = {
    CORRAL__F("pattern", corral__dec_str, regex_match_t, pattern),
};

static void dec_exact(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_hn_member_t *mb = out;
    exact_match_t e = {NULL};
    if (!CORRAL__DEC_MAP(d, v, exact_fields, &e))
        return;
    mb->exact_name = e.name;
    if (!e.name || !*e.name) {
        corral__dec_err_field(d, v, "name", "required: the exact name of the member");
        return;
    }
    const char *err = corral__dns1123_subdomain_error(e.name);
    if (err)
        corral__dec_err_field(d, corral_val_get(v, "name"), "name", "invalid name \"%s\": %s",
                              e.name, err);
}

static void dec_regex(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_hn_member_t *mb = out;
    regex_match_t r = {NULL};
    if (!CORRAL__DEC_MAP(d, v, regex_fields, &r))
        return;
    mb->regex = r.pattern;
    if (!r.pattern || !*r.pattern) {
        corral__dec_err_field(d, v, "pattern",
                              "required: an extended regular expression matched against member "
                              "names, e.g. \"^rack1-node-[0-9]+$\"");
        return;
    }
    regex_t re;
    int rc = regcomp(&re, r.pattern, REG_EXTENDED | REG_NOSUB);
    if (rc != 0) {
        char why[256];
        regerror(rc, &re, why, sizeof(why));
        corral__dec_err_field(d, corral_val_get(v, "pattern"), "pattern",
                              "invalid regular expression \"%s\": %s", r.pattern, why);
        return;
    }
    regfree(&re);
}

static void dec_label_match(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_hn_member_t *mb = out;
    corral__dec_label_selector(d, v, &mb->labels);
    mb->has_labels = v && v->kind == CORRAL_VAL_MAP;
}

static const corral__field_t selector_fields[] = {
    CORRAL__WHOLE("exactMatch", dec_exact),
    CORRAL__WHOLE("regexMatch", dec_regex),
    CORRAL__WHOLE("labelMatch", dec_label_match),
};

static void dec_selector(corral__dec_t *d, const corral_val_t *v, void *out)
{
    if (!CORRAL__DEC_MAP(d, v, selector_fields, out))
        return;
    static const char *const kinds[] = {"exactMatch", "regexMatch", "labelMatch"};
    const char *seen = NULL;
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(kinds); i++) {
        const corral_val_t *sv = corral_val_get(v, kinds[i]);
        if (!sv || sv->kind == CORRAL_VAL_NULL)
            continue;
        if (seen) {
            corral__dec_err_field(d, sv, kinds[i],
                                  "only one of exactMatch, regexMatch or labelMatch may be set, "
                                  "but %s is set too; use one member per selector",
                                  seen);
            continue;
        }
        seen = kinds[i];
    }
}

static void dec_member_type(corral__dec_t *d, const corral_val_t *v, void *out)
{
    static const char *const types[] = {"Node", "HyperNode"};
    corral__dec_enum(d, v, out, types, CORRAL_ARRAY_LEN(types));
}

typedef struct member_in {
    const char *type;
    corral_hn_member_t m;
} member_in_t;

static void dec_member_selector(corral__dec_t *d, const corral_val_t *v, void *out)
{
    member_in_t *in = out;
    dec_selector(d, v, &in->m);
}

static const corral__field_t member_fields[] = {
    CORRAL__F("type", dec_member_type, member_in_t, type),
    CORRAL__WHOLE("selector", dec_member_selector),
};

static void dec_member(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_hn_member_t *mb = out;
    member_in_t in;
    memset(&in, 0, sizeof(in));
    if (!CORRAL__DEC_MAP(d, v, member_fields, &in) || !v || v->kind != CORRAL_VAL_MAP)
        return;
    *mb = in.m;
    mb->type = in.type && strcmp(in.type, "HyperNode") == 0 ? CORRAL_HN_HYPERNODE : CORRAL_HN_NODE;
    const corral_val_t *tv = corral_val_get(v, "type");
    if (!tv || tv->kind == CORRAL_VAL_NULL)
        corral__dec_err_field(d, v, "type", "required: Node or HyperNode");
    const corral_val_t *sv = corral_val_get(v, "selector");
    bool has_sel = false;
    for (size_t i = 0; sv && sv->kind == CORRAL_VAL_MAP && i < sv->n; i++)
        has_sel = has_sel || (sv->pairs[i].val->kind != CORRAL_VAL_NULL &&
                              (!strcmp(sv->pairs[i].key->s, "exactMatch") ||
                               !strcmp(sv->pairs[i].key->s, "regexMatch") ||
                               !strcmp(sv->pairs[i].key->s, "labelMatch")));
    if (!has_sel && (!sv || sv->kind == CORRAL_VAL_NULL || sv->kind == CORRAL_VAL_MAP))
        corral__dec_err_field(d, sv ? sv : v, "selector",
                              "required: one of exactMatch {name}, regexMatch {pattern} or "
                              "labelMatch {matchLabels, matchExpressions}");
}

static void dec_members(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_hypernode_t *hn = out;
    corral__dec_seq(d, v, sizeof(corral_hn_member_t), dec_member, (void **)&hn->members,
                    &hn->nmembers);
}

static const corral__field_t hn_spec_fields[] = {
    CORRAL__F("tier", corral__dec_int32, corral_hypernode_t, tier),
    CORRAL__WHOLE("members", dec_members),
    CORRAL__KEEP("tierName"),
};

static const corral__field_t hn_status_fields[] = {
    CORRAL__F("nodeCount", corral__dec_int32, corral_hypernode_t, node_count),
    CORRAL__KEEP("conditions"),
};

static void dec_hn_spec(corral__dec_t *d, const corral_val_t *v, void *out)
{
    CORRAL__DEC_MAP(d, v, hn_spec_fields, out);
}

static void dec_hn_status(corral__dec_t *d, const corral_val_t *v, void *out)
{
    CORRAL__DEC_MAP(d, v, hn_status_fields, out);
}

static const corral__field_t hn_fields[] = {
    CORRAL__TOP_FIELDS,
    CORRAL__WHOLE("spec", dec_hn_spec),
    CORRAL__WHOLE("status", dec_hn_status),
};

void corral__kind_hypernode(corral__dec_t *d, const corral_val_t *root, corral_obj_t *o)
{
    corral_hypernode_t *hn = corral_arena_alloc(d->a, sizeof(*hn));
    o->u.hn = hn;
    CORRAL__DEC_MAP(d, root, hn_fields, hn);
    const corral_val_t *spec = corral_val_get(root, "spec");
    const corral_val_t *tier = corral_val_get(spec, "tier");
    if (!tier || tier->kind == CORRAL_VAL_NULL)
        corral__dec_err_field(d, spec ? spec : root, "spec.tier",
                              "required: the HyperNode's tier, 1 for the fastest network level "
                              "(e.g. a NVLink domain or a rack switch)");
    else if (tier->kind == CORRAL_VAL_INT && hn->tier < 1)
        corral__dec_err_field(d, tier, "spec.tier", "must be at least 1 (1 is the fastest), got %d",
                              hn->tier);
    const corral_val_t *members = corral_val_get(spec, "members");
    if (hn->nmembers == 0 &&
        (!members || members->kind == CORRAL_VAL_NULL || members->kind == CORRAL_VAL_SEQ))
        corral__dec_err_field(d, members ? members : (spec ? spec : root), "spec.members",
                              "required: a HyperNode needs at least one member (type Node or "
                              "HyperNode with a selector)");
    if (hn->node_count < 0)
        corral__dec_err_field(d, corral_val_get(corral_val_get(root, "status"), "nodeCount"),
                              "status.nodeCount", "must be greater than or equal to 0, got %d",
                              hn->node_count);
}
