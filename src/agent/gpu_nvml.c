/*
 * GPU discovery through NVML, the management library every NVIDIA driver
 * installs. It is loaded with dlopen at run time (libnvidia-ml.so.1, else
 * libnvidia-ml.so; CORRAL_NVML_LIB names another file, which the tests use
 * for a fake), so Corral builds and runs on machines without the driver, and
 * there the agent gets a clear error or falls back to a simulated profile.
 *
 * Besides count, UUID, name, memory and PCI bus id, it builds the link
 * matrix `nvidia-smi topo -m` prints: NV<n> when n active NVLinks join two
 * GPUs (on an NVSwitch system each GPU's links end at switches, and two such
 * GPUs count as joined by the smaller of their link counts), otherwise the
 * PCIe level of their closest common ancestor.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/gpu_int.h"
#include "agent/nvml_abi.h"
#include "corral/buf.h"

#define SIM_HINT "use --gpus sim:h100-sxm-8 to simulate"

typedef struct nvml {
    void *lib;
    const char *libname;
    nvml_init_fn init;
    nvml_shutdown_fn shutdown;
    nvml_count_fn count;
    nvml_handle_fn handle;
    nvml_str_fn uuid, name;
    nvml_memory_fn memory;
    nvml_pci_fn pci;
    nvml_errstr_fn errstr;
    /* optional: absent in old drivers, or not needed to run pods */
    nvml_cc_fn cc;
    nvml_sysstr_fn driver;
    nvml_cudaver_fn cudaver;
    nvml_ancestor_fn ancestor;
    nvml_link_state_fn link_state;
    nvml_link_pci_fn link_pci;
} nvml_t;

/* ISO C has no cast from void * to a function pointer; POSIX guarantees the
 * representation is the same (dlsym depends on it). */
#define SYM(n, field, name) memcpy(&(n)->field, &(void *){dlsym((n)->lib, name)}, sizeof(void *))

static const char *errstr(const nvml_t *n, nvmlReturn_t r)
{
    const char *s = n->errstr ? n->errstr(r) : NULL;
    return s ? s : "unknown NVML error";
}

static int nvml_open(nvml_t *n, char *err, size_t errlen)
{
    const char *env = getenv("CORRAL_NVML_LIB");
    static const char *const names[] = {"libnvidia-ml.so.1", "libnvidia-ml.so"};
    if (env && *env) {
        n->lib = dlopen(env, RTLD_NOW | RTLD_LOCAL);
        n->libname = env;
        if (!n->lib) {
            const char *why = dlerror();
            corral__gpu_err(err, errlen, "NVML: cannot load %s (from CORRAL_NVML_LIB): %s; %s", env,
                            why ? why : "dlopen failed", SIM_HINT);
            return CORRAL_ENOENT;
        }
    }
    for (size_t i = 0; !n->lib && i < CORRAL_ARRAY_LEN(names); i++) {
        n->lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        n->libname = names[i];
    }
    if (!n->lib) {
        corral__gpu_err(err, errlen, "NVML: libnvidia-ml.so.1 not found (no NVIDIA driver?); %s",
                        SIM_HINT);
        return CORRAL_ENOENT;
    }
    SYM(n, init, "nvmlInit_v2");
    SYM(n, shutdown, "nvmlShutdown");
    SYM(n, count, "nvmlDeviceGetCount_v2");
    SYM(n, handle, "nvmlDeviceGetHandleByIndex_v2");
    SYM(n, uuid, "nvmlDeviceGetUUID");
    SYM(n, name, "nvmlDeviceGetName");
    SYM(n, memory, "nvmlDeviceGetMemoryInfo");
    SYM(n, pci, "nvmlDeviceGetPciInfo_v3");
    SYM(n, errstr, "nvmlErrorString");
    SYM(n, cc, "nvmlDeviceGetCudaComputeCapability");
    SYM(n, driver, "nvmlSystemGetDriverVersion");
    SYM(n, cudaver, "nvmlSystemGetCudaDriverVersion_v2");
    SYM(n, ancestor, "nvmlDeviceGetTopologyCommonAncestor");
    SYM(n, link_state, "nvmlDeviceGetNvLinkState");
    SYM(n, link_pci, "nvmlDeviceGetNvLinkRemotePciInfo_v2");
    static const char *const required[] = {"nvmlInit_v2",
                                           "nvmlShutdown",
                                           "nvmlDeviceGetCount_v2",
                                           "nvmlDeviceGetHandleByIndex_v2",
                                           "nvmlDeviceGetUUID",
                                           "nvmlDeviceGetName",
                                           "nvmlDeviceGetMemoryInfo",
                                           "nvmlDeviceGetPciInfo_v3",
                                           "nvmlErrorString"};
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(required); i++) {
        if (!dlsym(n->lib, required[i])) {
            corral__gpu_err(err, errlen,
                            "NVML: %s has no %s (driver too old? Corral needs R418 or newer); %s",
                            n->libname, required[i], SIM_HINT);
            return CORRAL_EUNSUPPORTED;
        }
    }
    return 0;
}

static const char *level_cell(nvmlGpuTopologyLevel_t level)
{
    switch (level) {
    case NVML_TOPOLOGY_INTERNAL: /* two GPUs on one board (K80): an on-board switch */
    case NVML_TOPOLOGY_SINGLE:
        return "PIX";
    case NVML_TOPOLOGY_MULTIPLE:
        return "PXB";
    case NVML_TOPOLOGY_HOSTBRIDGE:
        return "PHB";
    case NVML_TOPOLOGY_NODE:
        return "NODE";
    default:
        return "SYS";
    }
}

/* Count each GPU's active NVLinks: to each peer GPU (direct) and to anything
 * that is not one of the node's GPUs, i.e. NVSwitches (sw). */
static void count_links(const nvml_t *n, nvmlDevice_t *dev, const nvmlPciInfo_t *pci, int count,
                        int direct[][CORRAL_GPU_MAX], int *sw)
{
    if (!n->link_state || !n->link_pci)
        return;
    for (int i = 0; i < count; i++) {
        for (unsigned l = 0; l < NVML_NVLINK_MAX_LINKS; l++) {
            nvmlEnableState_t on = NVML_FEATURE_DISABLED;
            if (n->link_state(dev[i], l, &on) != NVML_SUCCESS || on != NVML_FEATURE_ENABLED)
                continue;
            nvmlPciInfo_t rp;
            memset(&rp, 0, sizeof(rp));
            if (n->link_pci(dev[i], l, &rp) != NVML_SUCCESS)
                continue;
            int peer = -1;
            for (int j = 0; j < count && peer < 0; j++) {
                if (j != i && pci[j].domain == rp.domain && pci[j].bus == rp.bus &&
                    pci[j].device == rp.device)
                    peer = j;
            }
            if (peer >= 0)
                direct[i][peer]++;
            else
                sw[i]++;
        }
    }
}

static char *build_matrix(const nvml_t *n, nvmlDevice_t *dev, const nvmlPciInfo_t *pci, int count)
{
    int(*direct)[CORRAL_GPU_MAX] = corral_calloc(CORRAL_GPU_MAX, sizeof(*direct));
    int sw[CORRAL_GPU_MAX] = {0};
    count_links(n, dev, pci, count, direct, sw);
    corral_buf_t b;
    corral_buf_init(&b);
    for (int i = 0; i < count; i++) {
        for (int j = 0; j < count; j++) {
            if (j)
                corral_buf_puts(&b, ",");
            int d = direct[i][j] > direct[j][i] ? direct[i][j] : direct[j][i];
            if (i == j) {
                corral_buf_puts(&b, "X");
            } else if (d > 0) {
                corral_buf_printf(&b, "NV%d", d);
            } else if (sw[i] > 0 && sw[j] > 0) {
                corral_buf_printf(&b, "NV%d", sw[i] < sw[j] ? sw[i] : sw[j]);
            } else {
                nvmlGpuTopologyLevel_t lv = NVML_TOPOLOGY_SYSTEM;
                if (!n->ancestor || n->ancestor(dev[i], dev[j], &lv) != NVML_SUCCESS)
                    lv = NVML_TOPOLOGY_SYSTEM;
                corral_buf_puts(&b, level_cell(lv));
            }
        }
        if (i + 1 < count)
            corral_buf_puts(&b, ";");
    }
    char *s = corral_strdup(corral_buf_str(&b));
    corral_buf_fini(&b);
    corral_free(direct);
    return s;
}

static int read_gpu(const nvml_t *n, unsigned i, nvmlDevice_t *dev, nvmlPciInfo_t *pci,
                    corral_gpu_inventory_t *out, char *err, size_t errlen)
{
    corral_gpu_t *g = &out->gpus[i];
    char buf[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = "";
    nvmlMemory_t mem;
    memset(&mem, 0, sizeof(mem));
    memset(pci, 0, sizeof(*pci));
    const char *call = "nvmlDeviceGetHandleByIndex_v2";
    nvmlReturn_t r = n->handle(i, dev);
    if (r != NVML_SUCCESS)
        goto fail;
    call = "nvmlDeviceGetUUID";
    if ((r = n->uuid(*dev, buf, sizeof(buf))) != NVML_SUCCESS)
        goto fail;
    buf[sizeof(buf) - 1] = '\0';
    corral__gpu_copy(g->uuid, sizeof(g->uuid), buf);
    call = "nvmlDeviceGetName";
    if ((r = n->name(*dev, buf, sizeof(buf))) != NVML_SUCCESS)
        goto fail;
    buf[sizeof(buf) - 1] = '\0';
    corral__gpu_copy(g->name, sizeof(g->name), buf);
    call = "nvmlDeviceGetMemoryInfo";
    if ((r = n->memory(*dev, &mem)) != NVML_SUCCESS)
        goto fail;
    g->memory_mib = mem.total >> 20;
    call = "nvmlDeviceGetPciInfo_v3";
    if ((r = n->pci(*dev, pci)) != NVML_SUCCESS)
        goto fail;
    pci->busId[sizeof(pci->busId) - 1] = '\0';
    corral__gpu_copy(g->pci_bus_id, sizeof(g->pci_bus_id), pci->busId);
    g->index = (int)i;
    int major = 0, minor = 0;
    if (i == 0 && n->cc && n->cc(*dev, &major, &minor) == NVML_SUCCESS) {
        out->compute_major = major;
        out->compute_minor = minor;
    }
    return 0;
fail:
    corral__gpu_err(err, errlen, "NVML: GPU %u: %s: %s", i, call, errstr(n, r));
    return CORRAL_EIO;
}

static void read_system(const nvml_t *n, corral_gpu_inventory_t *out)
{
    char buf[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE];
    if (n->driver && n->driver(buf, sizeof(buf)) == NVML_SUCCESS) {
        buf[sizeof(buf) - 1] = '\0';
        corral__gpu_copy(out->driver_version, sizeof(out->driver_version), buf);
    }
    int v = 0;
    if (n->cudaver && n->cudaver(&v) == NVML_SUCCESS && v > 0) {
        out->cuda_major = NVML_CUDA_DRIVER_VERSION_MAJOR(v);
        out->cuda_minor = NVML_CUDA_DRIVER_VERSION_MINOR(v);
    }
    /* GFD's nvidia.com/gpu.machine: the DMI product name ("DGX H100"). */
    FILE *f = fopen("/sys/class/dmi/id/product_name", "r");
    if (f) {
        char line[64] = "";
        if (fgets(line, sizeof(line), f))
            line[strcspn(line, "\n")] = '\0';
        fclose(f);
        corral__gpu_copy(out->machine, sizeof(out->machine), line);
    }
}

static int read_all(const nvml_t *n, corral_gpu_inventory_t *out, char *err, size_t errlen)
{
    unsigned count = 0;
    nvmlReturn_t r = n->count(&count);
    if (r != NVML_SUCCESS) {
        corral__gpu_err(err, errlen, "NVML: nvmlDeviceGetCount: %s", errstr(n, r));
        return CORRAL_EIO;
    }
    if (count > CORRAL_GPU_MAX) {
        corral__gpu_err(err, errlen, "NVML reports %u GPUs; Corral handles at most %d per node",
                        count, CORRAL_GPU_MAX);
        return CORRAL_ETOOBIG;
    }
    nvmlDevice_t dev[CORRAL_GPU_MAX];
    nvmlPciInfo_t pci[CORRAL_GPU_MAX];
    for (unsigned i = 0; i < count; i++) {
        int rc = read_gpu(n, i, &dev[i], &pci[i], out, err, errlen);
        if (rc != 0)
            return rc;
    }
    out->n = (int)count;
    read_system(n, out);
    if (count > 0)
        out->topology = build_matrix(n, dev, pci, (int)count);
    return 0;
}

int corral__gpu_nvml_discover(corral_gpu_inventory_t *out, char *err, size_t errlen)
{
    nvml_t n;
    memset(&n, 0, sizeof(n));
    corral_free(out->topology);
    memset(out, 0, sizeof(*out));
    corral__gpu_copy(out->source, sizeof(out->source), "nvml");
    int rc = nvml_open(&n, err, errlen);
    if (rc == 0) {
        nvmlReturn_t r = n.init();
        if (r != NVML_SUCCESS) {
            corral__gpu_err(err, errlen,
                            "NVML: nvmlInit failed: %s (is the NVIDIA driver loaded? try "
                            "nvidia-smi); %s",
                            errstr(&n, r), SIM_HINT);
            rc = CORRAL_EIO;
        } else {
            rc = read_all(&n, out, err, errlen);
            n.shutdown();
        }
    }
    if (n.lib)
        dlclose(n.lib);
    if (rc != 0) {
        corral_free(out->topology);
        out->topology = NULL;
        out->n = 0;
    }
    return rc;
}
