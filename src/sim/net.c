/*
 * The SIP network (include/osn/net.h), first half: the objects and their pools, links, and the
 * glue between the transaction layer (osn/sip.h), the controllers (osn/ctl.h) and the event
 * set (osn/des.h).
 *
 * Objects. A call (pool) knows its source, its outcome and, per hop and request kind, its live
 * transactions: messages are matched through it (the layers keep no table). A transaction
 * wrapper (pool) embeds the layer's
 * struct osn_sip_txn and one event per timer slot. A message (pool) embeds its link event and
 * waits in a server's queue through its own link pointer. Nothing is allocated per event once
 * the pools have grown to the working set; calls are freed when the last transaction or message
 * referring to them is gone (a reference count).
 *
 * Element ids: sources 0..E-1, edges E..2E-1, then mid (tandem), core, UAS. Hop h of a call
 * joins path[h] and path[h+1]; requests go down a hop, responses up. A SIP timer whose duration
 * is one of a few fixed values (T1 * 2^k, T2, T4, 64 T1, D, link delays) goes to a FIFO timer
 * class of the event set, in O(1); other events (service, hold, arrivals) use the heap.
 *
 * The servers, the sources and the event loop are in net_node.c.
 */
#include <math.h>
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
    if (idx != UINT32_MAX) {
        c = call_at(s, idx);
        s->call_free = c->next_free;
    } else {
        if (s->call_fresh == s->ncallc * CALLS_PER_BLOCK && !grow((void ***)&s->callc, &s->ncallc))
            return NULL;
        idx = s->call_fresh++;
        c = call_at(s, idx);
    }
    if (s->call_free != UINT32_MAX)
        prefetch_next(call_at(s, s->call_free), sizeof *c);
    else if (s->call_fresh < s->ncallc * CALLS_PER_BLOCK)
        prefetch_next(call_at(s, s->call_fresh), sizeof *c);
    *c = (struct call){0};
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
    c->next_free = s->call_free;
    s->call_free = c->idx;
}

struct ntxn *osn__net_txn_new(struct net *s, struct call *c, int node, int hop)
{
    struct ntxn *w = s->txn_free;
    if (w)
        s->txn_free = w->next;
    else if (!(w = fresh((void ***)&s->txnc, &s->ntxnc, &s->txn_fresh, &s->txn_end, sizeof *w)))
        return NULL;
    if (s->txn_free)
        prefetch_next(s->txn_free, sizeof *w);
    else if (s->txn_fresh != s->txn_end)
        prefetch_next(s->txn_fresh, sizeof *w);
    osn_des_ev_init(&w->ev[0], EV_TXN0);
    osn_des_ev_init(&w->ev[1], EV_TXN1);
    w->call = c;
    w->t.user[0] = (uint8_t)node;
    w->t.user[1] = (uint8_t)hop;
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
        if (c->stx[h][k] == w)
            c->stx[h][k] = NULL;
        if (c->ctx[h][k] == w)
            c->ctx[h][k] = NULL;
    }
    w->next = s->txn_free;
    s->txn_free = w;
    osn__net_call_unref(s, c);
}

static struct nmsg *msg_new(struct net *s)
{
    struct nmsg *m = s->msg_free;
    if (m)
        s->msg_free = m->next;
    else if (!(m = fresh((void ***)&s->msgc, &s->nmsgc, &s->msg_fresh, &s->msg_end, sizeof *m)))
        return NULL;
    osn_des_ev_init(&m->ev, EV_LINK);
    m->next = NULL;
    m->reject = false;
    return m;
}

void osn__net_msg_free(struct net *s, struct nmsg *m)
{
    osn__net_call_unref(s, m->call);
    m->next = s->msg_free;
    s->msg_free = m;
}

/* ---- helpers ---- */

/* Schedules ev at absolute time `at`: on a FIFO class when at is exactly now + its duration.
 * *hint (may be NULL) is the class that matched last time for this kind of timer, tried first:
 * most timers (B, D, F, H, I, J, K, L, M) always have the same duration. */
static void sched(struct net *s, struct osn_des_ev *ev, double at, int8_t *hint)
{
    double now = s->q.now;
    int cls = -1;
    osn_des_cancel(&s->q, ev);
    if (hint && *hint >= 0 && now + s->fixd[*hint] == at)
        cls = *hint;
    for (int i = 0; cls < 0 && i < s->nfix; i++)
        if (now + s->fixd[i] == at)
            cls = i;
    if (cls >= 0) {
        if (hint)
            *hint = (int8_t)cls;
        if (osn_des_timer(&s->q, ev, cls) != 0)
            s->err = OSN_ENOMEM;
        return;
    }
    if (osn_des_at(&s->q, ev, at < now ? now : at) != 0)
        s->err = OSN_ENOMEM;
}

int osn__net_fix_class(struct net *s, double d)
{
    for (int i = 0; i < s->nfix; i++)
        if (s->fixd[i] == d)
            return i;
    if (s->nfix >= OSN_DES_MAX_FIFOS)
        return -1;
    int id;
    if (osn_des_timer_class(&s->q, d, &id) != 0)
        return -1;
    s->fixd[id] = d;
    s->nfix = id + 1;
    return id;
}

/* Integrates the server's busy time and queue area from its last change to now. */
void osn__net_integrate(struct net *s, struct node *nd)
{
    double now = s->q.now, from = nd->t_last > s->t_obs ? nd->t_last : s->t_obs;
    if (now > from) {
        nd->tot[OSN__NE_AREA] += (double)nd->n * (now - from);
        if (nd->n > 0)
            nd->tot[OSN__NE_BUSY] += now - from;
    }
    nd->t_last = now;
}

void osn__net_mode_update(struct net *s, struct node *nd)
{
    int m = (int)osn_ctl_server_mode(nd->srv);
    if (m == nd->mode)
        return;
    double now = s->q.now, from = nd->t_mode > s->t_obs ? nd->t_mode : s->t_obs;
    if (now > from)
        s->tot[OSN__NT_MODE0 + nd->mode] += now - from;
    nd->t_mode = now;
    nd->mode = m;
}

/* sip oc parameters <-> ctl feedback. PI's ratio travels as oc = ratio * 1e6, algo bit 0x80. */
static void fb_to_oc(const struct osn_ctl_feedback *fb, struct osn_sip_oc *oc)
{
    *oc = (struct osn_sip_oc){0};
    if (fb->algo == OSN_CTL_ALGO_NONE)
        return;
    oc->flags = OSN_SIP_OC_PRESENT | OSN_SIP_OC_VALUE | OSN_SIP_OC_ALGO | OSN_SIP_OC_SEQ;
    oc->algo = fb->algo == OSN_CTL_ALGO_LOSS   ? OSN_SIP_ALGO_LOSS
               : fb->algo == OSN_CTL_ALGO_RATE ? OSN_SIP_ALGO_RATE
                                               : 0x80;
    double v = fb->algo == OSN_CTL_ALGO_PI ? fb->oc * 1e6 : fb->oc;
    /* v + 0.5 truncated is lround for 0 < v <= 4e9 (except for the double just below 0.5), and
     * it needs no libm call: this runs for every response the core sends. */
    oc->value = v > 0 ? (uint32_t)((v < 4e9 ? v : 4e9) + 0.5) : 0;
    if (fb->validity >= 0) {
        oc->flags |= OSN_SIP_OC_VALIDITY;
        oc->validity_ms = (uint32_t)lround(fb->validity * 1000);
    }
    oc->seq_int = fb->seq / 100000;
    oc->seq_frac = (uint32_t)(fb->seq % 100000);
}

bool osn__net_oc_to_fb(const struct osn_sip_oc *oc, struct osn_ctl_feedback *fb)
{
    if (!(oc->flags & OSN_SIP_OC_ALGO) || !(oc->flags & OSN_SIP_OC_VALUE))
        return false;
    fb->algo = oc->algo & OSN_SIP_ALGO_LOSS   ? OSN_CTL_ALGO_LOSS
               : oc->algo & OSN_SIP_ALGO_RATE ? OSN_CTL_ALGO_RATE
                                              : OSN_CTL_ALGO_PI;
    fb->oc = fb->algo == OSN_CTL_ALGO_PI ? oc->value / 1e6 : (double)oc->value;
    fb->validity = oc->flags & OSN_SIP_OC_VALIDITY ? oc->validity_ms / 1000.0 : -1;
    fb->seq = oc->seq_int * 100000 + oc->seq_frac;
    return true;
}

/* ---- links ---- */

/* Puts a copy of m on hop `hop` of call c, downwards (requests) or upwards (responses). */
void osn__net_transmit(struct net *s, int from, struct call *c, int hop,
                       const struct osn_sip_msg *m)
{
    bool down = m->status == 0;
    struct node *fn = &s->nodes[from];

    if (s->link_loss[hop] > 0 && osn_rng_u01(s->rng) < s->link_loss[hop])
        return;
    struct nmsg *nm = msg_new(s);
    if (!nm) {
        s->err = OSN_ENOMEM;
        return;
    }
    nm->m = *m;
    if (!down && fn->srv) { /* RFC 7339 5.2: feedback in every response, current state */
        struct osn_ctl_feedback fb;
        osn_ctl_server_feedback(fn->srv, s->q.now, &fb);
        fb_to_oc(&fb, &nm->m.oc);
    }
    nm->call = c;
    nm->hop = (uint8_t)hop;
    nm->to = (uint16_t)path(s, c, down ? hop + 1 : hop);
    c->refs++;
    if (osn_des_timer(&s->q, &nm->ev, s->link_class[hop]) != 0)
        s->err = OSN_ENOMEM;
}

/* ---- transaction actions ---- */

static void on_tu(struct net *s, struct ntxn *w, const struct osn_sip_out *o);

/* Carries out what the layer asked for: timers, sends, then the TU event, then the end. */
void osn__net_apply(struct net *s, struct ntxn *w, const struct osn_sip_out *o)
{
    struct node *nd = &s->nodes[txn_node(w)];
    for (int i = 0; i < o->ntimer; i++) {
        const struct osn_sip_timer *tm = &o->timer[i];
        if (tm->set)
            sched(s, &w->ev[tm->slot], tm->at, &s->fix_hint[tm->id]);
        else
            osn_des_cancel(&s->q, &w->ev[tm->slot]);
    }
    for (int i = 0; i < o->nsend; i++) {
        const struct osn_sip_send *sd = &o->send[i];
        if (sd->retrans && nd->cli && sd->msg->status == 0 && sd->msg->method == OSN_SIP_INVITE &&
            !osn_ctl_client_retrans_allowed(nd->cli, s->q.now))
            continue; /* pi: this copy is not sent, the transaction goes on */
        osn__net_transmit(s, txn_node(w), w->call, txn_hop(w), sd->msg);
    }
    if (o->tu != OSN_SIP_TU_NONE)
        on_tu(s, w, o);
    if (o->terminated)
        osn__net_txn_free(s, w);
}

/* The TU's part of a response: the layer copies the method, CSeq, Call-ID, From and Via of the
 * request (RFC 3261 8.2.6.2, osn_sip_stxn_respond). */
static struct osn_sip_msg response(const struct osn_sip_txn *t, int status, int retry_after)
{
    return (struct osn_sip_msg){
            .status = (uint16_t)status, .retry_after = retry_after, .to_tag = t->req.call_id + 1};
}

void osn__net_respond(struct net *s, struct ntxn *w, int status, int retry_after)
{
    struct osn_sip_msg r = response(&w->t, status, retry_after);
    struct osn_sip_out o;
    if (osn_sip_stxn_respond(&s->nodes[txn_node(w)].sip, &w->t, &r, s->q.now, &o) == 0)
        osn__net_apply(s, w, &o);
}

/* Starts a client transaction for `req` on hop `hop` from `node`. */
void osn__net_start_client(struct net *s, int node, struct call *c, int hop,
                           struct osn_sip_msg *req)
{
    struct node *nd = &s->nodes[node];
    struct ntxn **slot = &c->ctx[hop][req_slot(req->method)];
    if (*slot) /* its branch is taken (what a table would refuse): not started again */
        return;
    struct ntxn *w = osn__net_txn_new(s, c, node, hop);
    struct osn_sip_out o;
    if (!w) {
        s->err = OSN_ENOMEM;
        return;
    }
    req->sent_by = (uint64_t)node + 1;
    if (nd->cli)
        req->oc.flags = OSN_SIP_OC_PRESENT | OSN_SIP_OC_ALGO,
        req->oc.algo = OSN_SIP_ALGO_LOSS | OSN_SIP_ALGO_RATE;
    if (osn_sip_ctxn_start(&nd->sip, &w->t, req, s->q.now, &o) != 0) {
        osn__net_txn_free(s, w);
        s->err = OSN_EINVAL;
        return;
    }
    *slot = w;
    osn__net_apply(s, w, &o);
}

static void outcome(struct net *s, struct call *c, int oc)
{
    if (c->outcome != O_NONE)
        return;
    c->outcome = (uint8_t)oc;
    if (oc == O_GOOD)
        s->tr_good += 1;
    if (!obs(s))
        return;
    static const int slot[] = {0, OSN__NT_GOOD, OSN__NT_FAIL_TIMEOUT, OSN__NT_FAIL_REJECTED,
                               OSN__NT_FAIL_OTHER};
    s->tot[slot[oc]] += 1;
    if (oc != O_GOOD && c->admitted)
        s->tot[OSN__NT_ADMIT_FAIL] += 1;
}

static void setup_sample(struct net *s, double d)
{
    if (!obs(s))
        return;
    s->tot[OSN__NT_SETUP_N] += 1;
    s->tot[OSN__NT_SETUP_SUM] += d;
    int b = d < 2.0   ? (int)(d * 1000)
            : d < 64. ? OSN__NET_HB_FINE + (int)((d - 2.0) * 10)
                      : OSN__NET_HB - 1;
    if (b < 0)
        b = 0;
    if (b >= OSN__NET_HB)
        b = OSN__NET_HB - 1;
    s->tot[OSN__NT_HIST + b] += 1;
}

/* The TU of each element: UAC, proxy, UAS. */
static void on_tu(struct net *s, struct ntxn *w, const struct osn_sip_out *o)
{
    struct node *nd = &s->nodes[txn_node(w)];
    struct call *c = w->call;
    const struct osn_sip_msg *m = o->msg;
    int h = txn_hop(w);
    bool inv = w->t.req.method == OSN_SIP_INVITE;

    if (w->t.role == OSN_SIP_SERVER) {
        if (o->tu == OSN_SIP_TU_REQUEST) {
            uint8_t *fw = inv ? &c->fwd : &c->bfwd;
            if (*fw & (1u << h)) { /* a late copy after its transaction ended: drop it */
                osn_sip_txn_abort(&nd->sip, &w->t);
                osn__net_txn_free(s, w);
                return;
            }
            *fw |= (uint8_t)(1u << h); /* forwarded(c, h, inv) is now w */
            if (nd->role == R_UAS) {
                if (inv)
                    osn__net_respond(s, w, 180, -1);
                osn__net_respond(s, w, 200, -1);
                if (inv && s->cfg->sip.rfc6026 && !c->acked) {
                    /* RFC 3261 13.3.1.4: the UAS core resends the 2xx from T1, doubling up to
                     * T2, until the ACK comes or 64*T1 has passed. */
                    c->t200 = s->q.now;
                    c->ival = s->cfg->sip.t1;
                    c->refs++;
                    sched(s, &c->rtx, s->q.now + c->ival, NULL);
                }
                return;
            }
            if (nd->cli) {
                enum osn_ctl_msg k = inv ? OSN_CTL_MSG_INVITE : OSN_CTL_MSG_BYE;
                if (osn_ctl_client_admit(nd->cli, s->q.now, k) == OSN_CTL_SHED_503) {
                    osn__net_respond(s, w, 503, -1);
                    return;
                }
            }
            if (inv && txn_node(w) == s->core) {
                c->admitted = true;
                if (obs(s))
                    s->tot[OSN__NT_ADMIT] += 1;
            }
            struct osn_sip_msg req = w->t.req;
            req.branch = branch(c, h + 1, inv ? B_INVITE : B_BYE);
            req.oc = (struct osn_sip_oc){0};
            osn__net_start_client(s, txn_node(w), w->call, h + 1, &req);
        } else if (o->tu == OSN_SIP_TU_ACK && nd->role == R_UAS) {
            c->acked = true;
        } else if (o->tu == OSN_SIP_TU_ACK && nd->role == R_PROXY) {
            struct osn_sip_msg ack = *m;
            ack.branch = branch(c, h + 1, B_ACK);
            osn__net_transmit(s, txn_node(w), w->call, h + 1, &ack);
        }
        return;
    }
    /* client transactions */
    if (nd->role == R_SRC) {
        if (!inv) /* BYE: nothing more to do */
            return;
        if (o->tu == OSN_SIP_TU_TIMEOUT || o->tu == OSN_SIP_TU_TRANSPORT_ERROR) {
            outcome(s, c, O_TIMEOUT);
            return;
        }
        if (o->tu != OSN_SIP_TU_RESPONSE)
            return;
        int st = m->status;
        if (st == 180 && !c->got180) {
            c->got180 = true;
            setup_sample(s, s->q.now - c->t0);
        } else if (st >= 200 && st < 300) {
            struct osn_sip_msg ack = w->t.req;
            ack.method = OSN_SIP_ACK;
            ack.branch = branch(c, 0, B_ACK);
            ack.to_tag = m->to_tag;
            ack.oc = (struct osn_sip_oc){0};
            osn__net_transmit(s, txn_node(w), w->call, 0, &ack);
            if (!c->connected) {
                c->connected = true;
                outcome(s, c, s->q.now - c->t0 <= s->tb ? O_GOOD : O_TIMEOUT);
                c->refs++;
                double hold = s->cfg->src.hold * osn_des_exp1(s->rng);
                osn_des_at(&s->q, &c->hold, s->q.now + hold);
            }
        } else if (st >= 300) {
            outcome(s, c, st == 503 ? O_REJECTED : st == 408 ? O_TIMEOUT : O_OTHER);
        }
        return;
    }
    /* proxy client transactions */
    struct ntxn *up = forwarded(c, h - 1, inv);
    if (o->tu == OSN_SIP_TU_RESPONSE) {
        if (m->status == 100) {
            if (nd->cli)
                osn_ctl_client_on_delay(nd->cli, s->q.now, s->q.now - w->t0);
            return;
        }
        if (up)
            osn__net_respond(s, up, m->status, m->retry_after);
    } else if (o->tu == OSN_SIP_TU_TIMEOUT || o->tu == OSN_SIP_TU_TRANSPORT_ERROR) {
        if (up && (up->t.state == OSN_SIP_PROCEEDING || up->t.state == OSN_SIP_TRYING))
            osn__net_respond(s, up, 408, -1);
    }
}

void osn__net_2xx_timer(struct net *s, struct call *c)
{
    struct ntxn *w = forwarded(c, s->nhop - 1, true);
    double t1 = s->cfg->sip.t1;

    if (!c->acked && w && s->q.now - c->t200 < 64 * t1) {
        struct osn_sip_msg r = response(&w->t, 200, -1);
        struct osn_sip_out o;
        if (osn_sip_stxn_respond(&s->nodes[txn_node(w)].sip, &w->t, &r, s->q.now, &o) == 0)
            osn__net_apply(s, w, &o);
        c->ival = 2 * c->ival < s->cfg->sip.t2 ? 2 * c->ival : s->cfg->sip.t2;
        sched(s, &c->rtx, s->q.now + c->ival, NULL);
        return;
    }
    osn__net_call_unref(s, c); /* the reference the timer had */
}
