/*
 * Exact analysis of the hysteretic overload-control models (docs/models.md).
 *
 * One server, FIFO, at most R customers, modes 0 (normal), 1 (overload), 2 (discard) with
 * bi-level thresholds 0 <= L1 < H1 < H2 <= R, L1 < L2 < H2. The named cases two-loop <L,H>|<H,R>
 * and single-loop <L,H>|B are bi-level thresholds with L2, H2 filled in by osn_model_resolve().
 * Input is one Poisson flow (thinned to an overload rate in mode 1), two Poisson flows where
 * flow 1 keeps priority, or an MMPP; service is exponential (a Markov chain solved level by
 * level) or follows a general law (the chain embedded at departures, Poisson input). Every
 * measure is an osn_xd, because cycle times and discard probabilities leave the double range at
 * extreme loads. The service-law and arrival types it shares with the simulator are in
 * include/osn/law.h.
 */
#ifndef OSN_MODEL_H
#define OSN_MODEL_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>

#include "osn/law.h"
#include "osn/policy.h"
#include "osn/xd.h"

enum osn_model_kind {
    OSN_KIND_TWO_LOOP,    /* <L,H>|<H,R>: L1=L, H1=H, L2=H, H2=R */
    OSN_KIND_SINGLE_LOOP, /* <L,H>|B: L1=L, H1=H, L2=R-1, H2=R */
    OSN_KIND_BI_LEVEL,    /* L1, H1, L2, H2, R given */
};

enum osn_method {
    OSN_METHOD_AUTO,    /* closed form where one exists, else the structured solver */
    OSN_METHOD_GENERAL, /* the structured block-tridiagonal solver */
    OSN_METHOD_CLOSED,  /* closed forms: two-loop, one flow, policy I only */
};

/* Largest R accepted at all; memory is checked separately by osn_model_check(). */
#define OSN_R_MAX 1000000000L

struct osn_model {
    enum osn_model_kind kind;
    enum osn_policy policy;
    long L, H;              /* two-loop and single-loop */
    long L1, H1, L2, H2, R; /* bi-level, or filled in by osn_model_resolve() */
    int flows;              /* 1, or 2 with flow 1 keeping priority */
    double rate;            /* one flow: offered rate lambda */
    double overload_rate;   /* one flow: accepted rate lambda' in mode 1 */
    double rate1, rate2;    /* two flows: offered rates; flow 2 is blocked in mode 1 */
    double mu;              /* service rate 1/E[B], = service.rate */
    enum osn_arrival_kind process;
    struct osn_mmpp mmpp; /* process == OSN_ARR_MMPP */
    double *trace;        /* process == OSN_ARR_TRACE: ascending arrival instants (s), owned
                             by the scenario */
    size_t ntrace;
    struct osn_law service; /* service.kind == OSN_LAW_EXP for the CTMC models */
};

/* The arrival part of m as the simulator's event engine reads it (trace borrowed from m).
 * Inline, so that the simulator, which only borrows the model's types, links without the
 * solver. */
static inline struct osn_arrivals osn_model_arrivals(const struct osn_model *m)
{
    return (struct osn_arrivals){
            .process = m->process,
            .flows = m->flows,
            .rate = m->rate,
            .rate1 = m->rate1,
            .rate2 = m->rate2,
            .mmpp = m->mmpp,
            .trace = m->trace,
            .ntrace = m->ntrace,
    };
}

/* Fills L1..H2 from L, H, R for the named kinds, and service.rate from mu. */
void osn_model_resolve(struct osn_model *m);

/*
 * Checks a resolved model. On failure returns OSN_ECONFIG (or OSN_ETOOBIG when R cannot fit in
 * memory), sets *bad_key to the scenario key at fault ("thresholds.H", "arrivals.rate", ...) and
 * writes a sentence into msg. bad_key and msg may be NULL.
 */
int osn_model_check(const struct osn_model *m, const char **bad_key, char *msg, size_t msgsize);

/*
 * Stationary phase probabilities of an MMPP's phase generator (GTH, exact for any rates) into
 * pi[0..K-1].
 */
void osn_mmpp_phase_probs(const struct osn_mmpp *p, double *pi);

/* Long-run accepted arrival rate of an MMPP in mode s: sum_k pi_k a_s(k) lambda_k. */
double osn_mmpp_mean_rate(const struct osn_mmpp *p, int s);

/* Accepted arrival rate in mode s (0, 1, 2). */
double osn_model_accept_rate(const struct osn_model *m, int s);

/* Bytes the structured solver may need for this model: an upper bound (about 2.5x the peak). */
size_t osn_model_solver_bytes(const struct osn_model *m);

struct osn_measures {
    struct osn_xd P[3];             /* time in mode 0, 1, 2 */
    struct osn_xd p00;              /* p(0,0): empty and normal */
    struct osn_xd N_mean;           /* mean number in system */
    struct osn_xd throughput;       /* departures per second */
    struct osn_xd sojourn;          /* mean sojourn N_mean / throughput */
    struct osn_xd T_ret, T_ret_sd;  /* return time from overload onset to mode 0 */
    struct osn_xd T_ret_renewal;    /* (P1+P2)/nu01, the renewal identity */
    struct osn_xd T_cyc;            /* mean control cycle 1/nu01 */
    struct osn_xd T_norm;           /* T_cyc - T_ret */
    struct osn_xd T_disc;           /* mean discard visit P2/nu12; NaN when never entered */
    struct osn_xd nu01, nu12;       /* overload and discard onset rates */
    struct osn_xd mode_change_rate; /* mode changes per second, 2(nu01+nu12) */
    struct osn_xd theta;            /* offered traffic not accepted (all flows) */
    struct osn_xd loss_flow1;       /* per-flow losses; with one flow, flow 1 = the flow */
    struct osn_xd loss_flow2;
    struct osn_xd prob_sum;                  /* sum of the stationary vector (1 up to rounding) */
    int nphase;                              /* MMPP phases; 0 for Poisson input */
    struct osn_xd onset_phase[OSN_MMPP_MAX]; /* fraction of overload onsets in each phase */
    struct osn_xd T_ret_phase[OSN_MMPP_MAX]; /* mean return time by the phase at onset */
    long states;                             /* states of the chain */
    enum osn_method method;                  /* the method that ran (never AUTO) */
    bool have_sd;                            /* T_ret_sd computed by this method */
    /* Quantiles of the return time, filled by osn_tret_quantiles() (not by osn_solve()). */
    struct osn_xd T_ret_q[4];     /* p50, p90, p95, p99 (OSN_TRET_QUANTILES) */
    struct osn_xd T_ret_dist_err; /* error estimate of the survival curve (absolute) */
    bool have_tret_q;             /* T_ret_q and T_ret_dist_err are set */
};

/* The probabilities of the quantiles in osn_measures.T_ret_q. */
#define OSN_TRET_QUANTILES     \
    {                          \
        0.50, 0.90, 0.95, 0.99 \
    }

/* The value of T_disc when the model never enters discard mode (nu12 = 0). */
#define OSN_XD_UNDEFINED ((struct osn_xd){NAN, 0})

/* Called once per state in (mode, n) order with its stationary probability. */
typedef int (*osn_dist_fn)(int mode, long n, struct osn_xd p, void *arg);

/*
 * Solves a resolved, checked model. `dist`, when not NULL, receives the stationary
 * distribution (with the closed method too). Returns 0, OSN_ENOTSUP when `method` cannot handle
 * the model (osn_solve_unsupported() says why), OSN_ENOMEM, OSN_ENUMERIC, or the first non-zero
 * value returned by `dist`.
 */
int osn_solve(const struct osn_model *m, enum osn_method method, struct osn_measures *out,
              osn_dist_fn dist, void *arg);

/*
 * NULL when osn_solve() can solve model m with `method`, else a sentence saying why not (closed
 * forms exist only for the one-flow two-loop M|M|1 model under policy I; trace input is for
 * simulation only; ...).
 */
const char *osn_solve_unsupported(const struct osn_model *m, enum osn_method method);

/*
 * Work kept between solves of models that differ only in their thresholds (an optimiser's
 * scan): the end-of-service distributions of the embedded chain for general service, which
 * depend only on the arrival rates along a service's path, and one solve's eliminated embedded
 * chain, whose rows above L + 1 the next pairs of the same H take as they are (up to three bands
 * of one solve's size, none over 64 MiB). Not thread-safe; one per thread.
 */
struct osn_solve_cache;

int osn_solve_cache_new(struct osn_solve_cache **cp);
struct osn_solve_cache *osn_solve_cache_free(struct osn_solve_cache *c);

/* osn_solve() with a cache (may be NULL). The results are the same with or without it. */
int osn_solve_cached(const struct osn_model *m, enum osn_method method, struct osn_measures *out,
                     osn_dist_fn dist, void *arg, struct osn_solve_cache *cache);

/*
 * The distribution of the return time (overload onset to normal mode) for exponential service:
 * a phase-type first-passage time on the overload states, computed by uniformisation with an
 * exact-mean geometric tail (docs/solver.md), with an error estimate of at most
 * OSN_TRET_ERR_MAX. osn_tret_dist_new() returns 0, OSN_ENOTSUP (not exponential service, trace
 * input, or overload never starts), OSN_ETOOBIG (a long, nearly deterministic return time: the
 * walk would need over 4e8 state-steps to reach that accuracy), OSN_EINVAL or OSN_ENOMEM.
 */
#define OSN_TRET_ERR_MAX 1e-6

struct osn_tret_dist;

int osn_tret_dist_new(struct osn_tret_dist **dp, const struct osn_model *m);

/*
 * What osn_tret_dist_new() would answer about its cost, from the T_ret and T_ret_sd that
 * osn_solve() put in ms, in milliseconds instead of the passage solves: OSN_ETOOBIG for a long,
 * nearly deterministic return time, OSN_ENOTSUP, or 0 (then osn_tret_dist_new() may still
 * refuse).
 */
int osn_tret_dist_precheck(const struct osn_model *m, const struct osn_measures *ms);
struct osn_tret_dist *osn_tret_dist_free(struct osn_tret_dist *d);

/* P(T_ret > t) for t >= 0 seconds: 1 at t = 0, non-increasing, in [0, 1]. */
double osn_tret_dist_survival(const struct osn_tret_dist *d, struct osn_xd t);

/* The smallest t with P(T_ret <= t) >= p, for 0 < p < 1, to about 1e-12 relative. */
struct osn_xd osn_tret_dist_quantile(const struct osn_tret_dist *d, double p);

/* E[T_ret] and E[T_ret^2] of the computed distribution (from the curve, not the linear solve). */
void osn_tret_dist_moments(const struct osn_tret_dist *d, struct osn_xd *mean,
                           struct osn_xd *second);

/*
 * The error estimate of the survival curve (absolute, in probability): the survival left when
 * the uniformised walk stopped times how far its residual time was from exponential.
 */
double osn_tret_dist_error(const struct osn_tret_dist *d);

/* Steps of the uniformised walk and its rate (1/s), for reports and benchmarks. */
long osn_tret_dist_steps(const struct osn_tret_dist *d);
double osn_tret_dist_rate(const struct osn_tret_dist *d);

/* Fills ms->T_ret_q, T_ret_dist_err and have_tret_q from d. */
void osn_tret_dist_fill(const struct osn_tret_dist *d, struct osn_measures *ms);

/* Fills them for model m, ms being osn_solve()'s result for m, where the distribution exists:
 * service other than exponential, a model whose overload never starts, or a distribution out
 * of reach (OSN_ENOTSUP, OSN_ETOOBIG of _new) leave have_tret_q false and return 0; any other
 * failure is returned (have_tret_q false). */
int osn_tret_quantiles(const struct osn_model *m, struct osn_measures *ms);

/* "general" / "closed" / "auto". */
const char *osn_method_name(enum osn_method method);

#endif
