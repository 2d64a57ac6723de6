/*
 * The measures of docs/models.md from the level chain: one stationary solve for the
 * probabilities and flow rates, then two first-passage solves on the overload states (modes 1
 * and 2) for the mean and the variance of the return time.
 *
 * Rates of events (overload onsets, discard onsets, mode changes, losses) are computed as flows
 * of the stationary vector along the chain's own transitions, so they hold for both switching
 * policies without special cases. The return time starts at the state overload is entered in,
 * weighted by the flow into it (one state, (1,H1), under policy I; a distribution under II).
 */
#include "model_int.h"

#include <stdlib.h>

#include "osn/err.h"

typedef struct osn_xd xd;

/*
 * The overload states that overload starts in, with the stationary flow into each: one state
 * under policy I, a few levels' worth under policy II. Kept as a list, not as a vector over all
 * overload states (which was 16 bytes a state for a handful of non-zeros).
 */
struct entries {
    long n, cap;
    long *idx;  /* index among the overload chain's states */
    int *phase; /* arrival phase of that state */
    xd *w;      /* flow into it */
    xd *m1;     /* mean passage time from it (filled by return_time) */
};

static void entries_free(struct entries *en)
{
    free(en->idx);
    free(en->phase);
    free(en->w);
    free(en->m1);
}

/* Adds flow f into overload state idx; consecutive flows into one state are merged. */
static int entries_add(struct entries *en, long idx, int phase, xd f)
{
    if (en->n > 0 && en->idx[en->n - 1] == idx) {
        en->w[en->n - 1] = osn_xd_add(en->w[en->n - 1], f);
        return 0;
    }
    if (en->n == en->cap) {
        long cap = en->cap ? 2 * en->cap : 16;
        long *idx2 = realloc(en->idx, (size_t)cap * sizeof *idx2);
        if (idx2)
            en->idx = idx2;
        int *ph2 = realloc(en->phase, (size_t)cap * sizeof *ph2);
        if (ph2)
            en->phase = ph2;
        xd *w2 = realloc(en->w, (size_t)cap * sizeof *w2);
        if (w2)
            en->w = w2;
        xd *m2 = realloc(en->m1, (size_t)cap * sizeof *m2);
        if (m2)
            en->m1 = m2;
        if (!idx2 || !ph2 || !w2 || !m2)
            return OSN_ENOMEM;
        en->cap = cap;
    }
    en->idx[en->n] = idx;
    en->phase[en->n] = phase;
    en->w[en->n++] = f;
    return 0;
}

/*
 * Where each level of a chain starts among its states (states in level order), kept as spans
 * of levels of one size: a few entries for the models here, not one offset a level.
 */
struct level_index {
    struct span {
        long lo;   /* first level of the span */
        long base; /* index of its first state */
        int m;     /* states a level */
    } * s;
    long n, states;
};

/* Index of the first state of level (inside the chain). */
static long level_start(const struct level_index *ix, long level)
{
    long a = 0, b = ix->n - 1; /* the last span with lo <= level */
    while (a < b) {
        long mid = (a + b + 1) / 2;
        if (ix->s[mid].lo <= level)
            a = mid;
        else
            b = mid - 1;
    }
    return ix->s[a].base + (level - ix->s[a].lo) * ix->s[a].m;
}

/* Levels summed apart before they join the totals, so that the bound on a sum's rounding error
 * grows with SUM_BLOCK + levels / SUM_BLOCK, not with the levels (10^6 at R = 10^6). */
#define SUM_BLOCK 1024

/*
 * The sweep's sums. A stretch is a block of at most SUM_BLOCK levels of one run, which the sweep
 * passes with one description (osn__stat_sweep): its mass is summed by state (mass[i]), and only
 * when the stretch ends is it turned into P by mode and lost by flow (a product a state and
 * stretch, not a state and level). N and busy take the mass of each level.
 */
struct acc {
    xd tot, P[3], N, p00, busy, lost[2], nu01, nu12, changes;
    const struct osn__lvl *stretch_lv; /* the sweep's description of the stretch's levels */
    struct {                           /* what end_stretch() reads of it, copied: the sweep */
        int m, mode[OSN__B];           /* may reuse its buffer once the last level is passed */
        double lost[OSN__B][2], kill[OSN__B];
    } stretch;
    long stretch_levels;
    xd mass[OSN__B], stretch_N, stretch_busy; /* the stretch's part */
    double kill;                              /* must stay 0 for the full chain */
    struct entries *entry;                    /* flow from mode 0 into the overload states */
    const struct level_index *entry_ix;       /* where overload levels start in that chain */
    long states;
    int err; /* OSN_ENOMEM when the entry list could not grow */
};

/* Index of state j of level lv among the overload (mode != 0) states of that level. */
static int overload_index(const struct osn__lvl *lv, int j)
{
    int zeros = 0;
    while (zeros < lv->m && lv->mode[zeros] == 0)
        zeros++;
    return j - zeros;
}

/* Accounts the stationary flow f from a state of mode `from` into state to_j of level to_n. */
static void flow(struct acc *a, int from, int to, long to_n, int to_j, const struct osn__lvl *tl,
                 xd f)
{
    if (from == to)
        return;
    a->changes = osn_xd_add(a->changes, f);
    if (from == 0) {
        a->nu01 = osn_xd_add(a->nu01, f);
        long idx = level_start(a->entry_ix, to_n) + overload_index(tl, to_j);
        if (!a->err)
            a->err = entries_add(a->entry, idx, tl->phase[to_j], f);
    }
    if (to == 2)
        a->nu12 = osn_xd_add(a->nu12, f);
}

/* Adds the stretch's sums to the totals and starts the next stretch. */
static void end_stretch(struct acc *a)
{
    for (int i = 0; i < a->stretch.m; i++) {
        const xd p = a->mass[i];
        a->P[a->stretch.mode[i]] = osn_xd_add(a->P[a->stretch.mode[i]], p);
        /* A zero term (no loss) would add exactly nothing: skipped. */
        for (int f = 0; f < 2; f++)
            if (a->stretch.lost[i][f] != 0)
                a->lost[f] = osn_xd_add(a->lost[f], osn_xd_muld(p, a->stretch.lost[i][f]));
        a->kill += a->stretch.kill[i] * (double)a->stretch_levels;
        a->mass[i] = osn_xd(0);
    }
    a->stretch.m = 0;
    a->N = osn_xd_add(a->N, a->stretch_N);
    a->busy = osn_xd_add(a->busy, a->stretch_busy);
    a->stretch_N = a->stretch_busy = osn_xd(0);
    a->stretch_lv = NULL;
    a->stretch_levels = 0;
}

static int visit(long n, const struct osn__lvl *lv, const xd *pi, const struct osn__lvl *below,
                 const struct osn__lvl *above, void *arg)
{
    struct acc *a = arg;
    if (lv != a->stretch_lv || a->stretch_levels == SUM_BLOCK) { /* another run, or a full block */
        end_stretch(a);
        a->stretch_lv = lv;
        a->stretch.m = lv->m;
        for (int i = 0; i < lv->m; i++) {
            a->stretch.mode[i] = lv->mode[i];
            a->stretch.lost[i][0] = lv->lost[i][0];
            a->stretch.lost[i][1] = lv->lost[i][1];
            a->stretch.kill[i] = lv->kill[i];
        }
    }
    a->stretch_levels++;
    xd level_sum = osn_xd(0); /* the level's mass, added to busy and N once a level */
    for (int i = 0; i < lv->m; i++) {
        const xd p = pi[i];
        const int s = lv->mode[i];
        a->mass[i] = osn_xd_add(a->mass[i], p);
        if (n == 0 && s == 0)
            a->p00 = osn_xd_add(a->p00, p);
        else
            level_sum = osn_xd_add(level_sum, p);
        /* A zero term (no mode change) would add exactly nothing: skipped. */
        if (lv->up_to[i] >= 0 && above->mode[lv->up_to[i]] != s) {
            int j = lv->up_to[i];
            flow(a, s, above->mode[j], n + 1, j, above, osn_xd_muld(p, lv->up_rate[i]));
        }
        if (lv->dn_to[i] >= 0 && below->mode[lv->dn_to[i]] != s) {
            int j = lv->dn_to[i];
            flow(a, s, below->mode[j], n - 1, j, below, osn_xd_muld(p, lv->dn_rate[i]));
        }
    }
    a->stretch_busy = osn_xd_add(a->stretch_busy, level_sum); /* level 0: its busy states */
    a->stretch_N = osn_xd_add(a->stretch_N, osn_xd_muld(level_sum, (double)n));
    a->states += lv->m;
    return 0;
}

struct dist_out {
    xd tot;
    osn_dist_fn fn;
    void *arg;
};

static int visit_dist(long n, const struct osn__lvl *lv, const xd *pi, const struct osn__lvl *below,
                      const struct osn__lvl *above, void *arg)
{
    struct dist_out *d = arg;
    (void)below;
    (void)above;
    for (int i = 0; i < lv->m; i++) {
        int err = d->fn(lv->mode[i], n, osn_xd_div(pi[i], d->tot), d->arg);
        if (err)
            return err;
    }
    return 0;
}

/* Right-hand sides of the first-passage systems. */
struct passage {
    const struct level_index *ix; /* where overload levels start in m1[] */
    const xd *m1;                 /* mean passage times */
};

static void rhs_ones(long n, const struct osn__lvl *lv, xd *b, void *arg)
{
    (void)n;
    (void)arg;
    for (int i = 0; i < lv->m; i++)
        b[i] = osn_xd(1);
}

/*
 * Variance of the passage time T_x directly: (-Q) v = b with
 *   b(x) = 1/q_x + sum_y q_xy (m1(y) - m1(x) + 1/q_x)^2,
 * summing over every transition of x (m1 = 0 outside the overload states). Unlike
 * E[T^2] - m1^2 it does not cancel when the variance is small next to the squared mean; it does
 * cancel in m1(y) - m1(x) when the means of neighbours agree to many digits (a return time that
 * is nearly exponential), which is exactly when E[T^2] - m1^2 is safe. return_time() picks.
 */
static void rhs_var(long n, const struct osn__lvl *lv, xd *b, void *arg)
{
    const struct passage *p = arg;
    const xd *here = p->m1 + level_start(p->ix, n);
    for (int i = 0; i < lv->m; i++) {
        double q = lv->kill[i] + lv->up_rate[i] + lv->dn_rate[i];
        for (int j = 0; lv->has_side && j < lv->m; j++)
            q += j != i ? lv->side[i][j] : 0;
        xd inv_q = osn_xd(1.0 / q);
        xd base = osn_xd_sub(inv_q, here[i]); /* 1/q - m1(x) */
        xd sum = inv_q;
        if (lv->up_to[i] >= 0) {
            xd d = osn_xd_add(base, p->m1[level_start(p->ix, n + 1) + lv->up_to[i]]);
            sum = osn_xd_add(sum, osn_xd_muld(osn_xd_mul(d, d), lv->up_rate[i]));
        }
        if (lv->dn_to[i] >= 0) {
            xd d = osn_xd_add(base, p->m1[level_start(p->ix, n - 1) + lv->dn_to[i]]);
            sum = osn_xd_add(sum, osn_xd_muld(osn_xd_mul(d, d), lv->dn_rate[i]));
        }
        if (lv->kill[i] > 0)
            sum = osn_xd_add(sum, osn_xd_muld(osn_xd_mul(base, base), lv->kill[i]));
        for (int j = 0; lv->has_side && j < lv->m; j++) {
            if (j == i || lv->side[i][j] == 0)
                continue;
            xd d = osn_xd_add(base, here[j]);
            sum = osn_xd_add(sum, osn_xd_muld(osn_xd_mul(d, d), lv->side[i][j]));
        }
        b[i] = sum;
    }
}

/* The spans of levels of one size of chain lc. */
static int level_index_new(struct level_index *ix, const struct osn__lchain *lc)
{
    *ix = (struct level_index){0};
    long cap = 0;
    for (long n = lc->lo, hi; n <= lc->hi; n = hi + 1) {
        hi = osn__run_end(lc, n); /* the levels of a run have the same size: one count a run */
        const int m = lc->count(lc->ctx, n);
        if (ix->n == 0 || ix->s[ix->n - 1].m != m) {
            if (ix->n == cap) {
                cap = cap ? 2 * cap : 16;
                struct span *s2 = realloc(ix->s, (size_t)cap * sizeof *s2);
                if (!s2)
                    return OSN_ENOMEM;
                ix->s = s2;
            }
            ix->s[ix->n++] = (struct span){n, ix->states, m};
        }
        ix->states += (hi - n + 1) * m;
    }
    return 0;
}

/*
 * Below this squared coefficient of variation E[T^2] - E[T]^2 would lose over 6 digits (leaving
 * about 1e-10 relative); the return time of a model with D = H - L levels has CV^2 >= about 1/D,
 * so the direct system is a safety net for huge D rather than the common path.
 */
#define CV2_SAFE 1e-6

/*
 * Mean and standard deviation of the return time, weighting entry states by their flow. The
 * variance comes from the second moment unless CV^2 < CV2_SAFE, else from the direct variance
 * system. The second moment is 2 a (-Q)^-2 1 / sum(a) for the entry flow a: the row vector
 * a (-Q)^-1 on the same elimination, summed against the means as they are formed
 * (osn__trans_solve_dual), not a second system (-Q) m2 = 2 m1 over the whole chain. One vector
 * of the overload chain's size, which holds the means, also for the rare direct system.
 */
static int return_time(const struct osn__lchain *oc, const struct osn__elim *top,
                       const struct level_index *ix, int K, struct entries *en,
                       struct osn_measures *out)
{
    const size_t bytes = (size_t)ix->states * sizeof(xd);
    struct osn__elim *tr = NULL;
    xd *m1 = osn__big_alloc(bytes), *v = NULL;
    int err = OSN_ENOMEM;
    if (!m1)
        goto out;
    xd second;
    if ((err = osn__trans_new(&tr, oc, top)) ||
        (err = osn__trans_solve_dual(tr, rhs_ones, NULL, en->n, en->idx, en->w, m1, &second)))
        goto out;
    for (long k = 0; k < en->n; k++)
        en->m1[k] = m1[en->idx[k]];
    struct passage p = {ix, m1};
    xd wsum = osn_xd(0), mean = osn_xd(0);
    for (long k = 0; k < en->n; k++) {
        if (osn_xd_is_zero(en->w[k]))
            continue;
        wsum = osn_xd_add(wsum, en->w[k]);
        mean = osn_xd_add(mean, osn_xd_mul(en->w[k], en->m1[k]));
    }
    mean = osn_xd_div(mean, wsum);
    second = osn_xd_div(osn_xd_muld(second, 2), wsum);
    xd msq = osn_xd_mul(mean, mean);
    xd var = osn_xd_sub(second, msq);
    if (osn_xd_cmp(var, osn_xd_muld(msq, CV2_SAFE)) < 0) {
        err = OSN_ENOMEM;
        if (!(v = osn__big_alloc(bytes)))
            goto out;
        if ((err = osn__trans_solve(tr, rhs_var, &p, v))) /* m1 still holds the means */
            goto out;
        /* Var of a mixture: E[Var(T|X)] + Var(E[T|X]), both sums of non-negative terms. */
        var = osn_xd(0);
        for (long k = 0; k < en->n; k++) {
            if (osn_xd_is_zero(en->w[k]))
                continue;
            xd d = osn_xd_sub(en->m1[k], mean);
            var = osn_xd_add(var,
                             osn_xd_mul(en->w[k], osn_xd_add(v[en->idx[k]], osn_xd_mul(d, d))));
        }
        var = osn_xd_div(var, wsum);
    }
    out->T_ret = mean;
    out->T_ret_sd = osn_xd_sqrt(var);
    out->have_sd = true;
    if (K > 1) {
        /* By the phase at onset. */
        xd w[OSN_MMPP_MAX], t[OSN_MMPP_MAX];
        for (int k = 0; k < K; k++)
            w[k] = t[k] = osn_xd(0);
        for (long k = 0; k < en->n; k++) {
            int ph = en->phase[k];
            w[ph] = osn_xd_add(w[ph], en->w[k]);
            t[ph] = osn_xd_add(t[ph], osn_xd_mul(en->w[k], en->m1[k]));
        }
        out->nphase = K;
        for (int k = 0; k < K; k++) {
            out->onset_phase[k] = osn_xd_div(w[k], wsum);
            out->T_ret_phase[k] = osn_xd_is_zero(w[k]) ? OSN_XD_UNDEFINED : osn_xd_div(t[k], w[k]);
        }
    }
out:
    osn__elim_free(tr);
    if (m1)
        osn__big_free(m1, bytes);
    if (v)
        osn__big_free(v, bytes);
    return err;
}

void osn__renewal_times(struct osn_measures *out)
{
    if (osn_xd_is_zero(out->nu01)) { /* overload never starts: no cycle to speak of */
        out->T_cyc = out->T_ret_renewal = out->T_norm = OSN_XD_UNDEFINED;
    } else {
        out->T_cyc = osn_xd_div(osn_xd(1), out->nu01);
        out->T_ret_renewal = osn_xd_div(osn_xd_add(out->P[1], out->P[2]), out->nu01);
        out->T_norm = osn_xd_div(out->P[0], out->nu01); /* = T_cyc - T_ret, without subtracting */
    }
    out->T_disc = osn_xd_is_zero(out->nu12) ? OSN_XD_UNDEFINED : osn_xd_div(out->P[2], out->nu12);
}

static xd ratio(xd a, xd b)
{
    return osn_xd_is_zero(b) ? osn_xd(0) : osn_xd_div(a, b);
}

/* The full chain's stationary sweep, with what the measures and the return time read of it:
 * both chains (full and overload), the overload chain's level offsets and the flow into its
 * states from mode 0 (a.entry). Free with sweep_free(), also after an error. */
struct sweep {
    struct osn__chain fc, oc;
    struct osn__lchain flc, olc;
    struct osn__elim *st;
    struct level_index oix; /* the overload chain's */
    struct entries entry;
    struct acc a;
};

/* passage: the return time's systems follow (the elimination keeps what they can share). */
static int sweep_run(const struct osn_model *m, struct sweep *w, int passage)
{
    *w = (struct sweep){0};
    osn__chain_init(&w->fc, m, 0);
    osn__chain_init(&w->oc, m, 1);
    osn__chain_levels(&w->fc, &w->flc);
    osn__chain_levels(&w->oc, &w->olc);
    int err = level_index_new(&w->oix, &w->olc);
    if (err)
        return err;
    err = osn__stat_new(&w->st, &w->flc, passage ? &w->olc : NULL);
    if (err)
        return err;
    struct acc *a = &w->a;
    a->tot = a->N = a->p00 = a->busy = a->nu01 = a->nu12 = a->changes = osn_xd(0);
    for (int s = 0; s < 3; s++)
        a->P[s] = osn_xd(0);
    a->lost[0] = a->lost[1] = osn_xd(0);
    a->entry = &w->entry;
    a->entry_ix = &w->oix;
    err = osn__stat_sweep(w->st, visit, a);
    end_stretch(a);
    a->tot = osn_xd_add(a->busy, a->p00); /* the total mass, without a sum of its own */
    return err ? err : a->err;
}

static void sweep_free(struct sweep *w)
{
    osn__elim_free(w->st);
    entries_free(&w->entry);
    free(w->oix.s);
}

int osn__general_solve(const struct osn_model *m, struct osn_measures *out, osn_dist_fn dist,
                       void *arg)
{
    struct sweep w;
    int err = sweep_run(m, &w, 1);
    const struct acc a = w.a;
    if (err)
        goto out;
    if (a.kill != 0) {
        err = OSN_ENUMERIC; /* a transition of the full chain leads nowhere: a chain.c bug */
        goto out;
    }
    if (dist) {
        struct dist_out d = {a.tot, dist, arg};
        err = osn__stat_sweep(w.st, visit_dist, &d);
        if (err)
            goto out;
    }

    const xd tot = a.tot;
    for (int s = 0; s < 3; s++)
        out->P[s] = osn_xd_div(a.P[s], tot);
    out->prob_sum = osn_xd_add(osn_xd_add(out->P[0], out->P[1]), out->P[2]);
    out->p00 = osn_xd_div(a.p00, tot);
    out->N_mean = osn_xd_div(a.N, tot);
    out->throughput = osn_xd_muld(osn_xd_div(a.busy, tot), m->mu);
    out->sojourn = ratio(out->N_mean, out->throughput);
    out->nu01 = osn_xd_div(a.nu01, tot);
    out->nu12 = osn_xd_div(a.nu12, tot);
    out->mode_change_rate = osn_xd_div(a.changes, tot);
    const double offered[2] = {w.fc.offered[0], w.fc.offered[1]};
    xd lost = osn_xd_div(osn_xd_add(a.lost[0], a.lost[1]), tot);
    out->theta = osn_xd_div(lost, osn_xd(offered[0] + offered[1]));
    out->loss_flow1 =
            offered[0] > 0 ? osn_xd_div(osn_xd_div(a.lost[0], tot), osn_xd(offered[0])) : osn_xd(0);
    out->loss_flow2 =
            offered[1] > 0 ? osn_xd_div(osn_xd_div(a.lost[1], tot), osn_xd(offered[1])) : osn_xd(0);
    osn__renewal_times(out);
    out->states = a.states;
    out->method = OSN_METHOD_GENERAL;

    err = return_time(&w.olc, w.st, &w.oix, w.fc.K, &w.entry, out);
out:
    sweep_free(&w);
    return err;
}

/*
 * The start of the return time for tret_dist.c: the overload states where overload begins and
 * the stationary flow into each, from the same sweep as osn__general_solve(). The lists are the
 * caller's (free them); indices are among the overload chain's states, level by level from lo.
 */
int osn__overload_entries(const struct osn_model *m, long *n, long **idx, xd **wt)
{
    struct sweep w;
    int err = sweep_run(m, &w, 0);
    if (!err && w.entry.n == 0)
        err = OSN_ENOTSUP; /* overload never starts: no return time */
    if (err)
        goto out;
    *n = w.entry.n;
    *idx = w.entry.idx;
    *wt = w.entry.w;
    w.entry.idx = NULL;
    w.entry.w = NULL;
out:
    sweep_free(&w);
    return err;
}
