/* The agent's model cache: names and paths that cannot leave the cache,
 * KServe's URI match into a subdirectory, LRU planning, the fetchers
 * (file:// trees, pvc:// under a root, http:// from a local server, size
 * bounds, unsupported schemes), the cache object end to end (download,
 * take-back after a restart, eviction, in-use protection), and the
 * /mnt/models argument rewrite. */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/agent_int.h"

static char *tmpdir(void)
{
    static char dirs[4][64];
    static int k;
    char *d = dirs[k++ % 4];
    snprintf(d, 64, "/tmp/corral-mc-XXXXXX");
    cr_assert_not_null(mkdtemp(d));
    return d;
}

static void put(const char *path, size_t n)
{
    FILE *fp = fopen(path, "we");
    cr_assert_not_null(fp, "%s", path);
    for (size_t i = 0; i < n; i++)
        fputc((int)('a' + i % 26), fp);
    fclose(fp);
}

Test(modelcache, names_and_paths)
{
    cr_assert(corral__mc_safe_name("llama3-8b"));
    cr_assert(corral__mc_safe_name("_uri-0123abcd"));
    cr_assert(corral__mc_safe_name("a.b_c"));
    cr_assert_not(corral__mc_safe_name(""));
    cr_assert_not(corral__mc_safe_name(".tmp-x"));
    cr_assert_not(corral__mc_safe_name(".."));
    cr_assert_not(corral__mc_safe_name("a/b"));
    cr_assert_not(corral__mc_safe_name("a..b"));
    cr_assert_not(corral__mc_safe_name("-x"));
    cr_assert(corral__mc_safe_relpath(""));
    cr_assert(corral__mc_safe_relpath("a/b.bin"));
    cr_assert_not(corral__mc_safe_relpath("/etc"));
    cr_assert_not(corral__mc_safe_relpath("a/../../etc"));
    cr_assert_not(corral__mc_safe_relpath("a//b"));
    cr_assert_not(corral__mc_safe_relpath("./a"));
    char sub[256];
    cr_assert_eq(corral__mc_subpath("s3://b/llama", "s3://b/llama", sub, sizeof(sub)), 0);
    cr_assert_str_eq(sub, "");
    cr_assert_eq(corral__mc_subpath("s3://b/llama/", "s3://b/llama/8b/", sub, sizeof(sub)), 0);
    cr_assert_str_eq(sub, "8b");
    cr_assert_neq(corral__mc_subpath("s3://b/llama", "s3://b/llama2", sub, sizeof(sub)), 0,
                  "a prefix only at a / boundary");
    cr_assert_neq(corral__mc_subpath("file:///m", "file:///m/../etc", sub, sizeof(sub)), 0,
                  "no way out of the cache entry");
    cr_assert_str_eq(corral__fetch_scheme("https://x/y"), "https://");
    cr_assert_null(corral__fetch_scheme("s3://bucket/m"));
}

Test(modelcache, lru_plan)
{
    corral__mc_entry_t e[] = {
        {.bytes = 40, .used_us = 10, .wanted = true}, /* 0: oldest, wanted */
        {.bytes = 30, .used_us = 20},                 /* 1: unwanted */
        {.bytes = 20, .used_us = 5, .in_use = true},  /* 2: in use: never */
        {.bytes = 10, .used_us = 30},                 /* 3: unwanted, newer */
        {.bytes = 5, .used_us = 1, .keep = true},     /* 4: the new one */
    };
    size_t out[5];
    cr_assert_eq(corral__mc_plan(e, 5, 0, 1000, false, out), 0, "no limit");
    cr_assert_eq(corral__mc_plan(e, 5, 200, 50, false, out), 0, "fits");
    /* 105 + 20 = 125 > 100: the oldest unwanted (1) first */
    cr_assert_eq(corral__mc_plan(e, 5, 100, 20, false, out), 1);
    cr_assert_eq(out[0], 1);
    /* 105 + 40 = 145 > 100: 1 then 3 (unwanted, by age) is 105; still > 100 and no wanted */
    cr_assert_eq(corral__mc_plan(e, 5, 100, 40, false, out), -1);
    cr_assert_eq(corral__mc_plan(e, 5, 100, 40, true, out), 3, "then wanted ones when allowed");
    cr_assert_eq(out[0], 1);
    cr_assert_eq(out[1], 3);
    cr_assert_eq(out[2], 0);
    cr_assert_eq(corral__mc_plan(e, 5, 20, 0, true, out), -1, "in use and keep never go");
}

Test(modelcache, fetch_file_pvc_and_bounds)
{
    char *src = tmpdir(), *dst = tmpdir(), path[256];
    snprintf(path, sizeof(path), "%s/sub", src);
    mkdir(path, 0755);
    snprintf(path, sizeof(path), "%s/a.bin", src);
    put(path, 1000);
    snprintf(path, sizeof(path), "%s/sub/b.bin", src);
    put(path, 500);
    snprintf(path, sizeof(path), "%s/escape", src);
    cr_assert_eq(symlink("/etc", path), 0);
    char uri[300], err[256];
    int64_t bytes = 0;
    corral__fetch_opts_t o = {.max_bytes = 1 << 20};
    snprintf(uri, sizeof(uri), "file://%s", src);
    cr_assert_eq(corral__fetch(uri, dst, &o, &bytes, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(bytes, 1500);
    snprintf(path, sizeof(path), "%s/sub/b.bin", dst);
    cr_assert_eq(corral__du(path), 500);
    snprintf(path, sizeof(path), "%s/escape", dst);
    struct stat st;
    cr_assert_neq(lstat(path, &st), 0, "links are not followed nor copied");
    cr_assert_eq(corral__du(dst), 1500);
    corral__rmtree(dst);
    mkdir(dst, 0755);
    o.max_bytes = 1200;
    cr_assert_eq(corral__fetch(uri, dst, &o, &bytes, err, sizeof(err)), CORRAL_ETOOBIG);
    cr_assert(strstr(err, "1200"), "%s", err);
    corral__rmtree(dst);
    mkdir(dst, 0755);
    /* pvc://CLAIM/path under the root; one file */
    o = (corral__fetch_opts_t){.max_bytes = 1 << 20, .pvc_root = "/nonexistent"};
    cr_assert_neq(corral__fetch("pvc://claim/a.bin", dst, &o, &bytes, err, sizeof(err)), 0);
    char root[128];
    snprintf(root, sizeof(root), "%s", src);
    char *slash = strrchr(root, '/');
    *slash = '\0';
    o.pvc_root = root;
    snprintf(uri, sizeof(uri), "pvc://%s/sub/b.bin", slash + 1);
    cr_assert_eq(corral__fetch(uri, dst, &o, &bytes, err, sizeof(err)), 0, "%s", err);
    snprintf(path, sizeof(path), "%s/b.bin", dst);
    cr_assert_eq(corral__du(path), 500, "a file lands under its own name");
    snprintf(uri, sizeof(uri), "pvc://%s/../etc", slash + 1);
    cr_assert_eq(corral__fetch(uri, dst, &o, &bytes, err, sizeof(err)), CORRAL_EINVAL);
    o.pvc_root = NULL;
    cr_assert_eq(corral__fetch("pvc://c/x", dst, &o, &bytes, err, sizeof(err)), CORRAL_EINVAL);
    cr_assert(strstr(err, "--pvc-root"), "%s", err);
    cr_assert_eq(corral__fetch("file://relative", dst, &o, &bytes, err, sizeof(err)),
                 CORRAL_EINVAL);
    cr_assert_eq(corral__fetch("s3://bucket/model", dst, &o, &bytes, err, sizeof(err)),
                 CORRAL_EINVAL);
    cr_assert(strstr(err, "s3://"), "%s", err);
    corral__rmtree(dst);
    corral__rmtree(src);
}

/* A one-shot HTTP server: answers every request with body (n bytes) or 404. */
typedef struct srv {
    int fd, port;
    size_t n;
} srv_t;

static void *serve(void *arg)
{
    srv_t *s = arg;
    for (;;) {
        int c = accept(s->fd, NULL, NULL);
        if (c < 0)
            return NULL;
        char buf[2048];
        ssize_t r = read(c, buf, sizeof(buf) - 1);
        buf[r > 0 ? r : 0] = '\0';
        char head[256];
        bool found = strstr(buf, "GET /models/w.bin ") != NULL;
        int len = snprintf(head, sizeof(head),
                           "HTTP/1.1 %s\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
                           found ? "200 OK" : "404 Not Found", found ? s->n : 0);
        /* (MSG_NOSIGNAL: a client that gives up mid-body, as the size-bound
         * case does, must not kill the test with SIGPIPE) */
        ssize_t w = send(c, head, (size_t)len, MSG_NOSIGNAL);
        for (size_t i = 0; found && w > 0 && i < s->n; i += 4096) {
            char chunk[4096];
            memset(chunk, 'x', sizeof(chunk));
            w = send(c, chunk, s->n - i < 4096 ? s->n - i : 4096, MSG_NOSIGNAL);
        }
        close(c);
    }
}

static void start_srv(srv_t *s, pthread_t *th)
{
    s->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET};
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    cr_assert_eq(bind(s->fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    listen(s->fd, 8);
    socklen_t l = sizeof(sa);
    getsockname(s->fd, (struct sockaddr *)&sa, &l);
    s->port = ntohs(sa.sin_port);
    pthread_create(th, NULL, serve, s);
}

static void stop_srv(srv_t *s, pthread_t th)
{
    shutdown(s->fd, SHUT_RDWR);
    close(s->fd);
    pthread_join(th, NULL);
}

Test(modelcache, fetch_http)
{
    srv_t s = {.n = 50000};
    pthread_t th;
    start_srv(&s, &th);
    char *dst = tmpdir(), uri[128], err[256], path[256];
    int64_t bytes = 0;
    corral__fetch_opts_t o = {.max_bytes = 1 << 20};
    snprintf(uri, sizeof(uri), "http://127.0.0.1:%d/models/w.bin", s.port);
    cr_assert_eq(corral__fetch(uri, dst, &o, &bytes, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(bytes, 50000);
    snprintf(path, sizeof(path), "%s/w.bin", dst);
    cr_assert_eq(corral__du(path), 50000);
    corral__rmtree(dst);
    mkdir(dst, 0755);
    o.max_bytes = 10000;
    cr_assert_eq(corral__fetch(uri, dst, &o, &bytes, err, sizeof(err)), CORRAL_ETOOBIG, "%s", err);
    corral__rmtree(dst);
    mkdir(dst, 0755);
    o.max_bytes = 1 << 20;
    snprintf(uri, sizeof(uri), "http://127.0.0.1:%d/nothing", s.port);
    cr_assert_eq(corral__fetch(uri, dst, &o, &bytes, err, sizeof(err)), CORRAL_EIO);
    cr_assert(strstr(err, "404"), "%s", err);
    corral__rmtree(dst);
    stop_srv(&s, th);
}

/* Wait (bounded) for name to reach a final state. */
static corral__mc_state_t wait_state(corral__mcache_t *mc, const char *name, const char *uri)
{
    char msg[256];
    corral__mc_state_t st = CORRAL__MC_PENDING;
    for (int i = 0; i < 1000; i++) {
        st = corral__mc_request(mc, name, uri, msg, sizeof(msg));
        if (st == CORRAL__MC_READY || st == CORRAL__MC_ERROR)
            break;
        usleep(10000);
    }
    return st;
}

static corral__mc_state_t state_of(corral__mcache_t *mc, const char *name)
{
    corral__mc_info_t *inf = NULL;
    size_t n = corral__mc_list(mc, &inf);
    corral__mc_state_t st = CORRAL__MC_ABSENT;
    for (size_t i = 0; i < n; i++)
        if (!strcmp(inf[i].name, name))
            st = inf[i].state;
    corral_free(inf);
    return st;
}

Test(modelcache, cache_downloads_evicts_and_takes_back)
{
    char *src = tmpdir(), *dir = tmpdir(), path[256], uri[3][300];
    const char *names[] = {"a", "b", "c"};
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof(path), "%s/%s", src, names[i]);
        mkdir(path, 0755);
        snprintf(path, sizeof(path), "%s/%s/w.bin", src, names[i]);
        put(path, 4000);
        snprintf(uri[i], sizeof(uri[i]), "file://%s/%s", src, names[i]);
    }
    /* a crash's leftovers: a half download is removed, a complete entry kept */
    snprintf(path, sizeof(path), "%s/.tmp-a-7", dir);
    mkdir(path, 0755);
    corral__mcache_t *mc = corral__mc_new(dir, NULL, NULL);
    cr_assert_not_null(mc);
    cr_assert_neq(access(path, F_OK), 0, "the unfinished download is gone");
    corral__mc_start(mc);
    corral__mc_set_limit(mc, 10000);
    const char *u[] = {uri[0], uri[1]};
    int64_t sizes[] = {4000, 4000};
    corral__mc_want(mc, names, u, sizes, 2);
    cr_assert_eq(wait_state(mc, "a", uri[0]), CORRAL__MC_READY);
    cr_assert_eq(wait_state(mc, "b", uri[1]), CORRAL__MC_READY);
    snprintf(path, sizeof(path), "%s/a/w.bin", dir);
    cr_assert_eq(corral__du(path), 4000);
    /* a is in use; b is no longer wanted: c (a pod's request) evicts b, not a */
    const char *use[] = {"a"};
    corral__mc_set_in_use(mc, use, 1);
    corral__mc_want(mc, names, u, sizes, 1);
    cr_assert_eq(wait_state(mc, "c", uri[2]), CORRAL__MC_READY);
    cr_assert_eq(state_of(mc, "a"), CORRAL__MC_READY);
    cr_assert_eq(state_of(mc, "b"), CORRAL__MC_ABSENT);
    snprintf(path, sizeof(path), "%s/b", dir);
    cr_assert_neq(access(path, F_OK), 0, "b's directory removed");
    corral__mc_free(mc);
    /* a restart takes back what is on disk */
    mc = corral__mc_new(dir, NULL, NULL);
    cr_assert_eq(state_of(mc, "a"), CORRAL__MC_READY);
    cr_assert_eq(state_of(mc, "c"), CORRAL__MC_READY);
    char msg[256];
    cr_assert_eq(corral__mc_request(mc, "c", uri[2], msg, sizeof(msg)), CORRAL__MC_READY, "a hit");
    cr_assert_eq(corral__mc_request(mc, "../x", uri[2], msg, sizeof(msg)), CORRAL__MC_ERROR);
    corral__mc_free(mc);
    corral__rmtree(dir);
    corral__rmtree(src);
}

Test(modelcache, wanted_cache_that_does_not_fit)
{
    char *src = tmpdir(), *dir = tmpdir(), path[256], uri[300];
    snprintf(path, sizeof(path), "%s/big.bin", src);
    put(path, 5000);
    snprintf(uri, sizeof(uri), "file://%s/big.bin", src);
    corral__mcache_t *mc = corral__mc_new(dir, NULL, NULL);
    corral__mc_start(mc);
    corral__mc_set_limit(mc, 4096);
    const char *n[] = {"big"}, *u[] = {uri};
    int64_t sz[] = {5000};
    corral__mc_want(mc, n, u, sz, 1);
    corral__mc_state_t st = CORRAL__MC_PENDING;
    for (int i = 0; i < 500 && st != CORRAL__MC_ERROR; i++) {
        usleep(10000);
        st = state_of(mc, "big");
    }
    cr_assert_eq(st, CORRAL__MC_ERROR, "larger than storageLimit: not downloaded");
    corral__mc_free(mc);
    corral__rmtree(dir);
    corral__rmtree(src);
}

Test(modelcache, args_mount_rewrite)
{
    corral_arena_t a;
    corral_arena_init(&a);
    char *argv[] = {"/mnt/models/bin",
                    "/mnt/models",
                    "--model=/mnt/models/llama",
                    "/mnt/modelsX",
                    "--x=/mnt/models",
                    "-m",
                    "a/mnt/models",
                    NULL};
    corral__argv_model_dir(&a, argv, "/cache/m1");
    cr_assert_str_eq(argv[0], "/mnt/models/bin", "not the program");
    cr_assert_str_eq(argv[1], "/cache/m1");
    cr_assert_str_eq(argv[2], "--model=/cache/m1/llama");
    cr_assert_str_eq(argv[3], "/mnt/modelsX");
    cr_assert_str_eq(argv[4], "--x=/cache/m1");
    cr_assert_str_eq(argv[6], "a/mnt/models");
    corral__argv_model_dir(&a, argv, NULL);
    corral_arena_fini(&a);
}
