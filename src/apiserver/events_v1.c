/*
 * events.k8s.io/v1 Event: the same stored objects as core v1 Events, in
 * another shape, as kube-apiserver serves them (its storage keeps core
 * Events and converts on the way in and out). This file is that
 * conversion, field by field, plus what upstream checks only on creates
 * through events.k8s.io/v1 (ValidateEventCreate), and the field labels that
 * API version accepts (its field label conversion).
 */
#include <stdio.h>
#include <string.h>

#include "apiserver/apiserver_int.h"

/* Top-level fields that differ: {served, stored}. reason, type, action,
 * eventTime, series, related, reportingInstance keep their names. */
static const char *const renames[][2] = {
    {"regarding", "involvedObject"},
    {"note", "message"},
    {"deprecatedSource", "source"},
    {"deprecatedFirstTimestamp", "firstTimestamp"},
    {"deprecatedLastTimestamp", "lastTimestamp"},
    {"deprecatedCount", "count"},
    {"reportingController", "reportingComponent"},
};

/* Rename obj's top-level keys from column `from` to column `to`, keeping
 * their order. A key already spelled as the target shape is unknown to the
 * source shape (a core "message" sent to events.k8s.io/v1): it is dropped,
 * as upstream's decoder drops unknown fields, so it cannot shadow the
 * converted one. */
static void convert(corral_arena_t *a, corral_val_t *obj, int from, int to, const char *api_version)
{
    if (!obj || obj->kind != CORRAL_VAL_MAP)
        return;
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(renames); i++)
        corral_val_del(obj, renames[i][to]);
    for (size_t p = 0; p < obj->n; p++) {
        const char *k = obj->pairs[p].key->s;
        for (size_t i = 0; i < CORRAL_ARRAY_LEN(renames); i++) {
            if (strcmp(k, renames[i][from]) == 0) {
                obj->pairs[p].key = corral_val_new_str(a, renames[i][to]);
                break;
            }
        }
    }
    corral_val_index(a, obj); /* keys renamed in place */
    corral_val_set(a, obj, "apiVersion", corral_val_new_str(a, api_version));
}

static void to_stored(corral_arena_t *a, corral_val_t *obj)
{
    convert(a, obj, 0, 1, "v1");
}

static void to_served(corral_arena_t *a, corral_val_t *obj)
{
    convert(a, obj, 1, 0, "events.k8s.io/v1");
    /* managedFields name the stored shape's fields: not served here. */
    corral_val_del(corral_val_get(obj, "metadata"), "managedFields");
}

/* Upstream's field label conversion for events.k8s.io/v1 (anything else is
 * "field label not supported"). */
static const char *field_label(const char *served)
{
    static const char *const same[] = {"metadata.name", "metadata.namespace", "reason", "type",
                                       "source"};
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(same); i++) {
        if (strcmp(served, same[i]) == 0)
            return same[i];
    }
    if (strcmp(served, "reportingController") == 0)
        return "reportingComponent";
    static const char *const regarding[][2] = {
        {"regarding.kind", "involvedObject.kind"},
        {"regarding.namespace", "involvedObject.namespace"},
        {"regarding.name", "involvedObject.name"},
        {"regarding.uid", "involvedObject.uid"},
        {"regarding.apiVersion", "involvedObject.apiVersion"},
        {"regarding.resourceVersion", "involvedObject.resourceVersion"},
        {"regarding.fieldPath", "involvedObject.fieldPath"},
    };
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(regarding); i++) {
        if (strcmp(served, regarding[i][0]) == 0)
            return regarding[i][1];
    }
    return NULL;
}

/* A stored field path ("involvedObject.name") as the served shape spells
 * it ("regarding.name"), for the causes of a 422. */
static const char *field_path(const char *stored, char *buf, size_t len)
{
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(renames); i++) {
        size_t n = strlen(renames[i][1]);
        if (strncmp(stored, renames[i][1], n) == 0 &&
            (stored[n] == '\0' || stored[n] == '.' || stored[n] == '[')) {
            snprintf(buf, len, "%s%s", renames[i][0], stored + n);
            return buf;
        }
    }
    return stored;
}

/* --- ValidateEventCreate for events.k8s.io/v1 --------------------------------------------- */

#define LIMIT_REPORTING_INSTANCE 128
#define LIMIT_ACTION             128
#define LIMIT_REASON             128
#define LIMIT_NOTE               1024

static const char *str_of(const corral_val_t *obj, const char *key)
{
    const corral_val_t *v = corral_val_get(obj, key);
    return v && v->kind != CORRAL_VAL_NULL && v->kind != CORRAL_VAL_MAP &&
                   v->kind != CORRAL_VAL_SEQ && v->s
               ? v->s
               : "";
}

static void err(corral_diag_t *d, const char *path, const char *msg)
{
    corral_diag_add(d, CORRAL_SEV_ERROR, NULL, 0, 0, path, "%s", msg);
}

static void required(corral_diag_t *d, const corral_val_t *obj, const char *key, size_t limit)
{
    size_t n = strlen(str_of(obj, key));
    if (n == 0)
        err(d, key, "Required value");
    else if (limit && n > limit)
        corral_diag_add(d, CORRAL_SEV_ERROR, NULL, 0, 0, key,
                        "Invalid value: \"\": can have at most %zu characters", limit);
}

/* legacyValidateEvent: namespaces must agree, and an event with an
 * eventTime (a "new" event) must say who reported what. */
static void check_legacy(const corral_val_t *obj, const char *ns, bool has_time, corral_diag_t *d)
{
    const char *rns = str_of(corral_val_get(obj, "regarding"), "namespace");
    bool ok = has_time ? *rns || !strcmp(ns, "default") || !strcmp(ns, "kube-system")
              : *rns   ? strcmp(rns, ns) == 0
                       : !strcmp(ns, "default");
    if (!ok)
        corral_diag_add(d, CORRAL_SEV_ERROR, NULL, 0, 0, "regarding.namespace",
                        "Invalid value: \"%s\": does not match event.namespace", rns);
    if (!has_time)
        return;
    required(d, obj, "reportingController", 0);
    required(d, obj, "reportingInstance", LIMIT_REPORTING_INSTANCE);
    required(d, obj, "action", LIMIT_ACTION);
    required(d, obj, "reason", LIMIT_REASON);
    if (strlen(str_of(obj, "note")) > LIMIT_NOTE)
        corral_diag_add(d, CORRAL_SEV_ERROR, NULL, 0, 0, "note",
                        "Invalid value: \"\": can have at most %d characters", LIMIT_NOTE);
}

static void check_create(const corral_val_t *obj, const char *ns, corral_diag_t *d)
{
    bool has_time = *str_of(obj, "eventTime") != '\0';
    check_legacy(obj, ns, has_time, d);
    const corral_val_t *series = corral_val_get(obj, "series");
    if (series && series->kind == CORRAL_VAL_MAP) {
        const corral_val_t *c = corral_val_get(series, "count");
        if (!c || c->kind != CORRAL_VAL_INT || c->u.i < 2)
            err(d, "series.count", "Invalid value: \"\": should be at least 2");
        if (!*str_of(series, "lastObservedTime"))
            err(d, "series.lastObservedTime", "Required value");
    }
    if (!has_time)
        err(d, "eventTime", "Required value");
    const char *type = str_of(obj, "type");
    if (strcmp(type, "Normal") != 0 && strcmp(type, "Warning") != 0)
        corral_diag_add(d, CORRAL_SEV_ERROR, NULL, 0, 0, "type",
                        "Invalid value: \"\": has invalid value: %s", type);
    /* The deprecated fields belong to core v1 writers only. */
    static const char *const unset[] = {"deprecatedFirstTimestamp", "deprecatedLastTimestamp"};
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(unset); i++) {
        if (*str_of(obj, unset[i]))
            err(d, unset[i], "Invalid value: \"\": needs to be unset");
    }
    const corral_val_t *count = corral_val_get(obj, "deprecatedCount");
    if (count && count->kind == CORRAL_VAL_INT && count->u.i != 0)
        err(d, "deprecatedCount", "Invalid value: \"\": needs to be unset");
    const corral_val_t *src = corral_val_get(obj, "deprecatedSource");
    if (*str_of(src, "component") || *str_of(src, "host"))
        err(d, "deprecatedSource", "Invalid value: \"\": needs to be unset");
}

const corral__view_t corral__events_v1_view = {
    .to_stored = to_stored,
    .to_served = to_served,
    .field_label = field_label,
    .field_path = field_path,
    .check_create = check_create,
};
