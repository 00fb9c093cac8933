/*
 * Model fetchers for the agent's model cache: a storage URI becomes files
 * in a directory (one the caller made, empty, under the cache root). One
 * fetcher per scheme:
 *   file:///abs/path        a copy of the file or of the directory tree;
 *   pvc://NAME/path         the same from PVC_ROOT/NAME/path (--pvc-root: a
 *                           node-local directory standing for a mounted PVC);
 *   http://, https://       one GET through libcurl, saved under the URL's
 *                           last path segment (or "model");
 * every other scheme (s3://, gs://, hf://, ...) is refused with a message
 * (docs/inference.md says how one would plug in: a function of this shape
 * in the table below). Copies follow no symbolic links (a link in a source
 * tree is skipped, so nothing outside it is read), keep only regular files
 * and directories, refuse "." and ".." segments, and stop past max_bytes;
 * downloads stop there too (CURLOPT_MAXFILESIZE and the write callback).
 */
#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/agent_int.h"

#define MAX_DEPTH 32
#define MAX_FILES 100000

bool corral__mc_safe_name(const char *name)
{
    size_t n = name ? strlen(name) : 0;
    if (n == 0 || n > 253 || name[0] == '.' || name[0] == '-')
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '.' || c == '_'))
            return false;
    }
    return strstr(name, "..") == NULL;
}

bool corral__mc_safe_relpath(const char *p)
{
    if (!p)
        return false;
    if (!*p)
        return true;
    if (p[0] == '/' || strlen(p) > 4000)
        return false;
    while (*p) {
        size_t n = strcspn(p, "/");
        if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
            return false;
        for (size_t i = 0; i < n; i++)
            if ((unsigned char)p[i] < 0x20)
                return false;
        p += n;
        if (*p == '/')
            p++;
    }
    return true;
}

const char *corral__fetch_scheme(const char *uri)
{
    static const char *const known[] = {"file://", "pvc://", "http://", "https://"};
    for (size_t i = 0; uri && i < CORRAL_ARRAY_LEN(known); i++)
        if (!strncmp(uri, known[i], strlen(known[i])))
            return known[i];
    return NULL;
}

int corral__mc_subpath(const char *cache_uri, const char *storage_uri, char *out, size_t len)
{
    if (!corral_storage_uri_match(cache_uri, storage_uri))
        return CORRAL_ENOENT;
    size_t n = strlen(cache_uri);
    while (n > 0 && cache_uri[n - 1] == '/')
        n--;
    const char *rest = storage_uri + n;
    while (*rest == '/')
        rest++;
    snprintf(out, len, "%s", rest);
    size_t m = strlen(out);
    while (m > 0 && out[m - 1] == '/')
        out[--m] = '\0';
    return corral__mc_safe_relpath(out) ? 0 : CORRAL_EINVAL;
}

int64_t corral__du(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return 0;
    if (!S_ISDIR(st.st_mode))
        return S_ISREG(st.st_mode) ? (int64_t)st.st_size : 0;
    int64_t sum = 0;
    DIR *d = opendir(path);
    if (!d)
        return 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        char sub[4096];
        if ((size_t)snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name) < sizeof(sub))
            sum += corral__du(sub);
    }
    closedir(d);
    return sum;
}

/* --- copies (file://, pvc://) ------------------------------------------------------------------
 */

typedef struct copy {
    int64_t bytes, max;
    size_t files;
    char *err;
    size_t errlen;
} copy_t;

static int copy_file(copy_t *c, const char *from, const char *to)
{
    int in = open(from, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (in < 0) {
        snprintf(c->err, c->errlen, "open %s: %s", from, strerror(errno));
        return CORRAL_EIO;
    }
    int out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (out < 0) {
        snprintf(c->err, c->errlen, "create %s: %s", to, strerror(errno));
        close(in);
        return CORRAL_EIO;
    }
    char buf[1 << 16];
    int rc = 0;
    for (;;) {
        ssize_t n = read(in, buf, sizeof(buf));
        if (n == 0)
            break;
        if (n < 0 || write(out, buf, (size_t)n) != n) {
            snprintf(c->err, c->errlen, "copy %s: %s", from, strerror(errno));
            rc = CORRAL_EIO;
            break;
        }
        c->bytes += n;
        if (c->bytes > c->max) {
            snprintf(c->err, c->errlen,
                     "the model is larger than %lld bytes (the space it may use)",
                     (long long)c->max);
            rc = CORRAL_ETOOBIG;
            break;
        }
    }
    if (rc == 0 && fsync(out) != 0)
        rc = CORRAL_EIO;
    close(in);
    close(out);
    return rc;
}

static int copy_tree(copy_t *c, const char *from, const char *to, int depth)
{
    struct stat st;
    if (lstat(from, &st) != 0) {
        snprintf(c->err, c->errlen, "%s: %s", from, strerror(errno));
        return CORRAL_ENOENT;
    }
    if (++c->files > MAX_FILES || depth > MAX_DEPTH) {
        snprintf(c->err, c->errlen, "%s: more than %d files or %d levels", from, MAX_FILES,
                 MAX_DEPTH);
        return CORRAL_ETOOBIG;
    }
    if (S_ISREG(st.st_mode))
        return copy_file(c, from, to);
    if (!S_ISDIR(st.st_mode))
        return 0; /* links, devices, sockets: skipped */
    if (mkdir(to, 0755) != 0 && errno != EEXIST) {
        snprintf(c->err, c->errlen, "mkdir %s: %s", to, strerror(errno));
        return CORRAL_EIO;
    }
    DIR *d = opendir(from);
    if (!d) {
        snprintf(c->err, c->errlen, "%s: %s", from, strerror(errno));
        return CORRAL_EIO;
    }
    int rc = 0;
    struct dirent *de;
    while (rc == 0 && (de = readdir(d)) != NULL) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        char a[4096], b[4096];
        if ((size_t)snprintf(a, sizeof(a), "%s/%s", from, de->d_name) >= sizeof(a) ||
            (size_t)snprintf(b, sizeof(b), "%s/%s", to, de->d_name) >= sizeof(b)) {
            snprintf(c->err, c->errlen, "%s: path too long", from);
            rc = CORRAL_ETOOBIG;
            break;
        }
        rc = copy_tree(c, a, b, depth + 1);
    }
    closedir(d);
    return rc;
}

/* The last segment of a path: its name in the cache. */
static const char *base_name(const char *path, char *buf, size_t len)
{
    size_t n = strlen(path);
    while (n > 0 && path[n - 1] == '/')
        n--;
    size_t s = n;
    while (s > 0 && path[s - 1] != '/')
        s--;
    snprintf(buf, len, "%.*s", (int)(n - s), path + s);
    char *q = strpbrk(buf, "?#");
    if (q)
        *q = '\0';
    return corral__mc_safe_name(buf) ? buf : "model";
}

static int fetch_copy(const char *src, const char *dir, const corral__fetch_opts_t *o,
                      int64_t *bytes, char *err, size_t errlen)
{
    struct stat st;
    if (stat(src, &st) != 0) {
        snprintf(err, errlen, "%s: %s", src, strerror(errno));
        return CORRAL_ENOENT;
    }
    copy_t c = {.max = o->max_bytes, .err = err, .errlen = errlen};
    int rc;
    if (S_ISDIR(st.st_mode)) {
        rc = copy_tree(&c, src, dir, 0);
    } else {
        char name[256], to[4096];
        snprintf(to, sizeof(to), "%s/%s", dir, base_name(src, name, sizeof(name)));
        rc = copy_tree(&c, src, to, 0);
    }
    *bytes = c.bytes;
    return rc;
}

static int fetch_file(const char *uri, const char *dir, const corral__fetch_opts_t *o,
                      int64_t *bytes, char *err, size_t errlen)
{
    const char *path = uri + strlen("file://");
    if (path[0] != '/' || !corral__mc_safe_relpath(path + 1)) {
        snprintf(err, errlen, "%s: a file:// URI needs an absolute path without . or ..", uri);
        return CORRAL_EINVAL;
    }
    return fetch_copy(path, dir, o, bytes, err, errlen);
}

static int fetch_pvc(const char *uri, const char *dir, const corral__fetch_opts_t *o,
                     int64_t *bytes, char *err, size_t errlen)
{
    const char *rest = uri + strlen("pvc://");
    if (!o->pvc_root || !*o->pvc_root) {
        snprintf(err, errlen,
                 "%s: this agent has no --pvc-root (the directory standing for "
                 "mounted PVCs)",
                 uri);
        return CORRAL_EINVAL;
    }
    char claim[256];
    size_t n = strcspn(rest, "/");
    snprintf(claim, sizeof(claim), "%.*s", (int)n, rest);
    const char *sub = rest[n] ? rest + n + 1 : "";
    if (n >= sizeof(claim) || !corral__mc_safe_name(claim) || !corral__mc_safe_relpath(sub)) {
        snprintf(err, errlen, "%s: expected pvc://CLAIM/path without . or ..", uri);
        return CORRAL_EINVAL;
    }
    char src[4096];
    snprintf(src, sizeof(src), "%s/%s%s%s", o->pvc_root, claim, *sub ? "/" : "", sub);
    return fetch_copy(src, dir, o, bytes, err, errlen);
}

/* --- http(s):// ------------------------------------------------------------------------------- */

typedef struct dl {
    FILE *fp;
    int64_t bytes, max;
} dl_t;

static size_t dl_write(char *p, size_t sz, size_t n, void *ud)
{
    dl_t *d = ud;
    size_t len = sz * n;
    d->bytes += (int64_t)len;
    if (d->bytes > d->max || fwrite(p, 1, len, d->fp) != len)
        return 0;
    return len;
}

static int fetch_http(const char *uri, const char *dir, const corral__fetch_opts_t *o,
                      int64_t *bytes, char *err, size_t errlen)
{
    char name[256], to[4096];
    const char *path = strchr(uri + strlen("https://") - 1, '/');
    base_name(path ? path : "", name, sizeof(name));
    snprintf(to, sizeof(to), "%s/%s", dir, name[0] ? name : "model");
    dl_t d = {.max = o->max_bytes};
    d.fp = fopen(to, "wxe");
    if (!d.fp) {
        snprintf(err, errlen, "create %s: %s", to, strerror(errno));
        return CORRAL_EIO;
    }
    CURL *h = curl_easy_init();
    curl_easy_setopt(h, CURLOPT_URL, uri);
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(h, CURLOPT_MAXREDIRS, 5L);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 30L);
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L); /* stalled for a minute: give up */
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, 60L);
    curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)o->max_bytes);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, dl_write);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &d);
    curl_easy_setopt(h, CURLOPT_USERAGENT, "corral-agent");
    CURLcode cc = curl_easy_perform(h);
    long code = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_cleanup(h);
    int rc = 0;
    if (fflush(d.fp) != 0 || fsync(fileno(d.fp)) != 0)
        rc = CORRAL_EIO;
    fclose(d.fp);
    if (d.bytes > d.max || cc == CURLE_FILESIZE_EXCEEDED) {
        snprintf(err, errlen, "%s: larger than %lld bytes (the space it may use)", uri,
                 (long long)o->max_bytes);
        rc = CORRAL_ETOOBIG;
    } else if (cc != CURLE_OK) {
        snprintf(err, errlen, "GET %s: %s", uri, curl_easy_strerror(cc));
        rc = CORRAL_EIO;
    } else if (code < 200 || code > 299) {
        snprintf(err, errlen, "GET %s: HTTP %ld", uri, code);
        rc = CORRAL_EIO;
    }
    *bytes = d.bytes;
    return rc;
}

int corral__fetch(const char *uri, const char *dir, const corral__fetch_opts_t *o, int64_t *bytes,
                  char *err, size_t errlen)
{
    static const struct {
        const char *scheme;
        int (*fn)(const char *, const char *, const corral__fetch_opts_t *, int64_t *, char *,
                  size_t);
    } fetchers[] = {{"file://", fetch_file},
                    {"pvc://", fetch_pvc},
                    {"http://", fetch_http},
                    {"https://", fetch_http}};
    *bytes = 0;
    err[0] = '\0';
    for (size_t i = 0; i < CORRAL_ARRAY_LEN(fetchers); i++)
        if (!strncmp(uri, fetchers[i].scheme, strlen(fetchers[i].scheme)))
            return fetchers[i].fn(uri, dir, o, bytes, err, errlen);
    const char *colon = strstr(uri, "://");
    snprintf(err, errlen,
             "%s: the %.*s:// scheme is not supported by the agent's model cache (file://, "
             "pvc://, http://, https://; see docs/inference.md)",
             uri, colon ? (int)(colon - uri) : 0, uri);
    return CORRAL_EINVAL;
}
