/*
 * The model's scenario adapter (io -> ini, model): loading a hysteretic model from a scenario
 * file ([model], [thresholds], [arrivals], [service]) and writing its exact measures as a
 * table, JSON or CSV.
 *
 * The generic layer underneath, INI reading with file:line and --set overrides, is
 * include/osn/ini.h; output files that never destroy what is there are include/osn/afile.h.
 * Every error names where the bad value came from: the file and line, or the --set flag.
 */
#ifndef OSN_MODEL_SCENARIO_H
#define OSN_MODEL_SCENARIO_H

#include <stdio.h>

#include <stdbool.h>

#include "osn/afile.h"
#include "osn/ini.h"
#include "osn/model.h"

/* The model's keys: [model], [thresholds], [arrivals], [service]. */
extern const struct osn_ini_schema osn_model_schema;

/* The model of a scenario that sets no key (two-loop, L=5 H=10 R=20, lambda=1.2 mu=1, policy I):
 * the defaults osn_model_schema's keys are read over, and document. */
void osn_scenario_model_default(struct osn_model *m);

struct osn_scenario {
    struct osn_model model; /* resolved and checked when osn_scenario_load() succeeds */
    struct osn_ini ini;     /* every key set, with its origin */
};

/*
 * Loads `path` (may be NULL: defaults plus overrides only), then applies the `nsets` overrides
 * "section.key=value", resolves and checks the model. `extra` (may be NULL) is a schema of more
 * sections the caller will interpret itself from sc->ini (e.g. [sim]); it must end in
 * osn_model_schema or NULL. On failure returns OSN_ECONFIG, OSN_EIO or OSN_ETOOBIG and writes
 * one line into err ("FILE:LINE: key 'arrivals.rate': ..."); *sc is untouched then. On success
 * the caller owns sc and releases it with osn_scenario_release().
 */
int osn_scenario_load(struct osn_scenario *sc, const char *path, const char *const *sets, int nsets,
                      const struct osn_ini_schema *extra, char *err, size_t errsize);

/* The same; with for_sim, the model is for the simulator, so the exact solver's memory estimate
 * (thresholds.R) is not held against it. */
int osn_scenario_load_sim(struct osn_scenario *sc, const char *path, const char *const *sets,
                          int nsets, const struct osn_ini_schema *extra, bool for_sim, char *err,
                          size_t errsize);

/* Frees what a loaded scenario owns (empirical samples, traces). Accepts a zeroed scenario. */
void osn_scenario_release(struct osn_scenario *sc);

/* The human-readable table of measures, with units and the method that ran. */
void osn_report_table(FILE *f, const struct osn_scenario *sc, const struct osn_measures *ms);

/*
 * The measures as one JSON object, or as a header line and one row of CSV, written to an open
 * stream (borrowed, not closed), so that a caller can commit several output files together (each
 * an osn_afile, include/osn/afile.h). Returns 0, OSN_ENOMEM or OSN_EIO with a message in err.
 */
int osn_report_json_write(FILE *f, const struct osn_scenario *sc, const struct osn_measures *ms,
                          char *err, size_t errsize);
int osn_report_csv_write(FILE *f, const struct osn_scenario *sc, const struct osn_measures *ms,
                         char *err, size_t errsize);

#endif
