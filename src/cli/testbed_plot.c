/*
 * `osn testbed --plot FILE.png`: goodput against offered load, osn sim beside the real network,
 * one panel per control, drawn by gnuplot's pngcairo terminal as scripts/testbed_plot.sh draws
 * the CSV (the project's plotting tool; scripts/deps.sh installs it). The simulator's points carry
 * their 95% half-width; the real ones are one run each. File names reach gnuplot as arguments
 * (ARGn of `gnuplot -c`), never as script text. The PNG is drawn to a temporary beside FILE and
 * renamed into place, so a failed plot leaves no file.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "testbed.h"

/* A format: its %s sets the x ticks at the offered rates (each point labelled by its rate and load)
 * and its %ld the simulator's replications per point (each row has the scenario's). The key goes
 * below each panel, where no point can fall (a collapsed run's goodput is at the bottom). */
static const char script[] =
        "set terminal pngcairo size 400*ARG3,440 font ',10'\n"
        "set output ARG1\n"
        "set multiplot layout 1,ARG3+0 title 'osn testbed: osn sim beside the network on "
        "loopback'\n"
        "set xlabel 'offered load (calls/s; multiple of the capacity)' offset 0,-1\n"
        "set bmargin 8\n"
        "set ylabel 'goodput (calls/s)'\n"
        "set logscale x\n"
        "%s\n"
        "set offsets graph 0.08, graph 0.08, 0, 0\n"
        "set yrange [0:*]\n"
        "set key below Left reverse\n"
        "do for [c in ARG4] {\n"
        "    set title 'control = '.c\n"
        "    plot ARG2.'/'.c.'.dat' using ($1*0.97):2:3 with yerrorlines pt 7 lc rgb '#1f77b4' "
        "lw 2 title 'osn sim: mean of %ld replications, 95%% CI', \\\n"
        "         ARG2.'/'.c.'.dat' using ($1*1.03):4 with linespoints pt 6 ps 1.8 lw 2 dt 2 "
        "lc rgb '#d62728' title 'osn node: one run'\n"
        "}\n"
        "unset multiplot\n";

/* Runs gnuplot with argv; 0 when it exits 0. */
static int gnuplot(char *const argv[], const char *log)
{
    struct tb_proc p = {.out_fd = -1};
    snprintf(p.log, sizeof p.log, "%s", log);
    if (tb_proc_start(&p, argv, false) != 0)
        return -1;
    if (!tb_proc_wait(&p, 120, NULL)) {
        tb_proc_stop(&p, 5);
        return -1;
    }
    return p.status == 0 ? 0 : -1;
}

static int find_gnuplot(char *path, size_t size)
{
    const char *env = getenv("PATH");
    char dirs[4096];
    snprintf(dirs, sizeof dirs, "%s", env ? env : "/usr/bin:/bin");
    for (char *save, *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        snprintf(path, size, "%s/gnuplot", d);
        if (access(path, X_OK) == 0)
            return 0;
    }
    return -1;
}

int tb_plot_check(char *err, size_t errsize)
{
    char exe[4096], tmp[] = "/tmp/osn-testbed-plot-XXXXXX", log[4200];
    if (find_gnuplot(exe, sizeof exe) != 0) {
        snprintf(err, errsize, "gnuplot is not on PATH (scripts/deps.sh installs it)");
        return OSN_EXIT_ERROR;
    }
    if (!mkdtemp(tmp)) {
        snprintf(err, errsize, "cannot make a temporary directory: %s", strerror(errno));
        return OSN_EXIT_ERROR;
    }
    snprintf(log, sizeof log, "%s/log", tmp);
    char *argv[] = {exe, "-e", "set terminal pngcairo", NULL};
    int rc = gnuplot(argv, log);
    unlink(log);
    rmdir(tmp);
    if (rc != 0) {
        snprintf(err, errsize, "%s has no pngcairo terminal", exe);
        return OSN_EXIT_ERROR;
    }
    return 0;
}

int tb_plot_write(const char *path, const struct tb_rows *rows, char *err, size_t errsize)
{
    char exe[4096], tmp[] = "/tmp/osn-testbed-plot-XXXXXX", f[4200], out[4200], controls[512] = "";
    char ncontrols[8];
    int rc = OSN_EXIT_ERROR, n = 0;

    if (find_gnuplot(exe, sizeof exe) != 0 || !mkdtemp(tmp)) {
        snprintf(err, errsize, "gnuplot or a temporary directory is not available");
        return OSN_EXIT_ERROR;
    }
    /* One data file per control: rate, sim goodput, its half-width, real goodput. */
    for (int i = 0; i < rows->n; i++) {
        const struct tb_row *r = &rows->r[i];
        snprintf(f, sizeof f, "%s/%s.dat", tmp, r->control);
        bool first = access(f, F_OK) != 0;
        FILE *d = fopen(f, "a");
        if (!d)
            goto out;
        fprintf(d, "%.10g %.10g %.10g %.10g\n", r->rate, r->sim_goodput,
                isnan(r->sim_hw) ? 0 : r->sim_hw, r->real_goodput);
        fclose(d);
        if (first) {
            snprintf(controls + strlen(controls), sizeof controls - strlen(controls), "%s%s",
                     n ? " " : "", r->control);
            n++;
        }
    }
    snprintf(f, sizeof f, "%s/plot.gp", tmp);
    FILE *s = fopen(f, "w");
    long reps = rows->n ? rows->r[0].sim_n : 0;
    char tics[1024] = "set xtics (";
    size_t empty = strlen(tics);
    for (int i = 0; i < rows->n; i++) {
        char t[64]; /* the rate, its load factor under it */
        snprintf(t, sizeof t, "\"%.6g\\n%gx\" %.6g", rows->r[i].rate, rows->r[i].load,
                 rows->r[i].rate);
        bool seen = false;
        for (int j = 0; j < i; j++)
            seen = seen || rows->r[j].rate == rows->r[i].rate;
        if (!seen && strlen(tics) + strlen(t) + 2 < sizeof tics)
            snprintf(tics + strlen(tics), sizeof tics - strlen(tics), "%s%s",
                     strlen(tics) > empty ? ", " : "", t);
    }
    snprintf(tics + strlen(tics), sizeof tics - strlen(tics), ")");
    if (strlen(tics) == empty + 1)
        tics[0] = '\0'; /* no rows: gnuplot's own ticks */
    if (!s || fprintf(s, script, tics, reps) < 0 || fclose(s) != 0)
        goto out;
    snprintf(out, sizeof out, "%s.tmp%ld", path, (long)getpid());
    snprintf(ncontrols, sizeof ncontrols, "%d", n);
    char log[4200];
    snprintf(log, sizeof log, "%s/log", tmp);
    char *argv[] = {exe, "-c", f, out, tmp, ncontrols, controls, NULL};
    if (gnuplot(argv, log) != 0 || rename(out, path) != 0) {
        char line[256] = "";
        FILE *l = fopen(log, "r");
        while (l && fgets(line, sizeof line, l))
            ;
        if (l)
            fclose(l);
        line[strcspn(line, "\n")] = '\0';
        snprintf(err, errsize, "gnuplot could not draw %s%s%s", path, line[0] ? ": " : "", line);
        unlink(out);
        goto out_told;
    }
    rc = 0;
out:
    if (rc)
        snprintf(err, errsize, "cannot write the plot's data under %s", tmp);
out_told:
    /* The temporary directory holds only what this function wrote. */
    for (int i = 0; i < rows->n; i++) {
        snprintf(f, sizeof f, "%s/%s.dat", tmp, rows->r[i].control);
        unlink(f);
    }
    snprintf(f, sizeof f, "%s/plot.gp", tmp);
    unlink(f);
    snprintf(f, sizeof f, "%s/log", tmp);
    unlink(f);
    rmdir(tmp);
    return rc;
}
