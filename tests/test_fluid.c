/*
 * Tests of the fluid model (src/fluid) and its scenario files (src/io/fluid_scenario.c).
 *
 * References are independent of the code under test: the RFC 3261 schedule written out as
 * numbers, a direct implementation of the section 7.2 infinite-buffer closed form (one delay
 * per cohort, no cohort bookkeeping), conservation identities, the section 7.2 burst example
 * and its collapse slope (7 copies per call once the delay passes 31.5 s: 7 x 60 - 100 =
 * 320 messages/s), and PI steps worked out by hand.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "osn/ctl.h"
#include "osn/err.h"
#include "osn/fluid.h"
#include "osn/fluid_scenario.h"

#define COL(res, h, c) ((res)->hop[h].col[OSN_FLUID_##c])

static struct osn_fluid_result *run(const struct osn_fluid_cfg *cfg)
{
    struct osn_fluid_result *res = NULL;
    char err[256] = "";
    int rc = osn_fluid_run(&res, cfg, err, sizeof err);
    if (rc)
        fprintf(stderr, "osn_fluid_run: %s\n", err);
    assert_int_equal(rc, 0);
    assert_non_null(res);
    return res;
}

/* The 60 % load server of section 7.2 with a burst of +100/s at 10 s lasting `dur` s. */
static struct osn_fluid_cfg burst_cfg(double dur)
{
    struct osn_fluid_cfg c;
    osn_fluid_cfg_default(&c);
    c.profile.shape = OSN_FLUID_BURST;
    c.profile.base_rate = 60;
    c.profile.burst_start = 10;
    c.profile.burst_duration = dur;
    c.profile.burst_rate = 100;
    return c;
}

/* One cohort of mass 1 in slot 0 whose 100 Trying arrives `answer` s after it was sent. */
static struct osn_fluid_cfg impulse_cfg(double answer, int retx)
{
    struct osn_fluid_cfg c;
    osn_fluid_cfg_default(&c);
    c.profile.shape = OSN_FLUID_BURST;
    c.profile.base_rate = 0;
    c.profile.burst_start = 0;
    c.profile.burst_duration = c.slot;
    c.profile.burst_rate = 1 / c.slot;
    c.server[0].delay_down = answer;
    c.retx = retx;
    c.horizon = 40;
    return c;
}

static void test_schedule(void **state)
{
    static const double rfc[] = {0, 0.5, 1.5, 3.5, 7.5, 15.5, 31.5}; /* RFC 3261 17.1.1.2 */
    (void)state;

    for (int retx = 5; retx <= 6; retx++) {
        struct osn_fluid_cfg c = impulse_cfg(40, retx); /* never answered before Timer B */
        struct osn_fluid_result *res = run(&c);
        double total = 0;
        for (int j = 1; j <= retx; j++) {
            assert_true(fabs((double)res->k[j] * c.slot - rfc[j]) < 1e-12);
            assert_true(fabs(res->hop[0].retx[j][res->k[j]] - 1) < 1e-12);
            for (long n = 0; n < res->nslots; n++)
                total += res->hop[0].retx[j][n];
        }
        assert_true(fabs(total - retx) < 1e-12); /* nothing else, and no 7th copy */
        assert_int_equal(res->kb, 640);          /* Timer B = 64 T1 = 32 s */
        assert_true(fabs(COL(res, 0, FAILED)[640] - 1) < 1e-12);
        assert_true(fabs(res->sum.failed - 1) < 1e-12);
        osn_fluid_result_free(res);
    }
    /* A 100 Trying 2 s after the INVITE stops the copies due at 3.5 s and later. */
    struct osn_fluid_cfg c = impulse_cfg(2, 6);
    struct osn_fluid_result *res = run(&c);
    assert_true(fabs(res->sum.retransmissions - 2) < 1e-12);
    assert_true(fabs(res->hop[0].retx[2][30] - 1) < 1e-12);
    assert_true(fabs(res->sum.redundant - 2) < 1e-12); /* the server had the original */
    assert_true(fabs(res->sum.completed - 1) < 1e-12);
    assert_true(fabs(res->sum.peak_delay - 2) < 1e-12);
    assert_true(res->sum.failed == 0);
    osn_fluid_result_free(res);
}

static void test_light_load(void **state)
{
    struct osn_fluid_cfg c;
    (void)state;
    osn_fluid_cfg_default(&c);
    c.profile.base_rate = 30;
    c.horizon = 60;
    struct osn_fluid_result *res = run(&c);
    assert_true(res->sum.retransmissions == 0);
    assert_true(res->sum.peak_queue[0] == 0);
    assert_true(res->sum.recovered);
    assert_true(fabs(res->sum.offered - 1800) < 1e-6);
    assert_true(fabs(res->sum.completed - res->sum.offered) < 1e-6);
    assert_true(res->sum.failed == 0 && res->sum.pending == 0);
    osn_fluid_result_free(res);
}

/* Per slot and in total: arrived = served + lost + (queue(n) - queue(n-1)). */
static void check_conservation(const struct osn_fluid_result *res)
{
    for (int h = 0; h < res->hops; h++) {
        double prev = 0, in = 0, out = 0;
        for (long n = 0; n < res->nslots; n++) {
            double a = COL(res, h, ARRIVED)[n], s = COL(res, h, SERVED)[n];
            double l = COL(res, h, LOST)[n] + COL(res, h, REMOVED)[n], q = COL(res, h, QUEUE)[n];
            double scale = 1 + a + q;
            assert_true(fabs(a - s - l - (q - prev)) <= 1e-9 * scale);
            assert_true(q >= 0 && s >= 0 && l >= 0);
            assert_true(q <= res->cfg.server[h].buffer * (1 + 1e-12) || res->hops == 2);
            prev = q;
            in += a;
            out += s + l;
        }
        assert_true(fabs(in - out - prev) <= 1e-9 * (1 + in));
    }
}

static void test_conservation(void **state)
{
    (void)state;
    struct osn_fluid_cfg c = burst_cfg(2);
    c.server[0].buffer = 60;
    c.server[0].delay_up = 0.1;
    c.server[0].delay_down = 0.15;
    struct osn_fluid_result *res = run(&c);
    assert_true(res->sum.lost > 0);
    check_conservation(res);
    /* Requests arriving are the copies sent d_u = 2 slots earlier. */
    for (long n = 2; n < res->nslots; n++)
        assert_true(fabs(COL(res, 0, ARRIVED)[n] - COL(res, 0, ORIG)[n - 2] -
                         COL(res, 0, RETX)[n - 2]) < 1e-9);
    assert_true(res->sum.pending >= 0);
    osn_fluid_result_free(res);

    c = burst_cfg(4);
    c.topology = OSN_FLUID_TANDEM;
    c.server[0].rate = 200;
    c.server[1].buffer = 100;
    res = run(&c);
    check_conservation(res);
    osn_fluid_result_free(res);
}

/* Section 7.2 closed form with B = infinity, written directly: R(m) = d_u + W(m + d_u) + d_d. */
static void test_closed_form(void **state)
{
    (void)state;
    struct osn_fluid_cfg c = burst_cfg(2);
    c.horizon = 80;
    c.server[0].delay_up = 0.1;    /* 2 slots */
    c.server[0].delay_down = 0.15; /* 3 slots */
    struct osn_fluid_result *res = run(&c);
    const long N = res->nslots, du = 2, dd = 3, kb = 640;
    static const long K[] = {0, 10, 30, 70, 150, 310, 630};
    const double cs = 100 * 0.05;
    double *a = calloc((size_t)N, sizeof *a), *q = calloc((size_t)N + 1, sizeof *q);
    double *r = calloc((size_t)N * 7, sizeof *r);
    long *W = calloc((size_t)N, sizeof *W);
    double fail = 0, qmax = 0;
    assert_non_null(a);
    assert_non_null(q);
    assert_non_null(r);
    assert_non_null(W);
    for (long n = 0; n < N; n++) /* burst edges 10 s and 12 s fall on slot boundaries */
        a[n] = 0.05 * (60 + (n >= 200 && n < 240 ? 100 : 0));
    for (long n = 0; n < N; n++) {
        W[n] = (long)floor(q[n] / cs + 1e-9);
        for (int j = 1; j <= 6; j++) {
            long m = n - K[j];
            if (m >= 0 && du + W[m + du] + dd > K[j])
                r[n * 7 + j] = a[m];
        }
        if (n >= du) {
            double A = a[n - du];
            for (int j = 1; j <= 6; j++)
                A += r[(n - du) * 7 + j];
            q[n + 1] = fmax(0, q[n] + A - cs);
        }
        if (n - kb >= 0 && du + W[n - kb + du] + dd > kb)
            fail += a[n - kb];
        qmax = fmax(qmax, q[n + 1]);
    }
    for (long n = 0; n < N; n++) {
        assert_true(fabs(COL(res, 0, QUEUE)[n] - q[n + 1]) <= 1e-9 * (1 + q[n + 1]));
        for (int j = 1; j <= 6; j++)
            assert_true(fabs(res->hop[0].retx[j][n] - r[n * 7 + j]) <= 1e-9);
    }
    assert_true(qmax > 1000); /* the reference did leave the trivial regime */
    assert_true(fail > 0);
    assert_true(fabs(res->sum.failed - fail) <= 1e-9 * fail);
    /* B = inf: every copy that has arrived (all but those of the last d_u slots) is redundant. */
    double arrived = 0;
    for (long n = 0; n < N - du; n++)
        arrived += COL(res, 0, RETX)[n];
    assert_true(fabs(res->sum.redundant - arrived) < 1e-9 * arrived);
    free(a);
    free(q);
    free(r);
    free(W);
    osn_fluid_result_free(res);
}

static void test_burst_example(void **state)
{
    (void)state;
    struct osn_fluid_cfg c = burst_cfg(0.5);
    struct osn_fluid_result *res = run(&c);
    assert_true(res->sum.recovered);
    assert_true(res->sum.final_queue[0] == 0);
    assert_true(fabs(res->sum.peak_queue[0] - 30) < 1e-9); /* 0.5 s x (160 - 100)/s */
    assert_true(fabs(res->sum.peak_delay - 0.3) < 1e-9);   /* below T1: no copies at all */
    assert_true(res->sum.retransmissions == 0);
    assert_true(fabs(res->sum.goodput * 120 - 7250) < 1e-6);
    osn_fluid_result_free(res);

    c = burst_cfg(2);
    res = run(&c);
    const double *q = COL(res, 0, QUEUE);
    assert_false(res->sum.recovered);
    /* docs/protocols.md 7.2 toy check: q ~ 29 000 at 120 s. */
    assert_true(fabs(res->sum.final_queue[0] - 29000) < 0.05 * 29000);
    /* Once W > 31.5 s every call is sent 7 times: dq/dt = 7 x 60 - 100 = 320 per s. */
    assert_true(COL(res, 0, QDELAY)[1399] > 32);
    assert_true(fabs((q[2399] - q[1399]) / 50 - 320) < 1e-6);
    assert_true(res->sum.peak_delay > 32);
    assert_true(res->sum.failed > 0);
    osn_fluid_result_free(res);
}

static void test_finite_buffer(void **state)
{
    (void)state;
    /* B < mu (T1 - RTT) = 50: no delay-triggered copies, so none is redundant (section 7.2). */
    struct osn_fluid_cfg c = burst_cfg(2);
    c.server[0].buffer = 40;
    struct osn_fluid_result *res = run(&c);
    assert_true(res->sum.lost > 0);
    assert_true(res->sum.retransmissions > 0);
    assert_true(res->sum.redundant < 1e-9 * res->sum.retransmissions); /* rounding only */
    assert_true(fabs(res->sum.lost - res->sum.retransmissions) < 1e-9 * res->sum.lost);
    assert_true(res->sum.peak_queue[0] <= 40 + 1e-9);
    assert_true(res->sum.recovered);
    assert_true(res->sum.failed < 1e-6); /* lost copies were re-sent in time */
    osn_fluid_result_free(res);
}

static void test_pi_by_hand(void **state)
{
    (void)state;
    struct osn_fluid_pi_cfg cfg = {OSN_FLUID_CTL_RTD, 0.1, 1.0, 2.0, 10.0, 5.0};
    /* The fluid model's controller is ctl's PI law, clamped to [0, max_rate]. */
    struct osn_ctl_pi_law pi;
    osn_ctl_pi_law_init(&pi, &(struct osn_ctl_pi_law_cfg){.target = cfg.target,
                                                          .kp = cfg.kp,
                                                          .ki = cfg.ki,
                                                          .interval = cfg.interval,
                                                          .lo = 0,
                                                          .hi = cfg.max_rate});
    assert_true(pi.out == 5);
    /* e = -0.5, first sample: no proportional kick; 5 + 10 x 0.1 x (-0.5) = 4.5 */
    assert_true(fabs(osn_ctl_pi_law_update(&pi, 1.5) - 4.5) < 1e-12);
    /* e = -2: 4.5 + 2 (-2 + 0.5) + 1 x (-2) = -0.5, clamped to 0 */
    assert_true(osn_ctl_pi_law_update(&pi, 3) == 0);
    assert_true(osn_ctl_pi_law_update(&pi, NAN) == 0); /* nothing measured: hold */
    /* e = 1: 0 + 2 (1 + 2) + 1 = 7, clamped to 5 */
    assert_true(osn_ctl_pi_law_update(&pi, 0) == 5);
    /* e = 0: 5 + 2 (0 - 1) = 3 */
    assert_true(fabs(osn_ctl_pi_law_update(&pi, 1) - 3) < 1e-12);

    /* The phase-margin design meets |L(j wc)| = 1 and the margin it was asked for. */
    double kp, ki, mu = 100, wc = 1, pm = 45, theta = 0.05;
    assert_int_equal(osn_ctl_pi_design(mu, wc, pm, theta, &kp, &ki), 0);
    double mag = sqrt(ki * ki + kp * kp * wc * wc) / (mu * wc * wc);
    double phase = -180 + atan(kp * wc / ki) * 180 / 3.14159265358979323846 -
                   wc * theta * 180 / 3.14159265358979323846;
    assert_true(fabs(mag - 1) < 1e-12);
    assert_true(fabs(phase + 180 - pm) < 1e-9);
    assert_int_equal(osn_ctl_pi_design(mu, 10, 60, 0.5, &kp, &ki), OSN_EINVAL);
}

static void test_control_recovers(void **state)
{
    (void)state;
    for (int kind = OSN_FLUID_CTL_RRRC; kind <= OSN_FLUID_CTL_RTD; kind++) {
        struct osn_fluid_cfg c = burst_cfg(2);
        c.control.kind = (enum osn_fluid_ctl)kind;
        if (kind == OSN_FLUID_CTL_RTD) {
            c.control.target = 0.25;
            assert_int_equal(osn_ctl_pi_design(100, 1, 45, 0.05, &c.control.kp, &c.control.ki), 0);
        } else {
            c.control.target = 0.1;
            c.control.kp = 20;
            c.control.ki = 100;
        }
        struct osn_fluid_result *res = run(&c);
        double amin = INFINITY;
        for (long n = 0; n < res->nslots; n++)
            amin = fmin(amin, COL(res, 0, ALLOW)[n]);
        assert_true(res->sum.recovered);
        assert_true(res->sum.failed == 0);
        assert_true(amin < 50);                                  /* the cap did act */
        assert_true(res->sum.retransmissions < 200);             /* vs 33 000 without control */
        assert_true(COL(res, 0, ALLOW)[res->nslots - 1] == 100); /* and let go again */
        osn_fluid_result_free(res);
    }
}

/*
 * A backlog that neither drains nor fails: 50 calls/s on 100/s, raised by a 1.5 s burst to a
 * queue whose delay lies between T1 and 3 T1, so every call is sent exactly twice and the two
 * copies fill the capacity. The fixed point, checked on the last Timer B period: the queue is
 * flat, copies sent = originals sent, served = capacity, no Timer B expiry.
 */
static void test_fixed_point(void **state)
{
    (void)state;
    struct osn_fluid_cfg c = burst_cfg(1.5);
    c.profile.base_rate = 50;
    struct osn_fluid_result *res = run(&c);
    long N = res->nslots, from = N - 1 - res->kb;
    double orig = 0, retx = 0, served = 0, failed = 0;
    for (long n = from + 1; n < N; n++) {
        orig += COL(res, 0, ORIG)[n];
        retx += COL(res, 0, RETX)[n];
        served += COL(res, 0, SERVED)[n];
        failed += COL(res, 0, FAILED)[n];
    }
    assert_false(res->sum.recovered);
    assert_int_equal(res->sum.state, OSN_FLUID_STANDING);
    assert_true(res->sum.final_queue[0] > 50); /* delay > T1: the copies are due */
    assert_true(fabs(COL(res, 0, QUEUE)[N - 1] - COL(res, 0, QUEUE)[from]) < 1e-9);
    assert_true(fabs(retx - orig) < 1e-9 * orig);
    assert_true(fabs(served - 100 * (double)res->kb * c.slot) < 1e-9 * served);
    assert_true(failed == 0 && res->sum.failed == 0);
    osn_fluid_result_free(res);

    /* The neighbours: a shorter burst drains, a longer one collapses and fails calls. */
    c = burst_cfg(1);
    c.profile.base_rate = 50;
    res = run(&c);
    assert_int_equal(res->sum.state, OSN_FLUID_RECOVERED);
    osn_fluid_result_free(res);
    c = burst_cfg(2);
    res = run(&c);
    assert_int_equal(res->sum.state, OSN_FLUID_FAILING);
    osn_fluid_result_free(res);
}

/*
 * PRSM with an infinite buffer loses nothing, so every copy finds its transaction held and
 * goes to the secondary queue, to be removed unserved: the primary queue is the queue of the
 * originals alone, q(n+1) = max(0, q(n) + a(n) - mu slot), written here directly; no call
 * fails, and the server serves exactly the originals.
 */
static void test_prsm_infinite(void **state)
{
    (void)state;
    struct osn_fluid_cfg c = burst_cfg(2);
    c.control.kind = OSN_FLUID_CTL_PRSM;
    c.profile.burst_duration = 20; /* 160/s for 20 s: the primary wait reaches 6 s */
    struct osn_fluid_result *res = run(&c);
    double q = 0, qmax = 0, retx = 0, removed = 0, served = 0;
    for (long n = 0; n < res->nslots; n++) {
        double a = 0.05 * (60 + (n >= 200 && n < 600 ? 100 : 0));
        q = fmax(0, q + a - 5);
        qmax = fmax(qmax, q);
        assert_true(fabs(COL(res, 0, QUEUE)[n] - COL(res, 0, QUEUE2)[n] - q) < 1e-9 * (1 + q));
        assert_true(fabs(COL(res, 0, QDELAY)[n + (n + 1 < res->nslots)] -
                         floor(q / 5 + 1e-9) * 0.05) < 1e-9 ||
                    n + 1 == res->nslots);
        retx += COL(res, 0, RETX)[n];
        removed += COL(res, 0, REMOVED)[n];
        served += COL(res, 0, SERVED)[n];
    }
    assert_true(qmax > 1000);
    assert_true(retx > 1000);                        /* the delay did trigger copies */
    assert_true(fabs(removed - retx) < 1e-9 * retx); /* and every one was removed */
    assert_true(fabs(served - res->sum.offered) < 1e-9 * served);
    assert_true(res->sum.failed == 0 && res->sum.lost == 0 && res->sum.recovered);
    check_conservation(res);
    /* Conventional SIP on the same input collapses. */
    c.control.kind = OSN_FLUID_CTL_NONE;
    struct osn_fluid_result *conv = run(&c);
    assert_true(conv->sum.failed > 1000 && !conv->sum.recovered);
    osn_fluid_result_free(conv);
    osn_fluid_result_free(res);
}

/* PRSM with a finite buffer in a sustained 120 % overload: the buffer bounds both queues, the
 * primary one has priority for the room, and nothing is created or destroyed. */
static void test_prsm_finite(void **state)
{
    (void)state;
    struct osn_fluid_cfg c = burst_cfg(120);
    c.profile.burst_start = 0;
    c.profile.burst_rate = 60;
    c.control.kind = OSN_FLUID_CTL_PRSM;
    c.server[0].buffer = 1000;
    struct osn_fluid_result *res = run(&c);
    check_conservation(res);
    assert_true(res->sum.lost > 0);
    for (long n = 0; n < res->nslots; n++) {
        assert_true(COL(res, 0, QUEUE)[n] <= 1000 * (1 + 1e-12));
        assert_true(COL(res, 0, QDELAY)[n] <= 1000 / 100.0 + 1e-9); /* the primary wait */
    }
    /* Served at full capacity from the first backlog on: goodput mu less what fails. */
    assert_true(res->sum.goodput > 95 && res->sum.goodput <= 100 + 1e-9);
    c.control.kind = OSN_FLUID_CTL_NONE;
    struct osn_fluid_result *conv = run(&c);
    assert_true(conv->sum.goodput < 0.8 * res->sum.goodput);
    assert_true(conv->sum.failed > 3 * res->sum.failed);
    osn_fluid_result_free(conv);
    osn_fluid_result_free(res);
}

/*
 * MMPP-2 input: a seed gives one path (the same twice, another with another seed), each slot
 * carries a rate between the two phase rates, and over a long run the mean rate is the
 * stationary one, (r0 s10 + r1 s01)/(s01 + s10), within 4 standard deviations of a time average
 * of a two-state Markov rate: Var = 2 (r1 - r0)^2 p0 p1 / ((s01 + s10) T).
 */
static void test_mmpp(void **state)
{
    (void)state;
    struct osn_fluid_cfg c;
    osn_fluid_cfg_default(&c);
    c.profile.shape = OSN_FLUID_MMPP;
    c.horizon = 20000;
    c.slot = 0.5;
    c.server[0].rate = 1000; /* light load: only the input matters here */
    struct osn_fluid_result *a = run(&c), *b = run(&c);
    c.profile.seed = 2;
    struct osn_fluid_result *other = run(&c);
    const double r0 = 50, r1 = 150, s01 = 0.1, s10 = 0.9, p1 = s01 / (s01 + s10);
    double mean = (1 - p1) * r0 + p1 * r1, T = 20000;
    double sd = sqrt(2 * (r1 - r0) * (r1 - r0) * p1 * (1 - p1) / ((s01 + s10) * T));
    bool differs = false;
    for (long n = 0; n < a->nslots; n++) {
        assert_true(a->offered[n] == b->offered[n]);
        assert_true(a->offered[n] >= r0 * 0.5 - 1e-9 && a->offered[n] <= r1 * 0.5 + 1e-9);
        differs |= a->offered[n] != other->offered[n];
    }
    assert_true(differs);
    assert_true(fabs(a->sum.offered / T - mean) < 4 * sd);
    assert_true(fabs(other->sum.offered / T - mean) < 4 * sd);
    osn_fluid_result_free(a);
    osn_fluid_result_free(b);
    osn_fluid_result_free(other);
}

static void test_scenario(void **state)
{
    struct osn_fluid_scenario sc = {0};
    char err[512];
    (void)state;

    osn_fluid_scenario_release(&sc); /* the load before's */
    assert_int_equal(osn_fluid_scenario_load(&sc, OSN_SOURCE_DIR "/examples/fluid-burst.ini", NULL,
                                             0, err, sizeof err),
                     0);
    assert_int_equal(sc.cfg.profile.shape, OSN_FLUID_BURST);
    assert_true(sc.cfg.profile.burst_duration == 0.5 && isinf(sc.cfg.server[0].buffer));
    const char *sets[] = {"profile.burst_duration=2", "control.kind=rtd"};
    osn_fluid_scenario_release(&sc); /* the load before's */
    assert_int_equal(osn_fluid_scenario_load(&sc, OSN_SOURCE_DIR "/examples/fluid-burst.ini", sets,
                                             2, err, sizeof err),
                     0);
    assert_true(sc.cfg.profile.burst_duration == 2 && sc.cfg.control.kp > 0);
    assert_string_equal(sc.warning, "");
    /* control.algorithm, the old name of control.kind: the same configuration, and a warning
     * that names where it was set; both names at once must agree. */
    struct osn_fluid_cfg by_kind = sc.cfg;
    const char *old[] = {"profile.burst_duration=2", "control.algorithm=rtd"};
    osn_fluid_scenario_release(&sc); /* the load before's */
    assert_int_equal(osn_fluid_scenario_load(&sc, OSN_SOURCE_DIR "/examples/fluid-burst.ini", old,
                                             2, err, sizeof err),
                     0);
    assert_memory_equal(&sc.cfg, &by_kind, sizeof by_kind);
    assert_non_null(strstr(sc.warning, "--set control.algorithm=rtd"));
    assert_non_null(strstr(sc.warning, "control.kind"));
    const char *both[] = {"profile.burst_duration=2", "control.kind=rtd", "control.algorithm=RTD"};
    osn_fluid_scenario_release(&sc); /* the load before's */
    assert_int_equal(osn_fluid_scenario_load(&sc, OSN_SOURCE_DIR "/examples/fluid-burst.ini", both,
                                             3, err, sizeof err),
                     0);
    assert_memory_equal(&sc.cfg, &by_kind, sizeof by_kind);
    assert_non_null(strstr(sc.warning, "--set control.algorithm=RTD"));
    /* Two different controls: neither wins (the table reads both into one field, and the one
     * read last would), and a key of the control is not judged by either. */
    const char *differ[][3] = {{"control.kind=rtd", "control.algorithm=none", "control.kp=3"},
                               {"control.algorithm=none", "control.kind=rtd", "control.kp=3"}};
    for (int i = 0; i < 2; i++) {
        osn_fluid_scenario_release(&sc); /* the load before's */
        assert_int_equal(osn_fluid_scenario_load(&sc, NULL, differ[i], 3, err, sizeof err),
                         OSN_ECONFIG);
        assert_non_null(strstr(err, "--set control.algorithm=none: key 'control.algorithm'"));
        assert_non_null(strstr(err, "says rtd (--set control.kind=rtd)"));
    }

    const char *bad1[] = {"profile.step_rate=3"};
    osn_fluid_scenario_release(&sc); /* the load before's */
    assert_int_equal(osn_fluid_scenario_load(&sc, OSN_SOURCE_DIR "/examples/fluid-burst.ini", bad1,
                                             1, err, sizeof err),
                     OSN_ECONFIG);
    assert_non_null(strstr(err, "--set profile.step_rate=3"));
    assert_non_null(strstr(err, "acts only with profile.shape = step (it is burst here)"));
    const char *bad2[] = {"server p1.rate=3"};
    osn_fluid_scenario_release(&sc); /* the load before's */
    assert_int_equal(osn_fluid_scenario_load(&sc, NULL, bad2, 1, err, sizeof err), OSN_ECONFIG);
    assert_non_null(strstr(err, "tandem"));
    const char *bad3[] = {"fluid.retransmissions=7"};
    osn_fluid_scenario_release(&sc); /* the load before's */
    assert_int_equal(osn_fluid_scenario_load(&sc, NULL, bad3, 1, err, sizeof err), OSN_ECONFIG);
    assert_non_null(strstr(err, "fluid.retransmissions"));
    const char *tandem[] = {"fluid.topology=tandem", "server p2.buffer=inf"};
    osn_fluid_scenario_release(&sc); /* the load before's */
    assert_int_equal(osn_fluid_scenario_load(&sc, NULL, tandem, 2, err, sizeof err), 0);
    assert_true(sc.cfg.server[0].rate == 200 && sc.cfg.server[1].rate == 100);

    const char *prsm_tandem[] = {"fluid.topology=tandem", "control.kind=prsm"};
    osn_fluid_scenario_release(&sc); /* the load before's */
    assert_int_equal(osn_fluid_scenario_load(&sc, NULL, prsm_tandem, 2, err, sizeof err),
                     OSN_ECONFIG);
    assert_non_null(strstr(err, "control.kind"));
    const char *prsm_key[] = {"control.kind=prsm", "control.kp=3"};
    osn_fluid_scenario_release(&sc); /* the load before's */
    assert_int_equal(osn_fluid_scenario_load(&sc, NULL, prsm_key, 2, err, sizeof err), OSN_ECONFIG);
    assert_non_null(strstr(err, "control.kp"));
    const char *mmpp_one[] = {"profile.shape=mmpp", "profile.mmpp_rates=50"};
    osn_fluid_scenario_release(&sc); /* the load before's */
    assert_int_equal(osn_fluid_scenario_load(&sc, NULL, mmpp_one, 2, err, sizeof err), OSN_ECONFIG);
    assert_non_null(strstr(err, "profile.mmpp_rates"));
    const char *mmpp_base[] = {"profile.shape=mmpp", "profile.base_rate=5"};
    osn_fluid_scenario_release(&sc); /* the load before's */
    assert_int_equal(osn_fluid_scenario_load(&sc, NULL, mmpp_base, 2, err, sizeof err),
                     OSN_ECONFIG);
    const char *seed_burst[] = {"profile.seed=5"};
    osn_fluid_scenario_release(&sc); /* the load before's */
    assert_int_equal(osn_fluid_scenario_load(&sc, NULL, seed_burst, 1, err, sizeof err),
                     OSN_ECONFIG);
    assert_non_null(strstr(err, "profile.seed"));
    const char *mmpp_ok[] = {"profile.shape=mmpp", "profile.mmpp_rates=10, 20",
                             "profile.mmpp_switch=1, 2", "profile.seed=7", "control.kind=prsm"};
    osn_fluid_scenario_release(&sc); /* the load before's */
    assert_int_equal(osn_fluid_scenario_load(&sc, NULL, mmpp_ok, 5, err, sizeof err), 0);
    assert_true(sc.cfg.profile.mmpp_rate[1] == 20 && sc.cfg.profile.mmpp_switch[1] == 2 &&
                sc.cfg.profile.seed == 7 && sc.cfg.control.kind == OSN_FLUID_CTL_PRSM);
    osn_fluid_scenario_release(&sc);
}

/* Writes text to a new temporary file; returns its path in path (PATH_MAX). */
static void temp_ini(char *path, size_t size, const char *text)
{
    const char *dir = getenv("TMPDIR");
    snprintf(path, size, "%s/osn_fluid_keysXXXXXX", dir && dir[0] ? dir : "/tmp");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

/*
 * The key table is the format: every key it lists is documented (type, help, in the printed
 * keys of --help and docs/scenario.md), and a bad value of any of them, in a file, is refused
 * naming FILE:LINE and the key, whether or not the key acts in the scenario.
 */
static void test_scenario_table(void **state)
{
    struct osn_fluid_scenario *sc = calloc(1, sizeof *sc);
    char err[1024], path[512], text[256], want[600], *doc = NULL, *help = NULL;
    size_t doc_len = 0, help_len = 0;
    (void)state;

    assert_non_null(sc);
    FILE *f = open_memstream(&doc, &doc_len), *g = open_memstream(&help, &help_len);
    assert_non_null(f);
    assert_non_null(g);
    osn_fluid_scenario_keys_print(f, true);
    osn_fluid_scenario_keys_print(g, false);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(fclose(g), 0);
    assert_true(osn_fluid_schema.n >= 38);
    for (size_t i = 0; i < osn_fluid_schema.n; i++) {
        const struct osn_key_spec *k = &osn_fluid_schema.defs[i];
        assert_int_not_equal(k->type, OSN_KEY_NONE);
        assert_true(k->help && k->help[0]);
        snprintf(want, sizeof want, "\n### [%s]\n", k->section);
        assert_non_null(strstr(doc, want));
        snprintf(want, sizeof want, "| `%s` |", k->name);
        assert_non_null(strstr(doc, want));
        snprintf(want, sizeof want, "\n    %s ", k->name);
        assert_non_null(strstr(help, want));

        /* Line 3 of the file holds the bad value; "x" is no number, list or name. */
        snprintf(text, sizeof text, "; one bad key\n[%s]\n%s = x\n", k->section, k->name);
        temp_ini(path, sizeof path, text);
        osn_fluid_scenario_release(sc); /* the load before's */
        assert_int_equal(osn_fluid_scenario_load(sc, path, NULL, 0, err, sizeof err), OSN_ECONFIG);
        snprintf(want, sizeof want, "%s:3: key '%s.%s' = 'x': ", path, k->section, k->name);
        if (!strstr(err, want))
            fail_msg("%s.%s: '%s' does not start with '%s'", k->section, k->name, err, want);
        unlink(path);
    }
    free(doc);
    free(help);

    /* A rule between two keys names the one that was given: T1 below the default slot. */
    temp_ini(path, sizeof path, "[fluid]\nt1 = 0.01\n");
    osn_fluid_scenario_release(sc); /* the load before's */
    assert_int_equal(osn_fluid_scenario_load(sc, path, NULL, 0, err, sizeof err), OSN_ECONFIG);
    snprintf(want, sizeof want, "%s:2: key 'fluid.t1' = '0.01': the slot (0.05 s)", path);
    assert_non_null(strstr(err, want));
    unlink(path);
    free(sc);
}

/*
 * The RTD gains the loader designs (docs/protocols.md 7.3) against the closed form written out
 * here: the PI zero supplies the phase margin plus the dead time's lag at the crossover w,
 * phi = PM + w theta with theta = delay_up + delay_down + interval / 2, and |C P| = 1 at w on
 * the plant 1 / (mu s) gives kp = mu w sin(phi), ki = mu w^2 cos(phi). The crossover and the
 * margin are stored apart from the run's configuration, so this also checks that they reach the
 * design; kp or ki given wins over the design's, each on its own.
 */
static void test_scenario_gains(void **state)
{
    struct osn_fluid_scenario *sc = calloc(1, sizeof *sc);
    char err[512];
    (void)state;

    assert_non_null(sc);
    const char *rtd[] = {"control.kind=rtd",        "server.rate=120",      "server.delay_up=0.05",
                         "server.delay_down=0.02",  "control.interval=0.2", "control.crossover=0.5",
                         "control.phase_margin=60", "control.target=0.3"};
    osn_fluid_scenario_release(sc); /* the load before's */
    assert_int_equal(osn_fluid_scenario_load(sc, NULL, rtd, 8, err, sizeof err), 0);
    const double pi = 3.14159265358979323846, mu = 120, w = 0.5;
    double phi = 60 * pi / 180 + w * (0.05 + 0.02 + 0.2 / 2);
    assert_true(fabs(sc->cfg.control.kp - mu * w * sin(phi)) < 1e-12 * mu);
    assert_true(fabs(sc->cfg.control.ki - mu * w * w * cos(phi)) < 1e-12 * mu);
    assert_true(sc->cfg.control.max_rate == 120 && sc->cfg.control.target == 0.3);
    /* The defaults: w = 1 rad/s, 45 degrees, interval 0.1 s, no link delay; the target 0.25 s. */
    const char *rtd_def[] = {"control.kind=rtd", "control.kp=7"};
    osn_fluid_scenario_release(sc); /* the load before's */
    assert_int_equal(osn_fluid_scenario_load(sc, NULL, rtd_def, 2, err, sizeof err), 0);
    phi = 45 * pi / 180 + 1 * 0.05;
    assert_true(sc->cfg.control.kp == 7);
    assert_true(fabs(sc->cfg.control.ki - 100 * cos(phi)) < 1e-12 * 100);
    assert_true(sc->cfg.control.target == 0.25 && sc->cfg.control.interval == 0.1);
    /* rrrc: 0.2 mu and 1 mu on the last hop's server (P2 in a tandem), target 0.1. */
    const char *rrrc[] = {"control.kind=rrrc", "fluid.topology=tandem", "server p2.rate=80"};
    osn_fluid_scenario_release(sc); /* the load before's */
    assert_int_equal(osn_fluid_scenario_load(sc, NULL, rrrc, 3, err, sizeof err), 0);
    assert_true(sc->cfg.control.kp == 0.2 * 80 && sc->cfg.control.ki == 80);
    assert_true(sc->cfg.control.max_rate == 80 && sc->cfg.control.target == 0.1);
    assert_true(sc->cfg.server[0].rate == 200);
    osn_fluid_scenario_release(sc);
    free(sc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_schedule),       cmocka_unit_test(test_light_load),
            cmocka_unit_test(test_conservation),   cmocka_unit_test(test_closed_form),
            cmocka_unit_test(test_burst_example),  cmocka_unit_test(test_finite_buffer),
            cmocka_unit_test(test_pi_by_hand),     cmocka_unit_test(test_control_recovers),
            cmocka_unit_test(test_fixed_point),    cmocka_unit_test(test_prsm_infinite),
            cmocka_unit_test(test_prsm_finite),    cmocka_unit_test(test_mmpp),
            cmocka_unit_test(test_scenario),       cmocka_unit_test(test_scenario_table),
            cmocka_unit_test(test_scenario_gains),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
