/*
 * One run of `osn testbed` (testbed.h): one control at one load, for real and simulated.
 *
 * 1. Every element starts as `osn node` (this binary), the callee first, on 127.0.0.1 port 0;
 *    each proxy's next hop is the address its downstream element reported. The sources (uac)
 *    start last and run warm-up + window, then drain by themselves (docs/node.md).
 * 2. When every source has ended, the others are stopped by pid (SIGTERM, a bounded wait, then
 *    SIGKILL), and each element's --json summary is read back.
 * 3. `osn sim` runs on the same scenario, control, rate, warm-up and window, after the nodes
 *    have stopped, so that it takes no CPU from them.
 *
 * Real goodput is counted in the window only, from the generator's per-second rows (--stats:
 * the calls answered good in each interval), as the simulator counts it after its warm-up. The
 * generator's setup-delay percentiles cover its whole run, warm-up included (its histogram has
 * no window): said in docs/testbed.md.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli.h"
#include "testbed.h"

/* A child's argument vector, its strings in one buffer. */
struct args {
    char *v[96];
    int n;
    char buf[16384];
    size_t used;
    bool full;
};

static void arg(struct args *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void arg(struct args *a, const char *fmt, ...)
{
    va_list ap;
    size_t room = sizeof a->buf - a->used;
    va_start(ap, fmt);
    int n = vsnprintf(a->buf + a->used, room, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= room || a->n + 1 >= (int)(sizeof a->v / sizeof a->v[0])) {
        a->full = true;
        return;
    }
    a->v[a->n++] = a->buf + a->used;
    a->v[a->n] = NULL;
    a->used += (size_t)n + 1;
}

/* The command line shared by `osn node` and `osn sim`: the scenario, the user's --set, then
 * the run's own keys (a later --set of a key wins). */
static void common_args(struct args *a, const struct tb_cfg *cfg, const char *cmd,
                        const char *control)
{
    a->n = 0;
    a->used = 0;
    a->full = false;
    arg(a, "%s", cfg->exe);
    arg(a, "%s", cmd);
    arg(a, "%s", cfg->scenario);
    for (int i = 0; i < cfg->nsets; i++) {
        arg(a, "--set");
        arg(a, "%s", cfg->sets[i]);
    }
    arg(a, "--set");
    arg(a, "control.kind=%s", control);
}

static int start_elem(const struct tb_cfg *cfg, struct tb_net *net, int i, const char *control,
                      double rate, const char *dir)
{
    struct tb_elem *e = &net->e[i];
    struct args a;

    common_args(&a, cfg, "node", control);
    arg(&a, "--set");
    arg(&a, "node.element=%s", e->element);
    arg(&a, "--set");
    arg(&a, "node.listen=127.0.0.1:0");
    if (e->next >= 0) {
        arg(&a, "--set");
        arg(&a, "node.next_hop=%s", net->e[e->next].p.addr);
    }
    arg(&a, "--set");
    if (strcmp(e->element, "uac") == 0) {
        arg(&a, "node.duration=%.17g", cfg->warmup + cfg->duration);
        arg(&a, "--set");
        arg(&a, "source.rate=%.17g", rate * e->share);
        arg(&a, "--set");
        arg(&a, "net.seed=%llu", (unsigned long long)(cfg->seed + (uint64_t)e->stream));
        arg(&a, "--set");
        arg(&a, "node.stats_interval=%.17g", cfg->stats_interval);
        arg(&a, "--stats");
        arg(&a, "%s/%s.csv", dir, e->name);
    } else {
        arg(&a, "node.duration=0"); /* until the testbed stops it */
    }
    arg(&a, "--json");
    arg(&a, "%s/%s.json", dir, e->name);
    arg(&a, "-q");
    snprintf(e->p.log, sizeof e->p.log, "%s/%s.log", dir, e->name);
    if (a.full)
        return osn_cli_die("testbed", "element %s: its command line is too long", e->name);
    if (tb_proc_start(&e->p, a.v, true) != 0)
        return osn_cli_die("testbed", "element %s: cannot start %s: %s", e->name, cfg->exe,
                           strerror(errno));
    return 0;
}

/* Stops every element still running, the callers first. */
static void stop_all(const struct tb_cfg *cfg, struct tb_net *net)
{
    for (int i = net->n - 1; i >= 0; i--)
        tb_proc_stop(&net->e[i].p, cfg->stop_timeout);
}

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double num(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* The calls answered good and started in the window (warm-up, warm-up + duration] from a
 * generator's --stats rows, as rates over the time its rows span. */
static int window_rates(const struct tb_cfg *cfg, const char *path, double *good, double *offered)
{
    char line[512];
    double lo = cfg->warmup + 0.5 * cfg->stats_interval;
    double hi = cfg->warmup + cfg->duration + 0.5 * cfg->stats_interval;
    double t_prev = 0, t0 = NAN, t1 = NAN, n_good = 0, n_started = 0;
    FILE *f = fopen(path, "r");

    if (!f)
        return -1;
    while (fgets(line, sizeof line, f)) {
        double t, started, retries, answered;
        if (sscanf(line, "%lf,%lf,%lf,%lf", &t, &started, &retries, &answered) != 4)
            continue; /* the header */
        if (t > lo && t <= hi) {
            if (isnan(t0))
                t0 = t_prev;
            t1 = t;
            n_good += answered;
            n_started += started;
        }
        t_prev = t;
    }
    fclose(f);
    if (isnan(t0) || !(t1 > t0))
        return -1;
    *good += n_good / (t1 - t0);
    *offered += n_started / (t1 - t0);
    return 0;
}

/* What the table keeps of an element's summary (the whole file stays in the run's directory). */
static json_t *elem_summary(const struct tb_elem *e, const json_t *j)
{
    static const char *const keys[] = {"next_hop",
                                       "datagrams_in",
                                       "calls_in",
                                       "calls_ok",
                                       "rejected_503",
                                       "dropped",
                                       "timeouts_408",
                                       "retrans_sent",
                                       "retrans_absorbed",
                                       "util",
                                       "offered",
                                       "goodput",
                                       "setup_delay_p50",
                                       "setup_delay_p99",
                                       "lag_max",
                                       "late_sends",
                                       NULL};
    char st[64];
    json_t *o = json_object();

    tb_proc_status_str(&e->p, st, sizeof st);
    json_object_set_new(o, "name", json_string(e->name));
    json_object_set_new(o, "element", json_string(e->element));
    json_object_set_new(o, "pid", json_integer(e->p.pid_was));
    json_object_set_new(o, "listen", json_string(e->p.addr));
    json_object_set_new(o, "end", json_string(st));
    json_object_set_new(o, "summary", json_boolean(j != NULL));
    for (int k = 0; j && keys[k]; k++) {
        json_t *v = json_object_get(j, keys[k]);
        if (v)
            json_object_set(o, keys[k], v);
    }
    if (j && json_object_get(j, "uac"))
        json_object_set(o, "uac", json_object_get(j, "uac"));
    return o;
}

static void note(struct tb_row *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void note(struct tb_row *r, const char *fmt, ...)
{
    size_t n = strlen(r->notes);
    va_list ap;
    if (n && n + 2 < sizeof r->notes) {
        strcat(r->notes, "; ");
        n += 2;
    }
    va_start(ap, fmt);
    vsnprintf(r->notes + n, sizeof r->notes - n, fmt, ap);
    va_end(ap);
}

/* Reads every element's summary into the row; the generators' figures are summed (rates) or
 * weighted by their setup samples (percentiles of several sources: an approximation). */
static void collect(const struct tb_cfg *cfg, struct tb_net *net, const char *dir, struct tb_row *r)
{
    char path[4200], st[64], last[256];
    double w = 0, p50 = 0, p99 = 0;
    bool window_ok = true;

    r->elems = json_array();
    r->real_goodput = r->real_offered = 0;
    r->lag_max = 0;
    for (int i = 0; i < net->n; i++) {
        struct tb_elem *e = &net->e[i];
        snprintf(path, sizeof path, "%s/%s.json", dir, e->name);
        json_t *j = json_load_file(path, 0, NULL);
        tb_proc_status_str(&e->p, st, sizeof st);
        if (j)
            r->collected++;
        else {
            tb_proc_last_line(&e->p, last, sizeof last);
            note(r, "no summary from %s (%s%s%s)", e->name, st, last[0] ? ": " : "", last);
        }
        if (e->p.killed || (e->p.reaped && strcmp(st, "exit 0") != 0 && j))
            note(r, "%s ended with %s", e->name, st);
        json_array_append_new(r->elems, elem_summary(e, j));
        if (j && strcmp(e->element, "uac") == 0) {
            const json_t *u = json_object_get(j, "uac");
            double n = num(u, "setup_samples");
            if (n > 0) {
                w += n;
                p50 += n * num(j, "setup_delay_p50");
                p99 += n * num(j, "setup_delay_p99");
            }
            r->lag_max = fmax(r->lag_max, num(j, "lag_max"));
            r->late_sends += (long)num(j, "late_sends");
            r->unfinished += (long)num(u, "unfinished");
            snprintf(path, sizeof path, "%s/%s.csv", dir, e->name);
            if (window_rates(cfg, path, &r->real_goodput, &r->real_offered) != 0) {
                window_ok = false;
                note(r, "%s: no stats rows in the window", e->name);
            }
        } else if (!j && strcmp(e->element, "uac") == 0)
            window_ok = false;
        json_decref(j);
    }
    if (!window_ok)
        r->real_goodput = r->real_offered = NAN;
    r->real_p50 = w > 0 ? p50 / w : NAN;
    r->real_p99 = w > 0 ? p99 / w : NAN;
    if (r->lag_max > 0.01)
        note(r, "generator lag up to %.0f ms (%ld INVITEs > 1 ms late)", 1e3 * r->lag_max,
             r->late_sends);
    if (r->unfinished > 0)
        note(r, "%ld calls unfinished at the stop", r->unfinished);
}

/* `osn sim` on the run's scenario; its figures into the row. */
static int simulate(const struct tb_cfg *cfg, const char *control, const char *dir,
                    struct tb_row *r)
{
    struct args a;
    struct tb_proc p = {.out_fd = -1};
    char path[4200], st[64], last[256];

    common_args(&a, cfg, "sim", control);
    arg(&a, "--set");
    arg(&a, "source.rate=%.17g", r->rate);
    arg(&a, "--set");
    arg(&a, "net.warmup=%.17g", cfg->warmup);
    arg(&a, "--set");
    arg(&a, "net.time=%.17g", cfg->duration);
    arg(&a, "--json");
    arg(&a, "%s/sim.json", dir);
    arg(&a, "-q");
    snprintf(p.log, sizeof p.log, "%s/sim.log", dir);
    if (a.full || tb_proc_start(&p, a.v, false) != 0)
        return osn_cli_die("testbed", "cannot start osn sim: %s", strerror(errno));
    /* A simulation of minutes of traffic takes seconds; an hour means something is wrong. */
    if (!tb_proc_wait(&p, 3600, cfg->stop)) {
        tb_proc_stop(&p, cfg->stop_timeout);
        return osn_cli_die("testbed", "osn sim did not end (interrupted or over an hour)");
    }
    snprintf(path, sizeof path, "%s/sim.json", dir);
    json_t *j = json_load_file(path, 0, NULL);
    if (!j) {
        tb_proc_status_str(&p, st, sizeof st);
        tb_proc_last_line(&p, last, sizeof last);
        return osn_cli_die("testbed", "osn sim failed (%s): %s", st, last);
    }
    r->sim_goodput = num(j, "goodput");
    r->sim_hw = num(j, "goodput_ci");
    r->sim_n = (long)num(j, "replications");
    r->sim_p50 = num(j, "setup_delay_p50");
    r->sim_p99 = num(j, "setup_delay_p99");
    json_decref(j);
    return 0;
}

/* Prints the run's progress line: what started where, by pid (a script checks them). */
static void progress(const struct tb_net *net, const struct tb_row *r, int k, int nruns,
                     double secs)
{
    fprintf(stderr, "osn testbed: run %d/%d: %s at %gx = %.6g calls/s for %g s:", k, nruns,
            r->control, r->load, r->rate, secs);
    for (int i = 0; i < net->n; i++)
        fprintf(stderr, "%s %s pid %ld at %s", i ? "," : "", net->e[i].name,
                (long)net->e[i].p.pid_was, net->e[i].p.addr);
    fputc('\n', stderr);
    fflush(stderr);
}

int tb_run(const struct tb_cfg *cfg, struct tb_net *net, const char *control, double load, int k,
           int nruns, struct tb_row *r)
{
    char dir[4200], last[256];
    int rc = OSN_EXIT_ERROR;

    memset(r, 0, sizeof *r);
    snprintf(r->control, sizeof r->control, "%s", control);
    r->load = load;
    r->rate = load * cfg->capacity;
    r->sim_goodput = r->sim_hw = r->sim_p50 = r->sim_p99 = NAN;
    r->real_goodput = r->real_p50 = r->real_p99 = r->ratio = NAN;
    r->elements = net->n;
    snprintf(dir, sizeof dir, "%s/%s_%gx", cfg->dir, control, load);
    if (mkdir(dir, 0755) != 0 && errno != EEXIST)
        return osn_cli_die("testbed", "%s: %s", dir, strerror(errno));
    for (int i = 0; i < net->n; i++)
        net->e[i].p.pid = net->e[i].p.pid_was = 0;

    for (int i = 0; i < net->n; i++) {
        struct tb_elem *e = &net->e[i];
        if (start_elem(cfg, net, i, control, r->rate, dir) != 0)
            goto out;
        int up = tb_proc_ready(&e->p, cfg->ready_timeout, cfg->stop);
        if (up == 0)
            continue;
        if (up == -3) {
            osn_cli_die("testbed", "interrupted while starting %s", e->name);
            goto out;
        }
        tb_proc_stop(&e->p, cfg->stop_timeout);
        tb_proc_last_line(&e->p, last, sizeof last);
        osn_cli_die("testbed",
                    "run %s at %gx: element %s (osn node, node.element = %s, pid %ld) %s%s%s",
                    control, load, e->name, e->element, (long)e->p.pid_was,
                    up == -2 ? "did not report its port within the bound"
                             : "ended before "
                               "reporting its port",
                    last[0] ? ": " : "", last);
        goto out;
    }
    progress(net, r, k, nruns, cfg->warmup + cfg->duration);

    /* The sources end by themselves after warm-up + window and their drain (a call lasts at
     * most 64 T1 to its answer, its hold, then a BYE transaction of 64 T1). */
    double bound = cfg->warmup + cfg->duration + 2 * 64 * cfg->t1 + 10 * cfg->hold + 30;
    double deadline = mono_s() + bound;
    for (int i = 0; i < net->n; i++) {
        struct tb_elem *e = &net->e[i];
        if (strcmp(e->element, "uac") != 0)
            continue;
        if (!tb_proc_wait(&e->p, fmax(deadline - mono_s(), 0.001), cfg->stop)) {
            if (*cfg->stop) {
                osn_cli_die("testbed", "interrupted during run %s at %gx", control, load);
                goto out;
            }
            note(r, "%s stopped: still running %g s after its start", e->name, bound);
        }
    }
    stop_all(cfg, net);
    collect(cfg, net, dir, r);
    if (simulate(cfg, control, dir, r) != 0)
        goto out;
    r->ratio = r->sim_goodput > 0 ? r->real_goodput / r->sim_goodput : NAN;
    r->ok = r->collected == r->elements && !isnan(r->real_goodput);
    rc = 0;
out:
    stop_all(cfg, net);
    return rc;
}
