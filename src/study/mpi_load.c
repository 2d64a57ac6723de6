/*
 * The ranks of a study (study_mpi.h) as osn sees them: one, unless a launcher started it; then
 * the plugin osn-mpi.so beside the executable is opened and does the MPI part (study_mpi.c).
 */
#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "osn/campaign.h"
#include "osn/split.h"
#include "osn/study_mpi.h"

static const struct osn_study_mpi_ops *ops; /* NULL: one rank, MPI never loaded */

/* Launchers (Open MPI's mpirun, PMIx and PMI ones such as srun) say so in the environment. */
static int launched(void)
{
    return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK") || getenv("PMI_RANK") ||
           getenv("PMI_SIZE");
}

int osn_study_mpi_init(const char *cmd, int *rank, int *size)
{
    char exe[PATH_MAX], path[PATH_MAX + 16];
    ssize_t n;

    *rank = 0;
    *size = 1;
    if (!launched())
        return 0;
    if ((n = readlink("/proc/self/exe", exe, sizeof exe - 1)) < 0) {
        fprintf(stderr,
                "osn %s: started by an MPI launcher, but /proc/self/exe cannot be read "
                "to find osn-mpi.so\n",
                cmd);
        return -1;
    }
    exe[n] = '\0';
    snprintf(path, sizeof path, "%s/osn-mpi.so", dirname(exe));
    /* RTLD_GLOBAL: Open MPI's own components resolve libmpi's symbols through the global
     * scope. */
    void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (!h || !(ops = dlsym(h, "osn_study_mpi_ops"))) {
        fprintf(stderr,
                "osn %s: started by an MPI launcher, but this osn has no MPI support (%s); "
                "build with Open MPI (libopenmpi-dev) or run without mpirun\n",
                cmd, dlerror());
        return -1;
    }
    ops->init(rank, size);
    return 0;
}

int osn_study_mpi_split(const char *cmd, struct osn_split *split, const struct osn_split **shared)
{
    int rank, size;
    if (osn_study_mpi_init(cmd, &rank, &size) != 0)
        return -1;
    *split = (struct osn_split){rank, size, osn_study_mpi_allgather, NULL};
    *shared = size > 1 ? split : NULL;
    if (rank != 0) {
        FILE *out = freopen("/dev/null", "w", stdout), *err = freopen("/dev/null", "w", stderr);
        (void)out; /* failing, the messages go where they went: nothing worse */
        (void)err;
    }
    return 0;
}

void osn_study_mpi_barrier(void)
{
    if (ops)
        ops->barrier();
}

void osn_study_mpi_send(int status, const char *text)
{
    if (ops)
        ops->send(status, text);
}

char *osn_study_mpi_recv(int from, int *status)
{
    *status = OSN_STUDY_FAILED;
    return ops ? ops->recv(from, status) : NULL;
}

void osn_study_mpi_finish(int status)
{
    if (ops)
        ops->finish(status, 0);
}

void osn_study_mpi_finish_everywhere(int status)
{
    if (ops)
        ops->finish(status, 1);
}

int osn_study_mpi_allgather(void *arg, void *buf, long n, size_t size, int parts)
{
    (void)arg;
    return ops ? ops->allgather(buf, n, size, parts) : -1;
}
