/*
 * metav1.Status bodies: every error the API server returns is one, with the
 * reason, code, message and details kube-apiserver would give, because
 * clients branch on them (client-go's IsNotFound, IsConflict, IsAlreadyExists
 * read reason and code; kubectl prints message). Validation failures carry
 * the decoder's messages as details.causes, so a 422 says what `corral
 * validate` says.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "apiserver/apiserver_int.h"

void corral__status_json(corral_buf_t *b, int code, const char *status, const char *reason,
                         const char *message)
{
    corral_buf_puts(b, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":");
    corral_json_quote(b, status, strlen(status));
    if (message) {
        corral_buf_puts(b, ",\"message\":");
        corral_json_quote(b, message, strlen(message));
    }
    if (reason && *reason) {
        corral_buf_puts(b, ",\"reason\":");
        corral_json_quote(b, reason, strlen(reason));
    }
    corral_buf_printf(b, ",\"code\":%d}", code);
}

static void details(corral_buf_t *b, const corral__req_t *r, const char *kind, const char *name)
{
    corral_buf_puts(b, ",\"details\":{");
    bool first = true;
    if (name) {
        corral_buf_puts(b, "\"name\":");
        corral_json_quote(b, name, strlen(name));
        first = false;
    }
    if (kind && r->res && r->res->info->group[0]) {
        corral_buf_printf(b, "%s\"group\":", first ? "" : ",");
        corral_json_quote(b, r->res->info->group, strlen(r->res->info->group));
        first = false;
    }
    if (kind) {
        corral_buf_printf(b, "%s\"kind\":", first ? "" : ",");
        corral_json_quote(b, kind, strlen(kind));
    }
    corral_buf_putc(b, '}');
}

static void status_body(corral_buf_t *b, const corral__req_t *r, int code, const char *reason,
                        const char *kind, const char *name, const char *msg)
{
    corral_buf_puts(b, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
                       "\"status\":\"Failure\",\"message\":");
    corral_json_quote(b, msg, strlen(msg));
    corral_buf_puts(b, ",\"reason\":");
    corral_json_quote(b, reason, strlen(reason));
    details(b, r, kind, name);
    corral_buf_printf(b, ",\"code\":%d}", code);
}

void corral__status(corral__req_t *r, int code, const char *reason, const char *kind,
                    const char *name, const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    corral_buf_t b;
    corral_buf_init(&b);
    status_body(&b, r, code, reason, kind, name, msg);
    corral__reply_buf(r, code, &b);
}

/* "pods" for core resources, "queues.scheduling.volcano.sh" otherwise. */
static const char *res_name(const corral__req_t *r)
{
    return r->res ? r->res->name : "resource";
}

void corral__not_found(corral__req_t *r)
{
    const char *plural = r->res ? r->res->info->plural : NULL;
    corral__status(r, 404, "NotFound", plural, r->name, "%s \"%s\" not found", res_name(r),
                   r->name ? r->name : "");
}

void corral__conflict(corral__req_t *r, const char *why)
{
    const char *plural = r->res ? r->res->info->plural : NULL;
    corral__status(r, 409, "Conflict", plural, r->name,
                   "Operation cannot be fulfilled on %s \"%s\": %s", res_name(r),
                   r->name ? r->name : "",
                   why ? why
                       : "the object has been modified; please apply your changes to the latest "
                         "version and try again");
}

void corral__internal(corral__req_t *r, int err)
{
    corral__status(r, 500, "InternalError", NULL, NULL, "Internal error occurred: %s",
                   err == CORRAL_EIO ? "the store could not commit the write"
                                     : corral_strerror(err));
}

/* "Pod" for core kinds, "Queue.scheduling.volcano.sh" otherwise (kube's
 * qualified kind in Invalid messages). */
static void qualified_kind(const corral__req_t *r, const char *kind, corral_buf_t *b)
{
    corral_buf_puts(b, kind);
    if (r->res && r->res->info->group[0])
        corral_buf_printf(b, ".%s", r->res->info->group);
}

/* A cause's field path as r's resource spells it (views rename fields). */
static const char *field_of(const corral__req_t *r, const corral_diag_entry_t *e, char *buf,
                            size_t len)
{
    if (!e->path)
        return "";
    if (r->res && r->res->view)
        return r->res->view->field_path(e->path, buf, len);
    return e->path;
}

void corral__invalid(corral__req_t *r, const char *kind, const char *name, const corral_diag_t *d)
{
    char path[256];
    corral_buf_t msg, b;
    corral_buf_init(&msg);
    corral_buf_init(&b);
    qualified_kind(r, kind, &msg);
    corral_buf_printf(&msg, " \"%s\" is invalid: ", name ? name : "");
    size_t nerr = 0;
    for (size_t i = 0; i < d->n; i++)
        nerr += d->items[i].sev == CORRAL_SEV_ERROR;
    if (nerr > 1)
        corral_buf_putc(&msg, '[');
    size_t k = 0;
    for (size_t i = 0; i < d->n; i++) {
        const corral_diag_entry_t *e = &d->items[i];
        if (e->sev != CORRAL_SEV_ERROR)
            continue;
        corral_buf_printf(&msg, "%s%s%s%s", k++ ? ", " : "", field_of(r, e, path, sizeof(path)),
                          e->path ? ": " : "", e->msg);
    }
    if (nerr > 1)
        corral_buf_putc(&msg, ']');
    corral_buf_puts(&b, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
                        "\"status\":\"Failure\",\"message\":");
    corral_json_quote(&b, msg.p, msg.len);
    corral_buf_puts(&b, ",\"reason\":\"Invalid\",\"details\":{\"name\":");
    corral_json_quote(&b, name ? name : "", strlen(name ? name : ""));
    if (r->res && r->res->info->group[0]) {
        corral_buf_puts(&b, ",\"group\":");
        corral_json_quote(&b, r->res->info->group, strlen(r->res->info->group));
    }
    corral_buf_puts(&b, ",\"kind\":");
    corral_json_quote(&b, kind, strlen(kind));
    corral_buf_puts(&b, ",\"causes\":[");
    k = 0;
    for (size_t i = 0; i < d->n; i++) {
        const corral_diag_entry_t *e = &d->items[i];
        if (e->sev != CORRAL_SEV_ERROR)
            continue;
        corral_buf_puts(&b, k++ ? ",{\"reason\":\"FieldValueInvalid\",\"message\":"
                                : "{\"reason\":\"FieldValueInvalid\",\"message\":");
        corral_json_quote(&b, e->msg, strlen(e->msg));
        const char *field = field_of(r, e, path, sizeof(path));
        corral_buf_puts(&b, ",\"field\":");
        corral_json_quote(&b, field, strlen(field));
        corral_buf_putc(&b, '}');
    }
    corral_buf_puts(&b, "]},\"code\":422}");
    corral_buf_fini(&msg);
    corral__reply_buf(r, 422, &b);
}
