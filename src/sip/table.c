/*
 * The transaction table of include/osn/sip.h: matching of RFC 3261 17.1.3 (responses to client
 * transactions) and 17.2.3 (requests to server transactions) as one chained hash table whose
 * links live in the transactions, so that adding and removing never allocate; only the bucket
 * array grows, doubling when the table holds more transactions than buckets (amortised O(1),
 * load factor <= 1). Each transaction keeps its 32-bit hash, which makes a rehash a relink and
 * lets a lookup skip most non-matching nodes without touching their keys.
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

/* The RFC 3261 17.2.3 method of a request for matching: ACK matches INVITE. */
static inline int match_method(int role, int method)
{
    return role == OSN_SIP_SERVER && method == OSN_SIP_ACK ? OSN_SIP_INVITE : method;
}

/* splitmix64's finaliser over the key words, folded to 32 bits. */
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

static void link_head(struct osn_sip_txn **head, struct osn_sip_txn *t)
{
    t->hnext = *head;
    if (*head)
        (*head)->hprev = &t->hnext;
    *head = t;
    t->hprev = head;
}

static int grow(struct osn_sip_table *tb, size_t nb)
{
    struct osn_sip_txn **b = calloc(nb, sizeof *b);
    if (!b)
        return OSN_ENOMEM;
    for (size_t i = 0; tb->b && i <= tb->mask; i++) {
        struct osn_sip_txn *t = tb->b[i];
        while (t) {
            struct osn_sip_txn *next = t->hnext;
            link_head(&b[t->hash & (nb - 1)], t);
            t = next;
        }
    }
    free(tb->b);
    tb->b = b;
    tb->mask = nb - 1;
    return 0;
}

int osn_sip_table_init(struct osn_sip_table *tb, size_t hint)
{
    size_t nb = 16;

    if (!tb)
        return OSN_EINVAL;
    *tb = (struct osn_sip_table){0};
    while (nb < hint && nb < ((size_t)1 << 40))
        nb *= 2;
    return grow(tb, nb);
}

void osn_sip_table_release(struct osn_sip_table *tb)
{
    if (!tb)
        return;
    free(tb->b);
    *tb = (struct osn_sip_table){0};
}

static struct osn_sip_txn *lookup(const struct osn_sip_table *tb, uint32_t h, int role,
                                  uint64_t branch, uint64_t sent_by, int method)
{
    struct osn_sip_txn *t = tb->b[h & tb->mask];
    while (t && !(t->hash == h && key_eq(t, role, branch, sent_by, method)))
        t = t->hnext;
    return t;
}

int osn_sip_table_add(struct osn_sip_table *tb, struct osn_sip_txn *t)
{
    int err = 0;

    if (!tb || !tb->b || !t || t->hprev) {
        err = OSN_EINVAL;
        goto out;
    }
    t->hash = txn_hash(t);
    if (lookup(tb, t->hash, t->role, t->req.branch, t->req.sent_by, t->req.method)) {
        err = OSN_EINVAL;
        goto out;
    }
    if (tb->n + 1 > tb->mask + 1) {
        err = grow(tb, 2 * (tb->mask + 1));
        if (err)
            goto out;
    }
    link_head(&tb->b[t->hash & tb->mask], t);
    tb->n++;
out:
    return err;
}

void osn_sip_table_remove(struct osn_sip_table *tb, struct osn_sip_txn *t)
{
    if (!tb || !t || !t->hprev)
        return;
    *t->hprev = t->hnext;
    if (t->hnext)
        t->hnext->hprev = t->hprev;
    t->hnext = NULL;
    t->hprev = NULL;
    tb->n--;
}

struct osn_sip_txn *osn_sip_table_find(const struct osn_sip_table *tb, int role,
                                       const struct osn_sip_msg *m)
{
    if (!tb || !tb->b || !m)
        return NULL;
    int method = match_method(role, m->method);
    uint32_t h = key_hash(role, m->branch, m->sent_by, method);
    return lookup(tb, h, role, m->branch, m->sent_by, method);
}
