/*
 * Strict JSON (RFC 8259) into value trees, in one linear pass. The API
 * server parses every request body and every stored object it modifies with
 * this: libfyaml's JSON mode (yaml.h) takes seconds on inputs such as a
 * 3 MiB body ending in whitespace, and a server must stay linear in what a
 * client sends. The trees are the same as yaml.h builds for JSON: scalars
 * keep their text (numbers exactly as written), nodes keep line and column,
 * duplicate keys are errors, and the same depth and node limits apply.
 */
#ifndef CORRAL_JSON_H
#define CORRAL_JSON_H

#include <stddef.h>

#include "corral/arena.h"
#include "corral/val.h"

typedef struct corral_json_err {
    int line, col; /* 1-based position of the problem */
    char msg[160];
} corral_json_err_t;

/*
 * Parse one JSON value from text[0..len) (nothing but whitespace may
 * follow) into arena a. Returns 0 and sets *out, or CORRAL_EPARSE (syntax,
 * duplicate key, NUL in a string) / CORRAL_ETOOBIG (depth or node limit)
 * with err filled.
 */
int corral_json_parse(corral_arena_t *a, const char *text, size_t len, corral_val_t **out,
                      corral_json_err_t *err);

/* The same, but a duplicate key is no error: the last one wins and dup_fn
 * gets its dotted path ("metadata.name", "spec.containers[0].image"), as
 * kube-apiserver's field validation reports duplicates. */
typedef void (*corral_json_dup_fn)(void *ctx, const char *path);
int corral_json_parse_dups(corral_arena_t *a, const char *text, size_t len, corral_val_t **out,
                           corral_json_err_t *err, corral_json_dup_fn dup_fn, void *dup_ctx);

#endif
