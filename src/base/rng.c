/*
 * Seeding and jump-ahead of the xoshiro256++ generator (include/osn/rng.h). The jump
 * polynomial is the one published with the reference implementation; tests/test_rng.c checks
 * it against an independent computation (the state transition as a GF(2) matrix raised to
 * 2^128) and against published output sequences.
 */
#include "osn/rng.h"

#include <math.h>

#include <stddef.h>

uint64_t osn_splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

void osn_rng_seed(struct osn_rng *r, uint64_t seed)
{
    uint64_t x = seed;
    for (int i = 0; i < 4; i++)
        r->s[i] = osn_splitmix64(&x);
    /* splitmix64 is a bijection of its counter, so four zero outputs cannot happen; keep the
     * invariant explicit anyway. */
    if ((r->s[0] | r->s[1] | r->s[2] | r->s[3]) == 0)
        r->s[0] = 1;
}

void osn_rng_jump(struct osn_rng *r)
{
    static const uint64_t jump[4] = {0x180ec6d33cfd0aba, 0xd5a61266f0c9392c, 0xa9582618e03fc9aa,
                                     0x39abdc4529b1661c};
    uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;

    for (size_t i = 0; i < 4; i++) {
        for (int b = 0; b < 64; b++) {
            if (jump[i] & ((uint64_t)1 << b)) {
                s0 ^= r->s[0];
                s1 ^= r->s[1];
                s2 ^= r->s[2];
                s3 ^= r->s[3];
            }
            osn_rng_next(r);
        }
    }
    r->s[0] = s0;
    r->s[1] = s1;
    r->s[2] = s2;
    r->s[3] = s3;
}

void osn_rng_stream(struct osn_rng *r, uint64_t seed, unsigned long i)
{
    osn_rng_seed(r, seed);
    while (i-- > 0)
        osn_rng_jump(r);
}

double osn_rng_normal(struct osn_rng *r)
{
    double u, v, s;
    do {
        u = 2 * osn_rng_u01(r) - 1;
        v = 2 * osn_rng_u01(r) - 1;
        s = u * u + v * v;
    } while (s >= 1 || s == 0);
    return u * sqrt(-2 * log(s) / s);
}
