/*
 * The overload controllers of include/osn/ctl.h on hand-made sequences: the detectors' mode
 * sequences, none and local, the RFC 7339 80/20 algorithm on the RFC's own numbers, oc-seq
 * ordering and validity expiry, the loss and rate server estimators on a hand-computed window,
 * the RFC 7415 bucket on a hand-computed request sequence, PRSM's queue choice and removal
 * rule, the PI loop through both clamps, and determinism under a seed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <stdlib.h>

#include "osn/ctl.h"
#include "osn/err.h"

/* A scripted draw: returns (i + 0.5) / 100 for i = 0, 1, ..., 99, 0, ... (stratified). */
struct script {
    int i;
};

static double stratified(void *arg)
{
    struct script *s = arg;
    double u = (s->i + 0.5) / 100;

    s->i = (s->i + 1) % 100;
    return u;
}

static struct osn_ctl *make(const char *kind, const struct osn_ctl_cfg *cfg)
{
    struct osn_ctl *c = NULL;

    assert_int_equal(osn_ctl_new(&c, kind, cfg), 0);
    assert_non_null(c);
    return c;
}

static struct osn_ctl_verdict arrive(struct osn_ctl *c, double t, enum osn_ctl_msg k, size_t q)
{
    struct osn_ctl_event ev = {.kind = k, .queue_len = q, .oc_capable = true};

    return osn_ctl_server_on_arrival(c, t, &ev);
}

static void depart(struct osn_ctl *c, double t, size_t q)
{
    struct osn_ctl_event ev = {.kind = OSN_CTL_MSG_RESPONSE, .queue_len = q};

    osn_ctl_server_on_departure(c, t, &ev);
}

static void test_factory(void **state)
{
    (void)state;
    static const char *const kinds[] = {"none", "local", "loss", "rate", "prsm", "pi"};
    struct osn_ctl_cfg cfg;
    struct osn_ctl *c = (struct osn_ctl *)&cfg; /* must stay untouched on failure */

    osn_ctl_cfg_default(&cfg);
    assert_int_equal(osn_ctl_new(&c, "window", &cfg), OSN_EINVAL);
    assert_ptr_equal(c, (struct osn_ctl *)&cfg);
    cfg.det.l1 = cfg.det.h1; /* L1 < H1 violated */
    assert_int_equal(osn_ctl_new(&c, "loss", &cfg), OSN_EINVAL);
    assert_int_equal(osn_ctl_new(&c, "none", &cfg), 0); /* none has no detector */
    c = osn_ctl_free(c);
    assert_null(c);
    osn_ctl_cfg_default(&cfg);
    cfg.rate.tau0_factor = 5; /* TAU0 > TAU */
    assert_int_equal(osn_ctl_new(&c, "rate", &cfg), OSN_EINVAL);
    osn_ctl_cfg_default(&cfg);
    for (int i = 0; i < 6; i++) {
        c = make(kinds[i], &cfg);
        assert_string_equal(osn_ctl_kind(c), kinds[i]);
        assert_int_equal(osn_ctl_kind_of(c), i); /* kinds[] is in the registry's order */
        assert_string_equal(osn_ctl_kind_name(osn_ctl_kind_of(c)), kinds[i]);
        c = osn_ctl_free(c);
    }
    assert_null(osn_ctl_free(NULL));
}

/* docs/models.md policy I on L1=2 < H1=5, L2=6 < H2=8: up 0..8, down to 2, up to 5. */
static void test_hysteretic_modes(void **state)
{
    (void)state;
    struct osn_ctl_det_cfg k = {OSN_CTL_DET_HYSTERETIC, 2, 5, 6, 8, OSN_POLICY_I, 0, 0};
    struct osn_ctl_det d;
    static const int up[9] = {0, 0, 0, 0, 0, 1, 1, 1, 2}; /* after the arrival making n */
    static const size_t down_n[6] = {7, 6, 5, 4, 3, 2};   /* departures leaving n */
    static const int down[6] = {2, 1, 1, 1, 1, 0};        /* L2 = 6, L1 = 2 */

    assert_int_equal(osn_ctl_det_init(&d, &k), 0);
    for (size_t n = 1; n <= 8; n++)
        assert_int_equal(osn_ctl_det_arrival(&d, (double)n, n), up[n]);
    for (int i = 0; i < 6; i++)
        assert_int_equal(osn_ctl_det_departure(&d, 9 + i, down_n[i], 0), down[i]);
    assert_int_equal(d.mode, OSN_CTL_NORMAL);
    /* Hysteresis: up again, normal until n = H1. */
    assert_int_equal(osn_ctl_det_arrival(&d, 20, 3), OSN_CTL_NORMAL);
    assert_int_equal(osn_ctl_det_arrival(&d, 21, 4), OSN_CTL_NORMAL);
    assert_int_equal(osn_ctl_det_arrival(&d, 22, 5), OSN_CTL_OVERLOAD);
    assert_int_equal(d.switches, 5);

    /* Policy II: arrivals never switch; a departure leaving n >= H1 does. */
    k.policy = OSN_POLICY_II;
    assert_int_equal(osn_ctl_det_init(&d, &k), 0);
    for (size_t n = 1; n <= 8; n++)
        assert_int_equal(osn_ctl_det_arrival(&d, (double)n, n), OSN_CTL_NORMAL);
    assert_int_equal(osn_ctl_det_departure(&d, 9, 7, 0), OSN_CTL_OVERLOAD);
    assert_int_equal(osn_ctl_det_arrival(&d, 10, 8), OSN_CTL_OVERLOAD);
    assert_int_equal(osn_ctl_det_departure(&d, 11, 7, 0), OSN_CTL_OVERLOAD);
    assert_int_equal(osn_ctl_det_departure(&d, 12, 2, 0), OSN_CTL_NORMAL);

    /* Bad thresholds: L2 <= L1, H2 <= H1. */
    k = (struct osn_ctl_det_cfg){OSN_CTL_DET_HYSTERETIC, 2, 5, 2, 8, OSN_POLICY_I, 0, 0};
    assert_int_equal(osn_ctl_det_init(&d, &k), OSN_EINVAL);
    k.l2 = 6;
    k.h2 = 5;
    assert_int_equal(osn_ctl_det_init(&d, &k), OSN_EINVAL);
}

/* Occupancy: 1 s windows, alpha 0.5. Busy 0..10 s: u = 1 -> discard at the first window;
 * idle from 10 s: 0.5 at 11 s (<= L2: overload), 0.25 at 12 s (<= L1: normal). */
static void test_occupancy_delay(void **state)
{
    (void)state;
    struct osn_ctl_det_cfg k = {OSN_CTL_DET_OCCUPANCY, 0.3, 0.8, 0.85, 0.95, 0, 1, 0.5};
    struct osn_ctl_det d;
    enum osn_ctl_det_kind kind;

    assert_int_equal(osn_ctl_det_init(&d, &k), 0);
    assert_int_equal(osn_ctl_det_arrival(&d, 0, 1), OSN_CTL_NORMAL);
    assert_int_equal(osn_ctl_det_arrival(&d, 0.5, 2), OSN_CTL_NORMAL);
    assert_int_equal(osn_ctl_det_departure(&d, 1.5, 1, 0), OSN_CTL_DISCARD);
    assert_true(d.value == 1.0);
    assert_int_equal(osn_ctl_det_departure(&d, 10, 0, 0), OSN_CTL_DISCARD);
    assert_int_equal(osn_ctl_det_departure(&d, 11.5, 0, 0), OSN_CTL_OVERLOAD);
    assert_true(d.value == 0.5);
    assert_int_equal(osn_ctl_det_departure(&d, 12.5, 0, 0), OSN_CTL_NORMAL);
    assert_true(d.value == 0.25);
    /* A long idle gap converges instead of looping per window. */
    assert_int_equal(osn_ctl_det_arrival(&d, 1e9, 1), OSN_CTL_NORMAL);
    assert_true(d.value < 1e-9);

    /* Delay, alpha = 1 (the last wait): 0.2 normal, 0.5 onset, 1.0 discard, 0.6 = L2, 0.1 = L1. */
    k = (struct osn_ctl_det_cfg){OSN_CTL_DET_DELAY, 0.1, 0.5, 0.6, 1.0, 0, 0, 1};
    assert_int_equal(osn_ctl_det_init(&d, &k), 0);
    assert_int_equal(osn_ctl_det_departure(&d, 1, 3, 0.2), OSN_CTL_NORMAL);
    assert_int_equal(osn_ctl_det_departure(&d, 2, 3, 0.5), OSN_CTL_OVERLOAD);
    assert_int_equal(osn_ctl_det_departure(&d, 3, 3, 1.0), OSN_CTL_DISCARD);
    assert_int_equal(osn_ctl_det_departure(&d, 4, 3, 0.6), OSN_CTL_OVERLOAD);
    assert_int_equal(osn_ctl_det_departure(&d, 5, 3, 0.1), OSN_CTL_NORMAL);
    assert_int_equal(osn_ctl_det_kind_parse("delay", &kind), 0);
    assert_int_equal(kind, OSN_CTL_DET_DELAY);
    assert_int_equal(osn_ctl_det_kind_parse("queue", &kind), OSN_EINVAL);
    /* One list of names, in the enum's order, read and printed by the same table. */
    const char *det[] = {"hysteretic", "occupancy", "delay"};
    for (int i = 0; i < 3; i++) {
        assert_string_equal(osn_ctl_det_kind_name((enum osn_ctl_det_kind)i), det[i]);
        assert_string_equal(osn_ctl_det_kind_names[i], det[i]);
        assert_int_equal(osn_ctl_det_kind_parse(det[i], &kind), 0);
        assert_int_equal(kind, i);
    }
    assert_null(osn_ctl_det_kind_names[3]);
    assert_string_equal(osn_ctl_det_kind_name((enum osn_ctl_det_kind)3), "?");
}

static void test_none_local(void **state)
{
    (void)state;
    struct osn_ctl_cfg cfg;
    struct osn_ctl *c;
    struct osn_ctl_event full = {.kind = OSN_CTL_MSG_INVITE, .queue_len = 9, .buffer_full = true};
    struct osn_ctl_verdict v;
    struct osn_ctl_feedback fb;

    osn_ctl_cfg_default(&cfg);
    c = make("none", &cfg);
    assert_int_equal(osn_ctl_server_on_arrival(c, 0, &full).action, OSN_CTL_ADMIT);
    osn_ctl_server_feedback(c, 0, &fb);
    assert_int_equal(fb.algo, OSN_CTL_ALGO_NONE);
    assert_int_equal(osn_ctl_client_admit(c, 0, OSN_CTL_MSG_INVITE), OSN_CTL_SEND);
    c = osn_ctl_free(c);
    cfg.none.reject_when_full = true;
    cfg.none.retry_after = 5;
    c = make("none", &cfg);
    v = osn_ctl_server_on_arrival(c, 0, &full);
    assert_int_equal(v.action, OSN_CTL_REJECT_503);
    assert_int_equal(v.retry_after, 5);
    full.kind = OSN_CTL_MSG_RESPONSE; /* responses are never answered with 503 */
    assert_int_equal(osn_ctl_server_on_arrival(c, 0, &full).action, OSN_CTL_ADMIT);
    full.buffer_full = false;
    full.kind = OSN_CTL_MSG_INVITE;
    assert_int_equal(osn_ctl_server_on_arrival(c, 0, &full).action, OSN_CTL_ADMIT);
    c = osn_ctl_free(c);

    /* local on L1=1 < H1=3, L2=4 < H2=5; queue_len is the count before the arrival. */
    cfg.det = (struct osn_ctl_det_cfg){OSN_CTL_DET_HYSTERETIC, 1, 3, 4, 5, 0, 0.1, 0.3};
    cfg.local.retry_after = 0;
    c = make("local", &cfg);
    assert_int_equal(arrive(c, 0, OSN_CTL_MSG_INVITE, 0).action, OSN_CTL_ADMIT);
    assert_int_equal(arrive(c, 1, OSN_CTL_MSG_INVITE, 1).action, OSN_CTL_ADMIT);
    assert_int_equal(arrive(c, 2, OSN_CTL_MSG_INVITE, 2).action, OSN_CTL_ADMIT); /* n = H1 */
    assert_int_equal(osn_ctl_server_mode(c), OSN_CTL_OVERLOAD);
    v = arrive(c, 3, OSN_CTL_MSG_INVITE, 3);
    assert_int_equal(v.action, OSN_CTL_REJECT_503);
    assert_int_equal(v.retry_after, 0);
    assert_int_equal(arrive(c, 4, OSN_CTL_MSG_BYE, 3).action, OSN_CTL_ADMIT);
    assert_int_equal(arrive(c, 5, OSN_CTL_MSG_INVITE_RETX, 4).action, OSN_CTL_ADMIT);
    assert_int_equal(osn_ctl_server_mode(c), OSN_CTL_DISCARD);
    assert_int_equal(arrive(c, 6, OSN_CTL_MSG_INVITE, 5).action, OSN_CTL_REJECT_503);
    depart(c, 7, 4);
    assert_int_equal(osn_ctl_server_mode(c), OSN_CTL_OVERLOAD);
    depart(c, 8, 1);
    assert_int_equal(osn_ctl_server_mode(c), OSN_CTL_NORMAL);
    assert_int_equal(arrive(c, 9, OSN_CTL_MSG_INVITE, 1).action, OSN_CTL_ADMIT);
    c = osn_ctl_free(c);

    /* reject_overload = 0: mode 1 admits, mode 2 still rejects. */
    cfg.local.reject_overload = 0;
    c = make("local", &cfg);
    for (size_t n = 0; n < 4; n++)
        assert_int_equal(arrive(c, (double)n, OSN_CTL_MSG_INVITE, n).action, OSN_CTL_ADMIT);
    assert_int_equal(osn_ctl_server_mode(c), OSN_CTL_OVERLOAD);
    assert_int_equal(arrive(c, 5, OSN_CTL_MSG_INVITE, 4).action, OSN_CTL_ADMIT); /* n = H2 */
    assert_int_equal(arrive(c, 6, OSN_CTL_MSG_INVITE, 5).action, OSN_CTL_REJECT_503);
    osn_ctl_free(c);
}

/* Feeds a loss or rate client one response. */
static void feed(struct osn_ctl *c, double t, enum osn_ctl_algo a, double oc, double validity,
                 uint64_t seq)
{
    struct osn_ctl_feedback fb = {a, oc, validity, seq};

    osn_ctl_client_on_feedback(c, t, &fb);
}

/* Sheds among 100 stratified draws of kind k. */
static int shed100(struct osn_ctl *c, double t, enum osn_ctl_msg k)
{
    int n = 0;

    for (int i = 0; i < 100; i++)
        n += osn_ctl_client_admit(c, t, k) == OSN_CTL_SHED_503;
    return n;
}

/* RFC 7339 7.2 (docs/protocols.md 2.4): oc=10 with 40% category 1 drops 10/40*100 = 25% of it. */
static void test_loss_8020(void **state)
{
    (void)state;
    struct osn_ctl_cfg cfg;
    struct script s = {0};
    struct osn_ctl *c;

    osn_ctl_cfg_default(&cfg);
    cfg.draw = stratified;
    cfg.draw_arg = &s;
    cfg.loss.cat1 = 40;
    c = make("loss", &cfg);
    assert_int_equal(shed100(c, 0, OSN_CTL_MSG_INVITE), 0); /* no oc yet: unthrottled */
    feed(c, 0, OSN_CTL_ALGO_LOSS, 10, 0.5, 1);
    assert_int_equal(shed100(c, 0.1, OSN_CTL_MSG_INVITE), 25);
    assert_int_equal(shed100(c, 0.1, OSN_CTL_MSG_BYE), 0); /* category 2 is protected */
    assert_int_equal(shed100(c, 0.1, OSN_CTL_MSG_ACK), 0);
    assert_int_equal(shed100(c, 0.1, OSN_CTL_MSG_INVITE_RETX), 0);
    c = osn_ctl_free(c);

    /* The default 80/20 split: oc=20 -> 25% of category 1; oc=90 -> all of category 1 and
     * (90-80)/20*100 = 50% of category 2. */
    cfg.loss.cat1 = 80;
    c = make("loss", &cfg);
    feed(c, 0, OSN_CTL_ALGO_LOSS, 20, 0.5, 1);
    assert_int_equal(shed100(c, 0.1, OSN_CTL_MSG_INVITE), 25);
    assert_true(osn_ctl_client_level(c, 0.1) == 20);
    feed(c, 0.2, OSN_CTL_ALGO_LOSS, 90, 0.5, 2);
    assert_int_equal(shed100(c, 0.3, OSN_CTL_MSG_INVITE), 100);
    assert_int_equal(shed100(c, 0.3, OSN_CTL_MSG_BYE), 50);
    c = osn_ctl_free(c);

    /* Re-sampled shares (RFC 7339 7.2 note): 1 INVITE per BYE -> cat1 = 50; oc=25 -> 50%. */
    cfg.loss.share_window = 1;
    c = make("loss", &cfg);
    for (int i = 0; i < 50; i++) {
        osn_ctl_client_admit(c, 0.5, OSN_CTL_MSG_INVITE);
        osn_ctl_client_admit(c, 0.5, OSN_CTL_MSG_BYE);
    }
    feed(c, 1.0, OSN_CTL_ALGO_LOSS, 25, 0.5, 1);
    s.i = 0;
    assert_int_equal(shed100(c, 1.0, OSN_CTL_MSG_INVITE), 50);
    osn_ctl_free(c);
}

/* RFC 7339 5.4, 5.7: seq ordering and validity expiry at the client. */
static void test_loss_seq_validity(void **state)
{
    (void)state;
    struct osn_ctl_cfg cfg;
    struct script s = {0};
    struct osn_ctl *c;

    osn_ctl_cfg_default(&cfg);
    cfg.draw = stratified;
    cfg.draw_arg = &s;
    c = make("loss", &cfg);
    feed(c, 0, OSN_CTL_ALGO_LOSS, 40, 0.5, 100); /* 40/80 -> half of the INVITEs */
    assert_true(osn_ctl_client_level(c, 0) == 40);
    feed(c, 0.1, OSN_CTL_ALGO_LOSS, 80, 0.5, 90);  /* older: stale, ignored */
    feed(c, 0.1, OSN_CTL_ALGO_LOSS, 80, 0.5, 100); /* equal: no update */
    feed(c, 0.1, OSN_CTL_ALGO_RATE, 80, 0.5, 200); /* another algorithm: ignored */
    assert_true(osn_ctl_client_level(c, 0.1) == 40);
    assert_int_equal(shed100(c, 0.49, OSN_CTL_MSG_INVITE), 50);
    /* Validity ran out at 0.5 s (no refresh: the equal seq did not restart it). */
    assert_int_equal(shed100(c, 0.5, OSN_CTL_MSG_INVITE), 0);
    assert_true(osn_ctl_client_level(c, 0.5) == 0);
    feed(c, 0.6, OSN_CTL_ALGO_LOSS, 80, 0.5, 95); /* still older than 100 after expiry */
    assert_int_equal(shed100(c, 0.6, OSN_CTL_MSG_INVITE), 0);
    feed(c, 0.6, OSN_CTL_ALGO_LOSS, 80, -1, 110); /* absent validity: 500 ms */
    assert_int_equal(shed100(c, 1.09, OSN_CTL_MSG_INVITE), 100);
    assert_int_equal(shed100(c, 1.1, OSN_CTL_MSG_INVITE), 0);
    feed(c, 1.2, OSN_CTL_ALGO_LOSS, 80, 10, 120);
    assert_int_equal(shed100(c, 1.3, OSN_CTL_MSG_INVITE), 100);
    feed(c, 1.4, OSN_CTL_ALGO_LOSS, 80, 0, 130); /* validity 0: stop now, oc disregarded */
    assert_int_equal(shed100(c, 1.4, OSN_CTL_MSG_INVITE), 0);
    osn_ctl_free(c);
}

/* One saturated window [0, 0.1): arrivals every 0.5 ms from t = 0 (every 4th a new INVITE),
 * departures every 1 ms, so the queue never empties: arrivals 200, departures 100, busy 0.1. */
static size_t saturated_window(struct osn_ctl *c, double t0, size_t q, int n_arr, int n_dep)
{
    int i = 0, j = 0;

    while (i < n_arr || j < n_dep) {
        double ta = t0 + 0.0005 * i, td = t0 + 0.001 * (j + 0.5);

        if (i < n_arr && (j >= n_dep || ta < td)) {
            arrive(c, ta, i % 4 == 0 ? OSN_CTL_MSG_INVITE : OSN_CTL_MSG_RESPONSE, q);
            q++;
            i++;
        } else {
            q--;
            depart(c, td, q);
            j++;
        }
    }
    return q;
}

static void test_loss_server(void **state)
{
    (void)state;
    struct osn_ctl_cfg cfg;
    struct osn_ctl_feedback fb, fb2;
    struct osn_ctl *c;
    size_t q;
    struct osn_ctl_event ev = {.kind = OSN_CTL_MSG_INVITE, .oc_capable = false};

    osn_ctl_cfg_default(&cfg);
    cfg.det = (struct osn_ctl_det_cfg){OSN_CTL_DET_HYSTERETIC, 2, 5, 150, 200, 0, 0.1, 0.3};
    cfg.seq_base = 7e-6; /* puts 0.099995 s and 0.1 s in the same 10 us tick */
    c = make("loss", &cfg);
    osn_ctl_server_feedback(c, 0, &fb); /* idle: oc=0;oc-validity=0 */
    assert_int_equal(fb.algo, OSN_CTL_ALGO_LOSS);
    assert_true(fb.oc == 0 && fb.validity == 0);
    q = saturated_window(c, 0, 0, 200, 100);
    assert_int_equal(q, 100);
    assert_int_equal(osn_ctl_server_mode(c), OSN_CTL_OVERLOAD);
    osn_ctl_server_feedback(c, 0.099995, &fb); /* before the window closes: still idle */
    assert_true(fb.oc == 0 && fb.seq == 10000);
    /* rho = (200/0.1)/(100/0.1) = 2 -> a = 1 * 0.9 / 2 = 0.45 -> oc = 0.55 * 80 = 44. */
    osn_ctl_server_feedback(c, 0.1, &fb);
    assert_true(fb.oc == 44);
    assert_true(fb.validity == 0.5);
    assert_true(fb.seq == 10001); /* same tick, new content: seq bumped (RFC 7339 4.4) */
    osn_ctl_server_feedback(c, 0.1, &fb2);
    assert_true(fb2.seq == fb.seq && fb2.oc == fb.oc); /* same content, same seq */
    /* A client that does not send oc loses the same 55% of its INVITEs (RFC 7339 5.10.2). */
    ev.queue_len = q;
    assert_int_equal(osn_ctl_server_on_arrival(c, 0.1, &ev).action, OSN_CTL_ADMIT);
    /* Window 2 near the admitted rate: 91 arrivals, 100 departures -> rho = 0.91,
     * a = 0.45 * 0.9 / 0.91 = 0.44505, oc = round(44.4) = 44. */
    q = saturated_window(c, 0.1, q + 1, 90, 100);
    osn_ctl_server_feedback(c, 0.2, &fb2);
    assert_true(fb2.oc == 44);
    assert_true(fb2.seq > fb.seq);
    /* Drain: no arrivals, the queue empties (abatement at L1), rho = 0: a grows at most 2x,
     * to 0.89011 (oc = round(8.79) = 9), then to 1 in the next window: oc=0;oc-validity=0. */
    for (; q > 0; q--)
        depart(c, 0.2 + 0.001 * (double)(92 - q), q - 1);
    assert_int_equal(osn_ctl_server_mode(c), OSN_CTL_NORMAL);
    osn_ctl_server_feedback(c, 0.31, &fb);
    assert_true(fb.oc == 9 && fb.validity == 0.5);
    osn_ctl_server_feedback(c, 0.42, &fb);
    assert_true(fb.oc == 0 && fb.validity == 0);
    assert_true(fb.seq > fb2.seq);
    osn_ctl_free(c);
}

/* The estimator's limits: in mode 0 the drop rate only relaxes; a never falls below
 * 1 - max_loss/100. */
static void test_loss_server_rules(void **state)
{
    (void)state;
    struct osn_ctl_cfg cfg;
    struct osn_ctl_feedback fb;
    struct osn_ctl *c;
    size_t q;

    osn_ctl_cfg_default(&cfg);
    cfg.det = (struct osn_ctl_det_cfg){OSN_CTL_DET_HYSTERETIC, 95, 96, 150, 200, 0, 0.1, 0.3};
    c = make("loss", &cfg);
    osn_ctl_server_feedback(c, 0, &fb);
    q = saturated_window(c, 0, 0, 200, 100);
    osn_ctl_server_feedback(c, 0.1, &fb);
    assert_true(fb.oc == 44);
    /* Window 2: 5 quick departures (abatement at L1 = 95), then departure, arrival, ... with
     * q in {94, 95}: rho = 100/105 > 0.9 would give oc = 46, but mode 0 holds oc = 44. */
    for (int k = 1; k <= 5; k++)
        depart(c, 0.1 + 1e-5 * k, --q);
    assert_int_equal(osn_ctl_server_mode(c), OSN_CTL_NORMAL);
    for (int i = 0; i < 100; i++) {
        depart(c, 0.1 + 0.001 * (i + 0.25), --q);
        arrive(c, 0.1 + 0.001 * (i + 0.75), OSN_CTL_MSG_RESPONSE, q++);
    }
    assert_int_equal(osn_ctl_server_mode(c), OSN_CTL_NORMAL);
    osn_ctl_server_feedback(c, 0.2, &fb);
    assert_true(fb.oc == 44);
    c = osn_ctl_free(c);

    cfg.loss.max_loss = 50;
    c = make("loss", &cfg);
    osn_ctl_server_feedback(c, 0, &fb);
    saturated_window(c, 0, 0, 200, 100);
    osn_ctl_server_feedback(c, 0.1, &fb);
    assert_true(fb.oc == 40); /* a = 0.45 clamped to 0.5: oc = 0.5 * 80 */
    osn_ctl_free(c);
}

static void test_rate_server(void **state)
{
    (void)state;
    struct osn_ctl_cfg cfg;
    struct osn_ctl_feedback fb;
    struct osn_ctl *c;
    size_t q;

    osn_ctl_cfg_default(&cfg);
    cfg.det = (struct osn_ctl_det_cfg){OSN_CTL_DET_HYSTERETIC, 2, 5, 150, 200, 0, 0.1, 0.3};
    cfg.rate.n_clients = 3;
    c = make("rate", &cfg);
    osn_ctl_server_feedback(c, 0, &fb);
    assert_int_equal(fb.algo, OSN_CTL_ALGO_RATE);
    assert_true(fb.oc == 0 && fb.validity == 0);
    q = saturated_window(c, 0, 0, 200, 100);
    /* X = 0.9 * (100 / 0.1) * (50 / 200) = 225 new INVITEs/s, 75 per client. */
    osn_ctl_server_feedback(c, 0.1, &fb);
    assert_true(fb.oc == 75);
    assert_true(fb.validity == 0.5);
    for (; q > 0; q--)
        depart(c, 0.1 + 0.001 * (double)(101 - q), q - 1);
    osn_ctl_server_feedback(c, 0.21, &fb); /* mode 0, no INVITEs: the limit no longer binds */
    assert_true(fb.oc == 0 && fb.validity == 0);
    osn_ctl_free(c);
}

/* RFC 7415 3.5.1 with oc = 8: T = 0.125 s, TAU = 4T = 0.5 s, TAU0 = 0, activation at t = 0.
 * Hand-computed X' = X - (ta - LCT) and the verdict for each request time. */
static void test_rate_bucket(void **state)
{
    (void)state;
    static const struct {
        double ta;
        int send;
    } seq[] = {
            {0.0, 1},   /* X' = 0     -> X = 0.125 */
            {0.0, 1},   /* 0.125      -> 0.25 */
            {0.0, 1},   /* 0.25       -> 0.375 */
            {0.0, 1},   /* 0.375      -> 0.5 */
            {0.0, 1},   /* 0.5 = TAU  -> 0.625: five back to back */
            {0.0, 0},   /* 0.625 > TAU */
            {0.125, 1}, /* 0.5        -> 0.625, LCT = 0.125 */
            {0.25, 1},  /* 0.5        -> 0.625, LCT = 0.25 */
            {0.3, 0},   /* 0.575 > TAU: X, LCT unchanged */
            {0.375, 1}, /* 0.5        -> 0.625, LCT = 0.375 */
            {1.0, 1},   /* 0 (emptied) -> 0.125, LCT = 1 */
            {1.0, 1},   /* 0.125 */
            {1.0, 1},   /* 0.25 */
            {1.0, 1},   /* 0.375 */
            {1.0, 1},   /* 0.5 */
            {1.0, 0},   /* 0.625 */
    };
    struct osn_ctl_cfg cfg;
    struct osn_ctl *c;

    osn_ctl_cfg_default(&cfg);
    c = make("rate", &cfg);
    assert_true(isinf(osn_ctl_client_level(c, 0)));
    feed(c, 0, OSN_CTL_ALGO_RATE, 8, 10, 1);
    for (size_t i = 0; i < sizeof seq / sizeof seq[0]; i++) {
        enum osn_ctl_send v = osn_ctl_client_admit(c, seq[i].ta, OSN_CTL_MSG_INVITE);

        assert_int_equal(v, seq[i].send ? OSN_CTL_SEND : OSN_CTL_SHED_503);
    }
    assert_int_equal(osn_ctl_client_admit(c, 1.0, OSN_CTL_MSG_BYE), OSN_CTL_SEND);
    feed(c, 1.1, OSN_CTL_ALGO_RATE, 0, 10, 2); /* oc=0 with validity: reject all */
    assert_int_equal(osn_ctl_client_admit(c, 5, OSN_CTL_MSG_INVITE), OSN_CTL_SHED_503);
    feed(c, 5.1, OSN_CTL_ALGO_RATE, 0, 0, 3); /* validity 0: stop */
    assert_int_equal(osn_ctl_client_admit(c, 5.1, OSN_CTL_MSG_INVITE), OSN_CTL_SEND);
    c = osn_ctl_free(c);

    /* TAU0 = TAU: the bucket starts full, one request then one per T. */
    cfg.rate.tau0_factor = 4;
    c = make("rate", &cfg);
    feed(c, 0, OSN_CTL_ALGO_RATE, 8, 1, 1);
    assert_int_equal(osn_ctl_client_admit(c, 0, OSN_CTL_MSG_INVITE), OSN_CTL_SEND);
    assert_int_equal(osn_ctl_client_admit(c, 0, OSN_CTL_MSG_INVITE), OSN_CTL_SHED_503);
    assert_int_equal(osn_ctl_client_admit(c, 0.125, OSN_CTL_MSG_INVITE), OSN_CTL_SEND);
    /* Validity (1 s) expires: unthrottled. */
    for (int i = 0; i < 10; i++)
        assert_int_equal(osn_ctl_client_admit(c, 1.0, OSN_CTL_MSG_INVITE), OSN_CTL_SEND);
    osn_ctl_free(c);
}

static void test_prsm(void **state)
{
    (void)state;
    struct osn_ctl_cfg cfg;
    struct osn_ctl *c;

    osn_ctl_cfg_default(&cfg);
    c = make("prsm", &cfg);
    assert_int_equal(arrive(c, 0, OSN_CTL_MSG_INVITE, 0).queue, OSN_CTL_Q_PRIMARY);
    assert_int_equal(arrive(c, 0, OSN_CTL_MSG_RESPONSE, 1).queue, OSN_CTL_Q_PRIMARY);
    assert_int_equal(arrive(c, 0, OSN_CTL_MSG_INVITE_RETX, 2).queue, OSN_CTL_Q_SECONDARY);
    assert_int_equal(arrive(c, 0, OSN_CTL_MSG_NONINV_RETX, 3).queue, OSN_CTL_Q_SECONDARY);
    /* A response the server has had before waits with the copies; never a 503, even when full
     * and reject_when_full. */
    assert_int_equal(arrive(c, 0, OSN_CTL_MSG_RESPONSE_RETX, 4).queue, OSN_CTL_Q_SECONDARY);
    assert_int_equal(osn_ctl_server_queue_choice(c, 0, 2, 3), OSN_CTL_Q_PRIMARY);
    assert_int_equal(osn_ctl_server_queue_choice(c, 0, 0, 3), OSN_CTL_Q_SECONDARY);
    assert_int_equal(osn_ctl_server_queue_choice(c, 0, 0, 0), OSN_CTL_Q_NONE);
    /* Removal: answered, or Timer B = 64 * 0.5 = 32 s after the first copy. */
    assert_true(osn_ctl_server_retx_discard(c, 1, 0, true));
    assert_false(osn_ctl_server_retx_discard(c, 31.9, 0, false));
    assert_true(osn_ctl_server_retx_discard(c, 32, 0, false));
    c = osn_ctl_free(c);
    cfg.prsm.reject_when_full = true;
    c = make("prsm", &cfg);
    struct osn_ctl_event full = {
            .kind = OSN_CTL_MSG_RESPONSE_RETX, .queue_len = 9, .buffer_full = true};
    assert_int_equal(osn_ctl_server_on_arrival(c, 0, &full).action, OSN_CTL_ADMIT);
    full.kind = OSN_CTL_MSG_INVITE;
    assert_int_equal(osn_ctl_server_on_arrival(c, 0, &full).action, OSN_CTL_REJECT_503);
    c = osn_ctl_free(c);
    cfg.prsm.reject_when_full = false;
    cfg.prsm.responses = false; /* the papers' PRSM: requests only */
    c = make("prsm", &cfg);
    assert_int_equal(arrive(c, 0, OSN_CTL_MSG_RESPONSE_RETX, 0).queue, OSN_CTL_Q_PRIMARY);
    assert_int_equal(arrive(c, 0, OSN_CTL_MSG_INVITE_RETX, 1).queue, OSN_CTL_Q_SECONDARY);
    c = osn_ctl_free(c);
    c = make("none", &cfg); /* one FIFO, nothing removed */
    assert_int_equal(arrive(c, 0, OSN_CTL_MSG_INVITE_RETX, 0).queue, OSN_CTL_Q_PRIMARY);
    assert_int_equal(osn_ctl_server_queue_choice(c, 0, 0, 3), OSN_CTL_Q_PRIMARY);
    assert_false(osn_ctl_server_retx_discard(c, 100, 0, true));
    osn_ctl_free(c);
}

/* RTD, tau0 = 1 s, K_P = 10, K_I = 5, T_c = 1 s, clamps [2, 20], r starts at 20. By hand:
 *  k  tau  e     r_k = clamp(r + 10 (e - e_prev) + 5 e)
 *  1  1    0     20                      (first sample: bumpless)
 *  2  0    1     20 + 10 + 5 = 35 -> 20  (upper clamp)
 *  3  0    1     20 + 0 + 5 = 25 -> 20   (upper clamp, nothing wound up)
 *  4  2   -1     20 - 20 - 5 = -5 -> 2   (leaves the top at once, hits the lower clamp)
 *  5  2   -1     2 + 0 - 5 -> 2
 *  6  1.5 -0.5   2 + 5 - 2.5 = 4.5
 *  7  -    -     4.5 (no sample: hold)
 *  8  1    0     4.5 + 5 + 0 = 9.5       (mean of 0.5 and 1.5) */
static void test_pi_rtd(void **state)
{
    (void)state;
    static const double tau[8] = {1, 0, 0, 2, 2, 1.5, NAN, 1};
    static const double r[8] = {20, 20, 20, 2, 2, 4.5, 4.5, 9.5};
    struct osn_ctl_cfg cfg;
    struct osn_ctl *c;

    osn_ctl_cfg_default(&cfg);
    cfg.pi = (struct osn_ctl_pi_cfg){OSN_CTL_PI_RTD, 1.0, 10, 5, 1, 2, 20, 1, 2};
    c = make("pi", &cfg);
    assert_true(osn_ctl_client_level(c, 0) == 20);
    for (int k = 0; k < 8; k++) {
        if (k == 7) {
            osn_ctl_client_on_delay(c, k + 0.3, 0.5);
            osn_ctl_client_on_delay(c, k + 0.6, 1.5);
        } else if (!isnan(tau[k])) {
            osn_ctl_client_on_delay(c, k + 0.5, tau[k]);
        }
        assert_true(osn_ctl_client_level(c, k + 1) == r[k]);
    }
    /* Originals always go; retransmissions at r = 9.5/s, burst 1: one per 1/9.5 s. */
    assert_int_equal(osn_ctl_client_admit(c, 8, OSN_CTL_MSG_INVITE), OSN_CTL_SEND);
    assert_true(osn_ctl_client_retrans_allowed(c, 8.0));
    assert_int_equal(osn_ctl_client_admit(c, 8.05, OSN_CTL_MSG_INVITE_RETX), OSN_CTL_SKIP);
    assert_true(osn_ctl_client_retrans_allowed(c, 8.11));
    osn_ctl_free(c);
}

/* RRRC: the server counts 3 redundant copies per 10 originals -> psi = 0.3 in feedback; the
 * client (psi0 = 0.05, K_P = 0, K_I = 10, T_c = 1) moves r by 10 * (0.05 - 0.3) = -2.5 at the
 * first boundary after the response. */
static void test_pi_rrrc(void **state)
{
    (void)state;
    struct osn_ctl_cfg cfg;
    struct osn_ctl_feedback fb;
    struct osn_ctl *srv, *cli;

    osn_ctl_cfg_default(&cfg);
    cfg.pi = (struct osn_ctl_pi_cfg){OSN_CTL_PI_RRRC, 0.05, 0, 10, 1, 0, 100, 1, 2};
    srv = make("pi", &cfg);
    cli = make("pi", &cfg);
    osn_ctl_server_feedback(srv, 0, &fb);
    for (int i = 0; i < 13; i++)
        arrive(srv, 0.05 * (i + 1), i < 10 ? OSN_CTL_MSG_INVITE : OSN_CTL_MSG_INVITE_RETX, 0);
    assert_true(osn_ctl_client_level(cli, 0) == 100);
    osn_ctl_server_feedback(srv, 1.0, &fb);
    assert_int_equal(fb.algo, OSN_CTL_ALGO_PI);
    assert_true(fabs(fb.oc - 0.3) < 1e-15);
    osn_ctl_client_on_feedback(cli, 1.0, &fb);
    assert_true(osn_ctl_client_level(cli, 1.5) == 100); /* used at the next boundary */
    assert_true(fabs(osn_ctl_client_level(cli, 2.0) - 97.5) < 1e-12);
    assert_true(fabs(osn_ctl_client_level(cli, 3.0) - 97.5) < 1e-12); /* no fresh psi: hold */
    osn_ctl_free(srv);
    osn_ctl_free(cli);
}

/* The cap on the retransmission message rate (Hong et al.; docs/protocols.md 7.3): with
 * cap_noninvite the server's ratio counts BYE/CANCEL copies (10 INVITEs, 3 INVITE copies and 2
 * non-INVITE copies: psi = 5 / 10 = 0.5 instead of 3 / 10 = 0.3) and a client whose cap is 0
 * holds back a BYE copy as well as an INVITE copy; without it the BYE copy goes, as before.
 * The proxy's question (osn_proxy_retrans_allowed) asks the same of a BYE copy. */
static void test_pi_cap_noninvite(void **state)
{
    (void)state;
    struct osn_ctl_cfg cfg;
    struct osn_ctl_feedback fb;

    for (int all = 0; all <= 1; all++) {
        struct osn_ctl *srv, *cli;

        osn_ctl_cfg_default(&cfg);
        cfg.pi = (struct osn_ctl_pi_cfg){OSN_CTL_PI_RRRC, 0.05, 0, 10, 1, 0, 0, 1, 2};
        cfg.pi.cap_noninvite = all;
        srv = make("pi", &cfg);
        cli = make("pi", &cfg);
        osn_ctl_server_feedback(srv, 0, &fb);
        for (int i = 0; i < 15; i++)
            arrive(srv, 0.05 * (i + 1),
                   i < 10   ? OSN_CTL_MSG_INVITE
                   : i < 13 ? OSN_CTL_MSG_INVITE_RETX
                            : OSN_CTL_MSG_NONINV_RETX,
                   0);
        osn_ctl_server_feedback(srv, 1.0, &fb);
        assert_true(fabs(fb.oc - (all ? 0.5 : 0.3)) < 1e-15);
        /* r_max = 0: the cap lets no copy through */
        assert_int_equal(osn_ctl_client_admit(cli, 1.0, OSN_CTL_MSG_INVITE_RETX), OSN_CTL_SKIP);
        assert_int_equal(osn_ctl_client_admit(cli, 1.0, OSN_CTL_MSG_NONINV_RETX),
                         all ? OSN_CTL_SKIP : OSN_CTL_SEND);
        assert_int_equal(osn_ctl_client_admit(cli, 1.0, OSN_CTL_MSG_BYE), OSN_CTL_SEND);
        assert_int_equal(osn_ctl_client_admit(cli, 1.0, OSN_CTL_MSG_INVITE), OSN_CTL_SEND);
        osn_ctl_free(srv);
        osn_ctl_free(cli);
    }
}

/* Same seed, same decisions; another seed, other decisions; the long-run shed fraction of
 * oc = 10 under 80/20 is 12.5% of the INVITEs. */
static void test_determinism(void **state)
{
    (void)state;
    struct osn_ctl_cfg cfg;
    struct osn_ctl *a, *b, *d;
    int same = 1, diff = 0, shed = 0;
    const int n = 100000;

    osn_ctl_cfg_default(&cfg);
    cfg.seed = 7;
    a = make("loss", &cfg);
    b = make("loss", &cfg);
    cfg.seed = 8;
    d = make("loss", &cfg);
    feed(a, 0, OSN_CTL_ALGO_LOSS, 10, 100, 1);
    feed(b, 0, OSN_CTL_ALGO_LOSS, 10, 100, 1);
    feed(d, 0, OSN_CTL_ALGO_LOSS, 10, 100, 1);
    for (int i = 0; i < n; i++) {
        enum osn_ctl_send x = osn_ctl_client_admit(a, 1e-3 * i, OSN_CTL_MSG_INVITE);

        same &= x == osn_ctl_client_admit(b, 1e-3 * i, OSN_CTL_MSG_INVITE);
        diff |= x != osn_ctl_client_admit(d, 1e-3 * i, OSN_CTL_MSG_INVITE);
        shed += x == OSN_CTL_SHED_503;
    }
    assert_true(same);
    assert_true(diff);
    /* Binomial sd = sqrt(n * 0.125 * 0.875) = 105: allow 5 sd. */
    assert_true(abs(shed - n / 8) < 525);
    osn_ctl_free(a);
    osn_ctl_free(b);
    osn_ctl_free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_factory),
            cmocka_unit_test(test_hysteretic_modes),
            cmocka_unit_test(test_occupancy_delay),
            cmocka_unit_test(test_none_local),
            cmocka_unit_test(test_loss_8020),
            cmocka_unit_test(test_loss_seq_validity),
            cmocka_unit_test(test_loss_server),
            cmocka_unit_test(test_loss_server_rules),
            cmocka_unit_test(test_rate_server),
            cmocka_unit_test(test_rate_bucket),
            cmocka_unit_test(test_prsm),
            cmocka_unit_test(test_pi_rtd),
            cmocka_unit_test(test_pi_rrrc),
            cmocka_unit_test(test_pi_cap_noninvite),
            cmocka_unit_test(test_determinism),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
