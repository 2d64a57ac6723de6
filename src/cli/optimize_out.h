/*
 * Outputs of `osn optimize` (src/cli/optimize_out.c): the summary, the --grid CSV and the --plot
 * heat map. Private to the command; the --json document is osn_opt_json_write()
 * (include/osn/optimize_scenario.h).
 */
#ifndef OSN_CLI_OPTIMIZE_OUT_H
#define OSN_CLI_OPTIMIZE_OUT_H

#include <stdbool.h>
#include <stdio.h>

#include "osn/model_scenario.h"
#include "osn/optimize.h"

/* Where the per-pair rows go: the grid CSV and/or the plot's data file (either may be NULL). */
struct osn_opt_grid {
    FILE *f;    /* --grid stream, borrowed */
    FILE *plot; /* the plot's temporary data file, owned */
    char plot_path[64];
    long R;                           /* the grid's size, for the plot's point size */
    bool bi_level;                    /* the pair is (L1, H1): the plot's axis names */
    enum osn_opt_objective objective; /* what the plot's colour shows */
};

/* The CSV header line of --grid. Returns 0 or OSN_EIO. */
int osn_opt_grid_header(FILE *f);

/* osn_optimize() visit callback (arg: struct osn_opt_grid): one row per pair. */
int osn_opt_grid_row(const struct osn_opt_pair *p, void *arg);

/*
 * The readable summary: optimum or closest pair, constraints vs bounds, binding constraint,
 * counts, then osn_report_table() of the reported pair. `at` is the scenario at that pair.
 */
void osn_opt_summary(FILE *f, const struct osn_scenario *at, const struct osn_opt_cfg *cfg,
                     const struct osn_opt_result *res);

/* --plot: opens the temporary data file (before the search). Returns 0 or OSN_EIO. */
int osn_opt_plot_begin(struct osn_opt_grid *g, char *err, size_t errsize);

/* --plot: runs gnuplot to draw the PNG into `png` (after the search). Returns 0 or OSN_EIO. */
int osn_opt_plot_end(struct osn_opt_grid *g, const char *png, const struct osn_opt_result *res,
                     char *err, size_t errsize);

/* Closes and removes the plot's data file, if any. */
void osn_opt_plot_free(struct osn_opt_grid *g);

#endif
