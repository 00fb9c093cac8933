/*
 * Readiness probes, as kubelet runs them, without ever blocking the agent's
 * loop: the loop decides when a probe is due (corral__probe_due) and hands
 * it to a small pool of worker threads (the prober), which run it with its
 * timeout (tcpSocket: a connect; httpGet: a GET through libcurl, 200-399
 * succeeds, TLS not verified as kubelet does; exec: the command with the
 * container's environment, in its own process group, killed at the
 * timeout) and queue the result; the loop drains results every tick and
 * counts them (corral__probe_record): successThreshold successes in a row
 * make the container ready, failureThreshold failures in a row unready.
 *
 * Until a container's first success it is probed every 100 ms (Knative's
 * aggressive probing at start), then every periodSeconds; the first probe
 * is initialDelaySeconds after the container started. The host defaults to
 * the pod's address; ports may be named (the container's ports[].name).
 * A job carries copies of everything it needs, and results name the pod by
 * uid and the container by index and instance, so a pod deleted or a
 * container restarted meanwhile only makes its result stale (ignored).
 */
#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent/agent_int.h"

#define PROBE_FAST_US  (100 * INT64_C(1000)) /* before the first success */
#define PROBE_BODY_MAX ((size_t)10 * 1024)   /* kubelet reads at most 10 KiB of a body */
#define PROBE_QUEUE    1024                  /* jobs waiting at most (more are dropped) */

/* --- the spec --------------------------------------------------------------------------------- */

/* An integer, or a string of digits (IntOrString); -1 otherwise. */
static int val_int(const corral_val_t *v, int64_t *out)
{
    if (v && v->kind == CORRAL_VAL_INT) {
        *out = v->u.i;
        return 0;
    }
    if (!v || v->kind != CORRAL_VAL_STR || !v->s || !*v->s || strlen(v->s) > 9 ||
        strspn(v->s, "0123456789") != strlen(v->s))
        return -1;
    *out = strtol(v->s, NULL, 10);
    return 0;
}

static int get_int(const corral_val_t *m, const char *key, int def, int min)
{
    const corral_val_t *v = corral_val_get(m, key);
    int64_t n;
    if (!v || val_int(v, &n) != 0)
        return def;
    return n < min ? min : n > 86400 ? 86400 : (int)n;
}

/* A port: a number, a numeric string or a name of one of the container's ports. */
static int resolve_port(const corral_val_t *ctr, const corral_val_t *port, char *err, size_t errlen)
{
    int64_t n;
    if (port && val_int(port, &n) == 0)
        return n > 0 && n < 65536 ? (int)n : -1;
    const char *name = port ? port->s : NULL;
    const corral_val_t *ports = corral_val_get(ctr, "ports");
    for (size_t i = 0; name && ports && ports->kind == CORRAL_VAL_SEQ && i < ports->n; i++) {
        const char *pn = corral_val_get_str(ports->items[i], "name");
        const corral_val_t *cp = corral_val_get(ports->items[i], "containerPort");
        if (pn && !strcmp(pn, name) && cp && val_int(cp, &n) == 0)
            return n > 0 && n < 65536 ? (int)n : -1;
    }
    snprintf(err, errlen, "port %s not found in the container's ports", name ? name : "(none)");
    return -1;
}

void corral__probe_clear(corral__probe_t *pb)
{
    if (pb->cmd)
        for (size_t i = 0; pb->cmd[i]; i++)
            corral_free(pb->cmd[i]);
    corral_free(pb->cmd);
    corral_free(pb->host);
    corral_free(pb->path);
    for (size_t i = 0; i < pb->nheaders; i++)
        corral_free(pb->headers[i]);
    corral_free(pb->headers);
    memset(pb, 0, sizeof(*pb));
}

int corral__probe_parse(const corral_val_t *ctr, const char *field, corral__probe_t *pb, char *err,
                        size_t errlen)
{
    memset(pb, 0, sizeof(*pb));
    err[0] = '\0';
    const corral_val_t *m = corral_val_get(ctr, field);
    if (!m || m->kind != CORRAL_VAL_MAP)
        return 0;
    pb->initial_delay_s = get_int(m, "initialDelaySeconds", 0, 0);
    pb->period_s = get_int(m, "periodSeconds", 10, 1);
    pb->timeout_s = get_int(m, "timeoutSeconds", 1, 1);
    pb->success_th = get_int(m, "successThreshold", 1, 1);
    pb->failure_th = get_int(m, "failureThreshold", 3, 1);
    if (pb->timeout_s > 60)
        pb->timeout_s = 60; /* a worker is never held longer */
    const corral_val_t *h;
    if ((h = corral_val_get(m, "tcpSocket")) != NULL) {
        pb->kind = CORRAL__PROBE_TCP;
    } else if ((h = corral_val_get(m, "httpGet")) != NULL) {
        pb->kind = CORRAL__PROBE_HTTP;
        const char *path = corral_val_get_str(h, "path");
        pb->path = corral_strdup(path && *path ? path : "/");
        const char *scheme = corral_val_get_str(h, "scheme");
        pb->https = scheme && !strcasecmp(scheme, "HTTPS");
        const corral_val_t *hs = corral_val_get(h, "httpHeaders");
        for (size_t i = 0; hs && hs->kind == CORRAL_VAL_SEQ && i < hs->n && i < 16; i++) {
            const char *n = corral_val_get_str(hs->items[i], "name");
            const char *v = corral_val_get_str(hs->items[i], "value");
            if (!n || !*n || strpbrk(n, "\r\n:") || (v && strpbrk(v, "\r\n")))
                continue;
            corral_grow((void **)&pb->headers, &pb->capheaders, pb->nheaders + 1, sizeof(char *));
            size_t len = strlen(n) + (v ? strlen(v) : 0) + 3;
            pb->headers[pb->nheaders] = corral_malloc(len);
            snprintf(pb->headers[pb->nheaders++], len, "%s: %s", n, v ? v : "");
        }
    } else if ((h = corral_val_get(m, "exec")) != NULL) {
        pb->kind = CORRAL__PROBE_EXEC;
        const corral_val_t *cmd = corral_val_get(h, "command");
        size_t n = cmd && cmd->kind == CORRAL_VAL_SEQ ? cmd->n : 0;
        if (n == 0) {
            snprintf(err, errlen, "%s.exec has no command", field);
            return CORRAL_EINVAL;
        }
        pb->cmd = corral_calloc(n + 1, sizeof(char *));
        for (size_t i = 0; i < n; i++)
            pb->cmd[i] = corral_strdup(cmd->items[i]->s ? cmd->items[i]->s : "");
        return 0;
    } else {
        snprintf(err, errlen, "%s has no handler (tcpSocket, httpGet or exec)", field);
        return CORRAL_EINVAL;
    }
    const char *host = corral_val_get_str(h, "host");
    pb->host = host && *host ? corral_strdup(host) : NULL;
    pb->port = resolve_port(ctr, corral_val_get(h, "port"), err, errlen);
    if (pb->port < 0) {
        if (!err[0])
            snprintf(err, errlen, "%s: invalid port", field);
        return CORRAL_EINVAL;
    }
    return 0;
}

/* --- scheduling and counting (pure) ---------------------------------------------------------- */

bool corral__probe_due(const corral__probe_t *pb, const corral__probe_state_t *s,
                       int64_t started_us, int64_t now_us)
{
    if (pb->kind == CORRAL__PROBE_NONE || s->busy)
        return false;
    if (now_us < started_us + (int64_t)pb->initial_delay_s * 1000000)
        return false;
    return now_us >= s->next_us;
}

bool corral__probe_record(const corral__probe_t *pb, corral__probe_state_t *s, bool ok,
                          int64_t now_us)
{
    bool was = s->ready;
    s->busy = false;
    if (ok) {
        s->fails = 0;
        s->succ++;
        s->ever_ok = true;
        if (s->succ >= pb->success_th)
            s->ready = true;
    } else {
        s->succ = 0;
        s->fails++;
        if (s->fails >= pb->failure_th)
            s->ready = false;
    }
    s->next_us = now_us + (s->ever_ok ? (int64_t)pb->period_s * 1000000 : PROBE_FAST_US);
    return was != s->ready;
}

/* --- running one probe ------------------------------------------------------------------------ */

static int64_t mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int probe_tcp(const char *host, int port, int timeout_ms, char *msg, size_t len)
{
    char ps[16];
    snprintf(ps, sizeof(ps), "%d", port);
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *ai = NULL;
    hints.ai_flags = AI_NUMERICSERV;
    int e = getaddrinfo(host, ps, &hints, &ai);
    if (e != 0) {
        snprintf(msg, len, "dial tcp %s:%d: %s", host, port, gai_strerror(e));
        return -1;
    }
    int rc = -1;
    int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd >= 0) {
        int r = connect(fd, ai->ai_addr, ai->ai_addrlen);
        if (r == 0) {
            rc = 0;
        } else if (errno == EINPROGRESS) {
            struct pollfd p = {.fd = fd, .events = POLLOUT};
            int err = 0;
            socklen_t el = sizeof(err);
            if (poll(&p, 1, timeout_ms) == 1 &&
                getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) == 0 && err == 0)
                rc = 0;
            else
                snprintf(msg, len, "dial tcp %s:%d: %s", host, port,
                         err ? strerror(err) : "i/o timeout");
        } else {
            snprintf(msg, len, "dial tcp %s:%d: %s", host, port, strerror(errno));
        }
        close(fd);
    }
    freeaddrinfo(ai);
    return rc;
}

static size_t body_sink(char *p, size_t sz, size_t n, void *ud)
{
    size_t *got = ud;
    (void)p;
    size_t len = sz * n;
    *got += len;
    return *got > (size_t)PROBE_BODY_MAX ? 0 : len; /* stop reading past 10 KiB */
}

static int probe_http(const corral__probe_t *pb, const char *host, int timeout_ms, char *msg,
                      size_t len)
{
    CURL *h = curl_easy_init();
    if (!h) {
        snprintf(msg, len, "cannot make an HTTP handle");
        return -1;
    }
    char url[2048];
    bool v6 = strchr(host, ':') != NULL;
    snprintf(url, sizeof(url), "%s://%s%s%s:%d%s%s", pb->https ? "https" : "http", v6 ? "[" : "",
             host, v6 ? "]" : "", pb->port, pb->path[0] == '/' ? "" : "/", pb->path);
    struct curl_slist *hdr = curl_slist_append(NULL, "User-Agent: kube-probe/1.30");
    hdr = curl_slist_append(hdr, "Accept: */*");
    for (size_t i = 0; i < pb->nheaders; i++)
        hdr = curl_slist_append(hdr, pb->headers[i]);
    size_t got = 0;
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)timeout_ms);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, body_sink);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &got);
    CURLcode cc = curl_easy_perform(h);
    long code = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    int rc = -1;
    if (code >= 200 && code < 400 && (cc == CURLE_OK || cc == CURLE_WRITE_ERROR))
        rc = 0;
    else if (code)
        snprintf(msg, len, "HTTP probe failed with statuscode: %ld", code);
    else
        snprintf(msg, len, "Get \"%s\": %s", url, curl_easy_strerror(cc));
    curl_slist_free_all(hdr);
    curl_easy_cleanup(h);
    return rc;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

static int probe_exec(const corral__probe_t *pb, char *const *envp, const char *dir, int timeout_ms,
                      char *msg, size_t len)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    if (dir && *dir)
        posix_spawn_file_actions_addchdir_np(&fa, dir);
    posix_spawnattr_t at;
    corral__spawnattr_init(&at, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&at, 0);
    /* PATH lookup in the container's PATH, as a shell in the container would */
    const char *path = corral__env_get(envp, "PATH");
    pid_t pid = 0;
    int rc = -1;
    int e = ENOENT;
    if (strchr(pb->cmd[0], '/')) {
        e = posix_spawn(&pid, pb->cmd[0], &fa, &at, pb->cmd, envp);
    } else {
        char full[4096];
        const char *p = path ? path : "/usr/bin:/bin";
        while (*p) {
            size_t n = strcspn(p, ":");
            snprintf(full, sizeof(full), "%.*s/%s", (int)n, p, pb->cmd[0]);
            if (n && access(full, X_OK) == 0) {
                e = posix_spawn(&pid, full, &fa, &at, pb->cmd, envp);
                break;
            }
            p += n + (p[n] == ':');
        }
    }
    posix_spawnattr_destroy(&at);
    posix_spawn_file_actions_destroy(&fa);
    if (e != 0) {
        snprintf(msg, len, "exec %s: %s", pb->cmd[0], strerror(e));
        return -1;
    }
    int64_t deadline = mono_us() + (int64_t)timeout_ms * 1000;
    int st = 0;
    for (int wait_ms = 1;; wait_ms = wait_ms < 20 ? wait_ms * 2 : 20) {
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid) {
            rc = WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
            if (rc)
                snprintf(msg, len, "command %s exited with %d", pb->cmd[0],
                         WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
            break;
        }
        if (r < 0) {
            snprintf(msg, len, "waiting for %s: %s", pb->cmd[0], strerror(errno));
            break;
        }
        if (mono_us() >= deadline) {
            kill(-pid, SIGKILL);
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            snprintf(msg, len, "command %s timed out after %d ms", pb->cmd[0], timeout_ms);
            break;
        }
        sleep_ms(wait_ms);
    }
    return rc;
}

int corral__probe_run(const corral__probe_t *pb, const char *pod_ip, char *const *envp,
                      const char *dir, char *msg, size_t len)
{
    msg[0] = '\0';
    const char *host = pb->host ? pb->host : pod_ip;
    int tmo = pb->timeout_s * 1000;
    switch (pb->kind) {
    case CORRAL__PROBE_TCP:
        return probe_tcp(host, pb->port, tmo, msg, len);
    case CORRAL__PROBE_HTTP:
        return probe_http(pb, host, tmo, msg, len);
    case CORRAL__PROBE_EXEC:
        return probe_exec(pb, envp, dir, tmo, msg, len);
    default:
        return 0;
    }
}

/* --- the worker pool -------------------------------------------------------------------------- */

typedef struct job {
    struct job *next;
    corral__probe_result_t res; /* uid, ctr, instance filled at submit */
    corral__probe_t pb;
    char pod_ip[64];
    char **envp;
    char *dir;
} job_t;

struct corral__prober {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    job_t *todo, **todo_tail;
    job_t *done, **done_tail;
    size_t queued;
    bool stop;
    pthread_t *th;
    int nth;
};

static char **strv_dup(char *const *v)
{
    size_t n = 0;
    while (v && v[n])
        n++;
    char **o = corral_calloc(n + 1, sizeof(char *));
    for (size_t i = 0; i < n; i++)
        o[i] = corral_strdup(v[i]);
    return o;
}

static void strv_free(char **v)
{
    for (size_t i = 0; v && v[i]; i++)
        corral_free(v[i]);
    corral_free(v);
}

static void probe_copy(corral__probe_t *d, const corral__probe_t *s)
{
    *d = *s;
    d->host = s->host ? corral_strdup(s->host) : NULL;
    d->path = s->path ? corral_strdup(s->path) : NULL;
    d->cmd = s->cmd ? strv_dup(s->cmd) : NULL;
    d->headers = s->nheaders ? corral_calloc(s->nheaders, sizeof(char *)) : NULL;
    d->capheaders = s->nheaders;
    for (size_t i = 0; i < s->nheaders; i++)
        d->headers[i] = corral_strdup(s->headers[i]);
}

static void job_free(job_t *j)
{
    corral__probe_clear(&j->pb);
    strv_free(j->envp);
    corral_free(j->dir);
    corral_free(j->res.uid);
    corral_free(j);
}

static void *worker(void *arg)
{
    corral__prober_t *pr = arg;
    pthread_mutex_lock(&pr->mu);
    for (;;) {
        while (!pr->todo && !pr->stop)
            pthread_cond_wait(&pr->cv, &pr->mu);
        if (pr->stop)
            break;
        job_t *j = pr->todo;
        pr->todo = j->next;
        if (!pr->todo)
            pr->todo_tail = &pr->todo;
        pthread_mutex_unlock(&pr->mu);
        j->res.ok = corral__probe_run(&j->pb, j->pod_ip, j->envp, j->dir, j->res.msg,
                                      sizeof(j->res.msg)) == 0;
        j->next = NULL;
        pthread_mutex_lock(&pr->mu);
        *pr->done_tail = j;
        pr->done_tail = &j->next;
    }
    pthread_mutex_unlock(&pr->mu);
    return NULL;
}

corral__prober_t *corral__prober_new(int threads)
{
    corral__prober_t *pr = corral_calloc(1, sizeof(*pr));
    pthread_mutex_init(&pr->mu, NULL);
    pthread_cond_init(&pr->cv, NULL);
    pr->todo_tail = &pr->todo;
    pr->done_tail = &pr->done;
    curl_global_init(CURL_GLOBAL_DEFAULT);
    pr->th = corral_calloc((size_t)threads, sizeof(pthread_t));
    for (int i = 0; i < threads; i++)
        if (pthread_create(&pr->th[pr->nth], NULL, worker, pr) == 0)
            pr->nth++;
    return pr;
}

void corral__prober_free(corral__prober_t *pr)
{
    if (!pr)
        return;
    pthread_mutex_lock(&pr->mu);
    pr->stop = true;
    pthread_cond_broadcast(&pr->cv);
    pthread_mutex_unlock(&pr->mu);
    for (int i = 0; i < pr->nth; i++)
        pthread_join(pr->th[i], NULL);
    for (job_t *j = pr->todo, *n; j; j = n) {
        n = j->next;
        job_free(j);
    }
    for (job_t *j = pr->done, *n; j; j = n) {
        n = j->next;
        job_free(j);
    }
    corral_free(pr->th);
    pthread_cond_destroy(&pr->cv);
    pthread_mutex_destroy(&pr->mu);
    curl_global_cleanup();
    corral_free(pr);
}

int corral__prober_submit(corral__prober_t *pr, const char *uid, int ctr, int instance,
                          const corral__probe_t *pb, const char *pod_ip, char *const *envp,
                          const char *dir)
{
    pthread_mutex_lock(&pr->mu);
    bool full = pr->queued >= PROBE_QUEUE || pr->nth == 0;
    if (!full)
        pr->queued++;
    pthread_mutex_unlock(&pr->mu);
    if (full)
        return CORRAL_EAGAIN;
    job_t *j = corral_calloc(1, sizeof(*j));
    j->res.uid = corral_strdup(uid);
    j->res.ctr = ctr;
    j->res.instance = instance;
    probe_copy(&j->pb, pb);
    snprintf(j->pod_ip, sizeof(j->pod_ip), "%s", pod_ip);
    j->envp = strv_dup(envp);
    j->dir = dir ? corral_strdup(dir) : NULL;
    pthread_mutex_lock(&pr->mu);
    *pr->todo_tail = j;
    pr->todo_tail = &j->next;
    pthread_cond_signal(&pr->cv);
    pthread_mutex_unlock(&pr->mu);
    return 0;
}

bool corral__prober_take(corral__prober_t *pr, corral__probe_result_t *out)
{
    pthread_mutex_lock(&pr->mu);
    job_t *j = pr->done;
    if (j) {
        pr->done = j->next;
        if (!pr->done)
            pr->done_tail = &pr->done;
        pr->queued--;
    }
    pthread_mutex_unlock(&pr->mu);
    if (!j)
        return false;
    *out = j->res;
    j->res.uid = NULL; /* now the caller's */
    job_free(j);
    return true;
}
