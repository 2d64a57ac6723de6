/*
 * Benchmark of the threshold optimiser (osn optimize).
 *
 * Usage: bench_optimize [R...] (default 100 200). For each R it runs osn_optimize() on the
 * two-loop model (lambda = 1.2, lambda' = 0.6, mu = 1, max_throttle = 0.5, max_discard = 1e-3,
 * the search `osn optimize` runs) with exponential service, then with constant service, and
 * prints one line of key=value pairs per run: wall time (median of 3 runs), pairs evaluated,
 * pairs per second and the optimum. Constant service prints "not supported
 * yet" with the solver's reason until osn_solve() handles it.
 *
 * Two more figures answer "does per-pair setup matter?": `loop_s` is the same R^2/2 solves as a
 * bare loop of osn_solve() calls (exponential service only, -1 otherwise; the optimiser's own
 * bookkeeping is the difference), and
 * `fixed_us` is the cost of one solve of the smallest model (R = 2), an upper bound on the
 * solver's per-call setup that a workspace reused across pairs could save. It measures; it never
 * passes or fails on time. Each case runs on one thread, then on one per CPU (threads=all).
 * Exponential service runs twice: every pair solved (scan=plain, cfg.exhaustive) and screened by
 * the closed forms (scan=screened: solved_in_full says how many pairs the screen had to solve).
 * Then the quantile objectives (objective=T_ret_p95, T_ret_p99: every pair's return-time
 * distribution on top of its solve) on one thread, beside the plain mean scan of the same R:
 * `vs_mean` is their ratio of wall times (one run each, R <= 100 only: about 30 at R = 100).
 * Last, the screened scan at R = 1000 beside an estimate of the plain one from a sample of its
 * pairs, and the screened scan at R = 10^4 (one run: about half a minute).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "osn/err.h"
#include "osn/model.h"
#include "osn/optimize.h"
#include "osn/xd.h"

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

static struct osn_model model(long R, enum osn_law_kind law)
{
    struct osn_model m = {0};
    m.kind = OSN_KIND_TWO_LOOP;
    m.policy = OSN_POLICY_I;
    m.L = 0;
    m.H = 1;
    m.R = R;
    m.flows = 1;
    m.rate = 1.2;
    m.overload_rate = 0.6;
    m.mu = 1;
    m.process = OSN_ARR_POISSON;
    m.service.kind = law;
    m.service.rate = 1;
    osn_model_resolve(&m);
    return m;
}

/* The bare loop: every pair solved, nothing kept. Returns the wall time. */
static double bare_loop(const struct osn_model *base)
{
    struct osn_measures ms;
    struct osn_model m = *base;
    double t0 = now_seconds();
    for (long H = 1; H < m.R; H++)
        for (long L = 0; L < H; L++) {
            osn_optimize_set_pair(&m, L, H);
            if (osn_solve(&m, OSN_METHOD_GENERAL, &ms, NULL, NULL) != 0)
                return -1;
        }
    return now_seconds() - t0;
}

/* Mean time of one solve of the smallest model, in microseconds. */
static double fixed_cost_us(void)
{
    struct osn_model m = model(2, OSN_LAW_EXP);
    struct osn_measures ms;
    const int n = 20000;
    double t0 = now_seconds();
    for (int i = 0; i < n; i++)
        osn_solve(&m, OSN_METHOD_GENERAL, &ms, NULL, NULL);
    return 1e6 * (now_seconds() - t0) / n;
}

/* One search, timed (median of 3; 1 past R = 2000). Returns the median in seconds, or -1. */
static double run_obj(long R, enum osn_law_kind law, const char *name, int threads, bool exhaustive,
                      enum osn_opt_objective obj, double mean_s)
{
    struct osn_model m = model(R, law);
    struct osn_opt_cfg cfg = {0};
    struct osn_opt_result res;
    double t[3];
    int reps = R > 2000 || obj != OSN_OPT_T_RET ? 1 : 3, rc = 0; /* a quantile: ~6 s at 100 */
    char b[64];
    const char *why = osn_solve_unsupported(&m, OSN_METHOD_GENERAL);

    if (why) {
        printf("bench_optimize R=%ld service=%s: not supported yet (%s)\n", R, name, why);
        return -1;
    }
    cfg.has[OSN_OPT_THROTTLE] = cfg.has[OSN_OPT_DISCARD] = true;
    cfg.bound[OSN_OPT_THROTTLE] = 0.5;
    cfg.bound[OSN_OPT_DISCARD] = 1e-3;
    cfg.threads = threads;
    cfg.exhaustive = exhaustive;
    cfg.objective = obj;
    for (int i = 0; i < reps && !rc; i++) {
        double t0 = now_seconds();
        rc = osn_optimize(&m, &cfg, &res, NULL, NULL, NULL, NULL);
        t[i] = now_seconds() - t0;
    }
    if (rc) {
        printf("bench_optimize R=%ld service=%s objective=%s: failed: %s\n", R, name,
               osn_opt_objective_name(obj), osn_strerror(rc));
        return -1;
    }
    qsort(t, (size_t)reps, sizeof t[0], cmp_double);
    bool plain = res.solved == res.evaluated;
    double med = t[reps / 2];
    double loop = law == OSN_LAW_EXP && threads == 1 && plain && R <= 200 && obj == OSN_OPT_T_RET
                          ? bare_loop(&m)
                          : -1;
    printf("bench_optimize R=%ld service=%s scan=%s threads=%s pairs=%ld feasible=%ld "
           "solved_in_full=%ld median_s=%.3f pairs_per_s=%.0f us_per_pair=%.3f loop_s=%.3f L=%ld "
           "H=%ld T_ret=%s",
           R, name, plain ? "plain" : "screened", threads ? "1" : "all", res.evaluated,
           res.feasible, res.solved, med, (double)res.evaluated / med,
           1e6 * med / (double)res.evaluated, loop, res.best.L, res.best.H,
           osn_xd_format(res.best.ms.T_ret, 10, b, sizeof b));
    if (obj != OSN_OPT_T_RET)
        printf(" objective=%s %s=%s vs_mean=%.1f", osn_opt_objective_name(obj),
               osn_opt_objective_name(obj),
               osn_xd_format(osn_opt_objective_value(obj, &res.best.ms), 10, b, sizeof b),
               mean_s > 0 ? med / mean_s : -1);
    putchar('\n');
    return med;
}

static double run(long R, enum osn_law_kind law, const char *name, int threads, bool exhaustive)
{
    return run_obj(R, law, name, threads, exhaustive, OSN_OPT_T_RET, -1);
}

/*
 * The exponential-service scan at R = 1000 (499,500 pairs) takes minutes, too long for make
 * bench: every `step`-th pair of the scan order is solved instead (the sample spans every H),
 * and the mean time of a pair times the number of pairs estimates the whole scan on one thread.
 */
static void sampled(long R, long step)
{
    struct osn_model m = model(R, OSN_LAW_EXP);
    struct osn_measures ms;
    long idx = 0, n = 0;
    double t = 0;
    for (long H = 1; H < R; H++)
        for (long L = 0; L < H; L++, idx++) {
            if (idx % step)
                continue;
            osn_optimize_set_pair(&m, L, H);
            double t0 = now_seconds();
            if (osn_solve(&m, OSN_METHOD_GENERAL, &ms, NULL, NULL) != 0) {
                printf("bench_optimize R=%ld service=exp sampled: solve failed\n", R);
                return;
            }
            t += now_seconds() - t0;
            n++;
        }
    long pairs = osn_optimize_pairs(&m);
    printf("bench_optimize R=%ld service=exp sampled=%ld (every %ld-th pair) us_per_pair=%.1f "
           "estimate_s=%.1f (all %ld pairs, one thread)\n",
           R, n, step, 1e6 * t / (double)n, t / (double)n * (double)pairs, pairs);
}

int main(int argc, char **argv)
{
    long def[] = {100, 200};
    int n = argc > 1 ? argc - 1 : 2;

    printf("bench_optimize: two-loop, lambda=1.2 lambda'=0.6 mu=1, max_throttle=0.5 "
           "max_discard=1e-3; fixed_us=%.1f (one solve at R=2)\n",
           fixed_cost_us());
    for (int i = 0; i < n; i++) {
        long R = argc > 1 ? strtol(argv[i + 1], NULL, 10) : def[i];
        if (R < 2 || R > 100000) {
            fprintf(stderr, "usage: bench_optimize [R...]   (2 <= R <= 100000)\n");
            return 2;
        }
        double mean_s = -1;
        for (int threads = 1; threads >= 0; threads--) { /* 1, then one per CPU (0) */
            double t = run(R, OSN_LAW_EXP, "exp", threads, true);
            mean_s = threads ? t : mean_s;
            run(R, OSN_LAW_DET, "det", threads, true);
        }
        if (R <= 100) /* 30 times the mean's scan: R = 200 would take minutes */
            for (int o = OSN_OPT_T_RET_P95; o < OSN_OPT_NOBJ; o++)
                run_obj(R, OSN_LAW_EXP, "exp", 1, true, (enum osn_opt_objective)o, mean_s);
        run(R, OSN_LAW_EXP, "exp", 1, false);
    }
    /* The case: exponential service at R = 1000, screened, against the plain scan's
     * estimate from a sample; then R = 10^4, which only the screen reaches. */
    run(1000, OSN_LAW_EXP, "exp", 1, false);
    sampled(1000, 997);
    run(10000, OSN_LAW_EXP, "exp", 1, false);
    return 0;
}
