/*
 * The [optimize] section: parses the constraints of `osn optimize` from a collected scenario.
 *
 * The generic collector (ini.c) has already checked the section and key names against
 * osn_optimize_schema and recorded where each value came from; the key table below is read by
 * osn_ini_load(), so a bad value is reported as "FILE:LINE: key 'optimize.K' = 'V': why", like
 * any model key, and the same table makes `osn optimize --help` and docs/scenario.md.
 */
#include "osn/optimize_scenario.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "osn/err.h"

/* In the order of enum osn_opt_objective (a choice key stores its index). */
static const char *const objectives[] = {"T_ret", "T_ret_p95", "T_ret_p99", NULL};
_Static_assert(sizeof objectives / sizeof objectives[0] == OSN_OPT_NOBJ + 1,
               "one name per objective");

/* A bound given is a constraint: has[] follows bound[] (the key's index from its name). */
static int bound_given(void *cfg, const struct osn_key_origin *o, const double *v, int n, char *err,
                       size_t errsize)
{
    struct osn_opt_cfg *c = cfg;
    const char *name = strchr(o->key, '.') + 1;

    (void)v, (void)n, (void)err, (void)errsize;
    for (int k = 0; k < OSN_OPT_NCON; k++)
        if (strcmp(name, osn_opt_con_name((enum osn_opt_con)k)) == 0)
            c->has[k] = true;
    return 0;
}

#define C struct osn_opt_cfg
#define BOUND(name, con, unit_, help_)                                                             \
    {                                                                                              \
        "optimize", name, OSN_KEY_DOUBLE, .lo = 0, OSN_KEY_AT(C, bound[con]), .hook = bound_given, \
                                          .def = "none", .unit = unit_, .help = help_              \
    }

/* Every constraint is optional, and a bound is met with equality too. */
static const struct osn_key_spec optimize_keys[] = {
        {"optimize", "objective", OSN_KEY_CHOICE, .choices = objectives, OSN_KEY_AT(C, objective),
         .help = "what the search minimises: the mean return time T_ret, or its 95% or 99% "
                 "quantile (exponential service only; every pair's distribution is computed)"},
        BOUND("max_throttle", OSN_OPT_THROTTLE, NULL, "P1 + P2 <= bound: time the control is on"),
        BOUND("max_loss", OSN_OPT_LOSS, NULL, "theta <= bound: offered traffic not accepted"),
        BOUND("max_discard", OSN_OPT_DISCARD, NULL, "P2 <= bound: time in discard mode"),
        BOUND("min_cycle", OSN_OPT_CYCLE, "s", "T_cyc >= bound: mean time between onsets"),
};

#undef BOUND
#undef C

const struct osn_ini_schema osn_optimize_schema = {
        optimize_keys, sizeof optimize_keys / sizeof optimize_keys[0], &osn_model_schema};

int osn_optimize_cfg_load(struct osn_opt_cfg *cfg, const struct osn_ini *ini, char *err,
                          size_t errsize)
{
    struct osn_opt_cfg c = {0};
    int rc;

    if (!cfg || !ini)
        return OSN_EINVAL;
    if ((rc = osn_ini_load(ini, &osn_optimize_schema, &c, err, errsize)))
        return rc;
    *cfg = c;
    return 0;
}

/*
 * The plain scan solves every pair: R^2/2 solves of about 3R states each (bench/bench_optimize.c).
 * At the few million states a second of one core, R = 5000 (1.9e11 states) would run most of a
 * day with no end in sight: refuse past OPT_WORK_MAX, naming thresholds.R. The screened scan of
 * the two-loop M|M|1 model (src/model/optimize_screen.c) costs a few passes of O(1) per pair,
 * about SCREEN_S_PER_PAIR in all (0.3 s at R = 1000, 27 s at R = 10^4 on a busy machine), and is
 * held to the same time.
 */
#define OPT_STATES_PER_S  3e6
#define OPT_WORK_MAX      3e10
#define SCREEN_S_PER_PAIR 6e-7
/* A quantile objective adds the return time's distribution to each pair's solve: about this
 * many solves' worth at R = 100 (bench_optimize: objective=T_ret_p95 vs_mean=31.7). */
#define QUANTILE_SOLVES 30

static int check_cost(const struct osn_scenario *sc, const struct osn_opt_cfg *cfg, bool every_pair,
                      double *hours, char *err, size_t errsize)
{
    const struct osn_key_origin *k = osn_ini_get(&sc->ini, "thresholds.R");
    double pairs = (double)osn_optimize_pairs(&sc->model);
    double K = sc->model.process == OSN_ARR_MMPP ? sc->model.mmpp.K : 1;
    double states = 3 * K * ((double)sc->model.R + 1);
    double per_pair = cfg->objective == OSN_OPT_T_RET ? 1 : QUANTILE_SOLVES;
    double h = pairs * states * per_pair / OPT_STATES_PER_S / 3600;
    double h_max = OPT_WORK_MAX / OPT_STATES_PER_S / 3600;
    bool screened =
            !every_pair && cfg->objective == OSN_OPT_T_RET && osn_optimize_screens(&sc->model);

    if (screened)
        h = pairs * SCREEN_S_PER_PAIR / 3600;
    if (hours)
        *hours = h;
    if (h <= h_max)
        return 0;
    if (screened)
        snprintf(err, errsize,
                 "%s%s%s%s: %.3g pairs, roughly %.0f hours even screened: lower thresholds.R",
                 k ? k->where : "thresholds.R", k ? ": key 'thresholds.R' = '" : "",
                 k ? k->value : "", k ? "'" : "", pairs, h);
    else
        snprintf(err, errsize,
                 "%s%s%s%s: %.3g pairs of about %.0f states each, roughly %.0f hours of solving; "
                 "the search solves every pair (R^3/2): lower thresholds.R (at most about %.0f%s)",
                 k ? k->where : "thresholds.R", k ? ": key 'thresholds.R' = '" : "",
                 k ? k->value : "", k ? "'" : "", pairs, states, h,
                 100 * floor(cbrt(2 * OPT_WORK_MAX / 3 / per_pair) / 100),
                 per_pair > 1 ? " with a quantile objective" : "");
    return OSN_ETOOBIG;
}

int osn_optimize_scenario_load(struct osn_scenario *sc, struct osn_opt_cfg *cfg, const char *path,
                               const char *const *sets, int nsets, bool every_pair, double *hours,
                               char *err, size_t errsize)
{
    /*
     * The scenario's L and H (L1 and H1 for bi-level) are the search variables, but the
     * scenario must still load as a valid model: 0 and 1 stand in for them, appended after the
     * caller's overrides so that they win. The values given are ignored, and they are: L = 50
     * with R = 20 once refused the run, blaming an H = 51 the user never wrote.
     */
    struct osn_ini *ini = calloc(1, sizeof *ini);
    const char **all = calloc((size_t)nsets + 2, sizeof *all);
    const struct osn_key_origin *k;
    const char *lkey = "thresholds.L", *hkey = "thresholds.H";
    char placeholder[2][64];
    int rc;

    if (!ini || !all) {
        rc = OSN_ENOMEM;
        snprintf(err, errsize, "out of memory");
        goto out;
    }
    rc = osn_ini_collect(ini, path, sets, nsets, &osn_optimize_schema, err, errsize);
    if (rc)
        goto out;
    if ((k = osn_ini_get(ini, "model.kind")) && strcasecmp(k->value, "bi-level") == 0) {
        lkey = "thresholds.L1";
        hkey = "thresholds.H1";
    }
    snprintf(placeholder[0], sizeof placeholder[0], "%s=0", lkey);
    snprintf(placeholder[1], sizeof placeholder[1], "%s=1", hkey);
    for (int i = 0; i < nsets; i++)
        all[i] = sets[i];
    all[nsets] = placeholder[0];
    all[nsets + 1] = placeholder[1];
    rc = osn_scenario_load(sc, path, all, nsets + 2, &osn_optimize_schema, err, errsize);
    if (!rc)
        rc = osn_optimize_cfg_load(cfg, &sc->ini, err, errsize);
    if (rc)
        goto out;
    const char *why = osn_solve_unsupported(&sc->model, OSN_METHOD_GENERAL);
    if (why) {
        snprintf(err, errsize, "%s", why);
        rc = OSN_ENOTSUP;
        goto out;
    }
    /* The return time's distribution, which a quantile needs, exists for exponential service
     * only (osn_tret_dist_new()): say so against the objective's key, not as a solver error. */
    if (cfg->objective != OSN_OPT_T_RET &&
        (sc->model.service.kind != OSN_LAW_EXP || sc->model.process == OSN_ARR_TRACE)) {
        static const struct osn_key_origin unset = {"optimize.objective", "", "scenario"};
        k = osn_ini_get(&sc->ini, "optimize.objective");
        rc = osn_ini_bad(k ? k : &unset, err, errsize,
                         "a return-time quantile needs exponential service and no trace input "
                         "(the distribution is computed for those only); use T_ret here");
        goto out;
    }
    rc = check_cost(sc, cfg, every_pair, hours, err, errsize);
out:
    osn_ini_free(ini);
    free(ini);
    free(all);
    return rc;
}
