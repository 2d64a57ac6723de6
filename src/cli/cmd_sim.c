/*
 * `osn sim`: discrete-event simulation of the hysteretic node.
 *
 * Thin like `osn solve`: parse the options, load the scenario with its [sim] section
 * (src/io/sim_scenario.c), apply --seed / --replications / --threads, run osn_sim_run(), print.
 * Output files are written to temporaries and renamed only after every output, standard output
 * included, was written; a failed run leaves no file and prints one line "osn sim: ..." with
 * exit status 2. While it runs, a progress line is kept on stderr when stderr is a terminal.
 */
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
#include "outputs.h"
#include "study.h"

struct sim_opts {
    const char *scenario;
    const char **sets;
    int nsets;
    const char *seed, *replications, *threads; /* as given, NULL when not */
    const char *json, *csv;
    bool quiet, help;
};

void osn_cmd_sim_usage(FILE *f)
{
    fputs("Usage: osn sim SCENARIO.ini [--set SECTION.KEY=VALUE]... [--seed N]\n"
          "               [--replications N] [--threads N] [--json FILE|-] [--csv FILE|-]\n"
          "               [-q|--quiet]\n"
          "\n"
          "Discrete-event simulation of the hysteretic node: every model `osn solve`\n"
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
          "  -q, --quiet              no table, no progress line\n"
          "  -h, --help               show this help\n"
          "\n"
          "The [sim] section (defaults in brackets):\n"
          "  time            simulated seconds per replication after the warm-up  [1e5]\n"
          "  warmup          seconds simulated and discarded first                [1e3]\n"
          "  replications    independent replications, 1 .. 100000                [10]\n"
          "  seed            master seed, 0 .. 2^63-1; replication i uses stream i  [1]\n"
          "                  (the seed's xoshiro256++ state jumped i times)\n"
          "  feedback_delay  d >= 0 s: the upstream throttles by the server's mode  [0]\n"
          "                  as it was d s ago; the server still discards in mode 2\n"
          "                  and when full. 0 is exactly the model of `osn solve`.\n"
          "Input may be Poisson (one or two flows), MMPP or a trace of arrival instants\n"
          "(the observation then ends at the trace's last instant); service may follow\n"
          "any law of [service] (exp, det, erlang, hyperexp, uniform, lognormal,\n"
          "empirical).\n"
          "\n"
          "Output: a table on stdout (left out with -q or when --json or --csv writes to\n"
          "stdout) of the `osn solve` measures, P0 P1 P2 N_mean throughput sojourn T_ret\n"
          "T_ret_sd T_cyc T_norm T_disc mode_change_rate theta nu01 nu12 T_ret_renewal\n"
          "prob_sum loss_flow1 [loss_flow2], and the split of the losses: throttled\n"
          "(held back upstream) + discarded (by the server) = theta. Each has a\n"
          "half-width: the jackknife over replications of the pooled estimate, with a\n"
          "t quantile (for a time average, the classical t interval of the replication\n"
          "means). JSON has each estimate under the `osn solve` key, its half-width as\n"
          "KEY_ci, and replications, events, seed, osn_version, the scenario; what the\n"
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
            {NULL, NULL, 0, NULL},
    };
    struct osn_cli_args a = {0};
    int rc = osn_cli_parse("sim", argc, argv, opts, 0, &a);

    o->scenario = a.scenario;
    o->sets = a.sets;
    o->nsets = a.nsets;
    o->help = a.help;
    return rc;
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
};

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

/* Loads, configures, checks and runs the scenario into s and res. Returns 0, or OSN_EXIT_ERROR
 * after printing why. */
static int run(const struct sim_opts *o, struct osn_sim_scenario *s, struct osn_sim_result *res)
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
    /* Say up front when a run will take more than minutes (1e10 events); the progress line
     * then gives the time left. */
    if (!o->quiet && osn_sim_scenario_events(s) > 1e10)
        fprintf(stderr, "osn sim: about %.3g events to simulate: expect minutes to hours\n",
                osn_sim_scenario_events(s));
    if (!o->quiet && isatty(STDERR_FILENO))
        s->cfg.progress = progress;
    rc = osn_sim_run(&s->sc.model, &s->cfg, res, err, sizeof err);
    if (s->cfg.progress)
        fputs("\r\033[K", stderr);
    if (rc)
        return die("simulation failed: %s", err[0] ? err : osn_strerror(rc));
    return 0;
}

int osn_cmd_sim(int argc, char **argv)
{
    struct sim_opts o = {0};
    struct osn_sim_scenario *s = NULL;
    struct osn_sim_result res;
    struct osn_cli_output outs[] = {{"--json", NULL, w_json, {0}}, {"--csv", NULL, w_csv, {0}}};
    int status = OSN_EXIT_ERROR;

    bool net = osn_cmd_sim_is_net(argc, argv);
    if (osn_cmd_sim_compare_wanted(argc, argv)) /* a paired comparison: cmd_sim_compare.c */
        return osn_cmd_sim_compare(argc, argv, net);
    /* A grid, --resume or --precision: study.c (the network simulator keeps its own one-range
     * sweep, whose output predates studies). */
    if (osn_study_wanted(argc, argv, !net))
        return osn_study_main(net ? &osn_study_net : &osn_study_node, argc, argv);
    if (net) /* the SIP network simulator: cmd_sim_net.c */
        return osn_cmd_sim_net(argc, argv);
    if (parse_args(argc, argv, &o) != 0)
        goto out;
    outs[0].path = o.json, outs[1].path = o.csv;
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
    if (run(&o, s, &res) != 0)
        goto out;
    struct sim_out ctx = {s, &res};
    if (osn_cli_outputs_write("sim", outs, 2, &ctx) != 0)
        goto out;
    if (!o.quiet && !osn_cli_outputs_to_stdout(outs, 2))
        osn_sim_report_table(stdout, s, &res);
    if (osn_cli_stdout_done("sim") != 0 || osn_cli_outputs_commit("sim", outs, 2) != 0)
        goto out;
    status = 0;
out:
    osn_cli_outputs_abort(outs, 2);
    if (s)
        osn_sim_scenario_release(s);
    free(s);
    free(o.sets);
    return status;
}
