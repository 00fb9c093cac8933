/*
 * The small part of NVML's C ABI that Corral uses, written from NVIDIA's
 * public nvml.h (API version 13; the layouts below have not changed since
 * the _v2/_v3 entry points appeared). Corral never includes nvml.h and never
 * links libnvidia-ml at build time: gpu_nvml.c looks these symbols up with
 * dlsym, and tests/agent/fake_nvml.c implements them for the unit tests.
 * Keep every type and constant here byte-for-byte what upstream declares.
 */
#ifndef CORRAL_AGENT_NVML_ABI_H
#define CORRAL_AGENT_NVML_ABI_H

typedef int nvmlReturn_t; /* enum nvmlReturn_enum */
enum {
    NVML_SUCCESS = 0,
    NVML_ERROR_UNINITIALIZED = 1,
    NVML_ERROR_INVALID_ARGUMENT = 2,
    NVML_ERROR_NOT_SUPPORTED = 3,
    NVML_ERROR_NO_PERMISSION = 4,
    NVML_ERROR_NOT_FOUND = 6,
    NVML_ERROR_INSUFFICIENT_SIZE = 7,
    NVML_ERROR_DRIVER_NOT_LOADED = 9,
    NVML_ERROR_LIBRARY_NOT_FOUND = 12,
    NVML_ERROR_FUNCTION_NOT_FOUND = 13,
    NVML_ERROR_GPU_IS_LOST = 15,
    NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18,
    NVML_ERROR_UNKNOWN = 999,
};

typedef struct nvmlDevice_st *nvmlDevice_t;

#define NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE     32
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE  16
#define NVML_DEVICE_UUID_V2_BUFFER_SIZE        96
#define NVML_DEVICE_NAME_V2_BUFFER_SIZE        96
#define NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE 80
#define NVML_NVLINK_MAX_LINKS                  36

typedef struct nvmlPciInfo_st {
    char busIdLegacy[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE];
    unsigned int domain;
    unsigned int bus;
    unsigned int device;
    unsigned int pciDeviceId;
    unsigned int pciSubSystemId;
    char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];
} nvmlPciInfo_t;

typedef struct nvmlMemory_st {
    unsigned long long total;
    unsigned long long free;
    unsigned long long used;
} nvmlMemory_t;

typedef int nvmlGpuTopologyLevel_t; /* enum nvmlGpuLevel_enum */
enum {
    NVML_TOPOLOGY_INTERNAL = 0,
    NVML_TOPOLOGY_SINGLE = 10,
    NVML_TOPOLOGY_MULTIPLE = 20,
    NVML_TOPOLOGY_HOSTBRIDGE = 30,
    NVML_TOPOLOGY_NODE = 40,
    NVML_TOPOLOGY_SYSTEM = 50,
};

typedef int nvmlEnableState_t; /* enum nvmlEnableState_enum */
enum { NVML_FEATURE_DISABLED = 0, NVML_FEATURE_ENABLED = 1 };

#define NVML_CUDA_DRIVER_VERSION_MAJOR(v) ((v) / 1000)
#define NVML_CUDA_DRIVER_VERSION_MINOR(v) (((v) % 1000) / 10)

/* The entry points, as function pointer types (the names dlsym looks up). */
typedef nvmlReturn_t (*nvml_init_fn)(void);                 /* nvmlInit_v2 */
typedef nvmlReturn_t (*nvml_shutdown_fn)(void);             /* nvmlShutdown */
typedef nvmlReturn_t (*nvml_count_fn)(unsigned int *count); /* nvmlDeviceGetCount_v2 */
typedef nvmlReturn_t (*nvml_handle_fn)(unsigned int index,
                                       nvmlDevice_t *device); /* nvmlDeviceGetHandleByIndex_v2 */
typedef nvmlReturn_t (*nvml_str_fn)(nvmlDevice_t device, char *buf,
                                    unsigned int length); /* nvmlDeviceGetUUID, ...GetName */
typedef nvmlReturn_t (*nvml_memory_fn)(nvmlDevice_t device,
                                       nvmlMemory_t *memory); /* nvmlDeviceGetMemoryInfo */
typedef nvmlReturn_t (*nvml_pci_fn)(nvmlDevice_t device,
                                    nvmlPciInfo_t *pci); /* nvmlDeviceGetPciInfo_v3 */
typedef nvmlReturn_t (*nvml_cc_fn)(nvmlDevice_t device, int *major,
                                   int *minor); /* nvmlDeviceGetCudaComputeCapability */
typedef nvmlReturn_t (*nvml_sysstr_fn)(char *buf,
                                       unsigned int length); /* nvmlSystemGetDriverVersion */
typedef nvmlReturn_t (*nvml_cudaver_fn)(int *version);       /* nvmlSystemGetCudaDriverVersion_v2 */
typedef nvmlReturn_t (*nvml_ancestor_fn)(
    nvmlDevice_t d1, nvmlDevice_t d2,
    nvmlGpuTopologyLevel_t *level); /* nvmlDeviceGetTopologyCommonAncestor */
typedef nvmlReturn_t (*nvml_link_state_fn)(
    nvmlDevice_t device, unsigned int link,
    nvmlEnableState_t *active); /* nvmlDeviceGetNvLinkState */
typedef nvmlReturn_t (*nvml_link_pci_fn)(
    nvmlDevice_t device, unsigned int link,
    nvmlPciInfo_t *pci);                               /* nvmlDeviceGetNvLinkRemotePciInfo_v2 */
typedef const char *(*nvml_errstr_fn)(nvmlReturn_t r); /* nvmlErrorString */

/* --- telemetry (nvml_telem.c): each of these is optional --------------------------- */

enum { NVML_ERROR_TIMEOUT = 10 };

typedef struct nvmlUtilization_st {
    unsigned int gpu;
    unsigned int memory;
} nvmlUtilization_t;

typedef int nvmlTemperatureSensors_t; /* enum nvmlTemperatureSensors_enum */
enum { NVML_TEMPERATURE_GPU = 0 };

typedef int nvmlClockType_t; /* enum nvmlClockType_enum */
enum { NVML_CLOCK_GRAPHICS = 0, NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2 };

typedef int nvmlPcieUtilCounter_t; /* enum nvmlPcieUtilCounter_enum */
enum { NVML_PCIE_UTIL_TX_BYTES = 0, NVML_PCIE_UTIL_RX_BYTES = 1 };

typedef struct nvmlEventSet_st *nvmlEventSet_t;

#define nvmlEventTypeXidCriticalError 0x0000000000000008LL

typedef struct nvmlEventData_st {
    nvmlDevice_t device;
    unsigned long long eventType;
    unsigned long long eventData; /* the XID */
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
} nvmlEventData_t;

typedef int nvmlValueType_t; /* enum nvmlValueType_enum */
enum {
    NVML_VALUE_TYPE_DOUBLE = 0,
    NVML_VALUE_TYPE_UNSIGNED_INT = 1,
    NVML_VALUE_TYPE_UNSIGNED_LONG = 2,
    NVML_VALUE_TYPE_UNSIGNED_LONG_LONG = 3,
    NVML_VALUE_TYPE_SIGNED_LONG_LONG = 4,
    NVML_VALUE_TYPE_SIGNED_INT = 5
};

typedef union nvmlValue_st {
    double dVal;
    unsigned int uiVal;
    unsigned long ulVal;
    unsigned long long ullVal;
    signed long long sllVal;
    signed int siVal;
} nvmlValue_t;

typedef struct nvmlFieldValue_st {
    unsigned int fieldId;
    unsigned int scopeId;
    long long timestamp;
    long long latencyUsec;
    nvmlValueType_t valueType;
    nvmlReturn_t nvmlReturn;
    nvmlValue_t value;
} nvmlFieldValue_t;

#define NVML_FI_DEV_MEMORY_TEMP              82
#define NVML_FI_DEV_NVLINK_THROUGHPUT_RAW_TX 140 /* KiB, scopeId UINT_MAX: all links */
#define NVML_FI_DEV_NVLINK_THROUGHPUT_RAW_RX 141

typedef nvmlReturn_t (*nvml_util_fn)(nvmlDevice_t d,
                                     nvmlUtilization_t *u); /* nvmlDeviceGetUtilizationRates */
typedef nvmlReturn_t (*nvml_temp_fn)(nvmlDevice_t d, nvmlTemperatureSensors_t s,
                                     unsigned int *t); /* nvmlDeviceGetTemperature */
typedef nvmlReturn_t (*nvml_uint_fn)(nvmlDevice_t d, unsigned int *v); /* ...GetPowerUsage */
typedef nvmlReturn_t (*nvml_ull_fn)(nvmlDevice_t d,
                                    unsigned long long *v); /* ...GetTotalEnergyConsumption */
typedef nvmlReturn_t (*nvml_clock_fn)(nvmlDevice_t d, nvmlClockType_t t,
                                      unsigned int *mhz); /* nvmlDeviceGetClockInfo */
typedef nvmlReturn_t (*nvml_pcie_fn)(nvmlDevice_t d, nvmlPcieUtilCounter_t c,
                                     unsigned int *kbps); /* nvmlDeviceGetPcieThroughput */
typedef nvmlReturn_t (*nvml_fields_fn)(nvmlDevice_t d, int n,
                                       nvmlFieldValue_t *v);    /* nvmlDeviceGetFieldValues */
typedef nvmlReturn_t (*nvml_evset_new_fn)(nvmlEventSet_t *set); /* nvmlEventSetCreate */
typedef nvmlReturn_t (*nvml_evset_free_fn)(nvmlEventSet_t set); /* nvmlEventSetFree */
typedef nvmlReturn_t (*nvml_ev_register_fn)(nvmlDevice_t d, unsigned long long types,
                                            nvmlEventSet_t set); /* nvmlDeviceRegisterEvents */
typedef nvmlReturn_t (*nvml_ev_wait_fn)(nvmlEventSet_t set, nvmlEventData_t *data,
                                        unsigned int timeout_ms); /* nvmlEventSetWait_v2 */

#endif
