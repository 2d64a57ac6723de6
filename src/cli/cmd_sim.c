/*
 * `osn sim`: discrete-event simulation of the hysteretic node.
 *
 * Thin like `osn solve`: parse the options, load the scenario with its [sim] section
 * (src/io/sim_scenario.c), apply --seed / --replications / --threads, run osn_sim_run(), print.
 * Output files are written to temporaries and renamed only after every output, standard output
 * included, was written; a failed run leaves no file and prints one line "osn sim: ..." with
 * exit status 2. While it runs, a progress line is kept on stderr when stderr is a terminal.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cmd_sim.h"
#include "osn/err.h"
#include "osn/io.h"
#include "osn/sim.h"
#include "osn/sim_scenario.h"

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
          "  --threads N              worker threads [1]; results do not depend on it\n"
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
          "KEY_ci, and replications, events, events_per_s; CSV the same as columns.\n"
          "The events (arrivals offered, departures, delayed notices) and events/s are\n"
          "printed too. Same seed, same numbers, whatever --threads is.\n"
          "\n"
          "Exit status: 0 on success; 2 on any error (bad scenario: the message names\n"
          "FILE:LINE or the flag, and the key; bad option; I/O failure).\n"
          "\n"
          "Example:\n"
          "  osn sim examples/sim_two_loop.ini --replications 20 --threads 2 --json -\n",
          f);
    osn_cmd_sim_net_usage(f);
}

/* Prints "osn sim: <message>" on stderr. Returns the error exit status. */
static int die(const char *fmt, ...)
{
    va_list ap;

    fputs("osn sim: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return OSN_EXIT_ERROR;
}

/* "--name VALUE" or "--name=VALUE" at argv[*i]: 1 with *value, 0 other option, -1 no value. */
static int opt_value(int argc, char **argv, int *i, const char *name, const char **value)
{
    const char *a = argv[*i];
    size_t n = strlen(name);

    if (strncmp(a, name, n) != 0)
        return 0;
    if (a[n] == '=') {
        *value = a + n + 1;
        return 1;
    }
    if (a[n] != '\0')
        return 0;
    if (*i + 1 >= argc)
        return -1;
    *value = argv[++*i];
    return 1;
}

static int parse_args(int argc, char **argv, struct sim_opts *o)
{
    static const char *const valued[] = {"--set",     "--seed", "--replications",
                                         "--threads", "--json", "--csv"};
    const char **slot[] = {NULL, &o->seed, &o->replications, &o->threads, &o->json, &o->csv};

    o->sets = malloc(sizeof *o->sets * (size_t)(argc > 0 ? argc : 1));
    if (!o->sets)
        return die("out of memory");
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        int r = 0;

        if (a[0] != '-' || strcmp(a, "-") == 0) {
            if (o->scenario)
                return die("more than one scenario file ('%s' and '%s')", o->scenario, a);
            o->scenario = a;
            continue;
        }
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            o->help = true;
            continue;
        }
        if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
            o->quiet = true;
            continue;
        }
        for (size_t k = 0; k < sizeof valued / sizeof valued[0] && r == 0; k++) {
            r = opt_value(argc, argv, &i, valued[k], &v);
            if (r < 0)
                return die("option '%s' needs a value (see 'osn sim --help')", valued[k]);
            if (r == 0)
                continue;
            if (k == 0)
                o->sets[o->nsets++] = v;
            else if (k >= 4 && !v[0])
                return die("option '%s' needs a file name (or - for stdout)", valued[k]);
            else
                *slot[k] = v;
        }
        if (r == 0)
            return die("unknown option '%s' (see 'osn sim --help')", a);
    }
    if (o->help)
        return 0;
    if (o->scenario && strcmp(o->scenario, "-") == 0)
        return die("reading the scenario from stdin is not supported; give a file");
    if (o->json && o->csv && strcmp(o->json, "-") != 0 && strcmp(o->json, o->csv) == 0)
        return die("'%s' is given for two outputs", o->json);
    return 0;
}

/* A whole number in [lo, hi] given to `flag`. */
static int flag_long(const char *flag, const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (!s[0] || *end || errno == ERANGE || v < lo || v > hi)
        return die("%s %s: expected a whole number in %ld .. %ld", flag, s, lo, hi);
    *out = v;
    return 0;
}

/* Progress line on stderr: "osn sim:  42%  3.1 s elapsed, about 4.3 s left". */
static void progress(double done, uint64_t events, double elapsed, void *arg)
{
    (void)events; /* counted per finished replication only: the fraction is finer */
    (void)arg;
    if (done > 1)
        done = 1;
    fprintf(stderr, "\rosn sim: %3.0f%%  %.1f s elapsed", 100 * done, elapsed);
    if (done > 0.02)
        fprintf(stderr, ", about %.0f s left ", elapsed * (1 - done) / done);
    fflush(stderr);
}

static bool is_file(const char *path)
{
    return path && strcmp(path, "-") != 0;
}

int osn_cmd_sim(int argc, char **argv)
{
    struct sim_opts o = {0};
    struct osn_sim_scenario *s = NULL;
    struct osn_sim_result res;
    struct osn_afile json = {0}, csv = {0};
    char err[1024];
    long v;
    int rc, status = OSN_EXIT_ERROR;

    err[0] = '\0';
    if (osn_cmd_sim_is_net(argc, argv)) /* the SIP network simulator: cmd_sim_net.c */
        return osn_cmd_sim_net(argc, argv);
    if (parse_args(argc, argv, &o) != 0)
        goto out;
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
    rc = osn_sim_scenario_load(s, o.scenario, o.sets, o.nsets, err, sizeof err);
    if (rc) {
        die("%s", err[0] ? err : osn_strerror(rc));
        goto out;
    }
    if (o.seed && flag_long("--seed", o.seed, 0, 0x7fffffffffffffffL, &v) != 0)
        goto out;
    if (o.seed)
        s->cfg.seed = (uint64_t)v;
    if (o.replications && flag_long("--replications", o.replications, 1, 100000, &v) != 0)
        goto out;
    if (o.replications)
        s->cfg.replications = (int)v;
    if (o.threads && flag_long("--threads", o.threads, 1, 256, &v) != 0)
        goto out;
    if (o.threads)
        s->cfg.threads = (int)v;
    if (osn_sim_scenario_check(s, err, sizeof err) != 0) {
        die("%s", err);
        goto out;
    }
    bool to_stdout = (o.json && !is_file(o.json)) || (o.csv && !is_file(o.csv));
    if (!o.quiet && isatty(STDERR_FILENO))
        s->cfg.progress = progress;

    rc = osn_sim_run(&s->sc.model, &s->cfg, &res, err, sizeof err);
    if (s->cfg.progress)
        fputs("\r\033[K", stderr);
    if (rc) {
        die("simulation failed: %s", err[0] ? err : osn_strerror(rc));
        goto out;
    }
    if (is_file(o.json)) {
        if (osn_afile_open(&json, o.json, err, sizeof err) != 0) {
            die("--json: %s", err);
            goto out;
        }
        if (osn_sim_report_json_write(json.f, s, &res, err, sizeof err) != 0) {
            die("--json %s: %s", o.json, err);
            goto out;
        }
    }
    if (is_file(o.csv)) {
        if (osn_afile_open(&csv, o.csv, err, sizeof err) != 0) {
            die("--csv: %s", err);
            goto out;
        }
        if (osn_sim_report_csv_write(csv.f, s, &res, err, sizeof err) != 0) {
            die("--csv %s: %s", o.csv, err);
            goto out;
        }
    }
    if (o.json && !is_file(o.json) && osn_sim_report_json_write(stdout, s, &res, err, sizeof err)) {
        die("--json -: %s", err);
        goto out;
    }
    if (o.csv && !is_file(o.csv) && osn_sim_report_csv_write(stdout, s, &res, err, sizeof err)) {
        die("--csv -: %s", err);
        goto out;
    }
    if (!o.quiet && !to_stdout)
        osn_sim_report_table(stdout, s, &res);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        die("cannot write to standard output: %s", strerror(errno));
        goto out;
    }
    if (is_file(o.json) && osn_afile_commit(&json, err, sizeof err) != 0) {
        die("--json: %s", err);
        goto out;
    }
    if (is_file(o.csv) && osn_afile_commit(&csv, err, sizeof err) != 0) {
        die("--csv: %s", err);
        goto out;
    }
    status = 0;
out:
    osn_afile_abort(&json);
    osn_afile_abort(&csv);
    if (s)
        osn_sim_scenario_release(s);
    free(s);
    free(o.sets);
    return status;
}
