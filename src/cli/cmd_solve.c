/*
 * `osn solve`: exact measures of one hysteretic model.
 *
 * Thin by design: parse the options, load the scenario (src/io/model_scenario.c), run osn_solve(),
 * print. Output files are all written to temporaries first and renamed into place only after
 * every output, standard output included, was written without error; so a failed run leaves no
 * file behind and reports exactly one line on stderr, "osn solve: ...", with exit status 2.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "osn/err.h"
#include "osn/model.h"
#include "osn/model_scenario.h"
#include "outputs.h"
#include "study.h"

struct solve_opts {
    const char *scenario; /* NULL: defaults only */
    const char **sets;    /* the --set values, borrowed from argv */
    int nsets;
    enum osn_method method;
    const char *json, *csv, *dist; /* NULL when not requested, "-" for stdout */
    const char *dist_tret;         /* --dist-tret FILE|- */
    long dist_tret_points;         /* rows of the --dist-tret curve */
    bool quiet;
    bool help;
};

/* Over 60 lines on purpose: one fputs of the whole --help text, kept in one piece so that it
 * reads in the source as it prints. */
void osn_cmd_solve_usage(FILE *f)
{
    fputs("Usage: osn solve [SCENARIO.ini] [--set SECTION.KEY=VALUE]...\n"
          "                 [--method auto|general|closed] [--json FILE|-] [--csv FILE|-]\n"
          "                 [--dist FILE|-] [--dist-tret FILE|-]\n"
          "                 [--dist-tret-points N] [-q|--quiet]\n"
          "\n"
          "Exact stationary measures of a hysteretic overload-control model: one\n"
          "server, FIFO, at most R customers, modes 0 normal, 1 overload, 2 discard.\n"
          "Exponential service is solved as a Markov chain (every measure, including\n"
          "the spread of the return time, at any R); other service laws through the\n"
          "chain embedded at departures (no T_ret_sd; R up to a few thousand).\n"
          "\n"
          "Options:\n"
          "  --set SECTION.KEY=VALUE  override a scenario key; repeatable, applied after\n"
          "                           the file (e.g. --set arrivals.rate=1.5)\n"
          "  --method METHOD          auto (default) = general: the structured solver\n"
          "                           (level reduction, or the embedded chain)\n"
          "                           closed: closed forms; only the one-flow two-loop\n"
          "                           M|M|1 model under policy I (otherwise an error)\n"
          "  --json FILE|-            write the measures and the scenario as JSON\n"
          "  --csv FILE|-             write a header line and one row of measures as CSV\n"
          "  --dist FILE|-            write the stationary distribution as CSV: mode,n,p,\n"
          "                           p_log10 (a number where p leaves the double range)\n"
          "  --dist-tret FILE|-       write the return time's survival curve as CSV:\n"
          "                           t_s,survival,t_s_log10 = t in s, P(T_ret > t),\n"
          "                           log10 t (a number where t leaves the double range);\n"
          "                           t from 0 to the 99.9% quantile (exponential\n"
          "                           service only)\n"
          "  --dist-tret-points N     rows of that curve, 2 .. 1000000 [201]\n"
          "  -q, --quiet              do not print the table\n"
          "  -h, --help               show this help\n"
          "\n"
          "Scenario file: INI, '[section]' and 'key = value' lines; comments are lines\n"
          "starting with ';' or '#', or ' ; ...' after a value. Defaults in brackets.\n"
          "The keys (docs/scenario.md), defaults in brackets:\n",
          f);
    struct osn_model def;
    osn_scenario_model_default(&def);
    osn_ini_keys_print(f, &osn_model_schema, &def, false);
    fputs("MMPP input needs exponential service here; overload_accept and overload_rate,\n"
          "and B and R, are synonyms: give one of each pair.\n"
          "Without a file: two-loop, L=5 H=10 R=20, lambda=1.2 lambda'=0.6 mu=1, policy I.\n"
          "A key given twice in the file, or one that does not belong to the chosen kind\n"
          "or number of flows, is an error.\n"
          "\n"
          "Output: a table of the measures on stdout (P0 P1 P2 N_mean throughput sojourn\n"
          "T_ret T_ret_sd T_ret_p50 T_ret_p90 T_ret_p95 T_ret_p99 T_ret_dist_err T_cyc\n"
          "T_norm T_disc mode_change_rate theta nu01 nu12 T_ret_renewal prob_sum; times\n"
          "in s, rates in 1/s), left out with -q or when --json, --csv or --dist writes\n"
          "to stdout. T_ret_pXX is the time within which XX% of overload episodes end,\n"
          "from the exact distribution (uniformisation, error estimate T_ret_dist_err\n"
          "<= 1e-6). It needs exponential service: n/a otherwise, and --dist-tret is\n"
          "refused. Also n/a (and --dist-tret refused) for a long, nearly deterministic\n"
          "return time that the method cannot reach (e.g. R = 1e5 with H - L = 25000).\n"
          "JSON and CSV give numbers to 17\n"
          "digits; a value outside the double range (e.g. T_cyc = 1e+2000) is written as\n"
          "a string and listed in the JSON array \"beyond_double_range\". Files are\n"
          "written to a temporary file and renamed, so a failed run leaves none behind.\n"
          "\n"
          "Exit status: 0 on success; 2 on any error (bad scenario: the message names\n"
          "FILE:LINE or the --set flag, and the key; bad option; unsupported method; I/O\n"
          "or solver failure).\n"
          "\n"
          "Example:\n"
          "  osn solve examples/two_loop_l1.2_10_15.ini --set arrivals.rate=1.5 \\\n"
          "            --json out.json\n",
          f);
    osn_study_usage(f, false);
}

#define die(...) osn_cli_die("solve", __VA_ARGS__)

static int parse_args(int argc, char **argv, struct solve_opts *o)
{
    const char *method = NULL, *points = NULL;
    const struct osn_cli_opt opts[] = {
            {"--dist-tret", NULL, OSN_CLI_OUTPUT, &o->dist_tret},
            {"--dist-tret-points", NULL, OSN_CLI_VALUE, &points},
            {"--quiet", "-q", OSN_CLI_FLAG, &o->quiet},
            {"--method", NULL, OSN_CLI_VALUE, &method},
            {"--json", NULL, OSN_CLI_OUTPUT, &o->json},
            {"--csv", NULL, OSN_CLI_OUTPUT, &o->csv},
            {"--dist", NULL, OSN_CLI_OUTPUT, &o->dist},
            {NULL, NULL, 0, NULL},
    };
    struct osn_cli_args a = {0};
    int rc = osn_cli_parse("solve", argc, argv, opts, 0, &a);

    o->scenario = a.scenario;
    o->sets = a.sets;
    o->nsets = a.nsets;
    o->help = a.help;
    o->dist_tret_points = 201;
    if (rc)
        return rc;
    if (points &&
        osn_cli_long("solve", "--dist-tret-points", points, 2, 1000000, &o->dist_tret_points) != 0)
        return OSN_EXIT_ERROR;
    if (points && !o->dist_tret)
        return die("--dist-tret-points %s: needs --dist-tret FILE", points);
    if (!method)
        return 0;
    if (strcmp(method, "auto") == 0)
        o->method = OSN_METHOD_AUTO;
    else if (strcmp(method, "general") == 0)
        o->method = OSN_METHOD_GENERAL;
    else if (strcmp(method, "closed") == 0)
        o->method = OSN_METHOD_CLOSED;
    else
        return die("--method '%s': expected auto, general or closed", method);
    return 0;
}

/* osn_solve() dist callback: one "mode,n,p,p_log10" row, p to 17 significant digits (beyond
 * the double range too: 2.2e-1403 in examples/extreme_load.ini, which a reader's float parser
 * turns into 0), and its log10, a number whatever p is (empty for p = 0). */
static int dist_row(int mode, long n, struct osn_xd p, void *arg)
{
    FILE *f = arg;
    char buf[64], lg[32] = "";

    if (isfinite(p.m) && p.m != 0)
        snprintf(lg, sizeof lg, "%.17g", osn_xd_log10(p));
    if (fprintf(f, "%d,%ld,%s,%s\n", mode, n, osn_xd_format(p, 17, buf, sizeof buf), lg) < 0)
        return OSN_EIO;
    return 0;
}

/* What the writers of the outputs get. */
struct solve_out {
    const struct osn_scenario *sc;
    const struct osn_measures *ms;
    const struct osn_tret_dist *tret; /* NULL without exponential service */
    long tret_points;
};

static int w_json(FILE *f, const void *ctx, char *err, size_t errsize)
{
    const struct solve_out *c = ctx;
    return osn_report_json_write(f, c->sc, c->ms, err, errsize);
}

/* The --dist-tret curve: t from 0 to the 99.9% quantile in equal steps, P(T_ret > t). A t
 * beyond the double range (a return time of 1e+400 s) is written as a decimal string, so
 * t_s_log10 follows as a number (empty at t = 0) and a dataframe's column stays numeric. */
static int w_dist_tret(FILE *f, const void *ctx, char *err, size_t errsize)
{
    const struct solve_out *c = ctx;
    const struct osn_xd tmax = osn_tret_dist_quantile(c->tret, 0.999);
    char buf[64];

    if (fputs("t_s,survival,t_s_log10\n", f) == EOF) {
        snprintf(err, errsize, "write failed: %s", strerror(errno));
        return OSN_EIO;
    }
    double prev = 1;
    for (long i = 0; i < c->tret_points; i++) {
        struct osn_xd t = osn_xd_muld(tmax, (double)i / (double)(c->tret_points - 1));
        /* A sum of Poisson weights may round up by 1e-15 from one t to the next: clipped. */
        double s = osn_tret_dist_survival(c->tret, t);
        prev = s < prev ? s : prev;
        char lg[32] = "";
        if (i > 0)
            snprintf(lg, sizeof lg, "%.17g", osn_xd_log10(t));
        if (fprintf(f, "%s,%.17g,%s\n", osn_xd_format(t, 17, buf, sizeof buf), prev, lg) < 0) {
            snprintf(err, errsize, "write failed: %s", strerror(errno));
            return OSN_EIO;
        }
    }
    return 0;
}

static int w_csv(FILE *f, const void *ctx, char *err, size_t errsize)
{
    const struct solve_out *c = ctx;
    return osn_report_csv_write(f, c->sc, c->ms, err, errsize);
}

/* Loads the scenario into sc and checks that --method can solve it. Returns 0, or
 * OSN_EXIT_ERROR after printing why. */
static int load_scenario(const struct solve_opts *o, struct osn_scenario *sc)
{
    char err[1024] = "";
    int rc;

    rc = osn_scenario_load(sc, o->scenario, o->sets, o->nsets, NULL, err, sizeof err);
    if (rc)
        return die("%s", err[0] ? err : osn_strerror(rc));
    const char *why = osn_solve_unsupported(&sc->model, o->method);
    if (why)
        return die("%s%s", o->method == OSN_METHOD_CLOSED ? "--method closed: " : "", why);
    /* The embedded chain at departures does not keep the time within a service, so it gives
     * the return time's moments by renewal but not its distribution. */
    if (o->dist_tret && sc->model.service.kind != OSN_LAW_EXP)
        return die("--dist-tret %s: the return time's distribution needs exponential service "
                   "(service.law = exp); osn sim --dist-tret gives it for any law",
                   o->dist_tret);
    return 0;
}

/* Solves into ms, writing the stationary distribution to the --dist output (dist_out) while the
 * solver runs. Returns 0, or OSN_EXIT_ERROR after printing why. */
static int solve(const struct solve_opts *o, const struct osn_scenario *sc,
                 struct osn_cli_output *dist_out, struct osn_measures *ms)
{
    FILE *dist = NULL;
    int rc;

    if (o->dist) {
        if (!(dist = osn_cli_output_open("solve", dist_out)))
            return OSN_EXIT_ERROR;
        if (fputs("mode,n,p,p_log10\n", dist) == EOF)
            return die("--dist %s: write failed: %s", o->dist, strerror(errno));
    }
    rc = osn_solve(&sc->model, o->method, ms, dist ? dist_row : NULL, dist);
    if (rc == OSN_EIO && o->dist)
        return die("--dist %s: write failed: %s", o->dist, strerror(errno));
    if (rc)
        return die("solver failed: %s", osn_strerror(rc));
    return 0;
}

/* The return time's distribution into *d and its quantiles into ms, for exponential service
 * (otherwise *d stays NULL and the quantiles n/a). Returns 0, or OSN_EXIT_ERROR after printing
 * why. */
static int solve_tret(const struct solve_opts *o, const struct osn_scenario *sc,
                      struct osn_measures *ms, struct osn_tret_dist **d)
{
    if (sc->model.service.kind != OSN_LAW_EXP)
        return 0;
    int rc = osn_tret_dist_precheck(&sc->model, ms);
    if (!rc)
        rc = osn_tret_dist_new(d, &sc->model);
    if ((rc == OSN_ENOTSUP || rc == OSN_ETOOBIG) && !o->dist_tret)
        return 0; /* no return time, or no accurate curve in reach: quantiles n/a */
    if (rc == OSN_ENOTSUP)
        return die("--dist-tret %s: overload never starts in this model, so there is no "
                   "return time",
                   o->dist_tret);
    if (rc == OSN_ETOOBIG)
        return die("--dist-tret %s: the return time is long and nearly deterministic (a "
                   "drift over many levels); uniformisation would need over 4e8 state-steps "
                   "for an error below 1e-6. osn sim --dist-tret estimates it",
                   o->dist_tret);
    if (rc)
        return die("return-time distribution failed: %s", osn_strerror(rc));
    osn_tret_dist_fill(*d, ms);
    return 0;
}

int osn_cmd_solve(int argc, char **argv)
{
    struct solve_opts o = {0};
    struct osn_scenario *sc = NULL;
    struct osn_measures ms;
    /* --dist is written while the solver runs (no writer), the others after. */
    struct osn_cli_output outs[] = {{"--dist", NULL, NULL, {0}},
                                    {"--json", NULL, w_json, {0}},
                                    {"--csv", NULL, w_csv, {0}},
                                    {"--dist-tret", NULL, w_dist_tret, {0}}};
    struct osn_tret_dist *tret = NULL;
    int status = OSN_EXIT_ERROR;

    if (osn_study_wanted(argc, argv, true)) /* a grid or --resume: study.c */
        return osn_study_main(&osn_study_solve, argc, argv);
    if (parse_args(argc, argv, &o) != 0)
        goto out;
    outs[0].path = o.dist, outs[1].path = o.json, outs[2].path = o.csv;
    outs[3].path = o.dist_tret;
    if (o.help) {
        osn_cmd_solve_usage(stdout);
        status = 0;
        goto out;
    }
    /* The scenario holds its key records: keep it off the stack. */
    sc = calloc(1, sizeof *sc);
    if (!sc) {
        die("out of memory");
        goto out;
    }
    if (load_scenario(&o, sc) != 0 || solve(&o, sc, &outs[0], &ms) != 0 ||
        solve_tret(&o, sc, &ms, &tret) != 0)
        goto out;
    struct solve_out ctx = {sc, &ms, tret, o.dist_tret_points};
    if (osn_cli_outputs_write("solve", outs, 4, &ctx) != 0)
        goto out;
    if (!o.quiet && !osn_cli_outputs_to_stdout(outs, 4))
        osn_report_table(stdout, sc, &ms);
    if (osn_cli_stdout_done("solve") != 0 || osn_cli_outputs_commit("solve", outs, 4) != 0)
        goto out;
    status = 0;
out:
    osn_cli_outputs_abort(outs, 4);
    osn_tret_dist_free(tret);
    osn_scenario_release(sc);
    free(sc);
    free(o.sets);
    return status;
}
