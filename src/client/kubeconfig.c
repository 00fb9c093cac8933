/*
 * Client configuration: kubeconfig files (read with the YAML loader, so
 * errors carry lines), flags and the environment, resolved with kubectl's
 * precedence (include/corral/client.h). Only what a client of Corral or of
 * a plain kube-apiserver needs is read: the context's cluster (server,
 * certificate authority, insecure-skip-tls-verify), user (token, tokenFile,
 * client certificate and key) and namespace. Exec and auth-provider
 * plugins are not run. Fuzzed by tests/fuzz/fuzz_kubeconfig.c.
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

void corral_client_config_init(corral_client_config_t *c)
{
    memset(c, 0, sizeof(*c));
}

void corral_client_config_fini(corral_client_config_t *c)
{
    char *owned[] = {c->server,    c->token,    c->namespace, c->ca_file,  c->ca_data,
                     c->cert_file, c->key_file, c->cert_data, c->key_data, c->source};
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(owned); i++)
        corral_free(owned[i]);
    memset(c, 0, sizeof(*c));
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

typedef struct kc {
    const char *file;
    char dir[1024]; /* directory of file, for relative paths */
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
    if (at && at->line)
        snprintf(k->err, k->errlen, "%s:%d:%d: %s", k->file, at->line, at->col, msg);
    else
        snprintf(k->err, k->errlen, "%s: %s", k->file, msg);
    return CORRAL_EINVAL;
}

/* The entry of list `key` whose name is name; its `field` map. */
static const corral_val_t *named(kc_t *k, const corral_val_t *root, const char *key,
                                 const char *field, const char *name, int *rc)
{
    const corral_val_t *list = corral_val_get(root, key);
    for (size_t i = 0; list && list->kind == CORRAL_VAL_SEQ && i < list->n; i++) {
        const char *n = corral_val_get_str(list->items[i], "name");
        if (n && strcmp(n, name) == 0) {
            const corral_val_t *m = corral_val_get(list->items[i], field);
            if (m && m->kind == CORRAL_VAL_MAP)
                return m;
            *rc = kc_err(k, list->items[i], "%s must be a mapping", field);
            return NULL;
        }
    }
    *rc = kc_err(k, list, "%s \"%s\" not found", field, name);
    return NULL;
}

/* A path from the kubeconfig, relative to its directory. */
static void set_path(kc_t *k, char **dst, const char *p)
{
    if (!p || !*p)
        return;
    if (p[0] == '/' || !k->dir[0]) {
        set(dst, p);
        return;
    }
    char buf[2048];
    snprintf(buf, sizeof(buf), "%s/%s", k->dir, p);
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
    const corral_val_t *ins = corral_val_get(cl, "insecure-skip-tls-verify");
    c->insecure = ins && ins->kind == CORRAL_VAL_BOOL && ins->u.b;
    return set_data(k, cl, "certificate-authority-data", &c->ca_data, &c->ca_data_len);
}

/* tokenFile: the token is the file's first line. */
static int read_token_file(kc_t *k, const char *path, corral_client_config_t *c)
{
    char *full = NULL;
    set_path(k, &full, path);
    corral_diag_t d;
    corral_diag_init(&d);
    char *data = NULL;
    size_t len = 0;
    int rc = corral_file_read(full, 64 << 10, &d, &data, &len);
    corral_diag_fini(&d);
    if (rc) {
        rc = kc_err(k, NULL, "cannot read tokenFile %s", full);
        corral_free(full);
        return rc;
    }
    corral_free(full);
    size_t n = strcspn(data, "\r\n");
    data[n] = '\0';
    set(&c->token, data);
    corral_free(data);
    return 0;
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
    if (set_data(k, u, "client-certificate-data", &c->cert_data, &c->cert_data_len) != 0)
        return CORRAL_EINVAL;
    return set_data(k, u, "client-key-data", &c->key_data, &c->key_data_len);
}

static int read_config(kc_t *k, const corral_val_t *root, const char *context,
                       corral_client_config_t *c)
{
    if (!root || root->kind != CORRAL_VAL_MAP)
        return kc_err(k, root, "a kubeconfig is a mapping (apiVersion: v1, kind: Config)");
    const char *cur = context ? context : corral_val_get_str(root, "current-context");
    if (!cur || !*cur)
        return kc_err(k, NULL, "no current-context is set; pass --context NAME");
    int rc = 0;
    const corral_val_t *ctx = named(k, root, "contexts", "context", cur, &rc);
    if (!ctx)
        return rc;
    const char *cluster = corral_val_get_str(ctx, "cluster");
    const char *user = corral_val_get_str(ctx, "user");
    const char *ns = corral_val_get_str(ctx, "namespace");
    if (!cluster || !*cluster)
        return kc_err(k, ctx, "the context names no cluster");
    const corral_val_t *cl = named(k, root, "clusters", "cluster", cluster, &rc);
    if (!cl || read_cluster(k, cl, c) != 0)
        return rc ? rc : CORRAL_EINVAL;
    if (user && *user) {
        const corral_val_t *u = named(k, root, "users", "user", user, &rc);
        if (!u || read_user(k, u, c) != 0)
            return rc ? rc : CORRAL_EINVAL;
    }
    if (ns && *ns)
        set(&c->namespace, ns);
    return 0;
}

int corral_kubeconfig_parse(const char *text, size_t len, const char *file, const char *context,
                            corral_client_config_t *c, char *err, size_t errlen)
{
    kc_t k;
    memset(&k, 0, sizeof(k));
    k.file = file;
    k.err = err;
    k.errlen = errlen;
    const char *slash = strrchr(file, '/');
    if (slash)
        snprintf(k.dir, sizeof(k.dir), "%.*s", (int)(slash - file), file);
    corral_arena_t a;
    corral_arena_init(&a);
    corral_diag_t d;
    corral_diag_init(&d);
    corral_doc_t *docs = NULL;
    size_t n = 0;
    int rc = corral_yaml_parse(&a, text, len, file, NULL, &d, &docs, &n);
    if (rc != 0 || n != 1 || !docs[0].root) {
        if (d.n)
            snprintf(err, errlen, "%s:%d:%d: %s", file, d.items[0].line, d.items[0].col,
                     d.items[0].msg);
        else
            snprintf(err, errlen, "%s: expected one YAML document", file);
        rc = CORRAL_EINVAL;
    } else {
        rc = read_config(&k, docs[0].root, context, c);
    }
    corral_diag_fini(&d);
    corral_arena_fini(&a);
    if (rc == 0)
        set(&c->source, file);
    return rc;
}

/* The kubeconfig to read: --kubeconfig, the first existing $KUBECONFIG
 * entry, ~/.kube/config; NULL when there is none. explicit is set when the
 * user named it (then it must exist). */
static char *kubeconfig_path(const corral_client_flags_t *f, bool *explicit)
{
    *explicit = false;
    if (f->kubeconfig && *f->kubeconfig) {
        *explicit = true;
        return corral_strdup(f->kubeconfig);
    }
    const char *env = getenv("KUBECONFIG");
    for (const char *p = env; p && *p;) {
        const char *colon = strchr(p, ':');
        size_t n = colon ? (size_t)(colon - p) : strlen(p);
        char *cand = corral_strndup(p, n);
        if (n && access(cand, R_OK) == 0)
            return cand;
        corral_free(cand);
        p = colon ? colon + 1 : p + n;
    }
    const char *home = getenv("HOME");
    if (!home || !*home)
        return NULL;
    char buf[2048];
    snprintf(buf, sizeof(buf), "%s/.kube/config", home);
    return access(buf, R_OK) == 0 ? corral_strdup(buf) : NULL;
}

static int load_file(const corral_client_flags_t *f, corral_client_config_t *c, char *err,
                     size_t errlen)
{
    bool explicit;
    char *path = kubeconfig_path(f, &explicit);
    if (!path)
        return 0;
    corral_diag_t d;
    corral_diag_init(&d);
    char *data = NULL;
    size_t len = 0;
    int rc = corral_file_read(path, KUBECONFIG_LIMIT, &d, &data, &len);
    if (rc)
        snprintf(err, errlen, "%s: %s", path, d.n ? d.items[0].msg : corral_strerror(rc));
    else
        rc = corral_kubeconfig_parse(data, len, path, f->context, c, err, errlen);
    corral_diag_fini(&d);
    corral_free(data);
    corral_free(path);
    return rc;
}

int corral_client_config_load(const corral_client_flags_t *f, corral_client_config_t *c, char *err,
                              size_t errlen)
{
    const char *env_server = getenv("CORRAL_SERVER");
    bool need_file = !(f->server && *f->server) && !(env_server && *env_server);
    /* The kubeconfig also supplies the token and namespace when a server is
     * given some other way, as long as it can be read. */
    int rc = load_file(f, c, err, errlen);
    if (rc && (need_file || f->kubeconfig || f->context))
        return rc;
    if (rc) {
        corral_client_config_fini(c);
        err[0] = '\0';
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
    if (f->token && *f->token)
        set(&c->token, f->token);
    if (f->namespace && *f->namespace)
        set(&c->namespace, f->namespace);
    if (!c->namespace)
        set(&c->namespace, "default");
    if (f->ca_file && *f->ca_file)
        set(&c->ca_file, f->ca_file);
    if (f->insecure)
        c->insecure = true;
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
