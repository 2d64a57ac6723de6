/*
 * The cache of end-of-service distributions for the embedded chain (embedded.c).
 *
 * What a service does depends only on the arrival rates along its path: a path is a few
 * segments of equal rate ending in a state that accepts nothing. So the distribution (p_j, e_j)
 * computed for one start state serves every other start state, and every other model of an
 * optimiser's scan, with the same segments: under policy I the paths of mode-1 starts depend on
 * H2 only and those of mode-0 starts on H1 and H2, whatever L is. Entries are keyed by the
 * segments (rate, length); the cache is flushed when the service law or the uniformisation rate
 * changes, and when it outgrows its memory budget.
 */
#include "emb_band.h"
#include "model_int.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "osn/err.h"

typedef struct osn_xd xd;

#define MAX_SEGMENTS 4
#define BUDGET_BYTES (512u << 20)

struct key {
    double rate[MAX_SEGMENTS];
    long count[MAX_SEGMENTS];
    int nseg;
};

struct entry {
    struct key key;
    long len;
    xd *data; /* p[0..len-1] then occ[0..len-1]; NULL marks a free slot */
};

struct osn_solve_cache {
    struct entry *slot;
    size_t cap, used, bytes;
    double lam;
    struct osn_law law;
    int valid;                   /* lam and law describe the entries */
    struct osn__emb_shared *emb; /* the embedded chain's elimination kept for the next solve */
    unsigned long generation;    /* counts the flushes: pointers to entries die with one */
};

int osn_solve_cache_new(struct osn_solve_cache **cp)
{
    struct osn_solve_cache *c = calloc(1, sizeof *c);
    if (!c)
        return OSN_ENOMEM;
    *cp = c;
    return 0;
}

static void flush(struct osn_solve_cache *c)
{
    for (size_t i = 0; i < c->cap; i++)
        free(c->slot[i].data);
    free(c->slot);
    c->slot = NULL;
    c->cap = c->used = c->bytes = 0;
    c->valid = 0;
    c->generation++;
}

struct osn_solve_cache *osn_solve_cache_free(struct osn_solve_cache *c)
{
    if (c) {
        flush(c);
        osn__emb_shared_free(c->emb);
        free(c);
    }
    return NULL;
}

unsigned long osn__cache_generation(const struct osn_solve_cache *c)
{
    return c->generation;
}

struct osn__emb_shared **osn__cache_emb_shared(struct osn_solve_cache *c)
{
    return &c->emb;
}

/* The path's segments; 0 when it has more than MAX_SEGMENTS (then it is not cached). */
static int make_key(long len, const double *pr, struct key *k)
{
    memset(k, 0, sizeof *k);
    for (long j = 0; j < len; j++) {
        if (k->nseg == 0 || pr[j] != k->rate[k->nseg - 1]) {
            if (k->nseg == MAX_SEGMENTS)
                return 0;
            k->rate[k->nseg++] = pr[j];
        }
        k->count[k->nseg - 1]++;
    }
    return 1;
}

/* Word-wise multiply-xor over the key (zero-padded by make_key): a byte-wise hash of its 72
 * bytes cost a fifth of a constant-service solve in an optimiser scan. */
static uint64_t hash(const struct key *k)
{
    uint64_t h = 0x9e3779b97f4a7c15ull, w;
    const unsigned char *b = (const unsigned char *)k;
    for (size_t i = 0; i + sizeof w <= sizeof *k; i += sizeof w) {
        memcpy(&w, b + i, sizeof w);
        h = (h ^ w) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    return h;
}

static struct entry *find(struct osn_solve_cache *c, const struct key *k)
{
    if (!c->cap)
        return NULL;
    for (size_t i = hash(k) & (c->cap - 1);; i = (i + 1) & (c->cap - 1)) {
        struct entry *e = &c->slot[i];
        if (!e->data || memcmp(&e->key, k, sizeof *k) == 0)
            return e;
    }
}

/* Same law and rate as the entries, else flushes and adopts them. */
static void adopt(struct osn_solve_cache *c, double lam, const struct osn_law *law)
{
    if (c->valid && c->lam == lam && memcmp(&c->law, law, sizeof *law) == 0)
        return;
    flush(c);
    c->lam = lam;
    c->law = *law;
    c->valid = 1;
}

int osn__cache_get(struct osn_solve_cache *c, double lam, const struct osn_law *law, long len,
                   const double *pr, const xd **p, const xd **occ)
{
    struct key k;
    adopt(c, lam, law);
    if (!make_key(len, pr, &k))
        return 0;
    struct entry *e = find(c, &k);
    if (!e || !e->data)
        return 0;
    *p = e->data;
    *occ = e->data + e->len;
    return 1;
}

static int grow(struct osn_solve_cache *c)
{
    size_t cap = c->cap ? 2 * c->cap : 1024;
    struct entry *old = c->slot, *slot = calloc(cap, sizeof *slot);
    size_t oldcap = c->cap;
    if (!slot)
        return OSN_ENOMEM;
    c->slot = slot;
    c->cap = cap;
    for (size_t i = 0; i < oldcap; i++)
        if (old[i].data)
            *find(c, &old[i].key) = old[i];
    free(old);
    return 0;
}

int osn__cache_put(struct osn_solve_cache *c, long len, const double *pr, const xd *p,
                   const xd *occ)
{
    struct key k;
    if (!make_key(len, pr, &k))
        return 0;
    size_t need = 2 * (size_t)len * sizeof(xd);
    if (c->bytes + need > BUDGET_BYTES) { /* keep the law and rate, drop the entries */
        double lam = c->lam;
        struct osn_law law = c->law;
        flush(c);
        adopt(c, lam, &law);
    }
    if (2 * (c->used + 1) > c->cap && grow(c))
        return OSN_ENOMEM;
    struct entry *e = find(c, &k);
    if (e->data)
        return 0;
    e->data = malloc(need);
    if (!e->data)
        return OSN_ENOMEM;
    memcpy(e->data, p, (size_t)len * sizeof(xd));
    memcpy(e->data + len, occ, (size_t)len * sizeof(xd));
    e->key = k;
    e->len = len;
    c->used++;
    c->bytes += need;
    return 0;
}
