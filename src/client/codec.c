/*
 * Protobuf answers for JSON callers (corral_client_set_accept): with
 * protobuf asked, the client sends `Accept: application/vnd.kubernetes.protobuf,
 * application/json` (as client-go does: the server answers JSON for kinds
 * without a protobuf form) and turns what comes back in protobuf into the
 * JSON the callers read: a whole body ("k8s\0" + runtime.Unknown: an
 * object, a List, a Status) into its JSON, a watch stream's frames (a
 * 4-byte big-endian length, then a metav1.WatchEvent) into JSON event
 * lines. Request bodies stay JSON. Decoding is include/corral/pb.h's.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "client/codec.h"
#include "corral/json.h"
#include "corral/pb.h"

#define MAX_FRAME ((size_t)64 << 20) /* a frame's length past this ends the stream */

const char *corral__codec_accept(bool pb)
{
    return pb ? "Accept: " CORRAL_PB_MEDIA ", application/json" : "Accept: application/json";
}

/* A List's items carry apiVersion and kind in Corral's JSON, not on the wire. */
static void item_kinds(corral_arena_t *a, corral_val_t *v)
{
    const char *kind = corral_val_get_str(v, "kind");
    corral_val_t *av = corral_val_get(v, "apiVersion");
    corral_val_t *items = corral_val_get(v, "items");
    size_t n = kind ? strlen(kind) : 0;
    if (!av || n <= 4 || strcmp(kind + n - 4, "List") != 0 || !items ||
        items->kind != CORRAL_VAL_SEQ)
        return;
    corral_val_t *ik = corral_val_new_strn(a, kind, n - 4);
    for (size_t i = 0; i < items->n; i++) {
        if (items->items[i]->kind != CORRAL_VAL_MAP)
            continue;
        corral_val_set(a, items->items[i], "apiVersion", av);
        corral_val_set(a, items->items[i], "kind", ik);
    }
}

static void status_json(corral_buf_t *out, const char *why);

/* An ERROR event line carrying a 500 Status that says why. */
static int error_line(const char *why, int (*line)(void *, const char *, size_t), void *ctx)
{
    corral_buf_t out;
    corral_buf_init(&out);
    corral_buf_puts(&out, "{\"type\":\"ERROR\",\"object\":");
    status_json(&out, why);
    corral_buf_puts(&out, "}");
    line(ctx, out.p, out.len);
    corral_buf_fini(&out);
    return -1;
}

static void status_json(corral_buf_t *out, const char *why)
{
    corral_buf_puts(out, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":"
                         "\"Failure\",\"message\":");
    char msg[400];
    snprintf(msg, sizeof(msg), "the protobuf response could not be decoded: %s", why);
    corral_json_quote(out, msg, strlen(msg));
    corral_buf_puts(out, ",\"reason\":\"InternalError\",\"code\":500}");
}

void corral__codec_body(corral_buf_t *body)
{
    if (body->len < 4 || memcmp(body->p, "k8s\0", 4) != 0)
        return;
    corral_arena_t a;
    corral_arena_init(&a);
    corral_val_t *v = NULL;
    char why[256];
    corral_buf_t out;
    corral_buf_init(&out);
    if (corral_pb_decode(&a, body->p, body->len, &v, why, sizeof(why)) == 0) {
        item_kinds(&a, v);
        corral_val_to_json(v, &out, false);
    } else {
        status_json(&out, why);
    }
    corral_arena_fini(&a);
    corral_buf_fini(body);
    *body = out;
}

bool corral__codec_is_pb(CURL *h)
{
    char *ct = NULL;
    curl_easy_getinfo(h, CURLINFO_CONTENT_TYPE, &ct);
    return ct && strncasecmp(ct, CORRAL_PB_MEDIA, strlen(CORRAL_PB_MEDIA)) == 0;
}

/* One frame's WatchEvent as a JSON line to line; non-zero stops. */
static int frame(const char *p, size_t n, int (*line)(void *, const char *, size_t), void *ctx)
{
    corral_arena_t a;
    corral_arena_init(&a);
    corral_val_t *v = NULL;
    char why[256];
    corral_buf_t out;
    corral_buf_init(&out);
    int rc = corral_pb_decode_watch_event(&a, p, n, &v, why, sizeof(why));
    int stop = -1;
    if (rc == 0) {
        corral_val_to_json(v, &out, false);
        stop = line(ctx, out.p, out.len);
    } else {
        error_line(why, line, ctx);
    }
    corral_buf_fini(&out);
    corral_arena_fini(&a);
    return stop;
}

int corral__codec_stream(CURL *h, corral_buf_t *pending, const char *p, size_t len,
                         int (*line)(void *ctx, const char *text, size_t len), void *ctx)
{
    if (!corral__codec_is_pb(h))
        return 0;
    corral_buf_append(pending, p, len);
    size_t at = 0;
    int rc = 1;
    while (pending->len - at >= 4) {
        const uint8_t *q = (const uint8_t *)pending->p + at;
        size_t n = ((size_t)q[0] << 24) | ((size_t)q[1] << 16) | ((size_t)q[2] << 8) | q[3];
        if (n > MAX_FRAME) {
            char why[96];
            snprintf(why, sizeof(why), "a watch frame of %zu bytes (over %zu)", n, MAX_FRAME);
            return error_line(why, line, ctx);
        }
        if (pending->len - at - 4 < n)
            break;
        if (frame(pending->p + at + 4, n, line, ctx)) {
            rc = -1;
            break;
        }
        at += 4 + n;
    }
    if (rc < 0)
        return rc;
    memmove(pending->p, pending->p + at, pending->len - at);
    pending->len -= at;
    if (pending->p)
        pending->p[pending->len] = '\0';
    return 1;
}
