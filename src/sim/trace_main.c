/*
 * corral sim --cluster NODES --trace PODS: load the cluster and the workload,
 * pick the policies, run the chosen protocol (SCENARIOS.md §2). Input
 * problems are printed as FILE:LINE: message and give exit status 2 before
 * anything runs.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim/replay_int.h"

void corral__sim_parallel(void *(*worker)(void *), void *ctx, int threads, size_t jobs)
{
    if (threads <= 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        threads = n > 0 ? (int)n : 1;
    }
    size_t nth = (size_t)threads < jobs ? (size_t)threads : jobs;
    nth = nth < 64 ? nth : 64;
    pthread_t th[64];
    for (size_t i = 0; i < nth; i++)
        pthread_create(&th[i], NULL, worker, ctx);
    for (size_t i = 0; i < nth; i++)
        pthread_join(th[i], NULL);
}

/* `--policy all`: the engine's own and the baselines, as issue 4 lists them. */
static const char *const all_policies[] = {"corral",  "random",  "spread", "binpack",
                                           "bestfit", "dotprod", "fifo"};

static int pick_policies(const corral_sim_trace_opts_t *o, const sim_policy_t **pol, size_t *n)
{
    *n = 0;
    const char *def[] = {o->config && o->config->policy ? o->config->policy : "corral"};
    const char *const *names = o->npolicies ? o->policies : def;
    size_t nn = o->npolicies ? o->npolicies : 1;
    for (size_t i = 0; i < nn; i++) {
        bool all = strcmp(names[i], "all") == 0;
        size_t m = all ? CORRAL_ARRAY_LEN(all_policies) : 1;
        for (size_t k = 0; k < m; k++) {
            const char *name = all ? all_policies[k] : names[i];
            const sim_policy_t *p = corral__sim_policy(name);
            if (!p) {
                fprintf(o->err,
                        "corral sim: unknown policy \"%s\" (expected corral, random, spread, "
                        "binpack, bestfit, dotprod, fifo, fifo-easy, fgd or all)\n",
                        name);
                return CORRAL_EINVAL;
            }
            bool dup = false;
            for (size_t j = 0; j < *n; j++)
                dup |= pol[j] == p;
            if (!dup && *n < CORRAL_SIM_MAX_POLICIES)
                pol[(*n)++] = p;
        }
    }
    return 0;
}

static int check_opts(const corral_sim_trace_opts_t *o)
{
    const char *why = NULL;
    if (!o->trace)
        why = "--trace FILE is required";
    else if (!o->cluster && o->nodes <= 0)
        why = "give the cluster: --cluster FILE, or --nodes N --gpus-per-node G";
    else if (o->cluster && o->nodes > 0)
        why = "--cluster and --nodes exclude each other";
    else if (!o->cluster && (o->gpus_per_node < 0 || o->gpus_per_node > 64))
        why = "--gpus-per-node must be 0..64";
    else if (o->protocol && strcmp(o->protocol, "fgd") != 0 && strcmp(o->protocol, "replay") != 0)
        why = "--protocol must be fgd or replay";
    else if (o->seeds < 0 || o->seeds > 1000)
        why = "--seeds must be 1..1000";
    else if (o->estimates && corral__parse_estimates(o->estimates, &(sim_est_t){0}) != 0)
        why = "--estimates must be oracle, user or none";
    else if (o->checkpoint_ms < 0 || o->min_runtime_ms < 0)
        why = "--checkpoint-interval and --min-runtime must not be negative";
    if (why)
        fprintf(o->err, "corral sim: %s\n", why);
    return why ? CORRAL_EINVAL : 0;
}

static int run(const corral_sim_trace_opts_t *o, corral_arena_t *a, corral_diag_t *d)
{
    const sim_policy_t *pol[CORRAL_SIM_MAX_POLICIES];
    sim_policy_t conf_pol[CORRAL_SIM_MAX_POLICIES];
    size_t npol;
    sim_cluster_t c;
    sim_workload_t w;
    if (check_opts(o) != 0 || pick_policies(o, pol, &npol) != 0)
        return 2;
    for (size_t i = 0; o->config && i < npol; i++) {
        conf_pol[i] = *pol[i];
        conf_pol[i].conf = o->config;
        pol[i] = &conf_pol[i];
    }
    if (corral__load_cluster(o, a, d, &c) != 0 || corral__load_workload(o->trace, a, d, &w) != 0)
        return 2;
    w.estimates = SIM_EST_USER;
    if (o->estimates)
        corral__parse_estimates(o->estimates, &w.estimates);
    w.est_seed = o->has_seed ? o->seed : 1;
    w.checkpoint_ms = o->checkpoint_ms;
    w.min_runtime_ms = o->min_runtime_ms;
    if (c.nnodes == 0 || c.gpus == 0) {
        fprintf(o->err, "corral sim: the cluster has no GPUs\n");
        return 2;
    }
    bool fgd = o->protocol && strcmp(o->protocol, "fgd") == 0;
    if (!fgd && !w.timed) {
        fprintf(o->err,
                "corral sim: %s: some pods have no creation_time, so they cannot be replayed "
                "in time; use --protocol fgd\n",
                o->trace);
        return 2;
    }
    int rc = fgd ? corral__fgd_main(o, &c, &w, pol, npol, d)
                 : corral__replay_main(o, &c, &w, pol, npol, d);
    return rc == 0 ? 0 : 1;
}

int corral_sim_trace(const corral_sim_trace_opts_t *opts)
{
    corral_sim_trace_opts_t o = *opts;
    o.out = o.out ? o.out : stdout;
    o.err = o.err ? o.err : stderr;
    corral_arena_t a;
    corral_arena_init(&a);
    corral_diag_t d;
    corral_diag_init(&d);
    int rc = run(&o, &a, &d);
    corral_diag_print(&d, o.err);
    corral_diag_fini(&d);
    corral_arena_fini(&a);
    return rc;
}

/* --- files ---------------------------------------------------------------------------------- */

static int mkdirs(char *path)
{
    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        int rc = mkdir(path, 0755);
        *p = '/';
        if (rc != 0 && errno != EEXIST)
            return -1;
    }
    return mkdir(path, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

/* Write through a temporary name and rename, so a reader never sees half. */
int corral__write_file(const char *dir, const char *name, const corral_buf_t *buf, corral_diag_t *d)
{
    char path[4096], tmp[4200];
    int n = snprintf(path, sizeof(path), "%s", dir);
    if (n <= 0 || (size_t)n >= sizeof(path) || mkdirs(path) != 0) {
        corral_diag_add(d, CORRAL_SEV_ERROR, dir, 0, 0, NULL, "cannot create directory: %s",
                        strerror(errno));
        return CORRAL_EIO;
    }
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    bool ok = f && fwrite(corral_buf_str(buf), 1, buf->len, f) == buf->len;
    ok = f && fclose(f) == 0 && ok;
    if (!ok || rename(tmp, path) != 0) {
        corral_diag_add(d, CORRAL_SEV_ERROR, path, 0, 0, NULL, "cannot write: %s", strerror(errno));
        unlink(tmp);
        return CORRAL_EIO;
    }
    return 0;
}
