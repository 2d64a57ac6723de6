/*
 * Entry points of `osn sim` (src/cli/cmd_sim.c), dispatched by main.c. Kept apart from cli.h,
 * as cmd_fluid.h is, because several subcommands are being added at the same time; fold the
 * declarations into cli.h when convenient.
 */
#ifndef OSN_CMD_SIM_H
#define OSN_CMD_SIM_H

#include <stdbool.h>
#include <stdio.h>

/* `osn sim`: argv[0] is "sim". Returns the exit status (0, or 2 on any error). */
int osn_cmd_sim(int argc, char **argv);

/* Writes the full `osn sim --help` text to f. */
void osn_cmd_sim_usage(FILE *f);

/* The progress line of either simulator on stderr: "\rosn sim: ", then `what` (the sweep value,
 * or ""), then "42%  3.1 s elapsed, about 4.3 s left". */
void osn_cmd_sim_progress(const char *what, double done, double elapsed);

/* Network scenarios (src/cli/cmd_sim_net.c): whether argv names one (a file with a [net] or
 * [source] section, a --set net.* / source.*, or --trace), the command for it, and its part of
 * the help text. */
bool osn_cmd_sim_is_net(int argc, char **argv);
int osn_cmd_sim_net(int argc, char **argv);
void osn_cmd_sim_net_usage(FILE *f);

/* --compare KEY=A,B,... (src/cli/cmd_sim_compare.c): whether argv has it, the command on a
 * network scenario (net) or a node one, and its part of the help text. */
bool osn_cmd_sim_compare_wanted(int argc, char **argv);
int osn_cmd_sim_compare(int argc, char **argv, bool net);
void osn_cmd_sim_compare_usage(FILE *f);

#endif
