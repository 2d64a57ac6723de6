/*
 * Simulation scenarios: the [sim] section (time, warmup, replications, seed, feedback_delay)
 * on top of a model scenario. osn_scenario_load() collects every key against osn_sim_schema
 * (which chains to osn_model_schema) and interprets the model's; the [sim] keys are the table
 * below, read by osn_ini_load() over osn_sim_cfg_default(), which also makes their --help and
 * docs/scenario.md. Then osn_sim_check() runs, a complaint mapped back to where the key was set.
 */
#include "osn/sim_scenario.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "osn/err.h"

#define C struct osn_sim_cfg

/* The [sim] keys; their defaults are osn_sim_cfg_default()'s. */
static const struct osn_key_spec sim_keys[] = {
        {"sim", "time", OSN_KEY_DOUBLE, .lo = 0, .lo_excl = true, OSN_KEY_AT(C, time), .unit = "s",
         .help = "simulated seconds per replication after the warm-up"},
        {"sim", "warmup", OSN_KEY_DOUBLE, .lo = 0, OSN_KEY_AT(C, warmup), .unit = "s",
         .help = "seconds simulated and discarded first"},
        {"sim", "replications", OSN_KEY_LONG, .lo = 1, .hi = 100000, OSN_KEY_AT(C, replications),
         .help = "independent replications"},
        {"sim", "seed", OSN_KEY_LONG, .lo = 0, .hi = 0x1p63, OSN_KEY_AT(C, seed),
         .help = "master seed; replication i uses stream i (the seed's xoshiro256++ state "
                 "jumped i times)"},
        {"sim", "feedback_delay", OSN_KEY_DOUBLE, .lo = 0, OSN_KEY_AT(C, feedback_delay),
         .unit = "s",
         .help = "d: the upstream throttles by the server's mode as it was d s ago; the server "
                 "still discards in mode 2 and when full. 0 is exactly the model of `osn solve`"},
};

#undef C

const struct osn_ini_schema osn_sim_schema = {sim_keys, sizeof sim_keys / sizeof sim_keys[0],
                                              &osn_model_schema};

double osn_sim_scenario_events(const struct osn_sim_scenario *s)
{
    const struct osn_model *m = &s->sc.model;
    double lam = m->flows == 2 ? m->rate1 + m->rate2 : m->rate;

    if (m->process == OSN_ARR_MMPP)
        for (int k = 0; k < m->mmpp.K; k++)
            lam = fmax(lam, m->mmpp.rate[k]);
    if (m->process == OSN_ARR_TRACE)
        return 2.0 * (double)m->ntrace * s->cfg.replications;
    return (lam + m->mu) * (s->cfg.warmup + s->cfg.time) * s->cfg.replications;
}

/* sim.time = 1e12 once ran silently for what would have been weeks: past this many events
 * (a day or so at the 10-30 million events a second of src/sim/hysteretic.c), refuse. */
#define SIM_EVENTS_MAX 1e12

/* The message of a check: names key where it was set. Returns OSN_ECONFIG. */
static int blame(const struct osn_sim_scenario *s, const char *key, const char *why, char *err,
                 size_t errsize)
{
    const struct osn_key_origin *o;

    if (key && (o = osn_ini_get(&s->sc.ini, key)))
        return osn_ini_bad(o, err, errsize, "%s", why);
    if (err && errsize)
        snprintf(err, errsize, "%s%s%s: %s", s->sc.ini.path[0] ? s->sc.ini.path : "scenario",
                 key ? ": key " : "", key ? key : "", why);
    return OSN_ECONFIG;
}

int osn_sim_scenario_check(const struct osn_sim_scenario *s, char *err, size_t errsize)
{
    const char *key = NULL;
    char why[256];

    if (osn_sim_check(&s->sc.model, &s->cfg, &key, why, sizeof why) == 0)
        return 0;
    return blame(s, key, why, err, errsize);
}

int osn_sim_scenario_check_cost(const struct osn_sim_scenario *s, char *err, size_t errsize)
{
    double events = osn_sim_scenario_events(s);
    char why[256];

    if (events <= SIM_EVENTS_MAX)
        return 0;
    snprintf(why, sizeof why,
             "about %.3g events to simulate (%d replications of %g s), past the %.0e that take "
             "about a day: lower sim.time or the replications",
             events, s->cfg.replications, s->cfg.warmup + s->cfg.time, SIM_EVENTS_MAX);
    return blame(s, osn_ini_get(&s->sc.ini, "sim.time") ? "sim.time" : "sim.replications", why, err,
                 errsize);
}

int osn_sim_scenario_load(struct osn_sim_scenario *s, const char *path, const char *const *sets,
                          int nsets, char *err, size_t errsize)
{
    struct osn_sim_scenario *tmp;
    int rc;

    if (!s)
        return OSN_EINVAL;
    tmp = calloc(1, sizeof *tmp); /* 128 key records: off the stack */
    if (!tmp) {
        if (err && errsize)
            snprintf(err, errsize, "out of memory");
        return OSN_ENOMEM;
    }
    rc = osn_scenario_load_sim(&tmp->sc, path, sets, nsets, &osn_sim_schema, true, err, errsize);
    if (rc)
        goto out;
    osn_sim_cfg_default(&tmp->cfg);
    rc = osn_ini_load(&tmp->sc.ini, &osn_sim_schema, &tmp->cfg, err, errsize);
    if (!rc)
        rc = osn_sim_scenario_check(tmp, err, errsize);
    if (rc)
        osn_scenario_release(&tmp->sc);
    else
        *s = *tmp;
out:
    free(tmp);
    return rc;
}

void osn_sim_scenario_release(struct osn_sim_scenario *s)
{
    if (s)
        osn_scenario_release(&s->sc);
}
