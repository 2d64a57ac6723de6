/*
 * Linear level reduction for level chains (see model_int.h): the stationary vector and the
 * solution of (-Q) x = b for transient chains, at a cost linear in the number of levels.
 *
 * Levels are eliminated from the top. With U_n, D_n the up and down blocks and W_n the
 * within-level block of level n, the censored generator of levels <= n has the diagonal block
 *
 *     S_n = W_n + R_n D_{n+1},     R_n = U_n (-S_{n+1})^-1,     S_hi = W_hi,
 *
 * and the stationary vector satisfies pi_{n+1} = pi_n R_n, with pi_lo stationary for S_lo.
 * For (-Q) x = b: c_n = b_n + R_n c_{n+1}, x_n = (-S_n)^-1 (c_n + D_n x_{n-1}).
 *
 * Why it stays exact: -S_n is a non-singular M-matrix, and its diagonal is never formed by
 * subtraction. Its off-diagonal entries are sums of non-negative products, and its row sums are
 * known: (-S_n) 1 = D_n 1 + g_n with g_n = kill_n + R_n g_{n+1} (the rate of leaving the chain).
 * The inverse is computed by Gaussian elimination that recomputes each pivot from the row sums
 * (the GTH idea), so every operation adds non-negative numbers: no cancellation, no negative
 * probabilities. All quantities are osn_xd, because R_n entries and the pi_n span far more than
 * the double range (a return to mode 0 at heavy load has probability (mu/lambda')^(H-L)).
 */
#include "model_int.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "osn/err.h"
#include "osn/mem.h"

typedef struct osn_xd xd;

void *osn__big_alloc(size_t bytes)
{
    if (bytes == 0)
        bytes = 1;
    return bytes >= OSN_MEM_BLOCK / 2 ? osn_mem_block_alloc(bytes) : calloc(1, bytes);
}

void osn__big_free(void *p, size_t bytes)
{
    if (bytes == 0)
        bytes = 1;
    if (bytes >= OSN_MEM_BLOCK / 2)
        osn_mem_block_free(p, bytes);
    else
        free(p);
}

/* ---- small dense kernels ---- */

/*
 * inv = (-S)^-1 for the M-matrix -S with off-diagonal magnitudes off[i][j] (i != j) and row
 * sums ex[i] >= 0. Subtraction-free Gaussian elimination without pivoting.
 */
static int minv(int m, xd off[OSN__B][OSN__B], const xd ex[OSN__B], xd inv[OSN__B][OSN__B])
{
    if (m == 1) {
        if (osn_xd_is_zero(ex[0]))
            return -1;
        inv[0][0] = osn_xd_div(osn_xd(1), ex[0]);
        return 0;
    }
    if (m == 2) {
        /* With a00 = e0 + b, a11 = e1 + c: det = a00 a11 - b c = e0 e1 + e0 c + b e1. */
        const xd b = off[0][1], c = off[1][0];
        const xd a00 = osn_xd_add(ex[0], b), a11 = osn_xd_add(ex[1], c);
        const xd det = osn_xd_add(osn_xd_add(osn_xd_mul(ex[0], ex[1]), osn_xd_mul(ex[0], c)),
                                  osn_xd_mul(b, ex[1]));
        if (osn_xd_is_zero(det))
            return -1;
        inv[0][0] = osn_xd_div(a11, det);
        inv[0][1] = osn_xd_div(b, det);
        inv[1][0] = osn_xd_div(c, det);
        inv[1][1] = osn_xd_div(a00, det);
        return 0;
    }
    xd w[OSN__B][OSN__B], e[OSN__B], piv[OSN__B];
    for (int i = 0; i < m; i++) {
        e[i] = ex[i];
        for (int j = 0; j < m; j++) {
            w[i][j] = off[i][j];
            inv[i][j] = osn_xd(i == j ? 1.0 : 0.0);
        }
    }
    for (int k = 0; k < m; k++) {
        xd p = e[k];
        for (int j = k + 1; j < m; j++)
            p = osn_xd_add(p, w[k][j]);
        if (osn_xd_is_zero(p))
            return -1;
        piv[k] = p;
        for (int i = k + 1; i < m; i++) {
            if (osn_xd_is_zero(w[i][k]))
                continue;
            xd l = osn_xd_div(w[i][k], p);
            for (int j = k + 1; j < m; j++)
                if (j != i)
                    w[i][j] = osn_xd_add(w[i][j], osn_xd_mul(l, w[k][j]));
            e[i] = osn_xd_add(e[i], osn_xd_mul(l, e[k]));
            for (int c = 0; c < m; c++)
                inv[i][c] = osn_xd_add(inv[i][c], osn_xd_mul(l, inv[k][c]));
        }
    }
    for (int k = m - 1; k >= 0; k--) {
        for (int c = 0; c < m; c++) {
            xd s = inv[k][c];
            for (int j = k + 1; j < m; j++)
                s = osn_xd_add(s, osn_xd_mul(w[k][j], inv[j][c]));
            inv[k][c] = osn_xd_div(s, piv[k]);
        }
    }
    return 0;
}

/* Stationary vector of a generator given by its off-diagonal rates (GTH), scaled to max 1. */
static void gth(int m, const xd off[OSN__B][OSN__B], xd pi[OSN__B])
{
    xd a[OSN__B][OSN__B], s[OSN__B];
    for (int i = 0; i < m; i++)
        for (int j = 0; j < m; j++)
            a[i][j] = off[i][j];
    for (int k = m - 1; k >= 1; k--) {
        xd sum = osn_xd(0);
        for (int j = 0; j < k; j++)
            sum = osn_xd_add(sum, a[k][j]);
        s[k] = sum;
        for (int i = 0; i < k; i++) {
            if (osn_xd_is_zero(a[i][k]))
                continue;
            xd f = osn_xd_div(a[i][k], sum);
            for (int j = 0; j < k; j++)
                if (j != i)
                    a[i][j] = osn_xd_add(a[i][j], osn_xd_mul(f, a[k][j]));
        }
    }
    pi[0] = osn_xd(1);
    for (int k = 1; k < m; k++) {
        xd v = osn_xd(0);
        for (int i = 0; i < k; i++)
            v = osn_xd_add(v, osn_xd_mul(pi[i], a[i][k]));
        pi[k] = osn_xd_div(v, s[k]);
    }
    xd mx = pi[0];
    for (int k = 1; k < m; k++)
        if (osn_xd_cmp(pi[k], mx) > 0)
            mx = pi[k];
    for (int k = 0; k < m; k++)
        pi[k] = osn_xd_div(pi[k], mx);
}

/* Level n during elimination: its description, (-S_n)^-1 and its kill excess g_n. */
struct elim {
    struct osn__lvl lv;
    xd inv[OSN__B][OSN__B];
    xd g[OSN__B];
};

/*
 * One elimination step at level n given level n+1 (above; NULL at the top level): computes
 * R_n (m_n x m_{n+1}), (-S_n)^-1 and g_n. When no state of the level can leave downwards (the
 * bottom of a stationary problem) *singular is set and cur->inv holds the off-diagonal rates of
 * S_n instead, for gth(). Returns -1 on a zero pivot (a chain that cannot leave the level).
 */
static inline __attribute__((always_inline)) int
eliminate_k(struct elim *cur, const struct elim *above, xd r[OSN__B][OSN__B], int *singular,
            const int M, const int MA, const int SIDE)
{
    const struct osn__lvl *lv = &cur->lv;
    const int m = M > 0 ? M : lv->m;
    const int has_side = SIDE >= 0 ? SIDE : lv->has_side;
    xd off[OSN__B][OSN__B], ex[OSN__B];
    for (int i = 0; i < m; i++) {
        for (int j = 0; j < m; j++)
            off[i][j] = has_side && j != i ? osn_xd(lv->side[i][j]) : osn_xd(0);
        cur->g[i] = osn_xd(lv->kill[i]);
    }
    if (above) {
        const int ma = MA > 0 ? MA : above->lv.m;
        for (int i = 0; i < m; i++) {
            int t = lv->up_to[i];
            for (int k = 0; k < ma; k++)
                r[i][k] = t >= 0 ? osn_xd_muld(above->inv[t][k], lv->up_rate[i]) : osn_xd(0);
            if (t < 0)
                continue;
            for (int k = 0; k < ma; k++) {
                if (osn_xd_is_zero(r[i][k]))
                    continue;
                cur->g[i] = osn_xd_add(cur->g[i], osn_xd_mul(r[i][k], above->g[k]));
                int j = above->lv.dn_to[k];
                if (j >= 0 && j != i)
                    off[i][j] = osn_xd_add(off[i][j], osn_xd_muld(r[i][k], above->lv.dn_rate[k]));
            }
        }
    }
    int all_zero = 1;
    for (int i = 0; i < m; i++) {
        ex[i] = osn_xd_add(cur->g[i], osn_xd(lv->dn_to[i] >= 0 ? lv->dn_rate[i] : 0));
        all_zero &= osn_xd_is_zero(ex[i]);
    }
    *singular = all_zero;
    if (!all_zero)
        return minv(m, off, ex, cur->inv);
    for (int i = 0; i < m; i++)
        for (int j = 0; j < m; j++)
            cur->inv[i][j] = off[i][j];
    return 0;
}

/*
 * The same steps with the sizes of the common levels (one or two states, Poisson input) known to
 * the compiler, which then unrolls the loops: same operations in the same order, same bits.
 */
static int eliminate(struct elim *cur, const struct elim *above, xd r[OSN__B][OSN__B],
                     int *singular)
{
    const int m = cur->lv.m, ma = above ? above->lv.m : 0;
    if (above && !cur->lv.has_side && m <= 2 && ma <= 2) {
        if (m == 2 && ma == 2)
            return eliminate_k(cur, above, r, singular, 2, 2, 0);
        if (m == 2)
            return eliminate_k(cur, above, r, singular, 2, 1, 0);
        if (ma == 2)
            return eliminate_k(cur, above, r, singular, 1, 2, 0);
        return eliminate_k(cur, above, r, singular, 1, 1, 0);
    }
    return eliminate_k(cur, above, r, singular, 0, 0, -1);
}

/*
 * Elimination from the top, one level at a time, skipping the steps that repeat. eliminate() is
 * a function of the level's description and of the state of the level above (its description,
 * (-S)^-1 and g) alone. Inside a run of levels that fill() describes alike (lc->run), once a
 * step returns the state of the step before bit for bit, every further step of the run has the
 * inputs of that step and returns the same state again: it is skipped, and the state and R_n
 * are those at hand. The recursion contracts, so the stretches between thresholds (all but a
 * few levels of a large chain) reach that fixed point within some dozens of levels; at the
 * critical load it converges slowly and few steps are skipped. The results are bit for bit those
 * of eliminating every level.
 */
struct stepper {
    const struct osn__lchain *lc;
    struct elim e[2];
    struct elim *above;   /* the state of the level eliminated last (NULL before the first) */
    xd r[OSN__B][OSN__B]; /* its R block */
    int singular;         /* as eliminate() set it */
    int fixed;            /* the last step returned the state of the one before, alike inputs */
    int reused;           /* the last step was skipped */
    int filled[2];        /* e[i].lv holds the description of the current run's levels */
    long run_lo, run_hi;  /* the run of levels alike that holds the level eliminated last */
};

static void step_run(struct stepper *st, long n)
{
    if (st->lc->run)
        st->lc->run(st->lc->ctx, n, &st->run_lo, &st->run_hi);
    else
        st->run_lo = st->run_hi = n;
}

static void step_init(struct stepper *st, const struct osn__lchain *lc)
{
    st->lc = lc;
    st->above = NULL;
    st->fixed = st->reused = 0;
    st->filled[0] = st->filled[1] = 0;
}

/* Bit-identical (-S)^-1 and g: xd has no padding, and -0 against 0 only costs a skip. */
static int same_state(const struct elim *a, const struct elim *b)
{
    const int m = a->lv.m;
    for (int i = 0; i < m; i++)
        if (memcmp(a->inv[i], b->inv[i], (size_t)m * sizeof(xd)) != 0)
            return 0;
    return memcmp(a->g, b->g, (size_t)m * sizeof(xd)) == 0;
}

/* Eliminates level n, the one below the level eliminated last (any level for the first step):
 * *out receives its state, st->r its R block. Returns -1 on a zero pivot. */
static int step(struct stepper *st, long n, const struct elim **out)
{
    const int alike = st->above && n >= st->run_lo && n <= st->run_hi;
    st->reused = alike && st->fixed;
    if (st->reused) {
        *out = st->above;
        return 0;
    }
    const int c = st->above == &st->e[0];
    struct elim *cur = &st->e[c];
    if (!alike) {
        step_run(st, n);
        st->filled[0] = st->filled[1] = 0;
    }
    if (!st->filled[c]) /* a level of this run was filled into it already: the same */
        st->lc->fill(st->lc->ctx, n, &cur->lv);
    st->filled[c] = 1;
    if (eliminate(cur, st->above, st->r, &st->singular))
        return -1;
    st->fixed = alike && same_state(cur, st->above);
    st->above = cur;
    *out = cur;
    return 0;
}

/* ---- stationary vector ---- */

/*
 * The forward sweep needs every R_n, but storing them all was the solver's largest array (a
 * 2 x 2 block of extended doubles, 64 bytes, per level: 60 MiB at R = 10^6). Instead the
 * backward pass keeps checkpoints: the elimination state ((-S_n)^-1 and g_n, a few hundred
 * bytes) at levels about SEGMENT_ENTRIES block entries apart. The sweep recomputes the R_n of
 * one segment at a time from the checkpoint above it, with the same code on the same inputs,
 * so the blocks are bit for bit those of the first pass. Twice the elimination work, memory for
 * one segment: a solve's memory no longer grows with R here.
 */
#define SEGMENT_ENTRIES 16384

/* Elimination states saved at some levels, in the order saved (descending levels). */
struct ckset {
    long n;
    long *level;
    size_t *off; /* of each checkpoint's inv (m x m) then g (m) in v */
    xd *v;
    size_t len, cap;
};

static void ck_free(struct ckset *c)
{
    free(c->level);
    free(c->off);
    free(c->v);
}

/* Saves the elimination state of `e` (level n) as the next checkpoint. */
static int ck_save(struct ckset *c, long n, const struct elim *e)
{
    const int m = e->lv.m;
    size_t need = (size_t)(m * m + m);
    if ((c->n & (c->n - 1)) == 0) { /* 0, 1, 2, 4, ...: grow the index arrays */
        long cap = c->n ? 2 * c->n : 1;
        long *lv = realloc(c->level, (size_t)cap * sizeof *lv);
        if (lv)
            c->level = lv;
        size_t *off = realloc(c->off, (size_t)cap * sizeof *off);
        if (off)
            c->off = off;
        if (!lv || !off)
            return OSN_ENOMEM;
    }
    if (c->len + need > c->cap) {
        size_t cap = 2 * (c->len + need);
        xd *v = realloc(c->v, cap * sizeof *v);
        if (!v)
            return OSN_ENOMEM;
        c->v = v;
        c->cap = cap;
    }
    c->level[c->n] = n;
    c->off[c->n++] = c->len;
    xd *d = c->v + c->len;
    for (int i = 0; i < m; i++)
        for (int j = 0; j < m; j++)
            *d++ = e->inv[i][j];
    for (int i = 0; i < m; i++)
        *d++ = e->g[i];
    c->len += need;
    return 0;
}

/* Restores checkpoint k into e (its level refilled from the chain). */
static void ck_load(const struct ckset *c, long k, const struct osn__lchain *lc, struct elim *e)
{
    lc->fill(lc->ctx, c->level[k], &e->lv);
    const int m = e->lv.m;
    const xd *d = c->v + c->off[k];
    for (int i = 0; i < m; i++)
        for (int j = 0; j < m; j++)
            e->inv[i][j] = *d++;
    for (int i = 0; i < m; i++)
        e->g[i] = *d++;
}

/* A stepper that starts below checkpoint k. */
static void step_from(struct stepper *st, const struct ckset *c, long k,
                      const struct osn__lchain *lc)
{
    step_init(st, lc);
    ck_load(c, k, lc, &st->e[0]);
    st->above = &st->e[0];
    step_run(st, c->level[k]);
    st->filled[0] = 1;
}

struct osn__stat {
    struct osn__lchain lc;
    uint8_t *size; /* m_n for n = lo..hi */
    xd pi_lo[OSN__B];
    struct ckset ck;     /* ck.level[0] = hi */
    int whole;           /* all R blocks fit one segment: kept from the first pass */
    xd *seg;             /* R blocks of the segment in use, bottom-up */
    long seg_lo, seg_hi; /* it holds R_n for seg_lo <= n < seg_hi */
    size_t seg_cap;
    struct stepper *step; /* for load_segment (tens of kilobytes: not on the stack) */
};

struct osn__stat *osn__stat_free(struct osn__stat *s)
{
    if (s) {
        free(s->size);
        ck_free(&s->ck);
        free(s->seg);
        free(s->step);
        free(s);
    }
    return NULL;
}

/* Block entries of R_n (m_n x m_{n+1}). */
static size_t block_entries(const struct osn__stat *s, long n)
{
    long i = n - s->lc.lo;
    return (size_t)s->size[i] * (size_t)s->size[i + 1];
}

int osn__stat_new(struct osn__stat **sp, const struct osn__lchain *lc)
{
    struct stepper *st = NULL; /* tens of kilobytes: not on the stack */
    struct osn__stat *s = calloc(1, sizeof *s);
    if (!s)
        return OSN_ENOMEM;
    s->lc = *lc;
    s->seg_lo = s->seg_hi = lc->lo; /* empty */
    long nlev = lc->hi - lc->lo + 1;
    s->size = malloc((size_t)nlev);
    if (!s->size)
        goto nomem;
    size_t total = 0;
    for (long n = lc->lo; n <= lc->hi; n++) {
        s->size[n - lc->lo] = (uint8_t)lc->count(lc->ctx, n);
        if (n > lc->lo)
            total += (size_t)s->size[n - lc->lo - 1] * (size_t)s->size[n - lc->lo];
    }
    s->whole = total <= SEGMENT_ENTRIES;
    if (s->whole) {
        s->seg = malloc((total ? total : 1) * sizeof *s->seg);
        if (!s->seg)
            goto nomem;
        s->seg_hi = lc->hi;
    }

    if (!(st = malloc(sizeof *st)))
        goto nomem;
    step_init(st, lc);
    size_t acc = 0, most = 0;
    for (long n = lc->hi; n >= lc->lo; n--) {
        const struct elim *cur;
        if (step(st, n, &cur))
            goto numeric;
        if (n == lc->lo) {
            if (!st->singular) /* a chain that leaks at the bottom has no stationary vector */
                goto numeric;
            gth(cur->lv.m, cur->inv, s->pi_lo);
        } else if (st->singular) {
            goto numeric;
        }
        if (s->whole && n < lc->hi) {
            const int m = cur->lv.m, ma = s->size[n + 1 - lc->lo];
            total -= (size_t)m * (size_t)ma;
            for (int i = 0; i < m; i++)
                for (int j = 0; j < ma; j++)
                    s->seg[total + (size_t)(i * ma + j)] = st->r[i][j];
        }
        if (n < lc->hi)
            acc += block_entries(s, n);
        if (!s->whole && n > lc->lo && (n == lc->hi || acc >= SEGMENT_ENTRIES)) {
            if (ck_save(&s->ck, n, cur))
                goto nomem;
            most = acc > most ? acc : most;
            acc = 0;
        }
    }
    free(st);
    st = NULL;
    most = acc > most ? acc : most;
    s->seg_cap = most ? most : 1;
    if (!s->whole &&
        (!(s->seg = malloc(s->seg_cap * sizeof *s->seg)) || !(s->step = malloc(sizeof *s->step))))
        goto nomem;
    *sp = s;
    return 0;
numeric:
    free(st);
    osn__stat_free(s);
    return OSN_ENUMERIC;
nomem:
    free(st);
    osn__stat_free(s);
    return OSN_ENOMEM;
}

/* Recomputes the R blocks of checkpoint k's segment into s->seg (bottom-up). */
static void load_segment(struct osn__stat *s, long k)
{
    const struct osn__lchain *lc = &s->lc;
    long top = s->ck.level[k], bottom = k + 1 < s->ck.n ? s->ck.level[k + 1] : lc->lo;
    struct stepper *st = s->step;
    step_from(st, &s->ck, k, lc);
    size_t pos = 0;
    for (long n = bottom; n < top; n++)
        pos += block_entries(s, n);
    for (long n = top - 1; n >= bottom; n--) {
        const struct elim *cur;
        step(st, n, &cur); /* succeeded in osn__stat_new on the same input */
        const int mc = cur->lv.m, ma = s->size[n + 1 - lc->lo];
        pos -= (size_t)mc * (size_t)ma;
        for (int i = 0; i < mc; i++)
            for (int j = 0; j < ma; j++)
                s->seg[pos + (size_t)(i * ma + j)] = st->r[i][j];
    }
    s->seg_lo = bottom;
    s->seg_hi = top;
}

int osn__stat_sweep(struct osn__stat *s, osn__visit_fn visit, void *arg)
{
    const struct osn__lchain *lc = &s->lc;
    /* Levels of one run (lc->run) are filled once: below, lv and above may be one buffer. */
    struct osn__lvl lvs[3];
    const struct osn__lvl *below = NULL, *lv = &lvs[0], *above = NULL;
    xd pi[2][OSN__B];
    xd *cur = pi[0], *prev = pi[1];
    size_t pos = 0;
    long k = s->ck.n; /* the next segment up is checkpoint k - 1's */
    long run_lo, run_hi;
    lc->fill(lc->ctx, lc->lo, &lvs[0]);
    if (lc->run)
        lc->run(lc->ctx, lc->lo, &run_lo, &run_hi);
    else
        run_hi = lc->lo;
    for (long n = lc->lo; n <= lc->hi; n++) {
        if (n < lc->hi && n + 1 <= run_hi) {
            above = lv;
        } else if (n < lc->hi) {
            struct osn__lvl *f = &lvs[0];
            while (f == lv || f == below)
                f++;
            lc->fill(lc->ctx, n + 1, f);
            above = f;
            if (lc->run)
                lc->run(lc->ctx, n + 1, &run_lo, &run_hi);
            else
                run_hi = n + 1;
        }
        if (n == lc->lo) {
            for (int j = 0; j < lv->m; j++)
                cur[j] = s->pi_lo[j];
        } else {
            if (!s->whole && (n - 1 >= s->seg_hi || n - 1 < s->seg_lo || k == s->ck.n)) {
                load_segment(s, --k);
                pos = 0;
            }
            int mp = s->size[n - lc->lo - 1];
            for (int j = 0; j < lv->m; j++) {
                xd v = osn_xd(0);
                for (int i = 0; i < mp; i++)
                    v = osn_xd_add(v, osn_xd_mul(prev[i], s->seg[pos + (size_t)(i * lv->m + j)]));
                cur[j] = v;
            }
            pos += (size_t)mp * (size_t)lv->m;
        }
        int err = visit(n, lv, cur, n > lc->lo ? below : NULL, n < lc->hi ? above : NULL, arg);
        if (err)
            return err;
        xd *t = prev;
        prev = cur;
        cur = t;
        below = lv;
        lv = above;
    }
    return 0;
}

/* ---- transient systems ---- */

/* Z_n = (-S_n)^-1 D_n (m_n x mb) of the level just eliminated in e, row-major into z. */
static inline __attribute__((always_inline)) void z_block_k(const struct elim *e, const int m,
                                                            const int mb, xd *z)
{
    for (int i = 0; i < m; i++) {
        for (int j = 0; j < mb; j++)
            z[i * mb + j] = osn_xd(0);
        for (int q = 0; q < m; q++) {
            int j = e->lv.dn_to[q];
            if (j >= 0)
                z[i * mb + j] =
                        osn_xd_add(z[i * mb + j], osn_xd_muld(e->inv[i][q], e->lv.dn_rate[q]));
        }
    }
}

/* z_block_k with the common sizes known to the compiler (as for eliminate()): same bits. */
static void z_block(const struct elim *e, int mb, xd *z)
{
    const int m = e->lv.m;
    if (m == 2 && mb == 2)
        z_block_k(e, 2, 2, z);
    else if (m == 2 && mb == 1)
        z_block_k(e, 2, 1, z);
    else if (m == 1 && mb == 2)
        z_block_k(e, 1, 2, z);
    else if (m == 1 && mb == 1)
        z_block_k(e, 1, 1, z);
    else
        z_block_k(e, m, mb, z);
}

/* c_n = b_n + R_n c_{n+1} (ma = m_{n+1}, 0 at the top level) and y_n = (-S_n)^-1 c_n. */
static inline __attribute__((always_inline)) void rhs_step_k(const struct elim *cur,
                                                             const xd r[OSN__B][OSN__B],
                                                             const int m, const int ma, const xd *b,
                                                             const xd *c_above, xd *c, xd *y)
{
    for (int i = 0; i < m; i++) {
        c[i] = b[i];
        for (int k = 0; k < ma; k++)
            c[i] = osn_xd_add(c[i], osn_xd_mul(r[i][k], c_above[k]));
    }
    for (int i = 0; i < m; i++) {
        xd v = osn_xd(0);
        for (int k = 0; k < m; k++)
            v = osn_xd_add(v, osn_xd_mul(cur->inv[i][k], c[k]));
        y[i] = v;
    }
}

static void rhs_step(const struct elim *cur, const xd r[OSN__B][OSN__B], int m, int ma, const xd *b,
                     const xd *c_above, xd *c, xd *y)
{
    if (m == 2 && ma == 2)
        rhs_step_k(cur, r, 2, 2, b, c_above, c, y);
    else if (m == 2 && ma == 1)
        rhs_step_k(cur, r, 2, 1, b, c_above, c, y);
    else if (m == 1 && ma == 2)
        rhs_step_k(cur, r, 1, 2, b, c_above, c, y);
    else if (m == 1 && ma == 1)
        rhs_step_k(cur, r, 1, 1, b, c_above, c, y);
    else
        rhs_step_k(cur, r, m, ma, b, c_above, c, y);
}

/*
 * Z_n = (-S_n)^-1 D_n (m_n x m_{n-1}) of levels n = bottom..top into z, bottom-up, re-eliminating
 * down from the checkpointed state of level top; same code and inputs as the backward pass, so
 * the same bits.
 */
static void z_segment(const struct osn__lchain *lc, const struct ckset *ck, long k, long bottom,
                      const uint8_t *size, struct stepper *st, xd *z)
{
    long top = ck->level[k];
    size_t pos = 0;
    for (long n = bottom; n <= top; n++)
        pos += (size_t)size[n - lc->lo] * (size_t)size[n - 1 - lc->lo];
    step_from(st, ck, k, lc);
    int last_mb = -1;
    for (long n = top; n >= bottom; n--) {
        const struct elim *cur = st->above;
        if (n < top)
            step(st, n, &cur); /* succeeded in the backward pass */
        const int mb = size[n - 1 - lc->lo];
        const size_t len = (size_t)cur->lv.m * (size_t)mb;
        pos -= len;
        if (n < top && st->reused && mb == last_mb) /* the state and shape of the level above */
            memcpy(z + pos, z + pos + len, len * sizeof *z);
        else
            z_block(cur, mb, z + pos);
        last_mb = mb;
    }
}

/*
 * Backward pass: c_n and y_n = (-S_n)^-1 c_n, kept in x itself, and checkpoints of the
 * elimination every SEGMENT_ENTRIES block entries or so (as for the stationary vector: Z_n for
 * all levels was 36 MiB at R = 10^6). Forward pass: x_n = y_n + Z_n x_{n-1}, with the Z_n of one
 * segment at a time recomputed from its checkpoint.
 */
int osn__transient_solve(const struct osn__lchain *lc, osn__rhs_fn rhs, void *arg, xd *x)
{
    long nlev = lc->hi - lc->lo + 1;
    uint8_t *size = malloc((size_t)nlev);
    long *off = malloc((size_t)nlev * sizeof *off);
    struct ckset ck = {0};
    struct stepper *st = NULL; /* tens of kilobytes: not on the stack */
    xd *z = NULL;
    int err = OSN_ENOMEM;
    if (!size || !off)
        goto out;
    long states = 0;
    size_t zt = 0;
    for (long n = lc->lo; n <= lc->hi; n++) {
        size[n - lc->lo] = (uint8_t)lc->count(lc->ctx, n);
        off[n - lc->lo] = states;
        states += size[n - lc->lo];
        if (n > lc->lo)
            zt += (size_t)size[n - lc->lo] * (size_t)size[n - lc->lo - 1];
    }
    /* A chain whose Z blocks fit one segment keeps them from the backward pass (the optimiser's
     * many small solves would otherwise eliminate twice for nothing). */
    const int whole = zt <= SEGMENT_ENTRIES;
    size_t zpos = zt;
    if (whole && !(z = malloc((zt ? zt : 1) * sizeof *z)))
        goto out;
    if (!(st = malloc(sizeof *st))) {
        err = OSN_ENOMEM;
        goto out;
    }
    step_init(st, lc);
    xd c_above[OSN__B];
    size_t acc = 0, most = 0;
    err = 0;
    for (long n = lc->hi; n >= lc->lo; n--) {
        xd b[OSN__B], c[OSN__B];
        const struct elim *cur;
        if (step(st, n, &cur) || st->singular) {
            err = OSN_ENUMERIC;
            goto out;
        }
        const int m = cur->lv.m;
        rhs(n, &cur->lv, b, arg);
        rhs_step(cur, (const xd(*)[OSN__B])st->r, m, n < lc->hi ? size[n + 1 - lc->lo] : 0, b,
                 c_above, c, x + off[n - lc->lo]);
        if (whole && n > lc->lo) {
            zpos -= (size_t)m * (size_t)size[n - 1 - lc->lo];
            z_block(cur, size[n - 1 - lc->lo], z + zpos);
        }
        /* A checkpoint at hi, then one whenever the Z blocks since the last reach the budget. */
        if (!whole && n > lc->lo) {
            if (n == lc->hi || acc >= SEGMENT_ENTRIES) {
                if ((err = ck_save(&ck, n, cur)))
                    goto out;
                most = acc > most ? acc : most;
                acc = 0;
            }
            acc += (size_t)m * (size_t)size[n - 1 - lc->lo];
        }
        for (int i = 0; i < m; i++)
            c_above[i] = c[i];
    }
    most = acc > most ? acc : most;
    if (!whole && !(z = malloc((most ? most : 1) * sizeof *z))) {
        err = OSN_ENOMEM;
        goto out;
    }
    /* Checkpoint k covers levels ck.level[k+1] + 1 .. ck.level[k] (the last one down to lo + 1);
     * a whole chain is one segment, lo + 1 .. hi, already in z. */
    for (long k = whole ? 0 : ck.n - 1; k >= 0; k--) {
        long top = whole ? lc->hi : ck.level[k];
        long bottom = !whole && k + 1 < ck.n ? ck.level[k + 1] + 1 : lc->lo + 1;
        if (!whole)
            z_segment(lc, &ck, k, bottom, size, st, z);
        size_t pos = 0;
        for (long n = bottom; n <= top; n++) {
            int m = size[n - lc->lo], mb = size[n - lc->lo - 1];
            xd *xn = x + off[n - lc->lo];
            const xd *xb = x + off[n - lc->lo - 1];
            for (int i = 0; i < m; i++)
                for (int j = 0; j < mb; j++)
                    xn[i] = osn_xd_add(xn[i], osn_xd_mul(z[pos + (size_t)(i * mb + j)], xb[j]));
            pos += (size_t)m * (size_t)mb;
        }
    }
out:
    ck_free(&ck);
    free(st);
    free(z);
    free(size);
    free(off);
    return err;
}
