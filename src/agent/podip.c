/*
 * Pod addresses of the process runtime: each pod gets a loopback address of
 * its own in 127.0.0.0/8, so two replicas on one host both listen on their
 * containerPort (Linux routes the whole /8 to lo; nothing is configured).
 *
 * The candidates of a pod are a fixed function of its uid: 127.A.B.C with
 * A in 1-254 (never 127.0.x.x, so never 127.0.0.1 nor 127.0.0.0/24), C in
 * 1-254. Several agents run on one host (corral up), so an address is
 * claimed with an exclusive flock on a file named after it in a directory
 * all the agents of this user share (CORRAL__PODIP_DIR); a taken address
 * moves the pod to its next candidate. The lock dies with the agent that
 * holds it, so a crash leaves no stale claim; the claim file is unlinked on
 * release while still locked, and a claimer checks after locking that the
 * path still names the file it locked (the usual unlink-safe lock pattern).
 * The address is also recorded in the pod's .corral/podip, so an agent that
 * restarts and adopts the pod claims the same address again first.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/agent_int.h"
#include "corral/hmap.h"

#define PODIP_TRIES 64

void corral__podip_candidate(const char *uid, int k, char *out, size_t len)
{
    uint32_t h = corral_hash_stable(uid, strlen(uid), (uint32_t)k * 0x9e3779b9u + 1u);
    uint32_t h2 = corral_hash_stable(uid, strlen(uid), (uint32_t)k * 0x85ebca6bu + 7u);
    unsigned a = 1 + (h % 254), b = (h >> 8) & 0xff, c = 1 + (h2 % 254);
    snprintf(out, len, "127.%u.%u.%u", a, b, c);
}

bool corral__podip_valid(const char *ip)
{
    unsigned b, c, d;
    char tail;
    if (!ip || sscanf(ip, "127.%u.%u.%u%c", &b, &c, &d, &tail) != 3)
        return false;
    return b >= 1 && b <= 254 && c <= 255 && d >= 1 && d <= 254;
}

void corral__podip_default_dir(char *out, size_t len)
{
    const char *t = getenv("CORRAL_POD_IP_DIR");
    if (t && *t) {
        snprintf(out, len, "%s", t);
        return;
    }
    t = getenv("TMPDIR");
    snprintf(out, len, "%s/corral-pod-ips-%u", t && *t ? t : "/tmp", (unsigned)geteuid());
}

/* Lock dir/ip: the open fd when we hold it, -1 when someone else does. */
static int try_claim(const char *dir, const char *ip)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, ip);
    for (int attempt = 0; attempt < 4; attempt++) {
        int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        if (fd < 0)
            return -1;
        if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
            close(fd);
            return -1;
        }
        struct stat a, b;
        if (fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_ino == b.st_ino &&
            a.st_dev == b.st_dev)
            return fd;
        close(fd); /* released and unlinked between our open and our lock: again */
    }
    return -1;
}

int corral__podip_claim(corral__podip_t *pi, const char *dir, const char *uid, const char *prefer)
{
    memset(pi, 0, sizeof(*pi));
    pi->fd = -1;
    if (corral__mkdirs(dir) != 0)
        return CORRAL_EIO;
    chmod(dir, 0700);
    char ip[CORRAL__PODIP_LEN];
    for (int k = prefer && corral__podip_valid(prefer) ? -1 : 0; k < PODIP_TRIES; k++) {
        if (k < 0)
            snprintf(ip, sizeof(ip), "%s", prefer);
        else
            corral__podip_candidate(uid, k, ip, sizeof(ip));
        int fd = try_claim(dir, ip);
        if (fd < 0)
            continue;
        pi->fd = fd;
        snprintf(pi->ip, sizeof(pi->ip), "%s", ip);
        snprintf(pi->path, sizeof(pi->path), "%s/%s", dir, ip);
        if (ftruncate(fd, 0) == 0 && write(fd, uid, strlen(uid)) < 0)
            corral__log("pod address %s: cannot record its pod uid", ip);
        return 0;
    }
    return CORRAL_EAGAIN;
}

void corral__podip_release(corral__podip_t *pi)
{
    if (pi->fd < 0)
        return;
    unlink(pi->path); /* while locked: a racer sees another inode and retries */
    close(pi->fd);
    pi->fd = -1;
    pi->ip[0] = '\0';
}
