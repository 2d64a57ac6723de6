/*
 * Benchmark of the fluid model: one simulated hour at 50 ms slots (72 000 slots), the single
 * server of examples/fluid-burst.ini with the 2 s burst, so that every retransmission number
 * is active for most of the hour. Prints the median wall time of several runs and the slots
 * per second; the target is well under 0.1 s per hour. It measures; it never fails on time.
 *
 *     bench_fluid [HOURS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "osn/fluid.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    double hours = argc > 1 ? atof(argv[1]) : 1, t[15];
    struct osn_fluid_cfg c;
    struct osn_fluid_result *res = NULL;
    char err[256];
    int reps = 15;
    double q = 0;

    osn_fluid_cfg_default(&c);
    c.horizon = 3600 * hours;
    c.profile.shape = OSN_FLUID_BURST;
    c.profile.burst_start = 10;
    c.profile.burst_duration = 2;
    c.profile.burst_rate = 100;
    for (int i = 0; i < reps; i++) {
        double t0 = now();
        if (osn_fluid_run(&res, &c, err, sizeof err) != 0) {
            fprintf(stderr, "bench_fluid: %s\n", err);
            return 1;
        }
        t[i] = now() - t0;
        q = res->sum.final_queue[0];
        res = osn_fluid_result_free(res);
    }
    qsort(t, (size_t)reps, sizeof t[0], cmp);
    long slots = (long)(c.horizon / c.slot + 0.5);
    printf("bench_fluid hours=%g slots=%ld median_s=%.4f min_s=%.4f slots_per_s=%.3g "
           "final_queue=%.0f\n",
           hours, slots, t[reps / 2], t[0], (double)slots / t[reps / 2], q);
    return 0;
}
