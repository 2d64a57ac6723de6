/*
 * Helpers every subcommand uses to read its arguments and report errors, so that they all
 * accept options the same way ("--name VALUE" or "--name=VALUE") and word failures the same
 * way ("osn CMD: message", exit status 2).
 */
#include "cli.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

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
