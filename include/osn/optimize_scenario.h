/*
 * The [optimize] section of a scenario file: the constraints of `osn optimize`.
 *
 *     [optimize]
 *     objective    = T_ret     ; the only objective for now
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

#include "osn/model_scenario.h"
#include "osn/optimize.h"

/* [optimize] keys, then the model's. Pass it as `extra` to osn_scenario_load(). */
extern const struct osn_ini_schema osn_optimize_schema;

/*
 * Reads the [optimize] keys of a collected scenario into *cfg (constraints not given are off).
 * Every bound must be a number >= 0. Returns 0, or OSN_ECONFIG with one line in err naming
 * FILE:LINE (or the --set flag) and the key; *cfg is only written on success.
 */
int osn_optimize_cfg_load(struct osn_opt_cfg *cfg, const struct osn_ini *ini, char *err,
                          size_t errsize);

#endif
