/*
 * Private to src/sim/: independent replications on worker threads, for the node (run.c) and the
 * SIP network (net.c). Each worker takes the next replication number from a shared counter
 * until there are none left or one has failed; a replication writes only its own results, so
 * the thread count changes the wall time and nothing else.
 */
#ifndef OSN_SIM_PAR_H
#define OSN_SIM_PAR_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "osn/rng.h"

#define OSN__PAR_MAX_THREADS 256

struct osn__par {
    int n;                      /* replications 0 .. n-1 */
    atomic_int next, done, err; /* the next to take, those finished, the first error (0: none) */
    /* Runs replication i; returns 0 or an error code (the job stops taking new ones). */
    int (*rep)(void *ctx, int i);
    void *ctx;
    /* Progress, when report is not NULL: every 0.2 s until all are done, the calling thread
     * calls report(ctx, sum of now[i] / span), each replication keeping now[i] (n of them, its
     * simulated time) up to date and span being the simulated time of all. */
    void (*report)(void *ctx, double done_fraction);
    _Atomic double *now;
    double span;
};

/* Runs every replication of p on min(threads, p->n) threads; on the calling thread alone when
 * that is one and there is no progress to report. Returns the first error, or OSN_EIO when no
 * thread could be started. */
int osn__par_run(struct osn__par *p, int threads);

/* Records err (not 0) as the job's error when it is the first; true then. */
bool osn__par_fail(struct osn__par *p, int err);

/* The streams of n replications (malloc'd; NULL when out of memory): stream i is the master
 * seed's state jumped i times, so replication i draws the same numbers on any thread. */
struct osn_rng *osn__par_streams(uint64_t seed, size_t n);

#endif
