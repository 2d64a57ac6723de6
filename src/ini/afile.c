/*
 * Output files that never destroy what is there.
 *
 * The policy ("Output files" in docs/commands/solve.md), decided after coreutils' `sort -o`, rsync
 * and SQLite:
 *  - A regular file, existing or new, is replaced atomically: the result is written to
 *    "PATH.tmp.PID" in the same directory and renamed over PATH only when everything was
 *    written, flushed and synced; any failure removes the temporary file. A reader sees the old
 *    file or the complete new one, never half of one, and a failed run leaves nothing behind.
 *    An existing file keeps its mode and owner (where the owner cannot be kept, because another
 *    user owns a file we may write, the result is copied into it in place instead of renamed);
 *    a file we may not write is refused, as `cp` refuses it.
 *  - A symbolic link is followed to its target, which is then written as above: the link stays.
 *  - Anything else that exists (a character device such as /dev/null or /dev/full, a FIFO, a
 *    socket, /dev/stdout) is opened and written directly, never replaced by a regular file:
 *    `make` as root once replaced /dev/null because of the rename. Directories are refused.
 *  - Path "-" is standard output, which can only be flushed, not taken back.
 * The temporary file is created with O_EXCL (never following a planted link) and mode 0666
 * minus the umask, so a new result gets the permissions of any ordinary file.
 *
 * Signals: every live temporary (ours, and any other a caller registers, such as the plot data
 * of `osn optimize --plot`) is in a small registry. osn_afile_cleanup_on_signals() installs a
 * handler for SIGINT, SIGTERM, SIGHUP and SIGQUIT that unlinks them all and re-raises the signal
 * with its default action, so an interrupted run dies as it would have but leaves no
 * "PATH.tmp.PID" behind. The handler only reads atomic pointers and calls unlink() and raise(),
 * both async-signal-safe; a signal the process inherited as ignored stays ignored (as `sort`
 * does), so `nohup` and background jobs keep working.
 */
#include "osn/afile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "osn/err.h"

/* Symbolic links followed before giving up, as the kernel's own limit (ELOOP). */
#define SYMLINK_HOPS_MAX 40

/* Live temporaries a signal must remove. 64 is far more than any command keeps at once (the
 * most is --dist, --json, --csv and --plot together); a full registry only means a temporary
 * could survive a signal, so registering never fails a run. */
#define TEMPS_MAX 64
static _Atomic(const char *) temps[TEMPS_MAX];

void osn_afile_track(const char *path)
{
    for (int i = 0; i < TEMPS_MAX; i++) {
        const char *expect = NULL;
        if (atomic_compare_exchange_strong(&temps[i], &expect, path))
            return;
    }
}

void osn_afile_untrack(const char *path)
{
    for (int i = 0; i < TEMPS_MAX; i++) {
        const char *expect = path;
        if (atomic_compare_exchange_strong(&temps[i], &expect, NULL))
            return;
    }
}

/* The handler: async-signal-safe (atomic loads, unlink, sigaction, raise) and saves errno. */
static void on_fatal_signal(int sig)
{
    int saved = errno;
    for (int i = 0; i < TEMPS_MAX; i++) {
        const char *p = atomic_load(&temps[i]);
        if (p && p[0])
            unlink(p);
    }
    /* SA_RESETHAND restored the default action and SA_NODEFER leaves sig unblocked: this
     * raise() ends the process with the signal's own status (128 + sig for the shell). */
    raise(sig);
    errno = saved;
}

void osn_afile_cleanup_on_signals(void)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
    struct sigaction sa = {0}, old;

    sa.sa_handler = on_fatal_signal;
    sa.sa_flags = SA_RESETHAND | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
            sigaction(sigs[i], &sa, NULL);
}

/* Writes "PATH: what: strerror" into err. Returns OSN_EIO. */
static int io_error(char *err, size_t errsize, const char *path, const char *what, int errnum)
{
    if (err && errsize)
        snprintf(err, errsize, "%s: %s: %s", path, what, strerror(errnum));
    return OSN_EIO;
}

/*
 * Follows `path` through symbolic links to the name that is really written (the last link's
 * target, which may not exist yet: a dangling link creates its target, as the shell's `>` does).
 * Relative targets are taken relative to the link's directory. Returns 0 or an errno value.
 */
static int follow_links(const char *path, char *out, size_t outsize)
{
    char cur[sizeof((struct osn_afile *)0)->path], target[sizeof cur];
    struct stat st;

    if (snprintf(cur, sizeof cur, "%s", path) >= (int)sizeof cur)
        return ENAMETOOLONG;
    for (int hop = 0; hop <= SYMLINK_HOPS_MAX; hop++) {
        if (lstat(cur, &st) != 0 || !S_ISLNK(st.st_mode)) {
            if (snprintf(out, outsize, "%s", cur) >= (int)outsize)
                return ENAMETOOLONG;
            return 0;
        }
        ssize_t n = readlink(cur, target, sizeof target - 1);
        if (n < 0)
            return errno;
        if ((size_t)n >= sizeof target - 1)
            return ENAMETOOLONG;
        target[n] = '\0';
        if (target[0] == '/') {
            memcpy(cur, target, (size_t)n + 1);
        } else {
            char *slash = strrchr(cur, '/');
            size_t dirlen = slash ? (size_t)(slash - cur) + 1 : 0;
            if (dirlen + (size_t)n + 1 > sizeof cur)
                return ENAMETOOLONG;
            memcpy(cur + dirlen, target, (size_t)n + 1);
        }
    }
    return ELOOP;
}

/* Removes af's temporary file (if any) and forgets it. */
static void drop_temporary(struct osn_afile *af)
{
    if (!af->tmp[0])
        return;
    unlink(af->tmp);
    osn_afile_untrack(af->tmp);
    af->tmp[0] = '\0';
}

/* Opens a device, FIFO or socket for direct writing (af->tmp stays empty). */
static int open_direct(struct osn_afile *af, char *err, size_t errsize)
{
    int fd = open(af->path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return io_error(err, errsize, af->path, "cannot open output", errno);
    af->f = fdopen(fd, "w");
    if (!af->f) {
        int e = errno;
        close(fd);
        return io_error(err, errsize, af->path, "cannot open output stream", e);
    }
    af->is_direct = 1;
    return 0;
}

/* Creates the temporary file beside af->path; gives it the mode and owner of `old`, if any. */
static int open_temporary(struct osn_afile *af, const struct stat *old, char *err, size_t errsize)
{
    int fd = -1;
    int n;

    /* A stale temporary of a crashed run with the same pid is possible: try a few names. */
    for (int i = 0; i < 100 && fd < 0; i++) {
        if (i == 0)
            n = snprintf(af->tmp, sizeof af->tmp, "%s.tmp.%ld", af->path, (long)getpid());
        else
            n = snprintf(af->tmp, sizeof af->tmp, "%s.tmp.%ld.%d", af->path, (long)getpid(), i);
        if (n < 0 || (size_t)n >= sizeof af->tmp)
            break;
        fd = open(af->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    if (fd < 0) {
        int e = errno;
        af->tmp[0] = '\0';
        return io_error(err, errsize, af->path, "cannot create output file", e);
    }
    osn_afile_track(af->tmp);
    if (old) {
        /* The replacement keeps the old file's owner and mode; where the owner cannot be kept,
         * commit copies into the old file instead of renaming over it. */
        if (old->st_uid != geteuid() || old->st_gid != getegid())
            af->copy_in_place = fchown(fd, old->st_uid, old->st_gid) != 0;
        if (fchmod(fd, old->st_mode & 07777) != 0)
            af->copy_in_place = 1;
    }
    af->f = fdopen(fd, "w");
    if (!af->f) {
        int e = errno;
        close(fd);
        drop_temporary(af);
        return io_error(err, errsize, af->path, "cannot open output stream", e);
    }
    return 0;
}

/*
 * Opens `path` for writing as the policy above says ("-" = stdout). On success af->f is the
 * stream to write to; it belongs to af until osn_afile_commit() or osn_afile_abort().
 * Returns 0 or OSN_EIO (OSN_EINVAL for a NULL or empty path) with a message in err.
 */
int osn_afile_open(struct osn_afile *af, const char *path, char *err, size_t errsize)
{
    struct stat st;
    int e;

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
    e = follow_links(path, af->path, sizeof af->path - 32);
    if (e)
        return io_error(err, errsize, path, "cannot follow symbolic link", e);
    if (stat(af->path, &st) != 0) {
        if (errno != ENOENT)
            return io_error(err, errsize, path, "cannot open output", errno);
        return open_temporary(af, NULL, err, errsize);
    }
    if (S_ISDIR(st.st_mode))
        return io_error(err, errsize, path, "cannot write output", EISDIR);
    if (!S_ISREG(st.st_mode))
        return open_direct(af, err, errsize);
    if (access(af->path, W_OK) != 0)
        return io_error(err, errsize, path, "cannot write output", errno);
    return open_temporary(af, &st, err, errsize);
}

/* Copies the finished temporary into the target in place (its owner could not be kept). */
static int copy_into(const struct osn_afile *af, char *err, size_t errsize)
{
    char buf[65536];
    int rc = 0;
    int in = open(af->tmp, O_RDONLY | O_CLOEXEC);
    int out = in < 0 ? -1 : open(af->path, O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (in < 0 || out < 0) {
        rc = io_error(err, errsize, af->path, "cannot open output", errno);
        goto out;
    }
    for (;;) {
        ssize_t n = read(in, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            rc = io_error(err, errsize, af->path, "cannot read temporary file", errno);
            goto out;
        }
        if (n == 0)
            break;
        for (ssize_t done = 0; done < n;) {
            ssize_t w = write(out, buf + done, (size_t)(n - done));
            if (w < 0 && errno == EINTR)
                continue;
            if (w < 0) {
                rc = io_error(err, errsize, af->path, "write failed", errno);
                goto out;
            }
            done += w;
        }
    }
    if (fsync(out) != 0 && errno != EINVAL && errno != EROFS)
        rc = io_error(err, errsize, af->path, "sync failed", errno);
out:
    if (in >= 0)
        close(in);
    if (out >= 0 && close(out) != 0 && !rc)
        rc = io_error(err, errsize, af->path, "close failed", errno);
    return rc;
}

/*
 * The first half of a commit: flush, check for write errors, sync and close. What can fail for
 * lack of space fails here, so a caller with several outputs finishes all before it publishes
 * any. For stdout and direct outputs this is the whole commit. On failure the temporary file is
 * removed and OSN_EIO returned with a message.
 */
int osn_afile_finish(struct osn_afile *af, char *err, size_t errsize)
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
        return rc;
    }
    if (fflush(f) != 0 || ferror(f)) {
        rc = io_error(err, errsize, af->path, "write failed", errno ? errno : EIO);
        fclose(f);
        goto out;
    }
    /* Without the sync a crash soon after the rename could leave an empty file behind it. */
    if (!af->is_direct && fsync(fileno(f)) != 0 && errno != EINVAL && errno != EROFS) {
        rc = io_error(err, errsize, af->path, "sync failed", errno);
        fclose(f);
        goto out;
    }
    if (fclose(f) != 0)
        rc = io_error(err, errsize, af->path, "close failed", errno);
out:
    if (rc)
        drop_temporary(af);
    af->finished = !rc;
    return rc;
}

/*
 * The second half: puts a finished temporary in place (rename, or copy where the owner could
 * not be kept). Nothing to do for stdout and direct outputs.
 */
int osn_afile_publish(struct osn_afile *af, char *err, size_t errsize)
{
    int rc = 0;

    if (!af || !af->finished)
        return OSN_EINVAL;
    af->finished = 0;
    if (!af->tmp[0])
        return 0;
    if (af->copy_in_place)
        rc = copy_into(af, err, errsize);
    else if (rename(af->tmp, af->path) != 0)
        rc = io_error(err, errsize, af->path, "cannot rename temporary file into place", errno);
    if (rc || af->copy_in_place)
        unlink(af->tmp);
    osn_afile_untrack(af->tmp);
    af->tmp[0] = '\0';
    return rc;
}

/* Finish and publish one file. Either way af no longer owns a stream afterwards. */
int osn_afile_commit(struct osn_afile *af, char *err, size_t errsize)
{
    int rc = osn_afile_finish(af, err, errsize);
    return rc ? rc : osn_afile_publish(af, err, errsize);
}

/*
 * Gives up the file: closes and removes the temporary file (for stdout and direct outputs,
 * flushes). Safe to call after any osn_afile_open() (even a failed one), after a commit, after
 * a finish, and more than once.
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
    if (!af->is_stdout)
        drop_temporary(af);
    af->tmp[0] = '\0';
    af->finished = 0;
}

/* The name the stream writes to now: the temporary, or the output itself when direct. */
const char *osn_afile_write_path(const struct osn_afile *af)
{
    return af->tmp[0] ? af->tmp : af->path;
}
