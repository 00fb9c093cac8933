/* The HTTP/1.1 request parser: heads complete and partial, framing headers,
 * the malformed inputs it must refuse, chunked bodies fed a byte at a time,
 * and percent-decoding. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "corral/http.h"

static int parse(const char *s, corral_http_request_t *r)
{
    return corral_http_parse_request(s, strlen(s), 65536, r);
}

Test(http_parse, request_line_and_headers)
{
    const char *s = "POST /api/v1/namespaces/default/pods?limit=5 HTTP/1.1\r\n"
                    "Host: x\r\nContent-Type: application/json \r\nContent-Length: 12\r\n\r\nBODY";
    corral_http_request_t r;
    int n = parse(s, &r);
    cr_assert_eq(n, (int)(strlen(s) - 4));
    cr_assert_eq(r.method_len, 4);
    cr_assert(memcmp(r.method, "POST", 4) == 0);
    cr_assert_eq(r.target_len, strlen("/api/v1/namespaces/default/pods?limit=5"));
    cr_assert_eq(r.minor, 1);
    cr_assert_eq(r.nheaders, 3);
    cr_assert_eq(r.content_length, 12);
    cr_assert(r.keep_alive);
    size_t len;
    const char *ct = corral_http_header(&r, "content-type", &len);
    cr_assert_not_null(ct);
    cr_assert_eq(len, strlen("application/json"), "trailing blanks are trimmed");
    cr_assert_null(corral_http_header(&r, "x-none", NULL));
}

Test(http_parse, partial_heads_ask_for_more)
{
    const char *full = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
    corral_http_request_t r;
    for (size_t i = 0; i < strlen(full); i++)
        cr_assert_eq(corral_http_parse_request(full, i, 65536, &r), CORRAL_EAGAIN, "at %zu", i);
    cr_assert_eq(corral_http_parse_request(full, strlen(full), 65536, &r), (int)strlen(full));
}

Test(http_parse, keep_alive_rules)
{
    corral_http_request_t r;
    cr_assert_gt(parse("GET / HTTP/1.0\r\n\r\n", &r), 0);
    cr_assert_not(r.keep_alive);
    cr_assert_gt(parse("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", &r), 0);
    cr_assert(r.keep_alive);
    cr_assert_gt(parse("GET / HTTP/1.1\r\nConnection: Close\r\n\r\n", &r), 0);
    cr_assert_not(r.keep_alive);
    cr_assert_gt(parse("GET / HTTP/1.1\nHost: x\n\n", &r), 0, "bare LF is accepted");
    cr_assert_gt(
        parse("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nExpect: 100-continue\r\n\r\n", &r),
        0);
    cr_assert(r.chunked);
    cr_assert(r.expect_continue);
    cr_assert_eq(r.content_length, -1);
}

Test(http_parse, malformed_heads_are_refused)
{
    static const char *const bad[] = {
        "GET\r\n\r\n",
        "GET /\r\n\r\n",
        "GET / HTTP/2.0\r\n\r\n",
        "GET / HTTP/1.1\r\nNo colon\r\n\r\n",
        "GET / HTTP/1.1\r\n folded: x\r\n\r\n",
        "GET / HTTP/1.1\r\nContent-Length: 12a\r\n\r\n",
        "GET / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\n",
        "GET / HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n",
        "G\x01T / HTTP/1.1\r\n\r\n",
        "GET /a\x7f HTTP/1.1\r\n\r\n",
        "GET / HTTP/1.1\r\nX: a\x01b\r\n\r\n",
    };
    corral_http_request_t r;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        cr_assert_eq(parse(bad[i], &r), CORRAL_EPARSE, "accepted: %s", bad[i]);
}

/* Go's net/http: only exactly "chunked" is implemented (501 otherwise);
 * chunked that is not the last coding cannot be framed at all. */
Test(http_parse, transfer_codings_other_than_chunked_are_refused)
{
    static const char *const bad[] = {
        "POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n",
        "POST / HTTP/1.1\r\nTransfer-Encoding: chunked, gzip\r\n\r\n",
        "POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
        "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
        "POST / HTTP/1.1\r\nTransfer-Encoding: chunked,\r\n\r\n",
    };
    corral_http_request_t r;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        cr_assert_eq(parse(bad[i], &r), CORRAL_EUNSUPPORTED, "accepted: %s", bad[i]);
    cr_assert_gt(parse("POST / HTTP/1.1\r\nTransfer-Encoding: Chunked\r\n\r\n", &r), 0);
    cr_assert(r.chunked);
}

Test(http_parse, limits)
{
    char big[4096];
    memset(big, 'a', sizeof(big));
    memcpy(big, "GET /", 5);
    big[sizeof(big) - 1] = '\0';
    corral_http_request_t r;
    cr_assert_eq(corral_http_parse_request(big, strlen(big), 1024, &r), CORRAL_ETOOBIG);
    char many[8192] = "GET / HTTP/1.1\r\n";
    for (int i = 0; i < CORRAL_HTTP_MAX_HEADERS + 1; i++)
        snprintf(many + strlen(many), sizeof(many) - strlen(many), "H%d: v\r\n", i);
    snprintf(many + strlen(many), sizeof(many) - strlen(many), "\r\n");
    cr_assert_eq(parse(many, &r), CORRAL_ETOOBIG);
}

static int feed_all(const char *in, size_t step, corral_buf_t *out, size_t max, size_t *used_total)
{
    corral_http_chunked_t st;
    memset(&st, 0, sizeof(st));
    size_t len = strlen(in), pos = 0;
    int rc = 0;
    while (pos < len) {
        size_t n = len - pos < step ? len - pos : step;
        size_t used = 0;
        rc = corral_http_chunked_feed(&st, in + pos, n, &used, out, max);
        pos += used;
        if (rc != 0)
            break;
    }
    *used_total = pos;
    return rc;
}

Test(http_parse, chunked_bodies_resume_anywhere)
{
    const char *in = "5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\nTrailer: x\r\n\r\nNEXT";
    for (size_t step = 1; step < 8; step++) {
        corral_buf_t b;
        corral_buf_init(&b);
        size_t used = 0;
        cr_assert_eq(feed_all(in, step, &b, 1000, &used), 1, "step %zu", step);
        cr_assert_str_eq(corral_buf_str(&b), "hello world");
        cr_assert_eq(used, strlen(in) - 4, "stops at the end of the body");
        corral_buf_fini(&b);
    }
}

Test(http_parse, chunked_errors)
{
    corral_buf_t b;
    corral_buf_init(&b);
    size_t used;
    cr_assert_eq(feed_all("zz\r\n", 100, &b, 1000, &used), CORRAL_EPARSE);
    corral_buf_reset(&b);
    cr_assert_eq(feed_all("5\r\nhelloXX", 100, &b, 1000, &used), CORRAL_EPARSE);
    corral_buf_reset(&b);
    cr_assert_eq(feed_all("ffffffffffffffff\r\n", 100, &b, 1000, &used), CORRAL_EPARSE);
    corral_buf_reset(&b);
    cr_assert_eq(feed_all("a\r\n0123456789\r\n0\r\n\r\n", 100, &b, 5, &used), CORRAL_ETOOBIG);
    corral_buf_fini(&b);
}

Test(http_parse, unescape_and_query)
{
    char out[64];
    cr_assert_eq(corral_http_unescape("a%3Db+c", 7, true, out), 5);
    cr_assert_str_eq(out, "a=b c");
    cr_assert_eq(corral_http_unescape("a+b", 3, false, out), 3);
    cr_assert_str_eq(out, "a+b");
    cr_assert_eq(corral_http_unescape("%zz", 3, false, out), CORRAL_EPARSE);
    cr_assert_eq(corral_http_unescape("%4", 2, false, out), CORRAL_EPARSE);
    cr_assert_eq(corral_http_unescape("%00", 3, false, out), CORRAL_EPARSE);
    const char *q = "watch=1&&labelSelector=app%3Dweb&flag";
    size_t pos = 0, kl, vl;
    const char *k, *v;
    cr_assert(corral_http_query_next(q, strlen(q), &pos, &k, &kl, &v, &vl));
    cr_assert(kl == 5 && memcmp(k, "watch", 5) == 0 && vl == 1);
    cr_assert(corral_http_query_next(q, strlen(q), &pos, &k, &kl, &v, &vl));
    cr_assert(kl == 13 && vl == 9);
    cr_assert(corral_http_query_next(q, strlen(q), &pos, &k, &kl, &v, &vl));
    cr_assert(kl == 4 && vl == 0);
    cr_assert_not(corral_http_query_next(q, strlen(q), &pos, &k, &kl, &v, &vl));
    cr_assert_str_eq(corral_http_reason(422), "Unprocessable Entity");
}
