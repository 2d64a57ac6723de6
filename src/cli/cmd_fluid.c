/*
 * `osn fluid`: trajectories of the discrete-time fluid model of SIP retransmissions.
 *
 * Thin by design: parse the options, load the scenario (src/io/fluid_scenario.c), run
 * osn_fluid_run() (src/fluid/), print. As in `osn solve`, every output file is written to a
 * temporary and renamed only after all outputs, standard output included, were written; a
 * failed run leaves no file behind and prints one line "osn fluid: ..." with exit status 2.
 */
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd_fluid.h"
#include "osn/err.h"
#include "osn/fluid.h"
#include "osn/fluid_scenario.h"
#include "outputs.h"
#include "study.h"

struct fluid_opts {
    const char *scenario;
    const char **sets; /* borrowed from argv */
    int nsets;
    const char *csv, *json, *plot; /* NULL when not requested; "-" is stdout (not for plot) */
    const char *plot_range;        /* "T0:T1", NULL: the whole horizon */
    double t0, t1;                 /* the plot's time axis: NAN, NAN for the whole horizon */
    bool quiet, help;
};

/* Long on purpose: the --help text in two pieces around the scenario keys, which the key table
 * prints (src/io/fluid_scenario.c), so that it reads in the source as it prints. */
void osn_cmd_fluid_usage(FILE *f)
{
    fputs("Usage: osn fluid [SCENARIO.ini] [--set SECTION.KEY=VALUE]...\n"
          "                 [--csv FILE|-] [--json FILE|-] [--plot FILE.png] [-q|--quiet]\n"
          "\n"
          "Discrete-time fluid model of SIP INVITE retransmissions (RFC 3261 Timer A\n"
          "from T1, doubling: copies at 0, 0.5, 1.5, 3.5, 7.5, 15.5, 31.5 s; Timer B at\n"
          "64*T1 = 32 s; a 100 Trying stops them). One FIFO queue per server; mass that\n"
          "waits longer than T1 is retransmitted, and the copies load the server.\n"
          "\n"
          "Options:\n"
          "  --set SECTION.KEY=VALUE  override a scenario key; repeatable\n"
          "                           (e.g. --set profile.burst_duration=2)\n"
          "  --csv FILE|-             time series, one row per slot\n"
          "  --json FILE|-            the summary and the scenario as JSON\n"
          "  --plot FILE.png          queue(s) and retransmission rate, through gnuplot\n"
          "  --plot-range T0:T1       the plot's time axis, s (e.g. 0:10 around a 2 s\n"
          "                           burst); default the whole horizon\n"
          "  -q, --quiet              do not print the summary table\n"
          "  -h, --help               show this help\n"
          "\n"
          "Scenario file: INI; comments start with ';' or '#'. Every key below\n"
          "(docs/scenario.md), defaults in brackets; a key of another topology, profile\n"
          "shape or control kind is an error:\n",
          f);
    osn_fluid_scenario_keys_print(f, false);
    fputs("\n"
          "Output: a summary table (final_queue recovered state goodput completed\n"
          "failed pending offered mean_delay peak_delay peak_queue retransmissions\n"
          "redundant lost, removed with prsm), left out with -q or when --csv/--json\n"
          "writes to stdout. recovered: every final queue is at most one slot of its\n"
          "server's service. state: recovered, failing (Timer B expiries in the last\n"
          "64*T1), growing (backlog still rising, none failing yet) or standing (a\n"
          "steady backlog and no call failing: a fixed point). CSV columns: t (end of\n"
          "the slot, s), offered, goodput, then per server (prefix p1_/p2_ in a tandem):\n"
          "queue (msg), queue_delay (s), arrived, served, lost, originals, retrans,\n"
          "retrans_1..retrans_J, withheld (by the cap), redundant, redundant_ratio\n"
          "(redundant/originals arriving), answered (100 Trying reaching the client),\n"
          "delay (their mean INVITE -> 100 Trying delay, s), failed (Timer B),\n"
          "completed, allow (the cap), queue_secondary (prsm: copies waiting in the\n"
          "second queue, part of queue), removed (prsm: copies removed unserved);\n"
          "flows in 1/s, empty cells where undefined.\n"
          "\n"
          "Exit status: 0 on success; 2 on any error (the message names FILE:LINE or\n"
          "the --set flag, and the key).\n"
          "\n"
          "Examples:\n"
          "  osn fluid examples/fluid-burst.ini\n"
          "  osn fluid examples/fluid-burst.ini --set profile.burst_duration=2 \\\n"
          "            --csv burst2.csv --plot burst2.png\n",
          f);
    osn_study_usage(f, false);
}

#define die(...) osn_cli_die("fluid", __VA_ARGS__)

static int parse_args(int argc, char **argv, struct fluid_opts *o)
{
    const struct osn_cli_opt opts[] = {
            {"--quiet", "-q", OSN_CLI_FLAG, &o->quiet},
            {"--csv", NULL, OSN_CLI_OUTPUT, &o->csv},
            {"--json", NULL, OSN_CLI_OUTPUT, &o->json},
            {"--plot", NULL, OSN_CLI_FILE, &o->plot},
            {"--plot-range", NULL, OSN_CLI_VALUE, &o->plot_range},
            {NULL, NULL, 0, NULL},
    };
    struct osn_cli_args a = {0};
    int rc = osn_cli_parse("fluid", argc, argv, opts, 0, &a);

    o->scenario = a.scenario;
    o->sets = a.sets;
    o->nsets = a.nsets;
    o->help = a.help;
    if (rc)
        return rc;
    if (o->csv && o->json && strcmp(o->csv, "-") == 0 && strcmp(o->json, "-") == 0)
        return die("--csv - and --json - cannot both write to stdout");
    o->t0 = o->t1 = NAN;
    if (o->plot_range) {
        int end = -1;
        if (!o->plot)
            return die("--plot-range %s: there is no --plot to apply it to", o->plot_range);
        if (sscanf(o->plot_range, "%lf:%lf%n", &o->t0, &o->t1, &end) != 2 ||
            o->plot_range[end] != '\0' || !isfinite(o->t0) || !isfinite(o->t1) || o->t0 < 0 ||
            !(o->t1 > o->t0))
            return die("--plot-range %s: want T0:T1 in seconds with 0 <= T0 < T1", o->plot_range);
    }
    return 0;
}

/* What the writers of the outputs get. */
struct fluid_out {
    const struct osn_fluid_scenario *sc;
    const struct osn_fluid_result *res;
};

static int w_csv(FILE *f, const void *ctx, char *err, size_t errsize)
{
    const struct fluid_out *c = ctx;
    return osn_fluid_report_csv_write(f, c->res, err, errsize);
}

static int w_json(FILE *f, const void *ctx, char *err, size_t errsize)
{
    const struct fluid_out *c = ctx;
    return osn_fluid_report_json_write(f, c->sc, c->res, err, errsize);
}

int osn_cmd_fluid(int argc, char **argv)
{
    struct fluid_opts o = {0};
    struct osn_fluid_scenario *sc = NULL;
    struct osn_fluid_result *res = NULL;
    struct osn_cli_output outs[] = {{"--csv", NULL, w_csv, {0}}, {"--json", NULL, w_json, {0}}};
    char err[1024];
    int rc, status = OSN_EXIT_ERROR;

    err[0] = '\0';
    if (osn_study_wanted(argc, argv, true)) /* a grid or --resume: study.c */
        return osn_study_main(&osn_study_fluid, argc, argv);
    if (parse_args(argc, argv, &o) != 0)
        goto out;
    outs[0].path = o.csv, outs[1].path = o.json;
    if (o.help) {
        osn_cmd_fluid_usage(stdout);
        status = 0;
        goto out;
    }
    sc = calloc(1, sizeof *sc); /* zeroed: released below whether or not it loads */
    if (!sc) {
        die("out of memory");
        goto out;
    }
    rc = osn_fluid_scenario_load(sc, o.scenario, o.sets, o.nsets, err, sizeof err);
    if (rc) {
        die("%s", err[0] ? err : osn_strerror(rc));
        goto out;
    }
    if (sc->warning[0])
        fprintf(stderr, "osn fluid: warning: %s\n", sc->warning);
    rc = osn_fluid_run(&res, &sc->cfg, err, sizeof err);
    if (rc) {
        die("%s", err[0] ? err : osn_strerror(rc));
        goto out;
    }
    struct fluid_out ctx = {sc, res};
    if (osn_cli_outputs_write("fluid", outs, 2, &ctx) != 0)
        goto out;
    if (!o.quiet && !osn_cli_outputs_to_stdout(outs, 2))
        osn_fluid_report_table(stdout, sc, res);
    if (osn_cli_stdout_done("fluid") != 0)
        goto out;
    /* The PNG is renamed into place by osn_fluid_plot() itself: do it last but for renames. */
    if (o.plot && osn_fluid_plot_range(o.plot, sc, res, o.t0, o.t1, err, sizeof err) != 0) {
        die("--plot %s: %s", o.plot, err);
        goto out;
    }
    if (osn_cli_outputs_commit("fluid", outs, 2) != 0)
        goto out;
    status = 0;
out:
    osn_cli_outputs_abort(outs, 2);
    osn_fluid_result_free(res);
    osn_fluid_scenario_release(sc);
    free(sc);
    free(o.sets);
    return status;
}
