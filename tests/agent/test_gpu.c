/* GPU discovery: the built-in simulated profiles (counts, matrices, the DGX-1
 * quads, stable unique UUIDs), GFD labels, profile files good and bad, and
 * the NVML path through a fake libnvidia-ml (tests/agent/fake_nvml.c) and
 * without any. */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "corral/gpu.h"
#include "corral/model.h"
#include "agent_test.h"

static corral_gpu_inventory_t inv;
static char err[2048];

/* Profile files the test wrote, removed when it ends. */
static char tmpdir[] = "/tmp/corral-gpu-XXXXXX";
static char written[32][PATH_MAX];
static size_t nwritten;

static void fini(void)
{
    corral_gpu_inventory_fini(&inv);
    for (size_t i = 0; i < nwritten; i++)
        unlink(written[i]);
    if (nwritten)
        rmdir(tmpdir);
}

TestSuite(gpu, .fini = fini);

static int discover(const char *spec, const char *node)
{
    err[0] = '\0';
    return corral_gpu_discover(spec, node, &inv, err, sizeof(err));
}

/* The matrix parsed, n x n; cells as CORRAL_LINK_* ranks. */
static corral_gpu_topo_t topo(corral_arena_t *a, const corral_gpu_inventory_t *g)
{
    corral_gpu_topo_t t = {0};
    char why[256] = "";
    cr_assert_not_null(g->topology);
    cr_assert_eq(corral_gpu_topo_parse(a, g->topology, &t, why, sizeof(why)), 0, "%s: %s",
                 g->topology, why);
    cr_assert_eq(t.n, g->n);
    return t;
}

static int cell(const corral_gpu_topo_t *t, int i, int j)
{
    return t->link[i * t->n + j];
}

/* --- built-in profiles -------------------------------------------------------- */

static const struct {
    const char *name;
    int n;
    const char *model;
    uint64_t mib;
    int cc_major, cc_minor;
    const char *family, *product;
} builtin[] = {
    {"h100-sxm-8", 8, "NVIDIA H100 80GB HBM3", 81559, 9, 0, "hopper", "NVIDIA-H100-80GB-HBM3"},
    {"dgx1-v100-8", 8, "Tesla V100-SXM2-32GB", 32768, 7, 0, "volta", "Tesla-V100-SXM2-32GB"},
    {"a100-pcie-4", 4, "NVIDIA A100 80GB PCIe", 81920, 8, 0, "ampere", "NVIDIA-A100-80GB-PCIe"},
    {"l4-8", 8, "NVIDIA L4", 23034, 8, 9, "ada-lovelace", "NVIDIA-L4"},
};

Test(gpu, builtin_profiles)
{
    for (size_t p = 0; p < sizeof(builtin) / sizeof(builtin[0]); p++) {
        char spec[64];
        snprintf(spec, sizeof(spec), "sim:%s", builtin[p].name);
        cr_assert_eq(discover(spec, "node-a"), 0, "%s: %s", spec, err);
        cr_assert_str_eq(inv.source, spec);
        cr_assert_eq(inv.n, builtin[p].n, "%s", spec);
        cr_assert_eq(inv.compute_major, builtin[p].cc_major);
        cr_assert_eq(inv.compute_minor, builtin[p].cc_minor);
        cr_assert_str_eq(inv.family, builtin[p].family);
        cr_assert_str_eq(inv.product, builtin[p].product);
        cr_assert_str_eq(inv.driver_version, "550.54.15");
        cr_assert(inv.cuda_major == 12 && inv.cuda_minor == 4);
        cr_assert_gt(inv.cpu_milli, 0);
        cr_assert_gt(inv.memory_bytes, 0);
        for (int i = 0; i < inv.n; i++) {
            const corral_gpu_t *g = &inv.gpus[i];
            cr_assert_eq(g->index, i);
            cr_assert_str_eq(g->name, builtin[p].model);
            cr_assert_eq(g->memory_mib, builtin[p].mib);
            cr_assert_eq(strlen(g->uuid), 40, "%s", g->uuid);
            cr_assert_eq(strncmp(g->uuid, "GPU-", 4), 0);
            cr_assert(g->uuid[12] == '-' && g->uuid[17] == '-' && g->uuid[22] == '-' &&
                      g->uuid[27] == '-');
            cr_assert_eq(strlen(g->pci_bus_id), 16, "%s", g->pci_bus_id);
            cr_assert_eq(strcmp(g->pci_bus_id + 11, ":00.0"), 0, "%s", g->pci_bus_id);
            for (int j = 0; j < i; j++) {
                cr_assert_str_neq(g->uuid, inv.gpus[j].uuid);
                cr_assert_str_neq(g->pci_bus_id, inv.gpus[j].pci_bus_id);
            }
        }
        corral_arena_t a;
        corral_arena_init(&a);
        topo(&a, &inv);
        corral_arena_fini(&a);
        corral_gpu_inventory_fini(&inv);
    }
    cr_assert_eq(corral_gpu_sim_profiles[4], NULL);
}

Test(gpu, h100_is_nvswitch_all_nv18)
{
    cr_assert_eq(discover("sim:h100-sxm-8", "n"), 0, "%s", err);
    corral_arena_t a;
    corral_arena_init(&a);
    corral_gpu_topo_t t = topo(&a, &inv);
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 8; j++)
            cr_assert_eq(cell(&t, i, j), i == j ? CORRAL_LINK_SELF : CORRAL_LINK_NV + 18);
    cr_assert_str_eq(inv.machine, "DGX-H100");
    cr_assert_eq(inv.cpu_milli, 224000);
    cr_assert_eq(inv.memory_bytes, INT64_C(2) << 40);
    corral_arena_fini(&a);
}

/* DGX-1V: six NVLinks per GPU; exactly two fully NVLinked quads, {0,1,2,3}
 * and {4,5,6,7}; one NVLink peer in the other quad; SYS otherwise. */
Test(gpu, dgx1_hybrid_cube_mesh)
{
    cr_assert_eq(discover("sim:dgx1-v100-8", "n"), 0, "%s", err);
    corral_arena_t a;
    corral_arena_init(&a);
    corral_gpu_topo_t t = topo(&a, &inv);
    for (int i = 0; i < 8; i++) {
        int links = 0, cross = 0;
        for (int j = 0; j < 8; j++) {
            int l = cell(&t, i, j);
            if (i == j)
                continue;
            if (l > CORRAL_LINK_NV) {
                links += l - CORRAL_LINK_NV;
                cross += i / 4 != j / 4;
                cr_assert(l == CORRAL_LINK_NV + 1 || l == CORRAL_LINK_NV + 2);
            } else {
                cr_assert_eq(l, CORRAL_LINK_SYS, "GPU%d-GPU%d", i, j);
            }
        }
        cr_assert_eq(links, 6, "GPU%d has %d NVLinks", i, links);
        cr_assert_eq(cross, 1, "GPU%d", i);
    }
    int quads = 0;
    for (int m = 0; m < 256; m++) {
        if (__builtin_popcount((unsigned)m) != 4)
            continue;
        bool all_nv = true;
        for (int i = 0; i < 8; i++)
            for (int j = 0; j < 8; j++)
                if (i != j && (m >> i & 1) && (m >> j & 1) && cell(&t, i, j) < CORRAL_LINK_NV)
                    all_nv = false;
        if (all_nv) {
            cr_assert(m == 0x0f || m == 0xf0, "unexpected NVLinked quad %#x", m);
            quads++;
        }
    }
    cr_assert_eq(quads, 2);
    /* The published matrix, row 0 and row 4. */
    cr_assert_eq(strncmp(inv.topology, "X,NV1,NV1,NV2,NV2,SYS,SYS,SYS;", 30), 0);
    cr_assert_neq(strstr(inv.topology, ";NV2,SYS,SYS,SYS,X,NV1,NV1,NV2;"), NULL);
    corral_arena_fini(&a);
}

Test(gpu, a100_pairs_and_l4_pcie)
{
    cr_assert_eq(discover("sim:a100-pcie-4", "n"), 0, "%s", err);
    cr_assert_str_eq(inv.topology, "X,NV12,SYS,SYS;NV12,X,SYS,SYS;SYS,SYS,X,NV12;SYS,SYS,NV12,X");
    corral_gpu_inventory_fini(&inv);

    cr_assert_eq(discover("sim:l4-8", "n"), 0, "%s", err);
    corral_arena_t a;
    corral_arena_init(&a);
    corral_gpu_topo_t t = topo(&a, &inv);
    int seen[6] = {0};
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 8; j++) {
            int l = cell(&t, i, j);
            cr_assert_lt(l, CORRAL_LINK_NV, "L4s have no NVLink");
            seen[l]++;
        }
    cr_assert(seen[CORRAL_LINK_PIX] && seen[CORRAL_LINK_PXB] && seen[CORRAL_LINK_NODE] &&
              seen[CORRAL_LINK_SYS]);
    cr_assert_eq(cell(&t, 0, 1), CORRAL_LINK_PIX);
    cr_assert_eq(cell(&t, 0, 4), CORRAL_LINK_SYS);
    corral_arena_fini(&a);
}

Test(gpu, uuids_unique_per_node_and_stable)
{
    corral_gpu_inventory_t b, c;
    cr_assert_eq(discover("sim:h100-sxm-8", "node-a"), 0);
    cr_assert_eq(corral_gpu_discover("sim:h100-sxm-8", "node-b", &b, err, sizeof(err)), 0);
    cr_assert_eq(corral_gpu_discover("sim:h100-sxm-8", "node-a", &c, err, sizeof(err)), 0);
    for (int i = 0; i < 8; i++) {
        cr_assert_str_eq(inv.gpus[i].uuid, c.gpus[i].uuid, "same node, same UUIDs");
        cr_assert_str_eq(inv.gpus[i].pci_bus_id, c.gpus[i].pci_bus_id);
        for (int j = 0; j < 8; j++) {
            cr_assert_str_neq(inv.gpus[i].uuid, b.gpus[j].uuid);
            cr_assert_str_neq(inv.gpus[i].pci_bus_id, b.gpus[j].pci_bus_id);
        }
    }
    corral_gpu_inventory_fini(&b);
    corral_gpu_inventory_fini(&c);
}

/* --- labels and printing ------------------------------------------------------------ */

static const char *label(const corral_kv_t *kv, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(kv[i].key, key) == 0)
            return kv[i].value;
    return NULL;
}

Test(gpu, gfd_labels)
{
    cr_assert_eq(discover("sim:h100-sxm-8", "n"), 0);
    corral_arena_t a;
    corral_arena_init(&a);
    corral_kv_t kv[CORRAL_GPU_LABELS_MAX];
    size_t n = corral_gpu_labels(&inv, &a, kv, CORRAL_GPU_LABELS_MAX);
    static const char *const want[][2] = {
        {"nvidia.com/gpu.present", "true"},
        {"nvidia.com/gpu.count", "8"},
        {"nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"},
        {"nvidia.com/gpu.memory", "81559"},
        {"nvidia.com/gpu.family", "hopper"},
        {"nvidia.com/gpu.compute.major", "9"},
        {"nvidia.com/gpu.compute.minor", "0"},
        {"nvidia.com/gpu.machine", "DGX-H100"},
        {"nvidia.com/cuda.driver.major", "550"},
        {"nvidia.com/cuda.driver.minor", "54"},
        {"nvidia.com/cuda.driver.rev", "15"},
        {"nvidia.com/cuda.driver-version.full", "550.54.15"},
        {"nvidia.com/cuda.runtime.major", "12"},
        {"nvidia.com/cuda.runtime.minor", "4"},
        {"nvidia.com/cuda.runtime-version.full", "12.4"},
        {"corral.dev/gpu-source", "sim"},
        {"corral.dev/gpu-profile", "h100-sxm-8"},
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        const char *v = label(kv, n, want[i][0]);
        cr_assert_not_null(v, "no label %s", want[i][0]);
        cr_assert_str_eq(v, want[i][1], "%s", want[i][0]);
    }
    cr_assert_lt(n, (size_t)CORRAL_GPU_LABELS_MAX);
    /* Keys unique; values are valid label values (<= 63, no spaces). */
    for (size_t i = 0; i < n; i++) {
        cr_assert_leq(strlen(kv[i].value), 63);
        cr_assert_null(strchr(kv[i].value, ' '), "%s=%s", kv[i].key, kv[i].value);
        for (size_t j = 0; j < i; j++)
            cr_assert_str_neq(kv[i].key, kv[j].key);
    }
    cr_assert_eq(corral_gpu_labels(&inv, &a, kv, 3), 3);
    corral_gpu_inventory_fini(&inv);
    cr_assert_eq(discover("none", "n"), 0);
    cr_assert_eq(inv.n, 0);
    cr_assert_null(inv.topology);
    cr_assert_eq(corral_gpu_labels(&inv, &a, kv, CORRAL_GPU_LABELS_MAX), 0);
    corral_arena_fini(&a);
}

Test(gpu, family_names_as_gfd)
{
    cr_assert_str_eq(corral_gpu_family(7, 0), "volta");
    cr_assert_str_eq(corral_gpu_family(7, 5), "turing");
    cr_assert_str_eq(corral_gpu_family(8, 6), "ampere");
    cr_assert_str_eq(corral_gpu_family(8, 9), "ada-lovelace");
    cr_assert_str_eq(corral_gpu_family(9, 0), "hopper");
    cr_assert_str_eq(corral_gpu_family(10, 0), "blackwell");
    cr_assert_str_eq(corral_gpu_family(4, 0), "undefined");
}

Test(gpu, print_like_nvidia_smi)
{
    cr_assert_eq(discover("sim:a100-pcie-4", "n"), 0);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    corral_gpu_print(&inv, f);
    fclose(f);
    cr_assert_not_null(strstr(buf, "GPU 0: NVIDIA A100 80GB PCIe (UUID: GPU-"), "%s", buf);
    cr_assert_not_null(strstr(buf, "\tGPU0\tGPU1\tGPU2\tGPU3\n"), "%s", buf);
    cr_assert_not_null(strstr(buf, "GPU0\t X \tNV12\tSYS\tSYS\n"), "%s", buf);
    cr_assert_not_null(strstr(buf, "GPU3\tSYS\tSYS\tNV12\t X \n"), "%s", buf);
    cr_assert_not_null(strstr(buf, "NV#  = Connection traversing a bonded set of # NVLinks"));
    free(buf);
}

/* --- profile files -------------------------------------------------------------- */

static const char *write_file(const char *name, const char *text)
{
    if (strstr(tmpdir, "XXXXXX"))
        cr_assert_not_null(mkdtemp(tmpdir));
    cr_assert_lt(nwritten, sizeof(written) / sizeof(written[0]));
    char *path = written[nwritten++];
    snprintf(path, PATH_MAX, "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

static int profile(const char *name, const char *text)
{
    char spec[PATH_MAX + 8];
    snprintf(spec, sizeof(spec), "sim:%s", write_file(name, text));
    return discover(spec, "node-x");
}

Test(gpu, profile_file_yaml)
{
    cr_assert_eq(profile("dgxa100.yaml", "name: dgx-a100\n"
                                         "gpus: 2\n"
                                         "model: NVIDIA A100-SXM4-80GB\n"
                                         "memoryMiB: 81920\n"
                                         "topology:\n"
                                         "  - X,NV12\n"
                                         "  - NV12,X\n"
                                         "computeCapability: \"8.0\"\n"
                                         "machine: DGX A100\n"
                                         "driverVersion: 535.104.05\n"
                                         "cudaVersion: \"12.2\"\n"
                                         "cpu: 256\n"
                                         "memory: 1Ti\n"),
                 0, "%s", err);
    cr_assert_eq(inv.n, 2);
    cr_assert_str_eq(inv.gpus[1].name, "NVIDIA A100-SXM4-80GB");
    cr_assert_eq(inv.gpus[1].memory_mib, 81920);
    cr_assert_str_eq(inv.topology, "X,NV12;NV12,X");
    cr_assert_str_eq(inv.family, "ampere");
    cr_assert_str_eq(inv.product, "NVIDIA-A100-SXM4-80GB");
    cr_assert_str_eq(inv.machine, "DGX-A100");
    cr_assert_str_eq(inv.driver_version, "535.104.05");
    cr_assert(inv.cuda_major == 12 && inv.cuda_minor == 2);
    cr_assert_eq(inv.cpu_milli, 256000);
    cr_assert_eq(inv.memory_bytes, INT64_C(1) << 40);
    cr_assert_str_eq(inv.profile, "dgx-a100");
    cr_assert_eq(strncmp(inv.source, "sim:/tmp/", 9), 0, "%s", inv.source);
}

Test(gpu, profile_file_json_base_and_defaults)
{
    /* JSON; on top of a built-in; the GFD product label overridden. */
    cr_assert_eq(profile("h100.json", "{\"base\": \"h100-sxm-8\", \"memoryMiB\": 97871, "
                                      "\"model\": \"NVIDIA H100 NVL\", \"product\": \"H100-NVL\","
                                      " \"cpu\": \"96\"}"),
                 0, "%s", err);
    cr_assert_eq(inv.n, 8);
    cr_assert_eq(inv.gpus[7].memory_mib, 97871);
    cr_assert_str_eq(inv.product, "H100-NVL");
    cr_assert_str_eq(inv.family, "hopper");
    cr_assert_eq(inv.cpu_milli, 96000);
    cr_assert_eq(inv.memory_bytes, INT64_C(2) << 40, "memory from the base");
    cr_assert_str_eq(inv.profile, "h100", "name from the file when not given");
    cr_assert_not_null(strstr(inv.topology, "NV18"));
    corral_gpu_inventory_fini(&inv);

    /* Minimal: no topology means a uniform matrix; no compute capability means
     * no family; driver and CUDA default. */
    cr_assert_eq(profile("min.yaml", "gpus: 3\nmodel: Some GPU\nmemoryMiB: 1024\n"), 0, "%s", err);
    cr_assert_str_eq(inv.topology, "X,SYS,SYS;SYS,X,SYS;SYS,SYS,X");
    cr_assert_str_eq(inv.family, "");
    cr_assert_str_eq(inv.driver_version, "550.54.15");
    corral_arena_t a;
    corral_arena_init(&a);
    corral_kv_t kv[CORRAL_GPU_LABELS_MAX];
    size_t n = corral_gpu_labels(&inv, &a, kv, CORRAL_GPU_LABELS_MAX);
    cr_assert_null(label(kv, n, "nvidia.com/gpu.family"));
    cr_assert_str_eq(label(kv, n, "nvidia.com/gpu.product"), "Some-GPU");
    corral_arena_fini(&a);
    corral_gpu_inventory_fini(&inv);

    /* gpus from the topology alone. */
    cr_assert_eq(profile("t.yaml", "model: X1\nmemoryMiB: 8\ntopology: \"X,PIX;PIX,X\"\n"), 0, "%s",
                 err);
    cr_assert_eq(inv.n, 2);
}

Test(gpu, docs_example_profile_parses)
{
    cr_assert_eq(discover("sim:docs/gpu-profiles/dgx-a100.yaml", "n"), 0, "%s", err);
    cr_assert_eq(inv.n, 8);
    corral_arena_t a;
    corral_arena_init(&a);
    topo(&a, &inv);
    corral_arena_fini(&a);
}

static void bad_profile(const char *name, const char *text, int want_rc, const char *const *want)
{
    int rc = profile(name, text);
    cr_assert_eq(rc, want_rc, "%s: rc %d: %s", name, rc, err);
    for (size_t i = 0; want[i]; i++)
        cr_assert_not_null(strstr(err, want[i]), "%s: want \"%s\" in:\n%s", name, want[i], err);
    cr_assert_eq(inv.n, 0);
    cr_assert_null(inv.topology);
}

Test(gpu, profile_file_errors)
{
    bad_profile("a.yaml", "gpus: 0\nmodle: x\nmemoryMiB: -1\ncomputeCapability: 9\n", CORRAL_EINVAL,
                (const char *const[]){"a.yaml:1:7: gpus: must be a whole number from 1 to 64",
                                      "a.yaml:2:1: modle: unknown field; did you mean \"model\"?",
                                      "a.yaml:3:12: memoryMiB: must be",
                                      "a.yaml:4:20: computeCapability: \"9\" is not MAJOR.MINOR",
                                      NULL});
    bad_profile("b.yaml", "gpus: 2\nmodel: m\nmemoryMiB: 1\ntopology: \"X,NV2;NV3,X\"\n",
                CORRAL_EINVAL,
                (const char *const[]){"b.yaml:4:12: topology: matrix is not symmetric", NULL});
    bad_profile("c.yaml", "gpus: 3\nmodel: m\nmemoryMiB: 1\ntopology: \"X,NV2;NV2,X\"\n",
                CORRAL_EINVAL, (const char *const[]){"topology: has 2 rows but gpus is 3", NULL});
    bad_profile("d.yaml", "gpus: 2\nmodel: m\nmemoryMiB: 1\ntopology: \"X,FAST;FAST,X\"\n",
                CORRAL_EINVAL, (const char *const[]){"\"FAST\" is not a link type", NULL});
    bad_profile("e.yaml", "base: h100\ngpus: 4\n", CORRAL_EINVAL,
                (const char *const[]){"e.yaml:1:7: base: no built-in profile \"h100\"",
                                      "did you mean \"h100-sxm-8\"", NULL});
    bad_profile("f.yaml", "base: h100-sxm-8\ngpus: 4\n", CORRAL_EINVAL,
                (const char *const[]){"f.yaml:2:7: gpus: is 4 but the base profile h100-sxm-8 "
                                      "has 8 GPUs",
                                      NULL});
    bad_profile("g.yaml", "gpus: 2\n", CORRAL_EINVAL,
                (const char *const[]){"model: is required", "memoryMiB: is required", NULL});
    bad_profile("h.yaml", "- gpus: 2\n", CORRAL_EINVAL,
                (const char *const[]){"h.yaml:1:1: a GPU profile is a mapping", NULL});
    bad_profile("i.yaml", "gpus: [1\n", CORRAL_EPARSE, (const char *const[]){"i.yaml:", NULL});
    bad_profile("j.yaml", "", CORRAL_EINVAL,
                (const char *const[]){"one YAML or JSON mapping", NULL});
    bad_profile("k.yaml", "gpus: 1\nmodel: m\nmemoryMiB: 1\nmemory: 16GB\ncpu: -2\n", CORRAL_EINVAL,
                (const char *const[]){"k.yaml:4:9: memory:", "16Gi", "k.yaml:5:6: cpu:", NULL});
    bad_profile("l.json", "{\"gpus\": 1,}", CORRAL_EPARSE,
                (const char *const[]){"l.json:", "trailing comma", NULL});
    bad_profile("m.yaml", "gpus: 1\nmodel: m\nmemoryMiB: 1\ndriverVersion: \"550\"\n",
                CORRAL_EINVAL,
                (const char *const[]){"driverVersion: \"550\" is not X.Y or X.Y.Z", NULL});
}

Test(gpu, profile_limits_and_missing_files)
{
    size_t big = CORRAL_GPU_PROFILE_MAX_BYTES + 10;
    char *text = malloc(big + 1);
    memset(text, '#', big);
    text[big] = '\0';
    bad_profile("big.yaml", text, CORRAL_ETOOBIG, (const char *const[]){"big.yaml", NULL});
    cr_assert_eq(corral_gpu_profile_parse(text, big, "mem.yaml", "n", &inv, err, sizeof(err)),
                 CORRAL_ETOOBIG);
    free(text);

    cr_assert_eq(discover("sim:/nonexistent/p.yaml", "n"), CORRAL_ENOENT);
    cr_assert_not_null(strstr(err, "/nonexistent/p.yaml: cannot open"), "%s", err);
    cr_assert_eq(discover("sim:h100", "n"), CORRAL_ENOENT);
    cr_assert_not_null(strstr(err, "did you mean the built-in sim:h100-sxm-8?"), "%s", err);
    cr_assert_eq(discover("sim:", "n"), CORRAL_EINVAL);
    cr_assert_eq(discover("gpus", "n"), CORRAL_EINVAL);
    cr_assert_not_null(strstr(err, "unknown --gpus value \"gpus\""), "%s", err);
}

/* --- NVML ------------------------------------------------------------------------ */

Test(gpu, nvml_absent_gives_clear_error)
{
    void *real = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (real) {
        dlclose(real);
        cr_skip_test("this machine has NVML");
    }
    unsetenv("CORRAL_NVML_LIB");
    cr_assert_eq(discover("nvml", "n"), CORRAL_ENOENT);
    cr_assert_str_eq(err, "NVML: libnvidia-ml.so.1 not found (no NVIDIA driver?); use --gpus "
                          "sim:h100-sxm-8 to simulate");
    cr_assert_eq(inv.n, 0);
}

Test(gpu, nvml_lib_override_missing)
{
    setenv("CORRAL_NVML_LIB", "/nonexistent/libnvidia-ml.so.1", 1);
    cr_assert_eq(discover("nvml", "n"), CORRAL_ENOENT);
    cr_assert_not_null(strstr(err, "NVML: cannot load /nonexistent/libnvidia-ml.so.1"), "%s", err);
    cr_assert_not_null(strstr(err, "sim:h100-sxm-8"));

    /* auto falls back to the simulated H100 box, and says why. */
    cr_assert_eq(discover("auto", "node-1"), 0, "%s", err);
    cr_assert_str_eq(inv.source, "sim:h100-sxm-8");
    cr_assert_eq(inv.n, 8);
    cr_assert_not_null(strstr(err, "cannot load"), "%s", err);
    cr_assert_not_null(strstr(err, "simulating sim:h100-sxm-8"), "%s", err);
}

Test(gpu, fake_nvml_two_nvlink_pairs)
{
    char log[] = "/tmp/corral-nvml-log-XXXXXX";
    int fd = mkstemp(log);
    cr_assert_geq(fd, 0);
    close(fd);
    fake_nvml("pairs");
    setenv("FAKE_NVML_LOG", log, 1);
    cr_assert_eq(discover("nvml", "ignored"), 0, "%s", err);
    cr_assert_str_eq(inv.source, "nvml");
    cr_assert_eq(inv.n, 4);
    for (int i = 0; i < 4; i++) {
        char uuid[64];
        snprintf(uuid, sizeof(uuid), "GPU-fa4e0000-0000-0000-0000-00000000000%d", i);
        cr_assert_str_eq(inv.gpus[i].uuid, uuid);
        cr_assert_str_eq(inv.gpus[i].name, "NVIDIA H100 80GB HBM3");
        cr_assert_eq(inv.gpus[i].memory_mib, 81559);
        cr_assert_eq(inv.gpus[i].index, i);
    }
    cr_assert_str_eq(inv.gpus[0].pci_bus_id, "00000000:18:00.0");
    cr_assert_str_eq(inv.gpus[3].pci_bus_id, "00000000:AB:00.0");
    cr_assert_str_eq(inv.topology, "X,NV4,SYS,SYS;NV4,X,SYS,SYS;SYS,SYS,X,NV4;SYS,SYS,NV4,X");
    cr_assert_str_eq(inv.driver_version, "550.54.15");
    cr_assert(inv.cuda_major == 12 && inv.cuda_minor == 4);
    cr_assert(inv.compute_major == 9 && inv.compute_minor == 0);
    cr_assert_str_eq(inv.family, "hopper");
    cr_assert_str_eq(inv.product, "NVIDIA-H100-80GB-HBM3");

    corral_arena_t a;
    corral_arena_init(&a);
    corral_kv_t kv[CORRAL_GPU_LABELS_MAX];
    size_t n = corral_gpu_labels(&inv, &a, kv, CORRAL_GPU_LABELS_MAX);
    cr_assert_str_eq(label(kv, n, "corral.dev/gpu-source"), "nvml");
    cr_assert_null(label(kv, n, "corral.dev/gpu-profile"));
    cr_assert_str_eq(label(kv, n, "nvidia.com/gpu.count"), "4");
    corral_arena_fini(&a);

    /* Initialised once, shut down once. */
    FILE *f = fopen(log, "r");
    char calls[64] = "";
    size_t got = fread(calls, 1, sizeof(calls) - 1, f);
    calls[got] = '\0';
    fclose(f);
    unlink(log);
    cr_assert_str_eq(calls, "init\nshutdown\n");

    /* auto takes NVML when it finds GPUs. */
    corral_gpu_inventory_fini(&inv);
    cr_assert_eq(discover("auto", "n"), 0, "%s", err);
    cr_assert_str_eq(inv.source, "nvml");
    cr_assert_str_eq(err, "");
}

Test(gpu, fake_nvml_nvswitch_and_pcie_levels)
{
    fake_nvml("switch");
    cr_assert_eq(discover("nvml", "n"), 0, "%s", err);
    cr_assert_str_eq(inv.topology,
                     "X,NV18,NV18,NV12;NV18,X,NV18,NV12;NV18,NV18,X,NV12;NV12,NV12,NV12,X");
    corral_gpu_inventory_fini(&inv);

    fake_nvml("pcie");
    cr_assert_eq(discover("nvml", "n"), 0, "%s", err);
    cr_assert_str_eq(inv.topology, "X,PIX,PHB,NODE;PIX,X,SYS,PHB;PHB,SYS,X,PXB;NODE,PHB,PXB,X");
    corral_arena_t a;
    corral_arena_init(&a);
    topo(&a, &inv);
    corral_arena_fini(&a);
}

Test(gpu, fake_nvml_failures)
{
    fake_nvml("initfail");
    cr_assert_eq(discover("nvml", "n"), CORRAL_EIO);
    cr_assert_not_null(strstr(err, "NVML: nvmlInit failed: Driver Not Loaded"), "%s", err);

    fake_nvml("many");
    cr_assert_eq(discover("nvml", "n"), CORRAL_ETOOBIG);
    cr_assert_not_null(strstr(err, "65 GPUs"), "%s", err);

    fake_nvml("noname");
    cr_assert_eq(discover("nvml", "n"), CORRAL_EIO);
    cr_assert_str_eq(err, "NVML: GPU 2: nvmlDeviceGetName: GPU is lost");
    cr_assert_eq(inv.n, 0);
    cr_assert_null(inv.topology);

    fake_nvml("empty");
    cr_assert_eq(discover("nvml", "n"), CORRAL_ENOENT);
    cr_assert_not_null(strstr(err, "found no GPUs"), "%s", err);
    cr_assert_eq(discover("auto", "n"), 0, "%s", err);
    cr_assert_str_eq(inv.source, "sim:h100-sxm-8");
    cr_assert_not_null(strstr(err, "NVML found no GPUs; simulating sim:h100-sxm-8"), "%s", err);
}
