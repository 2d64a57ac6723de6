/*
 * `osn sim NET.ini --compare KEY=A,B,...`: a paired comparison of network runs.
 *
 * Each value of KEY is one run of the scenario with the same seed and replications. The
 * simulator draws each purpose (arrivals, hold times, link losses, service times, the
 * controllers' randomness) from its own stream of the replication's seed (src/sim/net_run.c),
 * so replication i of every run offers the same calls: the runs differ only by what KEY
 * changes, and the per-replication differences to the first value have a far smaller variance
 * than the runs themselves. For each headline measure this reports the mean of those
 * differences with its paired 95% interval (t with replications - 1 degrees of freedom), and
 * beside it the interval an unpaired comparison of the same replications would give (Welch),
 * which is what the pairing buys.
 */
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cmd_sim.h"
#include "osn/err.h"
#include "osn/net_scenario.h"
#include "osn/stats.h"
#include "osn/version.h"
#include "outputs.h"

#define die(...)   osn_cli_die("sim", __VA_ARGS__)
#define MAX_VALUES 64

/* The measures compared, in output order. */
static const enum osn_net_measure measures[] = {OSN_NET_OFFERED,    OSN_NET_GOODPUT,
                                                OSN_NET_SETUP_MEAN, OSN_NET_SETUP_P99,
                                                OSN_NET_FAILED,     OSN_NET_RETRANS_RATIO};
#define NM (int)(sizeof measures / sizeof measures[0])

struct cmp_opts {
    const char *scenario, **sets, *compare, *seed, *reps, *threads, *json, *csv;
    int nsets;
    bool quiet, help;
};

/* One measure of one value against the first value. */
struct diff {
    double estimate, estimate_hw; /* the run's own estimate (pooled over its replications) */
    double mean, paired_hw, unpaired_hw;
    int n; /* replications where both runs have the measure */
};

struct cmp {
    char key[128];
    char *vals[MAX_VALUES];
    int nvals, reps;
    unsigned long long seed;
    double level;
    double *rep[MAX_VALUES]; /* per value: reps x OSN_NET_NMEASURES (osn_net_cfg.rep_measures) */
    struct diff d[MAX_VALUES][NM];
};

bool osn_cmd_sim_compare_wanted(int argc, char **argv)
{
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (strncmp(argv[i], "--compare", 9) == 0 && (argv[i][9] == '\0' || argv[i][9] == '='))
            return true;
    return false;
}

/* KEY=A,B,...: at least two non-empty values; the key must not be one that all runs share. */
static int parse_compare(const char *spec, struct cmp *c)
{
    const char *eq = strchr(spec, '=');
    if (!eq || eq == spec || (size_t)(eq - spec) >= sizeof c->key)
        return die("--compare %s: expected KEY=A,B,... (e.g. control.kind=loss,rate)", spec);
    snprintf(c->key, sizeof c->key, "%.*s", (int)(eq - spec), spec);
    if (strcmp(c->key, "net.seed") == 0 || strcmp(c->key, "net.replications") == 0)
        return die("--compare %s: the runs compared share their seed and replications; compare "
                   "another key",
                   c->key);
    for (const char *p = eq + 1;;) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        if (n == 0)
            return die("--compare %s: an empty value", spec);
        if (c->nvals == MAX_VALUES)
            return die("--compare %s: at most %d values", spec, MAX_VALUES);
        if (!(c->vals[c->nvals++] = strndup(p, n)))
            return die("out of memory");
        if (!comma)
            break;
        p = comma + 1;
    }
    if (c->nvals < 2)
        return die("--compare %s: give at least two values, the first being the reference", spec);
    return 0;
}

/* A --set that would make a study or hide the compared key is refused: it would do nothing. */
static int check_sets(const struct cmp_opts *o, const struct cmp *c)
{
    for (int i = 0; i < o->nsets; i++) {
        const char *s = o->sets[i], *eq = strchr(s, '=');
        double lo, hi, st;
        char tail;
        if (eq && sscanf(eq + 1, "%lf:%lf:%lf%c", &lo, &hi, &st, &tail) == 3)
            return die("--set %s: --compare runs single points; a range is a study (drop "
                       "--compare, or give one value)",
                       s);
        if (eq && (size_t)(eq - s) == strlen(c->key) && strncmp(s, c->key, strlen(c->key)) == 0)
            return die("--set %s: %s is the key --compare varies", s, c->key);
    }
    return 0;
}

/* Loads and checks the run of value v (sets + "KEY=value"), applies the options. */
static int load(struct cmp_opts *o, const struct cmp *c, int v, struct osn_net_scenario *sc)
{
    char err[1024] = "", set[512];
    long x;
    snprintf(set, sizeof set, "%s=%s", c->key, c->vals[v]);
    o->sets[o->nsets] = set;
    int rc = osn_net_scenario_load(sc, o->scenario, o->sets, o->nsets + 1, err, sizeof err);
    if (rc)
        return die("--compare %s: %s", set, err[0] ? err : osn_strerror(rc));
    if (o->seed) {
        if (osn_cli_long("sim", "--seed", o->seed, 0, 0x7fffffffffffffffL, &x) != 0)
            return OSN_EXIT_ERROR;
        sc->cfg.seed = (uint64_t)x;
    }
    if (o->reps) {
        if (osn_cli_long("sim", "--replications", o->reps, 1, 100000, &x) != 0)
            return OSN_EXIT_ERROR;
        sc->cfg.replications = (int)x;
    }
    sc->cfg.threads = osn_cli_threads_default();
    if (o->threads) {
        if (osn_cli_long("sim", "--threads", o->threads, 1, 256, &x) != 0)
            return OSN_EXIT_ERROR;
        sc->cfg.threads = (int)x;
    }
    if (sc->cfg.replications < 2)
        return die("--compare needs 2 replications or more for its intervals (net.replications "
                   "is %d; give --replications)",
                   sc->cfg.replications);
    if (osn_net_scenario_check(sc, err, sizeof err) != 0)
        return die("--compare %s: %s", set, err);
    return 0;
}

/* The paired and unpaired comparison of measure k between value v and value 0. */
static void compare_measure(struct cmp *c, int v, int m, const struct osn_net_result *res)
{
    struct diff *d = &c->d[v][m];
    struct osn_welford dw = {0}, aw = {0}, bw = {0};
    int k = measures[m];
    for (int i = 0; i < c->reps; i++) {
        double a = c->rep[0][(size_t)i * OSN_NET_NMEASURES + (size_t)k];
        double b = c->rep[v][(size_t)i * OSN_NET_NMEASURES + (size_t)k];
        if (!isfinite(a) || !isfinite(b))
            continue;
        osn_welford_add(&dw, b - a);
        osn_welford_add(&aw, a);
        osn_welford_add(&bw, b);
    }
    d->estimate = res->est[k].value;
    d->estimate_hw = res->est[k].hw;
    d->n = (int)dw.n;
    d->mean = dw.n ? dw.mean : NAN;
    d->paired_hw = osn_welford_halfwidth(&dw, c->level);
    /* Welch: the two runs' variances with the Welch-Satterthwaite degrees of freedom. */
    double n = (double)dw.n, va = osn_welford_var(&aw) / n, vb = osn_welford_var(&bw) / n;
    double df = (va + vb) * (va + vb) / ((va * va + vb * vb) / (n - 1));
    double q = osn_stats_t_quantile(0.5 + c->level / 2, df > 0 ? df : n - 1);
    d->unpaired_hw = dw.n >= 2 ? (va + vb > 0 ? q * sqrt(va + vb) : 0) : NAN;
    if (v == 0) {
        d->mean = 0;
        d->paired_hw = d->unpaired_hw = NAN;
    }
}

static json_t *num(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}

static int w_json(FILE *f, const void *ctx, char *err, size_t errsize)
{
    const struct cmp *c = ctx;
    json_t *arr = json_array();
    for (int v = 0; arr && v < c->nvals; v++) {
        json_t *o = json_object();
        json_object_set_new(o, "compare_key", json_string(c->key));
        json_object_set_new(o, "compare_value", json_string(c->vals[v]));
        json_object_set_new(o, "reference", json_string(c->vals[0]));
        json_object_set_new(o, "seed", json_integer((json_int_t)c->seed));
        json_object_set_new(o, "replications", json_integer(c->reps));
        json_object_set_new(o, "level", json_real(c->level));
        for (int m = 0; m < NM; m++) {
            const struct diff *d = &c->d[v][m];
            const char *key = osn_net_measure_key(measures[m]);
            char k[96];
            json_object_set_new(o, key, num(d->estimate));
            snprintf(k, sizeof k, "%s_ci", key);
            json_object_set_new(o, k, num(d->estimate_hw));
            snprintf(k, sizeof k, "%s_diff", key);
            json_object_set_new(o, k, num(d->mean));
            snprintf(k, sizeof k, "%s_diff_ci", key);
            json_object_set_new(o, k, num(d->paired_hw));
            snprintf(k, sizeof k, "%s_diff_ci_unpaired", key);
            json_object_set_new(o, k, num(d->unpaired_hw));
            snprintf(k, sizeof k, "%s_diff_n", key);
            json_object_set_new(o, k, json_integer(d->n));
        }
        json_object_set_new(o, "osn_version", json_string(osn_version()));
        json_array_append_new(arr, o);
    }
    int rc = arr && json_dumpf(arr, f, JSON_INDENT(2) | JSON_REAL_PRECISION(10)) == 0 ? 0 : -1;
    json_decref(arr);
    if (rc || fputc('\n', f) == EOF) {
        snprintf(err, errsize, "cannot write the JSON");
        return OSN_EIO;
    }
    return 0;
}

static void csv_num(FILE *f, double x)
{
    if (isfinite(x))
        fprintf(f, ",%.10g", x);
    else
        fputs(",", f);
}

/* A value in a CSV field, quoted when it holds a comma, a quote or a line break. */
static void csv_str(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static int w_csv(FILE *f, const void *ctx, char *err, size_t errsize)
{
    const struct cmp *c = ctx;
    fputs("compare_key,compare_value,reference,seed,replications,level", f);
    for (int m = 0; m < NM; m++) {
        const char *k = osn_net_measure_key(measures[m]);
        fprintf(f, ",%s,%s_ci,%s_diff,%s_diff_ci,%s_diff_ci_unpaired,%s_diff_n", k, k, k, k, k, k);
    }
    fputs(",osn_version\n", f);
    for (int v = 0; v < c->nvals; v++) {
        csv_str(f, c->key);
        fputc(',', f);
        csv_str(f, c->vals[v]);
        fputc(',', f);
        csv_str(f, c->vals[0]);
        fprintf(f, ",%llu,%d,%g", c->seed, c->reps, c->level);
        for (int m = 0; m < NM; m++) {
            const struct diff *d = &c->d[v][m];
            csv_num(f, d->estimate);
            csv_num(f, d->estimate_hw);
            csv_num(f, d->mean);
            csv_num(f, d->paired_hw);
            csv_num(f, d->unpaired_hw);
            fprintf(f, ",%d", d->n);
        }
        fprintf(f, ",%s\n", osn_version());
    }
    if (ferror(f)) {
        snprintf(err, errsize, "cannot write the CSV");
        return OSN_EIO;
    }
    return 0;
}

static void print_table(const struct cmp *c)
{
    printf("compare %s: %d values, %d replications each, seed %llu, common random numbers\n"
           "(diff: the mean of the per-replication differences to %s, with its paired %g%% "
           "interval;\n unpaired: the Welch interval of the same replications taken as "
           "independent)\n",
           c->key, c->nvals, c->reps, c->seed, c->vals[0], 100 * c->level);
    for (int m = 0; m < NM; m++) {
        enum osn_net_measure k = measures[m];
        printf("\n  %s (%s)\n    %-16s %12s %10s %12s %12s %12s\n", osn_net_measure_key(k),
               osn_net_measure_unit(k)[0] ? osn_net_measure_unit(k) : "-", c->key, "estimate", "+-",
               "diff", "paired +-", "unpaired +-");
        for (int v = 0; v < c->nvals; v++) {
            const struct diff *d = &c->d[v][m];
            printf("    %-16s %12.6g %10.3g", c->vals[v], d->estimate, d->estimate_hw);
            if (v == 0)
                printf(" %12s\n", "(reference)");
            else
                printf(" %+12.6g %12.3g %12.3g\n", d->mean, d->paired_hw, d->unpaired_hw);
        }
    }
}

static int parse_args(int argc, char **argv, struct cmp_opts *o)
{
    struct osn_cli_opt opts[] = {{"--quiet", "-q", OSN_CLI_FLAG, &o->quiet},
                                 {"--compare", NULL, OSN_CLI_VALUE, &o->compare},
                                 {"--seed", NULL, OSN_CLI_VALUE, &o->seed},
                                 {"--replications", NULL, OSN_CLI_VALUE, &o->reps},
                                 {"--threads", NULL, OSN_CLI_VALUE, &o->threads},
                                 {"--json", NULL, OSN_CLI_OUTPUT, &o->json},
                                 {"--csv", NULL, OSN_CLI_OUTPUT, &o->csv},
                                 {NULL, NULL, 0, NULL}};
    struct osn_cli_args a = {0};
    int rc = osn_cli_parse("sim", argc, argv, opts, 1, &a);
    o->scenario = a.scenario;
    o->sets = a.sets;
    o->nsets = a.nsets;
    o->help = a.help;
    return rc;
}

int osn_cmd_sim_compare(int argc, char **argv)
{
    struct cmp_opts o = {0};
    struct cmp *c = calloc(1, sizeof *c);
    struct osn_net_scenario *sc = calloc(1, sizeof *sc);
    struct osn_net_result *res = calloc(1, sizeof *res);
    struct osn_cli_output outs[] = {{"--json", NULL, w_json, {0}}, {"--csv", NULL, w_csv, {0}}};
    int status = OSN_EXIT_ERROR;

    if (!c || !sc || !res) {
        die("out of memory");
        goto out;
    }
    if (parse_args(argc, argv, &o) != 0)
        goto out;
    if (o.help) {
        osn_cmd_sim_usage(stdout);
        status = 0;
        goto out;
    }
    outs[0].path = o.json, outs[1].path = o.csv;
    if (!o.scenario) {
        die("--compare needs a network scenario file");
        goto out;
    }
    if (parse_compare(o.compare, c) != 0 || check_sets(&o, c) != 0)
        goto out;
    /* Every value is loaded and checked before any runs: a bad value costs no simulation. */
    for (int v = 0; v < c->nvals; v++)
        if (load(&o, c, v, sc) != 0)
            goto out;
    for (int v = 0; v < c->nvals; v++) {
        char err[1024] = "";
        if (load(&o, c, v, sc) != 0)
            goto out;
        c->reps = sc->cfg.replications;
        c->seed = (unsigned long long)sc->cfg.seed;
        c->level = sc->cfg.level;
        if (!(c->rep[v] = calloc((size_t)c->reps * OSN_NET_NMEASURES, sizeof(double)))) {
            die("out of memory");
            goto out;
        }
        sc->cfg.rep_measures = c->rep[v];
        if (!o.quiet && isatty(STDERR_FILENO))
            fprintf(stderr, "osn sim: --compare %s=%s (%d of %d)\n", c->key, c->vals[v], v + 1,
                    c->nvals);
        int rc = osn_net_run(&sc->cfg, res, err, sizeof err);
        if (rc) {
            die("--compare %s=%s: simulation failed: %s", c->key, c->vals[v],
                err[0] ? err : osn_strerror(rc));
            goto out;
        }
        for (int m = 0; m < NM; m++)
            compare_measure(c, v, m, res);
    }
    if (osn_cli_outputs_write("sim", outs, 2, c) != 0)
        goto out;
    if (!o.quiet && !osn_cli_outputs_to_stdout(outs, 2))
        print_table(c);
    if (osn_cli_stdout_done("sim") != 0 || osn_cli_outputs_commit("sim", outs, 2) != 0)
        goto out;
    status = 0;
out:
    osn_cli_outputs_abort(outs, 2);
    for (int v = 0; c && v < c->nvals; v++) {
        free(c->vals[v]);
        free(c->rep[v]);
    }
    free(c);
    free(sc);
    free(res);
    free(o.sets);
    return status;
}

void osn_cmd_sim_compare_usage(FILE *f)
{
    fputs("\n"
          "Paired comparison (network scenarios):\n"
          "  osn sim NET.ini --compare KEY=A,B,... [--set ...] [--seed N] [--replications N]\n"
          "          [--threads N] [--json FILE|-] [--csv FILE|-] [-q]\n"
          "Runs the scenario once per value of KEY with the same seed and replications. Each\n"
          "replication draws arrivals, hold times, link losses, service times and the\n"
          "controllers' randomness from streams of its own, so replication i offers the same\n"
          "calls in every run (common random numbers). For offered, goodput, setup delay\n"
          "(mean, p99), failed and retrans_ratio: each run's estimate, and the mean of the\n"
          "per-replication differences to the first value (KEY_diff) with its paired 95%\n"
          "interval (KEY_diff_ci, t with replications - 1 degrees of freedom) and, to show\n"
          "what the pairing gains, the Welch interval of the same replications taken as\n"
          "independent (KEY_diff_ci_unpaired). Needs 2 replications or more; no --set range.\n"
          "Example:\n"
          "  osn sim examples/collapse.ini --compare control.kind=loss,rate --replications 8\n",
          f);
}
