/*
 * Work shared among `parts` processes (osn under mpirun or srun): n items cut into `parts`
 * contiguous blocks, block k being [k n / parts, (k + 1) n / parts); this process does block
 * `part`, then exchange() must copy every other block's slots (n slots of `size` bytes at
 * `slots`, this process's block filled) from the process that did it, as MPI_Allgatherv does in
 * place; 0, or not 0 to fail with OSN_EIO. Every process then holds every item and goes on as
 * one process would; the processes run the same binary on the same architecture (the slots
 * travel as bytes). Used by osn_optimize() (the threshold pairs of a window) and by
 * osn_sim_run() and osn_net_run() (the replications).
 */
#ifndef OSN_SPLIT_H
#define OSN_SPLIT_H

#include <stdbool.h>
#include <stddef.h>

struct osn_split {
    int part, parts;
    int (*exchange)(void *arg, void *slots, long n, size_t size, int parts);
    void *arg;
};

/* The first item of block k of n items cut into parts blocks. */
static inline long osn_split_first(long n, int k, int parts)
{
    return (long)((long long)k * n / parts);
}

/* Whether item i of n is this process's to do (every item without a split). */
static inline bool osn_split_mine(const struct osn_split *s, long n, long i)
{
    return !s || (i >= osn_split_first(n, s->part, s->parts) &&
                  i < osn_split_first(n, s->part + 1, s->parts));
}

#endif
