/*
 * Internals of the API server shared by its files:
 *   server.c     event loops, connections, request framing, responses
 *   routes.c     the declarative route table, dispatch, docs/api.md
 *   resources.c  the served resources, discovery, health and version
 *   status.c     metav1.Status error bodies
 *   objects.c    object semantics shared by the handlers (server-set
 *                metadata, validation, selectors, attributes)
 *   read.c       get and list
 *   write.c      create, update, patch (patch.c applies patch documents)
 *   delete.c     delete, deletecollection, graceful pod deletion
 *   subres.c     binding, eviction
 *   scale.c      the scale subresource (Volcano Jobs, InferenceServices)
 *   sa.c         ServiceAccount tokens, SelfSubjectReview, default
 *                ServiceAccounts, the kubernetes Service (reviews of
 *                rules and access, and impersonation, are in authz.c)
 *   logproxy.c   calls to node agents: pods/log, nodes/NAME/proxy, scrapes
 *   metricsserver.c  metrics.k8s.io (NodeMetrics, PodMetrics) from scrapes of
 *                the agents' /metrics/resource
 *   apimetrics.c the API server's own /metrics
 *   nodeauthz.c  the Node authorizer and NodeRestriction admission
 *   watch.c      watch streams
 *   views.c      resources served as another shape of stored objects
 *   events_v1.c  events.k8s.io/v1 Events, a view of core v1 Events
 *
 * Threading: each loop thread owns its connections, its store reader and its
 * watchers; handlers run on the loop thread of their connection and never
 * block on the writer: a write submits a store operation whose completion
 * is posted back to the loop (corral__req_t.cont).
 */
#ifndef CORRAL_APISERVER_INT_H
#define CORRAL_APISERVER_INT_H

#include <event2/bufferevent.h>
#include <event2/event.h>
#include <pthread.h>
#include <sys/socket.h>

#include "corral/apiserver.h"
#include "corral/auth.h"
#include "corral/diag.h"
#include "corral/http.h"
#include "corral/model.h"
#include "corral/schema.h"
#include "corral/selector.h"
#include "corral/store.h"

#define CORRAL__MAX_LOOPS     16
#define CORRAL__MAX_HEAD      ((size_t)64 << 10)
#define CORRAL__VERSION_MAJOR "1"
#define CORRAL__VERSION_MINOR "20"
#define CORRAL__GIT_VERSION   "v1.20.0-corral.0.1.0"
/* What `corral apiserver --strict` reports: a current Kubernetes. */
#define CORRAL__STRICT_MINOR       "32"
#define CORRAL__STRICT_GIT_VERSION "v1.32.0-corral.0.1.0"
#define CORRAL__SA_KEY_LEN         32

/* Reads done in slices (server.c): big lists and a watch's initial events
 * are rendered CORRAL__SLICE_US of loop time at a time from a snapshot
 * reader of their own, so other connections of the loop wait at most about
 * that long; at most CORRAL__MAX_SNAPS such reads per loop (further ones run
 * at once on the loop's reader, as before), CORRAL__SPARE_SNAPS kept idle. */
#define CORRAL__SLICE_US  10000
#define CORRAL__MAX_SNAPS 8
/* Writes whose body is this big run their handler on a worker thread. */
#define CORRAL__OFFLOAD_MIN ((size_t)128 << 10)
#define CORRAL__WORKERS     2
#define CORRAL__SPARE_SNAPS 2

typedef struct corral__conn corral__conn_t;
typedef struct corral__loop corral__loop_t;
typedef struct corral__watch corral__watch_t;
typedef struct corral__req corral__req_t;

/* The options of a write (create, update, patch, apply): ?dryRun=All,
 * ?fieldValidation=Strict|Warn|Ignore, ?fieldManager, ?force. */
enum { CORRAL__FV_WARN = 0, CORRAL__FV_STRICT, CORRAL__FV_IGNORE };
#define CORRAL__MAX_DUPS 20
typedef struct corral__wopts {
    bool dry_run;
    int validation;      /* CORRAL__FV_* */
    const char *manager; /* ?fieldManager, else from the User-Agent */
    bool manager_set;    /* ?fieldManager was given */
    bool force;
    const char *dups[CORRAL__MAX_DUPS]; /* duplicate fields of the body (paths) */
    size_t ndups;
} corral__wopts_t;

/* A view: a resource whose objects are another resource's stored objects
 * in another shape (events.k8s.io/v1 Events are core v1 Events, as
 * upstream). Requests and answers are converted at the edges; storage,
 * attributes, validation and watches are the stored resource's. */
typedef struct corral__view {
    /* Rewrite obj from the served shape into the stored one, in place. */
    void (*to_stored)(corral_arena_t *a, corral_val_t *obj);
    /* And back (obj is a copy the caller owns). */
    void (*to_served)(corral_arena_t *a, corral_val_t *obj);
    /* The stored field label for a served one; NULL when not selectable. */
    const char *(*field_label)(const char *served);
    /* A stored field path as the served shape spells it (buf when renamed). */
    const char *(*field_path)(const char *stored, char *buf, size_t len);
    /* Checks only creates through the view get, on the served shape (before
     * defaults); errors go to d. */
    void (*check_create)(const corral_val_t *obj, const char *ns, corral_diag_t *d);
} corral__view_t;

extern const corral__view_t corral__events_v1_view;

/* A served resource: a kind from the model registry plus how it is served. */
typedef struct corral__res {
    const corral_kind_info_t *info;
    char key[96];               /* storage key: plural, or plural.group */
    char name[96];              /* as messages name it: plural, or plural.group */
    const corral__view_t *view; /* NULL unless a view of key's objects */
    char list_kind[64];         /* "PodList" */
    bool has_status;            /* a /status subresource */
    bool has_scale;             /* a /scale subresource (scale.c) */
    bool return_deleted;        /* DELETE answers with the object (pods), else a Status */
    bool status_on_create;      /* status kept on create (nodes); else reset */
} corral__res_t;

/* All served resources (views last), and lookups. */
const corral__res_t *corral__res_all(size_t *n);
const corral__res_t *corral__res_find(const char *group, const char *version, const char *plural);
const corral__res_t *corral__res_of_kind(corral_kind_t k);

struct corral_apiserver {
    corral_apiserver_opts_t opts;
    corral_store_t *store;
    corral_tokens_t *tokens; /* --token-auth-file; NULL: no authentication */
    void *tls;               /* SSL_CTX when serving HTTPS, else NULL */
    int port;
    int nloops;
    corral__loop_t *loops;
    bool started, stopping;
    int nthreads; /* loop threads running (joined by corral_apiserver_wait) */
    char listen_host[256];
    int log_streams;                          /* proxied pods/log streams open (atomic) */
    int agent_calls;                          /* collected agent calls open (atomic) */
    struct corral__apimetrics *metrics;       /* the server's own metrics (apimetrics.c) */
    struct corral__msrv *msrv;                /* the metrics-server (metricsserver.c) */
    struct corral__openapi *openapi;          /* the OpenAPI documents (openapi.c) */
    unsigned char sa_key[CORRAL__SA_KEY_LEN]; /* ServiceAccount token signing key (sa.c) */
    /* Workers for the CPU-heavy first part of writes with big bodies
     * (corral__offload): a queue of requests, taken by nworkers threads. */
    pthread_t workers[CORRAL__WORKERS];
    int nworkers;
    pthread_mutex_t wmu;
    pthread_cond_t wcv;
    corral__req_t *whead, *wtail;
    bool wstop;
};

struct corral__loop {
    corral_apiserver_t *srv;
    corral__req_t *wdone_head, *wdone_tail; /* offloaded requests back from a worker (mu) */
    int index;
    struct event_base *base;
    struct evconnlistener *listener;
    struct event *wake; /* activated by the writer thread and by stop */
    pthread_t thread;
    pthread_mutex_t mu;
    corral_store_op_t *done_head, *done_tail; /* completed ops, linked by next */
    corral_store_reader_t *rd;
    corral_store_reader_t *spare[CORRAL__SPARE_SNAPS]; /* idle snapshot readers */
    int nspare;
    int nsnaps; /* snapshot readers handed out */
    corral__watch_t *watchers;
    corral__conn_t *conns;
    size_t nconns;
};

/* One HTTP request being served. Lives in its connection; everything it
 * points to is in arena a, reset after the response. */
struct corral__req {
    corral__conn_t *conn;
    corral__loop_t *loop;
    corral_apiserver_t *srv;
    corral_arena_t *a;
    /* The store reader handlers read with (corral__rd): the loop's, or a
     * reader of the request's own while a worker runs its handler. */
    corral_store_reader_t *rd;
    /* Offloaded (corral__offload): while on_worker, replies are kept in
     * stash and store ops in deferred, for the loop to send and submit. */
    bool on_worker, stashed;
    int stash_code;
    const char *stash_ctype;
    corral_buf_t stash;
    corral_store_op_t *deferred_head, *deferred_tail;
    corral__req_t *work_next;
    const corral_http_request_t *http;
    const char *method;
    const char *path; /* decoded path, without the query */
    const char *query;
    size_t query_len;
    const char *body;
    size_t body_len;
    /* Filled by the router. */
    const char *group, *version, *ns, *name, *sub;
    const corral__res_t *res;
    /* The authenticated user (NULL when authentication is off), after
     * impersonation. */
    const corral_user_t *user;
    /* Who the reviews (SelfSubjectReview, -RulesReview) report: user, or
     * with authentication off the user of a ServiceAccount token or of the
     * impersonation headers (NULL: anonymous); extra is the impersonated
     * user's extra map (a MAP of SEQs) or NULL. */
    const corral_user_t *ident;
    corral_val_t *ident_extra;
    /* Asynchronous writes: cont runs on the loop thread as each op completes
     * (pending already decremented). attempts counts compare-and-swap retries. */
    void (*cont)(corral__req_t *r, corral_store_op_t *op);
    int pending;
    int attempts;
    void *hctx;                        /* handler state across cont */
    void (*handler)(corral__req_t *r); /* the route's handler (run again on retry) */
    void (*cleanup)(corral__req_t *r); /* frees handler state if the client goes away */
    /* A stream that is not a watch (the pods/log proxy): called instead of
     * the watch's functions when the client goes away and when the queued
     * output has drained below the stream's mark. */
    void (*stream_closed)(corral__req_t *r);
    void (*stream_writable)(corral__req_t *r);
    corral_buf_t headers; /* extra response headers ("Warning: ...\r\n") */
    corral__wopts_t *wo;  /* a write's options (NULL for other requests) */
};

/* --- server.c: responses ------------------------------------------------------- */

/* Send a complete response and finish the request. body may be NULL. */
void corral__reply(corral__req_t *r, int code, const char *ctype, const char *body, size_t len);
/* Same, taking over b's contents (no copy). */
void corral__reply_buf(corral__req_t *r, int code, corral_buf_t *b);
/* A JSON object response. */
void corral__reply_json(corral__req_t *r, int code, const char *json, size_t len);

/* Chunked streaming (watch). start sends the head; write frames one chunk;
 * end sends the last chunk and finishes the request. */
void corral__stream_start(corral__req_t *r);
/* The same with another status and Content-Type (the log proxy's text). */
void corral__stream_start_as(corral__req_t *r, int code, const char *ctype);
void corral__stream_write(corral__conn_t *c, const char *data, size_t len);
/* One chunk made of several pieces. */
struct iovec;
void corral__stream_writev(corral__conn_t *c, const struct iovec *iov, int n);
void corral__stream_end(corral__conn_t *c);
/* Bytes queued on the connection, not yet taken by the kernel. */
size_t corral__conn_pending(corral__conn_t *c);
struct bufferevent *corral__conn_bev(corral__conn_t *c);
corral__req_t *corral__conn_req(corral__conn_t *c);
/* Close the connection after what is queued has been sent. */
void corral__conn_close_after_write(corral__conn_t *c);

/* A snapshot reader for a read done in slices, or NULL when the loop has
 * CORRAL__MAX_SNAPS out or one cannot be opened (then read at once on
 * loop->rd). Give it back when the read ends (list_end done or not). */
corral_store_reader_t *corral__snap_take(corral__loop_t *loop);
void corral__snap_give(corral__loop_t *loop, corral_store_reader_t *rd);
/* Monotonic microseconds; a slice ends once now - t0 >= CORRAL__SLICE_US. */
int64_t corral__mono_us(void);
/* Run fn(-1, EV_TIMEOUT, arg) on the loop soon, after it has polled its
 * sockets; *ev is created on first use (the caller event_frees it). */
void corral__later(corral__loop_t *loop, struct event **ev, event_callback_fn fn, void *arg);

/* Submit a store op for r: counts it in r->pending and routes its completion
 * back to r's loop, where r->cont runs. */
void corral__submit(corral__req_t *r, corral_store_op_t *op);

/* The store reader r's handler reads with. */
static inline corral_store_reader_t *corral__rd(const corral__req_t *r)
{
    return r->rd ? r->rd : r->loop->rd;
}

/* Run handler h of r on a worker thread instead of the loop (a write with
 * a big body: parsing, validation and managedFields cost CPU in proportion
 * to it, and the loop's other connections must not wait). Replies and
 * store ops the handler makes are handed back to the loop. Returns false
 * (and does nothing) when r cannot be offloaded: run h inline then. */
bool corral__offload(corral__req_t *r, void (*h)(corral__req_t *r));

/* --- apimetrics.c: the server's own /metrics ---------------------------------------- */

typedef struct corral__apimetrics corral__apimetrics_t;
/* Create the registry and families (after the store is open); free after
 * the store is closed. */
void corral__apimetrics_init(corral_apiserver_t *s);
void corral__apimetrics_free(corral_apiserver_t *s);
struct corral_metrics *corral__apimetrics_registry(corral_apiserver_t *s);
/* A response queued (or a stream ended): count r with its status code;
 * t0_us when it began (the duration is observed unless stream). */
void corral__apimetrics_request(const corral__req_t *r, int code, int64_t t0_us, bool stream);
/* A long-running request started (+1) or ended (-1). */
void corral__apimetrics_longrunning(const corral__req_t *r, int delta);
void corral__h_metrics(corral__req_t *r);

/* --- metricsserver.c: metrics.k8s.io from the agents' /metrics/resource --------------- */

/* Start scraping on loop 0 (after the loops exist); free after the loops
 * stopped. */
void corral__msrv_init(corral_apiserver_t *s);
void corral__msrv_free(corral_apiserver_t *s);
void corral__h_nodemetrics(corral__req_t *r); /* list and get */
void corral__h_podmetrics(corral__req_t *r);  /* list (one or every namespace) and get */

/* Is r served in strict mode (docs/apiserver.md, "Strict mode")? */
static inline bool corral__strict(const corral__req_t *r)
{
    return r->srv->opts.strict;
}
/* A scale subresource kube-apiserver has (Deployments); the others are
 * Corral's, off in strict mode. */
bool corral__scale_served(const corral__req_t *r);
/* strict.c: kube's per-kind update rules (pod spec, immutable selectors and
 * values) in strict mode; replies 422 and returns false when cur -> next
 * breaks one. Always true outside strict mode. */
bool corral__strict_update_ok(corral__req_t *r, const corral_val_t *cur, const corral_val_t *next);
/* The globalDefault PriorityClass's name in strict mode (kube's Priority
 * admission gives it to pods without a class), else NULL. */
const char *corral__strict_default_priority(corral__req_t *r);

/* --- status.c ------------------------------------------------------------------- */

/* Reply with a metav1.Status. reason is the upstream reason ("NotFound");
 * kind/name fill details when non-NULL. */
void corral__status(corral__req_t *r, int code, const char *reason, const char *kind,
                    const char *name, const char *fmt, ...) CORRAL_PRINTF(6, 7);
/* Write a Status body into b (for watch ERROR events and 201 Success). */
void corral__status_json(corral_buf_t *b, int code, const char *status, const char *reason,
                         const char *message);
/* 404 `<resource> "<name>" not found`. */
void corral__not_found(corral__req_t *r);
/* 409 Conflict for a failed resourceVersion precondition. */
void corral__conflict(corral__req_t *r, const char *why);
/* 422 Invalid from the decoder's diagnostics (errors only). */
void corral__invalid(corral__req_t *r, const char *kind, const char *name, const corral_diag_t *d);
/* 500 for a store failure. */
void corral__internal(corral__req_t *r, int err);

/* --- authz.c: authentication and RBAC ------------------------------------------- */

/* Authenticate and authorize r (sets r->user). Replies 401/403 and returns
 * false when it may not proceed. */
bool corral__authorize(corral__req_t *r);
/* kube's request attributes of r (verb, group, resource, ...). */
void corral__request_attrs(corral__req_t *r, corral_authz_attrs_t *a);
/* Admission of an RBAC object write (o decoded; cur the stored object on
 * update, else NULL): roleRef immutability and escalation checks. Replies
 * 403/422 and returns false when refused; true for other kinds. */
bool corral__admit_rbac(corral__req_t *r, const corral_obj_t *o, const corral_val_t *cur);
/* POST .../selfsubjectaccessreviews: may the requesting user do this? */
void corral__h_ssar(corral__req_t *r);

/* --- nodeauthz.c: the Node authorizer and NodeRestriction -------------------------------- */

/* NAME when u is system:node:NAME in group system:nodes, else NULL. */
const char *corral__node_of(const corral_user_t *u);
/* Does the Node authorizer allow node's request a? When not, why gets its
 * reason ("" when it has none) for the 403 if RBAC denies too. */
bool corral__node_authorize(corral__req_t *r, const corral_authz_attrs_t *a, const char *node,
                            char *why, size_t len);
/* NodeRestriction of a create (cur NULL) or an update/patch of r's object
 * by a node user (obj the object to store, cur the stored one). Replies
 * 403 and returns false when refused; true for other users. */
bool corral__admit_node(corral__req_t *r, const corral_val_t *obj, const corral_val_t *cur);
/* The same for a delete (or, eviction true, an eviction) of cur. */
bool corral__admit_node_delete(corral__req_t *r, const corral_val_t *cur, bool eviction);

/* --- routes.c -------------------------------------------------------------------- */

void corral__dispatch(corral__req_t *r);

/* --- resources.c ------------------------------------------------------------------ */

void corral__h_healthz(corral__req_t *r);
void corral__h_version(corral__req_t *r);
void corral__h_api(corral__req_t *r);
void corral__h_api_version(corral__req_t *r);
void corral__h_apis(corral__req_t *r);
void corral__h_apis_group(corral__req_t *r);
void corral__h_apis_version(corral__req_t *r);
void corral__print_resources(FILE *fp);
/* openapi.c: the OpenAPI documents, built once per server (on first use). */
typedef struct corral__openapi corral__openapi_t;
corral__openapi_t *corral__openapi_new(void);
void corral__openapi_free(corral__openapi_t *o);
void corral__h_openapi(corral__req_t *r);       /* /openapi/v2 */
void corral__h_openapi_v3(corral__req_t *r);    /* /openapi/v3 (the index) */
void corral__h_openapi_v3_gv(corral__req_t *r); /* /openapi/v3/api/v1, /openapi/v3/apis/G/V */
/* ui.c: the web dashboard's static files at /ui, /ui/{name}. */
void corral__h_ui(corral__req_t *r);

/* tables.c: metav1.Table responses (kubectl's `get`). */
enum { CORRAL__TABLE_NONE = 0, CORRAL__TABLE_METADATA, CORRAL__TABLE_OBJECT, CORRAL__TABLE_BARE };
/* What r asks for: NONE (plain objects) or a Table with rows carrying the
 * object's metadata (default), the object, or nothing (includeObject). */
int corral__table_mode(corral__req_t *r);
/* {"kind":"Table",...,"columnDefinitions":[...],"rows":[ */
void corral__table_begin(corral_buf_t *b, const corral__res_t *res);
/* One row for the object json; false when it does not parse. */
bool corral__table_row(corral_buf_t *b, const corral__res_t *res, const char *json, size_t len,
                       int mode, bool first);
/* ],"metadata":{...}} */
void corral__table_end(corral_buf_t *b, int64_t rev, const char *cont);

/* --- objects.c: shared object semantics -------------------------------------------- */

/* A query parameter (decoded, in r->a), or NULL. */
const char *corral__param(corral__req_t *r, const char *name);
/* Parse a boolean / integer parameter; replies 400 and returns false on bad input. */
bool corral__param_bool(corral__req_t *r, const char *name, bool *out);
bool corral__param_int(corral__req_t *r, const char *name, int64_t *out, bool *set);
/* A non-negative decimal integer that fits int64 (digits only); false else. */
bool corral__parse_u63(const char *s, int64_t *out);

/* Parse the request body (JSON, or YAML for application/yaml) into a tree.
 * Replies 400/415 and returns NULL when it cannot. */
corral_val_t *corral__body_tree(corral__req_t *r);
/* An apply body: JSON when it starts with '{', else YAML (one object). */
corral_val_t *corral__apply_tree(corral__req_t *r);
/* --- negotiate.c: protobuf responses ----------------------------------------------- */

#define CORRAL__PB_WATCH_MEDIA "application/vnd.kubernetes.protobuf;stream=watch"
/* Whether the Accept list (len bytes) prefers protobuf, as kube-apiserver
 * negotiates; corral__want_pb: r's Accept header. */
bool corral__accept_pb(const char *accept, size_t len);
bool corral__want_pb(corral__req_t *r);
/* When r prefers protobuf and the JSON object body has a protobuf form: its
 * encoding appended to out, true. Else false, out unchanged: send the JSON. */
bool corral__pb_body(corral__req_t *r, const char *json, size_t len, corral_buf_t *out);
/* One watch event (the object's JSON) as a frame appended to out: a 4-byte
 * big-endian length and a WatchEvent (an ERROR event with a 500 Status when
 * the object has no protobuf form). */
void corral__pb_frame(const char *type, const char *json, size_t len, corral_buf_t *out);

/* Parse a patch document (JSON: an object or a list); replies 400 on error. */
corral_val_t *corral__patch_tree(corral__req_t *r);
/* Parse stored JSON (from the store) into a tree in r->a; NULL on error. */
corral_val_t *corral__json_tree(corral_arena_t *a, const char *json, size_t len);

/* Check apiVersion/kind of body against the route (filling them in when
 * absent), and name/namespace. Replies 400 and returns false on mismatch. */
bool corral__check_identity(corral__req_t *r, corral_val_t *obj, bool need_name);

/* Default and validate obj as kind r->res; on success *out is the decoded
 * object and warnings are queued as Warning headers; else replies 422. */
bool corral__validate(corral__req_t *r, corral_val_t *obj, corral_obj_t **out);

/* Selector attributes of a decoded object. */
void corral__attrs(const corral_obj_t *o, corral_buf_t *out);

/* Metadata helpers. */
corral_val_t *corral__meta(corral_arena_t *a, corral_val_t *obj);
const char *corral__meta_str(const corral_val_t *obj, const char *key);
void corral__now_rfc3339(char *out, size_t len);

/* Label and field selectors from the query; replies 400 and returns false on
 * a bad one. */
typedef struct corral__filter {
    corral_selector_t labels, fields;
    bool any; /* some selector present */
} corral__filter_t;
bool corral__filter_parse(corral__req_t *r, corral__filter_t *f);
bool corral__filter_match(const corral__filter_t *f, const char *attrs, size_t len);

/* The store key fields of r's object. */
const char *corral__ns_key(const corral__req_t *r);

/* --- views.c: conversion at the edges of a view ------------------------------------ */

/* Append the object as res serves it (stored json unless res is a view). */
void corral__put_obj(corral_buf_t *b, const corral__res_t *res, const char *json, size_t len);
/* Reply with a stored object as r's resource serves it. */
void corral__reply_obj(corral__req_t *r, int code, const char *json, size_t len);
/* Turn a body in r's served shape into the stored shape (create: after the
 * view's own create checks). Replies 422 and returns false when refused;
 * true, doing nothing, for resources that are not views. */
bool corral__view_in(corral__req_t *r, corral_val_t *obj, bool create);
/* The current object (stored shape) in r's served shape, in place. */
void corral__view_out(corral__req_t *r, corral_val_t *obj);
/* A field selector label of r's resource as the store's attributes name
 * it; NULL when the resource does not support it. */
const char *corral__field_label(const corral__req_t *r, const char *label);

/* apply.c: PATCH with application/apply-patch+yaml. */
void corral__h_apply(corral__req_t *r);

/* --- handlers ----------------------------------------------------------------------- */

void corral__h_get(corral__req_t *r);
void corral__h_list(corral__req_t *r); /* also watch=1 */
void corral__h_create(corral__req_t *r);
void corral__h_update(corral__req_t *r);
void corral__h_patch(corral__req_t *r);
void corral__h_delete(corral__req_t *r);
void corral__h_delete_collection(corral__req_t *r);
void corral__h_binding(corral__req_t *r);
void corral__h_bindings(corral__req_t *r);
void corral__h_eviction(corral__req_t *r);
void corral__h_log(corral__req_t *r);
void corral__h_node_proxy(corral__req_t *r);

/* logproxy.c: calls to a node agent, from one loop thread. The target is
 * resolved from the stored Node only (port > 0 overrides the kubelet port). */
typedef struct corral__agent_target {
    struct sockaddr_storage ss;
    socklen_t sl;
    char where[320]; /* node "n" at ADDR:PORT */
} corral__agent_target_t;
/* 0, CORRAL_ENOENT (no such node) or CORRAL_EINVAL (no endpoint), with a
 * message in err. */
int corral__agent_target(corral_store_reader_t *rd, corral_arena_t *a, const char *node, int port,
                         corral__agent_target_t *t, char *err, size_t errlen);
typedef struct corral__agent_call corral__agent_call_t;
/* The end of a collected call, on the loop thread: code the agent's status
 * and ctype its Content-Type, or code 0 and err why it failed. body (at
 * most the call's limit) may be taken over. */
typedef void (*corral__agent_done_fn)(void *arg, int code, const char *ctype, corral_buf_t *body,
                                      const char *err);
/* GET path (URL-safe, with its query) from the agent, collecting at most
 * limit bytes. 0 with *out and done called later (never from inside), or
 * CORRAL_EAGAIN (too many calls open) / CORRAL_EIO with a message in err. */
int corral__agent_get(corral__loop_t *loop, const corral__agent_target_t *t, const char *path,
                      size_t limit, corral__agent_done_fn done, void *arg,
                      corral__agent_call_t **out, char *err, size_t errlen);
/* Abandon a call: done is not called. NULL is fine. */
void corral__agent_cancel(corral__agent_call_t *c);
void corral__h_watch(corral__req_t *r);

/* scale.c: the scale subresource of Volcano Jobs and InferenceServices. */
void corral__h_scale_get(corral__req_t *r);
void corral__h_scale_update(corral__req_t *r);
void corral__h_scale_patch(corral__req_t *r);
/* Reply with the Scale of a stored object of r's resource. */
void corral__reply_scale(corral__req_t *r, int code, const char *json, size_t len);

/* sa.c: ServiceAccount tokens, SelfSubjectReview, SelfSubjectRulesReview,
 * default ServiceAccounts and the `kubernetes` Service. */
void corral__h_sa_token(corral__req_t *r);
/* The signing key in the data dir (created 0600 when absent). */
int corral__sa_key_init(corral_apiserver_t *s, char *err, size_t errlen);
/* Does a bearer token look like a JWT? */
bool corral__sa_token_like(const char *tok, size_t len);
/* The ServiceAccount user of a valid token this server signed, else NULL. */
const corral_user_t *corral__sa_authenticate(corral__req_t *r, const char *tok, size_t len);
/* system:serviceaccount:NS:NAME in extra groups plus its own three (in a). */
const corral_user_t *corral__sa_user(corral_arena_t *a, const char *ns, const char *name,
                                     const char *uid, const char **extra, size_t nextra);
/* The default ServiceAccount of namespaces, the kubernetes Service and
 * Endpoints (after the socket is bound). */
int corral__bootstrap_services(corral_apiserver_t *s, char *err, size_t errlen);
/* After a namespace create: create its default ServiceAccount, then reply
 * 201 with ns_ev (taken over). */
void corral__create_default_sa(corral__req_t *r, const char *ns, corral_store_event_t *ns_ev);
void corral__h_ssr(corral__req_t *r);
void corral__h_ssrr(corral__req_t *r);

/* write.c: finish an update given the current object and the desired one
 * (used by update, patch, binding and delete's graceful path). */
typedef struct corral__cur {
    corral_store_row_t row;
    corral_val_t *tree;
} corral__cur_t;
#define CORRAL__UPD_BINDING 1u /* keep generation; answer with a Status Success */
#define CORRAL__UPD_SCALE   2u /* answer with the object's Scale (scale.c) */
void corral__update_with(corral__req_t *r, const corral__cur_t *cur, corral_val_t *next,
                         const char *user_rv, int success_code, unsigned flags);
#define CORRAL__UPD_MANAGED 4u /* managedFields already computed (apply) */
/* Parse r's write options into r->wo; what names the options in messages
 * ("CreateOptions", "PatchOptions"). Replies 422 and returns false on a
 * bad value. */
bool corral__wopts_parse(corral__req_t *r, const char *what, bool apply);
/* Create obj (parsed, identity checked). flags as corral__update_with. */
void corral__create_with(corral__req_t *r, corral_val_t *obj, unsigned flags);
/* The scope of r's fields for managedFields (CORRAL__SCOPE_*). */
int corral__scope(const corral__req_t *r);
/* Reply with obj (stored shape) as r's resource serves it: dry runs. */
void corral__reply_tree(corral__req_t *r, int code, const corral_val_t *obj);
/* The object to store for an update of r's resource (or its status) from
 * the current object and the one the client sent (in, changed). */
corral_val_t *corral__merge_for(corral__req_t *r, const corral__cur_t *cur, corral_val_t *in);
/* Read the current object of r (404 reply and false when absent). */
bool corral__read_current(corral__req_t *r, corral__cur_t *cur);
/* Restart the handler from the top after a compare-and-swap conflict. */
void corral__retry(corral__req_t *r);

/* delete.c: the deletion decision for one object (also eviction). Submits
 * the op and sets r->cont; returns false when it already replied. */
typedef struct corral__delopts {
    int64_t grace;
    bool grace_set;
    const char *pre_uid, *pre_rv;
    bool dry_run;
} corral__delopts_t;
bool corral__delopts_parse(corral__req_t *r, const corral_val_t *body, corral__delopts_t *o);
void corral__delete_one(corral__req_t *r, const corral__cur_t *cur, const corral__delopts_t *o,
                        int success_code, bool status_reply);

/* patch.c: apply patch documents to a tree (pure functions). On error return
 * CORRAL_EINVAL with a message in why (CORRAL_ETOOBIG: more operations than
 * CORRAL__PATCH_MAX_OPS, answered 413). */
#define CORRAL__PATCH_MAX_OPS   10000
#define CORRAL__PATCH_MAX_DEPTH 100
/* Does v fit max_bytes of JSON (approximately) and max_depth levels? The
 * walk stops at the first excess, so it costs O(max_bytes) at most; *size
 * (may be NULL) gets what was counted. */
bool corral__val_fits(const corral_val_t *v, size_t max_bytes, int max_depth, size_t *size);
int corral__merge_patch(corral_arena_t *a, corral_val_t **target, const corral_val_t *patch);
int corral__json_patch(corral_arena_t *a, corral_val_t **target, const corral_val_t *ops, char *why,
                       size_t why_len);
/* smpatch.c: strategic merge patch with upstream's merge keys. */
int corral__strategic_patch(corral_arena_t *a, corral_val_t **target, const corral_val_t *patch,
                            char *why, size_t why_len);
/* How the list at a dotted path ("spec.containers[].env", "[]" for a list
 * element) merges, from the same table: 'k' by key (*key), 's' as a set of
 * scalars, 'a' atomic (replaced whole). */
char corral__list_type(const char *path, const char **key);
/* Built-in kinds (core and *.k8s.io groups) take strategic patches. */
bool corral__strategic_supported(const corral_kind_info_t *k);

/* managed.c: field sets in FieldsV1 form (internally every member node has
 * "."; corral__fields_in/out convert from/to what managedFields hold) and
 * upstream's field management. All pure functions over trees in arena a. */
enum { CORRAL__SCOPE_ALL = 0, CORRAL__SCOPE_SPEC, CORRAL__SCOPE_STATUS };
/* The set of obj's fields: leaves, list items, empty maps (all: every node). */
corral_val_t *corral__fields_of(corral_arena_t *a, const corral_val_t *obj, bool all);
corral_val_t *corral__fields_union(corral_arena_t *a, const corral_val_t *x, const corral_val_t *y);
corral_val_t *corral__fields_diff(corral_arena_t *a, const corral_val_t *x, const corral_val_t *y);
corral_val_t *corral__fields_inter(corral_arena_t *a, const corral_val_t *x, const corral_val_t *y);
bool corral__fields_empty(const corral_val_t *x);
corral_val_t *corral__fields_in(corral_arena_t *a, const corral_val_t *fields_v1);
corral_val_t *corral__fields_out(corral_arena_t *a, const corral_val_t *set);
/* What changed from old to new_ (either may be NULL: an empty object). */
void corral__fields_compare(corral_arena_t *a, const corral_val_t *old, const corral_val_t *new_,
                            corral_val_t **added, corral_val_t **modified, corral_val_t **removed);
/* set without the fields the server owns (apiVersion, kind, metadata.name,
 * uid, ...) and, by scope, without status or with only status. */
corral_val_t *corral__fields_strip(corral_arena_t *a, const corral_val_t *set, int scope);
/* Remove set's members from obj, keeping what keep (may be NULL) names. */
void corral__fields_remove(corral_arena_t *a, corral_val_t *obj, const corral_val_t *set,
                           const corral_val_t *keep);
/* Each member's path as kube prints it (".spec.containers[name=\"c\"].image"). */
void corral__fields_each(corral_arena_t *a, const corral_val_t *set,
                         void (*fn)(void *ctx, const char *path), void *ctx);
typedef struct corral__mf_opts {
    const char *manager;
    const char *api_version;
    const char *subresource; /* NULL, or "status" */
    const char *now;         /* RFC 3339 time for changed entries */
    int scope;               /* CORRAL__SCOPE_* */
} corral__mf_opts_t;
/* managedFields after a non-apply write from live (NULL: a create) to next,
 * starting from the entries base (a list, may be NULL). */
corral_val_t *corral__managed_update(corral_arena_t *a, const corral_val_t *base,
                                     const corral_val_t *live, const corral_val_t *next,
                                     const corral__mf_opts_t *o);
/* An apply of config by o->manager: merged (live merged with config) loses
 * the fields the manager stopped applying that nobody else owns; *mf_out
 * gets the entries. Returns CORRAL_ECONFLICT with *conflicts a list of
 * {manager, field} when, without force, the apply changes fields other
 * managers own. */
int corral__managed_apply(corral_arena_t *a, const corral_val_t *base, const corral_val_t *live,
                          const corral_val_t *config, corral_val_t *merged,
                          const corral__mf_opts_t *o, bool force, corral_val_t **mf_out,
                          corral_val_t **conflicts);

/* watch.c */
void corral__watch_pump(corral__loop_t *loop);
void corral__watch_closed(corral__watch_t *w);
void corral__watch_writable(corral__watch_t *w);

/* server.c: bootstrap objects created at startup. */
int corral__bootstrap(corral_apiserver_t *s, char *err, size_t errlen);
/* write.c: create one object from JSON text unless it exists (bootstrap). */
int corral__create_sync(corral_apiserver_t *s, corral_store_reader_t *rd, const char *json,
                        char *err, size_t errlen);
/* Create or replace one object from JSON text (bootstrap: the kubernetes
 * Endpoints follow the bound address). */
int corral__put_sync(corral_apiserver_t *s, corral_store_reader_t *rd, const char *json, char *err,
                     size_t errlen);
/* A create op (in a) for the object json of res, with server-set metadata
 * and defaults; NULL when it does not decode. */
corral_store_op_t *corral__create_op(corral_arena_t *a, const corral__res_t *res, const char *json);

#endif
