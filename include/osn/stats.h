/*
 * Statistics for simulation output: running mean and variance (Welford), Student t and normal
 * quantiles, confidence half-widths, the jackknife over replications, and batch means.
 *
 * Every estimate a simulation prints carries a half-width from here. Replications give
 * independent, identically distributed totals; a ratio of totals (a mean return time = total
 * return time / number of returns) is estimated from the pooled totals and its half-width comes
 * from the jackknife, which for a plain mean is exactly the textbook t interval.
 */
#ifndef OSN_STATS_H
#define OSN_STATS_H

#include <stddef.h>

/* Running mean and sum of squared deviations (Welford 1962); zero-initialise to start. */
struct osn_welford {
    long n;
    double mean;
    double m2; /* sum of (x - mean)^2 */
};

/* Adds one observation. */
void osn_welford_add(struct osn_welford *w, double x);

/* Combines two accumulators into *a (Chan et al.), as if b's observations were added to a. */
void osn_welford_merge(struct osn_welford *a, const struct osn_welford *b);

/* The sample variance (divisor n - 1); NaN when n < 2. */
double osn_welford_var(const struct osn_welford *w);

/* Half-width of the `level` (e.g. 0.95) t confidence interval of the mean; NaN when n < 2. */
double osn_welford_halfwidth(const struct osn_welford *w, double level);

/* The standard normal quantile, to about 1e-15 relative; p in (0, 1), else NaN or +-inf. */
double osn_stats_normal_quantile(double p);

/* The Student t distribution function with df > 0 degrees of freedom. */
double osn_stats_t_cdf(double t, double df);

/* The Student t quantile, to about 1e-12 relative; p in (0, 1), df > 0 (NaN otherwise). */
double osn_stats_t_quantile(double p, double df);

/*
 * Jackknife half-width at `level` from n >= 2 leave-one-out estimates loo[0..n-1]:
 * t_{(1+level)/2, n-1} * sqrt((n-1)/n * sum (loo_i - mean)^2). NaN when n < 2 or any estimate
 * is not finite.
 */
double osn_stats_jackknife_halfwidth(const double *loo, int n, double level);

/*
 * Batch means: splits x[0..n-1] into `nbatch` consecutive batches of floor(n/nbatch)
 * observations (the remainder at the end is dropped), and writes the grand mean of the batches,
 * the t half-width at `level` over the batch means, and, when lag1 is not NULL, the lag-1
 * autocorrelation of the batch means (near 0 when the batches are long enough). Returns 0, or
 * OSN_EINVAL when nbatch < 2 or n < nbatch.
 */
int osn_stats_batch_means(const double *x, size_t n, size_t nbatch, double level, double *mean,
                          double *halfwidth, double *lag1);

#endif
