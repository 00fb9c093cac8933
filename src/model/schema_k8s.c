/*
 * Field schema table: placeholder until the table lands (see schema_int.h).
 */
#include "model/schema_int.h"

const corral_schema_msg_t *const *corral__schema_k8s_msgs(size_t *n)
{
    *n = 0;
    return NULL;
}

const corral__schema_top_t *corral__schema_k8s_tops(size_t *n)
{
    *n = 0;
    return NULL;
}
