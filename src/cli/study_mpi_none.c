/* The ranks of a study when osn is built without MPI (study_mpi.h): always one. */
#include "study_mpi.h"

#include <stdlib.h>

void study_mpi_init(int *rank, int *size)
{
    *rank = 0;
    *size = 1;
}

void study_mpi_barrier(void)
{
}

void study_mpi_send(int status, const char *text)
{
    (void)status;
    (void)text;
}

char *study_mpi_recv(int from, int *status)
{
    (void)from;
    *status = 2;
    return NULL;
}

void study_mpi_finish(int status)
{
    (void)status;
}
