/*
 * The distribution of the return time (overload onset to normal mode) for exponential service.
 *
 * The return time T is the first passage from the onset distribution alpha (the overload
 * states entered from mode 0, weighted by the stationary flow into each) out of the overload
 * states, a phase-type variable with sub-generator Q. Uniformised at the largest exit rate
 * Lambda, T is the sum of N exponential(Lambda) steps, N the absorption step of the
 * sub-stochastic matrix P = I + Q/Lambda, so
 *
 *     P(T > t) = sum_n e^{-Lambda t} (Lambda t)^n / n! * s_n,   s_n = P(N > n) = alpha P^n 1.
 *
 * s_n comes from a walk of the normalised vector u_n = alpha P^n / s_n. The walk cannot go on
 * for ever: at heavy load the mean of N is 10^100 steps or more. It stops at step K when
 *   (a) s_K < 1e-14: what is left changes no probability by more than s_K; or
 *   (b) the residual time from u_K is exponential: its escape rate theta = u_K kill and its
 *       exact residual mean r1 = u_K m1 (m1, m2: the mean and second-moment vectors of the
 *       linear passage solves) satisfy |theta r1 - 1| and |r2 / (2 r1^2) - 1| < 1e-10, which
 *       both hold exactly when u_K is the quasi-stationary distribution; or
 *   (c) the work cap (4e8 state-steps or 4e6 steps) is reached.
 * Beyond K, s_n is continued geometrically, s_n = s_K (1 - p)^(n - K), with p = 1/(Lambda r1)
 * chosen so that the residual mean is exact: the curve's mean is E[T] to rounding in every case.
 * The error of P(T > t) is at most s_K in case (a); the reported estimate is s_K times the
 * distance from exponential, max(|theta r1 - 1|, |r2 / (2 r1^2) - 1|) (at most 1).
 *
 * Scaling: u_n is a double vector normalised to sum 1 (entries below 1e-30 are dropped and
 * their mass added to the error estimate: at most 1e-30 x states x steps, below 1e-15); s_n is kept
 * through log s_{n+1} = log s_n + log1p(-e_n), e_n = u_n kill / Lambda, so an escape of 1e-100 per
 * step is still counted; m1, m2 are doubles scaled by max m1 (they may lie beyond the double
 * range); the tail and the quantiles are in osn_xd where they can be huge, and the Poisson weights
 * come from a saddle-point form at the mode and a recurrence, never from e^{-x} x^n / n! directly.
 */
#include "model_int.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "osn/err.h"

typedef struct osn_xd xd;

#define SURV_DONE    1e-14    /* (a): survival below which the walk stops */
#define TAIL_EXP_TOL 1e-10    /* (b): distance from exponential at which it stops */
#define WORK_MAX     4e8      /* (c): state-steps */
#define STEPS_MAX    4000000L /* (c): steps (s_n is 8 bytes a step) */
#define FLUSH        1e-30    /* normalised mass below this is dropped, and counted in err */
#define WINDOW_SD    10.0     /* Poisson terms kept: mean +- 10 sd (+ slack): < 1e-20 left out */

struct osn_tret_dist {
    double lam; /* uniformisation rate (1/s) */
    long K;     /* steps walked: s[0..K] */
    double *s;  /* s[n] = P(N > n) */
    double lsK; /* log s[K] (-inf when the walk absorbed everything) */
    xd p;       /* tail: geometric escape per step beyond K */
    double pd;  /* p as a double (0 when below the double range) */
    double lp;  /* -log1p(-p): s_n = s_K exp(-lp (n - K)) */
    double err;
    xd mean, second;
};

/* ---- The walk ---- */

/* The overload chain as arrays over its states, built level by level as the walk reaches them
 * (at R = 10^6 with the mass near the bottom most levels are never touched). */
struct walk {
    const struct osn__lchain *lc;
    long nlev, *off; /* off[0..nlev]: first state of each level; off[nlev] = states */
    long built;      /* levels [0, built) have their arrays */
    int32_t *up, *dn;
    double *pu, *pd, *ps, *pk;
    double **side; /* per level: m x m within-level step probabilities, or NULL */
    double lam;
};

static double level_rate_max(const struct osn__lvl *lv)
{
    double best = 0;
    for (int i = 0; i < lv->m; i++) {
        double q = lv->kill[i] + lv->up_rate[i] + lv->dn_rate[i];
        for (int j = 0; lv->has_side && j < lv->m; j++)
            q += j != i ? lv->side[i][j] : 0;
        if (q > best)
            best = q;
    }
    return best;
}

static int build_level(struct walk *w, long li)
{
    struct osn__lvl lv;
    w->lc->fill(w->lc->ctx, w->lc->lo + li, &lv);
    const long base = w->off[li];
    for (int i = 0; i < lv.m; i++) {
        long g = base + i;
        double q = lv.kill[i] + lv.up_rate[i] + lv.dn_rate[i];
        for (int j = 0; lv.has_side && j < lv.m; j++)
            q += j != i ? lv.side[i][j] : 0;
        w->up[g] = lv.up_to[i] >= 0 ? (int32_t)(w->off[li + 1] + lv.up_to[i]) : -1;
        w->dn[g] = lv.dn_to[i] >= 0 ? (int32_t)(w->off[li - 1] + lv.dn_to[i]) : -1;
        w->pu[g] = lv.up_rate[i] / w->lam;
        w->pd[g] = lv.dn_rate[i] / w->lam;
        w->pk[g] = lv.kill[i] / w->lam;
        w->ps[g] = q < w->lam ? (w->lam - q) / w->lam : 0;
    }
    if (lv.has_side) {
        double *sd = malloc((size_t)lv.m * (size_t)lv.m * sizeof *sd);
        if (!sd)
            return OSN_ENOMEM;
        for (int i = 0; i < lv.m; i++)
            for (int j = 0; j < lv.m; j++)
                sd[i * lv.m + j] = j != i ? lv.side[i][j] / w->lam : 0;
        w->side[li] = sd;
    }
    return 0;
}

static void walk_free(struct walk *w)
{
    for (long i = 0; w->side && i < w->built; i++)
        free(w->side[i]);
    free(w->side);
    free(w->off);
    free(w->up);
    free(w->dn);
    free(w->pu);
    free(w->pd);
    free(w->ps);
    free(w->pk);
}

static int walk_init(struct walk *w, const struct osn__lchain *lc)
{
    memset(w, 0, sizeof *w);
    w->lc = lc;
    w->nlev = lc->hi - lc->lo + 1;
    if (!(w->off = malloc((size_t)(w->nlev + 1) * sizeof *w->off)))
        return OSN_ENOMEM;
    long total = 0;
    struct osn__lvl lv;
    for (long i = 0; i < w->nlev; i++) {
        w->off[i] = total;
        lc->fill(lc->ctx, lc->lo + i, &lv);
        total += lv.m;
        double q = level_rate_max(&lv);
        if (q > w->lam)
            w->lam = q;
    }
    w->off[w->nlev] = total;
    if (total > INT32_MAX || !(w->lam > 0))
        return OSN_ENOTSUP;
    size_t n = (size_t)total;
    w->up = malloc(n * sizeof *w->up);
    w->dn = malloc(n * sizeof *w->dn);
    w->pu = malloc(n * sizeof(double));
    w->pd = malloc(n * sizeof(double));
    w->ps = malloc(n * sizeof(double));
    w->pk = malloc(n * sizeof(double));
    w->side = calloc((size_t)w->nlev, sizeof *w->side);
    if (!w->up || !w->dn || !w->pu || !w->pd || !w->ps || !w->pk || !w->side)
        return OSN_ENOMEM;
    return 0;
}

/* Levels [0, upto] built. */
static int walk_reach(struct walk *w, long upto)
{
    while (w->built <= upto && w->built < w->nlev) {
        int err = build_level(w, w->built);
        if (err)
            return err;
        w->built++;
    }
    return 0;
}

/* ---- Moments of the passage time from every state ---- */

struct second_rhs {
    const long *off;
    long lo;
    const xd *m1;
};

static void rhs_ones(long n, const struct osn__lvl *lv, xd *b, void *arg)
{
    (void)n;
    (void)arg;
    for (int i = 0; i < lv->m; i++)
        b[i] = osn_xd(1);
}

static void rhs_second(long n, const struct osn__lvl *lv, xd *b, void *arg)
{
    const struct second_rhs *p = arg;
    const xd *here = p->m1 + p->off[n - p->lo];
    for (int i = 0; i < lv->m; i++)
        b[i] = osn_xd_muld(here[i], 2);
}

/* m1 / scale and m2 / scale^2 as doubles, scale = max m1 (entries far below underflow to 0:
 * states whose passage is 10^308 times shorter than the longest add nothing visible). */
static int passage_moments(const struct osn__lchain *oc, const long *off, long nstates, double *m1d,
                           double *m2d, xd *scale)
{
    const size_t bytes = (size_t)nstates * sizeof(xd);
    xd *x = osn__big_alloc(bytes);
    struct osn__elim *t = NULL;
    if (!x)
        return OSN_ENOMEM;
    int err = osn__trans_new(&t, oc, NULL); /* one elimination for both systems */
    if (!err)
        err = osn__trans_solve(t, rhs_ones, NULL, x);
    if (!err) {
        xd mx = osn_xd(0);
        for (long i = 0; i < nstates; i++)
            if (osn_xd_cmp(x[i], mx) > 0)
                mx = x[i];
        *scale = mx;
        for (long i = 0; i < nstates; i++)
            m1d[i] = osn_xd_to_double(osn_xd_div(x[i], mx));
        struct second_rhs p = {off, oc->lo, x};
        err = osn__trans_solve(t, rhs_second, &p, x);
        xd mx2 = osn_xd_mul(mx, mx);
        for (long i = 0; !err && i < nstates; i++)
            m2d[i] = osn_xd_to_double(osn_xd_div(x[i], mx2));
    }
    osn__elim_free(t);
    osn__big_free(x, bytes);
    return err;
}

/* ---- Building the distribution ---- */

static int push_s(struct osn_tret_dist *d, long *cap, long n, double v)
{
    if (n >= *cap) {
        long c2 = *cap ? 2 * *cap : 1024;
        double *s2 = realloc(d->s, (size_t)c2 * sizeof *s2);
        if (!s2)
            return OSN_ENOMEM;
        d->s = s2;
        *cap = c2;
    }
    d->s[n] = v;
    return 0;
}

/* |a - 1| for a in extended range (a far from 1: 1). */
static double dist1(xd a)
{
    double v = osn_xd_to_double(a);
    return isfinite(v) ? fabs(v - 1) : 1;
}

/* The walk's end when no mass is left after step K: s_n = 0 from there on (a tail that ends
 * at once), the error being what was flushed on the way. */
static void absorbed(struct osn_tret_dist *d, long K, double flushed)
{
    d->K = K;
    d->lsK = -INFINITY;
    d->p = osn_xd(1);
    d->pd = 1;
    d->lp = INFINITY;
    d->err = flushed;
}

/* The walk: fills d->s, d->K and the tail from the state vector where it stopped. */
static int run_walk(struct osn_tret_dist *d, struct walk *w, const double *m1d, const double *m2d,
                    xd scale, double *u, double *nx, long alo, long ahi)
{
    long cap = 0;
    double ls = 0, work = 0, flushed = 0;
    int err = push_s(d, &cap, 0, 1);
    for (long k = 0;; k++) {
        if (err || (err = walk_reach(w, ahi + 1)))
            return err;
        const long g0 = w->off[alo], g1 = w->off[ahi + 1];
        double r1 = 0, r2 = 0, esc = 0;
        for (long g = g0; g < g1; g++) {
            const double x = u[g];
            if (x == 0)
                continue;
            r1 += x * m1d[g];
            r2 += x * m2d[g];
            esc += x * w->pk[g];
            nx[g] += x * w->ps[g];
            if (w->up[g] >= 0)
                nx[w->up[g]] += x * w->pu[g];
            if (w->dn[g] >= 0)
                nx[w->dn[g]] += x * w->pd[g];
        }
        for (long li = alo; li <= ahi; li++) { /* phase changes (MMPP) */
            const double *sd = w->side[li];
            if (!sd)
                continue;
            const long b = w->off[li];
            const int m = (int)(w->off[li + 1] - b);
            for (int i = 0; i < m; i++)
                for (int j = 0; u[b + i] != 0 && j < m; j++)
                    nx[b + j] += u[b + i] * sd[i * m + j];
        }
        work += (double)(g1 - g0);
        /* Stop tests on u_k (the step just taken into nx is then discarded). */
        xd r1x = osn_xd_muld(scale, r1);
        double d2 = r1 > 0 ? dist1(osn_xd(r2 / (2 * r1 * r1))) : 1;
        double d1 = esc > 0 ? dist1(osn_xd_muld(r1x, esc * w->lam)) : (r1 > 0 ? 0 : 1);
        double dist = d1 > d2 ? d1 : d2;
        bool stop_a = exp(ls) < SURV_DONE;
        bool stop_b = dist < TAIL_EXP_TOL;
        bool stop_c = work >= WORK_MAX || k >= STEPS_MAX;
        if (stop_a || stop_b || stop_c) {
            d->K = k;
            d->lsK = ls;
            xd inv_p = osn_xd_muld(r1x, w->lam); /* residual steps, >= 1 */
            if (osn_xd_cmp(inv_p, osn_xd(1)) < 0)
                inv_p = osn_xd(1);
            d->p = osn_xd_div(osn_xd(1), inv_p);
            d->pd = osn_xd_to_double(d->p);
            d->lp = d->pd >= 1 ? INFINITY : -log1p(-d->pd);
            d->err = exp(ls) * (dist < 1 ? dist : 1) + flushed;
            return 0;
        }
        ls += log1p(-(esc < 1 ? esc : 1));
        err = push_s(d, &cap, k + 1, exp(ls));
        /* Normalise, flush, and move the active range. */
        const long lo2 = alo > 0 ? alo - 1 : 0;
        const long hi2 = ahi + 1 < w->nlev ? ahi + 1 : ahi;
        double tot = 0;
        for (long g = w->off[lo2]; g < w->off[hi2 + 1]; g++)
            tot += nx[g];
        if (!(tot > 0)) { /* everything absorbed: s_n = 0 from here on */
            absorbed(d, k + 1, flushed);
            return err;
        }
        for (long g = g0; g < g1; g++)
            u[g] = 0;
        /* The new range: the levels of [lo2, hi2] that kept mass. Dropping the range's empty
         * ends matters: a return time that drifts over 10^5 levels keeps a band of a few
         * thousand levels busy, not all it has crossed. */
        long nlo = -1, nhi = -1;
        double dropped = 0;
        for (long li = lo2; li <= hi2; li++) {
            bool any = false;
            for (long g = w->off[li]; g < w->off[li + 1]; g++) {
                double v = nx[g] / tot;
                nx[g] = 0;
                if (v < FLUSH) {
                    dropped += v;
                    v = 0;
                }
                u[g] = v;
                any |= v != 0;
            }
            if (any) {
                nlo = nlo < 0 ? li : nlo;
                nhi = li;
            }
        }
        flushed += dropped * exp(ls);
        if (nlo < 0) { /* all of it below FLUSH: cannot happen after normalising, but be safe */
            absorbed(d, k + 1, flushed);
            return err;
        }
        alo = nlo;
        ahi = nhi;
    }
}

/* Curve moments: E[N] = sum s_n, E[N^2] = sum (2n + 1) s_n, the tail in closed form; then
 * E[T] = E[N] / Lambda and E[T^2] = (E[N^2] + E[N]) / Lambda^2 (T: N exponential steps). */
static void curve_moments(struct osn_tret_dist *d)
{
    double h1 = 0, h2 = 0;
    for (long n = 0; n < d->K; n++) {
        h1 += d->s[n];
        h2 += (2.0 * (double)n + 1) * d->s[n];
    }
    xd en = osn_xd(h1), en2 = osn_xd(h2);
    if (isfinite(d->lsK)) {
        xd sK = osn_xd_exp(d->lsK);
        xd inv_p = osn_xd_div(osn_xd(1), d->p);
        en = osn_xd_add(en, osn_xd_mul(sK, inv_p));
        /* sum_j (2(K + j) + 1) q^j = (2K + 1)/p + 2 q / p^2, q/p^2 = (1/p)(1/p - 1) */
        xd t = osn_xd_add(osn_xd_muld(inv_p, 2.0 * (double)d->K + 1),
                          osn_xd_muld(osn_xd_mul(inv_p, osn_xd_sub(inv_p, osn_xd(1))), 2));
        en2 = osn_xd_add(en2, osn_xd_mul(sK, t));
    }
    xd lam = osn_xd(d->lam);
    d->mean = osn_xd_div(en, lam);
    d->second = osn_xd_div(osn_xd_add(en2, en), osn_xd_mul(lam, lam));
}

/*
 * OSN_ETOOBIG when the walk would hit its work cap before the curve is accurate: a return time
 * that is long and nearly deterministic (a drift over many levels) has no exponential tail to
 * stop at, and needs about Lambda (mean + 8 sd) steps over a band of some 24 sd of levels.
 * Exponential-like return times (CV^2 >= 1/4) are always tried: they stop at their tail.
 */
static int costly(double lam, long states, long nlev, xd mean, double cv2)
{
    if (!(cv2 < 0.25))
        return 0;
    double steps = osn_xd_to_double(osn_xd_muld(mean, lam * (1 + 8 * sqrt(cv2 > 0 ? cv2 : 0))));
    double per_level = (double)states / (double)nlev;
    double band = fmin((double)states, 24 * sqrt(steps) * per_level + 3 * per_level);
    return steps > (double)STEPS_MAX || steps * band > WORK_MAX ? OSN_ETOOBIG : 0;
}

static int too_costly(const struct walk *w, const double *m1d, const double *m2d, const double *u,
                      xd scale)
{
    double a1 = 0, a2 = 0;
    for (long g = 0; g < w->off[w->nlev]; g++)
        if (u[g] != 0) {
            a1 += u[g] * m1d[g];
            a2 += u[g] * m2d[g];
        }
    double cv2 = a1 > 0 ? a2 / (a1 * a1) - 1 : 1;
    return costly(w->lam, w->off[w->nlev], w->nlev, osn_xd_muld(scale, a1), cv2);
}

int osn_tret_dist_precheck(const struct osn_model *m, const struct osn_measures *ms)
{
    if (!m || !ms)
        return OSN_EINVAL;
    if (m->service.kind != OSN_LAW_EXP || m->process == OSN_ARR_TRACE)
        return OSN_ENOTSUP;
    if (!ms->have_sd || !isfinite(ms->T_ret.m) || osn_xd_is_zero(ms->T_ret))
        return 0; /* nothing to go by: osn_tret_dist_new() decides */
    struct osn__chain oc;
    struct osn__lchain olc;
    osn__chain_init(&oc, m, 1);
    osn__chain_levels(&oc, &olc);
    if (olc.lo > olc.hi)
        return OSN_ENOTSUP;
    double lam = 0;
    long states = 0;
    struct osn__lvl lv;
    for (long n = olc.lo; n <= olc.hi; n++) {
        olc.fill(olc.ctx, n, &lv);
        states += lv.m;
        double q = level_rate_max(&lv);
        lam = q > lam ? q : lam;
    }
    double cv = osn_xd_to_double(osn_xd_div(ms->T_ret_sd, ms->T_ret));
    return costly(lam, states, olc.hi - olc.lo + 1, ms->T_ret, cv * cv);
}

int osn_tret_dist_new(struct osn_tret_dist **dp, const struct osn_model *m)
{
    if (!dp || !m)
        return OSN_EINVAL;
    if (m->service.kind != OSN_LAW_EXP || m->process == OSN_ARR_TRACE)
        return OSN_ENOTSUP;
    struct osn__chain oc;
    struct osn__lchain olc;
    osn__chain_init(&oc, m, 1);
    osn__chain_levels(&oc, &olc);
    if (olc.lo > olc.hi)
        return OSN_ENOTSUP;

    struct osn_tret_dist *d = calloc(1, sizeof *d);
    struct walk w;
    long nent = 0, *eidx = NULL;
    xd *ew = NULL;
    double *m1d = NULL, *m2d = NULL, *u = NULL, *nx = NULL;
    size_t vbytes = 0;
    int err = d ? walk_init(&w, &olc) : OSN_ENOMEM;
    if (!d) {
        memset(&w, 0, sizeof w);
        goto out;
    }
    if (err)
        goto out;
    d->lam = w.lam;
    const long ns = w.off[w.nlev];
    vbytes = (size_t)ns * sizeof(double);
    err = OSN_ENOMEM;
    if (!(m1d = osn__big_alloc(vbytes)) || !(m2d = osn__big_alloc(vbytes)) ||
        !(u = osn__big_alloc(vbytes)) || !(nx = osn__big_alloc(vbytes)))
        goto out;
    xd scale;
    if ((err = passage_moments(&olc, w.off, ns, m1d, m2d, &scale)) ||
        (err = osn__overload_entries(m, &nent, &eidx, &ew)))
        goto out;
    /* The onset distribution, normalised; its level range starts the walk. */
    xd wsum = osn_xd(0);
    for (long k = 0; k < nent; k++)
        wsum = osn_xd_add(wsum, ew[k]);
    long alo = w.nlev, ahi = -1;
    for (long k = 0; k < nent; k++) {
        double v = osn_xd_to_double(osn_xd_div(ew[k], wsum));
        if (!(v >= FLUSH))
            continue;
        u[eidx[k]] += v;
        long li = 0, hi = w.nlev - 1; /* the level holding state eidx[k] */
        while (li < hi) {
            long mid = (li + hi + 1) / 2;
            if (w.off[mid] <= eidx[k])
                li = mid;
            else
                hi = mid - 1;
        }
        alo = li < alo ? li : alo;
        ahi = li > ahi ? li : ahi;
    }
    err = ahi < 0 ? OSN_ENOTSUP : too_costly(&w, m1d, m2d, u, scale);
    if (!err)
        err = run_walk(d, &w, m1d, m2d, scale, u, nx, alo, ahi);
    if (!err && !(d->err <= OSN_TRET_ERR_MAX))
        err = OSN_ETOOBIG; /* the work cap came first: no curve rather than a wrong one */
    if (!err)
        curve_moments(d);
out:
    if (vbytes) {
        osn__big_free(m1d, vbytes);
        osn__big_free(m2d, vbytes);
        osn__big_free(u, vbytes);
        osn__big_free(nx, vbytes);
    }
    walk_free(&w);
    free(eidx);
    free(ew);
    if (err) {
        osn_tret_dist_free(d);
        return err;
    }
    *dp = d;
    return 0;
}

struct osn_tret_dist *osn_tret_dist_free(struct osn_tret_dist *d)
{
    if (d) {
        free(d->s);
        free(d);
    }
    return NULL;
}

/* ---- Evaluating the curve ---- */

/* log of the Poisson weight e^{-y} y^n / n!: a saddle-point form for n >= 30 that does not
 * subtract numbers of size y (y up to 10^13 here); its Stirling series is cut after the n^-7
 * term (the next is below 1e-16 at n = 30). */
static double log_pois(long n, double y)
{
    if (n < 30)
        return -y + (double)n * log(y) - lgamma((double)n + 1);
    const double dn = (double)n, i2 = 1 / (dn * dn);
    const double stirlerr = (1.0 / 12 - i2 * (1.0 / 360 - i2 * (1.0 / 1260 - i2 / 1680))) / dn;
    return dn * log1p((y - dn) / dn) + (dn - y) - 0.5 * log(6.283185307179586 * dn) - stirlerr;
}

static void pois_window(double y, long *lo, long *hi)
{
    double sd = sqrt(y);
    double a = floor(y - WINDOW_SD * sd - 10), b = ceil(y + WINDOW_SD * sd + 30);
    *lo = a > 0 ? (long)a : 0;
    *hi = (long)b;
}

/* sum_{n = a..b} pois(n; y) f(n), with f(n) = s[n] (n < K) or the geometric tail. The weights
 * run by recurrence from the mode of [a, b] outwards. */
static double pois_sum(const struct osn_tret_dist *d, double y, long a, long b)
{
    if (a > b)
        return 0;
    if (y == 0)
        return a == 0 ? 1 * (d->K > 0 ? d->s[0] : exp(d->lsK)) : 0;
    long mode = (long)floor(y);
    mode = mode < a ? a : (mode > b ? b : mode);
    const double sK = exp(d->lsK);
    double w0;
    if (y < 500) { /* e^{-y} y^m / m! as a product: relative error about m 1e-16 */
        w0 = exp(-y);
        for (long k = 1; k <= mode; k++)
            w0 *= y / (double)k;
    } else {
        w0 = exp(log_pois(mode, y));
    }
    double sum = 0, w = w0;
#define F(n) \
    ((n) < d->K ? d->s[n] : (n) == d->K || sK == 0 ? sK : sK * exp(-d->lp * (double)((n)-d->K)))
    for (long n = mode; n <= b; n++) {
        sum += w * F(n);
        w *= y / (double)(n + 1);
    }
    w = w0;
    for (long n = mode - 1; n >= a; n--) {
        w *= (double)(n + 1) / y;
        sum += w * F(n);
    }
#undef F
    return sum;
}

/* P(N-step time > t) at x = Lambda t. */
static double survival_x(const struct osn_tret_dist *d, xd xx)
{
    if (xx.m <= 0)
        return 1;
    const double sK = exp(d->lsK);
    /* Far beyond the walk: only the geometric tail, sum_{n >= K} pois(n; x) s_K q^(n - K)
     * = s_K q^-K e^{-x p} P(Pois(x q) >= K), the last factor 1 here. */
    if (osn_xd_cmp(xx, osn_xd(1e13)) > 0) {
        if (sK == 0)
            return 0;
        double e = osn_xd_to_double(osn_xd_mul(xx, d->p)) - (double)d->K * d->lp;
        return e > 0 ? sK * exp(-e) : sK;
    }
    const double x = osn_xd_to_double(xx);
    long lo, hi;
    pois_window(x, &lo, &hi);
    double head = pois_sum(d, x, lo, (hi < d->K - 1 ? hi : d->K - 1));
    double tail = 0;
    if (sK > 0) {
        long ylo, yhi;
        pois_window(x * (1 - d->pd), &ylo, &yhi);
        if (d->K <= ylo && d->pd < 1) {
            double e = x * d->pd - (double)d->K * d->lp;
            tail = sK * exp(-e);
        } else {
            long a = lo > d->K ? lo : d->K;
            double cut = d->K + ceil(50 / d->lp);
            long b = (double)hi < cut ? hi : (long)cut;
            tail = pois_sum(d, x, a, b);
        }
    }
    double s = head + tail;
    return s > 1 ? 1 : (s < 0 ? 0 : s);
}

double osn_tret_dist_survival(const struct osn_tret_dist *d, xd t)
{
    return survival_x(d, osn_xd_muld(t, d->lam));
}

xd osn_tret_dist_quantile(const struct osn_tret_dist *d, double prob)
{
    const double level = 1 - prob; /* find x with S(x) = level */
    if (!(level < 1))
        return osn_xd(0);
    const double sK = exp(d->lsK);
    /* In the tail's closed-form range S = s_K exp(K lp - x p) solves directly. */
    if (sK > level && d->pd < 1) {
        double c = (double)d->K * d->lp + log(sK / level);
        xd x = osn_xd_div(osn_xd(c), d->p);
        long ylo, yhi;
        bool far = osn_xd_cmp(x, osn_xd(1e13)) > 0;
        if (!far)
            pois_window(osn_xd_to_double(x) * (1 - d->pd), &ylo, &yhi);
        if (far || d->K <= ylo)
            return osn_xd_div(x, osn_xd(d->lam));
    }
    double lo = 0, hi = d->K > 0 ? (double)d->K : 1;
    while (survival_x(d, osn_xd(hi)) > level && hi < 1e13)
        hi *= 2;
    for (int it = 0; it < 200 && hi - lo > 1e-13 * hi; it++) {
        double mid = 0.5 * (lo + hi);
        if (survival_x(d, osn_xd(mid)) > level)
            lo = mid;
        else
            hi = mid;
    }
    return osn_xd(hi / d->lam);
}

void osn_tret_dist_moments(const struct osn_tret_dist *d, xd *mean, xd *second)
{
    *mean = d->mean;
    *second = d->second;
}

double osn_tret_dist_error(const struct osn_tret_dist *d)
{
    return d->err;
}

long osn_tret_dist_steps(const struct osn_tret_dist *d)
{
    return d->K;
}

double osn_tret_dist_rate(const struct osn_tret_dist *d)
{
    return d->lam;
}

void osn_tret_dist_fill(const struct osn_tret_dist *d, struct osn_measures *ms)
{
    static const double probs[4] = OSN_TRET_QUANTILES;
    for (int i = 0; i < 4; i++)
        ms->T_ret_q[i] = osn_tret_dist_quantile(d, probs[i]);
    ms->T_ret_dist_err = osn_xd(osn_tret_dist_error(d));
    ms->have_tret_q = true;
}

int osn_tret_quantiles(const struct osn_model *m, struct osn_measures *ms)
{
    struct osn_tret_dist *d = NULL;
    int err = osn_tret_dist_precheck(m, ms);
    if (!err)
        err = osn_tret_dist_new(&d, m);
    if (err == OSN_ENOTSUP || err == OSN_ETOOBIG)
        return 0; /* no distribution to give: the quantiles stay n/a */
    if (err)
        return err;
    osn_tret_dist_fill(d, ms);
    osn_tret_dist_free(d);
    return 0;
}
