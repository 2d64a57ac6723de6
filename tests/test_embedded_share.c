/*
 * The embedded chain's shared elimination (src/model/emb_band.c): a solve that takes the rows
 * above L + 1 from an earlier solve's elimination must give the bits of a solve from scratch.
 *
 * The reference is osn_solve() with no cache, which shares nothing. Compared bit for bit: every
 * measure of every pair of whole optimiser scans (osn_optimize, one and two threads) for
 * constant, Erlang, hyperexponential and lognormal service, policy I and II, two-loop,
 * single-loop, bi-level and two flows; the scan's optimum against the brute-force optimum of the
 * plain solves; and solves in a scrambled order through one cache, mixing pairs of different H,
 * other loads, another R and another law, so that the shared rows are offered to models they
 * must not (or only partly) fit. Each case also checks that rows were in fact shared.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "emb_band.h"
#include "osn/optimize.h"
#include "testutil.h"

/* Bit for bit, NaN (T_disc without discard) included. */
static void same_bits(struct osn_xd a, struct osn_xd b, const char *what, long L, long H)
{
    if (memcmp(&a, &b, sizeof a) != 0)
        fail_msg("%s differs at L=%ld H=%ld: %.17g*2^%lld vs %.17g*2^%lld", what, L, H, a.m,
                 (long long)a.e, b.m, (long long)b.e);
}

static void same_measures(const struct osn_measures *a, const struct osn_measures *b, long L,
                          long H)
{
#define SAME(f) same_bits(a->f, b->f, #f, L, H)
    SAME(P[0]);
    SAME(P[1]);
    SAME(P[2]);
    SAME(p00);
    SAME(N_mean);
    SAME(throughput);
    SAME(sojourn);
    SAME(T_ret);
    SAME(T_ret_sd);
    SAME(T_ret_renewal);
    SAME(T_cyc);
    SAME(T_norm);
    SAME(T_disc);
    SAME(nu01);
    SAME(nu12);
    SAME(mode_change_rate);
    SAME(theta);
    SAME(loss_flow1);
    SAME(loss_flow2);
    SAME(prob_sum);
#undef SAME
    assert_int_equal(a->states, b->states);
    assert_int_equal(a->method, b->method);
}

static struct osn_model with_pair(const struct osn_model *base, long L, long H)
{
    struct osn_model m = *base;
    osn_optimize_set_pair(&m, L, H);
    return m;
}

/* Every visited pair of a scan. */
struct scan {
    long n, cap;
    long *L, *H;
    struct osn_measures *ms;
};

static int record(const struct osn_opt_pair *p, void *arg)
{
    struct scan *s = arg;
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 256;
        s->L = realloc(s->L, (size_t)s->cap * sizeof *s->L);
        s->H = realloc(s->H, (size_t)s->cap * sizeof *s->H);
        s->ms = realloc(s->ms, (size_t)s->cap * sizeof *s->ms);
        assert_true(s->L && s->H && s->ms);
    }
    s->L[s->n] = p->L;
    s->H[s->n] = p->H;
    s->ms[s->n++] = *p->ms;
    return 0;
}

static void scan_free(struct scan *s)
{
    free(s->L);
    free(s->H);
    free(s->ms);
    memset(s, 0, sizeof *s);
}

static struct osn_model law(struct osn_model m, enum osn_law_kind kind)
{
    m.service.kind = kind;
    m.service.rate = m.mu;
    if (kind == OSN_LAW_ERLANG)
        m.service.k = 2;
    if (kind == OSN_LAW_HYPEREXP) { /* mean 1, cv^2 about 2.6 */
        m.service.nbranch = 2;
        m.service.probs[0] = 0.8;
        m.service.probs[1] = 0.2;
        m.service.rates[0] = 2;
        m.service.rates[1] = 1.0 / 3;
    }
    if (kind == OSN_LAW_LOGNORMAL)
        m.service.cv = 0.5;
    osn_model_resolve(&m);
    return m;
}

/* The cases: (model, description). */
static int cases(struct osn_model *ms, const char **name)
{
    int n = 0;
    name[n] = "two-loop, policy I, constant, R = 30";
    ms[n++] = law(two_loop(1.2, 0.6, 0, 1, 30), OSN_LAW_DET);
    name[n] = "two-loop, policy II, constant, R = 20";
    ms[n] = two_loop(1.2, 0.6, 0, 1, 20);
    ms[n].policy = OSN_POLICY_II;
    ms[n] = law(ms[n], OSN_LAW_DET);
    n++;
    name[n] = "two-loop, policy I, Erlang-2, R = 20";
    ms[n++] = law(two_loop(0.9, 0.5, 0, 1, 20), OSN_LAW_ERLANG);
    name[n] = "single-loop, hyperexponential, R = 16";
    ms[n] = two_loop(1.1, 0.7, 0, 1, 16);
    ms[n].kind = OSN_KIND_SINGLE_LOOP;
    ms[n] = law(ms[n], OSN_LAW_HYPEREXP);
    n++;
    name[n] = "bi-level, constant, R = 20, L2 = 10, H2 = 19";
    ms[n] = two_loop(1.1, 0.5, 0, 1, 20);
    ms[n].kind = OSN_KIND_BI_LEVEL;
    ms[n].L2 = 10;
    ms[n].H2 = 19;
    ms[n] = law(ms[n], OSN_LAW_DET);
    n++;
    name[n] = "bi-level, policy II, Erlang-2, R = 18, L2 = 8, H2 = 17";
    ms[n] = two_loop(1.3, 0.6, 0, 1, 18);
    ms[n].kind = OSN_KIND_BI_LEVEL;
    ms[n].policy = OSN_POLICY_II;
    ms[n].L2 = 8;
    ms[n].H2 = 17;
    ms[n] = law(ms[n], OSN_LAW_ERLANG);
    n++;
    name[n] = "two flows, lognormal, R = 16";
    ms[n] = two_loop(1.3, 0.7, 0, 1, 16);
    ms[n].flows = 2;
    ms[n].rate1 = 0.7;
    ms[n].rate2 = 0.6;
    ms[n] = law(ms[n], OSN_LAW_LOGNORMAL);
    n++;
    return n;
}

static bool feasible(const struct osn_measures *ms)
{
    return osn_xd_cmp(osn_xd_add(ms->P[1], ms->P[2]), osn_xd(0.5)) <= 0 &&
           osn_xd_cmp(ms->P[2], osn_xd(1e-3)) <= 0;
}

/*
 * Whole scans: every pair's measures equal the plain solve's to the bit, on one and on two
 * threads, and the optimum is the brute-force optimum of the plain solves.
 */
static void test_scan_is_plain_solve(void **state)
{
    (void)state;
    struct osn_model ms[8];
    const char *name[8];
    int n = cases(ms, name);
    for (int c = 0; c < n; c++) {
        const struct osn_model *m = &ms[c];
        assert_null(osn_solve_unsupported(m, OSN_METHOD_GENERAL));
        struct osn_opt_cfg cfg = {0};
        cfg.has[OSN_OPT_THROTTLE] = cfg.has[OSN_OPT_DISCARD] = true;
        cfg.bound[OSN_OPT_THROTTLE] = 0.5;
        cfg.bound[OSN_OPT_DISCARD] = 1e-3;
        for (int threads = 1; threads <= 2; threads++) {
            struct scan sc = {0};
            struct osn_opt_result res;
            cfg.threads = threads;
            print_message("%s, %d thread(s)\n", name[c], threads);
            assert_int_equal(osn_optimize(m, &cfg, &res, record, &sc, NULL, NULL), 0);
            assert_int_equal(sc.n, res.evaluated);
            long bL = -1, bH = -1;
            struct osn_xd bT = {0, 0};
            for (long i = 0; i < sc.n; i++) {
                struct osn_model pm = with_pair(m, sc.L[i], sc.H[i]);
                struct osn_measures plain;
                assert_int_equal(osn_solve(&pm, OSN_METHOD_GENERAL, &plain, NULL, NULL), 0);
                same_measures(&sc.ms[i], &plain, sc.L[i], sc.H[i]);
                if (feasible(&plain) && (bL < 0 || osn_xd_cmp(plain.T_ret, bT) < 0)) {
                    bL = sc.L[i];
                    bH = sc.H[i];
                    bT = plain.T_ret;
                }
            }
            assert_true(res.best.found == (bL >= 0));
            if (bL >= 0) {
                assert_int_equal(res.best.L, bL);
                assert_int_equal(res.best.H, bH);
                same_bits(res.best.ms.T_ret, bT, "best T_ret", bL, bH);
            }
            scan_free(&sc);
        }
    }
}

/* Solves m through cache c and compares with the plain solve; the pair's check decides. */
static void cached_vs_plain(const struct osn_model *m, struct osn_solve_cache *c)
{
    if (osn_model_check(m, NULL, NULL, 0) != 0)
        return;
    struct osn_measures a, b;
    assert_int_equal(osn_solve_cached(m, OSN_METHOD_GENERAL, &a, NULL, NULL, c), 0);
    assert_int_equal(osn_solve(m, OSN_METHOD_GENERAL, &b, NULL, NULL), 0);
    same_measures(&a, &b, m->kind == OSN_KIND_BI_LEVEL ? m->L1 : m->L,
                  m->kind == OSN_KIND_BI_LEVEL ? m->H1 : m->H);
}

static long rows_shared_share(struct osn_solve_cache *c, double *share)
{
    long seen, shared;
    osn__emb_shared_stats(*osn__cache_emb_shared(c), &seen, &shared);
    *share = seen ? (double)shared / (double)seen : 0;
    return shared;
}

/*
 * One cache for all, in the scan order first (most rows shared), then scrambled among pairs of
 * every H and other models: different loads, R, policy, law, kind. The shared rows then fit a
 * model partly or not at all; the bits must stay those of the plain solve.
 */
static void test_any_order_through_one_cache(void **state)
{
    (void)state;
    struct osn_model ms[8];
    const char *name[8];
    int n = cases(ms, name);
    struct osn_solve_cache *c;
    double share;

    assert_int_equal(osn_solve_cache_new(&c), 0);
    for (long H = 1; H < ms[0].R; H++) /* the scan order of case 0 */
        for (long L = 0; L < H; L++) {
            struct osn_model pm = with_pair(&ms[0], L, H);
            cached_vs_plain(&pm, c);
        }
    assert_true(rows_shared_share(c, &share) > 0);
    print_message("scan order: %.0f%% of the rows shared\n", 100 * share);
    assert_true(share > 0.5);
    osn_solve_cache_free(c);

    /* A deterministic scramble (an LCG), with other loads and R for case 0's law. */
    assert_int_equal(osn_solve_cache_new(&c), 0);
    uint64_t x = 12345;
    for (int i = 0; i < 600; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        uint64_t r = x >> 33;
        struct osn_model base = ms[r % (uint64_t)n];
        if ((r >> 8) % 5 == 0) { /* another load or R, same law */
            base.rate *= 1.25;
            base.R += (long)((r >> 12) % 3);
            if (base.kind == OSN_KIND_BI_LEVEL)
                base.H2 = base.R - 1;
            osn_model_resolve(&base);
        }
        long top = base.kind == OSN_KIND_BI_LEVEL ? base.H2 : base.R;
        long H = 1 + (long)((r >> 16) % (uint64_t)(top - 1));
        long L = (long)((r >> 24) % (uint64_t)H);
        /* Runs of pairs of one H, as a scan has, so that rows are shared. */
        for (long k = 0; k < 4 && L + k < H; k++) {
            struct osn_model pm = with_pair(&base, L + k, H);
            cached_vs_plain(&pm, c);
        }
    }
    assert_true(rows_shared_share(c, &share) > 0);
    print_message("scrambled: %.0f%% of the rows shared\n", 100 * share);
    osn_solve_cache_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_scan_is_plain_solve),
            cmocka_unit_test(test_any_order_through_one_cache),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
