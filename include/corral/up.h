/*
 * `corral up`: the whole platform on one machine, as one supervised process
 * tree. The pieces are usable (and tested) on their own:
 *
 *   - PKI: a CA made once and kept forever, and the API server's serving
 *     certificate, reissued when the listen host changes or it nears expiry;
 *   - credentials: one random bearer token per component in kube-apiserver's
 *     static token file, and a kubeconfig per component;
 *   - the plan: the exact command line of every component (API server,
 *     scheduler, controller, agents), a table the supervisor runs and tests
 *     check;
 *   - RBAC: the least-privilege roles of deploy/rbac/ (embedded at build
 *     time), applied as create-or-update through the API;
 *   - the supervisor itself (corral_up_run).
 */
#ifndef CORRAL_UP_H
#define CORRAL_UP_H

#include <stdbool.h>
#include <stddef.h>

#include "corral/arena.h"
#include "corral/client.h"

/* --- PKI -------------------------------------------------------------------------------- */

typedef struct corral_pki_opts {
    const char *dir;  /* where ca.crt, ca.key, apiserver.crt, apiserver.key live */
    const char *host; /* the API server's listen host (IP or name; "" or NULL: 127.0.0.1) */
    int ca_days;      /* CA validity; 0: 3650 */
    int cert_days;    /* serving certificate validity; 0: 365 */
    int renew_days;   /* reissue the serving certificate when it expires within; 0: 30 */
} corral_pki_opts_t;

typedef struct corral_pki_status {
    bool ca_created;  /* no CA was there: made one */
    bool cert_issued; /* the serving certificate was (re)issued */
    char why[160];    /* why it was issued ("none yet", "expires ...", "host changed ...") */
} corral_pki_status_t;

/*
 * Make sure dir holds a CA (EC P-256, self-signed; never replaced once it
 * exists) and a serving certificate signed by it for 127.0.0.1, ::1,
 * localhost and host (for 0.0.0.0 or ::, the machine's hostname too). Key
 * files are written mode 0600, every file atomically. Returns 0, or a
 * negative code with the reason in err.
 */
int corral_pki_ensure(const corral_pki_opts_t *o, corral_pki_status_t *st, char *err,
                      size_t errlen);

/* --- tokens and kubeconfigs ------------------------------------------------------------- */

/* One identity: the user name and groups it gets in the token file; its
 * token is filled by corral_up_tokens_ensure. */
typedef struct corral_up_ident {
    const char *user;   /* "admin", "system:kube-scheduler", "system:node:NAME" */
    const char *groups; /* comma-separated, may be "" */
    char token[65];     /* 64 hex digits */
} corral_up_ident_t;

/*
 * Give every identity a token in the token file path (kube-apiserver's CSV:
 * token,user,uid,"group1,group2"): an identity whose user already has a line
 * keeps its token; the others get 32 random bytes as hex and a new line.
 * Lines for other users are kept. The file is written mode 0600. Returns 0
 * or a negative code with the reason in err.
 */
int corral_up_tokens_ensure(const char *path, corral_up_ident_t *ids, size_t n, char *err,
                            size_t errlen);

/* Write a kubeconfig (mode 0600) for server (https URL) trusting the PEM CA
 * ca_pem, as user (a name for the entry) with token (NULL: none). */
int corral_up_kubeconfig_write(const char *path, const char *server, const char *ca_pem,
                               const char *user, const char *token, char *err, size_t errlen);

/* --- the plan ---------------------------------------------------------------------------- */

typedef struct corral_up_opts {
    const char *data_dir;    /* DIR */
    const char *listen;      /* HOST:PORT of the API server; NULL: 127.0.0.1:6443 */
    int sim_nodes;           /* simulated agents when no real GPUs are used */
    const char *sim_profile; /* their profile; NULL: h100-sxm-8 */
    int hollow_nodes;        /* hollow nodes in one more agent process (0: none) */
    const char *gpus;        /* auto | nvml | sim:PROFILE; NULL: auto */
    const char *node_name;   /* the NVML node's name; NULL: the hostname */
    int stop_timeout_s;      /* per tier on shutdown before SIGKILL; 0: 15 */
    int ready_timeout_s;     /* API server readiness; 0: 60 */
    long log_max_bytes;      /* a component log is rotated past this; 0: 64 MiB */
    /* --extra-config COMPONENT.FLAG=VALUE (minikube's form): appended as
     * --FLAG=VALUE to that component's command line; COMPONENT is apiserver,
     * scheduler, controller or agent (every agent). Checked by the plan. */
    const char **extra;
    size_t nextra;
    /* Ports of the scheduler's and the controller's /metrics on 127.0.0.1
     * (corral_up_run picks free ones); 0: their defaults, 10259 and 10257. */
    int scheduler_metrics_port, controller_metrics_port;
    /* The router's HOST:PORT (--router-listen); NULL: 127.0.0.1:8080; "off":
     * none. The controller writes InferenceService addresses under it. */
    const char *router_listen;
} corral_up_opts_t;

typedef enum corral_up_tier {
    CORRAL_UP_TIER_AGENT = 0, /* stopped first */
    CORRAL_UP_TIER_CONTROL,   /* scheduler, controller */
    CORRAL_UP_TIER_API,       /* stopped last */
} corral_up_tier_t;

typedef struct corral_up_component {
    const char *name;    /* "apiserver", "scheduler", "agent-sim-node-0", ... (log name) */
    const char *command; /* the subcommand ("apiserver", "agent", ...) */
    corral_up_tier_t tier;
    char **argv; /* NULL-terminated; argv[0] is "corral" */
    int argc;
} corral_up_component_t;

typedef struct corral_up_plan {
    corral_arena_t a;
    char *dir;              /* absolute data directory */
    char *host;             /* the listen host, without brackets */
    int port;               /* the listen port */
    char *server;           /* https://127.0.0.1:PORT: what clients use */
    bool real_gpus;         /* one NVML agent instead of simulated ones */
    char **nodes;           /* agent node names (hollow ones excluded) */
    size_t nnodes;          /* how many */
    corral_up_ident_t *ids; /* CORRAL_UP_ID_*, then one per node (incl. hollow) */
    size_t nids;
#define CORRAL_UP_ID_ADMIN      0
#define CORRAL_UP_ID_SCHEDULER  1
#define CORRAL_UP_ID_CONTROLLER 2
#define CORRAL_UP_ID_METRICS    3 /* system:corral-metrics: what a Prometheus needs */
#define CORRAL_UP_ID_NODES      4 /* the first node's */
    const char **extra;           /* --extra-config entries (borrowed from the options) */
    size_t nextra;
    corral_up_component_t *comps; /* in start order: apiserver, scheduler, controller, agents */
    size_t ncomps;
    char *scheduler_metrics;  /* http://127.0.0.1:PORT of the scheduler's /metrics */
    char *controller_metrics; /* and of the controller's */
} corral_up_plan_t;

/*
 * Lay out what `corral up` runs for o: files under o->data_dir, the
 * identities and every component's command line. real_gpus says whether
 * NVML found GPUs (used when o->gpus is auto). Pure: nothing is written.
 * Returns 0, or CORRAL_EINVAL with the reason in err (bad --listen, ...).
 */
int corral_up_plan(const corral_up_opts_t *o, bool real_gpus, corral_up_plan_t *p, char *err,
                   size_t errlen);
void corral_up_plan_fini(corral_up_plan_t *p);

/* The default data directory: $XDG_DATA_HOME/corral, else
 * ~/.local/share/corral, into out. */
void corral_up_default_dir(char *out, size_t len);

/* --- RBAC -------------------------------------------------------------------------------- */

/* The manifests of deploy/rbac/ as embedded at build time: count, and the
 * file name and text of each. */
size_t corral_up_rbac_count(void);
const char *corral_up_rbac_name(size_t i);
const char *corral_up_rbac_text(size_t i, size_t *len);

/*
 * Create or update every object of a YAML/JSON manifest text through c (PUT
 * over what is there, POST when absent). file names the text in messages.
 * Returns 0, or a negative code with the first failure in err.
 */
int corral_up_apply(corral_client_t *c, const char *text, size_t len, const char *file, char *err,
                    size_t errlen);

/* --- endpoints.json ----------------------------------------------------------------------- */

/*
 * Write DIR/endpoints.json (atomically, mode 0644): where `corral up`'s
 * metrics endpoints are, for tests and a Prometheus set up by hand:
 * {"apiserver": "https://...", "scheduler": "http://...", "controller":
 * "http://...", "nodeMetrics": "https://.../api/v1/nodes/{node}/proxy/metrics"}.
 * The agents are reached through the API server's node proxy (one address
 * for every node, whatever ports the agents listen on), so the file names
 * that template rather than each agent. Returns 0 or CORRAL_EIO with the
 * reason in err.
 */
int corral_up_endpoints_write(const corral_up_plan_t *p, char *err, size_t errlen);

/* --- run ---------------------------------------------------------------------------------- */

/*
 * Run the platform until SIGINT or SIGTERM: lock DIR, make the PKI, tokens
 * and kubeconfigs, start the API server, wait until it is ready, apply the
 * RBAC, start the rest, print where things are, restart what exits with
 * backoff, and on a signal stop agents, then scheduler and controller, then
 * the API server. exe is the corral binary to run the components with.
 * Returns the exit status (0 after a clean stop).
 */
int corral_up_run(const corral_up_opts_t *o, const char *exe);

#endif
