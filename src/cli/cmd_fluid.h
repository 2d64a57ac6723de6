/*
 * Entry points of `osn fluid` (src/cli/cmd_fluid.c), dispatched by main.c. Kept apart from
 * cli.h only because other subcommands are being added to it at the same time; fold the two
 * declarations into cli.h when convenient.
 */
#ifndef OSN_CMD_FLUID_H
#define OSN_CMD_FLUID_H

#include <stdio.h>

/* `osn fluid`: argv[0] is "fluid". Returns the exit status (0, or 2 on any error). */
int osn_cmd_fluid(int argc, char **argv);

/* Writes the full `osn fluid --help` text to f. */
void osn_cmd_fluid_usage(FILE *f);

#endif
