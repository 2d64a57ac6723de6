/*
 * Replications kept from one run to the next (osn_sim_cfg.keep, osn_net_cfg.keep): the raw
 * totals of replications 0 .. n-1 of one configuration and seed, as the simulator pools them.
 * A run of N >= n replications given them runs only n .. N-1 and pools all N in replication
 * order, so its estimates are those of one run of N, to the bit; afterwards the store holds all
 * N. What the rounds of --precision add to, and what a study's checkpoint saves of a point in
 * progress (src/study/partial.c). The simulator checks the number of totals, not that the
 * configuration is the same: that is the caller's (the study id).
 */
#ifndef OSN_REPS_H
#define OSN_REPS_H

#include <stdint.h>

struct osn_reps {
    long n;             /* replications held: 0 .. n-1 */
    int ntot;           /* totals per replication (osn_sim_reps_ntot(), osn_net_reps_ntot(cfg)) */
    double *tot;        /* n x ntot, replication by replication */
    uint64_t *events;   /* n: events simulated */
    uint64_t *messages; /* n: SIP messages processed (network; 0 for the node) */
    long *nret;         /* n: return times observed (node; 0 for the network) */
    double **ret;       /* n: those return times in order (node; NULL when none) */
    long cap;           /* room for cap replications */
    long ran;           /* set by a run: the replications it simulated itself */
};

/* Room for n replications of ntot totals (the new ones zeroed; r->n unchanged). A store holding
 * replications keeps its ntot. 0, OSN_EINVAL (another ntot) or OSN_ENOMEM. */
int osn_reps_reserve(struct osn_reps *r, long n, int ntot);

/* Frees what r holds and empties it. */
void osn_reps_free(struct osn_reps *r);

#endif
