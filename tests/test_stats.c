/*
 * Output statistics against SciPy 1.10 (scipy.stats.t.cdf, t.sf, norm.ppf), closed forms and
 * NumPy, and the identities between them: the jackknife of a mean is the t interval, merged
 * Welford accumulators equal one accumulator, batch means of a hand-checked series.
 *
 * SciPy's t.ppf is itself only good to about 1e-9 here (at df = 5 its 0.975 quantile has
 * t.sf = 0.02499999997, and the closed-form distribution function for odd df agrees with
 * t.sf), so its quantiles are a loose table and the tight checks are cdf(quantile(p)) = p,
 * the closed forms for df = 1, 2, 5, and SciPy's distribution function.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>

#include "osn/err.h"
#include "osn/stats.h"
#include "testutil.h"

static void test_t_quantiles(void **state)
{
    (void)state;
    /* df, t.ppf(0.975, df), t.ppf(0.995, df), t.ppf(0.9, df) from SciPy (good to ~3e-9). */
    static const double tab[][4] = {
            {1, 12.706204736432095, 63.65674116287399, 3.0776835372078066},
            {2, 4.302652729911275, 9.92484320091807, 1.8856180831641507},
            {3, 3.182446305284263, 5.84090929975643, 1.637744357215907},
            {4, 2.7764451051977987, 4.604094871415897, 1.533206273713144},
            {5, 2.5705818366147395, 4.032142983557536, 1.4758840487820273},
            {9, 2.2621571627409915, 3.2498355440153697, 1.3830287383964925},
            {19, 2.093024054408263, 2.860934606449914, 1.3277282090267986},
            {29, 2.045229642132703, 2.756385903670335, 1.311433643950529},
            {100, 1.9839715184496334, 2.6258905205863337, 1.2900747613398769},
            {1000, 1.9623390808264074, 2.580754698065942, 1.2823987214609247},
    };
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++) {
        assert_true(rel(osn_stats_t_quantile(0.975, tab[i][0]), tab[i][1]) < 5e-9);
        assert_true(rel(osn_stats_t_quantile(0.995, tab[i][0]), tab[i][2]) < 5e-9);
        assert_true(rel(osn_stats_t_quantile(0.9, tab[i][0]), tab[i][3]) < 5e-9);
        assert_true(rel(osn_stats_t_quantile(0.025, tab[i][0]), -tab[i][1]) < 5e-9);
        for (double p = 0.6; p < 0.9999; p += 0.0371)
            assert_true(fabs(osn_stats_t_cdf(osn_stats_t_quantile(p, tab[i][0]), tab[i][0]) - p) <
                        1e-13);
    }
    /* Closed forms: df = 1 Cauchy, df = 2, and df = 5 through its distribution function
     * 1/2 + (th + sin th cos th (1 + 2/3 cos^2 th)) / pi, th = atan(t / sqrt 5). */
    assert_true(rel(osn_stats_t_quantile(0.975, 1), tan(3.14159265358979323846 * 0.475)) < 1e-15);
    assert_true(rel(osn_stats_t_quantile(0.975, 2), 4.302652729749464) < 1e-14);
    for (double t = 0.25; t < 8; t *= 1.7) {
        double th = atan(t / sqrt(5.0)), c = cos(th);
        double f = 0.5 + (th + sin(th) * c * (1 + 2.0 / 3 * c * c)) / 3.14159265358979323846;
        assert_true(rel(osn_stats_t_cdf(t, 5), f) < 1e-14);
    }
    assert_true(isnan(osn_stats_t_quantile(1, 5)));
    assert_true(isnan(osn_stats_t_quantile(0.5, 0)));
}

static void test_normal_and_cdf(void **state)
{
    (void)state;
    assert_true(rel(osn_stats_normal_quantile(0.975), 1.959963984540054) < 1e-14);
    assert_true(rel(osn_stats_normal_quantile(0.995), 2.5758293035489004) < 1e-14);
    assert_true(rel(osn_stats_normal_quantile(1e-10), -6.361340902404056) < 1e-13);
    assert_true(rel(osn_stats_normal_quantile(0.3), -0.5244005127080409) < 1e-14);
    assert_true(rel(osn_stats_t_cdf(1.5, 7), 0.911350756505015) < 1e-13);
    assert_true(rel(osn_stats_t_cdf(-3.0, 3), 0.028834442811218657) < 1e-12);
    assert_true(rel(osn_stats_t_cdf(0.2, 1e6), 0.5792596891048856) < 1e-10);
}

static void test_welford(void **state)
{
    (void)state;
    /* numpy.random.default_rng(1).normal(size=7): mean and var(ddof=1) from NumPy. */
    static const double x[7] = {0.345584192064786,  0.8216181435011584, 0.33043707618338714,
                                -1.303157231604361, 0.9053558666731177, 0.4463745723640113,
                                -0.5369532353602852};
    struct osn_welford w = {0}, a = {0}, b = {0};
    for (int i = 0; i < 7; i++) {
        osn_welford_add(&w, x[i]);
        osn_welford_add(i < 3 ? &a : &b, x[i]);
    }
    assert_true(rel(w.mean, 0.1441799119745449) < 1e-14);
    assert_true(rel(osn_welford_var(&w), 0.6272692651920465) < 1e-14);
    osn_welford_merge(&a, &b);
    assert_int_equal(a.n, 7);
    assert_true(rel(a.mean, w.mean) < 1e-14);
    assert_true(rel(osn_welford_var(&a), osn_welford_var(&w)) < 1e-14);
    /* t_{0.975,6} = 2.4469118511449679 (SciPy: t.sf(that, 6) = 0.025000000000000053). */
    double hw = 2.4469118511449679 * sqrt(0.6272692651920465 / 7);
    assert_true(rel(osn_welford_halfwidth(&w, 0.95), hw) < 1e-13);

    /* The jackknife of the mean: leave-one-out means give exactly the t half-width. */
    double loo[7];
    for (int i = 0; i < 7; i++)
        loo[i] = (7 * w.mean - x[i]) / 6;
    assert_true(rel(osn_stats_jackknife_halfwidth(loo, 7, 0.95), hw) < 1e-13);
    struct osn_welford one = {0};
    osn_welford_add(&one, 1);
    assert_true(isnan(osn_welford_var(&one)));
    assert_true(isnan(osn_stats_jackknife_halfwidth(loo, 1, 0.95)));
}

static void test_batch_means(void **state)
{
    (void)state;
    double x[13], mean, hw, lag1;
    for (int i = 0; i < 13; i++)
        x[i] = i + 1;
    /* Batches {1..4} {5..8} {9..12} (13 dropped): means 2.5, 6.5, 10.5, sd 4. */
    assert_int_equal(osn_stats_batch_means(x, 13, 3, 0.95, &mean, &hw, &lag1), 0);
    assert_true(rel(mean, 6.5) < 1e-15);
    assert_true(rel(hw, 4.302652729749464 * 4 / sqrt(3)) < 1e-14);
    assert_true(fabs(lag1) < 1e-15); /* (-4)(0) + (0)(4) = 0 */
    assert_int_equal(osn_stats_batch_means(x, 13, 1, 0.95, &mean, &hw, NULL), OSN_EINVAL);
    assert_int_equal(osn_stats_batch_means(x, 2, 3, 0.95, &mean, &hw, NULL), OSN_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_t_quantiles),
            cmocka_unit_test(test_normal_and_cdf),
            cmocka_unit_test(test_welford),
            cmocka_unit_test(test_batch_means),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
