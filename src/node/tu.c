/*
 * The node's transaction user: a driver that carries out the element's action lists
 * (src/elem/element.c, the same lists the network simulator carries out) as SIP text. It
 * decides nothing a SIP element decides; what it adds is bytes and a socket:
 *   FORWARD      print the request with our Via on top (a fresh branch ending in the loop
 *                hash, the client half's oc offer) and Max-Forwards - 1, start a client
 *                transaction (if that fails, the element's 513 or 500);
 *   RESPOND      print a response from the stored request, with our To tag and the server
 *                half's feedback in the top Via; a uas's 2xx to an INVITE, or to a BYE, adds
 *                the call to, or removes it from, the calls it knows (the 481 of a BYE);
 *   RELAY        print the next hop's response with our Via removed, the feedback on top;
 *   FORWARD_ACK  print the ACK with a branch derived from its own (a resent ACK gets the same);
 *   ARM_2XX      the timer heap, and the dialog map that finds the ACK of the 2xx by Call-ID;
 *   ARM_RING     the same timer slot, marked as the ring delay's (tu_2xx_timer tells them apart);
 *   CANCEL_LATER the INVITE's client transaction marked: its next event goes to cancel_later().
 * Driver differences from the simulator, each stated where it lives: the node keeps no record
 * of a request after its transaction ends, so it never reports a late copy (tu_event); its
 * messages carry Max-Forwards, the simulator's do not (so 483 happens here only).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "../base/text.h"
#include "node_int.h"
#include "osn/err.h"

/* "z9hG4bK" + 16 hex digits: the magic cookie (RFC 3261 8.1.1.7) and a unique number; a
 * forwarded request's branch adds 16 more, its loop hash (loop_hash). */
#define BRANCH_LEN     (7 + 16)
#define FWD_BRANCH_LEN (BRANCH_LEN + 16)
/* The responses to what we forward get their branch number from its first 16 digits (ident.c). */
_Static_assert(FWD_BRANCH_LEN == OSN_SIP_WIRE_OWN_BRANCH_LEN, "the form osn/sip_wire.h reads");

/* v as 16 lower-case hex digits and a NUL, as "%016" PRIx64 writes it. */
static void hex16(char out[17], uint64_t v)
{
    struct osn_text w = osn_text_at(out, 17);
    osn_text_hex(&w, v, 16);
    *w.p = '\0';
}

static void branch_text(char out[BRANCH_LEN + 1], uint64_t v)
{
    memcpy(out, "z9hG4bK", 7);
    hex16(out + 7, v);
}

static uint64_t mix(uint64_t h, struct osn_span s)
{
    return (h ^ osn_sip_wire_hash(s.p, s.n)) * 0x9e3779b97f4a7c15ULL;
}

/* The loop half of the branch we give request m when we forward it (RFC 3261 16.6 step 8): a
 * function of what forwarding does not change, its Request-URI, From and To tags, Call-ID and
 * CSeq, not of its Vias or Max-Forwards. The same request back with our Via on it is a loop; a
 * changed one (a new Request-URI) a spiral. The Call-ID and tags enter as the keyed hashes its
 * transaction already holds (num, osn_sip_wire_to_txn of m): not hashed a second time. */
static uint64_t loop_hash(const struct node *n, const struct osn_sip_wire *m,
                          const struct osn_sip_msg *num)
{
    uint64_t h = n->branch_salt;
    h = mix(h, m->uri);
    h = (h ^ num->from_tag) * 0x9e3779b97f4a7c15ULL;
    h = (h ^ num->to_tag) * 0x9e3779b97f4a7c15ULL;
    h = (h ^ num->call_id) * 0x9e3779b97f4a7c15ULL;
    /* The CSeq number and method as one number (the method is a small enum), mixed as the
     * hashes above are: not printed in decimal and hashed again (two a proxied call). */
    return (h ^ ((uint64_t)m->cseq << 8 | m->cseq_method)) * 0x9e3779b97f4a7c15ULL;
}

/* Whether a Via's sent-by is ours: our host, and our Via port or (several workers) another
 * worker's, since a loop may come back to any of them. */
static bool our_sent_by(const struct node *n, const struct osn_sip_via *v, size_t hn)
{
    bool port = v->port == node_via_port(n);
    for (int i = 0; i < n->nports && !port; i++)
        port = v->port == n->ports[i];
    return port && v->host.n == hn && !strncasecmp(v->host.p, n->host, hn);
}

/* Whether request m carries a Via of ours (our sent-by, host and port) whose branch ends in the
 * loop hash it would get now (RFC 3261 16.3 step 4): a loop. num: its numbers. */
static bool looped(const struct node *n, const struct osn_sip_wire *m,
                   const struct osn_sip_msg *num)
{
    char want[17];
    size_t hn = strlen(n->host);
    bool mine = false;
    for (int i = 0; i < m->nvia && !mine; i++) {
        const struct osn_sip_via *v = &m->via[i];
        mine = v->branch.n == FWD_BRANCH_LEN && our_sent_by(n, v, hn);
    }
    if (!mine)
        return false;
    hex16(want, loop_hash(n, m, num));
    for (int i = 0; i < m->nvia; i++) {
        const struct osn_sip_via *v = &m->via[i];
        if (v->branch.n == FWD_BRANCH_LEN && our_sent_by(n, v, hn) &&
            !memcmp(v->branch.p + BRANCH_LEN, want, 16))
            return true;
    }
    return false;
}

/* A To tag of ours for the call of request x: the same for every response of the call. From
 * the keyed hash of its Call-ID its transaction holds (nz(h) | 1 == h | 1: the tag is the one
 * the text's hash gives), not hashed again. */
static void to_tag_text(char out[17], const struct ntx *x)
{
    hex16(out, x->t.req.call_id | 1);
}

/* The server half's current feedback, for the top Via of a response we send (RFC 7339 5.2). */
static void feedback(struct node *n, struct osn_sip_oc *oc)
{
    *oc = (struct osn_sip_oc){0};
    if (n->srv) {
        struct osn_ctl_feedback fb;
        osn_ctl_server_feedback(n->srv, n->now, &fb);
        osn_elem_fb_to_oc(&fb, oc);
    }
}

bool tu_reply(struct node *n, const struct osn_sip_wire *req, const union node_addr *from, bool tcp,
              int status, int retry_after)
{
    char rb[ADDR_RECEIVED_MAX];
    struct osn_sip_reply r = {.status = (uint16_t)status, .retry_after = retry_after};
    r.via_received = addr_via_received(from, &req->via[0], rb, &r.via_rport);
    int len = osn_sip_wire_print_reply(n->obuf, sizeof n->obuf, req, &r);
    if (len > 0)
        node_send(n, from, tcp, n->obuf, (size_t)len);
    return len > 0;
}

/* Gives the server transaction x the response printed in n->obuf[0..len) with these numbers;
 * keeps the bytes when the transaction takes it. */
static void respond_bytes(struct node *n, struct ntx *x, int len, const struct osn_sip_msg *r)
{
    struct osn_sip_out o;
    if (len <= 0 || osn_sip_stxn_respond(&n->sip, &x->t, r, n->now, &o) != 0)
        return;
    if (o.nsend > 0 && ntx_set_resp(n, x, n->obuf, (size_t)len) != 0) {
        n->err = OSN_ENOMEM;
        return;
    }
    ntx_apply(n, x, &o, NULL);
}

void tu_respond(struct node *n, struct ntx *x, int status, int retry_after, int with)
{
    char tag[17], contact[UAS_CONTACT_MAX], sdp[UAS_SDP_MAX];
    char rb[ADDR_RECEIVED_MAX];
    struct osn_sip_reply r = {.status = (uint16_t)status, .retry_after = retry_after};
    /* A request let go in a final state (ntx_trim) answers nothing more. */
    if (!x->req || uas_reply_fill(n, x->req, with, &r, contact, sdp) != 0)
        return;
    r.via_received = addr_via_received(&x->from, &x->req->via[0], rb, &r.via_rport);
    to_tag_text(tag, x);
    r.to_tag = (struct osn_span){tag, 16};
    feedback(n, &r.oc);
    int len = osn_sip_wire_print_reply(n->obuf, sizeof n->obuf, x->req, &r);
    struct osn_sip_msg m = osn_elem_response(&x->t.req, status, retry_after);
    respond_bytes(n, x, len, &m);
}

static void act(struct node *n, struct ntx *x, const struct osn_elem_actions *a,
                const struct rmsg *in);

/* Keeps request pm (accepted, its bytes in n->obuf) as client transaction y's, with its
 * numbers in *m: the transaction keeps the text of its key (branch, sent-by, Call-ID) in the
 * bytes it resends, and the ACK of a non-2xx is printed from this parse (17.1.1.3). `orig`, when
 * not NULL, holds the numbers of the request pm forwards (its Call-ID and tags: not hashed
 * again). 0, or an error. */
static int keep_request(struct node *n, struct ntx *y, const struct osn_sip_wire *pm,
                        const struct osn_sip_msg *orig, struct osn_sip_msg *m)
{
    struct rmsg r = {.pm = pm};
    if (pm->err.verdict != OSN_SIP_WIRE_ACCEPT)
        return OSN_EINVAL;
    int err = ntx_set_req(n, y, &r);
    if (err)
        return err;
    return orig ? osn_sip_wire_to_txn_fwd(y->req, orig, m) : osn_sip_wire_to_txn(y->req, m);
}

/* The client transaction y's request: the CANCEL just printed in n->obuf[0..len) from the
 * INVITE whose numbers are inv, parsed (a CANCEL is rare; a forward's parse comes from its
 * printer instead). Its numbers as a forward's: its branch is the INVITE's, of our form, and
 * must get the number its 200 will (osn_sip_wire_to_txn_fwd). 0, or an error. */
static int keep_cancel(struct node *n, struct ntx *y, int len, const struct osn_sip_msg *inv,
                       struct osn_sip_msg *m)
{
    struct osn_sip_wire pm;
    if (osn_sip_wire_parse_as(&pm, n->obuf, (size_t)len, parse_role(n)) != OSN_SIP_WIRE_ACCEPT)
        return OSN_EINVAL;
    return keep_request(n, y, &pm, inv, m);
}

/* Forwards the request of server transaction x (its parse kept in x->req) on a new client
 * transaction, to next hop `hop` unless its Route says elsewhere; false when it could not (then
 * answered as the element decides: 513 when it does not fit in a datagram, RFC 3261 18.1.1,
 * else 500). */
static bool forward(struct node *n, struct ntx *x, int hop)
{
    char branch[FWD_BRANCH_LEN + 1], rr[2][96];
    struct osn_sip_fwd f = {
            .transport = {"UDP", 3}, .host = {n->host, strlen(n->host)}, .port = node_via_port(n)};
    struct osn_proxy_route_out ro;
    union node_addr to;
    branch_text(branch, n->branch_salt ^ (++n->branch_seq * 0x9e3779b97f4a7c15ULL));
    if (x->req) /* else let go in a final state: nothing to forward */
        hex16(branch + BRANCH_LEN, loop_hash(n, x->req, &x->t.req));
    f.branch = (struct osn_span){branch, FWD_BRANCH_LEN};
    char rb[ADDR_RECEIVED_MAX];
    if (x->req)
        f.via_received = addr_via_received(&x->from, &x->req->via[0], rb, &f.via_rport);
    /* The proxy's routing decision (Route, Record-Route), carried out; a destination the node
     * cannot resolve fails the forward (500). */
    bool tcp = false;
    bool routed = x->req && route_plan(n, x->req, hop, &ro, &to, &tcp) == 0;
    /* Over TCP to a next hop that says so, or to a Route or Request-URI that says
     * ;transport=tcp (RFC 3261 18.1.1: our Via names the transport). */
    tcp = routed && tcp;
    if (tcp && !n->tcp)
        routed = false; /* a node configured without TCP opens no connection: 500 */
    if (tcp)
        f.transport = (struct osn_span){"TCP", 3};
    /* The server it goes to, for its feedback (a Route may name one of the next hops, or none:
     * a request going upstream offers no oc, RFC 7339 5.10: no client half of ours is for it) */
    int to_hop = !routed ? NTX_NO_HOP : hops_index(n, &to);
    if (hops_cli(n, to_hop))
        osn_elem_oc_offer(&f.oc);
    if (routed) {
        f.pop_route = ro.pop;
        /* 16.6 step 4, with RFC 5658's double Record-Route where the legs' transports differ
         * (the element says which values, osn_proxy_record_routes): each end of the dialog then
         * reaches us over the transport of its own leg. A leg counts as TCP only where we accept
         * connections: a node that does not listen on TCP is reached over UDP (on its port) by
         * both ends, whatever the transport it forwards by. */
        bool rr_tcp[2], lt = tcp_listening(n);
        int nrr = ro.record_route ? osn_proxy_record_routes(lt && x->t.reliable, lt && tcp, rr_tcp)
                                  : 0;
        struct osn_span *at[2] = {&f.record_route, &f.record_route2};
        for (int i = 0; i < nrr; i++) {
            int k = route_record_uri(n, rr_tcp[i], rr[i], sizeof rr[i]);
            *at[i] = (struct osn_span){rr[i], k > 0 ? (size_t)k : 0};
        }
    }
    /* The forward and its parse at once: the parse of a copied line is x->req's, moved. */
    struct osn_sip_wire pm;
    int len = routed ? osn_sip_wire_print_forward_parsed(n->obuf, sizeof n->obuf, x->req, &f, &pm)
                     : OSN_EINVAL;
    bool too_large = len == OSN_ETOOBIG || (!tcp && len > NODE_UDP_MAX);
    struct ntx *y = len > 0 && !too_large ? ntx_new(n) : NULL;
    if (y) {
        y->from = to;
        y->hop = (uint8_t)to_hop;
        y->routed = ro.target != OSN_PROXY_TO_NEXT_HOP;
    }
    struct osn_sip_msg m;
    struct osn_sip_out o;
    if (!y || keep_request(n, y, &pm, &x->t.req, &m) != 0 ||
        osn_sip_ctxn_start_over(&n->sip, &y->t, &m, tcp, n->now, &o) != 0) {
        struct osn_elem_actions a;
        ntx_free(n, y);
        osn_elem_on_forward_failed(too_large, &a);
        act(n, x, &a, NULL);
        return false;
    }
    if (x->peer) /* a failover: the branch that failed answers upstream no more */
        x->peer->peer = NULL;
    x->peer = y;
    y->peer = x;
    ntx_apply(n, y, &o, NULL);
    return true;
}

/* Relays the next hop's response `resp` upstream on server transaction up, with our Via removed
 * and the server half's feedback in the new top Via. */
static void relay(struct node *n, struct ntx *up, const struct osn_elem_action *a,
                  const struct rmsg *resp)
{
    struct osn_sip_oc oc;
    feedback(n, &oc);
    int len = resp ? osn_sip_wire_print_response_fwd_oc(n->obuf, sizeof n->obuf, resp->pm, &oc)
                   : OSN_EINVAL;
    if (len <= 0) { /* the element decides what then (found by fuzz_node) */
        struct osn_elem_actions f;
        osn_elem_on_relay_failed(a->status, &f);
        act(n, up, &f, NULL);
        return;
    }
    struct osn_sip_msg r = osn_elem_response(&up->t.req, a->status, a->retry_after);
    r.to_tag = resp->m.to_tag;
    respond_bytes(n, up, len, &r);
}

/* The element's decision at the uas's 2xx deadline for INVITE x, its server transaction there
 * in Accepted (`have_txn`) or not. */
static void uas_2xx(struct node *n, struct ntx *x, bool have_txn)
{
    struct osn_elem e = node_elem(n);
    struct osn_elem_actions a;
    uint64_t call = x->t.req.call_id;
    /* the call still up at the uas (no BYE of the caller's answered) and no BYE of its callee's
     * due (hangup.c's timer sends that one) */
    bool up = calls_has(&n->calls, call) && !hangup_due(n, call);
    osn_elem_on_2xx_timer(&e, n->now, &x->uas, have_txn, up, &a);
    act(n, x, &a, NULL);
    if (x->uas.over)
        hangup_unacked(n, call, false); /* its watch, if the BYE did not take it */
}

void tu_2xx_timer(struct node *n, struct ntx *x)
{
    struct osn_elem e = node_elem(n);
    struct osn_elem_actions a;
    if (x->ringing) { /* the timer was the ring delay's: the called user answers, or is late */
        x->ringing = false;
        osn_elem_on_ring_timer(&e, n->now, x->live ? x->t.state : OSN_SIP_NOSTATE, &x->uas, &a);
        act(n, x, &a, NULL);
        return;
    }
    uas_2xx(n, x, x->live && x->t.state == OSN_SIP_ACCEPTED);
}

void tu_2xx_end(struct node *n, struct ntx *x)
{
    uas_2xx(n, x, false); /* going: nothing is resent from it, no timer armed on it */
}

/* The uas's ring delay for a new INVITE: the scenario's law, drawn from the node's own stream. */
static double ring_draw(struct node *n)
{
    double u = n->cfg->ring == OSN_UAS_RING_EXP ? osn_rng_u01_open(&n->ring_rng) : 0.5;
    return osn_uas_ring_delay(n->cfg->ring, n->cfg->ring_mean, u);
}

void tu_new_request(struct node *n, struct rmsg *r, const struct osn_elem_item *shed)
{
    const struct osn_sip_msg *m = &r->m;
    bool inv = m->method == OSN_SIP_INVITE;
    /* The cap: max_transactions live ones, and the memory the transactions hold, kept ones
     * included, within max_memory. */
    bool room = node_room(n->cfg, n->live, n->held, node_charged(n), r->pm->buf.n);
    struct ntx *x = room ? ntx_new(n) : NULL;
    if (!x) {
        /* The cap: a 503 printed statelessly from the request. With no transaction to absorb
         * them, the request's copies are refused again, each counted. */
        tu_reply(n, r->pm, &r->from, r->tcp, 503, 1);
        n->st.refused_at_cap++;
        return;
    }
    if (inv)
        n->st.calls_in++;
    else if (m->method == OSN_SIP_BYE)
        n->st.bye_in++;
    else if (m->method == OSN_SIP_CANCEL)
        n->st.cancel_in++;
    x->from = r->from;
    struct osn_sip_out o;
    if (ntx_set_req(n, x, r) != 0 ||
        osn_sip_stxn_start_over(&n->sip, &x->t, m, r->tcp, n->now, &o) != 0) {
        /* Its key is taken by a transaction whose text differs (a hash collision): dropped. */
        n->st.stray++;
        ntx_free(n, x);
        return;
    }
    /* The element strips what a shed request does not get (its TU event, the 100 Trying). */
    struct osn_elem_actions a;
    osn_elem_stxn_started(shed != NULL, shed ? shed->retry_after : 0, &o, &a);
    ntx_apply(n, x, &o, r);
    if (a.n && x->live)
        act(n, x, &a, NULL);
}

/* Forwards `ack`, the ACK of a 2xx, statelessly, RFC 3261 16.11: its branch is a function of
 * the incoming one, so a retransmitted ACK gets the same. False when it could not be printed. */
static bool forward_ack(struct node *n, const struct rmsg *ack)
{
    char branch[BRANCH_LEN + 1];
    struct osn_proxy_route_out ro;
    union node_addr to;
    /* The ACK of a 2xx follows the dialog's route set like any in-dialog request (16.12): a
     * Route names where it goes (route_plan). Without one (no proxy past us Record-Routed), the
     * element says which next hop (osn_elem_hops_ack: by weight, from the Call-ID). */
    int hop = ack && n->nhops > 1 ? osn_elem_hops_ack(&n->fan, n->now, -1, ack->m.call_id) : 0;
    bool tcp = false;
    if (!ack || route_plan(n, ack->pm, hop, &ro, &to, &tcp) != 0)
        return false;
    const struct osn_sip_via *v = &ack->pm->via[0];
    struct osn_sip_fwd f = {
            .transport = {"UDP", 3}, .host = {n->host, strlen(n->host)}, .port = node_via_port(n)};
    if (tcp)
        f.transport = (struct osn_span){"TCP", 3};
    /* from its branch's keyed hash, which an RFC 3261 ACK's numbers hold already */
    uint64_t bh = ack->pm->rfc2543 ? osn_sip_wire_hash(v->branch.p, v->branch.n) : ack->m.branch;
    branch_text(branch, bh ^ n->branch_salt);
    f.branch = (struct osn_span){branch, BRANCH_LEN};
    f.pop_route = ro.pop;
    char rb[ADDR_RECEIVED_MAX];
    f.via_received = addr_via_received(&ack->from, v, rb, &f.via_rport);
    int len = osn_sip_wire_print_forward(n->obuf, sizeof n->obuf, ack->pm, &f);
    if (len <= 0)
        return false;
    node_send(n, &to, tcp, n->obuf, (size_t)len);
    return true;
}

/* The uas answered new INVITE x 2xx: a call its callee may end, or its 2xx never be acknowledged
 * (hangup.c), in the dialog of our To tag. */
static void callee_call(struct node *n, struct ntx *x)
{
    char tag[17];
    to_tag_text(tag, x);
    hangup_start(n, x, tag);
}

/* The element's counts are the node's stats (LATE never comes: see tu_event). */
static void count(struct node *n, int c)
{
    struct osn_node_stats *st = &n->st;
    uint64_t *at[OSN_ELEM_NCOUNTS] = {[OSN_ELEM_C_FORWARDED] = &st->calls_forwarded,
                                      [OSN_ELEM_C_CALL_OK] = &st->calls_ok,
                                      [OSN_ELEM_C_BYE_OK] = &st->bye_ok,
                                      [OSN_ELEM_C_503] = &st->rejected_503,
                                      [OSN_ELEM_C_408] = &st->timeouts_408,
                                      [OSN_ELEM_C_483] = &st->too_many_hops,
                                      [OSN_ELEM_C_LATE] = &st->stray,
                                      [OSN_ELEM_C_ACK_FWD] = &st->acks_forwarded,
                                      [OSN_ELEM_C_STRAY] = &st->stray,
                                      [OSN_ELEM_C_481] = &st->no_dialog_481,
                                      [OSN_ELEM_C_482] = &st->loops_482,
                                      [OSN_ELEM_C_513] = &st->too_large_513,
                                      [OSN_ELEM_C_CANCEL_FWD] = &st->cancel_forwarded,
                                      [OSN_ELEM_C_487] = &st->cancelled_487,
                                      [OSN_ELEM_C_500] = &st->transport_500,
                                      [OSN_ELEM_C_BYE_UNACKED] = &st->bye_unacked};
    if (at[c])
        (*at[c])++;
}

/*
 * Carries out the element's actions on server transaction x (the request's, or for a client
 * event the one upstream; NULL for an ACK that matched none, where only FORWARD_ACK and COUNT
 * come), with `in` the message received that led to them (the response a RELAY sends on, the
 * ACK a FORWARD_ACK sends on; NULL for a timer or a start). An action the node
 * cannot do (a forward that fails, an ACK that does not print) is counted as its failure instead.
 */
static void act(struct node *n, struct ntx *x, const struct osn_elem_actions *a,
                const struct rmsg *in)
{
    for (int i = 0; i < a->n; i++) {
        const struct osn_elem_action *y = &a->a[i];
        int c = y->count;
        switch (y->kind) {
        case OSN_ELEM_A_RESPOND:
            /* before the 2xx: its transaction may let the INVITE go (ntx_trim), and the BYE
             * of a call the callee ends is printed from it */
            if (uas_sends_bye(n) && y->status >= 200 && y->status < 300 &&
                x->t.req.method == OSN_SIP_INVITE)
                callee_call(n, x);
            tu_respond(n, x, y->status, y->retry_after, y->with);
            /* The calls the UAS knows, for a BYE or CANCEL to find: from the INVITE's 2xx to
             * the BYE's. */
            if (!is_proxy(n) && y->status >= 200 && y->status < 300) {
                if (x->t.req.method == OSN_SIP_INVITE &&
                    calls_put(&n->calls, x->t.req.call_id, n->now, &n->st.calls_forgotten) != 0)
                    n->err = OSN_ENOMEM;
                else if (x->t.req.method == OSN_SIP_BYE)
                    calls_del(&n->calls, x->t.req.call_id);
            }
            break;
        case OSN_ELEM_A_RELAY:
            relay(n, x, y, in);
            break;
        case OSN_ELEM_A_FORWARD:
            if (!forward(n, x, y->hop))
                c = OSN_ELEM_C_NONE;
            break;
        case OSN_ELEM_A_DROP:
            osn_sip_txn_abort(&n->sip, &x->t);
            ntx_free(n, x);
            count(n, c);
            return;
        case OSN_ELEM_A_FORWARD_ACK:
            if (!forward_ack(n, in))
                c = OSN_ELEM_C_STRAY;
            break;
        case OSN_ELEM_A_ACKED:
            if (x)
                x->uas.acked = true;
            if (x && uas_sends_bye(n)) /* a callee's BYE may go now; a watch goes */
                hangup_acked(n, x->t.req.call_id);
            /* Its 2xx timer has nothing left to do: the rest of Timer L in the kept table. */
            if (x && !is_proxy(n))
                ntx_keep(n, x);
            break;
        case OSN_ELEM_A_RESEND_2XX: {
            /* The stored 2xx goes out again: the transaction sends x->resp (its request may be
             * let go in Accepted, so nothing is printed). */
            struct osn_sip_msg m = osn_elem_response(&x->t.req, 200, -1);
            struct osn_sip_out o;
            if (osn_sip_stxn_respond(&n->sip, &x->t, &m, n->now, &o) == 0)
                ntx_apply(n, x, &o, NULL);
            break;
        }
        case OSN_ELEM_A_ARM_2XX:
            /* The dialog map finds it for the ACK of the 2xx, which has a branch of its own. */
            if (x->live && (x->in_dialogs || dialogs_put(&n->dialogs, x) == 0))
                ntx_arm_2xx(n, x, a->at);
            break;
        case OSN_ELEM_A_ARM_RING: /* the 2xx timer's slot, free until the 200 */
            if (x->live) {
                x->ringing = true;
                ntx_arm_2xx(n, x, a->at);
            }
            break;
        case OSN_ELEM_A_BYE_UNACKED: /* printed at the 2xx (hangup.c), from the INVITE */
            if (!hangup_unacked(n, x->t.req.call_id, true))
                c = OSN_ELEM_C_NONE;
            break;
        case OSN_ELEM_A_COUNT:
        case OSN_ELEM_A_CANCEL_BRANCH:  /* only in cancel_request() and cancel_later(), */
        case OSN_ELEM_A_RESPOND_INVITE: /* which know the INVITE */
        case OSN_ELEM_A_CANCEL_LATER:
            break;
        }
        count(n, c);
    }
}

/* The INVITE server transaction the CANCEL of server transaction x cancels (RFC 3261 9.2: the
 * same top Via, method aside), its key compared as ntx_find does; NULL when none. */
static struct ntx *cancelled_invite(struct node *n, struct ntx *x)
{
    struct osn_sip_txn *t = osn_sip_layer_match_cancelled(&n->sip, &x->t.req);
    struct osn_sip_wire_key k;
    if (!t || !x->req || osn_sip_wire_key_of(x->req, &k) != 0)
        return NULL;
    struct ntx *inv = OSN_CONTAINER_OF(t, struct ntx, t);
    k.method = OSN_SIP_INVITE;
    return inv->live && osn_sip_wire_key_eq(&inv->key, &k) ? inv : NULL;
}

/* Sends a CANCEL for the INVITE of client transaction y (RFC 3261 9.1), printed from the INVITE
 * it keeps, on a non-INVITE client transaction of its own with no peer: its 200 (or its
 * timeout) ends here. False when it could not be printed or started. */
static bool cancel_branch(struct node *n, struct ntx *y)
{
    struct osn_sip_msg m;
    struct osn_sip_out o;
    if (!y || !y->live || !y->req)
        return false;
    int len = osn_sip_wire_print_cancel(n->obuf, sizeof n->obuf, y->req);
    struct ntx *c = len > 0 ? ntx_new(n) : NULL;
    if (c) {
        c->from = y->from; /* 9.1: where the INVITE went */
        c->hop = y->hop;
        c->routed = true; /* a CANCEL goes where its INVITE went, or nowhere */
    }
    if (!c || keep_cancel(n, c, len, &y->t.req, &m) != 0 ||
        osn_sip_ctxn_start_over(&n->sip, &c->t, &m, y->t.reliable, n->now, &o) != 0) {
        ntx_free(n, c);
        return false;
    }
    ntx_apply(n, c, &o, NULL);
    return true;
}

/* A new CANCEL (server transaction x): the element's decision, carried out on x, on the INVITE
 * it cancels (its 487) and on that INVITE's branch (the CANCEL passed on). */
/* The state of the INVITE the CANCEL of x cancels when it waits in the kept table (its final
 * response sent: Confirmed or Accepted), else NOSTATE. */
static int kept_invite_state(struct node *n, struct ntx *x)
{
    struct osn_sip_wire_key k;
    if (!x->req || osn_sip_wire_key_of(x->req, &k) != 0)
        return OSN_SIP_NOSTATE;
    k.method = OSN_SIP_INVITE;
    uint32_t i =
            kept_find_key(n, OSN_SIP_SERVER, x->t.req.branch, x->t.req.sent_by, OSN_SIP_INVITE, &k);
    return i == KEPT_NONE ? OSN_SIP_NOSTATE : n->kept.rec[i].state;
}

static void cancel_request(struct node *n, struct ntx *x)
{
    struct osn_elem e = node_elem(n);
    struct osn_elem_actions a;
    struct ntx *inv = cancelled_invite(n, x);
    struct ntx *branch = inv && is_proxy(n) ? inv->peer : NULL;
    osn_elem_on_cancel_hop(&e, branch ? branch->hop : 0, n->now,
                           inv ? inv->t.state : kept_invite_state(n, x),
                           branch && branch->live ? branch->t.state : OSN_SIP_NOSTATE, &a);
    for (int i = 0; i < a.n; i++) {
        const struct osn_elem_action *y = &a.a[i];
        if (!inv && (y->kind == OSN_ELEM_A_RESPOND_INVITE || y->kind == OSN_ELEM_A_CANCEL_LATER))
            continue; /* never for an INVITE with its final sent (a kept one) */
        if (y->kind == OSN_ELEM_A_RESPOND_INVITE) {
            tu_respond(n, inv, y->status, y->retry_after, y->with);
            count(n, y->count);
        } else if (y->kind == OSN_ELEM_A_CANCEL_BRANCH) {
            count(n, cancel_branch(n, branch) ? y->count : OSN_ELEM_C_NONE);
        } else if (y->kind == OSN_ELEM_A_CANCEL_LATER) {
            branch->cancel_later = true; /* its next event: cancel_later() */
        } else {
            struct osn_elem_actions one = {.n = 1, .a = {*y}};
            act(n, x, &one, NULL);
        }
    }
}

/* Client transaction y of an INVITE a CANCEL was kept for reports `tu` with `status`: the
 * element says whether the CANCEL goes now (its first provisional response) or is dropped. */
static void cancel_later(struct node *n, struct ntx *y, int tu, int status)
{
    struct osn_elem_actions a;
    y->cancel_later = osn_elem_on_cancel_later(tu, status, &a);
    for (int i = 0; i < a.n; i++)
        if (a.a[i].kind == OSN_ELEM_A_CANCEL_BRANCH)
            count(n, cancel_branch(n, y) ? a.a[i].count : OSN_ELEM_C_NONE);
}

/* The server a request must go to whatever the choice: a request with a Route (inside a
 * dialog, RFC 3261 16.12) goes where its Route says, a next hop (its index) or another address
 * (NTX_NO_HOP, the element's OSN_ELEM_HOP_NONE: upstream to the caller's Contact, or a Route of
 * a proxy before us; no client half of ours decides); -1 for a request the element routes to a
 * next hop (of its choice when there are several). With one next hop too: the callee's BYE
 * must not be put to the client half toward that hop (osn_elem_on_request_hop). */
static int routed_hop(const struct node *n, const struct osn_sip_wire *req)
{
    struct osn_proxy_route_out ro;
    union node_addr to;
    bool tcp;
    if (route_plan(n, req, 0, &ro, &to, &tcp) != 0 || ro.target == OSN_PROXY_TO_NEXT_HOP)
        return -1;
    return hops_index(n, &to);
}

void tu_kept_2xx(struct node *n, int hop, bool routed, double t0, const union node_addr *up,
                 bool up_tcp, int up_state, const struct rmsg *r)
{
    struct osn_elem e = node_elem(n);
    struct osn_elem_actions a;
    (routed ? osn_elem_on_client_event_routed
            : osn_elem_on_client_event_hop)(&e, hop, n->now, t0, OSN_SIP_TU_RESPONSE, r->m.status,
                                            r->m.retry_after, OSN_SIP_INVITE, up_state, &a);
    for (int i = 0; i < a.n; i++) {
        const struct osn_elem_action *y = &a.a[i];
        if (y->kind == OSN_ELEM_A_RELAY && up) {
            /* relay() without a live transaction: the upstream one sends the 2xx again (RFC
             * 6026 7.1) as it came, our Via removed, the feedback in the new top Via */
            struct osn_sip_oc oc;
            feedback(n, &oc);
            int len = osn_sip_wire_print_response_fwd_oc(n->obuf, sizeof n->obuf, r->pm, &oc);
            if (len > 0) {
                n->sip.stats.resp_retrans++;
                n->st.retrans_sent++;
                node_send(n, up, up_tcp, n->obuf, (size_t)len);
            }
        }
        count(n, y->count);
    }
}

void tu_stray_ack(struct node *n, const struct rmsg *r)
{
    struct osn_elem e = node_elem(n);
    struct osn_elem_actions a;
    struct ntx *x = NULL;
    /* A uas finds the INVITE an ACK acknowledges by its dialog (dialogs.c) while it waits for
     * the ACK; once acked it is kept (kept.c), and a copy of the ACK (one per copy of the 2xx
     * the caller had) is of a call the uas knows: absorbed as the live INVITE absorbed it. */
    if (!is_proxy(n) && !(x = dialogs_get(&n->dialogs, r->m.call_id, r->pm->call_id, r->m.cseq)) &&
        !calls_has(&n->calls, r->m.call_id)) {
        n->st.stray++; /* no dialog of ours: the node forgot it, or it never was */
        return;
    }
    osn_elem_on_ack(&e, r->pm->max_forwards, &a);
    act(n, x, &a, r);
}

void tu_event(struct node *n, struct ntx *x, const struct osn_sip_out *o, const struct rmsg *in)
{
    if (is_uac(n)) { /* the load generator's calls: the UAC's decisions (gen.c) */
        gen_client_event(n, x, o, in);
        return;
    }
    struct osn_elem e = node_elem(n);
    struct osn_elem_actions a;
    if (x->t.role == OSN_SIP_CLIENT && !is_proxy(n)) { /* the uas's BYE: its callee hung up */
        hangup_event(n, x, o);
        return;
    }
    if (x->t.role == OSN_SIP_CLIENT) {
        /* A proxy's client transaction: the decision acts on the server transaction upstream. */
        struct ntx *up = x->peer;
        bool resp = o->tu == OSN_SIP_TU_RESPONSE;
        /* A request routed by its Route never fails over: the route set names its server. */
        (x->routed ? osn_elem_on_client_event_routed : osn_elem_on_client_event_hop)(
                &e, x->hop, n->now, x->t0, o->tu, resp ? o->msg->status : 0,
                resp ? o->msg->retry_after : -1, x->t.req.method,
                up && up->live ? up->t.state : OSN_SIP_NOSTATE, &a);
        act(n, up, &a, in);
        if (x->cancel_later) /* a CANCEL kept for this branch (RFC 3261 9.1) */
            cancel_later(n, x, o->tu, resp ? o->msg->status : 0);
    } else if (o->tu == OSN_SIP_TU_REQUEST) {
        /* The request as the transaction keeps it (its Max-Forwards, its Vias for the loop
         * check, the parse forward() prints from). The node keeps no record of a request once
         * its transaction has ended: never handled before. A UAS knows the calls it answered
         * 2xx and has had no BYE for (struct calls). */
        const struct osn_sip_wire *req = x->req;
        if (!req)
            return;
        if (x->t.req.method == OSN_SIP_CANCEL) {
            cancel_request(n, x);
            return;
        }
        if (is_proxy(n)) {
            osn_elem_on_request_hop(&e, routed_hop(n, req), n->now, x->t.req.method,
                                    req->max_forwards, false, looped(n, req, &x->t.req), &a);
        } else {
            struct osn_uas_request q = uas_request_of(n, req, x->t.req.call_id);
            if (q.method == OSN_SIP_INVITE && !q.in_dialog && n->cfg->ring != OSN_UAS_RING_NONE)
                q.ring = ring_draw(n);
            osn_elem_on_uas_request(&e, n->now, &q, false, &x->uas, &a);
        }
        act(n, x, &a, NULL);
    } else if (o->tu == OSN_SIP_TU_ACK) {
        /* RFC 6026 7.1: the ACK passes the TU. */
        osn_elem_on_ack(&e, in ? in->pm->max_forwards : -1, &a);
        act(n, x, &a, in);
    }
}
