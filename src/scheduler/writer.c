/*
 * The scheduler's writer pool: N threads, each with its own API connection
 * (libcurl handles are not shared between threads) and its own queue. The
 * main loop never waits on a write: binds, evictions, status patches and
 * events are queued here, and the outcomes of binds and evictions come back
 * through a list the main loop drains. Concurrent writes let the API
 * server's store commit many in one transaction (group commit); one writer
 * would wait a disk flush per bind. All writes about one pod go to the same
 * worker (chosen by a hash of its key), so they land in the order queued.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "corral/hmap.h"
#include "scheduler/sched_int.h"

wjob_t *corral__wjob_new(int kind, const char *key, const char *method, const char *path,
                         const char *ctype, const char *body)
{
    wjob_t *j = corral_calloc(1, sizeof(*j));
    j->kind = kind;
    j->key = corral_strdup(key ? key : "");
    j->method = corral_strdup(method);
    j->path = corral_strdup(path);
    j->ctype = ctype ? corral_strdup(ctype) : NULL;
    j->body = body ? corral_strdup(body) : NULL;
    return j;
}

void corral__wjob_free(wjob_t *j)
{
    if (!j)
        return;
    corral_free(j->key);
    corral_free(j->method);
    corral_free(j->path);
    corral_free(j->ctype);
    corral_free(j->body);
    corral_free(j->event_path);
    corral_free(j->event_body);
    corral_free(j->alt_path);
    corral_free(j);
}

static void post_event(wqueue_t *q, wjob_t *j)
{
    corral_client_resp_t r;
    corral_client_resp_init(&r);
    int rc = corral_client_request(q->c, "POST", j->event_path, NULL, j->event_body,
                                   strlen(j->event_body), &r);
    if (rc == 0 && r.code / 100 == 2)
        atomic_fetch_add(&q->pool->events, 1);
    else
        atomic_fetch_add(&q->pool->write_failures, 1);
    corral_client_resp_fini(&r);
}

static void run_job(wqueue_t *q, wjob_t *j)
{
    if (j->event_path && j->event_first)
        post_event(q, j);
    corral_client_resp_t r;
    corral_client_resp_init(&r);
    int rc = corral_client_request(q->c, j->method, j->path, j->ctype, j->body,
                                   j->body ? strlen(j->body) : 0, &r);
    if (rc == 0 && r.code == 404 && j->alt_path) {
        corral_client_resp_fini(&r);
        corral_client_resp_init(&r);
        rc = corral_client_request(q->c, j->method, j->alt_path, j->ctype, j->body,
                                   j->body ? strlen(j->body) : 0, &r);
    }
    j->code = rc == 0 ? r.code : 0;
    if (rc != 0)
        snprintf(j->err, sizeof(j->err), "%s", r.error);
    else if (r.code / 100 != 2) {
        char reason[64];
        corral_client_error(&r, reason, sizeof(reason), j->err, sizeof(j->err));
    }
    corral_client_resp_fini(&r);
    bool ok = j->code / 100 == 2;
    if (ok && j->event_path && !j->event_first)
        post_event(q, j);
    if (j->kind == W_WRITE) {
        uint64_t nf = ok ? 0 : atomic_fetch_add(&q->pool->write_failures, 1) + 1;
        if (ok)
            atomic_fetch_add(&q->pool->status_writes, 1);
        else if (nf <= 20 || (nf & (nf - 1)) == 0) /* the first ones, then at powers of two */
            fprintf(stderr, "scheduler: %s %s failed (%ld): %s [%llu write failures so far]\n",
                    j->method, j->alt_path && j->code == 404 ? j->alt_path : j->path, j->code,
                    j->err, (unsigned long long)nf);
        corral__wjob_free(j);
        return;
    }
    wpool_t *p = q->pool;
    pthread_mutex_lock(&p->mu);
    j->next = p->done;
    p->done = j;
    pthread_mutex_unlock(&p->mu);
    corral_evq_wake(p->wake);
}

static void *worker_main(void *arg)
{
    wqueue_t *q = arg;
    for (;;) {
        pthread_mutex_lock(&q->mu);
        while (!q->head && !q->pool->stop)
            pthread_cond_wait(&q->cv, &q->mu);
        wjob_t *j = q->head;
        if (!j) {
            pthread_mutex_unlock(&q->mu);
            return NULL; /* stopping, nothing left */
        }
        q->head = j->next;
        if (!q->head)
            q->tail = NULL;
        pthread_mutex_unlock(&q->mu);
        j->next = NULL;
        run_job(q, j);
        atomic_fetch_sub(&q->pool->inflight, 1);
    }
}

int corral__wpool_start(wpool_t *p, const corral_client_config_t *cfg, int n, corral_evq_t *wake,
                        char *err, size_t errlen)
{
    p->n = n > 0 ? n : 1;
    p->qs = corral_calloc((size_t)p->n, sizeof(*p->qs));
    p->wake = wake;
    pthread_mutex_init(&p->mu, NULL);
    for (int i = 0; i < p->n; i++) {
        wqueue_t *q = &p->qs[i];
        pthread_mutex_init(&q->mu, NULL);
        pthread_cond_init(&q->cv, NULL);
        q->c = corral_client_new(cfg);
        q->pool = p;
        if (pthread_create(&q->thread, NULL, worker_main, q) != 0) {
            snprintf(err, errlen, "cannot start writer thread %d", i);
            p->n = i;
            return CORRAL_EIO;
        }
    }
    return 0;
}

void corral__wpool_submit(wpool_t *p, wjob_t *j)
{
    wqueue_t *q = &p->qs[corral_hash_str(j->key) % (uint32_t)p->n];
    j->next = NULL;
    atomic_fetch_add(&p->inflight, 1);
    pthread_mutex_lock(&q->mu);
    if (q->tail)
        q->tail->next = j;
    else
        q->head = j;
    q->tail = j;
    pthread_cond_signal(&q->cv);
    pthread_mutex_unlock(&q->mu);
}

wjob_t *corral__wpool_done(wpool_t *p)
{
    pthread_mutex_lock(&p->mu);
    wjob_t *l = p->done;
    p->done = NULL;
    pthread_mutex_unlock(&p->mu);
    wjob_t *rev = NULL; /* oldest first */
    while (l) {
        wjob_t *next = l->next;
        l->next = rev;
        rev = l;
        l = next;
    }
    return rev;
}

void corral__wpool_stop(wpool_t *p, int64_t ms)
{
    for (int64_t t = 0; t < ms && atomic_load(&p->inflight) > 0; t += 10) {
        struct timespec ts = {0, 10000000L};
        nanosleep(&ts, NULL);
    }
    p->stop = 1;
    for (int i = 0; i < p->n; i++) {
        wqueue_t *q = &p->qs[i];
        pthread_mutex_lock(&q->mu);
        /* Drop what was not written in time. */
        for (wjob_t *j = q->head, *next; j; j = next) {
            next = j->next;
            corral__wjob_free(j);
        }
        q->head = q->tail = NULL;
        pthread_cond_signal(&q->cv);
        pthread_mutex_unlock(&q->mu);
    }
    for (int i = 0; i < p->n; i++) {
        pthread_join(p->qs[i].thread, NULL);
        corral_client_free(p->qs[i].c);
        pthread_mutex_destroy(&p->qs[i].mu);
        pthread_cond_destroy(&p->qs[i].cv);
    }
    corral_free(p->qs);
    p->qs = NULL;
    wjob_t *d = corral__wpool_done(p);
    while (d) {
        wjob_t *next = d->next;
        corral__wjob_free(d);
        d = next;
    }
    pthread_mutex_destroy(&p->mu);
}
