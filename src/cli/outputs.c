/* Result files of a subcommand (outputs.h). */
#include "outputs.h"

#include <errno.h>
#include <string.h>

#include "cli.h"

static bool is_file(const struct osn_cli_output *o)
{
    return o->path && strcmp(o->path, "-") != 0;
}

bool osn_cli_outputs_to_stdout(const struct osn_cli_output *out, int n)
{
    for (int i = 0; i < n; i++)
        if (out[i].path && !is_file(&out[i]))
            return true;
    return false;
}

FILE *osn_cli_output_open(const char *cmd, struct osn_cli_output *o)
{
    char err[512];
    if (!is_file(o))
        return stdout;
    if (!o->file.f && osn_afile_open(&o->file, o->path, err, sizeof err) != 0) {
        osn_cli_die(cmd, "%s: %s", o->flag, err); /* the message names the file */
        return NULL;
    }
    return o->file.f;
}

static int write_one(const char *cmd, struct osn_cli_output *o, const void *ctx)
{
    char err[512] = "";
    FILE *f = osn_cli_output_open(cmd, o);
    if (!f)
        return OSN_EXIT_ERROR;
    if (o->write(f, ctx, err, sizeof err) != 0)
        return osn_cli_die(cmd, "%s %s: %s", o->flag, o->path, err);
    return 0;
}

int osn_cli_outputs_write(const char *cmd, struct osn_cli_output *out, int n, const void *ctx)
{
    for (int pass = 0; pass < 2; pass++) /* files, then standard output */
        for (int i = 0; i < n; i++)
            if (out[i].path && out[i].write && is_file(&out[i]) == (pass == 0) &&
                write_one(cmd, &out[i], ctx) != 0)
                return OSN_EXIT_ERROR;
    return 0;
}

int osn_cli_stdout_done(const char *cmd)
{
    if (fflush(stdout) != 0 || ferror(stdout))
        return osn_cli_die(cmd, "cannot write to standard output: %s", strerror(errno));
    return 0;
}

int osn_cli_outputs_commit(const char *cmd, struct osn_cli_output *out, int n)
{
    /* All outputs land together: every file is finished (flushed, synced, closed: what fails
     * on a full disk fails here) before any is renamed into place. A rename in the directory a
     * file was just created in practically cannot fail; if one does, the files renamed before
     * it stay. */
    char err[512];
    for (int i = 0; i < n; i++)
        if (out[i].file.f && osn_afile_finish(&out[i].file, err, sizeof err) != 0) {
            osn_cli_outputs_abort(out, n);
            return osn_cli_die(cmd, "%s: %s", out[i].flag, err);
        }
    for (int i = 0; i < n; i++)
        if (out[i].file.finished && osn_afile_publish(&out[i].file, err, sizeof err) != 0) {
            osn_cli_outputs_abort(out, n);
            return osn_cli_die(cmd, "%s: %s", out[i].flag, err);
        }
    return 0;
}

void osn_cli_outputs_abort(struct osn_cli_output *out, int n)
{
    for (int i = 0; i < n; i++)
        osn_afile_abort(&out[i].file);
}

void osn_cli_csv_field(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}
