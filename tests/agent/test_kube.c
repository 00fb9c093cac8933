/* corral agent --kube's device plugin lookup, the pure part: which bound pod
 * kubelet is admitting, from its containers' requests, its gpu-ids and the
 * devices kubelet offers (corral__kpod_fill, corral__kpod_match). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "agent/agent_int.h"
#include "corral/json.h"

static corral_gpu_inventory_t inv8(void)
{
    corral_gpu_inventory_t inv;
    memset(&inv, 0, sizeof(inv));
    inv.n = 8;
    for (int i = 0; i < 8; i++) {
        inv.gpus[i].index = i;
        snprintf(inv.gpus[i].uuid, sizeof(inv.gpus[i].uuid), "GPU-%d", i);
    }
    return inv;
}

/* A pod bound at `bound` (seconds into 2026-01-01T00:00) with gpu-ids ids
 * (NULL: none), containers asking want[] and a status fragment. */
static corral__kpod_t *mk(corral_arena_t *a, const char *name, int bound, const char *ids,
                          const char *ctrs, const char *status)
{
    char js[4096];
    snprintf(js, sizeof(js),
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\","
             "\"namespace\":\"ml\",\"uid\":\"uid-%s\",\"creationTimestamp\":"
             "\"2026-01-01T00:00:00Z\"%s%s%s},\"spec\":{\"nodeName\":\"n\",\"containers\":[%s]},"
             "\"status\":{\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"True\","
             "\"lastTransitionTime\":\"2026-01-01T00:00:%02dZ\"}]%s}}",
             name, name, ids ? ",\"annotations\":{\"corral.dev/gpu-ids\":\"" : "", ids ? ids : "",
             ids ? "\"}" : "", ctrs, bound, status);
    corral_val_t *raw = NULL;
    corral_json_err_t je;
    cr_assert_eq(corral_json_parse(a, js, strlen(js), &raw, &je), 0, "%s", js);
    corral_obj_t *o = NULL;
    cr_assert_eq(corral_obj_decode(a, raw, NULL, NULL, &o), 0, "%s", js);
    corral_gpu_inventory_t inv = inv8();
    corral__kpod_t *kp = corral_calloc(1, sizeof(*kp));
    corral__kpod_fill(kp, o, "nvidia.com/gpu", &inv);
    return kp;
}

#define GPUS(n)                                                                                    \
    "{\"name\":\"c\",\"image\":\"x\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"" #n "\"}}}"
#define NOGPU "{\"name\":\"side\",\"image\":\"x\"}"

static void freeall(corral__kpod_t **p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        corral__kpod_clear(p[i]);
        corral_free(p[i]);
    }
}

Test(kube, fill)
{
    corral_arena_t a;
    corral_arena_init(&a);
    corral__kpod_t *p = mk(&a, "p", 7, "3,9,1", GPUS(2) "," NOGPU "," GPUS(1), "");
    cr_assert_str_eq(p->ns, "ml");
    cr_assert_eq(p->nctr, 3);
    cr_assert_eq(p->want[0], 2);
    cr_assert_eq(p->want[1], 0);
    cr_assert_eq(p->want[2], 1);
    cr_assert_eq(p->nuuids, 3);
    cr_assert_str_eq(p->uuids[0], "GPU-3");
    cr_assert_null(p->uuids[1]); /* index 9: not on this node */
    cr_assert_str_eq(p->uuids[2], "GPU-1");
    cr_assert(p->waiting);
    cr_assert_gt(p->bound_us, p->created_us);
    corral__kpod_t *r = mk(&a, "r", 0, "0", GPUS(1),
                           ",\"containerStatuses\":[{\"name\":\"c\",\"state\":{\"running\":{}}}]");
    cr_assert_not(r->waiting);
    corral__kpod_t *d = mk(&a, "d", 0, "0", GPUS(1), ",\"phase\":\"Succeeded\"");
    cr_assert_not(d->waiting);
    corral__kpod_t *w = mk(&a, "w", 0, "0", GPUS(1),
                           ",\"containerStatuses\":[{\"name\":\"c\",\"state\":{\"waiting\":"
                           "{\"reason\":\"ContainerCreating\"}}}]");
    cr_assert(w->waiting);
    corral__kpod_t *all[] = {p, r, d, w};
    freeall(all, 4);
    corral_arena_fini(&a);
}

Test(kube, match_preferred_then_allocate)
{
    corral_arena_t a;
    corral_arena_init(&a);
    corral__kpod_t *pods[] = {mk(&a, "two", 5, "2,5", GPUS(2), "")};
    const char *all[] = {"GPU-0", "GPU-1", "GPU-2", "GPU-3", "GPU-4", "GPU-5", "GPU-6", "GPU-7"};
    int ctr = -1, off = -1;
    /* GetPreferredAllocation: every free device offered */
    cr_assert_eq(corral__kpod_match(pods, 1, all, 8, 2, &ctr, &off), 0);
    cr_assert_eq(ctr, 0);
    cr_assert_eq(off, 0);
    /* the wrong count, or its devices not offered: no match */
    cr_assert_eq(corral__kpod_match(pods, 1, all, 8, 1, &ctr, &off), -1);
    const char *busy[] = {"GPU-0", "GPU-1", "GPU-2", "GPU-3"};
    cr_assert_eq(corral__kpod_match(pods, 1, busy, 4, 2, &ctr, &off), -1);
    /* Allocate with exactly its devices (any order), then once more (a repeat) */
    const char *chosen[] = {"GPU-5", "GPU-2"};
    cr_assert_eq(corral__kpod_match(pods, 1, chosen, 2, 2, &ctr, &off), 0);
    pods[0]->given |= 1;
    cr_assert_eq(corral__kpod_match(pods, 1, chosen, 2, 2, &ctr, &off), 0);
    /* but a given pod no longer takes offers of more devices */
    cr_assert_eq(corral__kpod_match(pods, 1, all, 8, 2, &ctr, &off), -1);
    freeall(pods, 1);
    corral_arena_fini(&a);
}

Test(kube, oldest_binding_first)
{
    corral_arena_t a;
    corral_arena_init(&a);
    corral__kpod_t *pods[] = {
        mk(&a, "young", 30, "0,1", GPUS(2), ""),
        mk(&a, "old", 10, "2,3", GPUS(2), ""),
        mk(&a, "older-but-started", 1, "4,5", GPUS(2),
           ",\"containerStatuses\":[{\"name\":\"c\",\"started\":true,\"state\":{}}]"),
        mk(&a, "no-ids", 0, NULL, GPUS(2), ""),
        mk(&a, "ids-mismatch", 0, "6", GPUS(2), ""),
    };
    const char *all[] = {"GPU-0", "GPU-1", "GPU-2", "GPU-3", "GPU-4", "GPU-5", "GPU-6", "GPU-7"};
    int ctr, off;
    cr_assert_eq(corral__kpod_match(pods, 5, all, 8, 2, &ctr, &off), 1);
    /* old's devices taken: young is next */
    const char *rest[] = {"GPU-0", "GPU-1", "GPU-4", "GPU-5", "GPU-6", "GPU-7"};
    cr_assert_eq(corral__kpod_match(pods, 5, rest, 6, 2, &ctr, &off), 0);
    freeall(pods, 5);
    corral_arena_fini(&a);
}

Test(kube, split_over_containers_in_order)
{
    corral_arena_t a;
    corral_arena_init(&a);
    corral__kpod_t *pods[] = {mk(&a, "split", 0, "7,6,1", GPUS(1) "," NOGPU "," GPUS(2), "")};
    const char *all[] = {"GPU-0", "GPU-1", "GPU-2", "GPU-3", "GPU-4", "GPU-5", "GPU-6", "GPU-7"};
    int ctr, off;
    /* the first container (1 GPU) comes first: asking 2 does not match yet */
    cr_assert_eq(corral__kpod_match(pods, 1, all, 8, 2, &ctr, &off), -1);
    cr_assert_eq(corral__kpod_match(pods, 1, all, 8, 1, &ctr, &off), 0);
    cr_assert_eq(ctr, 0);
    cr_assert_eq(off, 0);
    const char *first[] = {"GPU-7"};
    cr_assert_eq(corral__kpod_match(pods, 1, first, 1, 1, &ctr, &off), 0);
    pods[0]->given |= UINT64_C(1) << ctr;
    /* then the third container gets the other two */
    const char *left[] = {"GPU-0", "GPU-1", "GPU-2", "GPU-3", "GPU-4", "GPU-5", "GPU-6"};
    cr_assert_eq(corral__kpod_match(pods, 1, left, 7, 2, &ctr, &off), 0);
    cr_assert_eq(ctr, 2);
    cr_assert_eq(off, 1);
    cr_assert_str_eq(pods[0]->uuids[off], "GPU-6");
    cr_assert_str_eq(pods[0]->uuids[off + 1], "GPU-1");
    freeall(pods, 1);
    corral_arena_fini(&a);
}

Test(kube, given_survives_an_update)
{
    corral_arena_t a;
    corral_arena_init(&a);
    corral__kpod_t *p = mk(&a, "p", 0, "0", GPUS(1), "");
    p->given = 1;
    corral_gpu_inventory_t inv = inv8();
    const char *js = "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\","
                     "\"namespace\":\"ml\",\"uid\":\"uid-p\",\"annotations\":"
                     "{\"corral.dev/gpu-ids\":\"0\"}},\"spec\":{\"containers\":[" GPUS(1) "]}}";
    corral_val_t *raw = NULL;
    corral_json_err_t je;
    cr_assert_eq(corral_json_parse(&a, js, strlen(js), &raw, &je), 0);
    corral_obj_t *o = NULL;
    cr_assert_eq(corral_obj_decode(&a, raw, NULL, NULL, &o), 0);
    corral__kpod_fill(p, o, "nvidia.com/gpu", &inv);
    cr_assert_eq(p->given, 1);
    corral__kpod_t *all[] = {p};
    freeall(all, 1);
    corral_arena_fini(&a);
}
