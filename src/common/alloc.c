/*
 * The allocator and error-code names. Allocation failures abort with a message:
 * see common.h for why Corral has no out-of-memory error paths.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corral/common.h"

static void corral__oom(size_t n)
{
    fprintf(stderr, "corral: out of memory allocating %zu bytes\n", n);
    abort();
}

void *corral_malloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        corral__oom(n);
    return p;
}

void *corral_calloc(size_t count, size_t size)
{
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (!p)
        corral__oom(count * size);
    return p;
}

void *corral_realloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        corral__oom(n);
    return q;
}

char *corral_strdup(const char *s)
{
    return corral_strndup(s, strlen(s));
}

char *corral_strndup(const char *s, size_t n)
{
    char *p = corral_malloc(n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

void corral_free(void *p)
{
    free(p);
}

void corral_grow(void **items, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return;
    size_t c = *cap ? *cap : 8;
    while (c < need)
        c *= 2;
    *items = corral_realloc(*items, c * elem);
    *cap = c;
}

const char *corral_strmap_get(const corral_strmap_t *m, const char *key)
{
    for (size_t i = 0; i < m->n; i++) {
        if (strcmp(m->items[i].key, key) == 0)
            return m->items[i].value;
    }
    return NULL;
}

const char *corral_strerror(int err)
{
    switch (err) {
    case CORRAL_OK:
        return "success";
    case CORRAL_EINVAL:
        return "invalid input";
    case CORRAL_ENOENT:
        return "not found";
    case CORRAL_EIO:
        return "input/output error";
    case CORRAL_ERANGE:
        return "value out of range";
    case CORRAL_ETOOBIG:
        return "input too large";
    case CORRAL_EPARSE:
        return "syntax error";
    case CORRAL_EEXIST:
        return "already exists";
    case CORRAL_ECONFLICT:
        return "conflict";
    case CORRAL_EUNSUPPORTED:
        return "not supported";
    case CORRAL_EAGAIN:
        return "try again";
    default:
        return "unknown error";
    }
}
