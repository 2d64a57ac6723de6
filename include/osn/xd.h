/*
 * Extended-range doubles: a double mantissa with a 64-bit binary exponent.
 *
 * The exact solvers handle probabilities that span thousands of orders of magnitude (the chance
 * of a return to normal mode at huge load is (mu/lambda')^(H-L)) and cycle times such as 1e+2000.
 * A plain double would underflow to 0 or overflow to inf silently; an osn_xd keeps 53 bits of
 * precision at any magnitude. Value = m * 2^e. The mantissa is kept in a lazy window
 * 2^-300 <= |m| < 2^300 (or m == 0), so that a product or quotient of two mantissas is always a
 * normal double and most additions need no rescaling. Operations are inline: the structured
 * solver spends its time in them.
 */
#ifndef OSN_XD_H
#define OSN_XD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct osn_xd {
    double m;  /* mantissa, 0 or 2^-300 <= |m| < 2^300 */
    int64_t e; /* binary exponent */
};

/* The solvers spend their time in these operations, and GCC kept some of them out of line in
 * the solvers' big loops (a call and a returned struct per addition), so they are forced inline. */
#define OSN_XD_INLINE static inline __attribute__((always_inline))

#define OSN_XD_WINDOW 300
/* Exponent gap beyond which the smaller addend cannot change the sum (< 2^-99 relative). */
#define OSN_XD_NEGLIGIBLE 700

/* 2^k as a double, for |k| <= 1022, without calling libm. */
static inline double osn__pow2(int64_t k)
{
    uint64_t bits = (uint64_t)(k + 1023) << 52;
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

static inline int osn__binexp(double m)
{
    uint64_t bits;
    memcpy(&bits, &m, sizeof bits);
    return (int)((bits >> 52) & 0x7ff) - 1023;
}

/* Brings the mantissa back into the window; m must be finite. */
OSN_XD_INLINE struct osn_xd osn_xd_norm(struct osn_xd a)
{
    if (a.m == 0) {
        a.e = 0;
        return a;
    }
    int be = osn__binexp(a.m);
    if (be > OSN_XD_WINDOW || be < -OSN_XD_WINDOW) {
        if (be == -1023 || be == 1023) {
            /* Subnormal, or at least 2^1023: 2^-be is not a normal double (osn__pow2 would
             * give 0 for 2^-1023 and make 9e307 compare as 0), so scale into range first. */
            int64_t k = be < 0 ? 600 : -600;
            a.m *= osn__pow2(k);
            a.e -= k;
            be = osn__binexp(a.m);
        }
        a.m *= osn__pow2(-be);
        a.e += be;
    }
    return a;
}

OSN_XD_INLINE struct osn_xd osn_xd_make(double m, int64_t e)
{
    struct osn_xd a = {m, e};
    return osn_xd_norm(a);
}

OSN_XD_INLINE struct osn_xd osn_xd(double d)
{
    return osn_xd_make(d, 0);
}

static inline bool osn_xd_is_zero(struct osn_xd a)
{
    return a.m == 0;
}

OSN_XD_INLINE struct osn_xd osn_xd_mul(struct osn_xd a, struct osn_xd b)
{
    return osn_xd_make(a.m * b.m, a.e + b.e);
}

/* a * d for a plain double d (which may itself be far from 1). */
OSN_XD_INLINE struct osn_xd osn_xd_muld(struct osn_xd a, double d)
{
    /* A d inside the window is its own osn_xd(d) (exponent 0): one normalisation, same bits. */
    int be = osn__binexp(d);
    if (be <= OSN_XD_WINDOW && be >= -OSN_XD_WINDOW)
        return osn_xd_make(a.m * d, a.e);
    return osn_xd_mul(a, osn_xd(d));
}

/* a / b; b must not be zero. */
OSN_XD_INLINE struct osn_xd osn_xd_div(struct osn_xd a, struct osn_xd b)
{
    return osn_xd_make(a.m / b.m, a.e - b.e);
}

OSN_XD_INLINE struct osn_xd osn_xd_add(struct osn_xd a, struct osn_xd b)
{
    if (b.m == 0)
        return a;
    if (a.m == 0)
        return b;
    if (a.e < b.e) {
        struct osn_xd t = a;
        a = b;
        b = t;
    }
    int64_t d = a.e - b.e;
    if (d > OSN_XD_NEGLIGIBLE)
        return a;
    return osn_xd_make(a.m + b.m * osn__pow2(-d), a.e);
}

static inline struct osn_xd osn_xd_neg(struct osn_xd a)
{
    a.m = -a.m;
    return a;
}

static inline struct osn_xd osn_xd_sub(struct osn_xd a, struct osn_xd b)
{
    return osn_xd_add(a, osn_xd_neg(b));
}

/* -1, 0 or 1 as a < b, a == b, a > b. */
static inline int osn_xd_cmp(struct osn_xd a, struct osn_xd b)
{
    struct osn_xd d = osn_xd_sub(a, b);
    return (d.m > 0) - (d.m < 0);
}

/* The nearest double: +-inf or 0 when the value is outside the double range. */
double osn_xd_to_double(struct osn_xd a);

/* True when the value is representable as a normal double (or is exactly 0). */
bool osn_xd_fits_double(struct osn_xd a);

/* log10 |a|; -inf for 0. Accurate to about 1e-15 absolute even for exponents of 1e7. */
double osn_xd_log10(struct osn_xd a);

/* exp(l) for any finite l (or 0 for -inf), e.g. a probability known by its logarithm. */
struct osn_xd osn_xd_exp(double l);

/* Square root of a non-negative value. */
struct osn_xd osn_xd_sqrt(struct osn_xd a);

/*
 * Writes a in scientific notation with `digits` significant digits ("1.23456e+2000"), or in
 * %.{digits}g form when it fits a double. Returns buf. bufsize >= 40 is always enough.
 */
char *osn_xd_format(struct osn_xd a, int digits, char *buf, size_t bufsize);

#endif
