/*
 * The [optimize] section: parses the constraints of `osn optimize` from a collected scenario.
 *
 * The generic collector (ini.c) has already checked the section and key names against
 * osn_optimize_schema and recorded where each value came from; here each value is parsed with
 * the shared osn_ini_* parsers, so a bad one is reported as "FILE:LINE: key 'optimize.K' = 'V':
 * why", like any model key.
 */
#include "osn/optimize_scenario.h"

#include <stdbool.h>
#include <stdio.h>

#include "osn/err.h"

static const struct osn_ini_keydef optimize_keys[] = {
        {"optimize", "objective"},   {"optimize", "max_throttle"}, {"optimize", "max_loss"},
        {"optimize", "max_discard"}, {"optimize", "min_cycle"},
};

const struct osn_ini_schema osn_optimize_schema = {
        optimize_keys, sizeof optimize_keys / sizeof optimize_keys[0], &osn_model_schema};

int osn_optimize_cfg_load(struct osn_opt_cfg *cfg, const struct osn_ini *ini, char *err,
                          size_t errsize)
{
    static const char *const objectives[] = {"T_ret", NULL};
    struct osn_opt_cfg c = {0};
    const struct osn_key_origin *o;
    char key[64];
    int rc, which;

    if (!cfg || !ini)
        return OSN_EINVAL;
    if ((o = osn_ini_get(ini, "optimize.objective")) &&
        (rc = osn_ini_choice(o, objectives, &which, err, errsize)))
        return rc;
    for (int k = 0; k < OSN_OPT_NCON; k++) {
        snprintf(key, sizeof key, "optimize.%s", osn_opt_con_name((enum osn_opt_con)k));
        if (!(o = osn_ini_get(ini, key)))
            continue;
        if ((rc = osn_ini_double(o, 0, false, &c.bound[k], err, errsize)))
            return rc;
        c.has[k] = true;
    }
    *cfg = c;
    return 0;
}
