/*
 * The replication runner of the study module: the one place where independent replications of
 * a simulation are spread over worker threads (and, through osn/split.h, over MPI ranks), given
 * their random streams and watched for progress. Both simulators call it, the network simulator
 * (osn_net_run) and the single-queue hysteretic simulator (osn_sim_run); it knows nothing of
 * what a replication computes: the simulator hands it one function that runs replication i.
 *
 * Randomness: replication i draws from stream i, the master seed's state jumped i times
 * (osn_rng_jump), computed once up front in replication order. A simulator that splits its
 * replication's stream into one stream per purpose (arrivals, service, links, controllers), each
 * seeded from the next output of stream i in a fixed order, gets common random numbers: two runs
 * that differ in a control parameter see the same arrivals in replication i. Workers take
 * replication numbers from a shared counter and each writes only its own results, so the number
 * of threads or ranks changes the wall time and nothing else.
 */
#ifndef OSN_STUDY_H
#define OSN_STUDY_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "osn/rng.h"
#include "osn/split.h"

#define OSN_STUDY_MAX_THREADS 256

/*
 * Runs replication i on rng (a private copy of stream i, which it may consume), writing only
 * replication i's results. *now (NULL when nobody watches) should be kept at the replication's
 * simulated time now and then, for progress. Returns 0 or an error code, with why in msg (a
 * buffer of msgsize bytes, "" on entry) when there is more to say than the code.
 */
typedef int osn_study_rep_fn(void *ctx, long i, struct osn_rng *rng, _Atomic double *now, char *msg,
                             size_t msgsize);

struct osn_study_reps {
    long n;        /* replications 0 .. n-1 */
    uint64_t seed; /* the master seed */
    int threads;   /* 1 .. OSN_STUDY_MAX_THREADS */
    /* Replications 0 .. have-1 are kept from an earlier run (osn/reps.h) and not run again. */
    long have;
    /* NULL, or this process's share of the replications have .. n-1 (osn/split.h): the others'
     * are not run here; the caller exchanges the results afterwards. */
    const struct osn_split *split;
    osn_study_rep_fn *rep;
    void *ctx;
    /* Progress, when not NULL: every 0.2 s until all are done, the calling thread calls
     * progress(ctx, fraction of the simulated time done), each replication lasting span. */
    void (*progress)(void *ctx, double done_fraction);
    double span;

    /* Out: the replications this process ran, and the first error's message ("" if none). */
    long ran;
    char msg[256];
};

/*
 * Runs the replications of r on min(threads, replications) threads (on the calling thread
 * alone when that is one and there is no progress to report). Returns 0, the first error a
 * replication returned (the others not yet started are not run), OSN_ENOMEM, or OSN_EIO when no
 * thread could be started.
 */
int osn_study_reps_run(struct osn_study_reps *r);

#endif
