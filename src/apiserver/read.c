/*
 * get and list. Objects are stored as the JSON they are served as, so a get
 * returns the row as it is, and a list concatenates rows into the list's
 * "items" without parsing them; selectors are evaluated on each row's stored
 * attributes. Pagination: `limit` and an opaque `continue` token naming the
 * last key served. A later page is read from the current state, not from the
 * first page's snapshot (SQLite keeps no history of objects), and carries the
 * first page's resourceVersion: an informer that watches from it replays
 * every change made since, so it still converges (docs/apiserver.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corral/base64.h"
#include "apiserver/apiserver_int.h"

void corral__h_get(corral__req_t *r)
{
    corral_store_row_t row;
    int rc = corral_store_get(r->loop->rd, r->res->key, corral__ns_key(r), r->name, r->a, &row);
    if (rc == CORRAL_ENOENT) {
        corral__not_found(r);
        return;
    }
    if (rc) {
        corral__internal(r, rc);
        return;
    }
    int table = corral__table_mode(r);
    if (table) {
        corral_buf_t b;
        corral_buf_init(&b);
        corral__table_begin(&b, r->res);
        corral__table_row(&b, r->res, row.json, row.json_len, table, true);
        corral__table_end(&b, row.rev, NULL);
        corral__reply_buf(r, 200, &b);
        return;
    }
    corral__reply_obj(r, 200, row.json, row.json_len);
}

/* --- continue tokens ------------------------------------------------------------------ */

/* Token text: "<rev>/<namespace>/<name>". */
typedef struct token {
    int64_t rev;
    char ns[256];
    char name[512];
} token_t;

static bool token_parse(const char *s, token_t *t)
{
    size_t n = strlen(s);
    if (n > 1100) /* a token names at most 800 bytes */
        return false;
    corral_buf_t b;
    corral_buf_init(&b);
    int rc = corral_base64_decode(s, n, CORRAL_B64_URL, &b);
    char text[800];
    bool fits = rc == 0 && b.len < sizeof(text) && !memchr(corral_buf_str(&b), 0, b.len);
    if (fits)
        memcpy(text, corral_buf_str(&b), b.len + 1);
    corral_buf_fini(&b);
    if (!fits)
        return false;
    char *end = NULL;
    long long rev = strtoll(text, &end, 10);
    if (end == text || *end != '/' || rev < 0)
        return false;
    const char *ns = end + 1;
    const char *slash = strchr(ns, '/');
    if (!slash || (size_t)(slash - ns) >= sizeof(t->ns) || strlen(slash + 1) >= sizeof(t->name) ||
        !slash[1])
        return false;
    t->rev = rev;
    snprintf(t->ns, sizeof(t->ns), "%.*s", (int)(slash - ns), ns);
    snprintf(t->name, sizeof(t->name), "%s", slash + 1);
    return true;
}

/* --- list ---------------------------------------------------------------------------- */

typedef struct list_ctx {
    corral__filter_t filter;
    int64_t limit; /* 0: no limit */
    int64_t count;
    bool more;
    char last_ns[256];
    char last_name[512];
    corral_buf_t *out;
    const corral__res_t *res;
    int table; /* CORRAL__TABLE_* */
} list_ctx_t;

static int list_row(void *arg, const corral_store_row_t *row)
{
    list_ctx_t *c = arg;
    if (!corral__filter_match(&c->filter, row->attrs, row->attrs_len))
        return 0;
    if (c->limit && c->count == c->limit) {
        c->more = true;
        return 1;
    }
    if (c->table) {
        corral__table_row(c->out, c->res, row->json, row->json_len, c->table, c->count++ == 0);
    } else {
        if (c->count++)
            corral_buf_putc(c->out, ',');
        corral__put_obj(c->out, c->res, row->json, row->json_len);
    }
    snprintf(c->last_ns, sizeof(c->last_ns), "%s", row->ns);
    snprintf(c->last_name, sizeof(c->last_name), "%s", row->name);
    return 0;
}

/* resourceVersion and resourceVersionMatch of a list, as upstream checks
 * them: digits only (400), a future one 504 Timeout, Exact only at the
 * current revision (older ones are not kept: 410 Expired). */
static bool list_rv(corral__req_t *r, bool have_tok)
{
    const char *rv = corral__param(r, "resourceVersion");
    const char *match = corral__param(r, "resourceVersionMatch");
    bool exact = match && !strcmp(match, "Exact");
    if (match && *match && !exact && strcmp(match, "NotOlderThan") != 0) {
        corral__status(r, 400, "BadRequest", NULL, NULL,
                       "invalid resourceVersionMatch: \"%.64s\" (want Exact or NotOlderThan)",
                       match);
        return false;
    }
    if (match && *match && (!rv || !*rv)) {
        corral__status(r, 400, "BadRequest", NULL, NULL,
                       "resourceVersionMatch is forbidden unless resourceVersion is provided");
        return false;
    }
    if (!rv || !*rv || have_tok)
        return true;
    int64_t want = 0;
    if (!corral__parse_u63(rv, &want)) {
        corral__status(r, 400, "BadRequest", NULL, NULL, "invalid resourceVersion: \"%.64s\"", rv);
        return false;
    }
    if (exact && want == 0) {
        corral__status(r, 400, "BadRequest", NULL, NULL,
                       "resourceVersionMatch \"Exact\" is forbidden for resourceVersion \"0\"");
        return false;
    }
    int64_t cur = corral_store_revision(r->srv->store);
    if (want > cur) {
        corral__status(r, 504, "Timeout", NULL, NULL,
                       "Too large resource version: %lld, current: %lld", (long long)want,
                       (long long)cur);
        return false;
    }
    if (exact && want < cur) {
        corral__status(r, 410, "Expired", NULL, NULL, "too old resource version: %lld (%lld)",
                       (long long)want, (long long)cur);
        return false;
    }
    return true;
}

static bool list_params(corral__req_t *r, list_ctx_t *c, token_t *tok, bool *have_tok)
{
    bool set = false;
    if (!corral__filter_parse(r, &c->filter) || !corral__param_int(r, "limit", &c->limit, &set))
        return false;
    const char *cont = corral__param(r, "continue");
    *have_tok = cont && *cont;
    if (*have_tok && !token_parse(cont, tok)) {
        corral__status(r, 400, "BadRequest", NULL, NULL,
                       "continue key is not valid: the token was not issued by this server");
        return false;
    }
    return list_rv(r, *have_tok);
}

void corral__h_list(corral__req_t *r)
{
    bool watch = false;
    if (!corral__param_bool(r, "watch", &watch))
        return;
    if (watch) {
        corral__h_watch(r);
        return;
    }
    list_ctx_t c;
    memset(&c, 0, sizeof(c));
    token_t tok;
    bool have_tok = false;
    if (!list_params(r, &c, &tok, &have_tok))
        return;
    corral_buf_t b;
    corral_buf_init(&b);
    c.out = &b;
    c.res = r->res;
    c.table = corral__table_mode(r);
    if (c.table) {
        corral__table_begin(&b, r->res);
    } else {
        corral_buf_puts(&b, "{\"kind\":");
        corral_json_quote(&b, r->res->list_kind, strlen(r->res->list_kind));
        corral_buf_puts(&b, ",\"apiVersion\":");
        corral_json_quote(&b, r->res->info->api_version, strlen(r->res->info->api_version));
        corral_buf_puts(&b, ",\"items\":[");
    }
    int64_t rev = 0;
    const char *ns = r->res->info->namespaced ? r->ns : NULL;
    int rc = corral_store_list(r->loop->rd, r->res->key, ns, have_tok ? tok.ns : NULL,
                               have_tok ? tok.name : NULL, list_row, &c, &rev);
    if (rc) {
        corral_buf_fini(&b);
        corral__internal(r, rc);
        return;
    }
    if (have_tok)
        rev = tok.rev;
    const char *cont = NULL;
    if (c.more) {
        corral_buf_t key, enc;
        corral_buf_init(&key);
        corral_buf_init(&enc);
        corral_buf_printf(&key, "%lld/%s/%s", (long long)rev, c.last_ns, c.last_name);
        corral_base64_encode(key.p, key.len, CORRAL_B64_URL, &enc);
        cont = corral_arena_strndup(r->a, enc.p, enc.len);
        corral_buf_fini(&key);
        corral_buf_fini(&enc);
    }
    if (c.table) {
        corral__table_end(&b, rev, cont);
    } else {
        corral_buf_printf(&b, "],\"metadata\":{\"resourceVersion\":\"%lld\"", (long long)rev);
        if (cont) {
            corral_buf_puts(&b, ",\"continue\":");
            corral_json_quote(&b, cont, strlen(cont));
        }
        corral_buf_puts(&b, "}}");
    }
    corral__reply_buf(r, 200, &b);
}
