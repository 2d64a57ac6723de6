/*
 * The ranks of a study over MPI (study_mpi.h), built as the plugin osn-mpi.so beside osn: osn
 * opens it only when a launcher started it (study_mpi_load.c), so that a plain run does not
 * load Open MPI's dozen libraries (measured: about 5 ms more at every start).
 */
#include "study_mpi.h"

#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int active; /* MPI_Init was called */

static void mpi_init(int *rank, int *size)
{
    *rank = 0;
    *size = 1;
    int provided;
    if (MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
        return;
    active = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
}

static void barrier(void)
{
    if (active) {
        MPI_Request req;
        int done = 0;
        if (MPI_Ibarrier(MPI_COMM_WORLD, &req) != MPI_SUCCESS)
            return;
        while (!done && MPI_Test(&req, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS)
            if (!done)
                nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
}

/* MPI_Recv, but sleeping 1 ms between polls: Open MPI's blocking receive spins, and rank 0
 * waiting would take a core from the ranks computing (measured: 2 ranks on 2 busy cores ran
 * slower than 1). */
static int recv_idle(void *buf, int count, MPI_Datatype type, int from, int tag)
{
    MPI_Request req;
    int done = 0;
    if (MPI_Irecv(buf, count, type, from, tag, MPI_COMM_WORLD, &req) != MPI_SUCCESS)
        return -1;
    while (!done) {
        if (MPI_Test(&req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            return -1;
        if (!done)
            nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    return 0;
}

/* MPI_Send, sleeping between polls like recv_idle(): a rank done with its point waits for
 * rank 0 to take it without spinning on a core the others compute on. */
static void send_idle(const void *buf, int count, MPI_Datatype type, int tag)
{
    MPI_Request req;
    int done = 0;
    if (MPI_Isend(buf, count, type, 0, tag, MPI_COMM_WORLD, &req) != MPI_SUCCESS)
        return;
    while (!done && MPI_Test(&req, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS)
        if (!done)
            nanosleep(&(struct timespec){0, 1000000}, NULL);
}

static void mpi_send(int status, const char *text)
{
    long head[2] = {status, (long)strlen(text) + 1};
    send_idle(head, 2, MPI_LONG, 1);
    send_idle(text, (int)head[1], MPI_CHAR, 2);
}

static char *mpi_recv(int from, int *status)
{
    long head[2];
    char *text;
    *status = 2;
    if (recv_idle(head, 2, MPI_LONG, from, 1) != 0 || head[1] < 1 || head[1] > (1L << 30) ||
        !(text = malloc((size_t)head[1])))
        return NULL;
    if (recv_idle(text, (int)head[1], MPI_CHAR, from, 2) != 0) {
        free(text);
        return NULL;
    }
    text[head[1] - 1] = '\0';
    *status = (int)head[0];
    return text;
}

static void finish(int status)
{
    int rank;
    if (!active)
        return;
    /* Rank 0 has told the error: stop the ranks that may wait on it. Another rank's own error
     * was sent to rank 0, or is one every rank met (a bad option): it just leaves. */
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (status != 0 && rank == 0)
        MPI_Abort(MPI_COMM_WORLD, status);
    MPI_Finalize();
    active = 0;
}

const struct study_mpi_ops osn_study_mpi_ops = {mpi_init, barrier, mpi_send, mpi_recv, finish};
