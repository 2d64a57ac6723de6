/*
 * Unit tests of the SIP element behaviour (src/elem/, osn/elem.h), against what RFC 3261,
 * RFC 6026 and RFC 7339 say, independently of the simulator that drives it (whose results are
 * checked bit for bit by test_net_golden and against the models by test_net).
 */
#include <ctype.h>
#include <setjmp.h> /* cmocka needs these before its header */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "osn/elem.h"

/* RFC 3261 13.3.1.4: the 2xx goes out again at T1, 2T1, 4T1, ... capped at T2, while less than
 * 64*T1 has passed since the first; an ACK stops it. */
static void test_uas_2xx_schedule(void **state)
{
    struct osn_sip_cfg cfg;
    struct osn_uas_2xx u = {0};
    double at, now = 10, sent[32];
    int n = 0;
    (void)state;

    osn_sip_cfg_default(&cfg); /* T1 0.5 s, T2 4 s */
    assert_true(osn_uas_2xx_start(&u, now, &cfg, &at));
    assert_true(at == now + 0.5);
    while (n < 32) {
        now = at;
        if (!osn_uas_2xx_fire(&u, now, &cfg, true, &at))
            break;
        sent[n++] = now;
    }
    /* resends at +0.5, +1.5, +3.5, +7.5, then every 4 s: +11.5 ... +31.5 (< 32 s) */
    assert_int_equal(n, 4 + 6);
    assert_true(sent[0] == 10.5 && sent[1] == 11.5 && sent[2] == 13.5 && sent[3] == 17.5);
    assert_true(sent[9] == 41.5);
    /* The last deadline is 64*T1 itself (not +35.5): there, unacknowledged, the session ends
     * (13.3.1.4); once over, the timer decides nothing again. */
    assert_true(now == 42);
    assert_true(u.over && osn_uas_2xx_unacked(&u, now, &cfg) && !osn_uas_2xx_pending(&u));
    u.acked = true;
    assert_false(osn_uas_2xx_unacked(&u, now, &cfg));
    /* An ACK stops it; so does the transaction's end. */
    struct osn_uas_2xx v = {0};
    assert_true(osn_uas_2xx_start(&v, 0, &cfg, &at));
    assert_true(osn_uas_2xx_pending(&v) && !osn_uas_2xx_unacked(&v, 31.9, &cfg));
    v.acked = true;
    assert_false(osn_uas_2xx_fire(&v, at, &cfg, true, &at));
    struct osn_uas_2xx w = {0};
    assert_true(osn_uas_2xx_start(&w, 0, &cfg, &at));
    assert_false(osn_uas_2xx_fire(&w, at, &cfg, false, &at));
    /* Without RFC 6026 the transaction resends it itself: the core does not. */
    cfg.rfc6026 = false;
    struct osn_uas_2xx x = {0};
    assert_false(osn_uas_2xx_start(&x, 0, &cfg, &at));
}

/* One row of the UAS's table: what it answers (status and what each carries). */
static void uas_row(int method, bool known, bool in_dialog, int offer, int n, int s0, int w0,
                    int s1, int w1)
{
    struct osn_uas_request q = {method, known, in_dialog, offer};
    struct osn_uas_reply r[2];
    assert_int_equal(osn_uas_answer(&q, r), n);
    assert_int_equal(r[0].status, s0);
    assert_int_equal(r[0].with, w0);
    if (n > 1) {
        assert_int_equal(r[1].status, s1);
        assert_int_equal(r[1].with, w1);
    }
}

/* What a UA answers (RFC 3261): 180 and 200 to a new INVITE, both with Contact (12.1.1: they
 * create the dialog), the 200 with the SDP answer, or an offer when the INVITE had none
 * (13.3.1.4); 488 to malformed SDP (21.4.26), 415 with Accept to a body that is not SDP
 * (21.4.13); a re-INVITE of a known dialog 200 alone; OPTIONS 200 with Allow, Accept and
 * Supported (11.2); a method it does not handle 405 with Allow (8.2.1); a request with a To tag
 * of no dialog 481 (12.2.2), as a BYE or CANCEL of no call (15.1.2, 9.2). */
static void test_uas_answers(void **state)
{
    const int C = OSN_ELEM_W_CONTACT, S = OSN_ELEM_W_SDP, A = OSN_ELEM_W_ALLOW, K = OSN_ELEM_W_CAPS;
    (void)state;
    uas_row(OSN_SIP_INVITE, false, false, OSN_UAS_OFFER, 2, 180, C, 200, C | S);
    uas_row(OSN_SIP_INVITE, false, false, OSN_UAS_NO_OFFER, 2, 180, C, 200, C | S);
    uas_row(OSN_SIP_INVITE, false, false, OSN_UAS_MALFORMED, 1, 488, 0, 0, 0);
    uas_row(OSN_SIP_INVITE, false, false, OSN_UAS_NOT_SDP, 1, 415, K, 0, 0);
    uas_row(OSN_SIP_INVITE, true, true, OSN_UAS_OFFER, 1, 200, C | S, 0, 0);
    uas_row(OSN_SIP_INVITE, false, true, OSN_UAS_OFFER, 1, 481, 0, 0, 0);
    uas_row(OSN_SIP_OPTIONS, false, false, OSN_UAS_NO_OFFER, 1, 200, A | K, 0, 0);
    uas_row(OSN_SIP_OPTIONS, false, true, OSN_UAS_NO_OFFER, 1, 481, 0, 0, 0);
    uas_row(OSN_SIP_OTHER, false, false, OSN_UAS_NO_OFFER, 1, 405, A, 0, 0);
    uas_row(OSN_SIP_REGISTER, false, false, OSN_UAS_NO_OFFER, 1, 405, A, 0, 0);
    uas_row(OSN_SIP_OTHER, true, true, OSN_UAS_NO_OFFER, 1, 405, A, 0, 0);
    uas_row(OSN_SIP_OTHER, false, true, OSN_UAS_NO_OFFER, 1, 481, 0, 0, 0);
    uas_row(OSN_SIP_BYE, true, true, OSN_UAS_NO_OFFER, 1, 200, 0, 0, 0);
    uas_row(OSN_SIP_BYE, false, true, OSN_UAS_NO_OFFER, 1, 481, 0, 0, 0);
    uas_row(OSN_SIP_BYE, false, false, OSN_UAS_NO_OFFER, 1, 481, 0, 0, 0);
    uas_row(OSN_SIP_CANCEL, false, false, OSN_UAS_NO_OFFER, 1, 481, 0, 0, 0);
    /* Allow names what it handles and nothing it answers 405 */
    assert_int_equal(OSN_UAS_ALLOW, 1 << OSN_SIP_INVITE | 1 << OSN_SIP_ACK | 1 << OSN_SIP_BYE |
                                            1 << OSN_SIP_CANCEL | 1 << OSN_SIP_OPTIONS);
}

/* The TU's actions for a UAS: a new call counts and arms the 2xx timer after 180 and 200, each
 * with what it carries; a 488 arms nothing; a re-INVITE is not a new call. */
static void test_uas_actions(void **state)
{
    struct osn_sip_cfg cfg;
    struct osn_elem e = {.role = OSN_ELEM_UAS, .sip = &cfg};
    struct osn_uas_2xx u = {0};
    struct osn_elem_actions a;
    (void)state;
    osn_sip_cfg_default(&cfg);

    struct osn_uas_request q = {.method = OSN_SIP_INVITE, .offer = OSN_UAS_OFFER};
    osn_elem_on_uas_request(&e, 1, &q, false, &u, &a);
    assert_int_equal(a.n, 4);
    assert_int_equal(a.a[0].count, OSN_ELEM_C_FORWARDED);
    assert_int_equal(a.a[1].status, 180);
    assert_int_equal(a.a[1].with, OSN_ELEM_W_CONTACT);
    assert_int_equal(a.a[2].status, 200);
    assert_int_equal(a.a[2].count, OSN_ELEM_C_CALL_OK);
    assert_int_equal(a.a[2].with, OSN_ELEM_W_CONTACT | OSN_ELEM_W_SDP);
    assert_int_equal(a.a[3].kind, OSN_ELEM_A_ARM_2XX);

    u = (struct osn_uas_2xx){0};
    q.offer = OSN_UAS_MALFORMED;
    osn_elem_on_uas_request(&e, 1, &q, false, &u, &a);
    assert_int_equal(a.n, 1);
    assert_int_equal(a.a[0].status, 488);
    assert_int_equal(a.a[0].count, OSN_ELEM_C_NONE);

    q = (struct osn_uas_request){.method = OSN_SIP_INVITE, .known = true, .in_dialog = true};
    osn_elem_on_uas_request(&e, 1, &q, false, &u, &a);
    assert_int_equal(a.n, 2);
    assert_int_equal(a.a[0].status, 200);
    assert_int_equal(a.a[0].count, OSN_ELEM_C_NONE);
    assert_int_equal(a.a[1].kind, OSN_ELEM_A_ARM_2XX);

    /* the simulator's entry: a BYE of no call 481, as before */
    osn_elem_on_request(&e, 1, OSN_SIP_BYE, 70, false, false, false, &u, &a);
    assert_int_equal(a.n, 1);
    assert_int_equal(a.a[0].status, 481);
    assert_int_equal(a.a[0].count, OSN_ELEM_C_481);
}

/* The UAC: the first 180 gives the setup delay, a 2xx within 64*T1 a good call (once), a 503 a
 * rejected one, a timeout or 408 a timed-out one; the first outcome stays. */
static void test_uac_outcomes(void **state)
{
    struct osn_uac_call c = {.t0 = 1};
    struct osn_uac_step st;
    (void)state;

    osn_uac_on_invite_event(&c, 1.25, 32, OSN_SIP_TU_RESPONSE, 180, &st);
    assert_true(st.setup);
    assert_true(st.setup_delay == 0.25);
    osn_uac_on_invite_event(&c, 1.5, 32, OSN_SIP_TU_RESPONSE, 180, &st);
    assert_false(st.setup);
    osn_uac_on_invite_event(&c, 2, 32, OSN_SIP_TU_RESPONSE, 200, &st);
    assert_true(st.ack && st.connected);
    assert_int_equal(st.outcome, OSN_UAC_GOOD);
    osn_uac_on_invite_event(&c, 2.5, 32, OSN_SIP_TU_RESPONSE, 200, &st);
    assert_true(st.ack); /* every 2xx is acknowledged */
    assert_false(st.connected);
    assert_int_equal(st.outcome, OSN_UAC_PENDING);

    struct osn_uac_call late = {.t0 = 0};
    osn_uac_on_invite_event(&late, 40, 32, OSN_SIP_TU_RESPONSE, 200, &st);
    assert_int_equal(st.outcome, OSN_UAC_TIMEOUT);
    struct osn_uac_call rej = {.t0 = 0};
    osn_uac_on_invite_event(&rej, 1, 32, OSN_SIP_TU_RESPONSE, 503, &st);
    assert_int_equal(st.outcome, OSN_UAC_REJECTED);
    osn_uac_on_invite_event(&rej, 2, 32, OSN_SIP_TU_TIMEOUT, 0, &st);
    assert_int_equal(st.outcome, OSN_UAC_PENDING); /* decided once */
    struct osn_uac_call to = {.t0 = 0};
    osn_uac_on_invite_event(&to, 32, 32, OSN_SIP_TU_TIMEOUT, 0, &st);
    assert_int_equal(st.outcome, OSN_UAC_TIMEOUT);
    struct osn_uac_call other = {.t0 = 0};
    osn_uac_on_invite_event(&other, 1, 32, OSN_SIP_TU_RESPONSE, 486, &st);
    assert_int_equal(st.outcome, OSN_UAC_OTHER);
}

/* The proxy forwards once, relays final responses, ends 100 Trying, and answers 408 only while
 * its server transaction still waits for a final response (RFC 3261 16.8). */
/* The UAC's retrial decision: only a 503 or a timeout of a call not set up, with probability
 * prob (u < prob), at most max_retries times; the wait is the delay draw, or the 503's
 * Retry-After when it is longer and honoured (RFC 3261 21.5.4). */
static void test_uac_retry(void **state)
{
    (void)state;
    struct osn_uac_retry_cfg cfg = {.prob = 0.5, .max_retries = 2, .honour_retry_after = true};
    struct osn_uac_call c = {.t0 = 0};
    double wait = -1;

    /* a 503 with Retry-After 7 after a 2 s draw: 7 s; with a 9 s draw, 9 s */
    assert_true(osn_uac_retry(&cfg, &c, OSN_UAC_REJECTED, 7, 0.2, 2.0, &wait));
    assert_float_equal(wait, 7.0, 0);
    assert_true(osn_uac_retry(&cfg, &c, OSN_UAC_REJECTED, 7, 0.2, 9.0, &wait));
    assert_float_equal(wait, 9.0, 0);
    /* a 503 without Retry-After, a timeout: the draw */
    assert_true(osn_uac_retry(&cfg, &c, OSN_UAC_REJECTED, -1, 0.2, 2.5, &wait));
    assert_float_equal(wait, 2.5, 0);
    assert_true(osn_uac_retry(&cfg, &c, OSN_UAC_TIMEOUT, -1, 0.2, 2.5, &wait));
    assert_float_equal(wait, 2.5, 0);
    /* Retry-After ignored: the draw */
    cfg.honour_retry_after = false;
    assert_true(osn_uac_retry(&cfg, &c, OSN_UAC_REJECTED, 7, 0.2, 2.0, &wait));
    assert_float_equal(wait, 2.0, 0);
    cfg.honour_retry_after = true;
    /* the coin: u < prob retries, u >= prob gives up */
    assert_false(osn_uac_retry(&cfg, &c, OSN_UAC_REJECTED, -1, 0.5, 1.0, &wait));
    assert_true(osn_uac_retry(&cfg, &c, OSN_UAC_REJECTED, -1, 0.4999, 1.0, &wait));
    /* at most max_retries: the attempt after 2 retries is the last */
    c.retries = 1;
    assert_true(osn_uac_retry(&cfg, &c, OSN_UAC_REJECTED, -1, 0.0, 1.0, &wait));
    c.retries = 2;
    assert_false(osn_uac_retry(&cfg, &c, OSN_UAC_REJECTED, -1, 0.0, 1.0, &wait));
    c.retries = 0;
    /* never after a good call, another failure (486), or a 2xx too late (set up, though late) */
    assert_false(osn_uac_retry(&cfg, &c, OSN_UAC_GOOD, -1, 0.0, 1.0, &wait));
    assert_false(osn_uac_retry(&cfg, &c, OSN_UAC_OTHER, -1, 0.0, 1.0, &wait));
    struct osn_uac_step st;
    struct osn_uac_call late = {.t0 = 0};
    osn_uac_on_invite_event(&late, 40, 32, OSN_SIP_TU_RESPONSE, 200, &st);
    assert_int_equal(st.outcome, OSN_UAC_TIMEOUT);
    assert_false(osn_uac_retry(&cfg, &late, st.outcome, -1, 0.0, 1.0, &wait));
    /* probability 0 (the default): never, whatever the draw */
    cfg.prob = 0;
    assert_false(osn_uac_retry(&cfg, &c, OSN_UAC_REJECTED, -1, 0.0, 1.0, &wait));
}

/* Callers who give up (osn_uac_on_patience), against RFC 3261 9.1: the CANCEL goes at once after a
 * provisional response; without one the caller waits for the first provisional (100 or any 1xx)
 * and CANCELs then, or Timer B ends the attempt silently; whatever ends the attempt after that is
 * OSN_UAC_ABANDONED, never retried; a 2xx that crossed the CANCEL is ACKed and hung up at once
 * (RFC 3261 15); a call already answered is not given up. */
static void test_uac_patience(void **state)
{
    struct osn_uac_step st;
    struct osn_uac_retry_cfg cfg = {.prob = 1, .max_retries = 3};
    double wait;
    (void)state;

    /* after a 180: CANCEL now, once; the 487 ends it as abandoned, not as OTHER */
    struct osn_uac_call a = {.t0 = 0};
    osn_uac_on_invite_event(&a, 0.5, 32, OSN_SIP_TU_RESPONSE, 180, &st);
    assert_false(st.cancel);
    osn_uac_on_patience(&a, &st);
    assert_true(st.cancel);
    osn_uac_on_patience(&a, &st);
    assert_false(st.cancel); /* gave up once */
    osn_uac_on_invite_event(&a, 0.7, 32, OSN_SIP_TU_RESPONSE, 180, &st);
    assert_false(st.cancel); /* sent already */
    osn_uac_on_invite_event(&a, 0.8, 32, OSN_SIP_TU_RESPONSE, 487, &st);
    assert_int_equal(st.outcome, OSN_UAC_ABANDONED);
    assert_false(osn_uac_retry(&cfg, &a, st.outcome, -1, 0.0, 1.0, &wait));

    /* no provisional yet: no CANCEL (9.1 MUST NOT); the first 100 brings it */
    struct osn_uac_call b = {.t0 = 0};
    osn_uac_on_patience(&b, &st);
    assert_false(st.cancel);
    osn_uac_on_invite_event(&b, 2, 32, OSN_SIP_TU_RESPONSE, 100, &st);
    assert_true(st.cancel);
    assert_true(st.trying); /* still a response-delay sample */
    osn_uac_on_invite_event(&b, 2.1, 32, OSN_SIP_TU_RESPONSE, 180, &st);
    assert_false(st.cancel);

    /* no provisional ever: silent until Timer B, which ends it as abandoned, not timed out */
    struct osn_uac_call c = {.t0 = 0};
    osn_uac_on_patience(&c, &st);
    assert_false(st.cancel);
    osn_uac_on_invite_event(&c, 32, 32, OSN_SIP_TU_TIMEOUT, 0, &st);
    assert_false(st.cancel);
    assert_int_equal(st.outcome, OSN_UAC_ABANDONED);

    /* the 2xx crossed the CANCEL: ACK, connected, hang up at once; abandoned */
    struct osn_uac_call d = {.t0 = 0};
    osn_uac_on_invite_event(&d, 0.1, 32, OSN_SIP_TU_RESPONSE, 100, &st);
    osn_uac_on_patience(&d, &st);
    assert_true(st.cancel);
    osn_uac_on_invite_event(&d, 0.2, 32, OSN_SIP_TU_RESPONSE, 200, &st);
    assert_true(st.ack && st.connected && st.hangup);
    assert_int_equal(st.outcome, OSN_UAC_ABANDONED);

    /* answered before patience ran out: nothing to give up, and it stays good */
    struct osn_uac_call e = {.t0 = 0};
    osn_uac_on_invite_event(&e, 0.1, 32, OSN_SIP_TU_RESPONSE, 180, &st);
    osn_uac_on_invite_event(&e, 0.2, 32, OSN_SIP_TU_RESPONSE, 200, &st);
    assert_int_equal(st.outcome, OSN_UAC_GOOD);
    assert_false(st.hangup);
    osn_uac_on_patience(&e, &st);
    assert_false(st.cancel);
    assert_false(e.gave_up);
    /* rejected before: likewise */
    struct osn_uac_call f = {.t0 = 0};
    osn_uac_on_invite_event(&f, 0.1, 32, OSN_SIP_TU_RESPONSE, 100, &st);
    osn_uac_on_invite_event(&f, 0.2, 32, OSN_SIP_TU_RESPONSE, 503, &st);
    osn_uac_on_patience(&f, &st);
    assert_false(st.cancel);
    assert_int_equal(f.outcome, OSN_UAC_REJECTED);
}

/* The UAC's call machine (uac_call.c): what each event has the driver do, as bits, in the
 * states of its diagram. */
#define DO(d) OSN_UAC_BIT(OSN_UAC_DO_##d)
/* The callee hangs up (issue 33). Who: a function of the call's key (of the Call-ID's text), the
 * fraction over 100,000 keys within 4 standard deviations of the binomial's (sqrt(p (1 - p) / n)),
 * none at 0, all at 1. When: not before the ACK or 64*T1 after the 2xx (RFC 3261 15). The caller: a
 * call the callee ends arms no hold; the callee's BYE gets 200 and ends a call that is up (HUNG_UP,
 * END), 200 and nothing more when it crosses the caller's own BYE, 481 for no call. */
static void test_callee_hangs_up(void **state)
{
    (void)state;
    int k = 0, n = 100000;
    for (int i = 0; i < n; i++)
        k += osn_uas_callee_hangs_up(0.3, 0x9e3779b97f4a7c15ULL * (uint64_t)(i + 1));
    assert_true(fabs((double)k / n - 0.3) < 4 * sqrt(0.3 * 0.7 / n));
    assert_false(osn_uas_callee_hangs_up(0, 12345));
    assert_true(osn_uas_callee_hangs_up(1, 12345));
    /* the key of a Call-ID's text is FNV-1a's, the same in every process (the published test
     * vectors), and Call-IDs that differ in a digit, as a generator's do, still split by the
     * fraction */
    assert_true(osn_uas_call_key("", 0) == 0xcbf29ce484222325ULL);
    assert_true(osn_uas_call_key("a", 1) == 0xaf63dc4c8601ec8cULL);
    assert_true(osn_uas_call_key("foobar", 6) == 0x85944171f73967e8ULL);
    k = 0;
    for (int i = 0; i < n; i++) {
        char id[32];
        int len = snprintf(id, sizeof id, "%x.0.5eed@127.0.0.1", i);
        k += osn_uas_callee_hangs_up(0.3, osn_uas_call_key(id, (size_t)len));
    }
    assert_true(fabs((double)k / n - 0.3) < 4 * sqrt(0.3 * 0.7 / n));

    struct osn_sip_cfg sc = {.t1 = 0.5};
    double at = -1;
    assert_int_equal(osn_uas_hangup_fire(false, true, 1, 5, &sc, &at), OSN_UAS_HANGUP_NONE);
    assert_int_equal(osn_uas_hangup_fire(true, true, 1, 5, &sc, &at), OSN_UAS_HANGUP_BYE);
    assert_int_equal(osn_uas_hangup_fire(true, false, 1, 5, &sc, &at), OSN_UAS_HANGUP_WAIT);
    assert_true(at == 5.5); /* asks again T1 later */
    assert_int_equal(osn_uas_hangup_fire(true, false, 1, 32.8, &sc, &at), OSN_UAS_HANGUP_WAIT);
    assert_true(at == 33); /* at most until 1 + 64 * 0.5, the server transaction's end */
    assert_int_equal(osn_uas_hangup_fire(true, false, 1, 33, &sc, &at), OSN_UAS_HANGUP_BYE);

    struct osn_uac_cfg cfg = {.timer_b = 32, .retry_until = INFINITY, .callee_hangs_up = 1};
    struct osn_uac_call c;
    struct osn_uac_acts a;
    osn_uac_call_start(&c, 0, 0, INFINITY, &a);
    osn_uac_call_keyed(&c, &cfg, 777);
    assert_int_equal(osn_uac_call_on_bye_request(&c, &a), 481); /* no 2xx yet: no dialog */
    uint32_t b = osn_uac_call_on_2xx(&c, &cfg, 1, &a);
    assert_false(b & OSN_UAC_BIT(OSN_UAC_DO_HOLD));
    assert_false(b & OSN_UAC_BIT(OSN_UAC_DO_ARM));
    assert_int_equal(osn_uac_call_on_bye_request(&c, &a), 200);
    assert_int_equal(a.bits, OSN_UAC_BIT(OSN_UAC_DO_HUNG_UP) | OSN_UAC_BIT(OSN_UAC_DO_END));
    assert_int_equal(osn_uac_call_on_bye_request(&c, &a), 481); /* over */
    assert_int_equal(osn_uac_call_on_bye_request(NULL, &a), 481);

    cfg.callee_hangs_up = 0; /* the caller hangs up: a hold, and a crossing BYE */
    osn_uac_call_start(&c, 0, 0, INFINITY, &a);
    osn_uac_call_keyed(&c, &cfg, 777);
    assert_true(osn_uac_call_on_2xx(&c, &cfg, 1, &a) & OSN_UAC_BIT(OSN_UAC_DO_HOLD));
    osn_uac_call_on_timer(&c, &a);
    assert_int_equal(a.bits, OSN_UAC_BIT(OSN_UAC_DO_BYE));
    assert_int_equal(osn_uac_call_on_bye_request(&c, &a), 200);
    assert_int_equal(a.bits, 0);
}

static void test_uac_call_machine(void **state)
{
    struct osn_uac_cfg cfg = {.timer_b = 32,
                              .retry = {.prob = 1, .max_retries = 1, .honour_retry_after = true},
                              .retry_until = INFINITY,
                              .patience = true};
    struct osn_uac_call c;
    struct osn_uac_acts a;
    (void)state;

    /* a good call: INVITE and patience; 100, 180 (samples); 2xx: stop the patience, ACK
     * (13.2.2.4), keep the dialog, good, hold; a 2xx copy: ACK only; hold over: BYE (15.1.1);
     * its 200 ends the call */
    osn_uac_call_start(&c, 10, 0, 5, &a);
    assert_int_equal(a.bits, DO(INVITE) | DO(ARM));
    assert_true(a.at == 15);
    osn_uac_call_on_invite(&c, &cfg, 10.25, OSN_SIP_TU_RESPONSE, 100, -1, &a);
    assert_int_equal(a.bits, DO(TRYING));
    assert_true(a.delay == 0.25);
    osn_uac_call_on_invite(&c, &cfg, 10.5, OSN_SIP_TU_RESPONSE, 180, -1, &a);
    assert_int_equal(a.bits, DO(SETUP));
    assert_true(a.delay == 0.5);
    osn_uac_call_on_invite(&c, &cfg, 11, OSN_SIP_TU_RESPONSE, 200, -1, &a);
    assert_int_equal(a.bits, DO(STOP) | DO(ACK) | DO(DIALOG) | DO(OUTCOME) | DO(HOLD));
    assert_int_equal(a.outcome, OSN_UAC_GOOD);
    assert_int_equal(c.state, OSN_UAC_S_UP);
    osn_uac_call_on_invite(&c, &cfg, 11.5, OSN_SIP_TU_RESPONSE, 200, -1, &a);
    assert_int_equal(a.bits, DO(ACK));
    osn_uac_call_on_timer(&c, &a);
    assert_int_equal(a.bits, DO(BYE));
    osn_uac_call_on_bye(&c, OSN_SIP_TU_RESPONSE, 100, &a);
    assert_int_equal(a.bits, 0);
    osn_uac_call_on_bye(&c, OSN_SIP_TU_RESPONSE, 200, &a);
    assert_int_equal(a.bits, DO(BYE_OK) | DO(END));
    assert_int_equal(c.state, OSN_UAC_S_DONE);

    /* a 503 with Retry-After 4, drawn delay 1: retried after 4 s (21.5.4); the next attempt's
     * 503 is the call's (max_retries 1) */
    osn_uac_call_start(&c, 0, 0, INFINITY, &a);
    assert_int_equal(a.bits, DO(INVITE)); /* no patience: no timer */
    osn_uac_call_on_invite(&c, &cfg, 0.1, OSN_SIP_TU_RESPONSE, 503, 4, &a);
    assert_int_equal(a.bits, DO(STOP) | DO(DRAW));
    osn_uac_call_retry(&c, &cfg, 0.1, 0.5, 1, &a);
    assert_int_equal(a.bits, DO(STOP) | DO(RETRY) | DO(ARM));
    assert_true(a.at == 4.1);
    osn_uac_call_on_timer(&c, &a);
    assert_int_equal(a.bits, DO(ATTEMPT));
    osn_uac_call_start(&c, 4.1, c.retries + 1u, INFINITY, &a);
    osn_uac_call_on_invite(&c, &cfg, 4.2, OSN_SIP_TU_RESPONSE, 503, -1, &a);
    assert_int_equal(a.bits, DO(STOP) | DO(OUTCOME) | DO(END));
    assert_int_equal(a.outcome, OSN_UAC_REJECTED);

    /* a retry due after retry_until (the node's drain) is not made */
    cfg.retry_until = 2;
    osn_uac_call_start(&c, 0, 0, INFINITY, &a);
    osn_uac_call_on_invite(&c, &cfg, 0.1, OSN_SIP_TU_TIMEOUT, 0, -1, &a);
    osn_uac_call_retry(&c, &cfg, 0.1, 0.5, 3, &a);
    assert_int_equal(a.bits, DO(STOP) | DO(OUTCOME) | DO(END));
    assert_int_equal(a.outcome, OSN_UAC_TIMEOUT);

    /* patience before any 1xx: nothing (9.1); the 180 brings the CANCEL; a 2xx that crossed it:
     * ACK and hang up at once, as a hold of 0 (15); abandoned */
    osn_uac_call_start(&c, 0, 0, 1, &a);
    osn_uac_call_on_timer(&c, &a);
    assert_int_equal(a.bits, 0);
    osn_uac_call_on_invite(&c, &cfg, 2, OSN_SIP_TU_RESPONSE, 180, -1, &a);
    assert_int_equal(a.bits, DO(CANCEL) | DO(SETUP));
    osn_uac_call_on_invite(&c, &cfg, 2.1, OSN_SIP_TU_RESPONSE, 200, -1, &a);
    assert_int_equal(a.bits, DO(STOP) | DO(ACK) | DO(DIALOG) | DO(OUTCOME) | DO(ARM));
    assert_true(a.at == 2.1);
    assert_int_equal(a.outcome, OSN_UAC_ABANDONED);

    /* the traffic's end: a call that is up hangs up; a retry due too late ends the call */
    osn_uac_call_start(&c, 0, 0, INFINITY, &a);
    osn_uac_call_on_invite(&c, &cfg, 0.1, OSN_SIP_TU_RESPONSE, 200, -1, &a);
    osn_uac_call_on_traffic_end(&c, &cfg, 0, &a);
    assert_int_equal(a.bits, DO(BYE));
    cfg.retry_until = INFINITY;
    osn_uac_call_start(&c, 0, 0, INFINITY, &a);
    osn_uac_call_on_invite(&c, &cfg, 0.1, OSN_SIP_TU_RESPONSE, 503, -1, &a);
    osn_uac_call_retry(&c, &cfg, 0.1, 0.5, 1, &a);
    cfg.retry_until = 0.5;
    osn_uac_call_on_traffic_end(&c, &cfg, 1.1, &a);
    assert_int_equal(a.bits, DO(OUTCOME) | DO(END));
    assert_int_equal(a.outcome, OSN_UAC_REJECTED);

    /* callers without a patience law: no attempt arms a timer at its start, so none is put
     * away (no STOP) when the 503 or the 2xx comes */
    cfg.patience = false;
    cfg.retry_until = INFINITY;
    osn_uac_call_start(&c, 0, 0, INFINITY, &a);
    osn_uac_call_on_invite(&c, &cfg, 0.1, OSN_SIP_TU_RESPONSE, 503, -1, &a);
    assert_int_equal(a.bits, DO(DRAW));
    osn_uac_call_retry(&c, &cfg, 0.1, 0.5, 1, &a);
    assert_int_equal(a.bits, DO(RETRY) | DO(ARM));
    osn_uac_call_start(&c, 1.1, 1, INFINITY, &a);
    osn_uac_call_on_invite(&c, &cfg, 1.2, OSN_SIP_TU_RESPONSE, 200, -1, &a);
    assert_int_equal(a.bits, DO(ACK) | DO(DIALOG) | DO(OUTCOME) | DO(HOLD));
    /* a 1xx after the 2xx (none came before it) asks nothing, by either entry */
    double d = -1;
    assert_int_equal(osn_uac_call_on_1xx(&c, 1.3, 100, &d), 0);
    osn_uac_call_on_invite(&c, &cfg, 1.3, OSN_SIP_TU_RESPONSE, 180, -1, &a);
    assert_int_equal(a.bits, 0);
    assert_true(d == -1);
    /* in INVITING the direct entry decides what osn_uac_call_on_invite does: the first 100 */
    osn_uac_call_start(&c, 2, 0, INFINITY, &a);
    assert_int_equal(osn_uac_call_on_1xx(&c, 2.125, 100, &d), DO(TRYING));
    assert_true(d == 0.125);
    assert_int_equal(osn_uac_call_on_1xx(&c, 2.25, 100, &d), 0);
    osn_uac_call_start(&c, 0, 0, INFINITY, &a);
    osn_uac_call_on_invite(&c, &cfg, 0.1, OSN_SIP_TU_RESPONSE, 486, -1, &a);
    assert_int_equal(a.bits, DO(OUTCOME) | DO(END));

    /* the direct entries of the 2xx and of the other events decide what osn_uac_call_on_invite
     * does (it calls them): the first 2xx sets the call up, good within Timer B (32 s here) and
     * a timeout after it; every copy is ACKed (RFC 3261 13.2.2.4), in UP and after the call's
     * end; a 503 ends the attempt with its Retry-After (21.5.4), past INVITING nothing; Timer B
     * (17.1.1.2) is a timeout */
    cfg.retry.prob = 0;
    a = (struct osn_uac_acts){.outcome = 99, .at = -1};
    osn_uac_call_start(&c, 3, 0, INFINITY, &a);
    assert_int_equal(osn_uac_call_on_2xx(&c, &cfg, 3.5, &a),
                     DO(ACK) | DO(DIALOG) | DO(OUTCOME) | DO(HOLD));
    assert_int_equal(a.outcome, OSN_UAC_GOOD);
    assert_int_equal(c.state, OSN_UAC_S_UP);
    assert_int_equal(osn_uac_call_on_2xx(&c, &cfg, 3.75, &a), DO(ACK));
    assert_int_equal(osn_uac_call_on_end(&c, &cfg, OSN_SIP_TU_RESPONSE, 503, 2, &a), 0);
    assert_int_equal(c.state, OSN_UAC_S_UP);
    osn_uac_call_start(&c, 3, 0, INFINITY, &a);
    assert_int_equal(osn_uac_call_on_2xx(&c, &cfg, 35.5, &a),
                     DO(ACK) | DO(DIALOG) | DO(OUTCOME) | DO(HOLD));
    assert_int_equal(a.outcome, OSN_UAC_TIMEOUT);
    osn_uac_call_start(&c, 3, 0, INFINITY, &a);
    a.retry_after = -7;
    assert_int_equal(osn_uac_call_on_end(&c, &cfg, OSN_SIP_TU_RESPONSE, 503, 2, &a),
                     DO(OUTCOME) | DO(END));
    assert_int_equal(a.outcome, OSN_UAC_REJECTED);
    assert_int_equal(a.retry_after, 2);
    assert_int_equal(c.state, OSN_UAC_S_DONE);
    assert_int_equal(osn_uac_call_on_2xx(&c, &cfg, 4, &a), DO(ACK));
    assert_int_equal(osn_uac_call_on_end(&c, &cfg, OSN_SIP_TU_RESPONSE, 503, 2, &a), 0);
    osn_uac_call_start(&c, 3, 0, INFINITY, &a);
    assert_int_equal(osn_uac_call_on_end(&c, &cfg, OSN_SIP_TU_RESPONSE, 180, -1, &a), 0);
    assert_int_equal(osn_uac_call_on_end(&c, &cfg, OSN_SIP_TU_TIMEOUT, 0, -1, &a),
                     DO(OUTCOME) | DO(END));
    assert_int_equal(a.outcome, OSN_UAC_TIMEOUT);
    cfg.retry.prob = 1;

    /* the hold draw: mean x a unit exponential of the key and the call alone */
    assert_true(osn_uac_hold_draw(2, 99, 5) == 2 * osn_uac_hold_draw(1, 99, 5));
    assert_true(osn_uac_hold_draw(1, 99, 5) != osn_uac_hold_draw(1, 99, 6));
}
#undef DO

/* A proxy's client half sheds with 503 and the element's Retry-After (0: none). */
static void test_shed_retry_after(void **state)
{
    (void)state;
    struct osn_ctl_cfg cc;
    struct osn_ctl *cli = NULL;
    osn_ctl_cfg_default(&cc);
    cc.loss.cat1 = 100;
    assert_int_equal(osn_ctl_new_kind(&cli, OSN_CTL_KIND_LOSS, &cc), 0);
    /* oc = 100: shed every new INVITE (RFC 7339 5.6) */
    struct osn_sip_oc oc = {0};
    struct osn_ctl_feedback fb = {0};
    fb.algo = OSN_CTL_ALGO_LOSS;
    fb.oc = 100;
    fb.validity = 60;
    fb.seq = 1;
    osn_elem_fb_to_oc(&fb, &oc);
    osn_proxy_on_feedback(cli, 0, &oc);
    struct osn_elem e = {.role = OSN_ELEM_PROXY, .cli = cli};
    struct osn_elem_actions a;
    osn_elem_on_request(&e, 1, OSN_SIP_INVITE, 70, false, true, false, NULL, &a);
    assert_int_equal(a.n, 1);
    assert_int_equal(a.a[0].status, 503);
    assert_int_equal(a.a[0].retry_after, -1);
    e.retry_after = 4;
    osn_elem_on_request(&e, 1, OSN_SIP_INVITE, 70, false, true, false, NULL, &a);
    assert_int_equal(a.a[0].status, 503);
    assert_int_equal(a.a[0].retry_after, 4);
    osn_ctl_free(cli);
}

/* The caller's client half (issue 30, osn_uac_call_admit, RFC 7339 5.3): none, or one without
 * feedback, admits the attempt (its acts unchanged); after oc = 100 (loss) the attempt is shed:
 * SHED, OUTCOME (rejected) and END, no INVITE, no patience armed; with retries left, SHED and
 * DRAW, and the retry comes as after a 503 without Retry-After. */
static void test_uac_client_half(void **state)
{
    (void)state;
    struct osn_ctl_cfg cc;
    struct osn_ctl *cli = NULL;
    osn_ctl_cfg_default(&cc);
    assert_int_equal(osn_ctl_new_kind(&cli, OSN_CTL_KIND_LOSS, &cc), 0);
    struct osn_uac_cfg cfg = {.timer_b = 32, .retry_until = INFINITY, .patience = true};
    struct osn_uac_call c;
    struct osn_uac_acts a;
    const uint32_t start = OSN_UAC_BIT(OSN_UAC_DO_INVITE) | OSN_UAC_BIT(OSN_UAC_DO_ARM);
    osn_uac_call_start(&c, 0, 0, 5, &a);
    assert_false(osn_uac_call_admit(&c, &cfg, NULL, 0, &a));
    assert_int_equal(a.bits, start);
    assert_false(osn_uac_call_admit(&c, &cfg, cli, 0, &a)); /* no feedback yet */
    assert_int_equal(a.bits, start);

    struct osn_ctl_feedback fb = {.algo = OSN_CTL_ALGO_LOSS, .oc = 100, .validity = 60, .seq = 1};
    struct osn_sip_oc oc;
    osn_elem_fb_to_oc(&fb, &oc);
    osn_proxy_on_feedback(cli, 0, &oc);
    osn_uac_call_start(&c, 1, 0, 5, &a);
    assert_true(osn_uac_call_admit(&c, &cfg, cli, 1, &a));
    assert_int_equal(a.bits, OSN_UAC_BIT(OSN_UAC_DO_SHED) | OSN_UAC_BIT(OSN_UAC_DO_OUTCOME) |
                                     OSN_UAC_BIT(OSN_UAC_DO_END));
    assert_int_equal(a.outcome, OSN_UAC_REJECTED);
    assert_int_equal(c.state, OSN_UAC_S_DONE);

    cfg.retry = (struct osn_uac_retry_cfg){.prob = 1, .max_retries = 2, .honour_retry_after = 1};
    osn_uac_call_start(&c, 2, 0, 5, &a);
    assert_true(osn_uac_call_admit(&c, &cfg, cli, 2, &a));
    assert_int_equal(a.bits, OSN_UAC_BIT(OSN_UAC_DO_SHED) | OSN_UAC_BIT(OSN_UAC_DO_DRAW));
    assert_int_equal(a.retry_after, -1);
    osn_uac_call_retry(&c, &cfg, 2, 0.5, 1.5, &a);
    assert_int_equal(a.bits, OSN_UAC_BIT(OSN_UAC_DO_SHED) | OSN_UAC_BIT(OSN_UAC_DO_RETRY) |
                                     OSN_UAC_BIT(OSN_UAC_DO_ARM));
    assert_true(a.at == 3.5);
    /* the last retry shed is the call's: rejected */
    osn_uac_call_start(&c, 3.5, 2, 5, &a);
    assert_true(osn_uac_call_admit(&c, &cfg, cli, 3.5, &a));
    assert_int_equal(a.bits, OSN_UAC_BIT(OSN_UAC_DO_SHED) | OSN_UAC_BIT(OSN_UAC_DO_OUTCOME) |
                                     OSN_UAC_BIT(OSN_UAC_DO_END));
    osn_ctl_free(cli);
}

/* pi's cap at a proxy (osn_proxy_retrans_allowed): with a cap of 0 an INVITE copy is held back;
 * a BYE copy only with cap_noninvite (the papers' cap on the retransmission message rate); a
 * response copy never. */
static void test_proxy_retrans_cap(void **state)
{
    (void)state;
    for (int all = 0; all <= 1; all++) {
        struct osn_ctl_cfg cc;
        struct osn_ctl *cli = NULL;
        osn_ctl_cfg_default(&cc);
        cc.pi.r_max = 0;
        cc.pi.cap_noninvite = all;
        assert_int_equal(osn_ctl_new_kind(&cli, OSN_CTL_KIND_PI, &cc), 0);
        struct osn_sip_msg inv = {.method = OSN_SIP_INVITE}, bye = {.method = OSN_SIP_BYE};
        struct osn_sip_msg ok = {.method = OSN_SIP_INVITE, .status = 200};
        assert_false(osn_proxy_retrans_allowed(cli, 1, &inv));
        assert_true(osn_proxy_retrans_allowed(cli, 1, &bye) == !all);
        assert_true(osn_proxy_retrans_allowed(cli, 1, &ok));
        assert_true(osn_proxy_retrans_allowed(NULL, 1, &bye));
        osn_ctl_free(cli);
    }
}

static void test_proxy_decisions(void **state)
{
    (void)state;
    assert_int_equal(osn_proxy_on_request(NULL, 0, OSN_SIP_INVITE, false), OSN_PROXY_FORWARD);
    assert_int_equal(osn_proxy_on_request(NULL, 0, OSN_SIP_INVITE, true), OSN_PROXY_LATE_COPY);
    assert_int_equal(
            osn_proxy_on_client_event(NULL, 1, 0, OSN_SIP_TU_RESPONSE, 100, OSN_SIP_PROCEEDING),
            OSN_PROXY_NOTHING);
    assert_int_equal(
            osn_proxy_on_client_event(NULL, 1, 0, OSN_SIP_TU_RESPONSE, 180, OSN_SIP_PROCEEDING),
            OSN_PROXY_RELAY);
    assert_int_equal(
            osn_proxy_on_client_event(NULL, 1, 0, OSN_SIP_TU_RESPONSE, 200, OSN_SIP_NOSTATE),
            OSN_PROXY_NOTHING);
    assert_int_equal(
            osn_proxy_on_client_event(NULL, 1, 0, OSN_SIP_TU_TIMEOUT, 0, OSN_SIP_PROCEEDING),
            OSN_PROXY_408);
    assert_int_equal(
            osn_proxy_on_client_event(NULL, 1, 0, OSN_SIP_TU_TIMEOUT, 0, OSN_SIP_COMPLETED),
            OSN_PROXY_NOTHING);
    /* RFC 3261 16.9: a transport error is a 503 from the branch; 16.7 step 6: the only response
     * a 503, the proxy answers 500 upstream (never the 503 itself), while upstream waits. */
    assert_int_equal(osn_proxy_on_client_event(NULL, 1, 0, OSN_SIP_TU_TRANSPORT_ERROR, 0,
                                               OSN_SIP_PROCEEDING),
                     OSN_PROXY_500);
    assert_int_equal(
            osn_proxy_on_client_event(NULL, 1, 0, OSN_SIP_TU_TRANSPORT_ERROR, 0, OSN_SIP_TRYING),
            OSN_PROXY_500);
    assert_int_equal(
            osn_proxy_on_client_event(NULL, 1, 0, OSN_SIP_TU_TRANSPORT_ERROR, 0, OSN_SIP_COMPLETED),
            OSN_PROXY_NOTHING);
    struct osn_elem e1 = {.role = OSN_ELEM_PROXY};
    struct osn_elem_actions a1;
    osn_elem_on_client_event(&e1, 1, 0, OSN_SIP_TU_TRANSPORT_ERROR, 0, -1, OSN_SIP_INVITE,
                             OSN_SIP_PROCEEDING, &a1);
    assert_int_equal(a1.n, 1);
    assert_int_equal(a1.a[0].kind, OSN_ELEM_A_RESPOND);
    assert_int_equal(a1.a[0].status, 500);
    assert_int_equal(a1.a[0].count, OSN_ELEM_C_500);

    /* A forwarded request: new branch, the previous hop's oc gone, the rest kept. */
    struct osn_sip_msg in = {.method = OSN_SIP_INVITE, .cseq = 7, .call_id = 99, .branch = 1};
    in.oc.flags = OSN_SIP_OC_PRESENT;
    struct osn_sip_msg out;
    osn_proxy_forward_request(&in, 42, &out);
    assert_true(out.branch == 42 && out.cseq == 7 && out.call_id == 99);
    assert_int_equal(out.oc.flags, 0);
}

/* RFC 7339 feedback survives the trip through the Via parameters. */
static void test_oc_round_trip(void **state)
{
    (void)state;
    struct osn_ctl_feedback fb = {
            .algo = OSN_CTL_ALGO_LOSS, .oc = 37, .validity = 1.5, .seq = 1234567};
    struct osn_sip_oc oc;
    struct osn_ctl_feedback back;
    osn_elem_fb_to_oc(&fb, &oc);
    assert_int_equal(oc.algo, OSN_SIP_ALGO_LOSS);
    assert_int_equal(oc.value, 37);
    assert_int_equal(oc.validity_ms, 1500);
    assert_true(oc.seq_int == 12 && oc.seq_frac == 34567);
    assert_true(osn_elem_oc_to_fb(&oc, &back));
    assert_int_equal(back.algo, OSN_CTL_ALGO_LOSS);
    assert_true(back.oc == 37 && back.validity == 1.5 && back.seq == 1234567);
    /* No algorithm: no oc at all, and nothing read back. */
    fb.algo = OSN_CTL_ALGO_NONE;
    osn_elem_fb_to_oc(&fb, &oc);
    assert_int_equal(oc.flags, 0);
    assert_false(osn_elem_oc_to_fb(&oc, &back));
    /* The offer of a client half: oc with loss among the algorithms (RFC 7339 4.2). */
    struct osn_sip_oc offer = {0};
    osn_elem_oc_offer(&offer);
    assert_true(offer.flags & OSN_SIP_OC_PRESENT);
    assert_true(offer.algo & OSN_SIP_ALGO_LOSS);
}

/* The server: free kinds pass unqueued, a full buffer drops, queue area and busy time integrate
 * exactly, FIFO order. */
static void test_server_queue(void **state)
{
    double cost[OSN_ELEM_NKINDS] = {[OSN_ELEM_K_INVITE] = 1, [OSN_ELEM_K_RESP] = 0};
    struct osn_elem_server s;
    struct osn_elem_item it[4] = {{0}}, *ev;
    int fifo;
    (void)state;

    osn_elem_server_init(&s, cost, 2, NULL, 0);
    assert_int_equal(osn_elem_server_arrive(&s, 0, &it[0], OSN_ELEM_K_RESP, OSN_CTL_MSG_RESPONSE,
                                            false, false, &ev),
                     OSN_ELEM_HANDLE_NOW);
    for (int i = 1; i <= 2; i++)
        assert_int_equal(osn_elem_server_arrive(&s, 0, &it[i], OSN_ELEM_K_INVITE,
                                                OSN_CTL_MSG_INVITE, true, false, &ev),
                         OSN_ELEM_QUEUED);
    assert_int_equal(osn_elem_server_arrive(&s, 0, &it[3], OSN_ELEM_K_INVITE, OSN_CTL_MSG_INVITE,
                                            true, false, &ev),
                     OSN_ELEM_DROPPED);
    assert_true(s.dropped == 1);
    assert_ptr_equal(osn_elem_server_next(&s, 0, &fifo), &it[1]);
    osn_elem_server_begin(&s, &it[1]);
    assert_null(osn_elem_server_next(&s, 0, &fifo)); /* busy */
    assert_ptr_equal(osn_elem_server_depart(&s, 1), &it[1]);
    assert_ptr_equal(osn_elem_server_next(&s, 1, &fifo), &it[2]);
    osn_elem_server_begin(&s, &it[2]);
    assert_ptr_equal(osn_elem_server_depart(&s, 2), &it[2]);
    osn_elem_server_close(&s, 4);
    /* two messages for 1 s, one for 1 s, none for 2 s */
    assert_true(s.area == 3);
    assert_true(s.busy == 2);
}

/* RFC 7339 5.3 and RFC 3261 21.5.4: the 503 of a request the server half sheds carries the
 * controller's Retry-After (here `none` rejecting at the full buffer with retry_after 7), as the
 * client half's does; 0 means none. */
static void test_server_shed_retry_after(void **state)
{
    double cost[OSN_ELEM_NKINDS] = {[OSN_ELEM_K_INVITE] = 1, [OSN_ELEM_K_REJECT] = 0.1};
    struct osn_ctl_cfg cc;
    struct osn_ctl *srv = NULL;
    struct osn_elem_server s;
    struct osn_elem_item it[2] = {{0}}, *ev;
    struct osn_elem_actions a;
    struct osn_sip_out o = {0};
    (void)state;
    osn_ctl_cfg_default(&cc);
    cc.none.reject_when_full = true;
    cc.none.retry_after = 7;
    assert_int_equal(osn_ctl_new_kind(&srv, OSN_CTL_KIND_NONE, &cc), 0);
    osn_elem_server_init(&s, cost, 1, srv, 0);
    assert_int_equal(osn_elem_server_arrive(&s, 0, &it[0], OSN_ELEM_K_INVITE, OSN_CTL_MSG_INVITE,
                                            true, false, &ev),
                     OSN_ELEM_QUEUED);
    osn_elem_server_arrive(&s, 0, &it[1], OSN_ELEM_K_INVITE, OSN_CTL_MSG_INVITE, true, false, &ev);
    assert_true(it[1].reject);
    assert_int_equal(it[1].retry_after, 7);
    osn_elem_stxn_started(it[1].reject, it[1].retry_after, &o, &a);
    assert_int_equal(a.n, 1);
    assert_int_equal(a.a[0].status, 503);
    assert_int_equal(a.a[0].retry_after, 7);
    osn_elem_stxn_started(true, 0, &o, &a);
    assert_int_equal(a.a[0].retry_after, -1);
    osn_ctl_free(srv);
}

/* RFC 3261 15.1.2 and 9.2: a UAS answers a BYE or CANCEL for a call it does not know 481, one
 * for a call it knows 200. RFC 3261 16.3 step 4: a proxy answers a request that looped back to
 * it 482, before its client half sees it; 483 comes first. 18.1.1: a forward that cannot be sent
 * for its size is 513, any other failure 500. */
static void test_rfc_answers(void **state)
{
    struct osn_sip_cfg cfg;
    struct osn_uas_2xx u = {0};
    struct osn_elem_actions a;
    (void)state;
    osn_sip_cfg_default(&cfg);
    struct osn_elem uas = {.role = OSN_ELEM_UAS, .sip = &cfg};
    struct osn_elem px = {.role = OSN_ELEM_PROXY, .sip = &cfg};
    int methods[] = {OSN_SIP_BYE, OSN_SIP_CANCEL};
    for (int i = 0; i < 2; i++) {
        osn_elem_on_request(&uas, 0, methods[i], 70, false, false, false, &u, &a);
        assert_int_equal(a.n, 1);
        assert_int_equal(a.a[0].kind, OSN_ELEM_A_RESPOND);
        assert_int_equal(a.a[0].status, 481);
        assert_int_equal(a.a[0].count, OSN_ELEM_C_481);
        osn_elem_on_request(&uas, 0, methods[i], 70, false, true, false, &u, &a);
        assert_int_equal(a.n, 1);
        assert_int_equal(a.a[0].status, 200);
    }
    /* An INVITE needs no known call. */
    osn_elem_on_request(&uas, 0, OSN_SIP_INVITE, 70, false, false, false, &u, &a);
    assert_int_equal(a.a[2].status, 200);

    osn_elem_on_request(&px, 0, OSN_SIP_INVITE, 69, false, false, true, NULL, &a);
    assert_int_equal(a.n, 1);
    assert_int_equal(a.a[0].kind, OSN_ELEM_A_RESPOND);
    assert_int_equal(a.a[0].status, 482);
    assert_int_equal(a.a[0].count, OSN_ELEM_C_482);
    osn_elem_on_request(&px, 0, OSN_SIP_INVITE, 0, false, false, true, NULL, &a);
    assert_int_equal(a.a[0].status, 483);
    osn_elem_on_request(&px, 0, OSN_SIP_INVITE, 69, false, false, false, NULL, &a);
    assert_int_equal(a.a[0].kind, OSN_ELEM_A_FORWARD);

    osn_elem_on_forward_failed(true, &a);
    assert_int_equal(a.n, 1);
    assert_int_equal(a.a[0].status, 513);
    assert_int_equal(a.a[0].count, OSN_ELEM_C_513);
    osn_elem_on_forward_failed(false, &a);
    assert_int_equal(a.a[0].status, 500);

    osn_elem_on_relay_failed(486, &a); /* a final one ends the server transaction: 502 */
    assert_int_equal(a.n, 2);
    assert_int_equal(a.a[0].count, OSN_ELEM_C_STRAY);
    assert_int_equal(a.a[1].kind, OSN_ELEM_A_RESPOND);
    assert_int_equal(a.a[1].status, 502);
    osn_elem_on_relay_failed(180, &a); /* a provisional one is dropped, counted */
    assert_int_equal(a.n, 1);
    assert_int_equal(a.a[0].kind, OSN_ELEM_A_COUNT);
}

/* RFC 3261 9.2 and 16.10: a CANCEL is answered 200 hop by hop while its INVITE's transaction
 * exists, 481 when there is none; a UAS answers the pending INVITE 487; a proxy passes the
 * CANCEL on only to a branch with a provisional and no final response (9.1); RFC 7339 7.2: the
 * client half throttles it as a second-category request (a BYE's). */
static void test_cancel(void **state)
{
    struct osn_sip_cfg cfg;
    struct osn_elem_actions a;
    (void)state;
    osn_sip_cfg_default(&cfg);
    struct osn_elem uas = {.role = OSN_ELEM_UAS, .sip = &cfg};
    struct osn_elem px = {.role = OSN_ELEM_PROXY, .sip = &cfg};

    /* No INVITE to cancel: 481, whatever the element. */
    osn_elem_on_cancel(&uas, 0, OSN_SIP_NOSTATE, OSN_SIP_NOSTATE, &a);
    assert_int_equal(a.n, 1);
    assert_int_equal(a.a[0].status, 481);
    assert_int_equal(a.a[0].count, OSN_ELEM_C_481);
    osn_elem_on_cancel(&px, 0, OSN_SIP_NOSTATE, OSN_SIP_NOSTATE, &a);
    assert_int_equal(a.n, 1);
    assert_int_equal(a.a[0].status, 481);

    /* UAS, INVITE pending: 200 to the CANCEL, then 487 to the INVITE. */
    osn_elem_on_cancel(&uas, 0, OSN_SIP_PROCEEDING, OSN_SIP_NOSTATE, &a);
    assert_int_equal(a.n, 2);
    assert_int_equal(a.a[0].kind, OSN_ELEM_A_RESPOND);
    assert_int_equal(a.a[0].status, 200);
    assert_int_equal(a.a[1].kind, OSN_ELEM_A_RESPOND_INVITE);
    assert_int_equal(a.a[1].status, 487);
    assert_int_equal(a.a[1].count, OSN_ELEM_C_487);
    /* UAS, INVITE answered (2xx sent: Accepted; a final non-2xx: Completed): 200 only. */
    int done[] = {OSN_SIP_ACCEPTED, OSN_SIP_COMPLETED, OSN_SIP_CONFIRMED};
    for (int i = 0; i < 3; i++) {
        osn_elem_on_cancel(&uas, 0, done[i], OSN_SIP_NOSTATE, &a);
        assert_int_equal(a.n, 1);
        assert_int_equal(a.a[0].status, 200);
    }

    /* Proxy, INVITE pending, branch with a 1xx: 200 and the CANCEL passed on, counted. */
    osn_elem_on_cancel(&px, 0, OSN_SIP_PROCEEDING, OSN_SIP_PROCEEDING, &a);
    assert_int_equal(a.n, 2);
    assert_int_equal(a.a[0].status, 200);
    assert_int_equal(a.a[1].kind, OSN_ELEM_A_CANCEL_BRANCH);
    assert_int_equal(a.a[1].count, OSN_ELEM_C_CANCEL_FWD);
    /* Branch without a provisional response yet: 200, and the CANCEL kept for it (9.1: not
     * sent before a provisional response), to go at the first one. */
    osn_elem_on_cancel(&px, 0, OSN_SIP_PROCEEDING, OSN_SIP_CALLING, &a);
    assert_int_equal(a.n, 2);
    assert_int_equal(a.a[0].status, 200);
    assert_int_equal(a.a[1].kind, OSN_ELEM_A_CANCEL_LATER);
    assert_int_equal(a.a[1].count, OSN_ELEM_C_NONE);
    /* The kept CANCEL: a 100 or a 180 sends it (counted as passed on); a final response or the
     * branch's end drops it; no response yet keeps it. */
    const int prov[] = {100, 180, 183};
    for (int i = 0; i < 3; i++) {
        assert_false(osn_elem_on_cancel_later(OSN_SIP_TU_RESPONSE, prov[i], &a));
        assert_int_equal(a.n, 1);
        assert_int_equal(a.a[0].kind, OSN_ELEM_A_CANCEL_BRANCH);
        assert_int_equal(a.a[0].count, OSN_ELEM_C_CANCEL_FWD);
    }
    const int fin[] = {200, 486, 503};
    for (int i = 0; i < 3; i++) {
        assert_false(osn_elem_on_cancel_later(OSN_SIP_TU_RESPONSE, fin[i], &a));
        assert_int_equal(a.n, 0);
    }
    assert_false(osn_elem_on_cancel_later(OSN_SIP_TU_TIMEOUT, 0, &a));
    assert_int_equal(a.n, 0);
    assert_false(osn_elem_on_cancel_later(OSN_SIP_TU_TRANSPORT_ERROR, 0, &a));
    assert_int_equal(a.n, 0);
    assert_true(osn_elem_on_cancel_later(OSN_SIP_TU_NONE, 0, &a));
    assert_int_equal(a.n, 0);
    /* A branch with a final response (too late), or none: 200, nothing passed on or kept. */
    int branch[] = {OSN_SIP_COMPLETED, OSN_SIP_ACCEPTED, OSN_SIP_NOSTATE};
    for (int i = 0; i < 3; i++) {
        osn_elem_on_cancel(&px, 0, OSN_SIP_PROCEEDING, branch[i], &a);
        assert_int_equal(a.n, 1);
        assert_int_equal(a.a[0].status, 200);
    }
    /* The 2xx crossed it: the INVITE's server transaction is Accepted. */
    osn_elem_on_cancel(&px, 0, OSN_SIP_ACCEPTED, OSN_SIP_ACCEPTED, &a);
    assert_int_equal(a.n, 1);
    assert_int_equal(a.a[0].status, 200);

    /* A client half under loss with oc = 100 sheds all of both categories: 503, not passed on.
     * With oc = 0 it sends it. */
    struct osn_ctl_cfg cc;
    osn_ctl_cfg_default(&cc);
    assert_int_equal(osn_ctl_new(&px.cli, "loss", &cc), 0);
    struct osn_sip_oc oc = {.flags = OSN_SIP_OC_PRESENT | OSN_SIP_OC_VALUE | OSN_SIP_OC_ALGO |
                                     OSN_SIP_OC_VALIDITY | OSN_SIP_OC_SEQ,
                            .algo = OSN_SIP_ALGO_LOSS,
                            .value = 100,
                            .validity_ms = 10000,
                            .seq_int = 1};
    osn_proxy_on_feedback(px.cli, 0, &oc);
    osn_elem_on_cancel(&px, 0.1, OSN_SIP_PROCEEDING, OSN_SIP_PROCEEDING, &a);
    assert_int_equal(a.n, 1);
    assert_int_equal(a.a[0].status, 503);
    assert_int_equal(a.a[0].count, OSN_ELEM_C_503);
    osn_ctl_free(px.cli);

    /* Its kind and class: a CANCEL has its own cost, and the controller sees a BYE's class. */
    struct osn_sip_msg m = {.method = OSN_SIP_CANCEL};
    assert_int_equal(osn_elem_kind(&m, false), OSN_ELEM_K_CANCEL);
    assert_int_equal(osn_elem_kind(&m, true), OSN_ELEM_K_RETX);
    assert_int_equal(osn_elem_ctl_msg(OSN_ELEM_K_CANCEL, OSN_SIP_CANCEL, false), OSN_CTL_MSG_BYE);
}

/* The UAS's ring delay: a new INVITE gets its 180 and a ring timer now + ring, the timer its 200
 * (with Contact and SDP, a good call, the 2xx timer armed) while the INVITE is pending, nothing
 * once a CANCEL has answered it 487 (Completed) or its transaction is gone. A re-INVITE and a
 * call with no ring delay are answered at once. The law: none 0, det its mean, exp -mean ln u. */
static void test_uas_ring(void **state)
{
    (void)state;
    struct osn_sip_cfg sc;
    osn_sip_cfg_default(&sc);
    struct osn_elem uas = {.role = OSN_ELEM_UAS, .sip = &sc};
    struct osn_uas_2xx u = {0};
    struct osn_elem_actions a;
    struct osn_uas_request q = {.method = OSN_SIP_INVITE, .ring = 2.5};
    osn_elem_on_uas_request(&uas, 10, &q, false, &u, &a);
    assert_int_equal(a.n, 3);
    assert_int_equal(a.a[0].count, OSN_ELEM_C_FORWARDED);
    assert_int_equal(a.a[1].kind, OSN_ELEM_A_RESPOND);
    assert_int_equal(a.a[1].status, 180);
    assert_int_equal(a.a[1].with, OSN_ELEM_W_CONTACT);
    assert_int_equal(a.a[2].kind, OSN_ELEM_A_ARM_RING);
    assert_true(a.at == 12.5);
    osn_elem_on_ring_timer(&uas, 12.5, OSN_SIP_PROCEEDING, &u, &a);
    assert_int_equal(a.n, 2);
    assert_int_equal(a.a[0].kind, OSN_ELEM_A_RESPOND);
    assert_int_equal(a.a[0].status, 200);
    assert_int_equal(a.a[0].count, OSN_ELEM_C_CALL_OK);
    assert_int_equal(a.a[0].with, OSN_ELEM_W_CONTACT | OSN_ELEM_W_SDP);
    assert_int_equal(a.a[1].kind, OSN_ELEM_A_ARM_2XX);
    assert_true(a.at == 12.5 + sc.t1);
    const int late[] = {OSN_SIP_COMPLETED, OSN_SIP_CONFIRMED, OSN_SIP_TERMINATED, OSN_SIP_NOSTATE};
    for (int i = 0; i < 4; i++) {
        osn_elem_on_ring_timer(&uas, 12.5, late[i], &u, &a);
        assert_int_equal(a.n, 0);
    }
    q.in_dialog = q.known = true; /* a re-INVITE: 200 at once, no 180, no ring */
    osn_elem_on_uas_request(&uas, 20, &q, false, &u, &a);
    assert_int_equal(a.a[0].status, 200);
    assert_int_equal(a.a[a.n - 1].kind, OSN_ELEM_A_ARM_2XX);
    q = (struct osn_uas_request){.method = OSN_SIP_INVITE}; /* no ring: 180 and 200 together */
    osn_elem_on_uas_request(&uas, 20, &q, false, &u, &a);
    assert_int_equal(a.a[1].status, 180);
    assert_int_equal(a.a[2].status, 200);
    assert_true(osn_uas_ring_delay(OSN_UAS_RING_NONE, 3, 0.5) == 0);
    assert_true(osn_uas_ring_delay(OSN_UAS_RING_DET, 3, 0.5) == 3);
    assert_true(fabs(osn_uas_ring_delay(OSN_UAS_RING_EXP, 3, exp(-2)) - 6) < 1e-12);
}

/* The per-source budget: a burst of max(rate, 1), then one 503 and nothing until a token comes
 * back; never more passes than rate x time + burst. */
/* One proxy's forwarding of a request through the route set, as RFC 3261 16.4 and 16.6 step 7
 * say, told with proxy names: returns where the request goes ('U' the Request-URI, 'N' the
 * configured next hop, else the name of the Route value it goes to) and pops our values. A
 * proxy's name in either case names it ('e' is proxy E's URI with ;transport=tcp, 'E' its URI
 * without), as the node's URIs of one address and port name it whatever their transport. */
static char route_step(char self, char *route, int *nroute, int method, bool in_dialog, bool rr,
                       bool *record)
{
    self = (char)toupper(self);
    struct osn_proxy_route_in in = {.method = method,
                                    .nroute = *nroute,
                                    .top_is_us = *nroute > 0 && toupper(route[0]) == self,
                                    .second_is_us = *nroute > 1 && toupper(route[1]) == self,
                                    .in_dialog = in_dialog,
                                    .record_route = rr};
    struct osn_proxy_route_out out;
    osn_proxy_route(&in, &out);
    *record = out.record_route;
    for (int k = 0; k < out.pop; k++) {
        for (int i = 1; i < *nroute; i++)
            route[i - 1] = route[i];
        (*nroute)--;
    }
    return out.target == OSN_PROXY_TO_URI ? 'U' : out.target == OSN_PROXY_TO_ROUTE ? route[0] : 'N';
}

/* A dialog through two proxies, edge 'E' (next to the caller) and core 'C' (next to the
 * callee), as RFC 3261 12.1 and 16.12 tell it: the INVITE collects Record-Route (each proxy
 * inserts its value on top, 16.6 step 4), the callee's route set is the Record-Route in order
 * (12.1.1: C, E), the caller's the reverse (12.1.2: E, C); each in-dialog request then visits
 * the proxies in its sender's route-set order, each removing its own value (16.4), and the last
 * one sends it to the Request-URI, the remote target. */
static void test_proxy_route(void **state)
{
    char rr[4], route[4];
    int nrr = 0, nroute;
    bool record;
    (void)state;

    /* The INVITE: no Route, no To tag; each proxy sends it to its next hop, Record-Routing. */
    assert_int_equal(route_step('E', route, &(int){0}, OSN_SIP_INVITE, false, true, &record), 'N');
    assert_true(record);
    rr[nrr++] = 'E';
    assert_int_equal(route_step('C', route, &(int){0}, OSN_SIP_INVITE, false, true, &record), 'N');
    assert_true(record);
    memmove(rr + 1, rr, (size_t)nrr++); /* on top */
    rr[0] = 'C';
    assert_memory_equal(rr, "CE", 2);

    /* The caller's BYE (route set E, C): edge -> core -> the callee's Contact. */
    memcpy(route, "EC", 2), nroute = 2;
    assert_int_equal(route_step('E', route, &nroute, OSN_SIP_BYE, true, true, &record), 'C');
    assert_false(record); /* 16.6 step 4: only a dialog-creating request */
    assert_int_equal(nroute, 1);
    assert_int_equal(route_step('C', route, &nroute, OSN_SIP_BYE, true, true, &record), 'U');
    assert_int_equal(nroute, 0);

    /* The callee's BYE (route set C, E): core -> edge -> the caller's Contact. */
    memcpy(route, rr, 2), nroute = 2;
    assert_int_equal(route_step('C', route, &nroute, OSN_SIP_BYE, true, true, &record), 'E');
    assert_int_equal(route_step('E', route, &nroute, OSN_SIP_BYE, true, true, &record), 'U');
    assert_int_equal(nroute, 0);

    /* The ACK of the 2xx and a re-INVITE follow the same route set and Record-Route nothing
     * (the route set is fixed when the dialog is made, 12.2). */
    memcpy(route, "EC", 2), nroute = 2;
    assert_int_equal(route_step('E', route, &nroute, OSN_SIP_ACK, true, true, &record), 'C');
    assert_false(record);
    memcpy(route, "EC", 2), nroute = 2;
    assert_int_equal(route_step('E', route, &nroute, OSN_SIP_INVITE, true, true, &record), 'C');
    assert_false(record);

    /* A first Route value not ours stays and is the destination (16.6 step 7: a preloaded
     * route); a request with no Route goes to the next hop. */
    memcpy(route, "X", 1), nroute = 1;
    assert_int_equal(route_step('E', route, &nroute, OSN_SIP_INVITE, false, true, &record), 'X');
    assert_int_equal(nroute, 1);
    assert_true(record);

    /* record_route = no: the INVITE goes on unrecorded, so the dialog's requests bypass it. */
    assert_int_equal(route_step('E', route, &(int){0}, OSN_SIP_INVITE, false, false, &record), 'N');
    assert_false(record);
}

/* RFC 5658's double Record-Route, told as test_proxy_route tells a dialog: the caller reaches
 * edge E over UDP, E goes on to core C over TCP, C to the callee over TCP. E inserts two values,
 * its TCP URI 'e' on top (the outgoing leg's) and its UDP URI 'E' below (the incoming one's); C,
 * TCP both ways, one ('c'). Each end then reaches each proxy over the transport of its own side,
 * and E removes both of its values from either direction (RFC 5658 5). */
static void test_proxy_double_rr(void **state)
{
    bool tcp[2];
    char route[4];
    int nroute;
    bool record;
    (void)state;

    /* the values and their transports, top first, for each pair of legs (in, out) */
    assert_int_equal(osn_proxy_record_routes(false, false, tcp), 1);
    assert_false(tcp[0]);
    assert_int_equal(osn_proxy_record_routes(true, true, tcp), 1);
    assert_true(tcp[0]);
    assert_int_equal(osn_proxy_record_routes(false, true, tcp), 2);
    assert_true(tcp[0]);  /* toward the callee: TCP */
    assert_false(tcp[1]); /* toward the caller: UDP */
    assert_int_equal(osn_proxy_record_routes(true, false, tcp), 2);
    assert_false(tcp[0]);
    assert_true(tcp[1]);

    /* The Record-Route the callee gets: c, e, E. Its BYE (route set c, e, E) goes over TCP to C,
     * which sends it to E's TCP URI; E removes both of its values: the Request-URI is next. */
    memcpy(route, "ceE", 3), nroute = 3;
    assert_int_equal(route_step('C', route, &nroute, OSN_SIP_BYE, true, true, &record), 'e');
    assert_int_equal(route_step('E', route, &nroute, OSN_SIP_BYE, true, true, &record), 'U');
    assert_int_equal(nroute, 0);

    /* The caller's BYE (route set E, e, c, 12.1.2) comes to E's UDP URI; E removes both and
     * sends it to C. */
    memcpy(route, "Eec", 3), nroute = 3;
    assert_int_equal(route_step('E', route, &nroute, OSN_SIP_BYE, true, true, &record), 'c');
    assert_int_equal(nroute, 1);
    assert_int_equal(route_step('C', route, &nroute, OSN_SIP_BYE, true, true, &record), 'U');

    /* Only the first Route value decides whether the second may go: one not ours stays. */
    memcpy(route, "XE", 2), nroute = 2;
    assert_int_equal(route_step('E', route, &nroute, OSN_SIP_BYE, true, true, &record), 'X');
    assert_int_equal(nroute, 2);
    /* Our two values and nothing after: the Request-URI. */
    memcpy(route, "Ee", 2), nroute = 2;
    assert_int_equal(route_step('E', route, &nroute, OSN_SIP_BYE, true, true, &record), 'U');
}

static void test_budget(void **state)
{
    struct osn_elem_budget b = {0};
    int pass = 0, n503 = 0, drop = 0;
    (void)state;
    for (int i = 0; i < 1000; i++) { /* 1000 requests in 1 s at a budget of 10/s */
        switch (osn_elem_budget_take(&b, i * 0.001, 10)) {
        case OSN_ELEM_BUDGET_PASS:
            pass++;
            break;
        case OSN_ELEM_BUDGET_503:
            n503++;
            break;
        case OSN_ELEM_BUDGET_DROP:
            drop++;
            break;
        }
    }
    assert_true(pass >= 10 && pass <= 20);
    assert_true(n503 >= 1 && n503 <= pass);
    assert_int_equal(pass + n503 + drop, 1000);
    /* After a quiet second the bucket is full again. */
    struct osn_elem_budget c = {0};
    for (int i = 0; i < 10; i++)
        assert_int_equal(osn_elem_budget_take(&c, 0, 10), OSN_ELEM_BUDGET_PASS);
    assert_int_equal(osn_elem_budget_take(&c, 0, 10), OSN_ELEM_BUDGET_503);
    assert_int_equal(osn_elem_budget_take(&c, 0, 10), OSN_ELEM_BUDGET_DROP);
    for (int i = 0; i < 10; i++)
        assert_int_equal(osn_elem_budget_take(&c, 1.0, 10), OSN_ELEM_BUDGET_PASS);
}

/* ---- several next hops (hops.c) ---- */

/* A loss client half told oc = `pct` percent for 60 s (RFC 7339 5.6), every request in
 * category 1 (cat1 100) so that it sheds exactly pct percent of the INVITEs offered to it. */
static struct osn_ctl *loss_client(double pct, uint64_t seed)
{
    struct osn_ctl_cfg cc;
    struct osn_ctl *cli = NULL;
    osn_ctl_cfg_default(&cc);
    cc.loss.cat1 = 100;
    cc.seed = seed;
    assert_int_equal(osn_ctl_new_kind(&cli, OSN_CTL_KIND_LOSS, &cc), 0);
    struct osn_ctl_feedback fb = {.algo = OSN_CTL_ALGO_LOSS, .oc = pct, .validity = 60, .seq = 1};
    struct osn_sip_oc oc;
    osn_elem_fb_to_oc(&fb, &oc);
    osn_proxy_on_feedback(cli, 0, &oc);
    return cli;
}

static int forward_hop(const struct osn_elem *e, double now, struct osn_elem_actions *a)
{
    osn_elem_on_request(e, now, OSN_SIP_INVITE, 70, false, false, false, NULL, a);
    assert_int_equal(a->n, 1);
    return a->a[0].kind == OSN_ELEM_A_FORWARD ? a->a[0].hop : -1;
}

/* Weights 2, 1, 1 with nobody throttling: the smooth weighted round-robin order A B C A,
 * repeated: exactly the weights over every 4 requests, interleaved. */
static void test_hops_weights(void **state)
{
    (void)state;
    struct osn_elem_hop room[3] = {{0}};
    struct osn_elem_hops h = {.n = 3, .down_time = 30, .h = room};
    h.h[0].weight = 2;
    h.h[1].weight = 1;
    h.h[2].weight = 1;
    struct osn_elem e = {.role = OSN_ELEM_PROXY, .hops = &h};
    struct osn_elem_actions a;
    const int want[] = {0, 1, 2, 0, 0, 1, 2, 0};
    for (int i = 0; i < 8; i++) {
        assert_int_equal(forward_hop(&e, 1, &a), want[i]);
        assert_int_equal(a.a[0].count, OSN_ELEM_C_FORWARDED);
    }
    assert_int_equal(h.h[0].invites, 4);
    assert_int_equal(h.h[1].invites, 2);
    assert_int_equal(h.h[2].invites, 2);
    /* the ACK of a 2xx, stateless: a function of its key, by weight (key 0, 1 -> A; 2 -> B) */
    assert_int_equal(osn_elem_hops_stateless(&h, 1, 1), 0);
    assert_int_equal(osn_elem_hops_stateless(&h, 1, 2), 1);
    assert_int_equal(osn_elem_hops_stateless(&h, 1, 7), 2);
}

/* Two servers of equal weight, the first telling oc = 50: it is offered half the INVITEs and
 * keeps half of those (RFC 7339 7.2), the rest overflow to the second. Its share is
 * w0/W * (1 - p) = 0.25, the second's 0.75: the feedback, not the weight, sets it. With oc = 100
 * at the first, the second takes all. */
static void test_hops_throttle(void **state)
{
    (void)state;
    struct osn_elem_hop room[2] = {{0}};
    struct osn_elem_hops h = {.n = 2, .down_time = 30, .h = room};
    h.h[0] = (struct osn_elem_hop){.weight = 1, .cli = loss_client(50, 7)};
    h.h[1] = (struct osn_elem_hop){.weight = 1, .cli = loss_client(0, 8)};
    struct osn_elem e = {.role = OSN_ELEM_PROXY, .hops = &h};
    struct osn_elem_actions a;
    const int N = 20000;
    int to0 = 0;
    for (int i = 0; i < N; i++)
        to0 += forward_hop(&e, 1, &a) == 0;
    /* binomial(N, 0.25): sd = sqrt(N * 0.25 * 0.75) ~ 61; 4 sd */
    assert_true(fabs(to0 - 0.25 * N) < 4 * sqrt(N * 0.25 * 0.75));
    assert_int_equal(h.h[0].offered, N / 2);
    assert_int_equal(h.h[0].shed, N / 2 - to0);
    assert_int_equal(h.h[1].invites, N - to0);
    osn_ctl_free(h.h[0].cli);
    h.h[0].cli = loss_client(100, 9);
    for (int i = 0; i < 100; i++)
        assert_int_equal(forward_hop(&e, 2, &a), 1);
    osn_ctl_free(h.h[0].cli);
    osn_ctl_free(h.h[1].cli);
}

/*
 * A request routed to none of the next hops (OSN_ELEM_HOP_NONE: the callee's BYE going up to the
 * caller) is forwarded whatever the client halves say: each holds a downstream server's state
 * (RFC 7339 5.10) and sheds for that server only. The same BYE routed to the next hop (hop 0)
 * is shed (oc = 100 takes category 2 too, RFC 7339 7.2); so is one with no Route (hop -1). The
 * proxy's own checks still come first (RFC 3261 16.3: 483). With several next hops, no server
 * is offered it or counted as sent it; and no client half hears of its client transaction.
 */
static struct osn_ctl *shed_all(uint64_t seed)
{
    struct osn_ctl_cfg cc;
    struct osn_ctl *cli = NULL;
    osn_ctl_cfg_default(&cc); /* cat1 below 100: oc = 100 sheds category 2, BYEs, too */
    cc.seed = seed;
    assert_int_equal(osn_ctl_new_kind(&cli, OSN_CTL_KIND_LOSS, &cc), 0);
    struct osn_ctl_feedback fb = {.algo = OSN_CTL_ALGO_LOSS, .oc = 100, .validity = 60, .seq = 1};
    struct osn_sip_oc oc;
    osn_elem_fb_to_oc(&fb, &oc);
    osn_proxy_on_feedback(cli, 0, &oc);
    return cli;
}

static void test_request_routed_upstream(void **state)
{
    (void)state;
    struct osn_elem e = {.role = OSN_ELEM_PROXY, .cli = shed_all(3)};
    struct osn_elem_actions a;
    for (int i = 0; i < 100; i++) {
        osn_elem_on_request_hop(&e, OSN_ELEM_HOP_NONE, 1, OSN_SIP_BYE, 70, false, false, &a);
        assert_int_equal(a.n, 1);
        assert_int_equal(a.a[0].kind, OSN_ELEM_A_FORWARD);
        assert_int_equal(a.a[0].hop, OSN_ELEM_HOP_NONE);
        for (int hop = -1; hop <= 0; hop++) {
            osn_elem_on_request_hop(&e, hop, 1, OSN_SIP_BYE, 70, false, false, &a);
            assert_int_equal(a.a[0].kind, OSN_ELEM_A_RESPOND);
            assert_int_equal(a.a[0].status, 503);
        }
    }
    osn_elem_on_request_hop(&e, OSN_ELEM_HOP_NONE, 1, OSN_SIP_BYE, 0, false, false, &a);
    assert_int_equal(a.a[0].status, 483);
    /* Its 100 Trying from upstream is no delay sample of the next hop's (a rate client half
     * would take one): the client event leaves the client half alone; a 200 is relayed. */
    osn_elem_on_client_event_routed(&e, OSN_ELEM_HOP_NONE, 2, 1, OSN_SIP_TU_RESPONSE, 200, -1,
                                    OSN_SIP_BYE, OSN_SIP_TRYING, &a);
    assert_int_equal(a.n, 1);
    assert_int_equal(a.a[0].kind, OSN_ELEM_A_RELAY);
    osn_ctl_free(e.cli);

    struct osn_elem_hop room[2] = {{.weight = 1, .cli = shed_all(4)},
                                   {.weight = 1, .cli = shed_all(5)}};
    struct osn_elem_hops h = {.n = 2, .down_time = 30, .h = room};
    e = (struct osn_elem){.role = OSN_ELEM_PROXY, .hops = &h};
    osn_elem_on_request_hop(&e, OSN_ELEM_HOP_NONE, 1, OSN_SIP_BYE, 70, false, false, &a);
    assert_int_equal(a.a[0].kind, OSN_ELEM_A_FORWARD);
    osn_elem_on_request_hop(&e, 1, 1, OSN_SIP_BYE, 70, false, false, &a);
    assert_int_equal(a.a[0].status, 503);
    for (int i = 0; i < 2; i++)
        assert_true(room[i].offered == 0 && room[i].sent == 0 && room[i].shed == (uint64_t)i);
    /* a timeout of the upstream BYE marks no server down */
    osn_elem_on_client_event_routed(&e, OSN_ELEM_HOP_NONE, 40, 1, OSN_SIP_TU_TIMEOUT, 0, -1,
                                    OSN_SIP_BYE, OSN_SIP_TRYING, &a);
    assert_true(osn_elem_hop_up(&h, 0, 40) && osn_elem_hop_up(&h, 1, 40));
    osn_ctl_free(room[0].cli);
    osn_ctl_free(room[1].cli);
}

/* A rate client half (RFC 7415) told `rate` requests/s by its server. */
static struct osn_ctl *rate_client(double rate, uint64_t seed)
{
    struct osn_ctl_cfg cc;
    struct osn_ctl *cli = NULL;
    osn_ctl_cfg_default(&cc);
    cc.seed = seed;
    assert_int_equal(osn_ctl_new_kind(&cli, OSN_CTL_KIND_RATE, &cc), 0);
    struct osn_ctl_feedback fb = {.algo = OSN_CTL_ALGO_RATE, .oc = rate, .validity = 60, .seq = 1};
    struct osn_sip_oc oc;
    osn_elem_fb_to_oc(&fb, &oc);
    osn_proxy_on_feedback(cli, 0, &oc);
    return cli;
}

/* RFC 7415 3.5.1 and RFC 7339 5.10 with rate: each server's client half keeps the rate its own
 * server stated. 100 INVITEs/s offered for 10 s to two servers told 10 and 30 requests/s: each
 * is sent its own rate x 10 s (a leaky bucket admits rate x t plus at most its depth, TAU = 4T:
 * 4 requests, and one for the first), the rest, which both throttle, is shed with 503. */
static void test_hops_rate_per_server(void **state)
{
    (void)state;
    struct osn_elem_hop room[2] = {{0}};
    struct osn_elem_hops h = {.n = 2, .down_time = 30, .h = room};
    h.h[0] = (struct osn_elem_hop){.weight = 1, .cli = rate_client(10, 3)};
    h.h[1] = (struct osn_elem_hop){.weight = 1, .cli = rate_client(30, 4)};
    struct osn_elem e = {.role = OSN_ELEM_PROXY, .hops = &h};
    struct osn_elem_actions a;
    int shed = 0;
    for (int i = 0; i < 1000; i++)
        shed += forward_hop(&e, 0.01 * i, &a) < 0;
    assert_true(fabs((double)h.h[0].sent - 10 * 10) <= 6);
    assert_true(fabs((double)h.h[1].sent - 30 * 10) <= 6);
    assert_int_equal(shed, 1000 - (int)(h.h[0].sent + h.h[1].sent));
    assert_int_equal(h.h[0].offered, 500); /* offered by weight, whatever each admits */
    osn_ctl_free(h.h[0].cli);
    osn_ctl_free(h.h[1].cli);
}

/* 503 upstream only when every server throttles (RFC 7339 5.10); the element's Retry-After. */
static void test_hops_all_throttle(void **state)
{
    (void)state;
    struct osn_elem_hop room[2] = {{0}};
    struct osn_elem_hops h = {.n = 2, .down_time = 30, .h = room};
    h.h[0] = (struct osn_elem_hop){.weight = 3, .cli = loss_client(100, 1)};
    h.h[1] = (struct osn_elem_hop){.weight = 1, .cli = loss_client(100, 2)};
    struct osn_elem e = {.role = OSN_ELEM_PROXY, .hops = &h, .retry_after = 2};
    struct osn_elem_actions a;
    for (int i = 0; i < 10; i++) {
        assert_int_equal(forward_hop(&e, 1, &a), -1);
        assert_int_equal(a.a[0].kind, OSN_ELEM_A_RESPOND);
        assert_int_equal(a.a[0].status, 503);
        assert_int_equal(a.a[0].retry_after, 2);
        assert_int_equal(a.a[0].count, OSN_ELEM_C_503);
    }
    assert_int_equal(h.h[0].shed, 10);
    assert_int_equal(h.h[1].shed, 10);
    osn_ctl_free(h.h[0].cli);
    osn_ctl_free(h.h[1].cli);
}

/* Timer B at server 0 (the 408 of RFC 3261 16.8): with failover the INVITE goes to server 1
 * instead of the 408 going upstream; server 0 is down for down_time, then chosen again. */
static void test_hops_failover_408(void **state)
{
    (void)state;
    struct osn_elem_hop room[2] = {{0}};
    struct osn_elem_hops h = {.n = 2, .down_time = 30, .h = room};
    h.h[0].weight = h.h[1].weight = 1;
    struct osn_elem e = {.role = OSN_ELEM_PROXY, .hops = &h};
    struct osn_elem_actions a;
    assert_int_equal(forward_hop(&e, 0, &a), 0);
    osn_elem_on_client_event_hop(&e, 0, 32, 0, OSN_SIP_TU_TIMEOUT, 0, -1, OSN_SIP_INVITE,
                                 OSN_SIP_PROCEEDING, &a);
    assert_int_equal(a.n, 1);
    assert_int_equal(a.a[0].kind, OSN_ELEM_A_FORWARD);
    assert_int_equal(a.a[0].hop, 1);
    assert_int_equal(h.h[0].timeouts, 1);
    assert_int_equal(h.h[0].downs, 1);
    assert_int_equal(h.h[1].failovers, 1);
    for (int i = 0; i < 10; i++)
        assert_int_equal(forward_hop(&e, 32 + i, &a), 1);
    /* back after 30 s */
    int to0 = 0;
    for (int i = 0; i < 10; i++)
        to0 += forward_hop(&e, 62, &a) == 0;
    assert_int_equal(to0, 5);
    /* both down: the 408 goes upstream, and new INVITEs go by weight to both, as if up */
    osn_elem_on_client_event_hop(&e, 0, 70, 0, OSN_SIP_TU_TIMEOUT, 0, -1, OSN_SIP_INVITE,
                                 OSN_SIP_PROCEEDING, &a);
    osn_elem_on_client_event_hop(&e, 1, 80.5, 0, OSN_SIP_TU_TIMEOUT, 0, -1, OSN_SIP_INVITE,
                                 OSN_SIP_PROCEEDING, &a);
    assert_int_equal(a.a[0].kind, OSN_ELEM_A_RESPOND);
    assert_int_equal(a.a[0].status, 408);
    to0 = 0;
    for (int i = 0; i < 10; i++)
        to0 += forward_hop(&e, 81, &a) == 0;
    assert_int_equal(to0, 5);
    /* a request whose upstream transaction has its answer already is not sent again */
    struct osn_elem_hop groom[2] = {{0}}, froom[2] = {{0}};
    struct osn_elem_hops g = {.n = 2, .down_time = 30, .h = groom};
    g.h[0].weight = g.h[1].weight = 1;
    e.hops = &g;
    osn_elem_on_client_event_hop(&e, 0, 1, 0, OSN_SIP_TU_TIMEOUT, 0, -1, OSN_SIP_INVITE,
                                 OSN_SIP_NOSTATE, &a);
    assert_int_equal(a.n, 0);
    assert_int_equal(g.h[1].failovers, 0);
    assert_int_equal(forward_hop(&e, 2, &a), 1);
    /* a transport error (RFC 3261 16.9: a 503 from that server) fails over too; with the
     * other server down (g's 0 since t = 1) its 500 goes upstream (16.7 step 6) */
    struct osn_elem_hops f = {.n = 2, .down_time = 30, .h = froom};
    f.h[0].weight = f.h[1].weight = 1;
    e.hops = &f;
    osn_elem_on_client_event_hop(&e, 0, 1, 0, OSN_SIP_TU_TRANSPORT_ERROR, 0, -1, OSN_SIP_INVITE,
                                 OSN_SIP_PROCEEDING, &a);
    assert_int_equal(a.n, 1);
    assert_int_equal(a.a[0].kind, OSN_ELEM_A_FORWARD);
    assert_int_equal(a.a[0].hop, 1);
    e.hops = &g;
    osn_elem_on_client_event_hop(&e, 1, 3, 0, OSN_SIP_TU_TRANSPORT_ERROR, 0, -1, OSN_SIP_INVITE,
                                 OSN_SIP_PROCEEDING, &a);
    assert_int_equal(a.n, 1);
    assert_int_equal(a.a[0].status, 500);
    assert_int_equal(a.a[0].count, OSN_ELEM_C_500);
}

/* A 503 with Retry-After 5 (RFC 3261 21.5.4) at t = 10: server 0 is left alone until 15 and the
 * INVITE goes to server 1 instead; a 503 without Retry-After says nothing of when: relayed,
 * nobody marked down. */
static void test_hops_retry_after(void **state)
{
    (void)state;
    struct osn_elem_hop room[2] = {{0}};
    struct osn_elem_hops h = {.n = 2, .down_time = 30, .h = room};
    h.h[0].weight = h.h[1].weight = 1;
    struct osn_elem e = {.role = OSN_ELEM_PROXY, .hops = &h};
    struct osn_elem_actions a;
    osn_elem_on_client_event_hop(&e, 0, 10, 9.9, OSN_SIP_TU_RESPONSE, 503, -1, OSN_SIP_INVITE,
                                 OSN_SIP_PROCEEDING, &a);
    assert_int_equal(a.a[0].kind, OSN_ELEM_A_RELAY);
    assert_int_equal(a.a[0].status, 503);
    assert_int_equal(h.h[0].downs, 0);
    osn_elem_on_client_event_hop(&e, 0, 10, 9.9, OSN_SIP_TU_RESPONSE, 503, 5, OSN_SIP_INVITE,
                                 OSN_SIP_PROCEEDING, &a);
    assert_int_equal(a.a[0].kind, OSN_ELEM_A_FORWARD);
    assert_int_equal(a.a[0].hop, 1);
    assert_int_equal(h.h[0].got_503, 2);
    for (int i = 0; i < 10; i++)
        assert_int_equal(forward_hop(&e, 14.9, &a), 1);
    int to0 = 0;
    for (int i = 0; i < 10; i++)
        to0 += forward_hop(&e, 15, &a) == 0;
    assert_int_equal(to0, 5);
}

/* The UAC's delay percentiles, which the simulator's report and the node's (uac) both read: the
 * first bin where the count reaches q of the total, by its midpoint (1 ms bins below 2 s, then
 * 0.1 s bins). One 10.5 ms delay and three 2.55 s ones: the median is 2.55 s, the 25th
 * percentile 10.5 ms; no delay at all has no percentile. */
static void test_uac_delay_quantile(void **state)
{
    (void)state;
    static double h[OSN_UAC_DELAY_BINS];
    assert_true(isnan(osn_uac_delay_quantile(h, 0.5)));
    h[osn_uac_delay_bin(0.0105)] += 1;
    h[osn_uac_delay_bin(2.55)] += 3;
    assert_int_equal(osn_uac_delay_bin(0.0105), 10);
    assert_int_equal(osn_uac_delay_bin(2.55), OSN_UAC_DELAY_FINE + 5);
    assert_float_equal(osn_uac_delay_quantile(h, 0.25), 0.0105, 1e-15);
    assert_float_equal(osn_uac_delay_quantile(h, 0.26), 2.55, 1e-12);
    assert_float_equal(osn_uac_delay_quantile(h, 0.5), 2.55, 1e-12);
    assert_float_equal(osn_uac_delay_quantile(h, 1.0), 2.55, 1e-12);
    h[OSN_UAC_DELAY_BINS - 1] += 4; /* 64 s and beyond: reported as 64 s */
    assert_float_equal(osn_uac_delay_quantile(h, 0.99), 64.0, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_uac_delay_quantile),
            cmocka_unit_test(test_uas_2xx_schedule),
            cmocka_unit_test(test_uas_answers),
            cmocka_unit_test(test_uas_actions),
            cmocka_unit_test(test_rfc_answers),
            cmocka_unit_test(test_budget),
            cmocka_unit_test(test_uac_outcomes),
            cmocka_unit_test(test_proxy_decisions),
            cmocka_unit_test(test_proxy_retrans_cap),
            cmocka_unit_test(test_uac_retry),
            cmocka_unit_test(test_uac_patience),
            cmocka_unit_test(test_uac_call_machine),
            cmocka_unit_test(test_callee_hangs_up),
            cmocka_unit_test(test_shed_retry_after),
            cmocka_unit_test(test_oc_round_trip),
            cmocka_unit_test(test_server_queue),
            cmocka_unit_test(test_cancel),
            cmocka_unit_test(test_uas_ring),
            cmocka_unit_test(test_proxy_route),
            cmocka_unit_test(test_proxy_double_rr),
            cmocka_unit_test(test_hops_weights),
            cmocka_unit_test(test_hops_throttle),
            cmocka_unit_test(test_hops_all_throttle),
            cmocka_unit_test(test_hops_rate_per_server),
            cmocka_unit_test(test_hops_failover_408),
            cmocka_unit_test(test_hops_retry_after),
            cmocka_unit_test(test_request_routed_upstream),
            cmocka_unit_test(test_server_shed_retry_after),
            cmocka_unit_test(test_uac_client_half),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
