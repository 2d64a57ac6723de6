/*
 * Running gnuplot for a --plot output with every file name passed as data, never as script
 * text (src/ini/gnuplot.c says why). Part of the scenario core (base only).
 */
#ifndef OSN_GNUPLOT_H
#define OSN_GNUPLOT_H

#include <signal.h>
#include <stdio.h>
#include <sys/types.h>

struct osn_gnuplot {
    FILE *f;                   /* the script goes here */
    pid_t pid;                 /* gnuplot's */
    struct sigaction old_pipe; /* SIGPIPE is ignored while gnuplot runs */
};

/*
 * Starts gnuplot with the script read from gp->f and args[0..nargs-1] (nargs <= 9) as the
 * script's string variables ARG1..ARGn: write `set output ARG1`, never the name itself. With
 * quiet, gnuplot's stderr goes to /dev/null. Until
 * osn_gnuplot_close(), SIGPIPE is ignored: a gnuplot that dies must not kill us. Returns 0, or
 * OSN_EIO with a message in err.
 */
int osn_gnuplot_open(struct osn_gnuplot *gp, const char *const *args, int nargs, int quiet,
                     char *err, size_t errsize);

/* Closes the script and waits for gnuplot. Returns its exit status (0 = success), or -1 when it
 * did not exit normally. Safe on a gp that was never opened (returns -1). */
int osn_gnuplot_close(struct osn_gnuplot *gp);

#endif
