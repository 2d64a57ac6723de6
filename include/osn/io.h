/*
 * Scenario files and result writers.
 *
 * A scenario is an INI file ([model], [thresholds], [arrivals], [service]) with command-line
 * overrides "--set section.key=value". Every error names where the bad value came from: the file
 * and line, or the --set flag. Result files are written to a temporary file and renamed, so a
 * failed run never leaves a half-written file.
 */
#ifndef OSN_IO_H
#define OSN_IO_H

#include <stdbool.h>
#include <stdio.h>

#include "osn/model.h"

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

/* The model's keys: [model], [thresholds], [arrivals], [service]. */
extern const struct osn_ini_schema osn_model_schema;

struct osn_scenario {
    struct osn_model model; /* resolved and checked when osn_scenario_load() succeeds */
    struct osn_ini ini;     /* every key set, with its origin */
};

/*
 * Loads `path` (may be NULL: defaults plus overrides only), then applies the `nsets` overrides
 * "section.key=value", resolves and checks the model. `extra` (may be NULL) is a schema of more
 * sections the caller will interpret itself from sc->ini (e.g. [sim]); it must end in
 * osn_model_schema or NULL. On failure returns OSN_ECONFIG, OSN_EIO or OSN_ETOOBIG and writes
 * one line into err ("FILE:LINE: key 'arrivals.rate': ..."); *sc is untouched then. On success
 * the caller owns sc and releases it with osn_scenario_release().
 */
int osn_scenario_load(struct osn_scenario *sc, const char *path, const char *const *sets, int nsets,
                      const struct osn_ini_schema *extra, char *err, size_t errsize);

/* Frees what a loaded scenario owns (empirical samples, traces). Accepts a zeroed scenario. */
void osn_scenario_release(struct osn_scenario *sc);

/* The human-readable table of measures, with units and the method that ran. */
void osn_report_table(FILE *f, const struct osn_scenario *sc, const struct osn_measures *ms);

/*
 * The measures as one JSON object, or as a header line and one row of CSV, written to an open
 * stream (borrowed, not closed), so that a caller can commit several output files together (each
 * an osn_afile below). Returns 0, OSN_ENOMEM or OSN_EIO with a message in err.
 */
int osn_report_json_write(FILE *f, const struct osn_scenario *sc, const struct osn_measures *ms,
                          char *err, size_t errsize);
int osn_report_csv_write(FILE *f, const struct osn_scenario *sc, const struct osn_measures *ms,
                         char *err, size_t errsize);

/*
 * An output file that never destroys what is there (src/io/afile.c has the whole policy): a
 * regular file (or a symlink's target) is written to "PATH.tmp.PID" and renamed over PATH at
 * commit, keeping the old file's mode and owner; a device, FIFO or socket is written directly;
 * path "-" means stdout. Commit = finish (flush, sync, close: what can fail for lack of space)
 * + publish (rename); a run with several outputs finishes all before it publishes any.
 */
struct osn_afile {
    FILE *f;
    char path[4096]; /* the file written: a symbolic link's final target */
    char tmp[4096];  /* the temporary; empty for stdout and direct outputs */
    int is_stdout;
    int is_direct;     /* a device, FIFO or socket, written in place */
    int copy_in_place; /* the old file's owner could not be kept: copy, do not rename */
    int finished;      /* osn_afile_finish() succeeded; publish pending */
};

int osn_afile_open(struct osn_afile *af, const char *path, char *err, size_t errsize);
int osn_afile_finish(struct osn_afile *af, char *err, size_t errsize);
int osn_afile_publish(struct osn_afile *af, char *err, size_t errsize);
int osn_afile_commit(struct osn_afile *af, char *err, size_t errsize);
void osn_afile_abort(struct osn_afile *af);
const char *osn_afile_write_path(const struct osn_afile *af);

#endif
