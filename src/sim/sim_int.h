/*
 * Private interface of src/sim/: the totals one replication of the queue produces, the queue
 * itself (hysteretic.c), its --trace rows (queue_trace.c) and the measures as functions of
 * totals (measures.c).
 */
#ifndef OSN_SIM_INT_H
#define OSN_SIM_INT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "osn/rng.h"
#include "osn/sim.h"

/* Totals of one replication over its observation window (after the warm-up). */
enum osn__sim_tot {
    OSN__TOT_TIME,  /* length of the observation window (s) */
    OSN__TOT_MODE0, /* time in mode 0, 1, 2 (s) */
    OSN__TOT_MODE1,
    OSN__TOT_MODE2,
    OSN__TOT_AREA, /* integral of n dt */
    OSN__TOT_DEP,  /* departures */
    OSN__TOT_SOJ,  /* sum of the sojourn times of those departures */
    OSN__TOT_OFF0, /* offered arrivals of flow 1, flow 2 */
    OSN__TOT_OFF1,
    OSN__TOT_LOST0, /* lost arrivals of flow 1, flow 2 (throttled or discarded) */
    OSN__TOT_LOST1,
    OSN__TOT_THR,     /* arrivals held back by the upstream */
    OSN__TOT_DISC,    /* arrivals discarded by the server */
    OSN__TOT_ONSET,   /* mode 0 -> 1 or 2 */
    OSN__TOT_ENTRY2,  /* entries into mode 2 */
    OSN__TOT_CHANGES, /* mode changes */
    OSN__TOT_RET,     /* completed return periods: count, sum, sum of squares */
    OSN__TOT_RET_SUM,
    OSN__TOT_RET_SUM2,
    OSN__NTOT
};

struct osn__sim_rep {
    double tot[OSN__NTOT];
    uint64_t events;
    double *ret; /* the return times observed after the warm-up, in order (malloc'ed) */
    long nret, ret_cap;
};

/*
 * Runs one replication of the queue on stream `rng` (consumed): warmup, then time seconds of
 * observation. *now_t (may be NULL) is updated with the simulated time every 2^20 events for
 * progress reports. Returns 0 or OSN_ENOMEM.
 */
int osn__sim_queue_run(const struct osn_model *m, const struct osn_sim_cfg *cfg,
                       struct osn_rng *rng, struct osn__sim_rep *rep, _Atomic double *now_t);

/* queue_trace.c: the --trace rows of replication 0 (cfg->trace). */
struct osn__sim_trace {
    FILE *f;
    double interval;
    long rows;              /* rows written */
    double base[OSN__NTOT]; /* the totals as of the last row (warm-up reset undone) */
};

/* The queue's state at a row's instant. */
struct osn__sim_trace_state {
    long n;
    int mode, umode;
    double tlast; /* last change of (n, mode): the totals are integrated up to it */
};

/* Sets t up and writes the header. */
void osn__sim_trace_start(struct osn__sim_trace *t, FILE *f, double interval);
/* The instant of the next row. */
double osn__sim_trace_due(const struct osn__sim_trace *t);
/* Writes the row due, from the running totals tot and the state. */
void osn__sim_trace_row(struct osn__sim_trace *t, const struct osn__sim_trace_state *st,
                        const double *tot);
/* The totals tot are about to be zeroed (end of the warm-up): rows go on from where they are. */
void osn__sim_trace_rebase(struct osn__sim_trace *t, const double *tot);

/* A measure from (pooled) totals; NaN when it has no observation. *n receives its sample size. */
double osn__sim_measure(enum osn_sim_measure i, const double *tot, double *n);

#endif
