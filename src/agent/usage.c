/*
 * The agent's side of its metrics: which running pod holds which GPU (for
 * the DCGM labels and the simulated load), the GPU-seconds each pod used
 * (written as corral.dev/gpu-seconds-used when it ends), the CPU and
 * memory snapshot behind /metrics/resource (cgroup v2 cpu.stat and
 * memory.current minus inactive file pages where the container has a
 * cgroup, else /proc/<pid>/stat and statm of its workload; the node from
 * /proc/stat and /proc/meminfo), and the pages the log server serves.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/agent_int.h"
#include "agent/telemetry.h"

int corral__gpu_ids_parse(const char *ids, int *out, int max)
{
    int n = 0;
    const char *p = ids ? ids : "";
    while (*p && n < max) {
        char *end = NULL;
        errno = 0;
        long id = strtol(p, &end, 10);
        if (end == p || errno)
            break;
        if (id >= 0 && id < CORRAL_GPU_MAX)
            out[n++] = (int)id;
        p = end;
        while (*p == ',' || *p == ' ')
            p++;
    }
    return n;
}

int corral__pod_sim_util(const corral_obj_t *o)
{
    const char *v = o ? corral_strmap_get(&o->meta.annotations, CORRAL__SIM_UTIL_ANN) : NULL;
    if (!v)
        return CORRAL__SIM_BUSY;
    char *end = NULL;
    double d = strtod(v, &end);
    if (end == v || !isfinite(d))
        return CORRAL__SIM_BUSY;
    return d < 0 ? 0 : d > 100 ? 100 : (int)(d + 0.5);
}

int corral__gpu_load_read(const char *path, int64_t now_us)
{
    struct stat st;
    if (!path || stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return -1;
    int64_t mtime_us = (int64_t)st.st_mtim.tv_sec * 1000000 + st.st_mtim.tv_nsec / 1000;
    if (now_us - mtime_us > CORRAL__GPU_LOAD_FRESH_US)
        return -1;
    FILE *fp = fopen(path, "re");
    if (!fp)
        return -1;
    char buf[32];
    size_t n = fread(buf, 1, sizeof(buf) - 1, fp);
    fclose(fp);
    buf[n] = '\0';
    char *end = NULL;
    double d = strtod(buf, &end);
    if (end == buf || !isfinite(d) || (*end && !strchr(" \t\r\n", *end)))
        return -1;
    return d < 0 ? 0 : d > 100 ? 100 : (int)(d + 0.5);
}

int corral__pod_gpu_milli(const corral_obj_t *o)
{
    if (!o || o->info->kind != CORRAL_KIND_POD || !o->u.pod)
        return 0;
    int64_t m = corral_pod_gpu_milli(&o->u.pod->spec);
    return m > 0 && m < 1000 ? (int)m : 0; /* a share; whole GPUs count as 0 */
}

int corral__agent_page(void *ctx, const char *path, corral_buf_t *out, const char **ctype)
{
    corral__telem_t *t = ctx;
    *ctype = NULL;
    if (!strcmp(path, "/metrics")) {
        corral__telem_render_dcgm(t, corral__now_us(), out);
        return 0;
    }
    if (!strcmp(path, "/metrics/resource")) {
        corral__telem_render_resource(t, corral__now_us(), out);
        return 0;
    }
    if (!strcmp(path, "/healthz")) {
        corral_buf_puts(out, "ok");
        *ctype = "text/plain; charset=utf-8";
        return 0;
    }
    return CORRAL_ENOENT;
}

static bool pod_running(const corral__pod_t *p)
{
    if (p->terminal)
        return false;
    for (size_t i = 0; i < p->nctrs; i++)
        if (p->ctrs[i].st == CORRAL__C_RUNNING)
            return true;
    return false;
}

/* The container named on a GPU: the first regular container. */
static const char *gpu_container(const corral__pod_t *p)
{
    return p->nctrs > p->ninit ? p->ctrs[p->ninit].name : "";
}

void corral__usage_owners(corral__telem_t *t, const corral__podtab_t *pods, int ngpu,
                          int64_t now_us)
{
    corral__gpu_owner_t owners[CORRAL_GPU_MAX];
    memset(owners, 0, sizeof(owners));
    for (size_t i = 0; i < pods->n; i++) {
        const corral__pod_t *p = pods->pods[i];
        if (!p->gpu_ids || !pod_running(p))
            continue;
        int ids[CORRAL_GPU_MAX];
        int k = corral__gpu_ids_parse(p->gpu_ids, ids, CORRAL_GPU_MAX);
        /* A share adds its part of the load (its declared load on its share);
         * the GPU is labelled with its first holder. */
        int util = corral__gpu_load_read(p->gpu_load, now_us);
        bool exact = util >= 0;
        if (!exact)
            util = p->sim_util;
        int load = p->gpu_milli ? (util * p->gpu_milli + 500) / 1000 : util;
        for (int j = 0; j < k; j++) {
            if (ids[j] < 0 || ids[j] >= ngpu)
                continue;
            corral__gpu_owner_t *w = &owners[ids[j]];
            if (w->pod) {
                w->util = w->util + load > 100 ? 100 : w->util + load;
                w->exact = w->exact && exact;
                continue;
            }
            *w = (corral__gpu_owner_t){.ns = p->ns,
                                       .pod = p->name,
                                       .container = gpu_container(p),
                                       .util = load,
                                       .exact = exact};
        }
    }
    corral__telem_set_owners(t, owners, ngpu, now_us);
}

void corral__usage_integrate(corral__telem_t *t, const corral__podtab_t *pods, int64_t dt_us)
{
    for (size_t i = 0; i < pods->n; i++) {
        corral__pod_t *p = pods->pods[i];
        if (!p->gpu_ids || !pod_running(p))
            continue;
        int ids[CORRAL_GPU_MAX];
        int k = corral__gpu_ids_parse(p->gpu_ids, ids, CORRAL_GPU_MAX);
        /* A share is credited its part of the GPU's utilization (a pod can use
         * no more than it was allocated). */
        double part = p->gpu_milli ? p->gpu_milli / 1000.0 : 1.0;
        for (int j = 0; j < k; j++)
            p->gpu_used_s += part * corral__telem_util(t, ids[j]) / 100.0 * (double)dt_us / 1e6;
        p->gpu_ran = p->gpu_ran || k > 0;
    }
}

/* --- CPU and memory ------------------------------------------------------------------------- */

/* The first number after key in a "key value" file (cpu.stat, memory.stat, meminfo). */
static bool file_key(const char *path, const char *key, double *out)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    char line[256];
    size_t kl = strlen(key);
    bool ok = false;
    while (!ok && fgets(line, sizeof(line), f)) {
        if (!strncmp(line, key, kl) && (line[kl] == ' ' || line[kl] == ':'))
            ok = sscanf(line + kl + 1, "%lf", out) == 1;
    }
    fclose(f);
    return ok;
}

static bool file_num(const char *path, double *out)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    bool ok = fscanf(f, "%lf", out) == 1;
    fclose(f);
    return ok;
}

static bool cgroup_usage(const char *dir, double *cpu_s, double *mem)
{
    char path[4200];
    double usec = 0, cur = 0, inactive = 0;
    snprintf(path, sizeof(path), "%s/cpu.stat", dir);
    if (!file_key(path, "usage_usec", &usec))
        return false;
    snprintf(path, sizeof(path), "%s/memory.current", dir);
    file_num(path, &cur);
    snprintf(path, sizeof(path), "%s/memory.stat", dir);
    file_key(path, "inactive_file", &inactive);
    *cpu_s = usec / 1e6;
    *mem = cur > inactive ? cur - inactive : 0;
    return true;
}

/* utime + stime (+ children's) and the resident set of pid. */
static bool proc_usage(pid_t pid, double *cpu_s, double *mem)
{
    char path[64], buf[1024];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    size_t k = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[k] = '\0';
    const char *p = strrchr(buf, ')'); /* comm may hold spaces */
    unsigned long long ut = 0, st = 0;
    long long cut = 0, cst = 0;
    if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %lld %lld", &ut,
                     &st, &cut, &cst) != 4)
        return false;
    long hz = sysconf(_SC_CLK_TCK);
    *cpu_s = (double)(ut + st + (unsigned long long)(cut + cst)) / (double)(hz > 0 ? hz : 100);
    snprintf(path, sizeof(path), "/proc/%d/statm", (int)pid);
    double size = 0, rss = 0;
    f = fopen(path, "r");
    if (f) {
        if (fscanf(f, "%lf %lf", &size, &rss) != 2)
            rss = 0;
        fclose(f);
    }
    *mem = rss * (double)sysconf(_SC_PAGESIZE);
    return true;
}

static void node_usage(double *cpu_s, double *mem)
{
    *cpu_s = *mem = 0;
    FILE *f = fopen("/proc/stat", "r");
    if (f) {
        unsigned long long v[8] = {0};
        if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
                   &v[4], &v[5], &v[6], &v[7]) == 8) {
            long hz = sysconf(_SC_CLK_TCK);
            unsigned long long busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
            *cpu_s = (double)busy / (double)(hz > 0 ? hz : 100);
        }
        fclose(f);
    }
    double total = 0, avail = 0;
    if (file_key("/proc/meminfo", "MemTotal", &total) &&
        file_key("/proc/meminfo", "MemAvailable", &avail))
        *mem = (total - avail) * 1024;
}

void corral__usage_collect(corral__telem_t *t, const corral__proc_t *pr,
                           const corral__podtab_t *pods, int64_t now_us)
{
    size_t cap = 0, n = 0;
    corral__ctr_usage_t *u = NULL;
    for (size_t i = 0; i < pods->n; i++) {
        const corral__pod_t *p = pods->pods[i];
        for (size_t k = 0; k < p->nctrs; k++) {
            const corral__ctr_t *c = &p->ctrs[k];
            if (c->st != CORRAL__C_RUNNING || c->pid <= 0)
                continue;
            double cpu = 0, mem = 0;
            char dir[4096];
            bool ok = false;
            if (pr->cgroups && pr->cgroup_base) {
                snprintf(dir, sizeof(dir), "%s/%s/%s", pr->cgroup_base, p->uid, c->name);
                ok = cgroup_usage(dir, &cpu, &mem);
            }
            if (!ok && !proc_usage(c->pid, &cpu, &mem))
                continue;
            corral_grow((void **)&u, &cap, n + 1, sizeof(*u));
            u[n++] = (corral__ctr_usage_t){
                .ns = p->ns, .pod = p->name, .container = c->name, .cpu_s = cpu, .mem_bytes = mem};
        }
    }
    double ncpu, nmem;
    node_usage(&ncpu, &nmem);
    corral__telem_set_usage(t, ncpu, nmem, u, n, now_us);
    corral_free(u);
}
