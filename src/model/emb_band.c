/*
 * The embedded chain's banded GTH elimination, and its rows shared between solves (emb_band.h).
 *
 * Why share: in an optimiser's scan the pairs (L, H) with the same H have the same embedded rows
 * at every level above L + 1 (a row is made from the levels it can reach, which see L only at
 * L and L + 1), and GTH eliminates from the top, so the eliminated form of those rows is the
 * same too: eliminating a state changes only the rows below it. One solve keeps its eliminated
 * band; the next one finds, by comparing the level descriptions, from which level up its rows
 * are the kept ones, reads them there and eliminates only its own rows below. Those receive the
 * updates of the kept rows' elimination in the same order and with the same operands as in a
 * solve from scratch, so the result is the same to the bit; what is saved is the elimination of
 * the kept rows themselves (and building them). The comparison is of the rows' inputs, not of a
 * model's fields, so it holds for every kind and policy without knowing which threshold moved.
 */
#include "emb_band.h"

#include <stdlib.h>
#include <string.h>

#include "osn/err.h"

typedef struct osn_xd xd;

/* A band is kept (with a spare of its size) only up to this size: a worker then holds three bands
 * instead of one, which for a heavy-tailed law's wide band would be more memory than it saves
 * time. */
#define KEEP_MAX_BYTES ((size_t)64 << 20)

struct osn__emb_shared {
    int valid;
    struct osn__emb_key key;
    struct osn_model family;   /* the kept solve's model, L and L1 cleared */
    struct osn__emb_level *lv; /* key.R + 1 levels */
    size_t lv_cap;
    struct osn__band band;       /* eliminated, every row */
    struct osn__band spare;      /* arrays for the next solve's band */
    long rows_seen, rows_shared; /* over the solves that asked: their rows, the rows reused */
};

void osn__band_free(struct osn__band *b)
{
    free(b->first);
    free(b->end);
    free(b->a);
    free(b->s);
    free(b->path);
    memset(b, 0, sizeof *b);
}

int osn__band_init(struct osn__band *b, long N, const long *level, long up, long zero_below)
{
    if ((size_t)N > b->rows) {
        free(b->first);
        free(b->end);
        free(b->s);
        free(b->path);
        b->first = malloc((size_t)N * sizeof *b->first);
        b->end = malloc((size_t)N * sizeof *b->end);
        b->s = malloc((size_t)N * sizeof *b->s);
        b->path = malloc((size_t)N * sizeof *b->path);
        b->rows = b->first && b->end && b->s && b->path ? (size_t)N : 0;
        if (!b->rows)
            return OSN_ENOMEM;
    }
    b->N = N;
    b->W = 0;
    b->path_ok = 0;
    long lo = 0, hi = 0; /* sliding bounds, both non-decreasing in x */
    for (long x = 0; x < N; x++) {
        while (level[lo] < level[x] - 1)
            lo++;
        while (hi < N && level[hi] <= level[x] + up)
            hi++;
        b->first[x] = lo;
        b->end[x] = hi;
        if (hi - lo > b->W)
            b->W = hi - lo;
    }
    size_t cells = (size_t)N * (size_t)b->W;
    if (cells > b->cells) {
        free(b->a);
        b->a = malloc(cells * sizeof *b->a);
        b->cells = b->a ? cells : 0;
        if (!b->a)
            return OSN_ENOMEM;
    }
    memset(b->a, 0, (size_t)zero_below * (size_t)b->W * sizeof *b->a);
    return 0;
}

/* Row k's entry in column j: from the shared rows at and above top. */
static inline const xd *entry(const struct osn__band *b, const struct osn__emb_reuse *ru, long k,
                              long j)
{
    return k >= ru->top ? osn__band_at(ru->band, k + ru->shift, j + ru->shift)
                        : osn__band_at(b, k, j);
}

/* pi[k] * s[k]: the flow into k from the states before it, in the order of i. Every row from i0
 * (the first whose band reaches column k) to k - 1 holds column k, since first[i] <= i. */
static inline xd inflow(const struct osn__band *b, const struct osn__emb_reuse *ru, const xd *pi,
                        long i0, long k)
{
    xd v = osn_xd(0);
    const long mid = k < ru->top ? k : i0 > ru->top ? i0 : ru->top;
    for (long i = i0; i < mid; i++) {
        xd aik = *osn__band_at(b, i, k);
        if (!osn_xd_is_zero(aik))
            v = osn_xd_add(v, osn_xd_mul(pi[i], aik));
    }
    for (long i = mid; i < k; i++) { /* shared rows */
        xd aik = *osn__band_at(ru->band, i + ru->shift, k + ru->shift);
        if (!osn_xd_is_zero(aik))
            v = osn_xd_add(v, osn_xd_mul(pi[i], aik));
    }
    return v;
}

int osn__band_gth(struct osn__band *b, const struct osn__emb_reuse *ru, xd *pi)
{
    const long N = b->N, top = ru->top;
    xd *s = b->s;
    long *nz = malloc((size_t)N * sizeof *nz);
    xd *akj = malloc((size_t)N * sizeof *akj);
    if (!nz || !akj) {
        free(nz);
        free(akj);
        return OSN_ENOMEM;
    }
    for (long k = N - 1, g = N; k >= 1; k--) {
        /* The rows whose band reaches column k, i0 .. k - 1: end[] is non-decreasing, so the
         * first row with end > k (g) only moves down as k does. */
        while (g > 0 && b->end[g - 1] > k)
            g--;
        const long i0 = g < k ? g : k;
        if (k >= top) {
            s[k] = ru->band->s[k + ru->shift];
            if (i0 >= top) /* only shared rows below k: they have this update already */
                continue;
        }
        /* A kept pivot's row sum is its kept s[k], the same sum of the same entries. */
        const int kept = k >= top;
        xd sum = kept ? s[k] : osn_xd(0);
        long cnt = 0;
        for (long j = b->first[k]; j < k; j++) {
            xd v = *entry(b, ru, k, j);
            if (!osn_xd_is_zero(v)) {
                if (!kept)
                    sum = osn_xd_add(sum, v);
                nz[cnt] = j;
                akj[cnt++] = v;
            }
        }
        if (osn_xd_is_zero(sum)) {
            free(nz);
            free(akj);
            return OSN_ENUMERIC;
        }
        s[k] = sum;
        const long iend = k < top ? k : top;
        for (long i = i0; i < iend; i++) {
            xd aik = *osn__band_at(b, i, k);
            if (osn_xd_is_zero(aik))
                continue;
            xd f = osn_xd_div(aik, sum);
            for (long t = 0; t < cnt; t++) {
                long j = nz[t];
                if (j != i) {
                    xd *aij = osn__band_at(b, i, j);
                    *aij = osn_xd_add(*aij, osn_xd_mul(f, akj[t]));
                }
            }
        }
    }
    pi[0] = osn_xd(1);
    xd tot = pi[0];
    for (long k = 1, i0 = 0; k < N; k++) {
        while (b->end[i0] <= k) /* rows before i0 end left of column k */
            i0++;
        pi[k] = osn_xd_div(inflow(b, ru, pi, i0, k), s[k]);
        tot = osn_xd_add(tot, pi[k]);
    }
    for (long k = 0; k < N; k++)
        pi[k] = osn_xd_div(pi[k], tot);
    free(nz);
    free(akj);
    return 0;
}

static int same_key(const struct osn__emb_key *a, const struct osn__emb_key *b)
{
    return a->R == b->R && a->up == b->up && a->lam == b->lam &&
           memcmp(&a->law, &b->law, sizeof a->law) == 0;
}

void osn__emb_reuse_find(struct osn__emb_shared *sh, const struct osn__emb_key *key,
                         const struct osn__emb_level *lv, long N, const long *level,
                         struct osn__emb_reuse *ru)
{
    ru->band = NULL;
    ru->top = N;
    ru->shift = 0;
    if (sh)
        sh->rows_seen += N;
    if (!sh || !sh->valid || !same_key(&sh->key, key))
        return;
    /* d: the highest level described differently; rows at levels K = d + 2 and above read only
     * levels d + 1 .. R, described alike. */
    long d = key->R;
    while (d >= 0 && memcmp(&lv[d], &sh->lv[d], sizeof *lv) == 0)
        d--;
    const long K = d + 2;
    long top = N;
    while (top > 0 && level[top - 1] >= K)
        top--;
    if (top == N)
        return;
    ru->band = &sh->band;
    ru->top = top;
    sh->rows_shared += N - top;
    ru->shift = sh->band.N - N;
}

void osn__emb_shared_stats(const struct osn__emb_shared *sh, long *rows_seen, long *rows_shared)
{
    *rows_seen = sh ? sh->rows_seen : 0;
    *rows_shared = sh ? sh->rows_shared : 0;
}

struct osn__emb_shared *osn__emb_shared_free(struct osn__emb_shared *sh)
{
    if (sh) {
        free(sh->lv);
        osn__band_free(&sh->band);
        osn__band_free(&sh->spare);
        free(sh);
    }
    return NULL;
}

void osn__emb_shared_take_work(struct osn__emb_shared *sh, struct osn__band *b)
{
    memset(b, 0, sizeof *b);
    if (sh) {
        *b = sh->spare;
        memset(&sh->spare, 0, sizeof sh->spare);
    }
}

int osn__emb_shared_offer(struct osn__emb_shared **shp, const struct osn__emb_key *key,
                          const struct osn__emb_level *lv, const struct osn_model *m,
                          struct osn__band *b, const struct osn__emb_reuse *ru)
{
    /* Which solve to keep only decides how much the next ones share, never their results: the
     * first of a family that differs in L alone (an optimiser's pairs of one H), since it shares
     * with the later ones every row above their L + 1. Copying every solve's rows in would cost
     * about as much as it saves. */
    struct osn_model family = *m;
    family.L = family.L1 = 0;
    struct osn__emb_shared *sh = *shp;
    if (!sh && !(sh = *shp = calloc(1, sizeof *sh)))
        return OSN_ENOMEM;
    if ((size_t)b->N * (size_t)b->W * sizeof *b->a > KEEP_MAX_BYTES) { /* keep nothing */
        osn__band_free(b);
        osn__band_free(&sh->band);
        osn__band_free(&sh->spare);
        sh->valid = 0;
        return 0;
    }
    if (ru->band && memcmp(&family, &sh->family, sizeof family) == 0) { /* keep the shared one */
        osn__band_free(&sh->spare);
        sh->spare = *b;
        memset(b, 0, sizeof *b);
        return 0;
    }
    size_t nlv = (size_t)key->R + 1;
    if (nlv > sh->lv_cap) {
        free(sh->lv);
        sh->lv = malloc(nlv * sizeof *sh->lv);
        sh->lv_cap = sh->lv ? nlv : 0;
        if (!sh->lv) {
            sh->valid = 0;
            return OSN_ENOMEM;
        }
    }
    /* This band's rows from top up were read from the shared band: copy them in. */
    for (long k = ru->top; k < b->N; k++)
        memcpy(osn__band_at(b, k, b->first[k]),
               osn__band_at(ru->band, k + ru->shift, ru->band->first[k + ru->shift]),
               (size_t)(b->end[k] - b->first[k]) * sizeof *b->a);
    memcpy(sh->lv, lv, nlv * sizeof *lv);
    sh->key = *key;
    sh->family = family;
    osn__band_free(&sh->spare);
    sh->spare = sh->band;
    sh->band = *b;
    sh->valid = 1;
    memset(b, 0, sizeof *b);
    return 0;
}
