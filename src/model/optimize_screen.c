/*
 * The screened scan: osn optimize's answer for the one-flow two-loop M|M|1 model without a full
 * solve per pair.
 *
 * The plain scan (optimize.c) solves all R^2/2 pairs, O(R) each. Here mm1_pairs.c gives every
 * pair's T_ret and constraint values in O(1), each within a relative MARGIN of the full
 * solver's. The screen uses them only where that margin cannot change a decision, and solves
 * the rest in full, so the answer is the plain scan's by construction:
 *   - a constraint holds or fails on the screen's value when the value is more than 3 MARGIN
 *     (relative) from its bound; otherwise the pair is solved;
 *   - the optimum, the unconstrained optimum, the closest and the next-better pair are chosen
 *     among candidates whose screened value is within 3 MARGIN of the screened extreme, and the
 *     candidates are solved and compared exactly as the plain scan compares them (its own
 *     functions, optimize_int.h), in scan order, so ties break the same way.
 * A pair outside the candidates cannot win: its true value is beyond some candidate's.
 *
 * The margin is an assumption about two computations' rounding (about 1e-13 at R = 1000 for
 * both; tests/test_optimize.c measures it over whole grids), so it is also checked at run time:
 * every pair solved in full is compared with its screened values, and if any differs by more
 * than MARGIN, or if more pairs need a full solve than a sixteenth of the plain scan's (a flat
 * objective, an infinite violation everywhere), the screen gives up and the plain scan runs.
 *
 * The passes go over the grid up to four times, recomputing the O(1) values rather than storing
 * R^2/2 of them, so memory stays O(R) and R = 10^4 (5 x 10^7 pairs) fits. The screen runs on
 * one thread: at R = 1000 it takes a fraction of a second, less than starting threads would save
 * (bench_optimize). Under MPI every rank runs it whole; only rank 0 writes.
 */
#include "model_int.h"
#include "optimize_int.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "osn/err.h"

typedef struct osn_xd xd;

#define MARGIN 1e-9

/* Full solves allowed before the screen gives up: a sixteenth of the plain scan's, at least
 * SOLVES_MIN, at most SOLVES_MAX (each keeps a pair's measures, about 700 bytes). */
#define SOLVES_MIN 4096
#define SOLVES_MAX 65536

/* A pair solved in full: its measures and its exact judgement. */
struct solved {
    long L, H;
    bool feasible;
    double total, viol[OSN_OPT_NCON];
    struct osn_measures ms;
};

struct screen {
    const struct osn_opt_cfg *cfg;
    struct osn__mm1_pairs *tab;
    struct osn_model pm; /* the pair's model, for full solves */
    long R;
    struct solved *done; /* every pair solved in full so far, in the order solved */
    long ndone, cap, budget;
    int32_t *slot;   /* open-addressing index of done by pair: index + 1, 0 for empty */
    size_t nslot;    /* a power of two, at least twice the budget */
    bool unreliable; /* a full solve disagreed with the screen by more than MARGIN */
    bool over;       /* a pair needed a full solve past the budget */
    int rc;          /* first solver error */
};

enum verdict { HOLDS, FAILS, UNSURE };

/* a/b as a double (b != 0); +inf or 0 when the ratio leaves the double range. */
static double ratio(xd a, xd b)
{
    return osn_xd_to_double(osn_xd_div(a, b));
}

/* Whether screened value f and full value g agree within MARGIN (relative). */
static bool agree(xd f, xd g)
{
    if (osn_xd_is_zero(g) || osn_xd_is_zero(f))
        return osn_xd_is_zero(f) && osn_xd_is_zero(g);
    if (!isfinite(f.m) || !isfinite(g.m))
        return false;
    return fabs(ratio(f, g) - 1) <= MARGIN;
}

static xd scaled(xd a, double factor)
{
    return osn_xd_muld(a, factor);
}

/* The screened pair's measures in the fields the constraints and the objective read. */
static void screened_measures(const struct osn__mm1_pair *v, struct osn_measures *ms)
{
    memset(ms, 0, sizeof *ms);
    ms->P[1] = v->P1;
    ms->P[2] = v->P2;
    ms->theta = v->theta;
    ms->T_cyc = v->T_cyc;
    ms->T_ret = v->T_ret;
}

/* Whether constraint c holds at screened value f, by more than the margin either way. */
static enum verdict judge(enum osn_opt_con c, xd f, double bound)
{
    if (!isfinite(f.m) || f.m < 0)
        return UNSURE;
    if (bound == 0) {
        /* T_cyc >= 0 always. A screened 0 is structural, not rounding: only P2 with
         * lambda' = 0 (discard unreachable) is 0, and the full solver gives 0 there too. */
        if (c == OSN_OPT_CYCLE || osn_xd_is_zero(f))
            return HOLDS;
        return FAILS;
    }
    double r = ratio(f, osn_xd(bound));
    bool upper = c != OSN_OPT_CYCLE;
    if (r <= 1 - 3 * MARGIN)
        return upper ? HOLDS : FAILS;
    if (r >= 1 + 3 * MARGIN)
        return upper ? FAILS : HOLDS;
    return UNSURE;
}

static enum verdict judge_pair(const struct osn_opt_cfg *cfg, const struct osn_measures *f)
{
    enum verdict all = HOLDS;
    for (int c = 0; c < OSN_OPT_NCON; c++) {
        if (!cfg->has[c])
            continue;
        enum verdict v = judge((enum osn_opt_con)c, osn_opt_con_value((enum osn_opt_con)c, f),
                               cfg->bound[c]);
        if (v == FAILS)
            return FAILS;
        if (v == UNSURE)
            all = UNSURE;
    }
    return all;
}

/* Where pair (L, H) is, or would go, in the index. */
static size_t slot_of(const struct screen *s, long L, long H)
{
    uint64_t key = (uint64_t)H * (uint64_t)s->R + (uint64_t)L;
    size_t i = (size_t)((key * 0x9e3779b97f4a7c15ULL) >> 17) & (s->nslot - 1);
    while (s->slot[i] && (s->done[s->slot[i] - 1].L != L || s->done[s->slot[i] - 1].H != H))
        i = (i + 1) & (s->nslot - 1);
    return i;
}

/* The pair solved in full (once: later calls find it): its index in done, or -1 on a solver
 * error or past the budget. */
static long solve_full(struct screen *s, long L, long H, const struct osn_measures *f)
{
    size_t at = slot_of(s, L, H);
    if (s->slot[at])
        return s->slot[at] - 1;
    if (s->rc)
        return -1;
    if (s->ndone == s->budget) {
        s->over = true;
        return -1;
    }
    if (s->ndone == s->cap) {
        long cap = s->cap ? 2 * s->cap : 64;
        struct solved *more = realloc(s->done, (size_t)cap * sizeof *more);
        if (!more) {
            s->rc = OSN_ENOMEM;
            return -1;
        }
        s->done = more;
        s->cap = cap;
    }
    struct solved *d = &s->done[s->ndone];
    osn_optimize_set_pair(&s->pm, L, H);
    if ((s->rc = osn_solve(&s->pm, OSN_METHOD_GENERAL, &d->ms, NULL, NULL)))
        return -1;
    d->L = L;
    d->H = H;
    d->feasible = osn__opt_assess(s->cfg, &d->ms, d->viol, &d->total);
    s->slot[at] = (int32_t)++s->ndone;
    /* The run-time check of the margin, on every value the screen decides with. */
    bool ok = agree(f->T_ret, d->ms.T_ret);
    for (int c = 0; c < OSN_OPT_NCON; c++)
        if (s->cfg->has[c])
            ok = ok && agree(osn_opt_con_value((enum osn_opt_con)c, f),
                             osn_opt_con_value((enum osn_opt_con)c, &d->ms));
    if (!ok)
        s->unreliable = true;
    return s->ndone - 1;
}

/*
 * Screened measures of pair (L, H). No osn_model_check() per pair (it asks the kernel for the
 * machine's memory each time): in a two-loop scan 0 <= L < H < R holds by construction and the
 * rates and the memory bound do not depend on the pair, so every pair passes if one does, and
 * osn__optimize_screened() checks one.
 */
static void screen_pair(struct screen *s, long L, long H, struct osn_measures *f)
{
    struct osn__mm1_pair v;
    osn__mm1_pairs_eval(s->tab, L, H, &v);
    screened_measures(&v, f);
}

/* Whether the screen can go on: no error, no disagreement, solves within the budget. */
static bool usable(const struct screen *s)
{
    return !s->rc && !s->unreliable && !s->over;
}

#define FOR_EACH_PAIR(R, L, H)     \
    for (long H = 1; H < (R); H++) \
        for (long L = 0; L < H; L++)

/* xd minimum that treats "none yet" (found false) as +infinity. */
static void take_min(xd *m, bool *found, xd v)
{
    if (!*found || osn_xd_cmp(v, *m) < 0)
        *m = v;
    *found = true;
}

struct extremes {
    xd T_feas, T_all; /* smallest T_ret among feasible pairs, among all */
    bool have_feas, have_all;
    double total_min; /* smallest total violation */
};

/* Pass 1: counts, feasibility (solving the pairs the screen cannot judge) and the extremes. */
static void pass_counts(struct screen *s, long R, struct osn_opt_result *res, struct extremes *x,
                        osn_opt_progress_fn progress, void *progress_arg)
{
    struct osn_measures f;
    double viol[OSN_OPT_NCON], total;
    long done = 0, npairs = R * (R - 1) / 2;
    x->have_feas = x->have_all = false;
    x->total_min = INFINITY;
    FOR_EACH_PAIR(R, L, H)
    {
        if (progress)
            progress(++done, npairs, progress_arg);
        screen_pair(s, L, H, &f);
        res->evaluated++;
        enum verdict v = judge_pair(s->cfg, &f);
        xd T = f.T_ret;
        bool ok = v == HOLDS;
        osn__opt_assess(s->cfg, &f, viol, &total);
        if (v == UNSURE) {
            long i = solve_full(s, L, H, &f);
            if (i < 0)
                return;
            const struct solved *d = &s->done[i];
            ok = d->feasible;
            T = d->ms.T_ret;
            total = d->total;
        }
        if (ok) {
            res->feasible++;
            take_min(&x->T_feas, &x->have_feas, T);
            total = 0;
        }
        take_min(&x->T_all, &x->have_all, T);
        if (total < x->total_min)
            x->total_min = total;
    }
}

/* Whether v is within the candidates' band above the smallest value lo. */
static bool near_min(xd v, xd lo)
{
    return osn_xd_cmp(v, scaled(lo, 1 + 3 * MARGIN)) <= 0;
}

/* Pass 2: the optimum, the unconstrained optimum and (no feasible pair) the closest, each
 * chosen by the plain scan's rules among its candidates, solved in full, in scan order. */
static void pass_best(struct screen *s, long R, struct osn_opt_result *res,
                      const struct extremes *x)
{
    struct osn_measures f;
    double viol[OSN_OPT_NCON], total;
    FOR_EACH_PAIR(R, L, H)
    {
        if (!usable(s))
            return;
        screen_pair(s, L, H, &f);
        bool cand_free = near_min(f.T_ret, x->T_all);
        bool cand_best =
                x->have_feas && judge_pair(s->cfg, &f) != FAILS && near_min(f.T_ret, x->T_feas);
        bool cand_closest = false;
        if (!x->have_feas) {
            /* Each violation's error is about 2 MARGIN (violation + 1): see the file's top. */
            osn__opt_assess(s->cfg, &f, viol, &total);
            cand_closest =
                    total <= x->total_min + 4 * MARGIN * (total + x->total_min + 2 * OSN_OPT_NCON);
        }
        if (!cand_free && !cand_best && !cand_closest)
            continue;
        long i = solve_full(s, L, H, &f);
        if (i < 0)
            return;
        const struct solved *d = &s->done[i];
        if (cand_free && osn__opt_better(s->cfg->objective, &d->ms, &res->free))
            osn__opt_keep(&res->free, L, H, d->total, d->viol, &d->ms);
        if (cand_best && d->feasible && osn__opt_better(s->cfg->objective, &d->ms, &res->best))
            osn__opt_keep(&res->best, L, H, d->total, d->viol, &d->ms);
        if (cand_closest && (!res->closest.found || d->total < res->closest.violation ||
                             (d->total == res->closest.violation &&
                              osn__opt_better(s->cfg->objective, &d->ms, &res->closest))))
            osn__opt_keep(&res->closest, L, H, d->total, d->viol, &d->ms);
    }
    if (res->best.found)
        res->closest = res->best; /* feasible pairs have violation 0, the others more */
}

/*
 * T_ret of a pair for the next-better search, exact where it matters: a screened value within
 * the band of best is replaced by the full one. *below says whether it is below best.
 */
static bool next_value(struct screen *s, long L, long H, const struct osn_measures *f, xd best,
                       xd *T, bool *below)
{
    *T = f->T_ret;
    if (osn_xd_cmp(*T, scaled(best, 1 - 3 * MARGIN)) >= 0 &&
        osn_xd_cmp(*T, scaled(best, 1 + 3 * MARGIN)) <= 0) {
        long i = solve_full(s, L, H, f);
        if (i < 0)
            return false;
        *T = s->done[i].ms.T_ret;
    }
    *below = osn_xd_cmp(*T, best) < 0;
    return true;
}

/* Passes 3 and 4: the next-better pair (the largest T_ret below the optimum's), as the plain
 * scan's find_next() picks it: strictly larger wins, so the first of equal ones stays. Returns
 * its index in done, or -1 (none, or the screen gave up: see usable()). */
static long pass_next(struct screen *s, long R, xd best)
{
    struct osn_measures f;
    xd T, top = {0};
    bool below, have = false;
    FOR_EACH_PAIR(R, L, H)
    {
        screen_pair(s, L, H, &f);
        if (!next_value(s, L, H, &f, best, &T, &below))
            return -1;
        if (below && (!have || osn_xd_cmp(T, top) > 0)) {
            top = T;
            have = true;
        }
    }
    if (!have)
        return -1;
    long next = -1;
    FOR_EACH_PAIR(R, L, H)
    {
        screen_pair(s, L, H, &f);
        if (!next_value(s, L, H, &f, best, &T, &below))
            return -1;
        if (!below || osn_xd_cmp(T, scaled(top, 1 - 3 * MARGIN)) < 0)
            continue;
        long i = solve_full(s, L, H, &f);
        if (i < 0)
            return -1;
        const struct osn_measures *ms = &s->done[i].ms;
        if (osn_xd_cmp(ms->T_ret, best) < 0 &&
            (next < 0 || osn_xd_cmp(ms->T_ret, s->done[next].ms.T_ret) > 0))
            next = i;
    }
    return next;
}

int osn__optimize_screened(const struct osn_model *m, const struct osn_opt_cfg *cfg,
                           struct osn_opt_result *res, osn_opt_progress_fn progress,
                           void *progress_arg)
{
    struct screen s = {.cfg = cfg, .pm = *m, .R = m->R};
    struct extremes x;
    long R = m->R, npairs = osn_optimize_pairs(m);
    osn_optimize_set_pair(&s.pm, 0, 1);
    if (osn_model_check(&s.pm, NULL, NULL, 0) != 0)
        return OSN__SCREEN_DECLINED; /* the plain scan counts the rejected pairs */
    s.budget = npairs / 16 < SOLVES_MIN   ? SOLVES_MIN
               : npairs / 16 > SOLVES_MAX ? SOLVES_MAX
                                          : npairs / 16;
    for (s.nslot = 1; s.nslot < 2 * (size_t)s.budget;)
        s.nslot *= 2;
    s.slot = calloc(s.nslot, sizeof *s.slot);
    int rc = s.slot ? osn__mm1_pairs_new(m, &s.tab) : OSN_ENOMEM;
    if (rc == OSN_ENOTSUP || rc == OSN_ETOOBIG)
        rc = OSN__SCREEN_DECLINED;
    if (rc) {
        free(s.slot);
        return rc;
    }
    pass_counts(&s, R, res, &x, progress, progress_arg);
    if (usable(&s) && res->evaluated > 0)
        pass_best(&s, R, res, &x);
    long next = -1;
    if (usable(&s) && res->best.found)
        next = pass_next(&s, R, res->best.ms.T_ret);
    rc = s.rc;
    res->solved = s.ndone;
    if (!rc && !usable(&s))
        rc = OSN__SCREEN_DECLINED;
    if (!rc && res->evaluated == 0)
        rc = OSN_ECONFIG;
    if (!rc && res->best.found)
        osn__opt_finish(cfg, res, next >= 0 ? s.done[next].L : 0, next >= 0 ? s.done[next].H : 0,
                        next >= 0 ? &s.done[next].ms : NULL);
    if (rc == OSN__SCREEN_DECLINED) {
        memset(res, 0, sizeof *res);
        res->binding = -1;
    }
    free(s.done);
    free(s.slot);
    osn__mm1_pairs_free(s.tab);
    return rc;
}
