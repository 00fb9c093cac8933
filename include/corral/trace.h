/*
 * Cluster traces (SCENARIOS.md §2): readers, on the CSV tokenizer of
 * corral/csv.h, for the three trace formats the simulator replays: the openb node list, the openb
 * pod list and the Philly-style job list. Readers return typed rows allocated in the caller's
 * arena, in file order, each with its 1-based line number, and report every bad row to a
 * corral_diag_t as "FILE:LINE: column: expected ..., got "..."" before
 * returning CORRAL_EINVAL, so that a person can fix a file in one pass.
 */
#ifndef CORRAL_TRACE_H
#define CORRAL_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "corral/arena.h"
#include "corral/common.h"
#include "corral/csv.h"
#include "corral/diag.h"

/* --- trace rows ---------------------------------------------------------- */

/* openb node list: sn,cpu_milli,memory_mib,gpu,model. */
typedef struct corral_trace_node {
    const char *name;   /* sn */
    int64_t cpu_milli;  /* >= 0 */
    int64_t memory_mib; /* >= 0 */
    int gpus;           /* 0..CORRAL_TRACE_MAX_GPUS */
    const char *model;  /* GPU model; "" for CPU-only nodes */
    int line;
} corral_trace_node_t;

/* openb pod list: name,cpu_milli,memory_mib,num_gpu,gpu_milli[,gpu_spec,qos,
 * pod_phase,creation_time,deletion_time,scheduled_time]. */
typedef struct corral_trace_pod {
    const char *name;
    int64_t cpu_milli;     /* >= 0 */
    int64_t memory_mib;    /* >= 0 */
    int num_gpu;           /* 0..CORRAL_TRACE_MAX_GPUS */
    int gpu_milli;         /* per GPU, 0..1000; 0 iff num_gpu is 0; 1000 when num_gpu > 1 */
    const char **gpu_spec; /* allowed GPU models; NULL when any model will do */
    size_t n_gpu_spec;
    const char *qos;       /* NULL when absent or empty */
    const char *phase;     /* pod_phase; NULL when absent or empty */
    int64_t creation_time; /* seconds from the trace start; -1 when absent */
    int64_t deletion_time;
    int64_t scheduled_time;
    int line;
} corral_trace_pod_t;

/* Philly-style job list: timestamp,duration,num_gpus[,cluster,...]. */
typedef struct corral_trace_job {
    int64_t submit_ms;   /* timestamp in ms: since the epoch (UTC) for a date,
                            else the plain number of seconds as written */
    int64_t submit_s;    /* the same, whole seconds (rounded down) */
    bool submit_is_date; /* the timestamp was written YYYY-MM-DD HH:MM:SS */
    double duration;     /* seconds, >= 0 */
    int64_t duration_ms; /* duration rounded to the nearest ms */
    int num_gpus;        /* 1..CORRAL_TRACE_MAX_JOB_GPUS */
    const char *queue;   /* the cluster column (Philly VC); NULL when absent or empty */
    int line;
} corral_trace_job_t;

#define CORRAL_TRACE_MAX_GPUS     64           /* per node and per pod */
#define CORRAL_TRACE_MAX_JOB_GPUS 65536        /* per job */
#define CORRAL_TRACE_MAX_FIELDS   256          /* columns per line */
#define CORRAL_TRACE_MAX_LINE     8192         /* bytes per line */
#define CORRAL_TRACE_MAX_BYTES    (256u << 20) /* per file */

/*
 * Read a trace file. Columns are found by their header name (exact match;
 * surrounding blanks ignored); unknown columns are ignored, a missing required
 * one is an error at line 1. Rows come back in file order in *rows (allocated
 * in arena a, as are all their strings), their count in *n. Problems go to
 * diag as "FILE:LINE: column: message": every bad row is reported (up to the
 * diag limit). Blank lines at the end of the file are ignored; elsewhere
 * they are errors. Returns 0; CORRAL_EINVAL when the file or any row is bad
 * (*rows NULL, *n 0); or corral_file_read's error for an unreadable file.
 * A file with a header and no rows is valid (*n 0).
 */
int corral_trace_read_nodes(const char *path, corral_arena_t *a, corral_diag_t *diag,
                            corral_trace_node_t **rows, size_t *n);
int corral_trace_read_pods(const char *path, corral_arena_t *a, corral_diag_t *diag,
                           corral_trace_pod_t **rows, size_t *n);
int corral_trace_read_jobs(const char *path, corral_arena_t *a, corral_diag_t *diag,
                           corral_trace_job_t **rows, size_t *n);

/* The same from len bytes at data (need not be NUL-terminated); name is the
 * file name used in diagnostics. */
int corral_trace_read_nodes_mem(const char *name, const char *data, size_t len, corral_arena_t *a,
                                corral_diag_t *diag, corral_trace_node_t **rows, size_t *n);
int corral_trace_read_pods_mem(const char *name, const char *data, size_t len, corral_arena_t *a,
                               corral_diag_t *diag, corral_trace_pod_t **rows, size_t *n);
int corral_trace_read_jobs_mem(const char *name, const char *data, size_t len, corral_arena_t *a,
                               corral_diag_t *diag, corral_trace_job_t **rows, size_t *n);

#endif
