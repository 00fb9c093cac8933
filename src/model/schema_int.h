/*
 * Internals of the field schemas (include/corral/schema.h): the tables are
 * split by origin, each file exporting its messages and its top-level kinds
 * through one function; schema.c does the lookups over all of them.
 *   schema_k8s.c  k8s.io/api and apimachinery messages (protobuf numbers
 *                 from the upstream .proto definitions)
 *   schema_crd.c  Volcano, KServe and corral.dev kinds (no protobuf form)
 */
#ifndef CORRAL_MODEL_SCHEMA_INT_H
#define CORRAL_MODEL_SCHEMA_INT_H

#include "corral/schema.h"

/* A top-level kind of a table: what apiVersion/kind name in a body. */
typedef struct corral__schema_top {
    const char *api_version; /* "v1", "apps/v1", "batch.volcano.sh/v1alpha1" */
    const char *kind;        /* "Pod" */
    const corral_schema_msg_t *msg;
} corral__schema_top_t;

/* Every message of a table (n set), and its top-level kinds (n set). */
const corral_schema_msg_t *const *corral__schema_k8s_msgs(size_t *n);
const corral__schema_top_t *corral__schema_k8s_tops(size_t *n);
const corral_schema_msg_t *const *corral__schema_crd_msgs(size_t *n);
const corral__schema_top_t *corral__schema_crd_tops(size_t *n);

#endif
