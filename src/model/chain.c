/*
 * The hysteretic model as a level chain: which (mode, n) states exist at each level and where
 * their arrivals and departures lead, under switching policy I or II (shared/MODELS.md).
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
 */
#include "model_int.h"

#include <string.h>

void osn__chain_init(struct osn__chain *c, const struct osn_model *m, int only_overload)
{
    c->m = m;
    for (int s = 0; s < 3; s++)
        c->lam[s] = osn_model_accept_rate(m, s);
    c->offered[0] = m->flows == 2 ? m->rate1 : m->rate;
    c->offered[1] = m->flows == 2 ? m->rate2 : 0;
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

/* Index of mode s among the states of level n, or -1 when absent or excluded. */
static inline int index_of(const struct osn__chain *c, long n, int s)
{
    if (!present(c, s, n))
        return -1;
    int i = 0;
    for (int t = 0; t < s; t++)
        i += present(c, t, n);
    return i;
}

static int count(const void *ctx, long n)
{
    const struct osn__chain *c = ctx;
    return present(c, 0, n) + present(c, 1, n) + present(c, 2, n);
}

/* Mode after an accepted arrival in mode s makes n = k (policy I switches on the way up). */
static int mode_after_arrival(const struct osn_model *m, int s, long k)
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
static int mode_after_departure(const struct osn_model *m, int s, long k)
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

/* Offered minus accepted rate of each flow in mode s at level n. */
static void losses(const struct osn__chain *c, int s, long n, double lost[2])
{
    const struct osn_model *m = c->m;
    int full = n >= m->R;
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

static void fill(const void *ctx, long n, struct osn__lvl *lv)
{
    const struct osn__chain *c = ctx;
    const struct osn_model *m = c->m;
    lv->m = 0;
    for (int s = 0; s < 3; s++) {
        if (!present(c, s, n))
            continue;
        int i = lv->m++;
        lv->mode[i] = s;
        lv->kill[i] = 0;
        lv->up_to[i] = -1;
        lv->up_rate[i] = 0;
        lv->dn_to[i] = -1;
        lv->dn_rate[i] = 0;
        losses(c, s, n, lv->lost[i]);
        if (c->lam[s] > 0 && n < m->R) {
            int t = index_of(c, n + 1, mode_after_arrival(m, s, n + 1));
            if (t >= 0) {
                lv->up_to[i] = t;
                lv->up_rate[i] = c->lam[s];
            } else {
                lv->kill[i] += c->lam[s];
            }
        }
        if (n > 0) {
            int t = index_of(c, n - 1, mode_after_departure(m, s, n - 1));
            if (t >= 0) {
                lv->dn_to[i] = t;
                lv->dn_rate[i] = m->mu;
            } else {
                lv->kill[i] += m->mu;
            }
        }
    }
}

void osn__chain_levels(const struct osn__chain *c, struct osn__lchain *lc)
{
    lc->fill = fill;
    lc->count = count;
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
