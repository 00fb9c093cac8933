/*
 * File and directory reading with limits and clear errors.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "corral/io.h"

static int read_fd(int fd, const char *path, size_t max, corral_diag_t *diag, char **data,
                   size_t *len)
{
    size_t cap = (size_t)64 * 1024, n = 0;
    char *buf = corral_malloc(cap + 1);
    for (;;) {
        if (n == cap) {
            if (cap > max) {
                corral_free(buf);
                corral_diag_add(diag, CORRAL_SEV_ERROR, path, 0, 0, NULL,
                                "input is larger than %zu MiB; refusing to read it", max >> 20);
                return CORRAL_ETOOBIG;
            }
            cap *= 2;
            buf = corral_realloc(buf, cap + 1);
        }
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            corral_diag_add(diag, CORRAL_SEV_ERROR, path, 0, 0, NULL, "cannot read: %s",
                            strerror(errno));
            corral_free(buf);
            return CORRAL_EIO;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    if (n > max) {
        corral_free(buf);
        corral_diag_add(diag, CORRAL_SEV_ERROR, path, 0, 0, NULL,
                        "input is larger than %zu MiB; refusing to read it", max >> 20);
        return CORRAL_ETOOBIG;
    }
    buf[n] = '\0';
    *data = buf;
    *len = n;
    return 0;
}

int corral_file_read(const char *path, size_t max, corral_diag_t *diag, char **data, size_t *len)
{
    *data = NULL;
    *len = 0;
    if (strcmp(path, "-") == 0)
        return read_fd(STDIN_FILENO, "<stdin>", max, diag, data, len);
    FILE *f = fopen(path, "rb");
    if (!f) {
        corral_diag_add(diag, CORRAL_SEV_ERROR, path, 0, 0, NULL, "cannot open: %s",
                        strerror(errno));
        return errno == ENOENT ? CORRAL_ENOENT : CORRAL_EIO;
    }
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && (size_t)st.st_size > max) {
        corral_diag_add(diag, CORRAL_SEV_ERROR, path, 0, 0, NULL,
                        "file is %lld bytes; Corral reads at most %zu MiB per file",
                        (long long)st.st_size, max >> 20);
        fclose(f);
        return CORRAL_ETOOBIG;
    }
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        corral_diag_add(diag, CORRAL_SEV_ERROR, path, 0, 0, NULL, "is a directory");
        fclose(f);
        return CORRAL_EIO;
    }
    int rc = read_fd(fileno(f), path, max, diag, data, len);
    fclose(f);
    return rc;
}

static bool has_ext(const char *name, const char *const *exts, size_t n)
{
    size_t len = strlen(name);
    for (size_t i = 0; i < n; i++) {
        size_t el = strlen(exts[i]);
        if (len > el && strcmp(name + len - el, exts[i]) == 0)
            return true;
    }
    return false;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

typedef struct file_list {
    char **items;
    size_t n, cap;
} file_list_t;

static void list_push(file_list_t *l, char *s)
{
    corral_grow((void **)&l->items, &l->cap, l->n + 1, sizeof(*l->items));
    l->items[l->n++] = s;
}

static int walk(const char *dir, const char *const *exts, size_t nexts, corral_diag_t *diag,
                file_list_t *out, int depth)
{
    if (depth > 32) {
        corral_diag_add(diag, CORRAL_SEV_ERROR, dir, 0, 0, NULL,
                        "directories nested deeper than 32 levels (a symlink loop?)");
        return CORRAL_ETOOBIG;
    }
    DIR *dp = opendir(dir);
    if (!dp) {
        corral_diag_add(diag, CORRAL_SEV_ERROR, dir, 0, 0, NULL, "cannot open directory: %s",
                        strerror(errno));
        return CORRAL_EIO;
    }
    file_list_t here = {NULL, 0, 0};
    struct dirent *e;
    while ((e = readdir(dp)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        size_t n = strlen(dir) + strlen(e->d_name) + 2;
        char *p = corral_malloc(n);
        snprintf(p, n, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", e->d_name);
        list_push(&here, p);
    }
    closedir(dp);
    if (here.n > 1)
        qsort(here.items, here.n, sizeof(*here.items), cmp_str);
    int rc = 0;
    for (size_t i = 0; i < here.n; i++) {
        struct stat st;
        char *p = here.items[i];
        if (stat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
            if (rc == 0)
                rc = walk(p, exts, nexts, diag, out, depth + 1);
            corral_free(p);
        } else if (has_ext(p, exts, nexts)) {
            list_push(out, p);
        } else {
            corral_free(p);
        }
    }
    corral_free(here.items);
    return rc;
}

int corral_path_expand(const char *path, const char *const *exts, size_t nexts, corral_diag_t *diag,
                       char ***files, size_t *nfiles)
{
    file_list_t l = {*files, *nfiles, *nfiles};
    struct stat st;
    int rc = 0;
    bool is_stdin = strcmp(path, "-") == 0;
    if (!is_stdin && stat(path, &st) != 0) {
        corral_diag_add(diag, CORRAL_SEV_ERROR, path, 0, 0, NULL, "%s", strerror(errno));
        rc = errno == ENOENT ? CORRAL_ENOENT : CORRAL_EIO;
    } else if (!is_stdin && S_ISDIR(st.st_mode)) {
        rc = walk(path, exts, nexts, diag, &l, 0);
    } else {
        list_push(&l, corral_strdup(path)); /* a file (any name) or standard input */
    }
    *files = l.items;
    *nfiles = l.n;
    return rc;
}
