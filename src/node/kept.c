/*
 * The kept table: transactions in their final wait, in a compact record each, so that the
 * 32 s of RFC 6026's Accepted states and of RFC 3261's Completed ones do not each hold a live
 * transaction object (struct ntx, about 600 bytes) with its request and response (about 1 KB).
 * Each call through a proxy leaves about four transactions waiting (its INVITE's server and
 * client in Accepted, its BYE's server in Completed for 32 s, its BYE's client for T4), so at
 * 10,000 calls/s about 1.3 million of them wait at any time.
 *
 * What a final wait may still do is little, and a record keeps only that: its key, to absorb
 * a copy (the layer's numbers and osn_sip_wire_key_hash of the key's text, the exact check
 * that osn_sip_wire_key_eq makes for a live transaction), the deadline of its lifetime timer, and
 * per state:
 *
 *   role    method   state      a copy arriving gets (RFC)                        kept
 *   server  INVITE   Confirmed  ACK, INVITE: absorbed (3261 17.2.1)               -
 *   server  INVITE   Accepted   INVITE: absorbed; ACK: to the TU, which forwards  where to
 *                               it (6026 7.1); a 2xx the TU relays: sent (7.1)    respond
 *   server  other    Completed  the request: the final response again (17.2.2)   the response
 *   client  INVITE   Accepted   a 2xx: to the TU, relayed upstream (6026 7.2)     its server
 *   client  INVITE   Completed  a 300-699: the ACK again (17.1.1.2)               the ACK
 *   client  other    Completed  a response: absorbed (17.1.2.2)                   -
 *
 * An INVITE server in Completed (Timer G resends its final until the ACK) stays live: it
 * lasts until the ACK, one round trip. So does a uas's INVITE in Accepted until the ACK of its
 * 2xx (its TU resends the 2xx until then, RFC 3261 13.3.1.4, from the transaction); after the
 * ACK it is kept for the rest of Timer L, and its record absorbs INVITE copies as the live one
 * would (RFC 6026 7.1: nothing sent). The ACK of a 2xx has a branch of its own (RFC 3261
 * 17.1.1.3) and never matches the record: an ACK copy reaches the TU, which finds the call known
 * (tu_stray_ack) and absorbs it. The load generator's transactions are kept alike once no call
 * waits on them (its calls hold the dialog's identifiers, the BYE printed from the 2xx, in their
 * slots): a 2xx copy reaching its kept INVITE client goes to the call's machine, which ACKs it
 * again (gen_kept_2xx).
 *
 * What a record may send is coded against the message that makes it send (osn_sip_wire_delta,
 * src/sip/delta.c: a final response against the request it answers, an ACK against the final
 * response it acknowledges), 40 to 80 bytes for a 200 to a BYE of 400. A copy that arrives is
 * printed from with the code, and what is printed goes only if it is the message sent first,
 * byte for byte: RFC 3261 17.1.1.2 and 17.1.2.2 retransmit the same request, 17.2.1 the same
 * response, so that is what arrives; a copy that differs (kept_unsent) gets nothing and is
 * counted.
 *
 * A record knows the transport of its transaction (tcp) and sends by node_send: over TCP on the
 * connection of its request (or to its Via, RFC 3261 18.2.2, tcp.c), else by UDP. Over TCP only
 * RFC 6026's Accepted states wait; the others end at once (Timers D, I, J and K are zero).
 *
 * Expiry: every record of one lifetime timer waits as long (64*T1, T4 or Timer D), so an
 * expiry list per timer is in deadline order and one heap entry (TM_KEPT) for its head is all
 * the timer heap holds of the table.
 */
#define _GNU_SOURCE /* mremap */
#include <stdlib.h>
#include <sys/mman.h>

#include "node_int.h"
#include "osn/err.h"

static int list_of(int timer_id)
{
    switch (timer_id) {
    case OSN_SIP_TIMER_I:
        return 0;
    case OSN_SIP_TIMER_J:
        return 1;
    case OSN_SIP_TIMER_K:
        return 2;
    case OSN_SIP_TIMER_L:
        return 3;
    case OSN_SIP_TIMER_M:
        return 4;
    case OSN_SIP_TIMER_D:
        return 5;
    default:
        return -1;
    }
}

bool kept_wants(const struct node *n, const struct ntx *x, int timer_id)
{
    /* A transaction over TCP is kept as one over UDP: its record knows its transport (tcp) and
     * sends by node_send, so a 2xx copy relayed from a kept INVITE client goes upstream on the
     * connection of the request (RFC 3261 18.2.2). Over TCP only RFC 6026's Accepted states
     * wait (Timers L and M, 64*T1); D, I, J and K are zero and end the transaction at once. */
    if (x->cancel_later || list_of(timer_id) < 0)
        return false;
    /* The load generator's calls keep what they still need (the BYE's text, printed from the
     * 2xx, in the call's slot, gen.c): a transaction no call waits on may go, which kept_take
     * asks when it moves it (after its TU has run: gen_lets_go). */
    if (is_uac(n))
        return true;
    if (timer_id == OSN_SIP_TIMER_I || timer_id == OSN_SIP_TIMER_J || is_proxy(n))
        return !x->in_dialogs;
    /* A uas has no client side. Its INVITE in Accepted stays live until the ACK: its TU resends
     * the 2xx from it (RFC 3261 13.3.1.4) and the dialog map finds it for the ACK. Once acked
     * there is nothing left to send (RFC 6026 7.1: INVITE copies absorbed, the 2xx resent only
     * by the TU, which has stopped), so it waits out Timer L here (ntx_keep in txn.c). */
    return timer_id == OSN_SIP_TIMER_L && x->uas.acked;
}

/* ---- the table's two arrays, mapped by hand ---- */

/* The private anonymous mapping p of `from` bytes grown to `to` (p NULL: a new one of `to`), or
 * NULL (p left as it was). Growing moves page mappings (mremap) and copies and touches no byte,
 * and the pages beyond `from` are the kernel's zero pages until written. A realloc of the record
 * array instead may land on malloc's heap (glibc raises its mmap threshold after large frees),
 * copy the array and keep the old pages: the node's resident memory then jumped by the whole
 * array (6.4 MB at 65,536 records) at each doubling. */
static void *map_grow(void *p, size_t from, size_t to)
{
    void *q = p ? mremap(p, from, to, MREMAP_MAYMOVE)
                : mmap(NULL, to, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return q == MAP_FAILED ? NULL : q;
}

/* ---- the hash table of record indexes ----
 *
 * Chained through the records (hnext) and grown by linear hashing (W. Litwin, "Linear hashing:
 * a new tool for file and table addressing", VLDB 1980): once the records outnumber the
 * buckets, the bucket nb - lo is split between itself and a new last bucket nb, so the bucket
 * array grows by one entry (4 bytes) per record and is never rehashed as a whole. It is mapped
 * by hand like the records (map_grow): its pages are touched one after the other as buckets
 * are added, and a larger reservation moves page mappings and copies nothing. An open-addressed
 * slot array before it doubled by calloc and a full rehash: a step of 1 MB of resident memory
 * at 65,536 records, the old array beside the new one until freed.
 */

/* The bucket array's first reservation: 4 KB. */
#define MIN_BUCKETS 1024

static uint32_t hash_of(int role, uint64_t branch, uint64_t sent_by, int method)
{
    uint64_t x = branch ^ (sent_by * 0x9e3779b97f4a7c15u) ^ (uint64_t)(method * 2 + role);
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9u;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebu;
    x ^= x >> 31;
    return (uint32_t)x;
}

static uint32_t rec_hash(const struct kept *k)
{
    return hash_of(k->role, k->branch, k->sent_by, k->method);
}

/* Hash h's bucket: its low bits below 2 lo, folded below lo where that bucket is not split yet
 * (lo <= nb < 2 lo: buckets [0, nb - lo) and [lo, nb) are split, [nb - lo, lo) are not). */
static uint32_t bucket_of(const struct kept_table *t, uint32_t h)
{
    uint32_t b = h & (2 * t->lo - 1);
    return b < t->nb ? b : b - t->lo;
}

static void bucket_put(struct kept_table *t, uint32_t i)
{
    uint32_t b = bucket_of(t, rec_hash(&t->rec[i]));
    t->rec[i].hnext = t->bucket[b];
    t->bucket[b] = i + 1;
}

/* One more bucket when one more record would outnumber them: bucket nb - lo's chain is shared
 * out between it and the new one. 0, or OSN_ENOMEM (the table as it was). */
static int bucket_room(struct kept_table *t)
{
    if (t->bucket && t->n < t->nb)
        return 0;
    if (t->nb == t->bcap) {
        uint32_t cap = t->bcap ? 2 * t->bcap : MIN_BUCKETS;
        uint32_t *b = cap > t->bcap ? map_grow(t->bucket, (size_t)t->bcap * sizeof *b,
                                               (size_t)cap * sizeof *b)
                                    : NULL;
        if (!b)
            return OSN_ENOMEM;
        t->bucket = b;
        t->bcap = cap;
    }
    if (!t->nb) { /* the first: every hash in bucket 0 */
        t->nb = t->lo = 1;
        return 0;
    }
    uint32_t from = t->nb - t->lo, chain = t->bucket[from];
    t->bucket[from] = 0; /* bucket nb is still zero, as the kernel mapped it */
    if (++t->nb == 2 * t->lo)
        t->lo = t->nb;
    while (chain) {
        uint32_t i = chain - 1;
        chain = t->rec[i].hnext;
        bucket_put(t, i);
    }
    return 0;
}

/* Removes record i from its bucket's chain. */
static void bucket_del(struct kept_table *t, uint32_t i)
{
    uint32_t *p = &t->bucket[bucket_of(t, rec_hash(&t->rec[i]))];
    while (*p != i + 1)
        p = &t->rec[*p - 1].hnext;
    *p = t->rec[i].hnext;
}

/* The record of these numbers whose key text is k's, or pm's (k NULL: read from pm only when a
 * record's numbers match, so that a new request, which matches none, costs a probe and no more). */
static uint32_t find(struct node *n, int role, uint64_t branch, uint64_t sent_by, int method,
                     const struct osn_sip_wire_key *k, const struct osn_sip_wire *pm)
{
    struct kept_table *t = &n->kept;
    struct osn_sip_wire_key own;
    uint64_t fp;
    bool have = false;
    if (!t->n)
        return KEPT_NONE;
    if (role == OSN_SIP_CLIENT)
        sent_by = 0; /* RFC 3261 17.1.3: the branch and the method alone */
    for (uint32_t j = t->bucket[bucket_of(t, hash_of(role, branch, sent_by, method))]; j;
         j = t->rec[j - 1].hnext) {
        const struct kept *r = &t->rec[j - 1];
        if (r->branch != branch || r->sent_by != sent_by || r->method != method || r->role != role)
            continue;
        if (!have) {
            if (!k && osn_sip_wire_key_of(pm, &own) != 0)
                return KEPT_NONE;
            if (!osn_sip_wire_key_hash(k ? k : &own, &fp))
                return KEPT_NONE;
            have = true;
        }
        if (r->fp == fp)
            return j - 1;
    }
    return KEPT_NONE;
}

uint32_t kept_find_key(struct node *n, int role, uint64_t branch, uint64_t sent_by, int method,
                       const struct osn_sip_wire_key *k)
{
    return find(n, role, branch, sent_by, method, k, NULL);
}

uint32_t kept_find(struct node *n, int role, const struct osn_sip_wire *pm,
                   const struct osn_sip_msg *m)
{
    /* RFC 3261 17.2.3: an ACK matches the INVITE's server transaction. */
    int method = role == OSN_SIP_SERVER && m->method == OSN_SIP_ACK ? OSN_SIP_INVITE : m->method;
    return find(n, role, m->branch, m->sent_by, method, NULL, pm);
}

/* ---- records ---- */

size_t kept_bytes(const struct node *n)
{
    const struct kept_table *t = &n->kept;
    /* Records and buckets ever used: their pages are touched; the rest is only reserved. */
    return (size_t)t->hwm * sizeof *t->rec + (size_t)t->nb * sizeof *t->bucket + t->blob_bytes;
}

static uint32_t rec_new(struct kept_table *t)
{
    if (t->free != KEPT_NONE && t->rec) {
        uint32_t i = t->free;
        t->free = t->rec[i].next;
        return i;
    }
    if (t->hwm == t->cap) {
        uint32_t cap = t->cap ? t->cap * 2 : 4096;
        struct kept *r =
                cap > t->cap ? map_grow(t->rec, (size_t)t->cap * sizeof *r, (size_t)cap * sizeof *r)
                             : NULL;
        if (!r)
            return KEPT_NONE;
        t->rec = r;
        t->cap = cap;
    }
    t->rec[t->hwm].life = 0;
    return t->hwm++;
}

/* The blob's bytes as malloc counts them (its header and rounding: about 16 more). */
static size_t blob_charge(size_t size)
{
    return (size + 8 + 15) / 16 * 16;
}

static void arm_list(struct node *n, int list)
{
    const struct kept_table *t = &n->kept;
    if (t->head[list] != KEPT_NONE &&
        timers_push(&n->timers, t->rec[t->head[list]].end, TM_KEPT, NULL, (uint32_t)list) != 0)
        n->err = OSN_ENOMEM;
}

bool kept_take(struct node *n, struct ntx *x, int timer_id, double end)
{
    struct kept_table *t = &n->kept;
    int list = list_of(timer_id);
    bool server = x->t.role == OSN_SIP_SERVER, inv = x->t.req.method == OSN_SIP_INVITE;
    uint64_t fp;
    uint8_t *blob = NULL;
    size_t size = 0;
    if (list < 0 || !x->live || !x->t.in_table || !osn_sip_wire_key_hash(&x->key, &fp) ||
        (is_uac(n) && !gen_lets_go(n, x)))
        return false;
    if (!t->rec) {
        for (int i = 0; i < KEPT_LISTS; i++)
            t->head[i] = t->tail[i] = KEPT_NONE;
        t->free = KEPT_NONE;
    }
    /* What it may still send, coded against what makes it send (the file's head). */
    if (server && x->t.state == OSN_SIP_COMPLETED && !inv) {
        if (!x->resp || !x->req ||
            !(blob = osn_sip_wire_delta(x->resp, x->resp_len, x->req->buf.p, x->req->buf.n, &size)))
            return false;
    } else if (!server && inv && x->t.state == OSN_SIP_COMPLETED) {
        int len = x->req && x->final
                          ? osn_sip_wire_print_ack(n->obuf, sizeof n->obuf, x->req, x->final)
                          : -1;
        if (len <= 0 || !(blob = osn_sip_wire_delta(n->obuf, (size_t)len, x->final->buf.p,
                                                    x->final->buf.n, &size)))
            return false;
    }
    _Static_assert(sizeof(struct kept) <= 104, "a record stays compact (docs/node.md)");
    uint32_t i = bucket_room(t) == 0 ? rec_new(t) : KEPT_NONE;
    if (i == KEPT_NONE) {
        free(blob);
        return false;
    }
    struct kept *k = &t->rec[i];
    uint32_t life = k->life + 1;
    *k = (struct kept){.branch = x->t.req.branch,
                       .sent_by = server ? x->t.req.sent_by : 0,
                       .fp = fp,
                       .end = end,
                       .t0 = x->t0,
                       .to = x->from,
                       .next = KEPT_NONE,
                       .life = life,
                       .up = KEPT_NONE,
                       .status = x->t.has_resp ? x->t.resp.status : 0,
                       .role = x->t.role,
                       .state = x->t.state,
                       .method = x->t.req.method,
                       .hop = x->hop,
                       .list = (uint8_t)list,
                       .routed = x->routed,
                       .tcp = x->t.reliable,
                       .blob = blob};
    /* An INVITE client finds its server upstream, kept before it (keep_pending in txn.c). */
    if (!server && x->kept_up != KEPT_NONE && x->kept_up < t->hwm &&
        t->rec[x->kept_up].life == x->kept_up_life) {
        k->up = x->kept_up;
        k->up_life = x->kept_up_life;
    }
    if (server && x->peer && x->peer->live) {
        x->peer->kept_up = i;
        x->peer->kept_up_life = life;
    }
    t->blob_bytes += blob ? blob_charge(size) : 0;
    bucket_put(t, i);
    t->n++;
    if (t->tail[list] == KEPT_NONE) {
        t->head[list] = t->tail[list] = i;
        arm_list(n, list);
    } else {
        t->rec[t->tail[list]].next = i;
        t->tail[list] = i;
    }
    if (t->n > n->st.kept_peak)
        n->st.kept_peak = t->n;
    size_t bytes = kept_bytes(n);
    if (bytes > n->st.kept_bytes_peak)
        n->st.kept_bytes_peak = bytes;
    ntx_free(n, x);
    return true;
}

void kept_expire(struct node *n, int list)
{
    struct kept_table *t = &n->kept;
    if (list < 0 || list >= KEPT_LISTS || !t->rec)
        return;
    uint32_t i;
    while ((i = t->head[list]) != KEPT_NONE && t->rec[i].end <= n->now) {
        struct kept *k = &t->rec[i];
        t->head[list] = k->next;
        if (t->head[list] == KEPT_NONE)
            t->tail[list] = KEPT_NONE;
        bucket_del(t, i);
        if (k->blob)
            t->blob_bytes -= blob_charge(osn_sip_wire_delta_size(k->blob));
        free(k->blob);
        k->blob = NULL;
        k->life++; /* an INVITE client's reference to it is stale from now on */
        k->next = t->free;
        t->free = i;
        t->n--;
        n->sip.stats.terminated++; /* as the layer counts a lifetime timer's end */
    }
    arm_list(n, list);
}

/* Sends again what record k keeps, printed against ref (the copy that arrived). */
static void resend(struct node *n, const struct kept *k, const struct osn_sip_wire *ref)
{
    int len = k->blob ? osn_sip_wire_undelta(n->obuf, k->blob, ref->buf.p, ref->buf.n) : -1;
    if (len < 0) {
        n->st.kept_unsent++;
        return;
    }
    n->st.retrans_sent++;
    node_send(n, &k->to, k->tcp, n->obuf, (size_t)len);
}

void kept_recv(struct node *n, uint32_t i, const struct rmsg *r)
{
    const struct kept *k = &n->kept.rec[i];
    const struct osn_sip_msg *m = &r->m;
    bool inv = k->method == OSN_SIP_INVITE;
    if (k->role == OSN_SIP_SERVER) {
        if (inv && k->state == OSN_SIP_ACCEPTED && m->method == OSN_SIP_ACK) {
            /* RFC 6026 7.1: to the TU, which forwards it as it forwards any ACK of a 2xx */
            tu_stray_ack(n, r);
            return;
        }
        n->sip.stats.req_absorbed++;
        if (!inv && k->state == OSN_SIP_COMPLETED) { /* RFC 3261 17.2.2: the final again */
            n->sip.stats.resp_retrans++;
            resend(n, k, r->pm);
        }
        return;
    }
    if (inv && k->state == OSN_SIP_ACCEPTED) {
        /* RFC 6026 7.2: every 2xx to the TU, which relays it upstream (the generator's: ACKs it
         * again, RFC 3261 13.2.2.4) */
        if (m->status >= 200 && m->status < 300 && is_uac(n)) {
            gen_kept_2xx(n, k->hop, k->t0, r);
        } else if (m->status >= 200 && m->status < 300) {
            const struct kept *up = k->up != KEPT_NONE && n->kept.rec[k->up].life == k->up_life
                                            ? &n->kept.rec[k->up]
                                            : NULL;
            tu_kept_2xx(n, k->hop, k->routed, k->t0, up ? &up->to : NULL, up && up->tcp,
                        up ? up->state : OSN_SIP_NOSTATE, r);
        }
        return;
    }
    n->sip.stats.resp_absorbed++;
    if (inv && m->status >= 300) { /* RFC 3261 17.1.1.2: the ACK again */
        n->sip.stats.req_retrans++;
        resend(n, k, r->pm);
    }
}

void kept_release(struct node *n)
{
    struct kept_table *t = &n->kept;
    if (t->rec) {
        for (uint32_t i = 0; i < t->hwm; i++)
            free(t->rec[i].blob);
    }
    if (t->rec)
        munmap(t->rec, (size_t)t->cap * sizeof *t->rec);
    if (t->bucket)
        munmap(t->bucket, (size_t)t->bcap * sizeof *t->bucket);
    *t = (struct kept_table){0};
}
