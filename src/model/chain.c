/*
 * The hysteretic model as a level chain: which (mode, n) states exist at each level and where
 * their arrivals and departures lead, under switching policy I or II (docs/models.md).
 *
 * Policy I, states:  (0,n) 0 <= n <= H1-1,  (1,n) L1+1 <= n <= H2-1,  (2,n) L2+1 <= n <= H2.
 *   An accepted arrival making n = H1 in mode 0 switches to mode 1, making n = H2 in mode 1
 *   switches to mode 2; a departure making n = L1 in mode 1 switches to 0, making n = L2 in mode 2
 *   switches to 1.
 * Policy II, states: (0,n) 0 <= n <= R,  (1,n) L1+1 <= n <= R,  (2,n) L2+1 <= n <= R-1 (only when
 *   H2 <= R-1, since a departure leaves at most R-1). Arrivals never switch; a departure leaving
 *   k re-evaluates the mode: 0 -> 2 if k >= H2, 0 -> 1 if k >= H1, 1 -> 0 if k <= L1,
 *   1 -> 2 if k >= H2, 2 -> 1 if k <= L2. Arrivals finding n = R are lost.
 * Mode 2 accepts no arrivals in either policy.
 *
 * With MMPP input every (mode, n) carries K phase states, ordered mode-major; an arrival in
 * phase k at rate lambda_k a_s(k) and a departure keep the phase, and phase changes are
 * within-level transitions with (mode, n) frozen.
 */
#include "model_int.h"

#include <limits.h>
#include <string.h>

void osn__chain_init(struct osn__chain *c, const struct osn_model *m, int only_overload)
{
    c->m = m;
    for (int s = 0; s < 3; s++)
        c->lam[s] = osn_model_accept_rate(m, s);
    c->offered[0] = m->flows == 2 ? m->rate1 : m->rate;
    c->offered[1] = m->flows == 2 ? m->rate2 : 0;
    c->K = 1;
    if (m->process == OSN_ARR_MMPP) {
        c->K = m->mmpp.K;
        c->offered[0] = 0;
        double pi[OSN_MMPP_MAX];
        osn_mmpp_phase_probs(&m->mmpp, pi);
        for (int k = 0; k < c->K; k++)
            c->offered[0] += pi[k] * m->mmpp.rate[k];
        c->offered[1] = 0;
    }
    c->only_overload = only_overload;
    if (m->policy == OSN_POLICY_I) {
        c->first[0] = 0, c->last[0] = m->H1 - 1;
        c->first[1] = m->L1 + 1, c->last[1] = m->H2 - 1;
        c->first[2] = m->L2 + 1, c->last[2] = m->H2;
    } else {
        c->first[0] = 0, c->last[0] = m->R;
        c->first[1] = m->L1 + 1, c->last[1] = m->R;
        c->first[2] = m->L2 + 1, c->last[2] = m->H2 <= m->R - 1 ? m->R - 1 : -1;
    }
    if (only_overload)
        c->first[0] = 1, c->last[0] = 0;
}

static inline int present(const struct osn__chain *c, int s, long n)
{
    return n >= c->first[s] && n <= c->last[s];
}

/* Index of (mode s, phase k) among the states of level n, or -1 when absent or excluded. */
static inline int index_of(const struct osn__chain *c, long n, int s, int k)
{
    if (!present(c, s, n))
        return -1;
    int i = 0;
    for (int t = 0; t < s; t++)
        i += present(c, t, n);
    return i * c->K + k;
}

static int count(const void *ctx, long n)
{
    const struct osn__chain *c = ctx;
    return (present(c, 0, n) + present(c, 1, n) + present(c, 2, n)) * c->K;
}

/* Mode after an accepted arrival in mode s makes n = k (policy I switches on the way up). */
int osn__mode_after_arrival(const struct osn_model *m, int s, long k)
{
    if (m->policy == OSN_POLICY_I) {
        if (s == 0 && k == m->H1)
            return 1;
        if (s == 1 && k == m->H2)
            return 2;
    }
    return s;
}

/* Mode after a departure in mode s leaves k. */
int osn__mode_after_departure(const struct osn_model *m, int s, long k)
{
    if (m->policy == OSN_POLICY_I) {
        if (s == 1 && k == m->L1)
            return 0;
        if (s == 2 && k == m->L2)
            return 1;
        return s;
    }
    switch (s) {
    case 0:
        return k >= m->H2 ? 2 : k >= m->H1 ? 1 : 0;
    case 1:
        return k <= m->L1 ? 0 : k >= m->H2 ? 2 : 1;
    default:
        return k <= m->L2 ? 1 : 2;
    }
}

/* Offered minus accepted rate of each flow in mode s, phase k, at level n. */
static void losses(const struct osn__chain *c, int s, int k, long n, double lost[2])
{
    const struct osn_model *m = c->m;
    int full = n >= m->R;
    if (m->process == OSN_ARR_MMPP) {
        double a = m->mmpp.accept[s][k], r = m->mmpp.rate[k];
        lost[0] = (full || s == 2) ? r : a >= 1 ? 0 : r * (1 - a);
        lost[1] = 0;
        return;
    }
    if (m->flows == 2) {
        lost[0] = (s == 2 || full) ? m->rate1 : 0;
        lost[1] = (s != 0 || full) ? m->rate2 : 0;
        return;
    }
    lost[1] = 0;
    if (s == 2 || full)
        lost[0] = m->rate;
    else if (s == 1)
        lost[0] = m->rate - m->overload_rate;
    else
        lost[0] = 0;
}

/* Accepted arrival rate of (mode s, phase k). */
static double accept_rate(const struct osn__chain *c, int s, int k)
{
    const struct osn_model *m = c->m;
    if (m->process == OSN_ARR_MMPP)
        return s == 2 ? 0 : m->mmpp.rate[k] * m->mmpp.accept[s][k];
    return c->lam[s];
}

static void fill(const void *ctx, long n, struct osn__lvl *lv)
{
    const struct osn__chain *c = ctx;
    const struct osn_model *m = c->m;
    const int K = c->K;
    lv->m = 0;
    lv->has_side = K > 1;
    for (int s = 0; s < 3; s++) {
        if (!present(c, s, n))
            continue;
        for (int k = 0; k < K; k++) {
            int i = lv->m++;
            lv->mode[i] = s;
            lv->phase[i] = k;
            lv->kill[i] = 0;
            lv->up_to[i] = -1;
            lv->up_rate[i] = 0;
            lv->dn_to[i] = -1;
            lv->dn_rate[i] = 0;
            losses(c, s, k, n, lv->lost[i]);
            double a = accept_rate(c, s, k);
            if (a > 0 && n < m->R) {
                int t = index_of(c, n + 1, osn__mode_after_arrival(m, s, n + 1), k);
                if (t >= 0) {
                    lv->up_to[i] = t;
                    lv->up_rate[i] = a;
                } else {
                    lv->kill[i] += a;
                }
            }
            if (n > 0) {
                int t = index_of(c, n - 1, osn__mode_after_departure(m, s, n - 1), k);
                if (t >= 0) {
                    lv->dn_to[i] = t;
                    lv->dn_rate[i] = m->mu;
                } else {
                    lv->kill[i] += m->mu;
                }
            }
        }
    }
    if (K > 1) /* states of one mode are consecutive: phase block on the diagonal */
        for (int i = 0; i < lv->m; i++)
            for (int j = 0; j < lv->m; j++)
                lv->side[i][j] = (i != j && lv->mode[i] == lv->mode[j])
                                         ? m->mmpp.gen[lv->phase[i]][lv->phase[j]]
                                         : 0;
}

/*
 * The run of levels around n that fill() describes alike. fill(n) tests n - 1, n and n + 1
 * against the thresholds (0, L1, L2, H1, H2, R and where each mode starts and ends): equal,
 * below, above. Such a test gives the same answer for n and n + 1 unless n is within 2 of the
 * threshold, so fill(n) and fill(n + 1) are the same whenever n is more than 3 away from every
 * threshold (one level of margin), and the run is bounded by the nearest such "near" levels.
 */
#define NEAR 3

static void run(const void *ctx, long n, long *lo, long *hi)
{
    const struct osn__chain *c = ctx;
    const struct osn_model *m = c->m;
    const long t[] = {0,           m->L1,      m->L2,       m->H1,      m->H2,       m->R,
                      c->first[0], c->last[0], c->first[1], c->last[1], c->first[2], c->last[2]};
    long below = LONG_MIN, above = LONG_MAX; /* nearest near levels <= n - 1 and >= n */
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        long a = t[i] - NEAR, b = t[i] + NEAR;
        if (a <= n - 1 && (b < n - 1 ? b : n - 1) > below)
            below = b < n - 1 ? b : n - 1;
        if (b >= n && (a > n ? a : n) < above)
            above = a > n ? a : n;
    }
    *lo = below == LONG_MIN ? LONG_MIN : below + 1;
    *hi = above;
}

void osn__chain_levels(const struct osn__chain *c, struct osn__lchain *lc)
{
    lc->fill = fill;
    lc->count = count;
    lc->run = run;
    lc->ctx = c;
    /* The levels where some included mode exists: under policy I with H2 < R no state lies
     * above H2, since mode 2 accepts nothing. Modes overlap, so the range has no gaps. */
    lc->lo = c->m->R;
    lc->hi = 0;
    for (int s = 0; s < 3; s++) {
        if (c->first[s] > c->last[s])
            continue;
        if (c->first[s] < lc->lo)
            lc->lo = c->first[s];
        if (c->last[s] > lc->hi)
            lc->hi = c->last[s];
    }
}

long osn__lchain_states(const struct osn__lchain *lc)
{
    long total = 0;
    for (long n = lc->lo; n <= lc->hi; n++)
        total += lc->count(lc->ctx, n);
    return total;
}
