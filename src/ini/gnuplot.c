/*
 * gnuplot for --plot outputs, with file names as data.
 *
 * `osn optimize --plot $'a\nsystem "touch pwned"\n#.png'` once ran the injected command: the
 * name was printed into the script inside quotes, and a newline (or a quote, or gnuplot's own
 * backquote and macro substitution) turns the rest into code. Escaping gnuplot's syntax is a
 * losing game, so the names never enter the script at all: gnuplot runs as
 * `gnuplot -c /dev/stdin NAME...`, which reads the script from the pipe and gives each NAME to it
 * as the string variable ARG1, ARG2, ... (gnuplot 5's `call` arguments). No shell is involved
 * either (posix_spawnp, not popen), so the name is one argv entry from end to end.
 */
#include "osn/gnuplot.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "osn/err.h"

extern char **environ;

/* gnuplot's call arguments are ARG1..ARG9. */
#define GNUPLOT_ARGS_MAX 9

int osn_gnuplot_open(struct osn_gnuplot *gp, const char *const *args, int nargs, int quiet,
                     char *err, size_t errsize)
{
    char *argv[GNUPLOT_ARGS_MAX + 4];
    posix_spawn_file_actions_t fa;
    int fds[2], rc;

    gp->f = NULL;
    gp->pid = -1;
    if (nargs < 0 || nargs > GNUPLOT_ARGS_MAX)
        return OSN_EINVAL;
    argv[0] = "gnuplot", argv[1] = "-c", argv[2] = "/dev/stdin";
    for (int i = 0; i < nargs; i++)
        argv[3 + i] = (char *)args[i];
    argv[3 + nargs] = NULL;
    if (pipe(fds) != 0) {
        snprintf(err, errsize, "cannot run gnuplot: %s", strerror(errno));
        return OSN_EIO;
    }
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[0], STDIN_FILENO);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    posix_spawn_file_actions_addclose(&fa, fds[1]);
    if (quiet)
        posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    struct sigaction ign = {0};
    ign.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ign, &gp->old_pipe);
    /* gnuplot gets SIGPIPE back at its default (we ignore it only for ourselves). */
    posix_spawnattr_t attr;
    sigset_t dfl;
    posix_spawnattr_init(&attr);
    sigemptyset(&dfl);
    sigaddset(&dfl, SIGPIPE);
    posix_spawnattr_setsigdefault(&attr, &dfl);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
    rc = posix_spawnp(&gp->pid, "gnuplot", &fa, &attr, argv, environ);
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[0]);
    if (rc != 0) {
        close(fds[1]);
        gp->pid = -1;
        sigaction(SIGPIPE, &gp->old_pipe, NULL);
        snprintf(err, errsize, "cannot run gnuplot: %s (is gnuplot installed?)", strerror(rc));
        return OSN_EIO;
    }
    fcntl(fds[1], F_SETFD, FD_CLOEXEC);
    gp->f = fdopen(fds[1], "w");
    if (!gp->f) {
        close(fds[1]);
        osn_gnuplot_close(gp);
        snprintf(err, errsize, "cannot run gnuplot: %s", strerror(errno));
        return OSN_EIO;
    }
    return 0;
}

int osn_gnuplot_close(struct osn_gnuplot *gp)
{
    int st;

    if (gp->f)
        fclose(gp->f);
    gp->f = NULL;
    if (gp->pid <= 0)
        return -1;
    sigaction(SIGPIPE, &gp->old_pipe, NULL);
    while (waitpid(gp->pid, &st, 0) < 0)
        if (errno != EINTR) {
            gp->pid = -1;
            return -1;
        }
    gp->pid = -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}
