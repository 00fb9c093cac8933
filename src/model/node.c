/*
 * Nodes: taints, unschedulable, capacity/allocatable, conditions, addresses,
 * and the GPU link matrix annotation Corral's agent writes.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model_int.h"

/* --- GPU topology matrix ------------------------------------------------------ */

static int link_rank(const char *cell, size_t n)
{
    static const struct {
        const char *name;
        int rank;
    } tab[] = {{"X", CORRAL_LINK_SELF},  {"SYS", CORRAL_LINK_SYS}, {"NODE", CORRAL_LINK_NODE},
               {"PHB", CORRAL_LINK_PHB}, {"PXB", CORRAL_LINK_PXB}, {"PIX", CORRAL_LINK_PIX}};
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(tab); i++) {
        if (strlen(tab[i].name) == n && memcmp(tab[i].name, cell, n) == 0)
            return tab[i].rank;
    }
    if (n >= 3 && n <= 4 && cell[0] == 'N' && cell[1] == 'V') {
        int links = 0;
        for (size_t i = 2; i < n; i++) {
            if (!isdigit((unsigned char)cell[i]))
                return -1;
            links = links * 10 + (cell[i] - '0');
        }
        return links >= 1 ? CORRAL_LINK_NV + links : -1;
    }
    return -1;
}

/* Split one row into cells; returns the number of cells or -1 on a bad cell. */
static int topo_row(const char *s, size_t len, uint16_t *out, int max, char *why, size_t why_len,
                    int row)
{
    int n = 0;
    size_t i = 0;
    while (i < len) {
        while (i < len && (s[i] == ',' || isspace((unsigned char)s[i])))
            i++;
        if (i >= len)
            break;
        size_t start = i;
        while (i < len && s[i] != ',' && !isspace((unsigned char)s[i]))
            i++;
        int r = link_rank(s + start, i - start);
        if (r < 0) {
            snprintf(why, why_len,
                     "row %d: \"%.*s\" is not a link type (X, NV<n>, PIX, PXB, PHB, NODE, SYS)",
                     row, (int)(i - start), s + start);
            return -1;
        }
        if (n >= max) {
            snprintf(why, why_len, "row %d has more than %d cells", row, max);
            return -1;
        }
        out[n++] = (uint16_t)r;
    }
    return n;
}

int corral_gpu_topo_parse(corral_arena_t *a, const char *s, corral_gpu_topo_t *out, char *why,
                          size_t why_len)
{
    enum { M = CORRAL_GPU_TOPO_MAX };
    uint16_t *cells = corral_arena_alloc(a, (size_t)M * M * sizeof(uint16_t));
    int rows = 0, cols = -1;
    const char *p = s;
    while (*p) {
        const char *semi = strchr(p, ';');
        size_t len = semi ? (size_t)(semi - p) : strlen(p);
        if (rows >= M) {
            snprintf(why, why_len, "more than %d GPUs", M);
            return CORRAL_EINVAL;
        }
        int n = topo_row(p, len, cells + (size_t)rows * M, M, why, why_len, rows);
        if (n < 0)
            return CORRAL_EINVAL;
        if (n > 0) {
            if (cols >= 0 && n != cols) {
                snprintf(why, why_len, "row %d has %d cells, row 0 has %d", rows, n, cols);
                return CORRAL_EINVAL;
            }
            cols = n;
            rows++;
        }
        p = semi ? semi + 1 : p + len;
    }
    if (rows == 0 || rows != cols) {
        snprintf(why, why_len, "matrix must be square with one row per GPU (%d rows, %d columns)",
                 rows, cols < 0 ? 0 : cols);
        return CORRAL_EINVAL;
    }
    out->n = rows;
    out->link = corral_arena_alloc(a, (size_t)rows * rows * sizeof(uint16_t));
    for (int i = 0; i < rows; i++) {
        for (int j = 0; j < rows; j++) {
            uint16_t l = cells[(size_t)i * M + j];
            uint16_t t = cells[(size_t)j * M + i];
            if ((i == j) != (l == CORRAL_LINK_SELF)) {
                snprintf(why, why_len, "X must be exactly on the diagonal (row %d, column %d)", i,
                         j);
                return CORRAL_EINVAL;
            }
            if (l != t) {
                snprintf(why, why_len, "matrix is not symmetric at row %d, column %d", i, j);
                return CORRAL_EINVAL;
            }
            out->link[i * rows + j] = l;
        }
    }
    return 0;
}

/* --- the Node kind -------------------------------------------------------------- */

static void dec_taint_effect(corral__dec_t *d, const corral_val_t *v, void *out)
{
    static const char *const effects[] = {"NoSchedule", "PreferNoSchedule", "NoExecute"};
    corral__dec_enum(d, v, out, effects, CORRAL_ARRAY_LEN(effects));
}

static const corral__field_t taint_fields[] = {
    CORRAL__F("key", corral__dec_str, corral_taint_t, key),
    CORRAL__F("value", corral__dec_str, corral_taint_t, value),
    CORRAL__F("effect", dec_taint_effect, corral_taint_t, effect),
    CORRAL__KEEP("timeAdded"),
};

static void dec_taint(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_taint_t *t = out;
    if (!CORRAL__DEC_MAP(d, v, taint_fields, t))
        return;
    if (!t->key || !*t->key) {
        corral__dec_err_field(d, v, "key", "required");
    } else {
        const char *err = corral_label_key_error(t->key);
        if (err)
            corral__dec_err_field(d, corral_val_get(v, "key"), "key", "%s", err);
    }
    if (t->value) {
        const char *err = corral_label_value_error(t->value);
        if (err)
            corral__dec_err_field(d, corral_val_get(v, "value"), "value", "%s", err);
    }
    if (!t->effect && !corral_val_get(v, "effect"))
        corral__dec_err_field(d, v, "effect",
                              "required (NoSchedule, PreferNoSchedule or NoExecute)");
}

static void dec_taints(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_node_t *n = out;
    corral__dec_seq(d, v, sizeof(corral_taint_t), dec_taint, (void **)&n->taints, &n->ntaints);
}

static const corral__field_t node_spec_fields[] = {
    CORRAL__F("unschedulable", corral__dec_bool, corral_node_t, unschedulable),
    CORRAL__WHOLE("taints", dec_taints),
    CORRAL__F("providerID", corral__dec_str, corral_node_t, provider_id),
    CORRAL__F("podCIDR", corral__dec_str, corral_node_t, pod_cidr),
    CORRAL__KEEP("podCIDRs"),
    CORRAL__KEEP("configSource"),
    CORRAL__KEEP("externalID"),
};

static const corral__field_t address_fields[] = {
    CORRAL__F("type", corral__dec_str, corral_node_address_t, type),
    CORRAL__F("address", corral__dec_str, corral_node_address_t, address),
};

static void dec_address(corral__dec_t *d, const corral_val_t *v, void *out)
{
    CORRAL__DEC_MAP(d, v, address_fields, out);
}

static void dec_addresses(corral__dec_t *d, const corral_val_t *v, void *out)
{
    corral_node_t *n = out;
    corral__dec_seq(d, v, sizeof(corral_node_address_t), dec_address, (void **)&n->addresses,
                    &n->naddresses);
}

static const corral__field_t node_status_fields[] = {
    CORRAL__F("capacity", corral__dec_reslist, corral_node_t, capacity),
    CORRAL__F("allocatable", corral__dec_reslist, corral_node_t, allocatable),
    CORRAL__F("conditions", corral__dec_conditions, corral_node_t, conditions),
    CORRAL__WHOLE("addresses", dec_addresses),
    CORRAL__KEEP("nodeInfo"),
    CORRAL__KEEP("images"),
    CORRAL__KEEP("daemonEndpoints"),
    CORRAL__KEEP("volumesInUse"),
    CORRAL__KEEP("volumesAttached"),
    CORRAL__KEEP("phase"),
    CORRAL__KEEP("config"),
    CORRAL__KEEP("runtimeHandlers"),
    CORRAL__KEEP("features"),
};

static void dec_node_spec(corral__dec_t *d, const corral_val_t *v, void *out)
{
    CORRAL__DEC_MAP(d, v, node_spec_fields, out);
}

static void dec_node_status(corral__dec_t *d, const corral_val_t *v, void *out)
{
    CORRAL__DEC_MAP(d, v, node_status_fields, out);
}

static const corral__field_t node_fields[] = {
    CORRAL__TOP_FIELDS,
    CORRAL__WHOLE("spec", dec_node_spec),
    CORRAL__WHOLE("status", dec_node_status),
};

/* The topology annotation must parse and match the node's GPU count. */
static void check_topology(corral__dec_t *d, const corral_val_t *root, const corral_obj_t *o)
{
    const char *topo = corral_strmap_get(&o->meta.annotations, CORRAL_GPU_TOPO_ANNOTATION);
    if (!topo)
        return;
    const corral_val_t *at = corral_val_dig(root, "metadata.annotations");
    at = corral_val_get(at, CORRAL_GPU_TOPO_ANNOTATION);
    corral_gpu_topo_t t;
    char why[200];
    size_t m = corral__dec_enter(d, "metadata.annotations");
    if (corral_gpu_topo_parse(d->a, topo, &t, why, sizeof(why)) != 0) {
        corral__dec_err_field(d, at, CORRAL_GPU_TOPO_ANNOTATION, "%s", why);
    } else {
        const corral_qty_t *g = corral_reslist_get(&o->u.node->allocatable, "nvidia.com/gpu");
        int64_t gpus = -1;
        if (g && corral_qty_value(g, &gpus) == 0 && gpus != t.n)
            corral__dec_err_field(d, at, CORRAL_GPU_TOPO_ANNOTATION,
                                  "matrix describes %d GPUs but the node has nvidia.com/gpu: %lld",
                                  t.n, (long long)gpus);
    }
    corral__dec_leave(d, m);
}

void corral__kind_node(corral__dec_t *d, const corral_val_t *root, corral_obj_t *o)
{
    corral_node_t *n = corral_arena_alloc(d->a, sizeof(*n));
    o->u.node = n;
    CORRAL__DEC_MAP(d, root, node_fields, n);
    if (n->allocatable.n == 0)
        n->allocatable = n->capacity; /* as the scheduler does without allocatable */
    check_topology(d, root, o);
}
