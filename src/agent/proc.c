/*
 * The process runtime: each container instance runs under a shim
 * (`corral agent-shim`, shim.c), spawned with posix_spawn in a new session
 * (so the agent never does anything between fork and exec), with the
 * container's environment. The shim starts the workload in its own process
 * group (and cgroup when cgroup v2 allows), copies its output to the log
 * file, and records what happened in files the agent reads:
 *
 *   ROOT/pods/<uid>/                  the working directory (unless workingDir)
 *   ROOT/pods/<uid>/.corral/pod       "namespace name" of the pod
 *   ROOT/pods/<uid>/.corral/<c>.state the current instance: pids, start times,
 *                                     and once it ended its exit code
 *   ROOT/logs/<ns>_<pod>_<uid>/<c>/<N>.log   output of instance N (restartCount)
 *   ROOT/logs/<ns>_<pod>_<uid>/<c>/<N>.exit  its exit code, once it ended
 *
 * Because everything is in files and the shim outlives the agent, an agent
 * that restarts adopts what runs (same pid and /proc start time) and reports
 * what ended or vanished meanwhile.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent/agent_int.h"
#include "corral/json.h"

#define STOP_MARKER "stopped-by-agent-shutdown"

uint64_t corral__proc_starttime(pid_t pid)
{
    if (pid <= 0)
        return 0;
    char path[64], buf[1024];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    const char *p = strrchr(buf, ')');
    if (!p)
        return 0;
    /* fields after comm: state(3) ... starttime(22) */
    int field = 2;
    for (p++; *p && field < 21; p++)
        if (*p == ' ')
            field++;
    return strtoull(p, NULL, 10);
}

void corral__proc_init(corral__proc_t *pr, const char *root, const corral_gpu_inventory_t *inv,
                       int64_t cpu_milli, int64_t memory, corral_client_t *c)
{
    memset(pr, 0, sizeof(*pr));
    pr->root = root;
    pr->ngpu = inv ? inv->n : 0;
    pr->uuids = corral_calloc(pr->ngpu > 0 ? (size_t)pr->ngpu : 1, sizeof(char *));
    for (int i = 0; i < pr->ngpu; i++)
        pr->uuids[i] = inv->gpus[i].uuid;
    pr->node_cpu_milli = cpu_milli;
    pr->node_memory = memory;
    pr->c = c;
    char buf[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
    buf[n > 0 ? n : 0] = '\0';
    pr->self_exe = corral_strdup(buf);
    char *slash = strrchr(buf, '/');
    if (slash)
        *slash = '\0';
    pr->self_dir = corral_strdup(slash ? buf : "");
    pr->sim_gpus = inv && inv->n > 0 && strcmp(inv->source, "nvml") != 0;
    char why[256] = "";
    pr->cgroups = corral__cgroup_probe(&pr->cgroup_base, why, sizeof(why));
    if (pr->cgroups)
        corral__log("cgroup v2: limits applied under %s", pr->cgroup_base);
    else
        corral__log("cgroup v2 limits not applied: %s", why);
}

void corral__proc_fini(corral__proc_t *pr)
{
    corral_free(pr->self_exe);
    corral_free(pr->self_dir);
    corral_free(pr->kids);
    corral_free(pr->uuids);
    corral_free(pr->cgroup_base);
    memset(pr, 0, sizeof(*pr));
}

const char *corral__pod_dir(corral_arena_t *a, const char *root, const char *uid)
{
    return corral_arena_printf(a, "%s/pods/%s", root, uid);
}

const char *corral__pod_gpu_load_path(corral_arena_t *a, const char *root, const char *uid)
{
    return corral_arena_printf(a, "%s/pods/%s/.corral/gpu-load", root, uid);
}

const char *corral__pod_logdir(corral_arena_t *a, const char *root, const corral__pod_t *p)
{
    return corral_arena_printf(a, "%s/logs/%s_%s_%s", root, p->ns, p->name, p->uid);
}

static const char *state_path(corral_arena_t *a, const char *root, const char *uid, const char *ctr)
{
    return corral_arena_printf(a, "%s/pods/%s/.corral/%s.state", root, uid, ctr);
}

/* --- the state file: key=value lines ------------------------------------------------------ */

typedef struct state {
    bool ok, ended;
    int instance, exit_code;
    pid_t shim_pid, pid;
    uint64_t shim_start, pid_start;
    int64_t started_us, finished_us;
    char reason[32], message[200], cgroup[512];
} state_t;

static void state_read(const char *path, state_t *s)
{
    memset(s, 0, sizeof(*s));
    FILE *fp = fopen(path, "re");
    if (!fp)
        return;
    char line[1024];
    while (fgets(line, sizeof(line), fp)) {
        line[strcspn(line, "\n")] = '\0';
        char *eq = strchr(line, '=');
        if (!eq)
            continue;
        *eq = '\0';
        const char *k = line, *v = eq + 1;
        if (!strcmp(k, "instance"))
            s->instance = (int)strtol(v, NULL, 10);
        else if (!strcmp(k, "shim_pid"))
            s->shim_pid = (pid_t)strtol(v, NULL, 10);
        else if (!strcmp(k, "shim_start"))
            s->shim_start = strtoull(v, NULL, 10);
        else if (!strcmp(k, "pid"))
            s->pid = (pid_t)strtol(v, NULL, 10);
        else if (!strcmp(k, "pid_start"))
            s->pid_start = strtoull(v, NULL, 10);
        else if (!strcmp(k, "started_us"))
            s->started_us = strtoll(v, NULL, 10);
        else if (!strcmp(k, "finished_us"))
            s->finished_us = strtoll(v, NULL, 10);
        else if (!strcmp(k, "exit")) {
            s->exit_code = (int)strtol(v, NULL, 10);
            s->ended = true;
        } else if (!strcmp(k, "reason"))
            snprintf(s->reason, sizeof(s->reason), "%s", v);
        else if (!strcmp(k, "message"))
            snprintf(s->message, sizeof(s->message), "%s", v);
        else if (!strcmp(k, "cgroup"))
            snprintf(s->cgroup, sizeof(s->cgroup), "%s", v);
    }
    fclose(fp);
    s->ok = true;
}

/* --- starting ----------------------------------------------------------------------------------
 */

static const corral_val_t *api_fetch(void *ctx, corral_arena_t *a, const char *ns, const char *kind,
                                     const char *name, char *err, size_t errlen)
{
    corral__proc_t *pr = ctx;
    char path[1024];
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/%s/%s", ns, kind, name);
    corral_client_resp_t r;
    corral_client_resp_init(&r);
    corral_val_t *v = NULL;
    if (corral_client_request(pr->c, "GET", path, NULL, NULL, 0, &r) != 0) {
        snprintf(err, errlen, "reading %s %s/%s: %s", kind, ns, name, r.error);
    } else if (r.code == 200) {
        corral_json_err_t je;
        if (corral_json_parse(a, r.body.p, r.body.len, &v, &je) != 0)
            v = NULL;
    } else if (r.code != 404) {
        snprintf(err, errlen, "reading %s %s/%s: HTTP %ld", kind, ns, name, r.code);
    }
    corral_client_resp_fini(&r);
    return v;
}

static const corral_val_t *ctr_raw(const corral__pod_t *p, const corral__ctr_t *c)
{
    const corral_val_t *s =
        corral_val_dig(p->ev->obj->raw, c->init ? "spec.initContainers" : "spec.containers");
    if (!s || s->kind != CORRAL_VAL_SEQ || (size_t)c->idx >= s->n)
        return NULL;
    return s->items[c->idx];
}

static void no_command(corral__pod_t *p, corral__ctr_t *c, int64_t now)
{
    snprintf(p->freason, sizeof(p->freason), "NoCommand");
    snprintf(p->fmsg, sizeof(p->fmsg),
             "container %s has no command: the process runtime runs commands, not images; "
             "give the container a command (and args), or run the pod on a Kubernetes "
             "cluster",
             c->name);
    c->st = CORRAL__C_TERMINATED;
    c->term = (corral__term_t){.set = true, .exit_code = 128, .finished_us = now};
    snprintf(c->term.reason, sizeof(c->term.reason), "StartError");
    snprintf(c->term.message, sizeof(c->term.message), "no command (processes, not images)");
}

/* The cgroup for this container, when cgroup v2 is usable; "" otherwise. */
static const char *make_cgroup(corral__proc_t *pr, corral_arena_t *a, const corral__pod_t *p,
                               const corral_val_t *ctr)
{
    if (!pr->cgroups)
        return "";
    const corral_val_t *lim = corral_val_dig(ctr, "resources.limits");
    int64_t cpu = 0, mem = 0;
    const char *q = corral_val_get_str(lim, "cpu");
    corral_qty_t qty;
    if (q && corral_qty_parse(q, strlen(q), &qty, NULL, 0) == 0)
        corral_qty_milli(&qty, &cpu);
    q = corral_val_get_str(lim, "memory");
    if (q && corral_qty_parse(q, strlen(q), &qty, NULL, 0) == 0)
        corral_qty_value(&qty, &mem);
    const char *ctr_name = corral_val_get_str(ctr, "name");
    char *path = NULL;
    const char *name = corral_arena_printf(a, "%s/%s", p->uid, ctr_name ? ctr_name : "c");
    if (corral__cgroup_make(pr->cgroup_base, name, cpu, mem, &path) != 0) {
        corral__log("pod %s/%s: cannot make cgroup %s: running without limits", p->ns, p->name,
                    name);
        return "";
    }
    const char *out = corral_arena_strdup(a, path);
    corral_free(path);
    return out;
}

void corral__spawnattr_init(posix_spawnattr_t *at, short flags)
{
    posix_spawnattr_init(at);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    sigdelset(&all, SIGKILL);
    sigdelset(&all, SIGSTOP);
    posix_spawnattr_setsigmask(at, &none);
    posix_spawnattr_setsigdefault(at, &all);
    posix_spawnattr_setflags(at, (short)(flags | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF));
}

static int spawn_shim(corral__proc_t *pr, char **argv, char **envp, pid_t *pid)
{
    posix_spawnattr_t at;
    corral__spawnattr_init(&at, POSIX_SPAWN_SETSID);
    int rc = posix_spawn(pid, pr->self_exe, NULL, &at, argv, envp);
    posix_spawnattr_destroy(&at);
    return rc;
}

int corral__proc_start(corral__proc_t *pr, corral__pod_t *p, corral__ctr_t *c, int64_t now_us)
{
    const corral_val_t *ctr = ctr_raw(p, c);
    if (!ctr)
        return CORRAL_EINVAL;
    corral_arena_t a;
    corral_arena_init(&a);
    const char *pdir = corral__pod_dir(&a, pr->root, p->uid);
    corral__mkdirs(corral_arena_printf(&a, "%s/.corral", pdir));
    corral__envctx_t e = {.pod = p->ev->obj->raw,
                          .ctr = ctr,
                          .host_ip = "127.0.0.1",
                          .pod_ip = corral__pod_ip(p, "127.0.0.1"),
                          .bin_dir = pr->self_dir,
                          .gpu_load = p->gpu_load,
                          .model_dir = p->model_dir,
                          .gpu_ids = p->gpu_ids,
                          .uuids = pr->uuids,
                          .ngpu = pr->ngpu,
                          .node_cpu_milli = pr->node_cpu_milli,
                          .node_memory = pr->node_memory,
                          .home = pdir,
                          .fetch = api_fetch,
                          .fetch_ctx = pr};
    char **envp = NULL, **argv = NULL, err[190];
    int rc = corral__env_build(&a, &e, &envp, err, sizeof(err));
    if (rc) {
        c->st = CORRAL__C_WAITING;
        snprintf(c->wreason, sizeof(c->wreason), "CreateContainerConfigError");
        snprintf(c->wmsg, sizeof(c->wmsg), "%s", err);
        goto out;
    }
    if (corral__argv_build(&a, ctr, envp, &argv) != 0) {
        no_command(p, c, now_us);
        rc = CORRAL_EINVAL;
        goto out;
    }
    corral__argv_model_dir(&a, argv, p->model_dir);
    int n = c->instance + 1;
    const char *wd = corral_val_get_str(ctr, "workingDir");
    const char *ldir =
        corral_arena_printf(&a, "%s/%s", corral__pod_logdir(&a, pr->root, p), c->name);
    corral__mkdirs(ldir);
    /* The new log exists before the oldest goes, so that a reader always
     * finds the current instance and the previous one. */
    int lfd =
        open(corral_arena_printf(&a, "%s/%d.log", ldir, n), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (lfd >= 0)
        close(lfd);
    if (n >= 2) { /* keep the current and the previous instance */
        unlink(corral_arena_printf(&a, "%s/%d.log", ldir, n - 2));
        unlink(corral_arena_printf(&a, "%s/%d.exit", ldir, n - 2));
    }
    const char *cg = make_cgroup(pr, &a, p, ctr);
    const char *fixed[] = {pr->self_exe, "agent-shim",
                           "--log",      corral_arena_printf(&a, "%s/%d.log", ldir, n),
                           "--exit",     corral_arena_printf(&a, "%s/%d.exit", ldir, n),
                           "--state",    state_path(&a, pr->root, p->uid, c->name),
                           "--dir",      wd && *wd ? wd : pdir,
                           "--instance", corral_arena_printf(&a, "%d", n),
                           "--cgroup",   cg,
                           "--"};
    size_t nf = CORRAL_ARRAY_LEN(fixed), na = 0;
    while (argv[na])
        na++;
    char **sargv = corral_arena_alloc(&a, (nf + na + 1) * sizeof(char *));
    for (size_t i = 0; i < nf; i++)
        sargv[i] = (char *)fixed[i];
    for (size_t i = 0; i < na; i++)
        sargv[nf + i] = argv[i];
    pid_t pid = 0;
    rc = spawn_shim(pr, sargv, envp, &pid);
    if (rc == 0) {
        corral_grow((void **)&pr->kids, &pr->capkids, pr->nkids + 1, sizeof(pid_t));
        pr->kids[pr->nkids++] = pid;
    }
    if (rc != 0) {
        c->st = CORRAL__C_WAITING;
        snprintf(c->wreason, sizeof(c->wreason), "RunContainerError");
        snprintf(c->wmsg, sizeof(c->wmsg), "cannot start the shim: %s", strerror(rc));
        rc = CORRAL_EIO;
        goto out;
    }
    c->instance = n;
    c->restarts = n;
    c->st = CORRAL__C_RUNNING;
    c->shim_pid = pid;
    c->shim_start = corral__proc_starttime(pid);
    c->pid = 0;
    c->pid_start = 0;
    c->started_us = now_us;
    c->wreason[0] = c->wmsg[0] = '\0';
    c->term.set = false;
    c->handled = false;
    c->rs = (corral__probe_state_t){0};
    corral__ctr_set_env(c, envp);
    snprintf(c->cid, sizeof(c->cid), "corral://%d", (int)pid);
out:
    corral_arena_fini(&a);
    return rc;
}

/* --- watching ----------------------------------------------------------------------------------
 */

static void fill_term(corral__ctr_t *c, const state_t *s, uint64_t oom)
{
    c->st = CORRAL__C_TERMINATED;
    c->term = (corral__term_t){.set = true,
                               .exit_code = s->exit_code,
                               .started_us = s->started_us ? s->started_us : c->started_us,
                               .finished_us = s->finished_us};
    snprintf(c->term.cid, sizeof(c->term.cid), "%s", c->cid);
    const char *reason = s->reason[0] ? s->reason : s->exit_code == 0 ? "Completed" : "Error";
    if (oom > 0 && s->exit_code != 0)
        reason = "OOMKilled";
    snprintf(c->term.reason, sizeof(c->term.reason), "%s", reason);
    snprintf(c->term.message, sizeof(c->term.message), "%s", s->message);
}

static void lost(corral__ctr_t *c, int64_t now)
{
    c->st = CORRAL__C_TERMINATED;
    c->term = (corral__term_t){
        .set = true, .exit_code = 137, .started_us = c->started_us, .finished_us = now};
    snprintf(c->term.cid, sizeof(c->term.cid), "%s", c->cid);
    snprintf(c->term.reason, sizeof(c->term.reason), "ContainerStatusUnknown");
    snprintf(c->term.message, sizeof(c->term.message),
             "The container could not be located when the pod was terminated");
}

void corral__proc_poll(corral__proc_t *pr, corral__pod_t *p, corral__ctr_t *c, int64_t now_us)
{
    if (c->st != CORRAL__C_RUNNING)
        return;
    corral_arena_t a;
    corral_arena_init(&a);
    const char *sp = state_path(&a, pr->root, p->uid, c->name);
    state_t s;
    if (!c->pid) { /* the shim writes it right after starting the workload */
        state_read(sp, &s);
        if (s.ok && s.instance == c->instance && s.pid > 0) {
            c->pid = s.pid;
            c->pid_start = s.pid_start;
        }
    }
    const char *exitp = corral_arena_printf(
        &a, "%s/%s/%d.exit", corral__pod_logdir(&a, pr->root, p), c->name, c->instance);
    bool ended = access(exitp, F_OK) == 0;
    if (!ended && corral__proc_starttime(c->shim_pid) != c->shim_start &&
        (!c->pid || corral__proc_starttime(c->pid) != c->pid_start)) {
        ended = access(exitp, F_OK) == 0; /* the shim writes it before it exits */
        if (!ended) {
            corral__log("pod %s/%s container %s: shim and process are gone", p->ns, p->name,
                        c->name);
            lost(c, now_us);
        }
    }
    if (ended) {
        state_read(sp, &s);
        if (s.ok && s.ended && s.instance == c->instance) {
            fill_term(c, &s, s.cgroup[0] ? corral__cgroup_ooms(s.cgroup) : 0);
            if (s.cgroup[0])
                corral__cgroup_remove(s.cgroup);
        } else {
            lost(c, now_us);
        }
    }
    corral_arena_fini(&a);
}

void corral__proc_signal(corral__proc_t *pr, corral__pod_t *p, corral__ctr_t *c, int sig)
{
    if (c->st != CORRAL__C_RUNNING)
        return;
    if (!c->pid) {
        corral_arena_t a;
        corral_arena_init(&a);
        state_t s;
        state_read(state_path(&a, pr->root, p->uid, c->name), &s);
        if (s.ok && s.instance == c->instance && s.pid > 0) {
            c->pid = s.pid;
            c->pid_start = s.pid_start;
        }
        corral_arena_fini(&a);
    }
    if (c->pid > 0 && corral__proc_starttime(c->pid) == c->pid_start)
        kill(-c->pid, sig);
    else if (c->shim_pid > 0 && corral__proc_starttime(c->shim_pid) == c->shim_start)
        kill(c->shim_pid, SIGTERM); /* the shim forwards it to the workload's group */
}

void corral__proc_reap(corral__proc_t *pr)
{
    for (size_t i = 0; i < pr->nkids;) {
        pid_t r = waitpid(pr->kids[i], NULL, WNOHANG);
        if (r == pr->kids[i] || (r < 0 && errno == ECHILD))
            pr->kids[i] = pr->kids[--pr->nkids];
        else
            i++;
    }
}

/* --- adoption and cleanup -------------------------------------------------------------------- */

void corral__proc_record_pod(corral__proc_t *pr, const corral__pod_t *p)
{
    corral_arena_t a;
    corral_arena_init(&a);
    const char *dir = corral_arena_printf(&a, "%s/pods/%s/.corral", pr->root, p->uid);
    corral__mkdirs(dir);
    const char *id = corral_arena_printf(&a, "%s %s\n", p->ns, p->name);
    corral__agent_write_file(corral_arena_printf(&a, "%s/pod", dir), id, strlen(id));
    corral_arena_fini(&a);
}

void corral__proc_mark_stopped(corral__proc_t *pr, const corral__pod_t *p)
{
    corral_buf_t b;
    corral_buf_init(&b);
    for (size_t i = 0; i < p->nctrs; i++)
        if (p->ctrs[i].st == CORRAL__C_RUNNING)
            corral_buf_printf(&b, "%s\n", p->ctrs[i].name);
    char path[4096];
    snprintf(path, sizeof(path), "%s/pods/%s/.corral/" STOP_MARKER, pr->root, p->uid);
    corral__agent_write_file(path, corral_buf_str(&b), b.len);
    corral_buf_fini(&b);
}

static bool listed(const char *text, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = text; p && *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        if (len == n && !strncmp(p, name, n))
            return true;
        p = nl ? nl + 1 : NULL;
    }
    return false;
}

bool corral__proc_adopt(corral__proc_t *pr, corral__pod_t *p, int64_t now_us)
{
    corral_arena_t a;
    corral_arena_init(&a);
    const char *dir = corral_arena_printf(&a, "%s/pods/%s/.corral", pr->root, p->uid);
    struct stat st;
    bool had = stat(dir, &st) == 0;
    char stopped[4096] = "";
    const char *marker = corral_arena_printf(&a, "%s/" STOP_MARKER, dir);
    FILE *fp = had ? fopen(marker, "re") : NULL;
    if (fp) {
        size_t n = fread(stopped, 1, sizeof(stopped) - 1, fp);
        stopped[n] = '\0';
        fclose(fp);
        unlink(marker);
    }
    for (size_t i = 0; had && i < p->nctrs; i++) {
        corral__ctr_t *c = &p->ctrs[i];
        state_t s;
        state_read(state_path(&a, pr->root, p->uid, c->name), &s);
        if (!s.ok)
            continue; /* never started: starts now */
        c->instance = c->restarts = s.instance;
        c->shim_pid = s.shim_pid;
        c->shim_start = s.shim_start;
        c->pid = s.pid;
        c->pid_start = s.pid_start;
        c->started_us = s.started_us;
        snprintf(c->cid, sizeof(c->cid), "corral://%d", (int)s.shim_pid);
        bool alive = (s.pid && corral__proc_starttime(s.pid) == s.pid_start) ||
                     (s.shim_pid && corral__proc_starttime(s.shim_pid) == s.shim_start);
        if (s.ended) {
            fill_term(c, &s, 0);
        } else if (alive) {
            c->st = CORRAL__C_RUNNING;
            corral__log("pod %s/%s container %s: adopted (pid %d)", p->ns, p->name, c->name,
                        (int)s.pid);
            continue;
        } else {
            lost(c, now_us);
        }
        c->agent_stop = listed(stopped, c->name);
        if (c->agent_stop)
            snprintf(c->term.message, sizeof(c->term.message), "stopped by agent shutdown");
    }
    corral_arena_fini(&a);
    return had;
}

static void kill_state_files(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        size_t n = strlen(de->d_name);
        if (n < 7 || strcmp(de->d_name + n - 6, ".state") != 0)
            continue;
        char path[4400];
        snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
        state_t s;
        state_read(path, &s);
        if (s.ok && !s.ended && s.pid && corral__proc_starttime(s.pid) == s.pid_start)
            kill(-s.pid, SIGKILL);
        if (s.cgroup[0]) {
            corral__cgroup_kill(s.cgroup);
            corral__cgroup_remove(s.cgroup);
        }
    }
    closedir(d);
}

void corral__proc_purge(corral__proc_t *pr, const char *uid)
{
    corral_arena_t a;
    corral_arena_init(&a);
    const char *dir = corral_arena_printf(&a, "%s/pods/%s/.corral", pr->root, uid);
    kill_state_files(dir);
    char id[600] = "";
    FILE *fp = fopen(corral_arena_printf(&a, "%s/pod", dir), "re");
    if (fp) {
        if (!fgets(id, sizeof(id), fp))
            id[0] = '\0';
        fclose(fp);
    }
    char ns[300], name[300];
    if (sscanf(id, "%299s %299s", ns, name) == 2)
        corral__rmtree(corral_arena_printf(&a, "%s/logs/%s_%s_%s", pr->root, ns, name, uid));
    corral__rmtree(corral_arena_printf(&a, "%s/pods/%s", pr->root, uid));
    if (pr->cgroups)
        corral__cgroup_remove(corral_arena_printf(&a, "%s/%s", pr->cgroup_base, uid));
    corral_arena_fini(&a);
}

void corral__proc_cleanup(corral__proc_t *pr, const corral__pod_t *p)
{
    corral_arena_t a;
    corral_arena_init(&a);
    corral__rmtree(corral__pod_logdir(&a, pr->root, p));
    corral__rmtree(corral__pod_dir(&a, pr->root, p->uid));
    if (pr->cgroups)
        corral__cgroup_remove(corral_arena_printf(&a, "%s/%s", pr->cgroup_base, p->uid));
    corral_arena_fini(&a);
}
