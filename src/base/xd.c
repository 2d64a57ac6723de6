/*
 * The out-of-line parts of the extended-range double: conversion, logarithm, square root and
 * decimal formatting. Arithmetic is inline in osn/xd.h.
 */
#include "osn/xd.h"

#include <math.h>
#include <stdio.h>

double osn_xd_to_double(struct osn_xd a)
{
    if (a.m == 0)
        return 0;
    if (a.e > 2100)
        return a.m > 0 ? HUGE_VAL : -HUGE_VAL;
    if (a.e < -2100)
        return a.m > 0 ? 0.0 : -0.0;
    return ldexp(a.m, (int)a.e);
}

bool osn_xd_fits_double(struct osn_xd a)
{
    if (a.m == 0)
        return true;
    int64_t be = a.e + osn__binexp(a.m);
    return be > -1022 && be < 1023;
}

double osn_xd_log10(struct osn_xd a)
{
    if (a.m == 0)
        return -HUGE_VAL;
    /* long double keeps e*log10(2) exact to ~1e-19 relative, so the fraction survives. */
    long double l = log10l(fabsl((long double)a.m)) +
                    (long double)a.e * 0.301029995663981195213738894724493027L;
    return (double)l;
}

struct osn_xd osn_xd_exp(double l)
{
    if (isinf(l) && l < 0)
        return osn_xd(0);
    /* l = k ln 2 + r with |r| <= ln 2; ln 2 in two parts keeps r exact for |k| up to 2^20. */
    const double ln2_hi = 0.693147180369123816490, ln2_lo = 1.90821492927058770002e-10;
    double k = floor(l / 0.693147180559945309417);
    double r = (l - k * ln2_hi) - k * ln2_lo;
    return osn_xd_make(exp(r), (int64_t)k);
}

struct osn_xd osn_xd_sqrt(struct osn_xd a)
{
    if (a.m <= 0)
        return osn_xd(0);
    if (a.e % 2 != 0) {
        a.m *= 2;
        a.e -= 1;
    }
    return osn_xd_make(sqrt(a.m), a.e / 2);
}

char *osn_xd_format(struct osn_xd a, int digits, char *buf, size_t bufsize)
{
    if (digits < 1)
        digits = 1;
    if (digits > 17)
        digits = 17;
    if (osn_xd_fits_double(a)) {
        snprintf(buf, bufsize, "%.*g", digits, osn_xd_to_double(a));
        return buf;
    }
    long double l = log10l(fabsl((long double)a.m)) +
                    (long double)a.e * 0.301029995663981195213738894724493027L;
    long double ex = floorl(l);
    long double mant = powl(10.0L, l - ex);
    /* Rounding to `digits` may carry the mantissa to 10. */
    char tmp[64];
    snprintf(tmp, sizeof tmp, "%.*Lf", digits - 1, mant);
    if (tmp[0] == '1' && tmp[1] == '0') {
        mant /= 10;
        ex += 1;
    }
    snprintf(buf, bufsize, "%s%.*Lfe%+lld", a.m < 0 ? "-" : "", digits - 1, mant, (long long)ex);
    return buf;
}
