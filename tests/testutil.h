/*
 * Helpers shared by the unit tests: relative comparison of extended-range values, a cmocka
 * assertion on them (when included after cmocka.h), and a model builder.
 */
#ifndef OSN_TESTUTIL_H
#define OSN_TESTUTIL_H

#include <math.h>
#include <stdio.h>

#include "osn/model.h"
#include "osn/xd.h"

/* |a - b| / max(|a|, |b|), 0 when both are 0. */
static inline double xd_relerr(struct osn_xd a, struct osn_xd b)
{
    if (osn_xd_is_zero(a) && osn_xd_is_zero(b))
        return 0;
    struct osn_xd d = osn_xd_sub(a, b);
    struct osn_xd big =
            osn_xd_cmp(osn_xd_make(fabs(a.m), a.e), osn_xd_make(fabs(b.m), b.e)) > 0 ? a : b;
    big.m = fabs(big.m);
    d.m = fabs(d.m);
    return osn_xd_to_double(osn_xd_div(d, big));
}

/* A measure as a plain double (inf or 0 outside the double range). */
static inline double d(struct osn_xd x)
{
    return osn_xd_to_double(x);
}

#ifdef cmocka_unit_test
/* Fails with both values and the error when a and b differ by more than tol, relatively. */
static inline void assert_close(struct osn_xd a, struct osn_xd b, double tol, const char *what)
{
    double e = xd_relerr(a, b);
    if (!(e <= tol)) {
        char sa[48], sb[48];
        fail_msg("%s: %s vs %s (relative error %.3g > %.3g)", what,
                 osn_xd_format(a, 15, sa, sizeof sa), osn_xd_format(b, 15, sb, sizeof sb), e, tol);
    }
}
#endif

static inline double rel(double a, double b)
{
    double s = fmax(fabs(a), fabs(b));
    return s == 0 ? 0 : fabs(a - b) / s;
}

static inline struct osn_model two_loop(double lam, double lp, long L, long H, long R)
{
    struct osn_model m = {0};
    m.kind = OSN_KIND_TWO_LOOP;
    m.policy = OSN_POLICY_I;
    m.L = L;
    m.H = H;
    m.R = R;
    m.flows = 1;
    m.rate = lam;
    m.overload_rate = lp;
    m.mu = 1;
    osn_model_resolve(&m);
    return m;
}

#endif
