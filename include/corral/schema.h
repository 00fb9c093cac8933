/*
 * Field schemas of the served kinds: for each message (object kind or
 * nested type) its fields with their JSON names, protobuf field numbers and
 * types. One table serves two readers: the API server's protobuf decoder
 * (k8s.io/api messages, field numbers from the upstream .proto definitions)
 * and the OpenAPI documents `kubectl explain` reads (every kind Corral
 * validates, the Volcano and KServe ones included, which have no protobuf
 * form: their fields carry number 0).
 *
 * Messages are named as OpenAPI names their definitions:
 * "io.k8s.api.core.v1.PodSpec", "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
 * "io.k8s.apimachinery.pkg.api.resource.Quantity", "sh.volcano.batch.v1alpha1.Job".
 * The tables are constant data; nothing here allocates.
 */
#ifndef CORRAL_SCHEMA_H
#define CORRAL_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "corral/model.h"

typedef enum corral_schema_type {
    CORRAL_SCHEMA_STRING = 1,
    CORRAL_SCHEMA_BOOL,
    CORRAL_SCHEMA_INT32,
    CORRAL_SCHEMA_INT64,
    CORRAL_SCHEMA_DOUBLE,
    CORRAL_SCHEMA_BYTES,       /* base64 in JSON */
    CORRAL_SCHEMA_MSG,         /* a nested message: field.msg */
    CORRAL_SCHEMA_TIME,        /* meta/v1 Time: RFC 3339 in JSON */
    CORRAL_SCHEMA_MICROTIME,   /* meta/v1 MicroTime: RFC 3339 with microseconds */
    CORRAL_SCHEMA_DURATION,    /* meta/v1 Duration: "1h2m3s" in JSON */
    CORRAL_SCHEMA_QUANTITY,    /* resource.Quantity: a string in JSON */
    CORRAL_SCHEMA_INTORSTRING, /* intstr.IntOrString */
    CORRAL_SCHEMA_RAW,         /* runtime.RawExtension: embedded JSON */
    CORRAL_SCHEMA_FIELDSV1,    /* meta/v1 FieldsV1: embedded JSON */
    CORRAL_SCHEMA_ANY,         /* any JSON value (x-kubernetes-preserve-unknown-fields) */
    /* apiextensions/v1 JSON (a CRD schema's default, enum, example): any JSON
     * value; on the wire embedded JSON bytes, as RAW. */
    CORRAL_SCHEMA_JSON,
} corral_schema_type_t;

/* Field flags. */
#define CORRAL_SCHEMA_REPEATED 0x01u /* a JSON list of type */
#define CORRAL_SCHEMA_MAP      0x02u /* a JSON object of string keys to type (proto map entries) */
#define CORRAL_SCHEMA_OMITZERO                                                                     \
    0x04u /* Go's omitempty on a non-pointer: a zero value is absent in JSON */
#define CORRAL_SCHEMA_REQUIRED 0x08u /* required by validation (OpenAPI "required") */
/* An embedded message (Go's json:",inline"): its fields appear in the
 * parent's JSON object; name is the protobuf field name, not a JSON key. */
#define CORRAL_SCHEMA_INLINE 0x10u
/* MAP and REPEATED together: a JSON object of string keys to lists of type
 * (authentication/v1 "extra"); on the wire each value is a message holding
 * the items as field 1. */

typedef struct corral_schema_msg corral_schema_msg_t;

typedef struct corral_schema_field {
    const char *name;               /* JSON name */
    uint32_t num;                   /* protobuf field number; 0 when there is none */
    uint8_t type;                   /* corral_schema_type_t (of the items/values for lists/maps) */
    uint8_t flags;                  /* CORRAL_SCHEMA_* flags */
    const corral_schema_msg_t *msg; /* type CORRAL_SCHEMA_MSG: the message */
    const char *doc;                /* one-line description, or NULL */
} corral_schema_field_t;

struct corral_schema_msg {
    const char *name; /* OpenAPI definition name */
    const corral_schema_field_t *fields;
    size_t nfields;
    const char *doc; /* one-line description, or NULL */
};

/* The message of a top-level kind given as apiVersion and kind ("v1",
 * "Pod"; "authorization.k8s.io/v1", "SelfSubjectAccessReview"), including
 * kinds that are only request bodies (DeleteOptions, Eviction, Binding,
 * Scale, TokenRequest, the reviews). NULL when unknown. */
const corral_schema_msg_t *corral_schema_for(const char *api_version, const char *kind);

/* The message of a kind of the model registry; NULL when it has none. */
const corral_schema_msg_t *corral_schema_of_kind(corral_kind_t k);

/* A message by definition name; NULL when unknown. */
const corral_schema_msg_t *corral_schema_find(const char *name);

/* m resolved across tables. A table names another table's message by a
 * reference: a message with fields NULL and nfields 0 whose name is the
 * definition it stands for (schema_crd.c's containers are the k8s table's
 * io.k8s.api.core.v1.Container); the reference resolves to the message of that
 * name in any table, or NULL when no table has it (the
 * reader then treats the value as an object of any fields). A message with
 * fields resolves to itself; so does an empty message listed in a table. */
const corral_schema_msg_t *corral_schema_resolve(const corral_schema_msg_t *m);

/* A field of m by JSON name / by protobuf number; NULL when absent. */
const corral_schema_field_t *corral_schema_field(const corral_schema_msg_t *m, const char *name);
const corral_schema_field_t *corral_schema_field_num(const corral_schema_msg_t *m, uint32_t num);

/* Every message (for the OpenAPI documents), in a stable order: i from 0
 * to corral_schema_count() - 1. */
size_t corral_schema_count(void);
const corral_schema_msg_t *corral_schema_at(size_t i);

#endif
