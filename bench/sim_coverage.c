/*
 * Coverage of the simulator's 95% confidence intervals (not part of CTest: it takes a while).
 *
 * Usage: sim_coverage [SEEDS] [TIME] [REPLICATIONS] [THREADS]. For each of five models (two-loop
 * M|M|1 at lambda = 1.2, two flows, policy II, bi-level at heavy load, two-loop M|D|1) it runs
 * SEEDS independent simulations (default 200) of REPLICATIONS replications (default 10) of
 * TIME seconds (default 2e4) after a 500 s warm-up, and counts how often the exact value from
 * osn_solve lies inside the 95% interval, per measure. A correct interval covers about 95% of
 * the time; with 200 seeds the binomial standard error is 1.5 points. Short runs are the hard
 * case for the ratio estimators (T_ret, T_disc), whose jackknife intervals are asymptotic.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "osn/model.h"
#include "osn/sim.h"

struct mdef {
    const char *name;
    struct osn_model m;
};

static struct osn_model base(double lam, double lp, long L, long H, long R)
{
    struct osn_model m = {0};
    m.kind = OSN_KIND_TWO_LOOP;
    m.policy = OSN_POLICY_I;
    m.L = L, m.H = H, m.R = R;
    m.flows = 1;
    m.rate = lam, m.overload_rate = lp;
    m.mu = 1;
    m.service.kind = OSN_LAW_EXP, m.service.rate = 1;
    osn_model_resolve(&m);
    return m;
}

static const enum osn_sim_measure measured[] = {
        OSN_SIM_P0,         OSN_SIM_P1,      OSN_SIM_P2,    OSN_SIM_N_MEAN,
        OSN_SIM_THROUGHPUT, OSN_SIM_SOJOURN, OSN_SIM_T_RET, OSN_SIM_T_RET_SD,
        OSN_SIM_T_CYC,      OSN_SIM_NU01,    OSN_SIM_THETA,
};
#define NMEAS (sizeof measured / sizeof measured[0])

static double exact_of(const struct osn_measures *ex, enum osn_sim_measure i)
{
    switch (i) {
    case OSN_SIM_P0:
    case OSN_SIM_P1:
    case OSN_SIM_P2:
        return osn_xd_to_double(ex->P[i - OSN_SIM_P0]);
    case OSN_SIM_N_MEAN:
        return osn_xd_to_double(ex->N_mean);
    case OSN_SIM_THROUGHPUT:
        return osn_xd_to_double(ex->throughput);
    case OSN_SIM_SOJOURN:
        return osn_xd_to_double(ex->sojourn);
    case OSN_SIM_T_RET:
        return osn_xd_to_double(ex->T_ret);
    case OSN_SIM_T_RET_SD:
        return osn_xd_to_double(ex->T_ret_sd);
    case OSN_SIM_T_CYC:
        return osn_xd_to_double(ex->T_cyc);
    case OSN_SIM_NU01:
        return osn_xd_to_double(ex->nu01);
    case OSN_SIM_THETA:
        return osn_xd_to_double(ex->theta);
    default:
        return NAN;
    }
}

int main(int argc, char **argv)
{
    int seeds = argc > 1 ? atoi(argv[1]) : 200;
    double time = argc > 2 ? atof(argv[2]) : 2e4;
    int reps = argc > 3 ? atoi(argv[3]) : 10;
    int threads = argc > 4 ? atoi(argv[4]) : 1;
    struct mdef models[5];
    long total = 0, covered_all = 0;

    models[0] = (struct mdef){"two-loop M|M|1 1.2 10 15 20", base(1.2, 0.6, 10, 15, 20)};
    models[1] = (struct mdef){"two flows 0.5+0.7 5 10 20", base(1.2, 0.6, 5, 10, 20)};
    models[1].m.flows = 2, models[1].m.rate1 = 0.5, models[1].m.rate2 = 0.7;
    models[2] = (struct mdef){"policy II 1.2 5 10 20", base(1.2, 0.6, 5, 10, 20)};
    models[2].m.policy = OSN_POLICY_II;
    models[3] = (struct mdef){"bi-level 2 6 8 12 15 at 1.5", base(1.5, 1.0, 0, 0, 15)};
    models[3].m.kind = OSN_KIND_BI_LEVEL;
    models[3].m.L1 = 2, models[3].m.H1 = 6, models[3].m.L2 = 8, models[3].m.H2 = 12;
    models[4] = (struct mdef){"two-loop M|D|1 1.2 10 15 20", base(1.2, 0.6, 10, 15, 20)};
    models[4].m.service.kind = OSN_LAW_DET;

    printf("95%% interval coverage: %d seeds x %d replications x %g s (warm-up 500 s)\n", seeds,
           reps, time);
    printf("%-30s", "model");
    for (size_t k = 0; k < NMEAS; k++)
        printf(" %9s", osn_sim_measure_key(measured[k]));
    printf("\n");
    for (int i = 0; i < 5; i++) {
        struct osn_measures ex;
        int hits[NMEAS] = {0}, tried[NMEAS] = {0};
        if (osn_solve(&models[i].m, OSN_METHOD_GENERAL, &ex, NULL, NULL) != 0) {
            printf("%-30s (the solver does not take this model)\n", models[i].name);
            continue;
        }
        for (int s = 0; s < seeds; s++) {
            struct osn_sim_cfg cfg;
            struct osn_sim_result r;
            char msg[200];
            osn_sim_cfg_default(&cfg);
            cfg.time = time, cfg.warmup = 500, cfg.replications = reps, cfg.threads = threads;
            cfg.seed = 1000003u * (uint64_t)(i + 1) + (uint64_t)s;
            if (osn_sim_run(&models[i].m, &cfg, &r, msg, sizeof msg) != 0) {
                fprintf(stderr, "sim_coverage: %s\n", msg);
                return 1;
            }
            for (size_t k = 0; k < NMEAS; k++) {
                const struct osn_sim_est *e = &r.est[measured[k]];
                double x = exact_of(&ex, measured[k]);
                if (!isfinite(e->hw) || !isfinite(x) ||
                    (measured[k] == OSN_SIM_T_RET_SD && !ex.have_sd))
                    continue;
                tried[k]++;
                hits[k] += fabs(e->value - x) <= e->hw;
            }
        }
        printf("%-30s", models[i].name);
        for (size_t k = 0; k < NMEAS; k++) {
            if (tried[k])
                printf(" %8.1f%%", 100.0 * hits[k] / tried[k]);
            else
                printf(" %9s", "-");
            total += tried[k];
            covered_all += hits[k];
        }
        printf("\n");
    }
    printf("all measures and models: %.1f%% of %ld intervals cover the exact value\n",
           100.0 * (double)covered_all / (double)total, total);
    return 0;
}
