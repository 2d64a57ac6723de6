/*
 * `osn optimize`: the thresholds (L, H) with the smallest mean return time T_ret, or its 95% or
 * 99% quantile (optimize.objective), under constraints on throttling, loss, discard and the
 * control-cycle time.
 *
 * Thin like `osn solve`: parse the options, load the scenario with the [optimize] section
 * (src/io/optimize_scenario.c), run osn_optimize() (src/model/optimize.c), print. The grid, the
 * JSON and the plot are written to temporaries and renamed only when every output was written;
 * an error is one line on stderr, "osn optimize: ...", with exit status 2. No feasible pair is a
 * result, not an error: exit status 0 with the closest pair named.
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cli.h"
#include "optimize_out.h"
#include "osn/err.h"
#include "osn/model.h"
#include "osn/model_scenario.h"
#include "osn/optimize.h"
#include "osn/optimize_scenario.h"
#include "osn/study_mpi.h"
#include "osn/wall.h"
#include "outputs.h"

struct opt_opts {
    const char *scenario;
    const char **sets; /* borrowed from argv */
    int nsets;
    const char *grid, *json, *plot, *threads;
    bool quiet, help, exhaustive;
};

/* Over 60 lines on purpose: one fputs of the whole --help text, kept in one piece so that it
 * reads in the source as it prints. */
void osn_cmd_optimize_usage(FILE *f)
{
    fputs("Usage: osn optimize [SCENARIO.ini] [--set SECTION.KEY=VALUE]... [--grid FILE|-]\n"
          "                    [--json FILE|-] [--plot FILE.png] [--threads N] [--exhaustive]\n"
          "                    [-q|--quiet]\n"
          "\n"
          "Best hysteretic thresholds: minimises the mean return time from overload T_ret\n"
          "(or, with optimize.objective = T_ret_p95 or T_ret_p99, its 95% or 99% quantile)\n"
          "over every pair of whole numbers 0 <= L < H < R (two-loop, single-loop), or\n"
          "0 <= L1 < H1 < H2 with L2, H2, R fixed (bi-level; only pairs forming a valid\n"
          "model), under the constraints of the [optimize] section. The answer is that of\n"
          "solving every pair exactly, as by 'osn solve --method general'. For the\n"
          "one-flow two-loop M|M|1 model (policy I) closed forms screen the pairs first\n"
          "and only those they cannot decide are solved (a few; R = 1000 in under a\n"
          "second); --grid, --plot, --exhaustive and a quantile objective solve every\n"
          "pair. A quantile needs exponential service: the return time's distribution\n"
          "is computed at every pair, several solves' worth each.\n"
          "\n"
          "Options:\n"
          "  --set SECTION.KEY=VALUE  override a scenario key, repeatable\n"
          "                           (e.g. --set optimize.max_loss=0.1)\n"
          "  --grid FILE|-            every evaluated pair as CSV, one row each (heat map):\n"
          "                           L,H,feasible,violation,P0,P1,P2,throttle,theta,T_ret,\n"
          "                           T_ret_sd,T_ret_p50,T_ret_p90,T_ret_p95,T_ret_p99,\n"
          "                           T_cyc,T_norm,T_disc,N_mean,throughput,sojourn,\n"
          "                           mode_change_rate,nu01,nu12, then KEY_log10 of each\n"
          "                           (bi-level: L,H are L1,H1; the quantiles are empty\n"
          "                           unless the objective is one)\n"
          "  --json FILE|-            the solve keys of the optimum (as osn solve --json),\n"
          "                           plus L, H, evaluated, feasible, found, objective,\n"
          "                           objective_value, binding, ...\n"
          "  --plot FILE.png          heat map of log10 of the objective with the feasible\n"
          "                           region and the optimum (needs gnuplot)\n"
          "  --threads N              solve the pairs on N threads [the CPUs online];\n"
          "                           the answer does not depend on N. Under mpirun or\n"
          "                           srun the pairs are shared by the ranks, each on\n"
          "                           its N threads; rank 0 writes the same outputs\n"
          "  --exhaustive             solve every pair even where the screen applies\n"
          "                           (same answer; to check it, or to time the scan)\n"
          "  -q, --quiet              do not print the summary\n"
          "  -h, --help               show this help\n"
          "\n"
          "Scenario: the keys and defaults of 'osn solve --help' ([model], [thresholds],\n"
          "[arrivals], [service]); thresholds.L and H (L1 and H1 for bi-level) are the\n"
          "search variables, so their values are ignored (placeholders 0 and 1 stand in).\n"
          "And the [optimize] section (docs/scenario.md), defaults in brackets:\n",
          f);
    struct osn_opt_cfg none = {0};
    osn_ini_keys_print(f, &osn_optimize_schema, &none, false);
    fputs("A bound is met with equality too. Without constraints the answer is the\n"
          "unconstrained minimum of the objective; with only max_throttle and min_cycle it\n"
          "drifts to H = R-1 (discard shortens the return): max_discard makes it sensible.\n"
          "\n"
          "Output: the optimum (L, H, the objective and T_ret), each constraint's value,\n"
          "bound and slack (1 - value/bound; 1 - bound/value for min_cycle), the binding\n"
          "constraint, the number of pairs evaluated and feasible, and the table of all\n"
          "measures at the optimum. Below, 'objective' is T_ret unless another is chosen;\n"
          "ties in it go to the smaller H, then the smaller L.\n"
          "  binding: the pair with the largest objective below the optimum's (the\n"
          "    next-better pair, which wins if the constraints are relaxed a little) is\n"
          "    infeasible; the constraint it violates most, relatively, is binding. 'none'\n"
          "    when no pair has a smaller objective, i.e. the optimum is unconstrained.\n"
          "  relative violation: value/bound - 1 (bound/value - 1 for min_cycle), 0 when\n"
          "    met; a max_* bound of 0 counts the value itself. A pair's total is the\n"
          "    sum over the constraints.\n"
          "  no feasible pair: said so, and the closest pair (smallest total violation;\n"
          "    ties by the objective) is shown instead; the exit status is still 0.\n"
          "Progress goes to stderr when it is a terminal and the run takes over a second.\n"
          "\n"
          "Exit status: 0 when the search ran (feasible pairs or not); 2 on any error\n"
          "(bad scenario: the message names FILE:LINE or the --set flag, and the key; bad\n"
          "option; "
          "a model osn solve does not support; a quantile objective without exponential\n"
          "service; a pair whose return-time distribution is out of reach; I/O or solver\n"
          "failure).\n"
          "\n"
          "Example:\n"
          "  osn optimize examples/optimize/two_loop_constrained.ini --grid grid.csv\n"
          "  osn optimize examples/optimize/two_loop_constrained.ini \\\n"
          "               --set optimize.max_discard=2e-3 --json -\n"
          "  osn optimize examples/optimize/tail_p99.ini\n",
          f);
}

#define die(...) osn_cli_die("optimize", __VA_ARGS__)

static int parse_args(int argc, char **argv, struct opt_opts *o)
{
    const struct osn_cli_opt opts[] = {
            {"--quiet", "-q", OSN_CLI_FLAG, &o->quiet},
            {"--grid", NULL, OSN_CLI_OUTPUT, &o->grid},
            {"--json", NULL, OSN_CLI_OUTPUT, &o->json},
            {"--plot", NULL, OSN_CLI_FILE, &o->plot},
            {"--threads", NULL, OSN_CLI_VALUE, &o->threads},
            {"--exhaustive", NULL, OSN_CLI_FLAG, &o->exhaustive},
            {NULL, NULL, 0, NULL},
    };
    struct osn_cli_args a = {0};
    int rc = osn_cli_parse("optimize", argc, argv, opts, 0, &a);

    o->scenario = a.scenario;
    o->sets = a.sets;
    o->nsets = a.nsets;
    o->help = a.help;
    if (rc || o->help)
        return rc;
    if (o->grid && o->json && strcmp(o->grid, "-") == 0 && strcmp(o->json, "-") == 0)
        return die("--grid - and --json - cannot both write to standard output");
    return 0;
}

/* Progress on stderr: only on a terminal, only after a second, at most 5 updates a second. */
struct progress {
    bool tty, shown;
    double start, last;
};

static void on_progress(long done, long total, void *arg)
{
    struct progress *p = arg;
    double t;

    if (!p->tty || (done & 15) != 0 || (t = osn_wall_s()) - p->start < 1 || t - p->last < 0.2)
        return;
    p->last = t;
    p->shown = true;
    fprintf(stderr, "\rosn optimize: %ld/%ld pairs (%.0f%%), %.0f s, about %.0f s left", done,
            total, 100.0 * (double)done / (double)total, t - p->start,
            (t - p->start) * (double)(total - done) / (double)done);
}

/* What the JSON writer gets. */
struct opt_out {
    const struct osn_scenario *at;
    const struct osn_opt_cfg *cfg;
    const struct osn_opt_result *res;
};

static int w_json(FILE *f, const void *ctx, char *err, size_t errsize)
{
    const struct opt_out *c = ctx;
    return osn_opt_json_write(f, c->at, c->cfg, c->res, err, errsize);
}

/* Loads the scenario and its [optimize] section into sc and cfg (the library's checks: the
 * general solver takes the model, the search can finish), and says up front when a run will take
 * more than minutes. Returns 0, or OSN_EXIT_ERROR after printing why. */
static int load_scenario(const struct opt_opts *o, struct osn_scenario *sc, struct osn_opt_cfg *cfg)
{
    char err[1024] = "";
    double hours = 0;
    int rc;

    bool every_pair = o->grid || o->plot || o->exhaustive;
    rc = osn_optimize_scenario_load(sc, cfg, o->scenario, o->sets, o->nsets, every_pair, &hours,
                                    err, sizeof err);
    if (rc)
        return die("%s", err[0] ? err : osn_strerror(rc));
    long threads = osn_cli_threads_default();
    if (o->threads &&
        osn_cli_long("optimize", "--threads", o->threads, 1, OSN_OPT_MAX_THREADS, &threads) != 0)
        return OSN_EXIT_ERROR;
    cfg->threads = (int)threads;
    cfg->exhaustive = o->exhaustive;
    if (hours > 0.1 && !o->quiet)
        fprintf(stderr,
                "osn optimize: %.3g pairs: roughly %.1f hours "
                "(a progress line with the time left shows on a terminal)\n",
                (double)osn_optimize_pairs(&sc->model), hours);
    return 0;
}

/* Opens the --grid output (grid_out) and starts the --plot data in g, then runs the search into
 * res with the progress line. Returns 0, or OSN_EXIT_ERROR after printing why. */
static int search(const struct opt_opts *o, const struct osn_scenario *sc,
                  const struct osn_opt_cfg *cfg, struct osn_cli_output *grid_out,
                  struct osn_opt_grid *g, struct osn_opt_result *res)
{
    struct progress prog = {0};
    char err[1024] = "";
    int rc;

    if (o->grid) {
        if (!(g->f = osn_cli_output_open("optimize", grid_out)))
            return OSN_EXIT_ERROR;
        if (osn_opt_grid_header(g->f) != 0)
            return die("--grid %s: write failed: %s", o->grid, strerror(errno));
    }
    g->R = sc->model.kind == OSN_KIND_BI_LEVEL ? sc->model.H2 : sc->model.R;
    g->bi_level = sc->model.kind == OSN_KIND_BI_LEVEL;
    g->objective = cfg->objective;
    if (o->plot && osn_opt_plot_begin(g, err, sizeof err) != 0)
        return die("--plot: %s", err);
    prog.tty = isatty(STDERR_FILENO);
    prog.start = prog.last = osn_wall_s();
    rc = osn_optimize(&sc->model, cfg, res, (o->grid || o->plot) ? osn_opt_grid_row : NULL, g,
                      on_progress, &prog);
    if (prog.shown)
        fputs("\r\033[K", stderr);
    if (rc == OSN_EIO)
        return die("--grid %s: write failed: %s", o->grid ? o->grid : "", strerror(errno));
    if (rc == OSN_ECONFIG)
        return die("%s: no valid (L, H) pair in this model",
                   sc->ini.path[0] ? sc->ini.path : "scenario");
    char why[512];
    osn_opt_failure_text(rc, cfg, res, why, sizeof why);
    if (rc)
        return die("optimisation failed: %s", why);
    return 0;
}

/* Writes the JSON and the plot, prints the summary unless quiet or stdout is an output, then
 * publishes every output together. Returns 0, or OSN_EXIT_ERROR after printing why. */
static int write_results(const struct opt_opts *o, struct osn_cli_output *outs, int nouts,
                         const struct opt_out *ctx, struct osn_opt_grid *g, struct osn_afile *plot)
{
    char err[1024] = "";

    if (osn_cli_outputs_write("optimize", outs, nouts, ctx) != 0)
        return OSN_EXIT_ERROR;
    if (o->plot) {
        if (osn_afile_open(plot, o->plot, err, sizeof err) != 0)
            return die("--plot: %s", err);
        if (osn_opt_plot_end(g, osn_afile_write_path(plot), ctx->res, err, sizeof err) != 0)
            return die("--plot %s: %s", o->plot, err);
    }
    if (!o->quiet && !osn_cli_outputs_to_stdout(outs, nouts))
        osn_opt_summary(stdout, ctx->at, ctx->cfg, ctx->res);
    /* The plot lands with the other outputs: finished before, published after them. */
    if (o->plot && osn_afile_finish(plot, err, sizeof err) != 0)
        return die("--plot: %s", err);
    if (osn_cli_stdout_done("optimize") != 0 ||
        osn_cli_outputs_commit("optimize", outs, nouts) != 0)
        return OSN_EXIT_ERROR;
    if (o->plot && osn_afile_publish(plot, err, sizeof err) != 0)
        return die("--plot: %s", err);
    return 0;
}

int osn_cmd_optimize(int argc, char **argv)
{
    struct opt_opts o = {0};
    struct osn_scenario *sc = NULL, *at = NULL;
    struct osn_opt_cfg cfg;
    struct osn_opt_result res;
    /* --grid is written while the search runs (no writer); --plot by gnuplot, to a path. */
    struct osn_cli_output outs[] = {{"--grid", NULL, NULL, {0}}, {"--json", NULL, w_json, {0}}};
    struct osn_afile plot = {0};
    struct osn_opt_grid g = {0};
    int status = OSN_EXIT_ERROR;
    bool everywhere = false; /* an error every rank meets alike (study_mpi.h) */

    /* Under mpirun or srun the pairs are shared by the ranks (study_mpi.h): every rank runs the
     * whole search, solving its block of each window and receiving the others', and rank 0
     * alone prints and writes, so the outputs are those of one process. */
    struct osn_split split;
    const struct osn_split *shared;
    if (osn_study_mpi_split("optimize", &split, &shared) != 0)
        return OSN_EXIT_ERROR;
    if (parse_args(argc, argv, &o) != 0) {
        everywhere = true;
        goto out;
    }
    if (split.part != 0) {
        /* Rank 0's --grid or --plot makes it solve every pair, exchanging blocks: the other
         * ranks must run that scan too, not the screened one, which exchanges nothing. */
        o.exhaustive = o.exhaustive || o.grid || o.plot;
        o.grid = o.json = o.plot = NULL;
        o.quiet = true;
    }
    outs[0].path = o.grid, outs[1].path = o.json;
    if (o.help) {
        osn_cmd_optimize_usage(stdout);
        status = 0;
        goto out;
    }
    sc = calloc(1, sizeof *sc);
    at = calloc(1, sizeof *at);
    if (!sc || !at) {
        die("out of memory");
        goto out;
    }
    if (load_scenario(&o, sc, &cfg) != 0) {
        everywhere = true;
        goto out;
    }
    cfg.split = shared;
    if (search(&o, sc, &cfg, &outs[0], &g, &res) != 0)
        goto out;
    /* The scenario as solved at the reported pair, for the table and the JSON echo. */
    const struct osn_opt_point *pt = res.best.found ? &res.best : &res.closest;
    *at = *sc;
    osn_optimize_set_pair(&at->model, pt->L, pt->H);
    struct opt_out ctx = {at, &cfg, &res};
    if (write_results(&o, outs, 2, &ctx, &g, &plot) != 0)
        goto out;
    status = 0;
out:
    osn_cli_outputs_abort(outs, 2);
    osn_afile_abort(&plot);
    osn_opt_plot_free(&g);
    osn_scenario_release(sc); /* `at` is a shallow copy: not released */
    free(sc);
    free(at);
    free(o.sets);
    /* After the temporaries are gone: rank 0 failing aborts all, unless all failed alike. */
    if (everywhere)
        osn_study_mpi_finish_everywhere(status);
    else
        osn_study_mpi_finish(status);
    return status;
}
