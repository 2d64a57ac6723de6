/*
 * The ranks of a study over MPI (study_mpi.h), built as the plugin osn-mpi.so beside osn: osn
 * opens it only when a launcher started it (mpi_load.c), so that a plain run does not
 * load Open MPI's dozen libraries (measured: about 5 ms more at every start).
 */
#include "osn/study_mpi.h"

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

/* A point on its way to rank 0: its message stays allocated until the send completes. A rank
 * does not wait for rank 0 to take a point (rank 0 takes them in grid order): it starts the
 * next one, and only waits for them all when it has no more (finish()). Without this the
 * ranks went in lockstep, each point's hand-over waiting for rank 0's own point. */
struct pending {
    MPI_Request req[2];
    long head[2];
    char *text;
    struct pending *next;
};

static struct pending *pending;

/* Waits for the sends in flight, sleeping 1 ms between polls (a blocking wait spins a core the
 * others compute on); with `all` false, only frees those done. */
static void reap(int all)
{
    for (struct pending **pp = &pending; *pp;) {
        struct pending *q = *pp;
        int done = 0;
        while (MPI_Testall(2, q->req, &done, MPI_STATUSES_IGNORE) == MPI_SUCCESS && !done && all)
            nanosleep(&(struct timespec){0, 1000000}, NULL);
        if (!done && !all) {
            pp = &q->next;
            continue;
        }
        *pp = q->next;
        free(q->text);
        free(q);
    }
}

static void mpi_send(int status, const char *text)
{
    struct pending *q = calloc(1, sizeof *q);
    reap(0);
    if (!q || !(q->text = strdup(text))) { /* no memory: send it the blocking way */
        free(q);
        long head[2] = {status, (long)strlen(text) + 1};
        MPI_Send(head, 2, MPI_LONG, 0, 1, MPI_COMM_WORLD);
        MPI_Send(text, (int)head[1], MPI_CHAR, 0, 2, MPI_COMM_WORLD);
        return;
    }
    q->head[0] = status;
    q->head[1] = (long)strlen(text) + 1;
    MPI_Isend(q->head, 2, MPI_LONG, 0, 1, MPI_COMM_WORLD, &q->req[0]);
    MPI_Isend(q->text, (int)q->head[1], MPI_CHAR, 0, 2, MPI_COMM_WORLD, &q->req[1]);
    q->next = pending;
    pending = q;
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

static void finish(int status, int everywhere)
{
    int rank;
    if (!active)
        return;
    /* Rank 0 has told the error: stop the ranks that may wait on it. Another rank's own error
     * was sent to rank 0, or is one every rank met (a bad option): it just leaves, and so does
     * rank 0 when the caller says every rank met it (study_mpi.h). */
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (status != 0 && rank == 0 && !everywhere)
        MPI_Abort(MPI_COMM_WORLD, status);
    reap(1);
    MPI_Finalize();
    active = 0;
}

/* In place, every rank's block to every rank; polled with 1 ms sleeps like the receives (a
 * rank that finished its block first would otherwise spin a core the others compute on). */
static int allgather(void *buf, long n, size_t size, int parts)
{
    int *count = malloc((size_t)parts * sizeof *count),
        *displ = malloc((size_t)parts * sizeof *displ);
    int rc = -1, done = 0;
    MPI_Request req;
    if (!active || !count || !displ || (double)n * (double)size > 2e9)
        goto out;
    for (int k = 0; k < parts; k++) {
        long lo = n * k / parts, hi = n * (k + 1) / parts;
        count[k] = (int)((size_t)(hi - lo) * size);
        displ[k] = (int)((size_t)lo * size);
    }
    if (MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf, count, displ, MPI_BYTE,
                        MPI_COMM_WORLD, &req) != MPI_SUCCESS)
        goto out;
    while (!done && MPI_Test(&req, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS)
        if (!done)
            nanosleep(&(struct timespec){0, 1000000}, NULL);
    rc = done ? 0 : -1;
out:
    free(count);
    free(displ);
    return rc;
}

const struct osn_study_mpi_ops osn_study_mpi_ops = {mpi_init, barrier, mpi_send,
                                                    mpi_recv, finish,  allgather};
