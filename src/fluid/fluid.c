/*
 * Fluid model configuration: defaults, checks, names, and the arrival and capacity profiles.
 *
 * The profiles are integrated exactly over each slot, so a burst whose edges fall inside a slot
 * contributes just the part of the slot it covers, and a slowdown removes exactly
 * (1 - factor) x rate x (overlap with the window) from the server's cumulative capacity.
 */
#include "osn/fluid.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "fluid_int.h"
#include "osn/err.h"
#include "osn/rng.h"

void osn_fluid_cfg_default(struct osn_fluid_cfg *cfg)
{
    struct osn_fluid_cfg c = {0};

    c.topology = OSN_FLUID_SINGLE;
    c.slot = 0.05;
    c.horizon = 120;
    c.t1 = 0.5;
    c.retx = OSN_FLUID_MAX_RETX;
    c.profile.shape = OSN_FLUID_CONSTANT;
    c.profile.base_rate = 60;
    c.profile.slowdown_factor = 1;
    /* MMPP: 10 s at 50/s on average, then bursts of 1.1 s at 150/s; P(burst) = 0.1, mean 60/s */
    c.profile.mmpp_rate[0] = 50;
    c.profile.mmpp_rate[1] = 150;
    c.profile.mmpp_switch[0] = 0.1;
    c.profile.mmpp_switch[1] = 0.9;
    c.profile.seed = 1;
    for (int h = 0; h < OSN_FLUID_MAX_HOPS; h++) {
        c.server[h].rate = 100;
        c.server[h].buffer = INFINITY;
        c.server[h].response_cost = 1;
        c.server[h].retx_cost = 1;
    }
    c.control.kind = OSN_FLUID_CTL_NONE;
    c.control.interval = 0.1;
    c.control.target = 0.25;
    c.control.max_rate = 100;
    *cfg = c;
}

const char *const osn_fluid_topology_names[] = {"single", "tandem", NULL};
const char *const osn_fluid_shape_names[] = {"constant", "step", "burst", "slowdown", "mmpp", NULL};
const char *const osn_fluid_ctl_names[] = {"none", "rrrc", "rtd", "prsm", NULL};

/* names[i], or "?" when i is not below n, the names' count. */
static const char *name_of(const char *const *names, size_t n, unsigned i)
{
    return i < n ? names[i] : "?";
}

#define NAME_OF(names, i) name_of(names, sizeof names / sizeof names[0] - 1, (unsigned)(i))

const char *osn_fluid_topology_name(enum osn_fluid_topology t)
{
    return NAME_OF(osn_fluid_topology_names, t);
}

const char *osn_fluid_shape_name(enum osn_fluid_shape s)
{
    return NAME_OF(osn_fluid_shape_names, s);
}

const char *osn_fluid_ctl_name(enum osn_fluid_ctl c)
{
    return NAME_OF(osn_fluid_ctl_names, c);
}

const char *osn_fluid_state_name(enum osn_fluid_state s)
{
    switch (s) {
    case OSN_FLUID_RECOVERED:
        return "recovered";
    case OSN_FLUID_STANDING:
        return "standing";
    case OSN_FLUID_GROWING:
        return "growing";
    case OSN_FLUID_FAILING:
        return "failing";
    }
    return "?";
}

static int bad(char *err, size_t errsize, const char *what)
{
    if (err && errsize)
        snprintf(err, errsize, "%s", what);
    return OSN_EINVAL;
}

/* True for a finite x >= 0. */
static bool nonneg(double x)
{
    return isfinite(x) && x >= 0;
}

int osn_fluid_cfg_check(const struct osn_fluid_cfg *cfg, char *err, size_t errsize)
{
    const struct osn_fluid_profile *p;
    const struct osn_fluid_pi_cfg *ctl;
    int hops;

    if (!cfg)
        return bad(err, errsize, "no configuration");
    p = &cfg->profile;
    ctl = &cfg->control;
    hops = cfg->topology == OSN_FLUID_TANDEM ? 2 : 1;
    if (!(isfinite(cfg->t1) && cfg->t1 > 0))
        return bad(err, errsize, "t1 must be a positive number of seconds");
    if (!(isfinite(cfg->slot) && cfg->slot > 0 && cfg->slot <= cfg->t1))
        return bad(err, errsize, "slot must be positive and at most t1");
    if (!(isfinite(cfg->horizon) && cfg->horizon >= cfg->slot))
        return bad(err, errsize, "horizon must be at least one slot");
    if (cfg->retx < 0 || cfg->retx > OSN_FLUID_MAX_RETX)
        return bad(err, errsize, "retransmissions must be 0..6 (a 7th would fall after Timer B)");
    if (!nonneg(p->base_rate) || !nonneg(p->step_rate) || !nonneg(p->burst_rate))
        return bad(err, errsize, "arrival rates must be finite and >= 0");
    if (!nonneg(p->step_time) || !nonneg(p->burst_start) || !nonneg(p->burst_duration) ||
        !nonneg(p->slowdown_start) || !nonneg(p->slowdown_duration))
        return bad(err, errsize, "profile times must be finite and >= 0");
    if (p->shape == OSN_FLUID_MMPP && (!nonneg(p->mmpp_rate[0]) || !nonneg(p->mmpp_rate[1]) ||
                                       !(isfinite(p->mmpp_switch[0]) && p->mmpp_switch[0] > 0) ||
                                       !(isfinite(p->mmpp_switch[1]) && p->mmpp_switch[1] > 0)))
        return bad(err, errsize, "MMPP rates must be >= 0 and its switch rates > 0");
    if (!(p->slowdown_factor >= 0 && p->slowdown_factor <= 1))
        return bad(err, errsize, "slowdown_factor must be in [0, 1]");
    for (int h = 0; h < hops; h++) {
        const struct osn_fluid_server *s = &cfg->server[h];
        if (!(isfinite(s->rate) && s->rate > 0))
            return bad(err, errsize, "server rate must be positive");
        if (!(s->buffer >= 0)) /* INFINITY passes */
            return bad(err, errsize, "server buffer must be >= 0 (or infinite)");
        if (!nonneg(s->delay_up) || !nonneg(s->delay_down))
            return bad(err, errsize, "link delays must be finite and >= 0");
        if (!nonneg(s->response_cost) || !nonneg(s->retx_cost))
            return bad(err, errsize, "work costs must be finite and >= 0");
    }
    if (ctl->kind == OSN_FLUID_CTL_PRSM && cfg->topology != OSN_FLUID_SINGLE)
        return bad(err, errsize, "control prsm runs on the single topology only");
    if (ctl->kind == OSN_FLUID_CTL_RRRC || ctl->kind == OSN_FLUID_CTL_RTD) {
        if (!(isfinite(ctl->interval) && ctl->interval >= cfg->slot))
            return bad(err, errsize, "control interval must be at least one slot");
        if (!nonneg(ctl->target) || !nonneg(ctl->kp) || !nonneg(ctl->ki))
            return bad(err, errsize, "control target and gains must be finite and >= 0");
        if (!(isfinite(ctl->max_rate) && ctl->max_rate > 0))
            return bad(err, errsize, "control max_rate must be positive");
    }
    if (cfg->horizon / cfg->slot > 1e8)
        return bad(err, errsize, "more than 1e8 slots: raise slot or lower horizon");
    return 0;
}

double osn__fluid_overlap(double a0, double a1, double b0, double b1)
{
    double lo = a0 > b0 ? a0 : b0;
    double hi = a1 < b1 ? a1 : b1;
    return hi > lo ? hi - lo : 0;
}

double osn__fluid_offered(const struct osn_fluid_cfg *cfg, long n)
{
    const struct osn_fluid_profile *p = &cfg->profile;
    double t0 = (double)n * cfg->slot, t1 = (double)(n + 1) * cfg->slot;

    switch (p->shape) {
    case OSN_FLUID_STEP:
        return p->base_rate * osn__fluid_overlap(t0, t1, 0, p->step_time) +
               p->step_rate * osn__fluid_overlap(t0, t1, p->step_time, INFINITY);
    case OSN_FLUID_BURST:
        return p->base_rate * cfg->slot +
               p->burst_rate * osn__fluid_overlap(t0, t1, p->burst_start,
                                                  p->burst_start + p->burst_duration);
    case OSN_FLUID_CONSTANT:
    case OSN_FLUID_SLOWDOWN:
    case OSN_FLUID_MMPP: /* drawn as one path by osn__fluid_mmpp_offered() */
        break;
    }
    return p->base_rate * cfg->slot;
}

void osn__fluid_mmpp_offered(const struct osn_fluid_cfg *cfg, double *out, long N)
{
    const struct osn_fluid_profile *p = &cfg->profile;
    struct osn_rng rng;
    double t = 0, end = (double)N * cfg->slot;
    int phase = 0;

    osn_rng_seed(&rng, p->seed);
    for (long n = 0; n < N; n++)
        out[n] = 0;
    while (t < end) {
        double stay = -log(osn_rng_u01_open(&rng)) / p->mmpp_switch[phase];
        double t2 = t + stay < end ? t + stay : end;
        /* Spread the phase's rate over the slots [t, t2) covers, exactly. */
        for (long n = (long)(t / cfg->slot); n < N && (double)n * cfg->slot < t2; n++)
            out[n] += p->mmpp_rate[phase] *
                      osn__fluid_overlap(t, t2, (double)n * cfg->slot, (double)(n + 1) * cfg->slot);
        t = t2;
        phase = !phase;
    }
}

bool osn__fluid_slows(const struct osn_fluid_cfg *cfg, int h)
{
    int last = cfg->topology == OSN_FLUID_TANDEM ? 1 : 0;

    return cfg->profile.shape == OSN_FLUID_SLOWDOWN && h == last &&
           cfg->profile.slowdown_factor < 1 && cfg->profile.slowdown_duration > 0;
}

double osn__fluid_capacity_cum(const struct osn_fluid_cfg *cfg, int h, long t)
{
    const struct osn_fluid_profile *p = &cfg->profile;
    double mu = cfg->server[h].rate, end = (double)t * cfg->slot;
    double c = mu * end;

    if (osn__fluid_slows(cfg, h))
        c -= (1 - p->slowdown_factor) * mu *
             osn__fluid_overlap(0, end, p->slowdown_start,
                                p->slowdown_start + p->slowdown_duration);
    return c;
}

struct osn_fluid_result *osn_fluid_result_free(struct osn_fluid_result *res)
{
    if (!res)
        return NULL;
    for (int h = 0; h < OSN_FLUID_MAX_HOPS; h++) {
        for (int c = 0; c < OSN_FLUID_NCOLS; c++)
            free(res->hop[h].col[c]);
        for (int j = 0; j <= OSN_FLUID_MAX_RETX; j++)
            free(res->hop[h].retx[j]);
    }
    free(res->goodput);
    free(res->offered);
    free(res);
    return NULL;
}
