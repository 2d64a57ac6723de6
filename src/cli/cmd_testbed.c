/*
 * `osn testbed`: the whole network of a scenario for real, beside `osn sim` (issue 30).
 *
 * Thin like the other commands: parse the options, load the scenario once to check it and to
 * learn its topology and the core's capacity, then one run per control x load (testbed_run.c),
 * each printed as a table row when it ends, and the CSV, JSON and plot at the end
 * (testbed_out.c, testbed_plot.c). Every process the testbed starts is stopped by its pid before
 * the next run starts, also after an error or SIGINT/SIGTERM.
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "osn/ini.h"
#include "osn/net_scenario.h"
#include "outputs.h"
#include "testbed.h"

#define MAX_LOADS    32
#define MAX_CONTROLS 8

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

void osn_cmd_testbed_usage(FILE *f)
{
    fputs("Usage: osn testbed SCENARIO.ini [--set SECTION.KEY=VALUE]... [--loads 1,3,10]\n"
          "                   [--controls none,loss,rate] [--duration S] [--warmup S]\n"
          "                   [--json FILE|-] [--csv FILE|-] [--plot FILE.png] [--keep DIR]\n"
          "                   [--bind ADDR|ADDR,ADDR,...|auto] [--no-link-delay]\n"
          "       mpirun -n K osn testbed SCENARIO.ini ... (or srun): the elements spread\n"
          "                   over K ranks\n"
          "\n"
          "The whole network of a scenario for real, beside the simulator. Every element of\n"
          "its topology (collapse: uac, edge, core, uas; tandem: a mid proxy before the core;\n"
          "fanin: net.edges sources and edges; fanout: net.edges sources and edges, each edge\n"
          "forwarding to all net.cores cores by next_hop = A, B) runs as its own `osn node`\n"
          "process on 127.0.0.1, started from the callee back to the caller; each binds port\n"
          "0 and its upstream element sends to the port it reported. The sources are the\n"
          "built-in load generator (node.element = uac). For each control and load, the\n"
          "generators offer load x the core's capacity (1 / (cost_invite + cost_ack +\n"
          "cost_bye + 3 cost_response) of [server core]; fanout: the sum over its cores) on\n"
          "average in the window, every rate of the [source] (Poisson rate, MMPP-2 phase\n"
          "rates, profile rate and steps) scaled by one factor, for warm-up + duration\n"
          "seconds, and drain; then\n"
          "every process is stopped by its pid (SIGTERM, then SIGKILL after 10 s), each\n"
          "element's summary is read back, and `osn sim` runs the same scenario, control,\n"
          "rate, warm-up and window. See docs/testbed.md.\n"
          "\n"
          "Options:\n"
          "  --set SECTION.KEY=VALUE  override a scenario key in every node and in osn sim\n"
          "  --loads L,L,...          load factors, multiples of the core's capacity [1,3,10]\n"
          "  --controls C,C,...       control.kind of each run [none,loss,rate]\n"
          "  --duration S             measured window (s) [the scenario's net.time]\n"
          "  --warmup S               warm-up, not measured (s) [the scenario's net.warmup]\n"
          "  --json FILE|-            the rows as a JSON array, with each node's pid, address,\n"
          "                           end and counters\n"
          "  --csv FILE|-             the rows as CSV (one header line)\n"
          "  --plot FILE.png          goodput against load, sim beside real (needs gnuplot;\n"
          "                           refused at the start when it cannot be drawn)\n"
          "  --keep DIR               keep each run's files (every node's JSON, log and the\n"
          "                           generator's stats) in DIR/CONTROL_LOADx/ [removed]\n"
          "  --bind ADDR,...          the address the nodes listen on (port 0): one for every\n"
          "                           rank, one per MPI rank, or auto (the host's first\n"
          "                           non-loopback IPv4 address) [127.0.0.1]\n"
          "  --no-link-delay          the nodes add no [link] delay or loss (across hosts,\n"
          "                           where the network has its own); osn sim keeps the\n"
          "                           scenario's. By default each node holds what it sends\n"
          "                           for its link's delay and loses it with its link's\n"
          "                           loss (node.link_delay_*, node.link_loss_*)\n"
          "  -h, --help               show this help\n"
          "\n"
          "Under mpirun or srun, an element named in [node] rank = NAME:RANK, ... runs on\n"
          "that rank, element i (in start order: uas, cores, mid, edges, sources) otherwise\n"
          "on rank i mod K; stage by stage the ranks exchange the addresses their nodes\n"
          "reported, and rank 0 gathers every node's summary, runs osn sim and prints.\n"
          "\n"
          "Output: one line per run on standard error (its elements' pids and addresses),\n"
          "and one table row per run on standard output:\n"
          "  control, load, rate (calls/s offered), sim goodput +- its 95% half-width\n"
          "  (replications), real goodput (calls answered good per second in the window),\n"
          "  ratio (real / sim), setup delay p50 and p99 (s; INVITE to 180) sim / real\n"
          "  (both over the window: the generator is given node.warmup), notes\n"
          "  (generator lag over 10 ms, calls unfinished, a node that ended badly).\n"
          "\n"
          "Exit status: 0 when every run completed with every element's summary; 2 on a bad\n"
          "option or scenario (naming it), a node that did not come up (naming the element),\n"
          "a run without every summary, or an interruption.\n",
          f);
}

/* "1,3,10" into loads; OSN_EXIT_ERROR (told) on anything but positive numbers. */
static int parse_loads(const char *s, double *loads, int *n)
{
    char buf[512], *save;
    snprintf(buf, sizeof buf, "%s", s);
    *n = 0;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char *end;
        errno = 0;
        double v = strtod(t, &end);
        if (*n == MAX_LOADS || end == t || *end || errno || !(v > 0) || !isfinite(v))
            return osn_cli_die("testbed",
                               "--loads %s: expected up to %d positive numbers, "
                               "comma-separated ('%s' is not)",
                               s, MAX_LOADS, t);
        loads[(*n)++] = v;
    }
    if (*n == 0 || s[strlen(s) - 1] == ',' || s[0] == ',' || strstr(s, ",,"))
        return osn_cli_die("testbed", "--loads %s: expected positive numbers, comma-separated", s);
    return 0;
}

static int parse_seconds(const char *flag, const char *s, double lo_excl, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || errno || !isfinite(v) || v < 0 || (lo_excl == 0 && !(v > 0)))
        return osn_cli_die("testbed", "%s %s: expected %s number of seconds", flag, s,
                           lo_excl == 0 ? "a positive" : "a non-negative");
    *out = v;
    return 0;
}

/* Loads the scenario with the user's --set and control.kind = control; 0 or OSN_EXIT_ERROR
 * (told, naming --controls when the control is what the scenario refuses). */
/* Whether the [source NAME] sections of a written topology give their own rates (1), which the
 * testbed then scales one by one (testbed_run.c), or not (0); -1 after the error for a
 * process other than Poisson, whose other rates (mmpp_rates, steps) are [source]'s alone. */
static int source_rates(const struct osn_ini *ini, const struct osn_net_cfg *c, const char *path)
{
    for (int i = 0; i < ini->nkeys; i++) {
        const char *k = ini->keys[i].key, *dot = strrchr(k, '.');
        if (strncmp(k, "source ", 7) != 0 || !dot || strcmp(dot, ".rate") != 0)
            continue;
        if (c->src.process != OSN_NET_POISSON) {
            osn_cli_die("testbed",
                        "%s: %s: sources of their own rates are scaled for a Poisson process "
                        "only (source.process = poisson)",
                        path, ini->keys[i].where);
            return -1;
        }
        return 1;
    }
    return 0;
}

static int load(struct osn_net_scenario *s, const char *path, const char **sets, int nsets,
                const char *control)
{
    char err[768], ctl[64];
    snprintf(ctl, sizeof ctl, "control.kind=%s", control ? control : "none");
    sets[nsets] = ctl;
    osn_net_scenario_release(s); /* the load before's */
    int rc = osn_net_scenario_load(s, path, sets, nsets + (control ? 1 : 0), err, sizeof err);
    if (!rc)
        rc = osn_net_scenario_check(s, err, sizeof err);
    if (rc && control && strstr(err, "control.kind"))
        return osn_cli_die("testbed", "--controls %s: %s", control, err);
    if (rc)
        return osn_cli_die("testbed", "%s", err);
    return 0;
}

/* Removes the files of a run directory tree that the testbed made (two levels at most). */
static void remove_tree(const char *dir, int depth)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char p[4400];
    if (!d)
        return;
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        if (unlink(p) != 0 && depth > 0)
            remove_tree(p, depth - 1);
    }
    closedir(d);
    rmdir(dir);
}

int osn_cmd_testbed(int argc, char **argv)
{
    const char *s_loads = "1,3,10", *s_controls = "none,loss,rate", *s_dur = NULL, *s_warm = NULL;
    const char *json = NULL, *csv = NULL, *plot = NULL, *keep = NULL, *s_bind = "127.0.0.1";
    bool no_link_delay = false;
    const struct osn_cli_opt opts[] = {
            {"--loads", NULL, OSN_CLI_VALUE, &s_loads},
            {"--controls", NULL, OSN_CLI_VALUE, &s_controls},
            {"--duration", NULL, OSN_CLI_VALUE, &s_dur},
            {"--warmup", NULL, OSN_CLI_VALUE, &s_warm},
            {"--json", NULL, OSN_CLI_OUTPUT, &json},
            {"--csv", NULL, OSN_CLI_OUTPUT, &csv},
            {"--plot", NULL, OSN_CLI_FILE, &plot},
            {"--keep", NULL, OSN_CLI_FILE, &keep},
            {"--bind", NULL, OSN_CLI_VALUE, &s_bind},
            {"--no-link-delay", NULL, OSN_CLI_FLAG, &no_link_delay},
            {NULL, NULL, 0, NULL},
    };
    struct osn_cli_args a;
    static struct tb_cfg cfg;
    static struct tb_net net;
    static struct tb_row rows[MAX_LOADS * MAX_CONTROLS];
    struct osn_net_scenario *sc = NULL;
    double loads[MAX_LOADS];
    char controls_buf[256], *controls[MAX_CONTROLS], err[768];
    int nloads = 0, ncontrols = 0, nrows = 0, status = OSN_EXIT_ERROR, incomplete = 0;
    bool made_dir = false;

    if (osn_cli_parse("testbed", argc, argv, opts, 1, &a) != 0)
        return OSN_EXIT_ERROR;
    if (a.help) {
        osn_cmd_testbed_usage(stdout);
        free(a.sets);
        return 0;
    }
    /* Under mpirun or srun, join the job first: every later error ends it (tb_mpi_finish). */
    if (tb_mpi_init(&cfg) != 0) {
        free(a.sets);
        return OSN_EXIT_ERROR;
    }
    struct osn_cli_output outs[2] = {{"--json", json, tb_json_write, {0}},
                                     {"--csv", csv, tb_csv_write, {0}}};
    if (!a.scenario) {
        osn_cli_die("testbed", "a network scenario file is needed (see 'osn testbed --help')");
        goto out;
    }
    if (parse_loads(s_loads, loads, &nloads) != 0)
        goto out;
    snprintf(controls_buf, sizeof controls_buf, "%s", s_controls);
    char *save;
    for (char *t = strtok_r(controls_buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (ncontrols == MAX_CONTROLS) {
            osn_cli_die("testbed", "--controls %s: at most %d controls", s_controls, MAX_CONTROLS);
            goto out;
        }
        controls[ncontrols++] = t;
    }
    if (ncontrols == 0) {
        osn_cli_die("testbed", "--controls %s: expected control kinds, comma-separated",
                    s_controls);
        goto out;
    }
    sc = calloc(1, sizeof *sc);
    if (!sc) {
        osn_cli_die("testbed", "out of memory");
        goto out;
    }
    for (int i = 0; i < ncontrols; i++)
        if (load(sc, a.scenario, a.sets, a.nsets, controls[i]) != 0)
            goto out;
    if (load(sc, a.scenario, a.sets, a.nsets, NULL) != 0)
        goto out;
    const struct osn_net_cfg *c = &sc->cfg;
    cfg.duration = c->time;
    cfg.warmup = c->warmup;
    if (s_dur && parse_seconds("--duration", s_dur, 0, &cfg.duration) != 0)
        goto out;
    if (s_warm && parse_seconds("--warmup", s_warm, -1, &cfg.warmup) != 0)
        goto out;
    cfg.capacity = tb_net_capacity(c);
    if (!isfinite(cfg.capacity)) {
        osn_cli_die("testbed",
                    "%s: a core's costs are 0, so its capacity is infinite and a "
                    "load factor means nothing: give [server core] (and a fanout's [server "
                    "coreK]) cost_* keys",
                    a.scenario);
        goto out;
    }
    if (tb_source_check(c, cfg.warmup, cfg.warmup + cfg.duration) != 0)
        goto out;
    cfg.source_rates = source_rates(&sc->ini, c, a.scenario);
    if (cfg.source_rates < 0)
        goto out;
    if (tb_net_build(&net, c) != 0 || tb_place(&cfg, &net, osn_ini_get(&sc->ini, "node.rank")) != 0)
        goto out;
    if (tb_bind(s_bind, cfg.rank, cfg.ranks, cfg.bind, sizeof cfg.bind) != 0)
        goto out;
    cfg.scenario = a.scenario;
    cfg.net = c;
    cfg.sets = a.sets;
    cfg.nsets = a.nsets;
    cfg.t1 = c->sip.t1;
    cfg.hold = c->src.hold;
    cfg.seed = c->seed;
    cfg.stats_interval = 1;
    cfg.ready_timeout = 20; /* a node is up in milliseconds; the machine may be loaded */
    cfg.stop_timeout = 10;
    cfg.stop = &stop_requested;
    cfg.link_delay = !no_link_delay;

    /* Up to here every rank met the same options and files alike. What follows may fail on one
     * rank only (gnuplot, a directory): the ranks agree before any node starts. */
    int pre = 0;
    if (cfg.rank == 0 && plot && tb_plot_check(err, sizeof err) != 0)
        pre = osn_cli_die("testbed", "--plot %s: cannot be drawn: %s", plot, err);
    ssize_t len = pre ? -1 : readlink("/proc/self/exe", cfg.exe, sizeof cfg.exe - 1);
    if (!pre && len <= 0)
        pre = osn_cli_die("testbed", "cannot find this binary (/proc/self/exe): %s",
                          strerror(errno));
    if (!pre)
        cfg.exe[len] = '\0';
    if (!pre && keep && cfg.rank == 0) {
        if (mkdir(keep, 0755) != 0 && errno != EEXIST)
            pre = osn_cli_die("testbed", "--keep %s: %s", keep, strerror(errno));
        snprintf(cfg.dir, sizeof cfg.dir, "%s", keep);
    } else if (!pre) {
        const char *tmp = getenv("TMPDIR");
        snprintf(cfg.dir, sizeof cfg.dir, "%s/osn-testbed-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
        if (!mkdtemp(cfg.dir))
            pre = osn_cli_die("testbed", "cannot make a temporary directory: %s", strerror(errno));
        else
            made_dir = true;
    }
    if (tb_mpi_share(&cfg, &net, pre) != 0)
        goto out;

    stop_requested = 0;
    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);

    bool table = false;
    if (cfg.rank == 0) {
        fprintf(stderr,
                "osn testbed: %s, %d elements, capacity %.6g calls/s; warm-up %g s, window "
                "%g s; loads %s; controls %s; files in %s%s",
                a.scenario, net.n, cfg.capacity, cfg.warmup, cfg.duration, s_loads, s_controls,
                cfg.dir, keep ? "" : " (removed at the end)");
        if (cfg.ranks > 1) {
            fprintf(stderr, "; %d MPI ranks:", cfg.ranks);
            for (int i = 0; i < net.n; i++)
                fprintf(stderr, "%s %s on %d", i ? "," : "", net.e[i].name, net.e[i].rank);
        }
        if (!cfg.link_delay)
            fprintf(stderr, "; no link delays added");
        fputc('\n', stderr);
        table = !osn_cli_outputs_to_stdout(outs, 2);
        if (table)
            tb_table_header(stdout);
        fflush(stdout);
    }
    int nruns = ncontrols * nloads;
    for (int i = 0; i < ncontrols; i++)
        for (int j = 0; j < nloads; j++) {
            struct tb_row *r = &rows[nrows];
            if (tb_run(&cfg, &net, controls[i], loads[j], nrows + 1, nruns, r) != 0) {
                json_decref(r->elems);
                goto out;
            }
            nrows++;
            if (!r->ok)
                incomplete++;
            if (table) {
                tb_table_row(stdout, r);
                fflush(stdout);
            }
        }
    if (cfg.rank != 0) { /* rank 0 writes the outputs */
        status = 0;
        goto out;
    }
    struct tb_rows all = {&cfg, rows, nrows};
    if (osn_cli_outputs_write("testbed", outs, 2, &all) != 0 ||
        osn_cli_stdout_done("testbed") != 0 || osn_cli_outputs_commit("testbed", outs, 2) != 0)
        goto out;
    if (plot && tb_plot_write(plot, &all, err, sizeof err) != 0) {
        osn_cli_die("testbed", "--plot %s: %s", plot, err);
        goto out;
    }
    if (incomplete) {
        osn_cli_die("testbed",
                    "%d of %d runs lack a summary or the generator's rows (see their "
                    "notes)",
                    incomplete, nruns);
        goto out;
    }
    status = 0;
out:
    osn_cli_outputs_abort(outs, 2);
    for (int i = 0; i < nrows; i++)
        json_decref(rows[i].elems);
    if (made_dir)
        remove_tree(cfg.dir, 1);
    osn_net_scenario_release(sc);
    free(sc);
    free(a.sets);
    tb_mpi_finish(&cfg, status);
    return status;
}
