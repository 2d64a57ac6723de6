/*
 * Result writers of the fluid model: the summary as a table or JSON, the time series as CSV,
 * and a gnuplot PNG of the queues.
 *
 * The series hold masses per slot; every flow is written here as a rate (per second, divided
 * by the slot length) and the queue in messages, so the CSV does not depend on the slot. Row n
 * is the slot ending at t = (n + 1) x slot. A ratio or a mean with nothing to divide by (no
 * originals or no answers in the slot) is an empty cell.
 */
#include "osn/fluid_scenario.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "io_int.h"
#include "osn/err.h"
#include "osn/gnuplot.h"

static const char *const hop_prefix[2][2] = {{"", ""}, {"p1_", "p2_"}};

/* Total backlog over the servers at the horizon. */
static double final_queue(const struct osn_fluid_result *res)
{
    double q = 0;

    for (int h = 0; h < res->hops; h++)
        q += res->sum.final_queue[h];
    return q;
}

static void describe(FILE *f, const struct osn_fluid_scenario *sc,
                     const struct osn_fluid_result *res)
{
    const struct osn_fluid_cfg *c = &res->cfg;
    const struct osn_fluid_profile *p = &c->profile;
    static const char *const name[2][2] = {{"S", ""}, {"P1", "P2"}};

    fprintf(f, "fluid model, %s:", res->hops == 2 ? "tandem UAC -> P1 -> P2" : "single server");
    for (int h = 0; h < res->hops; h++) {
        if (isinf(c->server[h].buffer))
            fprintf(f, " %s mu=%g/s buffer=inf", name[res->hops - 1][h], c->server[h].rate);
        else
            fprintf(f, " %s mu=%g/s buffer=%g", name[res->hops - 1][h], c->server[h].rate,
                    c->server[h].buffer);
    }
    if (p->shape == OSN_FLUID_MMPP)
        fprintf(f, "\nprofile mmpp: rates %g, %g/s, switch %g, %g/s, seed %" PRIu64,
                p->mmpp_rate[0], p->mmpp_rate[1], p->mmpp_switch[0], p->mmpp_switch[1], p->seed);
    else
        fprintf(f, "\nprofile %s: %g/s", osn_fluid_shape_name(p->shape), p->base_rate);
    if (p->shape == OSN_FLUID_STEP)
        fprintf(f, ", %g/s from %g s", p->step_rate, p->step_time);
    else if (p->shape == OSN_FLUID_BURST)
        fprintf(f, " + %g/s for %g s from %g s", p->burst_rate, p->burst_duration, p->burst_start);
    else if (p->shape == OSN_FLUID_SLOWDOWN)
        fprintf(f, ", capacity x %g for %g s from %g s", p->slowdown_factor, p->slowdown_duration,
                p->slowdown_start);
    fprintf(f, "; slot %g s, horizon %g s, %d retransmissions (T1 %g s), control %s\n", c->slot,
            c->horizon, c->retx, c->t1, osn_fluid_ctl_name(c->control.kind));
    if (sc && sc->ini.path[0])
        fprintf(f, "scenario: %s\n", sc->ini.path);
}

static void row(FILE *f, const char *key, double v, const char *unit, const char *meaning)
{
    fprintf(f, "  %-17s %-12.7g %-4s %s\n", key, v, unit, meaning);
}

static const char *const state_meaning[] = {
        "the backlog drained",
        "a steady backlog, no call failing: it neither drains nor fails (a fixed point)",
        "the backlog still grows; no Timer B expiry yet in the last 64 T1",
        "calls failed by Timer B in the last 64 T1 of the horizon",
};

void osn_fluid_report_table(FILE *f, const struct osn_fluid_scenario *sc,
                            const struct osn_fluid_result *res)
{
    const struct osn_fluid_summary *s = &res->sum;

    describe(f, sc, res);
    fprintf(f, "\n  %-17s %-12s %-4s %s\n", "measure", "value", "unit", "meaning");
    row(f, "final_queue", final_queue(res), "msg", "backlog at the horizon (all servers)");
    if (res->hops == 2) {
        row(f, "final_queue_p1", s->final_queue[0], "msg", "P1's backlog at the horizon");
        row(f, "final_queue_p2", s->final_queue[1], "msg", "P2's backlog at the horizon");
    }
    fprintf(f, "  %-17s %-12s %-4s %s\n", "recovered", s->recovered ? "yes" : "no", "",
            "every queue back within one slot of service");
    fprintf(f, "  %-17s %-12s %-4s %s\n", "state", osn_fluid_state_name(s->state), "",
            state_meaning[s->state]);
    row(f, "goodput", s->goodput, "1/s", "calls answered before Timer B, per second");
    row(f, "completed", s->completed, "", "calls answered in time");
    row(f, "failed", s->failed, "", "calls failed by Timer B");
    row(f, "pending", s->pending, "", "calls still in progress at the horizon");
    row(f, "offered", s->offered, "", "calls originated");
    row(f, "mean_delay", s->mean_delay, "s", "mean INVITE -> 100 Trying delay at the UAC");
    row(f, "peak_delay", s->peak_delay, "s", "largest INVITE -> 100 Trying delay at the UAC");
    row(f, "peak_queue",
        res->hops == 2 && s->peak_queue[1] > s->peak_queue[0] ? s->peak_queue[1] : s->peak_queue[0],
        "msg", "largest backlog of any server");
    row(f, "retransmissions", s->retransmissions, "", "INVITE retransmissions sent");
    row(f, "redundant", s->redundant, "", "retransmissions the server already had");
    row(f, "lost", s->lost, "", "messages dropped by full buffers");
    if (res->cfg.control.kind == OSN_FLUID_CTL_PRSM)
        row(f, "removed", s->removed, "", "copies removed unserved (PRSM, call answered)");
}

/* ---- JSON ---- */

static json_t *server_json(const struct osn_fluid_server *s, bool p1)
{
    json_t *o = json_object();
    int err = 0;

    if (!o)
        return NULL;
    err |= json_object_set_new(o, "rate", json_real(s->rate));
    err |= json_object_set_new(o, "buffer", isinf(s->buffer) ? json_null() : json_real(s->buffer));
    err |= json_object_set_new(o, "delay_up", json_real(s->delay_up));
    err |= json_object_set_new(o, "delay_down", json_real(s->delay_down));
    if (p1) {
        err |= json_object_set_new(o, "response_cost", json_real(s->response_cost));
        err |= json_object_set_new(o, "retx_cost", json_real(s->retx_cost));
    }
    if (err) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static json_t *scenario_json(const struct osn_fluid_scenario *sc,
                             const struct osn_fluid_result *res)
{
    const struct osn_fluid_cfg *c = &res->cfg;
    const struct osn_fluid_profile *p = &c->profile;
    json_t *o = json_object(), *prof = json_object(), *servers = json_array(), *ctl = json_object();
    json_t *keys = json_object(), *ks = json_array();
    int err = 0;

    if (!o || !prof || !servers || !ctl || !keys || !ks) {
        json_decref(o);
        json_decref(prof);
        json_decref(servers);
        json_decref(ctl);
        json_decref(keys);
        json_decref(ks);
        return NULL;
    }
    err |= json_object_set_new(o, "topology", json_string(osn_fluid_topology_name(c->topology)));
    err |= json_object_set_new(o, "slot", json_real(c->slot));
    err |= json_object_set_new(o, "horizon", json_real(c->horizon));
    err |= json_object_set_new(o, "t1", json_real(c->t1));
    err |= json_object_set_new(o, "retransmissions", json_integer(c->retx));
    for (int j = 0; j <= c->retx; j++)
        err |= json_array_append_new(ks, json_integer(res->k[j]));
    err |= json_object_set_new(o, "copy_slots", ks);
    err |= json_object_set_new(o, "timer_b_slots", json_integer(res->kb));
    err |= json_object_set_new(prof, "shape", json_string(osn_fluid_shape_name(p->shape)));
    err |= json_object_set_new(prof, "base_rate", json_real(p->base_rate));
    if (p->shape == OSN_FLUID_STEP) {
        err |= json_object_set_new(prof, "step_time", json_real(p->step_time));
        err |= json_object_set_new(prof, "step_rate", json_real(p->step_rate));
    } else if (p->shape == OSN_FLUID_BURST) {
        err |= json_object_set_new(prof, "burst_start", json_real(p->burst_start));
        err |= json_object_set_new(prof, "burst_duration", json_real(p->burst_duration));
        err |= json_object_set_new(prof, "burst_rate", json_real(p->burst_rate));
    } else if (p->shape == OSN_FLUID_SLOWDOWN) {
        err |= json_object_set_new(prof, "slowdown_start", json_real(p->slowdown_start));
        err |= json_object_set_new(prof, "slowdown_duration", json_real(p->slowdown_duration));
        err |= json_object_set_new(prof, "slowdown_factor", json_real(p->slowdown_factor));
    }
    if (p->shape == OSN_FLUID_MMPP) {
        json_t *r = json_pack("[f, f]", p->mmpp_rate[0], p->mmpp_rate[1]);
        json_t *sw = json_pack("[f, f]", p->mmpp_switch[0], p->mmpp_switch[1]);
        err |= json_object_set_new(prof, "mmpp_rates", r);
        err |= json_object_set_new(prof, "mmpp_switch", sw);
        err |= json_object_set_new(prof, "seed", json_integer((json_int_t)p->seed));
    }
    err |= json_object_set_new(o, "profile", prof);
    for (int h = 0; h < res->hops; h++)
        err |= json_array_append_new(servers, server_json(&c->server[h], res->hops == 2 && !h));
    err |= json_object_set_new(o, "servers", servers);
    /* "algorithm": the old name of "kind", kept beside it for one release. */
    err |= json_object_set_new(ctl, "kind", json_string(osn_fluid_ctl_name(c->control.kind)));
    err |= json_object_set_new(ctl, "algorithm", json_string(osn_fluid_ctl_name(c->control.kind)));
    if (c->control.kind != OSN_FLUID_CTL_NONE) {
        err |= json_object_set_new(ctl, "interval", json_real(c->control.interval));
        err |= json_object_set_new(ctl, "target", json_real(c->control.target));
        err |= json_object_set_new(ctl, "kp", json_real(c->control.kp));
        err |= json_object_set_new(ctl, "ki", json_real(c->control.ki));
        err |= json_object_set_new(ctl, "max_rate", json_real(c->control.max_rate));
    }
    err |= json_object_set_new(o, "control", ctl);
    err |= json_object_set_new(o, "source",
                               sc && sc->ini.path[0] ? json_string(sc->ini.path) : json_null());
    for (int i = 0; sc && i < sc->ini.nkeys; i++)
        err |= json_object_set_new(keys, sc->ini.keys[i].key, json_string(sc->ini.keys[i].value));
    err |= json_object_set_new(o, "keys", keys);
    if (err) {
        json_decref(o);
        return NULL;
    }
    return o;
}

int osn_fluid_report_json_write(FILE *f, const struct osn_fluid_scenario *sc,
                                const struct osn_fluid_result *res, char *err, size_t errsize)
{
    const struct osn_fluid_summary *s = &res->sum;
    json_t *root = json_object();
    int bad = 0, rc = 0;

    if (!root)
        goto nomem;
    bad |= json_object_set_new(root, "final_queue", json_real(final_queue(res)));
    if (res->hops == 2) {
        bad |= json_object_set_new(root, "final_queue_p1", json_real(s->final_queue[0]));
        bad |= json_object_set_new(root, "final_queue_p2", json_real(s->final_queue[1]));
    }
    bad |= json_object_set_new(root, "recovered", json_boolean(s->recovered));
    bad |= json_object_set_new(root, "goodput", json_real(s->goodput));
    bad |= json_object_set_new(root, "completed", json_real(s->completed));
    bad |= json_object_set_new(root, "failed", json_real(s->failed));
    bad |= json_object_set_new(root, "pending", json_real(s->pending));
    bad |= json_object_set_new(root, "offered", json_real(s->offered));
    bad |= json_object_set_new(root, "state", json_string(osn_fluid_state_name(s->state)));
    bad |= json_object_set_new(root, "mean_delay",
                               isnan(s->mean_delay) ? json_null() : json_real(s->mean_delay));
    bad |= json_object_set_new(root, "peak_delay", json_real(s->peak_delay));
    bad |= json_object_set_new(root, "peak_queue",
                               json_real(fmax(s->peak_queue[0], s->peak_queue[1])));
    bad |= json_object_set_new(root, "retransmissions", json_real(s->retransmissions));
    bad |= json_object_set_new(root, "redundant", json_real(s->redundant));
    bad |= json_object_set_new(root, "lost", json_real(s->lost));
    bad |= json_object_set_new(root, "removed", json_real(s->removed));
    bad |= json_object_set_new(root, "scenario", scenario_json(sc, res));
    if (bad)
        goto nomem;
    rc = osn__report_json_dump(f, root, 17, err, errsize);
    json_decref(root);
    return rc;
nomem:
    json_decref(root);
    if (err && errsize)
        snprintf(err, errsize, "out of memory building the JSON result");
    return OSN_ENOMEM;
}

/* ---- CSV ---- */

/* "%.10g" of v, or an empty cell for NaN. */
static void cell(FILE *f, double v)
{
    fputc(',', f);
    if (!isnan(v))
        fprintf(f, "%.10g", v);
}

int osn_fluid_report_csv_write(FILE *f, const struct osn_fluid_result *res, char *err,
                               size_t errsize)
{
    static const char *const names[] = {
            "queue",   "queue_delay", "arrived",   "served",          "lost",     "originals",
            "retrans", "withheld",    "redundant", "redundant_ratio", "answered", "delay",
            "failed",  "completed",   "allow",     "queue_secondary", "removed"};
    const double dt = res->cfg.slot;
    const int J = res->cfg.retx;

    fputs("t,offered,goodput", f);
    for (int h = 0; h < res->hops; h++) {
        const char *p = hop_prefix[res->hops - 1][h];
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
            fprintf(f, ",%s%s", p, names[i]);
            if (strcmp(names[i], "retrans") == 0)
                for (int j = 1; j <= J; j++)
                    fprintf(f, ",%sretrans_%d", p, j);
        }
    }
    fputc('\n', f);
    for (long n = 0; n < res->nslots; n++) {
        fprintf(f, "%.10g", (double)(n + 1) * dt);
        cell(f, res->offered[n] / dt);
        cell(f, res->goodput[n] / dt);
        for (int h = 0; h < res->hops; h++) {
            double *const *c = res->hop[h].col;
            double ans = c[OSN_FLUID_ANSWERED][n], orig = c[OSN_FLUID_ORIG_IN][n];
            cell(f, c[OSN_FLUID_QUEUE][n]);
            cell(f, c[OSN_FLUID_QDELAY][n]);
            cell(f, c[OSN_FLUID_ARRIVED][n] / dt);
            cell(f, c[OSN_FLUID_SERVED][n] / dt);
            cell(f, c[OSN_FLUID_LOST][n] / dt);
            cell(f, c[OSN_FLUID_ORIG][n] / dt);
            cell(f, c[OSN_FLUID_RETX][n] / dt);
            for (int j = 1; j <= J; j++)
                cell(f, res->hop[h].retx[j][n] / dt);
            cell(f, c[OSN_FLUID_WITHHELD][n] / dt);
            cell(f, c[OSN_FLUID_REDUNDANT][n] / dt);
            cell(f, orig > 0 ? c[OSN_FLUID_REDUNDANT][n] / orig : NAN);
            cell(f, ans / dt);
            cell(f, ans > 0 ? c[OSN_FLUID_DELAY_SUM][n] / ans : NAN);
            cell(f, c[OSN_FLUID_FAILED][n] / dt);
            cell(f, c[OSN_FLUID_COMPLETED][n] / dt);
            cell(f, c[OSN_FLUID_ALLOW][n]);
            cell(f, c[OSN_FLUID_QUEUE2][n]);
            cell(f, c[OSN_FLUID_REMOVED][n] / dt);
        }
        fputc('\n', f);
    }
    if (fflush(f) != 0 || ferror(f)) {
        if (err && errsize)
            snprintf(err, errsize, "cannot write the CSV series: %s", strerror(errno));
        return OSN_EIO;
    }
    return 0;
}

/* ---- gnuplot ---- */

int osn_fluid_plot(const char *path, const struct osn_fluid_scenario *sc,
                   const struct osn_fluid_result *res, char *err, size_t errsize)
{
    return osn_fluid_plot_range(path, sc, res, NAN, NAN, err, errsize);
}

/* The window the profile changes the system in (burst, slowdown), shaded behind the curves and
 * named at its top; a step has no window, only a start. */
static void mark_window(FILE *gp, const struct osn_fluid_profile *p)
{
    double a, b;
    const char *what;
    if (p->shape == OSN_FLUID_BURST) {
        a = p->burst_start, b = a + p->burst_duration, what = "burst";
    } else if (p->shape == OSN_FLUID_SLOWDOWN) {
        a = p->slowdown_start, b = a + p->slowdown_duration, what = "slowdown";
    } else if (p->shape == OSN_FLUID_STEP) {
        fprintf(gp,
                "set arrow from %g, graph 0 to %g, graph 1 nohead dt 3 lc rgb '#888888'\n"
                "set label 'step' at %g, graph 0.97 offset 0.5,0\n",
                p->step_time, p->step_time, p->step_time);
        return;
    } else {
        return;
    }
    fprintf(gp,
            "set object 1 rect from %g, graph 0 to %g, graph 1 behind fc rgb '#e8e8e8' "
            "fs solid noborder\nset label '%s' at %g, graph 0.97 offset 0.5,0\n",
            a, b, what, a);
}

int osn_fluid_plot_range(const char *path, const struct osn_fluid_scenario *sc,
                         const struct osn_fluid_result *res, double t0, double t1, char *err,
                         size_t errsize)
{
    struct osn_afile af = {0};
    struct osn_gnuplot g = {0};
    FILE *gp;
    const double dt = res->cfg.slot;
    const struct osn_fluid_profile *p = &res->cfg.profile;
    double ymax = 0;
    int rc, st;

    (void)sc;
    if (strcmp(path, "-") == 0) {
        if (err && errsize)
            snprintf(err, errsize, "a PNG cannot go to standard output: give a file name");
        return OSN_EIO;
    }
    rc = osn_afile_open(&af, path, err, errsize);
    if (rc)
        return rc;
    /* gnuplot writes into the temporary, whose name reaches it as ARG1, never as script text
     * (src/ini/gnuplot.c); a gnuplot that is missing or dies must not kill us (SIGPIPE). */
    const char *args[] = {osn_afile_write_path(&af)};
    g.pid = -1;
    if (osn_gnuplot_open(&g, args, 1, 0, err, errsize) != 0) {
        rc = OSN_EIO;
        goto out;
    }
    gp = g.f;
    fprintf(gp, "set terminal pngcairo size 960,540 font 'sans,11'\nset output ARG1\n");
    fprintf(gp, "$d << EOD\n");
    for (long n = 0; n < res->nslots; n++) {
        fprintf(gp, "%g", (double)(n + 1) * dt);
        for (int h = 0; h < res->hops; h++)
            fprintf(gp, " %g %g", res->hop[h].col[OSN_FLUID_QUEUE][n],
                    res->hop[h].col[OSN_FLUID_RETX][n] / dt);
        fputc('\n', gp);
    }
    fprintf(gp, "EOD\n");
    for (int h = 0; h < res->hops; h++)
        for (long n = 0; n < res->nslots; n++)
            ymax = fmax(ymax, res->hop[h].col[OSN_FLUID_RETX][n] / dt);
    for (int h = 0; h < res->hops; h++) /* the capacity lines stay in view */
        ymax = fmax(ymax, res->cfg.server[h].rate);
    fprintf(gp, "set y2range [0:%g]\n", ymax > 0 ? 1.05 * ymax : 1);
    fprintf(gp, "set title \"%s, profile %s: ",
            res->hops == 2 ? "tandem UAC -> P1 -> P2" : "single server",
            osn_fluid_shape_name(p->shape));
    if (p->shape == OSN_FLUID_MMPP)
        fprintf(gp, "MMPP-2 %g/%g per s", p->mmpp_rate[0], p->mmpp_rate[1]);
    else
        fprintf(gp, "%g/s", p->base_rate);
    if (p->shape == OSN_FLUID_BURST)
        fprintf(gp, " + %g/s for %g s at %g s", p->burst_rate, p->burst_duration, p->burst_start);
    else if (p->shape == OSN_FLUID_STEP)
        fprintf(gp, ", %g/s from %g s", p->step_rate, p->step_time);
    else if (p->shape == OSN_FLUID_SLOWDOWN)
        fprintf(gp, ", capacity x %g for %g s at %g s", p->slowdown_factor, p->slowdown_duration,
                p->slowdown_start);

    /* Every figure says what it averages (issue 35): the fluid model is one trajectory, fixed
     * by its input; only the MMPP profile draws its phases, from one seed. */
    fprintf(gp, ", control %s\\n", osn_fluid_ctl_name(res->cfg.control.kind));
    if (p->shape == OSN_FLUID_MMPP)
        fprintf(gp,
                "fluid model: one trajectory, the MMPP phases drawn with seed %" PRIu64 "; no "
                "replications, no interval\" noenhanced\n",
                p->seed);
    else
        fprintf(gp, "fluid model: one deterministic trajectory; no replications, no "
                    "interval\" noenhanced\n");
    fprintf(gp,
            "set xlabel 'time (s)'\nset ylabel 'queue (messages)'\n"
            "set y2label 'retransmissions sent, capacity (1/s)'\nset y2tics\nset ytics nomirror\n"
            "set grid\nset yrange [0:*]\n"
            /* Below the axes: inside, an opaque legend cut the shaded window (issue 35). */
            "set key below center horizontal Left reverse\n");
    if (isfinite(t0) && isfinite(t1))
        fprintf(gp, "set xrange [%g:%g]\n", t0, t1);
    mark_window(gp, p);
    /* Retransmissions are drawn solid and thin: dashes on a curve that changes every slot
     * turn into a hatch. The capacity is the line the retransmission rate eats into. */
    if (res->hops == 2)
        fprintf(gp,
                "plot $d using 1:2 with lines lw 2 lc rgb '#1f77b4' title 'P1 queue (left axis)', "
                "$d using 1:4 with lines lw 2 lc rgb '#2ca02c' title 'P2 queue (left axis)', "
                "$d using 1:3 axes x1y2 with lines lw 1 lc rgb '#d62728' "
                "title 'UAC retransmissions (right axis)', "
                "$d using 1:5 axes x1y2 with lines lw 1 lc rgb '#ff7f0e' "
                "title 'P1 retransmissions (right axis)', "
                "%g axes x1y2 with lines dt 2 lw 1 lc rgb '#1f77b4' title 'P1 capacity %g/s', "
                "%g axes x1y2 with lines dt 2 lw 1 lc rgb '#2ca02c' title 'P2 capacity %g/s'\n",
                res->cfg.server[0].rate, res->cfg.server[0].rate, res->cfg.server[1].rate,
                res->cfg.server[1].rate);
    else
        fprintf(gp,
                "plot $d using 1:2 with lines lw 2 lc rgb '#1f77b4' title 'queue (left axis)', "
                "$d using 1:3 axes x1y2 with lines lw 1 lc rgb '#d62728' "
                "title 'retransmissions (right axis)', "
                "%g axes x1y2 with lines dt 2 lw 1 lc rgb '#555555' title 'capacity %g/s (right "
                "axis)'\n",
                res->cfg.server[0].rate, res->cfg.server[0].rate);
    st = osn_gnuplot_close(&g);
    if (st != 0) {
        if (err && errsize)
            snprintf(err, errsize,
                     "gnuplot failed (status %d); is gnuplot (gnuplot-nox) installed?", st);
        rc = OSN_EIO;
        goto out;
    }
    rc = osn_afile_commit(&af, err, errsize);
out:
    osn_gnuplot_close(&g);
    osn_afile_abort(&af);
    return rc;
}
