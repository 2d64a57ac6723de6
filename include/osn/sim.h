/*
 * Simulation of the single hysteretic queue (the queue simulator; "node" means only the real
 * `osn node`): exactly the models of `osn solve` (any thresholds,
 * named kinds, switching policy I or II, every service law of struct osn_law, Poisson / two
 * flows / MMPP / trace input), plus what the algebra cannot do: a feedback delay d, where the
 * upstream throttles by the server's mode as it was d seconds ago while the server itself still
 * discards in mode 2 and when full.
 *
 * Method: independent replications after a warm-up. Replication i uses RNG stream i of the
 * master seed (include/osn/rng.h), so the numbers do not depend on the number of threads. Each
 * measure is a smooth function of per-replication totals (times in each mode, counts, sums of
 * return times, ...); its point estimate uses the totals pooled over all replications and its
 * half-width is the jackknife over replications with a t quantile (n - 1 degrees of freedom),
 * which for a time average is exactly the classical t interval of the replication means.
 */
#ifndef OSN_SIM_H
#define OSN_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "osn/model.h"
#include "osn/reps.h"
#include "osn/split.h"

/* The measures, in output order; keys match `osn solve` where the measure exists there. */
enum osn_sim_measure {
    OSN_SIM_P0,
    OSN_SIM_P1,
    OSN_SIM_P2,
    OSN_SIM_N_MEAN,
    OSN_SIM_THROUGHPUT,
    OSN_SIM_SOJOURN,
    OSN_SIM_T_RET,
    OSN_SIM_T_RET_SD,
    OSN_SIM_T_CYC,
    OSN_SIM_T_NORM,
    OSN_SIM_T_DISC,
    OSN_SIM_MODE_CHANGE_RATE,
    OSN_SIM_THETA,
    OSN_SIM_NU01,
    OSN_SIM_NU12,
    OSN_SIM_T_RET_RENEWAL,
    OSN_SIM_PROB_SUM,
    OSN_SIM_LOSS_FLOW1,
    OSN_SIM_LOSS_FLOW2,
    OSN_SIM_THROTTLED, /* offered arrivals the upstream held back (by its delayed view) */
    OSN_SIM_DISCARDED, /* offered arrivals the server discarded (mode 2 or full) */
    OSN_SIM_T_RET_P50, /* empirical quantiles of the return time (all replications pooled) */
    OSN_SIM_T_RET_P90,
    OSN_SIM_T_RET_P95,
    OSN_SIM_T_RET_P99,
    OSN_SIM_NMEASURES
};

/* Key ("T_ret"), unit ("s", "1/s" or "") and one-line meaning of a measure. */
const char *osn_sim_measure_key(enum osn_sim_measure i);
const char *osn_sim_measure_unit(enum osn_sim_measure i);
const char *osn_sim_measure_meaning(enum osn_sim_measure i);

/* Called from the thread that called osn_sim_run(), about five times a second. */
typedef void (*osn_sim_progress_fn)(double done_fraction, uint64_t events, double elapsed_s,
                                    void *arg);

struct osn_sim_cfg {
    double time;           /* simulated seconds per replication, after the warm-up (> 0) */
    double warmup;         /* seconds simulated and discarded first (>= 0) */
    int replications;      /* >= 2 for confidence intervals (1 gives none) */
    uint64_t seed;         /* master seed */
    double feedback_delay; /* d >= 0 (s): the upstream acts on the mode of d seconds ago */
    int threads;           /* worker threads, >= 1 */
    double level;          /* confidence level of the half-widths, e.g. 0.95 */
    /* Replication 0 writes one CSV row per trace_interval seconds (> 0) of its run, warm-up
     * included, to trace (borrowed; NULL: no trace): see osn__sim_trace_* in src/sim. */
    FILE *trace;
    double trace_interval;
    osn_sim_progress_fn progress; /* may be NULL */
    void *progress_arg;
    bool keep_tret; /* hand the return times over in osn_sim_result.T_ret_sorted */
    /* NULL, or replications x OSN_SIM_NMEASURES doubles that receive each replication's own
     * measures (replication i's measure k at [i * OSN_SIM_NMEASURES + k], NAN where it has none):
     * what a paired comparison of two runs with the same seed works on (osn sim --compare). The
     * result's estimates do not change. */
    double *rep_measures;
    /* NULL, or the replications shared among processes (osn/split.h): this one runs its block,
     * then every process holds every replication's totals and estimates as one process would,
     * so the result is the same to the bit. */
    const struct osn_split *split;
    /* NULL, or replications kept from an earlier run of this configuration and seed
     * (osn/reps.h): those it holds are not run again, and afterwards it holds all
     * cfg->replications (its `ran` says how many this run simulated). With a split, the
     * processes share the replications not kept, each process's store holding the same. */
    struct osn_reps *keep;
};

/* Defaults: time 1e5, warmup 1e3, 10 replications, seed 1, no delay, 1 thread, level 0.95. */
void osn_sim_cfg_default(struct osn_sim_cfg *cfg);

/* One estimate: value, confidence half-width (NaN when not available) and sample count. */
struct osn_sim_est {
    double value;
    double hw;
    double n; /* observations behind it: time in s for time averages, else a count */
};

struct osn_sim_result {
    struct osn_sim_est est[OSN_SIM_NMEASURES];
    int replications;
    double level;
    uint64_t events;     /* events simulated (arrivals offered, departures, delayed notices) */
    double wall_s;       /* wall-clock time of the run */
    double events_per_s; /* events / wall_s */
    int threads;
    double time; /* observed time per replication after the warm-up: cfg->time, or less when a
                  * trace ends the observation at its last instant */
    double *T_ret_sorted; /* with cfg->keep_tret: every return time observed, ascending;
                           * the caller free()s it (NULL otherwise or when none) */
    long T_ret_n;
};

/*
 * Checks a resolved model and a configuration for simulation. Returns 0 or OSN_EINVAL with a
 * sentence in msg; *bad_key (may be NULL) gets the scenario key at fault ("sim.time", ...).
 */
int osn_sim_check(const struct osn_model *m, const struct osn_sim_cfg *cfg, const char **bad_key,
                  char *msg, size_t msgsize);

/* The totals a replication of the queue keeps (struct osn_reps.ntot). */
int osn_sim_reps_ntot(void);

/*
 * Runs cfg->replications replications of the queue and fills *out. The model is borrowed (its
 * trace and empirical samples are only read). Returns 0, OSN_EINVAL (see osn_sim_check, with a
 * message) or OSN_ENOMEM; OSN_EIO when a thread cannot be started.
 */
int osn_sim_run(const struct osn_model *m, const struct osn_sim_cfg *cfg,
                struct osn_sim_result *out, char *msg, size_t msgsize);

#endif
