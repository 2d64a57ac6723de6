/*
 * The result files of a subcommand (--json, --csv, ...), written the same way by all: "-" is
 * standard output; any other path is written to a temporary beside it and renamed into place
 * only once everything has been written (osn_afile), so a failed run leaves no file behind and
 * no old file half-overwritten. Files are written before standard output, whose failure then
 * still lets them be taken back.
 */
#ifndef OSN_CLI_OUTPUTS_H
#define OSN_CLI_OUTPUTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "osn/afile.h"

/* Writes a result to f; 0, or not 0 with a reason in err. */
typedef int (*osn_cli_writer)(FILE *f, const void *ctx, char *err, size_t errsize);

struct osn_cli_output {
    const char *flag;      /* "--json", for messages */
    const char *path;      /* as given; NULL: not asked for */
    osn_cli_writer write;  /* NULL: the command writes it itself, through osn_cli_output_open() */
    struct osn_afile file; /* the temporary of a file (zero it) */
};

/* Whether any output asked for goes to standard output (a command then prints no table). */
bool osn_cli_outputs_to_stdout(const struct osn_cli_output *out, int n);

/* The stream of one output (stdout, or its file's temporary, opened on first call); NULL after
 * telling why ("osn CMD: --json: ..."). */
FILE *osn_cli_output_open(const char *cmd, struct osn_cli_output *o);

/* Writes each output asked for that has a writer: files first, then standard output. 0, or
 * OSN_EXIT_ERROR after telling why ("osn CMD: --json PATH: ..."). */
int osn_cli_outputs_write(const char *cmd, struct osn_cli_output *out, int n, const void *ctx);

/* Flushes standard output and checks that it took everything; 0 or OSN_EXIT_ERROR (told). */
int osn_cli_stdout_done(const char *cmd);

/* Renames every file written into place; 0 or OSN_EXIT_ERROR (told). */
int osn_cli_outputs_commit(const char *cmd, struct osn_cli_output *out, int n);

/* Removes the temporaries left (after an error; nothing for committed or unopened ones). */
void osn_cli_outputs_abort(struct osn_cli_output *out, int n);

/* Writes s as one CSV field (RFC 4180): as it is, or in quotes with its quotes doubled when it
 * holds a comma, a quote or a line break. */
void osn_cli_csv_field(FILE *f, const char *s);

#endif
