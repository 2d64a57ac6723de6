/*
 * The dynamic RBOC controller (src/ctl/rate_dyn.c) on scripted windows, against values worked
 * out by hand from the rules at the top of that file: the limit started on the predicted queue
 * while the detector is still normal (where rate, on the same input, does nothing), its rate
 * with the drain term, the feedback delay measured from a client that keeps its old rate for
 * 0.15 s, the onset threshold lowered by the growth over one loop delay, the release held for
 * four loop delays, the
 * client half identical to rate's, and the detectors it refuses.
 *
 * Every window is [t, t + 0.1) (rate.interval) and closed by a feedback call at its end, with
 * no event at that instant: arrivals and departures sit strictly inside their window.
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

static struct osn_ctl *make(const char *kind, const struct osn_ctl_cfg *cfg)
{
    struct osn_ctl *c = NULL;

    assert_int_equal(osn_ctl_new(&c, kind, cfg), 0);
    assert_non_null(c);
    return c;
}

static void arrive(struct osn_ctl *c, double t, enum osn_ctl_msg k, size_t *q)
{
    struct osn_ctl_event ev = {.kind = k, .queue_len = *q, .oc_capable = true};

    assert_int_equal(osn_ctl_server_on_arrival(c, t, &ev).action, OSN_CTL_ADMIT);
    ++*q;
}

static void depart(struct osn_ctl *c, double t, size_t *q)
{
    struct osn_ctl_event ev = {.kind = OSN_CTL_MSG_RESPONSE};

    assert_true(*q > 0);
    ev.queue_len = --*q;
    osn_ctl_server_on_departure(c, t, &ev);
}

static struct osn_ctl_feedback tick(struct osn_ctl *c, double t)
{
    struct osn_ctl_feedback fb;

    osn_ctl_server_feedback(c, t, &fb);
    assert_int_equal(fb.algo, OSN_CTL_ALGO_RATE);
    return fb;
}

/* n_arr arrivals at t0 + (i + 1/2) 0.1 / n_arr (a new INVITE when i % every == 0) and n_dep
 * departures at t0 + (j + 1/2) 0.1 / n_dep, in time order. */
static void even_window(struct osn_ctl *c, double t0, int n_arr, int every, int n_dep, size_t *q)
{
    int i = 0, j = 0;

    while (i < n_arr || j < n_dep) {
        double ta = t0 + (i + 0.5) * 0.1 / n_arr, td = t0 + (j + 0.5) * 0.1 / n_dep;

        if (i < n_arr && (j >= n_dep || ta < td)) {
            arrive(c, ta, i % every == 0 ? OSN_CTL_MSG_INVITE : OSN_CTL_MSG_RESPONSE, q);
            i++;
        } else {
            depart(c, td, q);
            j++;
        }
    }
}

/* A window at a standing queue: 60 responses in and 60 out, in pairs (+1 then -1), the new
 * INVITEs at the times given (each followed at once by a departure), and `extra` responses in
 * at the end with no departure. Arrivals and departures are 60 + n_inv (+ extra). */
static void standing_window(struct osn_ctl *c, double t0, const double *inv, int n_inv, int extra,
                            size_t *q)
{
    int k = 0;

    for (int s = 0; s < 60; s++) {
        double ta = t0 + (s + 0.25) / 600, td = t0 + (s + 0.75) / 600;

        for (; k < n_inv && inv[k] < ta; k++) {
            arrive(c, inv[k], OSN_CTL_MSG_INVITE, q);
            depart(c, inv[k] + 1e-7, q);
        }
        arrive(c, ta, OSN_CTL_MSG_RESPONSE, q);
        for (; k < n_inv && inv[k] < td; k++) {
            arrive(c, inv[k], OSN_CTL_MSG_INVITE, q);
            depart(c, inv[k] + 1e-7, q);
        }
        depart(c, td, q);
    }
    for (; k < n_inv; k++) {
        arrive(c, inv[k], OSN_CTL_MSG_INVITE, q);
        depart(c, inv[k] + 1e-7, q);
    }
    for (int e = 0; e < extra; e++)
        arrive(c, t0 + 0.0999 + 1e-6 * e, OSN_CTL_MSG_RESPONSE, q);
}

/* The limit starts on the predicted queue while the detector is normal. */
static void test_dynamic_onset(void **state)
{
    (void)state;
    struct osn_ctl_cfg cfg;
    struct osn_ctl *dyn, *rate;
    struct osn_ctl_feedback fb;
    size_t qd = 0, qr = 0;

    osn_ctl_cfg_default(&cfg); /* l1 20, h1 40, l2 60, h2 80, interval 0.1, target 0.9 */
    dyn = make("rate_dyn", &cfg);
    rate = make("rate", &cfg);
    tick(dyn, 0), tick(rate, 0);
    /* Window 0: 10 responses in at 0.01, none out. At 0.1: n = 10, g = 100/s, so the onset is
     * max(21, 40 - 100 (0 + 0.1)) = 30 > 10: off. */
    for (int i = 0; i < 10; i++) {
        arrive(dyn, 0.01, OSN_CTL_MSG_RESPONSE, &qd);
        arrive(rate, 0.01, OSN_CTL_MSG_RESPONSE, &qr);
    }
    fb = tick(dyn, 0.1);
    assert_true(fb.oc == 0 && fb.validity == 0);
    assert_true(fabs(osn_ctl_server_limit_onset(dyn) - 30) < 1e-9);
    tick(rate, 0.1);
    /* Window 1: 60 in (10 new INVITEs), 35 out, the queue 10 -> 35 < h1: mode 0 throughout. */
    even_window(dyn, 0.1, 60, 6, 35, &qd);
    even_window(rate, 0.1, 60, 6, 35, &qr);
    assert_int_equal(qd, 35);
    assert_int_equal(osn_ctl_server_mode(dyn), OSN_CTL_NORMAL);
    /* At 0.2: g = (60 - 35) / 0.1 = 250/s, onset max(21, 40 - 250 x 0.1 = 15) = 21 <= 35: the
     * limit starts. CPU per call: busy 0.09 s (window 0, from 0.01) decayed by e^-0.01, plus
     * 0.1 s, over 10 new INVITEs = 0.0189104 s. The excess (35 + 250 x 0 - 20) = 15 messages of
     * 0.1/35 s each, worked off over 2 (0 + 0.1) s, takes 0.2143 of the CPU:
     * (0.9 - 0.2143) / 0.0189104 = 36.26 new INVITEs/s, oc = 36. */
    fb = tick(dyn, 0.2);
    assert_true(fabs(osn_ctl_server_limit_onset(dyn) - 21) < 1e-9);
    assert_true(fb.oc == 36);
    assert_true(fb.validity == 0.5);
    assert_true(osn_ctl_server_feedback_delay(dyn) == 0); /* no sample yet */
    /* rate on the same input: its detector is normal, so no limit. */
    fb = tick(rate, 0.2);
    assert_true(fb.oc == 0 && fb.validity == 0);
    assert_true(isnan(osn_ctl_server_feedback_delay(rate)));
    osn_ctl_free(dyn);
    osn_ctl_free(rate);
}

/* The feedback delay from a client that keeps sending 200 new INVITEs/s for D = 0.15 s after
 * the limit starts at 0.1, then opens its bucket (5 at once, TAU = 4T) and sends at the limit,
 * 50/s (min_rate: the drain term keeps the estimate under it, so the limit stays 50). */
static void test_feedback_delay(void **state)
{
    (void)state;
    struct osn_ctl_cfg cfg;
    struct osn_ctl *c;
    struct osn_ctl_feedback fb;
    double inv1[20], inv2[17];
    const double inv3[5] = {0.31, 0.33, 0.35, 0.37, 0.39};
    double t[16] = {0};
    size_t q = 0;

    /* The window ends as the controller computes them (next = now + 0.1): 0.2 + 0.1 is not the
     * double nearest 0.3, and a tick at 0.3 would come before it. */
    for (int k = 1; k < 16; k++)
        t[k] = t[k - 1] + 0.1;

    osn_ctl_cfg_default(&cfg);
    cfg.det.l2 = 400, cfg.det.h2 = 500; /* no discard mode at the queue of 200 */
    cfg.rate.min_rate = 50;
    c = make("rate_dyn", &cfg);
    tick(c, 0);
    /* Window 0: 260 in (20 new INVITEs: 200/s), 60 out: the queue 0 -> 200, mode 1. */
    even_window(c, 0, 260, 13, 60, &q);
    assert_int_equal(q, 200);
    assert_int_equal(osn_ctl_server_mode(c), OSN_CTL_OVERLOAD);
    /* At 0.1: working off the excess (200 - 20) messages of ~1/600 s in 0.2 s would take more
     * than the CPU (1.5 > 0.9): the estimate is below min_rate, oc = 50 (so it stays through
     * window 3: 0.9 - 1.125, 0.9 - 1.169, then (0.9 - 185 x (0.1/65) / (2 x 0.2467)) / c =
     * 49.9 < 50). lambda0 = 200 >= 1.25 x 50: probe. */
    fb = tick(c, t[1]);
    assert_true(fb.oc == 50);
    /* Window 1: still 200/s (20). At 0.2: 200/s > (200 + 50) / 2: not yet. */
    for (int k = 0; k < 20; k++)
        inv1[k] = 0.1 + (k + 0.5) * 0.005;
    standing_window(c, t[1], inv1, 20, 0, &q);
    assert_true(tick(c, t[2]).oc == 50);
    /* Window 2: 200/s until 0.25 (10), the bucket's 5 at 0.25, then 0.27 and 0.29 (50/s):
     * 17, 170/s > 125: not yet. */
    for (int k = 0; k < 10; k++)
        inv2[k] = 0.2 + (k + 0.5) * 0.005;
    for (int k = 0; k < 5; k++)
        inv2[10 + k] = 0.25 + 1e-6 * k;
    inv2[15] = 0.27, inv2[16] = 0.29;
    standing_window(c, t[2], inv2, 17, 0, &q);
    assert_true(tick(c, t[3]).oc == 50);
    assert_true(osn_ctl_server_feedback_delay(c) == 0);
    /* Window 3: 5 at 50/s, and 5 responses more in than out (g = 50/s). At 0.4: 50/s, between
     * 0.8 x 50 and 125: the sample. A = 20 + 17 + 5 = 42 new INVITEs, S = 50 x 0.3 = 15, B = 5:
     * D = (42 - 15 - 5) / (200 - 50) = 22/150 s (the true 0.15 less the bucket's discreteness:
     * a fluid client would have sent 42.5). */
    standing_window(c, t[3], inv3, 5, 5, &q);
    tick(c, t[4]);
    assert_true(fabs(osn_ctl_server_feedback_delay(c) - 22.0 / 150) < 1e-12);
    /* The onset with this delay: 40 - 50 x (22/150 + 0.1) = 27.667 messages. */
    assert_true(fabs(osn_ctl_server_limit_onset(c) - (40 - 50 * (22.0 / 150 + 0.1))) < 1e-9);
    /* Window 4: the queue (205) drains, no arrivals: abatement at 20. From 0.5, mode 0 with
     * 0 new INVITEs/s < 0.8 x 50: the release condition holds, and must go on holding for
     * 4 (22/150 + 0.1) = 0.987 s: the limit (no estimate without INVITEs: held at 50) stays at
     * 1.4 and is lifted at 1.5 (oc-validity=0). */
    for (int j = 0; q > 0; j++)
        depart(c, t[4] + (j + 0.5) * 0.1 / 205, &q);
    assert_int_equal(osn_ctl_server_mode(c), OSN_CTL_NORMAL);
    for (int k = 5; k <= 14; k++) {
        fb = tick(c, t[k]);
        assert_true(fb.oc == 50 && fb.validity == 0.5);
    }
    fb = tick(c, t[15]);
    assert_true(fb.oc == 0 && fb.validity == 0);
    assert_true(fabs(osn_ctl_server_feedback_delay(c) - 22.0 / 150) < 1e-12);
    osn_ctl_free(c);
}

/* The client half is rate's: the same decisions on the same feedback and requests. */
static void test_client_is_rate(void **state)
{
    (void)state;
    struct osn_ctl_cfg cfg;
    struct osn_ctl *a, *b;
    struct osn_ctl_feedback fb = {OSN_CTL_ALGO_RATE, 8, 10, 1};
    int sent = 0;

    osn_ctl_cfg_default(&cfg);
    a = make("rate", &cfg);
    b = make("rate_dyn", &cfg);
    osn_ctl_client_on_feedback(a, 0, &fb);
    osn_ctl_client_on_feedback(b, 0, &fb);
    for (int i = 0; i < 200; i++) {
        double t = 0.0137 * i;
        enum osn_ctl_send v = osn_ctl_client_admit(a, t, OSN_CTL_MSG_INVITE);

        assert_int_equal(osn_ctl_client_admit(b, t, OSN_CTL_MSG_INVITE), v);
        sent += v == OSN_CTL_SEND;
    }
    /* oc = 8/s, TAU = 4T, requests every 13.7 ms for 2.74 s: the GCRA replayed by hand (X' = X -
     * (ta - LCT) against TAU) sends 26. */
    assert_int_equal(sent, 26);
    assert_true(osn_ctl_client_level(b, 1) == 8);
    /* the strings, not their addresses: a debug build keeps one literal per file */
    assert_string_equal(osn_ctl_kind_level(OSN_CTL_KIND_RATE_DYN),
                        osn_ctl_kind_level(OSN_CTL_KIND_RATE));
    osn_ctl_free(a);
    osn_ctl_free(b);
}

/* Its predictions are in messages: the occupancy and delay detectors are refused, and the rate
 * configuration is checked as rate's. */
static void test_refused(void **state)
{
    (void)state;
    struct osn_ctl_cfg cfg;
    struct osn_ctl *c = NULL;

    osn_ctl_cfg_default(&cfg);
    cfg.det = (struct osn_ctl_det_cfg){OSN_CTL_DET_OCCUPANCY, 0.7, 0.9, 0.95, 0.99, 0, 0.1, 0.3};
    assert_int_equal(osn_ctl_new(&c, "rate_dyn", &cfg), OSN_EINVAL);
    assert_null(c);
    assert_int_equal(osn_ctl_new(&c, "rate", &cfg), 0); /* rate takes it */
    c = osn_ctl_free(c);
    osn_ctl_cfg_default(&cfg);
    cfg.rate.tau0_factor = 5; /* TAU0 > TAU */
    assert_int_equal(osn_ctl_new(&c, "rate_dyn", &cfg), OSN_EINVAL);
    assert_int_equal(osn_ctl_kind_parse("rate_dyn", &(enum osn_ctl_kind){0}), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_dynamic_onset),
            cmocka_unit_test(test_feedback_delay),
            cmocka_unit_test(test_client_is_rate),
            cmocka_unit_test(test_refused),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
