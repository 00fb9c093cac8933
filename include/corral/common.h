/*
 * Corral's common layer: error codes, the allocator, and small helpers every
 * module uses. Errors are one negative space (like libuv's UV_E*): functions
 * return 0 or a negative CORRAL_E* code and fill out-parameters; messages for
 * people travel separately, in a corral_diag_t (see diag.h).
 *
 * The allocator aborts on out-of-memory (as Redis' zmalloc does): a scheduler
 * that cannot allocate cannot do anything useful, and OOM error paths that are
 * never exercised are where bugs hide.
 */
#ifndef CORRAL_COMMON_H
#define CORRAL_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum corral_err {
    CORRAL_OK = 0,
    CORRAL_EINVAL = -1,       /* invalid input or argument */
    CORRAL_ENOENT = -2,       /* no such object, file or key */
    CORRAL_EIO = -3,          /* an I/O call failed */
    CORRAL_ERANGE = -4,       /* a number does not fit */
    CORRAL_ETOOBIG = -5,      /* input over a size, count or depth limit */
    CORRAL_EPARSE = -6,       /* syntax error */
    CORRAL_EEXIST = -7,       /* already exists */
    CORRAL_ECONFLICT = -8,    /* precondition failed (resourceVersion) */
    CORRAL_EUNSUPPORTED = -9, /* valid but not supported by Corral */
    CORRAL_EAGAIN = -10,      /* try again later */
    CORRAL_ERR_MIN_ = -11
};

/* Return a static, human-readable name for a CORRAL_E* code (never NULL). */
const char *corral_strerror(int err);

/* Allocation that never returns NULL: on out-of-memory it prints and aborts. */
void *corral_malloc(size_t n);
void *corral_calloc(size_t count, size_t size);
void *corral_realloc(void *p, size_t n);
char *corral_strdup(const char *s);
char *corral_strndup(const char *s, size_t n);
void corral_free(void *p);

/* Grow *items (of *cap elements of size elem) so that it holds at least need. */
void corral_grow(void **items, size_t *cap, size_t need, size_t elem);

/* String maps and lists as decoded from objects (labels, annotations,
 * nodeSelector, args). Storage belongs to whoever allocated them (an arena). */
typedef struct corral_kv {
    const char *key;
    const char *value;
} corral_kv_t;

typedef struct corral_strmap {
    corral_kv_t *items;
    size_t n;
} corral_strmap_t;

typedef struct corral_strlist {
    const char **items;
    size_t n;
} corral_strlist_t;

/* Value for key, or NULL when absent. */
const char *corral_strmap_get(const corral_strmap_t *m, const char *key);

#define CORRAL_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

#if defined(__GNUC__)
#define CORRAL_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define CORRAL_PRINTF(fmt, args)
#endif

#endif
