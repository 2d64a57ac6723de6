/*
 * Wall-clock time for progress lines and events-per-second figures: a monotonic clock in seconds.
 * Never used inside a model: simulated time is the event set's.
 */
#ifndef OSN_WALL_H
#define OSN_WALL_H

#include <time.h>

static inline double osn_wall_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#endif
