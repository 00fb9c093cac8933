/*
 * The value tree: one in-memory form for YAML and JSON documents. Every node
 * keeps the line and column it came from, so that errors found long after
 * parsing (by a validator, by the API server) can still point at the source.
 *
 * Scalars keep their text exactly as written as well as their typed value
 * (YAML 1.2 core schema), because some consumers care about the text:
 * a quantity "1.50" or a version "1.10" must not pass through a double.
 *
 * All nodes of a tree live in one arena; a tree is freed with its arena.
 */
#ifndef CORRAL_VAL_H
#define CORRAL_VAL_H

#include <stdbool.h>
#include <stdint.h>

#include "corral/arena.h"
#include "corral/buf.h"

typedef enum corral_val_kind {
    CORRAL_VAL_NULL = 0,
    CORRAL_VAL_BOOL,
    CORRAL_VAL_INT,
    CORRAL_VAL_FLOAT,
    CORRAL_VAL_STR,
    CORRAL_VAL_SEQ,
    CORRAL_VAL_MAP,
} corral_val_kind_t;

typedef struct corral_val corral_val_t;

typedef struct corral_val_pair {
    corral_val_t *key; /* always a CORRAL_VAL_STR (keys are strings in Kubernetes objects) */
    corral_val_t *val;
} corral_val_pair_t;

struct corral_val {
    corral_val_kind_t kind;
    bool quoted; /* scalar was quoted or a block scalar in the source */
    int line;    /* 1-based source position; 0 for nodes built in memory */
    int col;
    const char *s; /* scalar text as written, NUL-terminated; NULL for SEQ/MAP */
    size_t len;    /* length of s */
    union {
        int64_t i;
        double f;
        bool b;
    } u;
    size_t n; /* number of items (SEQ) or pairs (MAP) */
    size_t cap;
    union {
        corral_val_t **items;     /* SEQ */
        corral_val_pair_t *pairs; /* MAP */
    };
    /* MAP with many pairs: an index of its keys (val.c), or NULL. Code that
     * edits pairs directly instead of through corral_val_set/_del must call
     * corral_val_index afterwards (or set it NULL). */
    struct corral_val_ix *ix;
};

/* Builders. Strings are copied into the arena. */
corral_val_t *corral_val_new(corral_arena_t *a, corral_val_kind_t kind);
corral_val_t *corral_val_new_str(corral_arena_t *a, const char *s);
corral_val_t *corral_val_new_strn(corral_arena_t *a, const char *s, size_t len);
corral_val_t *corral_val_new_int(corral_arena_t *a, int64_t i);
corral_val_t *corral_val_new_bool(corral_arena_t *a, bool b);
corral_val_t *corral_val_new_float(corral_arena_t *a, double f);

/* Mapping access. get returns NULL when the key is absent (or m is not a map). */
corral_val_t *corral_val_get(const corral_val_t *m, const char *key);
/* Walk a dotted path of map keys ("metadata.name"). NULL when any step is absent. */
corral_val_t *corral_val_dig(const corral_val_t *m, const char *dotted);
/* The string at key, or NULL when absent or not a string. */
const char *corral_val_get_str(const corral_val_t *m, const char *key);
/* Set key to v (replacing an existing value in place, else appending). */
void corral_val_set(corral_arena_t *a, corral_val_t *m, const char *key, corral_val_t *v);
/* The same with the key node given (a CORRAL_VAL_STR the caller keeps alive
 * and unchanged; it may be shared between maps): no copy of the key. */
void corral_val_put(corral_arena_t *a, corral_val_t *m, corral_val_t *key, corral_val_t *v);
/* Remove key; returns true when it was present. Deleting from a map with an
 * index (many pairs) moves its last pair into the deleted one's place:
 * order is kept for small maps only. */
bool corral_val_del(corral_val_t *m, const char *key);
/* (Re)build m's key index when m is a map with many pairs, so that get, set
 * and del stay O(1) however many keys a client sends; parsers call it on
 * the maps they build. Cheap for small maps (no index). */
void corral_val_index(corral_arena_t *a, corral_val_t *m);
/* Return the map at key, creating an empty one when absent or not a map. */
corral_val_t *corral_val_ensure_map(corral_arena_t *a, corral_val_t *m, const char *key);

/* Sequence append. */
void corral_val_push(corral_arena_t *a, corral_val_t *seq, corral_val_t *v);

/* Deep copy into arena a (positions kept). */
corral_val_t *corral_val_copy(corral_arena_t *a, const corral_val_t *v);
/* Structural equality (maps compare as unordered key sets). */
bool corral_val_equal(const corral_val_t *x, const corral_val_t *y);

/* "string", "mapping", ... for messages. */
const char *corral_val_kind_name(corral_val_kind_t k);

/* Emitters. JSON is compact unless pretty; YAML is block style, 2-space indent. */
void corral_val_to_json(const corral_val_t *v, corral_buf_t *out, bool pretty);
void corral_val_to_yaml(const corral_val_t *v, corral_buf_t *out);
/* Append s as a JSON string literal (quotes included), escaping as RFC 8259. */
void corral_json_quote(corral_buf_t *out, const char *s, size_t len);

#endif
