/*
 * The HTTP/1.1 request parser of the API server and the agent's log server (see corral/http.h): a
 * request head parsed in place, without allocation, and retried from the start when more bytes
 * arrive (heads are small, so re-scanning costs less than keeping state); a chunked-body decoder
 * that is a byte-level state machine; and percent-decoding. Everything a client sends passes
 * through here first, so each function checks bounds on every byte and is fuzzed.
 */
#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "corral/http.h"

static bool is_tchar(unsigned char c)
{
    /* RFC 9110 token characters. */
    return isalnum(c) || (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* Find the end of the line starting at p: returns the index of '\n' or -1. */
static long line_end(const char *buf, size_t len, size_t p)
{
    const char *nl = memchr(buf + p, '\n', len - p);
    return nl ? (long)(nl - buf) : -1;
}

/* Line [p, e) without a trailing CR. */
static size_t trim_cr(const char *buf, size_t p, size_t e)
{
    return (e > p && buf[e - 1] == '\r') ? e - 1 : e;
}

static int parse_request_line(const char *buf, size_t p, size_t e, corral_http_request_t *req)
{
    size_t i = p;
    while (i < e && is_tchar((unsigned char)buf[i]))
        i++;
    if (i == p || i >= e || buf[i] != ' ')
        return CORRAL_EPARSE;
    req->method = buf + p;
    req->method_len = i - p;
    size_t t = ++i;
    while (i < e && buf[i] != ' ') {
        unsigned char c = (unsigned char)buf[i];
        if (c <= 0x20 || c == 0x7f)
            return CORRAL_EPARSE;
        i++;
    }
    if (i == t || i >= e)
        return CORRAL_EPARSE;
    req->target = buf + t;
    req->target_len = i - t;
    i++;
    if (e - i != 8 || memcmp(buf + i, "HTTP/1.", 7) != 0 ||
        (buf[i + 7] != '0' && buf[i + 7] != '1'))
        return CORRAL_EPARSE;
    req->minor = buf[i + 7] - '0';
    return 0;
}

static int parse_header(const char *buf, size_t p, size_t e, corral_http_request_t *req)
{
    size_t i = p;
    while (i < e && is_tchar((unsigned char)buf[i]))
        i++;
    if (i == p || i >= e || buf[i] != ':')
        return CORRAL_EPARSE; /* also rejects obsolete line folding (leading blank) */
    if (req->nheaders == CORRAL_HTTP_MAX_HEADERS)
        return CORRAL_ETOOBIG;
    corral_http_header_t *h = &req->headers[req->nheaders++];
    h->name = buf + p;
    h->name_len = i - p;
    i++;
    while (i < e && (buf[i] == ' ' || buf[i] == '\t'))
        i++;
    size_t v = i;
    for (; i < e; i++) {
        unsigned char c = (unsigned char)buf[i];
        if ((c < 0x20 && c != '\t') || c == 0x7f)
            return CORRAL_EPARSE;
    }
    while (e > v && (buf[e - 1] == ' ' || buf[e - 1] == '\t'))
        e--;
    h->value = buf + v;
    h->value_len = e - v;
    return 0;
}

static bool token_in_list(const char *v, size_t n, const char *tok)
{
    size_t tl = strlen(tok);
    size_t i = 0;
    while (i < n) {
        while (i < n && (v[i] == ' ' || v[i] == '\t' || v[i] == ','))
            i++;
        size_t s = i;
        while (i < n && v[i] != ',')
            i++;
        size_t e = i;
        while (e > s && (v[e - 1] == ' ' || v[e - 1] == '\t'))
            e--;
        if (e - s == tl && strncasecmp(v + s, tok, tl) == 0)
            return true;
    }
    return false;
}

static int derive(corral_http_request_t *req)
{
    req->content_length = -1;
    req->keep_alive = req->minor == 1;
    for (size_t i = 0; i < req->nheaders; i++) {
        const corral_http_header_t *h = &req->headers[i];
        if (h->name_len == 14 && strncasecmp(h->name, "content-length", 14) == 0) {
            if (h->value_len == 0 || h->value_len > 18 || req->content_length >= 0)
                return CORRAL_EPARSE;
            int64_t n = 0;
            for (size_t k = 0; k < h->value_len; k++) {
                if (!isdigit((unsigned char)h->value[k]))
                    return CORRAL_EPARSE;
                n = n * 10 + (h->value[k] - '0');
            }
            req->content_length = n;
        } else if (h->name_len == 17 && strncasecmp(h->name, "transfer-encoding", 17) == 0) {
            /* As Go's net/http: exactly one Transfer-Encoding, exactly
             * "chunked" (chunked must be last, and no other coding is
             * implemented: "chunked, gzip" or "gzip, chunked" are 501). */
            if (req->minor == 0)
                return CORRAL_EPARSE;
            if (req->chunked || h->value_len != 7 || strncasecmp(h->value, "chunked", 7) != 0)
                return CORRAL_EUNSUPPORTED;
            req->chunked = true;
        } else if (h->name_len == 10 && strncasecmp(h->name, "connection", 10) == 0) {
            if (token_in_list(h->value, h->value_len, "close"))
                req->keep_alive = false;
            else if (token_in_list(h->value, h->value_len, "keep-alive"))
                req->keep_alive = true;
        } else if (h->name_len == 6 && strncasecmp(h->name, "expect", 6) == 0) {
            req->expect_continue =
                h->value_len == 12 && strncasecmp(h->value, "100-continue", 12) == 0;
        }
    }
    if (req->chunked && req->content_length >= 0)
        return CORRAL_EPARSE;
    return 0;
}

int corral_http_parse_request(const char *buf, size_t len, size_t max, corral_http_request_t *req)
{
    memset(req, 0, sizeof(*req));
    size_t p = 0;
    /* RFC 9112: ignore empty lines before the request line. */
    while (p < len && (buf[p] == '\r' || buf[p] == '\n') && p < 8)
        p++;
    long e = line_end(buf, len, p);
    if (e < 0)
        return len > max ? CORRAL_ETOOBIG : CORRAL_EAGAIN;
    if ((size_t)e >= max)
        return CORRAL_ETOOBIG;
    int rc = parse_request_line(buf, p, trim_cr(buf, p, (size_t)e), req);
    if (rc)
        return rc;
    p = (size_t)e + 1;
    for (;;) {
        e = line_end(buf, len, p);
        if (e < 0)
            return len > max ? CORRAL_ETOOBIG : CORRAL_EAGAIN;
        if ((size_t)e >= max)
            return CORRAL_ETOOBIG;
        size_t le = trim_cr(buf, p, (size_t)e);
        if (le == p)
            break; /* the blank line */
        rc = parse_header(buf, p, le, req);
        if (rc)
            return rc;
        p = (size_t)e + 1;
    }
    rc = derive(req);
    return rc ? rc : (int)(e + 1);
}

const char *corral_http_header(const corral_http_request_t *req, const char *name, size_t *len)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < req->nheaders; i++) {
        const corral_http_header_t *h = &req->headers[i];
        if (h->name_len == n && strncasecmp(h->name, name, n) == 0) {
            if (len)
                *len = h->value_len;
            return h->value;
        }
    }
    return NULL;
}

/* --- chunked bodies ---------------------------------------------------------- */

enum {
    CH_SIZE = 0, /* hex digits of the chunk size */
    CH_EXT,      /* chunk extension up to CR/LF (ignored) */
    CH_SIZE_LF,  /* LF after the size line's CR */
    CH_DATA,     /* chunk bytes */
    CH_DATA_CR,  /* CR (or LF) after the data */
    CH_DATA_LF,  /* LF after that CR */
    CH_TRAILER,  /* start of a trailer line, or the final blank line */
    CH_TRAILER_LINE,
    CH_TRAILER_LF,
    CH_END_LF, /* LF of the final blank line */
    CH_DONE,
};

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* One framing byte (not chunk data). Returns 0 or CORRAL_EPARSE. */
static int chunk_byte(corral_http_chunked_t *st, char c)
{
    switch (st->state) {
    case CH_SIZE:
        if (hexval(c) >= 0) {
            if (++st->digits > 15)
                return CORRAL_EPARSE; /* no chunk is anywhere near 2^60 bytes */
            st->size = st->size * 16 + (uint64_t)hexval(c);
            return 0;
        }
        if (st->digits == 0)
            return CORRAL_EPARSE;
        if (c == ';' || c == ' ' || c == '\t')
            st->state = CH_EXT;
        else if (c == '\r')
            st->state = CH_SIZE_LF;
        else if (c == '\n')
            st->state = st->size ? CH_DATA : CH_TRAILER;
        else
            return CORRAL_EPARSE;
        return 0;
    case CH_EXT:
        if (c == '\r')
            st->state = CH_SIZE_LF;
        else if (c == '\n')
            st->state = st->size ? CH_DATA : CH_TRAILER;
        else if ((unsigned char)c < 0x20 && c != '\t')
            return CORRAL_EPARSE;
        return 0;
    case CH_SIZE_LF:
        if (c != '\n')
            return CORRAL_EPARSE;
        st->state = st->size ? CH_DATA : CH_TRAILER;
        return 0;
    case CH_DATA_CR:
        if (c == '\r')
            st->state = CH_DATA_LF;
        else if (c == '\n')
            st->state = CH_SIZE, st->digits = 0, st->size = 0;
        else
            return CORRAL_EPARSE;
        return 0;
    case CH_DATA_LF:
        if (c != '\n')
            return CORRAL_EPARSE;
        st->state = CH_SIZE, st->digits = 0, st->size = 0;
        return 0;
    case CH_TRAILER:
        if (c == '\r')
            st->state = CH_END_LF;
        else if (c == '\n')
            st->state = CH_DONE;
        else
            st->state = CH_TRAILER_LINE;
        return 0;
    case CH_TRAILER_LINE:
        if (c == '\r')
            st->state = CH_TRAILER_LF;
        else if (c == '\n')
            st->state = CH_TRAILER;
        return 0;
    case CH_TRAILER_LF:
        if (c != '\n')
            return CORRAL_EPARSE;
        st->state = CH_TRAILER;
        return 0;
    case CH_END_LF:
        if (c != '\n')
            return CORRAL_EPARSE;
        st->state = CH_DONE;
        return 0;
    default:
        return CORRAL_EPARSE;
    }
}

int corral_http_chunked_feed(corral_http_chunked_t *st, const char *in, size_t len,
                             size_t *consumed, corral_buf_t *out, size_t max)
{
    size_t i = 0;
    while (i < len && st->state != CH_DONE) {
        if (st->state == CH_DATA) {
            size_t n = len - i;
            if ((uint64_t)n > st->size)
                n = (size_t)st->size;
            if (out->len + n > max) {
                *consumed = i;
                return CORRAL_ETOOBIG;
            }
            corral_buf_append(out, in + i, n);
            i += n;
            st->size -= n;
            if (st->size == 0)
                st->state = CH_DATA_CR;
            continue;
        }
        int rc = chunk_byte(st, in[i]);
        if (rc) {
            *consumed = i;
            return rc;
        }
        i++;
    }
    *consumed = i;
    return st->state == CH_DONE ? 1 : 0;
}

/* --- URLs ------------------------------------------------------------------------ */

int corral_http_unescape(const char *s, size_t len, bool plus_is_space, char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (c == '%') {
            if (i + 2 >= len || hexval(s[i + 1]) < 0 || hexval(s[i + 2]) < 0)
                return CORRAL_EPARSE;
            c = (char)(hexval(s[i + 1]) * 16 + hexval(s[i + 2]));
            if (c == '\0')
                return CORRAL_EPARSE;
            i += 2;
        } else if (c == '+' && plus_is_space) {
            c = ' ';
        } else if (c == '\0') {
            return CORRAL_EPARSE;
        }
        out[o++] = c;
    }
    out[o] = '\0';
    return (int)o;
}

bool corral_http_query_next(const char *q, size_t qlen, size_t *pos, const char **key,
                            size_t *key_len, const char **val, size_t *val_len)
{
    size_t i = *pos;
    while (i < qlen && q[i] == '&')
        i++;
    if (i >= qlen) {
        *pos = i;
        return false;
    }
    size_t s = i;
    while (i < qlen && q[i] != '&')
        i++;
    const char *eq = memchr(q + s, '=', i - s);
    *key = q + s;
    if (eq) {
        *key_len = (size_t)(eq - (q + s));
        *val = eq + 1;
        *val_len = (size_t)(q + i - (eq + 1));
    } else {
        *key_len = i - s;
        *val = q + i;
        *val_len = 0;
    }
    *pos = i;
    return true;
}

const char *corral_http_reason(int code)
{
    switch (code) {
    case 100:
        return "Continue";
    case 200:
        return "OK";
    case 201:
        return "Created";
    case 202:
        return "Accepted";
    case 204:
        return "No Content";
    case 304:
        return "Not Modified";
    case 400:
        return "Bad Request";
    case 401:
        return "Unauthorized";
    case 403:
        return "Forbidden";
    case 404:
        return "Not Found";
    case 405:
        return "Method Not Allowed";
    case 406:
        return "Not Acceptable";
    case 409:
        return "Conflict";
    case 410:
        return "Gone";
    case 413:
        return "Request Entity Too Large";
    case 415:
        return "Unsupported Media Type";
    case 422:
        return "Unprocessable Entity";
    case 429:
        return "Too Many Requests";
    case 431:
        return "Request Header Fields Too Large";
    case 500:
        return "Internal Server Error";
    case 501:
        return "Not Implemented";
    case 503:
        return "Service Unavailable";
    case 504:
        return "Gateway Timeout";
    default:
        return "Unknown";
    }
}
