/*
 * HyperNode membership: which nodes each HyperNode holds, resolved from its
 * members (nodes by exact name, unanchored extended regex or labels; other
 * HyperNodes by name or regex, recursively) whenever nodes or HyperNodes
 * changed. Cycles between HyperNodes are cut, not followed.
 */
#include <string.h>

#include "engine/engine_int.h"

static const char *label_of(const char *key, void *ctx)
{
    const enode_t *n = ctx;
    for (size_t i = 0; i < n->nlabels; i++) {
        if (strcmp(n->labels[i].key, key) == 0)
            return n->labels[i].value;
    }
    return NULL;
}

static bool name_matches(const ehn_member_t *m, const char *name)
{
    if (m->exact)
        return strcmp(m->exact, name) == 0;
    if (m->has_regex)
        return regexec(&m->re, name, 0, NULL, 0) == 0;
    return false;
}

static bool node_matches(const ehn_member_t *m, const enode_t *n)
{
    if (m->exact || m->has_regex)
        return name_matches(m, n->name);
    if (m->has_labels)
        return corral_sel_matches(&m->labels, label_of, (void *)n);
    return false;
}

static void resolve_one(corral_engine_t *e, uint32_t id, uint8_t *state, size_t words)
{
    ehn_t *h = &e->hn.hns.items[id];
    state[id] = 1;
    h->bits = corral_calloc(words ? words : 1, sizeof(uint64_t));
    for (size_t i = 0; i < h->nmembers; i++) {
        const ehn_member_t *m = &h->members[i];
        if (m->type == CORRAL_HN_NODE) {
            for (size_t j = 0; j < e->nd.nodes.n; j++) {
                if (e->nd.nodes.items[j].alive && node_matches(m, &e->nd.nodes.items[j]))
                    h->bits[j / 64] |= 1ULL << (j % 64);
            }
            continue;
        }
        for (size_t j = 0; j < e->hn.hns.n; j++) {
            ehn_t *c = &e->hn.hns.items[j];
            if (j == id || !c->alive || !name_matches(m, c->name))
                continue;
            if (state[j] == 0)
                resolve_one(e, (uint32_t)j, state, words);
            if (state[j] == 2 && c->bits)
                for (size_t w = 0; w < words; w++)
                    h->bits[w] |= c->bits[w];
        }
    }
    h->nnodes = 0;
    h->nodes = corral_malloc((e->nd.nodes.n + 1) * sizeof(uint32_t));
    for (size_t j = 0; j < e->nd.nodes.n; j++) {
        if (h->bits[j / 64] >> (j % 64) & 1)
            h->nodes[h->nnodes++] = (uint32_t)j;
    }
    state[id] = 2;
}

void corral__hn_resolve(corral_engine_t *e)
{
    if (!e->hn.hn_dirty)
        return;
    size_t words = (e->nd.nodes.n + 63) / 64;
    uint8_t *state = corral_calloc(e->hn.hns.n + 1, 1);
    for (size_t i = 0; i < e->hn.hns.n; i++) {
        ehn_t *h = &e->hn.hns.items[i];
        corral_free(h->bits);
        corral_free(h->nodes);
        h->bits = NULL;
        h->nodes = NULL;
        h->nnodes = 0;
    }
    for (size_t i = 0; i < e->hn.hns.n; i++) {
        if (e->hn.hns.items[i].alive && state[i] == 0)
            resolve_one(e, (uint32_t)i, state, words);
    }
    corral_free(state);
    e->hn.hn_dirty = false;
}
