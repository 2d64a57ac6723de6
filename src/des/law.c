/*
 * Service-time laws (struct osn_law, include/osn/model.h): checks, draws, means and variances.
 *
 * Every law is parameterised by its mean 1/rate: erlang k has k phases of rate k*rate; uniform
 * is centred on the mean with half-width mean*cv*sqrt(3); lognormal has sigma^2 = log(1 + cv^2)
 * and mu = log(mean) - sigma^2/2. Draws use inversion where it is exact and cheap (exponential,
 * hyperexponential branch, uniform, empirical index); erlang multiplies uniforms in groups of 8
 * (a product of 8 values >= 2^-53 cannot underflow) so it takes one log per 8 phases.
 */
#include "osn/des.h"

#include <math.h>
#include <stdio.h>

#include "osn/err.h"

static int bad(char *msg, size_t size, const char *what)
{
    if (msg && size)
        snprintf(msg, size, "%s", what);
    return OSN_EINVAL;
}

int osn_des_law_check(const struct osn_law *law, char *msg, size_t msgsize)
{
    if (!law)
        return OSN_EINVAL;
    if (law->kind != OSN_LAW_HYPEREXP && law->kind != OSN_LAW_EMPIRICAL &&
        !(isfinite(law->rate) && law->rate > 0))
        return bad(msg, msgsize, "the service rate must be a positive number");
    switch (law->kind) {
    case OSN_LAW_EXP:
    case OSN_LAW_DET:
        return 0;
    case OSN_LAW_ERLANG:
        return law->k >= 1 ? 0 : bad(msg, msgsize, "erlang needs k >= 1 phases");
    case OSN_LAW_HYPEREXP: {
        double sum = 0;
        if (law->nbranch < 1 || law->nbranch > OSN_LAW_MAX_BRANCHES)
            return bad(msg, msgsize, "hyperexp needs 1 to 8 branches");
        for (int i = 0; i < law->nbranch; i++) {
            if (!(law->probs[i] >= 0) || !(isfinite(law->rates[i]) && law->rates[i] > 0))
                return bad(msg, msgsize, "hyperexp needs probabilities >= 0 and rates > 0");
            sum += law->probs[i];
        }
        return fabs(sum - 1) < 1e-9 ? 0 : bad(msg, msgsize, "hyperexp probabilities must sum to 1");
    }
    case OSN_LAW_UNIFORM:
        return law->cv >= 0 && law->cv <= 1 / sqrt(3.0) + 1e-15
                       ? 0
                       : bad(msg, msgsize, "uniform needs 0 <= cv <= 1/sqrt(3)");
    case OSN_LAW_LOGNORMAL:
        return isfinite(law->cv) && law->cv > 0 ? 0 : bad(msg, msgsize, "lognormal needs cv > 0");
    case OSN_LAW_EMPIRICAL:
        if (!law->samples || law->nsamples == 0)
            return bad(msg, msgsize, "empirical needs at least one sample");
        for (size_t i = 0; i < law->nsamples; i++)
            if (!(isfinite(law->samples[i]) && law->samples[i] >= 0))
                return bad(msg, msgsize, "empirical samples must be finite and >= 0");
        return 0;
    }
    return bad(msg, msgsize, "unknown service law");
}

/* Sum of k exponentials of mean 1. */
static double erlang1(int k, struct osn_rng *r)
{
    double sum = 0;
    while (k > 0) {
        double p = 1;
        int m = k < 8 ? k : 8;
        for (int i = 0; i < m; i++)
            p *= osn_rng_u01_open(r);
        sum -= log(p);
        k -= m;
    }
    return sum;
}

double osn_des_law_draw(const struct osn_law *law, struct osn_rng *r)
{
    switch (law->kind) {
    case OSN_LAW_EXP:
        return osn_des_exp1(r) / law->rate;
    case OSN_LAW_DET:
        return 1 / law->rate;
    case OSN_LAW_ERLANG:
        return erlang1(law->k, r) / (law->k * law->rate);
    case OSN_LAW_HYPEREXP: {
        double u = osn_rng_u01(r), c = 0;
        int i = 0;
        for (; i < law->nbranch - 1; i++) {
            c += law->probs[i];
            if (u < c)
                break;
        }
        return osn_des_exp1(r) / law->rates[i];
    }
    case OSN_LAW_UNIFORM: {
        double mean = 1 / law->rate, a = mean * law->cv * sqrt(3.0);
        return mean - a + 2 * a * osn_rng_u01(r);
    }
    case OSN_LAW_LOGNORMAL: {
        double s2 = log1p(law->cv * law->cv);
        double mu = -log(law->rate) - s2 / 2;
        return exp(mu + sqrt(s2) * osn_rng_normal(r));
    }
    case OSN_LAW_EMPIRICAL: {
        size_t i = (size_t)(osn_rng_u01(r) * (double)law->nsamples);
        return law->samples[i < law->nsamples ? i : law->nsamples - 1];
    }
    }
    return NAN;
}

double osn_des_law_mean(const struct osn_law *law)
{
    double m = 0;
    switch (law->kind) {
    case OSN_LAW_HYPEREXP:
        for (int i = 0; i < law->nbranch; i++)
            m += law->probs[i] / law->rates[i];
        return m;
    case OSN_LAW_EMPIRICAL:
        for (size_t i = 0; i < law->nsamples; i++)
            m += law->samples[i];
        return m / (double)law->nsamples;
    default:
        return 1 / law->rate;
    }
}

double osn_des_slowed_end(double t, double work, double a, double b, double f)
{
    if (!(a < b) || t >= b || t + work <= a)
        return t + work;
    if (t < a) { /* the part before the slowdown at full speed */
        work -= a - t;
        t = a;
    }
    double room = (b - t) * f; /* the work the slowdown's rest can do */
    if (work <= room || !isfinite(b))
        return t + work / f;
    return b + (work - room);
}

double osn_des_law_var(const struct osn_law *law)
{
    double mean = osn_des_law_mean(law), m2 = 0;
    switch (law->kind) {
    case OSN_LAW_EXP:
        return mean * mean;
    case OSN_LAW_DET:
        return 0;
    case OSN_LAW_ERLANG:
        return mean * mean / law->k;
    case OSN_LAW_HYPEREXP:
        for (int i = 0; i < law->nbranch; i++)
            m2 += 2 * law->probs[i] / (law->rates[i] * law->rates[i]);
        return m2 - mean * mean;
    case OSN_LAW_UNIFORM:
    case OSN_LAW_LOGNORMAL:
        return mean * mean * law->cv * law->cv;
    case OSN_LAW_EMPIRICAL:
        for (size_t i = 0; i < law->nsamples; i++)
            m2 += (law->samples[i] - mean) * (law->samples[i] - mean);
        return m2 / (double)law->nsamples;
    }
    return NAN;
}
