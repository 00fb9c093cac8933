/*
 * Open-addressing string map, and the hashes. Tombstones keep probe chains
 * intact after deletes; the table is rebuilt when live entries plus
 * tombstones pass 70%.
 *
 * Maps are fed keys that clients choose (a ConfigMap's data, label keys,
 * object names), so the hash is SipHash-1-3 under a key drawn from
 * getrandom once per process: nobody outside can compute collisions, and
 * probe chains stay short whatever the keys. Nothing may depend on these
 * values across processes; corral_hash_stable is the fixed one for that.
 */
#include <pthread.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "corral/common.h"
#include "corral/hmap.h"

static const char tomb_key[] = "";
#define TOMB tomb_key

uint32_t corral_hash_stable(const void *p, size_t n, uint32_t seed)
{
    const unsigned char *b = p;
    uint32_t h = 2166136261u ^ seed; /* FNV-1a */
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 16777619u;
    }
    return h;
}

/* --- SipHash-1-3 -------------------------------------------------------------------------- */

static uint64_t sip_key[2];
static pthread_once_t sip_once = PTHREAD_ONCE_INIT;

static void sip_init(void)
{
    if (getrandom(sip_key, sizeof(sip_key), 0) == (ssize_t)sizeof(sip_key))
        return;
    /* No entropy source (very early boot): time and addresses, still per process. */
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    sip_key[0] = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15u ^ (uint64_t)getpid();
    sip_key[1] = (uint64_t)(uintptr_t)&ts ^ ((uint64_t)ts.tv_sec << 32);
}

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND                                                                                   \
    do {                                                                                           \
        v0 += v1;                                                                                  \
        v1 = ROTL(v1, 13);                                                                         \
        v1 ^= v0;                                                                                  \
        v0 = ROTL(v0, 32);                                                                         \
        v2 += v3;                                                                                  \
        v3 = ROTL(v3, 16);                                                                         \
        v3 ^= v2;                                                                                  \
        v0 += v3;                                                                                  \
        v3 = ROTL(v3, 21);                                                                         \
        v3 ^= v0;                                                                                  \
        v2 += v1;                                                                                  \
        v1 = ROTL(v1, 17);                                                                         \
        v1 ^= v2;                                                                                  \
        v2 = ROTL(v2, 32);                                                                         \
    } while (0)

uint64_t corral_siphash(const uint64_t key[2], const void *p, size_t n, int c, int d)
{
    const unsigned char *in = p;
    uint64_t v0 = 0x736f6d6570736575u ^ key[0], v1 = 0x646f72616e646f6du ^ key[1];
    uint64_t v2 = 0x6c7967656e657261u ^ key[0], v3 = 0x7465646279746573u ^ key[1];
    size_t whole = n & ~(size_t)7;
    for (size_t i = 0; i < whole; i += 8) {
        uint64_t m = 0;
        for (int j = 0; j < 8; j++)
            m |= (uint64_t)in[i + (size_t)j] << (8 * j);
        v3 ^= m;
        for (int r = 0; r < c; r++)
            SIPROUND;
        v0 ^= m;
    }
    uint64_t b = (uint64_t)n << 56;
    for (size_t j = 0; j < (n & 7); j++)
        b |= (uint64_t)in[whole + j] << (8 * j);
    v3 ^= b;
    for (int r = 0; r < c; r++)
        SIPROUND;
    v0 ^= b;
    v2 ^= 0xff;
    for (int r = 0; r < d; r++)
        SIPROUND;
    return v0 ^ v1 ^ v2 ^ v3;
}

uint32_t corral_hash_mem(const void *p, size_t n)
{
    pthread_once(&sip_once, sip_init);
    uint64_t h = corral_siphash(sip_key, p, n, 1, 3);
    return (uint32_t)(h ^ (h >> 32));
}

uint32_t corral_hash_str(const char *s)
{
    return corral_hash_mem(s, strlen(s));
}

size_t corral_hmap_max_probe(const corral_hmap_t *m)
{
    size_t worst = 0;
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->slots[i].key || m->slots[i].key == TOMB)
            continue;
        size_t home = m->slots[i].hash & (m->cap - 1);
        size_t d = (i - home) & (m->cap - 1);
        if (d > worst)
            worst = d;
    }
    return worst;
}

void corral_hmap_init(corral_hmap_t *m)
{
    memset(m, 0, sizeof(*m));
}

void corral_hmap_fini(corral_hmap_t *m)
{
    corral_free(m->slots);
    memset(m, 0, sizeof(*m));
}

static void hmap_rehash(corral_hmap_t *m, size_t cap)
{
    corral_hmap_slot_t *old = m->slots;
    size_t oldcap = m->cap;
    m->slots = corral_calloc(cap, sizeof(*m->slots));
    m->cap = cap;
    m->n = m->used = 0;
    for (size_t i = 0; i < oldcap; i++) {
        if (old[i].key && old[i].key != TOMB) {
            size_t j = old[i].hash & (cap - 1);
            while (m->slots[j].key)
                j = (j + 1) & (cap - 1);
            m->slots[j] = old[i];
            m->n++;
            m->used++;
        }
    }
    corral_free(old);
}

void corral_hmap_put(corral_hmap_t *m, const char *key, uint32_t val)
{
    if ((m->used + 1) * 10 >= m->cap * 7) {
        size_t cap = m->cap ? m->cap : 16;
        while ((m->n + 1) * 10 >= cap * 5)
            cap *= 2;
        hmap_rehash(m, cap);
    }
    uint32_t h = corral_hash_str(key);
    size_t j = h & (m->cap - 1);
    long tomb = -1;
    while (m->slots[j].key) {
        if (m->slots[j].key == TOMB) {
            if (tomb < 0)
                tomb = (long)j;
        } else if (m->slots[j].hash == h && strcmp(m->slots[j].key, key) == 0) {
            m->slots[j].val = val;
            m->slots[j].key = key;
            return;
        }
        j = (j + 1) & (m->cap - 1);
    }
    if (tomb >= 0)
        j = (size_t)tomb;
    else
        m->used++;
    m->slots[j].key = key;
    m->slots[j].hash = h;
    m->slots[j].val = val;
    m->n++;
}

static corral_hmap_slot_t *hmap_find(const corral_hmap_t *m, const char *key)
{
    if (!m->cap)
        return NULL;
    uint32_t h = corral_hash_str(key);
    size_t j = h & (m->cap - 1);
    while (m->slots[j].key) {
        if (m->slots[j].key != TOMB && m->slots[j].hash == h && strcmp(m->slots[j].key, key) == 0)
            return &m->slots[j];
        j = (j + 1) & (m->cap - 1);
    }
    return NULL;
}

bool corral_hmap_get(const corral_hmap_t *m, const char *key, uint32_t *val)
{
    corral_hmap_slot_t *s = hmap_find(m, key);
    if (!s)
        return false;
    *val = s->val;
    return true;
}

bool corral_hmap_del(corral_hmap_t *m, const char *key)
{
    corral_hmap_slot_t *s = hmap_find(m, key);
    if (!s)
        return false;
    s->key = TOMB;
    m->n--;
    return true;
}
