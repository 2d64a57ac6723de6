/*
 * What a load factor of `osn testbed --loads` sets in the scenario's [source] (testbed.h).
 *
 * A row's rate is load x capacity calls/s: the mean the sources offer in the measured window.
 * Each kind of source reaches it by one factor f = rate / (the scenario's own mean in the
 * window), by which every rate of the source is multiplied, so that its shape stays the
 * scenario's:
 *
 *   poisson   source.rate x f;
 *   mmpp      source.mmpp_rates x f (both phases), source.mmpp_switch kept: the phases last as
 *             long as before, so the burstiness (the index of dispersion of the counts, which
 *             grows with the rates) is the scenario's at its own load; the scenario's mean is
 *             the stationary one, (r0 s1 + r1 s0) / (s0 + s1), s_k the rate of leaving phase k;
 *   profile   source.rate and every rate of source.steps x f, the step times, the burst's
 *             start, length and factor kept; the scenario's mean is the time average of the
 *             profile over the window (warm-up, warm-up + duration], burst included.
 *
 * The simulator and the generators are given the same keys (a fan-in's generators each their
 * share), so that both offer the same process.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "testbed.h"

/* The profile's rate at t and when it next changes (src/elem/uac.c, osn_uac_profile_rate: the
 * cli may not include elem, and these few lines define the law the generator draws from). */
static double profile_rate(const struct osn_net_source_cfg *s, double t, double *next)
{
    double r = s->rate, tn = INFINITY;
    for (int i = 0; i < s->nsteps; i++) {
        if (s->step_t[i] <= t)
            r = s->step_rate[i];
        else if (s->step_t[i] < tn)
            tn = s->step_t[i];
    }
    if (s->burst_len > 0) {
        if (t >= s->burst_t && t < s->burst_t + s->burst_len) {
            r *= s->burst_factor;
            tn = fmin(tn, s->burst_t + s->burst_len);
        } else if (t < s->burst_t) {
            tn = fmin(tn, s->burst_t);
        }
    }
    *next = tn;
    return r;
}

double tb_source_mean(const struct osn_net_source_cfg *s, double t0, double t1)
{
    switch (s->process) {
    case OSN_NET_POISSON:
    case OSN_NET_BULK:
        return s->rate;
    case OSN_NET_MMPP: {
        double out = s->mmpp_switch[0] + s->mmpp_switch[1];
        if (!(out > 0)) /* it never leaves phase 0, where it starts */
            return s->mmpp_rate[0];
        return (s->mmpp_rate[0] * s->mmpp_switch[1] + s->mmpp_rate[1] * s->mmpp_switch[0]) / out;
    }
    case OSN_NET_PROFILE: {
        double area = 0, t = t0, next;
        if (!(t1 > t0))
            return profile_rate(s, t0, &next);
        /* Piecewise constant: at most 2 changes per step and 2 for the burst. */
        for (int k = 0; t < t1 && k < 2 * OSN_NET_MAX_STEPS + 4; k++) {
            double r = profile_rate(s, t, &next);
            double u = fmin(next, t1);
            area += r * (u - t);
            t = u;
        }
        return area / (t1 - t0);
    }
    }
    return NAN;
}

int tb_source_check(const struct osn_net_cfg *c, double t0, double t1)
{
    static const char *const key[] = {[OSN_NET_POISSON] = "source.rate",
                                      [OSN_NET_MMPP] = "source.mmpp_rates",
                                      [OSN_NET_PROFILE] = "source.rate and source.steps",
                                      [OSN_NET_BULK] = "source.rate"};
    double m = tb_source_mean(&c->src, t0, t1);
    if (!(m > 0) || !isfinite(m))
        return osn_cli_die("testbed",
                           "%s: the source offers %g calls/s on average in the window (%g, %g] "
                           "s, so no load factor can scale it: give %s a positive rate",
                           key[c->src.process], m, t0, t1, key[c->src.process]);
    return 0;
}

int tb_source_sets(const struct osn_net_source_cfg *s, double factor,
                   char out[TB_SOURCE_SETS][TB_SET_MAX])
{
    int n = 0;
    snprintf(out[n++], sizeof out[0], "source.rate=%.17g", s->rate * factor);
    if (s->process == OSN_NET_MMPP)
        snprintf(out[n++], sizeof out[0], "source.mmpp_rates=%.17g, %.17g",
                 s->mmpp_rate[0] * factor, s->mmpp_rate[1] * factor);
    if (s->process == OSN_NET_PROFILE && s->nsteps > 0) {
        size_t len = (size_t)snprintf(out[n], sizeof out[0], "source.steps=");
        for (int i = 0; i < s->nsteps && len < sizeof out[0]; i++)
            len += (size_t)snprintf(out[n] + len, sizeof out[0] - len, "%s%.12g %.12g",
                                    i ? ", " : "", s->step_t[i], s->step_rate[i] * factor);
        n++;
    }
    return n;
}
