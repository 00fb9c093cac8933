/* The web dashboard's files (src/apiserver/ui.c): served without a token
 * (RBAC's system:public-info-viewer lists /ui) while the API still wants
 * one, with their Content-Types, a strong ETag answered 304 on a match, and
 * the Content-Security-Policy; unknown files 404, other methods 405. */
#include "api_test.h"

static void with_tokens(corral_apiserver_opts_t *o)
{
    o->token_auth_file =
        api_write_file(api_srv.dir, "tokens.csv", "admin-token,admin,1,\"system:masters\"\n");
}

static void start_secure(void)
{
    api_start_with(with_tokens);
}

TestSuite(ui, .init = start_secure, .fini = api_stop, .timeout = 30);

/* The value of response header name (lower case, with ": "), in buf. */
static const char *header(const api_resp_t *r, const char *name, char *buf, size_t len)
{
    const char *h = strcasestr(r->headers.p, name);
    if (!h)
        return NULL;
    h += strlen(name);
    size_t n = strcspn(h, "\r\n");
    snprintf(buf, len, "%.*s", (int)n, h);
    return buf;
}

Test(ui, files_are_public_with_types_and_csp)
{
    static const char *const cases[][2] = {
        {"/ui", "text/html; charset=utf-8"},
        {"/ui/", "text/html; charset=utf-8"},
        {"/ui/app.js", "text/javascript; charset=utf-8"},
        {"/ui/style.css", "text/css; charset=utf-8"},
        {"/ui/favicon.svg", "image/svg+xml"},
    };
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(cases); i++) {
        api_resp_t r;
        api_req_h(&r, "GET", cases[i][0], NULL, NULL, NULL, NULL);
        cr_assert_eq(r.code, 200, "%s: %ld %s", cases[i][0], r.code, r.body.p);
        char v[512];
        cr_assert(header(&r, "content-type: ", v, sizeof(v)), "%s", cases[i][0]);
        cr_assert_str_eq(v, cases[i][1]);
        cr_assert(header(&r, "content-security-policy: ", v, sizeof(v)));
        cr_assert(strstr(v, "default-src 'none'") && strstr(v, "script-src 'self'"), "%s", v);
        cr_assert(header(&r, "x-content-type-options: ", v, sizeof(v)));
        api_free(&r);
    }
    api_resp_t r;
    api_req_h(&r, "GET", "/ui/", NULL, NULL, NULL, NULL);
    cr_assert(strstr(r.body.p, "id=\"gpu-grid\""), "not the dashboard page");
    api_free(&r);
    /* The API itself still wants the token. */
    api_req_h(&r, "GET", "/api/v1/nodes", NULL, NULL, NULL, NULL);
    cr_assert_eq(r.code, 401);
    api_free(&r);
}

Test(ui, etag_revalidates)
{
    api_resp_t r;
    api_req_h(&r, "GET", "/ui/app.js", NULL, NULL, NULL, NULL);
    char etag[64], inm[128];
    cr_assert(header(&r, "etag: ", etag, sizeof(etag)));
    cr_assert_eq(strlen(etag), 18, "%s", etag);
    api_free(&r);
    snprintf(inm, sizeof(inm), "If-None-Match: %s", etag);
    const char *const h[] = {inm, NULL};
    api_req_h(&r, "GET", "/ui/app.js", NULL, NULL, NULL, h);
    cr_assert_eq(r.code, 304);
    cr_assert_eq(r.body.len, 0);
    api_free(&r);
    /* Another file's tag does not match. */
    api_req_h(&r, "GET", "/ui/style.css", NULL, NULL, NULL, h);
    cr_assert_eq(r.code, 200);
    api_free(&r);
}

Test(ui, unknown_files_and_methods)
{
    api_resp_t r;
    api_req_h(&r, "GET", "/ui/nope.js", NULL, NULL, NULL, NULL);
    cr_assert_eq(r.code, 404);
    api_free(&r);
    api_req_h(&r, "GET", "/ui/app.js/x", NULL, NULL, "admin-token", NULL);
    cr_assert_eq(r.code, 404);
    api_free(&r);
    api_req_h(&r, "POST", "/ui/app.js", NULL, "{}", "admin-token", NULL);
    cr_assert_eq(r.code, 405);
    api_free(&r);
}
