/*
 * The stand-in's start-up and its simulated GPU load. Start-up reads every
 * byte of every regular file under the model directory, as a real server
 * reads its weights, so a copy on local disk (or already in the page cache)
 * loads faster than one on a slow mount; the server then adds a delay per
 * GiB (--load-ms-per-gib) to stand for putting the weights on a GPU. The
 * GPU load file is written through a temporary name and rename(2), so the
 * agent never reads half a number.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "standin/standin_int.h"

#define MAX_DEPTH  32
#define READ_CHUNK ((size_t)1 << 20)

typedef struct walk {
    uint64_t bytes, files;
    char *buf;
    char *err;
    size_t errlen;
} walk_t;

static int read_file(walk_t *w, const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(w->err, w->errlen, "cannot open model file %s: %s", path, strerror(errno));
        return CORRAL_EIO;
    }
    for (;;) {
        ssize_t n = read(fd, w->buf, READ_CHUNK);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            snprintf(w->err, w->errlen, "cannot read model file %s: %s", path, strerror(errno));
            close(fd);
            return CORRAL_EIO;
        }
        if (n == 0)
            break;
        w->bytes += (uint64_t)n;
    }
    close(fd);
    w->files++;
    return 0;
}

static int walk_dir(walk_t *w, const char *dir, int depth)
{
    if (depth > MAX_DEPTH) {
        snprintf(w->err, w->errlen, "model directory nested deeper than %d levels at %s", MAX_DEPTH,
                 dir);
        return CORRAL_ETOOBIG;
    }
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(w->err, w->errlen, "cannot read model directory %s: %s", dir, strerror(errno));
        return CORRAL_EIO;
    }
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        size_t n = strlen(dir) + strlen(e->d_name) + 2;
        char *path = corral_malloc(n);
        snprintf(path, n, "%s/%s", dir, e->d_name);
        struct stat lst, st;
        if (lstat(path, &lst) == 0 && stat(path, &st) == 0) {
            /* Directories are entered only when they are not symlinks (no loops). */
            if (S_ISDIR(lst.st_mode))
                rc = walk_dir(w, path, depth + 1);
            else if (S_ISREG(st.st_mode))
                rc = read_file(w, path);
        }
        corral_free(path);
    }
    closedir(d);
    return rc;
}

int corral__si_read_model(const char *dir, uint64_t *bytes, uint64_t *files, char *err,
                          size_t errlen)
{
    walk_t w = {.buf = corral_malloc(READ_CHUNK), .err = err, .errlen = errlen};
    struct stat st;
    int rc;
    if (stat(dir, &st) != 0) {
        snprintf(err, errlen, "model directory %s: %s", dir, strerror(errno));
        rc = CORRAL_ENOENT;
    } else if (S_ISREG(st.st_mode)) {
        rc = read_file(&w, dir); /* a single-file model */
    } else {
        rc = walk_dir(&w, dir, 0);
    }
    corral_free(w.buf);
    *bytes = w.bytes;
    *files = w.files;
    return rc;
}

int corral__si_write_load(const char *path, double percent)
{
    size_t n = strlen(path) + 8;
    char *tmp = corral_malloc(n);
    snprintf(tmp, n, "%s.tmp", path);
    int rc = CORRAL_EIO;
    FILE *f = fopen(tmp, "we");
    if (f) {
        fprintf(f, "%.1f\n", percent);
        if (fclose(f) == 0 && rename(tmp, path) == 0)
            rc = 0;
        else
            unlink(tmp);
    }
    corral_free(tmp);
    return rc;
}
