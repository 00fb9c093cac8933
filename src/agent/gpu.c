/*
 * GPU discovery, the common part: the --gpus spec ("nvml", "sim:PROFILE",
 * "auto", "none") dispatched to a backend, the fields every backend derives
 * the same way (GFD product and family), the GPU Feature Discovery labels the
 * agent puts on its Node, and the human-readable inventory `corral agent
 * --print-gpus` shows. Label names and values follow NVIDIA's
 * gpu-feature-discovery (k8s-device-plugin), so that node selectors written
 * for a GPU Operator cluster work unchanged.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "agent/gpu_int.h"
#include "corral/buf.h"
#include "corral/diag.h"
#include "corral/hint.h"
#include "corral/io.h"

#define AUTO_FALLBACK "h100-sxm-8"

void corral__gpu_err(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || errlen == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

void corral__gpu_copy(char *dst, size_t cap, const char *src)
{
    if (cap == 0)
        return;
    size_t n = src ? strnlen(src, cap - 1) : 0;
    if (n)
        memcpy(dst, src, n);
    dst[n] = '\0';
}

const char *corral_gpu_family(int major, int minor)
{
    switch (major) {
    case 1:
        return "tesla";
    case 2:
        return "fermi";
    case 3:
        return "kepler";
    case 5:
        return "maxwell";
    case 6:
        return "pascal";
    case 7:
        return minor < 5 ? "volta" : "turing";
    case 8:
        return minor < 9 ? "ampere" : "ada-lovelace";
    case 9:
        return "hopper";
    case 10:
    case 12:
        return "blackwell";
    default:
        return "undefined";
    }
}

/* A Kubernetes label value from free text the way GFD makes one: spaces become
 * '-', characters a label value cannot hold are dropped, at most 63 characters,
 * starting and ending with a letter or digit. */
void corral__gpu_label_value(char *dst, size_t cap, const char *src)
{
    size_t n = 0;
    size_t max = cap - 1 < 63 ? cap - 1 : 63;
    for (const char *p = src; *p && n < max; p++) {
        unsigned char c = (unsigned char)*p;
        if (c == ' ')
            c = '-';
        if (!isalnum(c) && c != '-' && c != '_' && c != '.')
            continue;
        if (n == 0 && !isalnum(c))
            continue;
        dst[n++] = (char)c;
    }
    while (n > 0 && !isalnum((unsigned char)dst[n - 1]))
        n--;
    dst[n] = '\0';
}

void corral__gpu_finish(corral_gpu_inventory_t *inv)
{
    for (int i = 0; i < inv->n; i++)
        inv->gpus[i].index = i;
    if (inv->n > 0 && !inv->product[0])
        corral__gpu_label_value(inv->product, sizeof(inv->product), inv->gpus[0].name);
    if (inv->n > 0 && !inv->family[0] && inv->compute_major > 0)
        corral__gpu_copy(inv->family, sizeof(inv->family),
                         corral_gpu_family(inv->compute_major, inv->compute_minor));
    char m[sizeof(inv->machine)] = "";
    corral__gpu_label_value(m, sizeof(m), inv->machine);
    memcpy(inv->machine, m, sizeof(m));
}

void corral_gpu_inventory_fini(corral_gpu_inventory_t *inv)
{
    if (!inv)
        return;
    corral_free(inv->topology);
    memset(inv, 0, sizeof(*inv));
}

static bool is_builtin(const char *name)
{
    for (size_t i = 0; corral_gpu_sim_profiles[i]; i++) {
        if (strcmp(corral_gpu_sim_profiles[i], name) == 0)
            return true;
    }
    return false;
}

static int discover_file(const char *path, const char *node_name, corral_gpu_inventory_t *out,
                         char *err, size_t errlen)
{
    corral_diag_t d;
    corral_diag_init(&d);
    char *text = NULL;
    size_t len = 0;
    int rc = corral_file_read(path, CORRAL_GPU_PROFILE_MAX_BYTES, &d, &text, &len);
    if (rc != 0) {
        corral_buf_t b;
        corral_buf_init(&b);
        if (d.n > 0)
            corral_diag_format(&d.items[0], &b);
        size_t nb = 0;
        while (corral_gpu_sim_profiles[nb])
            nb++;
        const char *near = corral_hint_closest(path, corral_gpu_sim_profiles, nb);
        for (size_t i = 0; !near && *path && i < nb; i++) {
            if (strncmp(corral_gpu_sim_profiles[i], path, strlen(path)) == 0)
                near = corral_gpu_sim_profiles[i]; /* "h100" for "h100-sxm-8" */
        }
        if (near)
            corral__gpu_err(err, errlen, "GPU profile %s; did you mean the built-in sim:%s?",
                            corral_buf_str(&b), near);
        else
            corral__gpu_err(err, errlen, "GPU profile %s (built-in profiles: %s)",
                            corral_buf_str(&b), "h100-sxm-8, dgx1-v100-8, a100-pcie-4, l4-8");
        corral_buf_fini(&b);
        corral_diag_fini(&d);
        return rc;
    }
    corral_diag_fini(&d);
    rc = corral_gpu_profile_parse(text, len, path, node_name, out, err, errlen);
    corral_free(text);
    if (rc == 0)
        snprintf(out->source, sizeof(out->source), "sim:%s", path);
    return rc;
}

static int discover_sim(const char *what, const char *node_name, corral_gpu_inventory_t *out,
                        char *err, size_t errlen)
{
    if (!*what) {
        corral__gpu_err(err, errlen,
                        "--gpus sim: needs a profile: one of h100-sxm-8, dgx1-v100-8, "
                        "a100-pcie-4, l4-8, or a profile file path");
        return CORRAL_EINVAL;
    }
    if (is_builtin(what))
        return corral__gpu_sim_builtin(what, node_name, out, err, errlen);
    return discover_file(what, node_name, out, err, errlen);
}

static int discover_auto(const char *node_name, corral_gpu_inventory_t *out, char *err,
                         size_t errlen)
{
    char why[512] = "";
    int rc = corral__gpu_nvml_discover(out, why, sizeof(why));
    if (rc == 0 && out->n > 0)
        return 0;
    if (rc == 0)
        snprintf(why, sizeof(why), "NVML found no GPUs");
    corral_gpu_inventory_fini(out);
    rc = corral__gpu_sim_builtin(AUTO_FALLBACK, node_name, out, err, errlen);
    /* On success err says why the GPUs are simulated, for the agent's log. */
    if (rc == 0)
        corral__gpu_err(err, errlen, "%s; simulating sim:%s", why, AUTO_FALLBACK);
    return rc;
}

int corral_gpu_discover(const char *spec, const char *node_name, corral_gpu_inventory_t *out,
                        char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    corral__gpu_err(err, errlen, "%s", "");
    if (!node_name)
        node_name = "";
    if (!spec)
        spec = "auto";
    int rc;
    if (strcmp(spec, "none") == 0) {
        corral__gpu_copy(out->source, sizeof(out->source), "none");
        return 0;
    } else if (strcmp(spec, "nvml") == 0) {
        rc = corral__gpu_nvml_discover(out, err, errlen);
        if (rc == 0 && out->n == 0) {
            corral__gpu_err(err, errlen,
                            "NVML: loaded, but found no GPUs; use --gpus none for a node "
                            "without GPUs, or --gpus sim:%s to simulate",
                            AUTO_FALLBACK);
            rc = CORRAL_ENOENT;
        }
    } else if (strcmp(spec, "auto") == 0) {
        rc = discover_auto(node_name, out, err, errlen);
    } else if (strncmp(spec, "sim:", 4) == 0) {
        rc = discover_sim(spec + 4, node_name, out, err, errlen);
    } else {
        corral__gpu_err(err, errlen,
                        "unknown --gpus value \"%s\": use nvml, auto, none or sim:PROFILE "
                        "(h100-sxm-8, dgx1-v100-8, a100-pcie-4, l4-8, or a profile file)",
                        spec);
        return CORRAL_EINVAL;
    }
    if (rc != 0) {
        corral_gpu_inventory_fini(out);
        return rc;
    }
    corral__gpu_finish(out);
    return 0;
}

/* --- labels ------------------------------------------------------------------- */

typedef struct labels {
    corral_arena_t *a;
    corral_kv_t *out;
    size_t n, max;
} labels_t;

static void put(labels_t *l, const char *key, const char *value)
{
    if (l->n >= l->max)
        return;
    l->out[l->n].key = key;
    l->out[l->n].value = corral_arena_strdup(l->a, value);
    l->n++;
}

static void put_int(labels_t *l, const char *key, long long v)
{
    char s[32];
    snprintf(s, sizeof(s), "%lld", v);
    put(l, key, s);
}

/* Driver version "550.54.15" -> the cuda.driver.{major,minor,rev} labels, kept
 * as text as GFD keeps them ("06" stays "06"). */
static void put_driver(labels_t *l, const char *ver)
{
    char parts[3][16] = {"", "", ""};
    int k = 0;
    size_t j = 0;
    for (const char *p = ver; *p && k < 3; p++) {
        if (*p == '.') {
            k++;
            j = 0;
        } else if (j + 1 < sizeof(parts[0])) {
            parts[k][j++] = *p;
            parts[k][j] = '\0';
        }
    }
    if (!parts[0][0] || !parts[1][0])
        return; /* GFD requires X.Y[.Z]; anything else gets no driver labels */
    put(l, "nvidia.com/cuda.driver.major", parts[0]);
    put(l, "nvidia.com/cuda.driver.minor", parts[1]);
    put(l, "nvidia.com/cuda.driver.rev", parts[2]);
    put(l, "nvidia.com/cuda.driver-version.major", parts[0]);
    put(l, "nvidia.com/cuda.driver-version.minor", parts[1]);
    put(l, "nvidia.com/cuda.driver-version.revision", parts[2]);
    put(l, "nvidia.com/cuda.driver-version.full", ver);
}

size_t corral_gpu_labels(const corral_gpu_inventory_t *inv, corral_arena_t *a, corral_kv_t *out,
                         size_t max)
{
    labels_t l = {a, out, 0, max};
    if (!inv || inv->n <= 0)
        return 0;
    put(&l, "nvidia.com/gpu.present", "true");
    put_int(&l, "nvidia.com/gpu.count", inv->n);
    put(&l, "nvidia.com/gpu.product", inv->product);
    put_int(&l, "nvidia.com/gpu.memory", (long long)inv->gpus[0].memory_mib);
    if (inv->compute_major > 0) {
        put(&l, "nvidia.com/gpu.family", inv->family);
        put_int(&l, "nvidia.com/gpu.compute.major", inv->compute_major);
        put_int(&l, "nvidia.com/gpu.compute.minor", inv->compute_minor);
    }
    if (inv->machine[0])
        put(&l, "nvidia.com/gpu.machine", inv->machine);
    if (inv->driver_version[0])
        put_driver(&l, inv->driver_version);
    if (inv->cuda_major > 0) {
        char full[32];
        snprintf(full, sizeof(full), "%d.%d", inv->cuda_major, inv->cuda_minor);
        put_int(&l, "nvidia.com/cuda.runtime.major", inv->cuda_major);
        put_int(&l, "nvidia.com/cuda.runtime.minor", inv->cuda_minor);
        put_int(&l, "nvidia.com/cuda.runtime-version.major", inv->cuda_major);
        put_int(&l, "nvidia.com/cuda.runtime-version.minor", inv->cuda_minor);
        put(&l, "nvidia.com/cuda.runtime-version.full", full);
    }
    bool sim = strncmp(inv->source, "sim:", 4) == 0;
    put(&l, "corral.dev/gpu-source", sim ? "sim" : "nvml");
    if (sim && inv->profile[0]) {
        char v[64] = "";
        corral__gpu_label_value(v, sizeof(v), inv->profile);
        if (v[0])
            put(&l, "corral.dev/gpu-profile", v);
    }
    return l.n;
}

/* --- printing ------------------------------------------------------------------- */

void corral_gpu_print(const corral_gpu_inventory_t *inv, FILE *fp)
{
    fprintf(fp, "GPU source: %s, %d GPU%s\n", inv->source[0] ? inv->source : "none", inv->n,
            inv->n == 1 ? "" : "s");
    if (inv->n <= 0)
        return;
    fprintf(fp, "Driver %s, CUDA %d.%d, compute capability %d.%d (%s)%s%s\n",
            inv->driver_version[0] ? inv->driver_version : "unknown", inv->cuda_major,
            inv->cuda_minor, inv->compute_major, inv->compute_minor,
            inv->family[0] ? inv->family : "undefined", inv->machine[0] ? ", machine " : "",
            inv->machine);
    for (int i = 0; i < inv->n; i++) {
        const corral_gpu_t *g = &inv->gpus[i];
        fprintf(fp, "GPU %d: %s (UUID: %s) %llu MiB, PCI %s\n", g->index, g->name, g->uuid,
                (unsigned long long)g->memory_mib, g->pci_bus_id);
    }
    fputc('\n', fp);
    for (int j = 0; j < inv->n; j++)
        fprintf(fp, "\tGPU%d", j);
    fputc('\n', fp);
    const char *p = inv->topology ? inv->topology : "";
    for (int i = 0; i < inv->n; i++) {
        fprintf(fp, "GPU%d", i);
        for (int j = 0; j < inv->n; j++) {
            size_t len = strcspn(p, ",;");
            /* nvidia-smi pads the diagonal as " X " */
            if (len == 1 && *p == 'X')
                fputs("\t X ", fp);
            else
                fprintf(fp, "\t%.*s", (int)len, p);
            p += len;
            if (*p)
                p++;
        }
        fputc('\n', fp);
    }
    fputs("\nLegend:\n\n"
          "  X    = Self\n"
          "  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA "
          "nodes (e.g., QPI/UPI)\n"
          "  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host "
          "Bridges within a NUMA node\n"
          "  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the "
          "CPU)\n"
          "  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe "
          "Host Bridge)\n"
          "  PIX  = Connection traversing at most a single PCIe bridge\n"
          "  NV#  = Connection traversing a bonded set of # NVLinks\n",
          fp);
}
