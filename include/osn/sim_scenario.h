/*
 * Scenario files and result writers of the simulator (`osn sim`), in the io library.
 *
 * A simulation scenario is a model scenario ([model], [thresholds], [arrivals], [service], read
 * by osn_scenario_load()) plus a [sim] section: time, warmup, replications, seed,
 * feedback_delay. The [sim] keys are a schema chained in front of osn_model_schema, so one
 * file and one set of --set overrides feed both, and every error names FILE:LINE or the --set
 * flag and the key. One adapter per module (io -> ini and the module): this one on
 * osn/model_scenario.h and osn/sim.h.
 */
#ifndef OSN_SIM_SCENARIO_H
#define OSN_SIM_SCENARIO_H

#include <stdio.h>

#include "osn/model_scenario.h"
#include "osn/sim.h"

/* [sim] keys, chained in front of osn_model_schema. */
extern const struct osn_ini_schema osn_sim_schema;

struct osn_sim_scenario {
    struct osn_scenario sc; /* the model, resolved and checked, and every key with its origin */
    struct osn_sim_cfg cfg; /* [sim] values over osn_sim_cfg_default() (no progress callback) */
};

/*
 * Loads a simulation scenario (path may be NULL: defaults plus overrides). Returns 0, or
 * OSN_ECONFIG / OSN_EIO / OSN_ETOOBIG with one line in err; *s is written only on success and
 * is then released with osn_sim_scenario_release().
 */
int osn_sim_scenario_load(struct osn_sim_scenario *s, const char *path, const char *const *sets,
                          int nsets, char *err, size_t errsize);

/* Frees what the scenario owns (accepts a zeroed one). */
void osn_sim_scenario_release(struct osn_sim_scenario *s);

/*
 * Checks s->cfg after command-line changes (--seed, --replications, --threads) against the
 * model; on failure writes one line naming the key (and where it was set) into err and returns
 * OSN_ECONFIG.
 */
int osn_sim_scenario_check(const struct osn_sim_scenario *s, char *err, size_t errsize);

/* The table: model, method, then "key  value ± half-width  unit  meaning" rows. */
void osn_sim_report_table(FILE *f, const struct osn_sim_scenario *s,
                          const struct osn_sim_result *res);

/*
 * JSON: the `osn solve` keys, each estimate's half-width as KEY_ci, replications, events,
 * events_per_s and the [sim] settings, plus "scenario". Returns 0, OSN_ENOMEM or OSN_EIO.
 */
int osn_sim_report_json_write(FILE *f, const struct osn_sim_scenario *s,
                              const struct osn_sim_result *res, char *err, size_t errsize);

/* CSV: a header line and one row (KEY, KEY_ci pairs, then the run figures). */
int osn_sim_report_csv_write(FILE *f, const struct osn_sim_scenario *s,
                             const struct osn_sim_result *res, char *err, size_t errsize);

/* --replications-out: a header line and one row per replication: replication, seed, stream,
 * then each measure's estimate from that replication alone (per_rep, filled through
 * osn_sim_cfg.rep_measures). 0 or OSN_EIO. */
int osn_sim_report_reps_csv_write(FILE *f, const struct osn_sim_scenario *s, const double *per_rep,
                                  char *err, size_t errsize);

/* The events a run of s simulates, about (arrival rate + service rate) x (warm-up + time) x
 * replications; osn_sim_scenario_check_cost() refuses past 1e12 (about a day), naming sim.time
 * (call it after the command line's --replications). 0 or OSN_ECONFIG with err. */
double osn_sim_scenario_events(const struct osn_sim_scenario *s);
int osn_sim_scenario_check_cost(const struct osn_sim_scenario *s, char *err, size_t errsize);

#endif
