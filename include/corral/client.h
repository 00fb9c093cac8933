/*
 * A client of a Kubernetes API server (Corral's own or kube-apiserver):
 * where the server is and how to authenticate, from flags, the environment,
 * kubeconfig files or the pod's service account; and requests over libcurl
 * (HTTP and HTTPS), whole or streamed line by line (watch, logs), with
 * client-go's client-side rate limit and retries. The corral CLI's get,
 * apply, describe, delete and logs use only this and the object model, as
 * curl's tool uses only libcurl.
 *
 * Configuration precedence, as kubectl's and client-go's: an explicit flag,
 * then CORRAL_SERVER (server only), then the kubeconfig: the file named by
 * --kubeconfig, else every file of $KUBECONFIG (a colon-separated list)
 * MERGED as client-go merges them (missing files skipped; the first file to
 * set current-context wins; clusters, users and contexts merged by name,
 * the first file to name one wins), else ~/.kube/config; else, with no
 * server named by any of them, the in-cluster service account
 * (KUBERNETES_SERVICE_HOST/PORT, token, ca.crt and namespace under
 * /var/run/secrets/kubernetes.io/serviceaccount, a root tests move with
 * CORRAL_SERVICEACCOUNT_DIR); with none of them the server is
 * http://127.0.0.1:6443, where `corral apiserver` listens by default.
 *
 * Credentials: a token, a token file (re-read when its mtime changes, at
 * least once a minute, and on a 401, as client-go does with the rotated
 * service account token), client certificates, or an exec credential plugin
 * (client.authentication.k8s.io/v1 and v1beta1 ExecCredential: run when no
 * unexpired credential is cached, again on a 401; its output bounded and
 * the run timed out).
 *
 * Requests: a token bucket per client (qps/burst; client-go's 5/10 when a
 * resolved configuration sets none, none at all for a configuration built
 * in code with corral_client_config_init), a watch limited only when it
 * opens. 429 and 5xx answers carrying Retry-After are retried (at most 10
 * tries, the wait capped) whatever the verb, since the server did not act
 * on them; a connection reset or closed before any answer is retried for
 * GET only (a refused connection is not).
 */
#ifndef CORRAL_CLIENT_H
#define CORRAL_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "corral/buf.h"
#include "corral/common.h"

#define CORRAL_CLIENT_DEFAULT_SERVER "http://127.0.0.1:6443"

/* An exec credential plugin (kubeconfig users[].user.exec). */
typedef struct corral_client_exec {
    char *command;
    char **args; /* nargs strings */
    size_t nargs;
    char **env; /* nenv "NAME=value" strings, added to the environment */
    size_t nenv;
    char *api_version;         /* client.authentication.k8s.io/v1 or /v1beta1 */
    char *install_hint;        /* printed when the command cannot be run */
    char *interactive_mode;    /* Never, IfAvailable, Always (v1beta1: IfAvailable) */
    bool provide_cluster_info; /* KUBERNETES_EXEC_INFO carries the cluster */
    long timeout_ms;           /* 0: 60 s */
} corral_client_exec_t;

#define CORRAL_CLIENT_DEFAULT_QPS   5.0 /* client-go's DefaultQPS */
#define CORRAL_CLIENT_DEFAULT_BURST 10  /* client-go's DefaultBurst */

/* Where and how to connect. Strings are owned (corral_strdup'ed) and freed
 * by corral_client_config_fini; PEM data may hold any bytes. */
typedef struct corral_client_config {
    char *server;     /* "https://host:port" */
    char *token;      /* bearer token, or NULL */
    char *token_file; /* re-read when it changes (tokenFile, the service account's) */
    char *namespace;  /* the context's namespace, else "default" */
    char *ca_file;    /* certificate-authority */
    char *ca_data;    /* certificate-authority-data, decoded PEM */
    size_t ca_data_len;
    char *cert_file, *key_file; /* client-certificate, client-key */
    char *cert_data, *key_data; /* ...-data, decoded PEM */
    size_t cert_data_len, key_data_len;
    bool insecure;              /* insecure-skip-tls-verify */
    char *tls_server_name;      /* tls-server-name: informational (exec cluster info) */
    corral_client_exec_t *exec; /* exec credential plugin, or NULL */
    bool in_cluster;            /* resolved from the service account */
    /* Client-side rate limit: requests per second and burst of each client
     * made from this configuration. qps 0: client-go's defaults (5, 10);
     * negative: no limit. corral_client_config_init sets -1, the loader 0. */
    double qps;
    int burst;
    char *accept; /* --kube-api-content-type, for corral_client_set_accept; NULL: JSON */
    char *source; /* where the settings came from, for messages */
} corral_client_config_t;

/* What the user gave on the command line (all may be NULL/false). */
typedef struct corral_client_flags {
    const char *server, *token, *kubeconfig, *context, *namespace, *ca_file;
    bool insecure;
    double qps;         /* --kube-api-qps; 0: not given */
    int burst;          /* --kube-api-burst; 0: not given */
    const char *accept; /* --kube-api-content-type */
} corral_client_flags_t;

void corral_client_config_init(corral_client_config_t *c);
void corral_client_config_fini(corral_client_config_t *c);
/* A deep copy of src into dst (dst need not be initialised). */
void corral_client_config_copy(corral_client_config_t *dst, const corral_client_config_t *src);

/*
 * Fill c from a kubeconfig's text (YAML or JSON): the context named
 * context (NULL: current-context), its cluster and user. Relative file
 * paths in it are taken relative to the directory of file. Returns 0, or
 * CORRAL_EINVAL with "FILE: message" (with a line when one applies) in err.
 */
int corral_kubeconfig_parse(const char *text, size_t len, const char *file, const char *context,
                            corral_client_config_t *c, char *err, size_t errlen);

/* Resolve the configuration from flags, the environment, the kubeconfig
 * files and the service account (see above). Returns 0 or a negative code
 * with a message in err. */
int corral_client_config_load(const corral_client_flags_t *f, corral_client_config_t *c, char *err,
                              size_t errlen);

/*
 * The same from several kubeconfig files, merged as client-go merges
 * $KUBECONFIG (paths that do not exist are skipped; none readable: 0 with
 * *found false).
 */
int corral_kubeconfig_load_files(const char *const *paths, size_t n, const char *context,
                                 corral_client_config_t *c, bool *found, char *err, size_t errlen);

/* The in-cluster configuration, as client-go's rest.InClusterConfig:
 * CORRAL_ENOENT when KUBERNETES_SERVICE_HOST or _PORT is unset or there is
 * no token file (not in a pod), CORRAL_EIO with a message when the token
 * cannot be read. The namespace: $POD_NAMESPACE, else the namespace file,
 * else "default". */
int corral_client_config_in_cluster(corral_client_config_t *c, char *err, size_t errlen);

/* --- exec credential plugins ----------------------------------------------------------- */

typedef struct corral_client_cred {
    char *token;                /* status.token */
    char *cert_data, *key_data; /* status.clientCertificateData / clientKeyData (PEM) */
    int64_t expiry_us;          /* status.expirationTimestamp; 0: none (cached for good) */
} corral_client_cred_t;

void corral_client_cred_fini(corral_client_cred_t *cr);
/* Parse a plugin's ExecCredential output; api_version is what was asked
 * (the answer must carry the same). Bounded: at most 1 MiB of text. */
int corral_exec_credential_parse(const char *text, size_t len, const char *api_version,
                                 corral_client_cred_t *out, char *err, size_t errlen);
/* cfg's exec plugin credential: the cached one while unexpired, else the
 * plugin is run. failed: the token (or certificate) a request was refused
 * with (401); when the cache still holds it, the plugin is run again. The
 * process-wide cache is keyed by the plugin and the server, so every client
 * of one configuration shares one run. out is owned by the caller. */
int corral_client_exec_credential(const corral_client_config_t *cfg, const char *failed,
                                  corral_client_cred_t *out, char *err, size_t errlen);
/* Plugin runs since the process started (tests). */
uint64_t corral_client_exec_runs(void);
/* Forget every cached credential and failure backoff (tests; a process
 * whose plugins changed). Runs in progress keep their slots. */
void corral_client_exec_forget(void);

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
/* Retries: at most tries attempts of one request (0: 10, client-go's; 1: no
 * retry) and the longest wait honoured from Retry-After or a connection
 * error's backoff (0: 10 s). */
void corral_client_set_retry(corral_client_t *c, int tries, long max_wait_ms);
/* Time, for tests: now_us (monotonic microseconds) and sleep_us replace the
 * clock the token bucket, the waits and the token-file check use. NULL
 * restores the real ones. */
void corral_client_set_clock(corral_client_t *c, int64_t (*now_us)(void *ctx),
                             void (*sleep_us)(void *ctx, int64_t us), void *ctx);
/* Requests made, waits taken by the rate limiter (and their total), and
 * retries: for tests and metrics. */
typedef struct corral_client_stats {
    uint64_t requests, throttled, retries, credential_runs;
    int64_t throttled_us;
} corral_client_stats_t;
void corral_client_stats(const corral_client_t *c, corral_client_stats_t *out);

typedef struct corral_client_resp {
    long code;             /* HTTP status; 0 when no response came */
    corral_buf_t body;     /* the response body */
    corral_buf_t warnings; /* "Warning:" header texts, one per line */
    char error[256];       /* transport error (connection refused, TLS, ...), else "" */
    long retry_after_s;    /* the Retry-After header's seconds; -1 when none */
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
