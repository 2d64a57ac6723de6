/*
 * The network simulator carries out decisions: the transaction layer's outputs (timers on the
 * event set, messages onto links) and the element code's (responses, forwarded requests).
 *
 * Element ids: sources 0..E-1, edges E..2E-1, then mid (tandem), core, UAS. Hop h of a call
 * joins path[h] and path[h+1]; requests go down a hop, responses up. A SIP timer whose duration
 * is one of a few fixed values (T1 * 2^k, T2, T4, 64 T1, D, link delays) goes to a FIFO timer
 * class of the event set, in O(1); other events (service, hold, arrivals) use the heap.
 */
#include "net_int.h"
#include "osn/des.h"
#include "osn/err.h"

/* Schedules ev at absolute time `at`: on a FIFO class when at is exactly now + its duration.
 * *hint (may be NULL) is the class that matched last time for this kind of timer, tried first:
 * most timers (B, D, F, H, I, J, K, L, M) always have the same duration. Always inline into the
 * transaction output loop (osn__net_apply), 1.3 timers a message: GCC kept it out of line, and
 * the call cost 6 instructions a message on fanin.ini. */
static inline __attribute__((always_inline)) void
sched(struct net *s, int from, struct osn_des_ev *ev, double at, int8_t *hint)
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
        if (osn_des_timer_key(&s->q, ev, cls, next_key(s, from)) != 0)
            s->err = OSN_ENOMEM;
        return;
    }
    if (osn_des_at_key(&s->q, ev, at < now ? now : at, next_key(s, from)) != 0)
        s->err = OSN_ENOMEM;
}

void osn__net_sched(struct net *s, int from, struct osn_des_ev *ev, double at, int8_t *hint)
{
    sched(s, from, ev, at, hint);
}

void osn__net_at(struct net *s, int from, struct osn_des_ev *ev, double at)
{
    if (osn_des_at_key(&s->q, ev, at, next_key(s, from)) != 0)
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

/* Puts a copy of m on hop `hop` of call c, downwards (requests) or upwards (responses). Always
 * inline into the transaction output loop, as sched() is, about one send a message: out of
 * line it cost 5.7 instructions a message on fanin.ini. */
static void transmit_slow(struct net *s, int from, struct call *c, int hop,
                          const struct osn_sip_msg *m);

static inline __attribute__((always_inline)) void transmit(struct net *s, int from, struct call *c,
                                                           int hop, const struct osn_sip_msg *m)
{
    bool down = m->status == 0;
    if (__builtin_expect(up_bye(m), 0)) {
        transmit_slow(s, from, c, hop, m);
        return;
    }

    /* A hop whose links differ is a loss > 1 (LINK_OWN): asked only of a hop with a loss, so a
     * network without links of their own, lossless, pays nothing for them. */
    double loss = s->link_loss[hop];
    if (loss > 0) {
        if (__builtin_expect(loss == LINK_OWN, 0)) {
            transmit_slow(s, from, c, hop, m);
            return;
        }
        if (osn_rng_u01(&s->loss_rng[hop]) < loss)
            return;
    }
    struct nmsg *nm = osn__net_msg_new(s);
    if (!nm) {
        s->err = OSN_ENOMEM;
        return;
    }
    nm->m = *m;
    /* RFC 7339 5.2: the feedback of a server half (a core's, an edge's: [control] at) in every
     * response, current state. Its server half is asked only then: GCC read the sender's
     * element for every message. */
    if (!down && has_srv(s, from)) {
        struct osn_ctl_feedback fb;
        osn_ctl_server_feedback(s->elems[from].srv, s->q.now, &fb);
        osn_elem_fb_to_oc(&fb, &nm->m.oc);
    }
    nm->call = c;
    nm->hop = (uint8_t)hop;
    nm->to = (uint16_t)path(s, c, down ? hop + 1 : hop, m->branch);
    c->refs++;
    if (osn_des_timer_key(&s->q, &nm->ev, s->link_class[hop], next_key(s, from)) != 0)
        s->err = OSN_ENOMEM;
}

void osn__net_transmit(struct net *s, int from, struct call *c, int hop,
                       const struct osn_sip_msg *m)
{
    transmit(s, from, c, hop, m);
}

void osn__net_link_at(struct net *s, int hop, const struct call *c, uint64_t b, int *cls,
                      double *delay, double *loss)
{
    *cls = s->link_class[hop], *loss = s->link_loss[hop], *delay = 0;
    if (*loss == LINK_OWN) {
        const struct net_link *l = link_own(s, c, hop, b);
        *cls = l->cls, *delay = l->delay, *loss = l->loss;
    }
}

void osn__net_on_link(struct net *s, int from, struct osn_des_ev *ev, int cls, double delay)
{
    uint64_t key = next_key(s, from);
    if ((cls >= 0 ? osn_des_timer_key(&s->q, ev, cls, key)
                  : osn_des_at_key(&s->q, ev, s->q.now + delay, key)) != 0)
        s->err = OSN_ENOMEM;
}

/* transmit() for the callee's BYE, whose requests go up (toward the source) and responses down,
 * none of them with a core's feedback (its responses answer a request from upstream), and for
 * every message on a hop whose links differ (LINK_OWN). Out of line, and asked by one test of
 * the branch and one of the hop's loss: every message passes transmit(). */
static __attribute__((noinline, cold)) void transmit_slow(struct net *s, int from, struct call *c,
                                                          int hop, const struct osn_sip_msg *m)
{
    bool down = toward_uas(m);
    int cls;
    double delay, loss;
    osn__net_link_at(s, hop, c, m->branch, &cls, &delay, &loss);
    if (loss > 0 && osn_rng_u01(&s->loss_rng[hop]) < loss)
        return;
    struct nmsg *nm = osn__net_msg_new(s);
    if (!nm) {
        s->err = OSN_ENOMEM;
        return;
    }
    nm->m = *m;
    if (!down && !up_bye(m) && has_srv(s, from)) { /* as in transmit() */
        struct osn_ctl_feedback fb;
        osn_ctl_server_feedback(s->elems[from].srv, s->q.now, &fb);
        osn_elem_fb_to_oc(&fb, &nm->m.oc);
    }
    nm->call = c;
    nm->hop = (uint8_t)hop;
    nm->to = (uint16_t)path(s, c, down ? hop + 1 : hop, m->branch);
    c->refs++;
    osn__net_on_link(s, from, &nm->ev, cls, delay);
}

/* Whether w's retransmission sd is sent: a client half (pi) may hold a copy back, and the
 * transaction goes on. Out of line: inlined into osn__net_apply, GCC found w's client half for
 * every output before its loop (9 instructions a message on fanin.ini, which retransmits
 * nothing). */
static __attribute__((noinline, cold)) bool retrans_sent(struct net *s, struct ntxn *w,
                                                         const struct osn_sip_send *sd)
{
    const struct element *el = &s->elems[txn_elem(w)];
    /* the callee's BYE goes to no server of a client half (OSN_ELEM_HOP_NONE) */
    struct osn_ctl *cli = up_bye(sd->msg) ? NULL : elem_cli(el, w->call, w->t.req.branch);
    if (!osn_proxy_retrans_allowed(cli, s->q.now, sd->msg))
        return false;
    s->tr.retrans += 1;
    return true;
}

/* Carries out what the layer asked for: timers, sends, then the TU event, then the end. */
void osn__net_apply(struct net *s, struct ntxn *w, const struct osn_sip_out *o)
{
    /* The counts are read once: nothing below writes *o, but the compiler cannot know it (o may
     * be s->out) and read them again after every call. */
    int ntimer = o->ntimer, nsend = o->nsend;
    for (int i = 0; i < ntimer; i++) {
        const struct osn_sip_timer *tm = &o->timer[i];
        if (tm->set)
            sched(s, txn_elem(w), &w->ev[tm->slot], tm->at, &s->fix_hint[tm->id]);
        else
            osn_des_cancel(&s->q, &w->ev[tm->slot]);
    }
    for (int i = 0; i < nsend; i++) {
        const struct osn_sip_send *sd = &o->send[i];
        if (sd->retrans && !retrans_sent(s, w, sd))
            continue;
        transmit(s, txn_elem(w), w->call, txn_hop(w), sd->msg);
    }
    if (o->tu != OSN_SIP_TU_NONE)
        osn__net_on_tu(s, w, o);
    if (o->terminated)
        osn__net_txn_free(s, w);
}

void osn__net_respond(struct net *s, struct ntxn *w, int status, int retry_after)
{
    struct osn_sip_msg r = osn_elem_response(&w->t.req, status, retry_after);
    struct osn_sip_out o;
    if (osn_sip_stxn_respond(&s->elems[txn_elem(w)].sip, &w->t, &r, s->q.now, &o) == 0)
        osn__net_apply(s, w, &o);
}

/* Starts a client transaction for `req` on hop `hop` from element `from`. */
void osn__net_start_client(struct net *s, int from, struct call *c, int hop,
                           struct osn_sip_msg *req)
{
    struct element *el = &s->elems[from];
    if (req->method == OSN_SIP_CANCEL && !osn__net_cancels(s, c)) {
        s->err = OSN_ENOMEM;
        return;
    }
    struct ntxn **slot = txn_slot(c, hop, req->method, false);
    if (*slot) /* its branch is taken (what a table would refuse): not started again */
        return;
    struct ntxn *w = osn__net_txn_new(s, c, from, hop);
    struct osn_sip_out o;
    if (!w) {
        s->err = OSN_ENOMEM;
        return;
    }
    req->sent_by = (uint64_t)from + 1;
    if (el->offer_oc)
        osn_elem_oc_offer(&req->oc);
    if (osn_sip_ctxn_start(&el->sip, &w->t, req, s->q.now, &o) != 0) {
        osn__net_txn_free(s, w);
        s->err = OSN_EINVAL;
        return;
    }
    *slot = w;
    osn__net_apply(s, w, &o);
}

/* osn__net_start_client's work for the callee's BYE, apart so that the common one stays as it
 * was (a message in three starts a client transaction). */
void osn__net_start_up_bye(struct net *s, int from, struct call *c, int hop,
                           struct osn_sip_msg *req)
{
    struct cancels *x = osn__net_cancels(s, c);
    struct osn_sip_out o;
    if (!x) {
        s->err = OSN_ENOMEM;
        return;
    }
    if (x->ubye_ctx[hop]) /* its branch is taken: not started again */
        return;
    struct ntxn *w = osn__net_txn_new(s, c, from, hop);
    if (!w) {
        s->err = OSN_ENOMEM;
        return;
    }
    req->sent_by = (uint64_t)from + 1; /* no oc offered (RFC 7339 5.10) */
    if (osn_sip_ctxn_start(&s->elems[from].sip, &w->t, req, s->q.now, &o) != 0) {
        osn__net_txn_free(s, w);
        s->err = OSN_EINVAL;
        return;
    }
    x->ubye_ctx[hop] = w;
    osn__net_apply(s, w, &o);
}

void osn__net_send_cancel(struct net *s, int from, struct call *c, int hop)
{
    struct ntxn *inv = CTX(c, hop, 0);
    if (!inv)
        return;
    struct osn_sip_msg req = inv->t.req;
    req.method = OSN_SIP_CANCEL;
    req.oc = (struct osn_sip_oc){0}; /* the client half offers its own (start_client) */
    osn__net_start_client(s, from, c, hop, &req);
}
