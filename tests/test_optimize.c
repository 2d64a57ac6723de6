/*
 * Tests of the threshold optimiser (src/model/optimize.c) against brute force.
 *
 * The reference here is written independently of the optimiser: it solves every pair itself,
 * decides feasibility and ranks pairs with plain doubles (exact for these small cases, whose
 * measures all fit a double), and applies the documented rules for the optimum, the closest
 * pair, the next-better pair and the binding constraint. For the two-loop model it also takes
 * its measures from the closed forms (--method closed) instead of the structured solver, so the
 * optimum's values are checked against an independent computation too. Cases: R = 6..15, loads
 * from light to heavy, every constraint alone and combined, with bounds set at quantiles of the
 * grid's own values so that constraints really cut; single-loop, bi-level (invalid pairs
 * skipped), two flows, policy II and constant service; an infeasible case; the drift of the optimum
 * to H = R-1 without a discard bound (docs/models.md); and a case whose measures leave the double
 * range. The quantile objectives (p95, p99 of the return time) are checked the same way: the
 * reference computes every pair's distribution itself (osn_tret_dist_new, then
 * osn_tret_dist_quantile at 0.95 or 0.99) and ranks the pairs by it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "model_int.h"
#include "osn/err.h"
#include "osn/model_scenario.h"
#include "osn/optimize.h"
#include "osn/optimize_scenario.h"
#include "testutil.h"

#define MAXP 512 /* pairs of the largest case, R = 30 (435), with room */

/* One pair of the reference grid: its measures, and the objective it is ranked by (T_ret, or a
 * quantile of its distribution: ref_quantiles()). */
struct ref_pair {
    long L, H;
    struct osn_measures ms;
    double obj;
};

struct ref_grid {
    int n, skipped;
    struct ref_pair p[MAXP];
};

/* Solves every valid pair of m with `method`, in no particular relation to the optimiser. */
static void ref_solve(const struct osn_model *base, enum osn_method method, struct ref_grid *g)
{
    long top = base->kind == OSN_KIND_BI_LEVEL ? base->H2 : base->R;
    g->n = g->skipped = 0;
    for (long H = 1; H < top; H++)
        for (long L = 0; L < H; L++) {
            struct osn_model m = *base;
            if (m.kind == OSN_KIND_BI_LEVEL) {
                m.L1 = L;
                m.H1 = H;
            } else {
                m.L = L;
                m.H = H;
            }
            osn_model_resolve(&m);
            if (osn_model_check(&m, NULL, NULL, 0) != 0) {
                g->skipped++;
                continue;
            }
            assert_true(g->n < MAXP);
            struct ref_pair *r = &g->p[g->n++];
            r->L = L;
            r->H = H;
            assert_int_equal(osn_solve(&m, method, &r->ms, NULL, NULL), 0);
            r->obj = osn_xd_to_double(r->ms.T_ret);
        }
}

/* The p-quantile of every pair's return time as its objective, each distribution computed here
 * on its own. */
static void ref_quantiles(const struct osn_model *base, struct ref_grid *g, double p)
{
    for (int i = 0; i < g->n; i++) {
        struct osn_model m = *base;
        struct osn_tret_dist *td = NULL;
        osn_optimize_set_pair(&m, g->p[i].L, g->p[i].H);
        assert_int_equal(osn_tret_dist_new(&td, &m), 0);
        g->p[i].obj = osn_xd_to_double(osn_tret_dist_quantile(td, p));
        osn_tret_dist_free(td);
    }
}

static double dv(struct osn_xd x)
{
    return osn_xd_to_double(x);
}

/* The bounded measure as a double. */
static double con_value(int c, const struct osn_measures *ms)
{
    switch (c) {
    case OSN_OPT_THROTTLE:
        return dv(ms->P[1]) + dv(ms->P[2]);
    case OSN_OPT_LOSS:
        return dv(ms->theta);
    case OSN_OPT_DISCARD:
        return dv(ms->P[2]);
    default:
        return dv(ms->T_cyc);
    }
}

static double ref_viol(const struct osn_opt_cfg *cfg, int c, const struct osn_measures *ms)
{
    double v = con_value(c, ms), b = cfg->bound[c];
    if (!cfg->has[c])
        return 0;
    if (c == OSN_OPT_CYCLE)
        return v >= b ? 0 : b / v - 1;
    if (b == 0)
        return v;
    return v <= b ? 0 : v / b - 1;
}

static double ref_total(const struct osn_opt_cfg *cfg, const struct osn_measures *ms, bool *ok)
{
    double t = 0;
    *ok = true;
    for (int c = 0; c < OSN_OPT_NCON; c++) {
        double v = ref_viol(cfg, c, ms);
        if (v > 0)
            *ok = false;
        t += v;
    }
    return t;
}

struct ref_answer {
    int feasible, best, closest, next, binding; /* indices into the grid, -1 for none */
};

/* The documented rules, applied by exhaustive search over the grid (scan order = index). */
static struct ref_answer ref_answer(const struct ref_grid *g, const struct osn_opt_cfg *cfg)
{
    struct ref_answer a = {0, -1, -1, -1, -1};
    double best_viol = 0;
    for (int i = 0; i < g->n; i++) {
        bool ok;
        double t = ref_total(cfg, &g->p[i].ms, &ok), T = g->p[i].obj;
        a.feasible += ok;
        if (ok && (a.best < 0 || T < g->p[a.best].obj))
            a.best = i;
        if (a.closest < 0 || t < best_viol || (t == best_viol && T < g->p[a.closest].obj)) {
            a.closest = i;
            best_viol = t;
        }
    }
    if (a.best < 0)
        return a;
    double Tb = g->p[a.best].obj;
    for (int i = 0; i < g->n; i++) {
        double T = g->p[i].obj;
        if (T < Tb && (a.next < 0 || T > g->p[a.next].obj))
            a.next = i;
    }
    if (a.next >= 0)
        for (int c = 0; c < OSN_OPT_NCON; c++) {
            double v = ref_viol(cfg, c, &g->p[a.next].ms);
            if (v > 0 && (a.binding < 0 || v > ref_viol(cfg, a.binding, &g->p[a.next].ms)))
                a.binding = c;
        }
    return a;
}

/* Counts visits and checks the scan order. */
struct visit_log {
    long n, feasible, lastL, lastH;
};

static int log_visit(const struct osn_opt_pair *p, void *arg)
{
    struct visit_log *v = arg;
    assert_true(v->n == 0 || p->H > v->lastH || (p->H == v->lastH && p->L > v->lastL));
    assert_true(p->L < p->H);
    v->lastL = p->L;
    v->lastH = p->H;
    v->n++;
    v->feasible += p->feasible;
    return 0;
}

static bool same_bits(struct osn_xd a, struct osn_xd b)
{
    return a.m == b.m && a.e == b.e;
}

/* Two answers are the same: every count and reported pair, with the same bits in its measures. */
static void same_answer(const struct osn_opt_result *a, const struct osn_opt_result *b)
{
    assert_int_equal(a->evaluated, b->evaluated);
    assert_int_equal(a->skipped, b->skipped);
    assert_int_equal(a->feasible, b->feasible);
    assert_int_equal(a->binding, b->binding);
    assert_memory_equal(a->slack, b->slack, sizeof a->slack);
    const struct osn_opt_point *pa[] = {&a->best, &a->closest, &a->next, &a->free};
    const struct osn_opt_point *pb[] = {&b->best, &b->closest, &b->next, &b->free};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(pa[i]->found, pb[i]->found);
        assert_int_equal(pa[i]->L, pb[i]->L);
        assert_int_equal(pa[i]->H, pb[i]->H);
        assert_true(pa[i]->violation == pb[i]->violation);
        assert_memory_equal(pa[i]->viol, pb[i]->viol, sizeof pa[i]->viol);
        const struct osn_measures *x = &pa[i]->ms, *y = &pb[i]->ms;
        assert_true(same_bits(x->T_ret, y->T_ret) && same_bits(x->T_ret_sd, y->T_ret_sd));
        assert_true(same_bits(x->P[0], y->P[0]) && same_bits(x->P[1], y->P[1]) &&
                    same_bits(x->P[2], y->P[2]));
        assert_true(same_bits(x->theta, y->theta) && same_bits(x->T_cyc, y->T_cyc) &&
                    same_bits(x->N_mean, y->N_mean));
    }
}

/*
 * The screened scan (no visit callback, two-loop M|M|1) against the plain one: the same answer,
 * bit for bit. plain: the plain scan's answer when the caller has it, else NULL and it is run
 * here (cfg.exhaustive). Returns how many pairs the screen solved in full.
 */
static long screened_as_plain(const struct osn_model *m, const struct osn_opt_cfg *cfg,
                              const struct osn_opt_result *plain)
{
    static struct osn_opt_result own, screened;
    if (!plain) {
        struct osn_opt_cfg every = *cfg;
        every.exhaustive = true;
        assert_int_equal(osn_optimize(m, &every, &own, NULL, NULL, NULL, NULL), 0);
        plain = &own;
    }
    assert_int_equal(osn_optimize(m, cfg, &screened, NULL, NULL, NULL, NULL), 0);
    same_answer(plain, &screened);
    assert_int_equal(plain->solved, plain->evaluated);
    return screened.solved;
}

/* Runs the optimiser and compares it with the reference answer on grid g. */
static void check_case(const struct osn_model *m, const struct osn_opt_cfg *cfg,
                       const struct ref_grid *g, bool exact)
{
    struct osn_opt_result res;
    struct visit_log vl = {0};
    struct ref_answer a = ref_answer(g, cfg);

    assert_int_equal(osn_optimize(m, cfg, &res, log_visit, &vl, NULL, NULL), 0);
    screened_as_plain(m, cfg, &res); /* a visit callback makes the scan plain */
    assert_int_equal(res.evaluated, g->n);
    assert_int_equal(res.skipped, g->skipped);
    assert_int_equal(vl.n, g->n);
    assert_int_equal(vl.feasible, res.feasible);
    if (!exact) {
        /* Reference from the closed forms: the same optimum value to 1e-9 (a near-tie or a
           pair within 1e-9 of a bound may legitimately pick another pair with that value). */
        if (a.best >= 0 && res.best.found)
            assert_true(rel(dv(res.best.ms.T_ret), dv(g->p[a.best].ms.T_ret)) < 1e-9);
        assert_true(labs(res.feasible - a.feasible) <= 1);
        return;
    }
    assert_int_equal(res.feasible, a.feasible);
    assert_int_equal(res.best.found, a.best >= 0);
    if (a.best >= 0) {
        assert_int_equal(res.best.L, g->p[a.best].L);
        assert_int_equal(res.best.H, g->p[a.best].H);
        assert_true(rel(dv(res.best.ms.T_ret), dv(g->p[a.best].ms.T_ret)) == 0);
        /* The value ranked by, to the bit: the mean, or the quantile computed here. */
        assert_true(dv(osn_opt_objective_value(cfg->objective, &res.best.ms)) == g->p[a.best].obj);
        assert_int_equal(res.closest.L, res.best.L);
        assert_int_equal(res.closest.H, res.best.H);
        assert_int_equal(res.next.found, a.next >= 0);
        if (a.next >= 0) {
            assert_int_equal(res.next.L, g->p[a.next].L);
            assert_int_equal(res.next.H, g->p[a.next].H);
        }
        assert_int_equal(res.binding, a.binding);
    } else {
        assert_int_equal(res.binding, -1);
    }
    assert_int_equal(res.closest.L, g->p[a.closest].L);
    assert_int_equal(res.closest.H, g->p[a.closest].H);
    bool ok;
    assert_true(rel(res.closest.violation, ref_total(cfg, &g->p[a.closest].ms, &ok)) < 1e-12);
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/*
 * A bound that really cuts: the q-quantile of constraint c's measure over the grid. With `between`
 * it is the midpoint to the next larger value, so that no pair sits on the bound and a
 * reference computed another way (closed forms) cannot flip a pair's feasibility by rounding;
 * without it a pair meets the bound with equality, which must count as feasible.
 */
static double quantile(const struct ref_grid *g, int c, double q, bool between)
{
    double v[MAXP];
    for (int i = 0; i < g->n; i++)
        v[i] = con_value(c, &g->p[i].ms);
    qsort(v, (size_t)g->n, sizeof v[0], cmp_double);
    int i = (int)(q * (g->n - 1));
    if (!between || i + 1 >= g->n)
        return v[i];
    return 0.5 * (v[i] + v[i + 1]);
}

/* Every subset of the four constraints (16), bounds at quantiles q of the grid, for objective
 * obj (the grid's obj must be that objective's values). */
static void all_subsets_obj(const struct osn_model *m, const struct ref_grid *g, double q,
                            bool exact, enum osn_opt_objective obj)
{
    for (int mask = 0; mask < 16; mask++) {
        struct osn_opt_cfg cfg = {.objective = obj};
        for (int c = 0; c < OSN_OPT_NCON; c++)
            if (mask & (1 << c)) {
                cfg.has[c] = true;
                /* min_cycle keeps the top of T_cyc: the complementary quantile. */
                cfg.bound[c] = quantile(g, c, c == OSN_OPT_CYCLE ? 1 - q : q, !exact);
            }
        check_case(m, &cfg, g, exact);
    }
}

static void all_subsets(const struct osn_model *m, const struct ref_grid *g, double q, bool exact)
{
    all_subsets_obj(m, g, q, exact, OSN_OPT_T_RET);
}

static void test_two_loop_brute_force(void **state)
{
    static const double loads[] = {0.5, 0.9, 1.2, 2.0};
    static struct ref_grid g, gc;
    (void)state;
    for (long R = 6; R <= 15; R++)
        for (size_t k = 0; k < sizeof loads / sizeof loads[0]; k++) {
            struct osn_model m = two_loop(loads[k], loads[k] / 2, 0, 1, R);
            ref_solve(&m, OSN_METHOD_GENERAL, &g);
            ref_solve(&m, OSN_METHOD_CLOSED, &gc);
            for (int qi = 0; qi < 3; qi++) {
                double q = 0.3 + 0.2 * qi;
                all_subsets(&m, &g, q, true);
                all_subsets(&m, &gc, q, false);
            }
        }
}

static void test_other_models_brute_force(void **state)
{
    static struct ref_grid g;
    (void)state;
    for (long R = 6; R <= 15; R += 3) {
        struct osn_model ms[5];
        ms[0] = two_loop(1.3, 0.7, 0, 1, R); /* single-loop */
        ms[0].kind = OSN_KIND_SINGLE_LOOP;
        ms[1] = two_loop(1.1, 0.5, 0, 1, R); /* bi-level, L2 = R/2, H2 = R - 1 */
        ms[1].kind = OSN_KIND_BI_LEVEL;
        ms[1].L2 = R / 2;
        ms[1].H2 = R - 1;
        ms[2] = two_loop(0, 0, 0, 1, R); /* two flows */
        ms[2].flows = 2;
        ms[2].rate1 = 0.7;
        ms[2].rate2 = 0.6;
        ms[2].rate = 1.3;
        ms[2].overload_rate = 0.7;
        ms[3] = two_loop(1.2, 0.6, 0, 1, R); /* policy II */
        ms[3].policy = OSN_POLICY_II;
        ms[4] = two_loop(1.2, 0.6, 0, 1, R); /* constant service, when osn_solve has it */
        ms[4].service.kind = OSN_LAW_DET;
        ms[4].service.rate = 1;
        for (int i = 0; i < 5; i++) {
            if (osn_solve_unsupported(&ms[i], OSN_METHOD_GENERAL))
                continue;
            osn_model_resolve(&ms[i]);
            assert_int_equal(osn_model_check(&ms[i], NULL, NULL, 0), 0);
            ref_solve(&ms[i], OSN_METHOD_GENERAL, &g);
            assert_true(g.n > 0);
            if (i == 1)
                assert_true(g.skipped > 0); /* L1 < L2 excludes some pairs */
            all_subsets(&ms[i], &g, 0.5, true);
        }
    }
}

/* No pair meets the bounds: found is false, the closest pair is named, binding is none. */
static void test_infeasible(void **state)
{
    static struct ref_grid g;
    struct osn_model m = two_loop(1.2, 0.6, 0, 1, 10);
    struct osn_opt_cfg cfg = {0};
    struct osn_opt_result res;
    (void)state;
    ref_solve(&m, OSN_METHOD_GENERAL, &g);
    cfg.has[OSN_OPT_DISCARD] = cfg.has[OSN_OPT_THROTTLE] = true;
    cfg.bound[OSN_OPT_DISCARD] = 0.5 * quantile(&g, OSN_OPT_DISCARD, 0, false);
    cfg.bound[OSN_OPT_THROTTLE] = 0.5;
    assert_int_equal(osn_optimize(&m, &cfg, &res, NULL, NULL, NULL, NULL), 0);
    assert_false(res.best.found);
    assert_int_equal(res.feasible, 0);
    assert_int_equal(res.evaluated, 45);
    assert_true(res.closest.found && res.closest.violation > 0);
    assert_true(res.closest.viol[OSN_OPT_DISCARD] > 0);
    check_case(&m, &cfg, &g, true);
}

/*
 * docs/models.md: with only a throttling bound and a cycle bound the optimum drifts to H = R-1
 * (discard shortens the return); a discard bound makes it sensible.
 */
static void test_drift_to_r_minus_1(void **state)
{
    static const double loads[] = {0.9, 1.2}, cycles[] = {10, 30};
    (void)state;
    for (int k = 0; k < 4; k++) {
        struct osn_model m = two_loop(loads[k / 2], loads[k / 2] / 2, 0, 1, 20);
        struct osn_opt_cfg cfg = {0};
        struct osn_opt_result res;
        cfg.has[OSN_OPT_THROTTLE] = cfg.has[OSN_OPT_CYCLE] = true;
        cfg.bound[OSN_OPT_THROTTLE] = 0.5;
        cfg.bound[OSN_OPT_CYCLE] = cycles[k % 2];
        assert_int_equal(osn_optimize(&m, &cfg, &res, NULL, NULL, NULL, NULL), 0);
        assert_true(res.best.found);
        assert_int_equal(res.best.H, 19);
        /* And the unconstrained optimum is the very top. */
        assert_int_equal(res.free.H, 19);
        assert_int_equal(res.free.L, 18);

        cfg.has[OSN_OPT_DISCARD] = true;
        cfg.bound[OSN_OPT_DISCARD] = 1e-3;
        assert_int_equal(osn_optimize(&m, &cfg, &res, NULL, NULL, NULL, NULL), 0);
        assert_true(res.best.found);
        assert_true(res.best.H <= 15);
        assert_true(dv(res.best.ms.P[2]) <= 1e-3);
        assert_int_equal(res.binding, OSN_OPT_DISCARD);
    }
}

/* Measures beyond the double range still order: T_cyc >= 1e300 at lambda' = 1e12 mu. */
static void test_extended_range(void **state)
{
    static struct ref_grid g;
    struct osn_model m = two_loop(2e12, 1e12, 0, 1, 30);
    struct osn_opt_cfg cfg = {0};
    struct osn_opt_result res;
    (void)state;
    cfg.has[OSN_OPT_CYCLE] = true;
    cfg.bound[OSN_OPT_CYCLE] = 1e300;
    assert_int_equal(osn_optimize(&m, &cfg, &res, NULL, NULL, NULL, NULL), 0);
    ref_solve(&m, OSN_METHOD_GENERAL, &g);
    /* Reference in extended range: the smallest T_ret with T_cyc >= 1e300. */
    int best = -1, feasible = 0, beyond = 0;
    for (int i = 0; i < g.n; i++) {
        const struct osn_measures *ms = &g.p[i].ms;
        beyond += !osn_xd_fits_double(ms->T_cyc);
        if (osn_xd_cmp(ms->T_cyc, osn_xd(1e300)) < 0)
            continue;
        feasible++;
        if (best < 0 || osn_xd_cmp(ms->T_ret, g.p[best].ms.T_ret) < 0)
            best = i;
    }
    assert_true(beyond > 0);
    assert_true(best >= 0);
    assert_int_equal(res.feasible, feasible);
    assert_int_equal(res.best.L, g.p[best].L);
    assert_int_equal(res.best.H, g.p[best].H);
    assert_true(xd_relerr(res.best.ms.T_ret, g.p[best].ms.T_ret) == 0);
}

static int stop_visit(const struct osn_opt_pair *p, void *arg)
{
    (void)p;
    return ++*(int *)arg == 3 ? OSN_EIO : 0;
}

static void count_progress(long done, long total, void *arg)
{
    long *last = arg;
    assert_int_equal(done, *last + 1);
    assert_int_equal(total, 45);
    *last = done;
}

/* Arguments, the visit error path, progress, unsupported models. */
static void test_api(void **state)
{
    struct osn_model m = two_loop(1.2, 0.6, 0, 1, 10);
    struct osn_opt_cfg cfg = {0};
    struct osn_opt_result res;
    long last = 0;
    int n = 0;
    (void)state;
    assert_int_equal(osn_optimize_pairs(&m), 45);
    assert_int_equal(osn_optimize(&m, &cfg, &res, NULL, NULL, count_progress, &last), 0);
    assert_int_equal(last, 45);
    assert_int_equal(res.binding, -1); /* no constraint: the unconstrained optimum */
    assert_int_equal(res.best.L, res.free.L);
    assert_int_equal(res.best.H, res.free.H);
    assert_int_equal(osn_optimize(&m, &cfg, &res, stop_visit, &n, NULL, NULL), OSN_EIO);
    assert_int_equal(n, 3);
    cfg.has[OSN_OPT_LOSS] = true;
    cfg.bound[OSN_OPT_LOSS] = -1;
    assert_int_equal(osn_optimize(&m, &cfg, &res, NULL, NULL, NULL, NULL), OSN_EINVAL);
    cfg.bound[OSN_OPT_LOSS] = NAN;
    assert_int_equal(osn_optimize(&m, &cfg, &res, NULL, NULL, NULL, NULL), OSN_EINVAL);
    cfg.has[OSN_OPT_LOSS] = false;
    assert_int_equal(osn_optimize(NULL, &cfg, &res, NULL, NULL, NULL, NULL), OSN_EINVAL);
    m.process = OSN_ARR_TRACE;
    assert_int_equal(osn_optimize(&m, &cfg, &res, NULL, NULL, NULL, NULL), OSN_ENOTSUP);
    assert_string_equal(osn_opt_con_name(OSN_OPT_CYCLE), "min_cycle");
}

/* The two-loop M|M|1 cases of the screen's tests: light to extreme load, lambda' = mu, 0. */
static const double screen_loads[][2] = {{0.5, 0.25}, {1.2, 0.6},  {3, 1},      {1.5, 1.5},
                                         {2, 0},      {1000, 500}, {1e12, 1e11}};
#define SCREEN_CASES (sizeof screen_loads / sizeof screen_loads[0])

static double xd_rel(struct osn_xd a, struct osn_xd b)
{
    if (osn_xd_is_zero(a) && osn_xd_is_zero(b))
        return 0;
    return fabs(osn_xd_to_double(osn_xd_div(osn_xd_sub(a, b), b)));
}

/*
 * The screen's premise: its closed forms (mm1_pairs.c) agree with the full solver on every pair
 * within its margin. Measured over whole grids (R = 80: 3,160 pairs a case), the largest
 * relative difference must stay 100 times below the margin (1e-9) that the screen allows.
 */
static void test_screen_closed_forms(void **state)
{
    (void)state;
    double worst = 0;
    for (size_t k = 0; k < SCREEN_CASES; k++) {
        struct osn_model m = two_loop(screen_loads[k][0], screen_loads[k][1], 0, 1, 80);
        struct osn__mm1_pairs *t;
        assert_int_equal(osn__mm1_pairs_new(&m, &t), 0);
        for (long H = 1; H < m.R; H++)
            for (long L = 0; L < H; L++) {
                struct osn__mm1_pair v;
                struct osn_measures ms;
                struct osn_model pm = m;
                osn_optimize_set_pair(&pm, L, H);
                assert_int_equal(osn_solve(&pm, OSN_METHOD_GENERAL, &ms, NULL, NULL), 0);
                osn__mm1_pairs_eval(t, L, H, &v);
                double d[] = {xd_rel(v.T_ret, ms.T_ret),
                              xd_rel(v.P1, ms.P[1]),
                              xd_rel(v.P2, ms.P[2]),
                              xd_rel(v.theta, ms.theta),
                              xd_rel(v.T_cyc, ms.T_cyc),
                              xd_rel(v.throttle, osn_xd_add(ms.P[1], ms.P[2]))};
                for (size_t i = 0; i < sizeof d / sizeof d[0]; i++)
                    worst = fmax(worst, d[i]);
            }
        osn__mm1_pairs_free(t);
    }
    print_message("screen: largest relative difference to the full solver %.2e\n", worst);
    assert_true(worst < 1e-11);
}

/*
 * The screened scan gives the plain scan's answer bit for bit at R = 100 (4,950 pairs) in every
 * case: the constraints of examples/optimize, max_loss alone, a max_discard of 0 ("never") and
 * none. Where no bound sits on a value many pairs share, it solves only a few pairs in full.
 * Where one does, the plain scan's answer is decided by rounding and the screen must give up:
 * at lambda = 3 mu, lambda' = mu every pair has theta = 1 - mu/lambda = 2/3 up to P0 ~ 3^-H, so
 * max_loss = 0.2 leaves the closest pair to the last bits of thousands of equal violations.
 */
static void test_screen_as_plain(void **state)
{
    (void)state;
    for (size_t k = 0; k < SCREEN_CASES; k++) {
        struct osn_model m = two_loop(screen_loads[k][0], screen_loads[k][1], 0, 1, 100);
        struct osn_opt_cfg cfgs[4] = {{{0}}};
        cfgs[1].has[OSN_OPT_THROTTLE] = cfgs[1].has[OSN_OPT_DISCARD] = true;
        cfgs[1].has[OSN_OPT_CYCLE] = true;
        cfgs[1].bound[OSN_OPT_THROTTLE] = 0.5;
        cfgs[1].bound[OSN_OPT_DISCARD] = 1e-3;
        cfgs[1].bound[OSN_OPT_CYCLE] = 20;
        cfgs[2].has[OSN_OPT_LOSS] = true;
        cfgs[2].bound[OSN_OPT_LOSS] = 0.2;
        cfgs[3].has[OSN_OPT_DISCARD] = true;
        for (int c = 0; c < 4; c++) {
            long solved = screened_as_plain(&m, &cfgs[c], NULL);
            bool plain_load = screen_loads[k][0] <= 3 && screen_loads[k][1] > 0;
            if (plain_load && c <= 1)
                assert_true(solved >= 1 && solved <= 40);
            if (k == 2 && c == 2)
                assert_int_equal(solved, 100 * 99 / 2); /* gave up: the plain scan ran */
        }
    }
}

/* Records every visited pair's (L, H, T_ret), checking the scan order on the way. */
struct visit_rec {
    struct visit_log log;
    long n;
    long L[2000], H[2000];
    struct osn_xd T[2000];
};

static int rec_visit(const struct osn_opt_pair *p, void *arg)
{
    struct visit_rec *r = arg;
    log_visit(p, &r->log);
    assert_true(r->n < 2000);
    r->L[r->n] = p->L;
    r->H[r->n] = p->H;
    r->T[r->n++] = p->ms->T_ret;
    return 0;
}

static bool same_xd(struct osn_xd a, struct osn_xd b)
{
    return a.m == b.m && a.e == b.e;
}

static void same_point(const struct osn_opt_point *a, const struct osn_opt_point *b)
{
    assert_int_equal(a->found, b->found);
    assert_int_equal(a->L, b->L);
    assert_int_equal(a->H, b->H);
    assert_true(same_xd(a->ms.T_ret, b->ms.T_ret));
}

/*
 * Threads: 1..3 workers give the same answer, the same visits in scan order with the same
 * values, and the brute-force optimum of a plain loop of osn_solve() (R = 50: 1,225 pairs, more
 * than one window of the parallel scan; constant service at R = 30).
 */
static void test_threads(void **state)
{
    static struct visit_rec rec[3];
    static struct ref_grid g;
    (void)state;
    for (int law = 0; law < 2; law++) {
        struct osn_model m = two_loop(1.2, 0.6, 0, 1, law ? 30 : 50);
        if (law) {
            m.service.kind = OSN_LAW_DET;
            m.service.rate = 1;
            osn_model_resolve(&m);
        }
        struct osn_opt_cfg cfg = {0};
        struct osn_opt_result res[3];
        cfg.has[OSN_OPT_THROTTLE] = cfg.has[OSN_OPT_DISCARD] = true;
        cfg.bound[OSN_OPT_THROTTLE] = 0.5;
        cfg.bound[OSN_OPT_DISCARD] = 1e-3;
        for (int t = 0; t < 3; t++) {
            memset(&rec[t], 0, sizeof rec[t]);
            cfg.threads = t + 1;
            assert_int_equal(osn_optimize(&m, &cfg, &res[t], rec_visit, &rec[t], NULL, NULL), 0);
            assert_int_equal(rec[t].n, osn_optimize_pairs(&m));
        }
        for (int t = 1; t < 3; t++) {
            assert_int_equal(res[t].evaluated, res[0].evaluated);
            assert_int_equal(res[t].feasible, res[0].feasible);
            same_point(&res[t].best, &res[0].best);
            same_point(&res[t].next, &res[0].next);
            same_point(&res[t].closest, &res[0].closest);
            same_point(&res[t].free, &res[0].free);
            assert_int_equal(res[t].binding, res[0].binding);
            for (long i = 0; i < rec[0].n; i++) {
                assert_int_equal(rec[t].L[i], rec[0].L[i]);
                assert_int_equal(rec[t].H[i], rec[0].H[i]);
                assert_true(same_xd(rec[t].T[i], rec[0].T[i]));
            }
        }
        /* The brute force: every pair solved on its own, the rules applied to the grid. */
        if (m.R <= 30) {
            ref_solve(&m, OSN_METHOD_GENERAL, &g);
            check_case(&m, &cfg, &g, true);
        } else {
            /* Too many pairs for the reference grid: the smallest feasible T_ret of the loop. */
            long bL = -1, bH = -1;
            struct osn_xd bT = {0, 0};
            for (long H = 1; H < m.R; H++)
                for (long L = 0; L < H; L++) {
                    struct osn_model pm = m;
                    struct osn_measures ms;
                    pm.L = L;
                    pm.H = H;
                    osn_model_resolve(&pm);
                    assert_int_equal(osn_solve(&pm, OSN_METHOD_GENERAL, &ms, NULL, NULL), 0);
                    bool ok = dv(ms.P[1]) + dv(ms.P[2]) <= 0.5 && dv(ms.P[2]) <= 1e-3;
                    if (ok && (bL < 0 || osn_xd_cmp(ms.T_ret, bT) < 0)) {
                        bL = L;
                        bH = H;
                        bT = ms.T_ret;
                    }
                }
            assert_int_equal(res[0].best.L, bL);
            assert_int_equal(res[0].best.H, bH);
            assert_true(same_xd(res[0].best.ms.T_ret, bT));
        }
    }
    struct osn_model m = two_loop(1.2, 0.6, 0, 1, 10);
    struct osn_opt_cfg cfg = {.threads = -1};
    struct osn_opt_result r;
    assert_int_equal(osn_optimize(&m, &cfg, &r, NULL, NULL, NULL, NULL), OSN_EINVAL);
}

/* The models of test_other_models_brute_force at R, plus a two-phase MMPP (i = 5). */
static struct osn_model quantile_model(int i, long R)
{
    struct osn_model m = two_loop(1.2, 0.6, 0, 1, R);
    switch (i) {
    case 0:
        m = two_loop(1.3, 0.7, 0, 1, R);
        m.kind = OSN_KIND_SINGLE_LOOP;
        break;
    case 1:
        m = two_loop(1.1, 0.5, 0, 1, R);
        m.kind = OSN_KIND_BI_LEVEL;
        m.L2 = R / 2;
        m.H2 = R - 1;
        break;
    case 2:
        m.flows = 2;
        m.rate1 = 0.7;
        m.rate2 = 0.6;
        m.rate = 1.3;
        m.overload_rate = 0.7;
        break;
    case 3:
        m.policy = OSN_POLICY_II;
        break;
    default: /* bursts of 2.4/s a third of the time, half accepted in overload */
        m.process = OSN_ARR_MMPP;
        m.mmpp.K = 2;
        m.mmpp.rate[0] = 0.6;
        m.mmpp.rate[1] = 2.4;
        m.mmpp.gen[0][1] = 0.05;
        m.mmpp.gen[1][0] = 0.1;
        for (int k = 0; k < 2; k++) {
            m.mmpp.accept[0][k] = 1;
            m.mmpp.accept[1][k] = 0.5;
        }
        m.rate = osn_mmpp_mean_rate(&m.mmpp, 0);
        m.overload_rate = osn_mmpp_mean_rate(&m.mmpp, 1);
        break;
    }
    osn_model_resolve(&m);
    return m;
}

/*
 * The quantile objectives against brute force: every pair's distribution computed by the
 * reference, the pairs ranked by its p95 or p99, and the documented rules applied under every
 * subset of the constraints; the optimum's quantile must be the reference's to the bit. Two-loop
 * at R = 6, 9, 12 from light to heavy load, then the other models at R = 9. The objective must
 * matter: in some of these cases the p99's optimum is not the mean's (else this test could not
 * tell an optimiser that ignores the objective).
 */
static void test_quantile_brute_force(void **state)
{
    static const double loads[] = {0.5, 0.9, 1.2, 2.0}, probs[] = {0.95, 0.99};
    static struct ref_grid g;
    int differ = 0;
    (void)state;
    for (long R = 6; R <= 12; R += 3)
        for (size_t k = 0; k < sizeof loads / sizeof loads[0]; k++)
            for (int o = OSN_OPT_T_RET_P95; o <= OSN_OPT_T_RET_P99; o++) {
                struct osn_model m = two_loop(loads[k], loads[k] / 2, 0, 1, R);
                ref_solve(&m, OSN_METHOD_GENERAL, &g);
                ref_quantiles(&m, &g, probs[o - 1]);
                all_subsets_obj(&m, &g, 0.5, true, (enum osn_opt_objective)o);
                /* Under a discard and a cycle bound, does this objective move the optimum? */
                struct osn_opt_cfg cfg = {0};
                struct osn_opt_result mean, q;
                cfg.has[OSN_OPT_DISCARD] = cfg.has[OSN_OPT_CYCLE] = true;
                cfg.bound[OSN_OPT_DISCARD] = quantile(&g, OSN_OPT_DISCARD, 0.5, false);
                cfg.bound[OSN_OPT_CYCLE] = quantile(&g, OSN_OPT_CYCLE, 0.5, false);
                assert_int_equal(osn_optimize(&m, &cfg, &mean, NULL, NULL, NULL, NULL), 0);
                cfg.objective = (enum osn_opt_objective)o;
                assert_int_equal(osn_optimize(&m, &cfg, &q, NULL, NULL, NULL, NULL), 0);
                differ += mean.best.L != q.best.L || mean.best.H != q.best.H;
            }
    print_message("quantile objectives: %d of 24 two-loop cases move the optimum\n", differ);
    assert_true(differ > 0);
    for (int i = 0; i < 5; i++) {
        struct osn_model m = quantile_model(i, 9);
        assert_int_equal(osn_model_check(&m, NULL, NULL, 0), 0);
        ref_solve(&m, OSN_METHOD_GENERAL, &g);
        ref_quantiles(&m, &g, 0.99);
        all_subsets_obj(&m, &g, 0.5, true, OSN_OPT_T_RET_P99);
    }
}

static int count_quantiles(const struct osn_opt_pair *p, void *arg)
{
    assert_true(p->ms->have_tret_q);
    assert_true(osn_xd_cmp(p->ms->T_ret_q[2], p->ms->T_ret_q[3]) <= 0); /* p95 <= p99 */
    ++*(long *)arg;
    return 0;
}

/* The objective's API: names, values, refusals, every visited pair's quantiles, threads. */
static void test_quantile_api(void **state)
{
    struct osn_model m = two_loop(1.2, 0.6, 0, 1, 20);
    struct osn_opt_cfg cfg = {.objective = OSN_OPT_T_RET_P95};
    struct osn_opt_result res, r3;
    struct osn_measures ms = {0};
    long visits = 0;
    char why[512];
    (void)state;
    assert_string_equal(osn_opt_objective_name(OSN_OPT_T_RET), "T_ret");
    assert_string_equal(osn_opt_objective_name(OSN_OPT_T_RET_P95), "T_ret_p95");
    assert_string_equal(osn_opt_objective_name(OSN_OPT_T_RET_P99), "T_ret_p99");
    assert_string_equal(osn_opt_objective_name(OSN_OPT_NOBJ), "?");
    assert_true(isnan(osn_opt_objective_value(OSN_OPT_T_RET_P99, &ms).m)); /* not computed */

    cfg.has[OSN_OPT_DISCARD] = true;
    cfg.bound[OSN_OPT_DISCARD] = 1e-3;
    assert_int_equal(osn_optimize(&m, &cfg, &res, count_quantiles, &visits, NULL, NULL), 0);
    assert_int_equal(visits, 190);
    assert_int_equal(res.solved, 190); /* no screen for a quantile */
    assert_true(res.best.ms.have_tret_q && res.next.ms.have_tret_q && res.free.ms.have_tret_q);
    cfg.threads = 3;
    assert_int_equal(osn_optimize(&m, &cfg, &r3, NULL, NULL, NULL, NULL), 0);
    same_answer(&res, &r3);
    assert_true(same_bits(res.best.ms.T_ret_q[2], r3.best.ms.T_ret_q[2]));

    cfg.objective = OSN_OPT_NOBJ;
    assert_int_equal(osn_optimize(&m, &cfg, &res, NULL, NULL, NULL, NULL), OSN_EINVAL);
    cfg.objective = OSN_OPT_T_RET_P99;
    m.service.kind = OSN_LAW_DET;
    m.service.rate = 1;
    osn_model_resolve(&m);
    assert_null(osn_solve_unsupported(&m, OSN_METHOD_GENERAL)); /* the mean is fine, */
    assert_int_equal(osn_optimize(&m, &cfg, &res, NULL, NULL, NULL, NULL), OSN_ENOTSUP);

    /* What the command says when one pair's distribution is out of reach. */
    memset(&res, 0, sizeof res);
    res.failed.found = true;
    res.failed.L = 3;
    res.failed.H = 7;
    osn_opt_failure_text(OSN_ETOOBIG, &cfg, &res, why, sizeof why);
    assert_non_null(strstr(why, "(3, 7)"));
    assert_non_null(strstr(why, "out of reach"));
    assert_non_null(strstr(why, "T_ret_p99"));
    cfg.objective = OSN_OPT_T_RET;
    osn_opt_failure_text(OSN_ENOMEM, &cfg, &res, why, sizeof why);
    assert_non_null(strstr(why, "(3, 7)"));
}

/* Writes text to a temporary scenario file; returns its path (static buffer). */
static const char *scenario_file(const char *text)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/osn_test_optimize_%ld.ini", (long)getpid());
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

/* The [optimize] section: values, overrides, errors naming FILE:LINE and the key. */
static void test_scenario_section(void **state)
{
    static struct osn_scenario sc;
    struct osn_opt_cfg cfg;
    char err[512];
    const char *path = scenario_file("[thresholds]\nL = 0\nH = 1\nR = 12\n[optimize]\n"
                                     "objective = t_ret\nmax_discard = 1e-3\nmin_cycle = 20\n");
    const char *sets[] = {"optimize.max_loss=0.25"};
    (void)state;
    assert_int_equal(osn_scenario_load(&sc, path, sets, 1, &osn_optimize_schema, err, sizeof err),
                     0);
    assert_int_equal(osn_optimize_cfg_load(&cfg, &sc.ini, err, sizeof err), 0);
    assert_true(cfg.has[OSN_OPT_DISCARD] && cfg.bound[OSN_OPT_DISCARD] == 1e-3);
    assert_true(cfg.has[OSN_OPT_CYCLE] && cfg.bound[OSN_OPT_CYCLE] == 20);
    assert_true(cfg.has[OSN_OPT_LOSS] && cfg.bound[OSN_OPT_LOSS] == 0.25);
    assert_false(cfg.has[OSN_OPT_THROTTLE]);
    osn_scenario_release(&sc);

    path = scenario_file("[optimize]\nmax_throttle = -0.5\n");
    assert_int_equal(osn_scenario_load(&sc, path, NULL, 0, &osn_optimize_schema, err, sizeof err),
                     0);
    assert_int_equal(osn_optimize_cfg_load(&cfg, &sc.ini, err, sizeof err), OSN_ECONFIG);
    assert_non_null(strstr(err, ":2:"));
    assert_non_null(strstr(err, "optimize.max_throttle"));
    osn_scenario_release(&sc);

    path = scenario_file("[optimize]\nobjective = T_cyc\n");
    assert_int_equal(osn_scenario_load(&sc, path, NULL, 0, &osn_optimize_schema, err, sizeof err),
                     0);
    assert_int_equal(osn_optimize_cfg_load(&cfg, &sc.ini, err, sizeof err), OSN_ECONFIG);
    assert_non_null(strstr(err, "optimize.objective"));
    osn_scenario_release(&sc);

    /* The objective: each name in any case, a name it does not know refused with the key. */
    path = scenario_file("[optimize]\nobjective = t_ret_P99\n");
    assert_int_equal(osn_scenario_load(&sc, path, NULL, 0, &osn_optimize_schema, err, sizeof err),
                     0);
    assert_int_equal(osn_optimize_cfg_load(&cfg, &sc.ini, err, sizeof err), 0);
    assert_int_equal(cfg.objective, OSN_OPT_T_RET_P99);
    osn_scenario_release(&sc);
    const char *p95[] = {"optimize.objective=T_ret_p95"};
    assert_int_equal(osn_scenario_load(&sc, NULL, p95, 1, &osn_optimize_schema, err, sizeof err),
                     0);
    assert_int_equal(osn_optimize_cfg_load(&cfg, &sc.ini, err, sizeof err), 0);
    assert_int_equal(cfg.objective, OSN_OPT_T_RET_P95);
    osn_scenario_release(&sc);
    path = scenario_file("[optimize]\nobjective = T_ret_p90\n");
    assert_int_equal(osn_scenario_load(&sc, path, NULL, 0, &osn_optimize_schema, err, sizeof err),
                     0);
    assert_int_equal(osn_optimize_cfg_load(&cfg, &sc.ini, err, sizeof err), OSN_ECONFIG);
    assert_non_null(strstr(err, ":2:"));
    assert_non_null(strstr(err, "optimize.objective"));
    osn_scenario_release(&sc);
    /* A quantile without exponential service: refused at load, naming the objective's line. */
    path = scenario_file("[thresholds]\nR = 10\n[service]\nlaw = det\n[optimize]\n"
                         "objective = T_ret_p95\n");
    int rc = osn_optimize_scenario_load(&sc, &cfg, path, NULL, 0, false, NULL, err, sizeof err);
    osn_scenario_release(&sc);
    assert_int_equal(rc, OSN_ECONFIG); /* the general solver takes constant service: the mean */
    assert_non_null(strstr(err, ":6:"));
    assert_non_null(strstr(err, "optimize.objective"));
    assert_non_null(strstr(err, "exponential service"));

    path = scenario_file("[optimize]\nmax_los = 0.1\n");
    assert_int_equal(osn_scenario_load(&sc, path, NULL, 0, &osn_optimize_schema, err, sizeof err),
                     OSN_ECONFIG);
    assert_non_null(strstr(err, ":2:"));
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_two_loop_brute_force),
            cmocka_unit_test(test_other_models_brute_force),
            cmocka_unit_test(test_infeasible),
            cmocka_unit_test(test_drift_to_r_minus_1),
            cmocka_unit_test(test_extended_range),
            cmocka_unit_test(test_api),
            cmocka_unit_test(test_threads),
            cmocka_unit_test(test_screen_closed_forms),
            cmocka_unit_test(test_screen_as_plain),
            cmocka_unit_test(test_scenario_section),
            cmocka_unit_test(test_quantile_brute_force),
            cmocka_unit_test(test_quantile_api),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
