/*
 * Output files that never destroy what is there (src/ini/afile.c has the whole policy). Part of
 * the scenario core (base only): every command's --csv/--json/--plot outputs go through it.
 */
#ifndef OSN_AFILE_H
#define OSN_AFILE_H

#include <stdio.h>

/*
 * An output file that never destroys what is there (src/ini/afile.c has the whole policy): a
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

/*
 * The registry of live temporaries removed when a signal ends the process (afile.c says how).
 * osn_afile_open() registers its own; a caller registers any other file it creates and must
 * remove (the buffer holding the name must live until osn_afile_untrack()). The CLI calls
 * osn_afile_cleanup_on_signals() once at start.
 */
void osn_afile_track(const char *path);
void osn_afile_untrack(const char *path);
void osn_afile_cleanup_on_signals(void);

#endif
