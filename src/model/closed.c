/*
 * Closed forms for the one-flow two-loop M|M|1 model <L,H>|<H,R> under policy I.
 *
 * With rho = lambda/mu, sigma = lambda'/mu, D = H-L, E = R-H, geo(x,j) = 1 + x + ... + x^(j-1)
 * and p(0,0) = 1 before normalisation, the balance equations solve piecewise (each mode is a
 * birth-death segment whose ends are absorbing or reflecting):
 *
 *   p(0,n) = rho^n                                        0 <= n <= L
 *   p(0,n) = rho^n geo(rho, H-n) / geo(rho, D)            L <= n <= H-1
 *   nu01   = lambda p(0,H-1)
 *   p(1,n) = (nu01/mu) geo(sigma, n-L)                    L+1 <= n <= H
 *   p(1,n) = p(1,H) sigma^(n-H) geo(sigma, R-n) / geo(sigma, E)   H <= n <= R-1
 *   p(2,n) = lambda' p(1,R-1) / mu                        H+1 <= n <= R
 *
 * Written with geo() instead of (1 - x^j)/(1 - x), every term is a ratio of positive numbers that
 * stays accurate at x = 1 and near it (geo uses expm1). Powers are taken by repeated squaring
 * in extended range, so huge and tiny loads are exact too. The measures are sums of these terms;
 * the return time follows from the renewal identity (P1 + P2)/nu01. This module does not
 * compute the spread of the return time.
 */
#include "model_int.h"

#include <math.h>

#include "osn/err.h"

typedef struct osn_xd xd;

/* x^k for x >= 0 by repeated squaring: about 2 log2(k) roundings. */
static xd pw(double x, long k)
{
    if (k == 0)
        return osn_xd(1);
    if (x == 0)
        return osn_xd(0);
    xd base = osn_xd(x), r = osn_xd(1);
    while (k > 0) {
        if (k & 1)
            r = osn_xd_mul(r, base);
        base = osn_xd_mul(base, base);
        k >>= 1;
    }
    return r;
}

/* geo(x, j) = sum_{k=0}^{j-1} x^k for x >= 0, j >= 0. */
static xd geo(double x, long j)
{
    if (j <= 0)
        return osn_xd(0);
    if (x == 1)
        return osn_xd((double)j);
    if (x == 0)
        return osn_xd(1);
    double lx = log(x);
    if (x < 1) /* (1 - x^j)/(1 - x): both expm1 are negative, the ratio is accurate */
        return osn_xd(expm1((double)j * lx) / expm1(lx));
    /* x > 1: x^j (1 - x^-j)/(x - 1) */
    return osn_xd_muld(pw(x, j), -expm1(-(double)j * lx) / expm1(lx));
}

/* The two, for the optimiser's tables over all pairs (mm1_pairs.c). */
xd osn__closed_pow(double x, long k)
{
    return pw(x, k);
}

xd osn__closed_geo(double x, long j)
{
    return geo(x, j);
}

struct closed {
    const struct osn_model *m;
    double rho, sigma;
    long L, H, R;
    xd geo_rho_D, geo_sig_E, nu01, p1H, p2;
};

static void closed_init(struct closed *c, const struct osn_model *m)
{
    c->m = m;
    c->L = m->L1;
    c->H = m->H1;
    c->R = m->R;
    c->rho = m->rate / m->mu;
    c->sigma = m->overload_rate / m->mu;
    c->geo_rho_D = geo(c->rho, c->H - c->L);
    c->geo_sig_E = geo(c->sigma, c->R - c->H);
    c->nu01 = osn_xd_div(osn_xd_muld(pw(c->rho, c->H - 1), m->rate), c->geo_rho_D);
    c->p1H = osn_xd_mul(osn_xd_div(c->nu01, osn_xd(m->mu)), geo(c->sigma, c->H - c->L));
    xd p1top = osn_xd_div(osn_xd_mul(c->p1H, pw(c->sigma, c->R - 1 - c->H)), c->geo_sig_E);
    c->p2 = osn_xd_div(osn_xd_muld(p1top, m->overload_rate), osn_xd(m->mu));
}

/* Unnormalised p(s, n); the caller keeps (s, n) inside the state space. */
static xd prob(const struct closed *c, int s, long n)
{
    switch (s) {
    case 0:
        if (n <= c->L)
            return pw(c->rho, n);
        return osn_xd_div(osn_xd_mul(pw(c->rho, n), geo(c->rho, c->H - n)), c->geo_rho_D);
    case 1:
        if (n <= c->H)
            return osn_xd_mul(osn_xd_div(c->nu01, osn_xd(c->m->mu)), geo(c->sigma, n - c->L));
        return osn_xd_div(
                osn_xd_mul(osn_xd_mul(c->p1H, pw(c->sigma, n - c->H)), geo(c->sigma, c->R - n)),
                c->geo_sig_E);
    default:
        return c->p2;
    }
}

static int present(const struct closed *c, int s, long n)
{
    switch (s) {
    case 0:
        return n <= c->H - 1;
    case 1:
        return n >= c->L + 1 && n <= c->R - 1;
    default:
        return n >= c->H + 1;
    }
}

int osn__closed_solve(const struct osn_model *m, struct osn_measures *out, osn_dist_fn dist,
                      void *arg)
{
    struct closed c;
    closed_init(&c, m);
    xd P[3] = {osn_xd(0), osn_xd(0), osn_xd(0)}, N = osn_xd(0), busy = osn_xd(0);
    long states = 0;
    for (long n = 0; n <= c.R; n++) {
        for (int s = 0; s < 3; s++) {
            if (!present(&c, s, n))
                continue;
            xd p = prob(&c, s, n);
            P[s] = osn_xd_add(P[s], p);
            N = osn_xd_add(N, osn_xd_muld(p, (double)n));
            if (n > 0)
                busy = osn_xd_add(busy, p);
            states++;
        }
    }
    xd tot = osn_xd_add(osn_xd_add(P[0], P[1]), P[2]);
    if (dist) {
        for (long n = 0; n <= c.R; n++)
            for (int s = 0; s < 3; s++)
                if (present(&c, s, n)) {
                    int err = dist(s, n, osn_xd_div(prob(&c, s, n), tot), arg);
                    if (err)
                        return err;
                }
    }
    for (int s = 0; s < 3; s++)
        out->P[s] = osn_xd_div(P[s], tot);
    out->prob_sum = osn_xd_add(osn_xd_add(out->P[0], out->P[1]), out->P[2]);
    out->p00 = osn_xd_div(osn_xd(1), tot);
    out->N_mean = osn_xd_div(N, tot);
    out->throughput = osn_xd_muld(osn_xd_div(busy, tot), m->mu);
    out->sojourn = osn_xd_div(out->N_mean, out->throughput);
    out->nu01 = osn_xd_div(c.nu01, tot);
    /* nu12 = lambda' p(1,R-1) = mu p(2,.) */
    out->nu12 = osn_xd_muld(osn_xd_div(c.p2, tot), m->mu);
    out->mode_change_rate = osn_xd_muld(osn_xd_add(out->nu01, out->nu12), 2);
    xd lost = osn_xd_add(osn_xd_muld(out->P[1], m->rate - m->overload_rate),
                         osn_xd_muld(out->P[2], m->rate));
    out->theta = osn_xd_div(lost, osn_xd(m->rate));
    out->loss_flow1 = out->theta;
    out->loss_flow2 = osn_xd(0);
    osn__renewal_times(out);
    out->T_ret = out->T_ret_renewal; /* this method has no passage solve of its own */
    out->T_ret_sd = osn_xd(0);
    out->have_sd = false;
    out->states = states;
    out->method = OSN_METHOD_CLOSED;
    return 0;
}

double osn__closed_T_ret_formula(const struct osn_model *m)
{
    const double mu = m->mu, lp = m->overload_rate;
    const double L = (double)m->L1, H = (double)m->H1, R = (double)m->R;
    if (lp == mu)
        return (H - L) * (R - L + 2) / (2 * mu);
    const double r = mu / lp;
    return (H - L) / (mu - lp) -
           (R - H) * lp * (pow(r, H) - pow(r, L)) / (mu * (mu - lp) * (pow(r, R) - pow(r, H)));
}
