/*
 * Open-addressing string map. Tombstones keep probe chains intact after
 * deletes; the table is rebuilt when live entries plus tombstones pass 70%.
 */
#include <string.h>

#include "corral/common.h"
#include "corral/hmap.h"

static const char tomb_key[] = "";
#define TOMB tomb_key

uint32_t corral_hash_bytes(const void *p, size_t n, uint32_t seed)
{
    const unsigned char *b = p;
    uint32_t h = 2166136261u ^ seed;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 16777619u;
    }
    return h;
}

uint32_t corral_hash_str(const char *s)
{
    return corral_hash_bytes(s, strlen(s), 0);
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
