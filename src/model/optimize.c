/*
 * Threshold optimisation: an exhaustive scan of the (L, H) grid, one osn_solve() per pair (the
 * plain scan). For the one-flow two-loop M|M|1 model, optimize_screen.c reaches the same answer
 * with a few solves, when no visit callback asks for every pair's measures and the objective is
 * the mean.
 *
 * A quantile objective (p95, p99 of the return time) adds the return time's distribution to
 * every pair's solve (osn_tret_dist_new(), on the worker threads like the solve). Nothing about
 * quantiles is monotone or convex in (L, H) either, and no closed form gives them, so that scan
 * is always the plain one; it costs several solves a pair (bench_optimize prints the ratio).
 *
 * Exhaustive on purpose. T_ret, the losses and T_cyc are not monotone in (L, H) jointly once
 * discard is possible (docs/models.md: without a discard bound the optimum drifts to H = R-1), so a
 * pruned or local search could miss the optimum; the scan is the brute force by construction and
 * gives the whole grid for a heat map. Its cost is R^2/2 solves of O(R) each: R = 100 is 4,950
 * solves of about 300 states (see bench/bench_optimize.c for the figures).
 *
 * What is set up once per run, not per pair: the unsupported-model check, the base model (every
 * key but the two thresholds), the compact record of every pair that the next-better search needs
 * and the counters. Each pair then costs one osn_model_resolve() + osn_model_check() (a few
 * comparisons) and the solve itself. The solver's own per-call setup (allocating its level
 * arrays) is inside osn_solve(); bench_optimize measures that it is a small part of a solve.
 *
 * All comparisons of measures are in extended range (osn_xd_cmp): T_cyc may be 1e+2000 and P2
 * 1e-3000, and both still order correctly. Only the relative violations, which are used to rank
 * infeasible pairs, are doubles (a ratio beyond the double range becomes +inf and still ranks).
 */
#include "osn/optimize.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model_int.h"
#include "optimize_int.h"
#include "osn/err.h"

typedef struct osn_xd xd;

/* What the next-better search keeps of every evaluated pair: 32 bytes. */
struct rec {
    xd obj; /* the objective's value */
    int32_t L, H;
    bool feasible;
};

static const char *const con_names[OSN_OPT_NCON] = {"max_throttle", "max_loss", "max_discard",
                                                    "min_cycle"};

const char *osn_opt_con_name(enum osn_opt_con c)
{
    return (unsigned)c < OSN_OPT_NCON ? con_names[c] : "?";
}

/* The objectives' names, and for a quantile its index in osn_measures.T_ret_q (p50, p90, p95,
 * p99: OSN_TRET_QUANTILES); -1 for the mean. */
static const char *const obj_names[OSN_OPT_NOBJ] = {"T_ret", "T_ret_p95", "T_ret_p99"};
static const int obj_q[OSN_OPT_NOBJ] = {-1, 2, 3};

const char *osn_opt_objective_name(enum osn_opt_objective o)
{
    return (unsigned)o < OSN_OPT_NOBJ ? obj_names[o] : "?";
}

struct osn_xd osn_opt_objective_value(enum osn_opt_objective o, const struct osn_measures *ms)
{
    if ((unsigned)o >= OSN_OPT_NOBJ)
        return OSN_XD_UNDEFINED;
    if (obj_q[o] < 0)
        return ms->T_ret;
    return ms->have_tret_q ? ms->T_ret_q[obj_q[o]] : OSN_XD_UNDEFINED;
}

struct osn_xd osn_opt_con_value(enum osn_opt_con c, const struct osn_measures *ms)
{
    switch (c) {
    case OSN_OPT_THROTTLE:
        return osn_xd_add(ms->P[1], ms->P[2]);
    case OSN_OPT_LOSS:
        return ms->theta;
    case OSN_OPT_DISCARD:
        return ms->P[2];
    case OSN_OPT_CYCLE:
        return ms->T_cyc;
    default:
        return OSN_XD_UNDEFINED;
    }
}

/* The pair (L, H) is L1, H1 in the bi-level model; H ranges below R, or below H2 there. */
static long h_limit(const struct osn_model *m)
{
    return m->kind == OSN_KIND_BI_LEVEL ? m->H2 : m->R;
}

bool osn_optimize_screens(const struct osn_model *m)
{
    return m && osn__mm1_pairs_apply(m);
}

long osn_optimize_pairs(const struct osn_model *m)
{
    long top = m ? h_limit(m) : 0; /* H = 1 .. top-1, L = 0 .. H-1 */
    return top < 2 ? 0 : top * (top - 1) / 2;
}

/* The model of pair (L, H): a copy of the base with the two thresholds replaced, resolved. */
void osn_optimize_set_pair(struct osn_model *pm, long L, long H)
{
    if (pm->kind == OSN_KIND_BI_LEVEL) {
        pm->L1 = L;
        pm->H1 = H;
    } else {
        pm->L = L;
        pm->H = H;
    }
    osn_model_resolve(pm);
}

/*
 * Relative violation of constraint c at measures ms (0 when it holds): value/bound - 1 for an
 * upper bound, bound/value - 1 for the lower bound on T_cyc. Feasibility itself is decided by
 * osn_xd_cmp, so a value equal to its bound is feasible whatever the rounding here.
 */
static double violation(enum osn_opt_con c, double bound, const struct osn_measures *ms)
{
    xd v = osn_opt_con_value(c, ms), b = osn_xd(bound);
    if (c == OSN_OPT_CYCLE) {
        if (osn_xd_cmp(v, b) >= 0)
            return 0;
        if (osn_xd_is_zero(v) || !isfinite(v.m))
            return INFINITY;
        return fmax(0, osn_xd_to_double(osn_xd_div(b, v)) - 1);
    }
    if (!isfinite(v.m))
        return INFINITY;
    if (osn_xd_cmp(v, b) <= 0)
        return 0;
    if (bound == 0) /* "never": no ratio to miss it by, so the value itself */
        return osn_xd_to_double(v);
    return fmax(0, osn_xd_to_double(osn_xd_div(v, b)) - 1);
}

bool osn__opt_assess(const struct osn_opt_cfg *cfg, const struct osn_measures *ms, double *viol,
                     double *total)
{
    bool ok = true;
    *total = 0;
    for (int c = 0; c < OSN_OPT_NCON; c++) {
        viol[c] = 0;
        if (!cfg->has[c])
            continue;
        xd v = osn_opt_con_value((enum osn_opt_con)c, ms), b = osn_xd(cfg->bound[c]);
        bool holds = isfinite(v.m) &&
                     (c == OSN_OPT_CYCLE ? osn_xd_cmp(v, b) >= 0 : osn_xd_cmp(v, b) <= 0);
        if (!holds) {
            ok = false;
            viol[c] = violation((enum osn_opt_con)c, cfg->bound[c], ms);
            /* A violation too small to show as a double still counts as one. */
            if (!(viol[c] > 0))
                viol[c] = 0x1p-1074;
        }
        *total += viol[c];
    }
    return ok;
}

void osn__opt_keep(struct osn_opt_point *pt, long L, long H, double total, const double *viol,
                   const struct osn_measures *ms)
{
    pt->found = true;
    pt->L = L;
    pt->H = H;
    pt->violation = total;
    memcpy(pt->viol, viol, sizeof pt->viol);
    pt->ms = *ms;
}

/* Strictly smaller objective (scan order breaks ties: the earlier pair is kept). */
bool osn__opt_better(enum osn_opt_objective o, const struct osn_measures *a,
                     const struct osn_opt_point *b)
{
    return !b->found ||
           osn_xd_cmp(osn_opt_objective_value(o, a), osn_opt_objective_value(o, &b->ms)) < 0;
}

void osn__opt_finish(const struct osn_opt_cfg *cfg, struct osn_opt_result *res, long L, long H,
                     const struct osn_measures *nms)
{
    double viol[OSN_OPT_NCON], total;
    for (int c = 0; c < OSN_OPT_NCON; c++) {
        if (!cfg->has[c])
            continue;
        double v = osn_xd_to_double(osn_opt_con_value((enum osn_opt_con)c, &res->best.ms));
        double b = cfg->bound[c];
        if (c == OSN_OPT_CYCLE)
            res->slack[c] = v > 0 ? 1 - b / v : 0;
        else
            res->slack[c] = b > 0 ? 1 - v / b : 0;
    }
    if (!nms)
        return;
    osn__opt_assess(cfg, nms, viol, &total);
    osn__opt_keep(&res->next, L, H, total, viol, nms);
    for (int c = 0; c < OSN_OPT_NCON; c++)
        if (cfg->has[c] && viol[c] > 0 && (res->binding < 0 || viol[c] > viol[res->binding]))
            res->binding = c;
}

static int check_cfg(const struct osn_opt_cfg *cfg)
{
    if (cfg->threads < 0 || (unsigned)cfg->objective >= OSN_OPT_NOBJ)
        return OSN_EINVAL;
    for (int c = 0; c < OSN_OPT_NCON; c++)
        if (cfg->has[c] && !(isfinite(cfg->bound[c]) && cfg->bound[c] >= 0))
            return OSN_EINVAL;
    const struct osn_split *s = cfg->split;
    if (s && !(s->parts >= 1 && s->part >= 0 && s->part < s->parts && s->exchange))
        return OSN_EINVAL;
    return 0;
}

/*
 * The next-better pair: the largest objective below the optimum's among the records (all of
 * them infeasible by definition of the optimum). Returns its index, or -1.
 */
static long find_next(const struct rec *recs, long n, xd best)
{
    long k = -1;
    for (long i = 0; i < n; i++) {
        if (osn_xd_cmp(recs[i].obj, best) >= 0)
            continue;
        if (k < 0 || osn_xd_cmp(recs[i].obj, recs[k].obj) > 0)
            k = i;
    }
    return k;
}

/*
 * One pair's measures: the solve, and for a quantile objective the return time's distribution,
 * whose four quantiles go into ms (as osn solve reports them; the fill costs little beside the
 * walk). The precheck refuses in milliseconds what the walk would refuse after its work cap.
 * Returns 0 or the error of either; an out-of-reach distribution is an error here, not a pair
 * left out, since leaving it out could change the optimum without a word.
 */
static int solve_pair(const struct osn_model *pm, enum osn_opt_objective o, struct osn_measures *ms,
                      struct osn_solve_cache *cache)
{
    struct osn_tret_dist *d = NULL;
    int rc = osn_solve_cached(pm, OSN_METHOD_GENERAL, ms, NULL, NULL, cache);
    if (rc || o == OSN_OPT_T_RET)
        return rc;
    if ((rc = osn_tret_dist_precheck(pm, ms)) == 0 && (rc = osn_tret_dist_new(&d, pm)) == 0)
        osn_tret_dist_fill(d, ms);
    osn_tret_dist_free(d);
    return rc;
}

/*
 * The pairs are solved in windows of consecutive pairs (scan order) by worker threads, each
 * with its own cache of service paths, into one slot per pair; then this thread walks the
 * window in scan order and does everything that depends on order (the records, the best,
 * closest and free pairs with their ties, the visit callback, progress, stopping at the first
 * error). So the answer and the callbacks are those of the serial scan whatever the number of
 * threads: only the solves run in parallel, and a solve depends on its pair alone.
 */
#define WINDOW_PAIRS 1024

struct slot {
    long L, H;
    int rc;       /* the solve's status */
    bool skipped; /* rejected by osn_model_check() */
    struct osn_measures ms;
};

struct window {
    const struct osn_model *base;
    enum osn_opt_objective objective;
    struct slot *slot;
    long n;
    long end; /* the slots this process solves end here (n, or its block's end when split) */
    atomic_long next;
};

struct worker {
    struct window *w;
    struct osn_solve_cache *cache; /* service paths shared by pairs with the same H */
};

static void *solve_window(void *arg)
{
    struct worker *wk = arg;
    struct window *w = wk->w;
    struct osn_model pm = *w->base;
    for (long i; (i = atomic_fetch_add(&w->next, 1)) < w->end;) {
        struct slot *sl = &w->slot[i];
        osn_optimize_set_pair(&pm, sl->L, sl->H);
        sl->skipped = osn_model_check(&pm, NULL, NULL, 0) != 0;
        sl->rc = sl->skipped ? 0 : solve_pair(&pm, w->objective, &sl->ms, wk->cache);
    }
    return NULL;
}

/* Solves the n pairs of w->slot on up to nthr threads (this one included); when the pairs are
 * split among processes, this one's block, then the exchange brings the others'. 0 or OSN_EIO. */
static int run_window(struct window *w, struct worker *wk, int nthr, const struct osn_split *split)
{
    pthread_t tid[OSN_OPT_MAX_THREADS];
    int started = 0;
    long begin = 0;
    w->end = w->n;
    if (split) { /* a contiguous block: pairs of one H share their service paths (the cache) */
        begin = w->n * split->part / split->parts;
        w->end = w->n * (split->part + 1) / split->parts;
    }
    atomic_store(&w->next, begin);
    if (nthr > w->end - begin)
        nthr = (int)(w->end - begin);
    for (int t = 1; t < nthr; t++, started++)
        if (pthread_create(&tid[t - 1], NULL, solve_window, &wk[t]) != 0)
            break; /* fewer threads: this one does the rest */
    solve_window(&wk[0]);
    for (int t = 0; t < started; t++)
        pthread_join(tid[t], NULL);
    if (split && split->exchange(split->arg, w->slot, w->n, sizeof *w->slot, split->parts) != 0)
        return OSN_EIO;
    return 0;
}

static int thread_count(const struct osn_opt_cfg *cfg)
{
    long n = cfg->threads > 0 ? cfg->threads : sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > OSN_OPT_MAX_THREADS ? OSN_OPT_MAX_THREADS : (int)n;
}

int osn_optimize(const struct osn_model *m, const struct osn_opt_cfg *cfg,
                 struct osn_opt_result *res, osn_opt_visit_fn visit, void *visit_arg,
                 osn_opt_progress_fn progress, void *progress_arg)
{
    struct osn_model pm;
    struct osn_measures ms;
    struct rec *recs = NULL;
    struct worker wk[OSN_OPT_MAX_THREADS] = {{0}};
    struct window win = {0};
    double viol[OSN_OPT_NCON], total;
    long total_pairs, done = 0, top;
    int rc = 0, nthr;

    if (!res)
        return OSN_EINVAL;
    memset(res, 0, sizeof *res);
    res->binding = -1;
    if (!m || !cfg || check_cfg(cfg))
        return OSN_EINVAL;
    if (osn_solve_unsupported(m, OSN_METHOD_GENERAL))
        return OSN_ENOTSUP;
    /* The return time's distribution exists for exponential service only (tret_dist.c). */
    if (cfg->objective != OSN_OPT_T_RET &&
        (m->service.kind != OSN_LAW_EXP || m->process == OSN_ARR_TRACE))
        return OSN_ENOTSUP;
    total_pairs = osn_optimize_pairs(m);
    if (total_pairs == 0)
        return OSN_ECONFIG;
    if (!visit && !cfg->exhaustive && cfg->objective == OSN_OPT_T_RET && osn__mm1_pairs_apply(m)) {
        /* Closed forms screen the pairs; only the undecided ones are solved (optimize_screen.c). */
        rc = osn__optimize_screened(m, cfg, res, progress, progress_arg);
        if (rc != OSN__SCREEN_DECLINED)
            return rc;
    }
    if ((size_t)total_pairs > SIZE_MAX / sizeof *recs || h_limit(m) > INT32_MAX)
        return OSN_ETOOBIG;
    nthr = thread_count(cfg);
    recs = malloc((size_t)total_pairs * sizeof *recs);
    win.slot = malloc(WINDOW_PAIRS * sizeof *win.slot);
    win.base = m;
    win.objective = cfg->objective;
    rc = recs && win.slot ? 0 : OSN_ENOMEM;
    for (int t = 0; t < nthr && !rc; t++) {
        wk[t].w = &win;
        rc = osn_solve_cache_new(&wk[t].cache);
    }
    if (rc)
        goto out;

    pm = *m;
    top = h_limit(m);
    for (long H = 1, L = 0; H < top && !rc;) {
        for (win.n = 0; win.n < WINDOW_PAIRS && H < top; win.n++) {
            win.slot[win.n].L = L;
            win.slot[win.n].H = H;
            if (++L == H)
                H++, L = 0;
        }
        rc = run_window(&win, wk, nthr, cfg->split);
        for (long i = 0; i < win.n && !rc; i++) {
            const struct slot *sl = &win.slot[i];
            long Li = sl->L, Hi = sl->H;
            if (sl->skipped) {
                res->skipped++;
            } else if ((rc = sl->rc) != 0) {
                res->failed.found = true;
                res->failed.L = Li;
                res->failed.H = Hi;
            } else {
                bool ok = osn__opt_assess(cfg, &sl->ms, viol, &total);
                struct rec *r = &recs[res->evaluated++];
                r->obj = osn_opt_objective_value(cfg->objective, &sl->ms);
                r->L = (int32_t)Li;
                r->H = (int32_t)Hi;
                r->feasible = ok;
                if (ok)
                    res->feasible++;
                if (osn__opt_better(cfg->objective, &sl->ms, &res->free))
                    osn__opt_keep(&res->free, Li, Hi, total, viol, &sl->ms);
                if (ok && osn__opt_better(cfg->objective, &sl->ms, &res->best))
                    osn__opt_keep(&res->best, Li, Hi, total, viol, &sl->ms);
                if (!res->closest.found || total < res->closest.violation ||
                    (total == res->closest.violation &&
                     osn__opt_better(cfg->objective, &sl->ms, &res->closest)))
                    osn__opt_keep(&res->closest, Li, Hi, total, viol, &sl->ms);
                if (visit) {
                    osn_optimize_set_pair(&pm, Li, Hi);
                    struct osn_opt_pair p = {Li, Hi, ok, total, {0}, &sl->ms, &pm};
                    memcpy(p.viol, viol, sizeof p.viol);
                    rc = visit(&p, visit_arg);
                }
            }
            done++;
            if (progress)
                progress(done, total_pairs, progress_arg);
        }
    }
    if (rc)
        goto out;
    res->solved = res->evaluated;
    if (res->evaluated == 0) {
        rc = OSN_ECONFIG;
        goto out;
    }
    if (res->best.found) {
        long k = find_next(recs, res->evaluated,
                           osn_opt_objective_value(cfg->objective, &res->best.ms));
        if (k >= 0) {
            /* One more solve, so that the next-better pair is reported with all its measures. */
            osn_optimize_set_pair(&pm, recs[k].L, recs[k].H);
            if ((rc = solve_pair(&pm, cfg->objective, &ms, wk[0].cache))) {
                res->failed.found = true;
                res->failed.L = recs[k].L;
                res->failed.H = recs[k].H;
                goto out;
            }
        }
        osn__opt_finish(cfg, res, k >= 0 ? recs[k].L : 0, k >= 0 ? recs[k].H : 0,
                        k >= 0 ? &ms : NULL);
    }
out:
    for (int t = 0; t < nthr; t++)
        osn_solve_cache_free(wk[t].cache);
    free(win.slot);
    free(recs);
    return rc;
}
