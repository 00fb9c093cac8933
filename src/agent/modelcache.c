/*
 * The agent's model cache: a directory (--model-cache-dir, default
 * ROOT/models) with one entry per model, <dir>/<name>/, where name is the
 * LocalModelCache's name, or "_uri-<hash>" for a pod's storage URI that no
 * LocalModelCache covers (a "_" never starts a Kubernetes name, so the two
 * never meet). One worker thread downloads; the agent's loop only asks and
 * never waits:
 *   - corral__mc_want: the caches of the node's groups (kept, downloaded
 *     in the background);
 *   - corral__mc_request: what a starting pod needs now (downloaded first);
 *   - corral__mc_set_in_use: what running pods use (never evicted).
 * A download goes to <dir>/.tmp-<name>-<n>/ and is renamed into place once
 * complete, so a crash never leaves a half model that looks complete; the
 * .tmp-* leftovers are removed at start, and the complete entries found
 * then are taken back (their bytes counted, their last use the directory's
 * mtime, which every use touches).
 *
 * Space: the node group's storageLimit bounds the bytes of every entry.
 * Before a download, and again after it with its real size, least recently
 * used entries are evicted: first those no group wants, then (only for a
 * pod's request) wanted ones; never one a running pod uses. A group cache
 * that does not fit that way is not downloaded (ModelDownloadError, "does
 * not fit"), so wanted caches never evict each other in a loop; a pod's
 * model is kept even over the limit when nothing else can go.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent/agent_int.h"
#include "corral/hmap.h"

#define RETRY_US (30 * INT64_C(1000000)) /* a failed download is tried again after */
#define NO_LIMIT ((int64_t)1 << 50)

typedef struct ent {
    char *name, *uri;
    corral__mc_state_t state;
    char msg[256];
    int64_t bytes, size_hint, used_us, err_us;
    bool wanted, in_use, requested;
} ent_t;

struct corral__mcache {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t th;
    bool stop, running;
    char *dir, *pvc_root;
    int64_t limit; /* 0: none */
    ent_t **e;
    size_t n, cap;
    uint64_t version, seq;
    corral_metric_t *fetch_s, *bytes_g, *limit_g;
};

/* --- planning (pure) ----------------------------------------------------------------------------
 */

int corral__mc_plan(const corral__mc_entry_t *e, size_t n, int64_t limit, int64_t need,
                    bool allow_wanted, size_t *out)
{
    int64_t total = need;
    for (size_t i = 0; i < n; i++)
        total += e[i].bytes;
    size_t k = 0;
    if (limit <= 0 || total <= limit)
        return 0;
    /* pass 0: entries nobody wants; pass 1: wanted ones, when allowed; oldest first */
    for (int pass = 0; pass < (allow_wanted ? 2 : 1) && total > limit; pass++) {
        for (;;) {
            size_t best = n;
            for (size_t i = 0; i < n; i++) {
                bool taken = false;
                for (size_t j = 0; j < k && !taken; j++)
                    taken = out[j] == i;
                if (taken || e[i].in_use || e[i].keep || e[i].wanted != (pass == 1))
                    continue;
                if (best == n || e[i].used_us < e[best].used_us)
                    best = i;
            }
            if (best == n || total <= limit)
                break;
            out[k++] = best;
            total -= e[best].bytes;
        }
    }
    return total <= limit ? (int)k : -1;
}

/* --- the table ------------------------------------------------------------------------------ */

static int64_t now_us(void)
{
    return corral__now_us();
}

static ent_t *find(corral__mcache_t *mc, const char *name)
{
    for (size_t i = 0; i < mc->n; i++)
        if (!strcmp(mc->e[i]->name, name))
            return mc->e[i];
    return NULL;
}

static ent_t *add(corral__mcache_t *mc, const char *name, const char *uri)
{
    ent_t *e = corral_calloc(1, sizeof(*e));
    e->name = corral_strdup(name);
    e->uri = corral_strdup(uri ? uri : "");
    corral_grow((void **)&mc->e, &mc->cap, mc->n + 1, sizeof(ent_t *));
    mc->e[mc->n++] = e;
    return e;
}

static void touch(corral__mcache_t *mc, ent_t *e)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", mc->dir, e->name);
    utimensat(AT_FDCWD, path, NULL, 0);
    e->used_us = now_us();
}

static int64_t used_bytes(const corral__mcache_t *mc)
{
    int64_t s = 0;
    for (size_t i = 0; i < mc->n; i++)
        s += mc->e[i]->state == CORRAL__MC_READY ? mc->e[i]->bytes : 0;
    return s;
}

static void gauges(corral__mcache_t *mc)
{
    if (mc->bytes_g)
        corral_metric_set(mc->bytes_g, NULL, (double)used_bytes(mc));
    if (mc->limit_g)
        corral_metric_set(mc->limit_g, NULL, (double)mc->limit);
}

/* Directories to remove once the lock is released. */
typedef struct gone {
    char **v;
    size_t n, cap;
} gone_t;

static void gone_add(gone_t *g, const char *name)
{
    corral_grow((void **)&g->v, &g->cap, g->n + 1, sizeof(char *));
    g->v[g->n++] = corral_strdup(name);
}

/* Evict (under the lock: entries leave the table state at once; their
 * directories are removed by the caller, names in gone) so that need
 * more bytes fit. keep: an entry that must stay. Returns false when it
 * cannot fit. */
static bool make_room(corral__mcache_t *mc, const ent_t *keep, int64_t need, bool allow_wanted,
                      gone_t *gone)
{
    corral__mc_entry_t *v = corral_calloc(mc->n + 1, sizeof(*v));
    ent_t **map = corral_calloc(mc->n + 1, sizeof(ent_t *));
    size_t m = 0;
    for (size_t i = 0; i < mc->n; i++) {
        ent_t *e = mc->e[i];
        if (e->state != CORRAL__MC_READY)
            continue;
        v[m] = (corral__mc_entry_t){.bytes = e->bytes,
                                    .used_us = e->used_us,
                                    .in_use = e->in_use,
                                    .wanted = e->wanted,
                                    .keep = e == keep};
        map[m++] = e;
    }
    size_t *out = corral_calloc(m + 1, sizeof(size_t));
    int k = corral__mc_plan(v, m, mc->limit, need, allow_wanted, out);
    for (int i = 0; i < k; i++) {
        ent_t *e = map[out[i]];
        corral__log("model cache: evicting %s (%lld bytes, least recently used)", e->name,
                    (long long)e->bytes);
        e->state = CORRAL__MC_ABSENT;
        e->bytes = 0;
        gone_add(gone, e->name);
        mc->version++;
    }
    corral_free(out);
    corral_free(map);
    corral_free(v);
    return k >= 0;
}

static void remove_dirs(const char *dir, gone_t *g)
{
    for (size_t i = 0; i < g->n; i++) {
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s", dir, g->v[i]);
        corral__rmtree(path);
        corral_free(g->v[i]);
    }
    corral_free(g->v);
    memset(g, 0, sizeof(*g));
}

/* --- the worker ----------------------------------------------------------------------------- */

static ent_t *next_job(corral__mcache_t *mc)
{
    ent_t *best = NULL;
    for (size_t i = 0; i < mc->n; i++) {
        ent_t *e = mc->e[i];
        if (e->state != CORRAL__MC_PENDING)
            continue;
        if (!best || (e->requested && !best->requested))
            best = e; /* a pod waiting goes first */
    }
    return best;
}

static const char *scheme_label(const char *uri)
{
    const char *s = corral__fetch_scheme(uri);
    return !s ? "other" : !strcmp(s, "file://") ? "file" : !strcmp(s, "pvc://") ? "pvc" : "http";
}

/* DIR/.src-NAME records where entry NAME came from (the scan skips names
 * with a leading dot), so a source changed while the agent was down is
 * fetched again. Written beside the entry, to a temporary name, renamed. */
static void source_write(const char *dir, const char *name, const char *uri)
{
    char path[4096], tmp[4200];
    snprintf(path, sizeof(path), "%s/.src-%s", dir, name);
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return;
    bool ok = fputs(uri, f) >= 0;
    ok = fclose(f) == 0 && ok;
    if (!ok || rename(tmp, path) != 0)
        unlink(tmp);
}

/* The source recorded for NAME ("?" when none: any source replaces it). */
static char *source_read(const char *dir, const char *name)
{
    char path[4096], buf[4096];
    snprintf(path, sizeof(path), "%s/.src-%s", dir, name);
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
    if (f)
        fclose(f);
    buf[n] = '\0';
    return corral_strdup(n ? buf : "?");
}

static void download(corral__mcache_t *mc, ent_t *e)
{
    char *name = corral_strdup(e->name), *uri = corral_strdup(e->uri);
    bool wanted_only = !e->requested;
    gone_t gone = {0};
    int64_t hint = e->size_hint;
    bool fits = make_room(mc, e, hint, !wanted_only, &gone);
    e->state = CORRAL__MC_DOWNLOADING;
    mc->version++;
    uint64_t seq = ++mc->seq;
    char *dir = corral_strdup(mc->dir), *pvc = mc->pvc_root ? corral_strdup(mc->pvc_root) : NULL;
    int64_t limit = mc->limit;
    pthread_mutex_unlock(&mc->mu);

    remove_dirs(dir, &gone);
    char tmp[4096], final[4096], err[256] = "";
    snprintf(tmp, sizeof(tmp), "%s/.tmp-%s-%llu", dir, name, (unsigned long long)seq);
    snprintf(final, sizeof(final), "%s/%s", dir, name);
    int64_t bytes = 0, t0 = now_us();
    int rc = 0;
    if (!fits && wanted_only) {
        snprintf(err, sizeof(err),
                 "does not fit: %lld bytes, storageLimit %lld and the other models are in use "
                 "or wanted",
                 (long long)hint, (long long)limit);
        rc = CORRAL_ETOOBIG;
    } else {
        corral__rmtree(tmp);
        corral__fetch_opts_t fo = {.pvc_root = pvc, .max_bytes = limit > 0 ? limit : NO_LIMIT};
        rc = corral__mkdirs(tmp);
        if (rc == 0)
            rc = corral__fetch(uri, tmp, &fo, &bytes, err, sizeof(err));
        if (rc == 0) {
            corral__rmtree(final); /* an older copy (its URI changed) */
            if (rename(tmp, final) != 0) {
                snprintf(err, sizeof(err), "rename into %.180s: %s", name, strerror(errno));
                rc = CORRAL_EIO;
            }
        }
        if (rc != 0)
            corral__rmtree(tmp);
    }
    double secs = (double)(now_us() - t0) / 1e6;
    if (rc == 0 && mc->fetch_s)
        corral_metric_observe(mc->fetch_s, (const char *[]){scheme_label(uri)}, secs);

    pthread_mutex_lock(&mc->mu);
    e = find(mc, name); /* still there: entries are never removed from the table */
    if (rc == 0)
        source_write(dir, name, uri);
    if (rc == 0 && strcmp(e->uri, uri) != 0) {
        /* the source changed while this one was fetched: fetch the new one */
        e->state = CORRAL__MC_PENDING;
        pthread_cond_signal(&mc->cv);
    } else if (rc == 0) {
        e->state = CORRAL__MC_READY;
        e->bytes = bytes;
        e->msg[0] = '\0';
        touch(mc, e);
        corral__log("model cache: %s ready (%s, %lld bytes, %.3f s)", name, uri, (long long)bytes,
                    secs);
        if (!make_room(mc, e, 0, e->requested, &gone) && !e->requested) {
            /* larger than announced and nothing else can go: not kept */
            e->state = CORRAL__MC_ERROR;
            e->err_us = now_us();
            snprintf(e->msg, sizeof(e->msg), "does not fit: %lld bytes, storageLimit %lld",
                     (long long)bytes, (long long)mc->limit);
            gone_add(&gone, name);
        }
        pthread_mutex_unlock(&mc->mu);
        remove_dirs(dir, &gone);
        pthread_mutex_lock(&mc->mu);
    } else {
        e->state = CORRAL__MC_ERROR;
        e->err_us = now_us();
        snprintf(e->msg, sizeof(e->msg), "%s", err);
        corral__log("model cache: %s: %s", name, err);
    }
    mc->version++;
    gauges(mc);
    corral_free(name);
    corral_free(uri);
    corral_free(dir);
    corral_free(pvc);
}

static void *worker(void *arg)
{
    corral__mcache_t *mc = arg;
    pthread_mutex_lock(&mc->mu);
    while (!mc->stop) {
        ent_t *e = next_job(mc);
        if (!e) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_sec += 1; /* errors become pending again after RETRY_US */
            pthread_cond_timedwait(&mc->cv, &mc->mu, &ts);
            int64_t t = now_us();
            for (size_t i = 0; i < mc->n; i++) {
                ent_t *x = mc->e[i];
                if (x->state == CORRAL__MC_ERROR && (x->wanted || x->requested) &&
                    t - x->err_us > RETRY_US) {
                    x->state = CORRAL__MC_PENDING;
                    mc->version++;
                }
            }
            continue;
        }
        download(mc, e);
    }
    pthread_mutex_unlock(&mc->mu);
    return NULL;
}

/* --- the object ----------------------------------------------------------------------------- */

/* Take back what a previous run left: complete entries kept, .tmp-* removed. */
static void scan(corral__mcache_t *mc)
{
    DIR *d = opendir(mc->dir);
    if (!d)
        return;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        char path[4096];
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        snprintf(path, sizeof(path), "%s/%s", mc->dir, de->d_name);
        if (!strncmp(de->d_name, ".tmp-", 5)) {
            corral__log("model cache: removing %s (a download that did not finish)", path);
            corral__rmtree(path);
            continue;
        }
        struct stat st;
        if (!corral__mc_safe_name(de->d_name) || lstat(path, &st) != 0 || !S_ISDIR(st.st_mode))
            continue;
        ent_t *e = add(mc, de->d_name, NULL);
        corral_free(e->uri);
        e->uri = source_read(mc->dir, de->d_name);
        e->state = CORRAL__MC_READY;
        e->bytes = corral__du(path);
        e->used_us = (int64_t)st.st_mtim.tv_sec * 1000000 + st.st_mtim.tv_nsec / 1000;
    }
    closedir(d);
}

corral__mcache_t *corral__mc_new(const char *dir, const char *pvc_root, corral_metrics_t *reg)
{
    if (corral__mkdirs(dir) != 0)
        return NULL;
    corral__mcache_t *mc = corral_calloc(1, sizeof(*mc));
    pthread_mutex_init(&mc->mu, NULL);
    pthread_cond_init(&mc->cv, NULL);
    mc->dir = corral_strdup(dir);
    mc->pvc_root = pvc_root && *pvc_root ? corral_strdup(pvc_root) : NULL;
    if (reg) {
        double b[12];
        size_t nb = corral_metrics_exp_buckets(0.01, 3, 12, b);
        mc->fetch_s = corral_metrics_histogram(
            reg, "corral_agent_model_fetch_seconds",
            "Time to bring a model into the node's cache, by source scheme.",
            (const char *[]){"scheme", NULL}, b, nb);
        mc->bytes_g = corral_metrics_gauge(reg, "corral_agent_model_cache_bytes",
                                           "Bytes of the models in the node's cache.", NULL);
        mc->limit_g = corral_metrics_gauge(
            reg, "corral_agent_model_cache_limit_bytes",
            "The cache's limit: its node group's storageLimit (0: none).", NULL);
    }
    scan(mc);
    gauges(mc);
    return mc;
}

void corral__mc_start(corral__mcache_t *mc)
{
    if (!mc->running && pthread_create(&mc->th, NULL, worker, mc) == 0)
        mc->running = true;
}

void corral__mc_free(corral__mcache_t *mc)
{
    if (!mc)
        return;
    pthread_mutex_lock(&mc->mu);
    mc->stop = true;
    pthread_cond_broadcast(&mc->cv);
    pthread_mutex_unlock(&mc->mu);
    if (mc->running)
        pthread_join(mc->th, NULL);
    for (size_t i = 0; i < mc->n; i++) {
        corral_free(mc->e[i]->name);
        corral_free(mc->e[i]->uri);
        corral_free(mc->e[i]);
    }
    corral_free(mc->e);
    corral_free(mc->dir);
    corral_free(mc->pvc_root);
    pthread_cond_destroy(&mc->cv);
    pthread_mutex_destroy(&mc->mu);
    corral_free(mc);
}

void corral__mc_set_limit(corral__mcache_t *mc, int64_t limit)
{
    pthread_mutex_lock(&mc->mu);
    if (mc->limit != limit) {
        mc->limit = limit;
        mc->version++;
    }
    gauges(mc);
    pthread_mutex_unlock(&mc->mu);
}

/* Make e pending for uri (a new URI replaces what is there). */
static void ensure(corral__mcache_t *mc, ent_t *e, const char *uri)
{
    if (uri && *uri && strcmp(e->uri, uri) != 0) {
        bool had = e->uri[0] != '\0';
        corral_free(e->uri);
        e->uri = corral_strdup(uri);
        if (had && e->state != CORRAL__MC_DOWNLOADING)
            e->state = CORRAL__MC_PENDING; /* another source: fetched again */
    }
    if (e->state == CORRAL__MC_ABSENT) {
        e->state = CORRAL__MC_PENDING;
        mc->version++;
        pthread_cond_signal(&mc->cv);
    }
}

void corral__mc_want(corral__mcache_t *mc, const char *const *names, const char *const *uris,
                     const int64_t *sizes, size_t n)
{
    pthread_mutex_lock(&mc->mu);
    for (size_t i = 0; i < mc->n; i++)
        mc->e[i]->wanted = false;
    for (size_t i = 0; i < n; i++) {
        if (!corral__mc_safe_name(names[i]))
            continue;
        ent_t *e = find(mc, names[i]);
        if (!e)
            e = add(mc, names[i], NULL);
        e->wanted = true;
        e->size_hint = sizes ? sizes[i] : 0;
        ensure(mc, e, uris[i]);
    }
    mc->version++;
    pthread_cond_signal(&mc->cv);
    pthread_mutex_unlock(&mc->mu);
}

corral__mc_state_t corral__mc_request(corral__mcache_t *mc, const char *name, const char *uri,
                                      char *msg, size_t len)
{
    msg[0] = '\0';
    if (!corral__mc_safe_name(name)) {
        snprintf(msg, len, "%s: not a valid cache entry name", name);
        return CORRAL__MC_ERROR;
    }
    pthread_mutex_lock(&mc->mu);
    ent_t *e = find(mc, name);
    if (!e)
        e = add(mc, name, NULL);
    e->requested = true;
    ensure(mc, e, uri);
    corral__mc_state_t st = e->state;
    if (st == CORRAL__MC_READY)
        touch(mc, e);
    if (st == CORRAL__MC_ERROR)
        snprintf(msg, len, "%s", e->msg);
    pthread_cond_signal(&mc->cv);
    pthread_mutex_unlock(&mc->mu);
    return st;
}

void corral__mc_set_in_use(corral__mcache_t *mc, const char *const *names, size_t n)
{
    pthread_mutex_lock(&mc->mu);
    for (size_t i = 0; i < mc->n; i++) {
        ent_t *e = mc->e[i];
        bool use = false;
        for (size_t k = 0; k < n && !use; k++)
            use = !strcmp(names[k], e->name);
        if (e->in_use && !use)
            touch(mc, e); /* its last use ends now */
        e->in_use = use;
        if (use)
            e->requested = true;
        else if (e->state == CORRAL__MC_READY || e->state == CORRAL__MC_ERROR)
            e->requested = false;
    }
    pthread_mutex_unlock(&mc->mu);
}

uint64_t corral__mc_version(corral__mcache_t *mc)
{
    pthread_mutex_lock(&mc->mu);
    uint64_t v = mc->version;
    pthread_mutex_unlock(&mc->mu);
    return v;
}

size_t corral__mc_list(corral__mcache_t *mc, corral__mc_info_t **out)
{
    pthread_mutex_lock(&mc->mu);
    corral__mc_info_t *v = corral_calloc(mc->n + 1, sizeof(*v));
    for (size_t i = 0; i < mc->n; i++) {
        const ent_t *e = mc->e[i];
        v[i] = (corral__mc_info_t){.state = e->state, .bytes = e->bytes, .wanted = e->wanted};
        snprintf(v[i].name, sizeof(v[i].name), "%s", e->name);
        snprintf(v[i].msg, sizeof(v[i].msg), "%s", e->msg);
    }
    size_t n = mc->n;
    pthread_mutex_unlock(&mc->mu);
    *out = v;
    return n;
}

const char *corral__mc_dir(const corral__mcache_t *mc)
{
    return mc->dir;
}
