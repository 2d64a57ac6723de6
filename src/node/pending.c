/*
 * New requests waiting in the element's server, by transaction key: a copy that arrives while
 * its original still waits (no transaction yet) is then known as a copy on arrival, as the
 * simulator knows it (src/sim/net_server.c, classify_arrival). PRSM queues such copies second,
 * and every controller that counts retransmissions sees them. Keys are the keyed 64-bit hashes
 * of branch, sent-by and method: two requests that collide are only put in the wrong class for
 * scheduling, never matched to a transaction (that takes the text, txn.c). A multiset: a map
 * (map.c) whose values are the counts.
 */
#include "node_int.h"

uint64_t pending_key(const struct osn_sip_msg *m)
{
    uint64_t k = m->branch ^ (m->sent_by * 0x9e3779b97f4a7c15ULL) ^
                 ((uint64_t)m->method * 0xc2b2ae3d27d4eb4fULL);
    return k ? k : 1; /* 0 says "not pending" (struct qmsg) */
}

bool pending_has(const struct map *p, uint64_t key)
{
    return map_find(p, key, NULL) != NULL;
}

int pending_add(struct map *p, uint64_t key)
{
    struct map_slot *s = map_find(p, key, NULL);
    if (!s)
        return map_add(p, key, 1);
    s->val++;
    return 0;
}

void pending_del(struct map *p, uint64_t key)
{
    struct map_slot *s = map_find(p, key, NULL);
    if (s && --s->val == 0)
        map_del(p, s);
}
