/*
 * A node's GPU telemetry (telemetry.h): the simulation of GPUs driven by
 * the pods that hold them, the readings of real ones through NVML
 * (nvml_telem.c), GPU health, and the two expositions: /metrics as NVIDIA's
 * dcgm-exporter prints it (its default-counters.csv names, help texts and
 * types; labels gpu, UUID, pci_bus_id, device, modelName, Hostname,
 * DCGM_FI_DRIVER_VERSION, then container, namespace, pod; integers printed
 * as integers and the power as %f, as the exporter formats DCGM's int64 and
 * double fields), and kubelet's /metrics/resource. Rendering is one pass
 * over fixed arrays into the caller's buffer: no allocation per series.
 */
#include "agent/telemetry.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "corral/hmap.h"
#include "corral/metrics.h"

#define BUCKET_US   (5 * INT64_C(1000000)) /* utilization jitter changes every 5 s */
#define TAU_TEMP_S  30.0
#define TAU_POWER_S 2.0

typedef struct model {
    const char *match;
    double tdp_w, idle_w, sm_idle, sm_max, mem_clock, temp_idle, temp_rise, nvlink_gbs;
} model_t;

/* Datasheet-shaped numbers per GPU family; the last row catches the rest. */
static const model_t MODELS[] = {
    {"H100", 700, 70, 345, 1980, 2619, 30, 42, 900},
    {"H200", 700, 75, 345, 1980, 3201, 30, 42, 900},
    {"A100 80GB PCIe", 300, 45, 210, 1410, 1512, 32, 40, 600},
    {"A100", 400, 55, 210, 1410, 1593, 32, 40, 600},
    {"V100", 300, 40, 135, 1530, 877, 33, 40, 300},
    {"L4", 72, 16, 210, 2040, 6251, 35, 35, 0},
    {"", 300, 40, 210, 1500, 1500, 32, 40, 0},
};

typedef struct tgpu {
    char uuid[80], pci[32], model[96], device[16], index[8];
    double mem_mib;
    bool nvlink;
    char *ns, *pod, *ctr; /* holder, NULL when idle */
    int target;           /* simulated load of the holder */
    bool exact;           /* target is reported by the workload: no jitter */
    double util, util_s;  /* current utilization, its integral (GPU-seconds) */
    double temp, power, energy_mj, nvlink_kib;
    uint64_t xid;
    bool xid_seen;
    int64_t xid_us;
    bool unreadable;
    char why[96];
    corral__gpu_sample_t s;
} tgpu_t;

typedef struct usage {
    char *ns, *pod, *ctr;
    double cpu_s, mem;
} usage_t;

struct corral__telem {
    pthread_mutex_t mu;
    corral_metrics_t *extra; /* rendered after ours (not owned) */
    char host[256], driver[32];
    int n;
    bool sim;
    const model_t *m;
    uint32_t seed;
    int64_t t_us; /* the simulation's clock */
    int xid_hold_s;
    corral__nvml_tm_t *nvml;
    tgpu_t g[CORRAL_GPU_MAX];
    usage_t *u;
    size_t nu;
    double node_cpu_s, node_mem;
    int64_t usage_us;
    uint64_t scrapes;
    double render_s;
};

static const model_t *model_of(const char *name)
{
    for (size_t i = 0; i + 1 < CORRAL_ARRAY_LEN(MODELS); i++)
        if (strstr(name, MODELS[i].match))
            return &MODELS[i];
    return &MODELS[CORRAL_ARRAY_LEN(MODELS) - 1];
}

static uint32_t mix(uint32_t seed, int gpu, int64_t bucket)
{
    char key[64];
    int len = snprintf(key, sizeof(key), "%d/%lld", gpu, (long long)bucket);
    return corral_hash_stable(key, (size_t)len, seed);
}

/* The temperature and power a load settles at. */
static double temp_at(const corral__telem_t *t, int i, double util)
{
    return t->m->temp_idle + (double)(mix(t->seed, i, -1) % 5) + t->m->temp_rise * util / 100.0;
}

static double power_at(const corral__telem_t *t, double util)
{
    return t->m->idle_w + (t->m->tdp_w - t->m->idle_w) * 0.92 * util / 100.0;
}

static double util_at(const corral__telem_t *t, const tgpu_t *g, int i, int64_t us)
{
    if (!g->pod || g->target <= 0)
        return 0;
    if (g->exact)
        return g->target > 100 ? 100 : g->target;
    int jitter = (int)(mix(t->seed, i, us / BUCKET_US) % 7) - 3;
    int u = g->target + jitter;
    return u < 0 ? 0 : u > 100 ? 100 : u;
}

/* Fill the simulated sample from the state. */
static void sim_sample(const corral__telem_t *t, tgpu_t *g)
{
    corral__gpu_sample_t *s = &g->s;
    const model_t *m = t->m;
    double u = g->util;
    double reserved = floor(g->mem_mib / 160);
    double used = g->pod ? floor((g->mem_mib - reserved) * (0.08 + 0.8 * u / 100.0)) : 0;
    s->present = (1u << CORRAL__TM_N) - 1;
    if (!g->nvlink)
        s->present &= ~(1u << CORRAL__TM_NVLINK_TOTAL);
    s->v[CORRAL__TM_SM_CLOCK] = round(m->sm_idle + (m->sm_max - m->sm_idle) * fmin(1, u / 25.0));
    s->v[CORRAL__TM_MEM_CLOCK] = m->mem_clock;
    s->v[CORRAL__TM_GPU_TEMP] = round(g->temp);
    s->v[CORRAL__TM_MEMORY_TEMP] = round(g->temp + 4);
    s->v[CORRAL__TM_POWER_USAGE] = round(g->power * 1000) / 1000;
    s->v[CORRAL__TM_TOTAL_ENERGY] = floor(g->energy_mj);
    s->v[CORRAL__TM_PCIE_TX] = round(g->pod ? 150 + 2400 * u : 25);
    s->v[CORRAL__TM_PCIE_RX] = round(g->pod ? 300 + 5200 * u : 40);
    s->v[CORRAL__TM_GPU_UTIL] = u;
    s->v[CORRAL__TM_MEM_COPY_UTIL] = round(u * 0.55);
    s->v[CORRAL__TM_XID_ERRORS] = (double)g->xid;
    s->v[CORRAL__TM_FB_USED] = used;
    s->v[CORRAL__TM_FB_FREE] = g->mem_mib - reserved - used;
    s->v[CORRAL__TM_NVLINK_TOTAL] = floor(g->nvlink_kib);
}

/* Advance GPU i from t->t_us to to_us under a constant target, in steps
 * that end at jitter bucket edges, so the result depends on the clock only. */
static void sim_advance(corral__telem_t *t, int i, int64_t to_us)
{
    tgpu_t *g = &t->g[i];
    for (int64_t at = t->t_us; at < to_us;) {
        int64_t end = (at / BUCKET_US + 1) * BUCKET_US;
        if (end > to_us)
            end = to_us;
        double dt = (double)(end - at) / 1e6, u = util_at(t, g, i, at);
        double tt = temp_at(t, i, u), pt = power_at(t, u);
        double kp = exp(-dt / TAU_POWER_S);
        /* energy: the integral of P(t) = pt + (p0 - pt) e^{-t/tau} */
        g->energy_mj += 1000 * (pt * dt + (g->power - pt) * TAU_POWER_S * (1 - kp));
        g->power = pt + (g->power - pt) * kp;
        g->temp = tt + (g->temp - tt) * exp(-dt / TAU_TEMP_S);
        g->util_s += u / 100.0 * dt;
        g->nvlink_kib += t->m->nvlink_gbs * 1e6 / 1024 * 0.25 * u / 100.0 * dt;
        g->util = u;
        at = end;
    }
    g->util = util_at(t, g, i, to_us);
    sim_sample(t, g);
}

/* Caller holds mu. */
static void advance(corral__telem_t *t, int64_t now_us)
{
    if (now_us <= t->t_us)
        return;
    if (t->sim) {
        for (int i = 0; i < t->n; i++)
            sim_advance(t, i, now_us);
        t->t_us = now_us;
        return;
    }
    double dt = (double)(now_us - t->t_us) / 1e6;
    for (int i = 0; i < t->n; i++) {
        tgpu_t *g = &t->g[i];
        g->util_s += g->util / 100.0 * dt; /* the last reading holds until the next */
        if (!t->nvml) {
            g->unreadable = true;
            snprintf(g->why, sizeof(g->why), "NVML not loaded");
            g->s.present = 0;
            continue;
        }
        g->unreadable = !corral__nvml_tm_read(t->nvml, i, &g->s, g->why, sizeof(g->why));
        g->util = (g->s.present >> CORRAL__TM_GPU_UTIL) & 1 ? g->s.v[CORRAL__TM_GPU_UTIL] : 0;
        if (g->xid_seen) {
            g->s.present |= 1u << CORRAL__TM_XID_ERRORS;
            g->s.v[CORRAL__TM_XID_ERRORS] = (double)g->xid;
        }
    }
    int gpu;
    uint64_t xid;
    while (t->nvml && corral__nvml_tm_xid(t->nvml, &gpu, &xid)) {
        t->g[gpu].xid = xid;
        t->g[gpu].xid_seen = true;
        t->g[gpu].xid_us = now_us;
        t->g[gpu].s.present |= 1u << CORRAL__TM_XID_ERRORS;
        t->g[gpu].s.v[CORRAL__TM_XID_ERRORS] = (double)xid;
    }
    t->t_us = now_us;
}

corral__telem_t *corral__telem_new(const corral_gpu_inventory_t *inv, const char *hostname,
                                   int64_t now_us)
{
    corral__telem_t *t = corral_calloc(1, sizeof(*t));
    pthread_mutex_init(&t->mu, NULL);
    snprintf(t->host, sizeof(t->host), "%s", hostname ? hostname : "");
    snprintf(t->driver, sizeof(t->driver), "%s", inv->driver_version);
    t->n = inv->n;
    t->sim = strcmp(inv->source, "nvml") != 0;
    t->m = model_of(inv->n ? inv->gpus[0].name : "");
    t->seed = corral_hash_stable(t->host, strlen(t->host), 0x5eed);
    t->t_us = now_us;
    t->xid_hold_s = CORRAL__XID_HOLD_S;
    const char *topo = inv->topology ? inv->topology : "";
    for (int i = 0; i < t->n; i++) {
        tgpu_t *g = &t->g[i];
        const corral_gpu_t *src = &inv->gpus[i];
        snprintf(g->uuid, sizeof(g->uuid), "%s", src->uuid);
        snprintf(g->pci, sizeof(g->pci), "%s", src->pci_bus_id);
        snprintf(g->model, sizeof(g->model), "%s", src->name);
        snprintf(g->device, sizeof(g->device), "nvidia%d", i);
        snprintf(g->index, sizeof(g->index), "%d", i);
        g->mem_mib = (double)src->memory_mib;
        /* row i of the matrix names an NVLink peer */
        const char *row = topo;
        for (int r = 0; r < i && row; r++) {
            row = strchr(row, ';');
            row = row ? row + 1 : NULL;
        }
        const char *end = row ? strchr(row, ';') : NULL;
        const char *nv = row ? strstr(row, "NV") : NULL;
        g->nvlink = nv && (!end || nv < end);
        g->temp = temp_at(t, i, 0);
        g->power = power_at(t, 0);
        g->energy_mj = (double)(mix(t->seed, i, -2) % 1000000) * 1000.0;
    }
    if (!t->sim) {
        char err[256];
        t->nvml = corral__nvml_tm_open(t->n, err, sizeof(err));
        t->t_us = now_us - 1;
        advance(t, now_us);
    } else {
        for (int i = 0; i < t->n; i++)
            sim_sample(t, &t->g[i]);
    }
    return t;
}

static void usage_clear(corral__telem_t *t)
{
    for (size_t i = 0; i < t->nu; i++) {
        corral_free(t->u[i].ns);
        corral_free(t->u[i].pod);
        corral_free(t->u[i].ctr);
    }
    corral_free(t->u);
    t->u = NULL;
    t->nu = 0;
}

static void owner_clear(tgpu_t *g)
{
    corral_free(g->ns);
    corral_free(g->pod);
    corral_free(g->ctr);
    g->ns = g->pod = g->ctr = NULL;
}

void corral__telem_free(corral__telem_t *t)
{
    if (!t)
        return;
    for (int i = 0; i < t->n; i++)
        owner_clear(&t->g[i]);
    usage_clear(t);
    corral__nvml_tm_close(t->nvml);
    pthread_mutex_destroy(&t->mu);
    corral_free(t);
}

static bool same(const char *a, const char *b)
{
    return (!a && !b) || (a && b && !strcmp(a, b));
}

static char *dup_or_null(const char *s)
{
    return s ? corral_strdup(s) : NULL;
}

void corral__telem_set_owners(corral__telem_t *t, const corral__gpu_owner_t *owners, int n,
                              int64_t now_us)
{
    pthread_mutex_lock(&t->mu);
    advance(t, now_us);
    for (int i = 0; i < t->n; i++) {
        tgpu_t *g = &t->g[i];
        const corral__gpu_owner_t *o = i < n ? &owners[i] : NULL;
        const char *pod = o ? o->pod : NULL;
        if (same(pod, g->pod) && (!pod || (same(o->ns, g->ns) && same(o->container, g->ctr) &&
                                           o->util == g->target && o->exact == g->exact)))
            continue;
        owner_clear(g);
        if (pod) {
            g->ns = dup_or_null(o->ns ? o->ns : "");
            g->pod = dup_or_null(pod);
            g->ctr = dup_or_null(o->container ? o->container : "");
            g->target = o->util;
            g->exact = o->exact;
        } else {
            g->target = 0;
            g->exact = false;
        }
        if (t->sim) {
            g->util = util_at(t, g, i, t->t_us);
            sim_sample(t, g);
        }
    }
    pthread_mutex_unlock(&t->mu);
}

void corral__telem_set_usage(corral__telem_t *t, double node_cpu_s, double node_mem_bytes,
                             const corral__ctr_usage_t *c, size_t n, int64_t now_us)
{
    usage_t *u = n ? corral_calloc(n, sizeof(*u)) : NULL;
    for (size_t i = 0; i < n; i++) {
        u[i].ns = corral_strdup(c[i].ns ? c[i].ns : "");
        u[i].pod = corral_strdup(c[i].pod ? c[i].pod : "");
        u[i].ctr = corral_strdup(c[i].container ? c[i].container : "");
        u[i].cpu_s = c[i].cpu_s;
        u[i].mem = c[i].mem_bytes;
    }
    pthread_mutex_lock(&t->mu);
    usage_clear(t);
    t->u = u;
    t->nu = n;
    t->node_cpu_s = node_cpu_s;
    t->node_mem = node_mem_bytes;
    t->usage_us = now_us;
    pthread_mutex_unlock(&t->mu);
}

void corral__telem_update(corral__telem_t *t, int64_t now_us)
{
    pthread_mutex_lock(&t->mu);
    advance(t, now_us);
    pthread_mutex_unlock(&t->mu);
}

double corral__telem_util(corral__telem_t *t, int i)
{
    pthread_mutex_lock(&t->mu);
    double v = i >= 0 && i < t->n ? t->g[i].util : 0;
    pthread_mutex_unlock(&t->mu);
    return v;
}

double corral__telem_util_seconds(corral__telem_t *t, int i)
{
    pthread_mutex_lock(&t->mu);
    double v = i >= 0 && i < t->n ? t->g[i].util_s : 0;
    pthread_mutex_unlock(&t->mu);
    return v;
}

void corral__telem_sample(corral__telem_t *t, int i, corral__gpu_sample_t *out)
{
    pthread_mutex_lock(&t->mu);
    if (i >= 0 && i < t->n)
        *out = t->g[i].s;
    else
        memset(out, 0, sizeof(*out));
    pthread_mutex_unlock(&t->mu);
}

void corral__telem_set_xid_hold(corral__telem_t *t, int hold_s)
{
    pthread_mutex_lock(&t->mu);
    t->xid_hold_s = hold_s;
    pthread_mutex_unlock(&t->mu);
}

void corral__telem_xid(corral__telem_t *t, int i, uint64_t xid, int64_t now_us)
{
    pthread_mutex_lock(&t->mu);
    if (i >= 0 && i < t->n) {
        tgpu_t *g = &t->g[i];
        g->xid = xid;
        g->xid_seen = true;
        g->xid_us = now_us;
        g->s.present |= 1u << CORRAL__TM_XID_ERRORS;
        g->s.v[CORRAL__TM_XID_ERRORS] = (double)xid;
    }
    pthread_mutex_unlock(&t->mu);
}

bool corral__telem_gpu_healthy(corral__telem_t *t, int i, int64_t now_us)
{
    pthread_mutex_lock(&t->mu);
    bool ok = true;
    if (i >= 0 && i < t->n) {
        const tgpu_t *g = &t->g[i];
        ok = !g->unreadable &&
             !(g->xid_seen && now_us - g->xid_us < (int64_t)t->xid_hold_s * 1000000);
    }
    pthread_mutex_unlock(&t->mu);
    return ok;
}

bool corral__telem_healthy(corral__telem_t *t, int64_t now_us, char *reason, size_t rlen, char *msg,
                           size_t mlen)
{
    corral_buf_t b;
    corral_buf_init(&b);
    const char *why = NULL;
    pthread_mutex_lock(&t->mu);
    for (int i = 0; i < t->n; i++) {
        tgpu_t *g = &t->g[i];
        if (g->unreadable) {
            corral_buf_printf(&b, "%sGPU %d (%s) cannot be read: %s", b.len ? "; " : "", i, g->uuid,
                              g->why);
            why = "GPUUnreadable";
        }
    }
    for (int i = 0; i < t->n && !why; i++) {
        tgpu_t *g = &t->g[i];
        if (g->xid_seen && now_us - g->xid_us < (int64_t)t->xid_hold_s * 1000000)
            corral_buf_printf(&b, "%sGPU %d (%s) reported XID %llu", b.len ? "; " : "", i, g->uuid,
                              (unsigned long long)g->xid);
    }
    if (!why && b.len)
        why = "XidError";
    pthread_mutex_unlock(&t->mu);
    snprintf(reason, rlen, "%s", why ? why : "GPUsHealthy");
    snprintf(msg, mlen, "%s", why ? corral_buf_str(&b) : "every GPU is readable and has no XID");
    corral_buf_fini(&b);
    return why == NULL;
}

/* --- expositions ------------------------------------------------------------------------------ */

static const struct {
    const char *name, *type, *help;
} FIELDS[CORRAL__TM_N] = {
    {"DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz)."},
    {"DCGM_FI_DEV_MEM_CLOCK", "gauge", "Memory clock frequency (in MHz)."},
    {"DCGM_FI_DEV_MEMORY_TEMP", "gauge", "Memory temperature (in C)."},
    {"DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C)."},
    {"DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W)."},
    {"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "counter",
     "Total energy consumption since boot (in mJ)."},
    {"DCGM_FI_DEV_PCIE_TX_THROUGHPUT", "counter",
     "Total number of bytes transmitted through PCIe TX (in KB) via NVML."},
    {"DCGM_FI_DEV_PCIE_RX_THROUGHPUT", "counter",
     "Total number of bytes received through PCIe RX (in KB) via NVML."},
    {"DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %)."},
    {"DCGM_FI_DEV_MEM_COPY_UTIL", "gauge", "Memory utilization (in %)."},
    {"DCGM_FI_DEV_XID_ERRORS", "gauge", "Value of the last XID error encountered."},
    {"DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB)."},
    {"DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB)."},
    {"DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", "counter",
     "Total number of NVLink bandwidth counters for all lanes."},
};

/* A label value with \, " and newline escaped. */
static void lval(corral_buf_t *b, const char *s)
{
    const char *run = s;
    for (; *s; s++) {
        if (*s != '\\' && *s != '"' && *s != '\n')
            continue;
        corral_buf_append(b, run, (size_t)(s - run));
        corral_buf_puts(b, *s == '\n' ? "\\n" : *s == '"' ? "\\\"" : "\\\\");
        run = s + 1;
    }
    corral_buf_append(b, run, (size_t)(s - run));
}

static void label(corral_buf_t *b, const char *name, const char *v, bool first)
{
    if (!first)
        corral_buf_putc(b, ',');
    corral_buf_puts(b, name);
    corral_buf_puts(b, "=\"");
    lval(b, v ? v : "");
    corral_buf_putc(b, '"');
}

/* The label set of GPU i, pre-rendered once per scrape. */
static void gpu_labels(const corral__telem_t *t, const tgpu_t *g, corral_buf_t *b)
{
    label(b, "gpu", g->index, true);
    label(b, "UUID", g->uuid, false);
    label(b, "pci_bus_id", g->pci, false);
    label(b, "device", g->device, false);
    label(b, "modelName", g->model, false);
    label(b, "Hostname", t->host, false);
    label(b, "DCGM_FI_DRIVER_VERSION", t->driver, false);
    label(b, "container", g->ctr, false);
    label(b, "namespace", g->ns, false);
    label(b, "pod", g->pod, false);
}

static void value(corral_buf_t *b, int f, double v)
{
    if (f == CORRAL__TM_POWER_USAGE)
        corral_buf_printf(b, " %f\n", v);
    else
        corral_buf_printf(b, " %lld\n", (long long)v);
}

static int64_t mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

void corral__telem_render_dcgm(corral__telem_t *t, int64_t now_us, corral_buf_t *out)
{
    int64_t t0 = mono_us();
    pthread_mutex_lock(&t->mu);
    if (t->sim)
        advance(t, now_us);
    corral_buf_t lab[CORRAL_GPU_MAX];
    for (int i = 0; i < t->n; i++) {
        corral_buf_init(&lab[i]);
        gpu_labels(t, &t->g[i], &lab[i]);
    }
    for (int f = 0; f < CORRAL__TM_N; f++) {
        bool any = false;
        for (int i = 0; i < t->n && !any; i++)
            any = (t->g[i].s.present >> f) & 1;
        if (!any)
            continue;
        corral_buf_printf(out, "# HELP %s %s\n# TYPE %s %s\n", FIELDS[f].name, FIELDS[f].help,
                          FIELDS[f].name, FIELDS[f].type);
        for (int i = 0; i < t->n; i++) {
            if (!((t->g[i].s.present >> f) & 1))
                continue;
            corral_buf_puts(out, FIELDS[f].name);
            corral_buf_putc(out, '{');
            corral_buf_append(out, lab[i].p, lab[i].len);
            corral_buf_putc(out, '}');
            value(out, f, t->g[i].s.v[f]);
        }
    }
    for (int i = 0; i < t->n; i++)
        corral_buf_fini(&lab[i]);
    corral_buf_puts(out, "# HELP corral_agent_gpu_healthy 1 when the GPU is readable and had no "
                         "recent XID error, else 0.\n# TYPE corral_agent_gpu_healthy gauge\n");
    for (int i = 0; i < t->n; i++) {
        tgpu_t *g = &t->g[i];
        bool bad =
            g->unreadable || (g->xid_seen && now_us - g->xid_us < (int64_t)t->xid_hold_s * 1000000);
        corral_buf_printf(out, "corral_agent_gpu_healthy{gpu=\"%d\",UUID=\"%s\"} %d\n", i, g->uuid,
                          bad ? 0 : 1);
    }
    t->scrapes++;
    t->render_s += (double)(mono_us() - t0) / 1e6;
    corral_buf_printf(out,
                      "# HELP corral_agent_metrics_scrapes_total Scrapes of /metrics served.\n"
                      "# TYPE corral_agent_metrics_scrapes_total counter\n"
                      "corral_agent_metrics_scrapes_total %llu\n"
                      "# HELP corral_agent_metrics_render_seconds_total Time spent rendering "
                      "/metrics.\n# TYPE corral_agent_metrics_render_seconds_total counter\n"
                      "corral_agent_metrics_render_seconds_total %.6f\n",
                      (unsigned long long)t->scrapes, t->render_s);
    corral_metrics_t *extra = t->extra;
    pthread_mutex_unlock(&t->mu);
    if (extra)
        corral_metrics_render(extra, out);
}

void corral__telem_set_extra(corral__telem_t *t, corral_metrics_t *reg)
{
    pthread_mutex_lock(&t->mu);
    t->extra = reg;
    pthread_mutex_unlock(&t->mu);
}

static void help(corral_buf_t *b, const char *name, const char *type, const char *text)
{
    corral_buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, text, name, type);
}

/* Pods' sums: the containers of one pod are adjacent in the snapshot. */
static void pod_sums(const corral__telem_t *t, corral_buf_t *b, bool cpu, long long ms)
{
    for (size_t i = 0; i < t->nu;) {
        double sum = 0;
        size_t j = i;
        for (; j < t->nu && !strcmp(t->u[j].ns, t->u[i].ns) && !strcmp(t->u[j].pod, t->u[i].pod);
             j++)
            sum += cpu ? t->u[j].cpu_s : t->u[j].mem;
        corral_buf_puts(b, cpu ? "pod_cpu_usage_seconds_total{" : "pod_memory_working_set_bytes{");
        label(b, "namespace", t->u[i].ns, true);
        label(b, "pod", t->u[i].pod, false);
        corral_buf_printf(b, cpu ? "} %.9f %lld\n" : "} %.0f %lld\n", sum, ms);
        i = j;
    }
}

static void ctr_series(const corral__telem_t *t, corral_buf_t *b, bool cpu, long long ms)
{
    for (size_t i = 0; i < t->nu; i++) {
        corral_buf_puts(b, cpu ? "container_cpu_usage_seconds_total{"
                               : "container_memory_working_set_bytes{");
        label(b, "container", t->u[i].ctr, true);
        label(b, "namespace", t->u[i].ns, false);
        label(b, "pod", t->u[i].pod, false);
        corral_buf_printf(b, cpu ? "} %.9f %lld\n" : "} %.0f %lld\n",
                          cpu ? t->u[i].cpu_s : t->u[i].mem, ms);
    }
}

static void accel(const corral__telem_t *t, corral_buf_t *b, bool duty)
{
    for (int i = 0; i < t->n; i++) {
        const tgpu_t *g = &t->g[i];
        if (!g->pod)
            continue;
        corral_buf_puts(b, duty ? "container_accelerator_duty_cycle{"
                                : "container_accelerator_memory_used_bytes{");
        label(b, "acc_id", g->uuid, true);
        label(b, "container", g->ctr, false);
        label(b, "make", "nvidia", false);
        label(b, "model", g->model, false);
        label(b, "namespace", g->ns, false);
        label(b, "pod", g->pod, false);
        double used = (g->s.present >> CORRAL__TM_FB_USED) & 1 ? g->s.v[CORRAL__TM_FB_USED] : 0;
        corral_buf_printf(b, "} %.0f\n", duty ? g->util : used * 1048576.0);
    }
}

void corral__telem_render_resource(corral__telem_t *t, int64_t now_us, corral_buf_t *out)
{
    pthread_mutex_lock(&t->mu);
    if (t->sim)
        advance(t, now_us);
    long long ms = (long long)((t->usage_us ? t->usage_us : now_us) / 1000);
    help(out, "container_cpu_usage_seconds_total", "counter",
         "[STABLE] Cumulative cpu time consumed by the container in core-seconds");
    ctr_series(t, out, true, ms);
    help(out, "container_memory_working_set_bytes", "gauge",
         "[STABLE] Current working set of the container in bytes");
    ctr_series(t, out, false, ms);
    help(out, "node_cpu_usage_seconds_total", "counter",
         "[STABLE] Cumulative cpu time consumed by the node in core-seconds");
    corral_buf_printf(out, "node_cpu_usage_seconds_total %.9f %lld\n", t->node_cpu_s, ms);
    help(out, "node_memory_working_set_bytes", "gauge",
         "[STABLE] Current working set of the node in bytes");
    corral_buf_printf(out, "node_memory_working_set_bytes %.0f %lld\n", t->node_mem, ms);
    help(out, "pod_cpu_usage_seconds_total", "counter",
         "[STABLE] Cumulative cpu time consumed by the pod in core-seconds");
    pod_sums(t, out, true, ms);
    help(out, "pod_memory_working_set_bytes", "gauge",
         "[STABLE] Current working set of the pod in bytes");
    pod_sums(t, out, false, ms);
    help(out, "resource_scrape_error", "gauge",
         "[STABLE] 1 if there was an error while getting container metrics, 0 otherwise");
    corral_buf_puts(out, "resource_scrape_error 0\n");
    help(out, "container_accelerator_duty_cycle", "gauge",
         "Percent of time over the past sample period during which the accelerator was actively "
         "processing.");
    accel(t, out, true);
    help(out, "container_accelerator_memory_used_bytes", "gauge",
         "Total accelerator memory allocated.");
    accel(t, out, false);
    help(out, "corral_node_gpu_utilization", "gauge",
         "Utilization of each GPU of the node (0-100), held or not.");
    for (int i = 0; i < t->n; i++) {
        corral_buf_puts(out, "corral_node_gpu_utilization{");
        label(out, "gpu", t->g[i].index, true);
        label(out, "UUID", t->g[i].uuid, false);
        corral_buf_printf(out, "} %.0f\n", t->g[i].util);
    }
    pthread_mutex_unlock(&t->mu);
}
