/*
 * Simulator internals shared by the scenario runner's files.
 */
#ifndef CORRAL_SIM_INT_H
#define CORRAL_SIM_INT_H

#include "corral/hmap.h"
#include "corral/sim.h"

#define SIM_VEC(T)                                                                                 \
    struct {                                                                                       \
        T *items;                                                                                  \
        size_t n, cap;                                                                             \
    }

#define SIM_PUSH(v, x)                                                                             \
    do {                                                                                           \
        corral_grow((void **)&(v).items, &(v).cap, (v).n + 1, sizeof(*(v).items));                 \
        (v).items[(v).n++] = (x);                                                                  \
    } while (0)
#define VEC_PUSH SIM_PUSH

typedef struct scn {
    const char *path;
    FILE *out, *err;
    bool json;
    corral_arena_t a;
    corral_diag_t diag;
    char *data;
    corral_obj_t **objs; /* step 0: every document but the Scenario */
    size_t nobjs;
    const corral_scenario_t *sc;
    const corral_schedconf_t *conf; /* a SchedulerConfiguration in the file */
    const corral_obj_t *scobj;
    corral_engine_t *e;
    int64_t now;
    bool invalid;
    int cycles;
    int expectations;
    corral_hmap_t specs; /* "Kind/ns/name" -> index into spec_vals */
    SIM_VEC(const corral_val_t *) spec_vals;
    SIM_VEC(char *) evicted;        /* pods evicted during the current step */
    SIM_VEC(const char *) failures; /* FAIL lines (arena) */
} scn_t;

void corral__sim_parse_ref(const char *ref, char *kind, char *ns, char *name, size_t len);
void corral__sim_mark_evicted(scn_t *s, const char *key);
int corral__sim_remove_job(scn_t *s, const char *ns, const char *name);
void corral__sim_check(scn_t *s, int step, const corral_scn_expect_t *ex);
void corral__sim_report(scn_t *s);

#endif
