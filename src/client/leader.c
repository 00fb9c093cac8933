/*
 * Leader election on a coordination.k8s.io/v1 Lease (include/corral/leader.h):
 * one thread per candidate reads the Lease every retry period and creates,
 * takes over or renews it with a compare-and-swap write (resourceVersion);
 * a 409 or any failure only means "try again next period". Leadership is
 * given up for good when it could not be renewed within the renew deadline.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "corral/buf.h"
#include "corral/informer.h"
#include "corral/leader.h"
#include "corral/timefmt.h"
#include "corral/val.h"

struct corral_leader {
    corral_client_t *c;
    char *name, *ns, *identity;
    int64_t lease_ms, renew_ms, retry_ms;
    void (*log)(void *ctx, const char *msg);
    void *log_ctx;
    pthread_t thread;
    volatile int stop;
    atomic_bool leading, lost;
    int64_t last_renew_ms; /* when the Lease was last written as ours */
};

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void say(corral_leader_t *l, const char *what)
{
    if (!l->log)
        return;
    char msg[400];
    snprintf(msg, sizeof(msg), "%s (%s, lease %s/%s)", what, l->identity, l->ns, l->name);
    l->log(l->log_ctx, msg);
}

static void lease_path(const corral_leader_t *l, char *out, size_t len, bool item)
{
    snprintf(out, len, "/apis/coordination.k8s.io/v1/namespaces/%s/leases%s%s", l->ns,
             item ? "/" : "", item ? l->name : "");
}

/* The Lease body: ours (holder = identity) or released (holder ""). */
static void lease_body(const corral_leader_t *l, corral_buf_t *b, const char *rv,
                       const char *holder, int64_t acquire_us, int32_t transitions, int dur_s)
{
    char now[64], acq[64];
    corral_time_format(now_ms() * 1000, true, now, sizeof(now));
    corral_time_format(acquire_us, true, acq, sizeof(acq));
    corral_buf_puts(b, "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\","
                       "\"metadata\":{\"name\":");
    corral_json_quote(b, l->name, strlen(l->name));
    corral_buf_puts(b, ",\"namespace\":");
    corral_json_quote(b, l->ns, strlen(l->ns));
    if (rv) {
        corral_buf_puts(b, ",\"resourceVersion\":");
        corral_json_quote(b, rv, strlen(rv));
    }
    corral_buf_puts(b, "},\"spec\":{\"holderIdentity\":");
    corral_json_quote(b, holder, strlen(holder));
    corral_buf_printf(b,
                      ",\"leaseDurationSeconds\":%d,\"acquireTime\":\"%s\",\"renewTime\":\"%s\","
                      "\"leaseTransitions\":%d}}",
                      dur_s, acq, now, transitions);
}

static int lease_dur_s(const corral_leader_t *l)
{
    return (int)((l->lease_ms + 999) / 1000);
}

/* Write the Lease (PUT when rv, else POST); true on success. */
static bool lease_write(corral_leader_t *l, const char *rv, const char *holder, int64_t acquire_us,
                        int32_t transitions, int dur_s)
{
    corral_buf_t b;
    corral_buf_init(&b);
    lease_body(l, &b, rv, holder, acquire_us, transitions, dur_s);
    char path[512];
    lease_path(l, path, sizeof(path), rv != NULL);
    corral_client_resp_t r;
    corral_client_resp_init(&r);
    int rc =
        corral_client_request(l->c, rv ? "PUT" : "POST", path, NULL, corral_buf_str(&b), b.len, &r);
    bool ok = rc == 0 && (r.code == 200 || r.code == 201);
    corral_client_resp_fini(&r);
    corral_buf_fini(&b);
    return ok;
}

/* Read the Lease into a. Returns 200 with *out set, 404 when there is
 * none, else 0 (no answer, or not a Lease). */
static long lease_get(corral_leader_t *l, corral_arena_t *a, const corral_obj_t **out)
{
    char path[512], err[200];
    lease_path(l, path, sizeof(path), true);
    corral_client_resp_t r;
    corral_client_resp_init(&r);
    int rc = corral_client_request(l->c, "GET", path, NULL, NULL, 0, &r);
    long code = rc == 0 ? r.code : 0;
    corral_obj_t *o = NULL;
    if (code == 200 &&
        (corral_obj_from_json(a, corral_buf_str(&r.body), r.body.len, &o, err, sizeof(err)) != 0 ||
         o->info->kind != CORRAL_KIND_LEASE))
        code = 0;
    corral_client_resp_fini(&r);
    *out = code == 200 ? o : NULL;
    return code == 200 || code == 404 ? code : 0;
}

/* One round: read the Lease, then create, take or renew it. True when the
 * Lease is ours after it. */
static bool try_acquire_or_renew(corral_leader_t *l)
{
    corral_arena_t a;
    corral_arena_init(&a);
    const corral_obj_t *o;
    long code = lease_get(l, &a, &o);
    int64_t now_us = now_ms() * 1000;
    bool ok = false;
    if (code == 404) {
        ok = lease_write(l, NULL, l->identity, now_us, 0, lease_dur_s(l));
    } else if (code == 200) {
        const corral_lease_t *ls = o->u.lease;
        const char *holder = ls->holder_identity ? ls->holder_identity : "";
        int64_t dur_us =
            (ls->lease_duration_seconds.set ? ls->lease_duration_seconds.v : 0) * (int64_t)1000000;
        const char *rv = o->meta.resource_version;
        if (strcmp(holder, l->identity) == 0)
            ok = lease_write(l, rv, l->identity, ls->acquire_us, ls->lease_transitions,
                             lease_dur_s(l));
        else if (!*holder || ls->renew_us + dur_us < now_us)
            ok = lease_write(l, rv, l->identity, now_us, ls->lease_transitions + 1, lease_dur_s(l));
    }
    corral_arena_fini(&a);
    return ok;
}

static void nap(corral_leader_t *l, int64_t ms)
{
    for (int64_t t = 0; t < ms && !l->stop; t += 50)
        usleep(50 * 1000);
}

static void *leader_main(void *arg)
{
    corral_leader_t *l = arg;
    while (!l->stop) {
        bool ours = try_acquire_or_renew(l);
        int64_t now = now_ms();
        if (ours) {
            l->last_renew_ms = now;
            if (!atomic_load(&l->leading)) {
                atomic_store(&l->leading, true);
                say(l, "became leader");
            }
        } else if (atomic_load(&l->leading) && now - l->last_renew_ms > l->renew_ms) {
            atomic_store(&l->leading, false);
            atomic_store(&l->lost, true);
            say(l, "lost the lease: not renewed within the renew deadline");
            break;
        }
        nap(l, l->retry_ms);
    }
    return NULL;
}

static char *default_identity(void)
{
    char host[256] = "host";
    gethostname(host, sizeof(host) - 1);
    host[sizeof(host) - 1] = '\0';
    unsigned seed = (unsigned)now_ms() ^ (unsigned)getpid() * 2654435761u;
    char id[320];
    snprintf(id, sizeof(id), "%s_%d_%08x", host, (int)getpid(), rand_r(&seed));
    return corral_strdup(id);
}

int corral_leader_start(const corral_client_config_t *cfg, const corral_leader_opts_t *o,
                        corral_leader_t **out, char *err, size_t errlen)
{
    corral_leader_t *l = corral_calloc(1, sizeof(*l));
    l->c = corral_client_new(cfg);
    corral_client_set_abort(l->c, &l->stop);
    l->name = corral_strdup(o->name ? o->name : "corral-scheduler");
    l->ns = corral_strdup(o->ns ? o->ns : "kube-system");
    l->identity = o->identity ? corral_strdup(o->identity) : default_identity();
    l->lease_ms = o->lease_ms > 0 ? o->lease_ms : 15000;
    l->renew_ms = o->renew_ms > 0 ? o->renew_ms : 10000;
    l->retry_ms = o->retry_ms > 0 ? o->retry_ms : 2000;
    l->log = o->log;
    l->log_ctx = o->log_ctx;
    atomic_init(&l->leading, false);
    atomic_init(&l->lost, false);
    if (pthread_create(&l->thread, NULL, leader_main, l) != 0) {
        snprintf(err, errlen, "leader election: cannot start a thread");
        corral_client_free(l->c);
        corral_free(l->name);
        corral_free(l->ns);
        corral_free(l->identity);
        corral_free(l);
        return CORRAL_EIO;
    }
    *out = l;
    return 0;
}

bool corral_leader_is_leader(const corral_leader_t *l)
{
    return atomic_load(&((corral_leader_t *)l)->leading);
}

bool corral_leader_lost(const corral_leader_t *l)
{
    return atomic_load(&((corral_leader_t *)l)->lost);
}

const char *corral_leader_identity(const corral_leader_t *l)
{
    return l->identity;
}

/* Hand the Lease back: holder "" so that the next candidate takes it at once. */
static void release(corral_leader_t *l)
{
    corral_arena_t a;
    corral_arena_init(&a);
    const corral_obj_t *o;
    if (lease_get(l, &a, &o) == 200 && o->u.lease->holder_identity &&
        strcmp(o->u.lease->holder_identity, l->identity) == 0)
        lease_write(l, o->meta.resource_version, "", o->u.lease->acquire_us,
                    o->u.lease->lease_transitions, 1);
    corral_arena_fini(&a);
}

void corral_leader_stop(corral_leader_t *l, bool rel)
{
    if (!l)
        return;
    l->stop = 1;
    pthread_join(l->thread, NULL);
    if (rel && atomic_load(&l->leading)) {
        corral_client_set_abort(l->c, NULL);
        release(l);
        say(l, "released the lease");
    }
    corral_client_free(l->c);
    corral_free(l->name);
    corral_free(l->ns);
    corral_free(l->identity);
    corral_free(l);
}
