/*
 * HTTP/1.1 request and response heads (RFC 9112) and the chunked transfer
 * coding, parsed strictly and within fixed bounds: the router forwards what
 * it parsed, so a head two parsers would read differently (request
 * smuggling: Content-Length with Transfer-Encoding, two Content-Lengths,
 * bare LF, whitespace before a colon) is refused.
 */
#include <string.h>
#include <strings.h>

#include "router/router_int.h"

static bool is_tchar(unsigned char c)
{
    if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
        return true;
    return c && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

bool corral__hdr_is(const corral__hdr_t *h, const char *name)
{
    size_t n = strlen(name);
    return h->nlen == n && strncasecmp(h->name, name, n) == 0;
}

bool corral__token_in(const char *v, size_t vlen, const char *token)
{
    size_t tl = strlen(token), i = 0;
    while (i < vlen) {
        while (i < vlen && (v[i] == ' ' || v[i] == '\t' || v[i] == ','))
            i++;
        size_t s = i;
        while (i < vlen && v[i] != ',')
            i++;
        size_t e = i;
        while (e > s && (v[e - 1] == ' ' || v[e - 1] == '\t'))
            e--;
        if (e - s == tl && strncasecmp(v + s, token, tl) == 0)
            return true;
    }
    return false;
}

/* The end of the line starting at i (index of its CR), or -1 when the CRLF
 * has not arrived; -2 when a bare LF or CR appears. */
static long line_end(const char *p, size_t n, size_t i)
{
    for (; i < n; i++) {
        if (p[i] == '\r') {
            if (i + 1 >= n)
                return -1;
            return p[i + 1] == '\n' ? (long)i : -2;
        }
        if (p[i] == '\n')
            return -2;
    }
    return -1;
}

static int parse_version(const char *p, size_t n, int *minor)
{
    if (n != 8 || memcmp(p, "HTTP/1.", 7) != 0) {
        if (n == 8 && memcmp(p, "HTTP/", 5) == 0 && p[5] >= '0' && p[5] <= '9')
            return -505;
        return -400;
    }
    if (p[7] != '0' && p[7] != '1')
        return -505;
    *minor = p[7] - '0';
    return 0;
}

static int parse_fields(const char *p, size_t n, size_t i, corral__head_t *h, int bad)
{
    bool have_cl = false, have_te = false;
    h->content_length = -1;
    for (;;) {
        long e = line_end(p, n, i);
        if (e == -2)
            return bad;
        if (e < 0)
            return n >= CORRAL__HTTP_MAX_HEAD ? (bad == -400 ? -431 : bad) : 0;
        if ((size_t)e + 2 > CORRAL__HTTP_MAX_HEAD)
            return bad == -400 ? -431 : bad;
        if ((size_t)e == i) {
            h->len = (size_t)e + 2;
            break;
        }
        if (h->nhdrs == CORRAL__HTTP_MAX_HEADERS)
            return bad == -400 ? -431 : bad;
        size_t j = i;
        while (j < (size_t)e && is_tchar((unsigned char)p[j]))
            j++;
        if (j == i || j >= (size_t)e || p[j] != ':')
            return bad; /* obs-fold, empty name, space before colon */
        corral__hdr_t *f = &h->hdrs[h->nhdrs++];
        f->name = p + i;
        f->nlen = j - i;
        j++;
        while (j < (size_t)e && (p[j] == ' ' || p[j] == '\t'))
            j++;
        size_t ve = (size_t)e;
        while (ve > j && (p[ve - 1] == ' ' || p[ve - 1] == '\t'))
            ve--;
        for (size_t k = j; k < ve; k++) {
            unsigned char c = (unsigned char)p[k];
            if ((c < 0x20 && c != '\t') || c == 0x7f)
                return bad;
        }
        f->val = p + j;
        f->vlen = ve - j;
        i = (size_t)e + 2;
        if (corral__hdr_is(f, "content-length")) {
            if (f->vlen == 0 || f->vlen > 18)
                return bad;
            int64_t v = 0;
            for (size_t k = 0; k < f->vlen; k++) {
                if (f->val[k] < '0' || f->val[k] > '9')
                    return bad;
                v = v * 10 + (f->val[k] - '0');
            }
            if (have_cl && v != h->content_length)
                return bad;
            have_cl = true;
            h->content_length = v;
        } else if (corral__hdr_is(f, "transfer-encoding")) {
            /* chunked must be the last coding, and only once */
            if (h->chunked)
                return bad;
            size_t s = f->vlen;
            while (s > 0 && f->val[s - 1] != ',')
                s--;
            const char *last = f->val + s;
            size_t ll = f->vlen - s;
            while (ll > 0 && (*last == ' ' || *last == '\t'))
                last++, ll--;
            if (ll == 7 && strncasecmp(last, "chunked", 7) == 0 &&
                !corral__token_in(f->val, s, "chunked"))
                h->chunked = true;
            else
                return bad == -400 ? -501 : bad;
            have_te = true;
        } else if (corral__hdr_is(f, "connection")) {
            if (corral__token_in(f->val, f->vlen, "close"))
                h->conn_close = true;
            if (corral__token_in(f->val, f->vlen, "keep-alive"))
                h->conn_keep_alive = true;
            if (corral__token_in(f->val, f->vlen, "upgrade"))
                h->upgrade = true;
        } else if (corral__hdr_is(f, "expect")) {
            if (f->vlen == 12 && strncasecmp(f->val, "100-continue", 12) == 0)
                h->expect_continue = true;
        } else if (corral__hdr_is(f, "host")) {
            if (h->host)
                return bad;
            h->host = f;
        }
    }
    if (have_cl && have_te)
        return bad;
    if (h->minor == 0 && !h->conn_keep_alive)
        h->conn_close = true;
    return (int)h->len;
}

/* Clear a head before parsing (the header array itself is left as is). */
static void head_reset(corral__head_t *h)
{
    memset(h, 0, offsetof(corral__head_t, hdrs));
    h->nhdrs = 0;
    h->len = 0;
    h->content_length = -1;
    h->chunked = h->conn_close = h->conn_keep_alive = h->expect_continue = h->upgrade = false;
    h->host = NULL;
}

int corral__http_parse_request(const char *p, size_t n, corral__head_t *h)
{
    head_reset(h);
    size_t i = 0;
    /* RFC 9112 2.2: ignore at least one empty line before a request-line */
    while (i + 1 < n && p[i] == '\r' && p[i + 1] == '\n' && i < 4)
        i += 2;
    long e = line_end(p, n, i);
    if (e == -2)
        return -400;
    if (e < 0) {
        if (n - i > CORRAL__HTTP_MAX_TARGET + 64)
            return -414;
        return 0;
    }
    size_t j = i;
    while (j < (size_t)e && is_tchar((unsigned char)p[j]))
        j++;
    if (j == i || j >= (size_t)e || p[j] != ' ')
        return -400;
    h->method = p + i;
    h->mlen = j - i;
    size_t t = ++j;
    while (j < (size_t)e && p[j] != ' ') {
        unsigned char c = (unsigned char)p[j];
        if (c <= 0x20 || c == 0x7f)
            return -400;
        j++;
    }
    if (j == t || j >= (size_t)e)
        return -400;
    if (j - t > CORRAL__HTTP_MAX_TARGET)
        return -414;
    h->target = p + t;
    h->tlen = j - t;
    int rc = parse_version(p + j + 1, (size_t)e - j - 1, &h->minor);
    if (rc < 0)
        return rc;
    rc = parse_fields(p, n, (size_t)e + 2, h, -400);
    if (rc > 0 && h->minor == 1 && !h->host)
        return -400; /* RFC 9112 3.2: a 1.1 request without Host */
    return rc;
}

int corral__http_parse_response(const char *p, size_t n, corral__head_t *h)
{
    head_reset(h);
    long e = line_end(p, n, 0);
    if (e == -2)
        return -502;
    if (e < 0)
        return n >= CORRAL__HTTP_MAX_HEAD ? -502 : 0;
    if (e < 12 || p[8] != ' ')
        return -502;
    if (parse_version(p, 8, &h->minor) < 0)
        return -502;
    int st = 0;
    for (int k = 9; k < 12; k++) {
        if (p[k] < '0' || p[k] > '9')
            return -502;
        st = st * 10 + (p[k] - '0');
    }
    if (st < 100 || (e > 12 && p[12] != ' '))
        return -502;
    h->status = st;
    return parse_fields(p, n, (size_t)e + 2, h, -502);
}

/* --- chunked ------------------------------------------------------------------------ */

enum {
    CH_SIZE = 0, /* hex digits */
    CH_EXT,      /* after ';' up to CR */
    CH_SIZE_LF,
    CH_DATA,
    CH_DATA_CR,
    CH_DATA_LF,
    CH_TRAILER,    /* start of a trailer line or the final CRLF */
    CH_TRAILER_LN, /* inside a trailer line */
    CH_TRAILER_LF,
    CH_FINAL_LF,
    CH_DONE,
};

#define CH_MAX_LINE    4096
#define CH_MAX_TRAILER ((uint32_t)64 << 10)

bool corral__chunked_done(const corral__chunked_t *c)
{
    return c->state == CH_DONE;
}

static int hexval(char ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F')
        return ch - 'A' + 10;
    return -1;
}

ssize_t corral__chunked_feed(corral__chunked_t *c, const char *p, size_t n, corral__span_fn data,
                             void *arg)
{
    size_t i = 0;
    while (i < n && c->state != CH_DONE) {
        char ch = p[i];
        switch (c->state) {
        case CH_SIZE: {
            int v = hexval(ch);
            if (v >= 0) {
                if (++c->digits > 15)
                    return -1;
                c->remain = c->remain * 16 + (uint64_t)v;
            } else if (c->digits > 0 && (ch == ';' || ch == ' ' || ch == '\t')) {
                c->state = CH_EXT;
                c->linelen = 0;
            } else if (c->digits > 0 && ch == '\r') {
                c->state = CH_SIZE_LF;
            } else {
                return -1;
            }
            i++;
            break;
        }
        case CH_EXT:
            if (ch == '\r')
                c->state = CH_SIZE_LF;
            else if (ch == '\n' || ++c->linelen > CH_MAX_LINE)
                return -1;
            i++;
            break;
        case CH_SIZE_LF:
            if (ch != '\n')
                return -1;
            i++;
            c->digits = 0;
            if (c->remain == 0) {
                c->state = CH_TRAILER;
                c->linelen = 0;
            } else {
                c->state = CH_DATA;
            }
            break;
        case CH_DATA: {
            size_t k = n - i;
            if (k > c->remain)
                k = (size_t)c->remain;
            if (data)
                data(arg, p + i, k);
            i += k;
            c->remain -= k;
            if (c->remain == 0)
                c->state = CH_DATA_CR;
            break;
        }
        case CH_TRAILER:
            if (ch == '\r') {
                c->state = CH_FINAL_LF;
            } else if (ch == '\n') {
                return -1;
            } else {
                c->state = CH_TRAILER_LN;
                c->linelen = 1;
                c->trailer++;
            }
            i++;
            break;
        case CH_TRAILER_LN:
            if (ch == '\r')
                c->state = CH_TRAILER_LF;
            else if (ch == '\n' || ++c->linelen > CH_MAX_LINE || ++c->trailer > CH_MAX_TRAILER)
                return -1;
            i++;
            break;
        default: { /* one expected byte, then the next state */
            static const struct {
                int state;
                char want;
                int next;
            } fixed[] = {{CH_DATA_CR, '\r', CH_DATA_LF},
                         {CH_DATA_LF, '\n', CH_SIZE},
                         {CH_TRAILER_LF, '\n', CH_TRAILER},
                         {CH_FINAL_LF, '\n', CH_DONE}};
            size_t k = 0;
            while (k < sizeof(fixed) / sizeof(fixed[0]) && fixed[k].state != c->state)
                k++;
            if (k == sizeof(fixed) / sizeof(fixed[0]) || ch != fixed[k].want)
                return -1;
            c->state = fixed[k].next;
            i++;
            break;
        }
        }
    }
    return (ssize_t)i;
}
