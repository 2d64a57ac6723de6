/*
 * General service through the embedded chain at departures: reductions to the CTMC
 * (exponential service, Erlang-1, one-branch hyperexponential), limits (Erlang-k and uniform with
 * small cv approach constant service), identities, and constant and lognormal service against a
 * small independent event simulation written here (not OSN's simulator), within 99% intervals.
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

#include "model_int.h"
#include "osn/err.h"
#include "osn/model.h"
#include "testutil.h"

static struct osn_measures solve(const struct osn_model *m)
{
    struct osn_measures ms;
    assert_null(osn_solve_unsupported(m, OSN_METHOD_GENERAL));
    assert_int_equal(osn_solve(m, OSN_METHOD_GENERAL, &ms, NULL, NULL), 0);
    /* Identities of every model. */
    assert_close(ms.prob_sum, osn_xd(1), 1e-12, "probabilities sum to 1");
    double offered = m->flows == 2 ? m->rate1 + m->rate2 : m->rate;
    assert_close(osn_xd_add(ms.throughput, osn_xd_muld(ms.theta, offered)), osn_xd(offered), 1e-10,
                 "throughput + losses = offered");
    assert_close(ms.T_cyc, osn_xd_add(ms.T_ret, ms.T_norm), 1e-12, "T_cyc = T_ret + T_norm");
    /* Busy fraction = throughput x mean service time (Little's law for the server). */
    assert_close(osn_xd_sub(osn_xd(1), ms.p00), osn_xd_muld(ms.throughput, 1 / m->mu), 1e-9,
                 "1 - p00 = throughput E[B]");
    return ms;
}

static void assert_same(const struct osn_measures *a, const struct osn_measures *b, double tol)
{
    assert_close(a->P[0], b->P[0], tol, "P0");
    assert_close(a->P[1], b->P[1], tol, "P1");
    assert_close(a->P[2], b->P[2], tol, "P2");
    assert_close(a->N_mean, b->N_mean, tol, "N_mean");
    assert_close(a->T_ret, b->T_ret, tol, "T_ret");
    assert_close(a->T_cyc, b->T_cyc, tol, "T_cyc");
    assert_close(a->theta, b->theta, tol, "theta");
    assert_close(a->mode_change_rate, b->mode_change_rate, tol, "mode changes");
    assert_close(a->nu12, b->nu12, tol, "nu12");
}

static struct osn_model base(enum osn_model_kind kind, int pol, double lam, double lp)
{
    struct osn_model m = two_loop(lam, lp, 4, 9, 16);
    m.kind = kind;
    m.policy = pol;
    if (kind == OSN_KIND_BI_LEVEL)
        m.L1 = 4, m.H1 = 9, m.L2 = 11, m.H2 = 14, m.R = 16;
    osn_model_resolve(&m);
    return m;
}

/* Exponential service through the embedded chain = the CTMC, every model and policy. */
static void test_exponential_is_ctmc(void **state)
{
    (void)state;
    const double loads[][2] = {{0.3, 0.15}, {1.2, 0.6}, {3, 1.5}, {0.9, 0.9}};
    for (int kind = OSN_KIND_TWO_LOOP; kind <= OSN_KIND_BI_LEVEL; kind++)
        for (int pol = OSN_POLICY_I; pol <= OSN_POLICY_II; pol++)
            for (size_t i = 0; i < sizeof loads / sizeof loads[0]; i++) {
                struct osn_model m = base(kind, pol, loads[i][0], loads[i][1]);
                struct osn_measures c = solve(&m), e;
                assert_int_equal(osn__embedded_solve(&m, &e, NULL, NULL, NULL), 0);
                assert_same(&c, &e, 1e-9);
                /* Two flows as well. */
                m.flows = 2, m.rate1 = loads[i][1], m.rate2 = loads[i][0] - loads[i][1];
                c = solve(&m);
                assert_int_equal(osn__embedded_solve(&m, &e, NULL, NULL, NULL), 0);
                assert_same(&c, &e, 1e-9);
                assert_close(c.loss_flow2, e.loss_flow2, 1e-9, "loss of flow 2");
                /* Erlang-1 and a one-branch hyperexponential are exponential too. */
                m.service.kind = OSN_LAW_ERLANG, m.service.k = 1;
                e = solve(&m);
                assert_same(&c, &e, 1e-9);
                m.service.kind = OSN_LAW_HYPEREXP, m.service.nbranch = 1;
                m.service.probs[0] = 1, m.service.rates[0] = m.mu;
                e = solve(&m);
                assert_same(&c, &e, 1e-9);
            }
}

/* Erlang-k with large k, and uniform with small cv, approach constant service. */
static void test_limits_approach_constant(void **state)
{
    (void)state;
    for (int pol = OSN_POLICY_I; pol <= OSN_POLICY_II; pol++) {
        struct osn_model m = base(OSN_KIND_TWO_LOOP, pol, 1.2, 0.6);
        m.service.kind = OSN_LAW_DET;
        struct osn_measures det = solve(&m);
        double prev = INFINITY;
        for (int k = 4; k <= 1024; k *= 4) {
            m.service.kind = OSN_LAW_ERLANG, m.service.k = k;
            struct osn_measures er = solve(&m);
            double err = xd_relerr(er.T_ret, det.T_ret);
            assert_true(err < prev); /* monotone approach */
            prev = err;
        }
        assert_true(prev < 2e-3);
        m.service.kind = OSN_LAW_UNIFORM, m.service.cv = 1e-3;
        struct osn_measures un = solve(&m);
        assert_close(un.T_ret, det.T_ret, 1e-5, "uniform cv=1e-3 vs constant");
        m.service.kind = OSN_LAW_LOGNORMAL, m.service.cv = 1e-3;
        un = solve(&m);
        assert_close(un.T_ret, det.T_ret, 1e-5, "lognormal cv=1e-3 vs constant");
        /* Lognormal with cv = 1 is not exponential, but close to it at these loads. */
        m.service.cv = 1;
        un = solve(&m);
        m.service.kind = OSN_LAW_EXP;
        struct osn_measures ex = solve(&m);
        assert_true(xd_relerr(un.P[0], ex.P[0]) < 0.1);
    }
}

/* An empirical law of two samples = a two-point law; with equal samples, constant service. */
static void test_empirical(void **state)
{
    (void)state;
    double samples[3] = {1, 1, 1};
    struct osn_model m = base(OSN_KIND_TWO_LOOP, OSN_POLICY_I, 1.2, 0.6);
    m.service.kind = OSN_LAW_DET;
    struct osn_measures det = solve(&m);
    m.service.kind = OSN_LAW_EMPIRICAL;
    m.service.samples = samples;
    m.service.nsamples = 3;
    struct osn_measures em = solve(&m);
    assert_same(&det, &em, 1e-12);
}

/* ---- a small independent simulation: M|G|1 with hysteretic modes ---- */

static uint64_t rng_state = 88172645463325252ull;

static double uniform01(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return ((double)(rng_state >> 11) + 0.5) / 9007199254740992.0;
}

static double service_time(const struct osn_model *m)
{
    double mean = 1 / m->mu;
    if (m->service.kind == OSN_LAW_DET)
        return mean;
    /* lognormal */
    double s2 = log1p(m->service.cv * m->service.cv);
    double z = sqrt(-2 * log(uniform01())) * cos(2 * 3.14159265358979 * uniform01());
    return exp(log(mean) - s2 / 2 + sqrt(s2) * z);
}

/*
 * Simulates the two-loop model with one flow for `horizon` seconds and returns the fraction of
 * time in mode 0 and the number of overload onsets per second. Written from docs/models.md alone.
 */
static void simulate(const struct osn_model *m, double horizon, double *P0, double *nu01)
{
    double t = 0, next_arr = -log(uniform01()) / m->rate, next_dep = INFINITY, t0 = 0;
    long n = 0, onsets = 0;
    int s = 0;
    while (t < horizon) {
        double t_next = next_arr < next_dep ? next_arr : next_dep;
        if (t_next > horizon)
            t_next = horizon;
        if (s == 0)
            t0 += t_next - t;
        t = t_next;
        if (t >= horizon)
            break;
        if (next_arr <= next_dep) {
            next_arr = t - log(uniform01()) / m->rate;
            double accept = s == 0 ? 1 : s == 1 ? m->overload_rate / m->rate : 0;
            if (uniform01() < accept && n < m->R) {
                n++;
                if (m->policy == OSN_POLICY_I) {
                    if (s == 0 && n == m->H1)
                        s = 1, onsets++;
                    else if (s == 1 && n == m->H2)
                        s = 2;
                }
                if (n == 1)
                    next_dep = t + service_time(m);
            }
        } else {
            n--;
            if (m->policy == OSN_POLICY_I) {
                if (s == 1 && n == m->L1)
                    s = 0;
                else if (s == 2 && n == m->L2)
                    s = 1;
            } else {
                int was = s;
                if (s == 0)
                    s = n >= m->H2 ? 2 : n >= m->H1 ? 1 : 0;
                else if (s == 1)
                    s = n <= m->L1 ? 0 : n >= m->H2 ? 2 : 1;
                else
                    s = n <= m->L2 ? 1 : 2;
                onsets += was == 0 && s != 0;
            }
            next_dep = n > 0 ? t + service_time(m) : INFINITY;
        }
    }
    *P0 = t0 / horizon;
    *nu01 = onsets / horizon;
}

/* Mean and 99% half-width over 20 independent replications (t quantile 2.861, 19 df). */
static void check_against_simulation(const struct osn_model *m)
{
    struct osn_measures ms = solve(m);
    enum { REPS = 20 };
    double p0[REPS], nu[REPS], mp = 0, mn = 0, vp = 0, vn = 0;
    for (int r = 0; r < REPS; r++) {
        simulate(m, 2e4, &p0[r], &nu[r]);
        mp += p0[r] / REPS;
        mn += nu[r] / REPS;
    }
    for (int r = 0; r < REPS; r++) {
        vp += (p0[r] - mp) * (p0[r] - mp) / (REPS - 1);
        vn += (nu[r] - mn) * (nu[r] - mn) / (REPS - 1);
    }
    double hp = 2.861 * sqrt(vp / REPS), hn = 2.861 * sqrt(vn / REPS);
    if (getenv("OSN_TEST_VERBOSE"))
        printf("P0 %.6g vs %.6g +- %.2g, nu01 %.6g vs %.6g +- %.2g\n", d(ms.P[0]), mp, hp,
               d(ms.nu01), mn, hn);
    if (fabs(d(ms.P[0]) - mp) > hp || fabs(d(ms.nu01) - mn) > hn)
        fail_msg("exact P0 %.6g nu01 %.6g vs simulated %.6g +- %.2g, %.6g +- %.2g", d(ms.P[0]),
                 d(ms.nu01), mp, hp, mn, hn);
}

static void test_against_simulation(void **state)
{
    (void)state;
    const double loads[][2] = {{1.2, 0.6}, {0.9, 0.45}, {2, 0.8}};
    for (int pol = OSN_POLICY_I; pol <= OSN_POLICY_II; pol++)
        for (size_t i = 0; i < sizeof loads / sizeof loads[0]; i++) {
            struct osn_model m = base(OSN_KIND_TWO_LOOP, pol, loads[i][0], loads[i][1]);
            m.service.kind = OSN_LAW_DET;
            check_against_simulation(&m);
            m.service.kind = OSN_LAW_LOGNORMAL, m.service.cv = 0.7;
            check_against_simulation(&m);
        }
}

/* Constant service at heavy load keeps rare events in extended range. */
static void test_extreme_load(void **state)
{
    (void)state;
    struct osn_model m = two_loop(400, 400, 0, 60, 120);
    m.service.kind = OSN_LAW_DET;
    struct osn_measures ms = solve(&m);
    assert_false(osn_xd_fits_double(ms.T_ret));
    assert_true(osn_xd_log10(ms.T_ret) > 308);
    /* A return needs 60 departures without an arrival: each has probability e^-400. */
    assert_true(fabs(osn_xd_log10(ms.nu01) + 60 * 400 / log(10.0)) < 100);
    /* Far past that, the embedded chain would take hours: refused with a reason, not run. */
    m = two_loop(2000, 1000, 100, 500, 1000);
    m.service.kind = OSN_LAW_DET;
    assert_non_null(osn_solve_unsupported(&m, OSN_METHOD_GENERAL));
    struct osn_measures none;
    assert_int_equal(osn_solve(&m, OSN_METHOD_GENERAL, &none, NULL, NULL), OSN_ENOTSUP);
}

/* A cache shared by a scan gives exactly the uncached results, also across a change of law. */
static void test_cache_changes_nothing(void **state)
{
    (void)state;
    struct osn_solve_cache *cache;
    assert_int_equal(osn_solve_cache_new(&cache), 0);
    const enum osn_law_kind laws[] = {OSN_LAW_DET, OSN_LAW_ERLANG, OSN_LAW_DET};
    for (size_t l = 0; l < sizeof laws / sizeof laws[0]; l++)
        for (int pol = OSN_POLICY_I; pol <= OSN_POLICY_II; pol++)
            for (long H = 1; H < 12; H++)
                for (long L = 0; L < H; L++) {
                    struct osn_model m = two_loop(1.3, 0.7, L, H, 12);
                    m.policy = pol;
                    m.service.kind = laws[l];
                    m.service.k = 3;
                    struct osn_measures a, b;
                    assert_int_equal(osn_solve(&m, OSN_METHOD_GENERAL, &a, NULL, NULL), 0);
                    assert_int_equal(
                            osn_solve_cached(&m, OSN_METHOD_GENERAL, &b, NULL, NULL, cache), 0);
                    assert_same(&a, &b, 0);
                }
    cache = osn_solve_cache_free(cache);
    assert_null(cache);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_exponential_is_ctmc),
            cmocka_unit_test(test_limits_approach_constant),
            cmocka_unit_test(test_empirical),
            cmocka_unit_test(test_against_simulation),
            cmocka_unit_test(test_extreme_load),
            cmocka_unit_test(test_cache_changes_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
