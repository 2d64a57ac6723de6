/*
 * The load generator's random draws: the arrival process of the scenario's source (Poisson,
 * MMPP-2, a piecewise-constant profile with a burst), the exponential hold time and the retry
 * delay law. The simulator draws the same laws with src/des (osn_des_arr_next, osn_des_law_draw);
 * the node may not include des (DESIGN.md's arrows: node -> elem, sip, ctl), so the few lines
 * of each law are written again here, from the same definitions:
 *   Poisson   exponential gaps of mean 1/rate;
 *   MMPP-2    in phase k, arrivals at rate lam[k] race the phase change at rate out[k] (the
 *             competing exponentials of des/arrivals.c); it starts in phase 0, as the
 *             simulator's does;
 *   profile   the rate in force at t, the exponential clock restarted at each rate change
 *             (exact: the process is memoryless), as src/sim/net_source.c.
 */
#include <math.h>

#include "node_int.h"

double gen_exp1(struct osn_rng *r)
{
    return -log(osn_rng_u01_open(r));
}

/* A standard normal variate (Box-Muller; the second value is dropped). */
static double normal(struct osn_rng *r)
{
    double u = osn_rng_u01_open(r), v = osn_rng_u01(r);
    return sqrt(-2 * log(u)) * cos(6.283185307179586 * v);
}

/* The profile's next arrival after t (see src/sim/net_source.c, osn__net_next_arrival). */
static double profile_next(const struct osn_node_source *sc, struct osn_rng *rng, double t)
{
    const struct osn_uac_profile p = {sc->rate,    sc->nsteps,    sc->step_t,      sc->step_rate,
                                      sc->burst_t, sc->burst_len, sc->burst_factor};
    for (;;) {
        double tn, r = osn_uac_profile_rate(&p, t, &tn);
        double x = r > 0 ? t + gen_exp1(rng) / r : INFINITY;
        if (x < tn)
            return x;
        if (!isfinite(tn))
            return INFINITY;
        t = tn;
    }
}

double gen_next_arrival(const struct osn_node_source *sc, struct gen_arrivals *a)
{
    switch (sc->process) {
    case OSN_NODE_POISSON:
        return a->t = sc->rate > 0 ? a->t + gen_exp1(&a->rng) / sc->rate : INFINITY;
    case OSN_NODE_MMPP:
        for (;;) {
            double lam = sc->mmpp_rate[a->phase], out = sc->mmpp_switch[a->phase];
            double tot = lam + out;
            if (!(tot > 0))
                return a->t = INFINITY;
            a->t += gen_exp1(&a->rng) / tot;
            if (osn_rng_u01(&a->rng) * tot < lam)
                return a->t;
            a->phase ^= 1;
        }
    case OSN_NODE_PROFILE:
        return a->t = profile_next(sc, &a->rng, a->t);
    }
    return INFINITY;
}

double gen_peak_rate(const struct osn_node_source *sc)
{
    switch (sc->process) {
    case OSN_NODE_MMPP:
        return fmax(sc->mmpp_rate[0], sc->mmpp_rate[1]);
    case OSN_NODE_PROFILE: {
        double r = sc->rate;
        for (int i = 0; i < sc->nsteps; i++)
            r = fmax(r, sc->step_rate[i]);
        return sc->burst_len > 0 && sc->burst_factor > 1 ? r * sc->burst_factor : r;
    }
    default:
        return sc->rate;
    }
}

double gen_retry_delay(const struct osn_node_source *sc, struct osn_rng *r)
{
    double m = sc->retry_delay, cv = sc->retry_delay_cv;
    if (!(m > 0))
        return 0;
    switch (sc->retry_delay_law) {
    case OSN_NODE_RETRY_DET:
        return m;
    case OSN_NODE_RETRY_UNIFORM: {
        double a = m * cv * sqrt(3.0);
        return m - a + 2 * a * osn_rng_u01(r);
    }
    case OSN_NODE_RETRY_LOGNORMAL: {
        double s2 = log1p(cv * cv);
        return exp(log(m) - s2 / 2 + sqrt(s2) * normal(r));
    }
    default:
        return m * gen_exp1(r);
    }
}

void gen_hist_add(uint32_t hist[OSN_NODE_HB], double d)
{
    hist[osn_uac_delay_bin(d)] += 1;
}

double osn_node_hist_quantile(const uint32_t hist[OSN_NODE_HB], double q)
{
    double h[OSN_NODE_HB]; /* the simulator's histograms are of doubles: one quantile for both */
    for (int b = 0; b < OSN_NODE_HB; b++)
        h[b] = hist[b];
    return osn_uac_delay_quantile(h, q);
}
