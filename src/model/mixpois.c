/*
 * Mixed-Poisson weights of the service laws: the probability of m events of a rate-lam Poisson
 * process during one service time B, c[m] = E[exp(-lam B) (lam B)^m / m!]. Uniformising the
 * arrival path of one service at rate lam turns these into the distribution of where the service
 * ends (see embedded.c).
 *
 * Exponential, constant, Erlang and hyperexponential service have closed forms, evaluated in
 * the log domain and returned in extended range, so that the chance of, say, no arrival during a
 * service at a load of 1000 (e^-1000) is kept. Uniform and lognormal service are integrated
 * numerically (the Poisson weight is a smooth function of the service time: the trapezoidal rule
 * on the normal scale of the lognormal converges geometrically), and empirical service averages
 * over its samples; these three work in double precision, so weights below about 1e-300 are 0.
 */
#define _DEFAULT_SOURCE /* lgamma_r */
#include "model_int.h"

#include <math.h>
#include <stdlib.h>

#include "osn/err.h"

typedef struct osn_xd xd;

/* More terms than this means a tail too heavy for the embedded chain at this load. */
#define MAX_TERMS 4000000L
/* Truncate where the remaining weight is below this (relative to 1). */
#define TAIL 1e-17

/* log Gamma(x) without lgamma's write to the global signgam: the optimiser solves on several
 * threads at once. */
static double lgam(double x)
{
    int sign;
    return lgamma_r(x, &sign);
}

/* log of the Poisson(x) probability of m, for x > 0. */
static double log_pois(double x, long m)
{
    return (double)m * log(x) - x - lgam((double)m + 1);
}

/* log c_m of the laws with closed forms; NAN for the others. */
static double log_weight(const struct osn_law *law, double lam, long m)
{
    double mu = law->rate;
    switch (law->kind) {
    case OSN_LAW_EXP: /* geometric: mu/(mu+lam) (lam/(mu+lam))^m */
        return -log1p(lam / mu) - (double)m * log1p(mu / lam);
    case OSN_LAW_DET:
        return log_pois(lam / mu, m);
    case OSN_LAW_ERLANG: { /* negative binomial with k phases of rate k mu */
        double k = law->k, r = k * mu;
        return lgam((double)m + k) - lgam(k) - lgam((double)m + 1) - k * log1p(lam / r) -
               (double)m * log1p(r / lam);
    }
    default:
        return NAN;
    }
}

/* c_m for the laws without a single closed form, in double precision. */
static double numeric_weight(const struct osn_law *law, double lam, long m)
{
    double mean = 1 / law->rate;
    switch (law->kind) {
    case OSN_LAW_HYPEREXP: {
        double c = 0;
        for (int i = 0; i < law->nbranch; i++) {
            double r = law->rates[i];
            c += law->probs[i] * exp(-log1p(lam / r) - (double)m * log1p(r / lam));
        }
        return c;
    }
    case OSN_LAW_UNIFORM: {
        /* (1/(b-a)) int_a^b pois(lam t; m) dt by 64-point composite Simpson per unit of the
         * Poisson width, which resolves the peak of the integrand. */
        double h = sqrt(3.0) * law->cv * mean, a = mean - h, b = mean + h;
        if (h <= 0)
            return exp(log_pois(lam * mean, m));
        double width = fmax(1.0, sqrt((double)m + 1)) / lam;
        long n = 2 * (long)ceil(32 * (b - a) / width + 16);
        double step = (b - a) / (double)n, sum = 0;
        for (long i = 0; i <= n; i++) {
            double t = a + step * (double)i, w = (i == 0 || i == n) ? 1 : (i % 2 ? 4 : 2);
            sum += w * (t > 0 ? exp(log_pois(lam * t, m)) : (m == 0));
        }
        return sum * step / 3 / (b - a);
    }
    case OSN_LAW_LOGNORMAL: {
        double s2 = log1p(law->cv * law->cv), s = sqrt(s2), mu_ln = log(mean) - s2 / 2;
        if (s == 0)
            return exp(log_pois(lam * mean, m));
        const double z0 = -9, z1 = 9, dz = 0.005; /* the normal tail beyond 9 is below 1e-18 */
        double sum = 0;
        for (double z = z0; z <= z1 + dz / 2; z += dz) {
            double t = exp(mu_ln + s * z);
            sum += exp(-0.5 * z * z + log_pois(lam * t, m));
        }
        return sum * dz / sqrt(2 * 3.14159265358979323846);
    }
    case OSN_LAW_EMPIRICAL: {
        double sum = 0;
        for (size_t i = 0; i < law->nsamples; i++)
            sum += law->samples[i] > 0 ? exp(log_pois(lam * law->samples[i], m)) : (m == 0);
        return sum / (double)law->nsamples;
    }
    default:
        return NAN;
    }
}

double osn__mixpois_cost(const struct osn_law *law, double lam, double *M)
{
    double mean = 1 / law->rate, tmax = mean, per_term = 1;

    switch (law->kind) {
    case OSN_LAW_HYPEREXP: /* the slowest branch's geometric tail, to 1e-20 */
        for (int i = 0; i < law->nbranch; i++)
            tmax = fmax(tmax,
                        46 / law->rates[i] / fmax(1, lam / law->rates[i]) + 46 / law->rates[i]);
        per_term = law->nbranch;
        break;
    case OSN_LAW_UNIFORM: {
        double h = sqrt(3.0) * law->cv * mean;
        tmax = mean + h;
        per_term = 2 * (32 * 2 * h * lam + 16);
        break;
    }
    case OSN_LAW_LOGNORMAL: {
        /* The terms stop once a weight, about phi(z) / (s m) at m = lam exp(mu_ln + s z), is
         * below 1e-20: solve for z (two steps of the fixed point suffice). */
        double s2 = log1p(law->cv * law->cv), sd = sqrt(s2), mu_ln = log(mean) - s2 / 2, z = 9;
        for (int i = 0; i < 3 && sd > 0; i++) {
            double m = fmax(1, lam * exp(mu_ln + sd * z));
            z = sqrt(2 * fmax(0, log(1 / (1e-20 * sd * m * sqrt(2 * 3.14159265358979323846)))));
        }
        tmax = exp(mu_ln + sd * fmin(z, 9));
        per_term = 3601;
        break;
    }
    case OSN_LAW_EMPIRICAL:
        for (size_t i = 0; i < law->nsamples; i++)
            tmax = fmax(tmax, law->samples[i]);
        per_term = (double)law->nsamples;
        break;
    default:
        break;
    }
    double x = lam * tmax;
    *M = x + 10 * sqrt(x) + 40;
    return *M * per_term;
}

xd *osn__mixpois(const struct osn_law *law, double lam, long *M, int *err)
{
    long cap = 256, n = 0;
    xd *c = malloc((size_t)cap * sizeof *c);
    double cum = 0, mean_events = lam / law->rate;
    *err = OSN_ENOMEM;
    if (!c)
        return NULL;
    for (;;) {
        double lw = log_weight(law, lam, n);
        xd w = isnan(lw) ? osn_xd(numeric_weight(law, lam, n)) : osn_xd_exp(lw);
        if (n == cap) {
            xd *d = realloc(c, (size_t)(2 * cap) * sizeof *c);
            if (!d) {
                free(c);
                return NULL;
            }
            c = d;
            cap *= 2;
        }
        c[n++] = w;
        cum += osn_xd_to_double(w);
        /* Past the mean, once what is left cannot matter. */
        if ((double)n > mean_events && 1 - cum < TAIL)
            break;
        if ((double)n > mean_events && osn_xd_to_double(w) < TAIL * 1e-3 && 1 - cum < 1e-12)
            break; /* numeric laws: quadrature leaves the total a few ulps off 1 */
        if (n >= MAX_TERMS) {
            free(c);
            *err = OSN_ENOTSUP;
            return NULL;
        }
    }
    /* Renormalise: the truncated tail and quadrature error are spread over all terms. */
    xd total = osn_xd(0);
    for (long i = 0; i < n; i++)
        total = osn_xd_add(total, c[i]);
    for (long i = 0; i < n; i++)
        c[i] = osn_xd_div(c[i], total);
    *M = n;
    *err = 0;
    return c;
}
