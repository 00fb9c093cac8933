/*
 * Lookups over the field schema tables (schema_k8s.c, schema_crd.c). The
 * tables are small (a few hundred messages) and looked up once per request
 * body or document, so plain scans do; a decoder follows field.msg pointers
 * from the top-level message and never searches by name.
 */
#include <string.h>

#include "model/schema_int.h"

typedef const corral_schema_msg_t *const *(*msgs_fn)(size_t *n);
typedef const corral__schema_top_t *(*tops_fn)(size_t *n);

static const msgs_fn all_msgs[] = {corral__schema_k8s_msgs, corral__schema_crd_msgs};
static const tops_fn all_tops[] = {corral__schema_k8s_tops, corral__schema_crd_tops};

const corral_schema_msg_t *corral_schema_for(const char *api_version, const char *kind)
{
    if (!api_version || !kind)
        return NULL;
    for (size_t t = 0; t < CORRAL_ARRAY_LEN(all_tops); t++) {
        size_t n = 0;
        const corral__schema_top_t *tops = all_tops[t](&n);
        for (size_t i = 0; i < n; i++) {
            if (strcmp(tops[i].api_version, api_version) == 0 && strcmp(tops[i].kind, kind) == 0)
                return tops[i].msg;
        }
    }
    return NULL;
}

const corral_schema_msg_t *corral_schema_of_kind(corral_kind_t k)
{
    const corral_kind_info_t *info = corral_kind_get(k);
    return info ? corral_schema_for(info->api_version, info->name) : NULL;
}

const corral_schema_msg_t *corral_schema_find(const char *name)
{
    for (size_t t = 0; name && t < CORRAL_ARRAY_LEN(all_msgs); t++) {
        size_t n = 0;
        const corral_schema_msg_t *const *msgs = all_msgs[t](&n);
        for (size_t i = 0; i < n; i++) {
            if (strcmp(msgs[i]->name, name) == 0)
                return msgs[i];
        }
    }
    return NULL;
}

const corral_schema_msg_t *corral_schema_resolve(const corral_schema_msg_t *m)
{
    if (!m || m->fields || m->nfields)
        return m;
    return corral_schema_find(m->name);
}

const corral_schema_field_t *corral_schema_field(const corral_schema_msg_t *m, const char *name)
{
    for (size_t i = 0; m && name && i < m->nfields; i++) {
        if (strcmp(m->fields[i].name, name) == 0)
            return &m->fields[i];
    }
    return NULL;
}

const corral_schema_field_t *corral_schema_field_num(const corral_schema_msg_t *m, uint32_t num)
{
    for (size_t i = 0; m && num && i < m->nfields; i++) {
        if (m->fields[i].num == num)
            return &m->fields[i];
    }
    return NULL;
}

size_t corral_schema_count(void)
{
    size_t total = 0;
    for (size_t t = 0; t < CORRAL_ARRAY_LEN(all_msgs); t++) {
        size_t n = 0;
        all_msgs[t](&n);
        total += n;
    }
    return total;
}

const corral_schema_msg_t *corral_schema_at(size_t i)
{
    for (size_t t = 0; t < CORRAL_ARRAY_LEN(all_msgs); t++) {
        size_t n = 0;
        const corral_schema_msg_t *const *msgs = all_msgs[t](&n);
        if (i < n)
            return msgs[i];
        i -= n;
    }
    return NULL;
}
