/*
 * The shim: `corral agent-shim --log F --exit F --state F --dir D
 * --instance N [--cgroup DIR] -- COMMAND ARGS...`, a small single-threaded
 * supervisor for one container instance, run by the agent with the
 * container's environment in a session of its own (so it survives the agent
 * and no terminal signal reaches it). It:
 *   - starts COMMAND in a new process group (in the cgroup when given), with
 *     stdin /dev/null and stdout+stderr into a pipe;
 *   - writes the state file (its own pid and start time, the workload's,
 *     the instance) at once, so that the agent can signal the group and adopt
 *     it after a restart;
 *   - appends the output to the log file, up to CORRAL__AGENT_LOG_CAP bytes
 *     per instance; past it one notice line is written and the rest dropped
 *     (the pipe keeps being drained, so the workload never blocks);
 *   - when the workload's main process ends, SIGKILLs what is left of its
 *     process group (and cgroup), as a container's end takes its processes
 *     with it, then records the exit code (128+signal when killed) in the
 *     state file and in the .exit file the log server reads;
 *   - on SIGTERM forwards SIGTERM to the workload's group.
 * An exec that fails (no such file) ends the instance with 128 and
 * reason StartError, its error in the log.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent/agent_int.h"

typedef struct shim {
    const char *log, *exit, *state, *dir, *cgroup;
    int instance;
    char **argv;
    pid_t pid;
    uint64_t pid_start;
    int64_t started_us;
    int logfd;
    size_t logged;
    bool capped;
} shim_t;

static volatile sig_atomic_t got_term;

static void on_term(int sig)
{
    (void)sig;
    got_term = 1;
}

static void write_state(const shim_t *s, const char *tail)
{
    char buf[2048];
    int n =
        snprintf(buf, sizeof(buf),
                 "instance=%d\nshim_pid=%d\nshim_start=%llu\npid=%d\npid_start=%llu\n"
                 "started_us=%lld\ncgroup=%s\n%s",
                 s->instance, (int)getpid(), (unsigned long long)corral__proc_starttime(getpid()),
                 (int)s->pid, (unsigned long long)s->pid_start, (long long)s->started_us,
                 s->cgroup ? s->cgroup : "", tail ? tail : "");
    if (n > 0)
        corral__agent_write_file(s->state, buf,
                                 (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

static void log_out(shim_t *s, const char *data, size_t n)
{
    if (s->capped || s->logfd < 0)
        return;
    if (s->logged + n > CORRAL__AGENT_LOG_CAP) {
        n = CORRAL__AGENT_LOG_CAP - s->logged;
        s->capped = true;
    }
    while (n > 0) {
        ssize_t w = write(s->logfd, data, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        s->logged += (size_t)w;
        data += w;
        n -= (size_t)w;
    }
    if (s->capped) {
        char msg[160];
        int m = snprintf(msg, sizeof(msg),
                         "\n[corral: log limit of %zu bytes reached; later output dropped]\n",
                         CORRAL__AGENT_LOG_CAP);
        if (m > 0 && write(s->logfd, msg, (size_t)m) < 0)
            s->logfd = -1;
    }
}

/* In the child, between fork and exec: the shim is single-threaded, so
 * ordinary calls are safe here. */
static void child(const shim_t *s, int out, int errw)
{
    setpgid(0, 0);
    if (s->cgroup && *s->cgroup) {
        char p[600];
        snprintf(p, sizeof(p), "%s/cgroup.procs", s->cgroup);
        int fd = open(p, O_WRONLY | O_CLOEXEC);
        if (fd >= 0) {
            if (write(fd, "0", 1) < 0) { /* runs without the cgroup */
            }
            close(fd);
        }
    }
    signal(SIGTERM, SIG_DFL);
    signal(SIGINT, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    signal(SIGPIPE, SIG_DFL);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) {
        dup2(devnull, 0);
        close(devnull);
    }
    dup2(out, 1);
    dup2(out, 2);
    close(out);
    int e = 0;
    if (chdir(s->dir) != 0)
        e = errno;
    else {
        execvp(s->argv[0], s->argv);
        e = errno;
    }
    if (write(errw, &e, sizeof(e)) < 0) {
    }
    _exit(127);
}

static int parse(shim_t *s, int argc, char **argv)
{
    static const struct option opts[] = {{"log", required_argument, NULL, 'l'},
                                         {"exit", required_argument, NULL, 'e'},
                                         {"state", required_argument, NULL, 's'},
                                         {"dir", required_argument, NULL, 'd'},
                                         {"instance", required_argument, NULL, 'i'},
                                         {"cgroup", required_argument, NULL, 'c'},
                                         {NULL, 0, NULL, 0}};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
        if (c == 'l')
            s->log = optarg;
        else if (c == 'e')
            s->exit = optarg;
        else if (c == 's')
            s->state = optarg;
        else if (c == 'd')
            s->dir = optarg;
        else if (c == 'i')
            s->instance = (int)strtol(optarg, NULL, 10);
        else if (c == 'c')
            s->cgroup = optarg;
        else
            return -1;
    }
    if (!s->log || !s->exit || !s->state || !s->dir || optind >= argc)
        return -1;
    s->argv = argv + optind;
    return 0;
}

/* Copy output until the main process ends; returns its wait status. */
static int supervise(shim_t *s, int rd)
{
    int status = 0;
    bool open_pipe = true;
    char buf[65536];
    for (;;) {
        if (got_term) {
            got_term = 0;
            kill(-s->pid, SIGTERM);
        }
        struct pollfd pfd = {.fd = rd, .events = POLLIN};
        int pr = poll(open_pipe ? &pfd : NULL, open_pipe ? 1 : 0, 100);
        if (pr > 0) {
            ssize_t n = read(rd, buf, sizeof(buf));
            if (n > 0)
                log_out(s, buf, (size_t)n);
            else if (n == 0 || (errno != EINTR && errno != EAGAIN))
                open_pipe = false;
        }
        pid_t w = waitpid(s->pid, &status, WNOHANG);
        if (w == s->pid)
            break;
        if (w < 0 && errno != EINTR)
            break;
    }
    /* What is already in the pipe belongs to this instance. */
    fcntl(rd, F_SETFL, O_NONBLOCK);
    for (int i = 0; open_pipe && i < 256; i++) {
        ssize_t n = read(rd, buf, sizeof(buf));
        if (n <= 0)
            break;
        log_out(s, buf, (size_t)n);
    }
    kill(-s->pid, SIGKILL);
    if (s->cgroup && *s->cgroup)
        corral__cgroup_kill(s->cgroup);
    return status;
}

int corral_agent_shim_main(int argc, char **argv)
{
    shim_t s = {.logfd = -1};
    if (parse(&s, argc, argv) != 0) {
        fprintf(stderr, "corral agent-shim: internal command of corral agent\n");
        return 2;
    }
    close_range(3, ~0U, 0);
    /* Not the agent's stdio: a supervisor reading the agent's output must
     * see it end when the agent does. The shim's own messages (rare) go to
     * STATE.log. */
    char own[4200];
    snprintf(own, sizeof(own), "%s.log", s.state);
    int fd = open(own, O_WRONLY | O_APPEND | O_CREAT, 0644), nul = open("/dev/null", O_RDWR);
    if (nul >= 0)
        dup2(nul, 0);
    if (fd >= 0 || nul >= 0) {
        dup2(fd >= 0 ? fd : nul, 1);
        dup2(fd >= 0 ? fd : nul, 2);
    }
    close_range(3, ~0U, 0);
    setsid();
    signal(SIGHUP, SIG_IGN);
    signal(SIGINT, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);
    struct sigaction sa = {.sa_handler = on_term};
    sigaction(SIGTERM, &sa, NULL);
    s.logfd = open(s.log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    int out[2], errp[2];
    if (pipe2(out, O_CLOEXEC) != 0 || pipe2(errp, O_CLOEXEC) != 0)
        return 1;
    s.started_us = corral__now_us();
    s.pid = fork();
    if (s.pid == 0)
        child(&s, out[1], errp[1]);
    close(out[1]);
    close(errp[1]);
    if (s.pid < 0)
        return 1;
    setpgid(s.pid, s.pid);
    s.pid_start = corral__proc_starttime(s.pid);
    write_state(&s, NULL);
    int e = 0;
    ssize_t got;
    while ((got = read(errp[0], &e, sizeof(e))) < 0 && errno == EINTR)
        ;
    close(errp[0]);
    char tail[700];
    int code;
    if (got == (ssize_t)sizeof(e)) {
        char msg[400];
        snprintf(msg, sizeof(msg), "corral: exec \"%s\" in %s: %s", s.argv[0], s.dir, strerror(e));
        log_out(&s, msg, strlen(msg));
        log_out(&s, "\n", 1);
        waitpid(s.pid, NULL, 0);
        code = 128;
        snprintf(tail, sizeof(tail), "reason=StartError\nmessage=%s\n", msg);
    } else {
        int status = supervise(&s, out[0]);
        code = WIFEXITED(status)     ? WEXITSTATUS(status)
               : WIFSIGNALED(status) ? 128 + WTERMSIG(status)
                                     : 255;
        tail[0] = '\0';
    }
    close(out[0]);
    if (s.logfd >= 0)
        close(s.logfd);
    char end[800];
    snprintf(end, sizeof(end), "%sexit=%d\nfinished_us=%lld\n", tail, code,
             (long long)corral__now_us());
    write_state(&s, end);
    char num[16];
    int n = snprintf(num, sizeof(num), "%d\n", code);
    corral__agent_write_file(s.exit, num, (size_t)n);
    return 0;
}
