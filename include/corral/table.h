/*
 * The table view of objects that `corral get` prints (and kubectl prints
 * for the same kinds): per kind, kubectl's columns (pods: NAME READY STATUS
 * RESTARTS AGE, and IP NODE ... with -o wide), the printer columns of
 * Volcano's and KServe's CRDs for theirs, and a GPU column where it helps.
 * Cells are computed from an object's value tree as the API serves it, so
 * the same functions could back server-side tables.
 */
#ifndef CORRAL_TABLE_H
#define CORRAL_TABLE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "corral/model.h"

typedef struct corral_table_col {
    const char *name; /* header, upper case ("NAME", "NOMINATED NODE") */
    int priority;     /* 0: always shown; 1: with -o wide */
} corral_table_col_t;

/* The columns of kind k; NAME is first. */
const corral_table_col_t *corral_table_columns(corral_kind_t k, size_t *n);

/* Fill cells[0..n) (n from corral_table_columns) for obj, an object of kind
 * k. now_us is the current time (for AGE); strings live in a. */
void corral_table_row(corral_kind_t k, const corral_val_t *obj, int64_t now_us, corral_arena_t *a,
                      const char **cells);

/* kubectl's human duration: "45s", "5m3s", "3h20m", "12d", "2y30d". */
void corral_human_duration(int64_t seconds, char *out, size_t len);

/* Age of obj (from metadata.creationTimestamp) at now_us, or "<unknown>". */
const char *corral_table_age(const corral_val_t *obj, int64_t now_us, corral_arena_t *a);

/* Column-aligned text, as kubectl prints tables: every column padded to its
 * widest cell plus three spaces, the last one not padded. rows holds nrows
 * rows of ncols cells each (row-major); header may be NULL. */
void corral_table_print(FILE *fp, const char *const *header, const char *const *rows, size_t nrows,
                        size_t ncols);

#endif
