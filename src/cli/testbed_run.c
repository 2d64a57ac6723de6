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
 * Real goodput is counted in the window only, as the simulator counts it after its warm-up: the
 * generator is given node.warmup, and its summary's rates (offered, goodput, failed, abandoned,
 * retries) count the events that came in [warm-up, end of its traffic], as do its setup-delay
 * percentiles (a delay whose 180 comes in that window, as the simulator counts it). With
 * --warmup 0 the generator has no window (its rates would count the drain's outcomes too), so
 * the rates are read from its per-interval rows instead (--stats: the calls answered good in
 * each interval of the traffic).
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
    char *v[192];
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

/* The next hops of element e: the addresses its downstream elements reported, "A, B, ...". */
static void next_hops(const struct tb_net *net, const struct tb_elem *e, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int k = 0; k < e->nnext && len < size; k++)
        len += (size_t)snprintf(buf + len, size - len, "%s%s", k ? ", " : "",
                                net->e[e->next[k]].p.addr);
}

/* A fanout's edge: the scenario's weights of the cores and their down time, which a node reads
 * from [node] (the simulator from [server edge]). */
static void fan_args(struct args *a, const struct osn_net_cfg *c, int nnext)
{
    if (c->core_weights_given) {
        char w[256];
        size_t len = 0;
        for (int k = 0; k < nnext && len < sizeof w; k++)
            len += (size_t)snprintf(w + len, sizeof w - len, "%s%d", k ? ", " : "",
                                    c->core_weight[k]);
        arg(a, "--set");
        arg(a, "node.next_hop_weights=%s", w);
    }
    arg(a, "--set");
    arg(a, "node.down_time=%.17g", c->down_time);
}

/* The core of [server coreK] (K >= 2): a node plays [server core], so that section's costs and
 * buffer are given as [server core]'s. */
static void core_args(struct args *a, const struct osn_net_server_cfg *sv)
{
    static const struct {
        const char *key;
        int kind;
    } costs[] = {{"invite", OSN_NET_K_INVITE}, {"retrans", OSN_NET_K_RETX},
                 {"response", OSN_NET_K_RESP}, {"ack", OSN_NET_K_ACK},
                 {"bye", OSN_NET_K_BYE},       {"reject", OSN_NET_K_REJECT},
                 {"cancel", OSN_NET_K_CANCEL}};
    for (size_t i = 0; i < sizeof costs / sizeof costs[0]; i++) {
        arg(a, "--set");
        arg(a, "server core.cost_%s=%.17g", costs[i].key, sv->cost[costs[i].kind]);
    }
    arg(a, "--set");
    arg(a, "server core.buffer=%ld", sv->buffer);
}

/* The source's keys for `factor` times the scenario's traffic (testbed_load.c). Sources of a
 * written topology that give their own rates (Poisson: checked at the start) each get theirs
 * times the factor, which keeps their shares; source.rate, their sum, is not a key of such a
 * file. */
static void source_args(struct args *a, const struct tb_cfg *cfg, double factor)
{
    char sets[TB_SOURCE_SETS][TB_SET_MAX];
    const struct osn_net_cfg *c = cfg->net;
    if (cfg->source_rates) {
        int E = osn_net_role_count(c, OSN_NET_ROLE_SOURCE);
        for (int i = 0; i < E && i < c->named; i++) {
            arg(a, "--set");
            arg(a, "source %s.rate=%.17g", c->elem_names[i],
                c->src.rate * osn_net_source_share(c, i, E) * factor);
        }
        return;
    }
    int n = tb_source_sets(&c->src, factor, sets);
    for (int i = 0; i < n; i++) {
        arg(a, "--set");
        arg(a, "%s", sets[i]);
    }
}

/* node.next_hop_delays and next_hop_losses of element e, each only when one of its links has
 * some. */
static void own_link_args(struct args *a, const struct tb_elem *e)
{
    const double *value[] = {e->hop_delay, e->hop_loss};
    const char *key[] = {"node.next_hop_delays", "node.next_hop_losses"};
    for (int v = 0; v < 2; v++) {
        char list[TB_MAX_CORES * 32] = "";
        bool any = false;
        for (int k = 0; k < e->nnext; k++) {
            size_t at = strlen(list);
            snprintf(list + at, sizeof list - at, "%s%.17g", k ? ", " : "", value[v][k]);
            any |= value[v][k] > 0;
        }
        if (any) {
            arg(a, "--set");
            arg(a, "%s=%s", key[v], list);
        }
    }
}

static int start_elem(const struct tb_cfg *cfg, struct tb_net *net, int i, const char *control,
                      double factor, const char *dir)
{
    struct tb_elem *e = &net->e[i];
    struct args a;
    char hops[1024];

    /* A topology the user wrote: the node plays its element by name (node.name: its element,
     * mid, costs, and for a source its share and seed, found as this list found them). */
    bool by_name = cfg->net->named > 0;
    common_args(&a, cfg, "node", control);
    arg(&a, "--set");
    arg(&a, "node.element=%s", e->element);
    if (by_name) {
        arg(&a, "--set");
        arg(&a, "node.name=%s", e->name);
    }
    arg(&a, "--set");
    /* Port 0: the node binds a port of its own choosing and reports it (never a guess). */
    arg(&a, strchr(cfg->bind, ':') ? "node.listen=[%s]:0" : "node.listen=%s:0", cfg->bind);
    if (e->nnext > 0) {
        next_hops(net, e, hops, sizeof hops);
        arg(&a, "--set");
        arg(&a, "node.next_hop=%s", hops);
    }
    if (e->nnext > 1)
        fan_args(&a, cfg->net, e->nnext);
    if (strcmp(e->element, "core") == 0 && e->core > 0)
        core_args(&a, &cfg->net->more_cores[e->core - 1]);
    if (e->mid > 0 && !by_name) { /* the node takes that mid's costs and buffer */
        arg(&a, "--set");
        arg(&a, "node.mid=%d", e->mid);
    }
    /* The scenario's [link] delays and losses, each node holding what it sends for its link's
     * delay and losing it with its link's loss, so that each direction of a link is delayed and
     * lost once, as in the simulator (src/node/link.c). */
    const struct {
        const char *key;
        double value;
    } link[] = {{"node.link_delay_down", e->delay_down},
                {"node.link_delay_up", e->delay_up},
                {"node.link_loss_down", e->loss_down},
                {"node.link_loss_up", e->loss_up}};
    for (size_t k = 0; cfg->link_delay && k < sizeof link / sizeof link[0]; k++) {
        if (link[k].value > 0) {
            arg(&a, "--set");
            arg(&a, "%s=%.17g", link[k].key, link[k].value);
        }
    }
    /* Links of their own: each carried by its upstream end, both ways (tb_net.own_links) */
    if (cfg->link_delay && net->own_links && e->nnext > 0)
        own_link_args(&a, e);
    arg(&a, "--set");
    if (strcmp(e->element, "uac") == 0) {
        arg(&a, "node.duration=%.17g", cfg->warmup + cfg->duration);
        arg(&a, "--set");
        arg(&a, "node.warmup=%.17g", cfg->warmup);
        source_args(&a, cfg, by_name ? factor : factor * e->share);
        arg(&a, "--set");
        arg(&a, "net.seed=%llu",
            (unsigned long long)(cfg->seed + (by_name ? 0 : (uint64_t)e->stream)));
        arg(&a, "--set");
        arg(&a, "node.stats_interval=%.17g", cfg->stats_interval);
        arg(&a, "--stats");
        arg(&a, "%s/%s.csv", dir, e->name);
    } else {
        arg(&a, "node.duration=0"); /* until the testbed stops it */
    }
    if (strcmp(e->element, "core") == 0 && e->core == 0) {
        /* The core's rows, often: their mode column samples its time in overload. */
        arg(&a, "--set");
        arg(&a, "node.stats_interval=%g", TB_MODE_ROW);
        arg(&a, "--stats");
        arg(&a, "%s/%s.csv", dir, e->name);
    }
    arg(&a, "--json");
    arg(&a, "%s/%s.json", dir, e->name);
    arg(&a, "-q");
    tb_proc_log(&e->p, dir, e->name);
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

/* The core's time in overload in the window (warm-up, warm-up + duration] of its own clock:
 * the fraction of its stats rows, one every TB_MODE_ROW s, whose mode (the last column) is 1 or
 * 2. The node reports its mode time only over its whole run, drain included; the rows sample it
 * in the window instead (periods of overload last tenths of seconds, so a sample each 50 ms
 * sees them). The core starts before the sources, so its window ends a little before their
 * traffic does, never in the drain. NaN without rows. */
static double core_overload(const struct tb_cfg *cfg, const char *path)
{
    char line[512];
    double n = 0, over = 0;
    FILE *f = fopen(path, "r");

    if (!f)
        return NAN;
    while (fgets(line, sizeof line, f)) {
        double t;
        const char *mode = strrchr(line, ',');
        if (sscanf(line, "%lf,", &t) != 1 || !mode)
            continue; /* the header */
        if (t > cfg->warmup && t <= cfg->warmup + cfg->duration) {
            n++;
            over += atoi(mode + 1) >= 1;
        }
    }
    fclose(f);
    return n > 0 ? over / n : NAN;
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
                                       "next_hops",
                                       "failed",
                                       "abandoned",
                                       "retries",
                                       "window_start",
                                       "window_end",
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
    for (int k = 0; k < 3; k++)
        r->real_more[k] = cfg->warmup > 0 ? 0 : NAN;
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
            if (cfg->warmup > 0 && num(j, "window_start") == cfg->warmup) {
                static const char *const more[] = TB_MORE_KEYS;
                r->real_goodput += num(j, "goodput");
                r->real_offered += num(j, "offered");
                for (int k = 0; k < 3; k++)
                    r->real_more[k] += num(j, more[k]);
            } else if (window_rates(cfg, path, &r->real_goodput, &r->real_offered) != 0) {
                window_ok = false;
                note(r, "%s: no stats rows in the window", e->name);
            }
        } else if (!j && strcmp(e->element, "uac") == 0)
            window_ok = false;
        if (strcmp(e->element, "core") == 0 && e->core == 0) {
            snprintf(path, sizeof path, "%s/%s.csv", dir, e->name);
            r->real_overload = core_overload(cfg, path);
        }
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

/* The spread of the simulator's replications' goodput (the `goodput` column of its
 * --replications-out CSV) and the real run's rank among them, into the row; left unknown (-1)
 * when the file or the column is missing. */
static void rank_real(const char *path, struct tb_row *r)
{
    char line[8192];
    FILE *f = fopen(path, "r");
    int col = -1, n = 0, below = 0;
    double lo = INFINITY, hi = -INFINITY;

    if (!f)
        return;
    for (bool head = true; fgets(line, sizeof line, f); head = false) {
        line[strcspn(line, "\r\n")] = '\0';
        /* Field by field, empty ones counted (strtok would skip them). */
        char *field = line;
        for (int i = 0; field; i++) {
            char *comma = strchr(field, ',');
            if (comma)
                *comma = '\0';
            if (head && strcmp(field, "goodput") == 0)
                col = i;
            if (!head && i == col) {
                char *end;
                double v = strtod(field, &end);
                if (end != field && !*end && isfinite(v)) {
                    n++;
                    lo = fmin(lo, v);
                    hi = fmax(hi, v);
                    below += v < r->real_goodput;
                }
                break;
            }
            field = comma ? comma + 1 : NULL;
        }
        if (head && col < 0)
            break;
    }
    fclose(f);
    if (n > 0 && !isnan(r->real_goodput)) {
        r->sim_min = lo;
        r->sim_max = hi;
        r->sim_below = below;
        /* The ratio to the mean says little when the real run is outside the mean's interval:
         * say where it lies among the replications. */
        if (fabs(r->real_goodput - r->sim_goodput) > r->sim_hw)
            note(r, "sim replications %.1f to %.1f calls/s: the real run above %d of %d", lo, hi,
                 below, n);
    }
}

/* `osn sim` on the run's scenario; its figures into the row. */
static int simulate(const struct tb_cfg *cfg, const char *control, double factor, const char *dir,
                    struct tb_row *r)
{
    struct args a;
    struct tb_proc p = {.out_fd = -1};
    char path[4200], st[64], last[256];

    common_args(&a, cfg, "sim", control);
    source_args(&a, cfg, factor);
    arg(&a, "--set");
    arg(&a, "net.warmup=%.17g", cfg->warmup);
    arg(&a, "--set");
    arg(&a, "net.time=%.17g", cfg->duration);
    arg(&a, "--json");
    arg(&a, "%s/sim.json", dir);
    arg(&a, "--replications-out");
    arg(&a, "%s/sim_replications.csv", dir);
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
    r->sim_overload = num(j, "core_overload");
    static const char *const more[] = TB_MORE_KEYS;
    for (int k = 0; k < 3; k++)
        r->sim_more[k] = num(j, more[k]);
    json_decref(j);
    snprintf(path, sizeof path, "%s/sim_replications.csv", dir);
    rank_real(path, r);
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
    r->sim_min = r->sim_max = NAN;
    r->sim_below = -1;
    r->real_goodput = r->real_p50 = r->real_p99 = r->ratio = NAN;
    for (int m = 0; m < 3; m++)
        r->sim_more[m] = r->real_more[m] = NAN;
    r->sim_overload = r->real_overload = NAN;
    r->elements = net->n;
    /* Every rate of the source times one factor, so that it offers r->rate in the window. */
    double factor =
            r->rate / tb_source_mean(&cfg->net->src, cfg->warmup, cfg->warmup + cfg->duration);
    snprintf(dir, sizeof dir, "%s/%s_%gx", cfg->dir, control, load);
    if (mkdir(dir, 0755) != 0 && errno != EEXIST)
        return osn_cli_die("testbed", "%s: %s", dir, strerror(errno));
    for (int i = 0; i < net->n; i++) {
        net->e[i].p.pid = net->e[i].p.pid_was = 0;
        net->e[i].p.addr[0] = '\0';
    }

    /* Stage by stage, the callee first: under MPI each rank starts its own elements of the
     * stage, then the ranks exchange their addresses (testbed_mpi.c); alone, one by one. */
    int nstages = 0, failed = 0;
    for (int i = 0; i < net->n; i++)
        nstages = net->e[i].stage + 1 > nstages ? net->e[i].stage + 1 : nstages;
    for (int st = 0; st < nstages; st++) {
        for (int i = 0; i < net->n && !failed; i++) {
            struct tb_elem *e = &net->e[i];
            if (e->stage != st || !tb_mine(cfg, net, i))
                continue;
            if (start_elem(cfg, net, i, control, factor, dir) != 0) {
                failed = OSN_EXIT_ERROR;
                break;
            }
            int up = tb_proc_ready(&e->p, cfg->ready_timeout, cfg->stop);
            if (up == 0)
                continue;
            failed = OSN_EXIT_ERROR;
            if (up == -3) {
                osn_cli_die("testbed", "interrupted while starting %s", e->name);
                break;
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
        }
        int all = tb_mpi_share(cfg, net, failed);
        if (all != 0) {
            if (!failed && cfg->rank == 0)
                osn_cli_die("testbed",
                            "run %s at %gx: an element of another rank did not come "
                            "up (that rank said why)",
                            control, load);
            goto out;
        }
    }
    if (cfg->rank == 0)
        progress(net, r, k, nruns, cfg->warmup + cfg->duration);

    /* The sources end by themselves after warm-up + window and their drain (a call lasts at
     * most 64 T1 to its answer, its hold, then a BYE transaction of 64 T1). */
    double bound = cfg->warmup + cfg->duration + 2 * 64 * cfg->t1 + 10 * cfg->hold + 30;
    double deadline = mono_s() + bound;
    int interrupted = 0;
    for (int i = 0; i < net->n && !interrupted; i++) {
        struct tb_elem *e = &net->e[i];
        if (strcmp(e->element, "uac") != 0 || !tb_mine(cfg, net, i))
            continue;
        if (!tb_proc_wait(&e->p, fmax(deadline - mono_s(), 0.001), cfg->stop)) {
            if (*cfg->stop) {
                osn_cli_die("testbed", "interrupted during run %s at %gx", control, load);
                interrupted = OSN_EXIT_ERROR;
                break;
            }
            note(r, "%s stopped: still running %g s after its start", e->name, bound);
        }
    }
    /* Every source has ended, on every rank, before any proxy is stopped. */
    if (tb_mpi_share(cfg, net, interrupted) != 0)
        goto out;
    stop_all(cfg, net);
    /* Rank 0 gathers, reads and simulates; the others wait for its word, so that a failure
     * there ends every rank here, not in the next run's first exchange. */
    int done = tb_mpi_gather(cfg, net, dir);
    if (cfg->rank == 0 && done == 0) {
        collect(cfg, net, dir, r);
        done = simulate(cfg, control, factor, dir, r);
    }
    if (tb_mpi_share(cfg, net, done) != 0)
        goto out;
    r->ratio = r->sim_goodput > 0 ? r->real_goodput / r->sim_goodput : NAN;
    r->ok = r->collected == r->elements && !isnan(r->real_goodput);
    rc = 0;
out:
    stop_all(cfg, net);
    return rc;
}
