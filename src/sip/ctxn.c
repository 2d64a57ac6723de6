/*
 * The two client transaction machines of RFC 3261 17.1, with the RFC 6026 Accepted state: INVITE
 * (Figure 5, Timers A, B, D, M) and non-INVITE (Figure 6, Timers E, F, K). The tables are for
 * UDP; over a reliable transport (t->reliable, TCP) Timers A and E are never armed and D and K
 * are zero, so Completed is left at once for Terminated (17.1.1.2, 17.1.2.2).
 *
 * INVITE client:
 *
 *                      | INVITE from TU: send, A = T1, B = 64*T1
 *      A: resend,      V
 *      A = 2A   +--- Calling -------------------------------+
 *               +-->  |  |  2xx: to TU, M = 64*T1           |
 *   B (or retrans     |  +------------------------+         | 300-699: to TU,
 *   exhausted):       | 1xx: to TU                |         | send ACK, D
 *   timeout           V                           V         |
 *           1xx +-- Proceeding --- 2xx -----> Accepted <+   |
 *           TU  +-->  |                        |   |    | 2xx: to TU
 *                     | 300-699: to TU, ACK    |   +----+   |
 *                     V                        | M          |
 *                 Completed <--------------------------------+
 *       300-699:  |   |  ^                     |
 *       resend ACK+---|--+                     |
 *                     | D                      V
 *                     +------------------> Terminated
 *
 *   state       event              action                               next
 *   Calling     Timer A            resend INVITE, A = 2A (no T2 cap)    Calling
 *   Calling     Timer B            TU timeout                           Terminated
 *   Calling     1xx                to TU, cancel A and B                Proceeding
 *   Calling,    2xx                to TU, cancel A, M = 64*T1           Accepted
 *    Proceeding                    (RFC 6026 off: none)                 (Terminated)
 *   Calling,    300-699            to TU, send ACK, cancel A, D         Completed
 *    Proceeding
 *   Proceeding  1xx                to TU                                Proceeding
 *   Completed   300-699            resend ACK, absorbed (not to TU)     Completed
 *   Completed   Timer D            -                                    Terminated
 *   Accepted    2xx                to TU (the TU sends the ACK)         Accepted
 *   Accepted    Timer M            -                                    Terminated
 *   Calling,    transport error    TU transport error                   Terminated
 *    Proceeding
 *
 * Non-INVITE client:
 *
 *   state       event              action                               next
 *   Trying      Timer E            resend, E = min(2E, T2)              Trying
 *   Trying,     Timer F            TU timeout                           Terminated
 *    Proceeding
 *   Trying,     1xx                to TU                                Proceeding
 *    Proceeding
 *   Proceeding  Timer E            resend, E = T2                       Proceeding
 *   Trying,     200-699            to TU, cancel E, K = T4              Completed
 *    Proceeding
 *   Completed   any response       absorbed                             Completed
 *   Completed   Timer K            -                                    Terminated
 *   Trying,     transport error    TU transport error                   Terminated
 *    Proceeding
 *
 * SIPp mode (cfg.*_max_retrans >= 0): when A or E fires after the last allowed retransmission,
 * the transaction times out at once, as SIPp's call.cpp fails a call with
 * E_FAILED_MAX_UDP_RETRANS at the instant the next copy would be due.
 */
#include "sip_int.h"

/* RFC 3261 17.1.1.3: the ACK for a non-2xx final has the INVITE's Call-ID, From, CSeq number,
 * top Via (branch), and the To of the response (its tag). */
static struct osn_sip_msg make_ack(const struct osn_sip_txn *t)
{
    struct osn_sip_msg a = t->req;
    a.method = OSN_SIP_ACK;
    a.status = 0;
    a.to_tag = t->resp.to_tag;
    a.retry_after = -1;
    return a;
}

void osn__sip_ctxn_begin(struct osn_sip_layer *l, struct osn_sip_txn *t, double now,
                         struct osn_sip_out *o)
{
    double t1 = l->cfg.t1;

    t->ival = t1;
    osn__sip_send(o, &t->req, false);
    l->stats.req_sent++;
    if (osn__sip_is_invite(t)) {
        /* RFC 3261 17.1.1.2: Calling; UDP starts Timer A = T1 and, on any transport,
         * Timer B = 64*T1. */
        t->state = OSN_SIP_CALLING;
        if (!t->reliable)
            osn__sip_arm(t, o, OSN_SIP_TIMER_A, now + t1);
        osn__sip_arm(t, o, OSN_SIP_TIMER_B, now + 64 * t1);
    } else {
        /* RFC 3261 17.1.2.2: Trying; Timer F = 64*T1 and, on UDP, Timer E = T1. */
        t->state = OSN_SIP_TRYING;
        if (!t->reliable)
            osn__sip_arm(t, o, OSN_SIP_TIMER_E, now + t1);
        osn__sip_arm(t, o, OSN_SIP_TIMER_F, now + 64 * t1);
    }
}

/* A or E fired: resend the request, or time out when the SIPp limit is reached. */
static void retransmit(struct osn_sip_layer *l, struct osn_sip_txn *t, int id, double now,
                       struct osn_sip_out *o)
{
    int max = osn__sip_is_invite(t) ? l->cfg.invite_max_retrans : l->cfg.non_invite_max_retrans;

    if (max >= 0 && t->nretrans >= (uint32_t)max) {
        osn__sip_timeout(l, t, o, id);
        return;
    }
    osn__sip_send(o, &t->req, true);
    t->nretrans++;
    l->stats.req_retrans++;
    if (id == OSN_SIP_TIMER_A) {
        /* RFC 3261 17.1.1.2: "the client transaction MUST start timer A with a value of 2*T1"
         * and so on, doubling with no cap for INVITE. */
        t->ival *= 2;
    } else if (t->state == OSN_SIP_TRYING) {
        /* RFC 3261 17.1.2.2: in Trying, E resets to MIN(2*T1, T2), doubling up to T2. */
        t->ival = fmin(2 * t->ival, l->cfg.t2);
    } else {
        /* RFC 3261 17.1.2.2: in Proceeding, "Timer E MUST be reset with a value of T2". */
        t->ival = l->cfg.t2;
    }
    osn__sip_arm(t, o, id, now + t->ival);
}

static void ict_recv(struct osn_sip_layer *l, struct osn_sip_txn *t, const struct osn_sip_msg *m,
                     double now, struct osn_sip_out *o)
{
    int st = m->status;

    switch (t->state) {
    case OSN_SIP_CALLING:
    case OSN_SIP_PROCEEDING:
        osn__sip_tu(o, OSN_SIP_TU_RESPONSE, m);
        o->retry_after = m->retry_after;
        osn__sip_disarm(t, o, 0); /* RFC 3261 17.1.1.2: any response stops Timer A */
        if (st < 200) {
            /* RFC 3261 17.1.1.2: Timer B is acted on only "in the Calling state". */
            if (t->state == OSN_SIP_CALLING && !l->cfg.timer_b_proceeding)
                osn__sip_disarm(t, o, 1);
            t->state = OSN_SIP_PROCEEDING;
        } else if (st < 300) {
            if (l->cfg.rfc6026) {
                /* RFC 6026 7.2: a 2xx moves to Accepted and starts Timer M = 64*T1. */
                t->state = OSN_SIP_ACCEPTED;
                osn__sip_arm(t, o, OSN_SIP_TIMER_M, now + 64 * l->cfg.t1);
            } else {
                osn__sip_terminate(l, t, o); /* RFC 3261 17.1.1.2: 2xx -> Terminated */
            }
        } else {
            /* RFC 3261 17.1.1.2: 300-699 -> Completed, send ACK, Timer D (> 32 s on UDP). */
            t->resp = osn__sip_resp_of(m);
            t->has_resp = true;
            o->built = make_ack(t);
            osn__sip_send(o, &o->built, false);
            l->stats.req_sent++;
            t->state = OSN_SIP_COMPLETED;
            /* Timer D: "zero seconds for reliable transports", so Terminated now. */
            if (t->reliable)
                osn__sip_terminate(l, t, o);
            else
                osn__sip_arm(t, o, OSN_SIP_TIMER_D, now + l->cfg.timer_d);
        }
        break;
    case OSN_SIP_COMPLETED:
        if (st >= 300) {
            /* RFC 3261 17.1.1.2: a retransmitted final in Completed makes the ACK go again and
             * is not passed up. */
            o->built = make_ack(t);
            osn__sip_send(o, &o->built, true);
            l->stats.req_retrans++;
            t->absorbed++;
            l->stats.resp_absorbed++;
        }
        break;
    case OSN_SIP_ACCEPTED:
        /* RFC 6026 7.2: each 2xx in Accepted goes to the TU, which ACKs it. */
        if (st >= 200 && st < 300) {
            osn__sip_tu(o, OSN_SIP_TU_RESPONSE, m);
            o->retry_after = m->retry_after;
        }
        break;
    default:
        break;
    }
}

static void nict_recv(struct osn_sip_layer *l, struct osn_sip_txn *t, const struct osn_sip_msg *m,
                      double now, struct osn_sip_out *o)
{
    switch (t->state) {
    case OSN_SIP_TRYING:
    case OSN_SIP_PROCEEDING:
        osn__sip_tu(o, OSN_SIP_TU_RESPONSE, m);
        o->retry_after = m->retry_after;
        if (m->status < 200) {
            /* RFC 3261 17.1.2.2: a 1xx does not stop E; it fires on at T2 from now on. */
            t->state = OSN_SIP_PROCEEDING;
        } else {
            /* RFC 3261 17.1.2.2: a final -> Completed, Timer K = T4 on UDP. */
            t->resp = osn__sip_resp_of(m);
            t->has_resp = true;
            t->state = OSN_SIP_COMPLETED;
            osn__sip_disarm(t, o, 0);
            /* Timer K: "zero seconds for reliable transports", so Terminated now. */
            if (t->reliable)
                osn__sip_terminate(l, t, o);
            else
                osn__sip_arm(t, o, OSN_SIP_TIMER_K, now + l->cfg.t4);
        }
        break;
    case OSN_SIP_COMPLETED:
        /* RFC 3261 17.1.2.2: Completed buffers response retransmissions. */
        t->absorbed++;
        l->stats.resp_absorbed++;
        break;
    default:
        break;
    }
}

void osn__sip_ctxn_recv(struct osn_sip_layer *l, struct osn_sip_txn *t, const struct osn_sip_msg *m,
                        double now, struct osn_sip_out *o)
{
    if (osn__sip_is_invite(t))
        ict_recv(l, t, m, now, o);
    else
        nict_recv(l, t, m, now, o);
}

void osn__sip_ctxn_timer(struct osn_sip_layer *l, struct osn_sip_txn *t, int id, double now,
                         struct osn_sip_out *o)
{
    switch (id) {
    case OSN_SIP_TIMER_A:
    case OSN_SIP_TIMER_E:
        retransmit(l, t, id, now, o);
        break;
    case OSN_SIP_TIMER_B:
    case OSN_SIP_TIMER_F:
        /* RFC 3261 17.1.1.2 / 17.1.2.2: B or F fires -> inform the TU of the timeout,
         * Terminated (the TU treats it as a 408, 8.1.3.1). No ACK is sent. */
        osn__sip_timeout(l, t, o, id);
        break;
    default: /* D, K, M: the wait for retransmissions is over */
        osn__sip_terminate(l, t, o);
        break;
    }
}

void osn__sip_ctxn_terr(struct osn_sip_layer *l, struct osn_sip_txn *t, struct osn_sip_out *o)
{
    /* RFC 3261 17.1.1.2, 17.1.2.2, 17.1.4: a transport error in Calling/Trying or Proceeding
     * goes to the TU (as a 503) and terminates. Later states have nothing left to send but
     * ACKs, whose failure does not matter to the TU. */
    if (t->state == OSN_SIP_CALLING || t->state == OSN_SIP_TRYING ||
        t->state == OSN_SIP_PROCEEDING) {
        osn__sip_tu(o, OSN_SIP_TU_TRANSPORT_ERROR, NULL);
        osn__sip_terminate(l, t, o);
    }
}
