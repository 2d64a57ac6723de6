/*
 * The SIP transaction layer: each of the four RFC 3261 17 machines against the RFC timing
 * (docs/protocols.md 1.7: INVITE copies at (2^j - 1) T1, Timer B at 64 T1, non-INVITE capped at T2,
 * what a 1xx stops, D/K/I/J/L/M lifetimes), SIPp mode, absorption of retransmissions with its
 * counters, and the matching table against a linear array over 10^5 random steps and under
 * heavy collisions (backward-shift removal, growth from a hint of 0).
 *
 * The machines are driven by a tiny event loop local to this file: a sorted list of pending
 * timers (one per transaction and slot, as a driver keeps them) plus scripted messages, which
 * applies every action a transaction returns and records what was sent and when.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "osn/err.h"
#include "osn/rng.h"
#include "osn/sip.h"

/* ---- the test-local event loop ---- */

enum { EV_TIMER, EV_RECV, EV_RESPOND };

struct ev {
    double t;
    uint64_t seq;
    int kind;
    struct osn_sip_txn *txn;
    int id; /* EV_TIMER: timer id */
    struct osn_sip_msg msg;
};

#define MAXEV  64
#define MAXREC 64

struct loop {
    struct osn_sip_layer *l;
    struct ev ev[MAXEV];
    int n;
    uint64_t seq;
    /* what the transactions did */
    int nsent;
    double sent_t[MAXREC];
    struct {
        struct osn_sip_msg msg; /* a copy: the layer's sends are borrowed */
        bool retrans;
    } sent[MAXREC];
    int ntu;
    double tu_t[MAXREC];
    int tu[MAXREC];
    int tu_timer[MAXREC];
    double term_t; /* time of termination, -1 while alive */
};

static void loop_init(struct loop *lp, struct osn_sip_layer *l)
{
    memset(lp, 0, sizeof *lp);
    lp->l = l;
    lp->term_t = -1;
}

static void push(struct loop *lp, struct ev e)
{
    assert_true(lp->n < MAXEV);
    e.seq = lp->seq++;
    lp->ev[lp->n++] = e;
}

static int find_timer(const struct loop *lp, const struct osn_sip_txn *t, int slot)
{
    for (int i = 0; i < lp->n; i++)
        if (lp->ev[i].kind == EV_TIMER && lp->ev[i].txn == t &&
            osn_sip_timer_slot(lp->ev[i].id) == slot)
            return i;
    return -1;
}

static void drop(struct loop *lp, int i)
{
    lp->ev[i] = lp->ev[--lp->n];
}

/* Applies one event's actions, checking that every cancel names a timer the loop holds. */
static void apply(struct loop *lp, struct osn_sip_txn *t, double now, const struct osn_sip_out *o)
{
    for (int i = 0; i < o->nsend; i++) {
        assert_true(lp->nsent < MAXREC);
        lp->sent_t[lp->nsent] = now;
        lp->sent[lp->nsent].msg = *o->send[i].msg;
        lp->sent[lp->nsent++].retrans = o->send[i].retrans;
    }
    for (int i = 0; i < o->ntimer; i++) {
        const struct osn_sip_timer *tm = &o->timer[i];
        int k = find_timer(lp, t, tm->slot);
        assert_int_equal(tm->slot, osn_sip_timer_slot(tm->id));
        if (tm->set) {
            assert_true(tm->at >= now);
            if (k >= 0)
                drop(lp, k);
            push(lp, (struct ev){.t = tm->at, .kind = EV_TIMER, .txn = t, .id = tm->id});
        } else {
            assert_true(k >= 0);
            assert_int_equal(lp->ev[k].id, tm->id);
            drop(lp, k);
        }
    }
    if (o->tu != OSN_SIP_TU_NONE) {
        assert_true(lp->ntu < MAXREC);
        lp->tu_t[lp->ntu] = now;
        lp->tu_timer[lp->ntu] = o->timer_id;
        lp->tu[lp->ntu++] = o->tu;
    }
    if (o->terminated) {
        assert_int_equal(find_timer(lp, t, 0), -1);
        assert_int_equal(find_timer(lp, t, 1), -1);
        assert_int_equal(t->state, OSN_SIP_TERMINATED);
        lp->term_t = now;
    }
    /* The deadline the transaction reports is the least of the timers the loop holds. */
    double d = INFINITY;
    for (int s = 0; s < 2; s++) {
        int k = find_timer(lp, t, s);
        if (k >= 0)
            d = fmin(d, lp->ev[k].t);
    }
    assert_true(o->deadline == d);
}

/* Runs events in (time, seq) order up to and including `until`. */
static void run(struct loop *lp, double until)
{
    for (;;) {
        int b = -1;
        for (int i = 0; i < lp->n; i++)
            if (b < 0 || lp->ev[i].t < lp->ev[b].t ||
                (lp->ev[i].t == lp->ev[b].t && lp->ev[i].seq < lp->ev[b].seq))
                b = i;
        if (b < 0 || lp->ev[b].t > until)
            return;
        struct ev e = lp->ev[b];
        struct osn_sip_out o;
        drop(lp, b);
        if (e.kind == EV_TIMER)
            assert_int_equal(osn_sip_txn_timer(lp->l, e.txn, e.id, e.t, &o), 0);
        else if (e.kind == EV_RECV)
            assert_int_equal(osn_sip_txn_recv(lp->l, e.txn, &e.msg, e.t, &o), 0);
        else
            assert_int_equal(osn_sip_stxn_respond(lp->l, e.txn, &e.msg, e.t, &o), 0);
        apply(lp, e.txn, e.t, &o);
    }
}

static void at_recv(struct loop *lp, double t, struct osn_sip_txn *txn, struct osn_sip_msg m)
{
    push(lp, (struct ev){.t = t, .kind = EV_RECV, .txn = txn, .msg = m});
}

static void at_respond(struct loop *lp, double t, struct osn_sip_txn *txn, int status)
{
    struct osn_sip_msg r = {.status = (uint16_t)status, .to_tag = 77, .retry_after = -1};
    push(lp, (struct ev){.t = t, .kind = EV_RESPOND, .txn = txn, .msg = r});
}

static struct osn_sip_msg request(int method, uint64_t branch)
{
    return (struct osn_sip_msg){.method = (uint8_t)method,
                                .cseq = 1,
                                .retry_after = -1,
                                .call_id = 1000 + branch,
                                .branch = branch,
                                .sent_by = 5,
                                .from_tag = 9};
}

static struct osn_sip_msg response(const struct osn_sip_msg *req, int status)
{
    struct osn_sip_msg r = *req;
    r.status = (uint16_t)status;
    r.to_tag = status > 100 ? 33 : 0;
    return r;
}

/* The send times of the messages of status `status` (0: requests of `method`). */
static int sends_of(const struct loop *lp, int status, int method, double *t, bool *re)
{
    int n = 0;
    for (int i = 0; i < lp->nsent; i++) {
        const struct osn_sip_msg *m = &lp->sent[i].msg;
        if (m->status == status && (status || m->method == method)) {
            t[n] = lp->sent_t[i];
            re[n++] = lp->sent[i].retrans;
        }
    }
    return n;
}

static void assert_times(const double *got, int ngot, const double *want, int nwant)
{
    assert_int_equal(ngot, nwant);
    for (int i = 0; i < nwant; i++)
        assert_true(fabs(got[i] - want[i]) < 1e-12);
}

static void start_client(struct loop *lp, struct osn_sip_txn *t, struct osn_sip_msg req)
{
    struct osn_sip_out o;
    assert_int_equal(osn_sip_ctxn_start(lp->l, t, &req, 0, &o), 0);
    apply(lp, t, 0, &o);
}

static void start_server(struct loop *lp, struct osn_sip_txn *t, struct osn_sip_msg req)
{
    struct osn_sip_out o;
    assert_int_equal(osn_sip_stxn_start(lp->l, t, &req, 0, &o), 0);
    assert_int_equal(o.tu, OSN_SIP_TU_REQUEST);
    apply(lp, t, 0, &o);
}

/* ---- INVITE client ---- */

static void test_ict_timer_b(void **state)
{
    (void)state;
    struct osn_sip_layer l;
    struct loop lp;
    struct osn_sip_txn t = {0};
    double ts[MAXREC] = {0};
    bool re[MAXREC] = {0};
    static const double want[] = {0, 0.5, 1.5, 3.5, 7.5, 15.5, 31.5};

    assert_int_equal(osn_sip_layer_init(&l, NULL, 0), 0);
    loop_init(&lp, &l);
    start_client(&lp, &t, request(OSN_SIP_INVITE, 1));
    assert_int_equal(t.state, OSN_SIP_CALLING);
    run(&lp, 100);
    /* RFC 3261 17.1.1.2: seven copies at (2^j - 1) T1, then Timer B = 64 T1 = 32 s. */
    int n = sends_of(&lp, 0, OSN_SIP_INVITE, ts, re);
    assert_times(ts, n, want, 7);
    assert_false(re[0]);
    for (int i = 1; i < n; i++)
        assert_true(re[i]);
    assert_int_equal(lp.ntu, 1);
    assert_int_equal(lp.tu[0], OSN_SIP_TU_TIMEOUT);
    assert_int_equal(lp.tu_timer[0], OSN_SIP_TIMER_B);
    assert_true(lp.term_t == 32.0);
    assert_int_equal(t.nretrans, 6);
    assert_int_equal(l.stats.req_retrans, 6);
    assert_int_equal(l.stats.timeouts, 1);
    assert_int_equal(l.table.n, 0);
    osn_sip_layer_release(&l);
}

static void test_ict_sipp(void **state)
{
    (void)state;
    struct osn_sip_cfg c;
    struct osn_sip_layer l;
    struct loop lp;
    struct osn_sip_txn t = {0};
    double ts[MAXREC] = {0};
    bool re[MAXREC] = {0};
    static const double want[] = {0, 0.5, 1.5, 3.5, 7.5, 15.5};

    osn_sip_cfg_sipp(&c);
    assert_false(c.honor_retry_after);
    assert_int_equal(osn_sip_layer_init(&l, &c, 0), 0);
    loop_init(&lp, &l);
    start_client(&lp, &t, request(OSN_SIP_INVITE, 1));
    run(&lp, 100);
    /* SIPp: 5 retransmissions (6 sends); the call fails when the 7th copy would be due. */
    int n = sends_of(&lp, 0, OSN_SIP_INVITE, ts, re);
    assert_times(ts, n, want, 6);
    assert_int_equal(lp.ntu, 1);
    assert_int_equal(lp.tu[0], OSN_SIP_TU_TIMEOUT);
    assert_int_equal(lp.tu_timer[0], OSN_SIP_TIMER_A);
    assert_true(lp.term_t == 31.5);
    osn_sip_layer_release(&l);
}

static void test_ict_1xx_then_486(void **state)
{
    (void)state;
    struct osn_sip_layer l;
    struct loop lp;
    struct osn_sip_txn t = {0};
    double ts[MAXREC] = {0};
    bool re[MAXREC] = {0};
    static const double inv[] = {0, 0.5};
    static const double ack[] = {5, 6};
    struct osn_sip_msg req = request(OSN_SIP_INVITE, 1), busy = response(&req, 503);
    busy.retry_after = 30;

    assert_int_equal(osn_sip_layer_init(&l, NULL, 0), 0);
    loop_init(&lp, &l);
    start_client(&lp, &t, req);
    at_recv(&lp, 1.0, &t, response(&req, 100));
    run(&lp, 1.0);
    /* RFC 3261 17.1.1.2: the 1xx stops A (and B, acted on only in Calling). */
    assert_int_equal(t.state, OSN_SIP_PROCEEDING);
    assert_int_equal(lp.n, 0);
    at_recv(&lp, 5.0, &t, busy);
    at_recv(&lp, 6.0, &t, busy);
    run(&lp, 5.0);
    assert_int_equal(t.state, OSN_SIP_COMPLETED);
    run(&lp, 100);
    assert_times(ts, sends_of(&lp, 0, OSN_SIP_INVITE, ts, re), inv, 2);
    /* 300-699: ACK at once; the retransmitted 503 gets the ACK again, not the TU. */
    int n = sends_of(&lp, 0, OSN_SIP_ACK, ts, re);
    assert_times(ts, n, ack, 2);
    assert_false(re[0]);
    assert_true(re[1]);
    assert_int_equal(lp.sent[2].msg.to_tag, 33);
    assert_int_equal(lp.sent[2].msg.branch, 1);
    assert_int_equal(lp.sent[2].msg.cseq, 1);
    assert_int_equal(lp.ntu, 2); /* the 100 and the first 503 */
    assert_int_equal(lp.tu[1], OSN_SIP_TU_RESPONSE);
    assert_int_equal(t.absorbed, 1);
    assert_int_equal(l.stats.resp_absorbed, 1);
    /* Timer D = 32 s from the 503. */
    assert_true(lp.term_t == 37.0);
    osn_sip_layer_release(&l);
}

static void test_ict_retry_after_reported(void **state)
{
    (void)state;
    struct osn_sip_layer l;
    struct osn_sip_txn t = {0};
    struct osn_sip_out o;
    struct osn_sip_msg req = request(OSN_SIP_INVITE, 1), r = response(&req, 503);

    r.retry_after = 30;
    assert_int_equal(osn_sip_layer_init(&l, NULL, 0), 0);
    assert_int_equal(osn_sip_ctxn_start(&l, &t, &req, 0, &o), 0);
    assert_int_equal(osn_sip_txn_recv(&l, &t, &r, 0.1, &o), 0);
    assert_int_equal(o.tu, OSN_SIP_TU_RESPONSE);
    assert_int_equal(o.retry_after, 30);
    assert_ptr_equal(o.msg, &r);
    osn_sip_layer_release(&l);
}

static void test_ict_timer_b_kept(void **state)
{
    (void)state;
    struct osn_sip_cfg c;
    struct osn_sip_layer l;
    struct loop lp;
    struct osn_sip_txn t = {0};
    struct osn_sip_msg req = request(OSN_SIP_INVITE, 1);

    osn_sip_cfg_default(&c);
    c.timer_b_proceeding = true;
    assert_int_equal(osn_sip_layer_init(&l, &c, 0), 0);
    loop_init(&lp, &l);
    start_client(&lp, &t, req);
    at_recv(&lp, 2.0, &t, response(&req, 180));
    run(&lp, 100);
    assert_int_equal(lp.nsent, 3); /* 0, 0.5, 1.5 */
    assert_int_equal(lp.tu[1], OSN_SIP_TU_TIMEOUT);
    assert_int_equal(lp.tu_timer[1], OSN_SIP_TIMER_B);
    assert_true(lp.term_t == 32.0);
    osn_sip_layer_release(&l);
}

static void test_ict_2xx(void **state)
{
    (void)state;
    struct osn_sip_cfg c;
    struct osn_sip_layer l;
    struct loop lp;
    struct osn_sip_txn t = {0};
    struct osn_sip_msg req = request(OSN_SIP_INVITE, 1);

    assert_int_equal(osn_sip_layer_init(&l, NULL, 0), 0);
    loop_init(&lp, &l);
    start_client(&lp, &t, req);
    at_recv(&lp, 2.0, &t, response(&req, 200));
    at_recv(&lp, 2.5, &t, response(&req, 200));
    run(&lp, 2.0);
    /* RFC 6026 7.2: 2xx -> Accepted, Timer M = 64 T1; the TU ACKs, not the transaction. */
    assert_int_equal(t.state, OSN_SIP_ACCEPTED);
    run(&lp, 100);
    assert_int_equal(lp.nsent, 3); /* INVITE at 0, 0.5, 1.5; no ACK */
    assert_int_equal(lp.ntu, 2);
    assert_int_equal(lp.tu[1], OSN_SIP_TU_RESPONSE);
    assert_true(lp.term_t == 34.0);
    osn_sip_layer_release(&l);

    /* RFC 3261 without 6026: the 2xx terminates at once. */
    osn_sip_cfg_default(&c);
    c.rfc6026 = false;
    assert_int_equal(osn_sip_layer_init(&l, &c, 0), 0);
    loop_init(&lp, &l);
    start_client(&lp, &t, req);
    at_recv(&lp, 2.0, &t, response(&req, 200));
    run(&lp, 100);
    assert_true(lp.term_t == 2.0);
    osn_sip_layer_release(&l);
}

static void test_ict_transport_error(void **state)
{
    (void)state;
    struct osn_sip_layer l;
    struct osn_sip_txn t = {0};
    struct osn_sip_out o;
    struct osn_sip_msg req = request(OSN_SIP_INVITE, 1), r = response(&req, 180);

    assert_int_equal(osn_sip_layer_init(&l, NULL, 0), 0);
    assert_int_equal(osn_sip_ctxn_start(&l, &t, &req, 0, &o), 0);
    assert_int_equal(osn_sip_txn_transport_error(&l, &t, 0.1, &o), 0);
    assert_int_equal(o.tu, OSN_SIP_TU_TRANSPORT_ERROR);
    assert_true(o.terminated);
    assert_int_equal(o.ntimer, 2); /* A and B cancelled */
    assert_int_equal(l.table.n, 0);
    /* A terminated transaction takes no more events. */
    assert_int_equal(osn_sip_txn_recv(&l, &t, &r, 0.2, &o), OSN_EINVAL);
    osn_sip_layer_release(&l);
}

/* ---- non-INVITE client ---- */

static void test_nict_timer_f(void **state)
{
    (void)state;
    struct osn_sip_layer l;
    struct loop lp;
    struct osn_sip_txn t = {0};
    double ts[MAXREC] = {0};
    bool re[MAXREC] = {0};
    static const double want[] = {0, 0.5, 1.5, 3.5, 7.5, 11.5, 15.5, 19.5, 23.5, 27.5, 31.5};

    assert_int_equal(osn_sip_layer_init(&l, NULL, 0), 0);
    loop_init(&lp, &l);
    start_client(&lp, &t, request(OSN_SIP_BYE, 2));
    assert_int_equal(t.state, OSN_SIP_TRYING);
    run(&lp, 100);
    /* RFC 3261 17.1.2.2: E doubles up to T2 = 4 s; F = 64 T1 = 32 s. */
    assert_times(ts, sends_of(&lp, 0, OSN_SIP_BYE, ts, re), want, 11);
    assert_int_equal(lp.tu[0], OSN_SIP_TU_TIMEOUT);
    assert_int_equal(lp.tu_timer[0], OSN_SIP_TIMER_F);
    assert_true(lp.term_t == 32.0);
    assert_int_equal(t.nretrans, 10);
    osn_sip_layer_release(&l);

    /* SIPp: 9 retransmissions, failure when the 10th is due. */
    struct osn_sip_cfg c;
    osn_sip_cfg_sipp(&c);
    assert_int_equal(osn_sip_layer_init(&l, &c, 0), 0);
    loop_init(&lp, &l);
    start_client(&lp, &t, request(OSN_SIP_BYE, 2));
    run(&lp, 100);
    assert_times(ts, sends_of(&lp, 0, OSN_SIP_BYE, ts, re), want, 10);
    assert_int_equal(lp.tu_timer[0], OSN_SIP_TIMER_E);
    assert_true(lp.term_t == 31.5);
    osn_sip_layer_release(&l);
}

static void test_nict_1xx_keeps_e(void **state)
{
    (void)state;
    struct osn_sip_layer l;
    struct loop lp;
    struct osn_sip_txn t = {0};
    double ts[MAXREC] = {0};
    bool re[MAXREC] = {0};
    static const double want[] = {0, 0.5, 1.5, 5.5, 9.5};
    struct osn_sip_msg req = request(OSN_SIP_OPTIONS, 3);

    assert_int_equal(osn_sip_layer_init(&l, NULL, 0), 0);
    loop_init(&lp, &l);
    start_client(&lp, &t, req);
    at_recv(&lp, 1.0, &t, response(&req, 100));
    at_recv(&lp, 10.0, &t, response(&req, 200));
    at_recv(&lp, 11.0, &t, response(&req, 200));
    run(&lp, 1.0);
    assert_int_equal(t.state, OSN_SIP_PROCEEDING);
    run(&lp, 100);
    /* RFC 3261 17.1.2.2: a 1xx does not stop E; in Proceeding it fires every T2. */
    assert_times(ts, sends_of(&lp, 0, OSN_SIP_OPTIONS, ts, re), want, 5);
    assert_int_equal(lp.ntu, 2); /* 100, 200; the copy at 11 is absorbed */
    assert_int_equal(t.absorbed, 1);
    /* Timer K = T4 = 5 s after the final. */
    assert_true(lp.term_t == 15.0);
    osn_sip_layer_release(&l);
}

/* ---- INVITE server ---- */

static void test_ist_2xx_accepted(void **state)
{
    (void)state;
    struct osn_sip_layer l;
    struct loop lp;
    struct osn_sip_txn t = {0};
    double ts[MAXREC] = {0};
    bool re[MAXREC] = {0};
    struct osn_sip_msg inv = request(OSN_SIP_INVITE, 4), ack = inv;
    ack.method = OSN_SIP_ACK;

    assert_int_equal(osn_sip_layer_init(&l, NULL, 0), 0);
    loop_init(&lp, &l);
    start_server(&lp, &t, inv);
    assert_int_equal(t.state, OSN_SIP_PROCEEDING);
    at_recv(&lp, 0.5, &t, inv);
    at_respond(&lp, 1.0, &t, 180);
    at_respond(&lp, 2.0, &t, 200);
    at_recv(&lp, 2.1, &t, ack);
    at_recv(&lp, 2.5, &t, inv);
    at_respond(&lp, 2.6, &t, 200); /* the UAS core retransmitting its 2xx */
    run(&lp, 100);
    /* RFC 3261 17.2.1: 100 Trying after 200 ms, re-sent for the retransmission at 0.5. */
    int n = sends_of(&lp, 100, 0, ts, re);
    static const double trying[] = {0.2, 0.5};
    assert_times(ts, n, trying, 2);
    assert_false(re[0]);
    assert_true(re[1]);
    assert_int_equal(lp.sent[0].msg.branch, 4);
    assert_int_equal(lp.sent[0].msg.method, OSN_SIP_INVITE);
    /* RFC 6026 7.1: Accepted absorbs the INVITE at 2.5 and sends nothing for it; the TU's
     * 2xx copies go out; the ACK goes to the TU; L = 64 T1 after the 2xx. */
    n = sends_of(&lp, 200, 0, ts, re);
    static const double ok[] = {2.0, 2.6};
    assert_times(ts, n, ok, 2);
    assert_true(re[1]);
    assert_int_equal(lp.sent[3].msg.call_id, inv.call_id);
    assert_int_equal(lp.sent[3].msg.to_tag, 77);
    assert_int_equal(lp.ntu, 2); /* the request (at start) and the ACK */
    assert_int_equal(lp.tu[0], OSN_SIP_TU_REQUEST);
    assert_int_equal(lp.tu[1], OSN_SIP_TU_ACK);
    assert_true(lp.tu_t[1] == 2.1);
    assert_true(lp.term_t == 34.0);
    assert_int_equal(t.absorbed, 2);
    assert_int_equal(l.stats.req_absorbed, 2);
    assert_int_equal(l.stats.trying_auto, 1);
    assert_int_equal(l.stats.resp_retrans, 2);
    osn_sip_layer_release(&l);
}

static void test_ist_trying_delay(void **state)
{
    (void)state;
    struct osn_sip_cfg c;
    struct osn_sip_layer l;
    struct loop lp;
    struct osn_sip_txn t = {0};
    struct osn_sip_msg inv = request(OSN_SIP_INVITE, 4);

    /* A TU that answers within 200 ms makes the automatic 100 unnecessary. */
    assert_int_equal(osn_sip_layer_init(&l, NULL, 0), 0);
    loop_init(&lp, &l);
    start_server(&lp, &t, inv);
    at_respond(&lp, 0.1, &t, 180);
    run(&lp, 1);
    assert_int_equal(lp.nsent, 1);
    assert_int_equal(lp.sent[0].msg.status, 180);
    assert_int_equal(l.stats.trying_auto, 0);
    osn_sip_layer_release(&l);

    /* trying_delay = 0: at once; < 0: never. */
    osn_sip_cfg_default(&c);
    c.trying_delay = 0;
    t = (struct osn_sip_txn){0};
    assert_int_equal(osn_sip_layer_init(&l, &c, 0), 0);
    loop_init(&lp, &l);
    start_server(&lp, &t, inv);
    assert_int_equal(lp.nsent, 1);
    assert_int_equal(lp.sent[0].msg.status, 100);
    assert_true(lp.sent_t[0] == 0);
    osn_sip_layer_release(&l);
    c.trying_delay = -1;
    t = (struct osn_sip_txn){0};
    assert_int_equal(osn_sip_layer_init(&l, &c, 0), 0);
    loop_init(&lp, &l);
    start_server(&lp, &t, inv);
    at_recv(&lp, 0.5, &t, inv);
    run(&lp, 10);
    assert_int_equal(lp.nsent, 0);
    assert_int_equal(t.absorbed, 1);
    osn_sip_layer_release(&l);
}

static void test_ist_non2xx_no_ack(void **state)
{
    (void)state;
    struct osn_sip_layer l;
    struct loop lp;
    struct osn_sip_txn t = {0};
    double ts[MAXREC] = {0};
    bool re[MAXREC] = {0};
    /* G from the 486 at 1.0: T1, 2T1, 4T1, then T2; H = 64 T1 after the 486. */
    static const double want[] = {1, 1.5, 2.5, 4.5, 8.5, 12.5, 16.5, 20.5, 24.5, 28.5, 32.5};

    assert_int_equal(osn_sip_layer_init(&l, NULL, 0), 0);
    loop_init(&lp, &l);
    start_server(&lp, &t, request(OSN_SIP_INVITE, 4));
    at_respond(&lp, 1.0, &t, 486);
    run(&lp, 100);
    assert_times(ts, sends_of(&lp, 486, 0, ts, re), want, 11);
    assert_int_equal(lp.ntu, 2);
    assert_int_equal(lp.tu[1], OSN_SIP_TU_TIMEOUT);
    assert_int_equal(lp.tu_timer[1], OSN_SIP_TIMER_H);
    assert_true(lp.term_t == 33.0);
    assert_int_equal(t.nretrans, 10);
    osn_sip_layer_release(&l);
}

static void test_ist_non2xx_ack(void **state)
{
    (void)state;
    struct osn_sip_layer l;
    struct loop lp;
    struct osn_sip_txn t = {0};
    double ts[MAXREC] = {0};
    bool re[MAXREC] = {0};
    static const double want[] = {1, 1.5, 2.0, 2.5};
    struct osn_sip_msg inv = request(OSN_SIP_INVITE, 4), ack = inv;
    ack.method = OSN_SIP_ACK;

    assert_int_equal(osn_sip_layer_init(&l, NULL, 0), 0);
    loop_init(&lp, &l);
    start_server(&lp, &t, inv);
    at_respond(&lp, 1.0, &t, 486);
    at_recv(&lp, 2.0, &t, inv); /* retransmission in Completed: the final again */
    at_recv(&lp, 3.0, &t, ack);
    at_recv(&lp, 4.0, &t, ack);
    run(&lp, 3.0);
    assert_int_equal(t.state, OSN_SIP_CONFIRMED);
    run(&lp, 100);
    /* 486 at 1.0, G at 1.5, answer at 2.0, G at 2.5 (G is now 2 s: next 4.5, after ACK). */
    assert_times(ts, sends_of(&lp, 486, 0, ts, re), want, 4);
    assert_int_equal(lp.ntu, 1); /* the request only: ACKs of a non-2xx stay here */
    /* RFC 3261 17.2.1: Timer I = T4 = 5 s from the ACK; the second ACK is absorbed. */
    assert_true(lp.term_t == 8.0);
    assert_int_equal(t.absorbed, 2);
    osn_sip_layer_release(&l);
}

/* A response sent again is the first one (the request's Via, From, Call-ID and CSeq, the TU's
 * status, To tag and Retry-After) without the overload-control parameters: a server gives its
 * current state in every response (RFC 7339), which the sender adds when it sends. */
static void test_ist_resend_is_the_response(void **state)
{
    (void)state;
    struct osn_sip_layer l;
    struct loop lp;
    struct osn_sip_txn t = {0};
    struct osn_sip_msg inv = request(OSN_SIP_INVITE, 4);
    inv.cseq = 7;
    struct osn_sip_msg r = {.status = 503, .to_tag = 77, .retry_after = 12};
    r.oc = (struct osn_sip_oc){.flags = OSN_SIP_OC_PRESENT | OSN_SIP_OC_VALUE, .value = 40};
    struct osn_sip_out o;

    assert_int_equal(osn_sip_layer_init(&l, NULL, 0), 0);
    loop_init(&lp, &l);
    start_server(&lp, &t, inv);
    assert_int_equal(osn_sip_stxn_respond(&l, &t, &r, 1.0, &o), 0);
    apply(&lp, &t, 1.0, &o);
    at_recv(&lp, 1.2, &t, inv); /* before G (1.5): the final again */
    run(&lp, 1.3);
    assert_int_equal(lp.nsent, 2);
    const struct osn_sip_msg *first = &lp.sent[0].msg, *again = &lp.sent[1].msg;
    assert_false(lp.sent[0].retrans);
    assert_true(lp.sent[1].retrans);
    assert_int_equal(first->oc.value, 40); /* the first sending is the TU's, as it is */
    assert_int_equal(first->retry_after, 12);
    assert_int_equal(again->status, 503);
    assert_int_equal(again->retry_after, 12);
    assert_int_equal(again->to_tag, 77);
    assert_int_equal(again->method, OSN_SIP_INVITE);
    assert_int_equal(again->cseq, 7);
    assert_int_equal(again->call_id, inv.call_id);
    assert_int_equal(again->branch, inv.branch);
    assert_int_equal(again->sent_by, inv.sent_by);
    assert_int_equal(again->from_tag, inv.from_tag);
    assert_int_equal(again->oc.flags, 0);
    assert_int_equal(again->oc.value, 0);
    assert_int_equal(t.resp.status, 503);
    osn_sip_layer_release(&l);
}

/* ---- non-INVITE server ---- */

static void test_nist(void **state)
{
    (void)state;
    struct osn_sip_layer l;
    struct loop lp;
    struct osn_sip_txn t = {0};
    double ts[MAXREC] = {0};
    bool re[MAXREC] = {0};
    static const double want[] = {0.3, 0.5};
    struct osn_sip_msg bye = request(OSN_SIP_BYE, 6);

    assert_int_equal(osn_sip_layer_init(&l, NULL, 0), 0);
    loop_init(&lp, &l);
    start_server(&lp, &t, bye);
    assert_int_equal(t.state, OSN_SIP_TRYING);
    assert_int_equal(lp.nsent, 0); /* RFC 3261 16.2 / 4320: no 100 to a non-INVITE */
    at_recv(&lp, 0.1, &t, bye);    /* Trying: discarded */
    at_respond(&lp, 0.3, &t, 200);
    at_recv(&lp, 0.5, &t, bye); /* Completed: the final again */
    at_respond(&lp, 0.6, &t, 500);
    run(&lp, 100);
    int n = sends_of(&lp, 200, 0, ts, re);
    assert_times(ts, n, want, 2);
    assert_true(re[1]);
    assert_int_equal(lp.nsent, 2); /* the 500 after the final is discarded */
    assert_int_equal(t.absorbed, 2);
    /* Timer J = 64 T1 from the final. */
    assert_true(fabs(lp.term_t - 32.3) < 1e-12);
    osn_sip_layer_release(&l);
}

/* ---- over a reliable transport (TCP) ---- */

static void start_over(struct loop *lp, struct osn_sip_txn *t, struct osn_sip_msg req, int role)
{
    struct osn_sip_out o;
    int rc = role == OSN_SIP_CLIENT ? osn_sip_ctxn_start_over(lp->l, t, &req, true, 0, &o)
                                    : osn_sip_stxn_start_over(lp->l, t, &req, true, 0, &o);
    assert_int_equal(rc, 0);
    assert_true(t->reliable);
    apply(lp, t, 0, &o);
}

/* RFC 3261 17.1.1.2, 17.1.2.2, 17.2.1, 17.2.2 over TCP: a request is sent once (no Timer A or E),
 * a final response once (no Timer G), and Timers D, K, I and J are zero (each transaction ends
 * at the event that reaches Completed or Confirmed); B, F and H stay 64*T1, M and L too (RFC
 * 6026 8.4 gives them no transport exception). The same scripts over UDP give the retransmissions
 * and waits of the tests above. */
static void test_reliable_transport(void **state)
{
    (void)state;
    struct osn_sip_layer l;
    struct loop lp;
    struct osn_sip_txn t = {0};
    double ts[MAXREC] = {0};
    bool re[MAXREC] = {0};
    static const double zero[] = {0}, at5[] = {5}, at1[] = {1};
    struct osn_sip_msg inv = request(OSN_SIP_INVITE, 11), bye = request(OSN_SIP_BYE, 12);
    struct osn_sip_msg ack = inv;
    ack.method = OSN_SIP_ACK;
    assert_int_equal(osn_sip_layer_init(&l, NULL, 0), 0);

    /* INVITE client, no answer: one INVITE, then Timer B at 64*T1 = 32 s. */
    loop_init(&lp, &l);
    start_over(&lp, &t, inv, OSN_SIP_CLIENT);
    run(&lp, 100);
    assert_times(ts, sends_of(&lp, 0, OSN_SIP_INVITE, ts, re), zero, 1);
    assert_int_equal(lp.ntu, 1);
    assert_int_equal(lp.tu[0], OSN_SIP_TU_TIMEOUT);
    assert_int_equal(lp.tu_timer[0], OSN_SIP_TIMER_B);
    assert_true(lp.term_t == 32.0);

    /* INVITE client, 100 then 486: the ACK once, and Terminated at the 486 (D = 0). */
    memset(&t, 0, sizeof t);
    loop_init(&lp, &l);
    start_over(&lp, &t, inv, OSN_SIP_CLIENT);
    at_recv(&lp, 1.0, &t, response(&inv, 100));
    at_recv(&lp, 5.0, &t, response(&inv, 486));
    run(&lp, 100);
    assert_times(ts, sends_of(&lp, 0, OSN_SIP_INVITE, ts, re), zero, 1);
    assert_times(ts, sends_of(&lp, 0, OSN_SIP_ACK, ts, re), at5, 1);
    assert_int_equal(lp.ntu, 2);
    assert_true(lp.term_t == 5.0);

    /* INVITE client, 2xx: Accepted, Timer M = 64*T1 as on UDP. */
    memset(&t, 0, sizeof t);
    loop_init(&lp, &l);
    start_over(&lp, &t, inv, OSN_SIP_CLIENT);
    at_recv(&lp, 1.0, &t, response(&inv, 200));
    run(&lp, 1.0);
    assert_int_equal(t.state, OSN_SIP_ACCEPTED);
    run(&lp, 100);
    assert_true(lp.term_t == 33.0);

    /* Non-INVITE client, no answer: one BYE, Timer F at 32 s; answered: Terminated at the 200. */
    memset(&t, 0, sizeof t);
    loop_init(&lp, &l);
    start_over(&lp, &t, bye, OSN_SIP_CLIENT);
    run(&lp, 100);
    assert_times(ts, sends_of(&lp, 0, OSN_SIP_BYE, ts, re), zero, 1);
    assert_int_equal(lp.tu_timer[0], OSN_SIP_TIMER_F);
    assert_true(lp.term_t == 32.0);
    memset(&t, 0, sizeof t);
    loop_init(&lp, &l);
    start_over(&lp, &t, bye, OSN_SIP_CLIENT);
    at_recv(&lp, 0.3, &t, response(&bye, 200));
    run(&lp, 100);
    assert_int_equal(lp.nsent, 1);
    assert_true(fabs(lp.term_t - 0.3) < 1e-12);

    /* INVITE server, 486 at 1 s: sent once (no G); the ACK at 3 s ends it (I = 0). */
    memset(&t, 0, sizeof t);
    loop_init(&lp, &l);
    start_over(&lp, &t, inv, OSN_SIP_SERVER);
    at_respond(&lp, 1.0, &t, 486);
    at_recv(&lp, 3.0, &t, ack);
    run(&lp, 100);
    assert_times(ts, sends_of(&lp, 486, 0, ts, re), at1, 1);
    assert_true(lp.term_t == 3.0);
    /* ... and with no ACK, Timer H at 1 + 64*T1. */
    memset(&t, 0, sizeof t);
    loop_init(&lp, &l);
    start_over(&lp, &t, inv, OSN_SIP_SERVER);
    at_respond(&lp, 1.0, &t, 486);
    run(&lp, 100);
    assert_times(ts, sends_of(&lp, 486, 0, ts, re), at1, 1);
    assert_int_equal(lp.tu[lp.ntu - 1], OSN_SIP_TU_TIMEOUT);
    assert_true(lp.term_t == 33.0);

    /* Non-INVITE server: the final ends it (J = 0). */
    memset(&t, 0, sizeof t);
    loop_init(&lp, &l);
    start_over(&lp, &t, bye, OSN_SIP_SERVER);
    at_respond(&lp, 0.3, &t, 200);
    run(&lp, 100);
    assert_int_equal(lp.nsent, 1);
    assert_true(fabs(lp.term_t - 0.3) < 1e-12);

    /* osn_sip_ctxn_start is the unreliable start, even on memory that was reliable. */
    memset(&t, 0, sizeof t);
    loop_init(&lp, &l);
    start_over(&lp, &t, bye, OSN_SIP_SERVER);
    at_respond(&lp, 0.1, &t, 200);
    run(&lp, 0.1);
    loop_init(&lp, &l);
    start_server(&lp, &t, bye);
    assert_false(t.reliable);
    assert_int_equal(l.stats.req_retrans, 0);
    assert_int_equal(l.stats.resp_retrans, 0);
    osn_sip_layer_release(&l);
}

/* ---- matching ---- */

static void test_match_ack_cancel(void **state)
{
    (void)state;
    struct osn_sip_layer l;
    struct osn_sip_txn inv_t = {0}, cancel_t = {0}, spare = {0}, cli = {0}, *tp;
    struct osn_sip_out o;
    struct osn_sip_msg inv = request(OSN_SIP_INVITE, 10), m;

    assert_int_equal(osn_sip_layer_init(&l, NULL, 0), 0);
    assert_int_equal(osn_sip_layer_recv(&l, &inv, &inv_t, &tp, 0, &o), 1);
    assert_ptr_equal(tp, &inv_t);
    /* RFC 3261 17.2.3: the INVITE again is a retransmission of the same transaction. */
    assert_int_equal(osn_sip_layer_recv(&l, &inv, &spare, &tp, 0.5, &o), 0);
    assert_ptr_equal(tp, &inv_t);
    assert_int_equal(inv_t.absorbed, 1);
    /* The ACK for a non-2xx carries the INVITE's branch: it matches the INVITE. */
    m = inv;
    m.method = OSN_SIP_ACK;
    assert_ptr_equal(osn_sip_layer_match(&l, &m), &inv_t);
    /* The ACK for a 2xx has a new branch (13.2.2.4): no transaction, it is the TU's. */
    m.branch = 11;
    assert_null(osn_sip_layer_match(&l, &m));
    assert_int_equal(osn_sip_layer_recv(&l, &m, &spare, &tp, 1, &o), 2);
    assert_int_equal(o.tu, OSN_SIP_TU_STRAY);
    assert_null(tp);
    /* Same branch, other sent-by: another client's request. */
    m = inv;
    m.sent_by = 6;
    assert_null(osn_sip_layer_match(&l, &m));
    /* A CANCEL has its own transaction, and finds the INVITE it cancels. */
    m = inv;
    m.method = OSN_SIP_CANCEL;
    assert_null(osn_sip_layer_match(&l, &m));
    assert_ptr_equal(osn_sip_layer_match_cancelled(&l, &m), &inv_t);
    assert_int_equal(osn_sip_layer_recv(&l, &m, &cancel_t, &tp, 1, &o), 1);
    assert_ptr_equal(osn_sip_layer_match(&l, &m), &cancel_t);
    assert_ptr_equal(osn_sip_layer_match_cancelled(&l, &m), &inv_t);
    /* A response matches a client transaction by branch and CSeq method only (17.1.3). */
    struct osn_sip_msg creq = request(OSN_SIP_INVITE, 10);
    creq.sent_by = 99;
    assert_int_equal(osn_sip_ctxn_start(&l, &cli, &creq, 0, &o), 0);
    m = response(&creq, 180);
    m.sent_by = 1234;
    assert_ptr_equal(osn_sip_layer_match(&l, &m), &cli);
    m.method = OSN_SIP_CANCEL;
    assert_null(osn_sip_layer_match(&l, &m));
    /* A second client transaction on a branch in use is refused. */
    assert_int_equal(osn_sip_ctxn_start(&l, &spare, &creq, 0, &o), OSN_EINVAL);
    assert_int_equal(l.table.n, 3);
    osn_sip_txn_abort(&l, &cli);
    assert_int_equal(l.table.n, 2);
    osn_sip_layer_release(&l);
}

/* osn_sip_txn_matches decides as the table does, on the messages of the test above; an
 * unindexed layer matches nothing itself, refuses no key, and its transactions work the same. */
static void test_unindexed_matches_as_table(void **state)
{
    (void)state;
    struct osn_sip_layer l, u;
    struct osn_sip_txn srv = {0}, cli = {0}, usrv = {0}, ucli = {0}, again = {0};
    struct osn_sip_out o;
    struct osn_sip_msg inv = request(OSN_SIP_INVITE, 10), creq = request(OSN_SIP_INVITE, 20);
    creq.sent_by = 99;

    assert_int_equal(osn_sip_layer_init(&l, NULL, 0), 0);
    assert_int_equal(osn_sip_layer_init_unindexed(&u, NULL), 0);
    assert_int_equal(osn_sip_stxn_start(&l, &srv, &inv, 0, &o), 0);
    assert_int_equal(osn_sip_ctxn_start(&l, &cli, &creq, 0, &o), 0);
    assert_int_equal(osn_sip_stxn_start(&u, &usrv, &inv, 0, &o), 0);
    assert_int_equal(osn_sip_ctxn_start(&u, &ucli, &creq, 0, &o), 0);

    /* Requests and responses on, next to and off the two keys. */
    struct osn_sip_msg ms[16];
    int n = 0;
    ms[n++] = inv;
    ms[n] = inv, ms[n++].method = OSN_SIP_ACK;
    ms[n] = inv, ms[n].method = OSN_SIP_ACK, ms[n++].branch = 11;
    ms[n] = inv, ms[n++].sent_by = 6;
    ms[n] = inv, ms[n++].method = OSN_SIP_CANCEL;
    ms[n] = inv, ms[n++].method = OSN_SIP_BYE;
    ms[n++] = response(&inv, 180);
    ms[n++] = creq;
    ms[n] = response(&creq, 180), ms[n++].sent_by = 1234;
    ms[n] = response(&creq, 200), ms[n++].method = OSN_SIP_CANCEL;
    ms[n] = response(&creq, 486), ms[n++].branch = 21;
    ms[n++] = response(&creq, 100);
    int hits = 0;
    for (int i = 0; i < n; i++) {
        const struct osn_sip_txn *t = osn_sip_layer_match(&l, &ms[i]);
        assert_int_equal(osn_sip_txn_matches(&srv, &ms[i]), t == &srv);
        assert_int_equal(osn_sip_txn_matches(&cli, &ms[i]), t == &cli);
        assert_int_equal(osn_sip_txn_matches(&usrv, &ms[i]), t == &srv);
        assert_int_equal(osn_sip_txn_matches(&ucli, &ms[i]), t == &cli);
        assert_null(osn_sip_layer_match(&u, &ms[i]));
        hits += t != NULL;
    }
    assert_int_equal(hits, 4); /* the INVITE and its ACK; the 180 (any sent-by) and the 100 */

    /* No key is refused without a table, and the machines run as before: the INVITE again is
     * absorbed and answered with the last response. */
    assert_int_equal(osn_sip_ctxn_start(&u, &again, &creq, 0, &o), 0);
    assert_int_equal(osn_sip_txn_recv(&u, &usrv, &inv, 0.5, &o), 0);
    assert_int_equal(usrv.absorbed, 1);
    assert_int_equal(u.table.n, 0);
    struct osn_sip_txn *tp;
    assert_int_equal(osn_sip_layer_recv(&u, &inv, NULL, &tp, 1, &o), 2);
    assert_null(tp);
    osn_sip_txn_abort(&u, &usrv);
    assert_int_equal(usrv.state, OSN_SIP_TERMINATED);
    osn_sip_layer_release(&u);
    osn_sip_layer_release(&l);
}

#define POOL  2000
#define STEPS 100000

/* The reference: a linear scan of the live transactions with the RFC 3261 17 rules. */
static struct osn_sip_txn *ref_find(struct osn_sip_txn **live, int n, int role,
                                    const struct osn_sip_msg *m)
{
    int method = role == OSN_SIP_SERVER && m->method == OSN_SIP_ACK ? OSN_SIP_INVITE : m->method;
    for (int i = 0; i < n; i++) {
        struct osn_sip_txn *t = live[i];
        if (t->role == role && t->req.branch == m->branch && t->req.method == method &&
            (role == OSN_SIP_CLIENT || t->req.sent_by == m->sent_by))
            return t;
    }
    return NULL;
}

static struct osn_sip_msg random_key(struct osn_rng *r)
{
    /* Small ranges, so that keys collide in every field but one. */
    static const int methods[] = {OSN_SIP_INVITE, OSN_SIP_ACK, OSN_SIP_CANCEL, OSN_SIP_BYE};
    struct osn_sip_msg m = {0};
    m.branch = osn_rng_next(r) % 600;
    m.sent_by = osn_rng_next(r) % 3;
    m.method = (uint8_t)methods[osn_rng_next(r) % 4];
    return m;
}

static void test_table_random(void **state)
{
    (void)state;
    struct osn_sip_table tb;
    struct osn_rng r;
    struct osn_sip_txn *pool = calloc(POOL, sizeof *pool);
    struct osn_sip_txn **live = calloc(POOL, sizeof *live);
    int nlive = 0, nfree = POOL, found = 0, dup = 0;
    struct osn_sip_txn **freel = calloc(POOL, sizeof *freel);

    assert_non_null(pool);
    assert_non_null(live);
    assert_non_null(freel);
    for (int i = 0; i < POOL; i++)
        freel[i] = &pool[i];
    osn_rng_seed(&r, 12345);
    assert_int_equal(osn_sip_table_init(&tb, 1), 0);
    for (int step = 0; step < STEPS; step++) {
        uint64_t op = osn_rng_next(&r) % 10;
        struct osn_sip_msg k = random_key(&r);
        int role = (int)(osn_rng_next(&r) % 2);
        if (op < 4 && nfree > 0) {
            if (k.method == OSN_SIP_ACK)
                k.method = OSN_SIP_INVITE; /* no transaction is created by an ACK */
            struct osn_sip_txn *t = freel[nfree - 1];
            memset(t, 0, sizeof *t);
            t->req = k;
            t->role = (uint8_t)role;
            bool taken = ref_find(live, nlive, role, &k) != NULL;
            int err = osn_sip_table_add(&tb, t);
            assert_int_equal(err, taken ? OSN_EINVAL : 0);
            if (!taken) {
                nfree--;
                live[nlive++] = t;
            } else {
                dup++;
            }
        } else if (op < 7 && nlive > 0) {
            int i = (int)(osn_rng_next(&r) % (uint64_t)nlive);
            osn_sip_table_remove(&tb, live[i]);
            osn_sip_table_remove(&tb, live[i]); /* twice: a no-op */
            freel[nfree++] = live[i];
            live[i] = live[--nlive];
        } else {
            struct osn_sip_txn *want = ref_find(live, nlive, role, &k);
            assert_ptr_equal(osn_sip_table_find(&tb, role, &k), want);
            found += want != NULL;
        }
        assert_int_equal(tb.n, (size_t)nlive);
    }
    /* The steps did exercise hits, refusals and growth. */
    assert_true(found > 1000);
    assert_true(dup > 100);
    assert_true((tb.mask + 1) / 2 >= (size_t)nlive); /* room for them all at load <= 1/2 */
    osn_sip_table_release(&tb);
    free(pool);
    free(live);
    free(freel);
}

#define NCOLL 300

/* The table key of a test transaction i: both roles, three sent-bys, methods with and without
 * the ACK rule. */
static void coll_key(struct osn_sip_txn *t, uint64_t i)
{
    static const int methods[] = {OSN_SIP_INVITE, OSN_SIP_BYE, OSN_SIP_CANCEL};
    memset(t, 0, sizeof *t);
    t->req.branch = i;
    t->req.sent_by = i % 3;
    t->req.method = (uint8_t)methods[(i / 2) % 3];
    t->role = (uint8_t)(i % 2);
}

/* Every transaction of the pool is found exactly when it is live, by its own request and, for an
 * INVITE server transaction, by the ACK too. */
static void coll_check(const struct osn_sip_table *tb, const struct osn_sip_txn *pool,
                       const bool *in, int nlive)
{
    for (int i = 0; i < NCOLL; i++) {
        const struct osn_sip_txn *want = in[i] ? &pool[i] : NULL;
        struct osn_sip_msg m = pool[i].req;
        assert_ptr_equal(osn_sip_table_find(tb, pool[i].role, &m), want);
        if (pool[i].role == OSN_SIP_SERVER && m.method == OSN_SIP_INVITE) {
            m.method = OSN_SIP_ACK;
            assert_ptr_equal(osn_sip_table_find(tb, OSN_SIP_SERVER, &m), want);
        }
        assert_int_equal(pool[i].in_table, in[i]);
    }
    assert_int_equal(tb->n, (size_t)nlive);
    assert_true(tb->n <= (tb->mask + 1) / 2);
}

/* Heavy collisions: NCOLL keys chosen (by the hash the table stores in them) so that their home
 * slots are 4 adjacent ones around the wrap-around of every table of up to 1024 slots, hence one
 * cluster of up to NCOLL entries across the end of the array. They go into a table that starts
 * from a hint of 0 and grows to 1024 slots, then leave (and some come back) in random order with
 * every key looked up after every step: a backward shift that broke a probe path or moved an
 * entry before its home would lose or misplace one. Removal must not write any other
 * transaction. Finally a hint is honoured: that many fit without a growth. */
static void test_table_collisions(void **state)
{
    (void)state;
    struct osn_sip_table tb, scratch;
    struct osn_rng r;
    struct osn_sip_txn *pool = calloc(NCOLL, sizeof *pool);
    struct osn_sip_txn *shadow = calloc(NCOLL, sizeof *shadow);
    bool in[NCOLL] = {0};
    int nlive = 0, ngrow = 0;

    assert_non_null(pool);
    assert_non_null(shadow);
    /* The keys: t->hash is the layer's, and readable; a scratch table computes it. */
    assert_int_equal(osn_sip_table_init(&scratch, 0), 0);
    int n = 0;
    for (uint64_t i = 0; n < NCOLL; i++) {
        struct osn_sip_txn *t = &pool[n];
        coll_key(t, i);
        assert_int_equal(osn_sip_table_add(&scratch, t), 0);
        osn_sip_table_remove(&scratch, t);
        uint32_t low = t->hash & 1023;
        if (low <= 1 || low >= 1022)
            n++;
    }
    osn_sip_table_release(&scratch);

    assert_int_equal(osn_sip_table_init(&tb, 0), 0);
    assert_int_equal(tb.mask + 1, 16);
    for (int i = 0; i < NCOLL; i++) {
        size_t cap = tb.mask + 1;
        assert_int_equal(osn_sip_table_add(&tb, &pool[i]), 0);
        in[i] = true;
        nlive++;
        ngrow += tb.mask + 1 != cap;
        assert_int_equal(osn_sip_table_add(&tb, &pool[i]), OSN_EINVAL); /* in a table already */
        struct osn_sip_txn twin; /* same key, another transaction */
        coll_key(&twin, pool[i].req.branch);
        assert_int_equal(osn_sip_table_add(&tb, &twin), OSN_EINVAL);
        assert_false(twin.in_table);
        coll_check(&tb, pool, in, nlive);
    }
    assert_int_equal(tb.mask + 1, 1024);
    assert_int_equal(ngrow, 6); /* 16 -> 1024 */

    osn_rng_seed(&r, 777);
    for (int step = 0; nlive > 0; step++) {
        int i = (int)(osn_rng_next(&r) % NCOLL);
        bool late = step > 4 * NCOLL; /* then only removals, to end */
        if (in[i] && (late || osn_rng_next(&r) % 4 != 0)) {
            memcpy(shadow, pool, NCOLL * sizeof *pool);
            osn_sip_table_remove(&tb, &pool[i]);
            in[i] = false;
            nlive--;
            shadow[i].in_table = false;
            assert_memory_equal(shadow, pool, NCOLL * sizeof *pool);
            osn_sip_table_remove(&tb, &pool[i]); /* twice: a no-op */
        } else if (!in[i] && !late) {
            assert_int_equal(osn_sip_table_add(&tb, &pool[i]), 0);
            in[i] = true;
            nlive++;
        }
        coll_check(&tb, pool, in, nlive);
    }
    assert_int_equal(tb.mask + 1, 1024); /* it never shrinks */
    osn_sip_table_release(&tb);

    /* A hint of NCOLL: all of them without a growth. */
    assert_int_equal(osn_sip_table_init(&tb, NCOLL), 0);
    size_t cap = tb.mask + 1;
    for (int i = 0; i < NCOLL; i++)
        assert_int_equal(osn_sip_table_add(&tb, &pool[i]), 0);
    assert_int_equal(tb.mask + 1, cap);
    assert_int_equal(tb.n, NCOLL);
    osn_sip_table_release(&tb);
    free(pool);
    free(shadow);
}

/* ---- arguments, stale timers, names ---- */

static void test_errors_and_names(void **state)
{
    (void)state;
    struct osn_sip_cfg c;
    struct osn_sip_layer l;
    struct osn_sip_txn t = {0};
    struct osn_sip_out o;
    struct osn_sip_msg req = request(OSN_SIP_INVITE, 1), ack = req;
    ack.method = OSN_SIP_ACK;

    osn_sip_cfg_default(&c);
    c.t2 = 0.1; /* below T1 */
    assert_int_equal(osn_sip_layer_init(&l, &c, 0), OSN_EINVAL);
    c.t2 = 4;
    c.t1 = NAN;
    assert_int_equal(osn_sip_layer_init(&l, &c, 0), OSN_EINVAL);
    assert_int_equal(osn_sip_layer_init(&l, NULL, 0), 0);
    /* No client transaction for an ACK (17.1), nor a response as a request. */
    assert_int_equal(osn_sip_ctxn_start(&l, &t, &ack, 0, &o), OSN_EINVAL);
    struct osn_sip_msg bad = response(&req, 200);
    assert_int_equal(osn_sip_stxn_start(&l, &t, &bad, 0, &o), OSN_EINVAL);
    assert_int_equal(osn_sip_ctxn_start(&l, &t, &req, 0, &o), 0);
    /* A request given to a client transaction, a response of another method. */
    assert_int_equal(osn_sip_txn_recv(&l, &t, &req, 0.1, &o), OSN_EINVAL);
    bad.method = OSN_SIP_BYE;
    assert_int_equal(osn_sip_txn_recv(&l, &t, &bad, 0.1, &o), OSN_EINVAL);
    assert_int_equal(osn_sip_stxn_respond(&l, &t, &bad, 0.1, &o), OSN_EINVAL);
    /* Timer A is due at 0.5: early is an error, a timer not armed is stale. */
    assert_int_equal(osn_sip_txn_timer(&l, &t, OSN_SIP_TIMER_A, 0.4, &o), OSN_EINVAL);
    assert_int_equal(osn_sip_txn_timer(&l, &t, OSN_SIP_TIMER_D, 40, &o), 0);
    assert_int_equal(o.nsend + o.ntimer, 0);
    assert_int_equal(l.stats.stale_timers, 1);
    assert_int_equal(osn_sip_txn_timer(&l, &t, 99, 1, &o), OSN_EINVAL);
    assert_int_equal(osn_sip_txn_timer(&l, &t, OSN_SIP_TIMER_A, 0.5, &o), 0);
    assert_int_equal(o.nsend, 1);
    assert_true(o.send[0].retrans);
    assert_true(o.deadline == 1.5);
    assert_string_equal(osn_sip_statename(t.state), "Calling");
    assert_string_equal(osn_sip_statename(OSN_SIP_ACCEPTED), "Accepted");
    assert_string_equal(osn_sip_statename(42), "?");
    assert_string_equal(osn_sip_timer_name(OSN_SIP_TIMER_M), "M");
    assert_string_equal(osn_sip_timer_name(OSN_SIP_TIMER_TRYING), "100");
    assert_string_equal(osn_sip_method_name(OSN_SIP_CANCEL), "CANCEL");
    assert_string_equal(osn_sip_tu_name(OSN_SIP_TU_TIMEOUT), "timeout");
    /* RFC 7339 4.4: oc-seq 1282321615.78 < 1282321615.782 (78000 < 78200). */
    struct osn_sip_oc a = {.seq_int = 1282321615, .seq_frac = 78000}, b = a;
    b.seq_frac = 78200;
    assert_true(osn_sip_oc_seq_cmp(&a, &b) < 0);
    assert_true(osn_sip_oc_seq_cmp(&b, &a) > 0);
    assert_int_equal(osn_sip_oc_seq_cmp(&a, &a), 0);
    osn_sip_layer_release(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_ict_timer_b),
            cmocka_unit_test(test_ict_sipp),
            cmocka_unit_test(test_ict_1xx_then_486),
            cmocka_unit_test(test_ict_retry_after_reported),
            cmocka_unit_test(test_ict_timer_b_kept),
            cmocka_unit_test(test_ict_2xx),
            cmocka_unit_test(test_ict_transport_error),
            cmocka_unit_test(test_nict_timer_f),
            cmocka_unit_test(test_nict_1xx_keeps_e),
            cmocka_unit_test(test_ist_2xx_accepted),
            cmocka_unit_test(test_ist_trying_delay),
            cmocka_unit_test(test_ist_non2xx_no_ack),
            cmocka_unit_test(test_ist_non2xx_ack),
            cmocka_unit_test(test_ist_resend_is_the_response),
            cmocka_unit_test(test_nist),
            cmocka_unit_test(test_reliable_transport),
            cmocka_unit_test(test_match_ack_cancel),
            cmocka_unit_test(test_unindexed_matches_as_table),
            cmocka_unit_test(test_table_random),
            cmocka_unit_test(test_table_collisions),
            cmocka_unit_test(test_errors_and_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
