/*
 * Shared between the protobuf decoder (pb.c) and encoder (pb_encode.c).
 */
#ifndef CORRAL_MODEL_PB_INT_H
#define CORRAL_MODEL_PB_INT_H

#include <stdarg.h>

#include "corral/pb.h"

enum { CORRAL__PB_WT_VARINT = 0, CORRAL__PB_WT_I64 = 1, CORRAL__PB_WT_LEN = 2 };

/* A List kind's message (metadata=1 ListMeta, items=2 the item kind), made
 * around the item's message by corral__pb_msg_for. */
typedef struct corral__pb_list {
    corral_schema_field_t f[2];
    corral_schema_msg_t m;
} corral__pb_list_t;

/* The message of apiVersion/kind with a protobuf form (the k8s.io kinds of
 * the schema tables, their List kinds, Status), or NULL; a List kind's is
 * built in *l, which must outlive its use. */
const corral_schema_msg_t *corral__pb_msg_for(const char *av, const char *kind,
                                              corral__pb_list_t *l);

/* why = the dotted names path[0..depth) (NULLs skipped), ": ", then fmt. */
void corral__pb_why(char *why, size_t whylen, const char *const *path, int depth, const char *fmt,
                    va_list ap) CORRAL_PRINTF(5, 0);

#endif
