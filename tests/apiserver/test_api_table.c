/* Table responses (Accept: application/json;as=Table;v=v1;g=meta.k8s.io),
 * as kubectl get asks: columns per kind (wide ones at priority 1), one row
 * per object with PartialObjectMetadata, the object or nothing, for get,
 * list (with continue tokens) and watch. */
#include "api_test.h"

TestSuite(table, .init = api_start, .fini = api_stop, .timeout = 30);

#define AS_TABLE "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"

/* GET path with the Table Accept header over a raw socket; the body. */
static char *get_table(const char *path)
{
    int fd = api_connect();
    char req[512];
    snprintf(req, sizeof(req),
             "GET %s HTTP/1.1\r\nHost: x\r\nAccept: " AS_TABLE "\r\n"
             "Connection: close\r\n\r\n",
             path);
    api_send(fd, req);
    corral_buf_t b;
    corral_buf_init(&b);
    char buf[65536];
    ssize_t n;
    while ((n = read(fd, buf, sizeof(buf))) > 0)
        corral_buf_append(&b, buf, (size_t)n);
    close(fd);
    const char *body = strstr(corral_buf_str(&b), "\r\n\r\n");
    cr_assert_not_null(body, "%s", corral_buf_str(&b));
    cr_assert(strstr(corral_buf_str(&b), "HTTP/1.1 200"), "%s", corral_buf_str(&b));
    char *out = strdup(body + 4);
    corral_buf_fini(&b);
    return out;
}

static void create_pods(int n)
{
    for (int i = 0; i < n; i++) {
        char body[256];
        snprintf(body, sizeof(body),
                 "{\"metadata\":{\"name\":\"p%d\",\"labels\":{\"i\":\"%d\"}},\"spec\":{"
                 "\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]}}",
                 i, i);
        api_resp_t r;
        API_EXPECT(&r, 201, "POST", "/api/v1/namespaces/default/pods", NULL, body);
        api_free(&r);
    }
}

Test(table, list_as_table)
{
    create_pods(3);
    char *t = get_table("/api/v1/namespaces/default/pods?limit=2");
    cr_assert(strstr(t,
                     "{\"kind\":\"Table\",\"apiVersion\":\"meta.k8s.io/v1\",\"columnDefinitions\":"
                     "[{\"name\":\"Name\",\"type\":\"string\",\"format\":\"name\","),
              "%s", t);
    cr_assert(strstr(t, "{\"name\":\"Nominated Node\",\"type\":\"string\",\"format\":\"\","
                        "\"description\":\"\",\"priority\":1}"),
              "%s", t);
    cr_assert(strstr(t, "{\"cells\":[\"p0\",\"0/1\",\"Pending\",\"0\","), "%s", t);
    cr_assert(strstr(t,
                     "\"object\":{\"kind\":\"PartialObjectMetadata\",\"apiVersion\":"
                     "\"meta.k8s.io/v1\",\"metadata\":{\"name\":\"p0\",\"labels\":{\"i\":\"0\"}"),
              "%s", t);
    cr_assert_null(strstr(t, "\"p2\""), "limit");
    cr_assert(strstr(t, "\"continue\":\""), "%s", t);
    free(t);
    t = get_table("/api/v1/namespaces/default/pods/p1?includeObject=Object");
    cr_assert(strstr(t, "{\"cells\":[\"p1\","), "%s", t);
    cr_assert(strstr(t, "\"object\":{\"metadata\":{\"name\":\"p1\""), "%s", t);
    cr_assert(strstr(t, "\"spec\":{"), "the whole object: %s", t);
    free(t);
    t = get_table("/apis/scheduling.volcano.sh/v1beta1/queues?includeObject=None");
    cr_assert(strstr(t, "{\"cells\":[\"default\",\"1\",\"true\",\"<none>\","), "%s", t);
    cr_assert_null(strstr(t, "\"object\""), "%s", t);
    free(t);
    /* Without the header: the plain list. */
    api_resp_t r;
    API_EXPECT(&r, 200, "GET", "/api/v1/namespaces/default/pods", NULL, NULL);
    cr_assert_str_eq(api_str(r.json, "kind"), "PodList");
    api_free(&r);
}

Test(table, watch_events_carry_one_row_tables)
{
    int fd = api_connect();
    api_send(fd, "GET /api/v1/namespaces/default/pods?watch=1 HTTP/1.1\r\nHost: x\r\n"
                 "Accept: " AS_TABLE "\r\n\r\n");
    api_watch_t *w = calloc(1, sizeof(*w));
    corral_buf_init(&w->in);
    corral_buf_init(&w->body);
    w->fd = fd;
    create_pods(1);
    const char *l = api_watch_next(w, 5000);
    cr_assert_not_null(l);
    cr_assert(strstr(l, "{\"type\":\"ADDED\",\"object\":{\"kind\":\"Table\""), "%s", l);
    cr_assert(strstr(l, "\"rows\":[{\"cells\":[\"p0\",\"0/1\",\"Pending\""), "%s", l);
    api_watch_close(w);
}
