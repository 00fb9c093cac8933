/*
 * Simulated-node profile files (`--gpus sim:FILE`): a small YAML or JSON
 * mapping that describes a GPU server (count, model, memory, link matrix,
 * compute capability, driver, the node's cpu and memory), optionally on top
 * of a built-in profile (`base: h100-sxm-8`). Read with Corral's own YAML
 * loader, so input is bounded and every mistake is reported as
 * FILE:LINE:COL with the field, a "did you mean" for misspelt field names,
 * and all errors at once rather than the first. The format is documented in
 * docs/agent.md ("GPU discovery").
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "agent/gpu_int.h"
#include "corral/buf.h"
#include "corral/diag.h"
#include "corral/hint.h"
#include "corral/model.h"
#include "corral/quantity.h"
#include "corral/yaml.h"

typedef struct pctx {
    corral_diag_t *d;
    const char *file;
    corral_arena_t *a;
    corral__gpu_sim_spec_t s;
    const corral__gpu_sim_spec_t *base;
    const corral_val_t *gpus_v, *topo_v;
    const char *product;
    bool base_bad; /* `base` named no built-in profile: skip the checks it would satisfy */
} pctx_t;

static void bad(pctx_t *c, const corral_val_t *v, const char *field, const char *fmt, ...)
    CORRAL_PRINTF(4, 5);

static void bad(pctx_t *c, const corral_val_t *v, const char *field, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    corral_diag_vadd(c->d, CORRAL_SEV_ERROR, c->file, v ? v->line : 0, v ? v->col : 0, field, fmt,
                     ap);
    va_end(ap);
}

static bool is_scalar(const corral_val_t *v)
{
    return v->kind != CORRAL_VAL_NULL && v->kind != CORRAL_VAL_SEQ && v->kind != CORRAL_VAL_MAP;
}

/* The text of a scalar as written ("9.0" stays "9.0"), or NULL after an error. */
static const char *text(pctx_t *c, const corral_val_t *v, const char *field)
{
    if (!is_scalar(v) || !v->s || !*v->s) {
        bad(c, v, field, "must be a non-empty string, not %s",
            v->kind == CORRAL_VAL_STR ? "an empty string" : corral_val_kind_name(v->kind));
        return NULL;
    }
    if (v->len > 255) {
        bad(c, v, field, "is %zu characters long; at most 255", v->len);
        return NULL;
    }
    return v->s;
}

/* "MAJOR.MINOR" with small non-negative integers (both parts required). */
static bool version2(const char *s, int *major, int *minor)
{
    int a = 0, b = 0, n = 0;
    if (sscanf(s, "%3d.%3d%n", &a, &b, &n) != 2 || s[n] != '\0' || a < 0 || b < 0)
        return false;
    *major = a;
    *minor = b;
    return true;
}

static void f_name(pctx_t *c, const corral_val_t *v)
{
    c->s.profile = text(c, v, "name");
}

static void f_gpus(pctx_t *c, const corral_val_t *v)
{
    if (v->kind != CORRAL_VAL_INT || v->u.i < 1 || v->u.i > CORRAL_GPU_MAX) {
        bad(c, v, "gpus", "must be a whole number from 1 to %d", CORRAL_GPU_MAX);
        return;
    }
    c->s.n = (int)v->u.i;
    c->gpus_v = v;
}

static void f_model(pctx_t *c, const corral_val_t *v)
{
    const char *t = text(c, v, "model");
    if (t && strlen(t) >= sizeof(((corral_gpu_t *)0)->name))
        bad(c, v, "model", "is longer than %zu characters", sizeof(((corral_gpu_t *)0)->name) - 1);
    else if (t)
        c->s.model = t;
}

static void f_product(pctx_t *c, const corral_val_t *v)
{
    c->product = text(c, v, "product");
}

static void f_memory_mib(pctx_t *c, const corral_val_t *v)
{
    if (v->kind != CORRAL_VAL_INT || v->u.i < 1 || v->u.i > (INT64_C(1) << 30)) {
        bad(c, v, "memoryMiB",
            "must be a whole number of MiB per GPU (e.g. 81559 for an H100 80GB), from 1 to 2^30");
        return;
    }
    c->s.memory_mib = (uint64_t)v->u.i;
}

static void f_topology(pctx_t *c, const corral_val_t *v)
{
    if (v->kind == CORRAL_VAL_SEQ) {
        /* One row per list item: the readable way to write a big matrix. */
        corral_buf_t b;
        corral_buf_init(&b);
        for (size_t i = 0; i < v->n; i++) {
            const char *row = text(c, v->items[i], "topology");
            if (!row) {
                corral_buf_fini(&b);
                return;
            }
            corral_buf_printf(&b, "%s%s", i ? ";" : "", row);
        }
        c->s.topology = corral_arena_strdup(c->a, corral_buf_str(&b));
        corral_buf_fini(&b);
    } else {
        c->s.topology = text(c, v, "topology");
    }
    c->topo_v = c->s.topology ? v : NULL;
}

static void f_compute(pctx_t *c, const corral_val_t *v)
{
    const char *t = text(c, v, "computeCapability");
    if (t && !version2(t, &c->s.compute_major, &c->s.compute_minor))
        bad(c, v, "computeCapability", "\"%s\" is not MAJOR.MINOR (e.g. \"9.0\"; quote it)", t);
}

static void f_family(pctx_t *c, const corral_val_t *v)
{
    c->s.family = text(c, v, "family");
}

static void f_machine(pctx_t *c, const corral_val_t *v)
{
    c->s.machine = text(c, v, "machine");
}

static void f_driver(pctx_t *c, const corral_val_t *v)
{
    const char *t = text(c, v, "driverVersion");
    if (!t)
        return;
    int dots = 0;
    bool ok = t[0] >= '0' && t[0] <= '9' && strlen(t) < 32;
    for (const char *p = t; ok && *p; p++) {
        if (*p == '.')
            ok = ++dots <= 2 && p[1] >= '0' && p[1] <= '9';
        else
            ok = *p >= '0' && *p <= '9';
    }
    if (!ok || dots < 1)
        bad(c, v, "driverVersion", "\"%s\" is not X.Y or X.Y.Z (e.g. \"550.54.15\")", t);
    else
        c->s.driver_version = t;
}

static void f_cuda(pctx_t *c, const corral_val_t *v)
{
    const char *t = text(c, v, "cudaVersion");
    if (t && !version2(t, &c->s.cuda_major, &c->s.cuda_minor))
        bad(c, v, "cudaVersion", "\"%s\" is not MAJOR.MINOR (e.g. \"12.4\"; quote it)", t);
}

/* A Kubernetes quantity (an integer or a string such as "500m" or "2Ti"). */
static bool quantity(pctx_t *c, const corral_val_t *v, const char *field, int scale, int64_t *out)
{
    const char *t = text(c, v, field);
    if (!t)
        return false;
    corral_qty_t q;
    char why[160];
    if (corral_qty_parse(t, strlen(t), &q, why, sizeof(why)) != 0) {
        bad(c, v, field, "%s", why);
        return false;
    }
    int64_t x = 0;
    if (corral_qty_scaled(&q, scale, &x) != 0 || x <= 0) {
        bad(c, v, field, "\"%s\" must be a positive quantity that fits in 64 bits", t);
        return false;
    }
    *out = x;
    return true;
}

static void f_cpu(pctx_t *c, const corral_val_t *v)
{
    quantity(c, v, "cpu", 3, &c->s.cpu_milli);
}

static void f_memory(pctx_t *c, const corral_val_t *v)
{
    quantity(c, v, "memory", 0, &c->s.memory_bytes);
}

static void f_base(pctx_t *c, const corral_val_t *v)
{
    (void)c;
    (void)v; /* read before every other field, in parse_root */
}

static const struct field {
    const char *name;
    void (*fn)(pctx_t *c, const corral_val_t *v);
} fields[] = {
    {"name", f_name},
    {"base", f_base},
    {"gpus", f_gpus},
    {"model", f_model},
    {"product", f_product},
    {"memoryMiB", f_memory_mib},
    {"topology", f_topology},
    {"computeCapability", f_compute},
    {"family", f_family},
    {"machine", f_machine},
    {"driverVersion", f_driver},
    {"cudaVersion", f_cuda},
    {"cpu", f_cpu},
    {"memory", f_memory},
};

static void unknown_field(pctx_t *c, const corral_val_t *key)
{
    const char *names[CORRAL_ARRAY_LEN(fields)];
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(fields); i++)
        names[i] = fields[i].name;
    const char *near = corral_hint_closest(key->s, names, CORRAL_ARRAY_LEN(fields));
    if (near)
        bad(c, key, key->s, "unknown field; did you mean \"%s\"?", near);
    else
        bad(c, key, key->s,
            "unknown field (known: name, base, gpus, model, product, memoryMiB, topology, "
            "computeCapability, family, machine, driverVersion, cudaVersion, cpu, memory)");
}

/* Start from `base` (a built-in profile) or from the defaults. */
static void start(pctx_t *c, const corral_val_t *root)
{
    memset(&c->s, 0, sizeof(c->s));
    c->s.driver_version = CORRAL__GPU_SIM_DRIVER;
    c->s.cuda_major = CORRAL__GPU_SIM_CUDA_MAJOR;
    c->s.cuda_minor = CORRAL__GPU_SIM_CUDA_MINOR;
    const corral_val_t *bv = corral_val_get(root, "base");
    if (!bv)
        return;
    const char *name = text(c, bv, "base");
    if (!name) {
        c->base_bad = true;
        return;
    }
    c->base = corral__gpu_sim_find(name);
    if (!c->base) {
        c->base_bad = true;
        const char *near = corral_hint_closest(name, corral_gpu_sim_profiles, 4);
        for (size_t i = 0; !near && i < 4; i++) {
            if (strncmp(corral_gpu_sim_profiles[i], name, strlen(name)) == 0)
                near = corral_gpu_sim_profiles[i];
        }
        bad(c, bv, "base", "no built-in profile \"%s\"%s%s%s (built-in: %s)", name,
            near ? "; did you mean \"" : "", near ? near : "", near ? "\"?" : "",
            "h100-sxm-8, dgx1-v100-8, a100-pcie-4, l4-8");
        return;
    }
    c->s = *c->base;
}

/* The checks across fields, once all are read. */
static void check(pctx_t *c, const corral_val_t *root)
{
    if (c->base_bad)
        return;
    if (!c->s.model)
        bad(c, root, "model", "is required (the GPU name as nvidia-smi prints it), or a base");
    if (!c->s.memory_mib)
        bad(c, root, "memoryMiB", "is required (MiB per GPU), or a base");
    corral_gpu_topo_t t = {0};
    if (c->topo_v) {
        char why[256];
        if (corral_gpu_topo_parse(c->a, c->s.topology, &t, why, sizeof(why)) != 0) {
            bad(c, c->topo_v, "topology", "%s", why);
            return;
        }
        if (!c->gpus_v)
            c->s.n = t.n;
        else if (t.n != c->s.n)
            bad(c, c->topo_v, "topology", "has %d rows but gpus is %d", t.n, c->s.n);
    } else if (c->base && c->gpus_v && c->s.n != c->base->n) {
        bad(c, c->gpus_v, "gpus",
            "is %d but the base profile %s has %d GPUs; give a topology for %d GPUs", c->s.n,
            c->base->profile, c->base->n, c->s.n);
    }
    if (!c->s.n)
        bad(c, root, "gpus", "is required (1 to %d), or a topology or a base", CORRAL_GPU_MAX);
    if (!c->base || c->s.n != c->base->n)
        c->s.bus_ids = NULL;
}

static void parse_root(pctx_t *c, const corral_val_t *root)
{
    start(c, root);
    for (size_t i = 0; i < root->n; i++) {
        const corral_val_t *k = root->pairs[i].key, *v = root->pairs[i].val;
        size_t j = 0;
        while (j < CORRAL_ARRAY_LEN(fields) && strcmp(fields[j].name, k->s) != 0)
            j++;
        if (j == CORRAL_ARRAY_LEN(fields))
            unknown_field(c, k);
        else
            fields[j].fn(c, v);
    }
    check(c, root);
}

/* The profile's name when the file gives none: its base name without extension. */
static const char *default_name(corral_arena_t *a, const char *file)
{
    const char *slash = strrchr(file, '/');
    const char *b = slash ? slash + 1 : file;
    const char *dot = strrchr(b, '.');
    size_t n = dot && dot != b ? (size_t)(dot - b) : strlen(b);
    return corral_arena_strndup(a, b, n);
}

static void diag_to_err(const corral_diag_t *d, char *err, size_t errlen)
{
    corral_buf_t b;
    corral_buf_init(&b);
    for (size_t i = 0; i < d->n; i++) {
        if (i)
            corral_buf_puts(&b, "\n");
        corral_diag_format(&d->items[i], &b);
    }
    corral__gpu_err(err, errlen, "%s", corral_buf_str(&b));
    corral_buf_fini(&b);
}

static int parse_text(pctx_t *c, const char *text, size_t len)
{
    size_t fl = strlen(c->file);
    corral_yaml_opts_t opts = {.json = fl > 5 && strcmp(c->file + fl - 5, ".json") == 0};
    corral_doc_t *docs = NULL;
    size_t ndocs = 0;
    int rc = corral_yaml_parse(c->a, text, len, c->file, &opts, c->d, &docs, &ndocs);
    if (rc != 0)
        return rc;
    if (ndocs != 1 || !docs[0].root) {
        bad(c, NULL, NULL, "a GPU profile is one YAML or JSON mapping (found %zu documents)",
            ndocs);
        return CORRAL_EINVAL;
    }
    const corral_val_t *root = docs[0].root;
    if (root->kind != CORRAL_VAL_MAP) {
        bad(c, root, NULL, "a GPU profile is a mapping (gpus: 8, model: ...), not %s",
            corral_val_kind_name(root->kind));
        return CORRAL_EINVAL;
    }
    parse_root(c, root);
    return c->d->errors ? CORRAL_EINVAL : 0;
}

int corral_gpu_profile_parse(const char *text, size_t len, const char *file, const char *node_name,
                             corral_gpu_inventory_t *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    if (!file)
        file = "<profile>";
    if (len > CORRAL_GPU_PROFILE_MAX_BYTES) {
        corral__gpu_err(err, errlen, "%s: a GPU profile is at most %zu KiB; this one is %zu bytes",
                        file, CORRAL_GPU_PROFILE_MAX_BYTES >> 10, len);
        return CORRAL_ETOOBIG;
    }
    corral_arena_t a;
    corral_arena_init(&a);
    corral_diag_t d;
    corral_diag_init(&d);
    pctx_t c = {.d = &d, .file = file, .a = &a};
    int rc = parse_text(&c, text, len);
    if (rc == 0) {
        if (!c.s.profile || (c.base && c.s.profile == c.base->profile))
            c.s.profile = default_name(&a, file);
        corral__gpu_sim_fill(&c.s, node_name ? node_name : "", out);
        snprintf(out->source, sizeof(out->source), "sim:%s", file);
        if (c.product)
            corral__gpu_label_value(out->product, sizeof(out->product), c.product);
        corral__gpu_finish(out);
    } else {
        diag_to_err(&d, err, errlen);
    }
    corral_diag_fini(&d);
    corral_arena_fini(&a);
    return rc;
}
