/*
 * Benchmark of the structured solver on the two-loop M|M|1|<L,H>|<H,R> chain.
 *
 * Usage: bench_solve R. Solves the model with L = R/4, H = R/2, lambda = 1.2, lambda' = 0.6,
 * mu = 1 by the general method (what `osn solve --method general` runs), repeating the solve
 * until 0.5 s have passed and at least 3 times, at most 50 times. One R per process, so the peak
 * RSS printed is that R's own. Prints one line of key=value pairs: the median wall time of one
 * solve (CLOCK_MONOTONIC), states per second, peak RSS, and P0 and T_ret as sanity values that
 * bench/scipy_peer.py prints too. It measures; it never passes or fails on time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include "osn/err.h"
#include "osn/model.h"
#include "osn/xd.h"

#define MIN_REPS    3
#define MAX_REPS    50
#define MIN_SECONDS 0.5

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of n > 0 values; sorts them. */
static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Peak resident set of this process in MiB (Linux reports ru_maxrss in KiB). */
static double peak_rss_mib(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return -1;
    return (double)ru.ru_maxrss / 1024.0;
}

int main(int argc, char **argv)
{
    char *end;
    double r = argc == 2 ? strtod(argv[1], &end) : 0;
    if (argc != 2 || *end != '\0' || r < 4 || r > (double)OSN_R_MAX) {
        fprintf(stderr, "usage: bench_solve R   (4 <= R <= %ld, e.g. 1e6)\n", OSN_R_MAX);
        return 2;
    }

    struct osn_model m = {
            .kind = OSN_KIND_TWO_LOOP,
            .policy = OSN_POLICY_I,
            .R = (long)r,
            .flows = 1,
            .rate = 1.2,
            .overload_rate = 0.6,
            .mu = 1.0,
    };
    m.L = m.R / 4;
    m.H = m.R / 2;
    osn_model_resolve(&m);

    const char *bad_key = NULL;
    char msg[256] = "";
    int err = osn_model_check(&m, &bad_key, msg, sizeof msg);
    if (err) {
        fprintf(stderr, "bench_solve: %s: %s (%s)\n", bad_key ? bad_key : "model", msg,
                osn_strerror(err));
        return 2;
    }

    double t[MAX_REPS], total = 0;
    struct osn_measures ms;
    int reps = 0;
    while (reps < MAX_REPS && (reps < MIN_REPS || total < MIN_SECONDS)) {
        double t0 = now_seconds();
        err = osn_solve(&m, OSN_METHOD_GENERAL, &ms, NULL, NULL);
        t[reps] = now_seconds() - t0;
        if (err) {
            fprintf(stderr, "bench_solve: R=%ld: osn_solve: %s\n", m.R, osn_strerror(err));
            return 1;
        }
        total += t[reps++];
    }

    double med = median(t, reps);
    char p0[48], tret[48];
    osn_xd_format(ms.P[0], 12, p0, sizeof p0);
    osn_xd_format(ms.T_ret, 12, tret, sizeof tret);
    printf("bench_solve R=%ld L=%ld H=%ld states=%ld reps=%d median_s=%.4g states_per_s=%.4g "
           "peak_rss_mib=%.1f solver_mib=%.1f P0=%s T_ret=%s method=%s\n",
           m.R, m.L, m.H, ms.states, reps, med, (double)ms.states / med, peak_rss_mib(),
           (double)osn_model_solver_bytes(&m) / (1024.0 * 1024.0), p0, tret,
           osn_method_name(ms.method));
    return 0;
}
