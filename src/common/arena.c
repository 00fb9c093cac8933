/*
 * Arena allocator: bump allocation out of a list of chunks. Chunks double in
 * size up to a cap so that small arenas stay small and big ones make few
 * mallocs; an allocation larger than a chunk gets a chunk of its own.
 */
#include <stdio.h>
#include <string.h>

#include "corral/arena.h"

#define ARENA_ALIGN     16
#define ARENA_FIRST     1024
#define ARENA_MAX_CHUNK ((size_t)1024 * 1024)

struct corral_arena_chunk {
    corral_arena_chunk_t *next;
    size_t size; /* usable bytes in data */
    size_t used;
    _Alignas(ARENA_ALIGN) unsigned char data[];
};

void corral_arena_init(corral_arena_t *a)
{
    a->head = NULL;
    a->chunk_size = ARENA_FIRST;
    a->used = 0;
}

void corral_arena_fini(corral_arena_t *a)
{
    corral_arena_chunk_t *c = a->head;
    while (c) {
        corral_arena_chunk_t *next = c->next;
        corral_free(c);
        c = next;
    }
    corral_arena_init(a);
}

void corral_arena_reset(corral_arena_t *a)
{
    if (!a->head)
        return;
    /* Keep the newest (largest) chunk, drop the rest. */
    corral_arena_chunk_t *keep = a->head;
    corral_arena_chunk_t *c = keep->next;
    while (c) {
        corral_arena_chunk_t *next = c->next;
        corral_free(c);
        c = next;
    }
    keep->next = NULL;
    keep->used = 0;
    a->used = 0;
}

corral_arena_t *corral_arena_new(void)
{
    corral_arena_t *a = corral_malloc(sizeof(*a));
    corral_arena_init(a);
    return a;
}

void corral_arena_free(corral_arena_t *a)
{
    if (!a)
        return;
    corral_arena_fini(a);
    corral_free(a);
}

static corral_arena_chunk_t *arena_new_chunk(corral_arena_t *a, size_t need)
{
    size_t size = a->chunk_size;
    if (size < need)
        size = need;
    corral_arena_chunk_t *c = corral_malloc(sizeof(*c) + size);
    c->size = size;
    c->used = 0;
    if (a->chunk_size < ARENA_MAX_CHUNK)
        a->chunk_size *= 2;
    return c;
}

void *corral_arena_alloc(corral_arena_t *a, size_t n)
{
    size_t need = (n + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
    if (need == 0)
        need = ARENA_ALIGN;
    corral_arena_chunk_t *c = a->head;
    if (!c || c->size - c->used < need) {
        corral_arena_chunk_t *nc = arena_new_chunk(a, need);
        if (c && need > a->chunk_size / 2) {
            /* A big one-off block: link it behind the current chunk so the
             * current chunk's free space is not wasted. */
            nc->next = c->next;
            c->next = nc;
        } else {
            nc->next = c;
            a->head = nc;
        }
        c = nc;
    }
    void *p = c->data + c->used;
    c->used += need;
    a->used += need;
    memset(p, 0, n);
    return p;
}

char *corral_arena_strndup(corral_arena_t *a, const char *s, size_t len)
{
    char *p = corral_arena_alloc(a, len + 1);
    if (len)
        memcpy(p, s, len);
    p[len] = '\0';
    return p;
}

char *corral_arena_strdup(corral_arena_t *a, const char *s)
{
    return corral_arena_strndup(a, s, strlen(s));
}

void *corral_arena_grow(corral_arena_t *a, void *old, size_t old_bytes, size_t new_bytes)
{
    void *p = corral_arena_alloc(a, new_bytes);
    if (old && old_bytes)
        memcpy(p, old, old_bytes < new_bytes ? old_bytes : new_bytes);
    return p;
}

char *corral_arena_vprintf(corral_arena_t *a, const char *fmt, va_list ap)
{
    va_list cp;
    va_copy(cp, ap);
    int n = vsnprintf(NULL, 0, fmt, cp);
    va_end(cp);
    if (n < 0)
        n = 0;
    char *p = corral_arena_alloc(a, (size_t)n + 1);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    return p;
}

char *corral_arena_printf(corral_arena_t *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *p = corral_arena_vprintf(a, fmt, ap);
    va_end(ap);
    return p;
}
