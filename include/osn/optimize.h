/*
 * Optimal thresholds (docs/models.md, "Threshold optimisation").
 *
 *     minimise f(L, H) over integers 0 <= L < H < R
 *     subject to any subset of  P1 + P2 <= max_throttle,  theta <= max_loss,
 *                               P2 <= max_discard,        T_cyc >= min_cycle
 *
 * where the objective f is the mean return time T_ret (the default) or its 95% or 99% quantile
 * (cfg.objective). A quantile needs the return time's distribution at every pair
 * (osn_tret_dist_new(): exponential service only), so it costs more per pair, and the closed-form
 * screen, which knows only the mean, does not apply.
 *
 * For the two-loop and single-loop models the pair is (L, H); for the bi-level model it is
 * (L1, H1) with L2, H2 and R fixed, and only the pairs for which osn_model_check() passes are
 * evaluated. Every pair is solved by osn_solve(..., OSN_METHOD_GENERAL, ...), so the optimiser
 * handles whatever model the solver handles. The search is exhaustive: the answer is the
 * brute-force optimum by construction, and the whole grid of measures can be written out.
 *
 * Definitions (also in `osn optimize --help`):
 *  - Feasible: every given constraint holds, compared in extended range (osn_xd_cmp) with the
 *    bound included (P2 == max_discard is feasible).
 *  - Optimum: the feasible pair with the smallest objective; ties go to the smaller H, then the
 *    smaller L (the scan order). Below, "the objective" is the one chosen; T_ret when none is.
 *  - Relative violation of one constraint at a pair: the factor by which the measure misses its
 *    bound, minus 1: value/bound - 1 for a max_* bound, bound/value - 1 for min_cycle, 0 when it
 *    holds; for a max_* bound of 0 ("never") it is the value itself. The total violation is the
 *    sum over the given constraints.
 *  - Closest pair (reported when no pair is feasible): the smallest total violation; ties by the
 *    objective, then scan order.
 *  - Next-better pair: among the pairs with a smaller objective than the optimum (all of them are
 *    infeasible), the one with the largest objective, i.e. the pair that would win if the
 *    constraints were relaxed a little; ties by scan order.
 *  - Binding constraint: the constraint the next-better pair violates most (largest relative
 *    violation). None when no pair beats the optimum's objective, i.e. the optimum is the
 *    unconstrained one. The slack of each constraint at the optimum, 1 - value/bound
 *    (1 - bound/value for min_cycle), is reported separately: on an integer grid no constraint is
 *    met with equality, so "closest to its bound" would name a constraint even when relaxing it
 *    changes nothing.
 */
#ifndef OSN_OPTIMIZE_H
#define OSN_OPTIMIZE_H

#include <stdbool.h>
#include <stddef.h>

#include "osn/model.h"
#include "osn/split.h"
#include "osn/xd.h"

enum osn_opt_con {
    OSN_OPT_THROTTLE, /* P1 + P2 <= bound */
    OSN_OPT_LOSS,     /* theta <= bound */
    OSN_OPT_DISCARD,  /* P2 <= bound */
    OSN_OPT_CYCLE,    /* T_cyc >= bound */
    OSN_OPT_NCON
};

/*
 * What the search minimises. The quantiles are those of osn_measures.T_ret_q (OSN_TRET_QUANTILES):
 * the smallest t with P(T_ret <= t) >= p, from osn_tret_dist_quantile().
 */
enum osn_opt_objective {
    OSN_OPT_T_RET,     /* the mean return time (the default: 0) */
    OSN_OPT_T_RET_P95, /* its 95% quantile */
    OSN_OPT_T_RET_P99, /* its 99% quantile */
    OSN_OPT_NOBJ
};

/* Most worker threads osn_optimize() starts. */
#define OSN_OPT_MAX_THREADS 64

/*
 * The constraints; a bound is used only when its `has` flag is set. Bounds must be >= 0.
 * threads: the pairs are solved on this many threads (0: one per CPU online, at most
 * OSN_OPT_MAX_THREADS); the result and the order of the callbacks do not depend on it.
 */
/* The pairs shared among processes (osn optimize under mpirun, osn/split.h): each window of
 * consecutive pairs (scan order) is the n items cut into blocks; every process then walks the
 * whole window as one process would, so each gets the same result and the visit and progress
 * callbacks in the same order. */

struct osn_opt_cfg {
    bool has[OSN_OPT_NCON];
    double bound[OSN_OPT_NCON];
    int threads;
    const struct osn_split *split; /* NULL: this process solves every pair */
    /* Solve every pair in full even where the two-loop M|M|1 screen applies (the answer is the
     * same by construction: this is for checking it, and for timing the plain scan). With a
     * split, every process must make the same choice, and pass a visit callback or none alike:
     * the plain scan exchanges blocks of pairs, the screened one nothing. */
    bool exhaustive;
    enum osn_opt_objective objective;
};

/* One evaluated pair, as passed to the visit callback. */
struct osn_opt_pair {
    long L, H; /* L1, H1 for the bi-level model */
    bool feasible;
    double violation;              /* total relative violation, 0 when feasible */
    double viol[OSN_OPT_NCON];     /* per constraint, 0 when it holds or is not given */
    const struct osn_measures *ms; /* borrowed for the duration of the call */
    const struct osn_model *model; /* the model solved, borrowed likewise */
};

/* A reported pair: its thresholds and all its measures. */
struct osn_opt_point {
    bool found; /* false: no such pair (e.g. no next-better pair) */
    long L, H;
    double violation;
    double viol[OSN_OPT_NCON];
    struct osn_measures ms;
};

struct osn_opt_result {
    long evaluated;               /* valid pairs solved */
    long skipped;                 /* pairs rejected by osn_model_check() (bi-level only) */
    long feasible;                /* feasible pairs among the evaluated */
    long solved;                  /* pairs solved in full: all evaluated, fewer when screened */
    struct osn_opt_point best;    /* the optimum; best.found false when no pair is feasible */
    struct osn_opt_point closest; /* smallest total violation; == best when a pair is feasible */
    struct osn_opt_point next;    /* next-better pair (see above); found false when none */
    struct osn_opt_point free;    /* the unconstrained optimum (smallest T_ret of all) */
    int binding;                  /* enum osn_opt_con, or -1 when no constraint binds */
    double slack[OSN_OPT_NCON];   /* at the optimum (given constraints only) */
    /* When osn_optimize() fails on one pair's solve or return-time distribution (e.g.
     * OSN_ETOOBIG: a distribution out of reach), that pair; found false otherwise. */
    struct {
        bool found;
        long L, H;
    } failed;
};

/* Called once per evaluated pair, in scan order (H ascending, then L ascending). */
typedef int (*osn_opt_visit_fn)(const struct osn_opt_pair *p, void *arg);

/* Called after each pair with the number of pairs done and the total to try. */
typedef void (*osn_opt_progress_fn)(long done, long total, void *arg);

/* The key of a constraint in the [optimize] section ("max_throttle", ...). */
const char *osn_opt_con_name(enum osn_opt_con c);

/* The objective's name, as the [optimize] key takes it: "T_ret", "T_ret_p95", "T_ret_p99". */
const char *osn_opt_objective_name(enum osn_opt_objective o);

/* Its value in ms: T_ret, or T_ret_q of the quantile (NaN when ms->have_tret_q is false). */
struct osn_xd osn_opt_objective_value(enum osn_opt_objective o, const struct osn_measures *ms);

/* The measure a constraint bounds, for pair measures ms: P1+P2, theta, P2 or T_cyc. */
struct osn_xd osn_opt_con_value(enum osn_opt_con c, const struct osn_measures *ms);

/*
 * Whether osn_optimize() screens m's pairs for the mean objective: the one-flow two-loop M|M|1
 * model under policy I, whose pairs have O(1) closed forms. Then, called without a visit
 * callback, without cfg.exhaustive and with objective T_ret, it solves in full only the pairs
 * the closed forms cannot decide (a few), and gives the answer of the scan that solves them all.
 */
bool osn_optimize_screens(const struct osn_model *m);

/* Sets the searched pair of m (L, H; or L1, H1 for bi-level) and resolves m. */
void osn_optimize_set_pair(struct osn_model *m, long L, long H);

/*
 * Number of (L, H) pairs the scan will try for model m (before the validity check); 0 when the
 * model has no pair at all.
 */
long osn_optimize_pairs(const struct osn_model *m);

/*
 * Runs the search for the resolved, checked model m (borrowed; its L, H or L1, H1 are ignored)
 * under cfg. `visit` and `progress` may be NULL. Returns 0 (also when no pair is feasible: see
 * res->best.found), OSN_EINVAL for a bad cfg, OSN_ENOTSUP when osn_solve() cannot solve the model
 * (osn_solve_unsupported() says why) or the objective is a quantile and the service is not
 * exponential (or the input a trace), OSN_ECONFIG when no pair is valid, OSN_ENOMEM, another
 * solver error (res->failed names the pair; OSN_ETOOBIG for a quantile objective: that pair's
 * return-time distribution is out of reach), or the first non-zero value returned by `visit`.
 * With a quantile objective every pair's T_ret_q is filled (have_tret_q), so the visit callback
 * and the reported pairs carry all four quantiles. *res is written in every case (partially on
 * failure).
 */
int osn_optimize(const struct osn_model *m, const struct osn_opt_cfg *cfg,
                 struct osn_opt_result *res, osn_opt_visit_fn visit, void *visit_arg,
                 osn_opt_progress_fn progress, void *progress_arg);

#endif
