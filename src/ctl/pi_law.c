/*
 * The PI law of docs/protocols.md section 7.3, written once for every user: the "pi" controller
 * (src/ctl/pi.c, on the simulated and the real network) and the fluid model (src/fluid/run.c).
 * Velocity form, clamped, bumpless start; and the phase-margin gain design of its RTD loop.
 *
 * The arithmetic is kept in one expression order, out + kp (e - e_prev) + ki interval e, so
 * that every user computes the same doubles (the network simulator's results are compared bit
 * for bit).
 */
#include <math.h>

#include "osn/ctl.h"
#include "osn/err.h"

void osn_ctl_pi_law_init(struct osn_ctl_pi_law *law, const struct osn_ctl_pi_law_cfg *cfg)
{
    law->cfg = *cfg;
    law->out = cfg->hi;
    law->e_prev = 0;
    law->started = false;
}

double osn_ctl_pi_law_update(struct osn_ctl_pi_law *law, double measured)
{
    const struct osn_ctl_pi_law_cfg *k = &law->cfg;
    double e, out;

    if (isnan(measured))
        return law->out;
    e = k->target - measured;
    if (!law->started) {
        law->e_prev = e;
        law->started = true;
    }
    out = law->out + k->kp * (e - law->e_prev) + k->ki * k->interval * e;
    if (out < k->lo)
        out = k->lo;
    if (out > k->hi)
        out = k->hi;
    law->out = out;
    law->e_prev = e;
    return out;
}

int osn_ctl_pi_design(double mu, double omega_c, double pm_deg, double theta, double *kp,
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
