/*
 * The static token file and RBAC matching (include/corral/auth.h): pure
 * functions with kube-apiserver's semantics, used by authz.c.
 *
 * The token file is CSV as Go's encoding/csv reads it for kube-apiserver
 * (leading blanks trimmed, quoted fields with "" escapes and embedded
 * newlines, blank lines skipped, a bare quote in an unquoted field or
 * anything but a separator after a closing quote refused), read with the
 * shared tokenizer of corral/csv.h; fuzzed by tests/fuzz/fuzz_tokens.c.
 */
#include <stdio.h>
#include <string.h>

#include "corral/auth.h"
#include "corral/csv.h"
#include "corral/hmap.h"
#include "corral/io.h"

#define MAX_FIELDS       256                /* per record (kube takes any number) */
#define MAX_LINE         (64 << 10)         /* bytes per record */
#define TOKEN_MAX        ((size_t)64 << 10) /* longer bearer tokens are never valid */
#define TOKEN_FILE_LIMIT ((size_t)16 << 20)

typedef struct entry {
    corral_user_t user;
    const char *token;
} entry_t;

struct corral_tokens {
    corral_arena_t a;
    entry_t *users; /* one per record kept */
    size_t n, cap;
    corral_hmap_t by_token; /* token -> index in users */
};

bool corral_user_in_group(const corral_user_t *u, const char *g)
{
    for (size_t i = 0; u && i < u->ngroups; i++) {
        if (strcmp(u->groups[i], g) == 0)
            return true;
    }
    return false;
}

/* --- token file ------------------------------------------------------------------------- */

static void trim(const char **s, size_t *n)
{
    while (*n && (**s == ' ' || **s == '\t')) {
        (*s)++;
        (*n)--;
    }
    while (*n && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t'))
        (*n)--;
}

/* Groups from "g1,g2" plus system:authenticated. */
static void set_groups(corral_arena_t *a, corral_user_t *u, const char *list)
{
    size_t cap = 2;
    for (const char *p = list; p && *p; p++)
        cap += *p == ',';
    u->groups = corral_arena_alloc(a, cap * sizeof(*u->groups));
    u->ngroups = 0;
    for (const char *p = list; p && *p;) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        const char *g = p;
        trim(&g, &n);
        if (n)
            u->groups[u->ngroups++] = corral_arena_strndup(a, g, n);
        if (!comma)
            break;
        p = comma + 1;
    }
    if (!corral_user_in_group(u, CORRAL_GROUP_AUTHENTICATED))
        u->groups[u->ngroups++] = CORRAL_GROUP_AUTHENTICATED;
}

static const char *field(corral_arena_t *a, const corral_csv_record_t *rec, size_t i)
{
    return i < rec->n ? corral_arena_strndup(a, rec->fields[i].p, rec->fields[i].len) : NULL;
}

static void add_record(corral_tokens_t *t, const corral_csv_record_t *rec)
{
    corral_grow((void **)&t->users, &t->cap, t->n + 1, sizeof(*t->users));
    entry_t *e = &t->users[t->n];
    memset(e, 0, sizeof(*e));
    e->user.name = field(&t->a, rec, 1);
    e->user.uid = field(&t->a, rec, 2);
    set_groups(&t->a, &e->user, field(&t->a, rec, 3));
    e->token = field(&t->a, rec, 0);
    corral_hmap_put(&t->by_token, e->token, (uint32_t)t->n);
    t->n++;
}

/* Records of a token file, as kube-apiserver reads it with Go's csv.Reader
 * (TrimLeadingSpace, any number of fields, blank lines skipped). */
static int parse_records(corral_tokens_t *t, const char *text, size_t len, const char *file,
                         char *err, size_t errlen)
{
    corral_csv_field_t *fields = corral_malloc(MAX_FIELDS * sizeof(*fields));
    char *scratch = corral_malloc(MAX_LINE);
    corral_csv_t c;
    corral_csv_init(&c, fields, MAX_FIELDS, scratch, MAX_LINE);
    c.trim_leading_space = true;
    corral_csv_feed(&c, text, len, true);
    int rc = 0;
    for (;;) {
        corral_csv_record_t rec;
        int got = corral_csv_next(&c, &rec);
        if (got == 0)
            break;
        if (got < 0) {
            snprintf(err, errlen, "%s:%d: %s", file, c.err_line, c.err);
            rc = CORRAL_EINVAL;
            break;
        }
        if (rec.n == 0)
            continue; /* a blank line */
        if (rec.n < 3) {
            snprintf(err, errlen,
                     "%s:%d: token file must have at least 3 columns (token, user name, user "
                     "uid), found %zu",
                     file, rec.line, rec.n);
            rc = CORRAL_EINVAL;
            break;
        }
        if (rec.fields[0].len == 0)
            continue; /* kube skips records with an empty token */
        add_record(t, &rec);
    }
    corral_free(scratch);
    corral_free(fields);
    return rc;
}

int corral_tokens_parse(const char *text, size_t len, const char *file, corral_tokens_t **out,
                        char *err, size_t errlen)
{
    *out = NULL;
    corral_tokens_t *t = corral_calloc(1, sizeof(*t));
    corral_arena_init(&t->a);
    corral_hmap_init(&t->by_token);
    int rc = parse_records(t, text, len, file, err, errlen);
    if (rc) {
        corral_tokens_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

int corral_tokens_load(const char *path, corral_tokens_t **out, char *err, size_t errlen)
{
    corral_diag_t d;
    corral_diag_init(&d);
    char *data = NULL;
    size_t len = 0;
    int rc = corral_file_read(path, TOKEN_FILE_LIMIT, &d, &data, &len);
    if (rc) {
        snprintf(err, errlen, "%s: %s", path, d.n ? d.items[0].msg : corral_strerror(rc));
        corral_diag_fini(&d);
        return rc;
    }
    corral_diag_fini(&d);
    rc = corral_tokens_parse(data, len, path, out, err, errlen);
    corral_free(data);
    return rc;
}

void corral_tokens_free(corral_tokens_t *t)
{
    if (!t)
        return;
    corral_hmap_fini(&t->by_token);
    corral_free(t->users);
    corral_arena_fini(&t->a);
    corral_free(t);
}

size_t corral_tokens_count(const corral_tokens_t *t)
{
    return t ? t->by_token.n : 0;
}

const corral_user_t *corral_tokens_find(const corral_tokens_t *t, const char *token, size_t len)
{
    if (!t || len == 0 || len > TOKEN_MAX || memchr(token, '\0', len))
        return NULL;
    char small[256];
    char *buf = len < sizeof(small) ? small : corral_malloc(len + 1);
    memcpy(buf, token, len);
    buf[len] = '\0';
    uint32_t i;
    bool found = corral_hmap_get(&t->by_token, buf, &i);
    if (buf != small)
        corral_free(buf);
    if (!found)
        return NULL;
    /* The hash only found a candidate: compare every byte, in constant time. */
    const char *k = t->users[i].token;
    if (strlen(k) != len)
        return NULL;
    unsigned char diff = 0;
    for (size_t j = 0; j < len; j++)
        diff |= (unsigned char)(k[j] ^ token[j]);
    return diff ? NULL : &t->users[i].user;
}

/* --- RBAC matching ------------------------------------------------------------------------ */

static bool has(const corral_strlist_t *l, const char *s)
{
    for (size_t i = 0; i < l->n; i++) {
        if (l->items[i] && strcmp(l->items[i], s) == 0)
            return true;
    }
    return false;
}

static bool has_or_star(const corral_strlist_t *l, const char *s)
{
    return has(l, "*") || has(l, s);
}

static bool resource_matches(const corral_policy_rule_t *r, const corral_authz_attrs_t *a)
{
    if (has(&r->resources, "*"))
        return true;
    const char *sub = a->subresource && *a->subresource ? a->subresource : NULL;
    if (!sub)
        return has(&r->resources, a->resource ? a->resource : "");
    char combined[256];
    snprintf(combined, sizeof(combined), "%s/%s", a->resource ? a->resource : "", sub);
    if (has(&r->resources, combined))
        return true;
    char star_sub[256];
    snprintf(star_sub, sizeof(star_sub), "*/%s", sub);
    return has(&r->resources, star_sub);
}

static bool url_matches(const corral_policy_rule_t *r, const char *path)
{
    for (size_t i = 0; i < r->non_resource_urls.n; i++) {
        const char *u = r->non_resource_urls.items[i];
        size_t n = u ? strlen(u) : 0;
        if (!n)
            continue;
        if (strcmp(u, "*") == 0 || strcmp(u, path) == 0)
            return true;
        if (u[n - 1] == '*' && strncmp(u, path, n - 1) == 0)
            return true;
    }
    return false;
}

bool corral_rbac_rule_allows(const corral_policy_rule_t *rule, const corral_authz_attrs_t *a)
{
    if (!has_or_star(&rule->verbs, a->verb ? a->verb : ""))
        return false;
    if (!a->resource_request)
        return url_matches(rule, a->path ? a->path : "");
    if (!has_or_star(&rule->api_groups, a->api_group ? a->api_group : ""))
        return false;
    if (!resource_matches(rule, a))
        return false;
    if (rule->resource_names.n == 0)
        return true;
    return a->name && *a->name && has(&rule->resource_names, a->name);
}

bool corral_rbac_subject_matches(const corral_subject_t *s, const corral_user_t *u,
                                 const char *binding_ns)
{
    if (!s->kind || !s->name || !u)
        return false;
    if (strcmp(s->kind, "User") == 0)
        return strcmp(s->name, u->name) == 0;
    if (strcmp(s->kind, "Group") == 0)
        return corral_user_in_group(u, s->name);
    if (strcmp(s->kind, "ServiceAccount") != 0)
        return false;
    const char *ns = s->namespace && *s->namespace ? s->namespace : binding_ns;
    if (!ns)
        return false;
    static const char prefix[] = "system:serviceaccount:";
    size_t pl = sizeof(prefix) - 1, nl = strlen(ns);
    return strncmp(u->name, prefix, pl) == 0 && strncmp(u->name + pl, ns, nl) == 0 &&
           u->name[pl + nl] == ':' && strcmp(u->name + pl + nl + 1, s->name) == 0;
}

void corral_rbac_forbidden_message(const corral_authz_attrs_t *a, char *out, size_t len)
{
    const char *user = a->user && a->user->name ? a->user->name : "";
    if (!a->resource_request) {
        snprintf(out, len, "User \"%s\" cannot %s path \"%s\"", user, a->verb, a->path);
        return;
    }
    char res[256];
    if (a->subresource && *a->subresource)
        snprintf(res, sizeof(res), "%s/%s", a->resource, a->subresource);
    else
        snprintf(res, sizeof(res), "%s", a->resource);
    if (a->namespace && *a->namespace)
        snprintf(out, len,
                 "User \"%s\" cannot %s resource \"%s\" in API group \"%s\" in the namespace "
                 "\"%s\"",
                 user, a->verb, res, a->api_group, a->namespace);
    else
        snprintf(out, len,
                 "User \"%s\" cannot %s resource \"%s\" in API group \"%s\" at the cluster scope",
                 user, a->verb, res, a->api_group);
}
