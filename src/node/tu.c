/*
 * The node's transaction user: the decisions of osn/elem.h (the same the network simulator
 * makes), carried out as SIP text.
 *
 * Proxy (edge, core): a new request is forwarded to the next hop with our Via on top (a fresh
 * branch, the client half's oc offer) and Max-Forwards - 1, or answered 503 when the client half
 * sheds it, 483 when Max-Forwards is 0; a response of the next hop goes upstream with our Via
 * removed (the server half's feedback in the new top Via), a timeout of the next hop becomes a
 * 408 upstream; the ACK of a 2xx is forwarded statelessly with a branch derived from its own.
 * UAS: 180 and 200 for an INVITE, 200 for anything else, the 2xx resent until the ACK.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "node_int.h"
#include "osn/err.h"

/* "z9hG4bK" + 16 hex digits: the magic cookie (RFC 3261 8.1.1.7) and a unique number. */
#define BRANCH_LEN (7 + 16)

static void branch_text(char out[BRANCH_LEN + 1], uint64_t v)
{
    snprintf(out, BRANCH_LEN + 1, "z9hG4bK%016" PRIx64, v);
}

/* A To tag of ours for the call of request x: the same for every response of the call. */
static void to_tag_text(char out[17], const struct ntx *x)
{
    snprintf(out, 17, "%016" PRIx64, osn_sipmsg_hash(x->key.call_id.p, x->key.call_id.n) | 1);
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
    ntx_apply(n, x, &o);
}

void tu_respond(struct node *n, struct ntx *x, int status, int retry_after)
{
    char tag[17];
    struct osn_sip_reply r = {.status = (uint16_t)status, .retry_after = retry_after};
    if (osn_sipmsg_parse(&n->pm2, x->req, x->req_len) != OSN_SIPMSG_ACCEPT)
        return;
    to_tag_text(tag, x);
    r.to_tag = (struct osn_span){tag, 16};
    feedback(n, &r.oc);
    int len = osn_sipmsg_print_reply(n->obuf, sizeof n->obuf, &n->pm2, &r);
    struct osn_sip_msg m = osn_elem_response(&x->t.req, status, retry_after);
    if (status == 503)
        n->st.rejected_503++;
    else if (status == 408)
        n->st.timeouts_408++;
    else if (status == 483)
        n->st.too_many_hops++;
    respond_bytes(n, x, len, &m);
}

/* Forwards the request of server transaction x on a new client transaction. */
static void forward(struct node *n, struct ntx *x)
{
    char branch[BRANCH_LEN + 1];
    struct osn_sip_fwd f = {
            .transport = {"UDP", 3}, .host = {n->host, strlen(n->host)}, .port = n->port};
    branch_text(branch, n->branch_salt ^ (++n->branch_seq * 0x9e3779b97f4a7c15ULL));
    f.branch = (struct osn_span){branch, BRANCH_LEN};
    if (n->cli)
        osn_elem_oc_offer(&f.oc);
    if (osn_sipmsg_parse(&n->pm2, x->req, x->req_len) != OSN_SIPMSG_ACCEPT)
        return;
    if (n->pm2.max_forwards == 0) { /* RFC 3261 16.3 step 3 */
        tu_respond(n, x, 483, -1);
        return;
    }
    int len = osn_sipmsg_print_forward(n->obuf, sizeof n->obuf, &n->pm2, &f);
    struct ntx *y = len > 0 ? ntx_new(n) : NULL;
    struct osn_sip_msg m;
    struct osn_sip_out o;
    if (!y || osn_sipmsg_parse(&n->pm2, n->obuf, (size_t)len) != OSN_SIPMSG_ACCEPT ||
        ntx_set_req(n, y, n->obuf, (size_t)len, &n->pm2) != 0 ||
        osn_sipmsg_to_txn(&n->pm2, &m) != 0 ||
        osn_sip_ctxn_start(&n->sip, &y->t, &m, n->now, &o) != 0) {
        ntx_free(n, y);
        tu_respond(n, x, 500, -1);
        return;
    }
    x->peer = y;
    y->peer = x;
    if (x->t.req.method == OSN_SIP_INVITE)
        n->st.calls_forwarded++;
    ntx_apply(n, y, &o);
}

/* The UAS answers at once; for an INVITE it resends the 2xx until the ACK. */
static void uas_answer(struct node *n, struct ntx *x)
{
    int status[2], k = osn_uas_answers(x->t.req.method, status);
    bool inv = x->t.req.method == OSN_SIP_INVITE;
    double at;
    if (inv) {
        n->st.calls_forwarded++;
        n->st.calls_ok++;
    } else {
        n->st.bye_ok++;
    }
    for (int i = 0; i < k; i++)
        tu_respond(n, x, status[i], -1);
    if (inv && x->live && osn_uas_2xx_start(&x->uas, n->now, &n->cfg->sip, &at) &&
        dialogs_put(&n->dialogs, x) == 0)
        ntx_arm_2xx(n, x, at);
}

void tu_2xx_timer(struct node *n, struct ntx *x)
{
    double at;
    bool alive = x->live && x->t.state == OSN_SIP_ACCEPTED;
    if (osn_uas_2xx_fire(&x->uas, n->now, &n->cfg->sip, alive, &at)) {
        /* RFC 6026 7.1: in Accepted the TU's 2xx retransmissions pass the transaction. */
        struct osn_sip_msg m = osn_elem_response(&x->t.req, 200, -1);
        struct osn_sip_out o;
        if (osn_sip_stxn_respond(&n->sip, &x->t, &m, n->now, &o) == 0)
            ntx_apply(n, x, &o);
        if (x->live)
            ntx_arm_2xx(n, x, at);
    }
}

void tu_new_request(struct node *n, const struct osn_sip_msg *m, const struct sockaddr_in *from,
                    const char *buf, size_t len, bool shed)
{
    bool inv = m->method == OSN_SIP_INVITE;
    bool room = n->live < n->cfg->max_transactions && n->held + len <= NODE_HELD_MAX;
    struct ntx *x = room ? ntx_new(n) : NULL;
    if (!x) {
        /* The cap: a 503 printed statelessly from the request (still in n->pm). With no
         * transaction to absorb them, the request's copies are refused again, each counted. */
        struct osn_sip_reply r = {.status = 503, .retry_after = 1};
        int k = osn_sipmsg_print_reply(n->obuf, sizeof n->obuf, &n->pm, &r);
        if (k > 0)
            udp_send(n, from, n->obuf, (size_t)k);
        n->st.refused_at_cap++;
        return;
    }
    if (inv)
        n->st.calls_in++;
    else if (m->method == OSN_SIP_BYE)
        n->st.bye_in++;
    x->from = *from;
    struct osn_sip_out o;
    if (ntx_set_req(n, x, buf, len, &n->pm) != 0 ||
        osn_sip_stxn_start(&n->sip, &x->t, m, n->now, &o) != 0) {
        /* Its key is taken by a transaction whose text differs (a hash collision): dropped. */
        n->st.stray++;
        ntx_free(n, x);
        return;
    }
    if (shed) {
        /* The server half shed it: 503 at once, without the TU and without a 100 Trying. */
        o.tu = OSN_SIP_TU_NONE;
        o.nsend = 0;
        ntx_apply(n, x, &o);
        if (x->live)
            tu_respond(n, x, 503, -1);
        return;
    }
    ntx_apply(n, x, &o);
}

/* Forwards the ACK of a 2xx (parsed in n->pm) statelessly, RFC 3261 16.11: its branch is a
 * function of the incoming one, so a retransmitted ACK gets the same. */
static void forward_ack(struct node *n)
{
    char branch[BRANCH_LEN + 1];
    const struct osn_sip_via *v = &n->pm.via[0];
    struct osn_sip_fwd f = {
            .transport = {"UDP", 3}, .host = {n->host, strlen(n->host)}, .port = n->port};
    branch_text(branch, osn_sipmsg_hash(v->branch.p, v->branch.n) ^ n->branch_salt);
    f.branch = (struct osn_span){branch, BRANCH_LEN};
    int len = osn_sipmsg_print_forward(n->obuf, sizeof n->obuf, &n->pm, &f);
    if (len > 0) {
        udp_send(n, &n->next_hop, n->obuf, (size_t)len);
        n->st.acks_forwarded++;
    } else {
        n->st.stray++; /* Max-Forwards 0: an ACK gets no answer */
    }
}

void tu_stray_ack(struct node *n, const struct osn_sip_msg *m)
{
    if (is_proxy(n)) {
        forward_ack(n);
        return;
    }
    struct ntx *x = dialogs_get(&n->dialogs, m->call_id, n->pm.call_id);
    if (x)
        x->uas.acked = true;
    else
        n->st.stray++;
}

/* A proxy's client transaction: relay the response upstream, or 408 on a timeout. */
static void client_event(struct node *n, struct ntx *y, const struct osn_sip_out *o)
{
    struct ntx *up = y->peer;
    int status = o->tu == OSN_SIP_TU_RESPONSE ? o->msg->status : 0;
    switch (osn_proxy_on_client_event(n->cli, n->now, y->t0, o->tu, status,
                                      up && up->live ? up->t.state : OSN_SIP_NOSTATE)) {
    case OSN_PROXY_RELAY: {
        /* The response is the datagram being handled (n->pm). */
        struct osn_sip_oc oc;
        feedback(n, &oc);
        int len = osn_sipmsg_print_response_fwd_oc(n->obuf, sizeof n->obuf, &n->pm, &oc);
        struct osn_sip_msg r = osn_elem_response(&up->t.req, status, o->msg->retry_after);
        r.to_tag = o->msg->to_tag;
        bool inv = up->t.req.method == OSN_SIP_INVITE;
        bool first_final = status >= 200 &&
                           (up->t.state == OSN_SIP_TRYING || up->t.state == OSN_SIP_PROCEEDING);
        if (first_final && status < 300 && inv)
            n->st.calls_ok++;
        else if (first_final && status < 300)
            n->st.bye_ok++;
        respond_bytes(n, up, len, &r);
        break;
    }
    case OSN_PROXY_408:
        tu_respond(n, up, 408, -1);
        break;
    case OSN_PROXY_NOTHING:
        break;
    }
}

void tu_event(struct node *n, struct ntx *x, const struct osn_sip_out *o)
{
    if (x->t.role == OSN_SIP_CLIENT) {
        client_event(n, x, o);
        return;
    }
    if (o->tu == OSN_SIP_TU_REQUEST) {
        if (!is_proxy(n)) {
            uas_answer(n, x);
            return;
        }
        switch (osn_proxy_on_request(n->cli, n->now, x->t.req.method, false)) {
        case OSN_PROXY_SHED_503:
            tu_respond(n, x, 503, -1);
            return;
        case OSN_PROXY_FORWARD:
        case OSN_PROXY_LATE_COPY: /* a new transaction is never a late copy here */
            forward(n, x);
            return;
        }
    } else if (o->tu == OSN_SIP_TU_ACK) {
        if (is_proxy(n))
            forward_ack(n); /* RFC 6026 7.1: the ACK of a 2xx passes the TU */
        else
            x->uas.acked = true;
    }
}
