/*
 * Hints for the mistakes people actually make in YAML: a misspelt field name,
 * "key:value" with no space after the colon, "-key:" with no space after the
 * dash. Pure string functions; the callers decide when a hint applies.
 */
#ifndef CORRAL_HINT_H
#define CORRAL_HINT_H

#include <stdbool.h>
#include <stddef.h>

/* Edit distance (insertions, deletions, substitutions, adjacent swaps). */
size_t corral_hint_distance(const char *a, const char *b);

/* The candidate a person most likely meant by word, or NULL when none is close
 * enough: same letters ignoring case and '_'/'-', or a small edit distance. */
const char *corral_hint_closest(const char *word, const char *const *cands, size_t n);

/* Does s look like "key:value" written without the space YAML needs after the
 * colon? On true, *key_len is the length of the key. URLs ("http://x") and
 * "host:port"-like values are not flagged. */
bool corral_hint_colon_nospace(const char *s, size_t len, size_t *key_len);

#endif
