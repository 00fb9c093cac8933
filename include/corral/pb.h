/*
 * Kubernetes protobuf (application/vnd.kubernetes.protobuf), driven by the
 * field tables of include/corral/schema.h: an object is the 4-byte magic
 * "k8s\0", then a runtime.Unknown {typeMeta{apiVersion=1, kind=2}=1, raw=2,
 * contentEncoding=3, contentType=4} whose raw bytes are the message of
 * typeMeta's kind. Decoding gives the value tree the JSON form of the same
 * object gives; encoding is its inverse and writes what kube-apiserver's
 * protobuf serializer writes for that tree.
 *
 * The List kinds (PodList, ...: metadata ListMeta=1, items=2), meta.k8s.io/v1
 * Status and WatchEvent are known here beside the kinds of the schema tables.
 * CRD kinds (Volcano, KServe, corral.dev) and Tables have no protobuf form.
 * Pure functions: no I/O, no global state.
 */
#ifndef CORRAL_PB_H
#define CORRAL_PB_H

#include <stdbool.h>
#include <stddef.h>

#include "corral/arena.h"
#include "corral/buf.h"
#include "corral/schema.h"
#include "corral/val.h"

#define CORRAL_PB_MEDIA "application/vnd.kubernetes.protobuf"

#define CORRAL_PB_MAX_DEPTH 64                /* nested messages */
#define CORRAL_PB_MAX_ITEMS ((size_t)1 << 20) /* values made from one input */

/* "k8s\0" + runtime.Unknown -> the value tree the object's JSON gives, in
 * arena a, apiVersion and kind from the envelope's typeMeta. Returns 0, or
 * CORRAL_EPARSE / CORRAL_ETOOBIG / CORRAL_EUNSUPPORTED (no message known for
 * the kind, a contentEncoding) with a message in why; *out is NULL then. */
int corral_pb_decode(corral_arena_t *a, const void *data, size_t len, corral_val_t **out, char *why,
                     size_t whylen);
/* One watch frame's payload (a metav1.WatchEvent, no length prefix, no magic)
 * -> {"type": ..., "object": {...}}. */
int corral_pb_decode_watch_event(corral_arena_t *a, const void *data, size_t len,
                                 corral_val_t **out, char *why, size_t whylen);
/* The inverse, appended to out; CORRAL_EUNSUPPORTED when apiVersion/kind has
 * no protobuf message (CRD kinds: Volcano, KServe, corral.dev), CORRAL_EINVAL
 * when a field's value cannot be written as its type (why says which). */
int corral_pb_encode(const corral_val_t *obj, corral_buf_t *out, char *why, size_t whylen);
int corral_pb_encode_watch_event(const char *type, const corral_val_t *obj, corral_buf_t *out,
                                 char *why, size_t whylen);
/* Whether apiVersion/kind has a protobuf message (List kinds and Status too). */
bool corral_pb_has_kind(const char *api_version, const char *kind);

/* For tests and fuzz targets: one message of schema m, without the envelope. */
int corral__pb_decode_msg(corral_arena_t *a, const corral_schema_msg_t *m, const void *data,
                          size_t len, corral_val_t **out, char *why, size_t why_len);

#endif
