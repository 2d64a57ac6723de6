/*
 * What a barrier costs: T threads cross one barrier N times, and the wall time per crossing is
 * printed. It prices the windows of a partitioned run (docs/scale.md, "One large run over
 * several cores": a barrier a window). Two barriers: the POSIX one (pthread_barrier_wait, which
 * sleeps on a futex) and a spinning sense-reversing one (C11 atomics, a pause a turn), which is
 * fast while each thread has a core and slow when one must wait for its peer to be scheduled.
 * No OSN code; it measures and never fails on time.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_THREADS 64

static const char usage[] =
        "Usage: bench_barrier [--crossings N] [--threads T] [--kind pthread|spin|both]\n"
        "\n"
        "T threads cross one barrier N times; prints, per kind, one line\n"
        "kind=K threads=T crossings=N wall_s=S ns_per_crossing=X\n"
        "\n"
        "  --crossings N   crossings, 1 .. 1e9 [1000000]\n"
        "  --threads T     threads, 2 .. 64 [2]\n"
        "  --kind K        pthread (pthread_barrier_wait), spin (sense-reversing, C11\n"
        "                  atomics) or both [both]\n";

static pthread_barrier_t pbar;
static _Atomic int arrived;
static _Atomic int sense;
static long crossings;
static int nthreads;
static int spin;

static double wall(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline void pause_turn(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* The last thread to arrive resets the count and flips the sense; the others spin on it. */
static void spin_wait(int *local)
{
    *local = !*local;
    if (atomic_fetch_add_explicit(&arrived, 1, memory_order_acq_rel) == nthreads - 1) {
        atomic_store_explicit(&arrived, 0, memory_order_relaxed);
        atomic_store_explicit(&sense, *local, memory_order_release);
        return;
    }
    while (atomic_load_explicit(&sense, memory_order_acquire) != *local)
        pause_turn();
}

static void *cross(void *arg)
{
    int local = 0;

    (void)arg;
    for (long i = 0; i < crossings; i++) {
        if (spin)
            spin_wait(&local);
        else
            pthread_barrier_wait(&pbar);
    }
    return NULL;
}

/* One kind's run: the calling thread is one of the T. */
static int run(const char *kind)
{
    pthread_t th[MAX_THREADS];
    int err;

    spin = strcmp(kind, "spin") == 0;
    atomic_store(&arrived, 0);
    atomic_store(&sense, 0);
    if ((err = pthread_barrier_init(&pbar, NULL, (unsigned)nthreads)) != 0) {
        fprintf(stderr, "bench_barrier: pthread_barrier_init: %s\n", strerror(err));
        return 1;
    }
    double t0 = wall();
    for (int i = 1; i < nthreads; i++)
        if ((err = pthread_create(&th[i], NULL, cross, NULL)) != 0) {
            fprintf(stderr, "bench_barrier: pthread_create: %s\n", strerror(err));
            exit(1); /* the threads started wait at the barrier for ever */
        }
    cross(NULL);
    for (int i = 1; i < nthreads; i++)
        pthread_join(th[i], NULL);
    double t = wall() - t0;
    pthread_barrier_destroy(&pbar);
    printf("kind=%s threads=%d crossings=%ld wall_s=%.3f ns_per_crossing=%.0f\n", kind, nthreads,
           crossings, t, t / (double)crossings * 1e9);
    return 0;
}

/* The value of option `opt`, a whole number in lo .. hi (1e6 style accepted), or exit 2. */
static long number(const char *opt, const char *v, double lo, double hi)
{
    char *end;

    errno = 0;
    double x = v ? strtod(v, &end) : 0;
    if (!v || end == v || *end || errno || x != (double)(long)x || x < lo || x > hi) {
        fprintf(stderr, "bench_barrier: %s '%s': expected a whole number in %g .. %g\n", opt,
                v ? v : "", lo, hi);
        exit(2);
    }
    return (long)x;
}

int main(int argc, char **argv)
{
    const char *kind = "both";

    crossings = 1000000;
    nthreads = 2;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(usage, stdout);
            return 0;
        } else if (!strcmp(a, "--crossings")) {
            crossings = number(a, v, 1, 1e9), i++;
        } else if (!strcmp(a, "--threads")) {
            nthreads = (int)number(a, v, 2, MAX_THREADS), i++;
        } else if (!strcmp(a, "--kind")) {
            if (!v || (strcmp(v, "pthread") && strcmp(v, "spin") && strcmp(v, "both"))) {
                fprintf(stderr, "bench_barrier: --kind '%s': expected pthread, spin or both\n",
                        v ? v : "");
                return 2;
            }
            kind = v, i++;
        } else {
            fprintf(stderr, "bench_barrier: unknown argument '%s' (see --help)\n", a);
            return 2;
        }
    }
    if (strcmp(kind, "spin") && run("pthread"))
        return 1;
    if (strcmp(kind, "pthread") && run("spin"))
        return 1;
    return 0;
}
