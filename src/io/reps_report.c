/*
 * --replications-out: one CSV row per replication with its own estimate of every headline
 * measure, for the node (osn_sim_cfg.rep_measures) and the network (osn_net_cfg.rep_measures).
 *
 * A row names the replication, the master seed and the RNG stream it ran on (replication i runs
 * on stream i of the seed), so that one replication can be told apart and run again. The
 * reported estimates are f(pooled totals): for a rate or a time fraction (every replication
 * observes the same window) that is the mean of these rows; for a ratio (theta, a mean delay, a
 * percentile) it weighs each replication by what it observed, and the plain mean of the rows
 * may differ. Values are written to 17 digits, a missing one as an empty cell.
 */
#include <math.h>
#include <stdio.h>

#include "io_int.h"
#include "osn/err.h"
#include "osn/net_scenario.h"
#include "osn/sim_scenario.h"
#include "osn/version.h"

static void cell(FILE *f, double v)
{
    fputc(',', f);
    if (isfinite(v))
        fprintf(f, "%.17g", v);
}

static int done(FILE *f, char *err, size_t errsize)
{
    if (ferror(f)) {
        if (err && errsize)
            snprintf(err, errsize, "write error");
        return OSN_EIO;
    }
    return 0;
}

int osn_sim_report_reps_csv_write(FILE *f, const struct osn_sim_scenario *s, const double *per_rep,
                                  char *err, size_t errsize)
{
    const struct osn_sim_cfg *c = &s->cfg;

    fputs("replication,seed,stream", f);
    for (int k = 0; k < OSN_SIM_NMEASURES; k++)
        fprintf(f, ",%s", osn_sim_measure_key(k));
    fputs(",osn_version\n", f);
    for (int i = 0; i < c->replications; i++) {
        fprintf(f, "%d,%llu,%d", i, (unsigned long long)c->seed, i);
        for (int k = 0; k < OSN_SIM_NMEASURES; k++)
            cell(f, per_rep[(size_t)i * OSN_SIM_NMEASURES + (size_t)k]);
        fprintf(f, ",%s\n", osn_version());
    }
    return done(f, err, errsize);
}

int osn_net_report_reps_csv_write(FILE *f, const struct osn_net_scenario *const *s,
                                  const double *const *per_rep, int n, const char *sweep_key,
                                  char *err, size_t errsize)
{
    if (sweep_key)
        fprintf(f, "%s,", sweep_key);
    fputs("replication,seed,stream", f);
    for (int k = 0; k < OSN_NET_NMEASURES; k++)
        fprintf(f, ",%s", osn_net_measure_key(k));
    fputs(",control,osn_version\n", f);
    for (int r = 0; r < n; r++) {
        const struct osn_net_cfg *c = &s[r]->cfg;
        const struct osn_key_origin *k = sweep_key ? osn_ini_get(&s[r]->ini, sweep_key) : NULL;
        for (int i = 0; i < c->replications; i++) {
            if (sweep_key)
                fprintf(f, "%s,", k ? k->value : "");
            fprintf(f, "%d,%llu,%d", i, (unsigned long long)c->seed, i);
            for (int m = 0; m < OSN_NET_NMEASURES; m++)
                cell(f, per_rep[r][(size_t)i * OSN_NET_NMEASURES + (size_t)m]);
            fprintf(f, ",%s,%s\n", osn_ctl_kind_name(c->ctl_kind), osn_version());
        }
    }
    return done(f, err, errsize);
}
