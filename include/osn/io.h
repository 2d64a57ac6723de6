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

#include <stdio.h>

#include "osn/model.h"

/* Where one key's value came from, for error messages and for the scenario echo. */
struct osn_key_origin {
    char key[64];    /* "section.key" */
    char value[128]; /* as written */
    char where[320]; /* "FILE:LINE" or "--set section.key=value" */
};

#define OSN_SCENARIO_MAX_KEYS 64

struct osn_scenario {
    struct osn_model model; /* resolved and checked when osn_scenario_load() succeeds */
    char path[256];         /* the scenario file, "" when none */
    int nkeys;
    struct osn_key_origin keys[OSN_SCENARIO_MAX_KEYS]; /* every key set, in order */
};

/*
 * Loads `path` (may be NULL: defaults plus overrides only), then applies the `nsets` overrides
 * "section.key=value", resolves and checks the model. On failure returns OSN_ECONFIG, OSN_EIO
 * or OSN_ETOOBIG and writes one line into err ("FILE:LINE: key 'arrivals.rate': ...").
 */
int osn_scenario_load(struct osn_scenario *sc, const char *path, const char *const *sets, int nsets,
                      char *err, size_t errsize);

/* The human-readable table of measures, with units and the method that ran. */
void osn_report_table(FILE *f, const struct osn_scenario *sc, const struct osn_measures *ms);

/*
 * Writes the measures as one JSON object (path "-" is stdout). Returns 0 or OSN_EIO with a
 * message in err.
 */
int osn_report_json(const char *path, const struct osn_scenario *sc, const struct osn_measures *ms,
                    char *err, size_t errsize);

/* Writes a header line and one row of measures as CSV (path "-" is stdout). */
int osn_report_csv(const char *path, const struct osn_scenario *sc, const struct osn_measures *ms,
                   char *err, size_t errsize);

/*
 * The same two documents written to an open stream (borrowed, not closed), for a caller that
 * commits several output files together. Returns 0, OSN_ENOMEM or OSN_EIO with a message.
 */
int osn_report_json_write(FILE *f, const struct osn_scenario *sc, const struct osn_measures *ms,
                          char *err, size_t errsize);
int osn_report_csv_write(FILE *f, const struct osn_scenario *sc, const struct osn_measures *ms,
                         char *err, size_t errsize);

/*
 * An output file written atomically: osn_afile_open() creates "PATH.tmp.PID"; commit renames it
 * over PATH, abort removes it. Path "-" means stdout (commit/abort then only flush).
 */
struct osn_afile {
    FILE *f;
    char path[4096];
    char tmp[4096];
    int is_stdout;
};

int osn_afile_open(struct osn_afile *af, const char *path, char *err, size_t errsize);
int osn_afile_commit(struct osn_afile *af, char *err, size_t errsize);
void osn_afile_abort(struct osn_afile *af);

#endif
