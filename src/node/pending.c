/*
 * New requests waiting in the element's server, by transaction key: a copy that arrives while
 * its original still waits (no transaction yet) is then known as a copy on arrival, as the
 * simulator knows it (src/sim/net_server.c, classify_arrival). PRSM queues such copies second,
 * and every controller that counts retransmissions sees them. Keys are the keyed 64-bit hashes
 * of branch, sent-by and method: two requests that collide are only put in the wrong class for
 * scheduling, never matched to a transaction (that takes the text, txn.c). A multiset with
 * counts, open addressing, linear probing, tombstones; at most half full.
 */
#include <stdlib.h>

#include "node_int.h"
#include "osn/err.h"

#define EMPTY 0
#define TOMB  1 /* keys 0 and 1 are never stored: pending_key() avoids them */

uint64_t pending_key(const struct osn_sip_msg *m)
{
    uint64_t k = m->branch ^ (m->sent_by * 0x9e3779b97f4a7c15ULL) ^
                 ((uint64_t)m->method * 0xc2b2ae3d27d4eb4fULL);
    return k > TOMB ? k : k + 2;
}

static int grow(struct pending *p)
{
    size_t cap = p->mask ? 2 * (p->mask + 1) : 256;
    struct pending_slot *s = calloc(cap, sizeof *s);
    if (!s)
        return OSN_ENOMEM;
    for (size_t i = 0; p->slot && i <= p->mask; i++) {
        if (p->slot[i].key <= TOMB)
            continue;
        size_t j = p->slot[i].key & (cap - 1);
        while (s[j].key)
            j = (j + 1) & (cap - 1);
        s[j] = p->slot[i];
    }
    free(p->slot);
    p->slot = s;
    p->mask = cap - 1;
    p->used = p->n;
    return 0;
}

static struct pending_slot *find(const struct pending *p, uint64_t key)
{
    if (!p->slot)
        return NULL;
    for (size_t j = key & p->mask; p->slot[j].key; j = (j + 1) & p->mask)
        if (p->slot[j].key == key)
            return &p->slot[j];
    return NULL;
}

bool pending_has(const struct pending *p, uint64_t key)
{
    return find(p, key) != NULL;
}

int pending_add(struct pending *p, uint64_t key)
{
    struct pending_slot *s = find(p, key);
    if (s) {
        s->count++;
        return 0;
    }
    if ((p->used + 1) * 2 > (p->mask ? p->mask + 1 : 0) && grow(p) != 0)
        return OSN_ENOMEM;
    size_t j = key & p->mask;
    while (p->slot[j].key > TOMB)
        j = (j + 1) & p->mask;
    if (!p->slot[j].key)
        p->used++;
    p->slot[j] = (struct pending_slot){key, 1};
    p->n++;
    return 0;
}

void pending_del(struct pending *p, uint64_t key)
{
    struct pending_slot *s = find(p, key);
    if (s && --s->count == 0) {
        s->key = TOMB;
        p->n--;
    }
}

void pending_release(struct pending *p)
{
    free(p->slot);
    *p = (struct pending){0};
}
