/*
 * GPU telemetry (src/agent/telemetry.c, nvml_telem.c, usage.c): the DCGM
 * exporter's exposition (names, help, types, label order, number formats),
 * simulated GPUs following the pods that hold them and deterministic in
 * the clock, NVML readings and XIDs through the fake libnvidia-ml, GPU
 * health to the Node's condition and taint, /metrics/resource, and the
 * corral.dev/gpu-seconds-used annotation on a finished pod's status.
 */
#include <criterion/criterion.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent_int.h"
#include "agent/telemetry.h"
#include "corral/json.h"
#include "agent_test.h"

#define S(x) ((int64_t)(x)*1000000)
#define T0   S(1700000000)

static corral_gpu_inventory_t inv;

static corral__telem_t *sim(const char *node)
{
    char err[256];
    cr_assert_eq(corral_gpu_discover("sim:h100-sxm-8", node, &inv, err, sizeof(err)), 0, "%s", err);
    return corral__telem_new(&inv, node, T0);
}

static char *render(corral__telem_t *t, int64_t now, bool resource)
{
    corral_buf_t b;
    corral_buf_init(&b);
    if (resource)
        corral__telem_render_resource(t, now, &b);
    else
        corral__telem_render_dcgm(t, now, &b);
    char *s = corral_strdup(corral_buf_str(&b));
    corral_buf_fini(&b);
    return s;
}

static void hold(corral__telem_t *t, int gpu, const char *pod, int util, int64_t now)
{
    corral__gpu_owner_t o[8];
    memset(o, 0, sizeof(o));
    if (pod)
        o[gpu] =
            (corral__gpu_owner_t){.ns = "team-a", .pod = pod, .container = "main", .util = util};
    corral__telem_set_owners(t, o, 8, now);
}

static double field(corral__telem_t *t, int gpu, int f)
{
    corral__gpu_sample_t s;
    corral__telem_sample(t, gpu, &s);
    cr_assert((s.present >> f) & 1, "field %d of GPU %d absent", f, gpu);
    return s.v[f];
}

Test(telemetry, dcgm_exposition_names_labels_and_formats)
{
    corral__telem_t *t = sim("node-a");
    hold(t, 1, "train-0", 85, T0);
    char *out = render(t, T0 + S(10), false);
    cr_assert(strstr(out, "# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).\n"
                          "# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n"),
              "%s", out);
    cr_assert(strstr(out, "# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter\n"));
    cr_assert(strstr(out, "# HELP DCGM_FI_DEV_FB_USED Framebuffer memory used (in MiB).\n"));
    cr_assert(strstr(out, "# HELP DCGM_FI_DEV_XID_ERRORS Value of the last XID error "
                          "encountered.\n# TYPE DCGM_FI_DEV_XID_ERRORS gauge\n"));
    char want[512];
    snprintf(want, sizeof(want),
             "DCGM_FI_DEV_GPU_UTIL{gpu=\"1\",UUID=\"%s\",pci_bus_id=\"%s\",device=\"nvidia1\","
             "modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"node-a\","
             "DCGM_FI_DRIVER_VERSION=\"550.54.15\",container=\"main\",namespace=\"team-a\","
             "pod=\"train-0\"} ",
             inv.gpus[1].uuid, inv.gpus[1].pci_bus_id);
    cr_assert(strstr(out, want), "no %s in\n%s", want, out);
    snprintf(want, sizeof(want),
             "device=\"nvidia0\",modelName=\"NVIDIA H100 80GB HBM3\","
             "Hostname=\"node-a\",DCGM_FI_DRIVER_VERSION=\"550.54.15\","
             "container=\"\",namespace=\"\",pod=\"\"} 0\n");
    cr_assert(strstr(out, want), "idle GPU 0: %s", out);
    /* power is DCGM's double (%f), the rest integers */
    const char *pw = strstr(out, "\nDCGM_FI_DEV_POWER_USAGE{");
    cr_assert(pw);
    const char *sp = strchr(strchr(pw, '}'), ' ');
    cr_assert(strchr(sp, '.') < strchr(sp, '\n') && strchr(sp, '.'), "%.40s", sp);
    /* every GPU of a NVSwitch box has NVLink traffic */
    cr_assert(strstr(out, "# TYPE DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL counter\n"));
    cr_assert(strstr(out, "corral_agent_gpu_healthy{gpu=\"1\","));
    corral_free(out);
    corral__telem_free(t);
    corral_gpu_inventory_fini(&inv);
}

Test(telemetry, sim_follows_the_pods)
{
    corral__telem_t *t = sim("node-b");
    corral__telem_update(t, T0 + S(1));
    cr_assert_eq(field(t, 2, CORRAL__TM_GPU_UTIL), 0);
    double idle_temp = field(t, 2, CORRAL__TM_GPU_TEMP),
           idle_w = field(t, 2, CORRAL__TM_POWER_USAGE);
    double e0 = field(t, 2, CORRAL__TM_TOTAL_ENERGY);
    cr_assert_eq(field(t, 2, CORRAL__TM_FB_USED), 0);
    hold(t, 2, "busy", 85, T0 + S(1));
    corral__telem_update(t, T0 + S(121));
    double u = field(t, 2, CORRAL__TM_GPU_UTIL);
    cr_assert(u >= 82 && u <= 88, "%f", u);
    cr_assert_eq(field(t, 3, CORRAL__TM_GPU_UTIL), 0, "a GPU nobody holds stays idle");
    cr_assert_gt(field(t, 2, CORRAL__TM_GPU_TEMP), idle_temp + 25);
    cr_assert_gt(field(t, 2, CORRAL__TM_POWER_USAGE), idle_w + 300);
    cr_assert_gt(field(t, 2, CORRAL__TM_FB_USED), 40000);
    cr_assert_gt(field(t, 2, CORRAL__TM_SM_CLOCK), field(t, 3, CORRAL__TM_SM_CLOCK));
    double e1 = field(t, 2, CORRAL__TM_TOTAL_ENERGY);
    /* 120 s mostly near 460 W: tens of kJ */
    cr_assert(e1 - e0 > 40e6 && e1 - e0 < 70e6, "%f mJ", e1 - e0);
    cr_assert(corral__telem_util_seconds(t, 2) > 0.8 * 120 &&
              corral__telem_util_seconds(t, 2) < 0.9 * 120);
    hold(t, 2, NULL, 0, T0 + S(121));
    corral__telem_update(t, T0 + S(241));
    cr_assert_eq(field(t, 2, CORRAL__TM_GPU_UTIL), 0);
    cr_assert_lt(field(t, 2, CORRAL__TM_GPU_TEMP), idle_temp + 3);
    cr_assert_lt(field(t, 2, CORRAL__TM_POWER_USAGE), idle_w + 1);
    cr_assert_gt(field(t, 2, CORRAL__TM_TOTAL_ENERGY), e1, "energy only grows");
    corral__telem_free(t);
    corral_gpu_inventory_fini(&inv);
}

Test(telemetry, sim_is_a_function_of_inputs_and_clock)
{
    corral__telem_t *a = sim("node-c"), *b = corral__telem_new(&inv, "node-c", T0);
    hold(a, 0, "p", 60, T0 + S(3));
    hold(b, 0, "p", 60, T0 + S(3));
    for (int k = 1; k <= 97; k++) /* a is scraped often, b once */
        corral__telem_update(a, T0 + S(3) + k * 613000);
    corral__telem_update(b, T0 + S(3) + 97 * 613000);
    for (int f = 0; f < CORRAL__TM_N; f++) {
        if (f == CORRAL__TM_TOTAL_ENERGY || f == CORRAL__TM_NVLINK_TOTAL)
            cr_assert_float_eq(field(a, 0, f), field(b, 0, f), 2, "field %d", f);
        else
            cr_assert_float_eq(field(a, 0, f), field(b, 0, f), 1e-6, "field %d", f);
    }
    corral__telem_t *c = corral__telem_new(&inv, "node-d", T0);
    hold(c, 0, "p", 60, T0 + S(3));
    corral__telem_update(c, T0 + S(3) + 97 * 613000);
    cr_assert_neq(field(c, 0, CORRAL__TM_GPU_TEMP) * 1000 + field(c, 0, CORRAL__TM_GPU_UTIL),
                  field(b, 0, CORRAL__TM_GPU_TEMP) * 1000 + field(b, 0, CORRAL__TM_GPU_UTIL) + 0.5,
                  "seeded per node");
    corral__telem_free(a);
    corral__telem_free(b);
    corral__telem_free(c);
    corral_gpu_inventory_fini(&inv);
}

/* --- NVML through the fake library ----------------------------------------------------------- */

static corral__telem_t *nvml(const char *mode)
{
    fake_nvml(mode);
    char err[256];
    cr_assert_eq(corral_gpu_discover("nvml", "gpu-node", &inv, err, sizeof(err)), 0, "%s", err);
    return corral__telem_new(&inv, "gpu-node", T0);
}

Test(telemetry, nvml_readings_and_missing_calls)
{
    corral__telem_t *t = nvml("pairs");
    corral__telem_update(t, T0 + S(1));
    cr_assert_eq(field(t, 2, CORRAL__TM_GPU_UTIL), 25);
    cr_assert_eq(field(t, 2, CORRAL__TM_MEM_COPY_UTIL), 12);
    cr_assert_eq(field(t, 1, CORRAL__TM_GPU_TEMP), 41);
    cr_assert_float_eq(field(t, 0, CORRAL__TM_POWER_USAGE), 100.5, 1e-9);
    cr_assert_eq(field(t, 0, CORRAL__TM_TOTAL_ENERGY), 123456789);
    cr_assert_eq(field(t, 0, CORRAL__TM_FB_USED), 512);
    cr_assert_eq(field(t, 0, CORRAL__TM_FB_FREE), 81559 - 512);
    cr_assert_eq(field(t, 0, CORRAL__TM_SM_CLOCK), 1980);
    cr_assert_eq(field(t, 0, CORRAL__TM_PCIE_RX), 2000);
    char *out = render(t, T0 + S(1), false);
    /* no nvmlDeviceGetFieldValues in the fake: these series are left out, as
     * dcgm-exporter leaves out blank fields; no XID yet either */
    cr_assert_null(strstr(out, "DCGM_FI_DEV_MEMORY_TEMP"));
    cr_assert_null(strstr(out, "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL"));
    cr_assert_null(strstr(out, "DCGM_FI_DEV_XID_ERRORS"));
    cr_assert(strstr(out, "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",UUID=\"GPU-fa4e0000-0000-0000-0000-"
                          "000000000000\",pci_bus_id=\"00000000:18:00.0\",device=\"nvidia0\""),
              "%s", out);
    cr_assert(strstr(out, "} 100.500000\n"));
    corral_free(out);
    char reason[32], msg[512];
    cr_assert(corral__telem_healthy(t, T0 + S(1), reason, sizeof(reason), msg, sizeof(msg)));
    corral__telem_free(t);
    corral_gpu_inventory_fini(&inv);
}

Test(telemetry, xid_makes_the_node_unhealthy_until_the_hold_passes)
{
    corral__telem_t *t = nvml("pairs");
    corral__telem_set_xid_hold(t, 60);
    setenv("FAKE_NVML_XID", "3:79", 1);
    corral__telem_update(t, T0 + S(2));
    char reason[32], msg[512];
    cr_assert_not(corral__telem_healthy(t, T0 + S(2), reason, sizeof(reason), msg, sizeof(msg)));
    cr_assert_str_eq(reason, "XidError");
    cr_assert(strstr(msg, "GPU 3 (GPU-fa4e0000-0000-0000-0000-000000000003) reported XID 79"), "%s",
              msg);
    cr_assert_eq(field(t, 3, CORRAL__TM_XID_ERRORS), 79);
    char *out = render(t, T0 + S(2), false);
    cr_assert(strstr(out, "pod=\"\"} 79\n"), "%s", out);
    cr_assert(strstr(out, "corral_agent_gpu_healthy{gpu=\"3\",UUID=\"GPU-fa4e0000-0000-0000-0000-"
                          "000000000003\"} 0\n"));
    corral_free(out);

    corral__node_t n;
    corral__node_init(&n, "gpu-node", &inv, 40);
    cr_assert(corral__node_set_gpu_health(&n, false, reason, msg, T0 + S(2)));
    cr_assert_not(corral__node_set_gpu_health(&n, false, reason, msg, T0 + S(3)), "no change");
    corral_arena_t a;
    corral_arena_init(&a);
    corral_buf_t b;
    corral_buf_init(&b);
    corral_val_to_json(corral__node_object(&a, &n, NULL, T0 + S(3)), &b, false);
    cr_assert(strstr(corral_buf_str(&b), "\"taints\":[{\"key\":\"corral.dev/gpu-unhealthy\","
                                         "\"effect\":\"NoSchedule\""),
              "%s", corral_buf_str(&b));
    cr_assert(strstr(corral_buf_str(&b), "\"type\":\"GPUHealthy\",\"status\":\"False\""));
    cr_assert(strstr(corral_buf_str(&b), "\"reason\":\"XidError\""));

    corral__telem_update(t, T0 + S(70)); /* no new XID for longer than the hold */
    cr_assert(corral__telem_healthy(t, T0 + S(70), reason, sizeof(reason), msg, sizeof(msg)));
    cr_assert(corral__node_set_gpu_health(&n, true, reason, msg, T0 + S(70)));
    corral_buf_reset(&b);
    corral_val_to_json(corral__node_object(&a, &n, NULL, T0 + S(70)), &b, false);
    cr_assert_null(strstr(corral_buf_str(&b), "gpu-unhealthy"), "%s", corral_buf_str(&b));
    cr_assert(strstr(corral_buf_str(&b), "\"type\":\"GPUHealthy\",\"status\":\"True\""));
    corral_buf_fini(&b);
    corral_arena_fini(&a);
    corral__node_fini(&n);
    corral__telem_free(t);
    corral_gpu_inventory_fini(&inv);
}

Test(telemetry, unreadable_gpu)
{
    corral__telem_t *t = nvml("lost2");
    corral__telem_update(t, T0 + S(1));
    char reason[32], msg[512];
    cr_assert(corral__telem_healthy(t, T0 + S(1), reason, sizeof(reason), msg, sizeof(msg)));
    setenv("FAKE_NVML_LOST", "1", 1);
    corral__telem_update(t, T0 + S(2));
    cr_assert_not(corral__telem_healthy(t, T0 + S(2), reason, sizeof(reason), msg, sizeof(msg)));
    cr_assert_str_eq(reason, "GPUUnreadable");
    cr_assert(strstr(msg, "GPU 2 (GPU-fa4e0000-0000-0000-0000-000000000002) cannot be read: GPU "
                          "is lost"),
              "%s", msg);
    char *out = render(t, T0 + S(2), false);
    cr_assert_null(strstr(out, "DCGM_FI_DEV_GPU_UTIL{gpu=\"2\""), "no series for a lost GPU");
    cr_assert(strstr(out, "DCGM_FI_DEV_GPU_UTIL{gpu=\"3\""));
    corral_free(out);
    unsetenv("FAKE_NVML_LOST");
    corral__telem_update(t, T0 + S(3));
    cr_assert(corral__telem_healthy(t, T0 + S(3), reason, sizeof(reason), msg, sizeof(msg)));
    corral__telem_free(t);
    corral_gpu_inventory_fini(&inv);
}

/* --- /metrics/resource and accounting -----------------------------------------------------------
 */

Test(telemetry, resource_metrics)
{
    corral__telem_t *t = sim("node-r");
    hold(t, 4, "train", 70, T0);
    corral__ctr_usage_t u[] = {{"team-a", "train", "main", 12.5, 1048576},
                               {"team-a", "train", "side", 0.5, 2097152},
                               {"team-b", "web", "app", 1.25, 4096}};
    corral__telem_set_usage(t, 1000, 8e9, u, 3, T0 + S(5));
    char *out = render(t, T0 + S(6), true);
    cr_assert(strstr(out, "container_cpu_usage_seconds_total{container=\"side\",namespace=\"team-"
                          "a\",pod=\"train\"} 0.500000000 1700000005000\n"),
              "%s", out);
    cr_assert(strstr(out, "pod_cpu_usage_seconds_total{namespace=\"team-a\",pod=\"train\"} "
                          "13.000000000 1700000005000\n"));
    cr_assert(strstr(out, "pod_memory_working_set_bytes{namespace=\"team-b\",pod=\"web\"} 4096 "
                          "1700000005000\n"));
    cr_assert(strstr(out, "node_memory_working_set_bytes 8000000000 1700000005000\n"));
    char want[256];
    snprintf(want, sizeof(want),
             "container_accelerator_duty_cycle{acc_id=\"%s\",container=\"main\",make=\"nvidia\","
             "model=\"NVIDIA H100 80GB HBM3\",namespace=\"team-a\",pod=\"train\"} ",
             inv.gpus[4].uuid);
    cr_assert(strstr(out, want), "%s", out);
    cr_assert(strstr(out, "corral_node_gpu_utilization{gpu=\"5\","));
    corral_free(out);
    corral__telem_free(t);
    corral_gpu_inventory_fini(&inv);
}

Test(telemetry, gpu_seconds_used_goes_with_the_last_status)
{
    corral__telem_t *t = sim("node-g");
    corral__podtab_t tab;
    corral__podtab_init(&tab);
    corral__pod_t *p = corral_calloc(1, sizeof(*p));
    p->uid = corral_strdup("u1");
    p->ns = corral_strdup("team-a");
    p->name = corral_strdup("job");
    p->node = corral_strdup("node-g");
    p->gpu_ids = corral_strdup("1,2");
    p->sim_util = 50;
    p->restart_policy = corral_strdup("Never");
    p->nctrs = 1;
    p->ctrs = corral_calloc(1, sizeof(corral__ctr_t));
    p->ctrs[0].name = corral_strdup("main");
    p->ctrs[0].image = corral_strdup("none");
    p->ctrs[0].st = CORRAL__C_RUNNING;
    corral__podtab_add(&tab, p);
    corral__usage_owners(t, &tab, 8, T0);
    for (int k = 1; k <= 100; k++) { /* 100 ticks of 100 ms */
        corral__telem_update(t, T0 + k * 100000);
        corral__usage_integrate(t, &tab, 100000);
    }
    /* two GPUs near 50 % for 10 s */
    cr_assert(p->gpu_used_s > 2 * 0.47 * 10 && p->gpu_used_s < 2 * 0.53 * 10, "%f", p->gpu_used_s);
    corral_arena_t a;
    corral_arena_init(&a);
    corral_buf_t b;
    corral_buf_init(&b);
    corral_val_to_json(corral__pod_status(&a, p, "127.0.0.1", T0 + S(10)), &b, false);
    cr_assert_null(strstr(corral_buf_str(&b), "gpu-seconds-used"), "not while running");
    p->ctrs[0].st = CORRAL__C_TERMINATED;
    p->ctrs[0].term = (corral__term_t){.set = true, .exit_code = 0};
    corral_buf_reset(&b);
    corral_val_to_json(corral__pod_status(&a, p, "127.0.0.1", T0 + S(10)), &b, false);
    char want[128];
    snprintf(want, sizeof(want), "\"annotations\":{\"corral.dev/gpu-seconds-used\":\"%.3f\"}",
             p->gpu_used_s);
    cr_assert(strstr(corral_buf_str(&b), want), "%s", corral_buf_str(&b));
    corral_buf_fini(&b);
    corral_arena_fini(&a);
    corral__podtab_fini(&tab);
    corral__telem_free(t);
    corral_gpu_inventory_fini(&inv);
}

static corral__pod_t *share_pod(const char *name, const char *ids, int util, int milli)
{
    corral__pod_t *p = corral_calloc(1, sizeof(*p));
    p->uid = corral_strdup(name);
    p->ns = corral_strdup("team-a");
    p->name = corral_strdup(name);
    p->node = corral_strdup("node-g");
    p->gpu_ids = corral_strdup(ids);
    p->sim_util = util;
    p->gpu_milli = milli;
    p->restart_policy = corral_strdup("Never");
    p->nctrs = 1;
    p->ctrs = corral_calloc(1, sizeof(corral__ctr_t));
    p->ctrs[0].name = corral_strdup("main");
    p->ctrs[0].image = corral_strdup("none");
    p->ctrs[0].st = CORRAL__C_RUNNING;
    return p;
}

/* Two half-GPU shares at 80 % of their share each: the GPU is 80 % busy,
 * labelled with its first holder, and each share is credited half of it,
 * never more than it was allocated. */
Test(telemetry, gpu_shares_add_their_load_and_split_the_use)
{
    corral__telem_t *t = sim("node-g");
    corral__podtab_t tab;
    corral__podtab_init(&tab);
    corral__pod_t *a = share_pod("a", "3", 80, 500), *b = share_pod("b", "3", 80, 500);
    corral__podtab_add(&tab, a);
    corral__podtab_add(&tab, b);
    corral__usage_owners(t, &tab, 8, T0);
    for (int k = 1; k <= 100; k++) {
        corral__telem_update(t, T0 + k * 100000);
        corral__usage_integrate(t, &tab, 100000);
    }
    double u = corral__telem_util(t, 3);
    cr_assert(u > 75 && u < 85, "%f", u);
    cr_assert(a->gpu_used_s > 0.5 * 0.75 * 10 && a->gpu_used_s < 0.5 * 0.85 * 10, "%f",
              a->gpu_used_s);
    cr_assert(a->gpu_used_s + b->gpu_used_s <= 10.0, "%f", a->gpu_used_s + b->gpu_used_s);
    corral_buf_t out;
    corral_buf_init(&out);
    corral__telem_render_dcgm(t, T0 + S(10), &out);
    cr_assert(strstr(corral_buf_str(&out), "pod=\"a\""), "%s", corral_buf_str(&out));
    cr_assert_null(strstr(corral_buf_str(&out), "pod=\"b\""));
    corral_buf_fini(&out);
    corral__podtab_fini(&tab);
    corral__telem_free(t);
    corral_gpu_inventory_fini(&inv);
}

Test(telemetry, gpu_ids_and_sim_util_parsing)
{
    int ids[8];
    cr_assert_eq(corral__gpu_ids_parse("0, 3,7", ids, 8), 3);
    cr_assert_eq(ids[1], 3);
    cr_assert_eq(corral__gpu_ids_parse("", ids, 8), 0);
    cr_assert_eq(corral__gpu_ids_parse("x", ids, 8), 0);
    cr_assert_eq(corral__pod_sim_util(NULL), CORRAL__SIM_BUSY);
}
