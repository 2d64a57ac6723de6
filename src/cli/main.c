/*
 * The `osn` command: git-style dispatch to subcommands.
 *
 *     osn solve ...        exact measures of a hysteretic model (src/cli/cmd_solve.c)
 *     osn optimize ...     best thresholds under constraints (src/cli/cmd_optimize.c)
 *     osn fluid ...        fluid-model trajectories (src/cli/cmd_fluid.c)
 *     osn sim ...          discrete-event simulation of the node or a SIP network (cmd_sim*.c)
 *     osn node ...         one element of a scenario, for real (cmd_node.c)
 *     osn testbed ...      every element for real, beside osn sim (cmd_testbed.c, testbed_*.c)
 *     osn help [COMMAND]   overview, or a subcommand's full help
 *     osn --help | --version
 *
 * This file only dispatches; each subcommand parses its own options and prints its own help.
 * Subcommands the design names but that do not exist yet are listed in the overview as not yet
 * available and rejected like any unknown command (exit status 2).
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cmd_fluid.h"
#include "cmd_node.h"
#include "cmd_sim.h"
#include "osn/afile.h"
#include "osn/version.h"
#include "testbed.h"

struct command {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv);
    void (*usage)(FILE *f);
};

static const struct command commands[] = {
        {"solve", "exact measures of a hysteretic overload-control model", osn_cmd_solve,
         osn_cmd_solve_usage},
        {"optimize", "best thresholds (L, H) under constraints", osn_cmd_optimize,
         osn_cmd_optimize_usage},
        {"fluid", "fluid model of SIP retransmissions (burst, slowdown, tandem)", osn_cmd_fluid,
         osn_cmd_fluid_usage},
        {"sim", "discrete-event simulation: the hysteretic queue, or a SIP network", osn_cmd_sim,
         osn_cmd_sim_usage},
        {"node", "one element of a scenario, for real: a SIP proxy or UAS on UDP", osn_cmd_node,
         osn_cmd_node_usage},
        {"testbed", "the whole network of a scenario for real, beside osn sim", osn_cmd_testbed,
         osn_cmd_testbed_usage},
};

/* Designed (docs/design.md) but not written yet: listed so the plan is visible. The NULL
 * row ends the list, which may be empty. */
static const char *const planned[][2] = {
        {NULL, NULL},
};

#define NCOMMANDS (sizeof commands / sizeof commands[0])

static const struct command *find_command(const char *name)
{
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

static bool is_planned(const char *name)
{
    for (size_t i = 0; planned[i][0]; i++)
        if (strcmp(planned[i][0], name) == 0)
            return true;
    return false;
}

static void print_overview(FILE *f)
{
    fprintf(f, "Usage: osn COMMAND [ARGS]...\n"
               "       osn help COMMAND   (or: osn COMMAND --help)\n"
               "       osn help scenario [--markdown]   the scenario keys\n"
               "       osn --version\n"
               "\n"
               "OSN, a toolkit for SIP server overload control.\n"
               "\n"
               "Commands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
    if (planned[0][0])
        fprintf(f, "\nNot yet available:\n");
    for (size_t i = 0; planned[i][0]; i++)
        fprintf(f, "  %-10s %s\n", planned[i][0], planned[i][1]);
    fprintf(f, "\nExit status: 0 on success, 2 on any error.\n");
}

/* Reports a command that does not exist (or not yet) on stderr. Returns the exit status. */
static int unknown_command(const char *name)
{
    if (is_planned(name))
        fprintf(stderr, "osn: '%s' is not yet available (see 'osn --help')\n", name);
    else
        fprintf(stderr, "osn: unknown command '%s' (see 'osn --help')\n", name);
    return OSN_EXIT_ERROR;
}

/* `osn help [COMMAND]`. */
static int run_help(int argc, char **argv)
{
    const struct command *c;

    if (argc < 2) {
        print_overview(stdout);
        return 0;
    }
    /* `osn help scenario [--markdown]`: the scenario keys (docs/scenario.md is the markdown). */
    if (strcmp(argv[1], "scenario") == 0 &&
        (argc == 2 || (argc == 3 && strcmp(argv[2], "--markdown") == 0)))
        return osn_cli_scenario_doc(stdout, argc == 3);
    if (argc > 2) {
        fprintf(stderr, "osn help: expected one command name\n");
        return OSN_EXIT_ERROR;
    }
    c = find_command(argv[1]);
    if (!c)
        return unknown_command(argv[1]);
    c->usage(stdout);
    return 0;
}

int main(int argc, char **argv)
{
    const struct command *c;
    const char *name;
    int status;

    if (argc < 2) {
        print_overview(stderr);
        return OSN_EXIT_ERROR;
    }
    name = argv[1];
    /* SIGINT/SIGTERM/SIGHUP/SIGQUIT remove every temporary output before the process dies
     * (src/ini/afile.c); `osn node` installs its own handlers for a clean shutdown. */
    osn_afile_cleanup_on_signals();
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
        print_overview(stdout);
        status = 0;
    } else if (strcmp(name, "--version") == 0 || strcmp(name, "-V") == 0) {
        printf("osn %s\n", osn_version());
        status = 0;
    } else if (strcmp(name, "help") == 0) {
        status = run_help(argc - 1, argv + 1);
    } else if (name[0] == '-') {
        fprintf(stderr, "osn: unknown option '%s' (see 'osn --help')\n", name);
        status = OSN_EXIT_ERROR;
    } else if ((c = find_command(name))) {
        status = c->run(argc - 1, argv + 1);
    } else {
        status = unknown_command(name);
    }
    if (fflush(stdout) != 0 && status == 0) {
        fprintf(stderr, "osn: cannot write to standard output\n");
        status = OSN_EXIT_ERROR;
    }
    return status;
}
