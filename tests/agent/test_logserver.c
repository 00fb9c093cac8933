/* The agent's log server over a temporary directory of fake log files:
 * whole logs, tailLines, limitBytes, previous instances, a follow that
 * streams appended lines and ends when the instance's .exit appears, the
 * newest pod directory winning, and 404/400 Status answers. */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent/logserver.h"
#include "corral/buf.h"

static char root[64];
static corral_agent_logserver_t *srv;
static int port;

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void put(const char *rel, const char *text, const char *mode)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", root, rel);
    /* mkdir -p of the parent */
    for (char *p = path + strlen(root) + 1; (p = strchr(p, '/')) != NULL; p++) {
        *p = '\0';
        mkdir(path, 0755);
        *p = '/';
    }
    FILE *fp = fopen(path, mode);
    cr_assert_not_null(fp, "%s", path);
    fputs(text, fp);
    fclose(fp);
}

static void setup(void)
{
    snprintf(root, sizeof(root), "/tmp/corral-logs-XXXXXX");
    cr_assert_not_null(mkdtemp(root));
    char err[256] = "";
    cr_assert_eq(corral_agent_logserver_start(root, "127.0.0.1:0", &port, &srv, err, sizeof(err)),
                 0, "%s", err);
    cr_assert_gt(port, 0);
}

static void teardown(void)
{
    corral_agent_logserver_stop(srv);
    nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static int connect_to(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    cr_assert_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    return fd;
}

static int open_get(const char *path)
{
    int fd = connect_to();
    char req[512];
    int n = snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: t\r\n\r\n", path);
    cr_assert_eq(write(fd, req, (size_t)n), n);
    return fd;
}

/* Read into b until the peer closes (true) or timeout_ms passes (false). */
static bool read_until_close(int fd, corral_buf_t *b, int timeout_ms)
{
    for (;;) {
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, timeout_ms) <= 0)
            return false;
        char buf[4096];
        ssize_t k = read(fd, buf, sizeof(buf));
        if (k <= 0)
            return true;
        corral_buf_append(b, buf, (size_t)k);
    }
}

/* Wait until b holds text (true) or timeout. */
static bool read_until(int fd, corral_buf_t *b, const char *text, int timeout_ms)
{
    for (int waited = 0; waited < timeout_ms; waited += 50) {
        if (b->p && strstr(b->p, text))
            return true;
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 50) > 0) {
            char buf[4096];
            ssize_t k = read(fd, buf, sizeof(buf));
            if (k <= 0)
                break;
            corral_buf_append(b, buf, (size_t)k);
        }
    }
    return b->p && strstr(b->p, text);
}

/* GET path; returns the status code and the body in body. */
static int get(const char *path, corral_buf_t *body)
{
    int fd = open_get(path);
    corral_buf_t raw;
    corral_buf_init(&raw);
    cr_assert(read_until_close(fd, &raw, 5000), "no end of answer for %s", path);
    close(fd);
    cr_assert_not_null(raw.p);
    int code = (int)strtol(raw.p + 9, NULL, 10);
    const char *b = strstr(raw.p, "\r\n\r\n");
    cr_assert_not_null(b);
    corral_buf_reset(body);
    corral_buf_puts(body, b + 4);
    corral_buf_fini(&raw);
    return code;
}

#define POD "logs/default_p_1111/main/"

TestSuite(logserver, .init = setup, .fini = teardown, .timeout = 30);

Test(logserver, whole_tail_limit)
{
    put(POD "0.log", "one\ntwo\nthree\n", "w");
    corral_buf_t b;
    corral_buf_init(&b);
    cr_assert_eq(get("/containerLogs/default/p/main", &b), 200);
    cr_assert_str_eq(corral_buf_str(&b), "one\ntwo\nthree\n");
    cr_assert_eq(get("/containerLogs/default/p/main?tailLines=1", &b), 200);
    cr_assert_str_eq(corral_buf_str(&b), "three\n");
    cr_assert_eq(get("/containerLogs/default/p/main?tailLines=2", &b), 200);
    cr_assert_str_eq(corral_buf_str(&b), "two\nthree\n");
    cr_assert_eq(get("/containerLogs/default/p/main?tailLines=10", &b), 200);
    cr_assert_str_eq(corral_buf_str(&b), "one\ntwo\nthree\n");
    cr_assert_eq(get("/containerLogs/default/p/main?tailLines=0", &b), 200);
    cr_assert_str_eq(corral_buf_str(&b), "");
    cr_assert_eq(get("/containerLogs/default/p/main?limitBytes=5", &b), 200);
    cr_assert_str_eq(corral_buf_str(&b), "one\nt");
    cr_assert_eq(get("/containerLogs/default/p/main?tailLines=x", &b), 400);
    cr_assert(strstr(corral_buf_str(&b), "tailLines"));
    corral_buf_fini(&b);
}

Test(logserver, tail_of_a_line_without_newline)
{
    put(POD "0.log", "a\nb\npartial", "w");
    corral_buf_t b;
    corral_buf_init(&b);
    cr_assert_eq(get("/containerLogs/default/p/main?tailLines=1", &b), 200);
    cr_assert_str_eq(corral_buf_str(&b), "partial");
    cr_assert_eq(get("/containerLogs/default/p/main?tailLines=2", &b), 200);
    cr_assert_str_eq(corral_buf_str(&b), "b\npartial");
    corral_buf_fini(&b);
}

Test(logserver, previous_instance)
{
    put(POD "0.log", "first run\n", "w");
    put(POD "0.exit", "1\n", "w");
    put(POD "1.log", "second run\n", "w");
    corral_buf_t b;
    corral_buf_init(&b);
    cr_assert_eq(get("/containerLogs/default/p/main", &b), 200);
    cr_assert_str_eq(corral_buf_str(&b), "second run\n");
    cr_assert_eq(get("/containerLogs/default/p/main?previous=true", &b), 200);
    cr_assert_str_eq(corral_buf_str(&b), "first run\n");
    put("logs/default_q_2222/main/0.log", "only\n", "w");
    cr_assert_eq(get("/containerLogs/default/q/main?previous=true", &b), 400);
    cr_assert(strstr(corral_buf_str(&b),
                     "previous terminated container \\\"main\\\" in pod \\\"q\\\" not found"),
              "%s", corral_buf_str(&b));
    cr_assert(strstr(corral_buf_str(&b), "\"code\":400"));
    corral_buf_fini(&b);
}

Test(logserver, not_found)
{
    put(POD "0.log", "x\n", "w");
    corral_buf_t b;
    corral_buf_init(&b);
    cr_assert_eq(get("/containerLogs/default/nope/main", &b), 404);
    cr_assert(strstr(corral_buf_str(&b), "container \\\"main\\\" in pod \\\"nope\\\" is not "
                                         "available"),
              "%s", corral_buf_str(&b));
    cr_assert(strstr(corral_buf_str(&b), "\"kind\":\"Status\""));
    cr_assert_eq(get("/containerLogs/default/p/other", &b), 404);
    cr_assert_eq(get("/containerLogs/other/p/main", &b), 404);
    cr_assert_eq(get("/containerLogs/default/p/..", &b), 404);
    cr_assert_eq(get("/containerLogs/default/p", &b), 404);
    cr_assert_eq(get("/elsewhere", &b), 404);
    corral_buf_fini(&b);
}

Test(logserver, newest_pod_directory_wins)
{
    put("logs/default_p_old/main/0.log", "old pod\n", "w");
    struct timespec ts = {0, 20 * 1000 * 1000};
    nanosleep(&ts, NULL);
    put("logs/default_p_new/main/0.log", "new pod\n", "w");
    /* make the ordering certain whatever the filesystem's time granularity */
    char old[512];
    snprintf(old, sizeof(old), "%s/logs/default_p_old", root);
    struct timespec times[2] = {{1000, 0}, {1000, 0}};
    utimensat(AT_FDCWD, old, times, 0);
    corral_buf_t b;
    corral_buf_init(&b);
    cr_assert_eq(get("/containerLogs/default/p/main", &b), 200);
    cr_assert_str_eq(corral_buf_str(&b), "new pod\n");
    corral_buf_fini(&b);
}

Test(logserver, follow_streams_until_exit)
{
    put(POD "0.log", "start\n", "w");
    int fd = open_get("/containerLogs/default/p/main?follow=true");
    corral_buf_t b;
    corral_buf_init(&b);
    cr_assert(read_until(fd, &b, "start\n", 5000));
    put(POD "0.log", "more\n", "a");
    cr_assert(read_until(fd, &b, "start\nmore\n", 5000), "%s", corral_buf_str(&b));
    /* Still open: nothing says the instance ended. */
    struct pollfd p = {fd, POLLIN, 0};
    cr_assert_eq(poll(&p, 1, 300), 0);
    put(POD "0.log", "last\n", "a");
    put(POD "0.exit", "0\n", "w");
    cr_assert(read_until_close(fd, &b, 5000), "the stream did not end after .exit");
    cr_assert(strstr(corral_buf_str(&b), "\r\n\r\nstart\nmore\nlast\n"), "%s", corral_buf_str(&b));
    close(fd);
    corral_buf_fini(&b);
}

Test(logserver, follow_ends_on_a_newer_instance_and_tail_follow)
{
    put(POD "0.log", "a\nb\nc\n", "w");
    int fd = open_get("/containerLogs/default/p/main?follow=true&tailLines=1");
    corral_buf_t b;
    corral_buf_init(&b);
    cr_assert(read_until(fd, &b, "c\n", 5000));
    put(POD "1.log", "restarted\n", "w");
    cr_assert(read_until_close(fd, &b, 5000), "the stream did not end on a restart");
    const char *body = strstr(corral_buf_str(&b), "\r\n\r\n") + 4;
    cr_assert_str_eq(body, "c\n");
    close(fd);
    corral_buf_fini(&b);
}

Test(logserver, client_going_away_frees_the_stream)
{
    put(POD "0.log", "x\n", "w");
    for (int i = 0; i < 300; i++) { /* more than CORRAL_AGENT_LOG_MAX_CONNS */
        int fd = open_get("/containerLogs/default/p/main?follow=true");
        corral_buf_t b;
        corral_buf_init(&b);
        cr_assert(read_until(fd, &b, "x\n", 5000), "stream %d", i);
        corral_buf_fini(&b);
        close(fd);
    }
}
