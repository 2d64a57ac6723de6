/*
 * Scenario files and result writers of the fluid model (`osn fluid`), in the io library.
 *
 * The sections are [fluid], [profile], [server] (single) or [server p1] / [server p2] (tandem)
 * and [control]. Their keys are one key table (src/io/fluid_scenario.c) read by osn_ini_load(),
 * as for the other scenario formats: every error names FILE:LINE or the --set flag and the key,
 * and `osn fluid --help` and docs/scenario.md print the same table.
 */
#ifndef OSN_FLUID_SCENARIO_H
#define OSN_FLUID_SCENARIO_H

#include <stdbool.h>
#include <stdio.h>

#include "osn/fluid.h"
#include "osn/ini.h"

/* The keys of the fluid format. Their offsets are into a struct of src/io/fluid_scenario.c (the
 * configuration and the inputs of the gain design): load with osn_fluid_scenario_load(). */
extern const struct osn_ini_schema osn_fluid_schema;

/* Prints the keys with their defaults: as --help lines, or as markdown for docs/scenario.md. */
void osn_fluid_scenario_keys_print(FILE *f, bool markdown);

#define OSN_FLUID_WARNING_MAX 512

struct osn_fluid_scenario {
    struct osn_fluid_cfg cfg; /* resolved and checked */
    struct osn_ini ini;       /* every key set, with its origin */
    /* Empty, or one line for the user about a key read under its old name (the command prints
     * it on stderr; the run is the same as with the new name). */
    char warning[OSN_FLUID_WARNING_MAX];
};

/*
 * Reads `path` (NULL: defaults and overrides only) and the `nsets` overrides, and fills sc.
 * Returns 0, or OSN_ECONFIG / OSN_EIO / OSN_EINVAL with one line in err; *sc is written only
 * on success, and then owns its keys: osn_fluid_scenario_release() frees them.
 */
int osn_fluid_scenario_load(struct osn_fluid_scenario *sc, const char *path,
                            const char *const *sets, int nsets, char *err, size_t errsize);

/* Frees the keys a loaded scenario holds. NULL, or a scenario zeroed or released: nothing. */
void osn_fluid_scenario_release(struct osn_fluid_scenario *sc);

/* The summary as a table (key, value, unit, meaning). Errors stay in the stream's flag. */
void osn_fluid_report_table(FILE *f, const struct osn_fluid_scenario *sc,
                            const struct osn_fluid_result *res);

/* The summary and the scenario as one JSON object. Returns 0, OSN_ENOMEM or OSN_EIO. */
int osn_fluid_report_json_write(FILE *f, const struct osn_fluid_scenario *sc,
                                const struct osn_fluid_result *res, char *err, size_t errsize);

/* The time series, one row per slot (columns: `osn fluid --help`). Returns 0 or OSN_EIO. */
int osn_fluid_report_csv_write(FILE *f, const struct osn_fluid_result *res, char *err,
                               size_t errsize);

/*
 * Plots the queue(s) and the retransmission rate to a PNG through gnuplot (pngcairo), written
 * atomically to `path`. Returns 0, or OSN_EIO with a message (gnuplot missing or failing).
 */
int osn_fluid_plot(const char *path, const struct osn_fluid_scenario *sc,
                   const struct osn_fluid_result *res, char *err, size_t errsize);
/* The same with the time axis [t0, t1] (s); NAN, NAN: the whole horizon. */
int osn_fluid_plot_range(const char *path, const struct osn_fluid_scenario *sc,
                         const struct osn_fluid_result *res, double t0, double t1, char *err,
                         size_t errsize);

#endif
