/*
 * The [optimize] section of a scenario file: the constraints of `osn optimize`.
 *
 *     [optimize]
 *     objective    = T_ret     ; or T_ret_p95, T_ret_p99: a quantile of the return time
 *     max_throttle = 0.3       ; P1 + P2, time the control is on
 *     max_loss     = 0.05      ; theta, offered traffic not accepted
 *     max_discard  = 1e-4      ; P2, time in discard mode
 *     min_cycle    = 100       ; T_cyc in seconds
 *
 * One adapter per module, beside osn/model_scenario.h rather than inside it; the schema chains
 * in front of osn_model_schema, as osn_scenario_load() expects.
 */
#ifndef OSN_OPTIMIZE_SCENARIO_H
#define OSN_OPTIMIZE_SCENARIO_H

#include <stddef.h>
#include <stdio.h>

#include "osn/model_scenario.h"
#include "osn/optimize.h"

/* [optimize] keys, then the model's. Pass it as `extra` to osn_scenario_load(). */
extern const struct osn_ini_schema osn_optimize_schema;

/*
 * Reads the [optimize] keys of a collected scenario into *cfg (constraints not given are off;
 * the objective T_ret unless given).
 * Every bound must be a number >= 0. Returns 0, or OSN_ECONFIG with one line in err naming
 * FILE:LINE (or the --set flag) and the key; *cfg is only written on success.
 */
int osn_optimize_cfg_load(struct osn_opt_cfg *cfg, const struct osn_ini *ini, char *err,
                          size_t errsize);

/*
 * Loads the scenario of `osn optimize` into *sc and its constraints into *cfg: the model with
 * the searched pair's keys (L and H; L1 and H1 for bi-level) replaced by placeholders, since the
 * search sets them, and the [optimize] section. Refuses a model the general solver cannot take
 * (OSN_ENOTSUP), a quantile objective without exponential service (OSN_ECONFIG, naming
 * optimize.objective) and a search of more than about 3 hours (OSN_ETOOBIG, naming thresholds.R and
 * the hours it would take). every_pair: the caller solves every pair (a visit callback, or
 * cfg.exhaustive, which it sets after this call), so the screened scan's cost does not apply.
 * *hours (may be NULL) gets the estimated time of the search.
 * Returns 0, or an error with one line in err; the caller releases sc with osn_scenario_release()
 * in every case.
 */
int osn_optimize_scenario_load(struct osn_scenario *sc, struct osn_opt_cfg *cfg, const char *path,
                               const char *const *sets, int nsets, bool every_pair, double *hours,
                               char *err, size_t errsize);

/*
 * The --json document of `osn optimize`: osn_report_json_write() of the reported pair `at` (the
 * optimum, or the closest pair when none is feasible), plus L, H, found, evaluated, feasible,
 * solved_in_full (fewer than evaluated when the closed-form screen decided the rest),
 * skipped, objective (its name), objective_value (at the reported pair), binding, constraints,
 * next_better, unconstrained (each with T_ret and the objective's value under its name) and
 * (when no pair is feasible) closest_violation. Returns 0, OSN_ENOMEM or OSN_EIO with a message.
 */
int osn_opt_json_write(FILE *f, const struct osn_scenario *at, const struct osn_opt_cfg *cfg,
                       const struct osn_opt_result *res, char *err, size_t errsize);

/*
 * Why osn_optimize() returned rc, in words for "optimisation failed: %s": osn_strerror(rc), with
 * the pair res->failed names when it names one, and what a quantile objective's OSN_ETOOBIG or
 * OSN_ENOTSUP there means (that pair's return-time distribution is out of reach, or it has
 * none). Writes "" for rc 0.
 */
void osn_opt_failure_text(int rc, const struct osn_opt_cfg *cfg, const struct osn_opt_result *res,
                          char *buf, size_t size);

#endif
