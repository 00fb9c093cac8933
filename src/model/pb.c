/*
 * Kubernetes protobuf (include/corral/pb.h), driven by the field tables of
 * include/corral/schema.h.
 *
 * Decoding gives the value tree the JSON form of the same object gives: Time
 * as RFC 3339, MicroTime with microseconds, Duration as Go prints it,
 * Quantity as its string, IntOrString as a number or string, bytes as
 * base64, proto maps as objects, embedded JSON (RawExtension, FieldsV1)
 * parsed, and the zero scalars Go's omitempty drops left out. Unknown field
 * numbers are skipped; every length is checked against what is left;
 * nesting and the number of values made are bounded.
 *
 * The List kinds, meta/v1 Status and WatchEvent are not in the schema
 * tables (which list what the API server validates and documents): their
 * few messages are below, field numbers from apimachinery's
 * pkg/apis/meta/v1/generated.proto.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corral/base64.h"
#include "corral/common.h"
#include "corral/json.h"
#include "corral/pb.h"
#include "corral/timefmt.h"
#include "corral/yaml.h"
#include "model/pb_int.h"

#define PATH_MAX_NAMES (CORRAL_PB_MAX_DEPTH + 8)

enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2, WT_I32 = 5 };

typedef struct pb_ctx {
    corral_arena_t *a;
    size_t items;
    int depth;
    const char *path[PATH_MAX_NAMES]; /* field names from the top, for messages */
    corral_val_t **maps;              /* proto maps made, sorted once at the end */
    size_t nmaps, capmaps;
    char *why;
    size_t why_len;
} pb_ctx_t;

typedef struct pb_rd {
    const uint8_t *p, *end;
} pb_rd_t;

static int fail(pb_ctx_t *c, int code, const char *fmt, ...) CORRAL_PRINTF(3, 4);

static int fail(pb_ctx_t *c, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    corral__pb_why(c->why, c->why_len, c->path,
                   c->depth < PATH_MAX_NAMES ? c->depth : PATH_MAX_NAMES, fmt, ap);
    va_end(ap);
    return code;
}

void corral__pb_why(char *why, size_t whylen, const char *const *path, int depth, const char *fmt,
                    va_list ap)
{
    if (!why || !whylen)
        return;
    size_t off = 0;
    why[0] = '\0';
    for (int i = 0; i < depth && off + 2 < whylen; i++) {
        if (!path[i])
            continue;
        int n = snprintf(why + off, whylen - off, "%s%s", off ? "." : "", path[i]);
        off += n > 0 ? (size_t)n : 0;
    }
    if (off && off + 2 < whylen) {
        memcpy(why + off, ": ", 3);
        off += 2;
    }
    if (off < whylen)
        vsnprintf(why + off, whylen - off, fmt, ap);
}

static int count_item(pb_ctx_t *c)
{
    if (++c->items > CORRAL_PB_MAX_ITEMS)
        return fail(c, CORRAL_ETOOBIG, "more than %zu values", (size_t)CORRAL_PB_MAX_ITEMS);
    return 0;
}

/* --- the wire ------------------------------------------------------------------------ */

static int rd_varint(pb_ctx_t *c, pb_rd_t *r, uint64_t *out)
{
    uint64_t v = 0;
    *out = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (r->p >= r->end)
            return fail(c, CORRAL_EPARSE, "truncated varint");
        uint8_t b = *r->p++;
        if (shift == 63 && b > 1)
            return fail(c, CORRAL_EPARSE, "varint overflows 64 bits");
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *out = v;
            return 0;
        }
    }
    return fail(c, CORRAL_EPARSE, "varint longer than 10 bytes");
}

static int rd_fixed(pb_ctx_t *c, pb_rd_t *r, size_t n, uint64_t *out)
{
    if ((size_t)(r->end - r->p) < n)
        return fail(c, CORRAL_EPARSE, "truncated fixed-width value");
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v |= (uint64_t)r->p[i] << (8 * i);
    r->p += n;
    *out = v;
    return 0;
}

static int rd_bytes(pb_ctx_t *c, pb_rd_t *r, pb_rd_t *sub)
{
    uint64_t n = 0;
    sub->p = sub->end = r->p;
    int rc = rd_varint(c, r, &n);
    if (rc)
        return rc;
    if (n > (uint64_t)(r->end - r->p))
        return fail(c, CORRAL_EPARSE, "length %llu runs past the end of its message",
                    (unsigned long long)n);
    sub->p = r->p;
    sub->end = r->p + n;
    r->p += n;
    return 0;
}

static int rd_key(pb_ctx_t *c, pb_rd_t *r, uint32_t *num, int *wt)
{
    uint64_t k = 0;
    *num = 0;
    *wt = 0;
    int rc = rd_varint(c, r, &k);
    if (rc)
        return rc;
    if ((k >> 3) == 0 || (k >> 3) > 0x1fffffffu)
        return fail(c, CORRAL_EPARSE, "invalid field number %llu", (unsigned long long)(k >> 3));
    *num = (uint32_t)(k >> 3);
    *wt = (int)(k & 7);
    return 0;
}

static int skip(pb_ctx_t *c, pb_rd_t *r, int wt)
{
    uint64_t v;
    pb_rd_t sub = {NULL, NULL};
    switch (wt) {
    case WT_VARINT:
        return rd_varint(c, r, &v);
    case WT_I64:
        return rd_fixed(c, r, 8, &v);
    case WT_LEN:
        return rd_bytes(c, r, &sub);
    case WT_I32:
        return rd_fixed(c, r, 4, &v);
    default:
        return fail(c, CORRAL_EPARSE, "unsupported wire type %d", wt);
    }
}

static int want_wt(pb_ctx_t *c, int wt, int want)
{
    if (wt != want)
        return fail(c, CORRAL_EPARSE, "wire type %d where %d was expected", wt, want);
    return 0;
}

/* --- the messages of lists, Status and WatchEvent ------------------------------------- */

#define OZ CORRAL_SCHEMA_OMITZERO
static const corral_schema_field_t f_list_meta[] = {
    {"selfLink", 1, CORRAL_SCHEMA_STRING, OZ, NULL, NULL},
    {"resourceVersion", 2, CORRAL_SCHEMA_STRING, OZ, NULL, NULL},
    {"continue", 3, CORRAL_SCHEMA_STRING, OZ, NULL, NULL},
    {"remainingItemCount", 4, CORRAL_SCHEMA_INT64, 0, NULL, NULL},
};
static const corral_schema_msg_t m_list_meta = {"io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta",
                                                f_list_meta, 4, NULL};
static const corral_schema_field_t f_status_cause[] = {
    {"reason", 1, CORRAL_SCHEMA_STRING, OZ, NULL, NULL},
    {"message", 2, CORRAL_SCHEMA_STRING, OZ, NULL, NULL},
    {"field", 3, CORRAL_SCHEMA_STRING, OZ, NULL, NULL},
};
static const corral_schema_msg_t m_status_cause = {
    "io.k8s.apimachinery.pkg.apis.meta.v1.StatusCause", f_status_cause, 3, NULL};
static const corral_schema_field_t f_status_details[] = {
    {"name", 1, CORRAL_SCHEMA_STRING, OZ, NULL, NULL},
    {"group", 2, CORRAL_SCHEMA_STRING, OZ, NULL, NULL},
    {"kind", 3, CORRAL_SCHEMA_STRING, OZ, NULL, NULL},
    {"causes", 4, CORRAL_SCHEMA_MSG, CORRAL_SCHEMA_REPEATED, &m_status_cause, NULL},
    {"retryAfterSeconds", 5, CORRAL_SCHEMA_INT32, OZ, NULL, NULL},
    {"uid", 6, CORRAL_SCHEMA_STRING, OZ, NULL, NULL},
};
static const corral_schema_msg_t m_status_details = {
    "io.k8s.apimachinery.pkg.apis.meta.v1.StatusDetails", f_status_details, 6, NULL};
static const corral_schema_field_t f_status[] = {
    {"metadata", 1, CORRAL_SCHEMA_MSG, 0, &m_list_meta, NULL},
    {"status", 2, CORRAL_SCHEMA_STRING, OZ, NULL, NULL},
    {"message", 3, CORRAL_SCHEMA_STRING, OZ, NULL, NULL},
    {"reason", 4, CORRAL_SCHEMA_STRING, OZ, NULL, NULL},
    {"details", 5, CORRAL_SCHEMA_MSG, 0, &m_status_details, NULL},
    {"code", 6, CORRAL_SCHEMA_INT32, OZ, NULL, NULL},
};
static const corral_schema_msg_t m_status = {"io.k8s.apimachinery.pkg.apis.meta.v1.Status",
                                             f_status, 6, NULL};
/* WatchEvent {type=1, object=2 RawExtension}: the object is decoded by hand
 * (its raw bytes are a whole "k8s\0" body), so only type is listed. */
#undef OZ

/* Whether m is a k8s.io message (the CRD tables' fields have no numbers). */
static bool has_numbers(const corral_schema_msg_t *m)
{
    for (size_t i = 0; m && i < m->nfields; i++) {
        if (m->fields[i].num)
            return true;
    }
    return false;
}

const corral_schema_msg_t *corral__pb_msg_for(const char *av, const char *kind,
                                              corral__pb_list_t *l)
{
    if (!av || !kind)
        return NULL;
    const corral_schema_msg_t *m = corral_schema_for(av, kind);
    if (m)
        return has_numbers(m) ? m : NULL;
    if (strcmp(kind, "Status") == 0 && (!strcmp(av, "v1") || !strcmp(av, "meta.k8s.io/v1")))
        return &m_status;
    size_t n = strlen(kind);
    char item[128];
    if (n <= 4 || n - 4 >= sizeof(item) || strcmp(kind + n - 4, "List") != 0)
        return NULL;
    memcpy(item, kind, n - 4);
    item[n - 4] = '\0';
    m = corral_schema_for(av, item);
    if (!has_numbers(m))
        return NULL;
    l->f[0] = (corral_schema_field_t){"metadata", 1, CORRAL_SCHEMA_MSG, 0, &m_list_meta, NULL};
    l->f[1] =
        (corral_schema_field_t){"items", 2, CORRAL_SCHEMA_MSG, CORRAL_SCHEMA_REPEATED, m, NULL};
    l->m = (corral_schema_msg_t){"List", l->f, 2, NULL};
    return &l->m;
}

bool corral_pb_has_kind(const char *api_version, const char *kind)
{
    corral__pb_list_t l;
    return corral__pb_msg_for(api_version, kind, &l) != NULL;
}

/* --- values ----------------------------------------------------------------------------- */

static corral_val_t *new_map(corral_arena_t *a)
{
    return corral_val_new(a, CORRAL_VAL_MAP);
}

/* Append a pair without looking for the key (maps are deduplicated later). */
static void map_append(corral_arena_t *a, corral_val_t *m, corral_val_t *key, corral_val_t *v)
{
    if (m->n == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 4;
        m->pairs =
            corral_arena_grow(a, m->pairs, m->cap * sizeof(*m->pairs), cap * sizeof(*m->pairs));
        m->cap = cap;
    }
    m->pairs[m->n].key = key;
    m->pairs[m->n].val = v;
    m->n++;
}

static int text_val(pb_ctx_t *c, const pb_rd_t *s, corral_val_t **out)
{
    size_t n = (size_t)(s->end - s->p);
    int line = 0, col = 0;
    if (n && corral_text_check((const char *)s->p, n, &line, &col) != 0)
        return fail(c, CORRAL_EPARSE, "a string is not UTF-8 text or holds a NUL byte");
    *out = corral_val_new_strn(c->a, (const char *)s->p, n);
    return 0;
}

static corral_val_t *base64_val(corral_arena_t *a, const pb_rd_t *s)
{
    corral_buf_t b;
    corral_buf_init(&b);
    corral_base64_encode(s->p, (size_t)(s->end - s->p), CORRAL_B64_STD, &b);
    corral_val_t *v = corral_val_new_strn(a, b.p ? b.p : "", b.len);
    corral_buf_fini(&b);
    return v;
}

/* The scalar fields of a small message (Time, Duration, IntOrString,
 * Quantity): varints by number 1..3 and the string of number f_str. */
typedef struct small_msg {
    uint64_t v[4];
    bool set[4];
    pb_rd_t str;
    bool has_str;
} small_msg_t;

static int small_decode(pb_ctx_t *c, pb_rd_t r, uint32_t f_str, small_msg_t *m)
{
    memset(m, 0, sizeof(*m));
    while (r.p < r.end) {
        uint32_t num = 0;
        int wt = 0, rc = rd_key(c, &r, &num, &wt);
        if (rc)
            return rc;
        if (num == f_str && wt == WT_LEN) {
            if ((rc = rd_bytes(c, &r, &m->str)))
                return rc;
            m->has_str = true;
        } else if (num < 4 && num != f_str && wt == WT_VARINT) {
            if ((rc = rd_varint(c, &r, &m->v[num])))
                return rc;
            m->set[num] = true;
        } else if ((rc = skip(c, &r, wt))) {
            return rc;
        }
    }
    return 0;
}

/* metav1.Time / MicroTime {seconds=1, nanos=2}; an empty message is Go's
 * zero time, which JSON writes as null. */
static int time_val(pb_ctx_t *c, pb_rd_t r, bool micro, corral_val_t **out)
{
    if (r.p == r.end) {
        *out = corral_val_new(c->a, CORRAL_VAL_NULL);
        return 0;
    }
    small_msg_t m;
    int rc = small_decode(c, r, 0, &m);
    if (rc)
        return rc;
    int64_t secs = (int64_t)m.v[1];
    int64_t nanos = (int32_t)(uint32_t)m.v[2];
    /* Years 0001 to 9999, as the protobuf Timestamp allows. */
    if (secs < -62135596800LL || secs > 253402300799LL)
        return fail(c, CORRAL_EPARSE, "time %lld seconds is outside years 1 to 9999",
                    (long long)secs);
    if (nanos < 0 || nanos > 999999999)
        return fail(c, CORRAL_EPARSE, "time nanoseconds %lld out of range", (long long)nanos);
    char buf[48];
    corral_time_format(secs * 1000000 + nanos / 1000, micro, buf, sizeof(buf));
    *out = corral_val_new_str(c->a, buf);
    return 0;
}

static int special_val(pb_ctx_t *c, uint8_t type, pb_rd_t r, corral_val_t **out)
{
    small_msg_t m;
    int rc;
    char buf[48];
    switch (type) {
    case CORRAL_SCHEMA_TIME:
    case CORRAL_SCHEMA_MICROTIME:
        return time_val(c, r, type == CORRAL_SCHEMA_MICROTIME, out);
    case CORRAL_SCHEMA_DURATION:
        if ((rc = small_decode(c, r, 0, &m)))
            return rc;
        corral_duration_format((int64_t)m.v[1], buf, sizeof(buf));
        *out = corral_val_new_str(c->a, buf);
        return 0;
    case CORRAL_SCHEMA_QUANTITY:
        if ((rc = small_decode(c, r, 1, &m)))
            return rc;
        if (!m.has_str || m.str.p == m.str.end) {
            *out = corral_val_new_str(c->a, "0");
            return 0;
        }
        return text_val(c, &m.str, out);
    case CORRAL_SCHEMA_INTORSTRING:
        if ((rc = small_decode(c, r, 3, &m)))
            return rc;
        if (m.v[1] == 1) {
            if (!m.has_str) {
                *out = corral_val_new_str(c->a, "");
                return 0;
            }
            return text_val(c, &m.str, out);
        }
        *out = corral_val_new_int(c->a, (int32_t)(uint32_t)m.v[2]);
        return 0;
    default:
        return fail(c, CORRAL_EPARSE, "unsupported field type %d", type);
    }
}

static int decode_msg(pb_ctx_t *c, const corral_schema_msg_t *m, pb_rd_t r, corral_val_t *out);
static int decode_envelope(pb_ctx_t *c, pb_rd_t r, corral_val_t **out);

/* RawExtension / FieldsV1 {raw=1}: JSON text, or a nested protobuf object
 * (runtime.Unknown with the magic) for an embedded object. */
static int embedded_val(pb_ctx_t *c, pb_rd_t r, corral_val_t **out)
{
    pb_rd_t raw = {NULL, NULL};
    bool has = false;
    while (r.p < r.end) {
        uint32_t num = 0;
        int wt = 0, rc = rd_key(c, &r, &num, &wt);
        if (rc)
            return rc;
        if (num == 1 && wt == WT_LEN) {
            if ((rc = rd_bytes(c, &r, &raw)))
                return rc;
            has = true;
        } else if ((rc = skip(c, &r, wt))) {
            return rc;
        }
    }
    size_t n = has ? (size_t)(raw.end - raw.p) : 0;
    if (n == 0) {
        *out = corral_val_new(c->a, CORRAL_VAL_NULL);
        return 0;
    }
    if (n >= 4 && memcmp(raw.p, "k8s\0", 4) == 0) {
        raw.p += 4;
        return decode_envelope(c, raw, out);
    }
    corral_json_err_t e;
    if (corral_json_parse(c->a, (const char *)raw.p, n, out, &e) != 0)
        return fail(c, CORRAL_EPARSE, "embedded JSON: line %d, column %d: %s", e.line, e.col,
                    e.msg);
    return 0;
}

/* One value of field f (not a map entry, not a packed run). */
static int decode_value(pb_ctx_t *c, const corral_schema_field_t *f, int wt, pb_rd_t *r,
                        corral_val_t **out)
{
    uint64_t v = 0;
    pb_rd_t sub = {NULL, NULL};
    int rc = count_item(c);
    if (rc)
        return rc;
    switch (f->type) {
    case CORRAL_SCHEMA_BOOL:
    case CORRAL_SCHEMA_INT32:
    case CORRAL_SCHEMA_INT64:
        if ((rc = want_wt(c, wt, WT_VARINT)) || (rc = rd_varint(c, r, &v)))
            return rc;
        if (f->type == CORRAL_SCHEMA_BOOL)
            *out = corral_val_new_bool(c->a, v != 0);
        else if (f->type == CORRAL_SCHEMA_INT32)
            *out = corral_val_new_int(c->a, (int32_t)(uint32_t)v);
        else
            *out = corral_val_new_int(c->a, (int64_t)v);
        return 0;
    case CORRAL_SCHEMA_DOUBLE: {
        double d;
        if ((rc = want_wt(c, wt, WT_I64)) || (rc = rd_fixed(c, r, 8, &v)))
            return rc;
        memcpy(&d, &v, sizeof(d));
        *out = corral_val_new_float(c->a, d);
        return 0;
    }
    default:
        break;
    }
    if ((rc = want_wt(c, wt, WT_LEN)) || (rc = rd_bytes(c, r, &sub)))
        return rc;
    switch (f->type) {
    case CORRAL_SCHEMA_STRING:
        return text_val(c, &sub, out);
    case CORRAL_SCHEMA_BYTES:
        *out = base64_val(c->a, &sub);
        return 0;
    case CORRAL_SCHEMA_MSG:
        *out = new_map(c->a);
        return f->msg ? decode_msg(c, f->msg, sub, *out) : 0;
    case CORRAL_SCHEMA_RAW:
    case CORRAL_SCHEMA_FIELDSV1:
    case CORRAL_SCHEMA_JSON:
        return embedded_val(c, sub, out);
    default:
        return special_val(c, f->type, sub, out);
    }
}

/* A packed run of varints or doubles into seq. */
static int decode_packed(pb_ctx_t *c, const corral_schema_field_t *f, pb_rd_t *r, corral_val_t *seq)
{
    pb_rd_t sub = {NULL, NULL};
    int rc = rd_bytes(c, r, &sub);
    int wt = f->type == CORRAL_SCHEMA_DOUBLE ? WT_I64 : WT_VARINT;
    while (!rc && sub.p < sub.end) {
        corral_val_t *v = NULL;
        if (!(rc = decode_value(c, f, wt, &sub, &v)))
            corral_val_push(c->a, seq, v);
    }
    return rc;
}

/* A map entry {key=1, value=2} into m. A missing value is the type's zero. */
static int decode_entry(pb_ctx_t *c, const corral_schema_field_t *f, pb_rd_t r, corral_val_t *m)
{
    corral_schema_field_t vf = *f;
    vf.flags = 0;
    corral_val_t *key = NULL, *val = NULL;
    int rc = count_item(c);
    while (!rc && r.p < r.end) {
        uint32_t num = 0;
        int wt = 0;
        if ((rc = rd_key(c, &r, &num, &wt)))
            break;
        if (num == 1 && wt == WT_LEN) {
            pb_rd_t s = {NULL, NULL};
            if (!(rc = rd_bytes(c, &r, &s)))
                rc = text_val(c, &s, &key);
        } else if (num == 2 && (f->flags & CORRAL_SCHEMA_REPEATED)) {
            /* A named list (ExtraValue): a message holding the items as 1. */
            static const corral_schema_field_t items = {
                "items", 1, CORRAL_SCHEMA_STRING, CORRAL_SCHEMA_REPEATED, NULL, NULL};
            static const corral_schema_msg_t wrap = {"items", &items, 1, NULL};
            pb_rd_t s = {NULL, NULL};
            corral_val_t *w = new_map(c->a);
            if (!(rc = want_wt(c, wt, WT_LEN)) && !(rc = rd_bytes(c, &r, &s)) &&
                !(rc = decode_msg(c, &wrap, s, w))) {
                val = corral_val_get(w, "items");
                if (!val)
                    val = corral_val_new(c->a, CORRAL_VAL_SEQ);
            }
        } else if (num == 2) {
            rc = decode_value(c, &vf, wt, &r, &val);
        } else {
            rc = skip(c, &r, wt);
        }
    }
    if (rc)
        return rc;
    if (!key)
        key = corral_val_new_str(c->a, "");
    if (!val) {
        pb_rd_t empty = {r.end, r.end};
        if (f->flags & CORRAL_SCHEMA_REPEATED)
            val = corral_val_new(c->a, CORRAL_VAL_SEQ);
        else if (f->type == CORRAL_SCHEMA_BOOL || f->type == CORRAL_SCHEMA_INT32 ||
                 f->type == CORRAL_SCHEMA_INT64 || f->type == CORRAL_SCHEMA_DOUBLE)
            val = f->type == CORRAL_SCHEMA_BOOL ? corral_val_new_bool(c->a, false)
                                                : corral_val_new_int(c->a, 0);
        else if (f->type == CORRAL_SCHEMA_STRING || f->type == CORRAL_SCHEMA_BYTES)
            val = corral_val_new_str(c->a, "");
        else if (f->type == CORRAL_SCHEMA_MSG)
            val = new_map(c->a);
        else if (f->type == CORRAL_SCHEMA_RAW || f->type == CORRAL_SCHEMA_FIELDSV1 ||
                 f->type == CORRAL_SCHEMA_JSON)
            val = corral_val_new(c->a, CORRAL_VAL_NULL);
        else if ((rc = special_val(c, f->type, empty, &val)))
            return rc;
    }
    map_append(c->a, m, key, val);
    return 0;
}

typedef struct sort_pair {
    corral_val_pair_t p;
    size_t idx;
} sort_pair_t;

static int cmp_pair(const void *x, const void *y)
{
    const sort_pair_t *a = x, *b = y;
    size_t n = a->p.key->len < b->p.key->len ? a->p.key->len : b->p.key->len;
    int d = memcmp(a->p.key->s, b->p.key->s, n);
    if (d)
        return d;
    if (a->p.key->len != b->p.key->len)
        return a->p.key->len < b->p.key->len ? -1 : 1;
    return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/* Sort a decoded proto map by key (as Go writes maps in JSON) and keep the
 * last of duplicate keys (as Go's decoder does). */
static void map_finish(corral_arena_t *a, corral_val_t *m)
{
    if (m->n < 2)
        return;
    sort_pair_t *tmp = corral_arena_alloc(a, m->n * sizeof(*tmp));
    for (size_t i = 0; i < m->n; i++) {
        tmp[i].p = m->pairs[i];
        tmp[i].idx = i;
    }
    qsort(tmp, m->n, sizeof(*tmp), cmp_pair);
    size_t o = 0;
    for (size_t i = 0; i < m->n; i++) {
        if (i + 1 < m->n && tmp[i].p.key->len == tmp[i + 1].p.key->len &&
            memcmp(tmp[i].p.key->s, tmp[i + 1].p.key->s, tmp[i].p.key->len) == 0)
            continue;
        m->pairs[o++] = tmp[i].p;
    }
    m->n = o;
    corral_val_index(a, m);
}

static bool is_zero(const corral_val_t *v)
{
    switch (v->kind) {
    case CORRAL_VAL_STR:
        return v->len == 0;
    case CORRAL_VAL_INT:
        return v->u.i == 0;
    case CORRAL_VAL_FLOAT:
        return v->u.f == 0;
    case CORRAL_VAL_BOOL:
        return !v->u.b;
    default:
        return false;
    }
}

/* One field occurrence of m's field f into out; slot is the value made so far. */
static int decode_field(pb_ctx_t *c, const corral_schema_field_t *f, int wt, pb_rd_t *r,
                        corral_val_t *out, corral_val_t **slot)
{
    int rc;
    pb_rd_t sub = {NULL, NULL};
    if (f->flags & CORRAL_SCHEMA_INLINE) {
        if ((rc = count_item(c)) || (rc = want_wt(c, wt, WT_LEN)) || (rc = rd_bytes(c, r, &sub)))
            return rc;
        return f->msg ? decode_msg(c, f->msg, sub, out) : 0;
    }
    if (f->flags & CORRAL_SCHEMA_MAP) {
        if ((rc = want_wt(c, wt, WT_LEN)) || (rc = rd_bytes(c, r, &sub)))
            return rc;
        if (!*slot || (*slot)->kind != CORRAL_VAL_MAP) {
            *slot = new_map(c->a);
            corral_val_set(c->a, out, f->name, *slot);
            if (c->nmaps == c->capmaps) {
                size_t cap = c->capmaps ? c->capmaps * 2 : 16;
                c->maps = corral_arena_grow(c->a, c->maps, c->capmaps * sizeof(corral_val_t *),
                                            cap * sizeof(corral_val_t *));
                c->capmaps = cap;
            }
            c->maps[c->nmaps++] = *slot;
        }
        return decode_entry(c, f, sub, *slot);
    }
    if (f->flags & CORRAL_SCHEMA_REPEATED) {
        if (!*slot || (*slot)->kind != CORRAL_VAL_SEQ) {
            *slot = corral_val_new(c->a, CORRAL_VAL_SEQ);
            corral_val_set(c->a, out, f->name, *slot);
        }
        bool packable = f->type == CORRAL_SCHEMA_BOOL || f->type == CORRAL_SCHEMA_INT32 ||
                        f->type == CORRAL_SCHEMA_INT64 || f->type == CORRAL_SCHEMA_DOUBLE;
        if (packable && wt == WT_LEN)
            return decode_packed(c, f, r, *slot);
        corral_val_t *v = NULL;
        if (!(rc = decode_value(c, f, wt, r, &v)))
            corral_val_push(c->a, *slot, v);
        return rc;
    }
    if (f->type == CORRAL_SCHEMA_MSG && *slot && (*slot)->kind == CORRAL_VAL_MAP && f->msg) {
        /* A message seen again merges into the first, as protobuf does. */
        if ((rc = count_item(c)) || (rc = want_wt(c, wt, WT_LEN)) || (rc = rd_bytes(c, r, &sub)))
            return rc;
        return decode_msg(c, f->msg, sub, *slot);
    }
    corral_val_t *v = NULL;
    if ((rc = decode_value(c, f, wt, r, &v)))
        return rc;
    *slot = v;
    corral_val_set(c->a, out, f->name, v);
    return 0;
}

/* The fields of message m from r into the map out (which may hold keys
 * already: a message merged again, or the parent of an inline message). */
static int decode_msg(pb_ctx_t *c, const corral_schema_msg_t *m, pb_rd_t r, corral_val_t *out)
{
    if (c->depth >= CORRAL_PB_MAX_DEPTH)
        return fail(c, CORRAL_ETOOBIG, "nested deeper than %d messages", CORRAL_PB_MAX_DEPTH);
    /* The value made so far for each field: unseen ones are looked up in
     * out when first met (out holds keys already when merging). */
    corral_val_t *stack_slots[48];
    bool stack_known[48];
    corral_val_t **slots = stack_slots;
    bool *known = stack_known;
    if (m->nfields > CORRAL_ARRAY_LEN(stack_slots)) {
        slots = corral_arena_alloc(c->a, m->nfields * sizeof(corral_val_t *));
        known = corral_arena_alloc(c->a, m->nfields * sizeof(bool));
    }
    for (size_t i = 0; i < m->nfields; i++) {
        slots[i] = NULL;
        known[i] = out->n == 0;
    }
    int level = c->depth++;
    int rc = 0;
    while (!rc && r.p < r.end) {
        uint32_t num = 0;
        int wt = 0;
        c->path[level] = NULL;
        if ((rc = rd_key(c, &r, &num, &wt)))
            break;
        const corral_schema_field_t *f = corral_schema_field_num(m, num);
        if (!f || (f->type == CORRAL_SCHEMA_ANY)) {
            rc = skip(c, &r, wt);
            continue;
        }
        c->path[level] = (f->flags & CORRAL_SCHEMA_INLINE) ? NULL : f->name;
        size_t i = (size_t)(f - m->fields);
        if (!known[i]) {
            slots[i] = corral_val_get(out, f->name);
            known[i] = true;
        }
        rc = decode_field(c, f, wt, &r, out, &slots[i]);
    }
    if (rc)
        return rc; /* depth stays: the error message names the path */
    c->depth = level;
    for (size_t i = 0; i < m->nfields; i++) {
        const corral_schema_field_t *f = &m->fields[i];
        if (slots[i] && (f->flags & CORRAL_SCHEMA_OMITZERO) &&
            !(f->flags & (CORRAL_SCHEMA_REPEATED | CORRAL_SCHEMA_MAP)) && is_zero(slots[i]))
            corral_val_del(out, f->name);
    }
    return 0;
}

/* runtime.Unknown after the magic: the message of typeMeta's kind. */
static int decode_envelope(pb_ctx_t *c, pb_rd_t r, corral_val_t **out)
{
    pb_rd_t raw = {r.end, r.end}, tm = {r.end, r.end}, enc = {r.end, r.end};
    int rc = 0;
    while (!rc && r.p < r.end) {
        uint32_t num = 0;
        int wt = 0;
        if ((rc = rd_key(c, &r, &num, &wt)))
            break;
        if (num >= 1 && num <= 3 && wt == WT_LEN)
            rc = rd_bytes(c, &r, num == 1 ? &tm : num == 2 ? &raw : &enc);
        else
            rc = skip(c, &r, wt);
    }
    if (rc)
        return rc;
    corral_val_t *av = NULL, *kind = NULL;
    /* TypeMeta {apiVersion=1, kind=2}: two strings. */
    pb_rd_t s1 = {NULL, NULL}, s2 = {NULL, NULL};
    while (!rc && tm.p < tm.end) {
        uint32_t num = 0;
        int wt = 0;
        if ((rc = rd_key(c, &tm, &num, &wt)))
            break;
        if ((num == 1 || num == 2) && wt == WT_LEN)
            rc = rd_bytes(c, &tm, num == 1 ? &s1 : &s2);
        else
            rc = skip(c, &tm, wt);
    }
    if (rc || (s1.p && (rc = text_val(c, &s1, &av))) || (s2.p && (rc = text_val(c, &s2, &kind))))
        return rc;
    if (enc.p != enc.end)
        return fail(c, CORRAL_EUNSUPPORTED, "contentEncoding \"%.*s\" is not supported",
                    (int)(enc.end - enc.p > 64 ? 64 : enc.end - enc.p), (const char *)enc.p);
    if (!av || !kind || !av->len || !kind->len)
        return fail(c, CORRAL_EPARSE, "the envelope names no apiVersion and kind");
    corral__pb_list_t l;
    const corral_schema_msg_t *m = corral__pb_msg_for(av->s, kind->s, &l);
    if (!m)
        return fail(c, CORRAL_EUNSUPPORTED, "no protobuf message is known for %s, kind=%s", av->s,
                    kind->s);
    *out = new_map(c->a);
    corral_val_set(c->a, *out, "apiVersion", av);
    corral_val_set(c->a, *out, "kind", kind);
    int rc2 = decode_msg(c, m, raw, *out);
    if (!rc2 && m == &l.m && !corral_val_get(*out, "items")) /* as Go writes an empty list */
        corral_val_set(c->a, *out, "items", corral_val_new(c->a, CORRAL_VAL_SEQ));
    return rc2;
}

static void finish_maps(pb_ctx_t *c)
{
    for (size_t i = 0; i < c->nmaps; i++)
        map_finish(c->a, c->maps[i]);
}

int corral_pb_decode(corral_arena_t *a, const void *data, size_t len, corral_val_t **out, char *why,
                     size_t why_len)
{
    pb_ctx_t c = {.a = a, .why = why, .why_len = why_len};
    *out = NULL;
    if (why && why_len)
        why[0] = '\0';
    if (len < 4 || memcmp(data, "k8s\0", 4) != 0)
        return fail(&c, CORRAL_EPARSE, "the body does not start with the magic \"k8s\\x00\"");
    pb_rd_t r = {(const uint8_t *)data + 4, (const uint8_t *)data + len};
    int rc = decode_envelope(&c, r, out);
    finish_maps(&c);
    if (rc)
        *out = NULL;
    return rc;
}

int corral__pb_decode_msg(corral_arena_t *a, const corral_schema_msg_t *m, const void *data,
                          size_t len, corral_val_t **out, char *why, size_t why_len)
{
    pb_ctx_t c = {.a = a, .why = why, .why_len = why_len};
    if (why && why_len)
        why[0] = '\0';
    pb_rd_t r = {(const uint8_t *)data, (const uint8_t *)data + len};
    *out = new_map(a);
    int rc = decode_msg(&c, m, r, *out);
    finish_maps(&c);
    if (rc)
        *out = NULL;
    return rc;
}

int corral_pb_decode_watch_event(corral_arena_t *a, const void *data, size_t len,
                                 corral_val_t **out, char *why, size_t whylen)
{
    pb_ctx_t c = {.a = a, .why = why, .why_len = whylen};
    *out = NULL;
    if (why && whylen)
        why[0] = '\0';
    pb_rd_t r = {(const uint8_t *)data, (const uint8_t *)data + len};
    corral_val_t *type = NULL, *obj = NULL;
    int rc = 0;
    while (!rc && r.p < r.end) {
        uint32_t num = 0;
        int wt = 0;
        pb_rd_t sub = {NULL, NULL};
        if ((rc = rd_key(&c, &r, &num, &wt)))
            break;
        if ((num == 1 || num == 2) && wt == WT_LEN && !(rc = rd_bytes(&c, &r, &sub)))
            rc = num == 1 ? text_val(&c, &sub, &type) : embedded_val(&c, sub, &obj);
        else if (num != 1 && num != 2)
            rc = skip(&c, &r, wt);
        else if (!rc)
            rc = want_wt(&c, wt, WT_LEN);
    }
    finish_maps(&c);
    if (!rc && (!type || !type->len))
        rc = fail(&c, CORRAL_EPARSE, "the watch event has no type");
    if (!rc && (!obj || obj->kind != CORRAL_VAL_MAP))
        rc = fail(&c, CORRAL_EPARSE, "the watch event has no object");
    if (rc)
        return rc;
    *out = new_map(a);
    corral_val_set(a, *out, "type", type);
    corral_val_set(a, *out, "object", obj);
    return 0;
}
