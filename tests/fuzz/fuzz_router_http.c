/* libFuzzer target: the router's HTTP/1.1 framing (src/router/http1.c). The
 * first byte picks request or response; the rest goes through the head
 * parser, whose result must lie inside the input with consistent framing;
 * what follows the head is fed to the chunked decoder in pieces whose sizes
 * come from the input (every resume point), and the data it reports must
 * lie inside each piece and never exceed it. Must never crash, hang or
 * overread. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "router/router_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void inside(const char *p, size_t n, const char *buf, size_t len)
{
    if (n && (p < buf || p + n > buf + len))
        abort();
}

typedef struct piece {
    const char *p;
    size_t n, seen;
} piece_t;

static void span(void *arg, const char *p, size_t n)
{
    piece_t *pc = arg;
    inside(p, n, pc->p, pc->n);
    pc->seen += n;
    if (pc->seen > pc->n)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    bool resp = data[0] & 1;
    size_t step = (size_t)(data[0] >> 1) + 1;
    const char *buf = (const char *)data + 1;
    size_t len = size - 1;
    static corral__head_t h;
    int rc =
        resp ? corral__http_parse_response(buf, len, &h) : corral__http_parse_request(buf, len, &h);
    size_t off = 0;
    if (rc > 0) {
        if ((size_t)rc > len || (size_t)rc != h.len || h.nhdrs > CORRAL__HTTP_MAX_HEADERS)
            abort();
        if (!resp) {
            inside(h.method, h.mlen, buf, len);
            inside(h.target, h.tlen, buf, len);
            if (h.mlen == 0 || h.tlen == 0)
                abort();
        }
        for (size_t i = 0; i < h.nhdrs; i++) {
            inside(h.hdrs[i].name, h.hdrs[i].nlen, buf, len);
            inside(h.hdrs[i].val, h.hdrs[i].vlen, buf, len);
        }
        if (h.chunked && h.content_length >= 0)
            abort(); /* both framings must be refused */
        off = (size_t)rc;
    } else if (rc < 0 && (rc < -505 || rc > -400)) {
        abort();
    }
    corral__chunked_t c = {0};
    while (off < len) {
        size_t n = len - off < step ? len - off : step;
        piece_t pc = {buf + off, n, 0};
        ssize_t k = corral__chunked_feed(&c, buf + off, n, span, &pc);
        if (k < 0)
            break;
        if ((size_t)k > n || pc.seen > (size_t)k)
            abort();
        off += (size_t)k;
        if (corral__chunked_done(&c) || k == 0)
            break;
    }
    return 0;
}
