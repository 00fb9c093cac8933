/*
 * A test assertion shared by the suites that compare value trees (the
 * protobuf codec's, the API server's and the client's): the trees are
 * equal, else both are printed as JSON.
 */
#ifndef CORRAL_TESTS_VAL_ASSERT_H
#define CORRAL_TESTS_VAL_ASSERT_H

#include <criterion/criterion.h>

#include "corral/buf.h"
#include "corral/val.h"

static inline void val_assert_same(const corral_val_t *got, const corral_val_t *want,
                                   const char *what)
{
    corral_buf_t g, w;
    corral_buf_init(&g);
    corral_buf_init(&w);
    corral_val_to_json(got, &g, false);
    corral_val_to_json(want, &w, false);
    cr_assert(corral_val_equal(got, want), "%s%sgot  %s\nwant %s", what, *what ? "\n" : "",
              corral_buf_str(&g), corral_buf_str(&w));
    corral_buf_fini(&g);
    corral_buf_fini(&w);
}

#endif
