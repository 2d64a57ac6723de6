/*
 * Fluid scenarios: the [fluid], [profile], [server], [server p1], [server p2] and [control]
 * sections turned into a checked struct osn_fluid_cfg.
 *
 * osn_ini_collect() gathers the assignments against osn_fluid_schema; this file parses each
 * value with the shared osn_ini_* parsers, checks that every key belongs to the chosen
 * topology, profile shape and control algorithm (a burst key in a constant profile is an
 * error, not silently ignored), fills in the defaults that depend on other keys (P1's rate, the
 * control gains) and runs osn_fluid_cfg_check(). Defaults are listed in `osn fluid --help`
 * (src/cli/cmd_fluid.c); keep both in step.
 */
#include "osn/fluid_scenario.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "osn/ctl.h"
#include "osn/err.h"

#define DEF_P1_RATE     200.0 /* P1 processes each INVITE and P2's answer to it */
#define DEF_RRRC_TARGET 0.1
#define DEF_RTD_TARGET  0.25 /* s; must stay below T1 - RTT */
#define DEF_CROSSOVER   1.0  /* rad/s */
#define DEF_PM          45.0 /* degrees */

static const struct osn_key_spec fluid_keys[] = {
        {"fluid", "topology"},
        {"fluid", "slot"},
        {"fluid", "horizon"},
        {"fluid", "t1"},
        {"fluid", "retransmissions"},
        {"profile", "shape"},
        {"profile", "base_rate"},
        {"profile", "step_time"},
        {"profile", "step_rate"},
        {"profile", "burst_start"},
        {"profile", "burst_duration"},
        {"profile", "burst_rate"},
        {"profile", "slowdown_start"},
        {"profile", "slowdown_duration"},
        {"profile", "slowdown_factor"},
        {"profile", "mmpp_rates"},
        {"profile", "mmpp_switch"},
        {"profile", "seed"},
        {"server", "rate"},
        {"server", "buffer"},
        {"server", "delay_up"},
        {"server", "delay_down"},
        {"server p1", "rate"},
        {"server p1", "buffer"},
        {"server p1", "delay_up"},
        {"server p1", "delay_down"},
        {"server p1", "response_cost"},
        {"server p1", "retx_cost"},
        {"server p2", "rate"},
        {"server p2", "buffer"},
        {"server p2", "delay_up"},
        {"server p2", "delay_down"},
        {"control", "kind"},
        {"control", "algorithm"}, /* the old name of control.kind, read with a warning */
        {"control", "interval"},
        {"control", "target"},
        {"control", "kp"},
        {"control", "ki"},
        {"control", "crossover"},
        {"control", "phase_margin"},
        {"control", "max_rate"},
};

const struct osn_ini_schema osn_fluid_schema = {fluid_keys,
                                                sizeof fluid_keys / sizeof fluid_keys[0], NULL};

static const char *const topology_names[] = {"single", "tandem", NULL};
static const char *const shape_names[] = {"constant", "step", "burst", "slowdown", "mmpp", NULL};
static const char *const ctl_names[] = {"none", "rrrc", "rtd", "prsm", NULL};

/* One load: the collected keys, the caller's error buffer, and where a warning goes. */
struct loader {
    const struct osn_ini *ini;
    char *err;
    size_t errsize;
    char *warning; /* OSN_FLUID_WARNING_MAX bytes */
};

/* Parses "section.key" as a number >= lo (> lo when excl) into *out when it is set. */
static int num(const struct loader *ld, const char *key, double lo, bool excl, double *out)
{
    const struct osn_key_origin *o = osn_ini_get(ld->ini, key);

    return o ? osn_ini_double(o, lo, excl, out, ld->err, ld->errsize) : 0;
}

/* A buffer size: a number >= 0, or inf / infinite / none for an unbounded queue. */
static int buffer(const struct loader *ld, const char *key, double *out)
{
    const struct osn_key_origin *o = osn_ini_get(ld->ini, key);

    if (!o)
        return 0;
    if (strcasecmp(o->value, "inf") == 0 || strcasecmp(o->value, "infinite") == 0 ||
        strcasecmp(o->value, "none") == 0) {
        *out = INFINITY;
        return 0;
    }
    return osn_ini_double(o, 0, false, out, ld->err, ld->errsize);
}

/* Rejects the first key set in `section` among `names` (NULL-terminated) with `why`. */
static int reject(const struct loader *ld, const char *section, const char *const *names,
                  const char *why)
{
    char key[64];

    for (int i = 0; names[i]; i++) {
        const struct osn_key_origin *o;
        snprintf(key, sizeof key, "%s.%s", section, names[i]);
        if ((o = osn_ini_get(ld->ini, key)))
            return osn_ini_bad(o, ld->err, ld->errsize, "%s", why);
    }
    return 0;
}

static int load_fluid(const struct loader *ld, struct osn_fluid_cfg *c)
{
    const struct osn_key_origin *o;
    long retx;
    int which, rc;

    if ((o = osn_ini_get(ld->ini, "fluid.topology"))) {
        if ((rc = osn_ini_choice(o, topology_names, &which, ld->err, ld->errsize)))
            return rc;
        c->topology = (enum osn_fluid_topology)which;
    }
    if ((rc = num(ld, "fluid.t1", 0, true, &c->t1)) ||
        (rc = num(ld, "fluid.slot", 0, true, &c->slot)) ||
        (rc = num(ld, "fluid.horizon", 0, true, &c->horizon)))
        return rc;
    if ((o = osn_ini_get(ld->ini, "fluid.slot")) && c->slot > c->t1)
        return osn_ini_bad(o, ld->err, ld->errsize, "the slot must not exceed t1 = %g s", c->t1);
    if ((o = osn_ini_get(ld->ini, "fluid.horizon")) && c->horizon < c->slot)
        return osn_ini_bad(o, ld->err, ld->errsize, "the horizon must be at least one slot");
    if ((o = osn_ini_get(ld->ini, "fluid.horizon")) && c->horizon / c->slot > 1e8)
        return osn_ini_bad(o, ld->err, ld->errsize, "more than 1e8 slots of %g s", c->slot);
    if ((o = osn_ini_get(ld->ini, "fluid.retransmissions"))) {
        if ((rc = osn_ini_long(o, 0, OSN_FLUID_MAX_RETX, &retx, ld->err, ld->errsize)))
            return rc;
        c->retx = (int)retx;
    }
    return 0;
}

static int load_profile(const struct loader *ld, struct osn_fluid_profile *p)
{
    static const char *const step[] = {"step_time", "step_rate", NULL};
    static const char *const burst[] = {"burst_start", "burst_duration", "burst_rate", NULL};
    static const char *const slow[] = {"slowdown_start", "slowdown_duration", "slowdown_factor",
                                       NULL};
    static const char *const mmpp[] = {"mmpp_rates", "mmpp_switch", "seed", NULL};
    const struct osn_key_origin *o;
    char why[96];
    long seed;
    int which, rc, n;

    if ((o = osn_ini_get(ld->ini, "profile.shape"))) {
        if ((rc = osn_ini_choice(o, shape_names, &which, ld->err, ld->errsize)))
            return rc;
        p->shape = (enum osn_fluid_shape)which;
    }
    snprintf(why, sizeof why, "not a key of profile shape '%s' (set profile.shape)",
             osn_fluid_shape_name(p->shape));
    if ((p->shape != OSN_FLUID_MMPP && (rc = reject(ld, "profile", mmpp, why))) ||
        (p->shape == OSN_FLUID_MMPP &&
         (rc = reject(ld, "profile", (const char *const[]){"base_rate", NULL},
                      "an MMPP profile takes its rates from profile.mmpp_rates"))) ||
        (p->shape != OSN_FLUID_STEP && (rc = reject(ld, "profile", step, why))) ||
        (p->shape != OSN_FLUID_BURST && (rc = reject(ld, "profile", burst, why))) ||
        (p->shape != OSN_FLUID_SLOWDOWN && (rc = reject(ld, "profile", slow, why))))
        return rc;
    if ((rc = num(ld, "profile.base_rate", 0, false, &p->base_rate)) ||
        (rc = num(ld, "profile.step_time", 0, false, &p->step_time)) ||
        (rc = num(ld, "profile.step_rate", 0, false, &p->step_rate)) ||
        (rc = num(ld, "profile.burst_start", 0, false, &p->burst_start)) ||
        (rc = num(ld, "profile.burst_duration", 0, false, &p->burst_duration)) ||
        (rc = num(ld, "profile.burst_rate", 0, false, &p->burst_rate)) ||
        (rc = num(ld, "profile.slowdown_start", 0, false, &p->slowdown_start)) ||
        (rc = num(ld, "profile.slowdown_duration", 0, false, &p->slowdown_duration)) ||
        (rc = num(ld, "profile.slowdown_factor", 0, false, &p->slowdown_factor)))
        return rc;
    if ((o = osn_ini_get(ld->ini, "profile.mmpp_rates"))) {
        if ((rc = osn_ini_doubles(o, p->mmpp_rate, 2, &n, ld->err, ld->errsize)))
            return rc;
        if (n != 2 || !(p->mmpp_rate[0] >= 0 && p->mmpp_rate[1] >= 0) ||
            !isfinite(p->mmpp_rate[0] + p->mmpp_rate[1]))
            return osn_ini_bad(o, ld->err, ld->errsize,
                               "expected two finite rates >= 0 (phase 0, phase 1)");
    }
    if ((o = osn_ini_get(ld->ini, "profile.mmpp_switch"))) {
        if ((rc = osn_ini_doubles(o, p->mmpp_switch, 2, &n, ld->err, ld->errsize)))
            return rc;
        if (n != 2 || !(p->mmpp_switch[0] > 0 && p->mmpp_switch[1] > 0) ||
            !isfinite(p->mmpp_switch[0] + p->mmpp_switch[1]))
            return osn_ini_bad(o, ld->err, ld->errsize,
                               "expected two finite switch rates > 0 (0->1, 1->0), 1/s");
    }
    if ((o = osn_ini_get(ld->ini, "profile.seed"))) {
        if ((rc = osn_ini_long(o, 0, 0x7fffffffffffffffL, &seed, ld->err, ld->errsize)))
            return rc;
        p->seed = (unsigned long long)seed;
    }
    if ((o = osn_ini_get(ld->ini, "profile.slowdown_factor")) && p->slowdown_factor > 1)
        return osn_ini_bad(o, ld->err, ld->errsize, "the capacity factor must be in [0, 1]");
    return 0;
}

/* One server section ("server", "server p1" or "server p2") into *s. */
static int load_server(const struct loader *ld, const char *section, struct osn_fluid_server *s)
{
    char key[64];
    int rc;

    snprintf(key, sizeof key, "%s.rate", section);
    if ((rc = num(ld, key, 0, true, &s->rate)))
        return rc;
    snprintf(key, sizeof key, "%s.buffer", section);
    if ((rc = buffer(ld, key, &s->buffer)))
        return rc;
    snprintf(key, sizeof key, "%s.delay_up", section);
    if ((rc = num(ld, key, 0, false, &s->delay_up)))
        return rc;
    snprintf(key, sizeof key, "%s.delay_down", section);
    if ((rc = num(ld, key, 0, false, &s->delay_down)))
        return rc;
    snprintf(key, sizeof key, "%s.response_cost", section);
    if ((rc = num(ld, key, 0, false, &s->response_cost)))
        return rc;
    snprintf(key, sizeof key, "%s.retx_cost", section);
    return num(ld, key, 0, false, &s->retx_cost);
}

static int load_servers(const struct loader *ld, struct osn_fluid_cfg *c)
{
    static const char *const keys[] = {"rate",          "buffer",    "delay_up", "delay_down",
                                       "response_cost", "retx_cost", NULL};
    int rc;

    if (c->topology == OSN_FLUID_SINGLE) {
        if ((rc = reject(ld, "server p1", keys, "a tandem key (set fluid.topology = tandem)")) ||
            (rc = reject(ld, "server p2", keys, "a tandem key (set fluid.topology = tandem)")))
            return rc;
        return load_server(ld, "server", &c->server[0]);
    }
    if ((rc = reject(ld, "server", keys, "use [server p1] and [server p2] in a tandem")))
        return rc;
    c->server[0].rate = DEF_P1_RATE;
    if ((rc = load_server(ld, "server p1", &c->server[0])))
        return rc;
    return load_server(ld, "server p2", &c->server[1]);
}

static int load_control(const struct loader *ld, struct osn_fluid_cfg *c)
{
    static const char *const tuning[] = {"interval",  "target",       "kp",       "ki",
                                         "crossover", "phase_margin", "max_rate", NULL};
    static const char *const design[] = {"crossover", "phase_margin", NULL};
    struct osn_fluid_pi_cfg *ctl = &c->control;
    const struct osn_fluid_server *srv = &c->server[c->topology == OSN_FLUID_TANDEM ? 1 : 0];
    const struct osn_key_origin *o, *kp, *ki;
    double wc = DEF_CROSSOVER, pm = DEF_PM, theta;
    int which, rc;

    /* [control] kind names the control in every scenario (network, node, fluid); the fluid
     * model called it algorithm until 0.1, which is still read for one release. */
    const struct osn_key_origin *old = osn_ini_get(ld->ini, "control.algorithm");
    o = osn_ini_get(ld->ini, "control.kind");
    if (o && old)
        return osn_ini_bad(old, ld->err, ld->errsize,
                           "the old name of control.kind, which is set too: keep control.kind");
    if (old) {
        o = old;
        snprintf(ld->warning, OSN_FLUID_WARNING_MAX,
                 "%s: control.algorithm is the old name of control.kind (read as control.kind; "
                 "rename it)",
                 old->where);
    }
    if (o) {
        if ((rc = osn_ini_choice(o, ctl_names, &which, ld->err, ld->errsize)))
            return rc;
        ctl->algo = (enum osn_fluid_ctl)which;
    }
    if (ctl->algo == OSN_FLUID_CTL_NONE)
        return reject(ld, "control", tuning, "no control runs (set control.kind)");
    if (ctl->algo == OSN_FLUID_CTL_PRSM) {
        if (c->topology != OSN_FLUID_SINGLE)
            return osn_ini_bad(o, ld->err, ld->errsize,
                               "prsm runs on the single topology only (fluid.topology = single)");
        return reject(ld, "control", tuning, "prsm is a scheduler with no tuning keys");
    }
    ctl->target = ctl->algo == OSN_FLUID_CTL_RRRC ? DEF_RRRC_TARGET : DEF_RTD_TARGET;
    ctl->max_rate = srv->rate;
    if ((rc = num(ld, "control.interval", c->slot, false, &ctl->interval)) ||
        (rc = num(ld, "control.target", 0, false, &ctl->target)) ||
        (rc = num(ld, "control.max_rate", 0, true, &ctl->max_rate)) ||
        (rc = num(ld, "control.crossover", 0, true, &wc)) ||
        (rc = num(ld, "control.phase_margin", 0, true, &pm)))
        return rc;
    kp = osn_ini_get(ld->ini, "control.kp");
    ki = osn_ini_get(ld->ini, "control.ki");
    if (ctl->algo == OSN_FLUID_CTL_RRRC) {
        if ((rc = reject(ld, "control", design, "the phase-margin design is for rtd only")))
            return rc;
        /* psi = redundant/originals reacts to the cap with gain about 1/mu: tuned by runs. */
        ctl->kp = 0.2 * srv->rate;
        ctl->ki = 1.0 * srv->rate;
    } else {
        o = osn_ini_get(ld->ini, "control.crossover");
        if (!o)
            o = osn_ini_get(ld->ini, "control.phase_margin");
        if ((kp || ki) && o)
            return osn_ini_bad(o, ld->err, ld->errsize,
                               "give either kp and ki, or crossover and phase_margin");
        theta = srv->delay_up + srv->delay_down + ctl->interval / 2;
        if (osn_ctl_pi_design(srv->rate, wc, pm, theta, &ctl->kp, &ctl->ki) != 0 && !(kp && ki)) {
            o = osn_ini_get(ld->ini, "control.crossover");
            if (!o)
                o = osn_ini_get(ld->ini, "control.phase_margin");
            if (!o)
                o = osn_ini_get(ld->ini, "control.interval");
            if (o)
                return osn_ini_bad(o, ld->err, ld->errsize,
                                   "phase margin + crossover x dead time %.3g s reaches 90 "
                                   "degrees: lower the crossover or the margin",
                                   theta);
            snprintf(ld->err, ld->errsize, "control: the default PI design is infeasible");
            return OSN_ECONFIG;
        }
    }
    if ((rc = num(ld, "control.kp", 0, false, &ctl->kp)) ||
        (rc = num(ld, "control.ki", 0, false, &ctl->ki)))
        return rc;
    if (ctl->algo == OSN_FLUID_CTL_RTD && (o = osn_ini_get(ld->ini, "control.target")) &&
        ctl->target + srv->delay_up + srv->delay_down >= c->t1)
        return osn_ini_bad(o, ld->err, ld->errsize,
                           "target + round trip must stay below t1 = %g s, or the controller "
                           "aims at a delay that triggers retransmissions",
                           c->t1);
    return 0;
}

/* The key to blame for a limit: the first of keys that was given, or NULL. */
static const struct osn_key_origin *given(const struct loader *ld, const char *const *keys)
{
    const struct osn_key_origin *o = NULL;
    for (int i = 0; keys[i] && !o; i++)
        o = osn_ini_get(ld->ini, keys[i]);
    return o;
}

/* Refuses a run outside what the model can answer: err names the key; OSN_ECONFIG. */
static int limit(const struct loader *ld, const char *const *keys, const char *fmt, double a,
                 double b)
{
    const struct osn_key_origin *o = given(ld, keys);
    char why[320];
    snprintf(why, sizeof why, fmt, a, b);
    if (o)
        return osn_ini_bad(o, ld->err, ld->errsize, "%s", why);
    snprintf(ld->err, ld->errsize, "%s", why);
    return OSN_ECONFIG;
}

/*
 * Limits of the model rather than of any one key (issue 14). The fluid model answers the mass
 * arriving in a slot after the backlog found at its start, as if the slot's own arrivals took no
 * time: a slot of arrivals that takes longer than T1 to serve makes its delays wrong by more
 * than T1, and beyond that the answers are wrong in kind (base_rate = 1e6 on a 100 msg/s server
 * once counted every INVITE of the first slot as answered, goodput 416.7/s). And the run
 * allocates a ring as long as the link delays: refuse what the machine cannot hold.
 */
static int check_limits(const struct loader *ld, const struct osn_fluid_cfg *c)
{
    static const char *const rates[] = {"profile.base_rate",
                                        "profile.burst_rate",
                                        "profile.step_rate",
                                        "server.rate",
                                        "server p1.rate",
                                        "fluid.slot",
                                        NULL};
    static const char *const delays[] = {"server.delay_up", "server p1.delay_up",
                                         "server p2.delay_up", NULL};
    static const char *const down[] = {"server.delay_down", "server p1.delay_down",
                                       "server p2.delay_down"};
    static const char *const size[] = {"fluid.horizon", "fluid.slot", NULL};
    const struct osn_fluid_profile *p = &c->profile;
    double peak = fmax(p->base_rate, p->shape == OSN_FLUID_STEP ? p->step_rate : 0);
    double ring, bytes, phys;
    bool by_extra = p->shape == OSN_FLUID_BURST  ? p->burst_rate > p->base_rate
                    : p->shape == OSN_FLUID_STEP ? p->step_rate > p->base_rate
                                                 : false;

    if (p->shape == OSN_FLUID_BURST)
        peak = fmax(peak, p->base_rate + p->burst_rate);
    if (p->shape == OSN_FLUID_MMPP)
        peak = fmax(p->mmpp_rate[0], p->mmpp_rate[1]);
    if (!(peak / c->server[0].rate * c->slot <= c->t1))
        return limit(ld,
                     p->shape == OSN_FLUID_MMPP
                             ? (const char *const[]){"profile.mmpp_rates", "fluid.slot", NULL}
                     : by_extra ? rates + (p->shape == OSN_FLUID_STEP ? 2 : 1)
                                : rates,
                     "a slot of arrivals at %g/s takes longer than T1 to serve (the fluid "
                     "model's answers would be wrong): keep rate x slot / server rate <= t1 "
                     "(at most %g/s here), or lower fluid.slot",
                     peak, c->server[0].rate * c->t1 / c->slot);
    for (int h = 0; h < (c->topology == OSN_FLUID_TANDEM ? 2 : 1); h++) {
        const struct osn_fluid_server *sv = &c->server[h];
        int i = c->topology == OSN_FLUID_TANDEM ? 1 + h : 0;
        bool up = !(sv->delay_up <= sv->delay_down);
        /* The ring grows with the uplink delay (5.5 GB at 1e6 s): past the horizon nothing
         * sent could reach the server within the run. */
        if (!(sv->delay_up <= c->horizon) || !(sv->delay_down <= c->horizon))
            return limit(ld, (const char *const[]){up ? delays[i] : down[i], NULL},
                         "a link delay of %g s is longer than the horizon (%g s): nothing "
                         "sent would come back within the run",
                         up ? sv->delay_up : sv->delay_down, c->horizon);
    }
    bytes = osn_fluid_memory(c, &ring);
    phys = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
    if (phys > 0 && bytes > phys / 2)
        return limit(ld, ring > bytes / 2 ? delays : size,
                     "the run needs about %.3g GB, more than half of this machine's %.3g GB",
                     bytes / 1e9, phys / 1e9);
    return 0;
}

int osn_fluid_scenario_load(struct osn_fluid_scenario *sc, const char *path,
                            const char *const *sets, int nsets, char *err, size_t errsize)
{
    struct osn_fluid_scenario *tmp;
    struct loader ld;
    char why[256];
    int rc;

    if (err && errsize)
        err[0] = '\0';
    if (!sc)
        return OSN_EINVAL;
    tmp = calloc(1, sizeof *tmp); /* the collected keys are large: keep them off the stack */
    if (!tmp)
        return OSN_ENOMEM;
    rc = osn_ini_collect(&tmp->ini, path, sets, nsets, &osn_fluid_schema, err, errsize);
    if (rc)
        goto out;
    ld = (struct loader){&tmp->ini, err, errsize, tmp->warning};
    osn_fluid_cfg_default(&tmp->cfg);
    if ((rc = load_fluid(&ld, &tmp->cfg)) || (rc = load_profile(&ld, &tmp->cfg.profile)) ||
        (rc = load_servers(&ld, &tmp->cfg)) || (rc = load_control(&ld, &tmp->cfg)))
        goto out;
    if (osn_fluid_cfg_check(&tmp->cfg, why, sizeof why) == 0 && (rc = check_limits(&ld, &tmp->cfg)))
        goto out;
    if (osn_fluid_cfg_check(&tmp->cfg, why, sizeof why) != 0) {
        /* The per-key checks above should catch everything; this is the safety net. */
        if (err && errsize)
            snprintf(err, errsize, "%s: %s", path ? path : "(defaults)", why);
        rc = OSN_ECONFIG;
        goto out;
    }
    *sc = *tmp;
out:
    free(tmp);
    return rc;
}
