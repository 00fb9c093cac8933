/*
 * Exec credential plugins (include/corral/client.h), as client-go's
 * plugin/pkg/client/auth/exec runs them: the kubeconfig's command with its
 * args and env added to ours, KUBERNETES_EXEC_INFO holding an ExecCredential
 * spec (interactive or not, and the cluster when provideClusterInfo), stdin
 * given only to an interactive plugin, stderr passed through, stdout read
 * (at most 1 MiB, within the timeout, else the plugin is killed) and parsed
 * as an ExecCredential of the apiVersion asked. The credential is cached
 * process-wide until status.expirationTimestamp, keyed by the plugin and
 * the server, and the plugin runs again when a request is refused (401)
 * with the cached credential. Fuzzed by tests/fuzz/fuzz_execcred.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "corral/base64.h"
#include "corral/client.h"
#include "corral/io.h"
#include "corral/json.h"
#include "corral/timefmt.h"

extern char **environ;

#define EXEC_OUTPUT_MAX ((size_t)1 << 20)
#define EXEC_CACHE_MAX  16

void corral_client_cred_fini(corral_client_cred_t *cr)
{
    corral_free(cr->token);
    corral_free(cr->cert_data);
    corral_free(cr->key_data);
    memset(cr, 0, sizeof(*cr));
}

static void cred_copy(corral_client_cred_t *d, const corral_client_cred_t *s)
{
    d->token = s->token ? corral_strdup(s->token) : NULL;
    d->cert_data = s->cert_data ? corral_strdup(s->cert_data) : NULL;
    d->key_data = s->key_data ? corral_strdup(s->key_data) : NULL;
    d->expiry_us = s->expiry_us;
}

/* --- the ExecCredential answer ------------------------------------------------------------ */

static char *str_field(const corral_val_t *m, const char *key)
{
    const char *v = corral_val_get_str(m, key);
    return v && *v ? corral_strdup(v) : NULL;
}

int corral_exec_credential_parse(const char *text, size_t len, const char *api_version,
                                 corral_client_cred_t *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    if (len > EXEC_OUTPUT_MAX) {
        snprintf(err, errlen, "exec plugin: output larger than %zu bytes", EXEC_OUTPUT_MAX);
        return CORRAL_ETOOBIG;
    }
    corral_arena_t a;
    corral_arena_init(&a);
    corral_val_t *v = NULL;
    corral_json_err_t je;
    int rc = CORRAL_EINVAL;
    const char *api = NULL, *kind = NULL;
    const corral_val_t *st = NULL;
    if (corral_json_parse(&a, text, len, &v, &je) != 0) {
        snprintf(err, errlen, "exec plugin: output is not JSON (%d:%d: %s)", je.line, je.col,
                 je.msg);
        goto done;
    }
    if (!v || v->kind != CORRAL_VAL_MAP) {
        snprintf(err, errlen, "exec plugin: output is not an ExecCredential object");
        goto done;
    }
    api = corral_val_get_str(v, "apiVersion");
    kind = corral_val_get_str(v, "kind");
    if (!kind || strcmp(kind, "ExecCredential") != 0) {
        snprintf(err, errlen, "exec plugin: output kind is \"%s\", not ExecCredential",
                 kind ? kind : "");
        goto done;
    }
    if (!api || strcmp(api, api_version) != 0) {
        snprintf(err, errlen,
                 "exec plugin is configured to use API version %s, plugin returned version %s",
                 api_version, api ? api : "(none)");
        goto done;
    }
    st = corral_val_get(v, "status");
    if (!st || st->kind != CORRAL_VAL_MAP) {
        snprintf(err, errlen, "exec plugin didn't return a status field");
        goto done;
    }
    out->token = str_field(st, "token");
    out->cert_data = str_field(st, "clientCertificateData");
    out->key_data = str_field(st, "clientKeyData");
    if (!out->cert_data != !out->key_data) {
        snprintf(err, errlen, "exec plugin returned only certificate or key, not both");
        goto done;
    }
    if (!out->token && !out->cert_data) {
        snprintf(err, errlen, "exec plugin didn't return a token or cert/key pair");
        goto done;
    }
    const char *exp = corral_val_get_str(st, "expirationTimestamp");
    if (exp && *exp && corral_time_parse(exp, strlen(exp), &out->expiry_us) != 0) {
        snprintf(err, errlen, "exec plugin: expirationTimestamp \"%s\" is not RFC 3339", exp);
        goto done;
    }
    rc = 0;
done:
    if (rc)
        corral_client_cred_fini(out);
    corral_arena_fini(&a);
    return rc;
}

/* --- running the plugin ------------------------------------------------------------------- */

static int64_t mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int64_t wall_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* KUBERNETES_EXEC_INFO: the ExecCredential spec the plugin is given. */
static void exec_info(const corral_client_config_t *cfg, bool interactive, corral_buf_t *b)
{
    const corral_client_exec_t *e = cfg->exec;
    corral_buf_puts(b, "KUBERNETES_EXEC_INFO={\"kind\":\"ExecCredential\",\"apiVersion\":");
    corral_json_quote(b, e->api_version, strlen(e->api_version));
    corral_buf_printf(b, ",\"spec\":{\"interactive\":%s", interactive ? "true" : "false");
    if (e->provide_cluster_info) {
        corral_buf_puts(b, ",\"cluster\":{\"server\":");
        corral_json_quote(b, cfg->server, strlen(cfg->server));
        if (cfg->tls_server_name) {
            corral_buf_puts(b, ",\"tls-server-name\":");
            corral_json_quote(b, cfg->tls_server_name, strlen(cfg->tls_server_name));
        }
        if (cfg->insecure)
            corral_buf_puts(b, ",\"insecure-skip-tls-verify\":true");
        /* certificate-authority-data: the CA's PEM, from data or file */
        char *file = NULL;
        size_t flen = 0;
        const char *ca = cfg->ca_data;
        size_t calen = cfg->ca_data_len;
        if (!ca && cfg->ca_file) {
            corral_diag_t d;
            corral_diag_init(&d);
            if (corral_file_read(cfg->ca_file, 1 << 20, &d, &file, &flen) == 0) {
                ca = file;
                calen = flen;
            }
            corral_diag_fini(&d);
        }
        if (ca) {
            corral_buf_t enc;
            corral_buf_init(&enc);
            corral_base64_encode(ca, calen, 0, &enc);
            corral_buf_puts(b, ",\"certificate-authority-data\":");
            corral_json_quote(b, enc.p ? enc.p : "", enc.len);
            corral_buf_fini(&enc);
        }
        corral_free(file);
        corral_buf_putc(b, '}');
    }
    corral_buf_puts(b, "}}");
}

/* The plugin's environment: ours, less the names its env sets, plus its
 * env and KUBERNETES_EXEC_INFO. The strings are borrowed or in keep. */
static char **plugin_env(const corral_client_exec_t *e, const char *info, char ***keep)
{
    size_t n = 0;
    while (environ && environ[n])
        n++;
    char **env = corral_calloc(n + e->nenv + 2, sizeof(char *));
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const char *eq = strchr(environ[i], '=');
        size_t nl = eq ? (size_t)(eq - environ[i]) : strlen(environ[i]);
        bool over = nl == strlen("KUBERNETES_EXEC_INFO") &&
                    strncmp(environ[i], "KUBERNETES_EXEC_INFO", nl) == 0;
        for (size_t j = 0; j < e->nenv && !over; j++)
            over = strncmp(e->env[j], environ[i], nl) == 0 && e->env[j][nl] == '=';
        if (!over)
            env[k++] = environ[i];
    }
    for (size_t j = 0; j < e->nenv; j++)
        env[k++] = e->env[j];
    env[k++] = (char *)info;
    env[k] = NULL;
    *keep = env;
    return env;
}

/* Run the plugin once; its stdout in out. */
/* Start the plugin with its output on out_fd (stdin /dev/null unless
 * interactive) in a process group of its own (so a timeout kills what it
 * started too), no signal blocked and every disposition default: the
 * components block SIGINT/SIGTERM for their signal threads, which a plugin
 * must not inherit. Returns posix_spawn's error. */
static int spawn(const char *cmd, char **argv, char **env, int out_fd, bool interactive, pid_t *pid)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, out_fd, STDOUT_FILENO);
    if (!interactive)
        posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawnattr_t at;
    posix_spawnattr_init(&at);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setsigdefault(&at, &all);
    short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
    if (!interactive) { /* an interactive one stays in the terminal's foreground group */
        posix_spawnattr_setpgroup(&at, 0);
        flags |= POSIX_SPAWN_SETPGROUP;
    }
    posix_spawnattr_setflags(&at, flags);
    int se = posix_spawnp(pid, cmd, &fa, &at, argv, env);
    posix_spawnattr_destroy(&at);
    posix_spawn_file_actions_destroy(&fa);
    return se;
}

static int run_plugin(const corral_client_config_t *cfg, corral_buf_t *out, char *err,
                      size_t errlen)
{
    const corral_client_exec_t *e = cfg->exec;
    bool tty = isatty(STDIN_FILENO) == 1;
    bool interactive = tty && strcmp(e->interactive_mode, "Never") != 0;
    if (!strcmp(e->interactive_mode, "Always") && !tty) {
        snprintf(err, errlen,
                 "exec plugin %s: interactiveMode Always, but there is no terminal on stdin",
                 e->command);
        return CORRAL_EINVAL;
    }
    corral_buf_t info;
    corral_buf_init(&info);
    exec_info(cfg, interactive, &info);
    char **keep = NULL;
    char **env = plugin_env(e, corral_buf_str(&info), &keep);
    char **argv = corral_calloc(e->nargs + 2, sizeof(char *));
    argv[0] = e->command;
    for (size_t i = 0; i < e->nargs; i++)
        argv[i + 1] = e->args[i];
    int fds[2];
    int rc = 0;
    pid_t pid = -1;
    if (pipe2(fds, O_CLOEXEC) != 0) {
        snprintf(err, errlen, "exec plugin: pipe: %s", strerror(errno));
        rc = CORRAL_EIO;
        goto out;
    }
    int se = spawn(e->command, argv, env, fds[1], interactive, &pid);
    close(fds[1]);
    if (se != 0) {
        snprintf(err, errlen, "exec plugin: cannot run %s: %s%s%s", e->command, strerror(se),
                 e->install_hint ? "\n" : "", e->install_hint ? e->install_hint : "");
        close(fds[0]);
        rc = CORRAL_EIO;
        goto out;
    }
    int64_t deadline = mono_us() + (e->timeout_ms > 0 ? e->timeout_ms : 60000) * 1000;
    bool killed = false;
    for (;;) {
        int64_t left = deadline - mono_us();
        struct pollfd p = {fds[0], POLLIN, 0};
        int pr = left > 0 ? poll(&p, 1, (int)((left + 999) / 1000)) : 0;
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr <= 0) {
            snprintf(err, errlen, "exec plugin %s: no answer within %ld ms (killed)", e->command,
                     e->timeout_ms > 0 ? e->timeout_ms : 60000);
            killed = true;
            break;
        }
        char buf[4096];
        ssize_t r = read(fds[0], buf, sizeof(buf));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        if (out->len + (size_t)r > EXEC_OUTPUT_MAX) {
            snprintf(err, errlen, "exec plugin %s: output larger than %zu bytes (killed)",
                     e->command, EXEC_OUTPUT_MAX);
            killed = true;
            break;
        }
        corral_buf_append(out, buf, (size_t)r);
    }
    close(fds[0]);
    /* Its exit is bounded by the same deadline: a plugin may close its
     * output and keep running. */
    int status = 0;
    while (!killed) {
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid || (w < 0 && errno != EINTR))
            break;
        if (mono_us() >= deadline) {
            snprintf(err, errlen, "exec plugin %s: did not exit within %ld ms (killed)", e->command,
                     e->timeout_ms > 0 ? e->timeout_ms : 60000);
            killed = true;
            break;
        }
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
    if (killed) {
        kill(interactive ? pid : -pid, SIGKILL); /* its group: what it started goes too */
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
            ;
    }
    if (killed) {
        rc = CORRAL_EIO;
    } else if (WIFEXITED(status) && WEXITSTATUS(status) == 127) { /* the shell's "not found" */
        snprintf(err, errlen, "exec plugin: cannot run %s (exit code 127)%s%s", e->command,
                 e->install_hint ? "\n" : "", e->install_hint ? e->install_hint : "");
        rc = CORRAL_EIO;
    } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
        snprintf(err, errlen, "exec plugin %s failed with exit code %d", e->command,
                 WEXITSTATUS(status));
        rc = CORRAL_EIO;
    } else if (WIFSIGNALED(status)) {
        snprintf(err, errlen, "exec plugin %s killed by signal %d", e->command, WTERMSIG(status));
        rc = CORRAL_EIO;
    }
out:
    corral_free(argv);
    corral_free(keep);
    corral_buf_fini(&info);
    return rc;
}

/* --- the cache ------------------------------------------------------------------------------ */

typedef struct cache_entry {
    char *key;
    corral_client_cred_t cred;
    uint64_t used;
    int64_t fail_until_us; /* after a failed run, the next run waits until then */
    int64_t backoff_us;    /* 1 s, doubling to 30 s; 0 after a success */
    char fail_msg[256];
    bool has_cred;
    bool running; /* a thread runs the plugin for this key (without the lock) */
} cache_entry_t;

#define EXEC_BACKOFF_MIN_US INT64_C(1000000)
#define EXEC_BACKOFF_MAX_US INT64_C(30000000)

static pthread_mutex_t cache_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cache_cv = PTHREAD_COND_INITIALIZER;
static cache_entry_t cache[EXEC_CACHE_MAX];
static uint64_t cache_tick, runs;

static char *cache_key(const corral_client_config_t *cfg)
{
    const corral_client_exec_t *e = cfg->exec;
    corral_buf_t b;
    corral_buf_init(&b);
    corral_buf_printf(&b, "%s\x1f%s\x1f%s\x1f%d\x1f%s", cfg->server ? cfg->server : "", e->command,
                      e->api_version, e->provide_cluster_info,
                      e->interactive_mode ? e->interactive_mode : "");
    for (size_t i = 0; i < e->nargs; i++)
        corral_buf_printf(&b, "\x1e%s", e->args[i]);
    for (size_t i = 0; i < e->nenv; i++)
        corral_buf_printf(&b, "\x1d%s", e->env[i]);
    return corral_buf_steal(&b);
}

uint64_t corral_client_exec_runs(void)
{
    pthread_mutex_lock(&cache_mu);
    uint64_t n = runs;
    pthread_mutex_unlock(&cache_mu);
    return n;
}

void corral_client_exec_forget(void)
{
    pthread_mutex_lock(&cache_mu);
    for (size_t i = 0; i < EXEC_CACHE_MAX; i++) {
        cache_entry_t *c = &cache[i];
        if (c->running)
            continue;
        corral_free(c->key);
        if (c->has_cred)
            corral_client_cred_fini(&c->cred);
        memset(c, 0, sizeof(*c));
    }
    pthread_mutex_unlock(&cache_mu);
}

static bool same_cred(const corral_client_cred_t *c, const char *failed)
{
    return (c->token && strcmp(c->token, failed) == 0) ||
           (c->cert_data && strcmp(c->cert_data, failed) == 0);
}

/* The slot of key (made, evicting the least used idle one, when missing;
 * NULL when every slot is busy running). Under cache_mu. */
static cache_entry_t *slot_for(char **key)
{
    cache_entry_t *victim = NULL;
    for (size_t i = 0; i < EXEC_CACHE_MAX; i++)
        if (cache[i].key && strcmp(cache[i].key, *key) == 0)
            return &cache[i];
    for (size_t i = 0; i < EXEC_CACHE_MAX; i++) {
        cache_entry_t *c = &cache[i];
        if (c->running)
            continue;
        if (!c->key) {
            victim = c;
            break;
        }
        if (!victim || c->used < victim->used)
            victim = c;
    }
    if (!victim)
        return NULL;
    corral_free(victim->key);
    if (victim->has_cred)
        corral_client_cred_fini(&victim->cred);
    memset(victim, 0, sizeof(*victim));
    victim->key = *key;
    *key = NULL;
    return victim;
}

/* Run the plugin for slot (marked running) without the lock; store what it
 * gave, or the failure and the next backoff. Called and returns with
 * cache_mu held. */
static int refresh(cache_entry_t *slot, const corral_client_config_t *cfg, char *err, size_t errlen)
{
    slot->running = true;
    runs++;
    pthread_mutex_unlock(&cache_mu);
    corral_buf_t b;
    corral_buf_init(&b);
    int rc = run_plugin(cfg, &b, err, errlen);
    corral_client_cred_t cr;
    memset(&cr, 0, sizeof(cr));
    if (rc == 0)
        rc = corral_exec_credential_parse(b.p ? b.p : "", b.len, cfg->exec->api_version, &cr, err,
                                          errlen);
    corral_buf_fini(&b);
    pthread_mutex_lock(&cache_mu);
    slot->running = false;
    if (rc == 0) {
        if (slot->has_cred)
            corral_client_cred_fini(&slot->cred);
        slot->cred = cr;
        slot->has_cred = true;
        slot->backoff_us = 0;
        slot->fail_until_us = 0;
    } else {
        slot->backoff_us = slot->backoff_us ? slot->backoff_us * 2 : EXEC_BACKOFF_MIN_US;
        if (slot->backoff_us > EXEC_BACKOFF_MAX_US)
            slot->backoff_us = EXEC_BACKOFF_MAX_US;
        slot->fail_until_us = mono_us() + slot->backoff_us;
        snprintf(slot->fail_msg, sizeof(slot->fail_msg), "%s", err);
    }
    pthread_cond_broadcast(&cache_cv);
    return rc;
}

int corral_client_exec_credential(const corral_client_config_t *cfg, const char *failed,
                                  corral_client_cred_t *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    if (!cfg->exec) {
        snprintf(err, errlen, "no exec plugin configured");
        return CORRAL_EINVAL;
    }
    char *key = cache_key(cfg);
    pthread_mutex_lock(&cache_mu);
    /* One run per key at a time: the others wait for its answer, and runs
     * of other keys (other users, other clusters) go on beside it. */
    cache_entry_t *slot;
    while ((slot = slot_for(&key)) == NULL || slot->running)
        pthread_cond_wait(&cache_cv, &cache_mu);
    int rc = 0;
    bool fresh = slot->has_cred && (!slot->cred.expiry_us || wall_us() < slot->cred.expiry_us) &&
                 !(failed && same_cred(&slot->cred, failed));
    if (!fresh && slot->fail_until_us && mono_us() < slot->fail_until_us) {
        /* a plugin that failed is not run again on every request */
        snprintf(err, errlen, "%s (not run again for %lld ms)", slot->fail_msg,
                 (long long)((slot->fail_until_us - mono_us()) / 1000));
        rc = CORRAL_EIO;
    } else if (!fresh) {
        rc = refresh(slot, cfg, err, errlen);
    }
    if (rc == 0) {
        slot->used = ++cache_tick;
        cred_copy(out, &slot->cred);
    }
    pthread_mutex_unlock(&cache_mu);
    corral_free(key);
    return rc;
}
