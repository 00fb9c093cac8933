/* Helpers for object-model tests: parse a YAML snippet and decode its first
 * document, collecting diagnostics; and check that a diagnostic mentions
 * given words. Header-only so each test file stays self-contained. */
#ifndef CORRAL_TESTS_MODEL_TEST_H
#define CORRAL_TESTS_MODEL_TEST_H

#include <criterion/criterion.h>
#include <string.h>

#include "corral/model.h"
#include "corral/yaml.h"

typedef struct mt {
    corral_arena_t arena;
    corral_diag_t diag;
    corral_obj_t *obj;
    int rc;
} mt_t;

/* Decode the first document of yaml. Returns the decode result code. */
static inline int mt_decode(mt_t *t, const char *yaml)
{
    corral_arena_init(&t->arena);
    corral_diag_init(&t->diag);
    corral_doc_t *docs;
    size_t n;
    t->obj = NULL;
    t->rc = corral_yaml_parse(&t->arena, yaml, strlen(yaml), "t.yaml", NULL, &t->diag, &docs, &n);
    if (t->rc != 0)
        return t->rc;
    cr_assert_geq(n, 1, "no document in test input");
    t->rc = corral_obj_decode(&t->arena, docs[0].root, "t.yaml", &t->diag, &t->obj);
    return t->rc;
}

static inline void mt_fini(mt_t *t)
{
    corral_diag_fini(&t->diag);
    corral_arena_fini(&t->arena);
}

/* The formatted diagnostics, one per line (static buffer, for assertions). */
static inline const char *mt_diags(mt_t *t)
{
    static char out[8192];
    corral_buf_t b;
    corral_buf_init(&b);
    for (size_t i = 0; i < t->diag.n; i++) {
        corral_diag_format(&t->diag.items[i], &b);
        corral_buf_putc(&b, '\n');
    }
    snprintf(out, sizeof(out), "%s", corral_buf_str(&b));
    corral_buf_fini(&b);
    return out;
}

/* Assert that some diagnostic line contains every one of the given strings. */
#define mt_assert_diag(t, ...)                                                                     \
    do {                                                                                           \
        const char *want_[] = {__VA_ARGS__};                                                       \
        bool found_ = false;                                                                       \
        corral_buf_t b_;                                                                           \
        corral_buf_init(&b_);                                                                      \
        for (size_t i_ = 0; i_ < (t)->diag.n && !found_; i_++) {                                   \
            corral_buf_reset(&b_);                                                                 \
            corral_diag_format(&(t)->diag.items[i_], &b_);                                         \
            bool all_ = true;                                                                      \
            for (size_t j_ = 0; j_ < sizeof(want_) / sizeof(want_[0]); j_++)                       \
                all_ = all_ && strstr(corral_buf_str(&b_), want_[j_]) != NULL;                     \
            found_ = all_;                                                                         \
        }                                                                                          \
        corral_buf_fini(&b_);                                                                      \
        cr_assert(found_, "no diagnostic has all of the expected words; got:\n%s", mt_diags(t));   \
    } while (0)

#endif
