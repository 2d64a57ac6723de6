/*
 * Messages reaching a simulated element, and its CPU: the simulator's side of the element's
 * server (osn_elem_server in osn/elem.h).
 *
 * A message reaching a proxy or the UAS first has its kind classified by matching it against
 * the element's transactions; the server then handles it at once, queues it or drops it (and
 * the controller's server half may shed it with a 503). The cost is fixed when service starts,
 * after matching again, so a queued copy of an INVITE costs the retransmission price once its
 * original has been processed; completion runs the transaction layer and the element's TU.
 */
#include "net_int.h"
#include "osn/des.h"
#include "osn/err.h"

/*
 * The transaction nm is for at its element, or NULL: a request's server transaction on its hop,
 * a response's client transaction. The call's index gives the one candidate, and the RFC 3261
 * keys decide (an ACK for a 2xx has a branch of its own and so matches none). Always inline:
 * every message is matched once or twice (arrival, service, completion), and out of line the
 * call cost 13.6 instructions a message on fanin.ini.
 */
static inline __attribute__((always_inline)) struct ntxn *match(const struct nmsg *nm)
{
    const struct call *c = nm->call;
    int k = req_slot(nm->m.method);
    struct ntxn *w = nm->m.status ? CTX(c, nm->hop, k) : STX(c, nm->hop, k);
    if (w && osn_sip_txn_matches(&w->t, &nm->m))
        return w;
    /* A CANCEL's (or its response's) are elsewhere, and so are an INVITE's of an attempt that
     * failed over (struct cancels); asked only after the call's slot did not match, so that the
     * other messages pay nothing for them. */
    if (!c->cx)
        return NULL;
    if (nm->m.method == OSN_SIP_CANCEL)
        w = nm->m.status ? c->cx->ctx[nm->hop] : c->cx->stx[nm->hop];
    else if (k == 0)
        w = nm->m.status ? c->cx->gone_ctx[nm->hop] : c->cx->gone_stx[nm->hop];
    else /* the callee's BYE */
        w = nm->m.status ? c->cx->ubye_ctx[nm->hop] : c->cx->ubye_stx[nm->hop];
    return w && osn_sip_txn_matches(&w->t, &nm->m) ? w : NULL;
}

/* The message kind a server sees for nm now (matching against its transactions). */
static int classify(const struct nmsg *nm)
{
    return osn_elem_kind(&nm->m, osn_elem_may_be_copy(&nm->m) && match(nm));
}

/* The bit of nm's request kind and hop in its call's record of requests kept at a server. */
static uint8_t *kept_bits(const struct nmsg *nm)
{
    struct call *c = nm->call;
    return nm->m.method == OSN_SIP_INVITE   ? &c->inv_in
           : nm->m.method == OSN_SIP_CANCEL ? &c->cancel_in
           : up_bye(&nm->m)                 ? &c->ubye_in
                                            : &c->bye_in;
}

/*
 * The kind on arrival: as classify(), and also a retransmission when the original was kept here
 * before (the call's record: queued without a transaction yet, or handled). A server recognises
 * a copy on receipt by its branch (PRSM and every controller that counts copies need that); only
 * service start decides the cost, by matching again.
 */
static int classify_arrival(const struct nmsg *nm)
{
    return osn_elem_kind(&nm->m, osn_elem_may_be_copy(&nm->m) &&
                                         (match(nm) || (*kept_bits(nm) & (1u << nm->hop))));
}

/* The bit of response nm in its call's rsp_in[hop]: by request kind and status (100, other
 * provisional, 2xx, final failure). A CANCEL's responses have none (the eight bits are taken):
 * its 200 resent is taken for a new response, by a controller that tells them apart. */
static uint8_t rsp_bit(const struct osn_sip_msg *m)
{
    if (m->method == OSN_SIP_CANCEL)
        return 0;
    int cls = m->status == 100 ? 0 : m->status < 200 ? 1 : m->status < 300 ? 2 : 3;
    return (uint8_t)(1u << (cls + (m->method == OSN_SIP_INVITE ? 0 : 4)));
}

/* Whether element el has kept response nm before (so nm is the downstream's copy). */
static bool response_again(const struct element *el, const struct nmsg *nm)
{
    return el->srv && nm->m.status && (nm->call->rsp_in[nm->hop] & rsp_bit(&nm->m));
}

/* Records that request nm was kept at its element el (queued or handled at once); at an
 * element with a controller, responses too. Always inline: once a message, and GCC kept it out
 * of line (2.5 instructions a message on fanin.ini). */
static inline __attribute__((always_inline)) void mark_kept(const struct element *el,
                                                            const struct nmsg *nm)
{
    if (nm->m.status == 0 && nm->m.method != OSN_SIP_ACK)
        *kept_bits(nm) |= (uint8_t)(1u << nm->hop);
    else if (el->srv && nm->m.status)
        nm->call->rsp_in[nm->hop] |= rsp_bit(&nm->m);
}

static void count_processed(struct net *s, struct element *el, int kind)
{
    el->tot[OSN__NE_PROC + kind] += 1;
    if (el->role != R_SRC)
        s->tot[OSN__NT_MSGS] += 1;
    if (el->core) {
        if (kind == OSN_ELEM_K_INVITE || kind == OSN_ELEM_K_BYE || kind == OSN_ELEM_K_REJECT)
            s->tot[OSN__NT_CORE_NEW] += 1;
        else if (kind == OSN_ELEM_K_RETX)
            s->tot[OSN__NT_CORE_RETX] += 1;
    }
}

/* The place of the server transaction of new request nm, not an INVITE: a CANCEL's and the
 * callee's BYE's are in the call's block (struct cancels, made here); NULL when out of memory.
 * Out of line: two new requests in three are INVITEs. */
static __attribute__((noinline)) struct ntxn **other_slot(struct net *s, const struct nmsg *nm)
{
    struct call *c = nm->call;
    bool up = up_bye(&nm->m);
    if ((nm->m.method == OSN_SIP_CANCEL || up) && !osn__net_cancels(s, c))
        return NULL;
    return up ? &c->cx->ubye_stx[nm->hop] : txn_slot(c, nm->hop, nm->m.method, true);
}

/* A new request without a transaction: its server transaction starts (a request the server
 * half shed is answered as the element says, osn_elem_stxn_started). */
static void new_server_txn(struct net *s, struct element *el, struct nmsg *nm)
{
    struct osn_sip_out *o = &s->out;
    struct ntxn *w = osn__net_txn_new(s, nm->call, nm->to, nm->hop);
    if (!w) {
        s->err = OSN_ENOMEM;
        return;
    }
    struct ntxn **slot =
            nm->m.method == OSN_SIP_INVITE ? &STX(nm->call, nm->hop, 0) : other_slot(s, nm);
    if (!slot) {
        osn__net_txn_free(s, w);
        s->err = OSN_ENOMEM;
        return;
    }
    if (osn_sip_stxn_start(&el->sip, &w->t, &nm->m, s->q.now, o) != 0) {
        osn__net_txn_free(s, w);
        s->err = OSN_EINVAL;
        return;
    }
    *slot = w;
    osn__net_stxn_started(s, w, &nm->item, o);
}

/* Handles message nm at its element: the transaction layer, then the TU. Frees nm. */
static void process(struct net *s, struct element *el, struct nmsg *nm)
{
    s->messages++;
    if (obs(s))
        count_processed(s, el, nm->item.kind);
    if (s->trace)
        osn__net_trace_processed(s, el, nm->item.kind);
    /* Responses from a server half's element (the core, or an edge to its sources: [control]
     * at). A source's client half reads them as a proxy's does (osn_proxy_on_feedback,
     * the one reading for every client half), so both take this one test. A response to the
     * callee's BYE comes from upstream instead, and carries no feedback (only a server half's
     * responses going up are given one, transmit()), so reading it changes nothing
     * (osn_elem_oc_to_fb): no client half of ours learns from that server. */
    if (el->cli && nm->m.status)
        osn_proxy_on_feedback(el->cli, s->q.now, &nm->m.oc);
    else if (el->hops && nm->m.status) /* a fanout edge: from its branch's core */
        osn_elem_hops_on_feedback(el->hops, branch_core(nm->call, nm->m.branch), s->q.now,
                                  &nm->m.oc);
    struct ntxn *w = match(nm);
    if (w) {
        if (osn_sip_txn_recv(&el->sip, &w->t, &nm->m, s->q.now, &s->out) == 0)
            osn__net_apply(s, w, &s->out);
    } else if (nm->m.status == 0 && nm->m.method != OSN_SIP_ACK) {
        new_server_txn(s, el, nm);
    } else if (nm->m.method == OSN_SIP_ACK && el->role != R_SRC) {
        /* the ACK of a 2xx: no transaction (RFC 3261 17.1.1.3) */
        osn__net_on_ack(s, nm->to, nm->call, nm->hop, &nm->m);
    } else if (nm->m.status) { /* no client transaction (any more): dropped, as the node does */
        el->count[OSN_ELEM_C_STRAY]++;
    }
    osn__net_msg_free(s, nm);
}

/* Serves the next message, if the CPU is idle and one waits. Asked first, before anything else
 * is set up: most completions leave nothing waiting (an edge is busy 1% of the time), and GCC
 * saved five registers before the loop's own test (12 instructions a message on fanin.ini). */
static void start_service(struct net *s, struct element *el)
{
    struct osn_elem_item *it;
    int fifo;

    if (!osn_elem_server_ready(&el->server))
        return;
    while ((it = osn_elem_server_next(&el->server, s->q.now, &fifo))) {
        struct nmsg *nm = item_msg(it);
        if (fifo == 1 && it->ckind != OSN_CTL_MSG_RESPONSE_RETX) {
            struct ntxn *w = match(nm);
            if (osn_elem_server_discard(&el->server, s->q.now, it, w ? w->t0 : it->t_arr,
                                        w && w->t.has_resp)) {
                osn__net_msg_free(s, nm);
                continue;
            }
        }
        if (!it->reject)
            it->kind = (uint8_t)classify(nm);
        double c = el->sc->cost[it->kind];
        if (el->sc->exp_cost)
            c *= osn_des_exp1(&el->svc_rng);
        osn_elem_server_begin(&el->server, it);
        double end = s->q.now + c;
        if (el->slow)
            end = osn_des_slowed_end(s->q.now, c, el->sc->slowdown_start, el->sc->slowdown_end,
                                     el->sc->slowdown_factor);
        /* osn__net_at's work, here: the service completion is scheduled once a message, and
         * GCC kept osn__net_at out of line. */
        if (osn_des_at_key(&s->q, &el->svc, end, el->key++) != 0)
            s->err = OSN_ENOMEM;
    }
}

void osn__net_depart(struct net *s, struct element *el)
{
    struct osn_elem_item *it = osn_elem_server_depart(&el->server, s->q.now);
    process(s, el, item_msg(it));
    start_service(s, el);
}

/* The kind of nm on arrival at el. Matching is skipped where the answer changes nothing there
 * (no controller, and new and retransmitted requests both queued or both free): it reads the
 * call and a transaction. */
static int arrival_kind(const struct element *el, const struct nmsg *nm)
{
    if (el->kind_by_method && nm->m.status == 0 && nm->m.method != OSN_SIP_ACK)
        return nm->m.method == OSN_SIP_INVITE   ? OSN_ELEM_K_INVITE
               : nm->m.method == OSN_SIP_CANCEL ? OSN_ELEM_K_CANCEL
                                                : OSN_ELEM_K_BYE;
    return classify_arrival(nm);
}

/* Whether message nm belongs to a dialog's in-dialog traffic: a BYE or its response, or the ACK
 * of a 2xx (the UAC's own, branch kind B_ACK; the ACK of a non-2xx shares its INVITE's branch
 * and is hop by hop). */
static bool in_dialog(const struct nmsg *nm)
{
    return nm->m.method == OSN_SIP_BYE ||
           (nm->m.method == OSN_SIP_ACK && nm->m.status == 0 && nm->m.branch % 4 == B_ACK);
}

/* A proxy off the dialog's path (it did not Record-Route): the message goes on over the next
 * link, as past a router, never entering the proxy's CPU or transactions. The call's hop
 * indices stay those of the path, so the UAS and the UAC match it as if it had been relayed. */
static void pass_by(struct net *s, struct nmsg *nm)
{
    bool down = toward_uas(&nm->m);
    int hop = down ? nm->hop + 1 : nm->hop - 1;
    /* A fan-out edge off the path still stands where the cores part: the ACK of a 2xx goes to
     * the core the element says (the call's, when the cores Record-Route; else its choice, as
     * the node's for an ACK reaching it without a Route). */
    int here = nm->to; /* the element passing nm on: the next link's sender */
    const struct element *el = &s->elems[here];
    if (el->hops && nm->m.method == OSN_SIP_ACK && down)
        nm->m.branch |= osn__net_ack_core_bits(s, el, nm->call, nm->m.call_id);
    int cls;
    double delay, loss;
    osn__net_link_at(s, hop, nm->call, nm->m.branch, &cls, &delay, &loss);
    if (loss > 0 && osn_rng_u01(&s->loss_rng[hop]) < loss) {
        osn__net_msg_free(s, nm);
        return;
    }
    nm->hop = (uint8_t)hop;
    nm->to = (uint16_t)path(s, nm->call, down ? hop + 1 : hop, nm->m.branch);
    osn__net_on_link(s, here, &nm->ev, cls, delay);
}

/* What an element off the dialogs' path or with an outage does with nm before its server sees
 * it: true when nm went no further (passed by, or lost in the outage). */
static __attribute__((noinline)) bool diverted(struct net *s, struct element *el, struct nmsg *nm)
{
    if (el->off_path && in_dialog(nm)) {
        pass_by(s, nm);
        return true;
    }
    if (el->outage && s->q.now >= el->sc->outage_start && s->q.now < el->sc->outage_end) {
        /* Cut off the network: lost. An INVITE is still counted as sent to it (invites_in), so
         * that what its neighbours chose to send it shows. */
        if (nm->m.status == 0 && nm->m.method == OSN_SIP_INVITE && obs(s))
            el->tot[OSN__NE_NEWINV] += 1;
        osn__net_msg_free(s, nm);
        return true;
    }
    return false;
}

void osn__net_arrive(struct net *s, struct element *el, struct nmsg *nm)
{
    if (el->role == R_SRC) { /* never off the path, never cut off */
        /* a response, or the callee's BYE (its server costs nothing: a copy is counted as one) */
        nm->item.kind = nm->m.status ? OSN_ELEM_K_RESP : OSN_ELEM_K_BYE;
        process(s, el, nm);
        return;
    }
    if (el->divert && diverted(s, el, nm))
        return;
    int kind = arrival_kind(el, nm);
    enum osn_ctl_msg ck =
            osn_elem_ctl_msg(kind, nm->m.method, kind == OSN_ELEM_K_RESP && response_again(el, nm));
    if (nm->m.status == 0 && nm->m.method == OSN_SIP_INVITE && obs(s))
        el->tot[OSN__NE_NEWINV] += 1;
    struct osn_elem_item *evicted;
    bool shed_able = nm->m.status == 0 && nm->m.method != OSN_SIP_ACK;
    switch (osn_elem_server_arrive(&el->server, s->q.now, &nm->item, kind, ck, shed_able,
                                   (nm->m.oc.flags & OSN_SIP_OC_PRESENT) != 0, &evicted)) {
    case OSN_ELEM_HANDLE_NOW:
        mark_kept(el, nm);
        process(s, el, nm);
        return;
    case OSN_ELEM_DROPPED:
        osn__net_msg_free(s, nm);
        return;
    case OSN_ELEM_QUEUED:
        if (evicted)
            osn__net_msg_free(s, item_msg(evicted));
        mark_kept(el, nm);
        if (!el->server.cur)
            start_service(s, el);
        return;
    }
}
