/*
 * Diagnostics: the messages a person reads when input is wrong. Parsers and
 * validators append to a corral_diag_t instead of printing, so that a caller
 * can collect every error in a file (not just the first), print them in one
 * format, or turn them into an API response.
 *
 * Printed form: "FILE:LINE:COL: PATH: MESSAGE" (warnings add "warning: ").
 */
#ifndef CORRAL_DIAG_H
#define CORRAL_DIAG_H

#include <stdarg.h>
#include <stdio.h>

#include "corral/arena.h"
#include "corral/buf.h"

typedef enum corral_severity {
    CORRAL_SEV_ERROR = 0,
    CORRAL_SEV_WARNING = 1,
} corral_severity_t;

typedef struct corral_diag_entry {
    corral_severity_t sev;
    const char *file; /* may be NULL */
    int line;         /* 1-based; 0 when unknown */
    int col;          /* 1-based; 0 when unknown */
    const char *path; /* field path such as spec.containers[0].image; may be NULL */
    const char *msg;
} corral_diag_entry_t;

/* After this many entries further ones are counted but not stored. */
#define CORRAL_DIAG_MAX 1000

typedef struct corral_diag {
    corral_arena_t arena; /* owns every string of every entry */
    corral_diag_entry_t *items;
    size_t n, cap;
    size_t errors;   /* errors reported, including dropped ones */
    size_t warnings; /* warnings reported, including dropped ones */
} corral_diag_t;

void corral_diag_init(corral_diag_t *d);
void corral_diag_fini(corral_diag_t *d);

/* Append an entry. file and path are copied; either may be NULL. */
void corral_diag_add(corral_diag_t *d, corral_severity_t sev, const char *file, int line, int col,
                     const char *path, const char *fmt, ...) CORRAL_PRINTF(7, 8);
void corral_diag_vadd(corral_diag_t *d, corral_severity_t sev, const char *file, int line, int col,
                      const char *path, const char *fmt, va_list ap) CORRAL_PRINTF(7, 0);

/* Format one entry as a single line (no trailing newline) into out. */
void corral_diag_format(const corral_diag_entry_t *e, corral_buf_t *out);
/* Print every entry, one per line, in the order they were added. */
void corral_diag_print(const corral_diag_t *d, FILE *fp);
/* Sort entries by file, line, column (stable), for files read in pieces. */
void corral_diag_sort(corral_diag_t *d);

#endif
