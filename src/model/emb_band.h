/*
 * The embedded chain's banded GTH elimination (emb_band.c), and the eliminated rows one solve
 * leaves for the next (an optimiser's scan: pairs with the same H share every row above L + 1).
 * Internal to src/model.
 */
#ifndef OSN_MODEL_EMB_BAND_H
#define OSN_MODEL_EMB_BAND_H

#include "model_int.h"

/*
 * The embedded matrix in band storage. A row goes at most one level down (a departure) and at
 * most `up` levels up (the arrivals of one service), and GTH elimination from the top keeps that
 * shape: eliminating state k adds to entries (i, j) with a(i,k) != 0 and j in row k, i.e. with
 * level(j) >= level(k) - 1 >= level(i) - 1 and level(j) <= level(k) <= level(i) + up. So row x
 * is stored from the first state of level(x) - 1 to the last of level(x) + up: for R = 200 and
 * constant service a band of about 70 instead of 400 columns, which is what makes a scan of the
 * (L, H) grid affordable. The arithmetic and its order are those of the dense elimination
 * (zeros outside the band are skipped either way), so the results are the same to the bit.
 */
struct osn__band {
    long N, W;        /* states, stored columns per row */
    long *first;      /* first stored column of each row */
    long *end;        /* one past the last stored column */
    struct osn_xd *a; /* N x W */
    struct osn_xd *s; /* the pivots (row sums at elimination), filled by osn__band_gth() */
    /* Each row's end-of-service distribution (p, occupation) in the solve cache, or NULL: valid
     * while the cache's generation is path_gen and path_ok is set. Filled by the caller. */
    const struct osn_xd *(*path)[2];
    unsigned long path_gen;
    int path_ok;
    size_t rows, cells; /* allocated sizes, kept across solves when the band is reused */
};

/* Entry (i, j), which must lie in row i's band. */
static inline struct osn_xd *osn__band_at(const struct osn__band *b, long i, long j)
{
    return &b->a[i * b->W + (j - b->first[i])];
}

static inline int osn__band_in(const struct osn__band *b, long i, long j)
{
    return j >= b->first[i] && j < b->end[i];
}

/*
 * Row x's band: levels level(x) - 1 .. level(x) + up, in a level-major numbering. Reuses b's
 * arrays when they are large enough. Rows below `zero_below` are zeroed, the others are left as
 * they are (osn__band_gth() reads them from the shared rows instead).
 */
int osn__band_init(struct osn__band *b, long N, const long *level, long up, long zero_below);
void osn__band_free(struct osn__band *b);

/*
 * What a row of the embedded chain at level n is made from, for each mode s: whether (s, n) is
 * a state, the accepted arrival rate there, the mode an arrival into n leaves and the mode a
 * departure down to n leaves. A row at level n is a function of the descriptions of levels
 * n - 1 .. n + up (and of the service law, the uniformisation rate and `up`): two chains whose
 * descriptions agree from level K - 1 to R have the same rows at levels K and above, entry for
 * entry, counted from the top.
 */
struct osn__emb_level {
    double rate[3];
    signed char present[3], arrival[3], departure[3];
};

/* The eliminated chain a solve leaves for the next ones (one per solve cache, so per worker). */
struct osn__emb_shared;

struct osn__emb_shared *osn__emb_shared_free(struct osn__emb_shared *sh);

/* Rows of the embedded chains solved with sh so far, and how many of them were shared (the
 * tests check that sharing happens; nothing else depends on it). */
void osn__emb_shared_stats(const struct osn__emb_shared *sh, long *rows_seen, long *rows_shared);

/* The rows this solve can take from the shared elimination. */
struct osn__emb_reuse {
    const struct osn__band *band; /* the shared elimination, or NULL */
    long top;                     /* this chain's rows >= top are the shared rows ... */
    long shift;                   /* ... top + shift onwards there */
};

/*
 * Compares this chain (levels 0..R described by lv, level-major levels of its N states in
 * `level`) with the shared elimination and fills *ru: top = N and band = NULL when nothing is
 * shared. `key` is what the rows' values depend on besides the descriptions.
 */
struct osn__emb_key {
    long R, up;
    double lam;
    struct osn_law law;
};
void osn__emb_reuse_find(struct osn__emb_shared *sh, const struct osn__emb_key *key,
                         const struct osn__emb_level *lv, long N, const long *level,
                         struct osn__emb_reuse *ru);

/*
 * GTH on the banded embedded matrix (off-diagonal used); pi scaled to sum 1. Rows >= ru->top
 * are not read from b: their eliminated form (which is the same whatever lies below them, since
 * eliminating a state changes only the rows below it) comes from ru->band, and only the rows
 * below top receive the updates their elimination makes. The operations on every row below top,
 * and the forward pass, are those of the plain elimination in the same order: the same bits.
 */
int osn__band_gth(struct osn__band *b, const struct osn__emb_reuse *ru, struct osn_xd *pi);

/*
 * Offers the solve of model m just eliminated in b to *shp (created on first use): it becomes
 * the shared elimination unless the one there is of a model that differs from m in L (or L1)
 * alone; then its rows from ru->top up are copied in from the shared ones. Either way b's arrays
 * move into *shp (b is left empty) for the next solve's band, unless the band is too large to
 * keep (then nothing is kept). lv has key->R + 1 levels. 0 or OSN_ENOMEM (b is then left as it
 * was; nothing is lost but time).
 */
int osn__emb_shared_offer(struct osn__emb_shared **shp, const struct osn__emb_key *key,
                          const struct osn__emb_level *lv, const struct osn_model *m,
                          struct osn__band *b, const struct osn__emb_reuse *ru);

/* The band arrays to reuse for the next solve (moved out of *shp), or an empty band. */
void osn__emb_shared_take_work(struct osn__emb_shared *sh, struct osn__band *b);

#endif
