/*
 * A string -> uint32 hash map (open addressing, linear probing, SipHash-1-3
 * under a random per-process key, so keys a client picks cannot collide) for
 * name lookups in the engine and the API server. Keys are borrowed: the
 * caller keeps them alive (usually in an arena or the object that owns the
 * value). Iteration order is unspecified, so nothing that must be
 * deterministic may iterate a map; use it only to find things.
 */
#ifndef CORRAL_HMAP_H
#define CORRAL_HMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct corral_hmap_slot {
    const char *key; /* NULL: empty; CORRAL_HMAP_TOMB: deleted */
    uint32_t hash;
    uint32_t val;
} corral_hmap_slot_t;

typedef struct corral_hmap {
    corral_hmap_slot_t *slots;
    size_t cap;  /* power of two, or 0 */
    size_t n;    /* live entries */
    size_t used; /* live + tombstones */
} corral_hmap_t;

void corral_hmap_init(corral_hmap_t *m);
void corral_hmap_fini(corral_hmap_t *m);
/* Insert or replace. key must outlive its entry. */
void corral_hmap_put(corral_hmap_t *m, const char *key, uint32_t val);
/* Lookup; returns false when absent. */
bool corral_hmap_get(const corral_hmap_t *m, const char *key, uint32_t *val);
/* Remove; returns false when absent. */
bool corral_hmap_del(corral_hmap_t *m, const char *key);
/* Hash of a string / of n bytes: SipHash-1-3 keyed by a random key drawn
 * once per process. For tables fed by clients; the values differ from run
 * to run, so never store or compare them across processes. */
uint32_t corral_hash_str(const char *s);
uint32_t corral_hash_mem(const void *p, size_t n);
/* SipHash-c-d of n bytes under key (the maps use 1-3; 2-4 is the paper's). */
uint64_t corral_siphash(const uint64_t key[2], const void *p, size_t n, int c, int d);
/* A fixed hash (FNV-1a, 32 bit, seed mixed in), the same in every run: for
 * values that must be reproducible (simulated hardware), never for tables
 * whose keys come from outside. */
uint32_t corral_hash_stable(const void *p, size_t n, uint32_t seed);
/* The longest probe distance of a live entry (tests: chains stay short). */
size_t corral_hmap_max_probe(const corral_hmap_t *m);

#endif
