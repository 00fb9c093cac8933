/*
 * Client configuration: kubeconfig files (read with the YAML loader, so
 * errors carry lines), flags and the environment, resolved with kubectl's
 * precedence (include/corral/client.h). Only what a client of Corral or of
 * a plain kube-apiserver needs is read: the context's cluster (server,
 * certificate authority, insecure-skip-tls-verify, tls-server-name), user
 * (token, tokenFile, client certificate and key, exec plugin) and
 * namespace; several files are merged as client-go merges $KUBECONFIG.
 * Auth-provider plugins (removed from kubectl) are not run. The in-cluster
 * service account is read here too. Fuzzed by tests/fuzz/fuzz_kubeconfig.c.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "corral/base64.h"
#include "corral/client.h"
#include "corral/io.h"
#include "corral/yaml.h"

#define KUBECONFIG_LIMIT ((size_t)4 << 20)

#define SERVICEACCOUNT_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

void corral_client_config_init(corral_client_config_t *c)
{
    memset(c, 0, sizeof(*c));
    c->qps = -1; /* built in code: no client-side limit unless asked */
}

static void exec_free(corral_client_exec_t *e)
{
    if (!e)
        return;
    for (size_t i = 0; i < e->nargs; i++)
        corral_free(e->args[i]);
    for (size_t i = 0; i < e->nenv; i++)
        corral_free(e->env[i]);
    corral_free(e->args);
    corral_free(e->env);
    corral_free(e->command);
    corral_free(e->api_version);
    corral_free(e->install_hint);
    corral_free(e->interactive_mode);
    corral_free(e);
}

void corral_client_config_fini(corral_client_config_t *c)
{
    char *owned[] = {c->server,  c->token,     c->token_file,     c->namespace, c->ca_file,
                     c->ca_data, c->cert_file, c->key_file,       c->cert_data, c->key_data,
                     c->source,  c->accept,    c->tls_server_name};
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(owned); i++)
        corral_free(owned[i]);
    exec_free(c->exec);
    memset(c, 0, sizeof(*c));
}

static char *dup_or_null(const char *s)
{
    return s ? corral_strdup(s) : NULL;
}

static char *dup_data(const char *p, size_t n)
{
    if (!p)
        return NULL;
    char *d = corral_malloc(n + 1);
    memcpy(d, p, n);
    d[n] = '\0';
    return d;
}

static char **dup_list(char *const *v, size_t n)
{
    if (!n)
        return NULL;
    char **out = corral_calloc(n, sizeof(*out));
    for (size_t i = 0; i < n; i++)
        out[i] = corral_strdup(v[i]);
    return out;
}

void corral_client_config_copy(corral_client_config_t *dst, const corral_client_config_t *src)
{
    *dst = *src; /* the scalars; every pointer is replaced below */
    dst->server = dup_or_null(src->server);
    dst->token = dup_or_null(src->token);
    dst->token_file = dup_or_null(src->token_file);
    dst->namespace = dup_or_null(src->namespace);
    dst->ca_file = dup_or_null(src->ca_file);
    dst->ca_data = dup_data(src->ca_data, src->ca_data_len);
    dst->cert_file = dup_or_null(src->cert_file);
    dst->key_file = dup_or_null(src->key_file);
    dst->cert_data = dup_data(src->cert_data, src->cert_data_len);
    dst->key_data = dup_data(src->key_data, src->key_data_len);
    dst->tls_server_name = dup_or_null(src->tls_server_name);
    dst->accept = dup_or_null(src->accept);
    dst->source = dup_or_null(src->source);
    dst->exec = NULL;
    if (src->exec) {
        const corral_client_exec_t *e = src->exec;
        corral_client_exec_t *d = corral_calloc(1, sizeof(*d));
        *d = *e;
        d->command = dup_or_null(e->command);
        d->args = dup_list(e->args, e->nargs);
        d->env = dup_list(e->env, e->nenv);
        d->api_version = dup_or_null(e->api_version);
        d->install_hint = dup_or_null(e->install_hint);
        d->interactive_mode = dup_or_null(e->interactive_mode);
        dst->exec = d;
    }
}

static void set(char **dst, const char *v)
{
    corral_free(*dst);
    *dst = v ? corral_strdup(v) : NULL;
}

/* Standard or URL-safe base64, blanks ignored. NULL on bad input. */
static char *b64_decode(const char *s, size_t *out_len)
{
    corral_buf_t b;
    corral_buf_init(&b);
    if (corral_base64_decode(s, strlen(s), CORRAL_B64_LAX, &b) != 0) {
        corral_buf_fini(&b);
        return NULL;
    }
    *out_len = b.len;
    corral_buf_putc(&b, '\0'); /* a string even when empty */
    return corral_buf_steal(&b);
}

/* --- kubeconfig ------------------------------------------------------------------------- */

#define KUBECONFIG_MAX_FILES 16

/* One loaded file: its name, its directory (for relative paths) and tree. */
typedef struct kc_file {
    const char *file;
    char dir[1024];
    const corral_val_t *root;
} kc_file_t;

/* The merged view of one or more files, as client-go's loader merges
 * $KUBECONFIG: the first file to set current-context or to name a cluster,
 * user or context wins; a whole entry comes from one file. */
typedef struct kc {
    kc_file_t files[KUBECONFIG_MAX_FILES];
    size_t n;
    const kc_file_t *at; /* the file of the entry being read: messages, paths */
    char *err;
    size_t errlen;
} kc_t;

static int kc_err(kc_t *k, const corral_val_t *at, const char *fmt, ...) CORRAL_PRINTF(3, 4);

static int kc_err(kc_t *k, const corral_val_t *at, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    const char *file = k->at ? k->at->file : "kubeconfig";
    if (at && at->line)
        snprintf(k->err, k->errlen, "%s:%d:%d: %s", file, at->line, at->col, msg);
    else
        snprintf(k->err, k->errlen, "%s: %s", file, msg);
    return CORRAL_EINVAL;
}

/* The entry of list `key` whose name is name, from the first file naming
 * it (k->at is set to that file); its `field` map. */
static const corral_val_t *named(kc_t *k, const char *key, const char *field, const char *name,
                                 int *rc)
{
    const corral_val_t *first_list = NULL;
    for (size_t f = 0; f < k->n; f++) {
        const corral_val_t *list = corral_val_get(k->files[f].root, key);
        if (!list)
            continue;
        if (!first_list)
            first_list = list;
        for (size_t i = 0; list->kind == CORRAL_VAL_SEQ && i < list->n; i++) {
            const char *n = corral_val_get_str(list->items[i], "name");
            if (!n || strcmp(n, name) != 0)
                continue;
            k->at = &k->files[f];
            const corral_val_t *m = corral_val_get(list->items[i], field);
            if (m && m->kind == CORRAL_VAL_MAP)
                return m;
            *rc = kc_err(k, list->items[i], "%s must be a mapping", field);
            return NULL;
        }
    }
    *rc = kc_err(k, first_list, "%s \"%s\" not found", field, name);
    return NULL;
}

/* A path from the kubeconfig, relative to the directory of its file. */
static void set_path(kc_t *k, char **dst, const char *p)
{
    if (!p || !*p)
        return;
    if (p[0] == '/' || !k->at || !k->at->dir[0]) {
        set(dst, p);
        return;
    }
    char buf[2048];
    snprintf(buf, sizeof(buf), "%s/%s", k->at->dir, p);
    set(dst, buf);
}

static int set_data(kc_t *k, const corral_val_t *m, const char *key, char **dst, size_t *len)
{
    const char *v = corral_val_get_str(m, key);
    if (!v)
        return 0;
    corral_free(*dst);
    *dst = b64_decode(v, len);
    if (!*dst)
        return kc_err(k, corral_val_get(m, key), "%s is not valid base64", key);
    return 0;
}

static int read_cluster(kc_t *k, const corral_val_t *cl, corral_client_config_t *c)
{
    const char *server = corral_val_get_str(cl, "server");
    if (!server || !*server)
        return kc_err(k, cl, "the cluster has no server");
    set(&c->server, server);
    set_path(k, &c->ca_file, corral_val_get_str(cl, "certificate-authority"));
    const char *sni = corral_val_get_str(cl, "tls-server-name");
    if (sni && *sni)
        set(&c->tls_server_name, sni);
    const corral_val_t *ins = corral_val_get(cl, "insecure-skip-tls-verify");
    c->insecure = ins && ins->kind == CORRAL_VAL_BOOL && ins->u.b;
    return set_data(k, cl, "certificate-authority-data", &c->ca_data, &c->ca_data_len);
}

/* A token file's token: its first line. Returns 0, or an errno-style
 * negative code with *data unset. */
static int token_from_file(const char *path, char **out)
{
    corral_diag_t d;
    corral_diag_init(&d);
    char *data = NULL;
    size_t len = 0;
    int rc = corral_file_read(path, 64 << 10, &d, &data, &len);
    corral_diag_fini(&d);
    if (rc)
        return rc;
    data[strcspn(data, "\r\n")] = '\0';
    *out = data;
    return 0;
}

/* tokenFile: the token is the file's first line; the client re-reads the
 * file when it changes. */
static int read_token_file(kc_t *k, const char *path, corral_client_config_t *c)
{
    char *full = NULL, *tok = NULL;
    set_path(k, &full, path);
    if (token_from_file(full, &tok) != 0) {
        int rc = kc_err(k, NULL, "cannot read tokenFile %s", full);
        corral_free(full);
        return rc;
    }
    corral_free(c->token);
    c->token = tok;
    corral_free(c->token_file);
    c->token_file = full;
    return 0;
}

#define EXEC_V1       "client.authentication.k8s.io/v1"
#define EXEC_V1BETA1  "client.authentication.k8s.io/v1beta1"
#define EXEC_MAX_ARGS 256

static int exec_strings(kc_t *k, const corral_val_t *seq, const char *what, char ***out, size_t *n)
{
    if (!seq)
        return 0;
    if (seq->kind != CORRAL_VAL_SEQ || seq->n > EXEC_MAX_ARGS)
        return kc_err(k, seq, "exec %s must be a list of at most %d strings", what, EXEC_MAX_ARGS);
    *out = seq->n ? corral_calloc(seq->n, sizeof(char *)) : NULL;
    for (size_t i = 0; i < seq->n; i++) {
        const corral_val_t *v = seq->items[i];
        if (!strcmp(what, "env")) {
            const char *name = corral_val_get_str(v, "name");
            const char *value = corral_val_get_str(v, "value");
            if (!name || !*name || strchr(name, '='))
                return kc_err(k, v, "exec env entries need a name (without '=')");
            size_t len = strlen(name) + (value ? strlen(value) : 0) + 2;
            (*out)[i] = corral_malloc(len);
            snprintf((*out)[i], len, "%s=%s", name, value ? value : "");
        } else {
            if (!v || v->kind == CORRAL_VAL_SEQ || v->kind == CORRAL_VAL_MAP || !v->s)
                return kc_err(k, v, "exec args must be strings");
            (*out)[i] = corral_strdup(v->s);
        }
        (*n)++;
    }
    return 0;
}

/* users[].user.exec: client-go's ExecConfig, validated as its loader does. */
static int read_exec(kc_t *k, const corral_val_t *m, corral_client_config_t *c)
{
    if (m->kind != CORRAL_VAL_MAP)
        return kc_err(k, m, "exec must be a mapping");
    exec_free(c->exec);
    corral_client_exec_t *e = c->exec = corral_calloc(1, sizeof(*e));
    const char *cmd = corral_val_get_str(m, "command");
    const char *api = corral_val_get_str(m, "apiVersion");
    const char *mode = corral_val_get_str(m, "interactiveMode");
    if (!cmd || !*cmd)
        return kc_err(k, m, "exec has no command");
    if (!api || (strcmp(api, EXEC_V1) != 0 && strcmp(api, EXEC_V1BETA1) != 0))
        return kc_err(k, m, "exec apiVersion must be %s or %s, not \"%s\"", EXEC_V1, EXEC_V1BETA1,
                      api ? api : "");
    if (!mode || !*mode) {
        if (!strcmp(api, EXEC_V1))
            return kc_err(k, m,
                          "exec interactiveMode must be set for %s (Never, IfAvailable "
                          "or Always)",
                          EXEC_V1);
        mode = "IfAvailable";
    }
    if (strcmp(mode, "Never") != 0 && strcmp(mode, "IfAvailable") != 0 &&
        strcmp(mode, "Always") != 0)
        return kc_err(k, m, "exec interactiveMode must be Never, IfAvailable or Always, not \"%s\"",
                      mode);
    /* As client-go: a command with a slash is relative to the file, a bare
     * name is looked up on PATH. */
    if (strchr(cmd, '/'))
        set_path(k, &e->command, cmd);
    else
        e->command = corral_strdup(cmd);
    e->api_version = corral_strdup(api);
    e->interactive_mode = corral_strdup(mode);
    const char *hint = corral_val_get_str(m, "installHint");
    e->install_hint = hint ? corral_strdup(hint) : NULL;
    const corral_val_t *pci = corral_val_get(m, "provideClusterInfo");
    e->provide_cluster_info = pci && pci->kind == CORRAL_VAL_BOOL && pci->u.b;
    if (exec_strings(k, corral_val_get(m, "args"), "args", &e->args, &e->nargs) != 0)
        return CORRAL_EINVAL;
    return exec_strings(k, corral_val_get(m, "env"), "env", &e->env, &e->nenv);
}

static int read_user(kc_t *k, const corral_val_t *u, corral_client_config_t *c)
{
    const char *tok = corral_val_get_str(u, "token");
    const char *tf = corral_val_get_str(u, "tokenFile");
    if (tok && *tok)
        set(&c->token, tok);
    else if (tf && *tf && read_token_file(k, tf, c) != 0)
        return CORRAL_EINVAL;
    set_path(k, &c->cert_file, corral_val_get_str(u, "client-certificate"));
    set_path(k, &c->key_file, corral_val_get_str(u, "client-key"));
    const corral_val_t *ex = corral_val_get(u, "exec");
    if (ex && ex->kind != CORRAL_VAL_NULL && read_exec(k, ex, c) != 0)
        return CORRAL_EINVAL;
    if (set_data(k, u, "client-certificate-data", &c->cert_data, &c->cert_data_len) != 0)
        return CORRAL_EINVAL;
    return set_data(k, u, "client-key-data", &c->key_data, &c->key_data_len);
}

static int read_config(kc_t *k, const char *context, corral_client_config_t *c)
{
    const char *cur = context;
    for (size_t f = 0; f < k->n; f++) {
        k->at = &k->files[f];
        const corral_val_t *root = k->files[f].root;
        if (!root || root->kind != CORRAL_VAL_MAP)
            return kc_err(k, root, "a kubeconfig is a mapping (apiVersion: v1, kind: Config)");
        const char *cc = corral_val_get_str(root, "current-context");
        if (!cur && cc && *cc)
            cur = cc;
    }
    k->at = k->n ? &k->files[0] : NULL;
    if (!cur || !*cur)
        return kc_err(k, NULL, "no current-context is set; pass --context NAME");
    int rc = 0;
    const corral_val_t *ctx = named(k, "contexts", "context", cur, &rc);
    if (!ctx)
        return rc;
    const char *cluster = corral_val_get_str(ctx, "cluster");
    const char *user = corral_val_get_str(ctx, "user");
    const char *ns = corral_val_get_str(ctx, "namespace");
    if (!cluster || !*cluster)
        return kc_err(k, ctx, "the context names no cluster");
    const corral_val_t *cl = named(k, "clusters", "cluster", cluster, &rc);
    if (!cl || read_cluster(k, cl, c) != 0)
        return rc ? rc : CORRAL_EINVAL;
    if (user && *user) {
        const corral_val_t *u = named(k, "users", "user", user, &rc);
        if (!u || read_user(k, u, c) != 0)
            return rc ? rc : CORRAL_EINVAL;
    }
    if (ns && *ns)
        set(&c->namespace, ns);
    return 0;
}

/* Parse one file's text into k (trees in a). */
static int kc_add(kc_t *k, corral_arena_t *a, const char *text, size_t len, const char *file)
{
    corral_diag_t d;
    corral_diag_init(&d);
    corral_doc_t *docs = NULL;
    size_t n = 0;
    int rc = corral_yaml_parse(a, text, len, file, NULL, &d, &docs, &n);
    if (rc == 0 && n == 0) { /* an empty file merges as nothing, as client-go's */
        corral_diag_fini(&d);
        return 0;
    }
    if (rc != 0 || n != 1 || !docs[0].root) {
        if (d.n)
            snprintf(k->err, k->errlen, "%s:%d:%d: %s", file, d.items[0].line, d.items[0].col,
                     d.items[0].msg);
        else
            snprintf(k->err, k->errlen, "%s: expected one YAML document", file);
        corral_diag_fini(&d);
        return CORRAL_EINVAL;
    }
    corral_diag_fini(&d);
    if (k->n == KUBECONFIG_MAX_FILES) {
        snprintf(k->err, k->errlen, "%s: more than %d kubeconfig files", file,
                 KUBECONFIG_MAX_FILES);
        return CORRAL_ETOOBIG;
    }
    kc_file_t *f = &k->files[k->n++];
    f->file = file;
    f->root = docs[0].root;
    const char *slash = strrchr(file, '/');
    if (slash)
        snprintf(f->dir, sizeof(f->dir), "%.*s", (int)(slash - file), file);
    return 0;
}

static void kc_init(kc_t *k, char *err, size_t errlen)
{
    memset(k, 0, sizeof(*k));
    k->err = err;
    k->errlen = errlen;
}

int corral_kubeconfig_parse(const char *text, size_t len, const char *file, const char *context,
                            corral_client_config_t *c, char *err, size_t errlen)
{
    kc_t k;
    kc_init(&k, err, errlen);
    corral_arena_t a;
    corral_arena_init(&a);
    int rc = kc_add(&k, &a, text, len, file);
    if (rc == 0 && k.n == 0) {
        snprintf(err, errlen, "%s: expected one YAML document", file);
        rc = CORRAL_EINVAL;
    }
    if (rc == 0)
        rc = read_config(&k, context, c);
    corral_arena_fini(&a);
    if (rc == 0)
        set(&c->source, file);
    return rc;
}

int corral_kubeconfig_load_files(const char *const *paths, size_t n, const char *context,
                                 corral_client_config_t *c, bool *found, char *err, size_t errlen)
{
    kc_t k;
    kc_init(&k, err, errlen);
    corral_arena_t a;
    corral_arena_init(&a);
    corral_buf_t src;
    corral_buf_init(&src);
    int rc = 0;
    *found = false;
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (!paths[i] || !*paths[i] || access(paths[i], F_OK) != 0)
            continue; /* as client-go: a missing file of the list is skipped */
        corral_diag_t d;
        corral_diag_init(&d);
        char *data = NULL;
        size_t len = 0;
        rc = corral_file_read(paths[i], KUBECONFIG_LIMIT, &d, &data, &len);
        if (rc)
            snprintf(err, errlen, "%s: %s", paths[i], d.n ? d.items[0].msg : corral_strerror(rc));
        else
            rc = kc_add(&k, &a, data, len, corral_arena_strdup(&a, paths[i]));
        /* the trees point into the arena, not into data */
        corral_diag_fini(&d);
        corral_free(data);
        if (rc == 0) {
            *found = true;
            corral_buf_printf(&src, "%s%s", src.len ? ":" : "", paths[i]);
        }
    }
    if (rc == 0 && *found && k.n)
        rc = read_config(&k, context, c);
    if (rc == 0 && *found)
        set(&c->source, corral_buf_str(&src));
    corral_buf_fini(&src);
    corral_arena_fini(&a);
    return rc;
}

/* --- in-cluster ------------------------------------------------------------------------- */

int corral_client_config_in_cluster(corral_client_config_t *c, char *err, size_t errlen)
{
    const char *host = getenv("KUBERNETES_SERVICE_HOST");
    const char *port = getenv("KUBERNETES_SERVICE_PORT");
    const char *root = getenv("CORRAL_SERVICEACCOUNT_DIR");
    if (!root || !*root)
        root = SERVICEACCOUNT_DIR;
    if (!host || !*host || !port || !*port) {
        snprintf(err, errlen,
                 "not in a cluster: KUBERNETES_SERVICE_HOST and "
                 "KUBERNETES_SERVICE_PORT are not set");
        return CORRAL_ENOENT;
    }
    char path[1200], server[600];
    snprintf(path, sizeof(path), "%s/token", root);
    if (access(path, F_OK) != 0) { /* client-go's Possible(): no token, no pod */
        snprintf(err, errlen, "not in a cluster: %s does not exist", path);
        return CORRAL_ENOENT;
    }
    char *tok = NULL;
    if (token_from_file(path, &tok) != 0) {
        snprintf(err, errlen, "in-cluster configuration: cannot read the service account token %s",
                 path);
        return CORRAL_EIO;
    }
    corral_free(c->token);
    c->token = tok;
    set(&c->token_file, path);
    /* net.JoinHostPort: an IPv6 address in brackets */
    snprintf(server, sizeof(server), strchr(host, ':') ? "https://[%s]:%s" : "https://%s:%s", host,
             port);
    set(&c->server, server);
    snprintf(path, sizeof(path), "%s/ca.crt", root);
    if (access(path, R_OK) == 0) /* client-go goes on without it when it cannot load it */
        set(&c->ca_file, path);
    const char *pod_ns = getenv("POD_NAMESPACE");
    char *ns = NULL;
    snprintf(path, sizeof(path), "%s/namespace", root);
    if (pod_ns && *pod_ns)
        set(&c->namespace, pod_ns);
    else if (token_from_file(path, &ns) == 0 && *ns)
        set(&c->namespace, ns);
    corral_free(ns);
    set(&c->source, "the in-cluster service account");
    c->in_cluster = true;
    return 0;
}

/* --- resolution ------------------------------------------------------------------------- */

/* The kubeconfig files to read: --kubeconfig (explicit: it must exist),
 * else every $KUBECONFIG entry, else ~/.kube/config. */
static size_t kubeconfig_paths(const corral_client_flags_t *f, char **out, bool *explicit)
{
    *explicit = false;
    if (f->kubeconfig && *f->kubeconfig) {
        *explicit = true;
        out[0] = corral_strdup(f->kubeconfig);
        return 1;
    }
    size_t n = 0;
    const char *env = getenv("KUBECONFIG");
    for (const char *p = env; p && *p && n < KUBECONFIG_MAX_FILES;) {
        const char *colon = strchr(p, ':');
        size_t len = colon ? (size_t)(colon - p) : strlen(p);
        if (len) {
            char *cand = corral_strndup(p, len);
            bool dup = false; /* client-go ignores a repeated file */
            for (size_t i = 0; i < n && !dup; i++)
                dup = strcmp(out[i], cand) == 0;
            if (dup)
                corral_free(cand);
            else
                out[n++] = cand;
        }
        p = colon ? colon + 1 : p + len;
    }
    if (n)
        return n;
    const char *home = getenv("HOME");
    if (!home || !*home)
        return 0;
    char buf[2048];
    snprintf(buf, sizeof(buf), "%s/.kube/config", home);
    out[0] = corral_strdup(buf);
    return 1;
}

static int load_files(const corral_client_flags_t *f, corral_client_config_t *c, char *err,
                      size_t errlen)
{
    bool explicit, found = false;
    char *paths[KUBECONFIG_MAX_FILES];
    size_t n = kubeconfig_paths(f, paths, &explicit);
    int rc;
    if (explicit && access(paths[0], F_OK) != 0) {
        snprintf(err, errlen, "%s: %s", paths[0], "no such file (--kubeconfig)");
        rc = CORRAL_ENOENT;
    } else {
        rc = corral_kubeconfig_load_files((const char *const *)paths, n, f->context, c, &found, err,
                                          errlen);
    }
    for (size_t i = 0; i < n; i++)
        corral_free(paths[i]);
    return rc;
}

int corral_client_config_load(const corral_client_flags_t *f, corral_client_config_t *c, char *err,
                              size_t errlen)
{
    const char *env_server = getenv("CORRAL_SERVER");
    bool server_given = (f->server && *f->server) || (env_server && *env_server);
    c->qps = 0; /* client-go's defaults unless a flag sets them */
    /* The kubeconfig also supplies the token and namespace when a server is
     * given some other way, as long as it can be read. */
    int rc = load_files(f, c, err, errlen);
    if (rc && (!server_given || f->kubeconfig || f->context))
        return rc;
    if (rc) {
        corral_client_config_fini(c);
        c->qps = 0;
        err[0] = '\0';
    }
    if (!c->server && !server_given) {
        /* No server anywhere: the pod's service account, as client-go. */
        char why[512];
        rc = corral_client_config_in_cluster(c, why, sizeof(why));
        if (rc && rc != CORRAL_ENOENT) {
            snprintf(err, errlen, "%s", why);
            return rc;
        }
    }
    if (env_server && *env_server && !(f->server && *f->server)) {
        set(&c->server, env_server);
        set(&c->source, "$CORRAL_SERVER");
    }
    if (f->server && *f->server) {
        set(&c->server, f->server);
        set(&c->source, "--server");
    }
    if (!c->server) {
        set(&c->server, CORRAL_CLIENT_DEFAULT_SERVER);
        set(&c->source, "the default");
    }
    if (f->token && *f->token) {
        set(&c->token, f->token);
        set(&c->token_file, NULL);
        exec_free(c->exec);
        c->exec = NULL;
    }
    if (f->namespace && *f->namespace)
        set(&c->namespace, f->namespace);
    if (!c->namespace)
        set(&c->namespace, "default");
    if (f->ca_file && *f->ca_file)
        set(&c->ca_file, f->ca_file);
    if (f->insecure)
        c->insecure = true;
    if (f->qps != 0)
        c->qps = f->qps < 0 ? -1 : f->qps;
    if (f->burst > 0)
        c->burst = f->burst;
    if (f->accept && *f->accept)
        set(&c->accept, f->accept);
    /* "host:port" without a scheme, as kubectl accepts. */
    if (!strstr(c->server, "://")) {
        char buf[1024];
        snprintf(buf, sizeof(buf), "%s://%s", c->ca_file || c->ca_data ? "https" : "http",
                 c->server);
        set(&c->server, buf);
    }
    size_t n = strlen(c->server);
    while (n > 1 && c->server[n - 1] == '/')
        c->server[--n] = '\0';
    return 0;
}
