/*
 * Trace reader internals shared by src/sim/trace_*.c: a "table" that wraps
 * the CSV tokenizer with a header (columns found by name), row iteration
 * that reports malformed lines and keeps going, typed field parsers that
 * report "FILE:LINE: column: expected ..., got "..."", and a small string
 * interner for columns with few distinct values (models, queues, QoS).
 */
#ifndef CORRAL_TRACE_INT_H
#define CORRAL_TRACE_INT_H

#include "corral/trace.h"

#define TRACE_MAX_COLS   16 /* columns a reader asks for */
#define TRACE_MAX_INTERN 64 /* distinct interned strings per file */

typedef struct trace_col {
    const char *name;
    bool required;
} trace_col_t;

typedef struct trace_tab {
    const char *file; /* name used in diagnostics */
    corral_diag_t *diag;
    corral_arena_t *arena; /* where row strings go */
    corral_csv_t csv;
    corral_csv_record_t rec; /* the current row */
    const trace_col_t *cols;
    size_t ncols;
    int idx[TRACE_MAX_COLS]; /* header position of each column; -1 when absent */
    size_t width;            /* fields in the header */
    int blank_line;          /* first line of a run of blank lines; 0 when none */
    bool bad;                /* an error was reported */
    size_t nintern;
    const char *intern[TRACE_MAX_INTERN];
    corral_csv_field_t fields[CORRAL_TRACE_MAX_FIELDS];
    char scratch[CORRAL_TRACE_MAX_LINE];
} trace_tab_t;

/* Start reading data (len bytes): read the header and find cols in it.
 * Returns 0, or CORRAL_EINVAL with the problem reported (empty file, bad
 * header, missing required column). */
int corral__trace_open(trace_tab_t *t, const char *file, const char *data, size_t len,
                       const trace_col_t *cols, size_t ncols, corral_arena_t *a,
                       corral_diag_t *diag);

/* Advance to the next well-formed row (t->rec): 1, or 0 at the end. Lines
 * that cannot be tokenized or have the wrong number of fields are reported
 * and skipped. */
int corral__trace_next(trace_tab_t *t);

/* Field of column k in the current row; NULL when the file lacks it. */
const corral_csv_field_t *corral__trace_field(const trace_tab_t *t, size_t k);

/* Report an error in column k of the current row: "FILE:LINE: name: msg". */
void corral__trace_err(trace_tab_t *t, size_t k, const char *fmt, ...) CORRAL_PRINTF(3, 4);

/* Write the field as a quoted, escaped and shortened C string for messages. */
void corral__trace_show(const corral_csv_field_t *f, char *out, size_t size);

/* True when the field is absent or holds only blanks. */
bool corral__trace_empty(const corral_csv_field_t *f);

/* Column k as a whole number in [min, max] (blanks around it and a ".0"
 * fraction allowed). Empty or absent fields give dflt when optional is set.
 * Returns 0, or CORRAL_EINVAL with the error reported. */
int corral__trace_int(trace_tab_t *t, size_t k, int64_t min, int64_t max, bool optional,
                      int64_t dflt, int64_t *out);

/* Column k as a string in the arena. Required: empty is an error (returns
 * NULL with the error reported, check t->bad). Optional: absent or empty
 * gives NULL. Interned strings are shared between rows. */
const char *corral__trace_str(trace_tab_t *t, size_t k, bool required, bool intern);

/* Parse len bytes as a whole number (sign allowed, blanks around it and an
 * all-zero fraction allowed). Returns 0, CORRAL_EINVAL or CORRAL_ERANGE. */
int corral__trace_parse_int(const char *p, size_t len, int64_t *out);

/* Parse len bytes as a decimal number: [+-]digits[.digits][e[+-]digits],
 * blanks around it allowed, no locale. Returns 0 or CORRAL_EINVAL. */
int corral__trace_parse_num(const char *p, size_t len, double *out);

/* Parse "YYYY-MM-DD HH:MM:SS" (or with a T) as UTC seconds since the epoch.
 * Returns 0, or CORRAL_EINVAL for another shape or an impossible date. */
int corral__trace_parse_date(const char *p, size_t len, int64_t *out);

#endif
