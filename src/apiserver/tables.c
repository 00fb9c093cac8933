/*
 * Server-side tables (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`),
 * which kubectl asks for on `get` and prints as they come: a metav1.Table
 * whose columns and cells are corral_table_row's (include/corral/table.h,
 * the same ones `corral get` prints), and whose rows carry the object's
 * metadata as a PartialObjectMetadata (includeObject=Metadata, the
 * default), the whole object (Object) or nothing (None). Lists, gets and
 * watch events (one row per event) are served this way.
 */
#include <stdio.h>
#include <string.h>
#include <sys/time.h>

#include "apiserver/apiserver_int.h"
#include "corral/table.h"

int corral__table_mode(corral__req_t *r)
{
    size_t len = 0;
    const char *accept = corral_http_header(r->http, "accept", &len);
    bool table = false;
    for (size_t i = 0; accept && i + 8 <= len && !table; i++)
        table = memcmp(accept + i, "as=Table", 8) == 0;
    if (!table)
        return CORRAL__TABLE_NONE;
    const char *inc = corral__param(r, "includeObject");
    if (inc && strcmp(inc, "Object") == 0)
        return CORRAL__TABLE_OBJECT;
    if (inc && strcmp(inc, "None") == 0)
        return CORRAL__TABLE_BARE;
    return CORRAL__TABLE_METADATA;
}

void corral__table_begin(corral_buf_t *b, const corral__res_t *res)
{
    size_t n;
    const corral_table_col_t *cols = corral_table_columns(res->info->kind, &n);
    corral_buf_puts(
        b, "{\"kind\":\"Table\",\"apiVersion\":\"meta.k8s.io/v1\",\"columnDefinitions\":[");
    for (size_t i = 0; i < n; i++) {
        /* kube's names are Title case; kubectl upper-cases them anyway. */
        char name[64];
        snprintf(name, sizeof(name), "%s", cols[i].name);
        for (char *p = name + 1; *p; p++)
            *p = (char)((*p >= 'A' && *p <= 'Z' && p[-1] != ' ' && p[-1] != '-') ? *p + 32 : *p);
        corral_buf_printf(b, "%s{\"name\":", i ? "," : "");
        corral_json_quote(b, name, strlen(name));
        corral_buf_printf(b,
                          ",\"type\":\"string\",\"format\":\"%s\",\"description\":\"\","
                          "\"priority\":%d}",
                          strcmp(cols[i].name, "NAME") == 0 ? "name" : "", cols[i].priority);
    }
    corral_buf_puts(b, "],\"rows\":[");
}

static int64_t now_us(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (int64_t)tv.tv_sec * 1000000 + tv.tv_usec;
}

bool corral__table_row(corral_buf_t *b, const corral__res_t *res, const char *json, size_t len,
                       int mode, bool first)
{
    corral_arena_t a;
    corral_arena_init(&a);
    corral_val_t *obj = corral__json_tree(&a, json, len);
    if (!obj) {
        corral_arena_fini(&a);
        return false;
    }
    size_t n;
    corral_table_columns(res->info->kind, &n);
    const char *cells[64];
    corral_table_row(res->info->kind, obj, now_us(), &a, cells);
    corral_buf_puts(b, first ? "{\"cells\":[" : ",{\"cells\":[");
    for (size_t i = 0; i < n && i < CORRAL_ARRAY_LEN(cells); i++) {
        if (i)
            corral_buf_putc(b, ',');
        corral_json_quote(b, cells[i], strlen(cells[i]));
    }
    corral_buf_putc(b, ']');
    if (mode == CORRAL__TABLE_OBJECT) {
        corral_buf_puts(b, ",\"object\":");
        corral__put_obj(b, res, json, len); /* cells above read the stored shape */
    } else if (mode == CORRAL__TABLE_METADATA) {
        corral_buf_puts(b, ",\"object\":{\"kind\":\"PartialObjectMetadata\",\"apiVersion\":"
                           "\"meta.k8s.io/v1\",\"metadata\":");
        corral_val_t *meta = corral_val_get(obj, "metadata");
        if (meta)
            corral_val_to_json(meta, b, false);
        else
            corral_buf_puts(b, "{}");
        corral_buf_putc(b, '}');
    }
    corral_buf_putc(b, '}');
    corral_arena_fini(&a);
    return true;
}

void corral__table_end(corral_buf_t *b, int64_t rev, const char *cont)
{
    /* The metadata goes last here; JSON objects are unordered. */
    corral_buf_puts(b, "],\"metadata\":{");
    if (rev > 0)
        corral_buf_printf(b, "\"resourceVersion\":\"%lld\"", (long long)rev);
    if (cont) {
        corral_buf_puts(b, rev > 0 ? ",\"continue\":" : "\"continue\":");
        corral_json_quote(b, cont, strlen(cont));
    }
    corral_buf_puts(b, "}}");
}
