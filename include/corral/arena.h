/*
 * Arena (region) allocation, as nginx's pools: many small allocations that
 * share one lifetime (a parsed document, a request, a scheduling cycle) are
 * carved out of large chunks and released together with one call. Nothing
 * allocated from an arena is freed individually.
 */
#ifndef CORRAL_ARENA_H
#define CORRAL_ARENA_H

#include <stdarg.h>
#include <stddef.h>

#include "corral/common.h"

typedef struct corral_arena_chunk corral_arena_chunk_t;

typedef struct corral_arena {
    corral_arena_chunk_t *head; /* current chunk; older ones follow */
    size_t chunk_size;          /* size of the next regular chunk */
    size_t used;                /* total bytes handed out (for stats) */
} corral_arena_t;

/* Initialise an empty arena; nothing is allocated until first use. */
void corral_arena_init(corral_arena_t *a);
/* Release every chunk. The arena may be reused afterwards. */
void corral_arena_fini(corral_arena_t *a);
/* Keep the first chunk, forget all allocations (cheap per-cycle reuse). */
void corral_arena_reset(corral_arena_t *a);

/* Heap-allocated arenas, for objects that own one. free accepts NULL. */
corral_arena_t *corral_arena_new(void);
void corral_arena_free(corral_arena_t *a);

/* Return n bytes aligned for any type, zero-filled. Never NULL. */
void *corral_arena_alloc(corral_arena_t *a, size_t n);
/* Copy len bytes plus a terminating NUL. */
char *corral_arena_strndup(corral_arena_t *a, const char *s, size_t len);
char *corral_arena_strdup(corral_arena_t *a, const char *s);
/* Grow an array living in the arena: returns a copy with room for cap_new. */
void *corral_arena_grow(corral_arena_t *a, void *old, size_t old_bytes, size_t new_bytes);
char *corral_arena_printf(corral_arena_t *a, const char *fmt, ...) CORRAL_PRINTF(2, 3);
char *corral_arena_vprintf(corral_arena_t *a, const char *fmt, va_list ap) CORRAL_PRINTF(2, 0);

#endif
