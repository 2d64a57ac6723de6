/*
 * Model private interface: the level-structured chain and its solver, the embedded chain for
 * general service, the closed forms.
 *
 * With exponential service every model of this module is a continuous-time Markov chain whose
 * states are grouped by the number in system n (a "level"); transitions move one level up (an
 * accepted arrival) or down (a departure), possibly changing the mode on the way, or stay in the
 * level (MMPP phase changes).
 * Each state has at most one up and one down transition, so a level is described by small
 * per-state target arrays instead of dense blocks. lsolve.c eliminates levels from the top
 * (linear level reduction), subtraction-free, in extended-range arithmetic, at a cost linear in
 * the number of levels.
 */
#ifndef OSN_MODEL_INT_H
#define OSN_MODEL_INT_H

#include "osn/model.h"
#include "osn/xd.h"

/* Most states one level may hold: three modes times the MMPP phases. */
#define OSN__B (3 * OSN_MMPP_MAX)

struct osn__lvl {
    int m;                       /* states in this level (0..OSN__B) */
    int mode[OSN__B];            /* mode of each state, ascending */
    int phase[OSN__B];           /* arrival phase (0 for Poisson input) */
    int has_side;                /* any within-level (phase change) rate below */
    double side[OSN__B][OSN__B]; /* within-level rates, off-diagonal (phase changes) */
    int up_to[OSN__B];           /* index in level n+1, or -1 */
    double up_rate[OSN__B];
    int dn_to[OSN__B]; /* index in level n-1, or -1 */
    double dn_rate[OSN__B];
    double kill[OSN__B];    /* rate of leaving the chain (first-passage problems) */
    double lost[OSN__B][2]; /* offered minus accepted arrival rate, per flow */
};

/* Fills level n. ctx is the caller's (a struct osn__chain for the models here). */
typedef void (*osn__lvl_fn)(const void *ctx, long n, struct osn__lvl *lv);

/* Number of states of level n (what fill would put in lv->m, but cheaper). */
typedef int (*osn__count_fn)(const void *ctx, long n);

/*
 * A run of levels that fill() describes alike: *lo <= n <= *hi such that fill(k) is the same
 * for every k in lo..hi (the bounds may reach beyond the chain's own lo and hi). A shorter run
 * than the longest is allowed; the level solver uses runs to skip work that repeats (lsolve.c).
 */
typedef void (*osn__run_fn)(const void *ctx, long n, long *lo, long *hi);

/* A chain on levels lo..hi; every level in between has at least one state. run may be NULL
 * (every level its own run); it describes this fill, so a chain that wraps or replaces fill
 * must set its own run or NULL (a stale one would make the solver skip steps wrongly). */
struct osn__lchain {
    long lo, hi;
    osn__lvl_fn fill;
    osn__count_fn count;
    osn__run_fn run;
    const void *ctx;
};

/* The last level of lc (at most lc->hi) in the run that holds level n: n without lc->run. */
long osn__run_end(const struct osn__lchain *lc, long n);

/* The hysteretic model as a level chain (chain.c). */
struct osn__chain {
    const struct osn_model *m;
    double lam[3];          /* accepted arrival rate per mode */
    double offered[2];      /* offered rate per flow */
    int K;                  /* arrival phases: 1 for Poisson input */
    int only_overload;      /* restrict to modes 1 and 2 (the return-time problem) */
    long first[3], last[3]; /* levels where each mode exists (first > last: nowhere) */
};

void osn__chain_init(struct osn__chain *c, const struct osn_model *m, int only_overload);

/* True when mode s exists at level n in the chain c (see chain.c for the state spaces). */
static inline int osn__present(const struct osn__chain *c, int s, long n)
{
    return n >= c->first[s] && n <= c->last[s];
}

/* The mode after an accepted arrival in mode s makes n = k, and after a departure leaves k. */
int osn__mode_after_arrival(const struct osn_model *m, int s, long k);
int osn__mode_after_departure(const struct osn_model *m, int s, long k);

/* The chain of all states (levels 0..R) or of the overload states (modes 1, 2). */
void osn__chain_levels(const struct osn__chain *c, struct osn__lchain *lc);

/* Number of states in all levels of a level chain. */
long osn__lchain_states(const struct osn__lchain *lc);

/*
 * The solver's arrays of a size proportional to R: at R = 10^6 they are tens of megabytes, and
 * touching them 4 KiB at a time made page faults a third of a solve, so from a megabyte on they
 * come from osn_mem_block_alloc() (huge pages where the kernel gives them). Zeroed. Free with
 * osn__big_free() and the same size.
 */
void *osn__big_alloc(size_t bytes);
void osn__big_free(void *p, size_t bytes);

/* ---- The level solver (lsolve.c) ---- */

/*
 * A level chain eliminated once from the top: (-S_n)^-1 of every level is kept (one block per
 * step not skipped), and every pass (the stationary sweep, any number of transient solves) reads
 * it instead of eliminating again.
 */
struct osn__elim;
void osn__elim_free(struct osn__elim *e);

/*
 * Backward pass of a stationary chain. next, when not NULL, is the chain that will be passed to
 * osn__trans_new() with this one as its top: the levels at the top that both describe alike are
 * then eliminated once (the overload chain shares the stationary chain's levels above H).
 */
int osn__stat_new(struct osn__elim **sp, const struct osn__lchain *lc,
                  const struct osn__lchain *next);

/*
 * Forward pass: calls visit(n, lv, pi_n, below, above) for n = lo..hi with the unnormalised
 * stationary vector of each level (pi_lo is the censored chain's stationary vector scaled to
 * max 1) and the neighbouring levels (NULL beyond lo and hi). The levels of one run are passed
 * with one description: lv is the same pointer for consecutive levels of a run and another
 * pointer when the run changes, so a visitor may sum a run's levels by state. The buffers are
 * the sweep's own and are reused: a visitor that needs a description later copies it.
 */
typedef int (*osn__visit_fn)(long n, const struct osn__lvl *lv, const struct osn_xd *pi,
                             const struct osn__lvl *below, const struct osn__lvl *above, void *arg);
int osn__stat_sweep(const struct osn__elim *s, osn__visit_fn visit, void *arg);

/* ---- Linear systems (-Q_AA) x = b on a transient level chain (lsolve.c) ---- */

/* Right-hand side of level n into b[0..lv->m-1]. */
typedef void (*osn__rhs_fn)(long n, const struct osn__lvl *lv, struct osn_xd *b, void *arg);

/*
 * Eliminates a transient chain (its sub-generator Q: kill rates leave it). top, when not NULL, is
 * a stationary elimination made with next = lc: its common top levels are used, not redone
 * (top must outlive the result). OSN_ENUMERIC when a level cannot be left, OSN_ENOMEM.
 */
int osn__trans_new(struct osn__elim **tp, const struct osn__lchain *lc,
                   const struct osn__elim *top);

/*
 * Solves (-Q) x = b. x receives the solution for all states, level by level from lo
 * (osn__lchain_states() entries). rhs is called for levels hi down to lo, each time before x's
 * entries of that level are written, so b_n may be read from x itself at level n (an in-place
 * solve). Returns 0 or OSN_ENOMEM.
 */
int osn__trans_solve(const struct osn__elim *t, osn__rhs_fn rhs, void *arg, struct osn_xd *x);

/*
 * osn__trans_solve() and, on the same elimination, dot = a (-Q)^-1 x = a (-Q)^-2 b for the row
 * vector a given by its na nonzero entries: states idx[k] (any order, repeats add) with weights
 * w[k] >= 0. With b = 1 and a the distribution at the start of a passage, x holds the mean
 * passage times and 2 dot / sum(w) is the second moment, without solving (-Q) x2 = 2 x.
 * OSN_EINVAL for an index outside the chain, OSN_ENOMEM.
 */
int osn__trans_solve_dual(const struct osn__elim *t, osn__rhs_fn rhs, void *arg, long na,
                          const long *idx, const struct osn_xd *w, struct osn_xd *x,
                          struct osn_xd *dot);

/* The lowest level whose block e takes from its top (hi + 1: none), for tests. */
long osn__elim_shared_from(const struct osn__elim *e);

/* osn__trans_new, osn__trans_solve and osn__elim_free in one call, for a single system. */
int osn__transient_solve(const struct osn__lchain *lc, osn__rhs_fn rhs, void *arg,
                         struct osn_xd *x);

/* ---- Closed forms (closed.c) ---- */

/* Every measure except T_ret_sd of the one-flow two-loop model, policy I. */
int osn__closed_solve(const struct osn_model *m, struct osn_measures *out, osn_dist_fn dist,
                      void *arg);

/* x^k for x >= 0 in extended range, by repeated squaring (about 2 log2(k) roundings). */
struct osn_xd osn__closed_pow(double x, long k);

/* geo(x, j) = 1 + x + ... + x^(j-1) for x >= 0, j >= 0, accurate at and near x = 1 (expm1). */
struct osn_xd osn__closed_geo(double x, long j);

/* The T_ret formula of docs/models.md as printed there (loses digits when lambda' is near mu). */
double osn__closed_T_ret_formula(const struct osn_model *m);

/* ---- The optimiser's measures of the two-loop M|M|1 model, O(1) a pair (mm1_pairs.c) ---- */

struct osn__mm1_pairs;

/* What osn optimize bounds and minimises, for one pair (L, H). */
struct osn__mm1_pair {
    struct osn_xd P1, P2, throttle, theta, T_cyc, T_ret;
};

/* Whether m is the one-flow two-loop M|M|1 model under policy I, the case the tables cover. */
bool osn__mm1_pairs_apply(const struct osn_model *m);

/* Tables over n = 0..R for every pair of m's scan. 0, OSN_ENOTSUP, OSN_ETOOBIG or OSN_ENOMEM. */
int osn__mm1_pairs_new(const struct osn_model *m, struct osn__mm1_pairs **out);
void osn__mm1_pairs_free(struct osn__mm1_pairs *t);

/* The measures of pair 0 <= L < H < R. */
void osn__mm1_pairs_eval(const struct osn__mm1_pairs *t, long L, long H, struct osn__mm1_pair *v);

/* ---- General service: the embedded chain at departures (embedded.c, mixpois.c) ---- */

/*
 * Mixed-Poisson weights of a service law B under uniformisation at rate lam:
 * c[m] = E[exp(-lam B) (lam B)^m / m!] for m = 0..*M-1, truncated where the rest is negligible
 * (below 1e-17) and renormalised to sum 1. Returns a new array, or NULL with *err set
 * (OSN_ENOMEM, or OSN_ENOTSUP when the law is too heavy-tailed at this rate).
 */
struct osn_xd *osn__mixpois(const struct osn_law *law, double lam, long *M, int *err);
/* The work of osn__mixpois(), in weight evaluations, and in *M the terms it will need (an
 * upper estimate from the service law's far tail: lognormal cv = 10 needs millions). */
double osn__mixpois_cost(const struct osn_law *law, double lam, double *M);

/*
 * The end-of-service distribution of a path with arrival rates pr[0..len-1] under (lam, law):
 * osn__cache_get() returns 1 with p and occ (owned by the cache, valid until the next put) or 0;
 * osn__cache_put() stores a copy. A change of lam or law empties the cache first.
 */
int osn__cache_get(struct osn_solve_cache *c, double lam, const struct osn_law *law, long len,
                   const double *pr, const struct osn_xd **p, const struct osn_xd **occ);
int osn__cache_put(struct osn_solve_cache *c, long len, const double *pr, const struct osn_xd *p,
                   const struct osn_xd *occ);

/* Counts the times the cache was emptied: a pointer from osn__cache_get() stays valid as long
 * as this does (a put may empty the cache when it outgrows its budget). */
unsigned long osn__cache_generation(const struct osn_solve_cache *c);

/* Where a solve cache keeps the embedded chain's elimination for the next solve (emb_band.h). */
struct osn__emb_shared **osn__cache_emb_shared(struct osn_solve_cache *c);

int osn__embedded_solve(const struct osn_model *m, struct osn_measures *out, osn_dist_fn dist,
                        void *arg, struct osn_solve_cache *cache);

/* ---- Measures from the level chain (measures.c) ---- */

int osn__general_solve(const struct osn_model *m, struct osn_measures *out, osn_dist_fn dist,
                       void *arg);

/*
 * Where the return time starts: the overload states entered from normal mode (indices among the
 * overload chain's states, level by level) and the stationary flow into each, in new arrays the
 * caller frees. OSN_ENOTSUP when overload never starts, OSN_ENOMEM.
 */
int osn__overload_entries(const struct osn_model *m, long *n, long **idx, struct osn_xd **w);

/*
 * The renewal identities, from P[] and the onset rates nu01, nu12 already in *out: T_cyc =
 * 1/nu01, T_ret_renewal = (P1 + P2)/nu01, T_norm = P0/nu01, T_disc = P2/nu12 (undefined, NaN,
 * when the rate is 0).
 */
void osn__renewal_times(struct osn_measures *out);

#endif
