/*
 * The scenario core: INI files read with file:line, key schemas and their collection, --set
 * overrides and the value parsers every module's scenario adapter uses (src/ini/ini.c).
 *
 * A scenario is an INI file with command-line overrides "--set section.key=value". This layer
 * knows no module: each module's adapter (src/io/) brings its schema and interprets its own keys;
 * every error names where the bad value came from, the file and line or the --set flag. It
 * depends on base only (and inih), so anything that reads scenarios links without the
 * simulator, the solver or the fluid model.
 */
#ifndef OSN_INI_H
#define OSN_INI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Where one key's value came from, for error messages and for the scenario echo. */
struct osn_key_origin {
    char key[64];    /* "section.key" */
    char value[256]; /* as written */
    char where[320]; /* "FILE:LINE" or "--set section.key=value" */
};

#define OSN_INI_MAX_KEYS 128

/* One key a scenario format knows. Section and key names match case-insensitively. */
struct osn_ini_keydef {
    const char *section;
    const char *name;
};

/*
 * The keys of one scenario format, as a chain of tables: every module that reads scenarios
 * (model, sim, fluid, ...) keeps its own table and links it in front of the ones it extends.
 */
struct osn_ini_schema {
    const struct osn_ini_keydef *defs;
    size_t n;
    const struct osn_ini_schema *next;
};

/* The assignments of a scenario file plus overrides, each with its origin. */
struct osn_ini {
    char path[256]; /* the scenario file, "" when none */
    int nkeys;
    struct osn_key_origin keys[OSN_INI_MAX_KEYS]; /* every key set, in order */
};

/*
 * Reads `path` (may be NULL) and then the `nsets` overrides "section.key=value" into *ini,
 * accepting only the keys of `schema`. A key given twice in the file is an error; an override
 * replaces a file value. Returns 0, or OSN_ECONFIG / OSN_EIO / OSN_EINVAL with one line in err
 * naming FILE:LINE (or the --set flag) and the key. *ini is only written on success.
 */
int osn_ini_collect(struct osn_ini *ini, const char *path, const char *const *sets, int nsets,
                    const struct osn_ini_schema *schema, char *err, size_t errsize);

/* The record of "section.key" (canonical spelling, as in the schema), or NULL when not set. */
const struct osn_key_origin *osn_ini_get(const struct osn_ini *ini, const char *key);

/* Writes "WHERE: key 'K' = 'V': <why>" into err and returns OSN_ECONFIG. */
int osn_ini_bad(const struct osn_key_origin *o, char *err, size_t errsize, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));

/* Value parsers; on a bad value they write the message above and return OSN_ECONFIG. */
int osn_ini_long(const struct osn_key_origin *o, long lo, long hi, long *out, char *err,
                 size_t errsize);
/* A finite number; min_excl: the value must be > lo, else >= lo. */
int osn_ini_double(const struct osn_key_origin *o, double lo, bool min_excl, double *out, char *err,
                   size_t errsize);
/* A comma- or blank-separated list of finite numbers >= 0; *n receives the count (<= max). */
int osn_ini_doubles(const struct osn_key_origin *o, double *out, int max, int *n, char *err,
                    size_t errsize);
/* One of the NULL-terminated `names` (any case); *out receives its index. */
int osn_ini_choice(const struct osn_key_origin *o, const char *const *names, int *out, char *err,
                   size_t errsize);

/*
 * Reads one line of a text file into buf (with its newline, NUL-terminated, *len bytes) and
 * tells what ended it: OSN_INI_LINE_OK (a newline, or the last line), OSN_INI_LINE_EOF (nothing
 * left), OSN_INI_LINE_NUL (a NUL byte: binary data, which no text file of ours holds and fgets()
 * would silently cut the line at; /dev/zero once kept a reader busy forever) or
 * OSN_INI_LINE_LONG (size - 1 bytes without a newline; the rest of the line is not read).
 */
enum { OSN_INI_LINE_OK, OSN_INI_LINE_EOF, OSN_INI_LINE_NUL, OSN_INI_LINE_LONG };
int osn_ini_getline(FILE *f, char *buf, size_t size, size_t *len);

#endif
