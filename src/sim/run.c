/*
 * Replications of the single-queue hysteretic simulator (include/osn/sim.h): checks, the kept
 * and exchanged replications' totals, and the estimates. The replications themselves run on the
 * study module's runner (osn/study.h: stream i of the seed for replication i, worker threads,
 * progress), so the thread count changes the wall time and nothing else. Each estimate is
 * f(pooled totals), the totals added in replication order, with a jackknife half-width over the
 * replications (f(totals without replication i), i = 1..n).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "osn/des.h"
#include "osn/err.h"
#include "osn/stats.h"
#include "osn/study.h"
#include "osn/wall.h"
#include "sim_int.h"

#define MAX_REPLICATIONS 100000
#define MAX_THREADS      OSN_STUDY_MAX_THREADS

void osn_sim_cfg_default(struct osn_sim_cfg *cfg)
{
    *cfg = (struct osn_sim_cfg){0};
    cfg->time = 1e5;
    cfg->warmup = 1e3;
    cfg->replications = 10;
    cfg->seed = 1;
    cfg->feedback_delay = 0;
    cfg->threads = 1;
    cfg->level = 0.95;
}

static int fail(const char **bad_key, const char *key, char *msg, size_t size, const char *what)
{
    if (bad_key)
        *bad_key = key;
    if (msg && size)
        snprintf(msg, size, "%s", what);
    return OSN_EINVAL;
}

/* The model as simulated: an exponential law without its own rate takes mu. */
static struct osn_model sim_model(const struct osn_model *m)
{
    struct osn_model mm = *m;
    if (mm.service.kind == OSN_LAW_EXP && !(mm.service.rate > 0))
        mm.service.rate = mm.mu;
    return mm;
}

int osn_sim_check(const struct osn_model *m, const struct osn_sim_cfg *cfg, const char **bad_key,
                  char *msg, size_t msgsize)
{
    char why[200];
    struct osn_des_arr arr;

    if (!m || !cfg)
        return OSN_EINVAL;
    if (!(isfinite(cfg->time) && cfg->time > 0))
        return fail(bad_key, "sim.time", msg, msgsize, "the simulated time must be > 0");
    if (!(isfinite(cfg->warmup) && cfg->warmup >= 0))
        return fail(bad_key, "sim.warmup", msg, msgsize, "the warm-up must be >= 0");
    if (cfg->replications < 1 || cfg->replications > MAX_REPLICATIONS)
        return fail(bad_key, "sim.replications", msg, msgsize,
                    "replications must be in 1 .. 100000");
    if (!(isfinite(cfg->feedback_delay) && cfg->feedback_delay >= 0))
        return fail(bad_key, "sim.feedback_delay", msg, msgsize,
                    "the feedback delay must be >= 0 (s)");
    if (cfg->threads < 1 || cfg->threads > MAX_THREADS)
        return fail(bad_key, "--threads", msg, msgsize, "threads must be in 1 .. 256");
    const struct osn_split *sp = cfg->split;
    if (sp && !(sp->parts >= 1 && sp->part >= 0 && sp->part < sp->parts && sp->exchange))
        return fail(bad_key, "split", msg, msgsize,
                    "the processes' share of the replications is malformed");
    if (cfg->keep && !(cfg->keep->n >= 0 && cfg->keep->n <= cfg->replications))
        return fail(bad_key, "sim.replications", msg, msgsize,
                    "fewer replications than those kept from an earlier run");
    if (cfg->keep && cfg->keep->n > 0 && cfg->keep->ntot != OSN__NTOT)
        return fail(bad_key, "sim.replications", msg, msgsize,
                    "the replications kept from an earlier run are not this simulator's");
    if (!(cfg->level > 0 && cfg->level < 1))
        return fail(bad_key, "sim.level", msg, msgsize, "the confidence level must be in (0, 1)");
    if (m->R < 1 || m->L1 < 0 || m->H1 <= m->L1 || m->H2 <= m->H1 || m->H2 > m->R ||
        m->L2 <= m->L1 || m->L2 >= m->H2)
        return fail(bad_key, "thresholds.R", msg, msgsize,
                    "thresholds must satisfy 0 <= L1 < H1 < H2 <= R, L1 < L2 < H2");
    struct osn_model mm = sim_model(m);
    if (osn_des_law_check(&mm.service, why, sizeof why) != 0)
        return fail(bad_key, "service.law", msg, msgsize, why);
    struct osn_arrivals spec = osn_model_arrivals(&mm);
    if (osn_des_arr_setup(&arr, &spec, why, sizeof why) != 0)
        return fail(bad_key, "arrivals.process", msg, msgsize, why);
    if (m->process == OSN_ARR_POISSON && m->flows != 2 &&
        !(m->overload_rate >= 0 && m->overload_rate <= m->rate))
        return fail(bad_key, "arrivals.overload_rate", msg, msgsize,
                    "the overload rate must be in 0 .. rate");
    if (m->process == OSN_ARR_TRACE && m->trace[m->ntrace - 1] <= cfg->warmup)
        return fail(bad_key, "sim.warmup", msg, msgsize,
                    "the warm-up reaches past the last instant of the trace");
    return 0;
}

struct job {
    const struct osn_model *m;
    const struct osn_sim_cfg *cfg;
    struct osn__sim_rep *reps;
    _Atomic uint64_t events; /* of the replications done */
    double t0;               /* wall clock at the start */
};

/* Replication i (osn/study.h) into totals of its own on this thread's stack: reps[i] shares
 * cache lines with its neighbours, which other threads write as often. */
static int one_rep(void *ctx, long i, struct osn_rng *rng, _Atomic double *now, char *msg,
                   size_t msgsize)
{
    struct job *j = ctx;
    struct osn__sim_rep rep;
    struct osn_sim_cfg cfg = *j->cfg;
    (void)msg;
    (void)msgsize;
    if (i != 0) /* the trace is replication 0's */
        cfg.trace = NULL;
    int err = osn__sim_queue_run(j->m, &cfg, rng, &rep, now);
    if (!err)
        j->reps[i] = rep;
    else
        free(rep.ret);
    atomic_fetch_add(&j->events, rep.events);
    return err;
}

/* A replication's totals as they travel between processes (its return times go apart). */
struct rep_slot {
    double tot[OSN__NTOT];
    uint64_t events;
    long nret;
};

/*
 * Gives every process every replication of a split run (osn/split.h): first the totals, then
 * the return times, each process's block of them padded to the longest block so that the one
 * exchange of fixed-size blocks carries them. Returns 0, OSN_ENOMEM or OSN_EIO.
 */
static int exchange_reps(const struct osn_split *sp, struct osn__sim_rep *reps, int n)
{
    struct rep_slot *slot = calloc((size_t)n, sizeof *slot);
    long *block_len = calloc((size_t)sp->parts, sizeof *block_len);
    double *ret = NULL;
    int err = OSN_ENOMEM;
    if (!slot || !block_len)
        goto out;
    const long mine = osn_split_first(n, sp->part, sp->parts);
    const long end = osn_split_first(n, sp->part + 1, sp->parts);
    for (long i = mine; i < end; i++) {
        memcpy(slot[i].tot, reps[i].tot, sizeof slot[i].tot);
        slot[i].events = reps[i].events;
        slot[i].nret = reps[i].nret;
    }
    err = OSN_EIO;
    if (sp->exchange(sp->arg, slot, n, sizeof *slot, sp->parts) != 0)
        goto out;
    long longest = 0;
    for (int k = 0; k < sp->parts; k++) {
        for (long i = osn_split_first(n, k, sp->parts); i < osn_split_first(n, k + 1, sp->parts);
             i++)
            block_len[k] += slot[i].nret;
        longest = block_len[k] > longest ? block_len[k] : longest;
    }
    err = OSN_ENOMEM;
    ret = calloc((size_t)(longest > 0 ? longest : 1) * (size_t)sp->parts, sizeof *ret);
    if (!ret)
        goto out;
    long at = (long)sp->part * longest;
    for (long i = mine; i < end; i++) {
        if (reps[i].nret > 0) /* ret is NULL in a replication without an episode */
            memcpy(ret + at, reps[i].ret, (size_t)reps[i].nret * sizeof *ret);
        at += reps[i].nret;
    }
    /* Block k of parts x longest items is [k longest, (k + 1) longest): this process's own. */
    err = OSN_EIO;
    if (longest > 0 && sp->exchange(sp->arg, ret, longest * sp->parts, sizeof *ret, sp->parts) != 0)
        goto out;
    err = OSN_ENOMEM;
    for (int k = 0; k < sp->parts; k++) {
        at = (long)k * longest;
        for (long i = osn_split_first(n, k, sp->parts); i < osn_split_first(n, k + 1, sp->parts);
             i++) {
            if (k != sp->part) {
                memcpy(reps[i].tot, slot[i].tot, sizeof reps[i].tot);
                reps[i].events = slot[i].events;
                reps[i].nret = reps[i].ret_cap = slot[i].nret;
                free(reps[i].ret); /* a kept replication's copy */
                reps[i].ret = malloc((size_t)(slot[i].nret > 0 ? slot[i].nret : 1) * sizeof *ret);
                if (!reps[i].ret)
                    goto out;
                memcpy(reps[i].ret, ret + at, (size_t)slot[i].nret * sizeof *ret);
            }
            at += slot[i].nret;
        }
    }
    err = 0;
out:
    free(slot);
    free(block_len);
    free(ret);
    return err;
}

int osn_sim_reps_ntot(void)
{
    return OSN__NTOT;
}

/* A copy of n return times (NULL for none); *ok false when out of memory. */
static double *copy_ret(const double *ret, long n, bool *ok)
{
    double *c = n > 0 ? malloc((size_t)n * sizeof *c) : NULL;
    if (n > 0 && !c)
        *ok = false;
    else if (n > 0)
        memcpy(c, ret, (size_t)n * sizeof *c);
    return c;
}

/* The kept replications 0 .. have-1 into reps (copies: reps are freed after the run), before
 * the others run; 0 or OSN_ENOMEM. */
static int take_kept(const struct osn_reps *keep, struct osn__sim_rep *reps, long have)
{
    bool ok = true;
    for (long i = 0; i < have; i++) {
        memcpy(reps[i].tot, keep->tot + (size_t)i * OSN__NTOT, sizeof reps[i].tot);
        reps[i].events = keep->events[i];
        reps[i].nret = reps[i].ret_cap = keep->nret[i];
        reps[i].ret = copy_ret(keep->ret[i], keep->nret[i], &ok);
    }
    return ok ? 0 : OSN_ENOMEM;
}

/* Every replication of reps into keep, which then holds n; 0 or OSN_ENOMEM. */
static int give_kept(struct osn_reps *keep, const struct osn__sim_rep *reps, long n)
{
    bool ok = true;
    if (osn_reps_reserve(keep, n, OSN__NTOT) != 0)
        return OSN_ENOMEM;
    for (long i = keep->n; i < n && ok; i++) {
        memcpy(keep->tot + (size_t)i * OSN__NTOT, reps[i].tot, sizeof reps[i].tot);
        keep->events[i] = reps[i].events;
        keep->nret[i] = reps[i].nret;
        keep->ret[i] = copy_ret(reps[i].ret, reps[i].nret, &ok);
    }
    if (ok)
        keep->n = n;
    return ok ? 0 : OSN_ENOMEM;
}

static void report(void *ctx, double done)
{
    const struct job *j = ctx;
    j->cfg->progress(done, atomic_load(&j->events), osn_wall_s() - j->t0, j->cfg->progress_arg);
}

static void estimate(const struct osn__sim_rep *reps, int nrep, double level,
                     struct osn_sim_result *out, double *loo)
{
    double pooled[OSN__NTOT] = {0}, part[OSN__NTOT];

    for (int i = 0; i < nrep; i++)
        for (int k = 0; k < OSN__NTOT; k++)
            pooled[k] += reps[i].tot[k];
    for (int e = 0; e < OSN_SIM_NMEASURES; e++) {
        struct osn_sim_est *est = &out->est[e];
        est->value = osn__sim_measure(e, pooled, &est->n);
        est->hw = NAN;
        if (nrep < 2 || !isfinite(est->value))
            continue;
        for (int i = 0; i < nrep; i++) {
            double n;
            for (int k = 0; k < OSN__NTOT; k++)
                part[k] = pooled[k] - reps[i].tot[k];
            loo[i] = osn__sim_measure(e, part, &n);
        }
        est->hw = osn_stats_jackknife_halfwidth(loo, nrep, level);
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/*
 * Empirical quantiles of the return time from all replications' episodes: the p quantile is
 * the order statistic X_(ceil(n p)); its half-width is the larger distance to the order
 * statistics at n p -+ z sqrt(n p (1 - p)), the distribution-free binomial interval, exact for
 * independent episodes (under policy I each onset enters the same state, so episodes are
 * independent and identically distributed).
 */
static int quantiles(const struct osn__sim_rep *reps, int nrep, double level, bool keep,
                     struct osn_sim_result *out)
{
    static const double probs[4] = {0.50, 0.90, 0.95, 0.99};
    long n = 0;
    for (int i = 0; i < nrep; i++)
        n += reps[i].nret;
    for (int k = 0; k < 4; k++)
        out->est[OSN_SIM_T_RET_P50 + k] = (struct osn_sim_est){NAN, NAN, (double)n};
    if (n == 0)
        return 0;
    double *x = malloc((size_t)n * sizeof *x);
    if (!x)
        return OSN_ENOMEM;
    long at = 0;
    for (int i = 0; i < nrep; i++) {
        if (reps[i].nret > 0) /* ret is NULL in a replication without an episode */
            memcpy(x + at, reps[i].ret, (size_t)reps[i].nret * sizeof *x);
        at += reps[i].nret;
    }
    qsort(x, (size_t)n, sizeof *x, cmp_double);
    const double z = osn_stats_normal_quantile(0.5 + level / 2);
    for (int k = 0; k < 4; k++) {
        const double p = probs[k], np = (double)n * p, spread = z * sqrt(np * (1 - p));
        long r = (long)ceil(np), lo = (long)floor(np - spread), hi = (long)ceil(np + spread);
        r = r < 1 ? 1 : r;
        struct osn_sim_est *e = &out->est[OSN_SIM_T_RET_P50 + k];
        e->value = x[r - 1];
        if (lo >= 1 && hi <= n)
            e->hw = fmax(x[hi - 1] - e->value, e->value - x[lo - 1]);
    }
    if (keep) {
        out->T_ret_sorted = x;
        out->T_ret_n = n;
    } else {
        free(x);
    }
    return 0;
}

int osn_sim_run(const struct osn_model *m, const struct osn_sim_cfg *cfg,
                struct osn_sim_result *out, char *msg, size_t msgsize)
{
    struct osn_sim_cfg c;
    struct job j = {0};
    struct osn_study_reps par = {0};
    double *loo = NULL;
    int err;

    if (!out)
        return OSN_EINVAL;
    err = osn_sim_check(m, cfg, NULL, msg, msgsize);
    if (err)
        return err;
    struct osn_model mm = sim_model(m);
    c = *cfg;
    /* A trace ends the observation at its last instant. */
    if (mm.process == OSN_ARR_TRACE && c.warmup + c.time > mm.trace[mm.ntrace - 1])
        c.time = mm.trace[mm.ntrace - 1] - c.warmup;

    const double t0 = osn_wall_s();
    size_t n = (size_t)c.replications;
    j.m = &mm;
    j.cfg = &c;
    j.t0 = t0;
    j.reps = calloc(n, sizeof *j.reps);
    loo = malloc(n * sizeof *loo);
    err = OSN_ENOMEM;
    if (!j.reps || !loo)
        goto out;
    par = (struct osn_study_reps){.n = c.replications,
                                  .seed = c.seed,
                                  .threads = c.threads,
                                  .have = c.keep ? c.keep->n : 0,
                                  .split = c.split,
                                  .rep = one_rep,
                                  .ctx = &j,
                                  .progress = c.progress ? report : NULL,
                                  .span = c.warmup + c.time};
    if (par.have > 0 && take_kept(c.keep, j.reps, par.have) != 0)
        goto out;
    err = osn_study_reps_run(&par);
    if (err)
        goto out;
    if (c.split && c.split->parts > 1 && c.replications > par.have &&
        (err = exchange_reps(c.split, j.reps + par.have, (int)(c.replications - par.have)))) {
        if (err == OSN_EIO && msg && msgsize)
            snprintf(msg, msgsize, "the replications could not be exchanged between processes");
        goto out;
    }

    if (c.keep) {
        if ((err = give_kept(c.keep, j.reps, c.replications)) != 0)
            goto out;
        c.keep->ran = par.ran;
    }

    *out = (struct osn_sim_result){0};
    estimate(j.reps, c.replications, c.level, out, loo);
    err = quantiles(j.reps, c.replications, c.level, c.keep_tret, out);
    if (err)
        goto out;
    for (int i = 0; c.rep_measures && i < c.replications; i++)
        for (int k = 0; k < OSN_SIM_NMEASURES; k++) {
            double nobs;
            c.rep_measures[(size_t)i * OSN_SIM_NMEASURES + (size_t)k] =
                    osn__sim_measure((enum osn_sim_measure)k, j.reps[i].tot, &nobs);
        }
    for (int i = 0; i < c.replications; i++)
        out->events += j.reps[i].events;
    out->replications = c.replications;
    out->level = c.level;
    out->time = c.time;
    out->threads = c.threads;
    out->wall_s = osn_wall_s() - t0;
    uint64_t kept = 0; /* the kept replications' events were not simulated by this run */
    for (long i = 0; i < par.have; i++)
        kept += j.reps[i].events;
    out->events_per_s = out->wall_s > 0 ? (double)(out->events - kept) / out->wall_s : NAN;
out:
    if (err == OSN_ENOMEM && msg && msgsize)
        snprintf(msg, msgsize, "out of memory");
    for (int i = 0; j.reps && i < c.replications; i++)
        free(j.reps[i].ret);
    free(j.reps);
    free(loo);
    return err;
}
