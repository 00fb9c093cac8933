/*
 * Small helpers the agent's files share: the clock, directories and atomic
 * file writes (the shim and the agent communicate through files that must
 * never be seen half-written), log lines, and building JSON value trees.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "agent/agent_int.h"
#include "corral/timefmt.h"

int64_t corral__now_us(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (int64_t)tv.tv_sec * 1000000 + tv.tv_usec;
}

void corral__fmt_time(int64_t us, bool micro, char *out, size_t len)
{
    corral_time_format(us, micro, out, len);
}

int corral__mkdirs(const char *path)
{
    char buf[4096];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof(buf))
        return CORRAL_EINVAL;
    memcpy(buf, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] == '/' || buf[i] == '\0') {
            char c = buf[i];
            buf[i] = '\0';
            if (mkdir(buf, 0755) != 0 && errno != EEXIST)
                return CORRAL_EIO;
            buf[i] = c;
        }
    }
    return 0;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    if (flag == FTW_DP)
        rmdir(path);
    else
        unlink(path);
    return 0;
}

void corral__rmtree(const char *path)
{
    nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

int corral__agent_write_file(const char *path, const char *data, size_t len)
{
    char tmp[4200];
    snprintf(tmp, sizeof(tmp), "%s.tmp%d", path, (int)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return CORRAL_EIO;
    size_t off = 0;
    while (off < len) {
        ssize_t w = write(fd, data + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            close(fd);
            unlink(tmp);
            return CORRAL_EIO;
        }
        off += (size_t)w;
    }
    close(fd);
    if (rename(tmp, path) != 0) {
        unlink(tmp);
        return CORRAL_EIO;
    }
    return 0;
}

void corral__log(const char *fmt, ...)
{
    char ts[40];
    corral_time_format(corral__now_us(), false, ts, sizeof(ts));
    va_list ap;
    va_start(ap, fmt);
    char line[2048];
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s corral agent: %s\n", ts, line);
}

void corral__jstr(corral_arena_t *a, corral_val_t *m, const char *key, const char *s)
{
    corral_val_set(a, m, key, corral_val_new_str(a, s ? s : ""));
}

void corral__jint(corral_arena_t *a, corral_val_t *m, const char *key, int64_t v)
{
    corral_val_set(a, m, key, corral_val_new_int(a, v));
}

void corral__jbool(corral_arena_t *a, corral_val_t *m, const char *key, bool v)
{
    corral_val_set(a, m, key, corral_val_new_bool(a, v));
}

corral_val_t *corral__jmap(corral_arena_t *a, corral_val_t *m, const char *key)
{
    corral_val_t *v = corral_val_new(a, CORRAL_VAL_MAP);
    if (m)
        corral_val_set(a, m, key, v);
    return v;
}

corral_val_t *corral__jseq(corral_arena_t *a, corral_val_t *m, const char *key)
{
    corral_val_t *v = corral_val_new(a, CORRAL_VAL_SEQ);
    if (m)
        corral_val_set(a, m, key, v);
    return v;
}

void corral__block_stop_signals(sigset_t *sigs)
{
    sigemptyset(sigs);
    sigaddset(sigs, SIGTERM);
    sigaddset(sigs, SIGINT);
    pthread_sigmask(SIG_BLOCK, sigs, NULL);
}
