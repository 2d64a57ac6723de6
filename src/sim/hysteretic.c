/*
 * One replication of the hysteretic queue (docs/models.md), with a feedback delay. "Queue"
 * names this single-server simulator; "node" means only the real `osn node`.
 *
 * The queue keeps its own tiny event set instead of the general event set of src/des/evset.c: at
 * any time it has at most one pending arrival, one pending departure and a FIFO of delayed mode
 * notices, and a FIFO of a fixed delay is already in time order (the timer-list idea of
 * des/evset.c). Picking the least of three clocks costs two compares, against a heap push and pop
 * per event, and that is most of the difference between 10 and 30+ million events per second.
 * Simultaneous events fire as notices, then departures, then arrivals.
 *
 * State: n in 0..R, the server's mode, and the upstream's view of it `umode`, which is the mode
 * of d seconds ago (with d = 0 it is the mode itself and the queue is exactly the model). An
 * offered arrival first meets the upstream, which holds it back by umode (mode 1: one flow
 * thinned to lambda'/lambda, flow 2 of two blocked, MMPP accept[1][phase]; mode 2: everything
 * blocked, MMPP accept[2][phase]); an arrival that passes is discarded by the server when the
 * server is in mode 2 or full (n = R), else accepted. Policy I switches modes on accepted
 * arrivals and departures at the thresholds; policy II re-evaluates the mode at departures only.
 *
 * Time averages are integrated at every change of (n, mode); rejected arrivals change nothing
 * and cost only their draw. The arrival instants of the customers in the system sit in a ring
 * (FIFO), so sojourn times are measured directly, not through Little's law.
 */
#include <stdlib.h>
#include <string.h>

#include "osn/des.h"
#include "osn/err.h"
#include "sim_int.h"

struct notice {
    double t;
    int mode;
};

struct queue {
    /* parameters */
    long R, L1, H1, L2, H2;
    bool policy2;
    double d;
    enum osn_arrival_kind kind;
    int flows;
    double inv_lam; /* one Poisson flow: 1 / offered rate */
    double a1;      /* one flow (Poisson or trace): accepted fraction in mode 1 */
    const struct osn_mmpp *mp;
    struct osn_des_arr arr;
    const struct osn_law *svc;
    bool svc_exp;
    double inv_mu; /* mean service time of an exponential law */
    /* Common random numbers: arrivals, service times and the upstream's random admission
     * each draw from a stream of their own, split from the replication's (queue_setup), so
     * runs that differ only in thresholds or control offer the same arrival instants. */
    struct osn_rng arr_rng, svc_rng, ctl_rng;
    /* state */
    double tlast; /* time of the last change of (n, mode) */
    long n;
    int mode, umode;
    double t_arr, t_dep;
    int arr_flow;
    double *q; /* arrival instants of the customers in the system */
    size_t qcap, qhead;
    struct notice *nq; /* pending mode notices to the upstream */
    size_t ncap, nhead, nn;
    double t_on; /* instant of the current overload onset */
    bool on_valid;
    struct osn__sim_rep *rep;
};

/* Doubles a ring of `size`-byte items holding `count` items from `head`, unwrapping it. */
static int ring_grow(void **buf, size_t *cap, size_t *head, size_t count, size_t size)
{
    size_t ncap = *cap ? *cap * 2 : 64;
    char *nb = malloc(ncap * size);
    if (!nb)
        return OSN_ENOMEM;
    for (size_t i = 0; i < count; i++)
        memcpy(nb + i * size, (char *)*buf + ((*head + i) & (*cap - 1)) * size, size);
    free(*buf);
    *buf = nb;
    *cap = ncap;
    *head = 0;
    return 0;
}

static inline double service(struct queue *x)
{
    return x->svc_exp ? osn_des_exp1(&x->svc_rng) * x->inv_mu
                      : osn_des_law_draw(x->svc, &x->svc_rng);
}

static inline void next_arrival(struct queue *x)
{
    if (x->kind == OSN_ARR_POISSON && x->flows == 1)
        x->t_arr += osn_des_exp1(&x->arr_rng) * x->inv_lam;
    else
        x->t_arr = osn_des_arr_next(&x->arr, &x->arr_rng, &x->arr_flow);
}

/* Integrates the time averages up to t. */
static inline void account(struct queue *x, double t)
{
    double dt = t - x->tlast;
    x->rep->tot[OSN__TOT_MODE0 + x->mode] += dt;
    x->rep->tot[OSN__TOT_AREA] += (double)x->n * dt;
    x->tlast = t;
}

static int set_mode(struct queue *x, int to, double t)
{
    double *tot = x->rep->tot;
    int from = x->mode;

    tot[OSN__TOT_CHANGES] += 1;
    if (from == 0) {
        tot[OSN__TOT_ONSET] += 1;
        x->t_on = t;
        x->on_valid = true;
    }
    if (to == 2)
        tot[OSN__TOT_ENTRY2] += 1;
    if (to == 0 && x->on_valid) {
        double r = t - x->t_on;
        tot[OSN__TOT_RET] += 1;
        tot[OSN__TOT_RET_SUM] += r;
        tot[OSN__TOT_RET_SUM2] += r * r;
        struct osn__sim_rep *rep = x->rep;
        if (rep->nret == rep->ret_cap) {
            long cap = rep->ret_cap ? 2 * rep->ret_cap : 256;
            double *b = realloc(rep->ret, (size_t)cap * sizeof *b);
            if (!b)
                return OSN_ENOMEM;
            rep->ret = b;
            rep->ret_cap = cap;
        }
        rep->ret[rep->nret++] = r;
    }
    x->mode = to;
    if (x->d <= 0) {
        x->umode = to;
        return 0;
    }
    if (x->nn == x->ncap) {
        void *b = x->nq;
        int err = ring_grow(&b, &x->ncap, &x->nhead, x->nn, sizeof *x->nq);
        x->nq = b;
        if (err)
            return err;
    }
    x->nq[(x->nhead + x->nn++) & (x->ncap - 1)] = (struct notice){t + x->d, to};
    return 0;
}

/* Does the upstream, in its view umode, let an offered arrival of `flow` through? */
static inline bool upstream_passes(struct queue *x, int flow)
{
    if (x->kind == OSN_ARR_MMPP) {
        double a = x->mp->accept[x->umode][x->arr.phase];
        return a >= 1 || (a > 0 && osn_rng_u01(&x->ctl_rng) < a);
    }
    switch (x->umode) {
    case 0:
        return true;
    case 1:
        if (x->flows == 2)
            return flow == 0;
        return x->a1 >= 1 || osn_rng_u01(&x->ctl_rng) < x->a1;
    default:
        return false;
    }
}

static int arrival(struct queue *x, double t)
{
    double *tot = x->rep->tot;
    int flow = x->arr_flow;

    tot[OSN__TOT_OFF0 + flow] += 1;
    if (!upstream_passes(x, flow)) {
        tot[OSN__TOT_THR] += 1;
        tot[OSN__TOT_LOST0 + flow] += 1;
        return 0;
    }
    if (x->mode == 2 || x->n >= x->R) {
        tot[OSN__TOT_DISC] += 1;
        tot[OSN__TOT_LOST0 + flow] += 1;
        return 0;
    }
    account(x, t);
    if ((size_t)x->n == x->qcap) {
        void *b = x->q;
        int err = ring_grow(&b, &x->qcap, &x->qhead, (size_t)x->n, sizeof *x->q);
        x->q = b;
        if (err)
            return err;
    }
    x->q[(x->qhead + (size_t)x->n) & (x->qcap - 1)] = t;
    if (x->n++ == 0)
        x->t_dep = t + service(x);
    if (!x->policy2) {
        if (x->mode == 0 && x->n == x->H1)
            return set_mode(x, 1, t);
        if (x->mode == 1 && x->n == x->H2)
            return set_mode(x, 2, t);
    }
    return 0;
}

/* Policy II: the mode after a departure leaves k (docs/models.md). */
static int mode_after_departure_ii(const struct queue *x, long k)
{
    switch (x->mode) {
    case 0:
        return k >= x->H2 ? 2 : k >= x->H1 ? 1 : 0;
    case 1:
        return k <= x->L1 ? 0 : k >= x->H2 ? 2 : 1;
    default:
        return k <= x->L2 ? 1 : 2;
    }
}

static int departure(struct queue *x, double t)
{
    double *tot = x->rep->tot;

    account(x, t);
    tot[OSN__TOT_DEP] += 1;
    tot[OSN__TOT_SOJ] += t - x->q[x->qhead];
    x->qhead = (x->qhead + 1) & (x->qcap - 1);
    x->n--;
    x->t_dep = x->n > 0 ? t + service(x) : INFINITY;
    int to = x->mode;
    if (x->policy2)
        to = mode_after_departure_ii(x, x->n);
    else if (x->mode == 1 && x->n == x->L1)
        to = 0;
    else if (x->mode == 2 && x->n == x->L2)
        to = 1;
    return to != x->mode ? set_mode(x, to, t) : 0;
}

/* Simulates every event up to and including t_end. */
static int advance(struct queue *x, double t_end, _Atomic double *now_t)
{
    uint64_t events = x->rep->events;
    int err = 0;

    for (;;) {
        double tn = x->nn ? x->nq[x->nhead].t : INFINITY;
        double ta = x->t_arr, td = x->t_dep;
        if (tn <= td && tn <= ta) {
            if (tn > t_end)
                break;
            x->umode = x->nq[x->nhead].mode;
            x->nhead = (x->nhead + 1) & (x->ncap - 1);
            x->nn--;
        } else if (td <= ta) {
            if (td > t_end)
                break;
            err = departure(x, td);
        } else {
            if (ta > t_end)
                break;
            err = arrival(x, ta);
            next_arrival(x);
        }
        if (err)
            break;
        if ((++events & 0xfffff) == 0 && now_t)
            atomic_store_explicit(now_t, fmin(ta, td), memory_order_relaxed);
    }
    x->rep->events = events;
    return err;
}

/* advance() up to t_end; with a trace, in steps that end at each row's instant. */
static int run_to(struct queue *x, double t_end, _Atomic double *now_t, struct osn__sim_trace *tr)
{
    for (double tk; tr && (tk = osn__sim_trace_due(tr)) <= t_end;) {
        int err = advance(x, tk, now_t);
        if (err)
            return err;
        struct osn__sim_trace_state st = {x->n, x->mode, x->umode, x->tlast};
        osn__sim_trace_row(tr, &st, x->rep->tot);
    }
    return advance(x, t_end, now_t);
}

static void queue_setup(struct queue *x, const struct osn_model *m, const struct osn_sim_cfg *cfg,
                        struct osn_rng *rng, struct osn__sim_rep *rep)
{
    *x = (struct queue){0};
    x->R = m->R;
    x->L1 = m->L1;
    x->H1 = m->H1;
    x->L2 = m->L2;
    x->H2 = m->H2;
    x->policy2 = m->policy == OSN_POLICY_II;
    x->d = cfg->feedback_delay;
    x->kind = m->process;
    x->flows = m->process == OSN_ARR_POISSON && m->flows == 2 ? 2 : 1;
    x->inv_lam = 1 / m->rate;
    x->a1 = m->rate > 0 ? m->overload_rate / m->rate : 1;
    x->mp = &m->mmpp;
    x->svc = &m->service;
    x->svc_exp = m->service.kind == OSN_LAW_EXP;
    x->inv_mu = 1 / m->service.rate;
    osn_rng_seed(&x->arr_rng, osn_rng_next(rng));
    osn_rng_seed(&x->svc_rng, osn_rng_next(rng));
    osn_rng_seed(&x->ctl_rng, osn_rng_next(rng));
    x->rep = rep;
    x->t_dep = INFINITY;
}

int osn__sim_queue_run(const struct osn_model *m, const struct osn_sim_cfg *cfg,
                       struct osn_rng *rng, struct osn__sim_rep *rep, _Atomic double *now_t)
{
    struct queue x;
    struct osn_arrivals spec = osn_model_arrivals(m);
    struct osn__sim_trace trace, *tr = NULL;
    int err;

    memset(rep, 0, sizeof *rep);
    queue_setup(&x, m, cfg, rng, rep);
    err = osn_des_arr_setup(&x.arr, &spec, NULL, 0);
    if (err)
        return err;
    osn_des_arr_reset(&x.arr, 0);
    x.t_arr = 0;
    next_arrival(&x);

    double t_warm = cfg->warmup, t_end = cfg->warmup + cfg->time;
    if (cfg->trace && cfg->trace_interval > 0) {
        tr = &trace;
        osn__sim_trace_start(tr, cfg->trace, cfg->trace_interval);
    }
    err = run_to(&x, t_warm, now_t, tr);
    if (err)
        goto out;
    account(&x, t_warm);
    if (tr)
        osn__sim_trace_rebase(tr, rep->tot);
    uint64_t events = rep->events;
    memset(rep->tot, 0, sizeof rep->tot);
    rep->events = events;
    rep->nret = 0;
    x.on_valid = false; /* an overload period under way at the warm-up is not counted */
    err = run_to(&x, t_end, now_t, tr);
    if (err)
        goto out;
    account(&x, t_end);
    rep->tot[OSN__TOT_TIME] = t_end - t_warm;
out:
    free(x.q);
    free(x.nq);
    return err;
}
