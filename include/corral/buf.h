/*
 * A growable byte buffer (a string builder), always NUL-terminated so that
 * buf.p can be passed to C string functions. Owned by its caller: init, append,
 * fini.
 */
#ifndef CORRAL_BUF_H
#define CORRAL_BUF_H

#include <stdarg.h>
#include <stddef.h>

#include "corral/common.h"

typedef struct corral_buf {
    char *p;    /* contents, NUL-terminated (NULL before the first append) */
    size_t len; /* bytes used, excluding the NUL */
    size_t cap; /* bytes allocated */
} corral_buf_t;

void corral_buf_init(corral_buf_t *b);
void corral_buf_fini(corral_buf_t *b);
void corral_buf_reset(corral_buf_t *b);
void corral_buf_append(corral_buf_t *b, const void *data, size_t n);
void corral_buf_puts(corral_buf_t *b, const char *s);
void corral_buf_putc(corral_buf_t *b, char c);
void corral_buf_printf(corral_buf_t *b, const char *fmt, ...) CORRAL_PRINTF(2, 3);
void corral_buf_vprintf(corral_buf_t *b, const char *fmt, va_list ap) CORRAL_PRINTF(2, 0);
/* The contents as a C string ("" when empty). Borrowed from b. */
const char *corral_buf_str(const corral_buf_t *b);
/* Hand the contents to the caller (free with corral_free); b becomes empty. */
char *corral_buf_steal(corral_buf_t *b);

#endif
