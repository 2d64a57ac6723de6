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
#include "outputs.h"

#define MAX_SWEEP 1000

static const char *const valued[] = {"--set",  "--seed", "--replications", "--threads",
                                     "--json", "--csv",  "--trace",        "--trace-interval"};
#define NVALUED (sizeof valued / sizeof valued[0])

struct net_opts {
    const char *scenario;
    const char **sets;
    int nsets;
    const char *val[NVALUED]; /* by index of valued[], 0 unused */
    bool quiet, help;
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
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        int k = valued_index(a, &v);
        if (k >= 0) {
            if (!v && i + 1 < argc)
                v = argv[++i];
            if (k == 0 && v && (strncmp(v, "net.", 4) == 0 || strncmp(v, "source.", 7) == 0))
                return true;
            if (k >= 6) /* --trace, --trace-interval exist only here */
                return true;
            continue;
        }
        if (a[0] != '-' && osn_net_scenario_sniff(a))
            return true;
    }
    return false;
}

static int parse_args(int argc, char **argv, struct net_opts *o)
{
    struct osn_cli_opt opts[NVALUED + 1] = {{"--quiet", "-q", OSN_CLI_FLAG, &o->quiet}};
    int n = 1;
    for (size_t k = 1; k < NVALUED; k++) { /* valued[0] is --set, handled by osn_cli_parse */
        bool out = strcmp(valued[k], "--json") == 0 || strcmp(valued[k], "--csv") == 0 ||
                   strcmp(valued[k], "--trace") == 0;
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

/* A --set "KEY=LO:HI:STEP": fills the key, the values and their count; 0 when none. */
static int find_sweep(const struct net_opts *o, int *which, char *key, size_t keysize, double *vals,
                      int *nvals)
{
    *which = -1;
    for (int i = 0; i < o->nsets; i++) {
        const char *eq = strchr(o->sets[i], '=');
        double lo, hi, st;
        char tail;
        if (!eq || sscanf(eq + 1, "%lf:%lf:%lf%c", &lo, &hi, &st, &tail) != 3)
            continue;
        if (*which >= 0)
            return die("only one --set may be a range");
        if (!(st > 0) || !(hi >= lo) || (hi - lo) / st > MAX_SWEEP)
            return die("--set %s: a range is LO:HI:STEP with STEP > 0, HI >= LO, at most %d "
                       "values",
                       o->sets[i], MAX_SWEEP);
        *which = i;
        snprintf(key, keysize, "%.*s", (int)(eq - o->sets[i]), o->sets[i]);
        *nvals = 0;
        for (int k = 0; lo + k * st <= hi * (1 + 1e-12) + 1e-12; k++)
            vals[(*nvals)++] = lo + k * st;
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

int osn_cmd_sim_net(int argc, char **argv)
{
    struct net_opts o = {0};
    struct osn_net_scenario **sc = NULL;
    struct osn_net_result **res = NULL;
    /* --trace is written while replication 0 runs (no writer), the others after. */
    struct osn_cli_output outs[] = {{"--json", NULL, w_json, {0}},
                                    {"--csv", NULL, w_csv, {0}},
                                    {"--trace", NULL, NULL, {0}}};
    FILE *trace = NULL;
    char err[1024], key[64] = "", setbuf[320];
    double vals[MAX_SWEEP + 1];
    int nvals = 1, which = -1, status = OSN_EXIT_ERROR, n = 0;
    long v;

    if (parse_args(argc, argv, &o) != 0)
        goto out;
    outs[0].path = o.val[4], outs[1].path = o.val[5], outs[2].path = o.val[6];
    if (o.help) {
        osn_cmd_sim_usage(stdout);
        status = 0;
        goto out;
    }
    if (find_sweep(&o, &which, key, sizeof key, vals, &nvals) != 0)
        goto out;
    if (which >= 0 && o.val[6]) {
        die("--trace with a swept key: give one value");
        goto out;
    }
    sc = calloc((size_t)nvals, sizeof *sc);
    res = calloc((size_t)nvals, sizeof *res);
    if (!sc || !res) {
        die("out of memory");
        goto out;
    }
    if (o.val[6] && !(trace = osn_cli_output_open("sim", &outs[2])))
        goto out;
    for (n = 0; n < nvals;) {
        const char *saved = which >= 0 ? o.sets[which] : NULL;
        if (which >= 0) {
            snprintf(setbuf, sizeof setbuf, "%s=%.10g", key, vals[n]);
            o.sets[which] = setbuf;
        }
        sc[n] = calloc(1, sizeof **sc);
        res[n] = calloc(1, sizeof **res);
        if (!sc[n] || !res[n]) {
            free(sc[n]);
            free(res[n]);
            die("out of memory");
            goto out;
        }
        int rc = osn_net_scenario_load(sc[n], o.scenario, o.sets, o.nsets, err, sizeof err);
        if (which >= 0)
            o.sets[which] = saved;
        n++;
        if (rc) {
            die("%s", err[0] ? err : osn_strerror(rc));
            goto out;
        }
        struct osn_net_cfg *c = &sc[n - 1]->cfg;
        if (o.val[1] && osn_cli_long("sim", "--seed", o.val[1], 0, 0x7fffffffffffffffL, &v) != 0)
            goto out;
        if (o.val[1])
            c->seed = (uint64_t)v;
        if (o.val[2] && osn_cli_long("sim", "--replications", o.val[2], 1, 100000, &v) != 0)
            goto out;
        if (o.val[2])
            c->replications = (int)v;
        if (o.val[3] && osn_cli_long("sim", "--threads", o.val[3], 1, 256, &v) != 0)
            goto out;
        c->threads = o.val[3] ? (int)v : osn_cli_threads_default();
        if (o.val[6]) {
            c->trace = trace;
            if (c->trace_interval <= 0)
                c->trace_interval = 0.1;
        }
        if (o.val[7]) {
            char *end;
            c->trace_interval = strtod(o.val[7], &end);
            if (*end || !(c->trace_interval > 0)) {
                die("--trace-interval %s: expected seconds > 0", o.val[7]);
                goto out;
            }
        }
        if (osn_net_scenario_check(sc[n - 1], err, sizeof err) != 0) {
            die("%s", err);
            goto out;
        }
        struct sweep_at at = {n - 1, nvals, key, vals[n - 1]};
        if (!o.quiet && isatty(STDERR_FILENO)) {
            c->progress = progress;
            c->progress_arg = &at;
        }
        rc = osn_net_run(c, res[n - 1], err, sizeof err);
        if (c->progress)
            fputs("\r\033[K", stderr);
        if (rc) {
            die("simulation failed: %s", err[0] ? err : osn_strerror(rc));
            goto out;
        }
    }
    struct net_out ctx = {(const struct osn_net_scenario *const *)sc,
                          (const struct osn_net_result *const *)res, n, which >= 0 ? key : NULL};
    if (osn_cli_outputs_write("sim", outs, 3, &ctx) != 0)
        goto out;
    if (!o.quiet && !osn_cli_outputs_to_stdout(outs, 3)) {
        if (which < 0) {
            osn_net_report_table(stdout, sc[0], res[0]);
        } else {
            printf("sweep of %s (%d values)\n\n  %12s %10s %10s %10s %10s %10s %10s\n", key, n, key,
                   "offered", "goodput", "capacity", "failed", "setup_mean", "retrans");
            for (int i = 0; i < n; i++)
                printf("  %12.6g %10.4g %10.4g %10.4g %10.4g %10.4g %10.4g\n", vals[i],
                       res[i]->est[OSN_NET_OFFERED].value, res[i]->est[OSN_NET_GOODPUT].value,
                       res[i]->est[OSN_NET_CAPACITY].value, res[i]->est[OSN_NET_FAILED].value,
                       res[i]->est[OSN_NET_SETUP_MEAN].value,
                       res[i]->est[OSN_NET_RETRANS_RATIO].value);
        }
    }
    if (osn_cli_stdout_done("sim") != 0 || osn_cli_outputs_commit("sim", outs, 3) != 0)
        goto out;
    status = 0;
out:
    osn_cli_outputs_abort(outs, 3);
    for (int i = 0; i < n; i++) {
        free(sc[i]);
        free(res[i]);
    }
    free(sc);
    free(res);
    free(o.sets);
    return status;
}

void osn_cmd_sim_net_usage(FILE *f)
{
    fputs("\n"
          "SIP network scenarios (a file with a [net] or [source] section):\n"
          "  osn sim NET.ini [--set SECTION.KEY=VALUE|LO:HI:STEP]... [--seed N]\n"
          "          [--replications N] [--threads N] [--json FILE|-] [--csv FILE|-]\n"
          "          [--trace FILE|-] [--trace-interval S] [-q]\n"
          "UAC sources, stateful proxies and a UAS over UDP links, message by message, with\n"
          "the RFC 3261 transactions of src/sip and the controllers of src/ctl hop by hop\n"
          "(server half at the core, client half at its upstream). A call is INVITE, 100,\n"
          "180, 200, ACK, a hold time, BYE, 200; it is good when its 200 reaches the UAC\n"
          "before Timer B (64*T1). One --set may be a range LO:HI:STEP: one run per value,\n"
          "JSON as an array, CSV one row per value. --trace writes t, core queue, core mode,\n"
          "offered and good calls/s, control level every --trace-interval s (0.1), from\n"
          "replication 0.\n"
          "  [net]      topology collapse|tandem|fanin [collapse], edges (fanin) [1],\n"
          "             time [20], warmup [10] (>= 33 s to see Timer B failures in the\n"
          "             window), replications [4], seed [1], level [0.95], trace_interval\n"
          "  [source]   rate calls/s [300], process poisson|mmpp|profile, mmpp_rates R0 R1,\n"
          "             mmpp_switch S01 S10, steps 'T RATE, T RATE ...' (profile), burst_start,\n"
          "             burst_length, burst_factor, hold (mean, exponential) [5]\n"
          "  [server core] [server edge] [server uas]  cost_invite cost_retrans\n"
          "             cost_response cost_ack cost_bye cost_reject (CPU s; 0: not queued),\n"
          "             cost_law det|exp, buffer (messages) [500]. Core defaults 1, 0.5,\n"
          "             0.3, 0.3, 0.5, 0.3 ms (capacity 370 calls/s), edge and UAS 20x less.\n"
          "             capacity = 1 / (invite + ack + bye + n_resp * response), n_resp = 3\n"
          "             at the core, 4 at an edge.\n"
          "  [link access] [link trunk] [link uas]  delay (s) [0.005], loss [0]\n"
          "  [control]  kind none|local|loss|rate|prsm|pi, detector hysteretic|occupancy|\n"
          "             delay, l1 h1 l2 h2, policy I|II, window, alpha, retry_after,\n"
          "             reject_when_full, prsm_responses yes|no [yes], reject_overload,\n"
          "             target, validity, interval, max_loss, cat1, tau_factor, min_rate,\n"
          "             release, pi_measure rrrc|rtd,\n"
          "             pi_target, kp, ki, pi_interval (defaults: osn/ctl.h)\n"
          "  [sip]      t1 [0.5] t2 [4] t4 [5] timer_d [32], client_mode rfc|sipp,\n"
          "             rfc6026 yes|no\n"
          "Output: offered, goodput, capacity, setup_delay_mean/p50/p95/p99, failed (by\n"
          "reason), retrans_ratio, admitted, admitted_failed, core_util, core_P0..P2,\n"
          "msg_rate, each with KEY_ci, then per element the messages processed by kind,\n"
          "dropped, util, queue_mean, invites_in, capacity.\n"
          "Example:\n"
          "  osn sim examples/collapse.ini --set control.kind=loss \\\n"
          "          --set source.rate=100:1500:200 --json -\n",
          f);
}
