/*
 * The transaction table of include/osn/sip.h: matching of RFC 3261 17.1.3 (responses to client
 * transactions) and 17.2.3 (requests to server transactions) as one open-addressing hash table
 * (linear probing, a power of two of slots, at most half of them full). A slot is 16 bytes, a
 * transaction's 32-bit hash and a pointer to it, so that with 10^5 live transactions, where every
 * access is a cache miss, a probe sequence reads one or two lines of the slot array and a
 * transaction record only when its full hash matches: a failed lookup (a new request) usually
 * touches no transaction at all. Removal probes for the pointer from the home slot of the hash
 * the transaction keeps, then shifts the rest of the cluster back (no tombstones, so probe
 * lengths never degrade); growth doubles the array and reinserts the stored hashes. Neither ever
 * reads or writes another transaction, and adding and removing never allocate: only the slot
 * array grows (amortised O(1)).
 *
 * Keys. Client: (branch, CSeq method) — "the response matches a client transaction if [it has]
 * the same value as the branch parameter in the top Via ... [and] the method parameter in the
 * CSeq header field matches the method of the request that created the transaction"
 * (17.1.3). The sent-by is ours, so it adds nothing. Server: (branch, sent-by, method), where
 * "the method of the request matches the one that created the transaction, except for ACK,
 * where the method of the request that created the transaction is INVITE" (17.2.3). So an
 * ACK for a non-2xx (same branch as its INVITE) finds the INVITE server transaction, a CANCEL
 * finds only its own, and the ACK for a 2xx (a new branch, 13.2.2.4) finds none.
 */
#include <stdlib.h>

#include "osn/err.h"
#include "osn/sip.h"

/* t == NULL marks an empty slot; hash is then meaningless. */
struct osn_sip_slot {
    uint32_t hash; /* t->hash, here so that probing does not touch t */
    uint32_t pad;
    struct osn_sip_txn *t;
};

_Static_assert(sizeof(void *) != 8 || sizeof(struct osn_sip_slot) == 16,
               "four slots to a 64-byte cache line");

/* The smallest table; also the one an init with a hint of 0 gets. */
#define MIN_SLOTS 16

/* The RFC 3261 17.2.3 method of a request for matching: ACK matches INVITE. */
static inline int match_method(int role, int method)
{
    return role == OSN_SIP_SERVER && method == OSN_SIP_ACK ? OSN_SIP_INVITE : method;
}

/* splitmix64's finaliser over the key words, folded to 32 bits. Its low bits are as good as its
 * high ones, which is what masking them off for the home slot needs. */
static inline uint32_t key_hash(int role, uint64_t branch, uint64_t sent_by, int method)
{
    uint64_t x = branch * 0x9e3779b97f4a7c15u;
    if (role == OSN_SIP_SERVER)
        x ^= sent_by + 0x632be59bd9b4e019u + (x << 6) + (x >> 2);
    x ^= (uint64_t)(method * 2 + role) * 0xbf58476d1ce4e5b9u;
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9u;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebu;
    x ^= x >> 31;
    return (uint32_t)(x ^ (x >> 32));
}

static inline uint32_t txn_hash(const struct osn_sip_txn *t)
{
    return key_hash(t->role, t->req.branch, t->req.sent_by, t->req.method);
}

static inline bool key_eq(const struct osn_sip_txn *t, int role, uint64_t branch, uint64_t sent_by,
                          int method)
{
    return t->role == role && t->req.branch == branch && t->req.method == method &&
           (role == OSN_SIP_CLIENT || t->req.sent_by == sent_by);
}

/* The first empty slot from h's home. There is one: the table is never more than half full. */
static size_t free_slot(const struct osn_sip_table *tb, uint32_t h)
{
    size_t i = h & tb->mask;
    while (tb->slot[i].t)
        i = (i + 1) & tb->mask;
    return i;
}

/* Reinserts by the stored hashes: the transactions themselves are not read. */
static int grow(struct osn_sip_table *tb, size_t ns)
{
    struct osn_sip_table nt = {.slot = calloc(ns, sizeof *nt.slot), .mask = ns - 1, .n = tb->n};
    if (!nt.slot)
        return OSN_ENOMEM;
    for (size_t i = 0; tb->slot && i <= tb->mask; i++)
        if (tb->slot[i].t)
            nt.slot[free_slot(&nt, tb->slot[i].hash)] = tb->slot[i];
    free(tb->slot);
    *tb = nt;
    return 0;
}

int osn_sip_table_init(struct osn_sip_table *tb, size_t hint)
{
    size_t ns = MIN_SLOTS;

    if (!tb)
        return OSN_EINVAL;
    *tb = (struct osn_sip_table){0};
    /* `hint` transactions at load <= 1/2 without a growth: at least 2 * hint slots. */
    while (ns / 2 < hint && ns < ((size_t)1 << 40))
        ns *= 2;
    return grow(tb, ns);
}

void osn_sip_table_release(struct osn_sip_table *tb)
{
    if (!tb)
        return;
    free(tb->slot);
    *tb = (struct osn_sip_table){0};
}

/* The slot of the transaction under the key, or, when the key is absent, the empty slot where
 * the probe ended (which is where the key would go). Only a slot with the same 32-bit hash
 * costs a look at its transaction. */
static struct osn_sip_slot *probe(const struct osn_sip_table *tb, uint32_t h, int role,
                                  uint64_t branch, uint64_t sent_by, int method)
{
    struct osn_sip_slot *s;
    for (size_t i = h & tb->mask; (s = &tb->slot[i])->t; i = (i + 1) & tb->mask)
        if (s->hash == h && key_eq(s->t, role, branch, sent_by, method))
            break;
    return s;
}

static struct osn_sip_txn *lookup(const struct osn_sip_table *tb, uint32_t h, int role,
                                  uint64_t branch, uint64_t sent_by, int method)
{
    return probe(tb, h, role, branch, sent_by, method)->t;
}

int osn_sip_table_add(struct osn_sip_table *tb, struct osn_sip_txn *t)
{
    int err = 0;

    if (!tb || !tb->slot || !t || t->in_table) {
        err = OSN_EINVAL;
        goto out;
    }
    t->hash = txn_hash(t);
    /* One probe both refuses a taken key and finds the slot where an absent one goes. */
    struct osn_sip_slot *slot =
            probe(tb, t->hash, t->role, t->req.branch, t->req.sent_by, t->req.method);
    if (slot->t) {
        err = OSN_EINVAL;
        goto out;
    }
    /* Grow only for a key that does go in, so a refused add never allocates; the slot found is
     * then stale, and a second probe in the new array (without compares) finds the new one. */
    if (tb->n + 1 > (tb->mask + 1) / 2) {
        err = grow(tb, 2 * (tb->mask + 1));
        if (err)
            goto out;
        slot = &tb->slot[free_slot(tb, t->hash)];
    }
    *slot = (struct osn_sip_slot){.hash = t->hash, .t = t};
    t->in_table = true;
    tb->n++;
out:
    return err;
}

void osn_sip_table_remove(struct osn_sip_table *tb, struct osn_sip_txn *t)
{
    size_t i, j;

    if (!tb || !tb->slot || !t || !t->in_table)
        return;
    /* t sits in the cluster that holds its home slot, at or after the home. Reaching an empty
     * slot first means it is in another table: leave both alone. */
    for (i = t->hash & tb->mask; tb->slot[i].t != t; i = (i + 1) & tb->mask)
        if (!tb->slot[i].t)
            return;
    /* Backward shift: walk the rest of the cluster and move into the hole i each entry whose
     * home is not in (i, j] (cyclically), i.e. each that is displaced at least as far as from
     * i; its slot becomes the hole. Every probe path then stays unbroken without a tombstone. */
    for (j = (i + 1) & tb->mask; tb->slot[j].t; j = (j + 1) & tb->mask) {
        size_t home = tb->slot[j].hash & tb->mask;
        if (((j - home) & tb->mask) >= ((j - i) & tb->mask)) {
            tb->slot[i] = tb->slot[j];
            i = j;
        }
    }
    tb->slot[i] = (struct osn_sip_slot){0};
    t->in_table = false;
    tb->n--;
}

struct osn_sip_txn *osn_sip_table_find(const struct osn_sip_table *tb, int role,
                                       const struct osn_sip_msg *m)
{
    if (!tb || !tb->slot || !m)
        return NULL;
    int method = match_method(role, m->method);
    uint32_t h = key_hash(role, m->branch, m->sent_by, method);
    return lookup(tb, h, role, m->branch, m->sent_by, method);
}

bool osn_sip_txn_matches(const struct osn_sip_txn *t, const struct osn_sip_msg *m)
{
    if (!t || !m)
        return false;
    int role = m->status ? OSN_SIP_CLIENT : OSN_SIP_SERVER;
    return key_eq(t, role, m->branch, m->sent_by, match_method(role, m->method));
}
