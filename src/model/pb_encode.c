/*
 * Protobuf encoding of value trees (include/corral/pb.h): what
 * kube-apiserver's protobuf serializer writes for the object the tree is the
 * JSON of. As the generated Go marshalers do: fields in the order of their
 * numbers; a non-pointer scalar (CORRAL_SCHEMA_OMITZERO: Go's omitempty
 * dropped it from the JSON) written even when zero, so an absent one is
 * written as its zero; other fields written when present (a pointer set, a
 * list's items one by one, unpacked); maps as entries sorted by key with
 * key and value always written; Time as {seconds, nanos=0} (Go drops the
 * nanoseconds), MicroTime with microseconds, Go's zero time and null as
 * an empty message; Duration {duration}; Quantity {string}; IntOrString
 * {type, intVal, strVal} all three; RawExtension and FieldsV1 {raw} with
 * the value's compact JSON. The envelope: "k8s\0", runtime.Unknown with
 * typeMeta, raw, and contentEncoding and contentType empty.
 *
 * A message is written in place after a one-byte length that is widened
 * once its size is known, so no nested copy is made for small messages.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corral/base64.h"
#include "corral/common.h"
#include "corral/timefmt.h"
#include "model/pb_int.h"

typedef struct enc {
    corral_buf_t *out;
    const char *path[CORRAL_PB_MAX_DEPTH + 1];
    int depth;
    char *why;
    size_t whylen;
} enc_t;

static int efail(enc_t *e, const char *fmt, ...) CORRAL_PRINTF(2, 3);

static int efail(enc_t *e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    corral__pb_why(e->why, e->whylen, e->path, e->depth, fmt, ap);
    va_end(ap);
    return CORRAL_EINVAL;
}

/* --- the wire ------------------------------------------------------------------------ */

static void put_varint(corral_buf_t *b, uint64_t v)
{
    uint8_t tmp[10];
    size_t n = 0;
    while (v >= 0x80) {
        tmp[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    tmp[n++] = (uint8_t)v;
    corral_buf_append(b, tmp, n);
}

static void put_key(corral_buf_t *b, uint32_t num, int wt)
{
    put_varint(b, ((uint64_t)num << 3) | (uint64_t)wt);
}

static void put_bytes(corral_buf_t *b, uint32_t num, const void *p, size_t n)
{
    put_key(b, num, CORRAL__PB_WT_LEN);
    put_varint(b, n);
    corral_buf_append(b, p, n);
}

static void put_int(corral_buf_t *b, uint32_t num, uint64_t v)
{
    put_key(b, num, CORRAL__PB_WT_VARINT);
    put_varint(b, v);
}

/* Open a length-delimited field: returns where its body starts. */
static size_t open_len(corral_buf_t *b, uint32_t num)
{
    put_key(b, num, CORRAL__PB_WT_LEN);
    corral_buf_append(b, "", 1); /* the length: one byte until known */
    return b->len;
}

/* Close it: write the body's length before it, widening the one byte. */
static void close_len(corral_buf_t *b, size_t start)
{
    size_t n = b->len - start;
    if (n < 0x80) {
        b->p[start - 1] = (char)n;
        return;
    }
    uint8_t tmp[10];
    size_t k = 0;
    for (uint64_t v = n; v; v >>= 7)
        tmp[k++] = (uint8_t)((v & 0x7f) | (v >= 0x80 ? 0x80 : 0));
    corral_buf_append(b, tmp, k - 1); /* room for the extra bytes */
    memmove(b->p + start - 1 + k, b->p + start, n);
    memcpy(b->p + start - 1, tmp, k);
    b->p[b->len] = '\0';
}

/* --- values -------------------------------------------------------------------------- */

static int enc_msg(enc_t *e, const corral_schema_msg_t *m, const corral_val_t *obj);

static const char *kind_name(const corral_val_t *v)
{
    return corral_val_kind_name(v->kind);
}

static int enc_time(enc_t *e, uint32_t num, bool micro, const corral_val_t *v)
{
    size_t start = open_len(e->out, num);
    if (v && v->kind == CORRAL_VAL_STR) {
        int64_t us = 0;
        if (corral_time_parse(v->s, v->len, &us) != 0)
            return efail(e, "\"%.64s\" is not an RFC 3339 time", v->s);
        int64_t secs = us / 1000000, frac = us % 1000000;
        if (frac < 0) {
            secs--;
            frac += 1000000;
        }
        if (secs != -62135596800LL || frac) { /* not Go's zero time */
            put_int(e->out, 1, (uint64_t)secs);
            put_int(e->out, 2, micro ? (uint64_t)(frac * 1000) : 0);
        }
    } else if (v && v->kind != CORRAL_VAL_NULL) {
        return efail(e, "expected a time string, got a %s", kind_name(v));
    }
    close_len(e->out, start);
    return 0;
}

/* Quantity {string=1}: the text as written (a number's too). */
static int enc_quantity(enc_t *e, uint32_t num, const corral_val_t *v)
{
    if (v->kind != CORRAL_VAL_STR && v->kind != CORRAL_VAL_INT && v->kind != CORRAL_VAL_FLOAT)
        return efail(e, "expected a quantity, got a %s", kind_name(v));
    size_t start = open_len(e->out, num);
    put_bytes(e->out, 1, v->s ? v->s : "", v->len);
    close_len(e->out, start);
    return 0;
}

static int enc_intorstring(enc_t *e, uint32_t num, const corral_val_t *v)
{
    if (v->kind != CORRAL_VAL_STR && v->kind != CORRAL_VAL_INT)
        return efail(e, "expected an integer or a string, got a %s", kind_name(v));
    size_t start = open_len(e->out, num);
    bool str = v->kind == CORRAL_VAL_STR;
    put_int(e->out, 1, str ? 1 : 0);
    put_int(e->out, 2, str ? 0 : (uint64_t)(int64_t)(int32_t)v->u.i);
    put_bytes(e->out, 3, str ? v->s : "", str ? v->len : 0);
    close_len(e->out, start);
    return 0;
}

/* RawExtension / FieldsV1 {raw=1}: the value's compact JSON; null: none. */
static int enc_raw(enc_t *e, uint32_t num, const corral_val_t *v)
{
    size_t start = open_len(e->out, num);
    if (v->kind != CORRAL_VAL_NULL) {
        corral_buf_t j;
        corral_buf_init(&j);
        corral_val_to_json(v, &j, false);
        put_bytes(e->out, 1, j.p ? j.p : "", j.len);
        corral_buf_fini(&j);
    }
    close_len(e->out, start);
    return 0;
}

static int enc_scalar(enc_t *e, const corral_schema_field_t *f, const corral_val_t *v)
{
    switch (f->type) {
    case CORRAL_SCHEMA_BOOL:
        if (v->kind != CORRAL_VAL_BOOL)
            return efail(e, "expected a boolean, got a %s", kind_name(v));
        put_int(e->out, f->num, v->u.b ? 1 : 0);
        return 0;
    case CORRAL_SCHEMA_INT32:
    case CORRAL_SCHEMA_INT64:
        if (v->kind != CORRAL_VAL_INT)
            return efail(e, "expected an integer, got a %s", kind_name(v));
        put_int(e->out, f->num,
                f->type == CORRAL_SCHEMA_INT32 ? (uint64_t)(int64_t)(int32_t)v->u.i
                                               : (uint64_t)v->u.i);
        return 0;
    case CORRAL_SCHEMA_DOUBLE: {
        if (v->kind != CORRAL_VAL_INT && v->kind != CORRAL_VAL_FLOAT)
            return efail(e, "expected a number, got a %s", kind_name(v));
        double d = v->kind == CORRAL_VAL_INT ? (double)v->u.i : v->u.f;
        uint64_t bits;
        uint8_t le[8];
        memcpy(&bits, &d, sizeof(bits));
        for (int i = 0; i < 8; i++)
            le[i] = (uint8_t)(bits >> (8 * i));
        put_key(e->out, f->num, CORRAL__PB_WT_I64);
        corral_buf_append(e->out, le, 8);
        return 0;
    }
    case CORRAL_SCHEMA_STRING:
        if (v->kind != CORRAL_VAL_STR)
            return efail(e, "expected a string, got a %s", kind_name(v));
        put_bytes(e->out, f->num, v->s, v->len);
        return 0;
    case CORRAL_SCHEMA_BYTES: {
        if (v->kind != CORRAL_VAL_STR)
            return efail(e, "expected base64 bytes, got a %s", kind_name(v));
        corral_buf_t raw;
        corral_buf_init(&raw);
        int rc = corral_base64_decode(v->s, v->len, CORRAL_B64_STD, &raw);
        if (rc == 0)
            put_bytes(e->out, f->num, raw.p ? raw.p : "", raw.len);
        corral_buf_fini(&raw);
        return rc ? efail(e, "the bytes are not base64") : 0;
    }
    default:
        return efail(e, "unsupported field type %d", f->type);
    }
}

/* One value of field f (an item of a list, a map's value, or the field). */
static int enc_value(enc_t *e, const corral_schema_field_t *f, const corral_val_t *v)
{
    switch (f->type) {
    case CORRAL_SCHEMA_MSG: {
        if (v->kind != CORRAL_VAL_MAP && v->kind != CORRAL_VAL_NULL)
            return efail(e, "expected an object, got a %s", kind_name(v));
        size_t start = open_len(e->out, f->num);
        const corral_schema_msg_t *m = corral_schema_resolve(f->msg);
        int rc = m && v->kind == CORRAL_VAL_MAP ? enc_msg(e, m, v) : 0;
        close_len(e->out, start);
        return rc;
    }
    case CORRAL_SCHEMA_TIME:
    case CORRAL_SCHEMA_MICROTIME:
        return enc_time(e, f->num, f->type == CORRAL_SCHEMA_MICROTIME, v);
    case CORRAL_SCHEMA_DURATION: {
        int64_t ns = 0;
        if (v->kind != CORRAL_VAL_STR || corral_duration_parse(v->s, v->len, &ns) != 0)
            return efail(e, "expected a duration such as \"1m30s\"");
        size_t start = open_len(e->out, f->num);
        put_int(e->out, 1, (uint64_t)ns);
        close_len(e->out, start);
        return 0;
    }
    case CORRAL_SCHEMA_QUANTITY:
        return enc_quantity(e, f->num, v);
    case CORRAL_SCHEMA_INTORSTRING:
        return enc_intorstring(e, f->num, v);
    case CORRAL_SCHEMA_RAW:
    case CORRAL_SCHEMA_JSON: /* apiextensions' JSON: raw bytes = 1, as RawExtension */
    case CORRAL_SCHEMA_FIELDSV1:
        return enc_raw(e, f->num, v);
    default:
        return enc_scalar(e, f, v);
    }
}

typedef struct pair_ref {
    const corral_val_pair_t *p;
} pair_ref_t;

static int cmp_keys(const void *x, const void *y)
{
    const corral_val_pair_t *a = ((const pair_ref_t *)x)->p;
    const corral_val_pair_t *b = ((const pair_ref_t *)y)->p;
    size_t n = a->key->len < b->key->len ? a->key->len : b->key->len;
    int d = memcmp(a->key->s, b->key->s, n);
    return d ? d : (a->key->len > b->key->len) - (a->key->len < b->key->len);
}

/* A map field: one entry {key=1, value=2} per pair, sorted by key. */
static int enc_map(enc_t *e, const corral_schema_field_t *f, const corral_val_t *v)
{
    if (v->kind != CORRAL_VAL_MAP)
        return efail(e, "expected an object, got a %s", kind_name(v));
    pair_ref_t *order = malloc((v->n ? v->n : 1) * sizeof(*order));
    if (!order)
        return efail(e, "out of memory");
    for (size_t i = 0; i < v->n; i++)
        order[i].p = &v->pairs[i];
    qsort(order, v->n, sizeof(*order), cmp_keys);
    corral_schema_field_t vf = *f;
    vf.num = 2;
    vf.flags = 0;
    int rc = 0;
    for (size_t i = 0; !rc && i < v->n; i++) {
        const corral_val_t *val = order[i].p->val;
        size_t start = open_len(e->out, f->num);
        put_bytes(e->out, 1, order[i].p->key->s, order[i].p->key->len);
        if (f->flags & CORRAL_SCHEMA_REPEATED) { /* a named list: {items=1} */
            if (val->kind != CORRAL_VAL_SEQ && val->kind != CORRAL_VAL_NULL) {
                rc = efail(e, "expected a list, got a %s", kind_name(val));
                break;
            }
            size_t s2 = open_len(e->out, 2);
            vf.num = 1;
            for (size_t j = 0; !rc && val->kind == CORRAL_VAL_SEQ && j < val->n; j++)
                rc = enc_value(e, &vf, val->items[j]);
            vf.num = 2;
            close_len(e->out, s2);
        } else if (val->kind == CORRAL_VAL_NULL && vf.type != CORRAL_SCHEMA_MSG &&
                   vf.type != CORRAL_SCHEMA_RAW && vf.type != CORRAL_SCHEMA_JSON &&
                   vf.type != CORRAL_SCHEMA_FIELDSV1) {
            put_bytes(e->out, 2, "", 0); /* Go reads null as the zero value */
        } else {
            rc = enc_value(e, &vf, val);
        }
        close_len(e->out, start);
    }
    free(order);
    return rc;
}

/* The zero value of a non-pointer scalar that the JSON left out. */
static void enc_zero(enc_t *e, const corral_schema_field_t *f)
{
    if (f->type == CORRAL_SCHEMA_STRING || f->type == CORRAL_SCHEMA_BYTES)
        put_bytes(e->out, f->num, "", 0);
    else if (f->type == CORRAL_SCHEMA_DOUBLE)
        put_key(e->out, f->num, CORRAL__PB_WT_I64), corral_buf_append(e->out, "\0\0\0\0\0\0\0", 8);
    else
        put_int(e->out, f->num, 0);
}

static int enc_field(enc_t *e, const corral_schema_field_t *f, const corral_val_t *obj)
{
    if (f->flags & CORRAL_SCHEMA_INLINE) { /* the parent's JSON holds its fields */
        const corral_schema_msg_t *m = corral_schema_resolve(f->msg);
        size_t start = open_len(e->out, f->num);
        int rc = m ? enc_msg(e, m, obj) : 0;
        close_len(e->out, start);
        return rc;
    }
    const corral_val_t *v = corral_val_get(obj, f->name);
    bool absent = !v || (v->kind == CORRAL_VAL_NULL && f->type != CORRAL_SCHEMA_TIME &&
                         f->type != CORRAL_SCHEMA_MICROTIME && f->type != CORRAL_SCHEMA_RAW &&
                         f->type != CORRAL_SCHEMA_JSON);
    if (absent) {
        if ((f->flags & CORRAL_SCHEMA_OMITZERO) &&
            !(f->flags & (CORRAL_SCHEMA_REPEATED | CORRAL_SCHEMA_MAP)))
            enc_zero(e, f);
        return 0;
    }
    if (f->flags & CORRAL_SCHEMA_MAP)
        return enc_map(e, f, v);
    if (f->flags & CORRAL_SCHEMA_REPEATED) {
        if (v->kind != CORRAL_VAL_SEQ)
            return efail(e, "expected a list, got a %s", kind_name(v));
        int rc = 0;
        for (size_t i = 0; !rc && i < v->n; i++)
            rc = enc_value(e, f, v->items[i]);
        return rc;
    }
    return enc_value(e, f, v);
}

/* The fields of m from the JSON object obj, in the order of their numbers. */
static int enc_msg(enc_t *e, const corral_schema_msg_t *m, const corral_val_t *obj)
{
    if (e->depth >= CORRAL_PB_MAX_DEPTH)
        return efail(e, "nested deeper than %d messages", CORRAL_PB_MAX_DEPTH);
    /* The tables list fields as the .proto does, nearly always by number. */
    uint16_t stack_order[64];
    uint16_t *order = m->nfields <= 64 ? stack_order : malloc(m->nfields * sizeof(*order));
    if (!order)
        return efail(e, "out of memory");
    for (size_t i = 0; i < m->nfields; i++) {
        size_t j = i;
        while (j > 0 && m->fields[order[j - 1]].num > m->fields[i].num) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = (uint16_t)i;
    }
    int level = e->depth++;
    int rc = 0;
    for (size_t i = 0; !rc && i < m->nfields; i++) {
        const corral_schema_field_t *f = &m->fields[order[i]];
        if (!f->num || f->type == CORRAL_SCHEMA_ANY)
            continue;
        e->path[level] = f->name;
        rc = enc_field(e, f, obj);
    }
    if (order != stack_order)
        free(order);
    if (!rc)
        e->depth = level;
    return rc;
}

/* --- entry points -------------------------------------------------------------------- */

static int enc_object(enc_t *e, const corral_val_t *obj)
{
    const char *av =
        obj && obj->kind == CORRAL_VAL_MAP ? corral_val_get_str(obj, "apiVersion") : NULL;
    const char *kind = av ? corral_val_get_str(obj, "kind") : NULL;
    corral__pb_list_t l;
    const corral_schema_msg_t *m = corral__pb_msg_for(av, kind, &l);
    if (!m || !av || !kind) {
        if (e->why && e->whylen)
            snprintf(e->why, e->whylen, "%s%s%s has no protobuf form", av ? av : "(no apiVersion)",
                     kind ? ", kind=" : "", kind ? kind : "");
        return CORRAL_EUNSUPPORTED;
    }
    size_t mark = e->out->len;
    corral_buf_append(e->out, "k8s\0", 4);
    size_t tm = open_len(e->out, 1);
    put_bytes(e->out, 1, av, strlen(av));
    put_bytes(e->out, 2, kind, strlen(kind));
    close_len(e->out, tm);
    size_t raw = open_len(e->out, 2);
    int rc = enc_msg(e, m, obj);
    close_len(e->out, raw);
    put_bytes(e->out, 3, "", 0);
    put_bytes(e->out, 4, "", 0);
    if (rc) {
        e->out->len = mark;
        if (e->out->p)
            e->out->p[mark] = '\0';
    }
    return rc;
}

int corral_pb_encode(const corral_val_t *obj, corral_buf_t *out, char *why, size_t whylen)
{
    enc_t e = {.out = out, .why = why, .whylen = whylen};
    if (why && whylen)
        why[0] = '\0';
    return enc_object(&e, obj);
}

int corral_pb_encode_watch_event(const char *type, const corral_val_t *obj, corral_buf_t *out,
                                 char *why, size_t whylen)
{
    enc_t e = {.out = out, .why = why, .whylen = whylen};
    if (why && whylen)
        why[0] = '\0';
    size_t mark = out->len;
    put_bytes(out, 1, type, strlen(type));
    size_t ext = open_len(out, 2);
    size_t raw = open_len(out, 1);
    int rc = enc_object(&e, obj);
    close_len(out, raw);
    close_len(out, ext);
    if (rc) {
        out->len = mark;
        if (out->p)
            out->p[mark] = '\0';
    }
    return rc;
}
