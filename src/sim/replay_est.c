/*
 * Runtime estimates as users give them (docs/decisions.md, "User runtime
 * estimates in the Philly replay"). A user asks for a time limit above what
 * the job will need, by a factor drawn uniformly from [1, 5) (Mu'alem and
 * Feitelson's f-model), and then rounds it up to one of a few round values
 * (estimates are modal: Tsafrir, Etsion and Feitelson find 20 values cover
 * about 90% of jobs): 15m, 30m, 1h, 2h, 4h, 8h, 12h, 1d, 2d, 3d, 7d. Seven
 * days is the site's maximum time limit: a longer job asks for it and runs
 * past it (the trace says it ran that long; backfill then counts it as
 * ending at once). The factor of job i comes from a hash of (seed, i), so
 * every policy of a run sees the same estimates, and so does every run.
 */
#include <string.h>

#include "sim/replay_int.h"

#define MIN_MS  (60 * 1000LL)
#define HOUR_MS (60 * MIN_MS)
#define DAY_MS  (24 * HOUR_MS)

static const int64_t ladder[] = {15 * MIN_MS, 30 * MIN_MS, HOUR_MS,      2 * HOUR_MS,
                                 4 * HOUR_MS, 8 * HOUR_MS, 12 * HOUR_MS, DAY_MS,
                                 2 * DAY_MS,  3 * DAY_MS,  7 * DAY_MS};

static uint64_t splitmix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

double corral__user_factor(uint64_t seed, uint32_t job)
{
    uint64_t h = splitmix64(splitmix64(seed) ^ job);
    return 1.0 + 4.0 * (double)(h >> 11) / 9007199254740992.0; /* [1, 5) */
}

int64_t corral__user_estimate(int64_t true_ms, uint64_t seed, uint32_t job)
{
    if (true_ms < 0)
        return -1; /* runs forever: no limit a user could give */
    double want = (double)true_ms * corral__user_factor(seed, job);
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(ladder); i++) {
        if (want <= (double)ladder[i])
            return ladder[i];
    }
    return ladder[CORRAL_ARRAY_LEN(ladder) - 1];
}

int64_t corral__job_estimate(const sim_workload_t *w, uint32_t job)
{
    const sim_pod_t *p = &w->pods[job];
    switch (w->estimates) {
    case SIM_EST_USER:
        return corral__user_estimate(p->duration_ms, w->est_seed, job);
    case SIM_EST_NONE:
        return -1;
    case SIM_EST_ORACLE:
    default:
        return p->duration_ms;
    }
}

static const char *const names[] = {"oracle", "user", "none"};

const char *corral__estimates_name(sim_est_t e)
{
    return (size_t)e < CORRAL_ARRAY_LEN(names) ? names[e] : "?";
}

int corral__parse_estimates(const char *s, sim_est_t *out)
{
    for (size_t i = 0; s && i < CORRAL_ARRAY_LEN(names); i++) {
        if (strcmp(s, names[i]) == 0) {
            *out = (sim_est_t)i;
            return 0;
        }
    }
    return -1;
}
