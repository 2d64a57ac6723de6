/*
 * The transaction users of the simulated elements: the simulator's side of osn/elem.h.
 *
 * When a transaction passes something up (a new request, a response, an ACK, a timeout), the
 * element code decides what the element does (osn_proxy_*, osn_uas_*, osn_uac_*), and this file
 * carries it out with the simulator's objects: the call's per-hop transactions stand for the
 * pairing a real proxy keeps between its server and client transactions, branches are derived
 * from the call, and the UAC's outcomes go into the run's totals.
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
    };
    s->tr.outcome[outcome] += 1;
    if (!obs(s))
        return;
    s->tot[slot[outcome]] += 1;
    if (!c->uac.got100) /* left out of the response delay: counted here instead */
        s->tot[OSN__NT_NO_TRYING] += 1;
    if (outcome != OSN_UAC_GOOD && c->admitted)
        s->tot[OSN__NT_ADMIT_FAIL] += 1;
}

/* One delay sample into the histogram at tot[hist]. */
static void hist_add(struct net *s, int hist, double d)
{
    int b = d < 2.0   ? (int)(d * 1000)
            : d < 64. ? OSN__NET_HB_FINE + (int)((d - 2.0) * 10)
                      : OSN__NET_HB - 1;
    if (b < 0)
        b = 0;
    if (b >= OSN__NET_HB)
        b = OSN__NET_HB - 1;
    s->tot[hist + b] += 1;
}

static void setup_sample(struct net *s, double d)
{
    if (s->trace)
        osn__net_trace_setup(s, d);
    if (!obs(s))
        return;
    s->tot[OSN__NT_SETUP_N] += 1;
    s->tot[OSN__NT_SETUP_SUM] += d;
    hist_add(s, OSN__NT_HIST, d);
}

/* INVITE -> first 100 Trying at the UAC (the PRSM papers' response delay). */
static void trying_sample(struct net *s, double d)
{
    if (!obs(s))
        return;
    s->tot[OSN__NT_TRYING_N] += 1;
    s->tot[OSN__NT_TRYING_SUM] += d;
    hist_add(s, OSN__NT_TRYING_HIST, d);
}

/* The UAS answers a new request at once and, for an INVITE, resends the 2xx until the ACK. */
static void uas_request(struct net *s, struct ntxn *w, bool inv)
{
    struct call *c = w->call;
    int status[2], n = osn_uas_answers(w->t.req.method, status);
    double at;

    for (int i = 0; i < n; i++)
        osn__net_respond(s, w, status[i], -1);
    if (inv && osn_uas_2xx_start(&c->uas, s->q.now, &s->cfg->sip, &at)) {
        c->refs++; /* the timer's */
        osn__net_sched(s, &c->rtx, at, NULL);
    }
}

/* A proxy's TU takes a new request: forward it, shed it with 503, or drop a late copy. */
static void proxy_request(struct net *s, struct ntxn *w, bool inv)
{
    struct element *el = &s->elems[txn_elem(w)];
    struct call *c = w->call;
    int h = txn_hop(w);
    uint8_t *fw = inv ? &c->fwd : &c->bfwd;

    switch (osn_proxy_on_request(el->cli, s->q.now, w->t.req.method, (*fw >> h) & 1u)) {
    case OSN_PROXY_LATE_COPY:
        osn_sip_txn_abort(&el->sip, &w->t);
        osn__net_txn_free(s, w);
        return;
    case OSN_PROXY_SHED_503:
        *fw |= (uint8_t)(1u << h);
        s->tr.sent_503 += 1;
        osn__net_respond(s, w, 503, -1);
        return;
    case OSN_PROXY_FORWARD:
        break;
    }
    *fw |= (uint8_t)(1u << h); /* forwarded(c, h, inv) is now w */
    if (inv && txn_elem(w) == s->core) {
        c->admitted = true;
        if (obs(s))
            s->tot[OSN__NT_ADMIT] += 1;
    }
    struct osn_sip_msg req;
    osn_proxy_forward_request(&w->t.req, branch(c, h + 1, inv ? B_INVITE : B_BYE), &req);
    osn__net_start_client(s, txn_elem(w), c, h + 1, &req);
}

static void on_server_tu(struct net *s, struct ntxn *w, const struct osn_sip_out *o)
{
    struct element *el = &s->elems[txn_elem(w)];
    struct call *c = w->call;
    bool inv = w->t.req.method == OSN_SIP_INVITE;

    if (o->tu == OSN_SIP_TU_REQUEST) {
        if (el->role == R_UAS) {
            uint8_t *fw = inv ? &c->fwd : &c->bfwd;
            if ((*fw >> txn_hop(w)) & 1u) { /* a late copy after its transaction ended */
                osn_sip_txn_abort(&el->sip, &w->t);
                osn__net_txn_free(s, w);
                return;
            }
            *fw |= (uint8_t)(1u << txn_hop(w));
            uas_request(s, w, inv);
        } else {
            proxy_request(s, w, inv);
        }
    } else if (o->tu == OSN_SIP_TU_ACK && el->role == R_UAS) {
        c->uas.acked = true;
    } else if (o->tu == OSN_SIP_TU_ACK && el->role == R_PROXY) {
        /* RFC 6026 7.1: the ACK of a 2xx passes the proxy's TU, which forwards it. */
        struct osn_sip_msg ack;
        osn_proxy_forward_request(o->msg, branch(c, txn_hop(w) + 1, B_ACK), &ack);
        osn__net_transmit(s, txn_elem(w), c, txn_hop(w) + 1, &ack);
    }
}

/* A unit-mean exponential that depends only on the call (its uid, numbered in order of arrival)
 * and the replication's hold key: drawn in order of connection from a stream, a call's hold
 * would change with every call that connected or failed before it, which differs between
 * controls. splitmix64 of key ^ uid is a bijection of the uid, so calls never share a value. */
static double hold_exp1(const struct net *s, const struct call *c)
{
    uint64_t x = s->hold_key ^ c->uid;
    uint64_t h = osn_splitmix64(&x);
    return -log((double)((h >> 11) + 1) * 0x1.0p-53);
}

/* The UAC's INVITE transaction: setup delay, ACK of the 2xx, outcome, then the hold time. */
static void uac_invite_event(struct net *s, struct ntxn *w, const struct osn_sip_out *o)
{
    struct call *c = w->call;
    struct osn_uac_step st;

    osn_uac_on_invite_event(&c->uac, s->q.now, s->tb, o->tu,
                            o->tu == OSN_SIP_TU_RESPONSE ? o->msg->status : 0, &st);
    if (st.trying)
        trying_sample(s, st.trying_delay);
    if (st.setup)
        setup_sample(s, st.setup_delay);
    if (st.ack) {
        struct osn_sip_msg ack;
        osn_uac_ack(&w->t.req, branch(c, 0, B_ACK), o->msg->to_tag, &ack);
        osn__net_transmit(s, txn_elem(w), c, 0, &ack);
    }
    if (st.outcome != OSN_UAC_PENDING)
        osn__net_outcome(s, c, st.outcome);
    if (st.connected) {
        c->refs++; /* the hold timer's */
        double hold = s->cfg->src.hold * hold_exp1(s, c);
        osn__net_at(s, &c->hold, s->q.now + hold);
    }
}

/* A proxy's client transaction: relay the response upstream, or 408 on a timeout. */
static void proxy_client_event(struct net *s, struct ntxn *w, const struct osn_sip_out *o)
{
    struct element *el = &s->elems[txn_elem(w)];
    bool inv = w->t.req.method == OSN_SIP_INVITE;
    struct ntxn *up = forwarded(w->call, txn_hop(w) - 1, inv);
    int status = o->tu == OSN_SIP_TU_RESPONSE ? o->msg->status : 0;

    switch (osn_proxy_on_client_event(el->cli, s->q.now, w->t0, o->tu, status,
                                      up ? up->t.state : OSN_SIP_NOSTATE)) {
    case OSN_PROXY_RELAY:
        osn__net_respond(s, up, status, o->msg->retry_after);
        break;
    case OSN_PROXY_408:
        osn__net_respond(s, up, 408, -1);
        break;
    case OSN_PROXY_NOTHING:
        break;
    }
}

void osn__net_on_tu(struct net *s, struct ntxn *w, const struct osn_sip_out *o)
{
    if (w->t.role == OSN_SIP_SERVER)
        on_server_tu(s, w, o);
    else if (s->elems[txn_elem(w)].role != R_SRC)
        proxy_client_event(s, w, o);
    else if (w->t.req.method == OSN_SIP_INVITE) /* a BYE's end asks nothing more of the UAC */
        uac_invite_event(s, w, o);
}

void osn__net_2xx_timer(struct net *s, struct call *c)
{
    struct ntxn *w = forwarded(c, s->nhop - 1, true);
    double at;

    if (osn_uas_2xx_fire(&c->uas, s->q.now, &s->cfg->sip, w != NULL, &at)) {
        osn__net_respond(s, w, 200, -1);
        osn__net_sched(s, &c->rtx, at, NULL);
        return;
    }
    osn__net_call_unref(s, c); /* the reference the timer had */
}
