/*
 * `osn sim SCENARIO.ini --compare KEY=A,B,...`: a paired comparison of simulation runs, of the
 * network or of the node.
 *
 * Each value of KEY is one run of the scenario with the same seed and replications. The
 * simulators draw each purpose (arrivals, hold times, link losses, service times, the
 * controllers' randomness) from its own stream of the replication's seed (src/sim/net_run.c,
 * src/sim/hysteretic.c), so replication i of every run is offered the same arrivals: the runs
 * differ only by what KEY
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
#include "osn/sim.h"
#include "osn/sim_scenario.h"
#include "osn/stats.h"
#include "osn/study_mpi.h"
#include "osn/version.h"
#include "outputs.h"

#define die(...)   osn_cli_die("sim", __VA_ARGS__)
#define MAX_VALUES 64

/* The measures compared, in output order: the network's, and the node's. The network's end
 * with the core's overload measures (the papers' "time in overload mode" P1 + P2, the mean
 * overload period, and the two modes apart), paired like goodput. */
#define NM_NET  10
#define NM_NODE 6
#define NM      NM_NET /* the longer list */
static const int net_measures[NM_NET] = {
        OSN_NET_OFFERED, OSN_NET_GOODPUT,       OSN_NET_SETUP_MEAN,    OSN_NET_SETUP_P99,
        OSN_NET_FAILED,  OSN_NET_RETRANS_RATIO, OSN_NET_CORE_OVERLOAD, OSN_NET_CORE_TRET,
        OSN_NET_CORE_P1, OSN_NET_CORE_P2};
static const int node_measures[NM_NODE] = {OSN_SIM_P0,    OSN_SIM_P1,    OSN_SIM_P2,
                                           OSN_SIM_T_RET, OSN_SIM_THETA, OSN_SIM_THROUGHPUT};

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
    bool node;       /* the queue simulator (else the network) */
    const int *meas; /* net_measures or node_measures */
    int nm;          /* their number */
    int stride;      /* measures per replication in rep[]: OSN_NET_ or OSN_SIM_NMEASURES */
    char key[128];
    char *vals[MAX_VALUES];
    int nvals, reps;
    unsigned long long seed;
    double level;
    double *rep[MAX_VALUES]; /* per value: reps x stride (the cfg's rep_measures) */
    struct diff d[MAX_VALUES][NM];
    const struct osn_split *split; /* under mpirun: each value's replications shared */
};

static const char *measure_key(const struct cmp *c, int m)
{
    return c->node ? osn_sim_measure_key((enum osn_sim_measure)c->meas[m])
                   : osn_net_measure_key((enum osn_net_measure)c->meas[m]);
}

static const char *measure_unit(const struct cmp *c, int m)
{
    const char *u = c->node ? osn_sim_measure_unit((enum osn_sim_measure)c->meas[m])
                            : osn_net_measure_unit((enum osn_net_measure)c->meas[m]);
    return u && u[0] ? u : "-";
}

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
    if (strcmp(c->key, "net.seed") == 0 || strcmp(c->key, "net.replications") == 0 ||
        strcmp(c->key, "sim.seed") == 0 || strcmp(c->key, "sim.replications") == 0)
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

/* The scenario of one run: the network's or the node's (loaded again for each value). */
struct run_state {
    struct osn_net_scenario *net;
    struct osn_net_result *net_res;
    struct osn_sim_scenario *node;
    bool node_loaded;
    struct osn_sim_result node_res;
};

/* --seed, --replications and --threads into the run's settings. */
static int apply_options(const struct cmp_opts *o, uint64_t *seed, int *reps, int *threads)
{
    long x;
    if (o->seed) {
        if (osn_cli_long("sim", "--seed", o->seed, 0, 0x7fffffffffffffffL, &x) != 0)
            return OSN_EXIT_ERROR;
        *seed = (uint64_t)x;
    }
    if (o->reps) {
        if (osn_cli_long("sim", "--replications", o->reps, 1, 100000, &x) != 0)
            return OSN_EXIT_ERROR;
        *reps = (int)x;
    }
    *threads = osn_cli_threads_default();
    if (o->threads) {
        if (osn_cli_long("sim", "--threads", o->threads, 1, 256, &x) != 0)
            return OSN_EXIT_ERROR;
        *threads = (int)x;
    }
    if (*reps < 2)
        return die("--compare needs 2 replications or more for its intervals (the scenario has "
                   "%d; give --replications)",
                   *reps);
    return 0;
}

/* Loads and checks the run of value v (sets + "KEY=value"), applies the options. */
static int load(struct cmp_opts *o, struct cmp *c, int v, struct run_state *st)
{
    char err[1024] = "", set[512];
    int rc;
    snprintf(set, sizeof set, "%s=%s", c->key, c->vals[v]);
    o->sets[o->nsets] = set;
    if (c->node) {
        if (st->node_loaded)
            osn_sim_scenario_release(st->node);
        st->node_loaded = false;
        rc = osn_sim_scenario_load(st->node, o->scenario, o->sets, o->nsets + 1, err, sizeof err);
        if (rc)
            return die("--compare %s: %s", set, err[0] ? err : osn_strerror(rc));
        st->node_loaded = true;
        struct osn_sim_cfg *k = &st->node->cfg;
        if (apply_options(o, &k->seed, &k->replications, &k->threads) != 0)
            return OSN_EXIT_ERROR;
        if (osn_sim_scenario_check(st->node, err, sizeof err) != 0 ||
            osn_sim_scenario_check_cost(st->node, err, sizeof err) != 0)
            return die("--compare %s: %s", set, err);
        c->seed = (unsigned long long)k->seed;
        c->reps = k->replications;
        c->level = k->level;
        return 0;
    }
    osn_net_scenario_release(st->net); /* the value before's */
    rc = osn_net_scenario_load(st->net, o->scenario, o->sets, o->nsets + 1, err, sizeof err);
    if (rc)
        return die("--compare %s: %s", set, err[0] ? err : osn_strerror(rc));
    struct osn_net_cfg *k = &st->net->cfg;
    if (apply_options(o, &k->seed, &k->replications, &k->threads) != 0)
        return OSN_EXIT_ERROR;
    if (osn_net_scenario_check(st->net, err, sizeof err) != 0)
        return die("--compare %s: %s", set, err);
    c->seed = (unsigned long long)k->seed;
    c->reps = k->replications;
    c->level = k->level;
    return 0;
}

/* Runs the loaded value v, its replications' measures into c->rep[v]; 0 or not 0 with err. */
static int run(struct cmp *c, int v, struct run_state *st, char *err, size_t errsize)
{
    if (c->node) {
        st->node->cfg.rep_measures = c->rep[v];
        st->node->cfg.split = c->split;
        return osn_sim_run(&st->node->sc.model, &st->node->cfg, &st->node_res, err, errsize);
    }
    st->net->cfg.rep_measures = c->rep[v];
    st->net->cfg.split = c->split;
    osn_net_result_release(st->net_res); /* the value before's */
    return osn_net_run(&st->net->cfg, st->net_res, err, errsize);
}

/* The run's own estimate of measure m and its half-width. */
static void estimate_of(const struct cmp *c, const struct run_state *st, int m, double *value,
                        double *hw)
{
    int k = c->meas[m];
    *value = c->node ? st->node_res.est[k].value : st->net_res->est[k].value;
    *hw = c->node ? st->node_res.est[k].hw : st->net_res->est[k].hw;
}

/* The paired and unpaired comparison of measure k between value v and value 0. */
static void compare_measure(struct cmp *c, int v, int m, const struct run_state *st)
{
    struct diff *d = &c->d[v][m];
    struct osn_welford dw = {0}, aw = {0}, bw = {0};
    int k = c->meas[m];
    for (int i = 0; i < c->reps; i++) {
        double a = c->rep[0][(size_t)i * (size_t)c->stride + (size_t)k];
        double b = c->rep[v][(size_t)i * (size_t)c->stride + (size_t)k];
        if (!isfinite(a) || !isfinite(b))
            continue;
        osn_welford_add(&dw, b - a);
        osn_welford_add(&aw, a);
        osn_welford_add(&bw, b);
    }
    estimate_of(c, st, m, &d->estimate, &d->estimate_hw);
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
        for (int m = 0; m < c->nm; m++) {
            const struct diff *d = &c->d[v][m];
            const char *key = measure_key(c, m);
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

static int w_csv(FILE *f, const void *ctx, char *err, size_t errsize)
{
    const struct cmp *c = ctx;
    fputs("compare_key,compare_value,reference,seed,replications,level", f);
    for (int m = 0; m < c->nm; m++) {
        const char *k = measure_key(c, m);
        fprintf(f, ",%s,%s_ci,%s_diff,%s_diff_ci,%s_diff_ci_unpaired,%s_diff_n", k, k, k, k, k, k);
    }
    fputs(",osn_version\n", f);
    for (int v = 0; v < c->nvals; v++) {
        osn_cli_csv_field(f, c->key);
        fputc(',', f);
        osn_cli_csv_field(f, c->vals[v]);
        fputc(',', f);
        osn_cli_csv_field(f, c->vals[0]);
        fprintf(f, ",%llu,%d,%g", c->seed, c->reps, c->level);
        for (int m = 0; m < c->nm; m++) {
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
    for (int m = 0; m < c->nm; m++) {
        printf("\n  %s (%s)\n    %-16s %12s %10s %12s %12s %12s\n", measure_key(c, m),
               measure_unit(c, m), c->key, "estimate", "+-", "diff", "paired +-", "unpaired +-");
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

int osn_cmd_sim_compare(int argc, char **argv, bool net)
{
    struct cmp_opts o = {0};
    struct cmp *c = calloc(1, sizeof *c);
    struct run_state st = {0};
    struct osn_cli_output outs[] = {{"--json", NULL, w_json, {0}}, {"--csv", NULL, w_csv, {0}}};
    int status = OSN_EXIT_ERROR;

    /* Under mpirun or srun each value's replications are shared by the ranks (osn/split.h),
     * rank 0 alone printing and writing: the outputs are those of one process. */
    struct osn_split split;
    const struct osn_split *shared;
    if (osn_study_mpi_split("sim", &split, &shared) != 0) {
        free(c);
        return OSN_EXIT_ERROR;
    }
    if (net) {
        st.net = calloc(1, sizeof *st.net);
        st.net_res = calloc(1, sizeof *st.net_res);
    } else {
        st.node = calloc(1, sizeof *st.node);
    }
    if (!c || (net ? !st.net || !st.net_res : !st.node)) {
        die("out of memory");
        goto out;
    }
    if (parse_args(argc, argv, &o) != 0)
        goto out;
    if (split.part != 0) {
        o.json = o.csv = NULL;
        o.quiet = true;
    }
    c->split = shared;
    if (o.help) {
        osn_cmd_sim_usage(stdout);
        status = 0;
        goto out;
    }
    outs[0].path = o.json, outs[1].path = o.csv;
    if (!o.scenario) {
        die("--compare needs a scenario file");
        goto out;
    }
    c->node = !net;
    c->meas = net ? net_measures : node_measures;
    c->nm = net ? NM_NET : NM_NODE;
    c->stride = net ? OSN_NET_NMEASURES : OSN_SIM_NMEASURES;
    if (parse_compare(o.compare, c) != 0 || check_sets(&o, c) != 0)
        goto out;
    /* Every value is loaded and checked before any runs: a bad value costs no simulation. */
    for (int v = 0; v < c->nvals; v++)
        if (load(&o, c, v, &st) != 0)
            goto out;
    for (int v = 0; v < c->nvals; v++) {
        char err[1024] = "";
        if (load(&o, c, v, &st) != 0)
            goto out;
        if (!(c->rep[v] = calloc((size_t)c->reps * (size_t)c->stride, sizeof(double)))) {
            die("out of memory");
            goto out;
        }
        if (!o.quiet && isatty(STDERR_FILENO))
            fprintf(stderr, "osn sim: --compare %s=%s (%d of %d)\n", c->key, c->vals[v], v + 1,
                    c->nvals);
        int rc = run(c, v, &st, err, sizeof err);
        if (rc) {
            die("--compare %s=%s: simulation failed: %s", c->key, c->vals[v],
                err[0] ? err : osn_strerror(rc));
            goto out;
        }
        for (int m = 0; m < c->nm; m++)
            compare_measure(c, v, m, &st);
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
    if (st.node_loaded)
        osn_sim_scenario_release(st.node);
    free(st.node);
    osn_net_scenario_release(st.net);
    free(st.net);
    osn_net_result_release(st.net_res);
    free(st.net_res);
    free(o.sets);
    osn_study_mpi_finish(status); /* after the temporaries are gone: rank 0 failing aborts all */
    return status;
}

void osn_cmd_sim_compare_usage(FILE *f)
{
    fputs("\n"
          "Paired comparison (network and node scenarios):\n"
          "  osn sim FILE.ini --compare KEY=A,B,... [--set ...] [--seed N] [--replications N]\n"
          "          [--threads N] [--json FILE|-] [--csv FILE|-] [-q]\n"
          "Runs the scenario once per value of KEY with the same seed and replications. Each\n"
          "replication draws arrivals, hold times, link losses, service times and the\n"
          "controllers' randomness from streams of its own, so replication i offers the same\n"
          "calls in every run (common random numbers). For offered, goodput, setup delay\n"
          "(mean, p99), failed, retrans_ratio and the core's time in overload\n"
          "(core_overload = P1 + P2, core_T_ret the mean overload period, core_P1, core_P2)\n"
          "(node: P0, P1, P2, T_ret, theta, throughput): each run's estimate, and the mean of the\n"
          "per-replication differences to the first value (KEY_diff) with its paired 95%\n"
          "interval (KEY_diff_ci, t with replications - 1 degrees of freedom) and, to show\n"
          "what the pairing gains, the Welch interval of the same replications taken as\n"
          "independent (KEY_diff_ci_unpaired). Needs 2 replications or more; no --set range.\n"
          "Under mpirun each value's replications are shared by the ranks; rank 0 writes.\n"
          "Example:\n"
          "  osn sim examples/collapse.ini --compare control.kind=loss,rate --replications 8\n"
          "  osn sim examples/sim_two_loop.ini --compare thresholds.L=8,10,12\n",
          f);
}
