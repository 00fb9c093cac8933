/*
 * The node agent (corral agent): registers a Node with its GPUs, renews its
 * Lease, and runs the pods bound to it, as processes (the process runtime)
 * or not at all (the hollow runtime, many simulated nodes in one process).
 * docs/agent.md describes what it does; src/agent/agent_int.h how.
 */
#ifndef CORRAL_AGENT_H
#define CORRAL_AGENT_H

#include <stdbool.h>
#include <stdint.h>

#include "corral/client.h"

typedef struct corral_agent_opts {
    const char *node_name;
    const char *gpus;    /* discovery spec: nvml, sim:PROFILE, auto, none */
    const char *runtime; /* "process" or "hollow" */
    const char *root;    /* state, working and log directories */
    const char *listen;  /* the log server's address */
    int lease_s, heartbeat_s;
    bool stop_on_exit;
    int hollow_n; /* > 0: that many hollow nodes in this process */
    const char *prefix;
    const char *token_file; /* hollow: "node,token" lines */
    int64_t backoff_ms, backoff_max_ms;
    int writers;      /* hollow: status writer threads */
    int status_every; /* heartbeats between Node status refreshes */
    /* Added for metrics (docs/observability-agent.md): */
    const char *metrics_listen; /* /metrics also on this address; NULL, "" or "off": none */
    int xid_hold_s;             /* an XID keeps GPUHealthy False this long */
    /* The model cache (docs/agent.md): */
    const char *model_cache_dir; /* NULL: ROOT/models */
    const char *pvc_root;        /* pvc://NAME/path is read from here/NAME/path; NULL: refused */
    /* Cluster mode (corral agent --kube, docs/kubernetes.md): kubelet runs the pods. */
    bool kube;
    bool device_plugin;      /* serve the kubelet device plugin (default true) */
    const char *dp_dir;      /* kubelet's device-plugins directory */
    const char *dp_resource; /* the extended resource (nvidia.com/gpu) */
    const char *cdi_dir;     /* write a CDI spec here; NULL: none */
} corral_agent_opts_t;

/* Fill the defaults (lease 40 s, heartbeat 10 s, backoff 10 s to 5 min, ...). */
void corral_agent_opts_init(corral_agent_opts_t *o);

/*
 * Run the agent until SIGTERM or SIGINT (which this blocks in the calling
 * thread and the threads it starts, and waits for). cfg says how to reach
 * the API server (copied). Returns 0 after a clean shutdown, or a negative
 * code with a message printed.
 */
int corral_agent_run(const corral_agent_opts_t *o, const corral_client_config_t *cfg);
/* The same for opts.hollow_n hollow nodes (or one with runtime "hollow"). */
int corral_agent_hollow_run(const corral_agent_opts_t *o, const corral_client_config_t *cfg);

/* Cluster mode: publish the GPUs, their health, metrics and the model cache
 * for the Node kubelet registered, and serve the device plugin; runs no pod. */
int corral_agent_kube_run(const corral_agent_opts_t *o, const corral_client_config_t *cfg);

/* Discover GPUs with spec and print them (stdout); 0 or a negative code. */
int corral_agent_print_gpus(const char *spec, const char *node_name);

/* The hidden `corral agent-shim` subcommand each container runs under. */
int corral_agent_shim_main(int argc, char **argv);

/* The hidden `corral standin-kubelet` subcommand: kubelet's device manager
 * side of the device plugin API, for tests (src/agent/standin_kubelet.c). */
int corral_agent_standin_kubelet(int argc, char **argv);

#endif
