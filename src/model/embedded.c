/*
 * General service times: the hysteretic M|G|1 (and M2|G|1) models through the Markov chain
 * embedded at departures (docs/models.md, "General service").
 *
 * After a departure the state is (mode, n), n < R. During the next service only arrivals happen
 * (after an idle period 1/lambda_0 in (0,0) when the system is empty), along a path whose rates
 * depend on the mode: under policy I an onset switches the mode on the way up; under policy II
 * the mode stays until the departure; the path stops rising at R or in mode 2. Uniformising the
 * path at the largest arrival rate lam, the service ends in path state j with probability
 *     p_j = sum_m c_m u_m(j),    and the expected time in path state j is
 *     e_j = sum_m d_m u_m(j),    d_m = (1/lam) sum_{i>m} c_i,
 * where c_m are the mixed-Poisson weights of the law (mixpois.c) and u_m the m-step
 * distribution of the uniformised path. The departure then moves n down with the abatement
 * switches. The embedded chain is solved by GTH state reduction (its transitions go at most one
 * level down, so each elimination touches two levels), and turned into time-stationary
 * probabilities by the expected occupation times per cycle. Rates of onsets and mode changes are
 * counted per cycle (switching arrivals: occupation times rate; switching departures: the
 * end-of-service probabilities), and T_ret, T_cyc, T_disc follow from the renewal identities.
 *
 * Everything is in extended range, like the level solver. Cost: O(states x terms x path) for
 * the paths and O(states x band) for the banded reduction (emb_band.c), so this method is for R
 * up to a few thousand. With a caller's solve cache (an optimiser's worker) the rows above the
 * levels where this chain differs from the one kept there are taken eliminated from it
 * (emb_band.h): the same bits, a fraction of the work for the pairs of one H.
 */
#include "emb_band.h"
#include "model_int.h"

#include <stdlib.h>
#include <string.h>

#include "osn/err.h"

typedef struct osn_xd xd;

struct emb {
    const struct osn_model *m;
    struct osn__chain c;
    long N;      /* embedded states: (mode, n) with n < R, level-major */
    long *index; /* index[3 n + s], or -1 */
    int *mode;   /* of each embedded state */
    long *level;
    xd *c_w, *d_w; /* mixed-Poisson weights and their tails / lam */
    long M;
    double lam;                      /* uniformisation rate */
    const struct osn__emb_level *lv; /* levels 0..R: the model's answers, read by the paths */
    long *run_end; /* [3 n + s]: the last level of the path's run of mode s and rate at n */
};

/* Accepted arrival rate at (s, n): 0 in mode 2 and at R. */
static double rate_at(const struct emb *e, int s, long n)
{
    return n >= e->m->R ? 0 : e->c.lam[s];
}

/*
 * The arrival path of one service started in (s, n); returns its length. The path stops at its
 * M-th state even when more arrivals could come: the weights stop at M - 1 arrivals, so the
 * service never ends further up (p_j = e_j = 0 there), and walking the rest of a path that may
 * reach R would make every start state cost O(R) instead of O(M).
 */
static long build_path(const struct emb *e, int s, long n, int *ps, long *pn, double *pr)
{
    long len = 0;
    for (;;) {
        /* A run: the same mode and rate up to run_end, written without a step's dependence on
         * the one before (stepping level by level through the descriptions was a tenth of an
         * optimiser scan). The states are those of stepping: arrival[s] = s inside a run. */
        const double r = e->lv[n].rate[s];
        long last = r == 0 ? n : e->run_end[3 * n + s];
        if (last - n >= e->M - len)
            last = n + e->M - len - 1;
        for (long l = n; l <= last; l++, len++) {
            ps[len] = s;
            pn[len] = l;
            pr[len] = r;
        }
        if (r == 0 || len == e->M)
            break;
        n = last + 1;
        s = e->lv[n].arrival[s];
    }
    return len;
}

/*
 * p[j] and occ[j] (expected time) of the path states for one service. u is scratch of the path
 * length.
 */
static void service_end(const struct emb *e, long len, const double *pr, xd *p, xd *occ, xd *u)
{
    for (long j = 0; j < len; j++)
        p[j] = occ[j] = u[j] = osn_xd(0);
    u[0] = osn_xd(1);
    long top = 0; /* highest j with u[j] != 0 */
    for (long m = 0; m < e->M; m++) {
        for (long j = 0; j <= top; j++) {
            p[j] = osn_xd_add(p[j], osn_xd_mul(e->c_w[m], u[j]));
            occ[j] = osn_xd_add(occ[j], osn_xd_mul(e->d_w[m], u[j]));
        }
        /* One uniformised step: up with r_j/lam, else stay. */
        long ntop = top + 1 < len ? top + 1 : top;
        for (long j = ntop; j >= 0; j--) {
            xd stay = j <= top ? osn_xd_muld(u[j], (e->lam - pr[j]) / e->lam) : osn_xd(0);
            xd in = j > 0 ? osn_xd_muld(u[j - 1], pr[j - 1] / e->lam) : osn_xd(0);
            u[j] = osn_xd_add(stay, in);
        }
        top = ntop;
    }
}

static void start_of(const struct emb *e, long x, int *s, long *n);

/*
 * The end-of-service distribution of the service started by embedded state x: `known` when the
 * caller has it (a pointer into the cache from an earlier look-up), else from the cache, or
 * computed (into the scratch arrays) and stored there. *pp and *po stay valid until the next
 * call; *in_cache says whether they point into the cache (then they stay valid as long as its
 * generation does).
 */
static int path_of(const struct emb *e, struct osn_solve_cache *cache, long x, int *ps, long *pn,
                   double *pr, xd *p, xd *occ, xd *u, long *len, const xd *const known[2],
                   const xd **pp, const xd **po, int *in_cache)
{
    int s;
    long n;
    start_of(e, x, &s, &n);
    *len = build_path(e, s, n, ps, pn, pr);
    *in_cache = 1;
    if (known && known[0]) {
        *pp = known[0];
        *po = known[1];
        return 0;
    }
    if (osn__cache_get(cache, e->lam, &e->m->service, *len, pr, pp, po))
        return 0;
    service_end(e, *len, pr, p, occ, u);
    *pp = p;
    *po = occ;
    *in_cache = 0;
    int err = osn__cache_put(cache, *len, pr, p, occ);
    if (!err && osn__cache_get(cache, e->lam, &e->m->service, *len, pr, pp, po))
        *in_cache = 1; /* the stored copy: the same values */
    return err;
}

static void emb_free(struct emb *e)
{
    free(e->index);
    free(e->mode);
    free(e->level);
    free(e->c_w);
    free(e->d_w);
    free(e->run_end);
}

static int emb_init(struct emb *e, const struct osn_model *m)
{
    memset(e, 0, sizeof *e);
    e->m = m;
    osn__chain_init(&e->c, m, 0);
    e->index = malloc(3 * (size_t)m->R * sizeof *e->index);
    e->mode = malloc(3 * (size_t)m->R * sizeof *e->mode);
    e->level = malloc(3 * (size_t)m->R * sizeof *e->level);
    if (!e->index || !e->mode || !e->level)
        return OSN_ENOMEM;
    for (long n = 0; n < m->R; n++)
        for (int s = 0; s < 3; s++) {
            long k = 3 * n + s;
            e->index[k] = osn__present(&e->c, s, n) ? e->N : -1;
            if (e->index[k] >= 0) {
                e->mode[e->N] = s;
                e->level[e->N++] = n;
            }
        }
    e->lam = e->c.lam[0] > e->c.lam[1] ? e->c.lam[0] : e->c.lam[1];
    int err = 0;
    e->c_w = osn__mixpois(&m->service, e->lam, &e->M, &err);
    if (!e->c_w)
        return err;
    e->d_w = malloc((size_t)e->M * sizeof *e->d_w);
    if (!e->d_w)
        return OSN_ENOMEM;
    xd tail = osn_xd(0);
    for (long i = e->M - 1; i >= 0; i--) {
        e->d_w[i] = osn_xd_div(tail, osn_xd(e->lam));
        tail = osn_xd_add(tail, e->c_w[i]);
    }
    return 0;
}

/* Where a service started at embedded state x begins its path: (s, n), after idling at 0. */
static void start_of(const struct emb *e, long x, int *s, long *n)
{
    *s = e->mode[x];
    *n = e->level[x];
    if (*n == 0) {
        *s = osn__mode_after_arrival(e->m, *s, 1);
        *n = 1;
    }
}

/* Per-cycle expected counts of mode changes, accumulated with the embedded weights. */
struct counts {
    xd onsets, discards, changes;
};

static void count_switch(struct counts *c, int from, int to, xd w)
{
    if (from == to)
        return;
    c->changes = osn_xd_add(c->changes, w);
    if (from == 0)
        c->onsets = osn_xd_add(c->onsets, w);
    if (to == 2)
        c->discards = osn_xd_add(c->discards, w);
}

/*
 * Levels 0..R as the rows of the embedded chain see them (emb_band.h): exactly the values
 * build_path(), start_of() and pass 1 ask the model for, so that two chains described alike
 * from some level up have the same rows there. Zeroed first: the descriptions are compared
 * with memcmp, padding included.
 */
static int describe_levels(struct emb *e, struct osn__emb_level **lvp, struct osn__emb_key *key)
{
    const long R = e->m->R;
    struct osn__emb_level *lv = calloc((size_t)R + 1, sizeof *lv);
    if (!lv)
        return OSN_ENOMEM;
    for (long n = 0; n <= R; n++)
        for (int s = 0; s < 3; s++) {
            lv[n].rate[s] = rate_at(e, s, n);
            lv[n].present[s] = (signed char)osn__present(&e->c, s, n);
            lv[n].arrival[s] = (signed char)osn__mode_after_arrival(e->m, s, n);
            lv[n].departure[s] = (signed char)osn__mode_after_departure(e->m, s, n);
        }
    e->run_end = malloc(3 * ((size_t)R + 1) * sizeof *e->run_end);
    if (!e->run_end) {
        free(lv);
        return OSN_ENOMEM;
    }
    for (long n = R; n >= 0; n--) /* a run goes on while an arrival keeps the mode and rate */
        for (int s = 0; s < 3; s++)
            e->run_end[3 * n + s] =
                    n < R && lv[n + 1].arrival[s] == s && lv[n + 1].rate[s] == lv[n].rate[s]
                            ? e->run_end[3 * (n + 1) + s]
                            : n;
    memset(key, 0, sizeof *key);
    key->R = R;
    key->up = e->M;
    key->lam = e->lam;
    key->law = e->m->service;
    *lvp = lv;
    return 0;
}

int osn__embedded_solve(const struct osn_model *m, struct osn_measures *out, osn_dist_fn dist,
                        void *arg, struct osn_solve_cache *cache)
{
    struct emb e;
    struct osn_solve_cache *own = NULL; /* a cache for this solve: pass 2 reuses pass 1 */
    const xd *pp, *po;
    long len;
    int in_cache;
    const long R = m->R;
    struct osn__band a = {0};
    struct osn__emb_shared **shared = NULL; /* the elimination kept by the caller's cache */
    struct osn__emb_level *levels = NULL;
    struct osn__emb_key key;
    struct osn__emb_reuse ru = {NULL, 0, 0};
    xd *pi = NULL, *p = NULL, *occ = NULL, *u = NULL, *time = NULL;
    int *ps = NULL;
    long *pn = NULL;
    double *pr = NULL;
    int err = emb_init(&e, m);
    if (!err && cache)
        shared = osn__cache_emb_shared(cache);
    else if (!err && !(err = osn_solve_cache_new(&own)))
        cache = own;
    if (err)
        goto out;
    const long N = e.N;
    ru.top = N;
    if ((err = describe_levels(&e, &levels, &key)))
        goto out;
    e.lv = levels;
    if (shared) { /* the rows this chain has in common with the last one kept */
        osn__emb_reuse_find(*shared, &key, levels, N, e.level, &ru);
        osn__emb_shared_take_work(*shared, &a);
    }
    /* A service holds at most M - 1 arrivals (the weights stop there), so a departure lands at
     * most M - 1 levels above the start (the start's own level for an empty system at 0). */
    if ((err = osn__band_init(&a, N, e.level, e.M, ru.top)))
        goto out;
    pi = malloc((size_t)N * sizeof *pi);
    p = malloc((size_t)(R + 2) * sizeof *p);
    occ = malloc((size_t)(R + 2) * sizeof *occ);
    u = malloc((size_t)(R + 2) * sizeof *u);
    time = calloc(3 * (size_t)(R + 1), sizeof *time);
    ps = malloc((size_t)(R + 2) * sizeof *ps);
    pn = malloc((size_t)(R + 2) * sizeof *pn);
    pr = malloc((size_t)(R + 2) * sizeof *pr);
    err = OSN_ENOMEM;
    if (!pi || !p || !occ || !u || !time || !ps || !pn || !pr)
        goto out;

    /* Pass 1: the embedded transition matrix (its rows from ru.top up are the shared ones). */
    const unsigned long gen = osn__cache_generation(cache);
    for (long x = 0; x < ru.top; x++) {
        if ((err = path_of(&e, cache, x, ps, pn, pr, p, occ, u, &len, NULL, &pp, &po, &in_cache)))
            goto out;
        a.path[x][0] = in_cache ? pp : NULL;
        a.path[x][1] = po;
        for (long j = 0; j < len; j++) {
            int t = levels[pn[j] - 1].departure[ps[j]];
            long y = e.index[3 * (pn[j] - 1) + t];
            if (y < 0) {
                err = OSN_ENUMERIC; /* a departure into a state the model lacks: a bug */
                goto out;
            }
            if (osn_xd_is_zero(pp[j]))
                continue;
            if (!osn__band_in(&a, x, y)) {
                err = OSN_ENUMERIC; /* beyond the band: the bound above is wrong */
                goto out;
            }
            xd *axy = osn__band_at(&a, x, y);
            *axy = osn_xd_add(*axy, pp[j]);
        }
    }
    err = osn__band_gth(&a, &ru, pi);
    if (err)
        goto out;

    /* Pass 2: occupation times and switch counts per cycle, weighted by pi. */
    struct counts cnt = {osn_xd(0), osn_xd(0), osn_xd(0)};
    xd cycle = osn_xd(0), lost[2] = {osn_xd(0), osn_xd(0)};
    for (long x = 0; x < N; x++) {
        int s;
        long n;
        start_of(&e, x, &s, &n);
        if (e.level[x] == 0) { /* idle in (0,0), then an arrival that may switch */
            xd idle = osn_xd_div(pi[x], osn_xd(e.c.lam[e.mode[x]]));
            time[0] = osn_xd_add(time[0], idle);
            count_switch(&cnt, e.mode[x], s, pi[x]);
        }
        /* The look-up of pass 1 or of the shared solve, while the cache has not been emptied
         * since (its rows are this chain's, so are their paths). */
        const xd *const *known = NULL;
        if (osn__cache_generation(cache) == gen)
            known = x < ru.top                                     ? a.path[x]
                    : ru.band->path_ok && ru.band->path_gen == gen ? ru.band->path[x + ru.shift]
                                                                   : NULL;
        if ((err = path_of(&e, cache, x, ps, pn, pr, p, occ, u, &len, known, &pp, &po, &in_cache)))
            goto out;
        a.path[x][0] = in_cache ? pp : NULL;
        a.path[x][1] = po;
        for (long j = 0; j < len; j++) {
            xd w = osn_xd_mul(pi[x], po[j]);
            time[3 * pn[j] + ps[j]] = osn_xd_add(time[3 * pn[j] + ps[j]], w);
            /* Switches only: the weights of the other transitions would be counted nowhere. */
            if (j + 1 < len && ps[j + 1] != ps[j]) /* arrivals from path state j: rate x time */
                count_switch(&cnt, ps[j], ps[j + 1], osn_xd_muld(w, pr[j]));
            int t = levels[pn[j] - 1].departure[ps[j]];
            if (t != ps[j])
                count_switch(&cnt, ps[j], t, osn_xd_mul(pi[x], pp[j]));
        }
    }
    for (long k = 0; k < 3 * (R + 1); k++)
        cycle = osn_xd_add(cycle, time[k]);

    /* Time-stationary measures. */
    struct osn__lvl lv;
    struct osn__lchain lc;
    osn__chain_levels(&e.c, &lc);
    long run_lo, run_hi = -1;
    xd P[3] = {osn_xd(0), osn_xd(0), osn_xd(0)}, N_mean = osn_xd(0);
    long states = 0;
    for (long n = 0; n <= R; n++) {
        for (int s = 0; s < 3; s++) {
            if (!osn__present(&e.c, s, n))
                continue;
            xd q = osn_xd_div(time[3 * n + s], cycle);
            states++;
            P[s] = osn_xd_add(P[s], q);
            N_mean = osn_xd_add(N_mean, osn_xd_muld(q, (double)n));
            if (dist && (err = dist(s, n, q, arg)))
                goto out;
        }
        /* Losses by PASTA, with the level chain's per-state lost rates (exp or not alike). */
        if (n >= lc.lo && n <= lc.hi) {
            if (n > run_hi) { /* levels of one run are filled alike: once is enough */
                lc.fill(lc.ctx, n, &lv);
                run_hi = n;
                if (lc.run)
                    lc.run(lc.ctx, n, &run_lo, &run_hi);
            }
            for (int i = 0; i < lv.m; i++)
                for (int f = 0; f < 2; f++)
                    lost[f] = osn_xd_add(lost[f],
                                         osn_xd_muld(osn_xd_div(time[3 * n + lv.mode[i]], cycle),
                                                     lv.lost[i][f]));
        }
    }
    for (int s = 0; s < 3; s++)
        out->P[s] = P[s];
    out->prob_sum = osn_xd_add(osn_xd_add(P[0], P[1]), P[2]);
    out->p00 = osn_xd_div(time[0], cycle);
    out->N_mean = N_mean;
    out->throughput = osn_xd_div(osn_xd(1), cycle); /* one departure per cycle */
    out->sojourn = osn_xd_div(N_mean, out->throughput);
    out->nu01 = osn_xd_div(cnt.onsets, cycle);
    out->nu12 = osn_xd_div(cnt.discards, cycle);
    out->mode_change_rate = osn_xd_div(cnt.changes, cycle);
    const double off0 = e.c.offered[0], off1 = e.c.offered[1];
    out->theta = osn_xd_div(osn_xd_add(lost[0], lost[1]), osn_xd(off0 + off1));
    out->loss_flow1 = off0 > 0 ? osn_xd_div(lost[0], osn_xd(off0)) : osn_xd(0);
    out->loss_flow2 = off1 > 0 ? osn_xd_div(lost[1], osn_xd(off1)) : osn_xd(0);
    osn__renewal_times(out);
    out->T_ret = out->T_ret_renewal; /* this method has no passage solve of its own */
    out->T_ret_sd = osn_xd(0);
    out->have_sd = false;
    out->states = states;
    out->method = OSN_METHOD_GENERAL;
    a.path_gen = gen;
    a.path_ok = osn__cache_generation(cache) == gen;
    if (shared) /* a failure to keep it costs the next solves time, not this one its result */
        osn__emb_shared_offer(shared, &key, levels, m, &a, &ru);
    err = 0;
out:
    osn_solve_cache_free(own);
    emb_free(&e);
    osn__band_free(&a);
    free(levels);
    free(pi);
    free(p);
    free(occ);
    free(u);
    free(time);
    free(ps);
    free(pn);
    free(pr);
    return err;
}
