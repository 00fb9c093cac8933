/*
 * A client of a Kubernetes API server (Corral's own or kube-apiserver):
 * where the server is and how to authenticate, from flags, the environment
 * or a kubeconfig file; and requests over libcurl (HTTP and HTTPS), whole
 * or streamed line by line (watch, logs). The corral CLI's get, apply,
 * describe, delete and logs use only this and the object model, as curl's
 * tool uses only libcurl.
 *
 * Configuration precedence, as kubectl's: an explicit flag, then
 * CORRAL_SERVER (server only), then the kubeconfig named by --kubeconfig,
 * else the first existing file of $KUBECONFIG (a colon-separated list; the
 * files are not merged), else ~/.kube/config; with none of them the server
 * is http://127.0.0.1:6443, where `corral apiserver` listens by default.
 */
#ifndef CORRAL_CLIENT_H
#define CORRAL_CLIENT_H

#include <stdbool.h>
#include <stddef.h>

#include "corral/buf.h"
#include "corral/common.h"

#define CORRAL_CLIENT_DEFAULT_SERVER "http://127.0.0.1:6443"

/* Where and how to connect. Strings are owned (corral_strdup'ed) and freed
 * by corral_client_config_fini; PEM data may hold any bytes. */
typedef struct corral_client_config {
    char *server;    /* "https://host:port" */
    char *token;     /* bearer token, or NULL */
    char *namespace; /* the context's namespace, else "default" */
    char *ca_file;   /* certificate-authority */
    char *ca_data;   /* certificate-authority-data, decoded PEM */
    size_t ca_data_len;
    char *cert_file, *key_file; /* client-certificate, client-key */
    char *cert_data, *key_data; /* ...-data, decoded PEM */
    size_t cert_data_len, key_data_len;
    bool insecure; /* insecure-skip-tls-verify */
    char *source;  /* where the settings came from, for messages */
} corral_client_config_t;

/* What the user gave on the command line (all may be NULL/false). */
typedef struct corral_client_flags {
    const char *server, *token, *kubeconfig, *context, *namespace, *ca_file;
    bool insecure;
} corral_client_flags_t;

void corral_client_config_init(corral_client_config_t *c);
void corral_client_config_fini(corral_client_config_t *c);

/*
 * Fill c from a kubeconfig's text (YAML or JSON): the context named
 * context (NULL: current-context), its cluster and user. Relative file
 * paths in it are taken relative to the directory of file. Returns 0, or
 * CORRAL_EINVAL with "FILE: message" (with a line when one applies) in err.
 */
int corral_kubeconfig_parse(const char *text, size_t len, const char *file, const char *context,
                            corral_client_config_t *c, char *err, size_t errlen);

/* Resolve the configuration from flags, the environment and the kubeconfig
 * files (see above). Returns 0 or a negative code with a message in err. */
int corral_client_config_load(const corral_client_flags_t *f, corral_client_config_t *c, char *err,
                              size_t errlen);

/* --- requests --------------------------------------------------------------------------- */

typedef struct corral_client corral_client_t;

/* A connection context (one libcurl handle, kept alive between requests).
 * cfg is copied. */
corral_client_t *corral_client_new(const corral_client_config_t *cfg);
void corral_client_free(corral_client_t *c);
/* The server's URL, as configured. */
const char *corral_client_server(const corral_client_t *c);
/* Abort any request of c (a watch or a followed log included) within about
 * a second once *flag becomes non-zero; NULL clears it. flag is borrowed and
 * may be set from another thread. */
void corral_client_set_abort(corral_client_t *c, const volatile int *flag);
/* The media types to ask for: an accept list naming protobuf
 * (application/vnd.kubernetes.protobuf, --kube-api-content-type) makes the
 * client send `Accept: application/vnd.kubernetes.protobuf, application/json`
 * and turn protobuf answers (objects, lists, Status, watch frames) into the
 * JSON bodies and JSON watch lines callers read; NULL or anything else asks
 * JSON only (the default). Request bodies stay JSON. */
void corral_client_set_accept(corral_client_t *c, const char *accept);
/* Bound corral_client_request: the whole request within timeout_ms (0: 60 s)
 * and a body of at most max_body bytes (0: unbounded; over it the request
 * returns CORRAL_ETOOBIG with r->error set). */
void corral_client_set_limits(corral_client_t *c, long timeout_ms, size_t max_body);

typedef struct corral_client_resp {
    long code;             /* HTTP status; 0 when no response came */
    corral_buf_t body;     /* the response body */
    corral_buf_t warnings; /* "Warning:" header texts, one per line */
    char error[256];       /* transport error (connection refused, TLS, ...), else "" */
} corral_client_resp_t;

void corral_client_resp_init(corral_client_resp_t *r);
void corral_client_resp_fini(corral_client_resp_t *r);

/* One request. path is absolute ("/api/v1/pods?limit=5"); body may be NULL;
 * ctype NULL means application/json. Returns 0 when a response came (any
 * status; see r->code), CORRAL_EIO with r->error otherwise. */
int corral_client_request(corral_client_t *c, const char *method, const char *path,
                          const char *ctype, const char *body, size_t len, corral_client_resp_t *r);

/* A streamed GET (watch, follow logs): line(ctx, text, len) runs for each
 * complete line of a 2xx body (without the newline; a last unterminated
 * line too); returning non-zero stops the stream. A non-2xx body is
 * collected in r->body instead. Same returns as corral_client_request. */
int corral_client_stream(corral_client_t *c, const char *path,
                         int (*line)(void *ctx, const char *text, size_t len), void *ctx,
                         corral_client_resp_t *r);

/* The message of an error response: a Status body's message, else the body
 * itself (trimmed), into out. reason gets the Status reason ("" when
 * none). */
void corral_client_error(const corral_client_resp_t *r, char *reason, size_t rlen, char *out,
                         size_t len);

#endif
