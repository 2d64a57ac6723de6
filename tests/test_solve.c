/*
 * The exact solver against independent references: the published-style reference table
 * (tests/data/two_loop_mm1.csv), the exact checks of docs/models.md, the closed forms
 * over a grid of loads and thresholds, a dense direct solve of the generator for the models
 * without closed forms (policy II, bi-level, two flows), and model reductions. Every solve is
 * also checked against the identities that hold for any model (probabilities sum to 1, the
 * renewal identity for the return time, flow conservation).
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

#define TOL 1e-9

static void assert_near(double a, double b, double tol, const char *what)
{
    if (!(rel(a, b) <= tol))
        fail_msg("%s: %.15g vs %.15g (relative error %.3g)", what, a, b, rel(a, b));
}

static int finite_nonneg(struct osn_xd x)
{
    return isfinite(x.m) && x.m >= 0;
}

/* Identities that hold for every model and method. */
static void check_identities(const struct osn_model *m, const struct osn_measures *ms)
{
    const struct osn_xd *all[] = {&ms->P[0],     &ms->P[1],       &ms->P[2],      &ms->N_mean,
                                  &ms->T_ret,    &ms->T_cyc,      &ms->T_norm,    &ms->T_disc,
                                  &ms->nu01,     &ms->nu12,       &ms->theta,     &ms->throughput,
                                  &ms->T_ret_sd, &ms->loss_flow1, &ms->loss_flow2};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        assert_true(finite_nonneg(*all[i]) ||
                    (all[i] == &ms->T_disc && isnan(ms->T_disc.m) && osn_xd_is_zero(ms->nu12)));
    /* Summing n positive terms rounds by at most n eps relative. */
    assert_close(ms->prob_sum, osn_xd(1), fmax(1e-13, 2.3e-16 * (double)ms->states),
                 "probabilities sum to 1");
    assert_close(ms->T_ret, ms->T_ret_renewal, TOL, "T_ret = (P1+P2)/nu01");
    assert_close(ms->T_cyc, osn_xd_add(ms->T_ret_renewal, ms->T_norm), TOL,
                 "T_cyc = T_ret + T_norm");
    /* Flow conservation: what is served plus what is lost is what is offered. */
    double offered = m->flows == 2 ? m->rate1 + m->rate2 : m->rate;
    assert_close(osn_xd_add(ms->throughput, osn_xd_muld(ms->theta, offered)), osn_xd(offered), TOL,
                 "throughput + losses = offered");
    assert_close(ms->sojourn, osn_xd_div(ms->N_mean, ms->throughput), 1e-14, "Little's law");
    if (m->policy == OSN_POLICY_I)
        assert_close(ms->mode_change_rate, osn_xd_muld(osn_xd_add(ms->nu01, ms->nu12), 2), TOL,
                     "mode changes = 2 (nu01 + nu12)");
}

static struct osn_measures solve_ok(const struct osn_model *m, enum osn_method method)
{
    struct osn_measures ms;
    char msg[256];
    const char *key = NULL;
    assert_int_equal(osn_model_check(m, &key, msg, sizeof msg), 0);
    assert_int_equal(osn_solve(m, method, &ms, NULL, NULL), 0);
    check_identities(m, &ms);
    return ms;
}

/* ---- the reference table ---- */

static FILE *open_reference(void)
{
    return fopen(OSN_SOURCE_DIR "/tests/data/two_loop_mm1.csv", "r");
}

static void test_reference_table(void **state)
{
    (void)state;
    FILE *f = open_reference();
    assert_non_null(f);
    char line[1024];
    assert_non_null(fgets(line, sizeof line, f)); /* header */
    int rows = 0;
    while (fgets(line, sizeof line, f)) {
        double v[13];
        int k = sscanf(line, "%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf", &v[0], &v[1],
                       &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9], &v[10], &v[11],
                       &v[12]);
        if (k != 13)
            continue;
        struct osn_model m = two_loop(v[0], v[1], (long)v[3], (long)v[4], (long)v[5]);
        m.mu = v[2];
        for (int method = OSN_METHOD_GENERAL; method <= OSN_METHOD_CLOSED; method++) {
            struct osn_measures ms = solve_ok(&m, method);
            assert_near(d(ms.P[0]), v[6], TOL, "P0");
            assert_near(d(ms.P[1]), v[7], TOL, "P1");
            assert_near(d(ms.P[2]), v[8], TOL, "P2");
            assert_near(d(ms.N_mean), v[9], TOL, "N_mean");
            assert_near(d(ms.T_ret), v[10], TOL, "T_ret");
            assert_near(d(ms.T_cyc), v[12], TOL, "T_cyc");
            if (method == OSN_METHOD_GENERAL)
                assert_near(d(ms.T_ret_sd), v[11], TOL, "SD(T_ret)");
        }
        rows++;
    }
    fclose(f);
    assert_int_equal(rows, 6);
}

/* ---- the exact checks of docs/models.md ---- */

static void test_exact_checks(void **state)
{
    (void)state;
    struct osn_model m = two_loop(1.2, 0.6, 10, 15, 20);
    struct osn_measures ms = solve_ok(&m, OSN_METHOD_GENERAL);
    assert_near(d(ms.T_ret), 12.5 - 7.5 * pow(0.6, 5), 1e-13, "T_ret, lambda' = 0.6");
    assert_near(d(ms.T_disc), 5, 1e-13, "T_disc, lambda' = 0.6");

    m = two_loop(2, 1, 10, 15, 20);
    ms = solve_ok(&m, OSN_METHOD_GENERAL);
    assert_near(d(ms.T_ret), 30, 1e-13, "T_ret, lambda' = mu");

    m = two_loop(1, 0.5, 0, 1, 3);
    for (int method = OSN_METHOD_GENERAL; method <= OSN_METHOD_CLOSED; method++) {
        ms = solve_ok(&m, method);
        assert_near(d(ms.P[0]), 0.375, 1e-14, "P0");
        assert_near(d(ms.P[1]), 0.5, 1e-14, "P1");
        assert_near(d(ms.P[2]), 0.125, 1e-14, "P2");
        assert_near(d(ms.T_ret), 5.0 / 3, 1e-14, "T_ret");
    }
}

/*
 * Policy II by hand: two-loop L = 0, H = 1, R = 2, lambda = 1, lambda' = 0.5, mu = 1. With
 * H2 = R there is no discard mode; the states are (0,0), (0,1), (0,2), (1,1), (1,2) and the
 * balance equations give p proportional to (2, 1, 1, 1, 0.5), so P0 = 8/11, P1 = 3/11; overload
 * starts when (0,2) completes a service (nu01 = 2/11), T_ret = m(1,1) = 3/2 from
 * m(1,1) = 2/3 + m(1,2)/3, m(1,2) = 1 + m(1,1); losses: 0.5 in (1,1), all in (0,2) and (1,2).
 */
static void test_policy_II_by_hand(void **state)
{
    (void)state;
    struct osn_model m = two_loop(1, 0.5, 0, 1, 2);
    m.policy = OSN_POLICY_II;
    struct osn_measures ms = solve_ok(&m, OSN_METHOD_GENERAL);
    assert_near(d(ms.P[0]), 8.0 / 11, 1e-15, "P0");
    assert_near(d(ms.P[1]), 3.0 / 11, 1e-15, "P1");
    assert_true(osn_xd_is_zero(ms.P[2]));
    assert_near(d(ms.nu01), 2.0 / 11, 1e-15, "nu01");
    assert_near(d(ms.T_ret), 1.5, 1e-15, "T_ret");
    assert_near(d(ms.theta), 4.0 / 11, 1e-15, "theta");
    assert_int_equal(ms.states, 5);
}

/* ---- closed forms over a grid ---- */

static void compare_methods(const struct osn_model *m, double tol)
{
    struct osn_measures g = solve_ok(m, OSN_METHOD_GENERAL);
    struct osn_measures c = solve_ok(m, OSN_METHOD_CLOSED);
    assert_close(g.P[0], c.P[0], tol, "P0");
    assert_close(g.P[1], c.P[1], tol, "P1");
    assert_close(g.P[2], c.P[2], tol, "P2");
    assert_close(g.N_mean, c.N_mean, tol, "N_mean");
    assert_close(g.throughput, c.throughput, tol, "throughput");
    assert_close(g.T_ret, c.T_ret, tol, "T_ret");
    assert_close(g.T_cyc, c.T_cyc, tol, "T_cyc");
    assert_close(g.T_disc, c.T_disc, tol, "T_disc");
    assert_close(g.nu12, c.nu12, tol, "nu12");
    assert_close(g.theta, c.theta, tol, "theta");
    assert_close(g.mode_change_rate, c.mode_change_rate, tol, "mode changes");
    assert_int_equal(g.states, c.states);
    assert_true(g.have_sd);
    /* The printed formula cancels near lambda' = mu; compare where it is well conditioned. */
    double sigma = m->overload_rate / m->mu;
    double f = osn__closed_T_ret_formula(m);
    if (m->R <= 200 && (sigma == 1 || (fabs(sigma - 1) > 0.05 && sigma > 0.01 && sigma < 10)) &&
        isfinite(f))
        assert_near(d(g.T_ret), f, 1e-9, "T_ret vs the docs/models.md formula");
}

static void test_closed_grid(void **state)
{
    (void)state;
    const double lams[] = {1e-6, 0.01, 0.3, 0.9, 1, 1.2, 2, 10, 1e3};
    const double frac[] = {0.05, 0.5, 0.9, 1};
    const long thr[][3] = {{0, 1, 2},    {0, 1, 3},    {4, 5, 6},    {5, 10, 20},
                           {10, 15, 20}, {1, 50, 100}, {0, 99, 100}, {30, 31, 200}};
    int cases = 0;
    for (size_t i = 0; i < sizeof lams / sizeof lams[0]; i++)
        for (size_t j = 0; j < sizeof frac / sizeof frac[0]; j++)
            for (size_t k = 0; k < sizeof thr / sizeof thr[0]; k++) {
                struct osn_model m =
                        two_loop(lams[i], lams[i] * frac[j], thr[k][0], thr[k][1], thr[k][2]);
                compare_methods(&m, 1e-10);
                cases++;
            }
    /* lambda' = mu exactly, below and above it. */
    const double lp[] = {0.25, 0.999, 1, 1.001, 4};
    for (size_t i = 0; i < sizeof lp / sizeof lp[0]; i++)
        for (size_t k = 0; k < sizeof thr / sizeof thr[0]; k++) {
            struct osn_model m = two_loop(4, lp[i], thr[k][0], thr[k][1], thr[k][2]);
            compare_methods(&m, 1e-10);
            cases++;
        }
    assert_true(cases > 300);
}

static void test_large_R(void **state)
{
    (void)state;
    const double lp[] = {0.6, 1, 1.5};
    for (size_t i = 0; i < sizeof lp / sizeof lp[0]; i++) {
        struct osn_model m =
                two_loop(1.2 * (lp[i] > 1 ? lp[i] / 0.6 : 1), lp[i], 25000, 50000, 100000);
        compare_methods(&m, 1e-9);
    }
    /* lambda' = mu: T_ret = (H-L)(R-L+2)/(2 mu) exactly. */
    struct osn_model m = two_loop(2, 1, 25000, 50000, 100000);
    struct osn_measures ms = solve_ok(&m, OSN_METHOD_GENERAL);
    assert_near(d(ms.T_ret), 25000.0 * (100000 - 25000 + 2) / 2, 1e-9, "T_ret, lambda' = mu");
}

/* ---- extremes: probabilities far outside the double range stay exact ---- */

static void test_extremes(void **state)
{
    (void)state;
    /* Huge load: returning to mode 0 needs H-L = 100 departures in a row against 1e4 arrivals
     * per service: T_ret ~ 1e402, beyond the double range. */
    struct osn_model m = two_loop(1e4, 1e4, 0, 100, 200);
    compare_methods(&m, 1e-9);
    struct osn_measures ms = solve_ok(&m, OSN_METHOD_GENERAL);
    assert_false(osn_xd_fits_double(ms.T_ret));
    assert_true(fabs(osn_xd_log10(ms.T_ret) - 402) < 1);
    /* Nearly exponential: SD close to the mean. */
    assert_close(ms.T_ret_sd, ms.T_ret, 1e-3, "SD ~ mean at huge load");

    /* Tiny load: overload onsets every 1e+100000 seconds. */
    m = two_loop(1e-200, 1e-200, 5, 500, 1000);
    compare_methods(&m, 1e-9);
    ms = solve_ok(&m, OSN_METHOD_GENERAL);
    assert_true(fabs(osn_xd_log10(ms.T_cyc) - 1e5) < 1e-6);
    assert_near(d(ms.T_ret), 495, 1e-12, "T_ret at vanishing load = (H-L)/mu");

    /* Discard probability 1e-110925 at R = 1e6 would be 0 in doubles. */
    m = two_loop(1.2, 0.6, 250000, 500000, 1000000);
    ms = solve_ok(&m, OSN_METHOD_GENERAL);
    assert_false(osn_xd_is_zero(ms.P[2]));
    assert_true(fabs(osn_xd_log10(ms.P[2]) + 110924.95) < 0.1);
    assert_near(d(ms.T_disc), 500000, 1e-9, "T_disc = R - H");

    /* lambda' = 0: mode 1 only drains. */
    m = two_loop(1, 0, 10, 15, 20);
    ms = solve_ok(&m, OSN_METHOD_GENERAL);
    assert_near(d(ms.T_ret), 5, 1e-14, "T_ret with lambda' = 0");
    assert_near(d(ms.T_ret_sd), sqrt(5), 1e-13, "SD with lambda' = 0 (Erlang-5)");
    assert_true(osn_xd_is_zero(ms.P[2]));

    /* Erlang-(2 x 10^6): CV^2 = 5e-7 is below measures.c's CV2_SAFE, so the SD comes from the
     * direct variance system, not from E[T^2] - E[T]^2 (which would keep about 9 digits). */
    m = two_loop(1, 0, 0, 2000000, 2000001);
    ms = solve_ok(&m, OSN_METHOD_GENERAL);
    assert_near(d(ms.T_ret), 2000000, 1e-12, "T_ret, Erlang-(2e6)");
    assert_near(d(ms.T_ret_sd), sqrt(2e6), 1e-12, "SD, Erlang-(2e6), direct variance system");
}

/* ---- a dense direct solve as the independent reference ---- */

#define DMAX 160

struct dense {
    int n; /* states */
    int mode[DMAX], phase[DMAX];
    long lev[DMAX];
    long double q[DMAX][DMAX];
};

static int dense_index(const struct dense *D, int s, long n, int k)
{
    for (int i = 0; i < D->n; i++)
        if (D->mode[i] == s && D->lev[i] == n && D->phase[i] == k)
            return i;
    return -1;
}

static void dense_add(struct dense *D, int from, int s, long n, double rate)
{
    int to = dense_index(D, s, n, D->phase[from]);
    assert_true(to >= 0); /* a transition into a state the model does not have */
    D->q[from][to] += rate;
    D->q[from][from] -= rate;
}

/*
 * The generator written straight from the rules of docs/models.md, on every (mode, n) it allows,
 * times the MMPP phases (phase changes with (mode, n) frozen).
 */
static void dense_build(struct dense *D, const struct osn_model *m)
{
    const int K = m->process == OSN_ARR_MMPP ? m->mmpp.K : 1;
    memset(D, 0, sizeof *D);
    for (int s = 0; s < 3; s++)
        for (long n = 0; n <= m->R; n++) {
            int in;
            if (m->policy == OSN_POLICY_I)
                in = s == 0   ? n <= m->H1 - 1
                     : s == 1 ? n > m->L1 && n < m->H2
                              : n > m->L2 && n <= m->H2;
            else
                in = s == 0 ? 1 : s == 1 ? n > m->L1 : n > m->L2;
            for (int k = 0; in && k < K; k++) {
                assert_true(D->n < DMAX);
                D->mode[D->n] = s;
                D->phase[D->n] = k;
                D->lev[D->n++] = n;
            }
        }
    for (int i = 0; i < D->n; i++) {
        int s = D->mode[i], k = D->phase[i];
        long n = D->lev[i];
        double a = K > 1 ? m->mmpp.rate[k] * m->mmpp.accept[s][k] : osn_model_accept_rate(m, s);
        for (int k2 = 0; K > 1 && k2 < K; k2++)
            if (k2 != k && m->mmpp.gen[k][k2] > 0) {
                int to = dense_index(D, s, n, k2);
                D->q[i][to] += m->mmpp.gen[k][k2];
                D->q[i][i] -= m->mmpp.gen[k][k2];
            }
        if (m->policy == OSN_POLICY_I) {
            if (a > 0)
                dense_add(D, i,
                          (s == 0 && n + 1 == m->H1)   ? 1
                          : (s == 1 && n + 1 == m->H2) ? 2
                                                       : s,
                          n + 1, a);
            if (n > 0)
                dense_add(D, i,
                          (s == 1 && n - 1 == m->L1)   ? 0
                          : (s == 2 && n - 1 == m->L2) ? 1
                                                       : s,
                          n - 1, m->mu);
        } else {
            if (a > 0 && n < m->R)
                dense_add(D, i, s, n + 1, a);
            if (n > 0) {
                long left = n - 1;
                int t = s;
                if (s == 0)
                    t = left >= m->H2 ? 2 : left >= m->H1 ? 1 : 0;
                else if (s == 1)
                    t = left <= m->L1 ? 0 : left >= m->H2 ? 2 : 1;
                else
                    t = left <= m->L2 ? 1 : 2;
                dense_add(D, i, t, left, m->mu);
            }
        }
    }
}

/* Solves A x = b (n x n) by Gaussian elimination with partial pivoting. */
static void dense_lin(int n, long double a[DMAX][DMAX + 1], long double *x)
{
    for (int k = 0; k < n; k++) {
        int p = k;
        for (int i = k + 1; i < n; i++)
            if (fabsl(a[i][k]) > fabsl(a[p][k]))
                p = i;
        for (int j = 0; j <= n; j++) {
            long double t = a[k][j];
            a[k][j] = a[p][j];
            a[p][j] = t;
        }
        for (int i = k + 1; i < n; i++) {
            long double f = a[i][k] / a[k][k];
            for (int j = k; j <= n; j++)
                a[i][j] -= f * a[k][j];
        }
    }
    for (int k = n - 1; k >= 0; k--) {
        long double s = a[k][n];
        for (int j = k + 1; j < n; j++)
            s -= a[k][j] * x[j];
        x[k] = s / a[k][k];
    }
}

static long double A[DMAX][DMAX + 1];

static void dense_compare(const struct osn_model *m)
{
    static struct dense D;
    dense_build(&D, m);
    int n = D.n;
    long double pi[DMAX], m1[DMAX], m2[DMAX];
    /* pi Q = 0, sum pi = 1: transpose, last equation replaced by the normalisation. */
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < n; j++)
            A[i][j] = i == n - 1 ? 1 : D.q[j][i];
        A[i][n] = i == n - 1 ? 1 : 0;
    }
    dense_lin(n, A, pi);
    long double P[3] = {0}, N = 0, nu01 = 0;
    for (int i = 0; i < n; i++) {
        P[D.mode[i]] += pi[i];
        N += pi[i] * D.lev[i];
        for (int j = 0; j < n; j++)
            if (D.mode[i] == 0 && D.mode[j] != 0 && i != j)
                nu01 += pi[i] * D.q[i][j];
    }
    /* Return time: (-Q_AA) m1 = 1, (-Q_AA) m2 = 2 m1 on modes 1, 2; entry by the flow from 0. */
    int idx[DMAX], na = 0;
    for (int i = 0; i < n; i++)
        if (D.mode[i] != 0)
            idx[na++] = i;
    for (int pass = 0; pass < 2; pass++) {
        for (int r = 0; r < na; r++) {
            for (int c = 0; c < na; c++)
                A[r][c] = -D.q[idx[r]][idx[c]];
            A[r][na] = pass == 0 ? 1 : 2 * m1[r];
        }
        dense_lin(na, A, pass == 0 ? m1 : m2);
    }
    long double w = 0, t1 = 0, t2 = 0;
    for (int r = 0; r < na; r++) {
        long double in = 0;
        for (int i = 0; i < n; i++)
            if (D.mode[i] == 0)
                in += pi[i] * D.q[i][idx[r]];
        w += in;
        t1 += in * m1[r];
        t2 += in * m2[r];
    }
    t1 /= w;
    t2 /= w;
    struct osn_measures ms = solve_ok(m, OSN_METHOD_GENERAL);
    assert_near(d(ms.P[0]), (double)P[0], 1e-10, "dense P0");
    assert_near(d(ms.P[1]), (double)P[1], 1e-10, "dense P1");
    /* The dense elimination has an absolute error near 1e-19: small P2 compare absolutely. */
    if (P[2] > 1e-8)
        assert_near(d(ms.P[2]), (double)P[2], 1e-9, "dense P2");
    else
        assert_true(fabs(d(ms.P[2]) - (double)P[2]) < 1e-17);
    assert_near(d(ms.N_mean), (double)N, 1e-10, "dense N_mean");
    assert_near(d(ms.nu01), (double)nu01, 1e-10, "dense nu01");
    assert_near(d(ms.T_ret), (double)t1, 1e-10, "dense T_ret");
    assert_near(d(ms.T_ret_sd), sqrtl(t2 - t1 * t1), 1e-8, "dense SD(T_ret)");
}

static struct osn_model bi_level(long L1, long H1, long L2, long H2, long R, enum osn_policy pol)
{
    struct osn_model m = two_loop(1, 0.5, 0, 1, 2);
    m.kind = OSN_KIND_BI_LEVEL;
    m.policy = pol;
    m.L1 = L1, m.H1 = H1, m.L2 = L2, m.H2 = H2, m.R = R;
    osn_model_resolve(&m);
    return m;
}

static void test_dense_reference(void **state)
{
    (void)state;
    const long thr[][5] = {{0, 1, 1, 2, 2},     {2, 5, 4, 8, 10},  {2, 5, 3, 6, 10},
                           {5, 10, 8, 15, 20},  {0, 3, 2, 20, 25}, {3, 4, 4, 5, 5},
                           {1, 10, 11, 12, 20}, {0, 1, 5, 9, 30}};
    const double lam[][2] = {{0.5, 0.25}, {1.2, 0.6}, {3, 1}, {1, 1}, {0.8, 0}};
    int cases = 0;
    for (int pol = OSN_POLICY_I; pol <= OSN_POLICY_II; pol++)
        for (size_t k = 0; k < sizeof thr / sizeof thr[0]; k++)
            for (size_t i = 0; i < sizeof lam / sizeof lam[0]; i++) {
                struct osn_model m =
                        bi_level(thr[k][0], thr[k][1], thr[k][2], thr[k][3], thr[k][4], pol);
                m.rate = lam[i][0];
                m.overload_rate = lam[i][1];
                dense_compare(&m);
                /* The same chain with two flows: flow 1 kept in overload. */
                m.flows = 2;
                m.rate1 = lam[i][1];
                m.rate2 = lam[i][0] - lam[i][1];
                dense_compare(&m);
                cases += 2;
            }
    /* Named kinds under policy II. */
    struct osn_model t = two_loop(1.2, 0.6, 5, 10, 20);
    t.policy = OSN_POLICY_II;
    dense_compare(&t);
    t.kind = OSN_KIND_SINGLE_LOOP;
    osn_model_resolve(&t);
    dense_compare(&t);
    assert_int_equal(cases, 160);
}

/* ---- reductions between models ---- */

static void assert_same_chain(const struct osn_measures *a, const struct osn_measures *b)
{
    assert_close(a->P[0], b->P[0], 1e-13, "P0");
    assert_close(a->P[1], b->P[1], 1e-13, "P1");
    assert_close(a->P[2], b->P[2], 1e-13, "P2");
    assert_close(a->T_ret, b->T_ret, 1e-13, "T_ret");
    assert_close(a->T_ret_sd, b->T_ret_sd, 1e-12, "SD");
    assert_close(a->T_cyc, b->T_cyc, 1e-13, "T_cyc");
    assert_close(a->N_mean, b->N_mean, 1e-13, "N_mean");
}

static void test_reductions(void **state)
{
    (void)state;
    for (int pol = OSN_POLICY_I; pol <= OSN_POLICY_II; pol++) {
        /* Two-loop and single-loop are bi-level thresholds. */
        struct osn_model a = two_loop(1.3, 0.7, 4, 9, 17);
        a.policy = pol;
        struct osn_model b = bi_level(4, 9, 9, 17, 17, pol);
        b.rate = 1.3, b.overload_rate = 0.7;
        struct osn_measures ma = solve_ok(&a, OSN_METHOD_GENERAL);
        struct osn_measures mb = solve_ok(&b, OSN_METHOD_GENERAL);
        assert_same_chain(&ma, &mb);
        a.kind = OSN_KIND_SINGLE_LOOP;
        osn_model_resolve(&a);
        b = bi_level(4, 9, 16, 17, 17, pol);
        b.rate = 1.3, b.overload_rate = 0.7;
        ma = solve_ok(&a, OSN_METHOD_GENERAL);
        mb = solve_ok(&b, OSN_METHOD_GENERAL);
        assert_same_chain(&ma, &mb);

        /* Two flows with lambda2 = 0 are one flow that overload does not thin. */
        struct osn_model one = two_loop(0.9, 0.9, 3, 8, 12);
        one.policy = pol;
        struct osn_model two = one;
        two.flows = 2, two.rate1 = 0.9, two.rate2 = 0;
        ma = solve_ok(&one, OSN_METHOD_GENERAL);
        mb = solve_ok(&two, OSN_METHOD_GENERAL);
        assert_same_chain(&ma, &mb);
        assert_close(mb.loss_flow1, ma.theta, 1e-13, "flow 1 loss");

        /* Two flows = one flow thinned to flow 1; per-flow losses by PASTA. */
        one = two_loop(1.5, 1.0, 3, 8, 12);
        one.policy = pol;
        two = one;
        two.flows = 2, two.rate1 = 1.0, two.rate2 = 0.5;
        ma = solve_ok(&one, OSN_METHOD_GENERAL);
        mb = solve_ok(&two, OSN_METHOD_GENERAL);
        assert_same_chain(&ma, &mb);
        assert_close(ma.theta, mb.theta, 1e-13, "theta");
        if (pol == OSN_POLICY_I) {
            assert_close(mb.loss_flow1, mb.P[2], 1e-13, "flow 1 loses P2");
            assert_close(mb.loss_flow2, osn_xd_add(mb.P[1], mb.P[2]), 1e-13,
                         "flow 2 loses P1 + P2");
        }
    }
}

/* ---- the distribution callback ---- */

struct dist_acc {
    struct osn_xd sum;
    long rows;
    int last_mode;
    long last_n;
    struct osn_xd p[64];
};

static int collect(int mode, long n, struct osn_xd p, void *arg)
{
    struct dist_acc *a = arg;
    assert_true(finite_nonneg(p));
    assert_true(n > a->last_n || (n == a->last_n && mode > a->last_mode));
    a->last_mode = mode;
    a->last_n = n;
    if (a->rows < 64)
        a->p[a->rows] = p;
    a->sum = osn_xd_add(a->sum, p);
    a->rows++;
    return 0;
}

static int stop_early(int mode, long n, struct osn_xd p, void *arg)
{
    (void)mode, (void)p, (void)arg;
    return n == 3 ? -42 : 0;
}

static void test_dist(void **state)
{
    (void)state;
    struct osn_model m = two_loop(1.2, 0.6, 5, 10, 20);
    struct dist_acc g = {.sum = osn_xd(0), .last_mode = -1, .last_n = -1}, c = g;
    struct osn_measures ms;
    assert_int_equal(osn_solve(&m, OSN_METHOD_GENERAL, &ms, collect, &g), 0);
    assert_int_equal(osn_solve(&m, OSN_METHOD_CLOSED, &ms, collect, &c), 0);
    assert_int_equal(g.rows, ms.states);
    assert_int_equal(c.rows, ms.states);
    assert_close(g.sum, osn_xd(1), 1e-14, "dist sums to 1");
    for (long i = 0; i < g.rows; i++)
        assert_close(g.p[i], c.p[i], 1e-12, "general and closed per state");
    assert_int_equal(osn_solve(&m, OSN_METHOD_GENERAL, &ms, stop_early, NULL), -42);
    /* Closed forms exist for the one-flow two-loop model under policy I only. */
    m.policy = OSN_POLICY_II;
    assert_int_equal(osn_solve(&m, OSN_METHOD_CLOSED, &ms, NULL, NULL), OSN_ENOTSUP);
}

/* ---- MMPP input ---- */

static struct osn_model with_mmpp(struct osn_model m, int K, const double *rate, const double *gen,
                                  const double *accept1)
{
    m.process = OSN_ARR_MMPP;
    m.mmpp.K = K;
    for (int i = 0; i < K; i++) {
        m.mmpp.rate[i] = rate[i];
        m.mmpp.accept[0][i] = 1;
        m.mmpp.accept[1][i] = accept1[i];
        m.mmpp.accept[2][i] = 0;
        for (int j = 0; j < K; j++)
            m.mmpp.gen[i][j] = i == j ? 0 : gen[i * K + j];
    }
    m.rate = osn_mmpp_mean_rate(&m.mmpp, 0);
    m.overload_rate = osn_mmpp_mean_rate(&m.mmpp, 1);
    return m;
}

static void test_mmpp_equal_phases_is_poisson(void **state)
{
    (void)state;
    const double rate[3] = {1.2, 1.2, 1.2}, half[3] = {0.5, 0.5, 0.5};
    const double gen[9] = {0, 0.3, 0.1, 2, 0, 0.5, 0.05, 0.7, 0};
    for (int pol = OSN_POLICY_I; pol <= OSN_POLICY_II; pol++)
        for (int K = 2; K <= 3; K++) {
            struct osn_model p = two_loop(1.2, 0.6, 5, 10, 20);
            p.policy = pol;
            struct osn_model q = with_mmpp(p, K, rate, gen, half);
            struct osn_measures a = solve_ok(&p, OSN_METHOD_GENERAL);
            struct osn_measures b = solve_ok(&q, OSN_METHOD_GENERAL);
            assert_same_chain(&a, &b);
            assert_close(a.theta, b.theta, 1e-13, "theta");
            assert_int_equal(b.states, K * a.states);
            assert_int_equal(b.nphase, K);
            /* Onsets in each phase in proportion to its stationary probability. */
            double pi[OSN_MMPP_MAX];
            osn_mmpp_phase_probs(&q.mmpp, pi);
            for (int k = 0; k < K; k++) {
                assert_near(d(b.onset_phase[k]), pi[k], 1e-12, "onset phase");
                assert_close(b.T_ret_phase[k], a.T_ret, 1e-12, "T_ret by phase");
            }
        }
}

static void test_mmpp_dense_reference(void **state)
{
    (void)state;
    const double rate2[2] = {0.3, 2.5}, acc2[2] = {0.6, 0.3}, gen2[4] = {0, 0.2, 0.9, 0};
    const double rate3[3] = {0.1, 1.0, 4.0}, acc3[3] = {1, 0.5, 0.1};
    const double gen3[9] = {0, 0.5, 0.01, 0.2, 0, 0.3, 1.5, 0.4, 0};
    const long thr[][5] = {{2, 5, 4, 8, 10}, {0, 1, 1, 2, 2}, {3, 6, 6, 12, 12}, {1, 4, 8, 9, 12}};
    for (int pol = OSN_POLICY_I; pol <= OSN_POLICY_II; pol++)
        for (size_t k = 0; k < sizeof thr / sizeof thr[0]; k++) {
            struct osn_model m =
                    bi_level(thr[k][0], thr[k][1], thr[k][2], thr[k][3], thr[k][4], pol);
            struct osn_model q = with_mmpp(m, 2, rate2, gen2, acc2);
            dense_compare(&q);
            q = with_mmpp(m, 3, rate3, gen3, acc3);
            dense_compare(&q);
            struct osn_measures ms = solve_ok(&q, OSN_METHOD_GENERAL);
            /* The phase split of T_ret averages back to T_ret. */
            struct osn_xd avg = osn_xd(0);
            for (int p = 0; p < 3; p++)
                if (!osn_xd_is_zero(ms.onset_phase[p]))
                    avg = osn_xd_add(avg, osn_xd_mul(ms.onset_phase[p], ms.T_ret_phase[p]));
            assert_close(avg, ms.T_ret, 1e-12, "T_ret = sum_k onset_k T_ret_k");
        }
}

/* ---- runs of alike levels (the level solver skips repeated elimination steps in them) ---- */

static int same_level(const struct osn__lvl *a, const struct osn__lvl *b)
{
    if (a->m != b->m || a->has_side != b->has_side)
        return 0;
    for (int i = 0; i < a->m; i++) {
        if (a->mode[i] != b->mode[i] || a->phase[i] != b->phase[i] || a->up_to[i] != b->up_to[i] ||
            a->dn_to[i] != b->dn_to[i] || a->up_rate[i] != b->up_rate[i] ||
            a->dn_rate[i] != b->dn_rate[i] || a->kill[i] != b->kill[i] ||
            a->lost[i][0] != b->lost[i][0] || a->lost[i][1] != b->lost[i][1])
            return 0;
        for (int j = 0; a->has_side && j < a->m; j++)
            if (a->side[i][j] != b->side[i][j])
                return 0;
    }
    return 1;
}

/* The levels of a run that chain.c reports (its ends, and the neighbours of the level asked
 * about) are filled exactly like that level. */
static long check_runs(const struct osn__lchain *lc)
{
    static struct osn__lvl a, b;
    long longest = 0;
    for (long n = lc->lo; n <= lc->hi; n++) {
        long lo, hi;
        lc->run(lc->ctx, n, &lo, &hi);
        assert_true(lo <= n && n <= hi);
        lo = lo < lc->lo ? lc->lo : lo;
        hi = hi > lc->hi ? lc->hi : hi;
        longest = hi - lo + 1 > longest ? hi - lo + 1 : longest;
        lc->fill(lc->ctx, n, &a);
        const long probe[4] = {lo, n - 1, n + 1, hi}; /* all of the run: quadratic time */
        for (int t = 0; t < 4; t++) {
            long k = probe[t];
            if (k < lo || k > hi)
                continue;
            lc->fill(lc->ctx, k, &b);
            if (!same_level(&a, &b))
                fail_msg("level %ld differs from level %ld of its run %ld..%ld", k, n, lo, hi);
        }
    }
    return longest;
}

struct pis {
    struct osn_xd *v;
    long n;
};

static int collect_pi(long n, const struct osn__lvl *lv, const struct osn_xd *pi,
                      const struct osn__lvl *below, const struct osn__lvl *above, void *arg)
{
    struct pis *p = arg;
    (void)n, (void)below, (void)above;
    for (int i = 0; i < lv->m; i++)
        p->v[p->n++] = pi[i];
    return 0;
}

static void ones(long n, const struct osn__lvl *lv, struct osn_xd *b, void *arg)
{
    (void)n, (void)arg;
    for (int i = 0; i < lv->m; i++)
        b[i] = osn_xd(1);
}

/* The stationary vector, or the mean passage times when transient, of lc: into a new array. */
static struct osn_xd *level_solve(const struct osn__lchain *lc, int transient)
{
    long states = osn__lchain_states(lc);
    struct pis p = {calloc((size_t)states, sizeof *p.v), 0};
    assert_non_null(p.v);
    if (transient) {
        assert_int_equal(osn__transient_solve(lc, ones, NULL, p.v), 0);
    } else {
        struct osn__elim *st;
        assert_int_equal(osn__stat_new(&st, lc, NULL), 0);
        assert_int_equal(osn__stat_sweep(st, collect_pi, &p), 0);
        assert_int_equal(p.n, states);
        osn__elim_free(st);
    }
    return p.v;
}

/*
 * The overload chain of m solved taking its top levels from the stationary chain's elimination
 * (as osn solve does) gives the bits `alone` it gives by itself. Returns 1 when some levels were
 * shared.
 */
static int shared_top_same(const struct osn_model *m, const struct osn_xd *alone, long states)
{
    struct osn__chain fc, oc;
    struct osn__lchain flc, olc;
    osn__chain_init(&fc, m, 0);
    osn__chain_init(&oc, m, 1);
    osn__chain_levels(&fc, &flc);
    osn__chain_levels(&oc, &olc);
    struct osn__elim *st, *t;
    assert_int_equal(osn__stat_new(&st, &flc, &olc), 0);
    assert_int_equal(osn__trans_new(&t, &olc, st), 0);
    struct osn_xd *x = calloc((size_t)states, sizeof *x);
    assert_non_null(x);
    assert_int_equal(osn__trans_solve(t, ones, NULL, x), 0);
    if (memcmp(x, alone, (size_t)states * sizeof *x) != 0)
        fail_msg("sharing the stationary chain's top levels changed the passage times");
    const int shared = osn__elim_shared_from(t) <= olc.hi;
    free(x);
    osn__elim_free(t);
    osn__elim_free(st);
    return shared;
}

/*
 * The runs are right (each level of a run filled alike), and the solves that skip repeated
 * steps in them give the same bits as the solves of every level (run = NULL): both policies,
 * the three kinds, MMPP input, loads below, at and above 1, chains short and long enough for
 * the kept blocks to fill several chunks.
 */
static void test_runs(void **state)
{
    (void)state;
    const long thr[][5] = {{2, 5, 4, 8, 10},
                           {0, 1, 1, 2, 2},
                           {5, 40, 60, 90, 120},
                           {10, 11, 12, 13, 3000},
                           {400, 3000, 3500, 6000, 9000},
                           {9000, 20000, 25000, 40000, 60000}}; /* blocks in several chunks */
    const double lam[][2] = {{0.5, 0.25}, {1.2, 0.6}, {1, 1}, {3, 1}};
    const double rate2[2] = {0.3, 2.5}, acc2[2] = {0.6, 0.3}, gen2[4] = {0, 0.2, 0.9, 0};
    long longest = 0, shared = 0;
    for (int pol = OSN_POLICY_I; pol <= OSN_POLICY_II; pol++)
        for (size_t k = 0; k < sizeof thr / sizeof thr[0]; k++)
            for (size_t i = 0; i < sizeof lam / sizeof lam[0] + 1; i++) {
                struct osn_model m =
                        bi_level(thr[k][0], thr[k][1], thr[k][2], thr[k][3], thr[k][4], pol);
                if (i < sizeof lam / sizeof lam[0]) {
                    m.rate = lam[i][0];
                    m.overload_rate = lam[i][1];
                } else {
                    m = with_mmpp(m, 2, rate2, gen2, acc2);
                }
                for (int only_overload = 0; only_overload <= 1; only_overload++) {
                    struct osn__chain c;
                    struct osn__lchain lc, plain;
                    osn__chain_init(&c, &m, only_overload);
                    osn__chain_levels(&c, &lc);
                    long l = check_runs(&lc);
                    longest = l > longest ? l : longest;
                    plain = lc;
                    plain.run = NULL;
                    long states = osn__lchain_states(&lc);
                    struct osn_xd *a = level_solve(&lc, only_overload);
                    struct osn_xd *b = level_solve(&plain, only_overload);
                    if (memcmp(a, b, (size_t)states * sizeof *a) != 0)
                        fail_msg("skipping changed the solution (policy %d, thresholds %zu, "
                                 "load %zu, overload chain %d)",
                                 pol, k, i, only_overload);
                    if (only_overload)
                        shared += shared_top_same(&m, a, states);
                    free(a);
                    free(b);
                }
            }
    assert_true(longest > 2000); /* the runs are not all single levels */
    assert_true(shared > 10);    /* most policy I chains share their top levels */
}

/* ---- model checks ---- */

static void test_model_check(void **state)
{
    (void)state;
    const char *key;
    char msg[256];
    struct osn_model m = two_loop(1, 0.5, 5, 5, 20);
    assert_int_equal(osn_model_check(&m, &key, msg, sizeof msg), OSN_ECONFIG);
    assert_string_equal(key, "thresholds.H");
    m = two_loop(1, 0.5, 5, 20, 20);
    assert_int_equal(osn_model_check(&m, &key, msg, sizeof msg), OSN_ECONFIG);
    assert_string_equal(key, "thresholds.H");
    m = two_loop(1, 2, 5, 10, 20);
    assert_int_equal(osn_model_check(&m, &key, msg, sizeof msg), OSN_ECONFIG);
    assert_string_equal(key, "arrivals.overload_rate");
    m = two_loop(-1, 0.5, 5, 10, 20);
    assert_int_equal(osn_model_check(&m, &key, msg, sizeof msg), OSN_ECONFIG);
    assert_string_equal(key, "arrivals.rate");
    m = bi_level(2, 5, 6, 5, 10, OSN_POLICY_I);
    assert_int_equal(osn_model_check(&m, &key, msg, sizeof msg), OSN_ECONFIG);
    assert_string_equal(key, "thresholds.H2");
    m = bi_level(2, 5, 2, 8, 10, OSN_POLICY_I);
    assert_int_equal(osn_model_check(&m, &key, msg, sizeof msg), OSN_ECONFIG);
    assert_string_equal(key, "thresholds.L2");
    m = two_loop(1, 0.5, 5, 10, OSN_R_MAX);
    assert_int_equal(osn_model_check(&m, &key, msg, sizeof msg), OSN_ETOOBIG);
    assert_string_equal(key, "thresholds.R");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_reference_table),
            cmocka_unit_test(test_policy_II_by_hand),
            cmocka_unit_test(test_exact_checks),
            cmocka_unit_test(test_closed_grid),
            cmocka_unit_test(test_large_R),
            cmocka_unit_test(test_extremes),
            cmocka_unit_test(test_dense_reference),
            cmocka_unit_test(test_reductions),
            cmocka_unit_test(test_dist),
            cmocka_unit_test(test_mmpp_equal_phases_is_poisson),
            cmocka_unit_test(test_mmpp_dense_reference),
            cmocka_unit_test(test_runs),
            cmocka_unit_test(test_model_check),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
