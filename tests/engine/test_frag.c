/* Fragmentation measure against known values: the FGD artifact's own test
 * cases (kubernetes-scheduler-simulator, pkg/utils/frag_test.go), recomputed
 * by Corral's implementation. Numbers are facts about the measure, not code. */
#include <criterion/criterion.h>
#include <string.h>

#include "engine/engine_int.h"

typedef struct tshape {
    int64_t cpu;
    int milli, gpus;
    const char *model;
    double pct;
} tshape_t;

/* A bare engine with a model table, and shapes set directly (not normalised). */
static corral_engine_t *with_shapes(const tshape_t *ts, size_t n)
{
    corral_engine_t *e;
    corral_engine_new(NULL, &e);
    e->shapes = corral_calloc(n, sizeof(*e->shapes));
    e->shape_models = corral_calloc(n, sizeof(*e->shape_models));
    e->nshapes = n;
    for (size_t i = 0; i < n; i++) {
        eshape_t *s = &e->shapes[i];
        s->cpu = ts[i].cpu;
        s->gpus = ts[i].gpus;
        s->milli = ts[i].milli;
        s->p = ts[i].pct / 100.0;
        if (ts[i].model) {
            uint32_t id;
            if (!corral_hmap_get(&e->model_ids, ts[i].model, &id)) {
                id = (uint32_t)e->model_ids.n;
                corral_hmap_put(&e->model_ids, ts[i].model, id);
            }
            e->shape_models[i] = (int)id;
            s->models = &e->shape_models[i];
            s->nmodels = 1;
        }
    }
    return e;
}

static int model_of(corral_engine_t *e, const char *m)
{
    uint32_t id;
    return corral_hmap_get(&e->model_ids, m, &id) ? (int)id : 1000;
}

static const tshape_t with_cpu_pods[] = {
    {15700, 1000, 1, NULL, 28.69}, {11900, 1000, 1, NULL, 18.93}, {11400, 1000, 1, NULL, 12.27},
    {1000, 0, 0, NULL, 7.36},      {18710, 1000, 1, NULL, 4.85},  {8200, 1000, 1, NULL, 3.79},
    {16400, 1000, 1, NULL, 3.31},  {9810, 1000, 1, NULL, 1.97},   {15200, 1000, 1, NULL, 1.87},
    {11200, 1000, 1, NULL, 1.81},  {14200, 1000, 1, NULL, 1.76},  {12000, 0, 0, NULL, 1.65},
    {14900, 1000, 1, NULL, 1.39},  {60200, 1000, 4, NULL, 1.23},  {64200, 1000, 8, NULL, 1.07},
    {32200, 1000, 4, NULL, 1.01},  {17400, 1000, 2, NULL, 0.91},  {30200, 1000, 2, NULL, 0.69},
    {16000, 1000, 1, NULL, 0.64},  {15000, 1000, 1, NULL, 0.59},  {64000, 1000, 8, NULL, 0.53},
    {15000, 0, 0, NULL, 0.53},     {11910, 1000, 1, NULL, 0.53},  {120200, 1000, 8, NULL, 0.48},
    {11300, 1000, 1, NULL, 0.37},  {30000, 1000, 2, NULL, 0.32},  {9800, 1000, 1, NULL, 0.32},
    {8000, 1000, 1, NULL, 0.32},   {2000, 1000, 1, NULL, 0.27},   {2000, 80, 1, NULL, 0.27},
    {1000, 1000, 1, NULL, 0.27},
};

Test(frag, cpu_pods_count_all_idle_gpus)
{
    corral_engine_t *e = with_shapes(with_cpu_pods, CORRAL_ARRAY_LEN(with_cpu_pods));
    uint16_t empty[8] = {1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000};
    cr_assert_float_eq(corral__frag_state(e, -1, 64000, empty, 8), 887.20, 0.01);
    uint16_t half[8] = {1000, 1000, 1000, 1000, 0, 0, 0, 0};
    cr_assert_float_eq(corral__frag_state(e, -1, 32000, half, 8), 554.40, 0.01);
    corral_engine_free(e);
}

static const tshape_t typed[] = {
    {6000, 465, 1, NULL, 9.33},        {8000, 440, 1, "2080", 9.15},
    {8000, 475, 1, "T4", 8.76},        {8000, 440, 1, "P100", 8.72},
    {2000, 465, 1, NULL, 8.68},        {12000, 900, 1, NULL, 8.65},
    {4000, 900, 1, NULL, 8.43},        {16000, 678, 1, "T4", 8.36},
    {8000, 500, 1, NULL, 8.29},        {6000, 511, 1, NULL, 8.11},
    {14000, 1000, 2, "2080", 0.54},    {4000, 1000, 1, "2080", 0.43},
    {32000, 1000, 2, "T4", 0.43},      {16000, 1000, 1, "V100M16", 0.40},
    {64000, 1000, 2, NULL, 0.40},      {10000, 1000, 2, NULL, 0.40},
    {11400, 1000, 1, "T4", 0.36},      {16000, 1000, 1, "T4", 0.36},
    {4000, 1000, 2, NULL, 0.36},       {14000, 1000, 2, "V100M16", 0.36},
    {8000, 1000, 4, NULL, 0.36},       {16000, 1000, 2, NULL, 0.32},
    {2000, 1000, 1, "T4", 0.32},       {6000, 1000, 1, NULL, 0.32},
    {4000, 1000, 1, NULL, 0.32},       {5000, 1000, 1, NULL, 0.32},
    {32000, 1000, 4, "V100M16", 0.32}, {32000, 1000, 2, NULL, 0.32},
    {24000, 1000, 8, "2080", 0.32},    {40000, 1000, 4, NULL, 0.29},
    {32000, 1000, 8, NULL, 0.29},      {32000, 1000, 1, "T4", 0.29},
    {16000, 1000, 1, NULL, 0.25},      {7000, 1000, 1, "V100M16", 0.25},
    {24000, 1000, 1, "T4", 0.25},
};

Test(frag, shares_models_and_cpu)
{
    corral_engine_t *e = with_shapes(typed, CORRAL_ARRAY_LEN(typed));
    int m1080 = model_of(e, "1080"); /* no shape may use it unless unconstrained */
    uint16_t used[4] = {200, 1000, 1000, 500};
    cr_assert_float_eq(corral__frag_state(e, m1080, 1000, used, 4), 2566.62, 0.01);
    uint16_t full4[4] = {1000, 1000, 1000, 1000};
    cr_assert_float_eq(corral__frag_state(e, m1080, 1000, full4, 4), 3802.40, 0.01);
    uint16_t full8[8] = {1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000};
    cr_assert_float_eq(corral__frag_state(e, m1080, 1000, full8, 8), 7604.80, 0.01);
    corral_engine_free(e);
    e = with_shapes(typed, 1);
    cr_assert_float_eq(corral__frag_state(e, m1080, 1000, used, 4), 251.91, 0.01);
    corral_engine_free(e);
}
