/*
 * Exponential variates by the ziggurat method (Marsaglia and Tsang, "The ziggurat method for
 * generating random variables", J. Stat. Softw. 5(8), 2000), 256 layers, in a 64-bit form: the
 * low 8 bits of one xoshiro output pick the layer and the high 56 bits the abscissa, so the two
 * are independent (the original shares bits) and the resolution is 2^-56 of the layer width.
 * About 98.9% of draws take the inline fast path of osn_des_exp1() (one multiply, one compare);
 * this file holds the tables, built once at program start, and the rare slow path (wedges and
 * the tail beyond r, which is exact by memorylessness: r - log U).
 */
#include "osn/des.h"

struct osn__zig osn__zig_exp;

#define ZIG_R 7.697117470131487    /* right edge of the base strip */
#define ZIG_V 3.949659822581572e-3 /* area of each layer */
#define ZIG_M 72057594037927936.0  /* 2^56 */

__attribute__((constructor)) static void zig_init(void)
{
    struct osn__zig *z = &osn__zig_exp;
    double de = ZIG_R, te = ZIG_R;
    const double q = ZIG_V / exp(-de);

    z->ke[0] = (uint64_t)((de / q) * ZIG_M);
    z->ke[1] = 0;
    z->we[0] = q / ZIG_M;
    z->we[255] = de / ZIG_M;
    z->fe[0] = 1;
    z->fe[255] = exp(-de);
    for (int i = 254; i >= 1; i--) {
        de = -log(ZIG_V / de + exp(-de));
        z->ke[i + 1] = (uint64_t)((de / te) * ZIG_M);
        te = de;
        z->fe[i] = exp(-de);
        z->we[i] = de / ZIG_M;
    }
}

double osn__zig_exp_slow(struct osn_rng *r, uint64_t u)
{
    const struct osn__zig *z = &osn__zig_exp;
    for (;;) {
        unsigned i = (unsigned)(u & 255);
        uint64_t j = u >> 8;
        if (j < z->ke[i])
            return (double)j * z->we[i];
        if (i == 0)
            return ZIG_R - log(osn_rng_u01_open(r));
        double x = (double)j * z->we[i];
        if (z->fe[i] + osn_rng_u01(r) * (z->fe[i - 1] - z->fe[i]) < exp(-x))
            return x;
        u = osn_rng_next(r);
    }
}
