/*
 * Parameter studies as the `osn` command offers them: the options (study.c), the runners that
 * run one point of `osn sim`, `osn solve` or `osn fluid` (osn_study_run.c: the only place that
 * knows the subcommands) and the table (study_table.c). The grid, rounds, checkpoint and MPI ranks
 * are the study module's (osn/campaign.h), which knows nothing of what a run computes.
 */
#ifndef OSN_CLI_STUDY_H
#define OSN_CLI_STUDY_H

#include <stdbool.h>
#include <stdio.h>

#include "osn/campaign.h"

extern const struct osn_study_runner osn_study_net, osn_study_node, osn_study_solve,
        osn_study_fluid;

/* Whether argv asks for a study: a --set list (A,B with no blank), --resume, --precision or
 * --max-replications, two ranges, or one range when `range_is_study` (only the network
 * simulator had a one-range sweep of its own before). */
bool osn_study_wanted(int argc, char **argv, bool range_is_study);

/* Runs the study argv asks for; returns the exit status (0, or 2 after saying why). */
int osn_study_main(const struct osn_study_runner *r, int argc, char **argv);

/* The --help paragraph on studies, for every subcommand that has them. */
void osn_study_usage(FILE *f, bool replications);

/* The table on stdout: a row per point, grouped by the first varied key. */
void study_table(FILE *f, const struct osn_study *s);

#endif
