/*
 * cgroup v2 limits for the process runtime. Usable when /sys/fs/cgroup is a
 * cgroup2 mount, the agent's own cgroup (from /proc/self/cgroup) is writable
 * and offers the cpu and memory controllers (the agent moves itself into
 * <its cgroup>/agent when it must, to be allowed to delegate them): it makes
 * <its cgroup>/corral/<pod-uid>/<container> with cpu.max from limits.cpu
 * (quota per 100 ms period) and memory.max from limits.memory, and the shim
 * puts the workload in it. That also gives a reliable kill of every
 * descendant (cgroup.kill, Linux 5.14+) and OOM detection (memory.events
 * oom_kill). Anywhere else (cgroup v1, hybrid, read-only, no delegation)
 * nothing is limited and the agent says so once at start.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "agent/agent_int.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

#define CG_ROOT "/sys/fs/cgroup"

static int write_str(const char *dir, const char *file, const char *s)
{
    char p[1024];
    snprintf(p, sizeof(p), "%s/%s", dir, file);
    int fd = open(p, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return CORRAL_EIO;
    ssize_t w = write(fd, s, strlen(s));
    close(fd);
    return w == (ssize_t)strlen(s) ? 0 : CORRAL_EIO;
}

static bool read_line(const char *path, char *out, size_t len)
{
    FILE *fp = fopen(path, "re");
    if (!fp)
        return false;
    bool ok = fgets(out, (int)len, fp) != NULL;
    fclose(fp);
    if (ok)
        out[strcspn(out, "\n")] = '\0';
    return ok;
}

static bool has_word(const char *list, const char *w)
{
    size_t n = strlen(w);
    for (const char *p = list; (p = strstr(p, w)) != NULL; p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
            return true;
    return false;
}

bool corral__cgroup_probe(char **base, char *why, size_t whylen)
{
    *base = NULL;
    struct statfs sf;
    if (statfs(CG_ROOT, &sf) != 0 || sf.f_type != CGROUP2_SUPER_MAGIC) {
        snprintf(why, whylen, CG_ROOT " is not a cgroup v2 mount (cgroup v1 or hybrid)");
        return false;
    }
    char line[1024] = "";
    if (!read_line("/proc/self/cgroup", line, sizeof(line)) || strncmp(line, "0::", 3) != 0) {
        snprintf(why, whylen, "cannot tell the agent's cgroup from /proc/self/cgroup");
        return false;
    }
    char own[1200], ctl[512] = "";
    snprintf(own, sizeof(own), CG_ROOT "%s", strcmp(line + 3, "/") ? line + 3 : "");
    char path[1300];
    snprintf(path, sizeof(path), "%s/cgroup.controllers", own);
    if (!read_line(path, ctl, sizeof(ctl)) || !has_word(ctl, "cpu") || !has_word(ctl, "memory")) {
        snprintf(why, whylen, "the cpu and memory controllers are not available in %s", own);
        return false;
    }
    char b[1400];
    snprintf(b, sizeof(b), "%s/corral", own);
    if (mkdir(b, 0755) != 0 && errno != EEXIST) {
        snprintf(why, whylen, "cannot create %s: %s", b, strerror(errno));
        return false;
    }
    /* A non-root cgroup with processes cannot hand controllers to its
     * children (the no-internal-processes rule): when enabling them fails
     * because the agent itself lives in its cgroup, the agent moves into a
     * leaf of its own (own/agent, as systemd and container runtimes do) and
     * tries again. */
    if (write_str(own, "cgroup.subtree_control", "+cpu +memory") != 0) {
        char leaf[1300];
        snprintf(leaf, sizeof(leaf), "%s/agent", own);
        if ((mkdir(leaf, 0755) == 0 || errno == EEXIST) &&
            write_str(leaf, "cgroup.procs", "0") == 0)
            write_str(own, "cgroup.subtree_control", "+cpu +memory");
    }
    if (write_str(b, "cgroup.subtree_control", "+cpu +memory") != 0) {
        snprintf(why, whylen, "cannot enable cpu and memory controllers under %s", b);
        rmdir(b);
        return false;
    }
    *base = corral_strdup(b);
    return true;
}

int corral__cgroup_make(const char *base, const char *name, int64_t cpu_milli, int64_t mem_bytes,
                        char **path)
{
    char dir[1600];
    snprintf(dir, sizeof(dir), "%s/%s", base, name);
    /* the pod level: its children get the controllers */
    char *slash = strrchr(dir, '/');
    if (slash && slash > dir + strlen(base)) {
        *slash = '\0';
        if (mkdir(dir, 0755) != 0 && errno != EEXIST)
            return CORRAL_EIO;
        write_str(dir, "cgroup.subtree_control", "+cpu +memory");
        *slash = '/';
    }
    if (mkdir(dir, 0755) != 0 && errno != EEXIST)
        return CORRAL_EIO;
    char v[64];
    if (cpu_milli > 0) {
        snprintf(v, sizeof(v), "%lld 100000", (long long)cpu_milli * 100);
        write_str(dir, "cpu.max", v);
    }
    if (mem_bytes > 0) {
        snprintf(v, sizeof(v), "%lld", (long long)mem_bytes);
        write_str(dir, "memory.max", v);
        write_str(dir, "memory.swap.max", "0");
    }
    *path = corral_strdup(dir);
    return 0;
}

uint64_t corral__cgroup_ooms(const char *path)
{
    char p[1200], line[256];
    snprintf(p, sizeof(p), "%s/memory.events", path);
    FILE *fp = fopen(p, "re");
    if (!fp)
        return 0;
    uint64_t n = 0;
    while (fgets(line, sizeof(line), fp))
        if (!strncmp(line, "oom_kill ", 9))
            n = strtoull(line + 9, NULL, 10);
    fclose(fp);
    return n;
}

void corral__cgroup_kill(const char *path)
{
    if (write_str(path, "cgroup.kill", "1") == 0)
        return;
    /* before Linux 5.14: signal every listed process */
    char p[1200];
    snprintf(p, sizeof(p), "%s/cgroup.procs", path);
    FILE *fp = fopen(p, "re");
    if (!fp)
        return;
    long pid;
    while (fscanf(fp, "%ld", &pid) == 1)
        if (pid > 1)
            kill((pid_t)pid, SIGKILL);
    fclose(fp);
}

void corral__cgroup_remove(const char *path)
{
    if (rmdir(path) == 0 || errno == ENOENT)
        return;
    /* a pod's cgroup: its containers' first (cgroupfs removes control files with
     * the directory; rmdir fails while processes remain) */
    DIR *d = opendir(path);
    if (!d)
        return;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_type != DT_DIR || de->d_name[0] == '.')
            continue;
        char p[1400];
        snprintf(p, sizeof(p), "%s/%s", path, de->d_name);
        rmdir(p);
    }
    closedir(d);
    rmdir(path);
}
