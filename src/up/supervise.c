/*
 * The supervisor of `corral up`: one process tree. Each component is a
 * child started by fork and exec of the corral binary, in its own process
 * group (so a terminal's Ctrl-C reaches only `corral up`, which then stops
 * things in order), with PR_SET_PDEATHSIG SIGKILL (so a kill -9 of `corral
 * up` takes every component with it) and its stdout and stderr appended to
 * DIR/logs/NAME.log, copied to NAME.log.1 and truncated past a size cap.
 *
 * The parent keeps SIGINT, SIGTERM, SIGHUP and SIGCHLD blocked and takes
 * them with sigtimedwait, so all of this runs as ordinary code on one
 * thread: no handler, no race. A child that exits unexpectedly is started
 * again after a backoff of 1 s doubling to 30 s, reset once it has stayed up
 * for 60 s.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "corral/common.h"
#include "up/up_int.h"

#define BACKOFF_MAX_S 30
#define STABLE_S      60

double corral__up_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* In the child, between fork and exec: only async-signal-safe calls. */
static void child_exec(const corral__sup_t *s, const corral__child_t *c, int logfd, pid_t parent)
{
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) /* the parent died before prctl took effect */
        _exit(127);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) {
        dup2(devnull, 0);
        close(devnull);
    }
    dup2(logfd, 1);
    dup2(logfd, 2);
    close(logfd);
    execv(s->exe, c->comp->argv);
    static const char msg[] = "corral up: exec of the corral binary failed\n";
    (void)!write(2, msg, sizeof(msg) - 1);
    _exit(127);
}

int corral__up_spawn(corral__sup_t *s, corral__child_t *c)
{
    int logfd = open(c->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (logfd < 0) {
        fprintf(stderr, "corral up: cannot open %s: %s\n", c->log, strerror(errno));
        return CORRAL_EIO;
    }
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0)
        child_exec(s, c, logfd, parent);
    close(logfd);
    if (pid < 0) {
        fprintf(stderr, "corral up: cannot start %s: %s\n", c->comp->name, strerror(errno));
        return CORRAL_EIO;
    }
    c->pid = pid;
    c->started = corral__up_now();
    c->restart_at = 0;
    fprintf(stderr, "corral up: %-18s started (pid %ld, log %s)\n", c->comp->name, (long)pid,
            c->log);
    return 0;
}

static void describe_exit(int status, char *out, size_t len)
{
    if (WIFEXITED(status))
        snprintf(out, len, "exited with status %d", WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        snprintf(out, len, "killed by signal %d (%s)", WTERMSIG(status),
                 strsignal(WTERMSIG(status)));
    else
        snprintf(out, len, "stopped (status 0x%x)", status);
}

size_t corral__up_reap(corral__sup_t *s, bool *api_died)
{
    size_t n = 0;
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        corral__child_t *c = NULL;
        for (size_t i = 0; i < s->n && !c; i++)
            c = s->kids[i].pid == pid ? &s->kids[i] : NULL;
        if (!c)
            continue;
        n++;
        c->pid = 0;
        double now = corral__up_now(), up = now - c->started;
        char how[96];
        describe_exit(status, how, sizeof(how));
        if (c->comp->tier == CORRAL_UP_TIER_API && api_died)
            *api_died = true;
        if (s->stopping) {
            fprintf(stderr, "corral up: %-18s stopped (%s)\n", c->comp->name, how);
            continue;
        }
        if (up >= STABLE_S || c->backoff == 0)
            c->backoff = 1;
        else
            c->backoff = c->backoff * 2 > BACKOFF_MAX_S ? BACKOFF_MAX_S : c->backoff * 2;
        c->restart_at = now + c->backoff;
        fprintf(stderr, "corral up: %-18s %s after %.1fs; restarting in %ds (see %s)\n",
                c->comp->name, how, up, c->backoff, c->log);
    }
    return n;
}

/* Keep a log under the cap: copy it to NAME.log.1 and truncate it (the
 * child appends, so it goes on at the start of the emptied file). */
static void rotate(const corral__child_t *c, long cap)
{
    struct stat st;
    if (stat(c->log, &st) != 0 || st.st_size <= cap)
        return;
    char old[4200];
    snprintf(old, sizeof(old), "%s.1", c->log);
    int in = open(c->log, O_RDONLY | O_CLOEXEC);
    int out = open(old, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    char buf[65536];
    ssize_t k;
    while (in >= 0 && out >= 0 && (k = read(in, buf, sizeof(buf))) > 0) {
        if (write(out, buf, (size_t)k) != k)
            break;
    }
    if (in >= 0)
        close(in);
    if (out >= 0)
        close(out);
    if (truncate(c->log, 0) != 0)
        fprintf(stderr, "corral up: cannot truncate %s: %s\n", c->log, strerror(errno));
}

void corral__up_tick(corral__sup_t *s)
{
    double now = corral__up_now();
    for (size_t i = 0; i < s->n; i++) {
        corral__child_t *c = &s->kids[i];
        if (!s->stopping && !c->pid && !c->missing && c->restart_at > 0 && now >= c->restart_at)
            corral__up_spawn(s, c);
        rotate(c, s->log_max);
    }
}

int corral__up_wait(corral__sup_t *s, double timeout)
{
    if (timeout < 0)
        timeout = 0;
    struct timespec ts = {(time_t)timeout, (long)((timeout - (double)(time_t)timeout) * 1e9)};
    siginfo_t info;
    int sig = sigtimedwait(&s->sigs, &info, &ts);
    if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP)
        return sig;
    return 0;
}

/* Stop the children of one tier: SIGTERM, wait up to the timeout (a
 * second signal cuts it short), then SIGKILL their process groups. */
static void stop_tier(corral__sup_t *s, corral_up_tier_t tier)
{
    size_t running = 0;
    for (size_t i = 0; i < s->n; i++) {
        corral__child_t *c = &s->kids[i];
        c->restart_at = 0;
        if (c->comp->tier == tier && c->pid) {
            kill(c->pid, SIGTERM);
            running++;
        }
    }
    double deadline = corral__up_now() + s->stop_timeout_s;
    while (running > 0) {
        running -= corral__up_reap(s, NULL);
        if (running == 0)
            break;
        double left = deadline - corral__up_now();
        if (left <= 0)
            break;
        if (corral__up_wait(s, left < 0.2 ? left : 0.2) != 0) {
            fprintf(stderr, "corral up: second signal: killing what is left\n");
            s->stop_timeout_s = 0;
            break;
        }
    }
    for (size_t i = 0; i < s->n; i++) {
        corral__child_t *c = &s->kids[i];
        if (c->comp->tier != tier || !c->pid)
            continue;
        fprintf(stderr, "corral up: %-18s did not stop within %ds: SIGKILL\n", c->comp->name,
                s->stop_timeout_s);
        kill(-c->pid, SIGKILL);
        kill(c->pid, SIGKILL);
        int status;
        if (waitpid(c->pid, &status, 0) == c->pid)
            c->pid = 0;
    }
}

void corral__up_stop_all(corral__sup_t *s)
{
    s->stopping = true;
    stop_tier(s, CORRAL_UP_TIER_AGENT);
    stop_tier(s, CORRAL_UP_TIER_CONTROL);
    stop_tier(s, CORRAL_UP_TIER_API);
}
