/*
 * `osn sim` on a network scenario (a [net] or [source] section): the SIP network simulator.
 *
 * Thin like the single-node path in cmd_sim.c: parse the options, load the scenario
 * (src/io/net_scenario.c), apply --seed / --replications / --threads, run osn_net_run(), print.
 * A --set whose value is a range LO:HI:STEP runs one simulation per value (a sweep) and writes
 * a JSON array / one CSV row per value. Output files are written to temporaries and renamed
 * only when everything was written; any failure prints one line "osn sim: ..." and exits 2.
 */
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
#include "osn/net_scenario.h"
#include "osn/study_mpi.h"
#include "outputs.h"

#define MAX_SWEEP 1000

/* The options that take a value, by name; --trace and --trace-interval name a network run when
 * no scenario file decides (osn_cmd_sim_is_net). */
enum net_opt {
    OPT_SET,
    OPT_SEED,
    OPT_REPLICATIONS,
    OPT_THREADS,
    OPT_JSON,
    OPT_CSV,
    OPT_TRACE,
    OPT_TRACE_INTERVAL,
    OPT_REPS_OUT,
    NVALUED
};

static const char *const valued[NVALUED] = {[OPT_SET] = "--set",
                                            [OPT_SEED] = "--seed",
                                            [OPT_REPLICATIONS] = "--replications",
                                            [OPT_THREADS] = "--threads",
                                            [OPT_JSON] = "--json",
                                            [OPT_CSV] = "--csv",
                                            [OPT_TRACE] = "--trace",
                                            [OPT_TRACE_INTERVAL] = "--trace-interval",
                                            [OPT_REPS_OUT] = "--replications-out"};

struct net_opts {
    const char *scenario;
    const char **sets;
    int nsets;
    const char *val[NVALUED]; /* the value of each option by enum net_opt; val[OPT_SET] unused */
    bool quiet, help, verbose;
    const struct osn_split *split; /* under mpirun: the replications shared by the ranks */
};

#define die(...) osn_cli_die("sim", __VA_ARGS__)

/* Index in valued[] of option argv[i] ("--x V" or "--x=V"), -1 when it is none of them. */
static int valued_index(const char *a, const char **inline_value)
{
    for (size_t k = 0; k < NVALUED; k++) {
        size_t n = strlen(valued[k]);
        if (strncmp(a, valued[k], n) == 0 && (a[n] == '\0' || a[n] == '=')) {
            *inline_value = a[n] == '=' ? a + n + 1 : NULL;
            return (int)k;
        }
    }
    return -1;
}

bool osn_cmd_sim_is_net(int argc, char **argv)
{
    const char *file = NULL;
    bool hint = false;
    FILE *f;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        int k = valued_index(a, &v);
        if (k >= 0) {
            if (!v && i + 1 < argc)
                v = argv[++i];
            if (k == OPT_SET && v && (strncmp(v, "net.", 4) == 0 || strncmp(v, "source.", 7) == 0))
                hint = true;
            if (k == OPT_TRACE || k == OPT_TRACE_INTERVAL)
                hint = true;
        } else if (a[0] != '-' && !file) {
            file = a;
        }
    }
    /* A readable scenario file decides; the flags only without one. `osn sim
     * examples/sim_two_loop.ini --set net.time=5` once took the node's file for a network and
     * said "unknown section [model]"; now the node's loader names the stray key. */
    if (file && (f = fopen(file, "r"))) {
        fclose(f);
        return osn_net_scenario_sniff(file);
    }
    return hint;
}

static int parse_args(int argc, char **argv, struct net_opts *o)
{
    struct osn_cli_opt opts[NVALUED + 2] = {{"--quiet", "-q", OSN_CLI_FLAG, &o->quiet},
                                            {"--verbose", "-v", OSN_CLI_FLAG, &o->verbose}};
    int n = 2;
    for (int k = OPT_SET + 1; k < NVALUED; k++) { /* --set is osn_cli_parse's own */
        bool out = k == OPT_JSON || k == OPT_CSV || k == OPT_TRACE || k == OPT_REPS_OUT;
        opts[n++] = (struct osn_cli_opt){valued[k], NULL, out ? OSN_CLI_OUTPUT : OSN_CLI_VALUE,
                                         &o->val[k]};
    }
    opts[n] = (struct osn_cli_opt){NULL, NULL, 0, NULL};
    struct osn_cli_args a = {0};
    int rc = osn_cli_parse("sim", argc, argv, opts, 0, &a);

    o->scenario = a.scenario;
    o->sets = a.sets;
    o->nsets = a.nsets;
    o->help = a.help;
    return rc;
}

/* The values of the one --set given as a range, or a single run without one. */
struct sweep {
    int which;    /* index in sets of the range, -1 without a sweep */
    char key[64]; /* its key, "" without a sweep */
    double vals[MAX_SWEEP + 1];
    int n; /* runs: the values of the range, 1 without */
};

/* A --set "KEY=LO:HI:STEP": fills sw with the key, the values and their count; sw->which stays
 * -1 when there is none. Returns 0, or OSN_EXIT_ERROR after printing why. */
static int find_sweep(const struct net_opts *o, struct sweep *sw)
{
    sw->which = -1;
    for (int i = 0; i < o->nsets; i++) {
        const char *eq = strchr(o->sets[i], '=');
        double lo, hi, st;
        char tail;
        if (!eq || sscanf(eq + 1, "%lf:%lf:%lf%c", &lo, &hi, &st, &tail) != 3)
            continue;
        if (sw->which >= 0)
            return die("only one --set may be a range");
        if (!(st > 0) || !(hi >= lo) || (hi - lo) / st > MAX_SWEEP)
            return die("--set %s: a range is LO:HI:STEP with STEP > 0, HI >= LO, at most %d "
                       "values",
                       o->sets[i], MAX_SWEEP);
        sw->which = i;
        snprintf(sw->key, sizeof sw->key, "%.*s", (int)(eq - o->sets[i]), o->sets[i]);
        sw->n = 0;
        for (int k = 0; lo + k * st <= hi * (1 + 1e-12) + 1e-12; k++)
            sw->vals[sw->n++] = lo + k * st;
    }
    return 0;
}

/* Where a run is in a sweep, for the progress line. */
struct sweep_at {
    int i, n;
    const char *key;
    double value;
};

/* Progress line on stderr: "osn sim:  42%  3.1 s elapsed, about 4.3 s left", and for a sweep
 * which value of how many is running. */
static void progress(double done, double elapsed, void *arg)
{
    const struct sweep_at *at = arg;
    char what[128] = "";
    if (at->n > 1)
        snprintf(what, sizeof what, "%s = %g (%d of %d): ", at->key, at->value, at->i + 1, at->n);
    osn_cmd_sim_progress(what, done, elapsed);
}

/* What the writers of the outputs get: the runs of a sweep (one without). */
struct net_out {
    const struct osn_net_scenario *const *sc;
    const struct osn_net_result *const *res;
    const double *const *per_rep; /* each run's replications x OSN_NET_NMEASURES values */
    int n;
    const char *sweep_key; /* NULL without a sweep */
};

static int w_json(FILE *f, const void *ctx, char *err, size_t errsize)
{
    const struct net_out *c = ctx;
    return osn_net_report_json_write(f, c->sc, c->res, c->n, c->sweep_key, err, errsize);
}

static int w_csv(FILE *f, const void *ctx, char *err, size_t errsize)
{
    const struct net_out *c = ctx;
    return osn_net_report_csv_write(f, c->sc, c->res, c->n, c->sweep_key, err, errsize);
}

static int w_reps(FILE *f, const void *ctx, char *err, size_t errsize)
{
    const struct net_out *c = ctx;
    return osn_net_report_reps_csv_write(f, c->sc, c->per_rep, c->n, c->sweep_key, err, errsize);
}

/* Most trace rows a run may write: 1e7 rows are about 600 MB. */
#define TRACE_ROWS_MAX 1e7

/* Applies --seed, --replications, --threads, --trace and --trace-interval to the configuration
 * of one run. Returns 0, or OSN_EXIT_ERROR after printing why. */
static int apply_options(const struct net_opts *o, struct osn_net_cfg *c, FILE *trace)
{
    long v;

    if (o->val[OPT_SEED]) {
        if (osn_cli_long("sim", "--seed", o->val[OPT_SEED], 0, 0x7fffffffffffffffL, &v) != 0)
            return OSN_EXIT_ERROR;
        c->seed = (uint64_t)v;
    }
    if (o->val[OPT_REPLICATIONS]) {
        if (osn_cli_long("sim", "--replications", o->val[OPT_REPLICATIONS], 1, 100000, &v) != 0)
            return OSN_EXIT_ERROR;
        c->replications = (int)v;
    }
    c->threads = osn_cli_threads_default();
    if (o->val[OPT_THREADS]) {
        if (osn_cli_long("sim", "--threads", o->val[OPT_THREADS], 1, 256, &v) != 0)
            return OSN_EXIT_ERROR;
        c->threads = (int)v;
    }
    if (o->val[OPT_TRACE]) {
        c->trace = trace;
        if (c->trace_interval <= 0)
            c->trace_interval = 0.1;
    }
    if (o->val[OPT_TRACE_INTERVAL] && !o->val[OPT_TRACE])
        return die("--trace-interval %s without --trace: give the trace a file",
                   o->val[OPT_TRACE_INTERVAL]);
    if (o->val[OPT_TRACE_INTERVAL]) {
        char *end;
        c->trace_interval = strtod(o->val[OPT_TRACE_INTERVAL], &end);
        if (*end || !(c->trace_interval > 0))
            return die("--trace-interval %s: expected seconds > 0", o->val[OPT_TRACE_INTERVAL]);
    }
    /* One trace row (about 120 bytes) per interval of replication 0: --trace-interval 1e-9 once
     * planned 3e9 rows and wrote 484 MB in 10 s. */
    double rows = (c->warmup + c->time) / c->trace_interval;
    if (c->trace && !(rows <= TRACE_ROWS_MAX))
        return die("%s %g: %.3g trace rows (about %.3g GB) for %g s simulated; at most %.0e: "
                   "raise the interval",
                   o->val[OPT_TRACE_INTERVAL] ? "--trace-interval" : "net.trace_interval",
                   c->trace_interval, rows, rows * 120 / 1e9, c->warmup + c->time, TRACE_ROWS_MAX);
    return 0;
}

/* Run i of the sweep: loads the scenario with the swept key at its value, applies the options,
 * checks and simulates into sc and res (the caller's), and with --replications-out each
 * replication's values into *per_rep (allocated here). Returns 0, or OSN_EXIT_ERROR after
 * printing why. */
static int run_one(struct net_opts *o, const struct sweep *sw, int i, FILE *trace,
                   struct osn_net_scenario *sc, struct osn_net_result *res, double **per_rep)
{
    struct osn_net_cfg *c = &sc->cfg;
    struct sweep_at at = {i, sw->n, sw->key, sw->vals[i]};
    char err[1024] = "", setbuf[320], unread[512];
    const char *saved = NULL;
    int rc;

    if (sw->which >= 0) {
        saved = o->sets[sw->which];
        snprintf(setbuf, sizeof setbuf, "%s=%.10g", sw->key, sw->vals[i]);
        o->sets[sw->which] = setbuf;
    }
    rc = osn_net_scenario_load(sc, o->scenario, o->sets, o->nsets, err, sizeof err);
    if (sw->which >= 0)
        o->sets[sw->which] = saved;
    if (rc && sw->which >= 0) /* the message shows the one value: name the range given too */
        return die("%s (value %d of the range --set %s)", err[0] ? err : osn_strerror(rc), i + 1,
                   saved);
    if (rc)
        return die("%s", err[0] ? err : osn_strerror(rc));
    /* One file describes the network for `osn sim` and each element for `osn node`: the
     * simulation passes over the [node] keys, and says which under -v. */
    if (o->verbose && i == 0 && osn_net_scenario_unread(sc, unread, sizeof unread) > 0)
        fprintf(stderr, "osn sim: ignored, read only by osn node: %s\n", unread);
    if (apply_options(o, c, trace) != 0)
        return OSN_EXIT_ERROR;
    if (osn_net_scenario_check(sc, err, sizeof err) != 0)
        return die("%s", err);
    if (o->val[OPT_REPS_OUT]) {
        *per_rep = calloc((size_t)c->replications * OSN_NET_NMEASURES, sizeof **per_rep);
        if (!*per_rep)
            return die("out of memory");
        c->rep_measures = *per_rep;
    }
    if (!o->quiet && isatty(STDERR_FILENO)) {
        c->progress = progress;
        c->progress_arg = &at;
    }
    c->split = o->split;
    rc = osn_net_run(c, res, err, sizeof err);
    if (c->progress)
        fputs("\r\033[K", stderr);
    c->progress = NULL; /* `at` ends here */
    c->progress_arg = NULL;
    if (rc)
        return die("simulation failed: %s", err[0] ? err : osn_strerror(rc));
    return 0;
}

/* The table on stdout: one run's, or one row per value of a sweep. */
static void print_table(const struct sweep *sw, struct osn_net_scenario *const *sc,
                        struct osn_net_result *const *res)
{
    if (sw->which < 0) {
        osn_net_report_table(stdout, sc[0], res[0]);
        return;
    }
    printf("sweep of %s (%d values)\n\n  %12s %10s %10s %10s %10s %10s %10s\n", sw->key, sw->n,
           sw->key, "offered", "goodput", "capacity", "failed", "setup_mean", "retrans");
    for (int i = 0; i < sw->n; i++)
        printf("  %12.6g %10.4g %10.4g %10.4g %10.4g %10.4g %10.4g\n", sw->vals[i],
               res[i]->est[OSN_NET_OFFERED].value, res[i]->est[OSN_NET_GOODPUT].value,
               res[i]->est[OSN_NET_CAPACITY].value, res[i]->est[OSN_NET_FAILED].value,
               res[i]->est[OSN_NET_SETUP_MEAN].value, res[i]->est[OSN_NET_RETRANS_RATIO].value);
}

/* Writes the output files, prints the table unless quiet or stdout is an output, and commits the
 * files. Returns 0, or OSN_EXIT_ERROR after printing why (nothing is published then). */
static int write_results(const struct net_opts *o, const struct sweep *sw,
                         struct osn_cli_output *outs, int nouts, struct osn_net_scenario *const *sc,
                         struct osn_net_result *const *res, double *const *per_rep)
{
    struct net_out ctx = {(const struct osn_net_scenario *const *)sc,
                          (const struct osn_net_result *const *)res, (const double *const *)per_rep,
                          sw->n, sw->which >= 0 ? sw->key : NULL};

    if (osn_cli_outputs_write("sim", outs, nouts, &ctx) != 0)
        return OSN_EXIT_ERROR;
    if (!o->quiet && !osn_cli_outputs_to_stdout(outs, nouts))
        print_table(sw, sc, res);
    if (osn_cli_stdout_done("sim") != 0 || osn_cli_outputs_commit("sim", outs, nouts) != 0)
        return OSN_EXIT_ERROR;
    return 0;
}

int osn_cmd_sim_net(int argc, char **argv)
{
    struct net_opts o = {0};
    struct sweep sw = {.which = -1, .n = 1};
    struct osn_net_scenario **sc = NULL;
    struct osn_net_result **res = NULL;
    double **per_rep = NULL;
    /* --trace is written while replication 0 runs (no writer), the others after. */
    struct osn_cli_output outs[] = {{"--json", NULL, w_json, {0}},
                                    {"--csv", NULL, w_csv, {0}},
                                    {"--trace", NULL, NULL, {0}},
                                    {"--replications-out", NULL, w_reps, {0}}};
    enum { NOUTS = sizeof outs / sizeof outs[0] };
    FILE *trace = NULL;
    int status = OSN_EXIT_ERROR;

    /* Under mpirun or srun each run's replications are shared by the ranks (osn/split.h):
     * every rank runs its block and receives the others', and rank 0 alone prints and writes,
     * so the outputs are those of one process. */
    struct osn_split split;
    if (osn_study_mpi_split("sim", &split, &o.split) != 0)
        return OSN_EXIT_ERROR;
    if (parse_args(argc, argv, &o) != 0)
        goto out;
    if (o.split && o.val[OPT_TRACE]) {
        die("--trace follows replication 0 in one process, and under mpirun (%d ranks) the "
            "replications are shared: run a traced simulation without mpirun",
            split.parts);
        goto out;
    }
    if (split.part != 0) {
        o.val[OPT_JSON] = o.val[OPT_CSV] = o.val[OPT_TRACE] = o.val[OPT_REPS_OUT] = NULL;
        o.quiet = true;
    }
    outs[0].path = o.val[OPT_JSON], outs[1].path = o.val[OPT_CSV];
    outs[2].path = o.val[OPT_TRACE];
    outs[3].path = o.val[OPT_REPS_OUT];
    if (o.help) {
        osn_cmd_sim_usage(stdout);
        status = 0;
        goto out;
    }
    if (find_sweep(&o, &sw) != 0)
        goto out;
    if (sw.which >= 0 && o.val[OPT_TRACE]) {
        die("--trace with a swept key: give one value");
        goto out;
    }
    sc = calloc((size_t)sw.n, sizeof *sc);
    res = calloc((size_t)sw.n, sizeof *res);
    per_rep = calloc((size_t)sw.n, sizeof *per_rep);
    if (!sc || !res || !per_rep) {
        die("out of memory");
        goto out;
    }
    if (o.val[OPT_TRACE] && !(trace = osn_cli_output_open("sim", &outs[2])))
        goto out;
    for (int i = 0; i < sw.n; i++) {
        sc[i] = calloc(1, sizeof **sc);
        res[i] = calloc(1, sizeof **res);
        if (!sc[i] || !res[i]) {
            die("out of memory");
            goto out;
        }
        if (run_one(&o, &sw, i, trace, sc[i], res[i], &per_rep[i]) != 0)
            goto out;
    }
    if (write_results(&o, &sw, outs, NOUTS, sc, res, per_rep) != 0)
        goto out;
    status = 0;
out:
    osn_cli_outputs_abort(outs, NOUTS);
    for (int i = 0; i < sw.n; i++) {
        osn_net_scenario_release(sc ? sc[i] : NULL);
        free(sc ? sc[i] : NULL);
        osn_net_result_release(res ? res[i] : NULL);
        free(res ? res[i] : NULL);
        free(per_rep ? per_rep[i] : NULL);
    }
    free(sc);
    free(res);
    free(per_rep);
    free(o.sets);
    osn_study_mpi_finish(status); /* after the temporaries are gone: rank 0 failing aborts all */
    return status;
}

void osn_cmd_sim_net_usage(FILE *f)
{
    fputs("\n"
          "SIP network scenarios (a file with a [net] or [source] section):\n"
          "  osn sim NET.ini [--set SECTION.KEY=VALUE|LO:HI:STEP]... [--seed N]\n"
          "          [--replications N] [--threads N] [--json FILE|-] [--csv FILE|-]\n"
          "          [--trace FILE|-] [--trace-interval S] [--replications-out FILE|-] [-q] [-v]\n"
          "UAC sources, stateful proxies and a UAS over UDP links, message by message, with\n"
          "the RFC 3261 transactions of src/sip and the controllers of src/ctl hop by hop\n"
          "(server half at the core, client half at its upstream). A call is INVITE, 100,\n"
          "180, 200, ACK, a hold time, BYE, 200; it is good when its 200 reaches the UAC\n"
          "before Timer B (64*T1). One --set may be a range LO:HI:STEP: one run per value,\n"
          "JSON as an array, CSV one row per value. A [node] section (osn node's) is\n"
          "passed over; -v, --verbose names its keys on standard error.\n"
          "--trace FILE: CSV of replication 0 over time, warm-up included, one row per\n"
          "--trace-interval S [0.1] ending at t_s (units in the names): replication, t_s,\n"
          "offered_per_s, goodput_per_s, failed_timeout/rejected/other_per_s,\n"
          "sent_503_per_s (new requests an overload control answered 503),\n"
          "retrans_sent_per_s (copies sent, every element), core_new_per_s and\n"
          "core_retrans_per_s (as in retrans_ratio),\n"
          "setup_n and setup_mean_s/p50/p95/p99 (exact, the calls whose 180 came in the\n"
          "interval; empty without one), then at t_s each proxy's and the UAS's\n"
          "NAME_queue_msgs, core_mode, and with loss, rate or pi each gate's level\n"
          "(NAME_shed_percent, NAME_rate_limit_per_s, NAME_retrans_allowed_per_s). The rows\n"
          "after the warm-up add up to the estimates of a one-replication run.\n"
          "--replications-out FILE: CSV, one row per replication (per value of a sweep,\n"
          "the swept key first): replication, seed, stream (replication i runs on stream i\n"
          "of the seed), each measure from that replication alone, control, osn_version.\n"
          "The estimates pool the counts: a rate's or a time fraction's is the mean of the\n"
          "rows, a ratio's (delays, percentiles, retrans_ratio) weighs them by size.\n",
          f);
    fputs("Scenario keys (all of them with their meaning: docs/scenario.md), defaults in\n"
          "brackets:\n",
          f);
    osn_cli_net_keys(f);
    fputs("Output: offered, goodput, capacity, setup_delay_mean/p50/p95/p99, failed (by\n"
          "reason), retrans_ratio, admitted, admitted_failed, core_util, core_P0..P2,\n"
          "msg_rate, resp_delay_mean/p50/p95/p99 (INVITE -> first 100 Trying at the\n"
          "UAC), no_trying (calls ended without one, 1/s), core_overload (P1 + P2),\n"
          "core_T_ret (mean overload period, s), each with KEY_ci, then per element\n"
          "the messages processed by kind,\n"
          "dropped, util, queue_mean, invites_in, capacity.\n"
          "Example:\n"
          "  osn sim examples/collapse.ini --set control.kind=loss \\\n"
          "          --set source.rate=100:1500:200 --json -\n"
          "\n"
          "Provenance: JSON and CSV also carry control, detector, seed, replications and\n"
          "osn_version; JSON the scenario (keys set, and every key's value as run, under\n"
          "scenario.resolved); what the wall clock measured (wall_s, msgs_per_s, threads)\n"
          "is apart, under timing (CSV: timing.* columns, last): two runs with one seed\n"
          "differ only there.\n",
          f);
}
