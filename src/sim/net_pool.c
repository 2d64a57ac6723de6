/*
 * The network simulator's objects and their pools: calls, transaction wrappers, messages.
 *
 * A call knows its source, its UAC and UAS state and, per hop and request kind, its live
 * transactions: messages are matched through it (the layers keep no table). A transaction
 * wrapper embeds the layer's struct osn_sip_txn and one event per timer slot. A message embeds
 * its link event and its place in a server's queue. Nothing is allocated per event once the
 * pools have grown to the working set; a call is freed when the last transaction or message
 * referring to it is gone (a reference count).
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "net_int.h"
#include "osn/des.h"
#include "osn/err.h"

/* ---- pools ---- */

/* A new zeroed block of a pool (osn/mem.h), appended to its list.
 *
 * Each pool hands out its free list first (the objects freed last, still in cache), and else
 * the next never-used object of its newest block: a fresh object is first written when it is
 * used, not when its block is made, so its memory is met once and not twice. */
static void *grow(void ***chunks, size_t *n)
{
    void **c = realloc(*chunks, (*n + 1) * sizeof *c);
    if (!c)
        return NULL;
    *chunks = c;
    c[*n] = osn_mem_block_alloc(OSN_MEM_BLOCK);
    if (!c[*n])
        return NULL;
    return c[(*n)++];
}

/* The next never-used object of `size` bytes in a pool's newest block (*fresh up to *end), in a
 * new block when that one is used up; NULL when out of memory. */
static void *fresh(void ***chunks, size_t *n, char **next, char **end, size_t size)
{
    if (*next == *end) {
        char *b = grow(chunks, n);
        if (!b)
            return NULL;
        *next = b;
        *end = b + OSN_MEM_BLOCK / size * size;
    }
    void *o = *next;
    *next += size;
    return o;
}

/* Asks for the lines of the object a pool hands out next (write intent): a fresh one is cold
 * since its huge page was cleared, and a free one has been met only in part since it was last
 * used (32 s ago, most often). Always inline: GCC drops the prefetches of a static helper it
 * keeps out of line. */
static inline __attribute__((always_inline)) void prefetch_next(const void *o, size_t size)
{
    for (size_t off = 0; off < size; off += 64)
        __builtin_prefetch((const char *)o + off, 1, 3);
}

struct call *osn__net_call_new(struct net *s)
{
    uint32_t idx = s->call_free;
    struct call *c;
    uint32_t mask = (1u << CALL_SLOT_BITS) - 1;
    if (idx != UINT32_MAX) {
        c = call_at(s, idx);
        s->call_free = c->next_free;
    } else {
        /* call_fresh's place is calls_per_block when its block is used up (or there is none) */
        if ((s->call_fresh & mask) == s->calls_per_block) {
            if (s->ncallc >> (32 - CALL_SLOT_BITS) || !grow((void ***)&s->callc, &s->ncallc))
                return NULL;
            s->call_fresh = (uint32_t)(s->ncallc - 1) << CALL_SLOT_BITS;
        }
        idx = s->call_fresh++;
        c = call_at(s, idx);
    }
    if (s->call_free != UINT32_MAX)
        prefetch_next(call_at(s, s->call_free), s->call_size);
    else if ((s->call_fresh & mask) < s->calls_per_block)
        prefetch_next(call_at(s, s->call_fresh), s->call_size);
    memset(c, 0, s->call_size);
    /* the network's path, from source 0 (a source writes its own: net_source.c) */
    memcpy(c->path, s->path0, sizeof c->path);
    c->nhop = (uint8_t)s->nhop;
    osn_des_ev_init(&c->hold, EV_HOLD);
    osn_des_ev_init(&c->rtx, EV_2XX);
    c->idx = idx;
    return c;
}

void osn__net_call_unref(struct net *s, struct call *c)
{
    if (--c->refs > 0)
        return;
    osn_des_cancel(&s->q, &c->hold);
    osn_des_cancel(&s->q, &c->rtx);
    if (c->cx) {
        c->cx->next_free = s->cx_free;
        s->cx_free = c->cx;
    }
    c->next_free = s->call_free;
    s->call_free = c->idx;
}

/* Always inline, into the two places that start a transaction (net_txn.c, net_server.c) under
 * LTO: 0.57 calls a message, and GCC kept it out of line (12.5 instructions a message on
 * fanin.ini, the call and what it kept it from seeing). */
__attribute__((always_inline)) inline struct ntxn *osn__net_txn_new(struct net *s, struct call *c,
                                                                    int el, int hop)
{
    struct ntxn *w = s->txn_free;
    if (w) {
        /* Its events are idle, of their types still: osn__net_txn_free cancelled them. */
        s->txn_free = w->next;
    } else {
        if (!(w = fresh((void ***)&s->txnc, &s->ntxnc, &s->txn_fresh, &s->txn_end, sizeof *w)))
            return NULL;
        osn_des_ev_init(&w->ev[0], EV_TXN0);
        osn_des_ev_init(&w->ev[1], EV_TXN1);
    }
    if (s->txn_free)
        prefetch_next(s->txn_free, sizeof *w);
    else if (s->txn_fresh != s->txn_end)
        prefetch_next(s->txn_fresh, sizeof *w);
    w->call = c;
    w->t.user[0] = (uint16_t)el;
    w->t.user[1] = (uint16_t)hop;
    w->t0 = s->q.now;
    c->refs++;
    return w;
}

/* Returns w to the pool; clears the call's pointer to it. */
void osn__net_txn_free(struct net *s, struct ntxn *w)
{
    struct call *c = w->call;
    osn_des_cancel(&s->q, &w->ev[0]);
    osn_des_cancel(&s->q, &w->ev[1]);
    int h = txn_hop(w);
    for (int k = 0; k < 2; k++) {
        if (STX(c, h, k) == w)
            STX(c, h, k) = NULL;
        if (CTX(c, h, k) == w)
            CTX(c, h, k) = NULL;
    }
    if (c->cx) {
        if (c->cx->stx[h] == w)
            c->cx->stx[h] = NULL;
        if (c->cx->ctx[h] == w)
            c->cx->ctx[h] = NULL;
        if (c->cx->gone_stx[h] == w)
            c->cx->gone_stx[h] = NULL;
        if (c->cx->gone_ctx[h] == w)
            c->cx->gone_ctx[h] = NULL;
        if (c->cx->ubye_stx[h] == w)
            c->cx->ubye_stx[h] = NULL;
        if (c->cx->ubye_ctx[h] == w)
            c->cx->ubye_ctx[h] = NULL;
    }
    w->next = s->txn_free;
    s->txn_free = w;
    osn__net_call_unref(s, c);
}

struct nmsg *osn__net_msg_new(struct net *s)
{
    struct nmsg *m = s->msg_free;
    if (m) {
        /* Its event is idle, an EV_LINK still: a message is freed off the event set (popped
         * from its link, or never on one since: queued, dropped). */
        s->msg_free = m->next_free;
    } else {
        if (!(m = fresh((void ***)&s->msgc, &s->nmsgc, &s->msg_fresh, &s->msg_end, sizeof *m)))
            return NULL;
        osn_des_ev_init(&m->ev, EV_LINK);
    }
    m->item.next = NULL;
    m->item.reject = false;
    return m;
}

void osn__net_msg_free(struct net *s, struct nmsg *m)
{
    osn__net_call_unref(s, m->call);
    m->next_free = s->msg_free;
    s->msg_free = m;
}

struct cancels *osn__net_cancels(struct net *s, struct call *c)
{
    if (c->cx)
        return c->cx;
    struct cancels *x = s->cx_free;
    if (x)
        s->cx_free = x->next_free;
    else if (!(x = fresh((void ***)&s->cxc, &s->ncxc, &s->cx_fresh, &s->cx_end, sizeof *x)))
        return NULL;
    *x = (struct cancels){.call = c};
    osn_des_ev_init(&x->hangup, EV_HANGUP);
    c->cx = x;
    return x;
}
