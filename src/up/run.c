/*
 * corral_up_run (include/corral/up.h): the order of a start and of a stop.
 *
 * Start: take DIR/up.lock (flock: one `corral up` per data directory), make
 * or check the PKI, tokens and kubeconfigs, start the API server and wait
 * for /readyz as the admin (if it exits first, e.g. on a busy port, say so
 * and stop), apply the RBAC of deploy/rbac, start the scheduler, the
 * controller and the agents, wait a little for the nodes to register, and
 * print where everything is. Then supervise (supervise.c) until a signal,
 * and stop agents first, the API server last.
 *
 * Components whose subcommand this build lacks (`corral X --help` fails)
 * are reported and skipped rather than restarted forever.
 */
#include <errno.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "corral/buf.h"
#include "corral/common.h"
#include "corral/gpu.h"
#include "corral/io.h"
#include "up/up_int.h"

#define LOG_MAX_DEFAULT   ((long)64 << 20)
#define NODE_WAIT_S       20.0
#define QUICKSTART_SAMPLE "examples/quickstart/gang-2x8.yaml"

/* Are there NVIDIA GPUs here? NVML as the agent sees it (include/corral/gpu.h;
 * CORRAL_NVML_LIB names another library, for tests). */
static bool probe_nvml(void)
{
    corral_gpu_inventory_t inv;
    char err[512];
    bool found = corral_gpu_discover("nvml", NULL, &inv, err, sizeof(err)) == 0 && inv.n > 0;
    corral_gpu_inventory_fini(&inv);
    return found;
}

static int mkdirs(const corral_up_plan_t *p, char *err, size_t errlen)
{
    static const char *const subs[] = {"", "/logs", "/kubeconfigs", "/agents", "/pki"};
    char path[4096];
    /* The parents of DIR with the usual mode; DIR itself private. */
    snprintf(path, sizeof(path), "%s", p->dir);
    for (char *s = path + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = '\0';
        if (mkdir(path, 0755) != 0 && errno != EEXIST)
            break;
        *s = '/';
    }
    for (size_t i = 0; i < sizeof(subs) / sizeof(subs[0]); i++) {
        snprintf(path, sizeof(path), "%s%s", p->dir, subs[i]);
        if (mkdir(path, 0700) != 0 && errno != EEXIST) {
            snprintf(err, errlen, "cannot create %s: %s", path, strerror(errno));
            return CORRAL_EIO;
        }
    }
    return 0;
}

/* flock DIR/up.lock; -1 with a message when another `corral up` holds it. */
static int take_lock(const corral_up_plan_t *p)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/up.lock", p->dir);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        fprintf(stderr, "corral up: cannot open %s: %s\n", path, strerror(errno));
        return -1;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        char pid[32] = "";
        ssize_t k = pread(fd, pid, sizeof(pid) - 1, 0);
        pid[k > 0 ? k : 0] = '\0';
        pid[strcspn(pid, "\n")] = '\0';
        fprintf(stderr,
                "corral up: another corral up (pid %s) is running on %s; stop it first (Ctrl-C "
                "in its terminal, or kill %s), or use another --data-dir\n",
                *pid ? pid : "?", p->dir, *pid ? pid : "<pid>");
        close(fd);
        return -1;
    }
    char pid[32];
    int n = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) != 0 || pwrite(fd, pid, (size_t)n, 0) != n)
        fprintf(stderr, "corral up: cannot write %s (continuing)\n", path);
    return fd;
}

/* The kubeconfigs: the admin's, one per component, and the hollow agent's
 * token file. */
static int write_creds(const corral_up_plan_t *p, const char *ca, char *err, size_t errlen)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/kubeconfig", p->dir);
    int rc = corral_up_kubeconfig_write(path, p->server, ca, "admin", p->ids[0].token, err, errlen);
    static const char *const names[] = {NULL, "scheduler", "controller", "metrics", "router"};
    for (size_t i = 1; i < CORRAL_UP_ID_NODES && rc == 0; i++) {
        snprintf(path, sizeof(path), "%s/kubeconfigs/%s.kubeconfig", p->dir, names[i]);
        rc = corral_up_kubeconfig_write(path, p->server, ca, p->ids[i].user, p->ids[i].token, err,
                                        errlen);
    }
    for (size_t i = 0; i < p->nnodes && rc == 0; i++) {
        snprintf(path, sizeof(path), "%s/kubeconfigs/node-%s.kubeconfig", p->dir, p->nodes[i]);
        rc = corral_up_kubeconfig_write(path, p->server, ca, p->ids[CORRAL_UP_ID_NODES + i].user,
                                        p->ids[CORRAL_UP_ID_NODES + i].token, err, errlen);
    }
    /* The metrics reader's bearer token alone, as Prometheus' credentials_file reads it. */
    const corral_up_ident_t *mr = &p->ids[CORRAL_UP_ID_METRICS];
    snprintf(path, sizeof(path), "%s/kubeconfigs/metrics.token", p->dir);
    if (rc == 0)
        rc = corral__up_write_file(path, mr->token, strlen(mr->token), 0600, err, errlen);
    if (rc != 0 || p->nids == CORRAL_UP_ID_NODES + p->nnodes)
        return rc;
    snprintf(path, sizeof(path), "%s/kubeconfigs/hollow.kubeconfig", p->dir);
    /* The hollow agent's shared connection (its pod informer) is the first
     * hollow node: a node may list and watch all pods; writes for each node
     * go with that node's own token. */
    const corral_up_ident_t *first = &p->ids[CORRAL_UP_ID_NODES + p->nnodes];
    rc = corral_up_kubeconfig_write(path, p->server, ca, first->user, first->token, err, errlen);
    corral_buf_t b;
    corral_buf_init(&b);
    /* `corral agent --token-file`: "NODE,TOKEN" lines. */
    for (size_t i = CORRAL_UP_ID_NODES + p->nnodes; i < p->nids; i++)
        corral_buf_printf(&b, "%s,%s\n", p->ids[i].user + strlen("system:node:"), p->ids[i].token);
    snprintf(path, sizeof(path), "%s/kubeconfigs/hollow-tokens.csv", p->dir);
    if (rc == 0)
        rc = corral__up_write_file(path, corral_buf_str(&b), b.len, 0600, err, errlen);
    corral_buf_fini(&b);
    return rc;
}

/* PKI, tokens, kubeconfigs. */
static int prepare(const corral_up_plan_t *p, char *err, size_t errlen)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/pki", p->dir);
    corral_pki_opts_t po = {.dir = path, .host = p->host};
    corral_pki_status_t st;
    int rc = corral_pki_ensure(&po, &st, err, errlen);
    if (rc != 0)
        return rc;
    if (st.ca_created)
        fprintf(stderr, "corral up: made a CA: %s/ca.crt\n", path);
    if (st.cert_issued)
        fprintf(stderr, "corral up: issued the API server's certificate (%s)\n", st.why);
    snprintf(path, sizeof(path), "%s/tokens.csv", p->dir);
    rc = corral_up_tokens_ensure(path, p->ids, p->nids, err, errlen);
    if (rc != 0)
        return rc;
    snprintf(path, sizeof(path), "%s/pki/ca.crt", p->dir);
    char *ca = NULL;
    size_t len = 0;
    corral_diag_t d;
    corral_diag_init(&d);
    rc = corral_file_read(path, 1 << 20, &d, &ca, &len);
    corral_diag_fini(&d);
    if (rc != 0) {
        snprintf(err, errlen, "cannot read %s", path);
        return rc;
    }
    rc = write_creds(p, ca, err, errlen);
    corral_free(ca);
    return rc;
}

/* Does this build have `corral CMD`? (`corral CMD --help` exits 0.) */
static bool has_command(const char *exe, const char *cmd)
{
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open("/dev/null", O_RDWR);
        if (fd >= 0) {
            dup2(fd, 0);
            dup2(fd, 1);
            dup2(fd, 2);
        }
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        execl(exe, "corral", cmd, "--help", (char *)NULL);
        _exit(127);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid)
        return false;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static corral_client_t *admin_client(const corral_up_plan_t *p, const char *dir)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/pki/ca.crt", dir);
    corral_client_config_t cfg;
    corral_client_config_init(&cfg);
    cfg.server = corral_strdup(p->server);
    cfg.token = corral_strdup(p->ids[0].token);
    cfg.ca_file = corral_strdup(path);
    cfg.source = corral_strdup("corral up");
    corral_client_t *c = corral_client_new(&cfg);
    corral_client_config_fini(&cfg);
    return c;
}

/* What a child wrote to its log since offset (at most the last 2 KiB). */
static void print_log_since(const char *log, long offset)
{
    FILE *f = fopen(log, "r");
    if (!f)
        return;
    fseek(f, 0, SEEK_END);
    long end = ftell(f);
    long from = end - offset > 2048 ? end - 2048 : offset;
    fseek(f, from < 0 ? 0 : from, SEEK_SET);
    char line[1024];
    while (fgets(line, sizeof(line), f))
        fprintf(stderr, "  | %s%s", line, strchr(line, '\n') ? "" : "\n");
    fclose(f);
}

static long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : 0;
}

/* GET path as the admin: the HTTP status (0: no answer). */
static long get_code(corral_client_t *c, const char *path)
{
    corral_client_resp_t r;
    corral_client_resp_init(&r);
    long code = corral_client_request(c, "GET", path, NULL, NULL, 0, &r) == 0 ? r.code : 0;
    corral_client_resp_fini(&r);
    return code;
}

/*
 * Is host:port free? The API server binds with SO_REUSEPORT (one socket per
 * event loop), which would let a second server share a busy port silently;
 * a plain bind (SO_REUSEADDR only, so TIME_WAIT does not count) fails when
 * anything listens there.
 */
static bool port_free(const corral_up_plan_t *p, char *why, size_t len)
{
    struct addrinfo hints, *ai = NULL;
    memset(&hints, 0, sizeof(hints));
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    char port[16];
    snprintf(port, sizeof(port), "%d", p->port);
    int rc = getaddrinfo(p->host, port, &hints, &ai);
    if (rc != 0) {
        snprintf(why, len, "%s: %s", p->host, gai_strerror(rc));
        return false;
    }
    int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    bool ok = fd >= 0 && setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) == 0 &&
              bind(fd, ai->ai_addr, ai->ai_addrlen) == 0;
    if (!ok)
        snprintf(why, len, "%s", strerror(errno));
    if (fd >= 0)
        close(fd);
    freeaddrinfo(ai);
    return ok;
}

/* Start the API server and wait for /readyz. 0 when ready; 1 when it
 * failed (reported); a signal number when one came first. */
static int start_api(corral__sup_t *s, const corral_up_plan_t *p, corral_client_t *c,
                     int ready_timeout_s)
{
    corral__child_t *api = &s->kids[0];
    char why[256];
    if (!port_free(p, why, sizeof(why))) {
        fprintf(stderr,
                "corral up: cannot listen on %s:%d: %s (another corral up or API server?); pick "
                "another address with --listen HOST:PORT\n",
                p->host, p->port, why);
        return 1;
    }
    long offset = file_size(api->log);
    if (corral__up_spawn(s, api) != 0)
        return 1;
    double deadline = corral__up_now() + ready_timeout_s;
    for (;;) {
        bool died = false;
        corral__up_reap(s, &died);
        if (died) {
            fprintf(stderr, "corral up: the API server could not start on %s:%d:\n", p->host,
                    p->port);
            print_log_since(api->log, offset);
            fprintf(stderr,
                    "corral up: if the port is in use (another corral up or API server?), pick "
                    "another with --listen HOST:PORT\n");
            return 1;
        }
        if (get_code(c, "/readyz") == 200)
            return 0;
        if (corral__up_now() > deadline) {
            fprintf(stderr, "corral up: the API server is not ready after %ds (see %s)\n",
                    ready_timeout_s, api->log);
            return 1;
        }
        int sig = corral__up_wait(s, 0.1);
        if (sig)
            return sig;
    }
}

static int apply_rbac(corral_client_t *c)
{
    char err[1024];
    for (size_t i = 0; i < corral_up_rbac_count(); i++) {
        size_t len = 0;
        const char *text = corral_up_rbac_text(i, &len);
        if (corral_up_apply(c, text, len, corral_up_rbac_name(i), err, sizeof(err)) != 0) {
            fprintf(stderr, "corral up: cannot apply the RBAC roles: %s\n", err);
            return -1;
        }
    }
    return 0;
}

/* Wait (a little) until every planned node is registered, so that the
 * banner comes when `kubectl get nodes` shows them. A signal stops the wait
 * and is returned. */
static int wait_nodes(corral__sup_t *s, const corral_up_plan_t *p, corral_client_t *c)
{
    double deadline = corral__up_now() + NODE_WAIT_S;
    /* comps: apiserver, scheduler, controller, the router when on, the agents */
    size_t first_agent = p->router ? 4 : 3;
    for (size_t i = 0; i < p->nnodes;) {
        if (s->kids[first_agent + i].missing) {
            i++;
            continue;
        }
        char path[512];
        snprintf(path, sizeof(path), "/api/v1/nodes/%s", p->nodes[i]);
        if (get_code(c, path) == 200) {
            i++;
            continue;
        }
        if (corral__up_now() > deadline) {
            fprintf(stderr, "corral up: node %s is not registered yet (see %s/logs/agent-%s.log)\n",
                    p->nodes[i], p->dir, p->nodes[i]);
            return 0;
        }
        int sig = corral__up_wait(s, 0.2);
        if (sig)
            return sig;
        corral__up_reap(s, NULL);
        corral__up_tick(s);
    }
    return 0;
}

static void banner(const corral__sup_t *s, const corral_up_plan_t *p, const char *profile)
{
    bool agents = false;
    for (size_t i = 0; i < s->n; i++)
        agents |= s->kids[i].comp->tier == CORRAL_UP_TIER_AGENT && !s->kids[i].missing;
    printf("\nCorral is up.\n"
           "  API server   %s  (TLS, token authentication, RBAC; data in %s)\n"
           "  kubeconfig   %s/kubeconfig\n",
           p->server, p->dir, p->dir);
    if (p->nnodes)
        printf("  nodes        %s%s (%s)%s\n", p->nodes[0], p->nnodes > 1 ? ", ..." : "",
               p->real_gpus ? "NVIDIA GPUs through NVML"
                            : corral_arena_printf((corral_arena_t *)&p->a, "%zu simulated %s",
                                                  p->nnodes, profile),
               agents ? "" : "  [no agent in this build]");
    printf("  metrics      scheduler %s/metrics, controller %s/metrics (%s/endpoints.json)\n",
           p->scheduler_metrics, p->controller_metrics, p->dir);
    if (p->router)
        printf("  router       %s/serving/NS/SERVICE/ (or Host: SERVICE.NS), metrics %s/metrics\n",
               p->router, p->router_metrics);
    /* The admin token rides in the fragment, which browsers never send. */
    if (p->nids && strcmp(p->ids[0].user, "admin") == 0 && p->ids[0].token[0])
        printf("  dashboard    %s/ui/#token=%s\n", p->server, p->ids[0].token);
    printf("  logs         %s/logs/\n"
           "\n"
           "Try:\n"
           "  export KUBECONFIG=%s/kubeconfig\n"
           "  kubectl get nodes                  # or: corral get nodes\n"
           "  corral apply -f %s && corral get pods -w\n"
           "\n"
           "Ctrl-C stops everything; `corral up` with the same --data-dir resumes.\n\n",
           p->dir, p->dir, QUICKSTART_SAMPLE);
    fflush(stdout);
}

static void init_sup(corral__sup_t *s, const corral_up_plan_t *p, const corral_up_opts_t *o,
                     const char *exe)
{
    memset(s, 0, sizeof(*s));
    s->exe = exe;
    s->n = p->ncomps;
    s->kids = corral_calloc(p->ncomps, sizeof(*s->kids));
    s->log_max = o->log_max_bytes > 0 ? o->log_max_bytes : LOG_MAX_DEFAULT;
    s->stop_timeout_s = o->stop_timeout_s > 0 ? o->stop_timeout_s : 15;
    sigemptyset(&s->sigs);
    sigaddset(&s->sigs, SIGINT);
    sigaddset(&s->sigs, SIGTERM);
    sigaddset(&s->sigs, SIGHUP);
    sigaddset(&s->sigs, SIGCHLD);
    for (size_t i = 0; i < p->ncomps; i++) {
        corral__child_t *k = &s->kids[i];
        k->comp = &p->comps[i];
        snprintf(k->log, sizeof(k->log), "%s/logs/%s.log", p->dir, k->comp->name);
        k->missing = i > 0 && !has_command(exe, k->comp->command);
        if (k->missing)
            fprintf(stderr, "corral up: %-18s skipped: this build has no `corral %s`\n",
                    k->comp->name, k->comp->command);
    }
}

/* Start the API server, RBAC, the rest; then supervise until a signal.
 * Returns the exit status. */
static int supervise(corral__sup_t *s, const corral_up_plan_t *p, const corral_up_opts_t *o)
{
    corral_client_t *c = admin_client(p, p->dir);
    int rc = 0;
    int sig = start_api(s, p, c, o->ready_timeout_s > 0 ? o->ready_timeout_s : 60);
    if (sig == 0 && apply_rbac(c) != 0)
        sig = 1;
    for (size_t i = 1; i < s->n && sig == 0; i++) {
        if (!s->kids[i].missing && corral__up_spawn(s, &s->kids[i]) != 0)
            sig = 1;
    }
    if (sig == 0)
        sig = wait_nodes(s, p, c);
    if (sig == 0) {
        const char *profile = o->sim_profile ? o->sim_profile : "h100-sxm-8";
        if (o->gpus && !strncmp(o->gpus, "sim:", 4))
            profile = o->gpus + 4;
        banner(s, p, profile);
    }
    while (sig == 0) {
        corral__up_reap(s, NULL);
        corral__up_tick(s);
        sig = corral__up_wait(s, 1.0);
    }
    if (sig == 1)
        rc = CORRAL_EIO;
    else
        fprintf(stderr,
                "corral up: %s: stopping agents, then scheduler and controller, then the "
                "API server\n",
                sig == SIGINT   ? "SIGINT"
                : sig == SIGHUP ? "SIGHUP"
                                : "SIGTERM");
    corral__up_stop_all(s);
    corral_client_free(c);
    return rc;
}

/* A port free on 127.0.0.1 now (the kernel's choice), or 0. It is free
 * again when the component binds it a moment later; the supervisor's
 * restarts keep it. */
static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return 0;
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(sa);
    int port = 0;
    if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
        getsockname(fd, (struct sockaddr *)&sa, &len) == 0)
        port = ntohs(sa.sin_port);
    close(fd);
    return port;
}

int corral_up_run(const corral_up_opts_t *given, const char *exe)
{
    char err[8192] = "";
    corral_up_plan_t p;
    corral_up_opts_t opts = *given;
    const corral_up_opts_t *o = &opts;
    if (!opts.scheduler_metrics_port)
        opts.scheduler_metrics_port = free_port();
    if (!opts.controller_metrics_port)
        opts.controller_metrics_port = free_port();
    if (!opts.router_metrics_port)
        opts.router_metrics_port = free_port();
    bool auto_gpus = !o->gpus || !strcmp(o->gpus, "auto");
    if (corral_up_plan(o, auto_gpus && probe_nvml(), &p, err, sizeof(err)) != 0) {
        fprintf(stderr, "corral up: %s\n", err);
        corral_up_plan_fini(&p);
        return 2;
    }
    int lock = -1;
    if (mkdirs(&p, err, sizeof(err)) != 0 || (lock = take_lock(&p)) < 0 ||
        prepare(&p, err, sizeof(err)) != 0) {
        if (*err)
            fprintf(stderr, "corral up: %s\n", err);
        if (lock >= 0)
            close(lock);
        corral_up_plan_fini(&p);
        return 1;
    }
    if (corral_up_endpoints_write(&p, err, sizeof(err)) != 0)
        fprintf(stderr, "corral up: %s (continuing)\n", err);
    corral__sup_t s;
    init_sup(&s, &p, o, exe);
    /* Blocked before anything starts a thread (libcurl's resolver): only
     * sigtimedwait takes them. */
    sigprocmask(SIG_BLOCK, &s.sigs, NULL);
    int rc = supervise(&s, &p, o);
    fprintf(stderr, "corral up: %s\n", rc == 0 ? "stopped" : "failed; everything stopped");
    corral_free(s.kids);
    close(lock);
    corral_up_plan_fini(&p);
    return rc == 0 ? 0 : 1;
}
