/*
 * Atomic output files.
 *
 * A result file is written to "PATH.tmp.PID" in the same directory and renamed over PATH only
 * when everything was written, flushed and synced; any failure removes the temporary file. A
 * reader therefore sees either the old file or the complete new one, and a failed run leaves
 * nothing behind. The temporary file is created with O_EXCL (never following a planted link)
 * and mode 0666 minus the umask, so the result gets the permissions of any ordinary file.
 * Path "-" is standard output, which can only be flushed, not taken back.
 */
#include "osn/io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "osn/err.h"

/* Writes "PATH: what: strerror" into err. Returns OSN_EIO. */
static int io_error(char *err, size_t errsize, const char *path, const char *what, int errnum)
{
    if (err && errsize)
        snprintf(err, errsize, "%s: %s: %s", path, what, strerror(errnum));
    return OSN_EIO;
}

/*
 * Opens `path` for writing through a temporary file ("-" = stdout). On success af->f is the
 * stream to write to; it belongs to af until osn_afile_commit() or osn_afile_abort().
 * Returns 0 or OSN_EIO (OSN_EINVAL for a NULL or empty path) with a message in err.
 */
int osn_afile_open(struct osn_afile *af, const char *path, char *err, size_t errsize)
{
    int fd = -1;
    int n;

    if (!af)
        return OSN_EINVAL;
    memset(af, 0, sizeof *af);
    if (!path || !path[0]) {
        if (err && errsize)
            snprintf(err, errsize, "empty output file name");
        return OSN_EINVAL;
    }
    if (strcmp(path, "-") == 0) {
        af->f = stdout;
        af->is_stdout = 1;
        snprintf(af->path, sizeof af->path, "(stdout)");
        return 0;
    }
    if (strlen(path) >= sizeof af->path - 32) {
        if (err && errsize)
            snprintf(err, errsize, "%.64s...: output file name too long", path);
        return OSN_EIO;
    }
    snprintf(af->path, sizeof af->path, "%s", path);
    /* A stale temporary of a crashed run with the same pid is possible: try a few names. */
    for (int i = 0; i < 100 && fd < 0; i++) {
        if (i == 0)
            n = snprintf(af->tmp, sizeof af->tmp, "%s.tmp.%ld", path, (long)getpid());
        else
            n = snprintf(af->tmp, sizeof af->tmp, "%s.tmp.%ld.%d", path, (long)getpid(), i);
        if (n < 0 || (size_t)n >= sizeof af->tmp)
            break;
        fd = open(af->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    if (fd < 0) {
        int e = errno;
        af->tmp[0] = '\0';
        return io_error(err, errsize, path, "cannot create output file", e);
    }
    af->f = fdopen(fd, "w");
    if (!af->f) {
        int e = errno;
        close(fd);
        unlink(af->tmp);
        af->tmp[0] = '\0';
        return io_error(err, errsize, path, "cannot open output stream", e);
    }
    return 0;
}

/*
 * Finishes the file: flush, check for write errors, fsync, close, rename over the path. On
 * failure the temporary file is removed and OSN_EIO returned with a message. Either way af no
 * longer owns a stream afterwards. For stdout only flushes and checks.
 */
int osn_afile_commit(struct osn_afile *af, char *err, size_t errsize)
{
    int rc = 0;
    FILE *f;

    if (!af || !af->f)
        return OSN_EINVAL;
    f = af->f;
    af->f = NULL;
    if (af->is_stdout) {
        if (fflush(f) != 0 || ferror(f))
            rc = io_error(err, errsize, "(stdout)", "write failed", errno ? errno : EIO);
        goto out;
    }
    if (fflush(f) != 0 || ferror(f)) {
        rc = io_error(err, errsize, af->path, "write failed", errno ? errno : EIO);
        fclose(f);
        goto out;
    }
    /* Without the sync a crash soon after the rename could leave an empty file behind it. */
    if (fsync(fileno(f)) != 0 && errno != EINVAL && errno != EROFS) {
        rc = io_error(err, errsize, af->path, "sync failed", errno);
        fclose(f);
        goto out;
    }
    if (fclose(f) != 0) {
        rc = io_error(err, errsize, af->path, "close failed", errno);
        goto out;
    }
    if (rename(af->tmp, af->path) != 0)
        rc = io_error(err, errsize, af->path, "cannot rename temporary file into place", errno);
out:
    if (rc && af->tmp[0])
        unlink(af->tmp);
    af->tmp[0] = '\0';
    return rc;
}

/*
 * Gives up the file: closes and removes the temporary file (for stdout, flushes). Safe to call
 * after any osn_afile_open() (even a failed one), after a commit, and more than once.
 */
void osn_afile_abort(struct osn_afile *af)
{
    if (!af)
        return;
    if (af->f) {
        if (af->is_stdout)
            fflush(af->f);
        else
            fclose(af->f);
        af->f = NULL;
    }
    if (!af->is_stdout && af->tmp[0])
        unlink(af->tmp);
    af->tmp[0] = '\0';
}
