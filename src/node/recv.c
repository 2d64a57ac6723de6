/*
 * A datagram reaches the node: parsed, classified, and given to the element's server, whose
 * virtual CPU serves it when the messages ahead of it have had their cost.
 *
 * Classification is the simulator's (src/sim/net_server.c): a request that matches a server
 * transaction is a copy (an absorbed retransmission), an ACK is an ACK, a response is a
 * response, anything else a new INVITE or a new non-INVITE request (costed as a BYE). The
 * controller's server half sees each arrival and may shed a new request with a 503; a message
 * that finds `buffer` messages in the server is lost and counted. The cost is fixed when service
 * starts, after matching again, so a copy queued behind its original costs a retransmission.
 *
 * The virtual CPU keeps nominal time: a service starts when the previous one ended (or at the
 * arrival, if later), not when the loop got round to it, so a busy loop costs no capacity. A
 * message of zero cost is handled at once from the receive buffer, without a copy.
 */
#include <stdlib.h>
#include <string.h>

#include "node_int.h"
#include "osn/err.h"

/* The kind of message r for the server now: a request matching one of our server
 * transactions is a copy. */
static int msg_kind(struct node *n, const struct rmsg *r)
{
    return osn_elem_kind(&r->m, osn_elem_may_be_copy(&r->m) &&
                                        (ntx_find(n, OSN_SIP_SERVER, r->pm, &r->m) ||
                                         kept_find(n, OSN_SIP_SERVER, r->pm, &r->m) != KEPT_NONE));
}

void qmsg_free(struct node *n, struct qmsg *q)
{
    if (q->pending)
        pending_del(&n->pending, q->pending);
    free(q->rx.kept);
    free(q);
}

/* Handles message r now (a new request's transaction may take r->kept). */
static void serve_now(struct node *n, struct rmsg *r, const struct osn_elem_item *shed)
{
    const struct osn_sip_msg *m = &r->m;
    struct osn_sip_out o;
    uint32_t k;
    if (m->status) {
        /* RFC 7339 5.2, 5.10: the feedback of a next hop, in our Via, to its own client half:
         * the server the transaction went to, else the next hop the datagram came from (a late
         * answer of a transaction that has ended, fed as the simulator feeds it). A datagram
         * from anyone else feeds nothing: on the wire a stranger's forged oc=100 would shed
         * every call (the simulator's responses come from its next hops only). */
        struct ntx *x = ntx_find(n, OSN_SIP_CLIENT, r->pm, m);
        k = x ? KEPT_NONE : kept_find(n, OSN_SIP_CLIENT, r->pm, m);
        int hop = x ? x->hop : k != KEPT_NONE ? n->kept.rec[k].hop : hops_index(n, &r->from);
        if (hops_cli(n, hop))
            osn_proxy_on_feedback(hops_cli(n, hop), n->now, &r->pm->via[0].oc);
        if (k != KEPT_NONE) {
            kept_recv(n, k, r);
            return;
        }
        if (!x) {
            n->st.stray++; /* a stateful proxy answers what it forwarded; nothing else */
            return;
        }
        if (m->status >= 200 && ntx_set_final(n, x, r) != 0) {
            n->err = OSN_ENOMEM;
            return;
        }
        if (osn_sip_txn_recv(&n->sip, &x->t, m, n->now, &o) == 0)
            ntx_apply(n, x, &o, r);
        return;
    }
    struct ntx *x = ntx_find(n, OSN_SIP_SERVER, r->pm, m);
    if (x) {
        if (m->method != OSN_SIP_ACK)
            n->st.retrans_absorbed++;
        if (osn_sip_txn_recv(&n->sip, &x->t, m, n->now, &o) == 0)
            ntx_apply(n, x, &o, r);
    } else if ((k = kept_find(n, OSN_SIP_SERVER, r->pm, m)) != KEPT_NONE) {
        if (m->method != OSN_SIP_ACK)
            n->st.retrans_absorbed++;
        kept_recv(n, k, r);
    } else if (m->method == OSN_SIP_ACK) {
        tu_stray_ack(n, r);
    } else {
        tu_new_request(n, r, shed);
    }
}

static void serve(struct node *n, struct rmsg *r, const struct osn_elem_item *shed)
{
    ntx_hold(n);
    serve_now(n, r, shed);
    ntx_unhold(n);
}

/* Serves queued messages while the virtual CPU is free: the next completion is a timer. */
static void start_service(struct node *n)
{
    struct osn_elem_item *it;
    int fifo;

    while ((it = osn_elem_server_next(&n->server, n->now, &fifo))) {
        struct qmsg *q = OSN_CONTAINER_OF(it, struct qmsg, item);
        /* Matched again at service, on the parse kept since its arrival: a copy queued behind
         * its original finds the original's transaction now. */
        if (fifo == 1 && it->ckind != OSN_CTL_MSG_RESPONSE_RETX) {
            struct ntx *x = q->rx.m.status ? NULL : ntx_find(n, OSN_SIP_SERVER, q->rx.pm, &q->rx.m);
            uint32_t k = x || q->rx.m.status ? KEPT_NONE
                                             : kept_find(n, OSN_SIP_SERVER, q->rx.pm, &q->rx.m);
            const struct kept *kr = k != KEPT_NONE ? &n->kept.rec[k] : NULL;
            if (osn_elem_server_discard(&n->server, n->now, it,
                                        x    ? x->t0
                                        : kr ? kr->t0
                                             : it->t_arr,
                                        x ? x->t.has_resp : kr && kr->status)) {
                qmsg_free(n, q);
                continue;
            }
        }
        if (!it->reject)
            it->kind = (uint8_t)msg_kind(n, &q->rx);
        double start = n->cpu_t > it->t_arr ? n->cpu_t : it->t_arr;
        n->cpu_t = start + n->cfg->cost[it->kind];
        osn_elem_server_begin(&n->server, it);
        if (timers_push(&n->timers, n->cpu_t, TM_SERVICE, NULL, ++n->service_gen) != 0)
            n->err = OSN_ENOMEM;
    }
}

void node_service_done(struct node *n)
{
    /* The service ends at its nominal end, n->cpu_t, not when the loop got round to it: the
     * busy time, the queue's area and the controller's view of waits and departures are then
     * the virtual CPU's, as in the simulator. Not before an event the server has already seen
     * (an arrival the loop handled late), so that its time and the controller's never go
     * back. */
    double end = n->cpu_t > n->server.t_last ? n->cpu_t : n->server.t_last;
    struct osn_elem_item *it = osn_elem_server_depart(&n->server, end < n->now ? end : n->now);
    struct qmsg *q = OSN_CONTAINER_OF(it, struct qmsg, item);
    serve(n, &q->rx, it->reject ? it : NULL);
    qmsg_free(n, q);
    start_service(n);
}

/* A malformed datagram (parsed in pm): 400 (or 505) when it can be answered, else dropped. */
static void malformed(struct node *n, const struct osn_sip_wire *pm, int verdict,
                      const union node_addr *from, bool tcp)
{
    if (verdict != OSN_SIP_WIRE_ANSWER) {
        n->st.bad_dropped++;
        return;
    }
    struct osn_sip_reply r = {.status = pm->err.answer, .retry_after = -1};
    int len = osn_sip_wire_print_reply(n->obuf, sizeof n->obuf, pm, &r);
    if (len > 0) {
        node_send(n, from, tcp, n->obuf, (size_t)len);
        n->st.bad_answered++;
    } else {
        n->st.bad_dropped++;
    }
}

/* The kind of message r on arrival; *again whether a response is a copy of one received before
 * (the downstream resent it). */
static int arrival_kind(struct node *n, const struct rmsg *r, bool *again)
{
    const struct osn_sip_msg *m = &r->m;
    if (m->status) {
        struct ntx *x = n->srv ? ntx_find(n, OSN_SIP_CLIENT, r->pm, m) : NULL;
        uint32_t k = n->srv && !x ? kept_find(n, OSN_SIP_CLIENT, r->pm, m) : KEPT_NONE;
        *again = x ? x->t.has_resp && x->t.resp.status == m->status
                   : k != KEPT_NONE && n->kept.rec[k].status == m->status;
        return OSN_ELEM_K_RESP;
    }
    if (m->method == OSN_SIP_INVITE)
        n->st.invites_in++;
    /* Also a copy: one whose original still waits here, without a transaction yet (the node's
     * record of requests kept ends with their service; the simulator's lasts the call). */
    return osn_elem_kind(m, osn_elem_may_be_copy(m) &&
                                    (ntx_find(n, OSN_SIP_SERVER, r->pm, m) ||
                                     kept_find(n, OSN_SIP_SERVER, r->pm, m) != KEPT_NONE ||
                                     pending_has(&n->pending, pending_key(m))));
}

/* The per-source budget (node.per_source_rate): whether new request r goes on. One
 * over its source's budget gets a stateless 503 (no transaction: nothing resends it) the first
 * time its bucket is dry, else nothing (osn_elem_budget_take decides). */
static bool within_budget(struct node *n, const struct rmsg *r)
{
    const union node_addr *from = &r->from;
    if (n->cfg->per_source_rate <= 0)
        return true;
    if (!n->budget && !(n->budget = calloc(BUDGET_SLOTS, sizeof *n->budget)))
        return true; /* no memory for it: fail open, as a slot taken by another source does */
    uint64_t a;
    if (from->sa.sa_family == AF_INET6) { /* its /64 (struct budget_slot) */
        memcpy(&a, &from->v6.sin6_addr, sizeof a);
        a = (a * 0x9e3779b97f4a7c15ULL) >> 1 | 1ULL << 63;
    } else {
        a = from->v4.sin_addr.s_addr;
    }
    struct budget_slot *b = &n->budget[((uint32_t)a ^ (uint32_t)(a >> 32)) * 0x9e3779b1u >> 16 &
                                       (BUDGET_SLOTS - 1)];
    if (b->addr != a || !b->b.used)
        *b = (struct budget_slot){.addr = a};
    switch (osn_elem_budget_take(&b->b, n->now, n->cfg->per_source_rate)) {
    case OSN_ELEM_BUDGET_PASS:
        return true;
    case OSN_ELEM_BUDGET_503:
        tu_reply(n, r->pm, from, r->tcp, 503, 1);
        break;
    case OSN_ELEM_BUDGET_DROP:
        break;
    }
    n->st.over_budget++;
    return false;
}

/* Queues message r for the server's virtual CPU, its parse packed with its bytes; NULL without
 * memory. */
static struct qmsg *queued(struct node *n, const struct rmsg *r)
{
    struct qmsg *q = malloc(sizeof *q);
    size_t size = osn_sip_wire_packed_size(r->pm);
    void *mem = q ? ntx_block(n, size) : NULL; /* a transaction may take it (ntx_set_req) */
    if (!mem) {
        free(q);
        return NULL;
    }
    q->item = (struct osn_elem_item){0};
    q->pending = 0;
    q->rx = *r;
    q->rx.kept = osn_sip_wire_pack(mem, r->pm);
    q->rx.kept_size = size;
    q->rx.pm = q->rx.kept;
    return q;
}

void node_message(struct node *n, const char *buf, size_t len, const union node_addr *from,
                  bool tcp)
{
    /* The one parse of this datagram. Its room is large (osn/sip_wire.h) but only what the
     * message fills is written; what outlives this call is packed (queued(), ntx_set_req). */
    struct osn_sip_wire pm;
    struct rmsg r = {.pm = &pm, .from = *from, .tcp = tcp};
    const struct osn_sip_msg *m = &r.m;
    if (!tcp) /* a message over TCP is counted by tcp.c (tcp_msgs_in) */
        n->st.datagrams_in++;
    int v = osn_sip_wire_parse_as(&pm, buf, len, parse_role(n));
    if (v != OSN_SIP_WIRE_ACCEPT) {
        malformed(n, &pm, v, from, tcp);
        return;
    }
    if (osn_sip_wire_to_txn(&pm, &r.m) != 0 ||
        (m->status && !is_proxy(n) && !(m->method == OSN_SIP_BYE && uas_sends_bye(n))) ||
        (!m->status && is_uac(n) && m->method != OSN_SIP_BYE)) {
        /* A UAS sends no requests but a BYE (hangup.c): no other
         * response is for it. The load generator's calls take no requests from the other side
         * but the callee's BYE (gen.c): the others are dropped, counted. */
        n->st.stray++;
        return;
    }
    if (m->status == 0 && m->method != OSN_SIP_ACK && !within_budget(n, &r))
        return;
    bool again = false;
    int kind = arrival_kind(n, &r, &again);
    enum osn_ctl_msg ck = osn_elem_ctl_msg(kind, m->method, again);
    bool shed_able = m->status == 0 && m->method != OSN_SIP_ACK;
    struct osn_elem_item *evicted;
    if (n->cfg->cost[kind] <= 0) { /* free work: no queue, no controller, no copy */
        serve(n, &r, NULL);
        return;
    }
    struct qmsg *q = queued(n, &r);
    if (!q) {
        n->st.dropped++;
        return;
    }
    switch (osn_elem_server_arrive(&n->server, n->now, &q->item, kind, ck, shed_able,
                                   (m->oc.flags & OSN_SIP_OC_PRESENT) != 0, &evicted)) {
    case OSN_ELEM_HANDLE_NOW: /* a 503 that costs nothing */
        serve(n, &q->rx, q->item.reject ? &q->item : NULL);
        qmsg_free(n, q);
        return;
    case OSN_ELEM_DROPPED:
        n->st.dropped++;
        qmsg_free(n, q);
        return;
    case OSN_ELEM_QUEUED:
        if (evicted) {
            n->st.dropped++;
            qmsg_free(n, OSN_CONTAINER_OF(evicted, struct qmsg, item));
        }
        if ((kind == OSN_ELEM_K_INVITE || kind == OSN_ELEM_K_BYE || kind == OSN_ELEM_K_CANCEL) &&
            pending_add(&n->pending, pending_key(m)) == 0)
            q->pending = pending_key(m);
        if (!n->server.cur)
            start_service(n);
        return;
    }
}
