/*
 * A fake libnvidia-ml for the unit tests (built as build/tests/fake_nvml.so
 * and loaded through CORRAL_NVML_LIB), so that the NVML code path of GPU
 * discovery runs on machines without a GPU. It implements only the entry
 * points Corral looks up, with the ABI of src/agent/nvml_abi.h, for four
 * H100s. FAKE_NVML_MODE picks the machine:
 *   pairs (default) two NVLink pairs, 0-1 and 2-3, four links each; SYS across
 *   switch          every link ends at an NVSwitch: GPUs 0-2 have 18, GPU 3 has 12
 *   pcie            no NVLink; common ancestors at every PCIe level
 *   empty           the driver sees no GPU
 *   initfail        nvmlInit fails as when the kernel module is not loaded
 *   many            65 GPUs (more than Corral takes per node)
 *   noname          nvmlDeviceGetName fails on GPU 2
 *   lost2           discovery works, then nvmlDeviceGetMemoryInfo on GPU 2
 *                   answers GPU_IS_LOST once FAKE_NVML_LOST is set
 * Telemetry: utilization (gpu 10 x index + 5, memory half that), temperature
 * 40 + index, power 100500 mW, energy 123456789 mJ, SM/memory clocks
 * 1980/2619, PCIe TX/RX 1000/2000 KB/s; nvmlDeviceGetFieldValues is absent
 * (memory temperature and NVLink are then left out); FAKE_NVML_XID=G:X makes
 * the event set report XID X on GPU G once per value set.
 * For a running process (the CLI tests): FAKE_NVML_CTL names a directory;
 * while DIR/lost exists GPU 2 answers GPU_IS_LOST (any mode), and DIR/xid
 * holding "G:X" acts as FAKE_NVML_XID.
 * FAKE_NVML_LOG, when set, names a file that gets a line per nvmlInit_v2 and
 * nvmlShutdown call, so tests can check the library is shut down again.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/nvml_abi.h"

#define NGPU 4

struct nvmlDevice_st {
    unsigned index;
};

static struct nvmlDevice_st devs[NGPU] = {{0}, {1}, {2}, {3}};

/* The exported entry points (declared for -Wmissing-prototypes). */
nvmlReturn_t nvmlInit_v2(void);
nvmlReturn_t nvmlShutdown(void);
const char *nvmlErrorString(nvmlReturn_t r);
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count);
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device);
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length);
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length);
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory);
nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci);
nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int *major, int *minor);
nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length);
nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *version);
nvmlReturn_t nvmlDeviceGetTopologyCommonAncestor(nvmlDevice_t d1, nvmlDevice_t d2,
                                                 nvmlGpuTopologyLevel_t *level);
nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t device, unsigned int link,
                                      nvmlEnableState_t *active);
nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t device, unsigned int link,
                                                 nvmlPciInfo_t *pci);
nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t *u);
nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, nvmlTemperatureSensors_t s, unsigned int *t);
nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned int *mw);
nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t d, unsigned long long *mj);
nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t d, nvmlClockType_t t, unsigned int *mhz);
nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t d, nvmlPcieUtilCounter_t c, unsigned int *v);
nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t *set);
nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set);
nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t d, unsigned long long types, nvmlEventSet_t set);
nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t *data, unsigned int ms);

static const char *mode(void)
{
    const char *m = getenv("FAKE_NVML_MODE");
    return m && *m ? m : "pairs";
}

static int is(const char *m)
{
    return strcmp(mode(), m) == 0;
}

/* DIR/name under FAKE_NVML_CTL: whether it exists, and its first line. */
static int ctl(const char *name, char *line, size_t len)
{
    const char *dir = getenv("FAKE_NVML_CTL");
    char path[4096];
    if (!dir || !*dir)
        return 0;
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *fp = fopen(path, "r");
    if (!fp)
        return 0;
    if (line && (!fgets(line, (int)len, fp)))
        line[0] = '\0';
    fclose(fp);
    return 1;
}

static void log_call(const char *what)
{
    const char *path = getenv("FAKE_NVML_LOG");
    FILE *f = path ? fopen(path, "a") : NULL;
    if (f) {
        fprintf(f, "%s\n", what);
        fclose(f);
    }
}

nvmlReturn_t nvmlInit_v2(void)
{
    log_call("init");
    return is("initfail") ? NVML_ERROR_DRIVER_NOT_LOADED : NVML_SUCCESS;
}

nvmlReturn_t nvmlShutdown(void)
{
    log_call("shutdown");
    return NVML_SUCCESS;
}

const char *nvmlErrorString(nvmlReturn_t r)
{
    switch (r) {
    case NVML_SUCCESS:
        return "Success";
    case NVML_ERROR_DRIVER_NOT_LOADED:
        return "Driver Not Loaded";
    case NVML_ERROR_INVALID_ARGUMENT:
        return "Invalid Argument";
    case NVML_ERROR_GPU_IS_LOST:
        return "GPU is lost";
    default:
        return "Unknown Error";
    }
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count)
{
    *count = is("empty") ? 0 : is("many") ? 65 : NGPU;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
    if (index >= NGPU)
        return NVML_ERROR_INVALID_ARGUMENT;
    *device = &devs[index];
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length)
{
    snprintf(uuid, length, "GPU-fa4e0000-0000-0000-0000-00000000000%u", device->index);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length)
{
    if (is("noname") && device->index == 2)
        return NVML_ERROR_GPU_IS_LOST;
    snprintf(name, length, "%s", "NVIDIA H100 80GB HBM3");
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory)
{
    if (device->index == 2 && ((is("lost2") && getenv("FAKE_NVML_LOST")) || ctl("lost", NULL, 0)))
        return NVML_ERROR_GPU_IS_LOST;
    memory->total = 81559ull << 20;
    memory->used = 512ull << 20;
    memory->free = memory->total - memory->used;
    return NVML_SUCCESS;
}

static void pci_of(unsigned bus, nvmlPciInfo_t *pci)
{
    memset(pci, 0, sizeof(*pci));
    pci->domain = 0;
    pci->bus = bus;
    pci->device = 0;
    pci->pciDeviceId = 0x233010de;
    snprintf(pci->busIdLegacy, sizeof(pci->busIdLegacy), "0000:%02X:00.0", bus);
    snprintf(pci->busId, sizeof(pci->busId), "00000000:%02X:00.0", bus);
}

static const unsigned gpu_bus[NGPU] = {0x18, 0x2a, 0x9a, 0xab};

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
    pci_of(gpu_bus[device->index], pci);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int *major, int *minor)
{
    (void)device;
    *major = 9;
    *minor = 0;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length)
{
    snprintf(version, length, "%s", "550.54.15");
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *version)
{
    *version = 12040;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetTopologyCommonAncestor(nvmlDevice_t d1, nvmlDevice_t d2,
                                                 nvmlGpuTopologyLevel_t *level)
{
    /* pcie: 0-1 one switch, 2-3 two switches, 0-2 and 1-3 one host bridge,
     * 0-3 one NUMA node, 1-2 across sockets. Other modes: pairs per socket. */
    static const int pcie[NGPU][NGPU] = {
        {0, NVML_TOPOLOGY_SINGLE, NVML_TOPOLOGY_HOSTBRIDGE, NVML_TOPOLOGY_NODE},
        {NVML_TOPOLOGY_SINGLE, 0, NVML_TOPOLOGY_SYSTEM, NVML_TOPOLOGY_HOSTBRIDGE},
        {NVML_TOPOLOGY_HOSTBRIDGE, NVML_TOPOLOGY_SYSTEM, 0, NVML_TOPOLOGY_MULTIPLE},
        {NVML_TOPOLOGY_NODE, NVML_TOPOLOGY_HOSTBRIDGE, NVML_TOPOLOGY_MULTIPLE, 0},
    };
    unsigned a = d1->index, b = d2->index;
    if (a == b)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (is("pcie"))
        *level = pcie[a][b];
    else
        *level = a / 2 == b / 2 ? NVML_TOPOLOGY_SINGLE : NVML_TOPOLOGY_SYSTEM;
    return NVML_SUCCESS;
}

/* Links per GPU in this mode, and whether a link ends at a switch. */
static unsigned nlinks(unsigned gpu)
{
    if (is("pairs") || is("noname"))
        return 4;
    if (is("switch"))
        return gpu == 3 ? 12 : 18;
    return 0;
}

nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t device, unsigned int link,
                                      nvmlEnableState_t *active)
{
    if (link >= 18)
        return NVML_ERROR_INVALID_ARGUMENT; /* as drivers answer past the last link */
    *active = link < nlinks(device->index) ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t device, unsigned int link,
                                                 nvmlPciInfo_t *pci)
{
    if (link >= nlinks(device->index))
        return NVML_ERROR_INVALID_ARGUMENT;
    if (is("switch"))
        pci_of(0xe0 + link % 4, pci); /* four NVSwitches */
    else
        pci_of(gpu_bus[device->index ^ 1u], pci);
    return NVML_SUCCESS;
}

/* --- telemetry ------------------------------------------------------------------------- */

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t *u)
{
    u->gpu = 10 * d->index + 5;
    u->memory = u->gpu / 2;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, nvmlTemperatureSensors_t s, unsigned int *t)
{
    if (s != NVML_TEMPERATURE_GPU)
        return NVML_ERROR_NOT_SUPPORTED;
    *t = 40 + d->index;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned int *mw)
{
    (void)d;
    *mw = 100500;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t d, unsigned long long *mj)
{
    (void)d;
    *mj = 123456789ull;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t d, nvmlClockType_t t, unsigned int *mhz)
{
    (void)d;
    if (t == NVML_CLOCK_SM)
        *mhz = 1980;
    else if (t == NVML_CLOCK_MEM)
        *mhz = 2619;
    else
        return NVML_ERROR_NOT_SUPPORTED;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t d, nvmlPcieUtilCounter_t c, unsigned int *v)
{
    (void)d;
    *v = c == NVML_PCIE_UTIL_TX_BYTES ? 1000 : 2000;
    return NVML_SUCCESS;
}

static int evset_token;
static char xid_sent[64];

nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t *set)
{
    *set = (nvmlEventSet_t)(void *)&evset_token;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set)
{
    (void)set;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t d, unsigned long long types, nvmlEventSet_t set)
{
    (void)d;
    (void)set;
    return types == nvmlEventTypeXidCriticalError ? NVML_SUCCESS : NVML_ERROR_NOT_SUPPORTED;
}

nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t *data, unsigned int ms)
{
    (void)set;
    (void)ms;
    const char *x = getenv("FAKE_NVML_XID");
    char line[64];
    if (ctl("xid", line, sizeof(line))) {
        line[strcspn(line, "\n")] = '\0';
        x = line;
    }
    unsigned g = 0;
    unsigned long long xid = 0;
    if (!x || !strcmp(x, xid_sent) || sscanf(x, "%u:%llu", &g, &xid) != 2 || g >= NGPU)
        return NVML_ERROR_TIMEOUT;
    snprintf(xid_sent, sizeof(xid_sent), "%s", x);
    memset(data, 0, sizeof(*data));
    data->device = &devs[g];
    data->eventType = nvmlEventTypeXidCriticalError;
    data->eventData = xid;
    return NVML_SUCCESS;
}
