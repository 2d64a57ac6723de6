/*
 * Helpers every subcommand uses to read its arguments and report errors, so that they all
 * accept options the same way ("--name VALUE" or "--name=VALUE") and word failures the same
 * way ("osn CMD: message", exit status 2).
 */
#include "cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int osn_cli_die(const char *cmd, const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "osn %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return OSN_EXIT_ERROR;
}

int osn_cli_opt_value(int argc, char **argv, int *i, const char *name, const char **value)
{
    const char *a = argv[*i];
    size_t n = strlen(name);

    if (strncmp(a, name, n) != 0)
        return 0;
    if (a[n] == '=') {
        *value = a + n + 1;
        return 1;
    }
    if (a[n] != '\0')
        return 0;
    if (*i + 1 >= argc)
        return -1;
    *value = argv[++*i];
    return 1;
}

/* Rejects two output options that name the same file (the second rename would win silently). */
static int check_outputs(const char *cmd, const struct osn_cli_opt *opts)
{
    for (const struct osn_cli_opt *x = opts; x->name; x++) {
        const char *px = x->kind >= OSN_CLI_OUTPUT ? *(const char **)x->dest : NULL;
        if (!px)
            continue;
        for (const struct osn_cli_opt *y = x + 1; y->name; y++) {
            const char *py = y->kind >= OSN_CLI_OUTPUT ? *(const char **)y->dest : NULL;
            if (!py || strcmp(px, py) != 0)
                continue;
            /* Two documents on one standard output cannot be told apart by a reader
             * (`osn solve --json - --csv -` once printed JSON then CSV, exit 0). */
            if (strcmp(px, "-") == 0)
                return osn_cli_die(cmd, "%s - and %s - cannot both write to standard output",
                                   x->name, y->name);
            return osn_cli_die(cmd, "'%s' is given for two outputs", px);
        }
    }
    return 0;
}

/* Matches argv[*i] against opts and stores its value (advancing *i past a separate value).
 * Returns 0, or OSN_EXIT_ERROR after printing why (unknown option, missing or bad value). */
static int match_option(const char *cmd, int argc, char **argv, int *i,
                        const struct osn_cli_opt *opts)
{
    const char *arg = argv[*i], *v = NULL;

    for (const struct osn_cli_opt *o = opts; o->name; o++) {
        if (o->kind == OSN_CLI_FLAG) {
            if (strcmp(arg, o->name) == 0 || (o->alias && strcmp(arg, o->alias) == 0)) {
                *(bool *)o->dest = true;
                return 0;
            }
            continue;
        }
        int r = osn_cli_opt_value(argc, argv, i, o->name, &v);
        if (r == 0)
            continue;
        if (r < 0)
            return osn_cli_die(cmd, "option '%s' needs a value (see 'osn %s --help')", o->name,
                               cmd);
        if (!v[0])
            return osn_cli_die(cmd, "option '%s' needs %s", o->name,
                               o->kind == OSN_CLI_VALUE    ? "a value"
                               : o->kind == OSN_CLI_OUTPUT ? "a file name (or - for stdout)"
                                                           : "a file name");
        if (o->kind == OSN_CLI_FILE && strcmp(v, "-") == 0)
            return osn_cli_die(cmd, "option '%s' needs a file name, not -", o->name);
        *(const char **)o->dest = v;
        return 0;
    }
    return osn_cli_die(cmd, "unknown option '%s' (see 'osn %s --help')", arg, cmd);
}

static int parse(const char *cmd, int argc, char **argv, const struct osn_cli_opt *opts,
                 struct osn_cli_args *a)
{
    bool only_args = false;

    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *v = NULL;
        int r = 0;

        if (only_args || arg[0] != '-' || strcmp(arg, "-") == 0) {
            if (a->scenario)
                return osn_cli_die(cmd, "more than one scenario file ('%s' and '%s')", a->scenario,
                                   arg);
            a->scenario = arg;
            continue;
        }
        if (strcmp(arg, "--") == 0) {
            only_args = true;
            continue;
        }
        if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
            a->help = true;
            continue;
        }
        if ((r = osn_cli_opt_value(argc, argv, &i, "--set", &v)) != 0) {
            if (r < 0)
                return osn_cli_die(cmd, "option '--set' needs a value (see 'osn %s --help')", cmd);
            /* `--set server core.buffer=10` unquoted: the shell made two words of the key's
             * section name, and "core.buffer=10" was then taken for the scenario file. */
            if (!strchr(v, '=') && i + 1 < argc && argv[i + 1][0] != '-' &&
                strchr(argv[i + 1], '='))
                return osn_cli_die(cmd,
                                   "--set %s %s: the shell split one value in two; quote it: "
                                   "--set '%s %s'",
                                   v, argv[i + 1], v, argv[i + 1]);
            a->sets[a->nsets++] = v;
            continue;
        }
        if (match_option(cmd, argc, argv, &i, opts) != 0)
            return OSN_EXIT_ERROR;
    }
    if (a->scenario && strcmp(a->scenario, "-") == 0)
        return osn_cli_die(cmd, "reading the scenario from stdin is not supported; give a file");
    if (check_outputs(cmd, opts) != 0)
        return OSN_EXIT_ERROR;
    return a->help ? 0 : osn_cli_scenario_hint(cmd, a->scenario);
}

int osn_cli_parse(const char *cmd, int argc, char **argv, const struct osn_cli_opt *opts,
                  int extra_sets, struct osn_cli_args *a)
{
    a->sets = malloc(sizeof *a->sets * (size_t)(argc + extra_sets + 1));
    if (!a->sets)
        return osn_cli_die(cmd, "out of memory");
    int rc = parse(cmd, argc, argv, opts, a);
    if (rc) { /* the caller frees nothing after a failure (`osn node --frobnicate` leaked) */
        free(a->sets);
        a->sets = NULL;
        a->nsets = 0;
    }
    return rc;
}

int osn_cli_long(const char *cmd, const char *flag, const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (!s[0] || *end || errno == ERANGE || v < lo || v > hi)
        return osn_cli_die(cmd, "%s %s: expected a whole number in %ld .. %ld", flag, s, lo, hi);
    *out = v;
    return 0;
}

int osn_cli_threads_default(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 256 ? 256 : (int)n;
}
