/*
 * GPU readings from NVML for the agent's /metrics (telemetry.h): the calls
 * dcgm-exporter's fields come from, each looked up with dlsym and each
 * optional. A missing symbol, or an answer of NOT_SUPPORTED (or any error)
 * for one call, leaves that field out of the GPU's sample, as the exporter
 * omits blank values; only nvmlDeviceGetMemoryInfo failing makes the GPU
 * unreadable. XIDs come from an event set registered for
 * nvmlEventTypeXidCriticalError on every GPU and drained without waiting.
 * The library is loaded separately from discovery (gpu_nvml.c) and stays
 * initialised for the agent's life.
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/nvml_abi.h"
#include "agent/telemetry.h"

struct corral__nvml_tm {
    void *lib;
    int n;
    nvmlDevice_t dev[CORRAL_GPU_MAX];
    bool have[CORRAL_GPU_MAX];
    nvml_init_fn init;
    nvml_shutdown_fn shutdown;
    nvml_handle_fn handle;
    nvml_memory_fn memory;
    nvml_errstr_fn errstr;
    nvml_util_fn util;
    nvml_temp_fn temp;
    nvml_uint_fn power;
    nvml_ull_fn energy;
    nvml_clock_fn clock;
    nvml_pcie_fn pcie;
    nvml_fields_fn fields;
    nvml_evset_new_fn evset_new;
    nvml_evset_free_fn evset_free;
    nvml_ev_register_fn ev_register;
    nvml_ev_wait_fn ev_wait;
    nvmlEventSet_t events;
};

/* ISO C has no cast from void * to a function pointer; POSIX guarantees it. */
#define SYM(h, field, name) memcpy(&(h)->field, &(void *){dlsym((h)->lib, name)}, sizeof(void *))

static void *load(void)
{
    const char *env = getenv("CORRAL_NVML_LIB");
    if (env && *env)
        return dlopen(env, RTLD_NOW | RTLD_LOCAL);
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    return lib ? lib : dlopen("libnvidia-ml.so", RTLD_NOW | RTLD_LOCAL);
}

static void syms(corral__nvml_tm_t *h)
{
    SYM(h, init, "nvmlInit_v2");
    SYM(h, shutdown, "nvmlShutdown");
    SYM(h, handle, "nvmlDeviceGetHandleByIndex_v2");
    SYM(h, memory, "nvmlDeviceGetMemoryInfo");
    SYM(h, errstr, "nvmlErrorString");
    SYM(h, util, "nvmlDeviceGetUtilizationRates");
    SYM(h, temp, "nvmlDeviceGetTemperature");
    SYM(h, power, "nvmlDeviceGetPowerUsage");
    SYM(h, energy, "nvmlDeviceGetTotalEnergyConsumption");
    SYM(h, clock, "nvmlDeviceGetClockInfo");
    SYM(h, pcie, "nvmlDeviceGetPcieThroughput");
    SYM(h, fields, "nvmlDeviceGetFieldValues");
    SYM(h, evset_new, "nvmlEventSetCreate");
    SYM(h, evset_free, "nvmlEventSetFree");
    SYM(h, ev_register, "nvmlDeviceRegisterEvents");
    SYM(h, ev_wait, "nvmlEventSetWait_v2");
}

corral__nvml_tm_t *corral__nvml_tm_open(int n, char *err, size_t errlen)
{
    corral__nvml_tm_t *h = corral_calloc(1, sizeof(*h));
    h->lib = load();
    if (!h->lib) {
        snprintf(err, errlen, "NVML: cannot load the library for telemetry");
        corral_free(h);
        return NULL;
    }
    syms(h);
    nvmlReturn_t r = NVML_ERROR_FUNCTION_NOT_FOUND;
    if (!h->init || !h->shutdown || !h->handle || !h->memory || (r = h->init()) != NVML_SUCCESS) {
        snprintf(err, errlen, "NVML: telemetry init failed (%d)", r);
        dlclose(h->lib);
        corral_free(h);
        return NULL;
    }
    h->n = n < CORRAL_GPU_MAX ? n : CORRAL_GPU_MAX;
    for (int i = 0; i < h->n; i++)
        h->have[i] = h->handle((unsigned)i, &h->dev[i]) == NVML_SUCCESS;
    if (h->evset_new && h->ev_register && h->ev_wait && h->evset_new(&h->events) == NVML_SUCCESS) {
        for (int i = 0; i < h->n; i++)
            if (h->have[i])
                h->ev_register(h->dev[i], nvmlEventTypeXidCriticalError, h->events);
    } else {
        h->events = NULL;
    }
    return h;
}

void corral__nvml_tm_close(corral__nvml_tm_t *h)
{
    if (!h)
        return;
    if (h->events && h->evset_free)
        h->evset_free(h->events);
    h->shutdown();
    dlclose(h->lib);
    corral_free(h);
}

static void put(corral__gpu_sample_t *s, int f, double v)
{
    s->present |= 1u << f;
    s->v[f] = v;
}

/* Memory temperature and NVLink traffic come as field values. */
static void read_fields(const corral__nvml_tm_t *h, nvmlDevice_t d, corral__gpu_sample_t *s)
{
    if (!h->fields)
        return;
    nvmlFieldValue_t fv[3];
    memset(fv, 0, sizeof(fv));
    fv[0].fieldId = NVML_FI_DEV_MEMORY_TEMP;
    fv[1].fieldId = NVML_FI_DEV_NVLINK_THROUGHPUT_RAW_TX;
    fv[1].scopeId = UINT_MAX;
    fv[2].fieldId = NVML_FI_DEV_NVLINK_THROUGHPUT_RAW_RX;
    fv[2].scopeId = UINT_MAX;
    if (h->fields(d, 3, fv) != NVML_SUCCESS)
        return;
    double v[3];
    for (int i = 0; i < 3; i++) {
        switch (fv[i].valueType) {
        case NVML_VALUE_TYPE_DOUBLE:
            v[i] = fv[i].value.dVal;
            break;
        case NVML_VALUE_TYPE_UNSIGNED_INT:
            v[i] = fv[i].value.uiVal;
            break;
        case NVML_VALUE_TYPE_SIGNED_INT:
            v[i] = fv[i].value.siVal;
            break;
        case NVML_VALUE_TYPE_SIGNED_LONG_LONG:
            v[i] = (double)fv[i].value.sllVal;
            break;
        default:
            v[i] = (double)fv[i].value.ullVal;
        }
    }
    if (fv[0].nvmlReturn == NVML_SUCCESS)
        put(s, CORRAL__TM_MEMORY_TEMP, v[0]);
    if (fv[1].nvmlReturn == NVML_SUCCESS && fv[2].nvmlReturn == NVML_SUCCESS)
        put(s, CORRAL__TM_NVLINK_TOTAL, v[1] + v[2]);
}

bool corral__nvml_tm_read(corral__nvml_tm_t *h, int i, corral__gpu_sample_t *s, char *why,
                          size_t whylen)
{
    s->present = 0;
    if (i < 0 || i >= h->n || !h->have[i]) {
        snprintf(why, whylen, "no NVML handle");
        return false;
    }
    nvmlDevice_t d = h->dev[i];
    nvmlMemory_t mem;
    nvmlReturn_t r = h->memory(d, &mem);
    if (r != NVML_SUCCESS) {
        const char *e = h->errstr ? h->errstr(r) : NULL;
        snprintf(why, whylen, "%s", e ? e : "NVML error");
        return false;
    }
    put(s, CORRAL__TM_FB_USED, (double)(mem.used >> 20));
    put(s, CORRAL__TM_FB_FREE, (double)(mem.free >> 20));
    nvmlUtilization_t u;
    if (h->util && h->util(d, &u) == NVML_SUCCESS) {
        put(s, CORRAL__TM_GPU_UTIL, u.gpu);
        put(s, CORRAL__TM_MEM_COPY_UTIL, u.memory);
    }
    unsigned v = 0;
    unsigned long long e = 0;
    if (h->temp && h->temp(d, NVML_TEMPERATURE_GPU, &v) == NVML_SUCCESS)
        put(s, CORRAL__TM_GPU_TEMP, v);
    if (h->power && h->power(d, &v) == NVML_SUCCESS)
        put(s, CORRAL__TM_POWER_USAGE, v / 1000.0); /* mW -> W */
    if (h->energy && h->energy(d, &e) == NVML_SUCCESS)
        put(s, CORRAL__TM_TOTAL_ENERGY, (double)e);
    if (h->clock && h->clock(d, NVML_CLOCK_SM, &v) == NVML_SUCCESS)
        put(s, CORRAL__TM_SM_CLOCK, v);
    if (h->clock && h->clock(d, NVML_CLOCK_MEM, &v) == NVML_SUCCESS)
        put(s, CORRAL__TM_MEM_CLOCK, v);
    if (h->pcie && h->pcie(d, NVML_PCIE_UTIL_TX_BYTES, &v) == NVML_SUCCESS)
        put(s, CORRAL__TM_PCIE_TX, v);
    if (h->pcie && h->pcie(d, NVML_PCIE_UTIL_RX_BYTES, &v) == NVML_SUCCESS)
        put(s, CORRAL__TM_PCIE_RX, v);
    read_fields(h, d, s);
    return true;
}

bool corral__nvml_tm_xid(corral__nvml_tm_t *h, int *gpu, uint64_t *xid)
{
    if (!h->events)
        return false;
    for (int guard = 0; guard < 1024; guard++) {
        nvmlEventData_t ev;
        memset(&ev, 0, sizeof(ev));
        if (h->ev_wait(h->events, &ev, 0) != NVML_SUCCESS)
            return false;
        if (!(ev.eventType & nvmlEventTypeXidCriticalError))
            continue;
        for (int i = 0; i < h->n; i++) {
            if (h->have[i] && h->dev[i] == ev.device) {
                *gpu = i;
                *xid = ev.eventData;
                return true;
            }
        }
    }
    return false;
}
