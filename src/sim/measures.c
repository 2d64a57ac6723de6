/*
 * The simulated measures as functions of replication totals (sim_int.h), with their keys,
 * units and meanings. The definitions follow docs/models.md and src/model/measures.c so that
 * each simulated value estimates the exact one of the same key: P_s and N_mean are time
 * averages, nu01 counts every exit from mode 0, T_ret is measured onset by onset (not through
 * the renewal identity, which is printed separately as T_ret_renewal), T_norm = P0/nu01 and
 * T_disc = P2/nu12 as in the solver.
 */
#include <math.h>

#include "sim_int.h"

struct def {
    const char *key, *unit, *meaning;
};

static const struct def defs[OSN_SIM_NMEASURES] = {
        [OSN_SIM_P0] = {"P0", "", "fraction of time in normal mode"},
        [OSN_SIM_P1] = {"P1", "", "fraction of time in overload mode"},
        [OSN_SIM_P2] = {"P2", "", "fraction of time in discard mode"},
        [OSN_SIM_N_MEAN] = {"N_mean", "", "mean number of customers in the system"},
        [OSN_SIM_THROUGHPUT] = {"throughput", "1/s", "departures per second"},
        [OSN_SIM_SOJOURN] = {"sojourn", "s", "mean time in the system, measured per customer"},
        [OSN_SIM_T_RET] = {"T_ret", "s", "mean return time, overload onset to normal mode"},
        [OSN_SIM_T_RET_SD] = {"T_ret_sd", "s", "standard deviation of the return time"},
        [OSN_SIM_T_CYC] = {"T_cyc", "s", "mean control cycle, onset to next onset (1/nu01)"},
        [OSN_SIM_T_NORM] = {"T_norm", "s", "mean normal period, P0/nu01"},
        [OSN_SIM_T_DISC] = {"T_disc", "s", "mean discard visit, P2/nu12"},
        [OSN_SIM_MODE_CHANGE_RATE] = {"mode_change_rate", "1/s", "mode changes per second"},
        [OSN_SIM_THETA] = {"theta", "", "fraction of offered traffic not accepted"},
        [OSN_SIM_NU01] = {"nu01", "1/s", "overload onsets per second"},
        [OSN_SIM_NU12] = {"nu12", "1/s", "discard onsets per second"},
        [OSN_SIM_T_RET_RENEWAL] = {"T_ret_renewal", "s", "(P1+P2)/nu01, renewal check of T_ret"},
        [OSN_SIM_PROB_SUM] = {"prob_sum", "", "P0+P1+P2 (1)"},
        [OSN_SIM_LOSS_FLOW1] = {"loss_flow1", "", "fraction of flow 1 arrivals lost"},
        [OSN_SIM_LOSS_FLOW2] = {"loss_flow2", "", "fraction of flow 2 arrivals lost"},
        [OSN_SIM_THROTTLED] = {"throttled", "", "fraction of offered traffic held back upstream"},
        [OSN_SIM_DISCARDED] = {"discarded", "",
                               "fraction of offered traffic discarded by the "
                               "server (mode 2 or full)"},
        [OSN_SIM_T_RET_P50] = {"T_ret_p50", "s", "median return time"},
        [OSN_SIM_T_RET_P90] = {"T_ret_p90", "s", "90% of overload episodes end within this"},
        [OSN_SIM_T_RET_P95] = {"T_ret_p95", "s", "95% of overload episodes end within this"},
        [OSN_SIM_T_RET_P99] = {"T_ret_p99", "s", "99% of overload episodes end within this"},
};

const char *osn_sim_measure_key(enum osn_sim_measure i)
{
    return i < OSN_SIM_NMEASURES ? defs[i].key : "?";
}

const char *osn_sim_measure_unit(enum osn_sim_measure i)
{
    return i < OSN_SIM_NMEASURES ? defs[i].unit : "";
}

const char *osn_sim_measure_meaning(enum osn_sim_measure i)
{
    return i < OSN_SIM_NMEASURES ? defs[i].meaning : "";
}

static double ratio(double a, double b)
{
    return b > 0 ? a / b : NAN;
}

/* One case per measure: a table of formulas, longer than 60 lines but read one row at a time. */
double osn__sim_measure(enum osn_sim_measure i, const double *tot, double *n)
{
    const double T = tot[OSN__TOT_TIME];
    const double offered = tot[OSN__TOT_OFF0] + tot[OSN__TOT_OFF1];
    const double onsets = tot[OSN__TOT_ONSET], nret = tot[OSN__TOT_RET];

    *n = T;
    switch (i) {
    case OSN_SIM_P0:
    case OSN_SIM_P1:
    case OSN_SIM_P2:
        return ratio(tot[OSN__TOT_MODE0 + (i - OSN_SIM_P0)], T);
    case OSN_SIM_N_MEAN:
        return ratio(tot[OSN__TOT_AREA], T);
    case OSN_SIM_THROUGHPUT:
        return ratio(tot[OSN__TOT_DEP], T);
    case OSN_SIM_SOJOURN:
        *n = tot[OSN__TOT_DEP];
        return ratio(tot[OSN__TOT_SOJ], tot[OSN__TOT_DEP]);
    case OSN_SIM_T_RET:
        *n = nret;
        return ratio(tot[OSN__TOT_RET_SUM], nret);
    case OSN_SIM_T_RET_SD: {
        *n = nret;
        if (nret < 2)
            return NAN;
        double mean = tot[OSN__TOT_RET_SUM] / nret;
        double var = (tot[OSN__TOT_RET_SUM2] - mean * tot[OSN__TOT_RET_SUM]) / (nret - 1);
        return sqrt(var > 0 ? var : 0);
    }
    case OSN_SIM_T_CYC:
        *n = onsets;
        return ratio(T, onsets);
    case OSN_SIM_T_NORM:
        *n = onsets;
        return ratio(tot[OSN__TOT_MODE0], onsets);
    case OSN_SIM_T_DISC:
        *n = tot[OSN__TOT_ENTRY2];
        return ratio(tot[OSN__TOT_MODE2], tot[OSN__TOT_ENTRY2]);
    case OSN_SIM_MODE_CHANGE_RATE:
        return ratio(tot[OSN__TOT_CHANGES], T);
    case OSN_SIM_THETA:
        *n = offered;
        return ratio(tot[OSN__TOT_LOST0] + tot[OSN__TOT_LOST1], offered);
    case OSN_SIM_NU01:
        return ratio(onsets, T);
    case OSN_SIM_NU12:
        return ratio(tot[OSN__TOT_ENTRY2], T);
    case OSN_SIM_T_RET_RENEWAL:
        *n = onsets;
        return ratio(tot[OSN__TOT_MODE1] + tot[OSN__TOT_MODE2], onsets);
    case OSN_SIM_PROB_SUM:
        return ratio(tot[OSN__TOT_MODE0] + tot[OSN__TOT_MODE1] + tot[OSN__TOT_MODE2], T);
    case OSN_SIM_LOSS_FLOW1:
        *n = tot[OSN__TOT_OFF0];
        return ratio(tot[OSN__TOT_LOST0], tot[OSN__TOT_OFF0]);
    case OSN_SIM_LOSS_FLOW2:
        *n = tot[OSN__TOT_OFF1];
        return ratio(tot[OSN__TOT_LOST1], tot[OSN__TOT_OFF1]);
    case OSN_SIM_THROTTLED:
        *n = offered;
        return ratio(tot[OSN__TOT_THR], offered);
    case OSN_SIM_DISCARDED:
        *n = offered;
        return ratio(tot[OSN__TOT_DISC], offered);
    case OSN_SIM_T_RET_P50: /* order statistics, not functions of totals: run.c */
    case OSN_SIM_T_RET_P90:
    case OSN_SIM_T_RET_P95:
    case OSN_SIM_T_RET_P99:
    case OSN_SIM_NMEASURES:
        break;
    }
    return NAN;
}
