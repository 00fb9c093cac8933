/* Helpers for the engine's unit tests: an engine with an arena and a
 * diagnostics sink, fed from YAML documents. Header-only, like
 * tests/model/model_test.h. */
#ifndef CORRAL_TESTS_ENGINE_TEST_H
#define CORRAL_TESTS_ENGINE_TEST_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "corral/engine.h"
#include "corral/yaml.h"

typedef struct et {
    corral_arena_t a;
    corral_diag_t d;
    corral_engine_t *e;
} et_t;

static inline void et_init(et_t *t)
{
    corral_arena_init(&t->a);
    corral_diag_init(&t->d);
    cr_assert_eq(corral_engine_new(NULL, &t->e), 0);
}

static inline void et_fini(et_t *t)
{
    corral_engine_free(t->e);
    corral_diag_fini(&t->d);
    corral_arena_fini(&t->a);
}

/* Decode every document of yaml and upsert it. */
static inline void apply(et_t *t, const char *yaml)
{
    corral_doc_t *docs;
    size_t n;
    cr_assert_eq(corral_yaml_parse(&t->a, yaml, strlen(yaml), "t", NULL, &t->d, &docs, &n), 0);
    for (size_t i = 0; i < n; i++) {
        corral_obj_t *o;
        cr_assert_eq(corral_obj_decode(&t->a, docs[i].root, "t", &t->d, &o), 0);
        cr_assert_eq(corral_engine_upsert(t->e, o, 0, &t->d), 0);
    }
}

/* The view of pod default/name, which must exist. */
static inline corral_pod_view_t et_view(et_t *t, const char *name)
{
    corral_pod_view_t v;
    cr_assert_eq(corral_engine_pod(t->e, "default", name, &v), 0, "%s: no such pod", name);
    return v;
}

/* Run one cycle; pod default/name must then be bound: its node, copied to out. */
static inline const char *et_cycle_node(et_t *t, const char *name, char *out, size_t len)
{
    const corral_decisions_t *d;
    cr_assert_eq(corral_engine_cycle(t->e, 0, &d), 0);
    corral_pod_view_t v = et_view(t, name);
    cr_assert(v.bound, "%s: not bound", name);
    snprintf(out, len, "%s", v.node);
    return out;
}

#endif
