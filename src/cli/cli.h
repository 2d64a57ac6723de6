/*
 * Private interface of the `osn` command: the subcommand entry points
 * that main.c dispatches to. Each subcommand parses its own arguments, prints its own --help,
 * and returns the process exit status (0 success, 2 any error).
 */
#ifndef OSN_CLI_H
#define OSN_CLI_H

#include <stdio.h>

/* Exit status of every failed command: bad scenario, bad option, I/O or solver failure. */
#define OSN_EXIT_ERROR 2

#include <stdbool.h>

/* Prints "osn CMD: <message>" on stderr and returns OSN_EXIT_ERROR. */
int osn_cli_die(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The scenario keys from their tables (src/cli/scenario_doc.c): all of them as text or as the
 * markdown of docs/scenario.md (`osn help scenario [--markdown]`; returns the exit status), and
 * the network's or the node's as --help lines. */
int osn_cli_scenario_doc(FILE *f, bool markdown);
void osn_cli_net_keys(FILE *f);
void osn_cli_node_keys(FILE *f);

/*
 * Matches option `name` at argv[*i], as "--name VALUE" or "--name=VALUE". Returns 1 with *value
 * set (and *i advanced past a separate value), 0 when argv[*i] is another option, -1 when the
 * value is missing.
 */
int osn_cli_opt_value(int argc, char **argv, int *i, const char *name, const char **value);

/* The whole number in [lo, hi] that `flag` was given as s; else prints why, OSN_EXIT_ERROR. */
int osn_cli_long(const char *cmd, const char *flag, const char *s, long lo, long hi, long *out);

/* Worker threads when --threads is not given: the CPUs online, 1 .. 256. */
int osn_cli_threads_default(void);

/* One option of a subcommand, for osn_cli_parse(). */
struct osn_cli_opt {
    const char *name;  /* "--json" */
    const char *alias; /* "-q", or NULL */
    enum {
        OSN_CLI_FLAG,   /* dest is a bool *, set to true */
        OSN_CLI_VALUE,  /* dest is a const char **: any non-empty value */
        OSN_CLI_OUTPUT, /* dest is a const char **: a file name, or - for stdout */
        OSN_CLI_FILE,   /* dest is a const char **: a file name, not - */
    } kind;
    void *dest;
};

/* What every subcommand takes besides its options. */
struct osn_cli_args {
    const char *scenario; /* the one positional argument, or NULL */
    const char **sets;    /* the --set values, in order (owned: free()) */
    int nsets;
    bool help; /* -h or --help */
};

/*
 * Parses argv (argv[0] is the subcommand `cmd`): the scenario, --set (room is left for
 * `extra_sets` more entries in a->sets), -h/--help, "--" and the options of `opts` (ended by an
 * entry with name NULL). Rejects an unknown option, a missing or empty value, a second scenario,
 * "-" as the scenario, "-" for a FILE option, and one file named by two output options. Returns
 * 0, or OSN_EXIT_ERROR after printing why (a->sets is then freed and NULL).
 */
int osn_cli_parse(const char *cmd, int argc, char **argv, const struct osn_cli_opt *opts,
                  int extra_sets, struct osn_cli_args *a);

/*
 * Before a scenario is loaded: when the file at `path` has a section that command `cmd` (solve,
 * optimize, sim, fluid, node; others are not checked) never reads but another command does,
 * prints "FILE:LINE: [net] is a network scenario section: run `osn sim FILE`" and returns
 * OSN_EXIT_ERROR; else 0, also when the file cannot be read (its loader says why).
 */
int osn_cli_scenario_hint(const char *cmd, const char *path);

/* `osn solve`: argv[0] is "solve". Returns the exit status. */
int osn_cmd_solve(int argc, char **argv);

/* Writes the full `osn solve --help` text to f. */
void osn_cmd_solve_usage(FILE *f);

/* `osn optimize`: argv[0] is "optimize". Returns the exit status. */
int osn_cmd_optimize(int argc, char **argv);

/* Writes the full `osn optimize --help` text to f. */
void osn_cmd_optimize_usage(FILE *f);

#endif
