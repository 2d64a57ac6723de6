/*
 * The two server transaction machines of RFC 3261 17.2: INVITE (Figure 7 as amended by RFC 6026
 * 7.1, Timers G, H, I, L and the 100 Trying timer) and non-INVITE (Figure 8, Timer J). Both
 * absorb retransmitted requests, answer them with the last response, and count them: that count
 * is the "redundant retransmission" load the overload studies measure. The tables are for UDP;
 * for a request that came over a reliable transport (t->reliable, TCP) Timer G is never armed and
 * Timers I and J are zero: the ACK, or a non-INVITE's final response, ends the transaction at
 * once (17.2.1, 17.2.2).
 *
 * INVITE server:
 *
 *                        | INVITE from transport: to TU; 100 Trying now, after
 *                        | cfg.trying_delay (Timer "100"), or never (TU's job)
 *   INVITE: resend       V
 *   last 1xx   +---- Proceeding ------ 2xx from TU: send, L = 64*T1 ----+
 *   1xx from   +---->    |                                              V
 *   TU: send             | 300-699 from TU: send,                  Accepted --+ INVITE: absorb
 *                        | G = T1, H = 64*T1                        | | ^  ^   | 2xx from TU:
 *   G: resend, G =       V                                          | | |  +---+ send; ACK: to TU
 *   min(2G, T2)  +--- Completed                                     | +-+
 *   INVITE: resend+-->   |    \ H: TU timeout ---------------------------------+
 *                        | ACK: I = T4                              | L        |
 *                        V                                          V          V
 *   ACK, INVITE: +--- Confirmed ----------------- I ------------------> Terminated
 *   absorb       +-->
 *
 *   state       event              action                               next
 *   Proceeding  Timer "100"        send 100 Trying (no response yet)    Proceeding
 *   Proceeding  INVITE             absorbed, resend last 1xx if any     Proceeding
 *   Proceeding  1xx from TU        send, cancel Timer "100"             Proceeding
 *   Proceeding  2xx from TU        send, L = 64*T1                      Accepted
 *                                  (RFC 6026 off: none)                 (Terminated)
 *   Proceeding  300-699 from TU    send, G = T1, H = 64*T1              Completed
 *   Completed   Timer G            resend final, G = min(2G, T2)        Completed
 *   Completed   INVITE             absorbed, resend final               Completed
 *   Completed   ACK                cancel G, I = T4                     Confirmed
 *   Completed   Timer H            TU timeout                           Terminated
 *   Confirmed   ACK or INVITE      absorbed                             Confirmed
 *   Confirmed   Timer I            -                                    Terminated
 *   Accepted    INVITE             absorbed, nothing sent               Accepted
 *   Accepted    2xx from TU        send                                 Accepted
 *   Accepted    ACK                to TU                                Accepted
 *   Accepted    Timer L            -                                    Terminated
 *   Proceeding, transport error    TU transport error                   Terminated
 *    Completed
 *
 * Non-INVITE server:
 *
 *   state       event              action                               next
 *   Trying      request            absorbed, nothing to resend          Trying
 *   Trying,     1xx from TU        send                                 Proceeding
 *    Proceeding
 *   Trying,     200-699 from TU    send, J = 64*T1                      Completed
 *    Proceeding
 *   Proceeding  request            absorbed, resend last 1xx            Proceeding
 *   Completed   request            absorbed, resend final               Completed
 *   Completed   response from TU   discarded                            Completed
 *   Completed   Timer J            -                                    Terminated
 *   any         transport error    TU transport error                   Terminated
 */
#include "sip_int.h"

/* Keeps and sends response `r` (an original from the TU or the layer's own 100), as it is:
 * the output's own copy, since r is the caller's (unless r is that copy already, as the TU's
 * responses are: osn__sip_stxn_respond). A server's output sends one message. */
static void send_resp(struct osn_sip_layer *l, struct osn_sip_txn *t, const struct osn_sip_msg *r,
                      struct osn_sip_out *o)
{
    t->resp = osn__sip_resp_of(r);
    t->has_resp = true;
    if (r != &o->built)
        o->built = *r;
    osn__sip_send(o, &o->built, false);
    l->stats.resp_sent++;
}

/* Sends the kept response again: the request's identities (8.2.6.2) with the kept status,
 * Retry-After and To tag (struct osn_sip_txn). */
static void resend(struct osn_sip_layer *l, struct osn_sip_txn *t, struct osn_sip_out *o)
{
    o->built = t->req;
    o->built.status = t->resp.status;
    o->built.retry_after = t->resp.retry_after;
    o->built.to_tag = t->resp.to_tag;
    o->built.oc = (struct osn_sip_oc){0};
    osn__sip_send(o, &o->built, true);
    t->nretrans++;
    l->stats.resp_retrans++;
}

static void absorb(struct osn_sip_layer *l, struct osn_sip_txn *t)
{
    t->absorbed++;
    l->stats.req_absorbed++;
}

/* RFC 3261 17.2.1: the transaction's own 100 Trying, built from the request (8.2.6.1: copy the
 * Via, From, Call-ID, CSeq; a 100 needs no To tag). */
static void send_trying(struct osn_sip_layer *l, struct osn_sip_txn *t, struct osn_sip_out *o)
{
    struct osn_sip_msg r = t->req;
    r.status = 100;
    r.to_tag = 0;
    r.retry_after = -1;
    send_resp(l, t, &r, o);
    l->stats.trying_auto++;
}

void osn__sip_stxn_begin(struct osn_sip_layer *l, struct osn_sip_txn *t, double now,
                         struct osn_sip_out *o)
{
    osn__sip_tu(o, OSN_SIP_TU_REQUEST, &t->req);
    if (!osn__sip_is_invite(t)) {
        t->state = OSN_SIP_TRYING; /* RFC 3261 17.2.2 */
        return;
    }
    /* RFC 3261 17.2.1: Proceeding. "The server transaction MUST generate a 100 (Trying)
     * response unless it knows that the TU will generate a provisional or final response
     * within 200 ms". */
    t->state = OSN_SIP_PROCEEDING;
    if (l->cfg.trying_delay == 0)
        send_trying(l, t, o);
    else if (l->cfg.trying_delay > 0)
        osn__sip_arm(t, o, OSN_SIP_TIMER_TRYING, now + l->cfg.trying_delay);
}

static void ist_recv(struct osn_sip_layer *l, struct osn_sip_txn *t, const struct osn_sip_msg *m,
                     double now, struct osn_sip_out *o)
{
    bool ack = m->method == OSN_SIP_ACK;

    switch (t->state) {
    case OSN_SIP_PROCEEDING:
        /* RFC 3261 17.2.1: a retransmitted INVITE in Proceeding gets the most recent
         * provisional again. An ACK here (no final sent yet) is meaningless: ignored. */
        if (!ack) {
            absorb(l, t);
            if (t->has_resp)
                resend(l, t, o);
        }
        break;
    case OSN_SIP_COMPLETED:
        if (ack) {
            /* RFC 3261 17.2.1: ACK -> Confirmed; G stops, I = T4 (UDP) replaces H. */
            t->state = OSN_SIP_CONFIRMED;
            osn__sip_disarm(t, o, 0);
            /* Timer I: "T4 for unreliable transports, and zero seconds for reliable". */
            if (t->reliable)
                osn__sip_terminate(l, t, o);
            else
                osn__sip_arm(t, o, OSN_SIP_TIMER_I, now + l->cfg.t4);
        } else {
            /* RFC 3261 17.2.1: a retransmitted INVITE in Completed gets the final again. */
            absorb(l, t);
            resend(l, t, o);
        }
        break;
    case OSN_SIP_CONFIRMED:
        /* RFC 3261 17.2.1: Confirmed absorbs further ACKs (and late INVITE copies). */
        absorb(l, t);
        break;
    case OSN_SIP_ACCEPTED:
        if (ack) {
            /* RFC 6026 7.1: an ACK in Accepted is passed to the TU. */
            osn__sip_tu(o, OSN_SIP_TU_ACK, m);
        } else {
            /* RFC 6026 7.1: INVITE retransmissions are absorbed, not passed up, and the
             * transaction MUST NOT retransmit the 2xx itself (the TU does, 13.3.1.4). */
            absorb(l, t);
        }
        break;
    default:
        break;
    }
}

static void nist_recv(struct osn_sip_layer *l, struct osn_sip_txn *t, struct osn_sip_out *o)
{
    /* RFC 3261 17.2.2: Trying discards retransmissions; Proceeding and Completed answer them
     * with the last response. */
    if (t->state == OSN_SIP_TRYING || t->state == OSN_SIP_PROCEEDING ||
        t->state == OSN_SIP_COMPLETED) {
        absorb(l, t);
        if (t->state != OSN_SIP_TRYING)
            resend(l, t, o);
    }
}

void osn__sip_stxn_recv(struct osn_sip_layer *l, struct osn_sip_txn *t, const struct osn_sip_msg *m,
                        double now, struct osn_sip_out *o)
{
    if (osn__sip_is_invite(t))
        ist_recv(l, t, m, now, o);
    else
        nist_recv(l, t, o);
}

static void ist_respond(struct osn_sip_layer *l, struct osn_sip_txn *t, const struct osn_sip_msg *r,
                        double now, struct osn_sip_out *o)
{
    int st = r->status;

    if (t->state == OSN_SIP_ACCEPTED) {
        /* RFC 6026 7.1: 2xx from the TU in Accepted go to the transport. Same To tag as the
         * kept 2xx: the UAS core's retransmission (13.3.1.4); another: a forked 2xx. */
        if (st >= 200 && st < 300) {
            bool again = t->has_resp && t->resp.to_tag == r->to_tag;
            if (again) {
                if (r != &o->built)
                    o->built = *r;
                osn__sip_send(o, &o->built, true);
                t->nretrans++;
                l->stats.resp_retrans++;
            } else {
                send_resp(l, t, r, o);
            }
        }
        return;
    }
    if (t->state != OSN_SIP_PROCEEDING)
        return; /* a second final: discarded */
    send_resp(l, t, r, o);
    osn__sip_disarm(t, o, 0); /* any response from the TU makes the 100 Trying moot */
    if (st < 200)
        return; /* RFC 3261 17.2.1: provisionals are sent, no state change */
    if (st < 300) {
        if (l->cfg.rfc6026) {
            /* RFC 6026 7.1: 2xx -> Accepted, Timer L = 64*T1. */
            t->state = OSN_SIP_ACCEPTED;
            osn__sip_arm(t, o, OSN_SIP_TIMER_L, now + 64 * l->cfg.t1);
        } else {
            osn__sip_terminate(l, t, o); /* RFC 3261 17.2.1: 2xx -> Terminated */
        }
        return;
    }
    /* RFC 3261 17.2.1: 300-699 -> Completed; G = T1 on UDP, H = 64*T1 on any transport. */
    t->state = OSN_SIP_COMPLETED;
    t->ival = l->cfg.t1;
    if (!t->reliable) /* "For unreliable transports, ... Timer G": none over TCP */
        osn__sip_arm(t, o, OSN_SIP_TIMER_G, now + t->ival);
    osn__sip_arm(t, o, OSN_SIP_TIMER_H, now + 64 * l->cfg.t1);
}

static void nist_respond(struct osn_sip_layer *l, struct osn_sip_txn *t,
                         const struct osn_sip_msg *r, double now, struct osn_sip_out *o)
{
    if (t->state != OSN_SIP_TRYING && t->state != OSN_SIP_PROCEEDING)
        return; /* RFC 3261 17.2.2: Completed discards further finals from the TU */
    send_resp(l, t, r, o);
    if (r->status < 200) {
        t->state = OSN_SIP_PROCEEDING;
    } else {
        /* RFC 3261 17.2.2: final -> Completed, Timer J = 64*T1 on UDP. */
        t->state = OSN_SIP_COMPLETED;
        /* Timer J: "64*T1 seconds for unreliable transports, and zero seconds for reliable". */
        if (t->reliable)
            osn__sip_terminate(l, t, o);
        else
            osn__sip_arm(t, o, OSN_SIP_TIMER_J, now + 64 * l->cfg.t1);
    }
}

void osn__sip_stxn_respond(struct osn_sip_layer *l, struct osn_sip_txn *t,
                           const struct osn_sip_msg *resp, double now, struct osn_sip_out *o)
{
    /* RFC 3261 8.2.6.2: the response copies Call-ID, From, CSeq and the Via of the request;
     * the TU supplies the status, To tag, Retry-After and overload-control parameters. Made in
     * the output's own message, which sends it: one copy of it a response, not two (a response
     * the state discards leaves it there unsent, as o->nsend says). */
    struct osn_sip_msg *r = &o->built;
    *r = *resp;
    r->method = t->req.method;
    r->cseq = t->req.cseq;
    r->call_id = t->req.call_id;
    r->branch = t->req.branch;
    r->sent_by = t->req.sent_by;
    r->from_tag = t->req.from_tag;
    if (osn__sip_is_invite(t))
        ist_respond(l, t, r, now, o);
    else
        nist_respond(l, t, r, now, o);
}

void osn__sip_stxn_timer(struct osn_sip_layer *l, struct osn_sip_txn *t, int id, double now,
                         struct osn_sip_out *o)
{
    switch (id) {
    case OSN_SIP_TIMER_TRYING:
        if (!t->has_resp)
            send_trying(l, t, o);
        break;
    case OSN_SIP_TIMER_G:
        /* RFC 3261 17.2.1: G fires -> resend the final, G = MIN(2*G, T2). */
        resend(l, t, o);
        t->ival = fmin(2 * t->ival, l->cfg.t2);
        osn__sip_arm(t, o, OSN_SIP_TIMER_G, now + t->ival);
        break;
    case OSN_SIP_TIMER_H:
        /* RFC 3261 17.2.1: H fires in Completed -> Terminated, the TU is told (no ACK). */
        osn__sip_timeout(l, t, o, id);
        break;
    default: /* I, J, L */
        osn__sip_terminate(l, t, o);
        break;
    }
}

void osn__sip_stxn_terr(struct osn_sip_layer *l, struct osn_sip_txn *t, struct osn_sip_out *o)
{
    osn__sip_tu(o, OSN_SIP_TU_TRANSPORT_ERROR, NULL);
    /* RFC 6026 7.1: in Accepted a transport error is reported and the state kept (the TU may
     * retransmit its 2xx); RFC 3261 17.2.4 elsewhere: Terminated. Confirmed sends nothing. */
    if (t->state == OSN_SIP_PROCEEDING || t->state == OSN_SIP_COMPLETED ||
        t->state == OSN_SIP_TRYING)
        osn__sip_terminate(l, t, o);
    else if (t->state == OSN_SIP_CONFIRMED)
        o->tu = OSN_SIP_TU_NONE;
}
