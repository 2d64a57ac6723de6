/*
 * The ranks of a study under mpirun (or srun): the points to run are dealt round-robin, rank r
 * taking the j-th of them when j % size == r; every other rank sends each point's JSON to rank
 * 0 in its order, and rank 0 alone writes the checkpoint and the outputs, in grid order. A
 * point's numbers depend only on its --set values and seed, so any number of ranks gives the
 * same points as one process. Without MPI at build time, or when not started by a launcher,
 * there is one rank and nothing is loaded (a plain run starts as fast as before).
 */
#ifndef OSN_STUDY_MPI_H
#define OSN_STUDY_MPI_H

#include <stddef.h>

struct osn_split; /* osn/split.h (the plugin, built apart, needs only the declarations) */

/* Joins the launcher's job when there is one; *rank 0 and *size 1 otherwise. -1 after telling
 * why when a launcher started osn but MPI cannot be had (osn-mpi.so missing), else 0. */
int osn_study_mpi_init(const char *cmd, int *rank, int *size);

/* One command whose work the library shares among the ranks (osn/split.h: osn optimize's
 * pairs, a simulation's replications): joins the launcher's job (osn_study_mpi_init), sends the
 * stdout and stderr of every rank but 0 to /dev/null (rank 0 speaks for all), and fills *split
 * (part = rank, parts = ranks, the exchange osn_study_mpi_allgather). *shared is split to hand the
 * library, or NULL with one rank. 0, or -1 after telling why. */
int osn_study_mpi_split(const char *cmd, struct osn_split *split, const struct osn_split **shared);

/* Waits for every rank (nothing with one). */
void osn_study_mpi_barrier(void);

/* Rank != 0: sends rank 0 one point's status (0 or an exit status) and text (its JSON, or the
 * error message). */
void osn_study_mpi_send(int status, const char *text);

/* Rank 0: the next point's status and text from rank `from` (text malloc()ed; NULL when the
 * message cannot be received, with status 2). */
char *osn_study_mpi_recv(int from, int *status);

/* Ends the job: rank 0 with an error stops them all (MPI_Abort); any other rank finalises. */
void osn_study_mpi_finish(int status);

/* Ends the job after an error every rank met alike, before any exchange (a bad option or key:
 * every rank reads the same arguments and files): no rank waits on another, so each finalises
 * and leaves with the status. No MPI_Abort: its killing of ranks already on their way out made
 * mpirun hang or crash now and then under load (1 run in 30 here, CTest cli_study_mpi). */
void osn_study_mpi_finish_everywhere(int status);

/* `osn optimize`'s exchange (osn/optimize.h, struct osn_split): n items of `size` bytes at
 * buf, cut into one contiguous block per rank (block k: [k n / parts, (k + 1) n / parts)), each
 * rank's own block filled; afterwards every rank has every block. 0, or -1 (no MPI). */
int osn_study_mpi_allgather(void *arg, void *buf, long n, size_t size, int parts);

/* What the plugin osn-mpi.so exports as `osn_study_mpi_ops` (study_mpi.c): the functions above,
 * once MPI is known to be wanted. */
struct osn_study_mpi_ops {
    void (*init)(int *rank, int *size);
    void (*barrier)(void);
    void (*send)(int status, const char *text);
    char *(*recv)(int from, int *status);
    void (*finish)(int status, int everywhere);
    int (*allgather)(void *buf, long n, size_t size, int parts);
};

#endif
