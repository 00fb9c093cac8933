/*
 * bench/agent_scrape: the cost of one scrape of a node agent with 8
 * simulated H100s held by pods and 100 pods (2 containers each) in its
 * resource snapshot: rendering /metrics (DCGM) and /metrics/resource in
 * process, and the same two pages fetched over HTTP from the agent's log
 * server on 127.0.0.1 (a new connection per GET, as Prometheus' scrape of
 * a kubelet through the API server proxy makes). Prints the mean wall time
 * and the process CPU time per scrape, and the page sizes.
 *
 *   build/bench/agent_scrape [ROUNDS]      (default 2000)
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "agent/agent_int.h"
#include "agent/logserver.h"
#include "agent/telemetry.h"

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* GET path over a new connection; returns the bytes read. */
static size_t http_get(int port, const char *path)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
        perror("connect");
        exit(1);
    }
    char req[256];
    int n = snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", path);
    if (write(fd, req, (size_t)n) != n) {
        perror("write");
        exit(1);
    }
    static char buf[1 << 16];
    size_t total = 0;
    ssize_t k;
    while ((k = read(fd, buf, sizeof(buf))) > 0)
        total += (size_t)k;
    close(fd);
    return total;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? (int)strtol(argv[1], NULL, 10) : 2000;
    if (rounds <= 0)
        rounds = 2000;
    corral_gpu_inventory_t inv;
    char err[256];
    if (corral_gpu_discover("sim:h100-sxm-8", "bench-node", &inv, err, sizeof(err)) != 0) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    int64_t t0 = corral__now_us();
    corral__telem_t *t = corral__telem_new(&inv, "bench-node", t0);
    char names[100][32];
    corral__ctr_usage_t u[200];
    corral__gpu_owner_t own[8];
    for (int i = 0; i < 100; i++) {
        snprintf(names[i], sizeof(names[i]), "job-%03d-worker", i);
        u[2 * i] = (corral__ctr_usage_t){"team-a", names[i], "main", 10.0 + i, 1e9};
        u[2 * i + 1] = (corral__ctr_usage_t){"team-a", names[i], "sidecar", 0.5, 5e7};
        if (i < 8)
            own[i] = (corral__gpu_owner_t){"team-a", names[i], "main", 60 + 4 * i};
    }
    corral__telem_set_owners(t, own, 8, t0);
    corral__telem_set_usage(t, 12345.6, 6e10, u, 200, t0);

    corral_buf_t b;
    corral_buf_init(&b);
    size_t dcgm_len = 0, res_len = 0;
    double w0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    for (int r = 0; r < rounds; r++) {
        int64_t now = t0 + (int64_t)r * 1000000; /* a scrape a second of simulated time */
        corral_buf_reset(&b);
        corral__telem_render_dcgm(t, now, &b);
        dcgm_len = b.len;
        corral_buf_reset(&b);
        corral__telem_render_resource(t, now, &b);
        res_len = b.len;
    }
    double w1 = clock_s(CLOCK_MONOTONIC), c1 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    printf("render  /metrics (%zu B) + /metrics/resource (%zu B): %.1f us wall, %.1f us CPU "
           "per scrape (%d rounds)\n",
           dcgm_len, res_len, (w1 - w0) / rounds * 1e6, (c1 - c0) / rounds * 1e6, rounds);

    corral_agent_logserver_t *s = corral_agent_logserver_new(NULL, corral__agent_page);
    int port = 0;
    if (corral_agent_logserver_listen(s, "127.0.0.1:0", t, false, &port, err, sizeof(err)) != 0 ||
        corral_agent_logserver_run(s, err, sizeof(err)) != 0) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    int hr = rounds / 4 > 0 ? rounds / 4 : 1;
    size_t got = 0;
    w0 = clock_s(CLOCK_MONOTONIC);
    c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    for (int r = 0; r < hr; r++)
        got = http_get(port, "/metrics") + http_get(port, "/metrics/resource");
    w1 = clock_s(CLOCK_MONOTONIC);
    c1 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    printf("HTTP    GET /metrics + GET /metrics/resource (%zu B with heads): %.1f us wall, %.1f us "
           "CPU (server and client) per scrape (%d rounds)\n",
           got, (w1 - w0) / hr * 1e6, (c1 - c0) / hr * 1e6, hr);
    corral_agent_logserver_stop(s);
    corral_buf_fini(&b);
    corral__telem_free(t);
    corral_gpu_inventory_fini(&inv);
    return 0;
}
