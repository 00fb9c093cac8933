/*
 * A container's environment and command line, as kubelet builds them:
 * HOSTNAME and sane PATH/HOME first, then envFrom (ConfigMaps and Secrets,
 * with prefix), then env in order (value with $(VAR) expanded against what
 * is defined so far; valueFrom fieldRef, resourceFieldRef, configMapKeyRef
 * and secretKeyRef, optional honoured), then the GPUs the scheduler chose
 * (corral.dev/gpu-ids): CUDA_VISIBLE_DEVICES with their indices,
 * NVIDIA_VISIBLE_DEVICES with their UUIDs (or "void" when none, as the NVIDIA
 * container runtime reads it) and CUDA_DEVICE_ORDER=PCI_BUS_ID so that CUDA
 * numbers GPUs as NVML does. command and args get $(VAR) expansion against
 * the final environment. Everything is read from the pod's value tree, so a
 * field the typed view does not keep still works. ConfigMaps and Secrets come
 * through a fetch callback (the API in the agent, a table in tests).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corral/base64.h"
#include "agent/agent_int.h"

void corral__expand(const char *in, const char *(*lookup)(void *ctx, const char *name), void *ctx,
                    corral_buf_t *out)
{
    corral_buf_puts(out, "");
    for (const char *p = in; *p;) {
        if (p[0] != '$') {
            corral_buf_putc(out, *p++);
            continue;
        }
        if (p[1] == '$') { /* $$ -> $ */
            corral_buf_putc(out, '$');
            p += 2;
            continue;
        }
        if (p[1] != '(') {
            corral_buf_putc(out, *p++);
            continue;
        }
        const char *close = strchr(p + 2, ')');
        if (!close) { /* unterminated: kept as written */
            corral_buf_puts(out, p);
            return;
        }
        char name[256];
        size_t n = (size_t)(close - (p + 2));
        const char *v = NULL;
        if (n > 0 && n < sizeof(name)) {
            memcpy(name, p + 2, n);
            name[n] = '\0';
            v = lookup(ctx, name);
        }
        if (v)
            corral_buf_puts(out, v);
        else
            corral_buf_append(out, p, (size_t)(close - p) + 1);
        p = close + 1;
    }
}

/* --- the variable list under construction ---------------------------------------------------- */

typedef struct envlist {
    corral_arena_t *a;
    const char **names, **vals;
    size_t n, cap;
} envlist_t;

static void env_set(envlist_t *l, const char *name, const char *val)
{
    for (size_t i = 0; i < l->n; i++) {
        if (!strcmp(l->names[i], name)) {
            l->vals[i] = corral_arena_strdup(l->a, val);
            return;
        }
    }
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 32;
        l->names = corral_arena_grow(l->a, l->names, l->n * sizeof(char *), cap * sizeof(char *));
        l->vals = corral_arena_grow(l->a, l->vals, l->n * sizeof(char *), cap * sizeof(char *));
        l->cap = cap;
    }
    l->names[l->n] = corral_arena_strdup(l->a, name);
    l->vals[l->n++] = corral_arena_strdup(l->a, val);
}

static const char *env_lookup(void *ctx, const char *name)
{
    const envlist_t *l = ctx;
    for (size_t i = 0; i < l->n; i++)
        if (!strcmp(l->names[i], name))
            return l->vals[i];
    return NULL;
}

const char *corral__env_get(char *const *envp, const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; envp && envp[i]; i++)
        if (!strncmp(envp[i], name, n) && envp[i][n] == '=')
            return envp[i] + n + 1;
    return NULL;
}

/* --- valueFrom ---------------------------------------------------------------------------------
 */

/* metadata.labels['key'] -> value in map m (of the pod's metadata). */
static const char *subscript(const corral_val_t *meta, const char *path, const char *field)
{
    size_t fl = strlen(field);
    if (strncmp(path, field, fl) != 0 || path[fl] != '[')
        return NULL;
    const char *k = path + fl + 1;
    char q = *k;
    if (q != '\'' && q != '"')
        return NULL;
    const char *end = strchr(k + 1, q);
    if (!end || end[1] != ']' || end[2])
        return NULL;
    char key[320];
    size_t n = (size_t)(end - (k + 1));
    if (n >= sizeof(key))
        return NULL;
    memcpy(key, k + 1, n);
    key[n] = '\0';
    const char *v = corral_val_get_str(corral_val_get(meta, field + strlen("metadata.")), key);
    return v ? v : "";
}

static const char *field_ref(const corral__envctx_t *e, const char *path)
{
    const corral_val_t *meta = corral_val_get(e->pod, "metadata");
    const corral_val_t *spec = corral_val_get(e->pod, "spec");
    const char *v;
    if (!strcmp(path, "metadata.name"))
        return corral_val_get_str(meta, "name");
    if (!strcmp(path, "metadata.namespace"))
        return corral_val_get_str(meta, "namespace");
    if (!strcmp(path, "metadata.uid"))
        return corral_val_get_str(meta, "uid");
    if ((v = subscript(meta, path, "metadata.labels")) != NULL)
        return v;
    if ((v = subscript(meta, path, "metadata.annotations")) != NULL)
        return v;
    if (!strcmp(path, "spec.nodeName"))
        return corral_val_get_str(spec, "nodeName");
    if (!strcmp(path, "spec.serviceAccountName")) {
        v = corral_val_get_str(spec, "serviceAccountName");
        return v ? v : "default";
    }
    if (!strcmp(path, "status.hostIP") || !strcmp(path, "status.hostIPs"))
        return e->host_ip;
    if (!strcmp(path, "status.podIP") || !strcmp(path, "status.podIPs"))
        return e->pod_ip ? e->pod_ip : e->host_ip;
    return NULL;
}

static const corral_val_t *find_container(const corral__envctx_t *e, const char *name)
{
    if (!name || !*name)
        return e->ctr;
    const char *lists[] = {"containers", "initContainers"};
    for (size_t l = 0; l < 2; l++) {
        const corral_val_t *s = corral_val_get(corral_val_get(e->pod, "spec"), lists[l]);
        for (size_t i = 0; s && s->kind == CORRAL_VAL_SEQ && i < s->n; i++) {
            const char *n = corral_val_get_str(s->items[i], "name");
            if (n && !strcmp(n, name))
                return s->items[i];
        }
    }
    return NULL;
}

/* resourceFieldRef: limits/requests cpu or memory, divided (rounding up). */
static const char *resource_ref(corral_arena_t *a, const corral__envctx_t *e,
                                const corral_val_t *ref)
{
    const char *res = corral_val_get_str(ref, "resource");
    const corral_val_t *ctr = find_container(e, corral_val_get_str(ref, "containerName"));
    if (!res || !ctr)
        return NULL;
    const char *dot = strchr(res, '.');
    if (!dot)
        return NULL;
    char which[16];
    size_t wn = (size_t)(dot - res);
    if (wn >= sizeof(which))
        return NULL;
    memcpy(which, res, wn);
    which[wn] = '\0';
    bool cpu = !strcmp(dot + 1, "cpu");
    if (!cpu && strcmp(dot + 1, "memory") != 0)
        return NULL;
    const char *q =
        corral_val_get_str(corral_val_get(corral_val_get(ctr, "resources"), which), dot + 1);
    int64_t v = cpu ? e->node_cpu_milli : e->node_memory; /* no limit: the node's */
    corral_qty_t qty;
    if (q && corral_qty_parse(q, strlen(q), &qty, NULL, 0) == 0 &&
        corral_qty_scaled(&qty, cpu ? 3 : 0, &v) != 0)
        return NULL;
    const char *dv = corral_val_get_str(ref, "divisor");
    int64_t div = cpu ? 1000 : 1;
    corral_qty_t dq;
    if (dv && corral_qty_parse(dv, strlen(dv), &dq, NULL, 0) == 0)
        corral_qty_scaled(&dq, cpu ? 3 : 0, &div);
    if (div <= 0)
        div = 1;
    return corral_arena_printf(a, "%lld", (long long)((v + div - 1) / div));
}

/* A Secret's base64 value, decoded (NUL bytes end the string, as in an environment). */
static const char *b64(corral_arena_t *a, const char *s)
{
    corral_buf_t b;
    corral_buf_init(&b);
    const char *v = "";
    if (corral_base64_decode(s, strlen(s), CORRAL_B64_STD, &b) == 0)
        v = corral_arena_strdup(a, corral_buf_str(&b));
    corral_buf_fini(&b);
    return v;
}

static bool is_optional(const corral_val_t *ref)
{
    const corral_val_t *o = corral_val_get(ref, "optional");
    return o && o->kind == CORRAL_VAL_BOOL && o->u.b;
}

/* configMapKeyRef / secretKeyRef. Returns 0 (value or NULL to skip) or CORRAL_ENOENT. */
static int key_ref(corral_arena_t *a, const corral__envctx_t *e, const corral_val_t *ref,
                   bool secret, const char **out, char *err, size_t errlen)
{
    const char *name = corral_val_get_str(ref, "name");
    const char *key = corral_val_get_str(ref, "key");
    const char *ns = corral_val_get_str(corral_val_get(e->pod, "metadata"), "namespace");
    const char *kname = secret ? "Secret" : "ConfigMap";
    *out = NULL;
    const corral_val_t *obj =
        name && e->fetch
            ? e->fetch(e->fetch_ctx, a, ns, secret ? "secrets" : "configmaps", name, err, errlen)
            : NULL;
    if (!obj) {
        if (is_optional(ref))
            return 0;
        if (!*err)
            snprintf(err, errlen, "%s \"%s\" not found", secret ? "secret" : "configmap",
                     name ? name : "");
        return CORRAL_ENOENT;
    }
    const char *v = key ? corral_val_get_str(corral_val_get(obj, "data"), key) : NULL;
    if (v && secret)
        v = b64(a, v);
    if (!v && !secret && key) {
        v = corral_val_get_str(corral_val_get(obj, "binaryData"), key);
        if (v)
            v = b64(a, v);
    }
    if (!v) {
        if (is_optional(ref))
            return 0;
        snprintf(err, errlen, "couldn't find key %s in %s %s/%s", key ? key : "", kname, ns, name);
        return CORRAL_ENOENT;
    }
    *out = v;
    return 0;
}

static int value_from(corral_arena_t *a, const corral__envctx_t *e, const corral_val_t *vf,
                      const char **out, char *err, size_t errlen)
{
    const corral_val_t *r;
    *out = NULL;
    if ((r = corral_val_get(vf, "fieldRef")) != NULL) {
        const char *path = corral_val_get_str(r, "fieldPath");
        *out = path ? field_ref(e, path) : NULL;
        if (!*out)
            *out = "";
        return 0;
    }
    if ((r = corral_val_get(vf, "resourceFieldRef")) != NULL) {
        *out = resource_ref(a, e, r);
        return 0;
    }
    if ((r = corral_val_get(vf, "configMapKeyRef")) != NULL)
        return key_ref(a, e, r, false, out, err, errlen);
    if ((r = corral_val_get(vf, "secretKeyRef")) != NULL)
        return key_ref(a, e, r, true, out, err, errlen);
    return 0;
}

/* envFrom: every key of a ConfigMap or Secret, with the prefix. */
static int env_from(corral_arena_t *a, const corral__envctx_t *e, envlist_t *l, char *err,
                    size_t errlen)
{
    const corral_val_t *ef = corral_val_get(e->ctr, "envFrom");
    const char *ns = corral_val_get_str(corral_val_get(e->pod, "metadata"), "namespace");
    for (size_t i = 0; ef && ef->kind == CORRAL_VAL_SEQ && i < ef->n; i++) {
        const char *prefix = corral_val_get_str(ef->items[i], "prefix");
        const corral_val_t *ref = corral_val_get(ef->items[i], "configMapRef");
        bool secret = false;
        if (!ref) {
            ref = corral_val_get(ef->items[i], "secretRef");
            secret = true;
        }
        const char *name = corral_val_get_str(ref, "name");
        if (!name)
            continue;
        const corral_val_t *obj =
            e->fetch ? e->fetch(e->fetch_ctx, a, ns, secret ? "secrets" : "configmaps", name, err,
                                errlen)
                     : NULL;
        if (!obj) {
            if (is_optional(ref))
                continue;
            if (!*err)
                snprintf(err, errlen, "%s \"%s\" not found", secret ? "secret" : "configmap", name);
            return CORRAL_ENOENT;
        }
        const corral_val_t *d = corral_val_get(obj, "data");
        for (size_t k = 0; d && d->kind == CORRAL_VAL_MAP && k < d->n; k++) {
            const char *v = d->pairs[k].val->s ? d->pairs[k].val->s : "";
            char *nm = corral_arena_printf(a, "%s%s", prefix ? prefix : "", d->pairs[k].key->s);
            env_set(l, nm, secret ? b64(a, v) : v);
        }
    }
    return 0;
}

static void gpu_env(corral_arena_t *a, const corral__envctx_t *e, envlist_t *l)
{
    corral_buf_t idx, uuids;
    corral_buf_init(&idx);
    corral_buf_init(&uuids);
    const char *p = e->gpu_ids ? e->gpu_ids : "";
    while (*p) {
        char *end = NULL;
        long id = strtol(p, &end, 10);
        if (end == p)
            break;
        if (idx.len) {
            corral_buf_putc(&idx, ',');
            corral_buf_putc(&uuids, ',');
        }
        corral_buf_printf(&idx, "%ld", id);
        if (e->uuids && id >= 0 && id < e->ngpu && e->uuids[id] && e->uuids[id][0])
            corral_buf_puts(&uuids, e->uuids[id]);
        else
            corral_buf_printf(&uuids, "%ld", id);
        p = end;
        while (*p == ',' || *p == ' ')
            p++;
    }
    env_set(l, "CUDA_VISIBLE_DEVICES", corral_buf_str(&idx));
    env_set(l, "NVIDIA_VISIBLE_DEVICES", idx.len ? corral_buf_str(&uuids) : "void");
    env_set(l, "CUDA_DEVICE_ORDER", "PCI_BUS_ID");
    (void)a;
    corral_buf_fini(&idx);
    corral_buf_fini(&uuids);
}

int corral__env_build(corral_arena_t *a, const corral__envctx_t *e, char ***envp, char *err,
                      size_t errlen)
{
    envlist_t l = {.a = a};
    err[0] = '\0';
    const char *pname = corral_val_get_str(corral_val_get(e->pod, "metadata"), "name");
    const char *sys_path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
    env_set(&l, "PATH",
            e->bin_dir && *e->bin_dir ? corral_arena_printf(a, "%s:%s", e->bin_dir, sys_path)
                                      : sys_path);
    env_set(&l, "HOME", e->home ? e->home : "/");
    env_set(&l, "HOSTNAME", pname ? pname : "");
    if (e->gpu_load)
        env_set(&l, "CORRAL_GPU_LOAD_FILE", e->gpu_load);
    if (e->model_dir)
        env_set(&l, "MODEL_DIR", e->model_dir);
    int rc = env_from(a, e, &l, err, errlen);
    if (rc)
        return rc;
    const corral_val_t *env = corral_val_get(e->ctr, "env");
    corral_buf_t b;
    corral_buf_init(&b);
    for (size_t i = 0; env && env->kind == CORRAL_VAL_SEQ && i < env->n; i++) {
        const corral_val_t *it = env->items[i];
        const char *name = corral_val_get_str(it, "name");
        if (!name || !*name)
            continue;
        const corral_val_t *vf = corral_val_get(it, "valueFrom");
        const char *v = NULL;
        if (vf) {
            rc = value_from(a, e, vf, &v, err, errlen);
            if (rc) {
                corral_buf_fini(&b);
                return rc;
            }
            if (!v)
                continue; /* optional and absent */
        } else {
            const char *raw = corral_val_get_str(it, "value");
            corral_buf_reset(&b);
            corral__expand(raw ? raw : "", env_lookup, &l, &b);
            v = corral_buf_str(&b);
        }
        env_set(&l, name, v);
    }
    corral_buf_fini(&b);
    gpu_env(a, e, &l);
    char **out = corral_arena_alloc(a, (l.n + 1) * sizeof(char *));
    for (size_t i = 0; i < l.n; i++)
        out[i] = corral_arena_printf(a, "%s=%s", l.names[i], l.vals[i]);
    out[l.n] = NULL;
    *envp = out;
    return 0;
}

static const char *envp_lookup(void *ctx, const char *name)
{
    return corral__env_get(ctx, name);
}

int corral__argv_build(corral_arena_t *a, const corral_val_t *ctr, char *const *envp, char ***argv)
{
    const corral_val_t *cmd = corral_val_get(ctr, "command");
    const corral_val_t *args = corral_val_get(ctr, "args");
    size_t nc = cmd && cmd->kind == CORRAL_VAL_SEQ ? cmd->n : 0;
    size_t na = args && args->kind == CORRAL_VAL_SEQ ? args->n : 0;
    *argv = NULL;
    if (nc == 0)
        return CORRAL_EINVAL;
    char **out = corral_arena_alloc(a, (nc + na + 1) * sizeof(char *));
    corral_buf_t b;
    corral_buf_init(&b);
    size_t k = 0;
    for (size_t i = 0; i < nc + na; i++) {
        const corral_val_t *v = i < nc ? cmd->items[i] : args->items[i - nc];
        corral_buf_reset(&b);
        corral__expand(v->s ? v->s : "", envp_lookup, (void *)envp, &b);
        out[k++] = corral_arena_strdup(a, corral_buf_str(&b));
    }
    out[k] = NULL;
    corral_buf_fini(&b);
    *argv = out;
    return 0;
}

void corral__argv_model_dir(corral_arena_t *a, char **argv, const char *dir)
{
    size_t ml = strlen(CORRAL__MODEL_MOUNT);
    for (size_t i = 1; dir && argv && argv[i]; i++) {
        char *eq = strchr(argv[i], '=');
        const char *at = !strncmp(argv[i], CORRAL__MODEL_MOUNT, ml)        ? argv[i]
                         : eq && !strncmp(eq + 1, CORRAL__MODEL_MOUNT, ml) ? eq + 1
                                                                           : NULL;
        if (!at || (at[ml] != '\0' && at[ml] != '/'))
            continue;
        argv[i] = corral_arena_printf(a, "%.*s%s%s", (int)(at - argv[i]), argv[i], dir, at + ml);
    }
}
