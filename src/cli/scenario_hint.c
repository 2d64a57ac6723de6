/*
 * Which command reads a scenario file, from its section names alone: `osn solve
 * examples/fanin.ini` once said "unknown section [net]" without saying that `osn sim` reads it.
 * Before any loader runs, the file's section headers are scanned and the first one that the
 * command never reads, but another command does, is named with the command to run instead.
 *
 * The table below is names only, kept apart from the loaders' key tables on purpose: a section
 * not in it is left to the loader, which names the file, line and the sections it knows. So a
 * loader may gain sections without this file, and this file can only add a hint, never refuse a
 * file that a loader would read, as long as each command's row lists the sections it reads.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "osn/ini.h"

/* The commands that read scenario files, as bits. */
enum { SOLVE = 1, OPTIMIZE = 2, SIM = 4, FLUID = 8, NODE = 16 };

static const struct {
    const char *cmd;
    unsigned bit;
} commands[] = {
        {"solve", SOLVE}, {"optimize", OPTIMIZE}, {"sim", SIM}, {"fluid", FLUID}, {"node", NODE}};

/* One section: its name ("link *": any link), the commands that read it, and the one to name
 * (NULL: a section of several kinds of scenario, such as [control], which decides nothing). */
static const struct section {
    const char *name;
    unsigned readers;
    const char *run, *what;
} sections[] = {
        {"model", SOLVE | OPTIMIZE | SIM, "solve", "a hysteretic model section"},
        {"thresholds", SOLVE | OPTIMIZE | SIM, "solve", "a hysteretic model section"},
        {"arrivals", SOLVE | OPTIMIZE | SIM, "solve", "a hysteretic model section"},
        {"service", SOLVE | OPTIMIZE | SIM, "solve", "a hysteretic model section"},
        {"optimize", OPTIMIZE, "optimize", "a threshold optimisation section"},
        {"sim", SIM, "sim", "a single-queue simulation section"},
        {"net", SIM | NODE, "sim", "a network scenario section"},
        {"source", SIM | NODE, "sim", "a network scenario section"},
        {"sip", SIM | NODE, "sim", "a network scenario section"},
        {"server edge", SIM | NODE, "sim", "a network scenario section"},
        {"server core", SIM | NODE, "sim", "a network scenario section"},
        {"server uas", SIM | NODE, "sim", "a network scenario section"},
        {"link *", SIM | NODE, "sim", "a network scenario section"},
        {"node", SIM | NODE, "node", "the section of `osn node`"},
        {"fluid", FLUID, "fluid", "a fluid model section"},
        {"profile", FLUID, "fluid", "a fluid model section"},
        {"server", FLUID, "fluid", "a fluid model section"},
        {"server p1", FLUID, "fluid", "a fluid model section"},
        {"server p2", FLUID, "fluid", "a fluid model section"},
        {"control", SIM | NODE | FLUID, NULL, NULL},
};

/* Copies the section name of header line `line` into name ("server core", one blank between
 * words, as the loaders read it); false when the line is no section header. */
static bool header_name(const char *line, char *name, size_t size)
{
    const char *p = line + strspn(line, " \t"), *close;
    size_t n = 0;

    if (p[0] == '\xEF' && p[1] == '\xBB' && p[2] == '\xBF') /* UTF-8 byte-order mark */
        p += 3;
    if (*p != '[' || !(close = strchr(p, ']')))
        return false;
    for (p++; p < close && n + 1 < size; p++) {
        bool blank = *p == ' ' || *p == '\t';
        if (blank && (n == 0 || name[n - 1] == ' '))
            continue;
        name[n++] = blank ? ' ' : *p;
    }
    while (n > 0 && name[n - 1] == ' ')
        n--;
    name[n] = '\0';
    return n > 0;
}

static const struct section *find_section(const char *name)
{
    for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++) {
        const char *s = sections[i].name;
        size_t n = strlen(s);
        if (s[n - 1] == '*' ? strncasecmp(name, s, n - 1) == 0 && name[n - 1] != '\0'
                            : strcasecmp(name, s) == 0)
            return &sections[i];
    }
    return NULL;
}

int osn_cli_scenario_hint(const char *cmd, const char *path)
{
    unsigned bit = 0;
    char line[512], name[128];
    size_t len;
    int st, lineno = 0, rc = 0;
    FILE *f;

    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(cmd, commands[i].cmd) == 0)
            bit = commands[i].bit;
    if (!bit || !path || !(f = fopen(path, "r")))
        return 0; /* the loader says why it cannot read the file */
    /* A NUL byte or the end stops the scan; a long line is read on in pieces, and only the
     * piece at a line's start can be a header. */
    bool at_start = true;
    while (!rc && (st = osn_ini_getline(f, line, sizeof line, &len)) != OSN_INI_LINE_EOF &&
           st != OSN_INI_LINE_NUL) {
        if (at_start)
            lineno++;
        const struct section *s =
                at_start && header_name(line, name, sizeof name) ? find_section(name) : NULL;
        at_start = st != OSN_INI_LINE_LONG;
        if (s && s->run && !(s->readers & bit))
            rc = osn_cli_die(cmd, "%s:%d: [%s] is %s: run `osn %s %s`", path, lineno, name, s->what,
                             s->run, path);
    }
    fclose(f);
    return rc;
}
