/*
 * Outputs of `osn optimize`: the readable summary, the --grid CSV and the --plot heat map
 * (gnuplot).
 *
 * Numbers follow the conventions of src/io/model_report.c: the summary prints 7 significant digits
 * at any magnitude (osn_xd_format), CSV writes a value that fits a double to 17 digits and any
 * other as a 12-digit decimal string. The --json document is src/io/optimize_report.c's, which
 * the library's osn_optimize_json() writes too.
 */
#include "optimize_out.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "osn/afile.h"
#include "osn/err.h"
#include "osn/gnuplot.h"

typedef struct osn_xd xd;

static const char *const con_measure[OSN_OPT_NCON] = {"P1+P2", "theta", "P2", "T_cyc"};

/* The names of the searched pair: L, H, or L1, H1 for the bi-level model. */
static const char *lname(const struct osn_model *m)
{
    return m->kind == OSN_KIND_BI_LEVEL ? "L1" : "L";
}

static const char *hname(const struct osn_model *m)
{
    return m->kind == OSN_KIND_BI_LEVEL ? "H1" : "H";
}

static const char *fmt7(xd x, char *buf, size_t size)
{
    return isfinite(x.m) ? osn_xd_format(x, 7, buf, size) : "n/a";
}

/* ---- --grid ---- */

/* The measures of a row, in column order; each has a KEY_log10 column after them all, numeric
 * even where KEY is a string beyond the double range (as in `osn solve --csv`). The quantiles
 * of the return time are filled when the objective is one of them (every pair's distribution
 * is computed then), empty otherwise. */
static const char *const grid_keys[] = {
        "P0",        "P1",         "P2",        "throttle",         "theta", "T_ret",  "T_ret_sd",
        "T_ret_p50", "T_ret_p90",  "T_ret_p95", "T_ret_p99",        "T_cyc", "T_norm", "T_disc",
        "N_mean",    "throughput", "sojourn",   "mode_change_rate", "nu01",  "nu12"};
#define NGRID (sizeof grid_keys / sizeof grid_keys[0])

int osn_opt_grid_header(FILE *f)
{
    fputs("L,H,feasible,violation", f);
    for (size_t i = 0; i < NGRID; i++)
        fprintf(f, ",%s", grid_keys[i]);
    for (size_t i = 0; i < NGRID; i++)
        fprintf(f, ",%s_log10", grid_keys[i]);
    return fputc('\n', f) == EOF || ferror(f) ? OSN_EIO : 0;
}

/* One CSV cell after a comma: %.17g, the 12-digit string beyond the double range, or empty. */
static void cell(FILE *f, xd x)
{
    char buf[64];

    fputc(',', f);
    if (!isfinite(x.m))
        return;
    if (osn_xd_fits_double(x))
        fprintf(f, "%.17g", osn_xd_to_double(x));
    else
        fputs(osn_xd_format(x, 12, buf, sizeof buf), f);
}

int osn_opt_grid_row(const struct osn_opt_pair *p, void *arg)
{
    struct osn_opt_grid *g = arg;
    const struct osn_measures *ms = p->ms;

    if (g->f) {
        FILE *f = g->f;
        fprintf(f, "%ld,%ld,%d,%.17g", p->L, p->H, p->feasible ? 1 : 0, p->violation);
        const xd v[] = {ms->P[0],
                        ms->P[1],
                        ms->P[2],
                        osn_xd_add(ms->P[1], ms->P[2]),
                        ms->theta,
                        ms->T_ret,
                        ms->have_sd ? ms->T_ret_sd : OSN_XD_UNDEFINED,
                        ms->have_tret_q ? ms->T_ret_q[0] : OSN_XD_UNDEFINED,
                        ms->have_tret_q ? ms->T_ret_q[1] : OSN_XD_UNDEFINED,
                        ms->have_tret_q ? ms->T_ret_q[2] : OSN_XD_UNDEFINED,
                        ms->have_tret_q ? ms->T_ret_q[3] : OSN_XD_UNDEFINED,
                        ms->T_cyc,
                        ms->T_norm,
                        ms->T_disc,
                        ms->N_mean,
                        ms->throughput,
                        ms->sojourn,
                        ms->mode_change_rate,
                        ms->nu01,
                        ms->nu12};
        _Static_assert(sizeof v / sizeof v[0] == NGRID, "one value per grid column");
        for (size_t i = 0; i < NGRID; i++)
            cell(f, v[i]);
        for (size_t i = 0; i < NGRID; i++) {
            fputc(',', f);
            if (isfinite(v[i].m) && v[i].m != 0)
                fprintf(f, "%.17g", osn_xd_log10(v[i]));
        }
        if (fputc('\n', f) == EOF || ferror(f))
            return OSN_EIO;
    }
    if (g->plot) {
        fprintf(g->plot, "%ld %ld %d %.9g\n", p->L, p->H, p->feasible ? 1 : 0,
                osn_xd_log10(osn_opt_objective_value(g->objective, ms)));
        if (ferror(g->plot))
            return OSN_EIO;
    }
    return 0;
}

/* ---- summary ---- */

static void print_constraints(FILE *f, const struct osn_opt_cfg *cfg,
                              const struct osn_opt_point *pt, const struct osn_opt_result *res,
                              bool at_optimum)
{
    char v[64], b[64];

    fprintf(f, "  %-13s %-8s %-15s %-15s %s\n", "constraint", "measure", "value", "bound",
            at_optimum ? "slack" : "violation");
    for (int c = 0; c < OSN_OPT_NCON; c++) {
        if (!cfg->has[c])
            continue;
        xd x = osn_opt_con_value((enum osn_opt_con)c, &pt->ms);
        snprintf(b, sizeof b, "%s %.7g", c == OSN_OPT_CYCLE ? ">=" : "<=", cfg->bound[c]);
        fprintf(f, "  %-13s %-8s %-15s %-15s ", osn_opt_con_name((enum osn_opt_con)c),
                con_measure[c], fmt7(x, v, sizeof v), b);
        if (at_optimum)
            fprintf(f, "%.3g%%%s\n", 100 * res->slack[c], c == res->binding ? "  (binding)" : "");
        else if (pt->viol[c] > 0)
            fprintf(f, "%.4g (violated)\n", pt->viol[c]);
        else
            fprintf(f, "0 (met)\n");
    }
}

/* What was searched: the model's range, the scenario, the constraints and the pairs evaluated.
 * Returns whether any constraint was given. */
static bool print_search(FILE *f, const struct osn_scenario *at, const struct osn_opt_cfg *cfg,
                         const struct osn_opt_result *res)
{
    const struct osn_model *m = &at->model;
    const char *obj = osn_opt_objective_name(cfg->objective);
    bool any = false;

    if (m->kind == OSN_KIND_BI_LEVEL)
        fprintf(f,
                "osn optimize: minimise %s over 0 <= L1 < H1 < H2 = %ld, L1 < L2 = %ld (R = "
                "%ld)\n",
                obj, m->H2, m->L2, m->R);
    else
        fprintf(f, "osn optimize: minimise %s over 0 <= L < H < %s = %ld\n", obj,
                m->kind == OSN_KIND_SINGLE_LOOP ? "B" : "R", m->R);
    if (cfg->objective != OSN_OPT_T_RET)
        fprintf(f,
                "objective: %s, the %s%% quantile of the return time (every pair's "
                "distribution computed)\n",
                obj, cfg->objective == OSN_OPT_T_RET_P95 ? "95" : "99");
    if (at->ini.path[0])
        fprintf(f, "scenario: %s\n", at->ini.path);
    fprintf(f, "constraints:");
    for (int c = 0; c < OSN_OPT_NCON; c++)
        if (cfg->has[c]) {
            fprintf(f, "%s %s %s %.7g", any ? "," : "", con_measure[c],
                    c == OSN_OPT_CYCLE ? ">=" : "<=", cfg->bound[c]);
            any = true;
        }
    fprintf(f, "%s\n", any ? "" : " none");
    fprintf(f, "evaluated %ld pairs", res->evaluated);
    if (res->skipped)
        fprintf(f, " (%ld more do not form a valid model)", res->skipped);
    fprintf(f, ", %ld feasible\n", res->feasible);
    if (res->solved < res->evaluated)
        fprintf(f, "screened by closed forms: %ld pairs solved in full, the rest decided\n",
                res->solved);
    fputc('\n', f);
    return any;
}

/* "T_ret = 9.97 s", and for a quantile objective "T_ret_p95 = 25.1 s, T_ret = 9.97 s": the
 * value the pair was ranked by first. */
static const char *objective_text(enum osn_opt_objective o, const struct osn_measures *ms,
                                  char *buf, size_t size)
{
    char a[64], b[64];

    if (o == OSN_OPT_T_RET)
        snprintf(buf, size, "T_ret = %s s", fmt7(ms->T_ret, a, sizeof a));
    else
        snprintf(buf, size, "%s = %s s, T_ret = %s s", osn_opt_objective_name(o),
                 fmt7(osn_opt_objective_value(o, ms), a, sizeof a), fmt7(ms->T_ret, b, sizeof b));
    return buf;
}

/* The optimum found, its constraints (when any was given) and the one that binds. */
static void print_optimum(FILE *f, const struct osn_model *m, const struct osn_opt_cfg *cfg,
                          const struct osn_opt_result *res, bool any)
{
    const char *L = lname(m), *H = hname(m), *obj = osn_opt_objective_name(cfg->objective);
    char t[160], u[64];

    fprintf(f, "optimum: %s=%ld %s=%ld, %s\n", L, res->best.L, H, res->best.H,
            objective_text(cfg->objective, &res->best.ms, t, sizeof t));
    if (any)
        print_constraints(f, cfg, &res->best, res, true);
    if (res->binding >= 0) {
        const struct osn_opt_point *nx = &res->next;
        xd x = osn_opt_con_value((enum osn_opt_con)res->binding, &nx->ms);
        fprintf(f,
                "binding: %s: the next-better pair %s=%ld %s=%ld (%s) has %s = %s "
                "(relative violation %.3g)\n",
                osn_opt_con_name((enum osn_opt_con)res->binding), L, nx->L, H, nx->H,
                objective_text(cfg->objective, &nx->ms, t, sizeof t), con_measure[res->binding],
                fmt7(x, u, sizeof u), nx->viol[res->binding]);
        fprintf(f, "unconstrained optimum: %s=%ld %s=%ld, %s\n", L, res->free.L, H, res->free.H,
                objective_text(cfg->objective, &res->free.ms, t, sizeof t));
    } else {
        fprintf(f,
                "binding: none (no pair has a smaller %s: this is the unconstrained "
                "optimum)\n",
                obj);
    }
    fprintf(f, "\nmeasures at the optimum:\n");
}

void osn_opt_summary(FILE *f, const struct osn_scenario *at, const struct osn_opt_cfg *cfg,
                     const struct osn_opt_result *res)
{
    const struct osn_model *m = &at->model;
    bool any = print_search(f, at, cfg, res);
    char t[160];

    if (res->best.found) {
        print_optimum(f, m, cfg, res, any);
    } else {
        fprintf(f, "no feasible pair: none of the %ld pairs meets every constraint\n",
                res->evaluated);
        fprintf(f, "closest pair: %s=%ld %s=%ld, %s, total relative violation %.4g\n", lname(m),
                res->closest.L, hname(m), res->closest.H,
                objective_text(cfg->objective, &res->closest.ms, t, sizeof t),
                res->closest.violation);
        print_constraints(f, cfg, &res->closest, res, false);
        fprintf(f, "\nmeasures at the closest pair:\n");
    }
    osn_report_table(f, at, res->best.found ? &res->best.ms : &res->closest.ms);
}

/* ---- --plot ---- */

int osn_opt_plot_begin(struct osn_opt_grid *g, char *err, size_t errsize)
{
    const char *dir = getenv("TMPDIR");
    int fd;

    snprintf(g->plot_path, sizeof g->plot_path, "%s/osn_optimize_XXXXXX",
             dir && dir[0] && strlen(dir) < 40 ? dir : "/tmp");
    fd = mkstemp(g->plot_path);
    if (fd >= 0)
        osn_afile_track(g->plot_path); /* removed on SIGINT/SIGTERM too */
    if (fd < 0 || !(g->plot = fdopen(fd, "w"))) {
        snprintf(err, errsize, "cannot create a temporary file for the plot data: %s",
                 strerror(errno));
        if (fd >= 0) {
            close(fd);
            unlink(g->plot_path);
            osn_afile_untrack(g->plot_path);
        }
        g->plot_path[0] = '\0';
        return OSN_EIO;
    }
    return 0;
}

int osn_opt_plot_end(struct osn_opt_grid *g, const char *png, const struct osn_opt_result *res,
                     char *err, size_t errsize)
{
    const char *obj = osn_opt_objective_name(g->objective);
    const struct osn_opt_point *pt = res->best.found ? &res->best : &res->closest;
    double ps = g->R > 0 ? fmin(2.5, fmax(0.25, 60.0 / (double)g->R)) : 1;
    const char *args[] = {png, g->plot_path};
    struct osn_gnuplot gp;
    int st;

    if (fflush(g->plot) != 0) {
        snprintf(err, errsize, "cannot write the plot data: %s", strerror(errno));
        return OSN_EIO;
    }
    /* Both file names reach gnuplot as ARG1 and ARG2, never as script text (gnuplot.c). */
    if (osn_gnuplot_open(&gp, args, 2, 1, err, errsize) != 0)
        return OSN_EIO;
    /* Axis names of the model (L1, H1 for bi-level), a perceptually uniform palette
     * (viridis's stops: dark is short, yellow long, readable in grey), and the binding
     * constraint named and shown: the next-better pair, which violates it. */
    const char *ln = g->bi_level ? "L1" : "L", *hn = g->bi_level ? "H1" : "H";
    char binding[96] = "";
    if (res->binding >= 0)
        snprintf(binding, sizeof binding, "next better pair (violates %s)",
                 osn_opt_con_name((enum osn_opt_con)res->binding));
    fprintf(gp.f,
            "set terminal pngcairo size 900,760\n"
            "set output ARG1\n"
            "set title \"log10 %s over the (%s, %s) grid: filled = feasible, open = "
            "infeasible\\nbinding constraint: %s; exact values (no simulation, no interval)\" "
            "noenhanced\n"
            "set xlabel '%s'\nset ylabel '%s'\nset cblabel 'log10 %s (s)' noenhanced\n"
            "set palette defined (0 '#440154', 1 '#3b528b', 2 '#21918c', 3 '#5ec962', "
            "4 '#fde725')\n"
            "set key outside bottom center horizontal noenhanced\n"
            "set grid\n"
            "plot ARG2 using 1:2:($3==1?$4:1/0) with points pt 5 ps %.2f lc palette "
            "notitle, \\\n"
            "     '' using 1:2:($3==0?$4:1/0) with points pt 4 ps %.2f lc palette "
            "notitle, \\\n"
            "     keyentry with points pt 5 ps 1.5 lc rgb 'gray40' title 'feasible', \\\n"
            "     keyentry with points pt 4 ps 1.5 lc rgb 'gray40' title 'infeasible', \\\n"
            "     '-' using 1:2 with points pt 6 ps 3 lw 2 lc rgb 'black' title '%s'",
            obj, ln, hn,
            res->binding >= 0 ? osn_opt_con_name((enum osn_opt_con)res->binding)
                              : "none (the unconstrained optimum)",
            ln, hn, obj, ps, ps, res->best.found ? "optimum" : "closest (infeasible)");
    if (res->binding >= 0 && res->next.found)
        fprintf(gp.f,
                ", \\\n     '-' using 1:2 with points pt 12 ps 3 lw 2 lc rgb '#d62728' "
                "title '%s'",
                binding);
    fprintf(gp.f, "\n%ld %ld\ne\n", pt->L, pt->H);
    if (res->binding >= 0 && res->next.found)
        fprintf(gp.f, "%ld %ld\ne\n", res->next.L, res->next.H);
    st = osn_gnuplot_close(&gp);
    if (st != 0) {
        snprintf(err, errsize, "gnuplot failed (status %d; is gnuplot installed?)", st);
        return OSN_EIO;
    }
    return 0;
}

void osn_opt_plot_free(struct osn_opt_grid *g)
{
    if (g->plot)
        fclose(g->plot);
    g->plot = NULL;
    if (g->plot_path[0]) {
        unlink(g->plot_path);
        osn_afile_untrack(g->plot_path);
    }
    g->plot_path[0] = '\0';
}
