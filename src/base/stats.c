/*
 * Output statistics (include/osn/stats.h). The t distribution function goes through the
 * regularised incomplete beta function (continued fraction, modified Lentz); the quantile
 * inverts it by safeguarded Newton steps from the normal quantile. The normal quantile is
 * Acklam's rational approximation polished by one Halley step on erfc, which brings it to
 * double precision. tests/test_stats.c compares all of them with SciPy's values.
 */
#include "osn/stats.h"

#include <math.h>

#include "osn/err.h"

#define PI 3.14159265358979323846

void osn_welford_add(struct osn_welford *w, double x)
{
    w->n++;
    double d = x - w->mean;
    w->mean += d / (double)w->n;
    w->m2 += d * (x - w->mean);
}

void osn_welford_merge(struct osn_welford *a, const struct osn_welford *b)
{
    if (b->n == 0)
        return;
    if (a->n == 0) {
        *a = *b;
        return;
    }
    double na = (double)a->n, nb = (double)b->n, n = na + nb;
    double d = b->mean - a->mean;
    a->mean += d * nb / n;
    a->m2 += b->m2 + d * d * na * nb / n;
    a->n += b->n;
}

double osn_welford_var(const struct osn_welford *w)
{
    return w->n < 2 ? NAN : w->m2 / (double)(w->n - 1);
}

double osn_welford_halfwidth(const struct osn_welford *w, double level)
{
    if (w->n < 2)
        return NAN;
    double t = osn_stats_t_quantile(0.5 + level / 2, (double)(w->n - 1));
    return t * sqrt(osn_welford_var(w) / (double)w->n);
}

/* Acklam's approximation (relative error below 1.15e-9 over (0, 1)). */
static double acklam(double p)
{
    static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,
                               -2.759285104469687e+02, 1.383577518672690e+02,
                               -3.066479806614716e+01, 2.506628277459239e+00};
    static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02,
                               -1.556989798598866e+02, 6.680131188771972e+01,
                               -1.328068155288572e+01};
    static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01,
                               -2.400758277161838e+00, -2.549732539343734e+00,
                               4.374664141464968e+00,  2.938163982698783e+00};
    static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                               3.754408661907416e+00};
    const double plow = 0.02425;

    if (p < plow) {
        double q = sqrt(-2 * log(p));
        return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
               ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
    }
    if (p > 1 - plow) {
        double q = sqrt(-2 * log1p(-p));
        return -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
               ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
    }
    double q = p - 0.5, r = q * q;
    return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
           (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

double osn_stats_normal_quantile(double p)
{
    if (!(p >= 0 && p <= 1))
        return NAN;
    if (p == 0)
        return -INFINITY;
    if (p == 1)
        return INFINITY;
    double x = acklam(p);
    /* One Halley step on Phi(x) - p, with Phi from erfc (accurate in both tails). */
    double e = 0.5 * erfc(-x / sqrt(2)) - p;
    double u = e * sqrt(2 * PI) * exp(x * x / 2);
    return x - u / (1 + x * u / 2);
}

/* Continued fraction of the incomplete beta function (modified Lentz), for x < (a+1)/(a+b+2). */
static double beta_cf(double a, double b, double x)
{
    const double tiny = 1e-300;
    double c = 1, d = 1 - (a + b) * x / (a + 1);

    if (fabs(d) < tiny)
        d = tiny;
    d = 1 / d;
    double h = d;
    for (int m = 1; m <= 500; m++) {
        double m2 = 2.0 * m;
        double num = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
        d = 1 + num * d;
        c = 1 + num / c;
        d = fabs(d) < tiny ? 1 / tiny : 1 / d;
        c = fabs(c) < tiny ? tiny : c;
        h *= d * c;
        num = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
        d = 1 + num * d;
        c = 1 + num / c;
        d = fabs(d) < tiny ? 1 / tiny : 1 / d;
        c = fabs(c) < tiny ? tiny : c;
        double del = d * c;
        h *= del;
        if (fabs(del - 1) < 1e-16)
            break;
    }
    return h;
}

/* The regularised incomplete beta function I_x(a, b). */
static double inc_beta(double a, double b, double x)
{
    if (x <= 0)
        return 0;
    if (x >= 1)
        return 1;
    double lbt = lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x);
    if (x < (a + 1) / (a + b + 2))
        return exp(lbt) * beta_cf(a, b, x) / a;
    return 1 - exp(lbt) * beta_cf(b, a, 1 - x) / b;
}

double osn_stats_t_cdf(double t, double df)
{
    if (isnan(t) || !(df > 0))
        return NAN;
    if (isinf(t))
        return t > 0 ? 1 : 0;
    /* P(|T| > |t|) = I_{df/(df+t^2)}(df/2, 1/2). */
    double x = df / (df + t * t);
    double tail = 0.5 * inc_beta(df / 2, 0.5, x);
    return t > 0 ? 1 - tail : tail;
}

/* The t density. */
static double t_pdf(double t, double df)
{
    double lc = lgamma((df + 1) / 2) - lgamma(df / 2) - 0.5 * log(df * PI);
    return exp(lc - (df + 1) / 2 * log1p(t * t / df));
}

double osn_stats_t_quantile(double p, double df)
{
    if (!(p > 0 && p < 1) || !(df > 0))
        return NAN;
    if (p == 0.5)
        return 0;
    if (p < 0.5)
        return -osn_stats_t_quantile(1 - p, df);
    if (df == 1)
        return tan(PI * (p - 0.5));
    if (df == 2)
        return (2 * p - 1) / sqrt(2 * p * (1 - p));
    /* Newton from the normal quantile (which is below the t quantile), kept inside a bracket
     * [lo, hi] that bisection narrows whenever a Newton step would leave it. */
    double lo = 0, hi = INFINITY, x = osn_stats_normal_quantile(p);
    for (int i = 0; i < 200; i++) {
        double f = osn_stats_t_cdf(x, df) - p;
        if (f < 0)
            lo = x;
        else
            hi = x;
        double step = f / t_pdf(x, df);
        double nx = x - step;
        if (!(nx > lo && nx < hi))
            nx = isinf(hi) ? 2 * x + 1 : (lo + hi) / 2;
        if (fabs(nx - x) <= 1e-15 * fabs(nx))
            return nx;
        x = nx;
    }
    return x;
}

double osn_stats_jackknife_halfwidth(const double *loo, int n, double level)
{
    if (n < 2)
        return NAN;
    double mean = 0, ss = 0;
    for (int i = 0; i < n; i++) {
        if (!isfinite(loo[i]))
            return NAN;
        mean += loo[i];
    }
    mean /= n;
    for (int i = 0; i < n; i++)
        ss += (loo[i] - mean) * (loo[i] - mean);
    double t = osn_stats_t_quantile(0.5 + level / 2, n - 1);
    return t * sqrt(ss * (n - 1) / n);
}

int osn_stats_batch_means(const double *x, size_t n, size_t nbatch, double level, double *mean,
                          double *halfwidth, double *lag1)
{
    if (!x || nbatch < 2 || n < nbatch || !mean || !halfwidth)
        return OSN_EINVAL;
    size_t len = n / nbatch;
    struct osn_welford w = {0};
    double prev = 0, cov = 0;

    for (size_t b = 0; b < nbatch; b++) {
        double s = 0;
        for (size_t i = 0; i < len; i++)
            s += x[b * len + i];
        s /= (double)len;
        osn_welford_add(&w, s);
    }
    *mean = w.mean;
    *halfwidth = osn_welford_halfwidth(&w, level);
    if (lag1) {
        /* Second pass: sum of (m_b - mean)(m_{b+1} - mean) over the batch means. */
        for (size_t b = 0; b < nbatch; b++) {
            double s = 0;
            for (size_t i = 0; i < len; i++)
                s += x[b * len + i];
            s /= (double)len;
            if (b > 0)
                cov += (prev - w.mean) * (s - w.mean);
            prev = s;
        }
        *lag1 = w.m2 > 0 ? cov / w.m2 : 0;
    }
    return 0;
}
