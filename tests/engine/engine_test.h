/* Helpers for the engine's unit tests: an engine with an arena and a
 * diagnostics sink, fed from YAML documents. Header-only, like
 * tests/model/model_test.h. */
#ifndef CORRAL_TESTS_ENGINE_TEST_H
#define CORRAL_TESTS_ENGINE_TEST_H

#include <criterion/criterion.h>
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

#endif
