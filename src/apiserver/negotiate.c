/*
 * Protobuf responses, as kube-apiserver negotiates them: the media type is
 * the first acceptable one of the request's Accept list (highest q first,
 * a specific type before a wildcard at equal q, then the order written;
 * q=0 refuses). When that is application/vnd.kubernetes.protobuf and the
 * body's apiVersion/kind has a protobuf message (include/corral/pb.h: the
 * k8s.io kinds, their Lists, Status), the JSON body the handler made is
 * written as protobuf; CRD kinds, Tables, discovery documents stay JSON (a
 * client that asks protobuf lists JSON too, as client-go does, and
 * kube-apiserver answers these in JSON then). Watches: length-prefixed
 * WatchEvent frames (a 4-byte big-endian length, then the event whose
 * object is a whole "k8s\0" body), Content-Type
 * application/vnd.kubernetes.protobuf;stream=watch.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "apiserver/apiserver_int.h"
#include "corral/json.h"
#include "corral/pb.h"

/* Whether the media range s (n bytes, no parameters) is one we serve:
 * 2 protobuf, 1 JSON or YAML or a wildcard (JSON), 0 none. */
static int served(const char *s, size_t n)
{
    static const char *const other[] = {"application/json", "application/yaml", "*/*",
                                        "application/*"};
    if (n == strlen(CORRAL_PB_MEDIA) && !strncasecmp(s, CORRAL_PB_MEDIA, n))
        return 2;
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(other); i++) {
        if (n == strlen(other[i]) && !strncasecmp(s, other[i], n))
            return 1;
    }
    return 0;
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t';
}

bool corral__accept_pb(const char *accept, size_t len)
{
    int best = 0;
    double best_q = 0;
    bool best_specific = false;
    size_t i = 0;
    while (accept && i < len) {
        size_t end = i;
        while (end < len && accept[end] != ',')
            end++;
        size_t s = i;
        while (s < end && is_space(accept[s]))
            s++;
        size_t e = s;
        while (e < end && accept[e] != ';' && !is_space(accept[e]))
            e++;
        double q = 1;
        for (size_t p = e; p + 2 < end; p++) { /* ;q=0.5 */
            if (accept[p] == ';') {
                size_t k = p + 1;
                while (k < end && is_space(accept[k]))
                    k++;
                if (k + 2 <= end && (accept[k] == 'q' || accept[k] == 'Q') && accept[k + 1] == '=')
                    q = strtod(accept + k + 2, NULL);
            }
        }
        int kind = served(accept + s, e - s);
        bool specific = kind && accept[s] != '*' && accept[e - 1] != '*';
        if (kind && q > 0 && (q > best_q || (q == best_q && specific && !best_specific))) {
            best = kind;
            best_q = q;
            best_specific = specific;
        }
        i = end + 1;
    }
    return best == 2;
}

bool corral__want_pb(corral__req_t *r)
{
    size_t len = 0;
    const char *accept = r->http ? corral_http_header(r->http, "accept", &len) : NULL;
    return accept && corral__accept_pb(accept, len);
}

/* The stored JSON json as a tree in a (NULL when it is not an object). */
static corral_val_t *tree(corral_arena_t *a, const char *json, size_t len)
{
    corral_val_t *v = NULL;
    if (len == 0 || json[0] != '{' || corral_json_parse(a, json, len, &v, NULL) != 0 ||
        v->kind != CORRAL_VAL_MAP)
        return NULL;
    return v;
}

bool corral__pb_body(corral__req_t *r, const char *json, size_t len, corral_buf_t *out)
{
    if (!json || !corral__want_pb(r))
        return false;
    corral_arena_t a;
    corral_arena_init(&a);
    corral_val_t *v = tree(&a, json, len);
    char why[256];
    bool ok =
        v &&
        corral_pb_has_kind(corral_val_get_str(v, "apiVersion"), corral_val_get_str(v, "kind")) &&
        corral_pb_encode(v, out, why, sizeof(why)) == 0;
    corral_arena_fini(&a);
    return ok;
}

void corral__pb_frame(const char *type, const char *json, size_t len, corral_buf_t *out)
{
    corral_arena_t a;
    corral_arena_init(&a);
    corral_val_t *v = tree(&a, json, len);
    char why[256] = "not a JSON object";
    size_t mark = out->len;
    corral_buf_append(out, "\0\0\0\0", 4);
    if (!v || corral_pb_encode_watch_event(type, v, out, why, sizeof(why)) != 0) {
        /* Never in practice (stored objects are validated): an ERROR event
         * the client reports, rather than an event silently left out. */
        corral_buf_t st;
        corral_buf_init(&st);
        corral_buf_puts(&st, "The object could not be encoded as protobuf: ");
        corral_buf_puts(&st, why);
        corral_buf_t j;
        corral_buf_init(&j);
        corral__status_json(&j, 500, "Failure", "InternalError", corral_buf_str(&st));
        corral_val_t *sv = tree(&a, j.p, j.len);
        out->len = mark + 4;
        if (sv)
            corral_pb_encode_watch_event("ERROR", sv, out, why, sizeof(why));
        corral_buf_fini(&j);
        corral_buf_fini(&st);
    }
    corral_arena_fini(&a);
    size_t n = out->len - mark - 4;
    for (int i = 0; i < 4; i++)
        out->p[mark + (size_t)i] = (char)(n >> (24 - 8 * i));
}
