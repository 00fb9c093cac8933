/* What the agent does for inference serving: pod addresses (candidates,
 * host-wide claims), readiness probes (spec, scheduling and counting, and
 * tcpSocket/httpGet/exec runs against local listeners and commands), the
 * workload's GPU load file, PATH and status.podIP in the environment. */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "agent/agent_int.h"
#include "corral/json.h"

static corral_val_t *parse(corral_arena_t *a, const char *json)
{
    corral_val_t *v = NULL;
    corral_json_err_t e;
    cr_assert_eq(corral_json_parse(a, json, strlen(json), &v, &e), 0, "%s", e.msg);
    return v;
}

static char *tmpdir(void)
{
    static char dir[64];
    snprintf(dir, sizeof(dir), "/tmp/corral-serving-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    return dir;
}

/* --- pod addresses -----------------------------------------------------------------------------
 */

Test(serving, podip_candidates)
{
    char ip[CORRAL__PODIP_LEN], again[CORRAL__PODIP_LEN], other[CORRAL__PODIP_LEN];
    for (int k = 0; k < 200; k++) {
        char uid[40];
        snprintf(uid, sizeof(uid), "uid-%d", k);
        corral__podip_candidate(uid, 0, ip, sizeof(ip));
        cr_assert(corral__podip_valid(ip), "%s", ip);
        cr_assert(strncmp(ip, "127.0.", 6) != 0, "never in 127.0.0.0/16: %s", ip);
        corral__podip_candidate(uid, 0, again, sizeof(again));
        cr_assert_str_eq(ip, again, "a fixed function of the uid");
        corral__podip_candidate(uid, 1, other, sizeof(other));
        cr_assert(corral__podip_valid(other));
    }
    cr_assert_not(corral__podip_valid("127.0.0.1"));
    cr_assert_not(corral__podip_valid("127.0.0.5"));
    cr_assert_not(corral__podip_valid("10.1.2.3"));
    cr_assert_not(corral__podip_valid("127.1.2.3x"));
    cr_assert_not(corral__podip_valid("127.1.2"));
    cr_assert(corral__podip_valid("127.1.2.3"));
}

Test(serving, podip_claims_are_unique_and_released)
{
    char *dir = tmpdir();
    corral__podip_t a, b, c;
    cr_assert_eq(corral__podip_claim(&a, dir, "same-uid", NULL), 0);
    /* another agent (here: the same one, another lock) with the same candidates */
    cr_assert_eq(corral__podip_claim(&b, dir, "same-uid", NULL), 0);
    cr_assert_str_neq(a.ip, b.ip, "a taken address moves the pod to its next candidate");
    /* a recorded address is tried first */
    char keep[CORRAL__PODIP_LEN];
    snprintf(keep, sizeof(keep), "%s", b.ip);
    corral__podip_release(&b);
    cr_assert_eq(b.fd, -1);
    cr_assert_eq(corral__podip_claim(&c, dir, "another", keep), 0);
    cr_assert_str_eq(c.ip, keep);
    /* the address is bindable: a server can listen on it */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET};
    inet_pton(AF_INET, a.ip, &sa.sin_addr);
    cr_assert_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0, "bind %s", a.ip);
    close(fd);
    corral__podip_release(&a);
    corral__podip_release(&c);
    corral__podip_release(&c); /* twice: no-op */
    corral__rmtree(dir);
}

/* --- probe specs and counting ------------------------------------------------------------------
 */

Test(serving, probe_parse)
{
    corral_arena_t a;
    corral_arena_init(&a);
    corral_val_t *ctr =
        parse(&a, "{\"name\":\"c\",\"ports\":[{\"name\":\"http\",\"containerPort\":8000}],"
                  "\"readinessProbe\":{\"httpGet\":{\"path\":\"/health\",\"port\":\"http\","
                  "\"httpHeaders\":[{\"name\":\"X-A\",\"value\":\"1\"},{\"name\":\"Bad\\r\\n\"}]},"
                  "\"periodSeconds\":2,\"successThreshold\":2},"
                  "\"livenessProbe\":{\"tcpSocket\":{\"port\":\"9000\"}},"
                  "\"startupProbe\":{\"tcpSocket\":{\"port\":\"nope\"}},"
                  "\"x\":{\"exec\":{\"command\":[\"true\"]},\"timeoutSeconds\":999},"
                  "\"y\":{\"exec\":{}},\"z\":{\"initialDelaySeconds\":1}}");
    corral__probe_t pb;
    char err[160];
    cr_assert_eq(corral__probe_parse(ctr, "readinessProbe", &pb, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(pb.kind, CORRAL__PROBE_HTTP);
    cr_assert_eq(pb.port, 8000, "named port resolved");
    cr_assert_str_eq(pb.path, "/health");
    cr_assert_eq(pb.nheaders, 1, "a header with CR/LF is dropped");
    cr_assert_str_eq(pb.headers[0], "X-A: 1");
    cr_assert_eq(pb.period_s, 2);
    cr_assert_eq(pb.success_th, 2);
    cr_assert_eq(pb.failure_th, 3, "default");
    cr_assert_eq(pb.timeout_s, 1, "default");
    cr_assert_null(pb.host, "the pod's address");
    corral__probe_clear(&pb);
    cr_assert_eq(corral__probe_parse(ctr, "livenessProbe", &pb, err, sizeof(err)), 0);
    cr_assert_eq(pb.kind, CORRAL__PROBE_TCP);
    cr_assert_eq(pb.port, 9000, "a numeric string is a number");
    cr_assert_eq(pb.period_s, 10);
    corral__probe_clear(&pb);
    cr_assert_neq(corral__probe_parse(ctr, "startupProbe", &pb, err, sizeof(err)), 0);
    cr_assert(strstr(err, "nope"), "%s", err);
    corral__probe_clear(&pb);
    cr_assert_eq(corral__probe_parse(ctr, "x", &pb, err, sizeof(err)), 0);
    cr_assert_eq(pb.kind, CORRAL__PROBE_EXEC);
    cr_assert_str_eq(pb.cmd[0], "true");
    cr_assert_null(pb.cmd[1]);
    cr_assert_eq(pb.timeout_s, 60, "a worker is held a minute at most");
    corral__probe_clear(&pb);
    cr_assert_neq(corral__probe_parse(ctr, "y", &pb, err, sizeof(err)), 0);
    corral__probe_clear(&pb);
    cr_assert_neq(corral__probe_parse(ctr, "z", &pb, err, sizeof(err)), 0, "no handler");
    corral__probe_clear(&pb);
    cr_assert_eq(corral__probe_parse(ctr, "absent", &pb, err, sizeof(err)), 0);
    cr_assert_eq(pb.kind, CORRAL__PROBE_NONE);
    corral_arena_fini(&a);
}

Test(serving, probe_schedule_and_thresholds)
{
    corral__probe_t pb = {.kind = CORRAL__PROBE_TCP,
                          .initial_delay_s = 2,
                          .period_s = 5,
                          .success_th = 2,
                          .failure_th = 3};
    corral__probe_state_t s = {0};
    const int64_t S = 1000000, t0 = 100 * S;
    cr_assert_not(corral__probe_due(&pb, &s, t0, t0 + S), "initial delay");
    cr_assert(corral__probe_due(&pb, &s, t0, t0 + 2 * S));
    s.busy = true;
    cr_assert_not(corral__probe_due(&pb, &s, t0, t0 + 2 * S), "one in flight at a time");
    int64_t now = t0 + 2 * S;
    cr_assert_not(corral__probe_record(&pb, &s, false, now));
    cr_assert_eq(s.next_us, now + 100000, "100 ms until the first success");
    cr_assert_not(corral__probe_record(&pb, &s, true, now));
    cr_assert_not(s.ready, "successThreshold 2");
    cr_assert_eq(s.next_us, now + 5 * S, "periodSeconds once it succeeded");
    cr_assert(corral__probe_record(&pb, &s, true, now), "ready after 2 in a row");
    cr_assert(s.ready);
    cr_assert_not(corral__probe_record(&pb, &s, false, now));
    cr_assert_not(corral__probe_record(&pb, &s, false, now));
    cr_assert(s.ready, "2 failures < failureThreshold 3");
    cr_assert_not(corral__probe_record(&pb, &s, true, now), "a success resets the failures");
    cr_assert_not(corral__probe_record(&pb, &s, false, now));
    cr_assert_not(corral__probe_record(&pb, &s, false, now));
    cr_assert(corral__probe_record(&pb, &s, false, now), "3 in a row: unready");
    cr_assert_not(s.ready);
    cr_assert_eq(s.next_us, now + 5 * S, "still periodSeconds after a success once");
    corral__ctr_t c = {.st = CORRAL__C_RUNNING, .rp = &pb, .rs = s};
    cr_assert_not(corral__ctr_ready(&c));
    c.rs.ready = true;
    cr_assert(corral__ctr_ready(&c));
    c.st = CORRAL__C_TERMINATED;
    cr_assert_not(corral__ctr_ready(&c));
    c = (corral__ctr_t){.st = CORRAL__C_RUNNING};
    cr_assert(corral__ctr_ready(&c), "no probe: ready when running");
}

/* --- running probes ------------------------------------------------------------------------------
 */

/* A listener on a pod-style address; port 0 lets the kernel choose. */
static int listener(const char *ip, int *port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    struct sockaddr_in sa = {.sin_family = AF_INET};
    inet_pton(AF_INET, ip, &sa.sin_addr);
    cr_assert_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    cr_assert_eq(listen(fd, 16), 0);
    socklen_t l = sizeof(sa);
    getsockname(fd, (struct sockaddr *)&sa, &l);
    *port = ntohs(sa.sin_port);
    return fd;
}

typedef struct http_srv {
    int fd;
    const char *status; /* "200 OK" */
    int served;
} http_srv_t;

static void *serve(void *arg)
{
    http_srv_t *s = arg;
    for (;;) {
        int c = accept(s->fd, NULL, NULL);
        if (c < 0)
            return NULL;
        char buf[2048];
        ssize_t n = read(c, buf, sizeof(buf) - 1);
        if (n > 0) {
            buf[n] = '\0';
            char out[256];
            int len = snprintf(out, sizeof(out),
                               "HTTP/1.1 %s\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok",
                               strstr(buf, "GET /ready ") ? "200 OK" : s->status);
            if (write(c, out, (size_t)len) < 0)
                break;
            s->served++;
        }
        close(c);
    }
    return NULL;
}

Test(serving, probe_run_tcp_http_exec)
{
    const char *ip = "127.3.4.5";
    int port = 0;
    int fd = listener(ip, &port);
    corral__probe_t pb = {.kind = CORRAL__PROBE_TCP, .port = port, .timeout_s = 1};
    char msg[160];
    cr_assert_eq(corral__probe_run(&pb, ip, NULL, NULL, msg, sizeof(msg)), 0, "%s", msg);
    cr_assert_neq(corral__probe_run(&pb, "127.3.4.6", NULL, NULL, msg, sizeof(msg)), 0,
                  "another pod's address does not answer");
    cr_assert(strstr(msg, "127.3.4.6"), "%s", msg);

    http_srv_t srv = {.fd = fd, .status = "503 Service Unavailable"};
    pthread_t th;
    pthread_create(&th, NULL, serve, &srv);
    corral__probe_t hp = {
        .kind = CORRAL__PROBE_HTTP, .port = port, .timeout_s = 2, .path = "/ready"};
    cr_assert_eq(corral__probe_run(&hp, ip, NULL, NULL, msg, sizeof(msg)), 0, "%s", msg);
    hp.path = "/other";
    cr_assert_neq(corral__probe_run(&hp, ip, NULL, NULL, msg, sizeof(msg)), 0);
    cr_assert(strstr(msg, "503"), "%s", msg);
    shutdown(fd, SHUT_RDWR);
    close(fd);
    pthread_join(th, NULL);
    cr_assert_eq(srv.served, 2);

    char *env[] = {"PATH=/usr/bin:/bin", "WANT=yes", NULL};
    char *ok[] = {"sh", "-c", "[ \"$WANT\" = yes ] && [ \"$(pwd)\" = /tmp ]", NULL};
    corral__probe_t ep = {.kind = CORRAL__PROBE_EXEC, .timeout_s = 5, .cmd = ok};
    cr_assert_eq(corral__probe_run(&ep, ip, env, "/tmp", msg, sizeof(msg)), 0, "%s", msg);
    char *bad[] = {"sh", "-c", "exit 3", NULL};
    ep.cmd = bad;
    cr_assert_neq(corral__probe_run(&ep, ip, env, "/tmp", msg, sizeof(msg)), 0);
    cr_assert(strstr(msg, "exited with 3"), "%s", msg);
    char *slow[] = {"sleep", "30", NULL};
    ep.cmd = slow;
    ep.timeout_s = 1;
    cr_assert_neq(corral__probe_run(&ep, ip, env, "/tmp", msg, sizeof(msg)), 0);
    cr_assert(strstr(msg, "timed out"), "%s", msg);
    char *none[] = {"no-such-command-here", NULL};
    ep.cmd = none;
    cr_assert_neq(corral__probe_run(&ep, ip, env, "/tmp", msg, sizeof(msg)), 0);
}

Test(serving, prober_pool)
{
    const char *ip = "127.3.4.7";
    int port = 0;
    int fd = listener(ip, &port);
    corral__prober_t *pr = corral__prober_new(2);
    corral__probe_t pb = {.kind = CORRAL__PROBE_TCP, .port = port, .timeout_s = 1};
    char *env[] = {NULL};
    for (int i = 0; i < 6; i++)
        cr_assert_eq(
            corral__prober_submit(pr, "u1", i % 2, 7, &pb, i < 3 ? ip : "127.3.4.8", env, "/tmp"),
            0);
    int ok = 0, bad = 0;
    for (int spins = 0; ok + bad < 6 && spins < 1000; spins++) {
        corral__probe_result_t r;
        if (!corral__prober_take(pr, &r)) {
            usleep(5000);
            continue;
        }
        cr_assert_str_eq(r.uid, "u1");
        cr_assert_eq(r.instance, 7);
        ok += r.ok;
        bad += !r.ok;
        corral_free(r.uid);
    }
    cr_assert_eq(ok, 3);
    cr_assert_eq(bad, 3);
    /* work left in the queue at shutdown is freed */
    for (int i = 0; i < 4; i++)
        corral__prober_submit(pr, "u2", 0, 1, &pb, ip, env, NULL);
    corral__prober_free(pr);
    close(fd);
}

/* --- the GPU load file, PATH and POD_IP ----------------------------------------------------------
 */

Test(serving, gpu_load_file)
{
    char *dir = tmpdir();
    char path[128];
    snprintf(path, sizeof(path), "%s/gpu-load", dir);
    struct timeval tv;
    gettimeofday(&tv, NULL);
    int64_t now = (int64_t)tv.tv_sec * 1000000 + tv.tv_usec;
    cr_assert_eq(corral__gpu_load_read(path, now), -1, "absent");
    cr_assert_eq(corral__gpu_load_read(NULL, now), -1);
    corral__agent_write_file(path, "42.4\n", 5);
    cr_assert_eq(corral__gpu_load_read(path, now), 42);
    cr_assert_eq(corral__gpu_load_read(path, now + 11 * INT64_C(1000000)), -1, "stale after 10 s");
    corral__agent_write_file(path, "250", 3);
    cr_assert_eq(corral__gpu_load_read(path, now), 100, "clamped");
    corral__agent_write_file(path, "-5", 2);
    cr_assert_eq(corral__gpu_load_read(path, now), 0);
    corral__agent_write_file(path, "busy", 4);
    cr_assert_eq(corral__gpu_load_read(path, now), -1, "not a number");
    corral__agent_write_file(path, "50%", 3);
    cr_assert_eq(corral__gpu_load_read(path, now), -1);
    corral__rmtree(dir);
}

Test(serving, env_pod_ip_path_gpu_load)
{
    corral_arena_t a;
    corral_arena_init(&a);
    corral_val_t *pod = parse(
        &a, "{\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\"},\"spec\":{\"containers\":[{"
            "\"name\":\"c\",\"command\":[\"x\"],\"env\":["
            "{\"name\":\"POD_IP\",\"valueFrom\":{\"fieldRef\":{\"fieldPath\":\"status.podIP\"}}},"
            "{\"name\":\"HOST_IP\",\"valueFrom\":{\"fieldRef\":{\"fieldPath\":\"status.hostIP\"}}},"
            "{\"name\":\"URL\",\"value\":\"http://$(POD_IP):8000\"}]}]}}");
    corral__envctx_t e = {.pod = pod,
                          .ctr = corral_val_dig(pod, "spec.containers")->items[0],
                          .host_ip = "127.0.0.1",
                          .pod_ip = "127.9.8.7",
                          .bin_dir = "/opt/corral/bin",
                          .gpu_load = "/r/pods/u/.corral/gpu-load"};
    char **envp = NULL, err[256];
    cr_assert_eq(corral__env_build(&a, &e, &envp, err, sizeof(err)), 0, "%s", err);
    cr_assert_str_eq(corral__env_get(envp, "POD_IP"), "127.9.8.7");
    cr_assert_str_eq(corral__env_get(envp, "HOST_IP"), "127.0.0.1");
    cr_assert_str_eq(corral__env_get(envp, "URL"), "http://127.9.8.7:8000");
    cr_assert(!strncmp(corral__env_get(envp, "PATH"), "/opt/corral/bin:/usr/local/sbin:", 32));
    cr_assert_str_eq(corral__env_get(envp, "CORRAL_GPU_LOAD_FILE"), "/r/pods/u/.corral/gpu-load");
    e.gpu_load = NULL;
    e.bin_dir = NULL;
    cr_assert_eq(corral__env_build(&a, &e, &envp, err, sizeof(err)), 0, "%s", err);
    cr_assert_null(corral__env_get(envp, "CORRAL_GPU_LOAD_FILE"), "no simulated GPU: unset");
    cr_assert(!strncmp(corral__env_get(envp, "PATH"), "/usr/local/sbin:", 16));
    corral_arena_fini(&a);
}
