/*
 * Internals of the router (src/router), shared by its files and its unit
 * tests: the HTTP/1.1 head and chunked parsers (http1.c), the route table
 * and the choice of revision and pod (routes.c).
 */
#ifndef CORRAL_ROUTER_INT_H
#define CORRAL_ROUTER_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "corral/arena.h"
#include "corral/hmap.h"
#include "corral/model.h"

/* --- HTTP/1.1 heads (http1.c) ------------------------------------------------------- */

#define CORRAL__HTTP_MAX_HEAD    ((size_t)64 << 10) /* request or response head, bytes */
#define CORRAL__HTTP_MAX_HEADERS 100
#define CORRAL__HTTP_MAX_TARGET  ((size_t)16 << 10) /* request-target, bytes */

typedef struct corral__hdr {
    const char *name, *val; /* into the parsed buffer, not NUL-terminated */
    size_t nlen, vlen;
} corral__hdr_t;

/* A parsed request or response head. Pointers point into the buffer parsed. */
typedef struct corral__head {
    const char *method; /* request: method; response: NULL */
    size_t mlen;
    const char *target; /* request-target */
    size_t tlen;
    int status; /* response */
    int minor;  /* HTTP/1.minor */
    corral__hdr_t hdrs[CORRAL__HTTP_MAX_HEADERS];
    size_t nhdrs;
    size_t len;             /* bytes of the head, blank line included */
    int64_t content_length; /* -1: none */
    bool chunked;           /* Transfer-Encoding: chunked (last coding) */
    bool conn_close;        /* Connection: close (or HTTP/1.0 without keep-alive) */
    bool conn_keep_alive;   /* Connection: keep-alive */
    bool expect_continue;   /* Expect: 100-continue */
    bool upgrade;           /* Connection: upgrade */
    const corral__hdr_t *host;
} corral__head_t;

/*
 * Parse a request head from p[0..n). Returns the head length (> 0) when a
 * whole head is there, 0 when more bytes are needed, or the negated HTTP
 * status to answer: -400 malformed (also Content-Length with
 * Transfer-Encoding, differing Content-Lengths), -414 request-target too
 * long, -431 head over CORRAL__HTTP_MAX_HEAD or more than
 * CORRAL__HTTP_MAX_HEADERS fields, -501 a transfer coding other than
 * chunked, -505 not HTTP/1.x.
 */
int corral__http_parse_request(const char *p, size_t n, corral__head_t *h);
/* The same for a response head (status, minor, headers); errors -502. */
int corral__http_parse_response(const char *p, size_t n, corral__head_t *h);
/* Is header h named name (case-insensitive)? */
bool corral__hdr_is(const corral__hdr_t *h, const char *name);
/* Does the comma-separated header value contain token (case-insensitive)? */
bool corral__token_in(const char *v, size_t vlen, const char *token);

/* The chunked transfer coding, decoded incrementally: state across calls. */
typedef struct corral__chunked {
    int state;
    uint64_t remain;  /* bytes of chunk data still to come */
    uint32_t digits;  /* hex digits of the size line */
    uint32_t linelen; /* bytes of the current extension or trailer line */
    uint32_t trailer; /* bytes of trailer fields so far */
} corral__chunked_t;

/* Data bytes of the body, in order (for de-chunking); may be NULL. */
typedef void (*corral__span_fn)(void *arg, const char *p, size_t n);

/*
 * Feed n bytes of a chunked body. Returns how many belong to the body (all n,
 * or fewer when the body ended inside them: then corral__chunked_done), or
 * -1 when malformed (size over 2^60, extension or trailer line over 4 KiB,
 * trailers over 64 KiB, a missing CRLF). data (may be NULL) gets the chunk
 * data spans.
 */
ssize_t corral__chunked_feed(corral__chunked_t *c, const char *p, size_t n, corral__span_fn data,
                             void *arg);
bool corral__chunked_done(const corral__chunked_t *c);

/* --- the route table (routes.c) ------------------------------------------------------ */

typedef struct corral__rt_pod {
    const char *name; /* the pod */
    const char *key;  /* "NS/pod" */
    const char *addr; /* podIP */
    int port;         /* the serving port */
    void *st;         /* the loop's state of the pod (bound by the loop) */
} corral__rt_pod_t;

typedef struct corral__rt_rev {
    const char *name;
    const char *key;         /* "NS/revision" */
    int percent;             /* merged over traffic entries naming it */
    corral__rt_pod_t *ready; /* Ready=True, podIP, no deletionTimestamp */
    size_t nready;
    corral__rt_pod_t *starting; /* Running with a podIP, not Ready: probed while requests wait */
    size_t nstarting;
    void *st; /* the loop's state of the revision */
} corral__rt_rev_t;

typedef struct corral__rt_tag {
    const char *tag;
    size_t rev; /* index into revs */
} corral__rt_tag_t;

typedef struct corral__rt_svc {
    const char *ns, *name;
    corral__rt_rev_t *revs; /* in traffic order, unique by name */
    size_t nrevs;
    corral__rt_tag_t *tags;
    size_t ntags;
    bool has_traffic; /* status.components.predictor.traffic present */
} corral__rt_svc_t;

typedef struct corral__rt_table {
    corral_arena_t arena;
    corral__rt_svc_t *svcs;
    size_t nsvcs;
    corral_hmap_t by_key; /* "NS/S" -> index */
    uint64_t gen;
} corral__rt_table_t;

/*
 * Build a table from InferenceServices and pods (decoded objects). Pods of
 * a revision carry the label corral.dev/revision; their serving port is the
 * first container's first containerPort, else 8080. The caller frees with
 * corral__rt_free.
 */
corral__rt_table_t *corral__rt_build(const corral_obj_t *const *isvcs, size_t nisvcs,
                                     const corral_obj_t *const *pods, size_t npods);
void corral__rt_free(corral__rt_table_t *t);
const corral__rt_svc_t *corral__rt_find(const corral__rt_table_t *t, const char *ns, size_t nslen,
                                        const char *name, size_t namelen);

/* What a request names: a service, and maybe a tag or a revision. */
typedef struct corral__route_req {
    const char *ns, *svc; /* spans into the request */
    size_t nslen, svclen;
    const char *tag; /* "latest", "prev" or from Knative-Serving-Tag; NULL: none */
    size_t taglen;
    size_t strip; /* bytes of the path prefix to strip (/serving/NS/S) */
} corral__route_req_t;

/*
 * Find the service a request names: the path /serving/NS/S[/...] first,
 * else the Host. Tag hosts latest-S.NS and prev-S.NS are tried when S.NS
 * itself names no service. Returns the service or NULL; rr gets what was
 * looked up (for the 404 message: rr->ns and rr->svc NULL when neither path
 * nor host had the form).
 */
const corral__rt_svc_t *corral__route(const corral__rt_table_t *t, const char *path, size_t plen,
                                      const char *host, size_t hlen, corral__route_req_t *rr);

/* The revision a tag names in svc, or NULL. */
const corral__rt_rev_t *corral__rt_tag_rev(const corral__rt_svc_t *s, const char *tag, size_t len);
/* The revision named name in svc's traffic, or NULL. */
const corral__rt_rev_t *corral__rt_rev_named(const corral__rt_svc_t *s, const char *name,
                                             size_t len);

/*
 * Smooth weighted round robin (nginx's): cw holds one current weight per
 * revision (persisting between calls, zeroed at start); weights the
 * revisions' percents. Deterministic; over any 100 consecutive picks each
 * revision gets exactly its percent. Returns an index, or -1 when every
 * weight is 0.
 */
int corral__swrr(int64_t *cw, const int *weights, size_t n);

/* Least outstanding: the index of the smallest outstanding[i] among n,
 * skipping those excluded (excl[i] true; may be NULL), ties broken by
 * rotating from start. -1 when none. */
int corral__least(const uint32_t *outstanding, const bool *excl, size_t n, size_t start);

#endif
