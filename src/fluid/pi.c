/*
 * The PI retransmission-rate controller of protocols.md section 7.3, in velocity form, and the
 * phase-margin gain design of its RTD loop.
 *
 * Clock-free: the caller hands over one measurement per control interval and applies the cap
 * it gets back. The cap limits retransmissions only (originals are never throttled): this
 * deliberately departs from RFC 6357 section 12, as the Hong et al. papers do.
 */
#include "osn/fluid.h"

#include <math.h>

#include "osn/err.h"

void osn_fluid_pi_init(struct osn_fluid_pi *pi, const struct osn_fluid_pi_cfg *cfg)
{
    pi->cfg = *cfg;
    pi->allow = cfg->max_rate;
    pi->e_prev = 0;
    pi->started = false;
}

double osn_fluid_pi_update(struct osn_fluid_pi *pi, double measured)
{
    double e, allow;

    if (isnan(measured))
        return pi->allow;
    e = pi->cfg.target - measured;
    if (!pi->started) {
        pi->e_prev = e; /* bumpless start: no proportional kick on the first sample */
        pi->started = true;
    }
    allow = pi->allow + pi->cfg.kp * (e - pi->e_prev) + pi->cfg.ki * pi->cfg.interval * e;
    if (allow < 0)
        allow = 0;
    if (allow > pi->cfg.max_rate)
        allow = pi->cfg.max_rate;
    pi->allow = allow;
    pi->e_prev = e;
    return allow;
}

int osn_fluid_pi_design(double mu, double omega_c, double pm_deg, double theta, double *kp,
                        double *ki)
{
    const double pi = 3.14159265358979323846;
    double phi;

    if (!(mu > 0 && omega_c > 0 && pm_deg > 0 && theta >= 0) || !kp || !ki)
        return OSN_EINVAL;
    phi = pm_deg * pi / 180 + omega_c * theta; /* the zero must supply PM plus the dead time */
    if (!(phi < pi / 2))
        return OSN_EINVAL;
    *kp = mu * omega_c * sin(phi);
    *ki = mu * omega_c * omega_c * cos(phi);
    return 0;
}
