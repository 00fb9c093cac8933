/*
 * Shared by the CLI verbs that talk to an API server (apply, get, describe,
 * delete, logs): the connection flags every verb takes, the connection,
 * kubectl-style error messages, resource and path resolution, and reading
 * manifests. Internal to src/cli (corral__cli_ names); the verbs reach the
 * server only through include/corral/client.h.
 */
#ifndef CORRAL_CLI_KUBECLI_H
#define CORRAL_CLI_KUBECLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

#include "corral/client.h"
#include "corral/model.h"

/* Long-option values of the connection flags (past any verb's own). */
enum {
    CORRAL__OPT_SERVER = 2000,
    CORRAL__OPT_TOKEN,
    CORRAL__OPT_KUBECONFIG,
    CORRAL__OPT_CONTEXT,
    CORRAL__OPT_INSECURE,
    CORRAL__OPT_CA,
    CORRAL__OPT_QPS,
    CORRAL__OPT_BURST,
    CORRAL__OPT_CONTENT_TYPE,
};

/* The connection flags (server, credentials, TLS) as kubectl names them. */
#define CORRAL__CONN_LONGOPTS                                                                      \
    {"server", required_argument, NULL, CORRAL__OPT_SERVER},                                       \
        {"token", required_argument, NULL, CORRAL__OPT_TOKEN},                                     \
        {"kubeconfig", required_argument, NULL, CORRAL__OPT_KUBECONFIG},                           \
        {"context", required_argument, NULL, CORRAL__OPT_CONTEXT},                                 \
        {"insecure-skip-tls-verify", no_argument, NULL, CORRAL__OPT_INSECURE},                     \
    {                                                                                              \
        "certificate-authority", required_argument, NULL, CORRAL__OPT_CA                           \
    }

/* Append to a verb's struct option table (before the terminator); -n is
 * --namespace, handled by corral__cli_opt too. */
#define CORRAL__CLI_LONGOPTS                                                                       \
    CORRAL__CONN_LONGOPTS,                                                                         \
    {                                                                                              \
        "namespace", required_argument, NULL, 'n'                                                  \
    }

#define CORRAL__CLI_HELP                                                                           \
    "connection (as kubectl; else $CORRAL_SERVER, $KUBECONFIG, ~/.kube/config, the\n"              \
    "pod's service account, http://127.0.0.1:6443):\n"                                             \
    "  -s, --server URL     the API server\n"                                                      \
    "      --token TOKEN    bearer token\n"                                                        \
    "      --kubeconfig FILE, --context NAME\n"                                                    \
    "      --certificate-authority FILE, --insecure-skip-tls-verify\n"                             \
    "  -n, --namespace NS   namespace (default: the context's, else default)\n"

/* The long-running components' client flags (scheduler, controller,
 * router, agent): the client's rate limit and content type, as
 * kube-scheduler names them; CORRAL__COMPONENT_LONGOPTS adds the
 * connection flags (the verbs' table without -n). */
#define CORRAL__KUBE_API_LONGOPTS                                                                  \
    {"kube-api-qps", required_argument, NULL, CORRAL__OPT_QPS},                                    \
        {"kube-api-burst", required_argument, NULL, CORRAL__OPT_BURST},                            \
    {                                                                                              \
        "kube-api-content-type", required_argument, NULL, CORRAL__OPT_CONTENT_TYPE                 \
    }
#define CORRAL__COMPONENT_LONGOPTS CORRAL__CONN_LONGOPTS, CORRAL__KUBE_API_LONGOPTS

#define CORRAL__KUBE_API_HELP                                                                      \
    "  --kube-api-qps N             requests per second to the API server (50; -1: no limit)\n"    \
    "  --kube-api-burst N           burst above it (100)\n"                                        \
    "  --kube-api-content-type T    application/vnd.kubernetes.protobuf (default) or\n"            \
    "                               application/json\n"

/* The components' defaults: kube-scheduler's 50 QPS, burst 100, protobuf. */
void corral__component_flags_init(corral_client_flags_t *f);
/* Handle one of CORRAL__COMPONENT_LONGOPTS (or 's') into f: 1 when it was
 * one, 0 when not, -1 on a bad value (printed as "PROG: --FLAG ..."). */
int corral__component_flag(const char *prog, corral_client_flags_t *f, int c, const char *arg);

typedef struct corral__cli {
    const char *prog; /* "corral get", for messages */
    corral_client_flags_t flags;
    corral_client_config_t cfg;
    corral_client_t *c;
    const char *ns; /* the namespace to use */
} corral__cli_t;

void corral__cli_init(corral__cli_t *k, const char *prog);
void corral__cli_fini(corral__cli_t *k);
/* Handle a connection option (c from getopt_long, with 's' for -s); true
 * when it was one. */
bool corral__cli_opt(corral__cli_t *k, int c, const char *arg);
/* Resolve the configuration and make the client. Prints the problem and
 * returns false when it cannot. */
bool corral__cli_connect(corral__cli_t *k);

/* Print a failed response as kubectl does: "Error from server (NotFound):
 * pods \"x\" not found", or the transport error. */
void corral__cli_error(corral__cli_t *k, const corral_client_resp_t *r);
/* Print Warning headers ("Warning: ..."), as kubectl does. */
void corral__cli_warnings(const corral_client_resp_t *r);

/* The kind a user names (plural, singular, short name, Kind, or
 * plural.group); prints kubectl's message and returns NULL when unknown. */
const corral_kind_info_t *corral__cli_resource(corral__cli_t *k, const char *name);
/* The API path of a collection (name NULL) or an object; ns ignored for
 * cluster-scoped kinds; ns NULL lists every namespace. sub: "status",
 * "log" or NULL. In a. */
const char *corral__cli_path(corral_arena_t *a, const corral_kind_info_t *k, const char *ns,
                             const char *name, const char *sub);
/* "pod", "queue.scheduling.volcano.sh": how kubectl names a kind in output. */
const char *corral__cli_kind_ref(corral_arena_t *a, const corral_kind_info_t *k);

/* GET path and parse the JSON answer into a; on failure prints the error
 * and returns NULL (code in *code when non-NULL). */
corral_val_t *corral__cli_get(corral__cli_t *k, corral_arena_t *a, const char *path, long *code);

/* Parse a JSON response body into a; NULL when it is not JSON. */
corral_val_t *corral__cli_json(corral_arena_t *a, const corral_buf_t *body);

/* Microseconds since the epoch (for ages). */
int64_t corral__cli_now_us(void);

/* A manifest document to send. */
typedef struct corral__cli_doc {
    corral_val_t *root;
    const corral_kind_info_t *info;
    char where[512]; /* "FILE:LINE" */
} corral__cli_doc_t;

/* Read every object from paths (files, directories, "-"), validating each
 * with the object model; problems are printed as FILE:LINE:COL: field:
 * message. Returns the number of errors; *docs (in a) holds the valid
 * objects. */
size_t corral__cli_read_manifests(char *const *paths, size_t npaths, corral_arena_t *a,
                                  corral__cli_doc_t **docs, size_t *ndocs);

/* --- describe (describe.c, describe_node.c) ----------------------------------------------- */

/* kubectl's describe layout: "Key:  value" lines aligned per indentation
 * level, sections ("Key:" alone), raw lines and indented tables; written
 * out by flush. */
typedef struct corral__dw {
    void *e;
    size_t n, cap;
} corral__dw_t;

void corral__dw_init(corral__dw_t *w);
void corral__dw_kv(corral__dw_t *w, int indent, const char *key, const char *fmt, ...)
    CORRAL_PRINTF(4, 5);
void corral__dw_raw(corral__dw_t *w, const char *text);
void corral__dw_table(corral__dw_t *w, int indent, const char *const *header,
                      const char *const *rows, size_t nrows, size_t ncols);
void corral__dw_flush(corral__dw_t *w, FILE *fp);

/* The scalar text at a dotted path, or NULL. */
const char *corral__desc_str(const corral_val_t *o, const char *path);
/* Name, [Roles,] [Namespace,] Labels, Annotations. */
void corral__desc_meta(corral__dw_t *w, const corral_val_t *o, bool ns, const char *roles);
/* A timestamp as kubectl prints it ("Mon, 30 Nov 2026 00:55:45 +0000"). */
const char *corral__desc_time(corral_arena_t *a, const char *rfc3339);
/* The Events section of an object; uid (may be NULL) keeps out the events
 * of an earlier object of the same name, as kubectl's describe does. */
void corral__desc_events(corral__cli_t *k, corral__dw_t *w, corral_arena_t *a,
                         const corral_kind_info_t *info, const char *ns, const char *name,
                         const char *uid);
/* A resource list (limits, capacity) as "name:  qty" lines at indent. */
void corral__desc_resources(corral__dw_t *w, int indent, const char *key, const corral_val_t *m);
/* describe node NAME (describe_node.c). */
int corral__describe_node(corral__cli_t *k, corral_arena_t *a, corral_val_t *node);
/* describe isvc NAME (describe_isvc.c). */
int corral__describe_isvc(corral__cli_t *k, corral_arena_t *a, const corral_val_t *o);
/* The status.conditions table of an object. */
void corral__desc_conditions(corral__dw_t *w, corral_arena_t *a, const corral_val_t *o);

#endif
