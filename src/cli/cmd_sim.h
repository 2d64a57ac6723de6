/*
 * Entry points of `osn sim` (src/cli/cmd_sim.c), dispatched by main.c. Kept apart from cli.h,
 * as cmd_fluid.h is, because several subcommands are being added at the same time; fold the
 * declarations into cli.h when convenient.
 */
#ifndef OSN_CMD_SIM_H
#define OSN_CMD_SIM_H

#include <stdio.h>

/* `osn sim`: argv[0] is "sim". Returns the exit status (0, or 2 on any error). */
int osn_cmd_sim(int argc, char **argv);

/* Writes the full `osn sim --help` text to f. */
void osn_cmd_sim_usage(FILE *f);

#endif
