/* libFuzzer target: the API server's request framing. Any bytes through
 * corral_http_parse_request; when a head parses, its strings must lie inside
 * the input and its framing must be consistent, and the rest of the input is
 * fed to the chunked decoder in pieces whose sizes come from the input, so
 * every resume point is explored; the target is also percent-decoded and its
 * query split, as the server does. Must never crash, leak, hang or overread. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "corral/http.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void inside(const char *p, size_t n, const char *buf, size_t len)
{
    if (n && (p < buf || p + n > buf + len))
        abort();
}

static void check_head(const corral_http_request_t *r, const char *buf, size_t len)
{
    inside(r->method, r->method_len, buf, len);
    inside(r->target, r->target_len, buf, len);
    if (r->method_len == 0 || r->target_len == 0 || r->minor < 0 || r->minor > 1)
        abort();
    for (size_t i = 0; i < r->nheaders; i++) {
        inside(r->headers[i].name, r->headers[i].name_len, buf, len);
        inside(r->headers[i].value, r->headers[i].value_len, buf, len);
    }
    if (r->chunked && r->content_length >= 0)
        abort(); /* RFC 9112: both framings at once must be refused */
}

static void target(const corral_http_request_t *r)
{
    char *out = malloc(r->target_len + 1);
    if (corral_http_unescape(r->target, r->target_len, false, out) >= 0 &&
        strlen(out) > r->target_len)
        abort();
    const char *q = memchr(r->target, '?', r->target_len);
    if (q) {
        size_t qlen = r->target_len - (size_t)(q + 1 - r->target), pos = 0, kl, vl;
        const char *k, *v;
        while (corral_http_query_next(q + 1, qlen, &pos, &k, &kl, &v, &vl)) {
            if (corral_http_unescape(k, kl, true, out) > (int)kl)
                abort();
        }
    }
    free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > (1 << 16))
        return 0;
    size_t step = (size_t)data[0] % 17 + 1; /* how the rest is cut for the chunked decoder */
    const char *buf = (const char *)data + 1;
    size_t len = size - 1;
    corral_http_request_t r;
    int n = corral_http_parse_request(buf, len, 8192, &r);
    if (n <= 0) {
        /* Nothing else to do; a refused head is fine. */
        n = 0;
    } else {
        if ((size_t)n > len)
            abort();
        check_head(&r, buf, len);
        target(&r);
    }
    corral_http_chunked_t st;
    memset(&st, 0, sizeof(st));
    corral_buf_t body;
    corral_buf_init(&body);
    for (size_t pos = (size_t)n; pos < len;) {
        size_t k = len - pos < step ? len - pos : step, used = 0;
        int rc = corral_http_chunked_feed(&st, buf + pos, k, &used, &body, 4096);
        if (used > k)
            abort();
        pos += used;
        if (rc != 0)
            break;
    }
    if (body.len > 4096)
        abort();
    corral_buf_fini(&body);
    return 0;
}
