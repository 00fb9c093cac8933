/*
 * Label and field selectors with Kubernetes' syntax and semantics.
 *
 * Label selector strings: comma-separated requirements, each one of
 *   key=value  key==value  key!=value  key in (a,b)  key notin (a,b)  key  !key
 * plus the structured form of objects (matchLabels/matchExpressions with In,
 * NotIn, Exists, DoesNotExist) and of node affinity (adds Gt, Lt), all decoded
 * into the same corral_selector_t. Field selector strings allow only
 * =, == and != ; which fields exist depends on the kind (see model.h).
 *
 * An empty selector matches everything. Parsed selectors live in an arena.
 */
#ifndef CORRAL_SELECTOR_H
#define CORRAL_SELECTOR_H

#include <stdbool.h>
#include <stddef.h>

#include "corral/arena.h"
#include "corral/common.h"

#define CORRAL_SEL_MAX_LEN 4096 /* selector strings longer than this are rejected */

typedef enum corral_sel_op {
    CORRAL_SEL_EQ,        /* = or == : has key and value equals */
    CORRAL_SEL_NEQ,       /* != : key absent or value differs */
    CORRAL_SEL_IN,        /* in (...) : has key and value in set */
    CORRAL_SEL_NOTIN,     /* notin (...) : key absent or value not in set */
    CORRAL_SEL_EXISTS,    /* key */
    CORRAL_SEL_NOTEXISTS, /* !key */
    CORRAL_SEL_GT,        /* node affinity Gt: value parses as an integer > the one given */
    CORRAL_SEL_LT,        /* node affinity Lt */
} corral_sel_op_t;

typedef struct corral_sel_req {
    const char *key;
    corral_sel_op_t op;
    const char **values; /* one value for EQ/NEQ/GT/LT; a set for IN/NOTIN */
    size_t nvalues;
} corral_sel_req_t;

typedef struct corral_selector {
    corral_sel_req_t *reqs; /* all must hold (AND) */
    size_t n;
} corral_selector_t;

/* Look up a label or field value; NULL when the object has no such key. */
typedef const char *(*corral_sel_lookup_fn)(const char *key, void *ctx);

/* Parse a label selector string (len bytes; s may be NULL when len is 0).
 * Keys must be valid label keys and values valid label values; "a>1" and
 * "a<1" (Gt/Lt) take integers. Unlike Kubernetes, "in ()" is an error.
 * Returns 0, CORRAL_ETOOBIG past CORRAL_SEL_MAX_LEN, or CORRAL_EINVAL with a
 * message naming the column in why (which may be NULL). On error out is
 * empty. Keys and values are copied into a. */
int corral_labelsel_parse(corral_arena_t *a, const char *s, size_t len, corral_selector_t *out,
                          char *why, size_t why_len);

/* Parse a field selector string (=, ==, != only; keys are field paths such
 * as metadata.name or spec.nodeName; values may be empty and write a
 * literal comma, '=' or backslash as \, \= or \\ ). Whitespace around
 * paths and values is trimmed. Same returns as corral_labelsel_parse. As in
 * Kubernetes, "f=" matches an empty field, so a lookup for field selectors
 * should return "" (not NULL) for fields the kind has but the object leaves
 * empty. */
int corral_fieldsel_parse(corral_arena_t *a, const char *s, size_t len, corral_selector_t *out,
                          char *why, size_t why_len);

/* Does the object described by lookup satisfy every requirement? As in
 * Kubernetes, != and notin hold when the key is absent; Gt/Lt hold only when
 * both sides parse as int64. A NULL or empty selector matches everything. */
bool corral_sel_matches(const corral_selector_t *sel, corral_sel_lookup_fn lookup, void *ctx);

/* Convenience: match against a label map. */
bool corral_sel_matches_labels(const corral_selector_t *sel, const corral_strmap_t *labels);

/* Validation of label syntax, shared with the object model. Each returns NULL
 * when valid, else a static message saying what is wrong. */
const char *corral_label_key_error(const char *key);
const char *corral_label_value_error(const char *value);

#endif
