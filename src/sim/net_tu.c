/*
 * The transaction users of the simulated elements: a driver of the element's action lists
 * (src/elem/element.c, the same lists the node carries out) and of the UAC (osn_uac_*).
 *
 * When a transaction passes something up (a new request, a response, an ACK, a timeout), the
 * element decides and this file carries the actions out with the simulator's objects: the call's
 * per-hop transactions stand for the pairing a real proxy keeps between its server and client
 * transactions, branches are derived from the call, a To tag from its Call-ID, and the UAC's
 * outcomes go into the run's totals. Driver differences from the node: the call's record of
 * the requests handled at each hop outlives their transactions, so a late copy is known here;
 * the simulator's messages carry no Max-Forwards, so the element's 483 never happens here; it
 * models no unknown BYE, no routing loop, no message sizes and no source addresses, so the
 * element's 482, 513 and per-source budget never happen here either. A CANCEL (a caller who
 * gave up, source.patience) is matched to the INVITE it cancels through the call: the INVITE's
 * server transaction on the CANCEL's hop, and at a proxy the client transaction it forwarded the
 * INVITE on; its own responses end where it was sent. A proxy's CANCEL kept for a branch with
 * no provisional response yet is a bit of the call by hop (cancel_later). The UAS answers an
 * INVITE at once unless [server uas] ring_delay lets it ring (the call's rtx event, EV_RING,
 * before the 2xx timer needs it): a CANCEL while it rings gets the INVITE its 487. The callee's
 * BYE (source.callee_hangs_up): the UAS arms the hold's end when it sends the 2xx of a call the
 * element says the callee ends (EV_HANGUP, in the call's struct cancels), and its BYE (branch
 * kind B_UBYE) goes up the path hop by hop, each proxy deciding for OSN_ELEM_HOP_NONE, to the
 * source, whose UAC machine answers it.
 */
#include <math.h>

#include "net_int.h"
#include "osn/des.h"
#include "osn/err.h"

void osn__net_outcome(struct net *s, struct call *c, int outcome)
{
    static const int slot[OSN_UAC_NOUTCOMES] = {
            [OSN_UAC_GOOD] = OSN__NT_GOOD,
            [OSN_UAC_TIMEOUT] = OSN__NT_FAIL_TIMEOUT,
            [OSN_UAC_REJECTED] = OSN__NT_FAIL_REJECTED,
            [OSN_UAC_OTHER] = OSN__NT_FAIL_OTHER,
            [OSN_UAC_ABANDONED] = OSN__NT_ABANDONED,
    };
    s->tr.outcome[outcome] += 1;
    if (!obs(s))
        return;
    s->tot[slot[outcome]] += 1;
    s->tot[OSN__NT_ENDED] += 1;
    s->tot[OSN__NT_ENDED_ATTEMPTS] += 1 + c->uac.retries;
    if (outcome == OSN_UAC_GOOD) {
        s->tot[OSN__NT_GOOD_K0 + (c->uac.retries < 3 ? c->uac.retries : 3)] += 1;
        s->elems[c->src].tot[OSN__NE_SRC_GOOD] += 1;
    }
    if (!c->uac.got100) /* left out of the response delay: counted here instead */
        s->tot[OSN__NT_NO_TRYING] += 1;
    if (outcome != OSN_UAC_GOOD && c->admitted)
        s->tot[OSN__NT_ADMIT_FAIL] += 1;
}

/* The UAS's BYE of call c (RFC 3261 12.2.1.1): From its tag, To the caller's, by the route set
 * (the call's path), up hop by hop to the source. Its callee hung up, or its 2xx had no ACK. */
static void uas_bye(struct net *s, struct call *c)
{
    struct osn_sip_msg req = {.method = OSN_SIP_BYE,
                              .cseq = 1,
                              .retry_after = -1,
                              .call_id = c->uid,
                              .from_tag = c->uid + 1,
                              .to_tag = c->uid,
                              .branch = branch(c, c->nhop - 1, B_UBYE)};
    osn__net_start_up_bye(s, c->path[c->nhop], c, c->nhop - 1, &req);
}

/* Carries out the element's actions at element `id` for call c on hop `hop`, on server
 * transaction w: the request's, or for a client event the one upstream of it (an ACK's two
 * actions are carried out by osn__net_on_ack, which has the ACK). Each action's count goes to the
 * element's counters (the node's figures); the 503s also go to the trace. */
static void act(struct net *s, int id, struct call *c, int hop, struct ntxn *w,
                const struct osn_elem_actions *a)
{
    /* Read once: the calls below could change s->elems for all the compiler knows. */
    struct element *el = &s->elems[id];
    for (int i = 0; i < a->n; i++) {
        const struct osn_elem_action *x = &a->a[i];
        el->count[x->count]++;
        switch (x->kind) {
        case OSN_ELEM_A_RESPOND:
            if (x->count == OSN_ELEM_C_503)
                s->tr.sent_503 += 1;
            /* fall through */
        case OSN_ELEM_A_RESEND_2XX:
        case OSN_ELEM_A_RELAY: /* the To tag is the call's either way */
            osn__net_respond(s, w, x->status, x->retry_after);
            break;
        case OSN_ELEM_A_FORWARD: {
            bool inv = w->t.req.method == OSN_SIP_INVITE;
            struct osn_sip_msg req;
            if (!inv && up_bye(&w->t.req)) { /* the callee's BYE: on up the dialog's path */
                osn_proxy_forward_request(&w->t.req, branch(c, hop - 1, B_UBYE), &req);
                osn__net_start_up_bye(s, id, c, hop - 1, &req);
                break;
            }
            uint64_t b = branch(c, hop + 1, inv ? B_INVITE : B_BYE);
            if (inv && el->core) { /* the core's admissions: a measurement */
                c->admitted = true;
                if (obs(s)) {
                    s->tot[OSN__NT_ADMIT] += 1;
                    s->elems[c->src].tot[OSN__NE_SRC_ADMIT] += 1;
                }
            }
            if (inv && el->hops) { /* the core the element chose: the call's path */
                c->core = x->hop;
                c->path[hop + 2] = (uint16_t)(s->core + x->hop); /* past this element */
                c->path[hop + 3] = s->core_uas[x->hop];          /* and its UAS */
                b |= core_bits(x->hop, c->failovers);
            } else { /* a core passes its INVITE's on (none elsewhere) */
                b |= w->t.req.branch & BRANCH_CORE_BITS;
            }
            osn_proxy_forward_request(&w->t.req, b, &req);
            osn__net_start_client(s, id, c, hop + 1, &req);
            break;
        }
        case OSN_ELEM_A_DROP:
            osn_sip_txn_abort(&el->sip, &w->t);
            osn__net_txn_free(s, w);
            return;
        case OSN_ELEM_A_FORWARD_ACK: /* never here: osn__net_on_ack carries out an ACK's */
        case OSN_ELEM_A_ACKED:
            break;
        case OSN_ELEM_A_ARM_2XX:
            c->refs++; /* the timer's */
            osn__net_sched(s, id, &c->rtx, a->at, NULL);
            break;
        case OSN_ELEM_A_CANCEL_BRANCH: /* w is the CANCEL's; the INVITE's branch is hop + 1 */
            if (obs(s))
                el->tot[OSN__NE_CANCEL_FWD] += 1;
            osn__net_send_cancel(s, id, c, hop + 1);
            break;
        case OSN_ELEM_A_ARM_RING: /* the rtx event is free until the 200 */
            c->refs++;            /* the timer's */
            osn_des_ev_init(&c->rtx, EV_RING);
            osn__net_at(s, id, &c->rtx, a->at);
            break;
        case OSN_ELEM_A_CANCEL_LATER: /* w is the CANCEL's; the INVITE's branch is hop + 1 */
            c->cancel_later |= (uint8_t)(1u << (hop + 1));
            break;
        case OSN_ELEM_A_BYE_UNACKED: /* w may be gone: the BYE is the call's */
            uas_bye(s, c);
            break;
        case OSN_ELEM_A_RESPOND_INVITE: /* on the cancelled INVITE's server transaction */
            if (obs(s))
                el->tot[OSN__NE_487] += 1;
            if (STX(c, hop, 0))
                osn__net_respond(s, STX(c, hop, 0), x->status, x->retry_after);
            break;
        case OSN_ELEM_A_COUNT:
            break;
        }
    }
}

/* The simulator's dialogs have no Route headers: their route set is the call's path, holding
 * the proxies that Record-Route (the others pass the dialog's messages by, net_server.c). A
 * fan-out's cores share one setting, so the call's core is in the route set exactly when it is
 * on the dialog's path; then the element must send the ACK there, else it chooses. */
uint64_t osn__net_ack_core_bits(const struct net *s, const struct element *el, const struct call *c,
                                uint64_t key)
{
    bool named = !s->elems[s->core + c->core].off_path;
    int k = osn_elem_hops_ack(el->hops, s->q.now, named ? c->core : -1, key);
    return k == c->core ? 0 : core_bits(k, c->failovers);
}

void osn__net_on_ack(struct net *s, int id, struct call *c, int hop, const struct osn_sip_msg *m)
{
    struct osn_elem_actions a;
    /* The simulator's messages carry no Max-Forwards: one action, ACKED or FORWARD_ACK. */
    osn_elem_on_ack(&s->elems[id].tu, -1, &a);
    s->elems[id].count[a.a[0].count]++;
    if (a.a[0].kind == OSN_ELEM_A_ACKED) {
        c->uas.acked = true;
    } else if (a.a[0].kind == OSN_ELEM_A_FORWARD_ACK) {
        struct osn_sip_msg ack;
        uint64_t b = branch(c, hop + 1, B_ACK);
        if (s->elems[id].hops) /* a fan-out edge: the core the element says */
            b |= osn__net_ack_core_bits(s, &s->elems[id], c, m->call_id);
        osn_proxy_forward_request(m, b, &ack);
        osn__net_transmit(s, id, c, hop + 1, &ack);
    }
}

void osn__net_stxn_started(struct net *s, struct ntxn *w, const struct osn_elem_item *it,
                           struct osn_sip_out *o)
{
    struct osn_elem_actions a;
    osn_elem_stxn_started(it->reject, it->retry_after, o, &a);
    osn__net_apply(s, w, o);
    if (a.n && !o->terminated)
        act(s, txn_elem(w), w->call, txn_hop(w), w, &a);
}

/* A new CANCEL reached element id's TU on server transaction w: the element decides from the
 * states of the INVITE it cancels (RFC 3261 9.2: same branch, the call's server transaction on
 * that hop) and, at a proxy, of the branch it forwarded that INVITE on (16.10). */
static void on_cancel(struct net *s, struct ntxn *w)
{
    struct call *c = w->call;
    int id = txn_elem(w), h = txn_hop(w);
    struct ntxn *inv = STX(c, h, 0), *br = NULL;
    struct osn_elem_actions a;

    if (inv && inv->t.req.branch != w->t.req.branch)
        inv = NULL;
    if (s->elems[id].role == R_PROXY && h + 1 < c->nhop)
        br = CTX(c, h + 1, 0);
    osn_elem_on_cancel_hop(&s->elems[id].tu, c->core, s->q.now,
                           inv ? inv->t.state : OSN_SIP_NOSTATE, br ? br->t.state : OSN_SIP_NOSTATE,
                           &a);
    act(s, id, c, h, w, &a);
}

/* The ring delay of the UAS for attempt c: the scenario's law, an exponential one drawn from
 * a stream of the attempt's own (ring_key), so that runs that differ only in control ring each
 * call as long. */
static double ring_draw(const struct net *s, const struct call *c)
{
    const struct osn_net_server_cfg *u = &s->cfg->uas;
    double v = 0.5;
    if (u->ring == OSN_UAS_RING_EXP) {
        struct osn_rng r;
        osn_rng_seed(&r, s->ring_key ^ c->uid);
        v = osn_rng_u01_open(&r);
    }
    return osn_uas_ring_delay(u->ring, u->ring_mean, v);
}

/* The UAS's actions `a` on call c sent the 2xx of a new INVITE: when the callee ends the call
 * (osn_uas_callee_hangs_up, of the Call-ID as the caller asks it: osn_uac_call_keyed), its hold
 * starts now, drawn by the UAS (the caller arms none): the draw the caller would have made,
 * from the run's hold key and the call's origin, so a call holds as long whoever ends it. */
static __attribute__((noinline)) void
uas_answered(struct net *s, struct call *c, const struct ntxn *w, const struct osn_elem_actions *a)
{
    bool ok = false;
    for (int i = 0; i < a->n; i++)
        ok |= a->a[i].kind == OSN_ELEM_A_RESPOND && a->a[i].status >= 200 && a->a[i].status < 300;
    if (!ok || !w || w->t.req.method != OSN_SIP_INVITE ||
        !osn_uas_callee_hangs_up(s->cfg->src.callee_hangs_up, w->t.req.call_id) ||
        (c->cx && c->cx->hangup_armed))
        return;
    struct cancels *x = osn__net_cancels(s, c);
    if (!x) {
        s->err = OSN_ENOMEM;
        return;
    }
    x->t2xx = s->q.now;
    x->hangup_armed = true;
    c->refs++; /* the timer's */
    osn__net_at(s, s->uas, &x->hangup,
                s->q.now + osn_uac_hold_draw(s->cfg->src.hold, s->hold_key, c->origin));
}

void osn__net_hangup_timer(struct net *s, struct call *c)
{
    double at;
    switch (osn_uas_hangup_fire(uas_knows(c), c->uas.acked, c->cx->t2xx, s->q.now, &s->cfg->sip,
                                &at)) {
    case OSN_UAS_HANGUP_WAIT:
        c->refs++;
        osn__net_at(s, s->uas, &c->cx->hangup, at);
        break;
    case OSN_UAS_HANGUP_BYE:
        uas_bye(s, c);
        break;
    case OSN_UAS_HANGUP_NONE:
        break;
    }
    osn__net_call_unref(s, c); /* the reference the timer had */
}

/* The callee's BYE reached the TU of element id on server transaction w. At the caller (a
 * source) the UAC's machine answers it (osn_uac_call_on_bye_request: 200, or 481 for a call it
 * no longer has) and ends the call. At a proxy it goes upstream, to no next hop of the element:
 * no client half is asked (osn_elem_on_request_hop, OSN_ELEM_HOP_NONE), as at the node. Out of
 * line: the TU's handler of every request would grow past what GCC inlines. */
static __attribute__((noinline)) void up_bye_request(struct net *s, struct ntxn *w)
{
    struct call *c = w->call;
    struct element *el = &s->elems[txn_elem(w)];
    uint8_t bit = (uint8_t)(1u << txn_hop(w));
    bool handled = (c->ubfwd & bit) != 0;
    c->ubfwd |= bit;
    if (el->role == R_SRC) {
        struct osn_uac_acts ua;
        int status = osn_uac_call_on_bye_request(&c->uac, &ua);
        osn__net_respond(s, w, status, -1);
        osn__net_uac_act(s, c, &ua, NULL, NULL);
        return;
    }
    struct osn_elem_actions a;
    osn_elem_on_request_hop(&el->tu, OSN_ELEM_HOP_NONE, s->q.now, OSN_SIP_BYE, -1, handled, false,
                            &a);
    act(s, txn_elem(w), c, txn_hop(w), w, &a);
}

static void on_server_tu(struct net *s, struct ntxn *w, const struct osn_sip_out *o)
{
    struct call *c = w->call;
    struct osn_elem_actions a;

    if (o->tu == OSN_SIP_TU_REQUEST && w->t.req.method == OSN_SIP_CANCEL) {
        on_cancel(s, w);
    } else if (o->tu == OSN_SIP_TU_REQUEST && w->t.req.method == OSN_SIP_BYE && up_bye(&w->t.req)) {
        up_bye_request(s, w);
    } else if (o->tu == OSN_SIP_TU_REQUEST) {
        uint8_t *fw = w->t.req.method == OSN_SIP_INVITE ? &c->fwd : &c->bfwd;
        uint8_t bit = (uint8_t)(1u << txn_hop(w));
        /* The call's record of the requests handled at each hop outlives their transactions;
         * the simulator's messages carry no Max-Forwards (-1: never checked). Its UAC sends a
         * BYE only for a call the UAS answered and its routes never loop, so the UAS always
         * knows the call (no 481) and no request loops (no 482). */
        struct element *el = &s->elems[txn_elem(w)];
        if (el->role == R_UAS) {
            struct osn_uas_request q = {.method = w->t.req.method, .known = true};
            if (q.method == OSN_SIP_INVITE && s->cfg->uas.ring != OSN_UAS_RING_NONE)
                q.ring = ring_draw(s, c);
            osn_elem_on_uas_request(&el->tu, s->q.now, &q, (*fw & bit) != 0, &c->uas, &a);
            if (s->uac.callee_hangs_up > 0)
                uas_answered(s, c, w, &a);
        } else if (el->hops &&
                   w->t.req.method != OSN_SIP_INVITE) { /* a fanout edge: the call's core */
            /* A request going down toward the UAS: its server is the call's core (the callee's
             * BYE, OSN_ELEM_HOP_NONE, was taken above). */
            osn_elem_on_request_hop(&el->tu, c->core, s->q.now, w->t.req.method, -1,
                                    (*fw & bit) != 0, false, &a);
        } else {
            osn_elem_on_request(&el->tu, s->q.now, w->t.req.method, -1, (*fw & bit) != 0, true,
                                false, &c->uas, &a);
        }
        *fw |= bit; /* forwarded(c, h, inv) is now w */
        act(s, txn_elem(w), c, txn_hop(w), w, &a);
    } else if (o->tu == OSN_SIP_TU_ACK) {
        osn__net_on_ack(s, txn_elem(w), c, txn_hop(w), o->msg);
    }
}

/* An event of the UAC's INVITE transaction: the UAC's machine decides (src/elem/uac_call.c,
 * through the entry for the event's kind, as osn_uac_call_on_invite would), net_source.c carries
 * it out. */
static void uac_invite_event(struct net *s, struct ntxn *w, const struct osn_sip_out *o)
{
    struct call *c = w->call;

    if (o->tu != OSN_SIP_TU_RESPONSE)
        osn__net_uac_end(s, c, o->tu, 0, -1);
    else if (o->msg->status < 200)
        osn__net_uac_1xx(s, c, o->msg->status);
    else if (o->msg->status < 300)
        osn__net_uac_2xx(s, c, &w->t.req, o->msg);
    else
        osn__net_uac_end(s, c, o->tu, o->msg->status, o->msg->retry_after);
}

/* An event of the UAC's BYE transaction: its answer ends the call (the machine counts it). */
static void uac_bye_event(struct net *s, struct ntxn *w, const struct osn_sip_out *o)
{
    struct osn_uac_acts a;
    bool resp = o->tu == OSN_SIP_TU_RESPONSE;
    osn_uac_call_on_bye(&w->call->uac, o->tu, resp ? o->msg->status : 0, &a);
    if ((a.bits & OSN_UAC_BIT(OSN_UAC_DO_BYE_OK)) && obs(s)) /* the caller ended the call */
        s->tot[OSN__NT_BYES_OK] += 1;
    osn__net_uac_act(s, w->call, &a, NULL, NULL);
}

/*
 * A fanout edge's INVITE failed at the core of client transaction w (a timeout, or a 503 with
 * Retry-After) and the element sends it to another core (osn_elem_on_client_event_hop's
 * FORWARD), as the node does. The failed attempt's INVITE transactions, from w's hop on (w, the
 * core's server and client, the UAS's server), leave the call's slots for its gone ones (struct
 * cancels), where the messages of their branch still find them until their own timers end
 * them; the call's records of those hops are cleared, so that the next core takes the new
 * INVITE for a new request (not a copy, not handled before). A CANCEL kept for the failed branch
 * goes with it, as the node's mark on its client transaction does.
 */
static void failover(struct net *s, struct ntxn *w)
{
    struct call *c = w->call;
    struct cancels *x = osn__net_cancels(s, c);
    int h0 = txn_hop(w);
    if (!x) {
        s->err = OSN_ENOMEM;
        return;
    }
    for (int h = h0; h < c->nhop; h++) {
        x->gone_ctx[h] = CTX(c, h, 0);
        x->gone_stx[h] = STX(c, h, 0);
        CTX(c, h, 0) = STX(c, h, 0) = NULL;
        c->rsp_in[h] &= 0xf0; /* rsp_bit: the INVITE's responses are the low four bits */
    }
    uint8_t below = (uint8_t)((1u << h0) - 1);
    c->fwd &= below;
    c->inv_in &= below;
    c->cancel_later &= below;
    c->failovers++;
}

/* The callee's BYE went upstream, to no server of a client half: the element decides for
 * OSN_ELEM_HOP_NONE, on the server transaction downstream (the other end of the hop it came
 * on). Out of line, as up_bye_request. */
static __attribute__((noinline)) void up_bye_client_event(struct net *s, struct ntxn *w,
                                                          const struct osn_sip_out *o)
{
    struct osn_elem_actions a;
    bool resp = o->tu == OSN_SIP_TU_RESPONSE;
    if (s->elems[txn_elem(w)].role == R_UAS) /* its answer: the call is over, nothing to do */
        return;
    struct ntxn *dn = w->call->cx ? w->call->cx->ubye_stx[txn_hop(w) + 1] : NULL;
    osn_elem_on_client_event_routed(&s->elems[txn_elem(w)].tu, OSN_ELEM_HOP_NONE, s->q.now, w->t0,
                                    o->tu, resp ? o->msg->status : 0,
                                    resp ? o->msg->retry_after : -1, OSN_SIP_BYE,
                                    dn ? dn->t.state : OSN_SIP_NOSTATE, &a);
    if (a.n)
        act(s, txn_elem(w), w->call, txn_hop(w) + 1, dn, &a);
}

/* A proxy's client transaction: what the element decides, on the server transaction upstream. */
static void proxy_client_event(struct net *s, struct ntxn *w, const struct osn_sip_out *o)
{
    struct osn_elem_actions a;
    bool inv = w->t.req.method == OSN_SIP_INVITE;
    if (w->t.req.method == OSN_SIP_CANCEL) /* its responses end here (RFC 3261 9.1, 16.10) */
        return;
    if (!inv && up_bye(&w->t.req)) {
        up_bye_client_event(s, w, o);
        return;
    }
    bool resp = o->tu == OSN_SIP_TU_RESPONSE;
    struct ntxn *up = forwarded(w->call, txn_hop(w) - 1, inv);

    const struct element *el = &s->elems[txn_elem(w)];
    if (el->hops) { /* a fanout edge: the event is its branch's core's, which may fail over */
        /* Only an INVITE chose its core; the others follow the call's (on_server_tu) and, as
         * a request the node routes by the dialog's Route, never fail over. */
        (inv ? osn_elem_on_client_event_hop : osn_elem_on_client_event_routed)(
                &el->tu, branch_core(w->call, w->t.req.branch), s->q.now, w->t0, o->tu,
                resp ? o->msg->status : 0, resp ? o->msg->retry_after : -1, w->t.req.method,
                up ? up->t.state : OSN_SIP_NOSTATE, &a);
        if (a.n && a.a[0].kind == OSN_ELEM_A_FORWARD)
            failover(s, w);
    } else {
        osn_elem_on_client_event(&el->tu, s->q.now, w->t0, o->tu, resp ? o->msg->status : 0,
                                 resp ? o->msg->retry_after : -1, w->t.req.method,
                                 up ? up->t.state : OSN_SIP_NOSTATE, &a);
    }
    if (a.n)
        act(s, txn_elem(w), w->call, txn_hop(w) - 1, up, &a);
    /* A CANCEL kept for this branch (RFC 3261 9.1): what its event makes of it. */
    struct call *c = w->call;
    uint8_t bit = (uint8_t)(1u << txn_hop(w));
    if (inv && (c->cancel_later & bit)) {
        if (!osn_elem_on_cancel_later(o->tu, resp ? o->msg->status : 0, &a))
            c->cancel_later &= (uint8_t)~bit;
        if (a.n)
            act(s, txn_elem(w), c, txn_hop(w) - 1, up, &a);
    }
}

void osn__net_on_tu(struct net *s, struct ntxn *w, const struct osn_sip_out *o)
{
    if (w->t.role == OSN_SIP_SERVER)
        on_server_tu(s, w, o);
    else if (s->elems[txn_elem(w)].role != R_SRC) /* a proxy's, or the UAS's BYE's */
        proxy_client_event(s, w, o);
    else if (w->t.req.method == OSN_SIP_INVITE)
        uac_invite_event(s, w, o);
    else if (w->t.req.method == OSN_SIP_BYE) /* a CANCEL's end asks nothing of the UAC */
        uac_bye_event(s, w, o);
}

void osn__net_ring_timer(struct net *s, struct call *c)
{
    struct ntxn *w = forwarded(c, c->nhop - 1, true);
    struct osn_elem_actions a;

    osn_des_ev_init(&c->rtx, EV_2XX); /* the event is the 2xx timer's from now on */
    int uas = c->path[c->nhop];
    osn_elem_on_ring_timer(&s->elems[uas].tu, s->q.now, w ? w->t.state : OSN_SIP_NOSTATE, &c->uas,
                           &a);
    if (a.n)
        act(s, uas, c, c->nhop - 1, w, &a);
    if (s->uac.callee_hangs_up > 0)
        uas_answered(s, c, w, &a);
    osn__net_call_unref(s, c); /* the reference the ring timer had */
}

void osn__net_2xx_timer(struct net *s, struct call *c)
{
    struct ntxn *w = forwarded(c, c->nhop - 1, true);
    struct osn_elem_actions a;

    /* the call still up at the UAS and no BYE of its callee's due (the hang-up timer sends it) */
    bool up = uas_knows(c) && !(c->cx && c->cx->hangup_armed);
    int uas = c->path[c->nhop];
    osn_elem_on_2xx_timer(&s->elems[uas].tu, s->q.now, &c->uas, w != NULL, up, &a);
    if (a.n)
        act(s, uas, c, c->nhop - 1, w, &a);
    osn__net_call_unref(s, c); /* the reference the timer had (ARM_2XX took a new one) */
}
