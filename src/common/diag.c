/*
 * Diagnostics collection and formatting.
 */
#include <stdlib.h>
#include <string.h>

#include "corral/diag.h"

void corral_diag_init(corral_diag_t *d)
{
    memset(d, 0, sizeof(*d));
    corral_arena_init(&d->arena);
}

void corral_diag_fini(corral_diag_t *d)
{
    corral_arena_fini(&d->arena);
    corral_free(d->items);
    memset(d, 0, sizeof(*d));
}

void corral_diag_vadd(corral_diag_t *d, corral_severity_t sev, const char *file, int line, int col,
                      const char *path, const char *fmt, va_list ap)
{
    if (sev == CORRAL_SEV_ERROR)
        d->errors++;
    else
        d->warnings++;
    if (d->n >= CORRAL_DIAG_MAX)
        return;
    corral_grow((void **)&d->items, &d->cap, d->n + 1, sizeof(*d->items));
    corral_diag_entry_t *e = &d->items[d->n++];
    e->sev = sev;
    e->file = file ? corral_arena_strdup(&d->arena, file) : NULL;
    e->line = line;
    e->col = col;
    e->path = (path && *path) ? corral_arena_strdup(&d->arena, path) : NULL;
    e->msg = corral_arena_vprintf(&d->arena, fmt, ap);
}

void corral_diag_add(corral_diag_t *d, corral_severity_t sev, const char *file, int line, int col,
                     const char *path, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    corral_diag_vadd(d, sev, file, line, col, path, fmt, ap);
    va_end(ap);
}

void corral_diag_format(const corral_diag_entry_t *e, corral_buf_t *out)
{
    if (e->file) {
        corral_buf_puts(out, e->file);
        if (e->line > 0) {
            corral_buf_printf(out, ":%d", e->line);
            if (e->col > 0)
                corral_buf_printf(out, ":%d", e->col);
        }
        corral_buf_puts(out, ": ");
    }
    if (e->sev == CORRAL_SEV_WARNING)
        corral_buf_puts(out, "warning: ");
    if (e->path)
        corral_buf_printf(out, "%s: ", e->path);
    corral_buf_puts(out, e->msg);
}

void corral_diag_print(const corral_diag_t *d, FILE *fp)
{
    corral_buf_t b;
    corral_buf_init(&b);
    for (size_t i = 0; i < d->n; i++) {
        corral_buf_reset(&b);
        corral_diag_format(&d->items[i], &b);
        fprintf(fp, "%s\n", corral_buf_str(&b));
    }
    size_t dropped = d->errors + d->warnings - d->n;
    if (dropped)
        fprintf(fp, "(%zu more diagnostics not shown)\n", dropped);
    corral_buf_fini(&b);
}

static int diag_cmp(const corral_diag_entry_t *x, const corral_diag_entry_t *y)
{
    int c = strcmp(x->file ? x->file : "", y->file ? y->file : "");
    if (c)
        return c;
    if (x->line != y->line)
        return x->line < y->line ? -1 : 1;
    if (x->col != y->col)
        return x->col < y->col ? -1 : 1;
    return 0;
}

void corral_diag_sort(corral_diag_t *d)
{
    /* Insertion sort: stable, and diagnostics are few and nearly sorted. */
    for (size_t i = 1; i < d->n; i++) {
        corral_diag_entry_t e = d->items[i];
        size_t j = i;
        while (j > 0 && diag_cmp(&d->items[j - 1], &e) > 0) {
            d->items[j] = d->items[j - 1];
            j--;
        }
        d->items[j] = e;
    }
}
