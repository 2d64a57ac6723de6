/*
 * The SIP element's transaction user, once for both worlds: given `now` and one event of a
 * transaction, it returns the list of actions the driver carries out (osn/elem.h, struct
 * osn_elem_actions). The network simulator (src/sim/net_tu.c, net_server.c) and the node
 * (src/node/tu.c, recv.c) call these functions and only execute the result; what differs between
 * them is how an action is done (pools and links, or bytes and a socket), never which.
 *
 *   event (driver)                    role   decision (actions)
 *   ------------------------------    -----  -----------------------------------------------
 *   server txn started, shed by the   any    strip 100 Trying and the TU event; RESPOND 503
 *     server half (RFC 7339 5.3)
 *   TU_REQUEST, handled before        any    DROP the new transaction: a late copy
 *   TU_REQUEST, Max-Forwards 0        proxy  RESPOND 483 (RFC 3261 16.3 step 3)
 *   TU_REQUEST, our Via, same branch  proxy  RESPOND 482 (16.3 step 4: a loop, not a spiral)
 *   TU_REQUEST, client half sheds     proxy  RESPOND 503 (RFC 7339 5.3)
 *   TU_REQUEST                        proxy  FORWARD (RFC 3261 16.6)
 *   TU_REQUEST BYE/CANCEL, unknown    UAS    RESPOND 481 (RFC 3261 15.1.2, 9.2); likewise
 *     or in a dialog it does not know           any request with a To tag (12.2.2)
 *   TU_REQUEST                        UAS    what osn_uas_answer says (405, 415, 488; 180 and
 *                                            200 with Contact and SDP, ARM_2XX; 200 to OPTIONS
 *                                            with Allow, Accept, Supported; 200 to BYE)
 *   TU_REQUEST CANCEL, no INVITE      any    RESPOND 481 (RFC 3261 9.2; see osn_elem_on_cancel)
 *   TU_REQUEST CANCEL, INVITE pending UAS    RESPOND 200, RESPOND_INVITE 487 (RFC 3261 9.2)
 *   TU_REQUEST CANCEL, INVITE pending proxy  RESPOND 200, CANCEL_BRANCH when the branch has a
 *     (Proceeding)                           provisional and no final response (16.10, 9.1),
 *                                            CANCEL_LATER when it has none yet; the client
 *                                            half sheds it: RESPOND 503
 *   client event, CANCEL kept         proxy  CANCEL_BRANCH at the first provisional response;
 *                                            a final one or a timeout drops it (9.1)
 *   UAS ring timer, INVITE pending    UAS    RESPOND 200, ARM_2XX (the 180 went at once)
 *   TU_REQUEST CANCEL, INVITE answered any    RESPOND 200, nothing else (too late, 9.2)
 *   FORWARD failed: too large         proxy  RESPOND 513 (RFC 3261 18.1.1), else RESPOND 500
 *   RELAY failed (no Via below ours)  proxy  count stray; a final one RESPOND 502 (16.7 step 3)
 *   UAS 2xx timer, no ACK, < 64*T1    UAS    RESEND_2XX, ARM_2XX (RFC 3261 13.3.1.4)
 *   TU_ACK / ACK matching nothing     proxy  FORWARD_ACK (RFC 3261 16.11, RFC 6026 7.1)
 *   TU_ACK / ACK matching nothing     UAS    ACKED (RFC 3261 13.3.1.4)
 *   client TU_RESPONSE 100            proxy  nothing (16.7 step 3); PI's delay sample
 *   client TU_RESPONSE other          proxy  RELAY upstream while the server txn exists
 *   client TU_TIMEOUT                 proxy  RESPOND 408 upstream while it has no final
 *                                            response (RFC 3261 16.8)
 *   client TU_TRANSPORT_ERROR         proxy  RESPOND 500 upstream likewise: a 503 from the
 *                                            branch (16.9), the only response (16.7 step 6)
 *
 * Counting travels with the actions (enum osn_elem_count), so both worlds count the same events:
 * calls_ok at an element is the first 2xx of an INVITE it sends upstream (relayed or its own);
 * whether the call was good end to end is the UAC's count (uac.c), a different figure.
 */
#include "osn/elem.h"

static void push(struct osn_elem_actions *a, int kind, int count, int status, int retry_after)
{
    struct osn_elem_action *x = &a->a[a->n++];
    x->kind = (uint8_t)kind;
    x->count = (uint8_t)count;
    x->status = (uint16_t)status;
    x->retry_after = retry_after;
    x->with = 0;
    x->hop = 0;
}

/* The UAS answers at once (uas.c) and, for an INVITE's 2xx, resends it until the ACK. A new
 * call it accepts counts as passed on and, at its 2xx, as a good call; a re-INVITE or a call
 * refused (488, 415) as neither. */
void osn_elem_on_uas_request(const struct osn_elem *e, double now, const struct osn_uas_request *q,
                             bool handled, struct osn_uas_2xx *u, struct osn_elem_actions *a)
{
    struct osn_uas_reply r[2];
    int k = osn_uas_answer(q, r);
    bool inv = q->method == OSN_SIP_INVITE;
    bool call = inv && !q->in_dialog && r[k - 1].status == 200; /* a new call it accepts */

    a->n = 0;
    if (handled) {
        push(a, OSN_ELEM_A_DROP, OSN_ELEM_C_LATE, 0, -1);
        return;
    }
    if (r[0].status == 481) {
        push(a, OSN_ELEM_A_RESPOND, OSN_ELEM_C_481, 481, -1);
        return;
    }
    if (call)
        push(a, OSN_ELEM_A_COUNT, OSN_ELEM_C_FORWARDED, 0, -1);
    /* A new call that rings: its 180 now, its 200 when the ring timer says (the 200 is the
     * last reply, osn_uas_answer's table). */
    bool ring = call && k == 2 && q->ring > 0;
    if (ring)
        k--;
    for (int i = 0; i < k; i++) {
        bool ok = r[i].status >= 200 && r[i].status < 300;
        push(a, OSN_ELEM_A_RESPOND,
             !ok   ? OSN_ELEM_C_NONE
             : inv ? (call ? OSN_ELEM_C_CALL_OK : OSN_ELEM_C_NONE)
                   : OSN_ELEM_C_BYE_OK,
             r[i].status, -1);
        a->a[a->n - 1].with = r[i].with;
    }
    if (ring) {
        a->at = now + q->ring;
        push(a, OSN_ELEM_A_ARM_RING, OSN_ELEM_C_NONE, 0, -1);
    } else if (inv && r[k - 1].status == 200 && osn_uas_2xx_start(u, now, e->sip, &a->at)) {
        push(a, OSN_ELEM_A_ARM_2XX, OSN_ELEM_C_NONE, 0, -1);
    }
}

void osn_elem_on_ring_timer(const struct osn_elem *e, double now, int invite_state,
                            struct osn_uas_2xx *u, struct osn_elem_actions *a)
{
    a->n = 0;
    /* RFC 3261 9.2: a CANCEL while it rang answered the INVITE 487 (Completed); the user who
     * picks up then is too late, and so is one whose transaction is gone. */
    if (e->role != OSN_ELEM_UAS || invite_state != OSN_SIP_PROCEEDING)
        return;
    push(a, OSN_ELEM_A_RESPOND, OSN_ELEM_C_CALL_OK, 200, -1);
    a->a[0].with = OSN_ELEM_W_CONTACT | OSN_ELEM_W_SDP;
    if (osn_uas_2xx_start(u, now, e->sip, &a->at))
        push(a, OSN_ELEM_A_ARM_2XX, OSN_ELEM_C_NONE, 0, -1);
}

void osn_elem_on_request(const struct osn_elem *e, double now, int method, int max_forwards,
                         bool handled, bool known, bool loop, struct osn_uas_2xx *u,
                         struct osn_elem_actions *a)
{
    if (e->role == OSN_ELEM_UAS) {
        struct osn_uas_request q = {.method = method, .known = known};
        osn_elem_on_uas_request(e, now, &q, handled, u, a);
        return;
    }
    a->n = 0;
    if (handled) {
        push(a, OSN_ELEM_A_DROP, OSN_ELEM_C_LATE, 0, -1);
        return;
    }
    /* RFC 3261 16.3 steps 3 and 4 validate before 16.6 forwards: a request the proxy cannot
     * forward is not put to the client half. */
    if (max_forwards == 0) {
        push(a, OSN_ELEM_A_RESPOND, OSN_ELEM_C_483, 483, -1);
        return;
    }
    if (loop) {
        push(a, OSN_ELEM_A_RESPOND, OSN_ELEM_C_482, 482, -1);
        return;
    }
    int fwd = method == OSN_SIP_INVITE ? OSN_ELEM_C_FORWARDED : OSN_ELEM_C_NONE;
    if (e->hops) {
        unsigned back;
        int hop = osn_elem_hops_choose(e->hops, now, method, -1, &back);
        if (hop < 0) {
            unsigned ra = back ? back : e->retry_after;
            push(a, OSN_ELEM_A_RESPOND, OSN_ELEM_C_503, 503, ra ? (int)ra : -1);
            return;
        }
        push(a, OSN_ELEM_A_FORWARD, fwd, 0, -1);
        a->a[a->n - 1].hop = (uint8_t)hop;
        return;
    }
    if (osn_proxy_on_request(e->cli, now, method, false) == OSN_PROXY_SHED_503) {
        push(a, OSN_ELEM_A_RESPOND, OSN_ELEM_C_503, 503, e->retry_after ? (int)e->retry_after : -1);
        return;
    }
    push(a, OSN_ELEM_A_FORWARD, fwd, 0, -1);
}

/* Whether an INVITE server transaction has no final response yet (RFC 3261 17.2.1: it starts in
 * Proceeding; Trying is a non-INVITE's, taken as pending all the same). */
static bool pending(int state)
{
    return state == OSN_SIP_TRYING || state == OSN_SIP_PROCEEDING;
}

void osn_elem_on_cancel(const struct osn_elem *e, double now, int invite_state, int branch_state,
                        struct osn_elem_actions *a)
{
    a->n = 0;
    /* RFC 3261 9.2: no transaction to cancel. (16.10 lets a proxy forward such a CANCEL
     * statelessly; this proxy is stateful only, and answers what it cannot match.) */
    if (invite_state == OSN_SIP_NOSTATE) {
        push(a, OSN_ELEM_A_RESPOND, OSN_ELEM_C_481, 481, -1);
        return;
    }
    if (e->role == OSN_ELEM_UAS) {
        push(a, OSN_ELEM_A_RESPOND, OSN_ELEM_C_NONE, 200, -1);
        if (pending(invite_state))
            push(a, OSN_ELEM_A_RESPOND_INVITE, OSN_ELEM_C_487, 487, -1);
        return;
    }
    /* RFC 3261 16.10: a branch with a final response is not cancelled. One without a
     * provisional response yet (Calling) may not be cancelled yet (9.1): the CANCEL is kept
     * for it and goes at its first provisional response (osn_elem_on_cancel_later), which for a
     * call queued at a busy next hop is its 100 Trying. The 487 the next hop answers is relayed
     * upstream on the INVITE's server transaction like any final response. */
    bool proceeding = branch_state == OSN_SIP_PROCEEDING, calling = branch_state == OSN_SIP_CALLING;
    if (pending(invite_state) && (proceeding || calling)) {
        if (osn_proxy_on_request(e->cli, now, OSN_SIP_CANCEL, false) == OSN_PROXY_SHED_503) {
            push(a, OSN_ELEM_A_RESPOND, OSN_ELEM_C_503, 503, -1);
            return;
        }
        push(a, OSN_ELEM_A_RESPOND, OSN_ELEM_C_NONE, 200, -1);
        if (proceeding)
            push(a, OSN_ELEM_A_CANCEL_BRANCH, OSN_ELEM_C_CANCEL_FWD, 0, -1);
        else
            push(a, OSN_ELEM_A_CANCEL_LATER, OSN_ELEM_C_NONE, 0, -1);
        return;
    }
    push(a, OSN_ELEM_A_RESPOND, OSN_ELEM_C_NONE, 200, -1);
}

bool osn_elem_on_cancel_later(int tu, int status, struct osn_elem_actions *a)
{
    a->n = 0;
    if (tu == OSN_SIP_TU_RESPONSE && status >= 100 && status < 200) {
        push(a, OSN_ELEM_A_CANCEL_BRANCH, OSN_ELEM_C_CANCEL_FWD, 0, -1);
        return false;
    }
    /* A final response (relayed as it is: a 2xx that crossed the CANCEL is the caller's to hang
     * up, RFC 3261 15) or the branch's end: nothing left to cancel. */
    return !(tu == OSN_SIP_TU_RESPONSE || tu == OSN_SIP_TU_TIMEOUT ||
             tu == OSN_SIP_TU_TRANSPORT_ERROR);
}

void osn_elem_on_forward_failed(bool too_large, struct osn_elem_actions *a)
{
    a->n = 0;
    if (too_large)
        push(a, OSN_ELEM_A_RESPOND, OSN_ELEM_C_513, 513, -1);
    else
        push(a, OSN_ELEM_A_RESPOND, OSN_ELEM_C_NONE, 500, -1);
}

void osn_elem_on_relay_failed(int status, struct osn_elem_actions *a)
{
    a->n = 0;
    push(a, OSN_ELEM_A_COUNT, OSN_ELEM_C_STRAY, 0, -1);
    if (status >= 200)
        push(a, OSN_ELEM_A_RESPOND, OSN_ELEM_C_NONE, 502, -1);
}

void osn_elem_on_2xx_timer(const struct osn_elem *e, double now, struct osn_uas_2xx *u,
                           bool have_txn, bool dialog_up, struct osn_elem_actions *a)
{
    a->n = 0;
    bool was_over = u->over;
    if (!osn_uas_2xx_fire(u, now, e->sip, have_txn, &a->at)) {
        if (!was_over && dialog_up && osn_uas_2xx_unacked(u, now, e->sip))
            push(a, OSN_ELEM_A_BYE_UNACKED, OSN_ELEM_C_BYE_UNACKED, 0, -1);
        return;
    }
    push(a, OSN_ELEM_A_RESEND_2XX, OSN_ELEM_C_NONE, 200, -1);
    push(a, OSN_ELEM_A_ARM_2XX, OSN_ELEM_C_NONE, 0, -1);
}

void osn_elem_on_ack(const struct osn_elem *e, int max_forwards, struct osn_elem_actions *a)
{
    a->n = 0;
    if (e->role == OSN_ELEM_UAS)
        push(a, OSN_ELEM_A_ACKED, OSN_ELEM_C_NONE, 0, -1);
    else if (max_forwards == 0) /* RFC 3261 16.3 step 3: an ACK is never answered */
        push(a, OSN_ELEM_A_COUNT, OSN_ELEM_C_STRAY, 0, -1);
    else
        push(a, OSN_ELEM_A_FORWARD_ACK, OSN_ELEM_C_ACK_FWD, 0, -1);
}

void osn_elem_on_client_event(const struct osn_elem *e, double now, double t_sent, int tu,
                              int status, int retry_after, int method, int upstream_state,
                              struct osn_elem_actions *a)
{
    a->n = 0;
    switch (osn_proxy_on_client_event(e->cli, now, t_sent, tu, status, upstream_state)) {
    case OSN_PROXY_RELAY: {
        bool first_final = status >= 200 && (upstream_state == OSN_SIP_TRYING ||
                                             upstream_state == OSN_SIP_PROCEEDING);
        int count = !first_final || status >= 300 ? OSN_ELEM_C_NONE
                    : method == OSN_SIP_INVITE    ? OSN_ELEM_C_CALL_OK
                                                  : OSN_ELEM_C_BYE_OK;
        push(a, OSN_ELEM_A_RELAY, count, status, retry_after);
        break;
    }
    case OSN_PROXY_408:
        push(a, OSN_ELEM_A_RESPOND, OSN_ELEM_C_408, 408, -1);
        break;
    case OSN_PROXY_500:
        push(a, OSN_ELEM_A_RESPOND, OSN_ELEM_C_500, 500, -1);
        break;
    case OSN_PROXY_NOTHING:
        break;
    }
}

/* Whether `hop` names none of e's next hops (OSN_ELEM_HOP_NONE; with several, any index past
 * them): a request routed there is no business of any client half. */
static bool no_hop(const struct osn_elem *e, int hop)
{
    return hop == OSN_ELEM_HOP_NONE || (e->hops && hop >= e->hops->n);
}

/* The element as server `hop`'s client half sees it: its decisions about one branch. With one
 * next hop (e->hops NULL) every hop but OSN_ELEM_HOP_NONE is that one, e->cli. */
static struct osn_elem at_hop(const struct osn_elem *e, int hop)
{
    struct osn_elem one = *e;
    one.hops = NULL;
    if (no_hop(e, hop))
        one.cli = NULL;
    else if (e->hops && hop >= 0)
        one.cli = e->hops->h[hop].cli;
    return one;
}

void osn_elem_on_client_event_hop(const struct osn_elem *e, int hop, double now, double t_sent,
                                  int tu, int status, int retry_after, int method,
                                  int upstream_state, struct osn_elem_actions *a)
{
    struct osn_elem one = at_hop(e, hop);
    bool down = e->hops && hop >= 0 && hop < e->hops->n &&
                osn_elem_hops_on_event(e->hops, hop, now, tu, status, retry_after);
    osn_elem_on_client_event(&one, now, t_sent, tu, status, retry_after, method, upstream_state, a);
    /* Failover: the 408, 503 or transport error (its 500) this server caused is not the
     * request's end while another server is up and admits it (a CANCELled INVITE's upstream is
     * no longer pending). */
    bool respond = a->n == 1 && a->a[0].kind == OSN_ELEM_A_RESPOND;
    bool failed = (respond && (a->a[0].status == 408 || a->a[0].count == OSN_ELEM_C_500)) ||
                  (a->n == 1 && a->a[0].kind == OSN_ELEM_A_RELAY && a->a[0].status == 503);
    if (!down || !failed || method == OSN_SIP_CANCEL)
        return;
    unsigned back;
    int other = osn_elem_hops_choose(e->hops, now, method, hop, &back);
    if (other < 0)
        return;
    e->hops->h[other].failovers++;
    a->n = 0;
    push(a, OSN_ELEM_A_FORWARD, OSN_ELEM_C_NONE, 0, -1);
    a->a[0].hop = (uint8_t)other;
}

void osn_elem_on_client_event_routed(const struct osn_elem *e, int hop, double now, double t_sent,
                                     int tu, int status, int retry_after, int method,
                                     int upstream_state, struct osn_elem_actions *a)
{
    struct osn_elem one = at_hop(e, hop);
    if (e->hops && hop >= 0 && hop < e->hops->n)
        osn_elem_hops_on_event(e->hops, hop, now, tu, status, retry_after);
    osn_elem_on_client_event(&one, now, t_sent, tu, status, retry_after, method, upstream_state, a);
}

void osn_elem_on_cancel_hop(const struct osn_elem *e, int hop, double now, int invite_state,
                            int branch_state, struct osn_elem_actions *a)
{
    struct osn_elem one = at_hop(e, hop);
    osn_elem_on_cancel(&one, now, invite_state, branch_state, a);
}

void osn_elem_on_request_hop(const struct osn_elem *e, int hop, double now, int method,
                             int max_forwards, bool handled, bool loop, struct osn_elem_actions *a)
{
    /* A request routed upstream (the callee's BYE toward the caller) asks no client half: the
     * one it would ask holds a downstream server's state (RFC 7339 5.10), a server it does not
     * go to, and must not shed it. */
    if (hop < 0 || (!e->hops && !no_hop(e, hop))) {
        osn_elem_on_request(e, now, method, max_forwards, handled, false, loop, NULL, a);
        return;
    }
    struct osn_elem one = at_hop(e, hop);
    osn_elem_on_request(&one, now, method, max_forwards, handled, false, loop, NULL, a);
    bool none = no_hop(e, hop);
    for (int i = 0; i < a->n; i++)
        if (a->a[i].kind == OSN_ELEM_A_FORWARD) {
            a->a[i].hop = none ? OSN_ELEM_HOP_NONE : (uint8_t)hop;
            if (none)
                continue;
            e->hops->h[hop].sent++;
            e->hops->h[hop].invites += method == OSN_SIP_INVITE;
        } else if (!none && a->a[i].kind == OSN_ELEM_A_RESPOND && a->a[i].status == 503) {
            e->hops->h[hop].shed++;
        }
}

void osn_elem_stxn_started(bool shed, unsigned retry_after, struct osn_sip_out *o,
                           struct osn_elem_actions *a)
{
    a->n = 0;
    if (!shed)
        return;
    o->tu = OSN_SIP_TU_NONE;
    o->nsend = 0;
    push(a, OSN_ELEM_A_RESPOND, OSN_ELEM_C_503, 503, retry_after ? (int)retry_after : -1);
}

enum osn_elem_budget_verdict osn_elem_budget_take(struct osn_elem_budget *b, double now,
                                                  double rate)
{
    double burst = rate > 1 ? rate : 1;
    if (!b->used) {
        *b = (struct osn_elem_budget){.t = now, .used = true};
    } else {
        b->tokens -= (now - b->t) * rate; /* spent tokens come back at `rate` */
        b->tokens = b->tokens > 0 ? b->tokens : 0;
        b->t = now;
    }
    if (b->tokens + 1 <= burst) {
        b->tokens += 1;
        b->told = false;
        return OSN_ELEM_BUDGET_PASS;
    }
    if (b->told)
        return OSN_ELEM_BUDGET_DROP;
    b->told = true;
    return OSN_ELEM_BUDGET_503;
}
