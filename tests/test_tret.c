/*
 * The return time's distribution (src/model/tret_dist.c) against independent references:
 * closed forms (lambda' = 0 gives an Erlang passage; L=1 H=2 R=3 a two-state phase type with an
 * explicit matrix exponential), the mean and standard deviation of the linear passage solves
 * (measures.c), and, at the extremes, the shape every survival function must have.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "osn/err.h"
#include "osn/model.h"
#include "osn/sim.h"
#include "testutil.h"

static const double probs[4] = OSN_TRET_QUANTILES;

/* Survival probabilities are compared absolutely. */
static void assert_near(double a, double b, double tol, const char *what)
{
    if (!(fabs(a - b) <= tol))
        fail_msg("%s: %.15g vs %.15g (difference %.3g)", what, a, b, fabs(a - b));
}

static struct osn_tret_dist *dist_ok(const struct osn_model *m)
{
    struct osn_tret_dist *td = NULL;
    assert_int_equal(osn_tret_dist_new(&td, m), 0);
    return td;
}

static struct osn_measures solve_ok(const struct osn_model *m)
{
    struct osn_measures ms;
    assert_int_equal(osn_solve(m, OSN_METHOD_GENERAL, &ms, NULL, NULL), 0);
    return ms;
}

/* The curve's mean and second moment against T_ret and T_ret_sd of the linear solves. */
static void check_moments(const struct osn_model *m, double tol_mean, double tol_second)
{
    struct osn_measures ms = solve_ok(m);
    struct osn_tret_dist *td = dist_ok(m);
    struct osn_xd mean, second;
    osn_tret_dist_moments(td, &mean, &second);
    struct osn_xd exact2 =
            osn_xd_add(osn_xd_mul(ms.T_ret_sd, ms.T_ret_sd), osn_xd_mul(ms.T_ret, ms.T_ret));
    assert_close(mean, ms.T_ret, tol_mean, "curve mean vs T_ret");
    assert_close(second, exact2, tol_second, "curve E[T^2] vs T_ret_sd^2 + T_ret^2");
    osn_tret_dist_free(td);
}

/* Survival on a grid up to the 99.9% quantile: finite, in [0, 1], 1 at 0, non-increasing up to
 * the rounding of a sum of Poisson weights (1e-14; osn solve --dist-tret clips that). */
static void check_shape(const struct osn_tret_dist *td)
{
    struct osn_xd tmax = osn_tret_dist_quantile(td, 0.999);
    assert_true(isfinite(tmax.m) && tmax.m > 0);
    double prev = osn_tret_dist_survival(td, osn_xd(0));
    assert_true(prev == 1);
    for (int i = 1; i <= 400; i++) {
        double s = osn_tret_dist_survival(td, osn_xd_muld(tmax, i / 400.0));
        assert_true(isfinite(s) && s >= 0 && s <= 1);
        assert_true(s <= prev + 1e-14);
        prev = s;
    }
    assert_true(fabs(prev - 0.001) < 1e-6);
    struct osn_xd last = osn_xd(0);
    for (int i = 0; i < 4; i++) {
        struct osn_xd q = osn_tret_dist_quantile(td, probs[i]);
        assert_true(isfinite(q.m) && osn_xd_cmp(q, last) > 0);
        assert_true(fabs(osn_tret_dist_survival(td, q) - (1 - probs[i])) < 1e-9);
        last = q;
    }
}

static void test_moments(void **state)
{
    (void)state;
    struct osn_model m = two_loop(1.2, 0.6, 5, 10, 20);
    check_moments(&m, 1e-10, 1e-9);
    m = two_loop(1.2, 1.0, 5, 10, 20); /* lambda' = mu */
    check_moments(&m, 1e-10, 1e-9);
    m = two_loop(0.3, 0.2, 2, 30, 60); /* light load, long Erlang-like passage */
    check_moments(&m, 1e-10, 1e-9);
    m = two_loop(1.2, 0.6, 5, 10, 20);
    m.policy = OSN_POLICY_II; /* onsets spread over several states */
    osn_model_resolve(&m);
    check_moments(&m, 1e-10, 1e-9);
    m = two_loop(1.5, 0.9, 3, 12, 30);
    m.flows = 2;
    m.rate1 = 0.9;
    m.rate2 = 0.6;
    osn_model_resolve(&m);
    check_moments(&m, 1e-10, 1e-9);
    /* Heavy load: the walk stops at the quasi-stationary regime, the tail carries the mass. */
    m = two_loop(3, 2, 5, 20, 60);
    check_moments(&m, 1e-9, 1e-8);
}

/* lambda' = 0: every overload episode is H - L departures in a row, Erlang(H - L, mu). */
static long double erlang_surv(int k, long double x)
{
    long double term = expl(-x), sum = 0;
    for (int j = 0; j < k; j++) {
        sum += term;
        term *= x / (j + 1);
    }
    return sum;
}

static void test_erlang(void **state)
{
    (void)state;
    const int D = 5;
    struct osn_model m = two_loop(1, 0, 10, 15, 20);
    struct osn_tret_dist *td = dist_ok(&m);
    for (double t = 0; t <= 30; t += 0.25)
        assert_near(osn_tret_dist_survival(td, osn_xd(t)), (double)erlang_surv(D, t), 1e-12,
                    "Erlang-5 survival");
    for (int i = 0; i < 4; i++) { /* quantiles by bisection on the closed form */
        long double lo = 0, hi = 100;
        for (int it = 0; it < 200; it++) {
            long double mid = (lo + hi) / 2;
            if (erlang_surv(D, mid) > 1 - probs[i])
                lo = mid;
            else
                hi = mid;
        }
        assert_true(rel(d(osn_tret_dist_quantile(td, probs[i])), (double)hi) < 1e-10);
    }
    check_shape(td);
    osn_tret_dist_free(td);
}

/*
 * L=1 H=2 R=3: overload is (1,2) and (2,3). From (1,2) a departure (mu) ends it, an arrival
 * (lambda') goes to (2,3), which only drains back to (1,2). With Q = [[-(mu+l'), l'], [mu, -mu]]
 * and the start in (1,2), P(T > t) = c1 e^{r1 t} + c2 e^{r2 t}: r1,2 the roots of
 * r^2 + (2 mu + l') r + mu^2 = 0, c1 + c2 = 1 and c1 r1 + c2 r2 = -mu (the slope at 0).
 */
static void test_two_state(void **state)
{
    (void)state;
    const double lps[] = {0.05, 0.6, 1, 4, 30};
    for (size_t k = 0; k < sizeof lps / sizeof lps[0]; k++) {
        const double mu = 1, lp = lps[k];
        struct osn_model m = two_loop(1.2 > lp ? 1.2 : lp, lp, 1, 2, 3);
        struct osn_tret_dist *td = dist_ok(&m);
        double disc = sqrt(lp * (4 * mu + lp));
        double r1 = (-(2 * mu + lp) + disc) / 2, r2 = (-(2 * mu + lp) - disc) / 2;
        double c1 = (-mu - r2) / (r1 - r2), c2 = 1 - c1;
        double mean = d(solve_ok(&m).T_ret);
        for (int i = 0; i <= 200; i++) {
            double t = mean * i / 20.0;
            assert_near(osn_tret_dist_survival(td, osn_xd(t)), c1 * exp(r1 * t) + c2 * exp(r2 * t),
                        1e-12, "two-state survival");
        }
        check_shape(td);
        osn_tret_dist_free(td);
    }
}

/* Heavy load: T_ret ~ 1e402 s, beyond the double range; the passage is exponential there. */
static void test_heavy(void **state)
{
    (void)state;
    struct osn_model m = two_loop(1e4, 1e4, 0, 100, 200);
    struct osn_measures ms = solve_ok(&m);
    struct osn_tret_dist *td = dist_ok(&m);
    struct osn_xd mean, second;
    osn_tret_dist_moments(td, &mean, &second);
    assert_close(mean, ms.T_ret, 1e-9, "heavy: curve mean");
    assert_false(osn_xd_fits_double(mean));
    for (int i = 0; i < 4; i++) /* exponential: q_p = -T_ret ln(1 - p) */
        assert_close(osn_tret_dist_quantile(td, probs[i]), osn_xd_muld(ms.T_ret, -log1p(-probs[i])),
                     1e-6, "heavy: quantile");
    check_shape(td);
    assert_true(osn_tret_dist_error(td) < 1e-9);
    osn_tret_dist_free(td);

    m = two_loop(3, 2.5, 5, 40, 400); /* strong drift up, T_ret ~ 1e30 */
    check_moments(&m, 1e-9, 1e-8);
    td = dist_ok(&m);
    check_shape(td);
    osn_tret_dist_free(td);
}

/* Light load: lambda' = 1e-200, the passage is Erlang(495) to within 1e-200. */
static void test_light(void **state)
{
    (void)state;
    struct osn_model m = two_loop(1e-200, 1e-200, 5, 500, 1000);
    struct osn_tret_dist *td = dist_ok(&m);
    check_shape(td);
    for (double t = 400; t <= 600; t += 10)
        assert_near(osn_tret_dist_survival(td, osn_xd(t)), (double)erlang_surv(495, t), 1e-10,
                    "Erlang-495 survival");
    osn_tret_dist_free(td);
    check_moments(&m, 1e-10, 1e-9);
}

/*
 * The simulator's empirical quantiles (osn sim: order statistics of every episode, with a
 * distribution-free binomial interval) cover the exact ones. Policy I, so episodes are i.i.d.;
 * 99.9% intervals and a fixed seed: 12 checks, about a 1% chance that a correct solver misses.
 */
static void test_vs_sim(void **state)
{
    (void)state;
    struct osn_model ms[3] = {two_loop(1.2, 0.6, 5, 10, 20), two_loop(1.5, 1.1, 3, 12, 25),
                              two_loop(0.8, 0.5, 2, 6, 12)};
    for (int c = 0; c < 3; c++) {
        struct osn_tret_dist *td = dist_ok(&ms[c]);
        struct osn_sim_cfg cfg;
        osn_sim_cfg_default(&cfg);
        cfg.time = 2e5;
        cfg.level = 0.999;
        cfg.seed = 7;
        struct osn_sim_result r;
        char msg[200];
        assert_int_equal(osn_sim_run(&ms[c], &cfg, &r, msg, sizeof msg), 0);
        for (int i = 0; i < 4; i++) {
            const struct osn_sim_est *e = &r.est[OSN_SIM_T_RET_P50 + i];
            double exact = d(osn_tret_dist_quantile(td, probs[i]));
            assert_true(e->n > 1000 && isfinite(e->hw) && e->hw > 0);
            if (!(fabs(e->value - exact) <= e->hw))
                fail_msg("case %d p%.0f: simulated %.6g +- %.3g, exact %.6g", c, 100 * probs[i],
                         e->value, e->hw, exact);
        }
        osn_tret_dist_free(td);
    }
}

static void test_refused(void **state)
{
    (void)state;
    struct osn_model m = two_loop(1.2, 0.6, 5, 10, 20);
    m.service.kind = OSN_LAW_DET;
    struct osn_tret_dist *td = NULL;
    assert_int_equal(osn_tret_dist_new(&td, &m), OSN_ENOTSUP);
    assert_null(td);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_moments),   cmocka_unit_test(test_erlang),
            cmocka_unit_test(test_two_state), cmocka_unit_test(test_heavy),
            cmocka_unit_test(test_light),     cmocka_unit_test(test_vs_sim),
            cmocka_unit_test(test_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
