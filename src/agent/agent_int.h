/*
 * The node agent's internals (corral agent): options, the per-pod and
 * per-container state the pod sync keeps, and the functions the agent's files
 * share. node.c registers the Node and renews its Lease; sync.c is the pod
 * state machine (phases, restart policy, deletion) and builds pod status;
 * env.c resolves a container's environment and $(VAR) references; proc.c is
 * the process runtime (spawning the shim, watching and killing workloads,
 * adoption after a restart); shim.c is the small supervisor process each
 * container runs under; cgroup.c applies cgroup v2 limits where the machine
 * allows it; hollow.c hosts many simulated nodes in one process; agent.c
 * ties the process-runtime agent together (informer, main loop, shutdown).
 *
 * Threads (process runtime): one informer thread and the agent's own thread,
 * which does everything else (requests, spawning, polling), so none of the
 * state below is locked.
 */
#ifndef CORRAL_AGENT_INT_H
#define CORRAL_AGENT_INT_H

#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "corral/agent.h"
#include "corral/buf.h"
#include "corral/client.h"
#include "corral/gpu.h"
#include "corral/hmap.h"
#include "corral/informer.h"
#include "corral/metrics.h"
#include "corral/model.h"

#define CORRAL__AGENT_KUBELET_VERSION "v1.30.0-corral"
#define CORRAL__AGENT_MAX_PODS        110
#define CORRAL__AGENT_LOG_CAP         ((size_t)10 * 1024 * 1024) /* bytes per instance log */

typedef corral_agent_opts_t corral__agent_opts_t;

/* --- time and small helpers (agent.c) --------------------------------------------------- */

int64_t corral__now_us(void);
/* "2024-05-01T12:00:00Z" (micro: with 6 decimals) into out (>= 32 bytes). */
void corral__fmt_time(int64_t us, bool micro, char *out, size_t len);
/* mkdir -p. */
int corral__mkdirs(const char *path);
/* rm -rf (no error when absent). */
void corral__rmtree(const char *path);
/* Write data to path atomically (temp name, rename). */
int corral__agent_write_file(const char *path, const char *data, size_t len);
/* Log a line to stderr with the agent's prefix. */
void corral__log(const char *fmt, ...) CORRAL_PRINTF(1, 2);
/* Block SIGTERM and SIGINT in this thread and the threads it starts (the
 * main loop polls them in *sigs, so a signal never lands on a worker). */
void corral__block_stop_signals(sigset_t *sigs);
/* Small JSON building on value trees. */
void corral__jstr(corral_arena_t *a, corral_val_t *m, const char *key, const char *s);
void corral__jint(corral_arena_t *a, corral_val_t *m, const char *key, int64_t v);
void corral__jbool(corral_arena_t *a, corral_val_t *m, const char *key, bool v);
corral_val_t *corral__jmap(corral_arena_t *a, corral_val_t *m, const char *key);
corral_val_t *corral__jseq(corral_arena_t *a, corral_val_t *m, const char *key);

/* --- node registration and heartbeat (node.c) -------------------------------------------- */

typedef struct corral__node {
    char *name;
    int64_t cpu_milli, memory_bytes;
    int ngpu;
    corral_kv_t *labels; /* GPU Feature Discovery labels (owned, with the arena) */
    size_t nlabels;
    char *topology; /* corral.dev/gpu-topology, or NULL */
    int kubelet_port;
    int lease_s;
    char *uid;              /* the Node's uid once registered */
    int64_t ready_since_us; /* lastTransitionTime of our Ready=True */
    int64_t next_lease_us, next_status_us;
    bool lease_exists;
    /* GPU health (telemetry.c): GPUHealthy condition and the gpu-unhealthy taint */
    bool gpu_bad;
    char gpu_reason[32];
    char gpu_msg[512];
    int64_t gpu_since_us; /* GPUHealthy's lastTransitionTime */
    corral_arena_t arena;
} corral__node_t;

#define CORRAL__GPU_TAINT "corral.dev/gpu-unhealthy"

/* The Node's taints (node: the object as read) with CORRAL__GPU_TAINT:NoSchedule
 * added when n's GPUs are unhealthy and removed when not, in a; NULL when
 * nothing changes. */
corral_val_t *corral__node_gpu_taints(corral_arena_t *a, const corral__node_t *n,
                                      const corral_val_t *node);

/* The GPUHealthy condition of n (heartbeat now), in a. */
corral_val_t *corral__node_gpu_condition(corral_arena_t *a, const corral__node_t *n, int64_t now);

/* Record GPU health on n; true when it changed (the caller then refreshes
 * the Node status at once). */
bool corral__node_set_gpu_health(corral__node_t *n, bool healthy, const char *reason,
                                 const char *msg, int64_t now_us);

/* Describe this machine (or the inventory's simulated size) as node name. */
void corral__node_init(corral__node_t *n, const char *name, const corral_gpu_inventory_t *inv,
                       int lease_s);
void corral__node_fini(corral__node_t *n);
/* The Node object to create (or to merge into an existing one: existing may
 * be NULL), in a. */
corral_val_t *corral__node_object(corral_arena_t *a, const corral__node_t *n,
                                  const corral_val_t *existing, int64_t now_us);
/* The status part ({"status": {...}}) for a heartbeat PATCH. */
corral_val_t *corral__node_status_patch(corral_arena_t *a, const corral__node_t *n, int64_t now_us);
/* Create or update the Node. Returns 0 or a negative code (message in err). */
int corral__node_register(corral_client_t *c, corral__node_t *n, char *err, size_t errlen);
/* One request with body (NULL: none) as JSON; r is reset first. */
int corral__agent_send(corral_client_t *c, const char *method, const char *path, const char *ctype,
                       const corral_val_t *body, corral_client_resp_t *r);
/* Renew the Lease (create it when absent). */
int corral__node_lease(corral_client_t *c, corral__node_t *n, int64_t now_us, char *err,
                       size_t errlen);
/* Refresh the Node's status (Ready, heartbeat time); re-registers when the
 * Node is gone. */
int corral__node_status(corral_client_t *c, corral__node_t *n, int64_t now_us, char *err,
                        size_t errlen);
/* Lease and status when due (every heartbeat; status every status_every). */
void corral__node_heartbeat(corral_client_t *c, corral__node_t *n, int64_t now_us, int hb_s,
                            int status_every);

/* --- pod addresses (podip.c) ------------------------------------------------------------- */

#define CORRAL__PODIP_LEN 16

/* A claimed pod address: the lock file's fd is held while the pod lives. */
typedef struct corral__podip {
    int fd; /* -1: none */
    char ip[CORRAL__PODIP_LEN];
    char path[4096 - 32];
} corral__podip_t;

/* Candidate k (0, 1, ...) of pod uid: 127.A.B.C, A in 1-254, C in 1-254. */
void corral__podip_candidate(const char *uid, int k, char *out, size_t len);
/* Is ip a pod address (127.A.B.C as above)? */
bool corral__podip_valid(const char *ip);
/* The claims directory every agent of this user on this host shares:
 * $CORRAL_POD_IP_DIR, else $TMPDIR (or /tmp)/corral-pod-ips-<euid>. */
void corral__podip_default_dir(char *out, size_t len);
/* Claim an address for uid (prefer, a valid address recorded before, is
 * tried first). 0, or CORRAL_EAGAIN when every candidate is taken. */
int corral__podip_claim(corral__podip_t *pi, const char *dir, const char *uid, const char *prefer);
/* Release a claim (no-op when none). */
void corral__podip_release(corral__podip_t *pi);

/* --- readiness probes (probe.c) ----------------------------------------------------------- */

typedef enum corral__probe_kind {
    CORRAL__PROBE_NONE = 0,
    CORRAL__PROBE_TCP,
    CORRAL__PROBE_HTTP,
    CORRAL__PROBE_EXEC,
} corral__probe_kind_t;

/* A probe's spec (owned strings; corral__probe_clear frees them). */
typedef struct corral__probe {
    corral__probe_kind_t kind;
    int initial_delay_s, period_s, timeout_s, success_th, failure_th;
    int port;       /* tcp, http: resolved (named ports looked up) */
    char *host;     /* tcp, http: NULL for the pod's address */
    char *path;     /* http */
    bool https;     /* http */
    char **headers; /* http: "Name: value" */
    size_t nheaders, capheaders;
    char **cmd; /* exec: NULL-terminated argv */
} corral__probe_t;

/* One container's probe counters. */
typedef struct corral__probe_state {
    bool ready, ever_ok, busy;
    int succ, fails; /* in a row */
    int64_t next_us; /* the next probe is due then */
    char msg[160];   /* the last failure */
} corral__probe_state_t;

/* Parse ctr[field] ("readinessProbe"): kind NONE when absent; CORRAL_EINVAL
 * with a message for a probe that cannot run (no handler, unknown named
 * port). Defaults as Kubernetes: period 10, timeout 1, success 1, failure 3. */
int corral__probe_parse(const corral_val_t *ctr, const char *field, corral__probe_t *pb, char *err,
                        size_t errlen);
void corral__probe_clear(corral__probe_t *pb);
/* Is a probe due (not in flight, initial delay passed, next_us reached)? */
bool corral__probe_due(const corral__probe_t *pb, const corral__probe_state_t *s,
                       int64_t started_us, int64_t now_us);
/* Count one result; schedules the next probe (100 ms until the first
 * success, then periodSeconds). True when readiness changed. */
bool corral__probe_record(const corral__probe_t *pb, corral__probe_state_t *s, bool ok,
                          int64_t now_us);
/* Run one probe now, blocking up to its timeout: 0 on success, else -1
 * with a message (for the worker threads and tests). */
int corral__probe_run(const corral__probe_t *pb, const char *pod_ip, char *const *envp,
                      const char *dir, char *msg, size_t len);

typedef struct corral__probe_result {
    char *uid; /* owned by whoever holds the result */
    int ctr, instance;
    bool ok;
    char msg[160];
} corral__probe_result_t;

/* A pool of threads that run probes. */
typedef struct corral__prober corral__prober_t;
corral__prober_t *corral__prober_new(int threads);
/* Stop the threads (each finishes its probe, bounded by its timeout) and free. */
void corral__prober_free(corral__prober_t *pr);
/* Queue a probe (everything copied). CORRAL_EAGAIN when the queue is full. */
int corral__prober_submit(corral__prober_t *pr, const char *uid, int ctr, int instance,
                          const corral__probe_t *pb, const char *pod_ip, char *const *envp,
                          const char *dir);
/* A finished probe, if any (never waits); free out->uid. */
bool corral__prober_take(corral__prober_t *pr, corral__probe_result_t *out);

/* --- pods and containers (sync.c) --------------------------------------------------------- */

typedef enum corral__cstate {
    CORRAL__C_WAITING = 0,
    CORRAL__C_RUNNING,
    CORRAL__C_TERMINATED,
} corral__cstate_t;

/* One ended instance of a container. */
typedef struct corral__term {
    bool set;
    int exit_code;
    char reason[32]; /* Completed, Error, OOMKilled, ContainerStatusUnknown, StartError */
    char message[200];
    int64_t started_us, finished_us;
    char cid[48];
} corral__term_t;

typedef struct corral__ctr {
    char *name, *image;
    bool init;
    int idx; /* index in spec.containers or spec.initContainers */
    corral__cstate_t st;
    int instance; /* N of the current or last instance (its log is N.log); -1 before any */
    int restarts; /* restartCount */
    char wreason[40], wmsg[200];
    pid_t shim_pid, pid;            /* the shim and the workload (pid 0 until the shim says) */
    uint64_t shim_start, pid_start; /* /proc start times, against pid reuse */
    int64_t started_us;
    char cid[48];
    corral__term_t term; /* the ended instance when st == TERMINATED */
    corral__term_t last; /* lastState */
    int64_t next_start_us, backoff_ms;
    bool handled;             /* the ended instance went through the restart policy */
    bool agent_stop;          /* stopped by agent shutdown: restart without counting a failure */
    corral__probe_t *rp;      /* readinessProbe, or NULL (ready when running) */
    corral__probe_state_t rs; /* its counters for the current instance */
    char **env;               /* the current instance's environment (exec probes), owned */
} corral__ctr_t;

/* Ready: running, and its readiness probe (if any) succeeded enough. */
bool corral__ctr_ready(const corral__ctr_t *c);
/* Keep a copy of envp as c->env (NULL: free it). */
void corral__ctr_set_env(corral__ctr_t *c, char *const *envp);

typedef struct corral__pod {
    char *uid, *ns, *name, *node;
    corral_watch_ev_t *ev; /* the latest object (owns its arena); NULL in hollow mode */
    corral__ctr_t *ctrs;   /* init containers first */
    size_t nctrs, ninit;
    char *restart_policy;
    const char *phase; /* last computed */
    char freason[40];  /* pod-level failure (e.g. no command) */
    char fmsg[400];
    int64_t start_us;
    bool terminal; /* Succeeded/Failed reported: leave it */
    bool deleting;
    int64_t kill_deadline_us;
    bool killed, finalized, gone_from_api;
    char *last_status; /* the last status JSON written (skip identical writes) */
    int64_t retry_us;  /* status write failed: retry at */
    char *gpu_ids;     /* corral.dev/gpu-ids */
    bool cond[4];      /* Initialized, ContainersReady, Ready, (unused) */
    int64_t cond_us[4];
    int64_t grace_s; /* the deletion's grace period */
    /* GPU accounting (usage.c) */
    double gpu_used_s;      /* GPU-seconds used: sum over its GPUs of utilization/100 x dt */
    bool gpu_ran;           /* ran with GPUs: write corral.dev/gpu-seconds-used when it ends */
    int sim_util;           /* corral.dev/sim-utilization, or CORRAL__SIM_BUSY */
    int gpu_milli;          /* corral.dev/gpu-milli: a share of one GPU (1-999); 0: whole GPUs */
    bool last_status_final; /* the status before finalizing a deletion was written */
    corral__podip_t *ip;    /* the pod's own address (process runtime), or NULL: the host's */
    char *gpu_load;         /* its CORRAL_GPU_LOAD_FILE (simulated GPUs), or NULL */
    /* the model cache (models.c): corral.dev/model-uri, until its model is local */
    char *model_uri;      /* the annotation, or NULL */
    char *model_entry;    /* the cache entry it uses (once asked) */
    char *model_dir;      /* MODEL_DIR once the model is in the cache */
    int64_t model_t0_us;  /* when it first asked */
    bool model_missed;    /* not in the cache when it asked: "fetched" */
    char model_fetch[48]; /* corral.dev/model-fetch: "hit 0.004s", "fetched 3.214s" */
} corral__pod_t;

/* The address a pod's status and fieldRefs report: its own, else host_ip. */
const char *corral__pod_ip(const corral__pod_t *p, const char *host_ip);

/* Kubernetes' restart decision for an exit code under restartPolicy. */
bool corral__should_restart(const char *policy, int exit_code);
/* The next CrashLoopBackOff delay: init, then doubling, capped at max. */
int64_t corral__backoff_next(int64_t cur_ms, int64_t init_ms, int64_t max_ms);
/* The pod phase as kubelet computes it from its containers. */
const char *corral__pod_phase(const corral__pod_t *p);
/* Build {"status": {...}} for pod p. host_ip: the node's address. */
corral_val_t *corral__pod_status(corral_arena_t *a, const corral__pod_t *p, const char *host_ip,
                                 int64_t now_us);
/* Free one pod's state (not its directories). */
void corral__pod_free(corral__pod_t *p);
/* Fill a pod's container list from its spec (names, images, init flags). */
void corral__pod_containers(corral__pod_t *p, const corral_obj_t *o);
/* Write p's status when it changed; returns 0 or a negative code. */
int corral__pod_write_status(corral_client_t *c, corral__pod_t *p, const char *host_ip,
                             int64_t now_us);
/* Finalize a deletion: DELETE with gracePeriodSeconds=0 and the uid as precondition. */
int corral__pod_finalize(corral_client_t *c, const corral__pod_t *p);

/* Pods by uid (the agent's and the hollow runtime's table). */
typedef struct corral__podtab {
    corral__pod_t **pods;
    size_t n, cap;
    corral_hmap_t byuid;
} corral__podtab_t;

void corral__podtab_init(corral__podtab_t *t);
/* Frees every pod left. */
void corral__podtab_fini(corral__podtab_t *t);
corral__pod_t *corral__podtab_find(const corral__podtab_t *t, const char *uid);
void corral__podtab_add(corral__podtab_t *t, corral__pod_t *p);
/* Remove and free p. */
void corral__podtab_drop(corral__podtab_t *t, corral__pod_t *p);

/* --- metrics glue (usage.c) ---------------------------------------------------------------- */

struct corral__telem;
/* GPU indices in a corral.dev/gpu-ids value ("0,3"): count stored (<= max). */
int corral__gpu_ids_parse(const char *ids, int *out, int max);
/* The simulated load a pod declares (corral.dev/sim-utilization, clamped to
 * 0-100), or the busy default. */
int corral__pod_sim_util(const corral_obj_t *o);
/* A workload's simulated GPU load (CORRAL_GPU_LOAD_FILE: a decimal percent,
 * clamped to 0-100) when the file was written in the last 10 s; else -1. */
#define CORRAL__GPU_LOAD_FRESH_US (10 * INT64_C(1000000))
int corral__gpu_load_read(const char *path, int64_t now_us);
/* The pod's corral.dev/gpu-milli request (a share of one GPU), or 0. */
int corral__pod_gpu_milli(const corral_obj_t *o);
/* The log server's pages for one node: ctx is its corral__telem_t. */
int corral__agent_page(void *ctx, const char *path, corral_buf_t *out, const char **ctype);
/* Tell the telemetry who holds which GPU (running pods with gpu-ids). */
void corral__usage_owners(struct corral__telem *t, const corral__podtab_t *pods, int ngpu,
                          int64_t now_us);
/* Add dt of each running GPU pod's utilization to its gpu_used_s. */
void corral__usage_integrate(struct corral__telem *t, const corral__podtab_t *pods, int64_t dt_us);

/* --- environment (env.c) ------------------------------------------------------------------ */

/* Expand $(VAR) references as Kubernetes does: $$ is a literal $, a defined
 * $(NAME) is replaced, an undefined one is kept as written. lookup returns
 * NULL for undefined names. */
void corral__expand(const char *in, const char *(*lookup)(void *ctx, const char *name), void *ctx,
                    corral_buf_t *out);

/* Fetch one ConfigMap/Secret (kind "configmaps"/"secrets") as a decoded object
 * into a; NULL when it does not exist (404) or on error (*err set). */
typedef const corral_val_t *(*corral__fetch_fn)(void *ctx, corral_arena_t *a, const char *ns,
                                                const char *kind, const char *name, char *err,
                                                size_t errlen);

typedef struct corral__envctx {
    const corral_val_t *pod; /* the pod object (raw) */
    const corral_val_t *ctr; /* the container (raw) */
    const char *host_ip;
    const char *pod_ip;       /* status.podIP (NULL: host_ip) */
    const char *bin_dir;      /* put first in PATH (the agent's own directory), or NULL */
    const char *gpu_load;     /* CORRAL_GPU_LOAD_FILE (simulated GPUs), or NULL */
    const char *model_dir;    /* MODEL_DIR (the model cache), or NULL */
    const char *gpu_ids;      /* corral.dev/gpu-ids or NULL */
    const char *const *uuids; /* the node's GPU UUIDs by index */
    int ngpu;
    int64_t node_cpu_milli, node_memory;
    const char *home;
    corral__fetch_fn fetch;
    void *fetch_ctx;
} corral__envctx_t;

/* The container's environment as "NAME=value" strings (in a; NULL-terminated
 * in *envp). Returns 0, or CORRAL_ENOENT with the message kubelet gives
 * (CreateContainerConfigError) in err. */
int corral__env_build(corral_arena_t *a, const corral__envctx_t *e, char ***envp, char *err,
                      size_t errlen);
/* The value of NAME in envp, or NULL. */
const char *corral__env_get(char *const *envp, const char *name);
/* command + args with $(VAR) expanded against envp (NULL-terminated, in a).
 * Returns 0, or CORRAL_EINVAL when the container has no command. */
int corral__argv_build(corral_arena_t *a, const corral_val_t *ctr, char *const *envp, char ***argv);

/* --- the model cache (modelcache.c, fetch.c) ---------------------------------------------- */

/* Fetch a storage URI into dir (made by the caller, empty): file://, pvc://
 * (under pvc_root), http(s)://. Stops past max_bytes (CORRAL_ETOOBIG). */
typedef struct corral__fetch_opts {
    const char *pvc_root; /* --pvc-root; NULL: pvc:// refused */
    int64_t max_bytes;
} corral__fetch_opts_t;
int corral__fetch(const char *uri, const char *dir, const corral__fetch_opts_t *o, int64_t *bytes,
                  char *err, size_t errlen);
/* "file://", "pvc://", "http://", "https://" when uri has a scheme we fetch, else NULL. */
const char *corral__fetch_scheme(const char *uri);
/* A cache entry name: [A-Za-z0-9._-], not starting with '.' or '-', no "..". */
bool corral__mc_safe_name(const char *name);
/* A relative path with no empty, "." or ".." segment ("" is fine). */
bool corral__mc_safe_relpath(const char *p);
/* The part of storage_uri under cache_uri ("" when equal), when it matches
 * (KServe's rule) and is a safe relative path; else a negative code. */
int corral__mc_subpath(const char *cache_uri, const char *storage_uri, char *out, size_t len);
/* Bytes of the regular files under path (links not followed). */
int64_t corral__du(const char *path);

/* One entry as LRU planning sees it. */
typedef struct corral__mc_entry {
    int64_t bytes, used_us;
    bool in_use, wanted, keep;
} corral__mc_entry_t;
/* Which entries to evict (indices into out, oldest first; unwanted ones
 * first, wanted ones only when allow_wanted; never in_use or keep) so that
 * their bytes plus need fit in limit (<= 0: no limit). Returns how many,
 * or -1 when even evicting every candidate is not enough. */
int corral__mc_plan(const corral__mc_entry_t *e, size_t n, int64_t limit, int64_t need,
                    bool allow_wanted, size_t *out);

typedef enum corral__mc_state {
    CORRAL__MC_ABSENT = 0,
    CORRAL__MC_PENDING,
    CORRAL__MC_DOWNLOADING,
    CORRAL__MC_READY,
    CORRAL__MC_ERROR,
} corral__mc_state_t;

typedef struct corral__mc_info {
    char name[254];
    corral__mc_state_t state;
    int64_t bytes;
    bool wanted;
    char msg[256];
} corral__mc_info_t;

typedef struct corral__mcache corral__mcache_t;
/* The cache in dir (made when absent; what a previous run left is taken
 * back, unfinished downloads removed). reg: where its metrics go, or NULL.
 * NULL when dir cannot be made. */
corral__mcache_t *corral__mc_new(const char *dir, const char *pvc_root, corral_metrics_t *reg);
/* Start the download thread. */
void corral__mc_start(corral__mcache_t *mc);
/* Stop the thread (a download in progress finishes first) and free. */
void corral__mc_free(corral__mcache_t *mc);
void corral__mc_set_limit(corral__mcache_t *mc, int64_t limit);
/* The caches the node's groups want (names, URIs, modelSize), replacing the last list. */
void corral__mc_want(corral__mcache_t *mc, const char *const *names, const char *const *uris,
                     const int64_t *sizes, size_t n);
/* A pod needs name (from uri) now: its state (READY: use it; ERROR: msg). */
corral__mc_state_t corral__mc_request(corral__mcache_t *mc, const char *name, const char *uri,
                                      char *msg, size_t len);
/* The entries pods use now (never evicted). */
void corral__mc_set_in_use(corral__mcache_t *mc, const char *const *names, size_t n);
/* Bumped on every change of an entry's state. */
uint64_t corral__mc_version(corral__mcache_t *mc);
/* A copy of the entries (free *out). */
size_t corral__mc_list(corral__mcache_t *mc, corral__mc_info_t **out);
const char *corral__mc_dir(const corral__mcache_t *mc);

#define CORRAL_MODEL_URI_ANN   "corral.dev/model-uri"
#define CORRAL_MODEL_FETCH_ANN "corral.dev/model-fetch"
#define CORRAL__MODEL_MOUNT    "/mnt/models" /* where KServe mounts a model; args say it */

/* The agent's side (models.c): LocalModelCaches, groups, its Node. */
typedef struct corral__models corral__models_t;
/* NULL when the cache directory cannot be made. */
corral__models_t *corral__models_new(const char *node, const char *dir, const char *pvc_root,
                                     corral_metrics_t *reg);
void corral__models_free(corral__models_t *m);
/* An informer event of a LocalModelCache, LocalModelNodeGroup or Node: true
 * when it was one (then it is taken), false for anything else. */
bool corral__models_event(corral__models_t *m, corral_watch_ev_t *ev);
/* Every tick: what to keep, what pods use, the LocalModelNode and Node annotation. */
void corral__models_tick(corral__models_t *m, corral_client_t *c, const corral__podtab_t *pods,
                         int64_t now_us);
/* May pod p start as far as its model goes? 0 (model_dir set when it has
 * one), CORRAL_EAGAIN while it is fetched, another negative code on error
 * (msg says why; asked again later). */
int corral__models_pod(corral__models_t *m, corral__pod_t *p, int64_t now_us, char *msg,
                       size_t len);
/* The model cache in --model-cache-dir (else ROOT/models) and its three
 * informers (LocalModelCaches, LocalModelNodeGroups, the Node) feeding q;
 * *models stays NULL (logged) when the directory cannot be made. */
int corral__agent_model_cache(const corral__agent_opts_t *o, const corral_client_config_t *cfg,
                              corral_evq_t *q, corral_metrics_t *reg, corral__models_t **models,
                              corral_informer_t *inf[3]);
/* Replace the prefix /mnt/models (followed by '/' or the end, at the start
 * of an argument or after its first '=') with dir, in argv[1..]. */
void corral__argv_model_dir(corral_arena_t *a, char **argv, const char *dir);

/* --- cluster mode: corral agent --kube (kube.c) ------------------------------------------- */

#define CORRAL__KPOD_MAX_CTRS 64 /* containers of a pod the device plugin matches */
#define CORRAL__KPOD_ID_LEN   96 /* a device ID (the GPU's UUID), as the device plugin's */

/* A pod bound to the node, as the device plugin's lookup sees it. */
typedef struct corral__kpod {
    char *uid, *ns, *name;
    int64_t bound_us;                /* PodScheduled=True lastTransitionTime (0: unknown) */
    int64_t created_us;              /* creationTimestamp */
    int nctr;                        /* spec.containers */
    int want[CORRAL__KPOD_MAX_CTRS]; /* what each container asks of the resource */
    char **uuids; /* its corral.dev/gpu-ids as UUIDs, in order; NULL entries: not on this node */
    int nuuids;
    bool waiting;   /* not terminated, not deleting, no container started yet */
    uint64_t given; /* bit c: container c got its devices from this agent */
} corral__kpod_t;

/* Fill kp from a pod object (o->raw): the resource each container asks
 * (limits, else requests), its gpu-ids mapped to the UUIDs of inv (by NVML
 * index), whether kubelet may still be admitting it. given is left as it
 * is (the caller carries it over from an earlier version of the pod). */
void corral__kpod_fill(corral__kpod_t *kp, const corral_obj_t *o, const char *resource,
                       const corral_gpu_inventory_t *inv);
/* Free what kp holds (not kp itself). */
void corral__kpod_clear(corral__kpod_t *kp);
/* The device plugin's choice: among pods, the one kubelet is admitting for
 * a container that asks want devices out of avail: its next container
 * (container order) not yet given devices asks want, and that container's
 * share of its gpu-ids are all in avail (or the container was given
 * exactly avail before: a repeat, e.g. Allocate after
 * GetPreferredAllocation); among several the oldest binding, then the
 * oldest pod, then the smaller uid. Returns the pod's index (its
 * container in *ctr, its share at uuids[*off .. *off + want)), or -1. */
int corral__kpod_match(corral__kpod_t *const *pods, size_t n, const char *const *avail,
                       size_t navail, size_t want, int *ctr, int *off);

/* --- the process runtime (proc.c, shim.c, cgroup.c) -------------------------------------- */

typedef struct corral__proc {
    const char *root;
    char *self_exe;
    char *self_dir; /* the directory of self_exe, first in workloads' PATH */
    bool sim_gpus;  /* simulated GPUs: pods with GPUs get CORRAL_GPU_LOAD_FILE */
    pid_t *kids;    /* shims we spawned and have not reaped */
    size_t nkids, capkids;
    int64_t node_cpu_milli, node_memory;
    const char **uuids; /* the node's GPU UUIDs by index */
    int ngpu;
    corral_client_t *c; /* for ConfigMap/Secret reads */
    bool cgroups;       /* cgroup v2 usable */
    char *cgroup_base;  /* ".../corral" */
} corral__proc_t;

void corral__proc_init(corral__proc_t *pr, const char *root, const corral_gpu_inventory_t *inv,
                       int64_t cpu_milli, int64_t memory, corral_client_t *c);
void corral__proc_fini(corral__proc_t *pr);
/* ROOT/pods/<uid> (working directory; agent files under .corral/). In a. */
const char *corral__pod_dir(corral_arena_t *a, const char *root, const char *uid);
const char *corral__pod_logdir(corral_arena_t *a, const char *root, const corral__pod_t *p);
/* Start instance ctr->instance + 1 of a container. On a configuration error
 * the container stays waiting with reason and message set; on "no command"
 * the pod fails (freason). Returns 0 or a negative code. */
int corral__proc_start(corral__proc_t *pr, corral__pod_t *p, corral__ctr_t *c, int64_t now_us);
/* Has the running container ended? Updates c (st, term) when it has. */
void corral__proc_poll(corral__proc_t *pr, corral__pod_t *p, corral__ctr_t *c, int64_t now_us);
/* Signal the workload's process group (and cgroup on SIGKILL). */
void corral__proc_signal(corral__proc_t *pr, corral__pod_t *p, corral__ctr_t *c, int sig);
/* Recover a pod's containers from its directory after an agent restart:
 * running ones are watched again, ended ones reported, vanished ones lost.
 * Returns true when the pod had state on disk. */
bool corral__proc_adopt(corral__proc_t *pr, corral__pod_t *p, int64_t now_us);
/* Write the pod's identity (namespace, name) into its directory. */
void corral__proc_record_pod(corral__proc_t *pr, const corral__pod_t *p);
/* Mark a pod stopped by agent shutdown (restarted when the agent returns). */
void corral__proc_mark_stopped(corral__proc_t *pr, const corral__pod_t *p);
/* Kill whatever runs for pod uid (from its state files) and remove its
 * directories; for pods no longer bound here. */
void corral__proc_purge(corral__proc_t *pr, const char *uid);
/* Remove a pod's directories (working dir and logs). */
void corral__proc_cleanup(corral__proc_t *pr, const corral__pod_t *p);
/* A spawn attribute for a child of the agent: no signal blocked, every
 * handler default (the agent blocks SIGTERM/SIGINT), plus flags. */
void corral__spawnattr_init(posix_spawnattr_t *at, short flags);
/* Reap exited shims that are our children (only those: the probe workers
 * wait for their own exec probes). */
void corral__proc_reap(corral__proc_t *pr);
/* ROOT/pods/<uid>/.corral/gpu-load (in a). */
const char *corral__pod_gpu_load_path(corral_arena_t *a, const char *root, const char *uid);
/* /proc/<pid>/stat start time, 0 when the process does not exist. */
uint64_t corral__proc_starttime(pid_t pid);

/* cgroup v2 (cgroup.c). */
bool corral__cgroup_probe(char **base, char *why, size_t whylen);
/* Create base/<name> with cpu.max and memory.max from the limits (0: none). */
int corral__cgroup_make(const char *base, const char *name, int64_t cpu_milli, int64_t mem_bytes,
                        char **path);
/* oom_kill count of a cgroup (memory.events), 0 when unknown. */
uint64_t corral__cgroup_ooms(const char *path);
void corral__cgroup_kill(const char *path);
void corral__cgroup_remove(const char *path);

/* Read the CPU and memory of the node and of each running container
 * (cgroup v2 files when the container has a cgroup, else /proc of its
 * workload) into the telemetry's /metrics/resource snapshot. */
void corral__usage_collect(struct corral__telem *t, const corral__proc_t *pr,
                           const corral__podtab_t *pods, int64_t now_us);

#endif
