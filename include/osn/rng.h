/*
 * Random numbers: xoshiro256++ 1.0 (Blackman and Vigna, public domain reference algorithm) with
 * splitmix64 seeding and jump-ahead streams.
 *
 * One master seed fills the 256-bit state through splitmix64; stream i is that state jumped i
 * times by 2^128 steps, so streams never overlap in any feasible run. Replication i of a
 * simulation uses stream i whatever the number of threads, which is what makes results
 * independent of --threads. The generator and the uniform conversions are inline: a simulation
 * draws one or two numbers per event.
 */
#ifndef OSN_RNG_H
#define OSN_RNG_H

#include <stdint.h>

struct osn_rng {
    uint64_t s[4]; /* never all zero */
};

static inline uint64_t osn__rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

/* The next 64 random bits (xoshiro256++). */
static inline uint64_t osn_rng_next(struct osn_rng *r)
{
    uint64_t *s = r->s;
    const uint64_t result = osn__rotl(s[0] + s[3], 23) + s[0];
    const uint64_t t = s[1] << 17;

    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = osn__rotl(s[3], 45);
    return result;
}

/* A uniform double in [0, 1), a multiple of 2^-53. */
static inline double osn_rng_u01(struct osn_rng *r)
{
    return (double)(osn_rng_next(r) >> 11) * 0x1.0p-53;
}

/* A uniform double in (0, 1], a multiple of 2^-53: safe under log(). */
static inline double osn_rng_u01_open(struct osn_rng *r)
{
    return (double)((osn_rng_next(r) >> 11) + 1) * 0x1.0p-53;
}

/* A standard normal variate (Marsaglia's polar method; the second value of each pair dropped, so
 * every draw depends on its own uniforms only). One definition for des's laws and elem's UAC,
 * which may not include des. */
double osn_rng_normal(struct osn_rng *r);

/* splitmix64: advances *x and returns the next output (used for seeding). */
uint64_t osn_splitmix64(uint64_t *x);

/* Fills the state from a 64-bit seed with four splitmix64 outputs (any seed is valid). */
void osn_rng_seed(struct osn_rng *r, uint64_t seed);

/* Advances the state by 2^128 calls of osn_rng_next() (the reference jump polynomial). */
void osn_rng_jump(struct osn_rng *r);

/* Stream i of a master seed: osn_rng_seed() then i jumps. Cost O(i); callers that need many
 * consecutive streams should jump a copy incrementally instead. */
void osn_rng_stream(struct osn_rng *r, uint64_t seed, unsigned long i);

#endif
