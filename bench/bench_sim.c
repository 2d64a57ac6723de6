/*
 * Benchmark of the simulator on the two-loop M|M|1|<L,H>|<H,R> node.
 *
 * Usage: bench_sim [EVENTS] [THREADS]. Simulates the node with L = 10, H = 15, R = 20,
 * lambda = 1.2, lambda' = 0.6, mu = 1 (policy I, no feedback delay) for about EVENTS events
 * (default 1e8) in 4 replications on THREADS worker threads (default 1), which is what
 * `osn sim` runs. Prints one line of key=value pairs: events, wall time (CLOCK_MONOTONIC, the
 * whole osn_sim_run including thread start), events per second, events per second per thread,
 * and P0 and T_ret with half-widths as sanity values (exact: P0 = 0.6546035, T_ret = 11.9168),
 * which bench/simpy_peer.py prints too. An event is an offered arrival or a departure. It
 * measures; it never passes or fails on time.
 */
#include <stdio.h>
#include <stdlib.h>

#include "osn/model.h"
#include "osn/sim.h"

int main(int argc, char **argv)
{
    double events = argc > 1 ? atof(argv[1]) : 1e8;
    int threads = argc > 2 ? atoi(argv[2]) : 1;
    struct osn_model m = {0};
    struct osn_sim_cfg cfg;
    struct osn_sim_result r;
    char msg[256];

    if (!(events >= 1e3) || threads < 1) {
        fprintf(stderr, "usage: bench_sim [EVENTS >= 1000] [THREADS >= 1]\n");
        return 2;
    }
    m.kind = OSN_KIND_TWO_LOOP;
    m.policy = OSN_POLICY_I;
    m.L = 10, m.H = 15, m.R = 20;
    m.flows = 1;
    m.rate = 1.2, m.overload_rate = 0.6;
    m.mu = 1;
    m.service.kind = OSN_LAW_EXP, m.service.rate = 1;
    m.L1 = m.L, m.H1 = m.H, m.L2 = m.H, m.H2 = m.R; /* what osn_model_resolve() fills in */
    osn_sim_cfg_default(&cfg);
    cfg.replications = 4;
    cfg.threads = threads;
    cfg.warmup = 1e3;
    /* About 2.19 events per simulated second: 1.2 offered arrivals and 0.986 departures. */
    cfg.time = events / 2.186 / cfg.replications;
    if (osn_sim_run(&m, &cfg, &r, msg, sizeof msg) != 0) {
        fprintf(stderr, "bench_sim: %s\n", msg);
        return 1;
    }
    printf("engine=osn threads=%d events=%llu wall_s=%.3f events_per_s=%.4g "
           "events_per_s_per_thread=%.4g P0=%.6f P0_ci=%.2g T_ret=%.5f T_ret_ci=%.2g\n",
           threads, (unsigned long long)r.events, r.wall_s, r.events_per_s,
           r.events_per_s / threads, r.est[OSN_SIM_P0].value, r.est[OSN_SIM_P0].hw,
           r.est[OSN_SIM_T_RET].value, r.est[OSN_SIM_T_RET].hw);
    return 0;
}
