/*
 * Internals of `corral up` shared between the files of src/up: atomic file
 * writes (pki.c) and the supervisor's child table (run.c, supervise.c).
 */
#ifndef CORRAL_UP_INT_H
#define CORRAL_UP_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <signal.h>
#include <sys/types.h>

#include "corral/up.h"

/* Write len bytes to path through a temporary file and rename, mode set
 * exactly (keys: 0600). Returns 0 or CORRAL_EIO with the reason in err. */
int corral__up_write_file(const char *path, const void *data, size_t len, int mode, char *err,
                          size_t errlen);

/* One supervised component. */
typedef struct corral__child {
    const corral_up_component_t *comp;
    char log[4096];    /* DIR/logs/NAME.log */
    pid_t pid;         /* 0: not running */
    double started;    /* monotonic seconds of the last start */
    double restart_at; /* 0: no restart pending */
    int backoff;       /* seconds before the next restart */
    bool missing;      /* the subcommand is not in this build: never started */
} corral__child_t;

typedef struct corral__sup {
    const char *exe; /* the corral binary */
    corral__child_t *kids;
    size_t n;
    long log_max; /* bytes */
    int stop_timeout_s;
    bool stopping;
    sigset_t sigs; /* blocked, taken with sigtimedwait */
} corral__sup_t;

double corral__up_now(void);
/* Start c (fork, exec); prints a status line. Returns 0 or CORRAL_EIO. */
int corral__up_spawn(corral__sup_t *s, corral__child_t *c);
/* Reap exited children without blocking; schedules restarts unless
 * stopping. Returns the number reaped; *api_died set when the API server
 * was one of them. */
size_t corral__up_reap(corral__sup_t *s, bool *api_died);
/* Start what is due for a restart; rotate logs over the cap. */
void corral__up_tick(corral__sup_t *s);
/* Wait up to timeout seconds for a signal: returns the signal (SIGINT,
 * SIGTERM), 0 on SIGCHLD or timeout. */
int corral__up_wait(corral__sup_t *s, double timeout);
/* Stop everything, tier by tier (agents first, the API server last). */
void corral__up_stop_all(corral__sup_t *s);

#endif
