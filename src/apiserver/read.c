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
    int rc = corral_store_get(corral__rd(r), r->res->key, corral__ns_key(r), r->name, r->a, &row);
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
    /* A list read in slices (corral__snap_take) and its slice's start. */
    corral_store_reader_t *snap;
    struct event *ev;
    int64_t slice_t0;
    int64_t rev;
    bool have_tok;
    token_t tok;
    corral_buf_t b;
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
    if (c->snap && corral__mono_us() - c->slice_t0 >= CORRAL__SLICE_US)
        return CORRAL_STORE_PAUSE; /* the rest on a later turn of the loop */
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

/* The list's end: metadata, continue token, the reply. */
static void list_finish(corral__req_t *r, list_ctx_t *c)
{
    corral_buf_t *b = &c->b;
    int64_t rev = c->have_tok ? c->tok.rev : c->rev;
    const char *cont = NULL;
    if (c->more) {
        corral_buf_t key, enc;
        corral_buf_init(&key);
        corral_buf_init(&enc);
        corral_buf_printf(&key, "%lld/%s/%s", (long long)rev, c->last_ns, c->last_name);
        corral_base64_encode(key.p, key.len, CORRAL_B64_URL, &enc);
        cont = corral_arena_strndup(r->a, enc.p, enc.len);
        corral_buf_fini(&key);
        corral_buf_fini(&enc);
    }
    if (c->table) {
        corral__table_end(b, rev, cont);
    } else {
        corral_buf_printf(b, "],\"metadata\":{\"resourceVersion\":\"%lld\"", (long long)rev);
        if (cont) {
            corral_buf_puts(b, ",\"continue\":");
            corral_json_quote(b, cont, strlen(cont));
        }
        corral_buf_puts(b, "}}");
    }
    corral__reply_buf(r, 200, b);
}

/* Free what a sliced list holds (also when the client goes away). */
static void list_release(corral__req_t *r)
{
    list_ctx_t *c = r->hctx;
    if (!c)
        return;
    if (c->ev)
        event_free(c->ev);
    corral__snap_give(r->loop, c->snap);
    corral_buf_fini(&c->b);
    corral_free(c);
    r->hctx = NULL;
    r->cleanup = NULL;
}

/* Release the list's state and answer (rc < 0: a store error). */
static void list_done(corral__req_t *r, int rc)
{
    list_ctx_t done = *(list_ctx_t *)r->hctx;
    corral_buf_init(&((list_ctx_t *)r->hctx)->b); /* the answer takes the buffer over */
    list_release(r);
    if (rc < 0) {
        corral_buf_fini(&done.b);
        corral__internal(r, rc);
        return;
    }
    list_finish(r, &done);
}

/* One slice of a list; the next is queued behind the loop's other work. */
static void list_slice(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    corral__req_t *r = arg;
    list_ctx_t *c = r->hctx;
    c->slice_t0 = corral__mono_us();
    int rc = corral_store_list_next(c->snap, list_row, c);
    if (rc == 1) {
        corral__later(r->loop, &c->ev, list_slice, r);
        return;
    }
    list_done(r, rc);
}

/* A list is read from a snapshot of its own in slices of CORRAL__SLICE_US
 * (one read transaction: every slice sees the state of the first, and the
 * list carries that revision); the answer is sent whole once complete, as
 * before. When the loop has no snapshot reader to spare it is read at once
 * on the loop's reader. */
void corral__h_list(corral__req_t *r)
{
    bool watch = false;
    if (!corral__param_bool(r, "watch", &watch))
        return;
    if (watch) {
        corral__h_watch(r);
        return;
    }
    list_ctx_t *c = corral_calloc(1, sizeof(*c));
    r->hctx = c;
    r->cleanup = list_release;
    if (!list_params(r, c, &c->tok, &c->have_tok)) {
        /* Answered: the reply reset r (hctx with it), so free c here. */
        corral_buf_fini(&c->b);
        corral_free(c);
        return;
    }
    corral_buf_t *b = &c->b;
    corral_buf_init(b);
    c->out = b;
    c->res = r->res;
    c->table = corral__table_mode(r);
    if (c->table) {
        corral__table_begin(b, r->res);
    } else {
        corral_buf_puts(b, "{\"kind\":");
        corral_json_quote(b, r->res->list_kind, strlen(r->res->list_kind));
        corral_buf_puts(b, ",\"apiVersion\":");
        corral_json_quote(b, r->res->info->api_version, strlen(r->res->info->api_version));
        corral_buf_puts(b, ",\"items\":[");
    }
    const char *ns = r->res->info->namespaced ? r->ns : NULL;
    const char *after_ns = c->have_tok ? c->tok.ns : NULL;
    const char *after = c->have_tok ? c->tok.name : NULL;
    c->snap = corral__snap_take(r->loop);
    int rc = c->snap ? corral_store_list_begin(c->snap, r->res->key, ns, after_ns, after, &c->rev)
                     : corral_store_list(corral__rd(r), r->res->key, ns, after_ns, after, list_row,
                                         c, &c->rev);
    if (rc) {
        list_done(r, rc);
        return;
    }
    if (c->snap)
        list_slice(-1, 0, r);
    else
        list_done(r, 0);
}
