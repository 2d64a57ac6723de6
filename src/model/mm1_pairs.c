/*
 * The optimiser's measures of the one-flow two-loop M|M|1 model (policy I) for any pair (L, H)
 * in O(1), from tables over n = 0..R built once per scan.
 *
 * closed.c gives the stationary probabilities piecewise (rho = lambda/mu, sigma = lambda'/mu,
 * D = H - L, E = R - H, geo(x, j) = 1 + x + ... + x^(j-1), p(0,0) = 1 before normalisation).
 * Summing its pieces over n in closed form, with A(x, J) = sum_{j=1..J} j x^j and
 * G(x, D) = sum_{j=1..D} geo(x, j):
 *
 *   S0   = geo(rho, L+1) + rho^L A(rho, D-1) / geo(rho, D)          (mode 0)
 *   nu01 = lambda rho^(H-1) / geo(rho, D)                            (overload onsets)
 *   S1   = (nu01/mu) [G(sigma, D) + geo(sigma, D) A(sigma, E-1) / geo(sigma, E)]
 *   S2   = E (lambda'/mu) (nu01/mu) geo(sigma, D) sigma^(E-1) / geo(sigma, E)
 *
 * (the middle sums telescope: sum_{n=L+1..H-1} rho^n geo(rho, H-n) = rho^L A(rho, D-1), and the
 * same above H). Every term is a sum or product of positive numbers, so nothing cancels: with the
 * tables accumulated in order, a value's relative error is a few times R units in the last place
 * (R = 1000: about 1e-13), far below the margin the screen in optimize_screen.c allows. The
 * tables are extended-range (osn_xd), so rho^n = 1e+3000 at a load of 1000 is still exact.
 */
#include "model_int.h"

#include <math.h>
#include <stdlib.h>

#include "osn/err.h"

typedef struct osn_xd xd;

/* Per base x in {rho, sigma}: x^n, geo(x, n), A(x, n) and G(x, n) for n = 0..R. */
struct table {
    xd *pw, *geo, *A, *G;
};

struct osn__mm1_pairs {
    double lambda, lambda_ovl, mu;
    long R;
    struct table rho, sigma;
};

static int table_fill(struct table *t, double x, long R)
{
    size_t n = (size_t)R + 1;
    t->pw = malloc(n * sizeof *t->pw);
    t->geo = malloc(n * sizeof *t->geo);
    t->A = malloc(n * sizeof *t->A);
    t->G = malloc(n * sizeof *t->G);
    if (!t->pw || !t->geo || !t->A || !t->G)
        return OSN_ENOMEM;
    t->A[0] = t->G[0] = osn_xd(0);
    for (long k = 0; k <= R; k++) {
        /* Each power and geo on its own, not as a running product: no error accumulates in n. */
        t->pw[k] = osn__closed_pow(x, k);
        t->geo[k] = osn__closed_geo(x, k);
        if (k > 0) {
            t->A[k] = osn_xd_add(t->A[k - 1], osn_xd_muld(t->pw[k], (double)k));
            t->G[k] = osn_xd_add(t->G[k - 1], t->geo[k]);
        }
    }
    return 0;
}

static void table_free(struct table *t)
{
    free(t->pw);
    free(t->geo);
    free(t->A);
    free(t->G);
}

bool osn__mm1_pairs_apply(const struct osn_model *m)
{
    return m->kind == OSN_KIND_TWO_LOOP && m->flows == 1 && m->policy == OSN_POLICY_I &&
           m->process == OSN_ARR_POISSON && m->service.kind == OSN_LAW_EXP && m->mu > 0 &&
           m->rate > 0 && m->overload_rate >= 0 && m->overload_rate <= m->rate;
}

int osn__mm1_pairs_new(const struct osn_model *m, struct osn__mm1_pairs **out)
{
    *out = NULL;
    if (!osn__mm1_pairs_apply(m))
        return OSN_ENOTSUP;
    if (m->R < 2 || (size_t)m->R >= SIZE_MAX / 4 / sizeof(xd))
        return OSN_ETOOBIG;
    struct osn__mm1_pairs *t = calloc(1, sizeof *t);
    if (!t)
        return OSN_ENOMEM;
    t->lambda = m->rate;
    t->lambda_ovl = m->overload_rate;
    t->mu = m->mu;
    t->R = m->R;
    int rc = table_fill(&t->rho, m->rate / m->mu, m->R);
    if (!rc)
        rc = table_fill(&t->sigma, m->overload_rate / m->mu, m->R);
    if (rc) {
        osn__mm1_pairs_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

void osn__mm1_pairs_free(struct osn__mm1_pairs *t)
{
    if (!t)
        return;
    table_free(&t->rho);
    table_free(&t->sigma);
    free(t);
}

void osn__mm1_pairs_eval(const struct osn__mm1_pairs *t, long L, long H, struct osn__mm1_pair *v)
{
    const struct table *r = &t->rho, *s = &t->sigma;
    long D = H - L, E = t->R - H;
    xd S0 = osn_xd_add(r->geo[L + 1], osn_xd_div(osn_xd_mul(r->pw[L], r->A[D - 1]), r->geo[D]));
    xd nu = osn_xd_div(osn_xd_muld(r->pw[H - 1], t->lambda), r->geo[D]);
    xd k = osn_xd_div(nu, osn_xd(t->mu));
    xd S1 = osn_xd_mul(
            k, osn_xd_add(s->G[D], osn_xd_div(osn_xd_mul(s->geo[D], s->A[E - 1]), s->geo[E])));
    xd p2 = osn_xd_div(
            osn_xd_mul(osn_xd_muld(k, t->lambda_ovl / t->mu), osn_xd_mul(s->geo[D], s->pw[E - 1])),
            s->geo[E]);
    xd S2 = osn_xd_muld(p2, (double)E);
    xd on = osn_xd_add(S1, S2), tot = osn_xd_add(S0, on);
    v->P1 = osn_xd_div(S1, tot);
    v->P2 = osn_xd_div(S2, tot);
    v->throttle = osn_xd_div(on, tot);
    xd lost = osn_xd_add(osn_xd_muld(S1, t->lambda - t->lambda_ovl), osn_xd_muld(S2, t->lambda));
    v->theta = osn_xd_div(lost, osn_xd_muld(tot, t->lambda));
    v->T_cyc = osn_xd_div(tot, nu);
    v->T_ret = osn_xd_div(on, nu);
}
