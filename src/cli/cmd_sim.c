/*
 * `osn sim`: discrete-event simulation of the hysteretic queue.
 *
 * Thin like `osn solve`: parse the options, load the scenario with its [sim] section
 * (src/io/sim_scenario.c), apply --seed / --replications / --threads, run osn_sim_run(), print.
 * Output files are written to temporaries and renamed only after every output, standard output
 * included, was written; a failed run leaves no file and prints one line "osn sim: ..." with
 * exit status 2. While it runs, a progress line is kept on stderr when stderr is a terminal.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cmd_sim.h"
#include "osn/err.h"
#include "osn/sim.h"
#include "osn/sim_scenario.h"
#include "osn/study_mpi.h"
#include "outputs.h"
#include "study.h"

struct sim_opts {
    const char *scenario;
    const char **sets;
    int nsets;
    const char *seed, *replications, *threads; /* as given, NULL when not */
    const char *json, *csv;
    const char *dist_tret, *dist_tret_points; /* --dist-tret FILE|-, --dist-tret-points N */
    long tret_points;
    const char *trace, *trace_interval,
            *reps_out; /* --trace, --trace-interval, --replications-out */
    bool quiet, help;
    const struct osn_split *split; /* under mpirun: the replications shared by the ranks */
};

void osn_cmd_sim_usage(FILE *f)
{
    fputs("Usage: osn sim SCENARIO.ini [--set SECTION.KEY=VALUE]... [--seed N]\n"
          "               [--replications N] [--threads N] [--json FILE|-] [--csv FILE|-]\n"
          "               [--dist-tret FILE|-] [--dist-tret-points N]\n"
          "               [--trace FILE|-] [--trace-interval S] [--replications-out FILE|-]\n"
          "               [-q|--quiet]\n"
          "\n"
          "Discrete-event simulation of the hysteretic queue: every model `osn solve`\n"
          "accepts (same sections and keys, see 'osn solve --help'), plus a feedback\n"
          "delay, which the algebra cannot do. Each measure is printed with its 95%\n"
          "confidence half-width from independent replications after a warm-up.\n"
          "\n"
          "Options:\n"
          "  --set SECTION.KEY=VALUE  override a scenario key; repeatable\n"
          "  --seed N                 master seed (overrides sim.seed)\n"
          "  --replications N         replications, >= 2 for intervals (sim.replications)\n"
          "  --threads N              worker threads [the CPUs online]; results do not\n"
          "                           depend on it\n"
          "  --json FILE|-            write the estimates and half-widths as JSON\n"
          "  --csv FILE|-             write a header line and one row as CSV\n"
          "  --dist-tret FILE|-       write the empirical survival of the return time\n"
          "                           as CSV: t_s,survival,t_s_log10 = t in s, the\n"
          "                           fraction of overload episodes (all replications)\n"
          "                           longer than t, log10 t; t from 0 to the empirical\n"
          "                           99.9% quantile\n"
          "  --dist-tret-points N     rows of that curve, 2 .. 1000000 [201]\n"
          "  --trace FILE|-           CSV of replication 0 over time, warm-up included, one\n"
          "                           row per --trace-interval S [1] ending at t_s:\n"
          "                           replication, t_s, offered_per_s, throttled_per_s,\n"
          "                           discarded_per_s, departures_per_s, n_mean_customers\n"
          "                           and P0 P1 P2 (averages over the interval), then at\n"
          "                           t_s n_customers, mode and upstream_mode (the mode\n"
          "                           the upstream acts on, feedback_delay late). Rows\n"
          "                           add up: those after the warm-up give the\n"
          "                           estimates.\n"
          "  --replications-out FILE|-  CSV, one row per replication: replication, seed,\n"
          "                           stream (replication i runs on stream i of the seed)\n"
          "                           and every measure from that replication alone. For\n"
          "                           rates and time fractions their mean is the estimate;\n"
          "                           a ratio (theta, sojourn, T_ret...) is estimated from\n"
          "                           the pooled counts, which weigh replications by size.\n"
          "  -q, --quiet              no table, no progress line\n"
          "  -h, --help               show this help\n"
          "\n"
          "The [sim] section (docs/scenario.md), defaults in brackets:\n",
          f);
    struct osn_sim_cfg def;
    osn_sim_cfg_default(&def);
    osn_ini_keys_print(f, &osn_sim_schema, &def, false);
    fputs("Input may be Poisson (one or two flows), MMPP or a trace of arrival instants\n"
          "(the observation then ends at the trace's last instant); service may follow\n"
          "any law of [service] (exp, det, erlang, hyperexp, uniform, lognormal,\n"
          "empirical).\n"
          "\n"
          "Output: a table on stdout (left out with -q or when --json or --csv writes to\n"
          "stdout) of the `osn solve` measures, P0 P1 P2 N_mean throughput sojourn T_ret\n"
          "T_ret_sd T_cyc T_norm T_disc mode_change_rate theta nu01 nu12 T_ret_renewal\n"
          "prob_sum loss_flow1 [loss_flow2], and the split of the losses: throttled\n"
          "(held back upstream) + discarded (by the server) = theta, then the return\n"
          "time's quantiles T_ret_p50 T_ret_p90 T_ret_p95 T_ret_p99 (order statistics of\n"
          "every episode; their half-width is the distribution-free binomial interval,\n"
          "exact when episodes are independent, as under policy I). Each other measure\n"
          "has a half-width: the jackknife over replications of the pooled estimate,\n"
          "with a t quantile (for a time average, the classical t interval of the\n"
          "replication means). JSON has each estimate under the `osn solve` key, its\n"
          "half-width as KEY_ci, and replications, events, seed, osn_version, the\n"
          "scenario (keys set, and every key's value as run under scenario.resolved); what the\n"
          "wall clock measured (wall_s, events_per_s, threads) is apart, under timing\n"
          "(CSV: the same as columns, timing.* last). The events (arrivals offered,\n"
          "departures, delayed notices) and events/s are printed too. Same seed, same\n"
          "numbers, whatever --threads is: two such files differ only under timing.\n"
          "\n"
          "Exit status: 0 on success; 2 on any error (bad scenario: the message names\n"
          "FILE:LINE or the flag, and the key; bad option; I/O failure).\n"
          "\n"
          "Example:\n"
          "  osn sim examples/sim_two_loop.ini --replications 20 --threads 2 --json -\n",
          f);
    osn_cmd_sim_net_usage(f);
    osn_cmd_sim_compare_usage(f);
    osn_study_usage(f, true);
}

#define die(...) osn_cli_die("sim", __VA_ARGS__)

static int parse_args(int argc, char **argv, struct sim_opts *o)
{
    const struct osn_cli_opt opts[] = {
            {"--quiet", "-q", OSN_CLI_FLAG, &o->quiet},
            {"--seed", NULL, OSN_CLI_VALUE, &o->seed},
            {"--replications", NULL, OSN_CLI_VALUE, &o->replications},
            {"--threads", NULL, OSN_CLI_VALUE, &o->threads},
            {"--json", NULL, OSN_CLI_OUTPUT, &o->json},
            {"--csv", NULL, OSN_CLI_OUTPUT, &o->csv},
            {"--dist-tret", NULL, OSN_CLI_OUTPUT, &o->dist_tret},
            {"--dist-tret-points", NULL, OSN_CLI_VALUE, &o->dist_tret_points},
            {"--trace", NULL, OSN_CLI_OUTPUT, &o->trace},
            {"--trace-interval", NULL, OSN_CLI_VALUE, &o->trace_interval},
            {"--replications-out", NULL, OSN_CLI_OUTPUT, &o->reps_out},
            {NULL, NULL, 0, NULL},
    };
    struct osn_cli_args a = {0};
    int rc = osn_cli_parse("sim", argc, argv, opts, 0, &a);

    o->scenario = a.scenario;
    o->sets = a.sets;
    o->nsets = a.nsets;
    o->help = a.help;
    o->tret_points = 201;
    if (rc || !o->dist_tret_points)
        return rc;
    if (osn_cli_long("sim", "--dist-tret-points", o->dist_tret_points, 2, 1000000,
                     &o->tret_points) != 0)
        return OSN_EXIT_ERROR;
    if (!o->dist_tret)
        return die("--dist-tret-points %s: needs --dist-tret FILE", o->dist_tret_points);
    return 0;
}

/* Progress line on stderr: "osn sim:  42%  3.1 s elapsed, about 4.3 s left". */
void osn_cmd_sim_progress(const char *what, double done, double elapsed)
{
    if (done > 1)
        done = 1;
    fprintf(stderr, "\rosn sim: %s%3.0f%%  %.1f s elapsed", what, 100 * done, elapsed);
    if (done > 0.02)
        fprintf(stderr, ", about %.0f s left ", elapsed * (1 - done) / done);
    fflush(stderr);
}

static void progress(double done, uint64_t events, double elapsed, void *arg)
{
    (void)events; /* counted per finished replication only: the fraction is finer */
    (void)arg;
    osn_cmd_sim_progress("", done, elapsed);
}

/* What the writers of the outputs get. */
struct sim_out {
    const struct osn_sim_scenario *s;
    const struct osn_sim_result *res;
    long tret_points;
    const double *per_rep; /* replications x OSN_SIM_NMEASURES, with --replications-out */
};

/* Episodes among x[0..n-1] (ascending) longer than t. */
static long count_above(const double *x, long n, double t)
{
    long lo = 0, hi = n; /* first index with x > t */
    while (lo < hi) {
        long mid = lo + (hi - lo) / 2;
        if (x[mid] > t)
            hi = mid;
        else
            lo = mid + 1;
    }
    return n - lo;
}

/* --dist-tret: the empirical P(T_ret > t) from 0 to the empirical 99.9% quantile. */
static int w_dist_tret(FILE *f, const void *ctx, char *err, size_t errsize)
{
    const struct sim_out *c = ctx;
    const double *x = c->res->T_ret_sorted;
    const long n = c->res->T_ret_n;
    long r = (long)ceil(0.999 * (double)n);
    const double tmax = x[(r < 1 ? 1 : r) - 1];

    if (fputs("t_s,survival,t_s_log10\n", f) == EOF) /* the columns of osn solve's curve */
        goto fail;
    for (long i = 0; i < c->tret_points; i++) {
        double t = tmax * (double)i / (double)(c->tret_points - 1);
        char lg[32] = "";
        if (t > 0)
            snprintf(lg, sizeof lg, "%.17g", log10(t));
        if (fprintf(f, "%.17g,%.17g,%s\n", t, (double)count_above(x, n, t) / (double)n, lg) < 0)
            goto fail;
    }
    return 0;
fail:
    snprintf(err, errsize, "write failed: %s", strerror(errno));
    return OSN_EIO;
}

static int w_json(FILE *f, const void *ctx, char *err, size_t errsize)
{
    const struct sim_out *c = ctx;
    return osn_sim_report_json_write(f, c->s, c->res, err, errsize);
}

static int w_csv(FILE *f, const void *ctx, char *err, size_t errsize)
{
    const struct sim_out *c = ctx;
    return osn_sim_report_csv_write(f, c->s, c->res, err, errsize);
}

static int w_reps(FILE *f, const void *ctx, char *err, size_t errsize)
{
    const struct sim_out *c = ctx;
    return osn_sim_report_reps_csv_write(f, c->s, c->per_rep, err, errsize);
}

/* Most trace rows a run may write: 1e7 rows are about 700 MB. */
#define TRACE_ROWS_MAX 1e7

/* Applies --trace and --trace-interval (default 1 s) to s. Returns 0, or OSN_EXIT_ERROR after
 * printing why. */
static int apply_trace(const struct sim_opts *o, struct osn_sim_scenario *s, FILE *trace)
{
    struct osn_sim_cfg *c = &s->cfg;
    char *end;

    if (o->trace_interval && !o->trace)
        return die("--trace-interval %s without --trace: give the trace a file", o->trace_interval);
    if (!o->trace)
        return 0;
    c->trace = trace;
    c->trace_interval = 1;
    if (o->trace_interval) {
        c->trace_interval = strtod(o->trace_interval, &end);
        if (end == o->trace_interval || *end || !(c->trace_interval > 0) ||
            !isfinite(c->trace_interval))
            return die("--trace-interval %s: expected seconds > 0", o->trace_interval);
    }
    double rows = (c->warmup + c->time) / c->trace_interval;
    if (!(rows <= TRACE_ROWS_MAX))
        return die("--trace-interval %g: %.3g trace rows for %g s simulated; at most %.0e: raise "
                   "the interval",
                   c->trace_interval, rows, c->warmup + c->time, TRACE_ROWS_MAX);
    return 0;
}

/* Applies --seed, --replications and --threads to the loaded scenario. Returns 0, or
 * OSN_EXIT_ERROR after printing why. */
static int apply_options(const struct sim_opts *o, struct osn_sim_scenario *s)
{
    long v;

    if (o->seed) {
        if (osn_cli_long("sim", "--seed", o->seed, 0, 0x7fffffffffffffffL, &v) != 0)
            return OSN_EXIT_ERROR;
        s->cfg.seed = (uint64_t)v;
    }
    if (o->replications) {
        if (osn_cli_long("sim", "--replications", o->replications, 1, 100000, &v) != 0)
            return OSN_EXIT_ERROR;
        s->cfg.replications = (int)v;
    }
    s->cfg.threads = osn_cli_threads_default();
    if (o->threads) {
        if (osn_cli_long("sim", "--threads", o->threads, 1, 256, &v) != 0)
            return OSN_EXIT_ERROR;
        s->cfg.threads = (int)v;
    }
    return 0;
}

/* Loads, configures, checks and runs the scenario into s and res (the trace written to `trace`,
 * per_rep filled when not NULL: the caller sizes it once s is loaded, through *per_rep).
 * Returns 0, or OSN_EXIT_ERROR after printing why. */
static int run(const struct sim_opts *o, struct osn_sim_scenario *s, struct osn_sim_result *res,
               FILE *trace, double **per_rep)
{
    char err[1024] = "";
    int rc;

    rc = osn_sim_scenario_load(s, o->scenario, o->sets, o->nsets, err, sizeof err);
    if (rc)
        return die("%s", err[0] ? err : osn_strerror(rc));
    if (apply_options(o, s) != 0)
        return OSN_EXIT_ERROR;
    if (osn_sim_scenario_check(s, err, sizeof err) != 0 ||
        osn_sim_scenario_check_cost(s, err, sizeof err) != 0)
        return die("%s", err);
    if (apply_trace(o, s, trace) != 0)
        return OSN_EXIT_ERROR;
    if (o->reps_out) {
        *per_rep = calloc((size_t)s->cfg.replications * OSN_SIM_NMEASURES, sizeof **per_rep);
        if (!*per_rep)
            return die("out of memory");
        s->cfg.rep_measures = *per_rep;
    }
    /* Say up front when a run will take more than minutes (1e10 events); the progress line
     * then gives the time left. */
    if (!o->quiet && osn_sim_scenario_events(s) > 1e10)
        fprintf(stderr, "osn sim: about %.3g events to simulate: expect minutes to hours\n",
                osn_sim_scenario_events(s));
    if (!o->quiet && isatty(STDERR_FILENO))
        s->cfg.progress = progress;
    s->cfg.keep_tret = o->dist_tret != NULL;
    s->cfg.split = o->split;
    rc = osn_sim_run(&s->sc.model, &s->cfg, res, err, sizeof err);
    if (s->cfg.progress)
        fputs("\r\033[K", stderr);
    if (rc)
        return die("simulation failed: %s", err[0] ? err : osn_strerror(rc));
    if (o->dist_tret && res->T_ret_n == 0)
        return die("--dist-tret %s: no overload episode ended in the simulated time, so there "
                   "is no return time to write (raise sim.time)",
                   o->dist_tret);
    return 0;
}

int osn_cmd_sim(int argc, char **argv)
{
    struct sim_opts o = {0};
    struct osn_sim_scenario *s = NULL;
    struct osn_sim_result res = {0};
    /* --trace is written while replication 0 runs (no writer). */
    struct osn_cli_output outs[] = {{"--json", NULL, w_json, {0}},
                                    {"--csv", NULL, w_csv, {0}},
                                    {"--dist-tret", NULL, w_dist_tret, {0}},
                                    {"--replications-out", NULL, w_reps, {0}},
                                    {"--trace", NULL, NULL, {0}}};
    enum { NOUTS = sizeof outs / sizeof outs[0] };
    double *per_rep = NULL;
    FILE *trace = NULL;
    int status = OSN_EXIT_ERROR;
    bool everywhere = false; /* an error every rank meets alike (study_mpi.h) */

    bool net = osn_cmd_sim_is_net(argc, argv);
    if (osn_cmd_sim_compare_wanted(argc, argv)) /* a paired comparison: cmd_sim_compare.c */
        return osn_cmd_sim_compare(argc, argv, net);
    /* A grid, --resume or --precision: study.c (the network simulator keeps its own one-range
     * sweep, whose output predates studies). */
    if (osn_study_wanted(argc, argv, !net))
        return osn_study_main(net ? &osn_study_net : &osn_study_node, argc, argv);
    if (net) /* the SIP network simulator: cmd_sim_net.c */
        return osn_cmd_sim_net(argc, argv);
    /* Under mpirun or srun the replications are shared by the ranks (osn/split.h), rank 0
     * alone printing and writing: the outputs are those of one process. */
    struct osn_split split;
    if (osn_study_mpi_split("sim", &split, &o.split) != 0)
        return OSN_EXIT_ERROR;
    everywhere = true;
    if (parse_args(argc, argv, &o) != 0)
        goto out;
    if (o.split && o.trace) {
        die("--trace follows replication 0 in one process, and under mpirun (%d ranks) the "
            "replications are shared: run a traced simulation without mpirun",
            split.parts);
        goto out;
    }
    everywhere = false;
    if (split.part != 0) {
        o.json = o.csv = o.dist_tret = o.reps_out = o.trace = NULL;
        o.quiet = true;
    }
    outs[0].path = o.json, outs[1].path = o.csv, outs[2].path = o.dist_tret;
    outs[3].path = o.reps_out, outs[4].path = o.trace;
    if (o.help) {
        osn_cmd_sim_usage(stdout);
        status = 0;
        goto out;
    }
    s = calloc(1, sizeof *s);
    if (!s) {
        die("out of memory");
        goto out;
    }
    if (o.trace && !(trace = osn_cli_output_open("sim", &outs[4])))
        goto out;
    if (run(&o, s, &res, trace, &per_rep) != 0)
        goto out;
    struct sim_out ctx = {s, &res, o.tret_points, per_rep};
    if (osn_cli_outputs_write("sim", outs, NOUTS, &ctx) != 0)
        goto out;
    if (!o.quiet && !osn_cli_outputs_to_stdout(outs, NOUTS))
        osn_sim_report_table(stdout, s, &res);
    if (osn_cli_stdout_done("sim") != 0 || osn_cli_outputs_commit("sim", outs, NOUTS) != 0)
        goto out;
    status = 0;
out:
    osn_cli_outputs_abort(outs, NOUTS);
    free(per_rep);
    free(res.T_ret_sorted);
    if (s)
        osn_sim_scenario_release(s);
    free(s);
    free(o.sets);
    /* After the temporaries are gone: rank 0 failing aborts all, unless all failed alike. */
    if (everywhere)
        osn_study_mpi_finish_everywhere(status);
    else
        osn_study_mpi_finish(status);
    return status;
}
