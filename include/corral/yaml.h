/*
 * Reading YAML 1.2 (and JSON, which is YAML) into value trees, with positions.
 * A stream may hold several documents ("---"). Input is bounded: size, nesting
 * depth and node count (alias expansion included) all have limits, so any
 * input, hostile or broken, ends in a clean error rather than a crash or hang.
 */
#ifndef CORRAL_YAML_H
#define CORRAL_YAML_H

#include "corral/diag.h"
#include "corral/val.h"

#define CORRAL_YAML_MAX_BYTES ((size_t)64 << 20) /* one file or request */
#define CORRAL_YAML_MAX_DEPTH 100                /* nested maps/lists */
#define CORRAL_YAML_MAX_NODES ((size_t)4 << 20)  /* after alias expansion */

typedef struct corral_doc {
    corral_val_t *root; /* NULL for an empty document */
    int line;           /* line where the document starts (1-based) */
} corral_doc_t;

typedef struct corral_yaml_opts {
    bool json; /* strict JSON input (file named *.json) */
    /* What aliases may add to the document, counted expanded (scalar bytes
     * plus 2 a node), checked before each alias: 0 is CORRAL_YAML_MAX_BYTES.
     * The API server passes its request body limit. */
    size_t max_alias_bytes;
} corral_yaml_opts_t;

/*
 * Parse text (len bytes; need not be NUL-terminated) into documents allocated
 * in arena a. file names the input in diagnostics. On success returns 0 and
 * sets *docs and *ndocs (both may be 0 for an empty stream). On a syntax or limit
 * error returns CORRAL_EPARSE or CORRAL_ETOOBIG, appends the error (with a hint
 * where one applies) to diag, and still returns the documents completed before
 * the error. opts may be NULL.
 */
int corral_yaml_parse(corral_arena_t *a, const char *text, size_t len, const char *file,
                      const corral_yaml_opts_t *opts, corral_diag_t *diag, corral_doc_t **docs,
                      size_t *ndocs);

/* Check that text is UTF-8 without NUL bytes. On failure returns CORRAL_EPARSE
 * and the 1-based line and column of the first bad byte. */
int corral_text_check(const char *text, size_t len, int *line, int *col);

#endif
