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
 * models no CANCEL (its UAC never gives up), no unknown BYE, no routing loop, no message sizes and
 * no source addresses, so the element's 481, 482, 513 and per-source budget never happen here
 * either.
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
    s->tot[OSN__NT_ENDED] += 1;
    s->tot[OSN__NT_ENDED_ATTEMPTS] += 1 + c->uac.retries;
    if (outcome == OSN_UAC_GOOD)
        s->tot[OSN__NT_GOOD_K0 + (c->uac.retries < 3 ? c->uac.retries : 3)] += 1;
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

/* Carries out the element's actions at element `id` for call c on hop `hop`, on server
 * transaction w: the request's, or for a client event the one upstream of it (an ACK's two
 * actions are carried out by osn__net_on_ack, which has the ACK). Each action's count goes to the
 * element's counters (the node's figures); the 503s also go to the trace. */
static void act(struct net *s, int id, struct call *c, int hop, struct ntxn *w,
                const struct osn_elem_actions *a)
{
    for (int i = 0; i < a->n; i++) {
        const struct osn_elem_action *x = &a->a[i];
        s->elems[id].count[x->count]++;
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
            if (inv && id == s->core) { /* the core's admissions: a measurement */
                c->admitted = true;
                if (obs(s))
                    s->tot[OSN__NT_ADMIT] += 1;
            }
            osn_proxy_forward_request(&w->t.req, branch(c, hop + 1, inv ? B_INVITE : B_BYE), &req);
            osn__net_start_client(s, id, c, hop + 1, &req);
            break;
        }
        case OSN_ELEM_A_DROP:
            osn_sip_txn_abort(&s->elems[id].sip, &w->t);
            osn__net_txn_free(s, w);
            return;
        case OSN_ELEM_A_FORWARD_ACK: /* never here: osn__net_on_ack carries out an ACK's */
        case OSN_ELEM_A_ACKED:
            break;
        case OSN_ELEM_A_ARM_2XX:
            c->refs++; /* the timer's */
            osn__net_sched(s, &c->rtx, a->at, NULL);
            break;
        case OSN_ELEM_A_COUNT:
        /* A CANCEL's: the simulator's UAC never cancels (no patience yet), so no CANCEL reaches
         * osn_elem_on_cancel here. */
        case OSN_ELEM_A_CANCEL_BRANCH:
        case OSN_ELEM_A_RESPOND_INVITE:
            break;
        }
    }
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
        osn_proxy_forward_request(m, branch(c, hop + 1, B_ACK), &ack);
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

static void on_server_tu(struct net *s, struct ntxn *w, const struct osn_sip_out *o)
{
    struct call *c = w->call;
    struct osn_elem_actions a;

    if (o->tu == OSN_SIP_TU_REQUEST) {
        uint8_t *fw = w->t.req.method == OSN_SIP_INVITE ? &c->fwd : &c->bfwd;
        uint8_t bit = (uint8_t)(1u << txn_hop(w));
        /* The call's record of the requests handled at each hop outlives their transactions;
         * the simulator's messages carry no Max-Forwards (-1: never checked). Its UAC sends a
         * BYE only for a call the UAS answered and its routes never loop, so the UAS always
         * knows the call (no 481) and no request loops (no 482). */
        osn_elem_on_request(&s->elems[txn_elem(w)].tu, s->q.now, w->t.req.method, -1,
                            (*fw & bit) != 0, true, false, &c->uas, &a);
        *fw |= bit; /* forwarded(c, h, inv) is now w */
        act(s, txn_elem(w), c, txn_hop(w), w, &a);
    } else if (o->tu == OSN_SIP_TU_ACK) {
        osn__net_on_ack(s, txn_elem(w), c, txn_hop(w), o->msg);
    }
}

/* A unit-mean exponential that depends only on the call (its uid, numbered in order of arrival)
 * and the replication's hold key: drawn in order of connection from a stream, a call's hold
 * would change with every call that connected or failed before it, which differs between
 * controls. splitmix64 of key ^ uid is a bijection of the uid, so calls never share a value. */
static double hold_exp1(const struct net *s, const struct call *c)
{
    uint64_t x = s->hold_key ^ c->origin; /* a retry's hold is its call's */
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
    if (st.outcome != OSN_UAC_PENDING &&
        !osn__net_retry_or_end(s, c, st.outcome,
                               o->tu == OSN_SIP_TU_RESPONSE ? o->msg->retry_after : -1))
        osn__net_outcome(s, c, st.outcome);
    if (st.connected) {
        c->refs++; /* the hold timer's */
        double hold = s->cfg->src.hold * hold_exp1(s, c);
        osn__net_at(s, &c->hold, s->q.now + hold);
    }
}

/* A proxy's client transaction: what the element decides, on the server transaction upstream. */
static void proxy_client_event(struct net *s, struct ntxn *w, const struct osn_sip_out *o)
{
    struct osn_elem_actions a;
    bool inv = w->t.req.method == OSN_SIP_INVITE;
    struct ntxn *up = forwarded(w->call, txn_hop(w) - 1, inv);
    bool resp = o->tu == OSN_SIP_TU_RESPONSE;

    osn_elem_on_client_event(&s->elems[txn_elem(w)].tu, s->q.now, w->t0, o->tu,
                             resp ? o->msg->status : 0, resp ? o->msg->retry_after : -1,
                             w->t.req.method, up ? up->t.state : OSN_SIP_NOSTATE, &a);
    if (a.n)
        act(s, txn_elem(w), w->call, txn_hop(w) - 1, up, &a);
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
    struct osn_elem_actions a;

    osn_elem_on_2xx_timer(&s->elems[s->uas].tu, s->q.now, &c->uas, w != NULL, &a);
    if (a.n)
        act(s, s->uas, c, s->nhop - 1, w, &a);
    osn__net_call_unref(s, c); /* the reference the timer had (ARM_2XX took a new one) */
}
