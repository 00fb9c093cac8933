/* The API server over HTTP, part 3: watch streams (initial state, resume
 * from a resourceVersion, selector transitions, the on-disk log, 410 for
 * compacted revisions, bookmarks, timeouts, slow watchers) and the HTTP
 * framing itself (pipelining, chunked bodies, 100-continue, 413, HTTP/1.0). */
#include "api_test.h"

#define CMS "/api/v1/namespaces/default/configmaps"

static void cm(const char *name, const char *labels)
{
    char body[512];
    snprintf(body, sizeof(body), "{\"metadata\":{\"name\":\"%s\",\"labels\":{%s}}}", name,
             labels ? labels : "");
    api_resp_t r;
    API_EXPECT(&r, 201, "POST", CMS, NULL, body);
    api_free(&r);
}

static long patch_labels(const char *name, const char *labels)
{
    char body[512], path[256];
    snprintf(body, sizeof(body), "{\"metadata\":{\"labels\":{%s}}}", labels);
    snprintf(path, sizeof(path), CMS "/%s", name);
    api_resp_t r;
    API_EXPECT(&r, 200, "PATCH", path, "application/merge-patch+json", body);
    long rv = strtol(api_str(r.json, "metadata.resourceVersion"), NULL, 10);
    api_free(&r);
    return rv;
}

static void del(const char *name)
{
    char path[256];
    snprintf(path, sizeof(path), CMS "/%s", name);
    api_resp_t r;
    API_EXPECT(&r, 200, "DELETE", path, NULL, NULL);
    api_free(&r);
}

TestSuite(watch, .init = api_start, .fini = api_stop, .timeout = 30);

Test(watch, initial_state_then_changes)
{
    cm("a", NULL);
    api_watch_t *w = api_watch_open(CMS "?watch=1");
    api_expect_event(w, "ADDED", "a");
    cr_assert_eq(w->code, 200);
    cm("b", NULL);
    api_expect_event(w, "ADDED", "b");
    patch_labels("a", "\"x\":\"1\"");
    api_expect_event(w, "MODIFIED", "a");
    del("b");
    api_expect_event(w, "DELETED", "b");
    cr_assert_null(api_watch_next(w, 200), "nothing else");
    api_watch_close(w);
}

Test(watch, resume_from_resource_version)
{
    cm("a", NULL);
    long rv = patch_labels("a", "\"x\":\"1\"");
    patch_labels("a", "\"x\":\"2\"");
    cm("b", NULL);
    char path[256];
    snprintf(path, sizeof(path), CMS "?watch=true&resourceVersion=%ld", rv);
    api_watch_t *w = api_watch_open(path);
    api_expect_event(w, "MODIFIED", "a");
    cr_assert(strstr(w->line, "\"x\":\"2\""));
    api_expect_event(w, "ADDED", "b");
    cr_assert_null(api_watch_next(w, 200));
    api_watch_close(w);
    /* Deprecated path form, every namespace. */
    snprintf(path, sizeof(path), "/api/v1/watch/configmaps?resourceVersion=%ld", rv);
    w = api_watch_open(path);
    api_expect_event(w, "MODIFIED", "a");
    api_watch_close(w);
}

Test(watch, selectors_turn_changes_into_added_and_deleted)
{
    cm("a", "\"team\":\"ml\"");
    api_watch_t *w = api_watch_open(CMS "?watch=1&labelSelector=team%3Dml");
    api_expect_event(w, "ADDED", "a");
    long rv = patch_labels("a", "\"team\":\"web\"");
    api_expect_event(w, "DELETED", "a");
    cr_assert(strstr(w->line, "\"team\":\"ml\""), "the object as it last matched: %s", w->line);
    char want[64];
    snprintf(want, sizeof(want), "\"resourceVersion\":\"%ld\"", rv);
    cr_assert(strstr(w->line, want), "with the revision of the change: %s", w->line);
    patch_labels("a", "\"team\":\"ml\"");
    api_expect_event(w, "ADDED", "a");
    patch_labels("a", "\"other\":\"1\"");
    api_expect_event(w, "MODIFIED", "a");
    cm("b", "\"team\":\"web\"");
    del("a");
    api_expect_event(w, "DELETED", "a");
    cr_assert_null(api_watch_next(w, 200), "b never matched");
    api_watch_close(w);
}

Test(watch, field_selector_on_node_name)
{
    api_resp_t r;
    API_EXPECT(&r, 201, "POST", "/api/v1/namespaces/default/pods", NULL,
               "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":\"c\","
               "\"image\":\"i\"}]}}");
    api_free(&r);
    api_watch_t *w = api_watch_open("/api/v1/pods?watch=1&fieldSelector=spec.nodeName%3Dn1");
    cr_assert_null(api_watch_next(w, 200));
    API_EXPECT(&r, 201, "POST", "/api/v1/namespaces/default/pods/p/binding", NULL,
               "{\"metadata\":{\"name\":\"p\"},\"target\":{\"name\":\"n1\"}}");
    api_free(&r);
    api_expect_event(w, "ADDED", "p");
    api_watch_close(w);
}

static void small_history(corral_apiserver_opts_t *o)
{
    o->store.history = 5;
    o->store.ring_events = 4;
}

Test(watch, compacted_revision_gets_410, .init = NULL)
{
    api_start_with(small_history);
    cm("a", NULL);
    for (int i = 0; i < 20; i++) {
        char l[32];
        snprintf(l, sizeof(l), "\"i\":\"%d\"", i);
        patch_labels("a", l);
    }
    api_watch_t *w = api_watch_open(CMS "?watch=1&resourceVersion=8");
    const char *l = api_watch_next(w, 3000);
    cr_assert_not_null(l);
    cr_assert(strncmp(l, "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\"", 40) == 0, "%s", l);
    cr_assert(strstr(l, "\"reason\":\"Expired\""), "%s", l);
    cr_assert(strstr(l, "\"code\":410"), "%s", l);
    cr_assert(strstr(l, "too old resource version: 8"), "%s", l);
    cr_assert_null(api_watch_next(w, 1000));
    cr_assert(w->ended, "the stream ends after the error");
    api_watch_close(w);
    api_stop();
}

static void tiny_ring(corral_apiserver_opts_t *o)
{
    o->store.ring_events = 3;
}

Test(watch, old_revisions_come_from_the_disk_log, .init = NULL)
{
    api_start_with(tiny_ring);
    cm("a", NULL);
    long first = patch_labels("a", "\"i\":\"0\"");
    for (int i = 1; i < 12; i++) {
        char l[32];
        snprintf(l, sizeof(l), "\"i\":\"%d\"", i);
        patch_labels("a", l);
    }
    cm("z", NULL);
    char path[128];
    snprintf(path, sizeof(path), CMS "?watch=1&resourceVersion=%ld", first);
    api_watch_t *w = api_watch_open(path);
    for (int i = 1; i < 12; i++) {
        api_expect_event(w, "MODIFIED", "a");
        char want[32];
        snprintf(want, sizeof(want), "\"i\":\"%d\"", i);
        cr_assert(strstr(w->line, want), "event %d out of order: %.200s", i, w->line);
    }
    api_expect_event(w, "ADDED", "z");
    cm("live", NULL);
    api_expect_event(w, "ADDED", "live");
    api_watch_close(w);
    api_stop();
}

static void fast_bookmarks(corral_apiserver_opts_t *o)
{
    o->bookmark_ms = 100;
}

Test(watch, bookmarks_and_timeout, .init = NULL)
{
    api_start_with(fast_bookmarks);
    cm("a", NULL);
    api_watch_t *w = api_watch_open(CMS "?watch=1&allowWatchBookmarks=true&timeoutSeconds=1");
    api_expect_event(w, "ADDED", "a");
    const char *l = api_watch_next(w, 2000);
    cr_assert_not_null(l);
    cr_assert(strstr(l, "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"ConfigMap\",\"apiVersion\":"
                        "\"v1\",\"metadata\":{\"resourceVersion\":\""),
              "%s", l);
    while (api_watch_next(w, 3000))
        ;
    cr_assert(w->ended, "timeoutSeconds ends the stream");
    api_watch_close(w);
    api_stop();
}

static void slow_setup(corral_apiserver_opts_t *o)
{
    o->watch_buffer = 32 << 10;
    o->store.ring_events = 50;
}

/* A watcher that never reads must not hold up writers or other watchers,
 * and is dropped with 410 once the ring has moved past it. */
Test(watch, slow_watcher_is_dropped_not_waited_for, .init = NULL)
{
    api_start_with(slow_setup);
    int slow = api_connect_rcvbuf(64 << 10);
    api_send(slow, "GET " CMS "?watch=1&resourceVersion=0 HTTP/1.1\r\nHost: t\r\n\r\n");
    api_watch_t *fast = api_watch_open(CMS "?watch=1");
    static char pad[16384];
    memset(pad, 'x', sizeof(pad) - 1);
    pad[sizeof(pad) - 1] = '\0';
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int got = 0;
    for (int i = 0; i < 400; i++) {
        static char body[17000];
        snprintf(body, sizeof(body), "{\"metadata\":{\"name\":\"c%d\"},\"data\":{\"pad\":\"%s\"}}",
                 i, pad);
        api_resp_t r;
        API_EXPECT(&r, 201, "POST", CMS, NULL, body);
        api_free(&r);
        while (api_watch_next(fast, 0))
            got++;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    cr_assert_lt(secs, 20.0, "writers were held up (%.1f s)", secs);
    /* The watcher that keeps reading got everything. */
    while (got < 400 && api_watch_next(fast, 2000))
        got++;
    cr_assert_eq(got, 400);
    api_watch_close(fast);
    /* The slow one: what it reads ends with 410 Expired. */
    api_watch_t s = {0};
    api_watch_t *w = calloc(1, sizeof(*w));
    *w = s;
    corral_buf_init(&w->in);
    corral_buf_init(&w->body);
    w->fd = slow;
    const char *l, *last = NULL;
    static char keep[512];
    while ((l = api_watch_next(w, 2000))) {
        snprintf(keep, sizeof(keep), "%.500s", l);
        last = keep;
    }
    cr_assert_not_null(last);
    cr_assert(strstr(last, "\"type\":\"ERROR\"") && strstr(last, "\"code\":410"), "%s", last);
    api_watch_close(w);
    api_stop();
}

/* --- HTTP framing -------------------------------------------------------------------------- */

static size_t read_all(int fd, char *buf, size_t cap, int timeout_ms)
{
    size_t n = 0;
    struct pollfd p = {fd, POLLIN, 0};
    while (n + 1 < cap && poll(&p, 1, timeout_ms) > 0) {
        ssize_t k = read(fd, buf + n, cap - n - 1);
        if (k <= 0)
            break;
        n += (size_t)k;
    }
    buf[n] = '\0';
    return n;
}

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p++)
        n++;
    return n;
}

TestSuite(http, .init = api_start, .fini = api_stop, .timeout = 30);

Test(http, pipelined_requests)
{
    int fd = api_connect();
    api_send(fd, "GET /healthz HTTP/1.1\r\nHost: t\r\n\r\nGET /version HTTP/1.1\r\nHost: t\r\n\r\n"
                 "GET /api/v1/namespaces/default/pods/none HTTP/1.1\r\nHost: t\r\nConnection: "
                 "close\r\n\r\n");
    static char buf[65536];
    read_all(fd, buf, sizeof(buf), 2000);
    cr_assert_eq(count(buf, "HTTP/1.1 200 OK\r\n"), 2, "%s", buf);
    cr_assert_eq(count(buf, "HTTP/1.1 404 Not Found\r\n"), 1, "%s", buf);
    cr_assert(strstr(buf, "ok") < strstr(buf, "gitVersion"), "in order");
    close(fd);
}

Test(http, chunked_request_body_and_continue)
{
    int fd = api_connect();
    const char *json = "{\"metadata\":{\"name\":\"chunky\"}}";
    char req[512];
    snprintf(req, sizeof(req),
             "POST " CMS " HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
             "Transfer-Encoding: chunked\r\nExpect: 100-continue\r\n\r\n");
    api_send(fd, req);
    static char buf[65536];
    read_all(fd, buf, sizeof(buf), 300);
    cr_assert(strstr(buf, "HTTP/1.1 100 Continue\r\n"), "%s", buf);
    snprintf(req, sizeof(req), "a\r\n%.10s\r\n%zx\r\n%s\r\n0\r\n\r\n", json, strlen(json) - 10,
             json + 10);
    api_send(fd, req);
    read_all(fd, buf, sizeof(buf), 1000);
    cr_assert(strstr(buf, "HTTP/1.1 201 Created\r\n"), "%s", buf);
    close(fd);
    api_resp_t r;
    API_EXPECT(&r, 200, "GET", CMS "/chunky", NULL, NULL);
    api_free(&r);
}

Test(http, bodies_over_3_mib_get_413)
{
    int fd = api_connect();
    api_send(fd, "POST " CMS " HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
                 "Content-Length: 3145729\r\n\r\n");
    static char buf[65536];
    read_all(fd, buf, sizeof(buf), 1000);
    cr_assert(strstr(buf, "HTTP/1.1 413 Request Entity Too Large\r\n"), "%s", buf);
    cr_assert(strstr(buf, "\"reason\":\"RequestEntityTooLarge\""), "%s", buf);
    cr_assert(strstr(buf, "\"code\":413"));
    close(fd);
    /* A chunked body that grows past the limit. */
    fd = api_connect();
    api_send(fd, "POST " CMS " HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n");
    static char chunk[1 << 20];
    memset(chunk, 'x', sizeof(chunk));
    char head[32];
    for (int i = 0; i < 4; i++) {
        snprintf(head, sizeof(head), "%x\r\n", (unsigned)sizeof(chunk));
        api_send(fd, head);
        if (write(fd, chunk, sizeof(chunk)) < 0)
            break; /* the server may already have closed */
        api_send(fd, "\r\n");
    }
    read_all(fd, buf, sizeof(buf), 1000);
    cr_assert(strstr(buf, "413"), "%s", buf);
    close(fd);
    /* The limit is exactly 3 MiB: a body of 3 MiB is read (and then judged). */
    char *big = malloc((3 << 20) + 1);
    memset(big, ' ', 3 << 20);
    big[3 << 20] = '\0';
    memcpy(big, "{\"metadata\":{\"name\":\"big\"}}", 27);
    api_resp_t r;
    API_EXPECT(&r, 201, "POST", CMS, NULL, big);
    api_free(&r);
    free(big);
}

Test(http, malformed_requests)
{
    int fd = api_connect();
    api_send(fd, "GARBAGE\r\n\r\n");
    static char buf[4096];
    read_all(fd, buf, sizeof(buf), 1000);
    cr_assert(strstr(buf, "HTTP/1.1 400 Bad Request\r\n"), "%s", buf);
    cr_assert(strstr(buf, "Connection: close"), "%s", buf);
    cr_assert(strstr(buf, "\"kind\":\"Status\""));
    close(fd);
    fd = api_connect();
    api_send(fd, "GET /healthz HTTP/1.0\r\n\r\n");
    read_all(fd, buf, sizeof(buf), 1000);
    cr_assert(strncmp(buf, "HTTP/1.0 200 OK\r\n", 17) == 0, "%s", buf);
    cr_assert(strstr(buf, "Connection: close"), "%s", buf);
    close(fd);
    fd = api_connect();
    api_send(fd, "GET /api/v1/namespaces/%zz HTTP/1.1\r\n\r\n");
    read_all(fd, buf, sizeof(buf), 500);
    cr_assert(strstr(buf, " 400 "), "%s", buf);
    close(fd);
}

Test(http, watch_then_next_request_on_same_connection)
{
    int fd = api_connect();
    api_send(fd, "GET " CMS "?watch=1&timeoutSeconds=1 HTTP/1.1\r\nHost: t\r\n\r\n"
                 "GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
    static char buf[65536];
    read_all(fd, buf, sizeof(buf), 3000);
    cr_assert(strstr(buf, "Transfer-Encoding: chunked"), "%s", buf);
    cr_assert(strstr(buf, "0\r\n\r\nHTTP/1.1 200 OK"), "the watch ends, then the next answer: %s",
              buf);
    close(fd);
}
