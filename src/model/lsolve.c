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

/* Bits of k extended doubles equal (-0 against 0 only costs a skip). Inline, cheapest first:
 * inside a stretch that does not converge the first entries already differ, and a libc memcmp
 * per row was a tenth of a solve. */
static inline int same_bits(const xd *a, const xd *b, int k)
{
    for (int i = 0; i < k; i++) {
        uint64_t x, y;
        memcpy(&x, &a[i].m, sizeof x);
        memcpy(&y, &b[i].m, sizeof y);
        if (x != y || a[i].e != b[i].e)
            return 0;
    }
    return 1;
}

/* Bit-identical (-S)^-1 and g. */
static int same_state(const struct elim *a, const struct elim *b)
{
    const int m = a->lv.m;
    if (!same_bits(a->g, b->g, m))
        return 0;
    for (int i = 0; i < m; i++)
        if (!same_bits(a->inv[i], b->inv[i], m))
            return 0;
    return 1;
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

/* ---- the eliminated chain: (-S_n)^-1 of every level, kept ---- */

/*
 * Every pass over the chain reads the blocks of the elimination: the stationary sweep R_n =
 * U_n (-S_{n+1})^-1, a transient solve R_n in its backward pass and Z_n = (-S_n)^-1 D_n in its
 * forward pass, and the return time's passes (a column system and a row vector) on one chain.
 * The blocks are therefore eliminated once and (-S_n)^-1 kept for every level; R_n and Z_n are
 * never formed: a pass multiplies its vector by the level's rates and then by (-S_n)^-1. A
 * skipped step (a run at its fixed point)
 * keeps no block: the level points at the block of the level above. The stationary chain and the
 * overload chain agree in their top levels (policy I: all levels above H + 1 or so hold the same
 * states and rates); a chain eliminated next can take those levels' blocks from the first
 * (`other`, `top`) and eliminates only the levels below.
 */
struct osn__elim {
    struct osn__lchain lc;
    int stationary;
    uint8_t *size;      /* m_n for n = lo..hi */
    uint32_t *at;       /* where level n's (-S_n)^-1 (m_n x m_n, row-major) is: block() */
    xd **chunk;         /* the blocks, one per step that was not skipped, in chunks of CHUNK */
    size_t nchunk, len; /* len: entries used, the last chunk's unused tail counted */
    size_t ccap;        /* entries per chunk: CHUNK, or fewer when all blocks fit in fewer */
    long states;
    const struct osn__elim *top; /* levels top_lo..hi are top's (top_lo = hi + 1: none) */
    long top_lo;
    xd pi_lo[OSN__B]; /* stationary: the bottom level's censored stationary vector */
    /* What a chain eliminated next (other) can take: the common top from other_lo up, and the
     * elimination state at other_lo to resume from. */
    struct osn__lchain other;
    long other_lo;
    struct elim *kept;
};

/* Entries of a chunk of blocks (2 MiB, a huge page): chunks, unlike one array grown by
 * realloc, are never copied, and the pages are touched once. */
#define CHUNK_SHIFT 17
#define CHUNK       ((size_t)1 << CHUNK_SHIFT)

static inline const xd *block(const struct osn__elim *e, uint32_t at)
{
    return e->chunk[at >> CHUNK_SHIFT] + (at & (CHUNK - 1));
}

/* (-S_n)^-1 of level n. */
static inline const xd *inv_of(const struct osn__elim *e, long n)
{
    if (n >= e->top_lo)
        return block(e->top, e->top->at[n - e->top->lc.lo]);
    return block(e, e->at[n - e->lc.lo]);
}

void osn__elim_free(struct osn__elim *e)
{
    if (e) {
        const size_t nlev = (size_t)(e->lc.hi - e->lc.lo + 1);
        if (e->size)
            osn__big_free(e->size, nlev);
        if (e->at)
            osn__big_free(e->at, nlev * sizeof *e->at);
        for (size_t k = 0; k < e->nchunk; k++)
            osn__big_free(e->chunk[k], e->ccap * sizeof(xd));
        free(e->chunk);
        free(e->kept);
        free(e);
    }
}

long osn__elim_shared_from(const struct osn__elim *e)
{
    return e->top_lo;
}

/* What elimination reads of a level: the descriptions of two levels eliminate alike. */
static int same_for_elimination(const struct osn__lvl *a, const struct osn__lvl *b)
{
    const size_t m = (size_t)a->m;
    if (a->m != b->m || a->has_side != b->has_side)
        return 0;
    if (memcmp(a->up_to, b->up_to, m * sizeof(int)) ||
        memcmp(a->dn_to, b->dn_to, m * sizeof(int)) ||
        memcmp(a->up_rate, b->up_rate, m * sizeof(double)) ||
        memcmp(a->dn_rate, b->dn_rate, m * sizeof(double)) ||
        memcmp(a->kill, b->kill, m * sizeof(double)))
        return 0;
    for (size_t i = 0; a->has_side && i < m; i++)
        if (memcmp(a->side[i], b->side[i], m * sizeof(double)))
            return 0;
    return 1;
}

/*
 * The lowest level nc such that chains a and b have the same top level and describe every level
 * nc..hi alike: their elimination states agree there bit for bit. Never either chain's bottom
 * level (a stationary chain keeps GTH rates there). hi + 1 when there is no such level. Walks
 * the runs (lchain.run), so it fills a few levels per threshold, not every level.
 */
static long common_top(const struct osn__lchain *a, const struct osn__lchain *b)
{
    static _Thread_local struct osn__lvl la, lb; /* a few kilobytes each: not on the stack */
    if (a->hi != b->hi)
        return a->hi + 1;
    const long floor = (a->lo > b->lo ? a->lo : b->lo) + 1;
    long n = a->hi, nc = a->hi + 1;
    while (n >= floor) {
        a->fill(a->ctx, n, &la);
        b->fill(b->ctx, n, &lb);
        if (!same_for_elimination(&la, &lb))
            break;
        long alo = n, blo = n, ahi, bhi;
        if (a->run)
            a->run(a->ctx, n, &alo, &ahi);
        if (b->run)
            b->run(b->ctx, n, &blo, &bhi);
        long lo = alo > blo ? alo : blo; /* both runs: both descriptions are those of n */
        nc = lo > floor ? lo : floor;
        n = nc - 1;
    }
    return nc;
}

long osn__run_end(const struct osn__lchain *lc, long n)
{
    long lo, hi = n;
    if (lc->run)
        lc->run(lc->ctx, n, &lo, &hi);
    return hi < lc->hi ? hi : lc->hi;
}

/* Keeps the block of level n (the level above's when the step was skipped). */
static int keep_block(struct osn__elim *e, long n, const struct elim *cur, int reused)
{
    const long i = n - e->lc.lo;
    if (reused && n < e->lc.hi && n + 1 < e->top_lo) {
        e->at[i] = e->at[i + 1];
        return 0;
    }
    const size_t m = (size_t)cur->lv.m, need = m * m;
    if (e->len == e->nchunk * CHUNK || e->len % CHUNK + need > e->ccap) { /* a new chunk */
        if (e->nchunk << CHUNK_SHIFT > UINT32_MAX - CHUNK)
            return OSN_ENOMEM;
        xd **ch = realloc(e->chunk, (e->nchunk + 1) * sizeof *ch);
        if (!ch)
            return OSN_ENOMEM;
        e->chunk = ch;
        /* Not zeroed: a small chain's chunk comes from malloc (calloc cleared it every solve). */
        const size_t bytes = e->ccap * sizeof(xd);
        if (!(ch[e->nchunk] = bytes >= OSN_MEM_BLOCK / 2 ? osn__big_alloc(bytes) : malloc(bytes)))
            return OSN_ENOMEM;
        e->len = e->nchunk++ * CHUNK;
    }
    e->at[i] = (uint32_t)e->len;
    xd *d = e->chunk[e->len >> CHUNK_SHIFT] + (e->len & (CHUNK - 1));
    for (size_t r = 0; r < m; r++) /* a loop, not memcpy: a call for 32 bytes cost more */
        for (size_t c = 0; c < m; c++)
            d[r * m + c] = cur->inv[r][c];
    e->len += need;
    return 0;
}

/* Same chain (the one `other` was recorded for). */
static int same_chain(const struct osn__lchain *a, const struct osn__lchain *b)
{
    return a->lo == b->lo && a->hi == b->hi && a->fill == b->fill && a->count == b->count &&
           a->run == b->run && a->ctx == b->ctx;
}

/*
 * Eliminates lc from the top, keeping every (-S_n)^-1. Stationary: the bottom level must be
 * singular (its GTH vector goes to pi_lo) and no other; transient: no level singular. top: an
 * elimination whose `other` is lc, whose blocks serve the common top levels. other: a chain
 * eliminated next that may share this one's top levels.
 */
static int elim_new(struct osn__elim **ep, const struct osn__lchain *lc, int stationary,
                    const struct osn__elim *top, const struct osn__lchain *other)
{
    struct stepper *st = NULL; /* tens of kilobytes: not on the stack */
    struct osn__elim *e = calloc(1, sizeof *e);
    if (!e)
        return OSN_ENOMEM;
    e->lc = *lc;
    e->stationary = stationary;
    e->top_lo = e->other_lo = lc->hi + 1;
    const long nlev = lc->hi - lc->lo + 1;
    /* Per-level arrays of a large chain in huge pages: 4 KiB page faults cost about 10 us each
     * on the virtual machines measured, a tenth of a solve at R = 10^6. */
    if (!(e->size = osn__big_alloc((size_t)nlev)) ||
        !(e->at = osn__big_alloc((size_t)nlev * sizeof *e->at)) || !(st = malloc(sizeof *st)))
        goto nomem;
    size_t most = 0; /* entries of all blocks, were no step skipped */
    for (long n = lc->lo, hi; n <= lc->hi; n = hi + 1) {
        hi = osn__run_end(lc, n); /* the levels of a run have the same size: one count a run */
        const int m = lc->count(lc->ctx, n);
        memset(e->size + (n - lc->lo), m, (size_t)(hi - n + 1));
        e->states += (long)m * (hi - n + 1);
        most += (size_t)m * (size_t)m * (size_t)(hi - n + 1);
    }
    e->ccap = most < CHUNK ? most : CHUNK; /* a small chain gets one small chunk */
    step_init(st, lc);
    long start = lc->hi;
    if (top && top->kept && same_chain(&top->other, lc)) {
        /* Resume below the common top from the state the first elimination kept there. */
        e->top = top;
        e->top_lo = top->other_lo;
        st->e[0] = *top->kept;
        st->above = &st->e[0];
        step_run(st, e->top_lo);
        st->filled[0] = 1;
        start = e->top_lo - 1;
    }
    if (other) {
        e->other = *other;
        e->other_lo = common_top(lc, other);
        if (e->other_lo <= lc->hi && !(e->kept = malloc(sizeof *e->kept)))
            goto nomem;
    }
    for (long n = start; n >= lc->lo; n--) {
        const struct elim *cur;
        if (step(st, n, &cur))
            goto numeric;
        if (stationary && n == lc->lo) {
            if (!st->singular) /* a chain that leaks at the bottom has no stationary vector */
                goto numeric;
            gth(cur->lv.m, cur->inv, e->pi_lo);
        } else if (st->singular) {
            goto numeric;
        }
        int err = keep_block(e, n, cur, st->reused);
        if (err) {
            free(st);
            osn__elim_free(e);
            return err;
        }
        if (n == e->other_lo)
            *e->kept = *cur;
    }
    free(st);
    *ep = e;
    return 0;
numeric:
    free(st);
    osn__elim_free(e);
    return OSN_ENUMERIC;
nomem:
    free(st);
    osn__elim_free(e);
    return OSN_ENOMEM;
}

/* ---- stationary vector ---- */

int osn__stat_new(struct osn__elim **sp, const struct osn__lchain *lc,
                  const struct osn__lchain *next)
{
    return elim_new(sp, lc, 1, NULL, next);
}

/* out = add + w (-S_n)^-1 for the row vector w of level n (m entries); add may be NULL (0). */
static inline __attribute__((always_inline)) void
row_times_inv_k(const xd *w, const xd *inv, const int m, const xd *add, xd *out)
{
    for (int j = 0; j < m; j++)
        out[j] = add ? add[j] : osn_xd(0);
    for (int t = 0; t < m; t++) {
        if (osn_xd_is_zero(w[t]))
            continue;
        for (int j = 0; j < m; j++)
            out[j] = osn_xd_add(out[j], osn_xd_mul(w[t], inv[t * m + j]));
    }
}

/*
 * out = add + row R_{n-1} for the row vector `row` of level n-1 (description below) and
 * R_{n-1} = U_{n-1} (-S_n)^-1, as (row U_{n-1}) (-S_n)^-1: row U_{n-1} is a rate times one entry
 * of row a state, so R_{n-1} is never formed. add may be NULL (0). m = m_n.
 */
static inline __attribute__((always_inline)) void up_times_inv_k(const xd *row,
                                                                 const struct osn__lvl *below,
                                                                 const xd *inv, const int m,
                                                                 const xd *add, xd *out)
{
    xd w[OSN__B];
    for (int t = 0; t < m; t++)
        w[t] = osn_xd(0);
    for (int i = 0; i < below->m; i++) {
        const int t = below->up_to[i];
        if (t >= 0) /* rows without an up transition add nothing */
            w[t] = osn_xd_add(w[t], osn_xd_muld(row[i], below->up_rate[i]));
    }
    row_times_inv_k(w, inv, m, add, out);
}

static void up_times_inv(const xd *row, const struct osn__lvl *below, const xd *inv, int m,
                         const xd *add, xd *out)
{
    if (m == 2)
        up_times_inv_k(row, below, inv, 2, add, out);
    else if (m == 1)
        up_times_inv_k(row, below, inv, 1, add, out);
    else
        up_times_inv_k(row, below, inv, m, add, out);
}

int osn__stat_sweep(const struct osn__elim *s, osn__visit_fn visit, void *arg)
{
    const struct osn__lchain *lc = &s->lc;
    /* Levels of one run (lc->run) are filled once: below, lv and above may be one buffer. */
    struct osn__lvl lvs[3];
    const struct osn__lvl *below = NULL, *lv = &lvs[0], *above = NULL;
    xd pi[2][OSN__B];
    xd *cur = pi[0], *prev = pi[1];
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
            up_times_inv(prev, below, inv_of(s, n), lv->m, NULL, cur);
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

/*
 * x_n += Z_n x_{n-1} with Z_n = (-S_n)^-1 D_n, as (-S_n)^-1 (D_n x_{n-1}):
 * D_n x_{n-1} is a rate times one entry of x_{n-1} per state, so Z_n is never formed.
 */
static inline __attribute__((always_inline)) void
forward_k(const xd *inv, const struct osn__lvl *lv, const int m, const xd *xb, xd *xn)
{
    xd v[OSN__B];
    for (int q = 0; q < m; q++) {
        const int j = lv->dn_to[q];
        v[q] = j >= 0 ? osn_xd_muld(xb[j], lv->dn_rate[q]) : osn_xd(0);
    }
    for (int i = 0; i < m; i++)
        for (int q = 0; q < m; q++)
            xn[i] = osn_xd_add(xn[i], osn_xd_mul(inv[i * m + q], v[q]));
}

/* forward_k with the common sizes (one or two states) known to the compiler. */
static void forward(const xd *inv, const struct osn__lvl *lv, const xd *xb, xd *xn)
{
    if (lv->m == 2)
        forward_k(inv, lv, 2, xb, xn);
    else if (lv->m == 1)
        forward_k(inv, lv, 1, xb, xn);
    else
        forward_k(inv, lv, lv->m, xb, xn);
}

/*
 * c_n = b_n + R_n c_{n+1} and y_n = (-S_n)^-1 c_n. With R_n(i, k) = up_rate(i)
 * (-S_{n+1})^-1(up_to(i), k), row i of R_n c_{n+1} is up_rate(i) y_{n+1}(up_to(i)): one product
 * of the level above's y, which the pass has at hand (y_above; NULL at the top level).
 */
static inline __attribute__((always_inline)) void rhs_step_k(const xd *inv,
                                                             const struct osn__lvl *lv, const int m,
                                                             const xd *b, const xd *y_above, xd *c,
                                                             xd *y)
{
    for (int i = 0; i < m; i++) {
        c[i] = b[i];
        const int t = lv->up_to[i];
        if (t >= 0 && y_above) /* a zero row of R_n adds nothing */
            c[i] = osn_xd_add(c[i], osn_xd_muld(y_above[t], lv->up_rate[i]));
    }
    for (int i = 0; i < m; i++) {
        xd v = osn_xd(0);
        for (int k = 0; k < m; k++)
            v = osn_xd_add(v, osn_xd_mul(inv[i * m + k], c[k]));
        y[i] = v;
    }
}

static void rhs_step(const xd *inv, const struct osn__lvl *lv, const xd *b, const xd *y_above,
                     xd *c, xd *y)
{
    if (lv->m == 2)
        rhs_step_k(inv, lv, 2, b, y_above, c, y);
    else if (lv->m == 1)
        rhs_step_k(inv, lv, 1, b, y_above, c, y);
    else
        rhs_step_k(inv, lv, lv->m, b, y_above, c, y);
}

/* Level n's description, refilled only when n leaves the run of the level filled last. */
struct cursor {
    const struct osn__lchain *lc;
    long lo, hi; /* the run held (lo > hi: none) */
    struct osn__lvl lv;
};

static const struct osn__lvl *level(struct cursor *c, long n)
{
    if (n < c->lo || n > c->hi) {
        c->lc->fill(c->lc->ctx, n, &c->lv);
        if (c->lc->run)
            c->lc->run(c->lc->ctx, n, &c->lo, &c->hi);
        else
            c->lo = c->hi = n;
    }
    return &c->lv;
}

int osn__trans_new(struct osn__elim **tp, const struct osn__lchain *lc, const struct osn__elim *top)
{
    return elim_new(tp, lc, 0, top, NULL);
}

/* Backward pass: c_n and y_n = (-S_n)^-1 c_n, y kept in x itself. */
static void backward(const struct osn__elim *t, struct cursor *cu, osn__rhs_fn rhs, void *arg,
                     xd *x)
{
    const struct osn__lchain *lc = &t->lc;
    xd c[OSN__B], b[OSN__B];
    long pos = t->states;
    for (long n = lc->hi; n >= lc->lo; n--) {
        const struct osn__lvl *lv = level(cu, n);
        const long above = pos;
        pos -= lv->m;
        rhs(n, lv, b, arg);
        rhs_step(inv_of(t, n), lv, b, n < lc->hi ? x + above : NULL, c, x + pos);
    }
}

/* Backward pass, then the forward pass x_n = y_n + Z_n x_{n-1}. */
int osn__trans_solve(const struct osn__elim *t, osn__rhs_fn rhs, void *arg, xd *x)
{
    const struct osn__lchain *lc = &t->lc;
    struct cursor *cu = malloc(sizeof *cu); /* a few kilobytes: not on the stack */
    if (!cu)
        return OSN_ENOMEM;
    *cu = (struct cursor){lc, 1, 0};
    backward(t, cu, rhs, arg, x);
    long pos = t->size[0];
    for (long n = lc->lo + 1; n <= lc->hi; n++) {
        const struct osn__lvl *lv = level(cu, n);
        const int mb = t->size[n - 1 - lc->lo];
        forward(inv_of(t, n), lv, x + pos - mb, x + pos);
        pos += lv->m;
    }
    free(cu);
    return 0;
}

/* ---- a row vector on the same factors: a (-Q)^-2 b without a second system ---- */

/*
 * With the factors of the elimination, -Q = U diag(-S_n) L, where U has -R_n above its unit
 * diagonal and L has -Z_n below it. A row system u (-Q) = a is then solved by the passes of a
 * column system turned around: p_n = a_n + p_{n+1} Z_{n+1} from the top, q_n = p_n (-S_n)^-1,
 * and u_n = q_n + u_{n-1} R_{n-1} from the bottom. p and q are 0 above the highest level where a
 * is not, so the first pass starts there; the last runs beside the column system's forward
 * pass, and u x = a (-Q)^-1 (-Q)^-1 b is summed as both go up. Every term is non-negative.
 */

struct sparse_entry {
    long idx;
    xd w;
};

static int by_state(const void *a, const void *b)
{
    const long x = ((const struct sparse_entry *)a)->idx, y = ((const struct sparse_entry *)b)->idx;
    return (x > y) - (x < y);
}

/* p Z for the row vector p of level n (m_n entries) and Z_n = (-S_n)^-1 D_n: m_{n-1} entries. */
static void row_times_z(const xd *p, const xd *inv, const struct osn__lvl *lv, int mb, xd *out)
{
    const int m = lv->m;
    for (int j = 0; j < mb; j++)
        out[j] = osn_xd(0);
    for (int i = 0; i < m; i++) {
        if (osn_xd_is_zero(p[i]))
            continue;
        for (int k = 0; k < m; k++) {
            const int j = lv->dn_to[k];
            if (j >= 0)
                out[j] = osn_xd_add(out[j],
                                    osn_xd_mul(p[i], osn_xd_muld(inv[i * m + k], lv->dn_rate[k])));
        }
    }
}

/* Levels whose terms of u x are summed apart before they join the total, so that the bound on
 * the sum's rounding error grows with DOT_BLOCK + levels / DOT_BLOCK, not with the levels. */
#define DOT_BLOCK 1024

int osn__trans_solve_dual(const struct osn__elim *t, osn__rhs_fn rhs, void *arg, long na,
                          const long *idx, const xd *w, xd *x, xd *dot)
{
    const struct osn__lchain *lc = &t->lc;
    struct sparse_entry *a = malloc((size_t)(na > 0 ? na : 1) * sizeof *a);
    struct cursor *cu = malloc(2 * sizeof *cu); /* this level and the one below */
    xd *q = NULL;
    size_t qbytes = 0;
    int err = OSN_ENOMEM;
    if (!a || !cu)
        goto out;
    for (long k = 0; k < na; k++)
        a[k] = (struct sparse_entry){idx[k], w[k]};
    qsort(a, (size_t)na, sizeof *a, by_state);
    err = OSN_EINVAL;
    if (na > 0 && (a[0].idx < 0 || a[na - 1].idx >= t->states))
        goto out;
    cu[0] = cu[1] = (struct cursor){lc, 1, 0};
    backward(t, &cu[0], rhs, arg, x);

    /* The level ntop that holds the highest state of a, and where q ends (qlen states). */
    long ntop = lc->lo - 1, qlen = 0;
    while (na > 0 && qlen <= a[na - 1].idx)
        qlen += t->size[++ntop - lc->lo];
    qbytes = (size_t)(qlen > 0 ? qlen : 1) * sizeof(xd);
    err = OSN_ENOMEM;
    if (!(q = osn__big_alloc(qbytes)))
        goto out;
    xd p[OSN__B], pz[OSN__B];
    long pos = qlen, k = na - 1;
    const xd *inv_above = NULL;
    for (long n = ntop; n >= lc->lo; n--) {
        const struct osn__lvl *lv = level(&cu[0], n);
        const xd *inv = inv_of(t, n);
        const int m = lv->m;
        pos -= m;
        if (n < ntop)
            row_times_z(p, inv_above, level(&cu[1], n + 1), m, pz);
        for (int j = 0; j < m; j++)
            p[j] = n < ntop ? pz[j] : osn_xd(0);
        for (; k >= 0 && a[k].idx >= pos; k--)
            p[a[k].idx - pos] = osn_xd_add(p[a[k].idx - pos], a[k].w);
        row_times_inv_k(p, inv, m, NULL, q + pos); /* q_n = p_n (-S_n)^-1 */
        inv_above = inv;
    }

    /* Upwards: x_n = y_n + Z_n x_{n-1} and u_n = q_n + u_{n-1} R_{n-1}, summing u_n x_n. */
    xd u[2][OSN__B], s = osn_xd(0), part = osn_xd(0);
    xd *ub = u[0], *un = u[1];
    const int m0 = t->size[0];
    for (int j = 0; j < m0; j++) {
        ub[j] = qlen > 0 ? q[j] : osn_xd(0);
        s = osn_xd_add(s, osn_xd_mul(ub[j], x[j]));
    }
    pos = m0;
    for (long n = lc->lo + 1; n <= lc->hi; n++) {
        const struct osn__lvl *below = level(&cu[1], n - 1), *lv = level(&cu[0], n);
        const xd *inv = inv_of(t, n);
        const int m = lv->m, mb = below->m;
        forward(inv, lv, x + pos - mb, x + pos);
        up_times_inv(ub, below, inv, m, pos < qlen ? q + pos : NULL, un);
        for (int j = 0; j < m; j++)
            part = osn_xd_add(part, osn_xd_mul(un[j], x[pos + j]));
        if ((n - lc->lo) % DOT_BLOCK == 0) {
            s = osn_xd_add(s, part);
            part = osn_xd(0);
        }
        xd *tmp = ub;
        ub = un;
        un = tmp;
        pos += m;
    }
    *dot = osn_xd_add(s, part);
    err = 0;
out:
    free(a);
    free(cu);
    if (q)
        osn__big_free(q, qbytes);
    return err;
}

int osn__transient_solve(const struct osn__lchain *lc, osn__rhs_fn rhs, void *arg, xd *x)
{
    struct osn__elim *t = NULL;
    int err = osn__trans_new(&t, lc, NULL);
    if (!err)
        err = osn__trans_solve(t, rhs, arg, x);
    osn__elim_free(t);
    return err;
}
