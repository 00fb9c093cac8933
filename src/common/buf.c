/*
 * Growable NUL-terminated byte buffer.
 */
#include <stdio.h>
#include <string.h>

#include "corral/buf.h"

void corral_buf_init(corral_buf_t *b)
{
    b->p = NULL;
    b->len = 0;
    b->cap = 0;
}

void corral_buf_fini(corral_buf_t *b)
{
    corral_free(b->p);
    corral_buf_init(b);
}

void corral_buf_reset(corral_buf_t *b)
{
    b->len = 0;
    if (b->p)
        b->p[0] = '\0';
}

static void buf_reserve(corral_buf_t *b, size_t extra)
{
    size_t need = b->len + extra + 1;
    if (need <= b->cap)
        return;
    size_t c = b->cap ? b->cap : 64;
    while (c < need)
        c *= 2;
    b->p = corral_realloc(b->p, c);
    b->cap = c;
}

void corral_buf_append(corral_buf_t *b, const void *data, size_t n)
{
    buf_reserve(b, n);
    if (n)
        memcpy(b->p + b->len, data, n);
    b->len += n;
    b->p[b->len] = '\0';
}

void corral_buf_puts(corral_buf_t *b, const char *s)
{
    corral_buf_append(b, s, strlen(s));
}

void corral_buf_putc(corral_buf_t *b, char c)
{
    buf_reserve(b, 1);
    b->p[b->len++] = c;
    b->p[b->len] = '\0';
}

void corral_buf_vprintf(corral_buf_t *b, const char *fmt, va_list ap)
{
    va_list cp;
    va_copy(cp, ap);
    char small[256];
    int n = vsnprintf(small, sizeof(small), fmt, cp);
    va_end(cp);
    if (n < 0)
        return;
    if ((size_t)n < sizeof(small)) {
        corral_buf_append(b, small, (size_t)n);
        return;
    }
    buf_reserve(b, (size_t)n);
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
}

void corral_buf_printf(corral_buf_t *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    corral_buf_vprintf(b, fmt, ap);
    va_end(ap);
}

const char *corral_buf_str(const corral_buf_t *b)
{
    return b->p ? b->p : "";
}

char *corral_buf_steal(corral_buf_t *b)
{
    char *p = b->p ? b->p : corral_strdup("");
    corral_buf_init(b);
    return p;
}
