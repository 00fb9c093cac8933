/*
 * The stand-in model server (`corral standin-llm`): a small OpenAI-compatible
 * HTTP server that behaves, from the outside, enough like vLLM for tests and
 * demos of Corral's inference serving, without a GPU or a model. It is not
 * vLLM and does no inference: the text it returns is deterministic filler.
 *
 * What it imitates, because the platform depends on it:
 * - the API: GET /v1/models, POST /v1/completions and /v1/chat/completions
 *   (non-streaming JSON, or `"stream": true` as server-sent events, one event
 *   per token, each written as it is produced), GET /health, GET /metrics with
 *   vLLM's metric names, types and `model_name` label;
 * - continuous batching: at most max_num_seqs sequences run at once, the rest
 *   wait in arrival order (vllm:num_requests_waiting); every token_ms one
 *   decode step gives each running sequence its next token;
 * - start-up cost: it reads every file under the model directory and then
 *   waits load_ms_per_gib for each GiB read, before it listens, so readiness
 *   reflects load time and a node-local copy of the model matters;
 * - a simulated GPU load, running / max_num_seqs as a percent, written every
 *   200 ms to a file the agent reads as the GPU's utilization;
 * - a graceful stop: on SIGTERM (or corral_standin_stop) it keeps accepting
 *   for drain_window, then closes its listener and finishes the requests in
 *   flight, at most drain_timeout after the signal.
 *
 * Threads: the server is one libevent loop on the thread that calls
 * corral_standin_run; corral_standin_stop may be called from any thread.
 */
#ifndef CORRAL_STANDIN_H
#define CORRAL_STANDIN_H

#include <stdbool.h>
#include <stdint.h>

/* Limits on what one request may cause. */
#define CORRAL_STANDIN_MAX_HEAD   ((size_t)16 * 1024)   /* request line and headers */
#define CORRAL_STANDIN_MAX_BODY   ((size_t)1024 * 1024) /* request body */
#define CORRAL_STANDIN_MAX_TOKENS 4096                  /* max_tokens of one request */

typedef struct corral_standin_opts {
    const char *host;              /* address to listen on; NULL: 127.0.0.1 */
    int port;                      /* 0: any free port (see corral_standin_port) */
    const char *model_dir;         /* NULL: no model files to read */
    const char *served_model_name; /* NULL: the model directory's base name, else "standin" */
    const char *pod_name;          /* echoed in X-Corral-Pod; NULL: not sent */
    int64_t token_ns;              /* time per decode step (one token per sequence) */
    int max_num_seqs;              /* sequences decoded at once; more wait (>= 1) */
    int max_tokens_default;        /* max_tokens when a request does not say */
    double load_ms_per_gib;        /* simulated load time per GiB of model files read */
    const char *gpu_load_file;     /* NULL: none; else written every 200 ms */
    int64_t drain_window_ns;       /* keep accepting this long after a stop */
    int64_t drain_timeout_ns;      /* give up on requests in flight after this */
    int max_conns;                 /* connections at once; more are refused */
    bool handle_signals;           /* SIGTERM and SIGINT start the drain */
    bool quiet;                    /* no log lines on stderr */
} corral_standin_opts_t;

/* Defaults: 127.0.0.1:8000, 20 ms per token, 256 sequences (vLLM's
 * default), max_tokens 16, no load delay, 1 s drain window, 30 s drain
 * timeout, 4096 connections. */
void corral_standin_opts_init(corral_standin_opts_t *o);

typedef struct corral_standin corral_standin_t;

/*
 * Load the model (read every regular file under model_dir, then wait
 * load_ms_per_gib per GiB read) and start listening. Returns 0 with *out,
 * or a negative code with a message in err. The bytes and files read are
 * reported by corral_standin_loaded.
 */
int corral_standin_new(const corral_standin_opts_t *o, corral_standin_t **out, char *err,
                       size_t errlen);

/* The port listened on. */
int corral_standin_port(const corral_standin_t *s);

/* Bytes and regular files read from the model directory at start. */
void corral_standin_loaded(const corral_standin_t *s, uint64_t *bytes, uint64_t *files);

/* Serve until stopped and drained. Returns 0. */
int corral_standin_run(corral_standin_t *s);

/* Start the drain (as SIGTERM does). Any thread. */
void corral_standin_stop(corral_standin_t *s);

/* Free a server that is not running. NULL is fine. */
void corral_standin_free(corral_standin_t *s);

#endif
