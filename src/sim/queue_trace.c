/*
 * The queue simulator's trace (--trace): one CSV row per interval of replication 0, warm-up
 * included, with the same conventions as the network's (src/sim/net_trace.c): a replication
 * column, t_s the end of the interval (t_s - interval, t_s], units in the column names. A row
 * gives the interval's rates (arrivals offered, held back upstream, discarded by the server,
 * departures), its time averages (customers, time in each mode) and the state at t_s (customers,
 * the server's mode, the upstream's delayed view of it).
 *
 * The rows are differences of the replication's running totals (src/sim/hysteretic.c), so they
 * add up to the estimates exactly: the window's rows, summed, are the window's totals. The
 * totals are only read: the part of the time averages since the last change of state is added
 * here, so a traced run gives the numbers of an untraced one bit for bit.
 */
#include <math.h>
#include <string.h>

#include "sim_int.h"

void osn__sim_trace_start(struct osn__sim_trace *t, FILE *f, double interval)
{
    memset(t, 0, sizeof *t);
    t->f = f;
    t->interval = interval;
    fputs("replication,t_s,offered_per_s,throttled_per_s,discarded_per_s,departures_per_s,"
          "n_mean_customers,P0,P1,P2,n_customers,mode,upstream_mode\n",
          f);
}

double osn__sim_trace_due(const struct osn__sim_trace *t)
{
    /* (k + 1) interval, not a running sum, which would drift. */
    return (double)(t->rows + 1) * t->interval;
}

void osn__sim_trace_rebase(struct osn__sim_trace *t, const double *tot)
{
    for (int k = 0; k < OSN__NTOT; k++)
        t->base[k] -= tot[k];
}

/* A cell with %.9g, or empty (pandas: NaN) for a value that does not exist. */
static void cell(FILE *f, double v)
{
    fputc(',', f);
    if (!isnan(v))
        fprintf(f, "%.9g", v);
}

void osn__sim_trace_row(struct osn__sim_trace *t, const struct osn__sim_trace_state *st,
                        const double *tot)
{
    double now = osn__sim_trace_due(t), iv = t->interval, cum[OSN__NTOT], d[OSN__NTOT];
    FILE *f = t->f;

    /* The totals as they would be if integrated up to now: the state has not changed since
     * st->tlast. */
    memcpy(cum, tot, sizeof cum);
    cum[OSN__TOT_MODE0 + st->mode] += now - st->tlast;
    cum[OSN__TOT_AREA] += (double)st->n * (now - st->tlast);
    for (int k = 0; k < OSN__NTOT; k++)
        d[k] = cum[k] - t->base[k];
    memcpy(t->base, cum, sizeof cum);

    fprintf(f, "0,%.9g", now);
    cell(f, (d[OSN__TOT_OFF0] + d[OSN__TOT_OFF1]) / iv);
    cell(f, d[OSN__TOT_THR] / iv);
    cell(f, d[OSN__TOT_DISC] / iv);
    cell(f, d[OSN__TOT_DEP] / iv);
    cell(f, d[OSN__TOT_AREA] / iv);
    for (int m = 0; m < 3; m++)
        cell(f, d[OSN__TOT_MODE0 + m] / iv);
    fprintf(f, ",%ld,%d,%d", st->n, st->mode, st->umode);
    fputc('\n', f);
    t->rows++;
}
