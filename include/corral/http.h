/*
 * HTTP/1.1 request parsing for the API server, in the style of picohttpparser:
 * the request head is parsed from a contiguous buffer without allocating
 * (every string points into that buffer), and parsing can simply be retried
 * when more bytes arrive. Chunked request bodies are decoded by a byte-level
 * state machine that can stop and resume at any byte. Both are small, pure
 * functions, so they are fuzzed directly (tests/fuzz/fuzz_http.c).
 *
 * Also here: percent-decoding of paths and query strings, and iteration over
 * query parameters.
 */
#ifndef CORRAL_HTTP_H
#define CORRAL_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "corral/buf.h"
#include "corral/common.h"

#define CORRAL_HTTP_MAX_HEADERS 64

typedef struct corral_http_header {
    const char *name; /* not NUL-terminated */
    size_t name_len;
    const char *value; /* leading and trailing blanks removed */
    size_t value_len;
} corral_http_header_t;

typedef struct corral_http_request {
    const char *method; /* "GET", ... (not NUL-terminated) */
    size_t method_len;
    const char *target; /* request-target as sent: "/api/v1/pods?limit=5" */
    size_t target_len;
    int minor; /* HTTP/1.<minor>: 0 or 1 */
    corral_http_header_t headers[CORRAL_HTTP_MAX_HEADERS];
    size_t nheaders;
    /* Derived from the headers by corral_http_parse_request. */
    int64_t content_length; /* -1 when absent */
    bool chunked;           /* Transfer-Encoding: chunked */
    bool keep_alive;        /* HTTP/1.1 unless "Connection: close"; 1.0 only with keep-alive */
    bool expect_continue;   /* Expect: 100-continue */
} corral_http_request_t;

/*
 * Parse a request head (request line and headers up to the blank line) from
 * buf[0..len). Returns the length of the head (> 0) when it is complete,
 * CORRAL_EAGAIN when more bytes are needed, CORRAL_ETOOBIG when the head is
 * longer than max bytes or has more than CORRAL_HTTP_MAX_HEADERS headers, and
 * CORRAL_EPARSE when it is malformed (including a Content-Length that is not
 * a number, or both Content-Length and chunked framing, which RFC 9112 says
 * to reject). CORRAL_EUNSUPPORTED for a Transfer-Encoding other than exactly
 * one "chunked" (Go's net/http answers those 501). Bare LF line ends are
 * accepted, as most servers do.
 */
int corral_http_parse_request(const char *buf, size_t len, size_t max, corral_http_request_t *req);

/* The value of header name (case-insensitive), or NULL; *len gets its length. */
const char *corral_http_header(const corral_http_request_t *req, const char *name, size_t *len);

/* Resumable chunked-body decoder. Zero-initialise before the first call. */
typedef struct corral_http_chunked {
    int state;
    uint64_t size; /* bytes left in the current chunk */
    int digits;
} corral_http_chunked_t;

/*
 * Decode chunked data from in[0..len), appending body bytes to out. Sets
 * *consumed to the bytes of in that were used (everything, unless the body
 * ended before len). Returns 1 when the last chunk and the trailers have been
 * read, 0 when more input is needed, CORRAL_EPARSE on malformed framing, and
 * CORRAL_ETOOBIG when out would grow past max bytes.
 */
int corral_http_chunked_feed(corral_http_chunked_t *st, const char *in, size_t len,
                             size_t *consumed, corral_buf_t *out, size_t max);

/*
 * Percent-decode s[0..len) into out (at least len + 1 bytes; NUL-terminated).
 * plus_is_space: '+' decodes to ' ' (query strings). Returns the decoded
 * length, or CORRAL_EPARSE for a bad escape or a decoded NUL byte.
 */
int corral_http_unescape(const char *s, size_t len, bool plus_is_space, char *out);

/* Iterate over "k=v&k2=v2": on each call returns true and points key/value
 * (raw, still escaped) at the next parameter; *pos starts at 0. A parameter
 * without '=' has an empty value. */
bool corral_http_query_next(const char *q, size_t qlen, size_t *pos, const char **key,
                            size_t *key_len, const char **val, size_t *val_len);

/* The reason phrase for a status code ("Not Found"); "Unknown" when unlisted. */
const char *corral_http_reason(int code);

#endif
